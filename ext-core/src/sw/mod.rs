//! The service worker: what the JS glue calls. It owns the bridge connections and the tab
//! queues, and answers every command exactly once (result or coded error).

mod bridge;
mod gate;
mod panel;
mod recorder;
mod tabs;

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::chrome;
use crate::methods::{Click, Closed, Command, DownloadArgs, Downloaded, Navigate};
use crate::platform;
use crate::protocol::{BrowserEvent, ErrorCode, ExtensionFrame, ExtensionInfo, TabId, WireError};
use crate::router::Route;

/// Name of the periodic wake-up alarm.
const WAKE_ALARM: &str = "kapture-wake";
/// Alarm period in minutes: how soon a newly started kapture is found. Unpacked extensions
/// may go below Chrome's 30 s minimum; each wake-up costs one short native-host process.
const WAKE_PERIOD_MIN: f64 = 0.1;

/// Shared state of the worker.
pub struct App {
    ext: RefCell<ExtensionInfo>,
    bridge: bridge::Bridge,
    tabs: tabs::Tabs,
    panels: panel::Panels,
    /// Per-tab command history, in memory; written to storage in bursts.
    history: RefCell<std::collections::HashMap<TabId, Vec<crate::ui::HistoryEntry>>>,
    history_dirty: RefCell<std::collections::BTreeSet<TabId>>,
    history_flush: std::cell::Cell<bool>,
    approvals: gate::Approvals,
    /// The servers' latest audit entries, for the panel (bounded).
    audit: RefCell<std::collections::VecDeque<Value>>,
    /// Commands being run, by server port and id, to stop one its server cancelled.
    running: RefCell<
        std::collections::HashMap<(u16, crate::protocol::CommandId), futures::future::AbortHandle>,
    >,
    /// The saved scenarios as kapture last described them (for dependency suggestions).
    scenarios: RefCell<Vec<crate::scenario::ScenarioSummary>>,
    /// Serialises changes to the recordings waiting for a kapture.
    recordings_lock: futures::lock::Mutex<()>,
}

impl App {
    /// Run one command from a server; the answer always comes back (never a hang).
    /// `rules`: the sender's policy and how long an `ask` waits for a person.
    async fn run_command(
        &self,
        tab_id: Option<TabId>,
        method: &str,
        params: Value,
        timeout_ms: u64,
        rules: (Rc<crate::policy::Policy>, u64),
    ) -> Result<Value, WireError> {
        let deadline_ms = platform::now_ms() + timeout_ms as f64;
        // Decoded once: bad arguments are `BAD_ARGS` before any tab is touched.
        let cmd = Command::decode(method, params)?;
        match cmd.route() {
            Route::Browser => {
                // A browser method may wait for an approval before its own work.
                let limit = timeout_ms + rules.1;
                let run = self.browser_method(tab_id, cmd, deadline_ms + rules.1 as f64, rules);
                platform::timeout(std::time::Duration::from_millis(limit), run)
                    .await
                    .unwrap_or_else(|| {
                        Err(WireError::new(
                            ErrorCode::Timeout,
                            format!("{method} did not finish in {timeout_ms} ms"),
                        ))
                    })
            }
            Route::Tab => {
                let tab_id = match tab_id {
                    // A tab under control is known to exist (its removal is an event).
                    Some(id) if self.tabs.is_open(id) => id,
                    Some(id) => {
                        chrome::tabs::get(id).await.map_err(|_| {
                            WireError::new(
                                ErrorCode::TabNotFound,
                                format!("there is no tab with id {id}"),
                            )
                        })?;
                        id
                    }
                    None => tabs::default_tab().await?,
                };
                let guard = gate::check(self, tab_id, &cmd, rules.0, rules.1).await?;
                // The command's clock starts once it is allowed (a person may have taken a while).
                let deadline_ms = platform::now_ms() + timeout_ms as f64;
                self.queue(tab_id, cmd, deadline_ms, guard).await
            }
        }
    }

    /// Queue a command the browser methods make themselves (judged where they were asked).
    async fn on_tab(
        &self,
        tab_id: TabId,
        command: Command,
        deadline_ms: f64,
    ) -> Result<Value, WireError> {
        self.queue(tab_id, command, deadline_ms, None).await
    }

