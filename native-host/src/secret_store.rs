//! The encrypted store of scenario secrets: `secrets/<name>.json`, each sealed with
//! XChaCha20-Poly1305 under one 32-byte key per folder, kept in the OS keyring when one is
//! reachable, else in a 0600 file beside them. Where the key lives is decided once and
//! remembered in the folder. Writes are atomic and private; a file that does not open is an
//! error naming it, never overwritten, never read as plain text; a key that cannot be found
//! is an error, never silently replaced by a new one.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};

use crate::pairing::write_private_atomic;

const KEY_FILE: &str = "key";
/// Records where the key of this folder lives. Not a valid secrets name (it has a dot), so
/// it never collides with `<name>.json`.
const PLACE_FILE: &str = "key.location";
const FORMAT: u32 = 1;
const PLACE_FORMAT: u32 = 1;
/// Put in the folder so that a data folder inside a Git work tree never commits the key or
/// a sealed file: `*` ignores everything in it, itself included.
const GITIGNORE: (&str, &[u8]) = (".gitignore", b"*\n");
/// The keyring entry's service; the account is the secrets folder's canonical path, so two
/// data folders never share a key.
pub const KEYRING_SERVICE: &str = "kapture";
/// `KAPTURE_KEYRING=off` keeps new keys out of the OS keyring (headless machines, test
/// harnesses that must not touch a developer's keyring). A key already there is still read.
pub const KEYRING_ENV: &str = "KAPTURE_KEYRING";
/// How long one keyring call may take. A locked keyring can wait on a password prompt
/// nobody answers, and a wedged D-Bus never answers at all: a tool call must not hang on it.
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

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
    #[error(
        "the key of the sealed secrets in {dir} is in the OS keyring, which cannot be used now \
         ({why}); unlock or start the keyring (on Linux a Secret Service such as \
         gnome-keyring or KeePassXC) and try again; nothing was changed"
    )]
    KeyringUnavailable { dir: PathBuf, why: VaultError },
    #[error(
        "the key of the sealed secrets in {dir} should be in the OS keyring (service \
         {service:?}, account {account:?}) but is not there; restore that entry, or delete \
         {dir} to start over without those secrets; nothing was changed"
    )]
    KeyringEntryMissing {
        dir: PathBuf,
        service: String,
        account: String,
    },
    #[error(
        "the OS keyring entry (service {service:?}, account {account:?}) that holds the key \
         of {dir} is not a Kapture key; it was left as it is"
    )]
    KeyringEntryDamaged {
        dir: PathBuf,
        service: String,
        account: String,
    },
    #[error(
        "the key file {path} is missing, so the sealed secrets beside it cannot be opened; \
         restore it, or delete {dir} to start over without those secrets; nothing was changed"
    )]
    KeyFileMissing { dir: PathBuf, path: PathBuf },
    #[error("opening the sealed secrets in {dir} stopped: {why}")]
    Stopped { dir: PathBuf, why: String },
}

/// Why the OS keyring could not be used. Its text never holds a secret: the platform's
/// messages are about the store, and the one that carries bytes is replaced by a fixed text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    #[error("{0}")]
    Unavailable(String),
    #[error("it did not answer within {} s", .0.as_secs())]
    TimedOut(Duration),
}

/// A store of small secrets outside the secrets folder: the OS keyring, or a double in tests.
/// `read` answers `Ok(None)` when the store works but holds no such entry.
pub trait KeyVault: Send + Sync {
    fn read(&self, service: &str, account: &str) -> Result<Option<String>, VaultError>;
    fn write(&self, service: &str, account: &str, value: &str) -> Result<(), VaultError>;
}

/// Where the key of a secrets folder lives (what `kapture doctor` shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlace {
    /// An entry of the OS keyring.
    Keyring { service: String, account: String },
    /// The 0600 key file in the secrets folder.
    File(PathBuf),
}

impl fmt::Display for KeyPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPlace::Keyring { service, account } => write!(
                f,
                "the OS keyring (service {service:?}, account {account:?})"
            ),
            KeyPlace::File(path) => write!(f, "the key file {} (mode 0600)", path.display()),
        }
    }
}

/// What `key.location` holds.
#[derive(Serialize, Deserialize)]
struct PlaceRecord {
    v: u32,
    #[serde(flatten)]
    place: RecordedPlace,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "place", rename_all = "lowercase")]
enum RecordedPlace {
    Keyring { service: String, account: String },
    File,
}

