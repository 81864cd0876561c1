//! Property-based fuzz target: the tools' argument structs (`methods`), the router's typed
//! param decoding and routing (`router`), and the policy category a command is judged by.

mod fuzz_common;

use std::cell::{Cell, RefCell};

use ext_core::cdp::events::TabEvents;
use ext_core::cdp::CdpSession;
use ext_core::methods::*;
use ext_core::policy::Category;
use ext_core::protocol::{ErrorCode, TabId, WireError};
use ext_core::router::{self, Route, METHODS};
use fuzz_common::{any_string, fuzz, json_object, json_value};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};

const REGRESSIONS: &str = "tests/proptest-regressions/fuzz_args.txt";

/// Decode `raw` as `M`'s params. A refusal must be `BAD_ARGS` naming the method; accepted
/// arguments must survive a serialise → decode round trip unchanged. Answers "accepted".
fn check<M: Method + PartialEq + std::fmt::Debug>(raw: Value) -> Result<bool, TestCaseError> {
    match router::params::<M>(raw) {
        Err(e) => {
            prop_assert_eq!(e.code, ErrorCode::BadArgs);
            prop_assert!(e.message.contains(M::NAME), "{}", e.message);
            Ok(false)
        }
        Ok(m) => {
            let again = router::params::<M>(serde_json::to_value(&m).unwrap());
            prop_assert_eq!(again.as_ref().ok(), Some(&m), "{:?}", again);
            Ok(true)
        }
    }
}

type Checker = fn(Value) -> Result<bool, TestCaseError>;

macro_rules! checkers {
    ($($t:ty),* $(,)?) => {
        &[$((<$t as Method>::NAME, check::<$t> as Checker)),*]
    };
}

/// Every method's params type, by wire name.
const CHECKERS: &[(&str, Checker)] = checkers![
    TabsList,
    TabsNew,
    TabsSelect,
    TabsClose,
    Navigate,
    GoBack,
    GoForward,
    Reload,
    Click,
    Hover,
    Type,
    SelectOption,
    PressKey,
    Evaluate,
    Screenshot,
    ConsoleMessages,
    Snapshot,
    Find,
    GetText,
    GetHtml,
    ReadMarkdown,
    ExtractLinks,
    WaitFor,
    FillForm,
    HandleDialog,
    FileUpload,
    DownloadArgs,
    NetworkRequests,
    NetworkRequest,
    Cookies,
    Storage,
    LoginRead,
    LoginWrite,
    Resize,
    Emulate,
    Drag,
    Scroll,
    MouseClickXy,
    MouseMoveXy,
    PrintPdf,
    Highlight,
    Recorder,
    Pick,
    StoreWrite,
];

fn checker(method: &str) -> Checker {
    CHECKERS
        .iter()
        .find(|(n, _)| *n == method)
        .map(|(_, c)| *c)
        .unwrap_or_else(|| panic!("no checker for {method}"))
}

