//! The WebSocket bridge to the extension. One hub task owns the authenticated connection
//! and the table of pending commands; everything else talks to it through [`BridgeHandle`].
//! Every call gets exactly one answer: the extension's, or a coded error when it times out
//! or the connection drops.

pub mod guard;
mod hub;
pub mod select;
mod server;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use ext_core::methods::Method;
use ext_core::protocol::{
    BrowserEvent, CommandId, ErrorCode, ExtensionInfo, HostFrame, RejectReason, TabId, WireError,
};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub use server::BridgeConfig;

use crate::pairing::BridgeKey;

/// Extra time the host gives a command beyond its own timeout before declaring the extension
/// unresponsive: the extension enforces the timeout itself and answers `TIMEOUT` first.
const ANSWER_GRACE: Duration = Duration::from_secs(3);
/// Commands queued towards the hub; callers wait (bounded) when it is busy.
const HUB_QUEUE: usize = 256;
/// How long calls wait for a dropped extension to come back (a stopped service worker is
/// woken by its alarm within about 6 s) before failing with `EXTENSION_DISCONNECTED`.
const RESUME_WAIT: Duration = Duration::from_secs(10);
/// How long a call waits for the launched browser's extension to come back after its
/// connection went, before the native engine takes over: a reloaded extension is back within
/// a second or two, a stopped worker within its 6 s wake alarm, with its tabs and the
/// sessions' current tabs as they were.
const HANDOVER_GRACE: Duration = Duration::from_secs(8);
/// Commands in the extension at once; more wait here (their time counts). Below the
/// extension's per-tab queue and the socket's outbound queue, so a burst is slowed down,
/// never refused.
pub const MAX_IN_FLIGHT: usize = 64;

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
    /// The native engine's state, when commands go to it instead of an extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The native engine standing by while the extension drives (it takes over when the
    /// extension is away).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standby: Option<String>,
    /// The last changes of the extension's connection (replaced, dropped, refused, revoked)
    /// and why, newest last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_change: Option<String>,
    /// The last change of engine and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_change: Option<String>,
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
        /// The MCP session whose call it is (its grants are its own).
        session: Option<String>,
        /// How people know that session (the side panel's feed).
        label: Option<String>,
        reply: oneshot::Sender<Answer>,
    },
    /// A connection passed `hello`; it becomes the active one.
    Attach {
        conn: u64,
        info: ExtensionInfo,
        resume: Option<ext_core::protocol::Resume>,
        out: mpsc::Sender<HostFrame>,
        /// The session, and whether it is the resumed one.
        reply: oneshot::Sender<Result<(String, bool), (RejectReason, String)>>,
    },
    Detach {
        conn: u64,
        /// Why the connection ended (said in `browser_status`).
        why: String,
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
    /// The bridge token was replaced: the connection that proved the old one ends.
    Revoke,
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
    /// Counts browser sessions: it changes when a different browser (or a restarted one)
    /// connects, not when a worker resumes its session.
    generation: watch::Receiver<u64>,
    /// The same counter's sender: an engine change bumps it too (its tab ids are others).
    generation_tx: std::sync::Arc<watch::Sender<u64>>,
    /// What the hub says of the extension's connection, read by each call's selection.
    link: watch::Receiver<select::Link>,
    /// Which engine ran the last call, and what the one before handed out.
    selection: std::sync::Arc<std::sync::Mutex<select::Selection>>,
    /// Permits for commands in flight (`MAX_IN_FLIGHT`).
    in_flight: std::sync::Arc<tokio::sync::Semaphore>,
    port: u16,
    /// Extra wait for an answer when the policy may make a person approve first.
    approval_grace: Duration,
    /// The native engine, where kapture has one (`--browser cdp`, or the DevTools pipe or
    /// port of a browser it launched: set once, then). Each call picks ([`Self::engine_now`]):
    /// the launched browser's own extension while it is connected, else this engine. The
    /// one seam between the tools and an engine: everything above `call_raw` is shared.
    native: std::sync::Arc<std::sync::OnceLock<crate::native::NativeEngine>>,
}

impl BridgeHandle {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The browser session's number (see `generation`): state tied to tab ids is only good
    /// while it stays the same.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Browser events (tab closed, debugger detached) as they arrive.
    pub fn subscribe(&self) -> broadcast::Receiver<BrowserEvent> {
        self.events.subscribe()
    }

