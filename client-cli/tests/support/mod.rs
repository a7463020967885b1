//! A small stand-in for `asl-server`, enough to drive the client end to end from this crate's
//! tests: one game, the real rules (`decide`/`apply` from `protocol`), the wire protocol as
//! `protocol::wire` documents it, and switches for the awkward cases a client must survive
//! (dropped connections, events that arrive after the reply they precede, short log pages).
//!
//! The end-to-end tests against the real server live in the `tests` crate; this one exists so
//! the client's own behaviour can be pinned down without waiting on, or depending on, it.

#![allow(dead_code)] // each test file uses its own part of this module

use futures_util::{SinkExt, StreamExt};
use protocol::wire::{
    self, ClientMessage, ErrorCode, Sequenced, ServerMessage, Tokens, LOG_PAGE_EVENTS_MAX,
    WIRE_PATH,
};
use protocol::{apply, decide, Event, Game, Scenario, ScriptedDice, Side, Viewer};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::{http, Message};

pub const SCENARIO: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");
pub const GAME: &str = "g1";
pub const GERMAN: &str = "token-german";
pub const RUSSIAN: &str = "token-russian";
pub const SPECTATOR: &str = "token-spectator";

/// Switches for the awkward cases.
#[derive(Clone, Debug)]
pub struct Options {
    /// Close (without a close frame) each of the first `drops` spectator connections that have
    /// forwarded `drop_after` stream events. Players' connections are left alone: a player
    /// whose `run` fails would leave the other waiting for a turn that never comes.
    pub drops: usize,
    pub drop_after: usize,
    /// Send a command's reply before the other players' events that precede it.
    pub late_events: bool,
    /// Most events per `Log` page.
    pub page_max: u64,
    /// Close a connection that sends no frame (a websocket ping counts) for this long, as
    /// asl-server does after its `IDLE_TIMEOUT`.
    pub idle_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            drops: 0,
            drop_after: 0,
            late_events: false,
            page_max: LOG_PAGE_EVENTS_MAX,
            idle_timeout: Duration::from_secs(300),
        }
    }
}

#[derive(Clone, Debug)]
struct Broadcast {
    seq: u64,
    event: Event,
    origin: usize,
}

struct Room {
    game: Game,
    log: Vec<Event>,
    events: broadcast::Sender<Broadcast>,
}

struct Shared {
    room: Mutex<Option<Room>>,
    options: Options,
    drops_left: AtomicUsize,
    joins: Mutex<Vec<Option<u64>>>,
    connections: AtomicUsize,
}

pub struct FakeServer {
    pub url: String,
    shared: Arc<Shared>,
}

impl FakeServer {
    pub async fn start(options: Options) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared {
            room: Mutex::new(None),
            drops_left: AtomicUsize::new(options.drops),
            options,
            joins: Mutex::new(vec![]),
            connections: AtomicUsize::new(0),
        });
        let accepting = shared.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let id = accepting.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, accepting.clone(), id));
            }
        });
        FakeServer { url, shared }
    }

    /// A server with the game already created (as version 1, `GameCreated`).
    pub async fn with_game(options: Options) -> FakeServer {
        let server = FakeServer::start(options).await;
        create(&server.shared, SCENARIO).expect("the shipped scenario is valid");
        server
    }

    /// Every `Join` so far, by its `since`.
    pub fn joins(&self) -> Vec<Option<u64>> {
        self.shared.joins.lock().unwrap().clone()
    }

    pub async fn wait_for_joins(&self, n: usize) {
        for _ in 0..500 {
            if self.joins().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no {n} joins within 5 s");
    }

    /// The full game, as the server holds it.
    pub fn game(&self) -> Game {
        self.shared
            .room
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .game
            .clone()
    }
}

fn create(shared: &Shared, scenario_toml: &str) -> Result<(), String> {
    let scenario = Scenario::from_toml(scenario_toml).map_err(|e| e.to_string())?;
    let mut game = Game::new(scenario.clone());
    let created = Event::GameCreated { scenario };
    apply(&mut game, &created);
    *shared.room.lock().unwrap() = Some(Room {
        game,
        log: vec![created],
        events: broadcast::channel(1024).0,
    });
    Ok(())
}

