//! The policy in a real browser: flags and defaults refuse in the extension with coded
//! errors and no effect on the page, `ask` is answered by a person in the Kapture window
//! (or times out into a denial), an approval binds to its origin, and a redirect to a
//! denied origin is caught by the next read. Natively (`--browser cdp`) the person is asked
//! through the MCP client (elicitation), or the rule's fallback (deny) applies.

use std::time::Duration;

use kapture_e2e::panel::Panel;
use kapture_e2e::{handshakes_in, ref_on, Elicit, Engine, Kapture, Said, Start};
use serde_json::json;
use www_test_pages::Site;

fn launched_with(flags: &[&str]) -> Start {
    let mut opts = Start::default();
    opts.args.extend(flags.iter().map(|f| f.to_string()));
    opts
}

async fn button_text(k: &Kapture, id: &str) -> String {
    k.eval(&format!("document.getElementById('{id}').textContent"))
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_and_read_only_refuse_in_the_extension_and_leave_the_page_alone() {
    let site = Site::start().unwrap();
    let elsewhere = Site::start().unwrap();
    let k = Kapture::start(launched_with(&[
        "--deny",
        "interact@127.0.0.1",
        "--deny",
        &format!("navigate@127.0.0.1:{}", elsewhere.port()),
    ]))
    .await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    // kapture itself refuses a navigation it can judge, before the browser hears of it.
    for (tool, args) in [
        (
            "browser_navigate",
            json!({"url": elsewhere.url("page-a.html")}),
        ),
        (
            "browser_tabs",
            json!({"action": "new", "url": elsewhere.url("page-a.html")}),
        ),
    ] {
        let out = k.call(tool, args).await;
        assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
        assert!(
            out.text.contains("never reached the browser"),
            "{}",
            out.text
        );
    }
    let tabs = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(!tabs.contains("Page A"), "no tab opened: {tabs}");
    let out = k.call("browser_click", json!({"selector": "#shift"})).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(
        out.text.contains("--deny interact@127.0.0.1"),
        "the error names the rule that decided: {}",
        out.text
    );
    assert_eq!(button_text(&k, "shift").await, "Shift", "no click happened");
    let origin = format!("http://127.0.0.1:{}", site.port());
    let journal = k.audit_lines();
    assert!(
        journal.iter().any(|e| e["tool"] == "browser_click"
            && e["verdict"] == "denied by policy"
            && e["origin"] == origin.as_str()),
        "the journal records the refusal and where: {journal:?}"
    );
    k.ok("browser_snapshot", json!({})).await;
    k.stop().await;

    let k = Kapture::start(launched_with(&["--read-only"])).await;
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    for (tool, args) in [
        ("browser_click", json!({"selector": "#terms"})),
        ("browser_type", json!({"selector": "#name", "text": "Ada"})),
        (
            "browser_type",
            json!({"selector": "#name", "text": "Ada", "submit": true}),
        ),
        ("browser_evaluate", json!({"function": "document.title"})),
    ] {
        let out = k.call(tool, args.clone()).await;
        assert_eq!(
            out.code().as_deref(),
            Some("POLICY_DENIED"),
            "{tool} {args}: {}",
            out.text
        );
        assert!(out.text.contains("--read-only"), "{}", out.text);
    }
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    assert!(
        !snapshot.contains("Ada"),
        "nothing was typed in safe mode: {snapshot}"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_in_the_kapture_window_and_the_approval_binds_to_its_origin() {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let k = Kapture::start(launched_with(&[
        "--ask",
        &format!("interact@127.0.0.1:{}", site.port()),
        "--approval-timeout-ms",
        "30000",
        "--chromium-arg=--remote-debugging-port=0",
    ]))
    .await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;

    // Nobody has a panel open: the extension opens its own window for the approval.
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let shift = ref_on(&snapshot, "\"Shift\"");
    let mut raw = k.raw_cdp().await;
    let (click, mut panel) = tokio::join!(k.call("browser_click", json!({"ref": shift})), async {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let session = loop {
            if let Ok(session) = raw.attach_page("panel.html?tabId=").await {
                break session;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the approval window never opened"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let mut panel = Panel { raw, session };
        panel
            .until(
                "the approval",
                "document.querySelector('[id^=approve-once-]')?.id",
            )
            .await;
        let what = panel
            .eval("document.getElementById('approval-list').textContent")
            .await;
        let what = what.as_str().unwrap_or_default();
        assert!(
            what.contains("click")
                && what.contains("button \"Shift\"")
                && what.contains(&format!("127.0.0.1:{}", site.port())),
            "the approval names the action, the element and the origin: {what}"
        );
        panel.shot("approval-pending").await;
        panel.click("[id^=approve-once-]").await;
        panel
    });
    assert!(!click.is_error, "approved click runs: {}", click.text);
    assert_eq!(button_text(&k, "shift").await, "plain click");

    // An approval given for this origin does not follow the tab to another one.
    let (dbl, ()) = tokio::join!(
        k.call("browser_click", json!({"selector": "#shift"})),
        async {
            panel
                .until(
                    "the second approval",
                    "document.querySelector('[id^=approve-once-]')?.id",
                )
                .await;
            k.ok("browser_navigate", json!({"url": other.url("input.html")}))
                .await;
            panel.click("[id^=approve-once-]").await;
        }
    );
    assert_eq!(
        dbl.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        dbl.text
    );
    assert_eq!(
        button_text(&k, "shift").await,
        "Shift",
        "the other origin's page was not clicked"
    );

    // A denial in the window is a coded error.
    let (denied, ()) = tokio::join!(
        async {
            k.ok("browser_navigate", json!({"url": site.url("input.html")}))
                .await;
            k.call("browser_click", json!({"selector": "#shift"})).await
        },
        async {
            panel
                .until(
                    "the third approval",
                    "document.querySelector('[id^=approve-deny-]')?.id",
                )
                .await;
            panel.click("[id^=approve-deny-]").await;
        }
    );
    assert_eq!(denied.code().as_deref(), Some("APPROVAL_DENIED"));
    assert!(denied.text.contains("denied"), "{}", denied.text);
    assert_eq!(button_text(&k, "shift").await, "Shift");

    // The journal says who decided: the person's answers and the calls' verdicts.
    let verdicts: Vec<String> = k
        .audit_lines()
        .iter()
        .map(|e| format!("{} {}", e["who"], e["verdict"]))
        .collect();
    for expected in ["ask: once", "ask: deny", "not approved"] {
        assert!(
            verdicts.iter().any(|v| v.contains(expected)),
            "{expected} missing in {verdicts:?}"
        );
    }
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unanswered_asks_time_out_denied_and_a_persons_own_browser_is_protected() {
    let site = Site::start().unwrap();
    let shared = tempfile::tempdir().unwrap();
    let launcher = Kapture::start(Start {
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    launcher
        .ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    // A second server in connect mode sees that browser as a person's own: the
    // connected defaults apply.
    let own = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "connect".into(),
            "--browser-wait-ms".into(),
            "40000".into(),
            "--approval-timeout-ms".into(),
            "1500".into(),
        ],
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    assert_eq!(handshakes_in(shared.path()).len(), 2);
    let out = own
        .call("browser_evaluate", json!({"function": "document.title"}))
        .await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    let out = own
        .call("browser_click", json!({"selector": "#shift"}))
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("nobody answered"), "{}", out.text);
    assert_eq!(
        button_text(&launcher, "shift").await,
        "Shift",
        "an unanswered ask changes nothing"
    );
    let snapshot = own.ok("browser_snapshot", json!({})).await;
    assert!(snapshot.contains("Shift"), "reads stay allowed: {snapshot}");
    own.stop().await;

    // `--unsafe-allow-all` of a kapture that did not launch this browser does not lift the
    // person's defaults on its own (the person accepts it in the panel: attacks_bridge.rs).
    let trusting = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "connect".into(),
            "--browser-wait-ms".into(),
            "40000".into(),
            "--approval-timeout-ms".into(),
            "1500".into(),
            "--unsafe-allow-all".into(),
        ],
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    let out = trusting
        .call("browser_click", json!({"selector": "#shift"}))
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert_eq!(button_text(&launcher, "shift").await, "Shift");
    trusting.stop().await;
    launcher.stop().await;
}

kapture_e2e::on_both_engines! {
    a_redirect_to_a_denied_origin_is_refused_at_the_next_read_on => a_redirect_to_a_denied_origin_is_refused_at_the_next_read, a_redirect_to_a_denied_origin_is_refused_at_the_next_read_natively;
    an_action_inside_a_frame_is_judged_on_the_frames_origin_on => an_action_inside_a_frame_is_judged_on_the_frames_origin, an_action_inside_a_frame_is_judged_on_the_frames_origin_natively;
}

async fn a_redirect_to_a_denied_origin_is_refused_at_the_next_read_on(engine: Engine) {
    let site = Site::start().unwrap();
    let denied = Site::start().unwrap();
    let rule = format!("read@127.0.0.1:{}", denied.port());
    let k = Kapture::launch_on_with(engine, &["--deny", &rule]).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    k.ok("browser_snapshot", json!({})).await;
    let to = denied.url("page-b.html");
    k.ok(
        "browser_navigate",
        json!({"url": site.url(&format!("redirect?to={to}"))}),
    )
    .await;
    let out = k.call("browser_snapshot", json!({})).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(!out.text.contains("Page B"), "{}", out.text);
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_mode_switched_on_in_the_panel_refuses_changes_until_switched_off() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launched_with(&["--chromium-arg=--remote-debugging-port=0"])).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    let mut panel = Panel::open(&k, kapture_e2e::tab_of(&nav)).await;
    panel
        .until(
            "the connected status",
            "document.getElementById('status').dataset.state === 'connected'",
        )
        .await;
    panel.click("#safe-mode").await;
    panel
        .until(
            "safe mode on",
            "document.getElementById('safe-mode').checked",
        )
        .await;
    panel.shot("safe-mode-on").await;

    // Every server is refused in the extension; reads still work.
    let refused = eventually_refused(&k).await;
    assert!(refused.contains("safe mode"), "{refused}");
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    assert!(
        snapshot.contains("\"Shift\"") && !snapshot.contains("plain click"),
        "reads work and nothing was clicked: {snapshot}"
    );

    panel.click("#safe-mode").await;
    panel
        .until(
            "safe mode off",
            "!document.getElementById('safe-mode').checked",
        )
        .await;
    k.ok("browser_click", json!({"selector": "#shift"})).await;
    assert_eq!(button_text(&k, "shift").await, "plain click");
    k.stop().await;
}

/// The click refused by safe mode (the switch reaches the worker asynchronously).
async fn eventually_refused(k: &Kapture) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let out = k
            .call("browser_hover", json!({"selector": "#hover-target"}))
            .await;
        if out.code().as_deref() == Some("POLICY_DENIED") {
            let click = k.call("browser_click", json!({"selector": "#shift"})).await;
            assert_eq!(
                click.code().as_deref(),
                Some("POLICY_DENIED"),
                "{}",
                click.text
            );
            return click.text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "safe mode never applied: {}",
            out.text
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn an_action_inside_a_frame_is_judged_on_the_frames_origin_on(engine: Engine) {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let rule = format!("interact@127.0.0.1:{}", other.port());
    let k = Kapture::launch_on_with(engine, &["--deny", &rule]).await;
    let url = format!(
        "{}?cross={}",
        site.url("frames.html"),
        other.url("frame-child.html")
    );
    k.ok("browser_navigate", json!({"url": url})).await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    let lines: Vec<&str> = snap.lines().collect();
    let cross_at = lines
        .iter()
        .position(|l| l.contains("iframe \"Cross origin\""))
        .unwrap();
    let same_pay = ref_on(&lines[..cross_at].join("\n"), "button \"Pay now\"");
    let cross_pay = ref_on(&lines[cross_at..].join("\n"), "button \"Pay now\"");

    // The allowed page embeds the denied origin: a click inside that frame is refused.
    let out = k.call("browser_click", json!({"ref": cross_pay})).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(out.text.contains(&other.port().to_string()), "{}", out.text);
    k.ok("browser_click", json!({"ref": same_pay})).await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert_eq!(
        snap.matches("paid with").count(),
        1,
        "only the allowed frame was clicked:\n{snap}"
    );
    k.stop().await;
}

/// The natively asked question's answers (what the client's form offers).
const ONCE: &str = "approve once";
const SESSION: &str = "approve for this session";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn natively_the_mcp_client_is_asked_and_its_answer_decides() {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let elicit = Elicit::answering(&[
        Said::Decline,
        Said::Cancel,
        Said::Accept("deny"),
        Said::Accept(ONCE),
        Said::Accept(SESSION),
    ]);
    let k = Kapture::launch_asking(
        Engine::Cdp,
        &[
            "--ask",
            "interact@127.0.0.1",
            "--approval-timeout-ms",
            "3000",
        ],
        Some(elicit.clone()),
    )
    .await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    let shift = ref_on(&snap, "Shift");
    let origin = format!("http://127.0.0.1:{}", site.port());

    // Declined, dismissed, denied: refused with the reason, and the page is unchanged.
    for why in [
        "declined the question in kapture-e2e",
        "dismissed the question",
        "a person denied it",
    ] {
        let out = k.call("browser_click", json!({"ref": shift})).await;
        assert_eq!(
            out.code().as_deref(),
            Some("APPROVAL_DENIED"),
            "{}",
            out.text
        );
        assert!(out.text.contains(why), "{why}: {}", out.text);
        assert_eq!(
            button_text(&k, "shift").await,
            "Shift",
            "nothing was clicked"
        );
    }
    let asked = elicit.asked();
    assert_eq!(asked.len(), 3, "one question per refused click");
    let (message, schema) = &asked[0];
    assert!(
        message.contains("browser_click (interact)")
            && message.contains(&origin)
            && message.contains("The element, as the page names it: `button \"Shift\"")
            && message.contains("--ask interact@127.0.0.1"),
        "the question names the tool, the site, the element and the rule: {message}"
    );
    assert_eq!(
        schema["properties"]["answer"]["enum"],
        json!([ONCE, SESSION, "deny"]),
        "{schema}"
    );

    // Approved once: the click runs; the next one is asked again.
    k.ok("browser_click", json!({"ref": shift})).await;
    assert_eq!(button_text(&k, "shift").await, "plain click");
    k.eval("() => { document.getElementById('shift').textContent = 'Shift'; }")
        .await;
    k.ok("browser_click", json!({"ref": shift})).await;
    assert_eq!(button_text(&k, "shift").await, "plain click");
    assert_eq!(
        elicit.asked().len(),
        5,
        "an approval once is for one action"
    );

    // Approved for the session: interact on this origin goes ahead unasked.
    k.eval("() => { document.getElementById('shift').textContent = 'Shift'; }")
        .await;
    k.ok("browser_click", json!({"ref": shift})).await;
    assert_eq!(button_text(&k, "shift").await, "plain click");
    assert_eq!(
        elicit.asked().len(),
        5,
        "the session's approval was remembered"
    );

    // ...but only on that origin; a silent person is a denial when the time is up.
    elicit.will(&[Said::Silent]);
    k.ok("browser_navigate", json!({"url": other.url("input.html")}))
        .await;
    let out = k.call("browser_click", json!({"selector": "#shift"})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("nobody answered"), "{}", out.text);
    assert_eq!(button_text(&k, "shift").await, "Shift");
    assert_eq!(elicit.asked().len(), 6);

    let expected = [
        "ask: deny",
        "ask: withdrawn",
        "ask: deny",
        "ask: once",
        "ask: origin",
        "ask: timeout",
    ];
    // Every answer is journaled, and who gave it: the MCP client, through elicitation (the
    // journal writes on its own task).
    kapture_e2e::eventually(
        "the answers in the journal",
        Duration::from_secs(10),
        || {
            let answers: Vec<String> = k
                .audit_lines()
                .iter()
                .filter(|e| e["who"] == "MCP client (elicitation)")
                .filter_map(|e| e["verdict"].as_str().map(str::to_string))
                .collect();
            std::future::ready((answers == expected).then_some(()))
        },
    )
    .await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn natively_a_client_without_elicitation_gets_the_rules_fallback_said() {
    let site = Site::start().unwrap();
    let k = Kapture::launch_asking(Engine::Cdp, &["--ask", "interact@127.0.0.1"], None).await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    let out = k.call("browser_click", json!({"selector": "#shift"})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("did not declare the elicitation capability")
            && out.text.contains("fallback applies: deny"),
        "{}",
        out.text
    );
    assert_eq!(
        button_text(&k, "shift").await,
        "Shift",
        "nothing was clicked"
    );
    // Journaled as the rule's fallback, not as anyone's answer.
    kapture_e2e::eventually(
        "the fallback in the journal",
        Duration::from_secs(10),
        || {
            let lines = k.audit_lines();
            let found = lines.iter().any(|e| {
                e["who"] == "rule's fallback (the MCP client could not be asked)"
                    && e["verdict"] == "ask: fallback: deny"
                    && e["status"] == "APPROVAL_DENIED"
            });
            let misnamed = lines
                .iter()
                .any(|e| e["who"].as_str().is_some_and(|w| w.starts_with("person")));
            assert!(!misnamed, "nobody was asked: {lines:?}");
            std::future::ready(found.then_some(()))
        },
    )
    .await;
    k.stop().await;
}

/// The side panel's port, as a test speaks it: `watch`, then the next `control` event that
/// passes `pick` (a JS arrow over the event), or null after 10 s.
fn watch_for(pick: &str) -> String {
    format!(
        r#"new Promise((done) => {{
            const p = window.__side || (window.__side = chrome.runtime.connect({{name: 'kapture-panel'}}));
            const t = setTimeout(() => done(null), 10000);
            const seen = (m) => {{ if (m.type === 'control') {{ const v = ({pick})(m); if (v) {{ clearTimeout(t); p.onMessage.removeListener(seen); done(v); }} }} }};
            p.onMessage.addListener(seen);
            p.postMessage({{type: 'watch'}});
        }})"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_says_its_risk_and_always_allow_here_holds_until_revoked() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launched_with(&[
        "--ask",
        &format!("interact@127.0.0.1:{}", site.port()),
        "--approval-timeout-ms",
        "30000",
        "--chromium-arg=--remote-debugging-port=0",
    ]))
    .await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let mut panel = Panel::open(&k, tab).await;
    // "Create account" names nothing risky; the page says it submits its form.
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let create = ref_on(&snapshot, "\"Create account\"");
    let (click, ()) = tokio::join!(k.call("browser_click", json!({"ref": create})), async {
        panel
            .until(
                "the approval",
                "document.querySelector('[id^=approve-always-]')?.id",
            )
            .await;
        let risk = panel
            .eval("[document.querySelector('li.approval').dataset.risk, document.querySelector('li.approval').textContent]")
            .await;
        assert_eq!(risk[0], "high", "{risk}");
        assert!(
            risk[1].as_str().unwrap().contains("submits a form"),
            "{risk}"
        );
        panel.shot("approval-risk").await;
        panel.click("[id^=approve-always-]").await;
    });
    assert!(!click.is_error, "{}", click.text);
    // Kept for every agent: the next click there is not asked (nobody answers).
    k.ok("browser_click", json!({"selector": "#terms"})).await;
    let origin = format!("http://127.0.0.1:{}", site.port());
    let grants = panel
        .eval(&watch_for(&format!(
            "(m) => m.person.grants.find((g) => g.origin === '{origin}' && g.category === 'interact')"
        )))
        .await;
    assert!(grants.is_object(), "the grant is listed: {grants}");
    // Revoked: asked again.
    panel
        .eval(&format!(
            "window.__side.postMessage({{type: 'revoke', origin: '{origin}', category: 'interact'}}), true"
        ))
        .await;
    panel
        .eval(&watch_for(&format!(
            "(m) => !m.person.grants.some((g) => g.origin === '{origin}') && 'gone'"
        )))
        .await;
    let (again, ()) = tokio::join!(
        k.call("browser_click", json!({"selector": "#terms"})),
        async {
            panel
                .until(
                    "the approval after the revoke",
                    "document.querySelector('[id^=approve-deny-]')?.id",
                )
                .await;
            panel.click("[id^=approve-deny-]").await;
        }
    );
    assert_eq!(
        again.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        again.text
    );
    k.stop().await;
}

/// The risk of a control whose text says nothing: what the page says of it elsewhere (a
/// picture's alt text, the label it points to, its id, where its link goes) or its words
/// in another language or script make it high; a plain "Next" stays low.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_is_rated_on_what_the_page_says_of_it_in_any_words() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launched_with(&[
        "--ask",
        &format!("interact@127.0.0.1:{}", site.port()),
        "--approval-timeout-ms",
        "30000",
        "--chromium-arg=--remote-debugging-port=0",
    ]))
    .await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("risky.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let mut panel = Panel::open(&k, tab).await;
    for (id, risk, why) in [
        ("icon", "high", "a deletion"),
        ("labelled", "high", "a payment"),
        ("btnCheckout", "high", "a purchase"),
        ("cross", "high", "a deletion"),
        ("russian", "high", "a deletion"),
        ("japanese", "high", "a purchase"),
        ("next", "low", "acts on the page"),
        // What the click activates: an invalid button type submits, as does a span inside
        // a submit button; a label clicks its file input.
        ("go", "high", "submits a form"),
        ("inner-span", "high", "submits a form"),
        ("attach-label", "high", "a file control"),
        // Words a weaker naming rule missed.
        ("pseudo", "high", "a deletion"),
        ("shadow-host", "high", "a deletion"),
        ("svg-decoy", "high", "a deletion"),
        ("icon-bin", "high", "a deletion"),
        ("handler", "high", "a deletion"),
        ("long-label", "high", "a deletion"),
        // Unicode that splits or disguises a word the screen shows whole.
        ("cgj", "high", "a deletion"),
        ("vs", "high", "a deletion"),
        ("tagch", "high", "a deletion"),
        ("upper", "high", "a deletion"),
        ("split", "high", "a deletion"),
    ] {
        let (click, ()) = tokio::join!(
            k.call("browser_click", json!({"selector": format!("#{id}")})),
            async {
                panel
                    .until(
                        "the approval",
                        "document.querySelector('[id^=approve-deny-]')?.id",
                    )
                    .await;
                let seen = panel
                    .eval("[document.querySelector('li.approval').dataset.risk, document.querySelector('li.approval .why').textContent]")
                    .await;
                assert_eq!(seen[0], risk, "#{id}: {seen}");
                assert!(
                    seen[1].as_str().unwrap_or_default().contains(why),
                    "#{id}: {seen}"
                );
                panel.click("[id^=approve-deny-]").await;
            }
        );
        assert_eq!(
            click.code().as_deref(),
            Some("APPROVAL_DENIED"),
            "{}",
            click.text
        );
        panel
            .until(
                "the approval gone",
                "!document.querySelector('li.approval')",
            )
            .await;
    }
    k.stop().await;
}

