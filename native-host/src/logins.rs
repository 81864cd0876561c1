//! Saved logins: a site's cookies and localStorage sealed under a name in
//! `<data>/logins/<name>.json` (kapture's secret store, its own key), loaded back into a
//! tab by `browser_login_load`. Nothing here hands a value to an agent: what is listed is
//! the name, the site, when it was saved and how much it holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use ext_core::methods::LoginState;

use crate::scenarios::WriteAllowed;
use crate::secret_store::{SecretStore, SecretStoreError};

/// The sealed entry holding the state, as JSON.
const STATE: &str = "state";
/// When it was saved, seconds since the Unix epoch.
const SAVED_AT: &str = "savedAt";

/// What a listing shows of one saved login.
#[derive(Debug, Clone, PartialEq)]
pub struct LoginSummary {
    pub name: String,
    pub origin: String,
    pub saved_at: u64,
    pub cookies: usize,
    pub keys: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("{0:?} is not a login name (letters, digits, - and _)")]
    BadName(String),
    #[error("no saved login {name:?}; {known}")]
    Unknown { name: String, known: String },
    #[error(transparent)]
    Store(#[from] SecretStoreError),
    #[error("the saved login {0:?} does not read as one; save it again")]
    Damaged(String),
    #[error("cannot remove {path}: {source}")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn folder(data_dir: &Path) -> PathBuf {
    data_dir.join("logins")
}

/// Whether `name` can name a login.
pub fn check_name(name: &str) -> Result<(), LoginError> {
    checked(name).map(|_| ())
}

fn checked(name: &str) -> Result<&str, LoginError> {
    if ext_core::scenario::is_valid_name(name) {
        Ok(name)
    } else {
        Err(LoginError::BadName(name.to_string()))
    }
}

/// The store, opened off the async runtime (the OS keyring may take a while to answer).
async fn open(data_dir: &Path) -> Result<SecretStore, LoginError> {
    Ok(SecretStore::open_off_runtime(folder(data_dir)).await?)
}

/// Seal `state` under `name`, replacing a login of that name.
pub async fn save(
    data_dir: &Path,
    name: &str,
    state: &LoginState,
    _: WriteAllowed,
) -> Result<(), LoginError> {
    let name = checked(name)?;
    let store = open(data_dir).await?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let values = BTreeMap::from([
        (
            STATE.to_string(),
            serde_json::to_string(state).unwrap_or_default(),
        ),
        (SAVED_AT.to_string(), now.to_string()),
    ]);
    Ok(store.save(name, &values)?)
}

/// The saved login `name` and when it was saved; an unknown name says which are known.
pub async fn load(data_dir: &Path, name: &str) -> Result<(LoginState, u64), LoginError> {
    let name = checked(name)?;
    let store = open(data_dir).await?;
    if let Some(found) = read(&store, name)? {
        return Ok(found);
    }
    let known = names(data_dir);
    let known = if known.is_empty() {
        "none is saved yet: save one with browser_login_save on a signed-in page".into()
    } else {
        format!("saved: {}", known.join(", "))
    };
    Err(LoginError::Unknown {
        name: name.to_string(),
        known,
    })
}

/// One login out of the open store: `None` when there is none of that name.
fn read(store: &SecretStore, name: &str) -> Result<Option<(LoginState, u64)>, LoginError> {
    let Some(values) = store.load(name)? else {
        return Ok(None);
    };
    let state = values
        .get(STATE)
        .and_then(|s| serde_json::from_str::<LoginState>(s).ok())
        .ok_or_else(|| LoginError::Damaged(name.to_string()))?;
    let saved_at = values
        .get(SAVED_AT)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok(Some((state, saved_at)))
}

/// The names of the saved logins, sorted.
fn names(data_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(folder(data_dir)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            file.strip_suffix(".json")
                .filter(|n| ext_core::scenario::is_valid_name(n))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// Every saved login, by name. One that does not open is left out (and left as it is).
pub async fn list(data_dir: &Path) -> Result<Vec<LoginSummary>, LoginError> {
    let names = names(data_dir);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let store = open(data_dir).await?;
    Ok(names
        .into_iter()
        .filter_map(|name| {
            let (state, saved_at) = read(&store, &name).ok()??;
            Some(LoginSummary {
                origin: state.origin,
                saved_at,
                cookies: state.cookies.len(),
                keys: state.local_storage.len(),
                name,
            })
        })
        .collect())
}

/// Remove the saved login `name`.
pub fn delete(data_dir: &Path, name: &str, _: WriteAllowed) -> Result<(), LoginError> {
    let name = checked(name)?;
    let path = folder(data_dir).join(format!("{name}.json"));
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LoginError::Unknown {
            name: name.to_string(),
            known: "nothing was removed".into(),
        }),
        Err(source) => Err(LoginError::Remove { path, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ext_core::methods::SavedCookie;

    fn state() -> LoginState {
        LoginState {
            url: "http://127.0.0.1:8000/app".into(),
            origin: "http://127.0.0.1:8000".into(),
            cookies: vec![SavedCookie {
                name: "sid".into(),
                value: "v4lue-of-the-session".into(),
                domain: "127.0.0.1".into(),
                path: "/".into(),
                ..SavedCookie::default()
            }],
            local_storage: vec![("token".into(), "t0ken".into())],
        }
    }

    #[tokio::test]
    async fn a_login_is_sealed_listed_loaded_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        save(dir.path(), "shop", &state(), WriteAllowed::for_tests())
            .await
            .unwrap();
        let file = std::fs::read_to_string(dir.path().join("logins/shop.json")).unwrap();
        assert!(!file.contains("v4lue") && !file.contains("t0ken"), "sealed");
        let listed = list(dir.path()).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].origin.as_str(), listed[0].cookies, listed[0].keys),
            ("http://127.0.0.1:8000", 1, 1)
        );
        assert_eq!(load(dir.path(), "shop").await.unwrap().0, state());
        let unknown = load(dir.path(), "bank").await.unwrap_err().to_string();
        assert!(unknown.contains("saved: shop"), "{unknown}");
        delete(dir.path(), "shop", WriteAllowed::for_tests()).unwrap();
        assert!(list(dir.path()).await.unwrap().is_empty());
        assert!(load(dir.path(), "../x").await.is_err(), "names are checked");
    }
}
