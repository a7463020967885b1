//! One game's writer task: the only owner of the game's state and the only writer of its log.
//!
//! Everything about a game goes through its inbox in order: joins, commands, reads. A command
//! is decided, its events are made durable, and only then applied, acknowledged and sent to
//! everyone joined — each viewer getting its own projection. Because the task handles one
//! request at a time, a viewer's snapshot and the events after it can never overlap or leave
//! a gap.

use crate::log::{self, GameMeta};
use crate::store::{EventStore, GameKey};
use data_encoding::HEXLOWER;
use protocol::chain::LogHash;
use protocol::game::{Game, Viewer};
use protocol::record::signed::{ServerSigningKey, SignedHead, Stream};
use protocol::record::words::describe_event;
use protocol::referee::Referee;
use protocol::wire::{
    ErrorCode, ExportPage, RecordEntry, Sequenced, ServerMessage, EXPORT_PAGE_BYTES_MAX,
    LOG_PAGE_EVENTS_MAX,
};
use protocol::{Command, Event, Side};
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::{Bytes, Message, Utf8Bytes};
use tracing::{debug, info, warn};

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
        out: mpsc::Sender<Outbound>,
        reply: oneshot::Sender<Result<u64, (ErrorCode, String)>>,
    },
    /// A side's command; the reply (`Accepted`/`Refused`) goes to the subscriber's `out`.
    Command {
        subscriber: u64,
        side: Side,
        id: u64,
        command: Command,
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
    Leave {
        subscriber: u64,
    },
}

/// How a connection reaches a game.
#[derive(Clone)]
pub struct GameHandle {
    pub inbox: mpsc::Sender<Request>,
    pub meta: Arc<GameMeta>,
}

struct Subscriber {
    id: u64,
    viewer: Viewer,
    out: mpsc::Sender<Outbound>,
}

/// What the task keeps beside each event of the log (the events themselves are the
/// referee's, with who issued them).
struct Logged {
    /// The hash of the event's envelope: the head at its version.
    hash: LogHash,
    visibility: Visibility,
    /// The event in words, and when it happened, for the game record (`GetRecord`). Written
    /// once, in the position before the event, with the whole game rather than a viewer's
    /// projection: a description names only what its event carries and the sides, and it goes
    /// only to viewers who may see the event.
    text: String,
    when: String,
}

impl Logged {
    /// Records `event`, about to be applied to `game`, stored with hash `hash`.
    fn new(game: &Game, event: &Event, hash: LogHash) -> Logged {
        Logged {
            hash,
            visibility: Visibility::of(game, event),
            text: describe_event(game, event),
            when: protocol::export::when(game),
        }
    }
}

/// Which viewers may see one logged event, fixed when it was appended.
#[derive(Clone, Copy)]
struct Visibility([bool; 3]);

const VIEWERS: [Viewer; 3] = [
    Viewer::Side(Side::A),
    Viewer::Side(Side::B),
    Viewer::Spectator,
];

fn viewer_index(viewer: Viewer) -> usize {
    match viewer {
        Viewer::Side(Side::A) => 0,
        Viewer::Side(Side::B) => 1,
        Viewer::Spectator => 2,
    }
}

impl Visibility {
    fn of(game: &Game, event: &Event) -> Visibility {
        Visibility(VIEWERS.map(|v| game.shows(v, event)))
    }
    fn for_viewer(self, viewer: Viewer) -> bool {
        self.0[viewer_index(viewer)]
    }
}

pub struct GameTask {
    key: GameKey,
    /// The game, its log with who issued each event, and its dice (`protocol::referee`).
    referee: Referee,
    /// Beside each event of the referee's log, in the same order.
    log: Vec<Logged>,
    /// Token digests and dice seeds, rewritten when a new seed is drawn.
    meta: GameMeta,
    store: Arc<dyn EventStore>,
    subscribers: Vec<Subscriber>,
    next_subscriber: u64,
    connections_max: usize,
    /// The key exports are signed with (`docs/review.md`).
    signer: Option<Arc<ServerSigningKey>>,
}

impl GameTask {
    /// A game rebuilt from its verified log: every event applied in order, as it was live,
    /// with the dice seeds from its metadata.
    pub fn from_log(
        key: GameKey,
        verified: log::VerifiedLog,
        meta: GameMeta,
        store: Arc<dyn EventStore>,
        connections_max: usize,
    ) -> Result<GameTask, String> {
        let mut entries = verified.entries.into_iter();
        let mut hashes = verified.hashes.into_iter();
        let (first, hash) = entries
            .next()
            .zip(hashes.next())
            .ok_or("the log is empty")?;
        let created = first.event.clone();
        let mut referee = Referee::new(first, meta.seeds.clone())?;
        let mut log = vec![Logged {
            visibility: Visibility([true; 3]),
            ..Logged::new(referee.game(), &created, hash)
        }];
        for (entry, hash) in entries.zip(hashes) {
            log.push(Logged::new(referee.game(), &entry.event, hash));
            referee
                .push_entry(entry)
                .map_err(|e| format!("the dice in its log are damaged at {e}"))?;
        }
        referee.check_seed()?;
        Ok(GameTask {
            key,
            referee,
            log,
            meta,
            store,
            subscribers: vec![],
            next_subscriber: 1,
            connections_max,
            signer: None,
        })
    }

