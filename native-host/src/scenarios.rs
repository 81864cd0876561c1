//! Saved scenarios on disk: a recording saved as the person chose (built by
//! `ext_core::recorder::draft`, its secrets sealed in the secret store), read, listed with
//! filters, deleted. Files: `<data dir>/scenarios/<name>.json`, `scenarios/index.json` (an
//! [`Index`]) and `<data dir>/secrets/<name>.json`.

use std::path::{Path, PathBuf};

use ext_core::protocol::{ErrorCode, WireError};
use ext_core::recorder::draft::{self, SaveRequest};
use ext_core::scenario::{Scenario, ScenarioSummary};

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
    /// Secrets the recording no longer held (the browser kept it across a restart without
    /// them): each run must give them with `overrideSecrets`.
    pub missing: Vec<String>,
}

impl Saved {
    /// What to tell about its secrets.
    pub fn secrets_note(&self) -> String {
        let sealed = if self.secrets.is_empty() {
            "none".to_string()
        } else {
            self.secrets.join(", ")
        };
        if self.missing.is_empty() {
            sealed
        } else {
            format!(
                "{sealed}; not kept by the browser, so give them to every run with overrideSecrets: {}",
                self.missing.join(", ")
            )
        }
    }
}

/// Why a recording was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("a scenario named {0:?} exists already: choose another name, or delete it first with scenario_delete")]
    Exists(String),
    #[error("{0}")]
    BadName(String),
    #[error("{0}")]
    Store(String),
}

impl SaveError {
    /// As a coded error, with what became of the recording.
    pub fn wire(&self, then: &str) -> WireError {
        let code = match self {
            SaveError::Exists(_) | SaveError::BadName(_) => ErrorCode::BadArgs,
            SaveError::Store(_) => ErrorCode::Internal,
        };
        WireError::new(code, format!("{self} ({then})"))
    }
}

/// Saves one at a time, so that "the name is free" still holds when the files are written.
static SAVING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Refuse a name a saved scenario has: a save never replaces one (nor its secrets).
pub fn check_free(dir: &Path, name: &str) -> Result<(), SaveError> {
    let name = checked_name(name).map_err(SaveError::BadName)?;
    if dir.join("scenarios").join(format!("{name}.json")).exists()
        || dir.join("secrets").join(format!("{name}.json")).exists()
    {
        return Err(SaveError::Exists(name.to_string()));
    }
    Ok(())
}

/// Save a stopped recording as the person (or agent) chose: the scenario file, its sealed
/// secrets, and the index. A name in use is refused.
pub fn save(dir: &Path, request: &SaveRequest) -> Result<Saved, SaveError> {
    let _one = SAVING.lock().unwrap_or_else(|p| p.into_inner());
    let name = checked_name(&request.choices.name).map_err(SaveError::BadName)?;
    check_free(dir, name)?;
    let store =
        SecretStore::open(&dir.join("secrets")).map_err(|e| SaveError::Store(e.to_string()))?;
    let (mut scenario, secrets) = draft::build(&request.recording, &request.choices);
    scenario.recorded_at = Some(now_rfc3339());
    if scenario.author.trim().is_empty() {
        scenario.author = os_account();
    }
    let missing = draft::missing_secrets(&request.recording, &request.choices);
    store
        .save(name, &secrets)
        .map_err(|e| SaveError::Store(e.to_string()))?;
    let folder = dir.join("scenarios");
    std::fs::create_dir_all(&folder)
        .map_err(|e| SaveError::Store(format!("cannot create {}: {e}", folder.display())))?;
    let path = folder.join(format!("{name}.json"));
    let json = serde_json::to_vec_pretty(&scenario).unwrap_or_default();
    crate::pairing::write_private_atomic(&path, &json)
        .map_err(|e| SaveError::Store(format!("cannot write {}: {e}", path.display())))?;
    write_index(dir).map_err(SaveError::Store)?;
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
        missing,
    })
}

/// [`save`] on a blocking thread: opening the secrets store may wait up to 10 s for the OS
/// keyring, which must not stall a worker of the async runtime.
pub async fn save_off_runtime(dir: PathBuf, request: SaveRequest) -> Result<Saved, SaveError> {
    tokio::task::spawn_blocking(move || save(&dir, &request))
        .await
        .unwrap_or_else(|e| Err(SaveError::Store(format!("saving stopped: {e}"))))
}

/// The version of `scenarios/index.json`'s shape. Before it had one, the index was a bare
/// array of summaries (Kapture never reads it back; [`Index::parse`] reads both).
pub const INDEX_VERSION: u32 = 2;

/// `scenarios/index.json`, for people and other tools (Kapture itself reads the scenario
/// files): rewritten after each change.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    pub version: u32,
    /// When it was written, RFC 3339 in UTC.
    pub last_updated: String,
    pub stats: IndexStats,
    pub scenarios: Vec<ScenarioSummary>,
}

