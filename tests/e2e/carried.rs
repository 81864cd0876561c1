//! The binary alone: copied into an empty folder (no extension beside it) with a fresh data
//! folder, kapture writes out the extension it carries, drives a page with it on the
//! extension engine, and `kapture install` points a person's browser at that same folder.

use std::path::{Path, PathBuf};

use kapture_e2e::{kapture_bin, Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

/// A copy of the built kapture in `dir`, with nothing beside it.
fn lone_copy(dir: &Path) -> PathBuf {
    let bin = dir.join(format!("kapture{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(kapture_bin(), &bin).expect("copy kapture");
    bin
}

/// The written-out extension folders under `data`.
fn written_out(data: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(data.join("extension"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_binary_writes_out_its_extension_and_drives_a_page_with_it() {
    let site = Site::start().unwrap();
    let lone = tempfile::tempdir().unwrap();
    let bin = lone_copy(lone.path());
    let data = tempfile::tempdir().unwrap();
    let start = || {
        let mut start = Start {
            bin: Some(bin.clone()),
            data_dir: Some(data.path().to_path_buf()),
            // Nothing from the build tree's environment points at target/extension.
            env: vec![("KAPTURE_EXTENSION_DIR".into(), String::new())],
            ..Start::default()
        };
        start.args.extend(["--engine".into(), "extension".into()]);
        start
    };
    let k = Kapture::start(start()).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert!(nav.contains("\"Sign up\""), "{nav}");
    let snap = k.ok("browser_snapshot", json!({})).await;
    let name = kapture_e2e::ref_on(&snap, "Name");
    k.ok("browser_type", json!({"ref": name, "text": "Ada"}))
        .await;
    assert_eq!(
        k.eval("() => document.getElementById('name').value").await,
        json!("Ada")
    );
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("extension: djjhjaffgifolhomiafbjplbhmfblamg")
            && status.contains("connected"),
        "the pinned id, connected: {status}"
    );
    k.stop().await;

    let folders = written_out(data.path());
    assert_eq!(folders.len(), 1, "one folder, no partial ones: {folders:?}");
    let folder = folders[0].clone();
    for file in ["manifest.json", "ext_core_bg.wasm", "service_worker.js"] {
        assert!(
            folder.join(file).is_file(),
            "{file} in {}",
            folder.display()
        );
    }
    // The panel's tool list comes from this binary, not from a file built beside it.
    let tools: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("tools.json")).unwrap()).unwrap();
    assert!(tools.to_string().contains("browser_navigate"), "{tools}");

    // A changed file is put right at the next start: the folder is the binary's again.
    let manifest = std::fs::read(folder.join("manifest.json")).unwrap();
    std::fs::write(folder.join("manifest.json"), b"{}").unwrap();
    let install = tokio::process::Command::new(&bin)
        .args(["install", "--for", "chromium", "--data-dir"])
        .arg(data.path())
        .env("KAPTURE_EXTENSION_DIR", "")
        .env("XDG_CONFIG_HOME", data.path().join("config"))
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&install.stdout);
    assert!(install.status.success(), "{said}");
    assert!(
        said.contains(&folder.display().to_string()),
        "install names the written-out folder {}: {said}",
        folder.display()
    );
    assert_eq!(
        std::fs::read(folder.join("manifest.json")).unwrap(),
        manifest
    );
    assert_eq!(written_out(data.path()), vec![folder]);
}
