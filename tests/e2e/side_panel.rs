//! Kapture's side panel driven like a person (real mouse clicks and keys through CDP) beside
//! an agent: the live feed, approvals rated by risk and answered "Always allow here" (the
//! grant listed and revoked), the site's mode (Read-only refuses with the person's rule,
//! Auto allows without asking), the rules table (add, edit, remove, a bad pattern refused),
//! a rule that cannot loosen kapture's own deny, Pause stopping a running wait, and an
//! origin budget spent and extended; the panel back after its worker restarted (Pause still
//! stops an agent), approvals gone with their call or tab, long arguments shown whole on
//! request, and controls that loosen taking clicks only where they have stayed.
//! Screenshots: target/panel-screenshots/side-*.png.

use std::time::Duration;

use kapture_e2e::side_panel::SidePanel;
use kapture_e2e::{ref_on, tab_of, Kapture, Outcome, Start};
use serde_json::json;
use www_test_pages::Site;

fn launched_with(flags: &[&str]) -> Start {
    let mut opts = Start::debuggable();
    opts.args.extend(flags.iter().map(|f| f.to_string()));
    opts
}

/// What the agent's clicks did on account.html, read straight from the page over CDP (not
/// through kapture, whose reads the person's rules judge).
async fn clicks_on(side: &mut SidePanel, page: &str) -> String {
    let res = side
        .raw
        .send(
            Some(page),
            "Runtime.evaluate",
            json!({"expression": "document.getElementById('log').textContent", "returnByValue": true}),
        )
        .await
        .expect("the page answers");
    res.pointer("/result/value")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

/// Whether a debugger client (the extension's) is attached to the page `target`.
async fn attached_to(side: &mut SidePanel, target: &str) -> bool {
    let targets = side
        .raw
        .send(None, "Target.getTargets", json!({}))
        .await
        .unwrap();
    targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["targetId"] == target && t["attached"] == true)
}

/// A call that must be answered without a person (a hang means it was asked).
async fn unasked(k: &Kapture, tool: &str, args: serde_json::Value) -> Outcome {
    tokio::time::timeout(Duration::from_secs(20), k.call(tool, args))
        .await
        .expect("answered without asking anyone")
}

