//! The executor core run natively against a fake host: tab queues, the gate before any CDP
//! traffic, the re-check, deadlines and closed tabs, with the real `router` and `cdp` code.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::executor::{LocalPool, LocalSpawner};
use futures::future::{FutureExt, LocalBoxFuture, Shared};
use futures::task::LocalSpawnExt;
use serde_json::{json, Value};

use super::*;
use crate::policy::{OriginPattern, Rule, Verdict};

/// A browser in memory: tabs with URLs, a CDP session per tab that answers from a small
/// script, and a person who answers approvals as told. Scripts containing `HOLD` wait until
/// the test releases them; `NEVER` never answer.
struct FakeHost {
    spawner: LocalSpawner,
    tabs: RefCell<HashMap<TabId, String>>,
    /// Every CDP command sent, with its tab.
    sent: RefCell<Vec<(TabId, String, Value)>>,
    attaches: Cell<usize>,
    hold: RefCell<Option<Shared<oneshot::Receiver<()>>>>,
    release: RefCell<Option<oneshot::Sender<()>>>,
    answer: RefCell<Answer>,
    asked: RefCell<Vec<ApprovalView>>,
    /// Downloads as the browser reports them, and the ids cancelled.
    downloads: RefCell<Vec<DownloadItem>>,
    cancelled: RefCell<Vec<i32>>,
    paused: Cell<bool>,
    /// The rules as they are now (`Host::refresh`), when a test changes them.
    now_rules: RefCell<Option<Rc<Policy>>>,
    /// What the feed was told.
    steps: RefCell<Vec<super::FeedEntry>>,
    /// Reduced mode: no debugger, pages reached by page functions (`page_call`), whose
    /// calls are kept; the page they find is at `page_url`.
    reduced: Cell<bool>,
    page_calls: RefCell<Vec<String>>,
    page_url: RefCell<String>,
}

impl FakeHost {
    fn new(spawner: LocalSpawner) -> Rc<FakeHost> {
        let (release, hold) = oneshot::channel();
        Rc::new(FakeHost {
            spawner,
            tabs: RefCell::new(HashMap::from([
                (1, "http://allowed.test/".to_string()),
                (2, "http://allowed.test/two".to_string()),
            ])),
            sent: RefCell::default(),
            attaches: Cell::new(0),
            hold: RefCell::new(Some(hold.shared())),
            release: RefCell::new(Some(release)),
            answer: RefCell::new(Answer::Denied),
            asked: RefCell::default(),
            downloads: RefCell::default(),
            cancelled: RefCell::default(),
            paused: Cell::new(false),
            now_rules: RefCell::default(),
            steps: RefCell::default(),
            reduced: Cell::new(false),
            page_calls: RefCell::default(),
            page_url: RefCell::new("http://allowed.test/".into()),
        })
    }

    /// The scripts the page ran, in order, on `tab`.
    fn scripts(&self, tab: TabId) -> Vec<String> {
        self.sent
            .borrow()
            .iter()
            .filter(|(t, m, _)| *t == tab && m == "Runtime.evaluate")
            .filter_map(|(_, _, p)| p["expression"].as_str().map(str::to_string))
            .collect()
    }

    fn released(&self) {
        if let Some(r) = self.release.borrow_mut().take() {
            let _ = r.send(());
        }
    }

    fn info(&self, tab: TabId) -> Result<TabInfo, WireError> {
        let url = self.tabs.borrow().get(&tab).cloned().ok_or_else(|| {
            WireError::new(ErrorCode::TabNotFound, format!("no tab with id {tab}"))
        })?;
        Ok(TabInfo {
            tab_id: tab,
            index: 0,
            window_id: 1,
            url,
            title: "T".into(),
            active: tab == 1,
            group: None,
        })
    }
}

fn origin(url: &str) -> String {
    crate::policy::origin_of(url).unwrap().to_string()
}

