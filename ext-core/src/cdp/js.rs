//! The page-side scripts the CDP logic runs. Each is a function expression called with JSON
//! arguments that answers a plain JSON object (or `{error, message}`), so one round trip
//! does one step. Element scripts run in Kapture's world with the prelude's `resolve`.

/// Wait until the target is visible, enabled and not covered where a person's click reaches
/// it (its centre, else a point of its label: `aimAt` in the prelude), scrolled into view.
/// Answers `{x, y}` in the frame's viewport CSS pixels.
pub const LOCATE: &str = r#"async (target, waitMs) => {
  let aim;
  const found = await resolve(target, waitMs, (el) => {
    if (el.disabled) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is disabled' };
    aim = aimAt(el);
    return aim.error ? aim : true;
  });
  if (found.error) return found;
  // The element aimed at (the control, or the label or part that reaches it) and the
  // control, for `STILL_HIT`: a selector may name another one by then.
  K.aimed = { key: JSON.stringify(target), el: new WeakRef(aim.surface), control: new WeakRef(found.el) };
  // Where the point sits from the centre of the surface's first box: in a frame, kapture
  // measures that box in the tab and adds this, so the press lands on the point checked.
  const b = aim.surface.getClientRects()[0] || aim.surface.getBoundingClientRect();
  return { x: aim.x, y: aim.y, dx: aim.x - (b.left + b.width / 2), dy: aim.y - (b.top + b.height / 2), own: aim.surface === found.el };
}"#;

/// Whether the element `LOCATE` aimed at (not whatever the target names now) is still what
/// the pointer is over at `x, y` (the frame's viewport CSS pixels, as `LOCATE` answered
/// them). Checked once the pointer is there and before each press (`pressed`: how many were
/// given already): the page's handlers of those events may have put another element there.
pub const STILL_HIT: &str = r#"async (target, x, y, pressed) => {
  // `LOCATE` aimed in this very document just before: no aim kept (the document was
  // replaced) or one collected is an element gone, never a reason to look the target up anew.
  const el = K.aimed && K.aimed.key === JSON.stringify(target) ? K.aimed.el.deref() : undefined;
  const control = K.aimed && K.aimed.control ? K.aimed.control.deref() : undefined;
  const done = pressed ? ': it was pressed ' + pressed + ' time(s), the rest was not' : ': nothing was pressed';
  if (!el || !el.isConnected)
    return { error: 'NOT_INTERACTABLE', message: (el ? describe(el) : 'the element aimed at') + ' was removed from the page' + done };
  const hit = topAt(el, x, y);
  const path = hit && pathTo(el, hit);
  // Aimed at a label or a part drawn for the control: a part of it that became interactive
  // content of its own takes the click, and a label re-pointed elsewhere activates that.
  const own = el === control;
  const relayed = !own && (el.localName !== 'label' || el.control === control);
  if (path && (own || (relayed && path.every((n) => n === control || !n.matches(INTERACTIVE))))) return true;
  const what = ' moved from under the pointer' + (hit ? ' (' + describe(hit) + ' is there now)' : '');
  return { error: 'NOT_INTERACTABLE', message: describe(el) + what + done };
}"#;

/// Scroll the target into view (screenshots, evaluate on an element).
pub const SCROLL_INTO_VIEW: &str = r#"async (target, waitMs) => {
  const found = await resolve(target, waitMs);
  if (found.error) return found;
  found.el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  return { ok: true };
}"#;

