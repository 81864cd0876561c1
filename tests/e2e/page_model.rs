//! The page model on real pages: snapshots with refs, refs across frames and documents,
//! folding and budget markers that lead to the rest, find, reads, waits and form filling.

use std::time::{Duration, Instant};

use kapture_e2e::{jpeg_size, ref_on, Engine, Kapture};
use serde_json::json;
use www_test_pages::Site;

kapture_e2e::on_both_engines! {
    a_snapshot_is_compact_marks_untrusted_content_and_its_refs_drive_the_page_on => a_snapshot_is_compact_marks_untrusted_content_and_its_refs_drive_the_page, a_snapshot_is_compact_marks_untrusted_content_and_its_refs_drive_the_page_natively;
    refs_reach_shadow_dom_and_go_stale_with_their_document_on => refs_reach_shadow_dom_and_go_stale_with_their_document, refs_reach_shadow_dom_and_go_stale_with_their_document_natively;
    refs_work_inside_same_origin_and_cross_origin_frames_on => refs_work_inside_same_origin_and_cross_origin_frames, refs_work_inside_same_origin_and_cross_origin_frames_natively;
    a_thousand_rows_fold_small_and_every_row_stays_reachable_on => a_thousand_rows_fold_small_and_every_row_stays_reachable, a_thousand_rows_fold_small_and_every_row_stays_reachable_natively;
    hidden_text_is_flagged_and_invisible_text_left_out_on => hidden_text_is_flagged_and_invisible_text_left_out, hidden_text_is_flagged_and_invisible_text_left_out_natively;
    reads_text_html_markdown_and_links_on => reads_text_html_markdown_and_links, reads_text_html_markdown_and_links_natively;
    wait_for_text_elements_and_time_with_a_deadline_on => wait_for_text_elements_and_time_with_a_deadline, wait_for_text_elements_and_time_with_a_deadline_natively;
    fill_form_handles_every_field_kind_in_one_call_on => fill_form_handles_every_field_kind_in_one_call, fill_form_handles_every_field_kind_in_one_call_natively;
    screenshots_default_to_scaled_jpeg_and_full_pages_are_capped_on => screenshots_default_to_scaled_jpeg_and_full_pages_are_capped, screenshots_default_to_scaled_jpeg_and_full_pages_are_capped_natively;
    an_editable_frame_body_is_a_textbox_to_type_into_on => an_editable_frame_body_is_a_textbox_to_type_into, an_editable_frame_body_is_a_textbox_to_type_into_natively;
    widgets_drawn_with_aria_say_their_value_once_on => widgets_drawn_with_aria_say_their_value_once, widgets_drawn_with_aria_say_their_value_once_natively;
}

/// What widget frameworks draw (NiceGUI's Quasar fields, ARIA sliders, Gradio's radios) is
/// said once and with its value: a field inside a label's focusable wrapper is one line, an
/// ARIA slider shows its value, a state both native and ARIA is one flag (issue 26).
async fn widgets_drawn_with_aria_say_their_value_once_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok(
        "browser_navigate",
        json!({"url": site.url("aria-widgets.html")}),
    )
    .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert_eq!(snap.matches("textbox \"Cups\"").count(), 1, "{snap}");
    assert!(snap.contains("slider \"Volume\" [ref="), "{snap}");
    assert!(
        snap.lines()
            .any(|l| l.contains("slider \"Volume\"") && l.ends_with(": 7")),
        "{snap}"
    );
    assert!(snap.contains("radio \"Small\" [checked] [ref="), "{snap}");
    assert!(!snap.contains("checked checked"), "{snap}");
    k.stop().await;
}

