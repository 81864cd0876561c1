//! What the executor tells its host about the commands it runs: each step for the live
//! feed, and the question a person is asked before an action. The panels show these; they
//! are defined here, below the UI, because the executor makes them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::risk::Risk;
use crate::protocol::TabId;

/// One command an agent (or a person in the panel) ran, as the side panel's feed shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedEntry {
    /// ms since the epoch, when it was received.
    pub time: f64,
    pub tab_id: Option<TabId>,
    /// The agent's session (`claude-code #2 · port 61822`), or `panel`.
    pub who: String,
    pub method: String,
    /// The element it acted on, as the page model showed it (or its selector).
    #[serde(default)]
    pub target: Option<String>,
    /// Where it landed (empty when it never got that far).
    #[serde(default)]
    pub origin: String,
    /// What the gate said: allowed, granted, approved (once|origin|always), or why refused.
    pub verdict: String,
    /// ok, or the error code.
    pub status: String,
    pub ms: f64,
}

/// An action waiting for a person's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalView {
    pub id: u64,
    pub tab_id: TabId,
    pub method: String,
    pub category: String,
    pub origin: String,
    /// Arguments with secrets masked.
    pub args: Value,
    /// The element acted on, as the agent's last snapshot showed it (or its selector).
    #[serde(default)]
    pub target: Option<String>,
    /// When it is denied if nobody answers, ms since the epoch.
    pub expires: f64,
    /// How risky it is, and why in a few words (`policy::risk`).
    #[serde(default)]
    pub risk: Risk,
    #[serde(default)]
    pub risk_why: String,
    /// Who asks (the agent's session), when known.
    #[serde(default)]
    pub who: Option<String>,
    /// Whether "Always allow here" can be kept for this origin (one with a host; never a
    /// page of no site).
    #[serde(default)]
    pub lasting: bool,
}
