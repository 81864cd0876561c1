//! Forms generated from a tool's JSON Schema, shared by the DevTools panel and the Test Web
//! App: text, number, boolean and enum fields get their own controls, anything else a JSON
//! editor; every control has a label. The schema reading and the text ⇄ value rules are pure
//! (tested natively); the DOM half exists on wasm32 only.

use serde_json::{Map, Value};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::JsCast;
#[cfg(target_arch = "wasm32")]
use web_sys::{Document, Element, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

#[cfg(target_arch = "wasm32")]
use super::el;

/// How a schema property is edited.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    Choice(Vec<String>),
    Json,
}

/// Follow a `$ref` into `$defs`.
fn resolve<'a>(schema: &'a Value, prop: &'a Value) -> &'a Value {
    match prop
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        Some(name) => schema.pointer(&format!("/$defs/{name}")).unwrap_or(prop),
        None => prop,
    }
}

/// The kind of a property (pure, so it is tested natively).
pub fn kind_of(schema: &Value, prop: &Value) -> Kind {
    let p = resolve(schema, prop);
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        return Kind::Choice(
            values
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        );
    }
    if let Some(one_of) = p.get("oneOf").and_then(Value::as_array) {
        let consts: Vec<String> = one_of
            .iter()
            .filter_map(|o| o.get("const").and_then(Value::as_str).map(str::to_string))
            .collect();
        if consts.len() == one_of.len() && !consts.is_empty() {
            return Kind::Choice(consts);
        }
    }
    let types: Vec<&str> = match p.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    };
    match types.as_slice() {
        ["string"] => Kind::Text,
        ["number"] => Kind::Number,
        ["integer"] => Kind::Integer,
        ["boolean"] => Kind::Boolean,
        // Text fields that also take a number or true/false: a person types text.
        t if t.contains(&"string") => Kind::Text,
        _ => Kind::Json,
    }
}

/// The schema's properties, in the schema's order.
pub fn properties(schema: &Value) -> Vec<(String, Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

pub fn required(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v == name))
}

/// The text a control shows for `value` (what the JSON editor had, put into the form).
pub fn text_of(kind: &Kind, value: &Value) -> String {
    match (kind, value) {
        (_, Value::Null) => String::new(),
        (Kind::Text | Kind::Choice(_), Value::String(s)) => s.clone(),
        (Kind::Json, v) => serde_json::to_string_pretty(v).unwrap_or_default(),
        (_, v) => v.to_string(),
    }
}

/// The value a control's text gives (`None`: left empty, so left out). Booleans are read
/// from the checkbox, not here.
pub fn value_of(name: &str, kind: &Kind, text: &str) -> Result<Option<Value>, String> {
    match kind {
        Kind::Text | Kind::Choice(_) => Ok(Some(text)
            .filter(|v| !v.is_empty())
            .map(|v| Value::String(v.to_string()))),
        Kind::Boolean => Ok((text == "true").then_some(Value::Bool(true))),
        Kind::Number | Kind::Integer => {
            let t = text.trim();
            if t.is_empty() {
                return Ok(None);
            }
            let v = serde_json::from_str::<Value>(t)
                .ok()
                .filter(Value::is_number)
                .ok_or_else(|| format!("{name} is not a number"))?;
            if *kind == Kind::Integer && !(v.is_i64() || v.is_u64()) {
                return Err(format!("{name} is not a whole number"));
            }
            Ok(Some(v))
        }
        Kind::Json => {
            if text.trim().is_empty() {
                return Ok(None);
            }
            serde_json::from_str::<Value>(text)
                .map(Some)
                .map_err(|e| format!("{name} is not valid JSON: {e}"))
        }
    }
}

