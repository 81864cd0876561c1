//! Replaying a saved scenario without a model: its dependencies first (in plan order),
//! then its chain, with `{{placeholders}}` filled from the caller's parameters, the
//! defaults and the sealed secrets — inside kapture, so no secret value reaches an answer.
//! Each element step tries the scenario's locators in rank order until one works: CSS-like
//! ones directly, role/label/text ones through the page model (`find` → ref).

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use ext_core::methods::{
    ActionOutcome, Click, ElementTarget, FillForm, Find, FormField, GetText, GoBack, GoForward,
    Hover, Method, Navigate, PageInfo, PressKey, SelectOption, Type,
};
use ext_core::protocol::{ErrorCode, TabId, WireError};
use ext_core::recorder::PageHint;
use ext_core::scenario::{
    offers_log_out, plan, substitute, Condition, Dependency, Locator, Scenario, SecretDestination,
    StepAction,
};
use serde_json::{json, Map, Value};

use crate::bridge::{BridgeError, BridgeHandle};
use crate::secret_store::SecretStore;

/// Time one attempt (one locator) may take.
const ATTEMPT_MS: u64 = 5_000;

/// How a run went (no values, only what happened).
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub success: bool,
    pub dependencies_executed: Vec<String>,
    /// Dependencies passed over because their condition held, with the condition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependencies_skipped: Vec<String>,
    pub actions_executed: usize,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    /// The page the run ended on: title (url).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_on: Option<String>,
    pub hints: Vec<String>,
    /// The secret values the run used, to mask them in what it answers.
    #[serde(skip)]
    secrets: Vec<(String, String)>,
}

impl RunReport {
    /// Mask the run's secret values (a page may echo one into an alert or an error).
    fn mask_secrets(&mut self) {
        let secrets = std::mem::take(&mut self.secrets);
        let mask = |t: &mut String| *t = ext_core::secrets::redact(t, &secrets).0;
        self.hints.iter_mut().for_each(mask);
        self.failed_step.iter_mut().for_each(mask);
        self.ended_on.iter_mut().for_each(mask);
        self.dependencies_skipped.iter_mut().for_each(mask);
    }
}

/// A CSS selector for a stored locator, when it has one.
pub fn selector_of(locator: &Locator) -> Option<String> {
    let quoted = |v: &str| serde_json::to_string(v).unwrap_or_default();
    Some(match locator {
        Locator::Css(value) => value.clone(),
        Locator::TestId(v) => {
            let q = quoted(v);
            format!("[data-testid={q}],[data-test={q}],[data-qa={q}]")
        }
        Locator::Id(v) => format!("[id={}]", quoted(v)),
        Locator::Name(v) => format!("[name={}]", quoted(v)),
        // The page helpers read a selector starting with `/` or `xpath=` as XPath.
        Locator::XPath(v) if v.starts_with('/') => v.clone(),
        Locator::XPath(v) => format!("xpath={v}"),
        Locator::Role(..) | Locator::Label(_) | Locator::Text(_) => return None,
    })
}

/// What a page-model locator looks for: the text to `find`, and how a matching line
/// starts (`role "name"`), or any line naming the text.
fn model_query(locator: &Locator) -> Option<(String, Option<String>)> {
    match locator {
        Locator::Role(role, name) => {
            let quoted = serde_json::to_string(name).ok()?;
            Some((name.clone(), Some(format!("{role} {quoted}"))))
        }
        Locator::Label(v) | Locator::Text(v) => Some((v.clone(), None)),
        _ => None,
    }
}

/// The ref of the first line of `find`'s answer that matches, e.g. `button "Go" [ref=e4]`.
pub fn ref_in(found: &str, query: &str, starts: Option<&str>) -> Option<String> {
    let quoted = serde_json::to_string(query).ok()?;
    found
        .lines()
        .map(str::trim)
        .find(|l| match starts {
            Some(prefix) => l.starts_with(prefix),
            None => l.contains(&quoted),
        })?
        .split("[ref=")
        .nth(1)?
        .split(']')
        .next()
        .map(str::to_string)
}

