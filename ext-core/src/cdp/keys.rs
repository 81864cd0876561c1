//! Key names (`Enter`, `ArrowLeft`, `Control+a`) to the fields of CDP `Input.dispatchKeyEvent`.

use crate::methods::Modifier;
use crate::protocol::{ErrorCode, WireError};

/// One physical key as CDP wants it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDef {
    /// DOM `key` value.
    pub key: String,
    /// DOM `code` value.
    pub code: String,
    /// Windows virtual key code (what `keyCode` reports).
    pub key_code: u32,
    /// Text the key inserts, if any.
    pub text: Option<String>,
}

/// A key press: modifiers held while `key` goes down and up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    pub modifiers: Vec<Modifier>,
    pub key: KeyDef,
}

/// CDP modifier bit of one modifier (Alt=1, Ctrl=2, Meta=4, Shift=8).
pub fn modifier_bit(m: Modifier) -> u32 {
    match m {
        Modifier::Alt => 1,
        Modifier::Control | Modifier::ControlOrMeta => 2,
        Modifier::Meta => 4,
        Modifier::Shift => 8,
    }
}

/// CDP bitmask of a set of modifiers.
pub fn modifier_mask(mods: &[Modifier]) -> u32 {
    mods.iter().fold(0, |acc, m| acc | modifier_bit(*m))
}

/// The key definition of a modifier, for its own keyDown/keyUp.
pub fn modifier_key(m: Modifier) -> KeyDef {
    let (key, code, key_code) = match m {
        Modifier::Alt => ("Alt", "AltLeft", 18),
        Modifier::Control | Modifier::ControlOrMeta => ("Control", "ControlLeft", 17),
        Modifier::Meta => ("Meta", "MetaLeft", 91),
        Modifier::Shift => ("Shift", "ShiftLeft", 16),
    };
    KeyDef {
        key: key.into(),
        code: code.into(),
        key_code,
        text: None,
    }
}

fn named(key: &str) -> Option<(&'static str, u32, Option<&'static str>)> {
    Some(match key {
        "Enter" => ("Enter", 13, Some("\r")),
        "Tab" => ("Tab", 9, None),
        "Escape" => ("Escape", 27, None),
        "Backspace" => ("Backspace", 8, None),
        "Delete" => ("Delete", 46, None),
        "Insert" => ("Insert", 45, None),
        "Home" => ("Home", 36, None),
        "End" => ("End", 35, None),
        "PageUp" => ("PageUp", 33, None),
        "PageDown" => ("PageDown", 34, None),
        "ArrowLeft" => ("ArrowLeft", 37, None),
        "ArrowUp" => ("ArrowUp", 38, None),
        "ArrowRight" => ("ArrowRight", 39, None),
        "ArrowDown" => ("ArrowDown", 40, None),
        " " | "Space" => ("Space", 32, Some(" ")),
        "F1" => ("F1", 112, None),
        "F2" => ("F2", 113, None),
        "F3" => ("F3", 114, None),
        "F4" => ("F4", 115, None),
        "F5" => ("F5", 116, None),
        "F6" => ("F6", 117, None),
        "F7" => ("F7", 118, None),
        "F8" => ("F8", 119, None),
        "F9" => ("F9", 120, None),
        "F10" => ("F10", 121, None),
        "F11" => ("F11", 122, None),
        "F12" => ("F12", 123, None),
        _ => return None,
    })
}

fn parse_modifier(name: &str) -> Option<Modifier> {
    Some(match name {
        "Alt" | "Option" => Modifier::Alt,
        "Control" | "Ctrl" => Modifier::Control,
        "ControlOrMeta" => Modifier::ControlOrMeta,
        "Meta" | "Cmd" | "Command" => Modifier::Meta,
        "Shift" => Modifier::Shift,
        _ => return None,
    })
}

/// The key a single character types.
pub fn char_key(c: char) -> KeyDef {
    if c == '\n' || c == '\r' {
        return key_def("Enter").expect("Enter is a named key");
    }
    let upper = c.to_ascii_uppercase();
    let (code, key_code) = if c.is_ascii_alphabetic() {
        (format!("Key{upper}"), upper as u32)
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), c as u32)
    } else if c == ' ' {
        ("Space".to_string(), 32)
    } else {
        (String::new(), 0)
    };
    KeyDef {
        key: c.to_string(),
        code,
        key_code,
        text: Some(c.to_string()),
    }
}

fn key_def(name: &str) -> Option<KeyDef> {
    if let Some((code, key_code, text)) = named(name) {
        let key = if name == "Space" { " " } else { name };
        return Some(KeyDef {
            key: key.to_string(),
            code: code.to_string(),
            key_code,
            text: text.map(str::to_string),
        });
    }
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(char_key(c)),
        _ => None,
    }
}

/// Parse `Enter`, `a`, `Control+Shift+ArrowLeft`, `Shift++`.
pub fn parse_chord(spec: &str) -> Result<Chord, WireError> {
    let bad = |why: &str| {
        WireError::new(
            ErrorCode::BadArgs,
            format!("unknown key {spec:?}: {why}; use a DOM key name such as Enter, Tab, Escape, ArrowDown, a, or a combination such as Control+a"),
        )
    };
    if spec.is_empty() {
        return Err(bad("empty"));
    }
    // The last part is the key; `+` itself is allowed as the key (`Shift++`).
    let (mods_part, key_part) = match spec.strip_suffix("++") {
        Some(rest) => (Some(rest), "+"),
        None => match spec.rsplit_once('+') {
            Some((m, k)) if !k.is_empty() => (Some(m), k),
            _ => (None, spec),
        },
    };
    let mut modifiers = Vec::new();
    if let Some(mods) = mods_part.filter(|m| !m.is_empty()) {
        for name in mods.split('+') {
            modifiers.push(
                parse_modifier(name).ok_or_else(|| bad(&format!("{name:?} is not a modifier")))?,
            );
        }
    }
    let key = key_def(key_part).ok_or_else(|| bad("not a key name"))?;
    Ok(Chord { modifiers, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keys_and_characters() {
        let enter = parse_chord("Enter").unwrap();
        assert_eq!(enter.key.key_code, 13);
        assert_eq!(enter.key.text.as_deref(), Some("\r"));
        assert!(enter.modifiers.is_empty());

        let a = parse_chord("a").unwrap();
        assert_eq!((a.key.code.as_str(), a.key.key_code), ("KeyA", 65));
        assert_eq!(a.key.text.as_deref(), Some("a"));

        let seven = parse_chord("7").unwrap();
        assert_eq!(seven.key.code, "Digit7");
        assert_eq!(parse_chord("ArrowDown").unwrap().key.key_code, 40);
        assert_eq!(parse_chord("Space").unwrap().key.key, " ");
    }

    #[test]
    fn combinations() {
        let c = parse_chord("Control+Shift+ArrowLeft").unwrap();
        assert_eq!(c.modifiers, vec![Modifier::Control, Modifier::Shift]);
        assert_eq!(modifier_mask(&c.modifiers), 10);
        assert_eq!(c.key.key, "ArrowLeft");

        let plus = parse_chord("Shift++").unwrap();
        assert_eq!(plus.modifiers, vec![Modifier::Shift]);
        assert_eq!(plus.key.key, "+");
        assert_eq!(parse_chord("+").unwrap().key.key, "+");
    }

    #[test]
    fn unknown_keys_are_bad_args() {
        for spec in ["", "Enterr", "Hyper+a", "Control+", "Control+Nope"] {
            let err = parse_chord(spec).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadArgs, "{spec:?}");
        }
    }
}
