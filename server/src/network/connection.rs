//! One websocket connection: decode frames, forward requests to the game's task, write what
//! comes back. A connection never decides anything and never touches the log.
//!
//! Policy for bad input (also in `docs/protocol.md`): a malformed frame or a refused request
//! gets an `Error` and the connection stays open, up to `malformed_frames_max` malformed
//! frames; an oversized frame, a connection that falls behind its queue, or an idle one is
//! closed with a close frame that says why.
//!
//! Every kind of frame has a per-connection budget (`Budgets`): commands, reads, pings, and
//! attempts (joins, creations, reviews). A read over budget is served late, at the budget's
//! pace; any other frame over budget is answered `limit_reached` and not served, and the socket
//! is not read again until the budget allows the next frame. Either way a flood waits in the
//! client's own buffers, costing the server nothing.
//! Every send has a deadline (`send_timeout`), and a client that lets one pass is not reading:
//! it is dropped at once, with no close frame queued behind the stuck one, so a client that
//! stops reading is let go within `idle_timeout` and one `send_timeout` of its last frame. A
//! close frame from the client is echoed.

use crate::games::review::{Checks, Review};
use crate::games::socket::{Socket, Ws};
use crate::games::task::{Frame, GameHandle, Outbound, Request};
use crate::operations::budget::RateLimit;
use crate::operations::config::{Config, SHUTDOWN_SEND_TIMEOUT};
use crate::operations::metrics::{Counted, Kind, METRICS};
use crate::{Admitted, Shared};
use protocol::game::Viewer;
use protocol::record::signed::{ServerKey, SignedHead};
#[cfg(doc)]
use protocol::wire::WIRE_PATH;
use protocol::wire::{
    self, ClientMessage, ErrorCode, ServerMessage, FRAME_BYTES_MAX, REVIEW_RECEIPTS_MAX,
};
use protocol::ReadScenario;
use protocol::Scenario;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch, OwnedSemaphorePermit};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
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

/// Joined state of a connection.
struct Joined {
    handle: GameHandle,
    viewer: Viewer,
    subscriber: u64,
    outbound: mpsc::Receiver<Outbound>,
    /// Frames from the game written so far, which the game reads to tell a slow reader from
    /// one that has stopped.
    progress: Arc<AtomicU64>,
    /// A spectator's place under `spectators_max`, given back when the connection ends.
    _spectator: Option<SpectatorSlot>,
}

/// One spectator counted against the server's total.
struct SpectatorSlot(Arc<Shared>);

