//! Files on kapture's side of a browser action: upload paths checked before the browser
//! sees them (only from folders the person allowed), downloads and PDFs landing in
//! kapture's own folder under safe, unique names, never over an existing file.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use base64::Engine;
use ext_core::methods::{Downloaded, Pdf};
use ext_core::protocol::{ErrorCode, WireError};

mod inert;

/// Longest file name kept from a page's suggestion.
const NAME_MAX: usize = 120;

/// How many numbered names (`a (2).pdf`…) are tried before giving up.
const UNIQUE_TRIES: u32 = 10_000;

/// The prefix of a launched browser's temporary profile (cookies of the session).
const TEMP_PROFILE_PREFIX: &str = "kapture-profile-";

/// The default uploads folder: `uploads` in kapture's data folder.
pub fn default_upload_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("uploads")
}

/// Where uploads may come from, and kapture's own places that never leave, even when they
/// lie inside an allowed folder.
#[derive(Debug, Clone, Default)]
pub struct UploadFolders {
    /// The default uploads folder: created on first use; relative paths are read in it.
    pub default: PathBuf,
    /// Folders the person allowed (`--upload-dir`, `upload_dirs` in the policy file).
    pub allowed: Vec<PathBuf>,
    /// Kapture's own files and folders: scenarios, sealed secrets and their key, the audit
    /// journal, the handshake files (the bridge token), the secrets and policy files, the
    /// launched browser's profile.
    pub never: Vec<PathBuf>,
    /// The download folder: what is in it came from the web with the person's cookies, so
    /// it is an upload source only when the person names it (or a folder inside it) as an
    /// upload folder, never because a wider allowed folder happens to hold it.
    pub downloads: PathBuf,
}

/// Where kapture keeps its own things, as the serve arguments say.
pub struct KaptureFolders<'a> {
    pub data_dir: &'a Path,
    pub audit_dir: &'a Path,
    pub runtime_dir: &'a Path,
    pub download_dir: &'a Path,
    pub secrets_file: Option<&'a Path>,
    pub policy_file: Option<&'a Path>,
    pub user_data_dir: Option<&'a Path>,
}

/// An absolute form of `p` without touching the disk (relative to the current folder: only
/// for paths the person gave on the command line).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `p` and, when it resolves, its canonical form (a folder given through a symlink is
/// compared both ways).
fn forms(p: &Path) -> Vec<PathBuf> {
    let abs = absolute(p);
    let mut out = vec![abs.clone()];
    if let Ok(c) = abs.canonicalize() {
        if c != abs {
            out.push(c);
        }
    }
    out
}

/// Does `rest` (a path below an allowed folder) name a hidden file or folder?
fn hides(rest: &Path) -> bool {
    rest.components().any(|c| match c {
        Component::Normal(n) => n.to_string_lossy().starts_with('.'),
        _ => true,
    })
}

/// The one refusal of an upload path: the same words whatever the reason, so an answer
/// never tells whether something exists outside the allowed folders.
fn refuse_upload(index: usize, folders: &[PathBuf]) -> WireError {
    let list: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
    WireError::new(
        ErrorCode::BadArgs,
        format!(
            "paths[{index}] is not a file kapture may upload. Uploads come only from existing files in the upload folders ({}); a relative path is read in {}. Hidden files and folders (names starting with a dot) and kapture's own files are never uploaded, and a path leaving the folders (.., a symlink) is refused. Put the file in an upload folder, or ask the person to allow its folder (kapture --upload-dir DIR, or upload_dirs in the policy file).",
            list.join(", "),
            list.first().map(String::as_str).unwrap_or("the uploads folder"),
        ),
    )
}

