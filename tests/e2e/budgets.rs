//! Step budgets for real: `--max-steps` per MCP session (refused with a coded, retryable
//! error, told to the extension, extended by a person), and `maxStepsPerHour` per origin from
//! the policy file on both engines (the refusal says when it resets).

use kapture_e2e::panel::Panel;
use kapture_e2e::{Engine, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_over_its_max_steps_is_refused_until_a_person_extends_it() {
    let site = Site::start().unwrap();
    let mut opts = Start::debuggable();
    opts.args.extend(["--max-steps".into(), "2".into()]);
    let k = Kapture::start(opts).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("console.html")}))
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    // Reads are not steps; browser_status says where the budget stands.
    k.ok("browser_snapshot", json!({})).await;
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("steps 2 of 2 (--max-steps)"), "{status}");
    let over = k
        .call("browser_navigate", json!({"url": site.url("console.html")}))
        .await;
    assert!(over.is_error);
    assert_eq!(
        over.code().as_deref(),
        Some("BUDGET_EXCEEDED"),
        "{}",
        over.text
    );
    assert!(
        over.text.contains("does not reset with time"),
        "{}",
        over.text
    );
    let sc = over.structured.clone().unwrap();
    assert_eq!(
        sc["retryable"],
        json!(false),
        "a session's budget never resets: {sc}"
    );
    assert!(
        sc["suggestion"]
            .as_str()
            .is_some_and(|s| s.contains("side panel")),
        "{sc}"
    );

    // The extension heard of it: a side panel's controls list the spent session, and a
    // person extends it by one step.
    let port = k.handshakes()[0]["port"].as_u64().unwrap();
    let mut panel = Panel::open(&k, tab).await;
    let listen = r#"new Promise((done) => {
        const p = chrome.runtime.connect({name: 'kapture-panel'});
        window.__side = p;
        const t = setTimeout(() => done(null), 10000);
        p.onMessage.addListener((m) => {
            if (m.type === 'control' && m.sessions.length) { clearTimeout(t); done(m.sessions); }
        });
        p.postMessage({type: 'watch'});
    })"#;
    let sessions = panel.eval(listen).await;
    let spent = &sessions
        .as_array()
        .unwrap_or_else(|| panic!("a spent session is listed: {sessions}"))[0];
    assert_eq!(
        (
            spent["port"].as_u64(),
            spent["used"].as_u64(),
            spent["max"].as_u64()
        ),
        (Some(port), Some(2), Some(2)),
        "{sessions}"
    );
    assert!(spent["label"].as_str().unwrap().ends_with("#1"), "{spent}");
    let extend = format!(
        "window.__side.postMessage({{type: 'extend', budget: {{kind: 'session', port: {port}, session: {}}}, steps: 1}}), true",
        Value::String(spent["session"].as_str().unwrap().into())
    );
    panel.eval(&extend).await;
    kapture_e2e::eventually(
        "the extended budget",
        std::time::Duration::from_secs(10),
        || async {
            let r = k
                .call("browser_navigate", json!({"url": site.url("console.html")}))
                .await;
            (!r.is_error).then_some(())
        },
    )
    .await;
    // One step more, then spent again.
    let again = k
        .call("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert_eq!(
        again.code().as_deref(),
        Some("BUDGET_EXCEEDED"),
        "{}",
        again.text
    );
    let journal = k.audit_lines();
    assert!(
        journal
            .iter()
            .any(|e| e["tool"] == "extend_budget" && e["who"] == "person (side panel)"),
        "{journal:?}"
    );
}

async fn origin_budget_on(engine: Engine) {
    let site = Site::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[[budget]]\norigin = \"127.0.0.1\"\nmaxStepsPerHour = 2\n",
    )
    .unwrap();
    let k = Kapture::launch_on_with(engine, &["--policy", policy.to_str().unwrap()]).await;
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    k.ok("browser_navigate", json!({"url": site.url("console.html")}))
        .await;
    // Reading is free.
    k.ok("browser_snapshot", json!({})).await;
    let over = k
        .call("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert_eq!(
        over.code().as_deref(),
        Some("BUDGET_EXCEEDED"),
        "{engine:?}: {}",
        over.text
    );
    assert!(
        over.text.contains("2 steps per hour on 127.0.0.1")
            && over.text.contains("resets in 60 min")
            && over.text.contains("policy.toml line 1"),
        "{engine:?}: {}",
        over.text
    );
    let sc = over.structured.unwrap();
    let resets = sc["resetsAt"].as_u64().expect("resetsAt");
    let now = ext_core::platform::now_ms() as u64;
    assert!(
        resets > now + 3_500_000 && resets <= now + 3_600_000,
        "{engine:?}: {sc}"
    );
    assert_eq!(sc["retryable"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_budget_from_the_policy_file_holds_on_the_extension() {
    origin_budget_on(Engine::Extension).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_budget_from_the_policy_file_holds_on_the_native_engine() {
    origin_budget_on(Engine::Cdp).await;
}

/// The steps a saved scenario's chain sends as actions (what a replay counts).
fn actions_in(scenario: &Value) -> usize {
    scenario["chain"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            !matches!(
                s["method"].as_str(),
                Some("wait_for_load" | "scroll" | "new_tab")
            )
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_counts_each_action_it_sends_against_max_steps() {
    let site = Site::start().unwrap();
    let data = tempfile::tempdir().unwrap();
    // Recorded without a budget: four fields typed.
    let rec = Kapture::start(Start {
        data_dir: Some(data.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    rec.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    rec.ok("browser_recorder", json!({"action": "start"})).await;
    for (field, text) in [
        ("#name", "Ada"),
        ("#email", "ada@example.test"),
        ("#birthday", "1815-12-10"),
        ("#notes", "engines"),
    ] {
        rec.ok("browser_type", json!({"selector": field, "text": text}))
            .await;
    }
    rec.ok(
        "browser_recorder",
        json!({"action": "stop", "name": "fill_in", "title": "Fill in"}),
    )
    .await;
    let got = rec.ok("scenario_get", json!({"name": "fill_in"})).await;
    let scenario: Value = serde_json::from_str(&got).unwrap();
    let actions = actions_in(&scenario);
    assert!(actions >= 4, "{scenario:#}");
    rec.stop().await;

    // A session allowed one step for its navigation and one action fewer than the scenario
    // sends: the replay stops at the last one, refused, and later calls are refused at once.
    let mut opts = Start {
        data_dir: Some(data.path().to_path_buf()),
        ..Start::default()
    };
    opts.args
        .extend(["--max-steps".into(), actions.to_string()]);
    let k = Kapture::start(opts).await;
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    let run = k.call("scenario_fill_in", json!({})).await;
    assert!(
        run.text.contains("BUDGET_EXCEEDED") && run.text.contains("\"success\": false"),
        "{}",
        run.text
    );
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains(&format!("steps {actions} of {actions} (--max-steps)")),
        "{status}"
    );
    let again = k.call("scenario_run", json!({"name": "fill_in"})).await;
    assert_eq!(
        again.code().as_deref(),
        Some("BUDGET_EXCEEDED"),
        "{}",
        again.text
    );
}
