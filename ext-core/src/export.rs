//! Code export: a saved scenario (or an agent's session log of the same shape) as one
//! standalone script for Playwright (TypeScript or Python), Puppeteer or WebdriverIO, that
//! replays its chain against a Chromium it launches, trying each step's locators best first.
//! The fixed parts of each script are files of their own language under `export/`.
//!
//! Every value from the scenario reaches the script as a string literal of the target
//! language (never spliced into code), `{{placeholders}}` become reads of script inputs, and
//! secrets are read only from the environment: the script never holds a secret value.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::scenario::{Flag, Locator, Scenario, SecretDestination, Step, StepAction};

/// A script flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// A Playwright Test file (`npx playwright test`).
    PlaywrightTs,
    /// A Playwright script for Python's sync API.
    PlaywrightPython,
    /// An ES module for `puppeteer-core`.
    Puppeteer,
    /// An ES module for WebdriverIO's standalone mode.
    WebdriverIo,
}

impl Format {
    pub const ALL: [Format; 4] = [
        Format::PlaywrightTs,
        Format::PlaywrightPython,
        Format::Puppeteer,
        Format::WebdriverIo,
    ];

    /// The format named exactly as `as_str` spells it.
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::PlaywrightTs => "playwright-ts",
            Format::PlaywrightPython => "playwright-python",
            Format::Puppeteer => "puppeteer",
            Format::WebdriverIo => "webdriverio",
        }
    }

    /// The file extension the script wants (Playwright Test only collects `*.spec.ts`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::PlaywrightTs => "spec.ts",
            Format::PlaywrightPython => "py",
            Format::Puppeteer | Format::WebdriverIo => "mjs",
        }
    }

    /// A file name for `scenario`'s script, e.g. `login.puppeteer.mjs`.
    pub fn file_name(self, scenario: &str) -> String {
        match self {
            Format::PlaywrightTs | Format::PlaywrightPython => {
                format!("{scenario}.{}", self.extension())
            }
            Format::Puppeteer => format!("{scenario}.puppeteer.mjs"),
            Format::WebdriverIo => format!("{scenario}.wdio.mjs"),
        }
    }

    fn lang(self) -> Lang {
        match self {
            Format::PlaywrightPython => Lang::Py,
            _ => Lang::Js,
        }
    }
}

/// A value the script reads when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The placeholder's name (`user`, or `login.account` for a dependency's output).
    pub name: String,
    /// The environment variable the script reads it from.
    pub env: String,
    /// Read only from the environment; the script fails without it.
    pub secret: bool,
    /// The recorded value, used when the variable is unset (never for a secret).
    pub default: Option<String>,
}

/// The environment variable for an input: `KAPTURE_PARAM_` or `KAPTURE_SECRET_` + its name
/// in upper case with anything but letters and digits as `_`.
fn env_name(secret: bool, name: &str) -> String {
    let prefix = if secret {
        "KAPTURE_SECRET_"
    } else {
        "KAPTURE_PARAM_"
    };
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{upper}")
}

/// A piece of a string value: literal text or a `{{placeholder}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Var(String),
}

/// Split a string into text and placeholders, the way `scenario::substitute` reads it: a
/// string that is one placeholder (spaces around allowed) is just that placeholder, an
/// unclosed `{{` is text, and so is an empty `{{}}`.
fn parts(s: &str) -> Vec<Part> {
    let trimmed = s.trim();
    if let Some(inner) = trimmed
        .strip_prefix("{{")
        .and_then(|r| r.strip_suffix("}}"))
        .filter(|i| !i.contains("{{") && !i.contains("}}") && !i.trim().is_empty())
    {
        return vec![Part::Var(inner.trim().to_string())];
    }
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        let name = rest[start + 2..start + len].trim();
        text.push_str(&rest[..start]);
        if name.is_empty() {
            text.push_str(&rest[start..start + len + 2]);
        } else {
            if !text.is_empty() {
                out.push(Part::Text(std::mem::take(&mut text)));
            }
            out.push(Part::Var(name.to_string()));
        }
        rest = &rest[start + len + 2..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Part::Text(text));
    }
    out
}

/// The inputs the script of `scenario` reads: the parameters its chain uses (in declared
/// order), then placeholders no parameter declares (e.g. a dependency's output), which
/// have no default.
pub fn inputs(scenario: &Scenario) -> Vec<Input> {
    let mut used: Vec<String> = Vec::new();
    for name in scenario.chain.iter().flat_map(Step::placeholders) {
        if !used.contains(&name) {
            used.push(name);
        }
    }
    let mut out: Vec<Input> = Vec::new();
    let mut add = |name: &str, secret: bool, default: Option<String>| {
        if out.iter().any(|i| i.name == name) {
            return;
        }
        // Two names may upper-case alike (`a.b`, `a_b`): the later one gets a suffix.
        let base = env_name(secret, name);
        let env = std::iter::once(base.clone())
            .chain((2..).map(|n| format!("{base}_{n}")))
            .find(|e| !out.iter().any(|i| &i.env == e))
            .unwrap_or(base);
        out.push(Input {
            name: name.to_string(),
            env,
            secret,
            default,
        });
    };
    for p in scenario
        .parameters
        .iter()
        .filter(|p| used.contains(&p.name))
    {
        // A secret never has a default in the script, even if a hand-edited file gave one.
        let default = match (&p.default, p.secret) {
            (_, true) | (None, false) => None,
            (Some(Value::String(s)), false) => Some(s.clone()),
            (Some(other), false) => Some(other.to_string()),
        };
        add(&p.name, p.secret, default);
    }
    for name in &used {
        add(name, false, None);
    }
    out
}

/// One line naming the environment variables the script reads.
pub fn env_summary(scenario: &Scenario) -> String {
    let all = inputs(scenario);
    let list = |secret: bool| {
        let names: Vec<&str> = all
            .iter()
            .filter(|i| i.secret == secret)
            .map(|i| i.env.as_str())
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    format!(
        "The script reads KAPTURE_CHROMIUM, KAPTURE_CHROMIUM_ARGS (one flag per line) and KAPTURE_HEADLESS; parameters (a recorded default where the scenario file has one, else required): {}; secrets (required, environment only): {}.",
        list(false),
        list(true)
    )
}

/// The target language of literals and expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    /// JavaScript and TypeScript.
    Js,
    Py,
}