impl Host for FakeHost {
    async fn tab(&self, tab: TabId) -> Result<TabInfo, WireError> {
        self.info(tab)
    }
    async fn list_tabs(&self) -> Result<Vec<TabInfo>, WireError> {
        let ids: Vec<TabId> = self.tabs.borrow().keys().copied().collect();
        ids.into_iter().map(|t| self.info(t)).collect()
    }
    async fn default_tab(&self) -> Result<TabId, WireError> {
        Ok(1)
    }
    async fn create_tab(&self, _url: &str, _place: &Placement) -> Result<TabInfo, WireError> {
        Err(WireError::new(ErrorCode::Internal, "not in this test"))
    }
    async fn activate_tab(&self, tab: TabId) -> Result<TabInfo, WireError> {
        self.info(tab)
    }
    async fn close_tab(&self, tab: TabId) -> Result<(), WireError> {
        self.tabs.borrow_mut().remove(&tab);
        Ok(())
    }
    async fn attach(&self, tab: TabId) -> Result<(), WireError> {
        self.info(tab)?;
        self.attaches.set(self.attaches.get() + 1);
        Ok(())
    }
    async fn detach(&self, _tab: TabId) -> Result<(), WireError> {
        Ok(())
    }
    async fn send(
        &self,
        tab: TabId,
        _session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        let url = self.info(tab)?.url;
        let text = params.to_string();
        self.sent
            .borrow_mut()
            .push((tab, method.to_string(), params));
        if text.contains("NEVER") {
            futures::future::pending::<()>().await;
        }
        // A picker's poll waits in the page for the person, as a real page's does.
        if text.contains("p.seenAt = Date.now()") {
            platform::sleep(Duration::from_millis(50)).await;
        }
        if text.contains("HOLD") {
            let hold = self.hold.borrow().clone();
            if let Some(hold) = hold {
                let _ = hold.await;
            }
        }
        Ok(match method {
            "Page.getFrameTree" => json!({"frameTree": {"frame": {
                "id": "M", "loaderId": "L", "url": url, "securityOrigin": origin(&url)
            }}}),
            "Page.createIsolatedWorld" => json!({"executionContextId": 7}),
            // What the page says of an element (`cdp/page/facts.js`): `#cc` is a card field.
            "Runtime.evaluate" if text.contains("const fieldInfo") => {
                let autocomplete = if text.contains("#cc") {
                    "cc-number"
                } else {
                    ""
                };
                json!({"result": {"type": "object", "value": {
                    "field": "text", "parts": ["Note"],
                    "fieldInfo": {"tag": "input", "inputType": "text", "autocomplete": autocomplete},
                }}})
            }
            "Runtime.evaluate" => json!({"result": {"type": "number", "value": 1}}),
            _ => json!({}),
        })
    }
    async fn safe_mode(&self) -> bool {
        false
    }
    async fn paused(&self) -> bool {
        self.paused.get()
    }
    fn on_step(&self, step: super::FeedEntry) {
        self.steps.borrow_mut().push(step);
    }
    fn refresh(&self, policy: &Rc<Policy>) -> Rc<Policy> {
        self.now_rules
            .borrow()
            .clone()
            .unwrap_or_else(|| policy.clone())
    }
    async fn ask(&self, request: ApprovalView, _wait_ms: u64) -> Answer {
        self.asked.borrow_mut().push(request);
        self.answer.borrow().clone()
    }
    async fn start_download(&self, url: &str) -> Result<i32, WireError> {
        // `to=` in the URL: the server redirects there.
        let final_url = url.split_once("to=").map(|(_, to)| to.to_string());
        let mut downloads = self.downloads.borrow_mut();
        let id = downloads.len() as i32 + 1;
        downloads.push(DownloadItem {
            id,
            url: url.into(),
            final_url: final_url.unwrap_or_default(),
            filename: format!("/downloads/{id}"),
            state: "complete".into(),
            ..Default::default()
        });
        Ok(id)
    }
    async fn latest_download(&self) -> Result<Option<DownloadItem>, WireError> {
        Ok(self.downloads.borrow().last().cloned())
    }
    async fn get_download(&self, id: i32) -> Result<Option<DownloadItem>, WireError> {
        Ok(self.downloads.borrow().iter().find(|d| d.id == id).cloned())
    }
    async fn cancel_download(&self, id: i32) -> Result<(), WireError> {
        self.cancelled.borrow_mut().push(id);
        Ok(())
    }
    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.spawner.spawn_local(task).expect("the pool runs");
    }
    fn transport(&self) -> Transport {
        if self.reduced.get() {
            Transport::Scripting
        } else {
            Transport::Debugger
        }
    }
    async fn page_call(
        &self,
        _tab: TabId,
        function: &str,
        _args: Vec<Value>,
    ) -> Result<Value, WireError> {
        self.page_calls.borrow_mut().push(function.to_string());
        let url = self.page_url.borrow().clone();
        let here = json!({"url": url, "origin": origin(&url), "doc": "d1", "title": "T"});
        Ok(json!({"here": here, "value": {"x": 10, "y": 20}}))
    }
    async fn loading(&self, _tab: TabId) -> Result<bool, WireError> {
        Ok(false)
    }
}

