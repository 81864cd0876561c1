//! Code export end to end: a login recorded in the real browser, exported with
//! `scenario_export`, runs on its own under Node's puppeteer-core, Playwright Test and
//! WebdriverIO (with the system's chromedriver) against the system Chromium, its secrets
//! only from the environment; a broken first locator falls back to the next; hostile strings
//! stay valid code in every format; unknown formats and names are BAD_ARGS. Needs `cargo
//! make setup` (npm ci in tests/node, and chromedriver).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use kapture_e2e::{on_path, Kapture, RESOLVER_RULES};
use serde_json::{json, Value};
use www_test_pages::Site;

const CANARY: &str = "Exp0rt-Canary-Pw!";

/// The npm packages `cargo make setup` installs from tests/node/package-lock.json.
fn node_modules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node")
        .join("node_modules")
}

/// The flags every exported script gets, one per line: the resolver rule holds spaces.
fn chromium_args() -> String {
    kapture_e2e::QUIET_CHROMIUM_FLAGS
        .iter()
        .copied()
        .chain([RESOLVER_RULES])
        .collect::<Vec<_>>()
        .join("\n")
}

/// A folder for scripts in which `import 'puppeteer-core'` resolves: ES modules ignore
/// NODE_PATH, so the installed node_modules is linked next to the script.
fn script_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink(node_modules(), dir.path().join("node_modules"))
        .expect("link node_modules");
    dir
}

/// Run a command for at most 60 s in its own process group; when time runs out the whole
/// group (node and the browser it launched) is killed and the test fails.
async fn run_bounded(mut cmd: tokio::process::Command, what: &str) -> Output {
    cmd.process_group(0)
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("{what} starts: {e}"));
    let pid = child.id().expect("child pid");
    match tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await {
        Ok(out) => out.unwrap_or_else(|e| panic!("{what}: {e}")),
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            panic!("{what} did not finish within 60 s");
        }
    }
}

