//! What each MCP tool is to the policy, said on the tool itself (`meta = kind(…)` in its
//! `#[tool]`) and published in its `_meta`: a tool without one fails a test, so no tool of
//! kapture's own (scenarios, secrets, rules) can sit outside `--read-only` and safe mode.

use rmcp::model::{MetaObject, Tool};

/// The `_meta` key each tool's kind is published under.
pub const KEY: &str = "kapture/policy";

/// How the policy sees a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// It sends browser commands, and the gate judges each one (category, origin,
    /// approvals, safe mode) where it lands.
    Browser,
    /// It only reads what kapture keeps (saved scenarios, the journal, its status).
    ReadsStore,
    /// It changes what kapture keeps (deletes a scenario and its sealed secrets): before
    /// it does, the gate judges a `kapture.store_write` in the `record` category on the
    /// data's site, so read-only and safe mode refuse it; the change itself takes the
    /// [`crate::scenarios::WriteAllowed`] only that judgement gives.
    WritesStore,
    /// It manages the caller's own MCP plumbing (a context handle opened or closed): nothing
    /// of the person's (no page, no saved data) changes, and what later calls do under it
    /// is judged as any call.
    Session,
}

impl ToolKind {
    const ALL: [ToolKind; 4] = [
        ToolKind::Browser,
        ToolKind::ReadsStore,
        ToolKind::WritesStore,
        ToolKind::Session,
    ];

    fn as_str(self) -> &'static str {
        match self {
            ToolKind::Browser => "browser",
            ToolKind::ReadsStore => "reads-store",
            ToolKind::WritesStore => "writes-store",
            ToolKind::Session => "session",
        }
    }

    /// The kind a tool says in its `_meta`, if it says one.
    pub fn of(tool: &Tool) -> Option<ToolKind> {
        let said = tool.meta.as_ref()?.0.get(KEY)?.as_str()?;
        ToolKind::ALL.into_iter().find(|k| k.as_str() == said)
    }
}

/// The `_meta` of a tool of this kind (for `#[tool(meta = kind(…))]`).
pub fn kind(k: ToolKind) -> MetaObject {
    let mut meta = MetaObject::new();
    meta.0.insert(KEY.into(), k.as_str().into());
    meta
}
