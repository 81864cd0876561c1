//! The WebSocket bridge to the extension. One hub task owns the authenticated connection
//! and the table of pending commands; everything else talks to it through [`BridgeHandle`].
//! Every call gets exactly one answer: the extension's, or a coded error when it times out
//! or the connection drops.

pub mod guard;
mod server;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ext_core::methods::Method;
use ext_core::protocol::{
    BrowserEvent, CommandId, ErrorCode, ExtensionInfo, HostFrame, RejectReason, TabId, WireError,
};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

pub use server::BridgeConfig;

use crate::pairing::Token;

/// Extra time the host gives a command beyond its own timeout before declaring the extension
/// unresponsive: the extension enforces the timeout itself and answers `TIMEOUT` first.
const ANSWER_GRACE: Duration = Duration::from_secs(3);
/// Commands queued towards the hub; callers wait (bounded) when it is busy.
const HUB_QUEUE: usize = 256;

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum BridgeError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("the bridge is shut down")]
    Closed,
}

impl BridgeError {
    pub fn into_wire(self) -> WireError {
        match self {
            Self::Wire(w) => w,
            Self::Closed => WireError::new(ErrorCode::NoBrowser, "kapture is shutting down"),
        }
    }
}

fn disconnected(message: &str) -> WireError {
    WireError::new(ErrorCode::ExtensionDisconnected, message)
}

/// What the bridge can say about its extension.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BridgeStatus {
    pub port: u16,
    pub extension: Option<ConnectedExtension>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnectedExtension {
    #[serde(flatten)]
    pub info: ExtensionInfo,
    pub session: String,
    pub connected_for_s: u64,
}

type Answer = Result<Value, WireError>;

enum HubMsg {
    Call {
        method: String,
        tab_id: Option<TabId>,
        params: Value,
        timeout_ms: u64,
        reply: oneshot::Sender<Answer>,
    },
    /// A connection passed `hello`; it becomes the active one.
    Attach {
        conn: u64,
        info: ExtensionInfo,
        out: mpsc::Sender<HostFrame>,
        reply: oneshot::Sender<Result<String, (RejectReason, String)>>,
    },
    Detach {
        conn: u64,
    },
    Answered {
        conn: u64,
        id: CommandId,
        answer: Answer,
    },
    Event(BrowserEvent),
    Status {
        reply: oneshot::Sender<Option<ConnectedExtension>>,
    },
    WaitConnected {
        reply: oneshot::Sender<()>,
    },
    /// Tell the extension something; dropped when nobody is connected or the socket is busy.
    Notify(HostFrame),
    /// A caller stopped waiting (its MCP request was cancelled): tell the extension to stop
    /// the commands nobody waits for.
    Sweep,
    /// The origin a tab was last reported on.
    TabOrigin {
        tab_id: TabId,
        reply: oneshot::Sender<Option<String>>,
    },
}

struct Active {
    conn: u64,
    info: ExtensionInfo,
    session: String,
    since: Instant,
    out: mpsc::Sender<HostFrame>,
}

/// Clonable handle to the bridge.
#[derive(Clone)]
pub struct BridgeHandle {
    hub: mpsc::Sender<HubMsg>,
    events: broadcast::Sender<BrowserEvent>,
    port: u16,
    /// Extra wait for an answer when the policy may make a person approve first.
    approval_grace: Duration,
}

impl BridgeHandle {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Browser events (tab closed, debugger detached) as they arrive.
    pub fn subscribe(&self) -> broadcast::Receiver<BrowserEvent> {
        self.events.subscribe()
    }

