//! The real `asl-server` process where the system, not a client, is hostile: its standard
//! output and error on a full disk (`/dev/full`), and its file-descriptor limit reached. No
//! timing assertions: each waits, with a generous bound, for what must follow.

use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ServerMessage};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const WAIT: Duration = Duration::from_secs(60);
const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A loopback address free a moment ago.
fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
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

/// Creates a game, joins it as the German and has a command accepted.
async fn play_a_command(addr: SocketAddr) {
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
            game,
            token: tokens.side_a,
            since: None,
        },
    )
    .await;
    assert!(matches!(joined, ServerMessage::Joined { .. }), "{joined:?}");
    let answer = ask(
        &mut ws,
        &ClientMessage::Command {
            id: 1,
            key: None,
            command: protocol::Command::Adjudicate {
                unit: "337a".into(),
                outcome: protocol::Outcome::Break,
                note: String::new(),
            },
        },
    )
    .await;
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

fn server(addr: SocketAddr, data: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_asl-server"));
    command
        .arg("--listen")
        .arg(addr.to_string())
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
    let addr = free_addr();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let child = server(addr, dir.path())
        .env("RUST_LOG", "debug")
        .stdout(full())
        .stderr(full())
        .spawn()
        .unwrap();
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
    let addr = free_addr();
    let log = dir.path().join("stderr.log");
    let data = dir.path().join("data");
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 64 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_asl-server"))
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--data-dir")
        .arg(&data)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let child = command.spawn().unwrap();
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
