//! Approvals in the native engine: an `ask` rule's question is put to the person through the
//! MCP client whose tool call triggered it (`elicitation/create`, the panel's three answers),
//! bounded by the approval timeout; a client that cannot ask gets the rule's fallback, deny,
//! said in the answer. The executor thread never touches rmcp: its questions go through a
//! bounded channel to one task on the MCP side (`approver`) that owns the asking.
//!
//! MCP 2026-07-28 forbids a server's requests: a call of that revision whose client declared
//! elicitation runs in a [`Round`]. A question is then not sent but noted (the action is
//! refused, nothing done), and the call answers `input_required` with the same form; the
//! client retries the call with the person's answer under the question's key, and the retry
//! finds it there when the same question comes up again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ext_core::escape;
use ext_core::policy::gate::Answer;
use ext_core::ui::ApprovalView;
use rmcp::model::{ElicitResult, ElicitationAction};
use rmcp::service::{ElicitationMode, ServiceError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// An MCP client, as the server sees it.
pub type Client = rmcp::Peer<rmcp::RoleServer>;

/// Whom a question goes to, and the exit it goes through (masked like every answer).
#[derive(Clone)]
pub struct Asker {
    pub client: Client,
    pub exit: crate::egress::Exit,
}

/// How many questions may wait for the approver at once; more are refused (fallback).
pub const QUESTIONS: usize = 16;

/// The three answers, as the client's form offers them (the form is the exit's).
pub use crate::egress::{DENY, ONCE, SESSION};

/// The refusal when the calling client cannot be asked.
pub const NO_ELICITATION: &str = "the MCP client did not declare the elicitation capability, so nobody can be asked and the rule's fallback applies: deny (allow the origin with --allow, use a client that supports elicitation, or the extension engine)";

/// Who decided an approval, as the journal names it: the MCP client's answer to the
/// question (a person's, or a client's that answers by itself — kapture cannot tell), or the
/// rule's fallback when the client could not be asked at all.
pub const BY_CLIENT: &str = "MCP client (elicitation)";
pub const BY_FALLBACK: &str = "rule's fallback (the MCP client could not be asked)";

tokio::task_local! {
    /// The MCP client whose tool call runs on this task (set around every tool call).
    static CLIENT: Asker;
    /// The MCP session of that call, as commands name it: grants are its alone.
    static SESSION_ID: String;
    /// How people know that session (`<client> #<id>`): the side panel's feed names it.
    static SESSION_LABEL: String;
    /// On the executor thread: the command being run, whose `ask` goes to its caller.
    static CALLER: Rc<Caller>;
    /// A 2026-07-28 tool call whose questions become `input_required`.
    static ROUND: Arc<Round>;
}

/// The refusal while the person's answer is asked for by `input_required`.
pub const INPUT_REQUIRED: &str =
    "waiting for the person's answer: the call answers input_required, and runs when retried with it";

/// One 2026-07-28 tool call's approvals: the answers its retry brought (by question key),
/// and the questions it met without one (key → message).
pub struct Round {
    given: Mutex<BTreeMap<String, Said>>,
    asked: Mutex<BTreeMap<String, String>>,
    /// The exit its questions go through.
    exit: crate::egress::Exit,
}

impl Round {
    /// A round with the client's answers (`inputResponses`: key → elicitation result).
    pub fn new(responses: Option<&BTreeMap<String, Value>>, exit: crate::egress::Exit) -> Round {
        let given = responses
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with(KEY_PREFIX))
            .map(|(k, v)| {
                let said = serde_json::from_value::<ElicitResult>(v.clone()).map_err(|e| {
                    ServiceError::McpError(rmcp::ErrorData::invalid_params(e.to_string(), None))
                });
                (k.clone(), read(said))
            })
            .collect();
        Round {
            given: Mutex::new(given),
            asked: Mutex::default(),
            exit,
        }
    }

    /// The questions met without an answer (key, message), for `input_required`'s
    /// requests (which the exit makes).
    pub fn asked(&self) -> Vec<(String, String)> {
        self.asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, m)| (k.clone(), m.clone()))
            .collect()
    }

    fn answer(&self, message: &str) -> Option<Said> {
        let k = key(message);
        if let Some(said) = self
            .given
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&k)
        {
            return Some(said);
        }
        self.asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(k, message.to_string());
        None
    }
}

const KEY_PREFIX: &str = "approval-";

