//! Refs: short names (`e12`, `f1e7` inside the first child frame) for elements of one
//! document. A ref keeps naming the same element while its document lives and is never
//! reused for another element in the tab, so an old ref is detected as stale, never
//! silently resolved to something else.

use std::collections::HashMap;

use super::FrameKey;
use crate::wire::{ErrorCode, WireError};

/// Where a ref points: the element's registry id in a frame's document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefTarget {
    pub frame: FrameKey,
    pub local: u32,
}

/// The refs of one tab.
#[derive(Debug, Default)]
pub struct RefTable {
    by_element: HashMap<(FrameKey, u32), String>,
    by_ref: HashMap<String, RefTarget>,
    /// Child frames get a stable small number for their prefix, by frame id.
    frame_numbers: HashMap<String, u32>,
    main_frame: Option<String>,
    next: u32,
}

impl RefTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Which frame is the main one (its refs have no `f` prefix).
    pub fn set_main_frame(&mut self, frame_id: &str) {
        self.main_frame = Some(frame_id.to_string());
    }

    /// The ref of an element, made on first use.
    pub fn ref_for(&mut self, frame: &FrameKey, local: u32) -> String {
        if let Some(r) = self.by_element.get(&(frame.clone(), local)) {
            return r.clone();
        }
        self.next += 1;
        let prefix = if self.main_frame.as_deref() == Some(frame.frame_id.as_str()) {
            String::new()
        } else {
            let count = self.frame_numbers.len() as u32 + 1;
            let n = *self
                .frame_numbers
                .entry(frame.frame_id.clone())
                .or_insert(count);
            format!("f{n}")
        };
        let name = format!("{prefix}e{}", self.next);
        self.by_element.insert((frame.clone(), local), name.clone());
        self.by_ref.insert(
            name.clone(),
            RefTarget {
                frame: frame.clone(),
                local,
            },
        );
        name
    }

    /// Resolve a ref against the frames' current documents (`loader_of(frame_id)`).
    pub fn resolve(
        &self,
        name: &str,
        loader_of: impl Fn(&str) -> Option<String>,
    ) -> Result<RefTarget, WireError> {
        let Some(target) = self.by_ref.get(name.trim()) else {
            let shape_ok = name
                .trim()
                .trim_start_matches('f')
                .chars()
                .any(|c| c == 'e');
            let message = if shape_ok {
                format!("ref {name} is unknown here (refs come from browser_snapshot or browser_find of this tab)")
            } else {
                format!("{name:?} is not a ref; refs look like e12 or f1e7")
            };
            return Err(WireError::new(
                if shape_ok {
                    ErrorCode::RefStale
                } else {
                    ErrorCode::BadArgs
                },
                message,
            ));
        };
        match loader_of(&target.frame.frame_id) {
            Some(loader) if loader == target.frame.loader_id => Ok(target.clone()),
            _ => Err(WireError::new(
                ErrorCode::RefStale,
                format!("ref {name} belongs to a page that has since navigated or closed"),
            )),
        }
    }

    /// Forget refs of documents that are gone, keeping their names reserved.
    pub fn forget_frame_documents(&mut self, frame_id: &str, current_loader: Option<&str>) {
        self.by_element.retain(|(f, _), _| {
            f.frame_id != frame_id || Some(f.loader_id.as_str()) == current_loader
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(f: &str, l: &str) -> FrameKey {
        FrameKey {
            frame_id: f.into(),
            loader_id: l.into(),
        }
    }

    #[test]
    fn refs_are_stable_per_element_and_never_reused() {
        let mut t = RefTable::new();
        t.set_main_frame("M");
        let doc1 = key("M", "L1");
        let a = t.ref_for(&doc1, 1);
        assert_eq!(a, "e1");
        assert_eq!(t.ref_for(&doc1, 1), "e1", "same element, same ref");
        assert_eq!(t.ref_for(&doc1, 2), "e2");
        let child = key("C", "L9");
        assert_eq!(t.ref_for(&child, 1), "f1e3", "frame-scoped");
        let doc2 = key("M", "L2");
        assert_eq!(
            t.ref_for(&doc2, 1),
            "e4",
            "a new document's element 1 is a new ref"
        );
    }

    #[test]
    fn old_documents_make_refs_stale_and_garbage_is_bad_args() {
        let mut t = RefTable::new();
        t.set_main_frame("M");
        let r = t.ref_for(&key("M", "L1"), 7);
        assert_eq!(t.resolve(&r, |_| Some("L1".into())).unwrap().local, 7);
        let stale = t.resolve(&r, |_| Some("L2".into())).unwrap_err();
        assert_eq!(stale.code, ErrorCode::RefStale);
        assert_eq!(
            t.resolve(&r, |_| None).unwrap_err().code,
            ErrorCode::RefStale
        );
        assert_eq!(
            t.resolve("e999", |_| Some("L1".into())).unwrap_err().code,
            ErrorCode::RefStale
        );
        assert_eq!(
            t.resolve("#button", |_| Some("L1".into()))
                .unwrap_err()
                .code,
            ErrorCode::BadArgs
        );
    }
}
