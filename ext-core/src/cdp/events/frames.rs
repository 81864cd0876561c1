//! One record per frame of the tab: its parent, document, URL, origins, Kapture's world,
//! the session it is reached through and what auto-attach said of it — kept together so
//! that each protocol event ends exactly the facts it ends, in one place.

use std::collections::HashMap;

use serde_json::Value;

use super::{RemoteFrame, TabEvents};

/// Everything known of one frame. Each event that ends some of its facts is one method
/// here, so a call site cannot forget one; a record left with no fact is dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FrameRecord {
    /// The frame holding it (its creator, for documents of an opaque origin).
    pub(super) parent: Option<String>,
    /// Its current document (loader id).
    pub(super) loader: Option<String>,
    /// Its document's URL, for the policy (an action inside a frame is judged on it).
    pub(super) url: Option<String>,
    /// The security origin Chrome reports for its document (`Page.Frame`'s
    /// `securityOrigin`): what it is judged on.
    pub(super) origin: Option<String>,
    /// Its live default execution context (id, origin): Chrome's frame tree says `://`
    /// for an about:blank document that inherited its creator's origin (a popup a page
    /// opened and wrote), the context says the truth.
    pub(super) context: Option<(i64, String)>,
    /// Kapture's isolated world: the document (loader id) it was made in, its context id.
    world: Option<(String, i64)>,
    /// The child session it is reached through, when it belongs to an out-of-process
    /// iframe's tree (frames of the tab's own process have none).
    pub(super) session: Option<String>,
    /// What auto-attach reported, when Chrome runs it in another process: the tab's own
    /// session cannot walk it, so reads must say so instead of showing it empty.
    pub(super) remote: Option<RemoteFrame>,
}

/// What one frame's document is, as a frame tree or a navigation reports it.
#[derive(Debug, Clone, Copy, Default)]
struct FrameFacts<'a> {
    loader: Option<&'a str>,
    url: Option<&'a str>,
    origin: Option<&'a str>,
    parent: Option<&'a str>,
}

impl FrameRecord {
    /// `Page.frameNavigated`: a new document. Its URL and origin replace the old
    /// document's (an origin it does not report is unknown); its loader replaces the old
    /// one, which ends Kapture's world of the old document (see [`Self::world`]). The
    /// default context ends with its own `executionContextDestroyed`.
    fn committed(&mut self, doc: FrameFacts) {
        if let Some(url) = doc.url {
            self.url = Some(url.to_string());
            self.origin = doc.origin.map(str::to_string);
            self.adopt_parent(doc.parent);
        }
        if let Some(loader) = doc.loader {
            self.loader = Some(loader.to_string());
        }
    }

    /// A frame tree (or a page script) says what the frame's document is now: an origin
    /// it does not say leaves the known one.
    fn seen(&mut self, doc: FrameFacts) {
        if let Some(loader) = doc.loader {
            self.loader = Some(loader.to_string());
        }
        if let Some(url) = doc.url {
            self.url = Some(url.to_string());
        }
        if let Some(origin) = doc.origin {
            self.origin = Some(origin.to_string());
        }
        self.adopt_parent(doc.parent);
    }

    fn adopt_parent(&mut self, parent: Option<&str>) {
        if let Some(p) = parent {
            self.parent = Some(p.to_string());
        }
    }

    /// `Target.attachedToTarget` / `targetInfoChanged` of an iframe target: it runs in
    /// another process. Its URL's origin is what it is judged on (an out-of-process frame
    /// has a site of its own), its parent what it hangs under.
    fn attached_remote(
        &mut self,
        session: Option<&str>,
        url: &str,
        origin: Option<&str>,
        parent: Option<&str>,
    ) {
        let remote = self.remote.get_or_insert_with(|| RemoteFrame {
            session: None,
            parent: None,
            url: String::new(),
            origin: None,
        });
        if let Some(s) = session {
            remote.session = Some(s.to_string());
        }
        if let Some(p) = parent {
            remote.parent = Some(p.to_string());
        }
        remote.url = url.to_string();
        remote.origin = origin.map(str::to_string);
        self.url = Some(url.to_string());
        self.origin = origin.map(str::to_string);
        self.adopt_parent(parent);
    }

