"""Drive kapture with the MCP Python SDK 2.x (`mcp` from PyPI, not ours), as a stateless
2026-07-28 client (mode "auto": server/discover, no handshake) or in fallback (mode
"legacy": the initialize handshake). Over HTTP every step is its own Client (its own
connection), so the browser must carry over between them; over stdio one Client runs all
steps. Usage: python_client.py CONFIG_JSON; exits non-zero with the failed check, prints
"PASS <mode> <transport> <protocol version>" at the end.

CONFIG_JSON: {"mode": "auto"|"legacy", "url": URL-with-token} or {"mode": ..., "stdio": [argv]},
plus "page_a" and "page_b" (URLs of two pages titled "Page A" and "Page B"); or, with
"approve": FORM_URL, over a kapture whose clicks are asked: a click answered through
`input_required` by an elicitation callback (mode "auto"), then refused by the rule's fallback
for a client that declared no elicitation.
"""

import json
import re
import sys
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

config = json.loads(sys.argv[1])
mode = config["mode"]


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def check(ok: bool, what: str) -> None:
    if not ok:
        print(f"FAIL {what}", flush=True)
        sys.exit(1)


asked: list[str] = []


async def approve(_context, params) -> types.ElicitResult:
    asked.append(params.message)
    return types.ElicitResult(action="accept", content={"answer": "approve once"})


@asynccontextmanager
async def client(elicit=None):
    if "url" in config:
        server = config["url"]
    else:
        server = StdioServerParameters(command=config["stdio"][0], args=config["stdio"][1:])
    async with Client(server, mode=mode, read_timeout_seconds=60, elicitation_callback=elicit) as c:
        yield c


async def call(c, tool: str, args: dict | None = None, error: bool | None = False) -> str:
    """The call's text; it must fail (`error`) or not, or either (`None`)."""
    result = await c.call_tool(tool, args or {})
    body = text(result)
    if error is not None:
        check(bool(result.is_error) == error, f"{tool} {args}: isError={result.is_error}: {body}")
    return body


async def steps(c) -> str:
    version = c.protocol_version
    if mode == "auto":
        check(version == "2026-07-28", f"negotiated {version}, not 2026-07-28")
    else:
        check(version < "2026-07-28", f"legacy mode negotiated {version}")
    tools = (await c.list_tools()).tools
    names = {t.name for t in tools}
    check({"browser_navigate", "browser_snapshot", "browser_context_open"} <= names, f"tools: {sorted(names)}")
    nav = next(t for t in tools if t.name == "browser_navigate")
    check("context" in nav.input_schema.get("properties", {}), "browser_navigate lists no `context` argument")
    went = await call(c, "browser_navigate", {"url": config["page_a"]})
    check("Page A" in went, f"navigate: {went}")
    return version


def ref_on(snapshot: str, words: str) -> str:
    line = next(l for l in snapshot.splitlines() if words in l)
    return re.search(r"ref=([a-z0-9]+)", line).group(1)


async def approvals() -> None:
    async with client(approve) as c:
        check(c.protocol_version == "2026-07-28", f"negotiated {c.protocol_version}")
        await call(c, "browser_navigate", {"url": config["approve"]})
        snap = await call(c, "browser_snapshot")
        done = await call(c, "browser_click", {"ref": ref_on(snap, "I agree")})
        check(len(asked) == 1 and "browser_click" in asked[0], f"asked: {asked}")
        check("Error" not in done, f"the approved click: {done}")
    async with client() as c:
        await call(c, "browser_navigate", {"url": config["approve"]})
        snap = await call(c, "browser_snapshot")
        refused = await call(c, "browser_click", {"ref": ref_on(snap, "I agree")}, error=True)
        check("APPROVAL_DENIED" in refused and "elicitation" in refused, f"without elicitation: {refused}")
    print("PASS approvals", flush=True)


async def main() -> None:
    if "approve" in config:
        return await approvals()
    http = "url" in config
    async with client() as c:
        version = await steps(c)
        if http:
            c_next = None
        else:
            c_next = c
        if c_next is None:
            async with client() as c2:
                await rest(c2)
        else:
            await rest(c_next)
    print(f"PASS {mode} {'http' if http else 'stdio'} {version}", flush=True)


async def rest(c) -> None:
    # The default context (or the session, in fallback over stdio) kept the page.
    legacy_http = "url" in config and mode == "legacy"
    snap = await call(c, "browser_snapshot", error=None if legacy_http else False)
    if legacy_http:
        # A fallback client over HTTP is a session of its own: it does not see the other's page.
        check("Go to B" not in snap, f"a new session saw another's page: {snap}")
        return
    check("Go to B" in snap, f"the next call lost the page: {snap}")
    opened = await call(c, "browser_context_open")
    found = re.search(r"kctx_[0-9a-f]{32}", opened)
    check(found is not None, f"no handle in: {opened}")
    handle = found.group(0)
    went = await call(c, "browser_navigate", {"url": config["page_b"], "context": handle})
    check("Page B" in went, f"navigate in the context: {went}")
    mine = await call(c, "browser_snapshot", {"context": handle})
    check("Go to A" in mine and "Go to B" not in mine, f"the context's snapshot: {mine}")
    default = await call(c, "browser_snapshot")
    check("Go to B" in default and "Go to A" not in default, f"the default context moved: {default}")
    bad = await call(c, "browser_snapshot", {"context": "kctx_" + "0" * 32}, error=True)
    check("BAD_ARGS" in bad, f"an unknown handle: {bad}")
    closed = await call(c, "browser_context_close", {"context": handle})
    check("closed" in closed, f"close: {closed}")
    gone = await call(c, "browser_snapshot", {"context": handle}, error=True)
    check("BAD_ARGS" in gone, f"a closed handle: {gone}")


anyio.run(main)
