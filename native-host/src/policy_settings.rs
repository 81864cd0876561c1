//! The policy file's plain settings beside its rules: the download size cap, the default
//! tool timeout, a folder screenshots are also saved in, the audit journal's retention and
//! the person's own masking patterns. Each is checked once at load: a bad value is an
//! error with a stable code (`POLICY_BAD_VALUE`, `POLICY_BAD_PATTERN`, `POLICY_BAD_PATH`),
//! the line, and a hint — never a silent default.

use std::path::{Path, PathBuf};

use ext_core::secrets::Pattern;
use serde::Deserialize;

use crate::audit::Retention;

/// The longest default tool timeout the file may set (the per-call `timeoutMs` bound).
const TIMEOUT_MAX_MS: i64 = ext_core::methods::MAX_TIMEOUT_MS as i64 - 1;
/// The smallest journal file size (a few entries) and the most old files kept.
const JOURNAL_MIN_BYTES: i64 = 4096;
const JOURNAL_KEEP_MAX: i64 = 100;

/// A bad setting, said as the person fixes it.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{code}: the policy file {file} line {line}: {key} {why} (hint: {hint})")]
pub struct SettingError {
    /// Stable: scripts and people search for it.
    pub code: &'static str,
    pub file: String,
    pub line: usize,
    pub key: &'static str,
    pub why: String,
    pub hint: &'static str,
}

/// A `[[mask]]` table: `kind` names what `pattern` (a regular expression) finds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileMask {
    pub kind: String,
    pub pattern: String,
}

/// The settings as the file writes them (each with where it is written).
#[derive(Debug, Default, Deserialize)]
pub struct Raw {
    pub download_max_bytes: Option<toml::Spanned<i64>>,
    pub tool_timeout_ms: Option<toml::Spanned<i64>>,
    pub screenshot_dir: Option<toml::Spanned<String>>,
    pub journal_max_bytes: Option<toml::Spanned<i64>>,
    pub journal_keep: Option<toml::Spanned<i64>>,
    #[serde(default)]
    pub mask: Vec<toml::Spanned<FileMask>>,
}

/// The settings, checked.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The largest download kept, in bytes (`None`: the default cap).
    pub download_max_bytes: Option<u64>,
    /// The timeout of a tool call that names none (`None`: each tool's own default).
    pub tool_timeout_ms: Option<u64>,
    /// A folder every screenshot is also saved in.
    pub screenshot_dir: Option<PathBuf>,
    pub journal: Retention,
    /// The person's masking patterns, after the built-in detectors.
    pub masks: Vec<Pattern>,
}

