  return { ok: true, url: page.url(), title: await page.title() };
}

try {
  console.log(JSON.stringify(await main()));
} catch (e) {
  const message = redact(e instanceof Error ? e.message : e);
  console.log(JSON.stringify({ ok: false, error: message }));
  console.error(`kapture export: ${message}`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
}
