//! Every saved scenario offered as its own MCP tool, `scenario_<name>`: its input schema is
//! the scenario's parameters (never its secrets) plus `tabId`, and a call runs it like
//! `scenario_run`. The list is read from the data folder on each `tools/list`.

use std::path::Path;
use std::sync::Arc;

use ext_core::protocol::TabId;
use ext_core::scenario::Scenario;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

/// What starts the tool name of every scenario.
pub const PREFIX: &str = "scenario_";

/// Longest tool name clients accept everywhere.
const MAX_NAME: usize = 64;

/// The tool of one scenario, unless its name would clash with a built-in tool or be too
/// long for clients.
pub fn tool_of(s: &Scenario, is_builtin: &dyn Fn(&str) -> bool) -> Option<Tool> {
    let name = format!("{PREFIX}{}", s.name);
    if is_builtin(&name) || name.len() > MAX_NAME {
        return None;
    }
    let mut properties = Map::new();
    for p in s.parameters.iter().filter(|p| !p.secret) {
        let mut prop = Map::new();
        let kind = match &p.default {
            Some(Value::Bool(_)) => "boolean",
            Some(Value::Number(_)) => "number",
            _ => "string",
        };
        prop.insert("type".into(), json!(kind));
        // The recorded value is what a person typed: the run uses it, the model never sees it.
        let recorded = p
            .default
            .as_ref()
            .map(|_| "Has a recorded default (used when not given).");
        let description = [Some(p.description.as_str()), recorded]
            .into_iter()
            .flatten()
            .filter(|d| !d.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if !description.is_empty() {
            // A recorded description can be a page's label: escaped like any page string.
            prop.insert(
                "description".into(),
                json!(ext_core::escape::inline_cut(&description, 500)),
            );
        }
        properties.insert(p.name.clone(), Value::Object(prop));
    }
    properties.insert(
        "tabId".into(),
        json!({"type": "integer", "description": "Tab to run in (default: the current tab)."}),
    );
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    let secrets: Vec<&str> = s
        .parameters
        .iter()
        .filter(|p| p.secret)
        .map(|p| p.name.as_str())
        .collect();
    let what = [s.title.as_str(), s.description.as_str()]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    let description = format!(
        "{}Replays the saved scenario {:?} ({} steps{}{}) without a model; answers like scenario_run.",
        if what.is_empty() { String::new() } else { format!("{}. ", ext_core::escape::inline_cut(&what, 500)) },
        s.name,
        s.chain.len(),
        if s.dependencies.is_empty() {
            String::new()
        } else {
            format!(
                ", after {}",
                s.dependencies
                    .iter()
                    .map(|d| d.scenario.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        if secrets.is_empty() {
            String::new()
        } else {
            format!("; secrets {} come from Kapture's store", secrets.join(", "))
        },
    );
    let annotations = ToolAnnotations::with_title(if s.title.is_empty() {
        s.name.clone()
    } else {
        s.title.clone()
    })
    .read_only(false)
    .destructive(true)
    .open_world(true);
    Some(Tool::new(name, description, Arc::new(schema)).annotate(annotations))
}

/// The tools of every readable saved scenario in `dir`.
pub fn tools(dir: &Path, is_builtin: &dyn Fn(&str) -> bool) -> Vec<Tool> {
    crate::scenarios::list(dir, &crate::scenarios::Filter::default())
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|s| tool_of(&s, is_builtin))
        .collect()
}

/// A call's arguments as the scenario's parameters and the tab to run in.
pub fn split_args(
    mut args: Map<String, Value>,
) -> Result<(Map<String, Value>, Option<TabId>), String> {
    let tab = match args.remove("tabId") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            serde_json::from_value::<TabId>(v)
                .map_err(|_| "tabId must be a tab id from browser_tabs".to_string())?,
        ),
    };
    Ok((args, tab))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        serde_json::from_value(json!({
            "name": "checkout",
            "title": "Check out",
            "parameters": [
                {"name": "full_name", "description": "Full name", "default": "Ada"},
                {"name": "qty", "default": 2},
                {"name": "card", "secret": true}
            ],
            "dependencies": [{"scenario": "login"}],
            "chain": [{"method": "navigate", "params": {"url": "http://127.0.0.1:1/"}}]
        }))
        .unwrap()
    }

    #[test]
    fn a_scenario_tool_takes_its_parameters_but_never_its_secrets() {
        let tool = tool_of(&scenario(), &|_| false).unwrap();
        assert_eq!(tool.name, "scenario_checkout");
        let props = tool.input_schema["properties"].as_object().unwrap();
        let schema = serde_json::to_string(&*tool.input_schema).unwrap();
        assert!(!schema.contains("Ada"), "{schema}");
        assert_eq!(
            props["full_name"]["description"],
            "Full name Has a recorded default (used when not given)."
        );
        assert_eq!(props["qty"]["type"], "number");
        assert!(props.contains_key("tabId") && !props.contains_key("card"));
        let text = tool.description.unwrap();
        assert!(
            text.contains("after login") && text.contains("secrets card"),
            "{text}"
        );
        assert_eq!(tool.annotations.unwrap().read_only_hint, Some(false));
    }

    #[test]
    fn clashing_or_overlong_names_are_not_offered() {
        let mut s = scenario();
        assert!(tool_of(&s, &|n| n == "scenario_checkout").is_none());
        s.name = "x".repeat(60);
        assert!(tool_of(&s, &|_| false).is_none());
    }

    #[test]
    fn the_tab_is_taken_out_of_the_arguments() {
        let args = json!({"qty": 3, "tabId": 7}).as_object().cloned().unwrap();
        let (given, tab) = split_args(args).unwrap();
        assert_eq!(tab, Some(7));
        assert_eq!(Value::Object(given), json!({"qty": 3}));
        let bad = json!({"tabId": "x"}).as_object().cloned().unwrap();
        assert!(split_args(bad).is_err());
    }
}
