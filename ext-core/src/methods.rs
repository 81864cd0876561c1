//! The commands the extension serves: each method's name, parameters and response, paired
//! in the type system through [`Method`], so `kapture` calls them typed end to end.
//!
//! Parameter structs are also the MCP tools' argument shapes (with the `schema` feature they
//! derive `JsonSchema`), so a tool's arguments are defined exactly once.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;

use crate::policy::{Category, Risk};
use crate::wire::{ErrorCode, TabId, WireError};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// A command of the bridge: `NAME` on the wire, `Self` as params, `Response` as the answer,
/// and every fact the worker, the gate and kapture need about it. A new command is a struct
/// with this impl, a line in the [`commands!`] table, its CDP function and its adapter; the
/// compiler catches a missing category (`CATEGORY` has no default) or dispatch arm.
pub trait Method: Serialize + DeserializeOwned {
    const NAME: &'static str;
    /// Default per-command timeout in milliseconds.
    const TIMEOUT_MS: u64 = DEFAULT_TIMEOUT_MS;
    type Response: Serialize + DeserializeOwned;
    /// Where it runs: in a tab's queue (default) or at once in the browser.
    const ROUTE: Route = Route::Tab;
    /// What the policy judges it as, for its default arguments (`category` refines it by
    /// the arguments); `None` only for browser methods that touch no page.
    const CATEGORY: Option<Category>;
    /// Running it twice does no harm (it only looks at the page or the tabs): the bridge
    /// sends it again when it cannot tell whether a lost worker ran it.
    const REPEATABLE: bool = false;
    /// It runs while a JavaScript dialog blocks the page (it answers the dialog or reads
    /// kept state only).
    const DURING_DIALOG: bool = false;
    /// It runs on a crashed page (it replaces the page).
    const ON_CRASHED_PAGE: bool = false;
    /// Its answer carries page text, where a password field's value could show up.
    const CARRIES_PAGE_TEXT: bool = false;
    /// The MCP tool that is exactly this command (same arguments, less the tab and timeout):
    /// the panel offers these to run by hand.
    const TOOL: Option<&'static str> = None;

    /// Where the text it types sits in its arguments: what is masked wherever they are shown
    /// again (history, journal, approvals).
    const TYPED: Typed = Typed::Nothing;
    /// It changes the value of a field (typing, choosing an option, filling a form).
    const CHANGES_FIELD: bool = false;
    /// What it does beyond its category and the elements it lands on, as a person's
    /// approval says it (`policy::risk::rate`): answers a dialog, closes a tab, changes
    /// what Kapture keeps.
    const DOES: Option<(Risk, &'static str)> = None;
    /// How an approval says that it submits, when it does (`policy::risk::submits`).
    const SUBMITS_AS: &'static str = "submits what it types";

    /// The policy category of these arguments.
    fn category(&self) -> Option<Category> {
        Self::CATEGORY
    }

    /// The element it names by its own `ref` or `selector`, if any: the gate judges it on
    /// that element's frame.
    fn target(&self) -> Option<&ElementTarget> {
        None
    }

    /// Every place its input lands, with how an approval names it (empty: the element it
    /// names): both ends of a drag, every field of a form fill, the focused element for
    /// keys, the element at a point, an accepted dialog.
    fn targets(&self) -> Vec<(String, Spot)> {
        self.target()
            .map(|t| vec![(String::new(), Spot::Element(t.clone()))])
            .unwrap_or_default()
    }

    /// The URL it loads or fetches, and what that is judged as: kapture checks it before
    /// the command is sent.
    fn destination(&self) -> Option<(Category, &str)> {
        None
    }
}

/// Where a command's typed text sits in its arguments (see [`Method::TYPED`]); the indexes
/// are those of `ActionOutcome::confidential`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    Nothing,
    /// One text, in this argument (index 0).
    Text(&'static str),
    /// One value in `key` of each entry of the list argument `list` (by index).
    EachOf {
        list: &'static str,
        key: &'static str,
    },
}

/// Where a command's input lands, besides the page: what is read for its approval.
#[derive(Debug, Clone, PartialEq)]
pub enum Spot {
    /// An element it names (ref or selector).
    Element(ElementTarget),
    /// The element that has focus (keys go there), followed into frames and shadow roots.
    Focused,
    /// The element under a point of the viewport (CSS pixels), as the browser hit-tests it.
    Point(f64, f64),
    /// The JavaScript dialog open now.
    Dialog,
}

/// Where a method runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Needs no tab (or names one in its params): runs at once, concurrently.
    Browser,
    /// Runs on one tab, in that tab's queue, after attaching the debugger.
    Tab,
}

