//! Where Chromium-family browsers are installed on Linux, macOS and Windows, which kind each
//! is, and whether it loads the Kapture extension from `--load-extension`. Pure: the system,
//! its environment and its files are passed in, so unit tests cover all three systems anywhere.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The first Google Chrome that ignores `--load-extension` (official builds only; Chromium
/// and Chrome for Testing keep it).
pub const CHROME_IGNORES_LOAD_EXTENSION_FROM: u32 = 137;

/// How long `--version` may take (a snap's first start is slow).
const VERSION_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }

    fn sep(self) -> char {
        match self {
            Os::Windows => '\\',
            _ => '/',
        }
    }

    /// The last part of a path of this system (Windows paths read right on any system).
    fn name_of(self, p: &Path) -> String {
        let s = p.to_string_lossy();
        s.rsplit(self.sep()).next().unwrap_or_default().to_string()
    }

    /// The folder a path of this system is in.
    fn parent_of(self, p: &Path) -> Option<PathBuf> {
        let s = p.to_string_lossy();
        s.rsplit_once(self.sep()).map(|(dir, _)| PathBuf::from(dir))
    }
}

/// The system and environment discovery looks at.
#[derive(Debug, Clone)]
pub struct Env {
    pub os: Os,
    pub home: Option<PathBuf>,
    vars: Vec<(String, String)>,
}

impl Env {
    pub fn new(os: Os, home: Option<PathBuf>, vars: &[(&str, &str)]) -> Env {
        Env {
            os,
            home,
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// This process's system, home and environment.
    pub fn current() -> Env {
        Env {
            os: Os::current(),
            home: dirs::home_dir(),
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    /// A non-empty variable (names are case-insensitive on Windows).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| match self.os {
                Os::Windows => k.eq_ignore_ascii_case(name),
                _ => k == name,
            })
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// The file system as discovery sees it.
pub trait Files {
    /// An executable file (or what stands for one) is there.
    fn is_file(&self, path: &Path) -> bool;
    /// The entries of a folder (none when it is missing).
    fn children(&self, dir: &Path) -> Vec<PathBuf>;
    /// The path with symlinks resolved (two names of one install count once).
    fn canonical(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }
}

/// The real file system.
pub struct RealFiles;

impl Files for RealFiles {
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn children(&self, dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
            .unwrap_or_default()
    }

    fn canonical(&self, path: &Path) -> PathBuf {
        path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Which browser a path or a `--version` line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Chromium,
    ChromeForTesting,
    Brave,
    Edge,
    /// Google Chrome (any channel): official builds, `--load-extension` ignored from 137.
    Chrome,
    Unknown,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Chromium => "Chromium",
            Kind::ChromeForTesting => "Chrome for Testing",
            Kind::Brave => "Brave",
            Kind::Edge => "Microsoft Edge",
            Kind::Chrome => "Google Chrome",
            Kind::Unknown => "a Chromium-family browser",
        }
    }

    /// Order of preference: those that load the extension first.
    fn rank(self) -> u8 {
        match self {
            Kind::Chromium => 0,
            Kind::ChromeForTesting => 1,
            Kind::Brave => 2,
            Kind::Edge => 3,
            Kind::Unknown => 4,
            Kind::Chrome => 5,
        }
    }

    /// What a path says about the browser it leads to.
    pub fn of_path(path: &Path) -> Kind {
        let p = path.to_string_lossy().to_lowercase().replace('\\', "/");
        let has = |needles: &[&str]| needles.iter().any(|n| p.contains(n));
        if has(&[
            "chrome for testing",
            "chrome-linux64/",
            "chrome-win64/",
            "chrome-win32/",
            "chrome-mac-x64/",
            "chrome-mac-arm64/",
            "/puppeteer/chrome/",
        ]) {
            Kind::ChromeForTesting
        } else if has(&[
            "msedge",
            "microsoft-edge",
            "microsoft edge",
            "microsoft/edge",
        ]) {
            Kind::Edge
        } else if p.contains("brave") {
            Kind::Brave
        } else if p.contains("chromium") {
            Kind::Chromium
        } else if has(&[
            "google-chrome",
            "google chrome",
            "google/chrome",
            "com.google.chrome",
        ]) {
            Kind::Chrome
        } else {
            Kind::Unknown
        }
    }
}

/// What `--version` (or the install folder) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub kind: Kind,
    pub major: u32,
    /// The line as the browser printed it, e.g. `Chromium 156.0.7500.1`.
    pub text: String,
}

/// Read a `--version` answer: `Google Chrome 137.0.7151.55`, `Chromium 120.0.6099.224 snap`,
/// `Brave Browser 137.1.79.118` (the first number is Chromium's major everywhere).
pub fn parse_version(out: &str) -> Option<Version> {
    let line = out.lines().map(str::trim).find(|l| !l.is_empty())?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit()))?;
    let major = words[at].split('.').next()?.parse().ok()?;
    let product = words[..at].join(" ").to_lowercase();
    let kind = if product.contains("for testing") {
        Kind::ChromeForTesting
    } else if product.contains("chromium") {
        Kind::Chromium
    } else if product.contains("edge") {
        Kind::Edge
    } else if product.contains("brave") {
        Kind::Brave
    } else if product.contains("chrome") {
        Kind::Chrome
    } else {
        Kind::Unknown
    };
    Some(Version {
        kind,
        major,
        text: words[..=at].join(" "),
    })
}

