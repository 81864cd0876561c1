//! Record once, replay forever, in a real browser: a person records a login with the
//! in-page widget (clicked with trusted input, its form confirmed), the agent records the
//! shop's add-to-cart and checkout, and a fresh browser replays the checkout with new
//! values after its dependencies; a logged-in run skips the conditional login; each saved
//! scenario is also a tool; a cycle is refused.

use std::time::Duration;

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::panel::{screenshot, Panel};
use kapture_e2e::widget::{widget_click, widget_count};
use kapture_e2e::{eventually, on_both_engines, Engine, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

const CANARY: &str = "Widget-Canary-Pw!";

/// On the shop's login page with the widget shown: press Start like a person, then type
/// `email`; answers the raw CDP connection and the page's session.
async fn start_in_widget(k: &Kapture, email: &str) -> (RawCdp, String) {
    let mut raw = k.raw_cdp().await;
    let session = raw.attach_page("shop/login.html").await.unwrap();
    widget_click(&mut raw, &session, "button.start").await;
    until_recording(k).await;
    k.ok("browser_type", json!({"selector": "#email", "text": email}))
        .await;
    (raw, session)
}

/// Wait until the tab's recorder captures.
async fn until_recording(k: &Kapture) {
    eventually(
        "the recorder capturing",
        Duration::from_secs(10),
        || async {
            k.ok("browser_recorder", json!({"action": "status"}))
                .await
                .contains("Recording")
                .then_some(())
        },
    )
    .await;
}

fn report(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not a report ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_flows_replay_with_dependencies_in_a_fresh_browser() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let tools_changed_before = k.tools_changed();

    // 1. A person records the login with the widget.
    k.ok(
        "browser_navigate",
        json!({"url": site.url("shop/login.html")}),
    )
    .await;
    let enabled = k.ok("browser_recorder", json!({"action": "enable"})).await;
    assert!(enabled.contains("widget"), "{enabled}");
    // The page can neither reach into the widget nor call it.
    assert_eq!(
        k.eval("document.querySelector('kapture-recorder').shadowRoot")
            .await,
        Value::Null
    );
    assert_eq!(
        k.eval("typeof globalThis.__kaptureWidget").await,
        "undefined"
    );
    let (mut raw, session) = start_in_widget(&k, "ada@example.test").await;
    screenshot(&mut raw, &session, "recorder-widget-recording").await;
    k.ok(
        "browser_type",
        json!({"selector": "#password", "text": CANARY}),
    )
    .await;
    // The live list marks both typed secrets 🔒 (Rust's judgement), never their values.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while widget_count(&mut raw, &session, "ol.live li.secret").await != 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the live list never marked the email and the password"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    screenshot(&mut raw, &session, "recorder-widget-secrets").await;
    let signed_in = k
        .ok("browser_click", json!({"selector": "#login button"}))
        .await;
    assert!(signed_in.contains("index.html"), "{signed_in}");
    // The widget came back in the new document, still recording: stop, confirm, save.
    widget_click(&mut raw, &session, "button.stop").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while widget_count(&mut raw, &session, "input.sec").await != 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the confirmation never listed both secrets"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    screenshot(&mut raw, &session, "recorder-widget-confirm").await;
    widget_click(&mut raw, &session, "button.save").await;
    let saved_file = k.data_dir().join("scenarios").join("login.json");
    eventually(
        "kapture saved the login",
        Duration::from_secs(10),
        || async { saved_file.exists().then_some(()) },
    )
    .await;
    let login: Value = serde_json::from_slice(&std::fs::read(&saved_file).unwrap()).unwrap();
    let methods: Vec<&str> = login["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        ["navigate", "type", "type", "click", "wait_for_load"],
        "{login:#}"
    );
    assert_eq!(kapture_e2e::secret_names(&login).len(), 2, "{login:#}");
    for sub in ["scenarios", "secrets"] {
        for entry in std::fs::read_dir(k.data_dir().join(sub)).unwrap() {
            let text = std::fs::read(entry.unwrap().path()).unwrap();
            assert!(!String::from_utf8_lossy(&text).contains(CANARY));
        }
    }
    eventually(
        "the client heard the tool list change",
        Duration::from_secs(10),
        || async { (k.tools_changed() > tools_changed_before).then_some(()) },
    )
    .await;
    assert!(k.tool_names().await.contains(&"scenario_login".to_string()));

    // 2. The agent records adding a mug to the cart (the custom size drop-down included)…
    k.ok(
        "browser_navigate",
        json!({"url": site.url("shop/product.html?id=mug")}),
    )
    .await;
    k.ok("browser_recorder", json!({"action": "start"})).await;
    // Too early: the page says so (an alert the recording notes with the step).
    k.ok("browser_click", json!({"selector": "#add"})).await;
    k.ok("browser_wait_for", json!({"text": "Choose a size"}))
        .await;
    k.ok("browser_click", json!({"selector": "#size"})).await;
    k.ok("browser_click", json!({"selector": "#size-medium"}))
        .await;
    k.ok("browser_click", json!({"selector": "#add"})).await;
    let saved = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "add_to_cart", "title": "Add a mug", "tags": ["shop"]}),
        )
        .await;
    assert!(saved.contains("Saved scenario add_to_cart"), "{saved}");
    let add: Value = report(&k.ok("scenario_get", json!({"name": "add_to_cart"})).await);
    let noted = add["chain"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| s["params"]["expect"]["alert"].as_str())
        .map(str::to_string);
    assert_eq!(noted.as_deref(), Some("Choose a size"), "{add:#}");
    // …and the checkout, which depends on both; the login is suggested as conditional.
    k.ok(
        "browser_navigate",
        json!({"url": site.url("shop/checkout.html")}),
    )
    .await;
    k.ok("browser_recorder", json!({"action": "start"})).await;
    for (selector, text) in [("#name", "Ada Lovelace"), ("#address", "1 Loop Road")] {
        k.ok("browser_type", json!({"selector": selector, "text": text}))
            .await;
    }
    // A person picks from a native list with the keyboard (trusted; the recorder ignores
    // the synthetic events of browser_select_option).
    k.eval("document.getElementById('country').focus()").await;
    k.ok("browser_press_key", json!({"key": "j"})).await;
    assert_eq!(
        k.eval("document.getElementById('country').value").await,
        "Japan"
    );
    k.ok("browser_click", json!({"selector": "#gift"})).await;
    k.ok("browser_click", json!({"selector": "#shipping button"}))
        .await;
    for (selector, text) in [
        ("#cc-number", "4242 4242 4242 4242"),
        ("#cc-exp", "12/30"),
        ("#cc-csc", "123"),
    ] {
        k.ok("browser_type", json!({"selector": selector, "text": text}))
            .await;
    }
    k.ok("browser_click", json!({"selector": "#express"})).await;
    k.ok(
        "browser_click",
        json!({"selector": "#payment button[type=submit]"}),
    )
    .await;
    let placed = k
        .ok("browser_click", json!({"selector": "#place-order"}))
        .await;
    assert!(placed.contains("confirmation.html"), "{placed}");
    let saved = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "checkout", "title": "Check out",
                   "dependencies": ["login", "add_to_cart"]}),
        )
        .await;
    assert!(saved.contains("Saved scenario checkout"), "{saved}");
    let checkout = report(&k.ok("scenario_get", json!({"name": "checkout"})).await);
    assert_eq!(
        checkout["dependencies"][0],
        json!({"scenario": "login", "reason": format!("logs in on {}", site.url("").trim_end_matches('/')),
               "optional": false, "condition": "isAuthenticated", "parameters": {}}),
        "{checkout:#}"
    );
    let card_sealed = checkout["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["secret"] == true && p["name"].as_str().unwrap().starts_with("card"));
    assert!(card_sealed, "{checkout:#}");
    let listed = k
        .ok("scenario_list", json!({"hasDependencies": true}))
        .await;
    assert!(
        listed.contains("checkout") && !listed.contains("add_to_cart"),
        "{listed}"
    );
    let tagged = k.ok("scenario_list", json!({"tags": ["shop"]})).await;
    assert!(
        tagged.contains("add_to_cart") && !tagged.contains("- login"),
        "{tagged}"
    );

    // 3. A fresh browser with the same data folder: the checkout logs in and fills the cart
    // first, with a new name.
    let data = tempfile::tempdir().unwrap();
    copy_dir(&k.data_dir(), data.path());
    k.stop().await;
    let fresh = Kapture::start(Start {
        data_dir: Some(data.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    let names = fresh.tool_names().await;
    for tool in [
        "scenario_login",
        "scenario_add_to_cart",
        "scenario_checkout",
    ] {
        assert!(names.contains(&tool.to_string()), "{tool} in {names:?}");
    }
    let ran = report(
        &fresh
            .ok(
                "scenario_run",
                json!({"name": "checkout", "parameters": {"name": "Grace Hopper"}}),
            )
            .await,
    );
    assert_eq!(ran["success"], true, "{ran:#}");
    assert!(
        !ran["hints"].to_string().contains("recording"),
        "the replay met the alerts the recording met: {ran:#}"
    );
    assert_eq!(
        ran["dependenciesExecuted"],
        json!(["login", "add_to_cart"]),
        "{ran:#}"
    );
    let summary = fresh
        .ok("browser_get_text", json!({"selector": "#order-summary"}))
        .await;
    assert!(
        summary.contains(
            "Order for Grace Hopper: 1 × Blue mug (Medium); ships to Japan, Express; gift wrap yes"
        ),
        "{summary}"
    );
    assert!(!serde_json::to_string(&ran).unwrap().contains(CANARY));

    // Logged in now: the login is skipped, the cart filled again, the order placed again.
    // A client that asks for progress (the rmcp client always does) hears each action the
    // replay sends (its waits are steps but send nothing), numbered from 1.
    let before = fresh.progress_heard().len();
    let again = report(&fresh.ok("scenario_run", json!({"name": "checkout"})).await);
    assert_eq!(again["success"], true, "{again:#}");
    let steps = again["actionsExecuted"].as_u64().unwrap() as usize;
    let heard = eventually("a notice per action", Duration::from_secs(10), || {
        let heard: Vec<_> = fresh.progress_heard().split_off(before);
        let mut numbers: Vec<usize> = heard
            .iter()
            .filter_map(|(_, _, m)| {
                m.strip_prefix("scenario_run: action ")?
                    .strip_suffix(" sent")?
                    .parse()
                    .ok()
            })
            .collect();
        numbers.sort();
        let whole = !numbers.is_empty() && numbers.iter().enumerate().all(|(i, n)| *n == i + 1);
        async move { whole.then_some(heard) }
    })
    .await;
    let actions = heard.iter().filter(|h| h.2.contains(": action ")).count();
    assert!(
        actions <= steps,
        "{actions} notices for {steps} steps: {heard:?}"
    );
    let mut values: Vec<f64> = heard.iter().map(|h| h.1).collect();
    values.sort_by(f64::total_cmp);
    assert!(
        values.windows(2).all(|w| w[1] > w[0]),
        "no value twice: {heard:?}"
    );
    assert_eq!(
        again["dependenciesExecuted"],
        json!(["add_to_cart"]),
        "{again:#}"
    );
    assert_eq!(
        again["dependenciesSkipped"],
        json!(["login (isAuthenticated holds)"]),
        "{again:#}"
    );
    let summary = fresh
        .ok("browser_get_text", json!({"selector": "#order-summary"}))
        .await;
    assert!(summary.contains("Order for Ada Lovelace"), "{summary}");

    // Each scenario is a tool of its own.
    let added = report(&fresh.ok("scenario_add_to_cart", json!({})).await);
    assert_eq!(added["success"], true, "{added:#}");
    let status = fresh
        .ok("browser_get_text", json!({"selector": "#add-status"}))
        .await;
    assert!(status.contains("Added 1 × Blue mug (Medium)"), "{status}");

    // An optional dependency that fails is passed over with a hint; a captured output and
    // dependency parameters reach the steps that use them.
    let write = |name: &str, scenario: Value| {
        std::fs::write(
            data.path().join("scenarios").join(format!("{name}.json")),
            serde_json::to_vec(&scenario).unwrap(),
        )
        .unwrap();
    };
    write(
        "broken",
        json!({"name": "broken", "chain": [
            {"method": "click", "params": {"locators": [{"by": "css", "value": "#no-such-thing"}]}}
        ]}),
    );
    write(
        "visit",
        json!({"name": "visit", "parameters": [{"name": "page", "default": "index.html"}],
               "chain": [{"method": "navigate", "params": {"url": site.url("shop/{{page}}")}}]}),
    );
    write(
        "follow_up",
        json!({"name": "follow_up",
               "dependencies": [
                   {"scenario": "broken", "optional": true},
                   {"scenario": "visit", "parameters": {"page": "cart.html"}, "captureOutput": "seen"}
               ],
               "chain": [{"method": "navigate", "params": {"url": "{{seen.url}}?from={{seen.page}}"}}]}),
    );
    let followed = report(&fresh.ok("scenario_run", json!({"name": "follow_up"})).await);
    assert_eq!(followed["success"], true, "{followed:#}");
    assert_eq!(
        followed["dependenciesExecuted"],
        json!(["visit"]),
        "{followed:#}"
    );
    assert!(
        followed["hints"][0]
            .as_str()
            .unwrap()
            .starts_with("optional dependency broken failed and was passed over"),
        "{followed:#}"
    );
    assert!(
        followed["endedOn"]
            .as_str()
            .unwrap()
            .ends_with("shop/cart.html?from=cart.html)"),
        "{followed:#}"
    );

    // Every step kind the session log writes replays: back, forward and hover too.
    write(
        "back_and_forth",
        json!({"name": "back_and_forth", "chain": [
            {"method": "navigate", "params": {"url": site.url("page-a.html")}},
            {"method": "navigate", "params": {"url": site.url("input.html")}},
            {"method": "go_back", "params": {}},
            {"method": "go_forward", "params": {}},
            {"method": "hover", "params": {"locators": [{"by": "css", "value": "#hover-target"}]}}
        ]}),
    );
    let moved = report(
        &fresh
            .ok("scenario_run", json!({"name": "back_and_forth"}))
            .await,
    );
    assert_eq!(moved["success"], true, "{moved:#}");
    assert_eq!(moved["actionsExecuted"], 5, "{moved:#}");
    assert!(
        moved["endedOn"].as_str().unwrap().ends_with("input.html)"),
        "{moved:#}"
    );
    let hovered = fresh
        .ok("browser_get_text", json!({"selector": "#hover-state"}))
        .await;
    assert!(
        hovered.contains("hovered") && !hovered.contains("not"),
        "{hovered}"
    );

    // A cycle is refused by name before anything runs.
    let login_path = data.path().join("scenarios").join("login.json");
    let mut cyclic: Value = serde_json::from_slice(&std::fs::read(&login_path).unwrap()).unwrap();
    cyclic["dependencies"] = json!([{"scenario": "checkout"}]);
    std::fs::write(&login_path, serde_json::to_vec(&cyclic).unwrap()).unwrap();
    let refused = fresh
        .call("scenario_run", json!({"name": "checkout"}))
        .await;
    assert_eq!(
        refused.code().as_deref(),
        Some("BAD_ARGS"),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("cycle: checkout → login → checkout"),
        "{}",
        refused.text
    );
    fresh.stop().await;
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The panel's Record button opens the widget; a recording saved while the person has
/// disconnected kapture is kept in the browser and saved once kapture is connected again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_saved_while_kapture_is_away_waits_in_the_browser() {
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let nav = k
        .ok(
            "browser_navigate",
            json!({"url": site.url("shop/login.html")}),
        )
        .await;
    let mut panel = Panel::open(&k, kapture_e2e::tab_of(&nav)).await;
    panel
        .until(
            "the connected status",
            "document.getElementById('status').textContent === 'connected'",
        )
        .await;
    panel.click("#record").await;
    panel
        .until(
            "the recorder opened",
            "document.getElementById('record-status').textContent.includes('Start there')",
        )
        .await;

    let (mut raw, page) = start_in_widget(&k, "grace@example.test").await;

    // The person disconnects kapture, then stops and saves.
    panel.click("#servers button").await;
    panel
        .until(
            "disconnected",
            "document.getElementById('status').textContent === 'not connected'",
        )
        .await;
    widget_click(&mut raw, &page, "button.stop").await;
    widget_click(&mut raw, &page, "button.save").await;
    let saved = k.data_dir().join("scenarios").join("login.json");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while widget_count(&mut raw, &page, ".msg").await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the widget said nothing"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    screenshot(&mut raw, &page, "recorder-widget-kept").await;
    assert!(
        !saved.exists(),
        "nothing reached kapture while disconnected"
    );

    // Connected again: the waiting recording is handed over and saved.
    panel.click("#connect").await;
    eventually(
        "the kept recording saved",
        Duration::from_secs(20),
        || async { saved.exists().then_some(()) },
    )
    .await;
    let scenario: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(scenario["chain"][1]["method"], "type", "{scenario:#}");
    k.stop().await;
}

/// Write `scenario` into kapture's data folder as a file of format version 1 would be.
fn plant(k: &Kapture, scenario: &Value) {
    let folder = k.data_dir().join("scenarios");
    std::fs::create_dir_all(&folder).unwrap();
    let name = scenario["name"].as_str().unwrap();
    std::fs::write(
        folder.join(format!("{name}.json")),
        serde_json::to_vec_pretty(scenario).unwrap(),
    )
    .unwrap();
}

/// A replay reports as an agent needs it: the scenario and the dependencies it ran, a hint
/// after each action where a dialog opened, the page changed or the page threw, nothing for
/// a quiet step, and screenshots of the steps asked for. The file is of format version 1
/// (no `version`): it runs, and reads back migrated.
async fn a_replay_reports_each_step_and_the_screenshots_asked_for_on(engine: Engine) {
    let site = Site::start().unwrap();
    // The policy file's screenshot folder keeps a copy of the run's screenshots too.
    let shots = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let policy = config.path().join("policy.toml");
    let folder = shots.path().display().to_string();
    std::fs::write(&policy, format!("screenshot_dir = {folder:?}\n")).unwrap();
    let k = Kapture::launch_on_with(engine, &["--policy", policy.to_str().unwrap()]).await;
    plant(
        &k,
        &json!({"name": "start_fresh", "chain": [
            {"method": "navigate", "params": {"url": site.url("page-a.html")}}
        ]}),
    );
    plant(
        &k,
        &json!({"name": "report_flow", "title": "Order with a dialog",
        "dependencies": [{"scenario": "start_fresh"}],
        "chain": [
            {"method": "navigate", "params": {"url": site.url("replay-report.html")}},
            {"method": "click", "params": {"locators": [{"by": "role", "value": ["button", "Place order"]}]}},
            {"method": "click", "params": {"locators": [{"by": "role", "value": ["button", "Confirm"]}]}},
            {"method": "click", "params": {"locators": [{"by": "css", "value": "#break"}]}},
            {"method": "click", "params": {"locators": [{"by": "text", "value": "Continue"}]}},
            {"method": "wait_for_load", "params": {"url": site.url("page-b.html")}}
        ]}),
    );
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let out = k
        .call(
            "scenario_run",
            json!({"name": "report_flow", "screenshotSteps": [5, 2]}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    let ran = report(&out.text);
    assert_eq!(ran["scenario"], "report_flow", "{ran:#}");
    assert_eq!(ran["success"], true, "{ran:#}");
    assert_eq!(
        ran["dependenciesExecuted"],
        json!(["start_fresh"]),
        "{ran:#}"
    );
    // The dependency's navigation and the scenario's six steps.
    assert_eq!(ran["actionsExecuted"], 7, "{ran:#}");
    assert!(ran["durationMs"].as_u64().is_some(), "{ran:#}");
    let hints: Vec<&str> = ran["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    let has = |what: &str| hints.iter().any(|h| h.contains(what));
    assert!(
        has("after report_flow step 2 (click) a dialog opened: dialog \"Confirm the order?\""),
        "{hints:#?}"
    );
    assert!(
        hints.iter().any(|h| h.contains("logged an error")
            && h.contains("payment widget crashed")
            && (h.contains("step 4") || h.contains("step 5"))),
        "{hints:#?}"
    );
    assert!(
        has("after report_flow step 5 (click) the page changed to") && has("page-b.html"),
        "{hints:#?}"
    );
    assert!(!has("step 3"), "a quiet step says nothing: {hints:#?}");
    assert!(
        !has("step 1 "),
        "a navigation asked for is no news: {hints:#?}"
    );
    assert_eq!(
        ran["screenshots"],
        json!([
            "after report_flow step 2 (click)",
            "after report_flow step 5 (click)"
        ]),
        "{ran:#}"
    );
    assert_eq!(out.images.len(), 2, "{ran:#}");
    for (mime, bytes) in &out.images {
        assert_eq!(mime, "image/jpeg");
        assert!(bytes.starts_with(&[0xff, 0xd8]), "a JPEG");
    }
    // Each image also saved in the screenshot folder, in the same order, byte for byte.
    let saved = saved_in(&ran, shots.path());
    assert_eq!(saved.len(), 2, "{ran:#}");
    for (file, (_, bytes)) in saved.iter().zip(&out.images) {
        assert_eq!(&std::fs::read(file).unwrap(), bytes, "{}", file.display());
    }
    assert!(
        k.ok("browser_get_text", json!({})).await.contains("Page B"),
        "the run ended on page B"
    );

    // Its own tool takes screenshotSteps too; a step it does not have is refused up front.
    let tool = k
        .call("scenario_report_flow", json!({"screenshotSteps": [1]}))
        .await;
    assert!(!tool.is_error, "{}", tool.text);
    assert_eq!(tool.images.len(), 1, "{}", tool.text);
    let refused = k
        .call(
            "scenario_run",
            json!({"name": "report_flow", "screenshotSteps": [9]}),
        )
        .await;
    assert_eq!(
        refused.code().as_deref(),
        Some("BAD_ARGS"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("no step 9"), "{}", refused.text);

    // A run that fails answers the page where it stopped, saved in the folder as well.
    plant(
        &k,
        &json!({"name": "broken_flow", "chain": [
            {"method": "navigate", "params": {"url": site.url("page-a.html")}},
            {"method": "click", "params": {"locators": [{"by": "css", "value": "#no-such-button"}]}}
        ]}),
    );
    let broken = k.call("scenario_run", json!({"name": "broken_flow"})).await;
    let ran = report(&broken.text);
    assert_eq!(ran["success"], false, "{ran:#}");
    assert_eq!(broken.images.len(), 1, "{ran:#}");
    let saved = saved_in(&ran, shots.path());
    assert_eq!(saved.len(), 1, "{ran:#}");
    assert_eq!(std::fs::read(&saved[0]).unwrap(), broken.images[0].1);
    assert_eq!(
        std::fs::read_dir(shots.path()).unwrap().count(),
        4,
        "the two steps', the scenario tool's one and the failure's"
    );

    // Read back, the version 1 file is version 2: where it starts, each parameter's facts.
    let got = report(&k.ok("scenario_get", json!({"name": "report_flow"})).await);
    assert_eq!(got["version"], 2, "{got:#}");
    assert_eq!(got["startUrl"], site.url("replay-report.html"), "{got:#}");
    k.stop().await;
}

/// The files a run's report says it saved, each checked to be in `folder`.
fn saved_in(ran: &Value, folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let saved: Vec<std::path::PathBuf> = ran["saved"]
        .as_array()
        .unwrap_or_else(|| panic!("no saved screenshots: {ran:#}"))
        .iter()
        .map(|p| std::path::PathBuf::from(p.as_str().unwrap()))
        .collect();
    for file in &saved {
        assert_eq!(file.parent(), Some(folder), "{}", file.display());
    }
    saved
}

on_both_engines! {
    a_replay_reports_each_step_and_the_screenshots_asked_for_on =>
        a_replay_reports_each_step_and_the_screenshots_asked_for,
        a_replay_reports_each_step_and_the_screenshots_asked_for_natively;
}
