// The page model walker: one pass over the DOM (open shadow roots and slots included) that
// emits, in document order, each node an agent may care about, with its role, accessible
// name, value, states and a registry id. Wrappers without meaning are not emitted (their
// children move up); hidden subtrees are skipped; visually hidden ones are flagged. What
// to show, fold and cut is decided in Rust; this only observes. `textRefs` (browser_find's
// walk): a text inside an element that is not emitted itself (a code editor's token span,
// a styled run) names that element, so a match in the text has something to act on.
// `viewport`: elements whose box meets the viewport say so (`vp`).
async (rootTarget, maxNodes, textRefs, viewport) => {
  let root = document.body || document.documentElement;
  if (rootTarget) {
    const found = await resolve(rootTarget, 0);
    if (found.error) return found;
    root = found.el;
  }
  const out = [];
  // Controls a web component's shadow root may hold for its host.
  const CONTROLS = 'button,input:not([type=hidden]),select,textarea,a[href],[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=combobox],[role=textbox],[role=searchbox],[role=slider],[role=spinbutton],[contenteditable=""],[contenteditable="true"]';
  const INTERACTIVE = 'a[href],button,input,select,textarea,summary,[tabindex]:not([tabindex="-1"]),[contenteditable=""],[contenteditable="true"],[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=combobox],[role=textbox],[role=slider]';
  const ACTIONABLE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'switch', 'combobox',
    'listbox', 'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'slider', 'spinbutton', 'treeitem', 'iframe']);
  // Roles whose name comes from their content: their text is not repeated as children.
  const FROM_CONTENT = new Set(['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem', 'columnheader', 'rowheader', 'cell', 'switch', 'tooltip', 'caption', 'legend', 'term']);
  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE']);
  const TAG_ROLES = {
    BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', OPTION: 'option', OPTGROUP: 'group',
    UL: 'list', OL: 'list', MENU: 'list', LI: 'listitem', DL: 'list', DT: 'term', DD: 'definition',
    TABLE: 'table', TR: 'row', TD: 'cell', NAV: 'navigation', MAIN: 'main', ASIDE: 'complementary',
    ARTICLE: 'article', DIALOG: 'dialog', FIELDSET: 'group', P: 'paragraph', BLOCKQUOTE: 'blockquote',
    HR: 'separator', PROGRESS: 'progressbar', METER: 'meter', IFRAME: 'iframe', FRAME: 'iframe', OUTPUT: 'status',
    SUMMARY: 'button', FIGURE: 'figure', CAPTION: 'caption', LEGEND: 'legend', PRE: 'code', CODE: 'code',
    H1: 'heading', H2: 'heading', H3: 'heading', H4: 'heading', H5: 'heading', H6: 'heading', IMG: 'img', SVG: 'img',
    DETAILS: 'group', LABEL: 'label', MARK: 'mark',
  };
  const INPUT_ROLES = { button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox',
    radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', hidden: null, file: 'button',
    color: 'button', date: 'textbox', 'datetime-local': 'textbox', month: 'textbox', time: 'textbox', week: 'textbox' };
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  // Most choices of one select the model lists (the renderer shows as many).
  const OPTIONS_MAX = 60;
  const vw = innerWidth, vh = innerHeight;

  const roleOf = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit) {
      const r = explicit.trim().split(/\s+/)[0];
      return r === 'none' ? 'presentation' : r;
    }
    const tag = el.tagName;
    if (tag === 'A' || tag === 'AREA') return el.hasAttribute('href') ? 'link' : null;
    if (tag === 'INPUT') {
      const t = (el.getAttribute('type') || 'text').toLowerCase();
      return t in INPUT_ROLES ? INPUT_ROLES[t] : 'textbox';
    }
    if (tag === 'SELECT') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    if (tag === 'TH') return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
    if (tag === 'IMG') return el.getAttribute('alt') === '' ? 'presentation' : 'img';
    if (tag === 'SVG' || tag === 'svg') return el.getAttribute('aria-label') || el.querySelector('title') ? 'img' : 'presentation';
    // A list item outside a list (a menu's row) has no role of its own, as in Chrome.
    if (tag === 'LI') {
      const p = el.parentElement, pr = p && p.getAttribute('role');
      return p && (p.tagName === 'UL' || p.tagName === 'OL' || p.tagName === 'MENU' || pr === 'list') && (!pr || pr === 'list' || pr === 'directory') ? 'listitem' : null;
    }
    if (tag === 'HEADER') return el.closest('article,aside,main,nav,section') ? null : 'banner';
    if (tag === 'FOOTER') return el.closest('article,aside,main,nav,section') ? null : 'contentinfo';
    if (tag === 'SECTION' || tag === 'FORM') return nameOf(el, tag === 'FORM' ? 'form' : 'region') ? (tag === 'FORM' ? 'form' : 'region') : null;
    // An editable document's body (contenteditable, or the whole document in designMode: an
    // editor's frame such as CKEditor's or TinyMCE's) is where a person types.
    if (el.isContentEditable && (el.getAttribute('contenteditable') !== null || el === document.body)) return 'textbox';
    return TAG_ROLES[tag] || null;
  };

  // ---- Accessible names: accname 1.2 as Chrome computes it (HTML-AAM for native elements).
  // One computed style per element and walk; names from content are remembered per element.
  const styles = new Map();
  const css = (el) => { let st = styles.get(el); if (!st) { st = getComputedStyle(el); styles.set(el, st); } return st; };
  const contents = new Map();
  // Hidden from names: display:none, aria-hidden; visibility:hidden hides an element's own
  // text (a visible child still counts), as in Chrome.
  const gone = (el) => el.getAttribute('aria-hidden') === 'true' || css(el).display === 'none';
  const visible = (el) => { const v = css(el).visibility; return v !== 'hidden' && v !== 'collapse'; };
  // Parts of a name are run together only across plain inline elements; blocks, inline
  // blocks and replaced elements (images, controls) are spaced apart, as Chrome does.
  const REPLACED = new Set(['IMG', 'INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'SVG', 'svg', 'IFRAME', 'VIDEO', 'CANVAS', 'OBJECT', 'EMBED']);
  const inline = (el) => { const dsp = css(el).display; return (dsp === 'inline' || dsp === 'contents') && !REPLACED.has(el.tagName); };
  const TEXT_TRANSFORMS = {
    uppercase: (t) => t.toUpperCase(),
    lowercase: (t) => t.toLowerCase(),
    // Words start after spaces, hyphens and opening punctuation, not after an apostrophe.
    capitalize: (t) => t.replace(/(^|[\s\-\u2010-\u2015/([{"\u201c\u00ab])(\p{L})/gu, (m, a, b) => a + b.toUpperCase()),
  };
  // Asking every element for its pseudo-elements' style is a third of a walk: only elements
  // a rule may give generated content are asked (the base selectors of the `::before` and
  // `::after` rules with a `content`); null: ask every element (a sheet not readable here).
  const pseudoSelector = (() => {
    const bases = [];
    const scan = (rules) => {
      for (const r of rules) {
        if (r.styleSheet) { scan(r.styleSheet.cssRules); continue; }
        if (r.cssRules) scan(r.cssRules);
        const sel = r.selectorText;
        if (!sel || !/:(before|after)/i.test(sel) || !r.style || !r.style.content) continue;
        for (const part of sel.split(',')) {
          if (/:(before|after)/i.test(part)) bases.push(part.replace(/::?(before|after)/gi, '').trim() || '*');
        }
      }
    };
    try {
      for (const sheet of document.styleSheets) scan(sheet.cssRules);
      for (const sheet of document.adoptedStyleSheets || []) scan(sheet.cssRules);
      if (!bases.length) return '';
      const sel = bases.join(',');
      document.documentElement.matches(sel);
      return sel;
    } catch (e) { return null; }
  })();
  // Shadow trees bring sheets of their own: their elements are always asked.
  const mayGenerate = (el) => pseudoSelector === null || (pseudoSelector !== '' && el.matches(pseudoSelector)) || el.getRootNode() !== document;
  // CSS generated content (`::before`/`::after`): its strings; counters, attr() and images are
  // left out.
  const generated = (el, which) => {
    const c = getComputedStyle(el, which).content;
    if (!c || c === 'none' || c === 'normal') return '';
    let out = '';
    for (const m of c.matchAll(/"((?:[^"\\]|\\.)*)"/g)) out += m[1].replace(/\\(.)/g, '$1');
    return out;
  };
  // The value an embedded control gives a name it is part of (null: not such a control).
  const TEXTLIKE = new Set(['text', 'search', 'email', 'tel', 'url', 'password', 'number', '']);
  function controlValue(el) {
    const tag = el.tagName;
    if (tag === 'INPUT') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (TEXTLIKE.has(t) || t === 'range') return el.value;
      return null;
    }
    if (tag === 'TEXTAREA') return el.value;
    if (tag === 'SELECT') return [...el.selectedOptions].map((o) => o.label).join(' ');
    const role = el.getAttribute('role');
    if (role === 'textbox' || role === 'searchbox') return el.textContent;
    if (role === 'slider' || role === 'spinbutton') return el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow') || '';
    return null;
  }
  function labelledBy(el) {
    const by = el.getAttribute('aria-labelledby');
    if (!by) return '';
    const root = el.getRootNode();
    const parts = [];
    for (const id of by.split(/\s+/)) {
      const r = id && (root.getElementById ? root.getElementById(id) : document.getElementById(id));
      // A referenced node counts even when hidden (then its hidden content counts too).
      if (r) parts.push(textAlt(r, { labelledby: true, hiddenOk: gone(r) || !visible(r), skip: null }, 0));
    }
    return clean(parts.join(' '));
  }
  // A tree item's name is its own row: the items nested in it (their group) are not part of
  // it, as in Chrome.
  const NESTED_ITEMS = new Set(['group', 'tree', 'treeitem']);
  // One node of a name traversal (accname step 2, in recursion). `mode`: inside an
  // aria-labelledby traversal, hidden nodes allowed (a hidden target), the control being
  // named (not part of its own label), a tree item's row (`nested`: its items left out).
  const NATIVE_ALT = new Set(['INPUT', 'TEXTAREA', 'SELECT', 'IMG', 'AREA', 'svg', 'SVG']);
  function textAlt(el, mode, depth) {
    if (depth > 40) return '';
    if (!mode.hiddenOk && gone(el)) return '';
    if (SKIP_TAGS.has(el.tagName) || el === mode.skip) return '';
    if (mode.nested && NESTED_ITEMS.has(el.getAttribute('role'))) return '';
    // Most nodes of a name (a cell's span, a link's b) carry no attribute: their content is
    // all they give.
    if (el.attributes.length === 0 && !NATIVE_ALT.has(el.tagName)) return fromContent(el, mode, depth);
    if (!mode.labelledby && el.hasAttribute('aria-labelledby')) {
      const t = labelledBy(el);
      if (t) return t;
    }
    // Embedded controls give their value, even over their aria-label.
    if (depth > 0) { const v = controlValue(el); if (v !== null) return v; }
    const aria = clean(el.getAttribute('aria-label'));
    if (aria) return aria;
    const tag = el.tagName;
    if (tag === 'IMG' || tag === 'AREA') return el.getAttribute('alt') ?? el.getAttribute('title') ?? '';
    if (tag === 'INPUT') {
      const t = el.type;
      if (t === 'button' || t === 'submit' || t === 'reset') return el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      if (t === 'image') return el.alt || 'Submit';
      return el.getAttribute('title') || '';
    }
    if (tag === 'svg' || tag === 'SVG') { const ti = el.querySelector('title'); return ti ? ti.textContent : (el.getAttribute('title') || ''); }
    const t = fromContent(el, mode, depth);
    if (clean(t)) return t;
    // A tooltip names the node itself, or an image inside; Chrome reads no other
    // descendant's title into a name.
    return depth === 0 || el.getAttribute('role') === 'img' ? (el.getAttribute('title') || '') : '';
  }
  // The text of an element's content (children and generated content), block-level parts
  // spaced apart.
  function fromContent(el, mode, depth) {
    const plain = !mode.labelledby && !mode.hiddenOk && !mode.skip && !mode.nested;
    if (plain && contents.has(el)) return contents.get(el);
    const pseudo = mayGenerate(el);
    let s = pseudo ? generated(el, '::before') : '';
    const own = mode.hiddenOk || visible(el);
    const transform = TEXT_TRANSFORMS[css(el).textTransform];
    const kids = el.tagName === 'SLOT' ? el.assignedNodes({ flatten: true }) : (el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes);
    for (const n of kids) {
      if (n.nodeType === 3) { if (own) s += transform ? transform(n.data) : n.data; }
      else if (n.nodeType === 1) {
        if (n.tagName === 'BR') { s += ' '; continue; }
        const part = textAlt(n, mode, depth + 1);
        if (part) s += inline(n) ? part : ' ' + part + ' ';
      }
    }
    if (pseudo) s += generated(el, '::after');
    if (plain) contents.set(el, s);
    return s;
  }
  const content = (el) => clean(fromContent(el, { labelledby: false, hiddenOk: false, skip: null }, 0));
  // A label rendered nowhere (display:none on it or above) gives no text, as in Chrome.
  const rendered = (l) => (l.checkVisibility ? l.checkVisibility() : l.getClientRects().length > 0);

  function nameOf(el, role) {
    const by = labelledBy(el);
    if (by) return by;
    const aria = clean(el.getAttribute('aria-label'));
    if (aria) return aria;
    const tag = el.tagName;
    const title = () => clean(el.getAttribute('title'));
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'METER' || tag === 'PROGRESS' || tag === 'OUTPUT') {
      const t = el.type;
      if (tag === 'INPUT' && (t === 'button' || t === 'submit' || t === 'reset')) return clean(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : title());
      if (tag === 'INPUT' && t === 'image') return clean(el.alt) || clean(el.value) || title() || 'Submit';
      // A control with labels is named by them alone, even when they say nothing (Chrome
      // then falls back to neither title nor placeholder).
      if (el.labels && el.labels.length) {
        return [...el.labels].filter(rendered).map((l) => clean(fromContent(l, { labelledby: false, hiddenOk: false, skip: el }, 0))).filter(Boolean).join(' ');
      }
      return title() || clean(el.getAttribute('placeholder')) || clean(el.getAttribute('aria-placeholder'));
    }
    if (tag === 'IMG' || tag === 'AREA') return clean(el.getAttribute('alt')) || title();
    if (tag === 'IFRAME' || tag === 'FRAME') return title();
    if (tag === 'FIELDSET') { const l = el.querySelector(':scope > legend'); if (l) { const t = content(l); if (t) return t; } }
    if (tag === 'TABLE') { const c = el.querySelector(':scope > caption'); if (c) { const t = content(c); if (t) return t; } }
    if (tag === 'FIGURE') { const c = el.querySelector(':scope > figcaption'); if (c) { const t = content(c); if (t) return t; } }
    if (tag === 'svg' || tag === 'SVG') { const t = el.querySelector('title'); if (t) return clean(t.textContent); }
    if (role === 'treeitem') { const t = clean(fromContent(el, { labelledby: false, hiddenOk: false, skip: null, nested: true }, 0)); if (t) return t; }
    else if (role && FROM_CONTENT.has(role)) { const t = content(el); if (t) return t; }
    // An editor (a contenteditable or ARIA text box) is named by its field, never by the
    // text it holds: that is its value.
    if (role === 'textbox' || role === 'searchbox') { const t = fieldLabel(el); if (t) return t; }
    return title() || (role === 'textbox' || role === 'searchbox' ? clean(el.getAttribute('aria-placeholder')) : '');
  }
  // The label of the field an editor belongs to: a `<label for>` of the hidden input it
  // writes into (a CMS's rich-text field), or the name of the section around it that holds
  // no other field. The nearest field wins; a section holding other fields names none.
  const FIELDS = 'input:not([type=hidden]),select,textarea,[contenteditable=""],[contenteditable="true"],[role=textbox],[role=searchbox],[role=combobox]';
  function fieldLabel(el) {
    let n = el.parentElement;
    for (let i = 0; n && i < 8 && n !== document.body; i++, n = n.parentElement) {
      if ([...n.querySelectorAll(FIELDS)].some((f) => !el.contains(f) && !f.contains(el) && f.getClientRects().length)) return '';
      for (const h of n.querySelectorAll('input[type=hidden][id],textarea[id]')) {
        if (h.tagName === 'TEXTAREA' && css(h).display !== 'none') continue;
        const labels = [...h.getRootNode().querySelectorAll('label[for="' + CSS.escape(h.id) + '"]')].map((l) => clean(fromContent(l, { labelledby: false, hiddenOk: true, skip: null }, 0))).filter(Boolean);
        if (labels.length) return labels.join(' ');
      }
      const group = n.getAttribute('role') || (n.tagName === 'FIELDSET' ? 'group' : n.tagName === 'SECTION' ? 'region' : '');
      if (group === 'group' || group === 'region') { const t = nameOf(n, group); if (t) return t; }
    }
    return '';
  }

  // Hidden for everyone: not emitted. Visually hidden but exposed: flagged.
  const hiddenForAll = (el, style) => el.hidden || el.getAttribute('aria-hidden') === 'true' ||
    style.display === 'none' || style.visibility === 'hidden' || style.visibility === 'collapse' || style.contentVisibility === 'hidden';
  const visuallyHidden = (el, style, rect) => {
    if (style.opacity === '0') return 'hidden';
    if ((rect.width <= 1 || rect.height <= 1) && (style.overflow === 'hidden' || style.clip !== 'auto' || style.clipPath !== 'none')) return 'hidden';
    if (style.clip === 'rect(0px, 0px, 0px, 0px)' || style.clipPath === 'inset(50%)') return 'hidden';
    if (rect.right + scrollX < 0 || rect.bottom + scrollY < 0) return 'offscreen';
    return null;
  };

  const emit = (d, fields) => { out.push(Object.assign({ d }, fields)); };
  // The last text node emitted, to tell text that the page draws touching it (code split
  // into spans by an editor: `print` `(` `6`) from text it separates (a space, a block).
  let lastText = null;
  const runs = (n) => { const r = document.createRange(); r.selectNodeContents(n); return r.getClientRects(); };
  // Whether a box that starts a line of its own (a block, a list item, a flex or grid box,
  // a table part) lies between text `a` and the later text `b`: then they cannot touch, and
  // no layout is asked (two ranges' rectangles per pair were a third of a large walk).
  // Elements on the way were walked already: their styles are known.
  const LINE_BREAKING = new Set(['block', 'list-item', 'flex', 'grid', 'table', 'table-row', 'table-cell',
    'table-row-group', 'table-header-group', 'table-footer-group', 'table-caption', 'flow-root']);
  // A flex or grid item is made block-level by its container but sits on the same line as
  // its siblings: it breaks no line.
  const breaks = (el) => LINE_BREAKING.has(css(el).display) && !(el.parentElement && /flex|grid/.test(css(el.parentElement).display));
  const apart = (a, b) => {
    const up = new Set();
    for (let e = a.parentElement; e; e = e.parentElement) up.add(e);
    let common = null;
    for (let e = b.parentElement; e; e = e.parentElement) {
      if (up.has(e)) { common = e; break; }
      if (breaks(e)) return true;
    }
    if (!common) return false;
    for (let e = a.parentElement; e && e !== common; e = e.parentElement) if (breaks(e)) return true;
    return false;
  };
  const touching = (a, b) => {
    if (apart(a, b)) return false;
    const A = runs(a), B = runs(b);
    const last = A[A.length - 1], first = B[0];
    return !!(last && first && Math.abs(first.left - last.right) < 1 && first.top < last.bottom && last.top < first.bottom);
  };
  // Elements emitted by this walk (only kept for `textRefs`).
  const emitted = new Set();
  let truncated = false;

  // `pointer`: the parent shows a pointer cursor (its children inherit it: only the outermost
  // pointer element takes a ref); `acting`: inside an element an agent acts on already.
  function visitChildren(el, d, hiddenFlag, pointer, acting) {
    const kids = el.tagName === 'SLOT' ? el.assignedNodes({ flatten: true }) : (el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes);
    let kidsList = kids;
    if (el.tagName === 'SLOT' && kids.length === 0) kidsList = el.childNodes;
    // A closed details shows its summary only: the rest is not rendered.
    if (el.tagName === 'DETAILS' && !el.open) { const sum = [...el.children].find((c) => c.tagName === 'SUMMARY'); kidsList = sum ? [sum] : []; }
    for (const n of kidsList) visit(n, d, hiddenFlag, pointer, acting);
  }

  // Roles a click on which does nothing of its own: an element of one of these (or of none)
  // that takes a click anyway (a listener, a pointer cursor, a tab stop) gets a ref.
  const PLAIN = new Set(['label', 'listitem', 'paragraph', 'img', 'cell', 'row', 'definition', 'term', 'code', 'mark']);
  // What keeps an element's text below it although it became its name: controls, and items
  // that act on their own (a tree item's nested items).
  const NESTED = INTERACTIVE + ',[role=treeitem],[role=menuitemcheckbox],[role=menuitemradio],[role=searchbox],[role=spinbutton]';
  // Elements that take a click of their own inside a clickable candidate.
  const HOLDERS = CONTROLS + ',[tabindex]:not([tabindex="-1"]),[onclick],[aria-haspopup]';
  // Whether `el` shows words outside the controls and clickables inside it.
  const ownText = (el) => {
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let t = w.nextNode(), i = 0; t && i < 500; t = w.nextNode(), i++) {
      if (!t.data.trim()) continue;
      const holder = t.parentElement && t.parentElement.closest(HOLDERS);
      if (!holder || holder === el || !el.contains(holder)) return true;
    }
    return false;
  };
  // Elements whose content is too rich to be one clickable line.
  const RICH = INTERACTIVE + ',h1,h2,h3,h4,h5,h6,ul,ol,dl,table,select,textarea,input,iframe';
  // Longest name read from a clickable element's content; a longer text stays its children.
  const CLICKABLE_NAME_MAX = 150;

  function visit(node, d, hiddenFlag, pointer, acting) {
    if (out.length >= maxNodes) { truncated = true; return; }
    if (node.nodeType === 3) {
      const t = clean(node.data);
      if (!t) {
        if (node.data) lastText = null;
        return;
      }
      // Glued to the text before when nothing separates them, in the markup or on screen.
      const glued = !!lastText && !/^\s/.test(node.data) && !/\s$/.test(lastText.data) && touching(lastText, node);
      lastText = node;
      const holder = textRefs ? node.parentElement : null;
      const fields = holder && !emitted.has(holder) ? { t, e: idOf(holder) } : { t };
      if (glued) fields.g = 1;
      emit(d, fields);
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node;
    if (SKIP_TAGS.has(el.tagName)) return;
    // Legends and captions name their fieldset or table; they are not said twice.
    if (el.tagName === 'LEGEND' || el.tagName === 'CAPTION') return;
    const style = css(el);
    if (hiddenForAll(el, style)) return;
    // A label's words became its control's name: only the controls inside it remain.
    if (el.tagName === 'LABEL' && el.control && !el.getAttribute('role')) {
      // The outermost ones: a focusable wrapper (Quasar's field) is walked with what it holds.
      const inner = el.querySelectorAll('input,select,textarea,button,a[href],[tabindex]');
      const outer = [...inner].filter((c) => ![...inner].some((o) => o !== c && o.contains(c)));
      for (const c of outer) visit(c, d, hiddenFlag, pointer, acting);
      return;
    }
    let role = roleOf(el);
    const rect = el.getBoundingClientRect();
    let flag = hiddenFlag ? null : visuallyHidden(el, style, rect);
    if (role === 'presentation' || role === 'generic') role = null;
    const isPointer = style.cursor === 'pointer';
    // Text that takes a click or a double-click (a framework's div button, a todo's label,
    // a pointer card) gets a ref. The page's own listeners are out of this world's sight;
    // its handler attributes, pointer cursor, tab stops and labels are not.
    let clickable = false;
    if (!acting && (!role || PLAIN.has(role))) {
      const tabindex = el.attributes.length ? el.getAttribute('tabindex') : null;
      clickable = (isPointer && !pointer) || (el.tagName === 'LABEL' && !el.control) || (tabindex !== null && Number(tabindex) >= 0) ||
        (el.attributes.length > 0 && (el.hasAttribute('onclick') || el.hasAttribute('ondblclick')));
      // A web component whose real control sits in its shadow root (a toolbar's button):
      // a click on the host reaches that control, which takes the ref.
      if (clickable && el.shadowRoot && el.shadowRoot.querySelector(CONTROLS)) clickable = false;
      // A container whose every word sits in controls or other clickables inside it (a
      // menu's focusable frame): a click on it reaches one of those, which take the refs.
      if (clickable && el.querySelector(HOLDERS) && !ownText(el)) clickable = false;
      if (clickable && !role) role = 'generic';
    }
    // An element of no meaning: its children take its place (a visually hidden one is kept
    // as a group, to flag them).
    const unwrap = () => {
      if (flag) { if (textRefs) emitted.add(el); emit(d, { r: 'group', f: [flag], i: idOf(el) }); visitChildren(el, d + 1, true, isPointer, acting); }
      else visitChildren(el, d, hiddenFlag, isPointer, acting);
    };
    if (!role) return unwrap();
    // The web component whose shadow root holds this control, when the host has no role of
    // its own: its states (disabled, pressed, expanded, checked) are the control's too.
    const rootNode = el.getRootNode();
    const host = rootNode !== document && rootNode.host && ACTIONABLE.has(role) && !roleOf(rootNode.host) ? rootNode.host : null;
    const n = { r: role };
    let name = '';
    // Whether the name is the element's own text (then its text is not repeated below it).
    let nameIsText = false;
    // Chrome names a generic element only by aria-labelledby, aria-label, or the title of a
    // focusable one (a breadcrumb's icon); another's title is its tooltip.
    const focusable = el.hasAttribute('tabindex') && el.tabIndex >= 0;
    const attrName = role === 'generic' ? labelledBy(el) || clean(el.getAttribute('aria-label')) || (focusable ? clean(el.getAttribute('title')) : '') : '';
    if (attrName) name = attrName;
    else if (clickable && (role === 'generic' || role === 'label')) {
      // Its words are its name, one line, when short.
      if (!el.querySelector(RICH)) { name = content(el); nameIsText = true; }
      if (name.length > CLICKABLE_NAME_MAX) name = '';
      // Nothing names it and it shows no words (a menu's separator row, a decorative icon
      // under a pointer): no ref, unless the page put a handler on it.
      if (!name && role === 'generic' && !el.hasAttribute('onclick') && !el.hasAttribute('ondblclick') && !content(el)) return unwrap();
    } else if (role !== 'paragraph' && role !== 'listitem' && role !== 'generic') {
      name = nameOf(el, role);
      nameIsText = FROM_CONTENT.has(role);
    }
    if (name) n.n = name.length > 400 ? name.slice(0, 400) + '…' : name;
    if (role === 'generic' && !attrName && el.hasAttribute('title')) { const t = clean(el.getAttribute('title')); if (t && t !== name) n.tt = t.slice(0, 200); }
    else if (!name && ACTIONABLE.has(role) && FROM_CONTENT.has(role)) {
      // Chrome names a link or button whose only content is an icon with a tooltip nothing;
      // the tooltip a person sees is told beside it (not as its name).
      const tip = el.querySelector('[title]') || (host && host.hasAttribute('title') ? host : null);
      if (tip && !gone(tip)) { const t = clean(tip.getAttribute('title')); if (t) n.tt = t.slice(0, 200); }
    }
    n.i = idOf(el);
    // `viewport` (a snapshot of what is in view): whether the box meets the viewport.
    if (viewport && rect.width > 0 && rect.height > 0 && rect.bottom > 0 && rect.right > 0 && rect.top < vh && rect.left < vw) n.vp = 1;
    const f = [];
    if (flag) f.push(flag);
    if (clickable) f.push('clickable');
    const tag = el.tagName;
    if (role === 'heading') n.l = Number(el.getAttribute('aria-level') || tag[1]) || 2;
    if (tag === 'A' && el.hasAttribute('href')) n.u = el.getAttribute('href');
    if (tag === 'INPUT' || tag === 'TEXTAREA') {
      if (el.type === 'checkbox' || el.type === 'radio') { if (el.checked) f.push('checked'); if (el.indeterminate) f.push('mixed'); }
      else if (el.type === 'password') { if (el.value) n.v = '••••'; f.push('password'); }
      else if (!['button', 'submit', 'reset', 'image', 'file'].includes(el.type)) { if (el.value) n.v = el.value.length > 200 ? el.value.slice(0, 200) + '…' : el.value; }
      if (el.required) f.push('required');
      if (el.readOnly) f.push('readonly');
      if (!n.v && el.placeholder && n.n !== clean(el.placeholder)) n.p = clean(el.placeholder);
    }
    if (tag === 'SELECT') {
      // The choices, so an agent can pick one without another call (capped): each a label
      // of its own (a label may hold any separator), disabled and selected ones marked.
      const opts = el.options;
      const many = el.multiple;
      if (!many && el.selectedOptions.length) n.v = clean(el.selectedOptions[0].label);
      if (el.required) f.push('required');
      n.o = [];
      for (let k = 0; k < opts.length && k < OPTIONS_MAX; k++) {
        const o = { t: clean(opts[k].label) };
        if (opts[k].disabled) o.d = true;
        if (many && opts[k].selected) o.s = true;
        n.o.push(o);
      }
      if (opts.length > OPTIONS_MAX) n.on = opts.length;
    }
    // An editor's text is its value: one short line is said on its line, a longer text
    // stays its children (lines a search finds).
    let editorValue = false;
    if ((role === 'textbox' || role === 'searchbox') && tag !== 'INPUT' && tag !== 'TEXTAREA' && !el.querySelector(RICH)) {
      // As drawn (a code line keeps its spaces).
      const t = (el.innerText || '').trim();
      if (t && t.length <= 200 && !t.includes('\n')) { n.v = t; editorValue = true; }
    }
    // A slider, spin button or gauge drawn with ARIA says its value as the native ones do.
    if (!n.v && tag !== 'INPUT' && (role === 'slider' || role === 'spinbutton' || role === 'progressbar' || role === 'meter')) {
      const v = clean(el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow'));
      if (v) n.v = v.slice(0, 200);
    }
    if (tag === 'OPTION' && el.selected) f.push('selected');
    // A state the control does not say itself is read from its component's host.
    const aria = (a) => el.getAttribute(a) ?? (host ? host.getAttribute(a) : null);
    if (el.disabled || aria('aria-disabled') === 'true' || (host && host.hasAttribute('disabled'))) f.push('disabled');
    const ac = aria('aria-checked');
    if (ac === 'true') f.push('checked'); else if (ac === 'mixed') f.push('mixed');
    const ex = aria('aria-expanded');
    if (ex === 'true') f.push('expanded'); else if (ex === 'false') f.push('collapsed');
    if (aria('aria-selected') === 'true') f.push('selected');
    if (aria('aria-pressed') === 'true') f.push('pressed');
    if (el.getAttribute('aria-required') === 'true') f.push('required');
    if (tag === 'DETAILS') f.push(el.open ? 'expanded' : 'collapsed');
    if (tag === 'DIALOG' && el.open) f.push(el.matches(':modal') ? 'modal' : 'open');
    // A document's body is its active element whenever nothing else is: it is focused only
    // when its frame has focus.
    if ((rootNode.activeElement === el && (el !== document.body || document.hasFocus())) || (el.shadowRoot && el.shadowRoot.activeElement)) f.push('focused');
    // Native and ARIA states may say the same (a radio with aria-checked): each said once.
    if (f.length) n.f = [...new Set(f)];
    if (role === 'iframe') n.u = el.getAttribute('src') || '';
    if (textRefs) emitted.add(el);
    emit(d, n);
    if (role === 'iframe' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'INPUT' || role === 'img') return;
    if (editorValue) return;
    // Content that became this node's name is not repeated, unless controls are inside.
    if ((FROM_CONTENT.has(role) || (clickable && nameIsText)) && name && !el.querySelector(NESTED)) return;
    // A large clickable wrapper (a pointer card list) does not swallow the clickables in it.
    visitChildren(el, d + 1, hiddenFlag || !!flag, isPointer, acting || ACTIONABLE.has(role) || (clickable && role === 'label'));
  }

  // A body is a wrapper, but not an editable one (an editor's frame): that is a text box.
  const editableBody = root === document.body && root.isContentEditable;
  if (root.nodeType === 1 && (editableBody || (root !== document.body && root !== document.documentElement))) visit(root, 0, false, false, false);
  else visitChildren(root, 0, false, false, false);
  return { nodes: out, truncated, title: document.title, url: location.href, vw, vh };
}
