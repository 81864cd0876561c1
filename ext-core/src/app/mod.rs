//! The Test Web App: an MCP client of kapture's Streamable HTTP transport in a web page
//! (served by kapture at `/app`). The protocol (requests, SSE, answers), the history and its
//! export are pure and tested natively; `page` (wasm32) is the thin DOM and fetch half.

pub mod answer;
pub mod client;
pub mod history;
pub mod sse;
pub mod validate;

#[cfg(target_arch = "wasm32")]
mod page;
#[cfg(target_arch = "wasm32")]
pub use page::AppUi;
