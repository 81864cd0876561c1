// Kapture's element picker, in Kapture's isolated world of one frame (never the page's
// world): an outline around the element under the mouse with its role and name, a banner in
// the top frame with the agent's prompt, and trusted clicks, presses and Escape taken before
// the page sees them. Only `(token, opts) => {ok}` runs here; Rust polls `K.pick` for the
// outcome and removes the picker (page/pick.js is wrapped with page/describe.js, see js.rs).
(token, opts) => {
  // The same round of the panel's picking: keep the overlay, move the deadline.
  if (K.pick && K.pick.token === token) { K.pick.until = Date.now() + opts.ms; return { ok: true, again: true }; }
  if (K.pick) K.pick.end();
  const TARGETS = 'a[href],button,input,select,textarea,summary,label,[role=button],[role=link],[role=checkbox],' +
    '[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=combobox],[role=textbox],[role=slider]';
  const me = { token, until: Date.now() + opts.ms, seenAt: Date.now(), result: null };
  me.done = new Promise((res) => { me.wake = res; });
  const host = document.createElement('kapture-picker');
  const pin = { position: 'fixed', left: '0', top: '0', width: '100vw', height: '100vh', 'z-index': '2147483647', display: 'block',
    visibility: 'visible', opacity: '1', margin: '0', padding: '0', border: '0', transform: 'none', 'pointer-events': 'none',
    background: 'transparent', overflow: 'visible' };
  for (const [k, v] of Object.entries(pin)) host.style.setProperty(k, v, 'important');
  const root = host.attachShadow({ mode: 'closed' });
  root.innerHTML = `<style>
    :host { all: initial; }
    .box { position: absolute; box-sizing: border-box; border: 2px solid #d63384; background: rgba(214, 51, 132, .12); border-radius: 2px; }
    .tag { position: absolute; max-width: 60vw; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font: 12px/1.5 system-ui, sans-serif;
      color: #fff; background: #d63384; padding: 1px 6px; border-radius: 3px; }
    .banner { position: absolute; left: 50%; top: 10px; transform: translateX(-50%); max-width: 80vw; font: 13px/1.4 system-ui, sans-serif;
      color: #1d2330; background: #fff; border: 1px solid #d63384; border-radius: 8px; box-shadow: 0 4px 18px rgba(0,0,0,.2); padding: 8px 12px; }
    .banner.low { top: auto; bottom: 10px; }
    .banner b { color: #d63384; }
    .prompt { margin-top: 4px; color: #445; overflow-wrap: anywhere; }
    [hidden] { display: none; }
  </style><div class="box" hidden></div><div class="tag" hidden></div>`;
  const box = root.querySelector('.box');
  const tag = root.querySelector('.tag');
  let banner = null;
  if (opts.banner) {
    banner = document.createElement('div');
    banner.className = 'banner';
    banner.setAttribute('role', 'status');
    const lead = document.createElement('b');
    lead.textContent = 'Kapture:';
    banner.append(lead, ' click the element to pick (Esc cancels)');
    if (opts.prompt) {
      // The agent's words: text only, never markup.
      const line = document.createElement('div');
      line.className = 'prompt';
      line.textContent = opts.prompt;
      banner.append(line);
    }
    root.append(banner);
  }
  const mount = () => {
    if (document.documentElement && host.parentNode !== document.documentElement) document.documentElement.appendChild(host);
  };
  // The page may remove or move the host; put it back.
  const observer = new MutationObserver(mount);
  mount();
  if (document.documentElement) observer.observe(document.documentElement, { childList: true });
  let current = null;
  const targetOf = (e) => {
    let el = e.composedPath()[0];
    if (!(el instanceof Element)) el = e.target;
    if (!(el instanceof Element) || el === host) return null;
    return el.closest(TARGETS) || el;
  };
  const what = (el) => {
    const d = descriptorOf(el);
    return (d.role || d.tag) + (d.accessibleName ? ' “' + d.accessibleName + '”' : '');
  };
  const draw = () => {
    if (!current || !current.isConnected) { box.hidden = true; tag.hidden = true; return; }
    const r = current.getBoundingClientRect();
    Object.assign(box.style, { left: r.left + 'px', top: r.top + 'px', width: r.width + 'px', height: r.height + 'px' });
    box.hidden = false;
    tag.textContent = what(current);
    tag.hidden = false;
    const above = r.top >= 22;
    Object.assign(tag.style, { left: Math.max(0, r.left) + 'px', top: (above ? r.top - 22 : r.bottom + 2) + 'px' });
    // The banner never hides what is pointed at: it moves to the bottom when in the way.
    if (banner) {
      const b = banner.getBoundingClientRect();
      const atTop = { left: b.left, right: b.right, top: 10, bottom: 10 + b.height };
      const inTheWay = r.left < atTop.right && r.right > atTop.left && r.top - 24 < atTop.bottom && r.bottom > atTop.top;
      banner.classList.toggle('low', inTheWay);
    }
  };
  const hover = (e) => {
    if (!e.isTrusted || me.result) return;
    const t = targetOf(e);
    if (t !== current) { current = t; draw(); }
  };
  // Presses and clicks of a person are the picker's (the page's own listeners added
  // before the pick may still see them). Only a pointer's click picks, on the element its
  // press was on: a key that activates a focused element (Enter, Space, an access key)
  // makes a trusted click too, with no press and `detail` 0.
  let pressed = null;
  const take = (e) => {
    if (!e.isTrusted) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (e.type === 'pointerdown' || e.type === 'mousedown') { pressed = targetOf(e); return; }
    if (e.type !== 'click' || e.button !== 0 || me.result || e.detail < 1) return;
    const t = targetOf(e);
    if (!t || t !== pressed) return;
    current = t;
    draw();
    me.result = { picked: { id: idOf(t), descriptor: descriptorOf(t), what: what(t) } };
    me.wake(me.result);
  };
  const key = (e) => {
    if (!e.isTrusted || me.result) return;
    // Keys that would activate what has focus are kept from the page while picking.
    if (e.key === 'Enter' || e.key === ' ' || e.altKey || e.ctrlKey || e.metaKey) {
      e.preventDefault();
      e.stopImmediatePropagation();
      return;
    }
    if (e.key !== 'Escape') return;
    e.preventDefault();
    e.stopImmediatePropagation();
    me.result = { cancelled: true };
    me.wake(me.result);
  };
  const listeners = [['pointermove', hover], ['mousemove', hover], ['scroll', draw], ['resize', draw], ['keydown', key]];
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'auxclick', 'dblclick', 'contextmenu']) listeners.push([type, take]);
  for (const [type, fn] of listeners) addEventListener(type, fn, { capture: true });
  // Nobody asks any more (the command ended some other way, the worker went away): every
  // trace goes, at the deadline or when no poll came for a while.
  const watchdog = setInterval(() => {
    const now = Date.now();
    if (now > me.until + opts.idleMs || now - me.seenAt > opts.idleMs) me.end();
  }, 250);
  me.end = () => {
    clearInterval(watchdog);
    for (const [type, fn] of listeners) removeEventListener(type, fn, { capture: true });
    observer.disconnect();
    host.remove();
    if (K.pick === me) K.pick = null;
  };
  K.pick = me;
  return { ok: true };
}