/// A page-side helper: what the element typed into says about itself (the recorder's
/// descriptor fields that decide a secret), for `recorder::confidential_kind`. A field the
/// page draws as bullets (`-webkit-text-security`) is a password field, whatever its type.
macro_rules! field_info_js {
    () => {
        r#"const fieldInfo = (el) => {
    const form = el.form || (el.closest && el.closest('form'));
    const bullets = (() => { try { const v = getComputedStyle(el).getPropertyValue('-webkit-text-security'); return !!v && v !== 'none'; } catch (e) { return false; } })();
    const heading = form && form.querySelector('h1,h2,h3,legend');
    const clip = (s, n) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
    const label = el.labels && el.labels[0] ? clip(el.labels[0].innerText, 80) : '';
    return {
      tag: el.localName || '', id: el.id || '', name: (el.getAttribute && el.getAttribute('name')) || '',
      label, placeholder: (el.getAttribute && el.getAttribute('placeholder')) || '',
      accessibleName: clip((el.getAttribute && el.getAttribute('aria-label')) || label, 80),
      inputType: bullets ? 'password' : el.localName === 'input' ? (el.type || 'text').toLowerCase() : '',
      autocomplete: (el.getAttribute && el.getAttribute('autocomplete')) || '',
      formHasPassword: !!(form && form.querySelector('input[type=password]')),
      formHint: form ? clip([form.id, form.getAttribute('name'), form.getAttribute('action'), heading && heading.innerText].filter(Boolean).join(' '), 120) : '',
      url: location.href,
    };
  };
  "#
    };
}

/// Focus an editable element and select its content so that inserted text replaces it.
/// Value-typed inputs (date, color, range…) are set directly. Answers `{mode, field}`
/// (`field`: what the element says about itself, to tell a confidential field).
pub const PREPARE_TYPE: &str = concat!(
    r#"async (target, waitMs, text, onlyOn) => {
  "#,
    field_info_js!(),
    r#"const found = await resolve(target, waitMs);
  if (found.error) return found;
  const el = found.el;
  if (onlyOn && location.origin !== onlyOn) return { error: 'POLICY_DENIED', message: 'the field is on ' + JSON.stringify(location.origin) + ', not on ' + onlyOn + ' where the value was recorded: a secret is typed only there' };
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
    return { mode: 'set', field: fieldInfo(el) };
  }
  if (tag === 'textarea' || (tag === 'input' && textTypes.includes(el.type))) {
    el.focus();
    try { el.select(); } catch (_) { el.value = ''; }
    // A code editor's input (CodeMirror 5, Monaco: a textarea a pixel wide in a clipped
    // wrapper) holds none of the editor's text: its content is replaced by the editor's own
    // select-all, from the keyboard, as a person does.
    const r = el.getBoundingClientRect();
    const proxy = r.width <= 2 || r.height <= 2 || drawnElsewhere(el, true);
    return { mode: 'insert', empty: el.value === '' && !proxy, proxy, field: fieldInfo(el) };
  }
  if (el.isContentEditable) {
    // An editable body (an editor's frame, a designMode document): its frame takes the
    // focus first, where the typing is sent.
    if (el === document.body) window.focus();
    el.focus();
    const range = document.createRange();
    range.selectNodeContents(el);
    const s = getSelection(); s.removeAllRanges(); s.addRange(range);
    // A rich-text editor keeps its own model and copies it into its form's field, often
    // a little later (Draftail: 250 ms after the last change): what the form holds now,
    // so that the typing's end can tell when the copy is made (`RICH_FORM_SYNCED`).
    const form = el.closest('form');
    K.richForm = form ? { form: new WeakRef(form), before: [...form.elements].map((e) => e.type === 'file' ? '' : String(e.value)) } : null;
    return { mode: 'insert', rich: true, empty: el.textContent === '', field: fieldInfo(el) };
  }
  // An editor's frame is typed into at the text box its document holds (the snapshot's
  // line under the iframe), not at the frame element.
  if (tag === 'iframe' || tag === 'frame') return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is a frame, not a text field: type into the text box inside it (its ref is on the line under the frame in the snapshot)' };
  return { error: 'NOT_INTERACTABLE', message: describe(el) + (el.type ? '[type=' + el.type + ']' : '') + ' is not a text field' };
}"#
);

/// Tell the page the typed value is final, as leaving the field would.
pub const DISPATCH_CHANGE: &str = r#"() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (el && el !== document.body) el.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}"#;

