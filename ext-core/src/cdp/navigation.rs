//! Where the main frame's latest navigation stands — asked for, under way, committed,
//! loaded, same-document, given up — as a small state machine fed with CDP events (pure),
//! and the one decision the waits after actions and before snapshots take on it.
//!
//! Why events and not a look after one round trip: a form submission is planned as a task
//! and started by the browser a little later, and while a cross-document navigation is
//! pending Chrome holds back commands for the page until it commits. So "did this action
//! navigate" is read from the signals that come first (`Page.frameRequestedNavigation`,
//! `Page.frameStartedNavigating`, …), given a short grace window to appear, and "has the new
//! page loaded" from the events of the committed document, which the state keeps: a load
//! that happened before anyone waited for it is not missed.

use serde_json::Value;

/// Actions that may start a navigation (clicks, keys, submits) pass this as their grace: they
/// look for one once the page has handled their input and rendered a frame (evidence, not
/// a wait). A read of the page model within this of an action's answer waits at least
/// until it passed, so a navigation or render the action started a little later shows.
pub const GRACE_MS: f64 = 150.0;
/// A read after an action that loaded no new document waits until the DOM has not changed
/// for this long: apps render late (a framework's poll, a `hashchange` handler, a
/// debounce), and a snapshot taken before shows the page as it was. An agent's next call
/// rarely comes this soon, so it rarely waits at all.
pub const QUIET_MS: f64 = 150.0;
/// The longest a read waits for the page to go quiet after an action (counted from the
/// action's answer): a page that never stops changing (a ticking clock) costs this.
pub const SETTLE_MAX_MS: f64 = 1_000.0;
/// A navigation asked for but never started by the browser within this is given up on.
pub const START_MS: f64 = 2_000.0;
/// Once the new document's DOM is ready, how long its `load` (images, frames) is waited for.
pub const AFTER_DCL_MS: f64 = 3_000.0;

/// The stage of one navigation of the main frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stage {
    /// Asked for by the page (a form submitted, a link followed, a script), not started yet.
    Requested,
    /// The browser is fetching the new document (redirects included).
    Started,
    /// The new document committed; `dcl_at` is when its DOM was ready.
    Committed { dcl_at: Option<f64> },
    /// The new document fired `load` (or stopped loading).
    Loaded,
    /// The URL changed within the document (history API, fragment).
    SameDocument,
    /// Given up without a new document (a download, a 204, a cancelled navigation).
    Abandoned,
}

/// One navigation of the main frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Navigation {
    /// Increasing per tab; compared with a [`Mark`].
    pub id: u64,
    pub stage: Stage,
    /// Where it goes: the URL asked for, then the one it committed on.
    pub url: Option<String>,
    /// The document loader the browser gave it, once started.
    loader: Option<String>,
    /// When it was first seen (ms).
    since: f64,
    /// The frame reported loading since it was asked for: a stop then means given up.
    loading: bool,
}

impl Navigation {
    /// Still on its way to a loaded document.
    pub fn in_flight(&self) -> bool {
        matches!(
            self.stage,
            Stage::Requested | Stage::Started | Stage::Committed { .. }
        )
    }
}

/// What was current before an action: navigations after it are the action's, and one in
/// flight at that moment is waited for too.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Mark {
    id: u64,
    in_flight: bool,
}

/// An input action's answer: when (ms) and where navigations stood then.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Acted {
    pub at: f64,
    pub mark: Mark,
}

/// What the waits are told to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Wait for the next navigation event, at most this many ms, then decide again.
    Wait(f64),
    /// No navigation (none started within the grace window, or it was given up).
    Quiet,
    /// A navigation happened and its page is ready (loaded, or same-document).
    Navigated,
    /// A navigation is under way and did not finish in time; `committed` tells whether
    /// the new document is there (partly loaded) or still being fetched.
    Loading {
        committed: bool,
        url: Option<String>,
    },
}

/// The bounds of one wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// How long a navigation may take to appear (0: only one already seen counts).
    pub grace_ms: f64,
    /// Longest wait in all.
    pub limit_ms: f64,
}