/// A method's facts as data, for lookups by wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub name: &'static str,
    pub route: Route,
    pub category: Option<Category>,
    pub timeout_ms: u64,
    pub repeatable: bool,
    pub during_dialog: bool,
    pub on_crashed_page: bool,
    pub carries_page_text: bool,
    pub tool: Option<&'static str>,
    pub typed: Typed,
    pub changes_field: bool,
    pub does: Option<(Risk, &'static str)>,
    pub submits_as: &'static str,
}

impl Facts {
    pub const fn of<M: Method>() -> Facts {
        Facts {
            name: M::NAME,
            route: M::ROUTE,
            category: M::CATEGORY,
            timeout_ms: M::TIMEOUT_MS,
            repeatable: M::REPEATABLE,
            during_dialog: M::DURING_DIALOG,
            on_crashed_page: M::ON_CRASHED_PAGE,
            carries_page_text: M::CARRIES_PAGE_TEXT,
            tool: M::TOOL,
            typed: M::TYPED,
            changes_field: M::CHANGES_FIELD,
            does: M::DOES,
            submits_as: M::SUBMITS_AS,
        }
    }
}

/// The facts of the method named `name` on the wire.
pub fn facts(name: &str) -> Option<&'static Facts> {
    METHODS.iter().find(|f| f.name == name)
}

/// The facts of a method by its wire name or by the MCP tool that is exactly it
/// (`browser_type`): journals and histories keep either.
pub fn facts_of_call(name: &str) -> Option<&'static Facts> {
    facts(name).or_else(|| METHODS.iter().find(|f| f.tool == Some(name)))
}

/// Whether running `method` twice does no harm (see [`Method::REPEATABLE`]).
pub fn repeatable(method: &str) -> bool {
    facts(method).is_some_and(|f| f.repeatable)
}

/// Params as a method's struct, or `BAD_ARGS` naming the method; absent params are no
/// arguments.
pub fn decode_params<M: Method>(params: Value) -> Result<M, WireError> {
    let params = if params.is_null() {
        Value::Object(Default::default())
    } else {
        params
    };
    serde_json::from_value(params).map_err(|e| {
        WireError::new(
            ErrorCode::BadArgs,
            format!("bad arguments for {}: {e}", M::NAME),
        )
    })
}

/// The one table of commands: generates [`Command`] (one variant per method, decoded once
/// from `method` + `params`, encoded back to the same JSON) and [`METHODS`].
macro_rules! commands {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        /// A command decoded from the wire: `method` picks the variant, `params` is its struct.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Command {
            $($variant($ty)),*
        }

        /// Every method the extension serves, with its facts.
        pub const METHODS: &[Facts] = &[$(Facts::of::<$ty>()),*];

        impl Command {
            /// Decode `params` as `method`'s struct: `BAD_ARGS` for an unknown method or
            /// arguments of the wrong shape, before anything runs.
            pub fn decode(method: &str, params: Value) -> Result<Command, WireError> {
                match method {
                    $(<$ty as Method>::NAME => Ok(Command::$variant(decode_params::<$ty>(params)?)),)*
                    other => Err(unknown_method(other)),
                }
            }

            pub fn facts(&self) -> Facts {
                match self {
                    $(Command::$variant(_) => Facts::of::<$ty>()),*
                }
            }

            /// What the policy judges these arguments as.
            pub fn category(&self) -> Option<Category> {
                match self {
                    $(Command::$variant(m) => m.category()),*
                }
            }

            /// See [`Method::target`].
            pub fn target(&self) -> Option<&ElementTarget> {
                match self {
                    $(Command::$variant(m) => m.target()),*
                }
            }

            /// See [`Method::targets`].
            pub fn targets(&self) -> Vec<(String, Spot)> {
                match self {
                    $(Command::$variant(m) => m.targets()),*
                }
            }

            /// See [`Method::destination`].
            pub fn destination(&self) -> Option<(Category, &str)> {
                match self {
                    $(Command::$variant(m) => m.destination()),*
                }
            }

            /// The params as they go on the wire.
            pub fn params(&self) -> Value {
                let value = match self {
                    $(Command::$variant(m) => serde_json::to_value(m)),*
                };
                value.unwrap_or_default()
            }
        }
    };
}

