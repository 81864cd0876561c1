// The recorder's description of an element (`recorder::ElementDescriptor`), from which its
// ranked locators are made. One copy, shared: the recorder's capture script and the element
// picker both put it in front of their own code (see `cdp/js.rs`), inside a block or a
// function, so running either twice in one world declares nothing twice.
const descriptorOf = (() => {
  const clip = (s, n) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  // Every raw attribute is bounded, so no page makes a description as large as it likes; a
  // test id or a path too long to be a locator is left out (a cut one would find nothing).
  const short = (s, n) => (s && s.length <= n ? s : '');
  const attr = (el, name, n) => short(el.getAttribute(name), n);
  const cssPath = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && parts.length < 8; e = e.parentElement) {
      if (e.id && e.id.length <= 100 && /^[A-Za-z][\w-]*$/.test(e.id)) { parts.unshift('#' + e.id); break; }
      let part = e.localName.slice(0, 60);
      const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.localName === e.localName) : [];
      if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(e) + 1) + ')';
      parts.unshift(part);
    }
    return short(parts.join(' > '), 600);
  };
  const xpath = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.localName === e.localName) : [e];
      parts.unshift(e.localName.slice(0, 60) + '[' + (same.indexOf(e) + 1) + ']');
    }
    return short('/' + parts.join('/'), 2000);
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
  return (el) => {
    const form = el.form || (el.closest && el.closest('form'));
    const heading = form && form.querySelector('h1,h2,h3,legend');
    const label = labelOf(el);
    const text = ['input', 'textarea', 'select'].includes(el.localName) ? '' : clip(el.innerText, 80);
    // The role is the attribute's first token (the one browsers use), as short as a role is.
    const role = clip(el.getAttribute('role'), 200).split(' ')[0].slice(0, 40);
    return {
      tag: el.localName.slice(0, 60),
      // Cut rather than left out: the recorder reads them for secret fields' words too.
      id: (el.id || '').slice(0, 200),
      name: (el.getAttribute('name') || '').slice(0, 200),
      testId: attr(el, 'data-testid', 200) || attr(el, 'data-test', 200) || attr(el, 'data-qa', 200),
      role: role || implicitRole(el),
      accessibleName: clip(el.getAttribute('aria-label') || label || text || el.getAttribute('placeholder') || el.getAttribute('title') || '', 80),
      label,
      text,
      inputType: el.localName === 'input' ? (el.type || 'text').toLowerCase().slice(0, 20) : '',
      autocomplete: clip(el.getAttribute('autocomplete'), 60),
      placeholder: clip(el.getAttribute('placeholder'), 80),
      cssPath: cssPath(el),
      xpath: xpath(el),
      formHasPassword: !!(form && form.querySelector('input[type=password]')),
      formHint: form ? clip([form.id, form.getAttribute('name'), form.getAttribute('action'), heading && heading.innerText].filter(Boolean).join(' '), 120) : '',
    };
  };
})();
