//! The hub task: it owns the active extension connection, the calls in flight and those
//! waiting for the extension to come back, and what it knows of the browser session (for
//! resumes and stale tab ids); it tells the engine selection when the connection changes.

use super::*;

/// A call as the hub keeps it until it is answered.
struct Call {
    method: String,
    tab_id: Option<TabId>,
    params: Value,
    session: Option<String>,
    label: Option<String>,
    /// When the caller's own timeout runs out.
    deadline: Instant,
    reply: oneshot::Sender<Answer>,
    /// Connections that dropped while it was in flight. A second drop is not answered with
    /// a third send: an answer the bridge cannot carry (over its frame cap) would drop the
    /// connection every time.
    drops: u32,
}

/// A call waiting for an extension to (re)connect.
struct Held {
    id: CommandId,
    call: Call,
    /// When it stops waiting.
    until: Instant,
    /// The connection it had been written to before that one dropped: it may have reached
    /// the worker, so it is sent again only if it is repeatable or the resumed worker says
    /// it never got it.
    sent_on: Option<u64>,
}

/// The hub's state: the active connection, the calls in flight and waiting, and what it
/// knows of the browser session (for resumes and stale tab ids).
#[derive(Default)]
struct Hub {
    active: Option<Active>,
    pending: HashMap<CommandId, (u64, Call)>,
    held: Vec<Held>,
    waiters: Vec<oneshot::Sender<()>>,
    origins: HashMap<TabId, String>,
    /// The last session: its extension instance and name, to resume it.
    last: Option<(String, String)>,
    /// The browser run of the last session, when the extension knew it.
    last_browser_run: Option<String>,
    /// Tab ids of this browser session, and of earlier ones (never to be reused silently).
    tabs_now: HashSet<TabId>,
    tabs_before: HashSet<TabId>,
    next_id: CommandId,
    next_session: u64,
}

