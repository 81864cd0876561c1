#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Kapture scenario "checkout" (Log in and buy a mug), exported for Playwright for Python.
# Recorded on the test shop.
# It depends on login (not included: run or export them first).
# Run:  pip install playwright  &&  python3 checkout.py
# Environment:
#   KAPTURE_CHROMIUM       the browser to launch (default /usr/bin/chromium)
#   KAPTURE_CHROMIUM_ARGS  extra browser flags, one per line (flags may contain spaces);
#                          a value without a newline is split at spaces
#   KAPTURE_HEADLESS       0 shows the browser window (default headless)
#   KAPTURE_SECRET_EMAIL  secret email, required, read only from the environment
#   KAPTURE_SECRET_PASSWORD  secret password, required, read only from the environment
#   KAPTURE_PARAM_Q  parameter q (recorded default "mug")
# Each element step tries its recorded locators best first, ATTEMPT_MS each.
# Prints one JSON line {"ok":true,"url":...,"title":...} and exits 0; on failure
# {"ok":false,"error":...} and a non-zero exit code.

import json
import os
import sys
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

ATTEMPT_MS = 5_000  # each locator gets this long before the next one is tried
LOAD_MS = 30_000  # navigations and waits for a page

# Inputs by placeholder name; secret values also go to `hidden`, masked in every message.
inputs = {}
hidden = []


def param_input(name, env, fallback):
    value = os.environ.get(env)
    if value is not None:
        inputs[name] = value
    elif fallback is not None:
        inputs[name] = fallback
    else:
        raise RuntimeError(f"parameter {name} has no value: set {env}")


def secret_input(name, env):
    value = os.environ.get(env)
    if value is None:
        raise RuntimeError(f"secret {name} is missing: set {env} (secrets are read only from the environment)")
    inputs[name] = value
    if value:
        hidden.append(value)


def redact(text):
    out = str(text)
    for value in hidden:
        out = out.replace(value, "***")
    return out


def first_line(error):
    return (str(error).splitlines() or [""])[0]


def truthy(value):
    return value is True or value in ("true", "1")


# Flags may contain spaces (--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1), so
# they are one per line; a value without a newline is split at spaces.
def chromium_args():
    text = os.environ.get("KAPTURE_CHROMIUM_ARGS", "").strip()
    if not text:
        return []
    parts = text.split("\n") if "\n" in text else text.split(" ")
    return [a.strip() for a in parts if a.strip()]


def headless():
    return os.environ.get("KAPTURE_HEADLESS", "").strip().lower() not in ("0", "false", "no")


# KAPTURE_CHROMIUM, else the system Chromium, else Playwright's own browser.
def chromium():
    if os.environ.get("KAPTURE_CHROMIUM"):
        return os.environ["KAPTURE_CHROMIUM"]
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


# A CSS string: quotes and backslashes escaped, line breaks as hex escapes.
def css_string(value):
    out = str(value).replace("\\", "\\\\").replace('"', '\\"')
    for c in "\n\r\f":
        out = out.replace(c, "\\%x " % ord(c))
    return '"' + out + '"'


# Same page for a load wait: scheme, host and path (queries often hold per-visit values).
def same_page(actual, want):
    a, b = urlsplit(actual), urlsplit(want)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)


# The Playwright locator of a recorded locator; None when it cannot be expressed.
def locate(page, loc):
    by, v = loc.get("by"), loc.get("value")
    if by == "test_id":
        q = css_string(v)
        return page.get_by_test_id(str(v)).or_(page.locator(f"[data-test={q}],[data-qa={q}]"))
    if by == "role":
        return page.get_by_role(v[0], name=v[1], exact=True)
    if by == "label":
        return page.get_by_label(str(v), exact=True)
    if by == "id":
        return page.locator(f"[id={css_string(v)}]")
    if by == "name":
        return page.locator(f"[name={css_string(v)}]")
    if by == "text":
        return page.get_by_text(str(v), exact=True)
    if by == "css":
        return page.locator("css=" + str(v))
    if by == "xpath":
        return page.locator("xpath=" + str(v))
    return None


# Run `action` on the first locator that works, in rank order, like Kapture's own replay.
def act(page, what, locators, action):
    tried = []
    for loc in locators:
        target = locate(page, loc)
        if target is None:
            continue
        try:
            action(target.first)
            return
        except Exception as e:  # any failure moves on to the next locator
            tried.append(f"{loc.get('by')}: {first_line(e)}")
    raise RuntimeError(f"{what}: no locator worked ({'; '.join(tried) or 'none usable'})")


