//! One game's writer task: the only owner of the game's state and the only writer of its log.
//!
//! Everything about a game goes through its two inboxes: the players' (their commands, joins and
//! reads) and the audience's (spectators' joins and reads). The task always serves the players'
//! inbox first, so no audience, however busy, makes a player wait behind it. A command
//! is decided, its events are made durable, and only then applied, acknowledged and sent to
//! everyone joined — each viewer getting its own projection. Because the task handles one
//! request at a time, a viewer's snapshot and the events after it can never overlap or leave
//! a gap.

use crate::games::session::{Committed, Entropy, Read, Session, Submitted, Unproposed};
use crate::games::socket::SharedSocket;
use crate::operations::config::Config;
use crate::operations::metrics::METRICS;
use crate::store::envelope::{self, GameMeta};
use crate::store::{EventStore, GameKey, StoreError};
use data_encoding::HEXLOWER;
use protocol::game::{Game, Viewer};
use protocol::record::receipt::Mismatch;
use protocol::record::signed::{Head, SignedHead, Stream};
use protocol::record::stream;
use protocol::wire::{ErrorCode, ExportPage, ServerMessage, EXPORT_PAGE_BYTES_MAX};
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
        /// (`protocol::record::receipt`); its sequence is then the `since`. Boxed, as the
        /// command below: a game's inboxes hold their first block of slots from the start,
        /// loaded or not, and each slot is as large as the largest request (issue 55).
        receipt: Option<Box<SignedHead>>,
        out: mpsc::Sender<Outbound>,
        /// The connection's socket, for a seat's connection on this node: the task writes the
        /// viewer's frames into it itself while it can, and queues them on `out` when it
        /// cannot (`crate::games::socket`).
        direct: Option<Arc<SharedSocket>>,
        /// Frames the connection has written so far, counted by the connection: how the game
        /// tells a reader that is slow from one that has stopped (`Subscriber::backlog`).
        progress: Arc<AtomicU64>,
        reply: oneshot::Sender<Result<u64, (ErrorCode, String)>>,
    },
    /// A side's command; the reply (`Accepted`/`Refused`) goes to the subscriber's `out`.
    /// `key`: the client's exactly-once key, if it gave one (`crate::games::command_keys`).
    Command {
        subscriber: u64,
        side: Side,
        id: u64,
        command: Box<Command>,
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
        command: Box<Command>,
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

/// How often the game retries sending a backlog, and checks for stalled readers.
const BACKLOG_TICK: Duration = Duration::from_millis(50);

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
    pub time: crate::operations::clock::TimeSource,
    /// The operator's threshold for a `clock_low` notice (`crate::operations::clock::low_below`).
    pub clock_low_below: Duration,
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
            clock_low_below: config.notify_clock_low_below,
        }
    }
}

