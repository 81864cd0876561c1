//! The "Pick an element" component of Kapture's panels: a person presses Pick, points at an
//! element in the page and clicks it; the component shows the element's page-model line,
//! its ref and the recorder's ranked locators, each with a Copy button. It runs `pick`
//! through the worker's `Run` request on a port of its own, so any extension page mounts
//! it with a tab id and the id of an empty element: `picker::mount("picker", tab_id)`. A
//! pick is one command (agents' commands on the tab wait behind it); Cancel stops it
//! through the worker at once, and the tab's queue removes the picker from the page.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element, HtmlTextAreaElement};

use super::link::Link;
use super::{el, on};
use crate::chrome;
use crate::protocol::TabId;
use crate::ui::{PanelEvent, PanelRequest, PANEL_PORT};

/// The longest the panel keeps picking before it gives up.
const PICK_SECS: f64 = 120.0;

type Done = Box<dyn FnOnce(bool, Value)>;

/// The mounted component.
pub struct Picker {
    doc: Document,
    link: Rc<Link>,
    tab: Cell<TabId>,
    /// The element the component lives in (its `data-copied` tells what was copied last).
    root: Element,
    prefix: String,
    next_id: Cell<u64>,
    pending: RefCell<HashMap<u64, Done>>,
    /// The `Run` id of the pick under way, if one is.
    picking_id: Cell<Option<u64>>,
}

/// Build the picker into the element `container_id` (emptied first), working on `tab_id`.
/// Answers the component, to point it at another tab with [`Picker::set_tab`].
pub fn mount(container_id: &str, tab_id: TabId) -> Option<Rc<Picker>> {
    let doc = web_sys::window()?.document()?;
    let root = doc.get_element_by_id(container_id)?;
    root.set_inner_html("");
    let _ = root.class_list().add_1("picker");
    let picker = Rc::new(Picker {
        doc: doc.clone(),
        link: Link::open(PANEL_PORT),
        tab: Cell::new(tab_id),
        root: root.clone(),
        prefix: container_id.to_string(),
        next_id: Cell::new(0),
        pending: RefCell::default(),
        picking_id: Cell::new(None),
    });
    let p = Rc::downgrade(&picker);
    picker.link.on_message(move |msg| {
        let Some(p) = p.upgrade() else { return };
        if let Ok(PanelEvent::Result { id, ok, data, .. }) = chrome::from_js::<PanelEvent>(msg) {
            let done = p.pending.borrow_mut().remove(&id);
            if let Some(done) = done {
                done(ok, data);
            }
        }
    });
    // The worker went away mid-pick: its pick will never be answered.
    let p = Rc::downgrade(&picker);
    picker.link.on_down(move || {
        let Some(p) = p.upgrade() else { return };
        p.pending.borrow_mut().clear();
        if p.picking_id.take().is_some() {
            p.finish("Kapture's service worker restarted: nothing picked. Press Pick an element to try again.");
        }
    });
    root.append_child(&el(
        &doc,
        "p",
        &[("class", "muted")],
        "Point at an element in the page and click it: its snapshot line, a ref and ranked locators to copy. Kapture keeps the click from the page's handlers (a page may still notice it); Esc in the page or Cancel here stops. The agent's commands on this tab wait while you pick.",
    ))
    .ok();
    let controls = el(&doc, "div", &[("class", "controls")], "");
    let start = el(
        &doc,
        "button",
        &[("type", "button"), ("id", &picker.id("start"))],
        "Pick an element",
    );
    let cancel = el(
        &doc,
        "button",
        &[
            ("type", "button"),
            ("id", &picker.id("cancel")),
            ("hidden", ""),
        ],
        "Cancel",
    );
    controls.append_child(&start).ok();
    controls.append_child(&cancel).ok();
    root.append_child(&controls).ok();
    root.append_child(&el(
        &doc,
        "p",
        &[
            ("id", &picker.id("status")),
            ("role", "status"),
            ("aria-live", "polite"),
            ("class", "mono"),
        ],
        "",
    ))
    .ok();
    root.append_child(&el(
        &doc,
        "div",
        &[("id", &picker.id("result")), ("class", "pick-result")],
        "",
    ))
    .ok();
    let p = picker.clone();
    on(&start, "click", move |_| p.start());
    let p = picker.clone();
    on(&cancel, "click", move |_| p.cancel());
    Some(picker)
}

