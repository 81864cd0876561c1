//! Messages between the Kapture panel and the service worker (a long-lived
//! `chrome.runtime` port), defined once, and the panel's pure helpers (secret masking,
//! history bounds) so they are tested natively.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::budget::BudgetState;
use crate::policy::person::{PersonBudget, PersonPolicy, PersonRule, SiteMode};
use crate::policy::risk::Risk;
use crate::policy::{Category, Verdict};
use crate::protocol::TabId;

/// Name of the panel's port.
pub const PANEL_PORT: &str = "kapture-panel";
/// History entries kept per tab.
pub const HISTORY_MAX: usize = 200;

/// Time a command run from a panel gets: 30 s, or for a pick the person's wait and the
/// pick's grace (one command, however long the person takes).
pub fn panel_timeout_ms(method: &str, params: &Value) -> u64 {
    match method {
        "pick" => crate::cdp::pick::command_ms(params.get("timeout").and_then(Value::as_f64)),
        _ => 30_000,
    }
}

/// Panel → service worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PanelRequest {
    /// Start receiving state, history and results for this tab.
    Subscribe { tab_id: TabId },
    /// Run a method on the tab through the router, as an agent's command would. `quiet`
    /// runs (the panel's own lookups) stay out of the history.
    Run {
        id: u64,
        tab_id: TabId,
        method: String,
        params: Value,
        #[serde(default)]
        quiet: bool,
    },
    /// Stop the `Run` with this id now (a pick the person cancelled): the command ends
    /// where it is, and the tab's queue removes what it left in the page.
    Stop { id: u64 },
    /// Look for kapture servers now and connect to them.
    Connect,
    /// Close the connection to the server on `port` and stay away until Connect.
    Disconnect { port: u16 },
    /// A person's answer to the looser rules the server on `port` asks for: accept them
    /// (remembered for that rule set) or keep this browser's defaults.
    Agree { port: u16, accept: bool },
    /// Forget this tab's history.
    ClearHistory { tab_id: TabId },
    /// A person's answer to an approval: `once`, `origin` (this origin, for the asking
    /// agent's MCP session only), `always` (this category on this origin, every agent, until
    /// revoked in the side panel) or `deny`.
    Answer { id: u64, answer: String },
    /// Safe mode on or off for every server (kept across browser restarts).
    SafeMode { on: bool },
    /// The side panel: receive the live feed, the control state and every tab's approvals;
    /// `tab_id` is the tab it shows the site of (the window's active tab).
    Watch {
        #[serde(default)]
        tab_id: Option<TabId>,
    },
    /// Pause (stop every command running now and refuse new ones until resumed) or resume.
    Pause { on: bool },
    /// Replace the person's rules and budgets (grants are kept: they are given by answering
    /// an approval and taken back by `Revoke`). Refused, nothing changed, when an entry does
    /// not parse.
    SetRules {
        rules: Vec<PersonRule>,
        budgets: Vec<PersonBudget>,
    },
    /// Set a site's mode (its rules replaced by the mode's).
    SetMode { origin: String, mode: SiteMode },
    /// Take back an "always allow here".
    Revoke { origin: String, category: Category },
    /// Give a budget more steps now: an origin budget's pattern, or an MCP session of the
    /// server on `port`.
    Extend { budget: BudgetKey, steps: u64 },
}

/// Which budget to extend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BudgetKey {
    /// An origin budget, by its pattern.
    Origin { origin: String },
    /// An MCP session's `--max-steps`.
    Session { port: u16, session: String },
}

/// One command an agent (or a person in the panel) ran, as the side panel's feed shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedEntry {
    /// ms since the epoch, when it was received.
    pub time: f64,
    pub tab_id: Option<TabId>,
    /// The agent's session (`claude-code #2 · port 61822`), or `panel`.
    pub who: String,
    pub method: String,
    /// The element it acted on, as the page model showed it (or its selector).
    #[serde(default)]
    pub target: Option<String>,
    /// Where it landed (empty when it never got that far).
    #[serde(default)]
    pub origin: String,
    /// What the gate said: allowed, granted, approved (once|origin|always), or why refused.
    pub verdict: String,
    /// ok, or the error code.
    pub status: String,
    pub ms: f64,
}

/// An MCP session's step budget as its server last told it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionBudget {
    pub port: u16,
    pub session: String,
    pub label: String,
    pub used: u64,
    pub max: u64,
}

/// The site of the tab the side panel looks at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteView {
    pub tab_id: TabId,
    /// Its origin (`https://shop.test`), or why it has none a rule can name.
    pub origin: String,
    pub mode: SiteMode,
    /// The verdict per category there, under the strictest connected server's rules.
    pub verdicts: Vec<(Category, Verdict)>,
}

