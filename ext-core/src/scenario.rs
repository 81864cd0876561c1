//! Saved scenarios as data (metadata, parameters, dependencies, the chain of steps) and the
//! pure parts of replay: the dependency plan (topological, cycles refused by name) and
//! `{{a.b}}` substitution. Recording and running live elsewhere; this is what they share.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One saved scenario (`scenarios/<name>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub parameters: Vec<Parameter>,
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
    /// The steps, in order: tool-call-shaped (`method` + `params` with placeholders).
    #[serde(default)]
    pub chain: Vec<Step>,
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
            .filter(|s| matches!(s.method.as_str(), "navigate" | "wait_for_load"))
            .filter_map(|s| s.params.get("url")?.as_str())
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
            start_url: urls.first().copied().unwrap_or_default().to_string(),
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
#[serde(rename_all = "camelCase")]
pub struct Parameter {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Filled from the encrypted secrets store, never from or into a model's messages.
    #[serde(default)]
    pub secret: bool,
}

/// Another scenario to run first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dependency {
    pub scenario: String,
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

/// One recorded action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub method: String,
    #[serde(default)]
    pub params: Value,
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

/// Where a step may type what it types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretDestination {
    /// The step types no secret.
    Anywhere,
    /// It types a secret: only into a page of this origin, where the recording typed it.
    Only(String),
    /// It types a secret, but the recording says on no page before it where (a hand-written
    /// chain, or a URL whose origin is a placeholder): it is typed nowhere.
    Unknown,
}

impl Scenario {
    /// For each step of the chain, where what it types may go. A secret goes only to the
    /// origin of the page the recording was on when it typed it: the last navigation or
    /// load before the step, read from the saved chain, never from a filled-in value (a
    /// caller's parameter cannot move a secret to another site).
    pub fn secret_destinations(&self) -> Vec<SecretDestination> {
        let secret = |name: &str| {
            self.parameters
                .iter()
                .any(|p| p.secret && p.name == name.split('.').next().unwrap_or(name))
        };
        let mut here: Option<String> = None;
        self.chain
            .iter()
            .map(|step| {
                if matches!(step.method.as_str(), "navigate" | "wait_for_load") {
                    here = step
                        .params
                        .get("url")
                        .and_then(Value::as_str)
                        .and_then(placeholder_free_origin);
                }
                let types_secret = step
                    .params
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| placeholder_names(t).iter().any(|n| secret(n)));
                match (&here, types_secret) {
                    (_, false) => SecretDestination::Anywhere,
                    (Some(o), true) => SecretDestination::Only(o.clone()),
                    (None, true) => SecretDestination::Unknown,
                }
            })
            .collect()
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
                Unknown,
                Anywhere,
                Anywhere,
                Only("https://login.example".into()),
                Anywhere,
                Only("http://127.0.0.1:8080".into()),
                Anywhere,
                Unknown,
            ]
        );
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
