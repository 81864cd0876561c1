//! The worker's side of the side panel's controls: pause (stored; stops what runs, refuses
//! what comes), the person's rules, grants and budgets (stored, laid over every server's
//! policy by `policy::person`), the live feed of every command, and the spent session
//! budgets servers report. What the side panel sees is one `Control` event plus the feed.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::App;
use crate::chrome;
use crate::platform;
use crate::policy::person::{loosest_verdict, PersonPolicy, SiteMode};
use crate::policy::{origin_of, Category, Policy};
use crate::protocol::{CommandId, ErrorCode, TabId, WireError};
use crate::ui::{BudgetKey, FeedEntry, PanelEvent, SessionBudget, SiteView};

const PAUSED_KEY: &str = "kapture.paused";
/// The origin budgets' counts, in session storage: a restarted worker keeps counting.
const LEDGER_KEY: &str = "kapture.budget_counts";
const PERSON_KEY: &str = "kapture.person";
/// Feed entries kept (in memory: the feed is what happens now).
pub const FEED_KEPT: usize = 200;

/// The side panel's state in the worker.
#[derive(Default)]
pub struct Control {
    /// `None` until read from storage (a restarted worker must not forget a pause).
    paused: Cell<Option<bool>>,
    person: RefCell<Option<PersonPolicy>>,
    feed: RefCell<VecDeque<FeedEntry>>,
    /// Asker keys (`<bridge session>/<mcp session>`) → how people know them.
    labels: RefCell<HashMap<String, String>>,
    /// Spent `--max-steps` budgets, by (server port, MCP session).
    sessions: RefCell<HashMap<(u16, String), SessionBudget>>,
    /// Commands a pause stopped: their answer says so (a cancelled one gets none).
    stopped: RefCell<HashSet<(u16, CommandId)>>,
    /// The panel's own quiet lookups running now (console refreshes, picker rounds), by tab
    /// and method: not agents' work, so not in the feed.
    quiet: RefCell<HashMap<(TabId, String), usize>>,
    /// The budget counts as last written (a step that counted nothing writes nothing).
    kept_ledger: RefCell<crate::policy::budget::Ledger>,
}

/// Run `work`, a quiet panel lookup of `method` on `tab`, out of the feed.
pub async fn quietly<T>(
    app: &App,
    tab: TabId,
    method: &str,
    work: impl std::future::Future<Output = T>,
) -> T {
    /// Counts the lookup out however it ends (a stopped one is dropped mid-way).
    struct Counted<'a>(&'a App, (TabId, String));
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            let mut quiet = self.0.control.quiet.borrow_mut();
            if let Some(n) = quiet.get_mut(&self.1) {
                *n -= 1;
                if *n == 0 {
                    quiet.remove(&self.1);
                }
            }
        }
    }
    let key = (tab, method.to_string());
    *app.control
        .quiet
        .borrow_mut()
        .entry(key.clone())
        .or_default() += 1;
    let _counted = Counted(app, key);
    work.await
}

/// Whether a person paused Kapture (read from storage once per worker).
pub async fn paused(app: &App) -> bool {
    if let Some(on) = app.control.paused.get() {
        return on;
    }
    let on = matches!(
        chrome::storage::local_get(PAUSED_KEY).await,
        Ok(Some(Value::Bool(true)))
    );
    app.control.paused.set(Some(on));
    on
}

/// Pause (stopping every command running now, answering each `PAUSED`) or resume.
pub async fn set_paused(app: &Rc<App>, on: bool) {
    app.control.paused.set(Some(on));
    if on {
        let running: Vec<_> = app.running.borrow_mut().drain().collect();
        for (key, stop) in running {
            app.control.stopped.borrow_mut().insert(key);
            stop.abort();
        }
        for tab in app.approvals.withdraw_all() {
            super::push::broadcast_approvals(app, tab);
        }
    }
    let _ = chrome::storage::local_set(PAUSED_KEY, &Value::Bool(on)).await;
    broadcast(app);
}

/// The answer of a command a pause stopped, if it was one (taken once).
pub fn stopped_answer(app: &App, port: u16, id: CommandId) -> Option<WireError> {
    app.control
        .stopped
        .borrow_mut()
        .remove(&(port, id))
        .then(|| {
            WireError::new(
                ErrorCode::Paused,
                "stopped while it ran: a person paused Kapture in its side panel",
            )
        })
}

/// The person's settings (read from storage once per worker).
pub async fn person(app: &App) -> PersonPolicy {
    if let Some(p) = app.control.person.borrow().clone() {
        return p;
    }
    let stored = chrome::storage::local_get(PERSON_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_value::<PersonPolicy>(v).ok())
        .unwrap_or_default();
    app.control
        .person
        .borrow_mut()
        .get_or_insert(stored)
        .clone()
}

