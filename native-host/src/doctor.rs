//! `kapture doctor`: look at the setup and say, in plain words, what works and what is
//! missing (the browsers found and how each would be driven, headless or not, built
//! extension, host registration, live servers, the port, the folders files are uploaded
//! from and saved into).

use std::io::Write;

use crate::cli::{DoctorArgs, DEFAULT_PORT};
use crate::launcher::find::{self, Env, Found, RealFiles};
use crate::launcher::Headless;
use crate::{extension, install, launcher, pairing};

/// Print the diagnosis; returns how many problems were found.
pub fn run(args: &DoctorArgs, out: &mut impl Write) -> std::io::Result<usize> {
    let mut problems = 0;
    let mut check = |out: &mut dyn Write, ok: bool, text: String| -> std::io::Result<()> {
        if !ok {
            problems += 1;
        }
        writeln!(out, "{} {text}", if ok { "ok  " } else { "MISSING" })
    };
    writeln!(
        out,
        "kapture {} (bridge protocol v{})",
        env!("CARGO_PKG_VERSION"),
        ext_core::protocol::PROTOCOL_VERSION
    )?;
    let env = Env::current();
    match launcher::find_browser_in(args.chromium.as_deref(), &env, &RealFiles) {
        Ok(b) => {
            let b = match b.version {
                Some(_) => b,
                None => b.with_version(&env, &RealFiles),
            };
            let text = format!("browser to launch: {} ({})", b.path.display(), b.label());
            check(out, true, text)?
        }
        Err(e) => check(out, false, format!("browser to launch: {e}"))?,
    }
    let found: Vec<Found> = find::installed(&env, &RealFiles)
        .into_iter()
        .map(|f| f.with_version(&env, &RealFiles))
        .collect();
    for line in browser_lines(
        &found,
        env.os,
        Headless::choose(false, &env),
        launcher::running_as_root(),
    ) {
        writeln!(out, "{line}")?;
    }
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(crate::scenarios::default_dir);
    match crate::extension_dir(args.extension_dir.as_deref(), &data_dir) {
        Ok(dir) => check(out, true, format!("extension: {}", dir.display()))?,
        Err(e) => check(out, false, format!("extension: {e}"))?,
    }
    match extension::extension_id() {
        Ok(id) => writeln!(out, "     extension id: {id}")?,
        Err(e) => check(out, false, format!("extension id: {e}"))?,
    }
    let registered: Vec<String> = install::ALL_FAMILIES
        .iter()
        .filter_map(|&f| {
            install::registered(f).map(|p| format!("{} ({})", install::family_name(f), p.display()))
        })
        .collect();
    if registered.is_empty() {
        writeln!(
            out,
            "info native host registered for no browser of yours: fine for launched browsers; run `kapture install` to use your own browser"
        )?;
    } else {
        check(
            out,
            true,
            format!("native host registered for {}", registered.join(", ")),
        )?;
    }
    let servers = match pairing::runtime_dir(args.runtime_dir.as_deref()) {
        Ok(runtime) => runtime_facts(&runtime, out, &mut problems)?,
        Err(e) => {
            problems += 1;
            writeln!(out, "BAD  {e}")?;
            Vec::new()
        }
    };
    writeln!(
        out,
        "info audit journal: {}",
        crate::audit::default_dir().join("audit.jsonl").display()
    )?;
    writeln!(
        out,
        "info downloads and PDFs: {}",
        crate::files::default_download_dir().display()
    )?;
    writeln!(
        out,
        "info upload folders: {}",
        upload_folders_text(&crate::policy_config::default_path())
    )?;
    let secrets = crate::scenarios::default_dir().join("secrets");
    match crate::secret_store::SecretStore::key_place_of(&secrets) {
        Ok(Some(place)) => writeln!(out, "ok   scenario secrets key: {place}")?,
        Ok(None) => writeln!(
            out,
            "info scenario secrets key: none yet ({} when the first secret is saved)",
            if crate::secret_store::OsKeyring::default().probe().is_ok() {
                "the OS keyring answers and will hold it"
            } else {
                "no OS keyring answers: a 0600 key file will hold it"
            }
        )?,
        Err(e) => {
            problems += 1;
            writeln!(out, "BAD  scenario secrets key: {e}")?;
        }
    }
    let policy = crate::policy_config::default_path();
    match std::fs::read_to_string(&policy) {
        Ok(text) => match crate::policy_config::parse_file(&policy, &text) {
            Ok(rules) => writeln!(
                out,
                "ok   policy file: {} ({} rules)",
                policy.display(),
                rules.len()
            )?,
            Err(e) => {
                problems += 1;
                writeln!(out, "BAD  {e}")?;
            }
        },
        Err(_) => writeln!(
            out,
            "info policy file: {} (absent: the defaults apply)",
            policy.display()
        )?,
    }
    if servers.is_empty() {
        writeln!(out, "info no kapture server is running")?;
    }
    for s in &servers {
        writeln!(
            out,
            "ok   kapture server running: pid {} on 127.0.0.1:{}",
            s.pid, s.port
        )?;
    }
    let default_port_free = std::net::TcpListener::bind(("127.0.0.1", DEFAULT_PORT)).is_ok();
    let ours = servers.iter().any(|s| s.port == DEFAULT_PORT);
    let port_text = match (default_port_free, ours) {
        (true, _) => format!("port {DEFAULT_PORT} is free"),
        (false, true) => format!("port {DEFAULT_PORT} is used by a kapture server"),
        (false, false) => format!(
            "port {DEFAULT_PORT} is used by another program; kapture will pick a free port instead"
        ),
    };
    writeln!(out, "info {port_text}")?;
    writeln!(
        out,
        "{}",
        if problems == 0 {
            "\nAll good."
        } else {
            "\nFix the MISSING and BAD lines above."
        }
    )?;
    Ok(problems)
}

