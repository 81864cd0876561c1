//! What a tool answers: [`Answer`] (blocks or a coded error), the one-line texts the
//! adapters build from the browser's answers, and the exit every answer passes through
//! ([`KaptureServer::finish`]: news of tabs pages opened, secrets masked).

use ext_core::escape;
use ext_core::methods::{self, ActionOutcome, PageInfo};
use ext_core::protocol::{ErrorCode, TabId, WireError};
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use rmcp::ErrorData;

use super::KaptureServer;

/// A tool's answer: content blocks, or a coded failure. Only [`Answer::into_result`] turns
/// it into an MCP result, and only `call_tool` sends it on (through
/// [`KaptureServer::finish`]).
pub struct Answer(pub Result<Vec<ContentBlock>, WireError>);

impl Answer {
    pub fn text(res: Result<String, WireError>) -> Answer {
        Answer(res.map(|s| vec![ContentBlock::text(s)]))
    }

    pub fn blocks(res: Result<Vec<ContentBlock>, WireError>) -> Answer {
        Answer(res)
    }

    pub fn fail(e: WireError) -> Answer {
        Answer(Err(e))
    }

    /// The MCP result: a dialog that stopped a command is news, not an error; any other
    /// failure is [`tool_error`].
    pub fn into_result(self) -> CallToolResult {
        match self.0 {
            Ok(blocks) => CallToolResult::success(blocks),
            Err(e) if e.code == ErrorCode::DialogOpen => {
                CallToolResult::success(vec![ContentBlock::text(format!(
                    "Stopped: {}. {}",
                    escape::inline(&e.message),
                    if e.message.contains("automatically") {
                        ""
                    } else {
                        e.code.hint()
                    }
                ))])
            }
            Err(e) => tool_error(&e),
        }
    }
}

impl IntoCallToolResult for Answer {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResponse::Complete(self.into_result()))
    }
}

/// A wire error as an MCP tool result: the stable code first, then what happened and a hint.
/// The message may hold page or agent strings (element ids, selectors, exception texts): it
/// stays on its line, escaped, so it cannot add a `Hint:` or an `Error CODE:` of its own.
pub fn tool_error(err: &WireError) -> CallToolResult {
    let text = format!(
        "Error {}: {}\nHint: {}",
        err.code,
        escape::inline(&err.message),
        err.code.hint()
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured_error(err));
    result
}

/// An error as `structuredContent`: the code, what happened, whether the same call may
/// succeed later unchanged (`retryable`), what to do (`suggestion`), and for a spent
/// budget when it resets (`resetsAt`, ms since the epoch).
pub fn structured_error(err: &WireError) -> serde_json::Value {
    let mut sc = serde_json::json!({
        "code": err.code,
        "message": err.message,
        "retryable": err.retryable(),
        "suggestion": err.code.hint(),
    });
    if let Some(at) = err.data.as_ref().and_then(|d| d.get("resetsAt")) {
        sc["resetsAt"] = at.clone();
    }
    sc
}

impl KaptureServer {
    /// The exit of every tool answer: tabs pages opened since the last answer and what the
    /// call itself has to tell are added; what looks like a secret is masked in every text,
    /// the structured copy of an error's message included.
    pub(super) fn finish(
        &self,
        res: Result<CallToolResponse, ErrorData>,
        notes: &crate::session_log::CallNotes,
    ) -> Result<CallToolResponse, ErrorData> {
        let Ok(CallToolResponse::Complete(mut result)) = res else {
            return res;
        };
        let opened = self.shared.registry().take_news(self.id());
        if !opened.is_empty() {
            let list: Vec<String> = opened
                .iter()
                .map(|(id, url)| format!("tab {id} {}", escape::inline_cut(url, URL_MAX)))
                .collect();
            let note = format!(
                "\nThe page opened new tabs: {} (act on them with tabId)",
                list.join(", ")
            );
            result.content.push(ContentBlock::text(note));
        }
        for news in &notes.news {
            result.content.push(ContentBlock::text(format!("\n{news}")));
        }
        self.mask_result(&mut result);
        Ok(CallToolResponse::Complete(result))
    }

    /// Mask the session's secrets in every text of `result`.
    pub(super) fn mask_result(&self, result: &mut CallToolResult) {
        let secret_values = self.secret_values();
        let patterns = &self.config().masks;
        let mask = |text: &str| {
            let (text, _) = ext_core::secrets::redact(text, &secret_values);
            ext_core::secrets::redact_patterns(&text, patterns).0
        };
        for block in result.content.iter_mut() {
            if let ContentBlock::Text(text) = block {
                text.text = mask(&text.text);
            }
        }
        // Every string of the structured copy, nested ones too (a picked element's locators).
        fn walk(value: &mut serde_json::Value, mask: &dyn Fn(&str) -> String) {
            match value {
                serde_json::Value::String(text) => *text = mask(text),
                serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, mask)),
                serde_json::Value::Object(map) => map.values_mut().for_each(|v| walk(v, mask)),
                _ => {}
            }
        }
        if let Some(sc) = result.structured_content.as_mut() {
            walk(sc, &mask);
        }
    }
}

/// Longest page title and URL in a one-line answer.
pub const TITLE_MAX: usize = 200;
pub const URL_MAX: usize = 500;

pub fn page_text(verb: &str, p: &PageInfo) -> String {
    let status = p.status.map(|s| format!(" ({s})")).unwrap_or_default();
    let mut out = format!(
        "{verb} {}{status} {} [tab {}]",
        escape::inline_cut(&p.url, URL_MAX),
        escape::quoted_cut(&p.title, TITLE_MAX),
        p.tab_id
    );
    // Kapture's own sentences (a retry, a weaker wait), not page text.
    for note in &p.notes {
        out.push_str("\nNote: ");
        out.push_str(&escape::inline(note));
    }
    out
}

pub fn outcome_text(what: &str, o: &ActionOutcome) -> String {
    let mut out = if o.navigated && o.loading {
        // The wait for the new page is bounded: say it has not finished loading.
        format!(
            "{what}; the page is navigating to {} and has not finished loading; snapshot again in a moment [tab {}]",
            escape::inline_cut(&o.url, URL_MAX),
            o.tab_id
        )
    } else if o.navigated {
        format!(
            "{what}; the page navigated to {} {} [tab {}]",
            escape::inline_cut(&o.url, URL_MAX),
            escape::quoted_cut(&o.title, TITLE_MAX),
            o.tab_id
        )
    } else {
        format!("{what} [tab {}]", o.tab_id)
    };
    if o.file_chooser {
        out.push_str("\nA file chooser is open: answer it with browser_file_upload {paths: [...]}");
    }
    out
}

pub fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let total = s.len();
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str(&format!(
            "… (cut at {max} of {total} bytes; narrow the script's result)"
        ));
    }
    s
}

/// Responses that name the tab they ran on.
pub trait RanOn {
    fn ran_on(&self) -> TabId;
}

macro_rules! ran_on {
    ($($t:ty),*) => { $(impl RanOn for $t { fn ran_on(&self) -> TabId { self.tab_id } })* };
}
ran_on!(
    PageInfo,
    ActionOutcome,
    methods::Selected,
    methods::Evaluated,
    methods::Captured,
    methods::ConsoleLog,
    methods::Text,
    methods::Waited,
    methods::Downloaded,
    methods::Pdf,
    methods::RecorderState,
    methods::Picked,
    methods::LoginFound
);
