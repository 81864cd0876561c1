//! The one exit: every byte kapture sends toward an agent, a client or a file — tool
//! answers, resources, approval questions, progress notices, scenario tools in tools/list,
//! protocol errors, journal entries, session logs and exported scripts — is built here,
//! masked with every secret kapture knows ([`Exit`]: `--secrets`, the policy's `[[mask]]`
//! patterns, what any session learned, live or ended) and escaped for where it goes. Nothing
//! else in the crate names rmcp's content constructors or the export generator (the layers
//! test fails if one does), and the journal and the session log take only [`Masked`] values,
//! which nothing but this module can make.
//!
//! Masks go in before a destination's own escaping wherever the value is still structured
//! (JSON is masked string by string before it is written, a scenario before its script is
//! generated), so a secret with a quote, a backslash or a non-ASCII letter cannot pass as
//! its escaped form; text that was escaped already is masked in every form the escapes and
//! URLs give a value (`ext_core::secrets::redact`).

mod masks;

use std::sync::Arc;
use std::time::Duration;

use ext_core::export::Format;
use ext_core::protocol::{ErrorCode, WireError};
use ext_core::scenario::Scenario;
use ext_core::secrets::Pattern;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, ElicitRequestParams,
    ElicitResult, ProgressNotificationParam, ProgressToken, ReadResourceResult, ResourceContents,
    Tool,
};
use rmcp::service::{Peer, ServiceError};
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Value};

pub use masks::{MaskBook, Masks};

/// The three answers an approval question offers, as the client's form shows them.
pub const ONCE: &str = "approve once";
/// A grant is the asking MCP session's alone: another agent of the same kapture is asked
/// again.
pub const SESSION: &str = "approve for this session";
pub const DENY: &str = "deny";

/// A journal line's parts, as the exit masks them: free texts and JSON values (kapture's
/// own keys are left out, so the journal can be read back by them).
pub trait Journaled {
    fn texts(&mut self) -> Vec<&mut String>;
    fn values(&mut self) -> Vec<&mut Value>;
}

/// A value that went through the exit: only [`Exit`] makes one, so a function that takes a
/// `Masked` cannot be handed what was not masked.
#[derive(Debug, Clone, PartialEq)]
pub struct Masked<T>(T);

impl<T> Masked<T> {
    pub fn get(&self) -> &T {
        &self.0
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

/// One piece of a tool's answer, before the exit renders it.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    /// Base64 image data and its MIME type.
    Image {
        data: String,
        mime: String,
    },
}

impl Block {
    pub fn text(s: impl Into<String>) -> Block {
        Block::Text(s.into())
    }

    pub fn image(data: String, mime: String) -> Block {
        Block::Image { data, mime }
    }

    fn into_content(self) -> ContentBlock {
        match self {
            Block::Text(t) => ContentBlock::text(t),
            Block::Image { data, mime } => ContentBlock::image(data, mime),
        }
    }
}

/// A tool's answer: blocks, or a coded failure. rmcp's router turns it into a result
/// ([`IntoCallToolResult`]) that only [`Exit::tool_response`] sends on.
pub struct Answer(pub Result<Vec<Block>, WireError>);

impl Answer {
    pub fn text(res: Result<String, WireError>) -> Answer {
        Answer(res.map(|s| vec![Block::Text(s)]))
    }

    pub fn blocks(res: Result<Vec<Block>, WireError>) -> Answer {
        Answer(res)
    }

    pub fn fail(e: WireError) -> Answer {
        Answer(Err(e))
    }

    /// The MCP result: a dialog that stopped a command is news, not an error; any other
    /// failure is [`tool_error`].
    fn into_result(self) -> CallToolResult {
        match self.0 {
            Ok(blocks) => {
                CallToolResult::success(blocks.into_iter().map(Block::into_content).collect())
            }
            Err(e) if e.code == ErrorCode::DialogOpen => {
                CallToolResult::success(vec![ContentBlock::text(format!(
                    "Stopped: {}. {}",
                    ext_core::escape::inline(&e.message),
                    if e.message.contains("automatically") {
                        ""
                    } else {
                        e.code.hint()
                    }
                ))])
            }
            Err(e) => tool_error(&e),
        }
    }
}

impl IntoCallToolResult for Answer {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResponse::Complete(self.into_result()))
    }
}

/// An answer with a structured copy, sent only when the call succeeded.
pub struct Structured(pub Answer, pub Option<Value>);

impl IntoCallToolResult for Structured {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let mut result = self.0.into_result();
        if result.is_error != Some(true) {
            result.structured_content = self.1;
        }
        Ok(CallToolResponse::Complete(result))
    }
}