/// Pause in the side panel stops an agent's running wait (answered `PAUSED`, in the feed)
/// and refuses its next call; Resume lets calls through again. `shot`: a screenshot of
/// the paused panel.
async fn pause_stops_a_running_wait(
    k: &Kapture,
    side: &mut SidePanel,
    site: &Site,
    shot: Option<&str>,
) {
    let wait_url = site.url("wait.html");
    let created = side
        .raw
        .send(
            None,
            "Target.createTarget",
            json!({"url": wait_url, "background": true}),
        )
        .await
        .unwrap();
    let target = created["targetId"].as_str().unwrap().to_string();
    // `- [2] tab 17: "Wait" http://…/wait.html` once it has loaded.
    let waiting_tab: i64 =
        kapture_e2e::eventually("the wait tab listed", Duration::from_secs(10), || async {
            let tabs = k.ok("browser_tabs", json!({"action": "list"})).await;
            tabs.lines()
                .find(|l| l.starts_with("- [") && l.contains("wait.html"))
                .and_then(|l| l.split("tab ").nth(1))
                .and_then(|t| t.split([':', ' ']).next())
                .and_then(|t| t.parse().ok())
        })
        .await;
    let started = std::time::Instant::now();
    // A block: the pinned call borrows kapture until it is answered.
    let out = {
        let wait = k.call(
            "browser_wait_for",
            json!({"time": 25, "tabId": waiting_tab}),
        );
        tokio::pin!(wait);
        // The wait runs once the extension's debugger is on that tab (an answer before that is
        // a failure, shown).
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let attached = tokio::select! {
                out = &mut wait => panic!("the wait ended before the pause: {}", out.text),
                attached = attached_to(side, &target) => attached,
            };
            if attached {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the wait never started"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        side.click("#pause").await;
        side.until(
            "the paused banner",
            "!document.getElementById('paused-banner').hidden && document.getElementById('pause').textContent === 'Resume'",
        )
        .await;
        wait.await
    };
    assert_eq!(out.code().as_deref(), Some("PAUSED"), "{}", out.text);
    assert!(out.text.contains("stopped while it ran"), "{}", out.text);
    side.until(
        "the stopped wait in the feed",
        "[...document.querySelectorAll('#feed-list li')].some((li) => li.textContent.includes('stopped by the pause'))",
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped, not waited out"
    );
    let refused = unasked(k, "browser_snapshot", json!({})).await;
    assert_eq!(
        refused.code().as_deref(),
        Some("PAUSED"),
        "{}",
        refused.text
    );
    if let Some(name) = shot {
        side.shot(name).await;
    }
    side.click("#pause").await;
    side.until(
        "resumed",
        "document.getElementById('paused-banner').hidden && document.getElementById('pause').textContent === 'Pause'",
    )
    .await;
    k.ok("browser_snapshot", json!({})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_watches_answers_and_sets_rules_from_the_side_panel() {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let here = format!("http://127.0.0.1:{}", site.port());
    let k = Kapture::start(launched_with(&[
        "--ask",
        "interact@127.0.0.1",
        "--ask",
        &format!("navigate@127.0.0.1:{}", other.port()),
    ]))
    .await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("account.html")}))
        .await;
    let tab = tab_of(&nav);
    let mut side = SidePanel::open(&k, tab).await;
    let page = side.raw.attach_page("account.html").await.unwrap();

    // The feed shows what the agent did, with its verdict; "This site" is the agent's tab.
    let feed = side
        .until(
            "the navigation in the feed",
            "document.querySelector('#feed-list li[data-method=\"navigate\"]')?.textContent",
        )
        .await;
    let feed = feed.as_str().unwrap();
    assert!(
        feed.contains("browser_navigate")
            && feed.contains("allowed")
            && feed.contains("ok")
            && feed.contains(&here),
        "tool, verdict, status and origin: {feed}"
    );
    side.until_site(&here).await;
    let verdicts = side.text("#site-verdicts").await;
    assert!(
        verdicts.contains("ask") && verdicts.contains("interact"),
        "{verdicts}"
    );
    side.shot("side-1-watching").await;

    // A click on "Delete account": high risk, answered "Always allow here".
    let snap = k.ok("browser_snapshot", json!({})).await;
    let delete = ref_on(&snap, "Delete account");
    let (out, ()) = tokio::join!(k.call("browser_click", json!({"ref": delete})), async {
        let id = side.approval().await;
        let risk = side
            .text(&format!("li.approval[data-id='{id}'] .risk"))
            .await;
        assert_eq!(risk, "high risk");
        let item = side.text(&format!("li.approval[data-id='{id}']")).await;
        assert!(
            item.contains("Delete account") && item.contains(&here) && item.contains("left"),
            "why, the element line, origin, time left: {item}"
        );
        assert!(item.contains("asked by"), "who asks: {item}");
        // As a person sees it once its answers take clicks (the README's picture).
        side.until(
            "the answers live",
            &format!("!document.getElementById('approve-always-{id}').disabled"),
        )
        .await;
        side.shot("side-2-approval-high").await;
        side.click(&format!("#approve-always-{id}")).await;
    });
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(clicks_on(&mut side, &page).await, "delete");
    let grant = side
        .until(
            "the grant listed",
            "document.querySelector('#grants-list .grant')?.textContent",
        )
        .await;
    assert!(
        grant
            .as_str()
            .unwrap()
            .contains(&format!("interact on {here}")),
        "{grant}"
    );
    // The same action again is not asked.
    let out = unasked(&k, "browser_click", json!({"ref": delete})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(clicks_on(&mut side, &page).await, "delete delete");
    side.until(
        "the allowed click in the feed",
        "document.querySelectorAll('#feed-list li[data-method=\"click\"][data-status=\"ok\"]').length >= 2",
    )
    .await;
    side.shot("side-3-always-allowed").await;

    // Revoked: asked again (and denied this time).
    side.click("#revoke-0").await;
    side.until(
        "the grant gone",
        "!document.querySelector('#grants-list .grant')",
    )
    .await;
    let (out, ()) = tokio::join!(k.call("browser_click", json!({"ref": delete})), async {
        let id = side.approval().await;
        side.click(&format!("#approve-deny-{id}")).await;
    });
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert_eq!(clicks_on(&mut side, &page).await, "delete delete");

    // A navigation to another site: medium risk. The side panel follows the tab there.
    // Its mode buttons come armed late (a navigation timed to a person's click cannot give
    // the new site the mode meant for the old one); a redraw for the same site does not.
    side.eval("window.__modes = []; new MutationObserver((rs) => { for (const r of rs) for (const n of r.addedNodes) if (n.id && n.id.startsWith('mode-')) __modes.push(n.id + (n.hasAttribute('disabled') ? ':late' : ':live')); }).observe(document.getElementById('site-modes'), {childList: true}); true").await;
    let there = format!("http://127.0.0.1:{}", other.port());
    let (out, ()) = tokio::join!(
        k.call("browser_navigate", json!({"url": other.url("page-a.html")})),
        async {
            let id = side.approval().await;
            let risk = side
                .text(&format!("li.approval[data-id='{id}'] .risk"))
                .await;
            assert_eq!(risk, "medium risk");
            let why = side
                .text(&format!("li.approval[data-id='{id}'] .why"))
                .await;
            assert!(why.contains("new site") && why.contains(&there), "{why}");
            side.shot("side-4-approval-medium").await;
            side.click(&format!("#approve-once-{id}")).await;
        }
    );
    assert!(!out.is_error, "{}", out.text);
    side.until_site(&there).await;
    let drawn = side.eval("window.__modes").await;
    assert!(
        drawn
            .as_array()
            .is_some_and(|d| d.contains(&json!("mode-auto:late"))),
        "{drawn}"
    );
    side.until(
        "the new site's modes armed",
        "document.getElementById('mode-auto')?.disabled === false",
    )
    .await;
    k.ok("browser_navigate", json!({"url": site.url("account.html")}))
        .await;
    side.until_site(&here).await;
    // And it follows the window's active tab: a new tab there, then back.
    let (out, ()) = tokio::join!(
        k.call(
            "browser_tabs",
            json!({"action": "new", "url": other.url("page-b.html")})
        ),
        async {
            let id = side.approval().await;
            side.click(&format!("#approve-once-{id}")).await;
        }
    );
    assert!(!out.is_error, "{}", out.text);
    side.until_site(&there).await;
    k.ok("browser_tabs", json!({"action": "select", "tabId": tab}))
        .await;
    side.until_site(&here).await;

    // Read-only: the agent's click is refused, naming the person's rule.
    side.choose_mode("read-only").await;
    let out = unasked(&k, "browser_click", json!({"selector": "#next"})).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(out.text.contains("side panel"), "{}", out.text);
    assert!(!clicks_on(&mut side, &page).await.contains("next"));
    side.shot("side-5-read-only").await;

    // Auto: allowed without asking.
    side.choose_mode("auto").await;
    let out = unasked(&k, "browser_click", json!({"selector": "#next"})).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(clicks_on(&mut side, &page).await.ends_with("next"));
    let rules = side.text("#rule-rows").await;
    assert!(
        rules.contains(&format!("127.0.0.1:{}", site.port())),
        "{rules}"
    );
    side.shot("side-6-auto").await;

    // The rules table: add (keyboard through the form), edit, a bad pattern, remove.
    let count = "document.querySelectorAll('#rule-rows tr').length";
    let before = side.eval(count).await.as_u64().unwrap();
    side.type_into("#rule-origin", "shop.test").await;
    side.press("Tab").await;
    side.keys("i").await; // category: interact
    side.press("Tab").await;
    side.keys("d").await; // verdict: deny
    side.click("#rule-save").await;
    let row = "[...document.querySelectorAll('#rule-rows tr')].find((r) => r.textContent.includes('shop.test'))";
    let added = side
        .until("the rule added", &format!("{row}?.textContent"))
        .await;
    assert_eq!(added, json!("shop.testinteractdenyEdit✕"));
    assert_eq!(side.eval(count).await.as_u64().unwrap(), before + 1);
    side.until(
        "the form emptied once the rule is kept",
        "document.getElementById('rule-origin').value === ''",
    )
    .await;
    let edit = side
        .eval(&format!("{row}.querySelector('[id^=rule-edit-]').id"))
        .await;
    side.click(&format!("#{}", edit.as_str().unwrap())).await;
    assert_eq!(side.text("#rule-save").await, "Save rule");
    side.click("#rule-origin").await;
    side.press("Tab").await;
    side.press("Tab").await;
    side.keys("as").await; // verdict: ask
    side.click("#rule-save").await;
    side.until(
        "the rule edited",
        &format!("{row}?.textContent === 'shop.testinteractaskEdit✕'"),
    )
    .await;
    assert_eq!(side.eval(count).await.as_u64().unwrap(), before + 1);
    let table = side.text("#rule-rows").await;
    side.type_into("#rule-origin", "exa*mple.com").await;
    side.click("#rule-save").await;
    let error = side
        .until(
            "the error",
            "!document.getElementById('rules-error').hidden && document.getElementById('rules-error').textContent",
        )
        .await;
    assert!(error.as_str().unwrap().contains("exa*mple.com"), "{error}");
    assert_eq!(side.text("#rule-rows").await, table, "nothing changed");
    side.shot("side-7-rule-error").await;
    side.click("#rule-cancel").await;
    let remove = side
        .eval(&format!("{row}.querySelector('[id^=rule-remove-]').id"))
        .await;
    side.click(&format!("#{}", remove.as_str().unwrap())).await;
    side.until("the rule removed", &format!("!{row}")).await;
    assert_eq!(side.eval(count).await.as_u64().unwrap(), before);

    // Dark, and never wider than the column.
    side.eval("document.documentElement.classList.add('dark')")
        .await;
    side.shot("side-8-dark").await;
    let wide = side
        .eval("[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1).map((e) => e.tagName + '#' + e.id + '.' + e.className).slice(0, 5).join(' ')")
        .await;
    assert_eq!(wide, json!(""), "nothing wider than the side panel");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_side_panel_never_loosens_kapture_pauses_everything_and_spends_budgets() {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let denied = format!("interact@127.0.0.1:{}", site.port());
    let k = Kapture::start(launched_with(&["--deny", &denied])).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("account.html")}))
        .await;
    let tab = tab_of(&nav);
    let mut side = SidePanel::open(&k, tab).await;
    let page = side.raw.attach_page("account.html").await.unwrap();

    // Auto in the side panel does not undo kapture's --deny.
    side.until("this site's modes", "document.getElementById('mode-auto')")
        .await;
    side.click("#mode-auto").await;
    side.until(
        "auto chosen",
        "document.querySelector('#rule-rows')?.textContent.includes('allow')",
    )
    .await;
    let out = unasked(&k, "browser_click", json!({"selector": "#next"})).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(
        out.text.contains(&format!("--deny {denied}")),
        "{}",
        out.text
    );
    assert_eq!(clicks_on(&mut side, &page).await, "");

    // Pause stops a running wait and refuses new calls; Resume lets them through.
    pause_stops_a_running_wait(&k, &mut side, &site, Some("side-9-paused")).await;

    // A budget of 1 step per hour on the other site, set in the side panel.
    let origin = format!("127.0.0.1:{}", other.port());
    side.type_into("#budget-origin", &origin).await;
    side.type_into("#budget-max", "1").await;
    side.click("#budget-add").await;
    side.until(
        "the budget listed",
        &format!("document.getElementById('budget-list').textContent.includes({origin:?})"),
    )
    .await;
    assert!(side.text("#my-budget-rows").await.contains("1 / hour"));
    k.ok(
        "browser_navigate",
        json!({"url": other.url("account.html"), "tabId": tab}),
    )
    .await;
    // The side panel follows its tab to the other site.
    side.until_site(&format!("http://{origin}")).await;
    let out = unasked(&k, "browser_click", json!({"selector": "#next"})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("BUDGET_EXCEEDED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("resets in"), "{}", out.text);
    let budget = format!(
        "[...document.querySelectorAll('#budget-list li')].find((l) => l.textContent.includes({origin:?}))"
    );
    side.until(
        "the budget spent",
        &format!("{budget}?.dataset.spent === 'true'"),
    )
    .await;
    side.until(
        "the refusal in the feed",
        "document.querySelector('#feed-list li[data-status=\"BUDGET_EXCEEDED\"]')",
    )
    .await;
    side.shot("side-10-budget-spent").await;
    let extend = side
        .eval(&format!("{budget}.querySelector('button').id"))
        .await;
    side.click(&format!("#{}", extend.as_str().unwrap())).await;
    side.until(
        "the budget extended",
        &format!("{budget}?.dataset.spent === 'false'"),
    )
    .await;
    let out = unasked(&k, "browser_click", json!({"selector": "#next"})).await;
    assert!(!out.is_error, "{}", out.text);
    side.shot("side-11-budget-extended").await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_side_panel_reconnects_to_a_restarted_worker_and_pause_still_stops_an_agent() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launched_with(&[])).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("account.html")}))
        .await;
    let tab = tab_of(&nav);
    let mut side = SidePanel::open(&k, tab).await;
    side.until(
        "the navigation in the feed",
        "document.querySelector('#feed-list li[data-method=\"navigate\"]')",
    )
    .await;
    side.until(
        "the side panel taking clicks",
        "document.documentElement.dataset.link !== 'down'",
    )
    .await;

    // MV3 stops the worker (as it does an idle one). The side panel notices, says so, and
    // takes no clicks while it cannot reach one: here the extension is made unreachable
    // from the page for a moment, so the state stays on screen to be looked at.
    side.eval("window.__connect = chrome.runtime.connect; chrome.runtime.connect = () => { throw new Error('the test holds the worker back'); }; true").await;
    let killed = side.raw.kill_service_worker().await;
    assert_eq!(killed, Ok(1), "one worker killed");
    side.until(
        "the reconnecting state",
        "document.documentElement.dataset.link === 'down' && document.getElementById('status').textContent === 'reconnecting…' && !document.getElementById('link-banner').hidden && document.querySelector('main').inert && document.getElementById('pause').inert",
    )
    .await;
    side.shot("side-12-reconnecting").await;
    // Let it through: a new port wakes the worker, the panel watches again and takes
    // clicks once the worker told its state.
    side.eval("chrome.runtime.connect = window.__connect; true")
        .await;
    side.until(
        "the side panel back",
        "document.documentElement.dataset.link === 'up' && !document.querySelector('main').inert && document.getElementById('link-banner').hidden",
    )
    .await;
    side.until(
        "connected again",
        "document.getElementById('status').textContent === 'connected'",
    )
    .await;

    // The feed is live again: the agent's next step shows.
    k.ok("browser_snapshot", json!({"tabId": tab})).await;
    side.until(
        "the step after the restart in the feed",
        "document.querySelector('#feed-list li[data-method=\"snapshot\"]')",
    )
    .await;

    // And Pause, pressed in the same side panel, reaches the new worker: the running wait
    // is stopped.
    pause_stops_a_running_wait(&k, &mut side, &site, None).await;

    // A restart while nothing holds it back: the panel is back on its own.
    let killed = side.raw.kill_service_worker().await;
    assert_eq!(killed, Ok(1), "one worker killed");
    k.ok("browser_snapshot", json!({"tabId": tab})).await;
    side.until(
        "the side panel back after a plain restart",
        "document.documentElement.dataset.link === 'up' && document.querySelectorAll('#feed-list li[data-method=\"snapshot\"]').length === 1",
    )
    .await;
    side.shot("side-13-reconnected").await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_leave_the_panel_when_their_call_ends_or_their_tab_closes() {
    use std::os::unix::fs::PermissionsExt;
    let site = Site::start().unwrap();
    let runtime = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap();
    let mut start = launched_with(&["--ask", "interact@127.0.0.1", "--ask", "eval@127.0.0.1"]);
    start.runtime_dir = Some(runtime.path().to_path_buf());
    let k = Kapture::start(start).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("account.html")}))
        .await;
    let tab = tab_of(&nav);
    let mut side = SidePanel::open(&k, tab).await;
    let pending = "document.querySelectorAll('#approval-list li.approval').length";

    // Another kapture asks, then goes away (its socket closes, its commands are stopped
    // mid-question): the question goes with it, not left to be clicked in vain.
    let mut other = Kapture::start(Start {
        args: ["--browser", "connect", "--browser-wait-ms", "40000"]
            .into_iter()
            .map(String::from)
            .collect(),
        runtime_dir: Some(runtime.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    other.ok("browser_tabs", json!({"action": "list"})).await;
    other
        .send_call("browser_click", json!({"selector": "#next", "tabId": tab}))
        .await;
    side.approval().await;
    other.close_stdin().await;
    side.until(
        "the question gone with its kapture",
        &format!("{pending} === 0"),
    )
    .await;
    // An agent asking and cancelling again and again leaves nothing behind.
    for _ in 0..5 {
        k.call_and_cancel("browser_click", json!({"selector": "#next"}))
            .await;
    }
    k.ping().await;
    side.until("no ghost questions", &format!("{pending} === 0"))
        .await;

    // A question about a tab that is closed is withdrawn at once, not waited out.
    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("account.html")}),
        )
        .await;
    let closing: i64 = opened
        .split("Opened tab ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no tab id in {opened}"));
    let started = std::time::Instant::now();
    let (out, ()) = tokio::join!(
        k.call(
            "browser_click",
            json!({"selector": "#pay", "tabId": closing})
        ),
        async {
            side.approval().await;
            side.eval(&format!("chrome.tabs.remove({closing}).then(() => true)"))
                .await;
        }
    );
    assert!(out.is_error, "{}", out.text);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "answered when the tab closed, not after the minute it waits for a person: {}",
        out.text
    );
    side.until(
        "the closed tab's question gone",
        &format!("{pending} === 0"),
    )
    .await;

    // Long arguments: cut, with "show all" for the rest (text, masked as ever); the choice
    // survives a redraw of the list.
    let code = format!(
        "() => {{ const data = {:?}; return 'TAIL-OF-THE-CODE' + data.length; }}",
        "x".repeat(400)
    );
    let (out, ()) = tokio::join!(
        k.call("browser_evaluate", json!({"function": code, "tabId": tab})),
        async {
            let id = side.approval().await;
            let row = format!("li.approval[data-id='{id}']");
            let args = side.text(&format!("{row} .args .text")).await;
            assert!(
                args.ends_with('…') && !args.contains("TAIL-OF-THE-CODE"),
                "{args}"
            );
            side.click(&format!("#args-toggle-{id}")).await;
            let all = side.text(&format!("{row} .args .text")).await;
            assert!(all.contains("TAIL-OF-THE-CODE"), "{all}");
            assert_eq!(side.text(&format!("#args-toggle-{id}")).await, "show less");
            side.shot("side-14-show-all").await;
            // Another question comes and is answered: the list is redrawn, the arguments
            // stay whole.
            let (extra, ()) = tokio::join!(
                k.call("browser_click", json!({"selector": "#next", "tabId": tab})),
                async {
                    let second = side.approval().await;
                    side.click(&format!("#approve-deny-{second}")).await;
                }
            );
            assert_eq!(
                extra.code().as_deref(),
                Some("APPROVAL_DENIED"),
                "{}",
                extra.text
            );
            assert!(extra.text.contains("denied"), "{}", extra.text);
            side.until("one question", &format!("{pending} === 1"))
                .await;
            let still = side.text(&format!("{row} .args .text")).await;
            assert!(still.contains("TAIL-OF-THE-CODE"), "{still}");
            side.click(&format!("#approve-deny-{id}")).await;
        }
    );
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("denied"), "{}", out.text);
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_that_loosen_take_clicks_only_where_they_have_stayed() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launched_with(&["--ask", "interact@127.0.0.1"])).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("account.html")}))
        .await;
    let tab = tab_of(&nav);
    let mut side = SidePanel::open(&k, tab).await;
    // Everything in view: what moves on screen is what the page's layout moves.
    side.tall(2400).await;
    side.until(
        "the side panel taking clicks",
        "document.documentElement.dataset.link !== 'down'",
    )
    .await;

    // A rule of the person's, its ✕ live once it has sat still.
    side.type_into("#rule-origin", "shop.test").await;
    side.click("#rule-save").await;
    side.until(
        "the rule listed, its ✕ taking clicks",
        "document.getElementById('rule-remove-0')?.disabled === false",
    )
    .await;
    let rules = "document.querySelectorAll('#rule-rows tr').length";
    assert_eq!(side.eval(rules).await, json!(1));

    // Steps an agent takes leave the ✕ where it is: it stays live.
    side.eval("window.__arming = []; new MutationObserver((rs) => { for (const r of rs) if (r.target.hasAttribute('data-arming')) __arming.push(r.target.id); }).observe(document.body, {attributes: true, attributeFilter: ['data-arming'], subtree: true}); true").await;
    for _ in 0..3 {
        k.ok("browser_snapshot", json!({})).await;
    }
    side.until(
        "three more steps in the feed",
        "document.querySelectorAll('#feed-list li[data-method=\"snapshot\"]').length === 3",
    )
    .await;
    assert_eq!(
        side.eval("__arming.filter((id) => id.startsWith('rule-'))")
            .await,
        json!([]),
        "nothing moved, nothing disarmed"
    );

    // A question arrives above and pushes the ✕ down under a pointer aimed elsewhere: a
    // click on it there does nothing until it has stayed put; then it works. (`__clicked`:
    // the clicks that reached a control's handlers.)
    side.eval("window.__clicked = []; document.addEventListener('click', (e) => __clicked.push(e.target.id)); true").await;
    kapture_e2e::side_panel::watch_moves(&mut side, "#approval-list").await;
    let (out, ()) = tokio::join!(
        k.call("browser_click", json!({"selector": "#delete"})),
        async {
            let id = side.approval().await;
            let since = kapture_e2e::side_panel::click_at_once(&mut side, "#rule-remove-0")
                .await
                .expect("the approval list changed");
            assert!(
                since < ui_arming_ms(),
                "the click came {since} ms after the move: too late to tell"
            );
            assert_eq!(
                side.eval("__clicked").await,
                json!([]),
                "the moved ✕ took no click"
            );
            side.shot("side-15-moved-controls-wait").await;
            // Deny's row is new: it waits too, then takes the click.
            side.click(&format!("#approve-deny-{id}")).await;
        }
    );
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    side.until(
        "the question gone",
        "!document.querySelector('#approval-list li.approval')",
    )
    .await;
    assert_eq!(side.eval(rules).await, json!(1), "the rule is still there");
    side.click("#rule-remove-0").await;
    side.until("the rule removed", &format!("{rules} === 0"))
        .await;

    // Pause turns into Resume under the pointer: a second click right away does not resume.
    side.click("#pause").await;
    side.until(
        "paused",
        "document.getElementById('pause').textContent === 'Resume'",
    )
    .await;
    side.eval("window.__clicked = []; true").await;
    kapture_e2e::side_panel::click_at_once(&mut side, "#pause").await;
    assert_eq!(
        side.eval("__clicked").await,
        json!([]),
        "a double click does not resume"
    );
    let refused = unasked(&k, "browser_snapshot", json!({})).await;
    assert_eq!(
        refused.code().as_deref(),
        Some("PAUSED"),
        "{}",
        refused.text
    );
    side.click("#pause").await;
    side.until(
        "resumed",
        "document.getElementById('pause').textContent === 'Pause'",
    )
    .await;
    k.ok("browser_snapshot", json!({})).await;
    k.stop().await;
}

/// How long a moved control ignores clicks (`ui::ARMING_MS`), in ms.
fn ui_arming_ms() -> f64 {
    ext_core::ui::ARMING_MS
}
