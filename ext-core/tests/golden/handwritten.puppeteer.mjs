// Kapture scenario "handwritten" (Written by hand), exported for Puppeteer (puppeteer-core).
// Run:  npm install puppeteer-core  &&  node handwritten.puppeteer.mjs
// Environment:
//   KAPTURE_CHROMIUM       the browser to launch (default /usr/bin/chromium)
//   KAPTURE_CHROMIUM_ARGS  extra browser flags, one per line (flags may contain spaces);
//                          a value without a newline is split at spaces
//   KAPTURE_HEADLESS       0 shows the browser window (default headless)
//   KAPTURE_PARAM_PAGE  parameter page (recorded default "shop/index.html")
//   KAPTURE_PARAM_USER  parameter user, required
//   KAPTURE_SECRET_PW  secret pw, required, read only from the environment
//   KAPTURE_PARAM_GIFT  parameter gift (recorded default "true")
// Each element step tries its recorded locators best first, ATTEMPT_MS each.
// Prints one JSON line {"ok":true,"url":...,"title":...} and exits 0; on failure
// {"ok":false,"error":...} and a non-zero exit code.

import puppeteer from 'puppeteer-core';

let browser;
let page;

const ATTEMPT_MS = 5_000; // each locator gets this long before the next one is tried
const LOAD_MS = 30_000; // navigations and waits for a page

// Inputs by placeholder name; secret values also go to `hidden`, masked in every message.
const inputs = Object.create(null);
const hidden = [];

function paramInput(name, env, fallback) {
  const value = process.env[env];
  if (value !== undefined) inputs[name] = value;
  else if (fallback !== null) inputs[name] = fallback;
  else throw new Error(`parameter ${name} has no value: set ${env}`);
}

function secretInput(name, env) {
  const value = process.env[env];
  if (value === undefined) {
    throw new Error(`secret ${name} is missing: set ${env} (secrets are read only from the environment)`);
  }
  inputs[name] = value;
  if (value) hidden.push(value);
}

function redact(text) {
  let out = String(text);
  for (const value of hidden) out = out.split(value).join('***');
  return out;
}

function firstLine(error) {
  return String(error instanceof Error ? error.message : error).split('\n')[0];
}

function truthy(value) {
  return value === true || value === 'true' || value === '1';
}

// Flags may contain spaces (--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1), so
// they are one per line; a value without a newline is split at spaces.
function chromiumArgs() {
  const text = (process.env.KAPTURE_CHROMIUM_ARGS ?? '').trim();
  if (!text) return [];
  return text.split(text.includes('\n') ? '\n' : ' ').map((a) => a.trim()).filter(Boolean);
}

function headless() {
  return !['0', 'false', 'no'].includes((process.env.KAPTURE_HEADLESS ?? '').trim().toLowerCase());
}

// A CSS string: quotes and backslashes escaped, line breaks as hex escapes.
function cssString(value) {
  return '"' + String(value).replace(/[\\"]/g, '\\$&').replace(/[\n\r\f]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `) + '"';
}

// An XPath string literal; XPath 1.0 has no escapes, so both quotes need concat().
function xpathLiteral(value) {
  const s = String(value);
  if (!s.includes('"')) return `"${s}"`;
  if (!s.includes("'")) return `'${s}'`;
  return `concat(${s.split('"').map((p) => `"${p}"`).join(`, '"', `)})`;
}

// The form control a <label> with this text names (wrapping it or by `for`), or aria-label.
function labelXpath(label) {
  const l = xpathLiteral(label);
  return `(//label[normalize-space(.)=${l}]//*[self::input or self::select or self::textarea]`
    + ` | //*[@id=//label[normalize-space(.)=${l}]/@for] | //*[@aria-label=${l}])`;
}

function testIdCss(value) {
  return ['data-testid', 'data-test', 'data-qa'].map((a) => `[${a}=${cssString(value)}]`).join(',');
}

// Same page for a load wait: scheme, host and path (queries often hold per-visit values).
function samePage(actual, want) {
  try {
    const a = new URL(actual);
    const b = new URL(want);
    return a.protocol === b.protocol && a.host === b.host && a.pathname === b.pathname;
  } catch {
    return actual === want;
  }
}

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

async function main() {
  paramInput("page", "KAPTURE_PARAM_PAGE", "shop/index.html");
  paramInput("user", "KAPTURE_PARAM_USER", null);
  secretInput("pw", "KAPTURE_SECRET_PW");
  paramInput("gift", "KAPTURE_PARAM_GIFT", "true");
  browser = await puppeteer.launch({
    executablePath: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium',
    headless: headless(),
    args: chromiumArgs(),
  });
  page = (await browser.pages())[0] ?? (await browser.newPage());
  // 1. navigate http://127.0.0.1:8080/{{page}}
  await page.goto("http://127.0.0.1:8080/" + inputs["page"], { waitUntil: 'load', timeout: LOAD_MS });
  // 2. click css "#go"
  await act("step 2 (click)", [{"by": "css", "value": "#go"}], (l) => l.click());
  // 3. type label "User"
  await act("step 3 (type)", [{"by": "label", "value": "User"}], (l) => l.fill(inputs["user"]));
  // 4. type css "#pw"
  if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 4: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 4 (type)", [{"by": "css", "value": "#pw"}], (l) => l.fill(inputs["pw"]));
  await pressKey('Enter');
  // 5. select_option name "size"
  await act("step 5 (select_option)", [{"by": "name", "value": "size"}], (l) => selectValues(l, ["L"]));
  // 6. check id "gift"
  await act("step 6 (check)", [{"by": "id", "value": "gift"}], (l) => setChecked(l, truthy(inputs["gift"])), false);
  // 7. check test_id "terms"
  await act("step 7 (check)", [{"by": "test_id", "value": "terms"}], (l) => setChecked(l, true), false);
  // 8. hover role "menuitem" "Account"
  await act("step 8 (hover)", [{"by": "role", "value": ["menuitem", "Account"]}, {"by": "text", "value": "Account"}], (l) => l.hover());
  // 9. go_back
  await page.goBack({ waitUntil: 'load', timeout: LOAD_MS });
  // 10. go_forward
  await page.goForward({ waitUntil: 'load', timeout: LOAD_MS });
  // 11. go_back
  await page.goBack({ waitUntil: 'load', timeout: LOAD_MS });
  // 12. go_forward
  await page.goForward({ waitUntil: 'load', timeout: LOAD_MS });
  // 13. press_key Escape
  await pressKey("Escape");
  // 14. scroll to 0, 250.5
  await page.evaluate((x, y) => window.scrollTo(x, y), 0, 250.5);
  // 15. wait_for_load http://127.0.0.1:8080/shop/cart.html
  await waitForPage("http://127.0.0.1:8080/shop/cart.html");
  // 16. new_tab http://127.0.0.1:8080/help.html
  page = await browser.newPage();
  await page.goto("http://127.0.0.1:8080/help.html", { waitUntil: 'load', timeout: LOAD_MS });
  // 17. click
  console.error("kapture export: step 17 skipped: click has no locator");
  // 18. evaluate
  console.error("kapture export: step 18 skipped: evaluate is not a browser action the export knows");
  return { ok: true, url: page.url(), title: await page.title() };
}

try {
  console.log(JSON.stringify(await main()));
} catch (e) {
  const message = redact(e instanceof Error ? e.message : e);
  console.log(JSON.stringify({ ok: false, error: message }));
  console.error(`kapture export: ${message}`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
}
