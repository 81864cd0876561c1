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
use crate::policy::{Category, Origin, Policy};
use crate::protocol::{TabId, WireError};
use crate::ui::{self, ApprovalView};

pub use crate::policy::gate::Guard;
use crate::policy::gate::{self as pure, Admission, Answer, Target};

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
    match (pure::target(command), command) {
        (Target::Url(url), _) => return Ok(vec![url]),
        // A link clicked to download: where its href points, and the frame it is in.
        (Target::Link(_), Command::Download(p)) => {
            let mut urls = page_urls(app, tab, &params).await?;
            if let Some(href) = app.tabs.link_href(tab, p).await {
                urls.insert(0, href);
            }
            return Ok(urls);
        }
        (Target::History(delta), _) if app.tabs.is_open(tab) => {
            if let Ok(hist) =
                chrome::debugger::send_command(tab, "Page.getNavigationHistory", &Value::Null).await
            {
                if let Some(dest) = pure::history_entry(&hist, delta) {
                    return Ok(vec![dest]);
                }
            }
        }
        _ => {}
    }
    page_urls(app, tab, &params).await
}

/// Where the tab is: the frame of the ref `params` name, else the main frame.
async fn page_urls(app: &App, tab: TabId, params: &Value) -> Result<Vec<String>, WireError> {
    if let Some(urls) = app.tabs.judged_for(tab, params) {
        return Ok(urls);
    }
    Ok(vec![chrome::tabs::get(tab).await?.url])
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
    let here = if pure::leaves_page(command) {
        page_urls(app, tab, &Value::Null).await?
    } else {
        Vec::new()
    };
    let granted = app.approvals.granted.borrow().clone();
    let approved = match pure::admit(
        &policy,
        category,
        &urls,
        &here,
        safe_mode(app).await,
        &granted,
    )? {
        Admission::Allowed => None,
        Admission::Granted(origin) => Some((category, origin)),
        Admission::Ask(origin) => {
            ask(app, tab, command, category, &origin, approval_ms).await?;
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
    let answer = match answer {
        Some(Ok(a)) => Answer::parse(&a),
        Some(Err(_)) => Answer::Withdrawn,
        None => Answer::NoAnswer,
    };
    if answer == Answer::Origin {
        app.approvals
            .granted
            .borrow_mut()
            .push((category, origin.clone()));
    }
    answer.verdict(category, origin, approval_ms)
}

pub use crate::policy::gate::recheck;
