//! What a tab's CDP event stream tells us: console messages (a bounded ring kept across
//! navigations), navigation counters, one record per frame (`frames`), and one-shot
//! waiters for a matching event.

use std::collections::{HashMap, VecDeque};

use futures::channel::oneshot;
use serde_json::Value;

use crate::methods::{ConsoleLevel, ConsoleMessage};
use crate::snapshot::RefTable;

mod console;
mod frames;
mod kept;
mod quiet;
use console::{console_api_message, exception_message, log_entry_message};
pub use console::{exception_text, format_remote_object};
pub use kept::{Dialog, RemoteFrame};
pub use quiet::NetQuiet;

/// Console messages kept per tab; older ones are dropped first.
pub const CONSOLE_CAPACITY: usize = 1000;
/// Longest text kept for one console message.
const CONSOLE_TEXT_MAX: usize = 4000;

type Filter = Box<dyn Fn(&str, &Value) -> bool>;

/// Network requests kept per tab; older ones are dropped first.
pub const NETWORK_CAPACITY: usize = 500;

/// One network request as seen so far.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Request {
    pub id: String,
    pub method: String,
    pub url: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mime_type: String,
    /// Bytes on the wire, once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Milliseconds from the request to its end, once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    #[serde(skip)]
    pub request_headers: Value,
    #[serde(skip)]
    pub response_headers: Value,
    #[serde(skip)]
    started: f64,
    /// What the request is judged on: its URL and the document that made it (as judged
    /// when it was sent).
    #[serde(skip)]
    pub judged: Vec<String>,
}

/// Event bookkeeping and page-model state of one attached tab, fed by whatever delivers
/// CDP events.
pub struct TabEvents {
    /// The dialog open right now, if any.
    pub dialog: Option<Dialog>,
    /// The last dialog seen, open or answered.
    pub last_dialog: Option<Dialog>,
    /// A file chooser the page opened (intercepted): the input's backend node id.
    pub file_chooser: Option<i64>,
    /// The renderer crashed; cleared by the next navigation.
    pub crashed: bool,
    /// URL of the main frame's document, as the last navigation left it.
    pub main_url: Option<String>,
    /// Frames attached, navigated or detached so far: a screenshot taken while this moved
    /// may hold a frame it never judged, and is taken again.
    pub frame_changes: u64,
    network: VecDeque<Request>,
    /// Console messages with what each is judged on (the document that logged it).
    console: VecDeque<(ConsoleMessage, Vec<String>)>,
    /// The frame of every live execution context, to judge what it logs.
    contexts: HashMap<i64, String>,
    main_frame: Option<String>,
    /// What is known of every frame, one record each (`frames.rs`).
    frames: frames::Frames,
    /// Child sessions already asked to auto-attach their own out-of-process frames.
    sessions_seen: std::collections::HashSet<String>,
    /// The rules the running command is held to (set by the worker while it runs): frames,
    /// requests and documents it reaches beyond its page are judged on them.
    pub judge: Option<crate::policy::Judge>,
    /// The rules of the last judged command, kept for what the page does between commands
    /// (a dialog a denied frame opens).
    pub rules_seen: Option<crate::policy::Judge>,
    /// Every new document of the tab's own process gets the prelude in Kapture's world from
    /// its start (installed on attach): a world made there is not sent it again.
    pub prelude_preinstalled: bool,
    /// Refs handed out for this tab's documents.
    pub refs: RefTable,
    /// The body lines of the last snapshot the agent saw, for diffs.
    pub last_snapshot: Vec<String>,
    /// The recorder, while it records this tab.
    pub recording: Option<Recording>,
    /// Requests from the recorder widget, for the worker.
    widget_requests: Vec<Value>,
    /// Where the main frame's latest navigation stands.
    pub nav: super::navigation::NavTracker,
    /// Where the last mouse event Kapture sent left the pointer (the tab's viewport CSS
    /// pixels); forgotten with the main frame's document.
    pub pointer: Option<(f64, f64)>,
    /// The last input action's answer: when it was sent and where navigations stood then.
    /// The next read waits for the page to go quiet after it, and names a navigation that
    /// began since (a page timer), waiting for it.
    pub acted: Option<super::navigation::Acted>,
    /// Text typed into a rich-text editor that its form may not hold yet: the next click
    /// or key waits for it.
    pub(super) rich_sync: Option<RichSync>,
    /// The element picker while it is in the page (the frames it was put in): whoever ends
    /// the command that put it there — its own end, or the tab's queue after a stop or a
    /// deadline — removes it.
    pub picker: Option<super::pick::LivePicker>,
    waiters: Vec<(Filter, oneshot::Sender<(String, Value)>)>,
    /// What the password watch said of the main frame's document.
    password_watch: Option<PasswordWatch>,
    /// The network's requests in flight, for a wait until it is quiet.
    pub quiet: NetQuiet,
    /// When the running command must have answered (ms; set by the tab's queue): waits
    /// inside it that can fall back to a weaker answer do so before it.
    pub deadline_ms: Option<f64>,
}

