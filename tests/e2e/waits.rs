//! How `browser_navigate` waits and retries: `waitUntil` (load, domcontentloaded,
//! networkidle) answered on the page's own events — for back, forward and reload too — and
//! a connection that a restarting local server drops retried and said in the answer.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use kapture_e2e::{Engine, Kapture};
use serde_json::json;
use www_test_pages::Site;

kapture_e2e::on_both_engines! {
    navigate_waits_as_wait_until_says_on => navigate_waits_as_wait_until_says, navigate_waits_as_wait_until_says_natively;
    a_dropped_connection_is_retried_and_said_on => a_dropped_connection_is_retried_and_said, a_dropped_connection_is_retried_and_said_natively;
    history_and_reload_wait_as_wait_until_says_on => history_and_reload_wait_as_wait_until_says, history_and_reload_wait_as_wait_until_says_natively;
}

/// A folder of pages for the waits: one whose image loads late, one that fetches late.
fn pages() -> (tempfile::TempDir, Site) {
    let dir = tempfile::tempdir().unwrap();
    // The image is answered 2.5 s late: `load` waits for it, DOMContentLoaded does not.
    std::fs::write(
        dir.path().join("slow-image.html"),
        "<!doctype html><title>Slow image</title><h1>Parsed</h1><img src=\"/pixel.gif?delay=2500\">",
    )
    .unwrap();
    std::fs::write(dir.path().join("pixel.gif"), b"GIF89a").unwrap();
    // Once loaded, the page fetches data answered 1.2 s later and only then names itself.
    std::fs::write(
        dir.path().join("late-fetch.html"),
        "<!doctype html><title>Waiting</title><h1>Late fetch</h1><script>\
         addEventListener('load', () => setTimeout(() => fetch('/data.txt?delay=1200')\
         .then(r => r.text()).then(t => { document.title = 'Fetched ' + t.trim(); }), 50));\
         </script>",
    )
    .unwrap();
    std::fs::write(dir.path().join("data.txt"), "ok").unwrap();
    // The same two for going back, forward and reloading: their late image and fetch are new
    // URLs at each load (never from the cache, which history loads prefer), and an unload
    // handler keeps each page out of the back/forward cache, so a history step loads it
    // again rather than restoring it as it was.
    std::fs::write(
        dir.path().join("slow-image-again.html"),
        "<!doctype html><title>Slow image</title><h1>Parsed</h1><script>\
         addEventListener('unload', () => {});\
         const img = new Image(); img.src = '/pixel.gif?delay=2500&at=' + Date.now();\
         document.body.append(img);</script>",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("late-fetch-again.html"),
        "<!doctype html><title>Waiting</title><h1>Late fetch</h1><script>\
         addEventListener('unload', () => {});\
         addEventListener('load', () => setTimeout(() => fetch('/data.txt?delay=1200&at=' + Date.now())\
         .then(r => r.text()).then(t => { document.title = 'Fetched ' + t.trim(); }), 50));\
         </script>",
    )
    .unwrap();
    let site = Site::serve_folder(dir.path().to_path_buf()).unwrap();
    (dir, site)
}

async fn navigate_waits_as_wait_until_says_on(engine: Engine) {
    let (_dir, site) = pages();
    let k = Kapture::launch_on(engine).await;
    // The first call also waits for the browser and the tab's debugger: not timed.
    k.ok("browser_navigate", json!({"url": site.url("/data.txt")}))
        .await;
    let url = site.url("/slow-image.html");

    let started = Instant::now();
    let out = k
        .ok(
            "browser_navigate",
            json!({"url": url, "waitUntil": "domcontentloaded"}),
        )
        .await;
    let dcl_ms = started.elapsed().as_millis();
    assert!(out.contains("\"Slow image\""), "{out}");
    assert!(
        dcl_ms < 2_000,
        "domcontentloaded waited for the late image: {dcl_ms} ms"
    );

    let started = Instant::now();
    let out = k.ok("browser_navigate", json!({"url": url})).await;
    let load_ms = started.elapsed().as_millis();
    assert!(out.contains("\"Slow image\""), "{out}");
    assert!(
        load_ms >= 2_300,
        "load answered before the image loaded: {load_ms} ms"
    );

    // `load` answers before the fetch the page starts after it; networkidle after.
    let late = site.url("/late-fetch.html");
    let out = k.ok("browser_navigate", json!({"url": late})).await;
    assert!(out.contains("\"Waiting\""), "{out}");
    let started = Instant::now();
    let out = k
        .ok(
            "browser_navigate",
            json!({"url": late, "waitUntil": "networkidle"}),
        )
        .await;
    let idle_ms = started.elapsed().as_millis();
    assert!(out.contains("\"Fetched ok\""), "{out}");
    assert!(!out.contains("Note:"), "{out}");
    // The fetch (1.2 s) plus 500 ms of quiet, and no fixed wait on top.
    assert!(
        (1_700..5_000).contains(&idle_ms),
        "networkidle took {idle_ms} ms"
    );

    // A bad word is refused with the choices.
    let bad = k
        .call(
            "browser_navigate",
            json!({"url": late, "waitUntil": "soon"}),
        )
        .await;
    assert!(bad.is_error, "{}", bad.text);
    assert!(bad.text.contains("networkidle"), "{}", bad.text);
}

