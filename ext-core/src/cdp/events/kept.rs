//! Plain records the event state keeps: an out-of-process frame as Chrome reported it, and
//! the dialog a page opened.

/// An out-of-process iframe of the tab, as `Target.attachedToTarget` reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteFrame {
    /// The flat session Chrome opened on it.
    pub session: Option<String>,
    /// The frame holding its iframe element, when Chrome says.
    pub parent: Option<String>,
    /// Its document's URL.
    pub url: String,
    /// Its document's origin (its URL's), what it is judged on.
    pub origin: Option<String>,
}

/// A JavaScript dialog waiting for an answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Dialog {
    /// alert, confirm, prompt or beforeunload.
    pub kind: String,
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub default_prompt: String,
    /// What the document that opened it is judged on.
    #[serde(skip)]
    pub judged: Vec<String>,
    /// Its message is not told (the rules seen then may not read that document).
    #[serde(skip)]
    pub withheld: bool,
}
