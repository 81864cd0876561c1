//! Time for both targets: timers from the browser on wasm32, from `futures-timer` natively,
//! so the CDP logic and the router run unchanged under `cargo test`.

use std::future::Future;
use std::time::Duration;

use futures::future::{select, Either};

/// Wait for `duration`.
pub async fn sleep(duration: Duration) {
    #[cfg(target_arch = "wasm32")]
    gloo_timers::future::sleep(duration).await;
    #[cfg(not(target_arch = "wasm32"))]
    futures_timer::Delay::new(duration).await;
}

/// Run `fut` for at most `limit`; `None` when the limit came first (the future is dropped).
pub async fn timeout<F: Future>(limit: Duration, fut: F) -> Option<F::Output> {
    let fut = std::pin::pin!(fut);
    let timer = std::pin::pin!(sleep(limit));
    match select(fut, timer).await {
        Either::Left((out, _)) => Some(out),
        Either::Right(((), _)) => None,
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_lets_fast_futures_through_and_cuts_slow_ones() {
        futures::executor::block_on(async {
            assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Some(7));
            let slow = sleep(Duration::from_secs(30));
            assert_eq!(timeout(Duration::from_millis(10), slow).await, None);
        });
    }
}
