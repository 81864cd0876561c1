//! Property-based fuzz target: the bridge frame decoder (`protocol::decode`) on arbitrary
//! text, arbitrary JSON and mutated valid frames, and encode → decode round trips.

mod fuzz_common;

use ext_core::policy::{Category, OriginPattern, Policy, Rule, Verdict};
use ext_core::protocol::{
    decode, encode, BrowserEvent, DecodeError, Discovered, ErrorCode, ExtensionFrame,
    ExtensionInfo, HostFrame, RejectReason, Resume, Transport, WireError, PROTOCOL_VERSION,
};
use fuzz_common::{any_string, fuzz, json_object, json_value};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

const REGRESSIONS: &str = "tests/proptest-regressions/fuzz_protocol.txt";

/// Decode as both frame directions; whatever comes back must be a frame or a `DecodeError`,
/// and a frame must re-encode to text that decodes to the very same frame.
fn decode_both(text: &str) -> Result<(), TestCaseError> {
    stable::<HostFrame>(text)?;
    stable::<ExtensionFrame>(text)?;
    // The native-messaging answer is parsed straight by serde_json on the other side.
    let _ = serde_json::from_str::<Discovered>(text);
    Ok(())
}

fn stable<T>(text: &str) -> Result<Option<T>, TestCaseError>
where
    T: DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
{
    match decode::<T>(text) {
        Ok(frame) => {
            let again = encode(&frame);
            let back = decode::<T>(&again);
            prop_assert!(
                back.as_ref().is_ok_and(|b| same_frame(b, &frame)),
                "re-encoded {again} decodes to {back:?}"
            );
            Ok(Some(frame))
        }
        Err(DecodeError::VersionMismatch { ours, theirs }) => {
            prop_assert_eq!(ours, PROTOCOL_VERSION);
            prop_assert_ne!(theirs, PROTOCOL_VERSION);
            Ok(None)
        }
        Err(DecodeError::Malformed(_)) => Ok(None),
    }
}

/// Equal frames, compared as JSON (numbers exactly: serde_json's `float_roundtrip` is on).
fn same_frame<T: serde::Serialize>(a: &T, b: &T) -> bool {
    serde_json::to_value(a).unwrap() == serde_json::to_value(b).unwrap()
}

/// What the version check alone says about `v`: `None` when it lets the body be parsed.
fn expected_version_verdict(v: Option<&Value>) -> Option<DecodeError> {
    match v.and_then(Value::as_u64) {
        None => Some(DecodeError::Malformed(String::new())),
        Some(n) if n == u64::from(PROTOCOL_VERSION) => None,
        Some(n) => Some(DecodeError::VersionMismatch {
            ours: PROTOCOL_VERSION,
            theirs: u32::try_from(n).unwrap_or(u32::MAX),
        }),
    }
}

fn same_kind(a: &DecodeError, b: &DecodeError) -> bool {
    match (a, b) {
        (DecodeError::Malformed(_), DecodeError::Malformed(_)) => true,
        _ => a == b,
    }
}

