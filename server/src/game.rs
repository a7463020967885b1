//! One game's writer task: the only owner of the game's state and the only writer of its log.
//!
//! Everything about a game goes through its two inboxes: the players' (their commands, joins and
//! reads) and the audience's (spectators' joins and reads). The task always serves the players'
//! inbox first, so no audience, however busy, makes a player wait behind it. A command
//! is decided, its events are made durable, and only then applied, acknowledged and sent to
//! everyone joined — each viewer getting its own projection. Because the task handles one
//! request at a time, a viewer's snapshot and the events after it can never overlap or leave
//! a gap.

use crate::config::Config;
use crate::log::{self, GameMeta};
use crate::metrics::METRICS;
use crate::once::{self, Made, Remembered};
use crate::store::{EventStore, GameKey, StoreError};
use data_encoding::HEXLOWER;
use protocol::chain::LogHash;
use protocol::game::{view, Game, Viewer};
use protocol::record::receipt::Mismatch;
use protocol::record::signed::{Head, SignedHead, Stream};
use protocol::record::stream::{self, Following, Streams, VIEWERS};
use protocol::referee::Referee;
use protocol::wire::{
    ErrorCode, ExportPage, PreviewOutcome, RecordEntry, Sequenced, ServerMessage,
    EXPORT_PAGE_BYTES_MAX, FRAME_BYTES_MAX, LOG_PAGE_EVENTS_MAX,
};
use protocol::{Command, Event, Side};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::{Bytes, Message, Utf8Bytes};
use tracing::{debug, error, warn};

/// A message on its way to connections, encoded at most once per codec however many
/// connections send it: a broadcast to thousands of spectators costs one encoding, not one per
/// spectator, and the players' connections are not kept waiting behind that work.
pub struct Frame {
    pub message: ServerMessage,
    json: OnceLock<Utf8Bytes>,
    bincode: OnceLock<Bytes>,
}

impl Frame {
    pub fn new(message: ServerMessage) -> Outbound {
        Arc::new(Frame {
            message,
            json: OnceLock::new(),
            bincode: OnceLock::new(),
        })
    }

    /// The websocket message in the codec asked for, encoded by the first connection that
    /// needs it and shared by the rest.
    pub fn encoded(&self, json: bool) -> Message {
        if json {
            Message::Text(
                self.json
                    .get_or_init(|| protocol::wire::to_json(&self.message).into())
                    .clone(),
            )
        } else {
            Message::Binary(
                self.bincode
                    .get_or_init(|| protocol::wire::to_bincode(&self.message).into())
                    .clone(),
            )
        }
    }
}

/// A message on its way to one connection. Shared, because a broadcast sends the same one to
/// many viewers with the same projection.
pub type Outbound = Arc<Frame>;

/// What a connection may ask of a game.
pub enum Request {
    /// Join as `viewer`; the task answers with a subscriber id and from then on sends this
    /// viewer's messages to `out`, starting with `Joined`.
    Join {
        viewer: Viewer,
        since: Option<u64>,
        /// The signed head of this viewer's own stream the client was last sent
        /// (`protocol::record::receipt`); its sequence is then the `since`.
        receipt: Option<SignedHead>,
        out: mpsc::Sender<Outbound>,
        /// Frames the connection has written so far, counted by the connection: how the game
        /// tells a reader that is slow from one that has stopped (`Subscriber::backlog`).
        progress: Arc<AtomicU64>,
        reply: oneshot::Sender<Result<u64, (ErrorCode, String)>>,
    },
    /// A side's command; the reply (`Accepted`/`Refused`) goes to the subscriber's `out`.
    /// `key`: the client's exactly-once key, if it gave one (`crate::once`).
    Command {
        subscriber: u64,
        side: Side,
        id: u64,
        command: Command,
        key: Option<u64>,
    },
    GetState {
        viewer: Viewer,
        reply: oneshot::Sender<ServerMessage>,
    },
    GetLog {
        viewer: Viewer,
        from: u64,
        reply: oneshot::Sender<ServerMessage>,
    },
    GetStateAt {
        viewer: Viewer,
        version: u64,
        reply: oneshot::Sender<ServerMessage>,
    },
    GetRecord {
        viewer: Viewer,
        from: u64,
        reply: oneshot::Sender<ServerMessage>,
    },
    /// A page of the stored log for an export; only once the game is over.
    GetExport {
        from: u64,
        reply: oneshot::Sender<ServerMessage>,
    },
    /// LOS between two hexes from the map alone (`ClientMessage::Los`); changes nothing.
    Los {
        from: protocol::Hex,
        to: protocol::Hex,
        reply: oneshot::Sender<ServerMessage>,
    },
    Leave {
        subscriber: u64,
    },
    /// What a side's command would do, decided and not done (`ClientMessage::Preview`).
    Preview {
        side: Side,
        id: u64,
        command: Command,
        reply: oneshot::Sender<ServerMessage>,
    },
    /// Asked by the registry to make room for another game: the task ends, answering `true`,
    /// if nobody is connected to it and its [`Unloader`] lets it go; else it answers `false`.
    /// Taken from the inbox between requests, so no command is ever cut short.
    Unload {
        reply: oneshot::Sender<bool>,
    },
    /// This node no longer owns the game (its lease lapsed or was taken): every viewer is told
    /// to reconnect, and the task ends.
    Relinquish {
        why: String,
    },
}

/// Asked by an idle game task whether it may end: the registry's check that no connection
/// holds or is fetching the game's handle, and, if none does, its forgetting of the task, so
/// the next join loads the game afresh from its log (with the metadata bytes as the task holds
/// them, its rollback mark included).
/// Called by the task between requests, so it is never in the middle of a command.
pub type Unloader = Box<dyn Fn(Vec<u8>) -> bool + Send + Sync>;

/// How a connection reaches a game.
#[derive(Clone)]
pub struct GameHandle {
    /// The players' inbox, always served first: their commands, joins, reads and leaves.
    pub inbox: mpsc::Sender<Request>,
    /// The audience's inbox: spectators' joins and reads, served when no player waits.
    pub reads: mpsc::Sender<Request>,
    pub meta: Arc<GameMeta>,
}

impl GameHandle {
    /// The inbox for `viewer`'s requests.
    pub fn inbox_for(&self, viewer: Viewer) -> &mpsc::Sender<Request> {
        match viewer {
            Viewer::Side(_) => &self.inbox,
            Viewer::Spectator => &self.reads,
        }
    }
}

/// Frames beyond a subscriber's queue kept by the game while its reader is still reading. They
/// are shared frames (one per broadcast for all spectators), so each costs a pointer here; this
/// bounds what a reader that reads, but slower than the game plays, can hold.
pub const OUTBOUND_BACKLOG_MAX: usize = 4_096;

/// How long a reader whose queue is full may go without writing a single frame before it is
/// cut off. Judging by progress, not by how full its queue is at one instant, is what keeps a
/// watcher that is merely not scheduled for a moment (a loaded machine) from being cut off with
/// the one that has stopped reading.
pub const SLOW_READER_GRACE: Duration = Duration::from_secs(10);

/// How often the game retries sending a backlog, and checks for stalled readers.
const BACKLOG_TICK: Duration = Duration::from_millis(50);

