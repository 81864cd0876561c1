//! The CDP logic against a scripted session: which commands go out, and how answers map.

use std::cell::RefCell;
use std::collections::VecDeque;

use futures::executor::block_on;
use serde_json::{json, Value};

use super::*;
use crate::methods::{Click, ElementTarget, Evaluate, Hover, Modifier, MouseButton, PressKey};

/// Answers commands from a script keyed by method, records everything sent.
struct FakeSession {
    sent: RefCell<Vec<(String, Value)>>,
    /// The child session each command went to (`None`: the tab's), in sending order.
    via: RefCell<Vec<Option<String>>>,
    answers: RefCell<VecDeque<(String, Result<Value, WireError>)>>,
    events: RefCell<TabEvents>,
    /// What an action's look at the next rendered frame answers: where the page is then
    /// (`None`: a page that only says it painted, and is asked where it is after).
    painted: RefCell<Option<Value>>,
}

impl FakeSession {
    fn new(answers: Vec<(&str, Result<Value, WireError>)>) -> Self {
        Self {
            sent: RefCell::default(),
            via: RefCell::default(),
            answers: RefCell::new(
                answers
                    .into_iter()
                    .map(|(m, a)| (m.to_string(), a))
                    .collect(),
            ),
            events: RefCell::new(TabEvents::new()),
            painted: RefCell::default(),
        }
    }

    fn methods(&self) -> Vec<String> {
        self.sent.borrow().iter().map(|(m, _)| m.clone()).collect()
    }
}

impl CdpSession for FakeSession {
    fn tab_id(&self) -> TabId {
        9
    }

    async fn send_in(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        // The wait for a quiet page before a read, and an action's look at the next
        // rendered frame, are answered as a page already quiet, outside the script (tests
        // that care look for them in `sent`).
        let asks = |script: &str| {
            method == "Runtime.evaluate"
                && params["expression"]
                    .as_str()
                    .is_some_and(|e| e.contains(script))
        };
        let (settle, paint) = (
            asks(js::SETTLE_DOM),
            asks(js::NEXT_PAINT) || asks(js::PAINTED_PAGE_INFO),
        );
        self.sent.borrow_mut().push((method.to_string(), params));
        self.via.borrow_mut().push(session.map(str::to_string));
        if settle {
            return value(json!({"quiet": 500, "waited": 0}));
        }
        if paint {
            return value(self.painted.borrow().clone().unwrap_or(json!(true)));
        }
        let mut answers = self.answers.borrow_mut();
        match answers.iter().position(|(m, _)| m == method) {
            Some(i) => answers.remove(i).map(|(_, a)| a).unwrap_or(Ok(json!({}))),
            None => Ok(match method {
                // An out-of-process frame's own tree, in its child session.
                "Page.getFrameTree" if session.is_some() => {
                    json!({"frameTree": {"frame": {"id": "O", "loaderId": "LO", "url": "http://oop.test/pay", "securityOrigin": "http://oop.test"}}})
                }
                "Page.getFrameTree" => {
                    json!({"frameTree": {"frame": {"id": "M", "loaderId": "L"}}})
                }
                "Page.createIsolatedWorld" => json!({"executionContextId": 7}),
                _ => json!({}),
            }),
        }
    }

    fn events(&self) -> &RefCell<TabEvents> {
        &self.events
    }
}

fn sel(selector: &str) -> ElementTarget {
    ElementTarget {
        selector: Some(selector.into()),
        ..ElementTarget::default()
    }
}

fn value(v: Value) -> Result<Value, WireError> {
    Ok(json!({"result": {"type": "object", "value": v}}))
}

