// Kapture's page-side helpers. Evaluated in Kapture's isolated world of a frame (the page's
// scripts cannot see or change them); `__k` holds the element registry behind refs.
const K = (globalThis.__k ??= { ids: new WeakMap(), els: new Map(), next: 1 });
const idOf = (el) => {
  let id = K.ids.get(el);
  if (!id) { id = K.next++; K.ids.set(el, id); K.els.set(id, new WeakRef(el)); }
  return id;
};
const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
  (el.classList && el.classList.length ? '.' + [...el.classList].slice(0, 2).join('.') : '');
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
      try { el = document.querySelector(target.sel); }
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
