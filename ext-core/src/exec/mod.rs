//! The executor core: what happens to one command from the moment it is received — decoded
//! once, browser-level methods run at once, tab methods judged by the policy gate (a person
//! asked when the rules say so), queued on their tab, re-checked, run through `router` on
//! a debugger session with a deadline, answered exactly once. Target-independent: the
//! extension runs it over `chrome.*` (`sw/host.rs`), a native engine over a CDP WebSocket;
//! both implement [`Host`], and the tests a fake one.

mod download;
pub mod reduced;
pub mod report;
mod tabs;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::methods::{Click, Closed, Command, Navigate, TabInfo};
use crate::platform;
use crate::policy::budget::{self, BudgetState, Ledger};
use crate::policy::gate::{self as pure, Admission, Answer, Guard, Target};
use crate::policy::{origin_of, risk, Category, Judge, Origin, Policy};
use crate::protocol::{ErrorCode, TabId, Transport, WireError};
use crate::router::Route;

pub use report::{ApprovalView, FeedEntry};
pub use tabs::Tabs;

/// The rules a command runs under.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The sender's policy (with the person's rules over it, in the extension).
    pub policy: Rc<Policy>,
    /// How long an `ask` waits for a person, in ms.
    pub approval_ms: u64,
}

/// A download as the browser reports it (the fields Kapture reads of `chrome.downloads`'
/// `DownloadItem`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadItem {
    pub id: i32,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub final_url: String,
    /// Absolute path of the file (empty until the name is decided).
    #[serde(default)]
    pub filename: String,
    #[serde(default)]
    pub mime: String,
    /// in_progress, interrupted or complete.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub file_size: f64,
    /// Bytes received so far.
    #[serde(default)]
    pub bytes_received: f64,
    /// The size the server announced (0: unknown).
    #[serde(default)]
    pub total_bytes: f64,
    #[serde(default)]
    pub error: Option<String>,
    /// Whether the file is still on disk (as far as the browser knows).
    #[serde(default)]
    pub exists: bool,
}

/// Where a new tab goes: the group of the MCP session that opened it (its label), and
/// whether in a browser context of its own (cookies and storage apart from the person's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    pub group: Option<String>,
    pub isolated: bool,
}

impl Placement {
    /// The colour of a session's tab group: picked from its label, so a session keeps its
    /// colour and two sessions seldom share one.
    pub fn colour_of(label: &str) -> &'static str {
        const COLOURS: [&str; 8] = [
            "blue", "red", "yellow", "green", "pink", "purple", "cyan", "orange",
        ];
        // FNV-1a: stable across runs and builds (std's hasher is seeded).
        let hash = label.bytes().fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        COLOURS[hash as usize % COLOURS.len()]
    }
}