/// One valid argument object per method, every field set: the base of the wrong-type cases.
fn example(method: &str) -> Value {
    match method {
        "tabs.list" | "tabs.select" | "tabs.close" | "go_back" | "go_forward" | "reload"
        | "print_pdf" => json!({}),
        "tabs.new" | "navigate" => json!({"url": "http://127.0.0.1/"}),
        "click" => {
            json!({"ref": "e1", "element": "Go", "button": "right", "doubleClick": true, "modifiers": ["Shift", "ControlOrMeta"]})
        }
        "hover" | "highlight" => json!({"selector": "#a", "element": "A"}),
        "type" => json!({"ref": "e1", "text": "hi", "submit": true, "slowly": false}),
        "select_option" => json!({"ref": "e1", "values": ["a", "b"]}),
        "press_key" => json!({"key": "Enter"}),
        "evaluate" => json!({"function": "() => 1", "selector": "#a"}),
        "screenshot" => json!({"fullPage": true, "ref": "e1", "type": "png", "scale": 0.5}),
        "console_messages" => json!({"level": "error", "max": 5}),
        "snapshot" => {
            json!({"ref": "e1", "depth": 2, "interactiveOnly": true, "diff": false, "maxChars": 1000, "offset": 3})
        }
        "find" => json!({"query": "x", "max": 3}),
        "get_text" | "read_markdown" => json!({"selector": "p", "maxChars": 100, "offset": 1}),
        "get_html" => json!({"selector": "p", "outer": false, "maxChars": 100, "offset": 0}),
        "extract_links" => {
            json!({"ref": "e1", "sameOriginOnly": true, "include": "a", "exclude": "b", "maxChars": 100})
        }
        "wait_for" => {
            json!({"text": "a", "textGone": "b", "selector": "c", "gone": true, "time": 1.5})
        }
        "fill_form" => {
            json!({"fields": [{"ref": "e1", "value": "x"}, {"selector": "#b", "value": "true"}], "submit": true})
        }
        "handle_dialog" => json!({"accept": true, "promptText": "x"}),
        "file_upload" => json!({"ref": "e1", "paths": ["/tmp/a"]}),
        "download" => json!({"url": "http://127.0.0.1/a", "ref": "e1"}),
        "network_requests" => json!({"filter": "a", "max": 3}),
        "network_request" => json!({"id": "1", "maxBody": 10, "revealSensitive": false}),
        "cookies" => {
            json!({"action": "set", "name": "a", "value": "b", "path": "/", "expires": 1.5, "httpOnly": true, "secure": true})
        }
        "storage" => json!({"area": "session", "action": "get", "key": "k", "value": "v"}),
        "login.read" => json!({}),
        "login.write" => json!({"name": "shop", "secret": {
            "url": "http://127.0.0.1/a", "origin": "http://127.0.0.1",
            "cookies": [{"name": "sid", "value": "v", "domain": "127.0.0.1", "path": "/",
                         "expires": 1.5, "httpOnly": true, "secure": false, "sameSite": "Lax"}],
            "localStorage": [["k", "v"]]}}),
        "resize" => json!({"width": 800, "height": 600}),
        "emulate" => {
            json!({"device": "iPad", "userAgent": "x", "geolocation": {"latitude": 1.0, "longitude": 2.0, "accuracy": 3.0}, "offline": true, "colorScheme": "dark"})
        }
        "drag" => {
            json!({"startRef": "e1", "startSelector": "a", "endRef": "e2", "endSelector": "b"})
        }
        "scroll" => json!({"ref": "e1", "deltaX": 1.0, "deltaY": -2.0}),
        "mouse_click_xy" => json!({"x": 1.0, "y": 2.0, "button": "middle", "doubleClick": true}),
        "mouse_move_xy" => json!({"x": 1.0, "y": 2.0}),
        "recorder" => {
            json!({"action": "stop", "name": "n", "title": "t", "description": "d", "tags": ["a"], "dependencies": ["b"]})
        }
        "pick" => json!({"prompt": "the price", "timeout": 5.5}),
        "kapture.store_write" => {
            json!({"what": "delete scenario \"a\"", "url": "http://127.0.0.1/"})
        }
        other => panic!("no example for {other}: add one"),
    }
}

/// JSON pointers of every value inside `v` (not `v` itself).
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(item, p, out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let p = format!("{at}/{k}");
                out.push(p.clone());
                pointers(item, p, out);
            }
        }
        _ => {}
    }
}

/// Text fields that also take a number or true/false (`methods::lenient`): per method, the
/// keys whose value (or list items) may be any of the three.
const LENIENT: &[(&str, &[&str])] = &[
    ("type", &["text"]),
    ("select_option", &["values/*"]),
    ("press_key", &["key"]),
    ("find", &["query"]),
    ("wait_for", &["text", "textGone"]),
    ("fill_form", &["value"]),
    ("handle_dialog", &["promptText"]),
    ("cookies", &["value"]),
    ("storage", &["key", "value"]),
    ("network_request", &["id"]),
    ("pick", &["prompt"]),
];

/// Whether the slot at `path` of `method`'s params is such a text field; `values/*` names
/// the items of a list.
fn lenient(method: &str, path: &str) -> bool {
    let keys = LENIENT
        .iter()
        .find(|(m, _)| *m == method)
        .map_or(&[][..], |(_, k)| *k);
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or_default();
    let parent = parts.next().unwrap_or_default();
    if last.chars().all(|c| c.is_ascii_digit()) {
        keys.contains(&format!("{parent}/*").as_str())
    } else {
        keys.contains(&last)
    }
}

