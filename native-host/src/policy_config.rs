//! The user's policy: built from the defaults for the kind of browser, the policy file
//! (TOML, errors name the line; never "allow all" on a mistake) and the flags, in that
//! order, so a flag has the last word. The file may also name the folders uploads may
//! come from (`upload_dirs`).

use std::path::{Path, PathBuf};

use ext_core::policy::budget::Budget;
use ext_core::policy::{Category, OriginPattern, Policy, Rule, Verdict};
use serde::Deserialize;

use crate::cli::ServeArgs;
use crate::policy_settings::{self, line_of, Settings};

/// The default policy file: `<config dir>/kapture/policy.toml`.
pub fn default_path() -> PathBuf {
    dirs::config_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("kapture")
        .join("policy.toml")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// Folders files may be uploaded from, besides kapture's uploads folder.
    #[serde(default)]
    upload_dirs: Vec<toml::Spanned<String>>,
    /// Whether MCP sessions may drive each other's tabs (default: no).
    #[serde(default)]
    share_tabs: bool,
    #[serde(default)]
    rule: Vec<toml::Spanned<FileRule>>,
    /// Steps per hour per origin.
    #[serde(default)]
    budget: Vec<toml::Spanned<FileBudget>>,
    /// Steps per MCP session (`--max-steps` has the last word).
    #[serde(default)]
    max_steps: Option<u64>,
    // The plain settings (`policy_settings`), each checked at load.
    download_max_bytes: Option<toml::Spanned<i64>>,
    tool_timeout_ms: Option<toml::Spanned<i64>>,
    screenshot_dir: Option<toml::Spanned<String>>,
    journal_max_bytes: Option<toml::Spanned<i64>>,
    journal_keep: Option<toml::Spanned<i64>>,
    #[serde(default)]
    mask: Vec<toml::Spanned<crate::policy_settings::FileMask>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileBudget {
    origin: String,
    #[serde(rename = "maxStepsPerHour", alias = "max_steps_per_hour")]
    max_steps_per_hour: u64,
}

/// What a policy file says.
#[derive(Debug, Default)]
struct Parsed {
    rules: Vec<Rule>,
    dirs: Vec<PathBuf>,
    share_tabs: bool,
    budgets: Vec<Budget>,
    max_steps: Option<u64>,
    settings: Settings,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRule {
    origin: String,
    #[serde(default)]
    category: Option<String>,
    verdict: Verdict,
}

/// Parse a policy file's rules.
pub fn parse_file(path: &Path, text: &str) -> Result<Vec<Rule>, String> {
    parse(path, text).map(|p| p.rules)
}

/// The upload folders a policy file names (`upload_dirs = ["~/Documents/to-share"]`):
/// absolute, or starting with `~/` (the home folder); anything else is an error naming the
/// line, never a folder relative to wherever kapture was started.
pub fn parse_upload_dirs(path: &Path, text: &str) -> Result<Vec<PathBuf>, String> {
    parse(path, text).map(|p| p.dirs)
}

fn upload_dir(path: &Path, text: &str, spanned: &toml::Spanned<String>) -> Result<PathBuf, String> {
    let line = line_of(text, spanned.span().start);
    let raw = spanned.get_ref();
    let dir = match raw.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()
            .ok_or_else(|| {
                format!(
                    "the policy file {} line {line}: upload_dirs {raw:?}: no home folder is known",
                    path.display()
                )
            })?
            .join(rest),
        None => PathBuf::from(raw),
    };
    if !dir.is_absolute() {
        return Err(format!(
            "the policy file {} line {line}: upload_dirs {raw:?} must be an absolute path (or start with ~/)",
            path.display()
        ));
    }
    Ok(dir)
}

/// The file's rules, upload folders, whether sessions share tabs, and its budgets.
fn parse(path: &Path, text: &str) -> Result<Parsed, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| line_of(text, s.start))
            .map(|l| format!(" line {l}"))
            .unwrap_or_default();
        format!(
            "the policy file {}{line} is not valid: {}",
            path.display(),
            e.message()
        )
    })?;
    let dirs = file
        .upload_dirs
        .iter()
        .map(|d| upload_dir(path, text, d))
        .collect::<Result<Vec<_>, _>>()?;
    let rules = file
        .rule
        .into_iter()
        .map(|spanned| {
            let line = line_of(text, spanned.span().start);
            let r = spanned.into_inner();
            let at = |why: String| format!("the policy file {} line {line}: {why}", path.display());
            let category = match &r.category {
                Some(c) => {
                    Some(Category::parse(c).ok_or_else(|| at(format!("unknown category {c:?}")))?)
                }
                None => None,
            };
            Ok(Rule {
                origin: OriginPattern::parse(&r.origin).map_err(at)?,
                category,
                verdict: r.verdict,
                source: format!("{} line {line}", path.display()),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let budgets = file
        .budget
        .into_iter()
        .map(|spanned| {
            let line = line_of(text, spanned.span().start);
            let b = spanned.into_inner();
            let at = |why: String| format!("the policy file {} line {line}: {why}", path.display());
            if b.max_steps_per_hour == 0 {
                return Err(at(
                    "maxStepsPerHour must be at least 1 (a read-only rule refuses every change)"
                        .into(),
                ));
            }
            Ok(Budget {
                origin: OriginPattern::parse(&b.origin).map_err(at)?,
                max_steps_per_hour: b.max_steps_per_hour,
                source: format!("{} line {line}", path.display()),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if file.max_steps == Some(0) {
        return Err(format!(
            "the policy file {}: max_steps must be at least 1",
            path.display()
        ));
    }
    let settings = policy_settings::check(
        path,
        text,
        policy_settings::Raw {
            download_max_bytes: file.download_max_bytes,
            tool_timeout_ms: file.tool_timeout_ms,
            screenshot_dir: file.screenshot_dir,
            journal_max_bytes: file.journal_max_bytes,
            journal_keep: file.journal_keep,
            mask: file.mask,
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(Parsed {
        rules,
        dirs,
        share_tabs: file.share_tabs,
        budgets,
        max_steps: file.max_steps,
        settings,
    })
}

/// Everything that shapes the policy, checked once at start.
#[derive(Debug, Clone)]
pub struct PolicyConfig {
    pub file_rules: Vec<Rule>,
    pub flag_rules: Vec<Rule>,
    pub read_only: bool,
    pub allow_all: bool,
    /// Where the file rules came from (shown by `doctor`).
    pub file: Option<PathBuf>,
    /// Folders uploads may come from: the policy file's `upload_dirs`, then `--upload-dir`.
    pub upload_dirs: Vec<PathBuf>,
    /// MCP sessions may drive each other's tabs: `share_tabs = true` or `--share-tabs`.
    pub share_tabs: bool,
    /// Steps per hour per origin (`[[budget]]` in the policy file).
    pub budgets: Vec<Budget>,
    /// Steps per MCP session: `--max-steps`, else the file's `max_steps`.
    pub max_steps: Option<u64>,
    /// The file's plain settings (limits, folders, retention, masks).
    pub settings: Settings,
}

impl PolicyConfig {
    /// Read the policy file (the given one must exist; the default one may not) and flags.
    pub fn load(args: &ServeArgs) -> Result<PolicyConfig, String> {
        let (path, must_exist) = match &args.policy {
            Some(p) => (p.clone(), true),
            None => (default_path(), false),
        };
        let (parsed, file) = match std::fs::read_to_string(&path) {
            Ok(text) => (parse(&path, &text)?, Some(path)),
            Err(e) if must_exist => {
                return Err(format!(
                    "cannot read the policy file {}: {e}",
                    path.display()
                ))
            }
            Err(_) => (Parsed::default(), None),
        };
        let Parsed {
            rules: file_rules,
            dirs: mut upload_dirs,
            share_tabs,
            budgets,
            max_steps,
            settings,
        } = parsed;
        // A folder the person typed on the command line is theirs: relative to where they
        // started kapture.
        upload_dirs.extend(
            args.upload_dirs
                .iter()
                .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone())),
        );
        let mut flag_rules = Vec::new();
        for (list, verdict, flag) in [
            (&args.allow, Verdict::Allow, "--allow"),
            (&args.ask, Verdict::Ask, "--ask"),
            (&args.deny, Verdict::Deny, "--deny"),
        ] {
            for text in list {
                flag_rules.push(Policy::flag_rule(text, verdict, flag)?);
            }
        }
        Ok(PolicyConfig {
            file_rules,
            flag_rules,
            read_only: args.read_only,
            allow_all: args.unsafe_allow_all,
            file,
            upload_dirs,
            share_tabs: share_tabs || args.share_tabs,
            budgets,
            max_steps: args.max_steps.or(max_steps),
            settings,
        })
    }

    /// The policy for a browser: `launched` says whether this kapture started it.
    pub fn policy(&self, launched: bool) -> Policy {
        let mut p = if self.allow_all {
            Policy::allow_all()
        } else if launched {
            Policy::launched_default()
        } else {
            Policy::connected_default()
        };
        p.rules.extend(self.file_rules.iter().cloned());
        p.rules.extend(self.flag_rules.iter().cloned());
        p.budgets.extend(self.budgets.iter().cloned());
        p.download_max_bytes = self.settings.download_max_bytes;
        if self.read_only {
            p = p.read_only("--read-only");
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_file_is_read_with_lines() {
        let text = "# mine\n[[rule]]\norigin = \"*.example.com\"\ncategory = \"interact\"\nverdict = \"allow\"\n\n[[rule]]\norigin = \"bank.example\"\nverdict = \"deny\"\n";
        let rules = parse_file(Path::new("p.toml"), text).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].category, Some(Category::Interact));
        assert!(rules[1].source.ends_with("line 7"), "{}", rules[1].source);
    }

    #[test]
    fn a_malformed_file_is_an_error_naming_the_line_never_allow_all() {
        let bad_syntax = "[[rule]]\norigin = \"a.com\"\nverdict = allow\n";
        let err = parse_file(Path::new("p.toml"), bad_syntax).unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        let bad_category = "[[rule]]\norigin = \"a.com\"\nverdict = \"allow\"\n\n[[rule]]\norigin = \"b.com\"\ncategory = \"everything\"\nverdict = \"allow\"\n";
        let err = parse_file(Path::new("p.toml"), bad_category).unwrap_err();
        assert!(
            err.contains("line 5") && err.contains("everything"),
            "{err}"
        );
        let unknown = "[[rule]]\norigin = \"a.com\"\nverdict = \"allow\"\nverdcit = 1\n";
        assert!(parse_file(Path::new("p.toml"), unknown).is_err());
        let bad_origin = "[[rule]]\norigin = \"exa*mple.com\"\nverdict = \"allow\"\n";
        assert!(parse_file(Path::new("p.toml"), bad_origin)
            .unwrap_err()
            .contains("line 1"));
    }

    #[test]
    fn flags_win_over_the_file_and_safe_mode_over_all() {
        let config = PolicyConfig {
            file_rules: parse_file(
                Path::new("p.toml"),
                "[[rule]]\norigin = \"*\"\ncategory = \"eval\"\nverdict = \"allow\"\n",
            )
            .unwrap(),
            flag_rules: vec![
                Policy::flag_rule("eval@evil.example", Verdict::Deny, "--deny").unwrap(),
            ],
            read_only: false,
            allow_all: false,
            file: None,
            upload_dirs: Vec::new(),
            share_tabs: false,
            budgets: Vec::new(),
            max_steps: None,
            settings: Settings::default(),
        };
        let connected = config.policy(false);
        assert_eq!(
            connected
                .decide(Category::Eval, "https://a.example/")
                .verdict,
            Verdict::Allow,
            "the file allows eval"
        );
        assert_eq!(
            connected
                .decide(Category::Eval, "https://evil.example/")
                .verdict,
            Verdict::Deny,
            "the flag denies it"
        );
        let safe = PolicyConfig {
            read_only: true,
            ..config
        };
        assert_eq!(
            safe.policy(true)
                .decide(Category::Interact, "http://127.0.0.1/")
                .verdict,
            Verdict::Deny
        );
    }

    #[test]
    fn upload_folders_in_the_file_are_absolute_or_in_home() {
        let text = "upload_dirs = [\"/srv/share\", \"~/Documents/to-share\"]\n\n[[rule]]\norigin = \"a.com\"\nverdict = \"allow\"\n";
        let dirs = parse_upload_dirs(Path::new("p.toml"), text).unwrap();
        assert_eq!(dirs[0], PathBuf::from("/srv/share"));
        assert!(dirs[1].is_absolute() && dirs[1].ends_with("Documents/to-share"));
        assert_eq!(parse_file(Path::new("p.toml"), text).unwrap().len(), 1);
        let relative = "upload_dirs = [\n  \"/ok\",\n  \"docs\",\n]\n";
        let err = parse_upload_dirs(Path::new("p.toml"), relative).unwrap_err();
        assert!(err.contains("line 3") && err.contains("absolute"), "{err}");
        assert!(parse_upload_dirs(Path::new("p.toml"), "upload_dirs = \"/one\"\n").is_err());
    }

    #[test]
    fn budgets_in_the_file_name_their_line_and_refuse_zero() {
        let text =
            "max_steps = 40\n\n[[budget]]\norigin = \"*.shop.example\"\nmaxStepsPerHour = 30\n";
        let p = parse(Path::new("p.toml"), text).unwrap();
        assert_eq!(p.max_steps, Some(40));
        assert_eq!(p.budgets.len(), 1);
        assert_eq!(p.budgets[0].max_steps_per_hour, 30);
        assert_eq!(p.budgets[0].origin.to_string(), "*.shop.example");
        assert!(
            p.budgets[0].source.ends_with("line 3"),
            "{}",
            p.budgets[0].source
        );
        let zero = "[[budget]]\norigin = \"a.example\"\nmaxStepsPerHour = 0\n";
        assert!(parse(Path::new("p.toml"), zero)
            .unwrap_err()
            .contains("line 1"));
        let typo = "[[budget]]\norigin = \"a.example\"\nmaxStepsPerHr = 3\n";
        assert!(parse(Path::new("p.toml"), typo).is_err());
        assert!(parse(Path::new("p.toml"), "max_steps = 0\n").is_err());
    }

    #[test]
    fn sessions_share_tabs_only_when_the_file_says_so() {
        let share = parse(Path::new("p.toml"), "share_tabs = true\n")
            .unwrap()
            .share_tabs;
        assert!(share);
        let share = parse(Path::new("p.toml"), "upload_dirs = []\n")
            .unwrap()
            .share_tabs;
        assert!(!share);
        assert!(parse(Path::new("p.toml"), "share_tabs = \"yes\"\n").is_err());
    }

    #[test]
    fn the_share_tabs_flag_or_the_file_lets_sessions_share_tabs() {
        use clap::Parser;
        let dir = tempfile::tempdir().unwrap();
        let (plain, sharing) = (dir.path().join("plain.toml"), dir.path().join("share.toml"));
        std::fs::write(&plain, "").unwrap();
        std::fs::write(&sharing, "share_tabs = true\n").unwrap();
        let load = |extra: &[&str]| {
            let args =
                crate::cli::Cli::try_parse_from(["kapture"].iter().chain(extra.iter()).copied())
                    .unwrap();
            PolicyConfig::load(&args.serve).unwrap().share_tabs
        };
        let (plain, sharing) = (plain.to_str().unwrap(), sharing.to_str().unwrap());
        assert!(!load(&["--policy", plain]));
        assert!(load(&["--policy", plain, "--share-tabs"]));
        assert!(load(&["--policy", sharing]));
    }
}