    /// Send a raw command and wait for its answer.
    pub async fn call_raw(
        &self,
        method: &str,
        tab_id: Option<TabId>,
        params: Value,
        timeout_ms: u64,
    ) -> Result<Value, BridgeError> {
        let (reply, answer) = oneshot::channel();
        let msg = HubMsg::Call {
            method: method.to_string(),
            tab_id,
            params,
            timeout_ms,
            reply,
        };
        self.hub.send(msg).await.map_err(|_| BridgeError::Closed)?;
        // Dropped before the answer (the MCP request was cancelled): the hub tells the
        // extension, so the tab's queue does not stay busy for nobody.
        struct Sweep(Option<mpsc::Sender<HubMsg>>);
        impl Drop for Sweep {
            fn drop(&mut self) {
                if let Some(hub) = self.0.take() {
                    let _ = hub.try_send(HubMsg::Sweep);
                }
            }
        }
        let mut sweep = Sweep(Some(self.hub.clone()));
        let limit = Duration::from_millis(timeout_ms) + ANSWER_GRACE + self.approval_grace;
        let answered = tokio::time::timeout(limit, answer).await;
        sweep.0 = None;
        match answered {
            Ok(Ok(answer)) => answer.map_err(BridgeError::Wire),
            Ok(Err(_)) => Err(BridgeError::Closed),
            Err(_) => Err(BridgeError::Wire(WireError::new(
                ErrorCode::Timeout,
                format!(
                    "the extension did not answer {method} within {} ms",
                    limit.as_millis()
                ),
            ))),
        }
    }

    /// Typed call: `M`'s params in, `M::Response` out.
    pub async fn call<M: Method>(
        &self,
        tab_id: Option<TabId>,
        params: &M,
    ) -> Result<M::Response, BridgeError> {
        self.call_with_timeout(tab_id, params, M::TIMEOUT_MS).await
    }

    /// Typed call with an explicit timeout.
    pub async fn call_with_timeout<M: Method>(
        &self,
        tab_id: Option<TabId>,
        params: &M,
        timeout_ms: u64,
    ) -> Result<M::Response, BridgeError> {
        let params = serde_json::to_value(params)
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
        let value = self.call_raw(M::NAME, tab_id, params, timeout_ms).await?;
        serde_json::from_value(value).map_err(|e| {
            BridgeError::Wire(WireError::new(
                ErrorCode::Internal,
                format!("unexpected answer to {}: {e}", M::NAME),
            ))
        })
    }

    /// The connected extension, if any.
    pub async fn status(&self) -> BridgeStatus {
        let (reply, rx) = oneshot::channel();
        let extension = match self.hub.send(HubMsg::Status { reply }).await {
            Ok(()) => rx.await.ok().flatten(),
            Err(_) => None,
        };
        BridgeStatus {
            port: self.port,
            extension,
        }
    }

    /// The origin `tab_id` was on after its last command, as the extension reported it.
    pub async fn tab_origin(&self, tab_id: TabId) -> Option<String> {
        let (reply, rx) = oneshot::channel();
        self.hub
            .send(HubMsg::TabOrigin { tab_id, reply })
            .await
            .ok()?;
        rx.await.ok().flatten()
    }

    /// Show a journal entry in the extension's panel; never waits (a full hub drops it).
    pub fn notify_audit(&self, entry: Value) {
        let _ = self
            .hub
            .try_send(HubMsg::Notify(HostFrame::Audit { entry }));
    }

    /// Tell the connected extension something (dropped when none is, or its socket is busy).
    pub fn notify(&self, frame: HostFrame) {
        let _ = self.hub.try_send(HubMsg::Notify(frame));
    }

    /// Wait up to `limit` for an extension to be connected; true if one is.
    pub async fn wait_connected(&self, limit: Duration) -> bool {
        let (reply, rx) = oneshot::channel();
        if self
            .hub
            .send(HubMsg::WaitConnected { reply })
            .await
            .is_err()
        {
            return false;
        }
        matches!(tokio::time::timeout(limit, rx).await, Ok(Ok(())))
    }
}

