//! Tabs under control: one queue task per tab (its commands run one at a time, in order;
//! different tabs run concurrently), the tab's debugger session through the [`Host`], its
//! event bookkeeping, per-command deadlines, and a closed tab ending its commands.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::future::Either;
use futures::StreamExt;
use serde_json::Value;

use super::{answer_of, Host, Slots};
use crate::cdp::{self, CdpSession, TabEvents};
use crate::methods::{Command, ElementTarget};
use crate::platform;
use crate::policy::gate::{self, Guard};
use crate::policy::risk::{ElementFacts, Spot};
use crate::policy::{Category, Judge};
use crate::protocol::{ErrorCode, TabId, Transport, WireError};
use crate::router;

/// Commands waiting per tab; a full queue answers at once instead of piling up.
pub const QUEUE_DEPTH: usize = 64;

/// One queued command and where its answer goes.
struct Job {
    command: Command,
    /// Absolute deadline, ms since epoch: time spent queued counts against the timeout.
    deadline_ms: f64,
    reply: oneshot::Sender<Result<Value, WireError>>,
    /// The policy the command was admitted under, judged again right before it runs.
    guard: Option<Guard>,
}

/// Everything kept about one tab.
pub struct TabSlot {
    tab_id: TabId,
    events: RefCell<TabEvents>,
    attached: Cell<bool>,
    closed: Cell<bool>,
    /// Detaches the browser made while the tab lived on: when (and whether) to re-attach.
    attachment: RefCell<crate::attachment::Attachment>,
    queue: mpsc::Sender<Job>,
    /// Told when the tab closes under the running command.
    closing: RefCell<Option<oneshot::Sender<()>>>,
}

impl TabSlot {
    fn fail_pending(&self) {
        self.events.borrow_mut().cancel_waiters();
    }
}

/// A tab's debugger session through the host, as a [`CdpSession`].
struct TabSession<'a, H: Host> {
    host: &'a H,
    slot: &'a TabSlot,
}

impl<H: Host> CdpSession for TabSession<'_, H> {
    fn tab_id(&self) -> TabId {
        self.slot.tab_id
    }

    async fn send_in(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        if self.slot.closed.get() {
            return Err(closed(self.slot.tab_id));
        }
        self.host
            .send(self.slot.tab_id, session, method, params)
            .await
    }

    fn events(&self) -> &RefCell<TabEvents> {
        &self.slot.events
    }
}

/// All controlled tabs.
pub struct Tabs<H: Host> {
    host: Rc<H>,
    slots: Slots,
}

impl<H: Host> Tabs<H> {
    pub(super) fn new(host: Rc<H>) -> Self {
        Tabs {
            host,
            slots: RefCell::default(),
        }
    }

    fn get(&self, tab_id: TabId) -> Option<Rc<TabSlot>> {
        self.slots.borrow().get(&tab_id).cloned()
    }