/// The OS keyring: the Secret Service on Linux and the BSDs, the login Keychain on macOS,
/// the Credential Manager on Windows.
///
/// Every call runs on a thread of its own and is waited for at most `timeout`. That thread
/// has no tokio context, so the Secret Service client's internal `block_on` cannot panic
/// with "Cannot start a runtime from within a runtime" when the store is used from async
/// code; and a keyring that never answers costs one parked thread, not a hung tool call.
#[derive(Debug, Clone)]
pub struct OsKeyring {
    timeout: Duration,
}

impl Default for OsKeyring {
    fn default() -> Self {
        OsKeyring {
            timeout: KEYRING_TIMEOUT,
        }
    }
}

/// Keyring calls given up on that have not ended yet. Past a few, the keyring is taken as
/// stuck and no more threads are parked on it until one of them ends.
static STUCK_CALLS: AtomicUsize = AtomicUsize::new(0);
const MAX_STUCK_CALLS: usize = 4;

/// One call's state, shared by the caller and its thread, so that exactly one of them counts
/// a given-up call in and out of `STUCK_CALLS`.
const RUNNING: u8 = 0;
const ENDED: u8 = 1;
const GIVEN_UP: u8 = 2;

impl OsKeyring {
    pub fn with_timeout(timeout: Duration) -> Self {
        OsKeyring { timeout }
    }

    /// Whether the OS keyring answers at all (for `kapture doctor`): looks up an entry that
    /// does not exist, which neither writes nor prompts.
    pub fn probe(&self) -> Result<(), VaultError> {
        self.read(KEYRING_SERVICE, "kapture-probe").map(|_| ())
    }

    fn run<T: Send + 'static>(
        &self,
        call: impl FnOnce() -> Result<T, VaultError> + Send + 'static,
    ) -> Result<T, VaultError> {
        if STUCK_CALLS.load(Ordering::SeqCst) >= MAX_STUCK_CALLS {
            return Err(VaultError::TimedOut(self.timeout));
        }
        let state = std::sync::Arc::new(AtomicU8::new(RUNNING));
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let thread_state = state.clone();
        let spawned = std::thread::Builder::new()
            .name("kapture-keyring".into())
            .spawn(move || {
                // Runs however the call ends, a panic included.
                struct End(std::sync::Arc<AtomicU8>);
                impl Drop for End {
                    fn drop(&mut self) {
                        if self.0.swap(ENDED, Ordering::SeqCst) == GIVEN_UP {
                            STUCK_CALLS.fetch_sub(1, Ordering::SeqCst);
                        }
                    }
                }
                let _end = End(thread_state);
                // The caller may have stopped waiting: then nobody needs the answer.
                let _ = tx.send(call());
            });
        if let Err(e) = spawned {
            return Err(VaultError::Unavailable(format!(
                "no thread for the keyring call: {e}"
            )));
        }
        match rx.recv_timeout(self.timeout) {
            Ok(answer) => answer,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if state
                    .compare_exchange(RUNNING, GIVEN_UP, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    STUCK_CALLS.fetch_add(1, Ordering::SeqCst);
                }
                Err(VaultError::TimedOut(self.timeout))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(VaultError::Unavailable(
                "the keyring call failed unexpectedly".into(),
            )),
        }
    }
}

#[cfg(any(
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "macos",
    windows
))]
mod os {
    use super::VaultError;

    /// The platform's words, except where they could carry the stored bytes.
    fn why(e: keyring::Error) -> VaultError {
        VaultError::Unavailable(match e {
            keyring::Error::BadEncoding(_) => "the entry is not text".into(),
            keyring::Error::Ambiguous(found) => format!("{} entries match", found.len()),
            other => other.to_string(),
        })
    }

    pub fn read(service: &str, account: &str) -> Result<Option<String>, VaultError> {
        match keyring::Entry::new(service, account).and_then(|e| e.get_password()) {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(why(e)),
        }
    }

    pub fn write(service: &str, account: &str, value: &str) -> Result<(), VaultError> {
        keyring::Entry::new(service, account)
            .and_then(|e| e.set_password(value))
            .map_err(why)
    }
}

// Without a native store the keyring crate would hand out an in-memory mock that forgets
// everything: better to say there is none and use the key file.
#[cfg(not(any(
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "macos",
    windows
)))]
mod os {
    use super::VaultError;

    fn none() -> VaultError {
        VaultError::Unavailable("this platform has no supported OS keyring".into())
    }

    pub fn read(_: &str, _: &str) -> Result<Option<String>, VaultError> {
        Err(none())
    }

