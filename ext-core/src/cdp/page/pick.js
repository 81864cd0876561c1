// Kapture's element picker, in Kapture's isolated world of one frame (never the page's
// world): an outline around the element under the pointer with its role and name, a banner in
// the top frame with the agent's prompt (labelled as the agent's), and trusted presses, clicks
// and activating keys taken before the page sees them. Only `(token, opts) => {ok}` runs here;
// Rust polls `K.pick` for the outcome and removes the picker (page/pick.js is wrapped with
// page/describe.js, see js.rs).
(token, opts) => {
  // Installed again by the same pick (a refresh of the frames): nothing to do.
  if (K.pick && K.pick.token === token) return { ok: true, again: true };
  if (K.pick) K.pick.end();
  const TARGETS = 'a[href],button,input,select,textarea,summary,label,[role=button],[role=link],[role=checkbox],' +
    '[role=radio],[role=switch],[role=tab],[role=menuitem],[role=option],[role=combobox],[role=textbox],[role=slider]';
  const me = { token, until: Date.now() + opts.ms, seenAt: Date.now(), result: null };
  me.done = new Promise((res) => { me.wake = res; });
  const host = document.createElement('kapture-picker');
  // The host's whole style, pinned with !important by its own shadow root's `:host` rules:
  // an inner context's !important outranks every page rule and the page's writes to the
  // host's style attribute. `all: initial` resets what is not named (inherited text styles,
  // offsets, masks…); what could hide or move the overlay is named anyway. The same pins
  // are in the style attribute too, which the observer below keeps as it is.
  const PIN = Object.entries({
    position: 'fixed', left: '0', top: '0', right: 'auto', bottom: 'auto', width: '100vw', height: '100vh',
    'z-index': '2147483647', display: 'block', visibility: 'visible', opacity: '1', margin: '0', padding: '0', border: '0',
    transform: 'none', translate: 'none', scale: 'none', rotate: 'none', filter: 'none', 'backdrop-filter': 'none',
    'clip-path': 'none', clip: 'auto', mask: 'none', 'offset-path': 'none', 'content-visibility': 'visible', zoom: '1',
    contain: 'none', 'mix-blend-mode': 'normal',
    'pointer-events': 'none', background: 'transparent', overflow: 'visible',
  }).map(([k, v]) => k + ': ' + v + ' !important').join('; ');
  host.setAttribute('style', PIN);
  const root = host.attachShadow({ mode: 'closed' });
  root.innerHTML = `<style>
    :host { all: initial !important; }
    :host { ${PIN}; }
    .box { position: absolute; box-sizing: border-box; border: 2px solid #d63384; background: rgba(214, 51, 132, .12); border-radius: 2px; }
    .tag { position: absolute; max-width: 60vw; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font: 12px/1.5 system-ui, sans-serif;
      color: #fff; background: #d63384; padding: 1px 6px; border-radius: 3px; unicode-bidi: isolate; }
    .banner { position: absolute; left: 50%; top: 10px; transform: translateX(-50%); max-width: 80vw; font: 13px/1.4 system-ui, sans-serif;
      color: #1d2330; background: #fff; border: 1px solid #d63384; border-radius: 8px; box-shadow: 0 4px 18px rgba(0,0,0,.2); padding: 8px 12px; }
    .banner.low { top: auto; bottom: 10px; }
    .banner b { color: #d63384; }
    .prompt { margin-top: 6px; padding-top: 6px; border-top: 1px dashed #c9cdd6; color: #3b4252; overflow-wrap: anywhere; }
    .who { font-weight: 600; color: #5c6370; margin-right: 4px; }
    .said { font-style: italic; unicode-bidi: isolate; white-space: pre-wrap; }
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
      // The agent's words, said to be the agent's (never Kapture's), as text, never markup.
      const line = document.createElement('div');
      line.className = 'prompt';
      const who = document.createElement('span');
      who.className = 'who';
      who.textContent = 'The agent asks:';
      const said = document.createElement('span');
      said.className = 'said';
      said.textContent = '“' + opts.prompt + '”';
      line.append(who, said);
      banner.append(line);
    }
    root.append(banner);
  }
  // The page may remove or move the host, or write its attributes: all put back at once
  // (before the next paint), and checked again every frame.
  const guard = () => {
    const top = document.documentElement;
    if (top && host.parentNode !== top) top.appendChild(host);
    if (host.getAttribute('style') !== PIN) host.setAttribute('style', PIN);
    for (const a of [...host.attributes]) if (a.name !== 'style') host.removeAttribute(a.name);
  };
  const observer = new MutationObserver(guard);
  guard();
  observer.observe(document, { childList: true, subtree: true });
  observer.observe(host, { attributes: true });
  let current = null;
  // Where the person's pointer is, from its trusted events: what is under it is looked at
  // again every frame, so an element moved under a still pointer is outlined too.
  let at = null;
  const targetOf = (e) => {
    let el = e.composedPath()[0];
    if (!(el instanceof Element)) el = e.target;
    if (!(el instanceof Element) || el === host) return null;
    return el.closest(TARGETS) || el;
  };
  const under = () => {
    let el = document.elementFromPoint(at.x, at.y);
    for (let i = 0; el && el.shadowRoot && i < 32; i++) {
      const inner = el.shadowRoot.elementFromPoint(at.x, at.y);
      if (!inner || inner === el) break;
      el = inner;
    }
    if (!(el instanceof Element) || el === host) return null;
    return el.closest(TARGETS) || el;
  };
  const what = (el) => {
    const d = descriptorOf(el);
    return (d.role || d.tag) + (d.accessibleName ? ' “' + d.accessibleName + '”' : '');
  };
  const near = (a, b) => Math.abs(a.left - b.left) < 2 && Math.abs(a.top - b.top) < 2 &&
    Math.abs(a.width - b.width) < 2 && Math.abs(a.height - b.height) < 2;
  const put = (el, x, y, w, h) => Object.assign(el.style, { left: x + 'px', top: y + 'px', width: w + 'px', height: h + 'px' });
  let named = null;
  const draw = () => {
    if (!current || !current.isConnected) { box.hidden = true; tag.hidden = true; named = null; return; }
    const r = current.getBoundingClientRect();
    box.hidden = false;
    put(box, r.left, r.top, r.width, r.height);
    // A page whose root is moved or scaled moves the overlay with it: measured and undone,
    // so the outline is drawn where the element is seen.
    let map = (x, y) => [x, y];
    if (!near(box.getBoundingClientRect(), r)) {
      put(box, 0, 0, 100, 100);
      const u = box.getBoundingClientRect();
      const sx = u.width / 100 || 1, sy = u.height / 100 || 1;
      map = (x, y) => [(x - u.left) / sx, (y - u.top) / sy];
      const [x, y] = map(r.left, r.top);
      put(box, x, y, r.width / sx, r.height / sy);
    }
    if (named !== current) { tag.textContent = what(current); named = current; }
    tag.hidden = false;
    const above = r.top >= 22;
    const [tx, ty] = map(Math.max(0, r.left), above ? r.top - 22 : r.bottom + 2);
    Object.assign(tag.style, { left: tx + 'px', top: ty + 'px' });
    // The banner never hides what is pointed at: it moves to the bottom when in the way.
    if (banner) {
      const b = banner.getBoundingClientRect();
      const atTop = { left: b.left, right: b.right, top: 10, bottom: 10 + b.height };
      const inTheWay = r.left < atTop.right && r.right > atTop.left && r.top - 24 < atTop.bottom && r.bottom > atTop.top;
      banner.classList.toggle('low', inTheWay);
    }
  };
  // The outline is where the element is seen: a press counts only then.
  const shownRight = () => !!current && current.isConnected && host.parentNode === document.documentElement &&
    !box.hidden && near(box.getBoundingClientRect(), current.getBoundingClientRect());
  const outline = (el) => { if (el !== current) current = el; draw(); };
  const hover = (e) => {
    if (!e.isTrusted || me.result) return;
    at = { x: e.clientX, y: e.clientY };
    outline(targetOf(e));
  };
  let frame = 0;
  const tick = () => {
    frame = requestAnimationFrame(tick);
    guard();
    if (me.result) return;
    if (at) current = under();
    draw();
  };
  frame = requestAnimationFrame(tick);
  // Presses and clicks of a person are the picker's (the page's own listeners added
  // before the pick may still see them). Only a pointer's click picks, and only on the
  // element outlined when it was pressed: a press elsewhere (an element that moved under a
  // still pointer, a touch with no hover before it) outlines what was pressed, and the
  // next click picks it. A key that activates a focused element (Enter, Space, an access
  // key) makes a trusted click too, with no press and `detail` 0: never a pick.
  let pressed = null;
  let pressOk = false;
  const take = (e) => {
    if (!e.isTrusted) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (me.result) return;
    if (e.type === 'pointerdown') {
      at = { x: e.clientX, y: e.clientY };
      pressed = targetOf(e);
      pressOk = !!pressed && pressed === current && shownRight();
      if (!pressOk) outline(pressed);
      return;
    }
    if (e.type !== 'click' || e.button !== 0 || e.detail < 1) return;
    const t = targetOf(e);
    const ok = pressOk && !!t && t === pressed && t === current;
    pressed = null;
    pressOk = false;
    if (!ok) return;
    draw();
    me.result = { picked: { id: idOf(t), descriptor: descriptorOf(t), what: what(t) } };
    me.wake(me.result);
  };
  // Keys that would activate what has focus (Enter, Space, access keys and shortcuts) and
  // Esc are kept from the page in every phase (down, press, up) while the picker is there.
  const key = (e) => {
    if (!e.isTrusted) return;
    const k = e.key;
    if (!(k === 'Enter' || k === ' ' || k === 'Spacebar' || k === 'Escape' || e.altKey || e.ctrlKey || e.metaKey)) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (e.type !== 'keydown' || k !== 'Escape' || me.result) return;
    me.result = { cancelled: true };
    me.wake(me.result);
  };
  const listeners = [['pointermove', hover], ['mousemove', hover], ['scroll', draw], ['resize', draw],
    ['keydown', key], ['keypress', key], ['keyup', key]];
  for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'auxclick', 'dblclick', 'contextmenu']) listeners.push([type, take]);
  for (const [type, fn] of listeners) addEventListener(type, fn, { capture: true });
  // Nobody asks any more (the worker went away with the command): every trace goes, at the
  // deadline or when no poll came for a while. Kapture itself ends the picker with the
  // command that put it there; this is the last resort.
  const watchdog = setInterval(() => {
    const now = Date.now();
    if (now > me.until + opts.idleMs || now - me.seenAt > opts.idleMs) me.end();
  }, 250);
  me.end = () => {
    clearInterval(watchdog);
    cancelAnimationFrame(frame);
    for (const [type, fn] of listeners) removeEventListener(type, fn, { capture: true });
    observer.disconnect();
    host.remove();
    if (K.pick === me) K.pick = null;
  };
  K.pick = me;
  return { ok: true };
}
