//! Logging that never takes the server down, nor holds it up. A task that logs only hands
//! its line to a bounded queue; one thread of its own writes the queue to stderr
//! (`tracing-appender`'s non-blocking writer, lossy). A line the queue has no room for (stderr
//! is a pipe nobody reads, a terminal that is paused) is dropped, and a line the system
//! refuses (a full disk, a closed pipe) is dropped too: both are counted in
//! `asl_log_lines_dropped_total`, and the task that logged carries on at once. Logging is the
//! one thing a failing or stalled disk must not be able to turn into a game task dying, or
//! waiting, between storing a command and answering it.

use crate::operations::metrics::METRICS;
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

/// Log lines waiting for the writer thread. A line is a few hundred bytes, so this holds about
/// a megabyte: seconds of the busiest logging a server does at `debug`, to ride out a slow
/// terminal; past it lines are dropped rather than anyone waiting.
pub const LOG_QUEUE_LINES_MAX: usize = 4_096;

/// A writer over `inner` that never fails: what cannot be written is counted and dropped.
pub struct Dropping<W>(pub W);

impl<W: Write> Write for Dropping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.0.write_all(buf).is_err() {
            METRICS.log_lines_dropped.inc();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

/// The non-blocking writer, lossy, whose dropped lines go into `asl_log_lines_dropped_total`:
/// the formatter writes each event's line in one call, which either queues it or drops it.
#[derive(Clone)]
pub struct Queued {
    writer: NonBlocking,
    /// The writer's count of dropped lines already added to the metric.
    counted: Arc<AtomicUsize>,
}

impl Queued {
    /// Starts the writer thread over `out`, with room for `lines` lines. Dropping the guard
    /// writes out what is queued, waiting at most a second (`tracing-appender`'s own bound),
    /// and ends the thread.
    pub fn start<W: Write + Send + 'static>(out: W, lines: usize) -> (Queued, WorkerGuard) {
        let (writer, guard) = NonBlockingBuilder::default()
            .lossy(true)
            .buffered_lines_limit(lines)
            .thread_name("log-writer")
            .finish(Dropping(out));
        let queued = Queued {
            writer,
            counted: Arc::new(AtomicUsize::new(0)),
        };
        (queued, guard)
    }

    /// Adds the lines dropped since the last look to the metric.
    fn count_dropped(&self) {
        let dropped = self.writer.error_counter().dropped_lines();
        let counted = self.counted.fetch_max(dropped, Ordering::Relaxed);
        if dropped > counted {
            METRICS.log_lines_dropped.inc_by((dropped - counted) as u64);
        }
    }
}

impl Write for Queued {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.writer.write(buf);
        self.count_dropped();
        written
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl<'a> MakeWriter<'a> for Queued {
    type Writer = Queued;

    fn make_writer(&'a self) -> Queued {
        self.clone()
    }
}

/// The writer thread's guard, for [`flush`].
static GUARD: Mutex<Option<WorkerGuard>> = Mutex::new(None);

/// Installs the server's log subscriber: `RUST_LOG` or `info`, to stderr through the queue,
/// never failing and never waiting.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (queue, guard) = Queued::start(io::stderr(), LOG_QUEUE_LINES_MAX);
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(queue)
        .try_init();
    if installed.is_ok() {
        *GUARD.lock().unwrap_or_else(|e| e.into_inner()) = Some(guard);
    }
}

/// Writes out what is queued, waiting at most a second: for the last lines before the process
/// exits. A stalled stderr does not hold the exit up. Lines logged after it are dropped.
pub fn flush() {
    let guard = GUARD.lock().unwrap_or_else(|e| e.into_inner()).take();
    drop(guard);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(28)) // ENOSPC
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from_raw_os_error(28))
        }
    }

    /// A writer that does not return until released (a pipe nobody reads), keeping what it
    /// wrote.
    struct Stalled {
        release: Arc<AtomicBool>,
        written: Arc<Mutex<Vec<u8>>>,
    }
    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            while !self.release.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.written.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stalled_output_drops_lines_instead_of_holding_the_logger() {
        let release = Arc::new(AtomicBool::new(false));
        let written = Arc::new(Mutex::new(Vec::new()));
        let stalled = Stalled {
            release: release.clone(),
            written: written.clone(),
        };
        let (queue, guard) = Queued::start(stalled, 4);
        let before = METRICS.log_lines_dropped.get();
        // The writer thread takes at most one line and stalls on it; four wait; the rest are
        // dropped, and every call returns.
        for i in 0..20 {
            let mut line = queue.make_writer();
            line.write_all(format!("line {i}\n").as_bytes()).unwrap();
        }
        assert!(METRICS.log_lines_dropped.get() >= before + 15);
        // Released, it writes what it kept, and the guard waits for it.
        release.store(true, Ordering::Relaxed);
        drop(guard);
        let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
        let kept = text.lines().count();
        assert!((4..=5).contains(&kept), "{text}");
        assert!(text.starts_with("line 0\n"), "{text}");
    }

    #[test]
    fn a_line_that_cannot_be_written_is_counted_not_raised() {
        let before = METRICS.log_lines_dropped.get();
        let mut w = Dropping(Full);
        assert_eq!(w.write(b"a line\n").unwrap(), 7);
        assert!(w.flush().is_ok());
        assert!(METRICS.log_lines_dropped.get() > before);
    }
}
