//! A stopped recording becomes a scenario here: typed values turn into `{{placeholders}}`
//! (secret ones by [`secret_kind`], sealed apart; ordinary ones offered as parameters with
//! their recorded value as default), with what the person chose when saving (name, tags,
//! values kept literal, dependencies). Also the draft a person confirms before saving, and
//! the dependencies worth suggesting. Pure: the widget, the tool and kapture share it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{locators, secret_kind, ElementDescriptor, FieldContext, RecordedStep};
use crate::methods::RecorderState;
use crate::scenario::{Dependency, Flag, Parameter, Scenario, ScenarioSummary, Step, StepAction};

/// What starts a draft line that types a secret (its value is never in the line).
pub const SECRET_MARK: &str = "🔒";

/// What the person (or the agent) decided when saving a recording.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SaveChoices {
    pub name: String,
    pub title: String,
    pub description: String,
    pub tags: Vec<String>,
    /// Who saves it (default: the OS account kapture runs as).
    pub author: String,
    /// Typed values (by parameter name) kept as literal text instead of parameters;
    /// search boxes stay parameters whatever is asked.
    pub literal: Vec<String>,
    /// Detected secrets (by name) the person says are not secret: ordinary parameters.
    pub not_secret: Vec<String>,
    pub dependencies: Vec<Dependency>,
}

/// A recording to save, as the extension hands it to kapture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveRequest {
    pub choices: SaveChoices,
    pub recording: RecorderState,
}

/// One typed value of a draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftValue {
    pub name: String,
    /// The field's label, for the person.
    pub label: String,
    /// The recorded value; empty for a secret (never shown).
    pub value: String,
    pub secret: bool,
    /// A search box: always a parameter.
    pub search: bool,
}

/// A dependency worth offering, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    pub scenario: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// What a person confirms before a recording is saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Draft {
    pub suggested_name: String,
    /// The steps, one readable line each.
    pub steps: Vec<String>,
    pub values: Vec<DraftValue>,
    pub suggestions: Vec<Suggestion>,
}

/// A parameter name from what a field is called: lower-case words joined by `_`.
fn param_name(e: &ElementDescriptor) -> String {
    let source = [&e.name, &e.id, &e.label, &e.placeholder]
        .into_iter()
        .find(|s| !s.trim().is_empty())
        .map(|s| s.as_str())
        .unwrap_or("value");
    words(source).unwrap_or_else(|| "value".into())
}

fn words(text: &str) -> Option<String> {
    let w: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    (!w.is_empty()).then(|| w.join("_"))
}

fn unique(name: String, taken: &[String]) -> String {
    if !taken.contains(&name) {
        return name;
    }
    (2..)
        .map(|n| format!("{name}_{n}"))
        .find(|c| !taken.contains(c))
        .unwrap_or(name)
}

fn is_search(e: &ElementDescriptor) -> bool {
    e.input_type == "search"
        || e.role == "searchbox"
        || [&e.name, &e.id, &e.label, &e.placeholder].iter().any(|s| {
            matches!(s.to_ascii_lowercase().as_str(), "q" | "query" | "search")
                || s.to_ascii_lowercase().starts_with("search")
        })
}

/// One typed value: its parameter name and whether it is a secret, in step order.
struct Typed<'a> {
    /// Its step's index in the recording.
    step: usize,
    name: String,
    secret_kind: Option<&'static str>,
    target: &'a ElementDescriptor,
    text: &'a str,
}

/// The typed values of a recording, named, with the page each was typed on.
fn typed(state: &RecorderState) -> Vec<Typed<'_>> {
    let mut url = state.start_url.clone().unwrap_or_default();
    let mut out: Vec<Typed> = Vec::new();
    for (index, step) in state.steps.iter().enumerate() {
        match step {
            RecordedStep::Navigate { url: u } | RecordedStep::WaitForLoad { url: u } => {
                url = u.clone()
            }
            RecordedStep::Type { target, text } => {
                let ctx = FieldContext {
                    url: &url,
                    form_has_password: target.form_has_password,
                    form_hint: &target.form_hint,
                };
                let kind = secret_kind(target, &ctx);
                let taken: Vec<String> = out.iter().map(|t| t.name.clone()).collect();
                let name = unique(
                    kind.map(str::to_string)
                        .unwrap_or_else(|| param_name(target)),
                    &taken,
                );
                out.push(Typed {
                    step: index,
                    name,
                    secret_kind: kind,
                    target,
                    text,
                });
            }
            _ => {}
        }
    }
    out
}

