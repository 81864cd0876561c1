//! The command line of `kapture`: serve MCP (the default), or the human subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The default bridge port, used when free.
pub const DEFAULT_PORT: u16 = 61822;

#[derive(Debug, Parser)]
#[command(
    name = "kapture",
    version,
    about = "Let an AI agent drive a real browser over MCP, safely."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout (what MCP clients start; the default).
    Mcp(Box<ServeArgs>),
    /// Register the native-messaging host with Chrome, Chromium, Brave and Edge, and print
    /// the folder to load as an unpacked extension.
    Install(InstallArgs),
    /// Check the setup and say in plain words what is missing.
    Doctor(DoctorArgs),
    /// Show a one-time pairing code for a running kapture, to paste in the Kapture
    /// extension's options where native messaging cannot be registered (never the token).
    Pair(PairArgs),
    /// Print the panel's tool list (the build writes it into the extension as tools.json).
    #[command(hide = true)]
    PanelTools,
}

/// Which browser kapture drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserMode {
    /// Use a browser whose extension connects on its own; else launch one.
    Auto,
    /// Always launch a browser (with the extension) and drive it.
    Launch,
    /// Only drive a browser whose Kapture extension connects (your own browser).
    Connect,
    /// Drive a running browser (or a remote pool) through its DevTools endpoint with the
    /// native engine, no extension: needs `--cdp-endpoint`.
    Cdp,
}

/// Which engine drives a browser kapture launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// The extension (panel, recorder widget, approvals in the browser); when it cannot be
    /// loaded or does not connect, the native engine over the browser's DevTools pipe.
    Auto,
    /// Only the extension: a launch it cannot get into fails, saying why.
    Extension,
    /// The native engine over the browser's DevTools pipe, no extension (unix).
    Native,
}

/// A window size given as `WIDTHxHEIGHT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSize {
    pub width: u32,
    pub height: u32,
}

