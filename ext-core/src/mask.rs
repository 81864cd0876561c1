//! Masking of command arguments wherever they are shown again (history, journal, feed,
//! approvals): secret-named parameters, and text typed into fields the page calls
//! confidential.

use serde_json::Value;

use crate::methods::{facts_of_call, Typed};

/// Parameter names whose values are secrets.
fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "pass", "secret", "token", "auth", "cookie", "apikey", "api_key", "otp", "pin",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// Arguments as history shows them: values of secret-named parameters (`apiToken`)
/// replaced. Text typed into a field is masked by where it went, never by what the agent
/// called the field (`element: "bypass"` hides nothing): [`mask_typed`], from the answer's
/// confidential fields or, for an approval, the element's facts.
pub fn mask_params(_method: &str, params: &Value) -> Value {
    let mut out = params.clone();
    if let Some(obj) = out.as_object_mut() {
        for (k, v) in obj.iter_mut() {
            if secret_key(k) && !v.is_null() {
                *v = Value::String(MASK.into());
            }
        }
    }
    out
}

/// What a masked value reads as.
pub const MASK: &str = "••••";

/// Mask the typed values of a call that types ([`crate::methods::Method::TYPED`]: `type`, `fill_form`) that
/// its answer says went into confidential fields (`ActionOutcome::confidential`: `0` for
/// one text, list indexes for a form). Without an answer (the call failed, perhaps after
/// typing) every typed value is masked: where it went is unknown. `method` is a wire name
/// or the MCP tool that is exactly it (`browser_type`).
pub fn mask_typed(method: &str, params: &mut Value, confidential: Option<&[usize]>) {
    let hide = |i: usize| confidential.is_none_or(|c| c.contains(&i));
    let mask = |v: Option<&mut Value>, i: usize| {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            if hide(i) {
                *v = Value::String(MASK.into());
            }
        }
    };
    match facts_of_call(method).map_or(Typed::Nothing, |f| f.typed) {
        Typed::Nothing => {}
        Typed::Text(key) => mask(params.get_mut(key), 0),
        Typed::EachOf { list, key } => {
            let entries = params.get_mut(list).and_then(Value::as_array_mut);
            for (i, entry) in entries.into_iter().flatten().enumerate() {
                mask(entry.get_mut(key), i);
            }
        }
    }
}

/// The confidential indexes an action's answer names (`None` when it is not an answer).
pub fn confidential_of(answer: &Value) -> Option<Vec<usize>> {
    answer.get("tab_id")?;
    Some(
        answer
            .get("confidential")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_masked_in_history() {
        let token = mask_params("evaluate", &json!({"function": "1", "apiToken": "x"}));
        assert_eq!(token["apiToken"], "••••");
        // The agent's words for a field mask nothing: where the text went decides
        // (`mask_typed`), so "bypass" cannot hide "Send $500" from the person.
        for params in [
            json!({"selector": "#note", "element": "bypass", "text": "Send $500"}),
            json!({"ref": "e3", "element": "Password", "text": "Send $500"}),
        ] {
            assert_eq!(
                mask_params("type", &params)["text"],
                "Send $500",
                "{params}"
            );
        }
        let form = mask_params(
            "fill_form",
            &json!({"fields": [{"selector": "#pass", "value": "s"}, {"selector": "#user", "value": "u"}]}),
        );
        assert_eq!(form["fields"][0]["value"], "s");
    }

    #[test]
    fn values_typed_into_confidential_fields_are_masked_by_the_answer() {
        let mut typed = json!({"ref": "e3", "text": "Canary-7"});
        mask_typed("browser_type", &mut typed, Some(&[0]));
        assert_eq!(typed["text"], MASK);
        let mut plain = json!({"ref": "e3", "text": "Ada"});
        mask_typed("type", &mut plain, Some(&[]));
        assert_eq!(plain["text"], "Ada");
        let mut form =
            json!({"fields": [{"selector": "#f1", "value": "a"}, {"ref": "e2", "value": "b"}]});
        mask_typed("fill_form", &mut form, Some(&[1]));
        assert_eq!(
            (
                form["fields"][0]["value"].as_str(),
                form["fields"][1]["value"].as_str()
            ),
            (Some("a"), Some(MASK))
        );
        // A failed call may have typed before failing: nothing of it is shown.
        let mut failed = json!({"fields": [{"selector": "#f1", "value": "a"}]});
        mask_typed("fill_form", &mut failed, None);
        assert_eq!(failed["fields"][0]["value"], MASK);
        assert_eq!(
            confidential_of(&json!({"tab_id": 1, "confidential": [0]})),
            Some(vec![0])
        );
        assert_eq!(confidential_of(&json!({"tab_id": 1})), Some(vec![]));
        assert_eq!(confidential_of(&json!({"code": "TIMEOUT"})), None);
    }
}
