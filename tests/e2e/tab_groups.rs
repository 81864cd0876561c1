//! Where a session's new tabs go (issue 17): the extension puts them in a tab group titled
//! with the session's label; the native engine opens an isolated tab in a browser context
//! of the session's own (cookies apart from the person's), which goes with its last tab;
//! the extension, which cannot make such a context, refuses isolation with UNSUPPORTED.

use kapture_e2e::{on_both_engines, tab_of, Engine, Kapture};
use serde_json::json;
use www_test_pages::Site;

on_both_engines! {
    a_sessions_new_tab_goes_in_its_group => a_sessions_new_tab_goes_in_its_tab_group_on_the_extension, a_sessions_new_tab_names_no_group_natively;
    an_isolated_tab_keeps_its_cookies_apart => an_isolated_tab_is_unsupported_on_the_extension, an_isolated_tab_keeps_its_cookies_apart_natively;
}

async fn a_sessions_new_tab_goes_in_its_group(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-a.html")}),
        )
        .await;
    tab_of_opened(&opened);
    match engine {
        // The stdio client's session is #1; its name is the test client's.
        Engine::Extension => {
            assert!(opened.contains("in the tab group \""), "{opened}");
            assert!(opened.contains(" #1\""), "{opened}");
        }
        // CDP has no tab groups: nothing is claimed.
        Engine::Cdp => assert!(!opened.contains("tab group"), "{opened}"),
    }
    // A second tab of the same session joins the same group (one group per session).
    let again = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-b.html")}),
        )
        .await;
    if engine == Engine::Extension {
        let group = |s: &str| {
            s.split("in the tab group ")
                .nth(1)
                .map(|g| g.split(';').next().unwrap_or_default().to_string())
        };
        assert_eq!(group(&opened), group(&again), "{opened}\n{again}");
    }
    k.stop().await;
}

/// The tab id of a `browser_tabs new` answer (`Opened tab N at …`).
fn tab_of_opened(answer: &str) -> i64 {
    answer
        .strip_prefix("Opened tab ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no tab id in {answer}"))
}

async fn an_isolated_tab_keeps_its_cookies_apart(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let page = site.url("page-a.html");
    let went = k.ok("browser_navigate", json!({"url": page})).await;
    let person = tab_of(&went);
    let set = k
        .ok(
            "browser_evaluate",
            json!({"function": "() => { document.cookie = 'who=person; path=/'; return document.cookie; }", "tabId": person}),
        )
        .await;
    assert!(set.contains("who=person"), "{set}");
    if engine == Engine::Extension {
        let refused = k
            .call(
                "browser_tabs",
                json!({"action": "new", "url": page, "isolated": true}),
            )
            .await;
        assert_eq!(
            refused.code().as_deref(),
            Some("UNSUPPORTED"),
            "{refused:?}"
        );
        k.stop().await;
        return;
    }
    let mut cdp = k.raw_cdp().await;
    let contexts = |v: serde_json::Value| {
        v["browserContextIds"]
            .as_array()
            .map(|a| a.len())
            .unwrap_or(0)
    };
    let before = contexts(
        cdp.send(None, "Target.getBrowserContexts", json!({}))
            .await
            .unwrap(),
    );
    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": page, "isolated": true}),
        )
        .await;
    assert!(opened.contains("own browser context"), "{opened}");
    let isolated = tab_of_opened(&opened);
    let cookies = k
        .ok(
            "browser_evaluate",
            json!({"function": "() => document.cookie || '(none)'", "tabId": isolated}),
        )
        .await;
    assert!(
        cookies.contains("(none)"),
        "the isolated tab saw the person's cookie: {cookies}"
    );
    // Its own cookie stays in its context.
    k.ok(
        "browser_evaluate",
        json!({"function": "() => { document.cookie = 'who=agent; path=/'; return 1; }", "tabId": isolated}),
    )
    .await;
    let mine = k
        .ok(
            "browser_evaluate",
            json!({"function": "() => document.cookie", "tabId": person}),
        )
        .await;
    assert!(
        mine.contains("who=person") && !mine.contains("who=agent"),
        "{mine}"
    );
    let during = contexts(
        cdp.send(None, "Target.getBrowserContexts", json!({}))
            .await
            .unwrap(),
    );
    assert_eq!(during, before + 1);
    // The context goes with its last tab.
    k.ok(
        "browser_tabs",
        json!({"action": "close", "tabId": isolated}),
    )
    .await;
    let after = contexts(
        cdp.send(None, "Target.getBrowserContexts", json!({}))
            .await
            .unwrap(),
    );
    assert_eq!(after, before);
    k.stop().await;
}