    /// Signs this game's exports with `key`.
    pub fn signed_by(mut self, key: Arc<ServerSigningKey>) -> GameTask {
        self.signer = Some(key);
        self
    }

    fn game(&self) -> &Game {
        self.referee.game()
    }

    /// The log's head: the hash of its last envelope.
    fn head(&self) -> LogHash {
        self.log.last().expect("a log starts with GameCreated").hash
    }

    pub fn state_hash(&self) -> protocol::StateHash {
        self.game().state_hash()
    }

    /// Runs until every handle to the game is gone.
    pub async fn run(mut self, mut inbox: mpsc::Receiver<Request>) {
        while let Some(request) = inbox.recv().await {
            match request {
                Request::Join {
                    viewer,
                    since,
                    out,
                    reply,
                } => self.join(viewer, since, out, reply),
                Request::Command {
                    subscriber,
                    side,
                    id,
                    command,
                } => self.command(subscriber, side, id, command).await,
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
                Request::Leave { subscriber } => {
                    self.subscribers.retain(|s| s.id != subscriber);
                }
            }
        }
        debug!(game = %log::game_id(&self.key), "game task ends");
    }

    /// Event `seq` as `viewer` sees it. Visibility was fixed when the event was appended;
    /// `GameCreated` is projected like the state, so its scenario never carries what the viewer
    /// may not know.
    fn sequenced(&self, viewer: Viewer, seq: u64) -> Sequenced {
        let visibility = self.log[(seq - 1) as usize].visibility;
        let event = &self.referee.entries()[(seq - 1) as usize].event;
        let event = match event {
            // Both carry a whole position (a scenario, a restored game): projected alike.
            Event::GameCreated { .. } | Event::EventsUndone { .. } => {
                self.game().view_event(viewer, event)
            }
            _ => visibility.for_viewer(viewer).then(|| event.clone()),
        };
        Sequenced { seq, event }
    }

    fn state_message(&self, viewer: Viewer) -> ServerMessage {
        let state = self.game().project(viewer);
        ServerMessage::State {
            version: self.game().version,
            state_hash: state.state_hash(),
            state: Box::new(state),
            head: self.head(),
        }
    }

    /// The versions a page of the log or the record starting at `from` holds.
    fn page(&self, from: u64) -> std::ops::RangeInclusive<u64> {
        let from = from.max(1);
        from..=self
            .game()
            .version
            .min(from.saturating_add(LOG_PAGE_EVENTS_MAX - 1))
    }

    fn log_page(&self, viewer: Viewer, from: u64) -> ServerMessage {
        ServerMessage::Log {
            version: self.game().version,
            events: self
                .page(from)
                .map(|seq| self.sequenced(viewer, seq))
                .collect(),
        }
    }

    fn record_page(&self, viewer: Viewer, from: u64) -> ServerMessage {
        let entries = self
            .page(from)
            .map(|seq| {
                let Sequenced { seq, event } = self.sequenced(viewer, seq);
                let logged = &self.log[(seq - 1) as usize];
                RecordEntry {
                    seq,
                    text: event.is_some().then(|| logged.text.clone()),
                    event,
                    when: logged.when.clone(),
                }
            })
            .collect();
        ServerMessage::Record {
            version: self.game().version,
            entries,
        }
    }

    /// The position at `version` (kept within 1 and the head), rebuilt by replaying the log
    /// up to it through `apply` as any replay does, then projected for `viewer` as it was then.
    fn state_at(&self, viewer: Viewer, version: u64) -> ServerMessage {
        let version = version.clamp(1, self.game().version) as usize;
        let game = Game::replay(self.referee.entries()[..version].iter().map(|e| &e.event))
            .expect("a loaded log starts with GameCreated");
        let state = game.project(viewer);
        ServerMessage::State {
            version: state.version,
            state_hash: state.state_hash(),
            state: Box::new(state),
            head: self.log[version - 1].hash,
        }
    }

