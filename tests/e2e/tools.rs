//! Every tool of the foundation on real pages: the happy paths an agent relies on.

use std::time::Duration;

use kapture_e2e::{eventually, png_size, ref_on, Engine, Kapture};
use serde_json::json;
use www_test_pages::Site;

kapture_e2e::on_both_engines! {
    fill_and_submit_a_form_by_css_selectors_on => fill_and_submit_a_form_by_css_selectors, fill_and_submit_a_form_by_css_selectors_natively;
    navigate_back_forward_and_reload_report_where_the_page_is_on => navigate_back_forward_and_reload_report_where_the_page_is, navigate_back_forward_and_reload_report_where_the_page_is_natively;
    console_messages_are_kept_newest_first_across_navigations_on => console_messages_are_kept_newest_first_across_navigations, console_messages_are_kept_newest_first_across_navigations_natively;
    screenshots_of_viewport_full_page_and_element_on => screenshots_of_viewport_full_page_and_element, screenshots_of_viewport_full_page_and_element_natively;
    tabs_list_new_select_close_and_the_current_tab_on => tabs_list_new_select_close_and_the_current_tab, tabs_list_new_select_close_and_the_current_tab_natively;
    mouse_and_keyboard_input_is_trusted_and_waits_for_elements_on => mouse_and_keyboard_input_is_trusted_and_waits_for_elements, mouse_and_keyboard_input_is_trusted_and_waits_for_elements_natively;
    evaluate_answers_json_for_expressions_and_functions_on => evaluate_answers_json_for_expressions_and_functions, evaluate_answers_json_for_expressions_and_functions_natively;
    a_click_lands_on_the_element_it_aimed_at_through_slots_and_swaps_on => a_click_lands_on_the_element_it_aimed_at_through_slots_and_swaps, a_click_lands_on_the_element_it_aimed_at_through_slots_and_swaps_natively;
    a_control_drawn_under_its_own_label_is_clicked_through_it_on => a_control_drawn_under_its_own_label_is_clicked_through_it, a_control_drawn_under_its_own_label_is_clicked_through_it_natively;
}

async fn fill_and_submit_a_form_by_css_selectors_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert!(nav.contains("form.html (200) \"Sign up\""), "{nav}");

    // Typing replaces what the field held, like a user selecting all and typing.
    k.ok(
        "browser_type",
        json!({"selector": "#name", "text": "Ada Lovelace"}),
    )
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#email", "text": "ada@example.com", "slowly": true}),
    )
    .await;
    k.ok(
        "browser_type",
        json!({"selector": "#notes", "text": "line one\nline two"}),
    )
    .await;
    let picked = k
        .ok(
            "browser_select_option",
            json!({"selector": "#plan", "values": ["Pro plan"]}),
        )
        .await;
    assert!(picked.contains("[\"pro\"]"), "{picked}");
    k.ok(
        "browser_select_option",
        json!({"selector": "#toppings", "values": ["cheese", "Ham"]}),
    )
    .await;
    k.ok("browser_click", json!({"selector": "#terms"})).await;
    let clicked = k
        .ok(
            "browser_click",
            json!({"selector": "#submit", "element": "Create account button"}),
        )
        .await;
    assert!(clicked.starts_with("Clicked #submit"), "{clicked}");

    let result = k
        .eval("() => JSON.parse(document.getElementById('result').textContent)")
        .await;
    assert_eq!(
        result,
        json!({"name": "Ada Lovelace", "email": "ada@example.com", "plan": "pro",
               "toppings": ["cheese", "ham"], "birthday": "", "terms": "on", "notes": "line one\nline two"})
    );
    let events = k
        .eval("document.getElementById('events').textContent")
        .await;
    for e in ["name:input", "name:change", "email:input", "email:change"] {
        assert!(
            events.as_str().unwrap().contains(e),
            "{e} missing from {events}"
        );
    }
    // Enter in a field submits the form too.
    k.ok(
        "browser_type",
        json!({"selector": "#name", "text": "Grace", "submit": true}),
    )
    .await;
    let name = k
        .eval("() => JSON.parse(document.getElementById('result').textContent).name")
        .await;
    assert_eq!(name, "Grace");
    k.stop().await;
}

