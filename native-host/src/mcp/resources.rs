//! The MCP resources: the sessions index (`kapture://sessions`), a session's step log and
//! code (`kapture://session/{id}/steps`, `…/code`), and the live state of its current tab
//! (`…/snapshot`, `…/screenshot`, `…/console`, `…/tabs`, `…/cookies`), `current` standing
//! for the reader's own session. Live state is read through the same bridge calls as the
//! tools (the policy judges them), and masked like tool answers. Subscriptions are told of
//! updates where kapture knows of them without looking: sessions starting and ending, a
//! session's calls, tabs opening and closing.

use ext_core::export::Format;
use ext_core::methods::{
    Budget, ConsoleMessages, Cookies, ImageType, Screenshot, Snapshot, TabsList,
};
use ext_core::protocol::WireError;
use ext_core::scenario::Scenario;
use rmcp::model::{Resource as McpResource, ResourceTemplate, ResourceUpdatedNotificationParam};
use rmcp::ErrorData;

use super::{KaptureServer, SessionId, Shared};
use crate::egress::{Masked, Resource};

/// What a resource holds, as the exit takes it.
enum Contents {
    Text(String),
    Json(serde_json::Value),
    Code(Box<Scenario>, Format),
    /// Base64 data and its MIME type.
    Image(String, String),
}

/// Why a read failed, before the exit.
enum Failure {
    Wire(WireError),
    Protocol(ErrorData),
}

impl From<WireError> for Failure {
    fn from(e: WireError) -> Failure {
        Failure::Wire(e)
    }
}

impl From<ErrorData> for Failure {
    fn from(e: ErrorData) -> Failure {
        Failure::Protocol(e)
    }
}

pub const SESSIONS_URI: &str = "kapture://sessions";
const SESSION_PREFIX: &str = "kapture://session/";

/// Whose session a URI names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The reader's own (`current`).
    Current,
    Id(SessionId),
}

/// What of a session a URI names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Steps,
    Code(Format),
    Snapshot,
    Screenshot,
    Console,
    Tabs,
    Cookies,
}

impl What {
    /// Live state of the session's current tab (changes when the session acts).
    pub fn is_live(self) -> bool {
        !matches!(self, What::Steps | What::Code(_))
    }
}

/// A resource URI, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uri {
    Sessions,
    Session(Who, What),
}

/// Why a URI names no resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriError {
    /// Not one of ours.
    Unknown,
    /// Ours, but malformed (the message says how).
    Bad(String),
}

impl UriError {
    fn into_error(self, uri: &str) -> ErrorData {
        match self {
            // `data.uri` names it, as MCP 2026-07-28 asks (SEP-2164).
            UriError::Unknown => ErrorData::resource_not_found(
                format!("no resource {uri}: resources/list and resources/templates/list show them"),
                Some(serde_json::json!({ "uri": uri })),
            ),
            UriError::Bad(why) => ErrorData::invalid_params(why, None),
        }
    }
}

/// Parse a resource URI (`kapture://session/2/code?format=puppeteer`).
pub fn parse(uri: &str) -> Result<Uri, UriError> {
    if uri == SESSIONS_URI {
        return Ok(Uri::Sessions);
    }
    let rest = uri.strip_prefix(SESSION_PREFIX).ok_or(UriError::Unknown)?;
    let (path, query) = match rest.find('?') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (who, what) = path.split_once('/').ok_or(UriError::Unknown)?;
    let who = match who {
        "current" => Who::Current,
        n => Who::Id(n.parse().map_err(|_| {
            UriError::Bad(format!(
                "{uri}: the session is a number from kapture://sessions, or current"
            ))
        })?),
    };
    let what = match what {
        "steps" => What::Steps,
        "code" => What::Code(crate::session_log::code_format(query).map_err(UriError::Bad)?),
        "snapshot" => What::Snapshot,
        "screenshot" => What::Screenshot,
        "console" => What::Console,
        "tabs" => What::Tabs,
        "cookies" => What::Cookies,
        _ => return Err(UriError::Unknown),
    };
    if !query.is_empty() && !matches!(what, What::Code(_)) {
        return Err(UriError::Unknown);
    }
    Ok(Uri::Session(who, what))
}

