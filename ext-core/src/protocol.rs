//! Every frame between `kapture` and the extension, defined once; both sides import it.
//!
//! Frames are JSON text messages, one object per WebSocket message, internally tagged by
//! `type` and stamped with the protocol version `v`. Commands are plain method names plus
//! JSON params; the typed pairing of params and response lives in [`crate::methods`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::wire::{CommandId, ErrorCode, TabId, WireError};

/// Version of the bridge protocol. Bump on any incompatible change of a frame or method.
pub const PROTOCOL_VERSION: u32 = 2;

/// Name under which the native-messaging face of `kapture` is registered with the browser.
pub const NATIVE_HOST_NAME: &str = "com.kapture.bridge";

/// Largest bridge message, in bytes, either way: the server refuses (and drops the socket
/// on) anything bigger, so the extension checks every answer against it first.
pub const MAX_FRAME_BYTES: usize = 12 << 20;

/// Longest error message an answer carries (a page's exception text can be megabytes).
pub const MAX_ERROR_MESSAGE_CHARS: usize = 4_000;

/// Who is at the other end of the bridge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtensionInfo {
    /// The extension id (pinned by the manifest `key`).
    pub id: String,
    /// The extension's version from its manifest.
    pub version: String,
    /// The browser's user agent or product string.
    pub browser: String,
    /// Random id of this browser session (kept across service-worker restarts), so the host
    /// can tell a reconnect of the same browser from a second browser.
    pub instance: String,
    /// The pid of the kapture that launched this browser, as the browser's environment says
    /// (absent for a browser a person started): decides which default policy applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched_by: Option<u32>,
    /// Which run of the browser process this is (from the native host, which the browser
    /// starts): it outlives an extension reload, which `instance` does not, so the host can
    /// tell a reloaded extension (same tabs) from a restarted browser (other tabs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_run: Option<String>,
    /// How the extension reaches pages: absent from an extension that has the debugger.
    #[serde(default, skip_serializing_if = "Transport::is_debugger")]
    pub transport: Transport,
}

/// How the extension reaches a tab's page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// `chrome.debugger`: CDP, trusted input, every tool.
    #[default]
    Debugger,
    /// Reduced mode, for a browser that did not grant the `debugger` permission:
    /// `chrome.scripting` in the extension's isolated world of the main frame, untrusted DOM
    /// events; tools that need the debugger answer `UNSUPPORTED`.
    Scripting,
}

impl Transport {
    pub fn is_debugger(&self) -> bool {
        *self == Transport::Debugger
    }

    /// How `browser_status` names it.
    pub fn describe(self) -> &'static str {
        match self {
            Transport::Debugger => "full (chrome.debugger: trusted input, every tool)",
            Transport::Scripting => "reduced (no debugger permission: chrome.scripting in the main frame, untrusted DOM events; navigate, snapshot, click and type work, the other page tools answer UNSUPPORTED)",
        }
    }
}

/// Extension → host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExtensionFrame {
    /// First frame on every connection: a fresh nonce the server must prove the token over
    /// (see [`crate::handshake`]); the token itself never crosses the socket. After a
    /// service-worker restart it names the session it had with this server.
    Hello {
        nonce: String,
        ext: ExtensionInfo,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume: Option<Resume>,
    },
    /// The answer to a `challenge` whose proof verified: the extension's proof of the token.
    /// Never sent to a server that failed its proof.
    Proof { proof: String },
    /// First frame of a manual pairing (a code from `kapture pair`, no token yet): like
    /// `hello`, a fresh nonce; the `challenge` and `proof` that follow prove the code, not
    /// the token, and the server answers `paired` with the token sealed, then closes.
    Pair { nonce: String },
    /// Successful answer to `command {id}`.
    Result { id: CommandId, data: Value },
    /// Failed answer to `command {id}`.
    Error {
        id: CommandId,
        #[serde(flatten)]
        error: WireError,
    },
    /// Something happened in the browser that the host may care about.
    Event { event: BrowserEvent },
    /// Answer to `ping`.
    Pong,
}

/// What a restarted service worker knows of its session with a server (kept in the
/// browser's session storage, which outlives the worker but not the browser).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    /// The session `welcome` gave.
    pub session: String,
    /// The highest command id the worker had received on it (0: none). Commands above it
    /// never reached the worker, so the host may send them again.
    pub last_command: CommandId,
}

