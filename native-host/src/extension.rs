//! Where the built extension lives and which id it has. The id is derived from the `key`
//! pinned in the shipped manifest, so the bridge's Origin check and the native-messaging
//! `allowed_origins` always name the same extension as the one that is built, and the one
//! the binary carries (`embedded`) and writes out.

use std::path::{Path, PathBuf};

use base64::Engine;
use sha2::{Digest, Sha256};

/// The manifest the extension is built from.
const MANIFEST: &str = include_str!("../../extension-shell/manifest.json");

#[derive(Debug, thiserror::Error)]
pub enum ExtensionError {
    #[error("the extension manifest has no usable \"key\": {0}")]
    BadKey(String),
    #[error("the built extension was not found (looked in {looked}) and this kapture was built without it; build it with `cargo make build` or pass --extension-dir")]
    NotBuilt { looked: String },
    #[error(transparent)]
    Write(#[from] crate::embedded::WriteError),
}

/// The Chrome extension id for a manifest `key` (base64 DER public key): the first 128 bits
/// of its SHA-256, written with the letters a–p.
pub fn id_from_key(key_b64: &str) -> Result<String, ExtensionError> {
    let der = base64::engine::general_purpose::STANDARD
        .decode(key_b64.trim())
        .map_err(|e| ExtensionError::BadKey(e.to_string()))?;
    let digest = Sha256::digest(&der);
    Ok(digest[..16]
        .iter()
        .flat_map(|b| [b >> 4, b & 0x0f])
        .map(|nibble| char::from(b'a' + nibble))
        .collect())
}

/// The id of the extension this binary was built with.
pub fn extension_id() -> Result<String, ExtensionError> {
    let manifest: serde_json::Value =
        serde_json::from_str(MANIFEST).map_err(|e| ExtensionError::BadKey(e.to_string()))?;
    let key = manifest
        .get("key")
        .and_then(|k| k.as_str())
        .ok_or_else(|| ExtensionError::BadKey("missing".into()))?;
    id_from_key(key)
}

/// The Origin the extension's WebSocket carries.
pub fn origin(id: &str) -> String {
    format!("chrome-extension://{id}")
}

/// The version of the extension this binary was built with.
pub fn extension_version() -> String {
    serde_json::from_str::<serde_json::Value>(MANIFEST)
        .ok()
        .and_then(|m| {
            m.get("version")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default()
}

fn is_built(dir: &Path) -> bool {
    dir.join("manifest.json").is_file() && dir.join("ext_core_bg.wasm").is_file()
}

/// The unpacked extension to load: `explicit`, else `$KAPTURE_EXTENSION_DIR`, else
/// `extension/` beside the binary's folder (a build tree: `target/debug/kapture` →
/// `target/extension`), else the one this binary carries, written out under
/// `<data_dir>/extension/` with `tools_json` (the panel's tool list).
pub fn locate_or_write(
    explicit: Option<&Path>,
    data_dir: &Path,
    tools_json: impl FnOnce() -> Vec<u8>,
) -> Result<PathBuf, ExtensionError> {
    match locate(explicit) {
        Err(ExtensionError::NotBuilt { looked }) if explicit.is_none() => {
            match crate::embedded::Files::carried(tools_json()) {
                Some(files) => Ok(files.write_out(&data_dir.join("extension"))?),
                None => Err(ExtensionError::NotBuilt { looked }),
            }
        }
        found => found,
    }
}

/// Find an unpacked extension on disk: `explicit`, else `$KAPTURE_EXTENSION_DIR`, else
/// `extension/` beside the binary's folder (`target/debug/kapture` → `target/extension`).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, ExtensionError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = explicit {
        candidates.push(dir.to_path_buf());
    } else {
        if let Some(dir) = std::env::var_os("KAPTURE_EXTENSION_DIR") {
            candidates.push(PathBuf::from(dir));
        }
        if let Ok(exe) = std::env::current_exe() {
            for ancestor in exe.ancestors().skip(1).take(3) {
                candidates.push(ancestor.join("extension"));
            }
        }
    }
    candidates
        .iter()
        .find(|d| is_built(d))
        .map(|d| d.canonicalize().unwrap_or_else(|_| d.clone()))
        .ok_or_else(|| ExtensionError::NotBuilt {
            looked: candidates
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pinned_id_is_the_one_the_policy_knows() {
        assert_eq!(
            super::origin(&super::extension_id().unwrap()),
            ext_core::policy::frames::KAPTURE_EXTENSION_ORIGIN
        );
    }

    use super::*;

    #[test]
    fn id_is_derived_from_the_pinned_key() {
        let id = extension_id().unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.chars().all(|c| ('a'..='p').contains(&c)));
        // Pinned: changing the manifest key changes every installed host manifest.
        assert_eq!(id, "djjhjaffgifolhomiafbjplbhmfblamg");
    }

    #[test]
    fn bad_keys_are_errors() {
        assert!(id_from_key("not base64!").is_err());
    }
}
