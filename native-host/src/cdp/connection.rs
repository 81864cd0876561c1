//! One CDP connection to a browser. An owner task holds the socket, the calls waiting for
//! their answers and the flat sessions' routes; [`Browser`] is its cloneable handle.
//!
//! Every call gets exactly one answer: the browser's (a CDP error classified by ext-core's
//! `cdp::failure`, the table the extension uses), or a coded error when its session ends,
//! the browser goes away, or it outlives [`COMMAND_LIMIT`]. A page session's answers travel
//! on its route behind the events that came before them on the socket, so a caller sees
//! the page state those events made.
//!
//! What carries the messages is a [`Transport`]: a WebSocket ([`Browser::connect`]) or the
//! DevTools pipe of a browser kapture launched (`super::pipe`); the owner is the same.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::time::{Duration, Instant};

use ext_core::protocol::{ErrorCode, WireError};
use futures::stream::BoxStream;
use futures::{Sink, SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use super::{browser_gone, endpoint, CdpError};

/// Longest any one CDP command may wait for its answer: above every tool's own timeout
/// (those are enforced by the caller), so only a browser that stopped answering hits it.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(300);
/// Calls queued towards the owner task; callers wait when it is busy.
const CALL_QUEUE: usize = 256;
/// Events and answers queued per page session before the owner waits for its reader.
const ROUTE_DEPTH: usize = 1024;
/// How long the owner waits for a page's reader to make room before it drops that route.
const ROUTE_STALL: Duration = Duration::from_secs(5);
/// How long connecting (endpoint lookup, then the WebSocket handshake) may take.
const CONNECT_LIMIT: Duration = Duration::from_secs(15);
/// How long writing one message may take before the connection counts as dead.
const WRITE_LIMIT: Duration = Duration::from_secs(10);
/// With calls waiting and nothing heard for this long, the browser is asked whether it lives.
const PROBE_AFTER: Duration = Duration::from_secs(10);
/// How long that question may go unanswered before the connection counts as dead.
const PROBE_LIMIT: Duration = Duration::from_secs(10);
/// How often the owner looks at deadlines.
const TICK: Duration = Duration::from_secs(1);
/// Browser-level events kept for a slow subscriber before it misses the oldest.
const BROWSER_EVENTS: usize = 256;
/// Sessions remembered as ended (their late calls answered at once), at most.
const GONE_MEMORY: usize = 4096;
/// The largest message accepted from the browser (full-page screenshots, big pages' HTML).
/// Well above the 12 MiB an answer may carry (a bigger screenshot is `ANSWER_TOO_LARGE`
/// either way), well below what a hostile endpoint could make kapture parse into GBs.
pub(super) const MAX_MESSAGE: usize = 64 << 20;
/// Auto-attached child sessions (frames, workers) one connection keeps at most; a hostile
/// or runaway page beyond it gets its new children detached, not remembered.
pub(super) const MAX_CHILDREN: usize = 1024;

type Answer = Result<Value, WireError>;
type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// What the owner reads off a transport: one CDP message, or a sign of life carrying none
/// (a WebSocket ping).
pub enum Frame {
    Text(Utf8Bytes),
    Alive,
}

/// One CDP message stream and its sink, whatever carries them. The stream ends (or fails)
/// when the browser went away; the owner closes the sink when every handle is dropped.
pub struct Transport {
    pub incoming: BoxStream<'static, Result<Frame, String>>,
    pub outgoing: Pin<Box<dyn Sink<String, Error = String> + Send>>,
}

impl Transport {
    /// A WebSocket to the browser's DevTools endpoint.
    fn websocket(ws: Ws) -> Transport {
        let (sink, stream) = ws.split();
        let incoming = stream
            .map(|m| match m {
                Ok(Message::Text(text)) => Ok(Frame::Text(text)),
                Ok(Message::Close(_)) => Err("the browser closed the connection".to_string()),
                Ok(_) => Ok(Frame::Alive),
                Err(e) => Err(e.to_string()),
            })
            .boxed();
        let outgoing = sink
            .with(|text: String| futures::future::ready(Ok(Message::text(text))))
            .sink_map_err(|e: tokio_tungstenite::tungstenite::Error| e.to_string());
        Transport {
            incoming,
            outgoing: Box::pin(outgoing),
        }
    }
}

/// One CDP event: the session it came on (`None`: the browser's own), its method and params.
#[derive(Debug, Clone)]
pub struct Event {
    pub session: Option<String>,
    pub method: String,
    pub params: Value,
}

/// What a page session's route carries, in socket order: its events (those of its child
/// sessions too) and the answers to its calls, which the reader hands over in turn.
#[derive(Debug)]
pub enum Routed {
    Event(Event),
    Answer(oneshot::Sender<Answer>, Answer),
}

impl Routed {
    /// Hand an answer to its caller (events are the reader's).
    pub fn deliver(self) -> Option<Event> {
        match self {
            Routed::Event(e) => Some(e),
            Routed::Answer(reply, answer) => {
                let _ = reply.send(answer);
                None
            }
        }
    }
}

/// A page target attached with a flat session.
#[derive(Debug)]
pub struct Attached {
    pub session: String,
    /// Ends when the session does (target closed or detached, browser gone).
    pub route: mpsc::Receiver<Routed>,
}

/// A target as `Target.getTargets` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    pub target_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub attached: bool,
    /// The browser context (profile, incognito session) the target lives in.
    #[serde(default)]
    pub browser_context_id: Option<String>,
}

