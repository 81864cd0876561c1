//! The connection's owner task against a scripted browser on a loopback WebSocket: what
//! reaches a page's route and in which order, child sessions, and every way a session or
//! the browser ends answering waiting and later calls at once with their codes.

use std::time::Duration;

use ext_core::protocol::ErrorCode;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

use super::*;

/// The browser's side of the socket, driven by the test.
struct Script {
    ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
}

impl Script {
    /// The next command the client sent (bounded wait).
    async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(Duration::from_secs(5), self.ws.next())
            .await
            .expect("a command")
            .expect("the socket open")
            .unwrap();
        serde_json::from_str(frame.to_text().unwrap()).unwrap()
    }

    async fn send(&mut self, v: Value) {
        self.ws.send(Message::text(v.to_string())).await.unwrap();
    }
}

/// A connected `Browser` and the scripted browser behind it.
async fn scripted() -> (Browser, Script) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accept = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio_tungstenite::accept_async(stream).await.unwrap()
    });
    let browser = Browser::connect(&format!("ws://127.0.0.1:{port}/devtools/browser/x"))
        .await
        .unwrap();
    let ws = accept.await.unwrap();
    (browser, Script { ws })
}

/// Attach to target `T` as session `P`; answers the route.
async fn attach(browser: &Browser, script: &mut Script) -> mpsc::Receiver<Routed> {
    let attaching = tokio::spawn({
        let b = browser.clone();
        async move { b.attach("T").await }
    });
    let cmd = script.recv().await;
    assert_eq!(cmd["method"], "Target.attachToTarget");
    assert_eq!(cmd["params"], json!({"targetId": "T", "flatten": true}));
    script
        .send(json!({"id": cmd["id"], "result": {"sessionId": "P"}}))
        .await;
    let attached = attaching.await.unwrap().unwrap();
    assert_eq!(attached.session, "P");
    attached.route
}

/// The next item on a route (bounded wait).
async fn next(route: &mut mpsc::Receiver<Routed>) -> Option<Routed> {
    tokio::time::timeout(Duration::from_secs(5), route.recv())
        .await
        .expect("the route moves")
}

fn call(browser: &Browser, session: Option<&str>, method: &str) -> tokio::task::JoinHandle<Answer> {
    let (b, s, m) = (
        browser.clone(),
        session.map(str::to_string),
        method.to_string(),
    );
    tokio::spawn(async move { b.call(s.as_deref(), &m, json!({})).await })
}

#[tokio::test]
async fn a_page_answer_comes_behind_the_events_before_it() {
    let (browser, mut script) = scripted().await;
    let mut route = attach(&browser, &mut script).await;
    let waiting = call(&browser, Some("P"), "Page.navigate");
    let cmd = script.recv().await;
    assert_eq!(cmd["sessionId"], "P");
    script
        .send(json!({"method": "Page.frameNavigated", "params": {"n": 1}, "sessionId": "P"}))
        .await;
    script
        .send(json!({"id": cmd["id"], "result": {"loaderId": "L"}, "sessionId": "P"}))
        .await;
    match next(&mut route).await {
        Some(Routed::Event(e)) => {
            assert_eq!(
                (e.session.as_deref(), e.method.as_str()),
                (Some("P"), "Page.frameNavigated")
            );
        }
        other => panic!("the event first, not {other:?}"),
    }
    // The caller has no answer until the reader hands it over.
    assert!(!waiting.is_finished());
    let item = next(&mut route).await.unwrap();
    assert!(item.deliver().is_none());
    assert_eq!(waiting.await.unwrap().unwrap()["loaderId"], "L");
    // A browser-level call is answered directly; a CDP error is coded by ext-core's table.
    let direct = call(&browser, None, "Target.closeTarget");
    let cmd = script.recv().await;
    assert!(cmd.get("sessionId").is_none());
    script
        .send(json!({"id": cmd["id"], "error": {"code": -32000, "message": "No target with given id found"}}))
        .await;
    assert_eq!(
        direct.await.unwrap().unwrap_err().code,
        ErrorCode::TabNotFound
    );
}

