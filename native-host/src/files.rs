//! Files on kapture's side of a browser action: upload paths checked before the browser
//! sees them, downloads and PDFs landing in kapture's own folder under safe, unique names.

use std::path::{Path, PathBuf};

use base64::Engine;
use ext_core::methods::{Downloaded, Pdf};
use ext_core::protocol::{ErrorCode, WireError};

/// Longest file name kept from a page's suggestion.
const NAME_MAX: usize = 120;

/// Upload paths as absolute paths of existing files; a clear error otherwise.
pub fn check_uploads(paths: &[String]) -> Result<Vec<String>, WireError> {
    paths
        .iter()
        .map(|p| {
            let path = Path::new(p);
            let abs = if path.is_absolute() {
                path.to_path_buf()
            } else {
                std::env::current_dir().unwrap_or_default().join(path)
            };
            if !abs.is_file() {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    format!("{p} is not a file on this machine"),
                ));
            }
            Ok(abs.display().to_string())
        })
        .collect()
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

/// Make sure `dir` exists; answer it absolute.
pub fn ensure_dir(dir: &Path) -> Result<PathBuf, WireError> {
    std::fs::create_dir_all(dir)
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
            if c == '/' || c == '\\' || c == ':' || c.is_control() {
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

/// `dir/name`, or `dir/name (2).ext`… when that exists: nothing is overwritten.
pub fn unique_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    (2..10_000)
        .map(|n| dir.join(format!("{stem} ({n}){ext}")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(format!("{stem} ({}){ext}", std::process::id())))
}

/// Keep a finished download in kapture's folder (moving it there from the browser's own
/// download folder, under a safe, unused name) and describe it.
pub fn finish_download(dir: &Path, d: &Downloaded) -> Result<String, WireError> {
    let written = PathBuf::from(&d.path);
    let suggested = written
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = if written
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .as_deref()
        == Some(dir)
    {
        written.clone()
    } else {
        let target = unique_path(dir, &sanitize_name(&suggested));
        std::fs::rename(&written, &target)
            .or_else(|_| {
                std::fs::copy(&written, &target).and_then(|_| std::fs::remove_file(&written))
            })
            .map_err(|e| {
                WireError::new(
                    ErrorCode::DownloadFailed,
                    format!(
                        "the browser finished, but {} could not be moved: {e}",
                        written.display()
                    ),
                )
            })?;
        target
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
    Ok(format!(
        "Downloaded {}\npath: {}\nbytes: {bytes}\nmimeType: {mime}\nsuggestedName: {suggested}",
        d.url,
        target.display()
    ))
}

/// Write a printed PDF to `path`, or into `dir` named after the page.
pub fn write_pdf(path: Option<&str>, dir: &Path, pdf: &Pdf) -> Result<String, WireError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&pdf.data)
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("the browser's PDF is not base64: {e}"),
            )
        })?;
    let target = match path {
        Some(p) => PathBuf::from(p),
        None => {
            let dir = ensure_dir(dir)?;
            let title = if pdf.title.trim().is_empty() {
                "page"
            } else {
                pdf.title.as_str()
            };
            unique_path(&dir, &format!("{}.pdf", sanitize_name(title)))
        }
    };
    crate::pairing::write_private_atomic(&target, &bytes).map_err(|e| {
        WireError::new(
            ErrorCode::BadArgs,
            format!("cannot write {}: {e}", target.display()),
        )
    })?;
    Ok(format!(
        "Saved the page as PDF: {} ({} bytes)",
        target.display(),
        bytes.len()
    ))
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

    #[test]
    fn downloads_move_into_the_folder_under_a_safe_name() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let file = elsewhere.path().join("notes.txt");
        std::fs::write(&file, b"hello").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"older").unwrap();
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
            std::fs::read(canonical.join("notes (2).txt")).unwrap(),
            b"hello"
        );
        assert_eq!(
            std::fs::read(canonical.join("notes.txt")).unwrap(),
            b"older",
            "nothing overwritten"
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

    #[test]
    fn missing_upload_files_are_bad_args() {
        let err = check_uploads(&["/definitely/not/here.txt".into()]).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArgs);
        let f = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(
            check_uploads(&[f.path().display().to_string()])
                .unwrap()
                .len(),
            1
        );
    }
}
