// Kapture options page glue: send the pairing code a person typed to the service worker and
// show its answer. No decisions live here (the worker checks the code and pairs).
const said = document.getElementById("said");
const form = document.getElementById("pair-form");
const button = document.getElementById("pair");
const port = chrome.runtime.connect({ name: "kapture-panel" });
port.onMessage.addListener((msg) => {
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
