//! Replaying a saved scenario without a model: its dependencies first (in plan order),
//! then its chain, with `{{placeholders}}` filled from the caller's parameters, the
//! defaults and the sealed secrets — inside kapture, so no secret value reaches an answer.
//! Each element step tries the scenario's locators in rank order until one works: CSS-like
//! ones directly, role/label/text ones through the page model (`find` → ref).

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

/// What a page-model locator looks for: the text to `find`, and how a matching line
/// starts (`role "name"`), or any line naming the text.
fn model_query(locator: &Value) -> Option<(String, Option<String>)> {
    let value = locator.get("value")?;
    match locator.get("by")?.as_str()? {
        "role" => {
            let role = value.get(0)?.as_str()?;
            let name = value.get(1)?.as_str()?;
            let quoted = serde_json::to_string(name).ok()?;
            Some((name.to_string(), Some(format!("{role} {quoted}"))))
        }
        "label" | "text" => Some((value.as_str()?.to_string(), None)),
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

/// The extension method and params of one element step, for one target (`selector` or `ref`).
fn element_call(step: &Step, target: Value) -> Option<(&'static str, Value)> {
    let p = &step.params;
    let with = |mut t: Value, extra: Value| {
        if let (Some(o), Value::Object(e)) = (t.as_object_mut(), extra) {
            o.extend(e);
        }
        t
    };
    Some(match step.method.as_str() {
        "click" => ("click", target),
        "type" => ("type", with(target, json!({ "text": p.get("text")? }))),
        "select_option" => (
            "select_option",
            with(target, json!({ "values": p.get("values")? })),
        ),
        "check" => {
            let on = p.get("checked")?.as_bool()?;
            (
                "fill_form",
                json!({ "fields": [with(target, json!({ "value": on.to_string() }))] }),
            )
        }
        _ => return None,
    })
}

/// Where a locator points now: a CSS selector, or a ref found in the page model.
async fn target_of(bridge: &BridgeHandle, tab: Option<TabId>, locator: &Value) -> Option<Value> {
    if let Some(selector) = selector_of(locator) {
        return Some(json!({ "selector": selector }));
    }
    let (query, starts) = model_query(locator)?;
    let found = bridge
        .call_raw("find", tab, json!({ "query": query }), ATTEMPT_MS)
        .await
        .ok()?;
    let text = found.get("text")?.as_str()?;
    ref_in(text, &query, starts.as_deref()).map(|r| json!({ "ref": r }))
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
    for locator in &locators {
        let Some(target) = target_of(bridge, tab, locator).await else {
            continue;
        };
        let Some((method, params)) = element_call(step, target) else {
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
    fn page_model_locators_find_their_ref() {
        let found = "textbox \"Email\" [ref=e1]\n button \"User\" [ref=e2]\n textbox \"User\" [ref=e3]: ada";
        let role = json!({"by": "role", "value": ["textbox", "User"]});
        let (q, starts) = model_query(&role).unwrap();
        assert_eq!(ref_in(found, &q, starts.as_deref()).as_deref(), Some("e3"));
        let label = json!({"by": "label", "value": "Email"});
        let (q, starts) = model_query(&label).unwrap();
        assert_eq!(ref_in(found, &q, starts.as_deref()).as_deref(), Some("e1"));
        assert!(ref_in(found, "Nope", None).is_none());
        assert!(model_query(&json!({"by": "css", "value": "#a"})).is_none());
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
