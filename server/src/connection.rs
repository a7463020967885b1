//! One websocket connection: decode frames, forward requests to the game's task, write what
//! comes back. A connection never decides anything and never touches the log.
//!
//! Policy for bad input (also in `docs/protocol.md`): a malformed frame or a refused request
//! gets an `Error` and the connection stays open, up to `malformed_frames_max` malformed
//! frames; an oversized frame, a connection that falls behind its queue, or an idle one is
//! closed with a close frame that says why.

use crate::config::{Config, READ_BUFFER_BYTES};
use crate::game::{Frame, GameHandle, Outbound, Request};
use crate::registry::Registry;
use crate::review::Review;
use futures_util::{SinkExt, StreamExt};
use protocol::game::Viewer;
use protocol::wire::{self, ClientMessage, ErrorCode, ServerMessage, FRAME_BYTES_MAX, WIRE_PATH};
use protocol::Scenario;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::handshake::server::{
    ErrorResponse, Request as HttpRequest, Response,
};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use tracing::{debug, info};

/// The codec a client speaks; the server answers in the one it last received.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Codec {
    Json,
    Bincode,
}

fn encode(codec: Codec, message: &ServerMessage) -> Message {
    match codec {
        Codec::Json => Message::text(wire::to_json(message)),
        Codec::Bincode => Message::binary(wire::to_bincode(message)),
    }
}

/// The websocket settings every connection gets: frames and messages capped at
/// [`FRAME_BYTES_MAX`], so an oversized frame is refused by the reader before it is buffered,
/// and reads of [`READ_BUFFER_BYTES`].
pub fn websocket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_message_size(Some(FRAME_BYTES_MAX))
        .max_frame_size(Some(FRAME_BYTES_MAX))
}

/// Joined state of a connection.
struct Joined {
    handle: GameHandle,
    viewer: Viewer,
    subscriber: u64,
    outbound: mpsc::Receiver<Outbound>,
}

