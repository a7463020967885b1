//! The `asl` binary as a player runs it, where the process matters: standard input read line
//! by line as it arrives, what it says on stderr while it waits, saved games and environment
//! variables, and its exit codes. Against a real server (`e2e::TestServer`).

use client::Connection;
use e2e::TestServer;
use server::operations::config::Config;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Long enough for anything here on a loaded machine; a hang fails instead of stalling.
const WAIT_MAX: Duration = Duration::from_secs(60);

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

fn asl(server: &TestServer, home: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_asl"));
    c.env("ASL_SERVER", &server.url)
        .env("ASL_HOME", home)
        .env_remove("ASL_GAME")
        .env_remove("ASL_TOKEN");
    c
}

/// Lines of a child's stream as they come, on a channel.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a line containing `text`, returning every line read up to it.
fn wait_for(lines: &mpsc::Receiver<String>, text: &str) -> Vec<String> {
    let mut seen = vec![];
    loop {
        match lines.recv_timeout(WAIT_MAX) {
            Ok(line) => {
                let found = line.contains(text);
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(_) => panic!("no line with {text:?}; got:\n{}", seen.join("\n")),
        }
    }
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

async fn created(server: &TestServer) -> client::NewGame {
    let mut c = Connection::connect(&server.url).await.unwrap();
    let g = c.create_game(SCENARIO, None).await.unwrap();
    c.close().await;
    g
}

/// `asl run -` sends each line as soon as it is typed: the answer to the first line comes
/// back while standard input is still open. A refusal ends the run with exit status 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_from_standard_input_sends_each_line_as_it_comes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let g = created(&server).await;
    let mut child = asl(&server, dir.path())
        .args(["run", "--game", &g.game, "--token", &g.tokens.side_a, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let out = tokio::task::spawn_blocking(move || {
        // The German's RPh: an offer to end leaves it the German's to act in.
        writeln!(stdin, "# the German's RPh").unwrap();
        writeln!(stdin, "propose-end").unwrap();
        stdin.flush().unwrap();
        wait_for(&out, "2: propose-end -> accepted");
        writeln!(stdin, "move g1 Q9").unwrap();
        drop(stdin);
        wait_for(&out, "3: move g1 Q9 -> refused")
    })
    .await
    .unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(1), "a refusal exits 1: {out:?}");
    server.stop().await;
}

/// The German's script run with the Russian's token does not hang in silence: it says what
/// the game waits for, and for whom.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_says_what_it_waits_for() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let g = created(&server).await;
    let script = dir.path().join("german.txt");
    std::fs::write(&script, "done\n").unwrap();
    let mut child = asl(&server, dir.path())
        .args(["run", "--game", &g.game, "--token", &g.tokens.side_b])
        .arg(&script)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = lines_of(child.stderr.take().unwrap());
    let seen = tokio::task::spawn_blocking(move || wait_for(&err, "waiting for"))
        .await
        .unwrap();
    let line = seen.last().unwrap();
    assert!(
        line.contains(":1: waiting for the German: Turn 1, German Player Turn: RPh")
            && line.contains("(this token plays the Russian)"),
        "{line}"
    );
    kill(child);
    server.stop().await;
}

/// `asl new --save NAME` and then every command by name and side; and the same through
/// `ASL_GAME` and `ASL_TOKEN`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_games_and_environment_variables_stand_in_for_ids_and_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let scenario = dir.path().join("v.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = asl(&server, dir.path());
        c.args(args).envs(env.iter().copied());
        async move {
            tokio::task::spawn_blocking(move || c.output().unwrap())
                .await
                .unwrap()
        }
    };
    let made = run(&["new", scenario.to_str().unwrap(), "--save", "club"], &[]).await;
    let text = String::from_utf8_lossy(&made.stdout).to_string();
    assert!(made.status.success(), "{text}");
    assert!(
        text.contains("asl run --game club --token german script.txt"),
        "{text}"
    );
    assert!(text.contains("Saved as `club`"), "{text}");

    let state = run(&["state", "--game", "club", "--token", "russian"], &[]).await;
    let text = String::from_utf8_lossy(&state.stdout).to_string();
    assert!(state.status.success(), "{text}");
    assert!(text.contains("Viewing as:  Russian"), "{text}");

    let state = run(
        &["state"],
        &[("ASL_GAME", "club"), ("ASL_TOKEN", "spectator")],
    )
    .await;
    let text = String::from_utf8_lossy(&state.stdout).to_string();
    assert!(text.contains("Viewing as:  Spectator"), "{text}");

    let missing = run(&["state", "--game", "nosuch", "--token", "german"], &[]).await;
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr).to_string();
    assert!(err.contains("--save nosuch"), "{err}");
    server.stop().await;
}

/// A failed export writes nothing, not even an empty file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_export_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let g = created(&server).await;
    let file = dir.path().join("game.log");
    let c = asl(&server, dir.path())
        .args([
            "export",
            "--game",
            &g.game,
            "--token",
            &g.tokens.spectator,
            "-o",
        ])
        .arg(&file)
        .output();
    let out = tokio::task::spawn_blocking(move || c.unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "the game is not over");
    assert!(!file.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only data/"
    );
    server.stop().await;
}

/// `asl play` with its lines piped in rather than typed: each is answered, and the session
/// ends with its input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_reads_piped_lines_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let g = created(&server).await;
    let mut child = asl(&server, dir.path())
        .args(["play", "--game", &g.game, "--token", &g.tokens.side_a])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let seen = tokio::task::spawn_blocking(move || {
        let mut seen = wait_for(&out, "-- your turn: the German");
        writeln!(stdin, "done").unwrap();
        seen.extend(wait_for(&out, "1: done -> accepted"));
        writeln!(stdin, "move g1 Q9").unwrap();
        // The German's end of RPh passed by itself; the Russian's is asked (B9.322).
        seen.extend(wait_for(&out, "2: move g1 Q9 -> refused B9.322"));
        drop(stdin);
        seen
    })
    .await
    .unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success(), "{seen:?}");
    server.stop().await;
}

