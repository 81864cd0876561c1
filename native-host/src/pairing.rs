//! Pairing: the per-boot bridge token and the handshake files through which the extension
//! (via the native-messaging face) learns which servers run, on which port, with which token.
//! The runtime folder holding them is private (0700, the user's own, no symlink), and a
//! handshake file is read only when it is a plain 0600 file of the user's own.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use ext_core::protocol::{ServerEntry, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("cannot use the runtime directory {path}: {source}")]
    RuntimeDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The folder exists but is not private to this user: never used, never "fixed" silently.
    #[error("the runtime directory {path} is not private: {why}; use a folder of your own with mode 700 (e.g. `rm -r {path}` and let kapture create it, or pass --runtime-dir)")]
    NotPrivate { path: PathBuf, why: String },
    #[error("no private runtime directory: XDG_RUNTIME_DIR is not set and there is no home folder; set XDG_RUNTIME_DIR or KAPTURE_RUNTIME_DIR, or pass --runtime-dir")]
    NoRuntimeDir,
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

    /// The value, for the 0600 handshake file and as the key of the handshake's proofs
    /// (`ext_core::handshake`); it never crosses the socket.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// The bridge's current token, shared by the listener (each handshake proves the one current
/// then) and the kill switch that replaces it (`SIGHUP`): after [`BridgeKey::rotate`] no proof
/// made with an older token verifies.
#[derive(Clone, Debug)]
pub struct BridgeKey(std::sync::Arc<std::sync::RwLock<Token>>);

impl BridgeKey {
    pub fn new(token: Token) -> Self {
        Self(std::sync::Arc::new(std::sync::RwLock::new(token)))
    }

    /// The token now.
    pub fn current(&self) -> Token {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Put a fresh token in place of the current one; answers it (for the handshake file).
    pub fn rotate(&self) -> Result<Token, PairingError> {
        let fresh = Token::generate()?;
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = fresh.clone();
        Ok(fresh)
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
/// per-user folder in the user's cache folder (never a shared, predictable /tmp path). Chrome
/// passes its environment to the native host, so a launched browser given
/// `KAPTURE_RUNTIME_DIR` sees exactly its own server.
pub fn runtime_dir(explicit: Option<&Path>) -> Result<PathBuf, PairingError> {
    pick_runtime_dir(
        explicit,
        std::env::var_os("KAPTURE_RUNTIME_DIR").map(PathBuf::from),
        dirs::runtime_dir(),
        dirs::cache_dir(),
    )
}

/// [`runtime_dir`]'s choice, from what the environment gave.
fn pick_runtime_dir(
    explicit: Option<&Path>,
    kapture: Option<PathBuf>,
    xdg_runtime: Option<PathBuf>,
    cache: Option<PathBuf>,
) -> Result<PathBuf, PairingError> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = kapture.filter(|d| !d.as_os_str().is_empty()) {
        return Ok(dir);
    }
    if let Some(dir) = xdg_runtime {
        return Ok(dir.join("kapture"));
    }
    cache
        .map(|d| d.join("kapture").join("run"))
        .ok_or(PairingError::NoRuntimeDir)
}

/// Is `dir` a folder of this user's that nobody else can read or write, reached without a
/// symlink? Checked on the path itself (`symlink_metadata`), never on what a link points at.
pub fn check_private_dir(dir: &Path) -> Result<(), PairingError> {
    let meta = fs::symlink_metadata(dir).map_err(|source| PairingError::RuntimeDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let not_private = |why: String| PairingError::NotPrivate {
        path: dir.to_path_buf(),
        why,
    };
    if meta.file_type().is_symlink() {
        return Err(not_private("it is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(not_private("it is not a folder".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(not_private(format!(
                "it belongs to user id {}, not to you ({me})",
                meta.uid()
            )));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(not_private(format!(
                "others may use it (mode {mode:o}, expected 700)"
            )));
        }
    }
    Ok(())
}

/// Create `dir` (0700) if it is missing, then require it to be private.
pub fn ensure_private_dir(dir: &Path) -> Result<(), PairingError> {
    let err = |source| PairingError::RuntimeDir {
        path: dir.to_path_buf(),
        source,
    };
    if fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(err)?;
        }
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        match builder.create(dir) {
            Ok(()) => {}
            // Someone made it meanwhile: the check below judges what is there.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(err(e)),
        }
    }
    check_private_dir(dir)
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
    /// When this server started (kept across token rotations).
    started: u64,
}

