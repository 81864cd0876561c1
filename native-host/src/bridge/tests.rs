//! The bridge against raw WebSocket clients on port 0: who is refused, when, and that every
//! call gets exactly one answer.

use std::time::Duration;

use ext_core::handshake;
use ext_core::protocol::{
    self, ErrorCode, ExtensionFrame, ExtensionInfo, HostFrame, RejectReason, WireError,
};
use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::pairing::Token;

const ORIGIN: &str = "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg";
type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

struct Fixture {
    handle: BridgeHandle,
    key: crate::pairing::BridgeKey,
    token: Token,
    port: u16,
    shutdown: CancellationToken,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn fixture(hello_timeout: Duration) -> Fixture {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let token = Token::generate().unwrap();
    let shutdown = CancellationToken::new();
    let mut config = BridgeConfig::new(ORIGIN.into());
    config.hello_timeout = hello_timeout;
    let key = crate::pairing::BridgeKey::new(token.clone());
    let handle = start(listener, key.clone(), config, shutdown.clone()).unwrap();
    Fixture {
        handle,
        key,
        token,
        port,
        shutdown,
    }
}

async fn dial(
    port: u16,
    origin: Option<&str>,
    hosts: &[&str],
) -> Result<Client, tokio_tungstenite::tungstenite::Error> {
    let mut req = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    let headers = req.headers_mut();
    if let Some(origin) = origin {
        headers.insert("origin", HeaderValue::from_str(origin).unwrap());
    }
    if !hosts.is_empty() {
        headers.remove("host");
        for h in hosts {
            headers.append("host", HeaderValue::from_str(h).unwrap());
        }
    }
    tokio_tungstenite::connect_async(req)
        .await
        .map(|(ws, _)| ws)
}

/// A `hello` as `who` (the extension instance, or `instance@run` with the browser run too).
fn hello_as(nonce: &str, who: &str, resume: Option<protocol::Resume>) -> Message {
    let (instance, run) = match who.split_once('@') {
        Some((i, r)) => (i, Some(r.to_string())),
        None => (who, None),
    };
    let ext = ExtensionInfo {
        id: "test".into(),
        version: "0".into(),
        browser: "test".into(),
        instance: instance.into(),
        launched_by: None,
        browser_run: run,
        transport: Default::default(),
    };
    Message::text(protocol::encode(&ExtensionFrame::Hello {
        nonce: nonce.into(),
        ext,
        resume,
    }))
}

/// What a handshake with `token` gave: whether the server's challenge proved *our* token,
/// the proof we answered, and the server's next frame.
struct Shook {
    server_proved: bool,
    proof: String,
    next: Option<HostFrame>,
}

/// Say hello as `who`, check the server's challenge against `token`, answer it with our
/// proof made from `token` (right or wrong), and read what the server says next.
async fn handshake(
    ws: &mut Client,
    port: u16,
    token: &str,
    who: &str,
    resume: Option<protocol::Resume>,
) -> Shook {
    let nonce_e = handshake::new_nonce().unwrap();
    ws.send(hello_as(&nonce_e, who, resume)).await.unwrap();
    let Some(HostFrame::Challenge { nonce, proof }) = next_frame(ws).await else {
        panic!("the server answers hello with a challenge");
    };
    let server_proved = handshake::verify_server_proof(token, port, &nonce_e, &nonce, &proof);
    let ours = handshake::extension_proof(token, port, &nonce, &nonce_e);
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Proof {
        proof: ours.clone(),
    })))
    .await
    .unwrap();
    Shook {
        server_proved,
        proof: ours,
        next: next_frame(ws).await,
    }
}

/// The next host frame, or `None` when the socket closes; bounded so a test cannot hang.
async fn next_frame(ws: &mut Client) -> Option<HostFrame> {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("bridge answered in time");
        match msg {
            Some(Ok(Message::Text(t))) => return Some(protocol::decode(&t).unwrap()),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            Some(Ok(_)) => continue,
        }
    }
}