#[tokio::test]
async fn child_sessions_reach_their_page_and_end_as_their_frame_gone() {
    let (browser, mut script) = scripted().await;
    let mut route = attach(&browser, &mut script).await;
    script
        .send(
            json!({"method": "Target.attachedToTarget", "sessionId": "P",
            "params": {"sessionId": "C", "targetInfo": {"type": "iframe", "targetId": "F"}}}),
        )
        .await;
    // A nested one, reported on the child's session.
    script
        .send(
            json!({"method": "Target.attachedToTarget", "sessionId": "C",
            "params": {"sessionId": "G", "targetInfo": {"type": "iframe", "targetId": "H"}}}),
        )
        .await;
    script
        .send(json!({"method": "Runtime.consoleAPICalled", "sessionId": "G", "params": {}}))
        .await;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let Some(Routed::Event(e)) = next(&mut route).await else {
            panic!("an event")
        };
        seen.push((e.session.unwrap(), e.method));
    }
    assert_eq!(
        seen[2],
        ("G".to_string(), "Runtime.consoleAPICalled".to_string())
    );
    // A call in the nested session is answered through the page's route too.
    let waiting = call(&browser, Some("G"), "Page.getFrameTree");
    let cmd = script.recv().await;
    assert_eq!(cmd["sessionId"], "G");
    script
        .send(json!({"id": cmd["id"], "result": {"frameTree": {}}, "sessionId": "G"}))
        .await;
    next(&mut route).await.unwrap().deliver();
    assert!(waiting.await.unwrap().is_ok());
    // The child goes away with a call waiting on it: that call, and a later one, fail at
    // once as a frame gone; the page lives on.
    let waiting = call(&browser, Some("C"), "Runtime.evaluate");
    script.recv().await;
    script
        .send(
            json!({"method": "Target.detachedFromTarget", "sessionId": "P",
            "params": {"sessionId": "C", "targetId": "F"}}),
        )
        .await;
    let Some(Routed::Event(e)) = next(&mut route).await else {
        panic!("the detach event")
    };
    assert_eq!(e.method, "Target.detachedFromTarget");
    assert_eq!(
        waiting.await.unwrap().unwrap_err().code,
        ErrorCode::RefStale
    );
    let late = call(&browser, Some("C"), "Runtime.evaluate").await.unwrap();
    assert_eq!(late.unwrap_err().code, ErrorCode::RefStale);
    let alive = call(&browser, Some("P"), "Runtime.evaluate");
    let cmd = script.recv().await;
    assert_eq!(cmd["sessionId"], "P");
    script
        .send(json!({"id": cmd["id"], "result": {}, "sessionId": "P"}))
        .await;
    next(&mut route).await.unwrap().deliver();
    assert!(alive.await.unwrap().is_ok());
}

#[tokio::test]
async fn a_closed_page_fails_its_waiting_and_later_calls_with_tab_closed() {
    let (browser, mut script) = scripted().await;
    let mut route = attach(&browser, &mut script).await;
    script
        .send(
            json!({"method": "Target.attachedToTarget", "sessionId": "P",
            "params": {"sessionId": "C", "targetInfo": {"type": "iframe"}}}),
        )
        .await;
    next(&mut route).await;
    let on_page = call(&browser, Some("P"), "Runtime.evaluate");
    let on_child = call(&browser, Some("C"), "Runtime.evaluate");
    script.recv().await;
    script.recv().await;
    // The browser's own session says the page's session ended (tab closed); whoever
    // listens to the browser's events hears it too.
    let mut heard = browser.browser_events();
    script
        .send(json!({"method": "Target.detachedFromTarget", "params": {"sessionId": "P", "targetId": "T"}}))
        .await;
    assert_eq!(
        on_page.await.unwrap().unwrap_err().code,
        ErrorCode::TabClosed
    );
    assert_eq!(
        on_child.await.unwrap().unwrap_err().code,
        ErrorCode::TabClosed
    );
    assert!(next(&mut route).await.is_none(), "the route ends");
    let late = call(&browser, Some("P"), "Runtime.evaluate").await.unwrap();
    assert_eq!(late.unwrap_err().code, ErrorCode::TabClosed);
    let event = tokio::time::timeout(Duration::from_secs(5), heard.recv()).await;
    let event = event.expect("the browser event").unwrap();
    assert_eq!(
        (event.session, event.method.as_str()),
        (None, "Target.detachedFromTarget")
    );
    assert!(!browser.is_closed());
}

