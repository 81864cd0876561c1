// Kapture's page-side helpers. Evaluated in Kapture's isolated world of a frame (the page's
// scripts cannot see or change them); `__k` holds the element registry behind refs.
const K = (globalThis.__k ??= { ids: new WeakMap(), els: new Map(), next: 1 });
// When the document last changed (nodes, text, attributes other than `style`, which script
// animations rewrite every frame): an action answers once its page has been quiet a moment.
if (!K.watch) {
  K.changedAt = performance.now();
  K.watch = new MutationObserver((records) => {
    if (records.some((r) => r.type !== 'attributes' || r.attributeName !== 'style')) K.changedAt = performance.now();
  });
  K.watch.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}
// Trusted mouse presses this frame received: a click into an out-of-process frame is
// checked for having arrived (the browser routes it by hit-test data that can lag).
if (K.presses === undefined) {
  K.presses = 0;
  window.addEventListener('mousedown', (e) => { if (e.isTrusted) K.presses++; }, { capture: true });
}
const idOf = (el) => {
  let id = K.ids.get(el);
  if (!id) { id = K.next++; K.ids.set(el, id); K.els.set(id, new WeakRef(el)); }
  return id;
};
const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
  (el.classList && el.classList.length ? '.' + [...el.classList].slice(0, 2).join('.') : '');
// What the pointer meets at (x, y) (viewport pixels of `el`'s frame) when it is not `el` nor
// drawn as part of it; `null` when it is, `undefined` when nothing is there. Part of `el`:
// its descendants, what its shadow trees hold, and light-DOM nodes shown in its slots (also
// of closed shadow roots, which `el`'s own root chain reaches). The topmost box is asked of
// `elementsFromPoint`: `elementFromPoint` names a shadow host for the slotted text inside a
// component's button, which is not what is hit.
const metAt = (el, x, y) => {
  const root = el.getRootNode();
  const hit = (root.elementsFromPoint ? root : document).elementsFromPoint(x, y)[0];
  if (!hit) return undefined;
  const roots = new Map();
  for (let r = root, i = 0; r && r.host && i < 64; r = r.host.getRootNode(), i++) roots.set(r.host, r);
  const slotOf = (n) => {
    if (n.assignedSlot) return n.assignedSlot;
    const shadow = n.parentNode && (n.parentNode.shadowRoot || roots.get(n.parentNode));
    return shadow ? [...shadow.querySelectorAll('slot')].find((s) => s.assignedNodes().includes(n)) : null;
  };
  for (let n = hit, i = 0; n && i < 4096; i++) {
    if (n === el) return null;
    n = slotOf(n) || n.parentNode || n.host;
  }
  return hit;
};
// Elements a selector names: XPath when it starts with `/`, `(` or `xpath=` (no CSS selector
// can), else CSS. Throws on a selector that does not parse.
const isXPath = (sel) => sel.startsWith('/') || sel.startsWith('(') || sel.startsWith('xpath=');
const queryAll = (sel) => {
  if (!isXPath(sel)) return [...document.querySelectorAll(sel)];
  const found = document.evaluate(sel.replace(/^xpath=/, ''), document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
  const out = [];
  for (let i = 0; i < found.snapshotLength; i++) {
    const n = found.snapshotItem(i);
    if (n.nodeType === 1) out.push(n);
  }
  return out;
};
const queryOne = (sel) => isXPath(sel) ? queryAll(sel)[0] : document.querySelector(sel);
// The element a target names ({sel} or {id}) once it exists and `check(el)` (if given)
// returns true; retried until `waitMs` passed, then the last `{error, message}`.
const resolve = async (target, waitMs, check) => {
  const deadline = Date.now() + waitMs;
  let last = target.sel !== undefined
    ? { error: 'SELECTOR_NOT_FOUND', message: 'no element matches ' + target.sel }
    : { error: 'REF_STALE', message: 'the element of ' + target.ref + ' is no longer in the page' };
  for (;;) {
    let el;
    if (target.sel !== undefined) {
      try { el = queryOne(target.sel); }
      catch (e) { return { error: 'INVALID_SELECTOR', message: 'invalid selector ' + target.sel + ': ' + e.message }; }
    } else {
      el = K.els.get(target.id)?.deref();
      if (!el || !el.isConnected) return last;
    }
    if (el) {
      const verdict = check ? check(el) : true;
      if (verdict === true) return { el };
      last = verdict;
    }
    if (Date.now() >= deadline) return last;
    await new Promise((res) => setTimeout(res, 30));
  }
};
