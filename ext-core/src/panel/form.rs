//! Forms generated from a tool's JSON Schema: text, number, boolean and enum fields get
//! their own controls, anything else a JSON editor; every control has a label.

use serde_json::{json, Map, Value};
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

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

fn properties(schema: &Value) -> Vec<(String, Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn required(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v == name))
}

/// Build the controls of `schema` into `container`.
pub fn render(doc: &Document, container: &Element, schema: &Value) {
    container.set_inner_html("");
    let props = properties(schema);
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
pub fn collect(doc: &Document, schema: &Value) -> Result<Value, String> {
    let mut out = Map::new();
    for (name, prop) in properties(schema) {
        let Some(control) = doc.get_element_by_id(&format!("field-{name}")) else {
            continue;
        };
        let value = match kind_of(schema, &prop) {
            Kind::Boolean => {
                let input: HtmlInputElement = control.unchecked_into();
                input.checked().then_some(json!(true))
            }
            Kind::Choice(_) => {
                let select: HtmlSelectElement = control.unchecked_into();
                Some(select.value())
                    .filter(|v| !v.is_empty())
                    .map(Value::String)
            }
            Kind::Text => {
                let input: HtmlInputElement = control.unchecked_into();
                Some(input.value())
                    .filter(|v| !v.is_empty())
                    .map(Value::String)
            }
            Kind::Number | Kind::Integer => {
                let input: HtmlInputElement = control.unchecked_into();
                let text = input.value();
                if text.is_empty() {
                    None
                } else {
                    Some(
                        serde_json::from_str::<Value>(&text)
                            .map_err(|_| format!("{name} is not a number"))?,
                    )
                }
            }
            Kind::Json => {
                let area: HtmlTextAreaElement = control.unchecked_into();
                let text = area.value();
                if text.trim().is_empty() {
                    None
                } else {
                    Some(
                        serde_json::from_str::<Value>(&text)
                            .map_err(|e| format!("{name} is not valid JSON: {e}"))?,
                    )
                }
            }
        };
        if let Some(v) = value {
            out.insert(name, v);
        }
    }
    Ok(Value::Object(out))
}
