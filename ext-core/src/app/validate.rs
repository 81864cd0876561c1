//! The JSON editor's check of arguments against a tool's input schema (pure): the subset of
//! JSON Schema that kapture's tool schemas use (`type`, `properties`, `required`,
//! `additionalProperties`, `items`, `enum`, `const`, bounds, `anyOf`/`oneOf`/`allOf`, local
//! `$ref`s), each problem one sentence naming where. A full validator crate would add
//! several hundred kB to the wasm module for keywords these schemas never use.

use serde_json::Value;

/// Most problems listed; a pasted document of the wrong shape could have thousands.
const MAX_PROBLEMS: usize = 8;
/// Deepest `$ref` chain followed (a schema that refers to itself ends here).
const MAX_DEPTH: usize = 32;

/// The problems of `args` against `schema`, in document order; empty when it conforms.
pub fn problems(schema: &Value, args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, schema, args, "arguments", 0, &mut out);
    out.truncate(MAX_PROBLEMS);
    out
}

fn check(root: &Value, schema: &Value, v: &Value, at: &str, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH || out.len() >= MAX_PROBLEMS {
        return;
    }
    let Some(s) = schema.as_object() else {
        return; // `true` or a schema this check does not read: anything goes
    };
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        check(root, target, v, at, depth + 1, out);
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for sub in all {
            check(root, sub, v, at, depth + 1, out);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(alts) = s.get(key).and_then(Value::as_array) else {
            continue;
        };
        let fits = alts.iter().any(|alt| {
            let mut tried = Vec::new();
            check(root, alt, v, at, depth + 1, &mut tried);
            tried.is_empty()
        });
        if !fits && !alts.is_empty() {
            out.push(format!("{at} matches none of the forms this tool takes"));
        }
    }
    if let Some(types) = s.get("type") {
        let names: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.is_empty() && !names.iter().any(|t| is_type(v, t)) {
            out.push(format!(
                "{at} must be {}, not {}",
                names.join(" or "),
                type_of(v)
            ));
            return;
        }
    }
    if let Some(options) = s.get("enum").and_then(Value::as_array) {
        if !options.contains(v) {
            let shown: Vec<String> = options.iter().map(Value::to_string).collect();
            out.push(format!("{at} must be one of {}", shown.join(", ")));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            out.push(format!("{at} must be {c}"));
        }
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = s.get("minimum").and_then(Value::as_f64) {
            if n < min {
                out.push(format!("{at} must be at least {min}"));
            }
        }
        if let Some(max) = s.get("maximum").and_then(Value::as_f64) {
            if n > max {
                out.push(format!("{at} must be at most {max}"));
            }
        }
    }
    if let Some(text) = v.as_str() {
        let len = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64) {
            if len < min {
                out.push(format!("{at} must have at least {min} characters"));
            }
        }
    }
    if let Some(obj) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for name in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !obj.contains_key(name) {
                out.push(format!("{at} lacks `{name}`, which is required"));
            }
        }
        for (k, x) in obj {
            let inner = format!("`{k}`");
            match props.and_then(|p| p.get(k)) {
                Some(sub) => check(root, sub, x, &inner, depth + 1, out),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        out.push(format!("{at} has `{k}`, which this tool does not take"))
                    }
                    Some(extra @ Value::Object(_)) => check(root, extra, x, &inner, depth + 1, out),
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(list)) = (s.get("items"), v.as_array()) {
        for (i, x) in list.iter().enumerate() {
            check(root, items, x, &format!("{at}[{i}]"), depth + 1, out);
        }
    }
}

/// A local `$ref` (`#/$defs/Name`, `#/definitions/Name`, any JSON pointer into the schema).
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|n| n.fract() == 0.0),
        _ => true,
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "minLength": 1},
                "button": {"$ref": "#/$defs/Button"},
                "times": {"type": ["integer", "null"], "minimum": 1, "maximum": 3},
                "keys": {"type": "array", "items": {"type": "string"}},
                "target": {"anyOf": [
                    {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"]},
                    {"type": "object", "properties": {"selector": {"type": "string"}}, "required": ["selector"]}
                ]}
            },
            "required": ["url"],
            "additionalProperties": false,
            "$defs": {"Button": {"type": "string", "enum": ["left", "right"]}}
        })
    }

    #[test]
    fn conforming_arguments_have_no_problem() {
        let ok = json!({"url": "http://a", "button": "left", "times": 2, "keys": ["a"],
                        "target": {"selector": "#x"}});
        assert_eq!(problems(&schema(), &ok), Vec::<String>::new());
        assert!(problems(&schema(), &json!({"url": "x", "times": null})).is_empty());
    }

    #[test]
    fn each_problem_is_named_where_it_is() {
        let bad = json!({"button": "middle", "times": 1.5, "keys": ["a", 2],
                         "target": {"other": 1}, "nope": true});
        let found = problems(&schema(), &bad);
        let all = found.join("\n");
        for expected in [
            "arguments lacks `url`, which is required",
            "`button` must be one of \"left\", \"right\"",
            "`times` must be integer or null, not a number",
            "`keys`[1] must be string, not a number",
            "`target` matches none of the forms",
            "arguments has `nope`, which this tool does not take",
        ] {
            assert!(all.contains(expected), "{expected:?} in:\n{all}");
        }
        let bounds = problems(&schema(), &json!({"url": "", "times": 9}));
        assert_eq!(bounds.len(), 2, "{bounds:?}");
        assert!(bounds.contains(&"`times` must be at most 3".to_string()));
        assert!(bounds.contains(&"`url` must have at least 1 characters".to_string()));
    }

    #[test]
    fn a_schema_that_refers_to_itself_ends() {
        let looping = json!({"$ref": "#", "type": "object"});
        assert!(problems(&looping, &json!({})).is_empty());
        let many: Value =
            json!({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1});
        let strict = json!({"type": "object", "additionalProperties": false});
        assert_eq!(problems(&strict, &many).len(), MAX_PROBLEMS);
    }
}