#[tokio::test]
async fn a_dropped_socket_fails_everything_with_no_browser() {
    let (browser, mut script) = scripted().await;
    let mut route = attach(&browser, &mut script).await;
    let waiting = call(&browser, Some("P"), "Runtime.evaluate");
    script.recv().await;
    drop(script);
    let err = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("no hang")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NoBrowser);
    assert!(next(&mut route).await.is_none(), "the route ends");
    tokio::time::timeout(Duration::from_secs(5), browser.closed())
        .await
        .expect("closed");
    let late = browser.call(None, "Browser.getVersion", json!({})).await;
    assert_eq!(late.unwrap_err().code, ErrorCode::NoBrowser);
    assert_eq!(
        browser.attach("T").await.unwrap_err().code,
        ErrorCode::NoBrowser
    );
}

#[test]
fn a_page_ending_ends_its_children_and_says_so_to_late_calls() {
    let mut s = Sessions::default();
    let (tx, _rx) = mpsc::channel(1);
    s.pages.insert("P".into(), tx);
    s.children.insert("C".into(), "P".into());
    s.children.insert("G".into(), "P".into());
    assert_eq!(s.page_of("G"), Some("P"));
    assert_eq!(s.page_of("X"), None);
    assert_eq!(s.end_page("P").len(), 3);
    assert!(s.pages.is_empty() && s.children.is_empty());
    assert_eq!(s.gone["P"].code, ErrorCode::TabClosed);
    assert_eq!(s.gone["G"].code, ErrorCode::TabClosed);
}

#[tokio::test]
async fn children_beyond_the_bound_are_detached_not_remembered() {
    let (browser, mut script) = scripted().await;
    let mut route = attach(&browser, &mut script).await;
    // The page's reader keeps up (a stalled one would lose its route).
    let reader = tokio::spawn(async move {
        let mut attached = Vec::new();
        for _ in 0..MAX_CHILDREN + 2 {
            match next(&mut route).await {
                Some(Routed::Event(e)) if e.method == "Test.done" => break,
                Some(Routed::Event(e)) => attached.push(e.params["sessionId"].clone()),
                other => panic!("an event, not {other:?}"),
            }
        }
        attached
    });
    for i in 0..=MAX_CHILDREN {
        script
            .send(
                json!({"method": "Target.attachedToTarget", "sessionId": "P",
                "params": {"sessionId": format!("C{i}"), "targetInfo": {"type": "iframe"}}}),
            )
            .await;
    }
    let cmd = script.recv().await;
    assert_eq!(cmd["method"], "Target.detachFromTarget");
    assert_eq!(cmd["sessionId"], "P");
    assert_eq!(cmd["params"]["sessionId"], format!("C{MAX_CHILDREN}"));
    script
        .send(json!({"id": cmd["id"], "result": {}, "sessionId": "P"}))
        .await;
    script
        .send(json!({"method": "Test.done", "sessionId": "P", "params": {}}))
        .await;
    let attached = reader.await.unwrap();
    assert_eq!(attached.len(), MAX_CHILDREN);
    assert!(!attached.contains(&json!(format!("C{MAX_CHILDREN}"))));
    // The refused child is unknown: a call in it is not routed to the page.
    let waiting = call(
        &browser,
        Some(&format!("C{MAX_CHILDREN}")),
        "Runtime.evaluate",
    );
    let cmd = script.recv().await;
    script
        .send(json!({"id": cmd["id"], "result": {}, "sessionId": format!("C{MAX_CHILDREN}")}))
        .await;
    assert!(waiting.await.unwrap().is_ok());
}
