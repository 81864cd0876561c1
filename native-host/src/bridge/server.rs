//! Accepting extension connections: the upgrade-time Origin/Host check, then within the
//! `hello` deadline the mutual proof of the token (`hello` → `challenge` → `proof`, see
//! `ext_core::handshake`; the token never crosses the socket), then one task per
//! authenticated socket that moves frames between the socket and the hub and keeps the
//! heartbeat. Nothing is dispatched before the extension's proof verified.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ext_core::handshake;
use ext_core::policy::{Policy, Verdict};
use ext_core::protocol::{self, DecodeError, ExtensionFrame, HostFrame, RejectReason};
use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use super::{guard, HubMsg};
use crate::manual_pairing::PairingDoor;
use crate::pairing::{BridgeKey, Token};

/// Largest message accepted from the extension (full-page screenshots are the big ones).
pub const MAX_MESSAGE_BYTES: usize = ext_core::protocol::MAX_FRAME_BYTES;
/// Sockets that have not yet said `hello`, at most; more wait for a slot.
const MAX_UNAUTHENTICATED: usize = 64;
/// Frames queued towards one socket.
const OUT_QUEUE: usize = 128;
/// Said to a connection whose token kapture replaced (`SIGHUP`): its extension pairs again.
pub(super) const ROTATED: &str =
    "kapture made a new bridge token (SIGHUP): every old token is refused; pair again through native messaging";

/// Settings of the bridge listener.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// The only Origin accepted: `chrome-extension://<id>`.
    pub allowed_origin: String,
    /// Time allowed between TCP accept and a verified `proof`.
    pub hello_timeout: Duration,
    /// Ping interval; the extension's worker stays awake on application messages.
    pub heartbeat: Duration,
    /// The policy sent to a browser this process launched (its `hello` names our pid).
    pub launched_policy: Policy,
    /// The policy sent to any other browser: a person's own.
    pub connected_policy: Policy,
    /// How long the extension waits for a person to answer an `ask`.
    pub approval_timeout: Duration,
    /// The viewport of the headless browser this process launches, told to its extension.
    pub launched_viewport: Option<ext_core::protocol::Viewport>,
    /// The runtime folder, where `kapture pair` leaves a pairing code (`None`: no manual
    /// pairing).
    pub runtime_dir: Option<std::path::PathBuf>,
}

impl BridgeConfig {
    pub fn new(allowed_origin: String) -> Self {
        Self {
            allowed_origin,
            hello_timeout: Duration::from_secs(5),
            heartbeat: Duration::from_secs(20),
            launched_policy: Policy::launched_default(),
            connected_policy: Policy::connected_default(),
            approval_timeout: Duration::from_secs(60),
            launched_viewport: None,
            runtime_dir: None,
        }
    }

    /// How much longer than its timeout a command may take: the approval timeout when some
    /// rule may ask a person (the extension starts a command's clock after the approval).
    pub fn approval_grace(&self) -> Duration {
        let asks = |p: &Policy| p.rules.iter().any(|r| r.verdict == Verdict::Ask);
        if asks(&self.launched_policy) || asks(&self.connected_policy) {
            self.approval_timeout
        } else {
            Duration::ZERO
        }
    }

    /// The policy for the browser that said `hello`: only our own pid counts as launched.
    pub(super) fn policy_for(&self, launched_by: Option<u32>) -> Policy {
        if launched_by == Some(std::process::id()) {
            self.launched_policy.clone()
        } else {
            self.connected_policy.clone()
        }
    }
}

type Ws = WebSocketStream<TcpStream>;

