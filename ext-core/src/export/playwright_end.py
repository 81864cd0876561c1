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
