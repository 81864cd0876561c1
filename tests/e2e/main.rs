//! End-to-end tests: each starts the real `kapture` (which launches headless Chromium with
//! the built extension) and drives it over MCP stdio, against pages served on 127.0.0.1:0.

mod attacks_bridge; // a rogue on an announced port, a kapture loosening a browser's rules, folders others can touch
mod attacks_escape; // forged lines, refs and hints from page strings; answers too large for the bridge
mod attacks_files; // local files never leave unless their folder is allowed; PDFs never land outside or overwrite
mod attacks_mask; // secrets typed under neutral names, replayed secrets, the recorder as a keylogger
mod attacks_origins; // denied origins read through frames, requests and tabs; frames of no URL origin; actions that follow the page
mod attacks_store; // kapture's own writes in read-only and safe mode, secrets in replayed and exported URLs, page text in tools/list
mod browser_features; // dialogs, files, network, storage, emulation, input, PDFs, popups, crashes
mod budgets; // --max-steps per session and maxStepsPerHour per origin: coded refusals, extended by a person
mod carried; // the binary alone: copied anywhere, it writes out the extension it carries and drives a page with it
mod engine_cdp; // the native engine (--browser cdp): a DevTools browser, faults, a remote pool
mod engine_launch; // launched browsers over their DevTools pipe: the extension loaded there, else the native engine
mod errors; // coded failures: bad input, missing elements, closed tabs, timeouts
mod export; // a recorded login exported as a script that runs under puppeteer-core and Playwright
mod faults; // cancels, worker kills, debugger drops, frames removed, kapture and browser restarts, idle
mod handover; // the engine chosen at every call (hand-over both ways), the token rotated on SIGHUP, pairing by a code typed in the options page
mod http; // kapture --http: real sessions, strangers refused, capped and expiring sessions, the app's files, the conformance suite and the Inspector CLI
mod lifecycle; // pairing, two servers, shutdown cleans up, human subcommands
mod limits; // the policy file's limits and settings (download cap, inert programs, masks, screenshots, timeout); the viewport list
mod load; // a thousand calls at once, ten tabs side by side, oversized pages
mod logins; // saved logins: signed in once, loaded sealed into a fresh browser, replacing its state, judged
mod names; // roles and names beside Chrome's accessibility tree on real apps; refs on text that takes a click
mod navigation; // actions that load a page: named, answered on the new page; snapshots never stale or unexplained
mod oopif; // cross-site frames Chrome runs in another process: read or said, denied ones withheld
mod page_model; // snapshots, refs, frames, folding, reads, waits, forms
mod panel; // the Kapture panel driven like a person, with screenshots
mod picker; // the element picker: browser_pick and the panel's Pick, driven with real mouse input
mod policy; // deny, safe mode, approvals in the Kapture window, origin binding, redirects
mod real_apps;
mod recorder; // a recorded flow saved as a scenario with sealed secrets
mod reduced; // the copy without the debugger permission (kapture install --without-debugger): chrome.scripting, judged input, UNSUPPORTED for the rest
mod scenarios; // the widget records a login; the shop checkout replays with dependencies from a fresh browser
mod security;
mod sessions; // several MCP sessions of one kapture: own current tabs, owned tabs, shared by policy, resources // the bridge refuses strangers; the token never leaks
mod side_panel; // the side panel driven like a person beside an agent: feed, risk, modes, rules, pause, budgets
mod stateless; // MCP 2026-07-28 without a handshake: the default context, context handles, the Python and TypeScript SDKs 2.x
mod stdio; // MCP over stdio: bad input answered per JSON-RPC, the process survives, EOF ends it
mod tab_groups; // where a session's new tabs go: its tab group, or natively its own browser context
mod tools; // every tool on real pages // the real-app corpus (TodoMVC ×9, Django admin) driven by an agent-like script
mod waits; // waitUntil on navigate, back, forward and reload; retries of transient failures
mod web_app; // the Test Web App at /app driven like a person in a second browser, with screenshots