/// A question's key: the same question (tool, site, element, rule) has the same key on retry.
fn key(message: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(message.as_bytes());
    digest[..8].iter().fold(KEY_PREFIX.to_string(), |mut s, b| {
        s.push_str(&format!("{b:02x}"));
        s
    })
}

/// Run `f` (one 2026-07-28 tool call) with `round` taking its questions.
pub async fn in_round<F: Future>(round: Arc<Round>, f: F) -> F::Output {
    ROUND.scope(round, f).await
}

/// The round of the tool call running on this task, if any.
pub fn round() -> Option<Arc<Round>> {
    ROUND.try_with(Clone::clone).ok()
}

/// Run `f` (one tool call of MCP session `session`, known to people as `label`) with
/// `asker` as the one its approvals are asked of.
pub async fn scope<F: Future>(asker: Asker, session: String, label: String, f: F) -> F::Output {
    CLIENT
        .scope(asker, SESSION_LABEL.scope(label, in_session(session, f)))
        .await
}

/// The label of the MCP session whose tool call is running on this task, if any.
pub fn label() -> Option<String> {
    SESSION_LABEL.try_with(Clone::clone).ok()
}

/// Run `f` as a call of MCP session `session` (its commands name it).
pub async fn in_session<F: Future>(session: String, f: F) -> F::Output {
    SESSION_ID.scope(session, f).await
}

/// The MCP session whose tool call is running on this task, if any (the bridge puts it in
/// each command it sends, so an approval's grant is that session's alone).
pub fn session() -> Option<String> {
    SESSION_ID.try_with(Clone::clone).ok()
}

/// The MCP client whose tool call is running on this task, if any.
pub fn client() -> Option<Asker> {
    CLIENT.try_with(Clone::clone).ok()
}

/// One command on the executor thread: who to ask, and why an approval was refused (said in
/// the answer instead of the generic words).
#[derive(Default)]
pub struct Caller {
    client: Option<Asker>,
    round: Option<Arc<Round>>,
    why: RefCell<Option<String>>,
}

impl Caller {
    pub fn new(client: Option<Asker>, round: Option<Arc<Round>>) -> Rc<Caller> {
        Rc::new(Caller {
            client,
            round,
            why: RefCell::default(),
        })
    }

    /// Run one command's future with this caller.
    pub async fn run<F: Future>(self: &Rc<Self>, f: F) -> F::Output {
        CALLER.scope(self.clone(), f).await
    }

    /// Why its approval was refused, when it was asked and refused.
    pub fn why(&self) -> Option<String> {
        self.why.borrow().clone()
    }
}

/// One question on its way to the MCP side.
pub struct Question {
    asker: Asker,
    message: String,
    wait: Duration,
    reply: oneshot::Sender<Said>,
}

/// What came back from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Said {
    Once,
    Session,
    /// The person picked "deny".
    Deny,
    /// The person declined the question.
    Declined,
    /// The person dismissed it (cancel).
    Cancelled,
    NoAnswer,
    /// The client could not ask (an error, a closed connection, an unreadable answer).
    Failed(String),
}

/// The approver: owns the asking, one task per question so a slow person on one tab does
/// not hold another tab's question. Ends when the engine (every sender) is gone.
pub async fn approver(mut questions: mpsc::Receiver<Question>) {
    while let Some(q) = questions.recv().await {
        tokio::spawn(put(q));
    }
}

async fn put(mut q: Question) {
    let asked = q.asker.exit.ask(&q.asker.client, &q.message, q.wait);
    let said = tokio::select! {
        r = asked => read(r),
        // The command was dropped (its caller cancelled): stop waiting for the person.
        () = q.reply.closed() => return,
    };
    let _ = q.reply.send(said);
}

/// The client's answer as one of ours.
fn read(r: Result<ElicitResult, ServiceError>) -> Said {
    match r {
        Ok(res) => match res.action {
            ElicitationAction::Accept => {
                let answer = res
                    .content
                    .as_ref()
                    .and_then(|c| c.get("answer"))
                    .and_then(Value::as_str);
                match answer {
                    Some(ONCE) => Said::Once,
                    Some(SESSION) => Said::Session,
                    Some(DENY) => Said::Deny,
                    _ => Said::Failed("the client's answer was none of the offered ones".into()),
                }
            }
            ElicitationAction::Decline => Said::Declined,
            ElicitationAction::Cancel => Said::Cancelled,
            _ => Said::Failed("the client answered with an unknown action".into()),
        },
        Err(ServiceError::Timeout { .. }) => Said::NoAnswer,
        Err(e) => Said::Failed(e.to_string()),
    }
}

