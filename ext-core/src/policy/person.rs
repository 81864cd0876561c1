//! What a person set in the browser (the side panel): per-origin rules and site modes,
//! "always allow here" grants and step budgets. Kept by the extension and laid over every
//! connected server's policy: they decide wherever the server's own rules do not deny, so
//! they never loosen what kapture's configuration forbids.

use serde::{Deserialize, Serialize};

use super::budget::Budget;
use super::{Category, OriginPattern, Policy, Rule, Verdict};

/// A rule as a person keeps it: an origin pattern, a category (all when `None`), a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonRule {
    pub origin: String,
    #[serde(default)]
    pub category: Option<Category>,
    pub verdict: Verdict,
}

/// "Always allow here": `category` on exactly `origin` (`https://shop.test`), given by
/// answering an approval; turns that origin's asks of that category into allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonGrant {
    pub origin: String,
    pub category: Category,
    /// When it was given (ms since the epoch).
    #[serde(default)]
    pub since: u64,
}

/// A step budget a person set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonBudget {
    pub origin: String,
    pub max_steps_per_hour: u64,
}

/// Everything a person set in the browser, as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonPolicy {
    #[serde(default)]
    pub rules: Vec<PersonRule>,
    #[serde(default)]
    pub grants: Vec<PersonGrant>,
    #[serde(default)]
    pub budgets: Vec<PersonBudget>,
}

/// How a site is driven, in one word: everything allowed, changes asked, or changes refused
/// (reads and navigation stay allowed in the last two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteMode {
    Auto,
    Ask,
    ReadOnly,
    /// The rules say something else per category.
    Custom,
}

/// The loosest verdict `policies` give `category` on `url` (deny when there are none).
pub fn loosest_verdict(policies: &[Policy], category: Category, url: &str) -> Verdict {
    policies
        .iter()
        .map(|p| p.decide(category, url).verdict)
        .min_by_key(|v| super::bound::strictness(*v))
        .unwrap_or(Verdict::Deny)
}

impl SiteMode {
    /// The mode of `url`'s site under `policy`. Categories kapture's own rules deny there
    /// (eval in a person's browser) are left out: no mode can change them.
    pub fn on(policy: &Policy, url: &str) -> SiteMode {
        let own = Policy {
            rules: policy.rules.clone(),
            ..Policy::default()
        };
        let open: Vec<Category> = Category::ALL
            .into_iter()
            .filter(|c| own.decide(*c, url).verdict != Verdict::Deny)
            .collect();
        if !open.iter().any(|c| c.writes()) {
            return SiteMode::ReadOnly;
        }
        SiteMode::of(&open, |c| policy.decide(c, url).verdict)
    }

    /// The mode of `url`'s site for the freest of `policies` per category: a category is
    /// open when any of them leaves it open, and its verdict is the loosest they give.
    pub fn loosest(policies: &[Policy], url: &str) -> SiteMode {
        let open: Vec<Category> = Category::ALL
            .into_iter()
            .filter(|c| {
                policies.iter().any(|p| {
                    let own = Policy {
                        rules: p.rules.clone(),
                        ..Policy::default()
                    };
                    own.decide(*c, url).verdict != Verdict::Deny
                })
            })
            .collect();
        if !open.iter().any(|c| c.writes()) {
            return SiteMode::ReadOnly;
        }
        SiteMode::of(&open, |c| loosest_verdict(policies, c, url))
    }

    /// The mode the verdicts per category amount to, over the categories `open`.
    pub fn of(open: &[Category], verdict: impl Fn(Category) -> Verdict) -> SiteMode {
        let writes: Vec<Verdict> = open
            .iter()
            .copied()
            .filter(|c| c.writes())
            .map(&verdict)
            .collect();
        let looks = [Category::Read, Category::Navigate]
            .into_iter()
            .filter(|c| open.contains(c))
            .all(|c| verdict(c) == Verdict::Allow);
        let all = |v: Verdict| writes.iter().all(|w| *w == v);
        match () {
            _ if looks && all(Verdict::Allow) => SiteMode::Auto,
            _ if looks && all(Verdict::Ask) => SiteMode::Ask,
            _ if looks && all(Verdict::Deny) => SiteMode::ReadOnly,
            _ => SiteMode::Custom,
        }
    }
}