impl UploadFolders {
    /// The folders for a serving kapture: the default uploads folder in the data folder,
    /// the allowed ones, and kapture's own places.
    pub fn new(default: PathBuf, allowed: Vec<PathBuf>, own: &KaptureFolders<'_>) -> Self {
        let mut never = Vec::new();
        for data in [own.data_dir.to_path_buf(), crate::scenarios::default_dir()] {
            never.push(data.join("scenarios"));
            never.push(data.join("secrets"));
        }
        for audit in [own.audit_dir.to_path_buf(), crate::audit::default_dir()] {
            never.push(audit.join("audit.jsonl"));
            never.push(audit.join("audit.1.jsonl"));
        }
        never.push(own.runtime_dir.to_path_buf());
        never.push(crate::policy_config::default_path());
        never.extend(
            [own.secrets_file, own.policy_file, own.user_data_dir]
                .into_iter()
                .flatten()
                .map(Path::to_path_buf),
        );
        UploadFolders {
            default: absolute(&default),
            allowed: allowed.iter().map(|p| absolute(p)).collect(),
            never: never.iter().map(|p| absolute(p)).collect(),
            downloads: absolute(own.download_dir),
        }
    }

    /// Every folder uploads may come from, the default one first.
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut roots = vec![self.default.clone()];
        for dir in &self.allowed {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        roots
    }

    /// Check every path; answer them as the canonical paths the browser is given.
    pub fn check_all(&self, paths: &[String]) -> Result<Vec<String>, WireError> {
        if !paths.is_empty() {
            // Created on first use, private: the person drops files there for the agent.
            let _ = create_private_dir(&self.default);
        }
        paths
            .iter()
            .enumerate()
            .map(|(i, p)| self.check(p).ok_or_else(|| refuse_upload(i, &self.roots())))
            .collect()
    }

    /// One path, as the canonical path of a regular file inside an allowed folder, or
    /// nothing (the caller answers the one refusal).
    fn check(&self, raw: &str) -> Option<String> {
        let given = Path::new(raw);
        // Decided on the text alone first: no `..`, no empty path; relative paths are
        // read in the uploads folder, never in kapture's working folder.
        if raw.is_empty()
            || raw.contains('\0')
            || given.components().any(|c| c == Component::ParentDir)
        {
            return None;
        }
        let roots: Vec<Vec<PathBuf>> = self.roots().iter().map(|r| forms(r)).collect();
        let abs = if given.is_absolute() {
            given.to_path_buf()
        } else {
            roots.first()?.last()?.join(given)
        };
        // Lexically inside an allowed folder, with nothing hidden below it; nothing outside
        // is ever looked at on disk.
        let inside = |p: &Path| {
            roots.iter().flatten().any(|root| {
                p.strip_prefix(root)
                    .is_ok_and(|rest| !rest.as_os_str().is_empty() && !hides(rest))
            })
        };
        if !inside(&abs) {
            return None;
        }
        // Then where it really is, symlinks resolved: still inside, still not hidden, not
        // kapture's own, a regular file.
        let real = abs.canonicalize().ok()?;
        let canonical_roots: Vec<PathBuf> = self
            .roots()
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .collect();
        let downloads = forms(&self.downloads);
        let in_downloads = |p: &Path| downloads.iter().any(|d| p.starts_with(d));
        let allowed_by = canonical_roots.iter().any(|root| {
            real.strip_prefix(root)
                .is_ok_and(|rest| !rest.as_os_str().is_empty() && !hides(rest))
                && (!in_downloads(&real) || in_downloads(root))
        });
        if !allowed_by {
            return None;
        }
        if self.is_kaptures(&real) || self.is_kaptures(&abs) || !real.metadata().ok()?.is_file() {
            return None;
        }
        real.to_str().map(str::to_string)
    }

    /// Inside one of kapture's own places, or a launched browser's temporary profile?
    fn is_kaptures(&self, p: &Path) -> bool {
        let temp_profile = p.components().any(|c| {
            matches!(c, Component::Normal(n) if n.to_string_lossy().starts_with(TEMP_PROFILE_PREFIX))
        });
        temp_profile
            || self
                .never
                .iter()
                .flat_map(|n| forms(n))
                .any(|n| p.starts_with(n))
    }
}

