//! Progress of long calls: a client that sends `_meta.progressToken` hears how its call
//! goes as `notifications/progress` — each action a replay sends, and a heartbeat while
//! the browser works (a wait, a load) — from one reporter task per call, so the values it
//! sends always increase, as MCP asks.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::ProgressToken;
use rmcp::service::{Peer, RequestContext};
use rmcp::RoleServer;

/// How often a call that is still running says so.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// What the running call reports; steps come from any code under [`scope`].
#[derive(Default)]
struct Steps {
    done: AtomicU64,
    /// The call has its answer: the reporter sends what is left and ends.
    finished: std::sync::atomic::AtomicBool,
    wake: tokio::sync::Notify,
}

tokio::task_local! {
    static STEPS: Arc<Steps>;
}

/// The client's token for this call, if it asked for progress.
pub fn token_of(context: &RequestContext<RoleServer>) -> Option<ProgressToken> {
    context.meta.get_progress_token()
}

/// Run `work` (the call of `tool`), telling the client of `peer` how it goes when it gave
/// a `token` (through `exit`): the reporter stops when the work ends, whatever its outcome.
pub async fn scope<F: Future>(
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    exit: crate::egress::Exit,
    tool: &str,
    work: F,
) -> F::Output {
    let Some(token) = token else {
        return work.await;
    };
    let steps = Arc::new(Steps::default());
    let reporter = report(peer, token, exit, tool.to_string(), steps.clone());
    tokio::pin!(reporter);
    let work = STEPS.scope(steps.clone(), work);
    tokio::pin!(work);
    let done = tokio::select! {
        done = &mut work => done,
        () = &mut reporter => unreachable!("the reporter ends only when told"),
    };
    // The steps not yet said go out before the answer does.
    steps.finished.store(true, Ordering::SeqCst);
    steps.wake.notify_one();
    reporter.await;
    done
}

/// A step of the running call (one replayed action): said to the client at once, if it
/// asked for progress. Outside a call that did, nothing happens.
pub fn step() {
    let _ = STEPS.try_with(|s| {
        s.done.fetch_add(1, Ordering::SeqCst);
        s.wake.notify_one();
    });
}

/// Send steps as they come and a heartbeat in between, values strictly increasing: a step
/// is the next whole number, a heartbeat a little more than the last value sent. Ends once
/// the call is finished and every step was said (or when dropped, with a cancelled call).
async fn report(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    exit: crate::egress::Exit,
    tool: String,
    steps: Arc<Steps>,
) {
    let started = Instant::now();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sent = 0.0_f64;
    let mut sent_steps = 0;
    loop {
        let notes: Vec<(f64, String)> = tokio::select! {
            () = steps.wake.notified() => {
                let done = steps.done.load(Ordering::SeqCst);
                let finished = steps.finished.load(Ordering::SeqCst);
                if done == sent_steps && finished {
                    return;
                }
                if finished {
                    // Woken once more after these, to end.
                    steps.wake.notify_one();
                }
                // Steps that came while the last notice went out are each said.
                let from = sent_steps + 1;
                sent_steps = done;
                (from..=done)
                    .map(|n| {
                        sent = sent.floor() + 1.0;
                        (sent, format!("{tool}: action {n} sent"))
                    })
                    .collect()
            }
            _ = ticks.tick() => {
                sent += 0.001;
                vec![(sent, format!("{tool}: still running after {} s", started.elapsed().as_secs()))]
            }
        };
        for (value, message) in notes {
            exit.progress(&peer, token.clone(), value, &message).await;
        }
    }
}