pub(super) async fn run_hub(
    mut rx: mpsc::Receiver<HubMsg>,
    events: broadcast::Sender<BrowserEvent>,
    generation: std::sync::Arc<watch::Sender<u64>>,
    link: watch::Sender<select::Link>,
    rules: BridgeConfig,
    shutdown: CancellationToken,
) {
    let mut hub = Hub {
        next_id: 1,
        next_session: 1,
        ..Hub::default()
    };
    loop {
        let wake = hub.held.iter().map(|h| h.until).min();
        let msg = tokio::select! {
            msg = rx.recv() => match msg { Some(m) => m, None => break },
            () = async { tokio::time::sleep_until(wake.unwrap_or_else(Instant::now).into()).await }, if wake.is_some() => {
                hub.expire_held(Instant::now());
                continue;
            }
            () = shutdown.cancelled() => break,
        };
        match msg {
            HubMsg::Call {
                method,
                tab_id,
                params,
                timeout_ms,
                session,
                label,
                reply,
            } => {
                let call = Call {
                    method,
                    tab_id,
                    params,
                    session,
                    label,
                    deadline: Instant::now() + Duration::from_millis(timeout_ms),
                    reply,
                    drops: 0,
                };
                let id = hub.next_id;
                hub.next_id += 1;
                if hub.active.is_some() {
                    hub.send(id, call, &rules);
                } else if hub.last.is_some() {
                    // The extension was here and drops out only for a while (a worker
                    // restart): wait for it, bounded.
                    let until = call.deadline.min(Instant::now() + RESUME_WAIT);
                    hub.held.push(Held {
                        id,
                        call,
                        until,
                        sent_on: None,
                    });
                } else {
                    let _ = call.reply.send(Err(WireError::new(
                        ErrorCode::NoBrowser,
                        "no browser extension is connected to kapture",
                    )));
                }
            }
            HubMsg::Attach {
                conn,
                info,
                resume,
                out,
                reply,
            } => {
                if let Some(a) = hub
                    .active
                    .as_ref()
                    .filter(|a| a.info.instance != info.instance)
                {
                    // One browser per server: a second browser is told so, never swapped in.
                    let why = format!(
                        "this kapture already drives another browser ({}, session {}); start another kapture for this one",
                        a.info.browser, a.session
                    );
                    tracing::warn!("refused a second browser: {why}");
                    let said = format!(
                        "refused a connection from another browser ({}): this kapture drives {}",
                        info.browser, a.info.browser
                    );
                    link.send_modify(|l| l.happened(said));
                    let _ = reply.send(Err((RejectReason::Busy, why)));
                    continue;
                }
                let resumed = match (&hub.last, &resume) {
                    (Some((instance, session)), Some(r)) => {
                        *instance == info.instance && *session == r.session
                    }
                    _ => false,
                };
                let session = if resumed {
                    resume
                        .as_ref()
                        .map(|r| r.session.clone())
                        .unwrap_or_default()
                } else {
                    let s = format!("s{}-{conn}", hub.next_session);
                    hub.next_session += 1;
                    s
                };
                let replaced = hub.active.take();
                let event = match &replaced {
                    Some(old) => format!(
                        "connection of session {} replaced by a newer one from the same browser (session {session})",
                        old.session
                    ),
                    None => format!("extension connected (session {session})"),
                };
                let ours = info.launched_by == Some(std::process::id());
                link.send_modify(|l| {
                    l.connected = Some(ours);
                    l.happened(event);
                });
                if let Some(old) = replaced {
                    tracing::warn!(old = %old.session, new = %session, "the browser reconnected; the new connection replaces the old one");
                    let _ = old.out.try_send(HostFrame::Unauthorized {
                        reason: RejectReason::Superseded,
                        message: "a newer connection from this browser replaced this one".into(),
                    });
                    hub.hold_in_flight(old.conn);
                }
                // The same browser unless both the extension's instance and the browser's
                // run changed (an extension reload keeps the run, and so the tabs).
                let same_browser = hub
                    .last
                    .as_ref()
                    .is_some_and(|(instance, _)| *instance == info.instance)
                    || (info.browser_run.is_some() && info.browser_run == hub.last_browser_run);
                if resumed {
                    tracing::info!(%session, "extension reconnected; session resumed");
                } else {
                    if hub.last.is_some() && !same_browser {
                        // Another browser session: its tabs are not the old ones.
                        let before: Vec<TabId> = hub.tabs_now.drain().collect();
                        hub.tabs_before.extend(before);
                        hub.origins.clear();
                        generation.send_modify(|g| *g += 1);
                    }
                    tracing::info!(extension = %info.id, version = %info.version, %session, "extension connected");
                }
                hub.last = Some((info.instance.clone(), session.clone()));
                hub.last_browser_run = info.browser_run.clone();
                hub.active = Some(Active {
                    conn,
                    info,
                    session: session.clone(),
                    since: Instant::now(),
                    out,
                });
                let _ = reply.send(Ok((session, resumed)));
                let last_command = resume.filter(|_| resumed).map(|r| r.last_command);
                hub.release_held(last_command, &rules);
                for w in hub.waiters.drain(..) {
                    let _ = w.send(());
                }
            }
            HubMsg::Detach { conn, why } => {
                if let Some(a) = hub.active.take_if(|a| a.conn == conn) {
                    tracing::info!(%why, "extension disconnected; waiting for it to come back");
                    let event = format!("connection of session {} dropped: {why}", a.session);
                    link.send_modify(|l| {
                        l.connected = None;
                        l.happened(event);
                    });
                }
                hub.hold_in_flight(conn);
            }
            HubMsg::Answered { conn, id, answer } => hub.answered(conn, id, answer),
            HubMsg::Event(event) => {
                match &event {
                    BrowserEvent::PageAt { tab_id, origin } => {
                        if hub.origins.len() >= 1024 {
                            hub.origins.clear();
                        }
                        hub.origins.insert(*tab_id, origin.clone());
                        hub.saw_tab(*tab_id);
                    }
                    BrowserEvent::TabCreated { tab_id, .. } => hub.saw_tab(*tab_id),
                    BrowserEvent::Detached { tab_id, reason } => {
                        tracing::info!(tab_id, reason, "the debugger left a tab");
                    }
                    _ => {}
                }
                let _ = events.send(event);
            }
            HubMsg::Sweep => hub.sweep(),
            HubMsg::Revoke => {
                if let Some(a) = hub.active.take() {
                    let _ = a.out.try_send(HostFrame::Unauthorized {
                        reason: RejectReason::BadToken,
                        message: server::ROTATED.into(),
                    });
                    let event = format!(
                        "connection of session {} ended: kapture made a new bridge token (SIGHUP); the extension pairs again",
                        a.session
                    );
                    link.send_modify(|l| {
                        l.connected = None;
                        l.happened(event);
                    });
                    hub.hold_in_flight(a.conn);
                }
            }
            HubMsg::TabOrigin { tab_id, reply } => {
                let _ = reply.send(hub.origins.get(&tab_id).cloned());
            }
            HubMsg::Status { reply } => {
                let _ = reply.send(hub.active.as_ref().map(|a| ConnectedExtension {
                    info: a.info.clone(),
                    session: a.session.clone(),
                    connected_for_s: a.since.elapsed().as_secs(),
                }));
            }
            HubMsg::Notify(frame) => {
                if let Some(a) = &hub.active {
                    let _ = a.out.try_send(frame);
                }
            }
            HubMsg::WaitConnected { reply } => {
                if hub.active.is_some() {
                    let _ = reply.send(());
                } else {
                    hub.waiters.retain(|w| !w.is_closed());
                    hub.waiters.push(reply);
                }
            }
        }
    }
    for (_, (_, call)) in hub.pending.drain() {
        let _ = call
            .reply
            .send(Err(disconnected("kapture is shutting down")));
    }
    for held in hub.held.drain(..) {
        let _ = held
            .call
            .reply
            .send(Err(disconnected("kapture is shutting down")));
    }
}

