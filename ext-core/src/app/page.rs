//! The Test Web App page (wasm32): DOM and fetch only. Requests come from `client`, answers
//! are read by `client`/`answer`, calls are kept by `history`; forms are the panel's.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    Document, Element, HtmlButtonElement, HtmlDialogElement, HtmlInputElement, HtmlSelectElement,
    HtmlTextAreaElement,
};

use super::answer::{self, Block, Shown, Tool};
use super::client::{self, Client, ClientError, HttpRequest, ServerInfo};
use super::history::History;
use crate::panel::form;
use crate::panel::{by_id, el, on, time_of};

/// Where the token waits while the tab lives (never in the address bar, never on disk).
const TOKEN_KEY: &str = "kapture-app-token";

struct App {
    doc: Document,
    /// `<origin>/mcp`: the page is served by the kapture it talks to.
    endpoint: String,
    client: RefCell<Option<Client>>,
    server: RefCell<ServerInfo>,
    tools: RefCell<Vec<Tool>>,
    selected: RefCell<Option<Tool>>,
    /// Arguments from the JSON editor that the form has no field for.
    extras: RefCell<Map<String, Value>>,
    json_mode: Cell<bool>,
    history: RefCell<History>,
    /// The page left with a session open (and ended it): coming back from the
    /// back-forward cache connects anew.
    left_connected: Cell<bool>,
}

/// Where the page keeps its history (browser storage of kapture's own address).
const HISTORY_KEY: &str = "kapture-app-history";

fn now() -> f64 {
    js_sys::Date::now()
}

fn text_of(v: &JsValue) -> String {
    v.as_string().unwrap_or_else(|| format!("{v:?}"))
}

/// The fetch options of one request.
fn request_init(req: &HttpRequest) -> Result<web_sys::RequestInit, ClientError> {
    let headers = web_sys::Headers::new().map_err(|e| ClientError::Network(text_of(&e)))?;
    for (k, v) in &req.headers {
        headers
            .append(k, v)
            .map_err(|e| ClientError::Network(text_of(&e)))?;
    }
    let init = web_sys::RequestInit::new();
    init.set_method(req.method);
    init.set_headers(&headers);
    if let Some(body) = &req.body {
        init.set_body(&JsValue::from_str(body));
    }
    Ok(init)
}

/// Perform one request; answers status, Content-Type, `Mcp-Session-Id` and the body.
async fn perform(
    endpoint: &str,
    req: &HttpRequest,
) -> Result<(u16, String, Option<String>, String), ClientError> {
    let window = web_sys::window().ok_or_else(|| ClientError::Network("no window".into()))?;
    let init = request_init(req)?;
    let resp = JsFuture::from(window.fetch_with_str_and_init(endpoint, &init))
        .await
        .map_err(|e| ClientError::Network(text_of(&e)))?;
    let resp: web_sys::Response = resp.unchecked_into();
    let h = resp.headers();
    let ctype = h.get("content-type").ok().flatten().unwrap_or_default();
    let session = h.get("mcp-session-id").ok().flatten();
    let body = match resp.text() {
        Ok(p) => JsFuture::from(p)
            .await
            .map(|v| v.as_string().unwrap_or_default())
            .map_err(|e| ClientError::Network(text_of(&e)))?,
        Err(e) => return Err(ClientError::Network(text_of(&e))),
    };
    Ok((resp.status(), ctype, session, body))
}

impl App {
    fn show(&self, id: &str, visible: bool) {
        let e: Element = by_id(&self.doc, id);
        if visible {
            let _ = e.remove_attribute("hidden");
        } else {
            let _ = e.set_attribute("hidden", "");
        }
    }

    fn set_text(&self, id: &str, text: &str) {
        by_id::<Element>(&self.doc, id).set_text_content(Some(text));
    }