/// Build the scenario and the secrets to seal of a stopped recording.
pub fn build(state: &RecorderState, choices: &SaveChoices) -> (Scenario, BTreeMap<String, String>) {
    let mut chain: Vec<Step> = Vec::new();
    if let Some(url) = state.start_url.as_ref().filter(|u| !u.is_empty()) {
        chain.push(StepAction::Navigate { url: url.clone() }.into());
    }
    let mut values = typed(state).into_iter();
    let mut parameters: Vec<Parameter> = Vec::new();
    let mut secrets = BTreeMap::new();
    for step in &state.steps {
        let action = match step {
            // What the page showed after the step before: kept with it, for replay's hints.
            RecordedStep::Observed(hint) => {
                if let Some(last) = chain.last_mut() {
                    last.expect = Some(hint.clone());
                }
                continue;
            }
            RecordedStep::Navigate { url } => StepAction::Navigate { url: url.clone() },
            RecordedStep::WaitForLoad { url } => StepAction::WaitForLoad { url: url.clone() },
            RecordedStep::Click { target } => StepAction::Click {
                on: locators(target),
            },
            RecordedStep::Type { target, .. } => {
                let Some(v) = values.next() else { continue };
                let secret = v.secret_kind.is_some() && !choices.not_secret.contains(&v.name);
                let literal = !secret && choices.literal.contains(&v.name) && !is_search(v.target);
                let text = if literal {
                    v.text.to_string()
                } else {
                    // An empty secret is one the browser could not keep (see
                    // `take_secrets`): the scenario names it, the store has no value.
                    if secret && !v.text.is_empty() {
                        secrets.insert(v.name.clone(), v.text.to_string());
                    }
                    parameters.push(Parameter::new(
                        v.name.clone(),
                        target.label.clone(),
                        (!secret).then(|| json!(v.text)),
                        secret,
                    ));
                    format!("{{{{{}}}}}", v.name)
                };
                StepAction::Type {
                    on: locators(target),
                    text,
                    submit: false,
                }
            }
            RecordedStep::Select { target, value } => StepAction::Select {
                on: locators(target),
                values: vec![value.clone()],
            },
            RecordedStep::Check { target, checked } => StepAction::Check {
                on: locators(target),
                checked: Flag::Is(*checked),
            },
            RecordedStep::Press { target, key } => StepAction::PressKey {
                key: key.clone(),
                on: locators(target),
            },
            RecordedStep::Scroll { x, y } => StepAction::Scroll { x: *x, y: *y },
            RecordedStep::NewTab { url } => StepAction::NewTab { url: url.clone() },
        };
        chain.push(action.into());
    }
    let start_url = chain
        .iter()
        .find_map(|s| s.action.page_url())
        .unwrap_or_default()
        .to_string();
    let scenario = Scenario {
        version: crate::scenario::FORMAT_VERSION,
        start_url,
        // Kapture stamps these when it saves (the time and the OS account are its).
        recorded_at: None,
        author: choices.author.clone(),
        name: choices.name.clone(),
        title: choices.title.clone(),
        description: choices.description.clone(),
        tags: choices.tags.clone(),
        parameters,
        dependencies: choices.dependencies.clone(),
        chain,
    };
    (scenario, secrets)
}

/// Take the secret values out of a recording (by step index), so that what is kept on disk
/// while it waits for a kapture holds none; `put_secrets` puts them back. Every value a
/// secret rule matches is taken, whatever the person chose when saving.
pub fn take_secrets(state: &mut RecorderState) -> BTreeMap<usize, String> {
    let steps: Vec<usize> = typed(state)
        .iter()
        .filter(|t| t.secret_kind.is_some() && !t.text.is_empty())
        .map(|t| t.step)
        .collect();
    let mut taken = BTreeMap::new();
    for i in steps {
        if let Some(RecordedStep::Type { text, .. }) = state.steps.get_mut(i) {
            taken.insert(i, std::mem::take(text));
        }
    }
    taken
}

