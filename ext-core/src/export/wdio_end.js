  return { ok: true, url: await browser.getUrl(), title: await browser.getTitle() };
}

try {
  console.log(JSON.stringify(await main()));
} catch (e) {
  const message = redact(e instanceof Error ? e.message : e);
  console.log(JSON.stringify({ ok: false, error: message }));
  console.error(`kapture export: ${message}`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.deleteSession().catch(() => {});
}
