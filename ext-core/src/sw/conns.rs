//! The worker's connections to kapture servers, as state: each socket with what its server
//! proved, offered and was granted, and the few things every part of the worker does with
//! them (send to one server, read their rules and views). The bridge (`bridge.rs`) owns
//! their lifecycle; this leaf is what the rest may use without calling back into it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use wasm_bindgen::prelude::*;
use web_sys::WebSocket;

use super::App;
use crate::backoff::Backoff;
use crate::platform;
use crate::policy::{bound, Policy};
use crate::protocol::{self, CommandId, ExtensionFrame};

/// A WebSocket event callback.
pub(super) type SocketHandler = Closure<dyn FnMut(JsValue)>;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum ConnState {
    Connecting,
    Connected { session: String },
    Rejected(String),
}

/// One WebSocket to one kapture server.
pub struct Conn {
    pub(super) port: u16,
    pub(super) token: String,
    /// The pid of the server's handshake file: it launched this browser if the browser says so.
    pub(super) pid: u32,
    /// Our `hello` nonce, which the server's proof must cover.
    pub(super) nonce: RefCell<String>,
    /// The server proved the token (its `challenge` verified) and got our `proof`.
    pub(super) proven: Cell<bool>,
    /// The policy the server sent in its welcome, before any bounding.
    pub(super) offered: RefCell<Option<Rc<Policy>>>,
    /// What the offered policy loosens compared with this browser's defaults (empty when
    /// the server launched this browser), as the panel lists it.
    pub(super) looser: RefCell<Vec<String>>,
    /// A person's answer to those looser rules: accepted, kept the defaults, or not yet.
    pub(super) agreed: Cell<Option<bool>>,
    pub(super) ws: WebSocket,
    pub(super) state: RefCell<ConnState>,
    pub(super) last_seen_ms: Cell<f64>,
    pub(super) heartbeat_ms: Cell<f64>,
    /// When the state began (ms since the epoch), for the panel.
    pub(super) since: Cell<f64>,
    /// The server's policy, from its welcome (strict until then).
    pub(super) policy: RefCell<Rc<crate::policy::Policy>>,
    pub(super) approval_ms: Cell<u64>,
    /// The highest command id received in this session (what a resume reports).
    pub(super) last_command: Cell<CommandId>,
    // Kept alive as long as the socket; dropped with the connection.
    pub(super) handlers: RefCell<Vec<SocketHandler>>,
}

impl Conn {
    pub fn send(&self, frame: &ExtensionFrame) {
        if self.ws.ready_state() == WebSocket::OPEN {
            let _ = self.ws.send_with_str(&protocol::encode(frame));
        }
    }
}

/// All connections plus discovery state.
pub struct Bridge {
    pub(super) conns: RefCell<HashMap<u16, Rc<Conn>>>,
    /// Servers that refused us, by port, with the token they refused.
    pub(super) refused: RefCell<HashMap<u16, String>>,
    pub(super) backoff: RefCell<Backoff>,
    pub(super) failures: Cell<u32>,
    pub(super) discovering: Cell<bool>,
    pub(super) retry_pending: Cell<bool>,
    pub(super) problem: RefCell<Option<String>>,
    /// Ports a person disconnected from the panel: left alone until they press Connect.
    pub(super) user_off: RefCell<std::collections::BTreeMap<u16, f64>>,
    /// A person's answers to looser rule sets, by fingerprint (loaded before any connection).
    pub(super) agreements: RefCell<Option<HashMap<String, bool>>>,
    /// Each server's current session with this worker, numbered here (`epoch`): grants and
    /// labels are keyed by it, never by names a server chooses, which repeat across
    /// kaptures and restarts.
    pub(super) epochs: RefCell<HashMap<u16, Epoch>>,
    pub(super) next_epoch: Cell<u64>,
}

impl Default for Bridge {
    fn default() -> Self {
        Self {
            conns: RefCell::default(),
            refused: RefCell::default(),
            backoff: RefCell::new(Backoff::new(
                Duration::from_millis(250),
                Duration::from_secs(5),
            )),
            failures: Cell::new(0),
            discovering: Cell::new(false),
            retry_pending: Cell::new(false),
            problem: RefCell::default(),
            user_off: RefCell::default(),
            agreements: RefCell::default(),
            epochs: RefCell::default(),
            next_epoch: Cell::new(1),
        }
    }
}

