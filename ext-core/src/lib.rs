//! Kapture's browser-side brain. Pure modules (`protocol`, `methods`, `cdp`, `router`, `exec`) run
//! natively under `cargo test`; `chrome` bindings and the service worker (`sw`) exist only
//! on wasm32, where this crate is the extension.

pub mod app;
pub mod attachment;
pub mod backoff;
pub mod cdp;
pub mod escape;
pub mod exec;
pub mod export;
pub mod fold;
pub mod handshake;
pub mod mask;
pub mod methods;
pub mod platform;
pub mod policy;
pub mod protocol;
pub mod recorder;
pub mod router;
pub mod scenario;
pub mod secrets;
pub mod snapshot;
pub mod ui;
pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod chrome;
#[cfg(target_arch = "wasm32")]
pub mod panel;
/// Natively only the panel's schema-driven forms exist, their pure half (so plain `cargo
/// test` covers what the panel and the Test Web App share).
#[cfg(not(target_arch = "wasm32"))]
pub mod panel {
    pub mod form;
}
#[cfg(target_arch = "wasm32")]
pub mod sw;
