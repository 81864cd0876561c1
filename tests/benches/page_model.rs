//! Page-model benchmark: for each test page, the snapshot's bytes and time (median and p90
//! over repeated runs) next to the page's innerText bytes and the raw
//! `Accessibility.getFullAXTree` answer, taken from the same browser over raw CDP.

// A benchmark report is printed for people: stdout is its place.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use kapture_e2e::{Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

const RUNS: usize = 15;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let site = Site::start().expect("test pages");
    let other = Site::start().expect("second origin");
    let k = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "launch".into(),
            "--headless".into(),
            "--chromium-arg=--remote-debugging-port=0".into(),
        ],
        ..Start::default()
    })
    .await;
    k.ok("browser_tabs", json!({"action": "list"})).await;
    let mut raw = k.raw_cdp().await;

    let frames = format!("frames.html?cross={}", other.url("frame-child.html"));
    let pages = [
        ("form", "form.html".to_string()),
        ("1,000-row table", "table.html".to_string()),
        ("article", "article.html".to_string()),
        ("frames", frames),
        ("dialog", "dialog.html".to_string()),
        ("5,000 elements", "big.html".to_string()),
    ];
    println!("page model — snapshot vs raw sizes ({RUNS} runs, after one warm-up)");
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>11} {:>13}",
        "page", "snapshot B", "median ms", "p90 ms", "innerText B", "AX tree B"
    );
    for (name, path) in pages {
        k.ok("browser_navigate", json!({"url": site.url(&path)}))
            .await;
        let first = k.ok("browser_snapshot", json!({})).await;
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            let out = k.call("browser_snapshot", json!({})).await;
            times.push(started.elapsed());
            assert!(!out.is_error, "{}", out.text);
        }
        times.sort();
        let inner = k
            .eval("document.body.innerText.length")
            .await
            .as_u64()
            .unwrap_or(0);
        let session = raw
            .attach_page(path.split('?').next().unwrap_or(&path))
            .await
            .expect("attach");
        let ax = raw
            .answer_bytes(Some(&session), "Accessibility.getFullAXTree", json!({}))
            .await
            .unwrap_or(0);
        println!(
            "{:<16} {:>10} {:>10.1} {:>10.1} {:>11} {:>13}",
            name,
            first.len(),
            percentile(&times, 0.5).as_secs_f64() * 1000.0,
            percentile(&times, 0.9).as_secs_f64() * 1000.0,
            inner,
            ax
        );
    }
    k.stop().await;
}