/// Values of another JSON type than `v` (never null: null is "absent" for optional fields).
fn other_types(v: &Value) -> Vec<Value> {
    let all = [
        json!("x"),
        json!(0),
        json!(1.5),
        json!(true),
        json!([]),
        json!(["x"]),
        json!({}),
        json!({"a": 1}),
    ];
    let class = |v: &Value| match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    };
    all.into_iter().filter(|w| class(w) != class(v)).collect()
}

fn method_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(METHODS.iter().map(|f| f.name.to_string()).collect::<Vec<_>>()),
        1 => any_string(),
        1 => prop::sample::select(METHODS.iter().map(|f| f.name.to_string()).collect::<Vec<_>>())
            .prop_flat_map(|n| {
                // Near misses: case, spaces, prefixes, suffixes.
                prop_oneof![
                    Just(n.to_uppercase()),
                    Just(format!(" {n}")),
                    Just(format!("{n}\0")),
                    Just(format!("tabs.{n}")),
                    Just(n.replace('_', "-")),
                ]
            }),
    ]
}

#[test]
fn every_method_has_a_checker_and_a_valid_example() {
    assert_eq!(CHECKERS.len(), METHODS.len());
    for f in METHODS {
        let name = f.name;
        assert_eq!(checker(name)(example(name)).ok(), Some(true), "{name}");
        // Absent params mean "no arguments".
        let _ = checker(name)(Value::Null);
    }
}

#[test]
fn arbitrary_arguments_are_accepted_whole_or_refused_as_bad_args() {
    let args = prop_oneof![json_object().prop_map(Value::Object), json_value(),];
    fuzz(
        REGRESSIONS,
        "arbitrary_arguments_are_accepted_whole_or_refused_as_bad_args",
        (prop::sample::select(CHECKERS.to_vec()), args),
        |((_, check), raw)| check(raw).map(|_| ()),
    );
}

#[test]
fn examples_with_extra_fields_still_decode_when_types_fit() {
    // Unknown fields are ignored; known fields with arbitrary values either fit or refuse.
    fuzz(
        REGRESSIONS,
        "examples_with_extra_fields_still_decode_when_types_fit",
        (prop::sample::select(CHECKERS.to_vec()), json_object()),
        |((name, check), extra)| {
            let mut args = example(name);
            let obj = args.as_object_mut().unwrap();
            for (k, v) in extra {
                obj.insert(k, v);
            }
            check(args).map(|_| ())
        },
    );
}

#[test]
fn a_value_of_the_wrong_type_is_refused() {
    let case = prop::sample::select(CHECKERS.to_vec()).prop_flat_map(|(name, check)| {
        let base = example(name);
        let mut paths = Vec::new();
        pointers(&base, String::new(), &mut paths);
        let paths = if paths.is_empty() {
            vec![String::new()]
        } else {
            paths
        };
        (
            Just((name, check, base)),
            prop::sample::select(paths),
            any::<prop::sample::Index>(),
        )
    });
    fuzz(
        REGRESSIONS,
        "a_value_of_the_wrong_type_is_refused",
        case,
        |((name, check, mut base), path, pick)| {
            if path.is_empty() {
                // No fields at all: the params themselves of a wrong type (not an object).
                // (An empty array is an empty struct to serde, so it is left out.)
                let wrong: Vec<Value> = other_types(&base)
                    .into_iter()
                    .filter(|w| !w.is_array())
                    .collect();
                let value = pick.get(&wrong).clone();
                prop_assert!(!check(value.clone())?, "{name} accepted {value}");
                return Ok(());
            }
            let slot = base.pointer_mut(&path).unwrap();
            let mut wrong = other_types(slot);
            if lenient(name, &path) {
                // A number or true/false is text there, as its JSON text.
                wrong.retain(|w| !w.is_number() && !w.is_boolean());
            }
            *slot = pick.get(&wrong).clone();
            prop_assert!(
                !check(base.clone())?,
                "{name} accepted {base} (changed {path})"
            );
            Ok(())
        },
    );
}