/// Largest opening position (and `GameCreated` event) a scenario may make, as any viewer sees
/// it in JSON, the larger encoding: half of `FRAME_BYTES_MAX`. The scenario limits bound a
/// file's size, not what it unfolds to (an `[[area]]` line is a thousand hexes, a name of
/// escapes grows six-fold), so a scenario is checked against this when created: a position that
/// fits half a frame leaves the other half for the rest of a `joined` frame or a log page.
pub const SNAPSHOT_BYTES_MAX: usize = FRAME_BYTES_MAX / 2;

/// Bytes of events (JSON) a log or record page carries besides its first event; a page stops
/// early rather than pass it, and the client asks for the next from where it stopped. With
/// the first event at most [`SNAPSHOT_BYTES_MAX`], every page fits a frame.
pub const PAGE_BYTES_MAX: usize = FRAME_BYTES_MAX / 2 - 4 * 1024;

/// Refuses a scenario whose opening position, or `GameCreated` event (whole, as stored and
/// exported: twice its bincode in hex), would not fit [`SNAPSHOT_BYTES_MAX`] for some viewer.
pub fn check_frames(scenario: &protocol::Scenario) -> Result<(), String> {
    let created = Event::GameCreated {
        scenario: scenario.clone(),
    };
    let game = Game::replay([&created]).map_err(|e| e.to_string())?;
    let envelope = 2 * protocol::wire::to_bincode(&created).len();
    // A review shows the whole game, unprojected.
    let whole = protocol::wire::to_json(&game).len();
    for viewer in VIEWERS {
        let state = protocol::wire::to_json(&game.project(viewer)).len();
        let event = game
            .view_event(viewer, &created)
            .map_or(0, |e| protocol::wire::to_json(&e).len());
        let largest = state.max(event).max(envelope).max(whole);
        if largest > SNAPSHOT_BYTES_MAX {
            return Err(format!(
                "its opening position is {largest} bytes encoded; a position must fit half a frame ({SNAPSHOT_BYTES_MAX} bytes; frames are at most {FRAME_BYTES_MAX}): use shorter names and ids or a smaller map"
            ));
        }
    }
    Ok(())
}

/// The limits a game task enforces itself.
#[derive(Clone, Debug)]
pub struct GameLimits {
    pub spectators_max: usize,
    pub seat_connections_max: usize,
    pub slow_reader_grace: Duration,
    pub audience_reads_per_second_max: u32,
    /// Idle time after which the game asks its [`Unloader`] to let it go.
    pub unload_after_idle: Duration,
    /// The node this task runs on, named in `joined` and `state` as the game's owner.
    pub owner: Option<String>,
    /// The server's time, given with every command and watched by the clock's timer.
    pub time: crate::clock::TimeSource,
}

impl GameLimits {
    pub fn of(config: &Config) -> GameLimits {
        GameLimits {
            spectators_max: config.spectators_per_game_max,
            seat_connections_max: config.seat_connections_max,
            slow_reader_grace: config.slow_reader_grace,
            audience_reads_per_second_max: config.audience_reads_per_second_max,
            unload_after_idle: config.game_unload_after_idle,
            owner: config.node_id.clone(),
            time: config.time.clone(),
        }
    }
}

struct Subscriber {
    id: u64,
    viewer: Viewer,
    out: mpsc::Sender<Outbound>,
    progress: Arc<AtomicU64>,
    /// Frames that did not fit `out`, oldest first; sent before anything newer.
    backlog: VecDeque<Outbound>,
    /// Since when the backlog has waited, and the reader's progress then.
    waiting: Option<(Instant, u64)>,
}

/// What became of a frame handed to a subscriber.
#[derive(PartialEq, Eq)]
enum Delivery {
    Sent,
    /// The reader has stopped, or its backlog is full: cut it off.
    Stalled,
}

impl Subscriber {
    /// Moves what it can of the backlog into the queue.
    fn flush(&mut self) -> Delivery {
        while let Some(frame) = self.backlog.pop_front() {
            match self.out.try_send(frame) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(frame)) => {
                    self.backlog.push_front(frame);
                    break;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => return Delivery::Stalled,
            }
        }
        if self.backlog.is_empty() {
            self.waiting = None;
        }
        Delivery::Sent
    }

    fn deliver(&mut self, frame: Outbound) -> Delivery {
        if self.flush() == Delivery::Stalled {
            return Delivery::Stalled;
        }
        if self.backlog.is_empty() {
            match self.out.try_send(frame) {
                Ok(()) => return Delivery::Sent,
                Err(mpsc::error::TrySendError::Closed(_)) => return Delivery::Stalled,
                Err(mpsc::error::TrySendError::Full(frame)) => self.backlog.push_back(frame),
            }
        } else {
            self.backlog.push_back(frame);
        }
        if self.backlog.len() > OUTBOUND_BACKLOG_MAX {
            return Delivery::Stalled;
        }
        Delivery::Sent
    }

    /// Whether the reader has written nothing for `grace` while frames waited for it.
    fn stalled(&mut self, now: Instant, grace: Duration) -> bool {
        if self.backlog.is_empty() {
            return false;
        }
        let progress = self.progress.load(Ordering::Relaxed);
        match self.waiting {
            Some((since, seen)) if seen == progress => now.duration_since(since) >= grace,
            _ => {
                self.waiting = Some((now, progress));
                false
            }
        }
    }
}

pub struct GameTask {
    key: GameKey,
    /// The game, its log with who issued each event, and its dice (`protocol::referee`).
    referee: Referee,
    /// The hash of each event's envelope, in the referee's order: the log's head at each of
    /// its versions (for exports; never sent to a viewer).
    log: Vec<LogHash>,
    /// Every viewer's own stream: the events it may know, projected once, numbered and
    /// hashed per viewer (`protocol::record::stream`). Built from the log when something first
    /// reads them (`GameTask::streams`), then kept in step with every event appended: a game
    /// loaded and never joined (a restore's check, a replay) projects nothing.
    streams: OnceLock<Following>,
    /// Token digests and dice seeds, rewritten when a new seed is drawn.
    meta: GameMeta,
    store: Arc<dyn EventStore>,
    /// Set when a client showed it was sent a version past this log's end, or a signed head
    /// this log does not reach: the log was rolled back (a restored old copy, a disk that lost
    /// writes). Says what is missing; from then on the game refuses play and joins, and its log
    /// is left as it is for the operator. Stored with the game's metadata (`log::GameMarks`),
    /// so a restart does not forget it.
    rolled_back: Option<String>,
    subscribers: Vec<Subscriber>,
    /// Set when the task must end: another writer fenced it off, or its node gave the game up.
    stopped: bool,
    next_subscriber: u64,
    limits: GameLimits,
    checkpoints: Checkpoints,
    /// The audience's reads, all spectators together.
    audience_reads: crate::budget::RateLimit,
    /// The keys of the accepted commands, per seat, and what each made.
    remembered: Remembered,
    /// What signs this game's receipts (in batches with other games') and exports
    /// (`docs/review.md`).
    signer: Option<crate::signer::Signer>,
    /// Lets the game go when idle (`crate::registry`); without one it runs until its handles
    /// are gone.
    unloader: Option<Unloader>,
    /// What the scenario lets a command's frames hold (`crate::frames`), measured when the
    /// first command asks (`GameTask::frame_bounds`).
    frame_bounds: OnceLock<crate::frames::Bounds>,
    /// A clock deadline whose expiry could not be recorded: the timer is not armed for it
    /// again.
    clock_failed: Option<u64>,
}

