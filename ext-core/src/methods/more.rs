//! The rest of the methods: dialogs, uploads and downloads, network, cookies and storage,
//! emulation, drag, scroll and coordinate input, PDFs, highlight, the recorder and the picker.

use super::*;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HandleDialog {
    /// Accept (OK) or dismiss (Cancel) the dialog.
    pub accept: bool,
    /// Text to answer a prompt() with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub prompt_text: Option<String>,
}
method!(
    HandleDialog,
    "handle_dialog",
    Text,
    INTERACT,
    during_dialog,
    tool = "browser_handle_dialog",
    does = (Risk::Medium, "answers the page's dialog"),
    targets = |d: &HandleDialog| match d.accept {
        true => vec![("the dialog".to_string(), Spot::Dialog)],
        false => Vec::new(),
    },
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FileUpload {
    /// The file input (ref or selector); omit to answer a file chooser the page opened.
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Files to set (empty clears the input): names in kapture's uploads folder, or paths
    /// inside a folder the person allowed (`--upload-dir`).
    pub paths: Vec<String>,
}
method!(
    FileUpload,
    "file_upload",
    Text,
    Some(Category::Upload),
    target
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct DownloadArgs {
    /// URL to download (else click the element named by ref or selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(flatten)]
    pub target: ElementTarget,
}

method!(
    DownloadArgs,
    "download",
    Downloaded,
    Some(Category::Download),
    browser,
    timeout = LONG_TIMEOUT_MS,
    tool = "browser_download",
    target,
    destination = DownloadArgs::destination_url,
);

/// A finished download, where the browser wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Downloaded {
    pub tab_id: TabId,
    /// Absolute path of the file the browser wrote.
    pub path: String,
    pub url: String,
    pub bytes: u64,
    pub mime_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NetworkRequests {
    /// Only requests whose URL contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// At most this many, newest first (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// maxChars of the answer, and the request to start from (as the cut marker says).
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    NetworkRequests,
    "network_requests",
    Text,
    READ,
    repeatable,
    during_dialog,
    page_text,
    tool = "browser_network_requests"
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct NetworkRequest {
    /// Request id from browser_network_requests.
    #[serde(deserialize_with = "lenient::text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::text_schema"))]
    pub id: String,
    /// Longest response body answered, in characters (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_body: Option<u32>,
    /// Set by kapture from its configuration, never by the agent.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub reveal_sensitive: bool,
}
method!(
    NetworkRequest,
    "network_request",
    Text,
    READ,
    repeatable,
    during_dialog,
    page_text,
    tool = "browser_network_request"
);

/// What to do with cookies or storage entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum StoreAction {
    #[default]
    List,
    Get,
    Set,
    Delete,
    Clear,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Cookies {
    /// list, get, set, delete or clear; all scoped to the tab's page URL.
    pub action: StoreAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub value: Option<String>,
    /// Path of a cookie to set (default /).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Expiry of a cookie to set, seconds since the Unix epoch (default: a session cookie).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    #[serde(default)]
    pub http_only: bool,
    #[serde(default)]
    pub secure: bool,
    /// maxChars of a list, and the cookie to start from (as the cut marker says).
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    Cookies,
    "cookies",
    Text,
    Some(Category::Storage),
    tool = "browser_cookies"
);

/// Which Web Storage area.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum StorageArea {
    #[default]
    Local,
    Session,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Storage {
    /// local or session storage of the tab's origin.
    pub area: StorageArea,
    pub action: StoreAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub value: Option<String>,
    /// maxChars of a list, and the key to start from (as the cut marker says).
    #[serde(flatten)]
    pub budget: Budget,
}
method!(
    Storage,
    "storage",
    Text,
    Some(Category::Storage),
    tool = "browser_storage"
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Resize {
    /// Viewport width in CSS pixels.
    pub width: u32,
    /// Viewport height in CSS pixels.
    pub height: u32,
}
method!(Resize, "resize", Text, INTERACT, tool = "browser_resize");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Geolocation {
    pub latitude: f64,
    pub longitude: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<f64>,
}

/// Preferred color scheme to emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    Light,
    Dark,
    /// Stop emulating.
    None,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Emulate {
    /// A device preset: "iPhone 13", "Pixel 7", "iPad", "Desktop" (or "none" to stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Geolocation>,
    /// Cut the tab off the network (true) or restore it (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
}
method!(Emulate, "emulate", Text, INTERACT, tool = "browser_emulate");

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Drag {
    /// Ref of the element to drag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ref: Option<String>,
    /// CSS selector of the element to drag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_selector: Option<String>,
    /// Ref of the element to drop on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ref: Option<String>,
    /// CSS selector of the element to drop on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_selector: Option<String>,
}
method!(
    Drag,
    "drag",
    ActionOutcome,
    INTERACT,
    tool = "browser_drag",
    targets = drag_targets
);

impl DownloadArgs {
    fn destination_url(&self) -> Option<(Category, &str)> {
        Some((Category::Download, self.url.as_deref()?))
    }
}

/// What a drag lands on: the element it drags and the one it drops on.
fn drag_targets(d: &Drag) -> Vec<(String, Spot)> {
    let element = |r: &Option<String>, s: &Option<String>| {
        ElementTarget {
            element_ref: r.clone(),
            selector: s.clone(),
            element: None,
        }
        .get()
        .map(Spot::Element)
    };
    [
        ("what it drags", element(&d.start_ref, &d.start_selector)),
        ("where it drops", element(&d.end_ref, &d.end_selector)),
    ]
    .into_iter()
    .filter_map(|(name, s)| Some((name.to_string(), s?)))
    .collect()
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Scroll {
    /// Scroll with the mouse over this element (default: the middle of the viewport).
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Pixels to the right (negative: left).
    #[serde(default)]
    pub delta_x: f64,
    /// Pixels down (negative: up); default one viewport-ish step of 600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_y: Option<f64>,
}
method!(
    Scroll,
    "scroll",
    ActionOutcome,
    INTERACT,
    tool = "browser_scroll",
    target,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MouseClickXy {
    /// Viewport x in CSS pixels.
    pub x: f64,
    /// Viewport y in CSS pixels.
    pub y: f64,
    #[serde(default)]
    pub button: MouseButton,
    #[serde(default)]
    pub double_click: bool,
}
method!(
    MouseClickXy,
    "mouse_click_xy",
    ActionOutcome,
    INTERACT,
    tool = "browser_mouse_click_xy",
    targets = |p: &MouseClickXy| vec![("the element there".to_string(), Spot::Point(p.x, p.y))],
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct MouseMoveXy {
    /// Viewport x in CSS pixels.
    pub x: f64,
    /// Viewport y in CSS pixels.
    pub y: f64,
}
method!(
    MouseMoveXy,
    "mouse_move_xy",
    ActionOutcome,
    INTERACT,
    tool = "browser_mouse_move_xy",
    targets = |p: &MouseMoveXy| vec![("the element there".to_string(), Spot::Point(p.x, p.y))],
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct PdfSave {
    /// A file name in the download folder (default: named after the page); a taken name
    /// gets a numbered one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The bridge command of a PDF: only the page; kapture writes the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrintPdf {}
method!(
    PrintPdf,
    "print_pdf",
    Pdf,
    Some(Category::Download),
    timeout = LONG_TIMEOUT_MS
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pdf {
    pub tab_id: TabId,
    /// Base64 PDF bytes.
    pub data: String,
    pub title: String,
}

/// Outline an element on the page for a moment (the panel's ref links).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Highlight {
    #[serde(flatten)]
    pub target: ElementTarget,
}
method!(Highlight, "highlight", Text, READ, target);

/// What the recorder should do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RecorderAction {
    #[default]
    Status,
    /// Show the recorder widget in the page (a person starts, stops and saves there).
    Enable,
    Start,
    Stop,
}

/// Record what a person does in the tab; `stop` with a `name` saves it as a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Recorder {
    /// enable (show the in-page widget), start, stop or status.
    pub action: RecorderAction,
    /// With stop: the scenario's name (letters, digits, - and _).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// With stop: a one-line title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// With stop: what the scenario does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// With stop: tags to find it by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// With stop: saved scenarios to run first (a login among them runs only when the page
    /// is not logged in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,
}
impl Method for Recorder {
    const NAME: &'static str = "recorder";
    type Response = RecorderState;
    const CATEGORY: Option<Category> = READ;
    /// Whether it records is a read; recording a person (or showing the widget that does)
    /// is its own category, a keylogger otherwise.
    fn category(&self) -> Option<Category> {
        Some(match self.action {
            RecorderAction::Status => Category::Read,
            _ => Category::Record,
        })
    }
}

/// The recorder on a tab; `steps` is filled by `stop`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecorderState {
    pub tab_id: TabId,
    pub recording: bool,
    /// Raw events captured so far.
    pub captured: usize,
    /// Where the recording started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    #[serde(default)]
    pub steps: Vec<crate::recorder::RecordedStep>,
}

/// The picker's default wait for the person, in seconds.
pub const PICK_DEFAULT_SECS: f64 = 60.0;
/// The picker's longest wait, in seconds (the tool's whole call stays under kapture's
/// 300 s call limit).
pub const PICK_MAX_SECS: f64 = 240.0;
/// Time a pick's command gets beyond the person's wait: the overlay installed and removed,
/// the answer built.
pub const PICK_GRACE_MS: u64 = 10_000;

/// Ask the person to point at an element of the page: an outline follows the mouse, a click
/// picks (kept from the page's handlers), Esc cancels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Pick {
    /// What to ask the person, shown in the page's banner as the agent's words ("The agent
    /// asks: …"), e.g. "the price of the first result".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "lenient::opt_text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::opt_text_schema"))]
    pub prompt: Option<String>,
    /// Seconds to wait for the person (default 60, at most 240); then TIMEOUT, the page
    /// left as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
}
method!(
    Pick,
    "pick",
    Picked,
    READ,
    timeout = PICK_DEFAULT_SECS as u64 * 1000 + PICK_GRACE_MS,
    page_text
);

/// The element a person picked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Picked {
    pub tab_id: TabId,
    /// The element's line of the page model (escaped like every snapshot line), with its ref.
    pub line: String,
    /// A ref of the page model: the element tools take it as it is.
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// The ref with the role and name `line` shows (none when the line names nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<crate::snapshot::ShownRef>,
    /// The recorder's locators of the element, best first.
    pub locators: Vec<PickedLocator>,
    /// The URL of the frame holding the element, when it is not the main frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_url: Option<String>,
}

/// One locator of a picked element, and the same as a Playwright locator expression (raw
/// page text: whoever shows it in a text answer escapes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PickedLocator {
    pub locator: crate::recorder::Locator,
    pub code: String,
}
