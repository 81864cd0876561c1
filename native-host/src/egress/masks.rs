//! The secret values kapture learns while it runs: each session's ([`Masks`]: typed into
//! confidential fields, a replay's, a saved login's) and every session's together
//! ([`MaskBook`], live and ended), which the exit masks in everything it sends.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Secret values this MCP session learned (typed into confidential fields, used by a
/// replay): masked in every later answer, resource and journal entry of the session.
#[derive(Clone, Default)]
pub struct Masks {
    values: Arc<Mutex<Vec<(String, String)>>>,
}

/// Every session's masks, live and ended, kept apart from the session registry so that
/// masking never waits on it: what one session learned is masked in every session's
/// answers (a value may show up wherever the browser is shared: a tab list, a journal).
#[derive(Default)]
pub struct MaskBook {
    live: Mutex<BTreeMap<u32, Masks>>,
    /// What ended sessions learned.
    retired: Masks,
}

impl MaskBook {
    /// Session `id` masks `masks` from now on, for everyone.
    pub fn join(&self, id: u32, masks: Masks) {
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, masks);
    }

    /// Session `id` ended: what it learned stays masked.
    pub fn leave(&self, id: u32) {
        let gone = self
            .live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        if let Some(masks) = gone {
            self.retired.absorb(&masks);
        }
    }

    /// `fixed` and every value any session learned, longest first.
    pub fn all(&self, fixed: &[(String, String)]) -> Vec<(String, String)> {
        let live: Vec<Masks> = self
            .live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        let mut all: Vec<(String, String)> = self.retired.with(fixed);
        for masks in &live {
            all.extend(masks.with(&[]));
        }
        all.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
        all.dedup();
        all
    }
}

/// Values kept at most per kind of source; the oldest go first.
const MAX_MASKS: usize = 1000;
/// A replay's secrets are never pushed out by values an agent types (it could type a
/// thousand values to evict them): they have room of their own.
const MAX_PINNED: usize = 10_000;

impl Masks {
    /// Mask `value` from now on (`kind` names it in `[redacted:<kind>]`). Values typed into
    /// confidential fields (`confidential`) take turns in a bounded list; any other kind (a
    /// replay's secrets) is kept apart, out of reach of what an agent types.
    pub fn add(&self, value: &str, kind: &str) {
        if value.chars().count() < ext_core::secrets::MIN_VALUE_LEN {
            return;
        }
        let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        if values.iter().any(|(v, _)| v == value) {
            return;
        }
        let typed = kind == "confidential";
        let same = |k: &str| (k == "confidential") == typed;
        let limit = if typed { MAX_MASKS } else { MAX_PINNED };
        if values.iter().filter(|(_, k)| same(k)).count() >= limit {
            if let Some(oldest) = values.iter().position(|(_, k)| same(k)) {
                values.remove(oldest);
            }
        }
        values.push((value.to_string(), kind.to_string()));
    }

    /// Mask what `other` masks too (an ended session's values, kept by the registry).
    pub fn absorb(&self, other: &Masks) {
        for (value, kind) in other.with(&[]) {
            self.add(&value, &kind);
        }
    }

    /// `fixed` (from `--secrets`) and the session's values, longest first: a value inside
    /// another is masked after it, not through it.
    pub fn with(&self, fixed: &[(String, String)]) -> Vec<(String, String)> {
        let values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<(String, String)> = fixed.iter().chain(values.iter()).cloned().collect();
        all.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_cannot_push_a_replays_secret_out() {
        let masks = Masks::default();
        masks.add("the-replay-secret", "scenario-secret");
        for i in 0..(MAX_MASKS + 50) {
            masks.add(&format!("t{i:04}"), "confidential");
        }
        let all = masks.with(&[]);
        assert!(all.iter().any(|(v, _)| v == "the-replay-secret"));
        assert_eq!(all.len(), MAX_MASKS + 1);
        // The oldest typed values went first; the newest stay.
        assert!(!all.iter().any(|(v, _)| v == "t0000"));
        assert!(all.iter().any(|(v, _)| v == "t1049"));
        // Longest first.
        assert_eq!(all[0].0, "the-replay-secret");
    }

    #[test]
    fn what_any_session_learned_is_masked_for_all_also_after_it_ended() {
        let book = MaskBook::default();
        let (a, b) = (Masks::default(), Masks::default());
        book.join(1, a.clone());
        book.join(2, b.clone());
        a.add("Canary-of-a", "confidential");
        b.add("Canary-of-b-longer", "confidential");
        let fixed = [("file-secret".to_string(), "secrets-file".to_string())];
        let values = |book: &MaskBook| -> Vec<String> {
            book.all(&fixed).into_iter().map(|(v, _)| v).collect()
        };
        assert_eq!(
            values(&book),
            ["Canary-of-b-longer", "Canary-of-a", "file-secret"]
        );
        book.leave(1);
        book.leave(1);
        a.add("after-the-end", "confidential");
        assert_eq!(
            values(&book),
            ["Canary-of-b-longer", "Canary-of-a", "file-secret"]
        );
    }
}
