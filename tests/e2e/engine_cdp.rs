//! The native engine (`--browser cdp --cdp-endpoint`): kapture runs the executor core itself
//! over a browser's DevTools endpoint — a Chromium the test started, a browser that dies,
//! an endpoint nobody answers, and browsers from a remote pool (browserless).

use std::time::{Duration, Instant};

use kapture_e2e::devtools::DevToolsBrowser;
use kapture_e2e::pool::Pool;
use kapture_e2e::{ref_on, Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

/// The tab id of a `browser_tabs {action: "new"}` answer.
fn opened_tab(answer: &str) -> u64 {
    answer
        .split("Opened tab ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("a tab id in {answer}"))
}

fn cdp_with(endpoint: &str, extra: &[String]) -> Start {
    let mut start = Start::cdp(endpoint);
    start.args.extend(extra.iter().cloned());
    start
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_native_engine_drives_a_devtools_browser_and_leaves_it_running() {
    let site = Site::start().unwrap();
    let elsewhere = Site::start().unwrap();
    let mut browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let k = Kapture::start(cdp_with(
        &endpoint,
        &[
            "--deny".into(),
            format!("navigate@127.0.0.1:{}", elsewhere.port()),
        ],
    ))
    .await;

    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("native CDP engine"), "{status}");
    assert!(status.contains(&endpoint), "{status}");

    let nav = k
        .ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert!(nav.contains("form.html (200) \"Sign up\""), "{nav}");

    // Refs from a snapshot drive typing and clicking, as with the extension.
    let snap = k.ok("browser_snapshot", json!({})).await;
    let name = ref_on(&snap, "Name");
    k.ok("browser_type", json!({"ref": name, "text": "Ada Lovelace"}))
        .await;
    let terms = ref_on(&snap, "I agree");
    k.ok("browser_click", json!({"ref": terms})).await;
    let form = k
        .eval("() => [document.getElementById('name').value, document.getElementById('terms').checked]")
        .await;
    assert_eq!(form, json!(["Ada Lovelace", true]));

    // Tabs are the browser's pages.
    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-a.html")}),
        )
        .await;
    let tab = opened_tab(&opened);
    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        list.contains("Page A") && list.contains("Sign up"),
        "{list}"
    );
    let title = k.eval_on(tab as i64, "() => document.title").await;
    assert_eq!(title, json!("Page A"));
    k.ok("browser_tabs", json!({"action": "close", "tabId": tab}))
        .await;
    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(!list.contains("Page A"), "{list}");
    let out = k.call("browser_snapshot", json!({"tabId": tab})).await;
    // As with the extension: a closed tab's id names no tab (one closing under a command
    // ends it with TAB_CLOSED: errors::closing_a_tab_ends_its_running_command_with_tab_closed_natively).
    assert_eq!(out.code().as_deref(), Some("TAB_NOT_FOUND"), "{}", out.text);

    // kapture's policy, same engine: a denied destination is refused, the page stays.
    let out = k
        .call(
            "browser_navigate",
            json!({"url": elsewhere.url("page-a.html")}),
        )
        .await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    let here = k.eval("() => location.pathname").await;
    assert_eq!(here, json!("/form.html"));

    // Leaving lets go of the browser and its pages: they are not kapture's to close.
    k.stop().await;
    assert!(
        browser.alive(),
        "kapture must not close a browser it did not start"
    );
    let again = Kapture::start(Start::cdp(&endpoint)).await;
    let list = again.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(list.contains("Sign up"), "the page is still open: {list}");
    again.stop().await;
    assert!(browser.alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_browser_at_the_endpoint_or_a_browser_that_dies_is_no_browser_and_kapture_stays() {
    // A port nobody listens on (picked by the OS, then let go).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Pools carry credentials in the endpoint: they are never shown, not to the model, not
    // in the logs.
    let nowhere =
        format!("http://kapture:PASSW9@127.0.0.1:{port}/pool?token=SECRET7&apiKey=KEYV4L");
    let shown = format!("http://127.0.0.1:{port}/pool?…");
    let k = Kapture::start(Start::cdp(&nowhere)).await;
    let started = Instant::now();
    let out = k.call("browser_snapshot", json!({})).await;
    assert_eq!(out.code().as_deref(), Some("NO_BROWSER"), "{}", out.text);
    assert!(
        out.text.contains(&shown),
        "the hint names the endpoint: {}",
        out.text
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered at once, not after a wait: {:?}",
        started.elapsed()
    );
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("not connected"), "{status}");
    assert!(status.contains(&shown), "{status}");
    let stderr = k.stderr();
    for said in [&out.text, &status, &stderr] {
        for secret in ["SECRET7", "PASSW9", "KEYV4L"] {
            assert!(!said.contains(secret), "{secret} shown: {said}");
        }
    }
    k.stop().await;

    let site = Site::start().unwrap();
    let mut browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let k = Kapture::start(Start::cdp(&endpoint)).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    browser.kill();
    let out = k.call("browser_snapshot", json!({})).await;
    assert_eq!(out.code().as_deref(), Some("NO_BROWSER"), "{}", out.text);
    // kapture is still up and says what happened.
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains(&endpoint), "{status}");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kaptures_each_get_a_browser_of_their_own_from_a_pool() {
    let site = Site::start().unwrap();
    let pool = Pool::start().await;
    let endpoint = pool.browser_endpoint();
    let (a, b) = tokio::join!(
        Kapture::start(Start::cdp(&endpoint)),
        Kapture::start(Start::cdp(&endpoint))
    );
    let (na, nb) = tokio::join!(
        a.ok("browser_navigate", json!({"url": site.url("page-a.html")})),
        b.ok("browser_navigate", json!({"url": site.url("page-b.html")}))
    );
    assert!(na.contains("Page A") && nb.contains("Page B"), "{na}\n{nb}");
    let (la, lb) = tokio::join!(
        a.ok("browser_tabs", json!({"action": "list"})),
        b.ok("browser_tabs", json!({"action": "list"}))
    );
    assert!(la.contains("Page A") && !la.contains("Page B"), "{la}");
    assert!(lb.contains("Page B") && !lb.contains("Page A"), "{lb}");
    let snap = b.ok("browser_snapshot", json!({})).await;
    assert!(snap.contains("Page B"), "{snap}");
    a.stop().await;
    b.stop().await;
}

/// Hosted pools give `wss://` URLs: kapture reaches a browser behind TLS, by its WebSocket
/// URL or by asking its `https://` side, trusting the system's roots (here a CA made for
/// the run, named by SSL_CERT_FILE); an untrusted certificate is NO_BROWSER saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_behind_tls_is_reached_by_wss_and_https() {
    let site = Site::start().unwrap();
    let browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let port: u16 = endpoint.rsplit(':').next().unwrap().parse().unwrap();
    let front = kapture_e2e::tls::TlsFront::start(port).await;
    let ws_path = browser_ws_path(port).await;
    let trusted = |endpoint: String| {
        let mut start = Start::cdp(&endpoint);
        start
            .env
            .push(("SSL_CERT_FILE".into(), front.ca_file.display().to_string()));
        start
    };
    for endpoint in [
        format!("wss://127.0.0.1:{}{ws_path}", front.port),
        format!("https://127.0.0.1:{}", front.port),
    ] {
        let k = Kapture::start(trusted(endpoint.clone())).await;
        let nav = k
            .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await;
        assert!(nav.contains("Page A"), "{endpoint}: {nav}");
        k.stop().await;
    }
    // Not trusted: the certificate is refused, said, and kapture stays.
    let k = Kapture::start(Start::cdp(&format!(
        "wss://127.0.0.1:{}{ws_path}",
        front.port
    )))
    .await;
    let out = k.call("browser_snapshot", json!({})).await;
    assert_eq!(out.code().as_deref(), Some("NO_BROWSER"), "{}", out.text);
    assert!(out.text.contains("certificate"), "{}", out.text);
    k.ok("browser_status", json!({})).await;
    k.stop().await;
}