/// The Kapture window the extension opens for an approval on `tab`, once it shows one.
async fn approval_window(k: &Kapture, tab: i64) -> Panel {
    let mut raw = k.raw_cdp().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let session = loop {
        if let Ok(session) = raw.attach_page(&format!("panel.html?tabId={tab}")).await {
            break session;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the approval window for tab {tab} never opened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut panel = Panel { raw, session };
    panel
        .until(
            "the approval",
            "document.querySelector('[id^=approve-once-]')?.id",
        )
        .await;
    panel
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_for_this_agent_is_never_another_kaptures_agent_of_the_same_number() {
    let site = Site::start().unwrap();
    let shared = tempfile::tempdir().unwrap();
    let mut start = Start::debuggable();
    start.runtime_dir = Some(shared.path().to_path_buf());
    start.args.extend([
        "--ask".into(),
        format!("interact@127.0.0.1:{}", site.port()),
        "--approval-timeout-ms".into(),
        "30000".into(),
    ]);
    let a = Kapture::start(start).await;
    let tab_a = kapture_e2e::tab_of(
        &a.ok("browser_navigate", json!({"url": site.url("input.html")}))
            .await,
    );
    // A's agent (MCP session 1 of its kapture) is allowed "for this agent".
    let (click, _panel) = tokio::join!(
        a.call("browser_click", json!({"selector": "#shift"})),
        async {
            let mut panel = approval_window(&a, tab_a).await;
            panel.click("[id^=approve-origin-]").await;
            panel
        }
    );
    assert!(!click.is_error, "{}", click.text);
    assert!(
        !a.call("browser_click", json!({"selector": "#shift"}))
            .await
            .is_error
    );

    // B, another kapture connected to the same browser, whose agent is also its session 1:
    // it is asked, and the person's denial holds.
    let b = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "connect".into(),
            "--browser-wait-ms".into(),
            "40000".into(),
            "--approval-timeout-ms".into(),
            "30000".into(),
        ],
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    let tab_b = b.new_tab(&site.url("input.html")).await;
    let (out, ()) = tokio::join!(
        b.call(
            "browser_click",
            json!({"selector": "#shift", "tabId": tab_b})
        ),
        async {
            let mut panel = approval_window(&a, tab_b).await;
            panel.click("[id^=approve-deny-]").await;
        }
    );
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert_eq!(
        a.eval_on(tab_b, "() => document.getElementById('shift').textContent")
            .await,
        "Shift",
        "B's click did not run"
    );
    b.stop().await;
    a.stop().await;
}

/// The risk and why of a natively asked question (`Risk: HIGH — `why``), and the arguments
/// it showed.
fn risk_in(message: &str) -> (String, String, String) {
    let line = |prefix: &str| {
        message
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_default()
            .to_string()
    };
    let risk = line("Risk: ");
    let (level, why) = risk.split_once(" — ").unwrap_or((&risk, ""));
    (
        level.to_string(),
        why.to_string(),
        line("The arguments, as the agent gave them: "),
    )
}

/// Call `tool` (refused: nobody approves it) and answer the question it asked.
async fn asked_about(k: &Kapture, elicit: &Elicit, tool: &str, args: serde_json::Value) -> String {
    let before = elicit.asked().len();
    let out = k.call(tool, args.clone()).await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{tool} {args}: {}",
        out.text
    );
    let asked = elicit.asked();
    assert_eq!(asked.len(), before + 1, "{tool} {args} asked once");
    asked[before].0.clone()
}

/// What input really lands on is rated, read from the page: the element at a point, the
/// focused element a key goes to, both ends of a drag, a dialog's message, every field of a
/// form fill. Typed text is hidden because the field is confidential, never because of the
/// agent's words; an element that cannot be read (a dialog holds the page) is at least
/// medium.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_input_lands_on_is_rated_and_masked_by_the_element() {
    let site = Site::start().unwrap();
    let elicit = Elicit::answering(&[]);
    let k = Kapture::launch_asking(
        Engine::Cdp,
        &[
            "--ask",
            "interact@127.0.0.1",
            "--approval-timeout-ms",
            "5000",
        ],
        Some(elicit.clone()),
    )
    .await;
    k.ok("browser_navigate", json!({"url": site.url("risky.html")}))
        .await;
    let center = |of: &str| {
        format!("() => {{ const e = {of}; const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }}")
    };
    let pay = k.eval(&center("document.getElementById('pay-xy')")).await;
    let inner = k
        .eval(&center(
            "document.getElementById('shadow-labelled').shadowRoot.getElementById('inner')",
        ))
        .await;
    let xy = |at: &serde_json::Value| json!({"x": at[0], "y": at[1]});
    // (the element focused first, [tool, args], risk, why)
    let cases = [
        (
            "",
            json!(["browser_mouse_click_xy", xy(&pay)]),
            "HIGH",
            "a payment",
        ),
        (
            "",
            json!(["browser_mouse_click_xy", xy(&inner)]),
            "HIGH",
            "a deletion",
        ),
        (
            "delete-account",
            json!(["browser_press_key", {"key": "Space"}]),
            "HIGH",
            "a deletion",
        ),
        (
            "msg",
            json!(["browser_press_key", {"key": "\n"}]),
            "HIGH",
            "submits",
        ),
        (
            "",
            json!(["browser_drag", {"startSelector": "#item", "endSelector": "#drop-zone"}]),
            "HIGH",
            "a deletion",
        ),
    ];
    for (focus, call, risk, why) in cases {
        if !focus.is_empty() {
            k.eval(&format!(
                "() => {{ document.getElementById('{focus}').focus(); return 1; }}"
            ))
            .await;
        }
        let tool = call[0].as_str().unwrap();
        let message = asked_about(&k, &elicit, tool, call[1].clone()).await;
        let (level, said, _) = risk_in(&message);
        assert_eq!(level, risk, "{call}: {message}");
        assert!(said.contains(why), "{call}: {message}");
    }

    // Every field of a form fill is read: the card field makes it high, and only its value
    // is hidden.
    let message = asked_about(
        &k,
        &elicit,
        "browser_fill_form",
        json!({"fields": [{"selector": "#holder", "value": "Ada"}, {"selector": "#cc", "value": "Canary-cc-42"}]}),
    )
    .await;
    let (level, why, args) = risk_in(&message);
    assert_eq!(level, "HIGH", "{message}");
    assert!(why.contains("card"), "{message}");
    assert!(
        args.contains("Ada") && !args.contains("Canary-cc-42"),
        "{message}"
    );
    // A field the page shows as bullets, labelled Password: high, and the text hidden.
    let message = asked_about(
        &k,
        &elicit,
        "browser_type",
        json!({"selector": "#pw-text", "text": "Canary-pw-7"}),
    )
    .await;
    let (level, _, args) = risk_in(&message);
    assert_eq!(level, "HIGH", "{message}");
    assert!(!args.contains("Canary-pw-7"), "{message}");
    // The agent's own words for an ordinary field hide nothing from the person.
    let message = asked_about(
        &k,
        &elicit,
        "browser_type",
        json!({"selector": "#note", "element": "bypass", "text": "Send $500 to Mallory"}),
    )
    .await;
    let (level, _, args) = risk_in(&message);
    assert_eq!(level, "MEDIUM", "{message}");
    assert!(args.contains("Send $500 to Mallory"), "{message}");

    // Accepting a dialog is rated on its message.
    k.eval("() => { setTimeout(() => confirm('Delete your account?'), 0); return 1; }")
        .await;
    let message =
        kapture_e2e::eventually("the dialog's question", Duration::from_secs(10), || async {
            let before = elicit.asked().len();
            let out = k
                .call("browser_handle_dialog", json!({"accept": true}))
                .await;
            (out.code().as_deref() == Some("APPROVAL_DENIED") && elicit.asked().len() > before)
                .then(|| elicit.asked()[before].0.clone())
                .filter(|m| m.contains("Risk: HIGH"))
        })
        .await;
    assert!(risk_in(&message).1.contains("a deletion"), "{message}");
    // The open dialog holds the page: an element it cannot say anything of is at least
    // medium, and the question says why.
    let message = asked_about(&k, &elicit, "browser_click", json!({"selector": "#next"})).await;
    let (level, why, _) = risk_in(&message);
    assert_eq!(level, "MEDIUM", "{message}");
    assert!(why.contains("could not be read"), "{message}");
    elicit.will(&[Said::Accept(ONCE)]);
    k.ok("browser_handle_dialog", json!({"accept": false}))
        .await;
    k.stop().await;
}

