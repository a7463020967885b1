//! Receipts and rollback: every `joined` and `accepted` carries the signed head of the
//! viewer's own stream, and a player who joins again with it finds out whether the server's log
//! still holds what it was sent. A log behind the receipt (an older backup restored), or one
//! of the same length with other events, is named as rolled back, the game is refused, and the
//! mark is stored: a restart does not forget it.

mod common;

use common::{ask, copy_dir, open, Running, Socket};
use protocol::record::signed::{ServerKey, ServerSigningKey, SignedHead};
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage, Tokens};
use protocol::{Command, Side, Viewer};
use server::operations::config::Config;
use server::store::SledStore;
use std::path::Path;
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// A server on `dir` signing with `key`, as one data directory's server always does.
async fn start(dir: &Path, key: &ServerSigningKey) -> Running {
    let store = SledStore::open(dir).unwrap();
    let config = Config {
        signing_key: Arc::new(key.clone()),
        ..Config::default()
    };
    Running::start(Arc::new(store), config).await
}

async fn create(url: &str) -> (String, Tokens) {
    common::create(url, SCENARIO).await
}

async fn join(url: &str, message: ClientMessage) -> (Socket, ServerMessage) {
    let mut ws = open(url).await;
    let answer = ask(&mut ws, message).await;
    (ws, answer)
}

fn plain(game: &str, token: &str) -> ClientMessage {
    ClientMessage::Join {
        game: game.into(),
        token: token.into(),
        since: None,
    }
}

fn with_receipt(game: &str, token: &str, receipt: &SignedHead) -> ClientMessage {
    ClientMessage::JoinWithReceipt {
        game: game.into(),
        token: token.into(),
        receipt: receipt.clone(),
        snapshot: false,
    }
}

/// Sends `command` and returns the receipt its `accepted` carries, checked to be the actor's
/// own head, signed under `key`.
async fn play(ws: &mut Socket, id: u64, command: Command, key: &ServerSigningKey) -> SignedHead {
    match ask(
        ws,
        ClientMessage::Command {
            id,
            command,
            key: None,
        },
    )
    .await
    {
        ServerMessage::Accepted {
            version,
            head,
            signed: Some(signed),
            ..
        } => {
            signed.check(&ServerKey::of(key)).unwrap();
            assert_eq!(signed.version, version);
            assert_eq!(signed.viewer_head(), Some((Viewer::Side(Side::A), head)));
            signed
        }
        other => panic!("expected accepted with a signed head, got {other:?}"),
    }
}

