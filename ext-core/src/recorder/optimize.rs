//! Raw events → the steps a person meant: keystrokes into one field become one `type`,
//! clicks that only focus or open something are folded into what followed, custom
//! drop-downs (open, then pick an option) become one `select`, scrolls collapse, and a
//! navigation caused by a click is a wait, not a second visit.

use serde::{Deserialize, Serialize};

use super::{ElementDescriptor, RawEvent};
pub use crate::scenario::PageHint;

/// One step of a recorded scenario, before its values are turned into parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum RecordedStep {
    Navigate {
        url: String,
    },
    /// The previous step loads this page; replay waits for it.
    WaitForLoad {
        url: String,
    },
    Click {
        target: ElementDescriptor,
    },
    Type {
        target: ElementDescriptor,
        text: String,
    },
    Select {
        target: ElementDescriptor,
        value: String,
    },
    Check {
        target: ElementDescriptor,
        checked: bool,
    },
    Press {
        target: ElementDescriptor,
        key: String,
    },
    Scroll {
        x: f64,
        y: f64,
    },
    NewTab {
        url: String,
    },
    /// What the page showed after the step before it (set apart from the steps).
    Observed(PageHint),
}

/// Steps being built, with the page hint of each (kept aligned as steps merge).
#[derive(Default)]
struct Steps {
    steps: Vec<RecordedStep>,
    hints: Vec<Option<PageHint>>,
}

impl Steps {
    fn push(&mut self, step: RecordedStep) {
        self.steps.push(step);
        self.hints.push(None);
    }
    fn pop(&mut self) {
        self.steps.pop();
        self.hints.pop();
    }
    fn last(&self) -> Option<&RecordedStep> {
        self.steps.last()
    }
    fn last_mut(&mut self) -> Option<&mut RecordedStep> {
        self.steps.last_mut()
    }
    /// Each step followed by what the page showed after it, when it showed something; a
    /// multi-step form's current step only where it changed.
    fn finish(self) -> Vec<RecordedStep> {
        let mut out = Vec::with_capacity(self.steps.len());
        let mut form_step = None;
        for (step, hint) in self.steps.into_iter().zip(self.hints) {
            out.push(step);
            let Some(mut h) = hint else { continue };
            if h.step.is_some() && h.step == form_step {
                h.step = None;
            } else if h.step.is_some() {
                form_step = h.step.clone();
            }
            if h.changed || h.dialog || !h.alert.is_empty() || h.step.is_some() {
                out.push(RecordedStep::Observed(h));
            }
        }
        out
    }
}

/// Keys worth replaying; the others arrive as input.
const KEYS: &[&str] = &[
    "Enter",
    "Escape",
    "Tab",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
];

fn same(a: &ElementDescriptor, b: &ElementDescriptor) -> bool {
    if a.css_path.is_empty() && a.xpath.is_empty() {
        a == b
    } else {
        a.css_path == b.css_path && a.xpath == b.xpath
    }
}

fn is_text_field(e: &ElementDescriptor) -> bool {
    e.tag == "textarea"
        || (e.tag == "input"
            && !matches!(
                e.input_type.as_str(),
                "checkbox" | "radio" | "button" | "submit" | "reset" | "file" | "image"
            ))
}

fn opens_a_list(e: &ElementDescriptor) -> bool {
    matches!(e.role.as_str(), "combobox" | "listbox" | "button") && e.tag != "select"
}