/// What the password watch (`js::PASSWORD_WATCH`) said of one main-frame document: that it
/// has held a password field, or not yet.
#[derive(Debug, Clone, PartialEq)]
struct PasswordWatch {
    loader: String,
    held: bool,
}

/// The name of the binding the capture script calls, and of its isolated world.
pub const RECORDER_BINDING: &str = "__kaptureRecord";
pub const RECORDER_WORLD: &str = "kapture-recorder";
/// Raw events kept per recording; a longer one keeps its start.
const MAX_RECORDED: usize = 5000;

/// Widget requests kept until the worker handles them (a page cannot send more: only the
/// widget's own world sees the binding, and only trusted clicks send).
const MAX_WIDGET_REQUESTS: usize = 16;

/// The recorder on a tab: installed (by `start`, or by `enable` with the widget), capturing
/// or not, and a stopped recording the widget's person has yet to save.
#[derive(Debug, Default)]
pub struct Recording {
    /// The scripts' ids, to remove them at the end.
    pub scripts: Vec<String>,
    pub start_url: Option<String>,
    pub events: Vec<crate::recorder::RawEvent>,
    /// Events are kept only while capturing (the widget starts and stops it).
    pub capturing: bool,
    /// The in-page widget is shown.
    pub widget: bool,
    /// Stopped from the widget, waiting for the person to confirm the save.
    pub stopped: Option<crate::methods::RecorderState>,
}

impl Recording {
    fn push(&mut self, ev: crate::recorder::RawEvent) {
        if self.capturing && self.events.len() < MAX_RECORDED {
            self.events.push(ev);
        }
    }
}

impl Default for TabEvents {
    fn default() -> Self {
        Self::new()
    }
}

impl TabEvents {
    pub fn new() -> Self {
        Self {
            dialog: None,
            last_dialog: None,
            file_chooser: None,
            crashed: false,
            main_url: None,
            frame_changes: 0,
            network: VecDeque::new(),
            console: VecDeque::new(),
            contexts: HashMap::new(),
            main_frame: None,
            frames: frames::Frames::default(),
            sessions_seen: Default::default(),
            judge: None,
            rules_seen: None,
            prelude_preinstalled: false,
            refs: RefTable::new(),
            last_snapshot: Vec::new(),
            recording: None,
            widget_requests: Vec::new(),
            nav: super::navigation::NavTracker::new(),
            acted: None,
            pointer: None,
            rich_sync: None,
            picker: None,
            waiters: Vec::new(),
            password_watch: None,
            quiet: NetQuiet::default(),
            deadline_ms: None,
        }
    }

    /// Whether the main frame's document is known never to have held a password field (its
    /// watch said so): answers need not ask the page for password values to mask. Anything
    /// else (no watch in this document, a field seen) is a possible password.
    pub fn no_password_fields(&self) -> bool {
        let loader = self.main_frame.as_ref().and_then(|m| self.frames.loader(m));
        matches!((&self.password_watch, loader), (Some(w), Some(l)) if !w.held && &w.loader == l)
    }

    /// A call of the password watch's binding, from Kapture's world of the main frame (only
    /// that world has the binding; a call from another frame's is dropped).
    fn on_password_watch(&mut self, params: &Value) {
        let ctx = params.get("executionContextId").and_then(Value::as_i64);
        let frame = ctx.and_then(|c| self.contexts.get(&c));
        if frame.is_none() || frame != self.main_frame.as_ref() {
            return;
        }
        let Some(loader) = frame.and_then(|f| self.frames.loader(f)).cloned() else {
            return;
        };
        let held = match params.get("payload").and_then(Value::as_str) {
            Some("1") => true,
            Some("0") => false,
            _ => return,
        };
        // Once a document held a field it is always asked.
        let before = self.password_watch.as_ref().filter(|w| w.loader == loader);
        let held = held || before.is_some_and(|w| w.held);
        self.password_watch = Some(PasswordWatch { loader, held });
    }

    pub fn set_main_frame(&mut self, frame_id: String) {
        self.refs.set_main_frame(&frame_id);
        self.main_frame = Some(frame_id);
    }

    /// A call of the recorder's binding: one raw event, or garbage that is dropped.
    fn on_recorded(&mut self, params: &Value) {
        if params.get("name").and_then(Value::as_str) != Some(RECORDER_BINDING) {
            return;
        }
        let Some(rec) = self.recording.as_mut() else {
            return;
        };
        let Some(payload) = params
            .get("payload")
            .and_then(Value::as_str)
            .and_then(|p| serde_json::from_str::<Value>(p).ok())
        else {
            return;
        };
        if payload.get("kind").and_then(Value::as_str) == Some("widget") {
            if rec.widget && self.widget_requests.len() < MAX_WIDGET_REQUESTS {
                self.widget_requests.push(payload);
            }
        } else if let Ok(ev) = serde_json::from_value(payload) {
            rec.push(ev);
        }
    }

