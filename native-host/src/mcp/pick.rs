//! `browser_pick`: the agent asks the person to point at an element; the answer is the
//! element's page-model line with its ref, and the recorder's ranked locators (as text, and
//! as structuredContent).

use ext_core::escape;
use ext_core::methods::{Pick, Picked};
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResponse;
use rmcp::{tool, tool_router, ErrorData};

use super::*;

/// Longest locator expression shown on one line.
const CODE_MAX: usize = 400;
/// Longest frame URL shown.
const URL_MAX: usize = 300;

/// A pick's answer: the text, and the same as structuredContent when it succeeded.
pub struct PickAnswer(Answer, Option<serde_json::Value>);

impl IntoCallToolResult for PickAnswer {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let mut result = self.0.into_result();
        if result.is_error != Some(true) {
            result.structured_content = self.1;
        }
        Ok(CallToolResponse::Complete(result))
    }
}

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

/// The structured copy: ref, line and locators (`{by, value, code}`), page strings escaped
/// like the text's.
pub fn picked_json(p: &Picked) -> serde_json::Value {
    let locators: Vec<serde_json::Value> = p
        .locators
        .iter()
        .map(|l| {
            let mut v = serde_json::to_value(&l.locator).unwrap_or_default();
            // Every page string in it (a name, an id, a test id, an XPath) escaped and cut.
            if let Some(fields) = v.as_object_mut() {
                for value in fields.values_mut() {
                    if let serde_json::Value::String(s) = value {
                        *s = escape::inline_cut(s, CODE_MAX);
                    }
                }
            }
            v["code"] = serde_json::json!(escape::inline_cut(&l.code, CODE_MAX));
            v
        })
        .collect();
    serde_json::json!({
        "tabId": p.tab_id,
        "ref": p.element_ref,
        "line": p.line,
        "frameUrl": p.frame_url.as_deref().map(|u| escape::inline_cut(u, URL_MAX)),
        "locators": locators,
    })
}

#[tool_router(router = pick_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        name = "browser_pick",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Ask the person at the browser to point at an element: the page shows an outline under the mouse and a banner with your `prompt`; their mouse click picks (Kapture keeps it from the page's handlers), Esc cancels. Answers the element's snapshot line with a ref usable at once (browser_click…) and its locators, best first. Waits up to `timeout` seconds (default 60, at most 240), then TIMEOUT; a cancel is APPROVAL_DENIED."
    )]
    async fn browser_pick(&self, Parameters(mut a): Parameters<OnTab<Pick>>) -> PickAnswer {
        // The panel's own rounds are not the agent's to use.
        a.params.keep = None;
        a.params.cancel = false;
        // The call outlasts the person's wait, so the wait's own TIMEOUT is what answers.
        a.timeout_ms
            .get_or_insert(ext_core::cdp::pick::command_ms(a.params.timeout));
        match self.on_tab(&a).await {
            Ok(p) => {
                let structured = picked_json(&p);
                PickAnswer(Answer::text(Ok(picked_text(&p))), Some(structured))
            }
            Err(e) => PickAnswer(Answer::fail(e), None),
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
        assert_eq!(json["locators"][0]["by"], "text");
        assert!(!json["locators"][0]["code"]
            .as_str()
            .unwrap()
            .contains('\u{2028}'));
    }
}
