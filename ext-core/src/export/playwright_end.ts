    console.log(JSON.stringify({ ok: true, url: page.url(), title: await page.title() }));
  } catch (e) {
    const message = redact(e instanceof Error ? e.message : e);
    console.log(JSON.stringify({ ok: false, error: message }));
    throw new Error(message);
  }
});
