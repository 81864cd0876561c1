//! The native engine (`--browser cdp`): ext-core's executor core — policy gate, per-tab
//! queues, deadlines, dispatch — run inside kapture over a CDP connection instead of in the
//! extension. [`NativeEngine`] is the `Send` handle the bridge hands command frames to; the
//! executor itself lives on a thread of its own (its futures are not `Send`). A browser at an
//! endpoint is not ours: kapture connects, lets go on exit, and reconnects on the next call
//! after the browser went away. A browser kapture launched comes with its connection already
//! open (its DevTools pipe): used as it is, never reconnected; the launcher closes it.

pub mod ask;
mod downloads;
mod host;

use std::rc::Rc;
use std::sync::atomic::AtomicI32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ext_core::exec::Exec;
use ext_core::policy::Policy;
use ext_core::protocol::{BrowserEvent, ErrorCode, TabId, WireError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

pub use host::{EventSink, NativeHost};

use crate::cdp::Browser;

/// How long connecting (thread start, WebSocket, discovery) may take.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);
/// Extra time beyond a command's own timeout before the executor is declared stuck (it
/// enforces the timeout itself and answers `TIMEOUT` first).
const ANSWER_GRACE: Duration = Duration::from_secs(3);

type Job = Box<dyn FnOnce(&Rc<Exec<NativeHost>>) + Send>;

/// Where the engine's browser connection comes from.
#[derive(Clone)]
enum Source {
    /// `--browser cdp`: connect to this endpoint, again after the browser went away.
    /// `throwaway`: its browser is a pool's or a test's, every browser context of it is
    /// driven; else it may be a person's own, only its default context is (see
    /// [`host::Contexts`]).
    Endpoint { endpoint: String, throwaway: bool },
    /// A browser kapture launched: its DevTools pipe, already open; once closed, gone.
    Launched(Browser),
}

/// A live connection: its executor thread's queue and the browser handle.
struct Conn {
    jobs: mpsc::UnboundedSender<Job>,
    browser: Browser,
}

struct Inner {
    /// The endpoint as shown (`cdp::endpoint::shown`: no credentials), or how the launched
    /// browser is reached: what messages, status and logs say.
    endpoint: String,
    source: Source,
    /// The viewport every tab is given (a headless launched or a throwaway browser).
    viewport: Option<ext_core::protocol::Viewport>,
    policy: Policy,
    approval_ms: u64,
    sink: EventSink,
    /// Where `ask` questions go (the approver task on the MCP side).
    questions: mpsc::Sender<ask::Question>,
    next_tab: Arc<AtomicI32>,
    conn: tokio::sync::Mutex<Option<Conn>>,
    /// Why the last connection attempt failed (for `browser_status`).
    last_error: Mutex<Option<String>>,
}

/// The native engine's handle; cheap to clone.
#[derive(Clone)]
pub struct NativeEngine {
    inner: Arc<Inner>,
}

impl NativeEngine {
    /// An engine for `endpoint` judging every command on `policy` (connects on first use);
    /// `throwaway` as for [`Source::Endpoint`] (a person's own browser also keeps its
    /// downloads: kapture does not divert them). Call within a tokio runtime: the approver
    /// task starts here.
    pub fn new(
        endpoint: String,
        throwaway: bool,
        viewport: Option<ext_core::protocol::Viewport>,
        policy: Policy,
        approval_ms: u64,
        sink: EventSink,
    ) -> Self {
        Self::with_source(
            crate::cdp::endpoint::shown(&endpoint),
            Source::Endpoint {
                endpoint,
                throwaway,
            },
            viewport,
            policy,
            approval_ms,
            sink,
        )
    }

    /// An engine over the open DevTools connection of a browser kapture launched.
    pub fn launched(
        browser: Browser,
        viewport: Option<ext_core::protocol::Viewport>,
        policy: Policy,
        approval_ms: u64,
        sink: EventSink,
    ) -> Self {
        Self::with_source(
            "the DevTools pipe of the browser kapture launched".into(),
            Source::Launched(browser),
            viewport,
            policy,
            approval_ms,
            sink,
        )
    }

    fn with_source(
        endpoint: String,
        source: Source,
        viewport: Option<ext_core::protocol::Viewport>,
        policy: Policy,
        approval_ms: u64,
        sink: EventSink,
    ) -> Self {
        let (questions, asked) = mpsc::channel(ask::QUESTIONS);
        tokio::spawn(ask::approver(asked));
        let first_tab = match source {
            Source::Launched(_) => crate::bridge::select::NATIVE_TAB_BASE,
            Source::Endpoint { .. } => 1,
        };
        NativeEngine {
            inner: Arc::new(Inner {
                endpoint,
                source,
                viewport,
                policy,
                approval_ms,
                sink,
                questions,
                // A launched browser's tabs may also be the extension's: its ids are apart.
                next_tab: Arc::new(AtomicI32::new(first_tab)),
                conn: tokio::sync::Mutex::new(None),
                last_error: Mutex::new(None),
            }),
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// Over a browser kapture launched (whose own extension may drive it too).
    pub fn is_launched(&self) -> bool {
        matches!(self.inner.source, Source::Launched(_))
    }

    /// The extension took over: end this engine's executor (its tabs, refs and attachments
    /// go with it; a later take-over starts afresh, with new tab ids) and give the browser's
    /// downloads back to it. The browser's connection stays open.
    pub async fn stand_by(&self) {
        let Some(conn) = self.inner.conn.lock().await.take() else {
            return;
        };
        drop(conn.jobs);
        let _ = conn
            .browser
            .call(
                None,
                "Browser.setDownloadBehavior",
                serde_json::json!({"behavior": "default"}),
            )
            .await;
        tracing::info!(endpoint = %self.inner.endpoint, "native engine standing by");
    }

    /// Connected now, or connect; `NO_BROWSER` naming the endpoint when it cannot be reached.
    pub async fn ready(&self) -> Result<(), WireError> {
        self.jobs().await.map(drop)
    }

    /// One line for `browser_status`.
    pub async fn describe(&self) -> String {
        let connected = self
            .inner
            .conn
            .lock()
            .await
            .as_ref()
            .is_some_and(|c| !c.browser.is_closed());
        let endpoint = &self.inner.endpoint;
        let launched = matches!(self.inner.source, Source::Launched(_));
        if connected && launched {
            return format!(
                "native CDP engine over {endpoint} (kapture closes that browser on exit)"
            );
        }
        if connected {
            return format!("native CDP engine, connected to {endpoint} (kapture did not start this browser and will not close it)");
        }
        let why = self
            .inner
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match why {
            Some(why) => format!("native CDP engine, not connected to {endpoint}: {why}"),
            None => format!("native CDP engine for {endpoint}, not connected yet"),
        }
    }

    /// The live connection's job queue, connecting first when there is none (or the browser
    /// went away since).
    async fn jobs(&self) -> Result<mpsc::UnboundedSender<Job>, WireError> {
        let mut conn = self.inner.conn.lock().await;
        if let Some(c) = conn
            .as_ref()
            .filter(|c| !c.browser.is_closed() && !c.jobs.is_closed())
        {
            return Ok(c.jobs.clone());
        }
        *conn = None;
        let outcome = tokio::time::timeout(CONNECT_LIMIT, self.connect())
            .await
            .unwrap_or_else(|_| Err(format!("no connection within {CONNECT_LIMIT:?}")));
        match outcome {
            Ok(c) => {
                let jobs = c.jobs.clone();
                *conn = Some(c);
                *self
                    .inner
                    .last_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = None;
                tracing::info!(endpoint = %self.inner.endpoint, "native engine connected");
                Ok(jobs)
            }
            Err(why) => {
                *self
                    .inner
                    .last_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
                let message = match self.inner.source {
                    Source::Endpoint { .. } => format!(
                        "no browser at the DevTools endpoint {} ({why}); start a browser with --remote-debugging-port or point --cdp-endpoint at a running one",
                        self.inner.endpoint
                    ),
                    Source::Launched(_) => format!(
                        "the browser kapture launched cannot be reached over {} ({why}); restart kapture to launch a new one",
                        self.inner.endpoint
                    ),
                };
                Err(WireError::new(ErrorCode::NoBrowser, message))
            }
        }
    }

    /// Start an executor thread connected to the endpoint.
    async fn connect(&self) -> Result<Conn, String> {
        let (ready_tx, ready) = oneshot::channel();
        let (jobs, jobs_rx) = mpsc::unbounded_channel::<Job>();
        let viewport = self.inner.viewport;
        let (source, next_tab, sink) = (
            self.inner.source.clone(),
            self.inner.next_tab.clone(),
            self.inner.sink.clone(),
        );
        if let Source::Launched(browser) = &source {
            if browser.is_closed() {
                return Err("its DevTools pipe is closed (the browser exited)".into());
            }
        }
        let asking = ask::Asking {
            questions: self.inner.questions.clone(),
            policy: self.inner.policy.clone(),
        };
        std::thread::Builder::new()
            .name("kapture-native".into())
            .spawn(move || {
                executor_thread(source, viewport, next_tab, sink, asking, ready_tx, jobs_rx)
            })
            .map_err(|e| format!("cannot start the engine thread: {e}"))?;
        let browser = ready
            .await
            .map_err(|_| "the engine thread stopped".to_string())??;
        Ok(Conn { jobs, browser })
    }

    /// Run one command frame through the executor: the answer always comes back.
    pub async fn call(
        &self,
        method: &str,
        tab_id: Option<TabId>,
        params: Value,
        timeout_ms: u64,
    ) -> Result<Value, WireError> {
        let jobs = self.jobs().await?;
        let (reply, answer) = oneshot::channel();
        let (policy, approval_ms) = (self.inner.policy.clone(), self.inner.approval_ms);
        let sink = self.inner.sink.clone();
        let method_owned = method.to_string();
        // An `ask` goes to the client whose tool call this is; a grant is its session's.
        let client = ask::client();
        let round = ask::round();
        let session = ask::session();
        let job: Job = Box::new(move |exec| {
            let exec = exec.clone();
            tokio::task::spawn_local(async move {
                let mut reply = reply;
                let rules = ext_core::exec::Rules {
                    policy: Rc::new(policy),
                    approval_ms,
                };
                let caller = ask::Caller::new(client, round);
                let run = caller.run(exec.run_as(
                    session.as_deref(),
                    tab_id,
                    &method_owned,
                    params,
                    timeout_ms,
                    rules,
                ));
                let result = tokio::select! {
                    r = run => r,
                    // The caller gave up (its MCP request was cancelled): stop here.
                    () = reply.closed() => return,
                };
                let result = result.map_err(|e| ask::explain(e, caller.why()));
                // Where the tab is now, ahead of the answer, for the journal.
                let ran_on = ext_core::exec::ran_on(&result, tab_id);
                if let Some((tab_id, url)) = ran_on.and_then(|t| Some((t, exec.tabs.main_url(t)?)))
                {
                    if let Some(origin) = ext_core::policy::origin_of(&url) {
                        sink(BrowserEvent::PageAt {
                            tab_id,
                            origin: origin.to_string(),
                        });
                    }
                }
                let _ = reply.send(result);
            });
        });
        jobs.send(job).map_err(|_| gone(&self.inner.endpoint))?;
        let limit = Duration::from_millis(timeout_ms + approval_ms) + ANSWER_GRACE;
        match tokio::time::timeout(limit, answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(gone(&self.inner.endpoint)),
            Err(_) => Err(WireError::new(
                ErrorCode::Timeout,
                format!("the native engine did not answer {method} within {limit:?}"),
            )),
        }
    }
}

/// The browser went away under a command.
fn gone(endpoint: &str) -> WireError {
    WireError::new(
        ErrorCode::NoBrowser,
        format!("the browser at {endpoint} went away (it exited or dropped the DevTools connection); the next call reconnects if it is back"),
    )
}

/// The executor thread: connect, then run jobs until the browser or every handle is gone.
fn executor_thread(
    source: Source,
    viewport: Option<ext_core::protocol::Viewport>,
    next_tab: Arc<AtomicI32>,
    sink: EventSink,
    asking: ask::Asking,
    ready: oneshot::Sender<Result<Browser, String>>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    // The browser kapture launched and a throwaway one are driven whole; a person's own
    // only in its default context.
    let contexts = match &source {
        Source::Launched(_)
        | Source::Endpoint {
            throwaway: true, ..
        } => host::Contexts::All,
        Source::Endpoint { .. } => host::Contexts::DefaultOnly,
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let (browser, endpoint, own) = match source {
            // The launched browser's owner task stays on the runtime that opened the pipe.
            Source::Launched(browser) => (
                browser,
                "the launched browser's DevTools pipe".into(),
                false,
            ),
            Source::Endpoint {
                endpoint,
                throwaway,
            } => match Browser::connect(&endpoint).await {
                Ok(b) => (b, crate::cdp::endpoint::shown(&endpoint), !throwaway),
                Err(e) => {
                    let _ = ready.send(Err(e.to_string()));
                    return;
                }
            },
        };
        let events = browser.browser_events();
        // Tabs closing and opening are news the executor needs.
        if let Err(e) = browser
            .call(
                None,
                "Target.setDiscoverTargets",
                serde_json::json!({"discover": true}),
            )
            .await
        {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
        let downloads = match own {
            // The download behaviour is browser-wide: set on a person's own browser, it would
            // divert their own downloads into kapture's staging folder (deleted on exit).
            true => Err(WireError::new(
                ErrorCode::Unsupported,
                "browser_download is off on a DevTools endpoint that may be a person's own browser: kapture would have to divert every download of that browser into its own folder; start kapture with --endpoint-browser throwaway if this browser is only for automation, or use the extension engine",
            )),
            false => save_downloads(&browser).await.ok_or_else(host::no_downloads),
        };
        let host = NativeHost::new(
            browser.clone(),
            contexts,
            next_tab,
            sink,
            asking,
            downloads,
            viewport,
        );
        let exec = Rc::new(Exec::new(host.clone()));
        host.set_exec(&exec);
        tokio::task::spawn_local(host::browser_pump(Rc::downgrade(&host), events));
        if ready.send(Ok(browser.clone())).is_err() {
            return;
        }
        loop {
            tokio::select! {
                job = jobs.recv() => match job {
                    Some(job) => job(&exec),
                    None => break,
                },
                () = browser.closed() => {
                    tracing::warn!(%endpoint, "the browser went away");
                    break;
                }
            }
        }
    });
}

/// Have the browser save downloads into a private staging folder of this connection and
/// report them; `None` (browser_download is `UNSUPPORTED`) when it refuses.
async fn save_downloads(browser: &Browser) -> Option<downloads::Downloads> {
    let d = match downloads::Downloads::new() {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(error = %e, "no staging folder for downloads");
            return None;
        }
    };
    let told = browser
        .call(
            None,
            "Browser.setDownloadBehavior",
            serde_json::json!({
                "behavior": "allowAndName",
                "downloadPath": d.staging(),
                "eventsEnabled": true,
            }),
        )
        .await;
    match told {
        Ok(_) => Some(d),
        Err(e) => {
            tracing::warn!(error = %e.message, "the browser does not report downloads");
            None
        }
    }
}
