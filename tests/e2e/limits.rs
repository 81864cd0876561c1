//! Limits and settings a person sets in the policy file, exercised as an agent meets them:
//! a download over the size cap refused and removed, a program kept inert, the person's
//! masking pattern, the screenshot folder, the default tool timeout, a bad value refused at
//! start with its code; and the viewport-only list of what can be acted on, a page at a time.

use std::time::{Duration, Instant};

use kapture_e2e::{eventually, kapture_bin, Engine, Kapture};
use serde_json::json;
use www_test_pages::Site;

kapture_e2e::on_both_engines! {
    policy_file_limits_hold_for_downloads_masks_screenshots_and_timeouts_on => policy_file_limits_hold_for_downloads_masks_screenshots_and_timeouts, policy_file_limits_hold_for_downloads_masks_screenshots_and_timeouts_natively;
    the_viewport_list_shows_what_is_in_view_a_page_at_a_time_on => the_viewport_list_shows_what_is_in_view_a_page_at_a_time, the_viewport_list_shows_what_is_in_view_a_page_at_a_time_natively;
}

/// Names of the files in `dir`.
fn names(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

async fn policy_file_limits_hold_for_downloads_masks_screenshots_and_timeouts_on(engine: Engine) {
    let site = Site::start().unwrap();
    let pages = tempfile::tempdir().unwrap();
    std::fs::write(
        pages.path().join("badge.html"),
        "<!doctype html><title>Badge</title><p>Holder EMP-123456 since 2020</p>",
    )
    .unwrap();
    let own = Site::serve_folder(pages.path().to_path_buf()).unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let shots = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let policy = config.path().join("policy.toml");
    // `/attachment/<name>` answers "attachment body of <name>\n": 29 bytes for setup.bat.
    std::fs::write(
        &policy,
        format!(
            "download_max_bytes = 40\ntool_timeout_ms = 2000\nscreenshot_dir = {:?}\n\n[[mask]]\nkind = \"employee-id\"\npattern = \"EMP-[0-9]{{6}}\"\n",
            shots.path().display().to_string()
        ),
    )
    .unwrap();
    let dir = downloads.path().display().to_string();
    let k = Kapture::launch_on_with(
        engine,
        &["--policy", policy.to_str().unwrap(), "--download-dir", &dir],
    )
    .await;
    k.ok("browser_navigate", json!({"url": site.url("index.html")}))
        .await;

    // Over the cap: refused with its code, nothing kept.
    let big = site.url("attachment/a-report-with-a-rather-long-name.txt");
    let out = k.call("browser_download", json!({"url": big})).await;
    assert_eq!(
        out.code().as_deref(),
        Some("DOWNLOAD_TOO_LARGE"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("over the cap of 40 bytes"),
        "{}",
        out.text
    );
    // The browser deletes its partial file a moment after the cancel.
    let folder = downloads.path().to_path_buf();
    eventually(
        "the refused download's file to go",
        Duration::from_secs(5),
        || {
            let left = names(&folder);
            async move { left.is_empty().then_some(()) }
        },
    )
    .await;

    // A script: kept inert under a name nothing runs, without execute permission.
    let out = k
        .ok(
            "browser_download",
            json!({"url": site.url("attachment/setup.bat")}),
        )
        .await;
    assert!(out.contains("inert: a .bat file runs code"), "{out}");
    assert_eq!(names(downloads.path()), ["setup.bat.inert"], "{out}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(downloads.path().join("setup.bat.inert"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0, "executable: {mode:o}");
    }

    // The person's pattern masks the page's value in answers.
    k.ok("browser_navigate", json!({"url": own.url("badge.html")}))
        .await;
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert!(
        snap.contains("[redacted:employee-id]") && !snap.contains("EMP-123456"),
        "{snap}"
    );

    // Screenshots are also saved in the folder, named in the answer.
    let shot = k.call("browser_take_screenshot", json!({})).await;
    assert!(!shot.is_error, "{}", shot.text);
    assert!(shot.text.contains("saved: "), "{}", shot.text);
    let saved = names(shots.path());
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(saved[0].starts_with("screenshot-") && saved[0].ends_with(".jpg"));

    // A call without timeoutMs gets the file's timeout, not the 30 s default.
    let started = Instant::now();
    let out = k
        .call(
            "browser_evaluate",
            json!({"function": "() => new Promise(() => {})"}),
        )
        .await;
    let ms = started.elapsed().as_millis();
    assert_eq!(out.code().as_deref(), Some("TIMEOUT"), "{}", out.text);
    assert!(ms < 10_000, "the policy's timeout was not used: {ms} ms");
    k.stop().await;

    // A bad value stops kapture at start, with its code, line and a hint.
    std::fs::write(&policy, "# limits\ndownload_max_bytes = 0\n").unwrap();
    let out = tokio::process::Command::new(kapture_bin())
        .args(["--browser", "connect", "--policy"])
        .arg(&policy)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad setting stops kapture: {err}");
    assert!(
        err.contains("POLICY_BAD_VALUE") && err.contains("line 2") && err.contains("hint:"),
        "{err}"
    );
}

async fn the_viewport_list_shows_what_is_in_view_a_page_at_a_time_on(engine: Engine) {
    let pages = tempfile::tempdir().unwrap();
    // 40 buttons, 100 px apart: a viewport shows a handful of them.
    let buttons: String = (0..40)
        .map(|i| {
            format!("<button style=\"display:block;height:90px;margin:10px\">Button {i}</button>")
        })
        .collect();
    std::fs::write(
        pages.path().join("tall.html"),
        format!("<!doctype html><title>Tall</title><body style=\"margin:0\">{buttons}</body>"),
    )
    .unwrap();
    let site = Site::serve_folder(pages.path().to_path_buf()).unwrap();
    let k = Kapture::launch_on(engine).await;
    k.ok("browser_navigate", json!({"url": site.url("tall.html")}))
        .await;
    let all = k
        .ok("browser_snapshot", json!({"interactiveOnly": true}))
        .await;
    assert!(all.contains("\"Button 39\""), "{all}");
    let first = k
        .ok("browser_snapshot", json!({"viewportOnly": true, "max": 3}))
        .await;
    assert!(
        first.contains("\"Button 0\"")
            && first.contains("\"Button 2\"")
            && !first.contains("\"Button 3\""),
        "{first}"
    );
    assert!(
        first.contains("More: browser_snapshot {viewportOnly: true, max: 3, offset: 3}"),
        "{first}"
    );
    let next = k
        .ok(
            "browser_snapshot",
            json!({"viewportOnly": true, "max": 3, "offset": 3}),
        )
        .await;
    assert!(next.contains("\"Button 3\""), "{next}");
    let in_view = k
        .ok("browser_snapshot", json!({"viewportOnly": true}))
        .await;
    assert!(!in_view.contains("\"Button 39\""), "{in_view}");
    // Scrolled to the end, the last ones are in view and the first are not.
    k.ok(
        "browser_evaluate",
        json!({"function": "() => { scrollTo(0, document.body.scrollHeight); return scrollY; }"}),
    )
    .await;
    let end = k
        .ok("browser_snapshot", json!({"viewportOnly": true}))
        .await;
    assert!(
        end.contains("\"Button 39\"") && !end.contains("\"Button 0\""),
        "{end}"
    );
}
