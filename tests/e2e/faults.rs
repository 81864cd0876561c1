//! Faults a real browser session meets: a call the client cancels stops in kapture and in
//! the extension, and the tab's queue is free for the next call at once.

use std::time::{Duration, Instant};

use kapture_e2e::Kapture;
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