/// A wire error as an MCP tool result: the stable code first, then what happened and a hint.
/// The message may hold page or agent strings (element ids, selectors, exception texts): it
/// stays on its line, escaped, so it cannot add a `Hint:` or an `Error CODE:` of its own.
pub fn tool_error(err: &WireError) -> CallToolResult {
    let text = format!(
        "Error {}: {}\nHint: {}",
        err.code,
        ext_core::escape::inline(&err.message),
        err.code.hint()
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured_error(err));
    result
}

/// An error as `structuredContent`: the code, what happened, whether the same call may
/// succeed later unchanged (`retryable`), what to do (`suggestion`), and for a spent
/// budget when it resets (`resetsAt`, ms since the epoch).
pub fn structured_error(err: &WireError) -> Value {
    let mut sc = json!({
        "code": err.code,
        "message": err.message,
        "retryable": err.retryable(),
        "suggestion": err.code.hint(),
    });
    if let Some(at) = err.data.as_ref().and_then(|d| d.get("resetsAt")) {
        sc["resetsAt"] = at.clone();
    }
    sc
}

/// A resource read's outcome as it goes to the client.
pub type Resource = Result<ReadResourceResult, ErrorData>;

/// What every secret kapture knows is masked with.
struct Secrets {
    /// `--secrets`: exact values with their kind.
    fixed: Vec<(String, String)>,
    /// The policy file's `[[mask]]` patterns.
    patterns: Vec<Pattern>,
    /// What every session learned (confidential fields typed into, replays' secrets).
    book: MaskBook,
}

/// The exit, shared by every session and the native engine's approver; cheap to clone.
#[derive(Clone)]
pub struct Exit {
    secrets: Arc<Secrets>,
}

impl Exit {
    pub fn new(fixed: Vec<(String, String)>, patterns: Vec<Pattern>) -> Exit {
        Exit {
            secrets: Arc::new(Secrets {
                fixed,
                patterns,
                book: MaskBook::default(),
            }),
        }
    }

    /// Every session's learned values (sessions join it when they start).
    pub fn book(&self) -> &MaskBook {
        &self.secrets.book
    }

    /// Every exact value to mask now, longest first.
    fn values(&self) -> Vec<(String, String)> {
        self.secrets.book.all(&self.secrets.fixed)
    }

    /// `text` with every secret masked: exact values in every form an answer or a URL
    /// writes them, what the detectors find, the person's patterns.
    fn text_with(&self, text: &str, values: &[(String, String)]) -> String {
        let (text, _) = ext_core::secrets::redact(text, values);
        ext_core::secrets::redact_patterns(&text, &self.secrets.patterns).0
    }

    /// Every string of `value` masked (numbers and booleans that equal a value too).
    fn json_with(&self, value: &mut Value, values: &[(String, String)]) {
        ext_core::secrets::mask_json(value, values);
        match value {
            Value::String(s) => *s = self.text_with(s, values),
            Value::Array(items) => items.iter_mut().for_each(|v| self.json_with(v, values)),
            Value::Object(map) => map.values_mut().for_each(|v| self.json_with(v, values)),
            _ => {}
        }
    }

    /// Plain text for a place of kapture's own that is not an MCP message (a journal
    /// line's fields, a log, a panel's feed).
    pub fn text(&self, text: &str) -> Masked<String> {
        Masked(self.text_with(text, &self.values()))
    }

    /// A JSON value, masked string by string before anyone writes it.
    pub fn json(&self, mut value: Value) -> Masked<Value> {
        self.json_with(&mut value, &self.values());
        Masked(value)
    }

    /// A tool call's response as it goes to the client: `news` (tabs pages opened, what the
    /// call had to tell) appended, every text and every string of the structured copy
    /// masked. Protocol errors are masked too (they may echo what the agent sent).
    pub fn tool_response(
        &self,
        res: Result<CallToolResponse, ErrorData>,
        news: Vec<String>,
    ) -> Masked<Result<CallToolResponse, ErrorData>> {
        let values = self.values();
        let res = match res {
            Ok(CallToolResponse::Complete(mut result)) => {
                for n in news {
                    result.content.push(ContentBlock::text(n));
                }
                for block in result.content.iter_mut() {
                    if let ContentBlock::Text(text) = block {
                        text.text = self.text_with(&text.text, &values);
                    }
                }
                if let Some(sc) = result.structured_content.as_mut() {
                    self.json_with(sc, &values);
                }
                Ok(CallToolResponse::Complete(result))
            }
            // Only a task's seed (no content) or an input request (built here) remain.
            Ok(other) => Ok(other),
            Err(e) => Err(self.error_with(e, &values)),
        };
        Masked(res)
    }

