//! Saving a recording as a scenario: steps become a chain whose typed values are
//! `{{placeholders}}`, secret ones (by `ext_core::recorder::secret_kind`) sealed in the
//! secret store and ordinary ones offered as parameters with their recorded value as
//! default. Files: `<data dir>/scenarios/<name>.json` and `<data dir>/secrets/<name>.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ext_core::methods::RecorderState;
use ext_core::recorder::{locators, secret_kind, FieldContext, RecordedStep};
use ext_core::scenario::{Parameter, Scenario, Step};
use serde_json::{json, Value};

use crate::secret_store::SecretStore;

/// Kapture's data folder for scenarios and their secrets.
pub fn default_dir() -> PathBuf {
    crate::audit::default_dir()
}

/// What was saved, for the answer (never the secret values).
#[derive(Debug)]
pub struct Saved {
    pub path: PathBuf,
    pub steps: usize,
    pub parameters: Vec<String>,
    pub secrets: Vec<String>,
}

/// A parameter name from what a field is called: lower-case words joined by `_`.
fn param_name(e: &ext_core::recorder::ElementDescriptor) -> String {
    let source = [&e.name, &e.id, &e.label, &e.placeholder]
        .into_iter()
        .find(|s| !s.trim().is_empty())
        .map(|s| s.as_str())
        .unwrap_or("value");
    let words: Vec<String> = source
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "value".into()
    } else {
        words.join("_")
    }
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

/// Build the scenario and the secrets of a stopped recording.
pub fn from_recording(
    name: &str,
    title: &str,
    description: &str,
    state: &RecorderState,
) -> (Scenario, BTreeMap<String, String>) {
    let mut chain = Vec::new();
    let mut parameters: Vec<Parameter> = Vec::new();
    let mut secrets = BTreeMap::new();
    let mut url = state.start_url.clone().unwrap_or_default();
    if !url.is_empty() {
        chain.push(Step {
            method: "navigate".into(),
            params: json!({ "url": url }),
        });
    }
    for step in &state.steps {
        let target_params = |t: &ext_core::recorder::ElementDescriptor, extra: Value| {
            let mut p = json!({ "locators": locators(t) });
            if let (Some(obj), Value::Object(more)) = (p.as_object_mut(), extra) {
                obj.extend(more);
            }
            p
        };
        let (method, params) = match step {
            RecordedStep::Navigate { url: u } => {
                url = u.clone();
                ("navigate", json!({ "url": u }))
            }
            RecordedStep::WaitForLoad { url: u } => {
                url = u.clone();
                ("wait_for_load", json!({ "url": u }))
            }
            RecordedStep::Click { target } => ("click", target_params(target, json!({}))),
            RecordedStep::Type { target, text } => {
                let ctx = FieldContext {
                    url: &url,
                    form_has_password: target.form_has_password,
                    form_hint: &target.form_hint,
                };
                let taken: Vec<String> = parameters.iter().map(|p| p.name.clone()).collect();
                let secret = secret_kind(target, &ctx);
                let pname = unique(
                    secret
                        .map(str::to_string)
                        .unwrap_or_else(|| param_name(target)),
                    &taken,
                );
                if secret.is_some() {
                    secrets.insert(pname.clone(), text.clone());
                }
                parameters.push(Parameter {
                    name: pname.clone(),
                    description: target.label.clone(),
                    default: secret.is_none().then(|| json!(text)),
                    secret: secret.is_some(),
                });
                (
                    "type",
                    target_params(target, json!({ "text": format!("{{{{{pname}}}}}") })),
                )
            }
            RecordedStep::Select { target, value } => (
                "select_option",
                target_params(target, json!({ "values": [value] })),
            ),
            RecordedStep::Check { target, checked } => (
                "check",
                target_params(target, json!({ "checked": checked })),
            ),
            RecordedStep::Press { target, key } => {
                ("press_key", target_params(target, json!({ "key": key })))
            }
            RecordedStep::Scroll { x, y } => ("scroll", json!({ "x": x, "y": y })),
            RecordedStep::NewTab { url: u } => ("new_tab", json!({ "url": u })),
        };
        chain.push(Step {
            method: method.into(),
            params,
        });
    }
    let scenario = Scenario {
        name: name.into(),
        title: title.into(),
        description: description.into(),
        tags: Vec::new(),
        parameters,
        dependencies: Vec::new(),
        chain,
    };
    (scenario, secrets)
}

/// Save a stopped recording under `name` in `dir`.
pub fn save(
    dir: &Path,
    name: &str,
    title: &str,
    description: &str,
    state: &RecorderState,
) -> Result<Saved, String> {
    let store = SecretStore::open(&dir.join("secrets")).map_err(|e| e.to_string())?;
    let (scenario, secrets) = from_recording(name, title, description, state);
    // The store checks the name; check it before anything is written.
    store.save(name, &secrets).map_err(|e| e.to_string())?;
    let folder = dir.join("scenarios");
    std::fs::create_dir_all(&folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let path = folder.join(format!("{name}.json"));
    let json = serde_json::to_vec_pretty(&scenario).unwrap_or_default();
    crate::pairing::write_private_atomic(&path, &json)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Saved {
        path,
        steps: scenario.chain.len(),
        parameters: scenario
            .parameters
            .iter()
            .filter(|p| !p.secret)
            .map(|p| p.name.clone())
            .collect(),
        secrets: secrets.keys().cloned().collect(),
    })
}

