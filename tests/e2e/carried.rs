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

/// `npm/pack.sh` for `bin`, installed from the packed files into a fresh project (no
/// registry): the launcher `kapture-mcp` and this platform's binary package.
async fn npm_install_packed(bin: &Path, work: &Path) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let packs = work.join("packs");
    let packed = tokio::process::Command::new("bash")
        .arg(repo.join("npm").join("pack.sh"))
        .arg(bin)
        .arg(&packs)
        .output()
        .await
        .unwrap();
    assert!(
        packed.status.success(),
        "npm/pack.sh: {}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let tarballs: Vec<PathBuf> = std::fs::read_dir(&packs)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(
        tarballs.len(),
        2,
        "the launcher and one platform package: {tarballs:?}"
    );
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("package.json"), "{\"private\": true}\n").unwrap();
    let installed = tokio::process::Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .args(&tarballs)
        .current_dir(&project)
        .output()
        .await
        .unwrap();
    assert!(
        installed.status.success(),
        "npm install: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    project.join("node_modules").join(".bin").join("kapture")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_packed_npm_packages_start_kapture_for_an_mcp_client() {
    if kapture_e2e::on_path("npm").is_none() || kapture_e2e::on_path("node").is_none() {
        eprintln!("skipped: npm is not installed, so the npm packages cannot be packed here");
        return;
    }
    let site = Site::start().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("built")).unwrap();
    let launcher = npm_install_packed(&lone_copy(&work.path().join("built")), work.path()).await;
    let data = tempfile::tempdir().unwrap();
    let mut start = Start {
        bin: Some(launcher),
        data_dir: Some(data.path().to_path_buf()),
        env: vec![("KAPTURE_EXTENSION_DIR".into(), String::new())],
        ..Start::default()
    };
    start.args.extend(["--engine".into(), "extension".into()]);
    let k = Kapture::start(start).await;
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert!(nav.contains("\"Sign up\""), "{nav}");
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("connected"), "{status}");
    // node runs the platform package's kapture, which goes when its client does.
    let children = kapture_e2e::children_of(k.pid);
    assert!(!children.is_empty(), "the launcher started kapture");
    k.stop().await;
    for pid in children {
        kapture_e2e::eventually(
            "the launcher's kapture to exit",
            std::time::Duration::from_secs(10),
            || async move { (!kapture_e2e::process_alive(pid)).then_some(()) },
        )
        .await;
    }
}
