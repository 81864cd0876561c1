//! The agent's session as a step log: every tool call of this MCP session (arguments
//! masked), offered as MCP resources — `kapture://session/current/steps` (JSON) and
//! `kapture://session/current/code` (a script, by the same generators as `scenario_export`).
//! Refs are turned back into role + name locators from what the answers said of them
//! (`Text::refs`, `Picked::shown`), so the code does not depend on refs that die with the
//! page.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ext_core::export::Format;
use ext_core::scenario::{Flag, Locator, Parameter, Scenario, Step, StepAction};
use ext_core::snapshot::ShownRef;
use serde_json::{json, Map, Value};

pub use crate::egress::{MaskBook, Masks};

/// Steps kept per session; older ones go first.
const MAX_STEPS: usize = 2000;
/// Refs remembered from answers (the latest win).
const MAX_REFS: usize = 20_000;

/// One tool call of the session.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedStep {
    pub time: u64,
    pub tool: String,
    /// Arguments as the audit journal shows them (secrets masked).
    pub args: Value,
    pub status: String,
    /// For a ref: the page-model line it stood for (`button "Save"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
}

#[derive(Default)]
struct Inner {
    steps: Vec<LoggedStep>,
    /// ref → (role, name) from the answers' page-model lines.
    refs: HashMap<String, (String, String)>,
}

/// The log of one MCP session; cheap to clone.
#[derive(Clone, Default)]
pub struct SessionLog {
    inner: Arc<Mutex<Inner>>,
}

/// What a tool's adapter learned while it ran, for `call_tool` to journal: set through
/// [`note`] within the call's [`CallNotes::scope`].
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CallNotes {
    /// A typing action answered: which of its values went into confidential fields
    /// (`ActionOutcome::confidential`). `None`: it did not answer (the call failed).
    pub confidential: Option<Vec<usize>>,
    /// The tab the call ran on (for the journal; no answer text is parsed for it).
    pub tab: Option<ext_core::protocol::TabId>,
    /// What the answer must also tell (e.g. a tab the session opened for itself).
    pub news: Vec<String>,
    /// The refs the answer gave (snapshot, find, pick), with the role and name shown.
    pub refs: Vec<ShownRef>,
}

tokio::task_local! {
    static NOTES: std::cell::RefCell<CallNotes>;
}

impl CallNotes {
    /// Run `call` with notes of its own; answers its result and what was noted.
    pub async fn scope<F: std::future::Future>(call: F) -> (F::Output, CallNotes) {
        NOTES
            .scope(Default::default(), async {
                let out = call.await;
                (out, NOTES.with(|n| n.take()))
            })
            .await
    }
}

/// Note something about the running call (nothing outside a [`CallNotes::scope`]).
pub fn note(f: impl FnOnce(&mut CallNotes)) {
    let _ = NOTES.try_with(|n| f(&mut n.borrow_mut()));
}

impl SessionLog {
    /// Note one finished call and the refs its answer gave.
    pub fn record(
        &self,
        tool: &str,
        args: &crate::egress::Masked<Value>,
        status: &str,
        shown: &[ShownRef],
        time: u64,
    ) {
        let args = args.get().clone();
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let element = args
            .get("ref")
            .and_then(Value::as_str)
            .and_then(|r| inner.refs.get(r))
            .map(|(role, name)| format!("{role} {}", json!(name)));
        if inner.steps.len() >= MAX_STEPS {
            inner.steps.remove(0);
        }
        inner.steps.push(LoggedStep {
            time,
            tool: tool.to_string(),
            args,
            status: status.to_string(),
            element,
        });
        if inner.refs.len() > MAX_REFS {
            inner.refs.clear();
        }
        for r in shown {
            let named = (r.role.clone(), r.name.clone());
            inner.refs.insert(r.element_ref.clone(), named);
        }
    }

    /// How many steps the log holds.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .steps
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The steps so far, as JSON (for the exit to write).
    pub fn steps(&self) -> Value {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::to_value(&inner.steps).unwrap_or_default()
    }