/// What only the host can do: the browser's tabs, a tab's debugger session, downloads,
/// stored settings, asking a person, running a task. Time comes from `platform`.
#[allow(async_fn_in_trait)] // single-threaded on wasm32; no Send bound wanted
pub trait Host: 'static {
    /// The viewport to give every tab attached to (a headless browser kapture launched);
    /// `None` leaves each window's own.
    fn viewport(&self) -> Option<crate::protocol::Viewport> {
        None
    }
    /// One tab; an error when there is no such tab.
    async fn tab(&self, tab: TabId) -> Result<TabInfo, WireError>;
    /// Every tab the agent may see.
    async fn list_tabs(&self) -> Result<Vec<TabInfo>, WireError>;
    /// The tab a command without a tab runs on: the focused window's active tab, else any
    /// active tab, else any tab, else a new blank one (never an extension's window).
    async fn default_tab(&self) -> Result<TabId, WireError>;
    /// A new tab at `url`, placed as `place` asks (a session's group, its own context).
    async fn create_tab(&self, url: &str, place: &Placement) -> Result<TabInfo, WireError>;
    /// Bring the tab to the front and focus its window.
    async fn activate_tab(&self, tab: TabId) -> Result<TabInfo, WireError>;
    async fn close_tab(&self, tab: TabId) -> Result<(), WireError>;
    /// Open a debugger session on the tab (taking over a stale one of our own).
    async fn attach(&self, tab: TabId) -> Result<(), WireError>;
    async fn detach(&self, tab: TabId) -> Result<(), WireError>;
    /// Send one CDP command to the tab (or to one of its child sessions).
    async fn send(
        &self,
        tab: TabId,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError>;
    /// Whether safe mode is on (a person's switch the host keeps).
    async fn safe_mode(&self) -> bool;
    /// Whether a person paused Kapture: every command is refused until they resume.
    async fn paused(&self) -> bool;
    /// A command was answered (or refused): what it did, for the live feed. `who` is the
    /// asker's key as the sender named it (the host knows its label), or `panel`.
    fn on_step(&self, step: FeedEntry);
    /// Ask a person to approve `request` (its `id` is the host's to set), waiting at most
    /// `wait_ms`; the host journals the answer.
    async fn ask(&self, request: ApprovalView, wait_ms: u64) -> Answer;
    /// Start downloading `url`; the download's id.
    async fn start_download(&self, url: &str) -> Result<i32, WireError>;
    /// The most recent download, if any.
    async fn latest_download(&self) -> Result<Option<DownloadItem>, WireError>;
    /// One download by id (`None`: it disappeared).
    async fn get_download(&self, id: i32) -> Result<Option<DownloadItem>, WireError>;
    /// Stop a download and remove its file, whatever state it is in (one the policy
    /// refused once its real URL was known).
    async fn cancel_download(&self, id: i32) -> Result<(), WireError>;
    /// Run `task` concurrently on this thread (a tab's queue).
    fn spawn(&self, task: LocalBoxFuture<'static, ()>);
    /// The rules a queued command is held to when it runs: `policy` as the host knows it
    /// now (the extension lays the person's latest rules over it, so a site made read-only
    /// or a grant revoked meanwhile reaches commands already queued). Unchanged by default.
    fn refresh(&self, policy: &Rc<Policy>) -> Rc<Policy> {
        policy.clone()
    }
    /// How this host reaches a tab's page: the debugger (CDP, through `attach`/`send`), or
    /// in reduced mode page scripts alone (`page_call`, `start_load`, `loading`).
    fn transport(&self) -> Transport {
        Transport::Debugger
    }
    /// Reduced mode: call `function` of Kapture's packaged page script (`reduced::PAGE_FILE`)
    /// in the tab's main frame, in the extension's isolated world, with `args`.
    async fn page_call(
        &self,
        _tab: TabId,
        _function: &str,
        _args: Vec<Value>,
    ) -> Result<Value, WireError> {
        Err(reduced::needs_debugger("a page script"))
    }
    /// Reduced mode: start loading `url` in the tab.
    async fn start_load(&self, _tab: TabId, _url: &str) -> Result<(), WireError> {
        Err(reduced::needs_debugger("navigate"))
    }
    /// Reduced mode: whether the tab is loading a document.
    async fn loading(&self, _tab: TabId) -> Result<bool, WireError> {
        Ok(false)
    }
}

/// How long an approval waits for the page to say what its element is.
const FACTS_WAIT: Duration = Duration::from_millis(1000);

/// Pause between two looks at a download's progress.
const DOWNLOAD_POLL: Duration = Duration::from_millis(100);

/// Whose command it is: the MCP session (as the sender names it) whose call is run, `None`
/// for commands that name none (the panel's, an older kapture's). Grants are theirs alone.
pub type Asker<'a> = Option<&'a str>;

/// The executor: the tabs under control and what people allowed for each session.
pub struct Exec<H: Host> {
    host: Rc<H>,
    pub tabs: Tabs<H>,
    /// What people allowed for the rest of a session: category on origin, for the asker
    /// whose command was approved (another agent of the same kapture is asked again).
    granted: RefCell<Vec<(Option<String>, Category, Origin)>>,
    /// Steps counted against the origin budgets (`maxStepsPerHour`).
    ledger: RefCell<Ledger>,
}

/// What the gate found out about one command, for its feed entry.
#[derive(Default)]
pub struct StepNote {
    target: RefCell<Option<String>>,
    origin: RefCell<String>,
    verdict: RefCell<String>,
}

impl StepNote {
    fn verdict(&self, v: impl Into<String>) {
        *self.verdict.borrow_mut() = v.into();
    }
}

/// How the feed names a refusal, when the gate did not say more.
fn verdict_of(err: &WireError) -> &'static str {
    match err.code {
        ErrorCode::PolicyDenied => "denied by policy",
        ErrorCode::ApprovalDenied => "not approved",
        ErrorCode::BudgetExceeded => "over budget",
        ErrorCode::Paused => "paused",
        ErrorCode::BadArgs => "bad arguments",
        _ => "",
    }
}

