  browser = await puppeteer.launch({
    executablePath: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium',
    headless: headless(),
    args: chromiumArgs(),
  });
  page = (await browser.pages())[0] ?? (await browser.newPage());
