  browser = await remote({
    logLevel: 'error',
    capabilities: {
      browserName: 'chrome',
      'goog:chromeOptions': {
        binary: process.env.KAPTURE_CHROMIUM || '/usr/bin/chromium',
        args: [...(headless() ? ['--headless=new'] : []), ...chromiumArgs()],
      },
    },
  });