/// A token bucket: `rate` commands per second with a burst of `rate`.
struct RateLimit {
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl RateLimit {
    fn new(rate: u32) -> RateLimit {
        RateLimit {
            rate: f64::from(rate),
            tokens: f64::from(rate),
            last: Instant::now(),
        }
    }
    fn allow(&mut self) -> bool {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.rate);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The handshake callback: only `WIRE_PATH` speaks the protocol; anything else is a 404 that
/// says where to go. (The large error type is tungstenite's callback signature, not a choice.)
#[allow(clippy::result_large_err)]
fn check_path(request: &HttpRequest, response: Response) -> Result<Response, ErrorResponse> {
    if request.uri().path() == WIRE_PATH {
        return Ok(response);
    }
    let mut refusal = ErrorResponse::new(Some(format!(
        "this server speaks the game protocol at {WIRE_PATH}"
    )));
    *refusal.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::NOT_FOUND;
    Err(refusal)
}

/// Handshake on `WIRE_PATH`, then serve the connection until it closes or the server stops.
pub async fn serve(
    stream: TcpStream,
    registry: Arc<Registry>,
    config: Arc<Config>,
    mut shutdown: watch::Receiver<bool>,
) {
    let peer = stream.peer_addr().ok();
    let ws = match tokio_tungstenite::accept_hdr_async_with_config(
        stream,
        check_path,
        Some(websocket_config()),
    )
    .await
    {
        Ok(ws) => ws,
        Err(e) => {
            debug!(?peer, error = %e, "handshake failed");
            return;
        }
    };
    let mut connection = Connection {
        ws,
        registry,
        config: config.clone(),
        codec: Codec::Json,
        joined: None,
        review: None,
        malformed: 0,
        rate: RateLimit::new(config.commands_per_second_max),
    };
    let reason = connection.run(&mut shutdown).await;
    debug!(?peer, %reason, "connection closed");
    if let Some(joined) = &connection.joined {
        let _ = joined.handle.inbox.try_send(Request::Leave {
            subscriber: joined.subscriber,
        });
    }
}

struct Connection {
    ws: WebSocketStream<TcpStream>,
    registry: Arc<Registry>,
    config: Arc<Config>,
    codec: Codec,
    joined: Option<Joined>,
    /// An export opened for review instead of joining a game (`review.rs`).
    review: Option<Box<Review>>,
    malformed: u32,
    rate: RateLimit,
}

/// Why a connection ended, for the close frame and the log.
struct Closing {
    code: CloseCode,
    reason: String,
}

impl std::fmt::Display for Closing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

fn closing(code: CloseCode, reason: impl Into<String>) -> Closing {
    Closing {
        code,
        reason: reason.into(),
    }
}

impl Connection {
    async fn run(&mut self, shutdown: &mut watch::Receiver<bool>) -> Closing {
        let result = self.serve_frames(shutdown).await;
        let closing = match result {
            Ok(c) | Err(c) => c,
        };
        let _ = self
            .ws
            .close(Some(CloseFrame {
                code: closing.code,
                reason: closing.reason.clone().into(),
            }))
            .await;
        if closing.code == CloseCode::Size {
            linger(self.ws.get_mut()).await;
        }
        closing
    }

    async fn serve_frames(
        &mut self,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Closing, Closing> {
        loop {
            let outbound = async {
                match &mut self.joined {
                    Some(j) => j.outbound.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = shutdown.changed() => {
                    self.send(&ServerMessage::Error {
                        code: ErrorCode::ShuttingDown,
                        message: "the server is shutting down; reconnect with `since` to resume".into(),
                    }).await?;
                    return Ok(closing(CloseCode::Away, "server shutting down"));
                }
                message = outbound => match message {
                    Some(frame) => self.send_frame(&frame).await?,
                    None => return Ok(closing(
                        CloseCode::Policy,
                        format!("fell more than {} messages behind; reconnect with `since` to resume", self.config.outbound_queue_max),
                    )),
                },
                frame = tokio::time::timeout(self.config.idle_timeout, self.ws.next()) => {
                    let frame = match frame {
                        Err(_) => return Ok(closing(CloseCode::Away, "idle too long")),
                        Ok(None) => return Ok(closing(CloseCode::Normal, "peer went away")),
                        Ok(Some(Err(WsError::Capacity(e)))) => {
                            self.send(&ServerMessage::Error {
                                code: ErrorCode::TooLarge,
                                message: format!("{e}; frames are at most {FRAME_BYTES_MAX} bytes"),
                            }).await?;
                            return Ok(closing(CloseCode::Size, "frame too large"));
                        }
                        Ok(Some(Err(e))) => return Err(closing(CloseCode::Protocol, e.to_string())),
                        Ok(Some(Ok(frame))) => frame,
                    };
                    let decoded = match frame {
                        Message::Text(text) => {
                            self.codec = Codec::Json;
                            wire::from_json::<ClientMessage>(text.as_str())
                        }
                        Message::Binary(bytes) => {
                            self.codec = Codec::Bincode;
                            wire::from_bincode::<ClientMessage>(&bytes)
                        }
                        Message::Close(_) => return Ok(closing(CloseCode::Normal, "closed by peer")),
                        _ => continue,
                    };
                    match decoded {
                        Ok(message) => self.handle(message).await?,
                        Err(e) => {
                            self.malformed += 1;
                            self.send(&ServerMessage::Error { code: ErrorCode::Malformed, message: e.to_string() }).await?;
                            if self.malformed >= self.config.malformed_frames_max {
                                return Ok(closing(CloseCode::Policy, "too many malformed frames"));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Sends a frame from the game, in this connection's codec, reusing its encoding.
    async fn send_frame(&mut self, frame: &Frame) -> Result<(), Closing> {
        self.ws
            .send(frame.encoded(self.codec == Codec::Json))
            .await
            .map_err(|e| closing(CloseCode::Error, e.to_string()))
    }

    async fn send(&mut self, message: &ServerMessage) -> Result<(), Closing> {
        self.ws
            .send(encode(self.codec, message))
            .await
            .map_err(|e| closing(CloseCode::Error, e.to_string()))
    }

    async fn error(&mut self, code: ErrorCode, message: impl Into<String>) -> Result<(), Closing> {
        self.send(&ServerMessage::Error {
            code,
            message: message.into(),
        })
        .await
    }

    async fn handle(&mut self, message: ClientMessage) -> Result<(), Closing> {
        if let Some(answer) = self.review.as_ref().and_then(|r| r.answer(&message)) {
            return self.send(&answer).await;
        }
        match message {
            ClientMessage::Review { export } => self.open_review(export).await,
            ClientMessage::Ping { nonce } => self.send(&ServerMessage::Pong { nonce }).await,
            ClientMessage::CreateGame {
                scenario,
                admin_token,
            } => self.create(&scenario, admin_token).await,
            ClientMessage::Join { game, token, since } => self.join(&game, &token, since).await,
            ClientMessage::Command { id, command } => {
                let Some(joined) = &self.joined else {
                    return self
                        .error(ErrorCode::NotJoined, "join a game before sending commands")
                        .await;
                };
                let Viewer::Side(side) = joined.viewer else {
                    return self
                        .error(ErrorCode::ReadOnly, "a spectator token can only watch")
                        .await;
                };
                if !self.rate.allow() {
                    return self
                        .error(
                            ErrorCode::LimitReached,
                            format!(
                                "more than {} commands a second; command {id} was not sent",
                                self.config.commands_per_second_max
                            ),
                        )
                        .await;
                }
                let request = Request::Command {
                    subscriber: joined.subscriber,
                    side,
                    id,
                    command,
                };
                if joined.handle.inbox.try_send(request).is_err() {
                    return self
                        .error(
                            ErrorCode::LimitReached,
                            format!("the game is busy; command {id} was not taken, send it again"),
                        )
                        .await;
                }
                Ok(())
            }
            ClientMessage::GetState => {
                self.ask(|viewer, reply| Request::GetState { viewer, reply })
                    .await
            }
            ClientMessage::GetLog { from } => {
                self.ask(|viewer, reply| Request::GetLog {
                    viewer,
                    from,
                    reply,
                })
                .await
            }
            ClientMessage::GetStateAt { version } => {
                self.ask(|viewer, reply| Request::GetStateAt {
                    viewer,
                    version,
                    reply,
                })
                .await
            }
            ClientMessage::GetExport { from } => {
                self.ask(|_, reply| Request::GetExport { from, reply })
                    .await
            }
            ClientMessage::GetRecord { from } => {
                self.ask(|viewer, reply| Request::GetRecord {
                    viewer,
                    from,
                    reply,
                })
                .await
            }
        }
    }

    /// Verifies an export and, if it is valid, reads from it from now on. Verifying replays the
    /// whole game, so it runs on the blocking pool rather than hold up other connections.
    async fn open_review(&mut self, export: String) -> Result<(), Closing> {
        if self.joined.is_some() {
            return self
                .error(
                    ErrorCode::AlreadyJoined,
                    "this connection has joined a game; open another to review an export",
                )
                .await;
        }
        let key = self.registry.server_key();
        match tokio::task::spawn_blocking(move || Review::open(&export, &key)).await {
            Ok(Ok(review)) => {
                let opened = review.opened();
                self.review = Some(Box::new(review));
                self.send(&opened).await
            }
            Ok(Err(why)) => {
                self.error(ErrorCode::BadExport, format!("not a valid export: {why}"))
                    .await
            }
            Err(e) => {
                self.error(
                    ErrorCode::BadExport,
                    format!("the export could not be read: {e}"),
                )
                .await
            }
        }
    }

    /// Sends a read request to the game and writes its answer.
    async fn ask(
        &mut self,
        request: impl FnOnce(Viewer, oneshot::Sender<ServerMessage>) -> Request,
    ) -> Result<(), Closing> {
        let Some(joined) = &self.joined else {
            return self.error(ErrorCode::NotJoined, "join a game first").await;
        };
        let (tx, rx) = oneshot::channel();
        if joined
            .handle
            .inbox
            .send(request(joined.viewer, tx))
            .await
            .is_err()
        {
            return self
                .error(ErrorCode::GameUnavailable, "the game has stopped")
                .await;
        }
        match rx.await {
            Ok(answer) => self.send(&answer).await,
            Err(_) => {
                self.error(ErrorCode::GameUnavailable, "the game has stopped")
                    .await
            }
        }
    }

    async fn create(&mut self, scenario: &str, admin_token: Option<String>) -> Result<(), Closing> {
        if let Some(required) = &self.config.admin_token {
            let offered = admin_token.unwrap_or_default();
            // Compare digests so the comparison takes the same time wherever they differ.
            if blake3::hash(offered.as_bytes()) != blake3::hash(required.as_bytes()) {
                return self
                    .error(
                        ErrorCode::CreationRestricted,
                        "creating games on this server needs the admin token",
                    )
                    .await;
            }
        }
        let scenario = match Scenario::from_toml(scenario) {
            Ok(s) => s,
            Err(e) => return self.error(ErrorCode::BadScenario, e.to_string()).await,
        };
        let sides = scenario.sides.clone();
        match self.registry.create(scenario).await {
            Ok((game, tokens)) => {
                self.send(&ServerMessage::Created {
                    game,
                    sides,
                    tokens,
                })
                .await
            }
            Err((code, message)) => self.error(code, message).await,
        }
    }

    async fn join(&mut self, game: &str, token: &str, since: Option<u64>) -> Result<(), Closing> {
        if self.joined.is_some() {
            return self
                .error(
                    ErrorCode::AlreadyJoined,
                    "this connection has joined a game already; open another to join a second",
                )
                .await;
        }
        let (handle, viewer) = match self.registry.join(game, token).await {
            Ok(found) => found,
            Err((code, message)) => return self.error(code, message).await,
        };
        let (out, outbound) = mpsc::channel(self.config.outbound_queue_max);
        let (reply, answer) = oneshot::channel();
        let request = Request::Join {
            viewer,
            since,
            out,
            reply,
        };
        if handle.inbox.send(request).await.is_err() {
            return self
                .error(ErrorCode::GameUnavailable, "the game has stopped")
                .await;
        }
        match answer.await {
            Ok(Ok(subscriber)) => {
                info!(game, ?viewer, "joined");
                self.joined = Some(Joined {
                    handle,
                    viewer,
                    subscriber,
                    outbound,
                });
                Ok(())
            }
            Ok(Err((code, message))) => self.error(code, message).await,
            Err(_) => {
                self.error(ErrorCode::GameUnavailable, "the game has stopped")
                    .await
            }
        }
    }
}

/// How long, and how much, the server reads and discards after refusing an oversized frame.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES_MAX: usize = 2 * FRAME_BYTES_MAX;

/// After an oversized frame is refused, the rest of it is still arriving. Reading and discarding
/// it for a moment lets the client receive the error and the close frame; closing at once
/// would answer its unread bytes with a reset that destroys both.
async fn linger(stream: &mut TcpStream) {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut drained = 0;
    let deadline = tokio::time::sleep(LINGER);
    tokio::pin!(deadline);
    while drained < LINGER_BYTES_MAX {
        tokio::select! {
            _ = &mut deadline => break,
            read = stream.read(&mut buffer) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            },
        }
    }
}

/// Completes the handshake only to say why the connection cannot be served, then closes it:
/// a client at the connection limit gets a reason rather than a reset.
pub async fn refuse_full(stream: TcpStream, limit: usize) {
    let Ok(mut ws) =
        tokio_tungstenite::accept_async_with_config(stream, Some(websocket_config())).await
    else {
        return;
    };
    let message = ServerMessage::Error {
        code: ErrorCode::LimitReached,
        message: format!("the server holds {limit} connections, its limit; try again later"),
    };
    let _ = ws.send(encode(Codec::Json, &message)).await;
    let _ = ws
        .close(Some(CloseFrame {
            code: CloseCode::Again,
            reason: "server full".into(),
        }))
        .await;
}
