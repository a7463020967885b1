//! The server under test as a child process: the real `asl-server` binary on a loopback port,
//! so benchmarks and the crash drill measure what an operator runs, and SIGKILL is a real one.

use anyhow::{anyhow, bail, Context};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a started server may take to accept connections before the run gives up.
pub const START_WAIT_MAX: Duration = Duration::from_secs(20);

/// Limits the server is started with, raised where the defaults would throttle the load
/// generator itself rather than measure the server: its one connection per seat sends commands
/// as fast as the server answers.
const COMMANDS_PER_SECOND_UNTHROTTLED: u32 = 1_000_000;

pub struct ServerProcess {
    child: Child,
    pub addr: SocketAddr,
}

/// The `asl-server` binary: `explicit` if given, else the one built beside this binary.
pub fn server_binary(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    let me = std::env::current_exe().context("locating asl-load")?;
    let beside = me.with_file_name("asl-server");
    if beside.exists() {
        Ok(beside)
    } else {
        bail!(
            "no asl-server beside {}; build it (`cargo build --release -p asl-server`) or pass --server-bin",
            me.display()
        )
    }
}

/// How many times a server is started on a fresh port when it exits at start: a port picked
/// free can be taken by another socket before the server binds it.
const START_ATTEMPTS: usize = 3;

/// A free loopback port: bound, read, released. Another process could take it in between;
/// the server then exits at start, and [`ServerProcess::launch`] tries a new port.
fn free_port() -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?)
}

/// The CPUs the server under test is pinned to (`taskset -c`), when `--server-cpus` is given:
/// so the server and the load generator (pinned by whoever starts it) do not share a core.
pub static SERVER_CPUS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The metrics token the load tool's servers are started with, and its scrapes send.
pub const LOAD_METRICS_TOKEN: &str = "asl-load-metrics";

/// The admin token load runs start the server with and create games with: creating games
/// without one is limited per address and hour, and every load client is on one address.
pub const LOAD_ADMIN_TOKEN: &str = "asl-load";

/// The per-address connection cap for a load run, where every client is on loopback.
const CONNECTIONS_PER_IP_UNLIMITED: usize = 1_000_000;

/// Why a server did not come up.
enum Start {
    /// It exited before it listened.
    Exited(std::process::ExitStatus),
    /// Anything else, in words.
    Failed(String),
}

impl std::fmt::Display for Start {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Start::Exited(status) => write!(
                f,
                "asl-server exited at start ({status}), on {START_ATTEMPTS} ports in turn; see its log beside the data dir"
            ),
            Start::Failed(why) => f.write_str(why),
        }
    }
}

impl ServerProcess {
    /// Starts `binary` on a fresh loopback port with its log in `data_dir`, and returns once
    /// it accepts connections. Its own log goes to `data_dir/../server.log` (appended).
    pub fn start(binary: &Path, data_dir: &Path) -> anyhow::Result<ServerProcess> {
        ServerProcess::start_limited(binary, data_dir, Some(CONNECTIONS_PER_IP_UNLIMITED))
    }

    /// [`ServerProcess::start`] with the server's own per-address connection cap, for runs
    /// whose clients come from many loopback addresses (the hostile soak).
    pub fn start_with_default_limits(
        binary: &Path,
        data_dir: &Path,
    ) -> anyhow::Result<ServerProcess> {
        ServerProcess::start_limited(binary, data_dir, None)
    }

    /// [`ServerProcess::start`] with further flags of the operator's (`--loaded-games-max`,
    /// the notifier's), for drills that measure a server set up for their load.
    pub fn start_with(
        binary: &Path,
        data_dir: &Path,
        flags: &[&str],
    ) -> anyhow::Result<ServerProcess> {
        ServerProcess::start_flagged(binary, data_dir, Some(CONNECTIONS_PER_IP_UNLIMITED), flags)
    }

    fn start_limited(
        binary: &Path,
        data_dir: &Path,
        per_ip: Option<usize>,
    ) -> anyhow::Result<ServerProcess> {
        ServerProcess::start_flagged(binary, data_dir, per_ip, &[])
    }

    fn start_flagged(
        binary: &Path,
        data_dir: &Path,
        per_ip: Option<usize>,
        flags: &[&str],
    ) -> anyhow::Result<ServerProcess> {
        let log_path = data_dir.with_extension("server.log");
        ServerProcess::launch(|| {
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
                .with_context(|| format!("opening {}", log_path.display()))?;
            let mut command = match SERVER_CPUS.get() {
                Some(cpus) => {
                    let mut pinned = Command::new("taskset");
                    pinned.arg("-c").arg(cpus).arg(binary);
                    pinned
                }
                None => Command::new(binary),
            };
            command
                .arg("--data-dir")
                .arg(data_dir)
                .arg("--commands-per-second-max")
                .arg(COMMANDS_PER_SECOND_UNTHROTTLED.to_string())
                // The operator's metrics (the soak reads its refusals there).
                .arg("--metrics-token")
                .arg(LOAD_METRICS_TOKEN)
                // At its default log level, as an operator runs it (nothing is logged per
                // command there), whatever this shell's `RUST_LOG` says.
                .env_remove("RUST_LOG")
                .args(flags)
                .stderr(log);
            // Most load clients come from one loopback address: thousands of connections.
            if let Some(per_ip) = per_ip {
                command
                    .arg("--connections-per-ip-max")
                    .arg(per_ip.to_string())
                    .arg("--admin-token")
                    .arg(LOAD_ADMIN_TOKEN);
            }
            Ok(command)
        })
    }

