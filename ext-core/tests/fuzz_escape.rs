//! Property-based fuzz target: the escaping rule (`escape`) — whatever a page's string holds,
//! escaped it stays on its line, spells no Kapture tag, and (for JSON) keeps its value.

mod fuzz_common;

use ext_core::escape::{self, BLOCK_PREFIX};
use fuzz_common::{any_string, fuzz, json_value};
use proptest::prelude::*;

const REGRESSIONS: &str = "tests/proptest-regressions/fuzz_escape.txt";

/// Strings built to forge: line breaks, separators, bidi, quotes and tags mixed with text.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any_string(),
        prop::sample::select(vec![
            "\n",
            "\r\n",
            "\r",
            "\u{85}",
            "\u{2028}",
            "\u{2029}",
            "\u{202e}",
            "\u{2066}",
            "\t",
            "\"",
            "\\",
            "[ref=e99]",
            "[REF = e1]",
            "[ ref=f1e2]",
            "[tab 3]",
            "[tab  12]",
            "Hint: ",
            "Error BAD_ARGS: ",
            "button \"Pay now\" ",
            "# Page ",
            "> ",
            "[",
            "ref",
            "=",
            " ",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

/// Does `s` spell a tag Kapture uses (as the agent would read it)?
fn has_tag(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    (0..chars.len()).any(|i| {
        if chars[i] != '[' {
            return false;
        }
        let rest: String = chars[i + 1..].iter().collect();
        let rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("ref") {
            return after.trim_start().starts_with('=');
        }
        if let Some(after) = rest.strip_prefix("tab") {
            let trimmed = after.trim_start();
            return trimmed.len() < after.len()
                && trimmed.starts_with(|c: char| c.is_ascii_digit());
        }
        false
    })
}

#[test]
fn inline_strings_stay_on_their_line_and_spell_no_tag() {
    fuzz(
        REGRESSIONS,
        "inline_strings_stay_on_their_line_and_spell_no_tag",
        (hostile(), 0..400usize),
        |(s, max)| {
            for out in [
                escape::inline(&s),
                escape::quoted(&s),
                escape::inline_cut(&s, max),
                escape::quoted_cut(&s, max),
            ] {
                prop_assert!(!out.chars().any(escape::is_unsafe), "{:?}", out);
                prop_assert_eq!(out.lines().count().max(1), 1, "{:?}", out);
                prop_assert!(!has_tag(&out), "{:?}", out);
            }
            // A quoted string is one string: its quotes are the only unescaped ones.
            let q = escape::quoted(&s);
            let inner = &q[1..q.len() - 1];
            let mut escaped = false;
            for c in inner.chars() {
                prop_assert!(escaped || c != '"', "{:?}", q);
                escaped = !escaped && c == '\\';
            }
            prop_assert!(!escaped, "{:?}", q);
            // Cuts keep to about their size (a broken tag adds a backslash).
            let cut = escape::inline_cut(&s, max);
            prop_assert!(cut.chars().count() <= max + 1 + max / 3 + 1, "{:?}", cut);
            Ok(())
        },
    );
}

#[test]
fn blocks_quote_every_line() {
    fuzz(REGRESSIONS, "blocks_quote_every_line", hostile(), |s| {
        let out = escape::block(&s);
        for line in out.split('\n') {
            prop_assert!(line.starts_with(BLOCK_PREFIX), "{:?}", out);
        }
        prop_assert!(
            !out.chars()
                .any(|c| c != '\n' && c != '\t' && escape::is_unsafe(c)),
            "{:?}",
            out
        );
        prop_assert!(!has_tag(&out), "{:?}", out);
        Ok(())
    });
}

#[test]
fn json_keeps_its_value_and_spells_no_tag() {
    let values = prop_oneof![
        json_value(),
        hostile().prop_map(serde_json::Value::String),
        (hostile(), hostile()).prop_map(|(k, v)| serde_json::json!({ k: [v] })),
    ];
    fuzz(
        REGRESSIONS,
        "json_keeps_its_value_and_spells_no_tag",
        values,
        |v| {
            let text = escape::json(&v.to_string());
            prop_assert!(!text.chars().any(escape::is_unsafe), "{:?}", text);
            prop_assert!(!has_tag(&text), "{:?}", text);
            let back: serde_json::Value = serde_json::from_str(&text).expect("still JSON");
            prop_assert_eq!(&back, &v);
            // Pretty JSON: its own line breaks stay, and no string adds one.
            let pretty = escape::json(&serde_json::to_string_pretty(&v).unwrap());
            let lines = serde_json::to_string_pretty(&v).unwrap().lines().count();
            prop_assert_eq!(pretty.lines().count(), lines);
            prop_assert!(!has_tag(&pretty), "{:?}", pretty);
            let back: serde_json::Value = serde_json::from_str(&pretty).expect("still JSON");
            prop_assert_eq!(back, v);
            Ok(())
        },
    );
}