impl HandshakeFile {
    /// Announce this server in `dir`.
    pub fn create(dir: &Path, port: u16, token: &Token) -> Result<Self, PairingError> {
        ensure_private_dir(dir)?;
        let pid = std::process::id();
        let path = dir.join(format!("server-{pid}-{port}.json"));
        let started = ext_core::platform::now_ms() as u64;
        let file = Self { path, started };
        file.write(port, token)?;
        Ok(file)
    }

    /// Announce `token` in place of the one before (atomically: a reader sees one or the
    /// other, whole).
    pub fn write(&self, port: u16, token: &Token) -> Result<(), PairingError> {
        let handshake = Handshake {
            v: PROTOCOL_VERSION,
            pid: std::process::id(),
            port,
            token: token.expose().to_string(),
            started: self.started,
        };
        let json = serde_json::to_vec(&handshake).unwrap_or_default();
        write_private_atomic(&self.path, &json).map_err(|source| PairingError::Write {
            path: self.path.clone(),
            source,
        })
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

/// A handshake file discovery left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

/// What a look into the runtime folder found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Live servers, newest first.
    pub servers: Vec<ServerEntry>,
    /// Handshake files that are not trusted: symlinks, someone else's, readable by others.
    pub skipped: Vec<Skipped>,
}

/// Read one handshake file without following a symlink, judging the file actually opened:
/// a plain file, this user's, 0600 (no access for group or others).
fn read_private_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits());
    }
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err("it is a symbolic link".into());
    }
    let file = options.open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a plain file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(format!(
                "it belongs to user id {}, not to you ({me})",
                meta.uid()
            ));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!("others may read it (mode {mode:o}, expected 600)"));
        }
    }
    let mut bytes = Vec::new();
    // Handshake files are tiny; a huge one is not ours.
    file.take(64 * 1024)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Look into the runtime folder: the live servers, and the handshake files left alone.
