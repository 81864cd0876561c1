//! The Kapture panel (DevTools panel, or an extension page with `?tabId=`): connection
//! state, manual commands with forms generated from each tool's schema, results, the tab's
//! console and the command history. Plain DOM through web-sys; it talks only to the
//! service worker, over a `chrome.runtime` port.

mod approvals;
mod arming;
pub mod form;
mod link;
pub mod picker;
pub mod side;

pub(crate) use approvals::{approval_list, start_countdowns};

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde::Deserialize;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{
    Document, Element, HtmlElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement,
};

use crate::chrome;
use crate::ui::{HistoryEntry, PanelEvent, PanelRequest, ServerView, PANEL_PORT};

/// One tool the panel can run: its MCP name, the extension method, and its schema.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolDef {
    pub tool: String,
    pub method: String,
    #[serde(default)]
    pub description: String,
    pub schema: Value,
}

type Callback = Box<dyn FnOnce(bool, Value, f64)>;

struct Ui {
    doc: Document,
    link: Rc<link::Link>,
    tab: Cell<Option<i32>>,
    tools: RefCell<Vec<ToolDef>>,
    next_id: Cell<u64>,
    pending: RefCell<HashMap<u64, Callback>>,
    history: RefCell<Vec<HistoryEntry>>,
    /// The page knows the worker's state (since the last reconnection).
    live: Cell<bool>,
    /// The "Pick an element" component, once a tab is known.
    picker: RefCell<Option<Rc<picker::Picker>>>,
}

pub(crate) fn by_id<T: JsCast>(doc: &Document, id: &str) -> T {
    doc.get_element_by_id(id)
        .and_then(|e| e.dyn_into::<T>().ok())
        .unwrap_or_else(|| wasm_bindgen::throw_str(&format!("panel element #{id} missing")))
}

/// Create `<tag>` with attributes and text.
pub(crate) fn el(doc: &Document, tag: &str, attrs: &[(&str, &str)], text: &str) -> Element {
    let e = doc
        .create_element(tag)
        .unwrap_or_else(|_| wasm_bindgen::throw_str("cannot create element"));
    for (k, v) in attrs {
        let _ = e.set_attribute(k, v);
    }
    if !text.is_empty() {
        e.set_text_content(Some(text));
    }
    e
}

/// Run `f` on every event of `kind` on `target` (for the page's life).
pub(crate) fn on(target: &Element, kind: &str, f: impl FnMut(web_sys::Event) + 'static) {
    let closure = Closure::<dyn FnMut(web_sys::Event)>::new(f);
    let _ = target.add_event_listener_with_callback(kind, closure.as_ref().unchecked_ref());
    closure.forget();
}

pub(crate) fn time_of(ms: f64) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms));
    format!(
        "{:02}:{:02}:{:02}",
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

/// The page's document.
pub(crate) fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .unwrap_or_else(|| wasm_bindgen::throw_str("no document"))
}

/// Where a panel sends what a person asks for (its port to the worker).
pub(crate) type Send = Rc<dyn Fn(PanelRequest)>;

/// The connection pill (`#status`): connected when any server is.
pub(crate) fn show_pill(doc: &Document, servers: &[ServerView]) {
    let connected = servers.iter().any(|s| s.state == "connected");
    let pill: Element = by_id(doc, "status");
    pill.set_text_content(Some(if connected {
        "connected"
    } else {
        "not connected"
    }));
    let _ = pill.set_attribute("data-state", if connected { "connected" } else { "off" });
}

/// Dark when DevTools is, or when the page was opened with `?theme=dark`; otherwise the
/// CSS follows the system's preference.
pub(crate) fn apply_theme(doc: &Document) {
    let dark = chrome::devtools::theme().as_deref() == Some("dark")
        || web_sys::window()
            .and_then(|w| w.location().search().ok())
            .is_some_and(|q| q.contains("theme=dark"));
    if let Some(root) = doc.document_element().filter(|_| dark) {
        let _ = root.class_list().add_1("dark");
    }
}