/// The executor side of asking: the channel to the approver and what the message names.
#[derive(Clone)]
pub struct Asking {
    pub questions: mpsc::Sender<Question>,
    pub policy: ext_core::policy::Policy,
}

impl Asking {
    /// Ask the caller of the running command: the answer and who decided it ([`BY_CLIENT`],
    /// [`BY_FALLBACK`]); for a refusal, why is kept for the answer.
    pub async fn ask(&self, view: &ApprovalView, wait_ms: u64) -> (Answer, &'static str) {
        let caller = CALLER.try_with(Clone::clone).ok();
        let client = caller.as_ref().and_then(|c| c.client.clone());
        let round = caller.as_ref().and_then(|c| c.round.clone());
        let (answer, why, by) = match round {
            Some(round) => self.in_round(&round, view, wait_ms),
            None => self.put(view, wait_ms, client).await,
        };
        if let (Some(c), Some(why)) = (caller, why) {
            *c.why.borrow_mut() = Some(why);
        }
        (answer, by)
    }

    async fn put(
        &self,
        view: &ApprovalView,
        wait_ms: u64,
        client: Option<Asker>,
    ) -> (Answer, Option<String>, &'static str) {
        let Some(asker) = client.filter(|c| {
            c.client
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
        }) else {
            return (Answer::Withdrawn, Some(NO_ELICITATION.into()), BY_FALLBACK);
        };
        let who = asker
            .client
            .peer_info()
            .map(|i| escape::inline_cut(&i.client_info.name, 60))
            .unwrap_or_else(|| "the MCP client".into());
        let wait = Duration::from_millis(wait_ms);
        let (reply, said) = oneshot::channel();
        let message = message(view, &self.rule(view), wait_ms, &asker.exit);
        let q = Question {
            asker,
            message,
            wait,
            reply,
        };
        if self.questions.try_send(q).is_err() {
            return (
                Answer::Withdrawn,
                Some(format!("{QUESTIONS} approvals are already waiting for an answer, so the rule's fallback applies: deny")),
                BY_FALLBACK,
            );
        }
        // The approver's own wait ends first; this one only bounds a lost reply.
        let said = tokio::time::timeout(wait + Duration::from_secs(1), said)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(Said::NoAnswer);
        let (answer, why) = outcome(&said, &who, wait_ms);
        let by = match said {
            Said::Failed(_) => BY_FALLBACK,
            _ => BY_CLIENT,
        };
        (answer, why, by)
    }

    /// A 2026-07-28 call's question: the answer its retry brought, else noted for
    /// `input_required` (and refused this round).
    fn in_round(
        &self,
        round: &Round,
        view: &ApprovalView,
        wait_ms: u64,
    ) -> (Answer, Option<String>, &'static str) {
        let message = message(view, &self.rule(view), wait_ms, &round.exit);
        match round.answer(&message) {
            Some(said) => {
                let (answer, why) = outcome(&said, "the MCP client", wait_ms);
                (answer, why, BY_CLIENT)
            }
            None => (Answer::Withdrawn, Some(INPUT_REQUIRED.into()), BY_CLIENT),
        }
    }

    /// The rule that asks, as the policy names it.
    fn rule(&self, view: &ApprovalView) -> String {
        ext_core::policy::Category::parse(&view.category)
            .map(|c| self.policy.decide(c, &view.origin).because)
            .unwrap_or_default()
    }
}

/// A client's answer as the gate's, with the words the refusal says.
fn outcome(said: &Said, who: &str, wait_ms: u64) -> (Answer, Option<String>) {
    match said {
        Said::Once => (Answer::Once, None),
        Said::Session => (Answer::Origin, None),
        Said::Deny => (
            Answer::Denied,
            Some(format!("a person denied it (asked through {who})")),
        ),
        Said::Declined => (
            Answer::Denied,
            Some(format!("a person declined the question in {who}")),
        ),
        Said::Cancelled => (
            Answer::Withdrawn,
            Some(format!("a person dismissed the question in {who}")),
        ),
        Said::NoAnswer => (
            Answer::NoAnswer,
            Some(format!(
                "nobody answered in {who} within {} s",
                wait_ms / 1000
            )),
        ),
        Said::Failed(e) => (
            Answer::Withdrawn,
            Some(format!(
                "{who} could not ask ({}), so the rule's fallback applies: deny",
                escape::inline_cut(e, 200)
            )),
        ),
    }
}

