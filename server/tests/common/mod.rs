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