/// The grants `asker` holds.
fn grants_of(all: &[(Option<String>, Category, Origin)], asker: Asker) -> Vec<(Category, Origin)> {
    all.iter()
        .filter(|(who, _, _)| who.as_deref() == asker)
        .map(|(_, c, o)| (*c, o.clone()))
        .collect()
}

impl<H: Host> Exec<H> {
    pub fn new(host: Rc<H>) -> Self {
        Exec {
            tabs: Tabs::new(host.clone()),
            host,
            granted: RefCell::default(),
            ledger: RefCell::default(),
        }
    }

    /// Drop the session grants of every asker whose key starts with `prefix` (their
    /// server's session ended).
    pub fn forget_grants(&self, prefix: &str) {
        self.granted
            .borrow_mut()
            .retain(|(who, _, _)| !who.as_deref().is_some_and(|w| w.starts_with(prefix)));
    }

    /// A person gave the origin budget on `pattern` `steps` more steps this hour.
    pub fn extend_budget(&self, pattern: &str, steps: u64) {
        self.ledger
            .borrow_mut()
            .extend(pattern, steps, platform::now_ms());
    }

    /// The budget counts as they stand (for the host to keep).
    pub fn ledger(&self) -> Ledger {
        self.ledger.borrow().clone()
    }

    /// Counts kept from an earlier life of the host (a restarted service worker), unless
    /// this one already counted.
    pub fn restore_ledger(&self, kept: Ledger) {
        let mut ledger = self.ledger.borrow_mut();
        if ledger.is_empty() {
            *ledger = kept;
        }
    }

    /// `policy`'s budgets with their counts now.
    pub fn budget_states(&self, policy: &Policy) -> Vec<BudgetState> {
        self.ledger
            .borrow()
            .states(&policy.budgets, platform::now_ms())
    }

    pub fn host(&self) -> &Rc<H> {
        &self.host
    }

    /// Run one command that names no session; the answer always comes back (never a hang).
    pub async fn run(
        &self,
        tab_id: Option<TabId>,
        method: &str,
        params: Value,
        timeout_ms: u64,
        rules: Rules,
    ) -> Result<Value, WireError> {
        self.run_as(None, tab_id, method, params, timeout_ms, rules)
            .await
    }

    /// Run one command of `asker`'s: judged with its grants, an approval "for the session"
    /// granted to it alone. Whatever the outcome, the host hears of it (`Host::on_step`).
    pub async fn run_as(
        &self,
        asker: Asker<'_>,
        tab_id: Option<TabId>,
        method: &str,
        params: Value,
        timeout_ms: u64,
        rules: Rules,
    ) -> Result<Value, WireError> {
        let started = platform::now_ms();
        let note = StepNote::default();
        let result = if self.host.paused().await {
            Err(WireError::new(
                ErrorCode::Paused,
                format!("{method} was not run: a person paused Kapture in its side panel"),
            ))
        } else {
            self.run_judged(asker, tab_id, method, params, timeout_ms, rules, &note)
                .await
        };
        let ran_on = ran_on(&result, tab_id);
        let mut verdict = note.verdict.take();
        if let Err(e) = &result {
            if verdict.is_empty() || matches!(e.code, ErrorCode::Paused | ErrorCode::BudgetExceeded)
            {
                verdict = verdict_of(e).to_string();
            }
        }
        self.host.on_step(FeedEntry {
            time: started,
            tab_id: ran_on,
            who: asker.unwrap_or("panel").to_string(),
            method: method.to_string(),
            target: note.target.take(),
            origin: note.origin.take(),
            verdict,
            status: match &result {
                Ok(_) => "ok".into(),
                Err(e) => e.code.as_str().into(),
            },
            ms: platform::now_ms() - started,
        });
        result
    }