fn setup() -> (LocalPool, Rc<FakeHost>, Exec<FakeHost>) {
    let pool = LocalPool::new();
    let host = FakeHost::new(pool.spawner());
    let exec = Exec::new(host.clone());
    (pool, host, exec)
}

/// Rules: deny by default; these categories allowed (`None`: all) or asked on these hosts.
fn rules(list: &[(&str, Option<Category>, Verdict)]) -> Rules {
    let policy = Policy {
        rules: list
            .iter()
            .map(|(o, c, v)| Rule {
                origin: OriginPattern::parse(o).unwrap(),
                category: *c,
                verdict: *v,
                source: format!("test {o}"),
            })
            .collect(),
        ..Policy::default()
    };
    Rules {
        policy: Rc::new(policy),
        approval_ms: 1_000,
    }
}

fn allowed() -> Rules {
    rules(&[("allowed.test", None, Verdict::Allow)])
}

fn eval(script: &str) -> Value {
    json!({ "function": script })
}

/// Poll `cond` every few ms, at most 2 s.
async fn until(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..400 {
        if cond() {
            return;
        }
        platform::sleep(Duration::from_millis(5)).await;
    }
    panic!("{what} did not happen within 2 s");
}

#[test]
fn commands_of_one_tab_run_in_order_and_other_tabs_do_not_wait() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        let first = exec.run(Some(1), "evaluate", eval("'HOLD'"), 5_000, allowed());
        let second = exec.run(Some(1), "evaluate", eval("'second'"), 5_000, allowed());
        let other = exec.run(Some(2), "evaluate", eval("'other tab'"), 5_000, allowed());
        let drive = async {
            until("the first command runs", || {
                host.scripts(1).iter().any(|s| s.contains("HOLD"))
            })
            .await;
            // Tab 2 answers while tab 1 is busy; tab 1's second command waits its turn.
            until("the other tab runs", || !host.scripts(2).is_empty()).await;
            assert!(!host.scripts(1).iter().any(|s| s.contains("second")));
            host.released();
        };
        let (a, b, c, ()) = futures::join!(first, second, other, drive);
        assert_eq!(a.unwrap()["value"], 1);
        assert_eq!(b.unwrap()["value"], 1);
        assert_eq!(c.unwrap()["tab_id"], 2);
    });
    let scripts = host.scripts(1);
    let at = |needle: &str| scripts.iter().position(|s| s.contains(needle)).unwrap();
    assert!(at("HOLD") < at("second"), "{scripts:?}");
    // One attachment per tab, prepared once.
    assert_eq!(host.attaches.get(), 2);
    let enables = host
        .sent
        .borrow()
        .iter()
        .filter(|(t, m, _)| *t == 1 && m == "Page.enable")
        .count();
    assert_eq!(enables, 1);
}

#[test]
fn a_denied_command_is_refused_before_any_cdp_traffic() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        // Reads allowed on allowed.test, evaluation not: denied by default.
        let reads = rules(&[("allowed.test", Some(Category::Read), Verdict::Allow)]);
        let err = exec
            .run(Some(1), "evaluate", eval("1"), 5_000, reads)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::PolicyDenied, "{}", err.message);
        assert!(
            err.message.contains("eval on http://allowed.test"),
            "{}",
            err.message
        );
        // Bad arguments are refused before the gate, and before any tab is looked at.
        let err = exec
            .run(Some(99), "click", json!({"selector": 5}), 5_000, allowed())
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArgs);
    });
    assert!(host.sent.borrow().is_empty(), "{:?}", host.sent.borrow());
    assert_eq!(host.attaches.get(), 0);
}

