//! The leaf of the wire: the ids and the coded error every command may answer, which the
//! policy, the methods and the frames all speak (so none of them imports the frames).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Identifies a command and its answer on one connection.
pub type CommandId = u64;

/// A browser tab id, as `chrome.tabs` numbers them.
pub type TabId = i32;

/// A coded failure, the same on both sides of the bridge and at the MCP edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct WireError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl WireError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Whether the same call, repeated unchanged later, may succeed: the code's answer,
    /// except that a spent budget is retryable only when it resets with time (`resetsAt`);
    /// a session's `--max-steps` does not.
    pub fn retryable(&self) -> bool {
        match self.code {
            ErrorCode::BudgetExceeded => self
                .data
                .as_ref()
                .is_some_and(|d| d.get("resetsAt").is_some()),
            code => code.retryable(),
        }
    }
}

/// The closed set of error codes. Agents branch on these; never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    TabNotFound,
    TabClosed,
    NoBrowser,
    ExtensionDisconnected,
    Timeout,
    SelectorNotFound,
    RefStale,
    NotInteractable,
    InvalidSelector,
    EvalFailed,
    NavigationFailed,
    PolicyDenied,
    ApprovalDenied,
    DebuggerConflict,
    BadArgs,
    UnsupportedPage,
    VersionMismatch,
    /// Not an error of the action: a JavaScript dialog opened and waits for an answer.
    DialogOpen,
    PageCrashed,
    /// Chrome detached the debugger while the tab lives on (e.g. a frame navigated to an
    /// unknown scheme).
    DebuggerDetached,
    /// A person stopped Kapture's control of the tab (cancelled the "debugging" bar).
    UserRevoked,
    /// The browser cannot do this at all (e.g. PDF printing in a windowed browser).
    Unsupported,
    DownloadFailed,
    /// A download grew past the policy's size cap (`download_max_bytes`); it was cancelled
    /// and its file removed.
    DownloadTooLarge,
    /// The answer is larger than a bridge frame may be (or than a script result may be).
    AnswerTooLarge,
    Internal,
    /// The browser kapture launched exited; its last stderr lines and a likely fix are in
    /// the message.
    BrowserExited,
    /// The tab belongs to another live MCP session (issue 17: sessions do not trample
    /// each other) and the policy does not let sessions share tabs.
    TabNotYours,
    /// A step budget is spent (the session's `--max-steps`, or an origin's
    /// `maxStepsPerHour`); the message says when it resets.
    BudgetExceeded,
    /// A person paused Kapture in the side panel: nothing runs until they resume.
    Paused,
}

impl ErrorCode {
    /// Every code (the wire-spelling test and the fuzzers go through all of them).
    pub const ALL: [ErrorCode; 30] = [
        ErrorCode::TabNotFound,
        ErrorCode::TabClosed,
        ErrorCode::NoBrowser,
        ErrorCode::ExtensionDisconnected,
        ErrorCode::Timeout,
        ErrorCode::SelectorNotFound,
        ErrorCode::RefStale,
        ErrorCode::NotInteractable,
        ErrorCode::InvalidSelector,
        ErrorCode::EvalFailed,
        ErrorCode::NavigationFailed,
        ErrorCode::PolicyDenied,
        ErrorCode::ApprovalDenied,
        ErrorCode::DebuggerConflict,
        ErrorCode::BadArgs,
        ErrorCode::UnsupportedPage,
        ErrorCode::VersionMismatch,
        ErrorCode::DialogOpen,
        ErrorCode::PageCrashed,
        ErrorCode::DebuggerDetached,
        ErrorCode::UserRevoked,
        ErrorCode::Unsupported,
        ErrorCode::DownloadFailed,
        ErrorCode::DownloadTooLarge,
        ErrorCode::AnswerTooLarge,
        ErrorCode::Internal,
        ErrorCode::BrowserExited,
        ErrorCode::TabNotYours,
        ErrorCode::BudgetExceeded,
        ErrorCode::Paused,
    ];

