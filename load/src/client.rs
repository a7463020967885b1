//! The load generator's side of the wire: the `asl` client's own connection
//! ([`client::connection::Connection`]), speaking bincode and reading in small chunks, so the
//! generator spends less of the shared CPU than the server it measures, and leaving the
//! receipts it is sent unchecked (a player's client checks each, an ed25519 verification; the
//! generator measures the server, it does not guard a player). Every wait is bounded by
//! [`REPLY_WAIT_MAX`].

use anyhow::{anyhow, bail, Context};
use client::connection::{Connection, Options};
use protocol::wire::{ClientMessage, ServerMessage, Tokens};
use protocol::{Game, Viewer};
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::WebSocketStream;

/// How long any one reply may take before the run counts the server as stuck. Replies come in
/// milliseconds; this only keeps a broken run from hanging.
pub const REPLY_WAIT_MAX: Duration = Duration::from_secs(20);

/// The websocket settings of the bare baseline servers and of the soak's hostile clients: the
/// server's small read buffer, so neither side of a comparison zero-fills 128 KiB per read
/// (see `server::operations::config::READ_BUFFER_BYTES`).
pub fn websocket_config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(server::operations::config::READ_BUFFER_BYTES)
}

/// How the generator's connections speak: bincode, the server's read buffer, receipts
/// unchecked.
fn options() -> Options {
    Options {
        bincode: true,
        read_buffer_bytes: Some(server::operations::config::READ_BUFFER_BYTES),
        check_receipts: false,
    }
}

/// The server side of a baseline's connection (the broadcast's, the relay's): no delay on
/// the socket, the websocket handshake with [`websocket_config`]; `None` if it failed.
pub async fn accept(stream: TcpStream) -> Option<WebSocketStream<TcpStream>> {
    let _ = stream.set_nodelay(true);
    tokio_tungstenite::accept_async_with_config(stream, Some(websocket_config()))
        .await
        .ok()
}

/// `step`, failing after [`REPLY_WAIT_MAX`] with `what`.
async fn within<T, E>(what: &str, step: impl Future<Output = Result<T, E>>) -> anyhow::Result<T>
where
    E: std::error::Error + Send + Sync + 'static,
{
    tokio::time::timeout(REPLY_WAIT_MAX, step)
        .await
        .map_err(|_| anyhow!("no {what} in {REPLY_WAIT_MAX:?}"))?
        .with_context(|| what.to_string())
}

pub struct Client {
    connection: Connection,
}

/// What `Joined` says.
pub struct Joined {
    pub version: u64,
    pub state: Option<Box<Game>>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> anyhow::Result<Client> {
        let url = format!("ws://{addr}");
        let connection = within("connection", Connection::connect_with(&url, options())).await?;
        Ok(Client { connection })
    }

    pub async fn send(&mut self, message: &ClientMessage) -> anyhow::Result<()> {
        self.connection
            .send(message)
            .await
            .context("sending a frame")
    }

    /// Sends bytes as a binary frame, as they are (the baseline forwards frames unread).
    pub async fn send_raw(&mut self, frame: Vec<u8>) -> anyhow::Result<()> {
        self.connection
            .send_frame(frame)
            .await
            .context("sending a frame")
    }

    /// The next binary frame's bytes, unread (the relay's frames).
    pub async fn recv_raw(&mut self) -> anyhow::Result<Vec<u8>> {
        within("frame", self.connection.recv_frame()).await
    }

    /// The next protocol message.
    pub async fn recv(&mut self) -> anyhow::Result<ServerMessage> {
        within("message from the server", self.connection.recv()).await
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
            ServerMessage::Joined { version, state, .. } => Ok(Joined {
                version,
                state: state
                    .map(|position| position.into_game().map(Box::new))
                    .transpose()?,
            }),
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
