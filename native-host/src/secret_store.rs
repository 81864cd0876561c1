//! The encrypted store of scenario secrets: `secrets/<name>.json`, each sealed with
//! XChaCha20-Poly1305 under a key kept in a 0600 file beside them. Writes are atomic and
//! private; a file that does not open is an error naming it, never overwritten, never read
//! as plain text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};

use crate::pairing::write_private_atomic;

const KEY_FILE: &str = "key";
const FORMAT: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum SecretStoreError {
    #[error("{0:?} is not a valid secrets name (letters, digits, - and _)")]
    BadName(String),
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} cannot be opened ({why}); it was left as it is")]
    Unreadable { path: PathBuf, why: String },
    #[error("no random numbers from the OS: {0}")]
    Random(String),
    #[error("cannot seal the secrets of {0:?}")]
    Seal(String),
}

/// A sealed secrets file as it sits on disk.
#[derive(Serialize, Deserialize)]
struct Sealed {
    v: u32,
    nonce: String,
    data: String,
}

/// The store in one folder.
pub struct SecretStore {
    dir: PathBuf,
    cipher: XChaCha20Poly1305,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SecretStoreError + '_ {
    move |source| SecretStoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn random<const N: usize>() -> Result<[u8; N], SecretStoreError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| SecretStoreError::Random(e.to_string()))?;
    Ok(bytes)
}

impl SecretStore {
    /// Open the store in `dir`, making the folder and its key on first use.
    pub fn open(dir: &Path) -> Result<SecretStore, SecretStoreError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let key_path = dir.join(KEY_FILE);
        let key = match std::fs::read(&key_path) {
            Ok(bytes) if bytes.len() == 32 => bytes,
            Ok(_) => {
                return Err(SecretStoreError::Unreadable {
                    path: key_path,
                    why: "the key is not 32 bytes".into(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = random::<32>()?;
                write_private_atomic(&key_path, &key).map_err(io(&key_path))?;
                key.to_vec()
            }
            Err(e) => return Err(io(&key_path)(e)),
        };
        let cipher =
            XChaCha20Poly1305::new_from_slice(&key).map_err(|_| SecretStoreError::Unreadable {
                path: key_path.clone(),
                why: "the key is not usable".into(),
            })?;
        Ok(SecretStore {
            dir: dir.to_path_buf(),
            cipher,
        })
    }

    fn path(&self, name: &str) -> Result<PathBuf, SecretStoreError> {
        if name == KEY_FILE || !ext_core::scenario::is_valid_name(name) {
            return Err(SecretStoreError::BadName(name.to_string()));
        }
        Ok(self.dir.join(format!("{name}.json")))
    }

    /// Seal and save `values` under `name` (the name is bound into the seal, so a file
    /// renamed to another scenario does not open).
    pub fn save(
        &self,
        name: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<(), SecretStoreError> {
        let path = self.path(name)?;
        let plain = serde_json::to_vec(values).unwrap_or_default();
        let nonce = random::<24>()?;
        let data = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &plain,
                    aad: name.as_bytes(),
                },
            )
            .map_err(|_| SecretStoreError::Seal(name.to_string()))?;
        let b64 = base64::engine::general_purpose::STANDARD;
        let sealed = Sealed {
            v: FORMAT,
            nonce: b64.encode(nonce),
            data: b64.encode(data),
        };
        let json = serde_json::to_vec(&sealed).unwrap_or_default();
        write_private_atomic(&path, &json).map_err(io(&path))
    }

    /// The values saved under `name`; `None` when there are none.
    pub fn load(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, SecretStoreError> {
        let path = self.path(name)?;
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let unreadable = |why: &str| SecretStoreError::Unreadable {
            path: path.clone(),
            why: why.to_string(),
        };
        let sealed: Sealed =
            serde_json::from_slice(&text).map_err(|_| unreadable("not a sealed secrets file"))?;
        if sealed.v != FORMAT {
            return Err(unreadable("an unknown format version"));
        }
        let b64 = base64::engine::general_purpose::STANDARD;
        let nonce = b64
            .decode(&sealed.nonce)
            .ok()
            .filter(|n| n.len() == 24)
            .ok_or_else(|| unreadable("a damaged nonce"))?;
        let data = b64
            .decode(&sealed.data)
            .map_err(|_| unreadable("damaged data"))?;
        let plain = self
            .cipher
            .decrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: &data,
                    aad: name.as_bytes(),
                },
            )
            .map_err(|_| unreadable("it does not decrypt with this key"))?;
        serde_json::from_slice(&plain)
            .map(Some)
            .map_err(|_| unreadable("the decrypted content is not secrets"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CANARY: &str = "Kapture-Canary-Pa55word!";

    fn values() -> BTreeMap<String, String> {
        [
            ("password".to_string(), CANARY.to_string()),
            ("email".to_string(), "ada@example.com".to_string()),
        ]
        .into()
    }

    #[test]
    fn secrets_round_trip_and_nothing_on_disk_shows_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::open(dir.path()).unwrap();
        store.save("login", &values()).unwrap();
        assert_eq!(store.load("login").unwrap(), Some(values()));
        assert_eq!(store.load("nothing").unwrap(), None);
        // A second opening uses the same key.
        let again = SecretStore::open(dir.path()).unwrap();
        assert_eq!(again.load("login").unwrap(), Some(values()));

        let b64 = base64::engine::general_purpose::STANDARD;
        let hex: String = CANARY.bytes().map(|b| format!("{b:02x}")).collect();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes).to_lowercase();
            for needle in [
                CANARY.to_lowercase(),
                b64.encode(CANARY).to_lowercase(),
                hex.clone(),
            ] {
                assert!(
                    !text.contains(&needle),
                    "{} shows the secret",
                    path.display()
                );
            }
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", path.display());
            }
        }
    }

    #[test]
    fn a_damaged_renamed_or_foreign_file_is_an_error_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::open(dir.path()).unwrap();
        store.save("login", &values()).unwrap();
        let path = dir.path().join("login.json");

        // Renamed to another scenario: the name is sealed in.
        std::fs::copy(&path, dir.path().join("checkout.json")).unwrap();
        assert!(matches!(
            store.load("checkout"),
            Err(SecretStoreError::Unreadable { .. })
        ));

        // One flipped byte in the data.
        let mut sealed: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let data = sealed["data"].as_str().unwrap().to_string();
        let flipped = if data.starts_with('A') { "B" } else { "A" };
        sealed["data"] = format!("{flipped}{}", &data[1..]).into();
        let damaged = serde_json::to_vec(&sealed).unwrap();
        std::fs::write(&path, &damaged).unwrap();
        let err = store.load("login").unwrap_err();
        assert!(err.to_string().contains("login.json"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), damaged, "never overwritten");

        // Plain JSON is not accepted as secrets.
        std::fs::write(&path, br#"{"password":"plain"}"#).unwrap();
        assert!(store.load("login").is_err());

        // Another store's key cannot open it.
        let other = tempfile::tempdir().unwrap();
        let foreign = SecretStore::open(other.path()).unwrap();
        foreign.save("login", &values()).unwrap();
        std::fs::copy(other.path().join("login.json"), &path).unwrap();
        assert!(store.load("login").is_err());

        for bad in ["", "../x", "a/b", "key", "white space"] {
            assert!(matches!(
                store.save(bad, &values()),
                Err(SecretStoreError::BadName(_))
            ));
        }
    }
}