/// Where a person's settings show in refusals (and how their budgets are told apart).
pub const SOURCE: &str = "your rule in Kapture's side panel";

impl PersonPolicy {
    /// Every pattern must parse and every budget allow at least one step; the error names
    /// the entry.
    pub fn validate(&self) -> Result<(), String> {
        for r in &self.rules {
            OriginPattern::parse(&r.origin).map_err(|e| format!("rule for {:?}: {e}", r.origin))?;
        }
        for g in &self.grants {
            OriginPattern::parse(&g.origin)
                .map_err(|e| format!("grant for {:?}: {e}", g.origin))?;
        }
        for b in &self.budgets {
            OriginPattern::parse(&b.origin)
                .map_err(|e| format!("budget for {:?}: {e}", b.origin))?;
            if b.max_steps_per_hour == 0 {
                return Err(format!(
                    "budget for {:?}: at least 1 step per hour (use a read-only rule to refuse every change)",
                    b.origin
                ));
            }
        }
        Ok(())
    }

    /// `server`'s policy with this person's settings laid over it (entries that do not
    /// parse are left out; `validate` refuses them before they are stored).
    pub fn apply(&self, server: &Policy) -> Policy {
        let mut p = server.clone();
        p.person = self
            .rules
            .iter()
            .filter_map(|r| {
                Some(Rule {
                    origin: OriginPattern::parse(&r.origin).ok()?,
                    category: r.category,
                    verdict: r.verdict,
                    source: format!("{SOURCE}: {} {}", r.origin, verdict_word(r.verdict)),
                })
            })
            .collect();
        p.grants = self
            .grants
            .iter()
            .filter_map(|g| {
                Some(Rule {
                    origin: OriginPattern::parse(&g.origin).ok()?,
                    category: Some(g.category),
                    verdict: Verdict::Allow,
                    source: format!(
                        "you always allow {} on {} (Kapture's side panel)",
                        g.category.name(),
                        g.origin
                    ),
                })
            })
            .collect();
        // Applied again to an applied policy (a queued command's re-check): the person's
        // budgets replace the earlier ones.
        p.budgets.retain(|b| b.source != SOURCE);
        p.budgets.extend(self.budgets.iter().filter_map(|b| {
            Some(Budget {
                origin: OriginPattern::parse(&b.origin).ok()?,
                max_steps_per_hour: b.max_steps_per_hour,
                source: SOURCE.into(),
            })
        }));
        p
    }

    /// Set the mode of `origin`: its rules replaced by those of `mode` (`Custom` only
    /// removes them, so the server's rules decide again).
    pub fn set_mode(&mut self, origin: &str, mode: SiteMode) -> Result<(), String> {
        let pattern = OriginPattern::parse(origin)?.to_string();
        self.rules.retain(|r| {
            OriginPattern::parse(&r.origin)
                .map(|p| p.to_string())
                .as_deref()
                != Ok(&pattern)
        });
        let rule = |category, verdict| PersonRule {
            origin: pattern.clone(),
            category,
            verdict,
        };
        let looks = [
            rule(Some(Category::Read), Verdict::Allow),
            rule(Some(Category::Navigate), Verdict::Allow),
        ];
        match mode {
            SiteMode::Auto => self.rules.push(rule(None, Verdict::Allow)),
            SiteMode::Ask => {
                self.rules.push(rule(None, Verdict::Ask));
                self.rules.extend(looks);
            }
            SiteMode::ReadOnly => {
                self.rules.push(rule(None, Verdict::Deny));
                self.rules.extend(looks);
                // Nothing may be changed there any more, whatever was granted before.
                self.grants.retain(|g| {
                    OriginPattern::parse(&pattern)
                        .ok()
                        .zip(super::origin_of(&g.origin))
                        .is_none_or(|(p, o)| !p.matches(&o))
                });
            }
            SiteMode::Custom => {}
        }
        Ok(())
    }

