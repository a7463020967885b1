//! Logging that never takes the server down, nor holds it up. A task that logs only hands
//! its line to a bounded queue; one thread of its own writes the queue to stderr. A line the
//! queue has no room for (stderr is a pipe nobody reads, a terminal that is paused) is
//! dropped, and a line the system refuses (a full disk, a closed pipe) is dropped too: both
//! are counted in `asl_log_lines_dropped_total`, and the task that logged carries on at once.
//! Logging is the one thing a failing or stalled disk must not be able to turn into a game
//! task dying, or waiting, between storing a command and answering it.

use crate::operations::metrics::METRICS;
use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

/// Log lines waiting for the writer thread. A line is a few hundred bytes, so this holds about
/// a megabyte: seconds of the busiest logging a server does at `debug`, to ride out a slow
/// terminal; past it lines are dropped rather than anyone waiting.
pub const LOG_QUEUE_LINES_MAX: usize = 4_096;

/// How long [`flush`] waits at exit for queued lines to be written.
pub const LOG_FLUSH_WAIT: Duration = Duration::from_secs(1);

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

/// A queue of lines and the thread that writes them to `out`: whoever logs never waits.
#[derive(Clone)]
pub struct Queued {
    lines: SyncSender<Vec<u8>>,
    /// Lines handed over and not yet written, for [`Queued::flush_within`].
    pending: Arc<AtomicUsize>,
}

impl Queued {
    /// Starts the writer thread over `out`, with room for `lines` lines.
    pub fn start<W: Write + Send + 'static>(out: W, lines: usize) -> io::Result<Queued> {
        let (sender, queue) = mpsc::sync_channel::<Vec<u8>>(lines);
        let pending = Arc::new(AtomicUsize::new(0));
        let written = pending.clone();
        std::thread::Builder::new()
            .name("log-writer".into())
            .spawn(move || {
                let mut out = Dropping(out);
                for line in queue {
                    let _ = out.write(&line);
                    written.fetch_sub(1, Ordering::Relaxed);
                }
                let _ = out.flush();
            })?;
        Ok(Queued {
            lines: sender,
            pending,
        })
    }

    /// Queues one line, or drops and counts it if the queue is full.
    fn push(&self, line: Vec<u8>) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            self.lines.try_send(line)
        {
            self.pending.fetch_sub(1, Ordering::Relaxed);
            METRICS.log_lines_dropped.inc();
        }
    }

    /// Waits up to `wait` for the queued lines to be written; whether they were.
    pub fn flush_within(&self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while self.pending.load(Ordering::Relaxed) > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }
}

/// One event's line, gathered as the formatter writes it and queued whole when it is done.
pub struct Line {
    queue: Queued,
    bytes: Vec<u8>,
}

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if !self.bytes.is_empty() {
            self.queue.push(std::mem::take(&mut self.bytes));
        }
    }
}

impl<'a> MakeWriter<'a> for Queued {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line {
            queue: self.clone(),
            bytes: Vec::with_capacity(256),
        }
    }
}

/// The queue `init` installed, for [`flush`].
static QUEUE: OnceLock<Queued> = OnceLock::new();

/// Installs the server's log subscriber: `RUST_LOG` or `info`, to stderr through the queue,
/// never failing and never waiting. Without a thread for the queue, lines go straight to
/// stderr, still never failing.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match Queued::start(io::stderr(), LOG_QUEUE_LINES_MAX) {
        Ok(queue) => builder
            .with_writer(QUEUE.get_or_init(|| queue).clone())
            .try_init(),
        Err(_) => builder.with_writer(|| Dropping(io::stderr())).try_init(),
    };
}

/// Writes out what is queued, waiting at most [`LOG_FLUSH_WAIT`]: for the last lines before
/// the process exits. A stalled stderr does not hold the exit up.
pub fn flush() {
    if let Some(queue) = QUEUE.get() {
        queue.flush_within(LOG_FLUSH_WAIT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(28)) // ENOSPC
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from_raw_os_error(28))
        }
    }

    /// A writer that does not return until released: a pipe nobody reads.
    struct Stalled(Arc<std::sync::atomic::AtomicBool>);
    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            while !self.0.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stalled_output_drops_lines_instead_of_holding_the_logger() {
        let release = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let queue = Queued::start(Stalled(release.clone()), 4).unwrap();
        let before = METRICS.log_lines_dropped.get();
        // The writer thread takes one line and stalls on it; four wait; the rest are dropped,
        // and every call returns.
        for i in 0..20 {
            let mut line = queue.make_writer();
            writeln!(line, "line {i}").unwrap();
        }
        assert!(METRICS.log_lines_dropped.get() >= before + 15);
        assert!(!queue.flush_within(Duration::from_millis(10)));
        // Released, it writes what it kept.
        release.store(true, Ordering::Relaxed);
        assert!(queue.flush_within(Duration::from_secs(60)));
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