/// `tool` with `args`, timed.
async fn timed(k: &Kapture, tool: &str, args: serde_json::Value) -> (String, u128) {
    let started = Instant::now();
    let out = k.ok(tool, args).await;
    (out, started.elapsed().as_millis())
}

async fn history_and_reload_wait_as_wait_until_says_on(engine: Engine) {
    let (_dir, site) = pages();
    let k = Kapture::launch_on(engine).await;
    let slow = site.url("/slow-image-again.html");
    let late = site.url("/late-fetch-again.html");
    k.ok("browser_navigate", json!({"url": slow})).await;
    k.ok("browser_navigate", json!({"url": late})).await;

    // Back to the slow image: domcontentloaded answers before the image, load after it.
    let (out, ms) = timed(
        &k,
        "browser_navigate_back",
        json!({"waitUntil": "domcontentloaded"}),
    )
    .await;
    assert!(out.contains("\"Slow image\""), "{out}");
    assert!(ms < 2_000, "back waited for the late image: {ms} ms");
    // Forward to the late fetch: networkidle answers once it came and named the page.
    let (out, ms) = timed(
        &k,
        "browser_navigate_forward",
        json!({"waitUntil": "networkidle"}),
    )
    .await;
    assert!(out.contains("\"Fetched ok\""), "{out}");
    assert!(!out.contains("Note:"), "{out}");
    assert!((1_700..5_000).contains(&ms), "networkidle took {ms} ms");
    // The default is still the load event: back waits for the image, forward does not wait
    // for the fetch started after load.
    let (out, ms) = timed(&k, "browser_navigate_back", json!({})).await;
    assert!(out.contains("\"Slow image\""), "{out}");
    assert!(
        ms >= 2_300,
        "back answered before the image loaded: {ms} ms"
    );
    let out = k.ok("browser_navigate_forward", json!({})).await;
    assert!(out.contains("\"Waiting\""), "{out}");

    // Reload: networkidle after the fetch, load before it, domcontentloaded before the image.
    let (out, ms) = timed(&k, "browser_reload", json!({"waitUntil": "networkidle"})).await;
    assert!(out.contains("\"Fetched ok\""), "{out}");
    assert!((1_700..5_000).contains(&ms), "networkidle took {ms} ms");
    let out = k.ok("browser_reload", json!({})).await;
    assert!(out.contains("\"Waiting\""), "{out}");
    k.ok("browser_navigate", json!({"url": slow})).await;
    let (out, ms) = timed(
        &k,
        "browser_reload",
        json!({"waitUntil": "domcontentloaded"}),
    )
    .await;
    assert!(out.contains("\"Slow image\""), "{out}");
    assert!(ms < 2_000, "reload waited for the late image: {ms} ms");

    // A bad word is refused with the choices, here too.
    let bad = k
        .call("browser_navigate_back", json!({"waitUntil": "soon"}))
        .await;
    assert!(bad.is_error, "{}", bad.text);
    assert!(bad.text.contains("networkidle"), "{}", bad.text);
}

/// Requests are closed unanswered for this long after the first one arrives, as by a
/// server restarting: Chrome's own immediate re-send of a request on a pooled connection
/// meets it too, kapture's retry (0.5 s later) does not.
const DOWN_MS: u128 = 300;

/// A server on 127.0.0.1 that is down (closes requests unanswered) for [`DOWN_MS`] after
/// the first request, or for good when `forever`, then serves a page; it counts the
/// requests it closed and those it served.
fn flaky_server(forever: bool) -> (u16, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (dropped, served) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (drops, serves) = (dropped.clone(), served.clone());
    std::thread::spawn(move || {
        let mut first: Option<Instant> = None;
        // Bounded: the test makes a handful of requests.
        for stream in listener.incoming().take(64) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let Ok(n) = stream.read(&mut buf) else {
                continue;
            };
            if n == 0 {
                continue; // a preconnect that sent nothing
            }
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            if !request.starts_with("GET / ") {
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                continue;
            }
            let since = first.get_or_insert_with(Instant::now).elapsed().as_millis();
            if forever || since < DOWN_MS {
                drops.fetch_add(1, Ordering::SeqCst);
                drop(stream); // closed unanswered
                continue;
            }
            serves.fetch_add(1, Ordering::SeqCst);
            let body = "<!doctype html><title>Back up</title><p>served</p>";
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    (port, dropped, served)
}

async fn a_dropped_connection_is_retried_and_said_on(engine: Engine) {
    let k = Kapture::launch_on(engine).await;
    let (port, dropped, served) = flaky_server(false);
    let url = format!("http://127.0.0.1:{port}/");
    let out = k.ok("browser_navigate", json!({"url": url})).await;
    assert!(out.contains("\"Back up\""), "{out}");
    assert!(
        out.contains("Note: retried once after net::ERR_"),
        "the retry is not said: {out}"
    );
    assert!(dropped.load(Ordering::SeqCst) >= 1, "{out}");
    assert_eq!(served.load(Ordering::SeqCst), 1, "{out}");

    // A server that never comes back: a bounded number of retries, then a coded error.
    let (port, _, served) = flaky_server(true);
    let url = format!("http://127.0.0.1:{port}/");
    let out = k.call("browser_navigate", json!({"url": url})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("NAVIGATION_FAILED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("(retried 3 times)"), "{}", out.text);
    assert_eq!(served.load(Ordering::SeqCst), 0);
}