/// The browser's WebSocket path (`/devtools/browser/…`), asked of its plain DevTools port.
async fn browser_ws_path(port: u16) -> String {
    let raw = devtools_http(port, "GET", "/json/version").await;
    let at = raw
        .find("/devtools/browser/")
        .expect("a browser WebSocket URL");
    raw[at..].split('"').next().unwrap().to_string()
}

/// One request to a browser's plain DevTools HTTP side; the answer read until its JSON
/// body is whole (the browser may keep the connection open).
async fn devtools_http(port: u16, method: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&raw).trim_end().ends_with('}') {
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, s.read(&mut buf))
            .await
            .expect("the browser's DevTools answer")
            .unwrap();
        assert!(n > 0, "the answer ended early");
        raw.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&raw).to_string()
}

/// The browser's own pages (settings, history, passwords) are never read or driven, even
/// where the native engine could attach to them and the rules allow everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browsers_own_pages_are_not_read_natively() {
    let browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let port: u16 = endpoint.rsplit(':').next().unwrap().parse().unwrap();
    let k = Kapture::start(cdp_with(&endpoint, &["--unsafe-allow-all".into()])).await;
    // A person's tab on a browser page, opened outside kapture.
    let opened = devtools_http(port, "PUT", "/json/new?chrome://version").await;
    assert!(opened.contains("chrome://version"), "{opened}");
    let index = kapture_e2e::eventually("the tab in the list", Duration::from_secs(10), || {
        let k = &k;
        async move {
            let list = k.ok("browser_tabs", json!({"action": "list"})).await;
            list.lines().position(|l| l.contains("chrome://version"))
        }
    })
    .await;
    k.ok("browser_tabs", json!({"action": "select", "index": index}))
        .await;
    for (tool, args) in [
        ("browser_snapshot", json!({})),
        ("browser_get_text", json!({})),
        ("browser_take_screenshot", json!({})),
        (
            "browser_evaluate",
            json!({"function": "() => document.body.innerText"}),
        ),
    ] {
        let out = k.call(tool, args).await;
        assert_eq!(
            out.code().as_deref(),
            Some("UNSUPPORTED_PAGE"),
            "{tool}: {}",
            out.text
        );
        assert!(!out.text.contains("Command Line"), "{tool}: {}", out.text);
    }
    k.stop().await;
}