/// Select `<option>`s of a `<select>` by value or visible label. Answers `{values}`.
pub const SELECT_OPTIONS: &str = r#"async (target, waitMs, wanted) => {
  const found = await resolve(target, waitMs);
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

/// What kind of form control the target is: `{kind: text|check|select|other, checked}`.
pub const FIELD_KIND: &str = r#"async (target, waitMs) => {
  const found = await resolve(target, waitMs);
  if (found.error) return found;
  const el = found.el;
  const type = (el.type || '').toLowerCase();
  if (el.tagName === 'SELECT') return { kind: 'select' };
  if (el.tagName === 'INPUT' && (type === 'checkbox' || type === 'radio')) return { kind: 'check', checked: el.checked };
  const role = el.getAttribute('role');
  if (role === 'checkbox' || role === 'radio' || role === 'switch') return { kind: 'check', checked: el.getAttribute('aria-checked') === 'true' };
  return { kind: 'text' };
}"#;

/// Submit the form that holds the target (a trusted click on its submit button is done by
/// the caller when there is one): answers `{button: true}` when a submit button exists.
pub const SUBMIT_FORM: &str = r#"async (target) => {
  const found = await resolve(target, 0);
  if (found.error) return found;
  const form = found.el.form || found.el.closest('form');
  if (!form) return { error: 'BAD_ARGS', message: 'the last field is not inside a <form>; click its submit button instead' };
  const button = form.querySelector('button:not([type]),button[type=submit],input[type=submit],input[type=image]');
  if (button && !button.disabled) return { button: idOf(button) };
  form.requestSubmit();
  return { submitted: true };
}"#;

/// The registry id of the element the function is called on (`this`).
pub const ID_OF_THIS: &str =
    "function() { return globalThis.__k ? globalThis.__k.ids.get(this) || 0 : 0; }";

/// The element's (or page's) visible text, from `offset`, at most `max` characters.
pub const GET_TEXT: &str = r#"async (target, offset, max) => {
  let el = document.body || document.documentElement;
  if (target) { const f = await resolve(target, 0); if (f.error) return f; el = f.el; }
  const all = (el.innerText ?? el.textContent ?? '').replace(/\n{3,}/g, '\n\n').trim();
  return { text: all.slice(offset, offset + max), total: all.length };
}"#;

/// The element's (or document's) HTML, from `offset`, at most `max` characters.
pub const GET_HTML: &str = r#"async (target, outer, offset, max) => {
  let el = document.documentElement;
  if (target) { const f = await resolve(target, 0); if (f.error) return f; el = f.el; }
  const all = outer ? el.outerHTML : el.innerHTML;
  return { text: all.slice(offset, offset + max), total: all.length };
}"#;

/// Links of the page (or inside the target): `{links: [[text, absolute url]], total}`.
pub const LINKS: &str = r#"async (target, sameOrigin, include, exclude) => {
  let root = document;
  if (target) { const f = await resolve(target, 0); if (f.error) return f; root = f.el; }
  let inc, exc;
  try { inc = include ? new RegExp(include) : null; exc = exclude ? new RegExp(exclude) : null; }
  catch (e) { return { error: 'BAD_ARGS', message: 'include/exclude is not a valid regular expression: ' + e.message }; }
  const seen = new Set();
  const links = [];
  for (const a of root.querySelectorAll('a[href],area[href]')) {
    const url = a.href;
    if (!url || url.startsWith('javascript:') || seen.has(url)) continue;
    if (sameOrigin && new URL(url, location.href).origin !== location.origin) continue;
    if (inc && !inc.test(url)) continue;
    if (exc && exc.test(url)) continue;
    seen.add(url);
    links.push([(a.innerText || a.getAttribute('aria-label') || a.title || '').replace(/\s+/g, ' ').trim(), url]);
  }
  return { links };
}"#;