/// `asl new --clock` plays a game under that control, and `asl games` lists the saved games
/// with whose turn it is and both clocks. A server that never answers, or cannot be reached,
/// gives its game an error line within the wait, and the exit status says so (3); what a
/// hostile server could put in a game's names never reaches the terminal raw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_lists_each_saved_game_with_its_turn_and_clocks() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let scenario = dir.path().join("v.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let run = |args: &[&str]| {
        let mut c = asl(&server, dir.path());
        c.args(args);
        async move {
            tokio::task::spawn_blocking(move || c.output().unwrap())
                .await
                .unwrap()
        }
    };
    let none = run(&["games"]).await;
    assert!(none.status.success());
    assert!(String::from_utf8_lossy(&none.stdout).contains("No saved games"));

    let bad = run(&["new", scenario.to_str().unwrap(), "--clock", "live:1s"]).await;
    assert_eq!(bad.status.code(), Some(2), "a bad control is bad input");
    let made = run(&[
        "new",
        scenario.to_str().unwrap(),
        "--save",
        "club",
        "--clock",
        "correspondence:12h/5d,vacation=10d",
    ])
    .await;
    assert!(made.status.success(), "{made:?}");

    let listed = run(&["games"]).await;
    let text = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(listed.status.success(), "{text}");
    assert!(text.starts_with("club  Village Outskirts"), "{text}");
    assert!(text.contains("waits on: German"), "{text}");
    // The German clock runs (real time, a moment of it); the Russian one stands at its 5 days.
    assert!(
        text.contains("clocks (correspondence:12h/5d,vacation=10d): German "),
        "{text}"
    );
    assert!(text.contains(" (running), Russian 5d"), "{text}");

    // A saved game on a server that accepts and never answers, and one on no server at all.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let games = dir.path().join("games");
    let club = std::fs::read_to_string(games.join("club.json")).unwrap();
    let mut saved: serde_json::Value = serde_json::from_str(&club).unwrap();
    saved["server"] = format!("ws://{}", silent.local_addr().unwrap()).into();
    std::fs::write(games.join("hung.json"), saved.to_string()).unwrap();
    saved["server"] = "ws://127.0.0.1:1".into();
    std::fs::write(games.join("gone.json"), saved.to_string()).unwrap();
    let started = std::time::Instant::now();
    let listed = run(&["games"]).await;
    let text = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(started.elapsed() < Duration::from_secs(30), "no hang");
    assert_eq!(listed.status.code(), Some(3), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("club  "), "{text}");
    assert!(lines[1].starts_with("gone  error: "), "{text}");
    assert!(lines[2].starts_with("hung  error: no answer"), "{text}");
    assert!(!text.contains('\u{1b}'));
    drop(silent);
    server.stop().await;
}

/// A hostile server refusing a kept receipt with a message holding a terminal escape: `asl`
/// says the refusal as a warning and joins without the receipt, and the warning reaches the
/// terminal escaped. Before, the server's message was written to stderr as it came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receipts_refusal_reaches_the_terminal_escaped() {
    use futures_util::{SinkExt, StreamExt};
    use protocol::wire::{self, ClientMessage, ErrorCode, ServerMessage};
    use tokio_tungstenite::tungstenite::Message;
    const HOSTILE: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    let home = tempfile::tempdir().unwrap();
    let (game, token) = ("0123456789abcdef0123456789abcdef", "seat-token");
    let receipt = protocol::record::signed::SignedHead {
        game: game.into(),
        stream: protocol::record::signed::Stream::Viewer(protocol::Viewer::Side(protocol::Side::A)),
        version: 1,
        head: protocol::chain::LogHash([7; 32]),
        signer: protocol::record::signed::ServerKey([9; 32]),
        signature: vec![0; 64],
        batch: None,
    };
    client::receipts::keep(&home.path().join("receipts"), game, token, &receipt).unwrap();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut socket = tokio_tungstenite::accept_async(stream).await.unwrap();
        let answer = |code, message: &str| {
            Message::text(wire::to_json(&ServerMessage::Error {
                code,
                message: message.into(),
            }))
        };
        let mut asked = vec![];
        for reply in [
            answer(ErrorCode::BadReceipt, HOSTILE),
            answer(ErrorCode::BadToken, "wrong token"),
        ] {
            let Some(Ok(Message::Text(text))) = socket.next().await else {
                break;
            };
            asked.push(wire::from_json::<ClientMessage>(text.as_str()).unwrap());
            socket.send(reply).await.unwrap();
        }
        asked
    });
    let mut watch = Command::new(env!("CARGO_BIN_EXE_asl"));
    watch
        .args(["watch", "--server", &url, "--game", game, "--token", token])
        .env("ASL_HOME", home.path())
        .env_remove("ASL_SERVER");
    let out = tokio::task::spawn_blocking(move || watch.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let asked = tokio::time::timeout(WAIT_MAX, server)
        .await
        .unwrap_or_else(|_| panic!("asl never asked: {stderr}"))
        .unwrap();
    assert!(
        matches!(asked[0], ClientMessage::JoinWithReceipt { .. }),
        "{asked:?}"
    );
    assert!(stderr.contains("\\u{1b}]0;owned"), "{stderr}");
    assert!(
        !stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{stderr:?}"
    );
}
