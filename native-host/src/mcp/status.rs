//! What kapture is connected to (browser_status) and its journal (browser_audit).

use ext_core::escape;
use ext_core::methods::TabsList;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;

/// Journal entries `browser_audit` looks through for a session's own.
const AUDIT_LOOKBACK: usize = 5_000;

#[tool_router(router = status_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::ReadsStore),
        name = "browser_audit",
        annotations(read_only_hint = true, open_world_hint = false),
        description = "The audit journal: this session's newest tool calls (tool, arguments with secrets masked, status, time), newest first; every session's when the policy shares tabs."
    )]
    async fn browser_audit(&self, Parameters(a): Parameters<AuditArgs>) -> Answer {
        let offset = a.offset.unwrap_or(0).min(10_000) as usize;
        let max_entries = a.max.unwrap_or(20).clamp(1, 500) as usize;
        // Another session's entries hold what it typed and where: its own, unless tabs are
        // shared (then a session may read another's steps anyway).
        let everyone = self.shared.registry().shares_tabs();
        let me = self.journal_key();
        let entries: Vec<_> = self
            .shared
            .audit
            .recent(AUDIT_LOOKBACK.max(offset + max_entries))
            .await
            .into_iter()
            .filter(|e| everyone || e.session.as_deref() == Some(me.as_str()))
            .take(offset + max_entries)
            .collect();
        // One JSON line per entry (JSON keeps every string on its line), each cut to a
        // tenth of the budget, the whole within the budget.
        let max = self.config().max_chars as usize;
        let lines: Vec<String> = entries
            .iter()
            .skip(offset)
            .map(|e| escape::inline_cut(&serde_json::to_string(e).unwrap_or_default(), max / 10))
            .collect();
        let head = format!(
            "{} entries in {}{}, newest first:",
            lines.len(),
            self.shared.audit.path().display(),
            if offset > 0 {
                format!(" after the newest {offset}")
            } else {
                String::new()
            }
        );
        let (text, _) = escape::fit_lines(&head, &lines, max, |i| {
            format!(
                "… cut at the {max}-character budget. More: browser_audit {{offset: {}}}",
                offset + i
            )
        });
        self.reply(Ok(text))
    }

    #[tool(
        meta = kind(ToolKind::ReadsStore),
        name = "browser_status",
        annotations(read_only_hint = true, open_world_hint = true),
        description = "What kapture is connected to: the bridge port, the extension and browser, versions, and the open tabs."
    )]
    async fn browser_status(&self, Parameters(_): Parameters<NoArgs>) -> Answer {
        self.reply(Ok(self.status().await))
    }
}

impl KaptureServer {
    /// Where MCP is served (the URL, never the token), how many sessions are open, and
    /// which one this is.
    fn sessions_line(&self) -> String {
        let (open, me, steps) = {
            let registry = self.shared.registry();
            (
                registry.sessions().count(),
                registry.label(self.id()),
                registry.steps(self.id()),
            )
        };
        let served = match &self.config().http_url {
            Some(url) => format!("MCP over HTTP at {url}"),
            None => "MCP over stdio".into(),
        };
        let plural = if open == 1 { "" } else { "s" };
        // The label holds the client's self-chosen name: page-like text, escaped.
        let budget = steps
            .map(|s| format!("; steps {} of {} (--max-steps)", s.used, s.max))
            .unwrap_or_default();
        format!(
            "{served}: {open} session{plural} open; this one is {}{budget}",
            escape::inline_cut(&me, 80)
        )
    }

    async fn status(&self) -> String {
        let bridge = self.bridge().status().await;
        let mut lines = vec![
            format!(
                "kapture {} (protocol v{}, pid {})",
                self.shared.facts.version, self.shared.facts.protocol, self.shared.facts.pid
            ),
            match &bridge.engine {
                Some(_) if bridge.port == 0 => {
                    "bridge: none (the native CDP engine runs the commands)".into()
                }
                Some(_) => format!(
                    "bridge: ws://127.0.0.1:{} (unused: the native CDP engine runs the commands)",
                    bridge.port
                ),
                None => format!("bridge: ws://127.0.0.1:{}", bridge.port),
            },
            format!(
                "browser mode: {}; {}",
                self.shared.facts.mode,
                self.shared.browser.describe()
            ),
            self.sessions_line(),
        ];
        // Engines and connections change while kapture runs: the last change and why.
        if let Some(change) = &bridge.engine_change {
            lines.push(format!("last engine change: {change}"));
        }
        if let Some(change) = &bridge.connection_change {
            lines.push(format!("extension connection changes: {change}"));
        }
        if let Some(standby) = &bridge.standby {
            lines.push(format!("engine now: the Kapture extension; {standby}"));
        }
        if let Some(engine) = &bridge.engine {
            lines.push(format!("engine: {engine}"));
            match self.bridge().call::<TabsList>(None, &TabsList {}).await {
                Ok(tabs) => lines.push(format!("tabs:\n{}", self.format_tabs(&tabs, 0))),
                Err(e) => lines.push(format!("tabs: unavailable ({})", e.into_wire())),
            }
            return lines.join("\n");
        }
        match &bridge.extension {
            Some(ext) => {
                lines.push(format!(
                    "extension: {} v{} connected for {} s (session {}) in {}",
                    ext.info.id,
                    ext.info.version,
                    ext.connected_for_s,
                    ext.session,
                    ext.info.browser
                ));
                lines.push(format!("mode: {}", ext.info.transport.describe()));
                match self.bridge().call::<TabsList>(None, &TabsList {}).await {
                    Ok(tabs) => lines.push(format!("tabs:\n{}", self.format_tabs(&tabs, 0))),
                    Err(e) => lines.push(format!("tabs: unavailable ({})", e.into_wire())),
                }
            }
            None => lines.push("extension: not connected".into()),
        }
        lines.join("\n")
    }
}
