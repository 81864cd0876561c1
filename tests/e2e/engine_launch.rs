//! Issue 16: a launched browser that ignores `--load-extension` (Google Chrome 137+) still
//! gets the extension, over its DevTools pipe (`Extensions.loadUnpacked`), and when the
//! extension cannot run there the native engine drives it over that same pipe; `--engine
//! native` drives a launched Chromium with no extension at all. Real headless Chromium
//! everywhere; "Google Chrome 140" is a wrapper that says so and runs it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kapture_e2e::{children_of, chromium, eventually, process_alive, Kapture, Start};
use serde_json::json;
use www_test_pages::Site;

/// The launched browser's command line.
fn browser_args(k: &Kapture) -> Vec<String> {
    let pid = *children_of(k.pid)
        .first()
        .expect("kapture launched a browser");
    std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split('\0')
        .map(str::to_string)
        .collect()
}

/// Whether the command line loads an extension by flag (Debian's chromium script adds an
/// empty `--load-extension=` of its own).
fn loads_by_flag(args: &[String]) -> bool {
    args.iter().any(|a| {
        a.strip_prefix("--load-extension=")
            .is_some_and(|d| !d.is_empty())
    })
}

/// A "Google Chrome 140" that runs the system Chromium with `extra` shell before the exec.
fn fake_chrome(dir: &Path, extra: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("google-chrome");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = --version ]; then echo 'Google Chrome 140.0.7339.80 '; exit 0; fi\n\
             {extra}\n\
             exec '{}' \"$@\"\n",
            chromium().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn launch(extra: &[&str]) -> Start {
    let mut start = Start::default();
    start.args.extend(extra.iter().map(|a| a.to_string()));
    start
}

/// Navigate, read and type on a page: the engine in use drives it.
async fn drive(k: &Kapture, site: &Site) {
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
}

