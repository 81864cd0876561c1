//! Attacks on secrets in journals and on the recorder as a keylogger, tried for real: values
//! typed into confidential fields under neutral names (by ref, by `#f1`, one-time-code and
//! card fields, fill_form) must show in no journal, history, resource or answer; a replay's
//! secret must not come back through a later evaluate; recording must be asked for, refused
//! read-only and in safe mode, visible while it runs, never overwrite a scenario, never show typed values to
//! the model, and never wait on disk with a password in it.

use std::time::Duration;

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::panel::Panel;
use kapture_e2e::widget::{until_widget_records, widget_click, widget_count};
use kapture_e2e::{eventually, handshakes_in, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

fn assert_absent(what: &str, text: &str, canaries: &[&str]) {
    for c in canaries {
        assert!(!text.contains(c), "{what} holds the canary {c}:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_typed_into_confidential_fields_show_nowhere_whatever_the_field_is_called() {
    const BY_REF: &str = "Mask-ByRef-4417";
    const BY_SELECTOR: &str = "Mask-BySel-5528";
    const OTP: &str = "Mask-Otp-6639";
    const CARD: &str = "Mask-Card-7740";
    const FORM_PW: &str = "Mask-FormPw-8851";
    const FORM_OTP: &str = "Mask-FormOtp-9962";
    const PLAIN: &str = "Plain-Value-3306";
    let all = [BY_REF, BY_SELECTOR, OTP, CARD, FORM_PW, FORM_OTP];
    let site = Site::start().unwrap();
    let k = Kapture::start(Start::debuggable()).await;
    let mut answers = Vec::new();
    let nav = k
        .ok(
            "browser_navigate",
            json!({"url": site.url("secret-fields.html")}),
        )
        .await;
    let tab = kapture_e2e::tab_of(&nav);
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let f1 = kapture_e2e::ref_on(&snapshot, "Field one");
    let f2 = kapture_e2e::ref_on(&snapshot, "Field two");
    // Neutral names only: a ref, `#f1`, `#f2`, `#f3`; the elements say what they hold.
    for (args, canary) in [
        (json!({"ref": f1, "text": BY_REF}), BY_REF),
        (json!({"selector": "#f1", "text": BY_SELECTOR}), BY_SELECTOR),
        (json!({"selector": "#f2", "text": OTP}), OTP),
        (json!({"selector": "#f3", "text": CARD}), CARD),
    ] {
        answers.push(k.ok("browser_type", args).await);
        let value = k
            .ok(
                "browser_evaluate",
                json!({"function": "[...document.querySelectorAll('input')].map((i) => i.value).join(' ')"}),
            )
            .await;
        assert!(
            value.contains("[redacted:"),
            "the value is in the page, masked in the answer: {value} ({canary})"
        );
        answers.push(value);
    }
    answers.push(
        k.ok(
            "browser_fill_form",
            json!({"fields": [
                {"selector": "#f1", "value": FORM_PW},
                {"ref": f2, "value": FORM_OTP},
                {"selector": "#f4", "value": PLAIN},
            ]}),
        )
        .await,
    );
    // The page shows what was typed; reads of it do not.
    answers.push(k.ok("browser_snapshot", json!({})).await);
    answers.push(k.ok("browser_get_text", json!({})).await);
    answers.push(
        k.ok(
            "browser_evaluate",
            json!({"function": "[...document.querySelectorAll('input')].map((i) => i.value).join(' ') + document.body.innerText"}),
        )
        .await,
    );
    for a in &answers {
        assert_absent("an answer", a, &all);
    }
    assert!(
        k.eval("document.getElementById('f1').value.length").await == json!(FORM_PW.len()),
        "the page did get the value"
    );

    // The journals.
    let journal: Vec<String> = k.audit_lines().iter().map(Value::to_string).collect();
    let journal = journal.join("\n");
    assert_absent("audit.jsonl", &journal, &all);
    assert!(
        journal.contains(PLAIN),
        "an ordinary field's value stays readable: {journal}"
    );
    let audit = k.ok("browser_audit", json!({"max": 100})).await;
    assert_absent("browser_audit", &audit, &all);
    let steps = k.resource("kapture://session/current/steps").await.unwrap();
    assert_absent("the session steps", &steps, &all);
    for format in ["playwright-ts", "puppeteer"] {
        let code = k
            .resource(&format!("kapture://session/current/code?format={format}"))
            .await
            .unwrap();
        assert_absent("the session code", &code, &all);
        assert!(
            code.contains("KAPTURE_SECRET_SECRET_1"),
            "masked values are read from secret variables: {code}"
        );
    }

    // The panel history, as the person's panel shows it and as the browser stores it.
    let mut panel = Panel::open(&k, tab).await;
    let stored = panel
        .until(
            "the history stored with the form filling",
            "chrome.storage.local.get(null).then((v) => { const t = JSON.stringify(v); return t.includes('fill_form') && t; })",
        )
        .await;
    assert_absent("chrome.storage.local", stored.as_str().unwrap(), &all);
    let shown = panel
        .until(
            "the history rows",
            "(() => { const t = document.getElementById('history-rows').textContent; return t.includes('fill_form') && t; })()",
        )
        .await;
    assert_absent("the panel history", shown.as_str().unwrap(), &all);
    assert!(
        !k.stderr().contains(BY_REF),
        "a typed secret reached the log"
    );
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replays_secret_stays_masked_for_the_rest_of_the_session() {
    const SECRET: &str = "Replay-Secret-2291";
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    // A scenario that types its secret into an ordinary field (#f4): only the replay knows
    // it is a secret (a password field's value is masked by the extension anyway).
    let folder = k.data_dir().join("scenarios");
    std::fs::create_dir_all(&folder).unwrap();
    let scenario = json!({
        "name": "fill_secret",
        "parameters": [{"name": "pw", "secret": true}],
        "chain": [
            {"method": "navigate", "params": {"url": site.url("secret-fields.html")}},
            {"method": "type", "params": {"locators": [{"by": "css", "value": "#f4"}], "text": "{{pw}}"}}
        ]
    });
    std::fs::write(
        folder.join("fill_secret.json"),
        serde_json::to_vec(&scenario).unwrap(),
    )
    .unwrap();
    let ran = k
        .ok(
            "scenario_run",
            json!({"name": "fill_secret", "overrideSecrets": {"pw": SECRET}}),
        )
        .await;
    assert!(ran.contains("\"success\": true"), "{ran}");
    let mut answers = vec![ran];
    for function in [
        "document.querySelector('#f4').value",
        "'in the page: ' + document.querySelector('#f4').value",
        "[...document.querySelectorAll('input')].map((i) => i.value).join(' ')",
    ] {
        let out = k
            .ok("browser_evaluate", json!({ "function": function }))
            .await;
        assert!(out.contains("[redacted:"), "{function}: {out}");
        answers.push(out);
    }
    answers.push(k.ok("browser_snapshot", json!({})).await);
    for a in &answers {
        assert_absent("an answer after the replay", a, &[SECRET]);
    }
    assert_eq!(
        k.eval("document.querySelector('#f4').value.length").await,
        json!(SECRET.len()),
        "the replay typed it"
    );
    let journal: Vec<String> = k.audit_lines().iter().map(Value::to_string).collect();
    assert_absent("audit.jsonl", &journal.join("\n"), &[SECRET]);
    let steps = k.resource("kapture://session/current/steps").await.unwrap();
    assert_absent("the session steps", &steps, &[SECRET]);
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recording_is_asked_refused_read_only_visible_and_never_overwrites() {
    const PASSWORD: &str = "Keylog-Pw-5150";
    const TYPED: &str = "Keylog-Typed-6261";
    const SECOND: &str = "Keylog-Second-7372";
    let site = Site::start().unwrap();

    // --read-only: recording writes (a scenario, sealed secrets): refused; status is a read.
    let ro = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "launch".into(),
            "--headless".into(),
            "--read-only".into(),
        ],
        ..Start::default()
    })
    .await;
    ro.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    for action in ["start", "enable"] {
        let out = ro
            .call("browser_recorder", json!({ "action": action }))
            .await;
        assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
        assert!(out.text.contains("record"), "{}", out.text);
    }
    let status = ro.ok("browser_recorder", json!({"action": "status"})).await;
    assert!(status.contains("Not recording"), "{status}");
    ro.stop().await;

    // A person's own browser (connect mode): recording is asked; nobody answers, no recording.
    let shared = tempfile::tempdir().unwrap();
    let launcher = Kapture::start(Start {
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::debuggable()
    })
    .await;
    launcher
        .ok(
            "browser_navigate",
            json!({"url": site.url("secret-fields.html")}),
        )
        .await;
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
        .call("browser_recorder", json!({"action": "start"}))
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("APPROVAL_DENIED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("record"), "{}", out.text);
    let status = own
        .ok("browser_recorder", json!({"action": "status"}))
        .await;
    assert!(status.contains("Not recording"), "{status}");
    own.stop().await;

    // The launched throwaway browser: allowed, and shown to the person while it runs.
    let k = launcher;
    let mut raw = k.raw_cdp().await;
    let page = raw.attach_page("secret-fields.html").await.unwrap();
    let started = k.ok("browser_recorder", json!({"action": "start"})).await;
    assert!(started.contains("Recording"), "{started}");
    until_widget_records(&mut raw, &page, "after start").await;
    // On every page of the recording.
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    until_widget_records(&mut raw, &page, "on the next page").await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("secret-fields.html")}),
    )
    .await;
    until_widget_records(&mut raw, &page, "back on the form").await;
    k.ok("browser_type", json!({"selector": "#f1", "text": PASSWORD}))
        .await;
    k.ok("browser_type", json!({"selector": "#f4", "text": TYPED}))
        .await;
    let saved = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "acct"}),
        )
        .await;
    assert!(saved.contains("Saved scenario acct"), "{saved}");
    assert_absent("the stop answer", &saved, &[PASSWORD, TYPED]);
    assert_eq!(
        widget_count(&mut raw, &page, "*").await,
        0,
        "the widget leaves with the recording"
    );

    // What the person typed is not shown to the model; replay still has it.
    let got = k.ok("scenario_get", json!({"name": "acct"})).await;
    assert_absent("scenario_get", &got, &[PASSWORD, TYPED]);
    assert!(got.contains("hasRecordedDefault"), "{got}");
    let tools = k.tools_json().await.to_string();
    assert!(tools.contains("scenario_acct"), "the scenario is a tool");
    assert_absent("tools/list", &tools, &[PASSWORD, TYPED]);
    let listed = k.ok("scenario_list", json!({})).await;
    assert_absent("scenario_list", &listed, &[PASSWORD, TYPED]);

    // A second stop under the same name replaces nothing and keeps the recording.
    let file = k.data_dir().join("scenarios").join("acct.json");
    let sealed = k.data_dir().join("secrets").join("acct.json");
    let (before, before_sealed) = (
        std::fs::read(&file).unwrap(),
        std::fs::read(&sealed).unwrap(),
    );
    k.ok("browser_recorder", json!({"action": "start"})).await;
    until_widget_records(&mut raw, &page, "the second time").await;
    k.ok("browser_type", json!({"selector": "#f1", "text": SECOND}))
        .await;
    let again = k
        .call(
            "browser_recorder",
            json!({"action": "stop", "name": "acct"}),
        )
        .await;
    assert_eq!(again.code().as_deref(), Some("BAD_ARGS"), "{}", again.text);
    assert!(
        again.text.contains("scenario_delete") && again.text.contains("another name"),
        "{}",
        again.text
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the scenario is unchanged"
    );
    assert_eq!(
        std::fs::read(&sealed).unwrap(),
        before_sealed,
        "its sealed secrets are unchanged"
    );
    let status = k.ok("browser_recorder", json!({"action": "status"})).await;
    assert!(
        status.contains("Recording"),
        "the recording goes on: {status}"
    );
    let renamed = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "acct_2"}),
        )
        .await;
    assert!(renamed.contains("Saved scenario acct_2"), "{renamed}");
    assert_absent("the second stop answer", &renamed, &[SECOND]);
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_waiting_in_the_browser_keeps_no_password_on_disk() {
    const PASSWORD: &str = "Waiting-Pw-8483";
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

    // The panel's safe mode refuses recording like any other write.
    panel.click("#safe-mode").await;
    panel
        .until(
            "safe mode on",
            "document.getElementById('safe-mode').checked",
        )
        .await;
    eventually(
        "safe mode applied (a hover refused)",
        Duration::from_secs(10),
        || async {
            let out = k.call("browser_hover", json!({"selector": "#email"})).await;
            (out.code().as_deref() == Some("POLICY_DENIED")).then_some(())
        },
    )
    .await;
    let refused = k.call("browser_recorder", json!({"action": "start"})).await;
    assert_eq!(
        refused.code().as_deref(),
        Some("POLICY_DENIED"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("safe mode"), "{}", refused.text);
    panel.click("#safe-mode").await;
    panel
        .until(
            "safe mode off",
            "!document.getElementById('safe-mode').checked",
        )
        .await;
    eventually(
        "safe mode off (a hover allowed)",
        Duration::from_secs(10),
        || async {
            let out = k.call("browser_hover", json!({"selector": "#email"})).await;
            (!out.is_error).then_some(())
        },
    )
    .await;

    panel.click("#record").await;
    panel
        .until(
            "the recorder opened",
            "document.getElementById('record-status').textContent.includes('Start there')",
        )
        .await;
    let mut raw = k.raw_cdp().await;
    let page = raw.attach_page("shop/login.html").await.unwrap();
    widget_click(&mut raw, &page, "button.start").await;
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
    k.ok(
        "browser_type",
        json!({"selector": "#email", "text": "grace@example.test"}),
    )
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#password", "text": PASSWORD}),
    )
    .await;

    // The person disconnects kapture, then stops and saves: the recording waits.
    panel.click("#servers button").await;
    panel
        .until(
            "disconnected",
            "document.getElementById('status').textContent === 'not connected'",
        )
        .await;
    widget_click(&mut raw, &page, "button.stop").await;
    widget_click(&mut raw, &page, "button.save").await;
    let on_disk = panel
        .until(
            "the recording kept",
            "chrome.storage.local.get(null).then((v) => { const t = JSON.stringify(v); return t.includes('pendingRecordings') && t; })",
        )
        .await;
    let on_disk = on_disk.as_str().unwrap().to_string();
    assert!(on_disk.contains("pendingRecordings"), "{on_disk}");
    assert_absent("chrome.storage.local", &on_disk, &[PASSWORD]);
    // Kept in memory only, for when kapture comes back in this browser run.
    let in_memory = panel
        .eval("chrome.storage.session.get(null).then((v) => JSON.stringify(v))")
        .await;
    assert!(
        in_memory.as_str().unwrap().contains(PASSWORD),
        "the secret waits in memory: {in_memory}"
    );

    // Connected again: saved with its secrets sealed, and nothing left waiting.
    panel.click("#connect").await;
    let saved = k.data_dir().join("scenarios").join("login.json");
    eventually(
        "the kept recording saved",
        Duration::from_secs(20),
        || async { saved.exists().then_some(()) },
    )
    .await;
    let scenario: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert!(
        kapture_e2e::secret_names(&scenario).contains(&"password".to_string()),
        "{scenario:#}"
    );
    panel
        .until(
            "nothing waiting any more",
            "Promise.all([chrome.storage.local.get(null), chrome.storage.session.get(null)]).then(([l, s]) => { const t = JSON.stringify([l, s]); return !t.includes('Waiting-Pw') && t; })",
        )
        .await;

    // The person records again and saves under the same name: refused, nothing replaced,
    // and the recording waits in the widget for another name.
    let before = std::fs::read(&saved).unwrap();
    widget_click(&mut raw, &page, "button.start").await;
    eventually("recording again", Duration::from_secs(10), || async {
        k.ok("browser_recorder", json!({"action": "status"}))
            .await
            .contains("Recording")
            .then_some(())
    })
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#email", "text": "linus@example.test"}),
    )
    .await;
    widget_click(&mut raw, &page, "button.stop").await;
    name_in_widget(&mut raw, &page, "login").await;
    widget_click(&mut raw, &page, "button.save").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while widget_count(&mut raw, &page, ".msg.err").await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the widget never said the name is taken"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        widget_count(&mut raw, &page, "button.save").await,
        1,
        "the recording waits for another name"
    );
    assert_eq!(std::fs::read(&saved).unwrap(), before, "nothing replaced");
    name_in_widget(&mut raw, &page, "login_again").await;
    widget_click(&mut raw, &page, "button.save").await;
    let again = k.data_dir().join("scenarios").join("login_again.json");
    eventually(
        "saved under the other name",
        Duration::from_secs(20),
        || async { again.exists().then_some(()) },
    )
    .await;
    assert!(String::from_utf8_lossy(&std::fs::read(&again).unwrap()).contains("\"type\""));
    k.stop().await;
}

