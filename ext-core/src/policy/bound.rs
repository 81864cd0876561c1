//! A server's policy bounded by a browser's ceiling: for every category on every origin the
//! stricter verdict wins, so a kapture cannot loosen the rules in a person's browser (one it
//! did not launch) unless the person agreed. Also lists what a policy loosens compared with
//! the ceiling, for the panel's question, and fingerprints a rule set to remember the answer.

use sha2::{Digest, Sha256};

use super::{Category, Origin, OriginPattern, Policy, Rule, Verdict};

/// How strict a verdict is: deny > ask > allow.
pub(crate) fn strictness(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

/// The stricter of two verdicts.
pub fn stricter(a: Verdict, b: Verdict) -> Verdict {
    if strictness(b) > strictness(a) {
        b
    } else {
        a
    }
}

/// The origins both patterns match, as one pattern; `None` when they share none.
pub fn meet(a: &OriginPattern, b: &OriginPattern) -> Option<OriginPattern> {
    fn both<T: PartialEq + Clone>(a: &Option<T>, b: &Option<T>) -> Option<Option<T>> {
        match (a, b) {
            (None, x) | (x, None) => Some(x.clone()),
            (Some(x), Some(y)) => (x == y).then(|| Some(x.clone())),
        }
    }
    let scheme = both(&a.scheme, &b.scheme)?;
    let port = both(&a.port, &b.port)?;
    // `*.s` covers s and its sub-domains; a literal host only itself; `` pages of no site.
    let covers = |wild: &str, host: &str| {
        wild.strip_prefix("*.")
            .is_some_and(|s| host == s || host.ends_with(&format!(".{s}")))
    };
    let host = match (a.host.as_str(), b.host.as_str()) {
        ("*", h) | (h, "*") => h.to_string(),
        (x, y) if x == y => x.to_string(),
        (x, y) if x.starts_with("*.") && y.starts_with("*.") => {
            if covers(x, &y[2..]) {
                y.to_string()
            } else if covers(y, &x[2..]) {
                x.to_string()
            } else {
                return None;
            }
        }
        (x, y) if x.starts_with("*.") && covers(x, y) => y.to_string(),
        (x, y) if y.starts_with("*.") && covers(y, x) => x.to_string(),
        _ => return None,
    };
    Some(OriginPattern { scheme, host, port })
}

fn meet_category(a: Option<Category>, b: Option<Category>) -> Option<Option<Category>> {
    match (a, b) {
        (None, x) | (x, None) => Some(x),
        (Some(x), Some(y)) => (x == y).then_some(Some(x)),
    }
}

/// `policy` with the default-deny made explicit as its first rule, so that every category
/// on every origin has a matching rule.
fn with_default(policy: &Policy) -> Vec<Rule> {
    let mut rules = vec![Rule {
        origin: OriginPattern {
            scheme: None,
            host: "*".into(),
            port: None,
        },
        category: None,
        verdict: Verdict::Deny,
        source: "no rule allows it (the policy denies by default)".into(),
    }];
    rules.extend(policy.rules.iter().cloned());
    rules
}

/// `policy` bounded by `ceiling`: its decision for any category on any URL is the stricter
/// of the two policies' decisions.
///
/// Built as one rule per pair (policy rule, ceiling rule) on the origins and categories both
/// cover, in the order (policy index, ceiling index): the last pair that matches is then
/// exactly the pair of the last matching rule of each.
pub fn bound(policy: &Policy, ceiling: &Policy, note: &str) -> Policy {
    let (ours, cap) = (with_default(policy), with_default(ceiling));
    let mut rules = Vec::new();
    for p in &ours {
        for c in &cap {
            let (Some(origin), Some(category)) = (
                meet(&p.origin, &c.origin),
                meet_category(p.category, c.category),
            ) else {
                continue;
            };
            let (verdict, source) = if strictness(c.verdict) > strictness(p.verdict) {
                (c.verdict, format!("{}{note}", c.source))
            } else {
                (p.verdict, p.source.clone())
            };
            rules.push(Rule {
                origin,
                category,
                verdict,
                source,
            });
        }
    }
    // Budgets only restrict: both sides' are kept.
    let budgets = policy
        .budgets
        .iter()
        .chain(&ceiling.budgets)
        .cloned()
        .collect();
    Policy {
        rules,
        budgets,
        ..Policy::default()
    }
}

/// Something a policy allows more freely than the ceiling does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loosening {
    /// The categories, by name, in `Category::ALL` order.
    pub categories: Vec<&'static str>,
    /// The origins, as a pattern (`*`, `*.example.com`, `https://a.test:8443`).
    pub origins: String,
    /// The same origins as a pattern.
    pub region: OriginPattern,
    pub asked: Verdict,
    pub ceiling: Verdict,
}