#[test]
fn click_presses_and_releases_at_the_element_centre() {
    let s = FakeSession::new(vec![
        (
            "Runtime.evaluate",
            value(json!({"x": 10.5, "y": 20.0, "w": 5, "h": 5, "tag": "button"})),
        ),
        ("Runtime.evaluate", value(json!(true))),
        (
            "Runtime.evaluate",
            value(json!({"url": "http://127.0.0.1/", "title": "T", "status": 200})),
        ),
    ]);
    let click = Click {
        target: sel("#go"),
        button: MouseButton::Left,
        double_click: false,
        modifiers: vec![Modifier::Shift],
    };
    let out = block_on(super::click(&s, &click)).unwrap();
    assert_eq!(out.url, "http://127.0.0.1/");
    assert!(!out.navigated);
    let sent = s.sent.borrow();
    let mouse: Vec<&Value> = sent
        .iter()
        .filter(|(m, _)| m == "Input.dispatchMouseEvent")
        .map(|(_, p)| p)
        .collect();
    assert_eq!(mouse.len(), 3);
    assert_eq!(mouse[1]["type"], "mousePressed");
    assert_eq!(mouse[1]["x"], 10.5);
    assert_eq!(mouse[1]["modifiers"], 8);
    assert_eq!(mouse[2]["type"], "mouseReleased");
    // Checked that the element is still under the pointer, between the move and the press.
    let calls: Vec<&str> = sent
        .iter()
        .map(|(m, p)| match m.as_str() {
            "Runtime.evaluate"
                if p["expression"]
                    .as_str()
                    .is_some_and(|e| e.contains("moved from under the pointer")) =>
            {
                "still"
            }
            "Input.dispatchMouseEvent" => p["type"].as_str().unwrap(),
            _ => "",
        })
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        calls,
        ["mouseMoved", "still", "mousePressed", "mouseReleased"]
    );
}

#[test]
fn a_second_click_on_the_same_spot_does_not_move_the_pointer_again() {
    let round = || {
        [
            (
                "Runtime.evaluate",
                value(json!({"x": 10.5, "y": 20.0, "w": 5, "h": 5, "tag": "button"})),
            ),
            ("Runtime.evaluate", value(json!(true))),
            (
                "Runtime.evaluate",
                value(json!({"url": "http://127.0.0.1/", "title": "T", "status": 200})),
            ),
        ]
    };
    let s = FakeSession::new(round().into_iter().chain(round()).collect());
    let click = Click {
        target: sel("#go"),
        button: MouseButton::Left,
        double_click: false,
        modifiers: vec![],
    };
    let moves = |s: &FakeSession| {
        s.sent
            .borrow()
            .iter()
            .filter(|(m, p)| m == "Input.dispatchMouseEvent" && p["type"] == "mouseMoved")
            .count()
    };
    block_on(super::click(&s, &click)).unwrap();
    block_on(super::click(&s, &click)).unwrap();
    assert_eq!(moves(&s), 1, "the pointer was there already");
    // A new document has not seen the pointer: the next click moves it there again.
    s.events.borrow_mut().on_event(
        "Page.frameNavigated",
        &json!({"frame": {"id": "M", "loaderId": "L2", "url": "http://127.0.0.1/next"}}),
    );
    assert_eq!(s.events.borrow().pointer, None);
}

#[test]
fn a_click_refuses_when_another_element_took_the_place_of_its_target() {
    let s = FakeSession::new(vec![
        (
            "Runtime.evaluate",
            value(json!({"x": 10.5, "y": 20.0, "w": 5, "h": 5, "tag": "button"})),
        ),
        (
            "Runtime.evaluate",
            value(
                json!({"error": "NOT_INTERACTABLE", "message": "button \"Next\" moved from under the pointer"}),
            ),
        ),
    ]);
    let click = Click {
        target: sel("#next"),
        button: MouseButton::Left,
        double_click: false,
        modifiers: vec![],
    };
    let e = block_on(super::click(&s, &click)).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotInteractable);
    let pressed = s
        .sent
        .borrow()
        .iter()
        .any(|(m, p)| m == "Input.dispatchMouseEvent" && p["type"] == "mousePressed");
    assert!(!pressed, "nothing was pressed");
}

#[test]
fn element_errors_from_the_page_keep_their_code() {
    let s = FakeSession::new(vec![(
        "Runtime.evaluate",
        value(json!({"error": "SELECTOR_NOT_FOUND", "message": "no element matches #nope"})),
    )]);
    let hover = Hover {
        target: sel("#nope"),
    };
    let err = block_on(super::hover(&s, &hover)).unwrap_err();
    assert_eq!(err.code, ErrorCode::SelectorNotFound);
    assert!(err.message.contains("#nope"));
    assert!(!s
        .methods()
        .contains(&"Input.dispatchMouseEvent".to_string()));
}

