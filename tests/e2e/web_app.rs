//! The Test Web App used like a person would: `kapture --http` prints the app link, a second
//! headless Chromium opens it (first with a wrong token), connects, picks tools, fills forms
//! and the JSON editor, sees results with timing, screenshot thumbnails and coded errors,
//! re-runs from the history (kept across reloads) and downloads it as JSON; the JSON editor
//! names arguments the schema does not take. Screenshots in target/app-screenshots/.

use kapture_e2e::http::HttpKapture;
use kapture_e2e::web_app::AppPage;
use serde_json::Value;
use www_test_pages::Site;

/// The text of the element `id`.
fn text(id: &str) -> String {
    format!("document.getElementById('{id}').textContent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_drives_kapture_from_the_test_web_app() {
    let site = Site::start().unwrap();
    let k = HttpKapture::start(&[]).await;
    let token = k.app_url.split("token=").nth(1).unwrap().to_string();
    assert!(!token.is_empty(), "the app URL carries the token");

    // A wrong token: a clear error, and the token leaves the address bar.
    let mut app = AppPage::open(&format!("{}/app?token=not-the-token", k.origin())).await;
    let error = app
        .until(
            "the wrong-token error",
            "(() => { const e = document.getElementById('connect-error'); return !e.hidden && e.textContent; })()",
        )
        .await;
    assert!(
        error.as_str().unwrap().contains("refused the token"),
        "{error}"
    );
    let href = app.eval("location.href").await;
    assert!(
        !href.as_str().unwrap().contains("token"),
        "the token is taken out of the address bar: {href}"
    );
    assert_eq!(app.eval(&text("status")).await, "not connected");
    app.shot("1-wrong-token").await;

    // The right token, pasted, and Enter.
    app.retype("#token", &token).await;
    app.press("Enter", 13).await;
    app.until("connected", &format!("{} === 'connected'", text("status")))
        .await;
    let tools = app
        .until(
            "the tool list",
            "document.querySelectorAll('#tool-list button.tool').length > 20 && document.querySelectorAll('#tool-list button.tool').length",
        )
        .await;
    let session = app.eval(&text("session-id")).await;
    assert!(
        session.as_str().is_some_and(|s| s.len() >= 8),
        "a session id is shown: {session}"
    );
    assert!(app
        .eval(&text("server-name"))
        .await
        .as_str()
        .unwrap()
        .starts_with("kapture"));
    let status = app
        .until(
            "the browser status",
            &format!(
                "{}.includes('kapture') && {}",
                text("browser-status"),
                text("browser-status")
            ),
        )
        .await;
    assert!(status.as_str().unwrap().contains("pid"), "{status}");
    // browser_status names the endpoint and this page's session, the only one open.
    let status = status.as_str().unwrap();
    assert!(
        status.contains(&format!("MCP over HTTP at {}: 1 session open", k.mcp_url)),
        "{status}"
    );
    assert!(
        !status.contains(&token),
        "the token is never shown: {status}"
    );
    app.until(
        "the tab list",
        "document.getElementById('tab-picker').options.length > 1",
    )
    .await;
    app.shot("2-connected").await;
    eprintln!("tools listed: {tools}");

    // browser_navigate from its generated form, timed.
    app.click("button.tool[data-tool='browser_navigate']").await;
    app.until("the url field", "document.getElementById('field-url')")
        .await;
    let page_a = site.url("page-a.html");
    app.retype("#field-url", &page_a).await;
    app.click("#execute").await;
    let status = app
        .until(
            "the navigate result",
            &format!("(() => {{ const t = {}; return t.startsWith('browser_navigate') && t.includes(' ms') && t; }})()", text("result-status")),
        )
        .await;
    let status = status.as_str().unwrap().to_string();
    assert!(status.contains(" · ok · "), "{status}");
    let ms: u64 = status
        .rsplit(" · ")
        .next()
        .and_then(|t| t.trim_end_matches(" ms").parse().ok())
        .unwrap_or_else(|| panic!("a duration in {status}"));
    assert!(ms < 30_000, "{status}");
    let result = app.eval(&text("result")).await;
    let result = result.as_str().unwrap();
    assert!(
        result.contains("Page A") && result.contains(&page_a),
        "the answer names the page it loaded: {result}"
    );
    // The tab picker learned the new title; pick that tab.
    let tab = app
        .until(
            "the navigated tab in the picker",
            "(() => { const o = [...document.getElementById('tab-picker').options].find(o => o.text.includes('Page A')); return o && o.value; })()",
        )
        .await;
    let tab: i64 = tab.as_str().unwrap().parse().unwrap();
    app.eval(&format!("(() => {{ const s = document.getElementById('tab-picker'); s.value = '{tab}'; s.dispatchEvent(new Event('change')); }})()")).await;
    app.shot("3-navigated").await;

    // A screenshot: its thumbnail, opened full size.
    app.click("button.tool[data-tool='browser_take_screenshot']")
        .await;
    let field_tab = app
        .until(
            "the tabId field filled from the picker",
            "document.getElementById('field-tabId')?.value",
        )
        .await;
    assert_eq!(field_tab, Value::String(tab.to_string()));
    app.click("#execute").await;
    app.until(
        "the thumbnail",
        "document.querySelector('#result img.thumb')?.naturalWidth > 100",
    )
    .await;
    app.shot("4-screenshot").await;
    app.click("#result img.thumb").await;
    let full = app
        .until(
            "the full-size view",
            "document.getElementById('viewer').open && document.getElementById('viewer-img').naturalWidth",
        )
        .await;
    assert!(full.as_u64().unwrap() > 300, "full size: {full}");
    app.shot("5-full-size").await;
    app.click("#viewer-close").await;
    app.until(
        "the viewer closed",
        "!document.getElementById('viewer').open",
    )
    .await;

    // browser_snapshot from the JSON editor; the form follows the JSON.
    app.click("button.tool[data-tool='browser_snapshot']").await;
    app.click("#mode-json").await;
    app.until(
        "the JSON editor",
        "!document.getElementById('json-editor').hidden",
    )
    .await;
    // Arguments the tool's schema does not take are named under the editor, and Execute
    // runs nothing until they are fixed.
    app.retype(
        "#args-json",
        &format!("{{\"tabId\": {tab}, \"interactiveOnly\": \"yes\"}}"),
    )
    .await;
    let problem = app
        .until(
            "the schema problem",
            "!document.getElementById('args-error').hidden && document.getElementById('args-error').textContent",
        )
        .await;
    let problem = problem.as_str().unwrap();
    assert!(
        problem.contains("interactiveOnly") && problem.contains("boolean"),
        "{problem}"
    );
    let calls_before = app
        .eval("document.querySelectorAll('#history-rows tr').length")
        .await;
    app.click("#execute").await;
    app.shot("6a-json-invalid").await;
    assert_eq!(
        app.eval("document.querySelectorAll('#history-rows tr').length")
            .await,
        calls_before,
        "nothing ran"
    );
    app.retype(
        "#args-json",
        &format!("{{\"tabId\": {tab}, \"interactiveOnly\": true}}"),
    )
    .await;
    app.until(
        "the problem gone",
        "document.getElementById('args-error').hidden",
    )
    .await;
    app.click("#execute").await;
    let snapshot = app
        .until(
            "the snapshot",
            &format!("(() => {{ const t = {}; return t.startsWith('browser_snapshot') && t.includes(' ms') && document.getElementById('result').textContent; }})()", text("result-status")),
        )
        .await;
    assert!(
        snapshot.as_str().unwrap().contains("[ref="),
        "a snapshot with refs: {snapshot}"
    );
    app.click("#mode-form").await;
    assert_eq!(
        app.eval("[document.getElementById('field-tabId').value, document.getElementById('field-interactiveOnly').checked]").await,
        serde_json::json!([tab.to_string(), true]),
        "the form shows what the JSON said"
    );
    app.shot("6-json-snapshot").await;

    // A failing call: its code and hint.
    app.click("button.tool[data-tool='browser_click']").await;
    app.click("#mode-json").await;
    app.retype(
        "#args-json",
        &format!("{{\"tabId\": {tab}, \"selector\": \"#no-such-element\"}}"),
    )
    .await;
    app.click("#execute").await;
    let code = app
        .until(
            "the error box",
            "document.querySelector('#result .error-box .code')?.textContent",
        )
        .await;
    assert_eq!(code, "SELECTOR_NOT_FOUND");
    let hint = app
        .eval("document.querySelector('#result .error-box .hint')?.textContent")
        .await;
    assert!(
        hint.as_str()
            .is_some_and(|h| h.starts_with("Hint: ") && h.len() > 10),
        "{hint}"
    );
    // Nothing sticks out on the right: the Disconnect button and the widest sections end
    // inside the page (here 1265 px wide beside a scrollbar), and the screenshot shows the
    // whole width.
    let edges = app
        .eval("[document.documentElement.clientWidth, document.documentElement.scrollWidth, ...['disconnect', 'run-section', 'result-section'].map(id => document.getElementById(id).getBoundingClientRect().right), innerWidth]")
        .await;
    let edges: Vec<f64> = edges
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    eprintln!("client width, scroll width, right edges, window width: {edges:?}");
    assert_eq!(
        edges[0], edges[1],
        "the page overflows on the right: {edges:?}"
    );
    assert!(edges[2..5].iter().all(|r| *r <= edges[0]), "{edges:?}");
    let shot = app.shot("7-error").await;
    let png = std::fs::read(&shot).unwrap();
    let png_width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(
        f64::from(png_width),
        edges[5],
        "the screenshot is as wide as the window"
    );

    // Re-run the navigation from the history.
    let rows = app
        .eval("document.querySelectorAll('#history-rows tr').length")
        .await;
    assert_eq!(rows, 4, "navigate, screenshot, snapshot, click");
    app.click("#history-rows tr[data-seq='1'] button.rerun")
        .await;
    app.until(
        "the re-run in the history",
        "document.querySelector('#history-rows tr')?.dataset.seq === '5'",
    )
    .await;
    let rerun = app
        .eval("[...document.querySelector('#history-rows tr').cells].map(c => c.textContent)")
        .await;
    assert_eq!(rerun[2], "browser_navigate");
    assert_eq!(rerun[4], "ok");
    assert!(rerun[3].as_str().unwrap().contains(&page_a), "{rerun}");
    app.shot("8-history").await;

    // Export the history: the downloaded JSON holds every call.
    app.click("#export").await;
    let exported = app.downloaded("kapture-app-history.json").await;
    let doc: Value = serde_json::from_str(&exported).expect("the export is JSON");
    assert_eq!(doc["format"], "kapture-app-history");
    assert_eq!(doc["endpoint"], Value::String(k.mcp_url.clone()));
    assert_eq!(doc["server"]["name"], "kapture");
    let calls = doc["calls"].as_array().unwrap();
    let tools: Vec<&str> = calls.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(
        tools,
        [
            "browser_navigate",
            "browser_take_screenshot",
            "browser_snapshot",
            "browser_click",
            "browser_navigate"
        ]
    );
    let statuses: Vec<&str> = calls
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok", "ok", "ok", "SELECTOR_NOT_FOUND", "ok"]);
    assert_eq!(calls[0]["args"]["url"], Value::String(page_a.clone()));
    assert_eq!(calls[4]["args"], calls[0]["args"]);
    assert!(calls
        .iter()
        .all(|c| c["ms"].as_f64().is_some_and(|ms| ms >= 0.0)));
    assert!(calls[0]["startedAt"].as_str().unwrap().ends_with('Z'));

    // A reload ends the page's session as it leaves (pagehide, keepalive DELETE) and
    // starts one anew: kapture's open sessions do not grow with page loads.
    let first = session.as_str().unwrap().to_string();
    let mut before = first.clone();
    for round in 1..=2 {
        app.eval("location.reload()").await;
        let now = app
            .until(
                &format!("connected after reload {round}"),
                &format!(
                    "{} === 'connected' && {} !== {before:?} && {}",
                    text("status"),
                    text("session-id"),
                    text("session-id")
                ),
            )
            .await;
        let status = app
            .until(
                &format!("one session open after reload {round}"),
                &format!(
                    "(() => {{ document.getElementById('status-refresh').click(); const t = {}; return t.includes(': 1 session open') && t; }})()",
                    text("browser-status")
                ),
            )
            .await;
        assert!(
            status.as_str().unwrap().contains("MCP over HTTP"),
            "{status}"
        );
        before = now.as_str().unwrap().to_string();
        // The history came back with the page: every call, newest first, re-runnable.
        assert_eq!(
            app.eval("[...document.querySelectorAll('#history-rows tr')].map(r => r.dataset.seq)")
                .await,
            serde_json::json!(["5", "4", "3", "2", "1"]),
            "the history after reload {round}"
        );
        assert_eq!(
            app.eval(
                "document.querySelector(\"#history-rows tr[data-seq='1'] button.rerun\").disabled"
            )
            .await,
            Value::Bool(false)
        );
    }
    app.shot("8a-history-after-reload").await;
    let before = first;
    let old = app
        .eval(&format!(
            "fetch('/mcp', {{method: 'POST', headers: {{'Authorization': 'Bearer {token}', 'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream', 'Mcp-Session-Id': '{before}'}}, body: JSON.stringify({{jsonrpc: '2.0', id: 98, method: 'tools/list'}})}}).then(r => r.status)"
        ))
        .await;
    assert_eq!(
        old, 404,
        "the session of the page before the reload was ended"
    );
    let session = app.eval(&text("session-id")).await;

    // Disconnect ends the session (DELETE /mcp).
    app.click("#disconnect").await;
    app.until(
        "disconnected",
        &format!("{} === 'disconnected'", text("status")),
    )
    .await;
    app.shot("9-disconnected").await;
    // kapture no longer knows the session's id.
    let session = session.as_str().unwrap().to_string();
    let after = app
        .eval(&format!(
            "fetch('/mcp', {{method: 'POST', headers: {{'Authorization': 'Bearer {token}', 'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream', 'Mcp-Session-Id': '{session}'}}, body: JSON.stringify({{jsonrpc: '2.0', id: 99, method: 'tools/list'}})}}).then(r => r.status)"
        ))
        .await;
    assert_eq!(after, 404, "the session was deleted");
    assert_eq!(
        k.stderr().matches(&token).count(),
        1,
        "the token is printed once, in the app link"
    );
    drop(app);
    let status = k.stop(std::time::Duration::from_secs(20)).await;
    assert!(status.success(), "kapture's exit on SIGTERM: {status}");
}