/// Counts over the saved scenarios.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IndexStats {
    pub scenarios: usize,
    pub steps: usize,
    pub with_dependencies: usize,
    pub with_secrets: usize,
    /// Files in the folder that do not read as a scenario (listed by scenario_list).
    pub unreadable: usize,
}

impl IndexStats {
    /// The counts over `scenarios`, besides `unreadable` files that are none.
    fn of(scenarios: &[ScenarioSummary], unreadable: usize) -> IndexStats {
        IndexStats {
            scenarios: scenarios.len(),
            steps: scenarios.iter().map(|s| s.steps).sum(),
            with_dependencies: scenarios
                .iter()
                .filter(|s| !s.dependencies.is_empty())
                .count(),
            with_secrets: scenarios.iter().filter(|s| !s.secrets.is_empty()).count(),
            unreadable,
        }
    }
}

impl Index {
    /// The index of the scenarios in `dir` as they are now.
    fn of(dir: &Path) -> Index {
        let all = list(dir, &Filter::default());
        let scenarios: Vec<ScenarioSummary> = all
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .map(Scenario::summary)
            .collect();
        Index {
            version: INDEX_VERSION,
            last_updated: now_rfc3339(),
            stats: IndexStats::of(&scenarios, all.len() - scenarios.len()),
            scenarios,
        }
    }

    /// Read an index of any version: a bare array (version 1) becomes an index of no
    /// known update time, its stats counted again.
    pub fn parse(bytes: &[u8]) -> Result<Index, serde_json::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum AnyIndex {
            Current(Index),
            Bare(Vec<ScenarioSummary>),
        }
        Ok(match serde_json::from_slice(bytes)? {
            AnyIndex::Current(index) => index,
            AnyIndex::Bare(scenarios) => Index {
                version: 1,
                last_updated: String::new(),
                stats: IndexStats::of(&scenarios, 0),
                scenarios,
            },
        })
    }
}

/// Now, as RFC 3339 in UTC to the second (`2026-11-28T14:02:03Z`).
fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The OS account kapture runs as: a saved scenario's author when none is given.
fn os_account() -> String {
    ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_default()
}

/// Rewrite `scenarios/index.json` after a change.
fn write_index(dir: &Path) -> Result<(), String> {
    let path = dir.join("scenarios").join(INDEX);
    let json = serde_json::to_vec_pretty(&Index::of(dir)).unwrap_or_default();
    crate::pairing::write_private_atomic(&path, &json)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The summaries of the saved scenarios, for suggestions.
pub fn summaries(dir: &Path) -> Vec<ScenarioSummary> {
    list(dir, &Filter::default())
        .into_iter()
        .filter_map(Result::ok)
        .map(|s| s.summary())
        .collect()
}

const INDEX: &str = "index.json";

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

/// A scenario as the model may see it: parameters say whether they have a recorded default,
/// never its value (what a person typed while recording; replay still uses it).
pub fn for_model(s: &Scenario) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    let params = v
        .get_mut("parameters")
        .and_then(serde_json::Value::as_array_mut);
    for p in params.into_iter().flatten() {
        if let Some(obj) = p.as_object_mut() {
            if obj.remove("default").is_some_and(|d| !d.is_null()) {
                obj.insert("hasRecordedDefault".into(), serde_json::Value::Bool(true));
            }
        }
    }
    v
}

/// Which saved scenarios to list.
#[derive(Debug, Default)]
pub struct Filter<'a> {
    /// Mentioned in the name, title, description or tags (any case).
    pub search: Option<&'a str>,
    /// Carries every one of these tags.
    pub tags: &'a [String],
    /// Has dependencies (true) or none (false).
    pub has_dependencies: Option<bool>,
}

impl Filter<'_> {
    fn keeps(&self, s: &Scenario) -> bool {
        let q = self.search.map(str::to_lowercase);
        let mentions = |q: &str| {
            [&s.name, &s.title, &s.description]
                .iter()
                .any(|t| t.to_lowercase().contains(q))
                || s.tags.iter().any(|t| t.to_lowercase().contains(q))
        };
        q.as_deref().is_none_or(mentions)
            && self
                .tags
                .iter()
                .all(|t| s.tags.iter().any(|have| have.eq_ignore_ascii_case(t)))
            && self
                .has_dependencies
                .is_none_or(|want| want != s.dependencies.is_empty())
    }
}