#[test]
fn page_exceptions_are_eval_failed() {
    let s = FakeSession::new(vec![(
        "Runtime.evaluate",
        Ok(
            json!({"result": {"type": "object"}, "exceptionDetails": {"text": "Uncaught", "exception": {"description": "Error: boom"}}}),
        ),
    )]);
    let err = block_on(evaluate(
        &s,
        &Evaluate {
            function: "() => { throw new Error('boom') }".into(),
            target: Default::default(),
        },
    ))
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::EvalFailed);
    assert!(err.message.contains("Error: boom"));
    assert_eq!(
        s.sent.borrow()[0].1["expression"],
        "(() => { throw new Error('boom') })()"
    );
}

#[test]
fn evaluate_returns_undefined_as_absent() {
    let s = FakeSession::new(vec![(
        "Runtime.evaluate",
        Ok(json!({"result": {"type": "undefined"}})),
    )]);
    let out = block_on(evaluate(
        &s,
        &Evaluate {
            function: "void 0".into(),
            target: Default::default(),
        },
    ))
    .unwrap();
    assert_eq!(out.value, None);
    assert_eq!(s.sent.borrow()[0].1["expression"], "void 0");
}

#[test]
fn navigation_refuses_other_schemes_before_touching_the_page() {
    let s = FakeSession::new(vec![]);
    for url in ["javascript:alert(1)", "file:///etc/passwd", "example.com"] {
        let err = block_on(navigate(&s, url, Default::default())).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArgs, "{url}");
    }
    for url in [
        "chrome://settings",
        "chrome-extension://abc/x.html",
        "view-source:http://a/",
        "https://chromewebstore.google.com/x",
    ] {
        let err = block_on(navigate(&s, url, Default::default())).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedPage, "{url}");
    }
    assert!(s.sent.borrow().is_empty());
}

#[test]
fn navigation_errors_are_reported_with_the_browser_reason() {
    let s = FakeSession::new(vec![(
        "Page.navigate",
        Ok(json!({"frameId": "F", "errorText": "net::ERR_NAME_NOT_RESOLVED"})),
    )]);
    let err = block_on(navigate(&s, "http://nowhere.invalid/", Default::default())).unwrap_err();
    assert_eq!(err.code, ErrorCode::NavigationFailed);
    assert!(
        err.message.contains("ERR_NAME_NOT_RESOLVED"),
        "{}",
        err.message
    );
    // Not a connection failure: sent once, never retried.
    assert_eq!(s.sent.borrow().len(), 1);
}

#[test]
fn a_transient_failure_is_not_retried_past_the_commands_deadline() {
    let s = FakeSession::new(vec![(
        "Page.navigate",
        Ok(json!({"frameId": "F", "errorText": "net::ERR_CONNECTION_REFUSED"})),
    )]);
    // Too little time left for even the first pause: answered at once.
    s.events().borrow_mut().deadline_ms = Some(crate::platform::now_ms() + 1_000.0);
    let err = block_on(navigate(&s, "http://127.0.0.1:9/", Default::default())).unwrap_err();
    assert_eq!(err.code, ErrorCode::NavigationFailed);
    assert!(
        err.message.ends_with("net::ERR_CONNECTION_REFUSED"),
        "{}",
        err.message
    );
    assert_eq!(s.sent.borrow().len(), 1);
}

#[test]
fn history_without_a_previous_entry_is_bad_args() {
    let s = FakeSession::new(vec![(
        "Page.getNavigationHistory",
        Ok(json!({"currentIndex": 0, "entries": [{"id": 1, "url": "about:blank"}]})),
    )]);
    let err = block_on(history(&s, -1, Default::default())).unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArgs);
}

#[test]
fn function_sources_are_told_from_expressions() {
    for f in [
        "() => 1",
        "async () => 1",
        "function () { return 1 }",
        "x => x",
        "(a, b) => a",
        "  () =>\n 2",
    ] {
        assert!(is_function_source(f), "{f}");
    }
    for e in [
        "1+1",
        "document.title",
        "(1 + 2) * 3",
        "[1].map(x => x)",
        "a == b",
    ] {
        assert!(!is_function_source(e), "{e}");
    }
}

