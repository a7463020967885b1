//! A damaged log is refused, named and left alone: the server reports the game unavailable
//! with the first bad event, serves the other games, and never rewrites the damaged records.

mod common;

use common::{ask, copy_dir, join, open, Running};
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage};
use protocol::Command;
use server::operations::config::Config;
use server::store::{EventStore, SledStore};
use std::path::Path;
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

async fn start(dir: &Path) -> Running {
    let store = SledStore::open(dir).unwrap();
    Running::start(Arc::new(store), Config::default()).await
}

fn event_key(game: &str, seq: u64) -> Vec<u8> {
    let mut key = server::store::envelope::game_key(game).unwrap().to_vec();
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// The data directory opened with sled itself (not through the server's store). sled lets go
/// of its lock on the directory from its own threads after the last handle of a database is
/// dropped, so an open right after another handle here was dropped can find it still taken:
/// the open is tried again while it is, for as long as the server's own store waits for the
/// same (`LOCK_RELEASE_WAIT`, 5 s).
fn open_db(dir: &Path) -> sled::Db {
    let started = std::time::Instant::now();
    loop {
        match sled::open(dir) {
            Ok(db) => return db,
            Err(sled::Error::Io(e))
                if e.to_string().contains("could not acquire lock")
                    && started.elapsed() < std::time::Duration::from_secs(5) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(e) => panic!("the data directory opens: {e}"),
        }
    }
}

/// The game's stored records, read with sled itself (not through the server's store).
fn records(dir: &Path, game: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let db = open_db(dir);
    let events = db.open_tree("events").unwrap();
    events
        .scan_prefix(server::store::envelope::game_key(game).unwrap())
        .map(|e| {
            let (k, v) = e.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_log_is_named_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let (damaged, damaged_tokens) = common::create(&server.url, SCENARIO).await;
    let (healthy, healthy_tokens) = common::create(&server.url, SCENARIO).await;
    for (game, tokens) in [(&damaged, &damaged_tokens), (&healthy, &healthy_tokens)] {
        let (mut ws, _) = join(&server.url, game, &tokens.side_a).await;
        // The German ends the RPh (whose end steps pass by themselves here, B9.322), the PFPh
        // and the MPh; the Russian acts next.
        for id in 1..=3 {
            let answer = ask(
                &mut ws,
                ClientMessage::Command {
                    id,
                    command: Command::Done,
                    key: None,
                },
            )
            .await;
            assert!(
                matches!(answer, ServerMessage::Accepted { .. }),
                "{answer:?}"
            );
        }
    }
    server.stop().await;

    // Damage event 2 of one game the way a bad disk would: one flipped bit, the record kept.
    {
        let db = open_db(dir.path());
        let events = db.open_tree("events").unwrap();
        let key = event_key(&damaged, 2);
        let mut record = events.get(&key).unwrap().unwrap().to_vec();
        let middle = record.len() / 2;
        record[middle] ^= 0x10;
        events.insert(key, record).unwrap();
        db.flush().unwrap();
    }
    let before = records(dir.path(), &damaged);

    let server = start(dir.path()).await;
    let (_ws, answer) = join(&server.url, &damaged, &damaged_tokens.side_a).await;
    match answer {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::GameUnavailable);
            assert!(message.contains(&damaged), "{message}");
            assert!(
                message.contains("event 2"),
                "names the first bad event: {message}"
            );
            assert!(
                message.contains("damaged") && message.contains("backup"),
                "{message}"
            );
        }
        other => panic!("expected rolled_back, got {other:?}"),
    }
    // Asking again gives the same answer; the other game is served and still takes commands.
    let (_ws, again) = join(&server.url, &damaged, &damaged_tokens.side_a).await;
    assert!(matches!(
        again,
        ServerMessage::Error {
            code: ErrorCode::GameUnavailable,
            ..
        }
    ));
    let (mut ws, answer) = join(&server.url, &healthy, &healthy_tokens.side_b).await;
    assert!(
        matches!(answer, ServerMessage::Joined { version: 6, .. }),
        "{answer:?}"
    );
    let answer = ask(
        &mut ws,
        ClientMessage::Command {
            id: 9,
            command: Command::Done,
            key: None,
        },
    )
    .await;
    assert!(
        matches!(answer, ServerMessage::Accepted { version: 7, .. }),
        "{answer:?}"
    );
    drop(ws);
    server.stop().await;

    assert_eq!(
        records(dir.path(), &damaged),
        before,
        "the damaged log was rewritten"
    );
}

/// A log whose bytes the hash chain vouches for, that this version cannot decode (here: its
/// last event in a format from a newer version), is not damage: the game is refused as one
/// this version cannot read, nothing on disk is called damaged or rewritten, and the other
/// games are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_this_version_cannot_read_is_not_called_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let (game, tokens) = common::create(&server.url, SCENARIO).await;
    let (healthy, healthy_tokens) = common::create(&server.url, SCENARIO).await;
    let (mut ws, _) = join(&server.url, &game, &tokens.side_a).await;
    let answer = ask(
        &mut ws,
        ClientMessage::Command {
            id: 1,
            command: Command::Done,
            key: None,
        },
    )
    .await;
    // The RPh's end and its two end steps, which pass by themselves here (B9.322).
    assert!(
        matches!(answer, ServerMessage::Accepted { version: 4, .. }),
        "{answer:?}"
    );
    drop(ws);
    server.stop().await;

    // Event 5, in its place after event 4, written in a format this version does not know.
    {
        let db = open_db(dir.path());
        let events = db.open_tree("events").unwrap();
        let four = events.get(event_key(&game, 4)).unwrap().unwrap();
        let newer = bincode::serde::encode_to_vec(
            (
                u16::MAX,
                5u64,
                protocol::chain::LogHash::of(&four).0,
                vec![7u8; 40],
            ),
            bincode::config::standard(),
        )
        .unwrap();
        events.insert(event_key(&game, 5), newer).unwrap();
        db.flush().unwrap();
    }
    let before = records(dir.path(), &game);

    let server = start(dir.path()).await;
    for _ in 0..2 {
        let (_ws, answer) = join(&server.url, &game, &tokens.side_b).await;
        match answer {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::GameUnavailable);
                assert!(message.contains("event 5"), "{message}");
                assert!(message.contains("this version"), "{message}");
                assert!(message.contains("nothing is lost"), "{message}");
                assert!(!message.contains("backup"), "{message}");
            }
            other => panic!("expected game_unavailable, got {other:?}"),
        }
    }
    let (_ws, answer) = join(&server.url, &healthy, &healthy_tokens.side_a).await;
    assert!(matches!(answer, ServerMessage::Joined { .. }), "{answer:?}");
    server.stop().await;
    assert_eq!(records(dir.path(), &game), before, "the log was rewritten");
}

