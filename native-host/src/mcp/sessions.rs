//! The session registry: which MCP sessions are live, and which tabs each owns. Pure
//! decisions (who may drive a tab, who gets a tab a page opened, what a session's end
//! releases), unit-tested without a browser; the handlers hold it behind a mutex.

use std::collections::{BTreeMap, BTreeSet};

use ext_core::protocol::{ErrorCode, TabId, WireError};

use crate::session_log::{Masks, SessionLog};

/// A session's number: 1, 2, … in the order they started; never reused within a run.
pub type SessionId = u32;

/// Tabs a page opened, kept per session until its next answer names them.
const MAX_NEWS: usize = 20;

/// What kapture keeps of one live MCP session.
pub struct Entry {
    /// The client's name from `initialize` (until it spoke: "mcp").
    pub client: String,
    /// Milliseconds since the Unix epoch.
    pub started: u64,
    /// The current tab, with the browser run it belongs to (a restarted browser's tab ids
    /// are not the old ones).
    pub current: Option<(u64, TabId)>,
    /// Tabs pages opened since the session's last answer: told in the next one.
    pub news: Vec<(TabId, String)>,
    /// Tabs opened in the session's own browser context: closed when it ends.
    pub isolated: BTreeSet<TabId>,
    pub log: SessionLog,
    pub masks: Masks,
    /// The client, once it spoke: notifications go there.
    pub peer: Option<rmcp::Peer<rmcp::RoleServer>>,
    /// Resources the client subscribed to (`resources/subscribe`), as it wrote them.
    pub subscriptions: BTreeSet<String>,
    /// Open `subscriptions/listen` requests (MCP 2026-07-28), each with what it accepted.
    pub listeners: Vec<rmcp::service::SubscriptionSink>,
    /// Steps taken (tool calls that are not read-only), and steps a person added to
    /// `--max-steps`.
    pub steps: u64,
    pub extra_steps: u64,
    /// The extension was told this session's budget is spent (so it hears of its end).
    pub budget_told: bool,
}

/// A session's step budget as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    pub used: u64,
    pub max: u64,
}

impl Steps {
    /// The coded refusal of a step over this budget.
    pub fn refusal(&self) -> WireError {
        WireError::new(
            ErrorCode::BudgetExceeded,
            format!(
                "this session's budget of {} steps (--max-steps) is spent: {} steps taken. It does not reset with time: only a person can extend it, in Kapture's side panel",
                self.max, self.used
            ),
        )
    }
}

/// Live sessions and tab ownership.
pub struct Registry {
    next: SessionId,
    sessions: BTreeMap<SessionId, Entry>,
    owners: BTreeMap<TabId, SessionId>,
    /// The policy lets sessions drive each other's tabs.
    share: bool,
    /// Steps per session (`--max-steps`), if limited.
    max_steps: Option<u64>,
}

impl Registry {
    pub fn new(share: bool) -> Registry {
        Registry {
            next: 1,
            sessions: BTreeMap::new(),
            owners: BTreeMap::new(),
            share,
            max_steps: None,
        }
    }

    /// Limit every session to `max` steps.
    pub fn with_max_steps(mut self, max: Option<u64>) -> Registry {
        self.max_steps = max;
        self
    }

    /// `id`'s budget, when steps are limited.
    pub fn steps(&self, id: SessionId) -> Option<Steps> {
        let e = self.sessions.get(&id)?;
        Some(Steps {
            used: e.steps,
            max: self.max_steps? + e.extra_steps,
        })
    }

    /// Whether `id` may take one more step (nothing counted).
    pub fn room(&mut self, id: SessionId) -> Result<(), Steps> {
        if let Some(b) = self.steps(id).filter(|b| b.used >= b.max) {
            if let Some(e) = self.sessions.get_mut(&id) {
                e.budget_told = true;
            }
            return Err(b);
        }
        Ok(())
    }

