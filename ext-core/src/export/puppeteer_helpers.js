
// A Puppeteer argument in quotes (its parser unescapes backslashes).
function pArg(value) {
  return '"' + String(value).replace(/[\\"]/g, '\\$&') + '"';
}

// The Puppeteer selector of a recorded locator; null when it cannot be expressed.
function selectorFor(loc) {
  const v = loc.value;
  switch (loc.by) {
    case 'test_id': return testIdCss(v);
    case 'role': {
      const [role, name] = v;
      const n = String(name);
      // The ARIA query syntax has no escapes: pick a quote the name does not contain.
      const q = !n.includes('"') ? '"' : !n.includes("'") ? "'" : null;
      if (q === null || !/^[a-z-]+$/i.test(String(role))) return null;
      return `::-p-aria(${pArg(`[name=${q}${n}${q}][role="${role}"]`)})`;
    }
    case 'label': return `::-p-xpath(${pArg(labelXpath(v))})`;
    case 'id': return `[id=${cssString(v)}]`;
    case 'name': return `[name=${cssString(v)}]`;
    case 'text': return `::-p-text(${pArg(v)})`;
    case 'css': return String(v);
    case 'xpath': return `::-p-xpath(${pArg(v)})`;
    default: return null;
  }
}

// Run `action` on the first locator that works, in rank order, like Kapture's own replay.
async function act(what, locators, action, visible = true) {
  const tried = [];
  for (const loc of locators) {
    const selector = selectorFor(loc);
    if (selector === null) continue;
    const locator = page.locator(selector).setTimeout(ATTEMPT_MS).setVisibility(visible ? 'visible' : null);
    try {
      return await action(locator);
    } catch (e) {
      tried.push(`${loc.by}: ${firstLine(e)}`);
    }
  }
  throw new Error(`${what}: no locator worked (${tried.join('; ') || 'none usable'})`);
}

// Choose options by value or by label, as Kapture does, and tell the page.
async function selectValues(locator, values) {
  const el = await locator.waitHandle();
  try {
    const found = await el.evaluate((select, wanted) => {
      let hits = 0;
      for (const option of select.options) {
        const hit = wanted.includes(option.value) || wanted.includes(option.label.trim());
        if (hit) hits += 1;
        if (select.multiple || hit) option.selected = hit;
      }
      select.dispatchEvent(new Event('input', { bubbles: true }));
      select.dispatchEvent(new Event('change', { bubbles: true }));
      return hits;
    }, values);
    if (!found) throw new Error(`no option is ${JSON.stringify(values)}`);
  } finally {
    await el.dispose();
  }
}

async function setChecked(locator, want) {
  const el = await locator.waitHandle();
  try {
    const on = await el.evaluate((e) => Boolean(e.checked));
    // A DOM click also reaches checkboxes that are visually hidden behind a styled label.
    if (on !== want) await el.evaluate((e) => e.click());
  } finally {
    await el.dispose();
  }
}

// "Enter", or a chord such as "Control+a".
async function pressKey(combo) {
  const keys = combo === '+' ? ['+'] : String(combo).split('+').filter(Boolean);
  const last = keys.pop();
  for (const k of keys) await page.keyboard.down(k);
  await page.keyboard.press(last);
  for (const k of keys.reverse()) await page.keyboard.up(k);
}

async function waitForPage(want) {
  const deadline = Date.now() + LOAD_MS;
  while (!samePage(page.url(), want)) {
    if (Date.now() > deadline) throw new Error(`the page did not reach ${want} (it is at ${page.url()})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await page.waitForFunction(() => document.readyState === 'complete', { timeout: LOAD_MS });
}