    /// Starts the bare broadcast baseline (this binary's `baseline-server`) on a fresh port.
    pub fn baseline() -> anyhow::Result<ServerProcess> {
        ServerProcess::own("baseline-server", &[])
    }

    /// Starts the bare relay (this binary's `relay-server`) on a fresh port.
    pub fn relay() -> anyhow::Result<ServerProcess> {
        ServerProcess::own("relay-server", &[])
    }

    /// Starts the webhook receiver (this binary's `webhook-sink`) on a fresh port.
    pub fn webhook_sink() -> anyhow::Result<ServerProcess> {
        ServerProcess::own("webhook-sink", &[])
    }

    /// Starts the durable relay (`relay-server --durable DIR`), the floor of a durable
    /// referee, on a fresh port with its store in `dir`.
    ///
    /// `via`, when given, is the program started in this binary's place with the same
    /// arguments (`bench/callgrind/run.sh --floor` runs the floor under callgrind through a
    /// wrapper that way).
    pub fn durable_relay(dir: &Path, via: Option<&Path>) -> anyhow::Result<ServerProcess> {
        let args = ["--durable".as_ref(), dir.as_os_str()];
        match via {
            Some(program) => ServerProcess::own_via(program, "relay-server", &args),
            None => ServerProcess::own("relay-server", &args),
        }
    }

    /// Starts one of this binary's own hidden server subcommands on a fresh port.
    fn own(subcommand: &str, args: &[&std::ffi::OsStr]) -> anyhow::Result<ServerProcess> {
        let me = std::env::current_exe().context("locating asl-load")?;
        ServerProcess::own_via(&me, subcommand, args)
    }

    /// Starts `program` with one of this binary's hidden server subcommands on a fresh port.
    fn own_via(
        program: &Path,
        subcommand: &str,
        args: &[&std::ffi::OsStr],
    ) -> anyhow::Result<ServerProcess> {
        ServerProcess::launch(|| {
            let mut command = Command::new(program);
            command.arg(subcommand).args(args).stderr(Stdio::null());
            Ok(command)
        })
    }

    /// Starts the command `build` makes, told to listen on a fresh loopback port, and waits
    /// until it accepts connections; a fresh port again when it exits at start (its port
    /// taken meanwhile), at most [`START_ATTEMPTS`] times.
    fn launch(build: impl Fn() -> anyhow::Result<Command>) -> anyhow::Result<ServerProcess> {
        let mut attempt = 1;
        loop {
            let addr = free_port()?;
            let mut command = build()?;
            let child = command
                .arg("--listen")
                .arg(addr.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .with_context(|| format!("starting {command:?}"))?;
            let mut server = ServerProcess { child, addr };
            match server.wait_ready() {
                Ok(()) => return Ok(server),
                Err(Start::Exited(_)) if attempt < START_ATTEMPTS => attempt += 1,
                Err(e) => bail!("{e}"),
            }
        }
    }

    fn wait_ready(&mut self) -> Result<(), Start> {
        let start = Instant::now();
        while start.elapsed() < START_WAIT_MAX {
            match self.child.try_wait() {
                Ok(Some(status)) => return Err(Start::Exited(status)),
                Ok(None) => {}
                Err(e) => return Err(Start::Failed(format!("waiting for asl-server: {e}"))),
            }
            if std::net::TcpStream::connect(self.addr).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Err(Start::Failed(format!(
            "asl-server did not listen on {} within {START_WAIT_MAX:?}",
            self.addr
        )))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reap it: nothing of the server runs after this returns.
    pub fn kill(mut self) -> anyhow::Result<()> {
        self.child
            .kill()
            .map_err(|e| anyhow!("killing asl-server: {e}"))?;
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for ServerProcess {
    /// A run that fails half-way must not leave a server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory for one run, removed by [`Scratch::remove`]; kept (and named) when the
/// run fails, so the data can be inspected.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(what: &str) -> anyhow::Result<Scratch> {
        let path = std::env::temp_dir().join(format!(
            "asl-load-{what}-{}-{:08x}",
            std::process::id(),
            crate::stats::fresh_seed() as u32
        ));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Scratch { path })
    }

    pub fn data_dir(&self) -> PathBuf {
        self.path.join("data")
    }

    pub fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A server that exits at start is started again on a fresh port, and after the last
    /// attempt the run fails saying it exited.
    #[test]
    fn a_server_exiting_at_start_is_tried_on_fresh_ports_then_named() {
        let tries = Cell::new(0);
        let failed = ServerProcess::launch(|| {
            tries.set(tries.get() + 1);
            Ok(Command::new("false"))
        });
        let why = failed
            .err()
            .expect("a command that exits is no server")
            .to_string();
        assert_eq!(tries.get(), START_ATTEMPTS);
        assert!(why.contains("exited at start"), "{why}");
    }
}
