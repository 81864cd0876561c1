//! Manual pairing, where native messaging cannot be registered: `kapture pair` puts a
//! one-time code for a running kapture in its private runtime folder (0600, never the token);
//! a person pastes the code into the extension's options page; the bridge lets a `pair`
//! handshake prove it ([`PairingDoor`]) and answers with the token sealed under it. A code
//! is good for one pairing within [`CODE_LIFETIME`], and void after [`MAX_FAILURES`] wrong
//! proofs; attempts are spaced by [`ATTEMPT_GAP`], so guessing it online is hopeless.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ext_core::handshake::PairingCode;
use serde::{Deserialize, Serialize};

use crate::pairing::{write_private_atomic, PairingError};

/// How long a code from `kapture pair` may be used.
pub const CODE_LIFETIME: Duration = Duration::from_secs(5 * 60);
/// Wrong proofs a code survives; the next one voids it.
pub const MAX_FAILURES: u32 = 5;
/// The least time between two pairing attempts on one kapture.
pub const ATTEMPT_GAP: Duration = Duration::from_secs(1);

/// The pending code's file, as `kapture pair` writes it.
#[derive(Serialize, Deserialize)]
struct CodeFile {
    code: String,
    /// Milliseconds since the Unix epoch.
    expires: u64,
}

/// Where the pending code of the kapture `pid` on `port` is kept.
pub fn code_path(runtime_dir: &Path, pid: u32, port: u16) -> PathBuf {
    runtime_dir.join(format!("pair-{pid}-{port}.json"))
}

/// Make a code for the kapture `pid` on `port` (replacing one still pending); answers it
/// and its lifetime.
pub fn issue(runtime_dir: &Path, pid: u32, port: u16) -> Result<PairingCode, PairingError> {
    crate::pairing::check_private_dir(runtime_dir)?;
    let code = PairingCode::generate(port).map_err(|e| PairingError::Random(e.to_string()))?;
    let file = CodeFile {
        code: code.shown(),
        expires: ext_core::platform::now_ms() as u64 + CODE_LIFETIME.as_millis() as u64,
    };
    let path = code_path(runtime_dir, pid, port);
    let json = serde_json::to_vec(&file).unwrap_or_default();
    write_private_atomic(&path, &json).map_err(|source| PairingError::Write { path, source })?;
    Ok(code)
}

