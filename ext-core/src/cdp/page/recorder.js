// Kapture's recorder capture, in its own isolated world: it only forwards what a person
// does (trusted events) with a description of the element; Rust decides what it means.
// Runs after page/describe.js, in the same block (see `cdp/js.rs`).
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
  // `descriptorOf` (page/describe.js) is in scope: the recorder's description of an element.
  const describe = descriptorOf;
  // Shortly after an action, what the page shows: whether it changed, a dialog, an alert.
  let mutations = 0;
  new MutationObserver((list) => { mutations += list.length; })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const shown = (el) => (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
  // The step a multi-step form shows as current: its aria-current="step" element, else a
  // "Step 2 of 3" counter in the page's rendered text.
  const formStep = () => {
    const current = [...document.querySelectorAll('[aria-current=step]')].filter(shown)
      .map((el) => clip(el.innerText || el.getAttribute('aria-label'), 60)).find(Boolean);
    if (current) return { by: 'current', value: current };
    const counter = ((document.body && document.body.innerText) || '').match(/\bstep\s+\d+\s*(?:of|\/)\s*\d+\b/i);
    return counter ? { by: 'counter', value: clip(counter[0], 40) } : undefined;
  };
  let hintTimer = 0;
  let pending = false;
  // Report the pending hint now (the next event, a stop, or 400 ms after the action).
  const hintNow = () => {
    clearTimeout(hintTimer);
    if (!pending) return;
    pending = false;
    const dialog = [...document.querySelectorAll('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]')].some(shown);
    const alert = [...document.querySelectorAll('[role=alert]')].filter(shown).map((a) => clip(a.innerText, 120)).find(Boolean) || '';
    send({ kind: 'hint', changed: mutations > 0, dialog, alert, step: formStep() });
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