async fn navigate_back_forward_and_reload_report_where_the_page_is_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let click = k.ok("browser_click", json!({"selector": "#to-b"})).await;
    assert!(
        click.contains("the page navigated to") && click.contains("page-b.html \"Page B\""),
        "{click}"
    );
    let back = k.ok("browser_navigate_back", json!({})).await;
    assert!(back.contains("page-a.html (200) \"Page A\""), "{back}");
    let forward = k.ok("browser_navigate_forward", json!({})).await;
    assert!(
        forward.contains("page-b.html (200) \"Page B\""),
        "{forward}"
    );
    k.eval("() => { document.title = 'changed'; }").await;
    let reload = k.ok("browser_reload", json!({})).await;
    assert!(
        reload.contains("\"Page B\""),
        "reload restores the served title: {reload}"
    );
    // Same-document navigation (hash) also works and answers at once.
    let hash = k
        .ok(
            "browser_navigate",
            json!({"url": site.url("page-b.html#part")}),
        )
        .await;
    assert!(hash.contains("page-b.html#part"), "{hash}");
    k.stop().await;
}

async fn console_messages_are_kept_newest_first_across_navigations_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("console.html")}))
        .await;
    let errors = eventually(
        "the uncaught error to be reported",
        Duration::from_secs(10),
        || async {
            let text = k
                .ok("browser_console_messages", json!({"level": "error"}))
                .await;
            text.contains("uncaught boom").then_some(text)
        },
    )
    .await;
    // Message lines start with their level; stack lines of an exception follow indented.
    let lines: Vec<&str> = errors
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert!(lines.iter().all(|l| l.starts_with("[error]")), "{errors}");
    let boom = lines
        .iter()
        .position(|l| l.contains("uncaught boom"))
        .expect("the exception");
    let logged = lines
        .iter()
        .position(|l| l.contains("error line"))
        .expect("console.error");
    assert!(
        boom < logged,
        "newest first: the later exception comes before the earlier log\n{errors}"
    );

    let five = k.ok("browser_console_messages", json!({"max": 5})).await;
    assert!(five.starts_with("5 of "), "{five}");
    assert_eq!(
        five.lines().filter(|l| l.starts_with('[')).count(),
        5,
        "{five}"
    );
    let all = k.ok("browser_console_messages", json!({"max": 500})).await;
    for expected in [
        "[debug] debug line",
        "[info] plain log {a: 1, b: \"two\"}",
        "[warning] warning line",
        "[info] spam 49",
    ] {
        assert!(all.contains(expected), "{expected} missing:\n{all}");
    }
    let warn = k
        .ok("browser_console_messages", json!({"level": "warning"}))
        .await;
    assert!(
        !warn.contains("[info]") && warn.contains("[warning] warning line"),
        "{warn}"
    );

    // A click's log lands too, and messages survive a navigation of the tab.
    k.ok("browser_click", json!({"selector": "#more"})).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let after = k.ok("browser_console_messages", json!({"max": 500})).await;
    assert!(
        after.contains("clicked 3") && after.contains("debug line"),
        "{after}"
    );
    k.stop().await;
}