async fn a_snapshot_is_compact_marks_untrusted_content_and_its_refs_drive_the_page_on(
    engine: Engine,
) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert!(
        snap.starts_with("# Page \"Sign up\" http://127.0.0.1:")
            && snap.lines().next().unwrap().contains("untrusted"),
        "{snap}"
    );
    assert!(
        snap.contains("textbox \"Name\" [ref="),
        "labels name their controls once:\n{snap}"
    );
    assert!(snap.contains("button \"Disabled\" [disabled]"), "{snap}");
    assert!(
        !snap.lines().any(|l| l.trim() == "\"Name\""),
        "label text is not repeated:\n{snap}"
    );
    let name = ref_on(&snap, "textbox \"Name\"");
    let plan = ref_on(&snap, "combobox \"Plan\"");
    let terms = ref_on(&snap, "checkbox \"I agree\"");
    let submit = ref_on(&snap, "button \"Create account\"");
    k.ok(
        "browser_type",
        json!({"ref": name, "text": "Ada", "element": "Name field"}),
    )
    .await;
    k.ok(
        "browser_select_option",
        json!({"ref": plan, "values": ["pro"]}),
    )
    .await;
    k.ok("browser_click", json!({"ref": terms})).await;
    let clicked = k
        .ok(
            "browser_click",
            json!({"ref": submit, "includeSnapshot": "diff"}),
        )
        .await;
    assert!(
        clicked.contains("changed lines since the last snapshot"),
        "{clicked}"
    );
    assert!(
        clicked.contains("+ textbox \"Name\"") && clicked.contains(": Ada"),
        "the diff shows the new value:\n{clicked}"
    );
    let result = k
        .eval("() => JSON.parse(document.getElementById('result').textContent)")
        .await;
    assert_eq!(
        (
            result["name"].as_str(),
            result["plan"].as_str(),
            result["terms"].as_str()
        ),
        (Some("Ada"), Some("pro"), Some("on"))
    );
    let again = k.ok("browser_snapshot", json!({})).await;
    assert_eq!(
        ref_on(&again, "textbox \"Name\""),
        name,
        "the same element keeps its ref"
    );
    k.stop().await;
}

async fn refs_reach_shadow_dom_and_go_stale_with_their_document_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("dialog.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    // No selector reaches this button (shadow root, no id or class): the snapshot does.
    let shadow = ref_on(&snap, "button \"Shadow action\"");
    k.ok("browser_click", json!({"ref": shadow})).await;
    assert_eq!(
        k.eval("document.getElementById('result').textContent")
            .await,
        "shadow clicked"
    );

    let open = ref_on(&snap, "button \"Delete account\"");
    k.ok("browser_click", json!({"ref": open})).await;
    let modal = k.ok("browser_snapshot", json!({})).await;
    assert!(
        modal.contains("dialog \"Delete your account?\" [modal]"),
        "{modal}"
    );
    k.ok(
        "browser_click",
        json!({"ref": ref_on(&modal, "button \"Cancel\"")}),
    )
    .await;
    assert_eq!(
        k.eval("document.getElementById('result').textContent")
            .await,
        "kept"
    );

    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let out = k.call("browser_click", json!({"ref": open})).await;
    assert_eq!(out.code().as_deref(), Some("REF_STALE"), "{}", out.text);
    assert!(out.text.contains("take a new snapshot"), "{}", out.text);
    for args in [json!({}), json!({"ref": "e1", "selector": "#to-b"})] {
        assert_eq!(k.fails("browser_click", args).await, "BAD_ARGS");
    }
    assert_eq!(
        k.fails("browser_click", json!({"ref": "e99999"})).await,
        "REF_STALE"
    );
    k.stop().await;
}

async fn refs_work_inside_same_origin_and_cross_origin_frames_on(engine: Engine) {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let url = format!(
        "{}?cross={}",
        site.url("frames.html"),
        other.url("frame-child.html")
    );
    k.ok("browser_navigate", json!({"url": url})).await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    let frames: Vec<&str> = snap
        .lines()
        .filter(|l| l.contains("button \"Pay now\""))
        .collect();
    assert_eq!(
        frames.len(),
        2,
        "both frames' content is in the snapshot:\n{snap}"
    );
    let same_card = ref_on(&snap, "textbox \"Card\"");
    assert!(same_card.starts_with('f'), "frame-scoped ref: {same_card}");
    let lines: Vec<&str> = snap.lines().collect();
    let cross_at = lines
        .iter()
        .position(|l| l.contains("iframe \"Cross origin\""))
        .unwrap();
    let cross_text = lines[cross_at..].join("\n");
    let cross_card = ref_on(&cross_text, "textbox \"Card\"");
    let cross_pay = ref_on(&cross_text, "button \"Pay now\"");
    assert_ne!(same_card, cross_card);

    k.ok("browser_type", json!({"ref": same_card, "text": "1111"}))
        .await;
    k.ok(
        "browser_click",
        json!({"ref": ref_on(&snap, "button \"Pay now\"")}),
    )
    .await;
    k.ok("browser_type", json!({"ref": cross_card, "text": "2222"}))
        .await;
    k.ok("browser_click", json!({"ref": cross_pay})).await;
    let after = k.ok("browser_snapshot", json!({})).await;
    assert!(after.contains("paragraph \"paid with 1111\""), "{after}");
    assert!(after.contains("paragraph \"paid with 2222\""), "{after}");
    let text = k.ok("browser_get_text", json!({"ref": cross_pay})).await;
    // Page text comes quoted under a header line.
    assert!(text.ends_with("\n> Pay now"), "{text}");
    k.stop().await;
}

