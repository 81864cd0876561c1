//! The browser-event actor: one task for the whole server that follows the bridge's events
//! — closed tabs leave their session, tabs pages open follow their opener's session and
//! are news in its next answer, approvals and the panel's and recorder's work go into the
//! journal. A lagging broadcast channel costs the events it dropped, never the actor.

use std::future::Future;
use std::sync::Arc;

use ext_core::protocol::{BrowserEvent, HostFrame};
use tokio::sync::broadcast::{self, error::RecvError};

use super::Shared;

/// Feed every event of `events` to `handle` until the channel closes; a lag is logged and
/// skipped. Answers how many events the lags dropped.
pub(super) async fn pump<F, Fut>(
    mut events: broadcast::Receiver<BrowserEvent>,
    mut handle: F,
) -> u64
where
    F: FnMut(BrowserEvent) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut dropped = 0;
    loop {
        match events.recv().await {
            Ok(event) => handle(event).await,
            Err(RecvError::Lagged(n)) => {
                dropped += n;
                tracing::warn!(dropped = n, "browser events dropped: kapture fell behind");
            }
            Err(RecvError::Closed) => return dropped,
        }
    }
}

/// The actor: what each event means to the server.
pub(super) struct EventActor {
    pub(super) shared: Arc<Shared>,
}

impl EventActor {
    /// Start following the bridge's events.
    pub(super) fn spawn(shared: Arc<Shared>) {
        let events = shared.bridge.subscribe();
        let actor = EventActor { shared };
        tokio::spawn(async move {
            let actor = &actor;
            pump(events, |event| actor.handle(event)).await;
        });
    }

    async fn handle(&self, event: BrowserEvent) {
        let shared = &self.shared;
        match event {
            BrowserEvent::TabRemoved { tab_id } => {
                shared.registry().removed(tab_id);
                shared.tabs_changed();
            }
            BrowserEvent::TabCreated {
                tab_id,
                opener_tab_id,
                url,
            } => {
                if let Some(opener) = opener_tab_id {
                    shared.registry().page_opened(tab_id, opener, &url);
                }
                shared.tabs_changed();
            }
            BrowserEvent::Approval {
                tab_id,
                method,
                origin,
                answer,
                by,
            } => shared.audit.record(shared.exit.entry(crate::audit::Entry {
                session: None,
                time: ext_core::platform::now_ms() as u64,
                // Named by whichever engine asked, at the time of the answer (a launched
                // browser may have fallen back to the native engine).
                who: by.unwrap_or_else(|| "person (approval in the browser)".into()),
                tool: method,
                args: serde_json::json!({}),
                page: Some(format!("tab {tab_id}")),
                origin: Some(origin),
                verdict: format!("ask: {answer}"),
                status: if ["once", "origin", "always"].contains(&answer.as_str()) {
                    "ok".into()
                } else {
                    "APPROVAL_DENIED".into()
                },
                ms: 0,
            })),
            BrowserEvent::RecordingSave { id, request } => {
                let data_dir = &shared.config.data_dir;
                let saved =
                    crate::scenarios::save_off_runtime(data_dir.clone(), (*request).clone()).await;
                shared.audit.record(shared.exit.entry(crate::audit::Entry {
                    session: None,
                    time: ext_core::platform::now_ms() as u64,
                    who: "person (recorder widget)".into(),
                    tool: "scenario_save".into(),
                    args: serde_json::json!({"name": request.choices.name}),
                    page: Some(format!("tab {}", request.recording.tab_id)),
                    origin: None,
                    verdict: "allow".into(),
                    status: if saved.is_ok() {
                        "ok".into()
                    } else {
                        "BAD_ARGS".into()
                    },
                    ms: 0,
                }));
                let (ok, message) = match saved {
                    Ok(s) => (
                        true,
                        format!(
                            "Saved {} ({} steps; secrets sealed: {})",
                            request.choices.name,
                            s.steps,
                            s.secrets_note()
                        ),
                    ),
                    Err(why) => (false, format!("Not saved: {why}")),
                };
                shared
                    .bridge
                    .notify(HostFrame::RecordingSaved { id, ok, message });
                if ok {
                    shared.scenarios_changed();
                }
            }
            BrowserEvent::ExtendBudget { session, steps } => {
                let Ok(id) = session.parse::<super::sessions::SessionId>() else {
                    return;
                };
                let steps = steps.clamp(1, 10_000);
                let now = shared.registry().extend_steps(id, steps);
                if let Some(now) = now {
                    shared.tell_budget(id, now, false);
                    shared.audit.record(shared.exit.entry(crate::audit::Entry {
                        session: None,
                        time: ext_core::platform::now_ms() as u64,
                        who: "person (side panel)".into(),
                        tool: "extend_budget".into(),
                        args: serde_json::json!({"session": id, "steps": steps}),
                        page: None,
                        origin: None,
                        verdict: "allow".into(),
                        status: "ok".into(),
                        ms: 0,
                    }));
                }
            }
            BrowserEvent::ScenariosWanted => {
                shared.bridge.notify(HostFrame::Scenarios {
                    list: crate::scenarios::summaries(&shared.config.data_dir),
                });
            }
            BrowserEvent::PanelRan {
                tab_id,
                method,
                params,
                status,
                ms,
            } => shared.audit.record(shared.exit.entry(crate::audit::Entry {
                session: None,
                time: ext_core::platform::now_ms() as u64,
                who: "person (Kapture panel)".into(),
                args: shared.exit.panel_args(&method, &params).into_inner(),
                tool: method,
                page: Some(format!("tab {tab_id}")),
                origin: None,
                verdict: crate::audit::verdict_of(&status).into(),
                status,
                ms,
            })),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn the_actor_keeps_going_after_the_channel_lagged() {
        let (tx, rx) = broadcast::channel(2);
        // Five events into a channel of two before the actor reads: it lags by three.
        for tab_id in 1..=5 {
            tx.send(BrowserEvent::TabRemoved { tab_id }).unwrap();
        }
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let count = Arc::new(AtomicU32::new(0));
        let (seen2, count2) = (seen.clone(), count.clone());
        let actor = tokio::spawn(pump(rx, move |event| {
            let (seen, count) = (seen2.clone(), count2.clone());
            async move {
                if let BrowserEvent::TabRemoved { tab_id } = event {
                    seen.lock().unwrap().push(tab_id);
                }
                count.fetch_add(1, Ordering::SeqCst);
            }
        }));
        // After the lag, events sent later still arrive.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while count.load(Ordering::SeqCst) < 2 {
            assert!(
                std::time::Instant::now() < deadline,
                "the kept events arrive"
            );
            tokio::task::yield_now().await;
        }
        tx.send(BrowserEvent::TabRemoved { tab_id: 6 }).unwrap();
        drop(tx);
        let dropped = tokio::time::timeout(std::time::Duration::from_secs(5), actor)
            .await
            .expect("the actor ends when the channel closes")
            .unwrap();
        assert_eq!(dropped, 3);
        assert_eq!(*seen.lock().unwrap(), vec![4, 5, 6]);
    }
}