pub(super) async fn accept_loop(
    listener: TcpListener,
    key: BridgeKey,
    config: BridgeConfig,
    hub: mpsc::Sender<HubMsg>,
    shutdown: CancellationToken,
) {
    let door = Arc::new(PairingDoor::new(
        config.runtime_dir.as_deref(),
        listener.local_addr().map(|a| a.port()).unwrap_or(0),
    ));
    let config = Arc::new(config);
    let preauth = Arc::new(Semaphore::new(MAX_UNAUTHENTICATED));
    let next_conn = Arc::new(AtomicU64::new(1));
    loop {
        let (stream, peer) = tokio::select! {
            res = listener.accept() => match res {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            () = shutdown.cancelled() => return,
        };
        let (key, config, hub, shutdown, door) = (
            key.clone(),
            config.clone(),
            hub.clone(),
            shutdown.clone(),
            door.clone(),
        );
        let preauth = preauth.clone();
        let conn = next_conn.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let Ok(permit) = preauth.acquire_owned().await else {
                return;
            };
            // The token current when the handshake starts; a rotation meanwhile refuses it.
            let token = key.current();
            let Some((mut ws, info, resume)) = authenticate(stream, &token, &config, &door).await
            else {
                tracing::debug!(%peer, "connection refused before authentication");
                return;
            };
            drop(permit);
            if key.current().expose() != token.expose() {
                reject(&mut ws, RejectReason::BadToken, ROTATED).await;
                return;
            }
            serve(conn, ws, info, resume, &config, hub, shutdown).await;
        });
    }
}

/// Upgrade with Origin/Host checks, then within the deadline: `hello`, our `challenge`
/// (proving we hold the token), and the extension's verified `proof`.
async fn authenticate(
    stream: TcpStream,
    token: &Token,
    config: &BridgeConfig,
    door: &PairingDoor,
) -> Option<(
    Ws,
    ext_core::protocol::ExtensionInfo,
    Option<ext_core::protocol::Resume>,
)> {
    let _ = stream.set_nodelay(true);
    let port = stream.local_addr().ok()?.port();
    let allowed = config.allowed_origin.clone();
    // The callback's signature is tungstenite's; its error type is a whole HTTP response.
    #[allow(clippy::result_large_err)]
    let check = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let values = |name: &str| -> Vec<&str> {
            req.headers()
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap_or("\u{fffd}"))
                .collect()
        };
        let verdict = guard::check_origin(&values("origin"), &allowed)
            .and_then(|()| guard::check_host(&values("host"), port));
        match verdict {
            Ok(()) => Ok(resp),
            Err(refusal) => {
                tracing::warn!(%refusal, "refused a bridge connection");
                let mut deny = ErrorResponse::new(Some("forbidden".into()));
                *deny.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::FORBIDDEN;
                Err(deny)
            }
        }
    };
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let deadline = Instant::now() + config.hello_timeout;
    let upgrade = tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(ws_config));
    let mut ws = tokio::time::timeout_at(deadline.into(), upgrade)
        .await
        .ok()?
        .ok()?;

    let first = tokio::time::timeout_at(deadline.into(), next_text(&mut ws)).await;
    let text = match first {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(_) => {
            close(&mut ws, CloseCode::Policy, "no hello in time").await;
            return None;
        }
    };
    let (nonce_e, ext, resume) = match protocol::decode::<ExtensionFrame>(&text) {
        Ok(ExtensionFrame::Hello { nonce, ext, resume }) if handshake::valid_nonce(&nonce) => {
            (nonce, ext, resume)
        }
        Ok(ExtensionFrame::Pair { nonce }) if handshake::valid_nonce(&nonce) => {
            pair(&mut ws, port, &nonce, token, door, deadline).await;
            return None;
        }
        Err(DecodeError::VersionMismatch { ours, theirs }) => {
            let message = protocol::host_version_mismatch_message(ours, theirs);
            tracing::warn!("{message}");
            reject(&mut ws, RejectReason::VersionMismatch, &message).await;
            return None;
        }
        Ok(_) | Err(DecodeError::Malformed(_)) => {
            reject(
                &mut ws,
                RejectReason::ExpectedHello,
                "the first frame must be hello with a nonce of 64 hex digits",
            )
            .await;
            return None;
        }
    };
    // Our proof first: the extension answers only a server that knows the token.
    let Ok(nonce_s) = handshake::new_nonce() else {
        tracing::warn!("no random nonce for a handshake");
        return None;
    };
    let challenge = HostFrame::Challenge {
        proof: handshake::server_proof(token.expose(), port, &nonce_e, &nonce_s),
        nonce: nonce_s.clone(),
    };
    ws.send(Message::text(protocol::encode(&challenge)))
        .await
        .ok()?;
    let second = tokio::time::timeout_at(deadline.into(), next_text(&mut ws)).await;
    let text = match second {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(_) => {
            close(&mut ws, CloseCode::Policy, "no proof in time").await;
            return None;
        }
    };
    match protocol::decode::<ExtensionFrame>(&text) {
        Ok(ExtensionFrame::Proof { proof }) => {
            if handshake::verify_extension_proof(token.expose(), port, &nonce_e, &nonce_s, &proof) {
                Some((ws, ext, resume))
            } else {
                reject(&mut ws, RejectReason::BadToken, "the extension's proof does not match this kapture server's token; the extension will rediscover servers").await;
                None
            }
        }
        _ => {
            reject(
                &mut ws,
                RejectReason::ExpectedProof,
                "the frame after challenge must be proof",
            )
            .await;
            None
        }
    }
}

