//! One game's writer task: the only owner of the game's state and the only writer of its log.
//!
//! Everything about a game goes through its inbox in order: joins, commands, reads. A command
//! is decided, its events are made durable, and only then applied, acknowledged and sent to
//! everyone joined — each viewer getting its own projection. Because the task handles one
//! request at a time, a viewer's snapshot and the events after it can never overlap or leave
//! a gap.

use crate::log::{self, GameMeta};
use crate::store::{EventStore, GameKey};
use protocol::game::{apply, Game, Viewer};
use protocol::wire::{ErrorCode, Sequenced, ServerMessage, LOG_PAGE_EVENTS_MAX};
use protocol::{decide, Command, Event, ScriptedDice, Side};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, info, warn};

/// A message on its way to one connection. Shared, because a broadcast sends the same one to
/// many viewers with the same projection.
pub type Outbound = Arc<ServerMessage>;

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
    game: Game,
    log: Vec<(Event, Visibility)>,
    head: [u8; 32],
    store: Arc<dyn EventStore>,
    subscribers: Vec<Subscriber>,
    next_subscriber: u64,
    connections_max: usize,
}

impl GameTask {
    /// A game rebuilt from its verified log: every event applied in order, as it was live.
    pub fn from_log(
        key: GameKey,
        verified: log::VerifiedLog,
        store: Arc<dyn EventStore>,
        connections_max: usize,
    ) -> Result<GameTask, String> {
        let mut events = verified.events.into_iter();
        let mut game = match events.next() {
            Some(Event::GameCreated { scenario }) => Game::new(scenario.clone()),
            Some(other) => return Err(format!("event 1 is {}, not GameCreated", other.name())),
            None => return Err("the log is empty".into()),
        };
        game.version = 1;
        let scenario = game.scenario.clone();
        let mut log = vec![(Event::GameCreated { scenario }, Visibility([true; 3]))];
        for event in events {
            let visibility = Visibility::of(&game, &event);
            apply(&mut game, &event);
            log.push((event, visibility));
        }
        Ok(GameTask {
            key,
            game,
            log,
            head: verified.head,
            store,
            subscribers: vec![],
            next_subscriber: 1,
            connections_max,
        })
    }

    pub fn state_hash(&self) -> protocol::StateHash {
        self.game.state_hash()
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
        let (event, visibility) = &self.log[(seq - 1) as usize];
        let event = match event {
            Event::GameCreated { .. } => self.game.view_event(viewer, event),
            _ => visibility.for_viewer(viewer).then(|| event.clone()),
        };
        Sequenced { seq, event }
    }

    fn state_message(&self, viewer: Viewer) -> ServerMessage {
        let state = self.game.project(viewer);
        ServerMessage::State {
            version: self.game.version,
            state_hash: state.state_hash(),
            state: Box::new(state),
        }
    }

    fn log_page(&self, viewer: Viewer, from: u64) -> ServerMessage {
        let from = from.max(1);
        let to = self
            .game
            .version
            .min(from.saturating_add(LOG_PAGE_EVENTS_MAX - 1));
        ServerMessage::Log {
            version: self.game.version,
            events: (from..=to).map(|seq| self.sequenced(viewer, seq)).collect(),
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
        let version = self.game.version;
        let projection = self.game.project(viewer);
        // Resume only when the client holds a version we have; otherwise a fresh snapshot.
        let resume_from = since.filter(|s| *s <= version && *s >= 1);
        let mut first = vec![Arc::new(ServerMessage::Joined {
            game: log::game_id(&self.key),
            viewer,
            version,
            state_hash: projection.state_hash(),
            state: resume_from.is_none().then(|| Box::new(projection)),
        })];
        if let Some(since) = resume_from {
            first.extend(
                (since + 1..=version)
                    .map(|seq| Arc::new(ServerMessage::Event(self.sequenced(viewer, seq)))),
            );
        }
        // The queue must take the snapshot and the catch-up at once; a client that is behind
        // by more than its queue holds joins afresh without `since`.
        if first.len() > out.capacity() {
            let _ = reply.send(Err((
                ErrorCode::LimitReached,
                format!(
                    "{} events to catch up is more than one connection's queue; join without `since` for a fresh snapshot",
                    first.len() - 1
                ),
            )));
            return;
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
        let mut dice = ScriptedDice::default();
        let result = decide(&self.game, side, &command, &mut dice);
        let events = match result {
            Ok(events) => events,
            Err(violation) => {
                debug!(game = %log::game_id(&self.key), %violation, "command refused");
                let refused = Arc::new(ServerMessage::Refused {
                    id,
                    version: self.game.version,
                    violation,
                });
                self.send_to(subscriber, refused);
                return;
            }
        };

        // Durable first: encode the chain, append, and only then apply and tell anyone.
        let first_seq = self.game.version + 1;
        let mut prev = self.head;
        let mut records = Vec::with_capacity(events.len());
        for (i, event) in events.iter().enumerate() {
            let (bytes, hash) = log::encode(first_seq + i as u64, prev, event);
            records.push(bytes);
            prev = hash;
        }
        // Awaited, not blocked on: while the store's group commit flushes, this task's thread
        // serves other games, whose writes join the next flush.
        if let Err(e) = self.store.append(&self.key, first_seq, records).await {
            warn!(game = %log::game_id(&self.key), why = %e, "append failed; command not applied");
            self.send_to(
                subscriber,
                Arc::new(ServerMessage::Error {
                    code: ErrorCode::Storage,
                    message: format!(
                        "the server could not store command {id}; nothing changed ({e})"
                    ),
                }),
            );
            return;
        }
        self.head = prev;

        let mut logged = Vec::with_capacity(events.len());
        for event in events {
            let visibility = Visibility::of(&self.game, &event);
            apply(&mut self.game, &event);
            self.log.push((event, visibility));
            logged.push(self.game.version);
        }
        info!(game = %log::game_id(&self.key), version = self.game.version, "command accepted");

        // One message per viewer class, shared by every subscriber with that view.
        let broadcasts: [Vec<Outbound>; 3] = VIEWERS.map(|viewer| {
            logged
                .iter()
                .map(|seq| Arc::new(ServerMessage::Event(self.sequenced(viewer, *seq))))
                .collect()
        });
        let mut dropped = vec![];
        for s in &self.subscribers {
            let messages: Vec<Outbound> = if s.id == subscriber {
                vec![Arc::new(ServerMessage::Accepted {
                    id,
                    version: self.game.version,
                    events: logged
                        .iter()
                        .map(|seq| self.sequenced(s.viewer, *seq))
                        .collect(),
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