    /// A refusal before the call ran (a spent budget, a context that does not exist).
    pub fn refusal(&self, e: WireError) -> Masked<Result<CallToolResponse, ErrorData>> {
        self.tool_response(Answer::fail(e).into_call_tool_result(), Vec::new())
    }

    /// The call met approvals without their answers (MCP 2026-07-28): `input_required`
    /// with each question (key, message), masked.
    pub fn input_required(
        &self,
        questions: Vec<(String, String)>,
    ) -> Masked<Result<CallToolResponse, ErrorData>> {
        let requests: rmcp::model::InputRequests = questions
            .into_iter()
            .map(|(key, message)| {
                let ask = rmcp::model::ElicitRequest::new(self.question(&message));
                (key, rmcp::model::InputRequest::Elicitation(ask))
            })
            .collect();
        Masked(Ok(CallToolResponse::InputRequired(
            rmcp::model::InputRequiredResult::from_input_requests(requests),
        )))
    }

    /// A task's seed answer: its status message masked (it names the tool).
    pub fn task(
        &self,
        mut created: CreateTaskResult,
    ) -> Masked<Result<CallToolResponse, ErrorData>> {
        if let Some(m) = created.task.status_message.as_mut() {
            *m = self.text(m).into_inner();
        }
        Masked(Ok(CallToolResponse::Task(created)))
    }

    /// A protocol error: its message and data masked.
    pub fn error(&self, e: ErrorData) -> Masked<ErrorData> {
        Masked(self.error_with(e, &self.values()))
    }

    fn error_with(&self, mut e: ErrorData, values: &[(String, String)]) -> ErrorData {
        e.message = self.text_with(&e.message, values).into();
        if let Some(data) = e.data.as_mut() {
            self.json_with(data, values);
        }
        e
    }

    /// A resource read that failed with a coded error.
    pub fn resource_error(&self, e: WireError) -> Masked<Resource> {
        let message = format!("{}: {}", e.code, ext_core::escape::inline(&e.message));
        self.resource_failure(ErrorData::invalid_request(
            message,
            Some(json!({"code": e.code})),
        ))
    }

    /// A resource read that failed (its message masked).
    pub fn resource_failure(&self, e: ErrorData) -> Masked<Resource> {
        Masked(Err(self.error(e).into_inner()))
    }

    /// A text resource.
    pub fn resource_text(&self, uri: &str, text: &str, mime: &str) -> Masked<Resource> {
        let text = self.text(text).into_inner();
        Masked(Ok(ReadResourceResult::new(vec![ResourceContents::text(
            text, uri,
        )
        .with_mime_type(mime)])))
    }

    /// A JSON resource: masked string by string, then written (pretty).
    pub fn resource_json(&self, uri: &str, value: Value) -> Masked<Resource> {
        let text = serde_json::to_string_pretty(self.json(value).get()).unwrap_or_default();
        self.resource_text(uri, &text, "application/json")
    }

    /// A script resource: a scenario exported as [`Exit::export`] does.
    pub fn resource_code(
        &self,
        uri: &str,
        scenario: &Scenario,
        format: Format,
    ) -> Masked<Resource> {
        let code = self.export(scenario, format).into_inner();
        self.resource_text(uri, &code, "text/plain")
    }

    /// An image resource (pixels carry no text to mask: what a page shows is judged before
    /// capture).
    pub fn resource_image(&self, uri: &str, data: String, mime: String) -> Masked<Resource> {
        Masked(Ok(ReadResourceResult::new(vec![ResourceContents::blob(
            data, uri,
        )
        .with_mime_type(mime)])))
    }

    /// A scenario as a script of `format`: every string of the scenario masked before the
    /// generator writes it as that language's literal, then the script as text.
    pub fn export(&self, scenario: &Scenario, format: Format) -> Masked<String> {
        let values = self.values();
        let masked = serde_json::to_value(scenario)
            .ok()
            .map(|mut v| {
                self.json_with(&mut v, &values);
                v
            })
            .and_then(|v| serde_json::from_value::<Scenario>(v).ok());
        let code = match masked {
            Some(s) => ext_core::export::export(&s, format),
            // A scenario whose masked form does not read back is not exported at all.
            None => {
                "// kapture: this scenario could not be exported with its secrets masked\n".into()
            }
        };
        Masked(self.text_with(&code, &values))
    }

    /// Put an approval question to a person through `client` (`elicitation/create`),
    /// waiting at most `wait`.
    pub async fn ask(
        &self,
        client: &Peer<RoleServer>,
        message: &str,
        wait: Duration,
    ) -> Result<ElicitResult, ServiceError> {
        client
            .create_elicitation_with_timeout(self.question(message), Some(wait))
            .await
    }

