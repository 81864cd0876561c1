//! Origin matching and URL normalisation against the tricks used to slip past allow-lists,
//! and the defaults and flags deciding as documented.

use super::*;

fn o(url: &str) -> Origin {
    origin_of(url).unwrap_or_else(|| panic!("{url} parses"))
}

fn pat(p: &str) -> OriginPattern {
    OriginPattern::parse(p).unwrap()
}

#[test]
fn urls_are_normalised_like_the_browser_does() {
    assert_eq!(
        o("HTTPS://Example.COM./a").host,
        "example.com",
        "case and trailing dot"
    );
    assert_eq!(
        o("https://user:pw@example.com/").host,
        "example.com",
        "userinfo is not the host"
    );
    assert_eq!(
        o("https://example.com@evil.org/").host,
        "evil.org",
        "the real host after @"
    );
    assert_eq!(o("http://0x7f.1/").host, "127.0.0.1", "numeric IPv4 forms");
    assert_eq!(o("http://2130706433/").host, "127.0.0.1");
    assert_eq!(
        o("https://bücher.example/").host,
        "xn--bcher-kva.example",
        "IDN to punycode"
    );
    assert_eq!(o("https://example.com/").port, Some(443));
    assert_eq!(o("http://example.com:8080/").port, Some(8080));
}

#[test]
fn wildcards_cover_subdomains_and_nothing_else() {
    let p = pat("*.example.com");
    for yes in [
        "https://example.com/",
        "https://a.example.com/",
        "http://a.b.example.com:8080/",
        "https://A.EXAMPLE.COM./",
    ] {
        assert!(p.matches(&o(yes)), "{yes}");
    }
    for no in [
        "https://evilexample.com/",
        "https://example.com.evil.org/",
        "https://evil.org/?example.com",
        "https://example.com@evil.org/",
        "https://exampleXcom/",
    ] {
        assert!(!p.matches(&o(no)), "{no}");
    }
    let exact = pat("example.com");
    assert!(exact.matches(&o("https://example.com/")));
    assert!(!exact.matches(&o("https://a.example.com/")));
    assert!(pat("https://example.com").matches(&o("https://example.com/")));
    assert!(
        !pat("https://example.com").matches(&o("http://example.com/")),
        "scheme"
    );
    assert!(
        !pat("example.com:8443").matches(&o("https://example.com/")),
        "port"
    );
    assert!(
        pat("*.bücher.example").matches(&o("https://shop.xn--bcher-kva.example/")),
        "punycode in patterns too"
    );
    assert!(pat("127.0.0.1").matches(&o("http://0x7f.0.0.1:9/")));
}