async fn authenticated(f: &Fixture) -> Client {
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    let shook = handshake(&mut ws, f.port, f.token.expose(), "browser-1", None).await;
    assert!(shook.server_proved, "the server proved the token");
    assert!(matches!(
        shook.next,
        Some(HostFrame::Welcome {
            heartbeat_ms: 20000,
            ..
        })
    ));
    ws
}

/// Send a hand-written upgrade request with `host_lines` and return the status line.
async fn raw_upgrade(port: u16, host_lines: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let req = format!(
        "GET / HTTP/1.1\r\n{host_lines}Origin: {ORIGIN}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 256];
    let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn status_code(err: tokio_tungstenite::tungstenite::Error) -> u16 {
    match err {
        tokio_tungstenite::tungstenite::Error::Http(resp) => resp.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused_before_the_upgrade() {
    let f = fixture(Duration::from_secs(5)).await;
    for origin in [
        None,
        Some("null"),
        Some("http://evil.com"),
        Some("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
        Some(&format!("{ORIGIN}/x")),
    ] {
        let err = dial(f.port, origin, &[]).await.expect_err("refused");
        assert_eq!(status_code(err), 403, "origin {origin:?}");
    }
    let port = f.port.to_string();
    let evil = format!("evil.com:{port}");
    let rebound = format!("127.0.0.1.nip.io:{port}");
    for host in [evil.as_str(), rebound.as_str()] {
        let err = dial(f.port, Some(ORIGIN), &[host])
            .await
            .expect_err("refused");
        assert_eq!(status_code(err), 403, "host {host:?}");
    }
    // WebSocket clients will not send a repeated or missing Host: speak raw HTTP for those.
    let good = format!("Host: 127.0.0.1:{port}\r\n");
    assert!(raw_upgrade(f.port, &good).await.starts_with("HTTP/1.1 101"));
    assert!(raw_upgrade(f.port, &good.repeat(2))
        .await
        .starts_with("HTTP/1.1 403"));
    assert!(raw_upgrade(f.port, "").await.starts_with("HTTP/1.1 403"));
    let localhost = format!("localhost:{port}");
    assert!(dial(f.port, Some(ORIGIN), &[&localhost]).await.is_ok());
    assert!(f.handle.status().await.extension.is_none());
}

#[tokio::test]
async fn a_wrong_token_is_refused_and_closed() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut flipped = f.token.expose().to_string().into_bytes();
    flipped[0] ^= 1;
    for wrong in [
        String::new(),
        "x".repeat(4096),
        String::from_utf8(flipped).unwrap(),
    ] {
        let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
        let shook = handshake(&mut ws, f.port, &wrong, "stranger", None).await;
        assert!(!shook.server_proved, "our wrong token is not the server's");
        match shook.next {
            Some(HostFrame::Unauthorized { reason, .. }) => {
                assert_eq!(reason, RejectReason::BadToken)
            }
            other => panic!("expected unauthorized, got {other:?}"),
        }
        assert!(next_frame(&mut ws).await.is_none(), "closed after refusal");
    }
    assert!(f.handle.status().await.extension.is_none());
}

#[tokio::test]
async fn a_replayed_proof_or_a_frame_instead_of_the_proof_is_refused_and_nothing_dispatched() {
    let f = fixture(Duration::from_secs(5)).await;
    // A real extension's proof, recorded…
    let mut first = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    let shook = handshake(&mut first, f.port, f.token.expose(), "browser-1", None).await;
    assert!(matches!(shook.next, Some(HostFrame::Welcome { .. })));
    drop(first);
    // …and replayed by a stranger without the token: the server's new nonce defeats it.
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    ws.send(hello_as(
        &handshake::new_nonce().unwrap(),
        "browser-1",
        None,
    ))
    .await
    .unwrap();
    assert!(matches!(
        next_frame(&mut ws).await,
        Some(HostFrame::Challenge { .. })
    ));
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Proof {
        proof: shook.proof,
    })))
    .await
    .unwrap();
    assert!(matches!(
        next_frame(&mut ws).await,
        Some(HostFrame::Unauthorized {
            reason: RejectReason::BadToken,
            ..
        })
    ));
    // Answers instead of the proof, and hellos without a proper nonce.
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    ws.send(hello_as(
        &handshake::new_nonce().unwrap(),
        "browser-1",
        None,
    ))
    .await
    .unwrap();
    assert!(matches!(
        next_frame(&mut ws).await,
        Some(HostFrame::Challenge { .. })
    ));
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Result {
        id: 1,
        data: json!({"pwned": true}),
    })))
    .await
    .unwrap();
    assert!(matches!(
        next_frame(&mut ws).await,
        Some(HostFrame::Unauthorized {
            reason: RejectReason::ExpectedProof,
            ..
        })
    ));
    for nonce in ["", "short", &"A".repeat(64), &"0".repeat(4096)] {
        let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
        ws.send(hello_as(nonce, "browser-1", None)).await.unwrap();
        assert!(matches!(
            next_frame(&mut ws).await,
            Some(HostFrame::Unauthorized {
                reason: RejectReason::ExpectedHello,
                ..
            })
        ));
    }
    // The first socket is gone and none of the others got in: nothing to dispatch to.
    assert!(f.handle.status().await.extension.is_none());
}

