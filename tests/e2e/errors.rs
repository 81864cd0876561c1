//! Bad input and faults end in a coded tool error with a hint, promptly, and the server
//! keeps serving afterwards.

use std::time::{Duration, Instant};

use kapture_e2e::{Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_stable_codes_and_hints() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    let cases = [
        (
            "browser_click",
            json!({"selector": "#does-not-exist"}),
            "SELECTOR_NOT_FOUND",
        ),
        (
            "browser_click",
            json!({"selector": "##bad["}),
            "INVALID_SELECTOR",
        ),
        (
            "browser_click",
            json!({"selector": "#under"}),
            "NOT_INTERACTABLE",
        ),
        (
            "browser_click",
            json!({"selector": "#hidden"}),
            "NOT_INTERACTABLE",
        ),
        (
            "browser_type",
            json!({"selector": "#dbl", "text": "x"}),
            "NOT_INTERACTABLE",
        ),
        (
            "browser_select_option",
            json!({"selector": "#keys", "values": ["a"]}),
            "NOT_INTERACTABLE",
        ),
        ("browser_press_key", json!({"key": "Hyper+q"}), "BAD_ARGS"),
        (
            "browser_navigate",
            json!({"url": "file:///etc/passwd"}),
            "BAD_ARGS",
        ),
        (
            "browser_navigate",
            json!({"url": "javascript:alert(1)"}),
            "BAD_ARGS",
        ),
        ("browser_navigate", json!({"url": "not a url"}), "BAD_ARGS"),
        (
            "browser_evaluate",
            json!({"function": "() => { throw new Error('page bug') }"}),
            "EVAL_FAILED",
        ),
        (
            "browser_evaluate",
            json!({"function": "1", "tabId": 987654}),
            "TAB_NOT_FOUND",
        ),
        (
            "browser_tabs",
            json!({"action": "select", "index": 42}),
            "TAB_NOT_FOUND",
        ),
        (
            "browser_evaluate",
            json!({"function": "1", "timeoutMs": 0}),
            "BAD_ARGS",
        ),
    ];
    for (tool, args, code) in cases {
        let out = k.call(tool, args.clone()).await;
        assert!(out.is_error, "{tool} {args} should fail: {}", out.text);
        assert_eq!(
            out.code().as_deref(),
            Some(code),
            "{tool} {args}: {}",
            out.text
        );
        assert!(
            out.text.starts_with(&format!("Error {code}: ")) && out.text.contains("\nHint: "),
            "{}",
            out.text
        );
    }
    let thrown = k
        .call(
            "browser_evaluate",
            json!({"function": "() => { throw new Error('page bug') }"}),
        )
        .await;
    assert!(
        thrown.text.contains("page bug"),
        "the page's message is kept: {}",
        thrown.text
    );

    // A refused port is a navigation failure with the browser's reason.
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = k
        .call(
            "browser_navigate",
            json!({"url": format!("http://127.0.0.1:{closed_port}/")}),
        )
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("NAVIGATION_FAILED"),
        "{}",
        out.text
    );
    assert!(out.text.contains("ERR_CONNECTION_REFUSED"), "{}", out.text);

    // Schema violations are refused (as protocol or tool errors), never a crash.
    for (tool, args) in [
        ("browser_click", json!({})),
        ("browser_tabs", json!({"action": "explode"})),
        ("no_such_tool", json!({})),
    ] {
        let refused = match k.call_raw(tool, args.clone()).await {
            Err(_) => true,
            Ok(r) => r.is_error == Some(true),
        };
        assert!(refused, "{tool} {args} was accepted");
    }

    // After all that, the server and the tab still work.
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    assert_eq!(k.eval("document.title").await, "Input");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_page_times_out_and_the_tab_keeps_working() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let started = Instant::now();
    let out = k
        .call(
            "browser_evaluate",
            json!({"function": "() => new Promise(() => {})", "timeoutMs": 1000}),
        )
        .await;
    assert_eq!(out.code().as_deref(), Some("TIMEOUT"), "{}", out.text);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered near its timeout: {:?}",
        started.elapsed()
    );
    assert_eq!(
        k.eval("document.title").await,
        "Page A",
        "the tab's queue is not stuck"
    );
    k.stop().await;
}

kapture_e2e::on_both_engines! {
    closing_a_tab_ends_its_running_command_with_tab_closed_on =>
        closing_a_tab_ends_its_running_command_with_tab_closed,
        closing_a_tab_ends_its_running_command_with_tab_closed_natively;
    a_click_never_lands_on_what_slid_under_the_pointer_on =>
        a_click_never_lands_on_what_slid_under_the_pointer,
        a_click_never_lands_on_what_slid_under_the_pointer_natively;
}