/// One typed call of a replay step, held to one attempt's time.
async fn call<M: Method>(
    bridge: &BridgeHandle,
    tab: Option<TabId>,
    params: &M,
) -> Result<M::Response, WireError> {
    bridge
        .call_with_timeout(tab, params, ATTEMPT_MS)
        .await
        .map_err(BridgeError::into_wire)
}

/// An element target named by a CSS selector or a ref.
fn element(selector: Option<String>, element_ref: Option<String>) -> ElementTarget {
    ElementTarget {
        element_ref,
        selector,
        element: None,
    }
}

/// Where a locator points now: a CSS selector, or a ref found in the page model.
async fn target_of(
    bridge: &BridgeHandle,
    tab: Option<TabId>,
    locator: &Locator,
) -> Option<ElementTarget> {
    if let Some(selector) = selector_of(locator) {
        return Some(element(Some(selector), None));
    }
    let (query, starts) = model_query(locator)?;
    let find = Find {
        query: query.clone(),
        ..Default::default()
    };
    let found = call(bridge, tab, &find).await.ok()?;
    ref_in(&found.text, &query, starts.as_deref()).map(|r| element(None, Some(r)))
}

/// What a step's answer tells the run.
#[derive(Debug, Default)]
struct Done {
    /// The page the step left the tab on: url and title.
    page: Option<(String, String)>,
    /// Its typed value went into a field the page calls confidential.
    confidential: bool,
}

impl From<ActionOutcome> for Done {
    fn from(a: ActionOutcome) -> Done {
        Done {
            page: Some((a.url, a.title)),
            confidential: !a.confidential.is_empty(),
        }
    }
}

impl From<PageInfo> for Done {
    fn from(p: PageInfo) -> Done {
        Done {
            page: Some((p.url, p.title)),
            confidential: false,
        }
    }
}

/// Pick `wanted` in a custom drop-down: click its opener (`target`), then click the
/// option of that name the page model shows.
async fn custom_select(
    bridge: &BridgeHandle,
    tab: Option<TabId>,
    target: ElementTarget,
    wanted: &str,
) -> Result<Done, WireError> {
    call(bridge, tab, &click(target)).await?;
    let find = Find {
        query: wanted.to_string(),
        ..Default::default()
    };
    let found = call(bridge, tab, &find).await?;
    let quoted = serde_json::to_string(wanted).unwrap_or_default();
    let option =
        ref_in(&found.text, wanted, Some(&format!("option {quoted}"))).ok_or_else(|| {
            WireError::new(
                ErrorCode::SelectorNotFound,
                format!("the drop-down opened but shows no option {quoted}"),
            )
        })?;
    call(bridge, tab, &click(element(None, Some(option))))
        .await
        .map(Done::from)
}

/// A plain left click on `target`.
fn click(target: ElementTarget) -> Click {
    Click {
        target,
        button: Default::default(),
        double_click: false,
        modifiers: Vec::new(),
    }
}

/// Errors after which the next locator is worth a try.
fn try_next(e: &WireError) -> bool {
    matches!(
        e.code,
        ErrorCode::SelectorNotFound | ErrorCode::NotInteractable | ErrorCode::InvalidSelector
    )
}

/// Whether a step sends an action (a navigation, input): what a step budget counts.
fn acts(action: &StepAction) -> bool {
    match action {
        StepAction::WaitForLoad { .. } | StepAction::Scroll { .. } | StepAction::NewTab { .. } => {
            false
        }
        StepAction::Navigate { .. }
        | StepAction::GoBack
        | StepAction::GoForward
        | StepAction::Click { .. }
        | StepAction::Hover { .. }
        | StepAction::Type { .. }
        | StepAction::Select { .. }
        | StepAction::Check { .. }
        | StepAction::PressKey { .. }
        | StepAction::Unknown { .. } => true,
    }
}

