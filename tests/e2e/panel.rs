//! The Kapture panel, opened as an extension page on a test tab and driven through CDP like
//! a person: connection state, a generated form run, a screenshot thumbnail, the console,
//! history that survives a reload, its JSON export, and kapture's audit journal.
//! Screenshots of each state are saved in target/panel-screenshots/ for people to look at.

use std::time::Duration;

use kapture_e2e::panel::Panel;
use kapture_e2e::{Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_runs_tools_from_the_panel_and_sees_what_happened() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("console.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let Panel { mut raw, session } = Panel::open(&k, tab).await;
    raw.send(
        Some(&session),
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 900, "height": 1100, "deviceScaleFactor": 1, "mobile": false}),
    )
    .await
    .unwrap();
    let mut panel = Panel { raw, session };

    panel
        .until(
            "the connected status",
            "document.getElementById('status').textContent === 'connected'",
        )
        .await;
    panel
        .until(
            "the tab info",
            "document.getElementById('tab-info').textContent.includes('Console')",
        )
        .await;
    panel
        .until(
            "the tool list",
            "document.getElementById('tool').options.length > 20",
        )
        .await;
    panel.shot("1-connected").await;

    // kapture's audit journal: the agent's navigation (made before the panel opened), and
    // new calls as they happen.
    panel
        .until(
            "the journal",
            "document.getElementById('audit-rows').textContent.includes('browser_navigate')",
        )
        .await;
    k.ok("browser_snapshot", json!({})).await;
    let journal = panel
        .until(
            "the snapshot in the journal",
            "(() => { const t = document.getElementById('audit-rows').textContent; return t.includes('browser_snapshot') && t; })()",
        )
        .await;
    assert!(
        journal.as_str().unwrap().contains("allowed"),
        "verdicts show: {journal}"
    );

    // Navigate the other tab from the generated form.
    panel.choose_tool("browser_navigate").await;
    panel
        .until("the url field", "document.getElementById('field-url')")
        .await;
    panel
        .type_into("#field-url", &site.url("page-a.html"))
        .await;
    panel.click("#execute").await;
    let status = panel.until("the navigate result", "(() => { const t = document.getElementById('result-status').textContent; return t.includes(' ms') && t; })()").await;
    assert!(status.as_str().unwrap().starts_with("ok · "), "{status}");
    let result = panel
        .eval("document.getElementById('result').textContent")
        .await;
    assert!(result.as_str().unwrap().contains("page-a.html"), "{result}");
    assert_eq!(
        k.eval("document.title").await,
        "Page A",
        "the agent's tab navigated"
    );
    panel.shot("2-navigated").await;
    // kapture journals what a person ran in the panel too.
    kapture_e2e::eventually(
        "the panel's command in kapture's journal",
        Duration::from_secs(10),
        || async {
            k.audit_lines()
                .iter()
                .any(|e| e["who"] == "person (Kapture panel)" && e["tool"] == "navigate")
                .then_some(())
        },
    )
    .await;

    // A screenshot shows as a thumbnail.
    panel.choose_tool("browser_take_screenshot").await;
    panel.click("#execute").await;
    panel
        .until(
            "the thumbnail",
            "document.getElementById('thumbnail') && document.getElementById('thumbnail').complete",
        )
        .await;
    panel.shot("3-screenshot").await;

    // The console viewer lists what the page logged (before the navigation).
    panel.eval("(() => { const s = document.getElementById('console-level'); s.value = 'warning'; s.dispatchEvent(new Event('change')); })()").await;
    panel.click("#console-refresh").await;
    panel
        .until(
            "the console lines",
            "document.getElementById('console-lines').textContent.includes('warning line')",
        )
        .await;
    panel.shot("4-console").await;

    // History: both commands, by the panel, and the agent's navigation before them.
    let rows = panel.until("two panel rows", "(() => { const t = document.getElementById('history-rows').textContent; return t.includes('navigate') && t.includes('screenshot') && t; })()").await;
    assert!(
        rows.as_str().unwrap().contains("agent"),
        "the agent's command is there too: {rows}"
    );
    panel
        .raw
        .send(Some(&panel.session), "Page.reload", json!({}))
        .await
        .unwrap();
    panel.until("history after a reload", "(() => { const t = document.getElementById('history-rows') && document.getElementById('history-rows').textContent; return t && t.includes('screenshot'); })()").await;
    panel.shot("5-history-after-reload").await;

    let href = panel
        .eval("document.getElementById('export').getAttribute('href')")
        .await;
    let encoded = href.as_str().unwrap().split_once(',').unwrap().1;
    let decoded = panel
        .eval(&format!("decodeURIComponent({encoded:?})"))
        .await;
    let exported: Value =
        serde_json::from_str(decoded.as_str().unwrap()).expect("the export is JSON");
    let methods: Vec<&str> = exported
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["method"].as_str())
        .collect();
    assert!(
        methods.contains(&"navigate") && methods.contains(&"screenshot"),
        "{methods:?}"
    );

    // Narrow and dark: the layout holds.
    panel
        .raw
        .send(
            Some(&panel.session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 400, "height": 1400, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await
        .unwrap();
    panel
        .eval("document.documentElement.classList.add('dark')")
        .await;
    panel.shot("6-narrow-dark").await;
    let widest = panel
        .eval("[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 401).map((e) => e.tagName + '#' + e.id).slice(0, 5).join(' ')")
        .await;
    assert_eq!(widest, json!(""), "nothing wider than 400 px");
    k.stop().await;
}