impl Lang {
    fn string(self, s: &str) -> String {
        match self {
            Lang::Js => js_string(s),
            Lang::Py => py_string(s),
        }
    }

    /// A string value with its placeholders as reads of `inputs`.
    fn string_expr(self, s: &str) -> String {
        let pieces: Vec<String> = parts(s)
            .into_iter()
            .map(|p| match p {
                Part::Text(t) => self.string(&t),
                Part::Var(name) => format!("inputs[{}]", self.string(&name)),
            })
            .collect();
        if pieces.is_empty() {
            self.string("")
        } else {
            pieces.join(" + ")
        }
    }

    /// Any JSON value as a literal of the language, strings through `string_expr`.
    fn value(self, v: &Value) -> String {
        match v {
            Value::Null => match self {
                Lang::Js => "null".into(),
                Lang::Py => "None".into(),
            },
            Value::Bool(b) => match (self, b) {
                (Lang::Js, true) => "true".into(),
                (Lang::Js, false) => "false".into(),
                (Lang::Py, true) => "True".into(),
                (Lang::Py, false) => "False".into(),
            },
            Value::Number(n) => n.to_string(),
            Value::String(s) => self.string_expr(s),
            Value::Array(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|i| self.value(i))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Object(map) => format!(
                "{{{}}}",
                map.iter()
                    .map(|(k, v)| format!("{}: {}", self.string(k), self.value(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn comment(self) -> &'static str {
        match self {
            Lang::Js => "//",
            Lang::Py => "#",
        }
    }
}

// The one literal function of each language, and the one for comments. Every string from
// a scenario (a page's title, test ids, labels, URLs, typed text; a name a person or agent
// chose) reaches a script only through these. Each writes ASCII only: no page string can
// end a literal or a line, reorder what a reader sees (bidi marks), or depend on how the
// file's bytes are decoded.

/// A JavaScript/TypeScript string literal: `"`, `\`, every control, `<` (so `</script>`
/// and `<!--` cannot form) and every non-ASCII code point escaped (`\uXXXX`, astral ones
/// as their surrogate pair), U+2028/U+2029 among them.
fn js_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            ' '..='~' => out.push(c),
            c => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// A Python string literal: printable ASCII as it is, `"` and `\` escaped, everything else
/// (controls, line terminators, U+2028/U+2029, `\x0c`, every non-ASCII letter) as `\x`,
/// `\u` or `\U` escapes. The script's first two lines are Kapture's own (the interpreter
/// line and a UTF-8 coding line), so no page string can declare another encoding either.
fn py_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Text for a one-line comment of either language: printable ASCII only (anything else,
/// line breaks and bidi marks among them, as a visible `\u{…}`), at most 160 characters.
fn comment_text(s: &str) -> String {
    let mut flat = String::new();
    for c in s.trim().chars() {
        match c {
            ' '..='~' => flat.push(c),
            '\t' | '\n' | '\r' => flat.push(' '),
            c => {
                let _ = write!(flat, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    match flat.char_indices().nth(160) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

/// Why a step is not exported (the script says so on stderr there), or `None`.
fn skipped(action: &StepAction) -> Option<String> {
    let why = match action {
        StepAction::Unknown { why, .. } => why
            .as_deref()
            .unwrap_or("is not a browser action the export knows"),
        StepAction::Click { on }
        | StepAction::Hover { on }
        | StepAction::Type { on, .. }
        | StepAction::Select { on, .. }
        | StepAction::Check { on, .. }
            if on.is_empty() =>
        {
            "has no locator"
        }
        _ => return None,
    };
    Some(format!("{} {why}", action.method()))
}

/// A short human description of a step for its comment: the method and its best locator.
fn describe(action: &StepAction) -> String {
    let method = action.method();
    match action {
        StepAction::PressKey { key: arg, .. }
        | StepAction::Navigate { url: arg }
        | StepAction::WaitForLoad { url: arg }
        | StepAction::NewTab { url: arg } => {
            return comment_text(&format!("{method} {arg}"));
        }
        StepAction::Scroll { x, y } => return format!("scroll to {}, {}", num(*x), num(*y)),
        _ => {}
    }
    let what = match action.locators().first() {
        Some(loc) => {
            let (by, value) = match serde_json::to_value(loc).unwrap_or_default() {
                Value::Object(o) => (o.get("by").cloned(), o.get("value").cloned()),
                _ => (None, None),
            };
            let by = by
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let value = match value {
                Some(Value::String(s)) => format!("{s:?}"),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map_or_else(|| i.to_string(), |s| format!("{s:?}"))
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            format!(" {by} {value}")
        }
        None => String::new(),
    };
    comment_text(&format!("{method}{what}"))
}

/// A number for a script: integral values without a fraction.
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "0".into()
    }
}

/// The lines of one step for `format`, indented by `pad`; `secret` says where the secrets
/// it names may go (the judgement replay makes too).
fn step_code(
    format: Format,
    n: usize,
    step: &Step,
    secret: &SecretDestination,
    pad: &str,
) -> String {
    let lang = format.lang();
    let action = &step.action;
    let what = lang.string(&format!("step {n} ({})", action.method()));
    let v = |x: &Value| lang.value(x);
    let s = |x: &str| lang.string_expr(x);
    let ls = |l: &[Locator]| v(&serde_json::to_value(l).unwrap_or_default());
    let flag = |f: &Flag| match f {
        Flag::Is(b) => v(&Value::Bool(*b)),
        Flag::Input(text) => format!("truthy({})", s(text)),
    };
    if let Some(why) = skipped(action) {
        let note = lang.string(&format!("kapture export: step {n} skipped: {why}"));
        let line = match lang {
            Lang::Js => format!("console.error({note});"),
            Lang::Py => format!("print({note}, file=sys.stderr)"),
        };
        return format!(
            "{pad}{} {n}. {}\n{pad}{line}\n",
            lang.comment(),
            describe(action)
        );
    }
    // A secret the recording never had there stops the script before the step.
    let guard = match secret {
        SecretDestination::Anywhere => None,
        SecretDestination::Nowhere(why) => {
            let note = lang.string(&format!("kapture export: step {n} refused: {why}"));
            let line = match lang {
                Lang::Js => format!("throw new Error({note});"),
                Lang::Py => format!("raise RuntimeError({note})"),
            };
            return format!(
                "{pad}{} {n}. {}\n{pad}{line}\n",
                lang.comment(),
                describe(action)
            );
        }
        SecretDestination::Only(origin) => {
            let (o, note) = (
                lang.string(origin),
                lang.string(&format!(
                    "step {n}: its secret is typed only on {origin}, where it was recorded"
                )),
            );
            Some(match format {
                Format::Puppeteer | Format::PlaywrightTs => {
                    format!("if (new URL(page.url()).origin !== {o}) throw new Error({note});")
                }
                Format::WebdriverIo => format!(
                    "if (new URL(await browser.getUrl()).origin !== {o}) throw new Error({note});"
                ),
                Format::PlaywrightPython => format!(
                    "if (lambda u: u.scheme + \"://\" + u.netloc.rsplit(\"@\", 1)[-1])(urlsplit(page.url)) != {o}: raise RuntimeError({note})"
                ),
            })
        }
    };
    // `Unknown` steps were skipped above.
    let lines: Vec<String> = match (format, action) {
        (Format::Puppeteer, act) => match act {
            StepAction::Navigate { url: u } => vec![format!("await page.goto({}, {{ waitUntil: 'load', timeout: LOAD_MS }});", s(u))],
            StepAction::WaitForLoad { url: u } => vec![format!("await waitForPage({});", s(u))],
            StepAction::NewTab { url: u } => vec![
                "page = await browser.newPage();".into(),
                format!("await page.goto({}, {{ waitUntil: 'load', timeout: LOAD_MS }});", s(u)),
            ],
            StepAction::GoBack => vec!["await page.goBack({ waitUntil: 'load', timeout: LOAD_MS });".into()],
            StepAction::GoForward => vec!["await page.goForward({ waitUntil: 'load', timeout: LOAD_MS });".into()],
            StepAction::Click { on: l } => vec![format!("await act({what}, {}, (l) => l.click());", ls(l))],
            StepAction::Hover { on: l } => vec![format!("await act({what}, {}, (l) => l.hover());", ls(l))],
            StepAction::Type { on: locators, text, submit } => {
                let mut out = vec![format!("await act({what}, {}, (l) => l.fill({}));", ls(locators), s(text))];
                if *submit {
                    out.push("await pressKey('Enter');".into());
                }
                out
            }
            StepAction::Select { on: l, values } => vec![format!("await act({what}, {}, (l) => selectValues(l, {}));", ls(l), v(&json!(values)))],
            StepAction::Check { on: l, checked: on } => vec![format!("await act({what}, {}, (l) => setChecked(l, {}), false);", ls(l), flag(on))],
            StepAction::PressKey { key: k, .. } => vec![format!("await pressKey({});", s(k))],
            StepAction::Scroll { x, y } => vec![format!("await page.evaluate((x, y) => window.scrollTo(x, y), {}, {});", num(*x), num(*y))],
            StepAction::Unknown { .. } => Vec::new(),
        },

        (Format::WebdriverIo, act) => match act {
            StepAction::Navigate { url: u } => vec![format!("await browser.url({});", s(u))],
            StepAction::WaitForLoad { url: u } => vec![format!("await waitForPage({});", s(u))],
            StepAction::NewTab { url: u } => vec![format!("await browser.newWindow({});", s(u))],
            StepAction::GoBack => vec!["await browser.back();".into()],
            StepAction::GoForward => vec!["await browser.forward();".into()],
            StepAction::Click { on: l } => vec![format!("await act({what}, {}, (el) => el.click());", ls(l))],
            StepAction::Hover { on: l } => vec![format!("await act({what}, {}, (el) => el.moveTo());", ls(l))],
            StepAction::Type { on: locators, text, submit } => {
                let mut out = vec![format!("await act({what}, {}, (el) => el.setValue({}));", ls(locators), s(text))];
                if *submit {
                    out.push("await browser.keys(keyChord('Enter'));".into());
                }
                out
            }
            StepAction::Select { on: l, values } => vec![format!("await act({what}, {}, (el) => selectValues(el, {}));", ls(l), v(&json!(values)))],
            StepAction::Check { on: l, checked: on } => vec![format!("await act({what}, {}, (el) => setChecked(el, {}), false);", ls(l), flag(on))],
            StepAction::PressKey { key: k, .. } => vec![format!("await browser.keys(keyChord({}));", s(k))],
            StepAction::Scroll { x, y } => vec![format!("await browser.execute((x, y) => window.scrollTo(x, y), {}, {});", num(*x), num(*y))],
            StepAction::Unknown { .. } => Vec::new(),
        },

        (Format::PlaywrightTs, act) => match act {
            StepAction::Navigate { url: u } => vec![format!("await page.goto({}, {{ timeout: LOAD_MS }});", s(u))],
            StepAction::WaitForLoad { url: u } => vec![format!("await page.waitForURL((url) => samePage(url.href, {}), {{ timeout: LOAD_MS }});", s(u))],
            StepAction::NewTab { url: u } => vec![
                "page = await page.context().newPage();".into(),
                format!("await page.goto({}, {{ timeout: LOAD_MS }});", s(u)),
            ],
            StepAction::GoBack => vec!["await page.goBack({ timeout: LOAD_MS });".into()],
            StepAction::GoForward => vec!["await page.goForward({ timeout: LOAD_MS });".into()],
            StepAction::Click { on: l } => vec![format!("await act(page, {what}, {}, (l) => l.click({{ timeout: ATTEMPT_MS }}));", ls(l))],
            StepAction::Hover { on: l } => vec![format!("await act(page, {what}, {}, (l) => l.hover({{ timeout: ATTEMPT_MS }}));", ls(l))],
            StepAction::Type { on: locators, text, submit } => {
                let mut out = vec![format!("await act(page, {what}, {}, (l) => l.fill({}, {{ timeout: ATTEMPT_MS }}));", ls(locators), s(text))];
                if *submit {
                    out.push("await page.keyboard.press('Enter');".into());
                }
                out
            }
            StepAction::Select { on: l, values } => vec![format!("await act(page, {what}, {}, (l) => l.selectOption({}, {{ timeout: ATTEMPT_MS }}));", ls(l), v(&json!(values)))],
            StepAction::Check { on: l, checked: on } => vec![format!("await act(page, {what}, {}, (l) => l.setChecked({}, {{ timeout: ATTEMPT_MS }}));", ls(l), flag(on))],
            StepAction::PressKey { key: k, .. } => vec![format!("await page.keyboard.press({});", s(k))],
            StepAction::Scroll { x, y } => vec![format!("await page.evaluate(([x, y]) => window.scrollTo(x, y), [{}, {}]);", num(*x), num(*y))],
            StepAction::Unknown { .. } => Vec::new(),
        },

        (Format::PlaywrightPython, act) => match act {
            StepAction::Navigate { url: u } => vec![format!("page.goto({}, timeout=LOAD_MS)", s(u))],
            StepAction::WaitForLoad { url: u } => vec![format!("want = {}", s(u)), "page.wait_for_url(lambda url: same_page(url, want), timeout=LOAD_MS)".into()],
            StepAction::NewTab { url: u } => vec![
                "page = page.context.new_page()".into(),
                format!("page.goto({}, timeout=LOAD_MS)", s(u)),
            ],
            StepAction::GoBack => vec!["page.go_back(timeout=LOAD_MS)".into()],
            StepAction::GoForward => vec!["page.go_forward(timeout=LOAD_MS)".into()],
            StepAction::Click { on: l } => vec![format!("act(page, {what}, {}, lambda l: l.click(timeout=ATTEMPT_MS))", ls(l))],
            StepAction::Hover { on: l } => vec![format!("act(page, {what}, {}, lambda l: l.hover(timeout=ATTEMPT_MS))", ls(l))],
            StepAction::Type { on: locators, text, submit } => {
                let mut out = vec![format!("act(page, {what}, {}, lambda l: l.fill({}, timeout=ATTEMPT_MS))", ls(locators), s(text))];
                if *submit {
                    out.push("page.keyboard.press(\"Enter\")".into());
                }
                out
            }
            StepAction::Select { on: l, values } => vec![format!("act(page, {what}, {}, lambda l: l.select_option({}, timeout=ATTEMPT_MS))", ls(l), v(&json!(values)))],
            StepAction::Check { on: l, checked: on } => vec![format!("act(page, {what}, {}, lambda l: l.set_checked({}, timeout=ATTEMPT_MS))", ls(l), flag(on))],
            StepAction::PressKey { key: k, .. } => vec![format!("page.keyboard.press({})", s(k))],
            StepAction::Scroll { x, y } => vec![format!("page.evaluate(\"([x, y]) => window.scrollTo(x, y)\", [{}, {}])", num(*x), num(*y))],
            StepAction::Unknown { .. } => Vec::new(),
        },
    };
    let mut out = format!("{pad}{} {n}. {}\n", lang.comment(), describe(action));
    for line in guard.into_iter().chain(lines) {
        out.push_str(pad);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The comment block at the top of every script.
fn header(scenario: &Scenario, format: Format) -> String {
    let c = format.lang().comment();
    let library = match format {
        Format::PlaywrightTs => "Playwright Test (TypeScript)",
        Format::PlaywrightPython => "Playwright for Python",
        Format::Puppeteer => "Puppeteer (puppeteer-core)",
        Format::WebdriverIo => "WebdriverIO (standalone)",
    };
    let file = format.file_name(&scenario.name);
    let run = match format {
        Format::PlaywrightTs => format!("npm install -D @playwright/test  &&  npx playwright test {file}"),
        Format::PlaywrightPython => format!("pip install playwright  &&  python3 {file}"),
        Format::Puppeteer => format!("npm install puppeteer-core  &&  node {file}"),
        Format::WebdriverIo => format!("npm install webdriverio  &&  CHROMEDRIVER_PATH=/path/to/chromedriver node {file}   (a chromedriver matching the browser; without CHROMEDRIVER_PATH WebdriverIO downloads one)"),
    };
    let mut lines = vec![format!(
        "Kapture scenario {}{}, exported for {library}.",
        comment_text(&format!("{:?}", scenario.name)),
        if scenario.title.trim().is_empty() {
            String::new()
        } else {
            format!(" ({})", comment_text(&scenario.title))
        }
    )];
    if !scenario.description.trim().is_empty() {
        lines.push(comment_text(&scenario.description));
    }
    if !scenario.dependencies.is_empty() {
        let deps: Vec<&str> = scenario
            .dependencies
            .iter()
            .map(|d| d.scenario.as_str())
            .collect();
        lines.push(comment_text(&format!(
            "It depends on {} (not included: run or export them first).",
            deps.join(", ")
        )));
    }
    lines.push(format!("Run:  {run}"));
    lines.push("Environment:".into());
    lines.push("  KAPTURE_CHROMIUM       the browser to launch (default /usr/bin/chromium)".into());
    lines.push(
        "  KAPTURE_CHROMIUM_ARGS  extra browser flags, one per line (flags may contain spaces);"
            .into(),
    );
    lines.push("                         a value without a newline is split at spaces".into());
    lines.push("  KAPTURE_HEADLESS       0 shows the browser window (default headless)".into());
    for i in inputs(scenario) {
        lines.push(if i.secret {
            format!(
                "  {}  secret {}, required, read only from the environment",
                i.env,
                comment_text(&i.name)
            )
        } else {
            match &i.default {
                Some(d) => format!(
                    "  {}  parameter {} (recorded default {})",
                    i.env,
                    comment_text(&i.name),
                    comment_text(&format!("{d:?}"))
                ),
                None => format!("  {}  parameter {}, required", i.env, comment_text(&i.name)),
            }
        });
    }
    lines.push("Each element step tries its recorded locators best first, ATTEMPT_MS each.".into());
    lines.push(
        "Prints one JSON line {\"ok\":true,\"url\":...,\"title\":...} and exits 0; on failure"
            .into(),
    );
    lines.push("{\"ok\":false,\"error\":...} and a non-zero exit code.".into());
    lines
        .iter()
        .map(|l| format!("{c} {l}\n").replace(&format!("{c} \n"), &format!("{c}\n")))
        .collect()
}

/// The lines that read the inputs, for `lang`, indented by `pad`.
fn input_code(scenario: &Scenario, lang: Lang, pad: &str) -> String {
    let mut out = String::new();
    for i in inputs(scenario) {
        let (name, env) = (lang.string(&i.name), lang.string(&i.env));
        let line = match (lang, i.secret, &i.default) {
            (Lang::Js, true, _) => format!("secretInput({name}, {env});"),
            (Lang::Js, false, Some(d)) => format!("paramInput({name}, {env}, {});", lang.string(d)),
            (Lang::Js, false, None) => format!("paramInput({name}, {env}, null);"),
            (Lang::Py, true, _) => format!("secret_input({name}, {env})"),
            (Lang::Py, false, Some(d)) => format!("param_input({name}, {env}, {})", lang.string(d)),
            (Lang::Py, false, None) => format!("param_input({name}, {env}, None)"),
        };
        let _ = writeln!(out, "{pad}{line}");
    }
    out
}

fn steps_code(scenario: &Scenario, format: Format, pad: &str) -> String {
    let secrets = scenario.secret_destinations();
    scenario
        .chain
        .iter()
        .zip(secrets)
        .enumerate()
        .map(|(i, (step, secret))| step_code(format, i + 1, step, &secret, pad))
        .collect()
}

/// A complete runnable script for `scenario` in `format`.
pub fn export(scenario: &Scenario, format: Format) -> String {
    let mut out = String::new();
    if format == Format::PlaywrightPython {
        // Lines 1 and 2 are fixed: Python reads a coding declaration only there, and this
        // one pins UTF-8 whatever any later line says.
        out.push_str("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n");
    }
    out.push_str(&header(scenario, format));
    match format {
        Format::Puppeteer => {
            out.push_str(PUPPETEER_PRELUDE);
            out.push_str(JS_COMMON);
            out.push_str(PUPPETEER_HELPERS);
            out.push_str("\nasync function main() {\n");
            out.push_str(&input_code(scenario, Lang::Js, "  "));
            out.push_str(PUPPETEER_LAUNCH);
            out.push_str(&steps_code(scenario, format, "  "));
            out.push_str(PUPPETEER_END);
        }
        Format::WebdriverIo => {
            out.push_str(WDIO_PRELUDE);
            out.push_str(JS_COMMON);
            out.push_str(WDIO_HELPERS);
            out.push_str("\nasync function main() {\n");
            out.push_str(&input_code(scenario, Lang::Js, "  "));
            out.push_str(WDIO_LAUNCH);
            out.push_str(&steps_code(scenario, format, "  "));
            out.push_str(WDIO_END);
        }
        Format::PlaywrightTs => {
            out.push_str(PLAYWRIGHT_TS_PRELUDE);
            let title = if scenario.title.trim().is_empty() {
                &scenario.name
            } else {
                &scenario.title
            };
            let _ = writeln!(
                out,
                "\ntest({}, async ({{ page: firstPage }}) => {{",
                js_string(title)
            );
            out.push_str("  let page: Page = firstPage;\n");
            out.push_str("  try {\n");
            out.push_str(&input_code(scenario, Lang::Js, "    "));
            out.push_str(&steps_code(scenario, format, "    "));
            out.push_str(PLAYWRIGHT_TS_END);
        }
        Format::PlaywrightPython => {
            out.push_str(PLAYWRIGHT_PY_PRELUDE);
            out.push_str("\n\ndef run(p):\n");
            out.push_str(&input_code(scenario, Lang::Py, "    "));
            out.push_str(PLAYWRIGHT_PY_LAUNCH);
            out.push_str(&steps_code(scenario, format, "        "));
            out.push_str(PLAYWRIGHT_PY_END);
        }
    }
    out
}

// The fixed parts of the scripts, kept as files of their own language under `export/`
// (pieces, not whole scripts: `export` puts them around the generated lines). They hold no
// scenario data: that arrives only as literals in the generated lines above.

/// Shared by the two plain-JavaScript flavours (Puppeteer, WebdriverIO).
const JS_COMMON: &str = include_str!("export/common.js");
const PUPPETEER_PRELUDE: &str = include_str!("export/puppeteer_prelude.js");
const PUPPETEER_HELPERS: &str = include_str!("export/puppeteer_helpers.js");
const PUPPETEER_LAUNCH: &str = include_str!("export/puppeteer_launch.js");
const PUPPETEER_END: &str = include_str!("export/puppeteer_end.js");
const WDIO_PRELUDE: &str = include_str!("export/wdio_prelude.js");
const WDIO_HELPERS: &str = include_str!("export/wdio_helpers.js");
const WDIO_LAUNCH: &str = include_str!("export/wdio_launch.js");
const WDIO_END: &str = include_str!("export/wdio_end.js");
const PLAYWRIGHT_TS_PRELUDE: &str = include_str!("export/playwright_prelude.ts");
const PLAYWRIGHT_TS_END: &str = include_str!("export/playwright_end.ts");
const PLAYWRIGHT_PY_PRELUDE: &str = include_str!("export/playwright_prelude.py");
const PLAYWRIGHT_PY_LAUNCH: &str = include_str!("export/playwright_launch.py");
const PLAYWRIGHT_PY_END: &str = include_str!("export/playwright_end.py");

#[cfg(test)]
mod tests {
    use super::*;

    /// A login as the recorder saves it, plus one of each other step.
    fn login() -> Scenario {
        serde_json::from_value(json!({
            "name": "login",
            "title": "Log in",
            "parameters": [
                {"name": "username", "secret": true},
                {"name": "password", "secret": true, "default": "LEAKED-DEFAULT"},
                {"name": "q", "default": "shoes"},
                {"name": "unused", "default": "never read"}
            ],
            "chain": [
                {"method": "navigate", "params": {"url": "http://127.0.0.1:8000/login.html"}},
                {"method": "type", "params": {"locators": [
                    {"by": "role", "value": ["textbox", "User"]},
                    {"by": "label", "value": "User"},
                    {"by": "id", "value": "user"},
                    {"by": "name", "value": "user"},
                    {"by": "css", "value": "#login > label > input"},
                    {"by": "xpath", "value": "/html/body/form/label[1]/input"}
                ], "text": "{{username}}"}},
                {"method": "type", "params": {"locators": [{"by": "id", "value": "password"}], "text": "{{password}}"}},
                {"method": "type", "params": {"locators": [{"by": "test_id", "value": "search"}], "text": "{{ q }}"}},
                {"method": "click", "params": {"locators": [
                    {"by": "role", "value": ["button", "Log in"]},
                    {"by": "text", "value": "Log in"}
                ]}},
                {"method": "wait_for_load", "params": {"url": "http://127.0.0.1:8000/home.html"}},
                {"method": "select_option", "params": {"locators": [{"by": "name", "value": "size"}], "values": ["M"]}},
                {"method": "check", "params": {"locators": [{"by": "label", "value": "Remember me"}], "checked": true}},
                {"method": "press_key", "params": {"locators": [{"by": "css", "value": "#q"}], "key": "Enter"}},
                {"method": "scroll", "params": {"x": 0.0, "y": 400.0}},
                {"method": "new_tab", "params": {"url": "http://127.0.0.1:8000/page-b.html?u={{username}}&q={{q}}"}},
                {"method": "browser_snapshot", "params": {}}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn formats_parse_by_their_exact_names() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.as_str()), Some(f));
        }
        assert_eq!(Format::parse("puppeteer"), Some(Format::Puppeteer));
        assert_eq!(Format::parse("Puppeteer"), None);
        assert_eq!(Format::parse("playwright"), None);
        assert_eq!(Format::parse(""), None);
        assert_eq!(Format::PlaywrightTs.extension(), "spec.ts");
        assert_eq!(Format::PlaywrightPython.file_name("login"), "login.py");
        assert_eq!(Format::Puppeteer.file_name("login"), "login.puppeteer.mjs");
    }

    #[test]
    fn placeholders_split_like_substitution_reads_them() {
        use Part::{Text, Var};
        assert_eq!(parts(" {{ user }} "), [Var("user".into())]);
        assert_eq!(
            parts("a {{x}}-{{login.id}}!"),
            [
                Text("a ".into()),
                Var("x".into()),
                Text("-".into()),
                Var("login.id".into()),
                Text("!".into())
            ]
        );
        assert_eq!(parts("a {{b"), [Text("a {{b".into())]);
        assert_eq!(parts("{{}} x"), [Text("{{}} x".into())]);
        assert_eq!(parts(""), []);
    }

    #[test]
    fn inputs_are_the_used_parameters_and_secrets_have_no_default() {
        let all = inputs(&login());
        let names: Vec<(&str, &str, bool)> = all
            .iter()
            .map(|i| (i.name.as_str(), i.env.as_str(), i.secret))
            .collect();
        assert_eq!(
            names,
            [
                ("username", "KAPTURE_SECRET_USERNAME", true),
                ("password", "KAPTURE_SECRET_PASSWORD", true),
                ("q", "KAPTURE_PARAM_Q", false),
            ]
        );
        assert_eq!(all[1].default, None, "a secret's default is never used");
        assert_eq!(all[2].default.as_deref(), Some("shoes"));
        let summary = env_summary(&login());
        assert!(
            summary.contains("KAPTURE_PARAM_Q")
                && summary.contains("KAPTURE_SECRET_USERNAME, KAPTURE_SECRET_PASSWORD"),
            "{summary}"
        );
        assert!(!summary.contains('\n'));

        // Undeclared placeholders (a dependency's output) are inputs without a default;
        // names that upper-case alike get distinct variables.
        let s: Scenario = serde_json::from_value(json!({"name": "x", "chain": [
            {"method": "navigate", "params": {"url": "http://h/{{login.id}}/{{login_id}}"}}
        ]}))
        .unwrap();
        let envs: Vec<String> = inputs(&s).into_iter().map(|i| i.env).collect();
        assert_eq!(envs, ["KAPTURE_PARAM_LOGIN_ID", "KAPTURE_PARAM_LOGIN_ID_2"]);
    }

    #[test]
    fn puppeteer_uses_its_native_selectors_with_fallback() {
        let script = export(&login(), Format::Puppeteer);
        for needle in [
            "import puppeteer from 'puppeteer-core';",
            "process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium'",
            "args: chromiumArgs()",
            "::-p-aria(",
            "::-p-text(",
            "::-p-xpath(",
            "async function act(",
            "setTimeout(ATTEMPT_MS)",
            r#"await page.goto("http://127.0.0.1:8000/login.html", { waitUntil: 'load', timeout: LOAD_MS });"#,
            r#"await act("step 2 (type)", [{"by": "role", "value": ["textbox", "User"]}, {"by": "label", "value": "User"}"#,
            r#"(l) => l.fill(inputs["username"]));"#,
            r#"(l) => l.click());"#,
            r#"await waitForPage("http://127.0.0.1:8000/home.html");"#,
            r#"(l) => selectValues(l, ["M"]));"#,
            r#"(l) => setChecked(l, true), false);"#,
            r#"await pressKey("Enter");"#,
            "window.scrollTo(x, y), 0, 400);",
            "page = await browser.newPage();",
            r#"secretInput("username", "KAPTURE_SECRET_USERNAME");"#,
            r#"paramInput("q", "KAPTURE_PARAM_Q", "shoes");"#,
            "// 5. click role \"button\" \"Log in\"",
            "step 12 skipped: browser_snapshot is not a browser action",
            "console.log(JSON.stringify(await main()));",
            "process.exitCode = 1;",
        ] {
            assert!(script.contains(needle), "missing {needle:?} in:\n{script}");
        }
    }

    #[test]
    fn playwright_ts_uses_get_by_locators() {
        let script = export(&login(), Format::PlaywrightTs);
        for needle in [
            "import { test, type Locator, type Page } from '@playwright/test';",
            "test.use({ headless: headless(), launchOptions: { executablePath: chromium(), args: chromiumArgs() } });",
            "page.getByRole(",
            "page.getByLabel(",
            "page.getByText(",
            "page.getByTestId(",
            "page.locator(`xpath=",
            r#"test("Log in", async ({ page: firstPage }) => {"#,
            r#"(l) => l.fill(inputs["username"], { timeout: ATTEMPT_MS }));"#,
            r#"(l) => l.selectOption(["M"], { timeout: ATTEMPT_MS }));"#,
            r#"(l) => l.setChecked(true, { timeout: ATTEMPT_MS }));"#,
            r#"page.waitForURL((url) => samePage(url.href, "http://127.0.0.1:8000/home.html"), { timeout: LOAD_MS });"#,
            "page = await page.context().newPage();",
            r#"await page.keyboard.press("Enter");"#,
        ] {
            assert!(script.contains(needle), "missing {needle:?} in:\n{script}");
        }
    }

    #[test]
    fn playwright_python_uses_the_sync_api() {
        let script = export(&login(), Format::PlaywrightPython);
        for needle in [
            "#!/usr/bin/env python3\n",
            "from playwright.sync_api import sync_playwright",
            "p.chromium.launch(executable_path=chromium(), headless=headless(), args=chromium_args())",
            "page.get_by_role(v[0], name=v[1], exact=True)",
            "page.get_by_label(",
            r#"        page.goto("http://127.0.0.1:8000/login.html", timeout=LOAD_MS)"#,
            r#"        act(page, "step 2 (type)", [{"by": "role", "value": ["textbox", "User"]}"#,
            r#"lambda l: l.fill(inputs["username"], timeout=ATTEMPT_MS))"#,
            r#"lambda l: l.set_checked(True, timeout=ATTEMPT_MS))"#,
            "page.wait_for_url(lambda url: same_page(url, want), timeout=LOAD_MS)",
            r#"    secret_input("password", "KAPTURE_SECRET_PASSWORD")"#,
            r#"    param_input("q", "KAPTURE_PARAM_Q", "shoes")"#,
            "print(\"kapture export: step 12 skipped: browser_snapshot",
            "sys.exit(main())",
        ] {
            assert!(script.contains(needle), "missing {needle:?} in:\n{script}");
        }
        assert!(!script.contains('\t'), "Python indents with spaces");
    }

    #[test]
    fn webdriverio_uses_its_selectors() {
        let script = export(&login(), Format::WebdriverIo);
        for needle in [
            "import { remote, Key } from 'webdriverio';",
            "'goog:chromeOptions'",
            "binary: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium'",
            "`aria/${v[1]}`",
            "getComputedRole()",
            r#"(el) => el.setValue(inputs["username"]));"#,
            r#"await browser.url("http://127.0.0.1:8000/login.html");"#,
            r#"await browser.newWindow("http://127.0.0.1:8000/page-b.html?u=" + inputs["username"] + "&q=" + inputs["q"]);"#,
            r#"await browser.keys(keyChord("Enter"));"#,
            "browser.deleteSession()",
        ] {
            assert!(script.contains(needle), "missing {needle:?} in:\n{script}");
        }
    }

    #[test]
    fn placeholders_inside_longer_strings_are_interpolated() {
        let s = login();
        let js = export(&s, Format::Puppeteer);
        assert!(
            js.contains(r#"await page.goto("http://127.0.0.1:8000/page-b.html?u=" + inputs["username"] + "&q=" + inputs["q"], "#),
            "{js}"
        );
        let py = export(&s, Format::PlaywrightPython);
        assert!(
            py.contains(r#"page.goto("http://127.0.0.1:8000/page-b.html?u=" + inputs["username"] + "&q=" + inputs["q"], timeout=LOAD_MS)"#),
            "{py}"
        );
        let code: Vec<&str> = js
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        assert!(
            !code.iter().any(|l| l.contains("{{")),
            "only comments show placeholders: {code:?}"
        );
    }

    #[test]
    fn secrets_are_read_only_from_the_environment() {
        for f in Format::ALL {
            let script = export(&login(), f);
            assert!(!script.contains("LEAKED-DEFAULT"), "{f:?}: {script}");
            assert!(script.contains("KAPTURE_SECRET_PASSWORD"), "{f:?}");
            assert!(!script.contains("KAPTURE_PARAM_PASSWORD"), "{f:?}");
            assert!(
                !script.contains("never read"),
                "unused parameters are not inputs"
            );
            assert!(
                script.contains("secrets are read only from the environment"),
                "the failure names the variable: {f:?}"
            );
            // Kapture masks what looks like a secret in every answer; a script must pass
            // through that unchanged or it would no longer run.
            let (masked, hits) = crate::secrets::redact(&script, &[]);
            assert_eq!(hits, 0, "{f:?}: {masked}");
        }
    }

    /// Values that would break out of a naive literal or comment.
    fn hostile() -> Scenario {
        let evil = "a\"b'c\\d`e${process.exit(7)}f\ng\r\u{2028}h */ # '''\"\"\" {x} é ☃ \u{0}";
        serde_json::from_value(json!({
            "name": "evil",
            "title": evil,
            "description": format!("line one\nprocess.exit(9); {evil}"),
            "parameters": [{"name": "x", "default": evil}],
            "chain": [
                {"method": "navigate", "params": {"url": format!("http://127.0.0.1/?q={evil}")}},
                {"method": "click", "params": {"locators": [
                    {"by": "text", "value": evil},
                    {"by": "role", "value": ["button", evil]},
                    {"by": "css", "value": evil},
                    {"by": "xpath", "value": evil}
                ]}},
                {"method": "type", "params": {"locators": [{"by": "label", "value": evil}], "text": format!("{evil}{{{{x}}}}{evil}")}},
                {"method": evil, "params": {}}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn hostile_strings_stay_inside_their_literals_and_comments() {
        let s = hostile();
        let js_lit = js_string("a\"b`${x}\u{2028}\n");
        assert_eq!(js_lit, r#""a\"b`${x}\u2028\n""#);
        assert_eq!(
            serde_json::from_str::<String>(&js_lit.replace("\\u2028", "\u{2028}")).unwrap(),
            "a\"b`${x}\u{2028}\n"
        );
        assert_eq!(
            py_string("a\"b'\\\n\u{0}é☃\u{2028}"),
            r#""a\"b'\\\n\x00\xe9\u2603\u2028""#
        );
        for f in Format::ALL {
            let script = export(&s, f);
            // No line of the script starts with text from the scenario: every raw newline
            // of it was escaped or flattened.
            for line in script.lines() {
                let t = line.trim_start();
                assert!(
                    !t.starts_with("g\r")
                        && !t.starts_with("process.exit(")
                        && !t.starts_with("h */"),
                    "{f:?}: a value broke out onto its own line: {line:?}"
                );
            }
            assert!(
                !script.contains('\u{2028}') && !script.contains('\u{0}'),
                "{f:?}"
            );
            // Every comment line is a comment, whatever the title held.
            let c = f.lang().comment();
            for line in script.lines().filter(|l| l.contains("line one")) {
                assert!(line.starts_with(c), "{f:?}: {line:?}");
            }
        }
        let js = export(&s, Format::Puppeteer);
        assert!(js.contains(&js_string("a\"b'c\\d`e${process.exit(7)}f\ng")[..20]));
        let py = export(&s, Format::PlaywrightPython);
        assert!(
            py.contains(r#"act(page, "step 3 (type)", [{"by": "label", "value": "a\"b'c\\d`e${process.exit(7)}f\ng\r\u2028h */ # '''\"\"\" {x} \xe9 \u2603 \x00"}], lambda l: l.fill("#),
            "{py}"
        );
    }

    /// Strings a page can choose to change how a script is read: a coding declaration
    /// (UTF-7 turns `+ACI-` into a quote), line terminators of every kind, bidi marks,
    /// quotes and backslashes, `</script>`, astral and invisible code points.
    const ATTACKS: [&str; 9] = [
        "-*- coding: utf-7 -*-",
        "x+ACI-)\nimport os; os.system('id') #",
        "a\"b'c\\d`e${1}f",
        "l1\nl2\rl3\u{2028}l4\u{2029}l5\u{85}l6\u{0c}l7\u{0b}l8\u{1c}",
        "\u{202e}evil\u{202c} \u{2066}x\u{2069} \u{200f}",
        "</script><!-- --> <script>alert(1)</script>",
        "é ☃ 𝒳 \u{feff} \u{0}",
        "\\N{LATIN SMALL LETTER A} \\u0041 \\x41 {0} %s",
        "'''\"\"\" */ // #",
    ];

    /// Run `program` with `args`, `input` on stdin; `None` when it is not installed.
    fn run(program: &str, args: &[&str], input: &str) -> Option<std::process::Output> {
        use std::io::Write as _;
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        Some(child.wait_with_output().unwrap())
    }

    /// The string values the language's own parser reads out of `literals` (one per line);
    /// `None` when the interpreter is missing.
    fn read_back(lang: Lang, literals: &str) -> Option<Vec<String>> {
        let out = match lang {
            Lang::Py => run(
                "python3",
                &["-c", "import ast,json,sys\nprint(json.dumps([ast.literal_eval(l) for l in sys.stdin.read().split('\\n') if l]))"],
                literals,
            )?,
            Lang::Js => run(
                "node",
                &["-e", "let t='';process.stdin.on('data',d=>t+=d).on('end',()=>console.log(JSON.stringify(t.split('\\n').filter(Boolean).map(l=>{const v=eval('('+l+')');if(typeof v!=='string')throw l;return v}))))"],
                literals,
            )?,
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(serde_json::from_slice(&out.stdout).unwrap())
    }

    #[test]
    fn each_languages_literal_reads_back_as_the_same_string_and_is_ascii() {
        for lang in [Lang::Js, Lang::Py] {
            let literals: Vec<String> = ATTACKS.iter().map(|a| lang.string(a)).collect();
            for l in &literals {
                assert!(l.chars().all(|c| (' '..='~').contains(&c)), "{lang:?}: {l}");
                assert!(
                    !l.contains("</") && !l.contains("<!--") || lang == Lang::Py,
                    "{l}"
                );
            }
            match read_back(lang, &literals.join("\n")) {
                Some(back) => assert_eq!(back, ATTACKS, "{lang:?}"),
                None => eprintln!("{lang:?}: interpreter missing, literals not read back"),
            }
        }
        for a in ATTACKS {
            let c = comment_text(a);
            assert!(c.chars().all(|c| (' '..='~').contains(&c)), "{c}");
        }
    }

    #[test]
    fn page_strings_in_an_exported_script_stay_literals_the_parser_reads_back() {
        // Every attack in every field a page can fill: title and description (the header's
        // comments), test ids and other locators, the URL, typed text.
        let mut chain = Vec::new();
        for a in ATTACKS {
            chain.push(json!({"method": "navigate", "params": {"url": format!("http://127.0.0.1/?q={a}")}}));
            chain.push(json!({"method": "click", "params": {"locators": [
                {"by": "test_id", "value": a}, {"by": "role", "value": ["button", a]},
                {"by": "label", "value": a}, {"by": "css", "value": a}
            ]}}));
            chain.push(json!({"method": "type", "params": {"locators": [{"by": "text", "value": a}], "text": a}}));
        }
        let s: Scenario = serde_json::from_value(json!({
            "name": "attack",
            "title": ATTACKS.join(" "),
            "description": ATTACKS.join("\n"),
            "chain": chain
        }))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        // Python: the file parsed from its bytes (a coding line would apply), and every
        // attack is one of its string constants, unchanged.
        let py = export(&s, Format::PlaywrightPython);
        assert!(py.starts_with("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n"));
        assert!(py.is_ascii());
        let file = dir.path().join("attack.py");
        std::fs::write(&file, &py).unwrap();
        let check = "import ast,json,sys\nt=ast.parse(open(sys.argv[1],'rb').read())\nprint(json.dumps(sorted({n.value for n in ast.walk(t) if isinstance(n,ast.Constant) and isinstance(n.value,str)})))";
        match run("python3", &["-c", check, &file.to_string_lossy()], "") {
            Some(out) => {
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let consts: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
                for a in ATTACKS {
                    assert!(
                        consts.iter().any(|c| c == a),
                        "{a:?} is no constant of the script"
                    );
                }
                assert!(!py.contains("\nimport os; os.system"));
            }
            None => eprintln!("python3 missing: the Python export was not parsed"),
        }
        // JavaScript: both plain flavours pass node's syntax check; ASCII only.
        for f in [Format::Puppeteer, Format::WebdriverIo] {
            let js = export(&s, f);
            assert!(js.is_ascii(), "{f:?}");
            let file = dir.path().join(f.file_name("attack"));
            std::fs::write(&file, &js).unwrap();
            match run("node", &["--check", &file.to_string_lossy()], "") {
                Some(out) => assert!(
                    out.status.success(),
                    "{f:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
                None => eprintln!("node missing: the {f:?} export was not checked"),
            }
        }
        assert!(export(&s, Format::PlaywrightTs).is_ascii());
    }

    #[test]
    fn agent_selectors_become_css_locators() {
        let s: Scenario = serde_json::from_value(json!({"name": "agent", "chain": [
            {"method": "click", "params": {"locators": [{"by": "css", "value": "form > button"}]}},
            {"method": "click", "params": {"selector": "#go"}},
            {"method": "type", "params": {"selector": "#q", "text": "hi", "submit": true}},
            {"method": "click", "params": {}}
        ]}))
        .unwrap();
        let script = export(&s, Format::PlaywrightTs);
        assert!(script.contains(r#"[{"by": "css", "value": "form > button"}]"#));
        assert!(script.contains(r##"[{"by": "css", "value": "#go"}]"##));
        assert!(script.contains("await page.keyboard.press('Enter');"));
        assert!(
            script.contains("step 4 skipped: click has no locator"),
            "{script}"
        );
    }
}