/// One check of a wait condition: `{met: bool}`.
pub const WAIT_CHECK: &str = r#"(text, textGone, sel, gone) => {
  const body = (document.body && document.body.innerText) || '';
  if (text !== null && !body.includes(text)) return { met: false };
  if (textGone !== null && body.includes(textGone)) return { met: false };
  if (sel !== null) {
    let els;
    try { els = queryAll(sel); }
    catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + sel + ': ' + e.message }; }
    const visible = els.some((el) => el.checkVisibility ? el.checkVisibility({ visibilityProperty: true }) : el.getClientRects().length > 0);
    if (visible === gone) return { met: false };
  }
  return { met: true };
}"#;

/// Readable content as Markdown: headings, paragraphs, lists, links, code, tables, quotes.
pub const MARKDOWN: &str = include_str!("page/markdown.js");

/// The recorder's capture script (see `page/recorder.js`), run in its own world, after the
/// element descriptor it shares with the picker (in one block: run again in the same world,
/// it declares nothing twice).
pub const RECORDER: &str = concat!(
    "{\n",
    include_str!("page/describe.js"),
    include_str!("page/recorder.js"),
    "}\n"
);

/// The element picker's installer (see `page/pick.js`): a function `(token, opts)` with the
/// recorder's element descriptor in scope.
pub const PICK_START: &str = concat!(
    "(() => {\n",
    include_str!("page/describe.js"),
    "return (",
    include_str!("page/pick.js"),
    ");\n})()"
);

/// The picker's outcome in this frame: `{picked: {id, descriptor, what}}`, `{cancelled}`,
/// `{waiting}` after `waitMs` without one, or `{gone}` when no picker of `token` is here
/// (the document was replaced). Each poll keeps the picker's watchdog quiet.
pub const PICK_POLL: &str = r#"async (token, waitMs) => {
  const p = K.pick;
  if (!p || p.token !== token) return { gone: true };
  p.seenAt = Date.now();
  const timer = new Promise((res) => setTimeout(() => res(null), waitMs));
  return (await Promise.race([p.done, timer])) || { waiting: true };
}"#;

/// Remove the picker of `token` (any picker when `token` is null) with every trace of it.
pub const PICK_END: &str = r#"(token) => {
  if (K.pick && (token === null || K.pick.token === token)) K.pick.end();
  return true;
}"#;

/// The recorder's in-page widget (see `page/widget.js`), in the recorder's world.
pub const RECORDER_WIDGET: &str = include_str!("page/widget.js");

/// What the page says of an element input lands on, for an approval's risk
/// (`policy::risk::ElementFacts`): `(el) => facts`, standalone (no prelude), so it runs on
/// any element object of Kapture's world — one a target names, the focused one, the one
/// under a point. See `page/facts.js`.
pub const ELEMENT_FACTS: &str = concat!(
    "(el) => {\n",
    field_info_js!(),
    include_str!("page/facts.js"),
    "}"
);

/// The password watch, run at the start of every document in Kapture's world (see
/// `page/watch.js`); it reports through [`PASSWORD_BINDING`].
pub const PASSWORD_WATCH: &str = include_str!("page/watch.js");

/// The binding [`PASSWORD_WATCH`] calls; only Kapture's world has it.
pub const PASSWORD_BINDING: &str = "__kapturePasswords";

/// The page walker (see `page/walker.js`).
/// The page-model walker (`page/walker.js`), answering its walk as JSON text: one string crosses the protocol and is read
/// straight into a `Walk`, instead of thousands of objects the protocol serialises, the
/// engine rebuilds as a tree of values and then converts (an `{error}` answer stays an
/// object, for `world::run` to raise).
pub const WALKER_TEXT: &str = concat!(
    "async (...args) => { const walked = await (",
    include_str!("page/walker.js"),
    ")(...args); return walked && walked.error ? walked : JSON.stringify(walked); }"
);