impl Command {
    pub fn name(&self) -> &'static str {
        self.facts().name
    }

    pub fn route(&self) -> Route {
        self.facts().route
    }
}

/// `BAD_ARGS` for a method this extension does not know.
pub fn unknown_method(method: &str) -> WireError {
    WireError::new(
        ErrorCode::BadArgs,
        format!("unknown method {method:?}; the extension may be older than kapture"),
    )
}

commands! {
    TabsList(TabsList),
    TabsNew(TabsNew),
    TabsSelect(TabsSelect),
    TabsClose(TabsClose),
    Navigate(Navigate),
    GoBack(GoBack),
    GoForward(GoForward),
    Reload(Reload),
    Click(Click),
    Hover(Hover),
    Type(Type),
    SelectOption(SelectOption),
    PressKey(PressKey),
    Evaluate(Evaluate),
    Screenshot(Screenshot),
    ConsoleMessages(ConsoleMessages),
    Snapshot(Snapshot),
    Find(Find),
    GetText(GetText),
    GetHtml(GetHtml),
    ReadMarkdown(ReadMarkdown),
    ExtractLinks(ExtractLinks),
    WaitFor(WaitFor),
    FillForm(FillForm),
    HandleDialog(HandleDialog),
    FileUpload(FileUpload),
    Download(DownloadArgs),
    NetworkRequests(NetworkRequests),
    NetworkRequest(NetworkRequest),
    Cookies(Cookies),
    Storage(Storage),
    LoginRead(LoginRead),
    LoginWrite(LoginWrite),
    Resize(Resize),
    Emulate(Emulate),
    Drag(Drag),
    Scroll(Scroll),
    MouseClickXy(MouseClickXy),
    MouseMoveXy(MouseMoveXy),
    PrintPdf(PrintPdf),
    Highlight(Highlight),
    Recorder(Recorder),
    Pick(Pick),
    StoreWrite(StoreWrite),
}

// Every tab command is judged: one without a category would pass the gate unjudged.
const _: () = {
    let mut i = 0;
    while i < METHODS.len() {
        assert!(
            !matches!(METHODS[i].route, Route::Tab) || METHODS[i].category.is_some(),
            "a tab method without a policy category"
        );
        i += 1;
    }
};