    /// One JSON-RPC request on the session.
    async fn call(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let (id, req) = match self.client.borrow_mut().as_mut() {
            Some(c) => c.request(method, params),
            None => return Err(ClientError::Network("not connected".into())),
        };
        let (status, ctype, _, body) = perform(&self.endpoint, &req).await?;
        client::read_answer(status, &ctype, &body, id)
    }

    /// `tools/call`, read for showing.
    async fn tool(&self, name: &str, args: Value) -> Result<Shown, ClientError> {
        let result = self
            .call("tools/call", json!({"name": name, "arguments": args}))
            .await?;
        Ok(answer::read_result(&result))
    }

    fn set_state(&self, state: &str, text: &str) {
        let pill: Element = by_id(&self.doc, "status");
        pill.set_text_content(Some(text));
        let _ = pill.set_attribute("data-state", state);
    }

    async fn connect(self: &Rc<Self>, token: String) {
        self.show("connect-error", false);
        if token.trim().is_empty() {
            self.connect_failed("Paste the token from the app link kapture printed.");
            return;
        }
        self.set_state("busy", "connecting…");
        let mut c = Client::new(&token);
        let (id, req) = c.initialize();
        let info = match perform(&self.endpoint, &req).await {
            Ok((status, ctype, session, body)) => client::read_answer(status, &ctype, &body, id)
                .map(|r| c.initialized(session.as_deref(), &r)),
            Err(e) => Err(e),
        };
        let info = match info {
            Ok(info) => info,
            Err(e) => {
                self.connect_failed(&e.to_string());
                return;
            }
        };
        // The notification is answered 202 with no body; a failure here shows on the next call.
        let _ = perform(&self.endpoint, &c.notification("notifications/initialized")).await;
        if let Some(store) = web_sys::window().and_then(|w| w.session_storage().ok().flatten()) {
            let _ = store.set_item(TOKEN_KEY, token.trim());
        }
        let session = c
            .session_id()
            .unwrap_or("(none: stateless server)")
            .to_string();
        *self.client.borrow_mut() = Some(c);
        *self.server.borrow_mut() = info.clone();
        self.set_state("connected", "connected");
        self.show("connect-section", false);
        self.show("disconnect", true);
        self.show("app-body", true);
        self.set_text(
            "server-name",
            format!("{} {}", info.name, info.version).trim(),
        );
        self.set_text("server-protocol", &info.protocol);
        self.set_text("session-id", &session);
        self.set_text("endpoint-shown", &self.endpoint);
        self.load_tools().await;
        self.load_status().await;
        self.load_tabs().await;
    }

    fn connect_failed(&self, why: &str) {
        self.set_state("off", "not connected");
        self.set_text("connect-error", why);
        self.show("connect-error", true);
        self.show("connect-section", true);
    }

    async fn disconnect(self: &Rc<Self>) {
        let req = self.client.borrow_mut().as_mut().and_then(Client::end);
        if let Some(req) = req {
            // Whatever the server says, this page's session is over.
            let _ = perform(&self.endpoint, &req).await;
        }
        *self.client.borrow_mut() = None;
        self.set_state("off", "disconnected");
        self.show("app-body", false);
        self.show("disconnect", false);
        self.show("connect-section", true);
    }

    /// The page is going away (closed, reloaded, navigated, or into the back-forward
    /// cache): end its session now, not when kapture's idle timeout would. `keepalive` lets
    /// the DELETE outlive the page; nothing of the session is kept for a reload.
    fn end_on_leave(&self) {
        let req = self.client.borrow_mut().as_mut().and_then(Client::end);
        *self.client.borrow_mut() = None;
        let Some(req) = req else {
            return;
        };
        self.left_connected.set(true);
        let (Some(window), Ok(init)) = (web_sys::window(), request_init(&req)) else {
            return;
        };
        // web-sys has no setter for it; RequestInit is a plain dictionary.
        let _ = js_sys::Reflect::set(&init, &"keepalive".into(), &JsValue::TRUE);
        let _ = window.fetch_with_str_and_init(&self.endpoint, &init);
        self.set_state("off", "disconnected");
        self.show("app-body", false);
        self.show("disconnect", false);
        self.show("connect-section", true);
    }