/// An action waiting for a person's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalView {
    pub id: u64,
    pub tab_id: TabId,
    pub method: String,
    pub category: String,
    pub origin: String,
    /// Arguments with secrets masked.
    pub args: Value,
    /// The element acted on, as the agent's last snapshot showed it (or its selector).
    #[serde(default)]
    pub target: Option<String>,
    /// When it is denied if nobody answers, ms since the epoch.
    pub expires: f64,
    /// How risky it is, and why in a few words (`policy::risk`).
    #[serde(default)]
    pub risk: Risk,
    #[serde(default)]
    pub risk_why: String,
    /// Who asks (the agent's session), when known.
    #[serde(default)]
    pub who: Option<String>,
    /// Whether "Always allow here" can be kept for this origin (one with a host; never a
    /// page of no site).
    #[serde(default)]
    pub lasting: bool,
}

/// State of one server connection as the panel shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerView {
    pub port: u16,
    /// connected, connecting, refused or disconnected.
    pub state: String,
    #[serde(default)]
    pub detail: String,
    /// When the state began, ms since the epoch.
    pub since: f64,
    /// What this server's rules loosen compared with this browser's defaults (one line
    /// each); empty when it launched this browser or asks for nothing looser.
    #[serde(default)]
    pub looser: Vec<String>,
    /// A person's answer to those looser rules: accepted, declined, or not yet asked.
    #[serde(default)]
    pub agreed: Option<bool>,
}

/// One command in a tab's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// ms since the epoch.
    pub time: f64,
    /// agent or panel.
    pub by: String,
    pub method: String,
    /// Arguments with secrets masked.
    pub params: Value,
    /// ok, or the error code.
    pub status: String,
    pub ms: f64,
}

/// Service worker → panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PanelEvent {
    /// Servers and why the extension is (not) connected.
    State {
        servers: Vec<ServerView>,
        problem: Option<String>,
        /// Safe mode: every writing action is refused in this browser.
        #[serde(default)]
        safe_mode: bool,
    },
    /// The tab's whole history, oldest first.
    History {
        tab_id: TabId,
        entries: Vec<HistoryEntry>,
    },
    /// A command ran on the subscribed tab.
    Ran { tab_id: TabId, entry: HistoryEntry },
    /// The answer to `Run`.
    Result {
        id: u64,
        ok: bool,
        data: Value,
        ms: f64,
    },
    /// The latest entries of the servers' audit journals, oldest first.
    Audit { entries: Vec<Value> },
    /// The approvals waiting on this tab (all of them; empty when none).
    Approvals {
        tab_id: TabId,
        pending: Vec<ApprovalView>,
    },
    /// The side panel's feed, oldest first (after `Watch`).
    Feed { entries: Vec<FeedEntry> },
    /// One more feed entry.
    Step { entry: FeedEntry },
    /// What the side panel controls, as it stands.
    Control {
        paused: bool,
        safe_mode: bool,
        person: PersonPolicy,
        /// Origin budgets (the servers' and the person's) with their counts.
        budgets: Vec<BudgetState>,
        /// MCP sessions whose `--max-steps` is spent.
        sessions: Vec<SessionBudget>,
        site: Option<SiteView>,
        /// Why the last change was refused (a pattern that does not parse).
        #[serde(default)]
        error: Option<String>,
    },
    /// Every tab's pending approvals (the side panel).
    AllApprovals { pending: Vec<ApprovalView> },
}

/// Parameter names whose values are secrets.
fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "pass", "secret", "token", "auth", "cookie", "apikey", "api_key", "otp", "pin",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// Arguments as history shows them: values of secret-named parameters (`apiToken`)
/// replaced. Text typed into a field is masked by where it went, never by what the agent
/// called the field (`element: "bypass"` hides nothing): [`mask_typed`], from the answer's
/// confidential fields or, for an approval, the element's facts.
pub fn mask_params(_method: &str, params: &Value) -> Value {
    let mut out = params.clone();
    if let Some(obj) = out.as_object_mut() {
        for (k, v) in obj.iter_mut() {
            if secret_key(k) && !v.is_null() {
                *v = Value::String(MASK.into());
            }
        }
    }
    out
}

/// What a masked value reads as.
pub const MASK: &str = "••••";

