//! Tool arguments that do not fit a tool's schema, told as one plain sentence that names the
//! field and what it expects (`browser_fill_form: fields[0].value must be a string, a number
//! or true/false; got an object`), found by walking the tool's own JSON schema, so every
//! tool is covered without a word per tool. The values themselves are never repeated: an
//! argument may be a secret.

use serde_json::{Map, Value};

/// The first place `args` breaks `schema`, as a sentence starting with the tool's name;
/// `None` when the schema finds nothing wrong (the caller then falls back on the decoder's
/// own words).
pub fn explain(tool: &str, schema: &Value, args: &Value) -> Option<String> {
    let walk = Walk { root: schema };
    let problem = walk.check(schema, args, "", 0)?;
    Some(format!("{tool}: {problem}"))
}

/// The arguments, when even the decoder's words are all there is.
pub fn fallback(tool: &str, decoder_message: &str) -> String {
    let why = decoder_message
        .trim_start_matches("failed to deserialize parameters:")
        .trim();
    format!("{tool}: the arguments do not fit the tool's schema ({why})")
}

/// Deep enough for any tool's arguments; deeper schemas are not judged further.
const MAX_DEPTH: usize = 16;

struct Walk<'a> {
    root: &'a Value,
}

impl<'a> Walk<'a> {
    /// `#/$defs/Name` (or `#/definitions/Name`) resolved against the root.
    fn resolve(&self, schema: &'a Value) -> &'a Value {
        let mut s = schema;
        for _ in 0..MAX_DEPTH {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else {
                break;
            };
            match r.strip_prefix('#').and_then(|p| self.root.pointer(p)) {
                Some(target) => s = target,
                None => break,
            }
        }
        s
    }

    /// What is wrong with `value` at `path`, as "<path> must be …; got …".
    fn check(&self, schema: &'a Value, value: &Value, path: &str, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        let schema = self.resolve(schema);
        let must = |expected: String| {
            let name = if path.is_empty() {
                "the arguments".to_string()
            } else {
                path.to_string()
            };
            Some(format!("{name} must be {expected}; got {}", kind(value)))
        };
        if let Some(branches) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            if branches.iter().any(|b| self.fits(b, value, depth + 1)) {
                return None;
            }
            // One real branch besides null: its own, deeper reason.
            let real: Vec<&Value> = branches
                .iter()
                .filter(|b| !is_null_schema(self.resolve(b)))
                .collect();
            if let [only] = real[..] {
                if !value.is_null() {
                    return self.check(only, value, path, depth + 1);
                }
            }
            return must(self.expected(schema));
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.contains(value) {
                return must(self.expected(schema));
            }
        }
        if let Some(c) = schema.get("const") {
            if c != value {
                return must(self.expected(schema));
            }
        }
        if !types_of(schema).is_empty() && !types_of(schema).iter().any(|t| type_fits(t, value)) {
            return must(self.expected(schema));
        }
        if let Some(n) = value.as_f64() {
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
                if n < min {
                    return must(self.expected(schema));
                }
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
                if n > max {
                    return must(self.expected(schema));
                }
            }
            if format_max(schema).is_some_and(|max| n > max) {
                return must(self.expected(schema));
            }
        }
        match value {
            Value::Object(map) => self.check_object(schema, map, path, depth),
            Value::Array(items) => {
                let item_schema = schema.get("items")?;
                items.iter().enumerate().find_map(|(i, item)| {
                    self.check(item_schema, item, &format!("{path}[{i}]"), depth + 1)
                })
            }
            _ => None,
        }
    }

    fn check_object(
        &self,
        schema: &'a Value,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Option<String> {
        let props = schema.get("properties").and_then(Value::as_object);
        let at = |key: &str| {
            if path.is_empty() {
                key.to_string()
            } else {
                format!("{path}.{key}")
            }
        };
        let required = schema.get("required").and_then(Value::as_array);
        for key in required.into_iter().flatten().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                let expected = props
                    .and_then(|p| p.get(key))
                    .map(|s| self.expected(s))
                    .unwrap_or_else(|| "given".into());
                return Some(format!("{} is missing; it must be {expected}", at(key)));
            }
        }
        // In the schema's order, so the first problem is the same every time.
        for (key, prop) in props.into_iter().flatten() {
            if let Some(v) = map.get(key) {
                if let Some(p) = self.check(prop, v, &at(key), depth + 1) {
                    return Some(p);
                }
            }
        }
        None
    }

    fn fits(&self, schema: &'a Value, value: &Value, depth: usize) -> bool {
        self.check(schema, value, "", depth).is_none()
    }

    /// What a schema accepts, in words.
    fn expected(&self, schema: &'a Value) -> String {
        let schema = self.resolve(schema);
        if let Some(branches) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            let consts: Vec<String> = branches
                .iter()
                .map(|b| self.resolve(b))
                .filter_map(|b| b.get("const").or_else(|| single_enum(b)))
                .map(word)
                .collect();
            if consts.len() == branches.len() {
                return format!("one of {}", consts.join(", "));
            }
            let words: Vec<String> = branches
                .iter()
                .filter(|b| !is_null_schema(self.resolve(b)))
                .map(|b| self.expected(b))
                .collect();
            return or_list(&words);
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            let words: Vec<String> = options.iter().filter(|o| !o.is_null()).map(word).collect();
            return format!("one of {}", words.join(", "));
        }
        if let Some(c) = schema.get("const") {
            return word(c);
        }
        let words: Vec<String> = types_of(schema)
            .iter()
            .filter(|t| **t != "null")
            .map(|t| match *t {
                "string" => "a string".to_string(),
                "boolean" => "true/false".to_string(),
                "number" => "a number".to_string(),
                "integer" => whole_number(schema),
                "array" => "a list".to_string(),
                "object" => "an object".to_string(),
                other => other.to_string(),
            })
            .collect();
        if words.is_empty() {
            return "something else".into();
        }
        or_list(&words)
    }
}

