//! Tools that read the page: snapshot, find, text, HTML, Markdown, links, screenshots,
//! console messages, waits.

use super::answer::Block;
use ext_core::escape;
use ext_core::methods::{
    ConsoleLog, ConsoleMessages, ExtractLinks, Find, GetHtml, GetText, ReadMarkdown, Screenshot,
    Snapshot, WaitFor,
};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;

#[tool_router(router = read_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_snapshot",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "The page as a compact text tree (roles, names, values, states) with [ref=eN] on what can be acted on; pass a ref to other tools. Long lists are folded and long pages cut to maxChars, each with a marker saying how to see more (ref + offset, or browser_find). `diff` answers only what changed since the last snapshot."
    )]
    async fn browser_snapshot(&self, Parameters(mut a): Parameters<OnTab<Snapshot>>) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(noted_refs))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_find",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Search what the page model shows: text (texts shown as one line, like a code editor's, are searched as that line), roles, names, values, placeholders, choices, states and link targets; answers only the matching lines with refs, instead of the whole snapshot."
    )]
    async fn browser_find(&self, Parameters(mut a): Parameters<OnTab<Find>>) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(noted_refs))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_get_text",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Visible text of the page or of one element (ref or selector), cut to maxChars with a marker; continue with offset."
    )]
    async fn browser_get_text(&self, Parameters(mut a): Parameters<OnTab<GetText>>) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_get_html",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "HTML of the document or of one element (ref or selector); outer=false for its content only. Cut to maxChars with a marker; continue with offset."
    )]
    async fn browser_get_html(&self, Parameters(mut a): Parameters<OnTab<GetHtml>>) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_read_markdown",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "The page's readable content (article or main, else the body without navigation) as Markdown: headings, paragraphs, lists, links, tables, code."
    )]
    async fn browser_read_markdown(
        &self,
        Parameters(mut a): Parameters<OnTab<ReadMarkdown>>,
    ) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_extract_links",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Links of the page (or inside an element) as Markdown list items with absolute URLs, de-duplicated; filter with sameOriginOnly, include and exclude (regular expressions)."
    )]
    async fn browser_extract_links(
        &self,
        Parameters(mut a): Parameters<OnTab<ExtractLinks>>,
    ) -> Answer {
        self.fill_budget(&mut a.params.budget);
        self.reply(self.on_tab(&a).await.map(|t| t.text))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_take_screenshot",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Screenshot of the viewport, the full page (fullPage, capped and marked when cut) or one element (ref or selector). JPEG scaled so the longer side is at most 1568 px by default; type png and scale on request."
    )]
    async fn browser_take_screenshot(
        &self,
        Parameters(a): Parameters<OnTab<Screenshot>>,
    ) -> Answer {
        let shot = self.on_tab(&a).await.and_then(|c| {
            // The policy file's screenshot folder keeps a copy of every screenshot.
            let saved = match &self.config().screenshot_dir {
                Some(dir) => {
                    let path = crate::files::save_screenshot(dir, c.tab_id, &c.mime_type, &c.data)?;
                    format!(
                        "; saved: {}",
                        ext_core::escape::inline(&path.display().to_string())
                    )
                }
                None => String::new(),
            };
            Ok((c, saved))
        });
        Answer::blocks(shot.map(|(c, saved)| {
            let cut = c
                .truncated_from
                .map(|h| format!("; truncated: the page is {h} px tall"))
                .unwrap_or_default();
            vec![
                Block::text(format!(
                    "Screenshot {}x{} {}{cut}{saved} [tab {}]",
                    c.width, c.height, c.mime_type, c.tab_id
                )),
                Block::image(c.data, c.mime_type),
            ]
        }))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_console_messages",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "The tab's console messages and uncaught errors, newest first, collected since Kapture first controlled the tab (across navigations). Filter by minimum level; max defaults to 100."
    )]
    async fn browser_console_messages(
        &self,
        Parameters(mut a): Parameters<OnTab<ConsoleMessages>>,
    ) -> Answer {
        self.fill_budget(&mut a.params.budget);
        let max = a.params.budget.max_chars.unwrap_or(self.config().max_chars) as usize;
        let offset = a.params.budget.offset.unwrap_or(0) as usize;
        self.reply(
            self.on_tab(&a)
                .await
                .map(|log| console_text(&log, max, offset)),
        )
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_wait_for",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "Wait until text appears (text), disappears (textGone), an element is visible (selector) or gone (selector + gone), or for `time` seconds. Polls; ends with TIMEOUT after timeoutMs."
    )]
    async fn browser_wait_for(&self, Parameters(a): Parameters<OnTab<WaitFor>>) -> Answer {
        self.reply(self.on_tab(&a).await.map(|w| {
            format!(
                "Done after {} ms: {} [tab {}]",
                w.waited_ms, w.what, w.tab_id
            )
        }))
    }
}

/// Console messages one per line, level first, newest first, within `max` characters.
pub(super) fn console_text(log: &ConsoleLog, max: usize, offset: usize) -> String {
    if log.messages.is_empty() {
        return format!(
            "No console messages{} [tab {}]",
            if offset > 0 {
                format!(" after offset {offset}")
            } else {
                String::new()
            },
            log.tab_id
        );
    }
    // One line per message, its level first: the page's text is escaped, so a
    // message cannot start a line (`\n` stands for its line breaks).
    let lines: Vec<String> = log
        .messages
        .iter()
        .map(|m| {
            let level = serde_json::to_value(m.level)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            format!("[{level}] {}", escape::inline_cut(&m.text, 4_000))
        })
        .collect();
    let head = format!(
        "{} of {} messages{}, newest first [tab {}]:",
        log.messages.len(),
        log.total,
        if offset > 0 {
            format!(" from offset {offset}")
        } else {
            String::new()
        },
        log.tab_id
    );
    let (text, _) = escape::fit_lines(&head, &lines, max, |i| {
        format!(
            "… cut at the {max}-character budget. More: browser_console_messages {{offset: {}}} (same level)",
            offset + i
        )
    });
    text
}

/// A snapshot's or find's text, its refs noted for the session log (which reads them as
/// data, not out of the text).
pub(super) fn noted_refs(t: ext_core::methods::Text) -> String {
    crate::session_log::note(|n| n.refs.extend(t.refs));
    t.text
}
