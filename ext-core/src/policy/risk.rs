//! How risky an action waiting for approval is — low, medium or high — from what it does
//! (its category and arguments) and what its input really lands on ([`spots`]: the element
//! it names as what a click there activates, both ends of a drag, each field of a form
//! fill, the focused element, the element under a point, an accepted dialog), each as the
//! page says of it ([`ElementFacts`]); the highest counts, and one that could not be read is
//! at least medium. Shown in every approval surface so a person can tell a "Delete account"
//! click from a "Next" one at a glance. Advisory only: it never changes a verdict. The words
//! are data, with examples in the tests.

use serde::{Deserialize, Serialize};

pub use super::Risk;
use super::{Category, Origin};

/// Words in an element's name (or the selector an agent gave) that make acting on it high
/// risk: money, deletion, sending, committing, credentials. Several languages; matched on
/// whole words, lower case, so `pay` is not found in `display`.
const HIGH_WORDS: &[(&str, &str)] = &[
    ("pay", "a payment"),
    ("payment", "a payment"),
    ("purchase", "a purchase"),
    ("buy", "a purchase"),
    ("checkout", "a purchase"),
    ("order", "an order"),
    ("subscribe", "a subscription"),
    ("donate", "a payment"),
    ("transfer", "a money transfer"),
    ("wire", "a money transfer"),
    ("withdraw", "a money transfer"),
    ("delete", "a deletion"),
    ("remove", "a deletion"),
    ("erase", "a deletion"),
    ("destroy", "a deletion"),
    ("discard", "a deletion"),
    ("cancel", "a cancellation"),
    ("unsubscribe", "a cancellation"),
    ("close account", "a deletion"),
    ("send", "sending something"),
    ("post", "publishing something"),
    ("publish", "publishing something"),
    ("share", "sharing something"),
    ("reply", "sending something"),
    ("submit", "a form submission"),
    ("confirm", "a confirmation"),
    ("sign", "a signature"),
    ("accept", "an agreement"),
    ("agree", "an agreement"),
    ("approve", "an approval"),
    ("password", "a password"),
    ("passcode", "a password"),
    ("pin", "a password"),
    ("card", "card details"),
    ("cvv", "card details"),
    ("cvc", "card details"),
    ("iban", "bank details"),
    ("upload", "a file upload"),
    ("file", "a file control"),
    // Other languages: French, German, Spanish, Italian, Portuguese, Dutch.
    ("payer", "a payment"),
    ("acheter", "a purchase"),
    ("commander", "an order"),
    ("supprimer", "a deletion"),
    ("envoyer", "sending something"),
    ("valider", "a confirmation"),
    ("bezahlen", "a payment"),
    ("kaufen", "a purchase"),
    ("bestellen", "an order"),
    ("löschen", "a deletion"),
    ("senden", "sending something"),
    ("absenden", "sending something"),
    ("pagar", "a payment"),
    ("comprar", "a purchase"),
    ("eliminar", "a deletion"),
    ("borrar", "a deletion"),
    ("enviar", "sending something"),
    ("paga", "a payment"),
    ("acquista", "a purchase"),
    ("elimina", "a deletion"),
    ("invia", "sending something"),
    ("excluir", "a deletion"),
    ("betalen", "a payment"),
    ("kopen", "a purchase"),
    ("verwijderen", "a deletion"),
    ("verzenden", "sending something"),
    // Swedish, Polish, Turkish, Russian and Ukrainian (read through `fold` like the page's
    // words, so their Cyrillic letters meet the page's on the same terms).
    ("betala", "a payment"),
    ("köp", "a purchase"),
    ("radera", "a deletion"),
    ("skicka", "sending something"),
    ("zapłać", "a payment"),
    ("kup", "a purchase"),
    ("zamów", "an order"),
    ("usuń", "a deletion"),
    ("wyślij", "sending something"),
    ("öde", "a payment"),
    ("sil", "a deletion"),
    ("gönder", "sending something"),
    ("оплатить", "a payment"),
    ("купить", "a purchase"),
    ("заказать", "an order"),
    ("удалить", "a deletion"),
    ("отправить", "sending something"),
    ("подтвердить", "a confirmation"),
    ("оплатити", "a payment"),
    ("видалити", "a deletion"),
    ("надіслати", "sending something"),
    // More English.
    ("sell", "a sale"),
    ("trash", "a deletion"),
    ("deactivate", "a deletion"),
    ("terminate", "a deletion"),
];