enum Msg {
    Call {
        session: Option<String>,
        method: String,
        params: Value,
        reply: oneshot::Sender<Answer>,
    },
    Attach {
        target_id: String,
        reply: oneshot::Sender<Result<Attached, WireError>>,
    },
}

/// The handle of one browser connection; cheap to clone, usable from any thread.
#[derive(Clone, Debug)]
pub struct Browser {
    calls: mpsc::Sender<Msg>,
    browser_events: broadcast::Sender<Event>,
}

impl Browser {
    /// Connect to `endpoint` (`http://host:port` or `ws://…`); the owner task runs on the
    /// current tokio runtime until every handle is dropped or the browser goes away.
    pub async fn connect(endpoint: &str) -> Result<Browser, CdpError> {
        let connect = async {
            let url = endpoint::websocket_url(endpoint).await?;
            let config = WebSocketConfig::default()
                .max_message_size(Some(MAX_MESSAGE))
                .max_frame_size(Some(MAX_MESSAGE));
            // wss:// over kapture's own TLS configuration (system roots, ring).
            let tls = match url.scheme() {
                "wss" => Some(tokio_tungstenite::Connector::Rustls(
                    super::tls::client_config().map_err(|why| CdpError::Unreachable {
                        endpoint: endpoint::shown(endpoint),
                        why,
                    })?,
                )),
                _ => None,
            };
            tokio_tungstenite::connect_async_tls_with_config(url.as_str(), Some(config), true, tls)
                .await
                .map(|(ws, _)| ws)
                .map_err(|e| CdpError::Unreachable {
                    endpoint: endpoint::shown(endpoint),
                    // Some handshake errors name the URL: its token stays out.
                    why: e
                        .to_string()
                        .replace(url.as_str(), &endpoint::shown(url.as_str())),
                })
        };
        let ws = tokio::time::timeout(CONNECT_LIMIT, connect)
            .await
            .map_err(|_| CdpError::Unreachable {
                endpoint: endpoint::shown(endpoint),
                why: format!("no connection within {CONNECT_LIMIT:?}"),
            })??;
        Ok(Browser::over(Transport::websocket(ws)))
    }

    /// A connection over `transport` (already open); the owner task runs on the current
    /// tokio runtime until every handle is dropped or the browser goes away.
    pub fn over(transport: Transport) -> Browser {
        let (tx, rx) = mpsc::channel(CALL_QUEUE);
        let (browser_events, _) = broadcast::channel(BROWSER_EVENTS);
        tokio::spawn(Owner::new(transport, browser_events.clone()).run(rx));
        Browser {
            calls: tx,
            browser_events,
        }
    }

    /// The browser session's own events from now on (`Target.targetCreated`… once
    /// `Target.setDiscoverTargets` is on); a subscriber that falls behind misses the oldest.
    pub fn browser_events(&self) -> broadcast::Receiver<Event> {
        self.browser_events.subscribe()
    }