async fn screenshots_of_viewport_full_page_and_element_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("tall.html")}))
        .await;

    let viewport = k
        .call("browser_take_screenshot", json!({"type": "png"}))
        .await;
    assert!(!viewport.is_error, "{}", viewport.text);
    let (mime, png) = &viewport.images[0];
    assert_eq!(mime, "image/png");
    let (vw, vh) = png_size(png);
    assert!(vw > 100 && vh > 100 && vh < 2000, "viewport {vw}x{vh}");

    // A full page is capped at four widths of height, scaled into 1568 px, and says so.
    let full = k
        .call(
            "browser_take_screenshot",
            json!({"fullPage": true, "type": "png"}),
        )
        .await;
    let (fw, fh) = png_size(&full.images[0].1);
    assert!(fh <= 1568 && fh > 1500, "{fw}x{fh}");
    assert!(
        full.text.contains(&format!("{fw}x{fh}"))
            && full.text.contains("truncated: the page is 8000 px tall"),
        "{}",
        full.text
    );
    let unscaled = k
        .call(
            "browser_take_screenshot",
            json!({"fullPage": true, "type": "png", "scale": 1}),
        )
        .await;
    let (uw, uh) = png_size(&unscaled.images[0].1);
    assert!(
        uw.abs_diff(vw) < 30 && uh == uw * 4,
        "full width, four widths tall: {uw}x{uh}"
    );

    let element = k
        .call(
            "browser_take_screenshot",
            json!({"selector": "#bottom", "type": "png"}),
        )
        .await;
    let (ew, eh) = png_size(&element.images[0].1);
    assert!(ew < 400 && eh < 100, "element {ew}x{eh}");

    let jpeg = k.call("browser_take_screenshot", json!({})).await;
    assert_eq!(jpeg.images[0].0, "image/jpeg", "JPEG by default");
    assert!(jpeg.images[0].1.starts_with(&[0xff, 0xd8]), "JPEG magic");
    k.stop().await;
}

async fn tabs_list_new_select_close_and_the_current_tab_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(
        list.contains("(current)") && list.contains("Page A"),
        "{list}"
    );

    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-b.html")}),
        )
        .await;
    assert!(
        opened.contains("page-b.html") && opened.contains("current"),
        "{opened}"
    );
    let new_id: i64 = opened.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert_eq!(
        k.eval("document.title").await,
        "Page B",
        "tools act on the new current tab"
    );

    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(list.lines().count(), 2, "{list}");
    k.ok("browser_tabs", json!({"action": "select", "index": 0}))
        .await;
    assert_eq!(k.eval("document.title").await, "Page A");
    // An explicit tabId reaches another tab without changing the current one.
    let other = k
        .ok(
            "browser_evaluate",
            json!({"function": "document.title", "tabId": new_id}),
        )
        .await;
    assert_eq!(other, "\"Page B\"");
    assert_eq!(k.eval("document.title").await, "Page A");

    let closed = k
        .ok("browser_tabs", json!({"action": "close", "tabId": new_id}))
        .await;
    assert!(closed.contains(&new_id.to_string()), "{closed}");
    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(list.lines().count(), 1, "{list}");
    assert_eq!(
        k.fails(
            "browser_evaluate",
            json!({"function": "1", "tabId": new_id})
        )
        .await,
        "TAB_NOT_FOUND"
    );
    k.stop().await;
}

async fn mouse_and_keyboard_input_is_trusted_and_waits_for_elements_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;

    k.ok("browser_hover", json!({"selector": "#hover-target"}))
        .await;
    assert_eq!(
        k.eval("document.getElementById('hover-state').textContent")
            .await,
        "hovered"
    );

    k.ok("browser_click", json!({"selector": "#keys"})).await;
    for key in ["a", "Shift+B", "Enter", "ArrowLeft", "Control+a"] {
        k.ok("browser_press_key", json!({"key": key})).await;
    }
    assert_eq!(
        k.eval("document.getElementById('key-log').textContent")
            .await,
        "a Shift+B Enter ArrowLeft Ctrl+a"
    );
    assert_eq!(k.eval("document.getElementById('keys').value").await, "aB");

    k.ok(
        "browser_click",
        json!({"selector": "#dbl", "doubleClick": true}),
    )
    .await;
    assert_eq!(
        k.eval("document.getElementById('dbl').textContent").await,
        "double clicked"
    );
    k.ok(
        "browser_click",
        json!({"selector": "#right", "button": "right"}),
    )
    .await;
    assert_eq!(
        k.eval("document.getElementById('right').textContent").await,
        "right clicked"
    );
    k.ok(
        "browser_click",
        json!({"selector": "#shift", "modifiers": ["Shift"]}),
    )
    .await;
    assert_eq!(
        k.eval("document.getElementById('shift').textContent").await,
        "shift click"
    );
    // `#late` appears 300 ms after load: the click waits for it.
    k.ok("browser_click", json!({"selector": "#late"})).await;
    assert_eq!(
        k.eval("document.getElementById('late').textContent").await,
        "late clicked"
    );
    // Trusted events: the page sees isTrusted clicks.
    k.eval("() => { window.__trusted = null; document.addEventListener('click', e => window.__trusted = e.isTrusted, {once: true}); }").await;
    k.ok("browser_click", json!({"selector": "#shift"})).await;
    assert_eq!(k.eval("window.__trusted").await, true);
    k.stop().await;
}