/// The main frame's navigations as its events tell them.
#[derive(Debug, Default)]
pub struct NavTracker {
    last_id: u64,
    current: Option<Navigation>,
}

/// The events the tracker reads (for waiters that wake on any of them).
pub const EVENTS: &[&str] = &[
    "Page.frameRequestedNavigation",
    "Page.frameScheduledNavigation",
    "Page.frameStartedNavigating",
    "Page.frameStartedLoading",
    "Page.frameNavigated",
    "Page.navigatedWithinDocument",
    "Page.domContentEventFired",
    "Page.loadEventFired",
    "Page.frameStoppedLoading",
    "Network.requestWillBeSent",
    "Inspector.targetCrashed",
];

fn text<'a>(params: &'a Value, pointer: &str) -> Option<&'a str> {
    params.pointer(pointer).and_then(Value::as_str)
}

impl NavTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// The latest navigation seen, if any.
    pub fn current(&self) -> Option<&Navigation> {
        self.current.as_ref()
    }

    /// Whether a navigation began after `mark` (a page timer's, after an action's answer).
    pub fn since(&self, mark: Mark) -> Option<&Navigation> {
        self.current
            .as_ref()
            .filter(|n| n.id > mark.id && n.stage != Stage::Abandoned)
    }

    /// Remember where things stand, before an action.
    pub fn mark(&self) -> Mark {
        Mark {
            id: self.last_id,
            in_flight: self.current.as_ref().is_some_and(Navigation::in_flight),
        }
    }

    fn begin(&mut self, stage: Stage, url: Option<&str>, loader: Option<&str>, now: f64) {
        self.last_id += 1;
        self.current = Some(Navigation {
            id: self.last_id,
            stage,
            url: url.map(str::to_string),
            loader: loader.map(str::to_string),
            since: now,
            loading: false,
        });
    }

    /// A navigation asked for (by the page, or scheduled with no delay).
    fn requested(&mut self, url: Option<&str>, now: f64) {
        // `javascript:` URLs run a script in place; they load nothing.
        if url.is_some_and(|u| {
            u.trim_start()
                .to_ascii_lowercase()
                .starts_with("javascript:")
        }) {
            return;
        }
        let same = self
            .current
            .as_ref()
            .is_some_and(|n| n.stage == Stage::Requested && n.url.as_deref() == url);
        if !same {
            self.begin(Stage::Requested, url, None, now);
        }
    }

    /// The browser started fetching a document for the main frame.
    fn started(&mut self, url: Option<&str>, loader: Option<&str>, now: f64) {
        match self.current.as_mut() {
            Some(n) if n.stage == Stage::Requested => {
                n.stage = Stage::Started;
                n.loader = loader.map(str::to_string);
                if url.is_some() {
                    n.url = url.map(str::to_string);
                }
            }
            // The same navigation again (a redirect, or its second signal).
            Some(n)
                if n.stage == Stage::Started
                    && (n.loader.is_none()
                        || loader.is_none()
                        || n.loader.as_deref() == loader) =>
            {
                if n.loader.is_none() {
                    n.loader = loader.map(str::to_string);
                }
                if url.is_some() {
                    n.url = url.map(str::to_string);
                }
            }
            _ => self.begin(Stage::Started, url, loader, now),
        }
    }

    /// Feed one event; `main` is the main frame's id when known.
    pub fn on_event(&mut self, method: &str, params: &Value, main: Option<&str>, now: f64) {
        let frame = text(params, "/frameId");
        let is_main = frame.is_some() && frame == main;
        match method {
            // Other dispositions open a tab or a window, or download: this page stays.
            "Page.frameRequestedNavigation"
                if is_main && text(params, "/disposition").is_none_or(|d| d == "currentTab") =>
            {
                self.requested(text(params, "/url"), now);
            }
            // Deprecated but still sent, and the first sign of a fragment navigation; a
            // delayed one (a meta refresh in 30 s) is not under way yet.
            "Page.frameScheduledNavigation"
                if is_main && params.get("delay").and_then(Value::as_f64).unwrap_or(0.0) <= 0.0 =>
            {
                self.requested(text(params, "/url"), now);
            }
            "Page.frameStartedNavigating" if is_main => {
                let same_document = matches!(
                    text(params, "/navigationType"),
                    Some("sameDocument" | "historySameDocument")
                );
                if same_document {
                    self.requested(text(params, "/url"), now);
                } else {
                    self.started(text(params, "/url"), text(params, "/loaderId"), now);
                }
            }
            "Network.requestWillBeSent" if is_main && text(params, "/type") == Some("Document") => {
                self.started(text(params, "/request/url"), text(params, "/loaderId"), now);
            }
            "Page.frameStartedLoading" if is_main => match self.current.as_mut() {
                Some(n) if matches!(n.stage, Stage::Requested | Stage::Started) => {
                    n.loading = true;
                }
                _ => {
                    self.begin(Stage::Started, None, None, now);
                    if let Some(n) = self.current.as_mut() {
                        n.loading = true;
                    }
                }
            },
            "Page.frameNavigated" => {
                if params.pointer("/frame/parentId").is_some() {
                    return;
                }
                let url = text(params, "/frame/url");
                let loader = text(params, "/frame/loaderId");
                let stage = if text(params, "/type") == Some("BackForwardCacheRestore") {
                    // A page restored from the back/forward cache fires no load again.
                    Stage::Loaded
                } else {
                    Stage::Committed { dcl_at: None }
                };
                let ours = self.current.as_ref().is_some_and(|n| {
                    matches!(n.stage, Stage::Requested | Stage::Started)
                        && (n.loader.is_none() || loader.is_none() || n.loader.as_deref() == loader)
                });
                if !ours {
                    self.begin(stage, url, loader, now);
                }
                if let Some(n) = self.current.as_mut() {
                    n.stage = stage;
                    n.url = url.map(str::to_string).or(n.url.take());
                    n.loader = loader.map(str::to_string).or(n.loader.take());
                }
            }
            "Page.navigatedWithinDocument" if is_main => {
                let url = text(params, "/url");
                match self.current.as_mut() {
                    // A cross-document navigation under way is not ended by this.
                    Some(n) if n.stage == Stage::Started && n.loader.is_some() => {}
                    Some(n) if n.stage == Stage::Requested => {
                        n.stage = Stage::SameDocument;
                        n.url = url.map(str::to_string);
                    }
                    _ => self.begin(Stage::SameDocument, url, None, now),
                }
            }
            // Both carry no frame: they are the main frame's current document's.
            "Page.domContentEventFired" => {
                if let Some(n) = self.current.as_mut() {
                    if n.stage == (Stage::Committed { dcl_at: None }) {
                        n.stage = Stage::Committed { dcl_at: Some(now) };
                    }
                }
            }
            "Page.loadEventFired" => {
                if let Some(n) = self.current.as_mut() {
                    if matches!(n.stage, Stage::Committed { .. }) {
                        n.stage = Stage::Loaded;
                    }
                }
            }
            "Page.frameStoppedLoading" if is_main => {
                if let Some(n) = self.current.as_mut() {
                    match n.stage {
                        Stage::Committed { .. } => n.stage = Stage::Loaded,
                        // The browser fetched and gave up (a 204, a download); a stop before
                        // the browser even started is the old document's load ending.
                        Stage::Started => n.stage = Stage::Abandoned,
                        Stage::Requested if n.loading => n.stage = Stage::Abandoned,
                        _ => {}
                    }
                }
            }
            "Inspector.targetCrashed" => {
                if let Some(n) = self.current.as_mut().filter(|n| n.in_flight()) {
                    n.stage = Stage::Abandoned;
                }
            }
            _ => {}
        }
    }

    /// What to do about the navigation since `mark`, `now` ms, for a wait that began at
    /// `began`: wait more (how long), or the outcome.
    pub fn decide(&self, mark: Mark, began: f64, now: f64, limits: Limits) -> Verdict {
        let deadline = began + limits.limit_ms;
        let quiet = || {
            let until = (began + limits.grace_ms).min(deadline);
            if now < until {
                Verdict::Wait(until - now)
            } else {
                Verdict::Quiet
            }
        };
        let Some(n) = self.current.as_ref() else {
            return quiet();
        };
        let ours = n.id > mark.id || (n.id == mark.id && mark.in_flight);
        if !ours {
            return quiet();
        }
        let loading = |committed| Verdict::Loading {
            committed,
            url: n.url.clone(),
        };
        match n.stage {
            Stage::Abandoned => Verdict::Quiet,
            Stage::Loaded | Stage::SameDocument => Verdict::Navigated,
            Stage::Requested => {
                let until = (n.since + START_MS).min(deadline);
                if now < until {
                    Verdict::Wait(until - now)
                } else if n.since + START_MS <= now {
                    // Asked for, never started: nothing is loading.
                    Verdict::Quiet
                } else {
                    loading(false)
                }
            }
            Stage::Started => {
                if now < deadline {
                    Verdict::Wait(deadline - now)
                } else {
                    loading(false)
                }
            }
            Stage::Committed { dcl_at } => {
                let until = dcl_at.map_or(deadline, |t| (t + AFTER_DCL_MS).min(deadline));
                if now < until {
                    Verdict::Wait(until - now)
                } else if dcl_at.is_some() {
                    // Its DOM is ready; what is still loading (images, ads) is not waited for.
                    Verdict::Navigated
                } else {
                    loading(true)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const MAIN: Option<&str> = Some("M");
    const LIMITS: Limits = Limits {
        grace_ms: GRACE_MS,
        limit_ms: 10_000.0,
    };

    /// Feed `(ms, method, params)` in order; answers the tracker.
    fn fed(t: &mut NavTracker, events: &[(f64, &str, Value)]) {
        for (at, method, params) in events {
            t.on_event(method, params, MAIN, *at);
        }
    }

    fn loaded_page(t: &mut NavTracker) {
        fed(
            t,
            &[
                (0.0, "Page.frameStartedLoading", json!({"frameId": "M"})),
                (
                    1.0,
                    "Page.frameNavigated",
                    json!({"frame": {"id": "M", "loaderId": "L0", "url": "http://a.test/form"}}),
                ),
                (2.0, "Page.domContentEventFired", json!({})),
                (3.0, "Page.loadEventFired", json!({})),
                (4.0, "Page.frameStoppedLoading", json!({"frameId": "M"})),
            ],
        );
    }

    #[test]
    fn a_click_that_starts_nothing_waits_out_the_grace_window_only() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        assert_eq!(
            t.decide(mark, 100.0, 100.0, LIMITS),
            Verdict::Wait(GRACE_MS)
        );
        assert_eq!(t.decide(mark, 100.0, 200.0, LIMITS), Verdict::Wait(50.0));
        assert_eq!(t.decide(mark, 100.0, 250.0, LIMITS), Verdict::Quiet);
        // Events of other frames change nothing.
        t.on_event(
            "Page.frameRequestedNavigation",
            &json!({"frameId": "child", "url": "http://a.test/x", "disposition": "currentTab"}),
            MAIN,
            260.0,
        );
        assert_eq!(t.decide(mark, 100.0, 260.0, LIMITS), Verdict::Quiet);
    }

    #[test]
    fn a_delayed_post_answered_with_a_redirect_is_waited_for_until_its_page_loads() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        // The request comes with the click; the server answers a second later.
        fed(
            &mut t,
            &[
                (
                    105.0,
                    "Page.frameRequestedNavigation",
                    json!({"frameId": "M", "url": "http://a.test/submit", "reason": "formSubmissionPost", "disposition": "currentTab"}),
                ),
                (
                    106.0,
                    "Page.frameScheduledNavigation",
                    json!({"frameId": "M", "url": "http://a.test/submit", "delay": 0}),
                ),
            ],
        );
        assert_eq!(t.current().unwrap().stage, Stage::Requested);
        assert_eq!(t.decide(mark, 100.0, 110.0, LIMITS), Verdict::Wait(1995.0));
        fed(
            &mut t,
            &[
                (
                    120.0,
                    "Page.frameStartedNavigating",
                    json!({"frameId": "M", "loaderId": "L1", "url": "http://a.test/submit", "navigationType": "differentDocument"}),
                ),
                (121.0, "Page.frameStartedLoading", json!({"frameId": "M"})),
                (
                    122.0,
                    "Network.requestWillBeSent",
                    json!({"frameId": "M", "loaderId": "L1", "type": "Document", "request": {"url": "http://a.test/submit"}}),
                ),
                (
                    123.0,
                    "Page.frameClearedScheduledNavigation",
                    json!({"frameId": "M"}),
                ),
            ],
        );
        // Far past the grace window, still fetching: keep waiting, up to the limit.
        assert_eq!(t.decide(mark, 100.0, 1000.0, LIMITS), Verdict::Wait(9100.0));
        fed(
            &mut t,
            &[
                (
                    1100.0,
                    "Network.requestWillBeSent",
                    json!({"frameId": "M", "loaderId": "L1", "type": "Document", "request": {"url": "http://a.test/result"}, "redirectResponse": {"status": 303}}),
                ),
                (
                    1105.0,
                    "Page.frameNavigated",
                    json!({"frame": {"id": "M", "loaderId": "L1", "url": "http://a.test/result"}}),
                ),
            ],
        );
        let n = t.current().unwrap().clone();
        assert_eq!(n.url.as_deref(), Some("http://a.test/result"));
        assert!(matches!(
            t.decide(mark, 100.0, 1106.0, LIMITS),
            Verdict::Wait(_)
        ));
        t.on_event("Page.domContentEventFired", &json!({}), MAIN, 1110.0);
        t.on_event("Page.loadEventFired", &json!({}), MAIN, 1120.0);
        assert_eq!(t.decide(mark, 100.0, 1121.0, LIMITS), Verdict::Navigated);
        // One navigation, however many signals it sent.
        assert_eq!(n.id, mark.id + 1);
    }

    #[test]
    fn a_load_that_happened_before_the_wait_is_not_missed() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        fed(
            &mut t,
            &[
                (
                    1.0,
                    "Page.frameStartedNavigating",
                    json!({"frameId": "M", "loaderId": "L1", "url": "http://a.test/r", "navigationType": "differentDocument"}),
                ),
                (
                    2.0,
                    "Page.frameNavigated",
                    json!({"frame": {"id": "M", "loaderId": "L1", "url": "http://a.test/r"}}),
                ),
                (3.0, "Page.frameStoppedLoading", json!({"frameId": "M"})),
            ],
        );
        // The wait begins long after: the answer is at once, not at the limit.
        assert_eq!(t.decide(mark, 500.0, 500.0, LIMITS), Verdict::Navigated);
    }

    #[test]
    fn history_and_fragment_navigations_are_navigations_at_once() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        t.on_event(
            "Page.navigatedWithinDocument",
            &json!({"frameId": "M", "url": "http://a.test/form?view=2", "navigationType": "historyApi"}),
            MAIN,
            10.0,
        );
        assert_eq!(t.decide(mark, 10.0, 10.0, LIMITS), Verdict::Navigated);
        let mark = t.mark();
        fed(
            &mut t,
            &[
                (
                    20.0,
                    "Page.frameScheduledNavigation",
                    json!({"frameId": "M", "url": "http://a.test/form#three", "reason": "anchorClick", "delay": 0}),
                ),
                (21.0, "Page.frameStartedLoading", json!({"frameId": "M"})),
            ],
        );
        assert!(matches!(
            t.decide(mark, 20.0, 21.0, LIMITS),
            Verdict::Wait(_)
        ));
        fed(
            &mut t,
            &[
                (
                    22.0,
                    "Page.navigatedWithinDocument",
                    json!({"frameId": "M", "url": "http://a.test/form#three", "navigationType": "fragment"}),
                ),
                (22.0, "Page.frameStoppedLoading", json!({"frameId": "M"})),
            ],
        );
        assert_eq!(t.decide(mark, 20.0, 22.0, LIMITS), Verdict::Navigated);
        assert_eq!(
            t.current().unwrap().url.as_deref(),
            Some("http://a.test/form#three")
        );
    }

    #[test]
    fn downloads_scripts_delayed_refreshes_and_other_tabs_are_no_navigation() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        let js = json!({"frameId": "M", "url": "javascript:void(0)", "delay": 0});
        t.on_event("Page.frameScheduledNavigation", &js, MAIN, 10.0);
        let refresh = json!({"frameId": "M", "url": "http://a.test/later", "delay": 30});
        t.on_event("Page.frameScheduledNavigation", &refresh, MAIN, 10.0);
        let tab =
            json!({"frameId": "M", "url": "http://a.test/new", "disposition": "newForegroundTab"});
        t.on_event("Page.frameRequestedNavigation", &tab, MAIN, 10.0);
        assert_eq!(t.mark(), mark, "none of these is a navigation of this page");
        // A download: started, then stopped without a document.
        fed(
            &mut t,
            &[
                (
                    11.0,
                    "Page.frameRequestedNavigation",
                    json!({"frameId": "M", "url": "http://a.test/file.bin", "disposition": "currentTab"}),
                ),
                (
                    12.0,
                    "Page.frameStartedNavigating",
                    json!({"frameId": "M", "loaderId": "L1", "url": "http://a.test/file.bin", "navigationType": "differentDocument"}),
                ),
                (12.0, "Page.frameStartedLoading", json!({"frameId": "M"})),
                (14.0, "Page.frameStoppedLoading", json!({"frameId": "M"})),
            ],
        );
        assert_eq!(t.decide(mark, 10.0, 15.0, LIMITS), Verdict::Quiet);
        // A 204 asked for while the page still loaded: no new start, the stop ends it.
        let mark = t.mark();
        fed(
            &mut t,
            &[
                (20.0, "Page.frameStartedLoading", json!({"frameId": "M"})),
                (
                    21.0,
                    "Page.frameNavigated",
                    json!({"frame": {"id": "M", "loaderId": "L3", "url": "http://a.test/form"}}),
                ),
                (
                    22.0,
                    "Page.frameRequestedNavigation",
                    json!({"frameId": "M", "url": "http://a.test/nocontent", "disposition": "currentTab"}),
                ),
                (
                    23.0,
                    "Page.frameStartedNavigating",
                    json!({"frameId": "M", "loaderId": "L4", "url": "http://a.test/nocontent", "navigationType": "differentDocument"}),
                ),
                (300.0, "Page.frameStoppedLoading", json!({"frameId": "M"})),
            ],
        );
        assert_eq!(t.current().unwrap().stage, Stage::Abandoned);
        assert_eq!(t.decide(mark, 22.0, 300.0, LIMITS), Verdict::Quiet);
    }

    #[test]
    fn a_request_never_started_is_given_up_and_a_slow_server_is_said_to_be_loading() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        let asked = json!({"frameId": "M", "url": "http://a.test/x", "disposition": "currentTab"});
        t.on_event("Page.frameRequestedNavigation", &asked, MAIN, 0.0);
        assert_eq!(t.decide(mark, 0.0, START_MS, LIMITS), Verdict::Quiet);
        // Started, and the server never answers within the limit.
        let started = json!({"frameId": "M", "loaderId": "L2", "url": "http://a.test/slow", "navigationType": "differentDocument"});
        t.on_event("Page.frameStartedNavigating", &started, MAIN, 0.0);
        assert_eq!(
            t.decide(mark, 0.0, 10_000.0, LIMITS),
            Verdict::Loading {
                committed: false,
                url: Some("http://a.test/slow".into())
            }
        );
        // A read made meanwhile waits for it (a short limit), one made after it loads not.
        let read = t.mark();
        let short = Limits {
            grace_ms: 0.0,
            limit_ms: 5_000.0,
        };
        assert!(matches!(
            t.decide(read, 10_000.0, 10_000.0, short),
            Verdict::Wait(_)
        ));
        let navigated =
            json!({"frame": {"id": "M", "loaderId": "L2", "url": "http://a.test/slow"}});
        t.on_event("Page.frameNavigated", &navigated, MAIN, 12_000.0);
        // Committed, DOM not ready at the limit: there, but still loading.
        assert_eq!(
            t.decide(read, 10_000.0, 15_000.0, short),
            Verdict::Loading {
                committed: true,
                url: Some("http://a.test/slow".into())
            }
        );
        // DOM ready: its load is waited for a little, not to the limit.
        t.on_event("Page.domContentEventFired", &json!({}), MAIN, 12_100.0);
        assert_eq!(
            t.decide(read, 12_000.0, 12_200.0, LIMITS),
            Verdict::Wait(AFTER_DCL_MS - 100.0)
        );
        assert_eq!(
            t.decide(read, 12_000.0, 12_100.0 + AFTER_DCL_MS, LIMITS),
            Verdict::Navigated
        );
        t.on_event("Page.loadEventFired", &json!({}), MAIN, 12_300.0);
        let later = t.mark();
        assert_eq!(t.decide(later, 13_000.0, 13_000.0, short), Verdict::Quiet);
    }

    #[test]
    fn a_navigation_replaced_by_another_follows_the_last_one() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let mark = t.mark();
        let first = json!({"frameId": "M", "loaderId": "L1", "url": "http://a.test/one", "navigationType": "differentDocument"});
        let second = json!({"frameId": "M", "loaderId": "L2", "url": "http://a.test/two", "navigationType": "differentDocument"});
        t.on_event("Page.frameStartedNavigating", &first, MAIN, 1.0);
        t.on_event("Page.frameStartedNavigating", &second, MAIN, 2.0);
        let committed = json!({"frame": {"id": "M", "loaderId": "L2", "url": "http://a.test/two"}});
        t.on_event("Page.frameNavigated", &committed, MAIN, 3.0);
        t.on_event("Page.loadEventFired", &json!({}), MAIN, 4.0);
        assert_eq!(t.decide(mark, 1.0, 5.0, LIMITS), Verdict::Navigated);
        assert_eq!(
            t.current().unwrap().url.as_deref(),
            Some("http://a.test/two")
        );
        // A page restored from the back/forward cache is loaded as it commits.
        let mark = t.mark();
        let restored = json!({"frame": {"id": "M", "loaderId": "L0", "url": "http://a.test/form"}, "type": "BackForwardCacheRestore"});
        t.on_event("Page.frameNavigated", &restored, MAIN, 6.0);
        assert_eq!(t.decide(mark, 6.0, 6.0, LIMITS), Verdict::Navigated);
    }

    #[test]
    fn a_navigation_in_flight_before_an_action_is_waited_for_and_reported() {
        let mut t = NavTracker::new();
        loaded_page(&mut t);
        let started = json!({"frameId": "M", "loaderId": "L1", "url": "http://a.test/r", "navigationType": "differentDocument"});
        t.on_event("Page.frameStartedNavigating", &started, MAIN, 1.0);
        let mark = t.mark();
        assert!(matches!(
            t.decide(mark, 2.0, 500.0, LIMITS),
            Verdict::Wait(_)
        ));
        let committed = json!({"frame": {"id": "M", "loaderId": "L1", "url": "http://a.test/r"}});
        t.on_event("Page.frameNavigated", &committed, MAIN, 600.0);
        t.on_event(
            "Page.frameStoppedLoading",
            &json!({"frameId": "M"}),
            MAIN,
            700.0,
        );
        assert_eq!(t.decide(mark, 2.0, 701.0, LIMITS), Verdict::Navigated);
    }
}