/// Start the bridge on `listener`; it stops when `shutdown` is cancelled.
pub fn start(
    listener: TcpListener,
    token: Token,
    config: BridgeConfig,
    shutdown: CancellationToken,
) -> std::io::Result<BridgeHandle> {
    let port = listener.local_addr()?.port();
    let (hub_tx, hub_rx) = mpsc::channel(HUB_QUEUE);
    let (events, _) = broadcast::channel(64);
    let handle = BridgeHandle {
        hub: hub_tx,
        events: events.clone(),
        port,
        approval_grace: config.approval_grace(),
    };
    tokio::spawn(run_hub(hub_rx, events, config.clone(), shutdown.clone()));
    tokio::spawn(server::accept_loop(
        listener,
        token,
        config,
        handle.hub.clone(),
        shutdown,
    ));
    Ok(handle)
}

/// kapture's own check of what it can judge before sending: a navigation's destination.
/// The extension judges everything again against the page as it is when the command runs.
fn precheck(
    rules: &BridgeConfig,
    info: &ExtensionInfo,
    method: &str,
    params: &Value,
) -> Result<(), WireError> {
    use ext_core::policy::{origin_of, Category, Policy, Verdict};
    if method != ext_core::methods::Navigate::NAME && method != ext_core::methods::TabsNew::NAME {
        return Ok(());
    }
    let Some(url) = params
        .get("url")
        .and_then(Value::as_str)
        .filter(|u| origin_of(u).is_some())
    else {
        return Ok(());
    };
    let decision = rules
        .policy_for(info.launched_by)
        .decide(Category::Navigate, url);
    if decision.verdict != Verdict::Deny {
        return Ok(());
    }
    let mut err = Policy::denied(Category::Navigate, url, &decision);
    err.message
        .push_str(" (refused by kapture; the command never reached the browser)");
    Err(err)
}

