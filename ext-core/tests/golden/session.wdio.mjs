// Kapture scenario "session" (This agent session), exported for WebdriverIO (standalone).
// The browser actions of the current MCP session, as Kapture ran them.
// Run:  npm install webdriverio  &&  CHROMEDRIVER_PATH=/path/to/chromedriver node session.wdio.mjs   (a chromedriver matching the browser; without CHROMEDRIVER_PATH WebdriverIO downloads one)
// Environment:
//   KAPTURE_CHROMIUM       the browser to launch (default /usr/bin/chromium)
//   KAPTURE_CHROMIUM_ARGS  extra browser flags, one per line (flags may contain spaces);
//                          a value without a newline is split at spaces
//   KAPTURE_HEADLESS       0 shows the browser window (default headless)
//   KAPTURE_SECRET_SECRET_1  secret secret_1, required, read only from the environment
//   KAPTURE_SECRET_SECRET_2  secret secret_2, required, read only from the environment
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
  secretInput("secret_1", "KAPTURE_SECRET_SECRET_1");
  secretInput("secret_2", "KAPTURE_SECRET_SECRET_2");
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
  // 2. type role "textbox" "User"
  await act("step 2 (type)", [{"by": "role", "value": ["textbox", "User"]}], (el) => el.setValue("ada"));
  // 3. type css "#password"
  if (new URL(await browser.getUrl()).origin !== "http://127.0.0.1:8080") throw new Error("step 3: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 3 (type)", [{"by": "css", "value": "#password"}], (el) => el.setValue(inputs["secret_1"]));
  await browser.keys(keyChord('Enter'));
  // 4. check role "checkbox" "Remember me"
  await act("step 4 (check)", [{"by": "role", "value": ["checkbox", "Remember me"]}], (el) => setChecked(el, true), false);
  // 5. type css "#city"
  await act("step 5 (type)", [{"by": "css", "value": "#city"}], (el) => el.setValue("Paris"));
  // 6. type css "#pin"
  if (new URL(await browser.getUrl()).origin !== "http://127.0.0.1:8080") throw new Error("step 6: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 6 (type)", [{"by": "css", "value": "#pin"}], (el) => el.setValue(inputs["secret_2"]));
  // 7. click role "button" "Log in"
  await act("step 7 (click)", [{"by": "role", "value": ["button", "Log in"]}], (el) => el.click());
  // 8. hover role "link" "Help"
  await act("step 8 (hover)", [{"by": "role", "value": ["link", "Help"]}], (el) => el.moveTo());
  // 9. click text "Open card"
  await act("step 9 (click)", [{"by": "text", "value": "Open card"}], (el) => el.click());
  // 10. select_option css "#size"
  await act("step 10 (select_option)", [{"by": "css", "value": "#size"}], (el) => selectValues(el, ["L", "XL"]));
  // 11. press_key Escape
  await browser.keys(keyChord("Escape"));
  // 12. go_back
  await browser.back();
  // 13. go_forward
  await browser.forward();
  // 14. click
  console.error("kapture export: step 14 skipped: click has no locator");
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