async fn a_click_never_lands_on_what_slid_under_the_pointer_on(engine: kapture_e2e::Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("attacks/swap.html")}),
    )
    .await;
    let out = k.call("browser_click", json!({"selector": "#next"})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{engine:?}: {}",
        out.text
    );
    assert!(
        out.text.contains("moved from under the pointer") && out.text.contains("button#delete"),
        "{engine:?}: {}",
        out.text
    );
    assert_eq!(
        k.eval("document.title").await,
        "Swap",
        "{engine:?}: nothing was clicked"
    );
    k.stop().await;
}

async fn closing_a_tab_ends_its_running_command_with_tab_closed_on(engine: kapture_e2e::Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let tab = k.new_tab(&site.url("page-a.html")).await;
    let hung = "() => { document.title = 'hanging'; return new Promise(() => {}); }";
    let hang = k.call(
        "browser_evaluate",
        json!({"function": hung, "tabId": tab, "timeoutMs": 60000}),
    );
    let close = async {
        k.until_a_tab_is_titled("hanging").await;
        k.ok("browser_tabs", json!({"action": "close", "tabId": tab}))
            .await
    };
    let started = Instant::now();
    let (out, _) = tokio::join!(hang, close);
    assert_eq!(out.code().as_deref(), Some("TAB_CLOSED"), "{}", out.text);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "prompt: {:?}",
        started.elapsed()
    );
    assert_eq!(
        k.fails("browser_evaluate", json!({"function": "1", "tabId": tab}))
            .await,
        "TAB_NOT_FOUND"
    );
    // The remaining tab works.
    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(list.lines().count(), 1, "{list}");
    k.ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_browser_calls_fail_with_no_browser() {
    let k = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "connect".into(),
            "--browser-wait-ms".into(),
            "500".into(),
        ],
        ..Start::default()
    })
    .await;
    let started = Instant::now();
    assert_eq!(
        k.fails("browser_navigate", json!({"url": "http://127.0.0.1:1/"}))
            .await,
        "NO_BROWSER"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("extension: not connected"), "{status}");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_tab_does_not_hold_up_another_tab() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let other = k.new_tab(&site.url("page-b.html")).await;
    k.ok("browser_tabs", json!({"action": "select", "index": 0}))
        .await;
    // The current tab runs a 3 s script; the other tab answers meanwhile.
    let slow = k.call(
        "browser_evaluate",
        json!({"function": "() => new Promise(r => setTimeout(() => r('slow done'), 3000))"}),
    );
    let fast = async {
        let started = Instant::now();
        let title = k
            .ok(
                "browser_evaluate",
                json!({"function": "document.title", "tabId": other}),
            )
            .await;
        (title, started.elapsed())
    };
    let (slow, (title, fast_took)) = tokio::join!(slow, fast);
    assert_eq!(slow.text, "\"slow done\"");
    assert_eq!(title, "\"Page B\"");
    assert!(
        fast_took < Duration::from_millis(2500),
        "the other tab waited for the busy one: {fast_took:?}"
    );
    k.stop().await;
}

/// Issue 15: agents send `true` for a checkbox and numbers for text; both are taken as their
/// JSON text. Arguments that break a schema answer `BAD_ARGS` with one plain sentence that
/// names the field, never the decoder's debug text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn booleans_and_numbers_are_accepted_as_text_and_schema_errors_name_the_field() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    let terms = kapture_e2e::ref_on(&snap, "checkbox \"I agree\"");
    let name = kapture_e2e::ref_on(&snap, "textbox \"Name\"");
    k.ok(
        "browser_fill_form",
        json!({"fields": [{"ref": terms, "value": true}, {"ref": name, "value": 42}]}),
    )
    .await;
    let state = k
        .eval("() => [document.getElementById('terms').checked, document.getElementById('name').value]")
        .await;
    assert_eq!(state, json!([true, "42"]));
    k.ok(
        "browser_fill_form",
        json!({"fields": [{"ref": terms, "value": false}]}),
    )
    .await;
    assert_eq!(
        k.eval("() => document.getElementById('terms').checked")
            .await,
        json!(false)
    );
    let plan = kapture_e2e::ref_on(&snap, "combobox \"Plan\"");
    k.ok(
        "browser_select_option",
        json!({"ref": plan, "values": ["pro"]}),
    )
    .await;

    for (tool, args, says) in [
        (
            "browser_fill_form",
            json!({"fields": [{"ref": terms, "value": {"checked": true}}]}),
            "browser_fill_form: fields[0].value must be a string, a number or true/false; got an object",
        ),
        (
            "browser_fill_form",
            json!({"fields": [{"ref": terms}]}),
            "browser_fill_form: fields[0].value is missing",
        ),
        (
            "browser_tabs",
            json!({"action": "explode"}),
            "browser_tabs: action must be one of list, new, select, close",
        ),
        (
            "browser_snapshot",
            json!({"maxChars": "lots"}),
            "browser_snapshot: maxChars must be a whole number",
        ),
    ] {
        let out = k.call(tool, args.clone()).await;
        assert!(out.is_error, "{tool} {args}: {}", out.text);
        assert_eq!(out.code().as_deref(), Some("BAD_ARGS"), "{}", out.text);
        assert!(
            out.text.starts_with(&format!("Error BAD_ARGS: {says}")),
            "{tool} {args}: {}",
            out.text
        );
        assert!(
            !out.text.contains("deserialize") && !out.text.contains("|basic|"),
            "{}",
            out.text
        );
    }
}

