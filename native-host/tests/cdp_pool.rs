//! The native CDP engine against a remote browser pool: browserless (npm) serving the system
//! Chromium, several engines at once, each given a browser of its own by the pool, each
//! driving its pages with ext-core's own `cdp::` functions; one ending leaves the others be.

use std::time::Duration;

use ext_core::cdp;
use ext_core::methods::{Evaluate, Snapshot};
use ext_core::protocol::TabId;
use kapture_e2e::pool::Pool;
use native_host::cdp::Engine;
use serde_json::{json, Value};
use www_test_pages::Site;

async fn eval(engine: &Engine, tab: TabId, function: &str) -> Option<Value> {
    let p: Evaluate = serde_json::from_value(json!({ "function": function })).unwrap();
    engine
        .run(
            tab,
            move |page| async move { cdp::evaluate(&*page, &p).await },
        )
        .await
        .unwrap()
        .value
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_engine_gets_a_browser_of_its_own_from_a_pool() {
    let site = Site::start().unwrap();
    let pool = Pool::start().await;
    let pages = ["page-a.html", "page-b.html", "form.html"];
    let mut engines = Vec::new();
    for page in pages {
        let engine = tokio::time::timeout(
            Duration::from_secs(60),
            Engine::connect(&pool.browser_endpoint()),
        )
        .await
        .expect("the pool answers")
        .expect("the pool gives a browser");
        let tab = engine.new_tab("about:blank").await.unwrap();
        let url = site.url(page);
        engine
            .run(tab, {
                let url = url.clone();
                move |p| async move { cdp::navigate(&*p, &url, Default::default()).await }
            })
            .await
            .unwrap();
        engines.push((engine, tab, url));
    }
    // Each browser holds only its own engine's page: three browsers, not three tabs of one.
    for (engine, tab, url) in &engines {
        let open: Vec<String> = engine
            .pages()
            .await
            .unwrap()
            .into_iter()
            .map(|(_, t)| t.url)
            .filter(|u| u.starts_with("http"))
            .collect();
        assert_eq!(open, vec![url.clone()], "one browser per connection");
        let snap = engine
            .run(*tab, |p| async move {
                cdp::snapshot(&*p, &serde_json::from_value::<Snapshot>(json!({})).unwrap()).await
            })
            .await
            .unwrap()
            .text;
        assert!(snap.contains(url.as_str()), "{snap}");
        assert!(snap.lines().count() > 1, "{snap}");
    }
    // The pool's browsers are separate profiles: what one page stores, another never sees.
    let (first, first_tab, _) = &engines[0];
    eval(
        first,
        *first_tab,
        "() => localStorage.setItem('who', 'first')",
    )
    .await;
    let (second, second_tab, _) = &engines[1];
    // Both pages are on the test site's one origin: in one browser they would share it.
    let seen = eval(second, *second_tab, "() => localStorage.getItem('who')").await;
    assert_eq!(
        seen,
        Some(Value::Null),
        "the second browser's storage is its own"
    );
    let mine = eval(first, *first_tab, "() => localStorage.getItem('who')").await;
    assert_eq!(mine, Some(json!("first")));
    // One engine going away leaves the others driving their browsers.
    let (gone, _, _) = engines.remove(0);
    drop(gone);
    for (engine, tab, _) in &engines {
        assert_eq!(eval(engine, *tab, "() => 6 * 7").await, Some(json!(42)));
    }
}