async fn a_thousand_rows_fold_small_and_every_row_stays_reachable_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("table.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert!(snap.len() < 40_000, "{} bytes", snap.len());
    let marker = snap
        .lines()
        .find(|l| l.contains("more rows"))
        .expect("a fold marker");
    let table = marker
        .split("ref: \"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    // The marker's own call shows the next rows.
    let page2 = k
        .ok(
            "browser_snapshot",
            json!({"ref": table, "offset": 500, "maxChars": 3000}),
        )
        .await;
    assert!(page2.contains("link \"Item number 499\""), "{page2}");
    let cut = page2.lines().last().unwrap();
    assert!(
        cut.contains(&format!("ref: \"{table}\", offset: ")),
        "an honest cut marker: {cut}"
    );
    let next: u32 = cut
        .split("offset: ")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let page3 = k
        .ok(
            "browser_snapshot",
            json!({"ref": table, "offset": next, "maxChars": 3000}),
        )
        .await;
    assert!(
        page3.contains(&format!("link \"Item number {}\"", next - 1)),
        "continues where the cut was:\n{page3}"
    );
    // find answers one line with a ref that acts.
    let found = k
        .ok("browser_find", json!({"query": "Item number 737"}))
        .await;
    assert!(found.starts_with("1 matches"), "{found}");
    let link = ref_on(&found, "link \"Item number 737\"");
    let clicked = k.ok("browser_click", json!({"ref": link})).await;
    assert!(clicked.contains("item.html?id=737"), "{clicked}");
    k.stop().await;
}

async fn hidden_text_is_flagged_and_invisible_text_left_out_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("hidden.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert!(
        snap.contains("link \"Skip to main content\" [hidden]"),
        "{snap}"
    );
    assert!(snap.contains("\"Offscreen notice\" [offscreen]"), "{snap}");
    assert!(snap.contains("\"Transparent text\" [hidden]"), "{snap}");
    for gone in [
        "Display none text",
        "Visibility hidden text",
        "Aria hidden text",
    ] {
        assert!(!snap.contains(gone), "{gone} should not be in:\n{snap}");
    }
    assert!(snap.contains("paragraph \"Visible paragraph.\""), "{snap}");
    let shallow = k
        .ok("browser_snapshot", json!({"interactiveOnly": true}))
        .await;
    assert_eq!(shallow.lines().count(), 2, "{shallow}");
    k.stop().await;
}

async fn reads_text_html_markdown_and_links_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("article.html")}))
        .await;
    let md = k.ok("browser_read_markdown", json!({})).await;
    for expected in [
        "# Getting started",
        "## Install",
        "### Next steps",
        "1. Download the binary.\n> 2. Put it on your `PATH`.",
        "**install**",
        "[the tutorial](http://127.0.0.1:",
        "| Option | Default |",
        "> Tip: start with the defaults.",
    ] {
        assert!(md.contains(expected), "{expected:?} missing from:\n{md}");
    }
    assert!(!md.contains("Home"), "navigation is not content:\n{md}");
    let links = k
        .ok("browser_extract_links", json!({"sameOriginOnly": true}))
        .await;
    assert!(links.starts_with("4 links"), "{links}");
    assert!(!links.contains("example.com"), "{links}");
    let only = k
        .ok("browser_extract_links", json!({"include": "page-"}))
        .await;
    assert!(only.starts_with("2 links"), "{only}");
    assert_eq!(
        k.fails("browser_extract_links", json!({"include": "("}))
            .await,
        "BAD_ARGS"
    );

    let text = k.ok("browser_get_text", json!({"selector": "h1"})).await;
    assert!(text.ends_with("\n> Getting started"), "{text}");
    let cut = k.ok("browser_get_text", json!({"maxChars": 200})).await;
    // The quoted lines' prefixes count against the budget: the cut ends a little before 200.
    let end: usize = cut
        .split("… cut: characters 0–")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cut marker in {cut}"));
    assert!((150..=200).contains(&end), "{cut}");
    assert!(cut.contains(&format!("offset: {end}")), "{cut}");
    let rest = k
        .ok("browser_get_text", json!({"maxChars": 200, "offset": end}))
        .await;
    assert!(
        rest.contains(&format!("… cut: characters {end}–")),
        "{rest}"
    );
    assert_ne!(rest.lines().nth(1), cut.lines().nth(1));
    let html = k.ok("browser_get_html", json!({"selector": "h2"})).await;
    assert!(html.ends_with("\n> <h2>Install</h2>"), "{html}");
    let inner = k
        .ok(
            "browser_get_html",
            json!({"selector": "h2", "outer": false}),
        )
        .await;
    assert!(inner.ends_with("\n> Install"), "{inner}");
    k.stop().await;
}