    /// A tab this one opened (a link with a target, `window.open`), while recording.
    pub fn record_new_tab(&mut self, url: &str) {
        if let Some(rec) = self.recording.as_mut() {
            rec.push(crate::recorder::RawEvent::NewTab { url: url.into() });
        }
    }

    /// What the widget asked for since the last call (start, stop, save, discard).
    pub fn take_widget_requests(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.widget_requests)
    }

    /// What a command acting there is judged on: the frame of the ref it names
    /// (`target_ref`), else the main frame (see [`crate::policy::judged_urls`]).
    pub fn judged_for(&self, target_ref: Option<&str>) -> Option<Vec<String>> {
        if let Some(r) = target_ref {
            if let Ok(t) = self.refs.resolve(r, |f| self.frames.loader(f).cloned()) {
                return Some(self.judged(&t.frame.frame_id));
            }
        }
        match self.main_frame.as_deref() {
            Some(main) => Some(self.judged(main)).filter(|j| !j.is_empty()),
            None => None,
        }
        .or_else(|| self.main_url.clone().map(|u| vec![u]))
    }

    /// Whether `frame_id`'s document carries an extension's origin: a blank page the
    /// extension opened (Chrome gives it its initiator's origin). The policy takes it for a
    /// blank page; no script of the agent's runs in it, since it would run with the
    /// extension's origin.
    pub fn extension_document(&self, frame_id: &str) -> bool {
        let ext = |o: &str| o.to_ascii_lowercase().starts_with("chrome-extension://");
        self.frames.get(frame_id).is_some_and(|r| {
            r.origin.as_deref().is_some_and(ext) || r.context.as_ref().is_some_and(|(_, o)| ext(o))
        })
    }

    /// What frame `frame_id`'s document is judged on; empty for a frame never seen (which
    /// the policy denies).
    pub fn judged(&self, frame_id: &str) -> Vec<String> {
        self.judged_at(frame_id, 0)
    }

    fn judged_at(&self, frame_id: &str, depth: usize) -> Vec<String> {
        let record = self.frames.get(frame_id);
        let origin = record.and_then(|r| r.origin.as_deref());
        let context = record
            .and_then(|r| r.context.as_ref())
            .map(|(_, o)| o.as_str())
            .filter(|c| Some(*c) != origin);
        let url = record.and_then(|r| r.url.clone()).or_else(|| {
            (self.main_frame.as_deref() == Some(frame_id))
                .then(|| self.main_url.clone())
                .flatten()
        });
        if origin.is_none() && url.is_none() {
            return Vec::new();
        }
        // A creator too deep to follow is not something the policy can judge.
        let creator = self.parent_of(frame_id).map(|p| {
            if depth < crate::policy::frames::MAX_FRAME_DEPTH {
                self.judged_at(p, depth + 1)
            } else {
                vec![String::new()]
            }
        });
        let url = url.as_deref().unwrap_or("");
        // Both reports are judged when they differ: the strictest verdict wins.
        let reports: Vec<Option<&str>> = match (origin, context) {
            (None, None) => vec![None],
            (o, c) => o.into_iter().chain(c).map(Some).collect(),
        };
        let mut judged: Vec<String> = Vec::new();
        for report in reports {
            for u in crate::policy::judged_urls(report, url, creator.as_deref()) {
                if !judged.contains(&u) {
                    judged.push(u);
                }
            }
        }
        judged
    }

    /// Whether `frame` is `ancestor` or a frame inside it (as far as the frame tree is
    /// known, and not deeper than the policy follows frames).
    pub fn is_within(&self, frame: &str, ancestor: &str) -> bool {
        let mut at = frame;
        for _ in 0..=crate::policy::frames::MAX_FRAME_DEPTH {
            if at == ancestor {
                return true;
            }
            match self.parent_of(at) {
                Some(parent) => at = parent,
                None => return false,
            }
        }
        false
    }

    /// Why the running command may not do `category` in `frame_id`'s document, if it may not.
    pub fn frame_refusal(
        &self,
        frame_id: &str,
        category: crate::policy::Category,
    ) -> Option<crate::policy::Refusal> {
        let judge = self.judge.as_ref()?;
        judge.check(category, &self.judged(frame_id)).err()
    }

    /// Is any frame of the tab (known or only attached) refused `category` for the running
    /// command? While none is, input cannot land anywhere it may not.
    pub fn any_frame_refused(&self, category: crate::policy::Category) -> bool {
        self.known_frames()
            .any(|f| self.frame_refusal(f, category).is_some())
    }

    /// Why the running command may not read request `r`, if it may not.
    pub fn request_refusal(&self, r: &Request) -> Option<crate::policy::Refusal> {
        let judge = self.judge.as_ref()?;
        judge.check(crate::policy::Category::Read, &r.judged).err()
    }

    pub fn main_frame(&self) -> Option<&str> {
        self.main_frame.as_deref()
    }

    /// Resolve on the next event that may move a navigation on (or open a dialog).
    pub fn wait_for_navigation_news(&mut self) -> oneshot::Receiver<(String, Value)> {
        self.wait_for(|method, params| {
            method == "Page.javascriptDialogOpening"
                || (super::navigation::EVENTS.contains(&method)
                    && (method != "Network.requestWillBeSent"
                        || params.get("type").and_then(Value::as_str) == Some("Document")))
        })
    }

    /// Resolve with the first later event for which `filter` is true.
    pub fn wait_for(
        &mut self,
        filter: impl Fn(&str, &Value) -> bool + 'static,
    ) -> oneshot::Receiver<(String, Value)> {
        let (tx, rx) = oneshot::channel();
        self.waiters.retain(|(_, tx)| !tx.is_canceled());
        self.waiters.push((Box::new(filter), tx));
        rx
    }

    /// Wait for the main frame to commit a navigation, or to give one up.
    pub fn wait_for_commit(&mut self) -> oneshot::Receiver<(String, Value)> {
        let main = self.main_frame.clone();
        self.wait_for(move |method, params| {
            let frame_id = match method {
                "Page.frameNavigated" => params.pointer("/frame/id"),
                "Page.navigatedWithinDocument" | "Page.frameStoppedLoading" => {
                    params.get("frameId")
                }
                _ => return false,
            };
            match (&main, frame_id.and_then(Value::as_str)) {
                (Some(main), Some(id)) => main == id,
                // Unknown main frame: any top-level commit will do.
                (None, _) => {
                    method == "Page.frameNavigated" && params.pointer("/frame/parentId").is_none()
                }
                _ => false,
            }
        })
    }

    /// Feed one CDP event.
    pub fn on_event(&mut self, method: &str, params: &Value) {
        let now = crate::platform::now_ms();
        self.nav
            .on_event(method, params, self.main_frame.as_deref(), now);
        self.quiet.on_event(method, params, now);
        match method {
            "Runtime.consoleAPICalled" => {
                if let Some(msg) = console_api_message(params) {
                    let judged = self.judged_context(params.get("executionContextId"), &msg);
                    self.push_console(msg, judged);
                }
            }
            "Runtime.exceptionThrown" => {
                let msg = exception_message(params);
                let ctx = params.pointer("/exceptionDetails/executionContextId");
                let judged = self.judged_context(ctx, &msg);
                self.push_console(msg, judged);
            }
            "Log.entryAdded" => {
                if let Some(msg) = log_entry_message(params) {
                    let judged = self.judged_context(None, &msg);
                    self.push_console(msg, judged);
                }
            }
            "Runtime.bindingCalled" => match params.get("name").and_then(Value::as_str) {
                Some(super::js::PASSWORD_BINDING) => self.on_password_watch(params),
                _ => self.on_recorded(params),
            },
            "Page.frameNavigated" => {
                self.frame_changes += 1;
                if params.pointer("/frame/parentId").is_none() {
                    if let (Some(rec), Some(url)) = (
                        self.recording.as_mut(),
                        params.pointer("/frame/url").and_then(Value::as_str),
                    ) {
                        rec.push(crate::recorder::RawEvent::Navigate { url: url.into() });
                    }
                    self.crashed = false;
                    self.pointer = None;
                    self.quiet.new_document(now);
                    self.main_url = params
                        .pointer("/frame/url")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
            }
            "Page.frameDetached" | "Page.frameAttached" => self.frame_changes += 1,
            "Page.javascriptDialogOpening" => {
                let text = |k: &str| {
                    params
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let mut d = Dialog {
                    kind: text("type"),
                    message: text("message"),
                    default_prompt: text("defaultPrompt"),
                    judged: Vec::new(),
                    withheld: false,
                };
                // A dialog of a document the tab's rules do not let agents read (a denied
                // frame's `alert`) is told by its kind only.
                let mut judged = vec![text("url")];
                if let Some(frame) = params
                    .get("frameId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| self.main_frame.clone())
                {
                    judged.extend(self.judged(&frame));
                }
                let refused = self
                    .rules_seen
                    .as_ref()
                    .and_then(|j| j.check(crate::policy::Category::Read, &judged).err());
                if let Some(r) = refused {
                    d.message = format!("(message withheld: {})", r.reason());
                    d.default_prompt.clear();
                    d.withheld = true;
                }
                d.judged = judged;
                self.last_dialog = Some(d.clone());
                self.dialog = Some(d);
            }
            "Page.javascriptDialogClosed" => self.dialog = None,
            "Page.fileChooserOpened" => {
                self.file_chooser = params.get("backendNodeId").and_then(Value::as_i64)
            }
            "Inspector.targetCrashed" => {
                self.crashed = true;
                self.dialog = None;
            }
            "Network.requestWillBeSent" => self.on_request(params),
            "Network.responseReceived" => {
                if let Some(r) = self.request_mut(params) {
                    let resp = params.get("response").cloned().unwrap_or(Value::Null);
                    r.status = resp.get("status").and_then(Value::as_u64).map(|s| s as u16);
                    r.mime_type = resp
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    r.response_headers = resp.get("headers").cloned().unwrap_or(Value::Null);
                    if let Some(t) = params.get("type").and_then(Value::as_str) {
                        r.kind = t.to_string();
                    }
                }
            }
            "Network.loadingFinished" => {
                let ts = params
                    .get("timestamp")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                if let Some(r) = self.request_mut(params) {
                    r.size = params
                        .get("encodedDataLength")
                        .and_then(Value::as_f64)
                        .map(|v| v as u64);
                    r.duration_ms = Some(((ts - r.started) * 1000.0).max(0.0));
                }
            }
            "Network.loadingFailed" => {
                let ts = params
                    .get("timestamp")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                if let Some(r) = self.request_mut(params) {
                    r.failed = params
                        .get("errorText")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    r.duration_ms = Some(((ts - r.started) * 1000.0).max(0.0));
                }
            }
            _ => {}
        }
        // Frames, documents and contexts: each record's facts end together (`frames.rs`).
        self.on_frame_event(method, params);
        if !self.waiters.is_empty() {
            let waiters = std::mem::take(&mut self.waiters);
            for (filter, tx) in waiters {
                if tx.is_canceled() {
                    continue;
                }
                if filter(method, params) {
                    let _ = tx.send((method.to_string(), params.clone()));
                } else {
                    self.waiters.push((filter, tx));
                }
            }
        }
    }

    fn on_request(&mut self, params: &Value) {
        let text = |p: &str| {
            params
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let id = text("/requestId");
        let url = text("/request/url");
        let mut judged = vec![url.clone()];
        if let Some(frame) = params.get("frameId").and_then(Value::as_str) {
            judged.extend(self.judged(frame));
        }
        // A redirect reuses the id: the new hop replaces the old entry.
        self.network.retain(|r| r.id != id);
        if self.network.len() == NETWORK_CAPACITY {
            self.network.pop_front();
        }
        self.network.push_back(Request {
            id,
            method: text("/request/method"),
            url,
            judged,
            kind: text("/type"),
            request_headers: params
                .pointer("/request/headers")
                .cloned()
                .unwrap_or(Value::Null),
            started: params
                .get("timestamp")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            ..Request::default()
        });
    }

    fn request_mut(&mut self, params: &Value) -> Option<&mut Request> {
        let id = params.get("requestId").and_then(Value::as_str)?;
        self.network.iter_mut().rev().find(|r| r.id == id)
    }

    /// Requests newest first.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.network.iter().rev()
    }

    /// One request by id.
    pub fn request(&self, id: &str) -> Option<&Request> {
        self.network.iter().find(|r| r.id == id)
    }

    /// What a console message is judged on: the document of the context that logged it,
    /// and the resource it names (a failed load names the URL it failed on).
    fn judged_context(&self, ctx: Option<&Value>, msg: &ConsoleMessage) -> Vec<String> {
        let frame = ctx
            .and_then(Value::as_i64)
            .and_then(|c| self.contexts.get(&c))
            .cloned()
            .or_else(|| self.main_frame.clone());
        let mut judged: Vec<String> = msg.url.iter().cloned().collect();
        if let Some(frame) = frame {
            judged.extend(self.judged(&frame));
        }
        judged
    }

    fn push_console(&mut self, msg: ConsoleMessage, judged: Vec<String>) {
        if self.console.len() == CONSOLE_CAPACITY {
            self.console.pop_front();
        }
        self.console.push_back((msg, judged));
    }

    /// Messages at `min` level or above, newest first, at most `max`; plus how many matched.
    pub fn console(&self, min: Option<ConsoleLevel>, max: usize) -> (Vec<ConsoleMessage>, usize) {
        // What a document the running command may not read logged is left out (the judge
        // keeps its verdicts, so the many messages of one document cost one).
        let readable = |judged: &Vec<String>| {
            self.judge
                .as_ref()
                .is_none_or(|j| j.check(crate::policy::Category::Read, judged).is_ok())
        };
        let matching: Vec<&ConsoleMessage> = self
            .console
            .iter()
            .rev()
            .filter(|(m, judged)| min.is_none_or(|min| m.level >= min) && readable(judged))
            .map(|(m, _)| m)
            .collect();
        let total = matching.len();
        (matching.into_iter().take(max).cloned().collect(), total)
    }

    /// Drop every waiter: their receivers see `Canceled` (tab closed or detached).
    pub fn cancel_waiters(&mut self) {
        self.waiters.clear();
    }
}

/// Text typed into a rich-text editor inside a form that the form may not hold yet (the
/// next click or key waits for it, `input::rich_form_synced`).
#[derive(Debug, Clone)]
pub struct RichSync {
    pub(super) frame: String,
    pub(super) at: f64,
    pub(super) mark: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_ref_inside_a_frame_is_judged_on_that_frames_url() {
        let mut events = TabEvents::default();
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "M", "loaderId": "L1", "url": "http://a.test/"}}),
        );
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "C", "parentId": "M", "loaderId": "L2", "url": "http://b.test/pay"}}),
        );
        let key = |f: &str, l: &str| crate::snapshot::FrameKey {
            frame_id: f.into(),
            loader_id: l.into(),
        };
        let top = events.refs.ref_for(&key("M", "L1"), 1);
        let inside = events.refs.ref_for(&key("C", "L2"), 1);
        let judged = |r: Option<&str>| events.judged_for(r).unwrap_or_default();
        assert_eq!(judged(Some(&top)), ["http://a.test/"]);
        assert_eq!(judged(Some(&inside)), ["http://b.test/pay"]);
        assert_eq!(
            judged(None),
            ["http://a.test/"],
            "no ref: the page's own URL"
        );
    }

    #[test]
    fn frames_are_judged_on_the_origin_chrome_reports_not_their_url() {
        let mut events = TabEvents::default();
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "M", "loaderId": "L1", "url": "http://a.test/", "securityOrigin": "http://a.test"}}),
        );
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "S", "parentId": "M", "loaderId": "L2", "url": "about:srcdoc", "securityOrigin": "http://a.test"}}),
        );
        // A frame a script made: attached, its origin known only from its context.
        events.on_event(
            "Page.frameAttached",
            &json!({"frameId": "B", "parentFrameId": "M"}),
        );
        assert_eq!(
            events.judged("B"),
            Vec::<String>::new(),
            "unknown: nothing to judge"
        );
        events.on_event(
            "Runtime.executionContextCreated",
            &json!({"context": {"id": 7, "origin": "http://a.test", "auxData": {"frameId": "B", "isDefault": true}}}),
        );
        events.frame_seen("B", "LB", "about:blank", None, None);
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "D", "parentId": "S", "loaderId": "L3", "url": "data:text/html,x", "securityOrigin": "://"}}),
        );
        assert_eq!(events.judged("S"), ["http://a.test"]);
        assert_eq!(events.judged("B"), ["http://a.test"]);
        assert_eq!(events.judged("D"), ["data:text/html,x", "http://a.test"]);
        // A popup's about:blank: the tree says `://`, its context the origin it inherited.
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "P", "loaderId": "L4", "url": "about:blank", "securityOrigin": "://"}}),
        );
        assert_eq!(events.judged("P"), ["about:blank"]);
        events.on_event(
            "Runtime.executionContextCreated",
            &json!({"context": {"id": 9, "origin": "http://a.test", "auxData": {"frameId": "P", "isDefault": true}}}),
        );
        assert_eq!(events.judged("P"), ["about:blank", "http://a.test"]);
        events.on_event(
            "Runtime.executionContextDestroyed",
            &json!({"executionContextId": 9}),
        );
        assert_eq!(events.judged("P"), ["about:blank"]);
        let p = {
            let mut p = crate::policy::Policy::launched_default();
            p.rules.push(
                crate::policy::Policy::flag_rule(
                    "eval@a.test",
                    crate::policy::Verdict::Deny,
                    "--deny",
                )
                .unwrap(),
            );
            std::rc::Rc::new(p)
        };
        events.judge = Some(crate::policy::Judge::new(
            p,
            crate::policy::Category::Eval,
            vec![],
        ));
        for f in ["S", "B", "D"] {
            let r = events.frame_refusal(f, crate::policy::Category::Eval);
            assert!(r.is_some_and(|r| r.origin == "http://a.test:80"), "{f}");
        }
        assert!(events
            .frame_refusal("S", crate::policy::Category::Read)
            .is_none());
        // A request is judged on its URL and on the frame that sent it.
        events.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "9", "frameId": "S", "request": {"method": "GET", "url": "http://c.test/x"}}),
        );
        assert_eq!(
            events.request("9").unwrap().judged,
            ["http://c.test/x", "http://a.test"]
        );
    }

    #[test]
    fn what_a_denied_frame_logs_or_alerts_is_left_out() {
        let mut events = TabEvents::default();
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "M", "loaderId": "L1", "url": "http://a.test/", "securityOrigin": "http://a.test"}}),
        );
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "B", "parentId": "M", "loaderId": "L2", "url": "http://b.test/", "securityOrigin": "http://b.test"}}),
        );
        for (id, frame) in [(1, "M"), (2, "B")] {
            events.on_event(
                "Runtime.executionContextCreated",
                &json!({"context": {"id": id, "origin": "", "auxData": {"frameId": frame, "isDefault": false}}}),
            );
        }
        for (ctx, text) in [(1, "from a"), (2, "from b")] {
            events.on_event(
                "Runtime.consoleAPICalled",
                &json!({"type": "log", "executionContextId": ctx, "args": [{"type": "string", "value": text}]}),
            );
        }
        let mut p = crate::policy::Policy::launched_default();
        p.rules.push(
            crate::policy::Policy::flag_rule("b.test", crate::policy::Verdict::Deny, "--deny")
                .unwrap(),
        );
        let judge =
            crate::policy::Judge::new(std::rc::Rc::new(p), crate::policy::Category::Read, vec![]);
        assert_eq!(
            events.console(None, 10).1,
            2,
            "no rules: the person's own view"
        );
        events.judge = Some(judge.clone());
        let (shown, total) = events.console(None, 10);
        assert_eq!((shown[0].text.as_str(), total), ("from a", 1));
        events.rules_seen = Some(judge);
        events.on_event(
            "Page.javascriptDialogOpening",
            &json!({"type": "alert", "message": "secret of b", "url": "http://b.test/", "frameId": "B"}),
        );
        let d = events.dialog.clone().unwrap();
        assert!(!d.message.contains("secret"), "{}", d.message);
        assert!(d
            .message
            .contains("read on http://b.test:80 denied by --deny b.test"));
    }

    fn log(events: &mut TabEvents, kind: &str, text: &str) {
        events.on_event(
            "Runtime.consoleAPICalled",
            &json!({"type": kind, "args": [{"type": "string", "value": text}], "timestamp": 1.0}),
        );
    }

    #[test]
    fn the_password_watch_speaks_for_its_own_main_document_only() {
        let mut events = TabEvents::new();
        let navigated = |events: &mut TabEvents, loader: &str| {
            events.on_event(
                "Page.frameNavigated",
                &json!({"frame": {"id": "M", "loaderId": loader, "url": "http://a.test/", "securityOrigin": "http://a.test"}}),
            );
        };
        let world = |events: &mut TabEvents, id: i64, frame: &str| {
            events.on_event(
                "Runtime.executionContextCreated",
                &json!({"context": {"id": id, "origin": "http://a.test", "name": "kapture", "auxData": {"frameId": frame, "isDefault": false}}}),
            );
        };
        let said = |events: &mut TabEvents, ctx: i64, payload: &str| {
            events.on_event(
                "Runtime.bindingCalled",
                &json!({"name": crate::cdp::js::PASSWORD_BINDING, "payload": payload, "executionContextId": ctx}),
            );
        };
        events.set_main_frame("M".into());
        navigated(&mut events, "L1");
        assert!(!events.no_password_fields(), "no watch: asked");
        world(&mut events, 5, "M");
        world(&mut events, 6, "C");
        said(&mut events, 6, "0");
        assert!(!events.no_password_fields(), "a child frame does not speak");
        said(&mut events, 5, "yes");
        assert!(!events.no_password_fields(), "garbage is dropped");
        said(&mut events, 5, "0");
        assert!(events.no_password_fields());
        said(&mut events, 5, "1");
        said(&mut events, 5, "0");
        assert!(!events.no_password_fields(), "once seen, always asked");
        // A new document: the old one's word no longer holds until the new one speaks.
        navigated(&mut events, "L2");
        assert!(!events.no_password_fields());
        world(&mut events, 7, "M");
        said(&mut events, 7, "0");
        assert!(events.no_password_fields());
    }

    #[test]
    fn console_is_newest_first_filtered_and_bounded() {
        let mut events = TabEvents::new();
        log(&mut events, "log", "one");
        log(&mut events, "warning", "two");
        log(&mut events, "error", "three");
        log(&mut events, "debug", "four");
        let (all, total) = events.console(None, 10);
        assert_eq!(total, 4);
        assert_eq!(
            all.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
            ["four", "three", "two", "one"]
        );
        let (warn, total) = events.console(Some(ConsoleLevel::Warning), 1);
        assert_eq!(total, 2);
        assert_eq!(warn[0].text, "three");

        for i in 0..CONSOLE_CAPACITY + 5 {
            log(&mut events, "log", &i.to_string());
        }
        let (_, total) = events.console(None, 1);
        assert_eq!(total, CONSOLE_CAPACITY);
    }

    #[test]
    fn remote_objects_render_like_a_console() {
        assert_eq!(
            format_remote_object(&json!({"type": "number", "value": 42})),
            "42"
        );
        assert_eq!(
            format_remote_object(&json!({"type": "undefined"})),
            "undefined"
        );
        assert_eq!(
            format_remote_object(&json!({"type": "number", "unserializableValue": "NaN"})),
            "NaN"
        );
        let obj = json!({"type": "object", "preview": {"type": "object", "overflow": false, "properties": [
            {"name": "a", "type": "number", "value": "1"}, {"name": "b", "type": "string", "value": "x"}]}});
        assert_eq!(format_remote_object(&obj), "{a: 1, b: \"x\"}");
        let arr = json!({"type": "object", "subtype": "array", "preview": {"subtype": "array", "overflow": true, "properties": [
            {"name": "0", "type": "number", "value": "1"}]}});
        assert_eq!(format_remote_object(&arr), "[1, …]");
        assert_eq!(
            format_remote_object(&json!({"type": "object", "subtype": "null", "value": null})),
            "null"
        );
    }

    #[test]
    fn exceptions_are_errors() {
        let mut events = TabEvents::new();
        events.on_event(
            "Runtime.exceptionThrown",
            &json!({"timestamp": 2.0, "exceptionDetails": {"text": "Uncaught", "exception": {"description": "Error: boom\n    at x"}}}),
        );
        let (msgs, _) = events.console(Some(ConsoleLevel::Error), 5);
        assert!(msgs[0].text.starts_with("Error: boom"));
    }

    #[test]
    fn waiters_fire_once_on_the_matching_event() {
        let mut events = TabEvents::new();
        events.set_main_frame("F".into());
        let mut commit = events.wait_for_commit();
        events.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "child", "parentId": "F"}}),
        );
        assert!(matches!(commit.try_recv(), Ok(None)));
        let mut news = events.wait_for_navigation_news();
        events.on_event(
            "Network.requestWillBeSent",
            &json!({"frameId": "F", "type": "Image", "request": {"url": "http://a.test/i.png"}}),
        );
        assert!(
            matches!(news.try_recv(), Ok(None)),
            "a subresource is no news"
        );
        events.on_event("Page.frameStartedLoading", &json!({"frameId": "F"}));
        assert!(news.try_recv().unwrap().is_some());
        assert!(events.nav.current().is_some_and(|n| n.in_flight()));
        events.on_event("Page.frameNavigated", &json!({"frame": {"id": "F"}}));
        let (method, _) = commit.try_recv().unwrap().unwrap();
        assert_eq!(method, "Page.frameNavigated");
        events.on_event("Page.frameStoppedLoading", &json!({"frameId": "F"}));
        assert!(events.nav.current().is_some_and(|n| !n.in_flight()));
        assert!(events.waiters.is_empty());
    }

    #[test]
    fn cancelled_waiters_see_cancellation() {
        let mut events = TabEvents::new();
        let mut rx = events.wait_for(|_, _| true);
        events.cancel_waiters();
        assert!(rx.try_recv().is_err());
    }
}