#[test]
fn an_ask_waits_for_a_person_and_an_origin_grant_holds_for_the_session() {
    let (mut pool, host, exec) = setup();
    let asks = rules(&[
        ("allowed.test", None, Verdict::Allow),
        ("allowed.test", Some(Category::Eval), Verdict::Ask),
    ]);
    pool.run_until(async {
        let err = exec
            .run(Some(1), "evaluate", eval("1"), 5_000, asks.clone())
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::ApprovalDenied);
        assert!(host.sent.borrow().is_empty());
        *host.answer.borrow_mut() = Answer::Origin;
        exec.run(Some(1), "evaluate", eval("2"), 5_000, asks.clone())
            .await
            .unwrap();
        *host.answer.borrow_mut() = Answer::Denied;
        // Granted for the session: not asked again on that origin.
        exec.run(Some(1), "evaluate", eval("3"), 5_000, asks.clone())
            .await
            .unwrap();
    });
    let asked = host.asked.borrow();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        (asked[0].method.as_str(), asked[0].category.as_str()),
        ("evaluate", "eval")
    );
    assert_eq!(asked[0].origin, "http://allowed.test:80");
}

#[test]
fn a_grant_is_the_asking_sessions_alone() {
    let (mut pool, host, exec) = setup();
    let asks = rules(&[
        ("allowed.test", None, Verdict::Allow),
        ("allowed.test", Some(Category::Eval), Verdict::Ask),
    ]);
    let run = |who: Option<&'static str>, n: &'static str| {
        exec.run_as(who, Some(1), "evaluate", eval(n), 5_000, asks.clone())
    };
    pool.run_until(async {
        // Session "a" is granted eval on the origin for the session.
        *host.answer.borrow_mut() = Answer::Origin;
        run(Some("a"), "1").await.unwrap();
        *host.answer.borrow_mut() = Answer::Denied;
        run(Some("a"), "2").await.unwrap();
        // Another session, and a command that names none, are asked again (and refused).
        for who in [Some("b"), None] {
            let err = run(who, "3").await.unwrap_err();
            assert_eq!(err.code, ErrorCode::ApprovalDenied, "{who:?}");
        }
    });
    assert_eq!(
        host.asked.borrow().len(),
        3,
        "a once, b once, the nameless once"
    );
}

#[test]
fn a_page_that_moved_while_the_command_waited_is_refused_by_the_recheck() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        let first = exec.run(Some(1), "evaluate", eval("'HOLD'"), 5_000, allowed());
        let drive = async {
            until("the first command runs", || {
                host.scripts(1).iter().any(|s| s.contains("HOLD"))
            })
            .await;
            // Admitted on allowed.test while the first command runs…
            let second = exec.run(Some(1), "evaluate", eval("'second'"), 5_000, allowed());
            let mv = async {
                // …then the page moves to another origin before its turn.
                platform::sleep(Duration::from_millis(20)).await;
                // A child session's navigation is not the page's: nothing changes.
                exec.tabs.on_cdp_event(
                    1,
                    Some("oopif"),
                    "Page.frameNavigated",
                    &json!({"frame": {"id": "M", "loaderId": "L9", "url": "http://child.test/",
                        "securityOrigin": "http://child.test"}}),
                );
                assert_eq!(
                    exec.tabs.main_url(1).as_deref(),
                    Some("http://allowed.test/")
                );
                exec.tabs.on_cdp_event(
                    1,
                    None,
                    "Page.frameNavigated",
                    &json!({"frame": {"id": "M", "loaderId": "L2", "url": "http://elsewhere.test/",
                        "securityOrigin": "http://elsewhere.test"}}),
                );
                host.released();
            };
            futures::join!(second, mv).0
        };
        let (a, b) = futures::join!(first, drive);
        assert!(a.is_ok(), "{a:?}");
        let err = b.unwrap_err();
        assert_eq!(err.code, ErrorCode::PolicyDenied, "{}", err.message);
        assert!(err.message.contains("elsewhere.test"), "{}", err.message);
    });
    assert!(!host.scripts(1).iter().any(|s| s.contains("second")));
}

