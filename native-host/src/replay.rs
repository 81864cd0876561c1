//! Replaying a saved scenario without a model: its dependencies first (in plan order),
//! then its chain, with `{{placeholders}}` filled from the caller's parameters, the
//! defaults and the sealed secrets — inside kapture, so no secret value reaches an answer.
//! Each element step tries the scenario's locators in rank order until one works.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use ext_core::protocol::{ErrorCode, TabId, WireError};
use ext_core::scenario::{plan, substitute, Scenario, Step};
use serde_json::{json, Map, Value};

use crate::bridge::BridgeHandle;
use crate::secret_store::SecretStore;

/// Time one attempt (one locator) may take.
const ATTEMPT_MS: u64 = 5_000;

/// How a run went (no values, only what happened).
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub success: bool,
    pub dependencies_executed: Vec<String>,
    pub actions_executed: usize,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    pub hints: Vec<String>,
}

/// A CSS selector for a stored locator, when it has one.
pub fn selector_of(locator: &Value) -> Option<String> {
    let value = locator.get("value")?.as_str()?;
    let quoted = serde_json::to_string(value).ok()?;
    Some(match locator.get("by")?.as_str()? {
        "css" => value.to_string(),
        "test_id" => format!("[data-testid={quoted}],[data-test={quoted}],[data-qa={quoted}]"),
        "id" => format!("[id={quoted}]"),
        "name" => format!("[name={quoted}]"),
        _ => return None,
    })
}

/// The extension method and params of one element step, for one selector.
fn element_call(step: &Step, selector: &str) -> Option<(&'static str, Value)> {
    let p = &step.params;
    Some(match step.method.as_str() {
        "click" => ("click", json!({ "selector": selector })),
        "type" => (
            "type",
            json!({ "selector": selector, "text": p.get("text")? }),
        ),
        "select_option" => (
            "select_option",
            json!({ "selector": selector, "values": p.get("values")? }),
        ),
        "check" => {
            let on = p.get("checked")?.as_bool()?;
            (
                "fill_form",
                json!({ "fields": [{ "selector": selector, "value": on.to_string() }] }),
            )
        }
        _ => return None,
    })
}

/// Errors after which the next locator is worth a try.
fn try_next(e: &WireError) -> bool {
    matches!(
        e.code,
        ErrorCode::SelectorNotFound | ErrorCode::NotInteractable | ErrorCode::InvalidSelector
    )
}

async fn run_step(bridge: &BridgeHandle, tab: Option<TabId>, step: &Step) -> Result<(), WireError> {
    let call = |method: &'static str, params: Value| async move {
        bridge
            .call_raw(method, tab, params, ATTEMPT_MS)
            .await
            .map(drop)
            .map_err(|e| e.into_wire())
    };
    match step.method.as_str() {
        "navigate" => return call("navigate", json!({ "url": step.params.get("url") })).await,
        "press_key" => return call("press_key", json!({ "key": step.params.get("key") })).await,
        // Click-caused loads are awaited by the click; scrolls only moved the view.
        "wait_for_load" | "scroll" => return Ok(()),
        _ => {}
    }
    let locators = step
        .params
        .get("locators")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut last = WireError::new(
        ErrorCode::SelectorNotFound,
        format!("{}: none of its locators can be used", step.method),
    );
    for selector in locators.iter().filter_map(selector_of) {
        let Some((method, params)) = element_call(step, &selector) else {
            return Err(WireError::new(
                ErrorCode::BadArgs,
                format!(
                    "the scenario has a step Kapture cannot replay: {}",
                    step.method
                ),
            ));
        };
        match call(method, params).await {
            Ok(()) => return Ok(()),
            Err(e) if try_next(&e) => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// The values for `scenario`'s placeholders: defaults, then the caller's, then secrets.
fn values(
    scenario: &Scenario,
    given: &Map<String, Value>,
    store: &SecretStore,
) -> Result<HashMap<String, Value>, String> {
    let mut vars: HashMap<String, Value> = HashMap::new();
    for p in &scenario.parameters {
        if let Some(d) = &p.default {
            vars.insert(p.name.clone(), d.clone());
        }
    }
    vars.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
    if scenario.parameters.iter().any(|p| p.secret) {
        let secrets = store
            .load(&scenario.name)
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        for p in scenario.parameters.iter().filter(|p| p.secret) {
            if let (false, Some(v)) = (given.contains_key(&p.name), secrets.get(&p.name)) {
                vars.insert(p.name.clone(), Value::String(v.clone()));
            }
        }
    }
    Ok(vars)
}

/// Run `name` and its dependencies on `tab`.
pub async fn run(
    bridge: &BridgeHandle,
    dir: &Path,
    tab: Option<TabId>,
    name: &str,
    given: &Map<String, Value>,
) -> Result<RunReport, WireError> {
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
    let order = plan(name, |n| loaded.get(n)).map_err(|e| bad(e.to_string()))?;
    let store = SecretStore::open(&dir.join("secrets")).map_err(|e| bad(e.to_string()))?;
    let mut report = RunReport {
        success: true,
        dependencies_executed: Vec::new(),
        actions_executed: 0,
        duration_ms: 0,
        failed_step: None,
        hints: Vec::new(),
    };
    for n in &order {
        let s = &loaded[n];
        let own = if n == name { given.clone() } else { Map::new() };
        let vars = values(s, &own, &store).map_err(bad)?;
        for (i, step) in s.chain.iter().enumerate() {
            let filled = Step {
                method: step.method.clone(),
                params: substitute(&step.params, &vars).map_err(|e| bad(format!("{n}: {e}")))?,
            };
            if let Err(e) = run_step(bridge, tab, &filled).await {
                report.success = false;
                report.failed_step = Some(format!(
                    "{n} step {} ({}): {} {}",
                    i + 1,
                    step.method,
                    e.code.as_str(),
                    e.message
                ));
                report.hints.push(e.code.hint().to_string());
                report.duration_ms = started.elapsed().as_millis() as u64;
                return Ok(report);
            }
            report.actions_executed += 1;
        }
        if n != name {
            report.dependencies_executed.push(n.clone());
        }
    }
    report.duration_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let selectors: Vec<String> = locators
            .as_array()
            .unwrap()
            .iter()
            .filter_map(selector_of)
            .collect();
        assert_eq!(
            selectors,
            [
                r#"[data-testid="go"],[data-test="go"],[data-qa="go"]"#,
                r#"[id="a\"b"]"#,
                r#"[name="user"]"#,
                "form > button"
            ]
        );
    }
}
