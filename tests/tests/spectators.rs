//! End to end, spectators: many watchers follow a game while the players play on; one that
//! never reads is cut off with a close frame that says why, without holding anyone up; and a
//! watcher whose connection is cut at arbitrary points resumes with `since` and ends with
//! exactly the server's projection; a read answered right after a command reaches its reader
//! after the command's event.

use client::{Connection, Follower, Reply};
use e2e::TestServer;
use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage};
use protocol::{Command, Outcome};
use server::operations::config::Config;
use server::store::{Durable, EventStore, GameKey, MemoryStore, NotifyRecords, StoreError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const WAIT: Duration = Duration::from_secs(60);

/// The German's adjudications of the concealed 3-3-7 (`337a`, which he knows as `?1`, A12) —
/// alternately broken and rallied, each with a long note — make steady traffic that changes no
/// Wall Advantage and needs no turn-taking.
fn traffic(n: u64) -> impl Iterator<Item = Command> {
    let note = "x".repeat(190);
    (0..n).map(move |i| Command::Adjudicate {
        unit: "?1".into(),
        outcome: if i % 2 == 0 {
            Outcome::Break
        } else {
            Outcome::Rally
        },
        note: note.clone(),
    })
}

/// A spectator's `join` of `game` from its start, for the tests that speak frame by frame.
fn spectator_join(game: &str, tokens: &protocol::wire::Tokens) -> ClientMessage {
    ClientMessage::Join {
        game: game.to_string(),
        token: tokens.spectator.clone(),
        since: None,
    }
}

async fn create(url: &str) -> (String, protocol::wire::Tokens) {
    let mut c = Connection::connect(url).await.unwrap();
    let game = c.create_game(SCENARIO, None).await.unwrap();
    (game.game, game.tokens)
}

/// A watcher is cut off for having stopped (no frame written for the grace period while frames
/// wait for it), never for how full its queue is at one moment: on a loaded machine a watcher
/// that reads everything can go unscheduled while the game commits several commands, and it
/// used to be cut off with the one that never reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_that_never_reads_is_cut_off_and_nobody_waits_for_it() {
    // Half by each side: a side enters at most `ENTRIES_PER_PLAYER_TURN_MAX` adjudications
    // a Player Turn.
    const COMMANDS: u64 = 2 * protocol::dispute::ENTRIES_PER_PLAYER_TURN_MAX as u64;
    const WATCHERS: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            outbound_queue_max: 8,
            socket_send_buffer_bytes: 8 * 1024,
            commands_per_second_max: 100_000,
            slow_reader_grace: Duration::from_secs(5),
            // The slow one must be cut off by the game, whose close frame says why, not by its
            // own send's deadline, which cannot send one.
            send_timeout: 4 * WAIT,
            ..Config::default()
        },
    )
    .await;
    let dropped_before = e2e::metric(server.addr, "asl_slow_readers_dropped_total").await;
    let (game, tokens) = create(&server.url).await;

    // The slow one: a tiny receive buffer, joined, and then never read again.
    let addr = server.url.trim_start_matches("ws://").to_string();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let stream = socket.connect(addr.parse().unwrap()).await.unwrap();
    let (mut slow, _) = tokio_tungstenite::client_async(format!("{}/v1", server.url), stream)
        .await
        .unwrap();
    let join = spectator_join(&game, &tokens);
    slow.send(Message::text(wire::to_json(&join)))
        .await
        .unwrap();

    // The others read everything, in order.
    let final_version = 1 + COMMANDS;
    let mut watchers = vec![];
    for _ in 0..WATCHERS {
        let (url, game, token) = (server.url.clone(), game.clone(), tokens.spectator.clone());
        watchers.push(tokio::spawn(async move {
            let mut c = Connection::connect(&url).await.unwrap();
            let joined = c.join(&game, &token, None).await.unwrap();
            let mut f = Follower::from_snapshot(joined.state.unwrap(), joined.state_hash).unwrap();
            while f.version() < final_version {
                let e = c.next_event().await.unwrap();
                f.advance(&e).unwrap();
            }
            f.game().state_hash()
        }));
    }

    // The German plays on, then the Russian, who names his "?" by its id; every command gets
    // its answer.
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    let mut russian = Connection::connect(&server.url).await.unwrap();
    russian.join(&game, &tokens.side_b, None).await.unwrap();
    let played = tokio::time::timeout(WAIT, async {
        for (id, command) in traffic(COMMANDS).enumerate() {
            let (player, command) = match command {
                _ if (id as u64) < COMMANDS / 2 => (&mut german, command),
                Command::Adjudicate { outcome, note, .. } => (
                    &mut russian,
                    Command::Adjudicate {
                        unit: "337a".into(),
                        outcome,
                        note,
                    },
                ),
                other => unreachable!("{other:?}"),
            };
            match player.command(id as u64 + 1, command, None).await.unwrap() {
                Reply::Accepted { .. } => {}
                Reply::Refused { violation, .. } => panic!("refused: {violation}"),
            }
        }
    })
    .await;
    assert!(played.is_ok(), "the players were held up");

    let mut hashes = vec![];
    for w in watchers {
        hashes.push(
            tokio::time::timeout(WAIT, w)
                .await
                .expect("watcher in time")
                .unwrap(),
        );
    }
    let mut reader = Connection::connect(&server.url).await.unwrap();
    let joined = reader.join(&game, &tokens.spectator, None).await.unwrap();
    assert_eq!(joined.version, final_version);
    assert!(hashes.iter().all(|h| *h == joined.state_hash));

    // The slow one has written nothing since its queue filled: the game cuts it off once the
    // grace period has passed.
    tokio::time::timeout(WAIT, async {
        while e2e::metric(server.addr, "asl_slow_readers_dropped_total").await <= dropped_before {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the slow reader is cut off");

    // Now read the slow one: what it was sent, then the close frame saying why it was cut off.
    let closed = tokio::time::timeout(WAIT, async {
        while let Some(frame) = slow.next().await {
            match frame {
                Ok(Message::Close(Some(frame))) => return Some(frame),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
        None
    })
    .await
    .expect("the slow connection ends");
    let frame = closed.expect("a close frame");
    assert_eq!(frame.code, CloseCode::Policy);
    assert!(frame.reason.as_str().contains("behind"), "{}", frame.reason);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_cut_off_at_any_point_resumes_to_the_servers_state() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            commands_per_second_max: 100_000,
            ..Config::default()
        },
    )
    .await;
    let (game, tokens) = create(&server.url).await;
    // The watcher joins at the start and is cut at once; the game then goes on without it.
    let mut first = Connection::connect(&server.url).await.unwrap();
    let joined = first.join(&game, &tokens.spectator, None).await.unwrap();
    let mut follower =
        Some(Follower::from_snapshot(joined.state.unwrap(), joined.state_hash).unwrap());
    drop(first);
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    for (id, command) in traffic(120).enumerate() {
        german.command(id as u64 + 1, command, None).await.unwrap();
    }

    // Cut points from a fixed linear congruential sequence: arbitrary, and the same every run.
    let mut seed: u64 = 0x5eed;
    let mut next_cut = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        1 + (seed >> 33) % 17
    };
    let mut reconnects = 0;
    while follower.as_ref().is_none_or(|f| f.version() < 121) {
        let mut c = Connection::connect(&server.url).await.unwrap();
        let since = follower.as_ref().map(|f| f.version());
        let joined = c.join(&game, &tokens.spectator, since).await.unwrap();
        let f = match (follower.take(), joined.state) {
            (None, Some(state)) => Follower::from_snapshot(state, joined.state_hash).unwrap(),
            (Some(mut f), None) => {
                f.expect_hash(joined.version, joined.state_hash).unwrap();
                f
            }
            other => panic!("unexpected join answer: resumed={}", other.0.is_some()),
        };
        let mut f = f;
        for _ in 0..next_cut() {
            if f.version() >= joined.version {
                break;
            }
            let e = tokio::time::timeout(WAIT, c.next_event())
                .await
                .unwrap()
                .unwrap();
            f.advance(&e).unwrap();
        }
        drop(c); // cut
        reconnects += 1;
        follower = Some(f);
    }
    let f = follower.unwrap();
    let mut check = Connection::connect(&server.url).await.unwrap();
    check.join(&game, &tokens.spectator, None).await.unwrap();
    let snapshot = check.get_state().await.unwrap();
    assert_eq!(f.version(), snapshot.version);
    assert_eq!(f.game().state_hash(), snapshot.state_hash);
    assert!(reconnects > 5, "only {reconnects} cuts");
    server.stop().await;
}

/// A spectator is served on the audience's threads once joined (`server::network::audience`): it still
/// reads the game, answers reads, and on shutdown hears why it is closed, with the close frame
/// that says to come back; and the server stops without waiting for its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_served_apart_still_reads_and_hears_the_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let (game, tokens) = create(&server.url).await;
    let (mut watcher, _) = tokio_tungstenite::connect_async(format!("{}/v1", server.url))
        .await
        .unwrap();
    let join = spectator_join(&game, &tokens);
    let joined = e2e::ask(&mut watcher, &join, WAIT).await;
    assert!(
        matches!(joined, wire::ServerMessage::Joined { .. }),
        "{joined:?}"
    );

    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    for (id, command) in traffic(3).enumerate() {
        let reply = german.command(id as u64 + 1, command, None).await.unwrap();
        assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    }
    let mut seen = 0;
    while seen < 3 {
        if let wire::ServerMessage::Event(_) = e2e::message(&mut watcher, WAIT).await {
            seen += 1;
        }
    }
    let state = e2e::ask(&mut watcher, &ClientMessage::GetState, WAIT).await;
    assert!(
        matches!(state, wire::ServerMessage::State { .. }),
        "{state:?}"
    );

    let stopping = tokio::spawn(server.stop());
    let notice = e2e::answer(&mut watcher, WAIT).await;
    assert!(
        matches!(
            notice,
            wire::ServerMessage::Error {
                code: wire::ErrorCode::ShuttingDown,
                ..
            }
        ),
        "{notice:?}"
    );
    let close = loop {
        match tokio::time::timeout(WAIT, watcher.next())
            .await
            .expect("closed in time")
        {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => continue,
            other => panic!("no close frame: {other:?}"),
        }
    };
    assert_eq!(close.map(|f| f.code), Some(CloseCode::Away));
    drop(watcher);
    tokio::time::timeout(WAIT, stopping)
        .await
        .expect("the server stops")
        .unwrap();
}

