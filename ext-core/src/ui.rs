//! Messages between the Kapture panel and the service worker (a long-lived
//! `chrome.runtime` port), defined once, and the panel's pure helpers (secret masking,
//! history bounds) so they are tested natively.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::budget::BudgetState;
use crate::policy::person::{PersonBudget, PersonPolicy, PersonRule, SiteMode};
use crate::policy::{Category, Verdict};
use crate::protocol::TabId;

pub use crate::exec::report::{ApprovalView, FeedEntry};
pub use crate::mask::{confidential_of, mask_params, mask_typed, MASK};

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
    /// Pair with a kapture by the one-time code `kapture pair` showed (the options page:
    /// where native messaging cannot be registered). Answered by `PanelEvent::Paired`.
    Pair { code: String },
    /// Which mode this extension runs in (the options page). Answered by `PanelEvent::Mode`.
    Mode,
    /// Close the connection to the server on `port` and stay away until Connect.
    Disconnect { port: u16 },
    /// A person's answer to the looser rules the server on `port` asks for: accept them
    /// (remembered for that rule set) or keep this browser's defaults. `fingerprint` names
    /// the rule set the person was shown (`ServerView::fingerprint`): refused when the
    /// server on that port now offers another.
    Agree {
        port: u16,
        accept: bool,
        #[serde(default)]
        fingerprint: String,
    },
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
    /// The fingerprint of the rule set those lines describe (`policy::bound::fingerprint`),
    /// sent back with the person's answer so that it applies to what they saw.
    #[serde(default)]
    pub fingerprint: Option<String>,
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
    /// How a `Pair` went, in words for the person who typed the code.
    Paired { ok: bool, message: String },
    /// The mode this extension runs in, in words for the options page ([`mode_said`]).
    Mode { full: bool, message: String },
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

/// What the options page says of the mode `transport` is: full, or reduced with what works
/// and how to get full mode. Chrome never grants `debugger` later (it cannot be an optional
/// permission), so full mode means loading the full extension in place of this copy.
pub fn mode_said(transport: crate::protocol::Transport) -> (bool, String) {
    match transport {
        crate::protocol::Transport::Debugger => (
            true,
            "Full mode: this browser granted Kapture the debugger permission, so every tool works, with trusted input.".into(),
        ),
        crate::protocol::Transport::Scripting => (
            false,
            "Reduced mode: this copy of Kapture has no debugger permission (the one `kapture install --without-debugger` writes, for a browser whose policy blocks that permission). Navigate, snapshot, click and type work, each judged as always, with untrusted events; the other page tools answer UNSUPPORTED. Chrome cannot grant the debugger permission to an installed extension later: for full mode, remove this copy and load the folder `kapture install` prints. It has the same id, so kapture and pairing stay as they are.".into(),
        ),
    }
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

/// Characters of an approval's arguments shown before "show all" (the rest is cut with an
/// ellipsis until the person asks for it).
pub const ARGS_SHOWN: usize = 300;

/// An approval's (masked) arguments as text: cut at [`ARGS_SHOWN`] characters unless `all`;
/// and whether there is more than the cut shows.
pub fn args_text(args: &Value, all: bool) -> (String, bool) {
    let text = serde_json::to_string(args).unwrap_or_default();
    let long = text.chars().count() > ARGS_SHOWN;
    if long && !all {
        (text.chars().take(ARGS_SHOWN).chain(['…']).collect(), true)
    } else {
        (text, long)
    }
}

/// How long a control that loosens or grants ignores clicks after it appeared or its box on
/// screen changed, in ms.
pub const ARMING_MS: f64 = 700.0;

/// A control's box on screen: left, top, width, height, in whole CSS pixels.
pub type Spot = [i32; 4];

/// Where each control that loosens or grants sits on screen and since when (position
/// arming). A control takes clicks only once it has stayed where it is for [`ARMING_MS`]:
/// whatever moves it — a section above growing as agents act, a row gone, a redraw for
/// another site — cannot slide it under a pointer aimed at something else. Keys name a
/// control and what it does (`mode-auto` for one origin is another key than for the next).
#[derive(Debug, Default)]
pub struct Arming {
    seen: std::collections::HashMap<String, (Spot, f64)>,
}

/// Two boxes are the same spot when no edge moved by more than a pixel (layout rounds).
fn same_spot(a: &Spot, b: &Spot) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1)
}