impl Hub {
    /// Send `call` as command `id` on the active connection (or answer it at once).
    fn send(&mut self, id: CommandId, call: Call, rules: &BridgeConfig) {
        let Some(a) = &self.active else {
            let _ = call
                .reply
                .send(Err(disconnected("the extension is not connected")));
            return;
        };
        if let Err(e) = precheck(rules, &a.info, &call.method, &call.params) {
            let _ = call.reply.send(Err(e));
            return;
        }
        if let Some(t) = call
            .tab_id
            .filter(|t| self.tabs_before.contains(t) && !self.tabs_now.contains(t))
        {
            let _ = call.reply.send(Err(WireError::new(
                ErrorCode::TabNotFound,
                format!("tab {t} belonged to a browser session that has ended (the browser or its extension restarted); its id is not reused"),
            )));
            return;
        }
        let now = Instant::now();
        if call.deadline <= now {
            let _ = call.reply.send(Err(WireError::new(
                ErrorCode::Timeout,
                format!("{} ran out of time waiting for the extension", call.method),
            )));
            return;
        }
        let frame = HostFrame::Command {
            id,
            tab_id: call.tab_id,
            method: call.method.clone(),
            params: call.params.clone(),
            timeout_ms: (call.deadline - now).as_millis().max(1) as u64,
            session: call.session.clone(),
            label: call.label.clone(),
        };
        // A full outbound queue means the socket is stuck; answer rather than wait.
        match a.out.try_send(frame) {
            Ok(()) => {
                let conn = a.conn;
                self.sweep();
                self.pending.insert(id, (conn, call));
            }
            Err(_) => {
                let _ = call.reply.send(Err(disconnected(
                    "the connection to the extension is not accepting commands",
                )));
            }
        }
    }

    /// Connection `conn` dropped: its calls wait for the extension to come back.
    fn hold_in_flight(&mut self, conn: u64) {
        let ids: Vec<CommandId> = self
            .pending
            .iter()
            .filter(|(_, (c, _))| *c == conn)
            .map(|(id, _)| *id)
            .collect();
        let latest = Instant::now() + RESUME_WAIT;
        for id in ids {
            if let Some((_, mut call)) = self.pending.remove(&id) {
                call.drops += 1;
                let until = call.deadline.min(latest);
                self.held.push(Held {
                    id,
                    call,
                    until,
                    sent_on: Some(conn),
                });
            }
        }
    }

