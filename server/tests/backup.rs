//! `asl-server backup` and `restore`, as an operator runs them: a backup taken from a running
//! server through its admin socket, each file verifying on its own, and a restore into an
//! empty directory that a new server then serves with the same tokens, at the same version.

mod common;

use common::{ask, open};
use protocol::wire::{ClientMessage, ServerMessage};
use protocol::Command;
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
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
    let port = common::free_port();
    let child = Process::new(BIN)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_listening(port, Duration::from_secs(30), "the server");
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
        ServerMessage::Accepted {
            version: 2,
            head,
            signed: Some(receipt),
            ..
        } => (head, receipt),
        other => panic!("expected accepted, got {other:?}"),
    };

    // While it runs: through its admin socket (the data dir is locked to anyone else).
    let (ok, said) = run(&["backup", backup.to_str().unwrap()], &data);
    assert!(ok, "{said}");
    assert!(said.contains("1 games (2 events), each verified"), "{said}");
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
    assert!(said.contains("restored 1 games (2 events)"), "{said}");
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
            version: 2,
            head: restored_head,
            ..
        } => assert_eq!(restored_head, head),
        other => panic!("expected joined at version 2, got {other:?}"),
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
