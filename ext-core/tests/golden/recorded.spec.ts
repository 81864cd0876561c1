// Kapture scenario "checkout" (Log in and buy a mug), exported for Playwright Test (TypeScript).
// Recorded on the test shop.
// It depends on login (not included: run or export them first).
// Run:  npm install -D @playwright/test  &&  npx playwright test checkout.spec.ts
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

import { existsSync } from 'node:fs';
import { test, type Locator, type Page } from '@playwright/test';

const ATTEMPT_MS = 5_000; // each locator gets this long before the next one is tried
const LOAD_MS = 30_000; // navigations and waits for a page

type Loc = { by: string; value: unknown };

// Inputs by placeholder name; secret values also go to `hidden`, masked in every message.
const inputs: Record<string, string> = Object.create(null);
const hidden: string[] = [];

function paramInput(name: string, env: string, fallback: string | null): void {
  const value = process.env[env];
  if (value !== undefined) inputs[name] = value;
  else if (fallback !== null) inputs[name] = fallback;
  else throw new Error(`parameter ${name} has no value: set ${env}`);
}

function secretInput(name: string, env: string): void {
  const value = process.env[env];
  if (value === undefined) {
    throw new Error(`secret ${name} is missing: set ${env} (secrets are read only from the environment)`);
  }
  inputs[name] = value;
  if (value) hidden.push(value);
}

function redact(text: unknown): string {
  let out = String(text);
  for (const value of hidden) out = out.split(value).join('***');
  return out;
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split('\n')[0];
}

function truthy(value: unknown): boolean {
  return value === true || value === 'true' || value === '1';
}

// Flags may contain spaces (--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1), so
// they are one per line; a value without a newline is split at spaces.
function chromiumArgs(): string[] {
  const text = (process.env.KAPTURE_CHROMIUM_ARGS ?? '').trim();
  if (!text) return [];
  return text.split(text.includes('\n') ? '\n' : ' ').map((a) => a.trim()).filter(Boolean);
}

function headless(): boolean {
  return !['0', 'false', 'no'].includes((process.env.KAPTURE_HEADLESS ?? '').trim().toLowerCase());
}

// KAPTURE_CHROMIUM, else the system Chromium, else Playwright's own browser.
function chromium(): string | undefined {
  if (process.env.KAPTURE_CHROMIUM) return process.env.KAPTURE_CHROMIUM;
  return existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined;
}