/// Resolves once at least `minMs` passed and the document has not changed for `quietMs`
/// (the prelude's observer), or after `maxMs` whatever happens: `{quiet, waited}`.
pub const SETTLE_DOM: &str = r#"async (minMs, quietMs, maxMs) => {
  const start = performance.now();
  for (;;) {
    const now = performance.now();
    const quiet = now - K.changedAt, waited = now - start;
    if ((waited >= minMs && quiet >= quietMs) || waited >= maxMs) return { quiet, waited };
    const next = Math.max(minMs - waited, quietMs - quiet, 10);
    await new Promise((res) => setTimeout(res, Math.min(next, maxMs - waited)));
  }
}"#;

/// Trusted mouse presses the frame received so far (the prelude counts them).
pub const PRESSES: &str = "() => K.presses";

/// Resolves after the frame painted once more (its hit-test data is current by then), or
/// after 100 ms in a frame that does not paint (hidden, throttled).
pub const NEXT_PAINT: &str = "() => new Promise((res) => { requestAnimationFrame(() => setTimeout(() => res(true), 0)); setTimeout(() => res(false), 100); })";

/// After a wheel or a scroll call: resolves once the page saw its scroll end (`scrollend`,
/// anywhere in the document: a wheel may scroll an inner box), or after three frames with
/// no scroll seen (nothing could scroll, or it was seen before this listened); 500 ms at
/// most. The compositor scrolls first and tells the page a frame later: read at once, the
/// page would still say where it was.
pub const SCROLL_SEEN: &str = "() => new Promise((res) => { let moved = false, frames = 0; const seen = () => { moved = true; }; const end = (v) => { removeEventListener('scroll', seen, true); removeEventListener('scrollend', ended, true); res(v); }; const ended = () => end(true); addEventListener('scroll', seen, true); addEventListener('scrollend', ended, true); const tick = () => { if (moved) return; if (++frames >= 3) return end(false); requestAnimationFrame(tick); }; requestAnimationFrame(tick); setTimeout(() => end(moved), 500); })";

/// Resolves in a task queued after those already waiting (a `hashchange`, a `popstate`).
pub const NEXT_TASK: &str = "() => new Promise((res) => setTimeout(() => res(true), 0))";

/// The body that reads where the page is (`info()` → `{url, title, status}`), shared by
/// the page-info scripts.
macro_rules! page_info_js {
    () => {
        r#"const info = () => {
    const nav = performance.getEntriesByType('navigation')[0];
    return { url: location.href, title: document.title, status: nav && nav.responseStatus ? nav.responseStatus : null };
  };
"#
    };
}

/// Where the page is: `{url, title, status}`.
pub const PAGE_INFO: &str = concat!("() => {\n  ", page_info_js!(), "  return info();\n}");

/// [`PAGE_INFO`] once the document has loaded: answered by the page's own `load` event,
/// so a navigation's answer costs no round trip after it.
pub const LOADED_PAGE_INFO: &str = concat!(
    "() => new Promise((res) => {\n  ",
    page_info_js!(),
    r#"  if (document.readyState === 'complete') res(info());
  else addEventListener('load', () => res(info()), { once: true });
})"#
);

/// [`PAGE_INFO`] once the document is parsed (`DOMContentLoaded`), its images and frames
/// perhaps still loading.
pub const READY_PAGE_INFO: &str = concat!(
    "() => new Promise((res) => {\n  ",
    page_info_js!(),
    r#"  if (document.readyState !== 'loading') res(info());
  else addEventListener('DOMContentLoaded', () => res(info()), { once: true });
})"#
);

/// [`PAGE_INFO`] once the page handled the tasks its input queued and rendered a frame
/// ([`NEXT_PAINT`]'s wait, 100 ms at most): an action's answer reads where the page is in
/// the same round trip as its wait.
pub const PAINTED_PAGE_INFO: &str = concat!(
    "() => new Promise((res) => {\n  ",
    page_info_js!(),
    r#"  requestAnimationFrame(() => setTimeout(() => res(info()), 0));
  setTimeout(() => res(info()), 100);
})"#
);

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
    fn the_password_watch_reports_through_its_binding() {
        assert!(PASSWORD_WATCH.contains(&format!("globalThis.{PASSWORD_BINDING};")));
    }
}
