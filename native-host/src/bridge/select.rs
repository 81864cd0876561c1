//! Which engine runs a call, chosen again at every call: the extension of the browser kapture
//! launched while it is connected, else the native engine where kapture holds that browser
//! (its DevTools pipe or port). A change is said once, in the answer of the call where it
//! happened and in `browser_status`; what the engine before handed out is refused, never
//! applied to the other: its tab ids (the two number tabs apart, see [`NATIVE_TAB_BASE`])
//! and its refs (a ref is taken only on a tab the engine now in use snapshotted since).

use std::collections::HashSet;
use std::time::Instant;

use ext_core::protocol::{ErrorCode, TabId, WireError};
use serde_json::Value;

/// The first tab id of a native engine over a launched browser the extension may drive too;
/// its ids go down from here. Chrome's tab ids are positive (anywhere in that range: a
/// browser may start them high), so the two engines' ids never meet.
pub const NATIVE_TAB_BASE: TabId = -2;

/// Is `tab` an id the native engine over a launched browser gave?
pub fn native_tab(tab: TabId) -> bool {
    tab < 0
}

/// The engine a call goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Extension,
    Native,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Extension => "the Kapture extension",
            EngineKind::Native => "the native CDP engine",
        }
    }
}

/// What the hub says of the extension's connection, as the selection reads it.
#[derive(Debug, Clone, Default)]
pub struct Link {
    /// An extension is connected: `Some(true)` when it is the one of the browser this
    /// kapture launched (it may take over from the native engine), `Some(false)` another's.
    pub connected: Option<bool>,
    /// The last changes of connection and why (replaced, dropped, refused, revoked), with
    /// their times, oldest first (at most [`Link::KEPT`]).
    pub events: std::collections::VecDeque<(Instant, String)>,
}

impl Link {
    /// Connection changes `browser_status` shows.
    pub const KEPT: usize = 4;

    /// Note a change of connection.
    pub fn happened(&mut self, what: String) {
        if self.events.len() >= Self::KEPT {
            self.events.pop_front();
        }
        self.events.push_back((Instant::now(), what));
    }

    /// The changes as `browser_status` says them, newest last.
    pub fn said(&self) -> Option<String> {
        let said: Vec<String> = self
            .events
            .iter()
            .map(|(at, what)| format!("{what} ({} s ago)", at.elapsed().as_secs()))
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }
}

/// The selection's memory across calls.
#[derive(Default)]
pub struct Selection {
    last: Option<EngineKind>,
    /// The last change of engine, when, and why (for `browser_status`).
    change: Option<(Instant, String)>,
    /// Since the last change: the tabs (`None`: the engine's default tab) the engine in use
    /// gave refs for. Before any change: `None`, every ref is the engine's own.
    fresh: Option<HashSet<Option<TabId>>>,
}

impl Selection {
    /// The engine that ran the last call (`None` before the first).
    pub fn last(&self) -> Option<EngineKind> {
        self.last
    }

    /// The last engine change as `browser_status` says it.
    pub fn change(&self) -> Option<String> {
        self.change
            .as_ref()
            .map(|(at, why)| format!("{why} ({} s ago)", at.elapsed().as_secs()))
    }

