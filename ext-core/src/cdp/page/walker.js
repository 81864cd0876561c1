// The page model walker: one pass over the DOM (open shadow roots and slots included) that
// emits, in document order, each node an agent may care about, with its role, accessible
// name, value, states and a registry id. Wrappers without meaning are not emitted (their
// children move up); hidden subtrees are skipped; visually hidden ones are flagged. What
// to show, fold and cut is decided in Rust; this only observes.
async (rootTarget, maxNodes) => {
  let root = document.body || document.documentElement;
  if (rootTarget) {
    const found = await resolve(rootTarget, 0);
    if (found.error) return found;
    root = found.el;
  }
  const out = [];
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
    if (tag === 'HEADER') return el.closest('article,aside,main,nav,section') ? null : 'banner';
    if (tag === 'FOOTER') return el.closest('article,aside,main,nav,section') ? null : 'contentinfo';
    if (tag === 'SECTION' || tag === 'FORM') return nameOf(el, tag === 'FORM' ? 'form' : 'region') ? (tag === 'FORM' ? 'form' : 'region') : null;
    if (el.isContentEditable && (el.getAttribute('contenteditable') !== null)) return 'textbox';
    return TAG_ROLES[tag] || null;
  };

  // Text of a subtree for names; a label's own controls are not part of its text.
  const CONTROLS = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON']);
  const textOf = (el, depth = 0, skipControls = false) => {
    if (depth > 12) return '';
    let s = '';
    for (const n of (el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes)) {
      if (n.nodeType === 3) s += n.data;
      else if (n.nodeType === 1) {
        if (SKIP_TAGS.has(n.tagName) || n.getAttribute('aria-hidden') === 'true' || n.hidden) continue;
        if (skipControls && CONTROLS.has(n.tagName)) continue;
        if (n.tagName === 'IMG') s += ' ' + (n.getAttribute('alt') || '') + ' ';
        else if (n.tagName === 'INPUT') s += ' ' + (n.value || '') + ' ';
        else s += ' ' + textOf(n, depth + 1, skipControls) + ' ';
      }
    }
    return s;
  };

  function nameOf(el, role) {
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = clean(by.split(/\s+/).map((id) => { const r = document.getElementById(id); return r ? textOf(r) : ''; }).join(' '));
      if (t) return t;
    }
    const aria = clean(el.getAttribute('aria-label'));
    if (aria) return aria;
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'METER' || tag === 'PROGRESS') {
      const t = el.type;
      if (tag === 'INPUT' && (t === 'button' || t === 'submit' || t === 'reset')) return clean(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      if (tag === 'INPUT' && t === 'image') return clean(el.alt) || 'Submit';
      const labels = el.labels ? [...el.labels].map((l) => clean(textOf(l, 0, true))).filter(Boolean).join(' ') : '';
      if (labels) return labels;
      return clean(el.getAttribute('title')) || clean(el.getAttribute('placeholder'));
    }
    if (tag === 'IMG' || tag === 'AREA') return clean(el.getAttribute('alt')) || clean(el.getAttribute('title'));
    if (tag === 'IFRAME' || tag === 'FRAME') return clean(el.getAttribute('title')) || clean(el.getAttribute('name'));
    if (tag === 'FIELDSET') { const l = el.querySelector(':scope > legend'); if (l) return clean(textOf(l)); }
    if (tag === 'TABLE') { const c = el.querySelector(':scope > caption'); if (c) return clean(textOf(c)); }
    if (tag === 'FIGURE') { const c = el.querySelector(':scope > figcaption'); if (c) return clean(textOf(c)); }
    if (role && FROM_CONTENT.has(role)) { const t = clean(textOf(el)); if (t) return t; }
    if (role === 'svg' || tag.toLowerCase() === 'svg') { const t = el.querySelector('title'); if (t) return clean(t.textContent); }
    return clean(el.getAttribute('title'));
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
  let truncated = false;

  function visitChildren(el, d, hiddenFlag) {
    const kids = el.tagName === 'SLOT' ? el.assignedNodes({ flatten: true }) : (el.shadowRoot ? el.shadowRoot.childNodes : el.childNodes);
    let kidsList = kids;
    if (el.tagName === 'SLOT' && kids.length === 0) kidsList = el.childNodes;
    for (const n of kidsList) visit(n, d, hiddenFlag);
  }

  function visit(node, d, hiddenFlag) {
    if (out.length >= maxNodes) { truncated = true; return; }
    if (node.nodeType === 3) {
      const t = clean(node.data);
      if (t) emit(d, { t });
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node;
    if (SKIP_TAGS.has(el.tagName)) return;
    // Legends and captions name their fieldset or table; they are not said twice.
    if (el.tagName === 'LEGEND' || el.tagName === 'CAPTION') return;
    // A label's words became its control's name: only the controls inside it remain.
    if (el.tagName === 'LABEL' && el.control && !el.getAttribute('role')) {
      for (const c of el.querySelectorAll('input,select,textarea,button,a[href],[tabindex]')) visit(c, d, hiddenFlag);
      return;
    }
    const style = getComputedStyle(el);
    if (hiddenForAll(el, style)) return;
    let role = roleOf(el);
    const rect = el.getBoundingClientRect();
    let flag = hiddenFlag ? null : visuallyHidden(el, style, rect);
    if (role === 'presentation' || role === 'generic') role = null;
    // A plain element a user can still click (a framework's div button) gets a ref too.
    let clickable = false;
    if (!role && (el.onclick || el.hasAttribute('onclick') || (style.cursor === 'pointer' && !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer')))) {
      if (!el.closest('a[href],button,[role=button],[role=link],label')) { role = 'generic'; clickable = true; }
    }
    if (!role) {
      if (flag) { emit(d, { r: 'group', f: [flag], i: idOf(el) }); visitChildren(el, d + 1, true); }
      else visitChildren(el, d, hiddenFlag);
      return;
    }
    const n = { r: role };
    const name = role === 'paragraph' || role === 'listitem' || role === 'generic' ? '' : nameOf(el, role);
    if (name) n.n = name.length > 400 ? name.slice(0, 400) + '…' : name;
    n.i = idOf(el);
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
      const sel = [...el.selectedOptions].map((o) => clean(o.label));
      if (sel.length) n.v = sel.join(', ');
      if (el.required) f.push('required');
      // The choices, so an agent can pick one without another call (capped).
      const opts = [...el.options];
      n.o = opts.slice(0, 30).map((o) => clean(o.label) + (o.disabled ? ' (disabled)' : ''));
      if (opts.length > 30) n.o.push('… ' + (opts.length - 30) + ' more');
    }
    if (tag === 'OPTION' && el.selected) f.push('selected');
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') f.push('disabled');
    const ac = el.getAttribute('aria-checked');
    if (ac === 'true') f.push('checked'); else if (ac === 'mixed') f.push('mixed');
    const ex = el.getAttribute('aria-expanded');
    if (ex === 'true') f.push('expanded'); else if (ex === 'false') f.push('collapsed');
    if (el.getAttribute('aria-selected') === 'true') f.push('selected');
    if (el.getAttribute('aria-pressed') === 'true') f.push('pressed');
    if (el.getAttribute('aria-required') === 'true') f.push('required');
    if (tag === 'DETAILS') f.push(el.open ? 'expanded' : 'collapsed');
    if (tag === 'DIALOG' && el.open) f.push(el.matches(':modal') ? 'modal' : 'open');
    if (document.activeElement === el || (el.shadowRoot && el.shadowRoot.activeElement)) f.push('focused');
    if (f.length) n.f = f;
    if (role === 'iframe') n.u = el.getAttribute('src') || '';
    emit(d, n);
    if (role === 'iframe' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'INPUT' || role === 'img') return;
    // Content that became this node's name is not repeated, unless controls are inside.
    if (FROM_CONTENT.has(role) && name && !el.querySelector(INTERACTIVE)) return;
    visitChildren(el, d + 1, hiddenFlag || !!flag);
  }

  if (root.nodeType === 1 && root !== document.body && root !== document.documentElement) visit(root, 0, false);
  else visitChildren(root, 0, false);
  return { nodes: out, truncated, title: document.title, url: location.href, vw, vh };
}