/// Check `raw` from the file at `path` whose text is `text`.
pub fn check(path: &Path, text: &str, raw: Raw) -> Result<Settings, SettingError> {
    let at = |key: &'static str, span: std::ops::Range<usize>| {
        let file = path.display().to_string();
        let line = line_of(text, span.start);
        move |code: &'static str, why: String, hint: &'static str| SettingError {
            code,
            file: file.clone(),
            line,
            key,
            why,
            hint,
        }
    };
    let number = |key: &'static str,
                  v: &Option<toml::Spanned<i64>>,
                  min: i64,
                  max: i64,
                  hint: &'static str|
     -> Result<Option<u64>, SettingError> {
        let Some(v) = v else { return Ok(None) };
        let n = *v.get_ref();
        if n < min || n > max {
            let bad = at(key, v.span());
            return Err(bad(
                "POLICY_BAD_VALUE",
                format!("is {n}; it must be between {min} and {max}"),
                hint,
            ));
        }
        Ok(Some(n as u64))
    };
    let download_max_bytes = number(
        "download_max_bytes",
        &raw.download_max_bytes,
        1,
        i64::MAX,
        "a size in bytes, e.g. 104857600 for 100 MiB; leave it out for the default (512 MiB)",
    )?;
    let tool_timeout_ms = number(
        "tool_timeout_ms",
        &raw.tool_timeout_ms,
        1_000,
        TIMEOUT_MAX_MS,
        "milliseconds, e.g. 45000; leave it out for each tool's default (30 s, 60 s for navigation, screenshots and waits)",
    )?;
    let journal_max_bytes = number(
        "journal_max_bytes",
        &raw.journal_max_bytes,
        JOURNAL_MIN_BYTES,
        i64::MAX,
        "the size in bytes at which the journal file is rotated, e.g. 10485760",
    )?;
    let journal_keep = number(
        "journal_keep",
        &raw.journal_keep,
        0,
        JOURNAL_KEEP_MAX,
        "how many rotated journal files are kept (0: none, only the current one)",
    )?;
    let screenshot_dir = match &raw.screenshot_dir {
        None => None,
        Some(dir) => {
            let bad = at("screenshot_dir", dir.span());
            Some(folder(dir.get_ref()).map_err(|why| {
                bad(
                    "POLICY_BAD_PATH",
                    why,
                    "an absolute folder, or one starting with ~/ (the home folder), e.g. \"~/kapture-screenshots\"",
                )
            })?)
        }
    };
    let masks = raw
        .mask
        .iter()
        .map(|m| {
            let bad = at("[[mask]]", m.span());
            let m = m.get_ref();
            Pattern::new(&m.kind, &m.pattern).map_err(|why| {
                bad(
                    "POLICY_BAD_PATTERN",
                    why,
                    "kind = \"employee-id\", pattern = \"EMP-[0-9]{6}\" (Rust regular-expression syntax)",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let defaults = Retention::default();
    Ok(Settings {
        download_max_bytes,
        tool_timeout_ms,
        screenshot_dir,
        journal: Retention {
            max_bytes: journal_max_bytes.unwrap_or(defaults.max_bytes),
            keep: journal_keep.map_or(defaults.keep, |k| k as usize),
        },
        masks,
    })
}

/// The line (from 1) of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// An absolute folder, or one under the home folder (`~/…`); never relative to wherever
/// kapture was started.
fn folder(raw: &str) -> Result<PathBuf, String> {
    let dir = match raw.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()
            .ok_or_else(|| format!("{raw:?}: no home folder is known"))?
            .join(rest),
        None => PathBuf::from(raw),
    };
    if !dir.is_absolute() {
        return Err(format!("{raw:?} is not an absolute path"));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Settings, SettingError> {
        let raw: Raw = toml::from_str(text).unwrap();
        check(Path::new("p.toml"), text, raw)
    }

    #[test]
    fn good_settings_are_read() {
        let s = load(
            "download_max_bytes = 1000\ntool_timeout_ms = 45000\nscreenshot_dir = \"/tmp/shots\"\njournal_max_bytes = 8192\njournal_keep = 3\n[[mask]]\nkind = \"employee-id\"\npattern = \"EMP-[0-9]{6}\"\n",
        )
        .unwrap();
        assert_eq!(s.download_max_bytes, Some(1000));
        assert_eq!(s.tool_timeout_ms, Some(45000));
        assert_eq!(s.screenshot_dir, Some(PathBuf::from("/tmp/shots")));
        assert_eq!(s.journal.max_bytes, 8192);
        assert_eq!(s.journal.keep, 3);
        assert_eq!(s.masks.len(), 1);
        let none = load("").unwrap();
        assert_eq!(none.journal, Retention::default());
    }

    #[test]
    fn bad_values_name_their_code_line_and_a_hint() {
        let e = load("# x\ndownload_max_bytes = 0\n").unwrap_err();
        assert_eq!(
            (e.code, e.line, e.key),
            ("POLICY_BAD_VALUE", 2, "download_max_bytes")
        );
        assert!(e.to_string().contains("hint:"), "{e}");
        let e = load("tool_timeout_ms = 999999999\n").unwrap_err();
        assert_eq!(e.code, "POLICY_BAD_VALUE");
        let e = load("screenshot_dir = \"shots\"\n").unwrap_err();
        assert_eq!(e.code, "POLICY_BAD_PATH");
        let e = load("\n\n[[mask]]\nkind = \"x\"\npattern = \"(\"\n").unwrap_err();
        assert_eq!((e.code, e.line), ("POLICY_BAD_PATTERN", 3));
        let e = load("journal_keep = -1\n").unwrap_err();
        assert_eq!(e.code, "POLICY_BAD_VALUE");
    }
}
