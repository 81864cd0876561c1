//! Reconnect timing: exponential backoff with a cap and jitter, so that many extensions (or
//! one extension after a server restart) never retry in a tight or synchronised loop.

use std::time::Duration;

/// Exponential backoff state.
#[derive(Debug, Clone)]
pub struct Backoff {
    attempt: u32,
    base_ms: u64,
    cap_ms: u64,
}

impl Backoff {
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            attempt: 0,
            base_ms: base.as_millis() as u64,
            cap_ms: cap.as_millis() as u64,
        }
    }

    /// The next delay; `jitter` in `[0, 1)` (from a random source) spreads it by ±25%.
    pub fn next_delay(&mut self, jitter: f64) -> Duration {
        let exp = self.base_ms.saturating_mul(1u64 << self.attempt.min(20));
        let capped = exp.min(self.cap_ms) as f64;
        self.attempt = self.attempt.saturating_add(1);
        let spread = 0.75 + 0.5 * jitter.clamp(0.0, 1.0);
        Duration::from_millis((capped * spread) as u64)
    }

    /// Has the delay reached its cap?
    pub fn saturated(&self) -> bool {
        self.base_ms.saturating_mul(1u64 << self.attempt.min(20)) >= self.cap_ms
    }

    /// Start over after a success.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_is_capped_jittered_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
        let delays: Vec<u64> = (0..8)
            .map(|_| b.next_delay(0.5).as_millis() as u64)
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1600, 2000, 2000, 2000]);
        assert!(b.saturated());
        assert_eq!(b.next_delay(0.0).as_millis(), 1500);
        assert_eq!(b.next_delay(1.0).as_millis(), 2500);
        b.reset();
        assert_eq!(b.next_delay(0.5).as_millis(), 100);
        assert!(!b.saturated());
    }
}
