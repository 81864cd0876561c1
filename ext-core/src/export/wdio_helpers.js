
// The WebdriverIO selector of a recorded locator; null when it cannot be expressed.
function selectorFor(loc) {
  const v = loc.value;
  switch (loc.by) {
    case 'test_id': return testIdCss(v);
    case 'role': return `aria/${v[1]}`; // accessible name; the role is checked in act()
    case 'label': return labelXpath(v);
    case 'id': return `[id=${cssString(v)}]`;
    case 'name': return `[name=${cssString(v)}]`;
    case 'text': {
      const t = xpathLiteral(v);
      return `//*[normalize-space(.)=${t}][not(.//*[normalize-space(.)=${t}])]`;
    }
    case 'css': return String(v);
    // WebdriverIO takes a selector that starts with / or ( as XPath.
    case 'xpath': return /^[/(]/.test(String(v)) ? String(v) : `(${v})`;
    default: return null;
  }
}

// Run `action` on the first locator that works, in rank order, like Kapture's own replay.
async function act(what, locators, action, visible = true) {
  const tried = [];
  for (const loc of locators) {
    const selector = selectorFor(loc);
    if (selector === null) continue;
    try {
      const el = await browser.$(selector);
      if (visible) await el.waitForDisplayed({ timeout: ATTEMPT_MS });
      else await el.waitForExist({ timeout: ATTEMPT_MS });
      if (loc.by === 'role') {
        const role = await el.getComputedRole().catch(() => null);
        if (role && role !== loc.value[0]) throw new Error(`found a ${role}, not a ${loc.value[0]}`);
      }
      return await action(el);
    } catch (e) {
      tried.push(`${loc.by}: ${firstLine(e)}`);
    }
  }
  throw new Error(`${what}: no locator worked (${tried.join('; ') || 'none usable'})`);
}

// Choose options by value, else by visible text, as Kapture does.
async function selectValues(el, values) {
  for (const value of values) {
    try {
      await el.selectByAttribute('value', value);
    } catch {
      await el.selectByVisibleText(value);
    }
  }
}

async function setChecked(el, want) {
  // A DOM click also reaches checkboxes that are visually hidden behind a styled label.
  if ((await el.isSelected()) !== want) await browser.execute((e) => e.click(), el);
}

// "Enter", or a chord such as "Control+a", as WebdriverIO keys.
function keyChord(combo) {
  const names = { Control: Key.Ctrl, Meta: Key.Command };
  const keys = combo === '+' ? ['+'] : String(combo).split('+').filter(Boolean);
  return keys.map((k) => names[k] ?? Key[k] ?? k);
}

async function waitForPage(want) {
  await browser.waitUntil(
    async () => samePage(await browser.getUrl(), want)
      && (await browser.execute(() => document.readyState)) === 'complete',
    { timeout: LOAD_MS, interval: 100, timeoutMsg: `the page did not reach ${want}` },
  );
}
