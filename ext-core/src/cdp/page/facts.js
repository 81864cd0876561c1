// The facts of the element input lands on, for an approval's risk (`policy::risk`): the
// body of `(el) => { … }`, run in Kapture's world (cdp/js.rs puts the typing helpers'
// `fieldInfo` in front, so a field is told confidential by the one rule). What a click on
// `el` activates is read, not the literal node: the nearest control up the composed tree
// (a span in a button is the button; a label is its control). Every part of what the page
// says of it is its own string, whole up to a cap that is said when reached: a long
// aria-label cannot push the visible words out. All of it together is capped too (a page
// with thousands of labels or attributes must not make the answer huge).
// What it says and its markup each have their own share (markup stuffed into the content
// cannot crowd out an aria-label); the visible words are read first.
const PART_MAX = 20000, WALK_MAX = 2000, SHARE_MAX = 100000, LABELS_MAX = 20;
const room = { said: SHARE_MAX, markup: SHARE_MAX };
// Take `s` (already one line) within what is left of its share; '' once it is spent.
const within = (s, share) => {
  if (s.length > room[share]) { cut = true; s = s.slice(0, Math.max(room[share], 0)); }
  room[share] -= s.length;
  return s;
};
if (el && el.nodeType !== 1) el = el.parentElement;
if (!el) return null;
const doc = el.ownerDocument;
if (el === doc.body || el === doc.documentElement) return { field: 'page' };
// Up the composed tree: into a slot, out of a shadow root.
const up = (n) => n.assignedSlot || n.parentElement || (n.parentNode && n.parentNode.host) || null;
const ACTS = 'button, input, select, textarea, summary, a[href], area[href], label, [onclick], [tabindex]:not([tabindex="-1"]), ' +
  '[contenteditable]:not([contenteditable=false]), ' +
  ['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'checkbox', 'radio', 'switch', 'option', 'textbox'].map((r) => '[role=' + r + ']').join(', ');
let act = null;
let link = null;
for (let n = el; n && n.nodeType === 1 && n !== doc.body && n !== doc.documentElement; n = up(n)) {
  if (!link && n.matches('a[href], area[href]')) link = n;
  if (!act && n.matches(ACTS)) act = n;
  if (act && link) break;
}
// Nothing up the tree takes input of its own: the element itself (a page's listener may).
if (!act) act = el;
const named = [el];
if (act.localName === 'label' && act.control) { named.push(act); act = act.control; }
if (!named.includes(act)) named.push(act);
const tag = act.localName;
const form = act.form || null;
// `type` as the element has it: an unknown `type` of a button is `submit`.
const submits = !!form && ((tag === 'button' && act.type === 'submit') || (tag === 'input' && (act.type === 'submit' || act.type === 'image')));
const field = tag === 'input' ? act.type : tag;
let cut = false;
const parts = [];
const add = (s) => {
  s = (s || '').replace(/\s+/g, ' ').trim();
  if (!s) return;
  if (s.length > PART_MAX) { cut = true; s = s.slice(0, PART_MAX); }
  s = within(s, 'said');
  if (s) parts.push(s);
};
// Ids an aria-labelledby names, in the element's own tree (a shadow root's ids too).
const byIds = (n, attr) => {
  const ids = (n.getAttribute(attr) || '').split(/\s+/).filter(Boolean);
  if (ids.length > 20) cut = true;
  const root = n.getRootNode();
  return ids.slice(0, 20).map((id) => {
    const r = (root.getElementById ? root.getElementById(id) : null) || doc.getElementById(id);
    return r ? r.textContent : '';
  });
};
const BUTTONISH = ['submit', 'button', 'reset', 'image'];
// What each share holds first cannot be crowded out by what comes later (each is capped):
// the control's visible words, then its own attributes, the rest after; its markup and where
// it leads before its content's markup.
const order = [act, ...named.filter((n) => n !== act)];
add(act.innerText);
for (const n of order) {
  add(n.getAttribute('aria-label'));
  add(n.getAttribute('title'));
  add(n.getAttribute('placeholder'));
  add(n.getAttribute('aria-placeholder'));
  add(n.getAttribute('alt'));
  if (n.localName === 'input' && BUTTONISH.includes(n.type)) add(n.value);
}
// The composed content: text as shown (text-transform), generated content, open shadow
// roots and slots, pictures' alt text, descendants' labels and tooltips, svg titles; block
// boxes spaced apart. Its markup words beside: ids, names, classes, handlers, data-*.
const SKIP = new Set(['script', 'style', 'noscript', 'template']);
const TRANSFORMS = { uppercase: (t) => t.toUpperCase(), lowercase: (t) => t.toLowerCase() };
const generated = (n, which) => {
  const c = getComputedStyle(n, which).content;
  if (!c || c === 'none' || c === 'normal') return '';
  let out = '';
  for (const m of c.matchAll(/"((?:[^"\\]|\\.)*)"/g)) out += m[1].replace(/\\(.)/g, '$1');
  return out;
};
const markup = [];
const markOf = (n) => {
  const words = [];
  for (const a of n.attributes) {
    const k = a.name;
    if (k === 'id' || k === 'name' || k === 'class' || k.startsWith('on') || k.startsWith('data-')) words.push(a.value);
  }
  const said = words.length ? within(words.join(' ').slice(0, 2000), 'markup') : '';
  if (said) markup.push(said);
};
const decode = (u) => { try { const x = new URL(u, doc.baseURI); return decodeURIComponent(x.pathname + ' ' + x.search); } catch (e) { return ''; } };
const goes = link ? decode(link.href) : submits ? decode(act.getAttribute('formaction') || (form && form.getAttribute('action')) || '') : '';
if (goes) markup.push(within(goes.slice(0, PART_MAX), 'markup'));
for (const n of order) markOf(n);
if (link && !order.includes(link)) markOf(link);
let text = '';
let seen = 0;
const walk = (n) => {
  if (text.length > PART_MAX) { cut = true; return; }
  if (n.nodeType === 3) {
    const st = n.parentElement ? getComputedStyle(n.parentElement) : null;
    const t = st && TRANSFORMS[st.textTransform];
    text += t ? t(n.data) : n.data;
    return;
  }
  if (n.nodeType !== 1 || SKIP.has(n.localName)) return;
  if (++seen > WALK_MAX) { cut = true; return; }
  // An svg's title is its name, though never drawn.
  if (n.localName === 'title' && n.namespaceURI === 'http://www.w3.org/2000/svg') { text += ' ' + n.textContent + ' '; return; }
  const st = getComputedStyle(n);
  if (st.display === 'none') return;
  if (n !== act) markOf(n);
  const sep = st.display === 'inline' || st.display === 'contents' ? '' : ' ';
  text += sep + generated(n, '::before');
  for (const k of ['aria-label', 'alt', 'title']) { const v = n.getAttribute(k); if (v && n !== act) text += ' ' + v + ' '; }
  const kids = n.localName === 'slot' ? n.assignedNodes({ flatten: true }) : n.shadowRoot ? n.shadowRoot.childNodes : n.childNodes;
  for (const k of kids) walk(k);
  text += generated(n, '::after') + sep;
};
walk(act);
add(text);
for (const n of order) {
  byIds(n, 'aria-labelledby').forEach(add);
  const labels = [...(n.labels || [])];
  if (labels.length > LABELS_MAX) cut = true;
  for (const l of labels.slice(0, LABELS_MAX)) { add(l.innerText); add(l.textContent); }
}
const fieldy = (tag === 'input' && !BUTTONISH.includes(act.type) && !['checkbox', 'radio', 'file', 'hidden', 'range', 'color'].includes(act.type)) ||
  tag === 'textarea' || tag === 'select' || act.isContentEditable || act.getAttribute('role') === 'textbox';
return {
  submits, field, cut, parts, markup,
  autocomplete: (act.getAttribute('autocomplete') || '').toLowerCase().slice(0, 60),
  href: link ? link.href : null,
  fieldInfo: fieldy ? fieldInfo(act) : null,
};
