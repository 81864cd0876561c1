// The password watch: runs in Kapture's world of each top-level document from its start and
// tells Kapture, through a binding only that world has, whether the document has held a
// password field: `'0'` at once when it has none yet, `'1'` as soon as one appears (inserted,
// or an input made one by its `type`). While a document says `'0'`, answers need not ask the
// page for password values to mask (a round trip per answer). Once `'1'`, always asked.
(() => {
  if (window !== window.top || globalThis.__kpWatch) return;
  globalThis.__kpWatch = true;
  const report = globalThis.__kapturePasswords;
  if (typeof report !== 'function') return;
  const PASSWORD = 'input[type=password i]';
  const holds = (n) => n.nodeType === 1 && (n.matches(PASSWORD) || n.querySelector(PASSWORD) !== null);
  const root = document.documentElement;
  if (root && holds(root)) { report('1'); return; }
  report('0');
  const seen = new MutationObserver((records) => {
    for (const r of records) {
      const found = r.type === 'attributes' ? holds(r.target) : [...r.addedNodes].some(holds);
      if (found) { seen.disconnect(); report('1'); return; }
    }
  });
  seen.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['type'] });
})();