async fn wait_for_text_elements_and_time_with_a_deadline_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("wait.html")}))
        .await;
    let waited = k
        .ok("browser_wait_for", json!({"text": "Results are ready"}))
        .await;
    assert!(
        waited.contains("text \"Results are ready\" appeared"),
        "{waited}"
    );
    k.ok("browser_wait_for", json!({"textGone": "Loading"}))
        .await;
    k.ok("browser_wait_for", json!({"selector": "#ready"}))
        .await;
    k.ok(
        "browser_wait_for",
        json!({"selector": "#spinner", "gone": true}),
    )
    .await;
    let started = Instant::now();
    let out = k
        .call(
            "browser_wait_for",
            json!({"text": "never there", "timeoutMs": 800}),
        )
        .await;
    assert_eq!(out.code().as_deref(), Some("TIMEOUT"), "{}", out.text);
    assert!(started.elapsed() < Duration::from_secs(8));
    let t = k.ok("browser_wait_for", json!({"time": 0.2})).await;
    assert!(t.contains("waited 0.2 s"), "{t}");
    assert_eq!(k.fails("browser_wait_for", json!({})).await, "BAD_ARGS");
    k.stop().await;
}

async fn fill_form_handles_every_field_kind_in_one_call_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    let fields = json!([
        {"ref": ref_on(&snap, "textbox \"Name\""), "value": "Grace Hopper"},
        {"selector": "#email", "value": "grace@example.com"},
        {"ref": ref_on(&snap, "combobox \"Plan\""), "value": "Pro plan"},
        {"ref": ref_on(&snap, "radio \"Phone\""), "value": "true"},
        {"selector": "#birthday", "value": "1906-12-09"},
        {"selector": "#terms", "value": "true"},
        {"selector": "#notes", "value": "COBOL"},
    ]);
    let out = k
        .ok(
            "browser_fill_form",
            json!({"fields": fields, "submit": true}),
        )
        .await;
    assert!(out.starts_with("Filled 7 fields and submitted"), "{out}");
    let result = k
        .eval("() => JSON.parse(document.getElementById('result').textContent)")
        .await;
    let expected = json!({"name": "Grace Hopper", "email": "grace@example.com", "plan": "pro", "contact": "phone",
                          "birthday": "1906-12-09", "terms": "on", "notes": "COBOL"});
    assert_eq!(result, expected);
    let bad = k
        .call(
            "browser_fill_form",
            json!({"fields": [{"selector": "#terms", "value": "maybe"}]}),
        )
        .await;
    assert_eq!(bad.code().as_deref(), Some("BAD_ARGS"), "{}", bad.text);
    let missing = k
        .call(
            "browser_fill_form",
            json!({"fields": [{"selector": "#nope", "value": "x"}]}),
        )
        .await;
    assert!(missing.text.contains("field 1 (#nope)"), "{}", missing.text);
    k.stop().await;
}

