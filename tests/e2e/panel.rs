//! The Kapture panel, opened as an extension page on a test tab and driven through CDP like
//! a person: connection state, a generated form run, a screenshot thumbnail, the console,
//! history that survives a reload, its JSON export, and kapture's audit journal; Accept of a
//! server's looser rules bound to the rules shown, controls that loosen armed where they
//! appear, and the panel back on its own after its worker restarted.
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

/// A kapture in connect mode (it did not launch the browser) with `flags`, on `runtime`.
async fn connecting(runtime: &std::path::Path, flags: &[&str]) -> Kapture {
    let mut args: Vec<String> = ["--browser", "connect", "--browser-wait-ms", "40000"]
        .into_iter()
        .map(String::from)
        .collect();
    args.extend(flags.iter().map(|f| f.to_string()));
    Kapture::start(Start {
        args,
        runtime_dir: Some(runtime.to_path_buf()),
        ..Start::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_holds_only_for_the_rules_shown_controls_wait_where_they_appear_and_the_panel_reconnects(
) {
    use std::os::unix::fs::PermissionsExt;
    let site = Site::start().unwrap();
    let runtime = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap();
    let mut start = Start::debuggable();
    start.runtime_dir = Some(runtime.path().to_path_buf());
    start
        .args
        .extend(["--ask".to_string(), "interact@127.0.0.1".to_string()]);
    let launcher = Kapture::start(start).await;
    let tab = kapture_e2e::tab_of(
        &launcher
            .ok("browser_navigate", json!({"url": site.url("account.html")}))
            .await,
    );

    // The panel as the approval window opens it, watched from its first paint: which
    // controls that loosen or grant came up live.
    let Panel { mut raw, session } = Panel::open(&launcher, tab).await;
    raw.send(Some(&session), "Page.enable", json!({}))
        .await
        .unwrap();
    raw.send(
        Some(&session),
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": kapture_e2e::side_panel::RECORD_ARMING}),
    )
    .await
    .unwrap();
    raw.send(
        Some(&session),
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 900, "height": 1100, "deviceScaleFactor": 1, "mobile": false}),
    )
    .await
    .unwrap();
    raw.send(Some(&session), "Page.reload", json!({}))
        .await
        .unwrap();
    let mut panel = Panel { raw, session };
    panel
        .until(
            "the panel taking clicks",
            "window.__armed && document.getElementById('status').textContent === 'connected' && document.documentElement.dataset.link !== 'down'",
        )
        .await;

    // A kapture that did not launch this browser asks for looser rules: Accept shows, and
    // waits before it takes a click.
    let first = connecting(runtime.path(), &["--allow", "eval@*"]).await;
    first.ok("browser_tabs", json!({"action": "list"})).await;
    let port = kapture_e2e::handshakes_in(runtime.path())
        .into_iter()
        .find(|h| h["pid"].as_u64() == Some(u64::from(first.pid)))
        .and_then(|h| h["port"].as_u64())
        .expect("its handshake file");
    let block = format!("document.querySelector('.looser[data-port=\"{port}\"]')");
    let shown = panel
        .until(
            "the question about looser rules",
            &format!("{block}?.dataset.agreed === 'asked' && {block}.dataset.fingerprint"),
        )
        .await;
    let shown = shown.as_str().unwrap().to_string();
    let armed = panel.eval("__armed").await;
    assert!(
        armed
            .as_array()
            .is_some_and(|a| a.contains(&json!(format!("agree-accept-{port}:late")))
                && a.contains(&json!(format!("agree-keep-{port}:late")))),
        "{armed}"
    );

    // It goes, and another comes back on the same port with --unsafe-allow-all just before
    // the person's click: the answer the panel sends names the rules it showed, so the
    // new ones are not accepted (a panel that had not redrawn yet sends exactly this).
    first.stop().await;
    // Started by hand: the harness gives every kapture a port of its own.
    let scratch = tempfile::tempdir().unwrap();
    let mut second = tokio::process::Command::new(kapture_e2e::kapture_bin())
        .args(["--browser", "connect", "--browser-wait-ms", "40000"])
        .args(["--port", &port.to_string(), "--unsafe-allow-all"])
        .arg("--runtime-dir")
        .arg(runtime.path())
        .arg("--audit-dir")
        .arg(scratch.path().join("audit"))
        .arg("--data-dir")
        .arg(scratch.path().join("data"))
        .env("KAPTURE_KEYRING", "off")
        .env("XDG_CONFIG_HOME", scratch.path().join("config"))
        // Its MCP side waits on stdin, kept open (and unused) while the test runs.
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kapture starts");
    panel
        .until(
            "the new rules shown",
            &format!("{block}?.dataset.agreed === 'asked' && {block}.dataset.fingerprint !== {shown:?} && {block}.dataset.fingerprint"),
        )
        .await;
    let looser = panel.eval(&format!("{block}.textContent")).await;
    assert!(
        looser
            .as_str()
            .unwrap()
            .contains("interact, submit, upload, download, storage, record on *: allow"),
        "{looser}"
    );
    let stale = format!(
        "new Promise((done) => {{ const p = chrome.runtime.connect({{name: 'kapture-panel'}}); p.onMessage.addListener((m) => {{ if (m.type === 'approvals') {{ p.disconnect(); done(true); }} }}); p.postMessage({{type: 'agree', port: {port}, accept: true, fingerprint: {shown:?}}}); p.postMessage({{type: 'subscribe', tab_id: {tab}}}); }})"
    );
    assert_eq!(panel.eval(&stale).await, json!(true));
    assert_eq!(
        panel.eval(&format!("{block}?.dataset.agreed")).await,
        json!("asked"),
        "not accepted: the person never saw these rules"
    );
    panel.shot("7-looser-rules-asked-again").await;
    // The person reads the new list and accepts it: that holds.
    panel
        .click(&format!(
            "button[data-agree=\"accept\"][data-port=\"{port}\"]"
        ))
        .await;
    panel
        .until(
            "the looser rules accepted",
            &format!("{block}?.dataset.agreed === 'accepted'"),
        )
        .await;
    second.kill().await.expect("the second kapture stops");

    // Safe mode on at once; off waits before it takes a click (a double click stays on).
    panel
        .eval("window.__clicked = []; document.addEventListener('click', (e) => __clicked.push(e.target.id)); true")
        .await;
    panel.click("#safe-mode").await;
    assert_eq!(panel.eval("__clicked").await, json!(["safe-mode"]));
    kapture_e2e::side_panel::click_at_once(&mut panel, "#safe-mode").await;
    assert_eq!(
        panel.eval("__clicked").await,
        json!(["safe-mode"]),
        "the second click did not turn it off"
    );
    assert_eq!(
        panel
            .eval("document.getElementById('safe-mode').checked")
            .await,
        json!(true)
    );
    // A layout change no redraw announced moves the switch; a click on its label's words,
    // which the label forwards to the switch, is ignored like one on the switch itself.
    panel
        .until(
            "the switch live again",
            "!document.getElementById('safe-mode').disabled",
        )
        .await;
    panel
        .eval("document.body.prepend(Object.assign(document.createElement('div'), {id: 'shim', style: 'height: 40px'})); true")
        .await;
    kapture_e2e::side_panel::click_at_once(&mut panel, "label:has(#safe-mode)").await;
    assert_eq!(
        panel
            .eval("document.getElementById('safe-mode').checked")
            .await,
        json!(true),
        "a click on the moved switch's label did not turn it off"
    );
    panel.click("#safe-mode").await;
    panel
        .until(
            "safe mode off",
            "document.getElementById('safe-mode').checked === false",
        )
        .await;

    // The worker stops (as MV3 stops an idle one): the panel reconnects on its own and
    // the next question for its tab shows here, not in a new window.
    panel
        .eval("window.__link = []; new MutationObserver(() => __link.push(document.documentElement.dataset.link)).observe(document.documentElement, {attributes: true, attributeFilter: ['data-link']}); true")
        .await;
    let killed = panel.raw.kill_service_worker().await;
    assert_eq!(killed, Ok(1), "one worker killed");
    panel
        .until(
            "the panel back after the restart",
            "__link.includes('down') && document.documentElement.dataset.link === 'up'",
        )
        .await;
    let (out, ()) = tokio::join!(
        launcher.call("browser_click", json!({"selector": "#next", "tabId": tab})),
        async {
            let id = panel
                .until(
                    "the question in this panel",
                    "document.querySelector('#approval-list li.approval')?.dataset.id",
                )
                .await;
            panel
                .click(&format!("#approve-deny-{}", id.as_str().unwrap()))
                .await;
        }
    );
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    launcher.stop().await;
}

/// The DevTools frontend's own view of its panels: the ids of its main tabs (an
/// extension's panel is `chrome-extension://<id><title>`), asked of DevTools' module.
const DEVTOOLS_TABS: &str = "(async () => { try { \
    const UI = await import('./ui/legacy/legacy.js'); \
    return UI.InspectorView.InspectorView.instance().tabbedPane.tabIds(); \
  } catch (e) { return 'error: ' + e.message; } })()";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_is_registered_in_a_real_devtools_window_and_works_there() {
    let site = Site::start().unwrap();
    let mut start = Start::debuggable();
    // DevTools opens for every tab, as a person's F12 would.
    start
        .args
        .push("--chromium-arg=--auto-open-devtools-for-tabs".into());
    let k = Kapture::start(start).await;
    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-a.html")}),
        )
        .await;
    let tab: i64 = opened
        .split_whitespace()
        .nth(2)
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no tab id in {opened}"));
    let mut raw = k.raw_cdp().await;
    let panel_id = format!(
        "chrome-extension://{}Kapture",
        kapture_e2e::panel::EXTENSION_ID
    );

    // Some DevTools window lists the Kapture panel among its tabs (the extension's
    // devtools_page called chrome.devtools.panels.create there); it is shown like a click
    // on its tab would, and its page loads inside DevTools for the inspected tab.
    let panel_url = format!("panel.html?tabId={tab}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let target = 'found: loop {
        let targets = raw
            .send(None, "Target.getTargets", json!({}))
            .await
            .unwrap();
        let infos = targets["targetInfos"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(t) = infos.iter().find(|t| {
            t["type"] == "iframe" && t["url"].as_str().is_some_and(|u| u.contains(&panel_url))
        }) {
            break 'found t.clone();
        }
        for t in infos.iter().filter(|t| {
            t["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("devtools://"))
        }) {
            let Ok(attached) = raw
                .send(
                    None,
                    "Target.attachToTarget",
                    json!({"targetId": t["targetId"], "flatten": true}),
                )
                .await
            else {
                continue;
            };
            let session = attached["sessionId"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let tabs = raw
                .send(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({"expression": DEVTOOLS_TABS, "awaitPromise": true, "returnByValue": true}),
                )
                .await
                .map(|r| r["result"]["value"].clone())
                .unwrap_or_default();
            seen.push(tabs.to_string());
            if tabs
                .as_array()
                .is_some_and(|ids| ids.iter().any(|id| id == panel_id.as_str()))
            {
                let show = format!(
                    "(async () => {{ const UI = await import('./ui/legacy/legacy.js'); \
                     await UI.InspectorView.InspectorView.instance().showPanel({panel_id:?}); return true; }})()"
                );
                let _ = raw
                    .send(
                        Some(&session),
                        "Runtime.evaluate",
                        json!({"expression": show, "awaitPromise": true}),
                    )
                    .await;
            }
            let _ = raw
                .send(
                    None,
                    "Target.detachFromTarget",
                    json!({"sessionId": session}),
                )
                .await;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no DevTools window showed the Kapture panel for tab {tab}; DevTools' tabs: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let attached = raw
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        )
        .await
        .unwrap();
    let session = attached["sessionId"].as_str().unwrap().to_string();
    let mut panel = Panel { raw, session };
    // Inside DevTools: it knows the tab DevTools inspects, talks to the worker, and shows
    // that tab's page.
    assert_eq!(
        panel
            .until(
                "chrome.devtools in the panel",
                "globalThis.chrome && chrome.devtools && chrome.devtools.inspectedWindow.tabId"
            )
            .await,
        json!(tab)
    );
    panel
        .until(
            "the connected status",
            "document.getElementById('status').textContent === 'connected'",
        )
        .await;
    panel
        .until(
            "the inspected tab's page",
            "document.getElementById('tab-info').textContent.includes('Page A')",
        )
        .await;
    k.stop().await;
}
