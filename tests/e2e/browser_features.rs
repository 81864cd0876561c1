//! Everything beyond page reading and clicking, each on a page built for it: dialogs,
//! uploads, downloads, network, cookies and storage, emulation, drag, scroll, coordinate
//! input, PDFs, popups, internal pages and crashes.

use std::time::Duration;

use kapture_e2e::{eventually, Engine, Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

fn out_of(k: &Kapture) -> impl std::future::Future<Output = serde_json::Value> + '_ {
    k.eval("document.getElementById('out').textContent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_never_hang_and_are_answered() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("dialogs.html")}))
        .await;
    let stopped = k.ok("browser_click", json!({"selector": "#confirm"})).await;
    assert!(
        stopped.contains("a confirm dialog is open: \"Delete it?\"")
            && stopped.contains("browser_handle_dialog"),
        "{stopped}"
    );
    // Other commands on the tab say the same, at once.
    let blocked = k.ok("browser_evaluate", json!({"function": "1"})).await;
    assert!(
        blocked.starts_with("Stopped: a confirm dialog is open"),
        "{blocked}"
    );
    let answered = k
        .ok("browser_handle_dialog", json!({"accept": false}))
        .await;
    assert_eq!(answered, "The confirm dialog \"Delete it?\" was dismissed");
    assert_eq!(out_of(&k).await, "cancelled");

    k.ok("browser_click", json!({"selector": "#prompt"})).await;
    k.ok(
        "browser_handle_dialog",
        json!({"accept": true, "promptText": "Ada"}),
    )
    .await;
    assert_eq!(out_of(&k).await, "name: Ada");

    let alert = k.ok("browser_click", json!({"selector": "#alert"})).await;
    assert!(
        alert.contains("an alert dialog is open: \"Hello from alert\""),
        "{alert}"
    );
    k.ok("browser_handle_dialog", json!({"accept": true})).await;
    assert_eq!(out_of(&k).await, "alert done");
    assert_eq!(
        k.fails("browser_handle_dialog", json!({"accept": true}))
            .await,
        "BAD_ARGS"
    );

    // A dialog a timer opens stops the command that is waiting at that moment.
    k.eval("() => { setTimeout(() => alert('later'), 100); }")
        .await;
    let waiting = k
        .ok(
            "browser_wait_for",
            json!({"text": "never", "timeoutMs": 20000}),
        )
        .await;
    assert!(
        waiting.contains("an alert dialog is open: \"later\""),
        "{waiting}"
    );
    k.ok("browser_handle_dialog", json!({"accept": true})).await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_can_be_answered_automatically() {
    let site = Site::start().unwrap();
    let mut opts = Start::default();
    opts.args.extend(["--dialog".into(), "accept".into()]);
    let k = Kapture::start(opts).await;
    k.ok("browser_navigate", json!({"url": site.url("dialogs.html")}))
        .await;
    let auto = k.ok("browser_click", json!({"selector": "#confirm"})).await;
    assert!(auto.contains("was accepted automatically"), "{auto}");
    assert_eq!(out_of(&k).await, "confirmed");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_set_real_files_and_answer_file_choosers() {
    let site = Site::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Uploads come only from folders the person allowed (attacks_files tests the rest).
    let mut opts = Start::default();
    opts.args
        .extend(["--upload-dir".into(), dir.path().display().to_string()]);
    let k = Kapture::start(opts).await;
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "twelve bytes").unwrap();
    let path = file.display().to_string();
    k.ok("browser_navigate", json!({"url": site.url("upload.html")}))
        .await;
    k.ok(
        "browser_file_upload",
        json!({"selector": "#doc", "paths": [path]}),
    )
    .await;
    assert_eq!(out_of(&k).await, "notes.txt:12");
    let click = k.ok("browser_click", json!({"selector": "#choose"})).await;
    assert!(click.contains("A file chooser is open"), "{click}");
    k.ok("browser_file_upload", json!({"paths": [path, path]}))
        .await;
    assert_eq!(out_of(&k).await, "notes.txt:12,notes.txt:12");
    assert_eq!(
        k.fails(
            "browser_file_upload",
            json!({"selector": "#doc", "paths": ["/no/such/file.txt"]})
        )
        .await,
        "BAD_ARGS"
    );
    assert_eq!(
        k.fails(
            "browser_file_upload",
            json!({"selector": "#choose", "paths": [path]})
        )
        .await,
        "NOT_INTERACTABLE"
    );
    k.stop().await;
}

kapture_e2e::on_both_engines! {
    downloads_land_complete_in_kaptures_folder_on => downloads_land_complete_in_kaptures_folder, downloads_land_complete_in_kaptures_folder_natively;
    a_download_url_is_a_web_url_on => a_download_url_is_a_web_url, a_download_url_is_a_web_url_natively;
    a_download_redirected_to_a_denied_origin_is_cancelled_on => a_download_redirected_to_a_denied_origin_is_cancelled, a_download_redirected_to_a_denied_origin_is_cancelled_natively;
    a_download_its_call_no_longer_follows_is_cancelled_on => a_download_its_call_no_longer_follows_is_cancelled, a_download_its_call_no_longer_follows_is_cancelled_natively;
    a_download_by_element_is_judged_as_the_click_it_is_on => a_download_by_element_is_judged_as_the_click_it_is, a_download_by_element_is_judged_as_the_click_it_is_natively;
}

/// A download whose call ended unanswered (here: its time ran out while the server was
/// still answering) is cancelled: nobody follows or judges it any more, and an agent told
/// TIMEOUT never finds its file later.
async fn a_download_its_call_no_longer_follows_is_cancelled_on(engine: Engine) {
    let site = Site::start().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let dir = downloads.path().display().to_string();
    let k = Kapture::launch_on_with(engine, &["--download-dir", &dir]).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("download.html")}),
    )
    .await;
    let slow = site.url("attachment/slow.csv?delay=2500");
    let out = k
        .call("browser_download", json!({"url": slow, "timeoutMs": 800}))
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("TIMEOUT"),
        "{engine:?}: {}",
        out.text
    );
    // The slow answer comes 2.5 s after the request: watched well past it.
    let listed = || -> Vec<_> {
        std::fs::read_dir(downloads.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect()
    };
    // The browser names the download (its id) only once the server answers, and creates its
    // partial files then (`*.crdownload`, and Chromium's hidden temporaries such as
    // `.org.chromium.Chromium.XXXXXX`): cancelled at once, those may be seen for a moment,
    // never a finished file under a name of its own, and nothing is left.
    let watch_until = std::time::Instant::now() + Duration::from_secs(6);
    while std::time::Instant::now() < watch_until {
        for name in listed() {
            let name = name.to_string_lossy();
            assert!(
                name.ends_with(".crdownload") || name.starts_with('.'),
                "{engine:?}: {name:?} was saved"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(listed().is_empty(), "{engine:?}: {:?} left", listed());
    k.stop().await;
}

/// A download by element is a click on the page: where the page's rules refuse clicks,
/// `browser_download` on a button clicks nothing.
async fn a_download_by_element_is_judged_as_the_click_it_is_on(engine: Engine) {
    let site = Site::start().unwrap();
    let deny = format!("interact@127.0.0.1:{}", site.port());
    let k = Kapture::launch_on_with(engine, &["--deny", &deny]).await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    let out = k
        .call("browser_download", json!({"selector": "#shift"}))
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("POLICY_DENIED"),
        "{engine:?}: {}",
        out.text
    );
    assert_eq!(
        k.eval("document.getElementById('shift').textContent").await,
        "Shift",
        "{engine:?}: nothing was clicked"
    );
    k.stop().await;
}

/// A download is judged on where its file really comes from: an allowed URL that redirects
/// to a denied origin is refused, and no file of it is left in the download folder.
async fn a_download_redirected_to_a_denied_origin_is_cancelled_on(engine: Engine) {
    let site = Site::start().unwrap();
    let elsewhere = Site::start().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let dir = downloads.path().display().to_string();
    let deny = format!("download@127.0.0.1:{}", elsewhere.port());
    let k = Kapture::launch_on_with(engine, &["--download-dir", &dir, "--deny", &deny]).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("download.html")}),
    )
    .await;
    let secret = elsewhere.url("attachment/secret.csv");
    let redirected = site.url(&format!("redirect?to={secret}"));
    let out = k.call("browser_download", json!({"url": redirected})).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(
        out.text.contains(&elsewhere.port().to_string()),
        "{}",
        out.text
    );
    let listed = || -> Vec<_> {
        std::fs::read_dir(downloads.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect()
    };
    // The browser removes what it started writing (its temporary file) as it cancels;
    // then no file may appear, even one the browser still finishes: watched for a moment.
    eventually(
        "the cancelled download's files are gone",
        Duration::from_secs(5),
        || async { listed().is_empty().then_some(()) },
    )
    .await;
    let watch_until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < watch_until {
        assert!(listed().is_empty(), "{:?}", listed());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The same file from the allowed site is delivered.
    let ok = k
        .ok(
            "browser_download",
            json!({"url": site.url("attachment/secret.csv")}),
        )
        .await;
    let path = ok
        .lines()
        .find_map(|l| l.strip_prefix("path: "))
        .expect("a path");
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        "attachment body of secret.csv\n"
    );
    assert_eq!(listed().len(), 1, "{:?}", listed());
    k.stop().await;
}

