//! The server's time, which it gives the rules with every command (`protocol::rules::timing`),
//! and the timer that records a clock running out (`docs/clock.md`).
//!
//! The server is the clocks' authority: the time a command is taken at is this source's, and
//! so is the moment a running clock is found out. Tests give the server a source they move
//! themselves ([`TimeSource::manual`]), so a clock runs out without anyone waiting for it.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// Longest a timer sleeps before it looks at the time again: 1 hour. A correspondence clock
/// may have days left; the system's clock may be set meanwhile, so the timer wakes now and
/// then to measure again rather than trust one long sleep.
pub const TIMER_SLEEP_MAX: Duration = Duration::from_secs(3600);

/// Where the server's time comes from: the system's clock, or one a test sets.
#[derive(Clone)]
pub struct TimeSource(Arc<Source>);

enum Source {
    System,
    Manual(watch::Sender<u64>),
}

impl Default for TimeSource {
    fn default() -> TimeSource {
        TimeSource::system()
    }
}

impl std::fmt::Debug for TimeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.0 {
            Source::System => f.write_str("TimeSource::System"),
            Source::Manual(now) => write!(f, "TimeSource::Manual({})", *now.borrow()),
        }
    }
}

impl TimeSource {
    pub fn system() -> TimeSource {
        TimeSource(Arc::new(Source::System))
    }

    /// A time that stands still at `now` (milliseconds since the Unix epoch) until
    /// [`TimeSource::advance`] moves it: for tests.
    pub fn manual(now: u64) -> TimeSource {
        TimeSource(Arc::new(Source::Manual(watch::channel(now).0)))
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        match &*self.0 {
            Source::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            Source::Manual(now) => *now.borrow(),
        }
    }

    /// Moves a manual time on by `by`, waking every timer waiting on it. The system's clock
    /// is not the server's to move: there it does nothing.
    pub fn advance(&self, by: Duration) {
        if let Source::Manual(now) = &*self.0 {
            let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
            now.send_modify(|t| *t = t.saturating_add(by));
        }
    }

    /// Returns once the time is `deadline` (milliseconds since the Unix epoch) or later.
    pub async fn wait_until(&self, deadline: u64) {
        match &*self.0 {
            Source::System => loop {
                let now = self.now_ms();
                if now >= deadline {
                    return;
                }
                let left = Duration::from_millis(deadline - now).min(TIMER_SLEEP_MAX);
                tokio::time::sleep(left).await;
            },
            Source::Manual(now) => {
                let mut moved = now.subscribe();
                // The sender lives as long as this source, so `changed` ends only when the
                // time moves.
                while *moved.borrow_and_update() < deadline {
                    if moved.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
            }
        }
    }
}

/// Returns at `deadline`, or never without one: the game task's timer branch.
pub async fn wait_for(time: &TimeSource, deadline: Option<u64>) {
    match deadline {
        Some(deadline) => time.wait_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// When the game's running clock runs out, if nothing is handed over before: the moment the
/// game task's timer is armed for. `None` without a clock, once a clock has run out (the
/// opponent claims or gives time), and once the game is over.
pub fn deadline(game: &protocol::Game) -> Option<u64> {
    game.timing.as_deref()?.deadline()
}

/// A live clock is low below this much time left: 5 minutes, or the operator's threshold for
/// notices (`--notify-clock-low-h`) if that is less. A correspondence clock is low below the
/// operator's threshold alone (24 hours unless set).
pub const CLOCK_LOW_LIVE: Duration = Duration::from_secs(5 * 60);

/// Below how much time left `control`'s clock is low, given the operator's threshold.
pub fn low_below(
    control: &protocol::board::time_control::TimeControl,
    operator: Duration,
) -> Duration {
    match control {
        protocol::board::time_control::TimeControl::Live { .. } => operator.min(CLOCK_LOW_LIVE),
        protocol::board::time_control::TimeControl::Correspondence { .. } => operator,
    }
}

/// When the running clock's time left (vacation included) falls below its low mark
/// ([`low_below`]): the side, that moment, and the clock's deadline (the same until the
/// clock is handed over or given time). `None` when no clock runs.
pub fn low_at(game: &protocol::Game, operator: Duration) -> Option<(protocol::Side, u64, u64)> {
    let timing = game.timing.as_deref()?;
    let side = timing.running?;
    let deadline = timing.deadline()?;
    let below = u64::try_from(low_below(&timing.control, operator).as_millis()).unwrap_or(u64::MAX);
    Some((side, deadline.saturating_sub(below), deadline))
}

/// The clocks as the game's viewers are told them, at `now`: both sides' (and spectators')
/// alike, since the clocks change only at moments everyone sees.
pub fn view(game: &protocol::Game, now: u64) -> Option<protocol::game::timing::ClockView> {
    Some(game.timing.as_deref()?.view(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_time_wakes_its_timers_when_moved_past_their_deadline() {
        let time = TimeSource::manual(1_000);
        let waiting = tokio::spawn({
            let time = time.clone();
            async move { time.wait_until(61_000).await }
        });
        time.advance(Duration::from_secs(30));
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "30 s of 60 have passed");
        time.advance(Duration::from_secs(30));
        waiting.await.unwrap();
        assert_eq!(time.now_ms(), 61_000);
    }

    #[test]
    fn the_system_time_is_after_2020() {
        assert!(TimeSource::system().now_ms() > 1_577_836_800_000);
    }
}