struct Subscriber {
    id: u64,
    viewer: Viewer,
    out: mpsc::Sender<Outbound>,
    /// Its connection's socket, written into directly while nothing waits in `out` or the
    /// backlog (`crate::games::socket`).
    direct: Option<Arc<SharedSocket>>,
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
        self.deliver_all(std::slice::from_ref(&frame))
    }

    /// Hands over `frames`, in order: as many as the socket takes at once written directly,
    /// in one write (`SharedSocket::try_write`), the rest through the queue behind them.
    fn deliver_all(&mut self, frames: &[Outbound]) -> Delivery {
        if self.flush() == Delivery::Stalled {
            return Delivery::Stalled;
        }
        let mut written = 0;
        if let Some(direct) = &self.direct {
            if self.out.is_closed() {
                return Delivery::Stalled;
            }
            if self.backlog.is_empty() {
                written = direct.try_write(frames);
                self.progress.fetch_add(written as u64, Ordering::Relaxed);
            }
        }
        for frame in &frames[written..] {
            if self.enqueue(frame.clone()) == Delivery::Stalled {
                return Delivery::Stalled;
            }
        }
        Delivery::Sent
    }

    /// Puts `frame` in the connection's queue, or behind it in the backlog.
    fn enqueue(&mut self, frame: Outbound) -> Delivery {
        if let Some(direct) = &self.direct {
            // On its way through the queue: nothing is written directly until it is out.
            direct.queue_one();
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
    /// The game itself, with no IO in it: referee, streams, checkpoints, command keys
    /// (`crate::games::session`). This task does the IO around it.
    session: Session,
    /// Token digests and dice seeds, rewritten when a new seed is drawn.
    meta: GameMeta,
    store: Arc<dyn EventStore>,
    /// Set when a client showed it was sent a version past this log's end, or a signed head
    /// this log does not reach: the log was rolled back (a restored old copy, a disk that lost
    /// writes). Says what is missing; from then on the game refuses play and joins, and its log
    /// is left as it is for the operator. Stored with the game's metadata (`envelope::GameMarks`),
    /// so a restart does not forget it.
    rolled_back: Option<String>,
    subscribers: Vec<Subscriber>,
    /// Set when the task must end: another writer fenced it off, or its node gave the game up.
    stopped: bool,
    next_subscriber: u64,
    limits: GameLimits,
    /// The audience's reads, all spectators together.
    audience_reads: crate::operations::budget::RateLimit,
    /// What signs this game's receipts (in batches with other games') and exports
    /// (`docs/review.md`).
    signer: Option<crate::signing::batch::Signer>,
    /// Lets the game go when idle (`crate::games::registry`); without one it runs until its handles
    /// are gone.
    unloader: Option<Unloader>,
    /// A clock deadline whose expiry could not be recorded: the timer is not armed for it
    /// again.
    clock_failed: Option<u64>,
    /// The deadline of the running clock whose low mark was passed and looked at: looked at
    /// once per deadline (a hand-over or time given makes a new one).
    clock_low_seen: Option<u64>,
    /// Turn notices for the seats registered for them (`crate::notify`).
    notify: Option<crate::notify::Watch>,
    entropy: TaskEntropy,
}

/// The randomness a game's commands draw. A dice seed comes from the operating system each
/// time; envelope salts are read from BLAKE3's extendable output under a key the operating
/// system gave this task when it started, which no one else ever holds (it is not stored):
/// as unpredictable as the system's own bytes to anyone without the key, and no system call
/// per stored envelope.
struct TaskEntropy {
    salts: blake3::OutputReader,
}

impl TaskEntropy {
    fn new() -> TaskEntropy {
        TaskEntropy {
            salts: blake3::Hasher::new_keyed(&random_bytes()).finalize_xof(),
        }
    }
}

impl Entropy for TaskEntropy {
    fn seed(&mut self) -> protocol::fair_dice::Seed {
        random_bytes()
    }

    fn salt(&mut self) -> protocol::chain::Salt {
        let mut salt = protocol::chain::Salt::default();
        self.salts.fill(&mut salt);
        salt
    }
}

impl GameTask {
    /// A game rebuilt from its verified log: every event applied in order, as it was live,
    /// with the dice seeds from its metadata.
    pub fn from_log(
        key: GameKey,
        verified: envelope::VerifiedLog,
        meta: GameMeta,
        store: Arc<dyn EventStore>,
        limits: GameLimits,
    ) -> Result<GameTask, crate::games::session::LoadError> {
        let session =
            Session::from_log(verified, meta.seeds.clone())?.owned_by(limits.owner.clone());
        Ok(GameTask {
            key,
            session,
            meta,
            store,
            subscribers: vec![],
            stopped: false,
            rolled_back: None,
            next_subscriber: 1,
            audience_reads: crate::operations::budget::RateLimit::new(
                limits.audience_reads_per_second_max,
                2 * limits.audience_reads_per_second_max,
            ),
            limits,
            signer: None,
            unloader: None,
            clock_failed: None,
            clock_low_seen: None,
            notify: None,
            entropy: TaskEntropy::new(),
        })
    }

    /// A game found rolled back before (its stored `envelope::GameMarks`): it stays refused.
    pub fn marked(mut self, marks: envelope::GameMarks) -> GameTask {
        self.rolled_back = marks.rolled_back;
        self
    }

    /// The head of `viewer`'s own stream now, signed: the receipt sent with `joined` and
    /// `accepted`. It covers the game, the viewer's own sequence and its `StreamHash` — what
    /// the viewer was shown, nothing of the log's length or head. Signed in a batch with the
    /// receipts other games ask for at the same moment (`crate::signing::batch`); this task asks for
    /// one receipt at a time, so no batch ever holds two heads of this game.
    async fn receipt(&self, viewer: Viewer) -> Option<SignedHead> {
        let signer = self.signer.as_ref()?;
        let head = Head::of_stream(
            &envelope::game_id(&self.key),
            viewer,
            self.session.version(viewer),
            self.session.stream_head(viewer),
        );
        Some(signer.sign(head).await)
    }

    /// Signs this game's exports and its viewers' heads with `signer`'s key.
    pub fn signed_by(mut self, signer: crate::signing::batch::Signer) -> GameTask {
        self.signer = Some(signer);
        self
    }

    /// Owes the game's registered seats turn notices through `watch` (`crate::notify`).
    pub fn watched_by(mut self, watch: crate::notify::Watch) -> GameTask {
        self.notify = Some(watch);
        self
    }

    /// Whether `side`'s player has a connection joined to this game.
    fn connected(&self, side: Side) -> bool {
        self.subscribers
            .iter()
            .any(|s| s.viewer == Viewer::Side(side) && !s.out.is_closed())
    }

    /// The clock-low hook for the game clocks (issue 41): call it from this task whenever
    /// `side`'s time left is worked out. It owes the seat a `clock_low` notice when the time
    /// is below `Config::notify_clock_low_below`, the seat is registered and its player away,
    /// at most once per hand-over (`crate::notify::Watch::clock_low`). Returns whether a
    /// notice was owed.
    pub fn notify_clock_low(&mut self, side: Side, remaining: Duration) -> bool {
        let connected = self.connected(side);
        let handover = self.session.version(Viewer::Side(side));
        let Some(mut watch) = self.notify.take() else {
            return false;
        };
        let owed = watch.clock_low(self.game(), side, remaining, handover, connected);
        self.notify = Some(watch);
        owed
    }

    /// Before a command's events are applied: what the game waits on, for the watch.
    fn notify_before(&mut self) {
        let Some(mut watch) = self.notify.take() else {
            return;
        };
        watch.before(self.game(), |side| self.connected(side));
        self.notify = Some(watch);
    }

    /// Before a command's records are stored: the turn notices they owe, to be stored with them
    /// (`EventStore::append_with_notify`), so that no stop between the two can keep a hand-over
    /// in the log and lose its notice. `None` when no seat is watched (the usual case: nobody
    /// registered, or both players here), which costs nothing; otherwise the watch reads the
    /// position the proposal will make ([`Session::foresee`]).
    fn notices_owed(
        &self,
        proposal: &super::session::Proposal,
        records: &[Vec<u8>],
    ) -> Option<crate::notify::Owing> {
        let watch = self.notify.as_ref()?;
        if ![Side::A, Side::B].into_iter().any(|s| watch.watching(s)) {
            return None;
        }
        let last = records.last()?;
        let by = crate::notify::OwedBy::of(proposal.first + records.len() as u64 - 1, last);
        let foreseen = self.session.foresee(proposal);
        let mut owing = watch.owing(by);
        for (i, side) in [Side::A, Side::B].into_iter().enumerate() {
            if !watch.watching(side) {
                continue;
            }
            let events: Vec<&Event> = foreseen.heard[i].iter().collect();
            watch.foresee(
                &mut owing,
                &foreseen.after,
                side,
                &events,
                foreseen.versions[i],
                self.connected(side),
            );
        }
        Some(owing)
    }

    /// The command's records are stored, and with them the notices `owing` holds: the watch
    /// hands them to the notifier.
    fn notices_stored(&mut self, owing: Option<crate::notify::Owing>) {
        if let (Some(watch), Some(owing)) = (self.notify.as_mut(), owing) {
            watch.stored(owing);
        }
    }

    /// Ends the game when idle if `unloader` lets it go.
    pub fn unloaded_by(mut self, unloader: Unloader) -> GameTask {
        self.unloader = Some(unloader);
        self
    }

    /// Whether nobody is connected (a subscriber whose connection has gone is forgotten here)
    /// and the game may be let go. A game marked rolled back goes too: its mark goes with
    /// the metadata handed to the unloader, so a marked game cannot pin a place in memory.
    /// A game whose clock runs stays: its timer records the clock running out and tells an
    /// away seat its clock runs low (`crate::operations::clock`), which a game let go could not.
    fn idle(&mut self) -> bool {
        self.subscribers.retain(|s| !s.out.is_closed());
        let clock_runs = self.rolled_back.is_none()
            && crate::operations::clock::deadline(self.game())
                .is_some_and(|d| Some(d) != self.clock_failed);
        self.subscribers.is_empty() && !clock_runs
    }

    /// The metadata as this task holds it, its rollback mark after it.
    fn meta_marked(&self) -> Vec<u8> {
        self.meta.encode_marked(&envelope::GameMarks {
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
            debug!(game = %envelope::game_id(&self.key), "idle game unloaded");
        }
        gone
    }

    fn game(&self) -> &Game {
        self.session.game()
    }

    pub fn state_hash(&self) -> protocol::StateHash {
        self.session.game().state_hash()
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
            // The running clock's end, if the game has one (`crate::operations::clock`).
            let clock_deadline = crate::operations::clock::deadline(self.game())
                .filter(|d| Some(*d) != self.clock_failed);
            // When the running clock runs low, for a game that owes turn notices.
            let clock_low = self
                .notify
                .as_ref()
                .and_then(|_| {
                    crate::operations::clock::low_at(self.game(), self.limits.clock_low_below)
                })
                .filter(|(_, _, deadline)| Some(*deadline) != self.clock_low_seen);
            let request = tokio::select! {
                biased;
                r = players.recv() => r,
                r = audience.recv() => r.map(|r| self.within_audience_budget(r)),
                _ = tick.tick(), if backlogged => {
                    self.flush_backlogs();
                    continue;
                }
                _ = crate::operations::clock::wait_for(&self.limits.time, clock_deadline) => {
                    Box::pin(self.clock_ran_out()).await;
                    continue;
                }
                _ = crate::operations::clock::wait_for(&self.limits.time, clock_low.map(|(_, at, _)| at)) => {
                    if let Some((side, _, deadline)) = clock_low {
                        self.clock_low_seen = Some(deadline);
                        let left = deadline.saturating_sub(self.limits.time.now_ms());
                        self.notify_clock_low(side, Duration::from_millis(left));
                    }
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
            // Boxed: the future of a command's commit is kilobytes, and inline it would be
            // held by every game task between requests, for the whole life of a game that
            // may sit for days under a correspondence clock (issue 55).
            Box::pin(self.serve(request)).await;
            if self.stopped {
                break;
            }
        }
        METRICS.games_loaded.dec();
        debug!(game = %envelope::game_id(&self.key), "game task ends");
    }

    /// The running clock ran out: the server records it (`ClockExpired`) in the name of the
    /// side whose clock it is, as an `ExpireClock` decided like any command, so a verifier
    /// checks it the same way. A command that handed the clock over first makes it refused,
    /// and the timer is armed again for the new deadline.
    async fn clock_ran_out(&mut self) {
        let Some(side) = self.game().timing.as_deref().and_then(|t| t.running) else {
            return;
        };
        let (version, deadline) = (
            self.game().version,
            crate::operations::clock::deadline(self.game()),
        );
        let submitted = Submitted {
            side,
            id: 0,
            command: Command::ExpireClock,
            key: None,
            now: Some(self.limits.time.now_ms()),
        };
        self.command(0, submitted).await;
        if self.game().version == version {
            // Not recorded (a game marked rolled back, a store that failed): not tried again
            // for this deadline, or the timer would spin; the next command re-arms it.
            warn!(game = %envelope::game_id(&self.key), "a clock ran out and could not be recorded");
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
                    direct,
                    progress,
                    reply,
                } => {
                    self.join(
                        viewer,
                        since,
                        receipt.map(|r| *r),
                        (out, direct),
                        progress,
                        reply,
                    )
                    .await
                }
                Request::Command {
                    subscriber,
                    side,
                    id,
                    command,
                    key,
                } => {
                    let submitted = Submitted {
                        side,
                        id,
                        command: *command,
                        key,
                        now: Some(self.limits.time.now_ms()),
                    };
                    self.command(subscriber, submitted).await
                }
                Request::GetState { viewer, reply } => {
                    let _ = reply.send(self.session.read(Read::State {
                        viewer,
                        now: self.limits.time.now_ms(),
                    }));
                }
                Request::GetLog {
                    viewer,
                    from,
                    reply,
                } => {
                    let _ = reply.send(self.session.read(Read::Log { viewer, from }));
                }
                Request::GetStateAt {
                    viewer,
                    version,
                    reply,
                } => {
                    let _ = reply.send(self.session.read(Read::StateAt { viewer, version }));
                }
                Request::GetRecord {
                    viewer,
                    from,
                    reply,
                } => {
                    let _ = reply.send(self.session.read(Read::Record { viewer, from }));
                }
                Request::GetExport { from, reply } => self.export_page(from, reply),
                Request::Los { from, to, reply } => {
                    let _ = reply.send(self.session.read(Read::Los { from, to }));
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
                    let _ = reply.send(self.session.read(Read::Preview {
                        side,
                        id,
                        command: *command,
                        now: Some(self.limits.time.now_ms()),
                    }));
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

    async fn join(
        &mut self,
        viewer: Viewer,
        since: Option<u64>,
        receipt: Option<SignedHead>,
        (out, direct): (mpsc::Sender<Outbound>, Option<Arc<SharedSocket>>),
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
        // Its stream kept from now on: a spectator's is built from the log at the first one's
        // join, none kept while nobody watches (issue 55).
        self.session.follow(viewer);
        // Every number a viewer holds is its own stream's: a claim past its end means events
        // it was sent are missing here.
        let version = self.session.version(viewer);
        if let Some(receipt) = receipt {
            // A signed head is proof the server sent it: checked against this viewer's stream,
            // from anyone who holds one (a spectator's too).
            let trusted = self.signer.as_ref().map(|s| s.public());
            let checked = trusted
                .ok_or(Mismatch::Signature(
                    protocol::record::signed::SignatureError::NotSigning,
                ))
                .and_then(|trusted| {
                    protocol::record::receipt::check(
                        &receipt,
                        &trusted,
                        &envelope::game_id(&self.key),
                        Some(viewer),
                        self.session.streams(),
                    )
                });
            match checked {
                Ok(_) => {}
                Err(mismatch) if mismatch.is_rollback() => {
                    self.flag_rollback(viewer, &mismatch.to_string()).await
                }
                Err(mismatch) => {
                    warn!(game = %envelope::game_id(&self.key), %mismatch, "a join's receipt is not this server's for this game and viewer");
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
            debug!(game = %envelope::game_id(&self.key), ?viewer, held, stored = version, "a join claims a version past its stream's end, with no receipt");
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
        let projection = self.session.projection(viewer);
        // Resume from `since` when the client holds a version we have and the catch-up fits
        // its queue; otherwise — too far behind, or a version we never had — a fresh snapshot.
        let resume_from = since
            .filter(|s| *s >= 1 && *s <= version && ((version - *s) as usize) < out.capacity());
        let mut first = vec![Frame::new(ServerMessage::Joined {
            game: envelope::game_id(&self.key),
            viewer,
            version,
            state_hash: projection.state_hash(),
            state: resume_from
                .is_none()
                .then(|| Box::new(protocol::wire::Position::from(projection))),
            head: self.session.stream_head(viewer),
            dice_commitment: self.session.referee().commitment(),
            signed: self.receipt(viewer).await,
            owner: self.limits.owner.clone(),
            clocks: crate::operations::clock::view(self.game(), self.limits.time.now_ms()),
        })];
        if let Some(since) = resume_from {
            first.extend(
                self.session
                    .events_since(viewer, since)
                    .into_iter()
                    .map(Frame::new),
            );
        }
        // Queued, as the connection reads them only once it hears it joined.
        for message in first {
            if let Some(direct) = &direct {
                direct.queue_one();
            }
            if out.try_send(message).is_err() {
                if let Some(direct) = &direct {
                    direct.unqueue_one();
                }
                let _ = reply.send(Err((ErrorCode::LimitReached, "queue full".into())));
                return;
            }
        }
        if let (Some(watch), Viewer::Side(side)) = (self.notify.as_mut(), viewer) {
            watch.joined(side);
        }
        let id = self.next_subscriber;
        self.next_subscriber += 1;
        self.subscribers.push(Subscriber {
            id,
            viewer,
            out,
            direct,
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
        let id = envelope::game_id(&self.key);
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
        let marks = envelope::GameMarks {
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

    /// A side's command: proposed to the session, its records stored, then committed and
    /// its frames delivered. Durable first: nothing is applied or sent before the store has it.
    async fn command(&mut self, subscriber: u64, submitted: Submitted) {
        let id = submitted.id;
        if let Some(why) = &self.rolled_back {
            let refused = Frame::new(ServerMessage::Error {
                code: ErrorCode::RolledBack,
                message: format!("command {id} not taken: {why}"),
            });
            self.send_to(subscriber, refused);
            return;
        }
        let side = submitted.side;
        let mut proposal = match self.session.propose(submitted, &mut self.entropy) {
            Ok(proposal) => proposal,
            Err(Unproposed::Again(mut again)) => {
                debug!(game = %envelope::game_id(&self.key), id, "command sent again; answered from the log");
                self.sign(side, &mut again).await;
                self.send_to(subscriber, Frame::new(*again));
                return;
            }
            Err(Unproposed::Refused { message, limit }) => {
                // A key used by another command is refused before anything is decided.
                if !matches!(
                    *message,
                    ServerMessage::Error {
                        code: ErrorCode::KeyReused,
                        ..
                    }
                ) {
                    METRICS.commands.inc();
                }
                if let Some(limit) = limit {
                    METRICS.refused(limit);
                }
                debug!(game = %envelope::game_id(&self.key), id, ?limit, "command refused");
                self.send_to(subscriber, Frame::new(*message));
                return;
            }
        };
        METRICS.commands.inc();
        // A new seed is handed to the store before the events that commit to it, so no
        // restart can find a commitment whose seed was lost.
        let records = std::mem::take(&mut proposal.records);
        let mut meta = None;
        if let Some(seed) = proposal.new_seed() {
            let mut next = self.meta.clone();
            next.seeds.push(seed);
            meta = Some((self.store.put_meta(&self.key, next.encode()), next));
        }
        // Awaited, not blocked on: while the store's group commit flushes, this task's thread
        // serves other games, whose writes join the next flush.
        METRICS.append_events.observe(records.len() as f64);
        // Counted until its receipt is asked for, so a signer leading a batch meanwhile
        // waits a moment for it (`crate::signing::batch`).
        let coming = self.signer.as_ref().map(|signer| signer.coming());
        // The turn notices the command owes go into the same write as its records.
        self.notify_before();
        let owing = self.notices_owed(&proposal, &records);
        let notices = owing.as_ref().map(|o| o.writes()).unwrap_or_default();
        let appending = Instant::now();
        let appended = self
            .store
            .append_with_notify(&self.key, proposal.first, records, notices);
        let mut stored = Ok(());
        let mut next_meta = None;
        if let Some((written, next)) = meta {
            stored = written.await;
            next_meta = Some(next);
        }
        let stored = stored.and(appended.await);
        METRICS
            .append_seconds
            .observe(appending.elapsed().as_secs_f64());
        if let Err(e) = stored {
            warn!(game = %envelope::game_id(&self.key), why = %e, "append failed; command not applied");
            if matches!(
                e,
                StoreError::SequenceMismatch { .. } | StoreError::Uncertain(_)
            ) {
                // Another writer holds the log (fenced by the store's sequence check), or the
                // store cannot say what it holds: this task's idea of the game is no longer
                // the log's. Nothing of this command was applied or sent.
                self.relinquish(&format!(
                    "this server node no longer holds game `{}`'s log ({e})",
                    envelope::game_id(&self.key)
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
        if let Some(next) = next_meta {
            self.meta = next;
        }
        let committed = self.session.commit(proposal);
        // At `debug`, as a refusal is: one line per command would cost a busy server more
        // than deciding it, and the log itself is the record of every command.
        debug!(game = %envelope::game_id(&self.key), version = self.game().version, "command accepted");
        self.deliver(subscriber, committed, coming, owing).await;
    }

    /// Sends a committed command's frames: each viewer's once per viewer class, shared by every
    /// subscriber with that view. Who hears first: the other player, then the actor (its reply
    /// waits for its receipt's signature, signed in a batch with other games':
    /// `crate::signing::batch`), then the audience. The other player's connection runs while the
    /// receipt is signed, and however large the audience, neither player's frame is queued
    /// behind its writes.
    async fn deliver(
        &mut self,
        subscriber: u64,
        committed: Committed,
        coming: Option<crate::signing::batch::Coming>,
        owing: Option<crate::notify::Owing>,
    ) {
        let Committed {
            side,
            accepted,
            broadcasts,
        } = committed;
        let broadcasts: [Vec<Outbound>; 3] =
            broadcasts.map(|frames| frames.into_iter().map(Frame::new).collect());
        let mut dropped = vec![];
        // Each subscriber's frames handed over together: a player's go into its socket in
        // one write.
        let mut deliver = |s: &mut Subscriber, frames: &[Outbound]| {
            if s.deliver_all(frames) == Delivery::Stalled {
                dropped.push(s.id);
            }
        };
        for s in self.subscribers.iter_mut() {
            if s.id != subscriber && matches!(s.viewer, Viewer::Side(_)) {
                deliver(s, &broadcasts[stream::index(s.viewer)]);
            }
        }
        // Turn notices owed (stored with the events) handed to the notifier before the actor
        // hears its command was accepted; the other player has its frames already.
        self.notices_stored(owing);
        drop(coming);
        // No `Accepted` when nobody follows the game (the clock's own command in a game
        // nobody joined): no receipt is signed for it.
        if let Some(mut accepted) = accepted {
            self.sign(side, &mut accepted).await;
            let accepted = Frame::new(accepted);
            for s in self.subscribers.iter_mut() {
                if s.id == subscriber {
                    deliver(s, std::slice::from_ref(&accepted));
                }
            }
        }
        for s in self.subscribers.iter_mut() {
            if s.viewer == Viewer::Spectator {
                deliver(s, &broadcasts[stream::index(s.viewer)]);
            }
        }
        self.drop_subscribers(&dropped);
    }

    /// Puts `side`'s receipt into its `Accepted`.
    async fn sign(&self, side: Side, accepted: &mut ServerMessage) {
        if let ServerMessage::Accepted { signed, .. } = accepted {
            *signed = self.receipt(Viewer::Side(side)).await;
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
            game: envelope::game_id(&self.key),
            version: game.version,
            head: self.session.head(),
            state_hash: game.state_hash(),
            from: from.clamp(1, game.version),
            envelopes: vec![],
            // The head of the whole log, signed: a verifier with the server's key knows the
            // server vouched for exactly this log.
            signed: self.signer.as_ref().map(|signer| {
                SignedHead::sign(
                    signer.key(),
                    &envelope::game_id(&self.key),
                    Stream::FullLog,
                    game.version,
                    self.session.head(),
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

    /// Tells every viewer to reconnect (`ErrorCode::Moved`) and ends the task: whatever this
    /// task decided and could not store was never acknowledged or broadcast.
    fn relinquish(&mut self, why: &str) {
        warn!(game = %envelope::game_id(&self.key), why, "this node stops serving the game");
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
            warn!(game = %envelope::game_id(&self.key), count = behind, "dropping viewers that fell behind");
        }
        self.subscribers.retain(|s| !ids.contains(&s.id));
    }
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

    /// Salts never repeat within a task's stream, nor between two tasks' streams (each keyed
    /// by the operating system): a repeated salt would let two sealed envelopes be compared.
    #[test]
    fn salts_do_not_repeat_within_a_task_or_across_tasks() {
        let (mut one, mut other) = (TaskEntropy::new(), TaskEntropy::new());
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(one.salt()));
            assert!(seen.insert(other.salt()));
        }
    }
}
