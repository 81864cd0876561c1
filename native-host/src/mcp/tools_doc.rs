//! The tool reference (`docs/tools.md`), written from the tools' own descriptions and
//! argument schemas, so each text exists once: in the code an agent reads through tools/list.

use std::fmt::Write as _;

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// The reference page for `tools`, sorted by name.
pub fn markdown(tools: &[Tool]) -> String {
    let mut tools: Vec<&Tool> = tools.iter().collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = String::from(
        "# Tools\n\n\
         <!-- Written by `cargo make docs` from the tools' own descriptions and argument \
         schemas; edit those, not this file. -->\n\n\
         Every tool kapture serves, as an agent sees it in `tools/list`. How actions wait, \
         aim and answer, and what each adds beyond its description, is in \
         [actions.md](actions.md). Saved scenarios also appear in `tools/list`, each as a \
         `scenario_<name>` tool of its own; they are not listed here. Every tool also takes \
         `context`, a handle from `browser_context_open` ([mcp.md](mcp.md)); the tables \
         leave it out.\n\n",
    );
    for t in &tools {
        let _ = writeln!(out, "- [`{}`](#{})", t.name, t.name);
    }
    for t in tools {
        let _ = write!(out, "\n## `{}`\n\n", t.name);
        if let Some(hint) = hint(t) {
            let _ = write!(out, "_{hint}_\n\n");
        }
        let description = t.description.as_deref().unwrap_or("").trim();
        let _ = writeln!(out, "{}", one_line(description));
        let schema = Value::Object((*t.input_schema).clone());
        let rows = arguments(&schema);
        if !rows.is_empty() {
            out.push_str("\n| argument | type | |\n|---|---|---|\n");
            for row in rows {
                out.push_str(&row);
                out.push('\n');
            }
        }
    }
    out
}

/// What the tool's annotations say about its effect, in words.
fn hint(t: &Tool) -> Option<String> {
    let a = t.annotations.as_ref()?;
    let mut parts = Vec::new();
    match a.read_only_hint {
        Some(true) => parts.push("reads only"),
        Some(false) => parts.push("changes the page or kapture's state"),
        None => {}
    }
    if a.destructive_hint == Some(true) {
        parts.push("may be destructive");
    }
    if a.open_world_hint == Some(true) {
        parts.push("reaches the open web");
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One table row per argument: name (required ones bold), type, description.
fn arguments(schema: &Value) -> Vec<String> {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut names: Vec<&String> = props.keys().collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let p = &props[name];
            let shown = if required.contains(&name.as_str()) {
                format!("**`{name}`**")
            } else {
                format!("`{name}`")
            };
            let mut text = p
                .get("description")
                .and_then(Value::as_str)
                .map(one_line)
                .unwrap_or_default();
            if let Some(d) = p.get("default").filter(|d| !d.is_null()) {
                let _ = write!(text, " Default `{d}`.");
            }
            format!(
                "| {shown} | {} | {} |",
                cell(&type_of(p, defs, 0)),
                cell(text.trim())
            )
        })
        .collect()
}

/// A schema's type in a few words: `string`, `integer?`, `"left" \| "right"`, `array of …`.
fn type_of(p: &Value, defs: Option<&Map<String, Value>>, depth: usize) -> String {
    if depth > 4 {
        return "…".into();
    }
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return match defs.and_then(|d| d.get(name)) {
            Some(def) if def.get("properties").is_none() => type_of(def, defs, depth + 1),
            _ => name.to_string(),
        };
    }
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(c) = p.get("const") {
        return c.to_string();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = p.get(key).and_then(Value::as_array) {
            let mut kinds: Vec<String> = options
                .iter()
                .map(|o| type_of(o, defs, depth + 1))
                .filter(|k| k != "null")
                .collect();
            kinds.dedup();
            return kinds.join(" | ");
        }
    }
    match p.get("type") {
        Some(Value::String(t)) if t == "array" => match p.get("items") {
            Some(items) => format!("array of {}", type_of(items, defs, depth + 1)),
            None => "array".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ if p.get("properties").is_some() => "object".into(),
        _ => "any".into(),
    }
}

/// Text of several source lines as one paragraph.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/tools.md` is the reference the tools' descriptions write; it fails while stale.
    /// `KAPTURE_WRITE_DOCS=1` (what `cargo make docs` sets) writes it instead.
    #[test]
    fn docs_tools_md_is_written_from_the_tools_own_descriptions() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tools.md");
        let written = markdown(&super::super::KaptureServer::tool_router().list_all());
        if std::env::var_os("KAPTURE_WRITE_DOCS").is_some() {
            std::fs::write(&path, &written).expect("write docs/tools.md");
            return;
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == written,
            "docs/tools.md is stale: run `cargo make docs` (KAPTURE_WRITE_DOCS=1 cargo test -p native-host docs_tools_md)"
        );
    }

    #[test]
    fn types_read_like_words() {
        let defs = serde_json::json!({"B": {"enum": ["left", "right"], "type": "string"}});
        let defs = defs.as_object();
        let t = |v: Value| type_of(&v, defs, 0);
        assert_eq!(t(serde_json::json!({"type": ["string", "null"]})), "string");
        assert_eq!(
            t(serde_json::json!({"$ref": "#/$defs/B"})),
            "\"left\" | \"right\""
        );
        assert_eq!(
            t(serde_json::json!({"type": "array", "items": {"type": "integer"}})),
            "array of integer"
        );
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
