//! What a replay tells its caller: the run's report, and what it saw after each action —
//! a dialog that opened, the page that changed, errors the page logged, alerts beside what
//! the recording saw — as short hints, plus the screenshots of the steps the caller asked
//! for. Compact on purpose: one line per thing worth knowing, nothing for a quiet step.

use ext_core::escape;
use ext_core::methods::{
    Captured, ConsoleLevel, ConsoleLog, ConsoleMessages, Find, ImageType, Screenshot,
};
use ext_core::protocol::{ErrorCode, TabId, WireError};
use ext_core::recorder::PageHint;
use ext_core::scenario::StepAction;

use crate::bridge::BridgeHandle;

/// Most screenshots one run takes (each costs its reader about a thousand tokens).
pub const MAX_SCREENSHOTS: usize = 10;

/// Longest page text a hint quotes.
const QUOTE: usize = 120;

/// How a run went (no values, only what happened).
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// The scenario the caller ran.
    pub scenario: String,
    pub success: bool,
    pub dependencies_executed: Vec<String>,
    /// Dependencies passed over because their condition held, with the condition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependencies_skipped: Vec<String>,
    pub actions_executed: usize,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    /// The page the run ended on: title (url).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_on: Option<String>,
    pub hints: Vec<String>,
    /// What each image after the report shows (`after step 3 (click)`), in their order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub screenshots: Vec<String>,
    /// The images themselves, answered as image content.
    #[serde(skip)]
    pub images: Vec<Captured>,
    /// Where the policy file's `screenshot_dir` keeps a copy of each image (the steps'
    /// in their order, then the failure's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub saved: Vec<String>,
    /// A secret the run typed may show on the page it ended on: no screenshot of it.
    #[serde(skip)]
    pub secret_on_page: bool,
    /// The secret values the run used, to mask them in what it answers.
    #[serde(skip)]
    pub(super) secrets: Vec<(String, String)>,
}

impl RunReport {
    /// Mask the run's secret values (a page may echo one into an alert or an error).
    pub(super) fn mask_secrets(&mut self) {
        let secrets = std::mem::take(&mut self.secrets);
        let mask = |t: &mut String| *t = ext_core::secrets::redact(t, &secrets).0;
        self.hints.iter_mut().for_each(mask);
        self.failed_step.iter_mut().for_each(mask);
        self.ended_on.iter_mut().for_each(mask);
        self.dependencies_skipped.iter_mut().for_each(mask);
    }

    /// Add `hint` unless it is there already.
    pub(super) fn hint(&mut self, hint: String) {
        if !self.hints.contains(&hint) {
            self.hints.push(hint);
        }
    }
}

/// The steps of the named scenario to take a screenshot after (1-based, as the report
/// numbers them), checked against its chain before anything runs.
pub fn checked_shots(wanted: &[u32], steps: usize) -> Result<Vec<u32>, WireError> {
    let bad = |why: String| WireError::new(ErrorCode::BadArgs, why);
    let mut shots: Vec<u32> = wanted.to_vec();
    shots.sort_unstable();
    shots.dedup();
    if let Some(n) = shots.iter().find(|n| **n == 0 || **n as usize > steps) {
        return Err(bad(format!(
            "screenshotSteps: there is no step {n}; the scenario has steps 1 to {steps}"
        )));
    }
    if shots.len() > MAX_SCREENSHOTS {
        return Err(bad(format!(
            "screenshotSteps: at most {MAX_SCREENSHOTS} screenshots a run"
        )));
    }
    Ok(shots)
}

/// What the run watches between steps: the errors the page logged before, and whether a
/// dialog was open.
#[derive(Debug, Default)]
pub(super) struct Watch {
    /// The newest console error already accounted for (ms since the epoch).
    seen_error: f64,
    dialog_open: bool,
}

impl Watch {
    /// Start watching the tab: errors it logged before the run are not the run's.
    pub(super) async fn start(bridge: &BridgeHandle, tab: Option<TabId>) -> Watch {
        let mut watch = Watch::default();
        if let Some(log) = errors(bridge, tab).await {
            watch.seen_error = newest(&log);
        }
        watch
    }

