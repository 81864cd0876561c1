// Kapture side panel glue: load the Rust side panel and start it. No decisions live here.
import init, { SidePanelUi } from "./ext_core.js";

init({ module_or_path: "./ext_core_bg.wasm" }).then(() => new SidePanelUi().start());
