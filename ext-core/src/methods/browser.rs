//! The methods that run at once in the browser rather than in a tab's queue: the tab list,
//! opening, selecting and closing tabs, and kapture's own store writes judged as a step.

use super::*;

/// One tab as the browser reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    pub tab_id: TabId,
    pub index: u32,
    pub window_id: i32,
    pub url: String,
    pub title: String,
    pub active: bool,
    /// The tab group (extension engine) or kapture-made browser context (native engine) the
    /// tab is in: the label of the MCP session that opened it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsList {}
method!(
    TabsList,
    "tabs.list",
    Vec<TabInfo>,
    None,
    browser,
    repeatable
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsNew {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The MCP session's label: the extension puts the tab in a tab group of that title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Open the tab in the session's own browser context (cookies and storage apart), where
    /// the engine can make one; `group` names the context.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub isolated: bool,
}
method!(
    TabsNew,
    "tabs.new",
    TabInfo,
    None,
    browser,
    timeout = LONG_TIMEOUT_MS,
    destination = TabsNew::destination_url,
);

/// Bring the command's tab to the front.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsSelect {}
method!(TabsSelect, "tabs.select", TabInfo, None, browser);

/// Close the command's tab.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsClose {}
method!(
    TabsClose,
    "tabs.close",
    Closed,
    INTERACT,
    browser,
    does = (Risk::Medium, "closes a tab (unsaved work is lost)"),
);

/// A change to what kapture keeps for the person (a scenario deleted with its sealed
/// secrets): no page changes, but it is judged by the same gate as one, in the `record`
/// category on the site the data belongs to, so `--read-only`, safe mode and the rules
/// refuse it like any write.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreWrite {
    /// What changes, in kapture's words (an approval shows it).
    pub what: String,
    /// A page of the site the data belongs to (where a scenario starts); `about:blank`, a
    /// page of no site, when none is known.
    pub url: String,
}
method!(
    StoreWrite,
    "kapture.store_write",
    StoreWritten,
    RECORD,
    browser,
    does = (
        Risk::High,
        "changes what Kapture keeps (saved scenarios, logins, sealed secrets)"
    ),
);

/// The gate let a [`StoreWrite`] through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoreWritten {
    pub allowed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Closed {
    pub tab_id: TabId,
}
