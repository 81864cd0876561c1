// Drive kapture with the MCP TypeScript SDK 2.x client (@modelcontextprotocol/client from
// npm, not ours) in the 2026-07-28 revision (versionNegotiation pinned: server/discover, no
// handshake) or in fallback ('legacy': initialize). Over HTTP each step is its own Client, so
// the browser must carry over between them. Usage: node ts-client.mjs CONFIG_JSON, with
// CONFIG_JSON {"mode": "modern"|"legacy", "url": URL, "token": T} or {"mode", "stdio": [argv]},
// and "page_a", "page_b". Prints "PASS <mode> <transport> <version>" or "FAIL <what>".

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const config = JSON.parse(process.argv[2]);
const modern = config.mode === 'modern';

function check(ok, what) {
  if (!ok) {
    console.log(`FAIL ${what}`);
    process.exit(1);
  }
}

async function connect() {
  const client = new Client(
    { name: 'kapture-e2e-ts', version: '1.0.0' },
    { versionNegotiation: { mode: modern ? { pin: '2026-07-28' } : 'legacy' } },
  );
  const transport = config.url
    ? new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { Authorization: `Bearer ${config.token}` } },
      })
    : new StdioClientTransport({ command: config.stdio[0], args: config.stdio.slice(1) });
  await client.connect(transport);
  return client;
}

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The call's text; it must fail (`error`) or not, or either (`null`).
async function call(client, name, args = {}, error = false) {
  const r = await client.callTool({ name, arguments: args });
  if (error !== null) {
    check(Boolean(r.isError) === error, `${name} ${JSON.stringify(args)}: isError=${r.isError}: ${text(r)}`);
  }
  return text(r);
}

const first = await connect();
const version = first.getNegotiatedProtocolVersion();
check(modern ? version === '2026-07-28' : version < '2026-07-28', `negotiated ${version}`);
const { tools } = await first.listTools();
const nav = tools.find((t) => t.name === 'browser_navigate');
check(nav && nav.inputSchema.properties.context, 'browser_navigate lists no `context` argument');
check(tools.some((t) => t.name === 'browser_context_open'), 'no browser_context_open');
const went = await call(first, 'browser_navigate', { url: config.page_a });
check(went.includes('Page A'), `navigate: ${went}`);

// Over HTTP a second client (its own connection); over stdio the same one.
const second = config.url ? await connect() : first;
const legacyHttp = config.url && !modern;
const snap = await call(second, 'browser_snapshot', {}, legacyHttp ? null : false);
if (legacyHttp) {
  // A fallback client is a session of its own: it does not see the other's page.
  check(!snap.includes('Go to B'), `a new session saw another's page: ${snap}`);
} else {
  check(snap.includes('Go to B'), `the next call lost the page: ${snap}`);
  const opened = await call(second, 'browser_context_open');
  const handle = (opened.match(/kctx_[0-9a-f]{32}/) || [])[0];
  check(handle, `no handle in: ${opened}`);
  await call(second, 'browser_navigate', { url: config.page_b, context: handle });
  const mine = await call(second, 'browser_snapshot', { context: handle });
  check(mine.includes('Go to A') && !mine.includes('Go to B'), `the context's snapshot: ${mine}`);
  const dflt = await call(second, 'browser_snapshot');
  check(dflt.includes('Go to B'), `the default context moved: ${dflt}`);
  await call(second, 'browser_context_close', { context: handle });
}
await first.close();
if (second !== first) await second.close();
console.log(`PASS ${config.mode} ${config.url ? 'http' : 'stdio'} ${version}`);
process.exit(0);