impl std::fmt::Display for Loosening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = |v: Verdict| match v {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        };
        write!(
            f,
            "{} on {}: {} (this browser: {})",
            self.categories.join(", "),
            self.origins,
            word(self.asked),
            word(self.ceiling)
        )
    }
}

fn origins_text(pattern: &OriginPattern) -> String {
    match (&pattern.scheme, pattern.host.is_empty()) {
        (None, true) if pattern.port.is_none() => "pages of no site (about:blank, data:)".into(),
        (_, true) => format!("pages of no site of {pattern}"),
        _ => pattern.to_string(),
    }
}

/// One origin of every kind the patterns of `rules` tell apart: two origins that every
/// pattern either matches or misses alike are judged alike by both rule sets, so deciding
/// on these few is deciding on all.
///
/// A scheme or port no pattern names behaves like any other such one, so one fresh value
/// stands for them all. A host is a literal some pattern names, the suffix of a `*.s`, a
/// fresh label under such a suffix (the longest suffix a host ends with decides which
/// wildcards match it), a fresh label alone (a host under no named suffix), or empty (a
/// page of no site). The fresh label occurs in no pattern, so nothing names it.
fn representatives(rules: &[&Rule]) -> Vec<Origin> {
    // Every name a pattern holds, hosts and schemes: the fresh label is in none of them, so
    // neither the fresh host nor the fresh scheme is one a pattern names.
    let named: Vec<&str> = rules
        .iter()
        .flat_map(|r| [Some(r.origin.host.as_str()), r.origin.scheme.as_deref()])
        .flatten()
        .collect();
    let fresh = (0u32..)
        .map(|n| format!("kapture-other{n}"))
        .find(|l| named.iter().all(|h| !h.contains(l.as_str())))
        .unwrap_or_default();
    let mut schemes: Vec<String> = vec![format!("{fresh}-scheme")];
    let mut ports: Vec<Option<u16>> = vec![None];
    let mut hosts: Vec<String> = vec![String::new(), fresh.clone()];
    for r in rules {
        if let Some(s) = &r.origin.scheme {
            schemes.push(s.clone());
        }
        if let Some(p) = r.origin.port {
            ports.push(Some(p));
        }
        match r.origin.host.strip_prefix("*.") {
            _ if r.origin.host == "*" => {}
            Some(suffix) => {
                hosts.push(suffix.to_string());
                hosts.push(format!("{fresh}.{suffix}"));
            }
            None => hosts.push(r.origin.host.clone()),
        }
    }
    for list in [&mut schemes, &mut hosts] {
        list.sort();
        list.dedup();
    }
    ports.sort();
    ports.dedup();
    let mut out = Vec::with_capacity(schemes.len() * hosts.len() * ports.len());
    for scheme in &schemes {
        for host in &hosts {
            for port in &ports {
                out.push(Origin {
                    scheme: scheme.clone(),
                    host: host.clone(),
                    port: *port,
                });
            }
        }
    }
    out
}