async fn screenshots_default_to_scaled_jpeg_and_full_pages_are_capped_on(engine: Engine) {
    let site = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("table.html")}))
        .await;
    let shot = k
        .call("browser_take_screenshot", json!({"fullPage": true}))
        .await;
    assert!(!shot.is_error, "{}", shot.text);
    let (mime, bytes) = &shot.images[0];
    assert_eq!(mime, "image/jpeg");
    let (w, h) = jpeg_size(bytes);
    assert!(w.max(h) <= 1568, "{w}x{h}");
    assert!(
        shot.text.contains("truncated: the page is"),
        "{}",
        shot.text
    );
    let element = k
        .call("browser_take_screenshot", json!({"ref": "e1"}))
        .await;
    assert!(element.is_error, "e1 was never handed out on this tab");
    let snap = k.ok("browser_snapshot", json!({})).await;
    let buy = ref_on(&snap, "button \"Buy\"");
    let el = k
        .call(
            "browser_take_screenshot",
            json!({"ref": buy, "type": "png", "scale": 2}),
        )
        .await;
    assert!(!el.is_error, "{}", el.text);
    assert_eq!(el.images[0].0, "image/png");
    k.stop().await;
}

/// An editor's frame (CKEditor 4, TinyMCE): a frame whose document a script wrote with a
/// contenteditable body, a designMode frame and another origin's editable body are each a
/// text box with a ref under their iframe, and typing and clicking there act in the frame.
async fn an_editable_frame_body_is_a_textbox_to_type_into_on(engine: Engine) {
    let site = Site::start().unwrap();
    let other = Site::start().unwrap();
    let k = Kapture::launch_on(engine).await;
    let url = format!(
        "{}?cross={}",
        site.url("editable-frames.html"),
        other.url("editable-child.html")
    );
    k.ok("browser_navigate", json!({"url": url})).await;
    // The frames' documents are written and loaded after the page's own: bounded looks.
    let deadline = Instant::now() + Duration::from_secs(10);
    let snap = loop {
        let snap = k.ok("browser_snapshot", json!({})).await;
        let ready =
            snap.contains("textbox \"Notes editor\"") && snap.contains("textbox \"Cross editor\"");
        if ready || Instant::now() > deadline {
            break snap;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let lines: Vec<&str> = snap.lines().collect();
    // Each text box is the line right under its iframe, with a ref.
    let under = |frame: &str| -> String {
        let at = lines
            .iter()
            .position(|l| l.contains(&format!("iframe \"{frame}\"")))
            .unwrap_or_else(|| panic!("no iframe {frame:?} in:\n{snap}"));
        let next = lines.get(at + 1).copied().unwrap_or_default();
        assert!(
            next.contains("textbox"),
            "a text box under {frame:?}:\n{snap}"
        );
        ref_on(next, "textbox")
    };
    let notes = under("Notes frame");
    let design = under("Design frame");
    let cross = under("Cross frame");
    assert!(snap.contains("textbox \"Notes editor\""), "{snap}");
    assert!(
        snap.contains("Old note"),
        "the editor's text is shown: {snap}"
    );

    // The frame element is no text field: the answer says where its text box is.
    let frame = ref_on(&snap, "iframe \"Notes frame\"");
    let refused = k
        .call("browser_type", json!({"ref": frame, "text": "Buy seeds"}))
        .await;
    assert!(
        refused.is_error && refused.text.contains("text box inside it"),
        "{}",
        refused.text
    );
    k.ok("browser_type", json!({"ref": notes, "text": "Buy seeds"}))
        .await;
    let typed = k
        .eval("() => document.querySelector('iframe').contentDocument.body.textContent")
        .await;
    assert_eq!(typed, json!("Buy seeds"));
    k.ok(
        "browser_type",
        json!({"ref": design, "text": "Plan the beds"}),
    )
    .await;
    let typed = k
        .eval("() => document.getElementById('design').contentDocument.body.textContent")
        .await;
    assert_eq!(typed, json!("Plan the beds"));
    k.ok("browser_type", json!({"ref": cross, "text": "Water daily"}))
        .await;
    let after = k.ok("browser_snapshot", json!({})).await;
    assert!(
        after.contains("Water daily"),
        "typed in the other origin's frame: {after}"
    );

    // A click on the text box puts the focus in its frame, as a person's does.
    for (target, id) in [(&notes, "written"), (&design, "design")] {
        k.ok("browser_click", json!({"ref": target})).await;
        let focused = k.eval("() => document.activeElement.id").await;
        assert_eq!(
            focused,
            json!(id),
            "the click on {target} focused its frame"
        );
    }
    k.stop().await;
}
