//! Saved scenarios as data (metadata, parameters, dependencies, the chain of steps) and the
//! pure parts of replay: the dependency plan (topological, cycles refused by name) and
//! `{{a.b}}` substitution. Recording and running live elsewhere; this is what they share.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

// The pure parts of a run: the dependency plan and `{{a.b}}` substitution.
mod run;
pub use run::{plan, substitute};

/// The version of the file format Kapture writes (`version` in a scenario file). A file
/// without one was written before the format had a version (version 1): it is read as it
/// is, and what it lacks is filled in on load ([`ScenarioFile`]).
pub const FORMAT_VERSION: u32 = 2;

/// One saved scenario (`scenarios/<name>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "ScenarioFile")]
pub struct Scenario {
    /// The file format's version ([`FORMAT_VERSION`] once loaded, or a newer Kapture's).
    pub version: u32,
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The page the recording started on (empty when the chain loads none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub start_url: String,
    /// When it was saved, RFC 3339 in UTC (none for files of version 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
    /// Who saved it (the name given when saving, else the OS account's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub author: String,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
    /// The steps, in order; in the file each is tool-call-shaped (`method` + `params` with
    /// placeholders).
    #[serde(default)]
    pub chain: Vec<Step>,
}

/// A scenario file as written, of any version: the migration to the current format is its
/// conversion into a [`Scenario`].
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScenarioFile {
    #[serde(default)]
    version: Option<u32>,
    name: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    start_url: Option<String>,
    #[serde(default)]
    recorded_at: Option<String>,
    #[serde(default)]
    author: String,
    #[serde(default)]
    parameters: Vec<Parameter>,
    #[serde(default)]
    dependencies: Vec<Dependency>,
    #[serde(default)]
    chain: Vec<Step>,
}

impl From<ScenarioFile> for Scenario {
    fn from(f: ScenarioFile) -> Scenario {
        // Version 1 kept no start URL: the first page its chain loads is where it starts.
        let start_url = f.start_url.unwrap_or_else(|| {
            f.chain
                .iter()
                .find_map(|s| s.action.page_url())
                .unwrap_or_default()
                .to_string()
        });
        Scenario {
            version: f.version.unwrap_or(1).max(FORMAT_VERSION),
            name: f.name,
            title: f.title,
            description: f.description,
            tags: f.tags,
            start_url,
            recorded_at: f.recorded_at,
            author: f.author,
            parameters: f.parameters,
            dependencies: f.dependencies,
            chain: f.chain,
        }
    }
}

/// What other code needs to know of a saved scenario without its steps: the index entry,
/// also what dependency suggestions look at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScenarioSummary {
    pub name: String,
    pub title: String,
    pub description: String,
    pub tags: Vec<String>,
    pub steps: usize,
    /// Names of the parameters, and of the secrets among them.
    pub parameters: Vec<String>,
    pub secrets: Vec<String>,
    pub dependencies: Vec<String>,
    /// Where it starts and where it last loads a page.
    pub start_url: String,
    pub end_url: String,
    /// It types a password.
    pub logs_in: bool,
}

impl Scenario {
    pub fn summary(&self) -> ScenarioSummary {
        let urls: Vec<&str> = self
            .chain
            .iter()
            .filter_map(|s| s.action.page_url())
            .collect();
        let names = |secret: bool| {
            self.parameters
                .iter()
                .filter(|p| p.secret == secret)
                .map(|p| p.name.clone())
                .collect::<Vec<_>>()
        };
        ScenarioSummary {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            tags: self.tags.clone(),
            steps: self.chain.len(),
            parameters: names(false),
            secrets: names(true),
            dependencies: self
                .dependencies
                .iter()
                .map(|d| d.scenario.clone())
                .collect(),
            start_url: match self.start_url.is_empty() {
                false => self.start_url.clone(),
                true => urls.first().copied().unwrap_or_default().to_string(),
            },
            end_url: urls.last().copied().unwrap_or_default().to_string(),
            logs_in: self
                .parameters
                .iter()
                .any(|p| p.secret && p.name.starts_with("password")),
        }
    }
}

/// A value the caller supplies (or a secret the store fills in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "ParameterFile")]
pub struct Parameter {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The kind of value it takes.
    #[serde(rename = "type")]
    pub kind: ParamType,
    /// A run must give it (a secret: the store or `overrideSecrets` must).
    pub required: bool,
    /// A value of the right shape, for whoever calls the scenario; never a recorded one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Filled from the encrypted secrets store, never from or into a model's messages.
    #[serde(default)]
    pub secret: bool,
}