#[tokio::test]
async fn a_socket_that_never_says_hello_is_closed_at_the_deadline() {
    let f = fixture(Duration::from_millis(300)).await;
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    assert!(next_frame(&mut ws).await.is_none());
    assert!(f.handle.status().await.extension.is_none());
}

#[tokio::test]
async fn frames_before_hello_are_refused_and_nothing_is_dispatched() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    let early = ExtensionFrame::Result {
        id: 1,
        data: json!({"pwned": true}),
    };
    ws.send(Message::text(protocol::encode(&early)))
        .await
        .unwrap();
    match next_frame(&mut ws).await {
        Some(HostFrame::Unauthorized { reason, .. }) => {
            assert_eq!(reason, RejectReason::ExpectedHello)
        }
        other => panic!("expected unauthorized, got {other:?}"),
    }
    let err = f
        .handle
        .call_raw("click", None, json!({"selector": "a"}), 1000)
        .await
        .unwrap_err();
    assert_eq!(err.into_wire().code, ErrorCode::NoBrowser);
}

#[tokio::test]
async fn another_protocol_version_is_told_who_needs_an_update() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    let future = format!(
        r#"{{"v":99,"type":"hello","nonce":"{}","ext":{{}}}}"#,
        handshake::new_nonce().unwrap()
    );
    ws.send(Message::text(future)).await.unwrap();
    match next_frame(&mut ws).await {
        Some(HostFrame::Unauthorized { reason, message }) => {
            assert_eq!(reason, RejectReason::VersionMismatch);
            assert!(
                message.contains("kapture (the server) needs an update"),
                "{message}"
            );
        }
        other => panic!("expected unauthorized, got {other:?}"),
    }
}

#[tokio::test]
async fn commands_round_trip_and_a_bad_frame_does_not_break_the_connection() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut ws = authenticated(&f).await;
    assert!(f.handle.wait_connected(Duration::from_secs(1)).await);
    let handle = f.handle.clone();
    // A call of MCP session 3: the command names it (its grants are its own).
    let call = tokio::spawn(crate::native::ask::in_session("3".into(), async move {
        handle
            .call_raw("evaluate", Some(7), json!({"function": "1+1"}), 5000)
            .await
    }));
    let Some(HostFrame::Command {
        id,
        tab_id,
        method,
        params,
        timeout_ms,
        session,
        ..
    }) = next_frame(&mut ws).await
    else {
        panic!("expected a command");
    };
    assert_eq!((tab_id, method.as_str()), (Some(7), "evaluate"));
    assert_eq!(session.as_deref(), Some("3"));
    // The time left of the caller's 5 s.
    assert!((4_500..=5_000).contains(&timeout_ms), "{timeout_ms}");
    assert_eq!(params, json!({"function": "1+1"}));
    ws.send(Message::text("{garbage")).await.unwrap();
    ws.send(Message::Binary(vec![1, 2, 3].into()))
        .await
        .unwrap();
    // An answer to a command that does not exist is ignored.
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Result {
        id: 999,
        data: json!(0),
    })))
    .await
    .unwrap();
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Result {
        id,
        data: json!({"value": 2}),
    })))
    .await
    .unwrap();
    assert_eq!(call.await.unwrap().unwrap(), json!({"value": 2}));

    let handle = f.handle.clone();
    let call = tokio::spawn(async move { handle.call_raw("click", None, json!({}), 5000).await });
    let Some(HostFrame::Command { id, .. }) = next_frame(&mut ws).await else {
        panic!("expected a command")
    };
    let error = WireError::new(ErrorCode::SelectorNotFound, "no element matches #x");
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Error {
        id,
        error: error.clone(),
    })))
    .await
    .unwrap();
    assert_eq!(call.await.unwrap().unwrap_err(), BridgeError::Wire(error));
}