    #[allow(clippy::too_many_arguments)] // the command's parts, as run_as received them
    async fn run_judged(
        &self,
        asker: Asker<'_>,
        tab_id: Option<TabId>,
        method: &str,
        params: Value,
        timeout_ms: u64,
        rules: Rules,
        note: &StepNote,
    ) -> Result<Value, WireError> {
        // Decoded once: bad arguments are `BAD_ARGS` before any tab is touched.
        let cmd = Command::decode(method, params)?;
        match cmd.route() {
            Route::Browser => {
                // A browser method may wait for an approval before its own work, which then
                // has `timeout_ms` (the approval's wait is not the work's time).
                let limit = timeout_ms + rules.approval_ms;
                let name = cmd.name();
                let run = self.browser_method(asker, tab_id, cmd, timeout_ms, rules, note);
                platform::timeout(Duration::from_millis(limit), run)
                    .await
                    .unwrap_or_else(|| {
                        Err(WireError::new(
                            ErrorCode::Timeout,
                            format!("{name} did not finish in {timeout_ms} ms"),
                        ))
                    })
            }
            Route::Tab => {
                let tab_id = match tab_id {
                    // A tab under control is known to exist (its removal is an event).
                    Some(id) if self.tabs.is_open(id) => id,
                    Some(id) => {
                        self.host.tab(id).await.map_err(|_| {
                            WireError::new(
                                ErrorCode::TabNotFound,
                                format!("there is no tab with id {id}"),
                            )
                        })?;
                        id
                    }
                    None => self.host.default_tab().await?,
                };
                let guard = self.check(asker, tab_id, &cmd, rules, note).await?;
                // The command's clock starts once it is allowed (a person may have taken a while).
                let deadline_ms = platform::now_ms() + timeout_ms as f64;
                self.tabs.run(tab_id, cmd, deadline_ms, guard).await
            }
        }
    }