def run(p):
    secret_input("email", "KAPTURE_SECRET_EMAIL")
    secret_input("password", "KAPTURE_SECRET_PASSWORD")
    param_input("q", "KAPTURE_PARAM_Q", "mug")
    browser = p.chromium.launch(executable_path=chromium(), headless=headless(), args=chromium_args())
    try:
        page = browser.new_page()
        # 1. navigate http://127.0.0.1:8080/shop/login.html
        page.goto("http://127.0.0.1:8080/shop/login.html", timeout=LOAD_MS)
        # 2. type role "textbox" "Email"
        if (lambda u: u.scheme + "://" + u.netloc.rsplit("@", 1)[-1])(urlsplit(page.url)) != "http://127.0.0.1:8080": raise RuntimeError("step 2: its secret is typed only on http://127.0.0.1:8080, where it was recorded")
        act(page, "step 2 (type)", [{"by": "role", "value": ["textbox", "Email"]}, {"by": "label", "value": "Email"}, {"by": "id", "value": "email"}, {"by": "name", "value": "email"}, {"by": "css", "value": "form > input#email"}, {"by": "xpath", "value": "//input[@id='email']"}], lambda l: l.fill(inputs["email"], timeout=ATTEMPT_MS))
        # 3. type role "textbox" "Password"
        if (lambda u: u.scheme + "://" + u.netloc.rsplit("@", 1)[-1])(urlsplit(page.url)) != "http://127.0.0.1:8080": raise RuntimeError("step 3: its secret is typed only on http://127.0.0.1:8080, where it was recorded")
        act(page, "step 3 (type)", [{"by": "role", "value": ["textbox", "Password"]}, {"by": "label", "value": "Password"}, {"by": "id", "value": "password"}, {"by": "name", "value": "password"}, {"by": "css", "value": "form > input#password"}, {"by": "xpath", "value": "//input[@id='password']"}], lambda l: l.fill(inputs["password"], timeout=ATTEMPT_MS))
        # 4. press_key Enter
        page.keyboard.press("Enter")
        # 5. wait_for_load http://127.0.0.1:8080/shop/index.html
        want = "http://127.0.0.1:8080/shop/index.html"
        page.wait_for_url(lambda url: same_page(url, want), timeout=LOAD_MS)
        # 6. type role "searchbox" "Search"
        act(page, "step 6 (type)", [{"by": "role", "value": ["searchbox", "Search"]}, {"by": "label", "value": "Search"}, {"by": "id", "value": "q"}, {"by": "name", "value": "q"}, {"by": "css", "value": "form > input#q"}, {"by": "xpath", "value": "//input[@id='q']"}], lambda l: l.fill(inputs["q"], timeout=ATTEMPT_MS))
        # 7. type role "textbox" "Note"
        act(page, "step 7 (type)", [{"by": "role", "value": ["textbox", "Note"]}, {"by": "label", "value": "Note"}, {"by": "id", "value": "note"}, {"by": "name", "value": "note"}, {"by": "css", "value": "form > textarea#note"}, {"by": "xpath", "value": "//textarea[@id='note']"}], lambda l: l.fill("ring twice", timeout=ATTEMPT_MS))
        # 8. click test_id "buy"
        act(page, "step 8 (click)", [{"by": "test_id", "value": "buy"}, {"by": "role", "value": ["button", "Buy now"]}, {"by": "text", "value": "Buy now"}, {"by": "css", "value": "main > button:nth-of-type(2)"}, {"by": "xpath", "value": "/html[1]/body[1]/main[1]/button[2]"}], lambda l: l.click(timeout=ATTEMPT_MS))
        # 9. select_option role "combobox" "Size"
        act(page, "step 9 (select_option)", [{"by": "role", "value": ["combobox", "Size"]}, {"by": "label", "value": "Size"}, {"by": "id", "value": "size"}, {"by": "name", "value": "size"}, {"by": "css", "value": "form > select#size"}, {"by": "xpath", "value": "//select[@id='size']"}], lambda l: l.select_option(["L"], timeout=ATTEMPT_MS))
        # 10. check role "checkbox" "Gift wrap"
        act(page, "step 10 (check)", [{"by": "role", "value": ["checkbox", "Gift wrap"]}, {"by": "label", "value": "Gift wrap"}, {"by": "id", "value": "gift"}, {"by": "name", "value": "gift"}, {"by": "css", "value": "form > input#gift"}, {"by": "xpath", "value": "//input[@id='gift']"}], lambda l: l.set_checked(True, timeout=ATTEMPT_MS))
        # 11. scroll to 0, 400
        page.evaluate("([x, y]) => window.scrollTo(x, y)", [0, 400])
        # 12. navigate http://127.0.0.1:8080/shop/cart.html
        page.goto("http://127.0.0.1:8080/shop/cart.html", timeout=LOAD_MS)
        # 13. new_tab http://127.0.0.1:8080/shop/help.html
        page = page.context.new_page()
        page.goto("http://127.0.0.1:8080/shop/help.html", timeout=LOAD_MS)
        return {"ok": True, "url": page.url, "title": page.title()}
    finally:
        browser.close()


def main():
    try:
        with sync_playwright() as p:
            result = run(p)
    except Exception as e:
        message = redact(e)
        print(json.dumps({"ok": False, "error": message}))
        print("kapture export: " + message, file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
