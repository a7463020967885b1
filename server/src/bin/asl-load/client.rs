//! The load generator's side of the wire: one websocket to the server under test, speaking
//! bincode (the cheaper codec, so the generator spends less of the shared CPU than the server).

use anyhow::{anyhow, bail, Context};
use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ServerMessage, Tokens, WIRE_PATH};
use protocol::{Game, Viewer};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long any one reply may take before the run counts the server as stuck. Replies come in
/// milliseconds; this only keeps a broken run from hanging.
pub const REPLY_WAIT_MAX: Duration = Duration::from_secs(20);

/// The websocket settings of the generator's connections and of the bare baseline server:
/// the server's small read buffer, so neither side of the comparison zero-fills 128 KiB per
/// read (see `server::operations::config::READ_BUFFER_BYTES`).
pub fn websocket_config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(server::operations::config::READ_BUFFER_BYTES)
}

/// The server side of a baseline's connection (the broadcast's, the relay's): no delay on
/// the socket, the websocket handshake with [`websocket_config`]; `None` if it failed.
pub async fn accept(stream: TcpStream) -> Option<WebSocketStream<TcpStream>> {
    let _ = stream.set_nodelay(true);
    tokio_tungstenite::accept_async_with_config(stream, Some(websocket_config()))
        .await
        .ok()
}

pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// What `Joined` says.
pub struct Joined {
    pub version: u64,
    pub state: Option<Box<Game>>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> anyhow::Result<Client> {
        let url = format!("ws://{addr}{WIRE_PATH}");
        let (ws, _) = tokio::time::timeout(
            REPLY_WAIT_MAX,
            tokio_tungstenite::connect_async_with_config(&url, Some(websocket_config()), true),
        )
        .await
        .map_err(|_| anyhow!("connecting to {url} timed out"))?
        .with_context(|| format!("connecting to {url}"))?;
        Ok(Client { ws })
    }

    pub async fn send(&mut self, message: &ClientMessage) -> anyhow::Result<()> {
        self.ws
            .send(Message::binary(wire::to_bincode(message)))
            .await
            .context("sending a frame")
    }

    /// Sends bytes as a binary frame, as they are (the baseline forwards frames unread).
    pub async fn send_raw(&mut self, frame: Vec<u8>) -> anyhow::Result<()> {
        self.ws
            .send(Message::binary(frame))
            .await
            .context("sending a frame")
    }

    /// The next binary frame's bytes, unread (the relay's frames).
    pub async fn recv_raw(&mut self) -> anyhow::Result<Vec<u8>> {
        loop {
            let frame = tokio::time::timeout(REPLY_WAIT_MAX, self.ws.next())
                .await
                .map_err(|_| anyhow!("no frame in {REPLY_WAIT_MAX:?}"))?
                .ok_or_else(|| anyhow!("the connection was closed"))?
                .context("reading a frame")?;
            match frame {
                Message::Binary(bytes) => return Ok(bytes.into()),
                Message::Close(close) => bail!("the connection was closed: {close:?}"),
                _ => continue,
            }
        }
    }

    /// The next protocol message.
    pub async fn recv(&mut self) -> anyhow::Result<ServerMessage> {
        loop {
            let frame = tokio::time::timeout(REPLY_WAIT_MAX, self.ws.next())
                .await
                .map_err(|_| anyhow!("no message from the server in {REPLY_WAIT_MAX:?}"))?
                .ok_or_else(|| anyhow!("the server closed the connection"))?
                .context("reading a frame")?;
            match frame {
                Message::Binary(bytes) => return Ok(wire::from_bincode(&bytes)?),
                Message::Text(text) => return Ok(wire::from_json(text.as_str())?),
                Message::Close(close) => bail!("the server closed the connection: {close:?}"),
                _ => continue,
            }
        }
    }

    pub async fn create(&mut self, scenario: &str) -> anyhow::Result<(String, Tokens)> {
        self.send(&ClientMessage::CreateGame {
            scenario: scenario.into(),
            // Ignored by a server started without one (the soak's, which keeps its defaults).
            admin_token: Some(crate::child::LOAD_ADMIN_TOKEN.into()),
        })
        .await?;
        match self.recv().await? {
            ServerMessage::Created { game, tokens, .. } => Ok((game, tokens)),
            other => bail!("expected `created`, got {other:?}"),
        }
    }

    pub async fn join(&mut self, game: &str, token: &str) -> anyhow::Result<Joined> {
        self.send(&ClientMessage::Join {
            game: game.into(),
            token: token.into(),
            since: None,
        })
        .await?;
        match self.recv().await? {
            ServerMessage::Joined { version, state, .. } => Ok(Joined { version, state }),
            other => bail!("expected `joined`, got {other:?}"),
        }
    }

    /// Connects and joins in one go.
    pub async fn seat(
        addr: SocketAddr,
        game: &str,
        token: &str,
    ) -> anyhow::Result<(Client, Joined)> {
        let mut client = Client::connect(addr).await?;
        let joined = client.join(game, token).await?;
        Ok((client, joined))
    }
}

/// The token for `viewer` among a game's tokens.
pub fn token(tokens: &Tokens, viewer: Viewer) -> &str {
    match viewer {
        Viewer::Side(protocol::Side::A) => &tokens.side_a,
        Viewer::Side(protocol::Side::B) => &tokens.side_b,
        Viewer::Spectator => &tokens.spectator,
    }
}
