// Reduced mode's page functions (exec/reduced.rs). scripts/build-extension.sh packages them
// as reduced_page.js, after the prelude and the walker, in one function run once per
// document in the extension's isolated world of the main frame (MV3 allows no string eval
// there, so nothing is sent as code). Each answers `{here, value}` or `{error, message}`.
// Input is untrusted DOM events, dispatched only at the point Rust judged.
K.doc ??= Math.random().toString(36).slice(2) + Date.now().toString(36);
const here = () => ({ url: location.href, origin: location.origin, doc: K.doc, title: document.title });
const answer = (value) => (value && value.error ? value : { here: here(), value });
// The URL of the document an iframe element shows: read where it is of this origin, its
// parent's for a blank or srcdoc one, else null (another origin's document is not known).
const frameUrl = (el) => {
  try {
    const href = el.contentWindow && el.contentWindow.location.href;
    if (href && href !== 'about:blank' && href !== 'about:srcdoc') return href;
    if (href) return location.href;
  } catch (e) { /* another origin */ }
  return null;
};
// Aim at an element as a person's pointer would: the point, and the frame it lands in
// when that is an iframe element (`inner`, or `innerUnknown` for another origin's).
const aim = async (target, waitMs) => {
  const found = await resolve(target, waitMs);
  if (found.error) return found;
  const spot = aimAt(found.el);
  if (spot.error) return spot;
  const value = { x: spot.x, y: spot.y };
  const hit = topAt(spot.surface, spot.x, spot.y);
  if (hit && (hit.tagName === 'IFRAME' || hit.tagName === 'FRAME')) {
    const url = frameUrl(hit);
    if (url) value.inner = url; else value.innerUnknown = true;
  }
  return answer(value);
};
// A click at the judged point, only while it still reaches the element there.
const press = async (target, x, y, double) => {
  const found = await resolve(target, 0);
  if (found.error) return found;
  const el = found.el;
  const spot = aimAt(el);
  if (spot.error) return spot;
  if (Math.abs(spot.x - x) > 1 || Math.abs(spot.y - y) > 1) {
    return { error: 'NOT_INTERACTABLE', message: describe(el) + ' moved before the click; take a new snapshot' };
  }
  const hit = topAt(spot.surface, x, y) || el;
  const base = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, button: 0, view: window };
  const pointer = { pointerId: 1, pointerType: 'mouse', isPrimary: true };
  const fire = (type, Ctor, extra) => hit.dispatchEvent(new Ctor(type, { ...base, ...extra }));
  for (let i = 1; i <= (double ? 2 : 1); i++) {
    fire('pointerdown', PointerEvent, { ...pointer, buttons: 1, detail: i });
    fire('mousedown', MouseEvent, { buttons: 1, detail: i });
    const focusable = hit.closest('input,select,textarea,button,a[href],[tabindex],[contenteditable=""],[contenteditable="true"]');
    if (focusable && focusable.focus) focusable.focus();
    fire('pointerup', PointerEvent, { ...pointer, detail: i });
    fire('mouseup', MouseEvent, { detail: i });
    fire('click', MouseEvent, { detail: i });
  }
  if (double) fire('dblclick', MouseEvent, { detail: 2 });
  return answer({});
};
// Replace a text field's content with `text` (the browser's own editing first, so the
// page sees its usual input events), then Enter when asked.
const typeIn = async (target, text, submit, onlyOn) => {
  const found = await resolve(target, 0);
  if (found.error) return found;
  const el = found.el;
  if (onlyOn && location.origin !== onlyOn) {
    return { error: 'POLICY_DENIED', message: 'this text goes only to ' + onlyOn + ', not to ' + location.origin };
  }
  const plain = el.matches('input:not([type=hidden]),textarea');
  if (!plain && !el.isContentEditable) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is not a text field' };
  if (el.disabled || el.readOnly) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is disabled or read-only' };
  el.focus();
  if (plain) el.select(); else getSelection().selectAllChildren(el);
  const value = () => (plain ? el.value : el.textContent);
  const edited = text === '' ? document.execCommand('delete') : document.execCommand('insertText', false, text);
  if (!edited || value() !== text) {
    if (plain) {
      const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
      if (set) set.call(el, text); else el.value = text;
    } else {
      el.textContent = text;
    }
    el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
  }
  el.dispatchEvent(new Event('change', { bubbles: true }));
  if (submit) {
    const key = { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true };
    const go = el.dispatchEvent(new KeyboardEvent('keydown', key));
    el.dispatchEvent(new KeyboardEvent('keyup', key));
    if (go && plain && el.tagName === 'INPUT' && el.form) el.form.requestSubmit();
  }
  const secret = el.type === 'password' || /one-time-code|cc-/.test(el.autocomplete || '');
  return answer({ secret });
};
const walk = async (root) => {
  const walked = await walker(root, 30000, false);
  return walked && walked.error ? walked : answer(JSON.stringify(walked));
};
return { here: async () => answer(null), walk, aim, press, typeIn };