/// Windows installs keep one folder per version beside the executable (`Application\137.0.…`);
/// there `--version` prints nothing (it would open a window), so the folder tells.
pub fn version_from_install(files: &impl Files, os: Os, exe: &Path, kind: Kind) -> Option<Version> {
    let dir = os.parent_of(exe)?;
    files
        .children(&dir)
        .iter()
        .filter_map(|c| {
            let name = os.name_of(c);
            let parts: Vec<&str> = name.split('.').collect();
            let numeric = parts.len() == 4 && parts.iter().all(|p| p.parse::<u32>().is_ok());
            numeric.then(|| (parts[0].parse::<u32>().unwrap_or(0), name.clone()))
        })
        .max()
        .map(|(major, name)| Version {
            kind,
            major,
            text: format!("{} {name}", kind.name()),
        })
}

/// Ask the browser its version (`--version`, bounded); `None` when it does not say.
pub fn probe_version(path: &Path) -> Option<Version> {
    let mut child = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + VERSION_TIMEOUT;
    // Bounded poll: std has no wait with a timeout.
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    parse_version(&out)
}

/// Does this browser load an unpacked extension given with `--load-extension`?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadsExtension {
    Yes,
    No,
    /// Not known (an unnamed build): worth a try.
    Unknown,
}

/// Chromium and Chrome for Testing keep `--load-extension`; official Google Chrome ignores
/// it from 137 (a Chrome whose version is unknown is taken as a current one). The block is
/// tied to Google Chrome's branding, so Edge and Brave are taken to keep it (assumed: Brave
/// is reported unaffected; nothing says Edge adopted it).
pub fn loads_extension(kind: Kind, major: Option<u32>) -> LoadsExtension {
    match kind {
        Kind::Chromium | Kind::ChromeForTesting | Kind::Brave | Kind::Edge => LoadsExtension::Yes,
        Kind::Chrome => match major {
            Some(m) if m < CHROME_IGNORES_LOAD_EXTENSION_FROM => LoadsExtension::Yes,
            _ => LoadsExtension::No,
        },
        Kind::Unknown => LoadsExtension::Unknown,
    }
}

/// A browser found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub kind: Kind,
    pub version: Option<Version>,
}

impl Found {
    /// A browser at `path`, its kind told by the path.
    pub fn at(path: PathBuf) -> Found {
        let kind = Kind::of_path(&path);
        Found {
            path,
            kind,
            version: None,
        }
    }

