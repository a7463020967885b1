//! Logging that never takes the server down. Log lines go to stderr through a writer that
//! reports every line as written: a line the system refuses (a full disk, a closed pipe, a
//! terminal gone) is dropped and counted in `asl_log_lines_dropped_total`, and the task that
//! logged it carries on. Logging is the one thing a failing disk must not be able to turn
//! into a game task dying between storing a command and answering it.

use crate::metrics::METRICS;
use std::io::{self, Write};
use tracing_subscriber::EnvFilter;

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

/// Installs the server's log subscriber: `RUST_LOG` or `info`, to stderr, never failing.
pub fn init() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(|| Dropping(io::stderr()))
        .try_init();
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

    #[test]
    fn a_line_that_cannot_be_written_is_counted_not_raised() {
        let before = METRICS.log_lines_dropped.get();
        let mut w = Dropping(Full);
        assert_eq!(w.write(b"a line\n").unwrap(), 7);
        assert!(w.flush().is_ok());
        assert!(METRICS.log_lines_dropped.get() > before);
    }
}
