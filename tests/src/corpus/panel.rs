//! Panel (PyPI `panel`, HoloViz): the garden-order app of `tests/corpus/panel/app.py`, its
//! widgets Bokeh models in shadow roots and its plot a Bokeh canvas, served on 127.0.0.1,
//! and its true state: the `state.json` its own watchers write in its folder.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::{free_port, python_of, Served};

/// The garden-order app, served until dropped.
pub struct Panel {
    pub served: Served,
}

impl Panel {
    pub fn start() -> Panel {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join("panel")
            .join("app.py");
        let dir = tempfile::tempdir().expect("app folder");
        // `panel serve` checks the page's origin on its websocket, so it must know the port.
        let port = free_port();
        let origin = format!("127.0.0.1:{port}");
        let mut cmd = Command::new(python_of("panel"));
        cmd.args(["-m", "panel", "serve"])
            .arg(&script)
            .args(["--address", "127.0.0.1", "--port", &port.to_string()])
            .args(["--allow-websocket-origin", &origin])
            .env("HOME", dir.path());
        Panel {
            served: Served::start(cmd, port, dir, "/app", Duration::from_secs(60)),
        }
    }

    /// The app's page (`panel serve` names it after the script).
    pub fn url(&self) -> String {
        self.served.url("/app")
    }

    /// What the app's watchers wrote (`{changes, orders, form}`), `null` before any change.
    pub fn state(&self) -> Value {
        super::streamlit::read_state(self.served.dir.path())
    }

    /// The Python of the app's venv (it has Pillow): the agent's eyes on a screenshot.
    pub fn python(&self) -> std::path::PathBuf {
        python_of("panel")
    }
}