    /// `Page.frameDetached`: its document, context and world are gone. A frame swapped
    /// into another process lives on there: what it is judged on stays (auto-attach
    /// reported it, or will), and so does what ends only with its session. Its children
    /// are not touched: the browser reports each frame it detaches, children first.
    fn detached(&mut self) {
        self.loader = None;
        self.context = None;
        self.world = None;
        if self.remote.is_none() {
            self.url = None;
            self.origin = None;
            self.parent = None;
        }
    }

    /// The session it was reached through ended (`Target.detachedFromTarget`): gone, or
    /// back in the tab's process (where its own events and frame tree say more), nothing
    /// learnt through that session stays. Its default context in the tab's process is the
    /// tab's own and ends with its own event.
    fn session_ended(&mut self) {
        self.session = None;
        self.loader = None;
        self.url = None;
        self.origin = None;
        self.parent = None;
        self.world = None;
    }

    /// Execution context `ctx` is gone: the default context or Kapture's world it was.
    fn context_destroyed(&mut self, ctx: i64) {
        if self.context.as_ref().is_some_and(|(c, _)| *c == ctx) {
            self.context = None;
        }
        self.forget_world(ctx);
    }

    /// Kapture's world `ctx` is gone (the browser said so, or a call found it gone).
    fn forget_world(&mut self, ctx: i64) {
        if self.world.as_ref().is_some_and(|(_, c)| *c == ctx) {
            self.world = None;
        }
    }

    /// `Runtime.executionContextsCleared`: every context of the tab's process is gone.
    fn contexts_cleared(&mut self) {
        self.context = None;
        self.world = None;
    }

    /// Kapture's world in the frame's current document, if made already: a world made in
    /// an earlier document is not this one's.
    fn world(&self) -> Option<i64> {
        let (loader, ctx) = self.world.as_ref()?;
        (self.loader.as_ref() == Some(loader)).then_some(*ctx)
    }

    /// Attached or with a document: a frame input could land in.
    fn known(&self) -> bool {
        self.loader.is_some() || self.parent.is_some()
    }

    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The tab's frame records by frame id.
#[derive(Debug, Default)]
pub(super) struct Frames(HashMap<String, FrameRecord>);

impl Frames {
    pub(super) fn get(&self, id: &str) -> Option<&FrameRecord> {
        self.0.get(id)
    }

    /// Change one frame's record (made if new); a record left with no fact is dropped.
    fn update<T>(&mut self, id: &str, change: impl FnOnce(&mut FrameRecord) -> T) -> T {
        let record = self.0.entry(id.to_string()).or_default();
        let out = change(record);
        if record.is_empty() {
            self.0.remove(id);
        }
        out
    }

    /// Change every record; those left with no fact are dropped.
    fn update_all(&mut self, mut change: impl FnMut(&mut FrameRecord)) {
        self.0.retain(|_, r| {
            change(r);
            !r.is_empty()
        });
    }

    pub(super) fn loader(&self, id: &str) -> Option<&String> {
        self.get(id)?.loader.as_ref()
    }
}

impl TabEvents {
    /// What a frame tree (or a page script) says of a frame's current document: its
    /// loader, URL, security origin (if it says one) and parent (if it has one).
    pub fn frame_seen(
        &mut self,
        frame_id: &str,
        loader: &str,
        url: &str,
        origin: Option<&str>,
        parent: Option<&str>,
    ) {
        let doc = FrameFacts {
            loader: Some(loader),
            url: Some(url),
            origin,
            parent,
        };
        self.frames.update(frame_id, |r| r.seen(doc));
    }

    /// `frame` (of an out-of-process iframe's tree) is reached through `session`.
    pub fn set_frame_session(&mut self, frame: &str, session: &str) {
        self.frames
            .update(frame, |r| r.session = Some(session.to_string()));
    }

    /// The child session `frame` is reached through, if it runs in another process.
    pub fn session_of(&self, frame: &str) -> Option<String> {
        self.frames.get(frame)?.session.clone()
    }

    /// True the first time `session` is asked about (then it is remembered).
    pub fn first_sight_of_session(&mut self, session: &str) -> bool {
        self.sessions_seen.insert(session.to_string())
    }