    async fn browser_method(
        &self,
        asker: Asker<'_>,
        tab_id: Option<TabId>,
        cmd: Command,
        timeout_ms: u64,
        rules: Rules,
        note: &StepNote,
    ) -> Result<Value, WireError> {
        // The work's deadline, from when it may begin (after any approval).
        let deadline = || platform::now_ms() + timeout_ms as f64;
        let need_tab = || {
            tab_id.ok_or_else(|| {
                WireError::new(ErrorCode::BadArgs, format!("{} needs a tab id", cmd.name()))
            })
        };
        let value = match &cmd {
            Command::TabsList(_) => {
                let tabs = self.host.list_tabs().await?;
                json!(tabs
                    .into_iter()
                    .map(|t| shown_tab(&rules.policy, t))
                    .collect::<Vec<_>>())
            }
            Command::TabsNew(p) => {
                let place = Placement {
                    group: p.group.clone(),
                    isolated: p.isolated,
                };
                let tab = self.host.create_tab("about:blank", &place).await?;
                if let Some(url) = p.url.clone() {
                    let nav = Command::Navigate(Navigate {
                        url,
                        wait_until: Default::default(),
                    });
                    // Refused or not judged at all (a bad or browser-only URL), or refused
                    // as it ran (the re-check, a redirect, a pause): the tab opened for it
                    // goes too, nothing is left behind in the person's browser. A page that
                    // failed to load stays shown.
                    let went = match self
                        .check(asker, tab.tab_id, &nav, rules.clone(), note)
                        .await
                    {
                        Ok(guard) => self
                            .tabs
                            .run(tab.tab_id, nav, deadline(), guard)
                            .await
                            .map_err(|e| (pure::is_refusal(e.code), e)),
                        Err(e) => Err((true, e)),
                    };
                    if let Err((close, e)) = went {
                        if close {
                            let _ = self.host.close_tab(tab.tab_id).await;
                        }
                        return Err(e);
                    }
                }
                json!(shown_tab(&rules.policy, self.host.tab(tab.tab_id).await?))
            }
            Command::TabsSelect(_) => {
                let tab = self.host.activate_tab(need_tab()?).await?;
                json!(shown_tab(&rules.policy, tab))
            }
            Command::TabsClose(_) => {
                let id = need_tab()?;
                // Closing a tab changes the person's browser (unsaved work goes with it):
                // judged like any interaction with that tab's page.
                self.check(asker, id, &cmd, rules.clone(), note).await?;
                self.host.close_tab(id).await?;
                json!(Closed { tab_id: id })
            }
            Command::StoreWrite(_) => {
                // Judged on the data's site like a page action there; an approval is asked
                // in the current tab's panel.
                let tab = match tab_id {
                    Some(t) => t,
                    None => self.host.default_tab().await?,
                };
                self.check(asker, tab, &cmd, rules.clone(), note).await?;
                json!(crate::methods::StoreWritten { allowed: true })
            }
            Command::Download(p) => {
                let tab = match tab_id {
                    Some(t) => t,
                    None => self.host.default_tab().await?,
                };
                let guard = self.check(asker, tab, &cmd, rules.clone(), note).await?;
                // A download by element is a click on the page first: judged as one too (the
                // page's interact rules, its re-check right before it runs, the frames under
                // the pointer), so a download can never be a way round them.
                let click = match (&p.url, p.target.get()) {
                    (None, Some(target)) => {
                        let click = Command::Click(Click {
                            target,
                            button: Default::default(),
                            double_click: false,
                            modifiers: vec![],
                        });
                        let judged = self.check(asker, tab, &click, rules.clone(), note).await?;
                        Some((click, judged))
                    }
                    _ => None,
                };
                let cap = rules.policy.download_cap();
                let work = self.download(tab, p.clone(), click, deadline(), guard.as_ref(), cap);
                let done = platform::timeout(Duration::from_millis(timeout_ms), work).await;
                json!(done.unwrap_or_else(|| Err(WireError::new(
                    ErrorCode::Timeout,
                    format!("the download did not finish in {timeout_ms} ms (it was cancelled)"),
                )))?)
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

    /// Judge a command before it is queued; an `ask` waits (bounded) for a person; a step
    /// is counted against the origin budgets. `None`: the command has no category (nothing
    /// to judge, nothing to re-check). What it found is noted for the feed.
    async fn check(
        &self,
        asker: Asker<'_>,
        tab: TabId,
        command: &Command,
        rules: Rules,
        note: &StepNote,
    ) -> Result<Option<Guard>, WireError> {
        let Rules {
            policy,
            approval_ms,
        } = rules;
        *note.target.borrow_mut() = self.describe_target(tab, &command.params());
        let Some(category) = command.category() else {
            note.verdict("no check needed");
            return Ok(None);
        };
        if let Command::Navigate(p) = command {
            // A malformed destination is bad input, not something the policy judges.
            crate::cdp::check_url(&p.url)?;
        }
        // What is read of the page to judge or describe the command (a link's href, the
        // element input lands on) is read only where these rules let it read.
        let reader = Judge::new(
            policy.clone(),
            Category::Read,
            grants_of(&self.granted.borrow(), asker),
        );
        let urls = self.target_urls(tab, command, &reader).await?;
        let here = if pure::leaves_page(command) {
            self.page_urls(tab, None).await?
        } else {
            Vec::new()
        };
        if let Some(o) = urls.first().and_then(|u| origin_of(u)) {
            *note.origin.borrow_mut() = o.to_string();
        }
        let granted = grants_of(&self.granted.borrow(), asker);
        let safe_mode = self.host.safe_mode().await;
        let admitted = pure::admit(&policy, category, &urls, &here, safe_mode, &granted);
        if let Err(e) = &admitted {
            note.verdict(if e.message.contains("safe mode") {
                "refused: safe mode"
            } else {
                verdict_of(e)
            });
        }
        // A spent budget refuses before anyone is asked (an agent cannot flood the person
        // with questions it may not act on anyway).
        // Counted on every document the command is judged on (a frame's and its page's).
        let budget_origins: Vec<Origin> =
            match budget::counts(category) && !policy.budgets.is_empty() {
                true => urls.iter().filter_map(|u| origin_of(u)).collect(),
                false => Vec::new(),
            };
        if admitted.is_ok() && !budget_origins.is_empty() {
            if let Err(e) =
                self.ledger
                    .borrow_mut()
                    .room(&policy.budgets, &budget_origins, platform::now_ms())
            {
                note.verdict("over budget");
                return Err(e);
            }
        }
        let approved = match admitted? {
            Admission::Allowed => {
                note.verdict("allowed");
                None
            }
            Admission::Granted(origin) => {
                note.verdict("granted for the session");
                Some((category, origin))
            }
            Admission::Ask(origin) => {
                let page = here.first().and_then(|u| origin_of(u));
                let answer = self
                    .ask(
                        asker,
                        tab,
                        command,
                        (category, &origin),
                        page,
                        &reader,
                        approval_ms,
                    )
                    .await;
                note.verdict(match &answer {
                    Ok(a) => format!("approved: {}", a.name()),
                    Err(_) => "not approved".into(),
                });
                answer?;
                Some((category, origin))
            }
        };
        // A step on a budgeted origin: counted once it is allowed (refused if an approval
        // took so long that the budget went meanwhile).
        if !budget_origins.is_empty() {
            self.ledger
                .borrow_mut()
                .take(&policy.budgets, &budget_origins, platform::now_ms())?;
        }
        let granted = grants_of(&self.granted.borrow(), asker);
        Ok(Some(Guard {
            policy,
            approved,
            granted,
        }))
    }

    /// What a command is judged on: where it lands (a navigation's destination, the page
    /// back/forward goes to, the URL a download fetches), else the document it acts in.
    async fn target_urls(
        &self,
        tab: TabId,
        command: &Command,
        reader: &Judge,
    ) -> Result<Vec<String>, WireError> {
        match pure::target(command) {
            Target::Url(url) => return Ok(vec![url]),
            // A link clicked to download: where its href points, and the frame it is in.
            Target::Link(link) => {
                let mut urls = self.page_urls(tab, Some(command)).await?;
                if let Some(href) = self.tabs.link_href(tab, &link, reader).await {
                    urls.insert(0, href);
                }
                return Ok(urls);
            }
            Target::History(delta) if self.tabs.is_open(tab) => {
                let hist = self
                    .host
                    .send(tab, None, "Page.getNavigationHistory", json!({}))
                    .await;
                if let Some(dest) = hist.ok().and_then(|h| pure::history_entry(&h, delta)) {
                    return Ok(vec![dest]);
                }
            }
            Target::History(_) | Target::Page => {}
        }
        self.page_urls(tab, Some(command)).await
    }

    /// Where the tab is: the frame of the ref `command` names, else the main frame.
    async fn page_urls(
        &self,
        tab: TabId,
        command: Option<&Command>,
    ) -> Result<Vec<String>, WireError> {
        if let Some(urls) = self.tabs.judged_for(tab, command) {
            return Ok(urls);
        }
        Ok(vec![self.host.tab(tab).await?.url])
    }

    /// Ask a person (through the host) about `command`, rated for risk; `page`: the origin
    /// of the page it leaves, if it leaves one. The answer, or the coded refusal.
    #[allow(clippy::too_many_arguments)] // the approval's parts
    async fn ask(
        &self,
        asker: Asker<'_>,
        tab: TabId,
        command: &Command,
        (category, origin): (Category, &Origin),
        page: Option<Origin>,
        reader: &Judge,
        approval_ms: u64,
    ) -> Result<Answer, WireError> {
        let (method, params) = (command.name(), command.params());
        let target = self.describe_target(tab, &params);
        // Every element the input lands on, read as the page has it (nothing to read for a
        // read).
        let spots = match category {
            Category::Read => Vec::new(),
            _ => risk::spots(command),
        };
        let lands = self.landings(tab, spots, reader).await;
        let (risk, risk_why) = risk::rate(&risk::Action {
            facts: &command.facts(),
            category,
            target: target.as_deref(),
            origin,
            page: page.as_ref().or(Some(origin)),
            submits: risk::submits(command),
            lands: &lands,
        });
        let request = ApprovalView {
            id: 0,
            tab_id: tab,
            method: method.to_string(),
            category: category.name().to_string(),
            origin: origin.to_string(),
            args: {
                // Text typed into a field the page says is confidential — or one it could
                // not say anything of — is not shown; the agent's words for the field decide
                // nothing. `type`'s text lands on its element, a form's values on its fields.
                let hidden: Vec<usize> = (lands.iter().enumerate())
                    .filter(|(_, l)| l.facts.as_ref().is_none_or(|f| f.confidential().is_some()))
                    .map(|(i, _)| i)
                    .collect();
                let mut args = crate::mask::mask_params(method, &params);
                crate::mask::mask_typed(method, &mut args, Some(&hidden));
                args
            },
            target,
            expires: platform::now_ms() + approval_ms as f64,
            risk,
            risk_why,
            who: asker.map(str::to_string),
            lasting: crate::policy::person::lasting_origin(&origin.to_string()),
        };
        let answer = self.host.ask(request, approval_ms).await;
        // "Always" is kept by the host (every agent, until revoked: so not here, where a
        // revoke could not reach it).
        if answer == Answer::Origin {
            self.granted
                .borrow_mut()
                .push((asker.map(str::to_string), category, origin.clone()));
        }
        answer.verdict(category, origin, approval_ms)?;
        Ok(answer)
    }

    /// What the page says of each place `spots` names (in order), read within
    /// [`FACTS_WAIT`] in all: a page busy in a loop or holding a dialog must not keep the
    /// question from being asked. What was not read in time is unread (`None`).
    async fn landings(
        &self,
        tab: TabId,
        spots: Vec<(String, risk::Spot)>,
        reader: &Judge,
    ) -> Vec<risk::Landing> {
        let read = RefCell::new(Vec::new());
        let each = async {
            for (_, spot) in &spots {
                let facts = self.tabs.facts_at(tab, spot, reader).await;
                read.borrow_mut().push(facts);
            }
        };
        let _ = platform::timeout(FACTS_WAIT, each).await;
        let mut read = read.into_inner().into_iter();
        spots
            .into_iter()
            .map(|(name, _)| risk::Landing {
                name,
                facts: read.next().flatten(),
            })
            .collect()
    }

    /// The element a command names (both, for a drag), as a person can recognise it.
    fn describe_target(&self, tab: TabId, params: &Value) -> Option<String> {
        let text = |k: &str| params.get(k).and_then(Value::as_str);
        let element = |by_ref: &str, by_selector: &str| {
            if let Some(r) = text(by_ref) {
                return Some(
                    self.tabs
                        .ref_line(tab, r)
                        .unwrap_or_else(|| format!("element {r} of the last snapshot")),
                );
            }
            text(by_selector)
                .map(|s| format!("the element matching {}", crate::escape::quoted_cut(s, 200)))
        };
        element("ref", "selector").or_else(|| {
            let (from, to) = (
                element("startRef", "startSelector")?,
                element("endRef", "endSelector")?,
            );
            Some(format!("{from}, dropped on {to}"))
        })
    }
}

/// The tab a command ran on: the one its answer names (a new tab's), else the one it was
/// sent to.
pub fn ran_on(result: &Result<Value, WireError>, sent_to: Option<TabId>) -> Option<TabId> {
    result
        .as_ref()
        .ok()
        .and_then(|d| d.get("tab_id").and_then(Value::as_i64))
        .map(|t| t as TabId)
        .or(sent_to)
}

/// An http(s) URL: the only kind a download fetches, and the only kind judged as where it
/// came from.
fn web_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A tab as this server may see it: a tab whose origin it may not read shows only that
/// origin and why, never its title or path.
pub fn shown_tab(policy: &Policy, mut tab: TabInfo) -> TabInfo {
    let (url, title) = crate::policy::frames::tab_view(policy, &tab.url, &tab.title);
    tab.url = url;
    tab.title = title;
    tab
}

/// Queue `command` on `tab`'s queue and wait for its answer (`TAB_CLOSED` if the queue
/// went away without one).
async fn answer_of(
    answer: oneshot::Receiver<Result<Value, WireError>>,
    tab_id: TabId,
) -> Result<Value, WireError> {
    answer.await.unwrap_or_else(|_| {
        Err(WireError::new(
            ErrorCode::TabClosed,
            format!("tab {tab_id} was closed"),
        ))
    })
}

/// Slots by tab id.
type Slots = RefCell<HashMap<TabId, Rc<tabs::TabSlot>>>;
