//! The tools' argument types (and their JSON schemas): the tab and timeout every tool
//! takes, what an action answers afterwards, and the arguments of kapture's own tools.

use ext_core::protocol::TabId;
use schemars::JsonSchema;
use serde::Deserialize;

/// Any tool's arguments plus the optional tab to act on.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OnTab<P> {
    /// Tab to act on (from browser_tabs); default: the current tab.
    #[serde(default)]
    pub tab_id: Option<TabId>,
    /// Give up after this many milliseconds (default 30000; navigation and screenshots 60000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(flatten)]
    pub params: P,
}

/// An action's arguments: [`OnTab`] plus what to answer about the page afterwards.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Acting<P> {
    /// After the action, also answer the page snapshot (`full`) or what changed (`diff`).
    #[serde(default)]
    pub include_snapshot: Option<SnapshotMode>,
    #[serde(flatten)]
    pub on: OnTab<P>,
}

/// What to answer about the page after an action.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotMode {
    /// Nothing beyond the action's own result.
    #[default]
    Off,
    /// The whole snapshot.
    Full,
    /// Only the lines that changed since the last snapshot.
    Diff,
}

/// Longest per-call timeout an agent may ask for.
pub const MAX_TIMEOUT_MS: u64 = ext_core::methods::MAX_TIMEOUT_MS;

/// What `browser_tabs` can do.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TabAction {
    List,
    New,
    Select,
    Close,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TabsArgs {
    /// list, new, select or close.
    pub action: TabAction,
    /// Position of the tab in the list (select/close).
    #[serde(default)]
    pub index: Option<u32>,
    /// Id of the tab (select/close); close defaults to the current tab.
    #[serde(default)]
    pub tab_id: Option<TabId>,
    /// URL to open in the new tab (new).
    #[serde(default)]
    pub url: Option<String>,
    /// First tab of the list to show (list), as its cut marker says.
    #[serde(default)]
    pub offset: Option<u32>,
    /// Open the new tab in this session's own browser context: cookies and storage apart
    /// from other sessions (new; engines that cannot answer UNSUPPORTED).
    #[serde(default)]
    pub isolated: bool,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct AuditArgs {
    /// At most this many entries (default 20).
    #[serde(default)]
    pub max: Option<u32>,
    /// Newest entries to skip, as the cut marker says.
    #[serde(default)]
    pub offset: Option<u32>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioListArgs {
    /// Only scenarios whose name, title, description or tags mention this.
    #[serde(default)]
    pub search: Option<String>,
    /// Only scenarios with every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only scenarios with dependencies (true) or without (false).
    #[serde(default)]
    pub has_dependencies: Option<bool>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct LoginNameArgs {
    /// The saved login's name (letters, digits, - and _).
    pub name: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ScenarioNameArgs {
    /// The scenario's name.
    pub name: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioExportArgs {
    /// The scenario's name.
    pub name: String,
    /// The script's flavour: playwright-ts, playwright-python, puppeteer or webdriverio.
    pub format: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioRunArgs {
    /// The scenario's name.
    pub name: String,
    /// Values for its parameters (secrets come from Kapture's store unless given here).
    #[serde(default)]
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Secret values for this run only (by parameter name, also for dependencies); never
    /// saved and never shown.
    #[serde(default)]
    pub override_secrets: serde_json::Map<String, serde_json::Value>,
    /// Tab to run in (default: the current tab).
    #[serde(default)]
    pub tab_id: Option<TabId>,
    /// Steps of the scenario (numbered from 1) to answer a screenshot after.
    #[serde(default)]
    pub screenshot_steps: Vec<u32>,
}
