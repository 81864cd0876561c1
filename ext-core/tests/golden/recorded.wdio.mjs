// Kapture scenario "checkout" (Log in and buy a mug), exported for WebdriverIO (standalone).
// Recorded on the test shop.
// It depends on login (not included: run or export them first).
// Run:  npm install webdriverio  &&  CHROMEDRIVER_PATH=/path/to/chromedriver node checkout.wdio.mjs   (a chromedriver matching the browser; without CHROMEDRIVER_PATH WebdriverIO downloads one)
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

import { remote, Key } from 'webdriverio';

let browser;

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

async function main() {
  secretInput("email", "KAPTURE_SECRET_EMAIL");
  secretInput("password", "KAPTURE_SECRET_PASSWORD");
  paramInput("q", "KAPTURE_PARAM_Q", "mug");
  browser = await remote({
    logLevel: 'error',
    capabilities: {
      browserName: 'chrome',
      'goog:chromeOptions': {
        binary: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium',
        args: [...(headless() ? ['--headless=new'] : []), ...chromiumArgs()],
      },
      // The chromedriver WebdriverIO starts (CHROMEDRIVER_PATH names one, else it downloads
      // one) takes connections from this machine only.
      'wdio:chromedriverOptions': { allowedIps: ['127.0.0.1'] },
    },
  });
  // 1. navigate http://127.0.0.1:8080/shop/login.html
  await browser.url("http://127.0.0.1:8080/shop/login.html");
  // 2. type role "textbox" "Email"
  if (new URL(await browser.getUrl()).origin !== "http://127.0.0.1:8080") throw new Error("step 2: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 2 (type)", [{"by": "role", "value": ["textbox", "Email"]}, {"by": "label", "value": "Email"}, {"by": "id", "value": "email"}, {"by": "name", "value": "email"}, {"by": "css", "value": "form > input#email"}, {"by": "xpath", "value": "//input[@id='email']"}], (el) => el.setValue(inputs["email"]));
  // 3. type role "textbox" "Password"
  if (new URL(await browser.getUrl()).origin !== "http://127.0.0.1:8080") throw new Error("step 3: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 3 (type)", [{"by": "role", "value": ["textbox", "Password"]}, {"by": "label", "value": "Password"}, {"by": "id", "value": "password"}, {"by": "name", "value": "password"}, {"by": "css", "value": "form > input#password"}, {"by": "xpath", "value": "//input[@id='password']"}], (el) => el.setValue(inputs["password"]));
  // 4. press_key Enter
  await browser.keys(keyChord("Enter"));
  // 5. wait_for_load http://127.0.0.1:8080/shop/index.html
  await waitForPage("http://127.0.0.1:8080/shop/index.html");
  // 6. type role "searchbox" "Search"
  await act("step 6 (type)", [{"by": "role", "value": ["searchbox", "Search"]}, {"by": "label", "value": "Search"}, {"by": "id", "value": "q"}, {"by": "name", "value": "q"}, {"by": "css", "value": "form > input#q"}, {"by": "xpath", "value": "//input[@id='q']"}], (el) => el.setValue(inputs["q"]));
  // 7. type role "textbox" "Note"
  await act("step 7 (type)", [{"by": "role", "value": ["textbox", "Note"]}, {"by": "label", "value": "Note"}, {"by": "id", "value": "note"}, {"by": "name", "value": "note"}, {"by": "css", "value": "form > textarea#note"}, {"by": "xpath", "value": "//textarea[@id='note']"}], (el) => el.setValue("ring twice"));
  // 8. click test_id "buy"
  await act("step 8 (click)", [{"by": "test_id", "value": "buy"}, {"by": "role", "value": ["button", "Buy now"]}, {"by": "text", "value": "Buy now"}, {"by": "css", "value": "main > button:nth-of-type(2)"}, {"by": "xpath", "value": "/html[1]/body[1]/main[1]/button[2]"}], (el) => el.click());
  // 9. select_option role "combobox" "Size"
  await act("step 9 (select_option)", [{"by": "role", "value": ["combobox", "Size"]}, {"by": "label", "value": "Size"}, {"by": "id", "value": "size"}, {"by": "name", "value": "size"}, {"by": "css", "value": "form > select#size"}, {"by": "xpath", "value": "//select[@id='size']"}], (el) => selectValues(el, ["L"]));
  // 10. check role "checkbox" "Gift wrap"
  await act("step 10 (check)", [{"by": "role", "value": ["checkbox", "Gift wrap"]}, {"by": "label", "value": "Gift wrap"}, {"by": "id", "value": "gift"}, {"by": "name", "value": "gift"}, {"by": "css", "value": "form > input#gift"}, {"by": "xpath", "value": "//input[@id='gift']"}], (el) => setChecked(el, true), false);
  // 11. scroll to 0, 400
  await browser.execute((x, y) => window.scrollTo(x, y), 0, 400);
  // 12. navigate http://127.0.0.1:8080/shop/cart.html
  await browser.url("http://127.0.0.1:8080/shop/cart.html");
  // 13. new_tab http://127.0.0.1:8080/shop/help.html
  await browser.newWindow("http://127.0.0.1:8080/shop/help.html");
  return { ok: true, url: await browser.getUrl(), title: await browser.getTitle() };
}

try {
  console.log(JSON.stringify(await main()));
} catch (e) {
  const message = redact(e instanceof Error ? e.message : e);
  console.log(JSON.stringify({ ok: false, error: message }));
  console.error(`kapture export: ${message}`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.deleteSession().catch(() => {});
}
