//! Load and size bounds in a real browser: a thousand calls written at once each get their
//! own answer, ten tabs run side by side while each keeps its own order, and oversized
//! pages (30,000 px tall, 200,000 elements) come back capped and marked.

use std::time::{Duration, Instant};

use futures::future::join_all;
use kapture_e2e::{Kapture, Outcome};
use serde_json::{json, Value};
use www_test_pages::Site;

/// kapture's peak resident memory (VmHWM) in MiB.
fn peak_mib(pid: u32) -> u64 {
    kapture_e2e::proc_kib(pid, "VmHWM:") / 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_at_once_each_get_their_own_answer() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    let tab = kapture_e2e::tab_of(
        &k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    let calls = (0..1000).map(|i| {
        let k = &k;
        async move {
            // Reads of two kinds: evaluations on the tab's queue and browser-level tab lists.
            if i % 10 == 9 {
                let out = k.call("browser_tabs", json!({"action": "list"})).await;
                (i, out, None)
            } else {
                let f = format!("() => {i}");
                let out = k
                    .call("browser_evaluate", json!({"function": f, "tabId": tab}))
                    .await;
                (i, out, Some(i))
            }
        }
    });
    let started = Instant::now();
    let answers: Vec<(usize, Outcome, Option<usize>)> = join_all(calls).await;
    let took = started.elapsed();
    assert_eq!(answers.len(), 1000);
    for (i, out, expect) in &answers {
        assert!(!out.is_error, "call {i}: {}", out.text);
        match expect {
            Some(n) => assert_eq!(out.text, n.to_string(), "call {i} got another's answer"),
            None => assert!(out.text.contains("Page A"), "call {i}: {}", out.text),
        }
    }
    eprintln!(
        "1000 calls in {took:?}; kapture peak RSS {} MiB",
        peak_mib(k.pid)
    );
    assert!(peak_mib(k.pid) < 128, "{} MiB", peak_mib(k.pid));
    k.stop().await;
}

/// Start and end times (page clock) of a 400 ms piece of work on `tab`.
async fn timed_work(k: &Kapture, tab: i64) -> (f64, f64) {
    let f = "async () => { const start = Date.now(); await new Promise(r => setTimeout(r, 400)); return [start, Date.now()]; }";
    let out = k
        .ok("browser_evaluate", json!({"function": f, "tabId": tab}))
        .await;
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_tabs_run_side_by_side_and_each_keeps_its_order() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    let mut tabs = Vec::new();
    for i in 0..10 {
        tabs.push(k.new_tab(&site.url(&format!("page-a.html?{i}"))).await);
    }
    // Two pieces of work per tab, all sent at once.
    let work = tabs.iter().flat_map(|t| [*t, *t]).map(|t| {
        let k = &k;
        async move { (t, timed_work(k, t).await) }
    });
    let done: Vec<(i64, (f64, f64))> = join_all(work).await;
    for t in &tabs {
        let mut mine: Vec<(f64, f64)> = done.iter().filter(|d| d.0 == *t).map(|d| d.1).collect();
        mine.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(
            mine[1].0 >= mine[0].1,
            "tab {t} ran two commands at once: {mine:?}"
        );
    }
    // Across tabs the first pieces overlapped: they ran side by side, not one tab after another.
    let firsts: Vec<(f64, f64)> = tabs
        .iter()
        .map(|t| {
            done.iter()
                .filter(|d| d.0 == *t)
                .map(|d| d.1)
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap()
        })
        .collect();
    let latest_start = firsts.iter().map(|f| f.0).fold(f64::MIN, f64::max);
    let earliest_end = firsts.iter().map(|f| f.1).fold(f64::MAX, f64::min);
    assert!(
        latest_start < earliest_end,
        "the tabs' first commands did not overlap: {firsts:?}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_pages_come_back_capped_and_marked() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("huge.html?height=30000")}),
    )
    .await;
    let shot = k
        .call("browser_take_screenshot", json!({"fullPage": true}))
        .await;
    assert!(!shot.is_error, "{}", shot.text);
    assert!(
        shot.text.contains("truncated: the page is"),
        "{}",
        shot.text
    );
    let (mime, image) = shot.images.first().expect("an image");
    assert!(image.len() < 4 << 20, "{} bytes", image.len());
    let (w, h) = if mime == "image/png" {
        kapture_e2e::png_size(image)
    } else {
        kapture_e2e::jpeg_size(image)
    };
    assert!(w <= 1568 && h <= 1568, "{w}x{h}");

    k.ok(
        "browser_navigate",
        json!({"url": site.url("huge.html?nodes=200000")}),
    )
    .await;
    let title = k.eval("document.title").await;
    assert!(
        title.as_str().unwrap_or_default().contains("2000"),
        "{title}"
    );
    let started = Instant::now();
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    eprintln!(
        "200,000-element snapshot: {} chars in {:?}",
        snapshot.len(),
        started.elapsed()
    );
    assert!(
        snapshot.chars().count() <= 26_000,
        "{} chars",
        snapshot.len()
    );
    assert!(
        snapshot.contains("more nodes than one walk reads") && snapshot.contains("(+"),
        "the cuts are marked: {snapshot}"
    );
    let text = k.ok("browser_get_text", json!({})).await;
    assert!(text.chars().count() <= 26_000, "{} chars", text.len());
    assert!(started.elapsed() < Duration::from_secs(60));
    k.stop().await;
}