/// Words of scripts written without spaces between words (Chinese, Japanese, Korean
/// endings): found anywhere in the text, not as whole words.
const HIGH_CJK: &[(&str, &str)] = &[
    ("購入", "a purchase"),
    ("购买", "a purchase"),
    ("購買", "a purchase"),
    ("支払", "a payment"),
    ("支付", "a payment"),
    ("付款", "a payment"),
    ("決済", "a payment"),
    ("注文", "an order"),
    ("下单", "an order"),
    ("削除", "a deletion"),
    ("删除", "a deletion"),
    ("刪除", "a deletion"),
    ("送信", "sending something"),
    ("发送", "sending something"),
    ("發送", "sending something"),
    ("提交", "a form submission"),
    ("결제", "a payment"),
    ("구매", "a purchase"),
    ("주문", "an order"),
    ("삭제", "a deletion"),
    ("전송", "sending something"),
    ("송금", "a money transfer"),
];

/// What a word in the page's markup or a link's path may say and still count (an id of
/// `post-12` or a path of `/sign-in` says nothing of the click): money and deletion.
const MARKUP_MEANINGS: &[&str] = &[
    "a payment",
    "a purchase",
    "an order",
    "a money transfer",
    "a deletion",
    "a cancellation",
];

/// The high-risk word `text` holds as a whole word (or phrase), and what it means. Read
/// through [`crate::fold`]; with `laid_out`, words the layout split (`<span>Del</span>
/// <span>ete</span>` in a flex box reads "Del ete" to a script, "Delete" on screen) are
/// also tried joined: adjacent pieces that together spell a whole word. Read a second time
/// with ASCII look-alikes made the letter they pass for (`CONFlRM`, `De1ete`).
fn high_word(text: &str, laid_out: bool) -> Option<&'static str> {
    high_word_folded(&crate::fold::fold(text), laid_out, false)
        .or_else(|| high_word_folded(&crate::fold::fold(&ascii_alike(text)), laid_out, true))
}

/// ASCII characters that pass for a letter, made that letter: a capital `I`, a `1` and a
/// `|` read as `l`, a `0` as `o` (what UTS #39's skeleton does to ASCII, before case is
/// folded away).
fn ascii_alike(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'I' | '1' | '|' => 'l',
            '0' => 'o',
            c => c,
        })
        .collect()
}

/// [`high_word`] on text folded already; `alike`: the text's look-alikes were made letters,
/// so a word is also looked for as it reads written in capitals (`CONFIRM` reads `conflrm`).
fn high_word_folded(lower: &str, laid_out: bool, alike: bool) -> Option<&'static str> {
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let spells = |word: &str| {
        (0..words.len()).any(|start| {
            let mut joined = String::new();
            for (n, piece) in words[start..].iter().enumerate() {
                joined.push_str(piece);
                if joined.len() >= word.len() {
                    return n > 0 && joined == word;
                }
            }
            false
        })
    };
    let found = |word: &str| {
        let parts: Vec<&str> = word.split(' ').collect();
        let whole = words.windows(parts.len()).any(|w| w == parts.as_slice());
        whole || (laid_out && parts.len() == 1 && spells(word))
    };
    HIGH_WORDS
        .iter()
        .find_map(|(word, meaning)| {
            let plain = crate::fold::fold(word);
            let capitals = alike.then(|| crate::fold::fold(&ascii_alike(&word.to_uppercase())));
            (found(&plain) || capitals.is_some_and(|c| found(&c))).then_some(*meaning)
        })
        .or_else(|| {
            // Without spaces between words, and so without the spaces a layout adds.
            let joined: String = words.concat();
            HIGH_CJK
                .iter()
                .find(|(word, _)| joined.contains(&crate::fold::fold(word)))
                .map(|(_, meaning)| *meaning)
        })
}

/// A money or deletion word in the element's markup or where its link or form goes.
fn markup_word(text: &str) -> Option<&'static str> {
    // `deleteAccount`, `btnPay`: a lower-case letter then a capital starts a word.
    let mut split = String::with_capacity(text.len() + 8);
    let mut prev_lower = false;
    for c in text.chars() {
        if prev_lower && c.is_uppercase() {
            split.push(' ');
        }
        prev_lower = c.is_lowercase();
        split.push(c);
    }
    high_word(&split, false).filter(|m| MARKUP_MEANINGS.contains(m))
}

