//! The native CDP engine's transport: kapture speaking the Chrome DevTools Protocol to a
//! Chromium-family browser's DevTools endpoint over a WebSocket, so ext-core's `cdp::`
//! functions run natively, without the extension.
//!
//! Layers, bottom up: [`endpoint`] turns `http(s)://host:port` or `ws(s)://…` into the
//! browser's WebSocket URL (TLS in [`tls`]), or [`pipe`] carries the messages of a browser
//! kapture launched; [`Browser`] is the handle of one connection's owner task (pending
//! calls, flat sessions and their events); [`PageSession`] is one attached page target as
//! ext-core's `CdpSession`; [`Engine`] runs page sessions on a thread of their own (the
//! trait's futures are not `Send`) and takes jobs from anywhere in kapture.

mod connection;
pub mod endpoint;
mod engine;
mod page;
#[cfg(unix)]
pub mod pipe;
mod tls;

pub use connection::{
    Attached, Browser, Event, Frame, Routed, TargetInfo, Transport, COMMAND_LIMIT,
};
pub use engine::Engine;
pub use page::PageSession;

use ext_core::protocol::{ErrorCode, WireError};

/// Why a DevTools endpoint could not be reached: said once, when connecting.
#[derive(Debug, thiserror::Error)]
pub enum CdpError {
    #[error("{0:?} is not a DevTools endpoint: {1}")]
    BadEndpoint(String, String),
    #[error("cannot reach the DevTools endpoint {endpoint}: {why}")]
    Unreachable { endpoint: String, why: String },
    #[error("the DevTools endpoint {endpoint} did not answer as a browser does: {why}")]
    NotABrowser { endpoint: String, why: String },
    #[error("the CDP engine could not start: {0}")]
    Engine(String),
}

impl CdpError {
    /// As a coded error for a tool answer: no browser to drive.
    pub fn into_wire(self) -> WireError {
        WireError::new(ErrorCode::NoBrowser, self.to_string())
    }
}

/// The browser connection is gone (the browser exited, or its socket dropped).
pub(crate) fn browser_gone() -> WireError {
    WireError::new(
        ErrorCode::NoBrowser,
        "the browser's DevTools connection closed (the browser exited or dropped the socket)",
    )
}
