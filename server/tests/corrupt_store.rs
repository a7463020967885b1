//! A damaged log is refused, named and left alone: the server reports the game unavailable
//! with the first bad event, serves the other games, and never rewrites the damaged records.

mod common;

use common::{ask, copy_dir, join, open, Running};
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage};
use protocol::Command;
use server::operations::config::Config;
use server::store::{EventStore, SledStore};
use std::path::Path;
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

async fn start(dir: &Path) -> Running {
    let store = SledStore::open(dir).unwrap();
    Running::start(Arc::new(store), Config::default()).await
}

fn event_key(game: &str, seq: u64) -> Vec<u8> {
    let mut key = server::store::envelope::game_key(game).unwrap().to_vec();
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// The game's stored records, read with sled itself (not through the server's store).
fn records(dir: &Path, game: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = sled::open(dir).unwrap();
    let events = db.open_tree("events").unwrap();
    events
        .scan_prefix(server::store::envelope::game_key(game).unwrap())
        .map(|e| {
            let (k, v) = e.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_log_is_named_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let (damaged, damaged_tokens) = common::create(&server.url, SCENARIO).await;
    let (healthy, healthy_tokens) = common::create(&server.url, SCENARIO).await;
    for (game, tokens) in [(&damaged, &damaged_tokens), (&healthy, &healthy_tokens)] {
        let (mut ws, _) = join(&server.url, game, &tokens.side_a).await;
        // German ends the RPh and its end-of-RPh step; the Russian acts next.
        for id in 1..=2 {
            let answer = ask(
                &mut ws,
                ClientMessage::Command {
                    id,
                    command: Command::Done,
                    key: None,
                },
            )
            .await;
            assert!(
                matches!(answer, ServerMessage::Accepted { .. }),
                "{answer:?}"
            );
        }
    }
    server.stop().await;

    // Damage event 2 of one game the way a bad disk would: one flipped bit, the record kept.
    {
        let db = sled::open(dir.path()).unwrap();
        let events = db.open_tree("events").unwrap();
        let key = event_key(&damaged, 2);
        let mut record = events.get(&key).unwrap().unwrap().to_vec();
        let middle = record.len() / 2;
        record[middle] ^= 0x10;
        events.insert(key, record).unwrap();
        db.flush().unwrap();
    }
    let before = records(dir.path(), &damaged);

    let server = start(dir.path()).await;
    let (_ws, answer) = join(&server.url, &damaged, &damaged_tokens.side_a).await;
    match answer {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::GameUnavailable);
            assert!(message.contains(&damaged), "{message}");
            assert!(
                message.contains("event 2"),
                "names the first bad event: {message}"
            );
            assert!(
                message.contains("damaged") && message.contains("backup"),
                "{message}"
            );
        }
        other => panic!("expected rolled_back, got {other:?}"),
    }
    // Asking again gives the same answer; the other game is served and still takes commands.
    let (_ws, again) = join(&server.url, &damaged, &damaged_tokens.side_a).await;
    assert!(matches!(
        again,
        ServerMessage::Error {
            code: ErrorCode::GameUnavailable,
            ..
        }
    ));
    let (mut ws, answer) = join(&server.url, &healthy, &healthy_tokens.side_b).await;
    assert!(
        matches!(answer, ServerMessage::Joined { version: 3, .. }),
        "{answer:?}"
    );
    let answer = ask(
        &mut ws,
        ClientMessage::Command {
            id: 9,
            command: Command::Done,
            key: None,
        },
    )
    .await;
    assert!(
        matches!(answer, ServerMessage::Accepted { version: 4, .. }),
        "{answer:?}"
    );
    drop(ws);
    server.stop().await;

    assert_eq!(
        records(dir.path(), &damaged),
        before,
        "the damaged log was rewritten"
    );
}

/// A log whose bytes the hash chain vouches for, that this version cannot decode (here: its
/// last event in a format from a newer version), is not damage: the game is refused as one
/// this version cannot read, nothing on disk is called damaged or rewritten, and the other
/// games are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_this_version_cannot_read_is_not_called_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let (game, tokens) = common::create(&server.url, SCENARIO).await;
    let (healthy, healthy_tokens) = common::create(&server.url, SCENARIO).await;
    let (mut ws, _) = join(&server.url, &game, &tokens.side_a).await;
    let answer = ask(
        &mut ws,
        ClientMessage::Command {
            id: 1,
            command: Command::Done,
            key: None,
        },
    )
    .await;
    assert!(
        matches!(answer, ServerMessage::Accepted { version: 2, .. }),
        "{answer:?}"
    );
    drop(ws);
    server.stop().await;

    // Event 3, in its place after event 2, written in a format this version does not know.
    {
        let db = sled::open(dir.path()).unwrap();
        let events = db.open_tree("events").unwrap();
        let two = events.get(event_key(&game, 2)).unwrap().unwrap();
        let newer = bincode::serde::encode_to_vec(
            (
                u16::MAX,
                3u64,
                protocol::chain::LogHash::of(&two).0,
                vec![7u8; 40],
            ),
            bincode::config::standard(),
        )
        .unwrap();
        events.insert(event_key(&game, 3), newer).unwrap();
        db.flush().unwrap();
    }
    let before = records(dir.path(), &game);

    let server = start(dir.path()).await;
    for _ in 0..2 {
        let (_ws, answer) = join(&server.url, &game, &tokens.side_b).await;
        match answer {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::GameUnavailable);
                assert!(message.contains("event 3"), "{message}");
                assert!(message.contains("this version"), "{message}");
                assert!(message.contains("nothing is lost"), "{message}");
                assert!(!message.contains("backup"), "{message}");
            }
            other => panic!("expected game_unavailable, got {other:?}"),
        }
    }
    let (_ws, answer) = join(&server.url, &healthy, &healthy_tokens.side_a).await;
    assert!(matches!(answer, ServerMessage::Joined { .. }), "{answer:?}");
    server.stop().await;
    assert_eq!(records(dir.path(), &game), before, "the log was rewritten");
}

