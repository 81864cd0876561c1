    browser = p.chromium.launch(executable_path=chromium(), headless=headless(), args=chromium_args())
    try:
        page = browser.new_page()
