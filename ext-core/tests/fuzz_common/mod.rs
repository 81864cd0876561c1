//! Shared driver of the property-based fuzz targets (`tests/fuzz_*.rs`): proptest's runner
//! with a fixed case count per round, regression files kept next to the targets, and a time
//! budget for `cargo make fuzz`.
//!
//! `cargo fuzz` needs a nightly toolchain; these targets run on stable under `cargo test`.
//! A plain run does one round of `PROPTEST_CASES` (default 256) cases per property from a
//! fixed seed (or `PROPTEST_RNG_SEED`), so `cargo test` answers the same on every machine.
//! With `KAPTURE_FUZZ_TEST_SECONDS` set (the fuzz task sets it), a property keeps running
//! fresh rounds (new random seeds) until that many seconds have passed; what they find goes
//! into the regression files, which every plain run tries first.

#![allow(dead_code)] // each target uses its own subset of the helpers

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed, TestCaseError, TestRunner};
use serde_json::{Map, Number, Value};

/// Run `test` on values of `strategy`; panics with the (shrunk) failing input.
///
/// `regressions` is the target's file of failing seeds (relative to `ext-core/`, where
/// cargo runs integration tests): seeds that once failed are tried first on every run.
pub fn fuzz<S, F>(regressions: &'static str, name: &'static str, strategy: S, test: F)
where
    S: Strategy,
    S::Value: std::fmt::Debug,
    F: Fn(S::Value) -> Result<(), TestCaseError>,
{
    let budget = std::env::var("KAPTURE_FUZZ_TEST_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map(Duration::from_secs_f64);
    let start = Instant::now();
    let mut rounds = 0u64;
    let seed = match (budget, std::env::var_os("PROPTEST_RNG_SEED")) {
        (None, None) => RngSeed::Fixed(0x6b61_7074_7572_6500),
        _ => Config::default().rng_seed,
    };
    loop {
        let config = Config {
            rng_seed: seed,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
            source_file: Some(regressions),
            test_name: Some(name),
            // A failing case is shrunk for at most 30 s, so a long run still ends.
            max_shrink_time: 30_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("{name} failed after {rounds} passing rounds: {e}");
        }
        rounds += 1;
        if budget.is_none_or(|b| start.elapsed() >= b) {
            break;
        }
    }
    if budget.is_some() {
        eprintln!("{name}: {rounds} rounds in {:.1?}", start.elapsed());
    }
}

/// Any JSON value, nested a few levels, with numbers at the edges of their types.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        prop_oneof![Just(0u64), Just(u64::MAX), Just(u64::from(u32::MAX) + 1)]
            .prop_map(Value::from),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key_string(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A JSON object (arguments and frames are objects).
pub fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key_string(), json_value()), 0..8)
        .prop_map(|kv| kv.into_iter().collect())
}

/// Object keys: mostly names that the frames and arguments use, sometimes anything.
pub fn key_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KNOWN_KEYS).prop_map(str::to_string),
        1 => any_string(),
    ]
}

/// Field names of frames and tool arguments, so generated objects reach past the first field.
pub const KNOWN_KEYS: &[&str] = &[
    "v",
    "type",
    "id",
    "data",
    "code",
    "message",
    "token",
    "ext",
    "event",
    "kind",
    "tab_id",
    "reason",
    "url",
    "opener_tab_id",
    "method",
    "origin",
    "answer",
    "params",
    "status",
    "ms",
    "session",
    "heartbeat_ms",
    "policy",
    "rules",
    "approval_timeout_ms",
    "timeout_ms",
    "entry",
    "ok",
    "list",
    "request",
    "ref",
    "selector",
    "element",
    "text",
    "submit",
    "slowly",
    "values",
    "key",
    "function",
    "fullPage",
    "scale",
    "level",
    "max",
    "maxChars",
    "offset",
    "depth",
    "interactiveOnly",
    "diff",
    "query",
    "outer",
    "sameOriginOnly",
    "include",
    "exclude",
    "textGone",
    "gone",
    "time",
    "fields",
    "value",
    "accept",
    "promptText",
    "paths",
    "filter",
    "maxBody",
    "revealSensitive",
    "action",
    "name",
    "path",
    "expires",
    "httpOnly",
    "secure",
    "area",
    "width",
    "height",
    "device",
    "userAgent",
    "geolocation",
    "latitude",
    "longitude",
    "offline",
    "colorScheme",
    "startRef",
    "startSelector",
    "endRef",
    "endSelector",
    "deltaX",
    "deltaY",
    "x",
    "y",
    "button",
    "doubleClick",
    "modifiers",
    "title",
    "description",
    "tags",
    "dependencies",
];

/// Strings with the characters that break parsers: quotes, escapes, controls, surrogate
/// neighbours, right-to-left marks, combining marks, line separators.
pub fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => ".{0,24}",
        1 => "[\"\\\\\u{0}-\u{1f}\u{7f}\u{2028}\u{2029}\u{200e}\u{202e}\u{feff}\u{301}\u{fffd}\u{10ffff}a/:@.%\\[\\]]{0,16}",
        1 => Just(String::new()),
    ]
}