#[test]
fn failures_are_classified() {
    assert_eq!(
        classify_failure("No tab with given id 5."),
        ErrorCode::TabNotFound
    );
    assert_eq!(
        classify_failure("Another debugger is already attached to the tab with id: 5."),
        ErrorCode::DebuggerConflict
    );
    assert_eq!(
        classify_failure("Cannot access a chrome:// URL"),
        ErrorCode::UnsupportedPage
    );
    assert_eq!(
        classify_failure("Detached while handling command."),
        ErrorCode::TabClosed
    );
    assert_eq!(classify_failure("No SW"), ErrorCode::ExtensionDisconnected);
    assert_eq!(classify_failure("something else"), ErrorCode::Internal);
}

#[test]
fn cdp_failures_that_mean_something_is_gone_get_the_code_that_fits() {
    for (raw, code, says) in [
        (
            r#"{"code":-32602,"message":"No frame for given id found"}"#,
            ErrorCode::RefStale,
            "the element's frame is gone: the page changed (No frame for given id found)",
        ),
        (
            r#"{"code":-32001,"message":"Session with given id not found."}"#,
            ErrorCode::RefStale,
            "the element's frame is gone",
        ),
        (
            r#"{"code":-32000,"message":"Cannot find context with specified id"}"#,
            ErrorCode::RefStale,
            "the element's document is gone",
        ),
        (
            r#"{"code":-32000,"message":"Execution context was destroyed."}"#,
            ErrorCode::RefStale,
            "the page navigated",
        ),
        (
            r#"{"code":-32000,"message":"No node with given id found"}"#,
            ErrorCode::RefStale,
            "no longer in the page",
        ),
        (
            r#"{"code":-32000,"message":"Node is detached from document"}"#,
            ErrorCode::RefStale,
            "no longer in the page",
        ),
        (
            r#"{"code":-32000,"message":"Could not find node with given id"}"#,
            ErrorCode::RefStale,
            "no longer in the page",
        ),
        (
            r#"{"code":-32000,"message":"Could not compute content quads."}"#,
            ErrorCode::NotInteractable,
            "no box on screen",
        ),
        ("Target closed.", ErrorCode::TabClosed, "the tab closed"),
        (
            r#"{"code":-32000,"message":"Something new"}"#,
            ErrorCode::Internal,
            "Something new",
        ),
        ("No SW", ErrorCode::ExtensionDisconnected, "No SW"),
    ] {
        let e = failure(raw);
        assert_eq!(e.code, code, "{raw}");
        assert!(e.message.contains(says), "{raw}: {}", e.message);
        assert!(
            !e.message.contains("\"code\""),
            "CDP's JSON is unwrapped: {}",
            e.message
        );
    }
    // A replaced document is still recognised after the mapping (the world is made again).
    assert!(context_gone(&failure(
        r#"{"code":-32000,"message":"Cannot find context with specified id"}"#
    )));
    // Every row is reachable: no earlier pattern hides a later one.
    for (pattern, code, meaning) in FAILURES {
        let raw = format!(
            r#"{{"code":-32000,"message":"X {} y"}}"#,
            pattern.to_uppercase()
        );
        let e = failure(&raw);
        assert_eq!(
            (e.code, e.message.starts_with(meaning)),
            (*code, true),
            "{pattern}"
        );
        assert!(!code.hint().is_empty());
    }
}

#[test]
fn a_click_reads_where_the_page_is_with_its_rendered_frame() {
    let s = FakeSession::new(located_then_page("http://127.0.0.1/old", "Old"));
    *s.painted.borrow_mut() =
        Some(json!({"url": "http://127.0.0.1/", "title": "T", "status": 200}));
    let out = block_on(a_click_on(&s)).unwrap();
    assert_eq!(
        (out.url.as_str(), out.title.as_str()),
        ("http://127.0.0.1/", "T")
    );
    let scripts = s
        .methods()
        .iter()
        .filter(|m| *m == "Runtime.evaluate")
        .count();
    assert_eq!(
        scripts,
        3,
        "locate, still hit, the frame: {:?}",
        s.methods()
    );
}