#[test]
fn bad_patterns_are_refused() {
    for bad in [
        "",
        "*example.com",
        "exa*mple.com",
        "https://",
        "a/b",
        // Each of these would mean another host than it reads as.
        "evil.test@bank.test",
        "https://evil.test@bank.test",
        "x.test?.y",
        "x.test#.y",
        "bank.test\\evil.test",
        "ex%61mple.com",
        "a.test b.test",
    ] {
        assert!(OriginPattern::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn launched_defaults_allow_all_but_eval_off_loopback() {
    let p = Policy::launched_default();
    assert_eq!(
        p.decide(Category::Interact, "https://example.com/").verdict,
        Verdict::Allow
    );
    assert_eq!(
        p.decide(Category::Eval, "https://example.com/").verdict,
        Verdict::Ask
    );
    assert_eq!(
        p.decide(Category::Eval, "http://127.0.0.1:5000/").verdict,
        Verdict::Allow
    );
    for blank in ["about:blank", "data:text/html,<p>hi"] {
        assert_eq!(
            p.decide(Category::Eval, blank).verdict,
            Verdict::Allow,
            "{blank}"
        );
    }
    assert_eq!(
        Policy::connected_default()
            .decide(Category::Eval, "about:blank")
            .verdict,
        Verdict::Deny
    );
    assert_eq!(
        p.decide(Category::Eval, "http://localhost:5000/").verdict,
        Verdict::Allow
    );
}

#[test]
fn connected_defaults_look_freely_and_ask_before_changing() {
    let p = Policy::connected_default();
    let d = |c| p.decide(c, "https://bank.example/").verdict;
    assert_eq!(d(Category::Navigate), Verdict::Allow);
    assert_eq!(d(Category::Read), Verdict::Allow);
    for c in [
        Category::Interact,
        Category::Submit,
        Category::Upload,
        Category::Download,
        Category::Storage,
    ] {
        assert_eq!(d(c), Verdict::Ask, "{c:?}");
    }
    assert_eq!(d(Category::Eval), Verdict::Deny);
}

#[test]
fn flags_and_safe_mode_apply_last() {
    let mut p = Policy::connected_default();
    p.rules
        .push(Policy::flag_rule("interact@*.example.com", Verdict::Allow, "--allow").unwrap());
    p.rules
        .push(Policy::flag_rule("evil.example.com", Verdict::Deny, "--deny").unwrap());
    assert_eq!(
        p.decide(Category::Interact, "https://app.example.com/")
            .verdict,
        Verdict::Allow
    );
    let denied = p.decide(Category::Read, "https://evil.example.com/");
    assert_eq!(denied.verdict, Verdict::Deny);
    assert_eq!(denied.because, "--deny evil.example.com");
    let safe = p.clone().read_only("--read-only");
    assert_eq!(
        safe.decide(Category::Interact, "https://app.example.com/")
            .verdict,
        Verdict::Deny
    );
    assert_eq!(
        safe.decide(Category::Read, "https://app.example.com/")
            .verdict,
        Verdict::Allow
    );
    assert!(Policy::flag_rule("hack@x.com", Verdict::Allow, "--allow").is_err());
    let err = Policy::denied(
        Category::Eval,
        "https://a.example/",
        &safe.decide(Category::Eval, "https://a.example/"),
    );
    assert_eq!(err.code, ErrorCode::PolicyDenied);
    assert!(
        err.message.contains("--allow eval@a.example"),
        "{}",
        err.message
    );
}

/// The category of a command as the gate sees it: decoded, then judged.
fn category_of(method: &str, params: serde_json::Value) -> Option<Category> {
    crate::methods::Command::decode(method, params)
        .unwrap()
        .category()
}

#[test]
fn methods_have_categories() {
    use serde_json::json;
    assert_eq!(category_of("click", json!({})), Some(Category::Interact));
    assert_eq!(
        category_of("type", json!({"text": "a", "submit": true})),
        Some(Category::Submit)
    );
    assert_eq!(
        category_of("type", json!({"text": "a"})),
        Some(Category::Interact)
    );
    assert_eq!(
        category_of("evaluate", json!({"function": "1"})),
        Some(Category::Eval)
    );
    assert_eq!(category_of("snapshot", json!({})), Some(Category::Read));
    assert_eq!(category_of("tabs.list", json!({})), None);
    // Closing a tab changes the person's browser: an interaction with that tab's page.
    assert_eq!(
        category_of("tabs.close", json!({})),
        Some(Category::Interact)
    );
    for f in crate::methods::METHODS {
        if f.route == crate::methods::Route::Tab {
            assert!(f.category.is_some(), "{} has no category", f.name);
        }
    }
}

/// Found by `tests/fuzz_policy.rs`: the port of an IPv6 pattern was dropped, so
/// `[::1]:8080` matched every port of `[::1]`.
#[test]
fn ipv6_patterns_keep_their_port() {
    let p = pat("[::1]:8080");
    assert_eq!((p.host.as_str(), p.port), ("[::1]", Some(8080)));
    assert!(p.matches(&o("http://[::1]:8080/")));
    assert!(!p.matches(&o("http://[::1]:8081/")));
    assert_eq!(pat("https://[::]:0").port, Some(0));
    assert_eq!(pat("[::1]").port, None);
    assert!(
        OriginPattern::parse("::1").is_err(),
        "an IPv6 address needs brackets"
    );
}

/// Found by `tests/fuzz_policy.rs`: `blob:https://bank.com/…` was judged as a page of no
/// site, so rules about bank.com did not apply to bank.com's own blob documents.
#[test]
fn blob_documents_are_judged_as_the_origin_inside() {
    assert_eq!(o("blob:https://Bank.com/5d1e-9a"), o("https://bank.com/"));
    assert_eq!(o("filesystem:http://a.com/temporary/x"), o("http://a.com/"));
    let mut p = Policy::allow_all();
    p.rules
        .push(Policy::flag_rule("bank.com", Verdict::Deny, "--deny").unwrap());
    for url in [
        "blob:https://bank.com/5d1e-9a",
        "blob:null/5d1e-9a",
        "blob:",
        "blob:blob:https://bank.com/x",
    ] {
        assert_eq!(
            p.decide(Category::Interact, url).verdict,
            Verdict::Deny,
            "{url}"
        );
    }
}

/// Found by `tests/fuzz_policy.rs`: a host of dots lost them all and became the empty
/// host of pages of no site (`http://./`, and the pattern `.#` the no-site pattern).
#[test]
fn hosts_of_only_dots_are_not_pages_of_no_site() {
    for url in ["http://./", "https://../x"] {
        assert_eq!(origin_of(url), None, "{url}");
        assert_eq!(
            Policy::launched_default()
                .decide(Category::Eval, url)
                .verdict,
            Verdict::Deny
        );
    }
    assert!(OriginPattern::parse(".#").is_err());
}

/// Found by `tests/fuzz_policy.rs` (CI): `0..` lost its dots and became `0`, which the URL
/// parser reads as 0.0.0.0, so the pattern did not read back as itself.
#[test]
fn hosts_read_again_after_their_dots_have_one_spelling() {
    assert_eq!(origin_of("http://0../").unwrap().host, "0.0.0.0");
    assert_eq!(origin_of("http://0/").unwrap().host, "0.0.0.0");
    let p = OriginPattern::parse("0..").unwrap();
    assert_eq!(p.host, "0.0.0.0");
    assert_eq!(OriginPattern::parse(&p.to_string()), Ok(p));
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// A DNS label: lower-case letters and digits, 1–12 long.
    fn label() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9]{0,11}"
    }

    fn domain() -> impl Strategy<Value = String> {
        (
            label(),
            prop::sample::select(vec!["com", "org", "example", "net"]),
        )
            .prop_map(|(l, tld)| format!("{l}.{tld}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn a_wildcard_covers_the_domain_and_its_subdomains_only(
            d in domain(), sub in label(), glued in label(), evil in domain()
        ) {
            let p = pat(&format!("*.{d}"));
            let m1 = p.matches(&o(&format!("https://{d}/")));
            prop_assert!(m1);
            let m2 = p.matches(&o(&format!("https://{sub}.{d}/x")));
            prop_assert!(m2);
            // Glued to the name, or the name used as a sub-domain of another site: never.
            let m3 = p.matches(&o(&format!("https://{glued}{d}/")));
            prop_assert!(!m3);
            prop_assume!(evil != d);
            let m4 = p.matches(&o(&format!("https://{d}.{evil}/")));
            prop_assert!(!m4);
        }

        #[test]
        fn userinfo_case_and_trailing_dots_do_not_fool_matching(
            d in domain(), evil in domain()
        ) {
            prop_assume!(evil != d);
            let p = pat(&d);
            let m5 = p.matches(&o(&format!("https://{d}@{evil}/")));
            prop_assert!(!m5);
            let m6 = p.matches(&o(&format!("https://{d}:pw@{evil}/")));
            prop_assert!(!m6);
            let m7 = p.matches(&o(&format!("https://user:pw@{d}/")));
            prop_assert!(m7);
            let m8 = p.matches(&o(&format!("HTTPS://{}./", d.to_uppercase())));
            prop_assert!(m8);
        }

        #[test]
        fn numeric_ip_spellings_are_one_address(a in 1u8..=223, b: u8, c: u8, e in 1u8..=254) {
            let dotted = format!("{a}.{b}.{c}.{e}");
            let number = u32::from_be_bytes([a, b, c, e]);
            let p = pat(&dotted);
            let m9 = p.matches(&o(&format!("http://{number}/")));
            prop_assert!(m9);
            let m10 = p.matches(&o(&format!("http://0x{number:x}/")));
            prop_assert!(m10);
        }

        #[test]
        fn anything_that_is_not_a_url_is_never_allowed(s in "[^:]{0,40}") {
            for policy in [Policy::launched_default(), Policy::connected_default()] {
                prop_assert_eq!(policy.decide(Category::Interact, &s).verdict, Verdict::Deny);
            }
        }

        #[test]
        fn unicode_names_and_their_punycode_are_one_host(d in domain()) {
            // IDN: a Unicode label and its punycode are one host.
            let unicode = format!("https://bücher.{d}/");
            let puny = o(&unicode);
            prop_assert!(puny.host.starts_with("xn--"));
            let m11 = pat(&format!("bücher.{d}")).matches(&puny);
            prop_assert!(m11);
        }
    }
}

#[test]
fn recording_a_person_is_its_own_category_that_writes() {
    let rec = |action: &str| category_of("recorder", serde_json::json!({ "action": action }));
    for action in ["start", "stop", "enable"] {
        assert_eq!(rec(action), Some(Category::Record), "{action}");
    }
    assert_eq!(rec("status"), Some(Category::Read));
    let url = "https://bank.example/";
    assert_eq!(
        Policy::connected_default()
            .decide(Category::Record, url)
            .verdict,
        Verdict::Ask
    );
    assert_eq!(
        Policy::launched_default()
            .decide(Category::Record, url)
            .verdict,
        Verdict::Allow
    );
    let safe = Policy::launched_default().read_only("--read-only");
    assert_eq!(safe.decide(Category::Record, url).verdict, Verdict::Deny);
    let rule = Policy::flag_rule("record@bank.example", Verdict::Deny, "--deny").unwrap();
    assert_eq!(rule.category, Some(Category::Record));
}
