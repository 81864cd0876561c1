//! Golden scenario files: files Kapture wrote before steps were typed (format version 1)
//! must load unchanged, gain only what version 2 adds, and export to the very scripts they
//! exported to then; a version 2 file saves back as it was.

use ext_core::export::{export, Format};
use ext_core::scenario::{Scenario, FORMAT_VERSION};
use serde_json::{json, Value};

fn golden(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load(name: &str) -> Scenario {
    serde_json::from_str(&golden(&format!("{name}.json"))).unwrap()
}

/// The golden script of `name` in `format` (`recorded.puppeteer.mjs`, `recorded.spec.ts`…).
fn script(name: &str, format: Format) -> String {
    golden(&format.file_name(name))
}

/// Whether golden files are to be written anew (`KAPTURE_BLESS_GOLDEN=1`; review the diff
/// of `tests/golden/` before committing it).
fn blessing() -> bool {
    std::env::var_os("KAPTURE_BLESS_GOLDEN").is_some()
}

fn golden_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// `recorded.json` is a file of format version 1 (no `version`): it loads, and saved back it
/// is the same file plus exactly what version 2 adds (the version, the start URL, each
/// parameter's type and whether it is required), its steps untouched.
#[test]
fn a_version_1_file_loads_and_gains_only_what_version_2_adds() {
    let text = golden("recorded.json");
    let written: Value = serde_json::from_str(&text).unwrap();
    assert!(
        written.get("version").is_none(),
        "the golden file is version 1"
    );
    let scenario: Scenario = serde_json::from_str(&text).unwrap();
    assert_eq!(scenario.version, FORMAT_VERSION);
    assert_eq!(scenario.start_url, "http://127.0.0.1:8080/shop/login.html");
    let mut saved = serde_json::to_value(&scenario).unwrap();
    assert_eq!(saved["chain"], written["chain"]);
    assert_eq!(saved["dependencies"], written["dependencies"]);
    let kinds: Vec<(&str, bool)> = scenario
        .parameters
        .iter()
        .map(|p| (p.kind.as_str(), p.required))
        .collect();
    // Secrets and parameters without a recorded value are required; a default says the type.
    assert_eq!(
        kinds,
        [("string", true), ("string", true), ("string", false)]
    );
    let top = saved.as_object_mut().unwrap();
    assert_eq!(top.remove("version"), Some(json!(FORMAT_VERSION)));
    assert!(top.remove("startUrl").is_some());
    for p in top["parameters"].as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        assert!(p.remove("type").is_some() && p.remove("required").is_some());
    }
    assert_eq!(saved, written);
}

/// `recorded.v2.json` is what this version writes for the same scenario: it loads and saves
/// back unchanged, and reads as the version 1 file does (the migration is idempotent).
#[test]
fn a_version_2_file_loads_and_saves_back_unchanged() {
    let migrated: Scenario = serde_json::from_str(&golden("recorded.json")).unwrap();
    if blessing() {
        let mut v2 = migrated.clone();
        v2.recorded_at = Some("2026-11-28T14:00:00Z".into());
        v2.author = "ada".into();
        v2.dependencies[0].reason = "logs in on the same site".into();
        let text = serde_json::to_string_pretty(&v2).unwrap() + "\n";
        std::fs::write(golden_path("recorded.v2.json"), text).unwrap();
    }
    let text = golden("recorded.v2.json");
    let scenario: Scenario = serde_json::from_str(&text).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&scenario).unwrap(), written);
    assert_eq!(
        scenario.recorded_at.as_deref(),
        Some("2026-11-28T14:00:00Z")
    );
    assert_eq!(scenario.author, "ada");
    assert_eq!(scenario.dependencies[0].reason, "logs in on the same site");
    let mut reread = Scenario {
        recorded_at: None,
        author: String::new(),
        ..scenario
    };
    reread.dependencies[0].reason.clear();
    assert_eq!(reread, migrated);
}

#[test]
fn every_golden_scenario_exports_as_it_did() {
    for name in ["recorded", "handwritten", "session"] {
        let scenario = load(name);
        for format in Format::ALL {
            let now = export(&scenario, format);
            // A deliberate change to the scripts: `KAPTURE_BLESS_GOLDEN=1` writes them anew.
            if blessing() {
                std::fs::write(golden_path(&format.file_name(name)), &now).unwrap();
                continue;
            }
            let then = script(name, format);
            assert!(
                now == then,
                "{name} as {}: the script changed\n--- then\n{then}\n--- now\n{now}",
                format.as_str()
            );
        }
    }
}
