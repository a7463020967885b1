//! Issue 50: turn notices across a stop of the real `asl-server` process. Twelve games hand
//! the turn at once to a seat whose player is away and registered for notices; the server is
//! stopped — SIGKILL, or SIGTERM — the moment the first hand-over is acknowledged, and started
//! again. Every hand-over the log kept must notify its seat, and exactly once: the notice is
//! stored with the events that owe it, so no stop keeps one without the other.
//!
//! Nothing is sent before the stop (a quiet interval of an hour), so a notice received after
//! the restart comes from the outbox alone, and a second one for a hand-over would be a notice
//! sent twice. No timing assertions: each wait has a generous bound and waits for a condition.

mod common;

#[path = "../../tests/src/receiver.rs"]
#[allow(dead_code)]
mod receiver;

use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, NotifyTarget, ServerMessage};
use receiver::Receiver;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");
/// Games handing over at once.
const GAMES: usize = 12;
/// A safeguard on every wait: generous for a machine shared with other builds, never the
/// thing a test asserts.
const WAIT: Duration = Duration::from_secs(120);

/// How the server is stopped.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Kill,
    Terminate,
}

/// Starts `asl-server` on `data`, sending notices to loopback after `quiet_s` seconds.
fn start(data: &Path, quiet_s: u64) -> (Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_asl-server"));
    command
        .arg("--data-dir")
        .arg(data)
        .args(["--notify-allow-private", "--notify-quiet-s"])
        .arg(quiet_s.to_string())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let (child, port) = common::spawn_listening(command, WAIT, "asl-server");
    (child, format!("ws://127.0.0.1:{port}/v1"))
}

/// Sends `signal` (`-TERM`, `-INT`) and waits for the process to exit.
fn signal(child: &mut Child, signal: &str) -> std::process::ExitStatus {
    let _ = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status();
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not stop on {signal}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn done(id: u64) -> ClientMessage {
    ClientMessage::Command {
        id,
        key: None,
        command: protocol::Command::Done,
    }
}

/// Reads until the answer to a command: its version, once accepted.
async fn accepted(ws: &mut common::Socket) -> u64 {
    loop {
        let frame = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("an answer in time")
            .expect("open")
            .expect("a frame");
        let Message::Text(text) = frame else { continue };
        match wire::from_json(text.as_str()).unwrap() {
            ServerMessage::Event(_) => continue,
            ServerMessage::Accepted { version, .. } => return version,
            other => panic!("expected accepted, got {other:?}"),
        }
    }
}

/// One game: its id, the German's token, the German's socket, and the German's version before
/// its first `done`, which is the hand-over: the RPh ends and the German's end-of-RPh step
/// passes by itself (B9.322), so the Russian's own is next.
struct Game {
    id: String,
    german: String,
    ws: common::Socket,
    before_hand_over: u64,
}

/// A game whose Russian seat is registered for notices to `hook` and away, with the German
/// joined and one `done` from handing the Russian the turn.
async fn game(url: &str, hook: &str) -> Game {
    let (id, tokens) = common::create(url, SCENARIO).await;
    let mut ws = common::open(url).await;
    let registered = common::ask(
        &mut ws,
        ClientMessage::Notify {
            game: id.clone(),
            token: tokens.side_b.clone(),
            target: NotifyTarget::Webhook { url: hook.into() },
        },
    )
    .await;
    assert!(
        matches!(registered, ServerMessage::Notifying { .. }),
        "{registered:?}"
    );
    let (ws, joined) = common::join(url, &id, &tokens.side_a).await;
    let ServerMessage::Joined {
        version: before_hand_over,
        ..
    } = joined
    else {
        panic!("{joined:?}")
    };
    Game {
        id,
        german: tokens.side_a,
        ws,
        before_hand_over,
    }
}

async fn hand_overs_are_notified_once_across(stop: Stop) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut receiver = Receiver::start(&[]).await;
    let (mut server, url) = start(&data, 3600);
    let mut games = Vec::with_capacity(GAMES);
    for _ in 0..GAMES {
        games.push(game(&url, &receiver.url()).await);
    }

    // Every German hands the turn over at once; the server stops at the first acknowledgement.
    for g in games.iter_mut() {
        g.ws.send(Message::text(wire::to_json(&done(1))))
            .await
            .unwrap();
    }
    let first =
        futures_util::future::select_all(games.iter_mut().map(|g| Box::pin(accepted(&mut g.ws))))
            .await
            .0;
    assert!(first > 0);
    let status = match stop {
        Stop::Kill => {
            server.kill().unwrap();
            server.wait().unwrap()
        }
        Stop::Terminate => signal(&mut server, "-TERM"),
    };
    let (ids, germans, before): (Vec<String>, Vec<String>, Vec<u64>) = {
        let mut ids = vec![];
        let mut germans = vec![];
        let mut before = vec![];
        for g in games {
            ids.push(g.id);
            germans.push(g.german);
            before.push(g.before_hand_over);
        }
        (ids, germans, before)
    };
    assert!(
        receiver.drain().is_empty(),
        "nothing is sent before the quiet interval"
    );

    // Started again, sending at once: which hand-overs did the log keep?
    let (mut server, url) = start(&data, 0);
    let mut handed_over = BTreeSet::new();
    for ((id, german), before) in ids.iter().zip(&germans).zip(&before) {
        let (_ws, joined) = common::join(&url, id, german).await;
        let ServerMessage::Joined { version, .. } = joined else {
            panic!("{joined:?}")
        };
        if version > *before {
            handed_over.insert(id.clone());
        }
    }
    assert!(
        !handed_over.is_empty(),
        "the acknowledged hand-over is in the log"
    );

    // Each of them is notified; then the server stops cleanly, letting any request under way
    // finish, and nothing more has come.
    let mut received: Vec<serde_json::Value> = vec![];
    let deadline = Instant::now() + WAIT;
    let notified = |received: &[serde_json::Value]| {
        received
            .iter()
            .map(|n| n["game"].as_str().unwrap().to_string())
            .collect::<BTreeSet<_>>()
    };
    while !handed_over.is_subset(&notified(&received)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match receiver.next(left).await {
            Some(r) => received.push(serde_json::from_slice(&r.body).unwrap()),
            None => break,
        }
    }
    assert!(signal(&mut server, "-INT").success());
    received.extend(
        receiver
            .drain()
            .into_iter()
            .map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()),
    );

    let mut per_game: BTreeMap<String, usize> = BTreeMap::new();
    for notice in &received {
        assert_eq!(notice["side"], "B", "{notice}");
        assert_eq!(
            notice["reasons"],
            serde_json::json!(["your_turn"]),
            "{notice}"
        );
        *per_game
            .entry(notice["game"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let missing: Vec<&String> = handed_over
        .iter()
        .filter(|id| !per_game.contains_key(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "stopped by {stop:?}: {} of the {} hand-overs the log kept never notified their seat",
        missing.len(),
        handed_over.len()
    );
    for (id, count) in &per_game {
        assert!(
            handed_over.contains(id),
            "a notice for a hand-over not in the log ({id})"
        );
        assert_eq!(*count, 1, "game {id} notified {count} times");
    }
    if let Stop::Terminate = stop {
        assert!(
            status.success(),
            "SIGTERM stops the server cleanly: {status:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hand_over_kept_is_notified_once_after_a_sigkill() {
    hand_overs_are_notified_once_across(Stop::Kill).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hand_over_kept_is_notified_once_after_a_sigterm() {
    hand_overs_are_notified_once_across(Stop::Terminate).await;
}
