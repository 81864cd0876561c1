#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Kapture scenario "handwritten" (Written by hand), exported for Playwright for Python.
# Run:  pip install playwright  &&  python3 handwritten.py
# Environment:
#   KAPTURE_CHROMIUM       the browser to launch (default /usr/bin/chromium)
#   KAPTURE_CHROMIUM_ARGS  extra browser flags, one per line (flags may contain spaces);
#                          a value without a newline is split at spaces
#   KAPTURE_HEADLESS       0 shows the browser window (default headless)
#   KAPTURE_PARAM_PAGE  parameter page (recorded default "shop/index.html")
#   KAPTURE_PARAM_USER  parameter user, required
#   KAPTURE_SECRET_PW  secret pw, required, read only from the environment
#   KAPTURE_PARAM_GIFT  parameter gift (recorded default "true")
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
    param_input("page", "KAPTURE_PARAM_PAGE", "shop/index.html")
    param_input("user", "KAPTURE_PARAM_USER", None)
    secret_input("pw", "KAPTURE_SECRET_PW")
    param_input("gift", "KAPTURE_PARAM_GIFT", "true")
    browser = p.chromium.launch(executable_path=chromium(), headless=headless(), args=chromium_args())
    try:
        page = browser.new_page()
        # 1. navigate http://127.0.0.1:8080/{{page}}
        page.goto("http://127.0.0.1:8080/" + inputs["page"], timeout=LOAD_MS)
        # 2. click css "#go"
        act(page, "step 2 (click)", [{"by": "css", "value": "#go"}], lambda l: l.click(timeout=ATTEMPT_MS))
        # 3. type label "User"
        act(page, "step 3 (type)", [{"by": "label", "value": "User"}], lambda l: l.fill(inputs["user"], timeout=ATTEMPT_MS))
        # 4. type css "#pw"
        if (lambda u: u.scheme + "://" + u.netloc.rsplit("@", 1)[-1])(urlsplit(page.url)) != "http://127.0.0.1:8080": raise RuntimeError("step 4: its secret is typed only on http://127.0.0.1:8080, where it was recorded")
        act(page, "step 4 (type)", [{"by": "css", "value": "#pw"}], lambda l: l.fill(inputs["pw"], timeout=ATTEMPT_MS))
        page.keyboard.press("Enter")
        # 5. select_option name "size"
        act(page, "step 5 (select_option)", [{"by": "name", "value": "size"}], lambda l: l.select_option(["L"], timeout=ATTEMPT_MS))
        # 6. check id "gift"
        act(page, "step 6 (check)", [{"by": "id", "value": "gift"}], lambda l: l.set_checked(truthy(inputs["gift"]), timeout=ATTEMPT_MS))
        # 7. check test_id "terms"
        act(page, "step 7 (check)", [{"by": "test_id", "value": "terms"}], lambda l: l.set_checked(True, timeout=ATTEMPT_MS))
        # 8. hover role "menuitem" "Account"
        act(page, "step 8 (hover)", [{"by": "role", "value": ["menuitem", "Account"]}, {"by": "text", "value": "Account"}], lambda l: l.hover(timeout=ATTEMPT_MS))
        # 9. go_back
        page.go_back(timeout=LOAD_MS)
        # 10. go_forward
        page.go_forward(timeout=LOAD_MS)
        # 11. go_back
        page.go_back(timeout=LOAD_MS)
        # 12. go_forward
        page.go_forward(timeout=LOAD_MS)
        # 13. press_key Escape
        page.keyboard.press("Escape")
        # 14. scroll to 0, 250.5
        page.evaluate("([x, y]) => window.scrollTo(x, y)", [0, 250.5])
        # 15. wait_for_load http://127.0.0.1:8080/shop/cart.html
        want = "http://127.0.0.1:8080/shop/cart.html"
        page.wait_for_url(lambda url: same_page(url, want), timeout=LOAD_MS)
        # 16. new_tab http://127.0.0.1:8080/help.html
        page = page.context.new_page()
        page.goto("http://127.0.0.1:8080/help.html", timeout=LOAD_MS)
        # 17. click
        print("kapture export: step 17 skipped: click has no locator", file=sys.stderr)
        # 18. evaluate
        print("kapture export: step 18 skipped: evaluate is not a browser action the export knows", file=sys.stderr)
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