/// Mask the typed values of a `type`/`fill_form` call that its answer says went into
/// confidential fields (`ActionOutcome::confidential`: `0` for `type`'s text, field indexes
/// for `fill_form`). Without an answer (the call failed, perhaps after typing) every typed
/// value is masked: where it went is unknown. `method` may carry the `browser_` prefix.
pub fn mask_typed(method: &str, params: &mut Value, confidential: Option<&[usize]>) {
    let hide = |i: usize| confidential.is_none_or(|c| c.contains(&i));
    match method.strip_prefix("browser_").unwrap_or(method) {
        "type" => {
            if let Some(text) = params.get_mut("text").filter(|t| !t.is_null()) {
                if hide(0) {
                    *text = Value::String(MASK.into());
                }
            }
        }
        "fill_form" => {
            let fields = params.get_mut("fields").and_then(Value::as_array_mut);
            for (i, f) in fields.into_iter().flatten().enumerate() {
                if let Some(value) = f.get_mut("value").filter(|v| !v.is_null()) {
                    if hide(i) {
                        *value = Value::String(MASK.into());
                    }
                }
            }
        }
        _ => {}
    }
}

/// The confidential indexes an action's answer names (`None` when it is not an answer).
pub fn confidential_of(answer: &Value) -> Option<Vec<usize>> {
    answer.get("tab_id")?;
    Some(
        answer
            .get("confidential")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default(),
    )
}

/// Append to a bounded history (oldest dropped first).
pub fn push_history(history: &mut Vec<HistoryEntry>, entry: HistoryEntry) {
    history.push(entry);
    if history.len() > HISTORY_MAX {
        let extra = history.len() - HISTORY_MAX;
        history.drain(..extra);
    }
}

/// Feed entries the side panel shows (newest first; older ones drop off).
pub const FEED_SHOWN: usize = 100;

/// How long an approval has left, in words (`42 s left`, `2 min left`, `expired`).
pub fn time_left(expires: f64, now: f64) -> String {
    if expires <= now {
        return "expired".into();
    }
    let words = crate::policy::budget::wait_words(expires, now);
    format!("{} left", words.trim_start_matches("in "))
}

/// The person's rules after the side panel's form: `rule` replaces entry `editing`, or is
/// added (replacing an entry for the same origin and category, which would be shadowed).
pub fn upsert_rule(
    rules: &[PersonRule],
    editing: Option<usize>,
    rule: PersonRule,
) -> Vec<PersonRule> {
    let mut out = rules.to_vec();
    match editing.filter(|i| *i < out.len()) {
        Some(i) => out[i] = rule,
        None => match out
            .iter()
            .position(|r| r.origin == rule.origin && r.category == rule.category)
        {
            Some(i) => out[i] = rule,
            None => out.push(rule),
        },
    }
    out
}

/// The person's budgets with `budget` set (one per origin).
pub fn upsert_budget(budgets: &[PersonBudget], budget: PersonBudget) -> Vec<PersonBudget> {
    let mut out = budgets.to_vec();
    match out.iter().position(|b| b.origin == budget.origin) {
        Some(i) => out[i] = budget,
        None => out.push(budget),
    }
    out
}