    /// Whether the connection is gone (every later call fails with `NO_BROWSER`).
    pub fn is_closed(&self) -> bool {
        self.calls.is_closed()
    }

    /// Resolves once the connection is gone.
    pub async fn closed(&self) {
        self.calls.closed().await;
    }

    /// Send one CDP command (to `session`, or the browser itself for `None`) and await its
    /// answer, bounded by [`COMMAND_LIMIT`].
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Answer {
        let (reply, answer) = oneshot::channel();
        let msg = Msg::Call {
            session: session.map(str::to_string),
            method: method.to_string(),
            params,
            reply,
        };
        self.calls.send(msg).await.map_err(|_| browser_gone())?;
        // The owner answers every call within the limit; the margin only guards that.
        match tokio::time::timeout(COMMAND_LIMIT + TICK * 5, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) if self.is_closed() => Err(browser_gone()),
            // The route that carried the answer was dropped: its session ended.
            Ok(Err(_)) => Err(session_ended()),
            Err(_) => Err(timed_out(method)),
        }
    }

    /// Attach to a target with a flat session; its events and answers come on the route.
    pub async fn attach(&self, target_id: &str) -> Result<Attached, WireError> {
        let (reply, answer) = oneshot::channel();
        let msg = Msg::Attach {
            target_id: target_id.to_string(),
            reply,
        };
        self.calls.send(msg).await.map_err(|_| browser_gone())?;
        match tokio::time::timeout(COMMAND_LIMIT + TICK * 5, answer).await {
            Ok(Ok(attached)) => attached,
            Ok(Err(_)) => Err(browser_gone()),
            Err(_) => Err(timed_out("Target.attachToTarget")),
        }
    }

    /// The browser's targets of type `page` (tabs), in the browser's order.
    pub async fn pages(&self) -> Result<Vec<TargetInfo>, WireError> {
        let res = self.call(None, "Target.getTargets", json!({})).await?;
        let all: Vec<TargetInfo> =
            serde_json::from_value(res.get("targetInfos").cloned().unwrap_or(Value::Null))
                .map_err(|e| {
                    WireError::new(ErrorCode::Internal, format!("Target.getTargets: {e}"))
                })?;
        Ok(all.into_iter().filter(|t| t.kind == "page").collect())
    }

    /// Open a new page target showing `url`; answers its target id.
    /// A new page at `url`, in `context` when given (else the default context).
    pub async fn create_page(&self, url: &str, context: Option<&str>) -> Result<String, WireError> {
        let mut params = json!({"url": url});
        if let Some(context) = context {
            params["browserContextId"] = json!(context);
        }
        let res = self.call(None, "Target.createTarget", params).await?;
        res.get("targetId")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| WireError::new(ErrorCode::Internal, "Target.createTarget: no targetId"))
    }

    /// Close a target (a tab); its session's calls then fail with `TAB_CLOSED`.
    pub async fn close_target(&self, target_id: &str) -> Result<(), WireError> {
        self.call(None, "Target.closeTarget", json!({"targetId": target_id}))
            .await
            .map(drop)
    }

    /// Let go of a flat session (the target lives on).
    pub async fn detach(&self, session: &str) -> Result<(), WireError> {
        self.call(
            None,
            "Target.detachFromTarget",
            json!({"sessionId": session}),
        )
        .await
        .map(drop)
    }
}

fn session_ended() -> WireError {
    ext_core::cdp::failure("Target closed")
}

fn timed_out(method: &str) -> WireError {
    WireError::new(
        ErrorCode::Timeout,
        format!(
            "the browser did not answer {method} within {}s",
            COMMAND_LIMIT.as_secs()
        ),
    )
}

/// What a sent command is waiting for.
enum Waiting {
    Call(oneshot::Sender<Answer>),
    Attach(oneshot::Sender<Result<Attached, WireError>>),
    /// The owner's own "are you there" question.
    Probe,
    /// A command of the owner's own whose answer nobody needs (detaching a child refused).
    Nobody,
}

struct Pending {
    session: Option<String>,
    method: String,
    sent: Instant,
    waiting: Waiting,
}

