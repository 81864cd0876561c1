// Kapture panel glue: load the Rust panel and start it. No decisions live here.
import init, { PanelUi } from "./ext_core.js";

init({ module_or_path: "./ext_core_bg.wasm" }).then(() => new PanelUi().start());