    pub fn write(_: &str, _: &str, _: &str) -> Result<(), VaultError> {
        Err(none())
    }
}

impl KeyVault for OsKeyring {
    fn read(&self, service: &str, account: &str) -> Result<Option<String>, VaultError> {
        let (service, account) = (service.to_string(), account.to_string());
        self.run(move || os::read(&service, &account))
    }

    fn write(&self, service: &str, account: &str, value: &str) -> Result<(), VaultError> {
        let (service, account, value) =
            (service.to_string(), account.to_string(), value.to_string());
        self.run(move || os::write(&service, &account, &value))
    }
}

/// A vault that is never there: the key always goes to the key file.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKeyring;

impl KeyVault for NoKeyring {
    fn read(&self, _: &str, _: &str) -> Result<Option<String>, VaultError> {
        Err(VaultError::Unavailable("no OS keyring is used".into()))
    }

    fn write(&self, _: &str, _: &str, _: &str) -> Result<(), VaultError> {
        Err(VaultError::Unavailable("no OS keyring is used".into()))
    }
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
    place: KeyPlace,
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

/// Write a private (0600) file only if `path` does not exist yet, atomically: `Ok(false)`
/// when another process got there first. Two kapture processes opening a fresh folder at
/// once must not each make a key and keep the other's.
fn write_private_new(path: &Path, contents: &[u8]) -> std::io::Result<bool> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(true),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e.error),
    }
}

/// How a folder without a key gets one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NewKeys {
    /// In the vault when it works, else in the key file.
    VaultFirst,
    /// In the key file.
    FileOnly,
}

/// Whether `KAPTURE_KEYRING` turns the keyring off for new keys.
fn keyring_turned_off() -> bool {
    std::env::var(KEYRING_ENV).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "no" | "false" | "file"
        )
    })
}

/// The decoded key of a keyring entry, if it is one.
fn decode_key(text: &str) -> Option<[u8; 32]> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .ok()?
        .try_into()
        .ok()
}

impl SecretStore {
    /// Open the store in `dir`, making the folder and its key on first use: in the OS
    /// keyring when one answers (unless `KAPTURE_KEYRING=off`), else in a 0600 key file.
    pub fn open(dir: &Path) -> Result<SecretStore, SecretStoreError> {
        // Unit tests must never leave entries in the keyring of the developer running them.
        let new_keys = if cfg!(test) || keyring_turned_off() {
            NewKeys::FileOnly
        } else {
            NewKeys::VaultFirst
        };
        Self::open_inner(dir, &OsKeyring::default(), new_keys)
    }

    /// [`SecretStore::open`] on a blocking thread: asking the OS keyring may take up to
    /// [`KEYRING_TIMEOUT`], which must not stall a worker of the async runtime.
    pub async fn open_off_runtime(dir: PathBuf) -> Result<SecretStore, SecretStoreError> {
        let at = dir.clone();
        tokio::task::spawn_blocking(move || SecretStore::open(&dir))
            .await
            .unwrap_or_else(|e| {
                Err(SecretStoreError::Stopped {
                    dir: at,
                    why: e.to_string(),
                })
            })
    }

    /// Open the store in `dir` with `vault` standing for the OS keyring.
    pub fn open_with(dir: &Path, vault: &dyn KeyVault) -> Result<SecretStore, SecretStoreError> {
        Self::open_inner(dir, vault, NewKeys::VaultFirst)
    }

    /// Where the key of `dir` lives, without making one or asking the keyring: `None` when
    /// the folder has no key yet.
    pub fn key_place_of(dir: &Path) -> Result<Option<KeyPlace>, SecretStoreError> {
        match read_place(dir)? {
            Some(RecordedPlace::Keyring { service, account }) => {
                Ok(Some(KeyPlace::Keyring { service, account }))
            }
            Some(RecordedPlace::File) => Ok(Some(KeyPlace::File(dir.join(KEY_FILE)))),
            None if dir.join(KEY_FILE).exists() => Ok(Some(KeyPlace::File(dir.join(KEY_FILE)))),
            None => Ok(None),
        }
    }

    /// Where this store's key lives.
    pub fn key_place(&self) -> &KeyPlace {
        &self.place
    }

