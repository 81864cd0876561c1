//! Gradio (PyPI `gradio`): the bakery-order app of `tests/corpus/gradio/app.py`, laid out
//! with Gradio's own Svelte widgets and served on 127.0.0.1, and its true state: the
//! `state.json` its own listeners write in its folder.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::streamlit::read_state;
use super::{free_port, python_of, Served};

/// The bakery-order app, served until dropped.
pub struct Gradio {
    pub served: Served,
}

impl Gradio {
    pub fn start() -> Gradio {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join("gradio")
            .join("app.py");
        let dir = tempfile::tempdir().expect("app folder");
        // Gradio takes no port 0: the OS picks a free one, Gradio binds it a moment later.
        let port = free_port();
        let mut cmd = Command::new(python_of("gradio"));
        cmd.arg(&script)
            .arg(port.to_string())
            // No usage reports, no version check: the network is closed.
            .env("GRADIO_ANALYTICS_ENABLED", "False")
            // Its caches and temporary uploads in the app's folder, not the user's.
            .env("HOME", dir.path())
            .env("GRADIO_TEMP_DIR", dir.path().join("tmp"));
        Gradio {
            served: Served::start(cmd, port, dir, "/", Duration::from_secs(90)),
        }
    }

    /// The app's page.
    pub fn url(&self) -> String {
        self.served.url("/")
    }

    /// What the app's listeners wrote (`{changes, orders, messages, form}`), `null` before
    /// any change.
    pub fn state(&self) -> Value {
        read_state(self.served.dir.path())
    }
}