impl Bridge {
    /// Send a frame to every authenticated server.
    pub fn broadcast(&self, frame: &ExtensionFrame) {
        for conn in self.conns.borrow().values() {
            if matches!(*conn.state.borrow(), ConnState::Connected { .. }) {
                conn.send(frame);
            }
        }
    }

    /// Send every authenticated server the frame `frame_for` makes of its rules.
    pub fn broadcast_each(&self, frame_for: impl Fn(&Policy) -> ExtensionFrame) {
        for conn in self.conns.borrow().values() {
            if matches!(*conn.state.borrow(), ConnState::Connected { .. }) {
                let policy = conn.policy.borrow().clone();
                conn.send(&frame_for(&policy));
            }
        }
    }

    /// Send a frame to one authenticated server (the lowest port); false when none is.
    pub fn send_to_one(&self, frame: &ExtensionFrame) -> bool {
        let conns = self.conns.borrow();
        let target = self
            .connected_ports()
            .first()
            .and_then(|p| conns.get(p).cloned());
        match target {
            Some(conn) => {
                conn.send(frame);
                true
            }
            None => false,
        }
    }

    pub(super) fn connected_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self
            .conns
            .borrow()
            .values()
            .filter(|c| matches!(*c.state.borrow(), ConnState::Connected { .. }))
            .map(|c| c.port)
            .collect();
        ports.sort_unstable();
        ports
    }

    /// Close sockets whose server has been silent for three heartbeats (a half-dead socket).
    pub fn reap_silent(&self) {
        let now = platform::now_ms();
        for conn in self.conns.borrow().values() {
            if now - conn.last_seen_ms.get() > 3.0 * conn.heartbeat_ms.get() {
                let _ = conn.ws.close_with_code_and_reason(4000, "heartbeat lost");
            }
        }
    }
}

/// A server's session with this worker: its number here, and the kapture (token) and
/// session it is of.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Epoch {
    pub(super) number: u64,
    pub(super) token: String,
    pub(super) session: String,
}

/// The servers as the panel shows them.
pub fn server_views(app: &App) -> (Vec<crate::ui::ServerView>, Option<String>) {
    let mut views: Vec<crate::ui::ServerView> = app
        .bridge
        .conns
        .borrow()
        .values()
        .map(|c| {
            let (state, detail) = match &*c.state.borrow() {
                ConnState::Connecting => ("connecting", String::new()),
                ConnState::Connected { session } => ("connected", format!("session {session}")),
                ConnState::Rejected(why) => ("refused", why.clone()),
            };
            crate::ui::ServerView {
                port: c.port,
                state: state.into(),
                detail,
                since: c.since.get(),
                looser: c.looser.borrow().clone(),
                agreed: c.agreed.get(),
                fingerprint: c
                    .offered
                    .borrow()
                    .as_ref()
                    .filter(|_| !c.looser.borrow().is_empty())
                    .map(|p| bound::fingerprint(p)),
            }
        })
        .collect();
    for (port, since) in app.bridge.user_off.borrow().iter() {
        views.push(crate::ui::ServerView {
            port: *port,
            state: "disconnected".into(),
            detail: "disconnected from the panel".into(),
            since: *since,
            looser: Vec::new(),
            agreed: None,
            fingerprint: None,
        });
    }
    views.sort_by_key(|v| v.port);
    (views, app.bridge.problem.borrow().clone())
}

/// The policies of the connected servers (as their commands run, before the person's).
pub fn server_policies(app: &App) -> Vec<crate::policy::Policy> {
    app.bridge
        .conns
        .borrow()
        .values()
        .filter(|c| matches!(*c.state.borrow(), ConnState::Connected { .. }))
        .map(|c| (*c.policy.borrow().clone()).clone())
        .collect()
}

/// Send `frame` to the connected server on `port`, if there is one.
pub fn send_to(app: &App, port: u16, frame: &ExtensionFrame) {
    if let Some(c) = app.bridge.conns.borrow().get(&port) {
        if matches!(*c.state.borrow(), ConnState::Connected { .. }) {
            c.send(frame);
        }
    }
}
