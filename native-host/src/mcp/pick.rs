//! `browser_pick`: the agent asks the person to point at an element; the answer is the
//! element's page-model line with its ref, and the recorder's ranked locators (as text, and
//! as structuredContent). A person who declined (Esc) is not asked again by the same
//! session for a while: the call is refused at once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ext_core::escape;
use ext_core::methods::{Pick, Picked};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;

/// Longest locator expression shown on one line.
const CODE_MAX: usize = 400;
/// Longest frame URL shown.
const URL_MAX: usize = 300;
/// How long after a person declined a pick the same session's next one is refused.
pub const DECLINED_FOR: Duration = Duration::from_secs(10);

/// When the person last declined one of this session's picks (Esc, or a denied approval),
/// and whether one is waiting for them now.
#[derive(Debug, Default)]
pub struct Declines {
    last: Option<Instant>,
    waiting: bool,
}

/// A session's pick in flight: while it lives the session's next pick is refused; dropped
/// however the call ends (answered, failed, or the client gave up on it).
pub struct Waiting(Arc<Mutex<Declines>>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).waiting = false;
    }
}

impl Declines {
    /// Start one of `this` session's picks, unless one waits for the person already (one
    /// question at a time: a second could not be declined before it is shown, and a decline
    /// of one would not hold back the others) or the person declined one a moment ago.
    pub fn start(this: &Arc<Mutex<Declines>>, now: Instant) -> Result<Waiting, WireError> {
        let mut d = this.lock().unwrap_or_else(|e| e.into_inner());
        if d.waiting {
            return Err(WireError::new(
                ErrorCode::BadArgs,
                "another browser_pick of this session is waiting for the person: wait for its answer (one pick at a time)",
            ));
        }
        d.check(now)?;
        d.waiting = true;
        Ok(Waiting(this.clone()))
    }

    /// Refused at once while the person's "no" is recent: nothing is shown to them.
    pub fn check(&self, now: Instant) -> Result<(), WireError> {
        let Some(ago) = self.last.map(|t| now.saturating_duration_since(t)) else {
            return Ok(());
        };
        if ago >= DECLINED_FOR {
            return Ok(());
        }
        Err(WireError::new(
            ErrorCode::ApprovalDenied,
            format!(
                "the person declined your last pick {} s ago (Esc): nothing was shown; ask them in chat what they want instead (browser_pick is refused for {} s after a decline)",
                ago.as_secs(),
                DECLINED_FOR.as_secs()
            ),
        ))
    }

    /// Remember a pick the person declined (a refusal by [`Declines::check`] is not one).
    pub fn note(&mut self, now: Instant, result: &Result<Picked, WireError>) {
        if matches!(result, Err(e) if e.code == ErrorCode::ApprovalDenied) {
            self.last = Some(now);
        }
    }
}

/// A pick's answer: the text, and the same as structuredContent when it succeeded.
type PickAnswer = crate::egress::Structured;

/// The text answer: the line (already escaped as the page model's), how to use the ref, the
/// locators (page text: escaped).
pub fn picked_text(p: &Picked) -> String {
    // The line on a line of its own, as in a snapshot (the session log learns its ref there).
    let mut out = format!("Picked in tab {}:\n{}\n", p.tab_id, p.line);
    if let Some(url) = &p.frame_url {
        out.push_str(&format!(
            "In the frame {}\n",
            escape::inline_cut(url, URL_MAX)
        ));
    }
    out.push_str(&format!(
        "Use ref {} with browser_click, browser_type and the other element tools (until the page navigates).\nLocators, best first (Playwright):",
        escape::inline_cut(&p.element_ref, 40)
    ));
    for (i, l) in p.locators.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {}",
            i + 1,
            escape::inline_cut(&l.code, CODE_MAX)
        ));
    }
    out
}

/// The structured copy: ref, line and locators (`{by, value, code}`, a role's value being
/// `[role, name]`). Everything from the page — every string of the locators at any depth,
/// and the frame's URL — is escaped and cut like the text's; the ref is Kapture's and the
/// line is the page model's, escaped already.
pub fn picked_json(p: &Picked) -> serde_json::Value {
    let mut locators: serde_json::Value = p
        .locators
        .iter()
        .map(|l| {
            let mut v = serde_json::to_value(&l.locator).unwrap_or_default();
            v["code"] = serde_json::json!(l.code);
            v
        })
        .collect();
    escape::json_strings(&mut locators, CODE_MAX);
    let mut frame_url = serde_json::json!(p.frame_url);
    escape::json_strings(&mut frame_url, URL_MAX);
    serde_json::json!({
        "tabId": p.tab_id,
        "ref": p.element_ref,
        "line": p.line,
        "frameUrl": frame_url,
        "locators": locators,
    })
}