impl Parameter {
    /// A parameter as the recorder makes one: its type from its recorded value, required
    /// when it has none.
    pub fn new(name: String, description: String, default: Option<Value>, secret: bool) -> Self {
        ParameterFile {
            name,
            description,
            kind: None,
            required: None,
            example: None,
            default,
            secret,
        }
        .into()
    }
}

/// The kind of value a parameter takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    #[default]
    String,
    Number,
    Boolean,
}

impl ParamType {
    /// The type of a value (text for anything but a number or true/false).
    pub fn of(value: &Value) -> ParamType {
        match value {
            Value::Bool(_) => ParamType::Boolean,
            Value::Number(_) => ParamType::Number,
            _ => ParamType::String,
        }
    }

    /// Its JSON Schema type name.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
        }
    }
}

/// A parameter as written: version 1 files say neither `type` nor `required`, which are
/// then read from its default (its type; required when it has none).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ParameterFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default, rename = "type")]
    kind: Option<ParamType>,
    #[serde(default)]
    required: Option<bool>,
    #[serde(default)]
    example: Option<Value>,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default)]
    secret: bool,
}

impl From<ParameterFile> for Parameter {
    fn from(f: ParameterFile) -> Parameter {
        let default = f.default.filter(|d| !d.is_null());
        Parameter {
            kind: f
                .kind
                .or_else(|| default.as_ref().map(ParamType::of))
                .unwrap_or_default(),
            required: f.required.unwrap_or(default.is_none()),
            name: f.name,
            description: f.description,
            example: f.example,
            default,
            secret: f.secret,
        }
    }
}

/// Another scenario to run first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dependency {
    pub scenario: String,
    /// Why it runs first (the suggestion's reason, or what the person wrote).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A failed optional dependency warns and the run continues.
    #[serde(default)]
    pub optional: bool,
    /// A named page check (e.g. `isAuthenticated`); when it holds, the dependency is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Parameters passed to the dependency (placeholders allowed).
    #[serde(default)]
    pub parameters: BTreeMap<String, Value>,
    /// Under which name the dependency's output is visible to later steps (`{{name.field}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_output: Option<String>,
}

/// One way to find an element again: a step keeps several, best first, so replay can fall
/// back when the page changed under one of them. Placeholders may stand in the values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case")]
pub enum Locator {
    TestId(String),
    /// `[role, accessible name]`.
    Role(String, String),
    Label(String),
    Id(String),
    Name(String),
    Text(String),
    Css(String),
    #[serde(rename = "xpath")]
    XPath(String),
}

/// Whether a checkbox step checks: a value, or a placeholder the run fills in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Flag {
    Is(bool),
    Input(String),
}

impl Flag {
    /// The value once placeholders are filled in (`"true"`/`"false"` count).
    pub fn value(&self) -> Option<bool> {
        match self {
            Flag::Is(b) => Some(*b),
            Flag::Input(s) => s.trim().parse().ok(),
        }
    }
}

/// What one step does. Every part of Kapture that writes or reads steps (the recorder,
/// the session log, export, replay) goes through this enum and matches it exhaustively,
/// so a step one of them cannot handle does not compile. Text fields may hold
/// `{{placeholders}}`.
#[derive(Debug, Clone, PartialEq)]
pub enum StepAction {
    Navigate {
        url: String,
    },
    /// The step before loads this page (a click that navigates): replay lets that step
    /// wait for it, scripts wait for the URL.
    WaitForLoad {
        url: String,
    },
    /// A tab a click opened; replay's click opens it again.
    NewTab {
        url: String,
    },
    GoBack,
    GoForward,
    Click {
        on: Vec<Locator>,
    },
    Hover {
        on: Vec<Locator>,
    },
    Type {
        on: Vec<Locator>,
        text: String,
        /// Press Enter afterwards.
        submit: bool,
    },
    Select {
        on: Vec<Locator>,
        values: Vec<String>,
    },
    Check {
        on: Vec<Locator>,
        checked: Flag,
    },
    /// A key pressed on whatever has focus; `on` is where the recording saw the focus.
    PressKey {
        key: String,
        on: Vec<Locator>,
    },
    /// Scrolls only moved the view: scripts repeat them, replay passes over them.
    Scroll {
        x: f64,
        y: f64,
    },
    /// A step this Kapture cannot read (a hand-written method, a newer Kapture's, a value
    /// of the wrong shape): kept exactly as written, never run. `why` says what is off with
    /// a known method (`has no url`); `None`: the method is not one Kapture knows.
    Unknown {
        method: String,
        params: Value,
        why: Option<String>,
    },
}

/// One step of a chain: what it does, and what the recording saw on the page after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawStep", into = "RawStep")]
pub struct Step {
    pub action: StepAction,
    /// What the page showed after the step while recording, for replay's hints.
    pub expect: Option<PageHint>,
}

