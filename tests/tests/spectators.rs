//! End to end, spectators: many watchers follow a game while the players play on; one that
//! never reads is cut off with a close frame that says why, without holding anyone up; and a
//! watcher whose connection is cut at arbitrary points resumes with `since` and ends with
//! exactly the server's projection.

use client::{Connection, Follower, Reply};
use e2e::TestServer;
use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage};
use protocol::{Command, Outcome};
use server::config::Config;
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const WAIT: Duration = Duration::from_secs(60);

/// Adjudications of the concealed 3-3-7 — alternately broken and rallied, each with a long
/// note — make steady traffic that changes no Wall Advantage and needs no turn-taking.
fn traffic(n: u64) -> impl Iterator<Item = Command> {
    let note = "x".repeat(190);
    (0..n).map(move |i| Command::Adjudicate {
        unit: "337a".into(),
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
    const COMMANDS: u64 = 1_500;
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

    // The German plays on; every command gets its answer.
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    let played = tokio::time::timeout(WAIT, async {
        for (id, command) in traffic(COMMANDS).enumerate() {
            match german.command(id as u64 + 1, command, None).await.unwrap() {
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

/// A spectator is served on the audience's threads once joined (`server::audience`): it still
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
        let frame = tokio::time::timeout(WAIT, watcher.next())
            .await
            .expect("an event in time")
            .expect("open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            if let wire::ServerMessage::Event(_) = wire::from_json(text.as_str()).unwrap() {
                seen += 1;
            }
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
