//! Which recorded field values are secrets. Password fields always are; emails, user
//! names, phone numbers and one-time codes only inside an authentication form, card data
//! only inside a payment form: a phone number in an ordinary contact form is a parameter,
//! not a secret. The rules are data, each checked against examples.

use super::ElementDescriptor;

/// Where a field sits.
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldContext<'a> {
    pub url: &'a str,
    /// The field's form also holds a password field.
    pub form_has_password: bool,
    /// The form's id, name, action and heading, for recognising what it is for.
    pub form_hint: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scope {
    Always,
    Auth,
    Payment,
}

/// One rule: a field of this kind is a secret in this scope when one of its attributes
/// (type, autocomplete, name, id, label, placeholder) contains one of the words. With
/// `marked_anywhere`, a field the page itself marks (its type or autocomplete token) is a
/// secret in any scope: `autocomplete=cc-number` says "card" whatever the form is called.
struct FieldRule {
    kind: &'static str,
    scope: Scope,
    marked_anywhere: bool,
    types: &'static [&'static str],
    autocomplete: &'static [&'static str],
    words: &'static [&'static str],
}

const RULES: &[FieldRule] = &[
    FieldRule {
        kind: "password",
        marked_anywhere: true,
        scope: Scope::Always,
        types: &["password"],
        autocomplete: &["current-password", "new-password"],
        words: &[],
    },
    FieldRule {
        kind: "otp",
        marked_anywhere: true,
        scope: Scope::Auth,
        types: &[],
        autocomplete: &["one-time-code"],
        words: &["otp", "one-time", "verification code", "2fa", "totp"],
    },
    FieldRule {
        kind: "card",
        marked_anywhere: true,
        scope: Scope::Payment,
        types: &[],
        autocomplete: &[
            "cc-number",
            "cc-csc",
            "cc-exp",
            "cc-exp-month",
            "cc-exp-year",
        ],
        words: &[
            "card number",
            "cardnumber",
            "card_number",
            "cc-number",
            "cvc",
            "cvv",
            "csc",
            "expiry",
        ],
    },
    FieldRule {
        kind: "email",
        marked_anywhere: false,
        scope: Scope::Auth,
        types: &["email"],
        autocomplete: &["email"],
        words: &["email", "e-mail"],
    },
    FieldRule {
        kind: "username",
        marked_anywhere: false,
        scope: Scope::Auth,
        types: &[],
        autocomplete: &["username"],
        words: &["username", "user name", "login", "user"],
    },
    FieldRule {
        kind: "phone",
        marked_anywhere: false,
        scope: Scope::Auth,
        types: &["tel"],
        autocomplete: &["tel"],
        words: &["phone", "mobile"],
    },
];

const AUTH_WORDS: &[&str] = &[
    "login", "log-in", "log_in", "signin", "sign-in", "sign_in", "sign in", "log in", "register",
    "signup", "sign-up", "sign up", "auth", "2fa", "verify",
];
const PAYMENT_WORDS: &[&str] = &["checkout", "payment", "billing", "pay", "card"];

fn mentions(text: &str, words: &[&str]) -> bool {
    let t = text.to_ascii_lowercase();
    words.iter().any(|w| t.contains(w))
}

/// The kind of secret a field holds (`password`, `otp`, `card`, `email`, `username`,
/// `phone`), or `None` for an ordinary value.
pub fn secret_kind(field: &ElementDescriptor, ctx: &FieldContext) -> Option<&'static str> {
    let place = format!("{} {}", ctx.url, ctx.form_hint);
    let auth = ctx.form_has_password || mentions(&place, AUTH_WORDS);
    let payment = mentions(&place, PAYMENT_WORDS);
    let attrs = [
        &field.name,
        &field.id,
        &field.label,
        &field.placeholder,
        &field.accessible_name,
    ]
    .map(|s| s.as_str())
    .join(" ");
    RULES
        .iter()
        .find(|r| {
            let applies = match r.scope {
                Scope::Always => true,
                Scope::Auth => auth,
                Scope::Payment => payment,
            };
            let marked = r
                .types
                .contains(&field.input_type.to_ascii_lowercase().as_str())
                || r.autocomplete.iter().any(|a| {
                    field
                        .autocomplete
                        .to_ascii_lowercase()
                        .split_whitespace()
                        .any(|t| t == *a)
                });
            (marked && (applies || r.marked_anywhere)) || (applies && mentions(&attrs, r.words))
        })
        .map(|r| r.kind)
}