    /// Count one step of `id`; refused (nothing counted) when its budget is spent.
    pub fn take_step(&mut self, id: SessionId) -> Result<(), Steps> {
        self.room(id)?;
        if let Some(e) = self.sessions.get_mut(&id) {
            e.steps += 1;
        }
        Ok(())
    }

    /// A person gave `id` `steps` more steps; its budget now.
    pub fn extend_steps(&mut self, id: SessionId, steps: u64) -> Option<Steps> {
        self.sessions.get_mut(&id)?.extra_steps += steps;
        self.steps(id)
    }

    /// A new session; answers its number.
    pub fn start(&mut self, started: u64) -> SessionId {
        let id = self.next;
        self.next += 1;
        self.sessions.insert(
            id,
            Entry {
                client: "mcp".into(),
                started,
                current: None,
                news: Vec::new(),
                isolated: BTreeSet::new(),
                log: SessionLog::default(),
                masks: Masks::default(),
                peer: None,
                subscriptions: BTreeSet::new(),
                listeners: Vec::new(),
                steps: 0,
                extra_steps: 0,
                budget_told: false,
            },
        );
        id
    }

    /// The session ended: its entry, and the tabs it owned (released now).
    pub fn end(&mut self, id: SessionId) -> Option<(Entry, Vec<TabId>)> {
        let entry = self.sessions.remove(&id)?;
        let released: Vec<TabId> = self
            .owners
            .iter()
            .filter(|(_, s)| **s == id)
            .map(|(t, _)| *t)
            .collect();
        self.owners.retain(|_, s| *s != id);
        Some((entry, released))
    }

    pub fn get(&self, id: SessionId) -> Option<&Entry> {
        self.sessions.get(&id)
    }

    pub fn get_mut(&mut self, id: SessionId) -> Option<&mut Entry> {
        self.sessions.get_mut(&id)
    }

    pub fn sessions(&self) -> impl Iterator<Item = (SessionId, &Entry)> {
        self.sessions.iter().map(|(id, e)| (*id, e))
    }

    /// `<client> #<id>`: the session's tab group title and the name other sessions see.
    pub fn label(&self, id: SessionId) -> String {
        let client = self.get(id).map(|e| e.client.as_str()).unwrap_or("mcp");
        format!("{client} #{id}")
    }

    /// The live session that owns `tab`.
    pub fn owner(&self, tab: TabId) -> Option<SessionId> {
        self.owners
            .get(&tab)
            .copied()
            .filter(|s| self.sessions.contains_key(s))
    }

    /// Tabs `id` owns, in id order.
    pub fn owned(&self, id: SessionId) -> Vec<TabId> {
        self.owners
            .iter()
            .filter(|(_, s)| **s == id)
            .map(|(t, _)| *t)
            .collect()
    }

    /// Whether another live session owns any tab (with none, a session may take the
    /// browser's active tab without looking).
    pub fn others_own_tabs(&self, id: SessionId) -> bool {
        self.owners
            .values()
            .any(|s| *s != id && self.sessions.contains_key(s))
    }

