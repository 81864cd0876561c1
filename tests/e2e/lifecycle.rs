//! Pairing and process life: the launched browser pairs with no human step, two servers
//! both work, exit cleans up, and the human subcommands answer.

use std::time::Duration;

use kapture_e2e::{
    children_of, eventually, handshakes_in, kapture_bin, process_alive, Kapture, Start,
};
use serde_json::json;
use www_test_pages::Site;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_closes_the_browser_and_removes_the_handshake_and_profile() {
    let k = Kapture::launch().await;
    k.ok("browser_tabs", json!({"action": "list"})).await;
    let hs = k.handshakes();
    assert_eq!(hs.len(), 1);
    assert_eq!(hs[0]["pid"].as_u64(), Some(u64::from(k.pid)));
    let browsers = children_of(k.pid);
    assert!(!browsers.is_empty(), "kapture launched a browser");
    let profile = k.browser_profile().display().to_string();
    assert!(std::path::Path::new(&profile)
        .join("NativeMessagingHosts/com.kapture.bridge.json")
        .is_file());

    let runtime = k.runtime_dir.path().to_path_buf();
    k.stop().await;
    assert!(handshakes_in(&runtime).is_empty(), "handshake file removed");
    for pid in browsers {
        eventually(
            "the launched browser to exit",
            Duration::from_secs(10),
            || async move { (!process_alive(pid)).then_some(()) },
        )
        .await;
    }
    assert!(
        !std::path::Path::new(&profile).exists(),
        "temporary profile deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_both_work_and_one_extension_serves_both() {
    let site = Site::start().unwrap();
    let shared = tempfile::tempdir().unwrap();
    let first = Kapture::start(Start {
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    first
        .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    // A second server in connect mode: its own port and file; the first one's browser finds it.
    let second = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "connect".into(),
            "--browser-wait-ms".into(),
            "40000".into(),
        ],
        runtime_dir: Some(shared.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    let files = handshakes_in(shared.path());
    assert_eq!(files.len(), 2, "{files:?}");
    assert_ne!(files[0]["port"], files[1]["port"]);
    assert_ne!(files[0]["token"], files[1]["token"]);

    let tabs = second.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        tabs.contains("Page A"),
        "the second server sees the first one's browser: {tabs}"
    );
    second
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-b.html")}),
        )
        .await;
    // Not its own browser: the connected policy applies (reads allowed, eval denied).
    let page = second.ok("browser_snapshot", json!({})).await;
    assert!(page.contains("Page B"), "{page}");
    assert_eq!(
        first.eval("document.title").await,
        "Page A",
        "each server keeps its own current tab"
    );
    second.stop().await;
    assert_eq!(
        first.eval("document.title").await,
        "Page A",
        "the first server is unaffected"
    );
    first.stop().await;
}

/// `kapture doctor`'s report with this runtime folder and config folder.
async fn doctor(runtime: &std::path::Path, config: &std::path::Path) -> String {
    let out = tokio::process::Command::new(kapture_bin())
        .args(["doctor", "--runtime-dir"])
        .arg(runtime)
        .env("XDG_CONFIG_HOME", config)
        .output()
        .await
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_and_help_answer_in_plain_words() {
    // Private, as kapture requires of a runtime folder (attacks_bridge.rs tests the others).
    let runtime = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let text = doctor(runtime.path(), config.path()).await;
    for expected in [
        "browser to launch: ",
        "extension: ",
        "extension id: djjhjaffgifolhomiafbjplbhmfblamg",
        "no kapture server is running",
        "policy file: ",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    // A malformed policy file is named with its line, by doctor and at start (never "allow all").
    let policy = config.path().join("kapture").join("policy.toml");
    std::fs::create_dir_all(policy.parent().unwrap()).unwrap();
    std::fs::write(&policy, "[[rule]]\norigin = \"a.com\"\nverdict = allow\n").unwrap();
    let text = doctor(runtime.path(), config.path()).await;
    assert!(text.contains("BAD") && text.contains("line 3"), "{text}");
    let out = tokio::process::Command::new(kapture_bin())
        .args(["--browser", "connect", "--runtime-dir"])
        .arg(runtime.path())
        .env("XDG_CONFIG_HOME", config.path())
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad policy file stops kapture");
    assert!(err.contains("line 3"), "{err}");
    let out = tokio::process::Command::new(kapture_bin())
        .arg("--help")
        .output()
        .await
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--browser",
        "--headless",
        "--chromium",
        "--user-data-dir",
        "--chromium-arg",
        "install",
        "doctor",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
    let out = tokio::process::Command::new(kapture_bin())
        .args(["--browser", "firefox"])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("firefox"));
}

/// Issue 16: a launched browser that dies at once is reported at once — its own last stderr
/// lines and the fix that fits (no usable display → headless) — not after the 30 s wait for
/// its extension, and not with a hint to start kapture the way it was started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_dies_at_once_is_reported_at_once_with_its_stderr_and_a_fix() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let dying = dir.path().join("dying-browser");
    std::fs::write(
        &dying,
        "#!/bin/sh\n\
         echo '[7:7:ERROR:bus.cc(407)] Failed to connect to the bus: no such file' >&2\n\
         echo '[7:7:ERROR:ozone_platform_x11.cc(240)] Missing X server or $DISPLAY' >&2\n\
         echo '[7:7:ERROR:env.cc(257)] The platform failed to initialize.  Exiting.' >&2\n\
         exit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&dying, std::fs::Permissions::from_mode(0o755)).unwrap();
    let k = Kapture::start(Start {
        args: vec![
            "--browser".into(),
            "launch".into(),
            "--chromium".into(),
            dying.display().to_string(),
        ],
        // A display is named, so kapture opens a window; the browser finds it unusable.
        env: vec![("DISPLAY".into(), ":99".into())],
        ..Start::default()
    })
    .await;
    let started = std::time::Instant::now();
    let out = k
        .call("browser_navigate", json!({"url": "http://127.0.0.1:1/"}))
        .await;
    let took = started.elapsed();
    eprintln!("answered in {took:?}: {}", out.text);
    assert_eq!(
        out.code().as_deref(),
        Some("BROWSER_EXITED"),
        "{}",
        out.text
    );
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    for expected in [
        "exited (exit status: 1)",
        "Missing X server or $DISPLAY",
        "The platform failed to initialize",
        "--headless",
    ] {
        assert!(
            out.text.contains(expected),
            "{expected:?} missing: {}",
            out.text
        );
    }
    assert!(
        !out.text.contains("Failed to connect to the bus"),
        "everyday noise is not quoted: {}",
        out.text
    );
    assert!(
        !out.text.contains("start kapture with --browser launch"),
        "{}",
        out.text
    );
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("exited (exit status: 1)"), "{status}");
    assert!(
        k.stderr().contains("Missing X server"),
        "said on kapture's stderr too"
    );
    k.stop().await;
}

/// Issue 16: without a display (DISPLAY and WAYLAND_DISPLAY unset), `--browser launch`
/// without `--headless` runs the browser headless on its own, says so, and works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_display_the_launched_browser_runs_headless_on_its_own() {
    let k = Kapture::start(Start {
        args: vec!["--browser".into(), "launch".into()],
        env: vec![
            ("DISPLAY".into(), String::new()),
            ("WAYLAND_DISPLAY".into(), String::new()),
        ],
        ..Start::default()
    })
    .await;
    k.ok("browser_tabs", json!({"action": "list"})).await;
    let status = k.ok("browser_status", json!({})).await;
    assert!(
        status.contains("headless, chosen because there is no display"),
        "{status}"
    );
    let said = k.stderr();
    assert_eq!(
        said.matches(
            "no display (DISPLAY and WAYLAND_DISPLAY are unset): the browser runs headless"
        )
        .count(),
        1,
        "said once on stderr: {said}"
    );
    k.stop().await;
}