/// A download URL is a web URL: never a local file (a key, a browser's cookie store) copied
/// into the download folder, whatever the rules allow.
async fn a_download_url_is_a_web_url_on(engine: Engine) {
    let site = Site::start().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let dir = downloads.path().display().to_string();
    let k = Kapture::launch_on_with(engine, &["--download-dir", &dir, "--unsafe-allow-all"]).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("download.html")}),
    )
    .await;
    for url in ["file:///etc/passwd", "chrome://version", "javascript:1"] {
        let out = k.call("browser_download", json!({"url": url})).await;
        let refused = matches!(out.code().as_deref(), Some("BAD_ARGS" | "UNSUPPORTED_PAGE"));
        assert!(refused, "{url}: {}", out.text);
    }
    let delivered: Vec<_> = std::fs::read_dir(downloads.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(delivered.is_empty(), "{delivered:?}");
    k.stop().await;
}

async fn downloads_land_complete_in_kaptures_folder_on(engine: Engine) {
    let site = Site::start().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let dir = downloads.path().display().to_string();
    let k = Kapture::launch_on_with(engine, &["--download-dir", &dir]).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("download.html")}),
    )
    .await;
    let link = k
        .ok("browser_download", json!({"selector": "#report"}))
        .await;
    let path = link
        .lines()
        .find_map(|l| l.strip_prefix("path: "))
        .expect("a path")
        .to_string();
    assert!(
        link.contains("bytes: 29") && link.contains("mimeType: text/plain"),
        "{link}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "Quarterly report\nrevenue: 42\n"
    );
    assert!(path.starts_with(
        &downloads
            .path()
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    ));

    // A URL the server shows as a page (no attachment) is saved as a file too.
    let shown = k
        .ok(
            "browser_download",
            json!({"url": site.url("files/report.txt")}),
        )
        .await;
    let shown_path = shown
        .lines()
        .find_map(|l| l.strip_prefix("path: "))
        .expect("a path");
    assert!(shown_path.ends_with(".txt"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(shown_path).unwrap(),
        "Quarterly report\nrevenue: 42\n"
    );
    let tabs = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        !tabs.contains("report.txt"),
        "no tab was left behind: {tabs}"
    );

    let attachment = k
        .ok(
            "browser_download",
            json!({"url": site.url("attachment/invoice-7.csv")}),
        )
        .await;
    let path = attachment
        .lines()
        .find_map(|l| l.strip_prefix("path: "))
        .unwrap()
        .to_string();
    assert!(path.ends_with("invoice-7.csv"), "{attachment}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "attachment body of invoice-7.csv\n"
    );
    // The same name again does not overwrite.
    let again = k
        .ok("browser_download", json!({"selector": "#attachment"}))
        .await;
    let second = again
        .lines()
        .find_map(|l| l.strip_prefix("path: "))
        .unwrap()
        .to_string();
    assert_ne!(second, path, "{again}");
    assert!(
        second.contains("invoice-7") && std::fs::read_to_string(&path).is_ok(),
        "{again}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_requests_are_listed_with_details_and_secrets_redacted() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("network.html")}))
        .await;
    k.ok("browser_wait_for", json!({"text": "fetched 3"})).await;
    k.ok("browser_click", json!({"selector": "#xhr"})).await;
    k.ok("browser_wait_for", json!({"text": "xhr 200"})).await;
    k.ok("browser_click", json!({"selector": "#missing"})).await;
    k.ok("browser_wait_for", json!({"text": "missing 404"}))
        .await;
    let list = k.ok("browser_network_requests", json!({})).await;
    assert!(
        list.contains("GET http://127.0.0.1:") && list.contains("data.json → 200 Fetch"),
        "{list}"
    );
    assert!(list.contains("report.txt?via=xhr → 200 XHR"), "{list}");
    assert!(list.contains("nope.json → 404"), "{list}");
    let newest = list.lines().nth(1).unwrap();
    assert!(newest.contains("nope.json"), "newest first: {list}");
    let fetch_line = list.lines().find(|l| l.contains("data.json")).unwrap();
    let id = fetch_line
        .split(']')
        .next()
        .unwrap()
        .trim_start_matches('[');
    let detail = k.ok("browser_network_request", json!({"id": id})).await;
    assert!(detail.contains("Authorization: <redacted"), "{detail}");
    assert!(!detail.contains("s3cr3t-token"), "{detail}");
    assert!(detail.contains("\"note\": \"test data\""), "{detail}");
    let filtered = k
        .ok("browser_network_requests", json!({"filter": "report.txt"}))
        .await;
    assert!(filtered.starts_with("1 of 1 requests"), "{filtered}");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_and_storage_round_trip() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    k.ok(
        "browser_cookies",
        json!({"action": "set", "name": "session", "value": "abc123"}),
    )
    .await;
    assert_eq!(k.eval("document.cookie").await, "session=abc123");
    let listed = k
        .ok(
            "browser_cookies",
            json!({"action": "get", "name": "session"}),
        )
        .await;
    // One `- name=value` line per cookie (a cookie's name never starts a line).
    assert!(listed.contains("\n- session=abc123"), "{listed}");
    k.ok(
        "browser_cookies",
        json!({"action": "delete", "name": "session"}),
    )
    .await;
    assert_eq!(k.eval("document.cookie").await, "");

    k.ok(
        "browser_storage",
        json!({"area": "local", "action": "set", "key": "theme", "value": "dark"}),
    )
    .await;
    assert_eq!(k.eval("localStorage.getItem('theme')").await, "dark");
    k.eval("() => { sessionStorage.setItem('step', '2'); }")
        .await;
    assert_eq!(
        k.ok(
            "browser_storage",
            json!({"area": "session", "action": "list"})
        )
        .await,
        "1 keys in sessionStorage:\n- step=2"
    );
    k.ok(
        "browser_storage",
        json!({"area": "local", "action": "clear"}),
    )
    .await;
    assert_eq!(k.eval("localStorage.length").await, 0);
    assert_eq!(
        k.fails("browser_storage", json!({"area": "local", "action": "get"}))
            .await,
        "BAD_ARGS"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resize_emulate_drag_scroll_and_coordinates() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("drag.html")}))
        .await;
    k.ok("browser_resize", json!({"width": 640, "height": 480}))
        .await;
    assert_eq!(k.eval("innerWidth").await, 640);
    k.ok(
        "browser_drag",
        json!({"startSelector": "#card", "endSelector": "#right"}),
    )
    .await;
    assert_eq!(out_of(&k).await, "dropped card in right");

    k.ok("browser_emulate", json!({"colorScheme": "dark"}))
        .await;
    assert_eq!(
        k.eval("matchMedia('(prefers-color-scheme: dark)').matches")
            .await,
        true
    );
    k.ok("browser_emulate", json!({"device": "iPhone 13"}))
        .await;
    assert_eq!(k.eval("screen.width").await, 390);
    assert!(k
        .eval("navigator.userAgent")
        .await
        .as_str()
        .unwrap()
        .contains("iPhone"));
    assert_eq!(
        k.fails("browser_emulate", json!({"device": "Nokia 3310"}))
            .await,
        "BAD_ARGS"
    );
    k.ok(
        "browser_emulate",
        json!({"device": "none", "offline": true}),
    )
    .await;
    assert_eq!(k.eval("navigator.onLine").await, false);
    k.ok("browser_emulate", json!({"offline": false})).await;

    k.ok("browser_navigate", json!({"url": site.url("popup.html")}))
        .await;
    let at = k.eval("() => { const r = document.getElementById('canvas').getBoundingClientRect(); return [r.left + 10, r.top + 20]; }").await;
    k.ok("browser_mouse_click_xy", json!({"x": at[0], "y": at[1]}))
        .await;
    assert_eq!(
        k.eval("document.getElementById('xy').textContent").await,
        "clicked at 10,20"
    );
    k.ok("browser_mouse_move_xy", json!({"x": 5, "y": 5})).await;
    k.ok(
        "browser_scroll",
        json!({"selector": "#scroller", "deltaY": 300}),
    )
    .await;
    let scrolled = eventually(
        "the wheel to scroll the box",
        Duration::from_secs(5),
        || async {
            let top = k
                .eval("document.getElementById('scroller').scrollTop")
                .await
                .as_f64()
                .unwrap_or(0.0);
            (top > 0.0).then_some(top)
        },
    )
    .await;
    assert!(scrolled > 0.0);
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pdf_popups_internal_pages_and_crashes() {
    let site = Site::start().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let mut opts = Start::default();
    opts.args.extend([
        "--download-dir".into(),
        downloads.path().display().to_string(),
        "--chromium-arg=--remote-debugging-port=0".into(),
    ]);
    let k = Kapture::start(opts).await;
    k.ok("browser_navigate", json!({"url": site.url("article.html")}))
        .await;
    let saved = k.ok("browser_pdf_save", json!({})).await;
    let path = saved
        .split("PDF: ")
        .nth(1)
        .unwrap()
        .split(" (")
        .next()
        .unwrap();
    assert!(std::fs::read(path).unwrap().starts_with(b"%PDF"), "{saved}");

    k.ok("browser_navigate", json!({"url": site.url("popup.html")}))
        .await;
    let first = k.ok("browser_click", json!({"selector": "#open"})).await;
    let next = k.ok("browser_tabs", json!({"action": "list"})).await;
    let told = format!("{first}\n{next}");
    let popup: i64 = told
        .split("The page opened new tabs: tab ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("the popup is reported in the next result:\n{told}"));
    let title = eventually("the popup to load", Duration::from_secs(10), || async {
        let t = k.ok("browser_evaluate", json!({"function": "document.readyState === 'complete' && document.title", "tabId": popup})).await;
        (t == "\"Page B\"").then_some(t)
    })
    .await;
    assert_eq!(title, "\"Page B\"");

    assert_eq!(
        k.fails("browser_navigate", json!({"url": "chrome://version"}))
            .await,
        "UNSUPPORTED_PAGE"
    );

    // Crash a tab's renderer through a raw CDP session; another tab keeps working. (A popup
    // shares its opener's renderer, so the victim is a tab of its own.)
    let victim = k.new_tab(&site.url("page-a.html?victim")).await;
    k.ok("browser_tabs", json!({"action": "select", "index": 0}))
        .await;
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("page-a.html?victim").await.unwrap();
    // A crashed page never answers the crash command itself.
    let _ = tokio::time::timeout(
        Duration::from_millis(500),
        raw.send(Some(&session), "Page.crash", json!({})),
    )
    .await;
    let crashed = eventually(
        "the crash to be reported",
        Duration::from_secs(10),
        || async {
            let out = k
                .call(
                    "browser_evaluate",
                    json!({"function": "1", "tabId": victim, "timeoutMs": 3000}),
                )
                .await;
            (out.code().as_deref() == Some("PAGE_CRASHED")).then_some(out.text)
        },
    )
    .await;
    assert!(crashed.contains("crashed"), "{crashed}");
    let other = k
        .ok(
            "browser_evaluate",
            json!({"function": "document.title", "tabId": popup}),
        )
        .await;
    assert_eq!(other, "\"Page B\"", "the other tabs are fine");
    // Navigating the crashed tab brings it back.
    k.ok(
        "browser_navigate",
        json!({"url": site.url("page-b.html"), "tabId": victim}),
    )
    .await;
    k.stop().await;
}

/// The native engine's helper page runs none of the page's scripts: a page that moves itself
/// elsewhere at once is saved as itself, and what it would move to is never fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_native_download_helper_runs_no_page_script() {
    let site = Site::start().unwrap();
    let elsewhere = Site::start().unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let dir = downloads.path().display().to_string();
    let k = Kapture::launch_on_with(Engine::Cdp, &["--download-dir", &dir]).await;
    let moved = elsewhere.url("attachment/moved.csv");
    let page = site.url(&format!("origins/later.html?ms=0&to={moved}"));
    let saved = k.ok("browser_download", json!({"url": page})).await;
    let path = saved
        .lines()
        .find_map(|l| l.strip_prefix("path: "))
        .expect("a path");
    assert!(
        std::fs::read_to_string(path)
            .unwrap()
            .contains("Moves on soon"),
        "{saved}"
    );
    let listed: Vec<_> = std::fs::read_dir(downloads.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!listed.iter().any(|n| n.contains("moved")), "{listed:?}");
    k.stop().await;
}
