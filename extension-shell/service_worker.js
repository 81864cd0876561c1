// Kapture service worker glue: every chrome.* listener is registered synchronously at top
// level (MV3 delivers wake-up events only to those) and forwards to the Rust worker once
// the WASM module is ready. No decisions live here.
import init, { Worker } from "./ext_core.js";

const ready = init({ module_or_path: "./ext_core_bg.wasm" }).then(() => {
  const worker = new Worker();
  worker.start();
  return worker;
});
const forward = (f) => (...args) => { ready.then((w) => f(w, ...args)); };

chrome.runtime.onStartup.addListener(forward((w) => w.on_alarm("startup")));
chrome.runtime.onInstalled.addListener(forward((w) => w.on_alarm("installed")));
chrome.runtime.onConnect.addListener(forward((w, port) => w.on_port(port)));
chrome.alarms.onAlarm.addListener(forward((w, alarm) => w.on_alarm(alarm.name)));
// A browser that did not grant the debugger has no chrome.debugger: reduced mode.
chrome.debugger?.onEvent.addListener(forward((w, source, method, params) => w.on_debugger_event(source.tabId, source.sessionId, method, params ?? {})));
chrome.debugger?.onDetach.addListener(forward((w, source, reason) => w.on_debugger_detach(source.tabId, reason)));
chrome.tabs.onCreated.addListener(forward((w, tab) => w.on_tab_created(tab.id, tab.openerTabId, tab.pendingUrl || tab.url || "")));
chrome.tabs.onRemoved.addListener(forward((w, tabId) => w.on_tab_removed(tabId)));