impl Picker {
    /// Work on another tab from now on (a pick under way ends first).
    pub fn set_tab(self: &Rc<Self>, tab: TabId) {
        if self.picking_id.get().is_some() {
            self.cancel();
        }
        self.tab.set(tab);
    }

    fn id(&self, part: &str) -> String {
        format!("{}-{part}", self.prefix)
    }

    fn part(&self, part: &str) -> Option<Element> {
        self.doc.get_element_by_id(&self.id(part))
    }

    fn say(&self, text: &str) {
        if let Some(s) = self.part("status") {
            s.set_text_content(Some(text));
        }
    }

    /// Run `pick` on the tab through the worker (quiet: it stays out of the history);
    /// answers the request's id.
    fn run(&self, params: Value, done: impl FnOnce(bool, Value) + 'static) -> u64 {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        self.pending.borrow_mut().insert(id, Box::new(done));
        let sent = self.link.post(&PanelRequest::Run {
            id,
            tab_id: self.tab.get(),
            method: "pick".into(),
            params,
            quiet: true,
        });
        if !sent {
            // No worker to ask right now (it is restarting): said at once, not waited for.
            let done = self.pending.borrow_mut().remove(&id);
            if let Some(done) = done {
                done(
                    false,
                    json!({"code": "EXTENSION_DISCONNECTED", "message": "Kapture's service worker is restarting; try again in a moment"}),
                );
            }
        }
        id
    }

    fn picking(&self, on: bool) {
        if let (Some(start), Some(cancel)) = (self.part("start"), self.part("cancel")) {
            if on {
                let _ = start.set_attribute("disabled", "");
                let _ = cancel.remove_attribute("hidden");
            } else {
                let _ = start.remove_attribute("disabled");
                let _ = cancel.set_attribute("hidden", "");
            }
        }
        let _ = self
            .root
            .set_attribute("data-state", if on { "picking" } else { "idle" });
    }

    fn start(self: &Rc<Self>) {
        if self.picking_id.get().is_some() {
            return;
        }
        self.picking(true);
        if let Some(r) = self.part("result") {
            r.set_inner_html("");
        }
        self.say("Picking: point at an element in the page and click it (Esc in the page, or Cancel here, stops).");
        let p = self.clone();
        let id = self.run(json!({"timeout": PICK_SECS}), move |ok, data| {
            p.done(ok, data)
        });
        // Unless it was answered at once (no worker to ask).
        if self.pending.borrow().contains_key(&id) {
            self.picking_id.set(Some(id));
        }
    }

    fn done(self: &Rc<Self>, ok: bool, data: Value) {
        self.picking_id.set(None);
        if ok {
            self.finish("Picked.");
            self.show(&data);
            return;
        }
        let code = data.get("code").and_then(Value::as_str).unwrap_or("");
        match code {
            "TIMEOUT" => self.finish(&format!(
                "Nothing picked within {PICK_SECS} s; press Pick an element to try again."
            )),
            "APPROVAL_DENIED" => self.finish("Cancelled in the page (Esc): nothing picked."),
            _ => {
                let message = data.get("message").and_then(Value::as_str).unwrap_or("");
                self.finish(&format!("Could not pick: {code} {message}"));
            }
        }
    }

    fn finish(&self, text: &str) {
        self.picking(false);
        self.say(text);
    }

    /// Stop the pick under way: the worker stops its command at once (the tab's queue
    /// removes the picker from the page), and its answer, if one still comes, is not waited for.
    fn cancel(self: &Rc<Self>) {
        let Some(id) = self.picking_id.take() else {
            return;
        };
        self.pending.borrow_mut().remove(&id);
        self.link.post(&PanelRequest::Stop { id });
        self.finish("Cancelled: nothing picked.");
    }