    /// The wire spelling (`TAB_NOT_FOUND`…).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TabNotFound => "TAB_NOT_FOUND",
            Self::TabClosed => "TAB_CLOSED",
            Self::NoBrowser => "NO_BROWSER",
            Self::ExtensionDisconnected => "EXTENSION_DISCONNECTED",
            Self::Timeout => "TIMEOUT",
            Self::SelectorNotFound => "SELECTOR_NOT_FOUND",
            Self::RefStale => "REF_STALE",
            Self::NotInteractable => "NOT_INTERACTABLE",
            Self::InvalidSelector => "INVALID_SELECTOR",
            Self::EvalFailed => "EVAL_FAILED",
            Self::NavigationFailed => "NAVIGATION_FAILED",
            Self::PolicyDenied => "POLICY_DENIED",
            Self::ApprovalDenied => "APPROVAL_DENIED",
            Self::DebuggerConflict => "DEBUGGER_CONFLICT",
            Self::BadArgs => "BAD_ARGS",
            Self::UnsupportedPage => "UNSUPPORTED_PAGE",
            Self::VersionMismatch => "VERSION_MISMATCH",
            Self::DialogOpen => "DIALOG_OPEN",
            Self::PageCrashed => "PAGE_CRASHED",
            Self::DebuggerDetached => "DEBUGGER_DETACHED",
            Self::UserRevoked => "USER_REVOKED",
            Self::Unsupported => "UNSUPPORTED",
            Self::DownloadFailed => "DOWNLOAD_FAILED",
            Self::DownloadTooLarge => "DOWNLOAD_TOO_LARGE",
            Self::AnswerTooLarge => "ANSWER_TOO_LARGE",
            Self::Internal => "INTERNAL",
            Self::BrowserExited => "BROWSER_EXITED",
            Self::TabNotYours => "TAB_NOT_YOURS",
            Self::BudgetExceeded => "BUDGET_EXCEEDED",
            Self::Paused => "PAUSED",
        }
    }

    /// What an agent should do next when it meets this code.
    pub fn hint(self) -> &'static str {
        match self {
            Self::TabNotFound => "List tabs with browser_tabs {action: \"list\"} and use one of their ids.",
            Self::TabClosed => "The tab is gone; pick another with browser_tabs or open one with browser_tabs {action: \"new\"}.",
            Self::NoBrowser => "No browser to drive; the message says why (a launch that failed, an extension that did not connect, a DevTools endpoint that does not answer). Tell the person that cause (kapture doctor shows the set-up); kapture stays up and tries again on the next call.",
            Self::ExtensionDisconnected => "The extension dropped the connection; retry the call, it reconnects on its own.",
            Self::Timeout => "The page did not answer in time; check the page state (browser_take_screenshot) and retry, or pass a larger timeout.",
            Self::SelectorNotFound => "No element matches; check the selector against the page (browser_evaluate with document.querySelectorAll) or wait for the page to render.",
            Self::RefStale => "The element reference belongs to an older page; take a new snapshot.",
            Self::NotInteractable => "The element exists but cannot receive input (hidden, disabled, covered or zero-sized); scroll, close overlays or pick another element.",
            Self::InvalidSelector => "The selector (CSS, or XPath starting with / or xpath=) does not parse; fix its syntax.",
            Self::EvalFailed => "The script threw in the page; fix the script or check the page state.",
            Self::NavigationFailed => "The page could not be loaded; check the URL and that the server is reachable.",
            Self::PolicyDenied => "The action is not allowed by the policy for this site.",
            Self::ApprovalDenied => "A person declined this action; do not retry it without asking.",
            Self::DebuggerConflict => "Another debugger (DevTools or another extension) holds this tab; close it or use another tab.",
            Self::BadArgs => "Fix the arguments as the message says.",
            Self::UnsupportedPage => "Browser-internal pages (chrome://, the Web Store) cannot be controlled; navigate to an http(s) page or open a new tab.",
            Self::VersionMismatch => "Kapture and its extension are different versions; update the older one.",
            Self::DialogOpen => "Answer the dialog with browser_handle_dialog {accept: true|false, promptText?}; the page waits until then.",
            Self::PageCrashed => "The page crashed; navigate the tab (browser_navigate) or reload it, or use another tab.",
            Self::DebuggerDetached => "The page made Chrome drop the debugger; check the page state before repeating an action (it may have run), then retry: the next call re-attaches.",
            Self::UserRevoked => "A person stopped Kapture's control of this tab; do not retry on it. Ask them, or use another tab.",
            Self::Unsupported => "This browser cannot do that; see the message for where it works.",
            Self::DownloadFailed => "The download did not complete; check the URL or the server and retry.",
            Self::DownloadTooLarge => "The file is larger than the policy allows (download_max_bytes in the policy file); do not retry. Tell the person, who may raise the cap.",
            Self::AnswerTooLarge => "Ask for less: a smaller maxChars or max, a narrower ref or selector, a screenshot of the viewport or one element (type jpeg, a smaller scale), or a script that returns only what you need (a slice, a count, a few fields).",
            Self::Internal => "Kapture hit an internal error; retry, and report it if it persists.",
            Self::BrowserExited => "The browser kapture launched has exited; retrying will not bring it back. The message quotes its last error lines and the likely fix: tell the person, who fixes it and restarts kapture.",
            Self::TabNotYours => "Another agent's session drives this tab. Open your own with browser_tabs {action: \"new\"}; sharing tabs between sessions is for the person to allow (share_tabs in the policy file, or --share-tabs).",
            Self::BudgetExceeded => "The step budget is spent. Stop and tell the person: a per-site budget resets at the time the message gives; a person can extend any budget in Kapture's side panel. Do not work around it in another tab or session.",
            Self::Paused => "A person paused Kapture in its side panel. Wait for them to resume, then retry; do not work around it.",
        }
    }

    /// Whether the same call, repeated unchanged later, may succeed (the agent's state need
    /// not change first): a lost connection, a time-out, a pause, a spent budget that resets.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::NoBrowser
                | Self::ExtensionDisconnected
                | Self::Timeout
                | Self::SelectorNotFound
                | Self::NotInteractable
                | Self::NavigationFailed
                | Self::DebuggerDetached
                | Self::DebuggerConflict
                | Self::DownloadFailed
                | Self::Internal
                | Self::BudgetExceeded
                | Self::Paused
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
