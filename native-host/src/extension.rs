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
    #[error("cannot write the extension without the debugger: {0}")]
    Variant(String),
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

/// The folder, under kapture's data folder, of the extension without the debugger.
pub const WITHOUT_DEBUGGER_DIR: &str = "extension-without-debugger";

/// The manifest of the extension without the `debugger` permission: reduced mode, which
/// reaches pages through `chrome.scripting` (so it asks for that and for every site
/// instead). The same `key`, so the same id: native messaging and pairing are unchanged.
/// `debugger` is not made optional: Chrome refuses it there ("cannot be optional") and
/// would flag the copy with a manifest warning.
pub fn manifest_without_debugger(manifest: &[u8]) -> Result<Vec<u8>, ExtensionError> {
    let bad = |why: String| ExtensionError::Variant(format!("manifest.json: {why}"));
    let mut m: serde_json::Value =
        serde_json::from_slice(manifest).map_err(|e| bad(e.to_string()))?;
    let object = m
        .as_object_mut()
        .ok_or_else(|| bad("not an object".into()))?;
    let mut permissions: Vec<serde_json::Value> = object
        .get("permissions")
        .and_then(|p| p.as_array())
        .cloned()
        .unwrap_or_default();
    permissions.retain(|p| p != "debugger");
    if !permissions.iter().any(|p| p == "scripting") {
        permissions.push("scripting".into());
    }
    object.insert("permissions".into(), permissions.into());
    object.insert("host_permissions".into(), serde_json::json!(["<all_urls>"]));
    object.insert(
        "description".into(),
        "Kapture in reduced mode, without the debugger permission: navigate, snapshot, click and type for an AI agent through the kapture MCP server.".into(),
    );
    let mut out = serde_json::to_vec_pretty(&m).map_err(|e| bad(e.to_string()))?;
    out.push(b'\n');
    Ok(out)
}

/// Write the extension at `full` again without the debugger permission, under
/// `<data_dir>/extension-without-debugger/` (one folder per content, as the carried one);
/// its folder.
pub fn write_without_debugger(full: &Path, data_dir: &Path) -> Result<PathBuf, ExtensionError> {
    let mut files = Vec::new();
    read_tree(full, "", &mut files, 0)
        .map_err(|e| ExtensionError::Variant(format!("{}: {e}", full.display())))?;
    for (rel, bytes) in &mut files {
        if rel == "manifest.json" {
            *bytes = std::borrow::Cow::Owned(manifest_without_debugger(bytes)?);
        }
    }
    let files = crate::embedded::Files::new(files);
    Ok(files.write_out(&data_dir.join(WITHOUT_DEBUGGER_DIR))?)
}

/// An extension folder's files, `/`-separated from its root (a few levels deep at most).
fn read_tree(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, std::borrow::Cow<'static, [u8]>)>,
    depth: usize,
) -> std::io::Result<()> {
    if depth > 4 {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let rel = format!("{prefix}{name}");
        if entry.file_type()?.is_dir() {
            read_tree(&entry.path(), &format!("{rel}/"), out, depth + 1)?;
        } else {
            out.push((rel, std::borrow::Cow::Owned(std::fs::read(entry.path())?)));
        }
    }
    Ok(())
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
    fn the_copy_without_the_debugger_keeps_the_id_and_asks_for_scripting() {
        let full = std::fs::read("../extension-shell/manifest.json").unwrap();
        let reduced: serde_json::Value =
            serde_json::from_slice(&manifest_without_debugger(&full).unwrap()).unwrap();
        let full: serde_json::Value = serde_json::from_slice(&full).unwrap();
        assert_eq!(reduced["key"], full["key"]);
        let permissions = reduced["permissions"].as_array().unwrap();
        assert!(!permissions.iter().any(|p| p == "debugger"));
        assert!(permissions.iter().any(|p| p == "scripting"));
        assert!(permissions.iter().any(|p| p == "nativeMessaging"));
        assert_eq!(
            reduced["host_permissions"],
            serde_json::json!(["<all_urls>"])
        );
        assert!(reduced.get("optional_permissions").is_none());

        // Written from a folder: every file kept, the manifest replaced, a folder of its own.
        let dir = tempfile::tempdir().unwrap();
        let built = dir.path().join("built");
        std::fs::create_dir_all(built.join("icons")).unwrap();
        std::fs::write(
            built.join("manifest.json"),
            serde_json::to_vec(&full).unwrap(),
        )
        .unwrap();
        std::fs::write(built.join("icons/16.png"), b"png").unwrap();
        let out = write_without_debugger(&built, dir.path()).unwrap();
        assert!(out.starts_with(dir.path().join(WITHOUT_DEBUGGER_DIR)));
        assert_eq!(std::fs::read(out.join("icons/16.png")).unwrap(), b"png");
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(written, reduced);
    }

    #[test]
    fn bad_keys_are_errors() {
        assert!(id_from_key("not base64!").is_err());
    }
}
