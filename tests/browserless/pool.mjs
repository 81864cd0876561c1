// A browserless pool for kapture's tests: only its Chromium routes (the machine has no
// Chrome, Edge, Firefox or WebKit, and browserless refuses to start with routes whose
// browser is missing). The Chromium is the system one: PLAYWRIGHT_BROWSERS_PATH points at a
// folder where the test linked it under the name playwright-core looks for.
// Environment: PORT, HOST (127.0.0.1), CONCURRENT — browserless's own settings.
import {
  Browserless,
  BrowserlessChromeRoutes,
  BrowserlessEdgeRoutes,
  BrowserlessFirefoxRoutes,
  BrowserlessWebKitRoutes,
} from '@browserless.io/browserless';

const pool = new Browserless();
pool.disableRoutes(
  ...[BrowserlessChromeRoutes, BrowserlessEdgeRoutes, BrowserlessFirefoxRoutes, BrowserlessWebKitRoutes]
    .flatMap((routes) => Object.values(routes)),
);
await pool.start();
// Stopped by its test: close every browser it started (they run detached), then leave.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    await pool.stop().catch(() => {});
    process.exit(0);
  });
}