    async fn queue(
        &self,
        tab_id: TabId,
        command: Command,
        deadline_ms: f64,
        guard: Option<gate::Guard>,
    ) -> Result<Value, WireError> {
        let (reply, answer) = oneshot::channel();
        self.tabs.enqueue(
            tab_id,
            tabs::Job {
                command,
                deadline_ms,
                reply,
                guard,
            },
        );
        answer.await.unwrap_or_else(|_| {
            Err(WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab_id} was closed"),
            ))
        })
    }

    async fn browser_method(
        &self,
        tab_id: Option<TabId>,
        cmd: Command,
        deadline_ms: f64,
        rules: (Rc<crate::policy::Policy>, u64),
    ) -> Result<Value, WireError> {
        let need_tab = || {
            tab_id.ok_or_else(|| {
                WireError::new(ErrorCode::BadArgs, format!("{} needs a tab id", cmd.name()))
            })
        };
        let value = match &cmd {
            Command::TabsList(_) => {
                let tabs = chrome::tabs::query(&json!({})).await?;
                json!(tabs
                    .into_iter()
                    .map(|t| shown_tab(&rules.0, t))
                    .collect::<Vec<_>>())
            }
            Command::TabsNew(p) => {
                let tab = chrome::tabs::create("about:blank").await?;
                if let Some(url) = p.url.clone() {
                    let nav = Command::Navigate(Navigate { url });
                    let guard =
                        gate::check(self, tab.tab_id, &nav, rules.0.clone(), rules.1).await?;
                    self.queue(tab.tab_id, nav, deadline_ms, guard).await?;
                }
                json!(shown_tab(&rules.0, chrome::tabs::get(tab.tab_id).await?))
            }
            Command::TabsSelect(_) => {
                let tab = chrome::tabs::activate(need_tab()?).await?;
                let _ = chrome::windows::focus(tab.window_id).await;
                json!(shown_tab(&rules.0, tab))
            }
            Command::TabsClose(_) => {
                let id = need_tab()?;
                // Closing a tab changes the person's browser (unsaved work goes with it):
                // judged like any interaction with that tab's page.
                gate::check(self, id, &cmd, rules.0.clone(), rules.1).await?;
                chrome::tabs::remove(id).await?;
                json!(Closed { tab_id: id })
            }
            Command::Download(p) => {
                let tab = match tab_id {
                    Some(t) => t,
                    None => tabs::default_tab().await?,
                };
                gate::check(self, tab, &cmd, rules.0.clone(), rules.1).await?;
                json!(self.download(Some(tab), p.clone(), deadline_ms).await?)
            }
            other => {
                return Err(WireError::new(
                    ErrorCode::Internal,
                    format!("{} is not a browser method", other.name()),
                ))
            }
        };
        Ok(value)
    }
}

/// A tab as this server may see it: a tab whose origin it may not read shows only that
/// origin and why, never its title or path.
fn shown_tab(
    policy: &crate::policy::Policy,
    mut tab: crate::methods::TabInfo,
) -> crate::methods::TabInfo {
    let (url, title) = crate::policy::frames::tab_view(policy, &tab.url, &tab.title);
    tab.url = url;
    tab.title = title;
    tab
}

/// This browser session's random id: kept in session storage so that a restarted service
/// worker reconnects as the same browser.
async fn browser_instance() -> String {
    const KEY: &str = "kapture.instance";
    if let Ok(Some(Value::String(id))) = chrome::storage::session_get(KEY).await {
        return id;
    }
    let id: String = (0..4)
        .map(|_| {
            format!(
                "{:08x}",
                (js_sys::Math::random() * f64::from(u32::MAX)) as u32
            )
        })
        .collect();
    let _ = chrome::storage::session_set(KEY, &Value::String(id.clone())).await;
    id
}

impl App {
    /// Download a URL, or what clicking an element downloads, and wait until the file is
    /// complete (polling `chrome.downloads`, bounded by the command's deadline).
    async fn download(
        &self,
        tab_id: Option<TabId>,
        p: DownloadArgs,
        deadline_ms: f64,
    ) -> Result<Downloaded, WireError> {
        let tab = match tab_id {
            Some(t) => t,
            None => tabs::default_tab().await?,
        };
        let id = match (&p.url, p.target.get()) {
            (Some(_), Some(_)) => {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "give either url or the element to click, not both",
                ))
            }
            (None, None) => {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "give the url to download, or the ref/selector of a link to click",
                ))
            }
            (Some(url), None) => chrome::downloads::start(url).await?,
            (None, Some(target)) => {
                let before = chrome::downloads::latest()
                    .await?
                    .map(|d| d.id)
                    .unwrap_or(-1);
                let click = Command::Click(Click {
                    target,
                    button: Default::default(),
                    double_click: false,
                    modifiers: vec![],
                });
                self.on_tab(tab, click, deadline_ms).await?;
                loop {
                    match chrome::downloads::latest().await? {
                        Some(d) if d.id > before => break d.id,
                        _ if platform::now_ms() > deadline_ms => {
                            return Err(WireError::new(
                                ErrorCode::DownloadFailed,
                                "the click started no download",
                            ))
                        }
                        _ => platform::sleep(DOWNLOAD_POLL).await,
                    }
                }
            }
        };
        loop {
            let item = chrome::downloads::get(id).await?;
            match item {
                Some(d) if d.state == "complete" => {
                    return Ok(Downloaded {
                        tab_id: tab,
                        path: d.filename,
                        url: if d.final_url.is_empty() {
                            d.url
                        } else {
                            d.final_url
                        },
                        bytes: d.file_size.max(0.0) as u64,
                        mime_type: d.mime,
                    })
                }
                Some(d) if d.state == "interrupted" => {
                    let why = d.error.unwrap_or_else(|| "interrupted".into());
                    return Err(WireError::new(
                        ErrorCode::DownloadFailed,
                        format!("the download of {} failed: {why}", d.url),
                    ));
                }
                None => {
                    return Err(WireError::new(
                        ErrorCode::DownloadFailed,
                        "the download disappeared",
                    ))
                }
                _ => platform::sleep(DOWNLOAD_POLL).await,
            }
        }
    }
}

