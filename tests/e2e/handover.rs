//! The bridge while kapture runs: the engine chosen again at every call (the extension comes
//! and goes — cut off by a person, its worker dead — and the native engine takes over
//! where kapture holds the browser, as on every default launch), the token
//! rotated on SIGHUP with the extension pairing again, and manual pairing by a one-time code
//! typed in the extension's options page like a person would.

use std::time::Duration;

use kapture_e2e::panel::{Panel, EXTENSION_ID};
use kapture_e2e::{eventually, kapture_bin, process_alive, ref_on, tab_of, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// The first answer of `tool` that says the engine changed to `engine`, polled (each poll is
/// a real call, as an agent would make them).
async fn until_engine_changes(k: &Kapture, engine: &str, limit: Duration) -> String {
    let said = format!("Engine changed: {engine} drives the browser now");
    let deadline = std::time::Instant::now() + limit;
    loop {
        let answer = k.call("browser_tabs", json!({"action": "list"})).await;
        if answer.text.contains(&said) {
            return answer.text;
        }
        if std::time::Instant::now() > deadline {
            let status = k.call("browser_status", json!({})).await;
            let log = k.stderr();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            panic!(
                "no call answered by {engine} within {limit:?}; last answer:\n{}\nstatus:\n{}\nlog (newest first):\n{}",
                answer.text,
                status.text,
                tail.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `--native-standby`: `--load-extension` with the DevTools pipe held beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_native_engine_takes_over_while_the_extension_is_away_and_hands_back() {
    takes_over_and_hands_back(&["--native-standby"]).await
}

/// The extension loaded over the pipe, as for a Chrome that ignores `--load-extension`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_native_engine_takes_over_and_hands_back_with_the_extension_over_the_pipe() {
    takes_over_and_hands_back(&["--extension-over-pipe"]).await
}

/// kapture holds the launched browser by its DevTools pipe, started with `flags`: the native
/// engine stands by, takes over while a person has cut the extension off, and hands back.
async fn takes_over_and_hands_back(flags: &[&str]) {
    let site = Site::start().unwrap();
    let mut start = Start::debuggable();
    start.args.extend(flags.iter().map(|f| f.to_string()));
    let k = Kapture::start(start).await;
    let first = k
        .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let extension_tab = tab_of(&first);
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("engine now: the Kapture extension; native CDP engine")
            && status.contains("standing by"),
        "{status}"
    );
    if flags.is_empty() {
        // The default launch: the extension by the flag, the pipe held beside it.
        assert!(
            status.contains(
                "engine: the Kapture extension, loaded with --load-extension; kapture holds the browser's DevTools pipe"
            ),
            "{status}"
        );
    }
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let old_ref = ref_on(&snapshot, "Go to B");

    // A person cuts the extension's connection in its panel: the next call runs on the
    // native engine and says so.
    let port = k.handshakes()[0]["port"].as_u64().unwrap();
    let mut panel = Panel::open(&k, extension_tab).await;
    let disconnect = format!("button[aria-label=\"Disconnect from port {port}\"]");
    panel
        .until(
            "the connection's Disconnect button",
            &format!("!!document.querySelector({disconnect:?})"),
        )
        .await;
    panel.click(&disconnect).await;
    let changed = until_engine_changes(&k, "the native CDP engine", Duration::from_secs(20)).await;
    assert!(
        changed.contains("tab ids and refs from before are not valid"),
        "{changed}"
    );
    // What the extension handed out is refused, never applied to the native engine's tabs.
    let stale_tab = k
        .call(
            "browser_click",
            json!({"ref": old_ref, "element": "Go to B", "tabId": extension_tab}),
        )
        .await;
    assert!(stale_tab.is_error, "{}", stale_tab.text);
    assert_eq!(
        stale_tab.code().as_deref(),
        Some("TAB_NOT_FOUND"),
        "{}",
        stale_tab.text
    );
    assert!(
        stale_tab.text.contains("was the Kapture extension's"),
        "{}",
        stale_tab.text
    );
    let native = k
        .ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    let native_tab = tab_of(&native);
    assert!(
        native_tab < 0,
        "the native engine's tab ids are apart: {native}"
    );
    let stale_ref = k
        .call(
            "browser_click",
            json!({"ref": old_ref, "element": "Go to B"}),
        )
        .await;
    assert_eq!(
        stale_ref.code().as_deref(),
        Some("REF_STALE"),
        "{}",
        stale_ref.text
    );
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("last engine change: to the native CDP engine, because the Kapture extension is not connected (connection of session")
            && status.contains("dropped: closed by the extension"),
        "{status}"
    );
    assert!(
        status.contains("engine: native CDP engine over"),
        "{status}"
    );

    // The person connects it again: the extension takes over again.
    panel.click("#connect").await;
    let back = until_engine_changes(&k, "the Kapture extension", Duration::from_secs(30)).await;
    assert!(
        back.contains("the browser's Kapture extension connected"),
        "{back}"
    );
    let refused = k
        .call("browser_snapshot", json!({"tabId": native_tab}))
        .await;
    assert_eq!(
        refused.code().as_deref(),
        Some("TAB_NOT_FOUND"),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("was the native CDP engine's"),
        "{}",
        refused.text
    );
    let again = k.new_tab(&site.url("page-a.html")).await;
    assert!(again > 0, "the extension's tab ids: {again}");
    let snapshot = k.ok("browser_snapshot", json!({"tabId": again})).await;
    assert!(snapshot.contains("Go to B"), "{snapshot}");
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("last engine change: to the Kapture extension"),
        "{status}"
    );
    k.stop().await;
}

/// The extension's service worker down for good (stopped again as soon as it starts, as a
/// crashing worker is) with `--native-standby`: after the grace a reloaded extension or a
/// restarted worker gets, the next call runs on the native engine and says so; once the
/// worker may run again, it wakes, pairs again and takes over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_extension_worker_leaves_the_browser_to_the_native_engine_until_it_runs_again() {
    let site = Site::start().unwrap();
    let mut start = Start::debuggable();
    start.args.push("--native-standby".into());
    let k = Kapture::start(start).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let options = format!("chrome-extension://{EXTENSION_ID}/options.html");
    let mut raw = k.raw_cdp().await;
    raw.send(None, "Target.createTarget", json!({"url": options}))
        .await
        .unwrap();
    let session = raw.attach_page("options.html").await.unwrap();
    raw.send(Some(&session), "ServiceWorker.enable", json!({}))
        .await
        .unwrap();
    // The extension's own page stops the workers of its storage partition (Kapture's), again
    // and again, bounded, until told to let it run.
    let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let keep_down = down.clone();
    let stopper = tokio::spawn(async move {
        for _ in 0..600 {
            if !keep_down.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let _ = raw
                .send(Some(&session), "ServiceWorker.stopAllWorkers", json!({}))
                .await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        raw
    });
    let changed = until_engine_changes(&k, "the native CDP engine", Duration::from_secs(30)).await;
    assert!(changed.contains("is not connected"), "{changed}");
    let native = k
        .ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    assert!(tab_of(&native) < 0, "{native}");

    // The worker may run again: its wake alarm (or a person opening the options) starts it.
    down.store(false, std::sync::atomic::Ordering::SeqCst);
    let mut raw = stopper.await.unwrap();
    raw.send(None, "Target.createTarget", json!({"url": options}))
        .await
        .unwrap();
    let back = until_engine_changes(&k, "the Kapture extension", Duration::from_secs(30)).await;
    assert!(
        back.contains("the browser's Kapture extension connected"),
        "{back}"
    );
    let tab = k.new_tab(&site.url("page-a.html")).await;
    assert!(tab > 0, "the extension's tab ids: {tab}");
    k.stop().await;
}

/// The token of the one handshake file in `k`'s runtime folder.
fn token_of(k: &Kapture) -> String {
    k.handshakes()
        .first()
        .and_then(|h| h["token"].as_str().map(str::to_string))
        .expect("a handshake file")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_rotates_the_token_the_extension_pairs_again_and_mcp_goes_on() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let old = token_of(&k);
    let sent = std::process::Command::new("kill")
        .args(["-HUP", &k.pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let new = eventually("a new token announced", Duration::from_secs(10), || async {
        let t = token_of(&k);
        (t != old).then_some(t)
    })
    .await;
    assert_eq!(new.len(), 64);
    // kapture kept serving MCP, and the extension paired again through native messaging.
    assert!(process_alive(k.pid));
    let answer = eventually(
        "a call through the re-paired extension",
        Duration::from_secs(30),
        || async {
            let a = k
                .call("browser_navigate", json!({"url": site.url("page-b.html")}))
                .await;
            (!a.is_error).then_some(a.text)
        },
    )
    .await;
    assert!(answer.contains("Page B"), "{answer}");
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("ended: kapture made a new bridge token (SIGHUP)"),
        "{status}"
    );
    let log = k.stderr();
    assert!(log.contains("SIGHUP: new bridge token"), "{log}");
    assert!(
        !log.contains(&old) && !log.contains(&new),
        "a token reached the log"
    );
    k.stop().await;
}

/// `kapture pair` for the kapture whose runtime folder is `runtime`: its output.
fn kapture_pair(runtime: &std::path::Path) -> String {
    let out = std::process::Command::new(kapture_bin())
        .arg("pair")
        .arg("--runtime-dir")
        .arg(runtime)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The code in `kapture pair`'s output (the indented line).
fn code_in(said: &str) -> String {
    said.lines()
        .map(str::trim)
        .find(|l| l.split('-').count() == 3 && l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no code in {said}"))
        .to_string()
}

/// Type `code` in the options page and press Pair, as a person does; what the page says.
async fn pair_by_hand(page: &mut Panel, code: &str) -> (bool, String) {
    page.eval("document.getElementById('code').value = ''; document.getElementById('said').textContent = ''")
        .await;
    page.type_into("#code", code).await;
    page.click("#pair").await;
    let ok = page
        .until(
            "the pairing's outcome",
            "(() => { const s = document.getElementById('said'); return s.dataset.ok ? s.dataset.ok : ''; })()",
        )
        .await;
    let said = page
        .eval("document.getElementById('said').textContent")
        .await;
    (
        ok == json!("true"),
        said.as_str().unwrap_or_default().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_pairs_by_a_one_time_code_in_the_options_page() {
    let site = Site::start().unwrap();
    // A browser with the extension (and a kapture of its own, found by native messaging)…
    let launcher = Kapture::start(Start::debuggable()).await;
    launcher
        .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    // …and a kapture that native messaging does not report to it (another runtime folder):
    // only a code typed by a person pairs them.
    let lonely = Kapture::start(Start {
        args: ["--browser", "connect", "--browser-wait-ms", "40000"]
            .map(String::from)
            .to_vec(),
        ..Start::default()
    })
    .await;
    let port = lonely.handshakes()[0]["port"].as_u64().unwrap();
    let said = kapture_pair(lonely.runtime_dir.path());
    let code = code_in(&said);
    assert!(code.starts_with(&format!("{port}-")), "{said}");
    assert!(!said.contains(&token_of(&lonely)), "the token was shown");

    let mut raw = launcher.raw_cdp().await;
    let url = format!("chrome-extension://{EXTENSION_ID}/options.html");
    raw.send(None, "Target.createTarget", json!({"url": url}))
        .await
        .unwrap();
    let session = raw.attach_page("options.html").await.unwrap();
    let mut page = Panel { raw, session };
    page.until(
        "the options page",
        "location.protocol === 'chrome-extension:' && !!document.getElementById('code')",
    )
    .await;
    // It says the mode: the shipped extension has the debugger.
    let mode = page
        .until(
            "the options page saying the mode",
            "document.getElementById('mode').dataset.full === 'true' && document.getElementById('mode').textContent",
        )
        .await;
    assert!(
        mode.as_str().unwrap_or_default().starts_with("Full mode"),
        "{mode}"
    );
    // A wrong code is refused and said so.
    let wrong = format!("{port}-2222-2222");
    let (ok, message) = pair_by_hand(&mut page, &wrong).await;
    assert!(!ok && message.contains("does not match"), "{message}");
    // Attempts are spaced: a person retries after a moment.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (ok, message) = pair_by_hand(&mut page, &code.to_lowercase()).await;
    assert!(ok, "{message}");
    assert!(
        message.contains(&format!("paired with the kapture on port {port}")),
        "{message}"
    );
    page.shot("options-paired").await;
    // The extension connects with the token it received: the lonely kapture drives the browser.
    let tab = lonely.new_tab(&site.url("page-b.html")).await;
    let answer = lonely.ok("browser_snapshot", json!({"tabId": tab})).await;
    assert!(answer.contains("Page B"), "{answer}");
    // The code was good once.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (ok, message) = pair_by_hand(&mut page, &code).await;
    assert!(
        !ok && message.contains("no pairing code is pending"),
        "{message}"
    );
    let status: Value = json!(lonely.ok("browser_status", json!({})).await);
    assert!(status.as_str().unwrap().contains("extension: "), "{status}");
    lonely.stop().await;
    launcher.stop().await;
}
