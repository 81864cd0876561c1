//! The executor core's [`Host`] over a CDP connection: tabs are the browser's page targets
//! (numbered here, never reused), a tab's debugger session is a flat session of its target,
//! its events feed the executor's tab bookkeeping as `chrome.debugger` events do in the
//! extension. Lives on the native engine's thread (a tokio `LocalSet`).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use ext_core::exec::{DownloadItem, Exec, Host, Placement};
use ext_core::methods::TabInfo;
use ext_core::policy::gate::Answer;
use ext_core::protocol::{BrowserEvent, ErrorCode, TabId, WireError};
use ext_core::ui::ApprovalView;
use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use super::ask::Asking;
use super::downloads::Downloads;
use crate::cdp::{Browser, Event, Routed, TargetInfo};

/// Where browser events go (the hub: the journal, the tools' "tabs opened" news).
pub type EventSink = Arc<dyn Fn(BrowserEvent) + Send + Sync>;

/// Which browser contexts' pages are tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contexts {
    /// Every context's: a browser kapture launched, a throwaway endpoint's (pools create
    /// contexts of their own).
    All,
    /// The default context's only: a browser that may be a person's own. Their incognito
    /// windows and other contexts — which the extension, not allowed in incognito by
    /// default, never sees — are not listed, not attachable, and what they open not adopted.
    DefaultOnly,
}

/// What the browser said of its contexts, for [`Contexts::DefaultOnly`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    All,
    /// The default context's id, as `Target.getBrowserContexts` gives it.
    Default(String),
    /// An older browser that does not name its default: every context but those it lists
    /// (the ones made by `Target.createBrowserContext`).
    NotListed(Vec<String>),
}

impl Scope {
    /// Read from `Target.getBrowserContexts`' answer.
    fn from_answer(answer: &Value) -> Scope {
        if let Some(d) = answer
            .get("defaultBrowserContextId")
            .and_then(Value::as_str)
        {
            return Scope::Default(d.to_string());
        }
        let listed = answer
            .get("browserContextIds")
            .and_then(Value::as_array)
            .map(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Scope::NotListed(listed)
    }

    /// Whether a target in `context` is a tab. A target without a context id is one only
    /// where the default context cannot be named (a browser too old to say either).
    fn shows(&self, context: Option<&str>) -> bool {
        match (self, context) {
            (Scope::All, _) => true,
            (Scope::Default(d), Some(c)) => c == d,
            (Scope::Default(_), None) => false,
            (Scope::NotListed(listed), Some(c)) => !listed.iter().any(|l| l == c),
            (Scope::NotListed(_), None) => true,
        }
    }
}

/// The native engine's host: one browser connection.
pub struct NativeHost {
    browser: Browser,
    contexts: Contexts,
    /// The default context's id once the browser named it (it does not change while
    /// connected).
    default_context: RefCell<Option<String>>,
    exec: RefCell<Weak<Exec<NativeHost>>>,
    /// Tab ids by target id and back; ids come from a process-wide counter so that a
    /// reconnected browser's tabs never take an old tab's number.
    ids: RefCell<HashMap<String, TabId>>,
    targets: RefCell<HashMap<TabId, String>>,
    /// Each attached tab's flat session.
    sessions: RefCell<HashMap<TabId, String>>,
    /// Targets closed during this connection: the browser may list one for a moment after
    /// `Target.closeTarget` answered, a closed tab is never shown again.
    closed: RefCell<HashSet<String>>,
    next_tab: Arc<AtomicI32>,
    sink: EventSink,
    /// Approvals: asked of the MCP client whose call triggered them.
    asking: Asking,
    /// Downloads, when the browser agreed to save them where kapture can read them; else
    /// why browser_download is unsupported.
    pub downloads: Result<Downloads, WireError>,
    /// Background pages opened only to download a URL: never shown as tabs.
    helpers: RefCell<HashSet<String>>,
    /// Browser contexts kapture made for MCP sessions that asked to be isolated, by the
    /// session's label: their pages are tabs even where only the default context is driven
    /// (kapture made them; they are nobody's own), and a context goes when its last tab does.
    isolated: RefCell<HashMap<String, String>>,
    /// The viewport every attached tab is given (a headless browser kapture launched).
    viewport: Option<ext_core::protocol::Viewport>,
}

impl NativeHost {
    pub fn new(
        browser: Browser,
        contexts: Contexts,
        next_tab: Arc<AtomicI32>,
        sink: EventSink,
        asking: Asking,
        downloads: Result<Downloads, WireError>,
        viewport: Option<ext_core::protocol::Viewport>,
    ) -> Rc<NativeHost> {
        Rc::new(NativeHost {
            viewport,
            asking,
            downloads,
            helpers: RefCell::default(),
            isolated: RefCell::default(),
            browser,
            contexts,
            default_context: RefCell::default(),
            exec: RefCell::default(),
            ids: RefCell::default(),
            targets: RefCell::default(),
            sessions: RefCell::default(),
            closed: RefCell::default(),
            next_tab,
            sink,
        })
    }

