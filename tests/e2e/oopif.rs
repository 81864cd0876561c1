//! Out-of-process iframes: a cross-site frame (`oop.test`, mapped to 127.0.0.1) that Chrome
//! runs in another process is never shown as an empty iframe: the snapshot says where its
//! content is, and a denied origin stays one withheld line.

use std::time::{Duration, Instant};

use kapture_e2e::{Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

/// A launched, debuggable browser that resolves `oop.test` to 127.0.0.1 (a site of its own,
/// so Chrome isolates it in another process), with `extra` flags.
fn oop_start(extra: &[&str]) -> Start {
    let mut start = Start::debuggable();
    start
        .args
        .push("--chromium-arg=--host-resolver-rules=MAP oop.test 127.0.0.1".into());
    start.args.extend(extra.iter().map(|a| a.to_string()));
    start
}

/// Open `frames.html` with its cross frame showing `frame-child.html` from `oop.test`, and
/// wait until the browser itself reports that frame as a target of its own (out of
/// process) with its page loaded. Answers the frame's origin.
async fn open_with_oopif(k: &Kapture, site: &Site) -> String {
    let origin = format!("http://oop.test:{}", site.port());
    let child = format!("{origin}/frame-child.html");
    let page = format!("{}?cross={child}", site.url("frames.html"));
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
            .any(|t| t["type"] == "iframe" && t["url"] == json!(child));
        if out_of_process {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the oop.test frame never became a target of its own: {targets}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    origin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_out_of_process_frame_is_never_shown_empty() {
    let site = Site::start().unwrap();
    let k = Kapture::start(oop_start(&[])).await;
    let origin = open_with_oopif(&k, &site).await;
    let marker = format!("(content in another process: {origin}; not read)");
    let snap = kapture_e2e::eventually("the frame's line", Duration::from_secs(10), || {
        let k = &k;
        let marker = marker.clone();
        async move {
            let snap = k.ok("browser_snapshot", json!({})).await;
            snap.contains(&marker).then_some(snap)
        }
    })
    .await;
    // The marker sits under the cross iframe, the same-origin frame is walked as before.
    let lines: Vec<&str> = snap.lines().collect();
    let at = lines.iter().position(|l| l.contains(&marker)).unwrap();
    assert!(
        lines[at - 1].contains("iframe \"Cross origin\""),
        "the marker is under its iframe:\n{snap}"
    );
    assert!(snap.contains("button \"Top button\""), "{snap}");
    assert_eq!(
        snap.matches("button \"Pay now\"").count(),
        1,
        "only the same-origin frame's button is read:\n{snap}"
    );
    // A find for the frame's site says the same.
    let found = k.ok("browser_find", json!({"query": "oop.test"})).await;
    assert!(found.contains(&marker), "{found}");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_out_of_process_frame_is_one_withheld_line() {
    let site = Site::start().unwrap();
    let k = Kapture::start(oop_start(&["--deny", "oop.test"])).await;
    let origin = open_with_oopif(&k, &site).await;
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