/// A page viewport in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewport {
    pub width: u32,
    pub height: u32,
}

/// Host → extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostFrame {
    /// The answer to `hello`: the server's nonce and its proof of the token over both nonces.
    Challenge { nonce: String, proof: String },
    /// The end of a manual pairing whose code both sides proved: the token sealed under the
    /// code and both nonces (`PairingCode::seal`). The connection closes after it.
    Paired { sealed: String },
    /// The extension's `proof` verified. Nothing else is dispatched before this, on either side.
    Welcome {
        session: String,
        /// True when `session` is the one the `hello` asked to resume.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        resumed: bool,
        heartbeat_ms: u64,
        /// The rules the extension enforces for this server's commands.
        #[serde(default)]
        policy: crate::policy::Policy,
        /// How long an `ask` waits for a person before it is denied.
        #[serde(default = "default_approval_ms")]
        approval_timeout_ms: u64,
        /// The viewport of the tabs of a headless browser this server launched (its
        /// `--window-size`): emulated on every tab the extension attaches to there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        viewport: Option<Viewport>,
    },
    /// The handshake was refused; the host closes the socket right after.
    Unauthorized {
        reason: RejectReason,
        message: String,
    },
    /// Run `method` (on `tab_id`, or the extension's default tab) within `timeout_ms`.
    Command {
        id: CommandId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tab_id: Option<TabId>,
        method: String,
        params: Value,
        timeout_ms: u64,
        /// The MCP session whose call this is: an approval "for the session" is granted to
        /// it alone. Absent (the panel, an older kapture): the grants of commands that name
        /// none. Optional, so no version bump: an older extension ignores it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
        /// How people know that session (`<client> #<id>`), for the side panel's feed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// Heartbeat; an application message so that it resets the service worker's idle timer.
    Ping,
    /// An entry kapture just wrote to its audit journal (secrets already masked), for the
    /// panel's journal view.
    Audit { entry: Value },
    /// How saving the recording `id` went.
    RecordingSaved {
        id: String,
        ok: bool,
        message: String,
    },
    /// Nobody waits for command `id` any more (the client cancelled it): stop it, answer
    /// nothing.
    Cancel { id: CommandId },
    /// The saved scenarios, summarised (after `scenarios_wanted` and after each change).
    Scenarios {
        list: Vec<crate::scenario::ScenarioSummary>,
    },
    /// An MCP session's step budget (`--max-steps`) as it stands, sent when it is spent and
    /// when a person extended it (`used >= max`: spent). `ended`: the session is gone.
    Budget {
        session: String,
        label: String,
        used: u64,
        max: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        ended: bool,
    },
}

/// Why a connection was refused at `hello`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// The extension's proof of the token does not match this server's token.
    BadToken,
    /// The two sides speak different protocol versions.
    VersionMismatch,
    /// The first frame was not a `hello`.
    ExpectedHello,
    /// A newer connection from the same browser replaced this one.
    Superseded,
    /// The server already drives another browser.
    Busy,
    /// The frame after `challenge` was not a `proof`.
    ExpectedProof,
}

/// Browser events pushed to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BrowserEvent {
    /// A tab was closed.
    TabRemoved { tab_id: TabId },
    /// The debugger left a tab without being asked to.
    Detached { tab_id: TabId, reason: String },
    /// A tab was opened (by a page: `opener_tab_id` says which).
    TabCreated {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opener_tab_id: Option<TabId>,
        url: String,
    },
    /// A person answered (or did not answer) an approval: `answer` is `once`, `origin`,
    /// `deny` or `timeout`. `by` names who decided when it was not a person in the browser's
    /// panel (the native engine: the MCP client, or the rule's fallback).
    Approval {
        tab_id: TabId,
        method: String,
        origin: String,
        answer: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// Where a tab is after a command, sent just before its answer (for the journal).
    PageAt { tab_id: TabId, origin: String },
    /// A person saved a recording with the in-page widget; kapture answers `recording_saved`
    /// with the same id. The extension keeps it until then (also across restarts).
    RecordingSave {
        id: String,
        request: Box<crate::recorder::draft::SaveRequest>,
    },
    /// The extension wants the saved scenarios' summaries (for dependency suggestions).
    ScenariosWanted,
    /// A person gave an MCP session of this server `steps` more steps (the side panel).
    ExtendBudget { session: String, steps: u64 },
    /// A person ran a command from the Kapture panel (arguments masked), for the journal.
    PanelRan {
        tab_id: TabId,
        method: String,
        params: Value,
        status: String,
        ms: u64,
    },
}