/// Kinds whose values no journal, history or answer ever shows: what a person would call
/// confidential (a password, a one-time code, card data), as opposed to an identity the
/// recorder also seals (an email typed into a login form).
const CONFIDENTIAL: &[&str] = &["password", "otp", "card"];

/// The kind of a confidential field (`password`, `otp`, `card`) a value is typed into, by
/// the same rules as [`secret_kind`]: the one decision behind the recorder's sealed secrets
/// and the masking of typed values in journals, the panel history and answers.
pub fn confidential_kind(field: &ElementDescriptor, ctx: &FieldContext) -> Option<&'static str> {
    secret_kind(field, ctx).filter(|k| CONFIDENTIAL.contains(k))
}

/// [`confidential_kind`] of a field as the page-side `fieldInfo` helper describes it (the
/// descriptor's fields and the document's `url`): what typing answers and approvals decide
/// on, so both read a field the same way.
pub fn confidential_field(info: &serde_json::Value) -> Option<&'static str> {
    let field: ElementDescriptor = serde_json::from_value(info.clone()).ok()?;
    let url = info
        .get("url")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let ctx = FieldContext {
        url,
        form_has_password: field.form_has_password,
        form_hint: &field.form_hint,
    };
    confidential_kind(&field, &ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(input_type: &str, name: &str, autocomplete: &str) -> ElementDescriptor {
        ElementDescriptor {
            tag: "input".into(),
            input_type: input_type.into(),
            name: name.into(),
            autocomplete: autocomplete.into(),
            ..Default::default()
        }
    }

    const LOGIN: FieldContext = FieldContext {
        url: "https://shop.test/login",
        form_has_password: true,
        form_hint: "login-form",
    };
    const CONTACT: FieldContext = FieldContext {
        url: "https://shop.test/contact",
        form_has_password: false,
        form_hint: "contact us",
    };
    const CHECKOUT: FieldContext = FieldContext {
        url: "https://shop.test/checkout",
        form_has_password: false,
        form_hint: "payment",
    };

    #[test]
    fn each_rule_catches_its_examples() {
        let cases = [
            (field("password", "pw", ""), CONTACT, "password"),
            (
                field("text", "secret", "current-password"),
                CONTACT,
                "password",
            ),
            (field("email", "mail", ""), LOGIN, "email"),
            (field("text", "username", ""), LOGIN, "username"),
            (field("tel", "phone", ""), LOGIN, "phone"),
            (field("text", "code", "one-time-code"), LOGIN, "otp"),
            (field("text", "cardnumber", ""), CHECKOUT, "card"),
            (field("text", "c", "cc-csc"), CHECKOUT, "card"),
        ];
        for (f, ctx, kind) in cases {
            assert_eq!(secret_kind(&f, &ctx), Some(kind), "{f:?} in {}", ctx.url);
        }
    }

    #[test]
    fn ordinary_fields_stay_parameters() {
        let cases = [
            (field("tel", "phone", ""), CONTACT),
            (field("email", "email", ""), CONTACT),
            (field("text", "cardnumber", ""), CONTACT),
            (field("search", "q", ""), LOGIN),
            (field("text", "quantity", ""), CHECKOUT),
            (field("text", "city", "address-level2"), CHECKOUT),
        ];
        for (f, ctx) in cases {
            assert_eq!(secret_kind(&f, &ctx), None, "{f:?} in {}", ctx.url);
        }
    }

    #[test]
    fn fields_the_page_marks_are_confidential_in_any_form() {
        let cases = [
            (field("text", "f1", "one-time-code"), Some("otp")),
            (field("text", "f2", "cc-number"), Some("card")),
            (field("text", "f3", "billing cc-csc"), Some("card")),
            (field("password", "f4", ""), Some("password")),
            (field("text", "f5", "new-password"), Some("password")),
            // Identities are sealed by the recorder in a login form, but not confidential.
            (field("email", "mail", ""), None),
            (field("text", "f6", ""), None),
        ];
        for (f, kind) in cases {
            assert_eq!(confidential_kind(&f, &CONTACT), kind, "{f:?}");
        }
        assert_eq!(
            confidential_kind(&field("email", "who", ""), &LOGIN),
            None,
            "an email in a login form is sealed by the recorder, not masked as confidential"
        );
        assert_eq!(
            secret_kind(&field("email", "who", ""), &LOGIN),
            Some("email")
        );
    }

    #[test]
    fn a_form_with_a_password_is_an_auth_form_wherever_it_is() {
        let ctx = FieldContext {
            url: "https://intranet.test/welcome",
            form_has_password: true,
            form_hint: "",
        };
        assert_eq!(secret_kind(&field("email", "who", ""), &ctx), Some("email"));
    }
}