async fn evaluate_answers_json_for_expressions_and_functions_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    assert_eq!(k.eval("1+1").await, 2);
    assert_eq!(
        k.eval("() => ({a: [1, 'x', null], b: true})").await,
        json!({"a": [1, "x", null], "b": true})
    );
    assert_eq!(
        k.eval("async () => { await new Promise(r => setTimeout(r, 10)); return document.title; }")
            .await,
        "Page A"
    );
    assert_eq!(
        k.ok("browser_evaluate", json!({"function": "undefined"}))
            .await,
        "undefined"
    );
    assert_eq!(k.eval("0/0").await, "NaN");
    k.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_bridge_extension_and_tabs() {
    let k = Kapture::launch().await;
    // The first tool call waits for the launched browser; status then shows it connected.
    k.ok("browser_tabs", json!({"action": "list"})).await;
    let status = k.ok("browser_status", json!({})).await;
    let port = k.handshakes()[0]["port"].as_u64().unwrap();
    assert!(
        status.contains(&format!("ws://127.0.0.1:{port}")),
        "{status}"
    );
    assert!(
        status.contains("extension: djjhjaffgifolhomiafbjplbhmfblamg v0.1.0 connected"),
        "{status}"
    );
    assert!(
        status.contains("browser mode: launch; launched"),
        "{status}"
    );
    assert!(status.contains("about:blank"), "{status}");
    k.stop().await;
}

/// A radio or checkbox that a design system draws inside (or beside) its label, over a
/// visually hidden input — clipped, off screen, or not rendered — is clicked by its ref
/// through its label, as a person's click there toggles it; a slider's range input hidden in
/// its thumb is pressed on the thumb; a link inside the label is never what is clicked;
/// another element over a control is still a cover (issue 26).
async fn a_control_drawn_under_its_own_label_is_clicked_through_it_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("label-controls.html")}),
    )
    .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    let checked = |sel: &str| {
        let script = format!("() => document.querySelector({}).checked", json!(sel));
        let k = &k;
        async move { k.eval(&script).await }
    };
    for (line, sel) in [
        ("radio \"Large\"", "input[value=large]"),
        ("checkbox \"Subscribe\"", "#news"),
        ("checkbox \"I agree to the", "#terms"),
    ] {
        let r = ref_on(&snap, line);
        let out = k.call("browser_click", json!({"ref": r})).await;
        assert!(!out.is_error, "{line}: {}", out.text);
        assert_eq!(checked(sel).await, json!(true), "{line} is checked");
    }
    assert_eq!(
        k.eval("() => document.getElementById('log').textContent")
            .await,
        json!(""),
        "the link inside a label was not clicked"
    );
    // An input not rendered at all (not in the page model): by a selector, through its label.
    k.ok("browser_click", json!({"selector": "input[value=express]"}))
        .await;
    assert_eq!(checked("input[value=express]").await, json!(true));
    // The checkbox toggles back, through its label again.
    let r = ref_on(&snap, "checkbox \"Subscribe\"");
    k.ok("browser_click", json!({"ref": r})).await;
    assert_eq!(checked("#news").await, json!(false));
    // A slider whose hidden range input sits in its thumb: pressed on the thumb (it takes
    // the focus, the value stays), then moved with keys.
    let r = ref_on(&snap, "slider \"Volume\"");
    k.ok("browser_click", json!({"ref": r})).await;
    assert_eq!(
        k.eval("() => [document.getElementById('log').textContent, document.activeElement.id]")
            .await,
        json!(["thumb ", "vol"])
    );
    k.ok("browser_press_key", json!({"key": "ArrowRight"}))
        .await;
    assert_eq!(
        k.eval("() => document.getElementById('vol').value").await,
        json!("6")
    );
    // Covered by something that is not its own: refused, nothing pressed.
    let r = ref_on(&snap, "checkbox \"Gift wrap\"");
    let out = k.call("browser_click", json!({"ref": r})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{}",
        out.text
    );
    assert!(out.text.contains("backdrop"), "{}", out.text);
    assert_eq!(checked("#gift").await, json!(false));
    k.stop().await;
}