    /// Learn the version (and so the kind of a `chrome` of unknown origin).
    pub fn with_version(mut self, env: &Env, files: &impl Files) -> Found {
        let version = match env.os {
            Os::Windows => version_from_install(files, env.os, &self.path, self.kind),
            _ => probe_version(&self.path),
        };
        if let Some(v) = &version {
            if self.kind == Kind::Unknown || v.kind == Kind::ChromeForTesting {
                self.kind = v.kind;
            }
        }
        self.version = version;
        self
    }

    /// Whether a version probe can change what is known about it (only Chrome's version and
    /// an unnamed build's kind matter for `--load-extension`).
    pub fn needs_version(&self) -> bool {
        matches!(self.kind, Kind::Chrome | Kind::Unknown) && self.version.is_none()
    }

    pub fn loads_extension(&self) -> LoadsExtension {
        loads_extension(self.kind, self.version.as_ref().map(|v| v.major))
    }

    /// `Chromium 156.0.7500.1`, or the kind when the version is unknown.
    pub fn label(&self) -> String {
        match &self.version {
            Some(v) if v.kind == self.kind => v.text.clone(),
            Some(v) => format!("{} ({})", self.kind.name(), v.text),
            None => self.kind.name().to_string(),
        }
    }

    /// Which engine `--browser launch` (`--engine auto`) would drive it with on `os`, and why.
    pub fn engine(&self, os: Os) -> String {
        match self.loads_extension() {
            LoadsExtension::Yes => {
                "extension engine: it loads the Kapture extension (--load-extension)".into()
            }
            LoadsExtension::Unknown => {
                "extension engine if it loads --load-extension (an unnamed build: it is tried)"
                    .into()
            }
            LoadsExtension::No => {
                // Windows: a loopback port, as kapture cannot hand it a pipe there.
                let link = if os == Os::Windows { "port" } else { "pipe" };
                format!(
                    "extension engine, loaded over the DevTools {link} (Extensions.loadUnpacked), since {}; else the native CDP engine over that {link}",
                    chrome_refusal(self.version.as_ref().map(|v| v.major))
                )
            }
        }
    }
}

/// Why a Google Chrome cannot get the extension from the command line.
pub fn chrome_refusal(major: Option<u32>) -> String {
    let from = CHROME_IGNORES_LOAD_EXTENSION_FROM;
    match major {
        Some(m) => format!("Google Chrome {m} ignores --load-extension (since {from})"),
        None => {
            format!("Google Chrome ignores --load-extension since {from} (its version is unknown)")
        }
    }
}

/// Executable names looked for in PATH's folders and the usual `bin` folders, best first.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "brave-browser",
    "brave",
    "microsoft-edge",
    "microsoft-edge-stable",
    "microsoft-edge-beta",
    "microsoft-edge-dev",
    "chrome",
    "google-chrome",
    "google-chrome-stable",
    "google-chrome-beta",
    "google-chrome-unstable",
];

/// Names on Windows' PATH.
const WINDOWS_NAMES: &[&str] = &["chromium.exe", "brave.exe", "msedge.exe", "chrome.exe"];

fn join(os: Os, base: &str, parts: &[&str]) -> PathBuf {
    let sep = os.sep();
    let mut s = base.trim_end_matches(sep).to_string();
    for p in parts {
        s.push(sep);
        s.push_str(p);
    }
    PathBuf::from(s)
}