/// Positions kept along the log so that `get_state_at` replays a bounded stretch of it, not the
/// whole game: an audience asking for past positions costs the game task little, however long
/// the game. At most [`CHECKPOINTS_MAX`] are kept; when more would be, every other is dropped
/// and the spacing doubles, so memory stays bounded and a replay at most a few hundred events
/// for any game a player could play.
struct Checkpoints {
    every: u64,
    games: Vec<Game>,
}

/// Positions kept per game for `get_state_at`.
pub const CHECKPOINTS_MAX: usize = 32;

/// The first spacing of checkpoints, in versions.
const CHECKPOINT_EVERY: u64 = 64;

impl Default for Checkpoints {
    fn default() -> Checkpoints {
        Checkpoints {
            every: CHECKPOINT_EVERY,
            games: vec![],
        }
    }
}

impl Checkpoints {
    /// Keeps `game` if its version is on the spacing.
    fn keep(&mut self, game: &Game) {
        if !game.version.is_multiple_of(self.every) {
            return;
        }
        self.games.push(game.clone());
        if self.games.len() > CHECKPOINTS_MAX {
            self.every *= 2;
            let every = self.every;
            self.games.retain(|g| g.version.is_multiple_of(every));
        }
    }

    /// The position at `version`, from the nearest checkpoint at or before it.
    fn replay(&self, entries: &[protocol::chain::Entry], version: u64) -> Game {
        let base = self.games.iter().rev().find(|g| g.version <= version);
        match base {
            Some(base) => {
                let mut game = base.clone();
                for entry in &entries[base.version as usize..version as usize] {
                    protocol::apply(&mut game, &entry.event);
                }
                game
            }
            None => Game::replay(entries[..version as usize].iter().map(|e| &e.event))
                .expect("a loaded log starts with GameCreated"),
        }
    }
}

impl GameTask {
    /// A game rebuilt from its verified log: every event applied in order, as it was live,
    /// with the dice seeds from its metadata.
    pub fn from_log(
        key: GameKey,
        verified: log::VerifiedLog,
        meta: GameMeta,
        store: Arc<dyn EventStore>,
        limits: GameLimits,
    ) -> Result<GameTask, String> {
        // The envelopes' hashes are the log's heads as they are, one per event.
        let log::VerifiedLog {
            entries,
            hashes: log,
        } = verified;
        if log.len() != entries.len() {
            return Err("the log has a different number of hashes than of events".into());
        }
        let mut entries = entries.into_iter();
        let first = entries.next().ok_or("the log is empty")?;
        if !matches!(first.event, Event::GameCreated { .. }) {
            return Err("the log does not start with GameCreated".into());
        }
        let mut referee = Referee::new(first, meta.seeds.clone())?;
        referee.reserve(entries.len());
        let mut checkpoints = Checkpoints::default();
        for entry in entries {
            referee
                .push_entry(entry)
                .map_err(|e| format!("the dice in its log are damaged at {e}"))?;
            checkpoints.keep(referee.game());
        }
        referee.check_seed()?;
        let remembered = Remembered::from_log(referee.entries());
        Ok(GameTask {
            key,
            referee,
            log,
            streams: OnceLock::new(),
            meta,
            store,
            subscribers: vec![],
            stopped: false,
            rolled_back: None,
            next_subscriber: 1,
            audience_reads: crate::budget::RateLimit::new(
                limits.audience_reads_per_second_max,
                2 * limits.audience_reads_per_second_max,
            ),
            limits,
            checkpoints,
            remembered,
            signer: None,
            unloader: None,
            frame_bounds: OnceLock::new(),
            clock_failed: None,
        })
    }

    /// A game found rolled back before (its stored `log::GameMarks`): it stays refused.
    pub fn marked(mut self, marks: log::GameMarks) -> GameTask {
        self.rolled_back = marks.rolled_back;
        self
    }

    /// The head of `viewer`'s own stream now, signed: the receipt sent with `joined` and
    /// `accepted`. It covers the game, the viewer's own sequence and its `StreamHash` — what
    /// the viewer was shown, nothing of the log's length or head. Signed in a batch with the
    /// receipts other games ask for at the same moment (`crate::signer`); this task asks for
    /// one receipt at a time, so no batch ever holds two heads of this game.
    async fn receipt(&self, viewer: Viewer) -> Option<SignedHead> {
        let version = self.version(viewer);
        let signer = self.signer.as_ref()?;
        let head = Head::of_stream(
            &log::game_id(&self.key),
            viewer,
            version,
            self.streams().hash(viewer, version),
        );
        Some(signer.sign(head).await)
    }

    /// Signs this game's exports and its viewers' heads with `signer`'s key.
    pub fn signed_by(mut self, signer: crate::signer::Signer) -> GameTask {
        self.signer = Some(signer);
        self
    }

    /// Ends the game when idle if `unloader` lets it go.
    pub fn unloaded_by(mut self, unloader: Unloader) -> GameTask {
        self.unloader = Some(unloader);
        self
    }

    /// Whether nobody is connected (a subscriber whose connection has gone is forgotten here)
    /// and the game may be let go. A game marked rolled back goes too: its mark goes with
    /// the metadata handed to the unloader, so a marked game cannot pin a place in memory.
    fn idle(&mut self) -> bool {
        self.subscribers.retain(|s| !s.out.is_closed());
        self.subscribers.is_empty()
    }

    /// The metadata as this task holds it, its rollback mark after it.
    fn meta_marked(&self) -> Vec<u8> {
        self.meta.encode_marked(&log::GameMarks {
            rolled_back: self.rolled_back.clone(),
        })
    }

    /// Ends this task if it is idle and its unloader lets it go.
    fn unload(&mut self) -> bool {
        let gone = self.idle()
            && self
                .unloader
                .as_ref()
                .is_some_and(|let_go| let_go(self.meta_marked()));
        if gone {
            METRICS.games_unloaded.inc();
            debug!(game = %log::game_id(&self.key), "idle game unloaded");
        }
        gone
    }

    fn game(&self) -> &Game {
        self.referee.game()
    }

    /// What the scenario lets a command's frames hold, measured once (it encodes the whole
    /// scenario).
    fn frame_bounds(&self) -> crate::frames::Bounds {
        *self
            .frame_bounds
            .get_or_init(|| crate::frames::Bounds::of(&self.game().scenario))
    }

    /// Every viewer's stream, built from the whole log the first time it is asked for: the
    /// same streams as pushing each event as it was appended (`Streams::of_log`).
    fn streams(&self) -> &Streams {
        self.streams
            .get_or_init(|| {
                Following::of_log(self.referee.entries().iter().map(|e| &e.event))
                    .expect("a loaded log starts with GameCreated")
            })
            .streams()
    }

    /// The log's head: the hash of its last envelope (for exports only).
    fn head(&self) -> LogHash {
        *self.log.last().expect("a log starts with GameCreated")
    }

    /// How many events `viewer` has received: its stream's length, the only version it is told.
    fn version(&self, viewer: Viewer) -> u64 {
        self.streams().len(viewer)
    }

    /// The viewer's projection now, carrying its own version.
    fn projection(&self, viewer: Viewer) -> Game {
        let mut state = self.game().project(viewer);
        state.version = self.version(viewer);
        state
    }

    pub fn state_hash(&self) -> protocol::StateHash {
        self.game().state_hash()
    }

