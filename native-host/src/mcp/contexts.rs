//! Browser contexts for stateless clients (MCP 2026-07-28 has no session): a call that names
//! no context runs in the server's default one; `browser_context_open` opens an isolated one
//! and answers its handle, an unguessable capability the client passes back (the `context`
//! argument of any tool, or `_meta["dev.kapture/context"]` of any request). A context is an
//! MCP session in the registry like any other (tabs, refs, grants, budget, journal, masks);
//! only its life differs: it ends when closed or idle, and at most `MAX_CONTEXTS` are open.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ext_core::protocol::{ErrorCode, WireError};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use super::*;

/// The tool argument naming a context (stripped before the tool sees its arguments).
pub const ARG: &str = "context";
/// The `_meta` key naming a context, for requests that have no arguments (resources).
pub const META_KEY: &str = "dev.kapture/context";
/// Contexts open at once.
pub const MAX_CONTEXTS: usize = 16;
/// A context unused this long ends (its tabs released, its own-context tabs closed).
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// How a handle starts: the rest is 128 random bits in hex.
const PREFIX: &str = "kctx_";

/// What the `context` property says in every tool's schema.
pub const ARG_DESCRIPTION: &str = "A context handle from browser_context_open: the call runs in that isolated context (its own tabs, refs, grants, step budget and journal). Omit it to use the default context, which every call without a handle shares.";

/// The open contexts by handle, with when each was last used.
#[derive(Default)]
pub(crate) struct Contexts {
    open: HashMap<String, (KaptureServer, Instant)>,
}

impl Contexts {
    /// Take out the contexts idle since before `now - IDLE` (dropped by the caller, outside
    /// the lock: ending a session takes the registry's).
    fn expire(&mut self, now: Instant) -> Vec<KaptureServer> {
        let stale: Vec<String> = self
            .open
            .iter()
            .filter(|(_, (_, used))| now.saturating_duration_since(*used) >= IDLE)
            .map(|(h, _)| h.clone())
            .collect();
        stale
            .into_iter()
            .filter_map(|h| self.open.remove(&h).map(|(s, _)| s))
            .collect()
    }
}

/// Why a handle was not served.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("no open context has this handle (it was closed, expired after {} idle minutes, or never opened): open one with browser_context_open, or omit `context` for the default context", IDLE.as_secs() / 60)]
    Unknown,
    #[error("{MAX_CONTEXTS} contexts are open, the limit: close one with browser_context_close, or wait until an idle one expires")]
    Full,
    #[error("a context handle is a string")]
    NotText,
    #[error("no random bytes for a handle: {0}")]
    Random(String),
}

impl From<ContextError> for WireError {
    fn from(e: ContextError) -> WireError {
        WireError::new(ErrorCode::BadArgs, e.to_string())
    }
}

/// The handle a request names: the `context` argument (taken out of the arguments), else
/// the `_meta` key. `Ok(None)`: none named.
pub fn named(
    arguments: Option<&mut serde_json::Map<String, serde_json::Value>>,
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Result<Option<String>, ContextError> {
    let value = arguments
        .and_then(|a| a.remove(ARG))
        .or_else(|| meta.get(META_KEY).cloned());
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(h)) => Ok(Some(h)),
        Some(_) => Err(ContextError::NotText),
    }
}

fn new_handle() -> Result<String, ContextError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ContextError::Random(e.to_string()))?;
    Ok(bytes.iter().fold(PREFIX.to_string(), |mut s, b| {
        s.push_str(&format!("{b:02x}"));
        s
    }))
}

impl Shared {
    fn contexts(&self) -> MutexGuard<'_, Contexts> {
        self.contexts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// End the contexts idle too long.
    pub(crate) fn expire_contexts(&self) {
        let ended = self.contexts().expire(Instant::now());
        if !ended.is_empty() {
            tracing::info!(count = ended.len(), "idle browser contexts ended");
        }
        drop(ended);
    }

    /// The context with `handle`, its idle clock restarted.
    pub(crate) fn context(&self, handle: &str) -> Result<KaptureServer, ContextError> {
        self.expire_contexts();
        let mut contexts = self.contexts();
        let (server, used) = contexts.open.get_mut(handle).ok_or(ContextError::Unknown)?;
        *used = Instant::now();
        Ok(server.clone())
    }
}

impl Kapture {
    /// The default context: the session every stateless call without a handle runs in
    /// (made on first use, kept for the server's life).
    pub fn default_context(&self) -> KaptureServer {
        let mut slot = self
            .shared
            .default_context
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(server) = slot.as_ref() {
            return server.clone();
        }
        let server = self.session();
        *slot = Some(server.clone());
        server
    }