#[test]
fn arbitrary_text_never_panics() {
    let text = prop_oneof![
        ".{0,200}",
        // JSON-ish punctuation so the parser gets past the first byte more often.
        "[{}\\[\\]\":,0-9a-z\\\\ .e+-]{0,120}",
        prop::collection::vec(any::<u8>(), 0..200)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    fuzz(REGRESSIONS, "arbitrary_text_never_panics", text, |t| {
        decode_both(&t)
    });
}

#[test]
fn the_version_is_checked_before_the_body() {
    fuzz(
        REGRESSIONS,
        "the_version_is_checked_before_the_body",
        (json_value(), any::<bool>()),
        |(value, as_text)| {
            let text = if as_text {
                value.to_string()
            } else {
                serde_json::to_string_pretty(&value).unwrap()
            };
            decode_both(&text)?;
            let expected = expected_version_verdict(value.get("v"));
            for got in [
                decode::<HostFrame>(&text).err(),
                decode::<ExtensionFrame>(&text).err(),
            ] {
                match (&expected, &got) {
                    (Some(e), Some(g)) => prop_assert!(same_kind(e, g), "{e:?} vs {g:?}"),
                    (Some(e), None) => prop_assert!(false, "accepted despite {e:?}: {text}"),
                    // The version is right: the body decides.
                    (None, _) => {}
                }
            }
            Ok(())
        },
    );
}

/// Objects that look like frames: a right version, a known type, then anything.
#[test]
fn frame_shaped_objects_never_panic() {
    let types = prop::sample::select(vec![
        "hello",
        "proof",
        "challenge",
        "result",
        "error",
        "event",
        "pong",
        "welcome",
        "unauthorized",
        "command",
        "ping",
        "audit",
        "recording_saved",
        "cancel",
        "scenarios",
        "nope",
        "",
    ]);
    let strategy = (json_object(), types, json_value(), any::<bool>());
    fuzz(
        REGRESSIONS,
        "frame_shaped_objects_never_panic",
        strategy,
        |(mut body, kind, v, keep_v)| {
            body.insert("type".into(), json!(kind));
            body.insert("v".into(), if keep_v { json!(PROTOCOL_VERSION) } else { v });
            decode_both(&Value::Object(body).to_string())
        },
    );
}

fn wire_error() -> impl Strategy<Value = WireError> {
    let code = prop::sample::select(ErrorCode::ALL.to_vec());
    // `data: null` reads back as no data: generate only data that says something.
    let data = prop::option::of(json_value().prop_filter("not null", |v| !v.is_null()));
    (code, any_string(), data).prop_map(|(code, message, data)| WireError {
        code,
        message,
        data,
    })
}

fn browser_event() -> impl Strategy<Value = BrowserEvent> {
    prop_oneof![
        any::<i32>().prop_map(|tab_id| BrowserEvent::TabRemoved { tab_id }),
        (any::<i32>(), any_string())
            .prop_map(|(tab_id, reason)| BrowserEvent::Detached { tab_id, reason }),
        (any::<i32>(), any::<Option<i32>>(), any_string()).prop_map(
            |(tab_id, opener_tab_id, url)| BrowserEvent::TabCreated {
                tab_id,
                opener_tab_id,
                url
            }
        ),
        (
            any::<i32>(),
            any_string(),
            any_string(),
            any_string(),
            proptest::option::of(any_string())
        )
            .prop_map(
                |(tab_id, method, origin, answer, by)| BrowserEvent::Approval {
                    tab_id,
                    method,
                    origin,
                    answer,
                    by
                }
            ),
        (any::<i32>(), any_string())
            .prop_map(|(tab_id, origin)| BrowserEvent::PageAt { tab_id, origin }),
        Just(BrowserEvent::ScenariosWanted),
        (
            any::<i32>(),
            any_string(),
            json_value(),
            any_string(),
            any::<u64>()
        )
            .prop_map(|(tab_id, method, params, status, ms)| {
                BrowserEvent::PanelRan {
                    tab_id,
                    method,
                    params,
                    status,
                    ms,
                }
            }),
    ]
}

fn extension_frame() -> impl Strategy<Value = ExtensionFrame> {
    let info = (
        any_string(),
        any_string(),
        any_string(),
        any_string(),
        any::<Option<u32>>(),
        prop::option::of(any_string()),
        any::<bool>(),
    )
        .prop_map(
            |(id, version, browser, instance, launched_by, browser_run, reduced)| ExtensionInfo {
                id,
                version,
                browser,
                instance,
                launched_by,
                browser_run,
                transport: if reduced {
                    Transport::Scripting
                } else {
                    Transport::Debugger
                },
            },
        );
    prop_oneof![
        (
            any_string(),
            info,
            prop::option::of((any_string(), any::<u64>()))
        )
            .prop_map(|(nonce, ext, resume)| ExtensionFrame::Hello {
                nonce,
                ext,
                resume: resume.map(|(session, last_command)| Resume {
                    session,
                    last_command
                }),
            }),
        (any::<u64>(), json_value()).prop_map(|(id, data)| ExtensionFrame::Result { id, data }),
        (any::<u64>(), wire_error()).prop_map(|(id, error)| ExtensionFrame::Error { id, error }),
        browser_event().prop_map(|event| ExtensionFrame::Event { event }),
        Just(ExtensionFrame::Pong),
        any_string().prop_map(|proof| ExtensionFrame::Proof { proof }),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    let rule = (
        prop::option::of(any_string()),
        any_string(),
        any::<Option<u16>>(),
        prop::option::of(prop::sample::select(Category::ALL.to_vec())),
        prop::sample::select(vec![Verdict::Allow, Verdict::Ask, Verdict::Deny]),
        any_string(),
    )
        .prop_map(|(scheme, host, port, category, verdict, source)| Rule {
            origin: OriginPattern { scheme, host, port },
            category,
            verdict,
            source,
        });
    prop::collection::vec(rule, 0..5).prop_map(|rules| Policy {
        rules,
        ..Policy::default()
    })
}

fn host_frame() -> impl Strategy<Value = HostFrame> {
    let reason = prop::sample::select(vec![
        RejectReason::BadToken,
        RejectReason::VersionMismatch,
        RejectReason::ExpectedHello,
        RejectReason::Superseded,
        RejectReason::Busy,
        RejectReason::ExpectedProof,
    ]);
    prop_oneof![
        (any_string(), any_string())
            .prop_map(|(nonce, proof)| HostFrame::Challenge { nonce, proof }),
        (
            any_string(),
            any::<bool>(),
            any::<u64>(),
            policy(),
            any::<u64>(),
            proptest::option::of((any::<u32>(), any::<u32>()))
        )
            .prop_map(
                |(session, resumed, heartbeat_ms, policy, approval_timeout_ms, viewport)| {
                    HostFrame::Welcome {
                        session,
                        resumed,
                        heartbeat_ms,
                        policy,
                        approval_timeout_ms,
                        viewport: viewport
                            .map(|(width, height)| ext_core::protocol::Viewport { width, height }),
                    }
                }
            ),
        (reason, any_string())
            .prop_map(|(reason, message)| HostFrame::Unauthorized { reason, message }),
        (
            any::<u64>(),
            any::<Option<i32>>(),
            any_string(),
            json_value(),
            any::<u64>(),
            proptest::option::of(any_string()),
            proptest::option::of(any_string())
        )
            .prop_map(|(id, tab_id, method, params, timeout_ms, session, label)| {
                HostFrame::Command {
                    id,
                    tab_id,
                    method,
                    params,
                    timeout_ms,
                    session,
                    label,
                }
            }),
        Just(HostFrame::Ping),
        json_value().prop_map(|entry| HostFrame::Audit { entry }),
        (any_string(), any::<bool>(), any_string())
            .prop_map(|(id, ok, message)| HostFrame::RecordingSaved { id, ok, message }),
        any::<u64>().prop_map(|id| HostFrame::Cancel { id }),
        Just(HostFrame::Scenarios { list: vec![] }),
        (
            any_string(),
            any_string(),
            any::<u64>(),
            any::<u64>(),
            any::<bool>()
        )
            .prop_map(|(session, label, used, max, ended)| HostFrame::Budget {
                session,
                label,
                used,
                max,
                ended
            }),
    ]
}

#[test]
fn extension_frames_round_trip() {
    fuzz(
        REGRESSIONS,
        "extension_frames_round_trip",
        extension_frame(),
        |frame| {
            let text = encode(&frame);
            let back = decode::<ExtensionFrame>(&text);
            prop_assert!(
                back.as_ref().is_ok_and(|b| same_frame(b, &frame)),
                "{text} decodes to {back:?}"
            );
            Ok(())
        },
    );
}

#[test]
fn host_frames_round_trip() {
    fuzz(
        REGRESSIONS,
        "host_frames_round_trip",
        host_frame(),
        |frame| {
            let text = encode(&frame);
            let back = decode::<HostFrame>(&text);
            prop_assert!(
                back.as_ref().is_ok_and(|b| same_frame(b, &frame)),
                "{text} decodes to {back:?}"
            );
            Ok(())
        },
    );
}

/// A change to a valid frame's text.
#[derive(Debug, Clone)]
enum Mutation {
    /// Keep only the first `n` bytes (modulo the length).
    Truncate(usize),
    /// XOR the byte at `at` with `mask`.
    Flip { at: usize, mask: u8 },
    /// Insert `bytes` at `at`.
    Insert { at: usize, bytes: Vec<u8> },
    /// Replace the version stamp with this JSON text.
    Version(String),
    /// Replace every integer with this number text.
    HugeNumbers(String),
    /// Wrap the first value after `"data":`, `"params":` or `"entry":` in `depth` arrays.
    Nest(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        (
            any::<usize>(),
            prop::collection::vec(
                prop_oneof![
                    Just(b'"'),
                    Just(b'\\'),
                    Just(b'{'),
                    Just(b'}'),
                    Just(b','),
                    any::<u8>()
                ],
                1..4
            )
        )
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        prop::sample::select(vec![
            "0",
            "2",
            "-1",
            "1.0",
            "1e0",
            "\"1\"",
            "null",
            "true",
            "[1]",
            "{}",
            "4294967297",
            "18446744073709551615",
            "18446744073709551616",
            "1e400",
            "-0",
        ])
        .prop_map(|v| Mutation::Version(v.to_string())),
        prop::sample::select(vec![
            "18446744073709551616",
            "-9223372036854775809",
            "1e400",
            "-1",
            "4294967296",
            "2147483648",
            "0.5",
            "1e-400",
            "123456789012345678901234567890",
        ])
        .prop_map(|n| Mutation::HugeNumbers(n.to_string())),
        (0..400usize).prop_map(Mutation::Nest),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut bytes = text.as_bytes().to_vec();
    match m {
        Mutation::Truncate(n) => bytes.truncate(n % bytes.len().max(1)),
        Mutation::Flip { at, mask } => {
            if !bytes.is_empty() {
                let i = at % bytes.len();
                bytes[i] ^= mask;
            }
        }
        Mutation::Insert { at, bytes: more } => {
            let i = at % (bytes.len() + 1);
            bytes.splice(i..i, more.iter().copied());
        }
        Mutation::Version(v) => {
            let s = text.replacen(
                &format!("\"v\":{PROTOCOL_VERSION}"),
                &format!("\"v\":{v}"),
                1,
            );
            return s;
        }
        Mutation::HugeNumbers(n) => {
            // Integers that follow a `:` (ids, tab ids, timeouts; the version too).
            let re = regex::Regex::new(r":-?[0-9]+([,}\]])").unwrap();
            return re.replace_all(text, format!(":{n}$1")).into_owned();
        }
        Mutation::Nest(depth) => {
            for key in ["\"data\":", "\"params\":", "\"entry\":"] {
                if let Some(at) = text.find(key) {
                    let at = at + key.len();
                    let (head, tail) = text.split_at(at);
                    let end = value_end(tail);
                    return format!(
                        "{head}{}{}{}{}",
                        "[".repeat(*depth),
                        &tail[..end],
                        "]".repeat(*depth),
                        &tail[end..]
                    );
                }
            }
            return format!("{}{text}{}", "[".repeat(*depth), "]".repeat(*depth));
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Length of the JSON value at the start of `s` (which follows a `:` in encoder output).
fn value_end(s: &str) -> usize {
    let mut de = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    match de.next() {
        Some(Ok(_)) => de.byte_offset(),
        _ => 0,
    }
}

#[test]
fn mutated_frames_are_frames_or_decode_errors() {
    let frames = prop_oneof![
        extension_frame().prop_map(|f| encode(&f)),
        host_frame().prop_map(|f| encode(&f)),
    ];
    fuzz(
        REGRESSIONS,
        "mutated_frames_are_frames_or_decode_errors",
        (frames, prop::collection::vec(mutation(), 1..4)),
        |(text, mutations)| {
            let mut mutated = text.clone();
            for m in &mutations {
                mutated = apply(&mutated, m);
            }
            decode_both(&mutated)?;
            // A strict prefix of an encoded frame is never a whole JSON object.
            if let [Mutation::Truncate(n)] = mutations.as_slice() {
                if n % text.len().max(1) < text.len() {
                    for got in [
                        decode::<HostFrame>(&mutated).err(),
                        decode::<ExtensionFrame>(&mutated).err(),
                    ] {
                        prop_assert!(
                            matches!(got, Some(DecodeError::Malformed(_))),
                            "prefix {mutated:?} gave {got:?}"
                        );
                    }
                }
            }
            // Nesting deeper than the JSON parser's limit is refused, not a stack overflow.
            if let [Mutation::Nest(d)] = mutations.as_slice() {
                if *d > 200 {
                    prop_assert!(decode::<HostFrame>(&mutated).is_err());
                    prop_assert!(decode::<ExtensionFrame>(&mutated).is_err());
                }
            }
            Ok(())
        },
    );
}

/// Known edge inputs, kept as plain tests so they run even without the fuzz driver.
#[test]
fn edge_frames_decode_to_errors_not_panics() {
    let deep = format!(
        r#"{{"v":2,"type":"result","id":1,"data":{}0{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    for text in [
        deep.as_str(),
        r#"{"v":18446744073709551616,"type":"pong"}"#,
        r#"{"v":4294967297,"type":"pong"}"#,
        r#"{"v":1e400,"type":"pong"}"#,
        r#"{"v":2,"type":"cancel","id":18446744073709551616}"#,
        r#"{"v":2,"type":"cancel","id":-1}"#,
        r#"{"v":2,"type":"command","id":1,"tab_id":2147483648,"method":"x","params":{},"timeout_ms":1}"#,
        r#"{"v":2,"type":"error","id":1,"code":"NOPE","message":""}"#,
        r#"{"v":2,"type":"event","event":{"kind":"tab_removed","tab_id":"3"}}"#,
        "{\"v\":2,\"type\":\"result\",\"id\":1,\"data\":\"\\ud800\"}",
        r#"{"v":2,"v":3,"type":"pong"}"#,
    ] {
        assert!(decode::<ExtensionFrame>(text).is_err(), "{text:.80}");
        assert!(decode::<HostFrame>(text).is_err(), "{text:.80}");
    }
    assert_eq!(
        decode::<ExtensionFrame>(r#"{"v":4294967297,"type":"pong"}"#),
        Err(DecodeError::VersionMismatch {
            ours: PROTOCOL_VERSION,
            theirs: u32::MAX
        })
    );
}