/// The flat sessions with a route: page sessions, and the child sessions (out-of-process
/// frames, workers) Chrome auto-attached under them, nested ones included.
#[derive(Default)]
struct Sessions {
    pages: HashMap<String, mpsc::Sender<Routed>>,
    /// Child session → the page session it belongs to.
    children: HashMap<String, String>,
    /// Sessions that ended, with what their late calls are told.
    gone: HashMap<String, WireError>,
}

impl Sessions {
    /// The page session `session` belongs to (itself for a page session).
    fn page_of(&self, session: &str) -> Option<&str> {
        if let Some((page, _)) = self.pages.get_key_value(session) {
            return Some(page);
        }
        self.children.get(session).map(String::as_str)
    }

    fn remember_gone(&mut self, session: String, why: WireError) {
        if self.gone.len() >= GONE_MEMORY {
            self.gone.clear();
        }
        self.gone.insert(session, why);
    }

    /// A page session ended: it and its children are gone; answers the ended sessions.
    fn end_page(&mut self, page: &str) -> HashSet<String> {
        let mut ended: HashSet<String> = self
            .children
            .iter()
            .filter(|(_, p)| p.as_str() == page)
            .map(|(c, _)| c.clone())
            .collect();
        for child in &ended {
            self.children.remove(child);
            self.remember_gone(child.clone(), session_ended());
        }
        self.pages.remove(page);
        self.remember_gone(page.to_string(), session_ended());
        ended.insert(page.to_string());
        ended
    }

    /// A child session ended (its frame went away or back into the page's process).
    fn end_child(&mut self, child: &str) -> bool {
        let known = self.children.remove(child).is_some();
        if known {
            self.remember_gone(child.to_string(), frame_gone());
        }
        known
    }
}

fn frame_gone() -> WireError {
    ext_core::cdp::failure("No frame for given id found")
}

/// An incoming message: an answer (`id`) or an event (`method`).
#[derive(Deserialize)]
struct Incoming {
    id: Option<u64>,
    method: Option<String>,
    #[serde(default)]
    params: Value,
    result: Option<Value>,
    error: Option<Value>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// Why the owner stopped.
enum End {
    /// Every handle was dropped.
    Released,
    /// The browser went away (socket closed, failed, or silent).
    Lost(String),
}

struct Owner {
    transport: Transport,
    next_id: u64,
    pending: HashMap<u64, Pending>,
    sessions: Sessions,
    last_heard: Instant,
    browser_events: broadcast::Sender<Event>,
}

impl Owner {
    fn new(transport: Transport, browser_events: broadcast::Sender<Event>) -> Self {
        Owner {
            transport,
            browser_events,
            next_id: 0,
            pending: HashMap::new(),
            sessions: Sessions::default(),
            last_heard: Instant::now(),
        }
    }

    async fn run(mut self, mut calls: mpsc::Receiver<Msg>) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let end = loop {
            let step = tokio::select! {
                frame = self.transport.incoming.next() => match frame {
                    Some(Ok(Frame::Text(text))) => {
                        self.last_heard = Instant::now();
                        self.on_text(text.as_str()).await;
                        Ok(())
                    }
                    Some(Ok(Frame::Alive)) => {
                        self.last_heard = Instant::now();
                        Ok(())
                    }
                    None => Err(End::Lost("the browser closed the connection".into())),
                    Some(Err(e)) => Err(End::Lost(e)),
                },
                msg = calls.recv() => match msg {
                    Some(msg) => self.on_msg(msg).await,
                    None => Err(End::Released),
                },
                _ = tick.tick() => self.on_tick().await,
            };
            if let Err(end) = step {
                break end;
            }
        };
        // No call may hang: everything still waiting is answered now.
        calls.close();
        let why = browser_gone();
        for (_, p) in self.pending.drain() {
            fail(p.waiting, why.clone());
        }
        while let Ok(msg) = calls.try_recv() {
            match msg {
                Msg::Call { reply, .. } => drop(reply.send(Err(why.clone()))),
                Msg::Attach { reply, .. } => drop(reply.send(Err(why.clone()))),
            }
        }
        match end {
            End::Released => {
                let _ = tokio::time::timeout(WRITE_LIMIT, self.transport.outgoing.close()).await;
            }
            End::Lost(how) => tracing::warn!(%how, "the browser's DevTools connection is gone"),
        }
    }