impl From<StepAction> for Step {
    fn from(action: StepAction) -> Step {
        Step {
            action,
            expect: None,
        }
    }
}

/// A step as scenario files hold it: `{"method": …, "params": {…}}`, the shape of a tool
/// call. Kept only at the file's edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RawStep {
    method: String,
    #[serde(default)]
    params: Value,
}

impl StepAction {
    /// The method name files use for it.
    pub fn method(&self) -> &str {
        match self {
            StepAction::Navigate { .. } => "navigate",
            StepAction::WaitForLoad { .. } => "wait_for_load",
            StepAction::NewTab { .. } => "new_tab",
            StepAction::GoBack => "go_back",
            StepAction::GoForward => "go_forward",
            StepAction::Click { .. } => "click",
            StepAction::Hover { .. } => "hover",
            StepAction::Type { .. } => "type",
            StepAction::Select { .. } => "select_option",
            StepAction::Check { .. } => "check",
            StepAction::PressKey { .. } => "press_key",
            StepAction::Scroll { .. } => "scroll",
            StepAction::Unknown { method, .. } => method,
        }
    }

    /// The page it loads or waits for.
    pub fn page_url(&self) -> Option<&str> {
        match self {
            StepAction::Navigate { url } | StepAction::WaitForLoad { url } => Some(url),
            _ => None,
        }
    }

    /// Every URL it names: a page it loads, waits for or opens in a new tab.
    pub fn url(&self) -> Option<&str> {
        match self {
            StepAction::Navigate { url }
            | StepAction::WaitForLoad { url }
            | StepAction::NewTab { url } => Some(url),
            _ => None,
        }
    }