    /// The picked element: its line, its ref and each locator, each with Copy.
    fn show(self: &Rc<Self>, data: &Value) {
        let Some(out) = self.part("result") else {
            return;
        };
        out.set_inner_html("");
        let text = |k: &str| {
            data.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let list = el(&self.doc, "ol", &[("class", "rows pick-items")], "");
        let mut items = vec![
            ("line".to_string(), text("line")),
            ("ref".to_string(), text("ref")),
        ];
        if let Some(url) = data.get("frame_url").and_then(Value::as_str) {
            items.push(("frame".to_string(), url.to_string()));
        }
        for (i, l) in data
            .get("locators")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let by = l
                .pointer("/locator/by")
                .and_then(Value::as_str)
                .unwrap_or("locator");
            let code = l.get("code").and_then(Value::as_str).unwrap_or("");
            items.push((format!("{}. {by}", i + 1), code.to_string()));
        }
        for (n, (label, value)) in items.into_iter().enumerate() {
            let li = el(&self.doc, "li", &[("data-kind", &label)], "");
            li.append_child(&el(&self.doc, "span", &[("class", "k")], &label))
                .ok();
            li.append_child(&el(&self.doc, "code", &[("class", "mono v")], &value))
                .ok();
            let b = el(
                &self.doc,
                "button",
                &[
                    ("type", "button"),
                    ("class", "copy"),
                    ("id", &self.id(&format!("copy-{n}"))),
                    ("aria-label", &format!("Copy {label}")),
                ],
                "Copy",
            );
            let p = self.clone();
            on(&b, "click", move |_| {
                let p = p.clone();
                let (label, value) = (label.clone(), value.clone());
                spawn_local(async move {
                    let via = copy_text(&p.doc, &value).await;
                    let _ = p.root.set_attribute("data-copied", &value);
                    let _ = p.root.set_attribute("data-copied-via", via);
                    p.say(&match via {
                        "failed" => format!("Could not copy {label}."),
                        _ => format!("Copied {label}."),
                    });
                });
            });
            li.append_child(&b).ok();
            list.append_child(&li).ok();
        }
        out.append_child(&list).ok();
    }
}

/// Put `text` on the clipboard: `navigator.clipboard`, else (a DevTools panel's frame may
/// not be allowed it) a selected textarea and `execCommand('copy')`. Answers how.
async fn copy_text(doc: &Document, text: &str) -> &'static str {
    let get = |o: &JsValue, k: &str| js_sys::Reflect::get(o, &JsValue::from_str(k)).ok();
    // Through Reflect: no web-sys feature for one property.
    if let Some(nav) = web_sys::window().and_then(|w| get(&w, "navigator")) {
        let clip = get(&nav, "clipboard").filter(|c| c.is_object());
        let write = clip.as_ref().and_then(|c| get(c, "writeText"));
        if let (Some(clip), Some(write)) = (
            clip,
            write.and_then(|w| w.dyn_into::<js_sys::Function>().ok()),
        ) {
            if let Ok(promise) = write.call1(&clip, &JsValue::from_str(text)) {
                let promise: js_sys::Promise = promise.unchecked_into();
                if wasm_bindgen_futures::JsFuture::from(promise).await.is_ok() {
                    return "clipboard";
                }
            }
        }
    }
    let Some(body) = doc.body() else {
        return "failed";
    };
    let Ok(area) = doc.create_element("textarea") else {
        return "failed";
    };
    let Ok(area) = area.dyn_into::<HtmlTextAreaElement>() else {
        return "failed";
    };
    area.set_value(text);
    let _ = area.set_attribute("style", "position:fixed;left:-9999px;top:0");
    let _ = body.append_child(&area);
    area.select();
    let copied = get(doc, "execCommand")
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .and_then(|f| f.call1(doc, &JsValue::from_str("copy")).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    area.remove();
    if copied {
        "execCommand"
    } else {
        "failed"
    }
}
