//! The recorder in a real browser: a login driven with trusted input is saved as a
//! scenario of placeholders, its secrets sealed on disk where the canary shows in no form;
//! the page can neither see the recorder nor feed it synthetic events; the agent lists,
//! reads and deletes what was saved.

use base64::Engine;
use kapture_e2e::Kapture;
use serde_json::{json, Value};
use www_test_pages::Site;

const CANARY: &str = "Rec0rder-Canary-Pw!";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_login_is_saved_with_placeholders_and_sealed_secrets() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    let started = k.ok("browser_recorder", json!({"action": "start"})).await;
    assert!(started.contains("Recording"), "{started}");

    // The page cannot reach the recorder, and its synthetic events are not recorded.
    assert_eq!(
        k.eval("typeof globalThis.__kaptureRecord").await,
        "undefined"
    );
    k.eval(
        "document.querySelector('button').dispatchEvent(new MouseEvent('click', {bubbles: true}))",
    )
    .await;

    // A person's flow, as trusted input.
    k.type_login("ada", CANARY).await;
    k.ok("browser_click", json!({"selector": "button"})).await;

    let refused = k.call("browser_recorder", json!({"action": "stop"})).await;
    assert_eq!(
        refused.code().as_deref(),
        Some("BAD_ARGS"),
        "{}",
        refused.text
    );
    let saved = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "login", "title": "Log in"}),
        )
        .await;
    assert!(saved.contains("Saved scenario login"), "{saved}");
    assert!(
        saved.contains("password") && saved.contains("username"),
        "{saved}"
    );
    assert!(!saved.contains(CANARY), "{saved}");

    let scenario: Value = serde_json::from_slice(
        &std::fs::read(k.data_dir().join("scenarios").join("login.json")).unwrap(),
    )
    .unwrap();
    eprintln!("SCENARIO {scenario:#}");
    let methods: Vec<&str> = scenario["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["navigate", "type", "type", "click"], "{scenario}");
    assert_eq!(scenario["chain"][2]["params"]["text"], "{{password}}");
    let first_locator = &scenario["chain"][3]["params"]["locators"][0];
    assert_eq!(first_locator["by"], "role", "{first_locator}");
    assert_eq!(
        kapture_e2e::secret_names(&scenario),
        ["username", "password"]
    );
    // The file format's version 2: where it starts, when and by whom it was saved, and
    // what each parameter takes.
    assert_eq!(scenario["version"], 2, "{scenario}");
    assert_eq!(scenario["startUrl"], site.url("login.html"), "{scenario}");
    let at = scenario["recordedAt"].as_str().unwrap_or_default();
    assert!(at.len() == 20 && at.ends_with('Z'), "{scenario}");
    for p in scenario["parameters"].as_array().unwrap() {
        assert_eq!(
            (&p["type"], &p["required"]),
            (&json!("string"), &json!(true)),
            "{p}"
        );
    }
    // The index is an object with its version, time and counts; the sealed secrets' folder
    // keeps itself out of Git.
    let index: Value = serde_json::from_slice(
        &std::fs::read(k.data_dir().join("scenarios").join("index.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(index["version"], 2, "{index}");
    assert!(
        index["lastUpdated"].as_str().unwrap().ends_with('Z'),
        "{index}"
    );
    assert_eq!(
        index["stats"],
        json!({"scenarios": 1, "steps": 4, "withDependencies": 0, "withSecrets": 1, "unreadable": 0}),
        "{index}"
    );
    assert_eq!(index["scenarios"][0]["name"], "login", "{index}");
    assert_eq!(
        std::fs::read_to_string(k.data_dir().join("secrets").join(".gitignore")).unwrap(),
        "*\n"
    );

    // Nowhere on disk in plain, base64 or hex; the sealed file is private.
    let b64 = base64::engine::general_purpose::STANDARD.encode(CANARY);
    let hex: String = CANARY.bytes().map(|b| format!("{b:02x}")).collect();
    for sub in ["scenarios", "secrets"] {
        for entry in std::fs::read_dir(k.data_dir().join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_lowercase();
            for needle in [CANARY.to_lowercase(), b64.to_lowercase(), hex.clone()] {
                assert!(
                    !text.contains(&needle),
                    "{} holds the canary",
                    path.display()
                );
            }
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", path.display());
            }
        }
    }
    let status = k.ok("browser_recorder", json!({"action": "status"})).await;
    assert!(status.contains("Not recording"), "{status}");

    // The saved scenario as the agent sees it: listed, readable without its secrets, deletable.
    let listed = k.ok("scenario_list", json!({"search": "log"})).await;
    assert!(
        listed.contains("login (title \"Log in\"): 4 steps")
            && listed.contains("secrets: username, password"),
        "{listed}"
    );
    let got = k.ok("scenario_get", json!({"name": "login"})).await;
    assert!(
        got.contains("{{password}}") && !got.contains(CANARY),
        "{got}"
    );

    // Replayed without a model from another page: the sealed secrets are typed, never shown.
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let ran = k.ok("scenario_run", json!({"name": "login"})).await;
    assert!(
        ran.contains("\"success\": true") && ran.contains("\"actionsExecuted\": 4"),
        "{ran}"
    );
    assert!(!ran.contains(CANARY), "{ran}");
    assert_eq!(k.eval("document.getElementById('user').value").await, "ada");
    assert_eq!(
        k.eval("document.getElementById('password').value.length")
            .await,
        CANARY.len()
    );
    // Parameters given by the caller win over what was recorded.
    k.ok(
        "scenario_run",
        json!({"name": "login", "parameters": {"username": "grace"}}),
    )
    .await;
    assert_eq!(
        k.eval("document.getElementById('user').value").await,
        "grace"
    );

    // A first locator that no longer matches falls back to the next one (here: role and
    // name through the page model).
    let mut edited: Value = serde_json::from_str(&got).unwrap();
    edited["name"] = json!("login_edited");
    edited["chain"][1]["params"]["locators"] = json!([
        {"by": "css", "value": "#renamed-user"},
        {"by": "role", "value": ["textbox", "User"]}
    ]);
    edited["parameters"] =
        json!([{"name": "username", "default": "linus"}, {"name": "password", "default": "x"}]);
    std::fs::write(
        k.data_dir().join("scenarios").join("login_edited.json"),
        serde_json::to_vec(&edited).unwrap(),
    )
    .unwrap();
    let ran = k.ok("scenario_run", json!({"name": "login_edited"})).await;
    assert!(ran.contains("\"success\": true"), "{ran}");
    assert_eq!(
        k.eval("document.getElementById('user').value").await,
        "linus"
    );
    k.ok("scenario_delete", json!({"name": "login_edited"}))
        .await;
    k.ok("scenario_delete", json!({"name": "login"})).await;
    assert!(k
        .ok("scenario_list", json!({}))
        .await
        .contains("No saved scenarios"));
    assert_eq!(
        k.fails("scenario_get", json!({"name": "login"})).await,
        "BAD_ARGS"
    );
    k.stop().await;
}

/// A tab the page opens while recording is a step of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_opened_while_recording_is_recorded() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("popup.html")}))
        .await;
    k.ok("browser_recorder", json!({"action": "start"})).await;
    k.ok("browser_click", json!({"selector": "#open"})).await;
    // Three raw events: the click, what the page showed after it, the new tab.
    kapture_e2e::eventually(
        "the new tab in the recording",
        std::time::Duration::from_secs(10),
        || async {
            let status = k.ok("browser_recorder", json!({"action": "status"})).await;
            let count: usize = status
                .strip_prefix("Recording: ")?
                .split(' ')
                .next()?
                .parse()
                .ok()?;
            (count >= 3).then_some(())
        },
    )
    .await;
    k.ok(
        "browser_recorder",
        json!({"action": "stop", "name": "opens_b"}),
    )
    .await;
    let scenario: Value = serde_json::from_slice(
        &std::fs::read(k.data_dir().join("scenarios").join("opens_b.json")).unwrap(),
    )
    .unwrap();
    let last = scenario["chain"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(last["method"], "new_tab", "{scenario:#}");
    assert!(
        last["params"]["url"]
            .as_str()
            .unwrap()
            .ends_with("page-b.html"),
        "{scenario:#}"
    );
    k.stop().await;
}

/// A multi-step form recorded as a person fills it: the step the form showed after each
/// Next is saved with that step (aria-current wins over a "Step 2 of 3" counter), and the
/// replay waits for each step in turn, saying so, before it types into it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_wizard_replays_step_by_step() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("wizard.html")}))
        .await;
    k.ok("browser_recorder", json!({"action": "start"})).await;
    k.ok(
        "browser_type",
        json!({"selector": "#email", "text": "ada@example.test"}),
    )
    .await;
    k.ok("browser_click", json!({"selector": "#next1"})).await;
    k.ok("browser_wait_for", json!({"text": "Step 2 of 3"}))
        .await;
    k.ok(
        "browser_type",
        json!({"selector": "#city", "text": "Paris"}),
    )
    .await;
    k.ok("browser_click", json!({"selector": "#next2"})).await;
    k.ok("browser_wait_for", json!({"text": "Step 3 of 3"}))
        .await;
    k.ok("browser_click", json!({"selector": "#finish"})).await;
    let saved = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "signup"}),
        )
        .await;
    assert!(saved.contains("Saved scenario signup"), "{saved}");
    let scenario: Value = serde_json::from_slice(
        &std::fs::read(k.data_dir().join("scenarios").join("signup.json")).unwrap(),
    )
    .unwrap();
    let steps: Vec<&Value> = scenario["chain"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["params"]["expect"].get("step"))
        .collect();
    assert_eq!(
        steps,
        [
            &json!({"by": "current", "value": "Shipping"}),
            &json!({"by": "current", "value": "Confirm"})
        ],
        "{scenario:#}"
    );

    // From another page, with another city: each step is waited for, then filled.
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let ran: Value = serde_json::from_str(
        &k.ok(
            "scenario_run",
            json!({"name": "signup", "parameters": {"city": "Kyoto"}}),
        )
        .await,
    )
    .unwrap();
    assert_eq!(ran["success"], true, "{ran:#}");
    let hints = ran["hints"].to_string();
    assert!(
        hints.contains("the form is on step \\\"Shipping\\\"")
            && hints.contains("the form is on step \\\"Confirm\\\""),
        "{ran:#}"
    );
    let done = k.ok("browser_get_text", json!({"selector": "#done"})).await;
    assert!(done.contains("Done: ada@example.test in Kyoto"), "{done}");
    k.stop().await;
}