    /// The engine for this call is `kind`; `switchable`: both engines can drive this
    /// browser (the native one over a launched browser). Answers the one-line note when
    /// the engine changed here, and refuses what belonged to the engine before.
    pub fn enter(
        &mut self,
        kind: EngineKind,
        switchable: bool,
        link: &Link,
        method: &str,
        tab_id: Option<TabId>,
        params: &Value,
    ) -> Result<Option<String>, WireError> {
        let mut note = None;
        if self.last.is_some_and(|last| last != kind) {
            let why = match kind {
                EngineKind::Extension => "the browser's Kapture extension connected".to_string(),
                EngineKind::Native => match link.events.back() {
                    Some((_, event)) => format!("the Kapture extension is not connected ({event})"),
                    None => "the Kapture extension is not connected".to_string(),
                },
            };
            let line = format!(
                "Engine changed: {} drives the browser now, because {why}; tab ids and refs from before are not valid: list tabs (browser_tabs) and take a new snapshot.",
                kind.name()
            );
            tracing::warn!("{line}");
            self.change = Some((Instant::now(), format!("to {}, because {why}", kind.name())));
            self.fresh = Some(HashSet::new());
            note = Some(line);
        }
        self.last = Some(kind);
        if switchable {
            if let Some(t) = tab_id {
                let natives = native_tab(t);
                let other = match (kind, natives) {
                    (EngineKind::Extension, true) => Some(EngineKind::Native),
                    (EngineKind::Native, false) => Some(EngineKind::Extension),
                    _ => None,
                };
                if let Some(other) = other {
                    return Err(WireError::new(
                        ErrorCode::TabNotFound,
                        format!(
                            "tab {t} was {}'s; {} drives the browser now: list the tabs again (browser_tabs) and use their ids",
                            other.name(),
                            kind.name()
                        ),
                    ));
                }
            }
        }
        if let Some(fresh) = &self.fresh {
            if !fresh.contains(&tab_id) && names_a_ref(method, params) {
                return Err(WireError::new(
                    ErrorCode::RefStale,
                    format!(
                        "the engine changed to {} since that ref was given; take a new snapshot of this tab",
                        kind.name()
                    ),
                ));
            }
        }
        Ok(note)
    }

    /// A call answered: a snapshot or find gave refs of the engine now in use for its tab.
    pub fn answered(&mut self, method: &str, tab_id: Option<TabId>, answer: &Value) {
        use ext_core::methods::{Find, Method, Snapshot};
        let Some(fresh) = &mut self.fresh else {
            return;
        };
        if method != Snapshot::NAME && method != Find::NAME {
            return;
        }
        fresh.insert(tab_id);
        if let Some(t) = answer.get("tab_id").and_then(Value::as_i64) {
            fresh.insert(Some(t as TabId));
        }
    }
}

/// Does the command name an element by ref (which only the engine that gave it can read)?
fn names_a_ref(method: &str, params: &Value) -> bool {
    use ext_core::methods::Spot;
    let Ok(command) = ext_core::methods::Command::decode(method, params.clone()) else {
        return false;
    };
    command
        .targets()
        .iter()
        .any(|(_, spot)| matches!(spot, Spot::Element(t) if t.element_ref.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_is_said_once_and_the_old_engines_tabs_and_refs_are_refused() {
        let mut s = Selection::default();
        let link = Link::default();
        let click = json!({"ref": "e3"});
        // The first engine is no change, and its refs are its own.
        let first = s.enter(EngineKind::Extension, true, &link, "click", Some(5), &click);
        assert_eq!(first, Ok(None));
        let mut link = Link::default();
        link.happened("heartbeat lost".into());
        let note = s
            .enter(
                EngineKind::Native,
                true,
                &link,
                "tabs.list",
                None,
                &json!({}),
            )
            .unwrap()
            .unwrap();
        assert!(
            note.contains("native CDP engine") && note.contains("heartbeat lost"),
            "{note}"
        );
        assert!(s.change().unwrap().contains("heartbeat lost"));
        // The extension's tab id is not the native engine's.
        let e = s
            .enter(EngineKind::Native, true, &link, "click", Some(5), &click)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::TabNotFound);
        // A ref on a native tab not snapshotted since: stale; after a snapshot: taken.
        let tab = Some(NATIVE_TAB_BASE - 1);
        let e = s
            .enter(EngineKind::Native, true, &link, "click", tab, &click)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::RefStale);
        s.answered("snapshot", tab, &json!({}));
        assert_eq!(
            s.enter(EngineKind::Native, true, &link, "click", tab, &click),
            Ok(None)
        );
        // A selector is no ref: it is read on the page as it is.
        let by_selector = json!({"selector": "#b"});
        let other = Some(NATIVE_TAB_BASE - 2);
        assert_eq!(
            s.enter(
                EngineKind::Native,
                true,
                &link,
                "click",
                other,
                &by_selector
            ),
            Ok(None)
        );
        // Back to the extension: said again, native ids refused.
        let back = s
            .enter(
                EngineKind::Extension,
                true,
                &link,
                "tabs.list",
                None,
                &json!({}),
            )
            .unwrap();
        assert!(back.unwrap().contains("extension connected"));
        let e = s
            .enter(
                EngineKind::Extension,
                true,
                &link,
                "click",
                tab,
                &by_selector,
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::TabNotFound);
    }
}
