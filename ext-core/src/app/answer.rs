//! What the app shows of MCP answers (pure): the tool list, a tool result as text and image
//! blocks with its error code and hint, and the tabs `browser_tabs` lists.

use serde_json::Value;

/// Most pages of `tools/list` the app follows (each `nextCursor` is one more request).
pub const MAX_TOOL_PAGES: usize = 20;

/// Longest one-line summary of a result kept in the history.
const SUMMARY_MAX: usize = 140;

/// One tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub title: String,
    pub description: String,
    /// The input schema (an object schema; `{}` when the server gave none).
    pub schema: Value,
}

impl Tool {
    /// A saved scenario kapture offers as a tool.
    pub fn is_scenario(&self) -> bool {
        self.name.starts_with("scenario_")
    }

    /// Whether the tool takes a `tabId` (the tab picker fills it).
    pub fn takes_tab(&self) -> bool {
        self.schema.pointer("/properties/tabId").is_some()
    }
}

/// The tools of one `tools/list` page, and the cursor of the next page if any.
pub fn tools_page(result: &Value) -> (Vec<Tool>, Option<String>) {
    let tools = result
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let text = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let name = text("name");
            (!name.is_empty()).then(|| Tool {
                title: text("title"),
                description: text("description"),
                schema: t
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({})),
                name,
            })
        })
        .collect();
    let next = result
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    (tools, next)
}

/// One content block of a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Image {
        mime: String,
        data: String,
    },
    /// Anything else (audio, resource links…), shown as JSON.
    Other(Value),
}

/// A failed call as kapture tells it: `Error CODE: message` then `Hint: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub message: String,
    pub hint: String,
}

/// A tool result as the page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub blocks: Vec<Block>,
    pub failure: Option<Failure>,
}

impl Shown {
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// The status word the history keeps: `ok` or the error code.
    pub fn status(&self) -> String {
        match &self.failure {
            None => "ok".into(),
            Some(f) => f.code.clone(),
        }
    }

    /// The first line of text (or what the result holds), cut short, for the history.
    pub fn summary(&self) -> String {
        if let Some(f) = &self.failure {
            return cut(&format!("{}: {}", f.code, f.message), SUMMARY_MAX);
        }
        for b in &self.blocks {
            match b {
                Block::Text(t) => {
                    if let Some(line) = t.lines().find(|l| !l.trim().is_empty()) {
                        return cut(line.trim(), SUMMARY_MAX);
                    }
                }
                Block::Image { mime, .. } => return format!("image ({mime})"),
                Block::Other(_) => {}
            }
        }
        "(empty)".into()
    }

    /// The images of the result.
    pub fn images(&self) -> impl Iterator<Item = (&str, &str)> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Image { mime, data } => Some((mime.as_str(), data.as_str())),
            _ => None,
        })
    }
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// Read a `tools/call` result.
pub fn read_result(result: &Value) -> Shown {
    let blocks: Vec<Block> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
            match c.get("type").and_then(Value::as_str) {
                Some("text") => Block::Text(text("text").unwrap_or_default()),
                Some("image") => match (text("mimeType"), text("data")) {
                    (Some(mime), Some(data)) if mime.starts_with("image/") => {
                        Block::Image { mime, data }
                    }
                    _ => Block::Other(c.clone()),
                },
                _ => Block::Other(c.clone()),
            }
        })
        .collect();
    let failure = (result.get("isError").and_then(Value::as_bool) == Some(true))
        .then(|| failure_of(result, &blocks));
    Shown { blocks, failure }
}