/// kapture owns the browser it launched: it goes, with its profile, when kapture does.
async fn stop_and_check_the_browser_went(k: Kapture) {
    let browsers = children_of(k.pid);
    assert!(!browsers.is_empty());
    let profile = k.browser_profile();
    k.stop().await;
    for pid in browsers {
        eventually(
            "the launched browser to exit",
            Duration::from_secs(10),
            || async move { (!process_alive(pid)).then_some(()) },
        )
        .await;
    }
    assert!(!profile.exists(), "temporary profile deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_takes_the_extension_over_its_devtools_pipe_when_asked() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launch(&["--engine", "extension", "--extension-over-pipe"])).await;
    drive(&k, &site).await;
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("engine: the Kapture extension, loaded over the browser's DevTools pipe with Extensions.loadUnpacked, because --extension-over-pipe"),
        "{status}"
    );
    assert!(
        status.contains("extension: djjhjaffgifolhomiafbjplbhmfblamg")
            && status.contains("connected"),
        "{status}"
    );
    let args = browser_args(&k);
    assert!(
        args.iter().any(|a| a == "--remote-debugging-pipe"),
        "{args:?}"
    );
    assert!(
        !loads_by_flag(&args),
        "the extension came over the pipe only: {args:?}"
    );
    let said = k.stderr();
    // How long loading and connecting took, for the record.
    for line in said.lines().filter(|l| l.contains("took_ms")) {
        eprintln!("{line}");
    }
    assert_eq!(
        said.matches("engine: the Kapture extension, loaded over")
            .count(),
        1,
        "said once on stderr: {said}"
    );
    stop_and_check_the_browser_went(k).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_google_chrome_140_is_launched_with_the_extension_over_its_pipe() {
    let site = Site::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let chrome = fake_chrome(dir.path(), "");
    let mut start = launch(&[]);
    start
        .env
        .push(("KAPTURE_CHROMIUM".into(), chrome.display().to_string()));
    let k = Kapture::start(start).await;
    drive(&k, &site).await;
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("(Google Chrome, pid"), "{status}");
    assert!(
        status.contains("engine: the Kapture extension, loaded over the browser's DevTools pipe with Extensions.loadUnpacked, because Google Chrome 140 ignores --load-extension"),
        "{status}"
    );
    assert!(
        status.contains("extension: djjhjaffgifolhomiafbjplbhmfblamg"),
        "{status}"
    );
    let args = browser_args(&k);
    assert!(
        args.iter()
            .any(|a| a == "--enable-unsafe-extension-debugging"),
        "{args:?}"
    );
    stop_and_check_the_browser_went(k).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_google_chrome_140_the_extension_cannot_run_in_is_driven_by_the_native_engine() {
    let site = Site::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Extensions off (as a managed Chrome may have them), and the flag that offers
    // Extensions.loadUnpacked stripped: the extension never runs.
    let chrome = fake_chrome(
        dir.path(),
        "for a in \"$@\"; do shift; [ \"$a\" = --enable-unsafe-extension-debugging ] || set -- \"$@\" \"$a\"; done\n\
         set -- --disable-extensions \"$@\"",
    );
    let mut start = launch(&[]);
    start
        .env
        .push(("KAPTURE_CHROMIUM".into(), chrome.display().to_string()));
    let k = Kapture::start(start).await;
    // The first call waits for the engine to be chosen, then runs on the native one.
    drive(&k, &site).await;
    let status = k.ok("browser_status", json!({})).await;
    eprintln!("{status}");
    assert!(
        status.contains("engine: the native CDP engine over the browser's DevTools pipe, because"),
        "{status}"
    );
    assert!(
        status.contains("Google Chrome 140 ignores --load-extension"),
        "{status}"
    );
    assert!(
        status.contains(
            "engine: native CDP engine over the DevTools pipe of the browser kapture launched"
        ),
        "{status}"
    );
    let args = browser_args(&k);
    assert!(args.iter().any(|a| a == "--disable-extensions"), "{args:?}");
    let said = k.stderr();
    assert_eq!(
        said.matches("engine: the native CDP engine over the browser's DevTools pipe")
            .count(),
        1,
        "said once on stderr: {said}"
    );
    // Tabs are the browser's pages, as with the extension.
    let opened = k
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-a.html")}),
        )
        .await;
    assert!(opened.contains("Opened tab"), "{opened}");
    let list = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        list.contains("Page A") && list.contains("Sign up"),
        "{list}"
    );
    stop_and_check_the_browser_went(k).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_native_drives_a_launched_chromium_without_the_extension() {
    let site = Site::start().unwrap();
    let k = Kapture::start(launch(&["--engine", "native"])).await;
    drive(&k, &site).await;
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("engine: the native CDP engine over the browser's DevTools pipe, as asked (--engine native)"),
        "{status}"
    );
    let args = browser_args(&k);
    assert!(
        args.iter().any(|a| a == "--remote-debugging-pipe"),
        "{args:?}"
    );
    assert!(
        !loads_by_flag(&args) && !args.iter().any(|a| a.contains("unsafe-extension")),
        "no extension: {args:?}"
    );
    // No extension ever connected to kapture's bridge.
    assert!(!status.contains("extension: djjh"), "{status}");
    stop_and_check_the_browser_went(k).await;
}

/// The Windows route, taken here on purpose (`KAPTURE_DEVTOOLS_LINK=port`): kapture holds a
/// launched Google Chrome 140 by the loopback DevTools port it picked, loads the extension
/// over it, and with `--engine native` drives it over that port with no extension.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_browser_is_held_by_its_devtools_port_where_there_is_no_pipe() {
    let site = Site::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let chrome = fake_chrome(dir.path(), "");
    for (extra, engine) in [
        (&[][..], "engine: the Kapture extension, loaded over the browser's DevTools port with Extensions.loadUnpacked, because Google Chrome 140 ignores --load-extension"),
        (&["--engine", "native"][..], "engine: the native CDP engine over the browser's DevTools port, as asked (--engine native)"),
    ] {
        let mut start = launch(extra);
        start
            .env
            .push(("KAPTURE_CHROMIUM".into(), chrome.display().to_string()));
        start
            .env
            .push(("KAPTURE_DEVTOOLS_LINK".into(), "port".into()));
        let k = Kapture::start(start).await;
        drive(&k, &site).await;
        let status = k.ok("browser_status", json!({})).await;
        assert!(status.contains(engine), "{status}");
        let args = browser_args(&k);
        assert!(
            args.iter().any(|a| a == "--remote-debugging-port=0")
                && !args.iter().any(|a| a == "--remote-debugging-pipe"),
            "{args:?}"
        );
        stop_and_check_the_browser_went(k).await;
    }
}
