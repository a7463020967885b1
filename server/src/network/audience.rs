//! The audience's threads: every connection that has joined a game as a spectator is served
//! on a runtime of its own, on threads that the kernel schedules below the players'.
//!
//! Why: a move watched by hundreds is hundreds of socket writes. On the players' runtime those
//! writes are tasks in the same queue as the players' next command, which then waits for all
//! of them (issue 21 measured a watched player's round trip at 9× the unwatched one with the
//! server on one core). Here the players' runtime hands each spectator's frame to a channel
//! and goes on; the writes run on these threads whenever the players' threads do not need the
//! CPU, and the kernel preempts them the moment a player's frame arrives. Spectators still get
//! every frame in order; under a load that saturates the machine they fall behind first, and
//! the usual slow-reader rule (`outbound_queue_max`, `slow_reader_grace`) applies to them.
//!
//! A spectator's socket stays registered with the players' runtime's I/O driver (tokio polls
//! a resource from any runtime while the one it was registered with runs); only the work of
//! serving it moves here.

use std::future::Future;
use std::thread;
use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;
use tracing::warn;

/// How much lower than the players' threads the audience's threads are scheduled (a nice
/// value, added to the server's own). At +10 the kernel gives the players' threads about nine
/// tenths of a contended core and preempts the audience when a player's frame arrives; the
/// audience still gets a tenth, so a saturated server slows spectators rather than freezing
/// them.
pub const AUDIENCE_NICE: i32 = 10;

/// The audience's runtime, running until this is dropped.
pub struct Audience {
    runtime: Option<Runtime>,
}

impl Audience {
    /// Starts one thread per core the server may use, `nice` below the caller's priority
    /// (best effort: where the kernel refuses, the threads run at the caller's priority and a
    /// warning says so). As many as the players' runtime has, so that a move to thousands of
    /// spectators is written by every core that is otherwise idle.
    pub fn start(nice: i32) -> std::io::Result<Audience> {
        let threads = thread::available_parallelism().map_or(1, |n| n.get());
        let runtime = Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("audience")
            .on_thread_start(move || lower_priority(nice))
            .enable_all()
            .build()?;
        Ok(Audience {
            runtime: Some(runtime),
        })
    }

    /// A handle to spawn on; spawning after the audience stopped gives a task that is
    /// cancelled at once.
    pub fn handle(&self) -> Handle {
        self.runtime
            .as_ref()
            .expect("running until dropped")
            .handle()
            .clone()
    }
}

impl Drop for Audience {
    /// Stops the threads without waiting for them (this may run inside the players'
    /// runtime); the connections they still serve are dropped.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Runs `work` on the audience's runtime and waits for it; if this wait is dropped (its task
/// aborted), the work is aborted too.
pub async fn serve_on<F>(audience: &Handle, work: F) -> Option<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    struct AbortOnDrop<T>(JoinHandle<T>);
    impl<T> Drop for AbortOnDrop<T> {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let mut task = AbortOnDrop(audience.spawn(work));
    (&mut task.0).await.ok()
}

/// Lowers the calling thread's scheduling priority by `nice` (Linux schedules threads, so
/// this reaches only the calling thread).
fn lower_priority(nice: i32) {
    #[cfg(target_os = "linux")]
    {
        let (tid, now) = this_thread_priority();
        let wanted = (now + nice).min(19);
        // SAFETY: as above.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, wanted) } != 0 {
            warn!(
                error = %std::io::Error::last_os_error(),
                "the audience's thread could not be scheduled below the players'"
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// The calling thread's id and nice value.
#[cfg(target_os = "linux")]
fn this_thread_priority() -> (libc::id_t, i32) {
    // SAFETY: plain system calls on this thread's own id; no memory is shared.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        (tid, libc::getpriority(libc::PRIO_PROCESS, tid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_the_audience_thread_and_stops_with_it() {
        let audience = Audience::start(AUDIENCE_NICE).unwrap();
        let handle = audience.handle();
        let players = Builder::new_current_thread().enable_all().build().unwrap();
        let name = players.block_on(serve_on(&handle, async {
            thread::current().name().map(str::to_string)
        }));
        assert_eq!(name, Some(Some("audience".to_string())));
        drop(audience);
        // Once stopped, work given to it never runs and the caller is not left waiting.
        let after = players.block_on(async {
            tokio::time::timeout(
                std::time::Duration::from_secs(30),
                serve_on(&handle, async { 1 }),
            )
            .await
        });
        assert!(matches!(after, Ok(None)), "{after:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_audience_thread_is_scheduled_below_its_starter() {
        let audience = Audience::start(AUDIENCE_NICE).unwrap();
        let players = Builder::new_current_thread().build().unwrap();
        let (_, mine) = this_thread_priority();
        let (_, theirs) = players
            .block_on(serve_on(&audience.handle(), async {
                this_thread_priority()
            }))
            .unwrap();
        assert_eq!(theirs, (mine + AUDIENCE_NICE).min(19));
    }
}
