// Kapture scenario "checkout" (Log in and buy a mug), exported for Puppeteer (puppeteer-core).
// Recorded on the test shop.
// It depends on login (not included: run or export them first).
// Run:  npm install puppeteer-core  &&  node checkout.puppeteer.mjs
// Environment:
//   KAPTURE_CHROMIUM       the browser to launch (default /usr/bin/chromium)
//   KAPTURE_CHROMIUM_ARGS  extra browser flags, one per line (flags may contain spaces);
//                          a value without a newline is split at spaces
//   KAPTURE_HEADLESS       0 shows the browser window (default headless)
//   KAPTURE_SECRET_EMAIL  secret email, required, read only from the environment
//   KAPTURE_SECRET_PASSWORD  secret password, required, read only from the environment
//   KAPTURE_PARAM_Q  parameter q (recorded default "mug")
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
  secretInput("email", "KAPTURE_SECRET_EMAIL");
  secretInput("password", "KAPTURE_SECRET_PASSWORD");
  paramInput("q", "KAPTURE_PARAM_Q", "mug");
  browser = await puppeteer.launch({
    executablePath: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium',
    headless: headless(),
    args: chromiumArgs(),
  });
  page = (await browser.pages())[0] ?? (await browser.newPage());
  // 1. navigate http://127.0.0.1:8080/shop/login.html
  await page.goto("http://127.0.0.1:8080/shop/login.html", { waitUntil: 'load', timeout: LOAD_MS });
  // 2. type role "textbox" "Email"
  if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 2: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 2 (type)", [{"by": "role", "value": ["textbox", "Email"]}, {"by": "label", "value": "Email"}, {"by": "id", "value": "email"}, {"by": "name", "value": "email"}, {"by": "css", "value": "form > input#email"}, {"by": "xpath", "value": "//input[@id='email']"}], (l) => l.fill(inputs["email"]));
  // 3. type role "textbox" "Password"
  if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 3: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 3 (type)", [{"by": "role", "value": ["textbox", "Password"]}, {"by": "label", "value": "Password"}, {"by": "id", "value": "password"}, {"by": "name", "value": "password"}, {"by": "css", "value": "form > input#password"}, {"by": "xpath", "value": "//input[@id='password']"}], (l) => l.fill(inputs["password"]));
  // 4. press_key Enter
  await pressKey("Enter");
  // 5. wait_for_load http://127.0.0.1:8080/shop/index.html
  await waitForPage("http://127.0.0.1:8080/shop/index.html");
  // 6. type role "searchbox" "Search"
  await act("step 6 (type)", [{"by": "role", "value": ["searchbox", "Search"]}, {"by": "label", "value": "Search"}, {"by": "id", "value": "q"}, {"by": "name", "value": "q"}, {"by": "css", "value": "form > input#q"}, {"by": "xpath", "value": "//input[@id='q']"}], (l) => l.fill(inputs["q"]));
  // 7. type role "textbox" "Note"
  await act("step 7 (type)", [{"by": "role", "value": ["textbox", "Note"]}, {"by": "label", "value": "Note"}, {"by": "id", "value": "note"}, {"by": "name", "value": "note"}, {"by": "css", "value": "form > textarea#note"}, {"by": "xpath", "value": "//textarea[@id='note']"}], (l) => l.fill("ring twice"));
  // 8. click test_id "buy"
  await act("step 8 (click)", [{"by": "test_id", "value": "buy"}, {"by": "role", "value": ["button", "Buy now"]}, {"by": "text", "value": "Buy now"}, {"by": "css", "value": "main > button:nth-of-type(2)"}, {"by": "xpath", "value": "/html[1]/body[1]/main[1]/button[2]"}], (l) => l.click());
  // 9. select_option role "combobox" "Size"
  await act("step 9 (select_option)", [{"by": "role", "value": ["combobox", "Size"]}, {"by": "label", "value": "Size"}, {"by": "id", "value": "size"}, {"by": "name", "value": "size"}, {"by": "css", "value": "form > select#size"}, {"by": "xpath", "value": "//select[@id='size']"}], (l) => selectValues(l, ["L"]));
  // 10. check role "checkbox" "Gift wrap"
  await act("step 10 (check)", [{"by": "role", "value": ["checkbox", "Gift wrap"]}, {"by": "label", "value": "Gift wrap"}, {"by": "id", "value": "gift"}, {"by": "name", "value": "gift"}, {"by": "css", "value": "form > input#gift"}, {"by": "xpath", "value": "//input[@id='gift']"}], (l) => setChecked(l, true), false);
  // 11. scroll to 0, 400
  await page.evaluate((x, y) => window.scrollTo(x, y), 0, 400);
  // 12. navigate http://127.0.0.1:8080/shop/cart.html
  await page.goto("http://127.0.0.1:8080/shop/cart.html", { waitUntil: 'load', timeout: LOAD_MS });
  // 13. new_tab http://127.0.0.1:8080/shop/help.html
  page = await browser.newPage();
  await page.goto("http://127.0.0.1:8080/shop/help.html", { waitUntil: 'load', timeout: LOAD_MS });
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