/// kapture did not start the browser at an endpoint: it may be a person's own, logged in, so
/// by default it is judged on the own-browser defaults (reads and navigation allowed,
/// changes asked, eval denied), as an extension in a browser kapture did not launch is.
/// `--endpoint-browser throwaway` says it is a pool's or a test's: the launched defaults.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoints_browser_is_judged_as_a_persons_own_unless_said_throwaway() {
    let site = Site::start().unwrap();
    let browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let own = Kapture::start(Start::cdp_as_own(&endpoint)).await;
    let nav = own
        .ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert!(nav.contains("Sign up"), "{nav}");
    let snap = own.ok("browser_snapshot", json!({})).await;
    let terms = ref_on(&snap, "I agree");
    // This client cannot be asked (no elicitation): the ask ends denied, saying so.
    let out = own.call("browser_click", json!({"ref": terms})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    let out = own
        .call("browser_evaluate", json!({"function": "() => 1"}))
        .await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    own.stop().await;

    // Said throwaway: the click runs, and what it did is there to read.
    let test = Kapture::start(Start::cdp(&endpoint)).await;
    let snap = test.ok("browser_snapshot", json!({})).await;
    let terms = ref_on(&snap, "I agree");
    test.ok("browser_click", json!({"ref": terms})).await;
    let checked = test
        .eval("() => document.getElementById('terms').checked")
        .await;
    assert_eq!(checked, json!(true), "the first kapture's click never ran");
    test.stop().await;
}

/// Where downloads go is set browser-wide: on a browser that may be a person's own, kapture
/// never sets it (their own downloads would land in kapture's staging folder, deleted on
/// exit), so browser_download is unsupported there, saying which flag allows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_not_diverted_on_a_persons_own_browser() {
    let site = Site::start().unwrap();
    let browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let downloads = tempfile::tempdir().unwrap();
    let dir = downloads.path().display().to_string();
    let mut own = Start::cdp_as_own(&endpoint);
    own.args.extend([
        "--download-dir".into(),
        dir.clone(),
        "--allow".into(),
        format!("download@127.0.0.1:{}", site.port()),
    ]);
    let own = Kapture::start(own).await;
    let file = site.url("attachment/invoice-7.csv");
    let out = own.call("browser_download", json!({"url": file})).await;
    assert_eq!(out.code().as_deref(), Some("UNSUPPORTED"), "{}", out.text);
    assert!(
        out.text.contains("--endpoint-browser throwaway"),
        "{}",
        out.text
    );
    own.stop().await;

    // Said throwaway, the same download is delivered.
    let test = Kapture::start(cdp_with(&endpoint, &["--download-dir".into(), dir])).await;
    let done = test.ok("browser_download", json!({"url": file})).await;
    assert!(done.contains("invoice-7.csv"), "{done}");
    test.stop().await;
}

