//! Streamlit (PyPI `streamlit`): the coffee-order app of `tests/corpus/streamlit/app.py`,
//! laid out with Streamlit's own widgets and served on 127.0.0.1, and its true state: the
//! `state.json` its own callbacks write in its folder.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::{free_port, python_of, Served};

/// The coffee-order app, served until dropped.
pub struct Streamlit {
    pub served: Served,
}

impl Streamlit {
    pub fn start() -> Streamlit {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join("streamlit")
            .join("app.py");
        let dir = tempfile::tempdir().expect("app folder");
        // Streamlit takes no port 0: the OS picks a free one, Streamlit binds it a moment later.
        let port = free_port();
        let mut cmd = Command::new(python_of("streamlit"));
        cmd.args(["-m", "streamlit", "run"])
            .arg(&script)
            .args(["--server.port", &port.to_string()])
            .args([
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
                "--global.developmentMode",
                "false",
            ])
            // Its config and credentials folder (~/.streamlit) in the app's folder, not the user's.
            .env("HOME", dir.path());
        Streamlit {
            served: Served::start(cmd, port, dir, "/_stcore/health", Duration::from_secs(60)),
        }
    }

    /// The app's page.
    pub fn url(&self) -> String {
        self.served.url("/")
    }

    /// What the app's callbacks wrote (`{changes, orders, form}`), `null` before any change.
    pub fn state(&self) -> Value {
        read_state(self.served.dir.path())
    }
}

/// `state.json` in an app's folder, `null` when it is not there (yet).
pub fn read_state(dir: &Path) -> Value {
    std::fs::read_to_string(dir.join("state.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}