    /// Link the executor that runs over this host (its tab bookkeeping takes our events).
    pub fn set_exec(&self, exec: &Rc<Exec<NativeHost>>) {
        *self.exec.borrow_mut() = Rc::downgrade(exec);
    }

    fn exec(&self) -> Option<Rc<Exec<NativeHost>>> {
        self.exec.borrow().upgrade()
    }

    /// The browser's open pages that are tabs, in its order.
    async fn pages(&self) -> Result<Vec<TargetInfo>, WireError> {
        let scope = self.scope().await?;
        let mut pages = self.browser.pages().await?;
        let (closed, helpers) = (self.closed.borrow(), self.helpers.borrow());
        pages.retain(|p| {
            (scope.shows(p.browser_context_id.as_deref()) || self.is_ours(p))
                && !closed.contains(&p.target_id)
                && !helpers.contains(&p.target_id)
        });
        Ok(pages)
    }

    /// Which contexts' pages are tabs now; asked of the browser until it names its default.
    async fn scope(&self) -> Result<Scope, WireError> {
        if self.contexts == Contexts::All {
            return Ok(Scope::All);
        }
        let known = self.default_context.borrow().clone();
        if let Some(d) = known {
            return Ok(Scope::Default(d));
        }
        let answer = self
            .browser
            .call(None, "Target.getBrowserContexts", json!({}))
            .await?;
        let scope = Scope::from_answer(&answer);
        if let Scope::Default(d) = &scope {
            *self.default_context.borrow_mut() = Some(d.clone());
        }
        Ok(scope)
    }

    fn id_for(&self, target_id: &str) -> TabId {
        if let Some(id) = self.ids.borrow().get(target_id) {
            return *id;
        }
        // Ids run away from 0 in the direction they started: down for a launched browser's
        // (`bridge::select::NATIVE_TAB_BASE`, apart from the extension's), else up from 1.
        let id = if self.next_tab.load(Ordering::Relaxed) < 0 {
            self.next_tab.fetch_sub(1, Ordering::Relaxed)
        } else {
            self.next_tab.fetch_add(1, Ordering::Relaxed)
        };
        self.ids.borrow_mut().insert(target_id.to_string(), id);
        self.targets.borrow_mut().insert(id, target_id.to_string());
        id
    }

    fn target_of(&self, tab: TabId) -> Result<String, WireError> {
        if let Some(t) = self.targets.borrow().get(&tab) {
            return Ok(t.clone());
        }
        Err(WireError::new(
            ErrorCode::TabNotFound,
            format!("there is no tab with id {tab}"),
        ))
    }

    /// Whether the page lives in a context kapture made for a session.
    fn is_ours(&self, page: &TargetInfo) -> bool {
        page.browser_context_id
            .as_ref()
            .is_some_and(|c| self.isolated.borrow().values().any(|o| o == c))
    }

    /// The label of the session whose isolated context holds the page.
    fn context_label(&self, page: &TargetInfo) -> Option<String> {
        let context = page.browser_context_id.as_ref()?;
        self.isolated
            .borrow()
            .iter()
            .find(|(_, c)| *c == context)
            .map(|(label, _)| label.clone())
    }