fn failure_of(result: &Value, blocks: &[Block]) -> Failure {
    let text: String = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let structured = result.get("structuredContent");
    let from_structured = |k: &str| {
        structured
            .and_then(|s| s.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    // The text's first line: `Error CODE: message`.
    let first = text.lines().next().unwrap_or("");
    let (text_code, text_message) = match first
        .strip_prefix("Error ")
        .and_then(|rest| rest.split_once(": "))
    {
        Some((code, msg)) if is_code(code) => (Some(code.to_string()), Some(msg.to_string())),
        _ => (None, None),
    };
    let hint = text
        .lines()
        .find_map(|l| l.strip_prefix("Hint: "))
        .unwrap_or("")
        .to_string();
    Failure {
        code: from_structured("code")
            .or(text_code)
            .unwrap_or_else(|| "ERROR".into()),
        message: from_structured("message")
            .or(text_message)
            .unwrap_or_else(|| text.lines().next().unwrap_or("").to_string()),
        hint,
    }
}

fn is_code(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
}

/// A tab `browser_tabs {action: "list"}` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabChoice {
    pub id: i64,
    /// The rest of the line: title and URL as kapture wrote them (escaped there).
    pub label: String,
    pub current: bool,
}

/// The tabs of a `browser_tabs` list answer: lines `- [i] tab N (mark): "title" url`.
/// Lines that are not tab lines (a cut marker, "No tabs.") are skipped.
pub fn tabs_of(text: &str) -> Vec<TabChoice> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("- [")?;
            let (_, rest) = rest.split_once("] tab ")?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let id = digits.parse::<i64>().ok()?;
            let after = &rest[digits.len()..];
            let (mark, label) = after.split_once(": ").unwrap_or((after, ""));
            Some(TabChoice {
                id,
                label: label.to_string(),
                current: mark.contains("(current)"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_pages_and_scenarios() {
        let (tools, next) = tools_page(&json!({
            "tools": [
                {"name": "browser_navigate", "description": "Load a URL", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}, "tabId": {"type": ["integer", "null"]}}}},
                {"name": "scenario_login", "inputSchema": {"type": "object"}},
                {"description": "nameless is skipped"}
            ],
            "nextCursor": "2"
        }));
        assert_eq!(tools.len(), 2);
        assert!(tools[0].takes_tab());
        assert!(!tools[0].is_scenario());
        assert!(tools[1].is_scenario());
        assert!(!tools[1].takes_tab());
        assert_eq!(next.as_deref(), Some("2"));
        assert_eq!(tools_page(&json!({"tools": []})).1, None);
    }

    #[test]
    fn a_screenshot_result_has_its_image() {
        let shown = read_result(&json!({"content": [
            {"type": "text", "text": "Screenshot of tab 3"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0K"}
        ]}));
        assert!(shown.ok());
        assert_eq!(shown.status(), "ok");
        assert_eq!(
            shown.images().collect::<Vec<_>>(),
            [("image/png", "iVBORw0K")]
        );
        assert_eq!(shown.summary(), "Screenshot of tab 3");
    }

    #[test]
    fn an_image_that_is_not_an_image_is_shown_as_json() {
        let shown = read_result(
            &json!({"content": [{"type": "image", "mimeType": "text/html", "data": "PGI+"}]}),
        );
        assert_eq!(shown.images().count(), 0);
        assert!(matches!(shown.blocks[0], Block::Other(_)));
    }

    #[test]
    fn an_error_gives_code_message_and_hint() {
        let shown = read_result(&json!({
            "isError": true,
            "content": [{"type": "text", "text": "Error SELECTOR_NOT_FOUND: no element matches \"#nope\"\nHint: Take a browser_snapshot and use a ref."}],
            "structuredContent": {"code": "SELECTOR_NOT_FOUND", "message": "no element matches \"#nope\""}
        }));
        let f = shown.failure.clone().unwrap();
        assert_eq!(f.code, "SELECTOR_NOT_FOUND");
        assert_eq!(f.message, "no element matches \"#nope\"");
        assert_eq!(f.hint, "Take a browser_snapshot and use a ref.");
        assert_eq!(shown.status(), "SELECTOR_NOT_FOUND");
        assert!(shown
            .summary()
            .starts_with("SELECTOR_NOT_FOUND: no element"));

        // Without structured content, the text alone.
        let shown = read_result(
            &json!({"isError": true, "content": [{"type": "text", "text": "Error BAD_ARGS: url is required\nHint: Fix the arguments."}]}),
        );
        let f = shown.failure.unwrap();
        assert_eq!(
            (f.code.as_str(), f.message.as_str(), f.hint.as_str()),
            ("BAD_ARGS", "url is required", "Fix the arguments.")
        );

        // A server that says nothing coded.
        let f = read_result(&json!({"isError": true, "content": [{"type": "text", "text": "Something broke: badly"}]})).failure.unwrap();
        assert_eq!(f.code, "ERROR");
        assert_eq!(f.message, "Something broke: badly");
        assert_eq!(f.hint, "");
    }

    #[test]
    fn summaries_are_one_short_line() {
        let long = format!("\n  {}\nsecond", "y".repeat(500));
        let shown = read_result(&json!({"content": [{"type": "text", "text": long}]}));
        let s = shown.summary();
        assert!(!s.contains('\n'));
        assert_eq!(s.chars().count(), SUMMARY_MAX + 1);
        assert_eq!(read_result(&json!({"content": []})).summary(), "(empty)");
    }

    #[test]
    fn tabs_from_a_list_answer() {
        let text = "- [0] tab 12 (current): \"Shop\" http://127.0.0.1:4000/shop.html\n- [1] tab 15: \"A: b\" http://127.0.0.1:4000/a.html\n- [2] tab 16 (active): \"\" about:blank\n… cut at the 100-character budget. More: browser_tabs {action: \"list\", offset: 3}";
        let tabs = tabs_of(text);
        assert_eq!(tabs.len(), 3);
        assert_eq!(
            tabs[0],
            TabChoice {
                id: 12,
                label: "\"Shop\" http://127.0.0.1:4000/shop.html".into(),
                current: true
            }
        );
        assert_eq!(tabs[1].id, 15);
        assert_eq!(tabs[1].label, "\"A: b\" http://127.0.0.1:4000/a.html");
        assert!(!tabs[1].current);
        assert_eq!(tabs[2].id, 16);
        assert!(tabs_of("No tabs.").is_empty());
        // A title cannot forge a tab line: kapture escapes titles onto their own line.
        assert!(tabs_of("tab 5: x").is_empty());
    }
}
