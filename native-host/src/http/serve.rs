//! `--http`'s connections, served with limits: how many at once (one over the cap is
//! closed unread) and how long a connection may take to send a request's headers or sit
//! idle between requests (hyper's header-read timeout, which runs whenever the connection
//! waits for a request). So a flood of stalled sockets holds a bounded number of file
//! descriptors for a bounded time, and real clients get through again.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The connection limits (`--http-max-connections`, `--http-header-secs`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
}

/// After a failed accept (out of descriptors, most likely): a pause rather than a spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Accept on every listener until `shutdown`, then wait until every connection has ended.
pub async fn run(
    listeners: Vec<TcpListener>,
    router: axum::Router,
    limits: Limits,
    shutdown: CancellationToken,
) {
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let slots = Arc::new(Semaphore::new(max));
    let loops = listeners.into_iter().map(|listener| {
        accept(
            listener,
            router.clone(),
            slots.clone(),
            limits,
            shutdown.clone(),
        )
    });
    futures::future::join_all(loops).await;
    // Each connection holds a slot until it ends: every slot back is every connection gone.
    let _ = slots.acquire_many(max as u32).await;
}

async fn accept(
    listener: TcpListener,
    router: axum::Router,
    slots: Arc<Semaphore>,
    limits: Limits,
    shutdown: CancellationToken,
) {
    // Said once per stretch at the cap, not once per refused socket of a flood.
    let mut full_said = false;
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!("accepting an HTTP connection failed: {e}");
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                }
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !full_said {
                tracing::warn!(
                    %peer,
                    max = limits.max_connections,
                    "HTTP connections over the limit (--http-max-connections) are closed unread"
                );
                full_said = true;
            }
            drop(stream);
            continue;
        };
        full_said = false;
        // Without TCP_NODELAY an answer's last small write waits for the client's delayed
        // ACK: ~40 ms on every call.
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(
            stream,
            router.clone(),
            limits.header_timeout,
            shutdown.clone(),
            slot,
        ));
    }
}

async fn connection(
    stream: TcpStream,
    router: axum::Router,
    header_timeout: Duration,
    shutdown: CancellationToken,
    _slot: OwnedSemaphorePermit,
) {
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
    let mut conn = std::pin::pin!(conn);
    let ended = tokio::select! {
        ended = conn.as_mut() => ended,
        () = shutdown.cancelled() => {
            // Finish the answer being written, take no further request.
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = ended {
        tracing::debug!("HTTP connection ended: {e}");
    }
}