/// The arguments a form cannot show (names the schema does not list): kept aside when
/// the JSON editor's arguments go into the form, and added back when the form is read.
pub fn extras(schema: &Value, args: &Value) -> Map<String, Value> {
    let known = properties(schema);
    args.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !known.iter().any(|(name, _)| name == *k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Build the controls of `schema` into `container`.
#[cfg(target_arch = "wasm32")]
pub fn render(doc: &Document, container: &Element, schema: &Value) {
    container.set_inner_html("");
    let mut props = properties(schema);
    // What must be filled comes first (the schema lists names alphabetically).
    props.sort_by_key(|(name, _)| !required(schema, name));
    if props.is_empty() {
        container
            .append_child(&el(doc, "p", &[("class", "muted")], "No arguments."))
            .ok();
    }
    for (name, prop) in props {
        let id = format!("field-{name}");
        let row = el(doc, "div", &[("class", "field")], "");
        let label_text = if required(schema, &name) {
            format!("{name} *")
        } else {
            name.clone()
        };
        let label = el(doc, "label", &[("for", &id)], &label_text);
        if let Some(d) = resolve(schema, &prop)
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| prop.get("description").and_then(Value::as_str))
        {
            let _ = label.set_attribute("title", d);
        }
        row.append_child(&label).ok();
        let control = match kind_of(schema, &prop) {
            Kind::Text => el(
                doc,
                "input",
                &[("id", &id), ("type", "text"), ("data-name", &name)],
                "",
            ),
            Kind::Number | Kind::Integer => el(
                doc,
                "input",
                &[("id", &id), ("type", "number"), ("data-name", &name)],
                "",
            ),
            Kind::Boolean => el(
                doc,
                "input",
                &[("id", &id), ("type", "checkbox"), ("data-name", &name)],
                "",
            ),
            Kind::Choice(values) => {
                let s = el(doc, "select", &[("id", &id), ("data-name", &name)], "");
                s.append_child(&el(doc, "option", &[("value", "")], "—"))
                    .ok();
                for v in values {
                    s.append_child(&el(doc, "option", &[("value", &v)], &v))
                        .ok();
                }
                s
            }
            Kind::Json => el(
                doc,
                "textarea",
                &[
                    ("id", &id),
                    ("rows", "2"),
                    ("placeholder", "JSON"),
                    ("data-name", &name),
                ],
                "",
            ),
        };
        row.append_child(&control).ok();
        container.append_child(&row).ok();
    }
}

/// Read the controls back into arguments; empty fields are left out.
#[cfg(target_arch = "wasm32")]
pub fn collect(doc: &Document, schema: &Value) -> Result<Value, String> {
    let mut out = Map::new();
    for (name, prop) in properties(schema) {
        let Some(control) = doc.get_element_by_id(&format!("field-{name}")) else {
            continue;
        };
        let kind = kind_of(schema, &prop);
        let text = match &kind {
            Kind::Boolean => control
                .unchecked_ref::<HtmlInputElement>()
                .checked()
                .to_string(),
            Kind::Choice(_) => control.unchecked_ref::<HtmlSelectElement>().value(),
            Kind::Json => control.unchecked_ref::<HtmlTextAreaElement>().value(),
            Kind::Text | Kind::Number | Kind::Integer => {
                control.unchecked_ref::<HtmlInputElement>().value()
            }
        };
        if let Some(v) = value_of(&name, &kind, &text)? {
            out.insert(name, v);
        }
    }
    Ok(Value::Object(out))
}

/// Put `args` into the controls (what the JSON editor holds, shown in the form); a field
/// `args` does not name is emptied.
#[cfg(target_arch = "wasm32")]
pub fn fill(doc: &Document, schema: &Value, args: &Value) {
    for (name, prop) in properties(schema) {
        let Some(control) = doc.get_element_by_id(&format!("field-{name}")) else {
            continue;
        };
        let kind = kind_of(schema, &prop);
        let value = args.get(&name).unwrap_or(&Value::Null);
        let text = text_of(&kind, value);
        match &kind {
            Kind::Boolean => control
                .unchecked_ref::<HtmlInputElement>()
                .set_checked(value == &Value::Bool(true)),
            Kind::Choice(_) => control
                .unchecked_ref::<HtmlSelectElement>()
                .set_value(&text),
            Kind::Json => control
                .unchecked_ref::<HtmlTextAreaElement>()
                .set_value(&text),
            Kind::Text | Kind::Number | Kind::Integer => {
                control.unchecked_ref::<HtmlInputElement>().set_value(&text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string"},
                "tabId": {"type": ["integer", "null"]},
                "ratio": {"type": "number"},
                "full": {"type": "boolean"},
                "format": {"enum": ["png", "jpeg"]},
                "mode": {"$ref": "#/$defs/Mode"},
                "text": {"type": ["string", "number", "boolean"]},
                "fields": {"type": "array"}
            },
            "required": ["url"],
            "$defs": {"Mode": {"oneOf": [{"const": "a"}, {"const": "b"}]}}
        })
    }

    fn kind(name: &str) -> Kind {
        let s = schema();
        kind_of(&s, &s["properties"][name])
    }

    #[test]
    fn kinds_from_the_schema() {
        assert_eq!(kind("url"), Kind::Text);
        assert_eq!(kind("tabId"), Kind::Integer);
        assert_eq!(kind("ratio"), Kind::Number);
        assert_eq!(kind("full"), Kind::Boolean);
        assert_eq!(
            kind("format"),
            Kind::Choice(vec!["png".into(), "jpeg".into()])
        );
        assert_eq!(kind("mode"), Kind::Choice(vec!["a".into(), "b".into()]));
        assert_eq!(kind("text"), Kind::Text);
        assert_eq!(kind("fields"), Kind::Json);
        assert!(required(&schema(), "url"));
        assert!(!required(&schema(), "tabId"));
    }

    #[test]
    fn text_and_value_round_trip_per_kind() {
        for (name, value) in [
            ("url", json!("http://127.0.0.1:1/")),
            ("tabId", json!(12)),
            ("ratio", json!(0.5)),
            ("format", json!("jpeg")),
            ("fields", json!([{"ref": "e1", "value": "x"}])),
        ] {
            let k = kind(name);
            let back = value_of(name, &k, &text_of(&k, &value)).unwrap();
            assert_eq!(back, Some(value), "{name}");
        }
        assert_eq!(
            value_of("full", &Kind::Boolean, "true").unwrap(),
            Some(json!(true))
        );
        assert_eq!(value_of("full", &Kind::Boolean, "false").unwrap(), None);
        assert_eq!(text_of(&Kind::Text, &Value::Null), "");
        // A lenient text field given a number shows it as text.
        assert_eq!(text_of(&Kind::Text, &json!(3)), "3");
    }

    #[test]
    fn empty_fields_are_left_out_and_bad_ones_named() {
        assert_eq!(value_of("url", &Kind::Text, "").unwrap(), None);
        assert_eq!(value_of("tabId", &Kind::Integer, "  ").unwrap(), None);
        assert_eq!(value_of("fields", &Kind::Json, "").unwrap(), None);
        assert_eq!(
            value_of("tabId", &Kind::Integer, "1.5").unwrap_err(),
            "tabId is not a whole number"
        );
        assert_eq!(
            value_of("ratio", &Kind::Number, "abc").unwrap_err(),
            "ratio is not a number"
        );
        assert_eq!(
            value_of("ratio", &Kind::Number, "\"3\"").unwrap_err(),
            "ratio is not a number"
        );
        assert!(value_of("fields", &Kind::Json, "[")
            .unwrap_err()
            .starts_with("fields is not valid JSON"));
    }

    #[test]
    fn extras_are_the_names_the_form_cannot_show() {
        let args = json!({"url": "x", "depth": 3, "custom": {"a": 1}});
        let extra = extras(&schema(), &args);
        assert_eq!(extra.len(), 2);
        assert_eq!(extra["depth"], json!(3));
        assert!(extras(&schema(), &json!("not an object")).is_empty());
    }
}
