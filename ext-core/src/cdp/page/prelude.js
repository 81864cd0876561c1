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
// The topmost element at (x, y) (viewport pixels of `el`'s frame), asked of
// `elementsFromPoint` of `el`'s root: `elementFromPoint` names a shadow host for the slotted
// text inside a component's button, which is not what is hit.
const topAt = (el, x, y) => {
  const root = el.getRootNode();
  return (root.elementsFromPoint ? root : document).elementsFromPoint(x, y)[0];
};
// Whether `hit` is `el` or drawn as part of it: its descendants, what its shadow trees hold,
// and light-DOM nodes shown in its slots (also of closed shadow roots, which `el`'s own root
// chain reaches). Answers the path from `hit` up to `el` (exclusive), or null.
const pathTo = (el, hit) => {
  const roots = new Map();
  for (let r = el.getRootNode(), i = 0; r && r.host && i < 64; r = r.host.getRootNode(), i++) roots.set(r.host, r);
  const slotOf = (n) => {
    if (n.assignedSlot) return n.assignedSlot;
    const shadow = n.parentNode && (n.parentNode.shadowRoot || roots.get(n.parentNode));
    return shadow ? [...shadow.querySelectorAll('slot')].find((s) => s.assignedNodes().includes(n)) : null;
  };
  const path = [];
  for (let n = hit, i = 0; n && i < 4096; i++) {
    if (n === el) return path;
    if (n.nodeType === 1) path.push(n);
    n = slotOf(n) || n.parentNode || n.host;
  }
  return null;
};
// Interactive content: a click on it inside a label is its own, not the label's control's.
const INTERACTIVE = 'a[href],button,input:not([type=hidden]),select,textarea,details,summary,iframe,embed,object,label,[contenteditable=""],[contenteditable=true]';
const holderOf = (n) => n.parentNode && n.parentNode.nodeType === 11 ? n.parentNode.host : n.parentNode;
// Whether `el` is not drawn itself: not rendered, transparent, or clipped to a pixel by a
// wrapper near it (the "visually hidden" pattern of design systems).
const drawnElsewhere = (el, shown) => {
  if (!shown || (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true }))) return true;
  for (let n = holderOf(el), i = 0; n && n.nodeType === 1 && i < 4; n = holderOf(n), i++) {
    const b = n.getBoundingClientRect(), st = getComputedStyle(n);
    if ((b.width <= 1 || b.height <= 1) && (st.overflow !== 'visible' || st.clip !== 'auto' || st.clipPath !== 'none')) return true;
  }
  return false;
};
// For a control not drawn itself: the first visible element holding it, a few levels up and
// small (a widget's part: a slider's thumb over its hidden range input, a switch's knob, at
// most 300 x 300 px), and its centre when a press there is that part's.
const holderPoint = (el) => {
  for (let n = holderOf(el), i = 0; n && n.nodeType === 1 && i < 5; n = holderOf(n), i++) {
    if (n === document.body || n === document.documentElement) return null;
    const b = n.getBoundingClientRect();
    if (b.width < 4 || b.height < 4) continue;
    if (b.width * b.height > 90000) return null;
    const x = b.left + b.width / 2, y = b.top + b.height / 2;
    const hit = topAt(n, x, y);
    const path = hit && pathTo(n, hit);
    return path && path.every((m) => m === el || !m.matches(INTERACTIVE)) ? { surface: n, x, y } : null;
  }
  return null;
};
// Controls of their own: a click that lands on one inside another element is that one's.
const CONTROL = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[contenteditable=""],[contenteditable="true"],[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=treeitem],[role=textbox],[role=combobox],[role=slider]';
// The middle of `el`'s first words on screen that a click there reaches through no other
// control; `{covered}` when such words are there but something else lies over them; null
// when it shows no such words.
const ownPoint = (el) => {
  const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let covered = null;
  for (let t = w.nextNode(), i = 0; t && i < 200; t = w.nextNode(), i++) {
    if (!t.data.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    for (const b of [...range.getClientRects()].slice(0, 2)) {
      if (b.width <= 0 || b.height <= 0) continue;
      const x = b.left + b.width / 2, y = b.top + b.height / 2;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
      const hit = topAt(el, x, y);
      const path = hit && pathTo(el, hit);
      if (path && !path.some((n) => n.matches(CONTROL))) return { surface: el, x, y };
      if (hit && !path) covered ??= hit;
    }
  }
  return covered && { covered };
};
// Where a person's click reaches `el`: its centre when the pointer meets it (or its own
// parts) there; else a point of one of its labels whose activation is the control's (the
// label, or a part of it that is no interactive content of its own), as for a control
// drawn under its own label over a visually hidden input. Answers `{surface, x, y}`, or
// `{error, message}` naming what is there instead.
const aimAt = (el) => {
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  const shown = r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  let covered;
  // An editable document's body (an editor's frame) takes a click anywhere in its frame: a
  // short body's own box (or none, an empty designMode body) is not all a person aims at,
  // and the root element below it passes the click into the body. Aimed at the middle of
  // what the frame shows of the body (the frame's middle for an empty one).
  if (el === document.body && el.isContentEditable && style.visibility !== 'hidden' && style.display !== 'none') {
    const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
    const x = innerWidth / 2, y = bottom - top > 4 ? (top + bottom) / 2 : innerHeight / 2;
    const hit = topAt(el, x, y);
    if (hit && (hit === document.documentElement || pathTo(el, hit))) return { surface: document.documentElement, x, y };
    if (hit && hit !== el) covered = hit;
  }
  if (shown && !covered) {
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = topAt(el, x, y);
    const path = hit ? pathTo(el, hit) : null;
    if (path) {
      // The middle lies on another control inside this one (a tree item's nested item, a
      // cell's editor): the middle of its own first words instead, when there are some.
      // Its own words covered: not the nested control either.
      if (!path.some((n) => n.matches(CONTROL))) return { surface: el, x, y };
      const own = ownPoint(el);
      if (!own) return { surface: el, x, y };
      if (!own.covered) return own;
      covered = own.covered;
    } else {
      covered = hit || undefined;
    }
  }
  const labels = el.labels ? [...el.labels].slice(0, 4) : [];
  for (const label of labels) {
    if (!label.isConnected) continue;
    label.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    // Its middle, then towards its ends: a link inside the label takes a click of its own.
    for (const b of [...label.getClientRects()].slice(0, 4)) {
      if (b.width <= 0 || b.height <= 0) continue;
      for (const f of [0.5, 0.25, 0.75, 0.1, 0.9]) {
        const x = b.left + b.width * f, y = b.top + b.height / 2;
        const hit = topAt(label, x, y);
        const path = hit && pathTo(label, hit);
        if (path && path.every((n) => n === el || !n.matches(INTERACTIVE))) return { surface: label, x, y };
      }
    }
  }
  if (drawnElsewhere(el, shown)) {
    const held = holderPoint(el);
    if (held) return held;
  }
  if (!shown) return { error: 'NOT_INTERACTABLE', message: describe(el) + ' is not visible' + (labels.length ? ', nor a point of its label' : '') };
  return { error: 'NOT_INTERACTABLE', message: describe(el) + (covered ? ' is covered by ' + describe(covered) : ' is outside the page') };
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