/// A number from the page's query string (`?tabId=12`).
pub(crate) fn query_number(name: &str) -> Option<i32> {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| web_sys::UrlSearchParams::new_with_str(&q).ok())
        .and_then(|p| p.get(name))
        .and_then(|v| v.parse::<i32>().ok())
}

/// While the worker is away (stopped idle, crashed, updated): "reconnecting" in the
/// connection pill and the banner, and nothing in `main` (nor `extra`, the side panel's
/// Pause) takes a click until the page knows the worker's state again. A page that was
/// never up (just opened) only waits, silently.
pub(crate) fn show_link(doc: &Document, up: bool, extra: &[&str]) {
    let Some(root) = doc.document_element() else {
        return;
    };
    let was_up = root.get_attribute("data-link").as_deref() == Some("up");
    let _ = root.set_attribute("data-link", if up { "up" } else { "down" });
    if !up && was_up {
        let pill: Element = by_id(doc, "status");
        pill.set_text_content(Some("reconnecting…"));
        let _ = pill.set_attribute("data-state", "reconnecting");
    }
    if let Some(banner) = doc.get_element_by_id("link-banner") {
        if !up && was_up {
            let _ = banner.remove_attribute("hidden");
        } else if up {
            let _ = banner.set_attribute("hidden", "");
        }
    }
    let mut parts: Vec<Element> = extra.iter().map(|id| by_id::<Element>(doc, id)).collect();
    if let Ok(Some(main)) = doc.query_selector("main") {
        parts.push(main);
    }
    for part in parts {
        if up {
            let _ = part.remove_attribute("inert");
        } else {
            let _ = part.set_attribute("inert", "");
        }
    }
    if up {
        // Everything is where it is now: measured again (what moved is armed).
        arming::settle(doc);
    }
}

impl Ui {
    fn send(&self, req: &PanelRequest) {
        self.link.post(req);
    }

    /// The worker went away (stopped idle, crashed, updated): commands sent to it get no
    /// answer, so they end now; nothing takes clicks until the state is known again.
    fn down(&self) {
        self.live.set(false);
        show_link(&self.doc, false, &[]);
        let waiting: Vec<Callback> = self.pending.borrow_mut().drain().map(|(_, f)| f).collect();
        for done in waiting {
            done(
                false,
                json!({"code": "EXTENSION_DISCONNECTED", "message": "Kapture's service worker restarted before it answered; run it again"}),
                0.0,
            );
        }
    }

    /// The worker listens (again): ask for this tab's state once more.
    fn up(self: &Rc<Self>) {
        match self.tab.get() {
            Some(tab) => {
                self.use_tab(tab);
                self.load_console();
            }
            None => self.offer_tabs(),
        }
    }

    /// The page knows the state again: the controls take clicks.
    fn known(&self) {
        if self.link.is_up() && !self.live.replace(true) {
            show_link(&self.doc, true, &[]);
        }
    }

    /// Run a method on the panel's tab; `done(ok, data, ms)` gets the answer.
    fn run(
        &self,
        method: &str,
        params: Value,
        quiet: bool,
        done: impl FnOnce(bool, Value, f64) + 'static,
    ) {
        let Some(tab_id) = self.tab.get() else { return };
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        self.pending.borrow_mut().insert(id, Box::new(done));
        let sent = self.link.post(&PanelRequest::Run {
            id,
            tab_id,
            method: method.into(),
            params,
            quiet,
        });
        if !sent {
            let done = self.pending.borrow_mut().remove(&id);
            if let Some(done) = done {
                done(
                    false,
                    json!({"code": "EXTENSION_DISCONNECTED", "message": "Kapture's service worker is restarting; run it again in a moment"}),
                    0.0,
                );
            }
        }
    }

