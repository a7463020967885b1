//! The real `asl-server` process where the system, not a client, is hostile: its standard
//! output and error on a full disk (`/dev/full`), and its file-descriptor limit reached; and
//! how much it writes to its log at the pace of play. No timing assertions: each waits, with a
//! generous bound, for what must follow.

use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ServerMessage};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const WAIT: Duration = Duration::from_secs(60);
const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Where the child listens: it is started on `--listen 127.0.0.1:0` and the port the system
/// gave it is read off `/proc` (its socket in the LISTEN state), not off its banner, since some
/// of these tests put its standard output on a full disk or a pipe nobody reads. A port picked
/// by the test and let go before the child bound it could be taken meanwhile by another test's
/// server, which the test would then play against and see stop under it.
async fn listening_addr(child: &Child) -> SocketAddr {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(addr) = listening_socket(child.id()) {
            return addr;
        }
        assert!(
            Instant::now() < deadline,
            "the server never listened within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The loopback TCP socket in the LISTEN state among process `pid`'s descriptors, if any.
fn listening_socket(pid: u32) -> Option<SocketAddr> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(|entry| {
            let link = std::fs::read_link(entry.ok()?.path()).ok()?;
            let link = link.to_str()?;
            Some(
                link.strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let table = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `local_address` is `0100007F:PORT` in hex; state `0A` is LISTEN; field 9 the inode.
        let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
        if *state != "0A" || !inodes.iter().any(|i| i == inode) {
            return None;
        }
        let port = u16::from_str_radix(local.split(':').nth(1)?, 16).ok()?;
        Some(SocketAddr::from(([127, 0, 0, 1], port)))
    })
}

/// Connects, retrying while the server starts.
async fn connect(addr: SocketAddr) -> Socket {
    let deadline = Instant::now() + WAIT;
    loop {
        match tokio_tungstenite::connect_async(format!("ws://{addr}/v1")).await {
            Ok((ws, _)) => return ws,
            Err(e) if Instant::now() > deadline => panic!("server never answered: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

async fn ask(ws: &mut Socket, message: &ClientMessage) -> ServerMessage {
    ws.send(Message::text(wire::to_json(message)))
        .await
        .unwrap();
    loop {
        let frame = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("an answer in time")
            .expect("open")
            .expect("a frame");
        let Message::Text(text) = frame else { continue };
        match wire::from_json(text.as_str()).unwrap() {
            ServerMessage::Event(_) => continue,
            answer => return answer,
        }
    }
}

/// The `n`th command of a game on the test scenario: the German's adjudication of the Russian
/// "?" `337a` (by the alias he knows it by, `?1`, A12), broken, then rallied, and so on, each
/// accepted.
fn adjudicate(n: u64, note: &str) -> ClientMessage {
    ClientMessage::Command {
        id: n,
        key: None,
        command: protocol::Command::Adjudicate {
            unit: "?1".into(),
            outcome: if n % 2 == 1 {
                protocol::Outcome::Break
            } else {
                protocol::Outcome::Rally
            },
            note: note.into(),
        },
    }
}

/// Creates a game and joins it as the German; the socket, and the spectator's token.
async fn create_and_join(addr: SocketAddr) -> (Socket, String, String) {
    let mut ws = connect(addr).await;
    let created = ask(
        &mut ws,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
    )
    .await;
    let ServerMessage::Created { game, tokens, .. } = created else {
        panic!("{created:?}");
    };
    let joined = ask(
        &mut ws,
        &ClientMessage::Join {
            game: game.clone(),
            token: tokens.side_a,
            since: None,
        },
    )
    .await;
    assert!(matches!(joined, ServerMessage::Joined { .. }), "{joined:?}");
    (ws, game, tokens.spectator)
}

/// Creates a game, joins it as the German and has a command accepted.
async fn play_a_command(addr: SocketAddr) {
    let (mut ws, _, _) = create_and_join(addr).await;
    let answer = ask(&mut ws, &adjudicate(1, "")).await;
    assert!(
        matches!(answer, ServerMessage::Accepted { .. }),
        "{answer:?}"
    );
}

/// Stops the server as Ctrl-C would and waits for it to exit.
fn interrupt(mut child: Child) -> std::process::ExitStatus {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not stop on SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn server(data: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_asl-server"));
    command
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--data-dir")
        .arg(data)
        .stdin(Stdio::null());
    command
}

/// Row 7 of issue 18: with both standard streams on a full disk, the server starts, logs (at
/// debug, plenty) without a task dying, plays, and stops cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_serves_with_its_output_on_a_full_disk() {
    let dir = tempfile::tempdir().unwrap();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let child = server(dir.path())
        .env("RUST_LOG", "debug")
        .stdout(full())
        .stderr(full())
        .spawn()
        .unwrap();
    let addr = listening_addr(&child).await;
    play_a_command(addr).await;
    play_a_command(addr).await;
    assert!(interrupt(child).success());
}

/// Row 2 of issue 18: at the file-descriptor limit, accept failures back off instead of
/// spinning (a handful of log lines, not millions), and the server serves again once
/// descriptors are free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_failures_back_off_at_the_descriptor_limit() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let data = dir.path().join("data");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 64 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_asl-server"))
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--data-dir")
        .arg(&data)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let child = command.spawn().unwrap();
    let addr = listening_addr(&child).await;
    drop(connect(addr).await);

    // More connections than descriptors: the kernel queues them, the server cannot take them.
    let mut held = vec![];
    for _ in 0..120 {
        if let Ok(s) = tokio::net::TcpStream::connect(addr).await {
            held.push(s);
        }
    }
    // A window in which accept keeps failing (shorter than the handshake deadline, which would
    // free the descriptors).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let failures = std::fs::read_to_string(&log)
        .unwrap()
        .matches("accept failed")
        .count();
    assert!(failures > 0, "the limit was never reached");
    assert!(failures < 50, "{failures} accept failures logged in 3 s");
    drop(held);
    play_a_command(addr).await;
    assert!(interrupt(child).success());
}

/// The metrics token the servers these tests start and read `/metrics` of are given: without
/// one, loopback reads only the public metrics.
const METRICS_TOKEN: &str = "process-metrics";

/// One line of the server's `/metrics` (`name` as printed), or 0 when absent; the server was
/// started with `--metrics-token METRICS_TOKEN`.
async fn metric(addr: SocketAddr, name: &str) -> f64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!(
                "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {METRICS_TOKEN}\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut text = String::new();
    let _ = tokio::time::timeout(WAIT, stream.read_to_string(&mut text))
        .await
        .expect("metrics in time");
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Commands sent at once before their answers are read, to log quickly.
const PIPELINED: u64 = 200;

/// Row 7, stalled rather than failing: with stderr and stdout pipes that nobody reads, the
/// server logs (at trace, plenty) until the pipe and its own queue are full and lines are
/// dropped — and every command is still answered, and a new game is still served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_serves_with_its_output_on_a_pipe_nobody_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = server(dir.path())
        .env("RUST_LOG", "trace")
        .arg("--commands-per-second-max")
        .arg("1000000")
        .arg("--metrics-token")
        .arg(METRICS_TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = listening_addr(&child).await;
    // Held open and never read.
    let (_stdout, _stderr) = (child.stdout.take(), child.stderr.take());
    let (mut ws, _, _) = create_and_join(addr).await;
    let mut id = 0;
    let mut batches_after_drops = 0;
    tokio::time::timeout(WAIT * 5, async {
        while batches_after_drops < 2 {
            for _ in 0..PIPELINED {
                id += 1;
                ws.send(Message::text(wire::to_json(&adjudicate(id, ""))))
                    .await
                    .unwrap();
            }
            let mut answered = 0;
            while answered < PIPELINED {
                let frame = tokio::time::timeout(WAIT, ws.next())
                    .await
                    .expect("every command answered in time")
                    .expect("open")
                    .expect("a frame");
                let Message::Text(text) = frame else { continue };
                match wire::from_json(text.as_str()).unwrap() {
                    ServerMessage::Accepted { .. } => answered += 1,
                    ServerMessage::Event(_) => {}
                    other => panic!("{other:?}"),
                }
            }
            if metric(addr, "asl_log_lines_dropped_total").await > 0.0 {
                batches_after_drops += 1;
            }
        }
    })
    .await
    .expect("the pipe fills, lines are dropped, and every command is answered");
    let dropped = metric(addr, "asl_log_lines_dropped_total").await;
    eprintln!("{id} commands answered; {dropped} log lines dropped");
    play_a_command(addr).await;
    assert!(interrupt(child).success());
}

/// Row 8 with the real process: a spectator that never reads, with sends stuck behind it,
/// does not keep SIGINT from stopping the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_the_server_while_a_client_never_reads() {
    let dir = tempfile::tempdir().unwrap();
    let child = server(dir.path())
        .arg("--commands-per-second-max")
        .arg("1000000")
        .arg("--socket-send-buffer-bytes")
        .arg("4096")
        // The game keeps the stuck reader: only its own sends wait.
        .arg("--outbound-queue-max")
        .arg("100000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = listening_addr(&child).await;
    let (mut ws, game, spectator) = create_and_join(addr).await;
    // The reader that never reads: a small receive buffer, joined, then left alone.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let (mut stuck, _) = tokio_tungstenite::client_async(format!("ws://{addr}/v1"), stream)
        .await
        .unwrap();
    stuck
        .send(Message::text(wire::to_json(&ClientMessage::Join {
            game,
            token: spectator,
            since: None,
        })))
        .await
        .unwrap();
    // Enough play that the spectator's socket and the server's sends to it are full.
    for id in 1..=300 {
        let answer = ask(&mut ws, &adjudicate(id, &"n".repeat(150))).await;
        assert!(
            matches!(answer, ServerMessage::Accepted { .. }),
            "{answer:?}"
        );
    }
    assert!(interrupt(child).success());
    drop(stuck);
}

/// A busy server's log at its default level: lines for the server, its games and its
/// connections, none per command. A line per command would cost a server more than deciding
/// the command, and would fill an operator's disk at the pace of play.
#[tokio::test]
async fn the_default_log_has_no_line_per_command() {
    const COMMANDS: u64 = 40;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let child = server(&dir.path().join("data"))
        .arg("--commands-per-second-max")
        .arg("1000")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let addr = listening_addr(&child).await;
    let (mut ws, _, _) = create_and_join(addr).await;
    for n in 1..=COMMANDS {
        let answer = ask(&mut ws, &adjudicate(n, "")).await;
        assert!(
            matches!(answer, ServerMessage::Accepted { .. }),
            "{answer:?}"
        );
    }
    drop(ws);
    assert!(interrupt(child).success());
    let written = std::fs::read_to_string(&log).unwrap();
    let lines = written.lines().count() as u64;
    assert!(
        lines < COMMANDS / 2,
        "{lines} log lines for {COMMANDS} commands at the default level:\n{written}"
    );
}