async fn join_since(url: &str, game: &str, token: &str, since: Option<u64>) -> ServerMessage {
    let mut ws = open(url).await;
    ask(
        &mut ws,
        ClientMessage::Join {
            game: game.into(),
            token: token.into(),
            since,
        },
    )
    .await
}

/// A data directory put back to an older copy, and players who come back with a bare `since`
/// past its end. A bare number is a claim, not evidence (issue 36: anyone with a token could
/// make one up to freeze a game), so each such join is refused on its own connection, naming
/// the missing versions, and nothing is marked: the other side plays on. Receipts, which the
/// server signed, are what mark a rollback (`server/tests/receipts.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_since_past_the_end_is_refused_alone_and_marks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let server = start(dir.path()).await;
    let (game, tokens) = common::create(&server.url, SCENARIO).await;
    let (mut ws, _) = join(&server.url, &game, &tokens.side_a).await;
    let done = |id| ClientMessage::Command {
        id,
        command: Command::Done,
        key: None,
    };
    assert!(matches!(
        ask(&mut ws, done(1)).await,
        // The RPh's end and its two end steps passing by themselves (B9.322).
        ServerMessage::Accepted { version: 4, .. }
    ));
    drop(ws);
    server.stop().await;
    copy_dir(dir.path(), old.path());

    let server = start(dir.path()).await;
    let (mut ws, _) = join(&server.url, &game, &tokens.side_a).await;
    let acked = match ask(&mut ws, done(2)).await {
        ServerMessage::Accepted { version, .. } => version,
        other => panic!("expected accepted, got {other:?}"),
    };
    drop(ws);
    server.stop().await;

    // The operator puts back the older copy.
    let server = start(old.path()).await;
    // Neither a spectator's claim nor a player's stops the game, or is served as a fresh start.
    for token in [&tokens.spectator, &tokens.side_a] {
        match join_since(&server.url, &game, token, Some(acked)).await {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::BeyondEnd, "{message}");
                assert!(message.contains(&format!("version {acked}")), "{message}");
                assert!(message.contains("nothing is marked"), "{message}");
            }
            other => panic!("expected beyond_end, got {other:?}"),
        }
    }
    // Both sides join from the position the log holds, after a restart too: nothing marked.
    let mut server = server;
    for restarted in [false, true] {
        if restarted {
            server.stop().await;
            server = start(old.path()).await;
        }
        for token in [&tokens.side_b, &tokens.side_a] {
            match join_since(&server.url, &game, token, None).await {
                ServerMessage::Joined { .. } => {}
                other => panic!("expected joined, got {other:?}"),
            }
        }
    }
    // A game the store lost whole, joined by a player holding a version of it: told so.
    match join_since(&server.url, &"ab".repeat(16), &tokens.side_a, Some(acked)).await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::UnknownGame);
            assert!(message.contains("lost the game"), "{message}");
        }
        other => panic!("expected unknown_game, got {other:?}"),
    }
    server.stop().await;

    // What remains is whole: its export verifies.
    let store = SledStore::open(old.path()).unwrap();
    let key = server::store::envelope::game_key(&game).unwrap();
    let records = store.load(&key).unwrap();
    assert_eq!(records.len(), 4);
    let text =
        server::store::backup::export_text(&key, &records, &server::signing::key::fresh()).unwrap();
    let verified = protocol::export::verify_backup(text.as_bytes(), &mut |_, _| {}).unwrap();
    assert_eq!(verified.header.events, 4);
}

