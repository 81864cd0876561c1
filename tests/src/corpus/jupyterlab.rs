//! JupyterLab (PyPI `jupyterlab` with `ipykernel`) for the corpus: a notebook IDE served
//! token-less on 127.0.0.1 from a throwaway folder holding one seeded notebook, with every
//! Jupyter folder (config, data, runtime, settings, workspaces) inside it so no setting of
//! the person running the tests applies and nothing reaches the network (no news, no
//! update check, no extension manager). The truth is the notebook files on disk.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use super::{free_port, python_of, Served};

/// The seeded notebook: one empty code cell and a Python kernelspec, so opening it starts
/// its kernel without a kernel picker.
pub const NOTEBOOK: &str = "analysis.ipynb";

const SEEDED: &str = r#"{
 "cells": [
  {"cell_type": "code", "execution_count": null, "id": "c0ffee00", "metadata": {}, "outputs": [], "source": []}
 ],
 "metadata": {
  "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
  "language_info": {"name": "python"}
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"#;

/// A JupyterLab server, stopped (with its kernels) when dropped.
pub struct JupyterLab {
    served: Served,
}

impl JupyterLab {
    pub fn start() -> JupyterLab {
        let python = python_of("jupyterlab");
        let dir = tempfile::tempdir().expect("lab folder");
        let at = |p: &str| dir.path().join(p);
        for sub in [
            "notebooks",
            "config",
            "data",
            "runtime",
            "workspaces",
            "ipython",
        ] {
            std::fs::create_dir_all(at(sub)).expect("lab folder");
        }
        std::fs::write(at("notebooks").join(NOTEBOOK), SEEDED).expect("seed the notebook");
        // The news toast ("get notified about official Jupyter news?") asks once per
        // person: answered "no" here, as a person who had used Lab before would have.
        let notification = at("settings/@jupyterlab/apputils-extension");
        std::fs::create_dir_all(&notification).expect("settings folder");
        std::fs::write(
            notification.join("notification.jupyterlab-settings"),
            r#"{"fetchNews": "false", "checkForUpdates": false}"#,
        )
        .expect("settings");
        let port = free_port();
        let config = json!({
            "ServerApp": {
                "ip": "127.0.0.1",
                "port": port,
                "port_retries": 0,
                "open_browser": false,
                // CI runs as root.
                "allow_root": true,
                "root_dir": at("notebooks"),
                "password": "",
            },
            "IdentityProvider": {"token": ""},
            "LabApp": {
                "news_url": null,
                "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
                "extension_manager": "readonly",
                "user_settings_dir": at("settings"),
                "workspaces_dir": at("workspaces"),
            },
        });
        std::fs::write(
            at("config").join("jupyter_server_config.json"),
            serde_json::to_string_pretty(&config).expect("config"),
        )
        .expect("write the config");
        let mut cmd = Command::new(python);
        cmd.args(["-m", "jupyterlab"])
            .env("JUPYTER_CONFIG_DIR", at("config"))
            .env("JUPYTER_DATA_DIR", at("data"))
            .env("JUPYTER_RUNTIME_DIR", at("runtime"))
            .env("JUPYTER_PLATFORM_DIRS", "1")
            .env("IPYTHONDIR", at("ipython"))
            .env_remove("JUPYTER_PATH")
            .env_remove("JUPYTER_CONFIG_PATH");
        let served = Served::start(cmd, port, dir, "/lab", Duration::from_secs(60));
        JupyterLab { served }
    }

    /// An address on the server, e.g. `url("/lab/tree/analysis.ipynb")`.
    pub fn url(&self, path: &str) -> String {
        self.served.url(path)
    }

    /// The folder the notebooks are served from.
    pub fn root(&self) -> PathBuf {
        self.served.dir.path().join("notebooks")
    }

    /// The notebook `name` as saved on disk, parsed; `None` if there is no such file (or it
    /// is half-written).
    pub fn notebook(&self, name: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.root().join(name)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The names of the files in the served folder, sorted.
    pub fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The server's log so far, for failure messages.
    pub fn log_tail(&self) -> String {
        self.served.log_tail()
    }
}

/// A cell's source as one text (the format stores a string or a list of lines).
pub fn source_of(cell: &Value) -> String {
    match &cell["source"] {
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

/// A cell's stream and result outputs as one text.
pub fn output_text(cell: &Value) -> String {
    let text = |v: &Value| match v {
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect::<String>(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    };
    cell["outputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            if o["output_type"] == "stream" {
                text(&o["text"])
            } else {
                text(&o["data"]["text/plain"])
            }
        })
        .collect()
}