/// Type `name` into the widget's name field like a person (select all, type).
async fn name_in_widget(raw: &mut RawCdp, session: &str, name: &str) {
    widget_click(raw, session, "#n").await;
    for kind in ["rawKeyDown", "keyUp"] {
        raw.send(
            Some(session),
            "Input.dispatchKeyEvent",
            json!({"type": kind, "key": "a", "code": "KeyA", "modifiers": 2, "windowsVirtualKeyCode": 65, "commands": ["selectAll"]}),
        )
        .await
        .unwrap();
    }
    raw.send(Some(session), "Input.insertText", json!({"text": name}))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_secret_is_typed_only_on_the_origin_it_was_recorded_on() {
    const SECRET: &str = "Moved-Secret-8818";
    let (site, other) = (Site::start().unwrap(), Site::start().unwrap());
    let k = Kapture::launch().await;
    let folder = k.data_dir().join("scenarios");
    std::fs::create_dir_all(&folder).unwrap();
    // The recording typed its secret on `site`; at replay an open redirect there sends the
    // tab to `other`, whose page has a field of the same id.
    let moved = format!(
        "{}redirect?to={}",
        site.url(""),
        other.url("secret-fields.html")
    );
    let field = json!([{"by": "css", "value": "#f4"}]);
    let scenarios = [
        json!({
            "name": "moved_secret",
            "parameters": [{"name": "pw", "secret": true}],
            "chain": [
                {"method": "navigate", "params": {"url": moved}},
                {"method": "type", "params": {"locators": field, "text": "{{pw}}"}}
            ]
        }),
        // No page before the secret: nobody can say where it belongs.
        json!({
            "name": "nowhere_secret",
            "parameters": [{"name": "pw", "secret": true}],
            "chain": [
                {"method": "type", "params": {"locators": field, "text": "{{pw}}"}}
            ]
        }),
    ];
    for s in &scenarios {
        std::fs::write(
            folder.join(format!("{}.json", s["name"].as_str().unwrap())),
            serde_json::to_vec(s).unwrap(),
        )
        .unwrap();
    }
    let ran = k
        .ok(
            "scenario_run",
            json!({"name": "moved_secret", "overrideSecrets": {"pw": SECRET}}),
        )
        .await;
    assert!(ran.contains("\"success\": false"), "{ran}");
    assert!(ran.contains("POLICY_DENIED"), "{ran}");
    assert_eq!(
        k.eval("location.origin").await,
        json!(other.url("").trim_end_matches('/')),
        "the redirect took the tab to the other origin"
    );
    assert_eq!(
        k.eval("document.querySelector('#f4').value").await,
        json!(""),
        "nothing was typed on the other origin"
    );

    // On that other page, a secret with no recorded page is typed nowhere either.
    let ran = k
        .ok(
            "scenario_run",
            json!({"name": "nowhere_secret", "overrideSecrets": {"pw": SECRET}}),
        )
        .await;
    assert!(ran.contains("\"success\": false"), "{ran}");
    assert!(ran.contains("POLICY_DENIED"), "{ran}");
    assert_eq!(
        k.eval("document.querySelector('#f4').value").await,
        json!(""),
        "nothing was typed"
    );
    assert_absent("the answers", &ran, &[SECRET]);
    k.stop().await;
}

/// Issue 15: the answer masker masks values, never Kapture's own refs and labels. Typing
/// into fields labelled `Password:`, `Token`, `API key:` and `secret=` answers the field's
/// ref; a secret typed into the password field shows nowhere; a real key typed into the
/// plain `API key:` field is masked where the page model shows it, next to its ref.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_like_password_keep_their_refs_in_answers_while_values_are_masked() {
    const TYPED_PW: &str = "Hunter2-Sw0rd-5150";
    const KEY: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    k.eval(
        "() => { document.body.insertAdjacentHTML('beforeend', \
         '<label>Password: <input id=\"pw9\" type=\"password\"></label>' + \
         '<label>Token <input id=\"tok9\"></label>' + \
         '<label>API key: <input id=\"key9\"></label>' + \
         '<label>secret= <input id=\"sec9\"></label>'); }",
    )
    .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    for (label, element, text, diff) in [
        ("\"Password:\"", "textbox Password:", TYPED_PW, false),
        ("\"Token\"", "Token", "abc", false),
        ("\"API key:\"", "textbox API key:", KEY, true),
        ("\"secret=\"", "secret=", "plain words", false),
    ] {
        let r = kapture_e2e::ref_on(&snap, label);
        let mut args = json!({"ref": r, "element": element, "text": text});
        if diff {
            args["includeSnapshot"] = json!("diff");
        }
        let answer = k.ok("browser_type", args).await;
        assert!(
            answer.contains(&format!("({r})")),
            "{label}: the answer names the ref {r}:\n{answer}"
        );
        assert!(!answer.contains("[redacted:password]"), "{label}: {answer}");
        assert_absent(label, &answer, &[TYPED_PW, KEY]);
        if diff {
            let line = answer
                .lines()
                .find(|l| l.starts_with('+') && l.contains(&format!("[ref={r}]")))
                .unwrap_or_else(|| panic!("the diff shows the field with its ref:\n{answer}"));
            assert!(line.contains("[redacted:stripe-key]"), "{line}");
        }
    }
    // The page model keeps every label and ref as it was.
    let again = k.ok("browser_snapshot", json!({})).await;
    for label in ["\"Password:\"", "\"Token\"", "\"API key:\"", "\"secret=\""] {
        let line = again
            .lines()
            .find(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{label} in:\n{again}"));
        assert!(line.contains("[ref="), "{line}");
        assert!(!line.contains("[redacted:password]"), "{line}");
    }
    assert_absent("the snapshot", &again, &[TYPED_PW, KEY]);
    k.stop().await;
}

/// The one exit (issue 29): a password with a space, a quote and a non-ASCII letter, typed
/// into a password field, then carried in URLs (the page's own request encodes it as
/// `encodeURIComponent` does, a GET form's URL with `+`) and shown by a page where no
/// password field is (so only kapture's masks know it), appears in no answer, resource
/// (steps, code in every export language, tabs), `browser_audit` or journal line: the
/// canary word in it must appear nowhere, however each exit escapes it.
async fn a_secret_leaves_through_no_url_or_export_form_on(engine: kapture_e2e::Engine) {
    const CANARY: &str = "Zr4Canary";
    const SECRET: &str = "Pw Zr4Canary\"9!ü";
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let mut seen: Vec<(String, String)> = Vec::new();
    k.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    k.type_login("ada", SECRET).await;
    // The page sends it (`data.json?pw=` + encodeURIComponent) once the field changes.
    k.ok("browser_press_key", json!({"key": "Tab"})).await;
    let requests = eventually("the page's request", Duration::from_secs(10), || async {
        let r = k.ok("browser_network_requests", json!({})).await;
        r.contains("data.json").then_some(r)
    })
    .await;
    seen.push(("network requests".into(), requests));
    let encoded: String = url::form_urlencoded::byte_serialize(SECRET.as_bytes()).collect();
    let nav = k
        .ok(
            "browser_navigate",
            json!({"url": site.url(&format!("page-a.html?pw={encoded}"))}),
        )
        .await;
    assert!(nav.contains("page-a.html?pw=[redacted:"), "{nav}");
    seen.push(("navigate".into(), nav));
    // A page without a password field shows it; the agent acts on it by ref.
    let make = format!(
        "() => {{ const b = document.createElement('button'); b.textContent = {}; document.body.append(b); return 1; }}",
        serde_json::to_string(SECRET).unwrap()
    );
    seen.push((
        "evaluate".into(),
        k.ok("browser_evaluate", json!({ "function": make })).await,
    ));
    let snap = k.ok("browser_snapshot", json!({})).await;
    let button = kapture_e2e::ref_on(&snap, "button \"[redacted:");
    seen.push(("snapshot".into(), snap));
    k.ok("browser_click", json!({ "ref": button })).await;
    for (tool, args) in [
        ("browser_tabs", json!({"action": "list"})),
        ("browser_audit", json!({"max": 50})),
    ] {
        seen.push((tool.into(), k.ok(tool, args).await));
    }
    for uri in [
        "kapture://session/current/steps".to_string(),
        "kapture://session/current/tabs".into(),
    ] {
        seen.push((uri.clone(), k.resource(&uri).await.expect("the resource")));
    }
    for format in [
        "playwright-ts",
        "playwright-python",
        "puppeteer",
        "webdriverio",
    ] {
        let uri = format!("kapture://session/current/code?format={format}");
        let code = k.resource(&uri).await.expect("the code");
        assert!(
            code.contains("[redacted:"),
            "the button's name is masked: {code}"
        );
        seen.push((uri, code));
    }
    let journal: Vec<String> = k.audit_lines().iter().map(Value::to_string).collect();
    assert!(journal.len() >= 8, "{journal:?}");
    seen.push(("the journal file".into(), journal.join("\n")));
    for (what, text) in &seen {
        assert_absent(what, text, &[CANARY]);
    }
    k.stop().await;
}

kapture_e2e::on_both_engines! {
    a_secret_leaves_through_no_url_or_export_form_on =>
        a_secret_leaves_through_no_url_or_export_form,
        a_secret_leaves_through_no_url_or_export_form_natively;
}