fn resource(uri: &str, name: &str, description: &str, mime: &str) -> McpResource {
    McpResource::new(uri, name)
        .with_description(description)
        .with_mime_type(mime)
}

/// What resources/list shows: the index and the reader's own session.
pub fn list() -> Vec<McpResource> {
    let own = |what: &str| format!("{SESSION_PREFIX}current/{what}");
    vec![
        resource(SESSIONS_URI, "sessions", "The live MCP sessions of this kapture: id, client, start, current tab, owned tabs, steps (JSON).", "application/json"),
        resource(&own("steps"), "session steps", "Every tool call of this MCP session, in order, with masked arguments and how it ended (JSON).", "application/json"),
        resource(&own("code"), "session code", "This session's browser actions as a Playwright Test script; add ?format=playwright-python|puppeteer|webdriverio for another.", "text/plain"),
        resource(&own("snapshot"), "session snapshot", "The page model of this session's current tab, as browser_snapshot answers it.", "text/plain"),
        resource(&own("screenshot"), "session screenshot", "A PNG screenshot of this session's current tab.", "image/png"),
        resource(&own("console"), "session console", "The console messages of this session's current tab, newest first.", "text/plain"),
        resource(&own("tabs"), "tabs", "The browser's tabs, those of other sessions marked.", "text/plain"),
        resource(&own("cookies"), "session cookies", "The cookies of this session's current tab's page.", "text/plain"),
    ]
}

/// What resources/templates/list shows.
pub fn templates() -> Vec<ResourceTemplate> {
    let t = |what: &str, description: &str, mime: &str| {
        let mut t = ResourceTemplate::new(
            format!("{SESSION_PREFIX}{{id}}/{what}"),
            format!("session {what}"),
        );
        t.description = Some(description.into());
        t.mime_type = Some(mime.into());
        t
    };
    vec![
        t("steps", "A session's tool calls (id from kapture://sessions, or current).", "application/json"),
        t("code", "A session's browser actions as a script (?format=playwright-ts|playwright-python|puppeteer|webdriverio).", "text/plain"),
        t("snapshot", "The page model of a session's current tab.", "text/plain"),
        t("screenshot", "A PNG screenshot of a session's current tab.", "image/png"),
        t("console", "The console messages of a session's current tab.", "text/plain"),
        t("tabs", "The browser's tabs, as a session sees them.", "text/plain"),
        t("cookies", "The cookies of a session's current tab's page.", "text/plain"),
    ]
}

impl Shared {
    /// Tell every subscriber whose subscription `matches` (subscriber, its URI parsed with
    /// `current` resolved to the subscriber) that it changed.
    fn notify_where(&self, matches: impl Fn(SessionId, Uri) -> bool) {
        let mut told = Vec::new();
        let mut heard = Vec::new();
        let resolved = |id, uri: &str| match parse(uri) {
            Ok(Uri::Session(Who::Current, what)) => Some(Uri::Session(Who::Id(id), what)),
            Ok(other) => Some(other),
            Err(_) => None,
        };
        for (id, entry) in self.registry().sessions() {
            if let Some(peer) = &entry.peer {
                for uri in &entry.subscriptions {
                    if resolved(id, uri).is_some_and(|u| matches(id, u)) {
                        told.push((peer.clone(), uri.clone()));
                    }
                }
            }
            for sink in &entry.listeners {
                for uri in sink.accepted().resource_subscriptions.iter().flatten() {
                    if resolved(id, uri).is_some_and(|u| matches(id, u)) {
                        heard.push((sink.clone(), uri.clone()));
                    }
                }
            }
        }
        for (peer, uri) in told {
            tokio::spawn(async move {
                let _ = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await;
            });
        }
        for (sink, uri) in heard {
            tokio::spawn(async move {
                let _ = sink
                    .send(
                        rmcp::model::ServerNotification::ResourceUpdatedNotification(
                            rmcp::model::ResourceUpdatedNotification::new(
                                ResourceUpdatedNotificationParam::new(uri),
                            ),
                        ),
                    )
                    .await;
            });
        }
    }

    /// A session started or ended.
    pub(super) fn sessions_changed(&self) {
        self.notify_where(|_, uri| uri == Uri::Sessions);
    }

    /// A tab opened or closed.
    pub(super) fn tabs_changed(&self) {
        self.notify_where(|_, uri| matches!(uri, Uri::Session(_, What::Tabs)));
    }
}

