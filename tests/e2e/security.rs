//! The bridge against strangers, with the real server and its real extension connected:
//! foreign Origin, wrong Host, a proof made without the token, silence, frames before
//! `hello` or instead of the `proof` are all refused,
//! the real extension keeps its session, and the token never shows up anywhere. Floods,
//! garbage, wrong-length tokens, oversized frames and a page's forged messages change nothing.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use kapture_e2e::{children_of, eventually, Kapture, Start};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use www_test_pages::Site;

const ORIGIN: &str = "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg";

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn dial(port: u64, origin: &str, host: Option<&str>) -> Result<Ws, WsError> {
    let mut req = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("origin", HeaderValue::from_str(origin).unwrap());
    if let Some(host) = host {
        req.headers_mut()
            .insert("host", HeaderValue::from_str(host).unwrap());
    }
    tokio_tungstenite::connect_async(req)
        .await
        .map(|(ws, _)| ws)
}

/// Everything the server sends until it closes, bounded in time.
async fn drain(ws: &mut Ws) -> Vec<Value> {
    let mut frames = Vec::new();
    while let Ok(Some(Ok(msg))) = tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
        match msg {
            Message::Text(t) => frames.push(serde_json::from_str(&t).unwrap()),
            Message::Close(_) => break,
            _ => {}
        }
    }
    frames
}

fn forbidden(res: Result<Ws, WsError>) -> bool {
    matches!(res, Err(WsError::Http(resp)) if resp.status() == 403)
}