/// Put back the values `take_secrets` took.
pub fn put_secrets(state: &mut RecorderState, secrets: &BTreeMap<usize, String>) {
    for (i, value) in secrets {
        if let Some(RecordedStep::Type { text, .. }) = state.steps.get_mut(*i) {
            if text.is_empty() {
                *text = value.clone();
            }
        }
    }
}

/// The names of a recording's secrets that have no value (lost with a browser restart while
/// the recording waited): they must be given to each run (`overrideSecrets`).
pub fn missing_secrets(state: &RecorderState, choices: &SaveChoices) -> Vec<String> {
    typed(state)
        .iter()
        .filter(|t| t.secret_kind.is_some() && t.text.is_empty())
        .filter(|t| !choices.not_secret.contains(&t.name))
        .map(|t| t.name.clone())
        .collect()
}

/// What an element is, in a few words, for the person.
fn what(e: &ElementDescriptor) -> String {
    let name = [&e.accessible_name, &e.label, &e.text, &e.name, &e.id]
        .into_iter()
        .find(|s| !s.trim().is_empty())
        .cloned()
        .unwrap_or_else(|| e.tag.clone());
    let role = if e.role.is_empty() { &e.tag } else { &e.role };
    format!("{role} \"{name}\"")
}

/// The draft a person confirms: readable steps, the typed values (secrets without their
/// value), and the dependencies `known` scenarios suggest.
pub fn draft(state: &RecorderState, known: &[ScenarioSummary]) -> Draft {
    let typed = typed(state);
    let mut values = typed.iter();
    let mut steps: Vec<String> = Vec::new();
    for s in &state.steps {
        if let RecordedStep::Observed(h) = s {
            let seen = match (h.dialog, h.alert.is_empty()) {
                (_, false) => format!(" → the page shows an alert {:?}", h.alert),
                (true, true) => " → a dialog opens".to_string(),
                (false, true) => String::new(),
            };
            let form = h
                .step
                .as_ref()
                .map(|f| format!(" → form step {:?}", f.label()))
                .unwrap_or_default();
            if let Some(last) = steps.last_mut() {
                last.push_str(&seen);
                last.push_str(&form);
            }
            continue;
        }
        steps.push(match s {
            RecordedStep::Navigate { url } => format!("go to {url}"),
            RecordedStep::WaitForLoad { url } => format!("wait for {url}"),
            RecordedStep::Click { target } => format!("click {}", what(target)),
            RecordedStep::Type { target, .. } => match values.next() {
                Some(v) if v.secret_kind.is_some() => {
                    // The mark the widget's live list and its confirmation show a secret by.
                    format!(
                        "{SECRET_MARK} type secret {{{{{}}}}} into {}",
                        v.name,
                        what(target)
                    )
                }
                Some(v) => format!("type {:?} into {}", v.text, what(target)),
                None => format!("type into {}", what(target)),
            },
            RecordedStep::Select { target, value } => {
                format!("choose {value:?} in {}", what(target))
            }
            RecordedStep::Check { target, checked } => format!(
                "{} {}",
                if *checked { "check" } else { "uncheck" },
                what(target)
            ),
            RecordedStep::Press { key, .. } => format!("press {key}"),
            RecordedStep::Scroll { x, y } => format!("scroll to {x}, {y}"),
            RecordedStep::NewTab { url } => format!("a new tab opens {url}"),
            RecordedStep::Observed(_) => continue,
        });
    }
    let values = typed
        .iter()
        .map(|t| DraftValue {
            name: t.name.clone(),
            label: t.target.label.clone(),
            value: if t.secret_kind.is_some() {
                String::new()
            } else {
                t.text.to_string()
            },
            secret: t.secret_kind.is_some(),
            search: is_search(t.target),
        })
        .collect();
    let start = state.start_url.clone().unwrap_or_default();
    let logs_in = typed.iter().any(|t| t.secret_kind == Some("password"));
    Draft {
        suggested_name: suggested_name(&start, known),
        steps,
        values,
        suggestions: suggest_dependencies(&start, logs_in, known),
    }
}

