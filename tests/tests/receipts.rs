//! Receipts as a player keeps them: the client stores the signed head of its own stream after
//! every `joined` and `accepted`, `asl verify --receipts` checks an export against them, and a
//! server whose data went back to an older copy is caught when the player joins again.

use client::commands::export::{export, ExportArgs};
use client::commands::verify::{verify, VerifyArgs};
use client::commands::{GameArgs, ServerArg};
use client::connection::{Connection, Reply};
use client::{Failure, Status};
use e2e::{copy_dir, TestServer};
use protocol::record::signed::{ServerKey, ServerSigningKey, SignedHead};
use protocol::record::stream::StreamHash;
use protocol::{Command, Side, Viewer};
use server::operations::config::Config;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

fn config(key: &ServerSigningKey) -> Config {
    Config {
        signing_key: Arc::new(key.clone()),
        ..Config::default()
    }
}

/// A connection joined as the seat `token` is, keeping its receipts in `receipts`.
async fn seat(url: &str, game: &str, token: &str, receipts: &Path) -> Connection {
    let mut connection = Connection::connect(url).await.unwrap();
    connection.keep_receipts(receipts.to_path_buf());
    connection.join(game, token, None).await.unwrap();
    connection
}

async fn accepted(connection: &mut Connection, id: u64, command: Command) {
    let reply = connection.command(id, command, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
}

fn verify_args(file: &Path, key: Option<&ServerSigningKey>, receipts: &Path) -> VerifyArgs {
    VerifyArgs {
        boards: Default::default(),
        file: file.to_path_buf(),
        head: None,
        server_key: key.map(|k| ServerKey::of(k).to_string()),
        receipts: Some(Some(receipts.to_path_buf())),
    }
}

fn run_verify(args: &VerifyArgs) -> (Status, String) {
    let mut out = vec![];
    let status = verify(args, &mut out).unwrap();
    (status, String::from_utf8(out).unwrap())
}

/// Creates the B9.41 game.
async fn create(url: &str) -> client::NewGame {
    let mut creator = Connection::connect(url).await.unwrap();
    let g = creator.create_game(SCENARIO, None).await.unwrap();
    creator.close().await;
    g
}

fn receipt_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_is_checked_against_the_receipts_each_seat_kept() {
    let key = ServerSigningKey::from_bytes(&[31; 32]);
    let (data, receipts, files) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let server = TestServer::start(data.path(), config(&key)).await;
    let g = create(&server.url).await;
    let mut german = seat(&server.url, &g.game, &g.tokens.side_a, receipts.path()).await;
    let mut russian = seat(&server.url, &g.game, &g.tokens.side_b, receipts.path()).await;
    accepted(&mut german, 1, Command::Done).await;
    accepted(&mut german, 2, Command::Done).await;
    accepted(&mut russian, 1, Command::Concede).await;
    // One file per seat, each the latest receipt its seat was sent.
    assert_eq!(receipt_files(receipts.path()).len(), 2);
    let kept = german.receipt().unwrap().clone();
    kept.check(&ServerKey::of(&key)).unwrap();
    assert_eq!(kept.viewer_head().unwrap().0, Viewer::Side(Side::A));
    german.close().await;
    russian.close().await;

    let file = files.path().join("game.log");
    let status = export(
        &ExportArgs {
            server: ServerArg {
                url: server.url.clone(),
            },
            game: GameArgs {
                game: g.game.clone(),
                token: g.tokens.spectator.clone(),
            },
            out: Some(file.clone()),
        },
        &mut std::io::sink(),
    )
    .await
    .unwrap();
    assert_eq!(status, Status::Success);
    server.stop().await;

    let (status, said) = run_verify(&verify_args(&file, Some(&key), receipts.path()));
    assert_eq!(status, Status::Success, "{said}");
    assert!(
        said.contains("the German player's stream reaches its event"),
        "{said}"
    );
    assert!(
        said.contains("the Russian player's stream reaches its event"),
        "{said}"
    );

    // A receipt the file does not reach, signed by the server: named, with what differs.
    let bad = |name: &str, receipt: SignedHead| {
        let path = files.path().join(name);
        std::fs::write(&path, serde_json::to_string(&receipt).unwrap()).unwrap();
        path
    };
    let german_a = Viewer::Side(Side::A);
    let other_head = bad(
        "other-head.receipt",
        SignedHead::of_stream(&key, &g.game, german_a, kept.version, StreamHash([9; 32])),
    );
    let (status, said) = run_verify(&verify_args(&file, Some(&key), &other_head));
    assert_eq!(status, Status::Invalid, "{said}");
    assert!(
        said.contains("other-head.receipt") && said.contains("another hash"),
        "{said}"
    );
    let past_end = bad(
        "past-end.receipt",
        SignedHead::of_stream(
            &key,
            &g.game,
            german_a,
            kept.version + 3,
            kept.viewer_head().unwrap().1,
        ),
    );
    let (status, said) = run_verify(&verify_args(&file, Some(&key), &past_end));
    assert_eq!(status, Status::Invalid, "{said}");
    assert!(said.contains("holds only"), "{said}");
    // Signed by another key, or for another game.
    let forged = bad(
        "forged.receipt",
        SignedHead::of_stream(
            &ServerSigningKey::from_bytes(&[32; 32]),
            &g.game,
            german_a,
            kept.version,
            kept.viewer_head().unwrap().1,
        ),
    );
    let (status, said) = run_verify(&verify_args(&file, Some(&key), &forged));
    assert_eq!(status, Status::Invalid, "{said}");
    assert!(said.contains("signature does not hold"), "{said}");
    let elsewhere = bad(
        "elsewhere.receipt",
        SignedHead::of_stream(&key, &"ab".repeat(16), german_a, 1, StreamHash([1; 32])),
    );
    let (status, said) = run_verify(&verify_args(&file, Some(&key), &elsewhere));
    assert_eq!(status, Status::Invalid, "{said}");
    assert!(said.contains("not this file's game"), "{said}");
    // Receipts prove nothing without the server's key.
    let err = verify(&verify_args(&file, None, receipts.path()), &mut vec![]).unwrap_err();
    assert!(
        matches!(&err, Failure::Input(m) if m.contains("needs --server-key")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_rejoining_a_rolled_back_server_is_told_so() {
    let key = ServerSigningKey::from_bytes(&[33; 32]);
    let (data, old, receipts) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let server = TestServer::start(data.path(), config(&key)).await;
    let g = create(&server.url).await;
    let mut german = seat(&server.url, &g.game, &g.tokens.side_a, receipts.path()).await;
    accepted(&mut german, 1, Command::Done).await;
    german.close().await;
    server.stop().await;
    copy_dir(data.path(), old.path());

    // The German's receipt is shown on the next join, and holds.
    let server = TestServer::start(data.path(), config(&key)).await;
    let mut german = seat(&server.url, &g.game, &g.tokens.side_a, receipts.path()).await;
    accepted(&mut german, 2, Command::Done).await;
    german.close().await;
    server.stop().await;

    // The older copy is served: the German's join is refused, naming the rollback.
    let server = TestServer::start(old.path(), config(&key)).await;
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.keep_receipts(receipts.path().to_path_buf());
    let err = german
        .join(&g.game, &g.tokens.side_a, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rolled_back") && err.contains("rolled back"),
        "{err}"
    );
    server.stop().await;
}

/// A server that signs with another key than the receipt's (its key was lost and made anew)
/// cannot check it: the player is warned and joins without it, rather than being locked out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receipt_under_another_key_does_not_lock_the_player_out() {
    let (data, receipts) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let old_key = ServerSigningKey::from_bytes(&[34; 32]);
    let server = TestServer::start(data.path(), config(&old_key)).await;
    let g = create(&server.url).await;
    let mut german = seat(&server.url, &g.game, &g.tokens.side_a, receipts.path()).await;
    accepted(&mut german, 1, Command::Done).await;
    german.close().await;
    server.stop().await;

    let new_key = ServerSigningKey::from_bytes(&[35; 32]);
    let server = TestServer::start(data.path(), config(&new_key)).await;
    let mut german = seat(&server.url, &g.game, &g.tokens.side_a, receipts.path()).await;
    accepted(&mut german, 2, Command::Done).await;
    // The new receipt, further along, replaces the one the server could not check.
    let kept = client::receipts::load(receipts.path(), &g.game, &g.tokens.side_a)
        .unwrap()
        .unwrap();
    assert_eq!(kept.signer, ServerKey::of(&new_key));
    german.close().await;
    server.stop().await;
}
