// Readable content of the page (or of the target) as Markdown: the main content is the
// target, else <article>, else <main>, else the body without its navigation and footer.
async (target, offset, max) => {
  let root = null;
  if (target) { const f = await resolve(target, 0); if (f.error) return f; root = f.el; }
  root = root || document.querySelector('article') || document.querySelector('main, [role=main]') || document.body;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'FORM']);
  const CHROME = new Set(['NAV', 'FOOTER', 'ASIDE', 'HEADER']);
  const INLINE = new Set(['A', 'SPAN', 'STRONG', 'B', 'EM', 'I', 'CODE', 'IMG', 'SMALL', 'LABEL', 'TIME', 'ABBR', 'MARK', 'SUB', 'SUP']);
  const hidden = (el) => el.hidden || el.getAttribute('aria-hidden') === 'true' || getComputedStyle(el).display === 'none';
  const inline = (node) => {
    if (node.nodeType === 3) return node.data.replace(/\s+/g, ' ');
    if (node.nodeType !== 1 || SKIP.has(node.tagName) || hidden(node)) return '';
    const inner = [...node.childNodes].map(inline).join('');
    switch (node.tagName) {
      case 'A': { const href = node.href; const t = inner.trim(); return href && t ? '[' + t + '](' + href + ')' : t; }
      case 'STRONG': case 'B': return inner.trim() ? '**' + inner.trim() + '**' : '';
      case 'EM': case 'I': return inner.trim() ? '*' + inner.trim() + '*' : '';
      case 'CODE': return '`' + inner + '`';
      case 'IMG': return node.alt ? '![' + node.alt + '](' + node.src + ')' : '';
      case 'BR': return '\n';
      default: return inner;
    }
  };
  const out = [];
  // A list as lines, nested lists indented under their item.
  const list = (node, depth) => {
    const lines = [];
    let n = 1;
    for (const li of node.children) {
      if (li.tagName !== 'LI' || hidden(li)) continue;
      const own = [...li.childNodes].filter((c) => !(c.nodeType === 1 && (c.tagName === 'UL' || c.tagName === 'OL'))).map(inline).join('').trim();
      lines.push('  '.repeat(depth) + (node.tagName === 'OL' ? (n++) + '. ' : '- ') + own);
      for (const sub of li.children) if (sub.tagName === 'UL' || sub.tagName === 'OL') lines.push(...list(sub, depth + 1));
    }
    return lines;
  };
  const block = (el, depth) => {
    for (const node of el.childNodes) {
      if (node.nodeType === 3) { const t = node.data.replace(/\s+/g, ' ').trim(); if (t) out.push(t); continue; }
      if (node.nodeType !== 1 || SKIP.has(node.tagName) || hidden(node)) continue;
      if (root === document.body && CHROME.has(node.tagName)) continue;
      const tag = node.tagName;
      if (/^H[1-6]$/.test(tag)) out.push('#'.repeat(Number(tag[1])) + ' ' + inline(node).trim());
      else if (tag === 'P') { const t = inline(node).trim(); if (t) out.push(t); }
      else if (tag === 'UL' || tag === 'OL') out.push(list(node, depth).join('\n')); else if (tag === 'PRE') out.push('```\n' + node.innerText.replace(/\n$/, '') + '\n```');
      else if (tag === 'BLOCKQUOTE') out.push(inline(node).trim().split('\n').map((l) => '> ' + l).join('\n'));
      else if (tag === 'TABLE') {
        const rows = [...node.rows].map((r) => [...r.cells].map((c) => inline(c).trim().replace(/\|/g, '\\|')));
        if (rows.length) {
          const lines = ['| ' + rows[0].join(' | ') + ' |', '|' + rows[0].map(() => ' --- |').join('')];
          for (const r of rows.slice(1)) lines.push('| ' + r.join(' | ') + ' |');
          out.push(lines.join('\n'));
        }
      } else if (tag === 'HR') out.push('---');
      else if (INLINE.has(tag)) { const t = inline(node).trim(); if (t) out.push(t); }
      else block(node, depth);
    }
  };
  block(root, 0);
  const all = out.join('\n\n').replace(/\n{3,}/g, '\n\n');
  return { text: all.slice(offset, offset + max), total: all.length, title: document.title };
}
