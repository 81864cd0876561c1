//! The executor's [`Host`] over `chrome.*`: tabs, `chrome.debugger` (`chrome.scripting` in
//! reduced mode), `chrome.downloads`, safe mode in storage, approvals in the panel, tasks on
//! the worker's event loop.

use std::rc::Weak;

use futures::future::LocalBoxFuture;
use serde_json::{json, Value};

use super::App;
use crate::chrome;
use crate::exec::{DownloadItem, Host, Placement};
use crate::methods::TabInfo;
use crate::policy::gate::Answer;
use crate::policy::Policy;
use crate::protocol::{ErrorCode, TabId, Transport, WireError};
use crate::ui::ApprovalView;

/// The extension as the executor's host; it reaches the worker's state (panel ports, the
/// bridge) through a weak link, so the worker owns the executor and not the other way round.
pub struct ChromeHost {
    pub app: Weak<App>,
}

impl Host for ChromeHost {
    fn viewport(&self) -> Option<crate::protocol::Viewport> {
        self.app.upgrade().and_then(|app| app.viewport.get())
    }

    async fn tab(&self, tab: TabId) -> Result<TabInfo, WireError> {
        chrome::tabs::get(tab).await
    }

    async fn list_tabs(&self) -> Result<Vec<TabInfo>, WireError> {
        chrome::tabs::query(&json!({})).await
    }

    async fn default_tab(&self) -> Result<TabId, WireError> {
        // Only normal windows: never the approval window or another extension popup.
        for filter in [
            json!({"active": true, "lastFocusedWindow": true, "windowType": "normal"}),
            json!({"active": true, "windowType": "normal"}),
            json!({"windowType": "normal"}),
        ] {
            if let Some(tab) = chrome::tabs::query(&filter).await?.into_iter().next() {
                return Ok(tab.tab_id);
            }
        }
        Ok(chrome::tabs::create("about:blank").await?.tab_id)
    }

    async fn create_tab(&self, url: &str, place: &Placement) -> Result<TabInfo, WireError> {
        if place.isolated {
            return Err(WireError::new(
                ErrorCode::Unsupported,
                "the extension cannot open a tab in a browser context of its own; the native engine can (kapture --engine native, or --browser cdp)",
            ));
        }
        let tab = chrome::tabs::create(url).await?;
        let Some(title) = place.group.as_deref() else {
            return Ok(tab);
        };
        // A browser without tab groups (or a window that cannot hold one) still gets the tab;
        // the answer then names no group.
        let _ = chrome::tab_groups::put(tab.tab_id, tab.window_id, title).await;
        chrome::tabs::get(tab.tab_id).await
    }

    async fn activate_tab(&self, tab: TabId) -> Result<TabInfo, WireError> {
        let tab = chrome::tabs::activate(tab).await?;
        let _ = chrome::windows::focus(tab.window_id).await;
        Ok(tab)
    }

    async fn close_tab(&self, tab: TabId) -> Result<(), WireError> {
        chrome::tabs::remove(tab).await
    }

    fn transport(&self) -> Transport {
        transport()
    }

    async fn page_call(
        &self,
        tab: TabId,
        function: &str,
        args: Vec<Value>,
    ) -> Result<Value, WireError> {
        if let Some(answer) = chrome::scripting::call(tab, function, &args).await? {
            return Ok(answer);
        }
        // A document that has not run Kapture's page script yet.
        chrome::scripting::inject_file(tab, crate::exec::reduced::PAGE_FILE).await?;
        chrome::scripting::call(tab, function, &args)
            .await?
            .ok_or_else(|| {
                WireError::new(
                    ErrorCode::Internal,
                    "Kapture's page script did not load in the page",
                )
            })
    }

    async fn start_load(&self, tab: TabId, url: &str) -> Result<(), WireError> {
        chrome::tabs::navigate(tab, url).await
    }

    async fn loading(&self, tab: TabId) -> Result<bool, WireError> {
        chrome::tabs::loading(tab).await
    }

    async fn attach(&self, tab: TabId) -> Result<(), WireError> {
        match chrome::debugger::attach(tab).await {
            // After a service-worker restart our own earlier session may still hold the tab:
            // detaching succeeds only if it is ours, and then we attach afresh.
            Err(e)
                if e.code == ErrorCode::DebuggerConflict
                    && chrome::debugger::detach(tab).await.is_ok() =>
            {
                chrome::debugger::attach(tab).await
            }
            other => other,
        }
    }

    async fn detach(&self, tab: TabId) -> Result<(), WireError> {
        chrome::debugger::detach(tab).await
    }

    async fn send(
        &self,
        tab: TabId,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        match session {
            None => chrome::debugger::send_command(tab, method, &params).await,
            Some(session) => chrome::debugger::send_command_in(tab, session, method, &params).await,
        }
    }

    async fn safe_mode(&self) -> bool {
        match self.app.upgrade() {
            Some(app) => super::gate::safe_mode(&app).await,
            // The worker is going away: the strictest answer.
            None => true,
        }
    }

    async fn paused(&self) -> bool {
        match self.app.upgrade() {
            Some(app) => super::control::paused(&app).await,
            None => true,
        }
    }

    fn on_step(&self, step: crate::ui::FeedEntry) {
        if let Some(app) = self.app.upgrade() {
            super::control::on_step(&app, step);
        }
    }

    async fn ask(&self, request: ApprovalView, wait_ms: u64) -> Answer {
        match self.app.upgrade() {
            Some(app) => super::gate::ask(&app, request, wait_ms).await,
            None => Answer::Withdrawn,
        }
    }

    async fn start_download(&self, url: &str) -> Result<i32, WireError> {
        chrome::downloads::start(url).await
    }

    async fn latest_download(&self) -> Result<Option<DownloadItem>, WireError> {
        chrome::downloads::latest().await
    }

    async fn get_download(&self, id: i32) -> Result<Option<DownloadItem>, WireError> {
        chrome::downloads::get(id).await
    }

    async fn cancel_download(&self, id: i32) -> Result<(), WireError> {
        chrome::downloads::cancel(id).await
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        wasm_bindgen_futures::spawn_local(task);
    }

    fn refresh(&self, policy: &std::rc::Rc<Policy>) -> std::rc::Rc<Policy> {
        match self.app.upgrade() {
            Some(app) => std::rc::Rc::new(super::control::person_now(&app).apply(policy)),
            None => policy.clone(),
        }
    }
}

/// How this extension reaches pages: the debugger when the browser granted it, else reduced
/// mode over `chrome.scripting` (a browser that grants neither fails each command with the
/// debugger's own error).
pub fn transport() -> Transport {
    if !chrome::debugger::available() && chrome::scripting::available() {
        Transport::Scripting
    } else {
        Transport::Debugger
    }
}