/// The last rule of `rules` that decides `category` on `origin`.
fn deciding<'r>(rules: &'r [Rule], category: Category, origin: &Origin) -> Option<&'r Rule> {
    rules
        .iter()
        .rev()
        .find(|r| r.category.is_none_or(|c| c == category) && r.origin.matches(origin))
}

/// What `policy` allows more freely than `ceiling`, grouped by origins and verdicts.
///
/// Complete: both rule sets are decided on one origin of every kind their patterns tell
/// apart (`representatives`), so wherever the policy is looser than the ceiling, on any URL,
/// a line names that category on origins that include the URL, with the two verdicts found
/// there. Each line's origins are where the two deciding rules overlap, and at least one
/// origin there really is looser.
pub fn loosened(policy: &Policy, ceiling: &Policy) -> Vec<Loosening> {
    let (ours, cap) = (with_default(policy), with_default(ceiling));
    let named: Vec<&Rule> = ours.iter().chain(&cap).collect();
    let mut found: Vec<Loosening> = Vec::new();
    for origin in representatives(&named) {
        for category in Category::ALL {
            let (Some(p), Some(c)) = (
                deciding(&ours, category, &origin),
                deciding(&cap, category, &origin),
            ) else {
                continue;
            };
            if strictness(p.verdict) >= strictness(c.verdict) {
                continue;
            }
            let Some(region) = meet(&p.origin, &c.origin) else {
                continue;
            };
            let origins = origins_text(&region);
            match found
                .iter_mut()
                .find(|l| l.region == region && l.asked == p.verdict && l.ceiling == c.verdict)
            {
                Some(l) if l.categories.contains(&category.name()) => {}
                Some(l) => l.categories.push(category.name()),
                None => found.push(Loosening {
                    categories: vec![category.name()],
                    origins,
                    region,
                    asked: p.verdict,
                    ceiling: c.verdict,
                }),
            }
        }
    }
    for l in &mut found {
        l.categories.sort_by_key(|name| {
            Category::ALL
                .iter()
                .position(|c| c.name() == *name)
                .unwrap_or(usize::MAX)
        });
    }
    found.sort_by(|a, b| a.origins.cmp(&b.origins));
    found
}