    /// The text it types into a field.
    pub fn typed_text(&self) -> Option<&str> {
        match self {
            StepAction::Type { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The locators of the element it acts on (none for page-level steps).
    pub fn locators(&self) -> &[Locator] {
        match self {
            StepAction::Click { on }
            | StepAction::Hover { on }
            | StepAction::Type { on, .. }
            | StepAction::Select { on, .. }
            | StepAction::Check { on, .. }
            | StepAction::PressKey { on, .. } => on,
            _ => &[],
        }
    }

    /// Read a file's `method` + `params`. Besides what Kapture writes, this takes what
    /// people write by hand: `fill` for `type`, `navigate_back`/`navigate_forward`, `value`
    /// for `text` or `values`, one `selector` for the locators, numbers as text.
    fn from_raw(method: &str, p: &Value) -> Result<StepAction, Unread> {
        let text = |k: &str| p.get(k).and_then(scalar_text);
        let url = || text("url").ok_or("has no url");
        let on = || locators_in(p);
        Ok(match method {
            "navigate" => StepAction::Navigate { url: url()? },
            "wait_for_load" => StepAction::WaitForLoad { url: url()? },
            "new_tab" => StepAction::NewTab { url: url()? },
            "go_back" | "navigate_back" => StepAction::GoBack,
            "go_forward" | "navigate_forward" => StepAction::GoForward,
            "click" => StepAction::Click { on: on()? },
            "hover" => StepAction::Hover { on: on()? },
            "type" | "fill" => StepAction::Type {
                on: on()?,
                text: text("text")
                    .or_else(|| text("value"))
                    .ok_or("lacks a value")?,
                submit: match p.get("submit") {
                    None | Some(Value::Null) => false,
                    Some(v) => v.as_bool().ok_or("has a submit that is not true/false")?,
                },
            },
            "select_option" => StepAction::Select {
                on: on()?,
                values: match p.get("values").or_else(|| p.get("value")) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(scalar_text)
                        .collect::<Option<_>>()
                        .ok_or("has a value that is not text")?,
                    Some(one) => vec![scalar_text(one).ok_or("lacks a value")?],
                    None => return Err("lacks a value".into()),
                },
            },
            "check" => StepAction::Check {
                on: on()?,
                checked: match p.get("checked") {
                    None | Some(Value::Null) => Flag::Is(true),
                    Some(v) => serde_json::from_value(v.clone())
                        .map_err(|_| "has a checked that is not true/false")?,
                },
            },
            "press_key" => StepAction::PressKey {
                key: text("key").ok_or("has no key")?,
                on: on()?,
            },
            "scroll" => {
                let at = |k: &str| match p.get(k) {
                    None | Some(Value::Null) => Ok(0.0),
                    Some(v) => v.as_f64().ok_or("has a position that is not a number"),
                };
                StepAction::Scroll {
                    x: at("x")?,
                    y: at("y")?,
                }
            }
            _ => return Err(Unread::Method),
        })
    }

    /// The `method` + `params` files hold.
    fn to_raw(&self) -> RawStep {
        let on = |l: &[Locator]| serde_json::to_value(l).unwrap_or_default();
        let params = match self {
            StepAction::Navigate { url }
            | StepAction::WaitForLoad { url }
            | StepAction::NewTab { url } => json!({ "url": url }),
            StepAction::GoBack | StepAction::GoForward => json!({}),
            StepAction::Click { on: l } | StepAction::Hover { on: l } => {
                json!({ "locators": on(l) })
            }
            StepAction::Type {
                on: l,
                text,
                submit,
            } => {
                let mut p = json!({ "locators": on(l), "text": text });
                if *submit {
                    p["submit"] = json!(true);
                }
                p
            }
            StepAction::Select { on: l, values } => json!({ "locators": on(l), "values": values }),
            StepAction::Check { on: l, checked } => {
                json!({ "locators": on(l), "checked": checked })
            }
            StepAction::PressKey { key, on: l } => json!({ "locators": on(l), "key": key }),
            StepAction::Scroll { x, y } => json!({ "x": x, "y": y }),
            StepAction::Unknown { method, params, .. } => {
                return RawStep {
                    method: method.clone(),
                    params: params.clone(),
                }
            }
        };
        RawStep {
            method: self.method().to_string(),
            params,
        }
    }
}

/// Why a file's step is not read as a [`StepAction`].
enum Unread {
    /// The method is not one Kapture knows.
    Method,
    /// What is off with a known method's step (`has no url`).
    Why(&'static str),
}

impl From<&'static str> for Unread {
    fn from(why: &'static str) -> Unread {
        Unread::Why(why)
    }
}

/// A text field's value: a string, or a number or true/false as its JSON text (what a
/// filled-in placeholder of another type becomes).
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The ranked locators of an element step; a hand-written `selector` counts as one CSS
/// locator.
fn locators_in(p: &Value) -> Result<Vec<Locator>, &'static str> {
    match p.get("locators") {
        Some(Value::Array(list)) if !list.is_empty() => {
            serde_json::from_value(Value::Array(list.clone()))
                .map_err(|_| "has a locator Kapture does not know")
        }
        _ => Ok(p
            .get("selector")
            .and_then(Value::as_str)
            .map(|s| vec![Locator::Css(s.to_string())])
            .unwrap_or_default()),
    }
}

impl From<RawStep> for Step {
    fn from(raw: RawStep) -> Step {
        let params = match raw.params {
            Value::Null => json!({}),
            other => other,
        };
        match StepAction::from_raw(&raw.method, &params) {
            Ok(action) => Step {
                action,
                expect: params
                    .get("expect")
                    .and_then(|e| serde_json::from_value(e.clone()).ok()),
            },
            Err(why) => Step::from(StepAction::Unknown {
                method: raw.method,
                params,
                why: match why {
                    Unread::Method => None,
                    Unread::Why(w) => Some(w.to_string()),
                },
            }),
        }
    }
}

impl From<Step> for RawStep {
    fn from(step: Step) -> RawStep {
        let mut raw = step.action.to_raw();
        if let (Some(hint), Some(p)) = (&step.expect, raw.params.as_object_mut()) {
            p.insert("expect".into(), json!(hint));
        }
        raw
    }
}

impl Step {
    /// This step with every `{{placeholder}}` filled in from `vars` (locators included).
    pub fn filled(&self, vars: &HashMap<String, Value>) -> Result<Step, ScenarioError> {
        let raw = RawStep::from(self.clone());
        let params = substitute(&raw.params, vars)?;
        Ok(Step::from(RawStep {
            method: raw.method,
            params,
        }))
    }

    /// The placeholders its values name, in order, each once.
    pub fn placeholders(&self) -> Vec<String> {
        let mut out = Vec::new();
        fn walk(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) => {
                    for n in placeholder_names(s) {
                        if !n.is_empty() && !out.contains(&n) {
                            out.push(n);
                        }
                    }
                }
                Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                Value::Object(map) => map.values().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        walk(&self.action.to_raw().params, &mut out);
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    #[error("there is no scenario named {0:?}")]
    Unknown(String),
    #[error("the dependencies form a cycle: {}", .0.join(" → "))]
    Cycle(Vec<String>),
    #[error("{{{{{0}}}}} has no value (pass it as a parameter)")]
    Missing(String),
    #[error("unknown condition {0:?}: use isAuthenticated, textPresent:<text> or selectorExists:<selector>")]
    BadCondition(String),
}

/// A page check that, when it holds, lets a run skip a dependency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// The page offers a way to log out (a button, link or menu item named so).
    IsAuthenticated,
    /// This text is on the page.
    TextPresent(String),
    /// An element matches this selector (CSS or XPath).
    SelectorExists(String),
}

impl Condition {
    /// Parse `isAuthenticated`, `textPresent:<text>` or `selectorExists:<selector>`.
    pub fn parse(text: &str) -> Result<Condition, ScenarioError> {
        let bad = || ScenarioError::BadCondition(text.to_string());
        match text.trim().split_once(':') {
            None if text.trim() == "isAuthenticated" => Ok(Condition::IsAuthenticated),
            Some(("textPresent", t)) if !t.trim().is_empty() => {
                Ok(Condition::TextPresent(t.trim().to_string()))
            }
            Some(("selectorExists", sel)) if !sel.trim().is_empty() => {
                Ok(Condition::SelectorExists(sel.trim().to_string()))
            }
            _ => Err(bad()),
        }
    }
}

/// The origin of a page URL as the page itself reports it (`location.origin`); none for a
/// URL that does not parse or an opaque origin.
pub fn page_origin(u: &str) -> Option<String> {
    url::Url::parse(u)
        .ok()
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o != "null")
}