    /// Remember "always allow `category` on `origin`" (once; only an origin that can hold
    /// one, see [`lasting_origin`]).
    pub fn grant(&mut self, origin: &str, category: Category, now: u64) {
        if lasting_origin(origin)
            && !self
                .grants
                .iter()
                .any(|g| g.origin == origin && g.category == category)
        {
            self.grants.push(PersonGrant {
                origin: origin.to_string(),
                category,
                since: now,
            });
        }
    }

    /// Forget a grant; whether there was one.
    pub fn revoke(&mut self, origin: &str, category: Category) -> bool {
        let before = self.grants.len();
        self.grants
            .retain(|g| !(g.origin == origin && g.category == category));
        before != self.grants.len()
    }
}

/// Whether `origin` can hold an "always allow here": a real host, no wildcard (a grant is
/// for exactly one origin), never a page of no site.
pub fn lasting_origin(origin: &str) -> bool {
    !origin.contains('*') && super::origin_of(origin).is_some_and(|o| !o.host.is_empty())
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Ask => "ask",
        Verdict::Deny => "deny",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_on(p: &Policy, url: &str) -> SiteMode {
        SiteMode::on(p, url)
    }

    #[test]
    fn a_site_shows_what_the_freest_connected_server_may_do_there() {
        let url = "https://shop.example/";
        let asks = Policy::connected_default();
        let reads = Policy::connected_default().read_only("--read-only");
        let all = Policy::allow_all();
        assert_eq!(
            SiteMode::loosest(std::slice::from_ref(&reads), url),
            SiteMode::ReadOnly
        );
        assert_eq!(
            SiteMode::loosest(&[reads.clone(), asks.clone()], url),
            SiteMode::Ask
        );
        assert_eq!(SiteMode::loosest(&[asks, reads, all], url), SiteMode::Auto);
        assert_eq!(
            loosest_verdict(&[], Category::Read, url),
            Verdict::Deny,
            "no rules allow nothing"
        );
    }

    #[test]
    fn a_persons_rules_decide_where_the_server_does_not_deny() {
        // Your own browser: writes asked, eval denied by kapture's configuration.
        let server = Policy::connected_default();
        let mut me = PersonPolicy::default();
        me.set_mode("shop.test", SiteMode::Auto).unwrap();
        let p = me.apply(&server);
        let shop = "https://shop.test/cart";
        assert_eq!(p.decide(Category::Interact, shop).verdict, Verdict::Allow);
        assert_eq!(p.decide(Category::Submit, shop).verdict, Verdict::Allow);
        // Never loosened: what kapture denies stays denied.
        let eval = p.decide(Category::Eval, shop);
        assert_eq!(eval.verdict, Verdict::Deny);
        assert!(!eval.because.contains("side panel"), "{}", eval.because);
        // Elsewhere nothing changed.
        assert_eq!(
            p.decide(Category::Interact, "https://bank.test/").verdict,
            Verdict::Ask
        );
        // Read-only: changes refused, looking allowed, the refusal names the person's rule.
        me.set_mode("bank.test", SiteMode::ReadOnly).unwrap();
        let p = me.apply(&server);
        let d = p.decide(Category::Interact, "https://bank.test/");
        assert_eq!(d.verdict, Verdict::Deny);
        assert!(d.because.contains("side panel"), "{}", d.because);
        assert_eq!(mode_on(&p, "https://bank.test/"), SiteMode::ReadOnly);
        // Eval stays denied there (kapture's rule): the mode is what the person can change.
        assert_eq!(mode_on(&p, "https://shop.test/"), SiteMode::Auto);
        assert_eq!(
            mode_on(&server, "https://other.test/"),
            SiteMode::Ask,
            "the browser's own defaults ask"
        );
        let mut odd = me.clone();
        odd.rules.push(PersonRule {
            origin: "shop.test".into(),
            category: Some(Category::Upload),
            verdict: Verdict::Deny,
        });
        assert_eq!(
            mode_on(&odd.apply(&server), "https://shop.test/"),
            SiteMode::Custom
        );
        // Setting a mode again replaces the old one.
        me.set_mode("bank.test", SiteMode::Ask).unwrap();
        assert_eq!(
            me.rules.iter().filter(|r| r.origin == "bank.test").count(),
            3
        );
        assert_eq!(
            mode_on(&me.apply(&server), "https://bank.test/"),
            SiteMode::Ask
        );
    }

    #[test]
    fn grants_turn_asks_into_allows_and_nothing_else() {
        let server = Policy::connected_default();
        let mut me = PersonPolicy::default();
        me.grant("https://shop.test", Category::Interact, 1);
        me.grant("https://shop.test", Category::Interact, 2);
        assert_eq!(me.grants.len(), 1);
        me.grant("https://shop.test", Category::Eval, 3);
        // Pages of no site and wildcards never hold a grant.
        me.grant("about://", Category::Interact, 4);
        me.grant("http://*.evil.test", Category::Interact, 5);
        assert_eq!(me.grants.len(), 2);
        let p = me.apply(&server);
        assert_eq!(
            p.decide(Category::Interact, "https://shop.test/x").verdict,
            Verdict::Allow
        );
        // Only that origin, only that category, never what kapture denies.
        assert_eq!(
            p.decide(Category::Interact, "http://shop.test/").verdict,
            Verdict::Ask
        );
        assert_eq!(
            p.decide(Category::Submit, "https://shop.test/").verdict,
            Verdict::Ask
        );
        assert_eq!(
            p.decide(Category::Eval, "https://shop.test/").verdict,
            Verdict::Deny
        );
        // A person's own deny is not undone by a grant; read-only drops the grants there.
        me.rules.push(PersonRule {
            origin: "shop.test".into(),
            category: Some(Category::Interact),
            verdict: Verdict::Deny,
        });
        assert_eq!(
            me.apply(&server)
                .decide(Category::Interact, "https://shop.test/")
                .verdict,
            Verdict::Deny
        );
        me.set_mode("*.shop.test", SiteMode::ReadOnly).unwrap();
        assert!(me.grants.is_empty());
        assert!(!me.revoke("https://shop.test", Category::Interact));
    }

    #[test]
    fn the_most_specific_of_the_persons_rules_decides_whatever_the_order() {
        let server = Policy::connected_default();
        let mut me = PersonPolicy::default();
        me.set_mode("bank.test", SiteMode::ReadOnly).unwrap();
        me.set_mode("*.test", SiteMode::Auto).unwrap();
        me.set_mode("*", SiteMode::Auto).unwrap();
        let p = me.apply(&server);
        assert_eq!(SiteMode::on(&p, "https://bank.test/"), SiteMode::ReadOnly);
        assert_eq!(SiteMode::on(&p, "https://shop.test/"), SiteMode::Auto);
        assert_eq!(
            p.decide(Category::Interact, "https://other.example/")
                .verdict,
            Verdict::Allow
        );
    }

    #[test]
    fn a_server_cannot_pass_its_rules_off_as_the_persons() {
        // A kapture's welcome may carry `person`/`grants` fields: the person's own replace them.
        let mut server = Policy::connected_default();
        server.person = Policy::allow_all().rules;
        server.grants = Policy::allow_all().rules;
        let p = PersonPolicy::default().apply(&server);
        assert!(p.person.is_empty() && p.grants.is_empty());
        assert_eq!(
            p.decide(Category::Interact, "https://bank.test/").verdict,
            Verdict::Ask
        );
    }

    #[test]
    fn bad_entries_are_refused_by_name() {
        let me = PersonPolicy {
            rules: vec![PersonRule {
                origin: "exa*mple.com".into(),
                category: None,
                verdict: Verdict::Allow,
            }],
            ..Default::default()
        };
        assert!(me.validate().unwrap_err().contains("exa*mple.com"));
        let zero = PersonPolicy {
            budgets: vec![PersonBudget {
                origin: "a.test".into(),
                max_steps_per_hour: 0,
            }],
            ..Default::default()
        };
        assert!(zero.validate().is_err());
        let ok = PersonPolicy {
            budgets: vec![PersonBudget {
                origin: "a.test".into(),
                max_steps_per_hour: 5,
            }],
            ..Default::default()
        };
        ok.validate().unwrap();
        assert_eq!(ok.apply(&Policy::default()).budgets.len(), 1);
    }
}