/// Connect as `instance`, resuming `resume`; answers the socket, the session and whether
/// it was resumed.
async fn connect_as(
    f: &Fixture,
    instance: &str,
    resume: Option<protocol::Resume>,
) -> (Client, String, bool) {
    let mut ws = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    match handshake(&mut ws, f.port, f.token.expose(), instance, resume)
        .await
        .next
    {
        Some(HostFrame::Welcome {
            session, resumed, ..
        }) => (ws, session, resumed),
        other => panic!("expected welcome, got {other:?}"),
    }
}

/// Start `method` through the bridge; answers the pending call.
fn start_call(
    f: &Fixture,
    method: &'static str,
    tab: Option<i32>,
    timeout_ms: u64,
) -> tokio::task::JoinHandle<Result<serde_json::Value, BridgeError>> {
    let handle = f.handle.clone();
    tokio::spawn(async move { handle.call_raw(method, tab, json!({}), timeout_ms).await })
}

async fn command_id(ws: &mut Client) -> (u64, String) {
    match next_frame(ws).await {
        Some(HostFrame::Command { id, method, .. }) => (id, method),
        other => panic!("expected a command, got {other:?}"),
    }
}

/// Run `method` on `tab` through the bridge, the fake extension answering `{"tab_id": tab}`;
/// answers the method the extension was sent.
async fn served(f: &Fixture, ws: &mut Client, method: &'static str, tab: i32) -> String {
    let call = start_call(f, method, Some(tab), 5_000);
    let (id, sent) = command_id(ws).await;
    answer(ws, id, json!({ "tab_id": tab })).await;
    call.await.unwrap().unwrap();
    sent
}

async fn answer(ws: &mut Client, id: u64, data: serde_json::Value) {
    ws.send(Message::text(protocol::encode(&ExtensionFrame::Result {
        id,
        data,
    })))
    .await
    .unwrap();
}

#[tokio::test]
async fn a_resumed_worker_gets_what_it_never_received_and_nothing_twice() {
    let f = fixture(Duration::from_secs(5)).await;
    let (mut ws, session, resumed) = connect_as(&f, "b1", None).await;
    assert!(!resumed);
    let click = start_call(&f, "click", None, 30_000);
    let (click_id, _) = command_id(&mut ws).await;
    let list = start_call(&f, "tabs.list", None, 30_000);
    let (list_id, _) = command_id(&mut ws).await;
    let navigate = start_call(&f, "navigate", None, 30_000);
    let (navigate_id, _) = command_id(&mut ws).await;
    // The worker dies having received the click and the list, not the navigation.
    drop(ws);
    let generation = f.handle.generation();
    let (mut ws, again, resumed) = connect_as(
        &f,
        "b1",
        Some(protocol::Resume {
            session: session.clone(),
            last_command: list_id,
        }),
    )
    .await;
    assert!(resumed);
    assert_eq!(again, session, "the same session");
    assert_eq!(
        f.handle.generation(),
        generation,
        "the same browser session"
    );
    // The click may have run: it is not repeated but answered as lost.
    let err = tokio::time::timeout(Duration::from_secs(5), click)
        .await
        .expect("answered at the resume")
        .unwrap()
        .unwrap_err()
        .into_wire();
    assert_eq!(err.code, ErrorCode::ExtensionDisconnected);
    assert!(
        err.message.contains("may or may not have run"),
        "{}",
        err.message
    );
    // The list (harmless twice) and the navigation (never received) come again, same ids.
    let mut resent = vec![command_id(&mut ws).await, command_id(&mut ws).await];
    resent.sort();
    assert_eq!(
        resent,
        vec![
            (list_id, "tabs.list".into()),
            (navigate_id, "navigate".into())
        ]
    );
    assert!(click_id < list_id);
    answer(&mut ws, list_id, json!([])).await;
    answer(&mut ws, navigate_id, json!({"tab_id": 1})).await;
    assert_eq!(list.await.unwrap().unwrap(), json!([]));
    assert_eq!(navigate.await.unwrap().unwrap(), json!({"tab_id": 1}));
}

