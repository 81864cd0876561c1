//! Tabs under control: one queue task per tab (its commands run one at a time, in order;
//! different tabs run concurrently), the `chrome.debugger` session, and per-command deadlines.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::StreamExt;
use serde_json::{json, Value};
use wasm_bindgen_futures::spawn_local;

use crate::cdp::{self, CdpSession, TabEvents};
use crate::chrome;
use crate::methods::{Command, DownloadArgs};
use crate::platform;
use crate::protocol::{ErrorCode, TabId, WireError};
use crate::router;

/// Commands waiting per tab; a full queue answers at once instead of piling up.
const QUEUE_DEPTH: usize = 64;

/// One queued command and where its answer goes.
pub struct Job {
    pub command: Command,
    /// Absolute deadline, ms since epoch: time spent queued counts against the timeout.
    pub deadline_ms: f64,
    pub reply: oneshot::Sender<Result<Value, WireError>>,
    /// The policy the command was admitted under, judged again right before it runs.
    pub guard: Option<super::gate::Guard>,
}

/// Everything kept about one tab.
pub struct TabSlot {
    tab_id: TabId,
    events: RefCell<TabEvents>,
    attached: Cell<bool>,
    closed: Cell<bool>,
    /// Detaches Chrome made while the tab lived on: when (and whether) to re-attach.
    attachment: RefCell<crate::attachment::Attachment>,
    queue: mpsc::Sender<Job>,
}

impl TabSlot {
    fn fail_pending(&self) {
        self.events.borrow_mut().cancel_waiters();
    }
}

/// `chrome.debugger` as a [`CdpSession`].
struct DebuggerSession<'a> {
    slot: &'a TabSlot,
}

impl CdpSession for DebuggerSession<'_> {
    fn tab_id(&self) -> TabId {
        self.slot.tab_id
    }

    async fn send(&self, method: &str, params: Value) -> Result<Value, WireError> {
        if self.slot.closed.get() {
            return Err(WireError::new(
                ErrorCode::TabClosed,
                format!("tab {} was closed", self.slot.tab_id),
            ));
        }
        chrome::debugger::send_command(self.slot.tab_id, method, &params).await
    }

    async fn send_in(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        match session {
            None => self.send(method, params).await,
            Some(session) => {
                if self.slot.closed.get() {
                    return Err(WireError::new(
                        ErrorCode::TabClosed,
                        format!("tab {} was closed", self.slot.tab_id),
                    ));
                }
                chrome::debugger::send_command_in(self.slot.tab_id, session, method, &params).await
            }
        }
    }

    fn events(&self) -> &RefCell<TabEvents> {
        &self.slot.events
    }
}

/// All controlled tabs.
#[derive(Default)]
pub struct Tabs {
    slots: RefCell<HashMap<TabId, Rc<TabSlot>>>,
}

impl Tabs {
    /// Queue `job` on `tab_id`'s queue, creating the queue task on first use.
    pub fn enqueue(&self, tab_id: TabId, job: Job) {
        let slot = self.slot(tab_id);
        let mut queue = slot.queue.clone();
        if let Err(err) = queue.try_send(job) {
            let job = err.into_inner();
            let _ = job.reply.send(Err(WireError::new(
                ErrorCode::Internal,
                format!("tab {tab_id} has {QUEUE_DEPTH} commands waiting; wait for them before sending more"),
            )));
        }
    }

    fn slot(&self, tab_id: TabId) -> Rc<TabSlot> {
        if let Some(slot) = self.slots.borrow().get(&tab_id) {
            return slot.clone();
        }
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let slot = Rc::new(TabSlot {
            tab_id,
            events: RefCell::new(TabEvents::new()),
            attached: Cell::new(false),
            closed: Cell::new(false),
            attachment: RefCell::default(),
            queue: tx,
        });
        self.slots.borrow_mut().insert(tab_id, slot.clone());
        spawn_local(run_queue(slot.clone(), rx));
        slot
    }

    /// Whether the tab is under control and open (its removal would have been seen).
    pub fn is_open(&self, tab_id: TabId) -> bool {
        self.slots
            .borrow()
            .get(&tab_id)
            .is_some_and(|s| s.attached.get() && !s.closed.get())
    }

    /// The main frame's URL as last seen, for a tab under control.
    pub fn main_url(&self, tab_id: TabId) -> Option<String> {
        let slot = self.slots.borrow().get(&tab_id).cloned()?;
        let url = slot.events.borrow().main_url.clone();
        url
    }

    /// What a command is judged on (a ref's frame, else the main frame: the security
    /// origin Chrome reports for that document), as last seen.
    pub fn judged_for(&self, tab_id: TabId, params: &Value) -> Option<Vec<String>> {
        let slot = self.slots.borrow().get(&tab_id).cloned()?;
        let judged = slot.events.borrow().judged_for(params);
        judged
    }

