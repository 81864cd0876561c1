// `cargo make bench`: what one tool call costs over each MCP transport, measured by a client
// that is not ours (the MCP TypeScript SDK), on one kapture build with a launched headless
// Chromium: browser_status and browser_snapshot, 60 calls each after a warm-up; median and p90.
// Usage: node bench-transports.mjs <kapture binary>
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';

const bin = process.argv[2];
if (!bin) throw new Error('usage: node bench-transports.mjs <kapture binary>');
const REPS = 60;
const common = [
  '--browser', 'launch', '--headless',
  '--chromium-arg=--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
];
const page = 'data:text/html,<h1>Bench</h1><button>Go</button><a href="/x">Link</a>';

async function measure(client, transport) {
  await client.callTool({ name: 'browser_navigate', arguments: { url: page } });
  for (const tool of ['browser_status', 'browser_snapshot']) {
    await client.callTool({ name: tool, arguments: {} });
    const ms = [];
    for (let i = 0; i < REPS; i++) {
      const start = performance.now();
      await client.callTool({ name: tool, arguments: {} });
      ms.push(performance.now() - start);
    }
    ms.sort((a, b) => a - b);
    const at = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2);
    console.log(`| ${transport} | ${tool} | ${at(0.5)} | ${at(0.9)} |`);
  }
}

/** The MCP URL and token kapture --http prints on stderr (at most 60 s). */
function urlOf(child) {
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`kapture --http printed no URL:\n${said}`)), 60000);
    child.stderr.on('data', (chunk) => {
      said += chunk;
      const mcp = said.match(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
      const token = said.match(/[?&]token=([A-Za-z0-9_-]+)/);
      if (mcp && token) {
        clearTimeout(timer);
        resolve({ url: mcp[0], token: token[1] });
      }
    });
  });
}

console.log('| transport | tool | median ms | p90 ms |\n|---|---|---|---|');
const overStdio = new Client({ name: 'bench-transports', version: '1' });
await overStdio.connect(new StdioClientTransport({ command: bin, args: common, stderr: 'ignore' }));
await measure(overStdio, 'stdio');
await overStdio.close();

const child = spawn(bin, [...common, '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
try {
  const { url, token } = await urlOf(child);
  const overHttp = new Client({ name: 'bench-transports', version: '1' });
  await overHttp.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  await measure(overHttp, 'Streamable HTTP');
  await overHttp.close();
} finally {
  child.kill('SIGTERM');
}