/// `1280x720` → a [`WindowSize`]; each side between 100 and 10000 pixels.
fn parse_window_size(text: &str) -> Result<WindowSize, String> {
    let (w, h) = text
        .split_once(['x', 'X', ','])
        .ok_or_else(|| format!("{text:?} is not WIDTHxHEIGHT, e.g. 1280x720"))?;
    let side = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (100..=10_000).contains(n))
            .ok_or_else(|| format!("{v:?} is not a size between 100 and 10000 pixels"))
    };
    Ok(WindowSize {
        width: side(w)?,
        height: side(h)?,
    })
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Which browser to drive.
    #[arg(long, value_enum, default_value_t = BrowserMode::Auto)]
    pub browser: BrowserMode,
    /// Run a launched browser without a window (chosen on its own on Linux when DISPLAY and
    /// WAYLAND_DISPLAY are unset).
    #[arg(long)]
    pub headless: bool,
    /// The browser executable to launch (default: $KAPTURE_CHROMIUM, else the first of
    /// Chromium, Chrome for Testing, Brave, Edge, Google Chrome found on PATH or in the usual
    /// install folders; Google Chrome 137+ ignores --load-extension, so the extension is
    /// loaded over its DevTools pipe instead).
    #[arg(long, value_name = "PATH")]
    pub chromium: Option<PathBuf>,
    /// Which engine drives a launched browser.
    #[arg(long, value_enum, value_name = "ENGINE", default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Load the extension into a launched browser over its DevTools pipe
    /// (Extensions.loadUnpacked), as for Google Chrome 137+, even when it honours
    /// --load-extension (unix).
    #[arg(long)]
    pub extension_over_pipe: bool,
    /// Hold a launched browser's DevTools pipe beside --load-extension (unix), so the native
    /// engine takes over while the extension is lost and hands back when it returns. Off by
    /// default: it costs about 8 ms per navigation, and a person watching the browser stops
    /// the agent by pressing Disconnect or turning the extension off.
    #[arg(long)]
    pub native_standby: bool,
    /// Profile folder of a launched browser (default: a fresh temporary one, deleted on exit).
    #[arg(long, value_name = "DIR")]
    pub user_data_dir: Option<PathBuf>,
    /// The launched browser's window, WIDTHxHEIGHT in CSS pixels; headless, that is the
    /// page's viewport (the 1280x720 agents and the peers assume).
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_window_size)]
    pub window_size: WindowSize,
    /// Extra argument for a launched browser (repeatable).
    #[arg(long = "chromium-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub chromium_args: Vec<String>,
    /// Bridge port on 127.0.0.1; 0 picks a free one. When the default is taken, a free one
    /// is picked as well.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Folder of the handshake files (default: $KAPTURE_RUNTIME_DIR, else
    /// $XDG_RUNTIME_DIR/kapture, else a per-user temp folder).
    #[arg(long, value_name = "DIR")]
    pub runtime_dir: Option<PathBuf>,
    /// The unpacked extension to load into a launched browser (default:
    /// $KAPTURE_EXTENSION_DIR, else `extension/` beside the binary's folder, else the one
    /// kapture carries, written out into <data folder>/extension/).
    #[arg(long, value_name = "DIR")]
    pub extension_dir: Option<PathBuf>,
    /// How long a tool call waits for a browser to be connected before failing with
    /// NO_BROWSER (default: 30000 when launching, 20000 in connect mode).
    #[arg(long, value_name = "MS")]
    pub browser_wait_ms: Option<u64>,
    /// Character budget of text answers (snapshots, text, HTML…) when a call names none.
    #[arg(long, value_name = "N", default_value_t = 25_000, value_parser = clap::value_parser!(u32).range(200..))]
    pub max_chars: u32,
    /// After every action, also answer the page snapshot (full) or what changed (diff).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = IncludeSnapshot::Off)]
    pub include_snapshot: IncludeSnapshot,
    /// How JavaScript dialogs (alert, confirm, prompt, beforeunload) are answered: the agent
    /// answers them (ask), or kapture accepts or dismisses them at once.
    #[arg(long, value_enum, value_name = "ANSWER", default_value_t = DialogPolicy::Ask)]
    pub dialog: DialogPolicy,
    /// Folder downloads and PDFs are saved into (default: the user's data folder, kapture/downloads).
    #[arg(long, value_name = "DIR")]
    pub download_dir: Option<PathBuf>,
    /// A folder files may be uploaded from (repeatable), besides the uploads folder in
    /// kapture's data folder (<data folder>/uploads). Hidden files and folders and
    /// kapture's own files are never uploaded.
    #[arg(long = "upload-dir", value_name = "DIR")]
    pub upload_dirs: Vec<PathBuf>,
    /// Show Authorization, Cookie and Set-Cookie header values in network details (redacted by default).
    #[arg(long)]
    pub reveal_sensitive_headers: bool,
    /// A dotenv file whose values are masked in every answer, as `[redacted:secrets-file]`.
    #[arg(long, value_name = "FILE")]
    pub secrets: Option<PathBuf>,
    /// Folder of the audit journal (audit.jsonl; default: the user's data folder, kapture).
    #[arg(long, value_name = "DIR")]
    pub audit_dir: Option<PathBuf>,
    /// Kapture's data folder: recorded scenarios and their sealed secrets (default: the
    /// user's data folder, kapture).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Policy file (TOML; default: <config dir>/kapture/policy.toml when it exists).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Allow a category on origins: `[category@]origin`, e.g. `eval@*.example.com` (repeatable).
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// Ask a person first: `[category@]origin` (repeatable).
    #[arg(long, value_name = "RULE")]
    pub ask: Vec<String>,
    /// Deny: `[category@]origin` (repeatable).
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
    /// Safe mode: deny every action that changes something (reads and navigation stay).
    #[arg(long)]
    pub read_only: bool,
    /// Allow everything everywhere, the user's own browser included.
    #[arg(long)]
    pub unsafe_allow_all: bool,
    /// How long an `ask` waits for a person before it is denied.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub approval_timeout_ms: u64,
    /// The DevTools endpoint `--browser cdp` drives: `http://host:port` (as given by
    /// `--remote-debugging-port`) or a `ws://…` browser URL (browserless, a Selenium Grid
    /// node's `se:cdp`, a hosted provider).
    #[arg(long, value_name = "URL", required_if_eq("browser", "cdp"))]
    pub cdp_endpoint: Option<String>,
    /// Whose browser is at `--cdp-endpoint`: `own` (it may be a person's, logged in: judged
    /// on the own-browser defaults) or `throwaway` (a pool's, a CI or test browser: judged
    /// on the launched-browser defaults).
    #[arg(long, value_enum, value_name = "WHOSE", default_value_t = EndpointBrowser::Own)]
    pub endpoint_browser: EndpointBrowser,
    /// Serve MCP over Streamable HTTP at http://ADDRESS:PORT/mcp (PORT 0: any free port)
    /// instead of stdio, with the Test Web App at /app; a bearer token is printed on stderr.
    /// Loopback only unless --http-allow-remote.
    #[arg(long, value_name = "ADDRESS:PORT")]
    pub http: Option<String>,
    /// Let --http listen on a non-loopback address (the token is still required).
    #[arg(long, requires = "http")]
    pub http_allow_remote: bool,
    /// How many MCP sessions --http keeps open at once; one more `initialize` is refused.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    pub http_max_sessions: u16,
    /// Seconds after which an --http session with no traffic is closed.
    #[arg(long, value_name = "SECS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    pub http_idle_secs: u64,
    /// How many TCP connections --http serves at once; one more is closed unread (a
    /// flood of stalled connections cannot take every file descriptor).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    pub http_max_connections: u16,
    /// Seconds an --http connection may take to send a request's headers, and may sit idle
    /// between requests, before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub http_header_secs: u64,
    /// Let MCP sessions drive each other's tabs (by default a session may drive only the
    /// tabs it opened or took first; also `share_tabs = true` in the policy file).
    #[arg(long)]
    pub share_tabs: bool,
    /// At most N steps (tool calls that are not read-only) per MCP session; a person may
    /// extend a spent budget in Kapture's side panel (also `max_steps = N` in the policy
    /// file; per-origin budgets: `[[budget]]` with `maxStepsPerHour`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: Option<u64>,
}

