//! Golden scenario files: files Kapture wrote before steps were typed must load unchanged,
//! save back to the same JSON, and export to the very scripts they exported to then.

use ext_core::export::{export, Format};
use ext_core::scenario::Scenario;
use serde_json::Value;

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

#[test]
fn a_recorded_file_loads_and_saves_back_unchanged() {
    let text = golden("recorded.json");
    let scenario: Scenario = serde_json::from_str(&text).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&scenario).unwrap(), written);
}

#[test]
fn every_golden_scenario_exports_as_it_did() {
    for name in ["recorded", "handwritten", "session"] {
        let scenario = load(name);
        for format in Format::ALL {
            let now = export(&scenario, format);
            // A deliberate change to the scripts: `KAPTURE_BLESS_GOLDEN=1` writes them anew
            // (review the diff of `tests/golden/` before committing it).
            if std::env::var_os("KAPTURE_BLESS_GOLDEN").is_some() {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/golden")
                    .join(format.file_name(name));
                std::fs::write(path, &now).unwrap();
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