/// A manual pairing (`pair` instead of `hello`): prove the pending code from `kapture pair`,
/// have the extension prove it, then send the token sealed under it and close. No session:
/// the extension connects again, with the token, like any other.
async fn pair(
    ws: &mut Ws,
    port: u16,
    nonce_e: &str,
    token: &Token,
    door: &PairingDoor,
    deadline: Instant,
) {
    let code = match door.attempt() {
        // The proofs cover the port the code names: it must be this socket's.
        Ok(code) if code.port == port => code,
        Ok(_) => {
            let why = "the pending pairing code names another port";
            return reject(ws, RejectReason::BadToken, why).await;
        }
        Err(why) => return reject(ws, RejectReason::BadToken, &why).await,
    };
    let Ok(nonce_s) = handshake::new_nonce() else {
        return;
    };
    let challenge = HostFrame::Challenge {
        proof: code.server_proof(nonce_e, &nonce_s),
        nonce: nonce_s.clone(),
    };
    if ws
        .send(Message::text(protocol::encode(&challenge)))
        .await
        .is_err()
    {
        return;
    }
    let answer = tokio::time::timeout_at(deadline.into(), next_text(ws)).await;
    let proof = match answer
        .ok()
        .flatten()
        .map(|t| protocol::decode::<ExtensionFrame>(&t))
    {
        Some(Ok(ExtensionFrame::Proof { proof })) => proof,
        _ => {
            let why = door.failed(&code);
            return reject(ws, RejectReason::BadToken, &why).await;
        }
    };
    if !code.verify_extension_proof(nonce_e, &nonce_s, &proof) {
        let why = door.failed(&code);
        tracing::warn!("a pairing attempt with a wrong code was refused");
        return reject(ws, RejectReason::BadToken, &why).await;
    }
    door.used();
    let Some(sealed) = code.seal(nonce_e, &nonce_s, token.expose()) else {
        return;
    };
    let paired = HostFrame::Paired { sealed };
    let _ = ws.send(Message::text(protocol::encode(&paired))).await;
    close(ws, CloseCode::Normal, "paired").await;
    tracing::warn!("an extension paired with a code from `kapture pair`");
}

/// The next text message; `None` when the socket ends, errs, or sends non-text data.
async fn next_text(ws: &mut Ws) -> Option<String> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => return Some(t.to_string()),
            Ok(Message::Ping(_) | Message::Pong(_)) => continue,
            _ => return None,
        }
    }
}

async fn close(ws: &mut Ws, code: CloseCode, reason: &str) {
    let frame = CloseFrame {
        code,
        reason: reason.to_string().into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(Some(frame))).await;
}

async fn reject(ws: &mut Ws, reason: RejectReason, message: &str) {
    let frame = HostFrame::Unauthorized {
        reason,
        message: message.to_string(),
    };
    let _ = ws.send(Message::text(protocol::encode(&frame))).await;
    close(ws, CloseCode::Library(4401), "unauthorized").await;
}