/// Pause between two looks at a download's progress.
const DOWNLOAD_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// The worker object the JS glue creates once and forwards every event to.
#[wasm_bindgen]
pub struct Worker {
    app: Rc<App>,
}

#[wasm_bindgen]
impl Worker {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Worker {
        let ext = ExtensionInfo {
            id: chrome::runtime::extension_id(),
            version: chrome::runtime::manifest_version(),
            browser: chrome::runtime::user_agent(),
            // Set by `start` from session storage; no connection is made before that.
            instance: String::new(),
            launched_by: None,
            browser_run: None,
        };
        Worker {
            app: Rc::new(App {
                ext: RefCell::new(ext),
                bridge: bridge::Bridge::default(),
                tabs: tabs::Tabs::default(),
                panels: Default::default(),
                history: Default::default(),
                history_dirty: Default::default(),
                history_flush: Default::default(),
                approvals: Default::default(),
                audit: Default::default(),
                running: Default::default(),
                scenarios: Default::default(),
                recordings_lock: futures::lock::Mutex::new(()),
            }),
        }
    }

    /// First run after the worker started: arm the alarm, show state, find servers.
    pub fn start(&self) {
        chrome::alarms::create_periodic(WAKE_ALARM, WAKE_PERIOD_MIN);
        bridge::update_badge(&self.app);
        let app = self.app.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let instance = browser_instance().await;
            app.ext.borrow_mut().instance = instance;
            bridge::wake(&app);
        });
    }

    /// A page opened a port (the panel).
    pub fn on_port(&self, port: JsValue) {
        panel::on_port(&self.app, port);
    }

    pub fn on_alarm(&self, _name: String) {
        bridge::wake(&self.app);
    }

    pub fn on_debugger_event(
        &self,
        tab_id: Option<i32>,
        session_id: Option<String>,
        method: String,
        params: JsValue,
    ) {
        // Events of a child session (an out-of-process iframe Chrome auto-attached) are not
        // the tab's own: its navigations and contexts must not be taken for the page's.
        // Only its own auto-attached frames (nested out-of-process iframes) are kept.
        if session_id.is_some() && !method.starts_with("Target.") {
            return;
        }
        if let Some(tab_id) = tab_id {
            let params: Value = chrome::from_js(params).unwrap_or(Value::Null);
            let asked = self.app.tabs.on_event(tab_id, &method, &params);
            recorder::on_widget_requests(&self.app, tab_id, asked);
        }
    }

    pub fn on_debugger_detach(&self, tab_id: Option<i32>, reason: String) {
        if let Some(tab_id) = tab_id {
            self.app.tabs.on_detach(tab_id, &reason);
            self.app.bridge.broadcast(&ExtensionFrame::Event {
                event: BrowserEvent::Detached { tab_id, reason },
            });
        }
    }

    pub fn on_tab_created(&self, tab_id: i32, opener_tab_id: Option<i32>, url: String) {
        if let Some(opener) = opener_tab_id {
            let app = self.app.clone();
            let first = url.clone();
            wasm_bindgen_futures::spawn_local(async move {
                // `window.open` tabs are created before they know their URL: ask for it a
                // few times (bounded) before noting the tab in the opener's recording.
                let mut url = first;
                for _ in 0..40 {
                    if !url.is_empty() && url != "about:blank" {
                        break;
                    }
                    platform::sleep(std::time::Duration::from_millis(50)).await;
                    match chrome::tabs::get(tab_id).await {
                        Ok(tab) => url = tab.url,
                        Err(_) => break,
                    }
                }
                app.tabs.on_opened(opener, &url);
            });
        }
        // A tab opened on an origin agents may not read is told by its origin only.
        let url = if crate::policy::origin_of(&url).is_some() {
            crate::policy::frames::tab_view(&bridge::panel_rules(&self.app).0, &url, "").0
        } else {
            url
        };
        let event = BrowserEvent::TabCreated {
            tab_id,
            opener_tab_id,
            url,
        };
        self.app.bridge.broadcast(&ExtensionFrame::Event { event });
    }

    pub fn on_tab_removed(&self, tab_id: i32) {
        self.app.tabs.on_removed(tab_id);
        self.app.bridge.broadcast(&ExtensionFrame::Event {
            event: BrowserEvent::TabRemoved { tab_id },
        });
    }
}

impl Default for Worker {
    fn default() -> Self {
        Self::new()
    }
}