    /// After one step: its hints (`at` names the step). `before`: the page's URL before
    /// it; `after`: after it (empty when the step does not say).
    pub(super) async fn after_step(
        &mut self,
        bridge: &BridgeHandle,
        tab: Option<TabId>,
        step: &Observed<'_>,
    ) -> Vec<String> {
        let at = step.at;
        let mut hints = Vec::new();
        if step.moves_page && !step.after.is_empty() && step.after != step.before {
            hints.push(format!(
                "{at} the page changed to {}",
                escape::quoted_cut(step.after, QUOTE)
            ));
        }
        if step.on_element {
            let dialogs = found(bridge, tab, "dialog").await;
            let open: Vec<&str> = role_lines(&dialogs, &["dialog", "alertdialog"]);
            if let (false, Some(first)) = (self.dialog_open, open.first()) {
                hints.push(format!("{at} a dialog opened: {first}"));
            }
            if open.is_empty() && step.expect.is_some_and(|e| e.dialog) {
                hints.push(format!(
                    "{at} the recording saw a dialog open here; none is open now"
                ));
            }
            self.dialog_open = !open.is_empty();
            let alerts = found(bridge, tab, "alert").await;
            hints.extend(alert_hints(&alerts, step.expect, at));
        }
        hints.extend(self.new_errors(bridge, tab, at).await);
        hints
    }

    /// Errors the page logged (or threw) since the last look, as one hint.
    pub(super) async fn new_errors(
        &mut self,
        bridge: &BridgeHandle,
        tab: Option<TabId>,
        at: &str,
    ) -> Option<String> {
        let log = errors(bridge, tab).await?;
        let hint = error_hint(&log, self.seen_error, at);
        self.seen_error = self.seen_error.max(newest(&log));
        hint
    }
}

/// One step as the watch looks at it.
pub(super) struct Observed<'a> {
    /// `after checkout step 3 (click)`.
    pub at: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    /// It acts on an element (a dialog or an alert may follow).
    pub on_element: bool,
    /// A change of page after it is news (not a navigation the step asked for).
    pub moves_page: bool,
    /// What the recording saw after it.
    pub expect: Option<&'a PageHint>,
}

impl Observed<'_> {
    /// Whether a page change after `action` is news: a navigation, back or forward asked for
    /// one.
    pub fn is_news(action: &StepAction) -> bool {
        match action {
            StepAction::Navigate { .. } | StepAction::GoBack | StepAction::GoForward => false,
            StepAction::WaitForLoad { .. }
            | StepAction::NewTab { .. }
            | StepAction::Scroll { .. }
            | StepAction::Unknown { .. } => false,
            StepAction::Click { .. }
            | StepAction::Hover { .. }
            | StepAction::Type { .. }
            | StepAction::Select { .. }
            | StepAction::Check { .. }
            | StepAction::PressKey { .. } => true,
        }
    }
}

/// The page's latest error messages (uncaught exceptions among them), newest first.
async fn errors(bridge: &BridgeHandle, tab: Option<TabId>) -> Option<ConsoleLog> {
    let ask = ConsoleMessages {
        level: Some(ConsoleLevel::Error),
        max: Some(5),
        ..Default::default()
    };
    super::call(bridge, tab, &ask).await.ok()
}

fn newest(log: &ConsoleLog) -> f64 {
    log.messages.iter().map(|m| m.timestamp).fold(0.0, f64::max)
}

/// The errors of `log` newer than `since`, as one hint: how many, and the newest quoted.
fn error_hint(log: &ConsoleLog, since: f64, at: &str) -> Option<String> {
    let new: Vec<&str> = log
        .messages
        .iter()
        .filter(|m| m.timestamp > since)
        .map(|m| m.text.as_str())
        .collect();
    let newest = escape::quoted_cut(new.first()?, QUOTE);
    Some(match new.len() {
        1 => format!("{at} the page logged an error: {newest}"),
        n => format!("{at} the page logged {n} errors, the last {newest}"),
    })
}

/// `find`'s answer text for `query` (empty when it cannot be had).
async fn found(bridge: &BridgeHandle, tab: Option<TabId>, query: &str) -> String {
    let find = Find {
        query: query.into(),
        max: Some(5),
        ..Default::default()
    };
    super::call(bridge, tab, &find)
        .await
        .map(|f| f.text)
        .unwrap_or_default()
}

/// The lines of a `find` answer that show an element of one of `roles`.
fn role_lines<'a>(found: &'a str, roles: &[&str]) -> Vec<&'a str> {
    found
        .lines()
        .map(str::trim)
        .filter(|l| {
            let role = l.split([' ', ':']).next().unwrap_or_default();
            roles.contains(&role)
        })
        .collect()
}