/// Where a step may take the secrets it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretDestination {
    /// The step names no secret.
    Anywhere,
    /// It types a secret: only into a page of this origin, where the recording typed it.
    Only(String),
    /// It would take a secret where the recording never had it, so it is never filled in:
    /// why, in a sentence. A secret is typed only where the recording typed it (never with
    /// no page before the step), and goes in a URL only of an origin where the recording
    /// typed it (never a URL whose scheme or host is a placeholder); in any other field (a
    /// locator, a key, an option) it goes nowhere.
    Nowhere(String),
}

impl Scenario {
    /// Whether `name` (`pw` or `pw.field`) names one of this scenario's secrets.
    fn is_secret(&self, name: &str) -> bool {
        let base = name.split('.').next().unwrap_or(name).trim();
        self.parameters.iter().any(|p| p.secret && p.name == base)
    }

    /// For each step of the chain, where the secrets it names may go, judged on the saved
    /// chain alone (the origin of the last navigation or load before a step, the origin of
    /// a URL a step loads), never on a filled-in value: a caller's parameter cannot move a
    /// secret to another site. One judgement for every step kind, used by replay and by
    /// every export.
    pub fn secret_destinations(&self) -> Vec<SecretDestination> {
        // Where the recording typed each secret: the only origins it goes to in a URL.
        let mut homes: HashMap<String, Vec<String>> = HashMap::new();
        let mut here: Option<String> = None;
        for step in &self.chain {
            if let Some(url) = step.action.page_url() {
                here = placeholder_free_origin(url);
            }
            if let (Some(text), Some(o)) = (step.action.typed_text(), &here) {
                for n in placeholder_names(text).iter().filter(|n| self.is_secret(n)) {
                    let base = n.split('.').next().unwrap_or(n).trim().to_string();
                    let at = homes.entry(base).or_default();
                    if !at.contains(o) {
                        at.push(o.clone());
                    }
                }
            }
        }
        let mut here: Option<String> = None;
        self.chain
            .iter()
            .map(|step| {
                let url = step.action.url();
                if let Some(u) = step.action.page_url() {
                    here = placeholder_free_origin(u);
                }
                let secrets: Vec<String> = step
                    .placeholders()
                    .into_iter()
                    .filter(|n| self.is_secret(n))
                    .collect();
                if secrets.is_empty() {
                    return SecretDestination::Anywhere;
                }
                let named_in = |text: Option<&str>, n: &String| {
                    text.is_some_and(|t| placeholder_names(t).contains(n))
                };
                let typed = step.action.typed_text();
                if let Some(n) = secrets
                    .iter()
                    .find(|n| !named_in(typed, n) && !named_in(url, n))
                {
                    return SecretDestination::Nowhere(format!(
                        "the secret {n:?} stands in a field that is neither typed text nor a URL, so it is filled in nowhere"
                    ));
                }
                if let Some(u) = url.filter(|u| secrets.iter().any(|n| named_in(Some(u), n))) {
                    let Some(to) = placeholder_free_origin(u) else {
                        return SecretDestination::Nowhere(
                            "a secret stands in a URL whose site is not written out (a placeholder or no origin), so it is sent nowhere".into(),
                        );
                    };
                    for n in secrets.iter().filter(|n| named_in(Some(u), n)) {
                        let base = n.split('.').next().unwrap_or(n).trim();
                        let at = homes.get(base).cloned().unwrap_or_default();
                        if !at.contains(&to) {
                            return SecretDestination::Nowhere(format!(
                                "the secret {base:?} would go in a URL to {to}, {}, so it is sent nowhere",
                                if at.is_empty() {
                                    "and the recording typed it on no page".to_string()
                                } else {
                                    format!("but the recording typed it only on {}", at.join(", "))
                                }
                            ));
                        }
                    }
                }
                match (typed.is_some_and(|t| secrets.iter().any(|n| named_in(Some(t), n))), &here) {
                    (false, _) => SecretDestination::Anywhere,
                    (true, Some(o)) => SecretDestination::Only(o.clone()),
                    (true, None) => SecretDestination::Nowhere(
                        "the scenario does not say on which site its secret was recorded (no page before this step), so it is typed nowhere".into(),
                    ),
                }
            })
            .collect()
    }

