//! The audit journal: one JSON line per tool call (who, tool, arguments with secrets masked,
//! the tab and page it ended on, status, duration) appended by one writer task, rotated by
//! size, readable back with `browser_audit`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A journal file grows to this size, then becomes `audit.1.jsonl` (one old file is kept),
/// unless the policy file says otherwise ([`Retention`]).
pub const ROTATE_BYTES: u64 = 10 << 20;

/// How much of the journal is kept: the current file rotates at `max_bytes`, and `keep`
/// rotated files (`audit.1.jsonl` newest … `audit.<keep>.jsonl` oldest) stay beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub max_bytes: u64,
    pub keep: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_bytes: ROTATE_BYTES,
            keep: 1,
        }
    }
}
/// Entries waiting to be written; a full queue drops the entry (logged), never blocks a call.
const QUEUE: usize = 1024;

/// One audited call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// ms since the epoch.
    pub time: u64,
    /// `mcp:<client name>`.
    pub who: String,
    /// The MCP session that made the call (`<kapture run>/<session>`), when one did: a
    /// session reads back its own entries only, unless the policy shares tabs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub tool: String,
    /// Arguments with secret-looking values masked.
    pub args: Value,
    /// The page the call ended on, when the answer says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The origin of that page, as the extension reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// What the policy said: `allowed`, `denied by policy`, `not approved`, or for a
    /// person's answer to an approval `ask: once|origin|deny|timeout`.
    pub verdict: String,
    /// ok, an error code, or `protocol` for a refused request.
    pub status: String,
    pub ms: u64,
}

/// What of an entry the exit masks: what a page, a client or an agent could have chosen (the
/// arguments, the page, the origin, who called); kapture's own keys (session, tool, verdict,
/// status) stay as they are, for reading the journal back.
impl crate::egress::Journaled for Entry {
    fn texts(&mut self) -> Vec<&mut String> {
        let mut texts = vec![&mut self.who];
        texts.extend(self.page.as_mut());
        texts.extend(self.origin.as_mut());
        texts
    }

    fn values(&mut self) -> Vec<&mut Value> {
        vec![&mut self.args]
    }
}

enum Msg {
    Append(Entry),
    Read {
        max: usize,
        reply: oneshot::Sender<Vec<Entry>>,
    },
}

/// Clonable handle to the journal writer.
#[derive(Clone)]
pub struct Audit {
    tx: mpsc::Sender<Msg>,
    path: PathBuf,
}

/// The default journal folder: the user's data folder, `kapture`.
pub fn default_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("kapture")
}

impl Audit {
    /// Start the writer for `dir/audit.jsonl`, kept as [`Retention::default`] says.
    pub fn start(dir: &Path) -> std::io::Result<Audit> {
        Self::start_keeping(dir, Retention::default())
    }

    /// Start the writer for `dir/audit.jsonl`, kept as `retention` says.
    pub fn start_keeping(dir: &Path, retention: Retention) -> std::io::Result<Audit> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("audit.jsonl");
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(path.clone(), retention, rx));
        Ok(Audit { tx, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queue an entry (only what went through the exit, `egress`); never waits.
    pub fn record(&self, entry: crate::egress::Masked<Entry>) {
        if self.tx.try_send(Msg::Append(entry.into_inner())).is_err() {
            tracing::warn!("the audit journal is behind; an entry was dropped");
        }
    }

    /// The newest `max` entries, newest first (after everything queued before was written).
    pub async fn recent(&self, max: usize) -> Vec<Entry> {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(Msg::Read { max, reply }).await.is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }
}

async fn run(path: PathBuf, retention: Retention, mut rx: mpsc::Receiver<Msg>) {
    while let Some(msg) = rx.recv().await {
        match msg {
            Msg::Append(entry) => {
                if let Err(e) = append(&path, &entry, retention) {
                    tracing::warn!(error = %e, "cannot write the audit journal");
                }
            }
            Msg::Read { max, reply } => {
                let _ = reply.send(read_recent(&path, max));
            }
        }
    }
}

/// `audit.<n>.jsonl` beside the current file.
fn rotated(path: &Path, n: usize) -> PathBuf {
    path.with_extension(format!("{n}.jsonl"))
}

fn append(path: &Path, entry: &Entry, retention: Retention) -> std::io::Result<()> {
    if std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) >= retention.max_bytes {
        // The oldest goes, the others move up one; none kept: the file starts over.
        if retention.keep == 0 {
            std::fs::remove_file(path)?;
        } else {
            let _ = std::fs::remove_file(rotated(path, retention.keep));
            for n in (1..retention.keep).rev() {
                let _ = std::fs::rename(rotated(path, n), rotated(path, n + 1));
            }
            std::fs::rename(path, rotated(path, 1))?;
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    let mut line = serde_json::to_vec(entry).unwrap_or_default();
    line.push(b'\n');
    file.write_all(&line)
}

fn read_recent(path: &Path, max: usize) -> Vec<Entry> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str(l).ok())
        .take(max)
        .collect()
}

/// The policy's verdict as a call's status shows it.
pub fn verdict_of(status: &str) -> &'static str {
    match status {
        "POLICY_DENIED" => "denied by policy",
        "APPROVAL_DENIED" => "not approved",
        _ => "allowed",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entry(i: u64) -> Entry {
        Entry {
            session: None,
            time: i,
            who: "mcp:test".into(),
            tool: "browser_click".into(),
            args: json!({}),
            page: None,
            origin: None,
            verdict: "allowed".into(),
            status: "ok".into(),
            ms: 1,
        }
    }

    #[tokio::test]
    async fn entries_are_appended_and_read_back_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let audit = Audit::start(dir.path()).unwrap();
        for i in 0..5 {
            audit.record(crate::egress::Exit::new(vec![], vec![]).entry(entry(i)));
        }
        let recent = audit.recent(3).await;
        assert_eq!(recent.iter().map(|e| e.time).collect::<Vec<_>>(), [4, 3, 2]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(audit.path())
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777,
                0o600
            );
        }
    }

    #[test]
    fn a_full_file_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, vec![b'x'; ROTATE_BYTES as usize]).unwrap();
        append(&path, &entry(1), Retention::default()).unwrap();
        assert!(dir.path().join("audit.1.jsonl").is_file());
        assert_eq!(read_recent(&path, 10).len(), 1);
    }

    #[test]
    fn retention_keeps_as_many_old_files_as_the_policy_says() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let keep = Retention {
            max_bytes: 10,
            keep: 2,
        };
        for i in 0..5 {
            append(&path, &entry(i), keep).unwrap();
        }
        assert!(rotated(&path, 1).is_file() && rotated(&path, 2).is_file());
        assert!(!rotated(&path, 3).exists());
        assert_eq!(read_recent(&rotated(&path, 1), 1)[0].time, 3);
        assert_eq!(read_recent(&rotated(&path, 2), 1)[0].time, 2);
        let none = Retention {
            max_bytes: 10,
            keep: 0,
        };
        append(&path, &entry(9), none).unwrap();
        assert_eq!(read_recent(&path, 10).len(), 1);
    }
}
