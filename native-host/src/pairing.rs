//! Pairing: the per-boot bridge token and the handshake files through which the extension
//! (via the native-messaging face) learns which servers run, on which port, with which token.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ext_core::protocol::{ServerEntry, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("cannot use the runtime directory {path}: {source}")]
    RuntimeDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the handshake file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

/// The bridge secret: 256 bits from the OS, fresh each boot. Never printed: `Debug` and
/// `Display` show a placeholder; only [`Token::expose`] gives the value, for the 0600 file.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    pub fn generate() -> Result<Self, PairingError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| PairingError::Random(e.to_string()))?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// Constant-time check. Both sides are hashed first so that neither the time nor the
    /// early exit on a length difference says anything about the token.
    pub fn verify(&self, candidate: &str) -> bool {
        let ours = Sha256::digest(self.0.as_bytes());
        let theirs = Sha256::digest(candidate.as_bytes());
        ours.ct_eq(&theirs).into()
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Contents of one handshake file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Handshake {
    pub v: u32,
    pub pid: u32,
    pub port: u16,
    pub token: String,
    /// Milliseconds since the Unix epoch.
    pub started: u64,
}

/// The runtime directory: `$KAPTURE_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/kapture`, else a
/// per-user folder in the temp dir. Chrome passes its environment to the native host, so a
/// launched browser given `KAPTURE_RUNTIME_DIR` sees exactly its own server.
pub fn runtime_dir(explicit: Option<&Path>) -> PathBuf {
    if let Some(dir) = explicit {
        return dir.to_path_buf();
    }
    if let Some(dir) = std::env::var_os("KAPTURE_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = dirs::runtime_dir() {
        return dir.join("kapture");
    }
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "user".into());
    std::env::temp_dir().join(format!("kapture-{user}"))
}

fn ensure_private_dir(dir: &Path) -> Result<(), PairingError> {
    let err = |source| PairingError::RuntimeDir {
        path: dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(dir).map_err(err)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(err)?;
    }
    Ok(())
}

/// Write `contents` to `path` atomically (temp file in the same folder, then rename),
/// readable by the owner only.
pub fn write_private_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A handshake file that exists as long as this value does.
#[derive(Debug)]
pub struct HandshakeFile {
    path: PathBuf,
}

impl HandshakeFile {
    /// Announce this server in `dir`.
    pub fn create(dir: &Path, port: u16, token: &Token) -> Result<Self, PairingError> {
        ensure_private_dir(dir)?;
        let pid = std::process::id();
        let handshake = Handshake {
            v: PROTOCOL_VERSION,
            pid,
            port,
            token: token.expose().to_string(),
            started: ext_core::platform::now_ms() as u64,
        };
        let path = dir.join(format!("server-{pid}-{port}.json"));
        let json = serde_json::to_vec(&handshake).unwrap_or_default();
        write_private_atomic(&path, &json).map_err(|source| PairingError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(Self { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for HandshakeFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Is process `pid` alive?
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        let Ok(raw) = i32::try_from(pid) else {
            return false;
        };
        // Signal 0 checks existence; EPERM means it exists but is someone else's.
        matches!(kill(Pid::from_raw(raw), None), Ok(()) | Err(Errno::EPERM))
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// The live servers announced in `dir`, newest first. Files of dead processes are removed;
/// unreadable or foreign files are skipped.
pub fn live_servers(dir: &Path) -> Vec<ServerEntry> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut servers: Vec<ServerEntry> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("server-"))
        })
        .filter_map(|path| {
            let hs: Handshake = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
            if !pid_alive(hs.pid) {
                let _ = fs::remove_file(&path);
                return None;
            }
            (hs.v == PROTOCOL_VERSION).then_some(ServerEntry {
                port: hs.port,
                token: hs.token,
                pid: hs.pid,
                started: hs.started,
            })
        })
        .collect();
    servers.sort_by_key(|s| std::cmp::Reverse(s.started));
    servers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_256_bits_fresh_and_redacted() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_eq!(a.expose().len(), 64);
        assert_ne!(a.expose(), b.expose());
        assert!(!format!("{a:?}").contains(a.expose()));
    }

    #[test]
    fn only_the_exact_token_verifies() {
        let t = Token::generate().unwrap();
        let good = t.expose().to_string();
        let mut flipped = good.clone().into_bytes();
        flipped[10] ^= 1;
        let flipped = String::from_utf8(flipped).unwrap();
        let long = "a".repeat(4096);
        let wrong = [
            "",
            "a",
            &good[..31],
            &good[..63],
            &format!("{good}0"),
            &flipped,
            &long,
            &good.to_uppercase(),
        ];
        for w in wrong {
            assert!(!t.verify(w), "{} chars accepted", w.len());
        }
        assert!(t.verify(&good));
    }

    #[test]
    fn handshake_file_is_private_atomic_listed_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let token = Token::generate().unwrap();
        let file = HandshakeFile::create(&run, 4321, &token).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(file.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            assert_eq!(
                fs::metadata(&run).unwrap().permissions().mode() & 0o777,
                0o700
            );
        }
        let servers = live_servers(&run);
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].port, 4321);
        assert_eq!(servers[0].token, token.expose());
        assert_eq!(servers[0].pid, std::process::id());
        // No temp files left behind.
        assert_eq!(fs::read_dir(&run).unwrap().count(), 1);
        drop(file);
        assert!(live_servers(&run).is_empty());
    }

    #[test]
    fn dead_and_garbage_files_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let dead = Handshake {
            v: PROTOCOL_VERSION,
            pid: 0x7fff_fff0,
            port: 1,
            token: "x".into(),
            started: 1,
        };
        let dead_path = dir.path().join("server-dead.json");
        fs::write(&dead_path, serde_json::to_vec(&dead).unwrap()).unwrap();
        fs::write(dir.path().join("server-garbage.json"), b"{not json").unwrap();
        assert!(live_servers(dir.path()).is_empty());
        assert!(!dead_path.exists(), "a dead server's file is cleaned up");
        assert!(live_servers(&dir.path().join("missing")).is_empty());
    }
}