    /// May `id` drive `tab`? Its own, nobody's, or anyone's when the policy shares tabs.
    pub fn check(&self, id: SessionId, tab: TabId) -> Result<(), WireError> {
        match self.owner(tab) {
            Some(other) if other != id && !self.share => Err(WireError::new(
                ErrorCode::TabNotYours,
                format!(
                    "tab {tab} belongs to session {other} ({})",
                    self.get(other).map(|e| e.client.as_str()).unwrap_or("mcp")
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Whether the policy lets sessions drive (and read the history of) each other's tabs.
    pub fn shares_tabs(&self) -> bool {
        self.share
    }

    /// May `reader` read what session `of` did (its steps and code)? Its own, or anyone's
    /// when the policy shares tabs: another session's history holds what it typed and the
    /// pages of tabs the reader may not drive.
    pub fn check_history(&self, reader: SessionId, of: SessionId) -> Result<(), WireError> {
        if reader == of || self.share {
            return Ok(());
        }
        Err(WireError::new(
            ErrorCode::TabNotYours,
            format!("session {of}'s steps are its own (shared only when the policy shares tabs)"),
        ))
    }

    /// `id` took or opened `tab`: it owns it unless another live session already does.
    pub fn claim(&mut self, id: SessionId, tab: TabId) -> bool {
        match self.owner(tab) {
            Some(other) => other == id,
            None if self.sessions.contains_key(&id) => {
                self.owners.insert(tab, id);
                true
            }
            None => false,
        }
    }

    /// A page in `opener` opened `tab`: it follows its opener's session (also into its own
    /// context), which hears of it in its next answer; a tab opened from nobody's tab is
    /// news for every session. Answers the sessions told.
    pub fn page_opened(&mut self, tab: TabId, opener: TabId, url: &str) -> Vec<SessionId> {
        let told: Vec<SessionId> = match self.owner(opener) {
            Some(owner) => {
                self.owners.insert(tab, owner);
                if let Some(e) = self.sessions.get_mut(&owner) {
                    if e.isolated.contains(&opener) {
                        e.isolated.insert(tab);
                    }
                }
                vec![owner]
            }
            None => self.sessions.keys().copied().collect(),
        };
        for id in &told {
            if let Some(e) = self.sessions.get_mut(id) {
                if e.news.len() < MAX_NEWS {
                    e.news.push((tab, url.to_string()));
                }
            }
        }
        told
    }

    /// The tab closed: nobody owns it, and it is no one's current tab.
    pub fn removed(&mut self, tab: TabId) {
        self.owners.remove(&tab);
        for e in self.sessions.values_mut() {
            if e.current.is_some_and(|(_, t)| t == tab) {
                e.current = None;
            }
            e.isolated.remove(&tab);
        }
    }

    /// `id`'s current tab in browser run `generation`.
    pub fn current(&self, id: SessionId, generation: u64) -> Option<TabId> {
        self.get(id)?
            .current
            .filter(|(g, _)| *g == generation)
            .map(|(_, t)| t)
    }

    pub fn set_current(&mut self, id: SessionId, generation: u64, tab: Option<TabId>) {
        if let Some(e) = self.sessions.get_mut(&id) {
            e.current = tab.map(|t| (generation, t));
        }
    }

    /// The tabs pages opened since `id`'s last answer (told once).
    pub fn take_news(&mut self, id: SessionId) -> Vec<(TabId, String)> {
        self.sessions
            .get_mut(&id)
            .map(|e| std::mem::take(&mut e.news))
            .unwrap_or_default()
    }

    /// How a tab list names a tab another live session owns: `session 2: claude-code`.
    pub fn mark(&self, me: SessionId, tab: TabId) -> Option<String> {
        let owner = self.owner(tab).filter(|o| *o != me)?;
        Some(format!(
            "session {owner}: {}",
            self.get(owner).map(|e| e.client.as_str()).unwrap_or("mcp")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_numbered_from_one_and_labelled_by_client() {
        let mut r = Registry::new(false);
        let a = r.start(0);
        let b = r.start(0);
        assert_eq!((a, b), (1, 2));
        r.get_mut(b).unwrap().client = "claude-code".into();
        assert_eq!(r.label(b), "claude-code #2");
        r.end(a);
        assert_eq!(r.start(0), 3, "numbers are not reused");
    }

    #[test]
    fn a_session_may_not_drive_another_sessions_tab() {
        let mut r = Registry::new(false);
        let (a, b) = (r.start(0), r.start(0));
        assert!(r.claim(a, 10));
        assert!(!r.claim(b, 10), "the first owner keeps it");
        assert!(r.check(a, 10).is_ok());
        let e = r.check(b, 10).unwrap_err();
        assert_eq!(e.code, ErrorCode::TabNotYours);
        assert!(e.message.contains("session 1"), "{}", e.message);
        assert!(r.check(b, 11).is_ok(), "nobody's tab is anyone's");
        assert_eq!(r.mark(b, 10).as_deref(), Some("session 1: mcp"));
        assert_eq!(r.mark(a, 10), None);
        assert!(r.others_own_tabs(b));
        assert!(!r.others_own_tabs(a));
    }

    #[test]
    fn sharing_lets_any_session_drive_any_tab() {
        let mut r = Registry::new(true);
        let (a, b) = (r.start(0), r.start(0));
        r.claim(a, 10);
        assert!(r.check(b, 10).is_ok());
        assert_eq!(r.owner(10), Some(a));
    }

    #[test]
    fn a_tab_a_page_opened_follows_its_openers_session() {
        let mut r = Registry::new(false);
        let (a, b) = (r.start(0), r.start(0));
        r.claim(a, 10);
        r.get_mut(a).unwrap().isolated.insert(10);
        assert_eq!(r.page_opened(11, 10, "http://127.0.0.1/x"), vec![a]);
        assert_eq!(r.owner(11), Some(a));
        assert!(r.get(a).unwrap().isolated.contains(&11));
        assert_eq!(r.take_news(a), vec![(11, "http://127.0.0.1/x".to_string())]);
        assert!(r.take_news(a).is_empty(), "told once");
        assert!(r.take_news(b).is_empty());
        // From nobody's tab: news for all, owned by none.
        assert_eq!(r.page_opened(12, 99, "u"), vec![a, b]);
        assert_eq!(r.owner(12), None);
    }

    #[test]
    fn an_end_releases_the_sessions_tabs() {
        let mut r = Registry::new(false);
        let (a, b) = (r.start(0), r.start(0));
        r.claim(a, 10);
        r.claim(a, 11);
        r.claim(b, 12);
        let (_, released) = r.end(a).unwrap();
        assert_eq!(released, vec![10, 11]);
        assert_eq!(r.owner(10), None);
        assert!(r.check(b, 10).is_ok());
        assert!(r.claim(b, 10));
        assert_eq!(r.owned(b), vec![10, 12]);
        assert!(r.end(a).is_none(), "ends once");
    }

    #[test]
    fn a_closed_tab_is_nobodys_current_tab() {
        let mut r = Registry::new(false);
        let a = r.start(0);
        r.set_current(a, 7, Some(10));
        r.claim(a, 10);
        assert_eq!(r.current(a, 7), Some(10));
        assert_eq!(r.current(a, 8), None, "another browser run");
        r.removed(10);
        assert_eq!(r.current(a, 7), None);
        assert_eq!(r.owner(10), None);
    }

    #[test]
    fn a_session_over_its_steps_is_refused_until_a_person_extends_it() {
        let mut r = Registry::new(false).with_max_steps(Some(2));
        let (a, b) = (r.start(0), r.start(0));
        r.take_step(a).unwrap();
        r.take_step(a).unwrap();
        let spent = r.take_step(a).unwrap_err();
        assert_eq!(spent, Steps { used: 2, max: 2 });
        let e = spent.refusal();
        assert_eq!(e.code, ErrorCode::BudgetExceeded);
        assert!(
            e.message.contains("does not reset with time"),
            "{}",
            e.message
        );
        assert!(!e.retryable());
        assert!(r.get(a).unwrap().budget_told);
        // Budgets are per session.
        r.take_step(b).unwrap();
        assert_eq!(r.extend_steps(a, 1), Some(Steps { used: 2, max: 3 }));
        r.take_step(a).unwrap();
        assert!(r.take_step(a).is_err());
        // Unlimited without --max-steps.
        let mut free = Registry::new(false);
        let c = free.start(0);
        for _ in 0..1000 {
            free.take_step(c).unwrap();
        }
        assert_eq!(free.steps(c), None);
    }
}