/// Every place a browser may be, in order of preference within its kind; nothing is
/// checked here except folders listed to find versioned installs (Chrome for Testing).
pub fn candidates(env: &Env, files: &impl Files) -> Vec<PathBuf> {
    let os = env.os;
    let mut out = Vec::new();
    let path_sep = if os == Os::Windows { ';' } else { ':' };
    let path_dirs: Vec<String> = env
        .var("PATH")
        .map(|p| {
            p.split(path_sep)
                .filter(|d| !d.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let names = if os == Os::Windows {
        WINDOWS_NAMES
    } else {
        NAMES
    };
    for dir in &path_dirs {
        out.extend(names.iter().map(|n| join(os, dir, &[n])));
    }
    let home = env.home.as_ref().map(|h| h.to_string_lossy().into_owned());
    match os {
        Os::Linux => {
            // MCP clients often start servers with a short PATH: the usual folders too.
            for dir in ["/usr/bin", "/usr/local/bin", "/snap/bin"] {
                out.extend(NAMES.iter().map(|n| join(os, dir, &[n])));
            }
            out.extend(
                [
                    "/opt/google/chrome/google-chrome",
                    "/opt/google/chrome-beta/google-chrome-beta",
                    "/opt/google/chrome-unstable/google-chrome-unstable",
                    "/opt/microsoft/msedge/microsoft-edge",
                    "/opt/microsoft/msedge-beta/microsoft-edge-beta",
                    "/opt/brave.com/brave/brave-browser",
                ]
                .map(PathBuf::from),
            );
            let flatpak = [
                "org.chromium.Chromium",
                "com.brave.Browser",
                "com.microsoft.Edge",
                "com.google.Chrome",
            ];
            let mut exports = vec!["/var/lib/flatpak/exports/bin".to_string()];
            if let Some(h) = &home {
                exports.push(format!("{h}/.local/share/flatpak/exports/bin"));
            }
            for dir in &exports {
                out.extend(flatpak.iter().map(|n| join(os, dir, &[n])));
            }
            if let Some(h) = &home {
                // Chrome for Testing as `npx @puppeteer/browsers install chrome@stable` and
                // Playwright leave it: one folder per version.
                let cache = format!("{h}/.cache");
                out.extend(versioned(
                    files,
                    os,
                    &join(os, &cache, &["puppeteer", "chrome"]),
                    &["chrome-linux64", "chrome"],
                ));
                for dir in newest_first(
                    files,
                    os,
                    &join(os, &cache, &["ms-playwright"]),
                    "chromium-",
                ) {
                    for sub in ["chrome-linux64", "chrome-linux"] {
                        out.push(join(os, &dir.to_string_lossy(), &[sub, "chrome"]));
                    }
                }
            }
        }
        Os::MacOs => {
            let apps = [
                "Chromium.app/Contents/MacOS/Chromium",
                "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
                "Brave Browser.app/Contents/MacOS/Brave Browser",
                "Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
                "Google Chrome.app/Contents/MacOS/Google Chrome",
                "Google Chrome Beta.app/Contents/MacOS/Google Chrome Beta",
                "Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
            ];
            let mut roots = vec!["/Applications".to_string()];
            if let Some(h) = &home {
                roots.push(format!("{h}/Applications"));
            }
            for root in &roots {
                out.extend(apps.iter().map(|a| join(os, root, &[a])));
            }
            if let Some(h) = &home {
                let cft = "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing";
                let base = join(os, h, &[".cache", "puppeteer", "chrome"]);
                for arch in ["chrome-mac-arm64", "chrome-mac-x64"] {
                    out.extend(versioned(files, os, &base, &[arch, cft]));
                }
            }
        }
        Os::Windows => {
            let mut roots: Vec<String> = ["LOCALAPPDATA", "ProgramFiles", "ProgramFiles(x86)"]
                .iter()
                .filter_map(|v| env.var(v).map(str::to_string))
                .collect();
            roots.dedup();
            let installs: [&[&str]; 6] = [
                &["Chromium", "Application", "chrome.exe"],
                &["BraveSoftware", "Brave-Browser", "Application", "brave.exe"],
                &["Microsoft", "Edge", "Application", "msedge.exe"],
                &["Google", "Chrome", "Application", "chrome.exe"],
                &["Google", "Chrome Beta", "Application", "chrome.exe"],
                &["Google", "Chrome SxS", "Application", "chrome.exe"],
            ];
            for parts in installs {
                out.extend(roots.iter().map(|r| join(os, r, parts)));
            }
            let profile = env.var("USERPROFILE").map(str::to_string).or(home);
            if let Some(h) = profile {
                let base = join(os, &h, &[".cache", "puppeteer", "chrome"]);
                out.extend(versioned(files, os, &base, &["chrome-win64", "chrome.exe"]));
            }
        }
    }
    out
}

/// The sub-folders of `dir` whose names start with `prefix`, newest (highest) first.
fn newest_first(files: &impl Files, os: Os, dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = files
        .children(dir)
        .into_iter()
        .filter(|c| os.name_of(c).starts_with(prefix))
        .collect();
    // Newest first by the numbers in the name (`linux-137.0.7151.55`, `chromium-1200`).
    let key = |p: &PathBuf| -> Vec<u64> {
        os.name_of(p)
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect()
    };
    dirs.sort_by_key(|p| std::cmp::Reverse(key(p)));
    dirs
}

/// `<base>/<one folder per version>/<rest…>`, newest version first.
fn versioned(files: &impl Files, os: Os, base: &Path, rest: &[&str]) -> Vec<PathBuf> {
    newest_first(files, os, base, "")
        .iter()
        .map(|d| join(os, &d.to_string_lossy(), rest))
        .collect()
}

/// The browsers installed here, each once, best first: those that load the extension
/// (Chromium, Chrome for Testing, Brave, Edge) before Google Chrome.
pub fn installed(env: &Env, files: &impl Files) -> Vec<Found> {
    let mut seen = HashSet::new();
    let mut found: Vec<Found> = candidates(env, files)
        .into_iter()
        .filter(|p| files.is_file(p) && seen.insert(files.canonical(p)))
        .map(Found::at)
        .collect();
    found.sort_by_key(|f| f.kind.rank());
    found
}

/// Is there a display a windowed browser can use? Linux needs `DISPLAY` or
/// `WAYLAND_DISPLAY`; macOS and Windows always have one.
pub fn has_display(env: &Env) -> bool {
    match env.os {
        Os::Linux => env.var("DISPLAY").is_some() || env.var("WAYLAND_DISPLAY").is_some(),
        Os::MacOs | Os::Windows => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A file system of the given files (folders are implied by them).
    struct Fake(BTreeSet<String>, Os);

    impl Fake {
        fn new(os: Os, files: &[&str]) -> Fake {
            Fake(files.iter().map(|f| f.to_string()).collect(), os)
        }
    }

    impl Files for Fake {
        fn is_file(&self, path: &Path) -> bool {
            self.0.contains(&*path.to_string_lossy())
        }

        fn children(&self, dir: &Path) -> Vec<PathBuf> {
            let prefix = format!("{}{}", dir.to_string_lossy(), self.1.sep());
            let mut out: Vec<PathBuf> = self
                .0
                .iter()
                .filter_map(|f| f.strip_prefix(&prefix))
                .filter_map(|rest| rest.split(self.1.sep()).next())
                .map(|name| PathBuf::from(format!("{prefix}{name}")))
                .collect();
            out.dedup();
            out
        }
    }

    fn paths(found: &[Found]) -> Vec<String> {
        found
            .iter()
            .map(|f| f.path.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn linux_finds_path_usual_folders_flatpak_and_chrome_for_testing_best_first() {
        let env = Env::new(
            Os::Linux,
            Some("/home/u".into()),
            &[("PATH", "/home/u/bin:/usr/bin")],
        );
        let fs = Fake::new(
            Os::Linux,
            &[
                "/usr/bin/google-chrome",
                "/opt/google/chrome/google-chrome",
                "/opt/microsoft/msedge/microsoft-edge",
                "/snap/bin/chromium",
                "/var/lib/flatpak/exports/bin/com.brave.Browser",
                "/home/u/.cache/puppeteer/chrome/linux-131.0.6778.85/chrome-linux64/chrome",
                "/home/u/.cache/puppeteer/chrome/linux-137.0.7151.55/chrome-linux64/chrome",
                "/home/u/.cache/puppeteer/chrome-headless-shell/linux-137.0.7151.55/chrome-headless-shell-linux64/chrome-headless-shell",
            ],
        );
        let found = installed(&env, &fs);
        assert_eq!(
            paths(&found),
            [
                "/snap/bin/chromium",
                "/home/u/.cache/puppeteer/chrome/linux-137.0.7151.55/chrome-linux64/chrome",
                "/home/u/.cache/puppeteer/chrome/linux-131.0.6778.85/chrome-linux64/chrome",
                "/var/lib/flatpak/exports/bin/com.brave.Browser",
                "/opt/microsoft/msedge/microsoft-edge",
                "/usr/bin/google-chrome",
                "/opt/google/chrome/google-chrome",
            ]
        );
        let kinds: Vec<Kind> = found.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Chromium,
                Kind::ChromeForTesting,
                Kind::ChromeForTesting,
                Kind::Brave,
                Kind::Edge,
                Kind::Chrome,
                Kind::Chrome
            ]
        );
    }

    #[test]
    fn linux_with_an_empty_path_still_finds_usr_bin() {
        let env = Env::new(Os::Linux, None, &[]);
        let fs = Fake::new(Os::Linux, &["/usr/bin/chromium-browser"]);
        assert_eq!(paths(&installed(&env, &fs)), ["/usr/bin/chromium-browser"]);
        assert!(installed(&env, &Fake::new(Os::Linux, &[])).is_empty());
    }

    #[test]
    fn macos_looks_in_both_applications_folders() {
        let env = Env::new(Os::MacOs, Some("/Users/u".into()), &[("PATH", "/usr/bin")]);
        let fs = Fake::new(
            Os::MacOs,
            &[
                "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
                "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
                "/Users/u/Applications/Chromium.app/Contents/MacOS/Chromium",
                "/Users/u/.cache/puppeteer/chrome/mac_arm-137.0.7151.55/chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
            ],
        );
        let found = installed(&env, &fs);
        let kinds: Vec<Kind> = found.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Chromium,
                Kind::ChromeForTesting,
                Kind::Edge,
                Kind::Chrome
            ]
        );
        assert_eq!(
            found[0].path,
            Path::new("/Users/u/Applications/Chromium.app/Contents/MacOS/Chromium")
        );
    }

    #[test]
    fn windows_looks_in_program_files_and_local_app_data() {
        let env = Env::new(
            Os::Windows,
            Some(r"C:\Users\u".into()),
            &[
                ("Path", r"C:\Windows\system32;C:\Windows"),
                ("ProgramFiles", r"C:\Program Files"),
                ("PROGRAMFILES(X86)", r"C:\Program Files (x86)"),
                ("LocalAppData", r"C:\Users\u\AppData\Local"),
            ],
        );
        let chrome = r"C:\Program Files\Google\Chrome\Application\chrome.exe";
        let fs = Fake::new(
            Os::Windows,
            &[
                chrome,
                r"C:\Program Files\Google\Chrome\Application\136.0.7103.114\chrome.dll",
                r"C:\Program Files\Google\Chrome\Application\137.0.7151.55\chrome.dll",
                r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
                r"C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe",
                r"C:\Users\u\AppData\Local\Chromium\Application\chrome.exe",
            ],
        );
        let found = installed(&env, &fs);
        assert_eq!(
            paths(&found),
            [
                r"C:\Users\u\AppData\Local\Chromium\Application\chrome.exe",
                r"C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe",
                r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
                chrome,
            ]
        );
        // The version is read from the install's folders, never by starting chrome.exe.
        let chrome = found[3].clone().with_version(&env, &fs);
        assert_eq!(chrome.version.as_ref().map(|v| v.major), Some(137));
        assert_eq!(chrome.loads_extension(), LoadsExtension::No);
        let windows = chrome.engine(Os::Windows);
        assert!(
            windows.contains("Google Chrome 137 ignores --load-extension")
                && windows.contains("loaded over the DevTools port"),
            "{windows}"
        );
        // Elsewhere the pipe takes the extension in, the native engine behind it.
        let linux = chrome.engine(Os::Linux);
        assert!(
            linux.contains("loaded over the DevTools pipe") && linux.contains("native CDP engine"),
            "{linux}"
        );
        assert_eq!(found[0].loads_extension(), LoadsExtension::Yes);
    }

    #[test]
    fn the_same_install_under_two_names_counts_once() {
        struct Linked(Fake);
        impl Files for Linked {
            fn is_file(&self, p: &Path) -> bool {
                self.0.is_file(p)
            }
            fn children(&self, d: &Path) -> Vec<PathBuf> {
                self.0.children(d)
            }
            fn canonical(&self, p: &Path) -> PathBuf {
                if p == Path::new("/usr/bin/google-chrome-stable") {
                    "/usr/bin/google-chrome".into()
                } else {
                    p.into()
                }
            }
        }
        let env = Env::new(Os::Linux, None, &[("PATH", "/usr/bin")]);
        let fs = Linked(Fake::new(
            Os::Linux,
            &["/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"],
        ));
        assert_eq!(paths(&installed(&env, &fs)), ["/usr/bin/google-chrome"]);
    }

    #[test]
    fn versions_name_the_kind_and_the_major() {
        let v = |s| parse_version(s).map(|v| (v.kind, v.major));
        assert_eq!(
            v("Chromium 156.0.7500.1 built on Debian GNU/Linux 13"),
            Some((Kind::Chromium, 156))
        );
        assert_eq!(
            v("Chromium 120.0.6099.224 snap\n"),
            Some((Kind::Chromium, 120))
        );
        assert_eq!(v("Google Chrome 137.0.7151.55 "), Some((Kind::Chrome, 137)));
        assert_eq!(
            v("Google Chrome for Testing 137.0.7151.55"),
            Some((Kind::ChromeForTesting, 137))
        );
        assert_eq!(v("Microsoft Edge 137.0.3296.52"), Some((Kind::Edge, 137)));
        assert_eq!(v("Brave Browser 137.1.79.118"), Some((Kind::Brave, 137)));
        assert_eq!(v(""), None);
        assert_eq!(v("[1:2:ERROR:x.cc(1)] Missing X server"), None);
        assert_eq!(
            parse_version("Chromium 156.0.7500.1 built on Debian")
                .unwrap()
                .text,
            "Chromium 156.0.7500.1"
        );
    }

    #[test]
    fn only_google_chrome_from_137_refuses_the_extension_flag() {
        use LoadsExtension::*;
        assert_eq!(loads_extension(Kind::Chrome, Some(136)), Yes);
        assert_eq!(loads_extension(Kind::Chrome, Some(137)), No);
        assert_eq!(loads_extension(Kind::Chrome, None), No);
        for kind in [
            Kind::Chromium,
            Kind::ChromeForTesting,
            Kind::Edge,
            Kind::Brave,
        ] {
            assert_eq!(loads_extension(kind, Some(150)), Yes, "{kind:?}");
        }
        assert_eq!(loads_extension(Kind::Unknown, None), Unknown);
    }

    #[test]
    fn kinds_from_paths() {
        for (path, kind) in [
            ("/usr/bin/chromium", Kind::Chromium),
            (
                "/home/u/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
                Kind::ChromeForTesting,
            ),
            ("/opt/google/chrome/google-chrome", Kind::Chrome),
            (
                "/var/lib/flatpak/exports/bin/com.google.Chrome",
                Kind::Chrome,
            ),
            (
                "/var/lib/flatpak/exports/bin/org.chromium.Chromium",
                Kind::Chromium,
            ),
            (
                r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
                Kind::Edge,
            ),
            ("/usr/local/bin/chrome", Kind::Unknown),
        ] {
            assert_eq!(Kind::of_path(Path::new(path)), kind, "{path}");
        }
    }

    #[test]
    fn a_display_is_needed_on_linux_only() {
        let linux = |vars: &[(&str, &str)]| has_display(&Env::new(Os::Linux, None, vars));
        assert!(!linux(&[]));
        assert!(!linux(&[("DISPLAY", "")]));
        assert!(linux(&[("DISPLAY", ":0")]));
        assert!(linux(&[("WAYLAND_DISPLAY", "wayland-0")]));
        assert!(has_display(&Env::new(Os::MacOs, None, &[])));
        assert!(has_display(&Env::new(Os::Windows, None, &[])));
    }
}