#[test]
fn deadlines_answer_timeout_running_or_waiting_in_the_queue() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        let started = platform::now_ms();
        let stuck = exec.run(Some(1), "evaluate", eval("'NEVER'"), 300, allowed());
        let behind = exec.run(Some(1), "evaluate", eval("'behind'"), 100, allowed());
        let (a, b) = futures::join!(stuck, behind);
        let (a, b) = (a.unwrap_err(), b.unwrap_err());
        assert_eq!(a.code, ErrorCode::Timeout);
        assert!(
            a.message.contains("did not finish within its timeout"),
            "{}",
            a.message
        );
        assert_eq!(b.code, ErrorCode::Timeout);
        assert!(
            b.message.contains("waiting for earlier commands"),
            "{}",
            b.message
        );
        // Ended by the 300 ms deadline (timers may fire a hair early), not later.
        let took = platform::now_ms() - started;
        assert!((250.0..2_000.0).contains(&took), "{took} ms");
    });
    assert!(!host.scripts(1).iter().any(|s| s.contains("behind")));
}

/// The position of the first script on `tab` containing `needle`, after `from`.
fn script_at(host: &FakeHost, tab: TabId, needle: &str, from: usize) -> Option<usize> {
    host.scripts(tab)
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, s)| s.contains(needle))
        .map(|(i, _)| i)
}

/// What only the picker's end (`js::PICK_END`) says.
const PICK_END_MARK: &str = "token === null";

#[test]
fn a_picker_never_outlives_its_command_whatever_ends_it() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        // Its deadline: the command ends long before the person's wait (the fake page never
        // picks), and the picker is ended before the next command's script runs.
        let timed_out = exec
            .run(Some(1), "pick", json!({"timeout": 60}), 600, allowed())
            .await
            .unwrap_err();
        assert_eq!(timed_out.code, ErrorCode::Timeout, "{}", timed_out.message);
        exec.run(
            Some(1),
            "evaluate",
            eval("'after deadline'"),
            2_000,
            allowed(),
        )
        .await
        .unwrap();
        let end = script_at(&host, 1, PICK_END_MARK, 0).expect("the picker ended");
        let next = script_at(&host, 1, "after deadline", 0).unwrap();
        assert!(end < next, "{:?}", host.scripts(1));

        // A cancel (its caller gone: an agent's cancelled call, the panel's Stop, a pause).
        let before = host.scripts(1).len();
        {
            let pick = exec.run(Some(1), "pick", json!({"timeout": 60}), 10_000, allowed());
            let installed = until("the picker is installed", || {
                script_at(&host, 1, "kapture-picker", before).is_some()
            });
            futures::pin_mut!(pick);
            futures::pin_mut!(installed);
            match futures::future::select(pick, installed).await {
                futures::future::Either::Left((r, _)) => panic!("the pick ended: {r:?}"),
                futures::future::Either::Right(_) => {}
            }
        }
        exec.run(
            Some(1),
            "evaluate",
            eval("'after cancel'"),
            2_000,
            allowed(),
        )
        .await
        .unwrap();
        let end = script_at(&host, 1, PICK_END_MARK, before).expect("the picker ended");
        let next = script_at(&host, 1, "after cancel", before).unwrap();
        assert!(end < next, "{:?}", host.scripts(1));
    });
}

#[test]
fn a_closed_tab_ends_its_running_and_queued_commands_with_tab_closed() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        let started = platform::now_ms();
        let stuck = exec.run(Some(1), "evaluate", eval("'NEVER'"), 10_000, allowed());
        let queued = exec.run(Some(1), "evaluate", eval("'queued'"), 10_000, allowed());
        let close = async {
            until("the command runs", || {
                host.scripts(1).iter().any(|s| s.contains("NEVER"))
            })
            .await;
            host.tabs.borrow_mut().remove(&1);
            exec.tabs.on_removed(1);
        };
        let (a, b, ()) = futures::join!(stuck, queued, close);
        assert_eq!(a.unwrap_err().code, ErrorCode::TabClosed);
        assert_eq!(b.unwrap_err().code, ErrorCode::TabClosed);
        // Ended by the close, not by the 10 s deadline.
        assert!(platform::now_ms() - started < 5_000.0);
        // A command for the closed tab is told it is gone.
        let err = exec
            .run(Some(1), "evaluate", eval("1"), 1_000, allowed())
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::TabNotFound);
    });
}