/// One method's impl: name, response, category, then any facts that differ from the
/// defaults (`timeout`, `browser`, `repeatable`, `during_dialog`, `on_crash`, `page_text`,
/// `tool`, `changes_field`; `target` for a struct with a flattened `target`, `targets` with
/// a function for other landing places).
macro_rules! method {
    ($ty:ty, $name:literal, $resp:ty, $cat:expr $(, $key:ident $(= $val:expr)?)* $(,)?) => {
        impl Method for $ty {
            const NAME: &'static str = $name;
            type Response = $resp;
            const CATEGORY: Option<Category> = $cat;
            $(method!(@fact $key $($val)?);)*
        }
    };
    (@fact timeout $v:expr) => { const TIMEOUT_MS: u64 = $v; };
    (@fact browser) => { const ROUTE: Route = Route::Browser; };
    (@fact repeatable) => { const REPEATABLE: bool = true; };
    (@fact during_dialog) => { const DURING_DIALOG: bool = true; };
    (@fact on_crash) => { const ON_CRASHED_PAGE: bool = true; };
    (@fact page_text) => { const CARRIES_PAGE_TEXT: bool = true; };
    (@fact tool $v:expr) => { const TOOL: Option<&'static str> = Some($v); };
    (@fact changes_field) => { const CHANGES_FIELD: bool = true; };
    (@fact does $v:expr) => { const DOES: Option<(Risk, &'static str)> = Some($v); };
    (@fact submits_as $v:expr) => { const SUBMITS_AS: &'static str = $v; };
    (@fact target) => {
        fn target(&self) -> Option<&ElementTarget> {
            self.target.named()
        }
    };
    (@fact destination $f:expr) => {
        fn destination(&self) -> Option<(Category, &str)> {
            $f(self)
        }
    };
    (@fact targets $f:expr) => {
        fn targets(&self) -> Vec<(String, Spot)> {
            $f(self)
        }
    };
}

const NAVIGATE: Option<Category> = Some(Category::Navigate);
const READ: Option<Category> = Some(Category::Read);
const INTERACT: Option<Category> = Some(Category::Interact);
const RECORD: Option<Category> = Some(Category::Record);

/// The element a tool acts on: exactly one of `ref` (from a snapshot) or `selector`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ElementTarget {
    /// Ref of the element from browser_snapshot or browser_find, e.g. "e12".
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub element_ref: Option<String>,
    /// CSS selector of the element (main frame), when no ref is at hand; XPath when it starts
    /// with `/`, `(` or `xpath=`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// What the element is, in words (for people reading the log; not used to find it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
}

impl ElementTarget {
    /// This target, if it names an element (tools where the element is optional act on the
    /// whole page otherwise).
    pub fn get(&self) -> Option<ElementTarget> {
        self.named().cloned()
    }

    /// This target, if it names an element.
    pub fn named(&self) -> Option<&ElementTarget> {
        (self.element_ref.is_some() || self.selector.is_some()).then_some(self)
    }

    /// A short description for answers: the ref, else the selector. The agent's own words
    /// for the element are quoted, so they stay one string (a label such as `Password:`
    /// is never read as the start of a value, nor can it add a line).
    pub fn describe(&self) -> String {
        match (&self.element_ref, &self.selector, &self.element) {
            (Some(r), _, Some(e)) => format!(
                "{} ({})",
                crate::escape::quoted_cut(e, 200),
                crate::escape::inline_cut(r, 40)
            ),
            (Some(r), _, None) => crate::escape::inline_cut(r, 40),
            (None, Some(s), _) => crate::escape::inline_cut(s, 200),
            (None, None, _) => "the element".into(),
        }
    }
}

/// Text fields an agent may also send as a number or true/false (a checkbox's `true`, a
/// quantity's `3`, a key `5`): the value is taken as its JSON text (`true`, `3`, `2.5`).
/// Their schemas say so (`"type": ["string", "number", "boolean"]`), so the schema stays
/// honest about what is accepted.
pub mod lenient {
    use serde::de::{self, Deserializer, Visitor};
    use std::fmt;

    /// What such a field expects, in words (errors say it the same way).
    pub const EXPECTED: &str = "a string, a number or true/false";

    struct Scalar;

    impl Visitor<'_> for Scalar {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
            // JSON's spelling of the number (`2.5`, `3.0`).
            Ok(serde_json::Number::from_f64(v)
                .map(|n| n.to_string())
                .unwrap_or_else(|| v.to_string()))
        }
    }

    /// One text, as a list element or an optional value.
    struct Text(String);

    impl<'de> serde::Deserialize<'de> for Text {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Scalar).map(Text)
        }
    }

    pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        d.deserialize_any(Scalar)
    }

    pub fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(<Option<Text> as serde::Deserialize>::deserialize(d)?.map(|t| t.0))
    }

    pub fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Ok(<Vec<Text> as serde::Deserialize>::deserialize(d)?
            .into_iter()
            .map(|t| t.0)
            .collect())
    }

    #[cfg(feature = "schema")]
    pub fn text_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "number", "boolean"]})
    }

    #[cfg(feature = "schema")]
    pub fn opt_text_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "number", "boolean", "null"]})
    }

    #[cfg(feature = "schema")]
    pub fn texts_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "array", "items": {"type": ["string", "number", "boolean"]}})
    }
}