impl Drop for SpectatorSlot {
    fn drop(&mut self) {
        self.0.spectators.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A review's places under the server's limits on reviews: one under `reviews_max`, its
/// file's bytes under `review_bytes_max`. Given back when dropped.
struct ReviewPlaces {
    _review: OwnedSemaphorePermit,
    _bytes: OwnedSemaphorePermit,
}

/// The per-connection budgets, one token bucket per kind of frame.
struct Budgets {
    commands: RateLimit,
    reads: RateLimit,
    pings: RateLimit,
    attempts: RateLimit,
    /// Until when the connection's socket is not read: after a frame over budget, the client
    /// waits for its budget in its own send buffer, at no cost to the server.
    paused_until: Option<tokio::time::Instant>,
}

/// Serves an upgraded websocket (`web::serve` did the handshake on [`WIRE_PATH`]) until it
/// closes or the server stops.
pub async fn serve(ws: Socket, peer: SocketAddr, shared: Arc<Shared>, admitted: Admitted) {
    Connection::new(ws, peer, shared).finish(admitted).await;
}

/// Serves a connection that is over a connection limit (`why`) for one purpose only: joining a
/// player's seat, so that however many connections others hold, a game's two players can
/// always join. The client is told the limit at once; if its first frame, within the handshake
/// deadline, is a `join` with a seat's token, it is served as usual; otherwise it is closed
/// with 1013 (try again later).
pub async fn serve_seat_only(
    ws: Socket,
    peer: SocketAddr,
    shared: Arc<Shared>,
    admitted: Admitted,
    why: &str,
) {
    let config = shared.config.clone();
    let mut connection = Connection::new(ws, peer, shared);
    let notice = format!("{why}; this connection can only join a player's seat");
    if connection
        .error(ErrorCode::LimitReached, notice)
        .await
        .is_err()
    {
        return;
    }
    let first = tokio::time::timeout(config.handshake_timeout, connection.ws.next()).await;
    let (message, codec) = match first {
        Ok(Some(Ok(Message::Text(text)))) => (
            wire::from_json::<ClientMessage>(text.as_str()).ok(),
            Codec::Json,
        ),
        Ok(Some(Ok(Message::Binary(bytes)))) => (
            wire::from_bincode::<ClientMessage>(&bytes).ok(),
            Codec::Bincode,
        ),
        _ => (None, Codec::Json),
    };
    connection.codec = codec;
    connection.ws.set_json(codec == Codec::Json);
    if let Some((game, token, since, receipt)) = message.and_then(join_parts) {
        let seat = connection
            .shared
            .registry
            .join(&game, &token, since, false)
            .await;
        // Boxed, as `serve_frames` boxes every answer: joining through another node holds a
        // websocket client's connect (TLS included) while it runs, and kept inline it would
        // make every connection's task that much larger for as long as it lives.
        if matches!(seat, Ok((_, Viewer::Side(_))))
            && Box::pin(connection.join(&game, &token, since, receipt))
                .await
                .is_ok()
            && connection.joined.is_some()
        {
            connection.finish(admitted).await;
            return;
        }
    }
    let refusal = format!("{why}; only a player's join is served on this connection");
    let _ = connection.error(ErrorCode::LimitReached, refusal).await;
    let _ = tokio::time::timeout(
        config.send_timeout,
        connection.ws.close(Some(CloseFrame {
            code: CloseCode::Again,
            reason: "server full".into(),
        })),
    )
    .await;
}

impl Connection {
    fn new(ws: Socket, peer: SocketAddr, shared: Arc<Shared>) -> Connection {
        let config = shared.config.clone();
        Connection {
            ws: Ws::new(ws),
            peer,
            shared,
            config: config.clone(),
            codec: Codec::Json,
            joined: None,
            review: None,
            malformed: 0,
            budgets: Budgets {
                commands: RateLimit::new(config.commands_per_second_max, 0),
                reads: RateLimit::new(config.reads_per_second_max, 2 * config.reads_per_second_max),
                pings: RateLimit::new(config.pings_per_second_max, 2 * config.pings_per_second_max),
                attempts: RateLimit::new(config.attempts_per_second_max, ATTEMPTS_BURST),
                paused_until: None,
            },
            counted: Counted::new(Kind::Unjoined),
            closed_by_peer: None,
            on_audience: false,
        }
    }

    /// Serves frames until the connection ends, then leaves its game; `admitted` (its place
    /// under the connection limits) is given back last.
    /// A connection that joins as a spectator, or opens an export for review, goes on serving
    /// on the audience's threads (`crate::network::audience`), so that its writes, and a
    /// review's replays, never queue before a player's frame.
    async fn finish(mut self, admitted: Admitted) {
        let mut shutdown = self.shared.stopping.clone();
        let served = self.serve_frames(&mut shutdown).await;
        if let Ok(Served::Apart) = served {
            self.on_audience = true;
            let audience = self.shared.audience.clone();
            let rest = Box::pin(async move {
                let served = self.serve_frames(&mut shutdown).await;
                self.end(served, admitted).await;
            });
            crate::network::audience::serve_on(&audience, rest).await;
            return;
        }
        self.end(served, admitted).await;
    }

    async fn end(&mut self, served: Result<Served, Closing>, admitted: Admitted) {
        let reason = self.close(served).await;
        // Closed here, not when the game lets go of its part.
        drop(self.ws.take());
        debug!(peer = %self.peer, %reason, "connection closed");
        if let Some(joined) = &self.joined {
            let _ = joined
                .handle
                .inbox_for(joined.viewer)
                .try_send(Request::Leave {
                    subscriber: joined.subscriber,
                });
        }
        drop(admitted);
    }
}

struct Connection {
    /// Shared with the game's task once it joins a seat: the game writes its frames itself
    /// (`crate::games::socket`).
    ws: Ws,
    peer: SocketAddr,
    shared: Arc<Shared>,
    config: Arc<Config>,
    codec: Codec,
    joined: Option<Joined>,
    /// An export opened for review instead of joining a game (`review.rs`), with its places
    /// under `reviews_max` and `review_bytes_max`: held until the connection ends.
    review: Option<(Box<Review>, ReviewPlaces)>,
    malformed: u32,
    budgets: Budgets,
    counted: Counted,
    /// The close frame the client sent, once it has: echoed, not answered with our own.
    closed_by_peer: Option<Option<CloseFrame>>,
    /// Whether it is served on the audience's threads (it joined as a spectator or reviews).
    on_audience: bool,
}

/// Attempts (joins, creations, reviews) a connection may make at once before the per-second
/// rate applies: a client that creates a game and joins it, or retries a mistyped token, is
/// never slowed.
const ATTEMPTS_BURST: u32 = 10;

/// How long a connection's socket is not read after a malformed frame: a buggy client hardly
/// notices, a flood of junk is slowed to a few frames a second before it reaches the limit.
const MALFORMED_PAUSE: Duration = Duration::from_millis(200);

/// The most of the game's queued frames a connection writes in one flush: enough for a
/// command's frames together, few enough that one send deadline covers them as it covers one.
const FORWARD_BATCH_MAX: usize = 16;

/// The kinds of frame with a budget.
#[derive(Clone, Copy)]
enum Spend {
    Command,
    Read,
    Ping,
    Attempt,
}

/// Why a connection ended, for the close frame and the log.
struct Closing {
    code: CloseCode,
    reason: String,
    /// The client is not reading: a send to it waited its whole deadline. No close frame is
    /// sent then, nor is the socket drained: either would wait behind the frame that is stuck,
    /// for another deadline, and the client would never read it anyway.
    unheard: bool,
}

impl std::fmt::Display for Closing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// How serving a connection's frames stopped.
enum Served {
    Closed(Closing),
    /// It joined a game as a spectator or opened an export for review: serving goes on on
    /// the audience's threads.
    Apart,
}

fn ended(code: CloseCode, reason: impl Into<String>) -> Served {
    Served::Closed(closing(code, reason))
}

fn closing(code: CloseCode, reason: impl Into<String>) -> Closing {
    Closing {
        code,
        reason: reason.into(),
        unheard: false,
    }
}

impl Connection {
    /// Closes the connection for the reason its frames ended with.
    async fn close(&mut self, served: Result<Served, Closing>) -> Closing {
        let closing = match served {
            Ok(Served::Closed(c)) | Err(c) => c,
            Ok(Served::Apart) => {
                unreachable!(
                    "a spectator or a review is served on the audience's threads until it closes"
                )
            }
        };
        if closing.unheard {
            // Dropped as it is: the connection ends one send deadline after the send that
            // found the client not reading began, as `docs/protocol.md` states.
            return closing;
        }
        let deadline = self.send_deadline();
        if let Some(theirs) = self.closed_by_peer.take() {
            // RFC 6455 5.5.1: answer a close with a close, echoing its status code. Sending
            // it completes the closing handshake; then wait (briefly) for the client to close.
            let echo = theirs.map(|f| CloseFrame {
                code: f.code,
                reason: "".into(),
            });
            let _ = tokio::time::timeout(deadline, async {
                let _ = self.ws.close(echo).await;
                while let Some(Ok(_)) = self.ws.next().await {}
            })
            .await;
            return closing;
        }
        let _ = tokio::time::timeout(
            deadline,
            self.ws.close(Some(CloseFrame {
                code: closing.code,
                reason: closing.reason.clone().into(),
            })),
        )
        .await;
        // A client refused for sending too much is likely still sending: read and discard
        // for a moment, so that its unread bytes do not turn our close into a reset.
        if matches!(closing.code, CloseCode::Size | CloseCode::Policy) {
            if let Some(mut ws) = self.ws.take() {
                linger(ws.get_mut()).await;
            }
        }
        closing
    }

    /// Takes one frame of `kind` from its budget; an `Err` closes the connection, `Ok(false)`
    /// means the frame was refused (and the client told).
    async fn spend(&mut self, kind: Spend) -> Result<bool, Closing> {
        let (bucket, rule, per_second, what) = match kind {
            Spend::Command => (
                &mut self.budgets.commands,
                "commands_per_second_max",
                self.config.commands_per_second_max,
                "commands",
            ),
            Spend::Read => (
                &mut self.budgets.reads,
                "reads_per_second_max",
                self.config.reads_per_second_max,
                "reads",
            ),
            Spend::Ping => (
                &mut self.budgets.pings,
                "pings_per_second_max",
                self.config.pings_per_second_max,
                "pings",
            ),
            Spend::Attempt => (
                &mut self.budgets.attempts,
                "attempts_per_second_max",
                self.config.attempts_per_second_max,
                "joins, creations and reviews",
            ),
        };
        if bucket.allow() {
            return Ok(true);
        }
        METRICS.refused(rule);
        if matches!(kind, Spend::Read) {
            // A read over budget is served late, not refused: a client paging through a long
            // history goes at the budget's pace and never sees an error.
            tokio::time::sleep(bucket.wait()).await;
            bucket.allow();
            return Ok(true);
        }
        self.budgets.paused_until = Some(tokio::time::Instant::now() + bucket.wait());
        self.error(
            ErrorCode::LimitReached,
            format!("more than {per_second} {what} a second on one connection; not served"),
        )
        .await?;
        Ok(false)
    }

    async fn serve_frames(
        &mut self,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Result<Served, Closing> {
        // One idle timer for the whole connection, moved on by what passes rather than made
        // anew for every frame: a frame costs no timer registration. It fires only after
        // `idle_timeout` with no frame read or forwarded (nor while reading is paused).
        let idle_timeout = self.config.idle_timeout;
        let mut active = tokio::time::Instant::now();
        let idle = tokio::time::sleep_until(active + idle_timeout);
        tokio::pin!(idle);
        // Waited on across frames, as the idle timer is: made anew per frame, its registration
        // with the watch would be taken and given back for every frame.
        let shutting_down = shutdown.changed();
        tokio::pin!(shutting_down);
        // A write the game started in this socket and could not finish at once
        // (`crate::games::socket`): finished here, under the send deadline.
        let socket = self.ws.shared();
        let flushing = Ws::flush_wanted(&socket);
        tokio::pin!(flushing);
        loop {
            let outbound = async {
                match &mut self.joined {
                    Some(j) => j.outbound.recv().await,
                    None => std::future::pending().await,
                }
            };
            let paused = self.budgets.paused_until;
            tokio::select! {
                _ = &mut shutting_down => {
                    self.send(&ServerMessage::Error {
                        code: ErrorCode::ShuttingDown,
                        message: "the server is shutting down; reconnect with `since` to resume".into(),
                    }).await?;
                    return Ok(ended(CloseCode::Away, "server shutting down"));
                }
                () = &mut flushing => {
                    flushing.set(Ws::flush_wanted(&socket));
                    self.write(None, false).await?;
                }
                message = outbound => match message {
                    Some(frame) => {
                        self.forward(&frame).await?;
                        active = tokio::time::Instant::now();
                    }
                    None if self.joined.as_ref().is_some_and(|j| j.handle.inbox.is_closed()) => {
                        // The game task ended: this node gave the game up (`Moved` was sent).
                        return Ok(ended(CloseCode::Again, "the game moved; reconnect with `since` to resume"));
                    }
                    None => return Ok(ended(
                        CloseCode::Policy,
                        format!(
                            "fell behind: more than {} messages waited and none was read for {} s; reconnect with `since` to resume",
                            self.config.outbound_queue_max,
                            self.config.slow_reader_grace.as_secs()
                        ),
                    )),
                },
                // Built only while paused: `select!` makes every branch's future, enabled or not.
                _ = async { match paused {
                    Some(until) => tokio::time::sleep_until(until).await,
                    None => std::future::pending().await,
                } }, if paused.is_some() => {
                    self.budgets.paused_until = None;
                    active = tokio::time::Instant::now();
                }
                () = &mut idle, if paused.is_none() => {
                    if active + idle_timeout <= tokio::time::Instant::now() {
                        return Ok(ended(CloseCode::Away, "idle too long"));
                    }
                    idle.as_mut().reset(active + idle_timeout);
                }
                frame = self.ws.next(), if paused.is_none() => {
                    active = tokio::time::Instant::now();
                    let frame = match frame {
                        None => return Ok(ended(CloseCode::Normal, "peer went away")),
                        Some(Err(WsError::Capacity(e))) => {
                            self.send(&ServerMessage::Error {
                                code: ErrorCode::TooLarge,
                                message: format!("{e}; frames are at most {FRAME_BYTES_MAX} bytes"),
                            }).await?;
                            return Ok(ended(CloseCode::Size, "frame too large"));
                        }
                        Some(Err(e)) => return Err(closing(CloseCode::Protocol, e.to_string())),
                        Some(Ok(frame)) => frame,
                    };
                    let decoded = match frame {
                        Message::Text(text) => {
                            self.codec = Codec::Json;
                            self.ws.set_json(true);
                            wire::from_json::<ClientMessage>(text.as_str())
                        }
                        Message::Binary(bytes) => {
                            self.codec = Codec::Bincode;
                            self.ws.set_json(false);
                            wire::from_bincode::<ClientMessage>(&bytes)
                        }
                        Message::Close(frame) => {
                            self.closed_by_peer = Some(frame);
                            return Ok(ended(CloseCode::Normal, "closed by peer"));
                        }
                        _ => continue,
                    };
                    match decoded {
                        // A command (nearly every frame of a game's play) is handed to its
                        // game here, unboxed: boxing `handle`'s future moved all of its room
                        // (kilobytes, for joins, creations and reviews) for every frame. A
                        // connection reviewing an export has its own answer to a command.
                        Ok(ClientMessage::Command { id, command, key }) if self.review.is_none() => {
                            if let Err((code, message)) = self.submit(id, command, key) {
                                self.error(code, message).await?;
                            }
                        }
                        Ok(message) => {
                            // Boxed: answering a frame (a join, a creation, a review) takes
                            // far more state than waiting for one, and every idle connection
                            // would otherwise hold that much.
                            Box::pin(self.handle(message)).await?;
                            if !self.on_audience
                                && (self.review.is_some()
                                    || self.joined.as_ref().is_some_and(|j| j.viewer == Viewer::Spectator))
                            {
                                return Ok(Served::Apart);
                            }
                        }
                        Err(e) => {
                            self.malformed += 1;
                            // Like a frame over budget: not read again for a moment.
                            self.budgets.paused_until = Some(tokio::time::Instant::now() + MALFORMED_PAUSE);
                            self.send(&ServerMessage::Error { code: ErrorCode::Malformed, message: e.to_string() }).await?;
                            if self.malformed >= self.config.malformed_frames_max {
                                return Ok(ended(CloseCode::Policy, "too many malformed frames"));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Sends a frame the game queued for this connection, with the frames queued behind it
    /// (at most [`FORWARD_BATCH_MAX`] in all), in its codec (reusing each frame's encoding),
    /// and counts them as written. They are flushed together: one write to the socket for
    /// a command's frames, as the game's own write makes (`crate::games::socket`).
    async fn forward(&mut self, frame: &Frame) -> Result<(), Closing> {
        let json = self.codec == Codec::Json;
        let mut messages = vec![frame.encoded(json)];
        while messages.len() < FORWARD_BATCH_MAX {
            match self
                .joined
                .as_mut()
                .and_then(|j| j.outbound.try_recv().ok())
            {
                Some(next) => messages.push(next.encoded(json)),
                None => break,
            }
        }
        let count = messages.len() as u64;
        self.write_all(messages, true).await?;
        if let Some(j) = &self.joined {
            j.progress.fetch_add(count, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Sends every frame the game has queued for this connection so far: what the game queued
    /// before it answered a read goes out before that answer, so a client is never told of a
    /// version whose events it has not been sent yet.
    async fn forward_queued(&mut self) -> Result<(), Closing> {
        while let Some(frame) = self
            .joined
            .as_mut()
            .and_then(|j| j.outbound.try_recv().ok())
        {
            self.forward(&frame).await?;
        }
        Ok(())
    }

    async fn send(&mut self, message: &ServerMessage) -> Result<(), Closing> {
        let message = encode(self.codec, message);
        self.send_message(message).await
    }

    /// How long a send may take now: `send_timeout`, or once shutdown has begun at most
    /// `SHUTDOWN_SEND_TIMEOUT`.
    fn send_deadline(&self) -> Duration {
        if *self.shared.stopping.borrow() {
            self.config.send_timeout.min(SHUTDOWN_SEND_TIMEOUT)
        } else {
            self.config.send_timeout
        }
    }

    /// Every send has a deadline: a client that stops reading cannot hold its task (or
    /// shutdown) for ever. A send still waiting when shutdown begins is given at most
    /// `SHUTDOWN_SEND_TIMEOUT` from then on, so a reader that never reads delays shutdown by
    /// that bound, not by `send_timeout`.
    async fn send_message(&mut self, message: Message) -> Result<(), Closing> {
        self.write(Some(message), false).await
    }

    /// Sends `message`, or with `None` finishes a write the game started; `queued`: it is one
    /// of the game's frames, taken from this connection's queue.
    async fn write(&self, message: Option<Message>, queued: bool) -> Result<(), Closing> {
        self.write_all(message.into_iter().collect(), queued).await
    }

    /// Sends `messages` in order, flushed together under one send deadline (with none, finishes
    /// a write the game started); `queued`: they are the game's frames, taken from this
    /// connection's queue.
    async fn write_all(&self, messages: Vec<Message>, queued: bool) -> Result<(), Closing> {
        let limit = self.send_deadline();
        let mut send = self.ws.send(messages, queued);
        // Most sends find room in the socket at once: those need no timer and no watch.
        if let Some(sent) = futures_util::FutureExt::now_or_never(&mut send) {
            return sent.map_err(|e| closing(CloseCode::Error, e.to_string()));
        }
        let mut stopping = self.shared.stopping.clone();
        let at_shutdown = self.config.send_timeout.min(SHUTDOWN_SEND_TIMEOUT);
        let first = tokio::select! {
            sent = tokio::time::timeout(limit, &mut send) => Some(sent),
            stopped = async { stopping.wait_for(|s| *s).await.map(|_| ()) }, if limit > at_shutdown => match stopped {
                Ok(_) => None,
                // The server is gone; the send keeps its own deadline.
                Err(_) => Some(tokio::time::timeout(limit, &mut send).await),
            },
        };
        let sent = match first {
            Some(sent) => sent,
            None => tokio::time::timeout(at_shutdown, &mut send).await,
        };
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(closing(CloseCode::Error, e.to_string())),
            Err(_) => {
                METRICS.slow_readers_dropped.inc();
                Err(Closing {
                    unheard: true,
                    ..closing(
                        CloseCode::Policy,
                        format!(
                            "a send took longer than {} s; the client is not reading",
                            self.send_deadline().as_secs_f32()
                        ),
                    )
                })
            }
        }
    }

    async fn error(&mut self, code: ErrorCode, message: impl Into<String>) -> Result<(), Closing> {
        self.send(&ServerMessage::Error {
            code,
            message: message.into(),
        })
        .await
    }

    /// Hands a player's command to its game's inbox, or says why it was not taken (the error
    /// its sender is told). Takes nothing but the connection's own state and a channel push,
    /// so the frames that make up a game's play are served without the larger state the other
    /// frames' answers take (`Connection::serve_frames`).
    fn submit(
        &mut self,
        id: u64,
        command: protocol::Command,
        key: Option<u64>,
    ) -> Result<(), (ErrorCode, String)> {
        let Some(joined) = &self.joined else {
            return Err((
                ErrorCode::NotJoined,
                "join a game before sending commands".into(),
            ));
        };
        let Viewer::Side(side) = joined.viewer else {
            return Err((
                ErrorCode::ReadOnly,
                "a spectator token can only watch".into(),
            ));
        };
        if !self.budgets.commands.allow() {
            METRICS.refused("commands_per_second_max");
            self.budgets.paused_until =
                Some(tokio::time::Instant::now() + self.budgets.commands.wait());
            return Err((
                ErrorCode::LimitReached,
                format!(
                    "more than {} commands a second; command {id} was not sent",
                    self.config.commands_per_second_max
                ),
            ));
        }
        let request = Request::Command {
            subscriber: joined.subscriber,
            side,
            id,
            command: Box::new(command),
            key,
        };
        if joined.handle.inbox.try_send(request).is_err() {
            METRICS.refused("game_inbox_max");
            return Err((
                ErrorCode::LimitReached,
                format!("the game is busy; command {id} was not taken, send it again"),
            ));
        }
        Ok(())
    }

    async fn handle(&mut self, message: ClientMessage) -> Result<(), Closing> {
        let kind = match &message {
            ClientMessage::Command { .. } => Spend::Command,
            ClientMessage::Ping { .. } => Spend::Ping,
            ClientMessage::Join { .. }
            | ClientMessage::JoinWithReceipt { .. }
            | ClientMessage::CreateGame { .. }
            | ClientMessage::Review { .. }
            | ClientMessage::Notify { .. }
            | ClientMessage::ImportSave { .. } => Spend::Attempt,
            ClientMessage::GetState
            | ClientMessage::GetLog { .. }
            | ClientMessage::GetStateAt { .. }
            | ClientMessage::GetExport { .. }
            | ClientMessage::GetRecord { .. }
            | ClientMessage::Los { .. }
            | ClientMessage::Preview { .. } => Spend::Read,
        };
        // Commands keep their own refusal below, which names the command.
        if !matches!(kind, Spend::Command) && !self.spend(kind).await? {
            return Ok(());
        }
        if let Some(answer) = self.review.as_ref().and_then(|(r, _)| r.answer(&message)) {
            return self.send(&answer).await;
        }
        match message {
            ClientMessage::Review {
                export,
                server_key,
                receipts,
            } => self.open_review(export, server_key, receipts).await,
            ClientMessage::Ping { nonce } => self.send(&ServerMessage::Pong { nonce }).await,
            ClientMessage::CreateGame {
                scenario,
                admin_token,
            } => self.create(&scenario, admin_token).await,
            ClientMessage::ImportSave {
                save,
                name,
                admin_token,
            } => self.import_save(&save, name, admin_token).await,
            join @ (ClientMessage::Join { .. } | ClientMessage::JoinWithReceipt { .. }) => {
                let (game, token, since, receipt) = join_parts(join).expect("a join's parts");
                self.join(&game, &token, since, receipt).await
            }
            ClientMessage::Notify {
                game,
                token,
                target,
            } => self.register_notify(&game, &token, target).await,
            ClientMessage::Command { id, command, key } => match self.submit(id, command, key) {
                Ok(()) => Ok(()),
                Err((code, message)) => self.error(code, message).await,
            },
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
            ClientMessage::Los { from, to } => {
                self.ask(|_, reply| Request::Los { from, to, reply }).await
            }
            ClientMessage::Preview { id, command } => {
                if let Some(joined) = &self.joined {
                    if joined.viewer == Viewer::Spectator {
                        return self
                            .error(
                                ErrorCode::ReadOnly,
                                "a spectator token can only watch; it has no commands to preview",
                            )
                            .await;
                    }
                }
                self.ask(|viewer, reply| match viewer {
                    Viewer::Side(side) => Request::Preview {
                        side,
                        id,
                        command: Box::new(command),
                        reply,
                    },
                    Viewer::Spectator => unreachable!("a spectator's preview is refused above"),
                })
                .await
            }
        }
    }

    /// Verifies an export and, if it is valid, reads from it from now on. Verifying replays the
    /// whole game, so it runs on the blocking pool rather than hold up other connections.
    async fn open_review(
        &mut self,
        export: String,
        server_key: Option<String>,
        receipts: Vec<SignedHead>,
    ) -> Result<(), Closing> {
        if self.joined.is_some() {
            return self
                .error(
                    ErrorCode::AlreadyJoined,
                    "this connection has joined a game; open another to review an export",
                )
                .await;
        }
        // `asl verify`'s `--server-key` and `--receipts`, read as it reads them.
        let trusted = match server_key.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(text) => match ServerKey::from_hex(text) {
                Some(key) => Some(key),
                None => {
                    return self
                        .error(
                            ErrorCode::BadExport,
                            "the server key given is not one: 64 lowercase hex digits",
                        )
                        .await
                }
            },
        };
        if receipts.len() > REVIEW_RECEIPTS_MAX {
            return self
                .error(
                    ErrorCode::BadExport,
                    format!(
                        "{} receipts sent; a review checks at most {REVIEW_RECEIPTS_MAX} (REVIEW_RECEIPTS_MAX)",
                        receipts.len()
                    ),
                )
                .await;
        }
        if !receipts.is_empty() && trusted.is_none() {
            return self
                .error(
                    ErrorCode::BadExport,
                    "receipts need the server key you trust (server_key): a receipt proves what the server sent only under the server's key",
                )
                .await;
        }
        let checks = Checks { trusted, receipts };
        // Verifying replays the whole game and the review is kept in memory while open: the
        // number open at once, and the bytes of their files, are what bound that work and
        // memory, as review needs no token. Both are taken before the file is read at all.
        // A connection reviewing already is answered by its review (`Review::answer`).
        self.review = None;
        let Ok(review) = self.shared.reviews.clone().try_acquire_owned() else {
            METRICS.refused("reviews_max");
            return self
                .error(
                    ErrorCode::LimitReached,
                    format!(
                        "{} exports are under review on this server, its limit (reviews_max); try again later",
                        self.config.reviews_max
                    ),
                )
                .await;
        };
        let size = u32::try_from(export.len()).unwrap_or(u32::MAX);
        let Ok(bytes) = self
            .shared
            .review_bytes
            .clone()
            .try_acquire_many_owned(size)
        else {
            METRICS.refused("review_bytes_max");
            return self
                .error(
                    ErrorCode::LimitReached,
                    format!(
                        "the exports under review on this server would hold more than {} bytes with this one of {}, its limit (review_bytes_max); try again later",
                        self.config.review_bytes_max,
                        export.len()
                    ),
                )
                .await;
        };
        let places = ReviewPlaces {
            _review: review,
            _bytes: bytes,
        };
        let key = self.shared.registry.server_key();
        let boards = self.config.boards.clone();
        // On the audience's threads, below the players': a review needs no token, and its
        // verifying replays the whole game, as each read of a position does after it (the
        // connection is served there once the review is open).
        match self
            .shared
            .audience
            .spawn_blocking(move || Review::open(&export, &key, boards.as_deref(), &checks))
            .await
        {
            Ok(Ok(review)) => {
                let opened = review.opened();
                self.review = Some((Box::new(review), places));
                self.counted.become_(Kind::Review);
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

    /// Sets or removes a seat's notification target (`crate::notify`), authorised by the
    /// seat's token alone: a spectator token is refused.
    async fn register_notify(
        &mut self,
        game: &str,
        token: &str,
        target: protocol::wire::NotifyTarget,
    ) -> Result<(), Closing> {
        let (key, side) = match self.shared.registry.seat(game, token) {
            Ok(seat) => seat,
            Err((code, message)) => return self.error(code, message).await,
        };
        let Some(notifier) = self.shared.registry.notifier().cloned() else {
            return self
                .error(ErrorCode::NotYet, "this server sends no notifications")
                .await;
        };
        match notifier.register(&key, side, target).await {
            Ok((targets, secret)) => {
                info!(
                    game,
                    ?side,
                    targets = targets.len(),
                    "notification targets set"
                );
                self.send(&ServerMessage::Notifying {
                    game: game.to_string(),
                    targets,
                    secret,
                })
                .await
            }
            Err(why) => {
                self.error(ErrorCode::BadNotifyTarget, why.to_string())
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
        // Players' reads go to the players' inbox; the audience's to its own, which the game
        // serves only when no player waits. A full audience inbox is a refusal, not a wait.
        let inbox = joined.handle.inbox_for(joined.viewer);
        match inbox.try_send(request(joined.viewer, tx)) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                METRICS.refused("game_inbox_max");
                return self
                    .error(
                        ErrorCode::LimitReached,
                        "the game is busy with other readers; ask again shortly",
                    )
                    .await;
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                return self
                    .error(ErrorCode::GameUnavailable, "the game has stopped")
                    .await;
            }
        }
        match rx.await {
            Ok(answer) => {
                self.forward_queued().await?;
                self.send(&answer).await
            }
            Err(_) => {
                self.error(ErrorCode::GameUnavailable, "the game has stopped")
                    .await
            }
        }
    }

    /// Why this connection may not create games (nor import a save to create one from): a
    /// public server with no admin token, or an admin token not given. `None` when it may.
    fn creation_refused(&self, admin_token: Option<&str>) -> Option<&'static str> {
        if self.config.admin_token.is_none() && !self.shared.open_creation {
            METRICS.refused("creation_restricted");
            return Some("this server listens on a public address with no admin token set, so no one may create games; its operator sets one");
        }
        if let Some(required) = &self.config.admin_token {
            let offered = admin_token.unwrap_or_default();
            // Compare digests so the comparison takes the same time wherever they differ.
            if blake3::hash(offered.as_bytes()) != blake3::hash(required.as_bytes()) {
                return Some("creating games on this server needs the admin token");
            }
        }
        None
    }

    /// A VASL save made the scenario a game is then created from (`ClientMessage::ImportSave`),
    /// by the one function `asl new SAVE.vsav` uses. Only for a connection that may create
    /// games; reading the save (unzipping, unpacking xz) runs on the blocking pool, bounded by
    /// the frame limit on what arrives and the save reader's own limits on what it unfolds to,
    /// and at most `imports_max` reads at once on the server: a read holds its place until it
    /// ends, whether or not its connection is still there to be answered.
    async fn import_save(
        &mut self,
        save: &str,
        name: String,
        admin_token: Option<String>,
    ) -> Result<(), Closing> {
        if let Some(why) = self.creation_refused(admin_token.as_deref()) {
            return self.error(ErrorCode::CreationRestricted, why).await;
        }
        let Ok(bytes) = data_encoding::BASE64.decode(save.as_bytes()) else {
            return self
                .error(
                    ErrorCode::BadScenario,
                    "the save is not in standard base64, as `import_save` carries it",
                )
                .await;
        };
        let Ok(place) = self.shared.imports.clone().try_acquire_owned() else {
            METRICS.refused("imports_max");
            return self
                .error(
                    ErrorCode::LimitReached,
                    format!(
                        "{} saves are being read on this server, its limit (imports_max); try again later",
                        self.config.imports_max
                    ),
                )
                .await;
        };
        // On the audience's threads, below the players': a hostile save keeps its read busy
        // for as long as the reader's limits allow, on a core the players' threads would
        // otherwise share with it at their own priority.
        let made = self
            .shared
            .audience
            .spawn_blocking(move || {
                let made = vasl_save::from_save::new_game_from_save(&bytes, &name);
                drop(place);
                made
            })
            .await;
        match made {
            Ok(Ok(made)) => {
                self.send(&ServerMessage::SaveImported {
                    scenario: made.scenario,
                    assumed: made.assumed,
                })
                .await
            }
            Ok(Err(e)) => {
                self.error(
                    ErrorCode::BadScenario,
                    format!("not a VASL save this server can import: {e}"),
                )
                .await
            }
            Err(_) => {
                self.error(
                    ErrorCode::BadScenario,
                    "the save could not be read; it is refused",
                )
                .await
            }
        }
    }

    async fn create(&mut self, scenario: &str, admin_token: Option<String>) -> Result<(), Closing> {
        if let Some(why) = self.creation_refused(admin_token.as_deref()) {
            return self.error(ErrorCode::CreationRestricted, why).await;
        }
        if self.config.admin_token.is_none() && !self.creation_allowed() {
            METRICS.refused("creates_per_ip_per_hour_max");
            return self
                .error(
                    ErrorCode::LimitReached,
                    format!(
                        "your address created {} games this hour, the limit without an admin token",
                        self.config.creates_per_ip_per_hour_max
                    ),
                )
                .await;
        }
        let clock = match Scenario::time_control_in(scenario) {
            Ok(clock) => clock,
            Err(e) => return self.error(ErrorCode::BadScenario, e.to_string()).await,
        };
        // Off the async runtime: a scenario on real boards reads their archives from the
        // operator's disk (`operations::boards`), and a slow disk makes this creation wait,
        // never the connections and games sharing this worker.
        let (text, boards) = (scenario.to_string(), self.config.boards.clone());
        let read =
            tokio::task::spawn_blocking(move || Scenario::from_toml_on(&text, boards.as_deref()));
        let read = match tokio::time::timeout(crate::operations::boards::BOARD_READ_WAIT_MAX, read)
            .await
        {
            Ok(Ok(read)) => read,
            Ok(Err(_)) | Err(_) => {
                return self
                    .error(
                        ErrorCode::BadScenario,
                        "the scenario's boards could not be read in time from this server's board archives; try again later",
                    )
                    .await
            }
        };
        let scenario = match read {
            Ok(s) => s,
            Err(e) => {
                let at = e.at.map_or(String::new(), |p| {
                    format!("line {}, column {}: ", p.line, p.column)
                });
                return self.error(ErrorCode::BadScenario, format!("{at}{e}")).await;
            }
        };
        // The scenario limits bound the file; this bounds what it unfolds to, so every frame
        // the game will send fits the frame limit.
        if let Err(why) = crate::games::frames::check_frames(&scenario) {
            METRICS.refused("snapshot_bytes_max");
            return self.error(ErrorCode::BadScenario, why.to_string()).await;
        }
        let sides = scenario.sides.clone();
        match self.shared.registry.create_timed(scenario, clock).await {
            Ok((game, tokens)) => {
                self.send(&ServerMessage::Created {
                    game,
                    sides,
                    tokens,
                    public_url: self.config.public_url.clone(),
                })
                .await
            }
            Err((code, message)) => self.error(code, message).await,
        }
    }

    /// Counts one creation by this connection's address against its hourly allowance.
    fn creation_allowed(&self) -> bool {
        let mut creations = self.shared.creations.lock().expect("creations lock");
        let now = Instant::now();
        let (since, count) = creations.entry(self.peer.ip()).or_insert((now, 0));
        if now.duration_since(*since) >= Duration::from_secs(3600) {
            (*since, *count) = (now, 0);
        }
        if *count >= self.config.creates_per_ip_per_hour_max {
            return false;
        }
        *count += 1;
        true
    }

    /// A place under the server's total of spectators.
    fn spectator_slot(&self) -> Option<SpectatorSlot> {
        let max = self.config.spectators_max;
        let taken = self.shared.spectators.fetch_add(1, Ordering::Relaxed);
        let slot = SpectatorSlot(self.shared.clone());
        (taken < max).then_some(slot)
    }

    async fn join(
        &mut self,
        game: &str,
        token: &str,
        since: Option<u64>,
        receipt: Option<SignedHead>,
    ) -> Result<(), Closing> {
        if self.joined.is_some() {
            return self
                .error(
                    ErrorCode::AlreadyJoined,
                    "this connection has joined a game already; open another to join a second",
                )
                .await;
        }
        // What the client holds of the game: a version, or a receipt this server signed for
        // this game (a game the store lost whole is then named as lost, not as unknown).
        let key = self.shared.registry.server_key();
        let held = since.or_else(|| {
            receipt
                .as_ref()
                .filter(|r| r.game == game && r.check(&key).is_ok())
                .map(|r| r.version)
        });
        if let Some(cluster) = self.shared.registry.cluster().cloned() {
            if self
                .join_elsewhere(&cluster, game, token, since, receipt.as_ref())
                .await?
            {
                return Ok(());
            }
        }
        // Proven when it is the receipt's version: only that may raise the operator's alarm.
        let proven = since.is_none() && held.is_some();
        let (handle, viewer) = match self.shared.registry.join(game, token, held, proven).await {
            Ok(found) => found,
            Err((code, message)) => return self.error(code, message).await,
        };
        let spectator = match viewer {
            Viewer::Side(_) => None,
            Viewer::Spectator => match self.spectator_slot() {
                Some(slot) => Some(slot),
                None => {
                    METRICS.refused("spectators_max");
                    return self
                        .error(
                            ErrorCode::LimitReached,
                            format!(
                                "this server has {} spectators, its limit; players can still join",
                                self.config.spectators_max
                            ),
                        )
                        .await;
                }
            },
        };
        let (out, outbound) = mpsc::channel(self.config.outbound_queue_max);
        let progress = Arc::new(AtomicU64::new(0));
        let (reply, answer) = oneshot::channel();
        let request = Request::Join {
            viewer,
            since,
            receipt: receipt.map(Box::new),
            out,
            // A seat's frames are written by the game itself; the audience's go through
            // their connections, on the audience's threads.
            direct: matches!(viewer, Viewer::Side(_)).then(|| self.ws.shared()),
            progress: progress.clone(),
            reply,
        };
        if handle.inbox_for(viewer).send(request).await.is_err() {
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
                    progress,
                    _spectator: spectator,
                });
                self.counted.become_(match viewer {
                    Viewer::Side(_) => Kind::Player,
                    Viewer::Spectator => Kind::Spectator,
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

/// A join's game, token, version held and receipt, if the message is a join.
type JoinParts = (String, String, Option<u64>, Option<SignedHead>);

fn join_parts(message: ClientMessage) -> Option<JoinParts> {
    match message {
        ClientMessage::Join { game, token, since } => Some((game, token, since, None)),
        ClientMessage::JoinWithReceipt {
            game,
            token,
            receipt,
            snapshot,
        } => {
            let since = (!snapshot).then_some(receipt.version);
            Some((game, token, since, Some(receipt)))
        }
        _ => None,
    }
}

impl Connection {
    /// With several server nodes: finds which node owns `game`. Here, `Ok(false)` (the join
    /// goes on as usual); a refusal, sent, is `Ok(true)`; elsewhere, the join is relayed to
    /// the owner for the rest of the connection, and the `Err` says how that ended. An owner
    /// that cannot be reached is waited for until its lease lapses and this node can take
    /// the game.
    ///
    /// The owner is sent the join the client sent: a receipt goes with it, so the owner checks
    /// it (its game, its viewer, its signature) and finds a rollback as it would were the
    /// client connected to it. Sent as a bare `join`, a receipt of another game opened this
    /// one and a log behind a receipt went unseen through any other node.
    async fn join_elsewhere(
        &mut self,
        cluster: &crate::games::cluster::Cluster,
        game: &str,
        token: &str,
        since: Option<u64>,
        receipt: Option<&SignedHead>,
    ) -> Result<bool, Closing> {
        use crate::games::cluster::{self, Relayed};
        let deadline = tokio::time::Instant::now() + cluster.join_wait();
        loop {
            let address = match self.shared.registry.locate(cluster, game).await {
                Err((code, message)) => {
                    self.error(code, message).await?;
                    return Ok(true);
                }
                Ok(None) => return Ok(false),
                Ok(Some(address)) => address,
            };
            let join = match receipt {
                Some(receipt) => ClientMessage::JoinWithReceipt {
                    game: game.to_string(),
                    token: token.to_string(),
                    receipt: receipt.clone(),
                    // A receipt's join resumes after the receipt unless a snapshot was asked.
                    snapshot: since.is_none(),
                },
                None => ClientMessage::Join {
                    game: game.to_string(),
                    token: token.to_string(),
                    since,
                },
            };
            let join = match self.codec {
                Codec::Json => Message::text(wire::to_json(&join)),
                Codec::Bincode => Message::binary(wire::to_bincode(&join)),
            };
            match cluster::connect_owner(&address, join).await {
                Ok(mut upstream) => {
                    info!(game, owner = %address, "joined through the owner node");
                    // Relayed whole: a connection joined through another node writes nothing
                    // of a local game's, so it takes its socket for the relay.
                    let Some(mut ws) = self.ws.take() else {
                        return Err(closing(CloseCode::Error, "the socket is closed"));
                    };
                    let relayed = cluster::relay(
                        &mut ws,
                        &mut upstream,
                        self.config.idle_timeout,
                        self.config.send_timeout,
                    )
                    .await;
                    self.ws.put(ws);
                    return Err(match relayed {
                        Relayed::Client => closing(CloseCode::Normal, "closed by peer"),
                        Relayed::NotReading => {
                            METRICS.slow_readers_dropped.inc();
                            Closing {
                                unheard: true,
                                ..closing(CloseCode::Policy, "the client is not reading")
                            }
                        }
                        Relayed::Owner(why) => {
                            self.error(
                                ErrorCode::Moved,
                                format!("{why}; reconnect with `since` to resume"),
                            )
                            .await?;
                            closing(CloseCode::Again, "the game's owner node went away")
                        }
                    });
                }
                Err(why) if tokio::time::Instant::now() < deadline => {
                    debug!(game, %why, "the owner node is unreachable; waiting for its lease to lapse");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(why) => {
                    self.error(
                        ErrorCode::GameUnavailable,
                        format!("the node owning game `{game}` cannot be reached ({why}); try again shortly"),
                    )
                    .await?;
                    return Ok(true);
                }
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