/// A click aims at one element and lands on it, or says why not: a web component's button
/// whose label shows through a slot is clicked, not "covered" by its own host; a button the page swaps for another under the arriving pointer is not
/// clicked in its stead; a double-click whose button ran away after the first press says so.
async fn a_click_lands_on_the_element_it_aimed_at_through_slots_and_swaps_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("components.html")}),
    )
    .await;
    let log = || k.eval("document.getElementById('log').textContent.trim()");
    let snap = k.ok("browser_snapshot", json!({})).await;
    // The button inside the open shadow root, by its ref; the closed one's host (a closed
    // root's inside is not in the page model) by a selector.
    let buy = ref_on(&snap, "button \"Buy now\"");
    k.ok("browser_click", json!({"ref": buy})).await;
    assert!(log().await.as_str().unwrap().ends_with("open"));
    k.ok("browser_click", json!({"selector": "#closed-pay"}))
        .await;
    assert!(log().await.as_str().unwrap().ends_with("closed"));
    k.ok("browser_click", json!({"selector": "#light"})).await;
    assert!(log().await.as_str().unwrap().ends_with("light"));

    let out = k.call("browser_click", json!({"selector": ".go"})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{}",
        out.text
    );
    assert!(out.text.contains("nothing was pressed"), "{}", out.text);
    assert!(!log().await.as_str().unwrap().contains("replacement"));

    let out = k
        .call(
            "browser_click",
            json!({"selector": "#runner", "doubleClick": true}),
        )
        .await;
    assert_eq!(
        out.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("pressed 1 time(s), the rest was not"),
        "{}",
        out.text
    );
    assert!(log().await.as_str().unwrap().ends_with("runner"));

    // A frame's button whose frame moves away as the pointer comes: the page's own button
    // now under the pointer is not pressed in its stead.
    k.ok(
        "browser_navigate",
        json!({"url": site.url("frame-mover.html")}),
    )
    .await;
    let snap = snapshot_showing(&k, "button \"Go\"").await;
    let go = ref_on(&snap, "button \"Go\"");
    let out = k.call("browser_click", json!({"ref": go})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{}",
        out.text
    );
    assert!(out.text.contains("nothing was pressed"), "{}", out.text);
    assert_eq!(log().await, "", "neither button was pressed");

    // A frame moved so that another button of its own is under the pointer, its aimed
    // button still in place inside it: not pressed.
    k.ok(
        "browser_navigate",
        json!({"url": site.url("frame-shift.html")}),
    )
    .await;
    let snap = snapshot_showing(&k, "button \"Cancel\"").await;
    let cancel = ref_on(&snap, "button \"Cancel\"");
    let out = k.call("browser_click", json!({"ref": cancel})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{}",
        out.text
    );
    assert_eq!(log().await, "", "neither button was pressed");

    // An iframe element inside a frame is clicked (the press lands in its own document).
    k.ok(
        "browser_navigate",
        json!({"url": site.url("frame-nest.html")}),
    )
    .await;
    let snap = snapshot_showing(&k, "inside the inner frame").await;
    let inner = ref_on(&snap, "iframe \"Inner\"");
    k.ok("browser_click", json!({"ref": inner})).await;
    k.stop().await;
}

/// The page's snapshot once it shows `needle` (a frame's content arrives after its page).
async fn snapshot_showing(k: &Kapture, needle: &str) -> String {
    eventually(needle, Duration::from_secs(10), || async {
        let snap = k.ok("browser_snapshot", json!({})).await;
        snap.contains(needle).then_some(snap)
    })
    .await
}