    fn on_event(self: &Rc<Self>, ev: PanelEvent) {
        match ev {
            PanelEvent::State {
                servers,
                problem,
                safe_mode,
            } => {
                let safe: HtmlInputElement = by_id(&self.doc, "safe-mode");
                safe.set_checked(safe_mode);
                // Turning safe mode off loosens: armed; turning it on never waits.
                if safe_mode {
                    arming::guard(&safe, "off");
                } else {
                    arming::unguard(&safe);
                }
                self.show_servers(&servers, problem.as_deref());
                // Without a tab there is nothing more to wait for.
                if self.tab.get().is_none() {
                    self.known();
                }
            }
            PanelEvent::History { entries, .. } => {
                *self.history.borrow_mut() = entries;
                self.show_history();
            }
            PanelEvent::Ran { entry, .. } => {
                crate::ui::push_history(&mut self.history.borrow_mut(), entry);
                self.show_history();
            }
            PanelEvent::Approvals { pending, .. } => {
                self.show_approvals(&pending);
                // The answer to `Subscribe`: this tab's state is known again.
                self.known();
            }
            // The side panel's events: this panel does not `Watch`.
            PanelEvent::Feed { .. }
            | PanelEvent::Step { .. }
            | PanelEvent::Control { .. }
            | PanelEvent::AllApprovals { .. }
            // The options page's: a pairing's outcome, the mode.
            | PanelEvent::Paired { .. }
            | PanelEvent::Mode { .. } => {}
            PanelEvent::Audit { entries } => self.show_audit(&entries),
            PanelEvent::Result { id, ok, data, ms } => {
                let done = self.pending.borrow_mut().remove(&id);
                if let Some(done) = done {
                    done(ok, data, ms);
                }
            }
        }
        // Whatever changed may have moved a control that loosens or grants.
        arming::settle(&self.doc);
    }

    fn show_servers(self: &Rc<Self>, servers: &[ServerView], problem: Option<&str>) {
        let list: Element = by_id(&self.doc, "servers");
        list.set_inner_html("");
        show_pill(&self.doc, servers);
        if servers.is_empty() {
            let why = problem.unwrap_or("no kapture server found yet");
            list.append_child(&el(&self.doc, "li", &[("class", "muted")], why))
                .ok();
        }
        for s in servers {
            let row = el(&self.doc, "li", &[("data-state", &s.state)], "");
            row.append_child(&el(&self.doc, "span", &[("class", "state")], &s.state))
                .ok();
            let text = format!(
                "127.0.0.1:{} · since {}{}",
                s.port,
                time_of(s.since),
                if s.detail.is_empty() {
                    String::new()
                } else {
                    format!(" · {}", s.detail)
                }
            );
            row.append_child(&el(&self.doc, "span", &[], &text)).ok();
            if s.state != "disconnected" {
                let b = el(
                    &self.doc,
                    "button",
                    &[
                        ("type", "button"),
                        ("aria-label", &format!("Disconnect from port {}", s.port)),
                    ],
                    "Disconnect",
                );
                let (ui, port) = (self.clone(), s.port);
                on(&b, "click", move |_| {
                    ui.send(&PanelRequest::Disconnect { port })
                });
                row.append_child(&b).ok();
            }
            if !s.looser.is_empty() {
                row.append_child(&self.looser_rules(s)).ok();
            }
            list.append_child(&row).ok();
        }
    }

