//! The recorder's decisions, in pure Rust: what the page-side capture script reports (raw
//! events with an element descriptor), how an element is found again (ranked locators),
//! which recorded values are secrets, and how raw events become a scenario's steps. The
//! widget and the capture script only forward; nothing here touches a browser.

pub mod draft;
mod fields;
mod locators;
mod optimize;

pub use crate::scenario::Locator;
pub use fields::{confidential_field, confidential_kind, secret_kind, FieldContext};
pub use locators::locators;
pub use optimize::{optimize, PageHint, RecordedStep};

use serde::{Deserialize, Serialize};

/// What the capture script says about an element.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ElementDescriptor {
    pub tag: String,
    pub id: String,
    pub name: String,
    /// `data-testid` / `data-test` / `data-qa`.
    pub test_id: String,
    pub role: String,
    pub accessible_name: String,
    /// Text of the element's `<label>`.
    pub label: String,
    /// Visible text (buttons, links, options), trimmed.
    pub text: String,
    /// `type` of an input.
    pub input_type: String,
    pub autocomplete: String,
    pub placeholder: String,
    pub css_path: String,
    pub xpath: String,
    /// The element's form also holds a password field.
    pub form_has_password: bool,
    /// The form's id, name, action and heading.
    pub form_hint: String,
}

/// One raw event from the page, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RawEvent {
    Click {
        target: ElementDescriptor,
    },
    /// The field's whole value after an input event.
    Input {
        target: ElementDescriptor,
        value: String,
    },
    /// A native `<select>` changed.
    Change {
        target: ElementDescriptor,
        value: String,
    },
    Check {
        target: ElementDescriptor,
        checked: bool,
    },
    Key {
        target: ElementDescriptor,
        key: String,
    },
    Scroll {
        x: f64,
        y: f64,
    },
    Navigate {
        url: String,
    },
    NewTab {
        url: String,
    },
    /// What the page showed shortly after the last action.
    Hint(PageHint),
}
