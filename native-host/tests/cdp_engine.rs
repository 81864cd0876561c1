//! The native CDP engine end to end, without the extension: a real headless Chromium
//! started with `--remote-debugging-port=0`, ext-core's own `cdp::` functions (prepare,
//! navigate, snapshot, type, click, evaluate) run through `PageSession` over the engine's
//! WebSocket, a closed tab and a killed browser failing at once with their codes, an
//! out-of-process frame read through its child session, and round trips beside raw CDP.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ext_core::cdp;
use ext_core::methods::{Click, Evaluate, Snapshot, Type};
use ext_core::protocol::{ErrorCode, TabId, WireError};
use kapture_e2e::{eventually, ref_on};
use native_host::cdp::Engine;
use serde_json::{json, Value};
use www_test_pages::Site;

/// A headless Chromium with its DevTools on a port it picked, in a fresh profile.
struct TestBrowser {
    child: Child,
    profile: tempfile::TempDir,
}

impl TestBrowser {
    /// Start one; `oop.test` resolves to 127.0.0.1 (a site of its own, so its frames run in
    /// another process), everything else but loopback to nothing.
    async fn start() -> TestBrowser {
        let profile = tempfile::tempdir().unwrap();
        let rules = kapture_e2e::OOP_TEST_RULES.trim_start_matches("--chromium-arg=");
        let child = Command::new(kapture_e2e::chromium())
            .args(["--headless=new", "--remote-debugging-port=0"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(kapture_e2e::QUIET_CHROMIUM_FLAGS)
            .arg(rules)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        TestBrowser { child, profile }
    }

    /// `http://127.0.0.1:PORT`, the port read from `DevToolsActivePort` once written.
    async fn endpoint(&self) -> String {
        let file = self.profile.path().join("DevToolsActivePort");
        let port = eventually("DevToolsActivePort", Duration::from_secs(20), || {
            let file = file.clone();
            async move {
                let text = std::fs::read_to_string(&file).ok()?;
                let mut lines = text.lines();
                let port = lines.next()?.trim().parse::<u16>().ok()?;
                lines.next()?;
                Some(port)
            }
        })
        .await;
        format!("http://127.0.0.1:{port}")
    }

    fn profile(&self) -> &Path {
        self.profile.path()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for TestBrowser {
    fn drop(&mut self) {
        self.kill();
    }
}

fn args<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

async fn snapshot(engine: &Engine, tab: TabId) -> Result<String, WireError> {
    engine
        .run(tab, |p| async move {
            cdp::snapshot(&*p, &args::<Snapshot>(json!({}))).await
        })
        .await
        .map(|t| t.text)
}

async fn eval(engine: &Engine, tab: TabId, function: &str) -> Result<Option<Value>, WireError> {
    let p: Evaluate = args(json!({ "function": function }));
    engine
        .run(
            tab,
            move |page| async move { cdp::evaluate(&*page, &p).await },
        )
        .await
        .map(|e| e.value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ext_core_drives_a_page_over_the_native_transport() {
    let site = Site::start().unwrap();
    let mut browser = TestBrowser::start().await;
    let engine = Engine::connect(&browser.endpoint().await).await.unwrap();

    // A tab of its own, attached and prepared (Page/Runtime/… enabled, auto-attach on).
    let tab = engine.new_tab("about:blank").await.unwrap();
    let form = site.url("form.html");
    let info = engine
        .run(tab, {
            let form = form.clone();
            move |p| async move { cdp::navigate(&*p, &form, Default::default()).await }
        })
        .await
        .unwrap();
    assert_eq!(
        (info.url.as_str(), info.title.as_str()),
        (form.as_str(), "Sign up")
    );

    // The snapshot shows the page's text, with refs on what can be acted on.
    let snap = snapshot(&engine, tab).await.unwrap();
    assert!(snap.contains("h1 \"Sign up\""), "{snap}");
    let email = ref_on(&snap, "textbox \"Email\"");
    let submit = ref_on(&snap, "button \"Create account\"");

    // Typed text lands in the field, and a click by ref changes the page.
    let p: Type = args(json!({"ref": email, "text": "ada@example.test"}));
    engine
        .run(
            tab,
            move |page| async move { cdp::type_text(&*page, &p).await },
        )
        .await
        .unwrap();
    let typed = eval(&engine, tab, "() => document.getElementById('email').value").await;
    assert_eq!(typed.unwrap(), Some(json!("ada@example.test")));
    let p: Click = args(json!({ "ref": submit }));
    let clicked = engine
        .run(tab, move |page| async move { cdp::click(&*page, &p).await })
        .await
        .unwrap();
    assert!(!clicked.navigated, "{clicked:?}");
    let result = eval(
        &engine,
        tab,
        "() => document.getElementById('result').textContent",
    )
    .await
    .unwrap()
    .unwrap();
    let sent: Value = serde_json::from_str(result.as_str().unwrap()).unwrap();
    assert_eq!(sent["email"], "ada@example.test", "{result}");
    // A page exception comes back coded, through the same table as the extension's.
    let thrown = eval(&engine, tab, "() => { throw new Error('boom') }").await;
    assert_eq!(thrown.unwrap_err().code, ErrorCode::EvalFailed);

    round_trips_beside_raw_cdp(&engine, tab, browser.profile(), &form).await;

    // A closed tab answers TAB_CLOSED at once, and so does a call already waiting on it.
    let other = engine.new_tab(&site.url("page-a.html")).await.unwrap();
    let waiting = tokio::spawn({
        let engine = engine.clone();
        async move {
            let never = "() => new Promise(() => { window.waiting = true; })";
            eval(&engine, other, never).await
        }
    });
    // That call is running in the page when the tab closes.
    eventually("the call in the page", Duration::from_secs(10), || {
        let engine = engine.clone();
        async move {
            let v = eval(&engine, other, "() => window.waiting === true").await;
            (v.ok()? == Some(json!(true))).then_some(())
        }
    })
    .await;
    engine.close_tab(other).await.unwrap();
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("a call on a closed tab hangs")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::TabClosed, "{err:?}");
    let err = eval(&engine, other, "() => 1").await.unwrap_err();
    assert_eq!(err.code, ErrorCode::TabClosed, "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // The first tab is untouched.
    assert_eq!(
        eval(&engine, tab, "() => 6 * 7").await.unwrap(),
        Some(json!(42))
    );

    // A killed browser fails a waiting call and the next one at once, with NO_BROWSER.
    let waiting = tokio::spawn({
        let engine = engine.clone();
        async move {
            let never = "() => new Promise(() => { window.waiting = true; })";
            eval(&engine, tab, never).await
        }
    });
    eventually("the call in the page", Duration::from_secs(10), || {
        let engine = engine.clone();
        async move {
            let v = eval(&engine, tab, "() => window.waiting === true").await;
            (v.ok()? == Some(json!(true))).then_some(())
        }
    })
    .await;
    browser.kill();
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("a call waiting on a dead browser hangs")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NoBrowser, "{err:?}");
    let err = tokio::time::timeout(Duration::from_secs(5), eval(&engine, tab, "() => 1"))
        .await
        .expect("a call on a dead browser hangs")
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NoBrowser, "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let err = engine.new_tab("about:blank").await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NoBrowser, "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_out_of_process_frame_is_read_through_its_child_session() {
    let site = Site::start().unwrap();
    let browser = TestBrowser::start().await;
    let engine = Engine::connect(&browser.endpoint().await).await.unwrap();
    let origin = format!("http://oop.test:{}", site.port());
    let child = format!("{origin}/frame-child.html");
    let page = format!("{}?cross={child}", site.url("frames.html"));
    let tab = engine.new_tab("about:blank").await.unwrap();
    engine
        .run(tab, move |p| async move {
            cdp::navigate(&*p, &page, Default::default()).await
        })
        .await
        .unwrap();
    // The browser itself runs that frame as a target of its own (out of process).
    eventually(
        "the oop.test frame as a target",
        Duration::from_secs(15),
        || {
            let (engine, child) = (engine.clone(), child.clone());
            async move {
                let res = engine
                    .browser()
                    .call(None, "Target.getTargets", json!({}))
                    .await
                    .ok()?;
                res["targetInfos"]
                    .as_array()?
                    .iter()
                    .any(|t| t["type"] == "iframe" && t["url"] == json!(child))
                    .then_some(())
            }
        },
    )
    .await;
    // Both frames show the same page: the one in the tab's process and the other one,
    // read through the child session Chrome auto-attached for it.
    let snap = eventually("the frame's content", Duration::from_secs(10), || {
        let engine = engine.clone();
        async move {
            let snap = snapshot(&engine, tab).await.ok()?;
            (snap.matches("button \"Pay now\"").count() == 2).then_some(snap)
        }
    })
    .await;
    assert!(!snap.contains("another process"), "{snap}");
    let cross = snap
        .split_once("iframe \"Cross origin\"")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no cross iframe:\n{snap}"));
    assert!(cross.contains(&format!("-> {child}")), "{snap}");
    assert!(cross.contains("h2 \"Inside the frame\""), "{snap}");
    // And driven there: a click by ref inside the out-of-process frame.
    let card = ref_on(cross, "textbox \"Card\"");
    let p: Type = args(json!({"ref": card, "text": "4242"}));
    engine
        .run(
            tab,
            move |page| async move { cdp::type_text(&*page, &p).await },
        )
        .await
        .unwrap();
    let pay = ref_on(cross, "button \"Pay now\"");
    let p: Click = args(json!({ "ref": pay }));
    engine
        .run(tab, move |page| async move { cdp::click(&*page, &p).await })
        .await
        .unwrap();
    let after = snapshot(&engine, tab).await.unwrap();
    let cross = after.split_once("iframe \"Cross origin\"").unwrap().1;
    assert!(cross.contains("paragraph \"paid with 4242\""), "{after}");
}

/// Click and evaluate round trips over the engine beside the same work as raw CDP on the
/// same browser (a printout, not an assertion: `cargo test -- --nocapture` shows it).
async fn round_trips_beside_raw_cdp(engine: &Engine, tab: TabId, profile: &Path, form: &str) {
    const REPS: usize = 30;
    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }
    let mut raw = kapture_e2e::cdp::RawCdp::connect(profile).await.unwrap();
    let session = raw.attach_page("form.html").await.unwrap();
    let s = Some(session.as_str());
    let eval_params =
        |expr: &str| json!({"expression": expr, "returnByValue": true, "awaitPromise": true});
    let mut raw_eval = Vec::new();
    for _ in 0..REPS {
        let t = Instant::now();
        raw.send(s, "Runtime.evaluate", eval_params("1+1"))
            .await
            .unwrap();
        raw_eval.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let rect = "(() => { const r = document.getElementById('terms').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()";
    let mut raw_click = Vec::new();
    for _ in 0..REPS {
        let t = Instant::now();
        let at = raw
            .send(s, "Runtime.evaluate", eval_params(rect))
            .await
            .unwrap();
        let (x, y) = (
            at["result"]["value"][0].clone(),
            at["result"]["value"][1].clone(),
        );
        for kind in ["mousePressed", "mouseReleased"] {
            raw.send(
                s,
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await
            .unwrap();
        }
        raw_click.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // The same raw command through the engine's transport (job hop + socket + route).
    let mut transport_eval = Vec::new();
    for _ in 0..REPS {
        let t = Instant::now();
        engine
            .run(tab, |p| async move {
                use ext_core::cdp::CdpSession;
                p.send(
                    "Runtime.evaluate",
                    json!({"expression": "1+1", "returnByValue": true}),
                )
                .await
            })
            .await
            .unwrap();
        transport_eval.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut tool_eval = Vec::new();
    for _ in 0..REPS {
        let t = Instant::now();
        eval(engine, tab, "1+1").await.unwrap();
        tool_eval.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut tool_click = Vec::new();
    let mut click_commands = 0;
    for _ in 0..REPS {
        let p: Click = args(json!({ "selector": "#terms" }));
        let t = Instant::now();
        click_commands = engine
            .run(tab, move |page| async move {
                let before = page.commands_sent();
                cdp::click(&*page, &p).await?;
                Ok(page.commands_sent() - before)
            })
            .await
            .unwrap();
        tool_click.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (re, rc) = (median(raw_eval), median(raw_click));
    // A click's answer waits out the grace window a navigation has to start in: the raw
    // click with that wait is the like-for-like floor (tests/benches/tools.rs measures it
    // with the settle round trips too).
    let grace = cdp::navigation::GRACE_MS;
    eprintln!("native CDP engine, median of {REPS} on {form}:");
    eprintln!("  evaluate 1+1  raw CDP {re:.2} ms | transport send {:.2} ms | cdp::evaluate {:.2} ms (goal {:.2} ms)",
        median(transport_eval), median(tool_eval), 1.5 * re + 1.0);
    eprintln!(
        "  click         raw CDP {rc:.2} ms (3 commands), + the {grace:.0} ms grace {:.2} ms | cdp::click {:.2} ms \
         ({click_commands} commands, the wait for a navigation or a quiet DOM after it included) (goal {:.2} ms)",
        rc + grace,
        median(tool_click),
        1.5 * (rc + grace) + 1.0
    );
}
