//! The few page-side scripts the CDP logic evaluates. Each is a function expression called
//! with JSON arguments and returns a plain JSON object, so one round trip does one step.

/// Find an element by CSS selector, waiting up to `waitMs` for it to exist and (when
/// `needBox`) to be visible, enabled and not covered at its centre. Scrolls it into view.
/// Returns `{x, y, w, h, tag}` (viewport CSS pixels, centre) or `{error, message}`.
pub const LOCATE: &str = r#"async (sel, waitMs, needBox) => {
  const deadline = Date.now() + waitMs;
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.classList && el.classList.length ? '.' + [...el.classList].slice(0, 2).join('.') : '');
  let last = { error: 'SELECTOR_NOT_FOUND', message: 'no element matches ' + sel };
  for (;;) {
    let el;
    try { el = document.querySelector(sel); }
    catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + sel + ': ' + e.message }; }
    if (el) {
      if (!needBox) return { tag: describe(el) };
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (r.width <= 0 || r.height <= 0 || style.visibility === 'hidden' || style.display === 'none') {
        last = { error: 'NOT_INTERACTABLE', message: describe(el) + ' is not visible' };
      } else if (el.disabled) {
        last = { error: 'NOT_INTERACTABLE', message: describe(el) + ' is disabled' };
      } else {
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        const hit = document.elementFromPoint(x, y);
        if (hit && hit !== el && !el.contains(hit) && !(hit.shadowRoot && hit.contains(el))) {
          last = { error: 'NOT_INTERACTABLE', message: describe(el) + ' is covered by ' + describe(hit) };
        } else {
          return { x, y, w: r.width, h: r.height, tag: describe(el) };
        }
      }
    }
    if (Date.now() >= deadline) return last;
    await new Promise((res) => setTimeout(res, 30));
  }
}"#;

/// Focus an editable element and select its content so that inserted text replaces it.
/// Value-typed inputs (date, color, range…) are set directly. Returns `{mode}` or `{error}`.
pub const PREPARE_TYPE: &str = r#"async (sel, waitMs, text) => {
  const deadline = Date.now() + waitMs;
  let el;
  for (;;) {
    try { el = document.querySelector(sel); }
    catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + sel + ': ' + e.message }; }
    if (el || Date.now() >= deadline) break;
    await new Promise((res) => setTimeout(res, 30));
  }
  if (!el) return { error: 'SELECTOR_NOT_FOUND', message: 'no element matches ' + sel };
  const tag = el.tagName.toLowerCase();
  const textTypes = ['', 'text', 'search', 'email', 'password', 'tel', 'url', 'number'];
  const valueTypes = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
  if (el.disabled || el.readOnly) return { error: 'NOT_INTERACTABLE', message: tag + ' is disabled or read-only' };
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
  return { error: 'NOT_INTERACTABLE', message: tag + (el.type ? '[type=' + el.type + ']' : '') + ' is not a text field' };
}"#;

/// Tell the page the typed value is final, as leaving the field would.
pub const DISPATCH_CHANGE: &str = r#"() => {
  const el = document.activeElement;
  if (el && el !== document.body) el.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}"#;

/// Select `<option>`s of a `<select>` by value or visible label. Returns `{values}` or `{error}`.
pub const SELECT_OPTIONS: &str = r#"async (sel, waitMs, wanted) => {
  const deadline = Date.now() + waitMs;
  let el;
  for (;;) {
    try { el = document.querySelector(sel); }
    catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + sel + ': ' + e.message }; }
    if (el || Date.now() >= deadline) break;
    await new Promise((res) => setTimeout(res, 30));
  }
  if (!el) return { error: 'SELECTOR_NOT_FOUND', message: 'no element matches ' + sel };
  if (el.tagName !== 'SELECT') return { error: 'NOT_INTERACTABLE', message: el.tagName.toLowerCase() + ' is not a <select>' };
  if (el.disabled) return { error: 'NOT_INTERACTABLE', message: 'the <select> is disabled' };
  if (!el.multiple && wanted.length > 1) return { error: 'BAD_ARGS', message: 'the <select> takes one value, got ' + wanted.length };
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

/// Resolves once the current document has fired `load`.
pub const WAIT_FOR_LOAD: &str = r#"() => document.readyState === 'complete' ? true :
  new Promise((res) => addEventListener('load', () => res(true), { once: true }))"#;

/// Where the page is: `{url, title, status}`.
pub const PAGE_INFO: &str = r#"() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return { url: location.href, title: document.title, status: nav && nav.responseStatus ? nav.responseStatus : null };
}"#;

/// Page coordinates of an element's box, for element screenshots.
pub const ELEMENT_CLIP: &str = r#"(sel) => {
  let el;
  try { el = document.querySelector(sel); }
  catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + sel + ': ' + e.message }; }
  if (!el) return { error: 'SELECTOR_NOT_FOUND', message: 'no element matches ' + sel };
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return { error: 'NOT_INTERACTABLE', message: 'the element has no visible box' };
  return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height };
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
}