    /// An extension (re)connected: send what waited for it, except what may have run already.
    /// `last_command`: the highest id the resumed worker had received (none: a new session).
    fn release_held(&mut self, last_command: Option<CommandId>, rules: &BridgeConfig) {
        let mut held = std::mem::take(&mut self.held);
        held.sort_by_key(|h| h.id);
        for h in held {
            if h.call.reply.is_closed() {
                continue;
            }
            let never_received = match (h.sent_on, last_command) {
                (None, _) => true,
                (Some(_), Some(last)) => h.id > last,
                (Some(_), None) => false,
            };
            if h.call.drops >= 2 && !never_received {
                let _ = h.call.reply.send(Err(WireError::new(
                    ErrorCode::AnswerTooLarge,
                    format!("the connection to the extension dropped twice while {} ran (an answer too large for the bridge does that); it is not sent again", h.call.method),
                )));
            } else if never_received || ext_core::methods::repeatable(&h.call.method) {
                self.send(h.id, h.call, rules);
            } else {
                let _ = h.call.reply.send(Err(lost_in_flight(&h.call.method)));
            }
        }
    }

    /// Calls whose wait for the extension is over.
    fn expire_held(&mut self, now: Instant) {
        let (over, keep): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.until <= now);
        self.held = keep;
        for h in over {
            let err = if h.sent_on.is_some() && !ext_core::methods::repeatable(&h.call.method) {
                lost_in_flight(&h.call.method)
            } else {
                disconnected(&format!(
                    "the extension did not come back within {} s; retry the call",
                    RESUME_WAIT.as_secs()
                ))
            };
            let _ = h.call.reply.send(Err(err));
        }
    }

    fn answered(&mut self, conn: u64, id: CommandId, answer: Answer) {
        let call = match self.pending.remove(&id) {
            Some((owner, call)) if owner == conn => call,
            Some(other) => {
                self.pending.insert(id, other);
                return;
            }
            // The answer outran the news that its connection was replaced.
            None => match self
                .held
                .iter()
                .position(|h| h.id == id && h.sent_on == Some(conn))
            {
                Some(at) => self.held.swap_remove(at).call,
                None => return,
            },
        };
        if let Ok(data) = &answer {
            for tab in tabs_in(data).chain(call.tab_id) {
                self.saw_tab(tab);
            }
        }
        let _ = call.reply.send(answer);
    }

    fn saw_tab(&mut self, tab: TabId) {
        if self.tabs_now.len() >= 4096 {
            self.tabs_now.clear();
        }
        self.tabs_now.insert(tab);
    }

    /// Forget the calls whose caller stopped waiting, and tell their extension to stop them.
    fn sweep(&mut self) {
        self.held.retain(|h| !h.call.reply.is_closed());
        let gone: Vec<CommandId> = self
            .pending
            .iter()
            .filter(|(_, (_, call))| call.reply.is_closed())
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            if let Some((conn, _)) = self.pending.remove(&id) {
                if let Some(a) = self.active.as_ref().filter(|a| a.conn == conn) {
                    let _ = a.out.try_send(HostFrame::Cancel { id });
                }
            }
        }
    }
}

/// A call that reached a worker which then stopped: it may have run, so it is not repeated.
fn lost_in_flight(method: &str) -> WireError {
    disconnected(&format!(
        "the extension's worker stopped after it received {method}; it may or may not have run: check the page before repeating it"
    ))
}

/// The tab ids an answer names (`tab_id` of the answer, or of each element of a list).
fn tabs_in(data: &Value) -> impl Iterator<Item = TabId> + '_ {
    let one = |v: &Value| v.get("tab_id").and_then(Value::as_i64).map(|t| t as TabId);
    one(data)
        .into_iter()
        .chain(data.as_array().into_iter().flatten().filter_map(one))
}