    /// Run `command` in `tab_id`'s queue (created on first use) and wait for its answer.
    pub async fn run(
        &self,
        tab_id: TabId,
        command: Command,
        deadline_ms: f64,
        guard: Option<Guard>,
    ) -> Result<Value, WireError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            command,
            deadline_ms,
            reply,
            guard,
        };
        let mut queue = self.slot(tab_id).queue.clone();
        if let Err(err) = queue.try_send(job) {
            let job = err.into_inner();
            let _ = job.reply.send(Err(WireError::new(
                ErrorCode::Internal,
                format!("tab {tab_id} has {QUEUE_DEPTH} commands waiting; wait for them before sending more"),
            )));
        }
        answer_of(answer, tab_id).await
    }

    fn slot(&self, tab_id: TabId) -> Rc<TabSlot> {
        if let Some(slot) = self.get(tab_id) {
            return slot;
        }
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let slot = Rc::new(TabSlot {
            tab_id,
            events: RefCell::new(TabEvents::new()),
            attached: Cell::new(false),
            closed: Cell::new(false),
            attachment: RefCell::default(),
            queue: tx,
            closing: RefCell::default(),
        });
        self.slots.borrow_mut().insert(tab_id, slot.clone());
        self.host
            .spawn(Box::pin(run_queue(self.host.clone(), slot.clone(), rx)));
        slot
    }

    /// Whether the tab is under control and open (its removal would have been seen).
    pub fn is_open(&self, tab_id: TabId) -> bool {
        self.get(tab_id)
            .is_some_and(|s| s.attached.get() && !s.closed.get())
    }

    /// The main frame's URL as last seen, for a tab under control.
    pub fn main_url(&self, tab_id: TabId) -> Option<String> {
        let url = self.get(tab_id)?.events.borrow().main_url.clone();
        url
    }

    /// What a command is judged on (a ref's frame, else the main frame: the security
    /// origin the browser reports for that document), as last seen.
    /// In reduced mode nothing keeps that current: `None`, so the browser's tab is asked.
    pub fn judged_for(&self, tab_id: TabId, command: Option<&Command>) -> Option<Vec<String>> {
        if self.host.transport() == Transport::Scripting {
            return None;
        }
        let target_ref = command.and_then(target_ref);
        let judged = self.get(tab_id)?.events.borrow().judged_for(target_ref);
        judged
    }

    /// The absolute URL of the link a `download` by ref or selector would click, if the
    /// element is (inside) a link in a document `reader` may read: what the download
    /// fetches, judged where it lands.
    pub async fn link_href(
        &self,
        tab_id: TabId,
        target: &ElementTarget,
        reader: &Judge,
    ) -> Option<String> {
        let href = self
            .on_element(
                tab_id,
                target,
                reader,
                "async (t) => { const f = await resolve(t, 0); if (!f.el) return null; const a = f.el.closest('a[href], area[href]'); return a ? a.href : null; }",
            )
            .await?;
        href.as_str().map(str::to_string)
    }

    /// Run `script` (`async (t) => …`, `t` the located target) in Kapture's world of the
    /// frame `target` is in; `None` when the tab is not under control or it fails.
    async fn on_element(
        &self,
        tab_id: TabId,
        target: &ElementTarget,
        reader: &Judge,
        script: &str,
    ) -> Option<Value> {
        let slot = self.get(tab_id)?;
        if !slot.attached.get() || slot.closed.get() {
            return None;
        }
        let session = TabSession {
            host: &*self.host,
            slot: &slot,
        };
        let located = cdp::world::locate_target(&session, target).await.ok()?;
        readable(&slot, &located.frame, reader)?;
        cdp::world::run(&session, &located.frame, script, &[located.js])
            .await
            .ok()
    }

    /// What the page says now of where input lands (`spot`: an element a target names, the
    /// focused element, the element under a point, the dialog), for an approval's risk.
    /// `None` when the tab is not under control yet, nothing could be read there, or the
    /// element's document is one `reader` may not read (its words are not the agent's to
    /// see, nor a hostile frame's to shape the question with).
    pub async fn facts_at(
        &self,
        tab_id: TabId,
        spot: &Spot,
        reader: &Judge,
    ) -> Option<ElementFacts> {
        let slot = self.get(tab_id)?;
        if !slot.attached.get() || slot.closed.get() {
            return None;
        }
        let s = TabSession {
            host: &*self.host,
            slot: &slot,
        };
        let facts = match spot {
            Spot::Element(target) => {
                let located = cdp::world::locate_target(&s, target).await.ok()?;
                readable(&slot, &located.frame, reader)?;
                let script = format!(
                    "async (t) => {{ const f = await resolve(t, 0); return f.el ? ({})(f.el) : null; }}",
                    cdp::js::ELEMENT_FACTS
                );
                cdp::world::run(&s, &located.frame, &script, &[located.js])
                    .await
                    .ok()?
            }
            Spot::Focused => {
                let (frame, object) = cdp::world::focused(&s).await.ok()?;
                readable(&slot, &frame, reader)?;
                facts_of(&s, &frame, &object).await?
            }
            Spot::Point(x, y) => {
                let (frame, object) = cdp::world::element_at(&s, (*x, *y)).await.ok()??;
                readable(&slot, &frame, reader)?;
                facts_of(&s, &frame, &object).await?
            }
            Spot::Dialog => {
                let dialog = slot.events.borrow().dialog.clone();
                return match dialog {
                    None => Some(ElementFacts::default()),
                    // Its words count only where `reader` may read the document that said
                    // them, and only when they were kept (else: could not be read).
                    Some(d) => (!d.withheld && reader.check(Category::Read, &d.judged).is_ok())
                        .then(|| ElementFacts::dialog(&d.message)),
                };
            }
        };
        serde_json::from_value::<ElementFacts>(facts)
            .ok()
            .map(ElementFacts::bounded)
    }

    /// The line of the last snapshot that shows `reference` (`e5`), for approvals.
    pub fn ref_line(&self, tab_id: TabId, reference: &str) -> Option<String> {
        let slot = self.get(tab_id)?;
        let needle = format!("[ref={reference}]");
        let events = slot.events.borrow();
        events
            .last_snapshot
            .iter()
            .find(|l| l.contains(&needle))
            .map(|l| l.trim().to_string())
    }

    /// A CDP event from a tab's debugger, `session` naming the child session it came from
    /// (`None`: the tab's own). Events of a child session (an out-of-process iframe the
    /// browser auto-attached) are not the tab's: its navigations and contexts must not be
    /// taken for the page's; only its own auto-attached frames (`Target.*`) are kept.
    /// Answers what the recorder widget asked, if anything.
    pub fn on_cdp_event(
        &self,
        tab_id: TabId,
        session: Option<&str>,
        method: &str,
        params: &Value,
    ) -> Vec<Value> {
        if session.is_some() && !method.starts_with("Target.") {
            return Vec::new();
        }
        self.on_event(tab_id, method, params)
    }

    /// A CDP event of a tab we control; answers what the recorder widget asked, if anything.
    pub fn on_event(&self, tab_id: TabId, method: &str, params: &Value) -> Vec<Value> {
        let Some(slot) = self.get(tab_id) else {
            return Vec::new();
        };
        let mut events = slot.events.borrow_mut();
        events.on_event(method, params);
        events.take_widget_requests()
    }

    /// `opener` opened a tab showing `url`: its recording, if any, notes it.
    pub fn on_opened(&self, opener: TabId, url: &str) {
        if let Some(slot) = self.get(opener) {
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
        let slot = self.get(tab_id).ok_or_else(|| closed(tab_id))?;
        let session = TabSession {
            host: &*self.host,
            slot: &slot,
        };
        cdp::widget_request(&session, request, known).await
    }

    /// Show `view` in the tab's recorder widget, if the tab is still under control.
    pub async fn widget_show(&self, tab_id: TabId, view: &Value) {
        if let Some(slot) = self.get(tab_id) {
            let session = TabSession {
                host: &*self.host,
                slot: &slot,
            };
            let _ = cdp::widget_show(&session, view).await;
        }
    }

    /// The debugger left the tab (closed, crashed, a page made the browser drop it, or a
    /// person cancelled it): the next command re-attaches only if `attachment` allows.
    pub fn on_detach(&self, tab_id: TabId, reason: &str) {
        if let Some(slot) = self.get(tab_id) {
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
            let (host, tab_id) = (self.host.clone(), slot.tab_id);
            self.host.spawn(Box::pin(async move {
                let _ = host.detach(tab_id).await;
            }));
        }
    }

    /// The tab is gone: queued and running commands end with `TAB_CLOSED`.
    pub fn on_removed(&self, tab_id: TabId) {
        let slot = self.slots.borrow_mut().remove(&tab_id);
        if let Some(slot) = slot {
            slot.closed.set(true);
            slot.fail_pending();
            if let Some(stop) = slot.closing.borrow_mut().take() {
                let _ = stop.send(());
            }
            // Ends the queue task once it has answered what is queued.
            slot.queue.clone().close_channel();
        }
    }
}