/// A person's incognito window (any browser context but the default one) is not kapture's
/// on an endpoint that may be their own browser: the extension, not allowed in incognito by
/// default, never sees it, and neither does the native engine — not listed, no tab id reaches
/// it. A throwaway endpoint (a pool's, whose contexts are made for automation) shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_own_browsers_other_contexts_are_not_reached_a_throwaway_ones_are() {
    const PRIVATE: &str = "Private window 5be1c9";
    let site = Site::start().unwrap();
    let browser = DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    // As the person: an incognito-like context with a page of its own. The context lives as
    // long as this connection, so it stays open for the whole test.
    let mut raw = kapture_e2e::cdp::RawCdp::connect(browser.profile())
        .await
        .unwrap();
    let context = raw
        .send(None, "Target.createBrowserContext", json!({}))
        .await
        .unwrap()["browserContextId"]
        .as_str()
        .expect("a context id")
        .to_string();
    let target = raw
        .send(
            None,
            "Target.createTarget",
            json!({"url": site.url("login.html?private"), "browserContextId": context}),
        )
        .await
        .unwrap()["targetId"]
        .as_str()
        .expect("a target id")
        .to_string();
    let session = raw
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )
        .await
        .unwrap()["sessionId"]
        .as_str()
        .expect("a session")
        .to_string();
    // Marked once the page has loaded (before, the load would replace the mark).
    let script = format!(
        "location.href.includes('login.html') && document.readyState === 'complete' \
         && (document.title = '{PRIVATE}', document.body.textContent = '{PRIVATE}', true)"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let marked = raw
            .send(
                Some(&session),
                "Runtime.evaluate",
                json!({"expression": script, "returnByValue": true}),
            )
            .await
            .unwrap();
        if marked["result"]["value"] == json!(true) {
            break;
        }
        assert!(Instant::now() < deadline, "the private page never loaded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And a page in the default context, which is kapture's to see.
    raw.send(
        None,
        "Target.createTarget",
        json!({"url": site.url("form.html?everyone")}),
    )
    .await
    .unwrap();

    let own = Kapture::start(Start::cdp_as_own(&endpoint)).await;
    let list = kapture_e2e::eventually(
        "the default context's page",
        Duration::from_secs(10),
        || {
            let own = &own;
            async move {
                let list = own.ok("browser_tabs", json!({"action": "list"})).await;
                list.contains("form.html?everyone").then_some(list)
            }
        },
    )
    .await;
    assert!(
        !list.contains(PRIVATE) && !list.contains("login.html?private"),
        "{list}"
    );
    // No tab id reaches it either (ids are small numbers kapture hands out).
    let mut read = 0;
    for tab in 1..=16 {
        let out = own.call("browser_get_text", json!({"tabId": tab})).await;
        assert!(!out.text.contains(PRIVATE), "tab {tab}: {}", out.text);
        read += usize::from(out.code().is_none());
    }
    assert!(read >= 1, "the default context's tabs are read by id");
    own.stop().await;

    let test = Kapture::start(Start::cdp(&endpoint)).await;
    let index =
        kapture_e2e::eventually("the other context's page", Duration::from_secs(10), || {
            let test = &test;
            async move {
                let list = test.ok("browser_tabs", json!({"action": "list"})).await;
                list.lines().position(|l| l.contains(PRIVATE))
            }
        })
        .await;
    test.ok("browser_tabs", json!({"action": "select", "index": index}))
        .await;
    let text = test.ok("browser_get_text", json!({})).await;
    assert!(text.contains(PRIVATE), "{text}");
    test.stop().await;
    drop(raw);
}
