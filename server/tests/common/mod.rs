//! What the websocket tests of this crate share: a client socket and one request's answer.

use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ServerMessage};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub async fn open(url: &str) -> Socket {
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// Sends `message` as JSON and returns the next text frame's message.
pub async fn ask(ws: &mut Socket, message: ClientMessage) -> ServerMessage {
    ws.send(Message::text(wire::to_json(&message)))
        .await
        .unwrap();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("an answer in time")
            .expect("open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            return wire::from_json(text.as_str()).unwrap();
        }
    }
}

/// Copies a stopped server's data directory (sled's files, not the admin socket).
#[allow(dead_code)]
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Creates a game of `scenario` on the server at `url`: its id and tokens.
#[allow(dead_code)]
pub async fn create(url: &str, scenario: &str) -> (String, protocol::wire::Tokens) {
    let mut ws = open(url).await;
    match ask(
        &mut ws,
        ClientMessage::CreateGame {
            scenario: scenario.into(),
            admin_token: None,
        },
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    }
}
