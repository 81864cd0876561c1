//! The policy gate of the extension: every tab command is judged against the policy of the
//! server that sent it, on the page's origin at that moment; `ask` waits for a person in
//! the Kapture panel (opened in a window when none is), and the answer binds to the origin
//! it was given for.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;
use serde_json::Value;

use super::App;
use crate::chrome;
use crate::methods::Command;
use crate::platform;
use crate::policy::{self, Category, Origin, Policy, Verdict};
use crate::protocol::{ErrorCode, TabId, WireError};
use crate::ui::{self, ApprovalView};

/// What a command carries into its tab queue: the rules and any approval it got.
#[derive(Clone)]
pub struct Guard {
    pub policy: Rc<Policy>,
    pub approved: Option<(Category, Origin)>,
    /// What people allowed for the whole session when the command was admitted.
    pub granted: Vec<(Category, Origin)>,
}

impl Guard {
    /// The rules the command is held to while it runs, with every approval it carries.
    pub fn judge(&self, command: &Command) -> Option<policy::Judge> {
        let category = command.category()?;
        Some(policy::Judge {
            policy: self.policy.clone(),
            category,
            approved: self
                .granted
                .iter()
                .chain(self.approved.iter())
                .cloned()
                .collect(),
        })
    }
}

struct Pending {
    view: ApprovalView,
    reply: oneshot::Sender<String>,
}

/// Approvals waiting for a person, and what people allowed for the whole session.
#[derive(Default)]
pub struct Approvals {
    pending: RefCell<HashMap<u64, Pending>>,
    granted: RefCell<Vec<(Category, Origin)>>,
    next: Cell<u64>,
    /// Safe mode from the panel; `None` until read from storage (a restarted worker must
    /// not forget it).
    safe_mode: Cell<Option<bool>>,
}

const SAFE_MODE_KEY: &str = "kapture.safe_mode";

async fn safe_mode(app: &App) -> bool {
    if let Some(on) = app.approvals.safe_mode.get() {
        return on;
    }
    let on = matches!(
        chrome::storage::local_get(SAFE_MODE_KEY).await,
        Ok(Some(Value::Bool(true)))
    );
    app.approvals.safe_mode.set(Some(on));
    on
}

/// Turn safe mode on or off, and remember it.
pub async fn set_safe_mode(app: &App, on: bool) {
    app.approvals.safe_mode.set(Some(on));
    let _ = chrome::storage::local_set(SAFE_MODE_KEY, &Value::Bool(on)).await;
}

impl Approvals {
    /// Safe mode as last known (the panel shows it; checks read storage when unknown).
    pub fn safe_mode_now(&self) -> bool {
        self.safe_mode.get().unwrap_or(false)
    }

    pub fn views(&self, tab: TabId) -> Vec<ApprovalView> {
        let mut v: Vec<ApprovalView> = self
            .pending
            .borrow()
            .values()
            .filter(|p| p.view.tab_id == tab)
            .map(|p| p.view.clone())
            .collect();
        v.sort_by_key(|a| a.id);
        v
    }

    /// A person answered.
    pub fn answer(&self, id: u64, answer: String) -> Option<TabId> {
        let p = self.pending.borrow_mut().remove(&id)?;
        let tab = p.view.tab_id;
        let _ = p.reply.send(answer);
        Some(tab)
    }
}

/// What a command is judged on: where it lands (a navigation's destination, the page
/// back/forward goes to, the URL a download fetches), else the document it acts in.
async fn target_urls(app: &App, tab: TabId, command: &Command) -> Result<Vec<String>, WireError> {
    let params = command.params();
    match command {
        Command::Navigate(p) => return Ok(vec![p.url.clone()]),
        Command::Download(p) => match &p.url {
            Some(url) => return Ok(vec![url.clone()]),
            // A link clicked to download: where its href points, and the frame it is in.
            None => {
                let mut urls = page_urls(app, tab, &params).await?;
                if let Some(href) = app.tabs.link_href(tab, p).await {
                    urls.insert(0, href);
                }
                return Ok(urls);
            }
        },
        Command::GoBack(_) | Command::GoForward(_) if app.tabs.is_open(tab) => {
            let delta = if matches!(command, Command::GoBack(_)) {
                -1
            } else {
                1
            };
            if let Ok(hist) =
                chrome::debugger::send_command(tab, "Page.getNavigationHistory", &Value::Null).await
            {
                if let Some(dest) = history_entry(&hist, delta) {
                    return Ok(vec![dest]);
                }
            }
        }
        _ => {}
    }
    page_urls(app, tab, &params).await
}