fn closed(tab_id: TabId) -> WireError {
    WireError::new(ErrorCode::TabClosed, format!("tab {tab_id} was closed"))
}

/// The queue task of one tab: runs its jobs strictly one after another.
async fn run_queue<H: Host>(host: Rc<H>, slot: Rc<TabSlot>, mut rx: mpsc::Receiver<Job>) {
    while let Some(mut job) = rx.next().await {
        // Nobody waits for it any more (cancelled): skip it.
        if job.reply.is_canceled() {
            continue;
        }
        let name = job.command.name();
        let remaining = job.deadline_ms - platform::now_ms();
        let result = if slot.closed.get() {
            Err(closed(slot.tab_id))
        } else if remaining <= 0.0 {
            Err(WireError::new(
                ErrorCode::Timeout,
                format!(
                    "{name} timed out while waiting for earlier commands on tab {}",
                    slot.tab_id
                ),
            ))
        } else {
            let (closing, closed_now) = oneshot::channel();
            *slot.closing.borrow_mut() = Some(closing);
            slot.events.borrow_mut().deadline_ms = Some(job.deadline_ms);
            let run = execute(&*host, &slot, &job.command, job.guard.as_ref());
            let timed = platform::timeout(Duration::from_millis(remaining as u64), run);
            // A cancelled command stops where it is; the next job runs once what it left
            // in the page is gone. A closed tab ends it whatever the browser still owes it.
            let cancelled = job.reply.cancellation();
            let stop = futures::future::select(cancelled, closed_now);
            let ended = match futures::future::select(std::pin::pin!(timed), stop).await {
                Either::Left((outcome, _)) => Some(outcome),
                Either::Right((Either::Left(_), _)) => None,
                Either::Right((Either::Right(_), _)) => Some(Some(Err(closed(slot.tab_id)))),
            };
            slot.closing.borrow_mut().take();
            // The command is over however it ended (its answer, an error, its deadline, a
            // cancel or a pause): no picker it put in the page outlives it, and the rules it
            // was held to are no one's now.
            slot.events.borrow_mut().judge = None;
            slot.events.borrow_mut().deadline_ms = None;
            end_picker(&*host, &slot).await;
            let Some(outcome) = ended else {
                continue;
            };
            match outcome {
                Some(result) => result,
                None => {
                    // A dialog that opened meanwhile is what stopped the command.
                    let dialog = slot.events.borrow().dialog.clone();
                    Err(match dialog {
                        Some(d) => cdp::dialog_error(&d, slot.tab_id),
                        None => WireError::new(
                            ErrorCode::Timeout,
                            format!(
                                "{name} did not finish within its timeout on tab {}",
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
                if host.tab(slot.tab_id).await.is_ok() && !slot.closed.get() {
                    slot.attached.set(false);
                    Err(slot.attachment.borrow().lost_error(slot.tab_id, name))
                } else {
                    Err(closed(slot.tab_id))
                }
            }
            other => other,
        };
        let _ = job.reply.send(result);
    }
}

/// End the picker a command left in the tab's page (stopped, or out of time, before it
/// removed it itself), before the tab's next command runs.
async fn end_picker<H: Host>(host: &H, slot: &TabSlot) {
    if slot.events.borrow().picker.is_none() {
        return;
    }
    if slot.closed.get() || !slot.attached.get() {
        // No way into the page: the picker's own watchdog removes it (no poll comes).
        slot.events.borrow_mut().picker = None;
        return;
    }
    cdp::pick::end_live(&TabSession { host, slot }).await;
}

async fn execute<H: Host>(
    host: &H,
    slot: &TabSlot,
    command: &Command,
    guard: Option<&Guard>,
) -> Result<Value, WireError> {
    let session = TabSession { host, slot };
    let reduced = host.transport() == Transport::Scripting;
    if !reduced && !slot.attached.get() {
        attach(host, slot).await?;
        cdp::prepare(&session, host.viewport()).await?;
    }
    // Held to the rules as they are now, not as they were when it was queued.
    let fresh = guard.map(|g| Guard {
        policy: host.refresh(&g.policy),
        ..g.clone()
    });
    let guard = fresh.as_ref();
    if let Some(guard) = guard {
        // Safe mode switched on while it waited in the queue holds too.
        if let Some(category) = command.category() {
            gate::safe_mode_allows(category, host.safe_mode().await)?;
        }
        // In reduced mode no events keep the documents current: what is known may be a
        // page ago, so the page is judged as found when the command runs (`reduced`).
        let now = match reduced {
            false => slot.events.borrow().judged_for(target_ref(command)),
            true => None,
        };
        gate::recheck(guard, command, now.as_deref())?;
    }
    // Whatever the command reaches beyond where it was judged (frames, requests, the
    // document a wait ends on) is judged on the same rules while it runs.
    let judge = guard.and_then(|g| g.judge(command));
    if judge.is_some() {
        slot.events.borrow_mut().rules_seen = judge.clone();
    }
    slot.events.borrow_mut().judge = judge;
    let result = if reduced {
        super::reduced::run(host, slot.tab_id, &slot.events, command).await
    } else {
        router::run(&session, command).await
    };
    slot.events.borrow_mut().judge = None;
    result
}

async fn attach<H: Host>(host: &H, slot: &TabSlot) -> Result<(), WireError> {
    let wait_ms = slot
        .attachment
        .borrow()
        .may_attach(slot.tab_id, platform::now_ms())?;
    if wait_ms > 0.0 {
        platform::sleep(Duration::from_millis(wait_ms as u64)).await;
    }
    if let Err(mut e) = host.attach(slot.tab_id).await {
        if e.code == ErrorCode::Internal {
            e.code = ErrorCode::UnsupportedPage;
        }
        e.message = format!("cannot control tab {}: {}", slot.tab_id, e.message);
        return Err(e);
    }
    slot.attached.set(true);
    slot.attachment.borrow_mut().attached(platform::now_ms());
    Ok(())
}

/// `Some` when `reader` may read `frame`'s current document (a frame never seen is not).
fn readable(slot: &TabSlot, frame: &str, reader: &Judge) -> Option<()> {
    let judged = slot.events.borrow().judged(frame);
    (!judged.is_empty() && reader.check(Category::Read, &judged).is_ok()).then_some(())
}

/// [`cdp::js::ELEMENT_FACTS`] of an element object of Kapture's world in `frame`.
async fn facts_of<S: CdpSession>(s: &S, frame: &str, object: &str) -> Option<Value> {
    let session = s.events().borrow().session_of(frame);
    let answer = s
        .send_in(
            session.as_deref(),
            "Runtime.callFunctionOn",
            serde_json::json!({
                "objectId": object,
                "functionDeclaration": format!("function () {{ return ({})(this); }}", cdp::js::ELEMENT_FACTS),
                "returnByValue": true,
            }),
        )
        .await
        .ok()?;
    answer.pointer("/result/value").cloned()
}

/// The ref of the element `command` names itself, which the gate judges on its frame.
fn target_ref(command: &Command) -> Option<&str> {
    command.target().and_then(|t| t.element_ref.as_deref())
}