/// A store whose appends settle only while its gate is open, so a test can hold a command's
/// write back and line up what reaches the game meanwhile.
struct Gated {
    inner: MemoryStore,
    open: Arc<(Mutex<bool>, Condvar)>,
    /// Appends made while the gate was shut.
    held: AtomicUsize,
}

impl Gated {
    fn set(&self, open: bool) {
        let (lock, changed) = &*self.open;
        *lock.lock().unwrap() = open;
        changed.notify_all();
    }
}

impl EventStore for Gated {
    fn append_with_notify(
        &self,
        game: &GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        notify: server::store::NotifyWrites,
    ) -> Durable {
        let written = self
            .inner
            .append_with_notify(game, first_seq, records, notify);
        if *self.open.0.lock().unwrap() {
            return written;
        }
        self.held.fetch_add(1, Ordering::SeqCst);
        let (settle, durable) = Durable::pending();
        let open = self.open.clone();
        std::thread::spawn(move || {
            let (lock, changed) = &*open;
            drop(changed.wait_while(lock.lock().unwrap(), |open| !*open));
            let _ = settle.send(written.wait());
        });
        durable
    }

    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        self.inner.load(game)
    }

    fn put_meta(&self, game: &GameKey, meta: Vec<u8>) -> Durable {
        self.inner.put_meta(game, meta)
    }

    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError> {
        self.inner.games()
    }

    fn put_notify(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Durable {
        self.inner.put_notify(key, value)
    }

    fn notify_records(&self) -> Result<NotifyRecords, StoreError> {
        self.inner.notify_records()
    }
}