/// Native messaging: the extension's question to the `kapture` native host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NativeRequest {
    /// Which kapture servers are running?
    Discover,
}

/// One live kapture server, as its handshake file describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerEntry {
    pub port: u16,
    pub token: String,
    pub pid: u32,
    /// Milliseconds since the Unix epoch.
    pub started: u64,
}

/// Native messaging: the answer to [`NativeRequest::Discover`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovered {
    pub v: u32,
    pub servers: Vec<ServerEntry>,
    /// The kapture that launched the browser asking, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched_by: Option<u32>,
    /// The browser process's run (see `ExtensionInfo::browser_run`), when the host can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_run: Option<String>,
}

fn default_approval_ms() -> u64 {
    60_000
}

/// A frame as it travels: the version stamp plus the tagged body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub v: u32,
    #[serde(flatten)]
    pub frame: T,
}

/// Why an incoming text could not become a frame.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DecodeError {
    #[error("frame is not valid JSON or not a known frame: {0}")]
    Malformed(String),
    #[error("{}", version_mismatch_message(*.ours, *.theirs))]
    VersionMismatch { ours: u32, theirs: u32 },
}

/// Serialize a frame with the current version stamp.
pub fn encode<T: Serialize>(frame: &T) -> String {
    #[derive(Serialize)]
    struct Stamped<'a, T> {
        v: u32,
        #[serde(flatten)]
        frame: &'a T,
    }
    // Serializing our own plain data types cannot fail (no maps with non-string keys).
    serde_json::to_string(&Stamped {
        v: PROTOCOL_VERSION,
        frame,
    })
    .unwrap_or_else(|e| {
        format!("{{\"v\":{PROTOCOL_VERSION},\"type\":\"encode_error\",\"message\":\"{e}\"}}")
    })
}

