//! Secrets kept out of answers: detector rules as data (each with examples it must catch
//! and look-alikes it must leave), exact values to mask (password fields, a secrets file),
//! and the redaction that replaces them with `[redacted:<kind>]`.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// One detector: what it finds, and proof in both directions.
pub struct Rule {
    pub kind: &'static str,
    pattern: &'static str,
    /// Redact only this capture group (the value after a name), else the whole match.
    group: usize,
    /// Minimum Shannon entropy (bits per character) of the redacted part, which must also
    /// mix letters and digits; 0 to skip both checks.
    min_entropy: f64,
    pub examples: &'static [&'static str],
    pub negative_examples: &'static [&'static str],
}

/// The detectors, most specific first.
pub const RULES: &[Rule] = &[
    Rule {
        kind: "private-key",
        pattern: r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z]+ )*PRIVATE KEY-----",
        group: 0,
        min_entropy: 0.0,
        examples: &[
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        ],
        negative_examples: &["-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"],
    },
    Rule {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        group: 0,
        min_entropy: 0.0,
        examples: &["token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlX2hlcmU here"],
        negative_examples: &["eyJ is how base64 JSON starts", "a.b.c"],
    },
    Rule {
        kind: "aws-access-key",
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        group: 0,
        min_entropy: 0.0,
        examples: &["key AKIAIOSFODNN7EXAMPLE ok"],
        negative_examples: &["AKIA is a prefix", "AKIAIOSFODNN7EXAMPL"],
    },
    Rule {
        kind: "github-token",
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",
        group: 0,
        min_entropy: 0.0,
        examples: &["ghp_0123456789abcdefghijABCDEFGHIJ012345"],
        negative_examples: &["ghp_short", "the ghost_of_a_chance"],
    },
    Rule {
        kind: "slack-token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        group: 0,
        min_entropy: 0.0,
        examples: &["xoxb-123456789012-abcdefABCDEF"],
        negative_examples: &["xox-box", "xoxb-"],
    },
    Rule {
        kind: "stripe-key",
        pattern: r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        group: 0,
        min_entropy: 0.0,
        examples: &["sk_live_4eC39HqLyjWDarjtT1zdp7dc"],
        negative_examples: &["sk_live_", "risk_test_plan"],
    },
    Rule {
        kind: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
        group: 0,
        min_entropy: 0.0,
        examples: &["AIzaSyA-1234567890abcdefghijklmnopqrstu"],
        negative_examples: &["AIza is short"],
    },
    Rule {
        kind: "bearer-token",
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        group: 1,
        min_entropy: 3.0,
        examples: &["Authorization: Bearer s3cr3t-t0ken-value-123"],
        negative_examples: &["bearer of bad news", "Bearer aaaaaaaaaaaaaaaaaaaa"],
    },
    Rule {
        kind: "password",
        pattern: r#"(?i)\b(?:password|passwd|pwd|passphrase)["']?\s*[:=]\s*["']?([^\s"',;]{4,})"#,
        group: 1,
        min_entropy: 0.0,
        examples: &["password=hunter2!", "\"password\": \"correct-horse\""],
        negative_examples: &["Forgot your password?", "password: ***"],
    },
    Rule {
        kind: "secret",
        pattern: r#"(?i)\b(?:api[_-]?key|secret|token|access[_-]?key|client[_-]?secret|auth)["']?\s*[:=]\s*["']?([A-Za-z0-9_./+=-]{12,})"#,
        group: 1,
        min_entropy: 3.0,
        examples: &[
            "api_key=9f8e7d6c5b4a39281706",
            "\"token\": \"Zx81kLp02QmNv7Rt\"",
        ],
        negative_examples: &[
            "token: aaaaaaaaaaaaaaaa",
            "secret = the-secret-garden",
            "token=short",
        ],
    },
];