#[tokio::test]
async fn calls_wait_a_bounded_time_for_the_extension_to_come_back() {
    let f = fixture(Duration::from_secs(5)).await;
    let (mut ws, _, _) = connect_as(&f, "b1", None).await;
    let click = start_call(&f, "click", None, 800);
    command_id(&mut ws).await;
    drop(ws);
    // Nobody comes back: the call ends within its own timeout, as lost.
    let err = tokio::time::timeout(Duration::from_secs(5), click)
        .await
        .expect("answered within its timeout")
        .unwrap()
        .unwrap_err()
        .into_wire();
    assert_eq!(err.code, ErrorCode::ExtensionDisconnected);
    // A call made while the extension is away waits for it and then runs.
    f.handle.status().await;
    let later = start_call(&f, "snapshot", Some(3), 10_000);
    tokio::task::yield_now().await;
    let (mut ws, _, _) = connect_as(&f, "b1", None).await;
    let (id, method) = command_id(&mut ws).await;
    assert_eq!(method, "snapshot");
    answer(&mut ws, id, json!({"text": "ok"})).await;
    assert_eq!(later.await.unwrap().unwrap(), json!({"text": "ok"}));
}

#[tokio::test]
async fn a_restarted_browser_never_gets_an_old_tab_id() {
    let f = fixture(Duration::from_secs(5)).await;
    let (mut ws, session, _) = connect_as(&f, "b1", None).await;
    served(&f, &mut ws, "navigate", 5).await;
    drop(ws);
    let generation = f.handle.generation();
    // The browser restarted: another instance, its old session unknown to it.
    let (mut ws, again, resumed) = connect_as(
        &f,
        "b2",
        Some(protocol::Resume {
            session,
            last_command: 0,
        }),
    )
    .await;
    assert!(!resumed);
    assert_ne!(again, "");
    assert_eq!(f.handle.generation(), generation + 1);
    let err = f
        .handle
        .call_raw("click", Some(5), json!({}), 5_000)
        .await
        .unwrap_err()
        .into_wire();
    assert_eq!(err.code, ErrorCode::TabNotFound);
    assert!(err.message.contains("has ended"), "{}", err.message);
    // Once the new browser names tab 5 itself, it is that tab.
    let list = start_call(&f, "tabs.list", None, 5_000);
    let (id, _) = command_id(&mut ws).await;
    answer(&mut ws, id, json!([{"tab_id": 5}])).await;
    list.await.unwrap().unwrap();
    assert_eq!(served(&f, &mut ws, "click", 5).await, "click");
}

#[tokio::test]
async fn a_newer_connection_replaces_the_old_one_visibly() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut old = authenticated(&f).await;
    let mut new = authenticated(&f).await;
    match next_frame(&mut old).await {
        Some(HostFrame::Unauthorized { reason, .. }) => {
            assert_eq!(reason, RejectReason::Superseded)
        }
        other => panic!("the old connection should be told, got {other:?}"),
    }
    // browser_status says which connection was replaced, and why.
    let said = f
        .handle
        .status()
        .await
        .connection_change
        .unwrap_or_default();
    assert!(
        said.contains("replaced by a newer one from the same browser"),
        "{said}"
    );
    let handle = f.handle.clone();
    let call =
        tokio::spawn(async move { handle.call_raw("tabs.list", None, json!({}), 5000).await });
    let Some(HostFrame::Command { id, .. }) = next_frame(&mut new).await else {
        panic!("expected a command")
    };
    new.send(Message::text(protocol::encode(&ExtensionFrame::Result {
        id,
        data: json!([]),
    })))
    .await
    .unwrap();
    assert_eq!(call.await.unwrap().unwrap(), json!([]));
}