    /// The question for a server that asks for looser rules than this browser's defaults:
    /// what it loosens, the answer so far, and Accept / Keep browser defaults.
    fn looser_rules(self: &Rc<Self>, s: &ServerView) -> Element {
        let doc = &self.doc;
        let port = s.port.to_string();
        let state = match s.agreed {
            Some(true) => "accepted",
            Some(false) => "declined",
            None => "asked",
        };
        let block = el(
            doc,
            "div",
            &[
                ("class", "looser"),
                ("data-port", &port),
                ("data-agreed", state),
            ],
            "",
        );
        let lead = match s.agreed {
            Some(true) => "You accepted the looser rules this server asks for:",
            Some(false) => "This server asks for looser rules; this browser's defaults apply:",
            None => "This server asks for looser rules than this browser's defaults (until you accept, the defaults apply):",
        };
        block.append_child(&el(doc, "p", &[], lead)).ok();
        let items = el(doc, "ul", &[], "");
        for line in &s.looser {
            items.append_child(&el(doc, "li", &[], line)).ok();
        }
        block.append_child(&items).ok();
        // The answer names the rule set these lines describe: a server that comes back on
        // this port with other rules just before the click is not agreed to.
        let fingerprint = s.fingerprint.clone().unwrap_or_default();
        let _ = block.set_attribute("data-fingerprint", &fingerprint);
        for (accept, label) in [(true, "Accept"), (false, "Keep browser defaults")] {
            if s.agreed == Some(accept) {
                continue;
            }
            let word = if accept { "accept" } else { "keep" };
            let b = el(
                doc,
                "button",
                &[
                    ("type", "button"),
                    ("id", &format!("agree-{word}-{port}")),
                    ("data-agree", word),
                    ("data-port", &port),
                ],
                label,
            );
            arming::guard(&b, &fingerprint);
            let (ui, port, fingerprint) = (self.clone(), s.port, fingerprint.clone());
            on(&b, "click", move |_| {
                ui.send(&PanelRequest::Agree {
                    port,
                    accept,
                    fingerprint: fingerprint.clone(),
                })
            });
            block.append_child(&b).ok();
        }
        block
    }

    /// Actions waiting for this person's decision (the shared rendering, `approval_list`).
    fn show_approvals(self: &Rc<Self>, pending: &[crate::ui::ApprovalView]) {
        let section: Element = by_id(&self.doc, "approvals");
        let list: Element = by_id(&self.doc, "approval-list");
        if pending.is_empty() {
            let _ = section.set_attribute("hidden", "");
        } else {
            let _ = section.remove_attribute("hidden");
        }
        let ui = self.clone();
        approval_list(&self.doc, &list, pending, Rc::new(move |r| ui.send(&r)));
    }

    /// kapture's journal as it arrives: who, tool, verdict, status, time taken.
    fn show_audit(&self, entries: &[Value]) {
        let body: Element = by_id(&self.doc, "audit-rows");
        body.set_inner_html("");
        let text = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        for e in entries.iter().rev() {
            let tr = el(&self.doc, "tr", &[], "");
            let status = text(e, "status");
            let time = e.get("time").and_then(Value::as_f64).unwrap_or(0.0);
            let ms = e.get("ms").and_then(Value::as_u64).unwrap_or(0);
            for (cell, class) in [
                (time_of(time), ""),
                (text(e, "who"), ""),
                (text(e, "tool"), "mono"),
                (text(e, "verdict"), ""),
                (status.clone(), if status == "ok" { "ok" } else { "bad" }),
                (format!("{ms} ms"), "num"),
            ] {
                tr.append_child(&el(&self.doc, "td", &[("class", class)], &cell))
                    .ok();
            }
            body.append_child(&tr).ok();
        }
    }