    /// The absolute URL of the link a `download` by ref or selector would click, if the
    /// element is (inside) a link: what the download fetches, judged where it lands.
    pub async fn link_href(&self, tab_id: TabId, download: &DownloadArgs) -> Option<String> {
        let slot = self.slots.borrow().get(&tab_id).cloned()?;
        if !slot.attached.get() || slot.closed.get() {
            return None;
        }
        let target = download.target.get()?;
        let session = DebuggerSession { slot: &slot };
        let located = cdp::world::locate_target(&session, &target).await.ok()?;
        let href = cdp::world::run(
            &session,
            &located.frame,
            "async (t) => { const f = await resolve(t, 0); if (!f.el) return null; const a = f.el.closest('a[href], area[href]'); return a ? a.href : null; }",
            &[located.js],
        )
        .await
        .ok()?;
        href.as_str().map(str::to_string)
    }

    /// The line of the last snapshot that shows `reference` (`e5`), for approvals.
    pub fn ref_line(&self, tab_id: TabId, reference: &str) -> Option<String> {
        let slot = self.slots.borrow().get(&tab_id).cloned()?;
        let needle = format!("[ref={reference}]");
        let events = slot.events.borrow();
        events
            .last_snapshot
            .iter()
            .find(|l| l.contains(&needle))
            .map(|l| l.trim().to_string())
    }

    /// A CDP event for a tab we control; answers what the recorder widget asked, if anything.
    pub fn on_event(&self, tab_id: TabId, method: &str, params: &Value) -> Vec<Value> {
        let slot = self.slots.borrow().get(&tab_id).cloned();
        let Some(slot) = slot else {
            return Vec::new();
        };
        let mut events = slot.events.borrow_mut();
        events.on_event(method, params);
        events.take_widget_requests()
    }

    /// `opener` opened a tab showing `url`: its recording, if any, notes it.
    pub fn on_opened(&self, opener: TabId, url: &str) {
        let slot = self.slots.borrow().get(&opener).cloned();
        if let Some(slot) = slot {
            slot.events.borrow_mut().record_new_tab(url);
        }
    }

    /// Handle one request of the tab's recorder widget.
    pub async fn widget_request(
        &self,
        tab_id: TabId,
        request: &Value,
        known: &[crate::scenario::ScenarioSummary],
    ) -> Result<cdp::WidgetOutcome, WireError> {
        let slot = self.slots.borrow().get(&tab_id).cloned();
        let slot = slot.ok_or_else(|| closed(tab_id))?;
        cdp::widget_request(&DebuggerSession { slot: &slot }, request, known).await
    }

    /// Show `view` in the tab's recorder widget, if the tab is still under control.
    pub async fn widget_show(&self, tab_id: TabId, view: &Value) {
        let slot = self.slots.borrow().get(&tab_id).cloned();
        if let Some(slot) = slot {
            let _ = cdp::widget_show(&DebuggerSession { slot: &slot }, view).await;
        }
    }

    /// The debugger left the tab (closed, crashed, a page made Chrome drop it, or a person
    /// cancelled the infobar): the next command re-attaches only if `attachment` allows.
    pub fn on_detach(&self, tab_id: TabId, reason: &str) {
        let slot = self.slots.borrow().get(&tab_id).cloned();
        if let Some(slot) = slot {
            slot.attached.set(false);
            slot.attachment
                .borrow_mut()
                .on_detach(reason, platform::now_ms());
            slot.fail_pending();
        }
    }

    /// No kapture is connected any more: let go of every tab (the "is being debugged" bar
    /// goes away), except those recording a flow, which a person may still be doing.
    pub fn release_all(&self) {
        let slots: Vec<Rc<TabSlot>> = self.slots.borrow().values().cloned().collect();
        for slot in slots {
            if !slot.attached.get() || slot.events.borrow().recording.is_some() {
                continue;
            }
            slot.attached.set(false);
            slot.fail_pending();
            let tab_id = slot.tab_id;
            spawn_local(async move {
                let _ = chrome::debugger::detach(tab_id).await;
            });
        }
    }

    /// The tab is gone: queued and running commands end with `TAB_CLOSED`.
    pub fn on_removed(&self, tab_id: TabId) {
        let slot = self.slots.borrow_mut().remove(&tab_id);
        if let Some(slot) = slot {
            slot.closed.set(true);
            slot.fail_pending();
            // Ends the queue task once it has answered what is queued.
            slot.queue.clone().close_channel();
        }
    }
}

fn closed(tab_id: TabId) -> WireError {
    WireError::new(ErrorCode::TabClosed, format!("tab {tab_id} was closed"))
}

