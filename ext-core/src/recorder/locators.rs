//! Several ways to find a recorded element again, best first, stored together so replay
//! can fall back when the page changed under one of them.

use super::ElementDescriptor;
use crate::scenario::Locator;

/// Text longer than this is a poor locator (it changes with content).
const MAX_TEXT: usize = 60;

/// Ids that frameworks generate (`:r1:`, `ember42`, `react-select-3-input`, hashes,
/// UUIDs) change between loads: they are no locator.
fn stable_id(id: &str) -> bool {
    let digits_run = id
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    let hexish = id.len() >= 8
        && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && id.chars().any(|c| c.is_ascii_digit());
    !id.is_empty()
        && !id.starts_with(':')
        && !id.contains("ember")
        && !id.contains("react-select")
        && digits_run < 3
        && !hexish
}

/// The locators of an element, best first; never empty when the descriptor has a path.
pub fn locators(e: &ElementDescriptor) -> Vec<Locator> {
    let mut out = Vec::new();
    let some = |s: &str| !s.trim().is_empty();
    if some(&e.test_id) {
        out.push(Locator::TestId(e.test_id.trim().into()));
    }
    if some(&e.role) && some(&e.accessible_name) && e.accessible_name.len() <= MAX_TEXT {
        out.push(Locator::Role(
            e.role.trim().into(),
            e.accessible_name.trim().into(),
        ));
    }
    if some(&e.label) && e.label.len() <= MAX_TEXT {
        out.push(Locator::Label(e.label.trim().into()));
    }
    if stable_id(e.id.trim()) {
        out.push(Locator::Id(e.id.trim().into()));
    }
    if some(&e.name) && matches!(e.tag.as_str(), "input" | "select" | "textarea" | "button") {
        out.push(Locator::Name(e.name.trim().into()));
    }
    if some(&e.text) && e.text.len() <= MAX_TEXT {
        out.push(Locator::Text(e.text.trim().into()));
    }
    if some(&e.css_path) {
        out.push(Locator::Css(e.css_path.clone()));
    }
    if some(&e.xpath) {
        out.push(Locator::XPath(e.xpath.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locators_are_ranked_best_first() {
        let e = ElementDescriptor {
            tag: "button".into(),
            id: "buy".into(),
            name: "buy".into(),
            test_id: "checkout-buy".into(),
            role: "button".into(),
            accessible_name: "Buy now".into(),
            text: "Buy now".into(),
            css_path: "main > form > button:nth-of-type(2)".into(),
            xpath: "/html/body/main/form/button[2]".into(),
            ..Default::default()
        };
        assert_eq!(
            locators(&e),
            vec![
                Locator::TestId("checkout-buy".into()),
                Locator::Role("button".into(), "Buy now".into()),
                Locator::Id("buy".into()),
                Locator::Name("buy".into()),
                Locator::Text("Buy now".into()),
                Locator::Css("main > form > button:nth-of-type(2)".into()),
                Locator::XPath("/html/body/main/form/button[2]".into()),
            ]
        );
    }

    #[test]
    fn generated_ids_and_long_texts_are_left_out() {
        for generated in [
            ":r1:",
            "ember123",
            "react-select-3-input",
            "a1b2c3d4e5",
            "input-48213",
            "3f2a9c10-1b2c",
        ] {
            assert!(!stable_id(generated), "{generated}");
        }
        for stable in ["email", "login-form", "step2", "card_number"] {
            assert!(stable_id(stable), "{stable}");
        }
        let e = ElementDescriptor {
            tag: "p".into(),
            id: ":r7:".into(),
            text: "x".repeat(200),
            css_path: "p".into(),
            ..Default::default()
        };
        assert_eq!(locators(&e), vec![Locator::Css("p".into())]);
    }

    #[test]
    fn locators_serialise_as_tagged_pairs() {
        let json = serde_json::to_value(Locator::Role("link".into(), "Home".into())).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"by": "role", "value": ["link", "Home"]})
        );
    }
}
