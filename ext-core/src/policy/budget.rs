//! Step budgets per origin (`maxStepsPerHour` in kapture's policy file and in the side
//! panel): how many steps (commands that navigate or change something; reads are free) may
//! run on matching origins per hour. The count runs in hour windows that start with the
//! first step, so a refusal can say when the budget resets; a person may extend a window.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Category, Origin, OriginPattern};
use crate::wire::{ErrorCode, WireError};

/// One hour, the length of a budget's window.
pub const WINDOW_MS: f64 = 3_600_000.0;

/// At most this many steps per hour on the origins `origin` matches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub origin: OriginPattern,
    pub max_steps_per_hour: u64,
    /// Where it comes from (policy file line, side panel), for the refusal.
    pub source: String,
}

impl Budget {
    /// The key its count is kept under: budgets on the same pattern share one count.
    pub fn key(&self) -> String {
        self.origin.to_string()
    }
}

/// Whether a command of `category` counts as a step.
pub fn counts(category: Category) -> bool {
    category != Category::Read
}

/// The count of one budget key in its current window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// When the window began (ms since the epoch); it ends an hour later.
    pub start: f64,
    pub used: u64,
    /// Steps a person added to this window.
    pub extra: u64,
}

impl Window {
    pub fn resets_at(&self) -> f64 {
        self.start + WINDOW_MS
    }
}

/// A budget as the side panel shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetState {
    pub origin: String,
    pub max_steps_per_hour: u64,
    pub source: String,
    pub used: u64,
    pub extra: u64,
    /// When the current window ends (ms since the epoch); `None` before the first step.
    pub resets_at: Option<f64>,
}

/// The counts, per budget key (kept by the extension across worker restarts).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    windows: HashMap<String, Window>,
}

impl Ledger {
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }

    /// The window of `key` at `now` (a new one once the old ended).
    fn window(&mut self, key: &str, now: f64) -> &mut Window {
        let w = self.windows.entry(key.to_string()).or_default();
        if w.used == 0 && w.extra == 0 || now >= w.resets_at() {
            *w = Window {
                start: now,
                used: 0,
                extra: 0,
            };
        }
        w
    }

    /// Count one step on `origins` (every document the command is judged on) against every
    /// budget that matches one of them, once each; refused (and nothing counted) when one of
    /// them is spent.
    pub fn take(
        &mut self,
        budgets: &[Budget],
        origins: &[Origin],
        now: f64,
    ) -> Result<(), WireError> {
        self.room(budgets, origins, now)?;
        let mut counted = std::collections::HashSet::new();
        for (b, _) in matching(budgets, origins) {
            // Two budgets on one pattern share a count: counted once.
            if counted.insert(b.key()) {
                self.window(&b.key(), now).used += 1;
            }
        }
        Ok(())
    }

    /// Whether one more step on `origins` fits every budget that matches one of them
    /// (nothing counted): checked before a person is asked, so a spent budget never asks.
    pub fn room(
        &mut self,
        budgets: &[Budget],
        origins: &[Origin],
        now: f64,
    ) -> Result<(), WireError> {
        for (b, origin) in matching(budgets, origins) {
            let w = self.window(&b.key(), now);
            if w.used >= b.max_steps_per_hour + w.extra {
                return Err(spent(b, origin, w, now));
            }
        }
        Ok(())
    }

    /// A person gave the budget on `pattern` `steps` more steps in its current window.
    pub fn extend(&mut self, pattern: &str, steps: u64, now: f64) {
        self.window(pattern, now).extra += steps;
    }

    /// Every budget with its count, for the side panel.
    pub fn states(&self, budgets: &[Budget], now: f64) -> Vec<BudgetState> {
        budgets
            .iter()
            .map(|b| {
                let w = self
                    .windows
                    .get(&b.key())
                    .filter(|w| now < w.resets_at())
                    .cloned();
                BudgetState {
                    origin: b.key(),
                    max_steps_per_hour: b.max_steps_per_hour,
                    source: b.source.clone(),
                    used: w.as_ref().map_or(0, |w| w.used),
                    extra: w.as_ref().map_or(0, |w| w.extra),
                    resets_at: w.map(|w| w.resets_at()),
                }
            })
            .collect()
    }
}

/// The budgets that match one of `origins`, each with the first origin it matches.
fn matching<'a>(budgets: &'a [Budget], origins: &'a [Origin]) -> Vec<(&'a Budget, &'a Origin)> {
    budgets
        .iter()
        .filter_map(|b| origins.iter().find(|o| b.origin.matches(o)).map(|o| (b, o)))
        .collect()
}

/// How long until `at`, in words (`in 42 min`, `in 30 s`).
pub fn wait_words(at: f64, now: f64) -> String {
    let secs = ((at - now) / 1000.0).ceil().max(0.0) as u64;
    if secs >= 120 {
        format!("in {} min", secs.div_ceil(60))
    } else {
        format!("in {secs} s")
    }
}