    /// The session's isolated context, made on its first tab.
    async fn context_for(&self, label: &str) -> Result<String, WireError> {
        if let Some(c) = self.isolated.borrow().get(label) {
            return Ok(c.clone());
        }
        let made = self
            .browser
            .call(None, "Target.createBrowserContext", json!({}))
            .await?;
        let id = made
            .get("browserContextId")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                WireError::new(
                    ErrorCode::Internal,
                    "Target.createBrowserContext: no browserContextId",
                )
            })?
            .to_string();
        self.isolated
            .borrow_mut()
            .insert(label.to_string(), id.clone());
        Ok(id)
    }

    /// A session's isolated context whose last tab closed goes too (its cookies with it).
    async fn drop_context_if_empty(&self, context: &str) {
        let label = self
            .isolated
            .borrow()
            .iter()
            .find(|(_, c)| *c == context)
            .map(|(l, _)| l.clone());
        let Some(label) = label else { return };
        let Ok(pages) = self.browser.pages().await else {
            return;
        };
        let closed = self.closed.borrow().clone();
        let left = pages.iter().any(|p| {
            p.browser_context_id.as_deref() == Some(context) && !closed.contains(&p.target_id)
        });
        if !left {
            self.isolated.borrow_mut().remove(&label);
            let _ = self
                .browser
                .call(
                    None,
                    "Target.disposeBrowserContext",
                    json!({"browserContextId": context}),
                )
                .await;
        }
    }

    fn info(&self, index: usize, t: &TargetInfo) -> TabInfo {
        let tab_id = self.id_for(&t.target_id);
        TabInfo {
            // There are no tab groups over CDP: a tab names a group only when it is in a
            // session's own context.
            group: self.context_label(t),
            tab_id,
            index: index as u32,
            window_id: 1,
            url: t.url.clone(),
            title: t.title.clone(),
            // CDP does not say which page has focus: the browser's first page stands for it.
            active: index == 0,
        }
    }

    /// The target is gone: the executor ends its commands, the hub hears of it.
    fn on_destroyed(&self, target_id: &str) {
        let Some(tab) = self.ids.borrow_mut().remove(target_id) else {
            return;
        };
        self.targets.borrow_mut().remove(&tab);
        self.sessions.borrow_mut().remove(&tab);
        if self.closed.borrow().len() >= 4096 {
            self.closed.borrow_mut().clear();
        }
        self.closed.borrow_mut().insert(target_id.to_string());
        if let Some(exec) = self.exec() {
            exec.tabs.on_removed(tab);
        }
        (self.sink)(BrowserEvent::TabRemoved { tab_id: tab });
    }

    /// A page opened another (`window.open`, a target=_blank link).
    fn on_created(&self, info: &Value) {
        if info.get("type").and_then(Value::as_str) != Some("page") {
            return;
        }
        let (Some(target), Some(opener)) = (
            info.get("targetId").and_then(Value::as_str),
            info.get("openerId").and_then(Value::as_str),
        ) else {
            return;
        };
        let Some(opener) = self.ids.borrow().get(opener).copied() else {
            return;
        };
        // A tab's popup shares its context; should a browser put it in another, it is not
        // adopted where only the default context is driven.
        if self.contexts == Contexts::DefaultOnly {
            let context = info.get("browserContextId").and_then(Value::as_str);
            let default = self.default_context.borrow().clone();
            let ours = context.is_some_and(|c| self.isolated.borrow().values().any(|o| o == c));
            if !ours && default.is_some_and(|d| context != Some(d.as_str())) {
                return;
            }
        }
        let tab = self.id_for(target);
        let url = info
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(exec) = self.exec() {
            exec.tabs.on_opened(opener, &url);
        }
        (self.sink)(BrowserEvent::TabCreated {
            tab_id: tab,
            opener_tab_id: Some(opener),
            url,
        });
    }
}