    fn open_inner(
        dir: &Path,
        vault: &dyn KeyVault,
        new_keys: NewKeys,
    ) -> Result<SecretStore, SecretStoreError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        // A second round only when another process made the key between our look and our
        // write; a third would mean the folder keeps changing under us.
        for _ in 0..3 {
            if let Some((key, place)) = find_key(dir, vault)? {
                return Self::with_key(dir, &key, place);
            }
            if let Some((key, place)) = make_key(dir, vault, new_keys)? {
                return Self::with_key(dir, &key, place);
            }
        }
        Err(SecretStoreError::Unreadable {
            path: dir.join(PLACE_FILE),
            why: "its key keeps changing while being opened".into(),
        })
    }

    fn with_key(dir: &Path, key: &[u8], place: KeyPlace) -> Result<SecretStore, SecretStoreError> {
        let ignore = dir.join(GITIGNORE.0);
        if !ignore.exists() {
            // A convenience, not a protection (the files are sealed and private anyway).
            if let Err(e) = write_private_atomic(&ignore, GITIGNORE.1) {
                tracing::warn!(path = %ignore.display(), error = %e, "cannot write .gitignore");
            }
        }
        let cipher =
            XChaCha20Poly1305::new_from_slice(key).map_err(|_| SecretStoreError::Unreadable {
                path: dir.join(KEY_FILE),
                why: "the key is not usable".into(),
            })?;
        Ok(SecretStore {
            dir: dir.to_path_buf(),
            cipher,
            place,
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
        let Some(text) = read_if_exists(&path)? else {
            return Ok(None);
        };
        let unreadable = unreadable(&path);
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

/// The error for `path`'s content, saying why it cannot be used.
fn unreadable(path: &Path) -> impl Fn(&str) -> SecretStoreError + '_ {
    move |why| SecretStoreError::Unreadable {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// The bytes of `path`; `None` when there is no such file.
fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, SecretStoreError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// What `key.location` says, if it exists. A record that does not parse is an error: guessing
/// could pick the wrong key and make every sealed file look damaged.
fn read_place(dir: &Path) -> Result<Option<RecordedPlace>, SecretStoreError> {
    let path = dir.join(PLACE_FILE);
    let Some(bytes) = read_if_exists(&path)? else {
        return Ok(None);
    };
    let unreadable = unreadable(&path);
    let record: PlaceRecord =
        serde_json::from_slice(&bytes).map_err(|_| unreadable("not a key location record"))?;
    if record.v != PLACE_FORMAT {
        return Err(unreadable("an unknown format version"));
    }
    Ok(Some(record.place))
}

/// The key file's 32 bytes, `None` when there is no key file.
fn read_key_file(dir: &Path) -> Result<Option<[u8; 32]>, SecretStoreError> {
    let path = dir.join(KEY_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => bytes
            .try_into()
            .map(Some)
            .map_err(|_| SecretStoreError::Unreadable {
                path,
                why: "the key is not 32 bytes".into(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&path)(e)),
    }
}

/// The key the folder already has, from where its record says; without a record, a key
/// file (folders from before the keyring) is used. `None`: the folder has no key yet.
fn find_key(
    dir: &Path,
    vault: &dyn KeyVault,
) -> Result<Option<([u8; 32], KeyPlace)>, SecretStoreError> {
    match read_place(dir)? {
        Some(RecordedPlace::Keyring { service, account }) => match vault.read(&service, &account) {
            Ok(Some(text)) => match decode_key(&text) {
                Some(key) => Ok(Some((key, KeyPlace::Keyring { service, account }))),
                None => Err(SecretStoreError::KeyringEntryDamaged {
                    dir: dir.to_path_buf(),
                    service,
                    account,
                }),
            },
            Ok(None) => Err(SecretStoreError::KeyringEntryMissing {
                dir: dir.to_path_buf(),
                service,
                account,
            }),
            Err(why) => Err(SecretStoreError::KeyringUnavailable {
                dir: dir.to_path_buf(),
                why,
            }),
        },
        Some(RecordedPlace::File) => match read_key_file(dir)? {
            Some(key) => Ok(Some((key, KeyPlace::File(dir.join(KEY_FILE))))),
            None => Err(SecretStoreError::KeyFileMissing {
                dir: dir.to_path_buf(),
                path: dir.join(KEY_FILE),
            }),
        },
        None => Ok(read_key_file(dir)?.map(|key| (key, KeyPlace::File(dir.join(KEY_FILE))))),
    }
}

/// Make the key of a folder that has none, and record where it went. `None` when another
/// process recorded a key meanwhile: the caller looks again and uses that one.
fn make_key(
    dir: &Path,
    vault: &dyn KeyVault,
    new_keys: NewKeys,
) -> Result<Option<([u8; 32], KeyPlace)>, SecretStoreError> {
    let place_path = dir.join(PLACE_FILE);
    let record = |place| {
        serde_json::to_vec(&PlaceRecord {
            v: PLACE_FORMAT,
            place,
        })
        .unwrap_or_default()
    };
    if new_keys == NewKeys::VaultFirst {
        let account = std::fs::canonicalize(dir)
            .map_err(io(dir))?
            .to_string_lossy()
            .into_owned();
        match key_in_vault(vault, &account, random::<32>()?) {
            Ok(key) => {
                let recorded = record(RecordedPlace::Keyring {
                    service: KEYRING_SERVICE.to_string(),
                    account: account.clone(),
                });
                if !write_private_new(&place_path, &recorded).map_err(io(&place_path))? {
                    return Ok(None);
                }
                tracing::debug!(dir = %dir.display(), "the secrets key is in the OS keyring");
                let place = KeyPlace::Keyring {
                    service: KEYRING_SERVICE.to_string(),
                    account,
                };
                return Ok(Some((key, place)));
            }
            Err(why) => tracing::info!(
                dir = %dir.display(),
                %why,
                "the OS keyring cannot hold the secrets key; it goes to a 0600 key file"
            ),
        }
    }
    let key = random::<32>()?;
    let key_path = dir.join(KEY_FILE);
    if !write_private_new(&key_path, &key).map_err(io(&key_path))? {
        return Ok(None);
    }
    // The record comes second: a crash in between leaves a key file and no record, and a key
    // file without a record is used. If another process recorded the keyring meanwhile, its
    // record wins and this key file is left unused.
    if !write_private_new(&place_path, &record(RecordedPlace::File)).map_err(io(&place_path))? {
        return Ok(None);
    }
    Ok(Some((key, KeyPlace::File(key_path))))
}

/// Put `fresh` in the vault under `account` and give back the key the vault then holds. An
/// entry already there (a first run that stopped before writing its record) is adopted, or,
/// if it is not a key, left alone.
fn key_in_vault(vault: &dyn KeyVault, account: &str, fresh: [u8; 32]) -> Result<[u8; 32], String> {
    match vault.read(KEYRING_SERVICE, account) {
        Ok(Some(text)) => {
            return decode_key(&text)
                .ok_or_else(|| "an entry that is not a Kapture key is already there".to_string())
        }
        Ok(None) => {}
        Err(why) => return Err(why.to_string()),
    }
    let text = base64::engine::general_purpose::STANDARD.encode(fresh);
    vault
        .write(KEYRING_SERVICE, account, &text)
        .map_err(|why| why.to_string())?;
    // A store that takes a value but cannot give it back (a session-only or mock store) must
    // not be the only place of the key.
    match vault.read(KEYRING_SERVICE, account) {
        Ok(Some(back)) if decode_key(&back) == Some(fresh) => Ok(fresh),
        Ok(_) => Err("the key written there could not be read back".into()),
        Err(why) => Err(why.to_string()),
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
    fn the_folder_keeps_itself_out_of_git_and_a_persons_ignore_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        SecretStore::open(dir.path()).unwrap();
        let ignore = dir.path().join(".gitignore");
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "*\n");
        std::fs::write(&ignore, "key\n").unwrap();
        SecretStore::open(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "key\n");
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

    /// An in-memory keyring that can be taken away, and counts its writes.
    #[derive(Default)]
    struct MemoryVault {
        entries: std::sync::Mutex<BTreeMap<(String, String), String>>,
        down: std::sync::atomic::AtomicBool,
        /// Takes writes and forgets them, like a session-only store.
        forgetful: bool,
        writes: AtomicUsize,
    }

    impl MemoryVault {
        fn set_down(&self, down: bool) {
            self.down.store(down, Ordering::SeqCst);
        }

        fn entries(&self) -> BTreeMap<(String, String), String> {
            self.entries.lock().unwrap().clone()
        }

        fn check(&self) -> Result<(), VaultError> {
            if self.down.load(Ordering::SeqCst) {
                return Err(VaultError::Unavailable("no D-Bus session".into()));
            }
            Ok(())
        }
    }

    impl KeyVault for MemoryVault {
        fn read(&self, service: &str, account: &str) -> Result<Option<String>, VaultError> {
            self.check()?;
            let key = (service.to_string(), account.to_string());
            Ok(self.entries.lock().unwrap().get(&key).cloned())
        }

        fn write(&self, service: &str, account: &str, value: &str) -> Result<(), VaultError> {
            self.check()?;
            self.writes.fetch_add(1, Ordering::SeqCst);
            if !self.forgetful {
                let key = (service.to_string(), account.to_string());
                self.entries.lock().unwrap().insert(key, value.to_string());
            }
            Ok(())
        }
    }

    /// Every file of the folder and its bytes.
    fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
            .collect()
    }

    fn canonical(dir: &Path) -> String {
        std::fs::canonicalize(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_new_key_goes_to_the_keyring_when_it_answers() {
        let dir = tempfile::tempdir().unwrap();
        let vault = MemoryVault::default();
        let store = SecretStore::open_with(dir.path(), &vault).unwrap();
        let account = canonical(dir.path());
        let place = KeyPlace::Keyring {
            service: KEYRING_SERVICE.into(),
            account: account.clone(),
        };
        assert_eq!(store.key_place(), &place);
        assert_eq!(SecretStore::key_place_of(dir.path()).unwrap(), Some(place));
        store.save("login", &values()).unwrap();

        // No key on disk, neither as a file nor inside another file.
        assert!(!dir.path().join(KEY_FILE).exists());
        let entries = vault.entries();
        assert_eq!(entries.len(), 1);
        let text = &entries[&(KEYRING_SERVICE.to_string(), account)];
        let key = decode_key(text).expect("a 32-byte key in base64");
        for (path, bytes) in snapshot(dir.path()) {
            let shown = String::from_utf8_lossy(&bytes);
            assert!(!shown.contains(text.as_str()), "{}", path.display());
            assert!(!bytes.windows(32).any(|w| w == key), "{}", path.display());
        }

        // Reopened: the same key, taken from the keyring, nothing written again.
        let again = SecretStore::open_with(dir.path(), &vault).unwrap();
        assert_eq!(again.load("login").unwrap(), Some(values()));
        assert_eq!(vault.writes.load(Ordering::SeqCst), 1);

        // Two data folders never share an entry.
        let other = tempfile::tempdir().unwrap();
        let foreign = SecretStore::open_with(other.path(), &vault).unwrap();
        assert_eq!(vault.entries().len(), 2);
        std::fs::copy(
            dir.path().join("login.json"),
            other.path().join("login.json"),
        )
        .unwrap();
        assert!(foreign.load("login").is_err());
    }

    #[test]
    fn without_a_keyring_the_key_goes_to_a_private_file_and_stays_there() {
        let dir = tempfile::tempdir().unwrap();
        let vault = MemoryVault::default();
        vault.set_down(true);
        let store = SecretStore::open_with(dir.path(), &vault).unwrap();
        let place = KeyPlace::File(dir.path().join(KEY_FILE));
        assert_eq!(store.key_place(), &place);
        store.save("login", &values()).unwrap();
        #[cfg(unix)]
        for name in [KEY_FILE, PLACE_FILE] {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }

        // The keyring coming back later does not move the key: decided once per folder.
        vault.set_down(false);
        let again = SecretStore::open_with(dir.path(), &vault).unwrap();
        assert_eq!(again.key_place(), &place);
        assert_eq!(again.load("login").unwrap(), Some(values()));
        assert!(vault.entries().is_empty());

        // The same with no keyring at all.
        let plain = tempfile::tempdir().unwrap();
        let store = SecretStore::open_with(plain.path(), &NoKeyring).unwrap();
        assert_eq!(
            store.key_place(),
            &KeyPlace::File(plain.path().join(KEY_FILE))
        );
    }

    #[test]
    fn a_key_file_from_before_the_keyring_wins() {
        let dir = tempfile::tempdir().unwrap();
        let old = SecretStore::open_with(dir.path(), &NoKeyring).unwrap();
        old.save("login", &values()).unwrap();
        // A folder made before key.location existed holds the key file alone.
        std::fs::remove_file(dir.path().join(PLACE_FILE)).unwrap();
        let before = snapshot(dir.path());

        let vault = MemoryVault::default();
        let store = SecretStore::open_with(dir.path(), &vault).unwrap();
        assert_eq!(
            store.key_place(),
            &KeyPlace::File(dir.path().join(KEY_FILE))
        );
        assert_eq!(store.load("login").unwrap(), Some(values()));
        assert!(vault.entries().is_empty(), "the keyring was not touched");
        assert_eq!(snapshot(dir.path()), before, "nothing rewritten");
    }

    #[test]
    fn a_keyring_that_is_gone_or_lost_the_key_is_a_clear_error_and_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let vault = MemoryVault::default();
        SecretStore::open_with(dir.path(), &vault)
            .unwrap()
            .save("login", &values())
            .unwrap();
        let before = snapshot(dir.path());
        let shown = dir.path().display().to_string();

        vault.set_down(true);
        let err = SecretStore::open_with(dir.path(), &vault).err().unwrap();
        assert!(
            matches!(err, SecretStoreError::KeyringUnavailable { .. }),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains(&shown) && text.contains("unlock"), "{text}");
        assert!(text.contains("no D-Bus session"), "{text}");
        assert_eq!(snapshot(dir.path()), before, "nothing written or replaced");
        // Nor through `open`, whatever it would choose for a new folder.
        assert!(SecretStore::open(dir.path()).is_err());
        assert_eq!(snapshot(dir.path()), before);

        vault.set_down(false);
        let entry = vault.entries.lock().unwrap().pop_first().unwrap();
        let err = SecretStore::open_with(dir.path(), &vault).err().unwrap();
        assert!(
            matches!(err, SecretStoreError::KeyringEntryMissing { .. }),
            "{err}"
        );
        assert!(err.to_string().contains(&entry.0 .1), "{err}");
        assert_eq!(snapshot(dir.path()), before);
        assert!(vault.entries().is_empty(), "no new key made");

        vault
            .entries
            .lock()
            .unwrap()
            .insert(entry.0.clone(), "not a key".into());
        let err = SecretStore::open_with(dir.path(), &vault).err().unwrap();
        assert!(
            matches!(err, SecretStoreError::KeyringEntryDamaged { .. }),
            "{err}"
        );
        assert!(!err.to_string().contains("not a key"), "{err}");
        assert_eq!(vault.entries()[&entry.0], "not a key", "left as it is");

        // Given back, everything opens again.
        vault.entries.lock().unwrap().insert(entry.0, entry.1);
        let store = SecretStore::open_with(dir.path(), &vault).unwrap();
        assert_eq!(store.load("login").unwrap(), Some(values()));
    }

    #[test]
    fn a_missing_key_file_or_a_damaged_record_is_an_error_and_nothing_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        SecretStore::open_with(dir.path(), &NoKeyring)
            .unwrap()
            .save("login", &values())
            .unwrap();
        let key_path = dir.path().join(KEY_FILE);
        let key = std::fs::read(&key_path).unwrap();

        std::fs::remove_file(&key_path).unwrap();
        let before = snapshot(dir.path());
        let vault = MemoryVault::default();
        let err = SecretStore::open_with(dir.path(), &vault).err().unwrap();
        assert!(
            matches!(err, SecretStoreError::KeyFileMissing { .. }),
            "{err}"
        );
        assert!(err.to_string().contains(&key_path.display().to_string()));
        assert_eq!(snapshot(dir.path()), before, "no new key file");
        assert!(vault.entries().is_empty(), "no new keyring entry");
        std::fs::write(&key_path, &key).unwrap();

        let place_path = dir.path().join(PLACE_FILE);
        std::fs::write(&place_path, b"keyring?").unwrap();
        let err = SecretStore::open_with(dir.path(), &vault).err().unwrap();
        assert!(
            err.to_string().contains(&place_path.display().to_string()),
            "{err}"
        );
        assert_eq!(std::fs::read(&place_path).unwrap(), b"keyring?");
        assert!(SecretStore::key_place_of(dir.path()).is_err());

        std::fs::write(&place_path, br#"{"v":1,"place":"file"}"#).unwrap();
        std::fs::write(&key_path, b"short").unwrap();
        let err = SecretStore::open_with(dir.path(), &vault).err().unwrap();
        assert!(matches!(err, SecretStoreError::Unreadable { .. }), "{err}");
        assert_eq!(std::fs::read(&key_path).unwrap(), b"short");
    }

    #[test]
    fn a_keyring_that_forgets_is_not_trusted_and_a_left_over_entry_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let forgetful = MemoryVault {
            forgetful: true,
            ..MemoryVault::default()
        };
        let store = SecretStore::open_with(dir.path(), &forgetful).unwrap();
        assert_eq!(
            store.key_place(),
            &KeyPlace::File(dir.path().join(KEY_FILE))
        );

        // A first run that stopped after writing the entry but before its record.
        let dir = tempfile::tempdir().unwrap();
        let vault = MemoryVault::default();
        let left = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
        let id = (KEYRING_SERVICE.to_string(), canonical(dir.path()));
        vault
            .entries
            .lock()
            .unwrap()
            .insert(id.clone(), left.clone());
        let store = SecretStore::open_with(dir.path(), &vault).unwrap();
        assert!(matches!(store.key_place(), KeyPlace::Keyring { .. }));
        assert_eq!(vault.writes.load(Ordering::SeqCst), 0);
        assert_eq!(vault.entries()[&id], left);

        // An entry there that is not a key is left alone; the key goes to a file.
        let dir = tempfile::tempdir().unwrap();
        let id = (KEYRING_SERVICE.to_string(), canonical(dir.path()));
        vault.entries.lock().unwrap().insert(id.clone(), "x".into());
        let store = SecretStore::open_with(dir.path(), &vault).unwrap();
        assert_eq!(
            store.key_place(),
            &KeyPlace::File(dir.path().join(KEY_FILE))
        );
        assert_eq!(vault.entries()[&id], "x");
    }

    #[test]
    fn a_keyring_call_that_hangs_or_panics_is_bounded() {
        let (release, hang) = std::sync::mpsc::channel::<()>();
        let quick = OsKeyring::with_timeout(Duration::from_millis(50));
        let started = std::time::Instant::now();
        let answer = quick.run(move || {
            // Blocks until the test lets go, like a keyring waiting on a prompt.
            let _ = hang.recv();
            Ok(())
        });
        assert_eq!(answer, Err(VaultError::TimedOut(Duration::from_millis(50))));
        assert!(started.elapsed() < Duration::from_secs(5));

        // Once a few calls hang, the next is refused at once instead of parking one more
        // thread on a keyring that has stopped answering.
        let mut releases = vec![release];
        while STUCK_CALLS.load(Ordering::SeqCst) < MAX_STUCK_CALLS {
            let (release, hang) = std::sync::mpsc::channel::<()>();
            releases.push(release);
            let _ = quick.run(move || {
                let _ = hang.recv();
                Ok(())
            });
        }
        let started = std::time::Instant::now();
        let refused = OsKeyring::with_timeout(Duration::from_secs(30)).run(|| Ok(()));
        assert!(matches!(refused, Err(VaultError::TimedOut(_))));
        assert!(started.elapsed() < Duration::from_secs(5));
        // Answered at last, they stop counting.
        drop(releases);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while STUCK_CALLS.load(Ordering::SeqCst) >= MAX_STUCK_CALLS {
            assert!(
                std::time::Instant::now() < deadline,
                "hung calls never ended"
            );
            std::thread::yield_now();
        }

        // A panic on the keyring thread stays there (the wait is long: printing a panic's
        // backtrace can take longer than the quick timeout above).
        let patient = OsKeyring::with_timeout(Duration::from_secs(30));
        let answer: Result<(), VaultError> = patient.run(|| panic!("inside the keyring"));
        assert!(matches!(answer, Err(VaultError::Unavailable(_))));
    }

    /// The real OS keyring, asked from inside tokio the way replay and the MCP tools do.
    /// Only reads: a developer's keyring is left as it was. Without a keyring (CI) the answer
    /// is an error, quickly; with one, "no such entry".
    fn ask_the_os_keyring_from_async_code() {
        let account = format!(
            "kapture-test-{:016x}",
            u64::from_le_bytes(random().unwrap())
        );
        let started = std::time::Instant::now();
        let answer = OsKeyring::default().read(KEYRING_SERVICE, &account);
        match &answer {
            Ok(found) => assert_eq!(found, &None),
            Err(VaultError::Unavailable(why)) => {
                assert!(!why.contains("unexpectedly"), "the call panicked: {why}")
            }
            Err(VaultError::TimedOut(_)) => {}
        }
        eprintln!("OS keyring answered {answer:?} in {:?}", started.elapsed());

        // A folder whose record says keyring, opened with `open`: an error, never a panic,
        // never a new key.
        let dir = tempfile::tempdir().unwrap();
        let record = serde_json::json!({"v": 1, "place": "keyring", "service": KEYRING_SERVICE, "account": account});
        std::fs::write(dir.path().join(PLACE_FILE), record.to_string()).unwrap();
        let before = snapshot(dir.path());
        assert!(SecretStore::open(dir.path()).is_err());
        assert_eq!(snapshot(dir.path()), before);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_os_keyring_can_be_asked_from_a_multi_thread_runtime() {
        ask_the_os_keyring_from_async_code();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_os_keyring_can_be_asked_from_a_current_thread_runtime() {
        ask_the_os_keyring_from_async_code();
    }
}