#[tokio::test]
async fn an_oversized_message_closes_only_that_connection() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut ws = authenticated(&f).await;
    let huge = "x".repeat(server::MAX_MESSAGE_BYTES + 1);
    let _ = ws.send(Message::text(huge)).await;
    assert!(next_frame(&mut ws).await.is_none(), "closed");
    let _ws = authenticated(&f).await;
    assert!(f.handle.status().await.extension.is_some());
}

#[tokio::test]
async fn a_second_browser_is_refused_while_the_first_is_connected() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut first = authenticated(&f).await;
    let mut second = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    match handshake(&mut second, f.port, f.token.expose(), "browser-2", None)
        .await
        .next
    {
        Some(HostFrame::Unauthorized { reason, message }) => {
            assert_eq!(reason, RejectReason::Busy);
            assert!(message.contains("another browser"), "{message}");
        }
        other => panic!("expected busy, got {other:?}"),
    }
    // The first browser keeps serving.
    let handle = f.handle.clone();
    let call =
        tokio::spawn(async move { handle.call_raw("tabs.list", None, json!({}), 5000).await });
    let Some(HostFrame::Command { id, .. }) = next_frame(&mut first).await else {
        panic!("expected a command")
    };
    first
        .send(Message::text(protocol::encode(&ExtensionFrame::Result {
            id,
            data: json!([]),
        })))
        .await
        .unwrap();
    assert_eq!(call.await.unwrap().unwrap(), json!([]));
}

#[tokio::test]
async fn a_reloaded_extension_keeps_its_browser_tabs() {
    let f = fixture(Duration::from_secs(5)).await;
    let (mut ws, _, _) = connect_as(&f, "ext1@run1", None).await;
    served(&f, &mut ws, "navigate", 5).await;
    drop(ws);
    let generation = f.handle.generation();
    // Reloaded: a new extension instance with no session to resume, the same browser run.
    let (mut ws, _, resumed) = connect_as(&f, "ext2@run1", None).await;
    assert!(!resumed);
    assert_eq!(f.handle.generation(), generation, "the same browser");
    assert_eq!(
        served(&f, &mut ws, "click", 5).await,
        "click",
        "tab 5 is still the browser's tab 5"
    );
    drop(ws);
    // A restarted browser: another run as well.
    let (_ws, _, _) = connect_as(&f, "ext3@run2", None).await;
    assert_eq!(f.handle.generation(), generation + 1);
}

#[tokio::test]
async fn a_call_whose_connection_drops_twice_is_not_sent_a_third_time() {
    let f = fixture(Duration::from_secs(5)).await;
    let (mut ws, session, _) = connect_as(&f, "b1", None).await;
    // A repeatable read whose answer drops the connection each time it is sent (as one
    // over the frame cap would).
    let list = start_call(&f, "network_requests", Some(1), 30_000);
    let mut sent = 0;
    let (mut id, _) = command_id(&mut ws).await;
    sent += 1;
    for _ in 0..2 {
        drop(ws);
        let resume = Some(protocol::Resume {
            session: session.clone(),
            last_command: id,
        });
        let (again, _, resumed) = connect_as(&f, "b1", resume).await;
        assert!(resumed);
        ws = again;
        if sent < 2 {
            id = command_id(&mut ws).await.0;
            sent += 1;
        }
    }
    let err = tokio::time::timeout(Duration::from_secs(5), list)
        .await
        .expect("answered, not re-sent")
        .unwrap()
        .unwrap_err()
        .into_wire();
    assert_eq!(err.code, ErrorCode::AnswerTooLarge, "{}", err.message);
    assert_eq!(sent, 2, "sent once, then once again after the first drop");
    // Nothing more comes on the socket for it.
    let more = tokio::time::timeout(Duration::from_millis(300), next_frame(&mut ws)).await;
    assert!(
        !matches!(more, Ok(Some(HostFrame::Command { .. }))),
        "{more:?}"
    );
}

