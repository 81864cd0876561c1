//! One attached page target as ext-core's `CdpSession`: commands go over the browser
//! connection on the page's flat session (or a child session of it), and its events feed
//! the page's `TabEvents` the way the extension feeds them from `chrome.debugger`.
//! Single-threaded like the trait: it lives on the engine's thread (a tokio `LocalSet`).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use ext_core::cdp::{CdpSession, TabEvents};
use ext_core::protocol::{ErrorCode, TabId, WireError};
use serde_json::Value;
use tokio::sync::mpsc;

use super::browser_gone;
use super::connection::{Browser, Event, Routed};

/// An attached page target.
pub struct PageSession {
    tab_id: TabId,
    target_id: String,
    session: String,
    browser: Browser,
    events: RefCell<TabEvents>,
    /// The session ended (target closed or detached): calls fail at once.
    closed: Cell<bool>,
    /// CDP commands sent so far (round trips an action costs, for measurements).
    sent: Cell<u64>,
}

impl PageSession {
    /// Attach to `target_id` as tab `tab_id`, start feeding its events, and turn on the
    /// domains the tools rely on (`cdp::prepare`, as the extension does after attaching).
    /// Must run inside a `LocalSet`.
    pub async fn attach(
        browser: &Browser,
        tab_id: TabId,
        target_id: &str,
    ) -> Result<Rc<PageSession>, WireError> {
        let attached = browser.attach(target_id).await.map_err(|mut e| {
            if e.code == ErrorCode::Internal {
                e.code = ErrorCode::UnsupportedPage;
            }
            e.message = format!("cannot control tab {tab_id}: {}", e.message);
            e
        })?;
        let page = Rc::new(PageSession {
            tab_id,
            target_id: target_id.to_string(),
            session: attached.session,
            browser: browser.clone(),
            events: RefCell::new(TabEvents::new()),
            closed: Cell::new(false),
            sent: Cell::new(0),
        });
        tokio::task::spawn_local(pump(Rc::downgrade(&page), attached.route));
        // The executor prepares it again with the host's viewport.
        if let Err(e) = ext_core::cdp::prepare(&*page, None).await {
            // Not left attached half-prepared: the next attempt starts afresh.
            let _ = page.detach().await;
            return Err(e);
        }
        Ok(page)
    }

    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// The page's flat session id.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// Whether the page's session has ended (closed tab, detached, browser gone).
    pub fn is_closed(&self) -> bool {
        self.closed.get() || self.browser.is_closed()
    }

    /// CDP commands sent through this page so far (its child sessions' included).
    pub fn commands_sent(&self) -> u64 {
        self.sent.get()
    }

    /// Close the tab (its target); later calls answer `TAB_CLOSED`.
    pub async fn close(&self) -> Result<(), WireError> {
        self.browser.close_target(&self.target_id).await
    }

    /// Let go of the page (it stays open in the browser).
    pub async fn detach(&self) -> Result<(), WireError> {
        self.browser.detach(&self.session).await
    }

    /// One event from the page's route, as the service worker takes it
    /// (`on_debugger_event`): a child session's events are not the tab's own (its
    /// navigations and contexts must not be taken for the page's); only its `Target.*`
    /// news (nested out-of-process frames) is kept.
    fn on_event(&self, event: &Event) {
        if event.session.as_deref() != Some(self.session.as_str())
            && !event.method.starts_with("Target.")
        {
            return;
        }
        let mut events = self.events.borrow_mut();
        events.on_event(&event.method, &event.params);
        // The recorder widget's requests are the extension's to answer; none are kept.
        let asked = events.take_widget_requests();
        if !asked.is_empty() {
            tracing::debug!(
                tab = self.tab_id,
                "recorder widget requests skipped natively"
            );
        }
    }

    fn closed_error(&self) -> WireError {
        if self.browser.is_closed() {
            browser_gone()
        } else {
            WireError::new(
                ErrorCode::TabClosed,
                format!("tab {} was closed", self.tab_id),
            )
        }
    }
}

/// Feed the page's route into it until the session ends, then fail what waits on its
/// events (as the extension does when the debugger leaves a tab).
async fn pump(page: Weak<PageSession>, mut route: mpsc::Receiver<Routed>) {
    while let Some(item) = route.recv().await {
        let Some(event) = item.deliver() else {
            continue;
        };
        let Some(page) = page.upgrade() else {
            return;
        };
        page.on_event(&event);
    }
    if let Some(page) = page.upgrade() {
        page.closed.set(true);
        page.events.borrow_mut().cancel_waiters();
    }
}

impl CdpSession for PageSession {
    fn tab_id(&self) -> TabId {
        self.tab_id
    }

    async fn send_in(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        if self.is_closed() {
            return Err(self.closed_error());
        }
        let on = session.unwrap_or(&self.session);
        self.sent.set(self.sent.get() + 1);
        match self.browser.call(Some(on), method, params).await {
            // Whatever a closing tab made the command see, it is said as the tab closing.
            Err(e) if session.is_none() && self.is_closed() => Err(match e.code {
                ErrorCode::NoBrowser => e,
                _ => self.closed_error(),
            }),
            other => other,
        }
    }

    fn events(&self) -> &RefCell<TabEvents> {
        &self.events
    }
}
