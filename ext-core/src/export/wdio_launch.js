  browser = await remote({
    logLevel: 'error',
    capabilities: {
      browserName: 'chrome',
      'goog:chromeOptions': {
        binary: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium',
        args: [...(headless() ? ['--headless=new'] : []), ...chromiumArgs()],
      },
      // The chromedriver WebdriverIO starts (CHROMEDRIVER_PATH names one, else it downloads
      // one) takes connections from this machine only.
      'wdio:chromedriverOptions': { allowedIps: ['127.0.0.1'] },
    },
  });
