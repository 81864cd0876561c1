// Kapture scenario "session" (This agent session), exported for Playwright Test (TypeScript).
// The browser actions of the current MCP session, as Kapture ran them.
// Run:  npm install -D @playwright/test  &&  npx playwright test session.spec.ts
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

test("This agent session", async ({ page: firstPage }) => {
  let page: Page = firstPage;
  try {
    secretInput("secret_1", "KAPTURE_SECRET_SECRET_1");
    secretInput("secret_2", "KAPTURE_SECRET_SECRET_2");
    // 1. navigate http://127.0.0.1:8080/shop/login.html
    await page.goto("http://127.0.0.1:8080/shop/login.html", { timeout: LOAD_MS });
    // 2. type role "textbox" "User"
    await act(page, "step 2 (type)", [{"by": "role", "value": ["textbox", "User"]}], (l) => l.fill("ada", { timeout: ATTEMPT_MS }));
    // 3. type css "#password"
    if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 3: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
    await act(page, "step 3 (type)", [{"by": "css", "value": "#password"}], (l) => l.fill(inputs["secret_1"], { timeout: ATTEMPT_MS }));
    await page.keyboard.press('Enter');
    // 4. check role "checkbox" "Remember me"
    await act(page, "step 4 (check)", [{"by": "role", "value": ["checkbox", "Remember me"]}], (l) => l.setChecked(true, { timeout: ATTEMPT_MS }));
    // 5. type css "#city"
    await act(page, "step 5 (type)", [{"by": "css", "value": "#city"}], (l) => l.fill("Paris", { timeout: ATTEMPT_MS }));
    // 6. type css "#pin"
    if (new URL(page.url()).origin !== "http://127.0.0.1:8080") throw new Error("step 6: its secret is typed only on http://127.0.0.1:8080, where it was recorded");
    await act(page, "step 6 (type)", [{"by": "css", "value": "#pin"}], (l) => l.fill(inputs["secret_2"], { timeout: ATTEMPT_MS }));
    // 7. click role "button" "Log in"
    await act(page, "step 7 (click)", [{"by": "role", "value": ["button", "Log in"]}], (l) => l.click({ timeout: ATTEMPT_MS }));
    // 8. hover role "link" "Help"
    await act(page, "step 8 (hover)", [{"by": "role", "value": ["link", "Help"]}], (l) => l.hover({ timeout: ATTEMPT_MS }));
    // 9. click text "Open card"
    await act(page, "step 9 (click)", [{"by": "text", "value": "Open card"}], (l) => l.click({ timeout: ATTEMPT_MS }));
    // 10. select_option css "#size"
    await act(page, "step 10 (select_option)", [{"by": "css", "value": "#size"}], (l) => l.selectOption(["L", "XL"], { timeout: ATTEMPT_MS }));
    // 11. press_key Escape
    await page.keyboard.press("Escape");
    // 12. go_back
    await page.goBack({ timeout: LOAD_MS });
    // 13. go_forward
    await page.goForward({ timeout: LOAD_MS });
    // 14. click
    console.error("kapture export: step 14 skipped: click has no locator");
    console.log(JSON.stringify({ ok: true, url: page.url(), title: await page.title() }));
  } catch (e) {
    const message = redact(e instanceof Error ? e.message : e);
    console.log(JSON.stringify({ ok: false, error: message }));
    throw new Error(message);
  }
});