    /// The native engine when it runs the calls now (see [`Self::engine_now`]).
    pub fn native(&self) -> Option<&crate::native::NativeEngine> {
        self.engine_now()
    }

    /// The engine calls go to now: the native one (`Some`) unless the extension of the
    /// browser kapture launched is connected, or there is no native engine (`None`: the
    /// extension, over the hub).
    pub fn engine_now(&self) -> Option<&crate::native::NativeEngine> {
        let native = self.native.get()?;
        match self.link.borrow().connected {
            // A launched browser's own extension takes over; another browser's never does.
            Some(true) if native.is_launched() => None,
            _ => Some(native),
        }
    }

    /// kapture holds a native engine for this browser (it may drive it, now or later).
    pub fn has_native(&self) -> bool {
        self.native.get().is_some()
    }

    /// From now on, `engine` may drive the browser: whenever its own extension is not
    /// connected; false when an engine was set already.
    pub fn use_native(&self, engine: crate::native::NativeEngine) -> bool {
        self.native.set(engine).is_ok()
    }

    /// Choose the engine for one call; the note when it changed here (said in that call's
    /// answer), or why the call cannot go (a tab id or ref of the engine before).
    fn select(
        &self,
        method: &str,
        tab_id: Option<TabId>,
        params: &Value,
    ) -> Result<Option<&crate::native::NativeEngine>, WireError> {
        let native = self.engine_now();
        let kind = match native {
            Some(_) => select::EngineKind::Native,
            None => select::EngineKind::Extension,
        };
        let switchable = self.native.get().is_some_and(|n| n.is_launched());
        let link = self.link.borrow().clone();
        let note = self
            .selection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .enter(kind, switchable, &link, method, tab_id, params)?;
        if let Some(note) = note {
            // State tied to the old engine's tab ids (sessions' current tabs) is dropped.
            self.generation_tx.send_modify(|g| *g += 1);
            if kind == select::EngineKind::Extension {
                if let Some(engine) = self.native.get() {
                    // Its executor goes: a later take-over starts without its tabs or refs.
                    let engine = engine.clone();
                    tokio::spawn(async move { engine.stand_by().await });
                }
            }
            crate::session_log::note(|n| n.news.push(note));
        }
        Ok(native)
    }

    /// The extension drove the last call and its connection went less than
    /// [`HANDOVER_GRACE`] ago: wait (within `limit`) for it to come back before the native
    /// engine takes over.
    async fn grace(&self, limit: Duration) {
        if !self.native.get().is_some_and(|n| n.is_launched()) {
            return;
        }
        let went = {
            let link = self.link.borrow();
            match (link.connected, link.events.back()) {
                (Some(true), _) | (_, None) => return,
                (_, Some((at, _))) => *at,
            }
        };
        let last = self
            .selection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last();
        if last != Some(select::EngineKind::Extension) {
            return;
        }
        let left = HANDOVER_GRACE.saturating_sub(went.elapsed()).min(limit);
        if left.is_zero() {
            return;
        }
        let mut link = self.link.clone();
        let back = link.wait_for(|l| l.connected == Some(true));
        let _ = tokio::time::timeout(left, back).await;
    }

    /// Where a native engine sends what the browser's events say (the hub keeps the tabs'
    /// origins for the journal and fans them out).
    pub fn event_sink(&self) -> crate::native::EventSink {
        let hub = self.hub.clone();
        std::sync::Arc::new(move |event| {
            let _ = hub.try_send(HubMsg::Event(event));
        })
    }

    /// Send a raw command and wait for its answer. Both back ends go through here: the same
    /// in-flight permit and the same caps on what comes back ([`capped`]).
    pub async fn call_raw(
        &self,
        method: &str,
        tab_id: Option<TabId>,
        params: Value,
        timeout_ms: u64,
    ) -> Result<Value, BridgeError> {
        let started = Instant::now();
        // A burst waits for room here, within its own time.
        let _permit = match tokio::time::timeout(
            Duration::from_millis(timeout_ms),
            self.in_flight.clone().acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(BridgeError::Closed),
            Err(_) => {
                return Err(BridgeError::Wire(WireError::new(
                    ErrorCode::Timeout,
                    format!("{method} waited {timeout_ms} ms behind {MAX_IN_FLIGHT} calls in flight and never started"),
                )))
            }
        };
        self.grace(Duration::from_millis(timeout_ms).saturating_sub(started.elapsed()))
            .await;
        let waited = started.elapsed().as_millis() as u64;
        let left_ms = timeout_ms.saturating_sub(waited).max(1);
        let engine = self.select(method, tab_id, &params)?;
        let answer = match engine {
            Some(engine) => engine.call(method, tab_id, params, left_ms).await,
            None => {
                self.call_extension(method, tab_id, params, timeout_ms, started)
                    .await?
            }
        };
        if let Ok(data) = &answer {
            self.selection
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .answered(method, tab_id, data);
        }
        capped(answer).map_err(BridgeError::Wire)
    }