#[test]
fn key_presses_hold_modifiers_around_the_key() {
    let s = FakeSession::new(vec![(
        "Runtime.evaluate",
        value(json!({"url": "u", "title": "t", "status": null})),
    )]);
    block_on(press_key(
        &s,
        &PressKey {
            key: "Control+a".into(),
        },
    ))
    .unwrap();
    let sent = s.sent.borrow();
    let keys: Vec<(String, String)> = sent
        .iter()
        .filter(|(m, _)| m == "Input.dispatchKeyEvent")
        .map(|(_, p)| {
            (
                p["type"].as_str().unwrap().to_string(),
                p["key"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("rawKeyDown", "Control"),
        ("rawKeyDown", "a"),
        ("keyUp", "a"),
        ("keyUp", "Control"),
    ];
    assert_eq!(keys, expected.map(|(a, b)| (a.to_string(), b.to_string())));
}

#[test]
fn exactly_one_of_ref_and_selector() {
    let s = FakeSession::new(vec![]);
    for target in [
        ElementTarget::default(),
        ElementTarget {
            selector: Some("#a".into()),
            element_ref: Some("e1".into()),
            element: None,
        },
    ] {
        let err = block_on(super::click(
            &s,
            &Click {
                target,
                button: MouseButton::Left,
                double_click: false,
                modifiers: vec![],
            },
        ))
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArgs);
    }
    assert!(s.methods().iter().all(|m| !m.starts_with("Input.")));
}

#[test]
fn element_scripts_run_in_kaptures_world() {
    let s = FakeSession::new(vec![
        ("Runtime.evaluate", value(json!({"x": 1, "y": 2}))),
        (
            "Runtime.evaluate",
            value(json!({"url": "u", "title": "t", "status": null})),
        ),
    ]);
    block_on(super::hover(&s, &Hover { target: sel("#a") })).unwrap();
    let sent = s.sent.borrow();
    let locate = sent.iter().find(|(m, _)| m == "Runtime.evaluate").unwrap();
    assert_eq!(
        locate.1["contextId"], 7,
        "the isolated world, not the page's"
    );
    assert!(sent
        .iter()
        .any(|(m, p)| m == "Page.createIsolatedWorld" && p["frameId"] == "M"));
}

/// Feed CDP events to the session as the browser would, `after` a pause.
async fn browser_sends(s: &FakeSession, after: u64, events: Vec<(&str, Value)>) {
    crate::platform::sleep(std::time::Duration::from_millis(after)).await;
    for (method, params) in events {
        s.events.borrow_mut().on_event(method, &params);
    }
}

async fn a_click_on(s: &FakeSession) -> Result<ActionOutcome, WireError> {
    s.events.borrow_mut().set_main_frame("M".into());
    let click = Click {
        target: sel("#save"),
        button: MouseButton::Left,
        double_click: false,
        modifiers: vec![],
    };
    super::click(s, &click).await
}

fn located_then_page(url: &str, title: &str) -> Vec<(&'static str, Result<Value, WireError>)> {
    vec![
        (
            "Runtime.evaluate",
            value(json!({"x": 1, "y": 1, "w": 5, "h": 5, "tag": "button"})),
        ),
        // Still under the pointer before the press.
        ("Runtime.evaluate", value(json!(true))),
        (
            "Runtime.evaluate",
            value(json!({"url": url, "title": title, "status": 200})),
        ),
    ]
}

#[test]
fn a_navigation_that_starts_after_the_click_answered_is_waited_for_by_the_next_read() {
    let s = FakeSession::new(located_then_page("http://127.0.0.1/form", "Form"));
    let started = std::time::Instant::now();
    let out = block_on(a_click_on(&s)).unwrap();
    assert!(!out.navigated, "{out:?}");
    // Asked for 60 ms after the click (a timer), answered by the server 300 ms later: the
    // next read waits from the click's answer, for the page that navigation loads.
    let browser = async {
        browser_sends(
            &s,
            60,
            vec![(
                "Page.frameRequestedNavigation",
                json!({"frameId": "M", "url": "http://127.0.0.1/submit", "disposition": "currentTab"}),
            )],
        )
        .await;
        browser_sends(
            &s,
            300,
            vec![
                ("Page.frameStartedNavigating", json!({"frameId": "M", "loaderId": "L2", "url": "http://127.0.0.1/submit", "navigationType": "differentDocument"})),
                ("Page.frameNavigated", json!({"frame": {"id": "M", "loaderId": "L2", "url": "http://127.0.0.1/result"}})),
                ("Page.domContentEventFired", json!({})),
                ("Page.loadEventFired", json!({})),
            ],
        )
        .await;
    };
    let read = async {
        let mark = super::after_action(&s).await.expect("the click answered");
        // The fake page is quiet at once; the read's wait is the navigation's.
        crate::platform::sleep(std::time::Duration::from_millis(100)).await;
        let limits = navigation::Limits {
            grace_ms: 0.0,
            limit_ms: 2_000.0,
        };
        (mark, super::await_navigation(&s, mark, limits).await)
    };
    let ((mark, verdict), ()) = block_on(futures::future::join(read, browser));
    let took = started.elapsed();
    assert_eq!(verdict.unwrap(), navigation::Verdict::Navigated);
    let nav = s.events.borrow().nav.since(mark).cloned().expect("named");
    assert_eq!(nav.url.as_deref(), Some("http://127.0.0.1/result"));
    assert!(
        took >= std::time::Duration::from_millis(360) && took < std::time::Duration::from_secs(2),
        "answered once loaded, not before and not at a limit: {took:?}"
    );
}

#[test]
fn a_click_that_navigates_nowhere_answers_on_the_next_frame_without_a_fixed_wait() {
    let s = FakeSession::new(located_then_page("http://127.0.0.1/form", "Form"));
    let started = std::time::Instant::now();
    let out = block_on(a_click_on(&s)).unwrap();
    let took = started.elapsed();
    assert!(!out.navigated, "{out:?}");
    assert!(
        took < std::time::Duration::from_millis(navigation::GRACE_MS as u64 / 2),
        "{took:?}"
    );
    let sent = s.sent.borrow();
    let asked = |script: &str| {
        sent.iter()
            .filter(|(m, p)| {
                m == "Runtime.evaluate"
                    && p["expression"].as_str().is_some_and(|e| e.contains(script))
            })
            .count()
    };
    assert_eq!(asked(js::PAINTED_PAGE_INFO), 1, "{sent:?}");
    assert_eq!(asked(js::SETTLE_DOM), 0, "{sent:?}");
}

#[test]
fn a_read_right_after_an_action_waits_for_a_quiet_page_once() {
    let s = FakeSession::new(located_then_page("http://127.0.0.1/form", "Form"));
    block_on(a_click_on(&s)).unwrap();
    assert!(block_on(super::after_action(&s)).is_some());
    let sent = s.sent.borrow();
    let settles: Vec<&Value> = sent
        .iter()
        .filter(|(m, p)| {
            m == "Runtime.evaluate"
                && p["expression"]
                    .as_str()
                    .is_some_and(|e| e.contains(js::SETTLE_DOM))
        })
        .map(|(_, p)| p)
        .collect();
    assert_eq!(settles.len(), 1, "{sent:?}");
    // Asked at once after the action: the rest of the grace, the quiet time and the bound.
    let expression = settles[0]["expression"].as_str().unwrap();
    let args: Vec<f64> = expression
        .rsplit_once(")(")
        .and_then(|(_, a)| a.strip_suffix(')'))
        .map(|a| a.split(", ").filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_default();
    assert_eq!(args.len(), 3, "{expression}");
    assert!(args[0] > 0.0 && args[0] <= navigation::GRACE_MS, "{args:?}");
    assert_eq!(args[1], navigation::QUIET_MS);
    assert!(args[2] > navigation::GRACE_MS && args[2] <= navigation::SETTLE_MAX_MS);
}

#[test]
fn a_read_while_the_page_is_replaced_waits_for_the_new_one() {
    let s = FakeSession::new(vec![]);
    s.events.borrow_mut().set_main_frame("M".into());
    s.events.borrow_mut().on_event(
        "Page.frameStartedNavigating",
        &json!({"frameId": "M", "loaderId": "L2", "url": "http://127.0.0.1/r", "navigationType": "differentDocument"}),
    );
    let mark = s.events.borrow().nav.mark();
    let limits = navigation::Limits {
        grace_ms: 0.0,
        limit_ms: 2_000.0,
    };
    let browser = browser_sends(
        &s,
        100,
        vec![
            (
                "Page.frameNavigated",
                json!({"frame": {"id": "M", "loaderId": "L2", "url": "http://127.0.0.1/r"}}),
            ),
            ("Page.frameStoppedLoading", json!({"frameId": "M"})),
        ],
    );
    let started = std::time::Instant::now();
    let (verdict, ()) = block_on(futures::future::join(
        super::await_navigation(&s, mark, limits),
        browser,
    ));
    assert_eq!(verdict.unwrap(), navigation::Verdict::Navigated);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert!(
        s.sent.borrow().is_empty(),
        "the page is not asked while it is replaced"
    );
}

#[test]
fn notes_about_the_page_go_under_the_header() {
    let note = "(empty page: the document has no content)";
    assert_eq!(
        super::read::with_note("# Page \"T\" http://x/ — untrusted".into(), note),
        format!("# Page \"T\" http://x/ — untrusted\n{note}")
    );
    assert_eq!(
        super::read::with_note("# Page h\nbutton \"A\"".into(), note),
        format!("# Page h\n{note}\nbutton \"A\"")
    );
    // A diff answer has no header: the note leads.
    assert_eq!(
        super::read::with_note("+ button \"A\"".into(), note),
        format!("{note}\n+ button \"A\"")
    );
}

#[test]
fn an_out_of_process_frame_is_reached_through_its_own_session_and_judged_on_its_origin() {
    let s = FakeSession::new(vec![("Runtime.evaluate", value(json!("walked")))]);
    let attached = json!({"sessionId": "S1", "targetInfo": {"targetId": "O", "type": "iframe",
        "url": "http://oop.test/pay", "parentFrameId": "M"}});
    s.events
        .borrow_mut()
        .on_event("Target.attachedToTarget", &attached);
    // The frame left the tab's process: what it is judged on stays.
    s.events.borrow_mut().on_event(
        "Page.frameDetached",
        &json!({"frameId": "O", "reason": "swap"}),
    );
    assert_eq!(s.events.borrow().judged("O"), ["http://oop.test"]);
    let frames = block_on(world::refresh_frames(&s)).unwrap();
    let ids: Vec<(&str, Option<&str>)> = frames
        .iter()
        .map(|f| (f.id.as_str(), f.parent.as_deref()))
        .collect();
    assert_eq!(ids, [("M", None), ("O", Some("M"))]);
    assert_eq!(s.events.borrow().session_of("O").as_deref(), Some("S1"));
    assert_eq!(
        block_on(world::run(&s, "O", "() => 1", &[])).unwrap(),
        json!("walked")
    );
    let routed: Vec<(Option<String>, String)> =
        s.via.borrow().iter().cloned().zip(s.methods()).collect();
    let s1 = Some("S1".to_string());
    for (session, method) in [
        (None, "Page.getFrameTree"),
        (s1.clone(), "Page.getFrameTree"),
        (s1.clone(), "Page.createIsolatedWorld"),
        (s1.clone(), "Runtime.evaluate"),
    ] {
        assert!(
            routed.contains(&(session.clone(), method.to_string())),
            "{method} via {session:?}: {routed:?}"
        );
    }
    assert!(
        !routed.contains(&(None, "Page.createIsolatedWorld".to_string())),
        "{routed:?}"
    );
    // Gone with its session: nothing learnt through it stays.
    s.events.borrow_mut().on_event(
        "Target.detachedFromTarget",
        &json!({"sessionId": "S1", "targetId": "O"}),
    );
    assert_eq!(s.events.borrow().session_of("O"), None);
    assert!(s.events.borrow().judged("O").is_empty());
}