/// The case issue 16 met: a real Chromium told to open a window where there is no X server
/// exits at once; the first tool call says so with Chromium's own words, in seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_chromium_without_its_display_is_reported_at_once() {
    let k = Kapture::start(Start {
        args: vec!["--browser".into(), "launch".into()],
        // Named, so kapture opens a window; no X server listens on display 987.
        env: vec![("DISPLAY".into(), ":987".into())],
        ..Start::default()
    })
    .await;
    let started = std::time::Instant::now();
    let out = k.call("browser_tabs", json!({"action": "list"})).await;
    let took = started.elapsed();
    eprintln!("answered in {took:?}: {}", out.text);
    assert_eq!(
        out.code().as_deref(),
        Some("BROWSER_EXITED"),
        "{}",
        out.text
    );
    assert!(took < Duration::from_secs(10), "answered after {took:?}");
    assert!(
        out.text.contains("Missing X server") && out.text.contains("--headless"),
        "{}",
        out.text
    );
    k.stop().await;
}

/// Google Chrome 137+ ignores `--load-extension`: kapture no longer refuses it but launches
/// it over its DevTools pipe (`engine_launch.rs` drives one). This one dies at once: its death
/// is reported as any launched browser's, never as a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_google_chrome_that_ignores_load_extension_is_launched_not_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let chrome = dir.path().join("google-chrome");
    let launched = dir.path().join("launched");
    std::fs::write(
        &chrome,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = --version ]; then echo 'Google Chrome 140.0.7339.80 '; exit 0; fi\n\
             echo \"$@\" > '{}'\n\
             echo 'fake chrome: giving up' >&2\n\
             exit 3\n",
            launched.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&chrome, std::fs::Permissions::from_mode(0o755)).unwrap();
    let k = Kapture::start(Start {
        args: vec!["--browser".into(), "launch".into(), "--headless".into()],
        env: vec![("KAPTURE_CHROMIUM".into(), chrome.display().to_string())],
        ..Start::default()
    })
    .await;
    let started = std::time::Instant::now();
    let out = k.call("browser_tabs", json!({"action": "list"})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("BROWSER_EXITED"),
        "{}",
        out.text
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        out.text.contains("exited (exit status: 3)") && out.text.contains("fake chrome: giving up"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("Chrome for Testing"), "{}", out.text);
    let args = std::fs::read_to_string(&launched).expect("it was started as a browser");
    assert!(
        args.contains("--remote-debugging-pipe")
            && args.contains("--enable-unsafe-extension-debugging")
            && !args.contains("--load-extension"),
        "{args}"
    );
    k.stop().await;
}