fn viewer_of(token: &str) -> Option<Viewer> {
    match token {
        GERMAN => Some(Viewer::Side(Side::A)),
        RUSSIAN => Some(Viewer::Side(Side::B)),
        SPECTATOR => Some(Viewer::Spectator),
        _ => None,
    }
}

fn error(code: ErrorCode, message: &str) -> ServerMessage {
    ServerMessage::Error {
        code,
        message: message.into(),
    }
}

/// Refuses a handshake on any path but the protocol's, as the real server does.
#[allow(clippy::result_large_err)] // the shape of tungstenite's handshake callback
fn check_path(request: &Request, response: Response) -> Result<Response, ErrorResponse> {
    if request.uri().path() == WIRE_PATH {
        Ok(response)
    } else {
        let mut refusal = ErrorResponse::new(Some("wrong path".into()));
        *refusal.status_mut() = http::StatusCode::NOT_FOUND;
        Err(refusal)
    }
}

async fn serve(stream: TcpStream, shared: Arc<Shared>, id: usize) {
    let Ok(socket) = tokio_tungstenite::accept_hdr_async(stream, check_path).await else {
        return;
    };
    let (mut sink, mut frames) = socket.split();
    let mut joined: Option<(Viewer, broadcast::Receiver<Broadcast>)> = None;
    let mut forwarded = 0;
    loop {
        let incoming = tokio::select! {
            frame = tokio::time::timeout(shared.options.idle_timeout, frames.next()) => match frame {
                Ok(frame) => frame,
                Err(_) => return, // idle too long
            },
            b = next_broadcast(&mut joined) => {
                if b.origin != id {
                    let event = ServerMessage::Event(Sequenced { seq: b.seq, event: Some(b.event) });
                    if sink.send(Message::text(wire::to_json(&event))).await.is_err() {
                        return;
                    }
                    forwarded += 1;
                    if drop_now(&shared, &joined, forwarded) {
                        return;
                    }
                }
                continue;
            }
        };
        let text = match incoming {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
            Some(Ok(_)) => continue,
        };
        let message: ClientMessage = wire::from_json(text.as_str()).unwrap();
        let mut replies = vec![];
        match message {
            ClientMessage::CreateGame { scenario, .. } => match create(&shared, &scenario) {
                Ok(()) => replies.push(ServerMessage::Created {
                    game: GAME.into(),
                    sides: shared
                        .room
                        .lock()
                        .unwrap()
                        .as_ref()
                        .unwrap()
                        .game
                        .scenario
                        .sides
                        .clone(),
                    tokens: Tokens {
                        side_a: GERMAN.into(),
                        side_b: RUSSIAN.into(),
                        spectator: SPECTATOR.into(),
                    },
                }),
                Err(e) => replies.push(error(ErrorCode::BadScenario, &e)),
            },
            ClientMessage::Join { game, token, since } => {
                let viewer = viewer_of(&token);
                if game != GAME {
                    replies.push(error(ErrorCode::UnknownGame, "no game has that id"));
                } else if let Some(viewer) = viewer {
                    let room = shared.room.lock().unwrap();
                    let room = room.as_ref().unwrap();
                    shared.joins.lock().unwrap().push(since);
                    let state = room.game.project(viewer);
                    replies.push(ServerMessage::Joined {
                        game,
                        viewer,
                        version: room.game.version,
                        state: since.is_none().then(|| Box::new(state.clone())),
                        state_hash: state.state_hash(),
                    });
                    for (i, event) in room
                        .log
                        .iter()
                        .enumerate()
                        .skip(since.unwrap_or(u64::MAX) as usize)
                    {
                        replies.push(ServerMessage::Event(Sequenced {
                            seq: i as u64 + 1,
                            event: Some(event.clone()),
                        }));
                    }
                    joined = Some((viewer, room.events.subscribe()));
                } else {
                    replies.push(error(
                        ErrorCode::BadToken,
                        "that token is not one of this game's",
                    ));
                }
            }
            ClientMessage::Command {
                id: command_id,
                command,
            } => match &mut joined {
                None => replies.push(error(ErrorCode::NotJoined, "join a game first")),
                Some((Viewer::Spectator, _)) => {
                    replies.push(error(ErrorCode::ReadOnly, "spectators cannot command"))
                }
                Some((Viewer::Side(side), receiver)) => {
                    let reply = {
                        let mut room = shared.room.lock().unwrap();
                        let room = room.as_mut().unwrap();
                        match decide(&room.game, *side, &command, &mut ScriptedDice::default()) {
                            Ok(events) => {
                                let mut sequenced = vec![];
                                for event in events {
                                    apply(&mut room.game, &event);
                                    room.log.push(event.clone());
                                    let seq = room.game.version;
                                    let _ = room.events.send(Broadcast {
                                        seq,
                                        event: event.clone(),
                                        origin: id,
                                    });
                                    sequenced.push(Sequenced {
                                        seq,
                                        event: Some(event),
                                    });
                                }
                                ServerMessage::Accepted {
                                    id: command_id,
                                    version: room.game.version,
                                    events: sequenced,
                                }
                            }
                            Err(violation) => ServerMessage::Refused {
                                id: command_id,
                                version: room.game.version,
                                violation,
                            },
                        }
                    };
                    // Others' events already queued for us precede this reply.
                    let mut earlier = vec![];
                    while let Ok(b) = receiver.try_recv() {
                        if b.origin != id {
                            earlier.push(ServerMessage::Event(Sequenced {
                                seq: b.seq,
                                event: Some(b.event),
                            }));
                        }
                    }
                    if shared.options.late_events {
                        replies.push(reply);
                        replies.extend(earlier);
                    } else {
                        replies.extend(earlier);
                        replies.push(reply);
                    }
                }
            },
            ClientMessage::GetState => {
                let room = shared.room.lock().unwrap();
                let game = &room.as_ref().unwrap().game;
                let viewer = joined.as_ref().map_or(Viewer::Spectator, |j| j.0);
                let state = game.project(viewer);
                replies.push(ServerMessage::State {
                    version: game.version,
                    state_hash: state.state_hash(),
                    state: Box::new(state),
                });
            }
            ClientMessage::GetLog { from } => {
                let room = shared.room.lock().unwrap();
                let room = room.as_ref().unwrap();
                let events = room
                    .log
                    .iter()
                    .enumerate()
                    .map(|(i, e)| Sequenced {
                        seq: i as u64 + 1,
                        event: Some(e.clone()),
                    })
                    .filter(|s| s.seq >= from)
                    .take(shared.options.page_max as usize)
                    .collect();
                replies.push(ServerMessage::Log {
                    version: room.game.version,
                    events,
                });
            }
            ClientMessage::Ping { nonce } => replies.push(ServerMessage::Pong { nonce }),
        }
        for reply in replies {
            let event = matches!(reply, ServerMessage::Event(_));
            if sink
                .send(Message::text(wire::to_json(&reply)))
                .await
                .is_err()
            {
                return;
            }
            if event {
                forwarded += 1;
                if drop_now(&shared, &joined, forwarded) {
                    return;
                }
            }
        }
    }
}

/// Whether to drop this connection now, without a close frame, like a network failure.
fn drop_now(
    shared: &Shared,
    joined: &Option<(Viewer, broadcast::Receiver<Broadcast>)>,
    forwarded: usize,
) -> bool {
    matches!(joined, Some((Viewer::Spectator, _)))
        && forwarded >= shared.options.drop_after
        && shared
            .drops_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
}

async fn next_broadcast(
    joined: &mut Option<(Viewer, broadcast::Receiver<Broadcast>)>,
) -> Broadcast {
    match joined {
        Some((_, receiver)) => receiver
            .recv()
            .await
            .expect("the room outlives its connections"),
        None => std::future::pending().await,
    }
}
