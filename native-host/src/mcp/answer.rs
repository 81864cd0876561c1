//! What a tool answers: [`Answer`] (blocks or a coded error, from `egress`), the one-line
//! texts the adapters build from the browser's answers, and the news every answer gets
//! before the exit ([`KaptureServer::finish`]).

use ext_core::escape;
use ext_core::methods::{self, ActionOutcome, PageInfo};
use ext_core::protocol::TabId;
use rmcp::model::CallToolResponse;
use rmcp::ErrorData;

pub use crate::egress::{tool_error, Answer, Block};

use super::KaptureServer;

impl KaptureServer {
    /// The exit of every tool answer: tabs pages opened since the last answer and what the
    /// call itself has to tell are added, and [`crate::egress::Exit::tool_response`] masks
    /// it with every secret kapture knows.
    pub(super) fn finish(
        &self,
        res: Result<CallToolResponse, ErrorData>,
        notes: &crate::session_log::CallNotes,
    ) -> crate::egress::Masked<Result<CallToolResponse, ErrorData>> {
        let mut news = Vec::new();
        if matches!(res, Ok(CallToolResponse::Complete(_))) {
            let opened = self.shared.registry().take_news(self.id());
            if !opened.is_empty() {
                let list: Vec<String> = opened
                    .iter()
                    .map(|(id, url)| format!("tab {id} {}", escape::inline_cut(url, URL_MAX)))
                    .collect();
                news.push(format!(
                    "\nThe page opened new tabs: {} (act on them with tabId)",
                    list.join(", ")
                ));
            }
            news.extend(notes.news.iter().map(|n| format!("\n{n}")));
        }
        self.shared.exit.tool_response(res, news)
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