async fn run_hub(
    mut rx: mpsc::Receiver<HubMsg>,
    events: broadcast::Sender<BrowserEvent>,
    rules: BridgeConfig,
    shutdown: CancellationToken,
) {
    let mut active: Option<Active> = None;
    let mut pending: HashMap<CommandId, (u64, oneshot::Sender<Answer>)> = HashMap::new();
    let mut waiters: Vec<oneshot::Sender<()>> = Vec::new();
    let mut origins: HashMap<TabId, String> = HashMap::new();
    let mut next_id: CommandId = 1;
    let mut next_session: u64 = 1;
    loop {
        let msg = tokio::select! {
            msg = rx.recv() => match msg { Some(m) => m, None => break },
            () = shutdown.cancelled() => break,
        };
        match msg {
            HubMsg::Call {
                method,
                tab_id,
                params,
                timeout_ms,
                reply,
            } => {
                let Some(a) = &active else {
                    let _ = reply.send(Err(WireError::new(
                        ErrorCode::NoBrowser,
                        "no browser extension is connected to kapture",
                    )));
                    continue;
                };
                if let Err(e) = precheck(&rules, &a.info, &method, &params) {
                    let _ = reply.send(Err(e));
                    continue;
                }
                let id = next_id;
                next_id += 1;
                let frame = HostFrame::Command {
                    id,
                    tab_id,
                    method,
                    params,
                    timeout_ms,
                };
                // A full outbound queue means the socket is stuck; answer rather than wait.
                match a.out.try_send(frame) {
                    Ok(()) => {
                        sweep(&mut pending, a);
                        pending.insert(id, (a.conn, reply));
                    }
                    Err(_) => {
                        let _ = reply.send(Err(disconnected(
                            "the connection to the extension is not accepting commands",
                        )));
                    }
                }
            }
            HubMsg::Attach {
                conn,
                info,
                out,
                reply,
            } => {
                if let Some(a) = active.as_ref().filter(|a| a.info.instance != info.instance) {
                    // One browser per server: a second browser is told so, never swapped in.
                    let why = format!(
                        "this kapture already drives another browser ({}, session {}); start another kapture for this one",
                        a.info.browser, a.session
                    );
                    tracing::warn!("refused a second browser: {why}");
                    let _ = reply.send(Err((RejectReason::Busy, why)));
                    continue;
                }
                let session = format!("s{next_session}-{conn}");
                next_session += 1;
                if let Some(old) = active.take() {
                    tracing::warn!(old = %old.session, new = %session, "the browser reconnected; the new connection replaces the old one");
                    let _ = old.out.try_send(HostFrame::Unauthorized {
                        reason: RejectReason::Superseded,
                        message: "a newer connection from this browser replaced this one".into(),
                    });
                    fail_conn(
                        &mut pending,
                        old.conn,
                        "the extension reconnected; the command was not answered on the old connection",
                    );
                }
                tracing::info!(extension = %info.id, version = %info.version, %session, "extension connected");
                active = Some(Active {
                    conn,
                    info,
                    session: session.clone(),
                    since: Instant::now(),
                    out,
                });
                let _ = reply.send(Ok(session));
                for w in waiters.drain(..) {
                    let _ = w.send(());
                }
            }
            HubMsg::Detach { conn } => {
                if active.as_ref().is_some_and(|a| a.conn == conn) {
                    tracing::info!("extension disconnected");
                    active = None;
                }
                fail_conn(
                    &mut pending,
                    conn,
                    "the extension disconnected before answering; retry the call",
                );
            }
            HubMsg::Answered { conn, id, answer } => {
                if let Some((owner, reply)) = pending.remove(&id) {
                    if owner == conn {
                        let _ = reply.send(answer);
                    } else {
                        pending.insert(id, (owner, reply));
                    }
                }
            }
            HubMsg::Event(event) => {
                if let BrowserEvent::PageAt { tab_id, origin } = &event {
                    if origins.len() >= 1024 {
                        origins.clear();
                    }
                    origins.insert(*tab_id, origin.clone());
                }
                let _ = events.send(event);
            }
            HubMsg::Sweep => {
                if let Some(a) = &active {
                    sweep(&mut pending, a);
                }
            }
            HubMsg::TabOrigin { tab_id, reply } => {
                let _ = reply.send(origins.get(&tab_id).cloned());
            }
            HubMsg::Status { reply } => {
                let _ = reply.send(active.as_ref().map(|a| ConnectedExtension {
                    info: a.info.clone(),
                    session: a.session.clone(),
                    connected_for_s: a.since.elapsed().as_secs(),
                }));
            }
            HubMsg::Notify(frame) => {
                if let Some(a) = &active {
                    let _ = a.out.try_send(frame);
                }
            }
            HubMsg::WaitConnected { reply } => {
                if active.is_some() {
                    let _ = reply.send(());
                } else {
                    waiters.retain(|w| !w.is_closed());
                    waiters.push(reply);
                }
            }
        }
    }
    for (_, (_, reply)) in pending.drain() {
        let _ = reply.send(Err(disconnected("kapture is shutting down")));
    }
}

fn fail_conn(
    pending: &mut HashMap<CommandId, (u64, oneshot::Sender<Answer>)>,
    conn: u64,
    why: &str,
) {
    let ids: Vec<CommandId> = pending
        .iter()
        .filter(|(_, (c, _))| *c == conn)
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        if let Some((_, reply)) = pending.remove(&id) {
            let _ = reply.send(Err(disconnected(why)));
        }
    }
}

/// Forget the calls whose caller stopped waiting, and tell their extension to stop them.
fn sweep(pending: &mut HashMap<CommandId, (u64, oneshot::Sender<Answer>)>, active: &Active) {
    let gone: Vec<CommandId> = pending
        .iter()
        .filter(|(_, (_, tx))| tx.is_closed())
        .map(|(id, _)| *id)
        .collect();
    for id in gone {
        if let Some((conn, _)) = pending.remove(&id) {
            if conn == active.conn {
                let _ = active.out.try_send(HostFrame::Cancel { id });
            }
        }
    }
}

#[cfg(test)]
mod tests;