// A CSS string: quotes and backslashes escaped, line breaks as hex escapes.
function cssString(value: unknown): string {
  return '"' + String(value).replace(/[\\"]/g, '\\$&').replace(/[\n\r\f]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `) + '"';
}

// Same page for a load wait: scheme, host and path (queries often hold per-visit values).
function samePage(actual: string, want: string): boolean {
  try {
    const a = new URL(actual);
    const b = new URL(want);
    return a.protocol === b.protocol && a.host === b.host && a.pathname === b.pathname;
  } catch {
    return actual === want;
  }
}

// The Playwright locator of a recorded locator; null when it cannot be expressed.
function locate(page: Page, loc: Loc): Locator | null {
  const v = loc.value;
  switch (loc.by) {
    case 'test_id': {
      const q = cssString(v);
      return page.getByTestId(String(v)).or(page.locator(`[data-test=${q}],[data-qa=${q}]`));
    }
    case 'role': {
      const [role, name] = v as [string, string];
      return page.getByRole(role as Parameters<Page['getByRole']>[0], { name, exact: true });
    }
    case 'label': return page.getByLabel(String(v), { exact: true });
    case 'id': return page.locator(`[id=${cssString(v)}]`);
    case 'name': return page.locator(`[name=${cssString(v)}]`);
    case 'text': return page.getByText(String(v), { exact: true });
    case 'css': return page.locator(`css=${String(v)}`);
    case 'xpath': return page.locator(`xpath=${String(v)}`);
    default: return null;
  }
}

// Run `action` on the first locator that works, in rank order, like Kapture's own replay.
async function act(page: Page, what: string, locators: Loc[], action: (l: Locator) => Promise<unknown>): Promise<void> {
  const tried: string[] = [];
  for (const loc of locators) {
    const target = locate(page, loc);
    if (target === null) continue;
    try {
      await action(target.first());
      return;
    } catch (e) {
      tried.push(`${loc.by}: ${firstLine(e)}`);
    }
  }
  throw new Error(`${what}: no locator worked (${tried.join('; ') || 'none usable'})`);
}

test.use({ headless: headless(), launchOptions: { executablePath: chromium(), args: chromiumArgs() } });
// Every call below has its own bound, so the test as a whole has none.
test.setTimeout(0);

test("Log in and buy a mug", async ({ page: firstPage }) => {
  let page: Page = firstPage;
  try {
    secretInput("email", "KAPTURE_SECRET_EMAIL");
    secretInput("password", "KAPTURE_SECRET_PASSWORD");
    paramInput("q", "KAPTURE_PARAM_Q", "mug");
    // 1. navigate http://127.0.0.1:8080/shop/login.html
    await page.goto("http://127.0.0.1:8080/shop/login.html", { timeout: LOAD_MS });
    // 2. type role "textbox" "Email"
    if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 2: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
    await act(page, "step 2 (type)", [{"by": "role", "value": ["textbox", "Email"]}, {"by": "label", "value": "Email"}, {"by": "id", "value": "email"}, {"by": "name", "value": "email"}, {"by": "css", "value": "form > input#email"}, {"by": "xpath", "value": "//input[@id='email']"}], (l) => l.fill(inputs["email"], { timeout: ATTEMPT_MS }));
    // 3. type role "textbox" "Password"
    if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 3: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
    await act(page, "step 3 (type)", [{"by": "role", "value": ["textbox", "Password"]}, {"by": "label", "value": "Password"}, {"by": "id", "value": "password"}, {"by": "name", "value": "password"}, {"by": "css", "value": "form > input#password"}, {"by": "xpath", "value": "//input[@id='password']"}], (l) => l.fill(inputs["password"], { timeout: ATTEMPT_MS }));
    // 4. press_key Enter
    await page.keyboard.press("Enter");
    // 5. wait_for_load http://127.0.0.1:8080/shop/index.html
    await page.waitForURL((url) => samePage(url.href, "http://127.0.0.1:8080/shop/index.html"), { timeout: LOAD_MS });
    // 6. type role "searchbox" "Search"
    await act(page, "step 6 (type)", [{"by": "role", "value": ["searchbox", "Search"]}, {"by": "label", "value": "Search"}, {"by": "id", "value": "q"}, {"by": "name", "value": "q"}, {"by": "css", "value": "form > input#q"}, {"by": "xpath", "value": "//input[@id='q']"}], (l) => l.fill(inputs["q"], { timeout: ATTEMPT_MS }));
    // 7. type role "textbox" "Note"
    await act(page, "step 7 (type)", [{"by": "role", "value": ["textbox", "Note"]}, {"by": "label", "value": "Note"}, {"by": "id", "value": "note"}, {"by": "name", "value": "note"}, {"by": "css", "value": "form > textarea#note"}, {"by": "xpath", "value": "//textarea[@id='note']"}], (l) => l.fill("ring twice", { timeout: ATTEMPT_MS }));
    // 8. click test_id "buy"
    await act(page, "step 8 (click)", [{"by": "test_id", "value": "buy"}, {"by": "role", "value": ["button", "Buy now"]}, {"by": "text", "value": "Buy now"}, {"by": "css", "value": "main > button:nth-of-type(2)"}, {"by": "xpath", "value": "/html[1]/body[1]/main[1]/button[2]"}], (l) => l.click({ timeout: ATTEMPT_MS }));
    // 9. select_option role "combobox" "Size"
    await act(page, "step 9 (select_option)", [{"by": "role", "value": ["combobox", "Size"]}, {"by": "label", "value": "Size"}, {"by": "id", "value": "size"}, {"by": "name", "value": "size"}, {"by": "css", "value": "form > select#size"}, {"by": "xpath", "value": "//select[@id='size']"}], (l) => l.selectOption(["L"], { timeout: ATTEMPT_MS }));
    // 10. check role "checkbox" "Gift wrap"
    await act(page, "step 10 (check)", [{"by": "role", "value": ["checkbox", "Gift wrap"]}, {"by": "label", "value": "Gift wrap"}, {"by": "id", "value": "gift"}, {"by": "name", "value": "gift"}, {"by": "css", "value": "form > input#gift"}, {"by": "xpath", "value": "//input[@id='gift']"}], (l) => l.setChecked(true, { timeout: ATTEMPT_MS }));
    // 11. scroll to 0, 400
    await page.evaluate(([x, y]) => window.scrollTo(x, y), [0, 400]);
    // 12. navigate http://127.0.0.1:8080/shop/cart.html
    await page.goto("http://127.0.0.1:8080/shop/cart.html", { timeout: LOAD_MS });
    // 13. new_tab http://127.0.0.1:8080/shop/help.html
    page = await page.context().newPage();
    await page.goto("http://127.0.0.1:8080/shop/help.html", { timeout: LOAD_MS });
    console.log(JSON.stringify({ ok: true, url: page.url(), title: await page.title() }));
  } catch (e) {
    const message = redact(e instanceof Error ? e.message : e);
    console.log(JSON.stringify({ ok: false, error: message }));
    throw new Error(message);
  }
});