/// Turn raw events, in order, into steps.
pub fn optimize(events: &[RawEvent]) -> Vec<RecordedStep> {
    use RecordedStep as S;
    let mut out = Steps::default();
    for ev in events {
        match ev {
            RawEvent::Input { target, value } => {
                // Typing continues in the same field: keep only the final value.
                if let Some(S::Type { target: t, text }) = out.last_mut() {
                    if same(t, target) {
                        *text = value.clone();
                        continue;
                    }
                }
                // A click that only focused this field is redundant.
                if matches!(out.last(), Some(S::Click { target: t }) if same(t, target)) {
                    out.pop();
                }
                out.push(S::Type {
                    target: target.clone(),
                    text: value.clone(),
                });
            }
            RawEvent::Change { target, value } => {
                if matches!(out.last(), Some(S::Click { target: t }) if same(t, target)) {
                    out.pop();
                }
                out.push(S::Select {
                    target: target.clone(),
                    value: value.clone(),
                });
            }
            RawEvent::Check { target, checked } => {
                if matches!(out.last(), Some(S::Click { target: t }) if same(t, target)) {
                    out.pop();
                }
                out.push(S::Check {
                    target: target.clone(),
                    checked: *checked,
                });
            }
            RawEvent::Click { target } => {
                // Open a custom list, then pick an option: one select.
                if target.role == "option" {
                    if let Some(S::Click { target: opener }) = out.last() {
                        if opens_a_list(opener) {
                            let opener = opener.clone();
                            out.pop();
                            let value = if target.text.is_empty() {
                                target.accessible_name.clone()
                            } else {
                                target.text.clone()
                            };
                            out.push(S::Select {
                                target: opener,
                                value,
                            });
                            continue;
                        }
                    }
                }
                if is_text_field(target)
                    && matches!(out.last(), Some(S::Type { target: t, .. }) if same(t, target))
                {
                    // A click back into the field being typed in changes nothing.
                    continue;
                }
                out.push(S::Click {
                    target: target.clone(),
                });
            }
            RawEvent::Key { target, key } => {
                if KEYS.contains(&key.as_str()) {
                    out.push(S::Press {
                        target: target.clone(),
                        key: key.clone(),
                    });
                }
            }
            RawEvent::Scroll { x, y } => {
                if let Some(S::Scroll { x: px, y: py }) = out.last_mut() {
                    (*px, *py) = (*x, *y);
                } else {
                    out.push(S::Scroll { x: *x, y: *y });
                }
            }
            RawEvent::Navigate { url } => {
                let caused = matches!(
                    out.last(),
                    Some(S::Click { .. }) | Some(S::Press { .. }) | Some(S::Select { .. })
                );
                let repeated = matches!(
                    out.last(),
                    Some(S::Navigate { url: u }) | Some(S::WaitForLoad { url: u }) if u == url
                );
                if repeated {
                    continue;
                }
                out.push(if caused {
                    S::WaitForLoad { url: url.clone() }
                } else {
                    S::Navigate { url: url.clone() }
                });
            }
            RawEvent::NewTab { url } => out.push(S::NewTab { url: url.clone() }),
            RawEvent::Hint(hint) => {
                if let Some(last) = out.hints.last_mut() {
                    *last = Some(hint.clone());
                }
            }
        }
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(tag: &str, path: &str) -> ElementDescriptor {
        ElementDescriptor {
            tag: tag.into(),
            css_path: path.into(),
            ..Default::default()
        }
    }

    fn input(path: &str, value: &str) -> RawEvent {
        RawEvent::Input {
            target: el("input", path),
            value: value.into(),
        }
    }

    fn click(target: ElementDescriptor) -> RawEvent {
        RawEvent::Click { target }
    }

    #[test]
    fn what_the_page_showed_follows_its_step_and_leaves_with_a_merged_one() {
        let hint = |alert: &str| {
            RawEvent::Hint(PageHint {
                changed: true,
                dialog: false,
                alert: alert.into(),
                step: None,
            })
        };
        let events = vec![
            click(el("input", "#a")),
            hint(""),
            input("#a", "x"),
            click(el("button", "#go")),
            hint("Wrong password"),
            RawEvent::Hint(PageHint::default()),
        ];
        let steps = optimize(&events);
        assert_eq!(
            steps.len(),
            2,
            "the focus click and its hint went; an empty hint adds nothing: {steps:?}"
        );
        assert!(matches!(&steps[0], RecordedStep::Type { .. }));
        assert!(matches!(&steps[1], RecordedStep::Click { .. }));
        let steps = optimize(&events[..5]);
        assert_eq!(
            steps[2],
            RecordedStep::Observed(PageHint {
                changed: true,
                dialog: false,
                alert: "Wrong password".into(),
                step: None,
            })
        );
        let wire: RawEvent =
            serde_json::from_str(r#"{"kind":"hint","changed":true,"dialog":true,"alert":""}"#)
                .unwrap();
        assert!(matches!(
            wire,
            RawEvent::Hint(PageHint { dialog: true, .. })
        ));
    }

    #[test]
    fn a_login_becomes_navigate_type_type_click_wait() {
        let events = vec![
            RawEvent::Navigate {
                url: "http://127.0.0.1/login".into(),
            },
            click(el("input", "#user")),
            input("#user", "a"),
            input("#user", "ad"),
            input("#user", "ada"),
            RawEvent::Key {
                target: el("input", "#user"),
                key: "a".into(),
            },
            click(el("input", "#pw")),
            input("#pw", "s3cret"),
            click(el("input", "#pw")),
            click(el("button", "#go")),
            RawEvent::Navigate {
                url: "http://127.0.0.1/home".into(),
            },
            RawEvent::Navigate {
                url: "http://127.0.0.1/home".into(),
            },
        ];
        let steps = optimize(&events);
        assert_eq!(
            steps,
            vec![
                RecordedStep::Navigate {
                    url: "http://127.0.0.1/login".into()
                },
                RecordedStep::Type {
                    target: el("input", "#user"),
                    text: "ada".into()
                },
                RecordedStep::Type {
                    target: el("input", "#pw"),
                    text: "s3cret".into()
                },
                RecordedStep::Click {
                    target: el("button", "#go")
                },
                RecordedStep::WaitForLoad {
                    url: "http://127.0.0.1/home".into()
                },
            ]
        );
    }

    #[test]
    fn a_custom_dropdown_pick_is_one_select_and_keys_and_scrolls_are_kept_lean() {
        let opener = ElementDescriptor {
            role: "combobox".into(),
            ..el("div", "#size")
        };
        let option = ElementDescriptor {
            role: "option".into(),
            text: "Large".into(),
            ..el("li", "#size li:nth-child(3)")
        };
        let checkbox = ElementDescriptor {
            input_type: "checkbox".into(),
            ..el("input", "#gift")
        };
        let events = vec![
            click(opener.clone()),
            click(option),
            RawEvent::Scroll { x: 0.0, y: 100.0 },
            RawEvent::Scroll { x: 0.0, y: 400.0 },
            click(checkbox.clone()),
            RawEvent::Check {
                target: checkbox.clone(),
                checked: true,
            },
            RawEvent::Key {
                target: el("input", "#q"),
                key: "Enter".into(),
            },
            RawEvent::Key {
                target: el("input", "#q"),
                key: "Shift".into(),
            },
        ];
        assert_eq!(
            optimize(&events),
            vec![
                RecordedStep::Select {
                    target: opener,
                    value: "Large".into()
                },
                RecordedStep::Scroll { x: 0.0, y: 400.0 },
                RecordedStep::Check {
                    target: checkbox,
                    checked: true
                },
                RecordedStep::Press {
                    target: el("input", "#q"),
                    key: "Enter".into()
                },
            ]
        );
    }

    #[test]
    fn typing_in_two_fields_in_turn_stays_two_steps_each() {
        let steps = optimize(&[input("#a", "1"), input("#b", "2"), input("#a", "13")]);
        assert_eq!(steps.len(), 3);
    }

    #[test]
    fn a_wizards_step_is_kept_only_where_it_changed() {
        use crate::scenario::FormStep;
        let at = |n: u32| {
            RawEvent::Hint(PageHint {
                changed: true,
                step: Some(FormStep::Counter(format!("Step {n} of 3"))),
                ..Default::default()
            })
        };
        let events = vec![
            click(el("button", "#next")),
            at(2),
            click(el("input", "#gift")),
            at(2),
            click(el("button", "#next")),
            at(3),
        ];
        let steps: Vec<Option<String>> = optimize(&events)
            .iter()
            .filter_map(|s| match s {
                RecordedStep::Observed(h) => Some(h.step.as_ref().map(|f| f.label().to_string())),
                _ => None,
            })
            .collect();
        assert_eq!(
            steps,
            [Some("Step 2 of 3".into()), None, Some("Step 3 of 3".into())]
        );
    }
}
