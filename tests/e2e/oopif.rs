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
    // Input aimed at the frame's place on screen is judged where it lands, as the browser
    // routes it: on a page scrolled a little or a lot, and under a page-wide layer that
    // pointer events go through. Nothing reaches the frame.
    for setup in [
        "() => true",
        "() => { const s = document.createElement('div'); s.style.height = '3000px'; document.body.append(s); scrollTo(0, 60); return scrollY === 60; }",
        "() => { const d = document.createElement('div'); d.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:99999'; document.body.append(d); return true; }",
        "() => { const s = document.createElement('div'); s.style.height = '2500px'; document.getElementById('cross').before(s); document.getElementById('cross').scrollIntoView(); return true; }",
    ] {
        k.eval(setup).await;
        let at = k
            .eval("() => { const r = document.getElementById('cross').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }")
            .await;
        for tool in ["browser_mouse_click_xy", "browser_mouse_move_xy"] {
            let out = k.call(tool, json!({"x": at[0], "y": at[1]})).await;
            assert_eq!(
                out.code().as_deref(),
                Some("POLICY_DENIED"),
                "{tool} at {at}: {}",
                out.text
            );
            assert!(out.text.contains("oop.test"), "{tool}: {}", out.text);
        }
    }
    // The wheel: over the frame, refused; with no element named, the page scrolls itself
    // past a refused frame in the middle of the viewport.
    let out = k
        .call(
            "browser_scroll",
            json!({"selector": "#cross", "deltaY": 100}),
        )
        .await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    // Room below, whatever the viewport's height: the page can scroll on.
    let top = k.eval("() => { const s = document.createElement('div'); s.style.height = '2000px'; document.body.append(s); const f = document.getElementById('cross'); scrollTo(0, f.getBoundingClientRect().top + scrollY - innerHeight / 2 + f.offsetHeight / 2); return scrollY; }").await;
    k.ok("browser_scroll", json!({"deltaY": 100})).await;
    let now = k.eval("() => scrollY").await;
    assert!(now.as_f64() > top.as_f64(), "{top} -> {now}");
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

/// Evaluate `expr` in the page of a flat session of the raw debugger; its JSON value.
async fn eval_in(
    cdp: &mut kapture_e2e::cdp::RawCdp,
    session: &str,
    expr: &str,
) -> serde_json::Value {
    let res = cdp
        .send(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        )
        .await
        .unwrap();
    res["result"]["value"].clone()
}

/// A frame below the fold: its element's scroll into view travels from the frame's process
/// to the tab's on its own time, so a click measured at once could be sent where the frame
/// was (on the page, or off screen). Each click must land on the element, and none on the
/// page around the frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_into_an_out_of_process_frame_below_the_fold_lands_in_it() {
    let site = Site::start().unwrap();
    let k = Kapture::start(oop_start(&[])).await;
    let (_, target) = open_with_oopif(&k, &site).await;
    let snap = kapture_e2e::eventually("the frame's content", Duration::from_secs(10), || {
        let k = &k;
        async move {
            let snap = k.ok("browser_snapshot", json!({})).await;
            (snap.matches("button \"Pay now\"").count() == 2).then_some(snap)
        }
    })
    .await;
    let cross = snap
        .split_once("iframe \"Cross origin\"")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no cross iframe:\n{snap}"));
    let pay = kapture_e2e::ref_on(cross, "button \"Pay now\"");
    // A tall block before the frame, and a count of the clicks the page itself receives
    // (a click that reaches the frame's document is not dispatched in the page's).
    k.eval("() => { const s = document.createElement('div'); s.style.height = '2500px'; document.getElementById('cross').before(s); window.__clicks = 0; addEventListener('click', () => window.__clicks++, true); return true; }").await;
    let mut cdp = k.raw_cdp().await;
    let attached = cdp
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )
        .await
        .unwrap();
    let frame = attached["sessionId"].as_str().unwrap().to_string();
    eval_in(&mut cdp, &frame, "window.__clicks = 0; document.getElementById('pay').addEventListener('click', () => window.__clicks++); true").await;
    const ROUNDS: u64 = 8;
    for round in 1..=ROUNDS {
        assert_eq!(
            k.eval("() => { scrollTo(0, 0); return scrollY; }").await,
            json!(0)
        );
        k.ok("browser_click", json!({"ref": pay})).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let clicks = eval_in(&mut cdp, &frame, "window.__clicks").await;
            if clicks == json!(round) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "round {round}: the frame counted {clicks} clicks"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            k.eval("() => window.__clicks").await,
            json!(0),
            "round {round}: a click landed on the page around the frame"
        );
    }
    k.stop().await;
}