/// A folder that is not private is an error (nothing in it is trusted). Files of dead
/// processes are removed; garbage and files of other protocol versions are ignored.
pub fn scan(dir: &Path) -> Result<Scan, PairingError> {
    check_private_dir(dir)?;
    let entries = fs::read_dir(dir).map_err(|source| PairingError::RuntimeDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found = Scan::default();
    for path in entries.flatten().map(|e| e.path()) {
        let ours = path.extension().is_some_and(|x| x == "json")
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("server-"));
        if !ours {
            continue;
        }
        let bytes = match read_private_file(&path) {
            Ok(bytes) => bytes,
            Err(why) => {
                found.skipped.push(Skipped { path, why });
                continue;
            }
        };
        let Ok(hs) = serde_json::from_slice::<Handshake>(&bytes) else {
            continue;
        };
        if !pid_alive(hs.pid) {
            let _ = fs::remove_file(&path);
            continue;
        }
        if hs.v == PROTOCOL_VERSION {
            found.servers.push(ServerEntry {
                port: hs.port,
                token: hs.token,
                pid: hs.pid,
                started: hs.started,
            });
        }
    }
    found.servers.sort_by_key(|s| std::cmp::Reverse(s.started));
    found.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// The live servers announced in `dir`, newest first (none when the folder is not private).
pub fn live_servers(dir: &Path) -> Vec<ServerEntry> {
    scan(dir).map(|s| s.servers).unwrap_or_default()
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
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        }
        let dead = Handshake {
            v: PROTOCOL_VERSION,
            pid: 0x7fff_fff0,
            port: 1,
            token: "x".into(),
            started: 1,
        };
        let dead_path = dir.path().join("server-dead.json");
        write_private_atomic(&dead_path, &serde_json::to_vec(&dead).unwrap()).unwrap();
        write_private_atomic(&dir.path().join("server-garbage.json"), b"{not json").unwrap();
        assert!(live_servers(dir.path()).is_empty());
        assert!(!dead_path.exists(), "a dead server's file is cleaned up");
        assert!(live_servers(&dir.path().join("missing")).is_empty());
    }

    #[cfg(unix)]
    fn mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_runtime_folder_that_is_not_private_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let token = Token::generate().unwrap();
        // Group- or world-open folders: refused, not chmod-ed silently.
        for m in [0o770, 0o707, 0o755, 0o777] {
            let open = dir.path().join(format!("open-{m:o}"));
            fs::create_dir(&open).unwrap();
            mode(&open, m);
            let err = HandshakeFile::create(&open, 1, &token).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(&open.display().to_string()) && text.contains("not private"),
                "{text}"
            );
            assert!(
                fs::read_dir(&open).unwrap().next().is_none(),
                "nothing written"
            );
            assert!(scan(&open).is_err());
        }
        // A symlink to a private folder: refused too (judged on the link itself).
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        mode(&real, 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = HandshakeFile::create(&link, 1, &token).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(scan(&link).is_err());
        // A missing folder is created 0700 (with its parents).
        let fresh = dir.path().join("a/b/run");
        let file = HandshakeFile::create(&fresh, 1, &token).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o700
        );
        drop(file);
    }

    #[cfg(unix)]
    #[test]
    fn handshake_files_that_are_not_private_are_skipped_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        mode(dir.path(), 0o700);
        let token = Token::generate().unwrap();
        let good = HandshakeFile::create(dir.path(), 4000, &token).unwrap();
        let hs = |port: u16| Handshake {
            v: PROTOCOL_VERSION,
            pid: std::process::id(),
            port,
            token: "rogue".into(),
            started: 1,
        };
        // Readable by others.
        let loose = dir.path().join("server-loose.json");
        fs::write(&loose, serde_json::to_vec(&hs(4001)).unwrap()).unwrap();
        mode(&loose, 0o644);
        // A symlink to a private file elsewhere.
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("x.json");
        write_private_atomic(&target, &serde_json::to_vec(&hs(4002)).unwrap()).unwrap();
        let link = dir.path().join("server-link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let found = scan(dir.path()).unwrap();
        assert_eq!(
            found.servers.iter().map(|s| s.port).collect::<Vec<_>>(),
            [4000]
        );
        let skipped: Vec<_> = found
            .skipped
            .iter()
            .map(|s| (s.path.clone(), s.why.clone()))
            .collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped
            .iter()
            .any(|(p, w)| *p == loose && w.contains("644")));
        assert!(skipped
            .iter()
            .any(|(p, w)| *p == link && w.contains("symbolic link")));
        // Someone else's file (only root can make one here).
        if nix::unistd::geteuid().is_root() {
            let foreign = dir.path().join("server-foreign.json");
            write_private_atomic(&foreign, &serde_json::to_vec(&hs(4003)).unwrap()).unwrap();
            nix::unistd::chown(&foreign, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            let found = scan(dir.path()).unwrap();
            assert!(found.servers.iter().all(|s| s.port != 4003));
            assert!(found
                .skipped
                .iter()
                .any(|s| s.path == foreign && s.why.contains("65534")));
        }
        drop(good);
    }

    #[test]
    fn without_xdg_runtime_dir_the_folder_is_per_user_never_a_shared_tmp_path() {
        let home = PathBuf::from("/home/ada/.cache");
        let pick = |k: Option<&str>, x: Option<&str>, c: Option<&Path>| {
            pick_runtime_dir(
                None,
                k.map(PathBuf::from),
                x.map(PathBuf::from),
                c.map(Path::to_path_buf),
            )
        };
        assert_eq!(
            pick(Some("/k"), Some("/run/user/1"), Some(&home)).unwrap(),
            PathBuf::from("/k")
        );
        assert_eq!(
            pick(Some(""), Some("/run/user/1"), Some(&home)).unwrap(),
            PathBuf::from("/run/user/1/kapture")
        );
        assert_eq!(
            pick(None, None, Some(&home)).unwrap(),
            home.join("kapture/run")
        );
        assert!(matches!(
            pick(None, None, None),
            Err(PairingError::NoRuntimeDir)
        ));
        assert_eq!(
            pick_runtime_dir(Some(Path::new("/x")), None, None, None).unwrap(),
            PathBuf::from("/x")
        );
    }
}
