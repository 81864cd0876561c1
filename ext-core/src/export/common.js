
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
