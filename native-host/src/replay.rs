//! Replaying a saved scenario without a model: its dependencies first (in plan order),
//! then its chain, with `{{placeholders}}` filled from the caller's parameters, the
//! defaults and the sealed secrets — inside kapture, so no secret value reaches an answer.
//! Each element step tries the scenario's locators in rank order until one works: CSS-like
//! ones directly, role/label/text ones through the page model (`find`'s typed refs).

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use ext_core::escape;
use ext_core::methods::{
    ActionOutcome, Click, ElementTarget, FillForm, Find, FormField, GetText, GoBack, GoForward,
    Hover, Method, Navigate, PageInfo, PressKey, SelectOption, Text, Type, WaitFor,
};
use ext_core::protocol::{ErrorCode, TabId, WireError};
use ext_core::scenario::{
    offers_log_out, plan, substitute, Condition, Dependency, FormStep, Locator, Scenario,
    SecretDestination, StepAction,
};
use ext_core::snapshot::ShownRef;
use serde_json::{json, Map, Value};

use crate::bridge::{BridgeError, BridgeHandle};
use crate::secret_store::SecretStore;

mod report;
pub use report::RunReport;
use report::{Observed, Watch};

/// Time one attempt (one locator) may take.
const ATTEMPT_MS: u64 = 5_000;

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

/// Whether an element a `find` answer showed is the one a page-model locator names: a
/// role locator wants that role (a heading any level) and name, a label or text one that
/// name. `loose`: names compared without case and surrounding space.
fn names(locator: &Locator, shown: &ShownRef, loose: bool) -> bool {
    let same = |a: &str, b: &str| match loose {
        false => a == b,
        true => a.trim().to_lowercase() == b.trim().to_lowercase(),
    };
    match locator {
        Locator::Role(role, name) => {
            let role_fits = shown.role == *role
                || (role == "heading"
                    && shown.role.len() == 2
                    && shown.role.starts_with('h')
                    && shown.role[1..].chars().all(|c| c.is_ascii_digit()));
            role_fits && same(&shown.name, name)
        }
        Locator::Label(v) | Locator::Text(v) => same(&shown.name, v),
        _ => false,
    }
}

/// The text a page-model locator asks `find` for.
fn model_query(locator: &Locator) -> Option<&str> {
    match locator {
        Locator::Role(_, name) => Some(name),
        Locator::Label(v) | Locator::Text(v) => Some(v),
        _ => None,
    }
}

/// The ref of the element a `find` answer gives for `locator`, read from the answer's
/// typed refs (never out of its text): an exact name first, else one that differs only in
/// case or surrounding space.
pub fn ref_of(found: &Text, locator: &Locator) -> Option<String> {
    [false, true].into_iter().find_map(|loose| {
        found
            .refs
            .iter()
            .find(|shown| names(locator, shown, loose))
            .map(|shown| shown.element_ref.clone())
    })
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
    let find = Find {
        query: model_query(locator)?.to_string(),
        ..Default::default()
    };
    let found = call(bridge, tab, &find).await.ok()?;
    ref_of(&found, locator).map(|r| element(None, Some(r)))
}

/// What a step's answer tells the run.
#[derive(Debug, Default)]
struct Done {
    /// The page the step left the tab on: url and title.
    page: Option<(String, String)>,
    /// Its typed value went into a field the page calls confidential.
    confidential: bool,
    /// It loaded another document (what was typed before is off the page).
    navigated: bool,
}

impl From<ActionOutcome> for Done {
    fn from(a: ActionOutcome) -> Done {
        Done {
            page: Some((a.url, a.title)),
            confidential: !a.confidential.is_empty(),
            navigated: a.navigated,
        }
    }
}