/// The URL of the history entry `delta` steps from the current one.
pub fn history_entry(hist: &Value, delta: i64) -> Option<String> {
    let current = hist.get("currentIndex")?.as_i64()?;
    let i = usize::try_from(current + delta).ok()?;
    Some(
        hist.pointer(&format!("/entries/{i}/url"))?
            .as_str()?
            .to_string(),
    )
}

/// Where the tab is: the frame of the ref `params` name, else the main frame.
async fn page_urls(app: &App, tab: TabId, params: &Value) -> Result<Vec<String>, WireError> {
    if let Some(urls) = app.tabs.judged_for(tab, params) {
        return Ok(urls);
    }
    Ok(vec![chrome::tabs::get(tab).await?.url])
}

/// Extension pages are never driven: the approval window is one, and an agent must never
/// answer its own approvals.
fn refuse_extension_page(url: &str) -> Result<(), WireError> {
    let lower = url.trim_start().to_ascii_lowercase();
    if ["chrome-extension://", "devtools://"]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return Err(WireError::new(
            ErrorCode::PolicyDenied,
            format!("{url} is an extension's own page; agents cannot drive it"),
        ));
    }
    Ok(())
}

/// Judge a command before it is queued; an `ask` waits (bounded) for a person.
pub async fn check(
    app: &App,
    tab: TabId,
    command: &Command,
    policy: Rc<Policy>,
    approval_ms: u64,
) -> Result<Option<Guard>, WireError> {
    let Some(category) = command.category() else {
        return Ok(None);
    };
    let urls = target_urls(app, tab, command).await?;
    if let Command::Navigate(p) = command {
        // A malformed destination is bad input, not something the policy judges.
        crate::cdp::check_url(&p.url)?;
    }
    let here = match command {
        // Navigating away from the approval window would close it under a person.
        Command::Navigate(_) | Command::GoBack(_) | Command::GoForward(_) => {
            page_urls(app, tab, &Value::Null).await?
        }
        _ => Vec::new(),
    };
    for u in urls.iter().chain(&here) {
        refuse_extension_page(u)?;
    }
    if category.writes() && safe_mode(app).await {
        return Err(WireError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} is refused: safe mode is on in the Kapture panel (turn it off there to allow changes)",
                category.name()
            ),
        ));
    }
    let (url, decision) = policy::strictest(&policy, category, &urls);
    let origin = policy::origin_of(&url);
    let approved = match decision.verdict {
        Verdict::Allow => None,
        Verdict::Deny => return Err(Policy::denied(category, &url, &decision)),
        Verdict::Ask => {
            let Some(origin) = origin else {
                return Err(Policy::denied(category, &url, &decision));
            };
            if !app
                .approvals
                .granted
                .borrow()
                .iter()
                .any(|(c, o)| *c == category && *o == origin)
            {
                ask(app, tab, command, category, &origin, approval_ms).await?;
            }
            Some((category, origin))
        }
    };
    let granted = app.approvals.granted.borrow().clone();
    Ok(Some(Guard {
        policy,
        approved,
        granted,
    }))
}

/// The element a command names, as a person can recognise it.
fn describe_target(app: &App, tab: TabId, params: &Value) -> Option<String> {
    let text = |k: &str| params.get(k).and_then(Value::as_str);
    if let Some(r) = text("ref") {
        return Some(
            app.tabs
                .ref_line(tab, r)
                .unwrap_or_else(|| format!("element {r} of the last snapshot")),
        );
    }
    text("selector").map(|s| format!("the element matching {s}"))
}