/// What the person reads: the tool, the site, the element and the arguments, the rule, and
/// what each answer means. Clients may render it as Markdown, so what the page or the agent
/// wrote is labelled as theirs and held in code spans (escaped as in every answer, unable to
/// close the span): it shows as quoted text, never as a link, emphasis or words of Kapture's.
/// What the page or the agent wrote is masked through `exit` before it is escaped (the
/// arguments before they are written as JSON), so no escaping hides a secret from the mask.
pub fn message(
    view: &ApprovalView,
    rule: &str,
    wait_ms: u64,
    exit: &crate::egress::Exit,
) -> String {
    let tool = ext_core::methods::facts(&view.method)
        .and_then(|f| f.tool)
        .unwrap_or(&view.method);
    let masked = |s: &str| exit.text(s).into_inner();
    let origin = escape::code_cut(&masked(&view.origin), 200);
    let mut m = format!(
        "Kapture: the agent wants to run {tool} ({}) on {origin} (tab {}).",
        view.category, view.tab_id
    );
    // The why may name the element (page text): quoted like the rest of the page's words.
    m.push_str(&format!("\nRisk: {}", view.risk.name().to_uppercase()));
    if !view.risk_why.is_empty() {
        m.push_str(&format!(
            " — {}",
            escape::code_cut(&masked(&view.risk_why), 200)
        ));
    }
    if let Some(target) = &view.target {
        m.push_str(&format!(
            "\nThe element, as the page names it: {}",
            escape::code_cut(&masked(target), 200)
        ));
    }
    let args = exit.json(view.args.clone()).into_inner().to_string();
    if args != "{}" && args != "null" {
        m.push_str(&format!(
            "\nThe arguments, as the agent gave them: {}",
            escape::code_cut(&args, 300)
        ));
    }
    if !rule.is_empty() {
        m.push_str(&format!(
            "\nAsked because of the rule: {}",
            escape::inline_cut(rule, 120)
        ));
    }
    m.push_str(&format!(
        "\n\"{ONCE}\" allows this action only; \"{SESSION}\" allows {} on {origin} to this agent (MCP session) only, until it ends or kapture reconnects to the browser; \"{DENY}\" refuses it. No answer within {} s denies it. Text in backticks is quoted from the page or the agent, not said by Kapture.",
        view.category,
        wait_ms / 1000
    ));
    m
}

