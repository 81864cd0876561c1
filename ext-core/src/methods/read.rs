//! The methods that read: scripts, screenshots, the console, the page model, text, links
//! and waits.

use super::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Evaluate {
    /// A JavaScript expression, or a function such as `() => document.title` (may be async).
    /// With `ref` or `selector` the function receives that element: `(el) => el.value`.
    pub function: String,
    #[serde(flatten)]
    pub target: ElementTarget,
}
method!(
    Evaluate,
    "evaluate",
    Evaluated,
    Some(Category::Eval),
    page_text,
    tool = "browser_evaluate",
    target,
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluated {
    pub tab_id: TabId,
    /// The result as JSON; `undefined` becomes absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

/// Image encoding of a screenshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ImageType {
    Png,
    #[default]
    Jpeg,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Screenshot {
    /// Capture the whole scrollable page instead of the viewport (capped; marked when cut).
    #[serde(default)]
    pub full_page: bool,
    /// Capture only this element (by selector or ref).
    #[serde(flatten)]
    pub target: ElementTarget,
    /// jpeg (default, smaller) or png.
    #[serde(default, rename = "type")]
    pub image_type: ImageType,
    /// Scale factor (0.1–2); default: fit the longer side into 1568 px.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
}
method!(
    Screenshot,
    "screenshot",
    Captured,
    READ,
    timeout = LONG_TIMEOUT_MS,
    repeatable,
    tool = "browser_take_screenshot",
    target,
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Captured {
    pub tab_id: TabId,
    /// Base64 image bytes.
    pub data: String,
    pub mime_type: String,
    /// Image size in pixels.
    pub width: u32,
    pub height: u32,
    /// Set when a full page was cut: its whole height in CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_from: Option<u32>,
}

/// Severity of a console message, least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Debug,
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ConsoleMessages {
    /// Only messages at this level or more severe (debug < info < warning < error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<ConsoleLevel>,
    /// At most this many messages, newest first (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// maxChars of the answer, and the message to start from (as the cut marker says).
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    ConsoleMessages,
    "console_messages",
    ConsoleLog,
    READ,
    repeatable,
    during_dialog,
    page_text,
    tool = "browser_console_messages"
);

/// One console message (or uncaught exception) of a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsoleMessage {
    pub level: ConsoleLevel,
    pub text: String,
    /// Milliseconds since the Unix epoch.
    pub timestamp: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsoleLog {
    pub tab_id: TabId,
    /// Newest first.
    pub messages: Vec<ConsoleMessage>,
    /// How many matching messages exist in the buffer (may exceed `messages.len()`).
    pub total: u32,
}

/// Paging and budget of a text answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// Longest answer in characters (default: the server's --max-chars, 25000; a snapshot
    /// takes at least 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u32>,
    /// Where to continue after a cut, as the cut marker says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Only this element's subtree (ref or selector); `offset` then pages through its children.
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Levels to show below the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Only elements an agent can act on, one per line.
    #[serde(default)]
    pub interactive_only: bool,
    /// Only elements an agent can act on whose box is in the viewport now, one per line
    /// (implies interactiveOnly); scroll to see others.
    #[serde(default)]
    pub viewport_only: bool,
    /// With interactiveOnly or viewportOnly: most elements per answer; the next ones with
    /// `offset`, as the marker says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// Answer only what changed since the last snapshot of this tab.
    #[serde(default)]
    pub diff: bool,
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    Snapshot,
    "snapshot",
    Text,
    READ,
    repeatable,
    page_text,
    tool = "browser_snapshot",
    target,
);

/// A text answer, possibly cut to its budget (the text then says how to get the rest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    pub tab_id: TabId,
    pub text: String,
    #[serde(default)]
    pub cut: bool,
    /// The refs a snapshot or find answer gives, with the role and name each line shows:
    /// kapture's session log reads them here, not out of the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<crate::snapshot::ShownRef>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Find {
    /// Text to look for in roles, names, texts, values and link targets (case-insensitive).
    #[serde(deserialize_with = "lenient::text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::text_schema"))]
    pub query: String,
    /// Most matches to answer (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// maxChars of the answer, and the match to start from (as the cut marker says).
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    Find,
    "find",
    Text,
    READ,
    repeatable,
    page_text,
    tool = "browser_find"
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GetText {
    /// The element (default: the whole page).
    #[serde(flatten)]
    pub target: ElementTarget,
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    GetText,
    "get_text",
    Text,
    READ,
    repeatable,
    page_text,
    tool = "browser_get_text",
    target,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GetHtml {
    /// The element (default: the whole document).
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Include the element's own tag (outerHTML); default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outer: Option<bool>,
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    GetHtml,
    "get_html",
    Text,
    READ,
    repeatable,
    page_text,
    tool = "browser_get_html",
    target,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ReadMarkdown {
    /// Read only this element (default: the page's main content).
    #[serde(flatten)]
    pub target: ElementTarget,
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    ReadMarkdown,
    "read_markdown",
    Text,
    READ,
    repeatable,
    page_text,
    tool = "browser_read_markdown",
    target,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExtractLinks {
    /// Only links inside this element.
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Only links to the page's own origin.
    #[serde(default)]
    pub same_origin_only: bool,
    /// Only URLs matching this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<String>,
    /// Drop URLs matching this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<String>,
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    ExtractLinks,
    "extract_links",
    Text,
    READ,
    repeatable,
    page_text,
    tool = "browser_extract_links",
    target,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WaitFor {
    /// Wait until this text is on the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub text: Option<String>,
    /// Wait until this text is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub text_gone: Option<String>,
    /// Wait until an element matches this CSS (or XPath) selector (visible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// With `selector`: wait until no visible element matches it instead.
    #[serde(default)]
    pub gone: bool,
    /// Just wait this many seconds (at most 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<f64>,
}
method!(
    WaitFor,
    "wait_for",
    Waited,
    READ,
    timeout = LONG_TIMEOUT_MS,
    repeatable,
    tool = "browser_wait_for"
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waited {
    pub tab_id: TabId,
    pub waited_ms: u64,
    pub what: String,
}
