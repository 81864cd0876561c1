//! One normal form for what text says, whatever a page did to its code points: the risk
//! rating's words and the escaping of Kapture's tags read text through it, so a page cannot
//! write a word one way for the screen and another way for Kapture. Compatibility forms
//! made plain (NFKC: fullwidth, ligatures, superscripts), code points a reader never sees
//! dropped (Unicode's default-ignorables: joiners, variation selectors, tag characters,
//! soft hyphens) with combining marks, each letter that looks like a Latin letter or digit
//! made that letter (the confusables of UTS #39: Cyrillic `е`, Greek `Μ`, Cherokee `Ꭺ`),
//! lower case.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties, Unicode 15): what a
/// renderer shows as nothing unless it supports it — joiners, bidi marks, variation
/// selectors, Hangul fillers, tag characters. Checked against `unicode-security`'s table in
/// the tests.
pub fn default_ignorable(c: char) -> bool {
    matches!(
        c as u32,
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// The Latin letter or digit (lower case) that `c` — a lower-case letter not in ASCII —
/// looks like, if any: its confusables skeleton without marks, when that is one ASCII
/// letter or digit; else its capital's (`т` looks like a small capital, `Т` like `T`, and
/// `text-transform: uppercase` shows the capital).
fn latin_lookalike(c: char) -> Option<char> {
    let one = |s: &str| {
        let mut it = unicode_security::skeleton(s).filter(|c| !is_combining_mark(*c));
        match (it.next(), it.next()) {
            (Some(first), None) if first.is_ascii_alphanumeric() => {
                Some(first.to_ascii_lowercase())
            }
            _ => None,
        }
    };
    let mut buf = [0; 4];
    one(c.encode_utf8(&mut buf)).or_else(|| one(&c.to_uppercase().collect::<String>()))
}

/// One character in the normal form (`None`: one a reader never sees, or a combining mark).
/// A character whose compatibility form is several (`ﬀ`) stays itself.
pub fn fold_char(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(c.to_ascii_lowercase());
    }
    let mut plain = std::iter::once(c).nfkc();
    let c = match (plain.next(), plain.next()) {
        (Some(one), None) => one,
        _ => c,
    };
    let mut lower = c.to_lowercase();
    let c = match (lower.next(), lower.next()) {
        (Some(one), None) => one,
        _ => c,
    };
    if c.is_ascii() {
        Some(c)
    } else if default_ignorable(c) || is_combining_mark(c) {
        None
    } else {
        Some(latin_lookalike(c).unwrap_or(c))
    }
}

/// `text` in the normal form.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.nfkc().flat_map(char::to_lowercase) {
        if c.is_ascii() {
            out.push(c);
        } else if !(default_ignorable(c) || is_combining_mark(c)) {
            out.push(latin_lookalike(c).unwrap_or(c));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_ignorables_are_unicodes() {
        // The confusables skeleton drops exactly the default-ignorables: the two agree on
        // every code point.
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let dropped = unicode_security::skeleton(c.encode_utf8(&mut buf))
                .next()
                .is_none();
            assert_eq!(default_ignorable(c), dropped, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn text_folds_to_what_a_reader_sees() {
        for (text, folded) in [
            ("Delete", "delete"),
            ("Del\u{34f}ete", "delete"),
            ("Dele\u{fe0f}te", "delete"),
            ("Del\u{e0041}ete", "delete"),
            ("De\u{301}le\u{308}te", "delete"),
            ("D\u{435}lete", "delete"),
            ("DELE\u{422}E", "delete"),
            ("dele\u{442}e", "delete"),
            ("\u{ff44}\u{ff45}\u{ff4c}\u{ff45}\u{ff54}\u{ff45}", "delete"),
            ("\u{1d41d}elete", "delete"),
            ("R\u{39c}OVE", "rmove"),
            ("\u{13aa}\u{13a2}", "at"), // Cherokee
            // Scripts of their own stay themselves.
            ("Удалить", "yдaлиtb"),
            ("削除", "削除"),
            ("삭제", "삭제"),
            ("ダウンロード", "ダウンロード"),
        ] {
            assert_eq!(fold(text), folded, "{text:?}");
        }
    }

    #[test]
    fn one_character_folds_as_in_text() {
        assert_eq!(fold_char('\u{ff3b}'), Some('['));
        assert_eq!(fold_char('\u{ff1d}'), Some('='));
        assert_eq!(fold_char('\u{440}'), Some('p'));
        assert_eq!(fold_char('\u{435}'), Some('e'));
        assert_eq!(fold_char('R'), Some('r'));
        assert_eq!(fold_char('\u{34f}'), None);
        assert_eq!(fold_char('\u{301}'), None);
        assert_eq!(fold_char('\u{fb00}'), Some('\u{fb00}'));
    }
}