#[test]
fn browser_methods_run_at_once_and_hide_unreadable_tabs() {
    let (mut pool, host, exec) = setup();
    host.tabs
        .borrow_mut()
        .insert(3, "http://secret.test/account?id=7".into());
    pool.run_until(async {
        let list = exec
            .run(None, "tabs.list", json!({}), 1_000, allowed())
            .await
            .unwrap();
        let list: Vec<TabInfo> = serde_json::from_value(list).unwrap();
        let secret = list.iter().find(|t| t.tab_id == 3).unwrap();
        assert!(!secret.url.contains("account"), "{}", secret.url);
        assert_ne!(secret.title, "T");
        // Closing a tab is an interaction with its page, judged first.
        let reads = rules(&[("allowed.test", Some(Category::Read), Verdict::Allow)]);
        let err = exec
            .run(Some(2), "tabs.close", json!({}), 1_000, reads)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::PolicyDenied);
        assert!(host.tabs.borrow().contains_key(&2));
    });
}

#[test]
fn a_download_redirected_to_a_denied_origin_is_refused_and_cancelled() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        let get = |url: &str| json!({ "url": url });
        let err = exec
            .run(
                Some(1),
                "download",
                get("http://allowed.test/r?to=http://denied.test/secret.csv"),
                5_000,
                allowed(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::PolicyDenied, "{}", err.message);
        assert!(err.message.contains("denied.test"), "{}", err.message);
        assert_eq!(*host.cancelled.borrow(), vec![1]);
        // Without a redirect the same kind of URL is delivered, and nothing is cancelled.
        let done = exec
            .run(
                Some(1),
                "download",
                get("http://allowed.test/file.csv"),
                5_000,
                allowed(),
            )
            .await
            .unwrap();
        assert_eq!(done["path"], "/downloads/2");
        assert_eq!(*host.cancelled.borrow(), vec![1]);
    });
}

#[test]
fn a_sessions_group_keeps_its_colour_and_sessions_spread_over_the_colours() {
    assert_eq!(
        Placement::colour_of("claude-code #1"),
        Placement::colour_of("claude-code #1")
    );
    let colours: std::collections::HashSet<&str> = (1..=12)
        .map(|i| Placement::colour_of(&format!("agent #{i}")))
        .collect();
    assert!(colours.len() >= 4, "{colours:?}");
}

#[test]
fn a_pause_refuses_every_command_and_the_feed_says_so() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        host.paused.set(true);
        let err = exec
            .run_as(
                Some("s1/2"),
                Some(1),
                "evaluate",
                eval("1"),
                5_000,
                allowed(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Paused);
        assert!(err.code.retryable());
        host.paused.set(false);
        exec.run(Some(1), "evaluate", eval("2"), 5_000, allowed())
            .await
            .unwrap();
    });
    assert_eq!(host.scripts(1).len(), 1, "nothing ran while paused");
    let steps = host.steps.borrow();
    assert_eq!(steps.len(), 2);
    assert_eq!(
        (
            steps[0].who.as_str(),
            steps[0].verdict.as_str(),
            steps[0].status.as_str()
        ),
        ("s1/2", "paused", "PAUSED")
    );
    assert_eq!(
        (
            steps[1].who.as_str(),
            steps[1].verdict.as_str(),
            steps[1].status.as_str()
        ),
        ("panel", "allowed", "ok")
    );
    assert_eq!(steps[1].origin, "http://allowed.test:80");
}

