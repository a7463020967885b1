//! Small helpers for reporting: percentiles, rates, RSS.

use anyhow::Context;
use procfs::process::Process;
use std::time::Duration;

/// The `p`-th percentile (0–100) of `samples`, by nearest rank; zero for no samples.
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.sort_unstable();
    let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Process `pid`, to read from `/proc` (Linux only).
fn process(pid: u32) -> anyhow::Result<Process> {
    let pid = i32::try_from(pid)?;
    Process::new(pid).with_context(|| format!("reading /proc/{pid}"))
}

/// Resident set size of process `pid`, in KiB, from `/proc/PID/status`.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    process(pid)?
        .status()?
        .vmrss
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/{pid}/status"))
}

/// CPU time (user and system) process `pid` has used, from `/proc/PID/stat`.
pub fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = process(pid)?.stat()?;
    Ok((stat.utime + stat.stime) as f64 / procfs::ticks_per_second() as f64)
}

/// CPU time every thread of process `pid` has run, in nanoseconds, from each thread's
/// `/proc/PID/task/TID/schedstat`: finer than `/proc/PID/stat`'s 10 ms ticks, which a short
/// run of a light process would read as zero. Threads that have ended are not counted; the
/// server's and the relay's live as long as they do.
pub fn cpu_nanos(pid: u32) -> anyhow::Result<u64> {
    let mut total = 0;
    for task in process(pid)?.tasks()? {
        // A thread may end between the listing and the read.
        let Ok(schedstat) = task.and_then(|task| task.schedstat()) else {
            continue;
        };
        total += schedstat.sum_exec_runtime;
    }
    Ok(total)
}

/// A small deterministic generator (SplitMix64), so a run is repeatable from its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A seed from the OS, for runs that do not name one.
pub fn fresh_seed() -> u64 {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    u64::from_le_bytes(bytes)
}

/// What went wrong in a drill, kept up to a bound: enough to diagnose, where a broken build
/// would otherwise print thousands.
#[derive(Default)]
pub struct Problems(pub Vec<String>);

impl Problems {
    const SHOWN_MAX: usize = 20;

    pub fn add(&mut self, what: String) {
        if self.0.len() < Self::SHOWN_MAX {
            self.0.push(what);
        }
    }

    /// Ends a drill: prints the problems, then fails naming where the data was kept if there
    /// were `failures`, or removes the scratch directory.
    pub fn conclude(&self, failures: u64, scratch: crate::child::Scratch) -> anyhow::Result<()> {
        for problem in &self.0 {
            println!("  problem: {problem}");
        }
        if failures > 0 {
            anyhow::bail!(
                "{failures} failures; the data is kept in {}",
                scratch.path.display()
            );
        }
        scratch.remove();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process has run and holds memory: each reading says so, through `procfs`.
    #[test]
    fn own_process_reads_nonzero() {
        let me = std::process::id();
        assert!(rss_kib(me).unwrap() > 0);
        assert!(cpu_nanos(me).unwrap() > 0);
        assert!(cpu_seconds(me).unwrap() >= 0.0);
        assert!(rss_kib(u32::MAX).is_err(), "no such process");
    }
}