fn checked_name(name: &str) -> Result<&str, String> {
    if ext_core::scenario::is_valid_name(name) {
        Ok(name)
    } else {
        Err(format!(
            "{name:?} is not a scenario name (letters, digits, - and _)"
        ))
    }
}

/// One saved scenario; an unknown name says how to find the known ones.
pub fn get(dir: &Path, name: &str) -> Result<Scenario, String> {
    let path = dir
        .join("scenarios")
        .join(format!("{}.json", checked_name(name)?));
    let bytes = std::fs::read(&path).map_err(|_| {
        format!("there is no scenario named {name:?}; scenario_list shows the saved ones")
    })?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is damaged: {e}", path.display()))
}

/// The saved scenarios whose name, title, description or tags mention `search`, by name.
pub fn list(dir: &Path, search: Option<&str>) -> Vec<Result<Scenario, String>> {
    let Ok(entries) = std::fs::read_dir(dir.join("scenarios")) else {
        return Vec::new();
    };
    let needle = search.map(str::to_lowercase);
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| get(dir, n))
        .filter(|r| match (r, &needle) {
            (Ok(s), Some(q)) => {
                [&s.name, &s.title, &s.description]
                    .iter()
                    .any(|t| t.to_lowercase().contains(q.as_str()))
                    || s.tags.iter().any(|t| t.to_lowercase().contains(q.as_str()))
            }
            _ => true,
        })
        .collect()
}

/// Remove a scenario and its sealed secrets.
pub fn delete(dir: &Path, name: &str) -> Result<(), String> {
    get(dir, name)?;
    let name = checked_name(name)?;
    for path in [
        dir.join("scenarios").join(format!("{name}.json")),
        dir.join("secrets").join(format!("{name}.json")),
    ] {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ext_core::recorder::ElementDescriptor;

    use super::*;

    fn field(name: &str, input_type: &str) -> ElementDescriptor {
        ElementDescriptor {
            tag: "input".into(),
            name: name.into(),
            id: name.into(),
            input_type: input_type.into(),
            form_has_password: true,
            form_hint: "login".into(),
            css_path: format!("#{name}"),
            ..Default::default()
        }
    }

    #[test]
    fn a_login_recording_saves_placeholders_and_seals_the_secrets() {
        let state = RecorderState {
            tab_id: 1,
            recording: false,
            captured: 9,
            start_url: Some("http://127.0.0.1:1/login.html".into()),
            steps: vec![
                RecordedStep::Type {
                    target: ElementDescriptor {
                        autocomplete: "username".into(),
                        ..field("user", "text")
                    },
                    text: "ada".into(),
                },
                RecordedStep::Type {
                    target: field("password", "password"),
                    text: "Canary-123".into(),
                },
                RecordedStep::Type {
                    target: ElementDescriptor {
                        form_has_password: false,
                        form_hint: String::new(),
                        ..field("q", "search")
                    },
                    text: "shoes".into(),
                },
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let saved = save(dir.path(), "login", "Log in", "", &state).unwrap();
        assert_eq!(saved.steps, 4, "navigate + three typed fields");
        assert_eq!(saved.secrets, ["password", "username"]);
        assert_eq!(saved.parameters, ["q"]);
        let text = std::fs::read_to_string(&saved.path).unwrap();
        assert!(
            !text.contains("Canary-123") && !text.contains("\"ada\""),
            "{text}"
        );
        assert!(
            text.contains("{{password}}") && text.contains("{{username}}"),
            "{text}"
        );
        assert!(
            text.contains("\"shoes\""),
            "ordinary values are defaults: {text}"
        );
        let store = SecretStore::open(&dir.path().join("secrets")).unwrap();
        let secrets = store.load("login").unwrap().unwrap();
        assert_eq!(secrets["password"], "Canary-123");
        assert!(save(dir.path(), "../evil", "", "", &state).is_err());

        assert_eq!(get(dir.path(), "login").unwrap().title, "Log in");
        assert!(get(dir.path(), "nope")
            .unwrap_err()
            .contains("scenario_list"));
        assert!(get(dir.path(), "../login").is_err());
        assert_eq!(list(dir.path(), Some("LOG")).len(), 1);
        assert!(list(dir.path(), Some("checkout")).is_empty());
        delete(dir.path(), "login").unwrap();
        assert!(list(dir.path(), None).is_empty());
        assert!(
            store.load("login").unwrap().is_none(),
            "its secrets went too"
        );
        assert!(delete(dir.path(), "login").is_err());
    }
}