    /// Runs until every handle to the game is gone. The players' inbox is always served
    /// first; the audience's only when no player's request waits.
    pub async fn run(
        mut self,
        mut players: mpsc::Receiver<Request>,
        mut audience: mpsc::Receiver<Request>,
    ) {
        METRICS.games_loaded.inc();
        let mut tick = tokio::time::interval(BACKLOG_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let idle_after = self.limits.unload_after_idle;
        let idle = tokio::time::sleep(idle_after);
        tokio::pin!(idle);
        loop {
            let backlogged = self.subscribers.iter().any(|s| !s.backlog.is_empty());
            // The running clock's end, if the game has one (`crate::clock`).
            let clock_deadline =
                crate::clock::deadline(self.game()).filter(|d| Some(*d) != self.clock_failed);
            let request = tokio::select! {
                biased;
                r = players.recv() => r,
                r = audience.recv() => r.map(|r| self.within_audience_budget(r)),
                _ = tick.tick(), if backlogged => {
                    self.flush_backlogs();
                    continue;
                }
                _ = crate::clock::wait_for(&self.limits.time, clock_deadline) => {
                    self.clock_ran_out().await;
                    continue;
                }
                _ = &mut idle, if self.unloader.is_some() => {
                    if self.unload() {
                        break;
                    }
                    idle.as_mut().reset(tokio::time::Instant::now() + idle_after);
                    continue;
                }
            };
            let Some(request) = request else { break };
            idle.as_mut()
                .reset(tokio::time::Instant::now() + idle_after);
            if let Request::Unload { reply } = request {
                let gone = self.unload();
                let _ = reply.send(gone);
                if gone {
                    break;
                }
                continue;
            }
            self.serve(request).await;
            if self.stopped {
                break;
            }
        }
        METRICS.games_loaded.dec();
        debug!(game = %log::game_id(&self.key), "game task ends");
    }

    /// The running clock ran out: the server records it (`ClockExpired`) in the name of the
    /// side whose clock it is, as an `ExpireClock` decided like any command, so a verifier
    /// checks it the same way. A command that handed the clock over first makes it refused,
    /// and the timer is armed again for the new deadline.
    async fn clock_ran_out(&mut self) {
        let Some(side) = self.game().timing.as_deref().and_then(|t| t.running) else {
            return;
        };
        let (version, deadline) = (self.game().version, crate::clock::deadline(self.game()));
        self.command(0, side, 0, Command::ExpireClock, None).await;
        if self.game().version == version {
            // Not recorded (a game marked rolled back, a store that failed): not tried again
            // for this deadline, or the timer would spin; the next command re-arms it.
            warn!(game = %log::game_id(&self.key), "a clock ran out and could not be recorded");
            self.clock_failed = deadline;
        }
    }

    /// The audience's request, or `Leave` (nothing to do) once it is answered `limit_reached`
    /// because the audience's read budget is spent.
    fn within_audience_budget(&mut self, request: Request) -> Request {
        let read = !matches!(request, Request::Join { .. } | Request::Leave { .. });
        if !read || self.audience_reads.allow() {
            return request;
        }
        let reply = match request {
            Request::GetState { reply, .. }
            | Request::GetLog { reply, .. }
            | Request::GetStateAt { reply, .. }
            | Request::GetRecord { reply, .. }
            | Request::GetExport { reply, .. } => reply,
            other => return other,
        };
        METRICS.refused("audience_reads_per_second_max");
        let _ = reply.send(ServerMessage::Error {
            code: ErrorCode::LimitReached,
            message: format!(
                "this game's audience asks more than {} reads a second together; ask again shortly",
                self.limits.audience_reads_per_second_max
            ),
        });
        Request::Leave { subscriber: 0 }
    }

    async fn serve(&mut self, request: Request) {
        {
            match request {
                Request::Join {
                    viewer,
                    since,
                    receipt,
                    out,
                    progress,
                    reply,
                } => {
                    self.join(viewer, since, receipt, out, progress, reply)
                        .await
                }
                Request::Command {
                    subscriber,
                    side,
                    id,
                    command,
                    key,
                } => self.command(subscriber, side, id, command, key).await,
                Request::GetState { viewer, reply } => {
                    let _ = reply.send(self.state_message(viewer));
                }
                Request::GetLog {
                    viewer,
                    from,
                    reply,
                } => {
                    let _ = reply.send(self.log_page(viewer, from));
                }
                Request::GetStateAt {
                    viewer,
                    version,
                    reply,
                } => {
                    let _ = reply.send(self.state_at(viewer, version));
                }
                Request::GetRecord {
                    viewer,
                    from,
                    reply,
                } => {
                    let _ = reply.send(self.record_page(viewer, from));
                }
                Request::GetExport { from, reply } => self.export_page(from, reply),
                Request::Los { from, to, reply } => {
                    let _ = reply.send(protocol::wire::los_answer(self.game(), from, to));
                }
                Request::Leave { subscriber } => {
                    self.subscribers.retain(|s| s.id != subscriber);
                }
                Request::Preview {
                    side,
                    id,
                    command,
                    reply,
                } => {
                    let _ = reply.send(self.preview(side, id, command));
                }
                // Taken in `run`, between requests.
                Request::Unload { reply } => {
                    let _ = reply.send(false);
                }
                Request::Relinquish { why } => self.relinquish(&why),
            }
        }
    }

    /// Sends what waits in backlogs, and cuts off readers that have stopped.
    fn flush_backlogs(&mut self) {
        let now = Instant::now();
        let grace = self.limits.slow_reader_grace;
        let stalled: Vec<u64> = self
            .subscribers
            .iter_mut()
            .filter_map(|s| {
                (s.flush() == Delivery::Stalled || s.stalled(now, grace)).then_some(s.id)
            })
            .collect();
        self.drop_subscribers(&stalled);
    }

    /// Event `seq` of the viewer's stream.
    fn sequenced(&self, viewer: Viewer, seq: u64) -> Sequenced {
        let entry = &self.streams().of(viewer)[(seq - 1) as usize];
        Sequenced {
            seq,
            viewed: entry.viewed.clone(),
            hash: entry.hash,
        }
    }

    fn state_message(&self, viewer: Viewer) -> ServerMessage {
        let state = self.projection(viewer);
        ServerMessage::State {
            version: state.version,
            state_hash: state.state_hash(),
            head: self.streams().hash(viewer, state.version),
            state: Box::new(state),
            owner: self.limits.owner.clone(),
            clocks: crate::clock::view(self.game(), self.limits.time.now_ms()),
        }
    }

    /// The numbers of the viewer's stream a page of the log or the record starting at `from`
    /// holds.
    fn page(&self, viewer: Viewer, from: u64) -> std::ops::RangeInclusive<u64> {
        let from = from.max(1);
        from..=self
            .version(viewer)
            .min(from.saturating_add(LOG_PAGE_EVENTS_MAX - 1))
    }

    fn log_page(&self, viewer: Viewer, from: u64) -> ServerMessage {
        ServerMessage::Log {
            version: self.version(viewer),
            events: within_page(
                self.page(viewer, from)
                    .map(|seq| self.sequenced(viewer, seq)),
            ),
        }
    }

    fn record_page(&self, viewer: Viewer, from: u64) -> ServerMessage {
        let stream = self.streams().of(viewer);
        let sides = protocol::record::words::Sides::of(&self.game().scenario);
        let entries = within_page(self.page(viewer, from).map(|seq| {
            let entry = &stream[(seq - 1) as usize];
            RecordEntry {
                seq,
                event: entry.viewed.event.clone(),
                text: entry.text(&sides),
                when: entry.when(&sides),
            }
        }));
        ServerMessage::Record {
            version: self.version(viewer),
            entries,
        }
    }

    /// The position after the viewer's event `version` (kept within 1 and its last), rebuilt
    /// by replaying the log up to that event through `apply` as any replay does, then
    /// projected for `viewer` as it was then.
    fn state_at(&self, viewer: Viewer, version: u64) -> ServerMessage {
        let version = version.clamp(1, self.version(viewer));
        let at = self
            .streams()
            .at(viewer, version)
            .expect("every viewer's stream starts with GameCreated");
        let game = self.checkpoints.replay(self.referee.entries(), at);
        let mut state = game.project(viewer);
        state.version = version;
        ServerMessage::State {
            version,
            state_hash: state.state_hash(),
            state: Box::new(state),
            head: self.streams().hash(viewer, version),
            owner: self.limits.owner.clone(),
            // A past position is shown without clocks: they are the game's now.
            clocks: None,
        }
    }

    async fn join(
        &mut self,
        viewer: Viewer,
        since: Option<u64>,
        receipt: Option<SignedHead>,
        out: mpsc::Sender<Outbound>,
        progress: Arc<AtomicU64>,
        reply: oneshot::Sender<Result<u64, (ErrorCode, String)>>,
    ) {
        // Seats and audience have separate quotas: spectators can never fill a player's place.
        let alike = self
            .subscribers
            .iter()
            .filter(|s| s.viewer == viewer)
            .count();
        let (limit, rule, what) = match viewer {
            Viewer::Spectator => (
                self.limits.spectators_max,
                "spectators_per_game_max",
                "spectators (the per-game limit)",
            ),
            Viewer::Side(_) => (
                self.limits.seat_connections_max,
                "seat_connections_max",
                "connections on this seat (the per-seat limit)",
            ),
        };
        if alike >= limit {
            METRICS.refused(rule);
            let _ = reply.send(Err((
                ErrorCode::LimitReached,
                format!("this game already has {limit} {what}"),
            )));
            return;
        }
        // Every number a viewer holds is its own stream's: a claim past its end means events
        // it was sent are missing here.
        let version = self.version(viewer);
        if let Some(receipt) = receipt {
            // A signed head is proof the server sent it: checked against this viewer's stream,
            // from anyone who holds one (a spectator's too).
            let trusted = self.signer.as_ref().map(|s| s.public());
            let checked = trusted
                .ok_or_else(|| Mismatch::Signature("this server signs no heads".into()))
                .and_then(|trusted| {
                    protocol::record::receipt::check(
                        &receipt,
                        &trusted,
                        &log::game_id(&self.key),
                        Some(viewer),
                        self.streams(),
                    )
                });
            match checked {
                Ok(_) => {}
                Err(mismatch) if mismatch.is_rollback() => {
                    self.flag_rollback(viewer, &mismatch.to_string()).await
                }
                Err(mismatch) => {
                    warn!(game = %log::game_id(&self.key), %mismatch, "a join's receipt is not this server's for this game and viewer");
                    let _ = reply.send(Err((
                        ErrorCode::BadReceipt,
                        format!("the receipt you sent is not one this server signed for you in this game: {mismatch}"),
                    )));
                    return;
                }
            }
        } else if let Some(held) =
            since.filter(|held| *held > version && self.rolled_back.is_none())
        {
            // A bare version is a claim, not evidence: anyone holding a token (a spectator
            // link is shared widely) could make one up. Only a signed receipt can mark a game
            // rolled back; this claim is refused to this connection alone, and the operator's
            // log is not alarmed by it.
            debug!(game = %log::game_id(&self.key), ?viewer, held, stored = version, "a join claims a version past its stream's end, with no receipt");
            let _ = reply.send(Err((
                ErrorCode::BeyondEnd,
                format!("you claim version {held} of your stream, but it ends at version {version} here; nothing is marked: if this server sent you later events, show its receipt for them (`join_with_receipt`)"),
            )));
            return;
        }
        if let Some(why) = &self.rolled_back {
            let _ = reply.send(Err((ErrorCode::RolledBack, why.clone())));
            return;
        }
        let projection = self.projection(viewer);
        // Resume from `since` when the client holds a version we have and the catch-up fits
        // its queue; otherwise — too far behind, or a version we never had — a fresh snapshot.
        let resume_from = since
            .filter(|s| *s >= 1 && *s <= version && ((version - *s) as usize) < out.capacity());
        let mut first = vec![Frame::new(ServerMessage::Joined {
            game: log::game_id(&self.key),
            viewer,
            version,
            state_hash: projection.state_hash(),
            state: resume_from.is_none().then(|| Box::new(projection)),
            head: self.streams().hash(viewer, version),
            dice_commitment: self.referee.commitment(),
            signed: self.receipt(viewer).await,
            owner: self.limits.owner.clone(),
            clocks: crate::clock::view(self.game(), self.limits.time.now_ms()),
        })];
        if let Some(since) = resume_from {
            first.extend(
                (since + 1..=version)
                    .map(|seq| Frame::new(ServerMessage::Event(self.sequenced(viewer, seq)))),
            );
        }
        for message in first {
            if out.try_send(message).is_err() {
                let _ = reply.send(Err((ErrorCode::LimitReached, "queue full".into())));
                return;
            }
        }
        let id = self.next_subscriber;
        self.next_subscriber += 1;
        self.subscribers.push(Subscriber {
            id,
            viewer,
            out,
            progress,
            backlog: VecDeque::new(),
            waiting: None,
        });
        let _ = reply.send(Ok(id));
    }

    /// A client showed it was sent what this log no longer has (`what`: a version past the
    /// viewer's stream, or a signed head the stream does not pass through). Never served as a
    /// fresh start (later commands would reuse sequence numbers the client holds other events
    /// for): the game is marked — in its stored metadata as well, so a restart keeps it
    /// refused — and the operator told.
    async fn flag_rollback(&mut self, viewer: Viewer, what: &str) {
        let id = log::game_id(&self.key);
        if self.rolled_back.is_some() {
            // Marked already: the first finding is the one kept and told.
            warn!(game = %id, ?viewer, what, "another client shows the rollback of a game marked rolled back");
            return;
        }
        error!(
            game = %id,
            ?viewer,
            what,
            "ROLLBACK: a client was sent events this server no longer has as they were; the game stops taking commands. Restore it from a backup (`asl-server restore`)"
        );
        let why = format!(
            "game `{id}` was rolled back: {what}; play is stopped until the operator restores the game from a backup"
        );
        let marks = log::GameMarks {
            rolled_back: Some(why.clone()),
        };
        if let Err(e) = self
            .store
            .put_meta(&self.key, self.meta.encode_marked(&marks))
            .await
        {
            // The game is refused all the same; only a restart could forget it.
            error!(game = %id, error = %e, "the rollback mark could not be stored; the game is refused until restart, and must be checked again then");
        }
        self.rolled_back = Some(why);
    }

    async fn command(
        &mut self,
        subscriber: u64,
        side: Side,
        id: u64,
        command: Command,
        key: Option<u64>,
    ) {
        if let Some(why) = &self.rolled_back {
            let refused = Frame::new(ServerMessage::Error {
                code: ErrorCode::RolledBack,
                message: format!("command {id} not taken: {why}"),
            });
            self.send_to(subscriber, refused);
            return;
        }
        // Sent again: answered with what it made the first time, and nothing is decided.
        if let Some(made) = key.and_then(|k| self.remembered.recall(side, k)) {
            if !self.same_command(side, &made, &command) {
                // Another command under a used key: answering with the old events would tell
                // the client its new command ran when it never did.
                let refused = Frame::new(ServerMessage::Error {
                    code: ErrorCode::KeyReused,
                    message: format!(
                        "command {id} not taken: its key was already used by another command of yours, accepted as events {}..={} of the log; give a new command a new key",
                        made.first, made.last
                    ),
                });
                self.send_to(subscriber, refused);
                return;
            }
            debug!(game = %log::game_id(&self.key), id, "command sent again; answered from the log");
            // The events as the actor's own stream holds them, numbered as it numbers them.
            let viewer = Viewer::Side(side);
            let first = self.streams().seq_at_or_before(viewer, made.first - 1) + 1;
            let last = self.streams().seq_at_or_before(viewer, made.last);
            let version = self.version(viewer);
            let again = Frame::new(ServerMessage::Accepted {
                id,
                version,
                events: (first..=last)
                    .map(|seq| self.sequenced(viewer, seq))
                    .collect(),
                head: self.streams().hash(viewer, version),
                signed: self.receipt(viewer).await,
            });
            self.send_to(subscriber, again);
            return;
        }
        // Dice from the committed seed and the players' contributions so far, starting at the
        // game's next draw (`protocol::referee`, `docs/dice.md`).
        METRICS.commands.inc();
        let sent = key.map(|_| once::digest(&command));
        // Event numbers a player gives are its own stream's; the log has its own (and a
        // refusal speaks the player's again).
        let viewer = Viewer::Side(side);
        let result = self.command_for_rules(side, command).and_then(|command| {
            let now = Some(self.limits.time.now_ms());
            self.referee
                .decide_at(side, &command, &mut random_bytes::<32>, now)
        });
        let decision = match result {
            Ok(decision) => decision,
            Err(violation) => {
                let violation = self.refusal_for(viewer, violation);
                debug!(game = %log::game_id(&self.key), %violation, "command refused");
                let refused = Frame::new(ServerMessage::Refused {
                    id,
                    version: self.version(Viewer::Side(side)),
                    violation,
                });
                self.send_to(subscriber, refused);
                return;
            }
        };

        // Durable first: encode the chain, append, and only then apply and tell anyone. A new
        // seed is handed to the store before the events that commit to it, so no restart can
        // find a commitment whose seed was lost.
        let first_seq = self.game().version + 1;
        let mut entries = decision.entries(first_seq);
        let events = entries.iter().map(|e| &e.event);
        if let Err(why) = crate::frames::check_command(self.game(), events, self.frame_bounds()) {
            self.too_large(subscriber, id, &why);
            return;
        }
        // The key goes with the command's first envelope, so a restart still knows it.
        if let Some(first) = entries.first_mut() {
            first.key = key;
        }
        let mut prev = self.head();
        let mut records = Vec::with_capacity(entries.len());
        let mut hashes = Vec::with_capacity(entries.len());
        for entry in &entries {
            let (bytes, hash) = log::seal_entry(prev, random_bytes(), entry);
            records.push(bytes);
            hashes.push(hash);
            prev = hash;
        }
        if let Err(why) = crate::frames::check_envelopes(&records) {
            self.too_large(subscriber, id, &why);
            return;
        }
        let mut meta = None;
        if let Some(seed) = decision.new_seed {
            let mut next = self.meta.clone();
            next.seeds.push(seed);
            meta = Some((self.store.put_meta(&self.key, next.encode()), next, seed));
        }
        // Awaited, not blocked on: while the store's group commit flushes, this task's thread
        // serves other games, whose writes join the next flush.
        METRICS.append_events.observe(records.len() as f64);
        let appending = Instant::now();
        let appended = self.store.append(&self.key, first_seq, records);
        let mut stored = Ok(());
        if let Some((written, next, seed)) = meta {
            stored = written.await;
            if stored.is_ok() {
                self.meta = next;
                self.referee.adopt_seed(seed);
            }
        }
        let stored = stored.and(appended.await);
        METRICS
            .append_seconds
            .observe(appending.elapsed().as_secs_f64());
        if let Err(e) = stored {
            warn!(game = %log::game_id(&self.key), why = %e, "append failed; command not applied");
            if matches!(
                e,
                StoreError::SequenceMismatch { .. } | StoreError::Uncertain(_)
            ) {
                // Another writer holds the log (fenced by the store's sequence check), or the
                // store cannot say what it holds: this task's idea of the game is no longer
                // the log's. Nothing of this command was applied or sent.
                self.relinquish(&format!(
                    "this server node no longer holds game `{}`'s log ({e})",
                    log::game_id(&self.key)
                ));
                return;
            }
            self.send_to(
                subscriber,
                Frame::new(ServerMessage::Error {
                    code: ErrorCode::Storage,
                    message: format!(
                        "the server could not store command {id}; nothing changed ({e})"
                    ),
                }),
            );
            return;
        }

        let logged = entries
            .iter()
            .find_map(|e| e.command.as_ref())
            .map(|issued| once::digest(&issued.command));
        let heard_before = VIEWERS.map(|viewer| self.version(viewer));
        for (entry, hash) in entries.into_iter().zip(hashes) {
            self.log.push(hash);
            self.referee
                .push_entry(entry)
                .expect("a decision keeps the dice scheme");
            self.checkpoints.keep(self.referee.game());
            // Streams not built yet are built from the log, this event included, when read.
            if let Some(following) = self.streams.get_mut() {
                let event = &self.referee.entries().last().expect("just pushed").event;
                following.push(self.referee.game(), event);
            }
        }
        if let Some(key) = key {
            let made = Made {
                first: first_seq,
                last: self.game().version,
                logged,
                sent,
            };
            self.remembered.remember(side, key, made);
        }
        // At `debug`, as a refusal is: one line per command would cost a busy server more
        // than deciding it, and the log itself is the record of every command.
        debug!(game = %log::game_id(&self.key), version = self.game().version, "command accepted");

        // Each viewer's new events, once per viewer class, shared by every subscriber with that
        // view; a viewer who may know none of them is sent nothing at all.
        let heard_now = VIEWERS.map(|viewer| self.version(viewer));
        let new_for = |viewer: Viewer| {
            let i = stream::index(viewer);
            heard_before[i] + 1..=heard_now[i]
        };
        let broadcasts: [Vec<Outbound>; 3] = VIEWERS.map(|viewer| {
            new_for(viewer)
                .map(|seq| Frame::new(ServerMessage::Event(self.sequenced(viewer, seq))))
                .collect()
        });
        // Who hears first: the other player, then the actor (its reply waits for its
        // receipt's signature, signed in a batch with other games': `crate::signer`), then
        // the audience. The other player's connection runs while the receipt is signed, and
        // however large the audience, neither player's frame is queued behind its writes.
        let mut dropped = vec![];
        let mut deliver = |s: &mut Subscriber, frames: &[Outbound]| {
            for m in frames.iter().cloned() {
                if s.deliver(m) == Delivery::Stalled {
                    dropped.push(s.id);
                    break;
                }
            }
        };
        for s in self.subscribers.iter_mut() {
            if s.id != subscriber && matches!(s.viewer, Viewer::Side(_)) {
                deliver(s, &broadcasts[stream::index(s.viewer)]);
            }
        }
        let actor = Viewer::Side(side);
        let accepted = Frame::new(ServerMessage::Accepted {
            id,
            version: self.version(actor),
            events: new_for(actor)
                .map(|seq| self.sequenced(actor, seq))
                .collect(),
            head: self.streams().hash(actor, self.version(actor)),
            signed: self.receipt(actor).await,
        });
        for s in self.subscribers.iter_mut() {
            if s.id == subscriber {
                deliver(s, std::slice::from_ref(&accepted));
            }
        }
        for s in self.subscribers.iter_mut() {
            if s.viewer == Viewer::Spectator {
                deliver(s, &broadcasts[stream::index(s.viewer)]);
            }
        }
        self.drop_subscribers(&dropped);
    }

    /// A side's command as the rules read it: event numbers from its own stream to the log's,
    /// aliases to the units' ids.
    /// Whether `command`, sent again under a remembered key, is the command that key was
    /// accepted with: the same as sent, or (after a reload, when only the log's form is
    /// known) the same once put in the log's ids. A key from before commands were logged
    /// cannot be told, and is taken as the same.
    fn same_command(&self, side: Side, made: &Made, command: &Command) -> bool {
        if made.sent == Some(once::digest(command)) {
            return true;
        }
        match made.logged {
            None => made.sent.is_none(),
            Some(logged) => self
                .command_for_rules(side, command.clone())
                .is_ok_and(|in_log| once::digest(&in_log) == logged),
        }
    }

    fn command_for_rules(
        &self,
        side: Side,
        command: Command,
    ) -> Result<Command, protocol::RuleViolation> {
        self.streams()
            .command_in_log(Viewer::Side(side), command)
            .map(|command| view::command_in_ids(self.game(), side, command))
    }

    /// A refusal in the viewer's words: its own stream's event numbers, aliases for what it
    /// may not name.
    fn refusal_for(
        &self,
        viewer: Viewer,
        mut violation: protocol::RuleViolation,
    ) -> protocol::RuleViolation {
        violation.detail = self.streams().text_in_stream(viewer, &violation.detail);
        violation.detail = view::text_for(self.game(), viewer, &violation.detail);
        violation
    }

    /// What `command` would do for `side`: decided as a command is, with nothing appended,
    /// applied or rolled (`protocol::preview`); a refusal in the same words a command's.
    fn preview(&self, side: Side, id: u64, command: Command) -> ServerMessage {
        let viewer = Viewer::Side(side);
        let outcome = match self.command_for_rules(side, command).and_then(|command| {
            protocol::preview::preview(self.game(), self.referee.entries(), side, &command)
        }) {
            Ok(preview) => PreviewOutcome::Allowed(preview),
            Err(violation) => PreviewOutcome::Refused(self.refusal_for(viewer, violation)),
        };
        ServerMessage::Previewed {
            id,
            version: self.version(viewer),
            outcome,
        }
    }

    /// A page of the stored log from `from`, read from the store off the game's thread. Only
    /// for a finished game: until the end the log holds what each side may not know (hidden
    /// units, the dice seed), and once it is over nothing more is appended, so pages read at
    /// different times agree.
    fn export_page(&self, from: u64, reply: oneshot::Sender<ServerMessage>) {
        let game = self.game();
        if !game.over {
            let _ = reply.send(ServerMessage::Error {
                code: ErrorCode::NotYet,
                message: "a game's log is exported once the game is over; until then it holds what one side may not know".into(),
            });
            return;
        }
        let header = ExportPage {
            game: log::game_id(&self.key),
            version: game.version,
            head: self.head(),
            state_hash: game.state_hash(),
            from: from.clamp(1, game.version),
            envelopes: vec![],
            // The head of the whole log, signed: a verifier with the server's key knows the
            // server vouched for exactly this log.
            signed: self.signer.as_ref().map(|signer| {
                SignedHead::sign(
                    signer.key(),
                    &log::game_id(&self.key),
                    Stream::FullLog,
                    game.version,
                    self.head(),
                )
            }),
        };
        let store = self.store.clone();
        let key = self.key;
        tokio::task::spawn_blocking(move || {
            let answer = match store.load_range(&key, header.from, EXPORT_PAGE_BYTES_MAX) {
                Ok(records) => ServerMessage::Export(ExportPage {
                    envelopes: records.iter().map(|(_, r)| HEXLOWER.encode(r)).collect(),
                    ..header
                }),
                Err(e) => ServerMessage::Error {
                    code: ErrorCode::Storage,
                    message: format!("the log could not be read ({e})"),
                },
            };
            let _ = reply.send(answer);
        });
    }

    /// Refuses command `id`, before anything is stored, because a frame it would make is too
    /// large (`crate::frames`).
    fn too_large(&mut self, subscriber: u64, id: u64, why: &str) {
        METRICS.refused("frame_bytes_max");
        debug!(game = %log::game_id(&self.key), id, %why, "command refused: too large");
        self.send_to(
            subscriber,
            Frame::new(ServerMessage::Error {
                code: ErrorCode::TooLarge,
                message: format!("command {id} not taken: {why}; nothing changed"),
            }),
        );
    }

    /// Tells every viewer to reconnect (`ErrorCode::Moved`) and ends the task: whatever this
    /// task decided and could not store was never acknowledged or broadcast.
    fn relinquish(&mut self, why: &str) {
        warn!(game = %log::game_id(&self.key), why, "this node stops serving the game");
        let ids: Vec<u64> = self.subscribers.iter().map(|s| s.id).collect();
        for id in ids {
            self.send_to(
                id,
                Frame::new(ServerMessage::Error {
                    code: ErrorCode::Moved,
                    message: format!("{why}; reconnect with `since` to resume"),
                }),
            );
        }
        self.stopped = true;
    }

    fn send_to(&mut self, subscriber: u64, message: Outbound) {
        let full = self
            .subscribers
            .iter_mut()
            .find(|s| s.id == subscriber)
            .is_some_and(|s| s.deliver(message) == Delivery::Stalled);
        if full {
            self.drop_subscribers(&[subscriber]);
        }
    }

    /// A subscriber that stopped reading is cut off: dropping its sender closes its queue, and
    /// the connection closes the socket saying why. The game never waits for a slow reader.
    fn drop_subscribers(&mut self, ids: &[u64]) {
        if ids.is_empty() {
            return;
        }
        // A connection that has already gone (its queue closed) is not a slow reader.
        let behind = self
            .subscribers
            .iter()
            .filter(|s| ids.contains(&s.id) && !s.out.is_closed())
            .count();
        if behind > 0 {
            METRICS.slow_readers_dropped.inc_by(behind as u64);
            warn!(game = %log::game_id(&self.key), count = behind, "dropping viewers that fell behind");
        }
        self.subscribers.retain(|s| !ids.contains(&s.id));
    }
}

/// The items of a page, stopping before one that would take the page past [`PAGE_BYTES_MAX`]
/// (the first is always taken).
pub(crate) fn within_page<T: serde::Serialize>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut bytes = 0;
    let mut page = vec![];
    for item in items {
        let size = protocol::wire::to_json(&item).len();
        if !page.is_empty() && bytes + size > PAGE_BYTES_MAX {
            break;
        }
        if !page.is_empty() || size <= PAGE_BYTES_MAX {
            bytes += size;
        }
        page.push(item);
    }
    page
}