    async fn load_tools(self: &Rc<Self>) {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..answer::MAX_TOOL_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            match self.call("tools/list", params).await {
                Ok(result) => {
                    let (tools, next) = answer::tools_page(&result);
                    all.extend(tools);
                    match next {
                        Some(n) => cursor = Some(n),
                        None => break,
                    }
                }
                Err(e) => {
                    self.set_text("tool-count", &format!("(could not list: {e})"));
                    return;
                }
            }
        }
        *self.tools.borrow_mut() = all;
        self.show_tools();
        let first = self.tools.borrow().first().map(|t| t.name.clone());
        if self.selected.borrow().is_none() {
            if let Some(name) = first {
                self.select_tool(&name);
            }
        }
    }

    fn show_tools(self: &Rc<Self>) {
        let filter = by_id::<HtmlInputElement>(&self.doc, "tool-filter")
            .value()
            .to_lowercase();
        let list: Element = by_id(&self.doc, "tool-list");
        list.set_inner_html("");
        let tools = self.tools.borrow();
        let selected = self.selected.borrow().as_ref().map(|t| t.name.clone());
        let mut shown = 0;
        for t in tools
            .iter()
            .filter(|t| t.name.to_lowercase().contains(&filter))
        {
            shown += 1;
            let li = el(&self.doc, "li", &[], "");
            let mut attrs = vec![
                ("type", "button"),
                ("class", "tool"),
                ("data-tool", t.name.as_str()),
            ];
            if selected.as_deref() == Some(t.name.as_str()) {
                attrs.push(("aria-current", "true"));
            }
            let b = el(&self.doc, "button", &attrs, &t.name);
            let (app, name) = (self.clone(), t.name.clone());
            on(&b, "click", move |_| app.select_tool(&name));
            li.append_child(&b).ok();
            if t.is_scenario() {
                li.append_child(&el(&self.doc, "span", &[("class", "badge")], "scenario"))
                    .ok();
            }
            let first = t.description.split(". ").next().unwrap_or("");
            li.append_child(&el(&self.doc, "span", &[("class", "muted desc")], first))
                .ok();
            list.append_child(&li).ok();
        }
        let count = if shown == tools.len() {
            format!("({})", tools.len())
        } else {
            format!("({shown} of {})", tools.len())
        };
        self.set_text("tool-count", &count);
    }

    async fn load_status(self: &Rc<Self>) {
        let text = match self.tool("browser_status", json!({})).await {
            Ok(shown) => blocks_text(&shown),
            Err(e) => e.to_string(),
        };
        self.set_text("browser-status", &text);
    }

    async fn load_tabs(self: &Rc<Self>) {
        let picker: HtmlSelectElement = by_id(&self.doc, "tab-picker");
        let before = picker.value();
        let tabs = match self.tool("browser_tabs", json!({"action": "list"})).await {
            Ok(shown) if shown.ok() => answer::tabs_of(&blocks_text(&shown)),
            _ => Vec::new(),
        };
        picker.set_inner_html("");
        picker
            .append_child(&el(
                &self.doc,
                "option",
                &[("value", "")],
                "Session's current tab (no tabId)",
            ))
            .ok();
        for t in &tabs {
            let id = t.id.to_string();
            let label = format!(
                "tab {}{} · {}",
                t.id,
                if t.current { " (current)" } else { "" },
                t.label
            );
            picker
                .append_child(&el(&self.doc, "option", &[("value", &id)], &label))
                .ok();
        }
        if tabs.iter().any(|t| t.id.to_string() == before) {
            picker.set_value(&before);
        }
        self.set_text("tab-count", &format!("{} open", tabs.len()));
    }

    fn picked_tab(&self) -> Option<i64> {
        by_id::<HtmlSelectElement>(&self.doc, "tab-picker")
            .value()
            .parse()
            .ok()
    }

    fn select_tool(self: &Rc<Self>, name: &str) {
        let Some(tool) = self.tools.borrow().iter().find(|t| t.name == name).cloned() else {
            return;
        };
        self.set_text("tool-name", &tool.name);
        self.set_text("tool-description", &tool.description);
        let fields: Element = by_id(&self.doc, "fields");
        form::render(&self.doc, &fields, &tool.schema);
        self.extras.borrow_mut().clear();
        let mut args = json!({});
        if let (true, Some(tab)) = (tool.takes_tab(), self.picked_tab()) {
            args["tabId"] = json!(tab);
        }
        form::fill(&self.doc, &tool.schema, &args);
        self.set_json(&args);
        *self.selected.borrow_mut() = Some(tool);
        self.show("args-error", false);
        self.show_tools();
    }

    fn set_json(&self, args: &Value) {
        by_id::<HtmlTextAreaElement>(&self.doc, "args-json")
            .set_value(&serde_json::to_string_pretty(args).unwrap_or_else(|_| "{}".into()));
    }

    /// The arguments as the form shows them, with what only the JSON editor could hold.
    fn form_args(&self, schema: &Value) -> Result<Value, String> {
        let mut v = form::collect(&self.doc, schema)?;
        if let Some(m) = v.as_object_mut() {
            for (k, x) in self.extras.borrow().iter() {
                m.entry(k.clone()).or_insert_with(|| x.clone());
            }
        }
        Ok(v)
    }

    /// The JSON editor's arguments, valid JSON and fit for the selected tool's schema.
    fn json_args(&self) -> Result<Value, String> {
        let text = by_id::<HtmlTextAreaElement>(&self.doc, "args-json").value();
        let v = match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Err("the arguments must be a JSON object, e.g. {}".into()),
            Err(e) => return Err(format!("the arguments are not valid JSON: {e}")),
        };
        if let Some(tool) = self.selected.borrow().as_ref() {
            let problems = super::validate::problems(&tool.schema, &v);
            if !problems.is_empty() {
                return Err(format!(
                    "the arguments do not fit {}: {}",
                    tool.name,
                    problems.join("; ")
                ));
            }
        }
        Ok(v)
    }

    /// Keep the history in the browser's storage for this kapture's address, so a reload
    /// (or a restart of kapture on the same port) shows it again.
    fn save_history(&self) {
        if let Some(store) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
            let _ = store.set_item(HISTORY_KEY, &self.history.borrow().stored().to_string());
        }
    }

    fn load_history(&self) {
        let stored = web_sys::window()
            .and_then(|w| w.local_storage().ok().flatten())
            .and_then(|s| s.get_item(HISTORY_KEY).ok().flatten())
            .and_then(|text| serde_json::from_str::<Value>(&text).ok());
        if let Some(stored) = stored {
            *self.history.borrow_mut() = History::restore(&stored);
        }
    }

    /// The form changed: the JSON editor follows.
    fn form_changed(&self) {
        let Some(schema) = self.selected.borrow().as_ref().map(|t| t.schema.clone()) else {
            return;
        };
        match self.form_args(&schema) {
            Ok(v) => {
                self.set_json(&v);
                self.show("args-error", false);
            }
            Err(why) => self.args_error(&why),
        }
    }

    /// The JSON editor changed: the form follows when the text is a valid object.
    fn json_changed(&self) {
        let Some(schema) = self.selected.borrow().as_ref().map(|t| t.schema.clone()) else {
            return;
        };
        match self.json_args() {
            Ok(v) => {
                *self.extras.borrow_mut() = form::extras(&schema, &v);
                form::fill(&self.doc, &schema, &v);
                self.show("args-error", false);
            }
            Err(why) => self.args_error(&why),
        }
    }

    fn args_error(&self, why: &str) {
        self.set_text("args-error", why);
        self.show("args-error", true);
    }

    fn set_mode(&self, json_mode: bool) {
        self.json_mode.set(json_mode);
        self.show("fields", !json_mode);
        self.show("json-editor", json_mode);
        for (id, on) in [("mode-form", !json_mode), ("mode-json", json_mode)] {
            let _ = by_id::<Element>(&self.doc, id)
                .set_attribute("aria-selected", if on { "true" } else { "false" });
        }
    }

    fn tab_picked(&self) {
        let Some(tool) = self.selected.borrow().clone() else {
            return;
        };
        if !tool.takes_tab() {
            return;
        }
        let args = if self.json_mode.get() {
            self.json_args()
        } else {
            self.form_args(&tool.schema)
        };
        let Ok(mut args) = args else { return };
        match self.picked_tab() {
            Some(tab) => args["tabId"] = json!(tab),
            None => {
                if let Some(m) = args.as_object_mut() {
                    m.remove("tabId");
                }
            }
        }
        form::fill(&self.doc, &tool.schema, &args);
        self.set_json(&args);
    }

    fn execute(self: &Rc<Self>) {
        let Some(tool) = self.selected.borrow().clone() else {
            return;
        };
        let args = if self.json_mode.get() {
            self.json_args()
        } else {
            self.form_args(&tool.schema)
        };
        match args {
            Ok(args) => {
                self.show("args-error", false);
                let app = self.clone();
                spawn_local(async move { app.run(&tool.name, args).await });
            }
            Err(why) => self.args_error(&why),
        }
    }

    /// Run a tool, time it, show the answer and keep it in the history.
    async fn run(self: &Rc<Self>, name: &str, args: Value) {
        let button: HtmlButtonElement = by_id(&self.doc, "execute");
        button.set_disabled(true);
        let status: Element = by_id(&self.doc, "result-status");
        status.set_text_content(Some(&format!("running {name}…")));
        let _ = status.set_attribute("data-ok", "");
        let started = now();
        let outcome = self.tool(name, args.clone()).await;
        let ms = (now() - started).round();
        button.set_disabled(false);
        let (state, summary) = match &outcome {
            Ok(shown) => (shown.status(), shown.summary()),
            Err(e) => (failure_word(e).to_string(), e.to_string()),
        };
        self.history
            .borrow_mut()
            .push(name, args, started, ms, &state, &summary);
        self.save_history();
        self.show_history();
        self.show_result(name, ms, &outcome);
        if matches!(&outcome, Err(ClientError::SessionGone)) {
            self.connect_failed(&ClientError::SessionGone.to_string());
        }
        // Tab titles and the tab set change with these.
        if outcome.is_ok() && (name == "browser_tabs" || name == "browser_navigate") {
            self.load_tabs().await;
        }
    }

    fn show_result(self: &Rc<Self>, name: &str, ms: f64, outcome: &Result<Shown, ClientError>) {
        let status: Element = by_id(&self.doc, "result-status");
        let out: Element = by_id(&self.doc, "result");
        out.set_inner_html("");
        let (ok, word) = match outcome {
            Ok(s) => (s.ok(), s.status()),
            Err(e) => (false, failure_word(e).to_string()),
        };
        status.set_text_content(Some(&format!("{name} · {word} · {ms:.0} ms")));
        let _ = status.set_attribute("data-ok", if ok { "true" } else { "false" });
        let shown = match outcome {
            Ok(s) => s,
            Err(e) => {
                out.append_child(&self.error_box(failure_word(e), &e.to_string(), hint_for(e)))
                    .ok();
                return;
            }
        };
        if let Some(f) = &shown.failure {
            out.append_child(&self.error_box(&f.code, &f.message, &f.hint))
                .ok();
        }
        let mut shot = 0;
        for b in &shown.blocks {
            match b {
                // An error's text is already in the box.
                Block::Text(_) if shown.failure.is_some() => {}
                Block::Text(t) => {
                    out.append_child(&el(&self.doc, "pre", &[("class", "text")], t))
                        .ok();
                }
                Block::Image { mime, data } => {
                    shot += 1;
                    let src = format!("data:{mime};base64,{data}");
                    let thumb = el(
                        &self.doc,
                        "img",
                        &[
                            ("src", &src),
                            (
                                "alt",
                                &format!("Screenshot {shot} (select to open full size)"),
                            ),
                            ("class", "thumb"),
                            ("tabindex", "0"),
                            ("role", "button"),
                        ],
                        "",
                    );
                    let app = self.clone();
                    on(&thumb, "click", move |_| app.open_image(&src));
                    out.append_child(&thumb).ok();
                }
                Block::Other(v) => {
                    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
                    out.append_child(&el(&self.doc, "pre", &[("class", "json")], &pretty))
                        .ok();
                }
            }
        }
    }

    fn error_box(&self, code: &str, message: &str, hint: &str) -> Element {
        let b = el(
            &self.doc,
            "div",
            &[("class", "error-box"), ("role", "alert")],
            "",
        );
        b.append_child(&el(&self.doc, "strong", &[("class", "code")], code))
            .ok();
        b.append_child(&el(&self.doc, "p", &[("class", "message")], message))
            .ok();
        if !hint.is_empty() {
            b.append_child(&el(
                &self.doc,
                "p",
                &[("class", "hint")],
                &format!("Hint: {hint}"),
            ))
            .ok();
        }
        b
    }

    fn open_image(&self, src: &str) {
        let _ = by_id::<Element>(&self.doc, "viewer-img").set_attribute("src", src);
        let _ = by_id::<HtmlDialogElement>(&self.doc, "viewer").show_modal();
    }

    fn show_history(self: &Rc<Self>) {
        let body: Element = by_id(&self.doc, "history-rows");
        body.set_inner_html("");
        let history = self.history.borrow();
        self.set_text("history-count", &format!("({})", history.len()));
        for call in history.newest_first() {
            let tr = el(&self.doc, "tr", &[("data-seq", &call.seq.to_string())], "");
            let args = serde_json::to_string(&call.args).unwrap_or_default();
            for (text, class) in [
                (time_of(call.started), ""),
                (call.seq.to_string(), "num"),
                (call.tool.clone(), "mono"),
                (args, "mono args"),
                (call.status.clone(), if call.ok() { "ok" } else { "bad" }),
                (format!("{:.0} ms", call.ms), "num"),
            ] {
                tr.append_child(&el(&self.doc, "td", &[("class", class)], &text))
                    .ok();
            }
            let _ = tr.set_attribute("title", &call.summary);
            let td = el(&self.doc, "td", &[], "");
            let again = el(
                &self.doc,
                "button",
                &[
                    ("type", "button"),
                    ("class", "rerun"),
                    (
                        "aria-label",
                        &format!("Run call {} ({}) again", call.seq, call.tool),
                    ),
                ],
                "Re-run",
            );
            if call.masked {
                // Its secrets or typed text were not kept: it cannot run again as it was.
                let _ = again.set_attribute("disabled", "");
                let _ = again.set_attribute(
                    "title",
                    "Its typed text or secrets are not kept across reloads",
                );
            }
            let (app, seq) = (self.clone(), call.seq);
            on(&again, "click", move |_| {
                let call = app.history.borrow().get(seq).cloned();
                if let Some(call) = call {
                    let app = app.clone();
                    spawn_local(async move { app.run(&call.tool, call.args).await });
                }
            });
            td.append_child(&again).ok();
            tr.append_child(&td).ok();
            body.append_child(&tr).ok();
        }
    }

    /// Download the history as `kapture-app-history.json`.
    fn export(&self) {
        let doc = self
            .history
            .borrow()
            .export(&self.server.borrow(), &self.endpoint, now());
        let text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into());
        let parts = js_sys::Array::of1(&JsValue::from_str(&text));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("application/json");
        let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
            return;
        };
        let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
            return;
        };
        let a = el(
            &self.doc,
            "a",
            &[("href", &url), ("download", "kapture-app-history.json")],
            "",
        );
        if let Some(body) = self.doc.body() {
            body.append_child(&a).ok();
            a.unchecked_ref::<web_sys::HtmlElement>().click();
            body.remove_child(&a).ok();
        }
        // Revoked later: the download reads the blob after this handler returns.
        spawn_local(async move {
            crate::platform::sleep(std::time::Duration::from_secs(60)).await;
            let _ = web_sys::Url::revoke_object_url(&url);
        });
    }
}

