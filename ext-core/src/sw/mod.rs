//! The service worker: what the JS glue calls. It owns the bridge connections and the tab
//! queues, and answers every command exactly once (result or coded error).

mod bridge;
mod conns;
mod control;
mod gate;
mod host;
mod pairing;
mod panel;
mod push;
mod recorder;

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::chrome;
use crate::exec::Exec;
use crate::platform;
use crate::protocol::{BrowserEvent, ExtensionFrame, ExtensionInfo, TabId, WireError};

/// Name of the periodic wake-up alarm.
const WAKE_ALARM: &str = "kapture-wake";
/// Alarm period in minutes: how soon a newly started kapture is found. Unpacked extensions
/// may go below Chrome's 30 s minimum; each wake-up costs one short native-host process.
const WAKE_PERIOD_MIN: f64 = 0.1;

/// Shared state of the worker.
pub struct App {
    ext: RefCell<ExtensionInfo>,
    /// The viewport the server that launched this browser asked for (headless), if any.
    viewport: std::cell::Cell<Option<crate::protocol::Viewport>>,
    bridge: conns::Bridge,
    /// The executor core: every command's gate, tab queue and dispatch.
    exec: Exec<host::ChromeHost>,
    panels: push::Panels,
    /// Per-tab command history, in memory; written to storage in bursts.
    history: RefCell<std::collections::HashMap<TabId, Vec<crate::ui::HistoryEntry>>>,
    history_dirty: RefCell<std::collections::BTreeSet<TabId>>,
    history_flush: std::cell::Cell<bool>,
    approvals: gate::Approvals,
    /// Pause, the person's rules, the feed, spent session budgets (the side panel's).
    control: control::Control,
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
    /// Run one command from a server (for the MCP session `asker`, when it names one); the
    /// answer always comes back (never a hang). `rules`: the sender's policy and how long an `ask` waits for a person.
    async fn run_command(
        &self,
        asker: crate::exec::Asker<'_>,
        tab_id: Option<TabId>,
        method: &str,
        params: Value,
        timeout_ms: u64,
        rules: crate::exec::Rules,
    ) -> Result<Value, WireError> {
        self.exec
            .run_as(asker, tab_id, method, params, timeout_ms, rules)
            .await
    }
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
            transport: host::transport(),
        };
        Worker {
            app: Rc::new_cyclic(|app| App {
                ext: RefCell::new(ext),
                viewport: Default::default(),
                bridge: conns::Bridge::default(),
                exec: Exec::new(Rc::new(host::ChromeHost { app: app.clone() })),
                panels: Default::default(),
                history: Default::default(),
                history_dirty: Default::default(),
                history_flush: Default::default(),
                approvals: Default::default(),
                control: Default::default(),
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
        // The toolbar icon opens the side panel (a browser without one keeps the icon inert).
        wasm_bindgen_futures::spawn_local(async {
            let _ = chrome::side_panel::open_on_action_click().await;
        });
        let app = self.app.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let instance = browser_instance().await;
            app.ext.borrow_mut().instance = instance;
            control::restore_ledger(&app).await;
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
        if let Some(tab_id) = tab_id {
            let params: Value = chrome::from_js(params).unwrap_or(Value::Null);
            let asked =
                self.app
                    .exec
                    .tabs
                    .on_cdp_event(tab_id, session_id.as_deref(), &method, &params);
            recorder::on_widget_requests(&self.app, tab_id, asked);
        }
    }

    pub fn on_debugger_detach(&self, tab_id: Option<i32>, reason: String) {
        if let Some(tab_id) = tab_id {
            self.app.exec.tabs.on_detach(tab_id, &reason);
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
                app.exec.tabs.on_opened(opener, &url);
            });
        }
        // A tab opened on an origin a server's agents may not read is told to it by its
        // origin only: each server under its own rules (and the person's).
        let person = control::person_now(&self.app);
        let judged = crate::policy::origin_of(&url).is_some();
        self.app.bridge.broadcast_each(|policy| {
            let url = if judged {
                crate::policy::frames::tab_view(&person.apply(policy), &url, "").0
            } else {
                url.clone()
            };
            ExtensionFrame::Event {
                event: BrowserEvent::TabCreated {
                    tab_id,
                    opener_tab_id,
                    url,
                },
            }
        });
    }

    pub fn on_tab_removed(&self, tab_id: i32) {
        self.app.exec.tabs.on_removed(tab_id);
        // Its questions go with it (nobody can judge an action on a tab that is gone).
        gate::tab_closed(&self.app, tab_id);
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