/// Reads `ws` up to the next `State`, checking it against the events before it: a client is
/// never told of a version whose events it has not been sent yet.
async fn state_after_its_events(ws: &mut e2e::Socket, mut version: u64) -> u64 {
    loop {
        match e2e::message(ws, WAIT).await {
            wire::ServerMessage::Event(e) => version = e.seq,
            wire::ServerMessage::State { version: at, .. } => {
                assert_eq!(
                    at, version,
                    "the state at version {at} came after the events up to {version} only"
                );
                return at;
            }
            other => panic!("unexpected frame: {other:?}"),
        }
    }
}

/// A read the game answers right after a command carries the state after that command; the
/// command's event, queued for the reader first, must reach it first. The store holds the
/// command's write until both readers' `get_state` wait in the game's inboxes, so the game
/// queues the event and then answers, while each reader's connection waits for the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_answered_after_a_command_follows_the_commands_event() {
    let store = Arc::new(Gated {
        inner: MemoryStore::new(),
        open: Arc::new((Mutex::new(true), Condvar::new())),
        held: AtomicUsize::new(0),
    });
    let server = TestServer::start_on(store.clone(), Config::default()).await;
    let (game, tokens) = create(&server.url).await;
    let mut readers = vec![];
    for token in [&tokens.spectator, &tokens.side_b] {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("{}/v1", server.url))
            .await
            .unwrap();
        let join = ClientMessage::Join {
            game: game.clone(),
            token: token.clone(),
            since: None,
        };
        let wire::ServerMessage::Joined { version, .. } = e2e::ask(&mut ws, &join, WAIT).await
        else {
            panic!("not joined");
        };
        readers.push((ws, version));
    }
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();

    store.set(false);
    let command = traffic(1).next().unwrap();
    let acting = tokio::spawn(async move { german.command(1, command, None).await.unwrap() });
    tokio::time::timeout(WAIT, async {
        while store.held.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the command's write reaches the store");
    for (ws, _) in &mut readers {
        let ask = Message::text(wire::to_json(&ClientMessage::GetState));
        ws.send(ask).await.unwrap();
    }
    // Time for both reads to reach the game's inboxes. Were it too short on a loaded machine,
    // a read would reach the game after the command's event reached its connection, and the
    // test would pass without testing.
    tokio::time::sleep(Duration::from_millis(300)).await;
    store.set(true);
    let reply = tokio::time::timeout(WAIT, acting).await.unwrap().unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    for (ws, version) in &mut readers {
        let at = state_after_its_events(ws, *version).await;
        assert_eq!(at, *version + 1, "the read was answered after the command");
    }
    server.stop().await;
}