    fn show_history(self: &Rc<Self>) {
        let body: Element = by_id(&self.doc, "history-rows");
        body.set_inner_html("");
        for entry in self.history.borrow().iter().rev() {
            let tr = el(&self.doc, "tr", &[], "");
            let args = serde_json::to_string(&entry.params).unwrap_or_default();
            for (text, class) in [
                (time_of(entry.time), ""),
                (entry.by.clone(), ""),
                (entry.method.clone(), "mono"),
                (args, "mono args"),
                (
                    entry.status.clone(),
                    if entry.status == "ok" { "ok" } else { "bad" },
                ),
                (format!("{:.0} ms", entry.ms), "num"),
            ] {
                tr.append_child(&el(&self.doc, "td", &[("class", class)], &text))
                    .ok();
            }
            let td = el(&self.doc, "td", &[], "");
            let again = el(
                &self.doc,
                "button",
                &[
                    ("type", "button"),
                    ("aria-label", &format!("Run {} again", entry.method)),
                ],
                "Re-run",
            );
            let (ui, method, params) = (self.clone(), entry.method.clone(), entry.params.clone());
            on(&again, "click", move |_| {
                let shown = ui.clone();
                let m = method.clone();
                ui.run(&method, params.clone(), false, move |ok, data, ms| {
                    shown.show_result(&m, ok, &data, ms)
                });
            });
            td.append_child(&again).ok();
            tr.append_child(&td).ok();
            body.append_child(&tr).ok();
        }
        let export: Element = by_id(&self.doc, "export");
        let json =
            serde_json::to_string_pretty(&*self.history.borrow()).unwrap_or_else(|_| "[]".into());
        let href = format!(
            "data:application/json;charset=utf-8,{}",
            String::from(js_sys::encode_uri_component(&json))
        );
        let _ = export.set_attribute("href", &href);
    }

    /// Show a command's answer: status and time, then an image, a snapshot or JSON.
    fn show_result(self: &Rc<Self>, method: &str, ok: bool, data: &Value, ms: f64) {
        let status: Element = by_id(&self.doc, "result-status");
        let code = if ok {
            "ok".to_string()
        } else {
            data.get("code")
                .and_then(Value::as_str)
                .unwrap_or("error")
                .to_string()
        };
        status.set_text_content(Some(&format!("{code} · {ms:.0} ms")));
        let _ = status.set_attribute("data-ok", if ok { "true" } else { "false" });
        let out: Element = by_id(&self.doc, "result");
        out.set_inner_html("");
        if let (true, Some(img), Some(mime)) = (
            ok,
            data.get("data").and_then(Value::as_str),
            data.get("mime_type").and_then(Value::as_str),
        ) {
            let src = format!("data:{mime};base64,{img}");
            let thumb = el(
                &self.doc,
                "img",
                &[
                    ("src", &src),
                    ("alt", "Screenshot (select to enlarge)"),
                    ("class", "thumb"),
                    ("tabindex", "0"),
                    ("id", "thumbnail"),
                ],
                "",
            );
            let t = thumb.clone();
            on(&thumb, "click", move |_| {
                let _ = t.class_list().toggle("full");
            });
            out.append_child(&thumb).ok();
            return;
        }
        if ok && (method == "snapshot" || method == "find") {
            let text = data.get("text").and_then(Value::as_str).unwrap_or_default();
            let pre = el(&self.doc, "pre", &[("class", "snapshot")], "");
            for line in text.lines() {
                let row = el(&self.doc, "div", &[], "");
                let mut rest = line;
                while let Some(at) = rest.find("[ref=") {
                    row.append_child(&self.doc.create_text_node(&rest[..at]))
                        .ok();
                    let after = &rest[at + 5..];
                    let end = after.find(']').unwrap_or(after.len());
                    let r = after[..end].to_string();
                    let b = el(
                        &self.doc,
                        "button",
                        &[
                            ("type", "button"),
                            ("class", "ref"),
                            ("title", "Highlight on the page"),
                        ],
                        &r,
                    );
                    let ui = self.clone();
                    on(&b, "click", move |_| {
                        ui.run("highlight", json!({"ref": r}), true, |_, _, _| {})
                    });
                    row.append_child(&b).ok();
                    rest = &after[(end + 1).min(after.len())..];
                }
                row.append_child(&self.doc.create_text_node(rest)).ok();
                pre.append_child(&row).ok();
            }
            out.append_child(&pre).ok();
            return;
        }
        let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
        out.append_child(&el(&self.doc, "pre", &[("class", "json")], &pretty))
            .ok();
    }