/// The status word a failure before any tool result gets.
fn failure_word(e: &ClientError) -> &'static str {
    match e {
        ClientError::Unauthorized { .. } => "UNAUTHORIZED",
        ClientError::SessionGone => "SESSION_GONE",
        ClientError::Http { .. } => "HTTP_ERROR",
        ClientError::Rpc { .. } => "RPC_ERROR",
        ClientError::NoAnswer { .. } | ClientError::BadAnswer(_) => "BAD_ANSWER",
        ClientError::Network(_) => "NETWORK",
    }
}

fn hint_for(e: &ClientError) -> &'static str {
    match e {
        ClientError::Unauthorized { .. } => {
            "Open the app link kapture printed, or paste its token."
        }
        ClientError::SessionGone => "Connect again; a new session starts.",
        ClientError::Network(_) => "Is kapture still running with --http?",
        ClientError::Rpc { .. } => "Check the arguments against the tool's schema.",
        _ => "",
    }
}

fn blocks_text(shown: &Shown) -> String {
    shown
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The token the page was opened with (`?token=`, then taken out of the address bar), or
/// the one this tab already used.
fn take_token() -> (Option<String>, bool) {
    let Some(window) = web_sys::window() else {
        return (None, false);
    };
    let store = window.session_storage().ok().flatten();
    let location = window.location();
    let search = location.search().unwrap_or_default();
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok();
    if let Some(token) = params.as_ref().and_then(|p| p.get("token")) {
        if let Some(s) = &store {
            let _ = s.set_item(TOKEN_KEY, &token);
        }
        if let Some(p) = &params {
            p.delete("token");
            let rest = String::from(p.to_string());
            let path = location.pathname().unwrap_or_else(|_| "/app".into());
            let clean = if rest.is_empty() {
                path
            } else {
                format!("{path}?{rest}")
            };
            if let Ok(h) = window.history() {
                let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&clean));
            }
        }
        return (Some(token), true);
    }
    let saved = store.and_then(|s| s.get_item(TOKEN_KEY).ok().flatten());
    let auto = saved.is_some();
    (saved, auto)
}

