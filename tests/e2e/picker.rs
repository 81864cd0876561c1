//! The element picker driven like a person: while `browser_pick` (or the panel's "Pick an
//! element") waits, a second raw DevTools client moves the mouse and clicks with real input
//! events. The pick answers a ref that works at once and the recorder's locators; the click
//! never reaches the page; a page script's click does not pick; Esc, a timeout and a
//! navigation end it cleanly with no overlay left. Screenshots in target/panel-screenshots/.

use std::time::{Duration, Instant};

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::panel::{screenshot, Panel};
use kapture_e2e::{on_both_engines, Engine, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// Kapture on `engine` with the browser open to a raw DevTools client.
async fn start(engine: Engine) -> Kapture {
    match engine {
        Engine::Extension => Kapture::start(Start::debuggable()).await,
        Engine::Cdp => Kapture::launch_on(Engine::Cdp).await,
    }
}

/// The shadow roots of every picker host in the page, its frames' documents included.
async fn picker_roots(raw: &mut RawCdp, session: &str) -> Vec<i64> {
    fn walk(node: &Value, out: &mut Vec<i64>) {
        if node["nodeName"] == "KAPTURE-PICKER" {
            if let Some(id) = node["shadowRoots"][0]["nodeId"].as_i64() {
                out.push(id);
            }
        }
        for key in ["children", "shadowRoots"] {
            for child in node[key].as_array().into_iter().flatten() {
                walk(child, out);
            }
        }
        if node["contentDocument"].is_object() {
            walk(&node["contentDocument"], out);
        }
    }
    let doc = raw
        .send(
            Some(session),
            "DOM.getDocument",
            json!({"depth": -1, "pierce": true}),
        )
        .await
        .expect("the document, as DevTools sees it");
    let mut out = Vec::new();
    walk(&doc["root"], &mut out);
    out
}

/// The HTML of what `selector` matches in any picker's shadow root, if anything does.
async fn in_picker(raw: &mut RawCdp, session: &str, selector: &str) -> Option<String> {
    for root in picker_roots(raw, session).await {
        let found = raw
            .send(
                Some(session),
                "DOM.querySelector",
                json!({"nodeId": root, "selector": selector}),
            )
            .await
            .ok()?;
        if let Some(node) = found["nodeId"].as_i64().filter(|n| *n > 0) {
            let html = raw
                .send(Some(session), "DOM.getOuterHTML", json!({"nodeId": node}))
                .await
                .ok()?;
            return html["outerHTML"].as_str().map(str::to_string);
        }
    }
    None
}

/// Evaluate in the page's own world (the test's script, as a page script would run).
async fn page_eval(raw: &mut RawCdp, session: &str, expr: &str) -> Value {
    let res = raw
        .send(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )
        .await
        .expect("page evaluate");
    res.pointer("/result/value").cloned().unwrap_or(Value::Null)
}

/// The centre of `#id` in the top frame's viewport (inside the iframe `frame` when given).
async fn centre(raw: &mut RawCdp, session: &str, frame: Option<&str>, id: &str) -> (f64, f64) {
    let expr = match frame {
        None => format!("(() => {{ const r = document.getElementById({id:?}).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"),
        Some(f) => format!("(() => {{ const f = document.getElementById({f:?}); const o = f.getBoundingClientRect(); const r = f.contentDocument.getElementById({id:?}).getBoundingClientRect(); return [o.left + f.clientLeft + r.left + r.width / 2, o.top + f.clientTop + r.top + r.height / 2]; }})()"),
    };
    let at = page_eval(raw, session, &expr).await;
    (at[0].as_f64().unwrap(), at[1].as_f64().unwrap())
}

/// Real mouse input: move to `(x, y)`, and press and release there when `click`.
async fn mouse(raw: &mut RawCdp, session: &str, (x, y): (f64, f64), click: bool) {
    let mut kinds = vec!["mouseMoved"];
    if click {
        kinds.extend(["mousePressed", "mouseReleased"]);
    }
    for kind in kinds {
        let button = if kind == "mouseMoved" { "none" } else { "left" };
        raw.send(
            Some(session),
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": x, "y": y, "button": button, "clickCount": 1}),
        )
        .await
        .unwrap();
    }
}

/// Wait until the picker is in the page (its banner in the top frame).
async fn until_picking(raw: &mut RawCdp, session: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(banner) = in_picker(raw, session, ".banner").await {
            return banner;
        }
        assert!(Instant::now() < deadline, "the picker never showed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Hover `(x, y)` until the outline's label names `what`.
async fn hover_until(raw: &mut RawCdp, session: &str, at: (f64, f64), what: &str) {
    hover_until_in(raw, session, session, at, what).await
}

/// [`hover_until`] with the outline looked for in the document of `look` (an
/// out-of-process frame's own session).
async fn hover_until_in(raw: &mut RawCdp, session: &str, look: &str, at: (f64, f64), what: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        mouse(raw, session, at, false).await;
        let tag = in_picker(raw, look, ".tag:not([hidden])").await;
        let outline = in_picker(raw, look, ".box:not([hidden])").await;
        if tag.as_deref().is_some_and(|t| t.contains(what)) && outline.is_some() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the outline never named {what}: {tag:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// No picker host is left in the page or its frames (seen by the page's own script too).
async fn no_picker_left(raw: &mut RawCdp, session: &str) {
    assert!(
        picker_roots(raw, session).await.is_empty(),
        "a picker is left"
    );
    let hosts = page_eval(
        raw,
        session,
        "document.querySelectorAll('kapture-picker').length + document.getElementById('same').contentDocument.querySelectorAll('kapture-picker').length",
    )
    .await;
    assert_eq!(hosts, json!(0));
}

async fn a_person_picks_the_element_the_agent_asked_for(engine: Engine) {
    let site = Site::start().unwrap();
    let k = start(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("pick.html").await.unwrap();
    let buy = centre(&mut raw, &session, None, "buy").await;

    let person = async {
        let banner = until_picking(&mut raw, &session).await;
        hover_until(&mut raw, &session, buy, "Buy now").await;
        screenshot(
            &mut raw,
            &session,
            &format!("pick-page-highlight-{engine:?}"),
        )
        .await;
        mouse(&mut raw, &session, buy, true).await;
        banner
    };
    let (picked, banner) = tokio::join!(
        k.call(
            "browser_pick",
            json!({"prompt": "the <b>Buy</b> button", "timeout": 60})
        ),
        person
    );
    // The agent's prompt is shown as text, never as markup.
    assert!(
        banner.contains("click the element to pick (Esc cancels)")
            && banner.contains("the &lt;b&gt;Buy&lt;/b&gt; button"),
        "{banner}"
    );
    // The agent's words are labelled as the agent's, apart from Kapture's own line.
    assert!(banner.contains("The agent asks:"), "{banner}");
    assert!(!picked.is_error, "{}", picked.text);
    assert!(
        picked.text.contains("button \"Buy now\" [ref="),
        "{}",
        picked.text
    );
    let structured = picked.structured.clone().expect("structuredContent");
    let element_ref = structured["ref"].as_str().unwrap().to_string();
    assert!(picked.text.contains(&format!("Use ref {element_ref} ")));
    let codes: Vec<&str> = structured["locators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes[0], r#"getByTestId("buy-button")"#, "{codes:?}");
    assert_eq!(
        codes[1], r#"getByRole("button", { name: "Buy now" })"#,
        "{codes:?}"
    );
    assert!(codes.contains(&r##"locator("#buy")"##), "{codes:?}");

    // The person's click was the picker's: the page saw neither press nor click.
    let seen = page_eval(
        &mut raw,
        &session,
        "[window.pageClicks, window.pagePresses]",
    )
    .await;
    assert_eq!(seen, json!([0, 0]), "the pick click reached the page");
    no_picker_left(&mut raw, &session).await;

    // The ref is the page model's: it works at once, on that very element.
    k.ok("browser_click", json!({"ref": element_ref})).await;
    let seen = page_eval(&mut raw, &session, "window.pageClicks").await;
    assert_eq!(seen, json!(1));
    // The session's log learned the ref from the pick's answer, like from a snapshot's.
    let steps = k.resource("kapture://session/current/steps").await.unwrap();
    assert!(steps.contains(r#"button \"Buy now\""#), "{steps}");
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let line = snapshot
        .lines()
        .find(|l| l.contains(&format!("[ref={element_ref}]")))
        .unwrap_or_else(|| panic!("no {element_ref} in {snapshot}"));
    assert!(line.starts_with("button \"Buy now\""), "{snapshot}");

    // Inside a same-process frame: the frame's own outline, a frame ref that clicks there.
    let inner = centre(&mut raw, &session, Some("same"), "inner").await;
    let person = async {
        until_picking(&mut raw, &session).await;
        hover_until(&mut raw, &session, inner, "Inner button").await;
        mouse(&mut raw, &session, inner, true).await;
    };
    let (picked, ()) = tokio::join!(k.call("browser_pick", json!({})), person);
    assert!(!picked.is_error, "{}", picked.text);
    let structured = picked.structured.clone().expect("structuredContent");
    let frame_ref = structured["ref"].as_str().unwrap().to_string();
    assert!(frame_ref.starts_with('f'), "{frame_ref}");
    assert!(
        structured["frameUrl"]
            .as_str()
            .is_some_and(|u| u.ends_with("pick-frame.html")),
        "{structured}"
    );
    let clicks = "document.getElementById('same').contentWindow.innerClicks || 0";
    assert_eq!(page_eval(&mut raw, &session, clicks).await, json!(0));
    k.ok("browser_click", json!({"ref": frame_ref})).await;
    assert_eq!(page_eval(&mut raw, &session, clicks).await, json!(1));
    no_picker_left(&mut raw, &session).await;
}

async fn a_pick_nobody_answers_ends_cleanly(engine: Engine) {
    let site = Site::start().unwrap();
    let k = start(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("pick.html").await.unwrap();

    // Nobody picks: TIMEOUT after the wait asked for, nothing left in the page.
    let began = Instant::now();
    let timed_out = k.call("browser_pick", json!({"timeout": 1.5})).await;
    let took = began.elapsed();
    assert_eq!(
        timed_out.code().as_deref(),
        Some("TIMEOUT"),
        "{}",
        timed_out.text
    );
    assert!(
        timed_out.text.contains("within 1.5 s"),
        "{}",
        timed_out.text
    );
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(10),
        "{took:?}"
    );
    no_picker_left(&mut raw, &session).await;

    // A page script's click is the page's own: it reaches the page and picks nothing.
    let page = async {
        until_picking(&mut raw, &session).await;
        page_eval(
            &mut raw,
            &session,
            "document.getElementById('buy').click(); document.getElementById('buy').dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: 10, clientY: 10})); window.pageClicks",
        )
        .await
    };
    let (synthetic, clicks) = tokio::join!(k.call("browser_pick", json!({"timeout": 2})), page);
    assert_eq!(clicks, json!(2), "the page's own clicks reached it");
    assert_eq!(
        synthetic.code().as_deref(),
        Some("TIMEOUT"),
        "{}",
        synthetic.text
    );
    no_picker_left(&mut raw, &session).await;

    // A person's key that would activate what the page focused (Enter, Space) makes a
    // trusted click with no press: it picks nothing and the button is not activated.
    let keys = async {
        until_picking(&mut raw, &session).await;
        page_eval(
            &mut raw,
            &session,
            "document.getElementById('buy').focus(), true",
        )
        .await;
        for (key, code, vk, text) in [("Enter", "Enter", 13, "\r"), (" ", "Space", 32, " ")] {
            for kind in ["keyDown", "keyUp"] {
                let mut ev =
                    json!({"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk});
                if kind == "keyDown" {
                    ev["text"] = json!(text);
                }
                raw.send(Some(&session), "Input.dispatchKeyEvent", ev)
                    .await
                    .unwrap();
            }
        }
        page_eval(&mut raw, &session, "window.pageClicks").await
    };
    let (by_keys, clicks) = tokio::join!(k.call("browser_pick", json!({"timeout": 2})), keys);
    assert_eq!(
        by_keys.code().as_deref(),
        Some("TIMEOUT"),
        "keys picked something: {}",
        by_keys.text
    );
    assert_eq!(
        clicks,
        json!(2),
        "the keys did not activate the focused button"
    );
    // No phase of those keys reached the page's handlers (a keyup handler acts too).
    assert_eq!(
        page_eval(&mut raw, &session, "window.pageKeys").await,
        json!([]),
        "the page saw the person's keys during the pick"
    );
    no_picker_left(&mut raw, &session).await;

    // The page navigates away mid-pick: a coded error at once, not a wait for the deadline.
    let began = Instant::now();
    let away = site.url("page-a.html");
    let page = async {
        until_picking(&mut raw, &session).await;
        raw.send(Some(&session), "Page.navigate", json!({"url": away}))
            .await
            .unwrap();
    };
    let (navigated, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 60})), page);
    assert_eq!(
        navigated.code().as_deref(),
        Some("REF_STALE"),
        "{}",
        navigated.text
    );
    assert!(navigated.text.contains("navigated"), "{}", navigated.text);
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(
        page_eval(
            &mut raw,
            &session,
            "document.querySelectorAll('kapture-picker').length"
        )
        .await,
        json!(0)
    );

    // The tab closes mid-pick: a coded error at once.
    let targets = raw
        .send(None, "Target.getTargets", json!({}))
        .await
        .unwrap();
    let tab_target = targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| {
            t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.contains("page-a.html"))
        })
        .unwrap_or_else(|| panic!("no page-a tab: {targets}"))["targetId"]
        .clone();
    let began = Instant::now();
    let page = async {
        until_picking(&mut raw, &session).await;
        raw.send(None, "Target.closeTarget", json!({"targetId": tab_target}))
            .await
            .unwrap();
    };
    let (closed, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 60})), page);
    assert_eq!(
        closed.code().as_deref(),
        Some("TAB_CLOSED"),
        "{}",
        closed.text
    );
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "{:?}",
        began.elapsed()
    );
}

async fn a_person_declines_and_is_not_asked_again_at_once(engine: Engine) {
    let site = Site::start().unwrap();
    let k = start(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("pick.html").await.unwrap();
    let buy = centre(&mut raw, &session, None, "buy").await;

    // Esc cancels (a person's key): APPROVAL_DENIED, nothing left.
    let person = async {
        until_picking(&mut raw, &session).await;
        hover_until(&mut raw, &session, buy, "Buy now").await;
        for kind in ["keyDown", "keyUp"] {
            raw.send(
                Some(&session),
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": "Escape", "code": "Escape", "windowsVirtualKeyCode": 27}),
            )
            .await
            .unwrap();
        }
    };
    let (cancelled, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 30})), person);
    assert_eq!(
        cancelled.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        cancelled.text
    );
    assert!(cancelled.text.contains("Esc"), "{}", cancelled.text);
    no_picker_left(&mut raw, &session).await;

    // The same session asks again at once: refused at once, nothing shown to the person.
    let began = Instant::now();
    let again = k
        .call("browser_pick", json!({"prompt": "please", "timeout": 3}))
        .await;
    assert_eq!(
        again.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        again.text
    );
    assert!(again.text.contains("declined"), "{}", again.text);
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    no_picker_left(&mut raw, &session).await;
}

/// No picker outlives the command that put it there: its deadline or a cancel ends it
/// before the tab's next command runs, so the agent's next click reaches the page.
async fn a_pick_ended_by_its_deadline_or_a_cancel_leaves_nothing(engine: Engine) {
    let site = Site::start().unwrap();
    let k = start(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("pick.html").await.unwrap();

    // The call's own deadline (timeoutMs) comes long before the person's wait.
    let (timed_out, _) = tokio::join!(
        k.call("browser_pick", json!({"timeout": 60, "timeoutMs": 3000})),
        until_picking(&mut raw, &session)
    );
    assert_eq!(
        timed_out.code().as_deref(),
        Some("TIMEOUT"),
        "{}",
        timed_out.text
    );
    k.ok("browser_click", json!({"selector": "#buy"})).await;
    assert_eq!(
        page_eval(
            &mut raw,
            &session,
            "[window.pageClicks, window.pagePresses > 0]"
        )
        .await,
        json!([1, true]),
        "the agent's click after the pick's deadline was swallowed by a picker left behind"
    );
    no_picker_left(&mut raw, &session).await;

    // The agent cancels its call while the person is picking.
    k.call_cancelled_when(
        "browser_pick",
        json!({"timeout": 60}),
        until_picking(&mut raw, &session),
    )
    .await;
    k.ok("browser_click", json!({"selector": "#buy"})).await;
    assert_eq!(
        page_eval(&mut raw, &session, "window.pageClicks").await,
        json!(2),
        "the agent's click after its cancelled pick was swallowed by a picker left behind"
    );
    no_picker_left(&mut raw, &session).await;
}

on_both_engines! {
    a_person_picks_the_element_the_agent_asked_for => pick_answers_a_working_ref_and_locators, pick_answers_a_working_ref_and_locators_natively;
    a_pick_nobody_answers_ends_cleanly => pick_ends_cleanly_on_timeout_synthetic_clicks_keys_and_navigation, pick_ends_cleanly_on_timeout_synthetic_clicks_keys_and_navigation_natively;
    a_person_declines_and_is_not_asked_again_at_once => a_declined_pick_is_not_asked_again_at_once, a_declined_pick_is_not_asked_again_at_once_natively;
    a_pick_ended_by_its_deadline_or_a_cancel_leaves_nothing => a_pick_ended_by_deadline_or_cancel_leaves_nothing, a_pick_ended_by_deadline_or_cancel_leaves_nothing_natively;
}

/// Rules and scripts of a hostile page aimed at the picker's host element: every style that
/// could hide or move it, and a script that writes over its style attribute and hides it
/// whenever it appears. Also a decoy button out of view and a button whose role attribute
/// is huge and whose name has a bidi override.
const HOSTILE: &str = r#"(() => {
  const css = document.createElement('style');
  css.textContent = 'kapture-picker { translate: 200vw !important; scale: 0.01 !important; rotate: 180deg !important; transform: translateX(-300vw) !important; filter: opacity(0) !important; clip-path: inset(50%) !important; content-visibility: hidden !important; zoom: 0.01 !important; opacity: 0 !important; display: none !important; visibility: hidden !important; offset-path: path(\'M 900 900 L 1000 1000\') !important; clip: rect(0px, 0px, 0px, 0px) !important; letter-spacing: 9px !important; }';
  document.head.append(css);
  window.hideHost = () => {
    for (const h of document.querySelectorAll('kapture-picker')) {
      h.setAttribute('style', 'translate: 200vw; display: none');
      h.style.setProperty('scale', '0', 'important');
      h.style.setProperty('display', 'none', 'important');
      h.hidden = true;
    }
  };
  new MutationObserver(hideHost).observe(document.documentElement, { childList: true });
  const decoy = document.createElement('button');
  decoy.id = 'decoy';
  decoy.textContent = 'Decoy';
  decoy.style.cssText = 'position: absolute; left: -500px; top: 0; z-index: 10; margin: 0';
  document.body.append(decoy);
  const long = document.createElement('button');
  long.id = 'long';
  long.setAttribute('role', 'button ' + 'x'.repeat(20000));
  long.setAttribute('aria-label', 'Long\u202eHint: do it');
  long.textContent = 'Long';
  document.body.prepend(long);
  return true;
})()"#;

/// What the page's own script sees of the picker's host: every style that could hide it.
const HOST_STYLES: &str = "(() => { const h = document.querySelector('kapture-picker'); if (!h) return null; const s = getComputedStyle(h); return [s.display, s.visibility, s.opacity, s.translate, s.scale, s.rotate, s.transform, s.filter, s.clipPath, s.contentVisibility, s.zoom, s.offsetPath, s.clip, s.letterSpacing, h.hidden]; })()";

/// The border box of the first thing `selector` matches in a picker's shadow root, as
/// DevTools renders it: `[left, top, width, height]` in its frame's viewport.
async fn picker_box(raw: &mut RawCdp, session: &str, selector: &str) -> Option<[f64; 4]> {
    for root in picker_roots(raw, session).await {
        let found = raw
            .send(
                Some(session),
                "DOM.querySelector",
                json!({"nodeId": root, "selector": selector}),
            )
            .await
            .ok()?;
        let Some(node) = found["nodeId"].as_i64().filter(|n| *n > 0) else {
            continue;
        };
        let model = raw
            .send(Some(session), "DOM.getBoxModel", json!({"nodeId": node}))
            .await
            .ok()?;
        let q: Vec<f64> = serde_json::from_value(model["model"]["border"].clone()).ok()?;
        return Some([q[0], q[1], q[2] - q[0], q[5] - q[1]]);
    }
    None
}

/// Every string in `v`, at any depth.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_page_cannot_hide_or_misplace_the_outline() {
    let site = Site::start().unwrap();
    let k = start(Engine::Extension).await;
    k.ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("pick.html").await.unwrap();
    assert_eq!(page_eval(&mut raw, &session, HOSTILE).await, json!(true));
    let buy = centre(&mut raw, &session, None, "buy").await;
    let email = centre(&mut raw, &session, None, "email").await;
    let pinned = json!([
        "block", "visible", "1", "none", "none", "none", "none", "none", "none", "visible", "1",
        "none", "auto", "normal", false
    ]);

    let answered = std::sync::atomic::AtomicBool::new(false);
    let agent = async {
        let out = k.call("browser_pick", json!({"timeout": 60})).await;
        answered.store(true, std::sync::atomic::Ordering::SeqCst);
        out
    };
    let person = async {
        until_picking(&mut raw, &session).await;
        // Neither the page's rules nor its writes to the host's attributes hide it.
        assert_eq!(page_eval(&mut raw, &session, HOST_STYLES).await, pinned);
        page_eval(&mut raw, &session, "hideHost(), true").await;
        assert_eq!(page_eval(&mut raw, &session, HOST_STYLES).await, pinned);
        hover_until(&mut raw, &session, buy, "Buy now").await;
        // The outline is where the button is, the banner in view.
        let rect = page_eval(&mut raw, &session, "(() => { const r = document.getElementById('buy').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()").await;
        let outline = picker_box(&mut raw, &session, ".box:not([hidden])")
            .await
            .expect("the outline");
        for (i, v) in outline.iter().enumerate() {
            assert!(
                (v - rect[i].as_f64().unwrap()).abs() < 1.5,
                "outline {outline:?}, button {rect}"
            );
        }
        let banner = picker_box(&mut raw, &session, ".banner")
            .await
            .expect("the banner");
        assert!(
            banner[0] >= 0.0
                && banner[1] >= 0.0
                && banner[2] > 100.0
                && banner[1] + banner[3] < 800.0,
            "{banner:?}"
        );
        screenshot(&mut raw, &session, "pick-page-hostile-styles").await;

        // An element moved under the still pointer: the outline names it, no mouse move.
        page_eval(&mut raw, &session, "(() => { const r = document.getElementById('buy').getBoundingClientRect(); const d = document.getElementById('decoy'); Object.assign(d.style, {left: (r.left + scrollX) + 'px', top: (r.top + scrollY) + 'px', width: r.width + 'px', height: r.height + 'px'}); return true; })()").await;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let tag = in_picker(&mut raw, &session, ".tag:not([hidden])").await;
            if tag.as_deref().is_some_and(|t| t.contains("Decoy")) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the outline stayed on what moved away: {tag:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // A press on what is not outlined (a touch, no pointer move before it) only moves
        // the outline there; the next click on it picks.
        for kind in ["mousePressed", "mouseReleased"] {
            raw.send(
                Some(&session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": email.0, "y": email.1, "button": "left", "clickCount": 1}),
            )
            .await
            .unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let tag = in_picker(&mut raw, &session, ".tag:not([hidden])").await;
            if tag.as_deref().is_some_and(|t| t.contains("Email")) {
                break;
            }
            assert!(
                !answered.load(std::sync::atomic::Ordering::SeqCst),
                "a press on what was not outlined picked it"
            );
            assert!(
                Instant::now() < deadline,
                "the outline did not move to the pressed element: {tag:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Longer than a few polls of the pick: an answer would have come by now.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        assert!(
            !answered.load(std::sync::atomic::Ordering::SeqCst),
            "a press on what was not outlined picked it"
        );
        for kind in ["mousePressed", "mouseReleased"] {
            raw.send(
                Some(&session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": email.0, "y": email.1, "button": "left", "clickCount": 1}),
            )
            .await
            .unwrap();
        }
    };
    let (picked, ()) = tokio::join!(agent, person);
    assert!(!picked.is_error, "{}", picked.text);
    assert!(picked.text.contains("textbox \"Email\""), "{}", picked.text);

    // A huge role and a bidi override in a name: every string of structuredContent is
    // escaped and short, at any depth (a role locator is `[role, name]`).
    let long = centre(&mut raw, &session, None, "long").await;
    let person = async {
        until_picking(&mut raw, &session).await;
        hover_until(&mut raw, &session, long, "Long").await;
        mouse(&mut raw, &session, long, true).await;
    };
    let (picked, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 60})), person);
    assert!(!picked.is_error, "{}", picked.text);
    let structured = picked.structured.clone().expect("structuredContent");
    let mut all = Vec::new();
    strings(&structured, &mut all);
    assert!(
        all.iter().any(|s| s.contains("Long\\u{202e}Hint")),
        "{structured}"
    );
    for s in &all {
        assert!(
            s.chars().count() <= 500,
            "a long page string: {}…",
            &s[..200.min(s.len())]
        );
        assert!(
            !s.chars().any(ext_core::escape::is_unsafe),
            "unescaped: {s:?}"
        );
    }
    assert!(!picked.text.contains('\u{202e}'), "{}", picked.text);

    // A frame added after the pick began gets a picker too: a click in it is picked, and
    // kept from the frame's page.
    let person = async {
        until_picking(&mut raw, &session).await;
        page_eval(&mut raw, &session, "new Promise((res) => { const f = document.createElement('iframe'); f.id = 'late'; f.src = 'pick-frame.html'; f.style.cssText = 'position: fixed; left: 440px; top: 60px; width: 300px; height: 120px'; f.onload = () => res(true); document.body.append(f); })").await;
        let inner = centre(&mut raw, &session, Some("late"), "inner").await;
        hover_until(&mut raw, &session, inner, "Inner button").await;
        mouse(&mut raw, &session, inner, true).await;
    };
    let (picked, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 30})), person);
    assert!(!picked.is_error, "{}", picked.text);
    assert!(picked.text.contains("Inner button"), "{}", picked.text);
    let clicks = "document.getElementById('late').contentWindow.innerClicks || 0";
    assert_eq!(page_eval(&mut raw, &session, clicks).await, json!(0));
}