/// A `std::io::Write` that only counts bytes: the encoded size of a value without holding
/// a copy of it.
#[derive(Debug, Default)]
pub struct ByteCount(pub usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The frame that answers command `id`: its result, or its error. An answer whose frame
/// would be over [`MAX_FRAME_BYTES`] becomes `ANSWER_TOO_LARGE` (the server would drop the
/// connection on it), and an error message is cut to [`MAX_ERROR_MESSAGE_CHARS`].
pub fn answer_frame(id: CommandId, result: Result<Value, WireError>) -> ExtensionFrame {
    let frame = match result {
        Ok(data) => ExtensionFrame::Result { id, data },
        Err(mut error) => {
            if error.message.chars().count() > MAX_ERROR_MESSAGE_CHARS {
                let total = error.message.chars().count();
                let kept: String = error
                    .message
                    .chars()
                    .take(MAX_ERROR_MESSAGE_CHARS)
                    .collect();
                error.message = format!("{kept}… (+{} chars)", total - MAX_ERROR_MESSAGE_CHARS);
            }
            ExtensionFrame::Error { id, error }
        }
    };
    let mut size = ByteCount::default();
    let stamped = Envelope {
        v: PROTOCOL_VERSION,
        frame: &frame,
    };
    let _ = serde_json::to_writer(&mut size, &stamped);
    if size.0 <= MAX_FRAME_BYTES {
        return frame;
    }
    let what = match &frame {
        ExtensionFrame::Result { .. } => "answer",
        _ => "error",
    };
    ExtensionFrame::Error {
        id,
        error: WireError::new(
            ErrorCode::AnswerTooLarge,
            format!(
                "the {what} is {} bytes, more than the {} bytes a bridge message may carry",
                size.0, MAX_FRAME_BYTES
            ),
        ),
    }
}

/// Parse a frame, checking the version stamp before the body so that a peer of another
/// version gets a clear "needs update" error rather than a parse failure.
pub fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, DecodeError> {
    let mut value: Value =
        serde_json::from_str(text).map_err(|e| DecodeError::Malformed(e.to_string()))?;
    let theirs = value
        .get("v")
        .and_then(Value::as_u64)
        .ok_or_else(|| DecodeError::Malformed("missing protocol version `v`".into()))?;
    if theirs != u64::from(PROTOCOL_VERSION) {
        return Err(DecodeError::VersionMismatch {
            ours: PROTOCOL_VERSION,
            theirs: u32::try_from(theirs).unwrap_or(u32::MAX),
        });
    }
    if let Some(obj) = value.as_object_mut() {
        obj.remove("v");
    }
    serde_json::from_value(value).map_err(|e| DecodeError::Malformed(e.to_string()))
}

/// Says which side is older, from the point of view of the side holding `ours`.
pub fn version_mismatch_message(ours: u32, theirs: u32) -> String {
    if theirs < ours {
        format!("protocol version mismatch: this side speaks v{ours}, the peer speaks v{theirs}; the peer needs an update")
    } else {
        format!("protocol version mismatch: this side speaks v{ours}, the peer speaks v{theirs}; this side needs an update")
    }
}

/// The host's answer when an extension of another protocol version says hello.
pub fn host_version_mismatch_message(host: u32, extension: u32) -> String {
    if extension < host {
        format!("the Kapture extension speaks protocol v{extension} but kapture speaks v{host}: the extension needs an update (rebuild it with `cargo make build` and reload it)")
    } else {
        format!("the Kapture extension speaks protocol v{extension} but kapture speaks v{host}: kapture (the server) needs an update")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Golden frames: these strings are the wire format. Changing one is a protocol change.
    #[track_caller]
    fn golden<T>(frame: T, wire: &str)
    where
        T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let encoded = encode(&frame);
        let expected: Value = serde_json::from_str(wire).expect("golden is JSON");
        let actual: Value = serde_json::from_str(&encoded).expect("encoded is JSON");
        assert_eq!(actual, expected, "encoding of {frame:?}");
        assert_eq!(decode::<T>(wire).expect("golden decodes"), frame);
    }

    #[test]
    fn extension_frames_are_pinned() {
        golden(
            ExtensionFrame::Hello {
                nonce: "n0nce".into(),
                ext: ExtensionInfo {
                    id: "abc".into(),
                    version: "0.1.0".into(),
                    browser: "Chromium/156".into(),
                    instance: "i1".into(),
                    launched_by: Some(77),
                    browser_run: None,
                    transport: Transport::Debugger,
                },
                resume: None,
            },
            r#"{"v":2,"type":"hello","nonce":"n0nce","ext":{"id":"abc","version":"0.1.0","browser":"Chromium/156","instance":"i1","launched_by":77}}"#,
        );
        golden(
            ExtensionFrame::Hello {
                nonce: "n0nce".into(),
                ext: ExtensionInfo {
                    id: "abc".into(),
                    version: "0.1.0".into(),
                    browser: "Chromium/156".into(),
                    instance: "i1".into(),
                    launched_by: None,
                    browser_run: None,
                    transport: Transport::Scripting,
                },
                resume: Some(Resume {
                    session: "s1-1".into(),
                    last_command: 41,
                }),
            },
            r#"{"v":2,"type":"hello","nonce":"n0nce","ext":{"id":"abc","version":"0.1.0","browser":"Chromium/156","instance":"i1","transport":"scripting"},
               "resume":{"session":"s1-1","last_command":41}}"#,
        );
        golden(
            ExtensionFrame::Proof {
                proof: "pr00f".into(),
            },
            r#"{"v":2,"type":"proof","proof":"pr00f"}"#,
        );
        golden(
            ExtensionFrame::Result {
                id: 7,
                data: json!({"url": "http://127.0.0.1/"}),
            },
            r#"{"v":2,"type":"result","id":7,"data":{"url":"http://127.0.0.1/"}}"#,
        );
        golden(
            ExtensionFrame::Error {
                id: 8,
                error: WireError::new(ErrorCode::SelectorNotFound, "no element matches #x"),
            },
            r#"{"v":2,"type":"error","id":8,"code":"SELECTOR_NOT_FOUND","message":"no element matches #x"}"#,
        );
        golden(
            ExtensionFrame::Event {
                event: BrowserEvent::TabRemoved { tab_id: 3 },
            },
            r#"{"v":2,"type":"event","event":{"kind":"tab_removed","tab_id":3}}"#,
        );
        golden(
            ExtensionFrame::Event {
                event: BrowserEvent::Detached {
                    tab_id: 3,
                    reason: "canceled_by_user".into(),
                },
            },
            r#"{"v":2,"type":"event","event":{"kind":"detached","tab_id":3,"reason":"canceled_by_user"}}"#,
        );
        golden(ExtensionFrame::Pong, r#"{"v":2,"type":"pong"}"#);
    }

    #[test]
    fn host_frames_are_pinned() {
        golden(
            HostFrame::Challenge {
                nonce: "n0nce".into(),
                proof: "pr00f".into(),
            },
            r#"{"v":2,"type":"challenge","nonce":"n0nce","proof":"pr00f"}"#,
        );
        golden(
            HostFrame::Unauthorized {
                reason: RejectReason::ExpectedProof,
                message: "the frame after challenge must be proof".into(),
            },
            r#"{"v":2,"type":"unauthorized","reason":"expected_proof","message":"the frame after challenge must be proof"}"#,
        );
        golden(
            HostFrame::Welcome {
                session: "s1".into(),
                resumed: false,
                heartbeat_ms: 20000,
                policy: crate::policy::Policy::allow_all(),
                approval_timeout_ms: 60000,
                viewport: None,
            },
            r#"{"v":2,"type":"welcome","session":"s1","heartbeat_ms":20000,"approval_timeout_ms":60000,
               "policy":{"rules":[{"origin":{"scheme":null,"host":"*","port":null},"category":null,"verdict":"allow","source":"--unsafe-allow-all"}]}}"#,
        );
        golden(
            HostFrame::Unauthorized {
                reason: RejectReason::BadToken,
                message: "bad token".into(),
            },
            r#"{"v":2,"type":"unauthorized","reason":"bad_token","message":"bad token"}"#,
        );
        golden(
            HostFrame::Command {
                id: 1,
                tab_id: Some(4),
                method: "click".into(),
                params: json!({"selector": "#go"}),
                timeout_ms: 30000,
                session: None,
                label: None,
            },
            r##"{"v":2,"type":"command","id":1,"tab_id":4,"method":"click","params":{"selector":"#go"},"timeout_ms":30000}"##,
        );
        golden(
            HostFrame::Command {
                id: 2,
                tab_id: None,
                method: "tabs.list".into(),
                params: json!({}),
                timeout_ms: 30000,
                session: None,
                label: None,
            },
            r#"{"v":2,"type":"command","id":2,"method":"tabs.list","params":{},"timeout_ms":30000}"#,
        );
        golden(
            HostFrame::Command {
                id: 3,
                tab_id: Some(4),
                method: "evaluate".into(),
                params: json!({"script": "1"}),
                timeout_ms: 30000,
                session: Some("7".into()),
                label: None,
            },
            r#"{"v":2,"type":"command","id":3,"tab_id":4,"method":"evaluate","params":{"script":"1"},"timeout_ms":30000,"session":"7"}"#,
        );
        golden(HostFrame::Ping, r#"{"v":2,"type":"ping"}"#);
        golden(
            HostFrame::Cancel { id: 7 },
            r#"{"v":2,"type":"cancel","id":7}"#,
        );
        golden(
            HostFrame::RecordingSaved {
                id: "1-2".into(),
                ok: true,
                message: "Saved login".into(),
            },
            r#"{"v":2,"type":"recording_saved","id":"1-2","ok":true,"message":"Saved login"}"#,
        );
    }

    #[test]
    fn native_messages_are_pinned() {
        assert_eq!(
            serde_json::to_string(&NativeRequest::Discover).unwrap(),
            r#"{"type":"discover"}"#
        );
        let d = Discovered {
            v: 2,
            servers: vec![ServerEntry {
                port: 61822,
                token: "t".into(),
                pid: 42,
                started: 5,
            }],
            launched_by: None,
            browser_run: None,
        };
        let wire = r#"{"v":2,"servers":[{"port":61822,"token":"t","pid":42,"started":5}]}"#;
        assert_eq!(serde_json::to_string(&d).unwrap(), wire);
        assert_eq!(serde_json::from_str::<Discovered>(wire).unwrap(), d);
    }

    #[test]
    fn every_error_code_spells_as_on_the_wire() {
        // No wildcard: a new code does not compile here until it is in `ALL` too.
        let place = |code: ErrorCode| -> usize {
            match code {
                ErrorCode::TabNotFound => 0,
                ErrorCode::TabClosed => 1,
                ErrorCode::NoBrowser => 2,
                ErrorCode::ExtensionDisconnected => 3,
                ErrorCode::Timeout => 4,
                ErrorCode::SelectorNotFound => 5,
                ErrorCode::RefStale => 6,
                ErrorCode::NotInteractable => 7,
                ErrorCode::InvalidSelector => 8,
                ErrorCode::EvalFailed => 9,
                ErrorCode::NavigationFailed => 10,
                ErrorCode::PolicyDenied => 11,
                ErrorCode::ApprovalDenied => 12,
                ErrorCode::DebuggerConflict => 13,
                ErrorCode::BadArgs => 14,
                ErrorCode::UnsupportedPage => 15,
                ErrorCode::VersionMismatch => 16,
                ErrorCode::DialogOpen => 17,
                ErrorCode::PageCrashed => 18,
                ErrorCode::DebuggerDetached => 19,
                ErrorCode::UserRevoked => 20,
                ErrorCode::Unsupported => 21,
                ErrorCode::DownloadFailed => 22,
                ErrorCode::DownloadTooLarge => 23,
                ErrorCode::AnswerTooLarge => 24,
                ErrorCode::Internal => 25,
                ErrorCode::BrowserExited => 26,
                ErrorCode::TabNotYours => 27,
                ErrorCode::BudgetExceeded => 28,
                ErrorCode::Paused => 29,
            }
        };
        for (i, code) in ErrorCode::ALL.into_iter().enumerate() {
            assert_eq!(place(code), i, "{code} is out of place in ErrorCode::ALL");
        }
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
            assert!(!code.hint().is_empty());
        }
    }

    #[test]
    fn an_answer_over_the_frame_cap_becomes_a_coded_error() {
        let small = answer_frame(7, Ok(json!({"text": "hi"})));
        assert_eq!(
            small,
            ExtensionFrame::Result {
                id: 7,
                data: json!({"text": "hi"})
            }
        );
        let big = answer_frame(8, Ok(json!({"text": "x".repeat(MAX_FRAME_BYTES)})));
        match &big {
            ExtensionFrame::Error { id: 8, error } => {
                assert_eq!(error.code, ErrorCode::AnswerTooLarge);
                assert!(error.message.contains("bytes"), "{}", error.message);
            }
            other => panic!("{other:?}"),
        }
        assert!(encode(&big).len() < 1_000);
        // Just under the cap passes, encoded with its envelope.
        let room = MAX_FRAME_BYTES - encode(&answer_frame(9, Ok(json!("")))).len();
        let edge = answer_frame(9, Ok(json!("y".repeat(room))));
        assert!(matches!(edge, ExtensionFrame::Result { .. }));
        assert_eq!(encode(&edge).len(), MAX_FRAME_BYTES);
        let edge = answer_frame(9, Ok(json!("y".repeat(room + 1))));
        assert!(matches!(edge, ExtensionFrame::Error { .. }));
        // Huge error messages are cut, not refused.
        let long = answer_frame(
            10,
            Err(WireError::new(ErrorCode::EvalFailed, "z".repeat(100_000))),
        );
        match long {
            ExtensionFrame::Error { error, .. } => {
                assert_eq!(error.code, ErrorCode::EvalFailed);
                assert!(error.message.len() < MAX_ERROR_MESSAGE_CHARS + 100);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn another_version_is_a_clear_mismatch_not_a_parse_error() {
        let err =
            decode::<ExtensionFrame>(r#"{"v":3,"type":"hello","whatever":true}"#).unwrap_err();
        assert_eq!(err, DecodeError::VersionMismatch { ours: 2, theirs: 3 });
        assert!(err.to_string().contains("this side needs an update"));
        let err = decode::<ExtensionFrame>(r#"{"v":0,"type":"pong"}"#).unwrap_err();
        assert!(err.to_string().contains("the peer needs an update"));
        assert!(host_version_mismatch_message(2, 1).contains("the extension needs an update"));
        assert!(
            host_version_mismatch_message(1, 2).contains("kapture (the server) needs an update")
        );
    }

    #[test]
    fn garbage_is_malformed() {
        for text in [
            "",
            "{",
            "[]",
            "null",
            r#"{"type":"pong"}"#,
            r#"{"v":2,"type":"nope"}"#,
            r#"{"v":2}"#,
        ] {
            assert!(
                matches!(
                    decode::<ExtensionFrame>(text),
                    Err(DecodeError::Malformed(_))
                ),
                "{text:?} should be malformed"
            );
        }
    }
}