impl From<PageInfo> for Done {
    fn from(p: PageInfo) -> Done {
        Done {
            page: Some((p.url, p.title)),
            confidential: false,
            navigated: true,
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
    let option =
        ref_of(&found, &Locator::Role("option".into(), wanted.into())).ok_or_else(|| {
            WireError::new(
                ErrorCode::SelectorNotFound,
                format!(
                    "the drop-down opened but shows no option {}",
                    escape::quoted_cut(wanted, 80)
                ),
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

/// Wait until a multi-step form shows `step` as its current one.
async fn reach_form_step(
    bridge: &BridgeHandle,
    tab: Option<TabId>,
    step: &FormStep,
) -> Result<(), WireError> {
    let by_text = |t: &str| WaitFor {
        text: Some(t.to_string()),
        ..Default::default()
    };
    let wait = match step {
        FormStep::Counter(t) => by_text(t),
        // The step list names every step: the one marked current must hold the name.
        FormStep::Current(t) => match xpath_literal(t) {
            Some(lit) => WaitFor {
                selector: Some(format!(
                    "//*[@aria-current='step'][contains(normalize-space(.), {lit})]"
                )),
                ..Default::default()
            },
            None => by_text(t),
        },
    };
    call(bridge, tab, &wait).await.map(|_| ())
}

/// `text` as an XPath 1.0 string literal (none holds both kinds of quote).
fn xpath_literal(text: &str) -> Option<String> {
    match (text.contains('\''), text.contains('"')) {
        (false, _) => Some(format!("'{text}'")),
        (true, false) => Some(format!("\"{text}\"")),
        (true, true) => None,
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
            let to = Navigate {
                url: url.clone(),
                wait_until: Default::default(),
            };
            return call(bridge, tab, &to).await.map(Done::from);
        }
        StepAction::GoBack => return call(bridge, tab, &GoBack::default()).await.map(Done::from),
        StepAction::GoForward => {
            return call(bridge, tab, &GoForward::default())
                .await
                .map(Done::from)
        }
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
    let missing: Vec<&str> = scenario
        .parameters
        .iter()
        .filter(|p| p.required && !p.secret && !given.contains_key(&p.name))
        .map(|p| p.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{}: the parameters {} are required: pass them in parameters",
            scenario.name,
            missing.join(", ")
        ));
    }
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
    /// The scenario the caller named.
    top: String,
    /// The steps of `top` to take a screenshot after (1-based).
    shots: Vec<u32>,
    /// Dialogs and errors between steps.
    watch: Watch,
    /// A secret this run typed may show on the page (no document loaded since): no
    /// screenshot is taken then.
    secret_on_page: bool,
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
            let at = format!("after {name} step {} ({method})", i + 1);
            let before = self.page.0.clone();
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
                    if done.navigated {
                        self.secret_on_page = false;
                    }
                    if let Some(text) = filled.action.typed_text() {
                        let secrets = &self.report.secrets;
                        self.secret_on_page |= secrets
                            .iter()
                            .any(|(v, _)| !v.is_empty() && text.contains(v.as_str()));
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
                    // What the page threw may be why.
                    if let Some(hint) = self.watch.new_errors(self.bridge, self.tab, &at).await {
                        self.report.hint(hint);
                    }
                    return Err(Stop::Failed);
                }
            }
            self.report.actions_executed += 1;
            if acts(&filled.action) {
                let seen = Observed {
                    at: &at,
                    before: &before,
                    after: &self.page.0,
                    on_element: !step.action.locators().is_empty(),
                    moves_page: Observed::is_news(&step.action),
                    expect: step.expect.as_ref(),
                };
                for hint in self.watch.after_step(self.bridge, self.tab, &seen).await {
                    self.report.hint(hint);
                }
            }
            // A wizard replays step by step: where the recording saw the form move on,
            // the run waits until it shows that step too.
            if let Some(form) = step.expect.as_ref().and_then(|e| e.step.as_ref()) {
                let label = escape::quoted_cut(form.label(), 60);
                let hint = match reach_form_step(self.bridge, self.tab, form).await {
                    Ok(()) => format!("{at} the form is on step {label}"),
                    Err(e) => format!(
                        "{at} the recording's form was on step {label} here; the page did not show it ({})",
                        e.code.as_str()
                    ),
                };
                self.report.hint(hint);
            }
            if name == self.top && self.shots.contains(&(i as u32 + 1)) {
                if self.secret_on_page {
                    self.report.hint(format!(
                        "{at} no screenshot: a secret this run typed may show on the page"
                    ));
                } else if let Some(shot) = report::screenshot(self.bridge, self.tab).await {
                    self.report.screenshots.push(at.clone());
                    self.report.images.push(shot);
                }
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

/// What a caller asks of a run.
pub struct Request<'a> {
    /// The scenario to run (its dependencies first).
    pub name: &'a str,
    /// Values of its parameters.
    pub given: &'a Map<String, Value>,
    /// Secrets for this run only, replacing the sealed ones (never saved, never answered).
    pub overrides: &'a Map<String, Value>,
    /// Steps of `name` (1-based) to take a screenshot after.
    pub screenshot_steps: &'a [u32],
}

/// Run a scenario and its dependencies on `tab`.
pub async fn run(
    bridge: &BridgeHandle,
    dir: &Path,
    tab: Option<TabId>,
    request: Request<'_>,
    caller: Caller<'_>,
) -> Result<RunReport, WireError> {
    let Caller { step, used } = caller;
    let Request {
        name,
        given,
        overrides,
        screenshot_steps,
    } = request;
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
    let steps = loaded.get(name).map_or(0, |s| s.chain.len());
    let shots = report::checked_shots(screenshot_steps, steps)?;
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
        report: RunReport {
            scenario: name.to_string(),
            ..Default::default()
        },
        outputs: HashMap::new(),
        page: Default::default(),
        top: name.to_string(),
        shots,
        secret_on_page: false,
        watch: Watch::start(bridge, tab).await,
    };
    let outcome = runner.run(name, given.clone()).await;
    // Errors the last step's page threw a moment later.
    if outcome.is_ok() {
        if let Some(hint) = runner.watch.new_errors(bridge, tab, "by the end").await {
            runner.report.hint(hint);
        }
    }
    let mut report = std::mem::take(&mut runner.report);
    report.secret_on_page = runner.secret_on_page;
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
    fn page_model_locators_take_their_ref_from_the_typed_answer() {
        let shown = |r: &str, role: &str, name: &str| ShownRef {
            element_ref: r.into(),
            role: role.into(),
            name: name.into(),
        };
        // The text says other refs than the typed list: only the typed list counts.
        let found = Text {
            tab_id: 1,
            text: "textbox \"User\" [ref=e9]".into(),
            cut: false,
            refs: vec![
                shown("e1", "textbox", "Email"),
                shown("e2", "button", "User"),
                shown("e3", "textbox", "User"),
                shown("e4", "h2", "Your cart"),
                shown("e5", "link", " sign in "),
            ],
        };
        let role = |r: &str, n: &str| Locator::Role(r.into(), n.into());
        assert_eq!(
            ref_of(&found, &role("textbox", "User")).as_deref(),
            Some("e3")
        );
        assert_eq!(
            ref_of(&found, &Locator::Label("Email".into())).as_deref(),
            Some("e1")
        );
        assert_eq!(
            ref_of(&found, &role("heading", "Your cart")).as_deref(),
            Some("e4")
        );
        assert_eq!(
            ref_of(&found, &Locator::Text("Sign in".into())).as_deref(),
            Some("e5")
        );
        assert!(ref_of(&found, &Locator::Text("Nope".into())).is_none());
        assert!(ref_of(&found, &role("link", "User")).is_none());
        assert_eq!(model_query(&role("textbox", "User")), Some("User"));
        assert!(model_query(&Locator::Css("#a".into())).is_none());
    }

    #[test]
    fn a_step_name_becomes_an_xpath_literal_where_it_can() {
        assert_eq!(xpath_literal("Shipping").unwrap(), "'Shipping'");
        assert_eq!(xpath_literal("Ada's").unwrap(), "\"Ada's\"");
        assert!(xpath_literal("Ada's \"pick\"").is_none());
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