#[test]
fn an_origin_budget_refuses_steps_over_it_until_a_person_extends_it() {
    let (mut pool, host, exec) = setup();
    let Rules {
        policy,
        approval_ms: ms,
    } = allowed();
    let mut policy = (*policy).clone();
    policy.budgets.push(crate::policy::budget::Budget {
        origin: OriginPattern::parse("allowed.test").unwrap(),
        max_steps_per_hour: 1,
        source: "test budget".into(),
    });
    let rules = Rules {
        policy: Rc::new(policy),
        approval_ms: ms,
    };
    pool.run_until(async {
        exec.run(Some(1), "evaluate", eval("1"), 5_000, rules.clone())
            .await
            .unwrap();
        let err = exec
            .run(Some(1), "evaluate", eval("2"), 5_000, rules.clone())
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::BudgetExceeded);
        assert!(err.message.contains("resets in"), "{}", err.message);
        // Reads are not steps.
        exec.run(Some(1), "snapshot", json!({}), 5_000, rules.clone())
            .await
            .ok();
        exec.extend_budget("allowed.test", 1);
        exec.run(Some(1), "evaluate", eval("3"), 5_000, rules.clone())
            .await
            .unwrap();
        let state = &exec.budget_states(&rules.policy)[0];
        assert_eq!((state.used, state.extra), (2, 1));
    });
    assert_eq!(host.steps.borrow()[1].verdict, "over budget");
}

#[test]
fn an_approval_says_how_risky_the_action_is() {
    let (mut pool, host, exec) = setup();
    let asks = rules(&[
        ("allowed.test", None, Verdict::Allow),
        ("allowed.test", Some(Category::Eval), Verdict::Ask),
    ]);
    pool.run_until(async {
        *host.answer.borrow_mut() = Answer::Always;
        exec.run_as(
            Some("a"),
            Some(1),
            "evaluate",
            eval("1"),
            5_000,
            asks.clone(),
        )
        .await
        .unwrap();
    });
    let asked = host.asked.borrow();
    assert_eq!(asked[0].risk, crate::policy::risk::Risk::High);
    assert!(asked[0].risk_why.contains("code"), "{}", asked[0].risk_why);
    assert_eq!(asked[0].who.as_deref(), Some("a"));
    assert_eq!(host.steps.borrow()[0].verdict, "approved: always");
}

#[test]
fn an_element_that_cannot_be_read_is_rated_at_least_medium() {
    let (mut pool, host, exec) = setup();
    let asks = rules(&[
        ("allowed.test", None, Verdict::Allow),
        ("allowed.test", Some(Category::Interact), Verdict::Ask),
    ]);
    pool.run_until(async {
        // The tab is not under control yet: nothing of the element can be read.
        let click = json!({"selector": "#next"});
        let out = exec.run(Some(1), "click", click, 5_000, asks.clone()).await;
        assert_eq!(out.unwrap_err().code, ErrorCode::ApprovalDenied);
        // Under control, but the page never answers: asked anyway, once the wait is over.
        exec.run(Some(1), "evaluate", eval("1"), 5_000, asks.clone())
            .await
            .unwrap();
        let click = json!({"selector": "#NEVER"});
        let out = exec.run(Some(1), "click", click, 5_000, asks.clone()).await;
        assert_eq!(out.unwrap_err().code, ErrorCode::ApprovalDenied);
    });
    let asked = host.asked.borrow();
    assert_eq!(asked.len(), 2);
    for a in asked.iter() {
        assert_eq!(a.risk, crate::policy::risk::Risk::Medium, "{a:?}");
        assert_eq!(a.risk_why, "the element could not be read", "{a:?}");
    }
}

#[test]
fn typed_text_is_hidden_in_an_approval_by_the_field_never_by_the_agents_words() {
    let (mut pool, host, exec) = setup();
    let asks = rules(&[
        ("allowed.test", None, Verdict::Allow),
        ("allowed.test", Some(Category::Interact), Verdict::Ask),
    ]);
    pool.run_until(async {
        exec.run(Some(1), "evaluate", eval("1"), 5_000, asks.clone())
            .await
            .unwrap();
        for params in [
            json!({"selector": "#note", "element": "bypass", "text": "Send $500"}),
            json!({"fields": [
                {"selector": "#note", "element": "password", "value": "Ada"},
                {"selector": "#cc", "value": "4111"},
            ]}),
        ] {
            let method = if params.get("fields").is_some() {
                "fill_form"
            } else {
                "type"
            };
            let out = exec.run(Some(1), method, params, 5_000, asks.clone()).await;
            assert_eq!(out.unwrap_err().code, ErrorCode::ApprovalDenied);
        }
    });
    let asked = host.asked.borrow();
    assert_eq!(asked[0].args["text"], "Send $500");
    assert_eq!(asked[0].risk, crate::policy::risk::Risk::Medium);
    let fields = &asked[1].args["fields"];
    assert_eq!(
        (fields[0]["value"].as_str(), fields[1]["value"].as_str()),
        (Some("Ada"), Some(crate::mask::MASK))
    );
    assert_eq!(asked[1].risk, crate::policy::risk::Risk::High);
    assert_eq!(asked[1].risk_why, "field 2: a card field");
}