/// The browsers found, each with the engine kapture would drive it with and why; whether a
/// launched browser would run headless.
fn browser_lines(found: &[Found], os: find::Os, headless: Headless, as_root: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if found.is_empty() {
        lines.push("info browsers found on PATH and in the usual install folders: none".into());
    } else {
        lines.push("info browsers found (kapture tries them in this order):".into());
        lines.extend(found.iter().map(|f| {
            format!(
                "       {}: {}; {}",
                f.path.display(),
                f.label(),
                f.engine(os)
            )
        }));
    }
    lines.push(match headless {
        Headless::NoDisplay => "info display: none (DISPLAY and WAYLAND_DISPLAY are unset): a launched browser runs headless".into(),
        _ => "info display: available: a launched browser opens a window unless --headless is given".into(),
    });
    if as_root {
        lines.push("info running as root: a launched browser gets --no-sandbox".into());
    }
    lines
}

/// The runtime folder: private or not, and the handshake files discovery leaves alone.
fn runtime_facts(
    runtime: &std::path::Path,
    out: &mut impl Write,
    problems: &mut usize,
) -> std::io::Result<Vec<ext_core::protocol::ServerEntry>> {
    if std::fs::symlink_metadata(runtime).is_err() {
        writeln!(
            out,
            "info runtime folder: {} (created, private, when kapture starts)",
            runtime.display()
        )?;
        return Ok(Vec::new());
    }
    match pairing::scan(runtime) {
        Ok(scan) => {
            writeln!(out, "ok   runtime folder: {} (private)", runtime.display())?;
            for s in &scan.skipped {
                *problems += 1;
                writeln!(
                    out,
                    "BAD  handshake file skipped: {}: {}",
                    s.path.display(),
                    s.why
                )?;
            }
            Ok(scan.servers)
        }
        Err(e) => {
            *problems += 1;
            writeln!(out, "BAD  {e}")?;
            Ok(Vec::new())
        }
    }
}

/// Where uploads may come from by default: kapture's uploads folder and the policy file's
/// `upload_dirs` (a `--upload-dir` of a serving kapture adds to these).
fn upload_folders_text(policy: &std::path::Path) -> String {
    let mut dirs = vec![format!(
        "{} (created on first use)",
        crate::files::default_upload_dir(&crate::scenarios::default_dir()).display()
    )];
    if let Ok(text) = std::fs::read_to_string(policy) {
        match crate::policy_config::parse_upload_dirs(policy, &text) {
            Ok(more) => dirs.extend(more.iter().map(|d| {
                let state = if d.is_dir() { "" } else { " (missing)" };
                format!("{}{state}", d.display())
            })),
            Err(e) => dirs.push(format!("({e})")),
        }
    }
    format!(
        "{}; plus each --upload-dir. Hidden files and kapture's own files are never uploaded",
        dirs.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::find::{Kind, Version};

    #[test]
    fn each_browser_found_says_which_engine_would_drive_it() {
        let chromium = Found::at("/usr/bin/chromium".into());
        let chrome = Found {
            version: Some(Version {
                kind: Kind::Chrome,
                major: 140,
                text: "Google Chrome 140.0.1.2".into(),
            }),
            ..Found::at("/opt/google/chrome/google-chrome".into())
        };
        let found = [chromium, chrome];
        let lines = browser_lines(&found, find::Os::Linux, Headless::NoDisplay, true).join("\n");
        assert!(
            lines.contains(
                "/usr/bin/chromium: Chromium; extension engine: it loads the Kapture extension"
            ),
            "{lines}"
        );
        assert!(
            lines.contains("google-chrome: Google Chrome 140.0.1.2; extension engine, loaded over the DevTools pipe (Extensions.loadUnpacked), since Google Chrome 140 ignores --load-extension (since 137); else the native CDP engine over that pipe"),
            "{lines}"
        );
        let windows = browser_lines(&found, find::Os::Windows, Headless::No, false).join("\n");
        assert!(
            windows.contains("loaded over the DevTools port"),
            "{windows}"
        );
        assert!(
            lines.contains("a launched browser runs headless"),
            "{lines}"
        );
        assert!(lines.contains("--no-sandbox"), "{lines}");
        let none = browser_lines(&[], find::Os::Linux, Headless::No, false).join("\n");
        assert!(
            none.contains("none") && none.contains("opens a window"),
            "{none}"
        );
    }

    #[test]
    fn the_upload_folders_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("policy.toml");
        std::fs::write(&policy, "upload_dirs = [\"/srv/share\"]\n").unwrap();
        let text = super::upload_folders_text(&policy);
        assert!(
            text.contains("uploads (created on first use)")
                && text.contains("/srv/share (missing)"),
            "{text}"
        );
    }
}