    /// The session's successful browser actions as a scenario (masked values become secret
    /// parameters the script reads from its environment).
    pub fn as_scenario(&self) -> Scenario {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut chain = Vec::new();
        let mut parameters: Vec<Parameter> = Vec::new();
        for step in inner.steps.iter().filter(|s| s.status == "ok") {
            let Some(method) = step.tool.strip_prefix("browser_") else {
                continue;
            };
            let locators = |a: &Value| -> Vec<Locator> {
                if let Some(sel) = a.get("selector").and_then(Value::as_str) {
                    return vec![Locator::Css(sel.to_string())];
                }
                match a
                    .get("ref")
                    .and_then(Value::as_str)
                    .and_then(|r| inner.refs.get(r))
                {
                    // A clickable text or a label has no ARIA role to find it by: its text.
                    Some((role, name)) if matches!(role.as_str(), "clickable" | "label") => {
                        vec![Locator::Text(name.clone())]
                    }
                    Some((role, name)) => vec![Locator::Role(role.clone(), name.clone())],
                    None => Vec::new(),
                }
            };
            let mut secret = |v: &Value| -> String {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                if text.contains('•') || text.contains("[redacted") {
                    let name = format!("secret_{}", parameters.len() + 1);
                    parameters.push(Parameter::new(
                        name.clone(),
                        "a value masked in the session log".into(),
                        None,
                        true,
                    ));
                    format!("{{{{{name}}}}}")
                } else {
                    text
                }
            };
            let a = &step.args;
            let text = |v: &Value| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            };
            let mut push = |action: StepAction| chain.push(Step::from(action));
            match method {
                "navigate" => push(StepAction::Navigate {
                    url: text(&a["url"]),
                }),
                "navigate_back" => push(StepAction::GoBack),
                "navigate_forward" => push(StepAction::GoForward),
                "click" => push(StepAction::Click { on: locators(a) }),
                "hover" => push(StepAction::Hover { on: locators(a) }),
                "type" => push(StepAction::Type {
                    on: locators(a),
                    text: secret(&a["text"]),
                    submit: a["submit"].as_bool().unwrap_or(false),
                }),
                "select_option" => push(StepAction::Select {
                    on: locators(a),
                    values: match &a["values"] {
                        Value::Array(items) => items.iter().map(text).collect(),
                        one => vec![text(one)],
                    },
                }),
                "press_key" => push(StepAction::PressKey {
                    key: text(&a["key"]),
                    on: Vec::new(),
                }),
                "fill_form" => {
                    for f in a["fields"].as_array().into_iter().flatten() {
                        match f["value"].as_str() {
                            Some(on @ ("true" | "false")) => push(StepAction::Check {
                                on: locators(f),
                                checked: Flag::Is(on == "true"),
                            }),
                            _ => push(StepAction::Type {
                                on: locators(f),
                                text: secret(&f["value"]),
                                submit: false,
                            }),
                        }
                    }
                }
                _ => {}
            }
        }
        Scenario {
            version: ext_core::scenario::FORMAT_VERSION,
            start_url: chain
                .iter()
                .find_map(|s| s.action.page_url())
                .unwrap_or_default()
                .to_string(),
            recorded_at: None,
            author: String::new(),
            name: "session".into(),
            title: "This agent session".into(),
            description: "The browser actions of the current MCP session, as Kapture ran them."
                .into(),
            tags: Vec::new(),
            parameters,
            dependencies: Vec::new(),
            chain,
        }
    }
}