    fn load_console(self: &Rc<Self>) {
        let level: HtmlSelectElement = by_id(&self.doc, "console-level");
        let max: HtmlInputElement = by_id(&self.doc, "console-max");
        let mut params = json!({"max": max.value().parse::<u32>().unwrap_or(50)});
        if !level.value().is_empty() {
            params["level"] = json!(level.value());
        }
        let ui = self.clone();
        self.run("console_messages", params, true, move |ok, data, _| {
            let list: Element = by_id(&ui.doc, "console-lines");
            list.set_inner_html("");
            let messages = data
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if !ok || messages.is_empty() {
                list.append_child(&el(
                    &ui.doc,
                    "li",
                    &[("class", "muted")],
                    "No console messages",
                ))
                .ok();
            }
            for m in messages {
                let lvl = m.get("level").and_then(Value::as_str).unwrap_or("info");
                let li = el(&ui.doc, "li", &[("data-level", lvl)], "");
                li.append_child(&el(&ui.doc, "span", &[("class", "lvl")], lvl))
                    .ok();
                li.append_child(&el(
                    &ui.doc,
                    "span",
                    &[],
                    m.get("text").and_then(Value::as_str).unwrap_or(""),
                ))
                .ok();
                list.append_child(&li).ok();
            }
        });
    }

    fn select_tool(self: &Rc<Self>) {
        let picker: HtmlSelectElement = by_id(&self.doc, "tool");
        let tools = self.tools.borrow();
        let Some(tool) = tools.iter().find(|t| t.tool == picker.value()) else {
            return;
        };
        by_id::<Element>(&self.doc, "tool-description").set_text_content(Some(&tool.description));
        let fields: Element = by_id(&self.doc, "fields");
        form::render(&self.doc, &fields, &tool.schema);
        let raw: HtmlTextAreaElement = by_id(&self.doc, "raw");
        raw.set_value("{}");
    }

    fn execute(self: &Rc<Self>) {
        let picker: HtmlSelectElement = by_id(&self.doc, "tool");
        let Some(tool) = self
            .tools
            .borrow()
            .iter()
            .find(|t| t.tool == picker.value())
            .cloned()
        else {
            return;
        };
        let use_raw: HtmlInputElement = by_id(&self.doc, "use-raw");
        let params = if use_raw.checked() {
            let raw: HtmlTextAreaElement = by_id(&self.doc, "raw");
            match serde_json::from_str::<Value>(&raw.value()) {
                Ok(v) => v,
                Err(e) => {
                    self.show_result(&tool.method, false, &json!({"code": "BAD_ARGS", "message": format!("the JSON does not parse: {e}")}), 0.0);
                    return;
                }
            }
        } else {
            match form::collect(&self.doc, &tool.schema) {
                Ok(v) => v,
                Err(why) => {
                    self.show_result(
                        &tool.method,
                        false,
                        &json!({"code": "BAD_ARGS", "message": why}),
                        0.0,
                    );
                    return;
                }
            }
        };
        by_id::<Element>(&self.doc, "result-status").set_text_content(Some("running…"));
        let ui = self.clone();
        let method = tool.method.clone();
        self.run(&tool.method, params, false, move |ok, data, ms| {
            ui.show_result(&method, ok, &data, ms)
        });
    }