/// The verdicts of a site in one compact line per verdict (`allow: read, navigate`).
pub fn verdict_summary(verdicts: &[(Category, Verdict)]) -> Vec<(Verdict, String)> {
    [Verdict::Allow, Verdict::Ask, Verdict::Deny]
        .into_iter()
        .filter_map(|v| {
            let names: Vec<&str> = verdicts
                .iter()
                .filter(|(_, w)| *w == v)
                .map(|(c, _)| c.name())
                .collect();
            (!names.is_empty()).then(|| (v, names.join(", ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_are_tagged() {
        let r = PanelRequest::Run {
            id: 1,
            tab_id: 2,
            method: "navigate".into(),
            params: json!({"url": "u"}),
            quiet: false,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"type": "run", "id": 1, "tab_id": 2, "method": "navigate", "params": {"url": "u"}, "quiet": false})
        );
        assert_eq!(
            serde_json::to_value(PanelRequest::Stop { id: 4 }).unwrap(),
            json!({"type": "stop", "id": 4})
        );
        let e: PanelEvent = serde_json::from_value(
            json!({"type": "result", "id": 1, "ok": true, "data": {}, "ms": 3.0}),
        )
        .unwrap();
        assert!(matches!(e, PanelEvent::Result { ok: true, .. }));
    }

    #[test]
    fn a_panel_pick_gets_the_persons_whole_wait_as_one_command() {
        assert_eq!(panel_timeout_ms("snapshot", &json!({})), 30_000);
        let pick = panel_timeout_ms("pick", &json!({"timeout": 120}));
        assert_eq!(pick, crate::cdp::pick::command_ms(Some(120.0)));
        assert!(pick > 120_000, "{pick}");
    }

    #[test]
    fn secrets_are_masked_in_history() {
        let token = mask_params("evaluate", &json!({"function": "1", "apiToken": "x"}));
        assert_eq!(token["apiToken"], "••••");
        // The agent's words for a field mask nothing: where the text went decides
        // (`mask_typed`), so "bypass" cannot hide "Send $500" from the person.
        for params in [
            json!({"selector": "#note", "element": "bypass", "text": "Send $500"}),
            json!({"ref": "e3", "element": "Password", "text": "Send $500"}),
        ] {
            assert_eq!(
                mask_params("type", &params)["text"],
                "Send $500",
                "{params}"
            );
        }
        let form = mask_params(
            "fill_form",
            &json!({"fields": [{"selector": "#pass", "value": "s"}, {"selector": "#user", "value": "u"}]}),
        );
        assert_eq!(form["fields"][0]["value"], "s");
    }

    #[test]
    fn values_typed_into_confidential_fields_are_masked_by_the_answer() {
        let mut typed = json!({"ref": "e3", "text": "Canary-7"});
        mask_typed("browser_type", &mut typed, Some(&[0]));
        assert_eq!(typed["text"], MASK);
        let mut plain = json!({"ref": "e3", "text": "Ada"});
        mask_typed("type", &mut plain, Some(&[]));
        assert_eq!(plain["text"], "Ada");
        let mut form =
            json!({"fields": [{"selector": "#f1", "value": "a"}, {"ref": "e2", "value": "b"}]});
        mask_typed("fill_form", &mut form, Some(&[1]));
        assert_eq!(
            (
                form["fields"][0]["value"].as_str(),
                form["fields"][1]["value"].as_str()
            ),
            (Some("a"), Some(MASK))
        );
        // A failed call may have typed before failing: nothing of it is shown.
        let mut failed = json!({"fields": [{"selector": "#f1", "value": "a"}]});
        mask_typed("fill_form", &mut failed, None);
        assert_eq!(failed["fields"][0]["value"], MASK);
        assert_eq!(
            confidential_of(&json!({"tab_id": 1, "confidential": [0]})),
            Some(vec![0])
        );
        assert_eq!(confidential_of(&json!({"tab_id": 1})), Some(vec![]));
        assert_eq!(confidential_of(&json!({"code": "TIMEOUT"})), None);
    }

    #[test]
    fn history_is_bounded() {
        let mut h = Vec::new();
        for i in 0..HISTORY_MAX + 5 {
            push_history(
                &mut h,
                HistoryEntry {
                    time: i as f64,
                    by: "panel".into(),
                    method: "m".into(),
                    params: json!({}),
                    status: "ok".into(),
                    ms: 1.0,
                },
            );
        }
        assert_eq!(h.len(), HISTORY_MAX);
        assert_eq!(h[0].time, 5.0);
    }

    #[test]
    fn side_panel_forms_replace_or_add() {
        let rule = |o: &str, c: Option<Category>, v| PersonRule {
            origin: o.into(),
            category: c,
            verdict: v,
        };
        let rules = vec![
            rule("a.test", None, Verdict::Allow),
            rule("b.test", Some(Category::Interact), Verdict::Ask),
        ];
        // Edited in place.
        let edited = upsert_rule(&rules, Some(1), rule("b.test", None, Verdict::Deny));
        assert_eq!(edited[1], rule("b.test", None, Verdict::Deny));
        assert_eq!(edited.len(), 2);
        // The same origin and category again replaces, a new one is appended.
        let same = upsert_rule(&rules, None, rule("a.test", None, Verdict::Deny));
        assert_eq!((same.len(), same[0].verdict), (2, Verdict::Deny));
        let more = upsert_rule(&rules, None, rule("c.test", None, Verdict::Ask));
        assert_eq!(more.len(), 3);
        // A stale index (the list changed meanwhile) adds instead of writing out of bounds.
        assert_eq!(
            upsert_rule(&rules, Some(9), rule("d.test", None, Verdict::Ask)).len(),
            3
        );
        let b = |o: &str, n| PersonBudget {
            origin: o.into(),
            max_steps_per_hour: n,
        };
        let budgets = upsert_budget(&[b("a.test", 5)], b("a.test", 1));
        assert_eq!(budgets, vec![b("a.test", 1)]);
        assert_eq!(upsert_budget(&budgets, b("b.test", 2)).len(), 2);
    }

    #[test]
    fn time_left_and_verdicts_read_as_words() {
        assert_eq!(time_left(100_000.0, 58_000.0), "42 s left");
        assert_eq!(time_left(1_000.0, 5_000.0), "expired");
        assert_eq!(time_left(600_000.0, 0.0), "10 min left");
        let summary = verdict_summary(&[
            (Category::Read, Verdict::Allow),
            (Category::Navigate, Verdict::Allow),
            (Category::Interact, Verdict::Deny),
        ]);
        assert_eq!(
            summary,
            vec![
                (Verdict::Allow, "read, navigate".to_string()),
                (Verdict::Deny, "interact".to_string())
            ]
        );
    }
}
