// DevTools page glue: the Rust side adds the "Kapture" panel. No decisions live here.
import init, { devtools_start } from "./ext_core.js";

init({ module_or_path: "./ext_core_bg.wasm" }).then(() => devtools_start());
