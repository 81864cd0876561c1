//! Out-of-process iframes: a cross-site frame (`oop.test`, mapped to 127.0.0.1) that Chrome
//! runs in another process is read and driven like any frame (through the flat session
//! Chrome opens on it), and a denied origin stays one withheld line.

use std::time::{Duration, Instant};

use kapture_e2e::{Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

/// A launched, debuggable browser that resolves `oop.test` to 127.0.0.1 (a site of its own,
/// so Chrome isolates it in another process), with `extra` flags.
fn oop_start(extra: &[&str]) -> Start {
    let mut start = Start::debuggable();
    start.args.push(kapture_e2e::OOP_TEST_RULES.into());
    start.args.extend(extra.iter().map(|a| a.to_string()));
    start
}

/// Open `frames.html` with its cross frame showing `frame-child.html` from `oop.test`, and
/// wait until the browser itself reports that frame as a target of its own (out of
/// process). Answers the frame's origin and target id.
async fn open_with_oopif(k: &Kapture, site: &Site) -> (String, String) {
    let origin = format!("http://oop.test:{}", site.port());
    let child = format!("{origin}/frame-child.html");
    let page = format!("{}?cross={child}", site.url("frames.html"));
    (origin, open_and_wait(k, &page, &child).await)
}

/// Open `page` and wait until the browser reports a frame showing `child` as a target of
/// its own (out of process); answers its target id.
async fn open_and_wait(k: &Kapture, page: &str, child: &str) -> String {
    k.ok("browser_navigate", json!({"url": page})).await;
    let mut cdp = k.raw_cdp().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let targets = cdp
            .send(None, "Target.getTargets", json!({}))
            .await
            .unwrap();
        let out_of_process = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "iframe" && t["url"] == json!(child));
        if let Some(t) = out_of_process {
            break t["targetId"].as_str().unwrap().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "the oop.test frame never became a target of its own: {targets}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_out_of_process_frame_is_read_and_driven_like_any_frame() {
    let site = Site::start().unwrap();
    let k = Kapture::start(oop_start(&[])).await;
    let (origin, target) = open_with_oopif(&k, &site).await;
    // Both frames show the same page: the one in the tab's process and the other one.
    let snap = kapture_e2e::eventually("the frame's content", Duration::from_secs(10), || {
        let k = &k;
        async move {
            let snap = k.ok("browser_snapshot", json!({})).await;
            (snap.matches("button \"Pay now\"").count() == 2).then_some(snap)
        }
    })
    .await;
    assert!(!snap.contains("another process"), "{snap}");
    let cross = snap
        .split_once("iframe \"Cross origin\"")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no cross iframe:\n{snap}"));
    assert!(
        cross.contains(&format!("-> {origin}/frame-child.html")),
        "{snap}"
    );
    assert!(cross.contains("h2 \"Inside the frame\""), "{snap}");
    let card = kapture_e2e::ref_on(cross, "textbox \"Card\"");
    let pay = kapture_e2e::ref_on(cross, "button \"Pay now\"");
    assert_ne!(
        card,
        kapture_e2e::ref_on(&snap, "textbox \"Card\""),
        "{snap}"
    );
    // A find reaches it too.
    let found = k.ok("browser_find", json!({"query": "Pay now"})).await;
    assert!(found.contains(&format!("[ref={pay}]")), "{found}");

    k.ok("browser_type", json!({"ref": card, "text": "4242"}))
        .await;
    k.ok("browser_click", json!({"ref": pay})).await;
    until_paid(&k, &target).await;
    // The frame in the tab's process was left alone.
    let same =
        "() => document.getElementById('same').contentDocument.getElementById('state').textContent";
    assert_eq!(k.eval(same).await, json!("not paid"));
    // The snapshot shows the new state, and how long one takes with such a frame.
    let started = Instant::now();
    let after = k.ok("browser_snapshot", json!({})).await;
    eprintln!(
        "snapshot with an out-of-process frame: {:?}",
        started.elapsed()
    );
    assert!(after.contains("paragraph \"paid with 4242\""), "{after}");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_out_of_process_frame_is_one_withheld_line() {
    let site = Site::start().unwrap();
    let k = Kapture::start(oop_start(&["--deny", "oop.test"])).await;
    let (origin, _) = open_with_oopif(&k, &site).await;
    let withheld = format!("content withheld: read on {origin} denied by --deny oop.test");
    let snap = kapture_e2e::eventually("the withheld line", Duration::from_secs(10), || {
        let k = &k;
        let withheld = withheld.clone();
        async move {
            let snap = k.ok("browser_snapshot", json!({})).await;
            snap.contains(&withheld).then_some(snap)
        }
    })
    .await;
    assert!(!snap.contains("another process"), "{snap}");
    assert_eq!(snap.matches("button \"Pay now\"").count(), 1, "{snap}");
    assert!(!snap.contains("oop.test/frame-child"), "{snap}");
    k.stop().await;
}

/// Wait until the frame of `target` says it was paid with 4242: its own state, read by a
/// debugger of its own on the frame's target.
async fn until_paid(k: &Kapture, target: &str) {
    let mut cdp = k.raw_cdp().await;
    let attached = cdp
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )
        .await
        .unwrap();
    let session = attached["sessionId"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = cdp
            .send(
                Some(&session),
                "Runtime.evaluate",
                json!({"expression": "document.getElementById('state').textContent", "returnByValue": true}),
            )
            .await
            .unwrap();
        if state["result"]["value"] == "paid with 4242" {
            break;
        }
        assert!(Instant::now() < deadline, "the frame's state: {state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A 127.0.0.1 frame inside the `oop.test` frame is out of process again (its parent is
/// in another process): it is read and driven too, its box moved through both frames.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_frame_inside_an_out_of_process_frame_is_read_and_driven() {
    let site = Site::start().unwrap();
    let k = Kapture::start(oop_start(&[])).await;
    let inner = site.url("frame-child.html");
    let middle = format!("http://oop.test:{}/frames.html?cross={inner}", site.port());
    let page = format!("{}?cross={middle}", site.url("frames.html"));
    let target = open_and_wait(&k, &page, &inner).await;
    // Three forms: the page's own frame's, the oop.test frame's own frame's, the innermost.
    let snap = kapture_e2e::eventually("every frame's content", Duration::from_secs(10), || {
        let k = &k;
        async move {
            let snap = k.ok("browser_snapshot", json!({})).await;
            (snap.matches("button \"Pay now\"").count() == 3).then_some(snap)
        }
    })
    .await;
    let innermost = snap
        .rsplit_once("iframe \"Cross origin\"")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no inner cross iframe:\n{snap}"));
    assert!(innermost.contains(&format!("-> {inner}")), "{snap}");
    let card = kapture_e2e::ref_on(innermost, "textbox \"Card\"");
    let pay = kapture_e2e::ref_on(innermost, "button \"Pay now\"");
    k.ok("browser_type", json!({"ref": card, "text": "4242"}))
        .await;
    k.ok("browser_click", json!({"ref": pay})).await;
    until_paid(&k, &target).await;
    k.stop().await;
}