#[test]
fn routes_are_known_methods_or_bad_args() {
    fuzz(
        REGRESSIONS,
        "routes_are_known_methods_or_bad_args",
        method_name(),
        |name| {
            let known = METHODS.iter().find(|f| f.name == name);
            match (router::route(&name), known) {
                (Ok(r), Some(f)) => prop_assert_eq!(r, f.route),
                (Err(e), None) => {
                    prop_assert_eq!(e.code, ErrorCode::BadArgs);
                    let quoted = format!("{name:?}");
                    prop_assert!(e.message.contains(&quoted), "{}", e.message);
                }
                (got, known) => prop_assert!(false, "{name:?}: {got:?} vs {known:?}"),
            }
            Ok(())
        },
    );
}

/// The gate judges what runs: every tab method has a policy category (a method without one
/// would pass the gate unjudged), and `submit` counts exactly when the decoded args submit.
#[test]
fn the_category_matches_what_the_decoded_args_do() {
    fuzz(
        REGRESSIONS,
        "the_category_matches_what_the_decoded_args_do",
        (method_name(), json_value(), any::<bool>()),
        |(name, params, use_example)| {
            let params = if use_example && router::route(&name).is_ok() {
                let mut ex = example(&name);
                if let (Some(obj), Value::Object(more)) = (ex.as_object_mut(), &params) {
                    obj.extend(more.clone());
                }
                ex
            } else {
                params
            };
            // The gate judges decoded commands only: what does not decode never runs.
            let decoded = Command::decode(&name, params.clone());
            let category = decoded.as_ref().ok().and_then(Command::category);
            match (router::route(&name), &decoded) {
                (Ok(Route::Tab), Ok(_)) => {
                    prop_assert!(category.is_some(), "{name} has no category")
                }
                (Ok(_), Err(e)) | (Err(_), Err(e)) => prop_assert_eq!(e.code, ErrorCode::BadArgs),
                (Ok(Route::Browser), Ok(_)) => {}
                (Err(_), Ok(_)) => prop_assert!(false, "{} is no method", name),
            }
            let submits = match name.as_str() {
                "type" => router::params::<Type>(params.clone())
                    .ok()
                    .map(|t| t.submit),
                "fill_form" => router::params::<FillForm>(params.clone())
                    .ok()
                    .map(|f| f.submit),
                _ => None,
            };
            if let Some(submits) = submits {
                prop_assert_eq!(category == Some(Category::Submit), submits);
            }
            Ok(())
        },
    );
}

/// A session with no browser behind it that counts what it is asked to send.
struct Unplugged {
    events: RefCell<TabEvents>,
    sent: Cell<usize>,
}

impl CdpSession for Unplugged {
    fn tab_id(&self) -> TabId {
        1
    }

    async fn send_in(
        &self,
        _session: Option<&str>,
        _method: &str,
        _params: Value,
    ) -> Result<Value, WireError> {
        self.sent.set(self.sent.get() + 1);
        Err(WireError::new(
            ErrorCode::Internal,
            "no browser in this test",
        ))
    }

    fn events(&self) -> &RefCell<TabEvents> {
        &self.events
    }
}

/// Bad arguments fail with `BAD_ARGS` before any CDP traffic, whatever the method name.
#[test]
fn bad_arguments_never_reach_the_browser() {
    let params = prop_oneof![json_object().prop_map(Value::Object), json_value()];
    fuzz(
        REGRESSIONS,
        "bad_arguments_never_reach_the_browser",
        (method_name(), params),
        |(name, raw)| {
            let route = router::route(&name);
            // Only refused arguments (or unknown methods) run: accepted ones would need a page.
            if let Ok(Route::Tab) = route {
                if checker(&name)(raw.clone())? {
                    return Ok(());
                }
            }
            let s = Unplugged {
                events: RefCell::new(TabEvents::new()),
                sent: Cell::new(0),
            };
            let res = futures::executor::block_on(router::run_on_tab(&s, &name, raw.clone()));
            let err = res.err();
            // Browser methods do not run on a tab: refused once their arguments decode.
            let expected = match route {
                Ok(Route::Browser) if Command::decode(&name, raw.clone()).is_ok() => {
                    ErrorCode::Internal
                }
                _ => ErrorCode::BadArgs,
            };
            prop_assert_eq!(
                err.as_ref().map(|e| e.code),
                Some(expected),
                "{} {}",
                name,
                raw
            );
            prop_assert_eq!(s.sent.get(), 0, "{} {} sent CDP commands", name, raw);
            Ok(())
        },
    );
}
