// Kapture's recorder widget, in the recorder's isolated world: Start, Stop & Save, a live
// list of what was captured, and the save confirmation. Its DOM is a closed shadow root on
// a host whose own styles are inline and !important, so the page can neither style nor
// script it; only trusted clicks act. It only asks; the worker (Rust) decides and answers
// through `__kaptureWidget.show(view)`.
(() => {
  if (globalThis.__kaptureWidget) return;
  const ask = (action, extra) => {
    try { globalThis.__kaptureRecord(JSON.stringify(Object.assign({ kind: 'widget', action }, extra || {}))); } catch (_) { /* recorder gone */ }
  };
  const host = document.createElement('kapture-recorder');
  globalThis.__kaptureWidgetHost = host;
  const pin = { position: 'fixed', right: '16px', bottom: '16px', 'z-index': '2147483647', display: 'block', visibility: 'visible', opacity: '1', margin: '0', padding: '0', border: '0', transform: 'none', 'pointer-events': 'auto' };
  for (const [k, v] of Object.entries(pin)) host.style.setProperty(k, v, 'important');
  const root = host.attachShadow({ mode: 'closed' });
  root.innerHTML = `<style>
    :host { all: initial; }
    .w { font: 13px/1.4 system-ui, sans-serif; color: #1d2330; background: #fff; border: 1px solid #c9d1e0; border-radius: 10px; box-shadow: 0 6px 24px rgba(0,0,0,.18); width: 320px; max-height: 70vh; overflow: auto; }
    header { display: flex; align-items: center; gap: 8px; padding: 8px 10px; background: #f3f5fa; border-bottom: 1px solid #e1e6f0; border-radius: 10px 10px 0 0; font-weight: 600; }
    header .dot { width: 10px; height: 10px; border-radius: 50%; background: #9aa3b5; }
    header .dot.on { background: #d93025; }
    header .x { margin-left: auto; border: 0; background: none; font-size: 16px; cursor: pointer; color: #556; }
    .body { padding: 10px; }
    .status { margin-bottom: 8px; color: #445; }
    button.b { font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid #b8c2d6; background: #fff; cursor: pointer; }
    button.primary { background: #1a73e8; border-color: #1a73e8; color: #fff; }
    button:disabled { opacity: .5; cursor: default; }
    ol { margin: 8px 0 0; padding-left: 20px; max-height: 160px; overflow: auto; }
    li { margin: 2px 0; word-break: break-word; }
    li.secret { color: #8a4b00; }
    li.secret .lock { vertical-align: -1px; }
    label.f { display: block; margin: 6px 0 2px; font-weight: 600; }
    input[type=text] { box-sizing: border-box; width: 100%; font: inherit; padding: 4px 6px; border: 1px solid #b8c2d6; border-radius: 5px; }
    fieldset { border: 1px solid #e1e6f0; border-radius: 6px; margin: 8px 0; padding: 4px 8px; }
    legend { font-weight: 600; padding: 0 4px; }
    .opt { display: block; margin: 3px 0; }
    .muted { color: #667; font-size: 12px; }
    .msg { margin-top: 8px; padding: 6px 8px; border-radius: 6px; background: #e6f4ea; }
    .msg.err { background: #fce8e6; }
    .row { display: flex; gap: 8px; margin-top: 10px; }
  </style>
  <div class="w" role="dialog" aria-label="Kapture recorder">
    <header><span class="dot"></span><span>Kapture recorder</span><button class="x" title="Close the recorder" aria-label="Close">×</button></header>
    <div class="body"></div>
  </div>`;
  const body = root.querySelector('.body');
  const dot = root.querySelector('.dot');
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  const on = (el, fn) => el && el.addEventListener('click', (e) => { if (e.isTrusted) fn(e); });
  on(root.querySelector('.x'), () => ask('close'));
  let mode = 'ready';
  let live = [];
  const actions = (n) => n + (n === 1 ? ' action' : ' actions');
  // A line of a typed secret starts with 🔒 (Rust's judgement, never its value), drawn as
  // an icon: a machine without an emoji font still shows the lock.
  const LOCK = '\u{1F512}';
  const lock = '<svg class="lock" role="img" aria-label="\u{1F512} secret" viewBox="0 0 16 16" width="12" height="12"><path d="M4 7V5a4 4 0 0 1 8 0v2h1v8H3V7h1zm2 0h4V5a2 2 0 0 0-4 0v2z" fill="currentColor"/></svg>';
  const item = (l) => l.startsWith(LOCK)
    ? `<li class="secret">${lock} ${esc(l.slice(LOCK.length).trim())}</li>`
    : `<li>${esc(l)}</li>`;
  const list = () => `<ol class="live">${live.map(item).join('')}</ol>`;
  const refresh = () => {
    const ol = body.querySelector('ol.live');
    if (ol) ol.innerHTML = live.map(item).join('');
    const count = body.querySelector('.count');
    if (count) count.textContent = actions(live.length);
  };
  let liveTimer = 0;
  const render = (view) => {
    mode = view.mode;
    // Shown again after it left (a recorder installed anew in the same document).
    if (mode !== 'gone' && host.parentNode !== document.documentElement && document.documentElement) {
      document.documentElement.appendChild(host);
      observer.observe(document.documentElement, { childList: true });
    }
    dot.classList.toggle('on', mode === 'recording');
    const note = view.text ? `<div class="msg${view.error ? ' err' : ''}" role="status">${esc(view.text)}</div>` : '';
    if (mode === 'recording') {
      body.innerHTML = `<div class="status">Recording · <span class="count">${actions(live.length)}</span></div>
        <div class="row"><button class="b primary stop">Stop &amp; Save</button></div>${list()}${note}`;
      on(body.querySelector('.stop'), () => ask('stop'));
    } else if (mode === 'confirm') {
      const d = view.draft || {};
      const secrets = (d.values || []).filter((v) => v.secret);
      const values = (d.values || []).filter((v) => !v.secret);
      body.innerHTML = `<div class="status">Save ${d.steps ? d.steps.length : 0} steps as a scenario</div>
        <label class="f" for="n">Name</label><input type="text" id="n" value="${esc(d.suggestedName || '')}">
        <label class="f" for="t">Title</label><input type="text" id="t">
        <label class="f" for="d">Description</label><input type="text" id="d">
        <label class="f" for="g">Tags <span class="muted">(comma-separated)</span></label><input type="text" id="g">
        ${secrets.length ? `<fieldset><legend>Secrets, sealed in Kapture's store</legend>${secrets.map((v) => `<label class="opt"><input type="checkbox" class="sec" data-name="${esc(v.name)}" checked> ${esc(v.name)} <span class="muted">${esc(v.label)}</span></label>`).join('')}</fieldset>` : ''}
        ${values.length ? `<fieldset><legend>Values to pass as parameters</legend>${values.map((v) => `<label class="opt"><input type="checkbox" class="par" data-name="${esc(v.name)}" checked${v.search ? ' disabled' : ''}> ${esc(v.name)} = “${esc(v.value)}”${v.search ? ' <span class="muted">(search: always)</span>' : ''}</label>`).join('')}</fieldset>` : ''}
        ${(d.suggestions || []).length ? `<fieldset><legend>Run first</legend>${d.suggestions.map((s) => `<label class="opt"><input type="checkbox" class="dep" data-name="${esc(s.scenario)}" data-condition="${esc(s.condition || '')}" data-reason="${esc(s.reason || '')}" checked> ${esc(s.scenario)} <span class="muted">${esc(s.reason)}</span></label>`).join('')}</fieldset>` : ''}
        <details><summary class="muted">Steps</summary><ol>${(d.steps || []).map(item).join('')}</ol></details>
        <div class="row"><button class="b primary save">Save</button><button class="b discard">Discard</button></div>${note}`;
      const val = (id) => body.querySelector('#' + id).value.trim();
      const names = (cls, checked) => [...body.querySelectorAll('input.' + cls)].filter((i) => i.checked === checked).map((i) => i.dataset.name);
      on(body.querySelector('.save'), () => ask('save', { choices: {
        name: val('n'), title: val('t'), description: val('d'),
        tags: val('g').split(',').map((t) => t.trim()).filter(Boolean),
        notSecret: names('sec', false), literal: names('par', false),
        dependencies: [...body.querySelectorAll('input.dep')].filter((i) => i.checked).map((i) => Object.assign({ scenario: i.dataset.name, reason: i.dataset.reason }, i.dataset.condition ? { condition: i.dataset.condition } : {})),
      } }));
      on(body.querySelector('.discard'), () => { live = []; ask('discard'); });
    } else if (mode === 'gone') {
      host.remove();
      observer.disconnect();
    } else {
      if (mode === 'saved' || mode === 'kept') live = [];
      const status = { saved: 'Saved.', kept: 'Kept in this browser.' }[mode] || 'Ready to record this tab.';
      body.innerHTML = `<div class="status">${status}</div>
        <div class="row"><button class="b primary start">Start</button></div>${note}`;
      on(body.querySelector('.start'), () => { live = []; ask('start'); });
    }
  };
  // What the capture script saw, as the person would say it (display only).
  const captured = (ev) => {
    const t = ev.target || {};
    const what = (t.role || t.tag || '') + (t.accessibleName ? ' “' + t.accessibleName + '”' : '');
    const line = ev.kind === 'input' ? 'type into ' + what : ev.kind === 'click' ? 'click ' + what
      : ev.kind === 'change' ? 'choose ' + ev.value + ' in ' + what : ev.kind === 'check' ? (ev.checked ? 'check ' : 'uncheck ') + what
      : ev.kind === 'key' ? 'press ' + ev.key : '';
    if (!line || mode !== 'recording') return;
    if (live[live.length - 1] !== line) live.push(line);
    refresh();
    // Rust's lines replace this guess shortly (which typed values are secrets is its call).
    clearTimeout(liveTimer);
    liveTimer = setTimeout(() => ask('live'), 150);
  };
  globalThis.__kaptureWidget = {
    show: (view) => {
      if (view.live) {
        if (mode === 'recording') { live = view.live.slice(); refresh(); }
        return;
      }
      if (view.steps) live = view.steps.slice();
      render(view);
    },
    captured,
  };
  // The page may remove or move the host; put it back.
  const observer = new MutationObserver(() => {
    if (mode !== 'gone' && host.parentNode !== document.documentElement) document.documentElement.appendChild(host);
  });
  const mount = () => {
    document.documentElement.appendChild(host);
    observer.observe(document.documentElement, { childList: true });
    render({ mode: 'ready' });
    ask('hello');
  };
  if (document.documentElement) mount(); else addEventListener('DOMContentLoaded', mount, { once: true });
})();