/// Pump frames for one authenticated connection until it ends.
async fn serve(
    conn: u64,
    mut ws: Ws,
    info: ext_core::protocol::ExtensionInfo,
    resume: Option<ext_core::protocol::Resume>,
    config: &BridgeConfig,
    hub: mpsc::Sender<HubMsg>,
    shutdown: CancellationToken,
) {
    let launched_by = info.launched_by;
    let (out_tx, mut out_rx) = mpsc::channel::<HostFrame>(OUT_QUEUE);
    let (reply, session) = oneshot::channel();
    if hub
        .send(HubMsg::Attach {
            conn,
            info,
            resume,
            out: out_tx,
            reply,
        })
        .await
        .is_err()
    {
        return;
    }
    let (session, resumed) = match session.await {
        Ok(Ok(session)) => session,
        Ok(Err((reason, message))) => return reject(&mut ws, reason, &message).await,
        Err(_) => return,
    };
    let welcome = HostFrame::Welcome {
        session,
        resumed,
        heartbeat_ms: config.heartbeat.as_millis() as u64,
        policy: config.policy_for(launched_by),
        approval_timeout_ms: config.approval_timeout.as_millis() as u64,
        viewport: config
            .launched_viewport
            .filter(|_| launched_by == Some(std::process::id())),
    };
    if ws
        .send(Message::text(protocol::encode(&welcome)))
        .await
        .is_err()
    {
        let why = "the welcome could not be sent".into();
        let _ = hub.send(HubMsg::Detach { conn, why }).await;
        return;
    }
    let mut heartbeat = tokio::time::interval(config.heartbeat);
    heartbeat.tick().await;
    let mut last_seen = Instant::now();
    let why: String = loop {
        tokio::select! {
            incoming = ws.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    last_seen = Instant::now();
                    // What the extension says and its size, to see where a tool's time goes.
                    tracing::trace!(bytes = text.len(), head = %text.get(..60).unwrap_or(&text), "from the extension");
                    match protocol::decode::<ExtensionFrame>(&text) {
                        Ok(ExtensionFrame::Result { id, data }) => {
                            let _ = hub.send(HubMsg::Answered { conn, id, answer: Ok(data) }).await;
                        }
                        Ok(ExtensionFrame::Error { id, error }) => {
                            let _ = hub.send(HubMsg::Answered { conn, id, answer: Err(error) }).await;
                        }
                        Ok(ExtensionFrame::Event { event }) => {
                            let _ = hub.send(HubMsg::Event(event)).await;
                        }
                        Ok(ExtensionFrame::Pong) => {}
                        Ok(ExtensionFrame::Hello { .. } | ExtensionFrame::Proof { .. } | ExtensionFrame::Pair { .. }) => tracing::debug!("ignoring a repeated handshake frame"),
                        // One bad frame is logged and dropped; the connection carries on.
                        Err(e) => tracing::warn!(error = %e, "dropping a malformed frame from the extension"),
                    }
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => last_seen = Instant::now(),
                Some(Ok(Message::Close(_))) | None => break "closed by the extension".into(),
                Some(Ok(_)) => tracing::warn!("dropping a binary frame from the extension"),
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "extension socket failed");
                    break "socket error".to_string();
                }
            },
            frame = out_rx.recv() => match frame {
                Some(frame) => {
                    // Replaced by a newer connection, or its token was revoked.
                    let ended = match &frame {
                        HostFrame::Unauthorized { message, .. } => Some(message.clone()),
                        _ => None,
                    };
                    if ws.send(Message::text(protocol::encode(&frame))).await.is_err() {
                        break "send failed".into();
                    }
                    if let Some(why) = ended {
                        close(&mut ws, CloseCode::Library(4401), "unauthorized").await;
                        break why;
                    }
                }
                None => break "hub gone".into(),
            },
            _ = heartbeat.tick() => {
                if last_seen.elapsed() > config.heartbeat * 3 {
                    close(&mut ws, CloseCode::Away, "heartbeat lost").await;
                    break "heartbeat lost".to_string();
                }
                if ws.send(Message::text(protocol::encode(&HostFrame::Ping))).await.is_err() {
                    break "send failed".to_string();
                }
            },
            () = shutdown.cancelled() => {
                close(&mut ws, CloseCode::Away, "kapture is shutting down").await;
                break "shutdown".to_string();
            }
        }
    };
    tracing::debug!(conn, %why, "extension connection ended");
    let _ = hub.send(HubMsg::Detach { conn, why }).await;
}
