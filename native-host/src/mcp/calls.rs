//! How a session's tool reaches the browser: which tab (the one named — if this session
//! may drive it —, else its current tab, else the browser's active tab unless another
//! session owns it, else a fresh tab of its own), the call with its timeout, a dialog
//! answered per `--dialog`, and an action's follow-up snapshot.

use ext_core::escape;
use ext_core::methods::{ActionOutcome, Budget, HandleDialog, Method, Snapshot, TabsList, TabsNew};
use ext_core::protocol::{ErrorCode, TabId, WireError};

use super::answer::RanOn;
use super::{Acting, Answer, DialogAnswer, KaptureServer, OnTab, SnapshotMode, MAX_TIMEOUT_MS};

impl KaptureServer {
    pub(super) fn current(&self) -> Option<TabId> {
        let generation = self.bridge().generation();
        self.shared.registry().current(self.id(), generation)
    }

    pub(super) fn set_current(&self, tab: Option<TabId>) {
        let generation = self.bridge().generation();
        self.shared
            .registry()
            .set_current(self.id(), generation, tab);
    }

    /// `tab` is this session's now (it opened it, or took it as its current tab) — unless
    /// another live session owns it.
    pub(super) fn claim(&self, tab: TabId) {
        self.shared.registry().claim(self.id(), tab);
    }

    /// May this session drive `tab`?
    pub(super) fn check_tab(&self, tab: TabId) -> Result<(), WireError> {
        self.shared.registry().check(self.id(), tab)
    }

    /// The tab a call without tabId acts on: the current one; without one, the browser's
    /// active tab (the engine's default: `None`) unless another live session owns it — then
    /// a fresh tab of this session's own, which the answer mentions.
    pub(super) async fn default_tab(&self) -> Result<Option<TabId>, WireError> {
        if let Some(tab) = self.current() {
            // Two sessions may have taken the same active tab at once: the one that does not
            // own it moves on.
            if self.check_tab(tab).is_ok() {
                return Ok(Some(tab));
            }
            self.set_current(None);
        }
        let others = self.shared.registry().others_own_tabs(self.id());
        if !others || self.config().share_tabs {
            return Ok(None);
        }
        let list = self.browser_call(None, &TabsList {}).await?;
        if let Some(active) = list.iter().find(|t| t.active) {
            if self.check_tab(active.tab_id).is_ok() {
                return Ok(Some(active.tab_id));
            }
        }
        let owner = list
            .iter()
            .find(|t| t.active)
            .and_then(|t| self.shared.registry().mark(self.id(), t.tab_id));
        let tab = self.open_tab(None, false).await?;
        crate::session_log::note(|n| {
            n.news.push(format!(
                "Opened tab {} of this session's own: the browser's active tab belongs to {}; tools without tabId act on tab {} now",
                tab.tab_id,
                owner.as_deref().unwrap_or("another session"),
                tab.tab_id
            ))
        });
        Ok(Some(tab.tab_id))
    }

    /// Open a tab for this session (in its tab group; in its own context when `isolated`):
    /// owned by it and its current tab.
    pub(super) async fn open_tab(
        &self,
        url: Option<String>,
        isolated: bool,
    ) -> Result<ext_core::methods::TabInfo, WireError> {
        let group = Some(self.shared.registry().label(self.id()));
        let tab = self
            .browser_call(
                None,
                &TabsNew {
                    url,
                    group,
                    isolated,
                },
            )
            .await?;
        {
            let mut registry = self.shared.registry();
            registry.claim(self.id(), tab.tab_id);
            if isolated {
                if let Some(entry) = registry.get_mut(self.id()) {
                    entry.isolated.insert(tab.tab_id);
                }
            }
        }
        self.set_current(Some(tab.tab_id));
        Ok(tab)
    }

    /// The timeout of a call that names none: the policy file's `tool_timeout_ms`, else the
    /// tool's own; a tool that gets more than the standard default (navigation,
    /// screenshots, waits) never gets less than its own.
    pub(super) fn default_timeout_ms(&self, own: u64) -> u64 {
        match self.config().tool_timeout_ms {
            Some(ms) if own > ext_core::methods::DEFAULT_TIMEOUT_MS => ms.max(own),
            Some(ms) => ms,
            None => own,
        }
    }