/// The saved scenarios `filter` keeps, by name; an unreadable file is listed as an error.
pub fn list(dir: &Path, filter: &Filter) -> Vec<Result<Scenario, String>> {
    let Ok(entries) = std::fs::read_dir(dir.join("scenarios")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .filter(|n| *n != INDEX.trim_end_matches(".json"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| get(dir, n))
        .filter(|r| match r {
            Ok(s) => filter.keeps(s),
            Err(_) => true,
        })
        .collect()
}

/// Leave to change what kapture keeps on an agent's behalf: made only where the gate let a
/// `kapture.store_write` through (`KaptureServer::judge_store_write`), so a tool that would
/// write without asking the policy does not compile.
pub struct WriteAllowed(());

impl WriteAllowed {
    /// The gate's leave, from its answer to the write it judged.
    pub(crate) fn from_gate(_: ext_core::methods::StoreWritten) -> WriteAllowed {
        WriteAllowed(())
    }

    /// Leave for a unit test of a store, where no gate runs.
    #[cfg(test)]
    pub(crate) fn for_tests() -> WriteAllowed {
        WriteAllowed(())
    }
}

/// Remove a scenario and its sealed secrets.
pub fn delete(dir: &Path, name: &str, _: WriteAllowed) -> Result<(), String> {
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
    write_index(dir)
}

#[cfg(test)]
mod tests {
    use ext_core::methods::RecorderState;
    use ext_core::recorder::draft::SaveChoices;
    use ext_core::recorder::{ElementDescriptor, RecordedStep};

    use super::*;

    fn request(name: &str, state: &RecorderState) -> SaveRequest {
        SaveRequest {
            choices: SaveChoices {
                name: name.into(),
                title: "Log in".into(),
                tags: vec!["Auth".into()],
                ..Default::default()
            },
            recording: state.clone(),
        }
    }

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
        let saved = save(dir.path(), &request("login", &state)).unwrap();
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
        assert!(save(dir.path(), &request("../evil", &state)).is_err());
        // A second save under the same name replaces nothing.
        let mut other = state.clone();
        other.steps.truncate(1);
        let again = save(dir.path(), &request("login", &other)).unwrap_err();
        assert!(matches!(again, SaveError::Exists(_)), "{again}");
        assert_eq!(again.wire("kept").code, ErrorCode::BadArgs);
        assert!(again.to_string().contains("scenario_delete"), "{again}");
        assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), text);
        assert_eq!(
            store.load("login").unwrap().unwrap()["password"],
            "Canary-123"
        );

        assert_eq!(get(dir.path(), "login").unwrap().title, "Log in");
        let shown = for_model(&get(dir.path(), "login").unwrap()).to_string();
        assert!(
            !shown.contains("shoes") && shown.contains("\"hasRecordedDefault\":true"),
            "{shown}"
        );
        assert!(get(dir.path(), "nope")
            .unwrap_err()
            .contains("scenario_list"));
        assert!(get(dir.path(), "../login").is_err());
        let search = |q| Filter {
            search: Some(q),
            ..Default::default()
        };
        assert_eq!(list(dir.path(), &search("LOG")).len(), 1);
        assert!(list(dir.path(), &search("checkout")).is_empty());
        let tags = ["auth".to_string()];
        let tagged = Filter {
            tags: &tags,
            ..Default::default()
        };
        assert_eq!(list(dir.path(), &tagged).len(), 1);
        let with_deps = Filter {
            has_dependencies: Some(true),
            ..Default::default()
        };
        assert!(list(dir.path(), &with_deps).is_empty());
        let index = std::fs::read_to_string(dir.path().join("scenarios/index.json")).unwrap();
        assert!(
            index.contains("\"logsIn\": true") && !index.contains("Canary"),
            "{index}"
        );
        let parsed = Index::parse(index.as_bytes()).unwrap();
        assert_eq!(parsed.version, INDEX_VERSION);
        assert_eq!(parsed.stats.scenarios, 1);
        assert_eq!(parsed.stats.steps, 4);
        assert_eq!(parsed.stats.with_secrets, 1);
        assert!(parsed.last_updated.ends_with('Z'), "{index}");
        // The file carries who saved it and when, and where it starts.
        let saved_file: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(saved_file["version"], ext_core::scenario::FORMAT_VERSION);
        assert_eq!(saved_file["startUrl"], "http://127.0.0.1:1/login.html");
        assert!(saved_file["recordedAt"].as_str().unwrap().ends_with('Z'));
        assert_eq!(saved_file["parameters"][2]["type"], "string");
        assert_eq!(saved_file["parameters"][2]["required"], false);
        assert_eq!(summaries(dir.path())[0].name, "login");
        delete(dir.path(), "login", WriteAllowed(())).unwrap();
        assert!(list(dir.path(), &Filter::default()).is_empty());
        let emptied = std::fs::read(dir.path().join("scenarios/index.json")).unwrap();
        assert_eq!(Index::parse(&emptied).unwrap().stats, IndexStats::default());
        assert!(
            store.load("login").unwrap().is_none(),
            "its secrets went too"
        );
        assert!(delete(dir.path(), "login", WriteAllowed(())).is_err());
    }

    #[test]
    fn an_index_written_as_a_bare_array_still_reads() {
        let old = br#"[{"name": "login", "steps": 4, "secrets": ["password"]},
                      {"name": "buy", "steps": 2, "dependencies": ["login"]}]"#;
        let index = Index::parse(old).unwrap();
        assert_eq!(index.version, 1);
        assert_eq!(index.scenarios[1].name, "buy");
        assert_eq!(
            index.stats,
            IndexStats {
                scenarios: 2,
                steps: 6,
                with_dependencies: 1,
                with_secrets: 1,
                unreadable: 0
            }
        );
    }
}