    /// End every context (and the default one): at shutdown, so their sessions end as
    /// sessions do (they hold the shared state, which holds them).
    pub fn close_contexts(&self) {
        let open: Vec<_> = self.shared.contexts().open.drain().collect();
        let default = self
            .shared
            .default_context
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop((open, default));
    }
}

#[tool_router(router = contexts_router, vis = "pub(super)")]
impl KaptureServer {
    #[tool(
        meta = kind(ToolKind::Session),
        name = "browser_context_open",
        annotations(read_only_hint = false, open_world_hint = false),
        description = "Open an isolated browser context and answer its handle. Pass the handle back as the `context` argument of any later call (or `_meta[\"dev.kapture/context\"]`): those calls own their tabs, element refs, approvals, step budget and journal entries, apart from every other context and session. Use it when several agents share one kapture, or a client sends each call on its own; without a handle, calls share the default context. Ends after 30 idle minutes or with browser_context_close."
    )]
    async fn browser_context_open(&self, Parameters(_): Parameters<NoArgs>) -> Answer {
        self.shared.expire_contexts();
        let handle = match new_handle() {
            Ok(h) => h,
            Err(e) => return Answer::fail(e.into()),
        };
        {
            let contexts = self.shared.contexts();
            if contexts.open.len() >= MAX_CONTEXTS {
                return Answer::fail(ContextError::Full.into());
            }
        }
        let server = Kapture {
            shared: self.shared.clone(),
        }
        .session();
        let id = server.id();
        let mut contexts = self.shared.contexts();
        // Checked again: another open may have filled the last place meanwhile.
        if contexts.open.len() >= MAX_CONTEXTS {
            drop(contexts);
            drop(server);
            return Answer::fail(ContextError::Full.into());
        }
        contexts
            .open
            .insert(handle.clone(), (server, Instant::now()));
        drop(contexts);
        tracing::info!(session = id, "browser context opened");
        self.reply(Ok(format!(
            "Context {handle} opened (session #{id}). Pass context: \"{handle}\" to every call that should run in it; it ends after {} idle minutes or with browser_context_close.",
            IDLE.as_secs() / 60
        )))
    }

    #[tool(
        meta = kind(ToolKind::Session),
        name = "browser_context_close",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        ),
        description = "Close the context named by the `context` argument (a handle from browser_context_open): its tabs are released, tabs of its own browser context closed, its handle no longer works."
    )]
    async fn browser_context_close(&self, Parameters(_): Parameters<NoArgs>) -> Answer {
        // `call_tool` already routed this call into the context it names.
        let handle = {
            let contexts = self.shared.contexts();
            contexts
                .open
                .iter()
                .find(|(_, (s, _))| s.id() == self.id())
                .map(|(h, _)| h.clone())
        };
        let Some(handle) = handle else {
            return Answer::fail(WireError::new(
                ErrorCode::BadArgs,
                "pass the handle to close as `context` (this call ran in the default context or a session, which cannot be closed this way)",
            ));
        };
        let closed = self.shared.contexts().open.remove(&handle);
        // The session ends when this call's own clone is gone too.
        drop(closed);
        self.reply(Ok(format!("Context {handle} closed.")))
    }
}

/// Every tool's schema with the `context` property added (what `tools/list` shows).
pub fn with_context_arg(mut tools: Vec<rmcp::model::Tool>) -> Vec<rmcp::model::Tool> {
    for tool in &mut tools {
        let mut schema = (*tool.input_schema).clone();
        let props = schema
            .entry("properties")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(props) = props.as_object_mut() {
            props.entry(ARG).or_insert_with(
                || serde_json::json!({"type": "string", "description": ARG_DESCRIPTION}),
            );
        }
        tool.input_schema = std::sync::Arc::new(schema);
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_named_by_argument_or_meta_and_taken_out_of_the_arguments() {
        let mut args = serde_json::json!({"url": "x", "context": "kctx_1"})
            .as_object()
            .cloned()
            .unwrap();
        let meta = serde_json::Map::new();
        assert_eq!(
            named(Some(&mut args), &meta).unwrap().as_deref(),
            Some("kctx_1")
        );
        assert!(!args.contains_key(ARG));
        let mut meta = serde_json::Map::new();
        meta.insert(META_KEY.into(), "kctx_2".into());
        assert_eq!(named(None, &meta).unwrap().as_deref(), Some("kctx_2"));
        assert!(named(None, &serde_json::Map::new()).unwrap().is_none());
        let mut bad = serde_json::json!({"context": 5})
            .as_object()
            .cloned()
            .unwrap();
        assert!(matches!(
            named(Some(&mut bad), &meta),
            Err(ContextError::NotText)
        ));
    }

    #[test]
    fn handles_are_long_random_and_distinct() {
        let a = new_handle().unwrap();
        let b = new_handle().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), PREFIX.len() + 32);
    }
}