/// A free name from the start page's path, e.g. `login`, `checkout_2`.
fn suggested_name(start: &str, known: &[ScenarioSummary]) -> String {
    let base = url::Url::parse(start)
        .ok()
        .and_then(|u| {
            let seg = u.path_segments()?.rfind(|s| !s.is_empty())?.to_string();
            words(seg.split('.').next().unwrap_or_default())
        })
        .unwrap_or_else(|| "recording".into());
    let taken: Vec<String> = known.iter().map(|k| k.name.clone()).collect();
    unique(base, &taken)
}

use crate::scenario::page_origin as origin_of;

fn without_fragment(u: &str) -> String {
    url::Url::parse(u)
        .map(|mut u| {
            u.set_fragment(None);
            u.to_string()
        })
        .unwrap_or_else(|_| u.to_string())
}

/// Dependencies worth offering for a recording that starts at `start`: a login recorded
/// on the same origin (when this recording does not log in itself), run only when not
/// already logged in; and a scenario that ends where this one starts.
pub fn suggest_dependencies(
    start: &str,
    logs_in: bool,
    known: &[ScenarioSummary],
) -> Vec<Suggestion> {
    let mut out: Vec<Suggestion> = Vec::new();
    let origin = origin_of(start);
    for k in known {
        if !logs_in && k.logs_in && origin.is_some() && origin_of(&k.start_url) == origin {
            out.push(Suggestion {
                scenario: k.name.clone(),
                reason: format!("logs in on {}", origin.clone().unwrap_or_default()),
                condition: Some("isAuthenticated".into()),
            });
        } else if !k.end_url.is_empty()
            && !start.is_empty()
            && without_fragment(&k.end_url) == without_fragment(start)
        {
            out.push(Suggestion {
                scenario: k.name.clone(),
                reason: format!("ends where this starts ({start})"),
                condition: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, input_type: &str, in_login: bool) -> ElementDescriptor {
        ElementDescriptor {
            tag: "input".into(),
            name: name.into(),
            id: name.into(),
            label: name.to_uppercase(),
            input_type: input_type.into(),
            form_has_password: in_login,
            form_hint: if in_login {
                "login".into()
            } else {
                String::new()
            },
            css_path: format!("#{name}"),
            ..Default::default()
        }
    }

    fn recording() -> RecorderState {
        RecorderState {
            start_url: Some("http://127.0.0.1:9/shop/login.html".into()),
            steps: vec![
                RecordedStep::Type {
                    target: ElementDescriptor {
                        autocomplete: "username".into(),
                        ..field("email", "email", true)
                    },
                    text: "ada@example.test".into(),
                },
                RecordedStep::Type {
                    target: field("password", "password", true),
                    text: "Canary-123".into(),
                },
                RecordedStep::Type {
                    target: field("q", "search", false),
                    text: "mug".into(),
                },
                RecordedStep::Type {
                    target: field("note", "text", false),
                    text: "ring twice".into(),
                },
                RecordedStep::WaitForLoad {
                    url: "http://127.0.0.1:9/shop/index.html".into(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn typed_values_become_placeholders_and_the_choices_are_kept() {
        let choices = SaveChoices {
            name: "login".into(),
            tags: vec!["shop".into()],
            literal: vec!["q".into(), "note".into()],
            ..Default::default()
        };
        let (scenario, secrets) = build(&recording(), &choices);
        let text = serde_json::to_string(&scenario).unwrap();
        assert!(!text.contains("Canary-123") && !text.contains("ada@example.test"));
        assert_eq!(secrets["password"], "Canary-123");
        assert_eq!(
            secrets.keys().collect::<Vec<_>>(),
            ["email", "password"],
            "{secrets:?}"
        );
        // A search box stays a parameter even when asked to be literal; a note does not.
        assert!(
            text.contains("{{q}}") && text.contains("\"ring twice\""),
            "{text}"
        );
        let names: Vec<&str> = scenario
            .parameters
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["email", "password", "q"]);
        assert_eq!(scenario.tags, ["shop"]);
        assert_eq!(scenario.chain[0].action.method(), "navigate");

        // A detected secret the person says is not one becomes an ordinary parameter.
        let (scenario, secrets) = build(
            &recording(),
            &SaveChoices {
                not_secret: vec!["email".into()],
                ..Default::default()
            },
        );
        assert!(!secrets.contains_key("email"));
        let user = &scenario.parameters[0];
        assert!(!user.secret && user.default == Some(json!("ada@example.test")));
    }

    #[test]
    fn the_draft_shows_steps_and_values_but_never_a_secret_value() {
        let d = draft(&recording(), &[]);
        let text = serde_json::to_string(&d).unwrap();
        assert!(
            !text.contains("Canary-123") && !text.contains("ada@example.test"),
            "{text}"
        );
        assert_eq!(d.suggested_name, "login");
        assert_eq!(
            d.steps[1],
            "🔒 type secret {{password}} into textbox \"PASSWORD\"".replace("textbox", "input")
        );
        assert!(d
            .values
            .iter()
            .any(|v| v.name == "q" && v.search && v.value == "mug"));
        assert!(d
            .values
            .iter()
            .any(|v| v.name == "password" && v.secret && v.value.is_empty()));
    }

    #[test]
    fn secrets_come_out_of_a_waiting_recording_and_go_back() {
        let mut kept = recording();
        let taken = take_secrets(&mut kept);
        let text = serde_json::to_string(&kept).unwrap();
        assert!(
            !text.contains("Canary-123") && !text.contains("ada@example.test"),
            "{text}"
        );
        assert!(text.contains("ring twice"), "ordinary values stay: {text}");
        let choices = SaveChoices {
            name: "login".into(),
            ..Default::default()
        };
        // Saved without them (a browser restart lost them): named, not sealed.
        assert_eq!(missing_secrets(&kept, &choices), ["email", "password"]);
        let (_, secrets) = build(&kept, &choices);
        assert!(secrets.is_empty(), "{secrets:?}");
        put_secrets(&mut kept, &taken);
        assert_eq!(kept, recording());
        assert!(missing_secrets(&kept, &choices).is_empty());
    }

    fn summary(name: &str, start: &str, end: &str, logs_in: bool) -> ScenarioSummary {
        ScenarioSummary {
            name: name.into(),
            start_url: start.into(),
            end_url: end.into(),
            logs_in,
            ..Default::default()
        }
    }

    #[test]
    fn a_login_of_the_same_origin_and_a_flow_ending_here_are_suggested() {
        let known = [
            summary(
                "login",
                "http://127.0.0.1:9/shop/login.html",
                "http://127.0.0.1:9/shop/index.html",
                true,
            ),
            summary("other_login", "http://127.0.0.1:8/login.html", "", true),
            summary(
                "add_to_cart",
                "http://127.0.0.1:9/shop/product.html?id=1",
                "http://127.0.0.1:9/shop/cart.html#top",
                false,
            ),
        ];
        let got = suggest_dependencies("http://127.0.0.1:9/shop/cart.html", false, &known);
        let names: Vec<&str> = got.iter().map(|s| s.scenario.as_str()).collect();
        assert_eq!(names, ["login", "add_to_cart"]);
        assert_eq!(got[0].condition.as_deref(), Some("isAuthenticated"));
        // A recording that logs in itself needs no login first.
        let got = suggest_dependencies("http://127.0.0.1:9/shop/cart.html", true, &known);
        assert_eq!(got.len(), 1);
        assert!(suggest_dependencies("not a url", false, &known).is_empty());
        assert_eq!(
            suggested_name("http://127.0.0.1:9/shop/login.html", &known),
            "login_2"
        );
        assert_eq!(suggested_name("about:blank", &[]), "recording");
    }
}