    /// Point the panel at a tab: subscribe and show what it is.
    fn use_tab(self: &Rc<Self>, tab: i32) {
        let moved = self.tab.replace(Some(tab)) != Some(tab);
        let mounted = self.picker.borrow().clone();
        match mounted {
            // Another tab: a pick under way ends (the same tab asked about again does not).
            Some(p) if moved => p.set_tab(tab),
            Some(_) => {}
            None => *self.picker.borrow_mut() = picker::mount("picker", tab),
        }
        self.send(&PanelRequest::Subscribe { tab_id: tab });
        let ui = self.clone();
        self.run("tabs.list", json!({}), true, move |_, data, _| {
            let info = data.as_array().and_then(|tabs| {
                tabs.iter()
                    .find(|t| t.get("tab_id").and_then(Value::as_i64) == Some(tab.into()))
                    .cloned()
            });
            let text = match info {
                Some(t) => format!(
                    "Tab {tab} · {} · {}",
                    t.get("title").and_then(Value::as_str).unwrap_or(""),
                    t.get("url").and_then(Value::as_str).unwrap_or("")
                ),
                None => format!("Tab {tab} (not found)"),
            };
            by_id::<Element>(&ui.doc, "tab-info").set_text_content(Some(&text));
        });
    }

    /// Without a tab: list the tabs to pick one (uses any tab id the worker knows).
    fn offer_tabs(self: &Rc<Self>) {
        let ui = self.clone();
        // tabs.list needs no particular tab; the panel's own tab is as good as any.
        self.tab.set(Some(0));
        self.run("tabs.list", json!({}), true, move |_, data, _| {
            ui.tab.set(None);
            let picker: HtmlSelectElement = by_id(&ui.doc, "tab-picker");
            picker.set_inner_html("");
            picker
                .append_child(&el(&ui.doc, "option", &[("value", "")], "Choose a tab…"))
                .ok();
            for t in data.as_array().cloned().unwrap_or_default() {
                let id = t
                    .get("tab_id")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    .to_string();
                let label = format!(
                    "{} — {}",
                    t.get("title").and_then(Value::as_str).unwrap_or(""),
                    t.get("url").and_then(Value::as_str).unwrap_or("")
                );
                picker
                    .append_child(&el(&ui.doc, "option", &[("value", &id)], &label))
                    .ok();
            }
            by_id::<Element>(&ui.doc, "tab-choice")
                .remove_attribute("hidden")
                .ok();
            ui.known();
        });
    }
}

async fn fetch_tools() -> Vec<ToolDef> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let Ok(resp) = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str("tools.json")).await
    else {
        return Vec::new();
    };
    let resp: web_sys::Response = resp.unchecked_into();
    let Ok(json) = resp.json() else {
        return Vec::new();
    };
    let Ok(value) = wasm_bindgen_futures::JsFuture::from(json).await else {
        return Vec::new();
    };
    chrome::from_js(value).unwrap_or_default()
}

/// The panel page; the JS glue creates it once.
#[wasm_bindgen]
pub struct PanelUi {
    ui: Rc<Ui>,
}

#[wasm_bindgen]
impl PanelUi {
    #[wasm_bindgen(constructor)]
    pub fn new() -> PanelUi {
        let ui = Rc::new(Ui {
            doc: document(),
            link: link::Link::open(PANEL_PORT),
            tab: Cell::new(None),
            tools: RefCell::default(),
            next_id: Cell::new(0),
            pending: RefCell::default(),
            history: RefCell::default(),
            live: Cell::new(false),
            picker: RefCell::default(),
        });
        PanelUi { ui }
    }

