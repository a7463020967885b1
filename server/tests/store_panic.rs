//! sled panicking inside the store's committer while a player's command is being written: the
//! player is told plainly that nothing was stored, the opponent hears nothing of it, and the
//! game goes on with the next command — the process neither hangs nor loses an ack.

mod common;

use common::{ask, open};
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage};
use protocol::Command;
use server::operations::config::Config;
use server::store::SledStore;
use std::sync::Arc;
use tokio::sync::oneshot;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

fn done(id: u64) -> ClientMessage {
    ClientMessage::Command {
        id,
        command: Command::Done,
        key: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_inside_sled_is_a_named_storage_error_and_play_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SledStore::open(dir.path()).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/v1", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let running = tokio::spawn(server::run(
        listener,
        store.clone(),
        Config::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let (game, tokens) = common::create(&url, SCENARIO).await;
    let join = |token: &str| ClientMessage::Join {
        game: game.clone(),
        token: token.into(),
        since: None,
    };
    let mut german = open(&url).await;
    ask(&mut german, join(&tokens.side_a)).await;
    let mut russian = open(&url).await;
    ask(&mut russian, join(&tokens.side_b)).await;

    store.simulate_committer_panic();
    match ask(&mut german, done(1)).await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::Storage, "{message}");
            assert!(message.contains("nothing changed"), "{message}");
            assert!(message.contains("sled panicked"), "{message}");
        }
        other => panic!("expected a storage error, got {other:?}"),
    }
    // The same command again is taken, at the version it would have had: the RPh's end and
    // its two end steps, which pass by themselves here (B9.322).
    match ask(&mut german, done(2)).await {
        ServerMessage::Accepted { version: 4, .. } => {}
        other => panic!("expected accepted at version 4, got {other:?}"),
    }
    // The Russian's first event after joining is that one: the failed write sent nothing.
    match tokio::time::timeout(std::time::Duration::from_secs(20), async {
        use futures_util::StreamExt;
        loop {
            if let tokio_tungstenite::tungstenite::Message::Text(text) =
                russian.next().await.unwrap().unwrap()
            {
                return protocol::wire::from_json::<ServerMessage>(text.as_str()).unwrap();
            }
        }
    })
    .await
    .unwrap()
    {
        ServerMessage::Event(sequenced) => assert_eq!(sequenced.seq, 2),
        other => panic!("expected the event of the accepted command, got {other:?}"),
    }
    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