#[cfg(test)]
mod more_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn dialogs_open_and_close() {
        let mut e = TabEvents::new();
        e.on_event(
            "Page.javascriptDialogOpening",
            &json!({"type": "confirm", "message": "Sure?", "url": "u"}),
        );
        assert_eq!(e.dialog.as_ref().map(|d| d.kind.as_str()), Some("confirm"));
        e.on_event("Page.javascriptDialogClosed", &json!({"result": true}));
        assert!(e.dialog.is_none());
    }

    #[test]
    fn network_requests_are_tracked_newest_first_and_bounded() {
        let mut e = TabEvents::new();
        e.on_event("Network.requestWillBeSent", &json!({"requestId": "1", "type": "Fetch", "timestamp": 1.0, "request": {"method": "GET", "url": "http://x/a", "headers": {}}}));
        e.on_event("Network.responseReceived", &json!({"requestId": "1", "type": "Fetch", "response": {"status": 200, "mimeType": "application/json", "headers": {"a": "b"}}}));
        e.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "1", "timestamp": 1.25, "encodedDataLength": 42}),
        );
        e.on_event("Network.requestWillBeSent", &json!({"requestId": "2", "type": "XHR", "timestamp": 2.0, "request": {"method": "POST", "url": "http://x/b"}}));
        e.on_event(
            "Network.loadingFailed",
            &json!({"requestId": "2", "timestamp": 2.5, "errorText": "net::ERR_FAILED"}),
        );
        let all: Vec<&Request> = e.requests().collect();
        assert_eq!(all[0].url, "http://x/b");
        assert_eq!(all[0].failed.as_deref(), Some("net::ERR_FAILED"));
        assert_eq!(
            (all[1].status, all[1].size, all[1].duration_ms),
            (Some(200), Some(42), Some(250.0))
        );
        for i in 0..NETWORK_CAPACITY + 10 {
            e.on_event(
                "Network.requestWillBeSent",
                &json!({"requestId": format!("r{i}"), "request": {"method": "GET", "url": "u"}}),
            );
        }
        assert_eq!(e.requests().count(), NETWORK_CAPACITY);
    }
}
