//! NiceGUI (PyPI `nicegui`): the tea-order app of `tests/corpus/nicegui/app.py`, laid out
//! with NiceGUI's own Vue/Quasar widgets (two pages under client-side routing) and served
//! on 127.0.0.1, and its true state: the `state.json` its own handlers write in its folder.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::streamlit::read_state;
use super::{free_port, python_of, Served};

/// The tea-order app, served until dropped.
pub struct NiceGui {
    pub served: Served,
}

impl NiceGui {
    pub fn start() -> NiceGui {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join("nicegui")
            .join("app.py");
        let dir = tempfile::tempdir().expect("app folder");
        // NiceGUI (uvicorn under it) is told a port: the OS picks a free one first.
        let port = free_port();
        let mut cmd = Command::new(python_of("nicegui"));
        cmd.arg(&script)
            .arg(port.to_string())
            // Its storage folder (.nicegui) and caches in the app's folder, not the user's.
            .env("HOME", dir.path());
        NiceGui {
            served: Served::start(cmd, port, dir, "/", Duration::from_secs(60)),
        }
    }

    /// The app's order page (the root of its client-side routes).
    pub fn url(&self) -> String {
        self.served.url("/")
    }

    /// What the app's handlers wrote (`{changes, orders, feedback, form}`), `null` before
    /// any change.
    pub fn state(&self) -> Value {
        read_state(self.served.dir.path())
    }
}
