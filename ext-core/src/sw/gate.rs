//! The extension's side of the policy gate: safe mode (stored, so a restarted worker keeps
//! it) and approvals waiting for a person in the Kapture panel (opened in a window when none
//! is). What is judged and how lives in `policy::gate` and `exec`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;
use serde_json::Value;

use super::App;
use crate::chrome;
use crate::platform;
use crate::policy::gate::Answer;
use crate::protocol::TabId;
use crate::ui::ApprovalView;

struct Pending {
    view: ApprovalView,
    reply: oneshot::Sender<String>,
}

/// Approvals waiting for a person, and the safe mode switch.
#[derive(Default)]
pub struct Approvals {
    pending: RefCell<HashMap<u64, Pending>>,
    next: Cell<u64>,
    /// Safe mode from the panel; `None` until read from storage (a restarted worker must
    /// not forget it).
    safe_mode: Cell<Option<bool>>,
}

const SAFE_MODE_KEY: &str = "kapture.safe_mode";

/// Whether safe mode is on (read from storage once per worker).
pub async fn safe_mode(app: &App) -> bool {
    if let Some(on) = app.approvals.safe_mode.get() {
        return on;
    }
    let on = matches!(
        chrome::storage::local_get(SAFE_MODE_KEY).await,
        Ok(Some(Value::Bool(true)))
    );
    app.approvals.safe_mode.set(Some(on));
    on
}

/// Turn safe mode on or off, and remember it.
pub async fn set_safe_mode(app: &App, on: bool) {
    app.approvals.safe_mode.set(Some(on));
    let _ = chrome::storage::local_set(SAFE_MODE_KEY, &Value::Bool(on)).await;
}

impl Approvals {
    /// Safe mode as last known (the panel shows it; checks read storage when unknown).
    pub fn safe_mode_now(&self) -> bool {
        self.safe_mode.get().unwrap_or(false)
    }

    pub fn views(&self, tab: TabId) -> Vec<ApprovalView> {
        let mut v: Vec<ApprovalView> = self
            .pending
            .borrow()
            .values()
            .filter(|p| p.view.tab_id == tab)
            .map(|p| p.view.clone())
            .collect();
        v.sort_by_key(|a| a.id);
        v
    }

    /// Every tab's pending approvals, oldest first (the side panel).
    pub fn all_views(&self) -> Vec<ApprovalView> {
        let mut v: Vec<ApprovalView> = self
            .pending
            .borrow()
            .values()
            .map(|p| p.view.clone())
            .collect();
        v.sort_by_key(|a| a.id);
        v
    }

    /// Withdraw every pending approval (a pause): each is refused as withdrawn. Answers
    /// the tabs they were on (their panels are told).
    pub fn withdraw_all(&self) -> Vec<TabId> {
        let mut tabs: Vec<TabId> = self
            .pending
            .borrow_mut()
            .drain()
            .map(|(_, p)| p.view.tab_id)
            .collect();
        tabs.sort_unstable();
        tabs.dedup();
        tabs
    }

    /// Withdraw the approvals waiting on `tab` (it was closed): each is refused as
    /// withdrawn at once instead of waiting out its time. Whether there were any.
    pub fn withdraw_tab(&self, tab: TabId) -> bool {
        let mut pending = self.pending.borrow_mut();
        let before = pending.len();
        pending.retain(|_, p| p.view.tab_id != tab);
        before != pending.len()
    }

    /// A person answered.
    pub fn answer(&self, id: u64, answer: String) -> Option<TabId> {
        let p = self.pending.borrow_mut().remove(&id)?;
        let tab = p.view.tab_id;
        let _ = p.reply.send(answer);
        Some(tab)
    }
}

/// An approval on show: taken out of the list and every panel when it is dropped.
struct Shown<'a> {
    app: &'a App,
    id: u64,
    tab: TabId,
}

impl Drop for Shown<'_> {
    fn drop(&mut self) {
        // Taken out first: the borrow ends before the panels are told.
        let gone = self.app.approvals.pending.borrow_mut().remove(&self.id);
        drop(gone);
        super::push::broadcast_approvals(self.app, self.tab);
    }
}

/// Withdraw the approvals of a closed tab and tell the panels.
pub fn tab_closed(app: &App, tab: TabId) {
    if app.approvals.withdraw_tab(tab) {
        super::push::broadcast_approvals(app, tab);
    }
}

/// Show `view` to a person in the panel and wait (at most `approval_ms`) for the answer;
/// every server journals who decided.
pub async fn ask(app: &Rc<App>, mut view: ApprovalView, approval_ms: u64) -> Answer {
    // Ids never repeat across worker restarts (a stale panel's click must not land on a
    // newer request): they start from the clock.
    let id = app
        .approvals
        .next
        .get()
        .max(platform::now_ms() as u64 * 1000)
        + 1;
    app.approvals.next.set(id);
    view.id = id;
    // The server that asks (its port leads the asker's key): only it is told the answer.
    // A question of the panel's own commands is the person's, journalled by every server.
    let asker_port = view
        .who
        .as_deref()
        .and_then(|k| k.split_once('.'))
        .and_then(|(port, _)| port.parse::<u16>().ok());
    // Who asks, as people know the session (the executor knows only its key).
    view.who = Some(super::control::who(
        app,
        view.who.as_deref().unwrap_or("panel"),
    ));
    let (tab, method, origin) = (view.tab_id, view.method.clone(), view.origin.clone());
    let category = view.category.clone();
    let (reply, answer) = oneshot::channel();
    app.approvals
        .pending
        .borrow_mut()
        .insert(id, Pending { view, reply });
    // However this ends — answered, timed out, or the asking command dropped mid-wait (an
    // MCP cancel, its own deadline, its server gone) — the question leaves every panel.
    let shown = Shown {
        app: app.as_ref(),
        id,
        tab,
    };
    if !super::push::broadcast_approvals(app, tab) {
        // Nobody is looking: open the panel for this tab in its own window.
        let _ = chrome::windows::open_popup(&format!("panel.html?tabId={tab}")).await;
    }
    let answer = platform::timeout(Duration::from_millis(approval_ms), answer).await;
    drop(shown);
    if matches!(&answer, Some(Ok(a)) if a == "always") {
        super::control::remember_always(app, &origin, &category);
    }
    let said = match &answer {
        Some(Ok(a)) => a.clone(),
        Some(Err(_)) => "withdrawn".into(),
        None => "timeout".into(),
    };
    let told = crate::protocol::ExtensionFrame::Event {
        event: crate::protocol::BrowserEvent::Approval {
            tab_id: tab,
            method,
            origin,
            answer: said,
            by: None,
        },
    };
    match asker_port {
        Some(port) => super::conns::send_to(app, port, &told),
        None => app.bridge.broadcast(&told),
    }
    match answer {
        Some(Ok(a)) => Answer::parse(&a),
        Some(Err(_)) => Answer::Withdrawn,
        None => Answer::NoAnswer,
    }
}