/// The queue task of one tab: runs its jobs strictly one after another.
async fn run_queue(slot: Rc<TabSlot>, mut rx: mpsc::Receiver<Job>) {
    while let Some(mut job) = rx.next().await {
        // Nobody waits for it any more (cancelled): skip it.
        if job.reply.is_canceled() {
            continue;
        }
        let remaining = job.deadline_ms - platform::now_ms();
        let result = if slot.closed.get() {
            Err(closed(slot.tab_id))
        } else if remaining <= 0.0 {
            Err(WireError::new(
                ErrorCode::Timeout,
                format!(
                    "{} timed out while waiting for earlier commands on tab {}",
                    job.command.name(),
                    slot.tab_id
                ),
            ))
        } else {
            let run = execute(&slot, &job.command, job.guard.as_ref());
            let timed = platform::timeout(Duration::from_millis(remaining as u64), run);
            // A cancelled command stops where it is; the next job runs at once.
            let cancelled = job.reply.cancellation();
            let outcome = match futures::future::select(std::pin::pin!(timed), cancelled).await {
                futures::future::Either::Left((outcome, _)) => outcome,
                futures::future::Either::Right(_) => continue,
            };
            match outcome {
                Some(result) => result,
                None => {
                    // A dialog that opened meanwhile is what stopped the command.
                    let dialog = slot.events.borrow().dialog.clone();
                    Err(match dialog {
                        Some(d) => crate::cdp::dialog_error(&d, slot.tab_id),
                        None => WireError::new(
                            ErrorCode::Timeout,
                            format!(
                                "{} did not finish within its timeout on tab {}",
                                job.command.name(),
                                slot.tab_id
                            ),
                        ),
                    })
                }
            }
        };
        // A closed tab turns whatever the command saw (cancelled waits, detach) into TAB_CLOSED;
        // a debugger lost while the tab lives on is said as such (its removal may still be on
        // its way, so the tab is asked for).
        let result = match result {
            Err(_) if slot.closed.get() => Err(closed(slot.tab_id)),
            Err(e) if e.code == ErrorCode::TabClosed => {
                if chrome::tabs::get(slot.tab_id).await.is_ok() {
                    slot.attached.set(false);
                    Err(slot
                        .attachment
                        .borrow()
                        .lost_error(slot.tab_id, job.command.name()))
                } else {
                    Err(closed(slot.tab_id))
                }
            }
            other => other,
        };
        let _ = job.reply.send(result);
    }
}

async fn execute(
    slot: &TabSlot,
    command: &Command,
    guard: Option<&super::gate::Guard>,
) -> Result<Value, WireError> {
    let session = DebuggerSession { slot };
    if !slot.attached.get() {
        attach(slot).await?;
        cdp::prepare(&session).await?;
    }
    if let Some(guard) = guard {
        let now = slot.events.borrow().judged_for(&command.params());
        super::gate::recheck(guard, command, now.as_deref())?;
    }
    // Whatever the command reaches beyond where it was judged (frames, requests, the
    // document a wait ends on) is judged on the same rules while it runs.
    let judge = guard.and_then(|g| g.judge(command));
    if judge.is_some() {
        slot.events.borrow_mut().rules_seen = judge.clone();
    }
    slot.events.borrow_mut().judge = judge;
    let result = router::run(&session, command).await;
    slot.events.borrow_mut().judge = None;
    result
}

async fn attach(slot: &TabSlot) -> Result<(), WireError> {
    let wait_ms = slot
        .attachment
        .borrow()
        .may_attach(slot.tab_id, platform::now_ms())?;
    if wait_ms > 0.0 {
        platform::sleep(Duration::from_millis(wait_ms as u64)).await;
    }
    match chrome::debugger::attach(slot.tab_id).await {
        Ok(()) => {}
        // After a service-worker restart our own earlier session may still hold the tab:
        // detaching succeeds only if it is ours, and then we attach afresh.
        Err(e)
            if e.code == ErrorCode::DebuggerConflict
                && chrome::debugger::detach(slot.tab_id).await.is_ok() =>
        {
            chrome::debugger::attach(slot.tab_id).await?;
        }
        Err(mut e) => {
            if e.code == ErrorCode::Internal {
                e.code = ErrorCode::UnsupportedPage;
            }
            e.message = format!("cannot control tab {}: {}", slot.tab_id, e.message);
            return Err(e);
        }
    }
    slot.attached.set(true);
    slot.attachment.borrow_mut().attached(platform::now_ms());
    Ok(())
}

/// The tab a command without `tab_id` runs on: the active tab of the focused window,
/// else any active tab, else any tab, else a new blank one.
pub async fn default_tab() -> Result<TabId, WireError> {
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