/// What the page says of an element input lands on (read in Kapture's world when the
/// approval is made, `cdp/page/facts.js`): advisory, like the rating. The element is the
/// one the input activates (a span's button, a label's control), not the literal node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElementFacts {
    /// Activating it submits a form (a submit button — any unknown `type` is one — or a
    /// submit input of a form).
    #[serde(default)]
    pub submits: bool,
    /// `input` type as the element has it (`password`, `file`…), else the tag name; `page`
    /// for the document itself (nothing has focus, nothing is under the point), `dialog`
    /// for a JavaScript dialog.
    #[serde(default)]
    pub field: String,
    #[serde(default)]
    pub autocomplete: String,
    /// Each thing the page says of it, whole: its labels, aria-label and what
    /// aria-labelledby names, placeholder, title, value, visible text, its content with
    /// generated content, shadow roots, alt texts and svg titles.
    #[serde(default)]
    pub parts: Vec<String>,
    /// A part was longer than Kapture reads (what is past the cut is unknown).
    #[serde(default)]
    pub cut: bool,
    /// Where the link it is in (or is) goes, if it is one.
    #[serde(default)]
    pub href: Option<String>,
    /// Its markup's words and where it leads, decoded: ids, names, classes, handler and
    /// data attributes (its own and its content's), the link's path and query, the form
    /// action a submit control posts to. Only money and deletion words count there.
    #[serde(default)]
    pub markup: Vec<String>,
    /// What a field says of itself (`cdp/js.rs`'s `fieldInfo`), for the confidential rule.
    #[serde(default)]
    pub field_info: Option<serde_json::Value>,
}

/// The most text of each share of an element's facts that is rated: what the page says of
/// it, and its markup (the page-side reader caps itself the same; this holds whatever
/// answered).
pub const FACTS_SHARE_MAX: usize = 100_000;

impl ElementFacts {
    /// These facts within [`FACTS_SHARE_MAX`] characters of what is said and as many of
    /// markup, each list kept in order; what did not fit is dropped and said (`cut`).
    pub fn bounded(mut self) -> ElementFacts {
        for list in [&mut self.parts, &mut self.markup] {
            let mut room = FACTS_SHARE_MAX;
            for s in list.iter_mut() {
                let n = s.chars().count();
                if n > room {
                    *s = s.chars().take(room).collect();
                    self.cut = true;
                }
                room -= s.chars().count();
            }
            list.retain(|s| !s.is_empty());
        }
        if let Some(h) = &mut self.href {
            if h.len() > 8192 {
                *h = h.chars().take(8192).collect();
                self.cut = true;
            }
        }
        self
    }

    /// The kind of secret a field holds (`password`, `otp`, `card`), by the one rule
    /// ([`crate::recorder::confidential_field`]): what is typed into it is never shown.
    pub fn confidential(&self) -> Option<&'static str> {
        crate::recorder::confidential_field(self.field_info.as_ref()?)
    }

    /// A JavaScript dialog: its message is what accepting it agrees to.
    pub fn dialog(message: &str) -> ElementFacts {
        ElementFacts {
            field: "dialog".into(),
            parts: vec![message.to_string()],
            ..Default::default()
        }
    }
}

pub use crate::methods::Spot;

/// Each place `command` lands, with how the approval names it ([`crate::methods::Method::targets`]).
pub fn spots(command: &crate::methods::Command) -> Vec<(String, Spot)> {
    command.targets()
}

/// Whether `command` also submits: `type` with `submit` or a line break, a key chord whose
/// key is Enter (as the key parser reads it: `"\n"` is Enter too), a form fill with
/// `submit`.
pub fn submits(command: &crate::methods::Command) -> bool {
    use crate::methods::Command;
    match command {
        Command::Type(t) => t.submit || t.text.contains(['\n', '\r']),
        Command::PressKey(k) => {
            crate::cdp::keys::parse_chord(&k.key).is_ok_and(|c| c.key.key == "Enter")
        }
        Command::FillForm(f) => f.submit,
        _ => false,
    }
}

/// One place the input lands and what the page says of it (`None`: it could not be read:
/// the tab is not under control yet, the page did not answer in time, no such element).
#[derive(Debug, Clone, PartialEq)]
pub struct Landing {
    /// How the approval names it ("where it drops"); empty for the element the command
    /// names.
    pub name: String,
    pub facts: Option<ElementFacts>,
}

/// What the approval is about, as `rate` reads it.
#[derive(Debug, Clone, Copy)]
pub struct Action<'a> {
    /// The method's own facts: whether it changes a field, what it does beyond its
    /// category ([`crate::methods::Method::DOES`]), how it submits.
    pub facts: &'a crate::methods::Facts,
    pub category: Category,
    /// The element acted on as the page model shows it (`button "Pay now" [ref=e5]`), or
    /// the selector the agent gave.
    pub target: Option<&'a str>,
    /// Where the action lands (a navigation's destination, else the page's origin).
    pub origin: &'a Origin,
    /// The origin of the page the tab shows now, when known.
    pub page: Option<&'a Origin>,
    /// Whether it also submits ([`submits`]).
    pub submits: bool,
    /// Every element the input lands on ([`spots`]), as the page has it.
    pub lands: &'a [Landing],
}

