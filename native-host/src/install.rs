//! `kapture install`: register the native-messaging host with the user's browsers so the
//! extension in their own profile can find running kapture servers.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{BrowserFamily, InstallArgs};
use crate::{extension, launcher};

pub const ALL_FAMILIES: [BrowserFamily; 4] = [
    BrowserFamily::Chrome,
    BrowserFamily::Chromium,
    BrowserFamily::Brave,
    BrowserFamily::Edge,
];

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("no per-user configuration folder on this system")]
    NoConfigDir,
    #[error("native-messaging registration on this OS needs the registry; not supported yet")]
    UnsupportedOs,
    #[error(transparent)]
    Extension(#[from] extension::ExtensionError),
    #[error("cannot find this program's path: {0}")]
    SelfPath(std::io::Error),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot print: {0}")]
    Output(#[from] std::io::Error),
}

pub fn family_name(f: BrowserFamily) -> &'static str {
    match f {
        BrowserFamily::Chrome => "Google Chrome",
        BrowserFamily::Chromium => "Chromium",
        BrowserFamily::Brave => "Brave",
        BrowserFamily::Edge => "Microsoft Edge",
    }
}

/// The per-user `NativeMessagingHosts` folder of a browser family.
pub fn host_dir(f: BrowserFamily) -> Result<PathBuf, InstallError> {
    if cfg!(windows) {
        return Err(InstallError::UnsupportedOs);
    }
    let config = dirs::config_dir().ok_or(InstallError::NoConfigDir)?;
    let profile_root: &[&str] = match (f, cfg!(target_os = "macos")) {
        (BrowserFamily::Chrome, false) => &["google-chrome"],
        (BrowserFamily::Chrome, true) => &["Google", "Chrome"],
        (BrowserFamily::Chromium, _) => &["chromium"],
        (BrowserFamily::Brave, _) => &["BraveSoftware", "Brave-Browser"],
        (BrowserFamily::Edge, false) => &["microsoft-edge"],
        (BrowserFamily::Edge, true) => &["Microsoft Edge"],
    };
    let mut dir = config;
    if cfg!(target_os = "macos") && f == BrowserFamily::Chromium {
        dir.push("Chromium");
    } else {
        dir.extend(profile_root);
    }
    dir.push("NativeMessagingHosts");
    Ok(dir)
}

/// Register for the chosen browsers and tell the person what to do next.
pub fn run(args: &InstallArgs, out: &mut impl Write) -> Result<(), InstallError> {
    let id = extension::extension_id()?;
    let host = std::env::current_exe().map_err(InstallError::SelfPath)?;
    let families: &[BrowserFamily] = if args.browsers.is_empty() {
        &ALL_FAMILIES
    } else {
        &args.browsers
    };
    for &family in families {
        let dir = host_dir(family)?;
        let path = launcher::write_native_host_manifest(&dir, &host, &id).map_err(|source| {
            InstallError::Write {
                path: dir.clone(),
                source,
            }
        })?;
        writeln!(
            out,
            "registered the native host for {}: {}",
            family_name(family),
            path.display()
        )?;
    }
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(crate::scenarios::default_dir);
    let dir = match crate::extension_dir(args.extension_dir.as_deref(), &data_dir) {
        Ok(dir) => dir,
        Err(e) => {
            writeln!(out, "\nThe extension is not built yet ({e}).")?;
            return Ok(());
        }
    };
    if !args.without_debugger {
        writeln!(
            out,
            "\nNow load the extension once: open chrome://extensions, turn on Developer mode,\n\
             click \"Load unpacked\" and choose:\n  {}\n\
             Its id will be {id}. Then start kapture with --browser connect (or auto).\n\
             After updating kapture, run `kapture install` again: a new version has its own folder.",
            dir.display()
        )?;
        return Ok(());
    }
    let reduced = extension::write_without_debugger(&dir, &data_dir)?;
    writeln!(
        out,
        "\nThe extension without the debugger permission (reduced mode: navigate, snapshot,\n\
         click and type; the other page tools answer UNSUPPORTED), for a browser whose policy\n\
         blocks that permission. Load it once: open chrome://extensions, turn on Developer mode,\n\
         click \"Load unpacked\" and choose:\n  {}\n\
         Its id will be {id}, as the full extension's.\n\
         Its options page says the mode. Chrome cannot grant the debugger to it later:\n\
         for full mode, remove it and load instead:\n  {}",
        reduced.display(),
        dir.display()
    )?;
    Ok(())
}

/// Is the host registered for `family`, pointing at an existing program?
pub fn registered(family: BrowserFamily) -> Option<PathBuf> {
    let manifest = host_dir(family)
        .ok()?
        .join(format!("{}.json", ext_core::protocol::NATIVE_HOST_NAME));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).ok()?).ok()?;
    let program = PathBuf::from(json.get("path")?.as_str()?);
    Path::new(&program).exists().then_some(program)
}