/// A small deterministic generator (xorshift64*), so a trial's damage is the same on every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

/// Moves `game` on by `steps` commands, each `done` (or declining Wall Advantage when that is
/// what is asked) from whichever side the rules let act; returns the version last accepted.
async fn play_on(url: &str, game: &str, tokens: &protocol::wire::Tokens, steps: u64) -> u64 {
    let (mut a, _) = join(url, game, &tokens.side_a).await;
    let (mut b, _) = join(url, game, &tokens.side_b).await;
    let mut acked = 0;
    let mut id = 0;
    'steps: for _ in 0..steps {
        for command in [Command::Done, Command::DeclineWallAdvantage] {
            for ws in [&mut a, &mut b] {
                id += 1;
                let answer = ask(
                    ws,
                    ClientMessage::Command {
                        id,
                        command: command.clone(),
                        key: None,
                    },
                )
                .await;
                if let ServerMessage::Accepted { version, .. } = answer {
                    acked = version;
                    continue 'steps;
                }
            }
        }
        break;
    }
    acked
}

/// Plays a round: `steps` commands on each of `games` (those `playing` picks), then side A
/// of each joins: every event of its stream was acknowledged, so that is the version to hold
/// the server to.
async fn round(
    url: &str,
    games: &[(String, protocol::wire::Tokens)],
    acked: &mut [u64],
    playing: impl Fn(usize) -> bool,
) {
    const STEPS: u64 = 8;
    let played = futures_util::future::join_all(
        games
            .iter()
            .enumerate()
            .filter(|(g, _)| playing(*g))
            .map(|(_, (game, tokens))| play_on(url, game, tokens, STEPS)),
    )
    .await;
    assert!(played.iter().all(|v| *v > 0), "every game moves on");
    for (g, (game, tokens)) in games.iter().enumerate() {
        let (_ws, answer) = join(url, game, &tokens.side_a).await;
        match answer {
            ServerMessage::Joined { version, .. } => acked[g] = version,
            other => panic!("expected joined, got {other:?}"),
        }
    }
}

