//! How risky an action waiting for approval is — low, medium or high — from what it does
//! (its category and arguments) and what it acts on (the element as the page model shows
//! it: role, name, field kind). Shown in every approval surface so a person can tell a
//! "Delete account" click from a "Next" one at a glance. Advisory only: it never changes a
//! verdict. The words are data, with examples in the tests.

use serde::{Deserialize, Serialize};

use super::{Category, Origin};

/// How much could go wrong.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    #[default]
    Low,
    Medium,
    High,
}

impl Risk {
    pub fn name(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

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

/// The high-risk word `text` holds as a whole word (or phrase), and what it means.
fn high_word(text: &str) -> Option<&'static str> {
    let lower = fold(text);
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    HIGH_WORDS
        .iter()
        .find_map(|(word, meaning)| {
            let word = fold(word);
            let parts: Vec<&str> = word.split(' ').collect();
            words
                .windows(parts.len())
                .any(|w| w == parts.as_slice())
                .then_some(*meaning)
        })
        .or_else(|| {
            HIGH_CJK
                .iter()
                .find(|(word, _)| lower.contains(word))
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
    high_word(&split).filter(|m| MARKUP_MEANINGS.contains(m))
}

/// `text` as the words matcher reads it: invisible format characters (soft hyphen,
/// zero-width and bidi marks) dropped, fullwidth Latin made plain, the Cyrillic and Greek
/// letters that look like Latin ones made Latin, lower case. A page cannot hide "Delete"
/// from the rating by writing `De\u{ad}lete`, `Dеlete` (Cyrillic е) or `ｄｅｌｅｔｅ`.
fn fold(text: &str) -> String {
    const LOOKALIKES: &[(char, char)] = &[
        ('а', 'a'),
        ('е', 'e'),
        ('о', 'o'),
        ('р', 'p'),
        ('с', 'c'),
        ('х', 'x'),
        ('у', 'y'),
        ('і', 'i'),
        ('ј', 'j'),
        ('ѕ', 's'),
        ('ԁ', 'd'),
        ('ӏ', 'l'),
        ('ո', 'n'),
        ('ս', 'u'),
        ('α', 'a'),
        ('ο', 'o'),
        ('ε', 'e'),
        ('ι', 'i'),
        ('κ', 'k'),
        ('ν', 'v'),
        ('τ', 't'),
        ('ρ', 'p'),
        ('υ', 'u'),
    ];
    text.to_lowercase()
        .chars()
        .filter(|c| {
            !matches!(*c as u32, 0xAD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0xFEFF)
        })
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            _ => LOOKALIKES
                .iter()
                .find(|(from, _)| *from == c)
                .map_or(c, |(_, to)| *to),
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// What the page says of the element acted on (read in Kapture's world when the approval
/// is made): advisory, like the rating.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElementFacts {
    /// Clicking it submits a form (a submit button or input inside one).
    #[serde(default)]
    pub submits: bool,
    /// `input` type (`password`, `file`…) or the tag name.
    #[serde(default)]
    pub field: String,
    #[serde(default)]
    pub autocomplete: String,
    /// Its label, visible words, value and title together (cut).
    #[serde(default)]
    pub words: String,
    /// Where the link it is in (or is) goes, if it is one.
    #[serde(default)]
    pub href: Option<String>,
    /// Its markup's words and where it leads, decoded: id, name, the link's path and
    /// query, the form action a submit control posts to (cut). Only money and deletion
    /// words count there.
    #[serde(default)]
    pub markup: String,
}

impl ElementFacts {
    /// A field whose value is a secret (a password, a one-time code, card details): what
    /// is typed into it is never shown in an approval.
    pub fn confidential(&self) -> bool {
        self.field == "password"
            || ["password", "one-time-code", "cc-"]
                .iter()
                .any(|k| self.autocomplete.contains(k))
    }
}

/// What the approval is about, as `rate` reads it.
#[derive(Debug, Clone, Copy)]
pub struct Action<'a> {
    pub method: &'a str,
    pub category: Category,
    /// The element acted on as the page model shows it (`button "Pay now" [ref=e5]`), or
    /// the selector the agent gave.
    pub target: Option<&'a str>,
    /// Where the action lands (a navigation's destination, else the page's origin).
    pub origin: &'a Origin,
    /// The origin of the page the tab shows now, when known.
    pub page: Option<&'a Origin>,
    /// Whether it also submits (`type` with `submit`, a key that is Enter).
    pub submits: bool,
    /// The element as the page has it, when it could be read.
    pub facts: Option<&'a ElementFacts>,
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

/// The risk of `a`, and why, in a few words a person reads in the approval (beside the
/// element, which every approval shows on its own).
pub fn rate(a: &Action) -> (Risk, String) {
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
    if let Some(f) = a.facts {
        match f.field.as_str() {
            "password" => return (Risk::High, "a password field".into()),
            "file" => return (Risk::High, "a file control".into()),
            _ => {}
        }
        if f.autocomplete.contains("cc-") || f.autocomplete.contains("password") {
            return (Risk::High, "a card or password field".into());
        }
    }
    let named = a
        .target
        .and_then(high_word)
        .or_else(|| a.facts.and_then(|f| high_word(&f.words)));
    if let Some(meaning) = named {
        return (Risk::High, format!("looks like {meaning}"));
    }
    if let Some(meaning) = a.facts.and_then(|f| markup_word(&f.markup)) {
        return (Risk::High, format!("its markup or link reads as {meaning}"));
    }
    let elsewhere = a
        .facts
        .and_then(|f| f.href.as_deref())
        .and_then(super::origin_of)
        .filter(|to| !to.host.is_empty() && site(to) != site(a.page.unwrap_or(a.origin)));
    if a.facts.is_some_and(|f| f.submits) {
        return (Risk::High, "submits a form".into());
    }
    if a.submits {
        return (Risk::High, "submits what it types".into());
    }
    if let Some(to) = elsewhere {
        return (Risk::Medium, format!("opens another site, {to}"));
    }
    match a.method {
        "type" | "fill_form" | "select_option" => (Risk::Medium, "changes a field".into()),
        "handle_dialog" => (Risk::Medium, "answers the page's dialog".into()),
        "tabs.close" => (Risk::Medium, "closes a tab (unsaved work is lost)".into()),
        _ => (Risk::Low, "acts on the page".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::origin_of;

    fn rate_on(method: &str, category: Category, target: Option<&str>) -> (Risk, String) {
        let o = origin_of("https://shop.test/").unwrap();
        rate(&Action {
            method,
            category,
            target,
            origin: &o,
            page: Some(&o),
            submits: false,
            facts: None,
        })
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
        assert_eq!(rate_on("upload_file", Category::Upload, None).0, Risk::High);
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
                method: "navigate",
                category: Category::Navigate,
                target: None,
                origin: to,
                page: Some(&here),
                submits: false,
                facts: None,
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
                method: "navigate",
                category: Category::Navigate,
                target: None,
                origin: &to,
                page: Some(&app),
                submits: false,
                facts: None,
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
                method: "click",
                category: Category::Interact,
                target: Some(r#"button "Continue" [ref=e2]"#),
                origin: &o,
                page: Some(&o),
                submits: false,
                facts: Some(&facts),
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
                markup: markup.into(),
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
                autocomplete: "cc-number".into(),
                ..Default::default()
            },
            // An icon button whose label is only in aria-label.
            ElementFacts {
                words: "Delete message".into(),
                ..Default::default()
            },
            // Only its markup or its link says it: an id, a link's path.
            ElementFacts {
                markup: "deleteAccount".into(),
                ..Default::default()
            },
            ElementFacts {
                markup: "/account/remove?id=4".into(),
                ..Default::default()
            },
            ElementFacts {
                markup: "btn-checkout /cart".into(),
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
                method: "click",
                category: Category::Interact,
                target: Some(r#"link "Continue" [ref=e3]"#),
                origin: &here,
                page: Some(&here),
                submits: false,
                facts: Some(&facts),
            })
        };
        assert_eq!(link("https://bank.co.uk/next").0, Risk::Low);
        let (risk, why) = link("https://evil.co.uk/login");
        assert_eq!(risk, Risk::Medium);
        assert!(why.contains("evil.co.uk"), "{why}");
    }
}