impl Arming {
    /// After a redraw: the guarded controls shown now. One that is new or whose box moved is
    /// armed from `now`; those gone are forgotten (shown again later, they are new). Answers
    /// every shown control still arming, with when it takes clicks.
    pub fn settle(&mut self, shown: &[(String, Spot)], now: f64) -> Vec<(String, f64)> {
        let mut seen = std::collections::HashMap::with_capacity(shown.len());
        for (key, spot) in shown {
            let since = match self.seen.get(key) {
                Some((was, since)) if same_spot(was, spot) => *since,
                _ => now,
            };
            seen.insert(key.clone(), (*spot, since));
        }
        self.seen = seen;
        self.arming(now)
    }

    /// Take the boxes as they are now without arming anything: the person moved them (a
    /// scroll, a resized panel). Controls not known yet are left to the next `settle`.
    pub fn follow(&mut self, shown: &[(String, Spot)]) {
        for (key, spot) in shown {
            if let Some(entry) = self.seen.get_mut(key) {
                entry.0 = *spot;
            }
        }
    }

    /// Whether a click on `key`, whose box is `spot` now, counts. A control never settled, or
    /// one that moved since (something changed the layout without a redraw we saw), is armed
    /// from `now` and the click is ignored.
    pub fn takes_click(&mut self, key: &str, spot: Spot, now: f64) -> bool {
        match self.seen.get(key) {
            Some((was, since)) if same_spot(was, &spot) => now - since >= ARMING_MS,
            _ => {
                self.seen.insert(key.to_string(), (spot, now));
                false
            }
        }
    }

    /// When `key` takes clicks, if it is known.
    pub fn live_at(&self, key: &str) -> Option<f64> {
        self.seen.get(key).map(|(_, since)| since + ARMING_MS)
    }

    /// The controls still arming at `now`, with when each takes clicks.
    fn arming(&self, now: f64) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .seen
            .iter()
            .map(|(k, (_, since))| (k.clone(), since + ARMING_MS))
            .filter(|(_, at)| *at > now)
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
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

    #[test]
    fn long_arguments_are_cut_until_shown_all_and_stay_masked() {
        let short = json!({"selector": "#a"});
        assert_eq!(
            args_text(&short, false),
            (r##"{"selector":"#a"}"##.into(), false)
        );
        let code = format!("{}TAIL", "x".repeat(400));
        let args = mask_params(
            "fill_form",
            &json!({"function": code, "password": "hunter2"}),
        );
        let (cut, more) = args_text(&args, false);
        assert!(more);
        assert_eq!(cut.chars().count(), ARGS_SHOWN + 1);
        assert!(cut.ends_with('…') && !cut.contains("TAIL"), "{cut}");
        let (all, more) = args_text(&args, true);
        assert!(more, "still says there is a cut to go back to");
        assert!(all.contains("TAIL") && !all.contains("hunter2"), "{all}");
    }

    #[test]
    fn controls_take_clicks_only_once_they_stayed_put() {
        let mut a = Arming::default();
        let at = |x: i32, y: i32| [x, y, 80, 24];
        let k = |s: &str| s.to_string();
        // New: armed from the redraw that showed it.
        let arming = a.settle(&[(k("accept"), at(10, 100))], 1000.0);
        assert_eq!(arming, vec![(k("accept"), 1700.0)]);
        assert!(!a.takes_click("accept", at(10, 100), 1500.0));
        assert!(a.takes_click("accept", at(10, 100), 1700.0));
        // A redraw that leaves it where it was keeps it live (an agent acting elsewhere).
        assert!(a.settle(&[(k("accept"), at(10, 100))], 2000.0).is_empty());
        assert!(a.takes_click("accept", at(10, 100), 2000.0));
        // A section above grew: moved, armed again; a sub-pixel wobble is no move.
        assert!(a.settle(&[(k("accept"), at(10, 101))], 2100.0).is_empty());
        assert_eq!(
            a.settle(&[(k("accept"), at(10, 160))], 2200.0),
            vec![(k("accept"), 2900.0)]
        );
        assert!(!a.takes_click("accept", at(10, 160), 2800.0));
        assert!(a.takes_click("accept", at(10, 160), 2900.0));
        // Moved without a redraw we saw: the click is ignored and arms it.
        assert!(!a.takes_click("accept", at(10, 200), 3000.0));
        assert_eq!(a.live_at("accept"), Some(3700.0));
        assert!(a.takes_click("accept", at(10, 200), 3700.0));
        // A person's scroll: followed, nothing armed.
        a.follow(&[(k("accept"), at(10, 20))]);
        assert!(a.takes_click("accept", at(10, 20), 3800.0));
        // Gone, then back: new again. Never seen: ignored.
        a.settle(&[], 3900.0);
        assert_eq!(a.live_at("accept"), None);
        assert!(!a.takes_click("deny", at(0, 0), 4000.0));
        assert_eq!(
            a.settle(&[(k("accept"), at(10, 20))], 4000.0),
            vec![(k("accept"), 4700.0)]
        );
    }
}
