
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