/// The app page; `app.js` creates it once.
#[wasm_bindgen]
pub struct AppUi {
    app: Rc<App>,
}

#[wasm_bindgen]
impl AppUi {
    #[wasm_bindgen(constructor)]
    pub fn new() -> AppUi {
        let window = web_sys::window().unwrap_or_else(|| wasm_bindgen::throw_str("no window"));
        let doc = window
            .document()
            .unwrap_or_else(|| wasm_bindgen::throw_str("no document"));
        let origin = window.location().origin().unwrap_or_default();
        AppUi {
            app: Rc::new(App {
                doc,
                endpoint: format!("{origin}/mcp"),
                client: RefCell::default(),
                server: RefCell::default(),
                tools: RefCell::default(),
                selected: RefCell::default(),
                extras: RefCell::default(),
                json_mode: Cell::new(false),
                history: RefCell::default(),
                left_connected: Cell::new(false),
            }),
        }
    }

    /// Wire the controls; connect at once when the page came with a token.
    pub fn start(&self) {
        let app = self.app.clone();
        let doc = app.doc.clone();
        app.set_text("endpoint", &app.endpoint);
        let a = app.clone();
        on(
            &by_id::<Element>(&doc, "connect-form"),
            "submit",
            move |e| {
                e.prevent_default();
                let token = by_id::<HtmlInputElement>(&a.doc, "token").value();
                let a = a.clone();
                spawn_local(async move { a.connect(token).await });
            },
        );
        let a = app.clone();
        on(&by_id::<Element>(&doc, "disconnect"), "click", move |_| {
            let a = a.clone();
            spawn_local(async move { a.disconnect().await });
        });
        let a = app.clone();
        on(&by_id::<Element>(&doc, "tool-filter"), "input", move |_| {
            a.show_tools()
        });
        let a = app.clone();
        on(
            &by_id::<Element>(&doc, "status-refresh"),
            "click",
            move |_| {
                let a = a.clone();
                spawn_local(async move { a.load_status().await });
            },
        );
        let a = app.clone();
        on(
            &by_id::<Element>(&doc, "tabs-refresh"),
            "click",
            move |_| {
                let a = a.clone();
                spawn_local(async move { a.load_tabs().await });
            },
        );
        let a = app.clone();
        on(&by_id::<Element>(&doc, "tab-picker"), "change", move |_| {
            a.tab_picked()
        });
        let a = app.clone();
        on(&by_id::<Element>(&doc, "mode-form"), "click", move |_| {
            a.json_changed();
            a.set_mode(false)
        });
        let a = app.clone();
        on(&by_id::<Element>(&doc, "mode-json"), "click", move |_| {
            a.form_changed();
            a.set_mode(true)
        });
        for kind in ["input", "change"] {
            let a = app.clone();
            on(&by_id::<Element>(&doc, "fields"), kind, move |_| {
                a.form_changed()
            });
        }
        let a = app.clone();
        on(&by_id::<Element>(&doc, "args-json"), "input", move |_| {
            a.json_changed()
        });
        let a = app.clone();
        on(&by_id::<Element>(&doc, "run-form"), "submit", move |e| {
            e.prevent_default();
            a.execute();
        });
        let a = app.clone();
        on(&by_id::<Element>(&doc, "export"), "click", move |_| {
            a.export()
        });
        let a = app.clone();
        on(
            &by_id::<Element>(&doc, "history-clear"),
            "click",
            move |_| {
                a.history.borrow_mut().clear();
                a.save_history();
                a.show_history();
            },
        );
        let a = app.clone();
        on(
            &by_id::<Element>(&doc, "viewer-close"),
            "click",
            move |_| by_id::<HtmlDialogElement>(&a.doc, "viewer").close(),
        );
        if let Some(window) = web_sys::window() {
            let a = app.clone();
            let leave = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| a.end_on_leave());
            let a = app.clone();
            let back = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
                // Restored from the back-forward cache: its session was ended on leaving.
                let restored =
                    js_sys::Reflect::get(&e, &"persisted".into()).is_ok_and(|p| p.is_truthy());
                if restored && a.left_connected.replace(false) {
                    let token = by_id::<HtmlInputElement>(&a.doc, "token").value();
                    let a = a.clone();
                    spawn_local(async move { a.connect(token).await });
                }
            });
            let _ =
                window.add_event_listener_with_callback("pagehide", leave.as_ref().unchecked_ref());
            let _ =
                window.add_event_listener_with_callback("pageshow", back.as_ref().unchecked_ref());
            // The page's own listeners live as long as the page.
            leave.forget();
            back.forget();
        }
        app.set_mode(false);
        app.load_history();
        app.show_history();
        let (token, auto) = take_token();
        if let Some(t) = &token {
            by_id::<HtmlInputElement>(&doc, "token").set_value(t);
        }
        if let (Some(token), true) = (token, auto) {
            spawn_local(async move { app.connect(token).await });
        } else {
            app.set_state("off", "not connected");
        }
    }
}

impl Default for AppUi {
    fn default() -> Self {
        Self::new()
    }
}
