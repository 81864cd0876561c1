//! The page side of the native engine on a thread of its own: ext-core's `CdpSession`
//! futures are not `Send` and a tab's `TabEvents` sits in a `RefCell`, so every page
//! session lives on one thread (a current-thread tokio runtime with a `LocalSet`), which
//! also runs the browser connection's owner task (no thread hop between socket and page).
//! [`Engine`] is the `Send` handle the rest of kapture submits jobs through.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use ext_core::protocol::{ErrorCode, TabId, WireError};
use tokio::sync::{mpsc, oneshot};

use super::connection::{Browser, TargetInfo};
use super::page::PageSession;
use super::{browser_gone, CdpError};

/// Jobs queued towards the engine thread; submitters wait when it is busy.
const JOB_QUEUE: usize = 256;
/// How long starting the thread and connecting may take.
const START_LIMIT: Duration = Duration::from_secs(20);

type Job = Box<dyn FnOnce(&Rc<Pages>) + Send>;

/// The pages under control, on the engine thread.
struct Pages {
    browser: Browser,
    tabs: RefCell<HashMap<TabId, Rc<PageSession>>>,
    next: Cell<TabId>,
}

impl Pages {
    fn page(&self, tab: TabId) -> Option<Rc<PageSession>> {
        self.tabs.borrow().get(&tab).cloned()
    }

    fn tab_of(&self, target_id: &str) -> Option<TabId> {
        self.tabs
            .borrow()
            .iter()
            .find(|(_, p)| p.target_id() == target_id && !p.is_closed())
            .map(|(t, _)| *t)
    }

    /// Attach to `target_id` (once: a page already attached keeps its tab id).
    async fn open(&self, target_id: &str) -> Result<TabId, WireError> {
        if let Some(tab) = self.tab_of(target_id) {
            return Ok(tab);
        }
        // Closed pages are forgotten here, so the table stays as small as the open tabs.
        self.tabs.borrow_mut().retain(|_, p| !p.is_closed());
        let tab = self.next.get();
        self.next.set(tab + 1);
        let page = PageSession::attach(&self.browser, tab, target_id).await?;
        self.tabs.borrow_mut().insert(tab, page);
        Ok(tab)
    }
}

/// The native CDP engine: one browser connection and the pages attached through it.
/// Cheap to clone and `Send`; the engine thread ends when the last handle is dropped.
#[derive(Clone)]
pub struct Engine {
    jobs: mpsc::Sender<Job>,
    browser: Browser,
}

impl Engine {
    /// Start the engine thread and connect it to `endpoint` (`http://host:port` or `ws://…`).
    pub async fn connect(endpoint: &str) -> Result<Engine, CdpError> {
        let endpoint = endpoint.to_string();
        let (ready_tx, ready) = oneshot::channel();
        let (jobs, jobs_rx) = mpsc::channel::<Job>(JOB_QUEUE);
        std::thread::Builder::new()
            .name("kapture-cdp".into())
            .spawn(move || engine_thread(&endpoint, ready_tx, jobs_rx))
            .map_err(|e| CdpError::Engine(e.to_string()))?;
        let browser = tokio::time::timeout(START_LIMIT, ready)
            .await
            .map_err(|_| CdpError::Engine(format!("not ready within {START_LIMIT:?}")))?
            .map_err(|_| CdpError::Engine("the engine thread stopped".into()))??;
        Ok(Engine { jobs, browser })
    }

    /// The browser connection (browser-level calls, targets).
    pub fn browser(&self) -> &Browser {
        &self.browser
    }

    /// Run `job` on tab `tab`'s page session, on the engine thread; answers its result.
    /// Dropping the returned future stops the job where it is. Jobs run concurrently, on
    /// one tab too: one command at a time per tab is the caller's queue to keep (as the
    /// extension's per-tab queues do), and so are command deadlines.
    pub async fn run<T, F, Fut>(&self, tab: TabId, job: F) -> Result<T, WireError>
    where
        F: FnOnce(Rc<PageSession>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, WireError>> + 'static,
        T: Send + 'static,
    {
        self.on_thread(move |pages| {
            let page = pages.page(tab);
            async move {
                match page {
                    Some(page) => job(page).await,
                    None => Err(WireError::new(
                        ErrorCode::TabNotFound,
                        format!("no tab {tab} under control"),
                    )),
                }
            }
        })
        .await
    }

    /// Attach to page target `target_id` and prepare it; answers its tab id (the same one
    /// while it stays attached).
    pub async fn open(&self, target_id: &str) -> Result<TabId, WireError> {
        let target_id = target_id.to_string();
        self.on_thread(move |pages| {
            let pages = pages.clone();
            async move { pages.open(&target_id).await }
        })
        .await
    }

    /// Open a new tab showing `url` and attach to it.
    pub async fn new_tab(&self, url: &str) -> Result<TabId, WireError> {
        let target = self.browser.create_page(url, None).await?;
        self.open(&target).await
    }

    /// Close tab `tab` in the browser.
    pub async fn close_tab(&self, tab: TabId) -> Result<(), WireError> {
        self.run(tab, |page| async move { page.close().await })
            .await
    }

    /// The browser's page targets, with the tab id of those under control.
    pub async fn pages(&self) -> Result<Vec<(Option<TabId>, TargetInfo)>, WireError> {
        let targets = self.browser.pages().await?;
        self.on_thread(move |pages| {
            let found = targets
                .into_iter()
                .map(|t| (pages.tab_of(&t.target_id), t))
                .collect();
            async move { Ok(found) }
        })
        .await
    }

    /// Run `make(pages)`'s future on the engine thread and await its answer.
    async fn on_thread<T, M, Fut>(&self, make: M) -> Result<T, WireError>
    where
        M: FnOnce(&Rc<Pages>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, WireError>> + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |pages| {
            let fut = make(pages);
            tokio::task::spawn_local(async move {
                let mut reply = reply;
                tokio::select! {
                    out = fut => drop(reply.send(out)),
                    // The submitter gave up: stop here.
                    () = reply.closed() => {}
                }
            });
        });
        self.jobs.send(job).await.map_err(|_| browser_gone())?;
        answer.await.map_err(|_| browser_gone())?
    }
}

/// The engine thread: connect, then serve jobs until every handle is gone.
fn engine_thread(
    endpoint: &str,
    ready: oneshot::Sender<Result<Browser, CdpError>>,
    mut jobs: mpsc::Receiver<Job>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(CdpError::Engine(e.to_string())));
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let browser = match Browser::connect(endpoint).await {
            Ok(b) => b,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        if ready.send(Ok(browser.clone())).is_err() {
            return;
        }
        let pages = Rc::new(Pages {
            browser,
            tabs: RefCell::default(),
            next: Cell::new(1),
        });
        while let Some(job) = jobs.recv().await {
            job(&pages);
        }
    });
}