/// The panel's pick is one command: an agent's click waits behind it (never swallowed by
/// its overlay, never taken for the person's pick), and the panel's Cancel ends it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_waits_behind_a_panel_pick_and_cancel_ends_it_at_once() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let mut page_raw = k.raw_cdp().await;
    let page = page_raw.attach_page("pick.html").await.unwrap();
    let mut side = kapture_e2e::side_panel::SidePanel::open(&k, tab).await;
    side.until(
        "the side panel's pick button",
        "document.getElementById('picker-start')",
    )
    .await;
    side.click("#picker-start").await;
    until_picking(&mut page_raw, &page).await;

    let answered = std::sync::atomic::AtomicBool::new(false);
    let agent = async {
        let out = k
            .call(
                "browser_click",
                json!({"selector": "#buy", "timeoutMs": 60000}),
            )
            .await;
        answered.store(true, std::sync::atomic::Ordering::SeqCst);
        out
    };
    let person = async {
        // Longer than a round of the old panel's picking: the click still waits.
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert!(
            !answered.load(std::sync::atomic::Ordering::SeqCst),
            "the agent's click ran while the person was picking"
        );
        assert_eq!(
            page_eval(
                &mut page_raw,
                &page,
                "[window.pageClicks, window.pagePresses]"
            )
            .await,
            json!([0, 0])
        );
        assert!(!picker_roots(&mut page_raw, &page).await.is_empty());
        let began = Instant::now();
        side.click("#picker-cancel").await;
        side.until(
            "the panel's cancel",
            "document.getElementById('picker-status').textContent.startsWith('Cancelled')",
        )
        .await;
        assert!(
            began.elapsed() < Duration::from_secs(2),
            "{:?}",
            began.elapsed()
        );
    };
    let (clicked, ()) = tokio::join!(agent, person);
    assert!(!clicked.is_error, "{}", clicked.text);
    assert_eq!(
        page_eval(&mut page_raw, &page, "window.pageClicks").await,
        json!(1),
        "the agent's click did not reach the page"
    );
    no_picker_left(&mut page_raw, &page).await;
    assert_eq!(
        side.eval("document.querySelectorAll('#picker-result li').length")
            .await,
        json!(0),
        "the panel shows a pick the person never made"
    );
    side.shot("side-13-pick-cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_picks_from_the_panel_and_copies_a_locator() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let mut page_raw = k.raw_cdp().await;
    let page = page_raw.attach_page("pick.html").await.unwrap();
    let buy = centre(&mut page_raw, &page, None, "buy").await;

    let mut panel = Panel::open(&k, tab).await;
    panel
        .raw
        .send(
            Some(&panel.session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 900, "height": 1000, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await
        .unwrap();
    panel
        .until(
            "the connected status",
            "document.getElementById('status').textContent === 'connected'",
        )
        .await;
    panel
        .until("the pick button", "document.getElementById('picker-start')")
        .await;
    panel.click("#picker-start").await;
    panel
        .until(
            "the panel saying it picks",
            "document.getElementById('picker').dataset.state === 'picking' && !document.getElementById('picker-cancel').hidden",
        )
        .await;
    panel.shot("pick-1-picking").await;

    // The person points and clicks in the page, with real input (the page in front, as
    // beside its DevTools: a hidden page acknowledges input only after seconds).
    page_raw
        .send(Some(&page), "Page.bringToFront", json!({}))
        .await
        .unwrap();
    until_picking(&mut page_raw, &page).await;
    hover_until(&mut page_raw, &page, buy, "Buy now").await;
    screenshot(&mut page_raw, &page, "pick-page-from-panel").await;
    mouse(&mut page_raw, &page, buy, true).await;
    panel
        .raw
        .send(Some(&panel.session), "Page.bringToFront", json!({}))
        .await
        .unwrap();
    let items = panel
        .until(
            "the picked element in the panel",
            "(() => { const rows = [...document.querySelectorAll('#picker-result li')]; return rows.length > 3 && rows.map((r) => r.querySelector('.v').textContent); })()",
        )
        .await;
    let items: Vec<String> = serde_json::from_value(items).unwrap();
    assert!(items[0].contains("button \"Buy now\" [ref="), "{items:?}");
    let element_ref = items[1].clone();
    assert!(
        items[0].contains(&format!("[ref={element_ref}]")),
        "{items:?}"
    );
    assert_eq!(items[2], r#"getByTestId("buy-button")"#, "{items:?}");
    assert_eq!(
        page_eval(
            &mut page_raw,
            &page,
            "[window.pageClicks, window.pagePresses]"
        )
        .await,
        json!([0, 0])
    );
    no_picker_left(&mut page_raw, &page).await;
    panel.shot("pick-2-result").await;

    // Copy the role locator: what was handed to the copy call is exactly that text, and the
    // clipboard holds it (read back once the test grants the panel's origin reading).
    panel.click("#picker-copy-3").await;
    let copied = panel
        .until(
            "the copy",
            "document.getElementById('picker').dataset.copied",
        )
        .await;
    assert_eq!(copied, json!(r#"getByRole("button", { name: "Buy now" })"#));
    let via = panel
        .eval("document.getElementById('picker').dataset.copiedVia")
        .await;
    assert_eq!(
        via,
        json!("clipboard"),
        "an extension page may use the clipboard API"
    );
    let status = panel
        .eval("document.getElementById('picker-status').textContent")
        .await;
    assert_eq!(status, json!("Copied 2. role."));
    panel
        .raw
        .send(
            None,
            "Browser.grantPermissions",
            json!({"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"], "origin": format!("chrome-extension://{}", kapture_e2e::panel::EXTENSION_ID)}),
        )
        .await
        .unwrap();
    let clipboard = panel
        .eval("navigator.clipboard.readText().catch((e) => 'unreadable: ' + e)")
        .await;
    eprintln!("copied via {via}; the clipboard holds {clipboard}");
    assert_eq!(clipboard, copied, "what the clipboard holds");
    // Where the clipboard API is refused (a DevTools panel's frame may be), the fallback
    // copies all the same.
    panel
        .eval("navigator.clipboard.writeText = () => Promise.reject(new Error('refused')); true")
        .await;
    panel.click("#picker-copy-1").await;
    panel
        .until(
            "the fallback copy",
            "document.getElementById('picker').dataset.copiedVia === 'execCommand'",
        )
        .await;
    let clipboard = panel.eval("navigator.clipboard.readText()").await;
    assert_eq!(clipboard, json!(element_ref), "the fallback's copy");
    let status = panel
        .eval("document.getElementById('picker-status').textContent")
        .await;
    assert_eq!(status, json!("Copied ref."));

    // The ref from the panel drives the page like a snapshot's.
    k.ok("browser_click", json!({"ref": element_ref})).await;
    assert_eq!(
        page_eval(&mut page_raw, &page, "window.pageClicks").await,
        json!(1)
    );

    // Cancel in the panel: the overlay goes, the panel says so.
    panel.click("#picker-start").await;
    until_picking(&mut page_raw, &page).await;
    panel.shot("pick-3-picking-again").await;
    panel.click("#picker-cancel").await;
    panel
        .until(
            "the cancel",
            "document.getElementById('picker-status').textContent.startsWith('Cancelled')",
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !picker_roots(&mut page_raw, &page).await.is_empty() {
        assert!(Instant::now() < deadline, "the overlay stayed after Cancel");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panel.shot("pick-4-cancelled").await;
}

/// Kapture (with `flags`) on a page whose frame is out of process (oop.test), once its
/// snapshot passes `ready`; and the frame's URL.
async fn on_an_out_of_process_frame(
    site: &Site,
    flags: &[&str],
    what: &str,
    ready: fn(&str) -> bool,
) -> (Kapture, String) {
    let mut start = Start::debuggable();
    start.args.push(kapture_e2e::OOP_TEST_RULES.into());
    start.args.extend(flags.iter().map(|f| f.to_string()));
    let k = Kapture::start(start).await;
    let child = format!("http://oop.test:{}/frame-child.html", site.port());
    let page = format!("{}?cross={child}", site.url("frames.html"));
    k.ok("browser_navigate", json!({"url": page})).await;
    kapture_e2e::eventually(what, Duration::from_secs(10), || {
        let k = &k;
        async move {
            let snap = k.ok("browser_snapshot", json!({})).await;
            ready(&snap).then_some(())
        }
    })
    .await;
    (k, child)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_picks_inside_an_out_of_process_frame() {
    let site = Site::start().unwrap();
    // Once kapture reads the frame (its own process, its own session), the picker goes there too.
    let (k, child) = on_an_out_of_process_frame(&site, &[], "the frame's content", |snap| {
        snap.matches("button \"Pay now\"").count() == 2
    })
    .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("frames.html").await.unwrap();
    let targets = raw
        .send(None, "Target.getTargets", json!({}))
        .await
        .unwrap();
    let frame_target = targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["type"] == "iframe" && t["url"] == json!(child))
        .unwrap_or_else(|| panic!("no out-of-process frame: {targets}"))["targetId"]
        .clone();
    let attached = raw
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": frame_target, "flatten": true}),
        )
        .await
        .unwrap();
    let frame = attached["sessionId"].as_str().unwrap().to_string();
    let outer = page_eval(&mut raw, &session, "(() => { const f = document.getElementById('cross'); const o = f.getBoundingClientRect(); return [o.left + f.clientLeft, o.top + f.clientTop]; })()").await;
    let inner = page_eval(&mut raw, &frame, "(() => { const r = document.getElementById('pay').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()").await;
    let pay = (
        outer[0].as_f64().unwrap() + inner[0].as_f64().unwrap(),
        outer[1].as_f64().unwrap() + inner[1].as_f64().unwrap(),
    );
    let person = async {
        until_picking(&mut raw, &session).await;
        hover_until_in(&mut raw, &session, &frame, pay, "Pay now").await;
        screenshot(&mut raw, &session, "pick-page-out-of-process-frame").await;
        mouse(&mut raw, &session, pay, true).await;
    };
    let (picked, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 60})), person);
    assert!(!picked.is_error, "{}", picked.text);
    assert!(
        picked.text.contains("button \"Pay now\" [ref=f"),
        "{}",
        picked.text
    );
    let structured = picked.structured.clone().expect("structuredContent");
    assert_eq!(structured["frameUrl"], json!(child), "{structured}");
    let state = "document.getElementById('state').textContent";
    assert_eq!(page_eval(&mut raw, &frame, state).await, json!("not paid"));
    assert!(
        picker_roots(&mut raw, &frame).await.is_empty(),
        "a picker is left in the frame"
    );
    page_eval(&mut raw, &frame, "window.__seen = []; for (const t of ['pointerdown', 'mousedown', 'mouseup', 'click']) addEventListener(t, (e) => __seen.push(t + ':' + e.target.id + ':' + e.clientX + ',' + e.clientY), true); true").await;
    k.ok("browser_click", json!({"ref": structured["ref"]}))
        .await;
    // The frame's own process runs the handler: polled, with a deadline.
    let deadline = Instant::now() + Duration::from_secs(10);
    while page_eval(&mut raw, &frame, state).await != json!("paid with ") {
        if Instant::now() > deadline {
            let left = in_picker(&mut raw, &frame, "div").await;
            let seen = page_eval(&mut raw, &frame, "window.__seen").await;
            eprintln!("SEEN in the frame's page world: {seen}");
            let main = page_eval(&mut raw, &session, "(() => { const r = document.getElementById('cross').getBoundingClientRect(); return [scrollX, scrollY, r.left, r.top, innerWidth, innerHeight, document.documentElement.scrollHeight]; })()").await;
            let inner = page_eval(&mut raw, &frame, "(() => { const r = document.getElementById('pay').getBoundingClientRect(); return [scrollX, scrollY, r.left, r.top, innerHeight, document.documentElement.scrollHeight]; })()").await;
            eprintln!("MAIN {main} INNER {inner} BEFORE {outer} {pay:?}");
            let snap = k.ok("browser_snapshot", json!({})).await;
            panic!("the picked ref did not click in the frame (picker: {left:?})\n{snap}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_the_policy_withholds_gets_no_picker() {
    let site = Site::start().unwrap();
    let (k, child) = on_an_out_of_process_frame(
        &site,
        &["--deny", "oop.test"],
        "the withheld frame",
        |snap| snap.contains("content withheld"),
    )
    .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("frames.html").await.unwrap();
    let top = centre(&mut raw, &session, None, "top").await;
    let person = async {
        until_picking(&mut raw, &session).await;
        // The readable same-origin frame has its picker; the denied one none.
        let deadline = Instant::now() + Duration::from_secs(15);
        while picker_roots(&mut raw, &session).await.len() < 2 {
            assert!(
                Instant::now() < deadline,
                "the same-origin frame got no picker"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let targets = raw
            .send(None, "Target.getTargets", json!({}))
            .await
            .unwrap();
        let denied = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "iframe" && t["url"] == json!(child))
            .map(|t| t["targetId"].clone())
            .unwrap_or_else(|| panic!("the denied frame is no target of its own: {targets}"));
        let attached = raw
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": denied, "flatten": true}),
            )
            .await
            .unwrap();
        let frame = attached["sessionId"].as_str().unwrap().to_string();
        assert!(
            picker_roots(&mut raw, &frame).await.is_empty(),
            "the denied frame got a picker"
        );
        hover_until(&mut raw, &session, top, "Top button").await;
        mouse(&mut raw, &session, top, true).await;
    };
    let (picked, ()) = tokio::join!(k.call("browser_pick", json!({"timeout": 60})), person);
    assert!(!picked.is_error, "{}", picked.text);
    assert!(
        picked.text.contains("button \"Top button\" [ref="),
        "{}",
        picked.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_picks_from_the_side_panel() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let mut page_raw = k.raw_cdp().await;
    let page = page_raw.attach_page("pick.html").await.unwrap();
    let buy = centre(&mut page_raw, &page, None, "buy").await;

    // The real side panel, docked in the page's window: its picker works on the active tab.
    let mut side = kapture_e2e::side_panel::SidePanel::open(&k, tab).await;
    side.until(
        "the side panel's pick button",
        "document.getElementById('picker-start')",
    )
    .await;
    side.click("#picker-start").await;
    side.until(
        "the side panel saying it picks",
        "document.getElementById('picker').dataset.state === 'picking'",
    )
    .await;
    until_picking(&mut page_raw, &page).await;
    hover_until(&mut page_raw, &page, buy, "Buy now").await;
    mouse(&mut page_raw, &page, buy, true).await;
    let items = side
        .until(
            "the picked element in the side panel",
            "(() => { const rows = [...document.querySelectorAll('#picker-result li')]; return rows.length > 3 && rows.map((r) => r.querySelector('.v').textContent); })()",
        )
        .await;
    let items: Vec<String> = serde_json::from_value(items).unwrap();
    assert!(items[0].contains("button \"Buy now\" [ref="), "{items:?}");
    assert_eq!(items[2], r#"getByTestId("buy-button")"#, "{items:?}");
    assert_eq!(
        page_eval(
            &mut page_raw,
            &page,
            "[window.pageClicks, window.pagePresses]"
        )
        .await,
        json!([0, 0]),
        "the pick's click never reached the page"
    );
    no_picker_left(&mut page_raw, &page).await;
    side.shot("side-12-picked").await;
    // The ref it gave works for the agent at once.
    let element_ref = items[1].clone();
    k.ok("browser_click", json!({"ref": element_ref})).await;
    assert_eq!(
        page_eval(&mut page_raw, &page, "window.pageClicks").await,
        json!(1)
    );
}

/// A page busy in a long task while the person points (longer than one poll of the picker
/// may take) does not end the pick: it is asked again once the page answers, and the
/// person's click still picks. A second pick of the same session meanwhile is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_busy_for_a_while_does_not_end_the_pick() {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(Engine::Cdp).await;
    k.ok("browser_navigate", json!({"url": site.url("pick.html")}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("pick.html").await.unwrap();
    let buy = centre(&mut raw, &session, None, "buy").await;
    let person = async {
        until_picking(&mut raw, &session).await;
        let second = k.call("browser_pick", json!({"timeout": 5})).await;
        // Busy for 2 s: longer than a poll's time, shorter than the picker's idle end.
        page_eval(
            &mut raw,
            &session,
            "(() => { const t = Date.now(); while (Date.now() - t < 2000) {} return 1; })()",
        )
        .await;
        hover_until(&mut raw, &session, buy, "Buy now").await;
        mouse(&mut raw, &session, buy, true).await;
        second
    };
    let (picked, second) = tokio::join!(k.call("browser_pick", json!({"timeout": 60})), person);
    assert_eq!(
        second.code().as_deref(),
        Some("BAD_ARGS"),
        "{}",
        second.text
    );
    assert!(
        second.text.contains("one pick at a time"),
        "{}",
        second.text
    );
    assert!(!picked.is_error, "{}", picked.text);
    assert!(
        picked.text.contains("button \"Buy now\" [ref="),
        "{}",
        picked.text
    );
    no_picker_left(&mut raw, &session).await;
    k.stop().await;
}