#[test]
fn a_spent_budget_refuses_before_a_person_is_asked() {
    let (mut pool, host, exec) = setup();
    let Rules {
        policy,
        approval_ms: ms,
    } = rules(&[("allowed.test", None, Verdict::Ask)]);
    let mut policy = (*policy).clone();
    policy.budgets.push(crate::policy::budget::Budget {
        origin: OriginPattern::parse("allowed.test").unwrap(),
        max_steps_per_hour: 1,
        source: "test budget".into(),
    });
    let rules = Rules {
        policy: Rc::new(policy),
        approval_ms: ms,
    };
    pool.run_until(async {
        *host.answer.borrow_mut() = Answer::Once;
        exec.run(Some(1), "evaluate", eval("1"), 5_000, rules.clone())
            .await
            .unwrap();
        let err = exec
            .run(Some(1), "evaluate", eval("2"), 5_000, rules.clone())
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::BudgetExceeded);
    });
    assert_eq!(
        host.asked.borrow().len(),
        1,
        "the spent budget asked nobody"
    );
}

#[test]
fn a_queued_command_is_held_to_the_rules_as_they_are_when_it_runs() {
    let (mut pool, host, exec) = setup();
    pool.run_until(async {
        let first = exec.run(Some(1), "evaluate", eval("'HOLD'"), 5_000, allowed());
        let drive = async {
            until("the first command runs", || {
                host.scripts(1).iter().any(|s| s.contains("HOLD"))
            })
            .await;
            let second = exec.run(Some(1), "evaluate", eval("'second'"), 5_000, allowed());
            let change = async {
                // A person makes the site read-only while the second waits its turn.
                platform::sleep(Duration::from_millis(20)).await;
                *host.now_rules.borrow_mut() =
                    Some(rules(&[("other.test", None, Verdict::Allow)]).policy);
                host.released();
            };
            futures::join!(second, change).0
        };
        let (a, b) = futures::join!(first, drive);
        assert!(a.is_ok(), "{a:?}");
        assert_eq!(b.unwrap_err().code, ErrorCode::PolicyDenied);
    });
    assert!(!host.scripts(1).iter().any(|s| s.contains("second")));
}

#[test]
fn in_reduced_mode_input_is_judged_on_the_page_it_finds_before_any_event() {
    let (mut pool, host, exec) = setup();
    host.reduced.set(true);
    pool.run_until(async {
        // The tab was judged on allowed.test; its document is on denied.test by now.
        *host.page_url.borrow_mut() = "http://denied.test/".into();
        let err = exec
            .run(
                Some(1),
                "click",
                json!({"selector": "#go"}),
                5_000,
                allowed(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::PolicyDenied, "{}", err.message);
        assert_eq!(
            *host.page_calls.borrow(),
            ["aim"],
            "aimed, judged, never pressed"
        );
        // On an allowed page the click is pressed at the judged point.
        *host.page_url.borrow_mut() = "http://allowed.test/".into();
        exec.run(
            Some(1),
            "click",
            json!({"selector": "#go"}),
            5_000,
            allowed(),
        )
        .await
        .unwrap();
        assert!(host.page_calls.borrow().contains(&"press".to_string()));
        // What needs the debugger says so, and what to do instead.
        let err = exec
            .run(Some(1), "screenshot", json!({}), 5_000, allowed())
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Unsupported, "{}", err.message);
        assert!(
            err.message.contains("browser_take_screenshot")
                && err.message.contains("native engine"),
            "{}",
            err.message
        );
    });
    assert!(
        host.sent.borrow().is_empty(),
        "no CDP: {:?}",
        host.sent.borrow()
    );
    assert_eq!(host.attaches.get(), 0);
}