/// What input would land on inside a frame the rules may not read is not read for the
/// question either: its words neither reach the agent nor shape the risk, which says it
/// could not be read. The same element in a readable frame is read and rated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_the_rules_may_not_read_is_not_read_to_rate_an_approval() {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let elicit = Elicit::answering(&[]);
    let ask = format!("interact@127.0.0.1:{}", site.port());
    let hidden = format!("read@127.0.0.1:{}", other.port());
    let k = Kapture::launch_asking(
        Engine::Cdp,
        &[
            "--ask",
            &ask,
            "--deny",
            &hidden,
            "--approval-timeout-ms",
            "5000",
        ],
        Some(elicit.clone()),
    )
    .await;
    let url = format!(
        "{}?cross={}",
        site.url("frames.html"),
        other.url("frame-child.html")
    );
    k.ok("browser_navigate", json!({"url": url})).await;
    // Both frames show the same page: the pay button sits at the same place in each.
    let at = |frame: &str| {
        format!(
            "() => new Promise(done => {{ const tick = () => {{ const s = document.getElementById('same'); const pay = s.contentDocument && s.contentDocument.getElementById('pay'); if (!pay) return setTimeout(tick, 20); const f = document.getElementById('{frame}').getBoundingClientRect(); const r = pay.getBoundingClientRect(); const o = s.clientLeft; done([f.x + o + r.x + r.width / 2, f.y + o + r.y + r.height / 2]); }}; tick(); }})"
        )
    };
    let xy = |p: &serde_json::Value| json!({"x": p[0], "y": p[1]});
    let same = k.eval(&at("same")).await;
    let message = asked_about(&k, &elicit, "browser_mouse_click_xy", xy(&same)).await;
    let (level, why, _) = risk_in(&message);
    assert_eq!(level, "HIGH", "{message}");
    assert!(why.contains("a payment"), "{message}");

    // The cross frame must have loaded before its button can be aimed at.
    kapture_e2e::eventually("the cross frame", Duration::from_secs(10), || async {
        (k.eval("() => document.body.dataset.crossLoaded || ''")
            .await
            == "1")
            .then_some(())
    })
    .await;
    let cross = k.eval(&at("cross")).await;
    let message = asked_about(&k, &elicit, "browser_mouse_click_xy", xy(&cross)).await;
    let (level, why, _) = risk_in(&message);
    assert_eq!(level, "MEDIUM", "{message}");
    assert!(why.contains("could not be read"), "{message}");
    assert!(
        !message.contains("payment") && !message.contains("Pay now"),
        "{message}"
    );
    k.stop().await;
}