/// The person's settings as last read (for synchronous callers; empty before the first
/// read, which every command's `rules_for` does first).
pub fn person_now(app: &App) -> PersonPolicy {
    app.control.person.borrow().clone().unwrap_or_default()
}

/// `server`'s policy with the person's settings over it.
pub async fn rules_for(app: &App, server: &Policy) -> Rc<Policy> {
    Rc::new(person(app).await.apply(server))
}

/// Change the person's settings with `change` (refused, nothing stored, when the result
/// does not validate), store them and show every side panel.
pub async fn change_person(
    app: &Rc<App>,
    change: impl FnOnce(&mut PersonPolicy) -> Result<(), String>,
) {
    let mut p = person(app).await;
    let done = change(&mut p).and_then(|()| p.validate());
    match done {
        Ok(()) => {
            *app.control.person.borrow_mut() = Some(p.clone());
            let value = serde_json::to_value(&p).unwrap_or(Value::Null);
            let _ = chrome::storage::local_set(PERSON_KEY, &value).await;
            broadcast(app);
        }
        Err(why) => send_control(app, Some(why)),
    }
}

/// "Always allow here", answered to an approval: kept for every agent until revoked.
pub fn remember_always(app: &Rc<App>, origin: &str, category: &str) {
    let Some(category) = Category::parse(category) else {
        return;
    };
    if !crate::policy::person::lasting_origin(origin) {
        return;
    }
    let now = platform::now_ms() as u64;
    // At once in memory (the agent's next command must see it), then stored.
    if let Some(p) = app.control.person.borrow_mut().as_mut() {
        p.grant(origin, category, now);
    }
    let (app, origin) = (app.clone(), origin.to_string());
    spawn_local(async move {
        change_person(&app, |p| {
            p.grant(&origin, category, now);
            Ok(())
        })
        .await;
    });
}

/// Labels kept (sessions come and go; the feed names the recent ones).
const LABELS_KEPT: usize = 256;

/// Name the asker `key` as people know it (from a command that carried a label).
pub fn label(app: &App, key: &str, label: &str, port: u16) {
    let mut labels = app.control.labels.borrow_mut();
    if labels.len() >= LABELS_KEPT && !labels.contains_key(key) {
        labels.clear();
    }
    // The label holds an MCP client's self-chosen name: one line, bounded.
    let label = crate::escape::inline_cut(label, 80);
    labels.insert(key.to_string(), format!("{label} · port {port}"));
}

/// How the feed and approvals name `who` (an asker key, or `panel`).
pub fn who(app: &App, key: &str) -> String {
    app.control
        .labels
        .borrow()
        .get(key)
        .cloned()
        .unwrap_or_else(|| match key {
            "panel" => "you (panel)".into(),
            other => format!("session {other}"),
        })
}

/// One more feed entry, shown in every side panel.
pub fn on_step(app: &App, mut step: FeedEntry) {
    if step.who == "panel"
        && step.tab_id.is_some_and(|t| {
            app.control
                .quiet
                .borrow()
                .contains_key(&(t, step.method.clone()))
        })
    {
        return;
    }
    step.who = who(app, &step.who);
    {
        let mut feed = app.control.feed.borrow_mut();
        feed.push_back(step.clone());
        while feed.len() > FEED_KEPT {
            feed.pop_front();
        }
    }
    for p in super::push::watcher_conns(app) {
        p.post(&PanelEvent::Step {
            entry: step.clone(),
        });
    }
    // A step that counted against a budget: kept, and the counts shown.
    if keep_ledger(app) {
        send_control_quietly(app);
    }
}

/// Write the budget counts to session storage when they changed (not awaited); whether
/// they had.
fn keep_ledger(app: &App) -> bool {
    let now = app.exec.ledger();
    if *app.control.kept_ledger.borrow() == now {
        return false;
    }
    let value = serde_json::to_value(&now).unwrap_or(Value::Null);
    *app.control.kept_ledger.borrow_mut() = now;
    spawn_local(async move {
        let _ = chrome::storage::session_set(LEDGER_KEY, &value).await;
    });
    true
}

/// Take back the counts an earlier worker kept (at start).
pub async fn restore_ledger(app: &App) {
    if let Ok(Some(v)) = chrome::storage::session_get(LEDGER_KEY).await {
        if let Ok(kept) = serde_json::from_value(v) {
            app.exec.restore_ledger(kept);
        }
    }
}

/// The whole feed, oldest first.
pub fn feed(app: &App) -> Vec<FeedEntry> {
    app.control.feed.borrow().iter().cloned().collect()
}

