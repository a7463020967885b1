//! `asl-server backup` and `restore`, as an operator runs them: a backup taken from a running
//! server through its admin socket, each file verifying on its own, and a restore into an
//! empty directory that a new server then serves with the same tokens, at the same version.

mod common;

use common::{ask, open};
use protocol::wire::{ClientMessage, ServerMessage};
use protocol::Command;
use std::path::Path;
use std::process::{Child, Command as Process};
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const BIN: &str = env!("CARGO_BIN_EXE_asl-server");

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(data: &Path) -> Server {
    let mut command = Process::new(BIN);
    command.arg("--data-dir").arg(data).env("RUST_LOG", "warn");
    let (child, port) = common::spawn_listening(command, Duration::from_secs(30), "the server");
    Server {
        child,
        url: format!("ws://127.0.0.1:{port}/v1"),
    }
}

fn run(args: &[&str], data: &Path) -> (bool, String) {
    let out = Process::new(BIN)
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_of_a_running_server_restores_into_a_server_that_serves_it() {
    let root = tempfile::tempdir().unwrap();
    let (data, backup, restored) = (
        root.path().join("data"),
        root.path().join("backup"),
        root.path().join("restored"),
    );
    let server = serve(&data);
    let mut ws = open(&server.url).await;
    let (game, tokens) = match ask(
        &mut ws,
        ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    };
    let mut player = open(&server.url).await;
    ask(
        &mut player,
        ClientMessage::Join {
            game: game.clone(),
            token: tokens.side_a.clone(),
            since: None,
        },
    )
    .await;
    let (head, receipt) = match ask(
        &mut player,
        ClientMessage::Command {
            id: 1,
            command: Command::Done,
            key: None,
        },
    )
    .await
    {
        // The RPh's end and its two end steps passing by themselves (B9.322).
        ServerMessage::Accepted {
            version: 4,
            head,
            signed: Some(receipt),
            ..
        } => (head, receipt),
        other => panic!("expected accepted, got {other:?}"),
    };

    // While it runs: through its admin socket (the data dir is locked to anyone else).
    let (ok, said) = run(&["backup", backup.to_str().unwrap()], &data);
    assert!(ok, "{said}");
    assert!(said.contains("1 games (4 events), each verified"), "{said}");
    let export = std::fs::read(backup.join(format!("{game}.asl-log"))).unwrap();
    let verified = protocol::export::verify_backup(&export, &mut |_, _| {}).unwrap();
    // The head a player holds is its own stream's: the backup rebuilds that stream through it,
    // at its end.
    let streams =
        protocol::record::stream::Streams::of_log(verified.entries.iter().map(|e| &e.event));
    let side_a = protocol::Viewer::Side(protocol::Side::A);
    assert_eq!(
        streams.find(head),
        Some((side_a, streams.len(side_a))),
        "the backup ends at the head players hold"
    );
    drop(player);
    drop(server);

    let (ok, said) = run(&["restore", backup.to_str().unwrap()], &restored);
    assert!(ok, "{said}");
    assert!(said.contains("restored 1 games (4 events)"), "{said}");
    // The signing key came with it, so what players hold still checks.
    assert!(
        said.contains(&format!("server key {} restored", receipt.signer)),
        "{said}"
    );
    // Not twice into the same store.
    let (ok, said) = run(&["restore", backup.to_str().unwrap()], &restored);
    assert!(
        !ok && said.contains("restore only into an empty one"),
        "{said}"
    );

    // The player who was shown `head` resumes where it stood, showing the receipt the first
    // server signed: heads are each viewer's own, and the key is the same.
    let server = serve(&restored);
    let mut player = open(&server.url).await;
    match ask(
        &mut player,
        ClientMessage::JoinWithReceipt {
            game: game.clone(),
            token: tokens.side_a.clone(),
            receipt,
            snapshot: false,
        },
    )
    .await
    {
        ServerMessage::Joined {
            version: 4,
            head: restored_head,
            ..
        } => assert_eq!(restored_head, head),
        other => panic!("expected joined at version 4, got {other:?}"),
    }
}

/// A second server on the same directory is told so, without a backtrace.
#[test]
fn a_second_server_on_one_data_dir_is_told_so() {
    let root = tempfile::tempdir().unwrap();
    let _first = serve(root.path());
    let out = Process::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(root.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("another asl-server is using this data directory"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked at"), "{stderr}");
}

/// The first answer to `message` that is not a stream event.
async fn answer(ws: &mut common::Socket, message: ClientMessage) -> ServerMessage {
    let mut reply = ask(ws, message).await;
    while let ServerMessage::Event(_) = reply {
        reply = ask_next(ws).await;
    }
    reply
}

async fn ask_next(ws: &mut common::Socket) -> ServerMessage {
    use futures_util::StreamExt;
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("an answer in time")
            .expect("open")
            .expect("a frame");
        if let tokio_tungstenite::tungstenite::Message::Text(text) = frame {
            return protocol::wire::from_json(text.as_str()).unwrap();
        }
    }
}

/// Move, ask to undo, consent, as often as a side may in a Player Turn: the log stays small —
/// each undo names the version it returns to, where it used to carry a whole position — so the
/// backup copies it and verifies it, and it reads back to the live state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_in_a_loop_leaves_a_log_backup_copies_and_verifies() {
    const HIDDEN: &str = include_str!("../../protocol/tests/hidden/scenario.toml");
    let root = tempfile::tempdir().unwrap();
    let (data, backup) = (root.path().join("data"), root.path().join("backup"));
    let server = serve(&data);
    let mut ws = open(&server.url).await;
    let (game, tokens) = match ask(
        &mut ws,
        ClientMessage::CreateGame {
            scenario: HIDDEN.into(),
            admin_token: None,
        },
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    };
    let mut german = open(&server.url).await;
    let mut russian = open(&server.url).await;
    for (ws, token) in [
        (&mut german, &tokens.side_a),
        (&mut russian, &tokens.side_b),
    ] {
        answer(
            ws,
            ClientMessage::Join {
                game: game.clone(),
                token: token.clone(),
                since: None,
            },
        )
        .await;
    }
    let mut id = 0;
    let mut command = |command: Command| {
        id += 1;
        ClientMessage::Command {
            id,
            command,
            key: None,
        }
    };
    // To the German MPh by whoever is to act: RPh and PFPh (this scenario has no wall, so the
    // end of the RPh passes by itself, B9.322).
    for _ in 0..2 {
        if let ServerMessage::Refused { .. } = answer(&mut german, command(Command::Done)).await {
            let done = answer(&mut russian, command(Command::Done)).await;
            assert!(matches!(done, ServerMessage::Accepted { .. }), "{done:?}");
        }
    }
    let cycles = protocol::record::dispute::UNDO_REQUESTS_PER_PLAYER_TURN_MAX;
    for cycle in 0..cycles {
        let step = Command::Move {
            units: vec!["gs1".into()],
            to: "20C4".parse().unwrap(),
        };
        let from = match answer(&mut german, command(step)).await {
            ServerMessage::Accepted { events, .. } => events[0].seq,
            other => panic!("cycle {cycle}: {other:?}"),
        };
        let asked = answer(&mut german, command(Command::RequestUndo { from })).await;
        assert!(matches!(asked, ServerMessage::Accepted { .. }), "{asked:?}");
        let consented = answer(&mut russian, command(Command::ConsentToUndo)).await;
        assert!(
            matches!(consented, ServerMessage::Accepted { .. }),
            "{consented:?}"
        );
    }

    let (ok, said) = run(&["backup", backup.to_str().unwrap()], &data);
    assert!(ok, "{said}");
    assert!(said.contains("each verified"), "{said}");
    let export = std::fs::read(backup.join(format!("{game}.asl-log"))).unwrap();
    let verified = protocol::export::verify_backup(&export, &mut |_, _| {}).unwrap();
    let replayed = protocol::Game::replay(verified.entries.iter().map(|e| &e.event)).unwrap();
    assert_eq!(replayed.units["gs1"].hex, "20C3".parse().unwrap());
    let position = bincode::serde::encode_to_vec(&replayed, bincode::config::standard())
        .unwrap()
        .len();
    assert!(
        export.len() < cycles * position,
        "{cycles} undos make a {} byte log; one position is {position} bytes",
        export.len()
    );
    drop(german);
    drop(russian);
    drop(server);
}
