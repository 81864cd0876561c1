//! The few page-side scripts the CDP logic evaluates. Each is a function expression called
//! with JSON arguments and returns a plain JSON object, so one round trip does one step.
//! Element scripts share one finder, [`FIND`], bound in by [`with_find`].

/// `find(sel, waitMs, check)`: the element matching `sel` once it exists and `check(el)`
/// (if given) returns `true`; retries until `waitMs` passed, then answers the last
/// `{error, message}` (`check` returns one to say why the element is not ready yet).
pub const FIND: &str = r#"async (sel, waitMs, check) => {
  const deadline = Date.now() + waitMs;
  let last = { error: 'SELECTOR_NOT_FOUND', message: 'no element matches ' + sel };
  for (;;) {
    let el;
    try { el = document.querySelector(sel); }
    catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + sel + ': ' + e.message }; }
    if (el) {
      const verdict = check ? check(el) : true;
      if (verdict === true) return { el };
      last = verdict;
    }
    if (Date.now() >= deadline) return last;
    await new Promise((res) => setTimeout(res, 30));
  }
}"#;

/// A short description of an element for messages: `button#go.primary`.
const DESCRIBE: &str = r#"(el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
  (el.classList && el.classList.length ? '.' + [...el.classList].slice(0, 2).join('.') : '')"#;

/// Wrap an element script so `find` and `describe` are in scope for it.
pub fn with_find(script: &str) -> String {
    format!("(() => {{ const find = {FIND}; const describe = {DESCRIBE}; return {script}; }})()")
}

/// Scroll an element into view and wait until it is visible, enabled and not covered at
/// its centre. Returns `{x, y}` (viewport CSS pixels of the centre) or `{error, message}`.
pub const LOCATE: &str = r#"async (sel, waitMs) => {
  const found = await find(sel, waitMs, (el) => {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (r.width <= 0 || r.height <= 0 || style.visibility === 'hidden' || style.display === 'none')
      return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is not visible' };
    if (el.disabled) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is disabled' };
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit && hit !== el && !el.contains(hit) && !(hit.shadowRoot && hit.contains(el)))
      return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is covered by ' + describe(hit) };
    return true;
  });
  if (found.error) return found;
  const r = found.el.getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
}"#;

/// Focus an editable element and select its content so that inserted text replaces it.
/// Value-typed inputs (date, color, range…) are set directly. Returns `{mode}` or `{error}`.
pub const PREPARE_TYPE: &str = r#"async (sel, waitMs, text) => {
  const found = await find(sel, waitMs);
  if (found.error) return found;
  const el = found.el;
  const tag = el.tagName.toLowerCase();
  const textTypes = ['', 'text', 'search', 'email', 'password', 'tel', 'url', 'number'];
  const valueTypes = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  if (el.disabled || el.readOnly) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is disabled or read-only' };
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (tag === 'input' && valueTypes.includes(el.type)) {
    el.focus();
    el.value = text;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { mode: 'set' };
  }
  if (tag === 'textarea' || (tag === 'input' && textTypes.includes(el.type))) {
    el.focus();
    try { el.select(); } catch (_) { el.value = ''; }
    return { mode: 'insert', empty: el.value === '' };
  }
  if (el.isContentEditable) {
    el.focus();
    const range = document.createRange();
    range.selectNodeContents(el);
    const s = getSelection(); s.removeAllRanges(); s.addRange(range);
    return { mode: 'insert', empty: el.textContent === '' };
  }
  return { error: 'NOT_INTERACTABLE', message: describe(el) + (el.type ? '[type=' + el.type + ']' : '') + ' is not a text field' };
}"#;

/// Tell the page the typed value is final, as leaving the field would.
pub const DISPATCH_CHANGE: &str = r#"() => {
  const el = document.activeElement;
  if (el && el !== document.body) el.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}"#;

/// Select `<option>`s of a `<select>` by value or visible label. Returns `{values}` or `{error}`.
pub const SELECT_OPTIONS: &str = r#"async (sel, waitMs, wanted) => {
  const found = await find(sel, waitMs);
  if (found.error) return found;
  const el = found.el;
  if (el.tagName !== 'SELECT') return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is not a <select>' };
  if (el.disabled) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is disabled' };
  if (!el.multiple && wanted.length > 1) return { error: 'BAD_ARGS', message: describe(el) + ' takes one value, got ' + wanted.length };
  const options = [...el.options];
  const picked = [];
  for (const w of wanted) {
    const o = options.find((o) => o.value === w) || options.find((o) => o.label.trim() === w.trim());
    if (!o) return { error: 'BAD_ARGS', message: 'no option with value or label ' + JSON.stringify(w) +
      '; options are ' + JSON.stringify(options.slice(0, 20).map((o) => o.value)) };
    if (o.disabled) return { error: 'NOT_INTERACTABLE', message: 'option ' + JSON.stringify(w) + ' is disabled' };
    picked.push(o);
  }
  el.focus();
  for (const o of options) o.selected = picked.includes(o);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { values: picked.map((o) => o.value) };
}"#;

/// Page coordinates of an element's box, for element screenshots.
pub const ELEMENT_CLIP: &str = r#"async (sel, waitMs) => {
  const found = await find(sel, waitMs);
  if (found.error) return found;
  found.el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = found.el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return { error: 'NOT_INTERACTABLE', message: describe(found.el) + ' has no visible box' };
  return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height };
}"#;

/// Resolves once the current document has fired `load`.
pub const WAIT_FOR_LOAD: &str = r#"() => document.readyState === 'complete' ? true :
  new Promise((res) => addEventListener('load', () => res(true), { once: true }))"#;

/// Where the page is: `{url, title, status}`.
pub const PAGE_INFO: &str = r#"() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return { url: location.href, title: document.title, status: nav && nav.responseStatus ? nav.responseStatus : null };
}"#;

/// Build `(<function>)(<json args>…)`.
pub fn call(function: &str, args: &[serde_json::Value]) -> String {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    format!("({function})({})", args.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn call_embeds_arguments_as_json_literals() {
        let src = call("(a, b) => a + b", &[json!("x\"'</script>"), json!(2)]);
        assert_eq!(src, r#"((a, b) => a + b)("x\"'</script>", 2)"#);
    }

    #[test]
    fn element_scripts_get_the_shared_finder() {
        let src = with_find(LOCATE);
        assert!(src.starts_with("(() => { const find = async (sel, waitMs, check)"));
        assert!(src.contains("const describe = (el)"));
        assert!(src.ends_with("; })()"));
    }
}