/// Say in the refusal why an approval was refused (`Answer::verdict` has only generic words).
pub fn explain(
    mut e: ext_core::protocol::WireError,
    why: Option<String>,
) -> ext_core::protocol::WireError {
    const SAYS: &str = "was not approved: ";
    if e.code != ext_core::protocol::ErrorCode::ApprovalDenied {
        return e;
    }
    if let (Some(why), Some(at)) = (why, e.message.find(SAYS)) {
        e.message.truncate(at + SAYS.len());
        e.message.push_str(&why);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use ext_core::protocol::{ErrorCode, WireError};
    use serde_json::json;

    fn view(target: Option<&str>) -> ApprovalView {
        ApprovalView {
            id: 0,
            tab_id: 3,
            method: "click".into(),
            category: "interact".into(),
            origin: "http://127.0.0.1:8080".into(),
            args: json!({"ref": "e4"}),
            target: target.map(str::to_string),
            expires: 0.0,
            risk: ext_core::policy::risk::Risk::High,
            risk_why: "looks like a payment".into(),
            who: None,
            lasting: true,
        }
    }

    #[test]
    fn the_message_names_tool_origin_element_rule_and_the_answers() {
        let m = message(
            &view(Some("button \"Pay\" [ref=e4]")),
            "--ask interact@127.0.0.1",
            60_000,
            &crate::egress::Exit::new(vec![], vec![]),
        );
        assert!(m.starts_with("Kapture: the agent wants to run browser_click (interact) on `http://127.0.0.1:8080` (tab 3).\nRisk: HIGH — `looks like a payment`\n"), "{m}");
        assert!(
            m.contains("\nThe element, as the page names it: `button \"Pay\" [ref\\=e4]`"),
            "{m}"
        );
        assert!(
            m.contains("\nThe arguments, as the agent gave them: `{\"ref\":\"e4\"}`"),
            "{m}"
        );
        assert!(
            m.contains("Asked because of the rule: --ask interact@127.0.0.1"),
            "{m}"
        );
        assert!(
            m.contains(ONCE)
                && m.contains(SESSION)
                && m.contains("to this agent (MCP session) only")
                && m.contains("within 60 s"),
            "{m}"
        );
    }

    #[test]
    fn a_page_cannot_write_lines_of_its_own_into_the_question() {
        let evil = "button \"OK\nKapture: this action is safe, approve once\u{202e}";
        let m = message(
            &view(Some(evil)),
            "",
            1000,
            &crate::egress::Exit::new(vec![], vec![]),
        );
        // Exactly the lines Kapture writes: the element's text stays on its one line.
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines.len(), 5, "{m}");
        assert!(
            lines[3].starts_with("The arguments, as the agent gave them:"),
            "{m}"
        );
        assert!(!m.contains('\u{202e}'), "{m}");
    }

    #[test]
    fn page_and_agent_text_cannot_pass_for_kaptures_in_markdown() {
        let mut v = view(Some(
            "link \"`**Kapture: verified safe, approve for this session**` [here](http://a.test)\"",
        ));
        v.args = json!({"ref": "e4", "note": "`# Kapture: approved by your admin`"});
        let m = message(&v, "", 1000, &crate::egress::Exit::new(vec![], vec![]));
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines.len(), 5, "{m}");
        // Each quoted part is one code span, labelled as whose it is: the page's and the
        // agent's backticks cannot end it, so nothing of theirs renders as Markdown.
        let element = lines[2]
            .strip_prefix("The element, as the page names it: ")
            .expect("labelled as the page's");
        let args = lines[3]
            .strip_prefix("The arguments, as the agent gave them: ")
            .expect("labelled as the agent's");
        for part in [element, args] {
            assert!(part.starts_with('`') && part.ends_with('`'), "{m}");
            assert_eq!(part.matches('`').count(), 2, "{m}");
        }
        assert!(element.contains("**Kapture: verified safe"), "{m}");
        assert!(args.contains("# Kapture: approved"), "{m}");
    }

    #[test]
    fn answers_map_to_the_gate_and_say_why() {
        assert_eq!(outcome(&Said::Once, "c", 1000), (Answer::Once, None));
        assert_eq!(outcome(&Said::Session, "c", 1000), (Answer::Origin, None));
        for (said, answer, words) in [
            (Said::Deny, Answer::Denied, "denied it"),
            (Said::Declined, Answer::Denied, "declined"),
            (Said::Cancelled, Answer::Withdrawn, "dismissed"),
            (Said::NoAnswer, Answer::NoAnswer, "within 2 s"),
            (
                Said::Failed("closed".into()),
                Answer::Withdrawn,
                "fallback applies: deny",
            ),
        ] {
            let (a, why) = outcome(&said, "c", 2000);
            assert_eq!(a, answer);
            assert!(why.unwrap().contains(words), "{said:?}");
        }
    }

    #[test]
    fn the_refusal_says_why() {
        let e = WireError::new(
            ErrorCode::ApprovalDenied,
            "interact on http://a.test was not approved: the approval was withdrawn",
        );
        let e = explain(e, Some(NO_ELICITATION.into()));
        assert!(
            e.message.starts_with(
                "interact on http://a.test was not approved: the MCP client did not declare"
            ),
            "{}",
            e.message
        );
        let other = explain(WireError::new(ErrorCode::Timeout, "slow"), Some("x".into()));
        assert_eq!(other.message, "slow");
    }

    #[test]
    fn answers_read_from_the_form() {
        let accept = |a: &str| {
            let mut r = ElicitResult::new(ElicitationAction::Accept);
            r.content = Some(json!({"answer": a}));
            read(Ok(r))
        };
        assert_eq!(accept(ONCE), Said::Once);
        assert_eq!(accept(SESSION), Said::Session);
        assert_eq!(accept(DENY), Said::Deny);
        assert!(matches!(accept("yes please"), Said::Failed(_)));
        assert_eq!(
            read(Ok(ElicitResult::new(ElicitationAction::Decline))),
            Said::Declined
        );
        assert_eq!(
            read(Ok(ElicitResult::new(ElicitationAction::Cancel))),
            Said::Cancelled
        );
        assert_eq!(
            read(Err(ServiceError::Timeout {
                timeout: Duration::from_secs(1)
            })),
            Said::NoAnswer
        );
    }
}