async fn ask(
    app: &App,
    tab: TabId,
    command: &Command,
    category: Category,
    origin: &Origin,
    approval_ms: u64,
) -> Result<(), WireError> {
    let (method, params) = (command.name(), &command.params());
    let id = app.approvals.next.get() + 1;
    app.approvals.next.set(id);
    let view = ApprovalView {
        id,
        tab_id: tab,
        method: method.to_string(),
        category: category.name().to_string(),
        origin: origin.to_string(),
        args: ui::mask_params(method, params),
        target: describe_target(app, tab, params),
        expires: platform::now_ms() + approval_ms as f64,
    };
    let (reply, answer) = oneshot::channel();
    app.approvals
        .pending
        .borrow_mut()
        .insert(id, Pending { view, reply });
    let shown = super::panel::broadcast_approvals(app, tab);
    if !shown {
        // Nobody is looking: open the panel for this tab in its own window.
        let _ = chrome::windows::open_popup(&format!("panel.html?tabId={tab}")).await;
    }
    let answer = platform::timeout(Duration::from_millis(approval_ms), answer).await;
    app.approvals.pending.borrow_mut().remove(&id);
    super::panel::broadcast_approvals(app, tab);
    // Servers journal who decided.
    let said = match &answer {
        Some(Ok(a)) => a.clone(),
        Some(Err(_)) => "withdrawn".into(),
        None => "timeout".into(),
    };
    app.bridge
        .broadcast(&crate::protocol::ExtensionFrame::Event {
            event: crate::protocol::BrowserEvent::Approval {
                tab_id: tab,
                method: method.to_string(),
                origin: origin.to_string(),
                answer: said,
            },
        });
    let denied = |why: &str| {
        WireError::new(
            ErrorCode::ApprovalDenied,
            format!("{} on {origin} was not approved: {why}", category.name()),
        )
    };
    match answer {
        Some(Ok(a)) if a == "once" => Ok(()),
        Some(Ok(a)) if a == "origin" => {
            app.approvals
                .granted
                .borrow_mut()
                .push((category, origin.clone()));
            Ok(())
        }
        Some(Ok(_)) => Err(denied("a person denied it")),
        Some(Err(_)) => Err(denied("the approval was withdrawn")),
        None => Err(denied(&format!(
            "nobody answered within {} s",
            approval_ms / 1000
        ))),
    }
}

/// Judge again right before execution, against the page as it is now: a page that moved
/// to another origin since the approval (or the check) is refused.
pub fn recheck(
    guard: &Guard,
    command: &Command,
    judged_now: Option<&[String]>,
) -> Result<(), WireError> {
    let Some(category) = command.category() else {
        return Ok(());
    };
    let urls: Vec<String> = match command {
        Command::Navigate(p) => vec![p.url.clone()],
        Command::Download(p) if p.url.is_some() => vec![p.url.clone().unwrap_or_default()],
        // Judged on the destination when it runs (`cdp::history`), with this guard's rules.
        Command::GoBack(_) | Command::GoForward(_) => return Ok(()),
        _ => match judged_now {
            Some(j) => j.to_vec(),
            None => return Ok(()),
        },
    };
    for u in &urls {
        refuse_extension_page(u)?;
    }
    let (url, decision) = policy::strictest(&guard.policy, category, &urls);
    let url = url.as_str();
    // An approval binds to the origin it was given for, whatever the rules say elsewhere.
    if let Some((c, o)) = &guard.approved {
        return match policy::origin_of(url) {
            Some(now) if *c == category && *o == now => Ok(()),
            _ => Err(WireError::new(
                ErrorCode::ApprovalDenied,
                format!(
                    "the page is now on {url}, not on {o} where the approval was given; ask again"
                ),
            )),
        };
    }
    match decision.verdict {
        Verdict::Allow => Ok(()),
        Verdict::Deny => Err(Policy::denied(category, url, &decision)),
        Verdict::Ask => Err(WireError::new(
            ErrorCode::ApprovalDenied,
            format!("the page moved to {url}, which needs an approval; ask again"),
        )),
    }
}