    /// A command through the hub to the extension; `timeout_ms` counts from `started`.
    async fn call_extension(
        &self,
        method: &str,
        tab_id: Option<TabId>,
        params: Value,
        timeout_ms: u64,
        started: Instant,
    ) -> Result<Answer, BridgeError> {
        let limit = Duration::from_millis(timeout_ms) + ANSWER_GRACE + self.approval_grace;
        let waited = started.elapsed().as_millis() as u64;
        let (reply, answer) = oneshot::channel();
        let msg = HubMsg::Call {
            method: method.to_string(),
            tab_id,
            params,
            timeout_ms: timeout_ms.saturating_sub(waited).max(1),
            // Read here, in the caller's task, where the tool call set it.
            session: crate::native::ask::session(),
            label: crate::native::ask::label(),
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
        let answered = tokio::time::timeout(limit.saturating_sub(started.elapsed()), answer).await;
        sweep.0 = None;
        match answered {
            Ok(Ok(answer)) => Ok(answer),
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
        let engine = match self.engine_now() {
            Some(n) => Some(n.describe().await),
            None => None,
        };
        let standby = match (self.engine_now(), self.native.get()) {
            (None, Some(n)) => Some(format!(
                "{}, standing by: it takes over while the extension is not connected",
                n.describe().await
            )),
            _ => None,
        };
        let connection_change = self.link.borrow().said();
        let engine_change = self
            .selection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .change();
        BridgeStatus {
            port: self.port,
            extension,
            engine,
            standby,
            connection_change,
            engine_change,
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

    /// The token was replaced (see [`BridgeKey::rotate`]): end the connection that proved the
    /// old one; its extension pairs again (through native messaging) and reconnects.
    pub async fn revoke(&self) {
        let _ = self.hub.send(HubMsg::Revoke).await;
    }

    /// Tell the connected extension something (dropped when none is, or its socket is busy).
    pub fn notify(&self, frame: HostFrame) {
        let _ = self.hub.try_send(HubMsg::Notify(frame));
    }

    /// Wait up to `limit` for an extension to be connected; true if one is.
    pub async fn wait_connected(&self, limit: Duration) -> bool {
        if let Some(engine) = self.native() {
            return matches!(
                tokio::time::timeout(limit, engine.ready()).await,
                Ok(Ok(()))
            );
        }
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
    key: BridgeKey,
    config: BridgeConfig,
    shutdown: CancellationToken,
) -> std::io::Result<BridgeHandle> {
    let port = listener.local_addr()?.port();
    let handle = start_hub(port, &config, shutdown.clone());
    tokio::spawn(server::accept_loop(
        listener,
        key,
        config,
        handle.hub.clone(),
        shutdown,
    ));
    Ok(handle)
}

/// A bridge whose commands go to the native engine at `endpoint` (`--browser cdp`): no
/// WebSocket server, no extension; the hub only keeps what the browser's events say (where
/// each tab is, for the journal) and fans them out. kapture did not start that browser, so
/// it is judged as a person's own (the own-browser defaults, only its default browser
/// context's pages are tabs: no incognito window, no other context) unless `throwaway` says
/// it is a pool's, a CI's or a test's, made to be driven (the launched-browser defaults,
/// every context).
pub fn start_native(
    endpoint: String,
    throwaway: bool,
    config: BridgeConfig,
    shutdown: CancellationToken,
) -> BridgeHandle {
    let handle = start_hub(0, &config, shutdown);
    // kapture did not start this browser: like an extension in a browser another process
    // launched, it is judged as a person's own unless said otherwise.
    let policy = if throwaway {
        config.launched_policy.clone()
    } else {
        config.connected_policy.clone()
    };
    // A throwaway browser is driven like a launched one: its tabs get the stated viewport
    // too; a person's own keeps its windows'.
    let engine = crate::native::NativeEngine::new(
        endpoint,
        throwaway,
        config.launched_viewport.filter(|_| throwaway),
        policy,
        config.approval_timeout.as_millis() as u64,
        handle.event_sink(),
    );
    handle.use_native(engine);
    handle
}

/// The hub task (connection, pending calls, events) and its handle; `port`: the bridge
/// server's, 0 when there is none.
fn start_hub(port: u16, config: &BridgeConfig, shutdown: CancellationToken) -> BridgeHandle {
    let (hub_tx, hub_rx) = mpsc::channel(HUB_QUEUE);
    let (events, _) = broadcast::channel(64);
    let (generation, generation_rx) = watch::channel(0);
    let generation = std::sync::Arc::new(generation);
    let (link, link_rx) = watch::channel(select::Link::default());
    let handle = BridgeHandle {
        hub: hub_tx,
        events: events.clone(),
        generation: generation_rx,
        generation_tx: generation.clone(),
        link: link_rx,
        selection: Default::default(),
        in_flight: std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT)),
        port,
        approval_grace: config.approval_grace(),
        native: Default::default(),
    };
    tokio::spawn(hub::run_hub(
        hub_rx,
        events,
        generation,
        link,
        config.clone(),
        shutdown,
    ));
    handle
}

/// The caps an answer is held to, whichever back end gave it: exactly what the extension's
/// [`ext_core::protocol::answer_frame`] lets through (an answer over the frame cap becomes
/// `ANSWER_TOO_LARGE`, an error's message is cut). The native engine's answers never travel
/// as frames, so this is where they meet the same bounds; the extension's were cut by the
/// same function before they were sent, and are checked again at no loss.
fn capped(answer: Answer) -> Answer {
    match ext_core::protocol::answer_frame(0, answer) {
        ext_core::protocol::ExtensionFrame::Result { data, .. } => Ok(data),
        ext_core::protocol::ExtensionFrame::Error { error, .. } => Err(error),
        _ => Err(WireError::new(
            ErrorCode::Internal,
            "an answer became something else than an answer",
        )),
    }
}

/// kapture's own check of what it can judge before sending: a navigation's destination,
/// the URL a download fetches. The extension judges everything again against the page as it
/// is when the command runs (back/forward on the history entry they go to).
fn precheck(
    rules: &BridgeConfig,
    info: &ExtensionInfo,
    method: &str,
    params: &Value,
) -> Result<(), WireError> {
    use ext_core::policy::{origin_of, Policy, Verdict};
    // Arguments that do not decode are refused by the extension, before anything runs.
    let Ok(command) = ext_core::methods::Command::decode(method, params.clone()) else {
        return Ok(());
    };
    let Some((category, url)) = command
        .destination()
        .filter(|(_, u)| origin_of(u).is_some())
    else {
        return Ok(());
    };
    let decision = rules.policy_for(info.launched_by).decide(category, url);
    if decision.verdict != Verdict::Deny {
        return Ok(());
    }
    let mut err = Policy::denied(category, url, &decision);
    err.message
        .push_str(" (refused by kapture; the command never reached the browser)");
    Err(err)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod precheck_tests {
    use super::*;
    use ext_core::policy::{Policy, Verdict};

    #[test]
    fn navigations_and_downloads_to_a_denied_origin_never_reach_the_browser() {
        let mut rules = BridgeConfig::new("chrome-extension://x".into());
        let mut p = Policy::allow_all();
        p.rules
            .push(Policy::flag_rule("b.test", Verdict::Deny, "--deny").unwrap());
        rules.connected_policy = p;
        let info = ExtensionInfo {
            id: "x".into(),
            version: "0".into(),
            browser: "test".into(),
            instance: "i".into(),
            launched_by: None,
            browser_run: None,
            transport: Default::default(),
        };
        let to = |m: &str, url: &str| precheck(&rules, &info, m, &serde_json::json!({"url": url}));
        for m in ["navigate", "tabs.new", "download"] {
            let err = to(m, "http://b.test/x").unwrap_err();
            assert_eq!(err.code, ErrorCode::PolicyDenied, "{m}");
            assert!(to(m, "http://a.test/x").is_ok(), "{m}");
        }
        // Where a click lands is judged in the extension, on the page.
        assert!(to("click", "http://b.test/x").is_ok());
    }
}