/// A new tab whose navigation the person does not approve is closed again: nothing is left
/// behind in their browser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_tab_refused_its_navigation_leaves_no_tab_behind() {
    let site = Site::start().unwrap();
    let elsewhere = Site::start().unwrap();
    let elicit = Elicit::answering(&[Said::Decline]);
    let ask = format!("navigate@127.0.0.1:{}", elsewhere.port());
    let k = Kapture::launch_asking(
        Engine::Cdp,
        &["--ask", &ask, "--approval-timeout-ms", "5000"],
        Some(elicit.clone()),
    )
    .await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let before = k.ok("browser_tabs", json!({"action": "list"})).await;
    let out = k
        .call(
            "browser_tabs",
            json!({"action": "new", "url": elsewhere.url("page-b.html")}),
        )
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert_eq!(elicit.asked().len(), 1, "the person was asked");
    let after = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        after.lines().count(),
        before.lines().count(),
        "{before}\n---\n{after}"
    );
    assert!(!after.contains("about:blank"), "{after}");
    // Nor one whose address may not be opened at all.
    let out = k
        .call(
            "browser_tabs",
            json!({"action": "new", "url": "chrome://settings"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    let after = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        after.lines().count(),
        before.lines().count(),
        "{before}\n---\n{after}"
    );
    k.stop().await;
}