/// `--include-snapshot`: what to answer about the page after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IncludeSnapshot {
    /// Nothing beyond the action's own result.
    Off,
    /// The whole snapshot.
    Full,
    /// Only the lines that changed since the last snapshot.
    Diff,
}

/// Whose browser a DevTools endpoint serves (which default rules judge it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EndpointBrowser {
    /// Possibly a person's own: reads and navigation allowed, changes asked, eval denied.
    Own,
    /// Made to be driven (a pool, CI): everything allowed, eval off loopback asked.
    Throwaway,
}

/// Who answers JavaScript dialogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialogPolicy {
    Ask,
    Accept,
    Dismiss,
}

/// Browsers `install` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserFamily {
    Chrome,
    Chromium,
    Brave,
    Edge,
}

#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// Only these browsers (repeatable; default: all four).
    #[arg(long = "for", value_enum, value_name = "BROWSER")]
    pub browsers: Vec<BrowserFamily>,
    /// The unpacked extension folder to point at (default: as for serving).
    #[arg(long, value_name = "DIR")]
    pub extension_dir: Option<PathBuf>,
    /// Kapture's data folder, where the extension kapture carries is written out (default:
    /// as for serving).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Also write the extension without the `debugger` permission (reduced mode, for a
    /// browser whose policy blocks that permission) and point at it.
    #[arg(long)]
    pub without_debugger: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PairArgs {
    /// Folder of the running kaptures' handshake files (default: as for serving).
    #[arg(long, value_name = "DIR")]
    pub runtime_dir: Option<PathBuf>,
    /// The bridge port of the kapture to pair with, when several run.
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
}

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Folder of the handshake files to inspect.
    #[arg(long, value_name = "DIR")]
    pub runtime_dir: Option<PathBuf>,
    /// The unpacked extension folder to check.
    #[arg(long, value_name = "DIR")]
    pub extension_dir: Option<PathBuf>,
    /// Kapture's data folder, where the extension kapture carries is written out (default:
    /// as for serving).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The browser to check.
    #[arg(long, value_name = "PATH")]
    pub chromium: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("kapture").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn defaults_serve_mcp_in_auto_mode_on_the_default_port() {
        let cli = parse(&[]);
        assert!(cli.command.is_none());
        assert_eq!(cli.serve.browser, BrowserMode::Auto);
        assert_eq!(cli.serve.port, DEFAULT_PORT);
        assert!(!cli.serve.headless);
    }

    #[test]
    fn launch_flags_and_repeated_browser_args() {
        let cli = parse(&[
            "--browser",
            "launch",
            "--headless",
            "--chromium",
            "/usr/bin/chromium",
            "--chromium-arg",
            "--lang=en",
            "--chromium-arg=--mute-audio",
            "--port",
            "0",
        ]);
        assert_eq!(cli.serve.browser, BrowserMode::Launch);
        assert!(cli.serve.headless);
        assert_eq!(
            cli.serve.chromium.as_deref(),
            Some(std::path::Path::new("/usr/bin/chromium"))
        );
        assert_eq!(cli.serve.chromium_args, ["--lang=en", "--mute-audio"]);
        assert_eq!(
            parse_window_size("1280x720"),
            Ok(WindowSize {
                width: 1280,
                height: 720
            })
        );
        assert!(parse_window_size("1280").is_err());
        assert!(parse_window_size("5x720").is_err());
        assert_eq!(cli.serve.port, 0);
        assert_eq!(cli.serve.engine, EngineChoice::Auto);
        assert!(!cli.serve.extension_over_pipe);
        let cli = parse(&["--engine", "native", "--extension-over-pipe"]);
        assert_eq!(cli.serve.engine, EngineChoice::Native);
        assert!(cli.serve.extension_over_pipe);
    }

    #[test]
    fn upload_folders_repeat() {
        let cli = parse(&["--upload-dir", "/a", "--upload-dir=/b c"]);
        assert_eq!(
            cli.serve.upload_dirs,
            [PathBuf::from("/a"), PathBuf::from("/b c")]
        );
        assert!(parse(&[]).serve.upload_dirs.is_empty());
    }

    #[test]
    fn subcommands() {
        assert!(
            matches!(parse(&["mcp", "--browser", "connect"]).command, Some(Command::Mcp(a)) if a.browser == BrowserMode::Connect)
        );
        assert!(
            matches!(parse(&["install", "--for", "brave", "--for", "edge"]).command, Some(Command::Install(a)) if a.browsers == [BrowserFamily::Brave, BrowserFamily::Edge])
        );
        assert!(matches!(
            parse(&["doctor"]).command,
            Some(Command::Doctor(_))
        ));
    }

    #[test]
    fn http_flags() {
        let cli = parse(&[]);
        assert_eq!(cli.serve.http, None);
        assert_eq!(cli.serve.http_max_sessions, 16);
        assert_eq!(cli.serve.http_idle_secs, 900);
        assert_eq!(cli.serve.http_max_connections, 256);
        assert_eq!(cli.serve.http_header_secs, 10);
        let cli = parse(&[
            "--http",
            "127.0.0.1:0",
            "--http-max-sessions",
            "2",
            "--http-idle-secs=5",
        ]);
        assert_eq!(cli.serve.http.as_deref(), Some("127.0.0.1:0"));
        assert_eq!(cli.serve.http_max_sessions, 2);
        assert_eq!(cli.serve.http_idle_secs, 5);
        assert!(
            parse(&["--http", "0.0.0.0:1", "--http-allow-remote"])
                .serve
                .http_allow_remote
        );
    }

    #[test]
    fn bad_input_is_refused() {
        for args in [
            &["--browser", "firefox"][..],
            &["--port", "70000"],
            &["--engine", "webdriver"],
            &["frobnicate"],
            &["--http-allow-remote"],
            &["--http", "127.0.0.1:0", "--http-max-sessions", "0"],
            &["--http", "127.0.0.1:0", "--http-idle-secs", "0"],
        ] {
            assert!(
                Cli::try_parse_from(std::iter::once("kapture").chain(args.iter().copied()))
                    .is_err(),
                "{args:?}"
            );
        }
    }
}