    async fn on_msg(&mut self, msg: Msg) -> Result<(), End> {
        match msg {
            Msg::Call {
                session,
                method,
                params,
                reply,
            } => {
                if let Some(why) = session.as_ref().and_then(|s| self.sessions.gone.get(s)) {
                    let _ = reply.send(Err(why.clone()));
                    return Ok(());
                }
                self.send(session, method, params, Waiting::Call(reply))
                    .await
            }
            Msg::Attach { target_id, reply } => {
                let params = json!({"targetId": target_id, "flatten": true});
                self.send(
                    None,
                    "Target.attachToTarget".into(),
                    params,
                    Waiting::Attach(reply),
                )
                .await
            }
        }
    }

    async fn send(
        &mut self,
        session: Option<String>,
        method: String,
        params: Value,
        waiting: Waiting,
    ) -> Result<(), End> {
        self.next_id += 1;
        let id = self.next_id;
        let mut frame = json!({"id": id, "method": method, "params": params});
        if let Some(s) = &session {
            frame["sessionId"] = json!(s);
        }
        self.pending.insert(
            id,
            Pending {
                session,
                method,
                sent: Instant::now(),
                waiting,
            },
        );
        match tokio::time::timeout(WRITE_LIMIT, self.transport.outgoing.send(frame.to_string()))
            .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(End::Lost(e)),
            Err(_) => Err(End::Lost("the browser stopped reading".into())),
        }
    }

    async fn on_text(&mut self, text: &str) {
        let Ok(msg) = serde_json::from_str::<Incoming>(text) else {
            tracing::debug!("a CDP message that is not JSON was skipped");
            return;
        };
        if let Some(id) = msg.id {
            let Some(p) = self.pending.remove(&id) else {
                return;
            };
            let result = match msg.error {
                Some(err) => Err(ext_core::cdp::failure(&err.to_string())),
                None => Ok(msg.result.unwrap_or_else(|| json!({}))),
            };
            self.on_answer(p, result).await;
        } else if let Some(method) = msg.method {
            let event = Event {
                session: msg.session_id,
                method,
                params: msg.params,
            };
            self.on_event(event).await;
        }
    }

    async fn on_answer(&mut self, p: Pending, result: Answer) {
        match p.waiting {
            Waiting::Attach(reply) => {
                let attached = result.and_then(|v| {
                    v.get("sessionId")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| {
                            WireError::new(
                                ErrorCode::Internal,
                                "Target.attachToTarget: no sessionId",
                            )
                        })
                });
                let attached = attached.map(|session| {
                    // Registered before any later message is read: none of its events is lost.
                    let (tx, route) = mpsc::channel(ROUTE_DEPTH);
                    self.sessions.pages.insert(session.clone(), tx);
                    Attached { session, route }
                });
                if let Err(Ok(Attached { session, .. })) = reply.send(attached) {
                    // Nobody waits for it any more: let it go.
                    self.sessions.end_page(&session);
                }
            }
            Waiting::Call(reply) => {
                let page = p
                    .session
                    .as_deref()
                    .and_then(|s| self.sessions.page_of(s))
                    .map(str::to_string);
                match page {
                    // Behind the events that came before it.
                    Some(page) => self.route(&page, Routed::Answer(reply, result)).await,
                    None => drop(reply.send(result)),
                }
            }
            Waiting::Probe | Waiting::Nobody => {}
        }
    }

    async fn on_event(&mut self, event: Event) {
        let Some(on) = event.session.clone() else {
            // The browser's own session: a page session ending matters here; all of it
            // goes to whoever listens (nobody may: that is no error).
            if event.method == "Target.detachedFromTarget" {
                if let Some(s) = event.params.get("sessionId").and_then(Value::as_str) {
                    if self.sessions.pages.contains_key(s) {
                        let page = s.to_string();
                        self.end_page(&page);
                    }
                }
            }
            let _ = self.browser_events.send(event);
            return;
        };
        let Some(page) = self.sessions.page_of(&on).map(str::to_string) else {
            return;
        };
        let child = event
            .params
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let method = event.method.clone();
        if let (Some(child), "Target.attachedToTarget") = (&child, method.as_str()) {
            if self.sessions.children.len() >= MAX_CHILDREN
                && !self.sessions.children.contains_key(child)
            {
                // Over the bound: let the child go (detaching also resumes it if it waits
                // for a debugger) and say nothing of it to the page. A socket that broke
                // meanwhile is found by the reader.
                tracing::warn!(
                    children = MAX_CHILDREN,
                    "too many child sessions on one DevTools connection; a new one is detached"
                );
                let params = json!({ "sessionId": child });
                let _ = self
                    .send(
                        Some(on),
                        "Target.detachFromTarget".into(),
                        params,
                        Waiting::Nobody,
                    )
                    .await;
                return;
            }
            // Auto-attached under this page (or under one of its children): its events and
            // answers go to the same page.
            self.sessions.children.insert(child.clone(), page.clone());
        }
        self.route(&page, Routed::Event(event)).await;
        if let (Some(child), "Target.detachedFromTarget") = (&child, method.as_str()) {
            if self.sessions.end_child(child) {
                self.fail_session(child, frame_gone);
            }
        }
    }

    /// A page session ended: its calls and its children's fail, its route closes.
    fn end_page(&mut self, page: &str) {
        for s in self.sessions.end_page(page) {
            self.fail_session(&s, session_ended);
        }
    }

    fn fail_session(&mut self, session: &str, why: fn() -> WireError) {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.session.as_deref() == Some(session))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(p) = self.pending.remove(&id) {
                fail(p.waiting, why());
            }
        }
    }

    /// Hand `item` to `page`'s reader. A reader that does not make room within
    /// [`ROUTE_STALL`] (or is gone) loses its route: its page counts as ended.
    async fn route(&mut self, page: &str, item: Routed) {
        let Some(tx) = self.sessions.pages.get(page).cloned() else {
            let _ = item.deliver();
            return;
        };
        let item = match tx.try_send(item) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Closed(item)) => Some(item),
            Err(mpsc::error::TrySendError::Full(item)) => {
                match tokio::time::timeout(ROUTE_STALL, tx.send(item)).await {
                    Ok(Ok(())) => return,
                    Ok(Err(mpsc::error::SendError(item))) => Some(item),
                    Err(_) => {
                        tracing::warn!(
                            page,
                            "a page session's reader stalled; its route is dropped"
                        );
                        None
                    }
                }
            }
        };
        if let Some(item) = item {
            let _ = item.deliver();
        }
        self.end_page(page);
    }

    async fn on_tick(&mut self) -> Result<(), End> {
        let now = Instant::now();
        let late: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| now.duration_since(p.sent) > COMMAND_LIMIT)
            .map(|(id, _)| *id)
            .collect();
        for id in late {
            if let Some(p) = self.pending.remove(&id) {
                let method = p.method.clone();
                fail(p.waiting, timed_out(&method));
            }
        }
        // A browser that vanished without closing the socket (a remote host gone) is found
        // by asking it something while calls wait on it.
        let probing = self
            .pending
            .values()
            .find(|p| matches!(p.waiting, Waiting::Probe));
        match probing {
            Some(p) if now.duration_since(p.sent) > PROBE_LIMIT => {
                return Err(End::Lost(format!(
                    "the browser answered nothing for {}s",
                    (PROBE_AFTER + PROBE_LIMIT).as_secs()
                )));
            }
            Some(_) => {}
            None if !self.pending.is_empty()
                && now.duration_since(self.last_heard) > PROBE_AFTER =>
            {
                self.send(None, "Browser.getVersion".into(), json!({}), Waiting::Probe)
                    .await?;
            }
            None => {}
        }
        Ok(())
    }
}

/// Answer a waiting command with a failure.
fn fail(waiting: Waiting, why: WireError) {
    match waiting {
        Waiting::Call(reply) => drop(reply.send(Err(why))),
        Waiting::Attach(reply) => drop(reply.send(Err(why))),
        Waiting::Probe | Waiting::Nobody => {}
    }
}

#[cfg(test)]
mod tests;
