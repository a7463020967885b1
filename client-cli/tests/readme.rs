//! README.md, executed: every `sh` block of it runs, as written, in `bash` against a real
//! server, in the order a newcomer meets them — so the README cannot drift from what works.
//!
//! What stands in for the newcomer's machine, and nothing more:
//! - the server block (`cargo run --release -p asl-server`) is checked to name the server's
//!   default binary, and the same server (`server::run`, default config) is started here on
//!   `127.0.0.1:0`, which `ASL_SERVER` points every later block at;
//! - `cargo build --release -p asl-client` is already done (this test is built from it), and
//!   `asl` runs the `asl` binary cargo built for this test;
//! - `cargo test --workspace` is this very suite, so it is not run again;
//! - the blocks run in an empty directory where `scenarios/` and `protocol/` are the
//!   repository's, with saved games kept in a directory of the test's own (`ASL_HOME`).
//!
//! `asl watch` runs in the background from its block on, as in a third terminal, and must
//! stop by itself when the game ends.

use e2e::TestServer;
use server::operations::config::Config;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Longest any block may take on a loaded machine: it is a hang, not slowness, past this.
const BLOCK_WAIT_MAX: Duration = Duration::from_secs(180);

const SERVER_BLOCK: &str = "cargo run --release -p asl-server";

/// Defines what a newcomer's shell has after following the README: `asl` (the alias the
/// README sets), and the `cargo build` already done.
const PRELUDE: &str = r#"set -euo pipefail
asl() { "$ASL_BIN" "$@"; }
alias() { [ "$*" = "asl=target/release/asl" ] || { echo "README test: unexpected alias $*" >&2; return 97; }; }
cargo() { [ "$*" = "build --release -p asl-client" ] || { echo "README test: unexpected cargo $*" >&2; return 97; }; }
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The fenced blocks of `markdown` whose info string is `sh`, in order.
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = vec![];
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), text) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "README.md ends inside a code block");
    blocks
}

struct Shell {
    work: PathBuf,
    home: PathBuf,
    server: String,
    logs: PathBuf,
    count: usize,
}

impl Shell {
    /// Starts `block` in bash; its stdout and stderr go to files (read by [`Shell::finish`]).
    fn start(&mut self, block: &str) -> (Child, PathBuf) {
        self.count += 1;
        let log = self.logs.join(format!("block-{}.txt", self.count));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new("bash")
            .arg("-c")
            .arg(format!("{PRELUDE}{block}"))
            .current_dir(&self.work)
            .env("ASL_BIN", env!("CARGO_BIN_EXE_asl"))
            .env("ASL_SERVER", &self.server)
            .env("ASL_HOME", &self.home)
            .env_remove("ASL_GAME")
            .env_remove("ASL_TOKEN")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("bash runs");
        (child, log)
    }

    /// Runs `block` to the end; panics with its output unless it exits 0.
    async fn run(&mut self, block: &str) -> String {
        let (child, log) = self.start(block);
        let (status, output) = finish(child, &log).await;
        assert!(
            status.success(),
            "README block failed ({status}):\n{block}\n--- output ---\n{output}"
        );
        output
    }
}

/// Waits (without blocking the server's runtime) for `child`, at most [`BLOCK_WAIT_MAX`].
async fn finish(mut child: Child, log: &Path) -> (ExitStatus, String) {
    let deadline = Instant::now() + BLOCK_WAIT_MAX;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let output = std::fs::read_to_string(log).unwrap_or_default();
            panic!("a README block ran over {BLOCK_WAIT_MAX:?}; its output:\n{output}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    (status, std::fs::read_to_string(log).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shell_block_of_the_readme_works_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = sh_blocks(&readme);
    let dir = tempfile::tempdir().unwrap();
    let (work, home, logs, data) = (
        dir.path().join("work"),
        dir.path().join("home"),
        dir.path().join("logs"),
        dir.path().join("data"),
    );
    for d in [&work, &home, &logs, &data] {
        std::fs::create_dir(d).unwrap();
    }
    for linked in ["scenarios", "protocol"] {
        std::os::unix::fs::symlink(repo().join(linked), work.join(linked)).unwrap();
    }

    let mut server = None;
    let mut shell = Shell {
        work: work.clone(),
        home,
        server: String::new(),
        logs,
        count: 0,
    };
    let mut watcher = None;
    let mut ran = String::new();
    for block in &blocks {
        if block.contains("cargo run") {
            assert_eq!(
                block.trim(),
                SERVER_BLOCK,
                "the server block is one command"
            );
            let manifest = std::fs::read_to_string(repo().join("server/Cargo.toml")).unwrap();
            assert!(
                manifest.contains("\ndefault-run = \"asl-server\"\n"),
                "`cargo run -p asl-server` must know which of the package's binaries to run"
            );
            let started = TestServer::start(&data, Config::default()).await;
            shell.server = started.url.clone();
            server = Some(started);
            continue;
        }
        if block.contains("cargo test") {
            continue;
        }
        assert!(
            server.is_some(),
            "a block needs the server before it starts:\n{block}"
        );
        if block.trim_start().starts_with("asl watch") {
            assert!(watcher.is_none(), "one watcher");
            watcher = Some(shell.start(block));
            continue;
        }
        let output = shell.run(block).await;
        ran += block;
        if block.contains("asl run") {
            assert!(!output.contains("refused"), "{output}");
            assert!(
                output.contains("g1+g2+g-ldr 12B4 → 12C4: 1½ MF = 1½ COT (B15)"),
                "{output}"
            );
        }
        if block.contains("asl verify") {
            assert!(work.join("game.log").exists());
        }
    }
    for command in [
        "asl new",
        "asl run",
        "asl state",
        "asl log",
        "asl export",
        "asl verify",
        "asl replay",
    ] {
        assert!(
            ran.contains(command),
            "README.md has no `{command}` block any more"
        );
    }

    // The watcher stops once the game ends, having shown what the README quotes of it.
    let (child, log) = watcher.expect("README.md shows `asl watch`");
    let (status, output) = finish(child, &log).await;
    assert!(status.success(), "asl watch: {status}\n{output}");
    let quoted = readme
        .lines()
        .find(|l| l.starts_with("#9  "))
        .expect("README.md quotes the watcher's event #9");
    let quoted = quoted.split('…').next().unwrap();
    assert!(
        output.contains(quoted),
        "README quotes `{quoted}`; asl watch printed:\n{output}"
    );
    server.unwrap().stop().await;
}

#[test]
fn sh_blocks_are_found_in_order() {
    let md = "x\n```sh\na\nb\n```\n```\nnot sh\n```\n```sh\nc\n```\n";
    assert_eq!(sh_blocks(md), vec!["a\nb\n".to_string(), "c\n".to_string()]);
}