    /// The tab's out-of-process frames, by frame id.
    pub fn remote_frames(&self) -> Vec<(String, RemoteFrame)> {
        let mut v: Vec<_> = self
            .frames
            .0
            .iter()
            .filter_map(|(id, r)| Some((id.clone(), r.remote.clone()?)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The current document of a frame.
    pub fn frame_loader(&self, frame_id: &str) -> Option<String> {
        self.frames.loader(frame_id).cloned()
    }

    /// Kapture's world in the frame's current document, if made already.
    pub fn world(&self, frame_id: &str) -> Option<i64> {
        self.frames.get(frame_id)?.world()
    }

    pub fn set_world(&mut self, frame_id: &str, loader_id: &str, context_id: i64) {
        self.frames.update(frame_id, |r| {
            r.world = Some((loader_id.to_string(), context_id));
        });
    }

    /// Forget a world the browser says is gone.
    pub fn drop_world(&mut self, context_id: i64) {
        self.frames.update_all(|r| r.forget_world(context_id));
    }

    /// Every frame of the tab known or only attached.
    pub(super) fn known_frames(&self) -> impl Iterator<Item = &String> {
        self.frames
            .0
            .iter()
            .filter(|(_, r)| r.known())
            .map(|(f, _)| f)
    }

    /// The parent of `frame`, as far as known.
    pub(super) fn parent_of(&self, frame: &str) -> Option<&String> {
        self.frames.get(frame)?.parent.as_ref()
    }

    /// Feed one event about frames, documents or execution contexts; the others are not
    /// this module's.
    pub(super) fn on_frame_event(&mut self, method: &str, params: &Value) {
        let text = |p: &str| params.pointer(p).and_then(Value::as_str);
        match method {
            "Target.attachedToTarget" | "Target.targetInfoChanged" => self.on_remote_frame(params),
            "Target.detachedFromTarget" => {
                let session = text("/sessionId");
                let gone = text("/targetId").map(str::to_string).or_else(|| {
                    self.frames
                        .0
                        .iter()
                        .find(|(_, r)| {
                            r.remote
                                .as_ref()
                                .is_some_and(|r| r.session.as_deref() == session)
                        })
                        .map(|(id, _)| id.clone())
                });
                if let Some(id) = gone {
                    self.session_ended(&id);
                }
            }
            "Page.frameNavigated" => {
                let id = text("/frame/id");
                let parent = text("/frame/parentId");
                let loader = text("/frame/loaderId");
                if let Some(id) = id {
                    self.frames.update(id, |r| {
                        r.committed(FrameFacts {
                            loader,
                            url: text("/frame/url"),
                            origin: text("/frame/securityOrigin"),
                            parent,
                        })
                    });
                }
                if let (Some(id), Some(loader)) = (id, loader) {
                    self.refs.forget_frame_documents(id, Some(loader));
                    if parent.is_none() {
                        self.set_main_frame(id.to_string());
                    }
                }
            }
            "Page.frameDetached" => {
                if let Some(id) = text("/frameId") {
                    self.frames.update(id, FrameRecord::detached);
                    self.refs.forget_frame_documents(id, None);
                }
            }
            "Page.frameAttached" => {
                if let (Some(id), Some(parent)) = (text("/frameId"), text("/parentFrameId")) {
                    self.frames.update(id, |r| r.adopt_parent(Some(parent)));
                }
            }
            "Runtime.executionContextDestroyed" => {
                if let Some(ctx) = params.get("executionContextId").and_then(Value::as_i64) {
                    self.contexts.remove(&ctx);
                    self.frames.update_all(|r| r.context_destroyed(ctx));
                }
            }
            "Runtime.executionContextsCleared" => {
                self.contexts.clear();
                self.frames.update_all(FrameRecord::contexts_cleared);
            }
            // The page's own context of a document: the origin Chrome gives it is the
            // document's security origin.
            "Runtime.executionContextCreated" => {
                let id = params.pointer("/context/id").and_then(Value::as_i64);
                let frame = text("/context/auxData/frameId");
                let default = params
                    .pointer("/context/auxData/isDefault")
                    .and_then(Value::as_bool);
                if let (Some(id), Some(frame)) = (id, frame) {
                    self.contexts.insert(id, frame.to_string());
                    if let (Some(true), Some(origin)) = (default, text("/context/origin")) {
                        self.frames
                            .update(frame, |r| r.context = Some((id, origin.to_string())));
                    }
                }
            }
            _ => {}
        }
    }

    /// An iframe target Chrome attached (or whose URL changed): its frame runs in another
    /// process.
    fn on_remote_frame(&mut self, params: &Value) {
        let Some(info) = params.get("targetInfo") else {
            return;
        };
        let text = |k: &str| info.get(k).and_then(Value::as_str);
        if text("type") != Some("iframe") {
            return;
        }
        let Some(id) = text("targetId") else {
            return;
        };
        let url = text("url").unwrap_or_default();
        let origin = url::Url::parse(url)
            .ok()
            .map(|u| u.origin())
            .filter(url::Origin::is_tuple)
            .map(|o| o.ascii_serialization());
        let session = params.get("sessionId").and_then(Value::as_str);
        self.frames.update(id, |r| {
            r.attached_remote(session, url, origin.as_deref(), text("parentFrameId"))
        });
    }

    /// Out-of-process frame `id`'s session ended: its own record and every frame reached
    /// through that session forget what was learnt through it.
    fn session_ended(&mut self, id: &str) {
        let session = self
            .frames
            .update(id, |r| r.remote.take().and_then(|r| r.session));
        if let Some(gone) = &session {
            self.sessions_seen.remove(gone);
        }
        self.frames.update(id, FrameRecord::session_ended);
        if session.is_some() {
            self.frames.update_all(|r| {
                if r.session == session {
                    r.session_ended();
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn navigated(e: &mut TabEvents, id: &str, parent: Option<&str>, loader: &str, url: &str) {
        let origin = url::Url::parse(url).unwrap().origin().ascii_serialization();
        let mut frame = json!({"id": id, "loaderId": loader, "url": url, "securityOrigin": origin});
        if let Some(p) = parent {
            frame["parentId"] = json!(p);
        }
        e.on_event("Page.frameNavigated", &json!({ "frame": frame }));
    }

    fn context(e: &mut TabEvents, id: i64, frame: &str, origin: &str) {
        e.on_event(
            "Runtime.executionContextCreated",
            &json!({"context": {"id": id, "origin": origin, "auxData": {"frameId": frame, "isDefault": true}}}),
        );
    }

    fn record<'a>(e: &'a TabEvents, id: &str) -> Option<&'a FrameRecord> {
        e.frames.get(id)
    }

    #[test]
    fn a_new_document_replaces_the_old_ones_facts_and_keeps_the_frames() {
        let mut e = TabEvents::new();
        navigated(&mut e, "M", None, "L1", "http://a.test/");
        navigated(&mut e, "C", Some("M"), "L2", "http://b.test/x");
        e.set_world("C", "L2", 40);
        assert_eq!(e.world("C"), Some(40));
        assert_eq!(e.main_frame(), Some("M"));
        // The child's next document: its URL, origin and loader are the new one's, Kapture's
        // world of the old document is not this one's, its parent stays.
        e.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "C", "parentId": "M", "loaderId": "L3", "url": "about:blank"}}),
        );
        let c = record(&e, "C").unwrap();
        assert_eq!(c.url.as_deref(), Some("about:blank"));
        assert_eq!(
            c.origin, None,
            "an origin the event does not report is unknown"
        );
        assert_eq!(c.parent.as_deref(), Some("M"));
        assert_eq!(e.frame_loader("C").as_deref(), Some("L3"));
        assert_eq!(e.world("C"), None);
        e.set_world("C", "L3", 41);
        assert_eq!(e.world("C"), Some(41));
        // A frame tree leaves an origin it does not say as it was.
        e.frame_seen("M", "L1", "http://a.test/p", None, None);
        assert_eq!(
            record(&e, "M").unwrap().origin.as_deref(),
            Some("http://a.test")
        );
        assert_eq!(e.judged("M"), ["http://a.test"]);
    }

    #[test]
    fn a_detached_frame_and_its_children_leave_nothing_behind() {
        let mut e = TabEvents::new();
        navigated(&mut e, "M", None, "L1", "http://a.test/");
        navigated(&mut e, "C", Some("M"), "L2", "http://b.test/");
        navigated(&mut e, "G", Some("C"), "L3", "http://c.test/");
        context(&mut e, 2, "C", "http://b.test");
        context(&mut e, 3, "G", "http://c.test");
        e.set_world("G", "L3", 30);
        // An out-of-process grandchild: its session, not the frame events, ends it.
        e.on_event(
            "Target.attachedToTarget",
            &json!({"sessionId": "S", "targetInfo": {"targetId": "O", "type": "iframe",
                "url": "http://o.test/", "parentFrameId": "C"}}),
        );
        assert!(e.is_within("G", "M") && e.is_within("O", "C"));
        // The browser reports every frame it detaches, children first.
        for id in ["G", "C"] {
            e.on_event("Page.frameDetached", &json!({ "frameId": id }));
        }
        for id in ["G", "C"] {
            assert_eq!(record(&e, id), None, "{id}");
            assert!(e.judged(id).is_empty(), "{id}");
        }
        assert_eq!(e.world("G"), None);
        assert!(!e.is_within("G", "M"));
        assert_eq!(e.known_frames().count(), 2, "M and O");
        assert_eq!(e.judged("O"), ["http://o.test"]);
        e.on_event(
            "Target.detachedFromTarget",
            &json!({"sessionId": "S", "targetId": "O"}),
        );
        assert_eq!(record(&e, "O"), None);
        let known: Vec<&String> = e.known_frames().collect();
        assert_eq!(known, ["M"]);
    }

    #[test]
    fn contexts_end_with_their_own_events_or_all_at_once() {
        let mut e = TabEvents::new();
        navigated(&mut e, "M", None, "L1", "http://a.test/");
        navigated(&mut e, "P", Some("M"), "L2", "about:blank");
        context(&mut e, 1, "M", "http://a.test");
        context(&mut e, 2, "P", "http://a.test");
        e.set_world("M", "L1", 10);
        e.set_world("P", "L2", 20);
        assert_eq!(e.judged("P"), ["about:blank", "http://a.test"]);
        // One context: only its own fact ends.
        e.on_event(
            "Runtime.executionContextDestroyed",
            &json!({"executionContextId": 2}),
        );
        assert_eq!(record(&e, "P").unwrap().context, None);
        assert_eq!(e.world("P"), Some(20));
        e.on_event(
            "Runtime.executionContextDestroyed",
            &json!({"executionContextId": 20}),
        );
        assert_eq!(e.world("P"), None);
        assert!(record(&e, "M").unwrap().context.is_some());
        // All of them: worlds and default contexts go, documents stay.
        e.on_event("Runtime.executionContextsCleared", &json!({}));
        assert_eq!(
            (e.world("M"), record(&e, "M").unwrap().context.clone()),
            (None, None)
        );
        assert_eq!(e.frame_loader("M").as_deref(), Some("L1"));
        assert!(e.contexts.is_empty());
        // A world a call found gone.
        e.set_world("M", "L1", 11);
        e.drop_world(11);
        assert_eq!(e.world("M"), None);
    }

    #[test]
    fn an_out_of_process_frame_lives_with_its_session() {
        let mut e = TabEvents::new();
        navigated(&mut e, "M", None, "L1", "http://a.test/");
        e.on_event(
            "Target.attachedToTarget",
            &json!({"sessionId": "S1", "targetInfo": {"targetId": "O", "type": "iframe",
                "url": "http://o.test/pay", "parentFrameId": "M"}}),
        );
        // Its old local document detaches (a swap): what it is judged on stays.
        e.on_event(
            "Page.frameDetached",
            &json!({"frameId": "O", "reason": "swap"}),
        );
        assert_eq!(e.judged("O"), ["http://o.test"]);
        let remote = e.remote_frames();
        assert_eq!(remote.len(), 1);
        assert_eq!(remote[0].1.session.as_deref(), Some("S1"));
        // Its session's tree: the frame and a child of its own, both reached through it.
        for (id, parent, loader) in [("O", "M", "LO"), ("K", "O", "LK")] {
            e.frame_seen(
                id,
                loader,
                "http://o.test/k",
                Some("http://o.test"),
                Some(parent),
            );
            e.set_frame_session(id, "S1");
        }
        e.set_world("K", "LK", 7);
        assert!(e.first_sight_of_session("S1"));
        assert!(!e.first_sight_of_session("S1"));
        assert_eq!(e.session_of("K").as_deref(), Some("S1"));
        // A URL change keeps the session.
        e.on_event(
            "Target.targetInfoChanged",
            &json!({"targetInfo": {"targetId": "O", "type": "iframe", "url": "http://o.test/done"}}),
        );
        assert_eq!(e.remote_frames()[0].1.url, "http://o.test/done");
        assert_eq!(e.remote_frames()[0].1.session.as_deref(), Some("S1"));
        // Detached by session only: everything reached through it goes.
        e.on_event("Target.detachedFromTarget", &json!({"sessionId": "S1"}));
        for id in ["O", "K"] {
            assert_eq!(record(&e, id), None, "{id}");
            assert_eq!(e.session_of(id), None);
        }
        assert!(e.remote_frames().is_empty());
        assert!(
            e.first_sight_of_session("S1"),
            "a new session is asked again"
        );
        assert!(record(&e, "M").is_some());
    }
}
