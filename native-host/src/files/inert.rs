//! Downloads of a kind that runs code when opened (programs, scripts, installers, shortcuts:
//! the kinds Chrome's download protection warns about) are kept inert: saved under a name
//! no system opens or runs (`.inert` appended), without any execute permission, and said so.

/// File extensions (lower case, no dot) that run code when opened on some system.
const DANGEROUS: &[&str] = &[
    // Windows programs, installers, scripts and shortcuts.
    "exe",
    "msi",
    "msp",
    "msix",
    "appx",
    "com",
    "scr",
    "pif",
    "cpl",
    "msc",
    "bat",
    "cmd",
    "ps1",
    "psm1",
    "vbs",
    "vbe",
    "js",
    "jse",
    "wsf",
    "wsh",
    "hta",
    "lnk",
    "url",
    "scf",
    "reg",
    "inf",
    "dll",
    "sys",
    "ocx",
    "gadget",
    "application",
    "appref-ms",
    "settingcontent-ms",
    // Cross-platform code.
    "jar",
    "jnlp",
    "py",
    "pyw",
    "pyz",
    "pl",
    "rb",
    "php",
    "crx",
    "xpi",
    // macOS and Linux programs, installers and launchers.
    "app",
    "command",
    "tool",
    "dmg",
    "pkg",
    "mpkg",
    "sh",
    "bash",
    "csh",
    "ksh",
    "zsh",
    "run",
    "bin",
    "appimage",
    "desktop",
    "deb",
    "rpm",
    "snap",
    "flatpak",
    "apk",
];

/// What a kept-inert file was, for the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Inert {
    /// The dangerous extension, lower case.
    pub kind: String,
    /// The name it is saved under.
    pub name: String,
}

/// `name`'s dangerous extension, if it has one (`setup.EXE` → `exe`).
pub fn dangerous_kind(name: &str) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    let ext = ext.trim().to_ascii_lowercase();
    (!stem.is_empty() && DANGEROUS.contains(&ext.as_str())).then_some(ext)
}

/// The name a download is kept under: `name` itself, or for a dangerous kind `name.inert`.
pub fn inert_name(name: &str) -> (String, Option<Inert>) {
    match dangerous_kind(name) {
        Some(kind) => {
            let kept = format!("{name}.inert");
            (kept.clone(), Some(Inert { kind, name: kept }))
        }
        None => (name.to_string(), None),
    }
}

/// Take every execute bit off a kept file (Unix; elsewhere the name alone keeps it inert).
pub fn strip_exec(path: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o666))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_and_scripts_are_kept_inert_documents_are_not() {
        assert_eq!(dangerous_kind("setup.EXE").as_deref(), Some("exe"));
        assert_eq!(dangerous_kind("install.sh").as_deref(), Some("sh"));
        assert_eq!(dangerous_kind("report.pdf"), None);
        assert_eq!(dangerous_kind("exe"), None);
        assert_eq!(dangerous_kind(".bashrc"), None);
        let (name, inert) = inert_name("run.bat");
        assert_eq!(name, "run.bat.inert");
        assert_eq!(inert.unwrap().kind, "bat");
        assert_eq!(inert_name("data.csv"), ("data.csv".to_string(), None));
        // The kept name itself is not dangerous: `.inert` opens nothing.
        assert_eq!(dangerous_kind("run.bat.inert"), None);
    }
}