fn spent(b: &Budget, origin: &Origin, w: &Window, now: f64) -> WireError {
    let mut e = WireError::new(
        ErrorCode::BudgetExceeded,
        format!(
            "the budget of {} steps per hour on {} ({}) is spent on {origin}: {} steps this hour; it resets {}, or a person extends it in Kapture's side panel",
            b.max_steps_per_hour + w.extra,
            b.key(),
            b.source,
            w.used,
            wait_words(w.resets_at(), now),
        ),
    );
    e.data = Some(serde_json::json!({"resetsAt": w.resets_at() as u64, "budget": b.key()}));
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::origin_of;

    fn budget(origin: &str, max: u64) -> Budget {
        Budget {
            origin: OriginPattern::parse(origin).unwrap(),
            max_steps_per_hour: max,
            source: format!("test {origin}"),
        }
    }

    #[test]
    fn a_spent_budget_refuses_until_its_hour_ends() {
        let budgets = [budget("*.shop.test", 2)];
        let shop = origin_of("https://www.shop.test/cart").unwrap();
        let other = origin_of("https://other.test/").unwrap();
        let mut l = Ledger::default();
        let t0 = 1_000_000.0;
        l.take(&budgets, std::slice::from_ref(&shop), t0).unwrap();
        l.take(&budgets, std::slice::from_ref(&shop), t0 + 10.0)
            .unwrap();
        let e = l
            .take(&budgets, std::slice::from_ref(&shop), t0 + 60_000.0)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::BudgetExceeded);
        assert!(e.message.contains("in 59 min"), "{}", e.message);
        assert_eq!(
            e.data.as_ref().unwrap()["resetsAt"],
            (t0 + WINDOW_MS) as u64
        );
        // Other origins are not counted; the refusal counted nothing.
        l.take(&budgets, std::slice::from_ref(&other), t0 + 60_000.0)
            .unwrap();
        assert_eq!(l.states(&budgets, t0 + 60_000.0)[0].used, 2);
        // A new hour, a new window.
        l.take(&budgets, std::slice::from_ref(&shop), t0 + WINDOW_MS)
            .unwrap();
        assert_eq!(l.states(&budgets, t0 + WINDOW_MS)[0].used, 1);
    }

    #[test]
    fn a_person_extends_the_current_window() {
        let budgets = [budget("shop.test", 1)];
        let shop = origin_of("https://shop.test/").unwrap();
        let mut l = Ledger::default();
        l.take(&budgets, std::slice::from_ref(&shop), 0.0).unwrap();
        assert!(l.take(&budgets, std::slice::from_ref(&shop), 1.0).is_err());
        l.extend("shop.test", 2, 2.0);
        l.take(&budgets, std::slice::from_ref(&shop), 3.0).unwrap();
        l.take(&budgets, std::slice::from_ref(&shop), 4.0).unwrap();
        assert!(l.take(&budgets, std::slice::from_ref(&shop), 5.0).is_err());
        let s = &l.states(&budgets, 5.0)[0];
        assert_eq!((s.used, s.extra, s.resets_at), (3, 2, Some(WINDOW_MS)));
    }

    #[test]
    fn every_matching_budget_must_have_room() {
        let budgets = [budget("*", 100), budget("bank.test", 1)];
        let bank = origin_of("https://bank.test/").unwrap();
        let mut l = Ledger::default();
        l.take(&budgets, std::slice::from_ref(&bank), 0.0).unwrap();
        let e = l
            .take(&budgets, std::slice::from_ref(&bank), 1.0)
            .unwrap_err();
        assert!(e.message.contains("bank.test"), "{}", e.message);
        // The refused step was not counted against `*` either.
        assert_eq!(l.states(&budgets, 1.0)[0].used, 1);
        // Two budgets on one pattern (two servers' files) share one count.
        let twice = [budget("a.test", 5), budget("a.test", 3)];
        let a = origin_of("https://a.test/").unwrap();
        l.take(&twice, std::slice::from_ref(&a), 0.0).unwrap();
        assert_eq!(l.states(&twice, 0.0)[0].used, 1);
        assert!(counts(Category::Interact) && !counts(Category::Read));
    }

    #[test]
    fn a_step_counts_on_every_document_it_is_judged_on_once_per_budget() {
        // A click in a sandboxed frame of the shop: judged on "no site" and on the shop.
        let budgets = [budget("shop.test", 2), budget("*", 10)];
        let both = [
            origin_of("about:blank").unwrap(),
            origin_of("https://shop.test/").unwrap(),
        ];
        let mut l = Ledger::default();
        l.take(&budgets, &both, 0.0).unwrap();
        let states = l.states(&budgets, 0.0);
        assert_eq!((states[0].used, states[1].used), (1, 1), "{states:?}");
        l.take(&budgets, &both, 1.0).unwrap();
        let e = l.take(&budgets, &both, 2.0).unwrap_err();
        assert!(e.message.contains("shop.test"), "{}", e.message);
    }
}