/// What an element step does once its element is found.
enum ElementAct<'a> {
    Click,
    Hover,
    Type { text: &'a str, submit: bool },
    Select(&'a [String]),
    Check(bool),
}

/// Run one filled-in step; `only_on`: the one origin its secret may be typed on.
async fn run_step(
    bridge: &BridgeHandle,
    tab: Option<TabId>,
    action: &StepAction,
    only_on: Option<&str>,
) -> Result<Done, WireError> {
    let (on, act) = match action {
        StepAction::Navigate { url } => {
            let to = Navigate { url: url.clone() };
            return call(bridge, tab, &to).await.map(Done::from);
        }
        StepAction::GoBack => return call(bridge, tab, &GoBack {}).await.map(Done::from),
        StepAction::GoForward => return call(bridge, tab, &GoForward {}).await.map(Done::from),
        StepAction::PressKey { key, .. } => {
            let press = PressKey { key: key.clone() };
            return call(bridge, tab, &press).await.map(Done::from);
        }
        // Click-caused loads are awaited by the click; scrolls only moved the view; a tab
        // a click opened is opened again by that click.
        StepAction::WaitForLoad { .. } | StepAction::Scroll { .. } | StepAction::NewTab { .. } => {
            return Ok(Done::default())
        }
        StepAction::Unknown { method, why, .. } => {
            let what = match why {
                Some(why) => format!("{method} {why}"),
                None => method.clone(),
            };
            return Err(WireError::new(
                ErrorCode::BadArgs,
                format!("the scenario has a step Kapture cannot replay: {what}"),
            ));
        }
        StepAction::Click { on } => (on, ElementAct::Click),
        StepAction::Hover { on } => (on, ElementAct::Hover),
        StepAction::Type { on, text, submit } => (
            on,
            ElementAct::Type {
                text,
                submit: *submit,
            },
        ),
        StepAction::Select { on, values } => (on, ElementAct::Select(values)),
        StepAction::Check { on, checked } => {
            let on_off = checked.value().ok_or_else(|| {
                WireError::new(
                    ErrorCode::BadArgs,
                    "check: its checked value is not true or false",
                )
            })?;
            (on, ElementAct::Check(on_off))
        }
    };
    let mut last = WireError::new(
        ErrorCode::SelectorNotFound,
        format!("{}: none of its locators can be used", action.method()),
    );
    for locator in on {
        let Some(target) = target_of(bridge, tab, locator).await else {
            continue;
        };
        let result = match &act {
            ElementAct::Click => call(bridge, tab, &click(target)).await.map(Done::from),
            ElementAct::Hover => call(bridge, tab, &Hover { target }).await.map(Done::from),
            ElementAct::Type { text, submit } => {
                let typing = Type {
                    target,
                    text: text.to_string(),
                    submit: *submit,
                    slowly: false,
                    only_on: only_on.map(str::to_string),
                };
                call(bridge, tab, &typing).await.map(Done::from)
            }
            ElementAct::Select(values) => {
                let select = SelectOption {
                    target: target.clone(),
                    values: values.to_vec(),
                };
                match call(bridge, tab, &select).await {
                    Ok(_) => Ok(Done::default()),
                    // A custom drop-down (a combobox of a script): open it, then pick the option.
                    Err(e)
                        if e.code == ErrorCode::NotInteractable
                            && e.message.contains("is not a <select>") =>
                    {
                        let wanted = values.first().map(String::as_str).unwrap_or_default();
                        custom_select(bridge, tab, target, wanted).await
                    }
                    Err(e) => Err(e),
                }
            }
            ElementAct::Check(on_off) => {
                let fill = FillForm {
                    fields: vec![FormField {
                        target,
                        value: on_off.to_string(),
                    }],
                    submit: false,
                };
                call(bridge, tab, &fill).await.map(Done::from)
            }
        };
        match result {
            Ok(done) => return Ok(done),
            Err(e) if try_next(&e) => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// The values for `scenario`'s placeholders: defaults, then the caller's, then secrets
/// (the run's overrides first, else the sealed store), then captured outputs.
fn values(
    scenario: &Scenario,
    given: &Map<String, Value>,
    overrides: &Map<String, Value>,
    store: &SecretStore,
) -> Result<HashMap<String, Value>, String> {
    let mut vars: HashMap<String, Value> = HashMap::new();
    for p in &scenario.parameters {
        if let Some(d) = &p.default {
            vars.insert(p.name.clone(), d.clone());
        }
    }
    vars.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
    let secret_names: Vec<&str> = scenario
        .parameters
        .iter()
        .filter(|p| p.secret && !given.contains_key(&p.name))
        .map(|p| p.name.as_str())
        .collect();
    let sealed = if secret_names.iter().any(|n| !overrides.contains_key(*n)) {
        store
            .load(&scenario.name)
            .map_err(|e| e.to_string())?
            .unwrap_or_default()
    } else {
        Default::default()
    };
    for name in secret_names {
        if let Some(v) = overrides.get(name) {
            vars.insert(name.to_string(), v.clone());
        } else if let Some(v) = sealed.get(name) {
            vars.insert(name.to_string(), Value::String(v.clone()));
        }
    }
    Ok(vars)
}

/// Why a run stopped early.
enum Stop {
    /// A step failed; the report says which.
    Failed,
    /// The run could not start or go on (bad scenario, missing value, unreachable store).
    Bad(WireError),
}

/// One `scenario_run`: the scenarios it loaded, what ran, and where the page is.
struct Runner<'a> {
    bridge: &'a BridgeHandle,
    /// Counts one step of the caller's budget before each action; a refusal stops the run.
    step: &'a (dyn Fn() -> Result<(), WireError> + Sync),
    tab: Option<TabId>,
    loaded: HashMap<String, Scenario>,
    store: SecretStore,
    overrides: &'a Map<String, Value>,
    report: RunReport,
    /// Outputs of the scenarios that ran (or were skipped) in this run, by name.
    outputs: HashMap<String, Value>,
    /// The page after the last step: url and title.
    page: (String, String),
}

impl Runner<'_> {
    fn bad(why: impl std::fmt::Display) -> Stop {
        Stop::Bad(WireError::new(ErrorCode::BadArgs, why.to_string()))
    }

    /// Whether `condition` holds on the tab's page now.
    async fn holds(&self, condition: &Condition) -> Result<bool, Stop> {
        let find = |query: &str| {
            let find = Find {
                query: query.to_string(),
                max: Some(50),
                ..Default::default()
            };
            async move {
                call(self.bridge, self.tab, &find)
                    .await
                    .map_err(Stop::Bad)
                    .map(|found| found.text)
            }
        };
        Ok(match condition {
            Condition::IsAuthenticated => {
                offers_log_out(&find("out").await?) || offers_log_out(&find("off").await?)
            }
            Condition::TextPresent(text) => find(text).await?.contains("[ref="),
            Condition::SelectorExists(selector) => {
                let get = GetText {
                    target: element(Some(selector.clone()), None),
                    budget: Default::default(),
                };
                let asked = call(self.bridge, self.tab, &get).await;
                match asked {
                    Ok(_) => true,
                    Err(e) if e.code == ErrorCode::SelectorNotFound => false,
                    Err(e) => return Err(Stop::Bad(e)),
                }
            }
        })
    }

    /// Run `name` (its dependencies first) with `given` parameters; answers its output:
    /// the page it ended on and its non-secret values, for `captureOutput`.
    async fn run(&mut self, name: &str, given: Map<String, Value>) -> Result<Value, Stop> {
        let scenario = self
            .loaded
            .get(name)
            .cloned()
            .ok_or_else(|| Self::bad(format!("there is no scenario named {name:?}")))?;
        let mut vars = values(&scenario, &given, self.overrides, &self.store).map_err(Self::bad)?;
        let unsealed: Vec<&str> = scenario
            .parameters
            .iter()
            .filter(|p| p.secret && !vars.contains_key(&p.name))
            .map(|p| p.name.as_str())
            .collect();
        if !unsealed.is_empty() {
            return Err(Self::bad(format!(
                "{name}: the secrets {} have no sealed value (the browser kept the recording without them): give them with overrideSecrets",
                unsealed.join(", ")
            )));
        }
        for p in scenario.parameters.iter().filter(|p| p.secret) {
            if let Some(Value::String(v)) = vars.get(&p.name) {
                self.report
                    .secrets
                    .push((v.clone(), "scenario-secret".into()));
            }
        }
        // A secret handed to a dependency as a parameter would be judged by nothing there.
        if let Some((dep, secret)) = scenario.secret_handed_on() {
            self.report.failed_step = Some(format!(
                "{name}: POLICY_DENIED the secret {secret:?} would be handed to the dependency {dep:?} as a parameter, where no step says on which site it may go, so it is handed on nowhere"
            ));
            self.report
                .hints
                .push(ErrorCode::PolicyDenied.hint().to_string());
            return Err(Stop::Failed);
        }
        for dep in &scenario.dependencies {
            let output = match self.outputs.get(&dep.scenario) {
                Some(done) => done.clone(),
                None => self.dependency(name, dep, &vars).await?,
            };
            if let Some(key) = &dep.capture_output {
                vars.insert(key.clone(), output);
            }
        }
        let destinations = scenario.secret_destinations();
        for (i, step) in scenario.chain.iter().enumerate() {
            let filled = step
                .filled(&vars)
                .map_err(|e| Self::bad(format!("{name}: {e}")))?;
            let method = step.action.method();
            let only_on = match destinations.get(i) {
                Some(SecretDestination::Only(origin)) => Some(origin.as_str()),
                Some(SecretDestination::Nowhere(why)) => {
                    self.report.failed_step = Some(format!(
                        "{name} step {} ({}): POLICY_DENIED {why}",
                        i + 1,
                        method
                    ));
                    self.report
                        .hints
                        .push(ErrorCode::PolicyDenied.hint().to_string());
                    return Err(Stop::Failed);
                }
                Some(SecretDestination::Anywhere) | None => None,
            };
            let sent = match acts(&filled.action) {
                true => (self.step)(),
                false => Ok(()),
            };
            let outcome = match sent {
                Ok(()) => run_step(self.bridge, self.tab, &filled.action, only_on).await,
                Err(e) => Err(e),
            };
            match outcome {
                Ok(done) => {
                    if let Some(page) = done.page {
                        self.page = page;
                    }
                    // A value the page's field calls confidential is one, whatever the
                    // scenario called it.
                    if let (Some(text), true) = (filled.action.typed_text(), done.confidential) {
                        self.report
                            .secrets
                            .push((text.to_string(), "confidential".into()));
                    }
                }
                Err(e) => {
                    self.report.failed_step = Some(format!(
                        "{name} step {} ({}): {} {}",
                        i + 1,
                        method,
                        e.code.as_str(),
                        e.message
                    ));
                    self.report.hints.push(e.code.hint().to_string());
                    return Err(Stop::Failed);
                }
            }
            self.report.actions_executed += 1;
            if !step.action.locators().is_empty() {
                let at = format!("after {name} step {} ({method})", i + 1);
                self.note_alerts(&at, step.expect.as_ref()).await;
            }
        }
        let secret: Vec<&str> = scenario
            .parameters
            .iter()
            .filter(|p| p.secret)
            .map(|p| p.name.as_str())
            .collect();
        let mut output: Map<String, Value> = vars
            .into_iter()
            .filter(|(k, _)| !secret.contains(&k.as_str()) && !self.outputs.contains_key(k))
            .collect();
        output.insert("url".into(), json!(self.page.0));
        output.insert("title".into(), json!(self.page.1));
        let output = Value::Object(output);
        self.outputs.insert(name.to_string(), output.clone());
        Ok(output)
    }

    /// Run one dependency of `parent` unless its condition holds; an optional one that
    /// fails leaves a hint and the run goes on.
    async fn dependency(
        &mut self,
        parent: &str,
        dep: &Dependency,
        vars: &HashMap<String, Value>,
    ) -> Result<Value, Stop> {
        if let Some(text) = &dep.condition {
            let condition =
                Condition::parse(text).map_err(|e| Self::bad(format!("{parent}: {e}")))?;
            if self.holds(&condition).await? {
                self.report
                    .dependencies_skipped
                    .push(format!("{} ({text} holds)", dep.scenario));
                let output = json!({ "url": self.page.0, "title": self.page.1, "skipped": true });
                self.outputs.insert(dep.scenario.clone(), output.clone());
                return Ok(output);
            }
        }
        let params = match substitute(
            &Value::Object(dep.parameters.clone().into_iter().collect()),
            vars,
        )
        .map_err(|e| Self::bad(format!("{parent} → {}: {e}", dep.scenario)))?
        {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        match Box::pin(self.run(&dep.scenario, params)).await {
            Ok(output) => {
                self.report.dependencies_executed.push(dep.scenario.clone());
                Ok(output)
            }
            Err(Stop::Failed) if dep.optional => {
                let why = self.report.failed_step.take().unwrap_or_default();
                self.report.hints.pop();
                self.report.hints.push(format!(
                    "optional dependency {} failed and was passed over: {why}",
                    dep.scenario
                ));
                let output = json!({ "url": self.page.0, "title": self.page.1, "failed": true });
                self.outputs.insert(dep.scenario.clone(), output.clone());
                Ok(output)
            }
            Err(e) => Err(e),
        }
    }

    /// After an element step: alerts the page shows (error messages, usually) compared
    /// with what the recording saw there, as hints.
    async fn note_alerts(&mut self, at: &str, expect: Option<&PageHint>) {
        let find = Find {
            query: "alert".into(),
            max: Some(5),
            ..Default::default()
        };
        let Ok(found) = call(self.bridge, self.tab, &find).await else {
            return;
        };
        for hint in alert_hints(&found.text, expect, at) {
            if !self.report.hints.contains(&hint) {
                self.report.hints.push(hint);
            }
        }
    }
}

/// Hints from the alert lines of a `find` answer, against what the recording saw after
/// the step (`expect`: `{alert}`; absent for scenarios recorded without page hints).
fn alert_hints(found: &str, expect: Option<&PageHint>, at: &str) -> Vec<String> {
    let now: Vec<&str> = found
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("alert"))
        .collect();
    let Some(expect) = expect else {
        return now
            .iter()
            .map(|l| format!("{at} the page shows {l}"))
            .collect();
    };
    let wanted = expect.alert.as_str();
    let mut hints: Vec<String> = now
        .iter()
        .filter(|l| wanted.is_empty() || !l.contains(wanted))
        .map(|l| format!("{at} the page shows {l}, which the recording did not"))
        .collect();
    if !wanted.is_empty() && !now.iter().any(|l| l.contains(wanted)) {
        hints.push(format!(
            "{at} the recording showed the alert {wanted:?}; the page shows no such alert now"
        ));
    }
    hints
}

/// What the MCP session running a replay lends it and learns from it.
pub struct Caller<'a> {
    /// Counts one step of the session's budget before each action; a refusal stops the run.
    pub step: &'a (dyn Fn() -> Result<(), WireError> + Sync),
    /// The secret values the run used (but not those the caller passed as `parameters`),
    /// so that the session masks them in everything it answers later (the page now holds
    /// them: an evaluate could read one back).
    pub used: &'a mut Vec<(String, String)>,
}

/// Run `name` and its dependencies on `tab`. `overrides` replace sealed secrets for this
/// run only (never saved, never answered).
pub async fn run(
    bridge: &BridgeHandle,
    dir: &Path,
    tab: Option<TabId>,
    name: &str,
    given: &Map<String, Value>,
    overrides: &Map<String, Value>,
    caller: Caller<'_>,
) -> Result<RunReport, WireError> {
    let Caller { step, used } = caller;
    let started = Instant::now();
    let bad = |why: String| WireError::new(ErrorCode::BadArgs, why);
    let mut loaded: HashMap<String, Scenario> = HashMap::new();
    let mut queue = vec![name.to_string()];
    while let Some(n) = queue.pop() {
        if loaded.contains_key(&n) || loaded.len() > 100 {
            continue;
        }
        let s = crate::scenarios::get(dir, &n).map_err(bad)?;
        queue.extend(s.dependencies.iter().map(|d| d.scenario.clone()));
        loaded.insert(n, s);
    }
    plan(name, |n| loaded.get(n)).map_err(|e| bad(e.to_string()))?;
    for s in loaded.values() {
        for d in &s.dependencies {
            if let Some(c) = &d.condition {
                Condition::parse(c).map_err(|e| bad(format!("{}: {e}", s.name)))?;
            }
        }
    }
    let store = SecretStore::open_off_runtime(dir.join("secrets"))
        .await
        .map_err(|e| bad(e.to_string()))?;
    let mut runner = Runner {
        bridge,
        step,
        tab,
        loaded,
        store,
        overrides,
        report: RunReport::default(),
        outputs: HashMap::new(),
        page: Default::default(),
    };
    let outcome = runner.run(name, given.clone()).await;
    let mut report = runner.report;
    // What the caller passed itself it knows already; the sealed and override values not.
    let known: Vec<&str> = given.values().filter_map(Value::as_str).collect();
    used.extend(
        report
            .secrets
            .iter()
            .filter(|(v, _)| !known.contains(&v.as_str()))
            .cloned(),
    );
    report.duration_ms = started.elapsed().as_millis() as u64;
    if !runner.page.0.is_empty() {
        report.ended_on = Some(format!("{} ({})", runner.page.1, runner.page.0));
    }
    report.mask_secrets();
    match outcome {
        Ok(_) => {
            report.success = true;
            Ok(report)
        }
        Err(Stop::Failed) => Ok(report),
        Err(Stop::Bad(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alerts_are_compared_with_what_the_recording_saw() {
        let found = "2 matches for \"alert\":\nalert [ref=e4]: Wrong password\n text \"x\"";
        let at = "after login step 4 (click)";
        assert_eq!(
            alert_hints(found, None, at),
            ["after login step 4 (click) the page shows alert [ref=e4]: Wrong password"]
        );
        let saw = |alert: &str| PageHint {
            alert: alert.into(),
            ..Default::default()
        };
        assert!(alert_hints(found, Some(&saw("Wrong password")), at).is_empty());
        assert_eq!(
            alert_hints(found, Some(&saw("")), at),
            ["after login step 4 (click) the page shows alert [ref=e4]: Wrong password, which the recording did not"]
        );
        assert_eq!(
            alert_hints("No match for \"alert\" on the page.", Some(&saw("Added")), at),
            ["after login step 4 (click) the recording showed the alert \"Added\"; the page shows no such alert now"]
        );
    }

    #[test]
    fn page_model_locators_find_their_ref() {
        let found = "textbox \"Email\" [ref=e1]\n button \"User\" [ref=e2]\n textbox \"User\" [ref=e3]: ada";
        let role = Locator::Role("textbox".into(), "User".into());
        let (q, starts) = model_query(&role).unwrap();
        assert_eq!(ref_in(found, &q, starts.as_deref()).as_deref(), Some("e3"));
        let label = Locator::Label("Email".into());
        let (q, starts) = model_query(&label).unwrap();
        assert_eq!(ref_in(found, &q, starts.as_deref()).as_deref(), Some("e1"));
        assert!(ref_in(found, "Nope", None).is_none());
        assert!(model_query(&Locator::Css("#a".into())).is_none());
    }

    #[test]
    fn locators_become_selectors_in_rank_order_and_others_are_skipped() {
        let locators = json!([
            {"by": "role", "value": ["button", "Go"]},
            {"by": "test_id", "value": "go"},
            {"by": "id", "value": "a\"b"},
            {"by": "name", "value": "user"},
            {"by": "css", "value": "form > button"},
            {"by": "xpath", "value": "/html[1]"}
        ]);
        let locators: Vec<Locator> = serde_json::from_value(locators).unwrap();
        let selectors: Vec<String> = locators.iter().filter_map(selector_of).collect();
        assert_eq!(
            selectors,
            [
                r#"[data-testid="go"],[data-test="go"],[data-qa="go"]"#,
                r#"[id="a\"b"]"#,
                r#"[name="user"]"#,
                "form > button",
                "/html[1]"
            ]
        );
    }
}