impl KaptureServer {
    /// This session made a tool call (`acted`: one that may change the page).
    pub(super) fn called(&self, acted: bool) {
        let me = self.id();
        self.shared.notify_where(|_, uri| match uri {
            Uri::Session(Who::Id(id), what) => id == me && (acted || !what.is_live()),
            _ => false,
        });
    }

    /// What a `subscriptions/listen` request gets of what it asked: tool list changes, and
    /// the resources that are kapture's (at most 100).
    pub(super) fn listen_filter(
        requested: &rmcp::model::SubscriptionFilter,
    ) -> rmcp::model::SubscriptionFilter {
        let mut accepted = rmcp::model::SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed.filter(|on| *on);
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|u| parse(u).is_ok())
                .take(100)
                .cloned()
                .collect()
        });
        accepted
    }

    /// Serve one `subscriptions/listen` until it ends: its sink is this session's while it
    /// lasts (at most 8 at once; the oldest goes first).
    pub(super) async fn listen_on(&self, context: rmcp::service::SubscriptionContext) {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        if let Some(entry) = self.shared.registry().get_mut(self.id()) {
            if entry.listeners.len() >= 8 {
                entry.listeners.remove(0);
            }
            entry.listeners.push(sink);
        }
        context.cancelled().await;
        if let Some(entry) = self.shared.registry().get_mut(self.id()) {
            entry.listeners.retain(|s| s.id() != &id);
        }
    }

    /// `resources/subscribe` (`on`) or `unsubscribe`.
    pub(super) fn subscribe_to(&self, uri: &str, on: bool) -> Result<(), ErrorData> {
        parse(uri).map_err(|e| e.into_error(uri))?;
        let mut registry = self.shared.registry();
        if let Some(entry) = registry.get_mut(self.id()) {
            if on {
                // Bounded: a client subscribes to a handful.
                if entry.subscriptions.len() >= 100 && !entry.subscriptions.contains(uri) {
                    return Err(ErrorData::invalid_params(
                        "at most 100 subscriptions per session",
                        None,
                    ));
                }
                entry.subscriptions.insert(uri.to_string());
            } else {
                entry.subscriptions.remove(uri);
            }
        }
        Ok(())
    }

    /// Read a resource, through the one exit (masked as tool answers are, JSON masked before
    /// it is written, code before it is generated).
    pub(super) async fn read(&self, uri: &str) -> Masked<Resource> {
        let exit = &self.shared.exit;
        match self.read_unsent(uri).await {
            Ok(Contents::Text(text)) => exit.resource_text(uri, &text, "text/plain"),
            Ok(Contents::Json(value)) => exit.resource_json(uri, value),
            Ok(Contents::Code(scenario, format)) => exit.resource_code(uri, &scenario, format),
            Ok(Contents::Image(data, mime)) => exit.resource_image(uri, data, mime),
            Err(Failure::Wire(e)) => exit.resource_error(e),
            Err(Failure::Protocol(e)) => exit.resource_failure(e),
        }
    }

    /// What a resource holds, before the exit.
    async fn read_unsent(&self, uri: &str) -> Result<Contents, Failure> {
        let parsed = parse(uri).map_err(|e| e.into_error(uri))?;
        let (id, what) = match parsed {
            Uri::Sessions => return Ok(Contents::Json(self.sessions_json())),
            Uri::Session(Who::Current, what) => (self.id(), what),
            Uri::Session(Who::Id(id), what) => (id, what),
        };
        // The registry is let go before an error is made: masking one reads it again.
        let (log, current, history) = {
            let registry = self.shared.registry();
            let entry = registry.get(id).ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!("there is no live session {id}: kapture://sessions lists them"),
                    None,
                )
            })?;
            let history = match what {
                What::Steps | What::Code(_) => registry.check_history(self.id(), id),
                _ => Ok(()),
            };
            (
                entry.log.clone(),
                registry.current(id, self.bridge().generation()),
                history,
            )
        };
        history?;
        let text = match what {
            What::Steps => return Ok(Contents::Json(log.steps())),
            What::Code(format) => return Ok(Contents::Code(Box::new(log.as_scenario()), format)),
            What::Tabs => {
                let list = self.browser_call(None, &TabsList {}).await?;
                self.format_tabs(&list, 0)
            }
            live => {
                let tab = current.ok_or_else(|| {
                    ErrorData::resource_not_found(
                        format!("session {id} has no current tab yet: a tool call without tabId gives it one"),
                        None,
                    )
                })?;
                // Reading is driving too: another session's tab only when tabs are shared.
                self.check_tab(tab)?;
                let budget = Budget {
                    max_chars: Some(self.config().max_chars),
                    offset: None,
                };
                let text = match live {
                    What::Snapshot => {
                        let params = Snapshot {
                            budget,
                            ..Snapshot::default()
                        };
                        self.browser_call(Some(tab), &params).await.map(|t| t.text)
                    }
                    What::Console => {
                        let params = ConsoleMessages {
                            budget,
                            ..ConsoleMessages::default()
                        };
                        let max = self.config().max_chars as usize;
                        self.browser_call(Some(tab), &params)
                            .await
                            .map(|log| super::read::console_text(&log, max, 0))
                    }
                    What::Cookies => {
                        let params = Cookies {
                            budget,
                            ..Cookies::default()
                        };
                        self.browser_call(Some(tab), &params).await.map(|t| t.text)
                    }
                    _ => {
                        let params = Screenshot {
                            image_type: ImageType::Png,
                            ..Screenshot::default()
                        };
                        let shot = self.browser_call(Some(tab), &params).await?;
                        return Ok(Contents::Image(shot.data, shot.mime_type));
                    }
                };
                text?
            }
        };
        Ok(Contents::Text(text))
    }

    /// The sessions index.
    fn sessions_json(&self) -> serde_json::Value {
        let generation = self.bridge().generation();
        let registry = self.shared.registry();
        let list: Vec<serde_json::Value> = registry
            .sessions()
            .map(|(id, e)| {
                serde_json::json!({
                    "id": id,
                    "client": e.client,
                    "label": registry.label(id),
                    "started": e.started,
                    "currentTab": registry.current(id, generation),
                    "ownedTabs": registry.owned(id),
                    "steps": e.log.len(),
                    "you": id == self.id(),
                })
            })
            .collect();
        serde_json::Value::Array(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_a_session_and_what_of_it() {
        assert_eq!(parse("kapture://sessions"), Ok(Uri::Sessions));
        assert_eq!(
            parse("kapture://session/current/steps"),
            Ok(Uri::Session(Who::Current, What::Steps))
        );
        assert_eq!(
            parse("kapture://session/3/code"),
            Ok(Uri::Session(Who::Id(3), What::Code(Format::PlaywrightTs)))
        );
        assert_eq!(
            parse("kapture://session/current/code?format=puppeteer"),
            Ok(Uri::Session(Who::Current, What::Code(Format::Puppeteer)))
        );
        for (what, want) in [
            ("snapshot", What::Snapshot),
            ("screenshot", What::Screenshot),
            ("console", What::Console),
            ("tabs", What::Tabs),
            ("cookies", What::Cookies),
        ] {
            assert_eq!(
                parse(&format!("kapture://session/12/{what}")),
                Ok(Uri::Session(Who::Id(12), want))
            );
            assert!(want.is_live());
        }
        assert!(!What::Steps.is_live());
    }

    #[test]
    fn other_uris_are_not_ours_or_say_what_is_wrong() {
        for unknown in [
            "kapture://session",
            "kapture://session/1",
            "kapture://session/1/secrets",
            "kapture://session/1/steps?x=1",
            "kapture://sessionsx",
            "https://example.com/",
        ] {
            assert_eq!(parse(unknown), Err(UriError::Unknown), "{unknown}");
        }
        assert!(matches!(
            parse("kapture://session/me/steps"),
            Err(UriError::Bad(_))
        ));
        assert!(matches!(
            parse("kapture://session/1/code?format=cobol"),
            Err(UriError::Bad(_))
        ));
    }

    #[test]
    fn every_listed_resource_and_template_parses() {
        for r in list() {
            assert!(parse(&r.uri).is_ok(), "{}", r.uri);
        }
        for t in templates() {
            let uri = t.uri_template.replace("{id}", "1");
            assert!(parse(&uri).is_ok(), "{uri}");
        }
    }
}
