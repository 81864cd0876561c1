// Kapture's recorder capture, in its own isolated world: it only forwards what a person
// does (trusted events) with a description of the element; Rust decides what it means.
(() => {
  if (globalThis.__kaptureRecorder) return;
  globalThis.__kaptureRecorder = true;
  const send = (ev) => {
    // What the page showed after the last action goes first: it belongs to that action.
    if (ev.kind !== 'hint') hintNow();
    try { globalThis.__kaptureRecord(JSON.stringify(ev)); } catch (_) { /* recording ended */ }
    if (globalThis.__kaptureWidget) globalThis.__kaptureWidget.captured(ev);
  };
  // What a person does in Kapture's own widget is not part of the flow.
  const ours = (e) => !!globalThis.__kaptureWidgetHost && e.composedPath().includes(globalThis.__kaptureWidgetHost);
  const clip = (s, n) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  const cssPath = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && parts.length < 8; e = e.parentElement) {
      if (e.id && /^[A-Za-z][\w-]*$/.test(e.id)) { parts.unshift('#' + e.id); break; }
      let part = e.localName;
      const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.localName === e.localName) : [];
      if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(e) + 1) + ')';
      parts.unshift(part);
    }
    return parts.join(' > ');
  };
  const xpath = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.localName === e.localName) : [e];
      parts.unshift(e.localName + '[' + (same.indexOf(e) + 1) + ']');
    }
    return '/' + parts.join('/');
  };
  const implicitRole = (el) => {
    const t = el.localName;
    if (t === 'button') return 'button';
    if (t === 'a' && el.hasAttribute('href')) return 'link';
    if (t === 'select') return 'combobox';
    if (t === 'textarea') return 'textbox';
    if (t === 'input') {
      const ty = (el.type || 'text').toLowerCase();
      if (ty === 'checkbox' || ty === 'radio') return ty;
      if (['button', 'submit', 'reset'].includes(ty)) return 'button';
      return 'textbox';
    }
    return '';
  };
  const labelOf = (el) => (el.labels && el.labels[0] ? clip(el.labels[0].innerText, 80) : '');
  const describe = (el) => {
    const form = el.form || (el.closest && el.closest('form'));
    const heading = form && form.querySelector('h1,h2,h3,legend');
    const label = labelOf(el);
    const text = ['input', 'textarea', 'select'].includes(el.localName) ? '' : clip(el.innerText, 80);
    return {
      tag: el.localName,
      id: el.id || '',
      name: el.getAttribute('name') || '',
      testId: el.getAttribute('data-testid') || el.getAttribute('data-test') || el.getAttribute('data-qa') || '',
      role: el.getAttribute('role') || implicitRole(el),
      accessibleName: clip(el.getAttribute('aria-label') || label || text || el.getAttribute('placeholder') || el.getAttribute('title') || '', 80),
      label,
      text,
      inputType: el.localName === 'input' ? (el.type || 'text').toLowerCase() : '',
      autocomplete: el.getAttribute('autocomplete') || '',
      placeholder: el.getAttribute('placeholder') || '',
      cssPath: cssPath(el),
      xpath: xpath(el),
      formHasPassword: !!(form && form.querySelector('input[type=password]')),
      formHint: form ? clip([form.id, form.getAttribute('name'), form.getAttribute('action'), heading && heading.innerText].filter(Boolean).join(' '), 120) : '',
    };
  };
  // Shortly after an action, what the page shows: whether it changed, a dialog, an alert.
  let mutations = 0;
  new MutationObserver((list) => { mutations += list.length; })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const shown = (el) => (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
  let hintTimer = 0;
  let pending = false;
  // Report the pending hint now (the next event, a stop, or 400 ms after the action).
  const hintNow = () => {
    clearTimeout(hintTimer);
    if (!pending) return;
    pending = false;
    const dialog = [...document.querySelectorAll('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]')].some(shown);
    const alert = [...document.querySelectorAll('[role=alert]')].filter(shown).map((a) => clip(a.innerText, 120)).find(Boolean) || '';
    send({ kind: 'hint', changed: mutations > 0, dialog, alert });
  };
  globalThis.__kaptureFlushHint = hintNow;
  const observe = () => {
    mutations = 0;
    pending = true;
    hintTimer = setTimeout(hintNow, 400);
  };
  const field = (el) => el && (el.localName === 'input' || el.localName === 'textarea' || el.localName === 'select');
  const toggle = (el) => el && el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio');
  addEventListener('click', (e) => {
    if (!e.isTrusted || ours(e) || !(e.target instanceof Element)) return;
    const t = e.target.closest('button,a,input,select,textarea,label,[role]') || e.target;
    send({ kind: 'click', target: describe(t) });
    observe();
  }, true);
  addEventListener('input', (e) => {
    const t = e.target;
    if (!e.isTrusted || ours(e) || !field(t) || toggle(t) || t.localName === 'select') return;
    send({ kind: 'input', target: describe(t), value: t.value });
  }, true);
  addEventListener('change', (e) => {
    const t = e.target;
    if (!e.isTrusted || ours(e)) return;
    if (t.localName === 'select') send({ kind: 'change', target: describe(t), value: t.value });
    else if (toggle(t)) send({ kind: 'check', target: describe(t), checked: t.checked });
    else return;
    observe();
  }, true);
  addEventListener('keydown', (e) => {
    if (!e.isTrusted || ours(e) || !(e.target instanceof Element)) return;
    if (['Enter', 'Escape', 'Tab', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight'].includes(e.key)) {
      send({ kind: 'key', target: describe(e.target), key: e.key });
      observe();
    }
  }, true);
  let settle = 0;
  addEventListener('scroll', (e) => {
    if (ours(e)) return;
    clearTimeout(settle);
    settle = setTimeout(() => send({ kind: 'scroll', x: scrollX, y: scrollY }), 250);
  }, true);
})();