/// A short, stable name for a rule set (hex of SHA-256 over its JSON), under which a
/// person's agreement to it is remembered.
pub fn fingerprint(policy: &Policy) -> String {
    let json = serde_json::to_vec(policy).unwrap_or_default();
    hex::encode(&Sha256::digest(&json)[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(text: &str) -> OriginPattern {
        if text.is_empty() {
            return OriginPattern::no_site();
        }
        OriginPattern::parse(text).unwrap()
    }

    const PATTERNS: [&str; 12] = [
        "*",
        "example.com",
        "*.example.com",
        "a.example.com",
        "*.a.example.com",
        "evilexample.com",
        "https://*",
        "http://example.com",
        "*:8080",
        "127.0.0.1",
        "localhost:3000",
        "",
    ];
    const URLS: [&str; 12] = [
        "https://example.com/",
        "http://example.com/",
        "https://a.example.com/x",
        "https://b.a.example.com/",
        "https://evilexample.com/",
        "http://127.0.0.1:8080/",
        "http://localhost:3000/",
        "http://localhost/",
        "about:blank",
        "data:text/html,x",
        "https://other.test:8080/",
        "not a url",
    ];

    #[test]
    fn the_meet_of_two_patterns_matches_exactly_what_both_match() {
        for a in PATTERNS {
            for b in PATTERNS {
                let m = meet(&pat(a), &pat(b));
                for url in URLS {
                    let Some(o) = super::super::origin_of(url) else {
                        continue;
                    };
                    let both = pat(a).matches(&o) && pat(b).matches(&o);
                    let got = m.as_ref().is_some_and(|m| m.matches(&o));
                    assert_eq!(got, both, "{a:?} ∧ {b:?} on {url}: {m:?}");
                }
            }
        }
    }

    /// Every category on every URL: the bounded policy says the stricter of the two.
    #[track_caller]
    fn assert_bounded(policy: &Policy, ceiling: &Policy) {
        let b = bound(policy, ceiling, " (ceiling)");
        for url in URLS {
            for c in Category::ALL {
                let want = stricter(
                    policy.decide(c, url).verdict,
                    ceiling.decide(c, url).verdict,
                );
                assert_eq!(b.decide(c, url).verdict, want, "{} on {url}", c.name());
            }
        }
    }

    #[test]
    fn allow_all_is_bounded_by_a_persons_defaults() {
        let ceiling = Policy::connected_default();
        let b = bound(&Policy::allow_all(), &ceiling, " (ceiling)");
        let eval = b.decide(Category::Eval, "https://bank.example/");
        assert_eq!(eval.verdict, Verdict::Deny);
        assert!(
            eval.because.contains("your own browser"),
            "{}",
            eval.because
        );
        assert!(eval.because.ends_with("(ceiling)"));
        assert_eq!(
            b.decide(Category::Interact, "https://bank.example/")
                .verdict,
            Verdict::Ask
        );
        assert_eq!(
            b.decide(Category::Read, "https://bank.example/").verdict,
            Verdict::Allow
        );
        assert_bounded(&Policy::allow_all(), &ceiling);
    }

    #[test]
    fn bounding_keeps_the_stricter_side_for_mixed_rules() {
        let mut asked = Policy::launched_default();
        for (text, verdict) in [
            ("eval@127.0.0.1", Verdict::Allow),
            ("read@*.example.com", Verdict::Deny),
            ("a.example.com", Verdict::Allow),
            ("submit@https://*", Verdict::Allow),
            ("*:8080", Verdict::Deny),
        ] {
            asked
                .rules
                .push(Policy::flag_rule(text, verdict, "--test").unwrap());
        }
        let mut ceiling = Policy::connected_default();
        ceiling
            .rules
            .push(Policy::flag_rule("interact@localhost:3000", Verdict::Allow, "--c").unwrap());
        ceiling
            .rules
            .push(Policy::flag_rule("evilexample.com", Verdict::Deny, "--c").unwrap());
        for (p, c) in [
            (&asked, &ceiling),
            (&ceiling, &asked),
            (&Policy::default(), &ceiling),
            (&asked, &Policy::default()),
            (&ceiling, &ceiling),
            (&Policy::allow_all(), &Policy::launched_default()),
        ] {
            assert_bounded(p, c);
        }
        // Bounding by itself changes no decision.
        let same = bound(&ceiling, &ceiling, "");
        for url in URLS {
            for c in Category::ALL {
                assert_eq!(same.decide(c, url).verdict, ceiling.decide(c, url).verdict);
            }
        }
    }

    #[test]
    fn loosenings_are_listed_truthfully() {
        let ceiling = Policy::connected_default();
        assert!(loosened(&ceiling, &ceiling).is_empty());
        assert!(loosened(&ceiling.clone().read_only("safe"), &ceiling).is_empty());
        let all = loosened(&Policy::allow_all(), &ceiling);
        let text: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert!(
            text.contains(&"eval on *: allow (this browser: deny)".to_string()),
            "{text:?}"
        );
        let asks = all
            .iter()
            .find(|l| l.ceiling == Verdict::Ask && l.origins == "*")
            .expect("interact and the rest are asked in a person's browser");
        assert!(asks.categories.contains(&"interact") && asks.categories.contains(&"submit"));
        assert!(!asks.categories.contains(&"read"), "read is not looser");

        let mut one = Policy::connected_default();
        one.rules.push(
            Policy::flag_rule("eval@127.0.0.1", Verdict::Allow, "--allow eval@127.0.0.1").unwrap(),
        );
        let text: Vec<String> = loosened(&one, &ceiling)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(text, ["eval on 127.0.0.1: allow (this browser: deny)"]);
        // A stricter policy loosens nothing.
        let mut strict = Policy::connected_default();
        strict
            .rules
            .push(Policy::flag_rule("example.com", Verdict::Deny, "--deny").unwrap());
        assert!(loosened(&strict, &ceiling).is_empty());
    }

    /// A rule that carves its own pattern out of a wide allowance cannot hide the
    /// allowance: every looser origin lies inside a listed line, whatever hosts the
    /// patterns name.
    #[test]
    fn every_looser_origin_is_listed_whatever_the_patterns_name() {
        let ceiling = Policy::connected_default();
        let mut sly = Policy::allow_all();
        for name in [
            "kapture-probe.invalid",
            "kapture-other0",
            "*.kapture-other1",
            "kapture-other2-scheme://*",
        ] {
            sly.rules
                .push(Policy::flag_rule(name, Verdict::Deny, "--deny").unwrap());
        }
        let lines = loosened(&sly, &ceiling);
        assert!(
            lines
                .iter()
                .any(|l| l.origins == "*" && l.categories.contains(&"eval")),
            "{lines:?}"
        );
    }

    use proptest::prelude::*;

    /// Patterns the property test draws from besides [`PATTERNS`]: names of the kind
    /// `loosened` makes up for itself, and a probe name an older version used.
    const MORE_PATTERNS: [&str; 4] = [
        "kapture-other0-scheme://*",
        "kapture-other0",
        "kapture-probe.invalid",
        "*.kapture-probe.example.com",
    ];
    const HOSTS: [&str; 10] = [
        "example.com",
        "a.example.com",
        "b.a.example.com",
        "zz.example.com",
        "evilexample.com",
        "127.0.0.1",
        "localhost",
        "kapture-probe.invalid",
        "kapture-probe.example.com",
        "elsewhere.test",
    ];

    fn arb_policy() -> impl Strategy<Value = Policy> {
        let pool: Vec<&str> = PATTERNS.into_iter().chain(MORE_PATTERNS).collect();
        let rule = (0..pool.len(), 0..=Category::ALL.len(), 0..3u8).prop_map(move |(o, c, v)| {
            let verdict = [Verdict::Allow, Verdict::Ask, Verdict::Deny][v as usize];
            Rule {
                origin: pat(pool[o]),
                category: Category::ALL.get(c).copied(),
                verdict,
                source: "test".into(),
            }
        });
        proptest::collection::vec(rule, 0..7).prop_map(|rules| Policy {
            rules,
            ..Policy::default()
        })
    }

    proptest! {
        #[test]
        fn loosenings_cover_every_looser_url(policy in arb_policy(), ceiling in arb_policy()) {
            let lines = loosened(&policy, &ceiling);
            let mut urls = vec!["about:blank".to_string(), "data:text/html,x".to_string()];
            for scheme in ["http", "https", "ftp", "kapture-other0-scheme"] {
                for host in HOSTS {
                    for port in ["", ":8080", ":3000", ":9"] {
                        urls.push(format!("{scheme}://{host}{port}/"));
                    }
                }
            }
            for url in &urls {
                let origin = super::super::origin_of(url).unwrap();
                for c in Category::ALL {
                    let asked = policy.decide(c, url).verdict;
                    let limit = ceiling.decide(c, url).verdict;
                    if strictness(asked) < strictness(limit) {
                        prop_assert!(
                            lines.iter().any(|l| l.region.matches(&origin)
                                && l.categories.contains(&c.name())
                                && l.asked == asked
                                && l.ceiling == limit),
                            "{} on {url} ({asked:?} < {limit:?}) not in {lines:?}",
                            c.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn fingerprints_tell_rule_sets_apart() {
        let a = fingerprint(&Policy::allow_all());
        assert_eq!(a, fingerprint(&Policy::allow_all()));
        assert_eq!(a.len(), 32);
        assert_ne!(a, fingerprint(&Policy::connected_default()));
        let mut b = Policy::allow_all();
        b.rules[0].verdict = Verdict::Ask;
        assert_ne!(a, fingerprint(&b));
    }
}