fn refused(answer: ServerMessage, code: ErrorCode, says: &str) -> String {
    match answer {
        ServerMessage::Error { code: got, message } => {
            assert_eq!(got, code, "{message}");
            assert!(message.contains(says), "{message}");
            message
        }
        other => panic!("expected {code:?}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receipt_past_a_restored_backup_marks_the_game_and_the_mark_survives_a_restart() {
    let key = ServerSigningKey::from_bytes(&[21; 32]);
    let root = tempfile::tempdir().unwrap();
    let (data, backup, restored) = (
        root.path().join("data"),
        root.path().join("backup"),
        root.path().join("restored"),
    );
    let server = start(&data, &key).await;
    let (game, tokens) = create(&server.url).await;
    let (mut ws, joined) = join(&server.url, plain(&game, &tokens.side_a)).await;
    match joined {
        ServerMessage::Joined {
            version,
            head,
            signed: Some(signed),
            ..
        } => {
            signed.check(&ServerKey::of(&key)).unwrap();
            assert_eq!(
                (signed.version, signed.viewer_head()),
                (version, Some((Viewer::Side(Side::A), head)))
            );
        }
        other => panic!("expected joined with a signed head, got {other:?}"),
    }
    let first = play(&mut ws, 1, Command::Done, &key).await;
    drop(ws);
    server.stop().await;
    // The operator's backup, taken now.
    let (from, into, signer) = (data.clone(), backup.clone(), key.clone());
    tokio::task::spawn_blocking(move || {
        let store = SledStore::open(&from).unwrap();
        server::store::backup::backup(&store, &into, &signer).unwrap();
    })
    .await
    .unwrap();

    let server = start(&data, &key).await;
    // The receipt the player holds is the server's own: it resumes.
    let (mut ws, joined) = join(&server.url, with_receipt(&game, &tokens.side_a, &first)).await;
    assert!(
        matches!(joined, ServerMessage::Joined { version, state: None, .. } if version == first.version),
        "{joined:?}"
    );
    let later = play(&mut ws, 2, Command::Done, &key).await;
    assert!(later.version > first.version);
    drop(ws);
    // Receipts that are not this player's in this game are refused, and mark nothing.
    let other_key = ServerSigningKey::from_bytes(&[22; 32]);
    let forged = SignedHead::of_stream(
        &other_key,
        &game,
        Viewer::Side(Side::A),
        later.version + 5,
        protocol::record::stream::StreamHash([1; 32]),
    );
    let (_, answer) = join(&server.url, with_receipt(&game, &tokens.side_a, &forged)).await;
    refused(answer, ErrorCode::BadReceipt, "another key");
    let (_, answer) = join(&server.url, with_receipt(&game, &tokens.side_b, &later)).await;
    refused(answer, ErrorCode::BadReceipt, "not side B's stream");
    let (_, answer) = join(&server.url, plain(&game, &tokens.side_b)).await;
    assert!(matches!(answer, ServerMessage::Joined { .. }), "{answer:?}");
    server.stop().await;

    // The older backup is restored into a new directory and served.
    let (from, into) = (backup.clone(), restored.clone());
    tokio::task::spawn_blocking(move || {
        let store = Arc::new(SledStore::open(&into).unwrap());
        server::store::backup::restore(store, &from).unwrap();
    })
    .await
    .unwrap();
    let server = start(&restored, &key).await;
    let (_, answer) = join(&server.url, with_receipt(&game, &tokens.side_a, &later)).await;
    let message = refused(answer, ErrorCode::RolledBack, "rolled back");
    assert!(
        message.contains(&format!("events {}..={}", first.version + 1, later.version)),
        "{message}"
    );
    // The game is refused to everyone now, not served from the old position.
    let (_, answer) = join(&server.url, plain(&game, &tokens.side_b)).await;
    refused(answer, ErrorCode::RolledBack, "rolled back");
    server.stop().await;

    // And after a restart, with no receipt shown: the mark was stored.
    let server = start(&restored, &key).await;
    let (_, answer) = join(&server.url, plain(&game, &tokens.side_b)).await;
    refused(answer, ErrorCode::RolledBack, "missing");
    server.stop().await;

    // A store that lost the game whole: the receipt shows the server had it.
    let empty = root.path().join("empty");
    let server = start(&empty, &key).await;
    let mut message = with_receipt(&game, &tokens.side_a, &later);
    if let ClientMessage::JoinWithReceipt { snapshot, .. } = &mut message {
        *snapshot = true;
    }
    let (_, answer) = join(&server.url, message).await;
    refused(answer, ErrorCode::UnknownGame, "lost the game");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_that_keeps_the_version_but_changes_events_is_detected() {
    let key = ServerSigningKey::from_bytes(&[23; 32]);
    let (data, old) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = start(data.path(), &key).await;
    let (game, tokens) = create(&server.url).await;
    let (mut ws, _) = join(&server.url, plain(&game, &tokens.side_a)).await;
    play(&mut ws, 1, Command::Done, &key).await;
    drop(ws);
    server.stop().await;
    copy_dir(data.path(), old.path());

    // What the player was sent: the German ends a step.
    let server = start(data.path(), &key).await;
    let (mut ws, _) = join(&server.url, plain(&game, &tokens.side_a)).await;
    let sent = play(&mut ws, 2, Command::Done, &key).await;
    drop(ws);
    server.stop().await;

    // The older copy comes back, and the game goes on differently to the same length.
    let server = start(old.path(), &key).await;
    let (mut ws, _) = join(&server.url, plain(&game, &tokens.side_a)).await;
    let other = play(&mut ws, 2, Command::ProposeEnd, &key).await;
    assert!(
        other.version >= sent.version,
        "{} {}",
        other.version,
        sent.version
    );
    drop(ws);
    // A version alone cannot tell: the stream is as long as the one the player was sent.
    let (_, answer) = join(
        &server.url,
        ClientMessage::Join {
            game: game.clone(),
            token: tokens.side_a.clone(),
            since: Some(sent.version),
        },
    )
    .await;
    assert!(matches!(answer, ServerMessage::Joined { .. }), "{answer:?}");
    // The signed head does.
    let (_, answer) = join(&server.url, with_receipt(&game, &tokens.side_a, &sent)).await;
    refused(answer, ErrorCode::RolledBack, "another hash");
    server.stop().await;
    let server = start(old.path(), &key).await;
    let (_, answer) = join(&server.url, plain(&game, &tokens.side_a)).await;
    refused(answer, ErrorCode::RolledBack, "another hash");
    server.stop().await;
}