/// The format a code URI's query asks for (`?format=puppeteer`; none: Playwright Test).
pub fn code_format(query: &str) -> Result<Format, String> {
    let query: Map<String, Value> = query
        .strip_prefix('?')
        .unwrap_or_default()
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    match query.get("format").and_then(Value::as_str) {
        None => Ok(Format::PlaywrightTs),
        Some(f) => Format::parse(f).ok_or_else(|| {
            format!(
                "unknown format {f:?}: use {}",
                Format::ALL.map(Format::as_str).join(", ")
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments as the exit hands them to the log (nothing to mask here).
    fn m(v: Value) -> crate::egress::Masked<Value> {
        crate::egress::Exit::new(vec![], vec![]).json(v)
    }

    fn shown(refs: &[(&str, &str, &str)]) -> Vec<ShownRef> {
        (refs.iter())
            .map(|(r, role, name)| ShownRef {
                element_ref: r.to_string(),
                role: role.to_string(),
                name: name.to_string(),
            })
            .collect()
    }

    #[test]
    fn refs_become_role_locators_and_masked_values_secret_parameters() {
        let log = SessionLog::default();
        log.record(
            "browser_navigate",
            &m(json!({"url": "http://127.0.0.1:1/login.html"})),
            "ok",
            &[],
            1,
        );
        log.record(
            "browser_snapshot",
            &m(json!({})),
            "ok",
            &shown(&[("e1", "textbox", "User"), ("e2", "button", "Log in")]),
            2,
        );
        log.record(
            "browser_type",
            &m(json!({"ref": "e1", "text": "ada"})),
            "ok",
            &[],
            3,
        );
        log.record(
            "browser_type",
            &m(json!({"selector": "#password", "text": "••••"})),
            "ok",
            &[],
            4,
        );
        log.record("browser_click", &m(json!({"ref": "e2"})), "ok", &[], 5);
        log.record(
            "browser_click",
            &m(json!({"ref": "e9"})),
            "SELECTOR_NOT_FOUND",
            &[],
            6,
        );
        log.record(
            "browser_snapshot",
            &m(json!({})),
            "ok",
            &shown(&[
                ("e3", "label", "Buy milk"),
                ("e4", "clickable", "Open card"),
            ]),
            7,
        );
        log.record(
            "browser_click",
            &m(json!({"ref": "e3", "doubleClick": true})),
            "ok",
            &[],
            8,
        );
        log.record("browser_click", &m(json!({"ref": "e4"})), "ok", &[], 9);
        let s = log.as_scenario();
        let methods: Vec<&str> = s.chain.iter().map(|c| c.action.method()).collect();
        assert_eq!(
            methods,
            ["navigate", "type", "type", "click", "click", "click"]
        );
        // Text with a ref but no ARIA role is found by its text.
        assert_eq!(
            s.chain[4].action.locators(),
            [Locator::Text("Buy milk".into())]
        );
        assert_eq!(
            s.chain[5].action.locators(),
            [Locator::Text("Open card".into())]
        );
        assert_eq!(
            s.chain[1].action.locators(),
            [Locator::Role("textbox".into(), "User".into())]
        );
        assert_eq!(s.chain[2].action.typed_text(), Some("{{secret_1}}"));
        assert!(s.parameters[0].secret);
        let steps = serde_json::to_string(&log.steps()).unwrap();
        assert!(steps.contains("button \\\"Log in\\\"") && steps.contains("SELECTOR_NOT_FOUND"));
        assert!(crate::egress::Exit::new(vec![], vec![])
            .export(&log.as_scenario(), Format::Puppeteer)
            .get()
            .contains("KAPTURE_SECRET_SECRET_1"));
    }

    /// The session scenario kapture built before steps were typed (`session.json`, beside
    /// its exported scripts): the typed log builds the same.
    #[test]
    fn the_log_builds_the_session_scenario_it_built_before() {
        let log = SessionLog::default();
        let snapshot = shown(&[
            ("e1", "textbox", "User"),
            ("e2", "button", "Log in"),
            ("e3", "link", "Help"),
            ("e4", "clickable", "Open card"),
            ("e5", "checkbox", "Remember me"),
        ]);
        let calls: Vec<(&str, Value, &[ShownRef])> = vec![
            (
                "browser_navigate",
                json!({"url": "http://127.0.0.1:8080/shop/login.html"}),
                &[],
            ),
            ("browser_snapshot", json!({}), &snapshot),
            (
                "browser_type",
                json!({"ref": "e1", "element": "User", "text": "ada"}),
                &[],
            ),
            (
                "browser_type",
                json!({"selector": "#password", "text": "••••", "submit": true}),
                &[],
            ),
            (
                "browser_fill_form",
                json!({"fields": [{"ref": "e5", "value": "true"}, {"selector": "#city", "value": "Paris"}, {"selector": "#pin", "value": "[redacted:password]"}]}),
                &[],
            ),
            ("browser_click", json!({"ref": "e2"}), &[]),
            ("browser_hover", json!({"ref": "e3"}), &[]),
            (
                "browser_click",
                json!({"ref": "e4", "doubleClick": true}),
                &[],
            ),
            (
                "browser_select_option",
                json!({"selector": "#size", "values": ["L", "XL"]}),
                &[],
            ),
            ("browser_press_key", json!({"key": "Escape"}), &[]),
            ("browser_navigate_back", json!({}), &[]),
            ("browser_navigate_forward", json!({}), &[]),
            ("browser_click", json!({"ref": "e99"}), &[]),
            ("browser_evaluate", json!({"function": "() => 1"}), &[]),
        ];
        for (i, (tool, args, answer)) in calls.into_iter().enumerate() {
            log.record(tool, &m(args), "ok", answer, i as u64);
        }
        let before: Scenario =
            serde_json::from_str(include_str!("../../ext-core/tests/golden/session.json")).unwrap();
        assert_eq!(log.as_scenario(), before);
    }

    #[tokio::test]
    async fn notes_belong_to_their_call_and_masks_to_the_session() {
        let (out, notes) = CallNotes::scope(async {
            note(|n| n.confidential = Some(vec![1]));
            7
        })
        .await;
        assert_eq!((out, notes.confidential), (7, Some(vec![1])));
        let (_, none) = CallNotes::scope(async {}).await;
        assert_eq!(none.confidential, None);
        note(|n| n.confidential = Some(vec![]));

        let masks = Masks::default();
        masks.add("abc", "password");
        masks.add("Canary-42", "password");
        masks.add("Canary-42", "password");
        let all = masks.with(&[("fixed-value".into(), "secrets-file".into())]);
        assert_eq!(all.len(), 2, "{all:?}");
        let (text, _) = ext_core::secrets::redact("pw Canary-42 abc", &all);
        assert_eq!(text, "pw [redacted:password] abc");
    }

    #[test]
    fn code_uris_name_their_format() {
        assert_eq!(code_format(""), Ok(Format::PlaywrightTs));
        assert_eq!(code_format("?format=puppeteer"), Ok(Format::Puppeteer));
        assert!(code_format("?format=cobol").is_err());
    }
}