    /// The first dependency this scenario would hand one of its secrets to as a parameter,
    /// with the secret's name: the dependency's steps would take it where this scenario's
    /// judgement never looked, so such a run is refused.
    pub fn secret_handed_on(&self) -> Option<(&str, String)> {
        self.dependencies.iter().find_map(|d| {
            let step = Step::from(StepAction::Unknown {
                method: String::new(),
                params: Value::Object(d.parameters.clone().into_iter().collect()),
                why: None,
            });
            step.placeholders()
                .into_iter()
                .find(|n| self.is_secret(n))
                .map(|n| (d.scenario.as_str(), n))
        })
    }
}

/// The origin of a saved URL, unless a placeholder stands in its scheme or host.
fn placeholder_free_origin(u: &str) -> Option<String> {
    let (scheme, rest) = u.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if scheme.contains("{{") || authority.contains("{{") {
        return None;
    }
    page_origin(u)
}

/// The names of the `{{name}}` placeholders in `s`.
fn placeholder_names(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        out.push(rest[start + 2..start + len].trim().to_string());
        rest = &rest[start + len + 2..];
    }
    out
}

/// Whether lines of the page model (`role "name" [ref=…]`) hold a log-out control.
pub fn offers_log_out(lines: &str) -> bool {
    lines.lines().any(|line| {
        let line = line.trim();
        let Some((role, rest)) = line.split_once(' ') else {
            return false;
        };
        let name: String = rest
            .split('"')
            .nth(1)
            .unwrap_or_default()
            .chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
            .to_lowercase();
        matches!(role, "button" | "link" | "menuitem")
            && ["logout", "signout", "logoff", "signoff"]
                .iter()
                .any(|w| name.contains(w))
    })
}

/// Whether `name` can name a scenario (and its files): letters, digits, `-` and `_`.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What a page showed shortly after a person's action.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PageHint {
    /// Something in the document changed.
    pub changed: bool,
    /// A dialog or modal is open.
    pub dialog: bool,
    /// The text of a visible alert (an error message, usually); empty when none.
    pub alert: String,
    /// The step a multi-step form (a wizard) shows as current, when it shows one. Saved
    /// only where it changed, so replay waits there for the form to reach it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<FormStep>,
}

/// How a multi-step form says which step it is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case")]
pub enum FormStep {
    /// The text of the element marked `aria-current="step"` (`Shipping`).
    Current(String),
    /// A step counter in the page's text (`Step 2 of 3`).
    Counter(String),
}