fn session_of(status: &str) -> String {
    status
        .split("(session ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_are_refused_and_the_real_extension_is_undisturbed() {
    let k = Kapture::launch().await;
    k.ok("browser_tabs", json!({"action": "list"})).await;
    let before = session_of(&k.ok("browser_status", json!({})).await);
    assert!(!before.is_empty());
    let hs = &k.handshakes()[0];
    let (port, token) = (
        hs["port"].as_u64().unwrap(),
        hs["token"].as_str().unwrap().to_string(),
    );

    assert!(
        forbidden(dial(port, "http://evil.test", None).await),
        "a web page's Origin"
    );
    assert!(
        forbidden(
            dial(
                port,
                "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                None
            )
            .await
        ),
        "another extension"
    );
    assert!(
        forbidden(dial(port, ORIGIN, Some(&format!("evil.test:{port}"))).await),
        "a rebinding Host"
    );

    let v = hs["v"].as_u64().unwrap();
    let hello = |nonce: &str| {
        Message::text(json!({"v": v, "type": "hello", "nonce": nonce, "ext": {"id": "x", "version": "0", "browser": "x", "instance": "stranger"}}).to_string())
    };
    // A stranger without the token: the server proves itself first, then refuses the
    // stranger's made-up proof (and the token itself is never asked for nor sent).
    let mut wrong = dial(port, ORIGIN, None).await.unwrap();
    wrong.send(hello(&"ab".repeat(32))).await.unwrap();
    let challenge: Value = match wrong.next().await {
        Some(Ok(Message::Text(t))) => serde_json::from_str(&t).unwrap(),
        other => panic!("expected the challenge, got {other:?}"),
    };
    assert_eq!(challenge["type"], "challenge", "{challenge}");
    assert_eq!(challenge["proof"].as_str().map(str::len), Some(64));
    wrong
        .send(Message::text(
            json!({"v": v, "type": "proof", "proof": "cd".repeat(32)}).to_string(),
        ))
        .await
        .unwrap();
    let frames = drain(&mut wrong).await;
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(
        (frames[0]["type"].as_str(), frames[0]["reason"].as_str()),
        (Some("unauthorized"), Some("bad_token"))
    );
    assert!(!challenge.to_string().contains(&token) && !frames[0].to_string().contains(&token));

    let mut early = dial(port, ORIGIN, None).await.unwrap();
    early
        .send(Message::text(
            json!({"v": v, "type": "result", "id": 1, "data": {}}).to_string(),
        ))
        .await
        .unwrap();
    let frames = drain(&mut early).await;
    assert_eq!(frames[0]["reason"], "expected_hello", "{frames:?}");

    // Anything but the proof after the challenge: refused, nothing dispatched.
    let mut skip = dial(port, ORIGIN, None).await.unwrap();
    skip.send(hello(&"ef".repeat(32))).await.unwrap();
    skip.send(Message::text(
        json!({"v": v, "type": "result", "id": 1, "data": {}}).to_string(),
    ))
    .await
    .unwrap();
    let frames = drain(&mut skip).await;
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(frames[1]["reason"], "expected_proof", "{frames:?}");

    // Silence: closed at the hello deadline (5 s) with nothing sent.
    let mut silent = dial(port, ORIGIN, None).await.unwrap();
    assert!(drain(&mut silent).await.is_empty());

    // None of that displaced or disturbed the real extension.
    let after = session_of(&k.ok("browser_status", json!({})).await);
    assert_eq!(before, after);
    assert_eq!(k.eval("1+2").await, 3);
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_appears_in_no_output() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start {
        env: vec![("KAPTURE_LOG".into(), "trace".into())],
        ..Start::default()
    })
    .await;
    let mut outputs = Vec::new();
    outputs.push(
        k.ok("browser_navigate", json!({"url": site.url("form.html")}))
            .await,
    );
    outputs.push(
        k.ok("browser_type", json!({"selector": "#name", "text": "x"}))
            .await,
    );
    outputs.push(k.ok("browser_status", json!({})).await);
    outputs.push(k.ok("browser_console_messages", json!({})).await);
    outputs.push(
        k.ok(
            "browser_evaluate",
            json!({"function": "JSON.stringify(localStorage)"}),
        )
        .await,
    );
    let token = k.handshakes()[0]["token"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 64);

    let mut places = vec![("stderr (trace logs)".to_string(), k.stderr())];
    places.extend(
        outputs
            .into_iter()
            .map(|o| ("a tool answer".to_string(), o)),
    );
    let mut pids = vec![k.pid];
    let mut i = 0;
    while i < pids.len() && pids.len() < 200 {
        pids.extend(children_of(pids[i]));
        i += 1;
    }
    assert!(pids.len() > 1, "the launched browser is a child of kapture");
    for pid in pids {
        for what in ["cmdline", "environ"] {
            let raw = std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
            places.push((
                format!("/proc/{pid}/{what}"),
                String::from_utf8_lossy(&raw).into_owned(),
            ));
        }
    }
    for (place, text) in &places {
        assert!(
            !text.contains(&token),
            "the bridge token leaked into {place}"
        );
    }
    assert!(
        k.stderr().contains("TRACE") || k.stderr().contains("DEBUG"),
        "trace logging was on"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_password_and_known_secrets_reach_no_answer_and_no_log() {
    let site = Site::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secrets = dir.path().join(".env");
    std::fs::write(&secrets, "SHARED=SHARED-VALUE-42\n").unwrap();
    let mut opts = Start::default();
    opts.args
        .extend(["--secrets".into(), secrets.display().to_string()]);
    let k = Kapture::start(opts).await;
    const CANARY: &str = "Canary-Pw-91x";
    k.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    k.type_login("ada", CANARY).await;
    k.ok("browser_wait_for", json!({"text": "You typed"})).await;

    let mut answers = Vec::new();
    answers.push(
        k.ok(
            "browser_evaluate",
            json!({"function": "document.getElementById('password').value"}),
        )
        .await,
    );
    answers.push(
        k.ok(
            "browser_evaluate",
            json!({"function": "document.getElementById('echo').textContent"}),
        )
        .await,
    );
    answers.push(k.ok("browser_get_text", json!({})).await);
    answers.push(k.ok("browser_get_html", json!({"selector": "body"})).await);
    answers.push(k.ok("browser_snapshot", json!({})).await);
    answers.push(k.ok("browser_find", json!({"query": "typed"})).await);
    answers.push(k.ok("browser_console_messages", json!({})).await);
    answers.push(k.ok("browser_network_requests", json!({})).await);
    for a in &answers {
        assert!(
            !a.contains(CANARY),
            "the password leaked into an answer:\n{a}"
        );
        assert!(
            !a.contains("AKIAIOSFODNN7EXAMPLE"),
            "an access key leaked:\n{a}"
        );
        assert!(
            !a.contains("SHARED-VALUE-42"),
            "a secrets-file value leaked:\n{a}"
        );
    }
    assert_eq!(answers[0], "\"[redacted:password]\"");
    assert!(
        answers[2].contains("You typed [redacted:password]"),
        "{}",
        answers[2]
    );
    assert!(
        answers[2].contains("[redacted:aws-access-key]")
            && answers[2].contains("[redacted:secrets-file]"),
        "{}",
        answers[2]
    );
    assert!(
        answers[6].contains("password is [redacted:password]"),
        "{}",
        answers[6]
    );
    assert!(!k.stderr().contains(CANARY), "the password reached the log");
    // Every call is in the audit journal, without the secret.
    let audit = k.ok("browser_audit", json!({"max": 100})).await;
    assert!(!audit.contains(CANARY), "{audit}");
    let lines = k.audit_lines();
    assert!(lines.len() >= 13, "one entry per call: {}", lines.len());
    let typed = lines
        .iter()
        .find(|l| l["tool"] == "browser_type" && l["args"]["selector"] == "#password")
        .expect("the typing is journaled");
    assert_eq!(typed["args"]["text"], "••••");
    assert_eq!(typed["status"], "ok");
    assert!(
        typed["who"].as_str().unwrap().starts_with("mcp:"),
        "{typed}"
    );
    k.stop().await;
}

kapture_e2e::on_both_engines! {
    a_password_field_that_comes_later_is_still_masked_on => a_password_field_that_comes_later_is_still_masked, a_password_field_that_comes_later_is_still_masked_natively;
}

/// A page without a password field is not asked for values to mask in every answer (its
/// watch says it holds none); one that gets a field later, or turns a field into one, has
/// that field's value masked from then on, though kapture never typed it (so does one
/// whose document is written anew).
async fn a_password_field_that_comes_later_is_still_masked_on(engine: kapture_e2e::Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on_with(engine, &[]).await;
    let cases = [
        ("#add", "Late-Canary-77"),
        ("#switch", "Switch-Canary-55"),
        ("#rewrite", "Open-Canary-33"),
    ];
    for (button, canary) in cases {
        k.ok(
            "browser_navigate",
            json!({"url": site.url("late-password.html")}),
        )
        .await;
        // No password field yet: the pin is plain text and shows.
        let before = k
            .ok("browser_evaluate", json!({"function": "() => pin.value"}))
            .await;
        assert!(before.contains("Switch-Canary-55"), "{engine:?}: {before}");
        k.ok("browser_click", json!({"selector": button})).await;
        let answers = [
            k.ok("browser_console_messages", json!({})).await,
            k.ok(
                "browser_evaluate",
                json!({"function": "() => [...document.querySelectorAll('input')].map((i) => i.value).join(' ')"}),
            )
            .await,
        ];
        for a in &answers {
            assert!(!a.contains(canary), "{engine:?}: {canary} leaked:\n{a}");
            assert!(a.contains("[redacted:password]"), "{engine:?}: {a}");
        }
    }
    k.stop().await;
}

kapture_e2e::on_both_engines! {
    a_page_too_busy_to_be_asked_for_its_passwords_gets_them_withheld_on => a_page_too_busy_to_be_asked_for_its_passwords_gets_them_withheld, a_page_too_busy_to_be_asked_for_its_passwords_gets_them_withheld_natively;
}

/// A page that copied its password field's value into its log and then keeps its main
/// thread busy cannot be asked for the values to mask: the answer is withheld (`TIMEOUT`),
/// never given in clear; once the page is free, masked as usual.
async fn a_page_too_busy_to_be_asked_for_its_passwords_gets_them_withheld_on(
    engine: kapture_e2e::Engine,
) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on_with(engine, &[]).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("busy-password.html")}),
    )
    .await;
    // Busy for 5 s from the page's next task: the answer (a number) needs no look.
    k.ok(
        "browser_evaluate",
        json!({"function": "() => { setTimeout(() => { const end = Date.now() + 5000; while (Date.now() < end); }, 0); return 1; }"}),
    )
    .await;
    let busy = k.call("browser_console_messages", json!({})).await;
    assert!(busy.is_error, "{engine:?}: {}", busy.text);
    assert!(
        !busy.text.contains("Busy-Canary-91"),
        "{engine:?}: leaked:\n{}",
        busy.text
    );
    assert!(
        busy.text.contains("TIMEOUT") && busy.text.contains("withheld"),
        "{engine:?}: {}",
        busy.text
    );
    eventually("the page free again", Duration::from_secs(10), || async {
        let log = k.call("browser_console_messages", json!({})).await;
        assert!(
            !log.text.contains("Busy-Canary-91"),
            "{engine:?}: leaked:\n{}",
            log.text
        );
        (!log.is_error && log.text.contains("[redacted:password]")).then_some(())
    })
    .await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_garbage_oversized_frames_and_page_forgeries_change_nothing() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let before = session_of(&k.ok("browser_status", json!({})).await);
    let port = k.handshakes()[0]["port"].as_u64().unwrap();
    let v = k.handshakes()[0]["v"].as_u64().unwrap();

    // A flood of silent sockets (more than the pre-auth limit) does not stop the real one.
    let mut flood = Vec::new();
    for _ in 0..80 {
        match tokio::time::timeout(Duration::from_secs(5), dial(port, ORIGIN, None)).await {
            Ok(Ok(ws)) => flood.push(ws),
            // Past the limit an upgrade may wait for a slot: that is the point.
            _ => break,
        }
    }
    assert!(flood.len() >= 32, "only {} sockets opened", flood.len());
    assert!(k
        .ok("browser_tabs", json!({"action": "list"}))
        .await
        .contains("Page A"));
    drop(flood);

    // Garbage, wrong-length tokens and an oversized frame: refused, nothing executed.
    for frame in [
        Message::text("not json at all"),
        Message::binary(vec![0xff, 0x00, 0x13, 0x37]),
        Message::text(json!({"v": v, "type": "command", "id": 1, "method": "evaluate", "params": {"function": "document.title='pwned'"}}).to_string()),
        Message::text(json!({"v": v, "type": "proof", "proof": "00".repeat(32)}).to_string()),
        Message::text(json!({"v": v, "type": "hello", "nonce": "", "ext": {"id": "x", "version": "0", "browser": "x", "instance": "e"}}).to_string()),
        Message::text(json!({"v": v, "type": "hello", "nonce": "a".repeat(4096), "ext": {"id": "x", "version": "0", "browser": "x", "instance": "e"}}).to_string()),
        Message::text(json!({"v": 1, "type": "hello", "token": "x", "ext": {"id": "x", "version": "0", "browser": "x", "instance": "e"}}).to_string()),
        Message::text("x".repeat(13 << 20)),
    ] {
        let mut ws = dial(port, ORIGIN, None).await.unwrap();
        let _ = ws.send(frame).await;
        let frames = drain(&mut ws).await;
        assert!(
            frames.iter().all(|f| f["type"] == "unauthorized"),
            "{frames:?}"
        );
    }

    // A page cannot reach the extension: no messaging channel, and a forged approval
    // posted into the page goes nowhere.
    let reach = k
        .eval(
            "async () => { window.postMessage({type: 'answer', id: 1, answer: 'once'}, '*'); \
             if (!globalThis.chrome?.runtime?.sendMessage) return 'no channel'; \
             try { await chrome.runtime.sendMessage('djjhjaffgifolhomiafbjplbhmfblamg', {type: 'answer', id: 1, answer: 'once'}); return 'delivered'; } \
             catch (e) { return 'refused'; } }",
        )
        .await;
    assert_ne!(reach, "delivered");

    assert_eq!(k.eval("document.title").await, "Page A", "nothing ran");
    let after = session_of(&k.ok("browser_status", json!({})).await);
    assert_eq!(before, after, "the real extension kept its session");
    k.stop().await;
}
