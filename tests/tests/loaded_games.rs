//! End to end, games in memory (issue 18): a game nobody is connected to is unloaded after its
//! idle time and replayed from its log on the next join; the games in memory are capped, the
//! least recently joined idle one making room, and a load or creation refused by name when
//! someone is connected to every one.
//!
//! The tests read `asl_games_loaded`, a process-wide gauge, so this file holds only these
//! tests and they run one at a time. None measures time: each waits, with a generous bound,
//! for what must follow.

use client::{Connection, ConnectionError, Reply};
use e2e::TestServer;
use protocol::event::DiceCommitted;
use protocol::wire::ErrorCode;
use server::operations::config::Config;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const WAIT: Duration = Duration::from_secs(60);

/// The tests of this file, one at a time: they read a process-wide gauge.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn start(config: Config) -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            commands_per_second_max: 100_000,
            attempts_per_second_max: 100_000,
            creates_per_ip_per_hour_max: 100_000,
            ..config
        },
    )
    .await;
    (dir, server)
}

async fn loaded(server: &TestServer) -> f64 {
    e2e::metric(server.addr, "asl_games_loaded").await
}

/// Waits until `asl_games_loaded` is `n`.
async fn until_loaded(server: &TestServer, n: f64) {
    tokio::time::timeout(WAIT, async {
        while loaded(server).await != n {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("games loaded never came to {n}"));
}

async fn create(server: &TestServer) -> Result<(String, protocol::wire::Tokens), ConnectionError> {
    let mut c = Connection::connect(&server.url).await.unwrap();
    let created = c.create_game(SCENARIO, None).await;
    c.close().await;
    created.map(|g| (g.game, g.tokens))
}

use e2e::adjudicate;

/// Asserts `result` is `limit_reached` for the games in memory.
fn assert_full<T: std::fmt::Debug>(result: Result<T, ConnectionError>) {
    match result {
        Err(ConnectionError::Server { code, message }) => {
            assert_eq!(code, ErrorCode::LimitReached, "{message}");
            assert!(message.contains("games in memory"), "{message}");
        }
        other => panic!("expected limit_reached for games in memory, got {other:?}"),
    }
}

/// Joins `game` as soon as there is room for it in memory (a connection that has just closed
/// is gone once the server has seen it go); until then each join is refused as full.
async fn join_when_there_is_room(
    server: &TestServer,
    game: &str,
    token: &str,
    since: Option<u64>,
) -> (Connection, client::Joined) {
    tokio::time::timeout(WAIT, async {
        loop {
            let mut c = Connection::connect(&server.url).await.unwrap();
            match c.join(game, token, since).await {
                Ok(joined) => return (c, joined),
                Err(e) => {
                    assert_full::<()>(Err(e));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    })
    .await
    .expect("a place in memory comes free")
}

/// A game nobody is connected to is unloaded once idle, and not before: a spectator keeps it
/// in memory. Joined again, it is replayed from its log: the same position, the player's
/// `since` resumes without a rollback, and play goes on from where it stood.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_game_is_unloaded_and_replayed_on_the_next_join() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (_dir, server) = start(Config {
        game_unload_after_idle: Duration::from_millis(300),
        ..Config::default()
    })
    .await;
    let unloaded_before = e2e::metric(server.addr, "asl_games_unloaded_total").await;
    let (game, tokens) = create(&server).await.unwrap();
    let mut a = Connection::connect(&server.url).await.unwrap();
    a.join(&game, &tokens.side_a, None).await.unwrap();
    for id in 1..=3 {
        assert!(matches!(
            a.command(id, adjudicate(id - 1), None).await.unwrap(),
            Reply::Accepted { .. }
        ));
    }
    let before = a.get_state().await.unwrap();
    let mut watcher = Connection::connect(&server.url).await.unwrap();
    watcher.join(&game, &tokens.spectator, None).await.unwrap();
    a.close().await;
    // Several idle times pass with the spectator joined: the game stays.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(loaded(&server).await, 1.0, "a watched game was unloaded");
    watcher.close().await;
    until_loaded(&server, 0.0).await;
    assert!(e2e::metric(server.addr, "asl_games_unloaded_total").await > unloaded_before);

    let mut a = Connection::connect(&server.url).await.unwrap();
    let joined = a
        .join(&game, &tokens.side_a, Some(before.version))
        .await
        .unwrap();
    assert_eq!(joined.version, before.version);
    assert_eq!(joined.state_hash, before.state_hash);
    assert_eq!(joined.head, before.head);
    until_loaded(&server, 1.0).await;
    match a.command(4, adjudicate(3), None).await.unwrap() {
        Reply::Accepted { version, .. } => assert!(version > before.version),
        other => panic!("{other:?}"),
    }
    a.close().await;
    server.stop().await;
}

/// At most `loaded_games_max` games are in memory: a new one takes the place of the least
/// recently joined game nobody is connected to; with someone connected to each, creating or
/// loading one more is refused by name, until someone leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_in_memory_are_capped_and_an_idle_one_makes_room() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (_dir, server) = start(Config {
        loaded_games_max: 2,
        game_unload_after_idle: Duration::from_secs(3_600),
        ..Config::default()
    })
    .await;
    let (first, first_tokens) = create(&server).await.unwrap();
    let (second, second_tokens) = create(&server).await.unwrap();
    // A third takes the first's place: nobody is connected to either.
    let (third, third_tokens) = create(&server).await.unwrap();
    until_loaded(&server, 2.0).await;

    let mut on_second = Connection::connect(&server.url).await.unwrap();
    on_second
        .join(&second, &second_tokens.side_a, None)
        .await
        .unwrap();
    assert!(matches!(
        on_second.command(1, adjudicate(0), None).await.unwrap(),
        Reply::Accepted { .. }
    ));
    let second_before = on_second.get_state().await.unwrap();
    let mut on_third = Connection::connect(&server.url).await.unwrap();
    on_third
        .join(&third, &third_tokens.side_b, None)
        .await
        .unwrap();

    // Someone is connected to both games in memory: no room for another.
    assert_full(create(&server).await);
    let mut on_first = Connection::connect(&server.url).await.unwrap();
    assert_full(on_first.join(&first, &first_tokens.side_a, None).await);
    assert_eq!(loaded(&server).await, 2.0);

    // The second game's player leaves: its game makes room for the first.
    on_second.close().await;
    let joined = join_when_there_is_room(&server, &first, &first_tokens.side_a, None).await;
    assert_eq!(joined.1.version, 1);
    until_loaded(&server, 2.0).await;

    // The second game comes back from its log as it was, once the first's player leaves.
    joined.0.close().await;
    let (_, back) = join_when_there_is_room(
        &server,
        &second,
        &second_tokens.side_a,
        Some(second_before.version),
    )
    .await;
    assert_eq!(back.version, second_before.version);
    assert_eq!(back.state_hash, second_before.state_hash);
    until_loaded(&server, 2.0).await;
    on_third.close().await;
    server.stop().await;
}

