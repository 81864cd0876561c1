//! The pure parts of replaying a scenario: the order its dependencies run in (cycles
//! refused by name) and `{{a.b}}` placeholders filled from the run's values.

use std::collections::HashMap;

use serde_json::Value;

use super::{Scenario, ScenarioError};

/// The order to run `name` and everything it depends on: dependencies first, each once.
pub fn plan<'a>(
    name: &str,
    lookup: impl Fn(&str) -> Option<&'a Scenario>,
) -> Result<Vec<String>, ScenarioError> {
    // Depth-first with an explicit path, so a cycle is reported as the loop it is.
    fn visit<'a>(
        name: &str,
        lookup: &dyn Fn(&str) -> Option<&'a Scenario>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Result<(), ScenarioError> {
        if done.iter().any(|d| d == name) {
            return Ok(());
        }
        if let Some(at) = path.iter().position(|p| p == name) {
            let mut cycle = path[at..].to_vec();
            cycle.push(name.to_string());
            return Err(ScenarioError::Cycle(cycle));
        }
        let scenario = lookup(name).ok_or_else(|| ScenarioError::Unknown(name.to_string()))?;
        path.push(name.to_string());
        for dep in &scenario.dependencies {
            visit(&dep.scenario, lookup, path, done)?;
        }
        path.pop();
        done.push(name.to_string());
        Ok(())
    }
    let mut done = Vec::new();
    visit(name, &lookup, &mut Vec::new(), &mut done)?;
    Ok(done)
}

/// Replace every `{{a}}` / `{{a.b}}` in the strings of `value` with its value from `vars`.
/// A string that is exactly one placeholder takes the value's own type.
pub fn substitute(value: &Value, vars: &HashMap<String, Value>) -> Result<Value, ScenarioError> {
    Ok(match value {
        Value::String(s) => substitute_str(s, vars)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), substitute(v, vars)?)))
                .collect::<Result<_, ScenarioError>>()?,
        ),
        other => other.clone(),
    })
}

fn lookup_var(path: &str, vars: &HashMap<String, Value>) -> Result<Value, ScenarioError> {
    let mut parts = path.split('.');
    let head = parts.next().unwrap_or_default();
    let mut v = vars
        .get(head)
        .ok_or_else(|| ScenarioError::Missing(path.to_string()))?;
    for part in parts {
        v = v
            .get(part)
            .ok_or_else(|| ScenarioError::Missing(path.to_string()))?;
    }
    Ok(v.clone())
}

fn substitute_str(s: &str, vars: &HashMap<String, Value>) -> Result<Value, ScenarioError> {
    let trimmed = s.trim();
    if let Some(inner) = trimmed
        .strip_prefix("{{")
        .and_then(|r| r.strip_suffix("}}"))
        .filter(|i| !i.contains("{{") && !i.contains("}}"))
    {
        return lookup_var(inner.trim(), vars);
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = rest[start + 2..start + len].trim();
        match lookup_var(name, vars)? {
            Value::String(text) => out.push_str(&text),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}