/// The browser's own events (targets created, destroyed, crashed) until it goes away.
pub async fn browser_pump(host: Weak<NativeHost>, mut events: broadcast::Receiver<Event>) {
    loop {
        let event = match events.recv().await {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "browser events came faster than handled");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(host) = host.upgrade() else { return };
        let target = |p: &Value| {
            p.get("targetId")
                .or_else(|| p.pointer("/targetInfo/targetId"))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        match event.method.as_str() {
            "Target.targetDestroyed" => {
                if let Some(t) = target(&event.params) {
                    host.on_destroyed(&t);
                }
            }
            "Target.targetCrashed" => {
                if let Some(tab) =
                    target(&event.params).and_then(|t| host.ids.borrow().get(&t).copied())
                {
                    if let Some(exec) = host.exec() {
                        exec.tabs.on_detach(tab, "target_crashed");
                    }
                    (host.sink)(BrowserEvent::Detached {
                        tab_id: tab,
                        reason: "target_crashed".into(),
                    });
                }
            }
            "Target.targetCreated" => {
                if let Some(info) = event.params.get("targetInfo") {
                    host.on_created(info);
                }
            }
            "Browser.downloadWillBegin" | "Browser.downloadProgress" => {
                tracing::debug!(event = %event.method, params = %event.params, "download news");
                let ended = host
                    .downloads
                    .as_ref()
                    .ok()
                    .and_then(|d| d.on_event(&event.method, &event.params));
                // A page opened only to download is closed once its download ended.
                if let Some(frame) = ended.filter(|f| host.helpers.borrow().contains(f)) {
                    let browser = host.browser.clone();
                    tokio::task::spawn_local(async move {
                        let _ = browser.close_target(&frame).await;
                    });
                }
            }
            _ => {}
        }
    }
}

/// One tab's flat session: hand answers to their callers, feed its events to the executor
/// (which keeps a child session's apart, as for the extension), and say when it ends.
async fn session_pump(
    host: Weak<NativeHost>,
    tab: TabId,
    session: String,
    mut route: mpsc::Receiver<Routed>,
) {
    while let Some(item) = route.recv().await {
        let Some(event) = item.deliver() else {
            continue;
        };
        let Some(exec) = host.upgrade().and_then(|h| h.exec()) else {
            return;
        };
        // A child session's events are told apart by the executor (the tab's own come on
        // the flat session itself).
        let child = event.session.as_deref().filter(|s| *s != session);
        // The recorder widget is the extension's; what it asks is not answered natively.
        let _ = exec
            .tabs
            .on_cdp_event(tab, child, &event.method, &event.params);
    }
    let Some(host) = host.upgrade() else { return };
    let ours = host.sessions.borrow().get(&tab) == Some(&session);
    if ours && !host.browser.is_closed() {
        host.sessions.borrow_mut().remove(&tab);
        if let Some(exec) = host.exec() {
            exec.tabs.on_detach(tab, "target_closed");
        }
    }
}

impl Host for NativeHost {
    fn viewport(&self) -> Option<ext_core::protocol::Viewport> {
        self.viewport
    }

    async fn tab(&self, tab: TabId) -> Result<TabInfo, WireError> {
        let target = self.target_of(tab)?;
        let pages = self.pages().await?;
        pages
            .iter()
            .enumerate()
            .find(|(_, t)| t.target_id == target)
            .map(|(i, t)| self.info(i, t))
            .ok_or_else(|| WireError::new(ErrorCode::TabClosed, format!("tab {tab} was closed")))
    }

    async fn list_tabs(&self) -> Result<Vec<TabInfo>, WireError> {
        let pages = self.pages().await?;
        Ok(pages
            .iter()
            .enumerate()
            .map(|(i, t)| self.info(i, t))
            .collect())
    }

    async fn default_tab(&self) -> Result<TabId, WireError> {
        match self.pages().await?.first() {
            Some(t) => Ok(self.id_for(&t.target_id)),
            None => Ok(self
                .create_tab("about:blank", &Placement::default())
                .await?
                .tab_id),
        }
    }

    async fn create_tab(&self, url: &str, place: &Placement) -> Result<TabInfo, WireError> {
        let context = match (place.isolated, place.group.as_deref()) {
            (true, label) => Some(self.context_for(label.unwrap_or("isolated")).await?),
            (false, _) => None,
        };
        let target = self.browser.create_page(url, context.as_deref()).await?;
        self.tab(self.id_for(&target)).await
    }

    async fn activate_tab(&self, tab: TabId) -> Result<TabInfo, WireError> {
        let target = self.target_of(tab)?;
        self.browser
            .call(None, "Target.activateTarget", json!({"targetId": target}))
            .await?;
        self.tab(tab).await
    }

    async fn close_tab(&self, tab: TabId) -> Result<(), WireError> {
        let target = self.target_of(tab)?;
        let any_isolated = !self.isolated.borrow().is_empty();
        let context = match any_isolated {
            false => None,
            true => self
                .browser
                .pages()
                .await?
                .into_iter()
                .find(|p| p.target_id == target)
                .and_then(|p| p.browser_context_id),
        };
        self.browser.close_target(&target).await?;
        // Said at once (the browser's news of it may come later).
        self.on_destroyed(&target);
        if let Some(context) = context {
            self.drop_context_if_empty(&context).await;
        }
        Ok(())
    }

    async fn attach(&self, tab: TabId) -> Result<(), WireError> {
        let target = self.target_of(tab)?;
        let old = self.sessions.borrow_mut().remove(&tab);
        if let Some(old) = old {
            let _ = self.browser.detach(&old).await;
        }
        let attached = self.browser.attach(&target).await?;
        self.sessions
            .borrow_mut()
            .insert(tab, attached.session.clone());
        let me = self
            .exec()
            .map(|e| Rc::downgrade(e.host()))
            .unwrap_or_default();
        tokio::task::spawn_local(session_pump(me, tab, attached.session, attached.route));
        Ok(())
    }

    async fn detach(&self, tab: TabId) -> Result<(), WireError> {
        let session = self.sessions.borrow_mut().remove(&tab);
        match session {
            Some(s) => self.browser.detach(&s).await,
            None => Ok(()),
        }
    }

    async fn send(
        &self,
        tab: TabId,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        let own = self.sessions.borrow().get(&tab).cloned();
        let Some(own) = own else {
            return Err(WireError::new(
                ErrorCode::TabClosed,
                format!("tab {tab} is not attached (closed, or its session ended)"),
            ));
        };
        let started = std::time::Instant::now();
        // Each command's size and round trip, to see where a tool's time goes
        // (KAPTURE_LOG=trace; the size is counted only then).
        tracing::trace!(method, bytes = params.to_string().len(), "cdp sent");
        let answer = self
            .browser
            .call(Some(session.unwrap_or(&own)), method, params)
            .await;
        tracing::trace!(method, ms = started.elapsed().as_secs_f64() * 1e3, "cdp");
        answer
    }

    async fn safe_mode(&self) -> bool {
        // Safe mode is the extension's switch; natively `--read-only` says it in the policy.
        false
    }

    async fn paused(&self) -> bool {
        // Pausing is the side panel's switch: there is none without the extension.
        false
    }

    fn on_step(&self, _step: ext_core::ui::FeedEntry) {
        // The feed is the side panel's; kapture's own journal records each call.
    }

    async fn ask(&self, request: ApprovalView, wait_ms: u64) -> Answer {
        let (answer, by) = self.asking.ask(&request, wait_ms).await;
        // Journaled as the extension journals a person's answer in its panel, naming who
        // decided: the MCP client's answer, or the rule's fallback when none could be had.
        let said = if by == super::ask::BY_FALLBACK {
            "fallback: deny".into()
        } else {
            answer.name().into()
        };
        (self.sink)(BrowserEvent::Approval {
            tab_id: request.tab_id,
            method: request.method,
            origin: request.origin,
            answer: said,
            by: Some(by.into()),
        });
        answer
    }

    async fn start_download(&self, url: &str) -> Result<i32, WireError> {
        let downloads = self.downloads.as_ref().map_err(Clone::clone)?;
        let before = downloads.newest_id();
        // CDP has no "download this URL": a background page opens it (a file served as an
        // attachment downloads at once); a URL that shows as a page is saved from that
        // page by a same-origin `<a download>`, as a person's "save link as" would.
        let opened = self
            .browser
            .call(
                None,
                "Target.createTarget",
                json!({"url": "about:blank", "background": true}),
            )
            .await?;
        let target = opened
            .get("targetId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.helpers.borrow_mut().insert(target.clone());
        let started = self.download_in(&target, url, before).await;
        if started.is_err() {
            let _ = self.browser.close_target(&target).await;
        }
        started
    }

    async fn latest_download(&self) -> Result<Option<DownloadItem>, WireError> {
        Ok(self.downloads.as_ref().map_err(Clone::clone)?.latest())
    }

    async fn get_download(&self, id: i32) -> Result<Option<DownloadItem>, WireError> {
        Ok(self.downloads.as_ref().map_err(Clone::clone)?.get(id))
    }

    async fn cancel_download(&self, id: i32) -> Result<(), WireError> {
        let downloads = self.downloads.as_ref().map_err(Clone::clone)?;
        // The files are deleted now, and again if the browser still finishes it.
        if let Some(guid) = downloads.cancel(id) {
            let _ = self
                .browser
                .call(None, "Browser.cancelDownload", json!({ "guid": guid }))
                .await;
        }
        Ok(())
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        tokio::task::spawn_local(task);
    }
}

/// The browser refused `Browser.setDownloadBehavior`.
pub fn no_downloads() -> WireError {
    WireError::new(
        ErrorCode::Unsupported,
        "this browser refused to save downloads where kapture can read them (Browser.setDownloadBehavior failed); use the extension engine (--browser launch) for browser_download",
    )
}

/// How long a helper page may take to start its download.
const DOWNLOAD_START: std::time::Duration = std::time::Duration::from_secs(15);

impl NativeHost {
    /// Open `url` in the helper page `target` and wait (bounded) for the download it starts.
    async fn download_in(&self, target: &str, url: &str, before: i32) -> Result<i32, WireError> {
        let downloads = self.downloads.as_ref().map_err(Clone::clone)?;
        let attached = self.browser.attach(target).await?;
        let session = attached.session.clone();
        // Its events are not needed (the download's come to the browser session), but its
        // route must stay open for the session to live, and the answers to this session's
        // calls come through it: delivered until the page closes (dropped, every call here
        // failed as "Target closed").
        let mut route = attached.route;
        tokio::task::spawn_local(async move {
            while let Some(item) = route.recv().await {
                let _ = item.deliver();
            }
        });
        // The page must not act: a script of its own could redirect it elsewhere or hook the
        // click that saves it. Off before it loads, for the session's life.
        self.browser
            .call(
                Some(&session),
                "Emulation.setScriptExecutionDisabled",
                json!({"value": true}),
            )
            .await?;
        let go = async {
            // A download may end, and its helper page close, before an answer comes: what
            // counts is whether a download started (checked below, bounded).
            let _ = self
                .browser
                .call(Some(&session), "Page.navigate", json!({"url": url}))
                .await;
            // A page was shown instead of a download: save it from there.
            let started = tokio::time::timeout(std::time::Duration::from_millis(1500), async {
                loop {
                    if let Some(id) = downloads.started_by(target, before) {
                        return id;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
            })
            .await;
            if let Ok(id) = started {
                return Ok(Some(id));
            }
            let _ = self
                .browser
                .call(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({"expression": SAVE_PAGE, "userGesture": true}),
                )
                .await;
            Ok::<_, WireError>(None)
        };
        let deadline = tokio::time::Instant::now() + DOWNLOAD_START;
        match tokio::time::timeout_at(deadline, go).await {
            Ok(Ok(Some(id))) => return Ok(id),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(never_started(url)),
        }
        loop {
            if let Some(id) = downloads.started_by(target, before) {
                return Ok(id);
            }
            if tokio::time::Instant::now() > deadline {
                return Err(never_started(url));
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }
}

/// Saves the page a helper opened: a same-origin link with `download`.
const SAVE_PAGE: &str = "(() => { const a = document.createElement('a'); a.href = location.href; a.download = ''; document.documentElement.appendChild(a); a.click(); a.remove(); })()";

fn never_started(url: &str) -> WireError {
    WireError::new(
        ErrorCode::DownloadFailed,
        format!(
            "{} did not start a download within {} s",
            ext_core::escape::inline(url),
            DOWNLOAD_START.as_secs()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_default_context_is_shown() {
        let scope = Scope::from_answer(&json!({
            "browserContextIds": ["INCOGNITO"],
            "defaultBrowserContextId": "DEFAULT",
        }));
        assert_eq!(scope, Scope::Default("DEFAULT".into()));
        assert!(scope.shows(Some("DEFAULT")));
        assert!(!scope.shows(Some("INCOGNITO")));
        // A context the browser does not list (a person's incognito window) is not shown.
        assert!(!scope.shows(Some("OTHER")));
        assert!(!scope.shows(None));
    }

    #[test]
    fn without_a_named_default_the_listed_contexts_are_left_out() {
        let scope = Scope::from_answer(&json!({"browserContextIds": ["MADE"]}));
        assert!(!scope.shows(Some("MADE")));
        assert!(scope.shows(Some("DEFAULT")));
        assert!(scope.shows(None));
        assert!(Scope::All.shows(Some("MADE")));
    }
}
