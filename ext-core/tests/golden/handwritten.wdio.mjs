// Kapture scenario "handwritten" (Written by hand), exported for WebdriverIO (standalone).
// Run:  npm install webdriverio  &&  CHROMEDRIVER_PATH=/path/to/chromedriver node handwritten.wdio.mjs   (a chromedriver matching the browser; without CHROMEDRIVER_PATH WebdriverIO downloads one)
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
  paramInput("page", "KAPTURE_PARAM_PAGE", "shop/index.html");
  paramInput("user", "KAPTURE_PARAM_USER", null);
  secretInput("pw", "KAPTURE_SECRET_PW");
  paramInput("gift", "KAPTURE_PARAM_GIFT", "true");
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
  // 1. navigate http://127.0.0.1:8080/{{page}}
  await browser.url("http://127.0.0.1:8080/" + inputs["page"]);
  // 2. click css "#go"
  await act("step 2 (click)", [{"by": "css", "value": "#go"}], (el) => el.click());
  // 3. type label "User"
  await act("step 3 (type)", [{"by": "label", "value": "User"}], (el) => el.setValue(inputs["user"]));
  // 4. type css "#pw"
  if (new URL(await browser.getUrl()).origin !== "http://127.0.0.1:8080") throw new Error("step 4: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
  await act("step 4 (type)", [{"by": "css", "value": "#pw"}], (el) => el.setValue(inputs["pw"]));
  await browser.keys(keyChord('Enter'));
  // 5. select_option name "size"
  await act("step 5 (select_option)", [{"by": "name", "value": "size"}], (el) => selectValues(el, ["L"]));
  // 6. check id "gift"
  await act("step 6 (check)", [{"by": "id", "value": "gift"}], (el) => setChecked(el, truthy(inputs["gift"])), false);
  // 7. check test_id "terms"
  await act("step 7 (check)", [{"by": "test_id", "value": "terms"}], (el) => setChecked(el, true), false);
  // 8. hover role "menuitem" "Account"
  await act("step 8 (hover)", [{"by": "role", "value": ["menuitem", "Account"]}, {"by": "text", "value": "Account"}], (el) => el.moveTo());
  // 9. go_back
  await browser.back();
  // 10. go_forward
  await browser.forward();
  // 11. go_back
  await browser.back();
  // 12. go_forward
  await browser.forward();
  // 13. press_key Escape
  await browser.keys(keyChord("Escape"));
  // 14. scroll to 0, 250.5
  await browser.execute((x, y) => window.scrollTo(x, y), 0, 250.5);
  // 15. wait_for_load http://127.0.0.1:8080/shop/cart.html
  await waitForPage("http://127.0.0.1:8080/shop/cart.html");
  // 16. new_tab http://127.0.0.1:8080/help.html
  await browser.newWindow("http://127.0.0.1:8080/help.html");
  // 17. click
  console.error("kapture export: step 17 skipped: click has no locator");
  // 18. evaluate
  console.error("kapture export: step 18 skipped: evaluate is not a browser action the export knows");
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