/// The host without a leading `www.`: any other change of host is another site (no
/// public-suffix guess can tell `bank.co.uk` from `evil.co.uk` by counting labels). An
/// address has no name to group its ports under: `127.0.0.1:3000` and `127.0.0.1:8080`
/// are two apps, so there the port is part of the site.
fn site(o: &Origin) -> String {
    let host = o.host.strip_prefix("www.").unwrap_or(&o.host);
    let address = host.parse::<std::net::IpAddr>().is_ok()
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::Ipv6Addr>()
            .is_ok();
    match o.port {
        Some(port) if address => format!("{host}:{port}"),
        _ => host.to_string(),
    }
}

/// The risk of one element the input lands on, and why (`None`: nothing to say of it).
fn rate_element(f: Option<&ElementFacts>, a: &Action) -> Option<(Risk, String)> {
    let Some(f) = f else {
        return Some((Risk::Medium, "could not be read".into()));
    };
    let kind = f.confidential();
    if f.field == "file" {
        return Some((Risk::High, "a file control".into()));
    }
    if f.field == "password" || kind == Some("password") {
        return Some((Risk::High, "a password field".into()));
    }
    match kind {
        Some("card") => return Some((Risk::High, "a card field".into())),
        Some(_) => return Some((Risk::High, "a one-time code field".into())),
        None => {}
    }
    if let Some(meaning) = f.parts.iter().find_map(|p| high_word(p, true)) {
        return Some((Risk::High, format!("looks like {meaning}")));
    }
    if let Some(meaning) = f.markup.iter().find_map(|m| markup_word(m)) {
        return Some((Risk::High, format!("its markup or link reads as {meaning}")));
    }
    if f.submits {
        return Some((Risk::High, "submits a form".into()));
    }
    if f.cut {
        return Some((
            Risk::Medium,
            "says more than Kapture reads of it; look at it yourself".into(),
        ));
    }
    let elsewhere = f
        .href
        .as_deref()
        .and_then(super::origin_of)
        .filter(|to| !to.host.is_empty() && site(to) != site(a.page.unwrap_or(a.origin)));
    elsewhere.map(|to| (Risk::Medium, format!("opens another site, {to}")))
}