/// Hints from the alert lines of a `find` answer, against what the recording saw after
/// the step (`expect`: `{alert}`; absent for scenarios recorded without page hints).
pub(super) fn alert_hints(found: &str, expect: Option<&PageHint>, at: &str) -> Vec<String> {
    let now = role_lines(found, &["alert"]);
    let Some(expect) = expect else {
        return now
            .iter()
            .map(|l| format!("{at} the page shows {l}"))
            .collect();
    };
    let wanted = expect.alert.as_str();
    let mut hints: Vec<String> = now
        .iter()
        .filter(|l| wanted.is_empty() || !l.contains(wanted))
        .map(|l| format!("{at} the page shows {l}, which the recording did not"))
        .collect();
    if !wanted.is_empty() && !now.iter().any(|l| l.contains(wanted)) {
        hints.push(format!(
            "{at} the recording showed the alert {wanted:?}; the page shows no such alert now"
        ));
    }
    hints
}

/// A screenshot of the tab now, as the run's images take it.
pub(super) async fn screenshot(bridge: &BridgeHandle, tab: Option<TabId>) -> Option<Captured> {
    let shot = Screenshot {
        image_type: ImageType::Jpeg,
        ..Default::default()
    };
    bridge.call_with_timeout(tab, &shot, 10_000).await.ok()
}

#[cfg(test)]
mod tests {
    use ext_core::methods::ConsoleMessage;

    use super::*;

    #[test]
    fn alerts_are_compared_with_what_the_recording_saw() {
        let found = "2 matches for \"alert\":\nalert [ref=e4]: Wrong password\n text \"x\"";
        let at = "after login step 4 (click)";
        assert_eq!(
            alert_hints(found, None, at),
            ["after login step 4 (click) the page shows alert [ref=e4]: Wrong password"]
        );
        let saw = |alert: &str| PageHint {
            alert: alert.into(),
            ..Default::default()
        };
        assert!(alert_hints(found, Some(&saw("Wrong password")), at).is_empty());
        assert_eq!(
            alert_hints(found, Some(&saw("")), at),
            ["after login step 4 (click) the page shows alert [ref=e4]: Wrong password, which the recording did not"]
        );
        assert_eq!(
            alert_hints("No match for \"alert\" on the page.", Some(&saw("Added")), at),
            ["after login step 4 (click) the recording showed the alert \"Added\"; the page shows no such alert now"]
        );
        // An alert dialog is a dialog, not an alert line.
        assert!(alert_hints("alertdialog \"Sure?\" [ref=e2]", None, at).is_empty());
    }

    #[test]
    fn dialogs_are_told_by_their_role_word() {
        let found = "3 matches for \"dialog\":\ndialog \"Delete your account?\" [ref=e3]\n  button \"Open dialog\" [ref=e1]\nalertdialog: Sure?";
        assert_eq!(
            role_lines(found, &["dialog", "alertdialog"]),
            [
                "dialog \"Delete your account?\" [ref=e3]",
                "alertdialog: Sure?"
            ]
        );
    }

    #[test]
    fn only_errors_after_the_last_look_are_told_newest_first() {
        let message = |text: &str, timestamp: f64| ConsoleMessage {
            level: ConsoleLevel::Error,
            text: text.into(),
            timestamp,
            url: None,
        };
        let log = ConsoleLog {
            tab_id: 1,
            messages: vec![
                message("Uncaught Error: boom\nat line 3", 30.0),
                message("failed to load", 20.0),
                message("old", 10.0),
            ],
            total: 3,
        };
        let at = "after s step 2 (click)";
        assert_eq!(
            error_hint(&log, 10.0, at).unwrap(),
            "after s step 2 (click) the page logged 2 errors, the last \"Uncaught Error: boom\\nat line 3\""
        );
        assert_eq!(
            error_hint(&log, 20.0, at).unwrap(),
            "after s step 2 (click) the page logged an error: \"Uncaught Error: boom\\nat line 3\""
        );
        assert!(error_hint(&log, 30.0, at).is_none());
        assert_eq!(newest(&log), 30.0);
    }

    #[test]
    fn screenshot_steps_are_checked_before_a_run() {
        assert_eq!(checked_shots(&[3, 1, 3], 4).unwrap(), [1, 3]);
        let e = checked_shots(&[5], 4).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadArgs);
        assert!(e.message.contains("no step 5"), "{}", e.message);
        assert!(checked_shots(&[0], 4).is_err());
        let many: Vec<u32> = (1..=11).collect();
        assert!(checked_shots(&many, 20).is_err());
    }
}
