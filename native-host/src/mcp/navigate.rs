//! Tools that load a page in the tab: navigate, back, forward, reload.

use ext_core::methods::{GoBack, GoForward, Navigate, Reload};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::answer::page_text;
use super::*;

#[tool_router(router = navigate_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_navigate",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Load a URL in the tab and wait for the page to load (waitUntil: load, domcontentloaded or networkidle). Retries a connection that failed transiently. Answers the final URL, HTTP status and title."
    )]
    async fn browser_navigate(&self, Parameters(a): Parameters<OnTab<Navigate>>) -> Answer {
        self.reply(self.on_tab(&a).await.map(|p| page_text("Navigated to", &p)))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_navigate_back",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Go back to the previous page of the tab's history and wait for it to load (waitUntil as for navigate)."
    )]
    async fn browser_navigate_back(&self, Parameters(a): Parameters<OnTab<GoBack>>) -> Answer {
        self.reply(self.on_tab(&a).await.map(|p| page_text("Went back to", &p)))
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_navigate_forward",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Go forward to the next page of the tab's history and wait for it to load (waitUntil as for navigate)."
    )]
    async fn browser_navigate_forward(
        &self,
        Parameters(a): Parameters<OnTab<GoForward>>,
    ) -> Answer {
        self.reply(
            self.on_tab(&a)
                .await
                .map(|p| page_text("Went forward to", &p)),
        )
    }

    #[tool(
        meta = kind(ToolKind::Browser),
        name = "browser_reload",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        ),
        description = "Reload the tab and wait for the page to load (waitUntil as for navigate)."
    )]
    async fn browser_reload(&self, Parameters(a): Parameters<OnTab<Reload>>) -> Answer {
        self.reply(self.on_tab(&a).await.map(|p| page_text("Reloaded", &p)))
    }
}