/// Spent session budgets kept (a server may name sessions at will).
const SESSIONS_KEPT: usize = 64;

/// A server told a session's budget: kept while spent, shown in the side panel.
pub fn session_budget(app: &Rc<App>, port: u16, mut b: SessionBudget, ended: bool) {
    let key = (port, b.session.clone());
    {
        let mut sessions = app.control.sessions.borrow_mut();
        if ended || b.used < b.max {
            sessions.remove(&key);
        } else if sessions.len() < SESSIONS_KEPT || sessions.contains_key(&key) {
            // The label holds an MCP client's self-chosen name: one line, bounded.
            b.label = crate::escape::inline_cut(&b.label, 80);
            sessions.insert(key, b);
        }
    }
    broadcast(app);
}

/// The connection to the server on `port` ended or began anew: its sessions are not the
/// ones listed (a restarted kapture numbers its sessions from 1 again).
pub fn forget_server(app: &Rc<App>, port: u16) {
    let had = {
        let mut sessions = app.control.sessions.borrow_mut();
        let before = sessions.len();
        sessions.retain(|(p, _), _| *p != port);
        before != sessions.len()
    };
    if had {
        broadcast(app);
    }
}

/// A person gave a budget more steps.
pub fn extend(app: &Rc<App>, budget: BudgetKey, steps: u64) {
    let steps = steps.clamp(1, 10_000);
    match budget {
        BudgetKey::Origin { origin } => {
            app.exec.extend_budget(&origin, steps);
            keep_ledger(app);
        }
        BudgetKey::Session { port, session } => super::conns::send_to(
            app,
            port,
            &crate::protocol::ExtensionFrame::Event {
                event: crate::protocol::BrowserEvent::ExtendBudget { session, steps },
            },
        ),
    }
    broadcast(app);
}

/// Every server's origin budgets (and the person's) with their counts.
fn budgets(app: &App) -> Vec<crate::policy::budget::BudgetState> {
    let person = person_now(app);
    let mut all = Vec::new();
    for policy in super::conns::server_policies(app) {
        for b in app.exec.budget_states(&person.apply(&policy)) {
            if !all.contains(&b) {
                all.push(b);
            }
        }
    }
    if all.is_empty() {
        all = app.exec.budget_states(&person.apply(&Policy::default()));
    }
    all
}

/// The site of `tab` as agents may act on it: per category, the loosest verdict any
/// connected server's rules (with the person's over them) give there — what the person
/// sees is what the freest agent may do. A person's browser's defaults when none is
/// connected.
async fn site(app: &App, tab: TabId) -> Option<SiteView> {
    let url = chrome::tabs::get(tab).await.ok()?.url;
    let origin = match origin_of(&url) {
        Some(o) if !o.host.is_empty() => o.to_string(),
        _ => return None,
    };
    let person = person_now(app);
    let mut servers = super::conns::server_policies(app);
    if servers.is_empty() {
        servers.push(Policy::connected_default());
    }
    let policies: Vec<Policy> = servers.iter().map(|p| person.apply(p)).collect();
    Some(SiteView {
        tab_id: tab,
        origin,
        mode: SiteMode::loosest(&policies, &url),
        verdicts: Category::ALL
            .into_iter()
            .map(|c| (c, loosest_verdict(&policies, c, &url)))
            .collect(),
    })
}

fn control_event(app: &App, site: Option<SiteView>, error: Option<String>) -> PanelEvent {
    let mut sessions: Vec<SessionBudget> =
        app.control.sessions.borrow().values().cloned().collect();
    sessions.sort_by(|a, b| (a.port, &a.session).cmp(&(b.port, &b.session)));
    PanelEvent::Control {
        paused: app.control.paused.get().unwrap_or(false),
        safe_mode: app.approvals.safe_mode_now(),
        person: person_now(app),
        budgets: budgets(app),
        sessions,
        site,
        error,
    }
}

/// Send every side panel the control state (each with its own tab's site).
pub fn broadcast(app: &Rc<App>) {
    send_control(app, None);
}

fn send_control(app: &Rc<App>, error: Option<String>) {
    let app = app.clone();
    spawn_local(async move {
        paused(&app).await;
        person(&app).await;
        for p in super::push::watcher_conns(&app) {
            let site = match p.site_tab() {
                Some(tab) => site(&app, tab).await,
                None => None,
            };
            p.set_last_site(site.clone());
            p.post(&control_event(&app, site, error.clone()));
        }
    });
}

/// The control state after a step: counts only, so no site lookup per command.
fn send_control_quietly(app: &App) {
    for p in super::push::watcher_conns(app) {
        p.post(&control_event(app, p.last_site(), None));
    }
}
