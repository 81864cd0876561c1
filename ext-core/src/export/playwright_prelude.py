
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