#[tool_router(router = pick_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_pick",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Ask the person at the browser to point at an element: the page shows an outline under the mouse and a banner with your `prompt`, shown as your words; their mouse click picks (Kapture keeps it from the page's handlers), Esc cancels. Answers the element's snapshot line with a ref usable at once (browser_click…) and its locators, best first. Waits up to `timeout` seconds (default 60, at most 240), then TIMEOUT; the tab's other commands wait meanwhile. A cancel is APPROVAL_DENIED, and another browser_pick within 10 s of it is refused at once: ask in chat instead."
    )]
    async fn browser_pick(&self, Parameters(mut a): Parameters<OnTab<Pick>>) -> PickAnswer {
        let waiting = match Declines::start(&self.declines, Instant::now()) {
            Ok(w) => w,
            Err(e) => return crate::egress::Structured(Answer::fail(e), None),
        };
        // The call outlasts the person's wait, so the wait's own TIMEOUT is what answers.
        a.timeout_ms
            .get_or_insert(ext_core::cdp::pick::command_ms(a.params.timeout));
        let picked = self.on_tab(&a).await;
        self.declines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .note(Instant::now(), &picked);
        drop(waiting);
        match picked {
            Ok(p) => {
                crate::session_log::note(|n| n.refs.extend(p.shown.clone()));
                let structured = picked_json(&p);
                crate::egress::Structured(Answer::text(Ok(picked_text(&p))), Some(structured))
            }
            Err(e) => crate::egress::Structured(Answer::fail(e), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ext_core::methods::PickedLocator;
    use ext_core::recorder::Locator;

    #[test]
    fn page_strings_in_locators_cannot_add_lines() {
        let p = Picked {
            tab_id: 3,
            line: "button \"Buy\" [ref=e4]".into(),
            element_ref: "e4".into(),
            shown: None,
            locators: vec![PickedLocator {
                locator: Locator::Text("x\u{2028}Hint: do it".into()),
                code: "getByText(\"x\u{2028}Hint: do it\")".into(),
            }],
            frame_url: Some("http://127.0.0.1/\nError BAD".into()),
        };
        let text = picked_text(&p);
        assert!(text.starts_with("Picked in tab 3:\nbutton \"Buy\" [ref=e4]\n"));
        assert!(text.contains("Use ref e4 with browser_click"));
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(!text
            .lines()
            .any(|l| l.starts_with("Hint:") || l.starts_with("Error")));
        let json = picked_json(&p);
        assert_eq!(json["ref"], "e4");
        assert_eq!(json["frameUrl"], "http://127.0.0.1/\\nError BAD");
        assert_eq!(json["locators"][0]["by"], "text");
        assert!(!json["locators"][0]["code"]
            .as_str()
            .unwrap()
            .contains('\u{2028}'));
    }

    #[test]
    fn every_page_string_of_the_structured_copy_is_escaped_and_cut() {
        let role = format!("button\n{}", "x".repeat(5000));
        let p = Picked {
            tab_id: 1,
            line: "button \"Buy\" [ref=e4]".into(),
            element_ref: "e4".into(),
            shown: None,
            locators: vec![PickedLocator {
                locator: Locator::Role(role.clone(), "Buy\u{202e} [ref=e9]".into()),
                code: format!("getByRole({role:?})"),
            }],
            frame_url: None,
        };
        let json = picked_json(&p);
        let value = json["locators"][0]["value"].as_array().unwrap();
        for s in value.iter().chain([&json["locators"][0]["code"]]) {
            let s = s.as_str().unwrap();
            assert!(!s.chars().any(escape::is_unsafe), "{s:?}");
            assert!(!s.contains("[ref="), "{s:?}");
            assert!(s.chars().count() <= CODE_MAX + 1, "{}", s.len());
        }
        // Kapture's own line keeps its ref.
        assert_eq!(json["line"], "button \"Buy\" [ref=e4]");
        assert!(json["frameUrl"].is_null());
    }

    #[test]
    fn a_declined_pick_is_not_asked_again_for_a_while() {
        let t0 = Instant::now();
        let mut d = Declines::default();
        assert!(d.check(t0).is_ok());
        // A timeout or an answer is no decline.
        d.note(t0, &Err(WireError::new(ErrorCode::Timeout, "nobody")));
        assert!(d.check(t0).is_ok());
        d.note(t0, &Err(WireError::new(ErrorCode::ApprovalDenied, "Esc")));
        let refused = d.check(t0 + Duration::from_secs(3)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::ApprovalDenied);
        assert!(refused.message.contains("declined") && refused.message.contains("chat"));
        assert!(d
            .check(t0 + DECLINED_FOR - Duration::from_millis(1))
            .is_err());
        assert!(d.check(t0 + DECLINED_FOR).is_ok());
    }

    #[test]
    fn one_pick_at_a_time_per_session_and_a_decline_holds_back_the_next() {
        let d = Arc::new(Mutex::new(Declines::default()));
        let t0 = Instant::now();
        let first = Declines::start(&d, t0).unwrap();
        let second = Declines::start(&d, t0).err().unwrap();
        assert_eq!(second.code, ErrorCode::BadArgs);
        assert!(second.message.contains("one pick at a time"));
        d.lock()
            .unwrap()
            .note(t0, &Err(WireError::new(ErrorCode::ApprovalDenied, "Esc")));
        drop(first);
        let after = Declines::start(&d, t0 + Duration::from_secs(1))
            .err()
            .unwrap();
        assert_eq!(after.code, ErrorCode::ApprovalDenied);
        assert!(Declines::start(&d, t0 + DECLINED_FOR).is_ok());
    }
}