/// A command's timeout unless it says otherwise.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Longest timeout a call may ask for (kapture's `timeoutMs` bound, the policy file's
/// `tool_timeout_ms` too).
pub const MAX_TIMEOUT_MS: u64 = 300_000;

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
    /// What the wait did besides the plain case, in a sentence each: a retry after a
    /// transient failure, a wait strategy given up for a weaker one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What an input action led to: the page as it is after the action settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionOutcome {
    pub tab_id: TabId,
    /// True when the action started a navigation of the main frame.
    pub navigated: bool,
    pub url: String,
    pub title: String,
    /// The navigation had not finished loading when the wait for it ended (bounded): `url`
    /// is where it goes, and the page may not be there yet.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loading: bool,
    /// A file chooser the page opened waits for browser_file_upload.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub file_chooser: bool,
    /// The typed values that went into confidential fields (password, one-time code, card:
    /// `recorder::confidential_kind` on the element typed into): `0` for `type`'s text,
    /// field indexes for `fill_form`. Journals, history and answers mask these values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confidential: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Navigate {
    /// The URL to load (http, https, file, about:blank or data:; data: only on the native
    /// engine).
    pub url: String,
    /// When the page counts as loaded: `load` (default: the load event), `domcontentloaded`
    /// (the document parsed; images and frames may still load), `networkidle` (after load,
    /// no request for 500 ms). A wait that cannot finish in time answers on a weaker one and
    /// says so.
    #[serde(default, skip_serializing_if = "WaitUntil::is_load")]
    pub wait_until: WaitUntil,
}

/// When a navigation counts as done (Playwright's words).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    /// The page's `load` event.
    #[default]
    Load,
    /// The document is parsed (`DOMContentLoaded`).
    DomContentLoaded,
    /// After `load`, no network request for 500 ms.
    NetworkIdle,
}

impl WaitUntil {
    pub fn is_load(&self) -> bool {
        *self == WaitUntil::Load
    }