fn compiled() -> &'static Vec<Regex> {
    static RULES_RE: OnceLock<Vec<Regex>> = OnceLock::new();
    RULES_RE.get_or_init(|| {
        RULES
            .iter()
            .filter_map(|r| Regex::new(r.pattern).ok())
            .collect()
    })
}

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return 0.0;
    }
    let mut counts = std::collections::HashMap::new();
    for c in &chars {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = chars.len() as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Does a value look generated (a token) rather than written (words)? Mixed letters and
/// digits, and random enough.
fn token_like(s: &str, min_entropy: f64) -> bool {
    s.chars().any(|c| c.is_ascii_digit())
        && s.chars().any(|c| c.is_ascii_alphabetic())
        && entropy(s) >= min_entropy
}

/// Shortest exact value that is masked (shorter ones would mask ordinary words).
pub const MIN_VALUE_LEN: usize = 4;

/// The ways a value can appear in an answer: as it is, as the answer's escaping wrote it
/// (inside a JSON string, a quoted page string, or one escaped line), and as a URL carries
/// it ([`url_forms`]), so that a `"`, a `\`, a space or a line break in a secret does not
/// let it through.
fn shown_forms(value: &str) -> Vec<String> {
    let in_json = serde_json::to_string(value).unwrap_or_default();
    let in_json = in_json
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    let quoted = crate::escape::quoted(value);
    let quoted = quoted
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    // A JSON string inside a JSON string (arguments shown as JSON text, a script's source
    // quoted in a journal line).
    let twice = serde_json::to_string(in_json).unwrap_or_default();
    let twice = twice
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(in_json)
        .to_string();
    let mut forms: Vec<String> = Vec::new();
    for form in [
        value.to_string(),
        in_json.to_string(),
        twice,
        crate::escape::json(in_json),
        quoted.to_string(),
        crate::escape::inline(value),
    ]
    .into_iter()
    .chain(url_forms(value))
    {
        if !form.is_empty() && !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

/// A value as URLs carry it, upper- and lower-case hex: as a form submitted by GET writes it
/// (a space as `+`), as `encodeURIComponent` does, and as a browser leaves a query it was
/// given (only what may not stand in a URL escaped: spaces, quotes, `<`, `>`, `#`, controls
/// and non-ASCII).
fn url_forms(value: &str) -> Vec<String> {
    let encode = |keep: &dyn Fn(u8) -> bool, plus: bool, lower: bool| {
        let mut out = String::with_capacity(value.len() * 3);
        for b in value.bytes() {
            if plus && b == b' ' {
                out.push('+');
            } else if keep(b) {
                out.push(b as char);
            } else if lower {
                out.push_str(&format!("%{b:02x}"));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    let form = |b: u8| b.is_ascii_alphanumeric() || b"*-._".contains(&b);
    let component = |b: u8| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b);
    let query = |b: u8| b > b' ' && b < 0x7f && !b"\"#<>'".contains(&b);
    let mut forms = Vec::new();
    for lower in [false, true] {
        forms.push(encode(&form, true, lower));
        forms.push(encode(&component, false, lower));
        forms.push(encode(&query, false, lower));
    }
    forms
}

/// Kapture's own tokens in an answer line, which a detector must never take for the value
/// after a label such as `Password:`: a ref in parentheses or brackets (`(e5)`, `(f1e7)`,
/// `[ref=e5]`), a tab mark (`[tab 3]`), an earlier redaction. Page strings cannot forge
/// them (`escape` breaks `[ref=` and `[tab N`), and exact values are masked before this.
fn kaptures_own(value: &str) -> bool {
    static OWN: OnceLock<Option<Regex>> = OnceLock::new();
    OWN.get_or_init(|| {
        Regex::new(r"^(?:\((?:f\d+)?e\d+\)|\[ref=(?:f\d+)?e\d+\]|\[tab|\[redacted:[a-z-]+\])[.:]?$")
            .ok()
    })
    .as_ref()
    .is_some_and(|re| re.is_match(value))
}

/// Replace what the detectors find, and every exact `values` occurrence, by
/// `[redacted:<kind>]`: values only, never Kapture's own refs and marks after a label.
/// Answers the text and how many secrets it hid.
pub fn redact(text: &str, values: &[(String, String)]) -> (String, usize) {
    let mut out = text.to_string();
    let mut hidden = 0;
    for (value, kind) in values {
        if value.len() < MIN_VALUE_LEN {
            continue;
        }
        for form in shown_forms(value) {
            if out.contains(form.as_str()) {
                hidden += out.matches(form.as_str()).count();
                out = out.replace(form.as_str(), &format!("[redacted:{kind}]"));
            }
        }
    }
    for (rule, re) in RULES.iter().zip(compiled()) {
        let mut result = String::with_capacity(out.len());
        let mut last = 0;
        for caps in re.captures_iter(&out) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            if m.as_str().starts_with("[redacted:")
                || kaptures_own(m.as_str())
                || (rule.min_entropy > 0.0 && !token_like(m.as_str(), rule.min_entropy))
            {
                continue;
            }
            result.push_str(&out[last..m.start()]);
            result.push_str(&format!("[redacted:{}]", rule.kind));
            last = m.end();
            hidden += 1;
        }
        if last > 0 {
            result.push_str(&out[last..]);
            out = result;
        }
    }
    (out, hidden)
}

/// A person's own detector (a `[[mask]]` of kapture's policy file): what it finds is
/// redacted as `[redacted:<kind>]`, after the built-in ones.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub kind: String,
    re: Regex,
}

impl Pattern {
    /// Compile `pattern`; a kind is lower-case letters, digits and dashes (it is shown in
    /// answers), a pattern that can match nothing but the empty text is refused.
    pub fn new(kind: &str, pattern: &str) -> Result<Pattern, String> {
        if kind.is_empty()
            || kind.len() > 40
            || !kind
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(format!(
                "kind {kind:?} must be 1 to 40 lower-case letters, digits or dashes"
            ));
        }
        let re = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("pattern {pattern:?} is not a valid regular expression: {e}"))?;
        if re.is_match("") {
            return Err(format!(
                "pattern {pattern:?} matches the empty text, which would mask nothing useful"
            ));
        }
        Ok(Pattern {
            kind: kind.to_string(),
            re,
        })
    }
}

/// Replace what `patterns` find by `[redacted:<kind>]`; answers the text and the count.
pub fn redact_patterns(text: &str, patterns: &[Pattern]) -> (String, usize) {
    let mut out = text.to_string();
    let mut hidden = 0;
    for p in patterns {
        let mut count = 0;
        let replaced = p.re.replace_all(&out, |caps: &regex::Captures| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            if whole.starts_with("[redacted:") || kaptures_own(whole) {
                whole.to_string()
            } else {
                count += 1;
                format!("[redacted:{}]", p.kind)
            }
        });
        if count > 0 {
            out = replaced.into_owned();
            hidden += count;
        }
    }
    (out, hidden)
}

