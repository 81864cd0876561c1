//! A headless Chromium started by a test with its DevTools on a port it picked (no fixed
//! ports): what `kapture --browser cdp --cdp-endpoint` attaches to, owned by the test.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{chromium, eventually, QUIET_CHROMIUM_FLAGS, RESOLVER_RULES};

/// A Chromium with `--remote-debugging-port=0` in a fresh profile; killed when dropped.
pub struct DevToolsBrowser {
    child: Child,
    profile: tempfile::TempDir,
}

impl DevToolsBrowser {
    /// Start one, resolving nothing but loopback.
    pub fn start() -> DevToolsBrowser {
        let profile = tempfile::tempdir().expect("profile dir");
        let child = Command::new(chromium())
            // The viewport a launched browser has by default (`--window-size`).
            .args([
                "--headless=new",
                "--remote-debugging-port=0",
                "--window-size=1280,720",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(QUIET_CHROMIUM_FLAGS)
            .arg(RESOLVER_RULES)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        DevToolsBrowser { child, profile }
    }

    /// `http://127.0.0.1:PORT`, the port read from `DevToolsActivePort` once written.
    pub async fn endpoint(&self) -> String {
        let file = self.profile.path().join("DevToolsActivePort");
        let port = eventually("DevToolsActivePort", Duration::from_secs(20), || {
            let file = file.clone();
            async move {
                let text = std::fs::read_to_string(&file).ok()?;
                let mut lines = text.lines();
                let port = lines.next()?.trim().parse::<u16>().ok()?;
                lines.next()?;
                Some(port)
            }
        })
        .await;
        format!("http://127.0.0.1:{port}")
    }

    pub fn profile(&self) -> &Path {
        self.profile.path()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the browser still runs (reaps it if it exited).
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kill it (a browser dying under kapture).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DevToolsBrowser {
    fn drop(&mut self) {
        self.kill();
    }
}