/// Create `dir` (and its parents) if missing, private (0700): the uploads and download
/// folders hold the person's documents.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// The values of a dotenv secrets file, to mask in answers. A file that does not parse is
/// an error naming it, never an empty list.
pub fn secret_values(path: &Path) -> Result<Vec<(String, String)>, String> {
    let entries = dotenvy::from_path_iter(path)
        .map_err(|e| format!("cannot read the secrets file {}: {e}", path.display()))?;
    let mut values = Vec::new();
    for entry in entries {
        let (_, value) = entry
            .map_err(|e| format!("the secrets file {} does not parse: {e}", path.display()))?;
        if value.len() >= ext_core::secrets::MIN_VALUE_LEN {
            values.push((value, "secrets-file".to_string()));
        }
    }
    Ok(values)
}

/// The default folder for downloads and PDFs.
pub fn default_download_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("kapture")
        .join("downloads")
}

/// Make sure `dir` exists (created private: downloads may be the person's documents);
/// answer it absolute.
pub fn ensure_dir(dir: &Path) -> Result<PathBuf, WireError> {
    create_private_dir(dir)
        .and_then(|()| dir.canonicalize())
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("cannot use the download folder {}: {e}", dir.display()),
            )
        })
}

/// A file name from a page's suggestion that cannot leave the folder or hide: no path
/// separators, no leading dots, no control characters, not empty, not too long.
pub fn sanitize_name(suggested: &str) -> String {
    let cleaned: String = suggested
        .chars()
        .map(|c| {
            // Separators, controls, and what would hide or forge a line in an answer
            // (line and paragraph separators, bidi and zero-width marks).
            if c == '/' || c == '\\' || c == ':' || ext_core::escape::is_unsafe(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let trimmed = cleaned.trim().trim_start_matches('.').trim();
    let mut name: String = trimmed.chars().take(NAME_MAX).collect();
    if name.is_empty() {
        name = "download".into();
    }
    name
}

/// Is a name taken? A symlink counts, even a dangling one (`exists` would follow it).
fn taken(p: &Path) -> bool {
    p.symlink_metadata().is_ok()
}

/// `name`, then `name (2).ext`, `name (3).ext`…: the names tried for a new file.
fn candidates(name: &str) -> impl Iterator<Item = String> + '_ {
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    std::iter::once(name.to_string())
        .chain((2..UNIQUE_TRIES).map(move |n| format!("{stem} ({n}){ext}")))
}

/// `dir/name`, or `dir/name (2).ext`… when that is taken. Only a first guess: files are
/// created with create-new semantics (`place_new`), so a race or a planted symlink never
/// gets overwritten or followed.
pub fn unique_path(dir: &Path, name: &str) -> PathBuf {
    candidates(name)
        .map(|n| dir.join(n))
        .find(|p| !taken(p))
        .unwrap_or_else(|| dir.join(format!("{name}.{}", std::process::id())))
}

/// Give `file` (a finished temporary file in `dir`) a new name in `dir`: `name` or the
/// first free numbered one. The rename never replaces anything (RENAME_NOREPLACE, else a
/// hard link): an existing file, or a symlink planted at the name, makes it try the next.
fn place_new(
    mut file: tempfile::NamedTempFile,
    dir: &Path,
    name: &str,
) -> std::io::Result<PathBuf> {
    for candidate in candidates(name) {
        let target = dir.join(&candidate);
        if taken(&target) {
            continue;
        }
        match file.persist_noclobber(&target) {
            Ok(_) => return Ok(target),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => file = e.file,
            Err(e) => return Err(e.error),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("every name like {name} is taken"),
    ))
}

/// Move the browser's finished file into `dir` under `name` or a free numbered one,
/// never replacing anything: a hard link made at a free name (which fails if the name
/// exists, a symlink included), then the original removed; across file systems a copy
/// into a new private file in `dir`.
fn move_new(from: &Path, dir: &Path, name: &str) -> std::io::Result<PathBuf> {
    for candidate in candidates(name) {
        let target = dir.join(&candidate);
        if taken(&target) {
            continue;
        }
        match std::fs::hard_link(from, &target) {
            Ok(()) => {
                remove_original(from);
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            // Another file system, or one without hard links: copy instead.
            Err(_) => break,
        }
    }
    let mut source = std::fs::File::open(from)?;
    let mut copy = tempfile::NamedTempFile::new_in(dir)?;
    std::io::copy(&mut source, copy.as_file_mut())?;
    copy.as_file().sync_all()?;
    let target = place_new(copy, dir, name)?;
    remove_original(from);
    Ok(target)
}

/// The file is in kapture's folder now; a copy left behind is only logged.
fn remove_original(from: &Path) {
    if let Err(e) = std::fs::remove_file(from) {
        tracing::warn!(path = %from.display(), error = %e, "a finished download could not be removed after the move");
    }
}

/// Keep a finished download in kapture's folder (moving it there from the browser's own
/// download folder, under a safe, unused name) and describe it.
pub fn finish_download(dir: &Path, d: &Downloaded) -> Result<String, WireError> {
    let written = PathBuf::from(&d.path);
    let suggested = written
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A program or script is kept under a name nothing opens or runs.
    let (name, inert) = inert::inert_name(&sanitize_name(&suggested));
    let target = if inert.is_none()
        && written
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .as_deref()
            == Some(dir)
    {
        written.clone()
    } else {
        move_new(&written, dir, &name).map_err(|e| {
            WireError::new(
                ErrorCode::DownloadFailed,
                format!(
                    "the browser finished, but {} could not be moved: {e}",
                    written.display()
                ),
            )
        })?
    };
    let bytes = std::fs::metadata(&target)
        .map(|m| m.len())
        .unwrap_or(d.bytes);
    let mime = if d.mime_type.is_empty() {
        mime_guess::from_path(&target)
            .first_or_octet_stream()
            .to_string()
    } else {
        d.mime_type.clone()
    };
    // The URL, the MIME type and the suggested name come from the page or its server.
    use ext_core::escape::inline;
    let mut out = format!(
        "Downloaded {}\npath: {}\nbytes: {bytes}\nmimeType: {}\nsuggestedName: {}",
        inline(&d.url),
        inline(&target.display().to_string()),
        inline(&mime),
        inline(&suggested)
    );
    if let Some(inert) = inert {
        inert::strip_exec(&target).map_err(|e| {
            WireError::new(
                ErrorCode::DownloadFailed,
                format!("{} could not be made inert: {e}", target.display()),
            )
        })?;
        out.push_str(&format!(
            "\ninert: a .{} file runs code when opened; it is kept as {}, not executable, and was not opened. Rename it only if the person trusts it.",
            inline(&inert.kind),
            inline(&inert.name)
        ));
    }
    Ok(out)
}

/// The file name a PDF is saved under, from the agent's `path`: a name inside the
/// download folder (`dir`, canonical), or an absolute path whose folder is that folder.
/// Anything else (another folder, `..`, a sub-folder, a hidden name) is BAD_ARGS, decided
/// on the text and the download folder alone. The name always ends in `.pdf`.
pub fn pdf_name(path: &str, dir: &Path) -> Result<String, WireError> {
    let refuse = |why: &str| {
        WireError::new(
            ErrorCode::BadArgs,
            format!(
                "path {why}: a PDF is saved only inside the download folder {}. Pass a file name such as \"report.pdf\" (or omit path to name it after the page); an existing file is never overwritten, a numbered name is used instead.",
                dir.display()
            ),
        )
    };
    let given = Path::new(path);
    let name = if given.is_absolute() {
        let parent_is_dir = given
            .parent()
            .is_some_and(|p| p == dir || p.canonicalize().is_ok_and(|c| c == dir));
        if !parent_is_dir || given.components().any(|c| c == Component::ParentDir) {
            return Err(refuse("is outside the download folder"));
        }
        given.file_name()
    } else {
        let mut parts = given.components();
        match (parts.next(), parts.next()) {
            (Some(Component::Normal(n)), None) => Some(n),
            _ => return Err(refuse("must be a file name without folders or ..")),
        }
    };
    let name = name
        .and_then(|n| n.to_str())
        .ok_or_else(|| refuse("is not a usable file name"))?;
    if name.starts_with('.')
        || name
            .chars()
            .any(|c| c.is_control() || c == '\\' || c == ':')
    {
        return Err(refuse("is a hidden or unusable file name"));
    }
    let name: String = name.chars().take(NAME_MAX).collect();
    Ok(if name.to_ascii_lowercase().ends_with(".pdf") {
        name
    } else {
        format!("{name}.pdf")
    })
}

/// Write a printed PDF into the download folder: under the agent's file name, else named
/// after the page; a taken name gets a numbered one, and the answer says the real path.
pub fn write_pdf(path: Option<&str>, dir: &Path, pdf: &Pdf) -> Result<String, WireError> {
    let dir = ensure_dir(dir)?;
    let name = match path {
        Some(p) => pdf_name(p, &dir)?,
        None => {
            let title = if pdf.title.trim().is_empty() {
                "page"
            } else {
                pdf.title.as_str()
            };
            format!("{}.pdf", sanitize_name(title))
        }
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&pdf.data)
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("the browser's PDF is not base64: {e}"),
            )
        })?;
    let cannot = |e: std::io::Error| {
        WireError::new(
            ErrorCode::Internal,
            format!("cannot write the PDF into {}: {e}", dir.display()),
        )
    };
    // Written whole into a private temporary file first, then given its name.
    let mut file = tempfile::NamedTempFile::new_in(&dir).map_err(cannot)?;
    file.write_all(&bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(cannot)?;
    let target = place_new(file, &dir, &name).map_err(cannot)?;
    Ok(format!(
        "Saved the page as PDF: {} ({} bytes)",
        ext_core::escape::inline(&target.display().to_string()),
        bytes.len()
    ))
}

/// Save a screenshot (base64 `data` of `mime`) into `dir` (the policy file's
/// `screenshot_dir`) as a new file `screenshot-<ms since the epoch>-tab<N>.<ext>`; its path.
pub fn save_screenshot(dir: &Path, tab: i32, mime: &str, data: &str) -> Result<PathBuf, WireError> {
    let cannot = |e: String| {
        WireError::new(
            ErrorCode::Internal,
            format!("cannot save the screenshot into {}: {e}", dir.display()),
        )
    };
    create_private_dir(dir).map_err(|e| cannot(e.to_string()))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| cannot(e.to_string()))?;
    let ext = if mime.ends_with("png") { "png" } else { "jpg" };
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let name = format!("screenshot-{ms}-tab{tab}.{ext}");
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| cannot(e.to_string()))?;
    file.write_all(&bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| cannot(e.to_string()))?;
    place_new(file, dir, &name).map_err(|e| cannot(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_names_cannot_escape_or_hide() {
        assert_eq!(sanitize_name("report.pdf"), "report.pdf");
        assert_eq!(sanitize_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(sanitize_name("..\\evil.exe"), "_evil.exe");
        assert_eq!(sanitize_name(".bashrc"), "bashrc");
        assert_eq!(sanitize_name("a\nb:c"), "a_b_c");
        assert_eq!(sanitize_name("   "), "download");
        assert_eq!(sanitize_name(&"x".repeat(500)).len(), NAME_MAX);
    }

    #[test]
    fn nothing_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let first = unique_path(dir.path(), "a.txt");
        std::fs::write(&first, b"1").unwrap();
        let second = unique_path(dir.path(), "a.txt");
        assert_eq!(second.file_name().unwrap(), "a (2).txt");
        std::fs::write(&second, b"2").unwrap();
        assert_eq!(
            unique_path(dir.path(), "a.txt").file_name().unwrap(),
            "a (3).txt"
        );
        assert_eq!(
            unique_path(dir.path(), "noext").file_name().unwrap(),
            "noext"
        );
    }

    /// A folder layout like a person's: an uploads folder with a file, a hidden folder, a
    /// symlink out; a home with a key outside; kapture's data folder with its secrets.
    struct Layout {
        _root: tempfile::TempDir,
        root: PathBuf,
        folders: UploadFolders,
    }

    fn layout(extra_allowed: &[&str]) -> Layout {
        let root_dir = tempfile::tempdir().unwrap();
        let root = root_dir.path().canonicalize().unwrap();
        let data = root.join("data");
        let uploads = data.join("uploads");
        for dir in [
            "home/.ssh",
            "data/uploads/.hidden",
            "data/secrets",
            "data/scenarios",
            "data/downloads",
            "run",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for (file, text) in [
            ("home/.ssh/id_ed25519", "CANARY key"),
            ("home/notes.txt", "CANARY notes"),
            ("data/uploads/ok.txt", "fine"),
            ("data/uploads/.hidden/x.txt", "CANARY hidden"),
            ("data/uploads/.env", "CANARY env"),
            ("data/secrets/key", "CANARY sealed key"),
            ("data/scenarios/login.json", "{}"),
            ("data/audit.jsonl", "CANARY journal"),
            ("data/downloads/statement.pdf", "CANARY statement"),
            ("run/server-1-2.json", "CANARY token"),
        ] {
            std::fs::write(root.join(file), text).unwrap();
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(root.join("home/notes.txt"), uploads.join("link.txt")).unwrap();
            symlink(root.join("home/.ssh"), uploads.join("keys")).unwrap();
            symlink(root.join("home/gone.txt"), uploads.join("dangling.txt")).unwrap();
            symlink(uploads.join("ok.txt"), uploads.join("alias.txt")).unwrap();
        }
        let own = KaptureFolders {
            data_dir: &data,
            audit_dir: &data,
            runtime_dir: &root.join("run"),
            download_dir: &data.join("downloads"),
            secrets_file: None,
            policy_file: None,
            user_data_dir: None,
        };
        let allowed = extra_allowed.iter().map(|p| root.join(p)).collect();
        let folders = UploadFolders::new(uploads, allowed, &own);
        Layout {
            _root: root_dir,
            root,
            folders,
        }
    }

    fn one(l: &Layout, path: &str) -> Result<String, WireError> {
        l.folders
            .check_all(&[path.to_string()])
            .map(|mut v| v.remove(0))
    }

    #[test]
    fn uploads_come_only_from_allowed_folders_resolved() {
        let l = layout(&[]);
        let ok = l.root.join("data/uploads/ok.txt").display().to_string();
        assert_eq!(
            one(&l, "ok.txt").unwrap(),
            ok,
            "relative: in the uploads folder"
        );
        assert_eq!(one(&l, &ok).unwrap(), ok);
        assert_eq!(
            one(&l, "alias.txt").unwrap(),
            ok,
            "a symlink inside to a file inside: the browser gets the real path"
        );
        assert_eq!(l.folders.check_all(&[]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn every_refusal_says_the_same_whether_the_target_exists_or_not() {
        let l = layout(&["data"]);
        let r = |p: &str| l.root.join(p).display().to_string();
        let refused = [
            // Outside, existing and missing.
            r("home/.ssh/id_ed25519"),
            r("home/.ssh/id_rsa"),
            r("home/notes.txt"),
            r("home/missing.txt"),
            "/etc/passwd".into(),
            "/etc/no-such-file-here".into(),
            // Symlinks out of the uploads folder.
            "link.txt".into(),
            "dangling.txt".into(),
            "keys/id_ed25519".into(),
            "keys/id_rsa".into(),
            // Hidden inside an allowed folder.
            ".hidden/x.txt".into(),
            ".hidden/y.txt".into(),
            ".env".into(),
            ".env.local".into(),
            // Kapture's own, inside the allowed data folder.
            r("data/secrets/key"),
            r("data/secrets/other"),
            r("data/scenarios/login.json"),
            r("data/audit.jsonl"),
            // The download folder, inside an allowed folder but not named.
            r("data/downloads/statement.pdf"),
            // Escapes and oddities.
            "../../home/notes.txt".into(),
            "../../home/missing.txt".into(),
            r("data/uploads/../../home/notes.txt"),
            "Cargo.toml".into(),
            "missing.txt".into(),
            String::new(),
            r("data/uploads"),
        ];
        let texts: std::collections::BTreeSet<String> = refused
            .iter()
            .map(|p| {
                let e = one(&l, p).expect_err(p);
                assert_eq!(e.code, ErrorCode::BadArgs, "{p}");
                assert!(!e.message.contains("CANARY"));
                e.message
            })
            .collect();
        assert_eq!(texts.len(), 1, "{texts:#?}");
        let text = texts.into_iter().next().unwrap();
        assert!(
            text.contains(&l.root.join("data/uploads").display().to_string())
                && text.contains("--upload-dir"),
            "{text}"
        );
        // The allowed data folder itself uploads what is not kapture's.
        std::fs::write(l.root.join("data/plain.txt"), "x").unwrap();
        assert!(one(&l, &r("data/plain.txt")).is_ok());
    }

    #[test]
    fn kaptures_runtime_folder_and_a_named_download_folder() {
        let l = layout(&["run", "data/downloads"]);
        let r = |p: &str| l.root.join(p).display().to_string();
        let cookies = l
            .root
            .join("data/uploads/kapture-profile-x/Default/Cookies");
        std::fs::create_dir_all(cookies.parent().unwrap()).unwrap();
        std::fs::write(&cookies, "CANARY cookies").unwrap();
        assert!(
            one(&l, &cookies.display().to_string()).is_err(),
            "a launched browser's temporary profile"
        );
        assert!(
            one(&l, &r("run/server-1-2.json")).is_err(),
            "the handshake holds the token"
        );
        assert!(
            one(&l, &r("data/downloads/statement.pdf")).is_ok(),
            "named as an upload folder: the person chose it"
        );
        let e = l
            .folders
            .check_all(&[r("data/uploads/ok.txt"), r("home/notes.txt")])
            .unwrap_err();
        assert!(e.message.starts_with("paths[1] "), "{}", e.message);
    }

    #[test]
    fn pdf_names_stay_in_the_download_folder() {
        let dir = tempfile::tempdir().unwrap();
        let dl = dir.path().canonicalize().unwrap();
        assert_eq!(pdf_name("report.pdf", &dl).unwrap(), "report.pdf");
        assert_eq!(pdf_name("report", &dl).unwrap(), "report.pdf");
        assert_eq!(
            pdf_name(&dl.join("abs.PDF").display().to_string(), &dl).unwrap(),
            "abs.PDF"
        );
        for bad in [
            "../x.pdf",
            "sub/x.pdf",
            "./x.pdf",
            ".bashrc",
            "/etc/x.pdf",
            "/tmp/x.pdf",
            "",
            "a\nb.pdf",
        ] {
            let e = pdf_name(bad, &dl).expect_err(bad);
            assert_eq!(e.code, ErrorCode::BadArgs, "{bad}");
        }
        let escape = format!("{}/../x.pdf", dl.display());
        assert!(pdf_name(&escape, &dl).is_err());
    }

    fn pdf(data: &[u8]) -> Pdf {
        Pdf {
            tab_id: 1,
            data: base64::engine::general_purpose::STANDARD.encode(data),
            title: "A page".into(),
        }
    }

    fn saved_path(answer: &str) -> PathBuf {
        PathBuf::from(
            answer
                .trim_start_matches("Saved the page as PDF: ")
                .rsplit_once(" (")
                .unwrap()
                .0,
        )
    }

    #[test]
    fn pdfs_never_overwrite_or_follow_a_planted_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let dl = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        std::fs::write(dl.join("keep.pdf"), b"older").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&victim, dl.join("trap.pdf")).unwrap();
            std::os::unix::fs::symlink(outside.path().join("new.txt"), dl.join("trap (2).pdf"))
                .unwrap();
        }
        let kept = write_pdf(Some("keep.pdf"), &dl, &pdf(b"%PDF-1")).unwrap();
        assert_eq!(saved_path(&kept), dl.join("keep (2).pdf"), "{kept}");
        assert_eq!(std::fs::read(dl.join("keep.pdf")).unwrap(), b"older");
        let trapped = write_pdf(Some("trap.pdf"), &dl, &pdf(b"%PDF-2")).unwrap();
        assert_eq!(saved_path(&trapped), dl.join("trap (3).pdf"), "{trapped}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!outside.path().join("new.txt").exists());
        assert_eq!(std::fs::read(dl.join("trap (3).pdf")).unwrap(), b"%PDF-2");
        let titled = write_pdf(None, &dl, &pdf(b"%PDF-3")).unwrap();
        assert_eq!(saved_path(&titled), dl.join("A page.pdf"));
        let e = write_pdf(Some(&victim.display().to_string()), &dl, &pdf(b"x")).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadArgs);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn downloads_move_into_the_folder_under_a_safe_name() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let file = elsewhere.path().join("notes.txt");
        std::fs::write(&file, b"hello").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"older").unwrap();
        let victim = elsewhere.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&victim, dir.path().join("notes (2).txt")).unwrap();
        let d = Downloaded {
            tab_id: 1,
            path: file.display().to_string(),
            url: "http://x/notes.txt".into(),
            bytes: 5,
            mime_type: String::new(),
        };
        let canonical = dir.path().canonicalize().unwrap();
        let text = finish_download(&canonical, &d).unwrap();
        assert!(
            text.contains("bytes: 5") && text.contains("mimeType: text/plain"),
            "{text}"
        );
        assert_eq!(
            std::fs::read(canonical.join("notes (3).txt")).unwrap(),
            b"hello",
            "{text}"
        );
        assert_eq!(
            std::fs::read(canonical.join("notes.txt")).unwrap(),
            b"older",
            "nothing overwritten"
        );
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"precious",
            "no symlink followed"
        );
        assert!(!file.exists());
        // A file the browser already wrote into the folder stays where it is.
        let inside = canonical.join("report.csv");
        std::fs::write(&inside, b"a,b").unwrap();
        let d = Downloaded {
            tab_id: 1,
            path: inside.display().to_string(),
            url: "u".into(),
            bytes: 3,
            mime_type: "text/csv".into(),
        };
        assert!(finish_download(&canonical, &d)
            .unwrap()
            .contains(&format!("path: {}", inside.display())));
    }

    #[test]
    fn a_copy_across_file_systems_never_overwrites_either() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.bin"), b"older").unwrap();
        let mut copy = tempfile::NamedTempFile::new_in(dir.path()).unwrap();
        copy.write_all(b"new").unwrap();
        let placed = place_new(copy, dir.path(), "a.bin").unwrap();
        assert_eq!(placed, dir.path().join("a (2).bin"));
        assert_eq!(std::fs::read(dir.path().join("a.bin")).unwrap(), b"older");
    }

    #[test]
    fn secrets_files_give_their_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(
            &path,
            "API_TOKEN=tok-123456\nSHORT=ab\n# comment\nDB_PASS=\"s3cret pass\"\n",
        )
        .unwrap();
        let values: Vec<String> = secret_values(&path)
            .unwrap()
            .into_iter()
            .map(|(v, _)| v)
            .collect();
        assert_eq!(values, ["tok-123456", "s3cret pass"]);
        assert!(secret_values(&dir.path().join("missing")).is_err());
    }
}
