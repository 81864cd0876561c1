//! Console messages as the page's events report them: a `console.*` call, an uncaught
//! exception or a browser log entry made into one bounded message, its arguments formatted
//! from the protocol's previews.

use serde_json::Value;

use super::CONSOLE_TEXT_MAX;
use crate::methods::{ConsoleLevel, ConsoleMessage};

fn truncate(mut text: String) -> String {
    if text.len() > CONSOLE_TEXT_MAX {
        let mut cut = CONSOLE_TEXT_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

fn number(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn level_of_console_type(kind: &str) -> ConsoleLevel {
    match kind {
        "debug" | "trace" => ConsoleLevel::Debug,
        "error" | "assert" => ConsoleLevel::Error,
        "warning" | "warn" => ConsoleLevel::Warning,
        _ => ConsoleLevel::Info,
    }
}

pub(super) fn console_api_message(params: &Value) -> Option<ConsoleMessage> {
    let kind = params.get("type").and_then(Value::as_str).unwrap_or("log");
    if kind == "clear" {
        return None;
    }
    let args = params.get("args").and_then(Value::as_array);
    let text = args
        .map(|args| {
            args.iter()
                .map(format_remote_object)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    Some(ConsoleMessage {
        level: level_of_console_type(kind),
        text: truncate(text),
        timestamp: number(params, "timestamp"),
        url: params
            .pointer("/stackTrace/callFrames/0/url")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .map(str::to_string),
    })
}

/// The page's own words for an exception: its description (message and stack), else the
/// short text CDP gives.
pub fn exception_text(details: &Value) -> &str {
    details
        .pointer("/exception/description")
        .and_then(Value::as_str)
        .or_else(|| details.get("text").and_then(Value::as_str))
        .unwrap_or("the script threw")
}

pub(super) fn exception_message(params: &Value) -> ConsoleMessage {
    let details = params.get("exceptionDetails").unwrap_or(&Value::Null);
    // The message and the top of the stack are what an agent needs; deep stacks cost tokens.
    let text = exception_text(details)
        .lines()
        .take(4)
        .collect::<Vec<_>>()
        .join("\n");
    ConsoleMessage {
        level: ConsoleLevel::Error,
        text: truncate(text),
        timestamp: number(params, "timestamp"),
        url: details
            .get("url")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

pub(super) fn log_entry_message(params: &Value) -> Option<ConsoleMessage> {
    let entry = params.get("entry")?;
    let level = match entry.get("level").and_then(Value::as_str)? {
        "verbose" => ConsoleLevel::Debug,
        "warning" => ConsoleLevel::Warning,
        "error" => ConsoleLevel::Error,
        _ => ConsoleLevel::Info,
    };
    Some(ConsoleMessage {
        level,
        text: truncate(entry.get("text").and_then(Value::as_str)?.to_string()),
        timestamp: number(entry, "timestamp"),
        url: entry.get("url").and_then(Value::as_str).map(str::to_string),
    })
}

/// Render a CDP `RemoteObject` the way a console would, compactly.
pub fn format_remote_object(obj: &Value) -> String {
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
    if let Some(v) = obj.get("unserializableValue").and_then(Value::as_str) {
        return v.to_string();
    }
    match (kind, obj.get("value")) {
        ("string", Some(Value::String(s))) => return s.clone(),
        ("undefined", _) => return "undefined".into(),
        (_, Some(v)) if kind != "object" || v.is_null() => return v.to_string(),
        _ => {}
    }
    if let Some(preview) = obj.get("preview") {
        return format_preview(preview);
    }
    obj.get("description")
        .and_then(Value::as_str)
        .unwrap_or(kind)
        .to_string()
}

fn format_preview(preview: &Value) -> String {
    let props = preview.get("properties").and_then(Value::as_array);
    let is_array = preview.get("subtype").and_then(Value::as_str) == Some("array");
    let items: Vec<String> = props
        .into_iter()
        .flatten()
        .map(|p| {
            let value = p.get("value").and_then(Value::as_str).unwrap_or("");
            let value = if p.get("type").and_then(Value::as_str) == Some("string") {
                format!("\"{value}\"")
            } else {
                value.to_string()
            };
            if is_array {
                value
            } else {
                format!(
                    "{}: {value}",
                    p.get("name").and_then(Value::as_str).unwrap_or("?")
                )
            }
        })
        .collect();
    let more = if preview.get("overflow").and_then(Value::as_bool) == Some(true) {
        ", …"
    } else {
        ""
    };
    if is_array {
        format!("[{}{more}]", items.join(", "))
    } else {
        format!("{{{}{more}}}", items.join(", "))
    }
}