/// "a whole number", with the range the schema gives.
fn whole_number(schema: &Value) -> String {
    let min = schema.get("minimum").and_then(Value::as_f64);
    let max = schema
        .get("maximum")
        .and_then(Value::as_f64)
        .or(format_max(schema));
    match (min, max) {
        (Some(lo), Some(hi)) => format!("a whole number from {lo} to {hi}"),
        (Some(lo), None) => format!("a whole number of at least {lo}"),
        (None, Some(hi)) => format!("a whole number of at most {hi}"),
        (None, None) => "a whole number".into(),
    }
}

/// The largest value a numeric `format` allows (schemars writes `uint32` and the like).
fn format_max(schema: &Value) -> Option<f64> {
    match schema.get("format").and_then(Value::as_str)? {
        "uint8" => Some(u8::MAX as f64),
        "uint16" => Some(u16::MAX as f64),
        "uint32" => Some(u32::MAX as f64),
        "int32" => Some(i32::MAX as f64),
        _ => None,
    }
}

fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_fits(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn is_null_schema(schema: &Value) -> bool {
    types_of(schema) == ["null"]
}

fn single_enum(schema: &Value) -> Option<&Value> {
    match schema.get("enum").and_then(Value::as_array)?.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// A schema constant as a word: `list`, `3`, `true`.
fn word(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// "a, b or c".
fn or_list(words: &[String]) -> String {
    match words {
        [] => "something else".into(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// What was given, without its value (an argument may be a secret).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(n) if n.is_i64() && n.as_i64().is_some_and(|i| i < 0) => "a negative number",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fill_form() -> Value {
        json!({
            "$defs": {"FormField": {"properties": {
                "ref": {"type": ["string", "null"]},
                "value": {"type": ["string", "number", "boolean"]}
            }, "required": ["value"], "type": "object"},
            "SnapshotMode": {"oneOf": [
                {"const": "off", "type": "string"},
                {"const": "full", "type": "string"},
                {"const": "diff", "type": "string"}
            ]}},
            "properties": {
                "fields": {"items": {"$ref": "#/$defs/FormField"}, "type": "array"},
                "submit": {"default": false, "type": "boolean"},
                "includeSnapshot": {"anyOf": [{"$ref": "#/$defs/SnapshotMode"}, {"type": "null"}]},
                "tabId": {"format": "uint32", "minimum": 0, "type": ["integer", "null"]}
            },
            "required": ["fields"],
            "type": "object"
        })
    }

    fn says(args: Value) -> Option<String> {
        explain("browser_fill_form", &fill_form(), &args)
    }

    #[test]
    fn the_field_and_what_it_expects_are_named_in_one_sentence() {
        assert_eq!(
            says(json!({"fields": [{"ref": "e1", "value": true}, {"value": {"x": 1}}]})).unwrap(),
            "browser_fill_form: fields[1].value must be a string, a number or true/false; got an object"
        );
        assert_eq!(
            says(json!({"fields": [{"ref": "e1"}]})).unwrap(),
            "browser_fill_form: fields[0].value is missing; it must be a string, a number or true/false"
        );
        assert_eq!(
            says(json!({})).unwrap(),
            "browser_fill_form: fields is missing; it must be a list"
        );
        assert_eq!(
            says(json!({"fields": {"value": "x"}})).unwrap(),
            "browser_fill_form: fields must be a list; got an object"
        );
        assert_eq!(
            says(json!({"fields": [], "submit": "yes"})).unwrap(),
            "browser_fill_form: submit must be true/false; got a string"
        );
        assert_eq!(
            says(json!({"fields": [], "includeSnapshot": "all"})).unwrap(),
            "browser_fill_form: includeSnapshot must be one of off, full, diff; got a string"
        );
        assert_eq!(
            says(json!({"fields": [], "tabId": -1})).unwrap(),
            "browser_fill_form: tabId must be a whole number from 0 to 4294967295; got a negative number"
        );
        assert_eq!(
            says(json!({"fields": [], "tabId": 1.5})).unwrap(),
            "browser_fill_form: tabId must be a whole number from 0 to 4294967295; got a fractional number"
        );
        assert_eq!(
            says(json!([1])).unwrap(),
            "browser_fill_form: the arguments must be an object; got a list"
        );
    }

    #[test]
    fn what_fits_is_not_blamed_and_values_are_never_repeated() {
        assert_eq!(
            says(
                json!({"fields": [{"ref": "e1", "value": 3}], "includeSnapshot": null, "tabId": 7, "extra": 1})
            ),
            None
        );
        let secret = "hunter2-SECRET";
        let text = says(json!({"fields": [{"value": [secret]}], "submit": secret})).unwrap();
        assert!(!text.contains(secret), "{text}");
        assert!(
            fallback("browser_x", "failed to deserialize parameters: boom")
                .starts_with("browser_x: the arguments do not fit")
        );
    }

    #[test]
    fn a_looping_or_deep_schema_ends_within_the_bound() {
        // A deep, self-referencing schema ends within the depth bound.
        let looped = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}});
        assert_eq!(explain("t", &looped, &json!({})), None);
        let nested = json!({"type": "array", "items": {"$ref": "#"}});
        let mut deep = json!(1);
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let _ = explain("t", &nested, &deep);
    }
}
