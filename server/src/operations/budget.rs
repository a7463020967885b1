//! Token buckets: the per-connection budgets for each kind of frame, and a game's budget for
//! its audience's reads.

use std::time::{Duration, Instant};

/// A token bucket: `rate` frames per second with a burst of `burst`.
pub struct RateLimit {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl RateLimit {
    pub fn new(rate: u32, burst: u32) -> RateLimit {
        let burst = f64::from(burst.max(rate));
        RateLimit {
            rate: f64::from(rate),
            burst,
            tokens: burst,
            last: Instant::now(),
        }
    }
    pub fn allow(&mut self) -> bool {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// How long until the next frame is allowed.
    pub fn wait(&self) -> Duration {
        Duration::from_secs_f64(((1.0 - self.tokens) / self.rate.max(f64::MIN_POSITIVE)).max(0.0))
    }
}