    /// Run `M` on a tab (explicit, else current, else the browser's active tab). A call
    /// without an explicit tab pins the tab it ran on as the current one.
    pub(super) async fn on_tab<M>(&self, args: &OnTab<M>) -> Result<M::Response, WireError>
    where
        M: Method,
        M::Response: RanOn,
    {
        let timeout_ms = match args.timeout_ms {
            Some(0) | Some(MAX_TIMEOUT_MS..) => {
                let why = format!("timeoutMs must be between 1 and {}", MAX_TIMEOUT_MS - 1);
                return Err(WireError::new(ErrorCode::BadArgs, why));
            }
            Some(ms) => ms,
            None => self.default_timeout_ms(M::TIMEOUT_MS),
        };
        self.browser_ready().await?;
        let target = match args.tab_id {
            Some(tab) => {
                self.check_tab(tab)?;
                Some(tab)
            }
            None => self.default_tab().await?,
        };
        let res = self
            .bridge()
            .call_with_timeout::<M>(target, &args.params, timeout_ms)
            .await
            .map_err(|e| e.into_wire());
        let res = match res {
            Err(e) if e.code == ErrorCode::DialogOpen => return Err(self.auto_answer(e).await),
            other => other?,
        };
        let ran_on = res.ran_on();
        crate::session_log::note(|n| n.tab = Some(ran_on));
        if args.tab_id.is_none() {
            self.set_current(Some(ran_on));
            self.claim(ran_on);
        }
        Ok(res)
    }

    pub(super) async fn browser_ready(&self) -> Result<(), WireError> {
        self.shared.browser.ready(self.bridge()).await
    }

    /// A text answer.
    pub(super) fn reply(&self, res: Result<String, WireError>) -> Answer {
        Answer::text(res)
    }

    /// A typing action answered: note for the journals which values went into confidential
    /// fields, and mask those values in all the session answers from now on.
    pub(super) fn typed_into(&self, outcome: &ActionOutcome, values: &[&str]) {
        for i in &outcome.confidential {
            if let Some(value) = values.get(*i) {
                self.masks.add(value, "confidential");
            }
        }
        crate::session_log::note(|n| n.confidential = Some(outcome.confidential.clone()));
    }

    /// With `--dialog accept|dismiss`, answer a dialog that stopped a command right away.
    async fn auto_answer(&self, mut e: WireError) -> WireError {
        let accept = match self.config().dialog {
            DialogAnswer::Ask => return e,
            DialogAnswer::Accept => true,
            DialogAnswer::Dismiss => false,
        };
        let tab = e
            .data
            .as_ref()
            .and_then(|d| d.get("tab_id"))
            .and_then(|t| t.as_i64())
            .map(|t| t as TabId);
        let answer = HandleDialog {
            accept,
            prompt_text: None,
        };
        match self.bridge().call::<HandleDialog>(tab, &answer).await {
            Ok(_) => {
                e.message = format!(
                    "{} and was {} automatically (--dialog)",
                    e.message.replacen(" is open", " opened", 1),
                    if accept { "accepted" } else { "dismissed" }
                )
            }
            Err(err) => {
                e.message = format!(
                    "{} (answering it automatically failed: {})",
                    e.message,
                    err.into_wire()
                )
            }
        }
        e
    }

    /// Apply the server's character budget where the call names none.
    pub(super) fn fill_budget(&self, budget: &mut Budget) {
        budget.max_chars.get_or_insert(self.config().max_chars);
    }

    /// Run an action; add the snapshot or its diff when asked (per call, else server default).
    pub(super) async fn act<M>(
        &self,
        a: &Acting<M>,
        describe: impl FnOnce(&M::Response) -> String,
    ) -> Answer
    where
        M: Method,
        M::Response: RanOn,
    {
        let res = match self.on_tab(&a.on).await {
            Ok(r) => r,
            Err(e) => return Answer::fail(e),
        };
        let mut out = describe(&res);
        let mode = a.include_snapshot.unwrap_or(self.config().include_snapshot);
        if mode != SnapshotMode::Off {
            let params = Snapshot {
                diff: mode == SnapshotMode::Diff,
                budget: Budget {
                    max_chars: Some(self.config().max_chars),
                    offset: None,
                },
                ..Snapshot::default()
            };
            match self
                .bridge()
                .call::<Snapshot>(Some(res.ran_on()), &params)
                .await
            {
                Ok(snap) => {
                    out.push('\n');
                    out.push_str(&super::read::noted_refs(snap));
                }
                Err(e) => out.push_str(&format!(
                    "\n(no snapshot: {})",
                    escape::inline(&e.into_wire().to_string())
                )),
            }
        }
        Answer::text(Ok(out))
    }

    /// A browser-level call (tabs, …), once a browser is there.
    pub(super) async fn browser_call<M: Method>(
        &self,
        tab: Option<TabId>,
        params: &M,
    ) -> Result<M::Response, WireError> {
        self.browser_ready().await?;
        self.bridge()
            .call::<M>(tab, params)
            .await
            .map_err(|e| e.into_wire())
    }
}