impl FormStep {
    /// What a person reads: `"Shipping"` or `"Step 2 of 3"`.
    pub fn label(&self) -> &str {
        match self {
            FormStep::Current(t) | FormStep::Counter(t) => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_secret_goes_only_where_the_recording_typed_it() {
        let s: Scenario = serde_json::from_value(json!({
            "name": "login",
            "parameters": [
                {"name": "user"},
                {"name": "password", "secret": true}
            ],
            "chain": [
                {"method": "type", "params": {"text": "{{password}}"}},
                {"method": "navigate", "params": {"url": "https://login.example/form?u={{user}}"}},
                {"method": "type", "params": {"text": "{{user}}"}},
                {"method": "type", "params": {"text": "pw: {{ password }}"}},
                {"method": "wait_for_load", "params": {"url": "http://127.0.0.1:8080/next"}},
                {"method": "type", "params": {"text": "{{password}}"}},
                {"method": "navigate", "params": {"url": "https://{{user}}.example/"}},
                {"method": "type", "params": {"text": "{{password}}"}}
            ]
        }))
        .unwrap();
        use SecretDestination::*;
        assert_eq!(
            s.secret_destinations(),
            vec![
                Nowhere("the scenario does not say on which site its secret was recorded (no page before this step), so it is typed nowhere".into()),
                Anywhere,
                Anywhere,
                Only("https://login.example".into()),
                Anywhere,
                Only("http://127.0.0.1:8080".into()),
                Anywhere,
                Nowhere("the scenario does not say on which site its secret was recorded (no page before this step), so it is typed nowhere".into()),
            ]
        );
    }

    #[test]
    fn a_secret_goes_in_a_url_only_to_an_origin_where_it_was_typed() {
        let s: Scenario = serde_json::from_value(json!({
            "name": "leak",
            "parameters": [{"name": "pw", "secret": true}, {"name": "host"}],
            "dependencies": [{"scenario": "other", "parameters": {"token": "{{pw}}"}}],
            "chain": [
                {"method": "navigate", "params": {"url": "http://127.0.0.1:1/login"}},
                {"method": "type", "params": {"text": "{{pw}}"}},
                {"method": "wait_for_load", "params": {"url": "http://127.0.0.1:1/in?pw={{pw}}"}},
                {"method": "navigate", "params": {"url": "http://127.0.0.1:2/steal?pw={{pw}}"}},
                {"method": "new_tab", "params": {"url": "http://127.0.0.1:2/?{{pw}}"}},
                {"method": "navigate", "params": {"url": "http://{{host}}/?{{pw}}"}},
                {"method": "click", "params": {"selector": "a[href*='{{pw}}']"}},
                {"method": "navigate", "params": {"url": "http://127.0.0.1:1/again?pw={{ pw }}"}}
            ]
        }))
        .unwrap();
        let d = s.secret_destinations();
        let nowhere = |i: usize| matches!(&d[i], SecretDestination::Nowhere(_));
        assert_eq!(d[0], SecretDestination::Anywhere);
        assert_eq!(d[1], SecretDestination::Only("http://127.0.0.1:1".into()));
        assert_eq!(
            d[2],
            SecretDestination::Anywhere,
            "its own origin: {:?}",
            d[2]
        );
        assert!(
            nowhere(3) && nowhere(4) && nowhere(5) && nowhere(6),
            "{d:?}"
        );
        assert_eq!(d[7], SecretDestination::Anywhere);
        assert_eq!(s.secret_handed_on(), Some(("other", "pw".to_string())));
    }

    fn scenario(name: &str, deps: &[&str]) -> Scenario {
        serde_json::from_value(json!({
            "name": name,
            "dependencies": deps.iter().map(|d| json!({"scenario": d})).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    fn store(list: Vec<Scenario>) -> HashMap<String, Scenario> {
        list.into_iter().map(|s| (s.name.clone(), s)).collect()
    }

    #[test]
    fn dependencies_run_first_and_once() {
        let s = store(vec![
            scenario("login", &[]),
            scenario("add_to_cart", &["login"]),
            scenario("checkout", &["login", "add_to_cart"]),
        ]);
        assert_eq!(
            plan("checkout", |n| s.get(n)).unwrap(),
            ["login", "add_to_cart", "checkout"]
        );
    }

    #[test]
    fn a_cycle_is_refused_by_name_and_an_unknown_dependency_too() {
        let s = store(vec![
            scenario("a", &["b"]),
            scenario("b", &["c"]),
            scenario("c", &["a"]),
            scenario("lonely", &["ghost"]),
        ]);
        let err = plan("a", |n| s.get(n)).unwrap_err();
        assert_eq!(
            err,
            ScenarioError::Cycle(vec!["a".into(), "b".into(), "c".into(), "a".into()])
        );
        assert_eq!(
            err.to_string(),
            "the dependencies form a cycle: a → b → c → a"
        );
        assert_eq!(
            plan("lonely", |n| s.get(n)).unwrap_err(),
            ScenarioError::Unknown("ghost".into())
        );
        let selfish = store(vec![scenario("me", &["me"])]);
        assert!(matches!(
            plan("me", |n| selfish.get(n)),
            Err(ScenarioError::Cycle(_))
        ));
    }

    #[test]
    fn placeholders_are_filled_keeping_types_and_missing_ones_are_named() {
        let vars: HashMap<String, Value> = [
            ("user".to_string(), json!("ada")),
            ("qty".to_string(), json!(3)),
            ("login".to_string(), json!({"account": {"id": "A-7"}})),
        ]
        .into();
        let params = json!({
            "text": "{{user}}",
            "count": "{{ qty }}",
            "note": "order {{qty}} for {{login.account.id}}",
            "list": ["{{user}}", 1, true],
            "literal": "no braces here",
        });
        assert_eq!(
            substitute(&params, &vars).unwrap(),
            json!({
                "text": "ada",
                "count": 3,
                "note": "order 3 for A-7",
                "list": ["ada", 1, true],
                "literal": "no braces here",
            })
        );
        let err = substitute(&json!({"t": "{{password}}"}), &vars).unwrap_err();
        assert_eq!(err, ScenarioError::Missing("password".into()));
        assert_eq!(
            err.to_string(),
            "{{password}} has no value (pass it as a parameter)"
        );
        assert!(substitute(&json!("{{login.nope}}"), &vars).is_err());
        // An unclosed brace is text, not a placeholder.
        assert_eq!(substitute(&json!("a {{b"), &vars).unwrap(), json!("a {{b"));
    }

    #[test]
    fn conditions_parse_or_are_refused_by_name() {
        assert_eq!(
            Condition::parse("isAuthenticated").unwrap(),
            Condition::IsAuthenticated
        );
        assert_eq!(
            Condition::parse("textPresent: Signed in as").unwrap(),
            Condition::TextPresent("Signed in as".into())
        );
        assert_eq!(
            Condition::parse("selectorExists:#logout").unwrap(),
            Condition::SelectorExists("#logout".into())
        );
        for bad in [
            "",
            "isLoggedIn",
            "textPresent:",
            "selectorExists:  ",
            "isAuthenticated:x",
        ] {
            let err = Condition::parse(bad).unwrap_err();
            assert!(err.to_string().contains("isAuthenticated"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_log_out_control_is_told_from_other_lines() {
        for yes in [
            r#"button "Log out" [ref=e3]"#,
            r#"  link "Sign-out" [ref=e9]"#,
            r#"menuitem "LOGOUT" [ref=e1]"#,
            "heading \"x\" [ref=e1]\nbutton \"Sign off\" [ref=e2]",
        ] {
            assert!(offers_log_out(yes), "{yes}");
        }
        for no in [
            "No match for \"out\" on the page.",
            r#"link "About us" [ref=e2]"#,
            r#"text "You have been logged out" [ref=e4]"#,
            r#"button "Checkout" [ref=e5]"#,
            r#"heading "Log out" [ref=e6]"#,
        ] {
            assert!(!offers_log_out(no), "{no}");
        }
    }

    #[test]
    fn steps_read_typed_and_what_cannot_be_read_is_kept_as_written() {
        let written = json!([
            {"method": "hover", "params": {"locators": [{"by": "role", "value": ["link", "Help"]}]}},
            {"method": "navigate_back"},
            {"method": "fill", "params": {"selector": "#q", "value": 3}},
            {"method": "check", "params": {"locators": [{"by": "id", "value": "a"}], "checked": "{{on}}"}},
            {"method": "navigate", "params": {}},
            {"method": "evaluate", "params": {"function": "1"}},
            {"method": "click", "params": {"locators": [{"by": "smell", "value": "x"}]}}
        ]);
        let chain: Vec<Step> = serde_json::from_value(written.clone()).unwrap();
        let actions: Vec<&StepAction> = chain.iter().map(|s| &s.action).collect();
        let help = Locator::Role("link".into(), "Help".into());
        assert_eq!(actions[0], &StepAction::Hover { on: vec![help] });
        assert_eq!(actions[1], &StepAction::GoBack);
        assert_eq!(
            actions[2],
            &StepAction::Type {
                on: vec![Locator::Css("#q".into())],
                text: "3".into(),
                submit: false
            }
        );
        let on = vec![Locator::Id("a".into())];
        assert_eq!(
            actions[3],
            &StepAction::Check {
                on: on.clone(),
                checked: Flag::Input("{{on}}".into())
            }
        );
        let why = |a: &StepAction| match a {
            StepAction::Unknown { why, .. } => why.clone(),
            other => panic!("{other:?} was read"),
        };
        assert_eq!(why(actions[4]).as_deref(), Some("has no url"));
        assert_eq!(why(actions[5]), None);
        assert_eq!(
            why(actions[6]).as_deref(),
            Some("has a locator Kapture does not know")
        );
        // What was not read is saved back as it was written.
        let back = serde_json::to_value(&chain).unwrap();
        assert_eq!(
            back.as_array().unwrap()[4..],
            written.as_array().unwrap()[4..]
        );
        // A placeholder takes its value's type when it is filled in.
        let vars: HashMap<String, Value> = [("on".to_string(), json!(true))].into();
        assert_eq!(
            chain[3].filled(&vars).unwrap().action,
            StepAction::Check {
                on,
                checked: Flag::Is(true)
            }
        );
        assert_eq!(chain[3].placeholders(), ["on"]);
    }

    #[test]
    fn the_saved_format_round_trips() {
        let text = json!({
            "name": "checkout",
            "title": "Check out",
            "tags": ["shop"],
            "parameters": [{"name": "card", "secret": true}, {"name": "qty", "default": 1}],
            "dependencies": [{"scenario": "login", "condition": "isAuthenticated", "optional": false,
                              "parameters": {"user": "{{user}}"}, "captureOutput": "login"}],
            "chain": [{"method": "click", "params": {"selector": "#buy"}}]
        });
        let s: Scenario = serde_json::from_value(text.clone()).unwrap();
        assert!(s.parameters[0].secret);
        assert_eq!(s.dependencies[0].capture_output.as_deref(), Some("login"));
        let back: Scenario = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