    /// The word the argument takes.
    pub fn word(self) -> &'static str {
        match self {
            WaitUntil::Load => "load",
            WaitUntil::DomContentLoaded => "domcontentloaded",
            WaitUntil::NetworkIdle => "networkidle",
        }
    }
}
method!(
    Navigate,
    "navigate",
    PageInfo,
    NAVIGATE,
    timeout = LONG_TIMEOUT_MS,
    on_crash,
    tool = "browser_navigate",
    destination = Navigate::destination_url,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoBack {
    /// When the page counts as loaded, as for navigate: `load` (default),
    /// `domcontentloaded` or `networkidle`.
    #[serde(default, skip_serializing_if = "WaitUntil::is_load")]
    pub wait_until: WaitUntil,
}
method!(
    GoBack,
    "go_back",
    PageInfo,
    NAVIGATE,
    timeout = LONG_TIMEOUT_MS,
    tool = "browser_navigate_back"
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoForward {
    /// When the page counts as loaded, as for navigate: `load` (default),
    /// `domcontentloaded` or `networkidle`.
    #[serde(default, skip_serializing_if = "WaitUntil::is_load")]
    pub wait_until: WaitUntil,
}
method!(
    GoForward,
    "go_forward",
    PageInfo,
    NAVIGATE,
    timeout = LONG_TIMEOUT_MS,
    tool = "browser_navigate_forward"
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Reload {
    /// When the page counts as loaded, as for navigate: `load` (default),
    /// `domcontentloaded` or `networkidle`.
    #[serde(default, skip_serializing_if = "WaitUntil::is_load")]
    pub wait_until: WaitUntil,
}
method!(
    Reload,
    "reload",
    PageInfo,
    NAVIGATE,
    timeout = LONG_TIMEOUT_MS,
    on_crash,
    tool = "browser_reload"
);

// The methods that run at once in the browser (tabs, kapture's own store writes).
mod browser;
pub use browser::*;
// What an agent reads: scripts, screenshots, console, the page model, text, waits.
mod read;
pub use read::*;
// The rest: dialogs, files, network, cookies and storage, emulation, pointer, PDF, recorder, pick.
mod more;
pub use more::*;
// Saved logins: a site's cookies and localStorage read out and written back.
mod login;
pub use login::*;

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
    #[serde(flatten)]
    pub target: ElementTarget,
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
method!(
    Click,
    "click",
    ActionOutcome,
    INTERACT,
    tool = "browser_click",
    target,
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Hover {
    #[serde(flatten)]
    pub target: ElementTarget,
}
method!(
    Hover,
    "hover",
    ActionOutcome,
    INTERACT,
    tool = "browser_hover",
    target,
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Type {
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Text that replaces the field's content.
    #[serde(deserialize_with = "lenient::text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::text_schema"))]
    pub text: String,
    /// Press Enter afterwards.
    #[serde(default)]
    pub submit: bool,
    /// Type one key at a time (fires key events per character) instead of inserting at once.
    #[serde(default)]
    pub slowly: bool,
    /// Type only into a field whose document is on this origin (`location.origin`), checked
    /// in the page right before the field is focused: set by kapture's replay for a secret,
    /// which goes only where it was recorded.
    #[serde(default, rename = "onlyOn", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub only_on: Option<String>,
}
impl Method for Type {
    const NAME: &'static str = "type";
    type Response = ActionOutcome;
    const CATEGORY: Option<Category> = INTERACT;
    const TOOL: Option<&'static str> = Some("browser_type");
    const TYPED: Typed = Typed::Text("text");
    const CHANGES_FIELD: bool = true;
    fn target(&self) -> Option<&ElementTarget> {
        self.target.named()
    }
    fn category(&self) -> Option<Category> {
        Some(if self.submit {
            Category::Submit
        } else {
            Category::Interact
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct SelectOption {
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Values or visible labels of the options to select.
    #[serde(deserialize_with = "lenient::texts")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::texts_schema"))]
    pub values: Vec<String>,
}
method!(
    SelectOption,
    "select_option",
    Selected,
    INTERACT,
    tool = "browser_select_option",
    target,
    changes_field,
);

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
    #[serde(deserialize_with = "lenient::text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::text_schema"))]
    pub key: String,
}
method!(
    PressKey,
    "press_key",
    ActionOutcome,
    INTERACT,
    tool = "browser_press_key",
    submits_as = "presses Enter, which submits or activates what has focus",
    targets = |_: &PressKey| vec![("the focused element".to_string(), Spot::Focused)],
);

/// One field of a form fill.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FormField {
    #[serde(flatten)]
    pub target: ElementTarget,
    /// Text for text fields; option value or label for selects; "true"/"false" for
    /// checkboxes and radios.
    #[serde(deserialize_with = "lenient::text")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "lenient::text_schema"))]
    pub value: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FillForm {
    /// The fields, filled in order.
    pub fields: Vec<FormField>,
    /// Submit the form of the last field afterwards.
    #[serde(default)]
    pub submit: bool,
}
impl Method for FillForm {
    const NAME: &'static str = "fill_form";
    type Response = ActionOutcome;
    const CATEGORY: Option<Category> = INTERACT;
    const TOOL: Option<&'static str> = Some("browser_fill_form");
    const TYPED: Typed = Typed::EachOf {
        list: "fields",
        key: "value",
    };
    const CHANGES_FIELD: bool = true;
    fn targets(&self) -> Vec<(String, Spot)> {
        let spot = |f: &FormField| f.target.get().map_or(Spot::Focused, Spot::Element);
        (self.fields.iter().enumerate())
            .map(|(i, f)| (format!("field {}", i + 1), spot(f)))
            .collect()
    }
    fn category(&self) -> Option<Category> {
        Some(if self.submit {
            Category::Submit
        } else {
            Category::Interact
        })
    }
}

impl Navigate {
    fn destination_url(&self) -> Option<(Category, &str)> {
        Some((Category::Navigate, &self.url))
    }
}

impl TabsNew {
    fn destination_url(&self) -> Option<(Category, &str)> {
        Some((Category::Navigate, self.url.as_deref()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn methods_say_where_they_land_what_they_type_and_where_they_go() {
        let cmd = |m: &str, p: Value| Command::decode(m, p).unwrap();
        let named = |r: &str| {
            Spot::Element(ElementTarget {
                element_ref: Some(r.into()),
                ..Default::default()
            })
        };
        let click = cmd("click", json!({"ref": "e4"}));
        assert_eq!(
            click.target().and_then(|t| t.element_ref.as_deref()),
            Some("e4")
        );
        assert_eq!(click.targets(), [(String::new(), named("e4"))]);
        assert_eq!(cmd("click", json!({})).targets(), []);
        let drag = cmd("drag", json!({"startRef": "e1", "endRef": "e2"}));
        assert!(
            drag.target().is_none(),
            "a drag names no element of its own"
        );
        assert_eq!(
            drag.targets(),
            [
                ("what it drags".to_string(), named("e1")),
                ("where it drops".to_string(), named("e2"))
            ]
        );
        let form = cmd(
            "fill_form",
            json!({"fields": [{"ref": "e1", "value": "a"}, {"value": "b"}]}),
        );
        assert_eq!(
            form.targets(),
            [
                ("field 1".to_string(), named("e1")),
                ("field 2".to_string(), Spot::Focused)
            ]
        );
        assert_eq!(
            cmd("press_key", json!({"key": "a"})).targets()[0].1,
            Spot::Focused
        );
        assert_eq!(cmd("handle_dialog", json!({"accept": false})).targets(), []);

        let changes: Vec<&str> = (METHODS.iter().filter(|f| f.changes_field))
            .map(|f| f.name)
            .collect();
        assert_eq!(changes, ["type", "select_option", "fill_form"]);
        assert_eq!(
            facts_of_call("browser_type").map(|f| f.typed),
            Some(Typed::Text("text"))
        );
        assert_eq!(
            facts_of_call("click").map(|f| f.typed),
            Some(Typed::Nothing)
        );

        use crate::policy::Category::{Download, Navigate};
        let go = cmd("navigate", json!({"url": "https://a.test/"}));
        assert_eq!(go.destination(), Some((Navigate, "https://a.test/")));
        let tab = cmd("tabs.new", json!({"url": "https://b.test/"}));
        assert_eq!(tab.destination(), Some((Navigate, "https://b.test/")));
        assert_eq!(cmd("tabs.new", json!({})).destination(), None);
        let get = cmd("download", json!({"url": "https://c.test/f"}));
        assert_eq!(get.destination(), Some((Download, "https://c.test/f")));
        assert_eq!(click.destination(), None);
    }

    #[test]
    fn text_fields_take_numbers_and_booleans_as_their_json_text() {
        let form: FillForm = serde_json::from_value(json!({"fields": [
            {"ref": "e1", "value": true},
            {"ref": "e2", "value": 3},
            {"ref": "e3", "value": 2.5},
            {"ref": "e4", "value": "plain"},
            {"ref": "e5", "value": -7}
        ]}))
        .unwrap();
        let values: Vec<&str> = form.fields.iter().map(|f| f.value.as_str()).collect();
        assert_eq!(values, ["true", "3", "2.5", "plain", "-7"]);
        let select: SelectOption =
            serde_json::from_value(json!({"ref": "e1", "values": [1, "Two", false]})).unwrap();
        assert_eq!(select.values, ["1", "Two", "false"]);
        let typed: Type = serde_json::from_value(json!({"ref": "e1", "text": 42})).unwrap();
        assert_eq!(typed.text, "42");
        let key: PressKey = serde_json::from_value(json!({"key": 5})).unwrap();
        assert_eq!(key.key, "5");
        let wait: WaitFor = serde_json::from_value(json!({"text": 10})).unwrap();
        assert_eq!((wait.text.as_deref(), wait.text_gone), (Some("10"), None));
        let store: Storage = serde_json::from_value(
            json!({"area": "local", "action": "set", "key": 1, "value": null}),
        )
        .unwrap();
        assert_eq!((store.key.as_deref(), store.value), (Some("1"), None));
        // What went out as a string comes back the same over the bridge.
        let again: FillForm = serde_json::from_value(serde_json::to_value(&form).unwrap()).unwrap();
        assert_eq!(again, form);
    }

    #[test]
    fn objects_lists_and_null_are_still_refused_saying_what_is_expected() {
        for bad in [json!({"a": 1}), json!([1]), Value::Null] {
            let err = serde_json::from_value::<PressKey>(json!({ "key": bad })).unwrap_err();
            assert!(err.to_string().contains(lenient::EXPECTED), "{err}");
        }
        assert!(serde_json::from_value::<SelectOption>(json!({"values": [{"a": 1}]})).is_err());
    }
}