    /// Wire the controls, find the tab, load the tools.
    pub fn start(&self) {
        let ui = self.ui.clone();
        let doc = ui.doc.clone();
        apply_theme(&doc);
        start_countdowns(&doc);
        arming::install(&doc);
        // Nothing takes clicks before the worker's state is known.
        show_link(&doc, false, &[]);
        let listener = Rc::downgrade(&ui);
        ui.link.on_message(move |msg| {
            if let (Some(ui), Ok(ev)) = (listener.upgrade(), chrome::from_js::<PanelEvent>(msg)) {
                ui.on_event(ev);
            }
        });
        let u = Rc::downgrade(&ui);
        ui.link.on_up(move || {
            if let Some(ui) = u.upgrade() {
                ui.up();
            }
        });
        let u = Rc::downgrade(&ui);
        ui.link.on_down(move || {
            if let Some(ui) = u.upgrade() {
                ui.down();
            }
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "connect"), "click", move |_| {
            u.send(&PanelRequest::Connect)
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "record"), "click", move |_| {
            let status: Element = by_id(&u.doc, "record-status");
            status.set_text_content(Some("Opening the recorder…"));
            u.run(
                "recorder",
                json!({"action": "enable"}),
                true,
                move |ok, data, _| {
                    let text = if ok {
                        "The recorder is in the page: press Start there, do the flow, then Stop & Save.".to_string()
                    } else {
                        format!(
                            "Could not open the recorder: {}",
                            data.get("message").and_then(Value::as_str).unwrap_or("unknown error")
                        )
                    };
                    status.set_text_content(Some(&text));
                },
            );
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "safe-mode"), "change", move |_| {
            let safe: HtmlInputElement = by_id(&u.doc, "safe-mode");
            let on = safe.checked();
            if on {
                // "Off" is armed from the moment it shows, before the worker confirms.
                arming::guard(&safe, "off");
                arming::settle(&u.doc);
            }
            u.send(&PanelRequest::SafeMode { on })
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "tool"), "change", move |_| {
            u.select_tool()
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "run-form"), "submit", move |e| {
            e.prevent_default();
            u.execute();
        });
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "fields"), "input", move |_| {
            if let Ok(v) = form::collect(
                &u.doc,
                &u.tools
                    .borrow()
                    .iter()
                    .find(|t| t.tool == by_id::<HtmlSelectElement>(&u.doc, "tool").value())
                    .map(|t| t.schema.clone())
                    .unwrap_or(Value::Null),
            ) {
                by_id::<HtmlTextAreaElement>(&u.doc, "raw")
                    .set_value(&serde_json::to_string_pretty(&v).unwrap_or_default());
            }
        });
        let u = ui.clone();
        on(
            &by_id::<Element>(&doc, "console-refresh"),
            "click",
            move |_| u.load_console(),
        );
        let u = ui.clone();
        on(
            &by_id::<Element>(&doc, "history-clear"),
            "click",
            move |_| {
                if let Some(tab_id) = u.tab.get() {
                    u.send(&PanelRequest::ClearHistory { tab_id });
                }
            },
        );
        let u = ui.clone();
        on(&by_id::<Element>(&doc, "tab-picker"), "change", move |_| {
            let picker: HtmlSelectElement = by_id(&u.doc, "tab-picker");
            if let Ok(tab) = picker.value().parse::<i32>() {
                u.use_tab(tab);
                u.load_console();
            }
        });
        // The tab is asked about once the worker speaks (`up`): a request sent while a
        // stopped worker starts may be lost.
        let from_query = query_number("tabId");
        if let Some(tab) = chrome::devtools::inspected_tab().or(from_query) {
            ui.tab.set(Some(tab));
            *ui.picker.borrow_mut() = picker::mount("picker", tab);
        }
        let u = ui.clone();
        spawn_local(async move {
            let tools = fetch_tools().await;
            let picker: HtmlSelectElement = by_id(&u.doc, "tool");
            for t in &tools {
                picker
                    .append_child(&el(&u.doc, "option", &[("value", &t.tool)], &t.tool))
                    .ok();
            }
            *u.tools.borrow_mut() = tools;
            u.select_tool();
        });
        let _ = doc.body().map(|b| b.dyn_into::<HtmlElement>());
    }
}

impl Default for PanelUi {
    fn default() -> Self {
        Self::new()
    }
}

/// The DevTools page: add the "Kapture" panel for the inspected tab.
#[wasm_bindgen]
pub fn devtools_start() {
    let tab = chrome::devtools::inspected_tab().unwrap_or(0);
    chrome::devtools::create_panel(
        "Kapture",
        "icons/32.png",
        &format!("panel.html?tabId={tab}"),
    );
}