/// Mask exact values in every string of a JSON value (password fields' contents).
pub fn mask_json(value: &mut Value, values: &[(String, String)]) {
    match value {
        Value::String(s) => {
            for (v, kind) in values {
                if v.len() >= MIN_VALUE_LEN && s.contains(v.as_str()) {
                    *s = s.replace(v.as_str(), &format!("[redacted:{kind}]"));
                }
            }
        }
        // Text fields also take numbers and true/false: the same value in another shape.
        Value::Number(_) | Value::Bool(_) => {
            let shown = value.to_string();
            if let Some((_, kind)) = values
                .iter()
                .find(|(v, _)| v.len() >= MIN_VALUE_LEN && *v == shown)
            {
                *value = Value::String(format!("[redacted:{kind}]"));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| mask_json(i, values)),
        Value::Object(map) => map.values_mut().for_each(|i| mask_json(i, values)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_exact_value_is_masked_in_its_escaped_forms_too() {
        let secret = r#"pa"ss\wo
rd"#;
        let values = vec![(secret.to_string(), "scenario-secret".to_string())];
        for shown in [
            serde_json::to_string(secret).unwrap(),
            crate::escape::quoted(secret),
            crate::escape::inline(secret),
            secret.to_string(),
        ] {
            let (out, n) = redact(&format!("value: {shown}!"), &values);
            assert_eq!(n, 1, "{shown} -> {out}");
            assert!(out.contains("[redacted:scenario-secret]"), "{out}");
        }
    }

    use super::*;

    #[test]
    fn an_exact_value_is_masked_as_urls_carry_it() {
        let secret = "Pä\"ss wörd!#1";
        let values = vec![(secret.to_string(), "confidential".to_string())];
        for shown in [
            "P%C3%A4%22ss+w%C3%B6rd%21%231",
            "P%C3%A4%22ss%20w%C3%B6rd!%231",
            "P%C3%A4%22ss%20w%C3%B6rd!%231",
            "P%c3%a4%22ss+w%c3%b6rd%21%231",
        ] {
            let (out, n) = redact(&format!("http://a.test/?pw={shown}&x=1"), &values);
            assert_eq!(n, 1, "{shown} -> {out}");
            assert_eq!(out, "http://a.test/?pw=[redacted:confidential]&x=1");
        }
    }

    #[test]
    fn every_rule_compiles() {
        assert_eq!(compiled().len(), RULES.len());
    }

    #[test]
    fn every_rule_catches_its_examples_and_leaves_its_look_alikes() {
        for rule in RULES {
            for ex in rule.examples {
                let (out, n) = redact(ex, &[]);
                assert!(
                    n >= 1 && out.contains(&format!("[redacted:{}]", rule.kind)),
                    "{} missed {ex:?}: {out}",
                    rule.kind
                );
            }
            for neg in rule.negative_examples {
                let (out, n) = redact(neg, &[]);
                assert_eq!(
                    (n, out.as_str()),
                    (0, *neg),
                    "{} wrongly hit {neg:?}",
                    rule.kind
                );
            }
        }
    }

    #[test]
    fn names_stay_and_only_values_go() {
        let (out, _) = redact(
            "Authorization: Bearer s3cr3t-t0ken-value-123 and password=hunter2!",
            &[],
        );
        assert_eq!(
            out,
            "Authorization: Bearer [redacted:bearer-token] and password=[redacted:password]"
        );
    }

    #[test]
    fn exact_values_are_masked_everywhere() {
        let values = vec![
            ("Canary-7xQ".to_string(), "password".to_string()),
            ("ab".to_string(), "secrets-file".to_string()),
        ];
        let (out, n) = redact("typed Canary-7xQ; echo Canary-7xQ; ab stays", &values);
        assert_eq!(
            out,
            "typed [redacted:password]; echo [redacted:password]; ab stays"
        );
        assert_eq!(n, 2);
        let mut v = serde_json::json!({"value": "x Canary-7xQ", "list": ["Canary-7xQ", 3]});
        mask_json(&mut v, &values);
        assert_eq!(
            v,
            serde_json::json!({"value": "x [redacted:password]", "list": ["[redacted:password]", 3]})
        );
        // A PIN typed as a number is the same value.
        let pin = vec![("482913".to_string(), "confidential".to_string())];
        let mut v = serde_json::json!({"fields": [{"value": 482913}, {"value": 48291}]});
        mask_json(&mut v, &pin);
        assert_eq!(
            v,
            serde_json::json!({"fields": [{"value": "[redacted:confidential]"}, {"value": 48291}]})
        );
    }

    #[test]
    fn refs_and_labels_of_kaptures_answers_survive_and_values_still_go() {
        for line in [
            "Typed 8 characters into textbox Password: (e5) [tab 1]",
            "Typed 8 characters into \"textbox Password:\" (e5) [tab 1]",
            "Typed 3 characters into password: (f1e12) [tab 2]",
            "Clicked Password: [tab 4]",
            "textbox \"Password:\" [ref=e5]",
            "textbox Password: [ref=f2e9]: placeholder",
            "password=(e5)",
            "Clicked Token (e7) [tab 1]",
            "textbox \"Token\" [ref=e7]",
            "Typed 40 characters into API key: (e8) [tab 1]",
            "textbox \"API key:\" [ref=e8]",
            "secret= (e9)",
            "textbox \"secret=\" [ref=e9]",
            "auth: [ref=e10]",
            "password: [redacted:confidential]",
        ] {
            assert_eq!(redact(line, &[]), (line.to_string(), 0), "{line}");
        }
        for (line, masked) in [
            (
                "textbox Password: hunter2! [ref=e5]",
                "textbox Password: [redacted:password] [ref=e5]",
            ),
            (
                "textbox \"API key:\" [ref=e8]: api_key=9f8e7d6c5b4a39281706",
                "textbox \"API key:\" [ref=e8]: api_key=[redacted:secret]",
            ),
            (
                "textbox \"Token\" [ref=e7]: token: Zx81kLp02QmNv7Rt",
                "textbox \"Token\" [ref=e7]: token: [redacted:secret]",
            ),
            (
                "secret=Zx81kLp02QmNv7Rt (e9)",
                "secret=[redacted:secret] (e9)",
            ),
            // A value that only starts like a ref is still a value.
            ("password: (e5)hunter2", "password: [redacted:password]"),
        ] {
            assert_eq!(redact(line, &[]).0, masked, "{line}");
        }
        // A typed value is masked exactly, while the ref next to it stays.
        let typed = vec![("Sw0rdfish-77".to_string(), "confidential".to_string())];
        assert_eq!(
            redact("textbox \"Password:\" [ref=e5]: Sw0rdfish-77 (e5)", &typed).0,
            "textbox \"Password:\" [ref=e5]: [redacted:confidential] (e5)"
        );
    }

    #[test]
    fn entropy_tells_tokens_from_words() {
        assert!(entropy("aaaaaaaa") < 1.0);
        assert!(entropy("Zx81kLp02QmNv7Rt") > 3.5);
    }

    #[test]
    fn a_persons_patterns_mask_what_they_find_and_bad_ones_are_refused() {
        let p = [Pattern::new("employee-id", r"EMP-[0-9]{6}").unwrap()];
        let (text, n) = redact_patterns("badge EMP-123456 and EMP-654321 ok", &p);
        assert_eq!(
            text,
            "badge [redacted:employee-id] and [redacted:employee-id] ok"
        );
        assert_eq!(n, 2);
        assert!(Pattern::new("Bad Kind", "x").is_err());
        assert!(Pattern::new("k", "(unclosed").is_err());
        assert!(Pattern::new("k", "a*").is_err());
    }
}
