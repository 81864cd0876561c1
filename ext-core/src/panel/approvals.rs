//! The approvals both panels show: each waiting action with its risk, why, who asks, what
//! and where, the time left and the answers (armed by position), and the countdowns.

use wasm_bindgen::prelude::*;
use web_sys::{Document, Element};

use super::{arming, document, el, on, Send};
use crate::ui::PanelRequest;

/// Every `[data-expires]` element says how long is left, once a second, for the page's
/// life (the approvals' countdowns).
pub(crate) fn start_countdowns(doc: &Document) {
    let doc = doc.clone();
    let tick = Closure::<dyn FnMut()>::new(move || update_countdowns(&doc));
    if let Some(w) = web_sys::window() {
        let _ = w.set_interval_with_callback_and_timeout_and_arguments_0(
            tick.as_ref().unchecked_ref(),
            1000,
        );
    }
    tick.forget();
}

fn update_countdowns(doc: &Document) {
    let Ok(all) = doc.query_selector_all("[data-expires]") else {
        return;
    };
    let now = js_sys::Date::now();
    for i in 0..all.length() {
        let Some(e) = all.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        let at = e
            .get_attribute("data-expires")
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        e.set_text_content(Some(&crate::ui::time_left(at, now)));
    }
    if all.length() > 0 {
        // A shorter text can unwrap a line and move the answers below it.
        arming::settle(doc);
    }
}

/// The approvals waiting for a person, each with its risk as a word and a colour, why, who
/// asks, what and where, the time left, and the four answers. Both panels show them so.
/// The answers are armed by position (`arming`): a new row, or one that moved because a
/// row above it came or went, takes clicks only once it has stayed put.
pub(crate) fn approval_list(
    doc: &Document,
    list: &Element,
    pending: &[crate::ui::ApprovalView],
    send: Send,
) {
    // The same list again (the worker tells every change to every panel) is left alone:
    // a click under way is not lost to a redraw.
    let drawn = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        serde_json::to_string(pending)
            .unwrap_or_default()
            .hash(&mut h);
        h.finish().to_string()
    };
    if list.get_attribute("data-drawn").as_deref() == Some(drawn.as_str()) {
        return;
    }
    let _ = list.set_attribute("data-drawn", &drawn);
    // Arguments a person chose to read whole stay whole across redraws.
    let whole = expanded(list);
    list.set_inner_html("");
    for a in pending {
        let li = el(
            doc,
            "li",
            &[
                ("class", "approval"),
                ("data-risk", a.risk.name()),
                ("data-id", &a.id.to_string()),
            ],
            "",
        );
        let head = el(doc, "div", &[("class", "head")], "");
        let risk = format!("{} risk", a.risk.name());
        head.append_child(&el(doc, "span", &[("class", "risk")], &risk))
            .ok();
        if !a.risk_why.is_empty() {
            head.append_child(&el(doc, "span", &[("class", "why")], &a.risk_why))
                .ok();
        }
        let left = crate::ui::time_left(a.expires, js_sys::Date::now());
        head.append_child(&el(
            doc,
            "span",
            &[("class", "left"), ("data-expires", &a.expires.to_string())],
            &left,
        ))
        .ok();
        li.append_child(&head).ok();
        let what = format!("{} ({})", a.method, a.category);
        li.append_child(&el(doc, "div", &[("class", "mono what")], &what))
            .ok();
        if let Some(target) = &a.target {
            li.append_child(&el(doc, "div", &[("class", "mono target")], target))
                .ok();
        }
        li.append_child(&arguments(doc, a, whole.contains(&a.id)))
            .ok();
        let whom = a.who.as_deref().unwrap_or("an agent");
        li.append_child(&el(
            doc,
            "div",
            &[("class", "muted where")],
            &format!("{} · asked by {whom}", a.origin),
        ))
        .ok();
        let buttons = el(doc, "div", &[("class", "answers")], "");
        for (answer, label) in [
            ("once", "Allow once"),
            // A grant is the asking MCP session's alone (another agent is asked again).
            ("origin", "Allow for this agent"),
            // Kept for every agent until revoked in the side panel.
            ("always", "Always allow here"),
            ("deny", "Deny"),
        ] {
            // An origin a person's grant cannot name (no web origin) is asked each time.
            if answer == "always" && !a.lasting {
                continue;
            }
            let b = el(
                doc,
                "button",
                &[
                    ("type", "button"),
                    ("id", &format!("approve-{answer}-{}", a.id)),
                    ("data-answer", answer),
                ],
                label,
            );
            arming::guard(&b, answer);
            let (send, id) = (send.clone(), a.id);
            on(&b, "click", move |_| {
                send(PanelRequest::Answer {
                    id,
                    answer: answer.to_string(),
                })
            });
            buttons.append_child(&b).ok();
        }
        li.append_child(&buttons).ok();
        list.append_child(&li).ok();
    }
    arming::settle(doc);
}

/// The ids of the approvals in `list` whose arguments are shown whole.
fn expanded(list: &Element) -> Vec<u64> {
    match list.query_selector_all(":scope > li[data-id] .args[data-whole='true']") {
        Ok(all) => (0..all.length())
            .filter_map(|i| all.item(i))
            .filter_map(|n| n.dyn_into::<Element>().ok())
            .filter_map(|e| e.closest("li[data-id]").ok().flatten())
            .filter_map(|li| li.get_attribute("data-id"))
            .filter_map(|id| id.parse().ok())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// An approval's arguments (masked): the first `ui::ARGS_SHOWN` characters, and when there
/// is more, a "show all" toggle that shows the rest as text (an `evaluate`'s whole code, a
/// form's later fields).
fn arguments(doc: &Document, a: &crate::ui::ApprovalView, whole: bool) -> Element {
    let (text, long) = crate::ui::args_text(&a.args, whole);
    let block = el(
        doc,
        "div",
        &[
            ("class", "mono args"),
            ("data-whole", if whole { "true" } else { "false" }),
        ],
        "",
    );
    let shown = el(doc, "span", &[("class", "text")], &text);
    block.append_child(&shown).ok();
    if !long {
        return block;
    }
    let toggle = el(
        doc,
        "button",
        &[
            ("type", "button"),
            ("class", "more"),
            ("id", &format!("args-toggle-{}", a.id)),
            ("aria-expanded", if whole { "true" } else { "false" }),
        ],
        if whole { "show less" } else { "show all" },
    );
    let (args, b, t) = (a.args.clone(), block.clone(), toggle.clone());
    on(&toggle, "click", move |_| {
        let now_whole = b.get_attribute("data-whole").as_deref() != Some("true");
        let (text, _) = crate::ui::args_text(&args, now_whole);
        shown.set_text_content(Some(&text));
        let _ = b.set_attribute("data-whole", if now_whole { "true" } else { "false" });
        let _ = t.set_attribute("aria-expanded", if now_whole { "true" } else { "false" });
        t.set_text_content(Some(if now_whole { "show less" } else { "show all" }));
        // The answers below moved: measured again (and armed again).
        arming::settle(&document());
    });
    block.append_child(&toggle).ok();
    block
}
