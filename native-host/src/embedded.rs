//! The extension this binary carries (embedded by build.rs), written out to kapture's data
//! folder on first use: one folder per content (`extension/<version>-<hash>`), checked file
//! by file on every use, rewritten whole when it differs, moved into place only complete.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

mod carried {
    include!(concat!(env!("OUT_DIR"), "/embedded_extension.rs"));
}

/// The panel's tool list, written by kapture itself (it has the list): never embedded stale.
pub const TOOLS_FILE: &str = "tools.json";

#[derive(Debug, thiserror::Error)]
#[error("cannot write the extension this kapture carries into {path}: {source} (pass --data-dir with a writable folder, or --extension-dir)")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// An unpacked extension's files: `/`-separated paths relative to its root, and bytes.
#[derive(Debug, Clone)]
pub struct Files {
    files: Vec<(String, Cow<'static, [u8]>)>,
}

impl Files {
    /// What this binary carries, with `tools_json` added; `None` when it was built without
    /// the extension (a debug build before the extension was).
    pub fn carried(tools_json: Vec<u8>) -> Option<Files> {
        if carried::FILES.is_empty() {
            return None;
        }
        let mut files: Vec<(String, Cow<'static, [u8]>)> = carried::FILES
            .iter()
            .map(|(rel, bytes)| (rel.to_string(), Cow::Borrowed(*bytes)))
            .collect();
        files.push((TOOLS_FILE.to_string(), Cow::Owned(tools_json)));
        Some(Files::new(files))
    }

    pub fn new(mut files: Vec<(String, Cow<'static, [u8]>)>) -> Files {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Files { files }
    }

    /// The folder name: the manifest's version and the first 64 bits of a hash over every
    /// path and content, so two builds never share a folder.
    pub fn folder_name(&self) -> String {
        let mut hash = Sha256::new();
        for (rel, bytes) in &self.files {
            hash.update((rel.len() as u64).to_le_bytes());
            hash.update(rel.as_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        }
        let digest = hash.finalize();
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("{}-{hex}", self.version())
    }

    /// The version its manifest.json says ("0" when it says none).
    fn version(&self) -> String {
        self.files
            .iter()
            .find(|(rel, _)| rel == "manifest.json")
            .and_then(|(_, bytes)| serde_json::from_slice::<serde_json::Value>(bytes).ok())
            .and_then(|m| m.get("version")?.as_str().map(str::to_string))
            .filter(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.') && !v.is_empty())
            .unwrap_or_else(|| "0".to_string())
    }

    /// The folder under `root` holding exactly these files: reused when every file is there
    /// with its content and nothing else is, else written anew (a partial or changed folder
    /// is replaced, never patched).
    pub fn write_out(&self, root: &Path) -> Result<PathBuf, WriteError> {
        let dir = root.join(self.folder_name());
        if self.is_in(&dir) {
            return Ok(dir);
        }
        let at = |path: &Path| {
            let path = path.to_path_buf();
            move |source: std::io::Error| WriteError { path, source }
        };
        std::fs::create_dir_all(root).map_err(at(root))?;
        let partial = tempfile::Builder::new()
            .prefix(".partial-")
            .tempdir_in(root)
            .map_err(at(root))?;
        for (rel, bytes) in &self.files {
            let path = partial.path().join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(at(parent))?;
            }
            std::fs::write(&path, bytes).map_err(at(&path))?;
        }
        if dir.exists() {
            // Changed or incomplete: set aside (a rename, so a browser never sees it half
            // removed), then removed.
            let stale = tempfile::Builder::new()
                .prefix(".stale-")
                .tempdir_in(root)
                .map_err(at(root))?;
            let aside = stale.path().join("old");
            std::fs::rename(&dir, &aside).map_err(at(&dir))?;
        }
        let partial = partial.keep();
        match std::fs::rename(&partial, &dir) {
            Ok(()) => Ok(dir),
            // Another kapture put the same files there first.
            Err(_) if self.is_in(&dir) => {
                let _ = std::fs::remove_dir_all(&partial);
                Ok(dir)
            }
            Err(source) => {
                let _ = std::fs::remove_dir_all(&partial);
                Err(WriteError { path: dir, source })
            }
        }
    }

    /// Does `dir` hold exactly these files, byte for byte?
    fn is_in(&self, dir: &Path) -> bool {
        let all_there = self.files.iter().all(|(rel, bytes)| {
            std::fs::read(dir.join(rel)).is_ok_and(|on_disk| on_disk == **bytes)
        });
        all_there && count_files(dir) == Some(self.files.len())
    }
}

/// How many files are under `dir` (folders walked, not counted); `None` when unreadable.
fn count_files(dir: &Path) -> Option<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let kind = entry.file_type().ok()?;
        if kind.is_dir() {
            n += count_files(&entry.path())?;
        } else {
            n += 1;
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Files {
        Files::new(vec![
            ("manifest.json".into(), Cow::Borrowed(b"{}".as_slice())),
            ("icons/a.png".into(), Cow::Borrowed(b"png".as_slice())),
            (TOOLS_FILE.into(), Cow::Owned(b"[]".to_vec())),
        ])
    }

    #[test]
    fn written_once_then_reused() {
        let root = tempfile::tempdir().unwrap();
        let files = sample();
        let dir = files.write_out(root.path()).unwrap();
        assert_eq!(std::fs::read(dir.join("icons/a.png")).unwrap(), b"png");
        let before = std::fs::metadata(dir.join("manifest.json"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(files.write_out(root.path()).unwrap(), dir);
        let after = std::fs::metadata(dir.join("manifest.json"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after, "a complete folder is not rewritten");
        // Only the folder itself is left: no partial or stale ones.
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_changed_partial_or_padded_folder_is_written_anew() {
        let root = tempfile::tempdir().unwrap();
        let files = sample();
        let dir = files.write_out(root.path()).unwrap();
        std::fs::write(dir.join("manifest.json"), b"{\"evil\":1}").unwrap();
        assert_eq!(files.write_out(root.path()).unwrap(), dir);
        assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), b"{}");
        std::fs::remove_file(dir.join("icons/a.png")).unwrap();
        files.write_out(root.path()).unwrap();
        assert!(dir.join("icons/a.png").is_file());
        std::fs::write(dir.join("extra.js"), b"x").unwrap();
        files.write_out(root.path()).unwrap();
        assert!(!dir.join("extra.js").exists());
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
    }

    #[test]
    fn other_content_gets_another_folder() {
        let mut other = sample();
        other.files[0].1 = Cow::Owned(b"[1]".to_vec());
        assert_ne!(sample().folder_name(), other.folder_name());
        assert!(sample().folder_name().starts_with("0-"), "no version: 0");
        let versioned = Files::new(vec![(
            "manifest.json".into(),
            Cow::Borrowed(br#"{"version": "1.2.3"}"#.as_slice()),
        )]);
        assert!(versioned.folder_name().starts_with("1.2.3-"));
    }
}