/// Issue 50: a flipped byte in sled's `db`. sled's recovery reads its log from its last
/// snapshot up to the first message that fails its checksum, and drops (zeroes) everything
/// after it with no error; the journal, which held those writes until the checkpoint that
/// flushed them, no longer does. Several games are played over several checkpoints, and two
/// images of the directory taken: one stopped (every write in sled's log, the journal empty),
/// one killed (sled's log after two checkpoints, the last writes of half the games in the
/// journal only). Copies of them get bytes flipped at seeded random offsets of `db`, and
/// every game is joined. Each must be served at no less than the version its players were
/// acknowledged, or refused by name — never served short as if whole. `ASL_CORRUPT_TRIALS`
/// runs more trials (and `ASL_CORRUPT_SEED` other offsets) than the suite's few.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flipped_bytes_in_sleds_log_never_serve_a_game_short_silently() {
    const GAMES: usize = 6;
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let trials = number("ASL_CORRUPT_TRIALS", 8);
    let seed = number("ASL_CORRUPT_SEED", 50);

    let dir = tempfile::tempdir().unwrap();
    let stopped = tempfile::tempdir().unwrap();
    let killed = tempfile::tempdir().unwrap();
    let mut games = vec![];
    let mut acked = vec![0u64; GAMES];
    // Stopped: two rounds with a checkpoint between them, then a clean stop.
    let store = Arc::new(SledStore::open(dir.path()).unwrap());
    let server = Running::start(store.clone(), Config::default()).await;
    for _ in 0..GAMES {
        games.push(common::create(&server.url, SCENARIO).await);
    }
    round(&server.url, &games, &mut acked, |_| true).await;
    store.checkpoint_now().await.unwrap();
    round(&server.url, &games, &mut acked, |_| true).await;
    server.stop().await;
    drop(store);
    copy_dir(dir.path(), stopped.path());
    let acked_stopped = acked.clone();
    // Killed: two rounds each ending in a checkpoint, then one of half the games, and the
    // directory copied as it is while the server runs.
    let store = Arc::new(SledStore::open(dir.path()).unwrap());
    let server = Running::start(store.clone(), Config::default()).await;
    for _ in 0..2 {
        round(&server.url, &games, &mut acked, |_| true).await;
        store.checkpoint_now().await.unwrap();
    }
    round(&server.url, &games, &mut acked, |g| g % 2 == 0).await;
    copy_dir(dir.path(), killed.path());
    let acked_killed = acked.clone();
    server.stop().await;
    drop(store);

    let mut rng = Rng::new(seed);
    let (mut refused_to_open, mut served, mut named, mut lost) = (0, 0, 0, 0);
    let mut silent = vec![];
    for trial in 0..trials {
        let (image, acked, what) = if trial % 2 == 0 {
            (stopped.path(), &acked_stopped, "stopped")
        } else {
            (killed.path(), &acked_killed, "killed")
        };
        let copy = tempfile::tempdir().unwrap();
        copy_dir(image, copy.path());
        let db = copy.path().join("db");
        let mut bytes = std::fs::read(&db).unwrap();
        // sled's log fills the file from its start; most flips land in what it wrote.
        let written = bytes.iter().rposition(|b| *b != 0).map_or(1, |at| at + 1);
        let mut flipped = vec![];
        for _ in 0..=rng.below(2) {
            let span = if rng.below(4) == 0 {
                bytes.len()
            } else {
                written
            };
            let at = rng.below(span as u64) as usize;
            bytes[at] ^= 1 << rng.below(8);
            flipped.push(at);
        }
        std::fs::write(&db, &bytes).unwrap();
        let store = match SledStore::open(copy.path()) {
            Ok(store) => store,
            Err(e) => {
                let said = e.to_string();
                assert!(!said.contains("panicked at"), "{said}");
                refused_to_open += 1;
                continue;
            }
        };
        let server = Running::start(Arc::new(store), Config::default()).await;
        for (g, (game, tokens)) in games.iter().enumerate() {
            let (_ws, answer) = join(&server.url, game, &tokens.side_a).await;
            match answer {
                ServerMessage::Joined { version, .. } if version >= acked[g] => served += 1,
                ServerMessage::Joined { version, .. } => silent.push(format!(
                    "trial {trial} ({what}, bytes {flipped:?} of {} flipped): game {game} served at version {version}, {} acknowledged",
                    bytes.len(),
                    acked[g]
                )),
                ServerMessage::Error {
                    code: ErrorCode::GameUnavailable | ErrorCode::RolledBack,
                    message,
                } if message.contains(game.as_str()) => named += 1,
                // sled lost the game's metadata too (its tokens' digests): nothing can check
                // a token, so it is not listed; the store names it DAMAGED in its log at start.
                ServerMessage::Error {
                    code: ErrorCode::UnknownGame,
                    ..
                } => lost += 1,
                other => silent.push(format!(
                    "trial {trial} ({what}): game {game} answered {other:?}"
                )),
            }
        }
        server.stop().await;
    }
    eprintln!(
        "{trials} trials: refused to open {refused_to_open}; games served whole {served}, named {named}, lost with their metadata {lost}, served short {}",
        silent.len()
    );
    assert!(silent.is_empty(), "{}", silent.join("\n"));
}