/// An exported script with the browser settings of the tests and `env` on top.
fn node_command(
    dir: &Path,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .env("KAPTURE_CHROMIUM", kapture_e2e::chromium())
        .env("KAPTURE_CHROMIUM_ARGS", chromium_args())
        .env_remove("KAPTURE_HEADLESS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The script of a `scenario_export` answer (after its line about the environment).
async fn export(k: &Kapture, name: &str, format: &str) -> (String, String) {
    let answer = k
        .ok("scenario_export", json!({"name": name, "format": format}))
        .await;
    let (head, script) = answer
        .split_once("\n\n")
        .unwrap_or_else(|| panic!("no script in {answer}"));
    assert!(!head.contains('\n'), "one line names the variables: {head}");
    (head.to_string(), script.to_string())
}

/// The JSON line a script printed last.
fn result_line(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| {
            panic!(
                "no JSON line; stdout:\n{stdout}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exported_login_runs_on_its_own_with_secrets_from_the_environment() {
    if on_path("node").is_none() {
        eprintln!("skipped: node is not installed, so exported scripts cannot run here");
        return;
    }
    assert!(
        node_modules().join("puppeteer-core").is_dir(),
        "{} lacks puppeteer-core: run `cargo make setup`",
        node_modules().display()
    );
    let site = Site::start().unwrap();
    let login_url = site.url("login.html");
    let k = Kapture::launch().await;

    // A person logs in while the recorder runs.
    k.ok("browser_navigate", json!({"url": login_url})).await;
    k.ok("browser_recorder", json!({"action": "start"})).await;
    k.type_login("ada", CANARY).await;
    k.ok("browser_click", json!({"selector": "button"})).await;
    let saved = k
        .ok(
            "browser_recorder",
            json!({"action": "stop", "name": "export_login", "title": "Log in"}),
        )
        .await;
    assert!(saved.contains("Saved scenario export_login"), "{saved}");

    // The export names what it reads and holds no secret.
    let (head, script) = export(&k, "export_login", "puppeteer").await;
    assert!(
        head.contains("export_login.puppeteer.mjs")
            && head.contains("KAPTURE_SECRET_USERNAME")
            && head.contains("KAPTURE_SECRET_PASSWORD"),
        "{head}"
    );
    assert!(!script.contains(CANARY), "the canary is in the script");
    assert!(
        !script.contains("\"ada\""),
        "the recorded user is a secret too"
    );
    assert!(script.contains("::-p-aria("), "{script}");

    // It runs under puppeteer-core with the secrets from the environment.
    let dir = script_dir();
    std::fs::write(dir.path().join("login.mjs"), &script).unwrap();
    // The export carries no recorded values: its parameters come from the environment too.
    let secrets = [
        ("KAPTURE_SECRET_USERNAME", "grace"),
        ("KAPTURE_SECRET_PASSWORD", CANARY),
        ("KAPTURE_PARAM_NOTE", "hello world"),
    ];
    let out = run_bounded(
        node_command(dir.path(), "node", &["login.mjs"], &secrets),
        "the exported puppeteer script",
    )
    .await;
    assert!(out.status.success(), "{}", describe(&out));
    let result = result_line(&out);
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["url"], login_url.as_str(), "{result}");
    assert_eq!(result["title"], "Log in", "{result}");

    // Without its secret it stops at once, naming the variable and no value.
    let out = run_bounded(
        node_command(
            dir.path(),
            "node",
            &["login.mjs"],
            &[("KAPTURE_SECRET_USERNAME", "grace")],
        ),
        "the exported script without a secret",
    )
    .await;
    assert!(!out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("KAPTURE_SECRET_PASSWORD"), "{stderr}");
    assert_eq!(result_line(&out)["ok"], false);

    // A first locator that no longer matches falls back to the next one, as in Kapture's
    // own replay; a later navigation carries a secret and a parameter, both from the
    // script's environment (the recorded default is not exported), which shows both reached
    // the browser from the script's inputs.
    let mut edited: Value = serde_json::from_slice(
        &std::fs::read(k.data_dir().join("scenarios").join("export_login.json")).unwrap(),
    )
    .unwrap();
    edited["name"] = json!("export_broken");
    for (step, broken) in [
        (1, json!({"by": "css", "value": "#renamed-user"})),
        (3, json!({"by": "text", "value": "No such button"})),
    ] {
        let locators = edited["chain"][step]["params"]["locators"]
            .as_array_mut()
            .expect("recorded locators");
        locators.insert(0, broken);
    }
    edited["chain"]
        .as_array_mut()
        .unwrap()
        .push(json!({"method": "navigate", "params": {
            "url": format!("{}?who={{{{username}}}}&note={{{{note}}}}", site.url("page-a.html"))
        }}));
    edited["parameters"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "note", "default": "RECORDED-NOTE"}));
    std::fs::write(
        k.data_dir().join("scenarios").join("export_broken.json"),
        serde_json::to_vec(&edited).unwrap(),
    )
    .unwrap();
    let (head, script) = export(&k, "export_broken", "puppeteer").await;
    assert!(head.contains("KAPTURE_PARAM_NOTE"), "{head}");
    assert!(
        !script.contains("RECORDED-NOTE"),
        "what the person typed is not handed to the model in an export"
    );
    std::fs::write(dir.path().join("broken.mjs"), &script).unwrap();
    let out = run_bounded(
        node_command(dir.path(), "node", &["broken.mjs"], &secrets),
        "the script with broken first locators",
    )
    .await;
    assert!(out.status.success(), "{}", describe(&out));
    let result = result_line(&out);
    assert_eq!(
        result["url"],
        format!("{}?who=grace&note=hello%20world", site.url("page-a.html")),
        "{result}"
    );

    // With nothing but a broken locator the step fails, named, with a non-zero exit.
    edited["name"] = json!("export_dead");
    edited["chain"][1]["params"]["locators"] = json!([{"by": "css", "value": "#renamed-user"}]);
    std::fs::write(
        k.data_dir().join("scenarios").join("export_dead.json"),
        serde_json::to_vec(&edited).unwrap(),
    )
    .unwrap();
    let (_, script) = export(&k, "export_dead", "puppeteer").await;
    std::fs::write(dir.path().join("dead.mjs"), &script).unwrap();
    let out = run_bounded(
        node_command(dir.path(), "node", &["dead.mjs"], &secrets),
        "the script whose locators all fail",
    )
    .await;
    assert!(!out.status.success(), "{}", describe(&out));
    let error = result_line(&out)["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(error.contains("step 2 (type)"), "{error}");
    assert!(!error.contains(CANARY), "{error}");

    // The same login as a Playwright Test, run by its own runner.
    let (_, spec) = export(&k, "export_login", "playwright-ts").await;
    assert!(!spec.contains(CANARY));
    std::fs::write(dir.path().join("export_login.spec.ts"), &spec).unwrap();
    let cli = node_modules()
        .join("@playwright")
        .join("test")
        .join("cli.js");
    let out = run_bounded(
        node_command(
            dir.path(),
            "node",
            &[
                &cli.to_string_lossy(),
                "test",
                "export_login.spec.ts",
                "--reporter=line",
            ],
            &secrets,
        ),
        "the exported Playwright test",
    )
    .await;
    assert!(out.status.success(), "{}", describe(&out));
    let result = result_line(&out);
    assert_eq!(result["url"], login_url.as_str(), "{result}");

    // The same login under WebdriverIO (WebDriver classic through the system's chromedriver,
    // Debian's chromium-driver: WebdriverIO downloads no driver when CHROMEDRIVER_PATH names
    // one), its secrets from the environment as well.
    let chromedriver = on_path("chromedriver")
        .expect("chromedriver is missing: run `cargo make setup` (Debian's chromium-driver)");
    assert!(
        node_modules().join("webdriverio").is_dir(),
        "{} lacks webdriverio: run `cargo make setup`",
        node_modules().display()
    );
    let (head, wdio) = export(&k, "export_login", "webdriverio").await;
    assert!(head.contains("export_login.wdio.mjs"), "{head}");
    assert!(!wdio.contains(CANARY), "the canary is in the script");
    std::fs::write(dir.path().join("login.wdio.mjs"), &wdio).unwrap();
    let driver = chromedriver.to_string_lossy().to_string();
    let mut wdio_env = secrets.to_vec();
    wdio_env.push(("CHROMEDRIVER_PATH", driver.as_str()));
    let out = run_bounded(
        node_command(dir.path(), "node", &["login.wdio.mjs"], &wdio_env),
        "the exported WebdriverIO script",
    )
    .await;
    assert!(out.status.success(), "{}", describe(&out));
    let result = result_line(&out);
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["url"], login_url.as_str(), "{result}");
    assert_eq!(result["title"], "Log in", "{result}");

    // Hostile strings in every field still give valid code in every format.
    let evil = "q\"u'o`t${process.exit(7)}e\\s\n*/ # ''' \"\"\" \u{2028} {x}";
    let hostile = json!({
        "name": "export_hostile",
        "title": evil,
        "description": evil,
        "parameters": [{"name": "x", "default": evil}, {"name": "pw", "secret": true}],
        "chain": [
            {"method": "navigate", "params": {"url": format!("{}?q={evil}{{{{x}}}}", site.url("page-a.html"))}},
            {"method": "click", "params": {"locators": [
                {"by": "role", "value": ["button", evil]}, {"by": "label", "value": evil},
                {"by": "text", "value": evil}, {"by": "css", "value": evil},
                {"by": "xpath", "value": evil}, {"by": "test_id", "value": evil}
            ]}},
            {"method": "type", "params": {"locators": [{"by": "id", "value": evil}], "text": format!("{evil}{{{{pw}}}}")}},
            {"method": evil, "params": {}}
        ]
    });
    std::fs::write(
        k.data_dir().join("scenarios").join("export_hostile.json"),
        serde_json::to_vec(&hostile).unwrap(),
    )
    .unwrap();
    for (format, file) in [
        ("puppeteer", "hostile.mjs"),
        ("webdriverio", "hostile.wdio.mjs"),
        ("playwright-ts", "hostile.spec.ts"),
        ("playwright-python", "hostile.py"),
    ] {
        let (_, script) = export(&k, "export_hostile", format).await;
        std::fs::write(dir.path().join(file), &script).unwrap();
        let cli = cli.to_string_lossy().to_string();
        let check: Option<(&str, Vec<&str>)> = match format {
            "playwright-ts" => Some(("node", vec![&cli, "test", file, "--list"])),
            "playwright-python" => {
                on_path("python3").map(|_| ("python3", vec!["-m", "py_compile", file]))
            }
            _ => Some(("node", vec!["--check", file])),
        };
        let Some((program, args)) = check else {
            eprintln!("python3 is missing: {file} not compiled");
            continue;
        };
        let out = run_bounded(
            node_command(dir.path(), program, &args, &[]),
            &format!("the syntax check of {file}"),
        )
        .await;
        assert!(out.status.success(), "{format}: {}", describe(&out));
    }

    // Unknown formats and names are the caller's mistake.
    let wrong = k
        .call(
            "scenario_export",
            json!({"name": "export_login", "format": "cypress"}),
        )
        .await;
    assert_eq!(wrong.code().as_deref(), Some("BAD_ARGS"), "{}", wrong.text);
    assert!(
        wrong.text.contains("playwright-ts") && wrong.text.contains("webdriverio"),
        "{}",
        wrong.text
    );
    for name in ["nope", "../export_login"] {
        assert_eq!(
            k.fails(
                "scenario_export",
                json!({"name": name, "format": "puppeteer"})
            )
            .await,
            "BAD_ARGS"
        );
    }
    k.stop().await;
}

/// The agent's own session: its steps and its code are resources, refs come back as role
/// locators, and the code runs on its own (the typed password read from the environment).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_log_is_a_resource_and_its_code_runs() {
    let site = Site::start().unwrap();
    let k = Kapture::launch().await;
    let uris = k.resource_uris().await;
    assert!(
        uris.contains(&"kapture://session/current/steps".to_string())
            && uris.contains(&"kapture://session/current/code".to_string()),
        "{uris:?}"
    );
    k.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    let snapshot = k.ok("browser_snapshot", json!({})).await;
    let user = kapture_e2e::ref_on(&snapshot, "textbox \"User\"");
    k.ok("browser_type", json!({"ref": user, "text": "ada"}))
        .await;
    k.ok(
        "browser_type",
        json!({"selector": "#password", "text": CANARY}),
    )
    .await;
    k.ok("browser_click", json!({"selector": "button"})).await;
    k.call("browser_click", json!({"selector": "#missing"}))
        .await;

    let steps = k.resource("kapture://session/current/steps").await.unwrap();
    assert!(!steps.contains(CANARY), "{steps}");
    let logged: Value = serde_json::from_str(&steps).unwrap();
    let tools: Vec<&str> = logged
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "browser_navigate",
            "browser_snapshot",
            "browser_type",
            "browser_type",
            "browser_click",
            "browser_click"
        ]
    );
    assert_eq!(logged[2]["element"], "textbox \"User\"", "{steps}");
    assert_eq!(logged[5]["status"], "SELECTOR_NOT_FOUND", "{steps}");

    let code = k
        .resource("kapture://session/current/code?format=puppeteer")
        .await
        .unwrap();
    assert!(!code.contains(CANARY), "{code}");
    assert!(code.contains("KAPTURE_SECRET_SECRET_1"), "{code}");
    let dir = script_dir();
    std::fs::write(dir.path().join("session.mjs"), &code).unwrap();
    let out = run_bounded(
        node_command(
            dir.path(),
            "node",
            &["session.mjs"],
            &[("KAPTURE_SECRET_SECRET_1", CANARY)],
        ),
        "node session.mjs",
    )
    .await;
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        result_line(&out)["url"],
        json!(site.url("login.html")),
        "{}",
        describe(&out)
    );
    assert!(k
        .resource("kapture://session/current/code?format=cobol")
        .await
        .is_err());
    assert!(k.resource("kapture://nothing").await.is_err());
    k.stop().await;
}
