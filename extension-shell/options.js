// Kapture options page glue: show the mode the service worker says it runs in, send the
// pairing code a person typed to it and show its answer. No decisions live here (the worker
// knows its mode, checks the code and pairs).
const said = document.getElementById("said");
const form = document.getElementById("pair-form");
const button = document.getElementById("pair");
const port = chrome.runtime.connect({ name: "kapture-panel" });
const mode = document.getElementById("mode");
port.onMessage.addListener((msg) => {
  if (msg && msg.type === "mode") {
    mode.textContent = msg.message;
    mode.dataset.full = String(msg.full);
  }
  if (msg && msg.type === "paired") {
    said.textContent = msg.message;
    said.dataset.ok = String(msg.ok);
    button.disabled = false;
  }
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  said.textContent = "Pairing…";
  delete said.dataset.ok;
  button.disabled = true;
  port.postMessage({ type: "pair", code: document.getElementById("code").value });
});
port.postMessage({ type: "mode" });