    fn join(
        &mut self,
        viewer: Viewer,
        since: Option<u64>,
        out: mpsc::Sender<Outbound>,
        reply: oneshot::Sender<Result<u64, (ErrorCode, String)>>,
    ) {
        if self.subscribers.len() >= self.connections_max {
            let _ = reply.send(Err((
                ErrorCode::LimitReached,
                format!(
                    "this game already has {} connections (the per-game limit)",
                    self.connections_max
                ),
            )));
            return;
        }
        let version = self.game().version;
        let projection = self.game().project(viewer);
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
            head: self.head(),
            dice_commitment: self.referee.commitment(),
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
        self.subscribers.push(Subscriber { id, viewer, out });
        let _ = reply.send(Ok(id));
    }

    async fn command(&mut self, subscriber: u64, side: Side, id: u64, command: Command) {
        // Dice from the committed seed and the players' contributions so far, starting at the
        // game's next draw (`protocol::referee`, `docs/dice.md`).
        let result = self.referee.decide(side, &command, &mut random_bytes::<32>);
        let decision = match result {
            Ok(decision) => decision,
            Err(violation) => {
                debug!(game = %log::game_id(&self.key), %violation, "command refused");
                let refused = Frame::new(ServerMessage::Refused {
                    id,
                    version: self.game().version,
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
        let entries = decision.entries(first_seq);
        let mut prev = self.head();
        let mut records = Vec::with_capacity(entries.len());
        let mut hashes = Vec::with_capacity(entries.len());
        for entry in &entries {
            let (bytes, hash) = log::seal_entry(prev, random_bytes(), entry);
            records.push(bytes);
            hashes.push(hash);
            prev = hash;
        }
        let mut meta = None;
        if let Some(seed) = decision.new_seed {
            let mut next = self.meta.clone();
            next.seeds.push(seed);
            meta = Some((self.store.put_meta(&self.key, next.encode()), next, seed));
        }
        // Awaited, not blocked on: while the store's group commit flushes, this task's thread
        // serves other games, whose writes join the next flush.
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
        if let Err(e) = stored {
            warn!(game = %log::game_id(&self.key), why = %e, "append failed; command not applied");
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

        let mut logged = Vec::with_capacity(entries.len());
        for (entry, hash) in entries.into_iter().zip(hashes) {
            self.log
                .push(Logged::new(self.referee.game(), &entry.event, hash));
            self.referee
                .push_entry(entry)
                .expect("a decision keeps the dice scheme");
            logged.push(self.game().version);
        }
        info!(game = %log::game_id(&self.key), version = self.game().version, "command accepted");

        // One message per viewer class, shared by every subscriber with that view.
        let broadcasts: [Vec<Outbound>; 3] = VIEWERS.map(|viewer| {
            logged
                .iter()
                .map(|seq| Frame::new(ServerMessage::Event(self.sequenced(viewer, *seq))))
                .collect()
        });
        // Who hears first: the other player, then spectators, and the actor's reply last.
        // Each send wakes its connection's task, and the runtime runs the last task woken
        // first, then the others in the order woken: so both players go before the audience,
        // however large it is.
        let rank = |s: &Subscriber| match s.viewer {
            _ if s.id == subscriber => 2,
            Viewer::Spectator => 1,
            Viewer::Side(_) => 0,
        };
        let mut order: Vec<&Subscriber> = self.subscribers.iter().collect();
        order.sort_by_key(|s| rank(s));
        let mut dropped = vec![];
        for s in order {
            let messages: Vec<Outbound> = if s.id == subscriber {
                vec![Frame::new(ServerMessage::Accepted {
                    id,
                    version: self.game().version,
                    events: logged
                        .iter()
                        .map(|seq| self.sequenced(s.viewer, *seq))
                        .collect(),
                    head: self.head(),
                })]
            } else {
                broadcasts[viewer_index(s.viewer)].clone()
            };
            for m in messages {
                if s.out.try_send(m).is_err() {
                    dropped.push(s.id);
                    break;
                }
            }
        }
        self.drop_subscribers(&dropped);
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
            signed: self.signer.as_ref().map(|key| {
                SignedHead::sign(
                    key,
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

    fn send_to(&mut self, subscriber: u64, message: Outbound) {
        let full = self
            .subscribers
            .iter()
            .find(|s| s.id == subscriber)
            .is_some_and(|s| s.out.try_send(message).is_err());
        if full {
            self.drop_subscribers(&[subscriber]);
        }
    }

    /// A subscriber whose queue is full is cut off: dropping its sender closes its queue, and
    /// the connection closes the socket saying why. The game never waits for a slow reader.
    fn drop_subscribers(&mut self, ids: &[u64]) {
        if ids.is_empty() {
            return;
        }
        warn!(game = %log::game_id(&self.key), count = ids.len(), "dropping viewers that fell behind");
        self.subscribers.retain(|s| !ids.contains(&s.id));
    }
}

/// Randomness for salts and seeds, from the operating system.
fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    bytes
}