/// The risk of `a`, and why, in a few words a person reads in the approval (beside the
/// element, which every approval shows on its own). With several elements (a drag's two
/// ends, a form's fields) the highest counts.
pub fn rate(a: &Action) -> (Risk, String) {
    // What the method says it does speaks for it, over its category's words.
    if let (Some((risk, why)), false) = (a.facts.does, a.category == Category::Interact) {
        return (risk, why.into());
    }
    match a.category {
        Category::Submit => return (Risk::High, "submits a form".into()),
        Category::Upload => return (Risk::High, "sends a local file to the page".into()),
        Category::Eval => return (Risk::High, "runs the agent's own code in the page".into()),
        Category::Record => {
            return (Risk::Medium, "records what you do in this tab".into());
        }
        Category::Download => return (Risk::Medium, "saves a file to your computer".into()),
        Category::Storage => {
            return (
                Risk::Medium,
                "changes the site's cookies or stored data".into(),
            )
        }
        Category::Read => return (Risk::Low, "reads the page".into()),
        Category::Navigate => {
            let new_site = a.page.is_none_or(|p| site(p) != site(a.origin));
            return if new_site {
                (Risk::Medium, format!("goes to a new site, {}", a.origin))
            } else {
                (Risk::Low, "goes to another page of this site".into())
            };
        }
        Category::Interact => {}
    }
    // Candidates in order; the highest risk wins, the first of equals.
    let mut found: Vec<(Risk, String)> = Vec::new();
    for land in a.lands {
        if let Some((risk, why)) = rate_element(land.facts.as_ref(), a) {
            let why = match (land.name.as_str(), land.facts.is_some()) {
                ("", true) => why,
                ("", false) => format!("the element {why}"),
                (name, true) => format!("{name}: {why}"),
                (name, false) => format!("{name} {why}"),
            };
            found.push((risk, why));
        }
    }
    if let Some(meaning) = a.target.and_then(|t| high_word(t, false)) {
        found.push((Risk::High, format!("looks like {meaning}")));
    }
    if a.submits {
        found.push((Risk::High, a.facts.submits_as.into()));
    }
    found.push(match a.facts.does {
        _ if a.facts.changes_field => (Risk::Medium, "changes a field".into()),
        Some((risk, why)) => (risk, why.into()),
        None => (Risk::Low, "acts on the page".into()),
    });
    found
        .into_iter()
        .rev()
        .max_by_key(|(risk, _)| *risk)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn facts_are_bounded_in_all_and_say_they_were_cut() {
        let big = super::ElementFacts {
            parts: vec!["Delete".into(), "a".repeat(150_000), "c".into()],
            markup: vec!["d".repeat(200_000), "e".into()],
            ..Default::default()
        }
        .bounded();
        assert!(big.cut);
        let said: usize = big.parts.iter().map(String::len).sum();
        assert_eq!(said, super::FACTS_SHARE_MAX);
        assert_eq!(big.parts[0], "Delete", "what is read first stays");
        assert_eq!(big.parts.len(), 2);
        assert_eq!(big.markup.len(), 1, "markup has its own share");
        assert_eq!(big.markup[0].len(), super::FACTS_SHARE_MAX);
        let small = super::ElementFacts {
            parts: vec!["Delete".into()],
            ..Default::default()
        };
        assert_eq!(small.clone().bounded(), small);
    }

    use super::*;
    use crate::policy::origin_of;

    fn rate_on(method: &str, category: Category, target: Option<&str>) -> (Risk, String) {
        let o = origin_of("https://shop.test/").unwrap();
        rate(&Action {
            facts: crate::methods::facts(method).unwrap(),
            category,
            target,
            origin: &o,
            page: Some(&o),
            submits: false,
            lands: &[],
        })
    }

    /// A method's own words speak over its category's: a store write is judged in the
    /// `record` category, but it records nothing.
    #[test]
    fn what_a_method_does_is_said_by_its_facts() {
        let (risk, why) = rate_on("kapture.store_write", Category::Record, None);
        assert_eq!(risk, Risk::High);
        assert!(why.contains("changes what Kapture keeps"), "{why}");
        let (risk, why) = rate_on("tabs.close", Category::Interact, None);
        assert_eq!(
            (risk, why.as_str()),
            (Risk::Medium, "closes a tab (unsaved work is lost)")
        );
        let (_, why) = rate_on("recorder", Category::Record, None);
        assert_eq!(why, "records what you do in this tab");
    }

    #[test]
    fn payment_delete_send_password_and_file_controls_are_high() {
        for line in [
            r#"button "Pay now" [ref=e5]"#,
            r#"button "Place order" [ref=e2]"#,
            r#"link "Delete account" [ref=e9]"#,
            r#"button "Send" [ref=e1]"#,
            r#"textbox "Password" [ref=e3] password"#,
            r#"button "Choose file" [ref=e4]"#,
            r#"button "Jetzt bezahlen" [ref=e6]"#,
            r#"button "Supprimer" [ref=e7]"#,
            "the element matching #checkout-button",
        ] {
            let (risk, why) = rate_on("click", Category::Interact, Some(line));
            assert_eq!(risk, Risk::High, "{line}: {why}");
        }
        assert_eq!(rate_on("click", Category::Submit, None).0, Risk::High);
        assert_eq!(rate_on("file_upload", Category::Upload, None).0, Risk::High);
        assert_eq!(rate_on("evaluate", Category::Eval, None).0, Risk::High);
    }

    #[test]
    fn plain_controls_are_low_and_words_inside_words_do_not_count() {
        for line in [
            r#"button "Next" [ref=e1]"#,
            r#"link "Display settings" [ref=e2]"#,
            r#"button "Sending tips" [ref=e3]"#,
            r#"checkbox "Spinach" [ref=e4]"#,
        ] {
            assert_eq!(
                rate_on("click", Category::Interact, Some(line)).0,
                Risk::Low,
                "{line}"
            );
        }
        let (risk, why) = rate_on(
            "type",
            Category::Interact,
            Some(r#"textbox "Name" [ref=e1]"#),
        );
        assert_eq!(risk, Risk::Medium);
        assert_eq!(why, "changes a field");
        assert_eq!(rate_on("snapshot", Category::Read, None).0, Risk::Low);
    }

    #[test]
    fn a_navigation_to_a_new_site_is_medium() {
        let here = origin_of("https://www.shop.test/").unwrap();
        let same = origin_of("https://shop.test/cart").unwrap();
        let other = origin_of("https://elsewhere.test/").unwrap();
        let go = |to: &Origin| {
            rate(&Action {
                facts: crate::methods::facts("navigate").unwrap(),
                category: Category::Navigate,
                target: None,
                origin: to,
                page: Some(&here),
                submits: false,
                lands: &[],
            })
        };
        assert_eq!(go(&same).0, Risk::Low);
        let (risk, why) = go(&other);
        assert_eq!(risk, Risk::Medium);
        assert!(why.contains("elsewhere.test"), "{why}");
        // On an address, another port is another app; the same one is the same site.
        let app = origin_of("http://127.0.0.1:3000/").unwrap();
        let from_app = |to: &str| {
            let to = origin_of(to).unwrap();
            rate(&Action {
                facts: crate::methods::facts("navigate").unwrap(),
                category: Category::Navigate,
                target: None,
                origin: &to,
                page: Some(&app),
                submits: false,
                lands: &[],
            })
            .0
        };
        assert_eq!(from_app("http://127.0.0.1:8080/"), Risk::Medium);
        assert_eq!(from_app("http://127.0.0.1:3000/next"), Risk::Low);
        assert_eq!(from_app("http://10.0.0.1:3000/"), Risk::Medium);
    }

    #[test]
    fn what_the_page_says_of_the_element_counts_too() {
        let o = origin_of("https://shop.test/").unwrap();
        let on = |facts: ElementFacts| {
            rate(&Action {
                facts: crate::methods::facts("click").unwrap(),
                category: Category::Interact,
                target: Some(r#"button "Continue" [ref=e2]"#),
                origin: &o,
                page: Some(&o),
                submits: false,
                lands: &[Landing {
                    name: String::new(),
                    facts: Some(facts),
                }],
            })
        };
        assert_eq!(on(ElementFacts::default()).0, Risk::Low);
        // Markup words other than money and deletion say nothing of the click.
        for markup in [
            "post-12 /blog/post/12",
            "/sign-in",
            "share-bar",
            "orders-list /orders",
        ] {
            let f = ElementFacts {
                markup: vec![markup.into()],
                ..Default::default()
            };
            assert_eq!(on(f).0, Risk::Low, "{markup}");
        }
        let (risk, why) = on(ElementFacts {
            submits: true,
            field: "button".into(),
            ..Default::default()
        });
        assert_eq!(risk, Risk::High);
        assert!(why.contains("submits"), "{why}");
        for f in [
            ElementFacts {
                field: "password".into(),
                ..Default::default()
            },
            ElementFacts {
                field: "file".into(),
                ..Default::default()
            },
            ElementFacts {
                field_info: Some(
                    serde_json::json!({"tag": "input", "inputType": "text", "autocomplete": "cc-number"}),
                ),
                ..Default::default()
            },
            // An icon button whose label is only in aria-label.
            ElementFacts {
                parts: vec!["Delete message".into()],
                ..Default::default()
            },
            // Only its markup or its link says it: an id, a link's path.
            ElementFacts {
                markup: vec!["deleteAccount".into()],
                ..Default::default()
            },
            ElementFacts {
                markup: vec!["/account/remove?id=4".into()],
                ..Default::default()
            },
            ElementFacts {
                markup: vec!["btn-checkout /cart".into()],
                ..Default::default()
            },
        ] {
            assert_eq!(on(f.clone()).0, Risk::High, "{f:?}");
        }
    }

    #[test]
    fn hidden_characters_lookalikes_and_links_elsewhere_do_not_lower_the_risk() {
        for line in [
            "button \"De\u{ad}lete\" [ref=e1]",
            "button \"Pa\u{200b}y\" [ref=e1]",
            "button \"Dеlete\" [ref=e1]", // Cyrillic е
            "button \"ｐａｙ\" [ref=e1]",
            // Other languages and scripts.
            "button \"Удалить\" [ref=e1]",
            "button \"Оплатить заказ\" [ref=e1]",
            "button \"Usuń konto\" [ref=e1]",
            "button \"購入する\" [ref=e1]",
            "button \"立即购买\" [ref=e1]",
            "button \"삭제하기\" [ref=e1]",
            "button \"Move to trash\" [ref=e1]",
        ] {
            assert_eq!(
                rate_on("click", Category::Interact, Some(line)).0,
                Risk::High,
                "{line}"
            );
        }
        let here = origin_of("https://www.bank.co.uk/").unwrap();
        let link = |href: &str| {
            let facts = ElementFacts {
                href: Some(href.into()),
                ..Default::default()
            };
            rate(&Action {
                facts: crate::methods::facts("click").unwrap(),
                category: Category::Interact,
                target: Some(r#"link "Continue" [ref=e3]"#),
                origin: &here,
                page: Some(&here),
                submits: false,
                lands: &[Landing {
                    name: String::new(),
                    facts: Some(facts),
                }],
            })
        };
        assert_eq!(link("https://bank.co.uk/next").0, Risk::Low);
        let (risk, why) = link("https://evil.co.uk/login");
        assert_eq!(risk, Risk::Medium);
        assert!(why.contains("evil.co.uk"), "{why}");
    }

    fn lands_on(method: &str, lands: &[Landing], submits: bool) -> (Risk, String) {
        let o = origin_of("https://shop.test/").unwrap();
        rate(&Action {
            facts: crate::methods::facts(method).unwrap(),
            category: Category::Interact,
            target: None,
            origin: &o,
            page: Some(&o),
            submits,
            lands,
        })
    }

    fn land(name: &str, facts: Option<ElementFacts>) -> Landing {
        Landing {
            name: name.into(),
            facts,
        }
    }

    fn saying(words: &str) -> Option<ElementFacts> {
        Some(ElementFacts {
            parts: vec![words.into()],
            ..Default::default()
        })
    }

    #[test]
    fn the_highest_of_every_element_the_input_lands_on_counts() {
        // A drag onto "Trash", a form fill with a card field, a key on a focused button.
        let (risk, why) = lands_on(
            "drag",
            &[
                land("what it drags", saying("Report.pdf")),
                land("where it drops", saying("Trash")),
            ],
            false,
        );
        assert_eq!(risk, Risk::High);
        assert_eq!(why, "where it drops: looks like a deletion");
        let card = ElementFacts {
            field: "text".into(),
            field_info: Some(
                serde_json::json!({"tag": "input", "inputType": "text", "autocomplete": "cc-number"}),
            ),
            ..Default::default()
        };
        let (risk, why) = lands_on(
            "fill_form",
            &[land("field 1", saying("Name")), land("field 2", Some(card))],
            false,
        );
        assert_eq!((risk, why.as_str()), (Risk::High, "field 2: a card field"));
        let (risk, why) = lands_on(
            "press_key",
            &[land("the focused element", saying("Delete account"))],
            false,
        );
        assert_eq!(risk, Risk::High, "{why}");
        // Enter, whatever the focused element says.
        let (risk, why) = lands_on(
            "press_key",
            &[land("the focused element", Some(ElementFacts::default()))],
            true,
        );
        assert_eq!(risk, Risk::High, "{why}");
        let (risk, why) = lands_on(
            "handle_dialog",
            &[land(
                "the dialog",
                Some(ElementFacts::dialog("Delete your account?")),
            )],
            false,
        );
        assert_eq!(
            (risk, why.as_str()),
            (Risk::High, "the dialog: looks like a deletion")
        );
        // Nothing said: the method's own rating.
        let (risk, why) = lands_on("fill_form", &[land("field 1", saying("Name"))], false);
        assert_eq!((risk, why.as_str()), (Risk::Medium, "changes a field"));
    }

    #[test]
    fn each_command_lands_where_its_input_goes() {
        use crate::methods::Command;
        let cmd =
            |method: &str, params: serde_json::Value| Command::decode(method, params).unwrap();
        let names = |c: &Command| spots(c).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        let drag = cmd(
            "drag",
            serde_json::json!({"startRef": "e1", "endSelector": "#bin"}),
        );
        assert_eq!(names(&drag), ["what it drags", "where it drops"]);
        let form = cmd(
            "fill_form",
            serde_json::json!({"fields": [{"ref": "e1", "value": "a"}, {"selector": "#cc", "value": "b"}]}),
        );
        assert_eq!(names(&form), ["field 1", "field 2"]);
        let key = cmd("press_key", serde_json::json!({"key": "Space"}));
        assert_eq!(spots(&key)[0].1, Spot::Focused);
        let xy = cmd("mouse_click_xy", serde_json::json!({"x": 10, "y": 20}));
        assert_eq!(spots(&xy)[0].1, Spot::Point(10.0, 20.0));
        let accept = cmd("handle_dialog", serde_json::json!({"accept": true}));
        assert_eq!(spots(&accept)[0].1, Spot::Dialog);
        let dismiss = cmd("handle_dialog", serde_json::json!({"accept": false}));
        assert!(spots(&dismiss).is_empty());
        let click = cmd("click", serde_json::json!({"selector": "#go"}));
        assert_eq!(names(&click), [""]);
        // Enter as the key parser reads it, not as the agent spells it.
        for key in ["Enter", "\n", "\r", "Control+Enter", "Shift+\n"] {
            let press = cmd("press_key", serde_json::json!({ "key": key }));
            assert!(submits(&press), "{key:?}");
        }
        for key in ["Space", "a", "Tab", "enter"] {
            let press = cmd("press_key", serde_json::json!({ "key": key }));
            assert!(!submits(&press), "{key:?}");
        }
        assert!(submits(&cmd(
            "type",
            serde_json::json!({"ref": "e1", "text": "hi\n"})
        )));
    }

    #[test]
    fn an_element_that_cannot_be_read_is_at_least_medium() {
        let (risk, why) = lands_on("click", &[land("", None)], false);
        assert_eq!(
            (risk, why.as_str()),
            (Risk::Medium, "the element could not be read")
        );
        let (risk, why) = lands_on("mouse_click_xy", &[land("the element there", None)], false);
        assert_eq!(risk, Risk::Medium);
        assert_eq!(why, "the element there could not be read");
        // A read that stopped at its cap is not a read of everything.
        let cut = ElementFacts {
            cut: true,
            ..Default::default()
        };
        assert_eq!(
            lands_on("click", &[land("", Some(cut))], false).0,
            Risk::Medium
        );
        // A high one elsewhere still counts.
        let (risk, _) = lands_on(
            "drag",
            &[
                land("what it drags", None),
                land("where it drops", saying("Trash")),
            ],
            false,
        );
        assert_eq!(risk, Risk::High);
    }

    #[test]
    fn each_part_is_read_whole_and_markup_counts_for_money_and_deletion_only() {
        // A long harmless label beside the visible words cannot push them out.
        let f = ElementFacts {
            parts: vec![
                "Open the menu of options. ".repeat(40),
                "Delete account".into(),
            ],
            ..Default::default()
        };
        assert_eq!(lands_on("click", &[land("", Some(f))], false).0, Risk::High);
        for markup in ["fa fa-trash", "deleteAccount()", "btn js-pay"] {
            let f = ElementFacts {
                markup: vec![markup.into()],
                ..Default::default()
            };
            assert_eq!(
                lands_on("click", &[land("", Some(f))], false).0,
                Risk::High,
                "{markup}"
            );
        }
        // Markup is not laid out: its pieces are never joined into a word.
        let f = ElementFacts {
            markup: vec!["col or der".into()],
            ..Default::default()
        };
        assert_eq!(lands_on("click", &[land("", Some(f))], false).0, Risk::Low);
    }

    #[test]
    fn pieces_a_layout_split_are_read_joined() {
        assert_eq!(high_word("Del ete", true), Some("a deletion"));
        assert_eq!(high_word("D e l e t e", true), Some("a deletion"));
        assert_eq!(high_word("Move to tr ash", true), Some("a deletion"));
        assert_eq!(high_word("削 除", true), Some("a deletion"));
        // Only whole pieces, and only where the words were laid out.
        assert_eq!(high_word("Del ete", false), None);
        assert_eq!(high_word("Delegate", true), None);
        assert_eq!(high_word("Xdel ete", true), None);
        assert_eq!(high_word("Del etes", true), None);
    }

    #[test]
    fn invisible_code_points_marks_and_lookalike_capitals_fold_away() {
        for text in [
            "Del\u{34f}ete",                                          // combining grapheme joiner
            "Dele\u{fe0f}te",                                         // variation selector
            "Del\u{180b}ete",  // Mongolian variation selector
            "Del\u{e0041}ete", // tag character
            "De\u{301}lete",   // a combining mark
            "DELE\u{422}E",    // Cyrillic capital Te
            "dele\u{442}e",    // its small letter, which text-transform shows capital
            "RE\u{41c}OVE",    // Cyrillic capital Em
            "re\u{43c}ove",    // and its small letter
            "RE\u{39c}OVE",    // Greek capital Mu
            "re\u{3bc}ove",    // and its small letter
            "\u{412}UY",       // Cyrillic capital Ve
            "\u{3b2}uy",       // Greek small beta
            "PUBLIS\u{41d}",   // Cyrillic capital En
            "publis\u{43d}",   // and its small letter
            "\u{ff24}\u{ff25}\u{ff2c}\u{ff25}\u{ff34}\u{ff25}", // fullwidth
            "\u{1d41d}\u{1d41e}\u{1d425}\u{1d41e}\u{1d42d}\u{1d41e}", // mathematical bold
            "CONFlRM",         // a small L for a capital I
            "De1ete",          // a one for an L
            "CONF|RM",         // a bar for an I
            "C0NFIRM",         // a zero for an O
        ] {
            assert!(high_word(text, false).is_some(), "{text:?}");
        }
        // Plain words with those letters stay what they are.
        for text in ["Iceland", "Invoice 1024", "Help", "Illinois", "1 item"] {
            assert_eq!(high_word(text, false), None, "{text:?}");
        }
    }
}
