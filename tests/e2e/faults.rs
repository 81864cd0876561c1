//! Faults a real browser session meets: a call the client cancels stops in kapture and in
//! the extension; a killed service worker resumes its session without running a command
//! twice; a page that makes Chrome drop the debugger gets one re-attach, then a coded
//! error; a frame removed mid-click still gets an answer.

use std::time::{Duration, Instant};

use kapture_e2e::{eventually, tab_of, Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_and_frees_its_tab() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    // A 20 s wait, cancelled as soon as it is sent.
    k.call_and_cancel("browser_wait_for", json!({"time": 20}))
        .await;
    let started = Instant::now();
    assert_eq!(k.eval("document.title").await, "Page A");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the next call on the tab waited {:?}: the cancelled wait kept the queue",
        started.elapsed()
    );
    kapture_e2e::eventually(
        "the journal notes the cancel",
        Duration::from_secs(10),
        || async {
            k.audit_lines()
                .iter()
                .any(|e| e["tool"] == "browser_wait_for" && e["status"] == "cancelled")
                .then_some(())
        },
    )
    .await;
    k.stop().await;
}

/// The kapture log lines saying the debugger left a tab.
fn detaches(k: &Kapture) -> usize {
    k.stderr()
        .lines()
        .filter(|l| l.contains("the debugger left a tab"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_service_worker_resumes_its_session_and_nothing_runs_twice() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let first = k
        .ok("browser_navigate", json!({"url": site.url("faults.html")}))
        .await;
    let tab = tab_of(&first);
    let other = k.new_tab(&site.url("page-a.html")).await;
    // #late appears 8 s from now; the worker is killed while both calls run.
    k.ok(
        "browser_evaluate",
        json!({"function": "appearLater(8000)", "tabId": tab}),
    )
    .await;
    let counter = "() => { window.runs = (window.runs || 0) + 1; document.title = 'hanging'; return new Promise(() => {}); }";
    let mut cdp = k.raw_cdp().await;
    let started = Instant::now();
    let (waited, hung, killed) = tokio::join!(
        k.call(
            "browser_wait_for",
            json!({"selector": "#late", "tabId": tab, "timeoutMs": 30000})
        ),
        k.call(
            "browser_evaluate",
            json!({"function": counter, "tabId": other, "timeoutMs": 30000})
        ),
        async {
            k.until_a_tab_is_titled("hanging").await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            cdp.kill_service_worker().await
        }
    );
    assert_eq!(killed, Ok(1), "one worker killed");
    // The read-only wait was sent again to the resumed worker and saw #late appear.
    assert!(!waited.is_error, "{}", waited.text);
    // The evaluation had reached the worker: not repeated, answered as lost and retryable.
    assert_eq!(
        hung.code().as_deref(),
        Some("EXTENSION_DISCONNECTED"),
        "{}",
        hung.text
    );
    assert!(
        hung.text.contains("may or may not have run"),
        "{}",
        hung.text
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        k.eval_on(other, "window.runs").await,
        json!(1),
        "the evaluation ran once"
    );
    let log = k.stderr();
    assert!(log.contains("session resumed"), "{log}");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_drops_the_debugger_gets_one_reattach_then_a_coded_error() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("faults.html")}))
        .await;
    // One drop: the command that caused it says so; the next one re-attaches and works.
    let dropped = k
        .call(
            "browser_evaluate",
            json!({"function": "dropDebugger(1, 0)"}),
        )
        .await;
    if dropped.is_error {
        assert_eq!(
            dropped.code().as_deref(),
            Some("DEBUGGER_DETACHED"),
            "{}",
            dropped.text
        );
    }
    eventually(
        "the detach to be reported",
        Duration::from_secs(10),
        || async { (detaches(&k) == 1).then_some(()) },
    )
    .await;
    assert_eq!(k.eval("document.title").await, "Faults");

    // A page that keeps dropping it (every 200 ms for 4 s): one re-attach, then a coded
    // error for the cooldown, never a loop.
    let _ = k
        .call(
            "browser_evaluate",
            json!({"function": "dropDebugger(20, 200)"}),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut codes = Vec::new();
    while Instant::now() < deadline {
        let out = k
            .call("browser_evaluate", json!({"function": "document.title"}))
            .await;
        codes.push(out.code().unwrap_or_else(|| "ok".into()));
    }
    assert!(
        codes.iter().all(|c| c == "DEBUGGER_DETACHED" || c == "ok"),
        "{codes:?}"
    );
    assert!(codes.iter().any(|c| c == "DEBUGGER_DETACHED"), "{codes:?}");
    let during = detaches(&k);
    assert!(
        during <= 4,
        "{during} detaches in 3 s of calls: kapture re-attached in a loop ({codes:?})"
    );
    // Once the page stops and the cooldown has passed, the tab works again.
    eventually("the tab to work again", Duration::from_secs(15), || async {
        let out = k
            .call("browser_evaluate", json!({"function": "document.title"}))
            .await;
        (!out.is_error).then_some(())
    })
    .await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_removed_mid_click_ends_the_click_with_an_answer() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("faults.html")}))
        .await;
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let vanish = kapture_e2e::ref_on(&snapshot, "Vanish");
    let started = Instant::now();
    let out = k.call("browser_click", json!({"ref": vanish})).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    if out.is_error {
        let code = out.code().unwrap_or_default();
        assert!(
            !["INTERNAL", "TIMEOUT"].contains(&code.as_str()),
            "{}",
            out.text
        );
    }
    assert_eq!(
        k.eval("document.getElementById('doomed')").await,
        json!(null),
        "the frame is gone"
    );
    let again = k.fails("browser_click", json!({"ref": vanish})).await;
    assert!(
        ["REF_STALE", "SELECTOR_NOT_FOUND"].contains(&again.as_str()),
        "{again}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kapture_and_browser_restarts_are_survived_and_old_tab_ids_refused() {
    let site = Site::start().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let shared = |args: Vec<String>| Start {
        args,
        runtime_dir: Some(runtime.path().to_path_buf()),
        ..Start::default()
    };
    // Launched without the DevTools pipe (`--engine extension`): a browser whose pipe
    // kapture holds closes when kapture dies, even by SIGKILL.
    let mut launch = Start::default().args;
    launch.extend(["--engine".into(), "extension".into()]);
    let first = Kapture::start(shared(launch)).await;
    let tab = tab_of(
        &first
            .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    // kapture crashes; its browser lives on and looks for a server again.
    let browser = first.kill_hard().await;
    assert!(!browser.0.is_empty());
    // A new kapture (new port, new token) in connect mode is found without any human step.
    let connect = vec![
        "--browser".into(),
        "connect".into(),
        "--browser-wait-ms".into(),
        "15000".into(),
    ];
    let second = Kapture::start(shared(connect)).await;
    let started = Instant::now();
    // Not the browser's launcher: this browser's defaults apply (reads allowed, eval not).
    let page = second.ok("browser_snapshot", json!({"tabId": tab})).await;
    assert!(
        page.contains("Page A"),
        "the old browser reconnected to the new kapture: {page}"
    );
    eprintln!("reconnected to the new kapture in {:?}", started.elapsed());
    // The browser dies: a clear error, bounded.
    drop(browser);
    let out = second.call("browser_snapshot", json!({"tabId": tab})).await;
    let code = out.code().unwrap_or_default();
    assert!(
        ["EXTENSION_DISCONNECTED", "NO_BROWSER"].contains(&code.as_str()),
        "{}",
        out.text
    );
    // Another browser comes (launched by a third kapture on the same runtime folder; its
    // extension connects to every kapture it finds).
    let third = Kapture::start(shared(Start::default().args)).await;
    third.ok("browser_tabs", json!({"action": "list"})).await;
    eventually(
        "the new browser to reach the second kapture",
        Duration::from_secs(30),
        || async {
            let out = second.call("browser_tabs", json!({"action": "list"})).await;
            (!out.is_error).then_some(())
        },
    )
    .await;
    // The old browser's tab id is never taken for one of the new browser's tabs.
    let out = second.call("browser_snapshot", json!({"tabId": tab})).await;
    assert_eq!(out.code().as_deref(), Some("TAB_NOT_FOUND"), "{}", out.text);
    // A call without a tab goes to the new browser's active tab, not to the old current tab.
    let went = second
        .ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    assert_ne!(tab_of(&went), tab, "{went}");
    second.stop().await;
    third.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kapture_that_exits_leaves_no_debugger_attached_to_a_browser_it_did_not_launch() {
    let site = Site::start().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let mut start = Start::debuggable();
    start.runtime_dir = Some(runtime.path().to_path_buf());
    // No DevTools pipe held (`--engine extension`), so the browser outlives kapture.
    start.args.extend(["--engine".into(), "extension".into()]);
    let first = Kapture::start(start).await;
    first.ok("browser_tabs", json!({"action": "list"})).await;
    let profile = first.browser_profile();
    let _browser = first.kill_hard().await;
    // A person's browser now, driven by a kapture in connect mode.
    let second = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "connect".into(),
            "--browser-wait-ms".into(),
            "15000".into(),
        ],
        runtime_dir: Some(runtime.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    second
        .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let mut cdp = kapture_e2e::cdp::RawCdp::connect(&profile).await.unwrap();
    let attached = |targets: &serde_json::Value| {
        targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                t["url"].as_str().is_some_and(|u| u.contains("page-a.html"))
                    && t["attached"] == true
            })
    };
    let targets = cdp
        .send(None, "Target.getTargets", json!({}))
        .await
        .unwrap();
    assert!(
        attached(&targets),
        "kapture's debugger is on the page: {targets}"
    );
    // The end of stdin: kapture exits, and the extension lets go of the tab.
    second.stop().await;
    let cdp = tokio::sync::Mutex::new(cdp);
    eventually(
        "the debugger to leave the page",
        Duration::from_secs(10),
        || async {
            let targets = cdp
                .lock()
                .await
                .send(None, "Target.getTargets", json!({}))
                .await
                .ok()?;
            (!attached(&targets)).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_extension_comes_back_to_the_same_tabs() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let tab = tab_of(
        &k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    k.raw_cdp()
        .await
        .reload_extension(kapture_e2e::panel::EXTENSION_ID)
        .await
        .unwrap();
    // The reloaded extension reconnects; the browser and its tabs are the same, so the tab
    // id and the current tab still hold.
    let title = eventually(
        "the extension to be back",
        Duration::from_secs(30),
        || async {
            let out = k
                .call(
                    "browser_evaluate",
                    json!({"function": "document.title", "tabId": tab}),
                )
                .await;
            (!out.is_error).then_some(out.text)
        },
    )
    .await;
    assert!(title.starts_with("\"Page A\""), "{title}");
    assert_eq!(k.eval("document.title").await, "Page A");
    let log = k.stderr();
    assert_eq!(
        log.matches("extension connected").count(),
        2,
        "a new session after the reload:\n{log}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_for_35_s_and_for_6_min_then_commands_work() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    // Idle is what is tested: Chrome stops an extension worker after 30 s without events.
    for idle in [Duration::from_secs(35), Duration::from_secs(6 * 60)] {
        tokio::time::sleep(idle).await;
        let started = Instant::now();
        assert_eq!(k.eval("document.title").await, "Page A", "after {idle:?}");
        eprintln!("after {idle:?} idle the call took {:?}", started.elapsed());
    }
    // The heartbeat (an application message every 20 s) kept the worker and its socket.
    let log = k.stderr();
    assert!(
        !log.contains("extension disconnected"),
        "the worker went away while idle:\n{log}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_blocks_nothing_and_the_end_of_stdin_ends_everything() {
    let site = Site::start().unwrap();
    let mut k = Kapture::launch().await;
    let first = tab_of(
        &k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    let second = k.new_tab(&site.url("page-b.html")).await;
    let long = k.call(
        "browser_wait_for",
        json!({"time": 20, "tabId": first, "timeoutMs": 30000}),
    );
    let others = async {
        k.ping().await; // the long call has been read once this is answered
        let started = Instant::now();
        k.ping().await;
        let ping = started.elapsed();
        let started = Instant::now();
        assert_eq!(k.eval_on(second, "document.title").await, "Page B");
        let call = started.elapsed();
        (ping, call)
    };
    tokio::select! {
        _ = long => panic!("the 20 s wait ended first"),
        (ping, call) = others => {
            assert!(ping < Duration::from_secs(1), "ping waited {ping:?}");
            assert!(call < Duration::from_secs(2), "a call on another tab waited {call:?}");
        }
    }
    // stdin ends while a long call runs: kapture and its browser go, promptly.
    k.send_call("browser_wait_for", json!({"time": 20, "tabId": first}))
        .await;
    k.ping().await;
    let browser = kapture_e2e::descendants_of(k.pid);
    let pid = k.pid;
    let started = Instant::now();
    k.close_stdin().await;
    eventually("kapture to exit", Duration::from_secs(5), || async move {
        (!kapture_e2e::process_alive(pid)).then_some(())
    })
    .await;
    let exited = started.elapsed();
    assert!(exited < Duration::from_secs(2), "exited after {exited:?}");
    eventually("its browser to exit", Duration::from_secs(10), || async {
        browser
            .iter()
            .all(|p| !kapture_e2e::process_alive(*p))
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_cancelling_the_debugging_bar_revokes_that_tab_for_good() {
    // A windowed browser on a real X display, showing the bar as it does for a person.
    let display = kapture_e2e::x11::Display::start().expect("an X display");
    let bin = tempfile::tempdir().unwrap();
    let chromium =
        kapture_e2e::x11::chromium_with_debugging_bar(bin.path(), &kapture_e2e::chromium());
    let site = Site::start().unwrap();
    let k = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "launch".into(),
            "--chromium".into(),
            chromium.display().to_string(),
            "--chromium-arg=--ozone-platform=x11".into(),
            "--chromium-arg=--window-position=0,0".into(),
            "--chromium-arg=--window-size=1280,800".into(),
            // No "unsupported command-line flag" bar in front of the one under test.
            "--chromium-arg=--test-type".into(),
        ],
        env: vec![("DISPLAY".into(), display.name.clone())],
        ..Start::default()
    })
    .await;
    let tab = tab_of(
        &k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    // The bar's blue Cancel button (below the toolbar, whose address may be selected in the
    // same blue), found on the screen and clicked.
    let blue = |[r, g, b]: [u8; 3]| r < 40 && (70..110).contains(&g) && b > 190;
    let (x, y) = eventually("the debugging bar", Duration::from_secs(15), || async {
        display.screenshot().ok()?.find(90..400, 200, blue)
    })
    .await;
    display.click(x, y).unwrap();
    let revoked = eventually("the tab to be revoked", Duration::from_secs(10), || async {
        let out = k
            .call("browser_evaluate", json!({"function": "1", "tabId": tab}))
            .await;
        (out.code().as_deref() == Some("USER_REVOKED")).then_some(out.text)
    })
    .await;
    assert!(revoked.contains("cancelled"), "{revoked}");
    // Never re-attached on its own, whatever comes next.
    for _ in 0..3 {
        assert_eq!(
            k.fails("browser_snapshot", json!({"tabId": tab})).await,
            "USER_REVOKED"
        );
    }
    assert!(
        k.stderr().contains("canceled_by_user"),
        "kapture heard why the debugger left"
    );
    // Another tab is the agent's to use.
    let other = k.new_tab(&site.url("page-b.html")).await;
    assert_eq!(k.eval_on(other, "document.title").await, "Page B");
    k.stop().await;
}

/// A client that sends a progress token (the rmcp client sends one with every request)
/// hears a long call go on: a heartbeat a second, values strictly increasing, one token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_reports_progress_to_a_client_that_asks() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let before = k.progress_heard().len();
    k.ok("browser_wait_for", json!({"time": 2.5})).await;
    let heard = eventually("two heartbeats", Duration::from_secs(10), || {
        let heard: Vec<_> = k.progress_heard().split_off(before);
        async move { (heard.len() >= 2).then_some(heard) }
    })
    .await;
    assert!(
        heard.iter().all(|(token, _, _)| *token == heard[0].0),
        "one call's token: {heard:?}"
    );
    // Heard in tasks of their own, so perhaps out of order: no value twice.
    let mut values: Vec<f64> = heard.iter().map(|h| h.1).collect();
    values.sort_by(f64::total_cmp);
    assert!(
        values.windows(2).all(|w| w[1] > w[0]),
        "progress only grows: {heard:?}"
    );
    assert!(
        heard[0]
            .2
            .starts_with("browser_wait_for: still running after"),
        "{heard:?}"
    );
    k.stop().await;
}