#[test]
fn answers_are_capped_as_the_extension_caps_them() {
    let small = json!({"text": "hi"});
    assert_eq!(capped(Ok(small.clone())), Ok(small));
    let huge = capped(Ok(json!({"text": "x".repeat(protocol::MAX_FRAME_BYTES)})));
    assert_eq!(huge.unwrap_err().code, ErrorCode::AnswerTooLarge);
    let long = WireError::new(
        ErrorCode::Internal,
        "e".repeat(3 * protocol::MAX_ERROR_MESSAGE_CHARS),
    );
    let cut = capped(Err(long)).unwrap_err();
    assert_eq!(cut.code, ErrorCode::Internal);
    assert!(cut.message.chars().count() < protocol::MAX_ERROR_MESSAGE_CHARS + 40);
    assert!(cut.message.contains("chars)"), "{}", cut.message);
}

#[tokio::test]
async fn native_calls_take_an_in_flight_permit_and_never_show_the_endpoint_token() {
    // A port nothing listens on: the engine's connect is refused at once.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let endpoint = format!("http://user:PASS@127.0.0.1:{port}/pool?token=SECRET");
    let shutdown = CancellationToken::new();
    let handle = start_native(
        endpoint,
        false,
        BridgeConfig::new(ORIGIN.into()),
        shutdown.clone(),
    );
    // Every permit taken: the native call waits like an extension one and never starts.
    let all = handle
        .in_flight
        .clone()
        .acquire_many_owned(MAX_IN_FLIGHT as u32)
        .await
        .unwrap();
    let err = handle
        .call_raw("tabs.list", None, json!({}), 200)
        .await
        .unwrap_err()
        .into_wire();
    assert_eq!(err.code, ErrorCode::Timeout);
    assert!(err.message.contains("never started"), "{}", err.message);
    drop(all);
    let err = handle
        .call_raw("tabs.list", None, json!({}), 2_000)
        .await
        .unwrap_err()
        .into_wire();
    assert_eq!(err.code, ErrorCode::NoBrowser);
    let status = serde_json::to_string(&handle.status().await).unwrap();
    for shown in [&err.message, &status] {
        assert!(shown.contains(&format!("127.0.0.1:{port}/pool")), "{shown}");
        assert!(
            !shown.contains("SECRET") && !shown.contains("PASS"),
            "{shown}"
        );
    }
    shutdown.cancel();
}

#[tokio::test]
async fn a_rotated_token_cuts_the_connection_and_every_old_token_is_refused() {
    let f = fixture(Duration::from_secs(5)).await;
    let mut ws = authenticated(&f).await;
    let fresh = f.key.rotate().unwrap();
    assert_ne!(fresh.expose(), f.token.expose());
    f.handle.revoke().await;
    // The connection that proved the old token is told why, and closed.
    match next_frame(&mut ws).await {
        Some(HostFrame::Unauthorized { reason, message }) => {
            assert_eq!(reason, RejectReason::BadToken);
            assert!(message.contains("new bridge token"), "{message}");
        }
        other => panic!("the old connection should be told, got {other:?}"),
    }
    let said = f
        .handle
        .status()
        .await
        .connection_change
        .unwrap_or_default();
    assert!(said.contains("new bridge token (SIGHUP)"), "{said}");
    // The old token: the server no longer proves it, and a proof made with it is refused.
    let mut old = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    let shook = handshake(&mut old, f.port, f.token.expose(), "browser-1", None).await;
    assert!(!shook.server_proved);
    assert!(matches!(
        shook.next,
        Some(HostFrame::Unauthorized {
            reason: RejectReason::BadToken,
            ..
        })
    ));
    // The new one pairs, and commands flow again.
    let mut again = dial(f.port, Some(ORIGIN), &[]).await.unwrap();
    let shook = handshake(&mut again, f.port, fresh.expose(), "browser-1", None).await;
    assert!(shook.server_proved);
    assert!(matches!(shook.next, Some(HostFrame::Welcome { .. })));
    assert!(f.handle.status().await.extension.is_some());
}