async fn join_since(url: &str, game: &str, token: &str, since: Option<u64>) -> ServerMessage {
    let mut ws = open(url).await;
    ask(
        &mut ws,
        ClientMessage::Join {
            game: game.into(),
            token: token.into(),
            since,
        },
    )
    .await
}

/// A data directory put back to an older copy, and players who come back with a bare `since`
/// past its end. A bare number is a claim, not evidence (issue 36: anyone with a token could
/// make one up to freeze a game), so each such join is refused on its own connection, naming
/// the missing versions, and nothing is marked: the other side plays on. Receipts, which the
/// server signed, are what mark a rollback (`server/tests/receipts.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_since_past_the_end_is_refused_alone_and_marks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let (game, tokens) = common::create(&server.url, SCENARIO).await;
    let (mut ws, _) = join(&server.url, &game, &tokens.side_a).await;
    let done = |id| ClientMessage::Command {
        id,
        command: Command::Done,
        key: None,
    };
    assert!(matches!(
        ask(&mut ws, done(1)).await,
        ServerMessage::Accepted { version: 2, .. }
    ));
    drop(ws);
    server.stop().await;
    copy_dir(dir.path(), old.path());

    let server = start(dir.path()).await;
    let (mut ws, _) = join(&server.url, &game, &tokens.side_a).await;
    let acked = match ask(&mut ws, done(2)).await {
        ServerMessage::Accepted { version, .. } => version,
        other => panic!("expected accepted, got {other:?}"),
    };
    drop(ws);
    server.stop().await;

    // The operator puts back the older copy.
    let server = start(old.path()).await;
    // Neither a spectator's claim nor a player's stops the game, or is served as a fresh start.
    for token in [&tokens.spectator, &tokens.side_a] {
        match join_since(&server.url, &game, token, Some(acked)).await {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::BeyondEnd, "{message}");
                assert!(message.contains(&format!("version {acked}")), "{message}");
                assert!(message.contains("nothing is marked"), "{message}");
            }
            other => panic!("expected beyond_end, got {other:?}"),
        }
    }
    // Both sides join from the position the log holds, after a restart too: nothing marked.
    let mut server = server;
    for restarted in [false, true] {
        if restarted {
            server.stop().await;
            server = start(old.path()).await;
        }
        for token in [&tokens.side_b, &tokens.side_a] {
            match join_since(&server.url, &game, token, None).await {
                ServerMessage::Joined { .. } => {}
                other => panic!("expected joined, got {other:?}"),
            }
        }
    }
    // A game the store lost whole, joined by a player holding a version of it: told so.
    match join_since(&server.url, &"ab".repeat(16), &tokens.side_a, Some(acked)).await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::UnknownGame);
            assert!(message.contains("lost the game"), "{message}");
        }
        other => panic!("expected unknown_game, got {other:?}"),
    }
    server.stop().await;

    // What remains is whole: its export verifies.
    let store = SledStore::open(old.path()).unwrap();
    let key = server::store::envelope::game_key(&game).unwrap();
    let records = store.load(&key).unwrap();
    assert_eq!(records.len(), 2);
    let text =
        server::store::backup::export_text(&key, &records, &server::signing::key::fresh()).unwrap();
    let verified = protocol::export::verify_backup(text.as_bytes(), &mut |_, _| {}).unwrap();
    assert_eq!(verified.header.events, 2);
}