    /// An approval question (`elicitation/create`, or an `input_required` request): the
    /// message masked, and a one-field form with the three answers.
    fn question(&self, message: &str) -> ElicitRequestParams {
        let v = json!({
            "mode": "form",
            "message": self.text(message).into_inner(),
            "requestedSchema": {
                "type": "object",
                "title": "Kapture approval",
                "properties": {
                    "answer": {
                        "type": "string",
                        "title": "Your answer",
                        "description": "approve once: this action only; approve for this session: this kind of action on this site, for this agent (MCP session) only, until it ends or kapture reconnects to the browser; deny: refuse it",
                        "enum": [ONCE, SESSION, DENY],
                        "default": DENY
                    }
                },
                "required": ["answer"]
            }
        });
        serde_json::from_value(v).expect("the approval form is a valid elicitation request")
    }

    /// Send a progress notice to `peer` (a client that went away is not the call's problem:
    /// its cancel ends the call).
    pub async fn progress(
        &self,
        peer: &Peer<RoleServer>,
        token: ProgressToken,
        value: f64,
        message: &str,
    ) {
        let note = self.progress_notice(token, value, message);
        let _ = peer.notify_progress(note).await;
    }

    fn progress_notice(
        &self,
        token: ProgressToken,
        value: f64,
        message: &str,
    ) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token, value).with_message(self.text(message).into_inner())
    }

    /// Tools made from saved scenarios (their descriptions and schemas quote recorded
    /// labels): every string masked.
    pub fn tools(&self, tools: Vec<Tool>) -> Vec<Tool> {
        let values = self.values();
        tools
            .into_iter()
            .map(|mut tool| {
                // The name is the tool's identity (plain ASCII by construction): kept.
                if let Some(d) = tool.description.as_mut() {
                    *d = self.text_with(d, &values).into();
                }
                if let Some(t) = tool.title.as_mut() {
                    *t = self.text_with(t, &values);
                }
                let mut schema = Value::Object((*tool.input_schema).clone());
                self.json_with(&mut schema, &values);
                if let Value::Object(map) = schema {
                    tool.input_schema = Arc::new(map);
                }
                tool
            })
            .collect()
    }

    /// A tool call's arguments as every journal keeps them: secret-named and
    /// secret-looking values masked, typed text by where it went (`confidential`: which
    /// values the call's answer said went into confidential fields; `None`, it did not answer
    /// and may have typed before failing: every typed value), then every secret kapture
    /// knows.
    pub fn journal_args(
        &self,
        tool: &str,
        args: &Value,
        confidential: Option<&[usize]>,
    ) -> Masked<Value> {
        let mut v = self.panel_args(tool, args).into_inner();
        ext_core::ui::mask_typed(tool, &mut v, confidential);
        Masked(v)
    }

    /// A command's arguments as the journal keeps them (a panel's commands too, which
    /// answer no confidential fields).
    pub fn panel_args(&self, method: &str, params: &Value) -> Masked<Value> {
        let values = self.values();
        let method = method.strip_prefix("browser_").unwrap_or(method);
        let mut v = ext_core::ui::mask_params(method, params);
        // Detectors that read across a JSON text (a key and its value) see it whole too.
        let text = serde_json::to_string(&v).unwrap_or_default();
        let (clean, _) = ext_core::secrets::redact(&text, &[]);
        if let Ok(read) = serde_json::from_str(&clean) {
            v = read;
        }
        self.json_with(&mut v, &values);
        Masked(v)
    }

    /// A journal line, every part a page, a client or an agent could have chosen masked.
    pub fn entry<T: Journaled>(&self, mut entry: T) -> Masked<T> {
        let values = self.values();
        for v in entry.values() {
            self.json_with(v, &values);
        }
        for t in entry.texts() {
            *t = self.text_with(t, &values);
        }
        Masked(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit() -> Exit {
        let pattern = Pattern::new("ticket", r"TKT-\d{6}").unwrap();
        let exit = Exit::new(
            vec![("fixed-Secret-1".into(), "secrets-file".into())],
            vec![pattern],
        );
        let masks = Masks::default();
        masks.add("pä\"ss wörd!1", "confidential");
        exit.book().join(1, masks);
        exit
    }

    const LEAKS: [&str; 4] = [
        "fixed-Secret-1",
        "TKT-123456",
        "pä\"ss wörd!1",
        "p%C3%A4%22ss+w%C3%B6rd%211",
    ];

    fn clean(s: &str) {
        for leak in LEAKS {
            assert!(!s.contains(leak), "{leak} in {s}");
        }
        assert!(!s.contains("w\\u00f6rd") && !s.contains("w\\xf6rd"), "{s}");
    }

    #[test]
    fn every_destination_masks_every_secret_kapture_knows() {
        let exit = exit();
        let all = "fixed-Secret-1 TKT-123456 pä\"ss wörd!1 ?pw=p%C3%A4%22ss+w%C3%B6rd%211";
        let sent = |r: Masked<Result<CallToolResponse, ErrorData>>| match r.into_inner() {
            Ok(CallToolResponse::Complete(r)) => serde_json::to_string(&r).unwrap(),
            other => panic!("{other:?}"),
        };
        clean(&sent(exit.tool_response(
            Answer::text(Ok(all.into())).into_call_tool_result(),
            vec![all.into()],
        )));
        clean(&sent(exit.tool_response(
            Answer::fail(WireError::new(ErrorCode::BadArgs, all)).into_call_tool_result(),
            vec![],
        )));
        let read = |r: Masked<Resource>| serde_json::to_string(&r.into_inner().unwrap()).unwrap();
        clean(&read(exit.resource_text("kapture://x", all, "text/plain")));
        clean(&read(
            exit.resource_json("kapture://x", json!({"a": [all]})),
        ));
        clean(&serde_json::to_string(&exit.question(all)).unwrap());
        let token = ProgressToken(rmcp::model::NumberOrString::Number(1));
        clean(&serde_json::to_string(&exit.progress_notice(token, 1.0, all)).unwrap());
        clean(
            &exit
                .error(ErrorData::invalid_params(
                    all.to_string(),
                    Some(json!([all])),
                ))
                .into_inner()
                .message,
        );
        let args = exit.journal_args(
            "browser_type",
            &json!({"text": all, "ref": "e1"}),
            Some(&[]),
        );
        clean(&args.get().to_string());
        // The form is what MCP allows: an object of primitive fields.
        assert!(matches!(
            exit.question("m"),
            ElicitRequestParams::FormElicitationParams { .. }
        ));
    }

    #[test]
    fn an_export_masks_before_each_language_escapes() {
        let exit = exit();
        use ext_core::scenario::{Step, StepAction};
        let steps = vec![
            Step::from(StepAction::Navigate {
                url: "http://127.0.0.1/?q=pä\"ss wörd!1".into(),
            }),
            Step::from(StepAction::Type {
                on: vec![],
                text: "pä\"ss wörd!1 TKT-123456".into(),
                submit: false,
            }),
        ];
        let s: Scenario = serde_json::from_value(json!({
            "name": "x", "version": 2, "title": "pä\"ss wörd!1", "chain": steps,
        }))
        .unwrap();
        for format in Format::ALL {
            let code = exit.export(&s, format).into_inner();
            clean(&code);
            assert!(code.contains("[redacted:confidential]"), "{code}");
        }
    }

    #[test]
    fn arguments_keep_no_secrets() {
        let args = json!({"selector": "#password", "apiKey": "k", "function": "fetch('/x?token=Zx81kLp02QmNv7Rt')"});
        let v = Exit::new(vec![], vec![])
            .panel_args("browser_evaluate", &args)
            .into_inner();
        let s = v.to_string();
        assert!(!s.contains("Zx81kLp02QmNv7Rt"), "{s}");
        assert_eq!(v["apiKey"], ext_core::ui::MASK);
        assert_eq!(v["selector"], "#password");
    }

    #[test]
    fn typed_values_are_masked_by_where_they_went_not_by_their_name() {
        let exit = Exit::new(vec![], vec![]);
        let journal_args = |tool: &str, args: &Value, c: Option<&[usize]>| {
            exit.journal_args(tool, args, c).into_inner()
        };
        let args = json!({"ref": "e7", "text": "Canary-2"});
        let secret = journal_args("browser_type", &args, Some(&[0]));
        assert_eq!(secret["text"], ext_core::ui::MASK);
        let plain = journal_args("browser_type", &args, Some(&[]));
        assert_eq!(plain["text"], "Canary-2");
        let failed = journal_args("browser_type", &args, None);
        assert_eq!(failed["text"], ext_core::ui::MASK);
        let form = json!({"fields": [{"selector": "#f1", "value": "Canary-3"}, {"selector": "#f2", "value": "Ada"}]});
        let v = journal_args("browser_fill_form", &form, Some(&[0]));
        assert_eq!(v["fields"][0]["value"], ext_core::ui::MASK);
        assert_eq!(v["fields"][1]["value"], "Ada");
    }
}