/// Why `kapture pair` showed no code.
#[derive(Debug, thiserror::Error)]
pub enum PairCommandError {
    #[error(transparent)]
    Pairing(#[from] PairingError),
    #[error("no kapture is running (no live handshake file in {0}); start kapture first (your MCP client starts it)")]
    NoServer(String),
    #[error("no running kapture listens on port {0}; running: {1}")]
    NoSuchPort(u16, String),
    #[error("several kaptures are running (ports {0}): say which with --port")]
    Several(String),
    #[error("cannot write to the terminal: {0}")]
    Output(#[from] std::io::Error),
}

/// `kapture pair`: a code for the running kapture (the one on `--port`), on `out`.
pub fn run(
    args: &crate::cli::PairArgs,
    out: &mut impl std::io::Write,
) -> Result<(), PairCommandError> {
    let dir = crate::pairing::runtime_dir(args.runtime_dir.as_deref())?;
    let servers = crate::pairing::live_servers(&dir);
    let ports = || {
        servers
            .iter()
            .map(|s| s.port.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let server = match (args.port, servers.as_slice()) {
        (_, []) => return Err(PairCommandError::NoServer(dir.display().to_string())),
        (Some(port), _) => servers
            .iter()
            .find(|s| s.port == port)
            .ok_or_else(|| PairCommandError::NoSuchPort(port, ports()))?,
        (None, [one]) => one,
        (None, _) => return Err(PairCommandError::Several(ports())),
    };
    let code = issue(&dir, server.pid, server.port)?;
    writeln!(
        out,
        "Pairing code for the kapture on port {} (pid {}):\n\n    {}\n\n\
         Open the Kapture extension's options (chrome://extensions → Kapture → Details → \
         Extension options), paste the code and press Pair. It works once, within {} minutes.",
        server.port,
        server.pid,
        code.shown(),
        CODE_LIFETIME.as_secs() / 60
    )?;
    Ok(())
}

/// The bridge's side: the pending code of this kapture, tried at most once per
/// [`ATTEMPT_GAP`], used once, void after [`MAX_FAILURES`] wrong proofs or when it expires.
#[derive(Debug)]
pub struct PairingDoor {
    path: Option<PathBuf>,
    state: Mutex<DoorState>,
}

#[derive(Debug, Default)]
struct DoorState {
    last_attempt: Option<Instant>,
    /// The code the failures count against, and how many.
    failures: Option<(String, u32)>,
}

impl PairingDoor {
    /// The door of the kapture listening on `port` (`None`: no runtime folder, no pairing).
    pub fn new(runtime_dir: Option<&Path>, port: u16) -> Self {
        Self {
            path: runtime_dir.map(|d| code_path(d, std::process::id(), port)),
            state: Mutex::default(),
        }
    }

    /// The code a pairing attempt is to prove, or why there is none to try now.
    pub fn attempt(&self) -> Result<PairingCode, String> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if state
            .last_attempt
            .is_some_and(|at| now.duration_since(at) < ATTEMPT_GAP)
        {
            return Err("too many pairing attempts: wait a second and try again".into());
        }
        state.last_attempt = Some(now);
        let none = || {
            "no pairing code is pending for this kapture: run `kapture pair` and use the code it shows within 5 minutes".to_string()
        };
        let path = self.path.as_ref().ok_or_else(none)?;
        let file: CodeFile = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(none)?;
        if file.expires <= ext_core::platform::now_ms() as u64 {
            let _ = std::fs::remove_file(path);
            return Err("the pairing code expired: run `kapture pair` again for a new one".into());
        }
        PairingCode::parse(&file.code).map_err(|_| none())
    }

    /// A proof of `code` did not verify: count it; the last allowed failure voids the code.
    pub fn failed(&self, code: &PairingCode) -> String {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let shown = code.shown();
        let count = match &mut state.failures {
            Some((c, n)) if *c == shown => {
                *n += 1;
                *n
            }
            other => {
                *other = Some((shown, 1));
                1
            }
        };
        if count >= MAX_FAILURES {
            self.void();
            state.failures = None;
            tracing::warn!("a pairing code was voided after {MAX_FAILURES} wrong tries");
            return format!("the pairing code does not match; after {MAX_FAILURES} wrong tries it is void: run `kapture pair` for a new one");
        }
        "the pairing code does not match the one `kapture pair` showed for this kapture".into()
    }

    /// The code paired an extension: it is spent.
    pub fn used(&self) {
        self.void();
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .failures = None;
    }

    /// No code is pending any more (used, voided, or the token was rotated).
    pub fn void(&self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn door() -> (tempfile::TempDir, PairingDoor, u16) {
        let dir = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let door = PairingDoor::new(Some(dir.path()), 4242);
        (dir, door, 4242)
    }

    fn wait_gap(door: &PairingDoor) {
        door.state.lock().unwrap().last_attempt = None;
    }

    #[test]
    fn a_code_is_used_once_and_attempts_are_spaced() {
        let (dir, door, port) = door();
        assert!(door.attempt().unwrap_err().contains("kapture pair"));
        wait_gap(&door);
        let code = issue(dir.path(), std::process::id(), port).unwrap();
        let file = std::fs::read_to_string(code_path(dir.path(), std::process::id(), port));
        assert!(file.unwrap().contains(&code.shown()));
        assert_eq!(door.attempt().unwrap(), code);
        // A second try at once: refused without reading the code.
        assert!(door.attempt().unwrap_err().contains("too many"));
        wait_gap(&door);
        door.used();
        assert!(door.attempt().unwrap_err().contains("no pairing code"));
    }

    #[test]
    fn wrong_proofs_void_the_code() {
        let (dir, door, port) = door();
        let code = issue(dir.path(), std::process::id(), port).unwrap();
        for _ in 1..MAX_FAILURES {
            wait_gap(&door);
            let tried = door.attempt().unwrap();
            assert!(door.failed(&tried).contains("does not match"));
        }
        wait_gap(&door);
        let tried = door.attempt().unwrap();
        assert_eq!(tried, code);
        assert!(door.failed(&tried).contains("void"));
        wait_gap(&door);
        assert!(door.attempt().is_err());
    }

    #[test]
    fn an_expired_code_is_refused() {
        let (dir, door, port) = door();
        let path = code_path(dir.path(), std::process::id(), port);
        let file = CodeFile {
            code: PairingCode::generate(port).unwrap().shown(),
            expires: 1,
        };
        write_private_atomic(&path, &serde_json::to_vec(&file).unwrap()).unwrap();
        assert!(door.attempt().unwrap_err().contains("expired"));
        assert!(!path.exists());
    }
}
