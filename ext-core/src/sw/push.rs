//! What the worker pushes to its open panels (the DevTools panel, the approval window, the
//! side panels): their ports, connection state, approvals, the audit feed and each tab's
//! command history (kept in memory, written to `chrome.storage.local` in bursts). A leaf:
//! every part of the worker tells the panels through it, and it calls none of them back.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::App;
use crate::chrome::{self, port::Port};
use crate::protocol::TabId;
use crate::ui::{self, HistoryEntry, PanelEvent};

/// One open panel (the DevTools panel, the approval window or the side panel).
pub struct PanelConn {
    pub(super) port: Port,
    pub(super) tab: Cell<Option<TabId>>,
    /// A side panel: it gets the feed, the controls and every tab's approvals.
    pub(super) watching: Cell<bool>,
    /// The tab whose site it shows, and that site as last sent.
    pub(super) site_tab: Cell<Option<TabId>>,
    pub(super) last_site: RefCell<Option<crate::ui::SiteView>>,
    /// Its `Run`s under way, by id: a `Stop`, or the panel going away, stops them.
    pub(super) running: RefCell<std::collections::HashMap<u64, futures::future::AbortHandle>>,
}

impl PanelConn {
    pub fn post(&self, event: &PanelEvent) {
        self.port.post(event);
    }
    pub fn site_tab(&self) -> Option<TabId> {
        self.site_tab.get()
    }
    pub fn last_site(&self) -> Option<crate::ui::SiteView> {
        self.last_site.borrow().clone()
    }
    pub fn set_last_site(&self, site: Option<crate::ui::SiteView>) {
        *self.last_site.borrow_mut() = site;
    }
}

/// The side panels open now.
pub fn watcher_conns(app: &App) -> Vec<Rc<PanelConn>> {
    app.panels
        .borrow()
        .iter()
        .filter(|p| p.watching.get())
        .cloned()
        .collect()
}

pub(super) fn history_key(tab: TabId) -> String {
    format!("history.{tab}")
}

/// How long history waits in memory before it is written (commands come in bursts; one
/// write per burst instead of a read and a write per command).
const HISTORY_FLUSH: std::time::Duration = std::time::Duration::from_millis(1000);

/// A tab's history: from memory, else from storage (once per worker life).
pub(super) async fn load_history(app: &App, tab: TabId) -> Vec<HistoryEntry> {
    if let Some(h) = app.history.borrow().get(&tab) {
        return h.clone();
    }
    let stored: Vec<HistoryEntry> = match chrome::storage::local_get(&history_key(tab)).await {
        Ok(Some(v)) => serde_json::from_value(v).unwrap_or_default(),
        _ => Vec::new(),
    };
    // A record made while storage answered is kept: it is newer.
    app.history
        .borrow_mut()
        .entry(tab)
        .or_insert(stored)
        .clone()
}

/// Write the histories changed since the last write, after a pause.
fn schedule_flush(app: &Rc<App>) {
    if app.history_flush.replace(true) {
        return;
    }
    let app = app.clone();
    spawn_local(async move {
        crate::platform::sleep(HISTORY_FLUSH).await;
        app.history_flush.set(false);
        let dirty: Vec<TabId> = std::mem::take(&mut *app.history_dirty.borrow_mut())
            .into_iter()
            .collect();
        for tab in dirty {
            let entries = app.history.borrow().get(&tab).cloned().unwrap_or_default();
            let _ = chrome::storage::local_set(
                &history_key(tab),
                &serde_json::to_value(&entries).unwrap_or(Value::Null),
            )
            .await;
        }
    });
}

pub(super) fn send_state(app: &App, conn: &PanelConn) {
    let (servers, problem) = super::conns::server_views(app);
    conn.port.post(&PanelEvent::State {
        servers,
        problem,
        safe_mode: app.approvals.safe_mode_now(),
    });
}

/// Audit entries the panel keeps, newest last.
const AUDIT_KEPT: usize = 100;

/// Keep a server's journal entry and show it in every panel.
pub fn keep_audit(app: &App, entry: Value) {
    {
        let mut kept = app.audit.borrow_mut();
        kept.push_back(entry);
        while kept.len() > AUDIT_KEPT {
            kept.pop_front();
        }
    }
    for p in app.panels.borrow().iter() {
        send_audit(app, p);
    }
}

pub(super) fn send_audit(app: &App, conn: &PanelConn) {
    let entries = app.audit.borrow().iter().cloned().collect();
    conn.port.post(&PanelEvent::Audit { entries });
}

/// Show a tab's pending approvals in its panels and every side panel; false when no panel
/// shows them.
pub fn broadcast_approvals(app: &App, tab: TabId) -> bool {
    let pending = app.approvals.views(tab);
    let watchers = watcher_conns(app);
    let all = app.approvals.all_views();
    for w in &watchers {
        w.post(&PanelEvent::AllApprovals {
            pending: all.clone(),
        });
    }
    let mut shown = !watchers.is_empty();
    for p in app
        .panels
        .borrow()
        .iter()
        .filter(|p| p.tab.get() == Some(tab))
    {
        p.port.post(&PanelEvent::Approvals {
            tab_id: tab,
            pending: pending.clone(),
        });
        shown = true;
    }
    shown
}

/// Tell every panel the connection state.
pub fn broadcast_state(app: &App) {
    for p in app.panels.borrow().iter() {
        send_state(app, p);
    }
}

/// Add a command to a tab's history (kept, bounded) and show it in that tab's panels.
pub async fn record(app: &Rc<App>, tab: TabId, entry: HistoryEntry) {
    load_history(app, tab).await;
    if let Some(history) = app.history.borrow_mut().get_mut(&tab) {
        ui::push_history(history, entry.clone());
    }
    app.history_dirty.borrow_mut().insert(tab);
    schedule_flush(app);
    for p in app
        .panels
        .borrow()
        .iter()
        .filter(|p| p.tab.get() == Some(tab))
    {
        p.port.post(&PanelEvent::Ran {
            tab_id: tab,
            entry: entry.clone(),
        });
    }
}

/// Panels of the worker.
pub type Panels = RefCell<Vec<Rc<PanelConn>>>;