/// Issue 15: a ref into an iframe whose page went away answers `REF_STALE` with its hint,
/// like any other stale ref, never `INTERNAL` with CDP's text (`{"code":-32602,"message":"No
/// frame for given id found"}`): the frame navigated (its `src` set, or by its own script),
/// was replaced by a new iframe element, or moved out of the tab's process (a site the
/// browser isolates: `oop.test`, resolved to 127.0.0.1), before the call or while a click
/// waited for its element. Each element tool is tried on the old ref.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ref_into_a_frame_that_went_away_is_ref_stale() {
    let site = Site::start().unwrap();
    let mut start = Start::default();
    start.args.push(kapture_e2e::OOP_TEST_RULES.into());
    let k = Kapture::start(start).await;
    let elsewhere = site.url("page-a.html").replace("127.0.0.1", "oop.test");
    let title = "() => document.getElementById('same').contentDocument?.title ?? 'elsewhere'";
    let replace = "const n = document.createElement('iframe'); n.id = 'same'; n.src = 'page-b.html'; f.replaceWith(n);";
    let changes = [
        ("f.src = 'page-a.html';".to_string(), "Page A"),
        (
            "f.contentWindow.location.href = 'page-b.html';".into(),
            "Page B",
        ),
        (replace.into(), "Page B"),
        (format!("f.src = '{elsewhere}';"), "elsewhere"),
    ];
    for (change, now) in &changes {
        k.ok("browser_navigate", json!({"url": site.url("frames.html")}))
            .await;
        let snap = k.ok("browser_snapshot", json!({})).await;
        let pay = kapture_e2e::ref_on(&snap, "button \"Pay now\"");
        let card = kapture_e2e::ref_on(&snap, "textbox \"Card\"");
        assert!(pay.starts_with('f'), "a frame's ref: {pay}\n{snap}");
        k.eval(&format!(
            "() => {{ const f = document.getElementById('same'); {change} }}"
        ))
        .await;
        kapture_e2e::eventually("the frame's new page", Duration::from_secs(10), || async {
            (k.eval(title).await == json!(now)).then_some(())
        })
        .await;
        for (tool, args) in [
            ("browser_click", json!({"ref": pay})),
            ("browser_type", json!({"ref": card, "text": "4242"})),
            ("browser_hover", json!({"ref": pay})),
            ("browser_get_text", json!({"ref": pay})),
            ("browser_snapshot", json!({"ref": pay})),
        ] {
            let out = k.call(tool, args.clone()).await;
            assert_ref_stale(&out, &format!("{change} then {tool} {args}"));
        }
    }
    // While a click waits for its element (disabled), the frame's page goes away.
    for (change, _) in &changes {
        k.ok("browser_navigate", json!({"url": site.url("frames.html")}))
            .await;
        let snap = k.ok("browser_snapshot", json!({})).await;
        let pay = kapture_e2e::ref_on(&snap, "button \"Pay now\"");
        k.eval(&format!(
            "() => {{ const f = document.getElementById('same'); \
             f.contentDocument.getElementById('pay').disabled = true; \
             setTimeout(() => {{ {change} }}, 300); }}"
        ))
        .await;
        let out = k.call("browser_click", json!({"ref": pay})).await;
        assert_ref_stale(&out, &format!("during a click: {change}"));
    }
    k.stop().await;
}

fn assert_ref_stale(out: &kapture_e2e::Outcome, what: &str) {
    assert!(out.is_error, "{what}: {}", out.text);
    assert_eq!(
        out.code().as_deref(),
        Some("REF_STALE"),
        "{what}: {}",
        out.text
    );
    assert!(
        out.text
            .contains("\nHint: The element reference belongs to an older page"),
        "{what}: {}",
        out.text
    );
    assert!(!out.text.contains("\"code\":-32"), "{what}: {}", out.text);
}