/// Randomness for salts, seeds, game keys and tokens, from the operating system.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position rebuilt from a checkpoint is the position replayed from the start, at every
    /// version, while the checkpoints thin out as the game grows.
    #[test]
    fn positions_from_checkpoints_are_the_replayed_positions() {
        let text = include_str!("../../scenarios/b9-41-wall-advantage.toml");
        let scenario =
            protocol::Scenario::from_toml(&text.replace("turns = 2\n", "turns = 30\n")).unwrap();
        let mut entries = vec![protocol::chain::Entry::created(scenario)];
        let mut game = Game::replay(entries.iter().map(|e| &e.event)).unwrap();
        let mut checkpoints = Checkpoints::default();
        let mut dice = protocol::ScriptedDice::default();
        while !game.over && game.version < 3_000 {
            let side = game.acting();
            let command = match &game.wa_chance {
                Some(chance) => (chance.side, protocol::Command::DeclineWallAdvantage),
                None => (side, protocol::Command::Done),
            };
            for event in protocol::decide(&game, command.0, &command.1, &mut dice).unwrap() {
                protocol::apply(&mut game, &event);
                entries.push(protocol::chain::Entry {
                    seq: game.version,
                    by: Some(command.0),
                    first: game.version,
                    key: None,
                    command: None,
                    event,
                });
                checkpoints.keep(&game);
            }
        }
        assert!(game.version > CHECKPOINT_EVERY * 4, "{}", game.version);
        assert!(checkpoints.games.len() <= CHECKPOINTS_MAX);
        for version in (1..=game.version).step_by(7).chain([game.version]) {
            let replayed =
                Game::replay(entries[..version as usize].iter().map(|e| &e.event)).unwrap();
            let from_checkpoint = checkpoints.replay(&entries, version);
            assert_eq!(
                from_checkpoint.state_hash(),
                replayed.state_hash(),
                "at {version}"
            );
        }
    }

    /// A game of the sewer scenario played through a referee as a server plays it: a move
    /// taken back, the German assault group in the sewers (hidden from the Russian), an
    /// adjudication answered, and every step to the end.
    fn played() -> Referee {
        let text = include_str!("../../scenarios/sewer-infiltration.toml");
        let scenario = protocol::Scenario::from_toml(text).unwrap();
        let created = protocol::chain::Entry::created(scenario);
        let mut referee = Referee::new(created, vec![[7; 32]]).unwrap();
        fn play(referee: &mut Referee, side: Side, command: Command) {
            // A new epoch's seed, different for every epoch.
            let mut fresh = || [100 + referee.seeds().len() as u8; 32];
            let decision = referee.decide(side, &command, &mut fresh);
            let decision = decision.unwrap_or_else(|v| panic!("{command:?} refused: {v}"));
            referee.record(decision);
        }
        fn done(referee: &mut Referee) {
            match referee.game().sewer_designation.clone() {
                Some(d) => play(
                    referee,
                    d.defender,
                    Command::DesignateSewer { to: d.options[0] },
                ),
                None => play(referee, referee.game().acting(), Command::Done),
            }
        }
        let hex = |name: &str| name.parse::<protocol::Hex>().unwrap();
        while referee.game().clock.phase() != protocol::phase::Phase::Movement {
            done(&mut referee);
        }
        let moved = Command::Move {
            units: vec!["g3".into()],
            to: hex("20A3"),
        };
        play(&mut referee, Side::A, moved);
        let from = referee.game().version;
        play(&mut referee, Side::A, Command::RequestUndo { from });
        play(&mut referee, Side::B, Command::ConsentToUndo);
        let sewer = Command::SewerMove {
            units: vec!["g1".into(), "g2".into(), "gl".into()],
            to: hex("20E4"),
        };
        play(&mut referee, Side::A, sewer);
        done(&mut referee);
        let pin = Command::Adjudicate {
            unit: "g3".into(),
            outcome: protocol::Outcome::Pin,
            note: "DFPh 4 FP, PTC failed".into(),
        };
        play(&mut referee, Side::B, pin);
        let event = referee.game().version;
        play(&mut referee, Side::A, Command::AcceptAdjudication { event });
        while !referee.game().over {
            done(&mut referee);
        }
        referee
    }

    /// The streams a game loaded from its log builds when first read are the ones pushing
    /// each event as it was appended made: the same entries, numbers and hashes per viewer.
    #[test]
    fn streams_built_when_first_read_are_the_streams_pushed_event_by_event() {
        let referee = played();
        let mut eager = Streams::new();
        let mut before = Game::new(match &referee.entries()[0].event {
            Event::GameCreated { scenario } => scenario.clone(),
            _ => unreachable!(),
        });
        for entry in referee.entries() {
            let mut after = before.clone();
            protocol::apply(&mut after, &entry.event);
            eager.push(&before, &after, &entry.event);
            before = after;
        }
        let mut prev = log::GENESIS;
        let records: Vec<(u64, Vec<u8>)> = referee
            .entries()
            .iter()
            .map(|entry| {
                let (bytes, hash) = log::seal_entry(prev, [entry.seq as u8; 16], entry);
                prev = hash;
                (entry.seq, bytes)
            })
            .collect();
        let meta = GameMeta {
            format: log::META_FORMAT,
            token_digests: [[0; 32]; 3],
            seeds: referee.seeds().to_vec(),
        };
        let store: Arc<dyn EventStore> = Arc::new(crate::store::MemoryStore::new());
        let task = GameTask::from_log(
            [1; 16],
            log::verify(&records).unwrap(),
            meta,
            store,
            GameLimits::of(&Config::default()),
        )
        .unwrap();
        assert_eq!(task.game().state_hash(), referee.game().state_hash());
        assert_eq!(task.head(), prev);
        assert!(task.streams.get().is_none(), "nothing read them yet");
        assert_eq!(*task.streams(), eager);
        // The viewers' streams differ (the Russian sees the group in the sewers by alias),
        // and the taken-back move and the answered adjudication are in them.
        let viewed = |viewer| {
            eager
                .of(viewer)
                .iter()
                .map(|e| &e.viewed)
                .collect::<Vec<_>>()
        };
        assert_ne!(viewed(Viewer::Side(Side::A)), viewed(Viewer::Side(Side::B)));
        let events = |viewer| {
            eager
                .of(viewer)
                .iter()
                .map(|e| e.viewed.event.name())
                .collect::<Vec<_>>()
        };
        for viewer in VIEWERS {
            assert!(events(viewer).contains(&"EventsUndone"), "{viewer:?}");
            assert!(
                events(viewer).contains(&"AdjudicationAccepted"),
                "{viewer:?}"
            );
        }
    }

    #[test]
    fn a_page_stops_before_its_byte_budget_but_always_holds_one_item() {
        let big = "x".repeat(SNAPSHOT_BYTES_MAX - 16);
        let small = "y".repeat(1000);
        // A first item up to a snapshot, then up to the page budget more.
        let items = std::iter::once(big.clone()).chain(std::iter::repeat_n(small.clone(), 10_000));
        let page = within_page(items);
        let bytes: usize = page.iter().map(|s| protocol::wire::to_json(s).len()).sum();
        assert!(page.len() > 1 && page.len() < 10_001);
        assert!(bytes <= SNAPSHOT_BYTES_MAX + PAGE_BYTES_MAX, "{bytes}");
        assert!(
            bytes + 1002 > SNAPSHOT_BYTES_MAX + PAGE_BYTES_MAX - 1002,
            "{bytes}"
        );
        // However large, one item is always sent.
        let huge = "z".repeat(FRAME_BYTES_MAX);
        assert_eq!(within_page([huge.clone(), huge].into_iter()).len(), 1);
    }
}
