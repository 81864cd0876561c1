// Kapture Test Web App glue: load the Rust app (served by kapture at /app) and start it.
import init, { AppUi } from "/app/ext_core.js";

init({ module_or_path: "/app/ext_core_bg.wasm" }).then(() => new AppUi().start());
