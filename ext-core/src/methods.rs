//! The commands the extension serves: each method's name, parameters and response, paired
//! in the type system through [`Method`], so `kapture` calls them typed end to end.
//!
//! Parameter structs are also the MCP tools' argument shapes (with the `schema` feature they
//! derive `JsonSchema`), so a tool's arguments are defined exactly once.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::TabId;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// A command of the bridge: `NAME` on the wire, `Self` as params, `Response` as the answer.
pub trait Method: Serialize + DeserializeOwned {
    const NAME: &'static str;
    /// Default per-command timeout in milliseconds.
    const TIMEOUT_MS: u64 = 30_000;
    type Response: Serialize + DeserializeOwned;
}

macro_rules! method {
    ($ty:ty, $name:literal, $resp:ty) => {
        impl Method for $ty {
            const NAME: &'static str = $name;
            type Response = $resp;
        }
    };
    ($ty:ty, $name:literal, $resp:ty, $timeout:expr) => {
        impl Method for $ty {
            const NAME: &'static str = $name;
            const TIMEOUT_MS: u64 = $timeout;
            type Response = $resp;
        }
    };
}

/// Navigation, screenshots and waits get more time than the 30 s default.
pub const LONG_TIMEOUT_MS: u64 = 60_000;

/// Where a page ended up after a navigation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageInfo {
    pub tab_id: TabId,
    pub url: String,
    pub title: String,
    /// HTTP status of the main document, when the browser knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

/// What an input action led to: the page as it is after the action settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionOutcome {
    pub tab_id: TabId,
    /// True when the action started a navigation of the main frame.
    pub navigated: bool,
    pub url: String,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Navigate {
    /// The URL to load (http, https, file, about:blank or data:).
    pub url: String,
}
method!(Navigate, "navigate", PageInfo, LONG_TIMEOUT_MS);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GoBack {}
method!(GoBack, "go_back", PageInfo, LONG_TIMEOUT_MS);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GoForward {}
method!(GoForward, "go_forward", PageInfo, LONG_TIMEOUT_MS);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Reload {}
method!(Reload, "reload", PageInfo, LONG_TIMEOUT_MS);

/// One tab as the browser reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    pub tab_id: TabId,
    pub index: u32,
    pub window_id: i32,
    pub url: String,
    pub title: String,
    pub active: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsList {}
method!(TabsList, "tabs.list", Vec<TabInfo>);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsNew {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}
method!(TabsNew, "tabs.new", TabInfo, LONG_TIMEOUT_MS);

/// Bring the command's tab to the front.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsSelect {}
method!(TabsSelect, "tabs.select", TabInfo);

/// Close the command's tab.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TabsClose {}
method!(TabsClose, "tabs.close", Closed);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Closed {
    pub tab_id: TabId,
}

/// Mouse button for clicks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

/// A modifier key held during a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub enum Modifier {
    Alt,
    Control,
    ControlOrMeta,
    Meta,
    Shift,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Click {
    /// CSS selector of the element to click.
    pub selector: String,
    /// Mouse button, default left.
    #[serde(default)]
    pub button: MouseButton,
    /// Double-click instead of a single click.
    #[serde(default)]
    pub double_click: bool,
    /// Modifier keys to hold during the click.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modifiers: Vec<Modifier>,
}
method!(Click, "click", ActionOutcome);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Hover {
    /// CSS selector of the element to hover.
    pub selector: String,
}
method!(Hover, "hover", ActionOutcome);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Type {
    /// CSS selector of the input, textarea or contenteditable element.
    pub selector: String,
    /// Text that replaces the field's content.
    pub text: String,
    /// Press Enter afterwards.
    #[serde(default)]
    pub submit: bool,
    /// Type one key at a time (fires key events per character) instead of inserting at once.
    #[serde(default)]
    pub slowly: bool,
}
method!(Type, "type", ActionOutcome);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct SelectOption {
    /// CSS selector of the <select> element.
    pub selector: String,
    /// Values or visible labels of the options to select.
    pub values: Vec<String>,
}
method!(SelectOption, "select_option", Selected);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selected {
    pub tab_id: TabId,
    /// The values now selected.
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct PressKey {
    /// Key name such as `Enter`, `ArrowLeft`, `a`, or a combination such as `Control+a`.
    pub key: String,
}
method!(PressKey, "press_key", ActionOutcome);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Evaluate {
    /// A JavaScript expression, or a function such as `() => document.title` (may be async).
    pub function: String,
}
method!(Evaluate, "evaluate", Evaluated);

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
    #[default]
    Png,
    Jpeg,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Screenshot {
    /// Capture the whole scrollable page instead of the viewport.
    #[serde(default)]
    pub full_page: bool,
    /// Capture only this element (CSS selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// png (default) or jpeg.
    #[serde(default, rename = "type")]
    pub image_type: ImageType,
}
method!(Screenshot, "screenshot", Captured, LONG_TIMEOUT_MS);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Captured {
    pub tab_id: TabId,
    /// Base64 image bytes.
    pub data: String,
    pub mime_type: String,
    pub width: u32,
    pub height: u32,
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
}
method!(ConsoleMessages, "console_messages", ConsoleLog);

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