/// Joins racing the unload: with an idle time of a millisecond the game is let go between
/// nearly every visit, while players come back at once, on both seats. No join fails, no
/// command is lost or applied twice: each is accepted on the version the last one left, as it
/// would be with the game in memory throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joins_racing_the_unload_find_the_game_as_it_was_left() {
    const VISITS: u64 = 40;
    let _one = ONE_AT_A_TIME.lock().await;
    let (_dir, server) = start(Config {
        game_unload_after_idle: Duration::from_millis(1),
        ..Config::default()
    })
    .await;
    let unloaded_before = e2e::metric(server.addr, "asl_games_unloaded_total").await;
    let (game, tokens) = create(&server).await.unwrap();
    let mut version = None;
    for visit in 0..VISITS {
        // The spectator comes and goes too, so the audience's inbox races as well.
        let mut watcher = Connection::connect(&server.url).await.unwrap();
        let watching = watcher.join(&game, &tokens.spectator, None);
        let mut a = Connection::connect(&server.url).await.unwrap();
        let (joined, watched) = tokio::join!(a.join(&game, &tokens.side_a, version), watching);
        let joined = joined.unwrap_or_else(|e| panic!("visit {visit}: {e}"));
        watched.unwrap_or_else(|e| panic!("visit {visit}: watching: {e}"));
        if let Some(held) = version {
            assert_eq!(joined.version, held, "visit {visit}");
        }
        match a.command(visit + 1, adjudicate(visit), None).await.unwrap() {
            Reply::Accepted { version: now, .. } => {
                assert!(version.is_none_or(|held| now > held), "visit {visit}");
                version = Some(now);
            }
            other => panic!("visit {visit}: {other:?}"),
        }
        a.close().await;
        watcher.close().await;
    }
    let unloads = e2e::metric(server.addr, "asl_games_unloaded_total").await - unloaded_before;
    eprintln!("{VISITS} visits, the game unloaded {unloads} times");
    assert!(unloads > 0.0);
    server.stop().await;
}

/// An unloaded game keeps what its task changed of its metadata: after both sides agree to
/// reveal the dice seed, the server draws a new one; unloaded and replayed, the game rolls
/// under that new seed's commitment, not the first one's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unloaded_game_keeps_its_new_dice_seed() {
    use protocol::game::command::DiceCount;
    use protocol::game::dice::RollPurpose;
    let _one = ONE_AT_A_TIME.lock().await;
    let (_dir, server) = start(Config {
        game_unload_after_idle: Duration::from_millis(300),
        ..Config::default()
    })
    .await;
    let (game, tokens) = create(&server).await.unwrap();
    let roll = || protocol::Command::Roll {
        dice: DiceCount::Two,
        purpose: RollPurpose::Ift,
        note: String::new(),
    };
    let mut a = Connection::connect(&server.url).await.unwrap();
    let first = a.join(&game, &tokens.side_a, None).await.unwrap();
    let mut b = Connection::connect(&server.url).await.unwrap();
    b.join(&game, &tokens.side_b, None).await.unwrap();
    let accepted = |reply: Reply| match reply {
        Reply::Accepted { events, .. } => events,
        Reply::Refused { violation, .. } => panic!("{violation}"),
    };
    accepted(a.command(1, roll(), None).await.unwrap());
    accepted(
        a.command(2, protocol::Command::AgreeToRevealSeed, None)
            .await
            .unwrap(),
    );
    let events = accepted(
        b.command(3, protocol::Command::AgreeToRevealSeed, None)
            .await
            .unwrap(),
    );
    let next = events
        .iter()
        .find_map(|s| match &s.viewed.event {
            protocol::Event::DiceCommitted(DiceCommitted { commitment }) => Some(*commitment),
            _ => None,
        })
        .expect("a new seed is committed to once both agree to reveal the first");
    assert_ne!(next, first.dice_commitment);
    a.close().await;
    b.close().await;
    until_loaded(&server, 0.0).await;

    let mut a = Connection::connect(&server.url).await.unwrap();
    let joined = a.join(&game, &tokens.side_a, None).await.unwrap();
    assert_eq!(joined.dice_commitment, next);
    accepted(a.command(4, roll(), None).await.unwrap());
    a.close().await;
    server.stop().await;
}
