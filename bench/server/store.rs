//! In-process benchmarks of the store, each against its raw sled baseline in the same run:
//! - durable append of one game (server store vs a raw sled insert+flush loop, same records);
//! - group commit: 200 games with one append each in flight, vs the same raw loop;
//! - replay: load + verify (decode, hash chain) + `apply` vs a raw scan + decode; and what a
//!   loaded game's first join adds, every viewer's stream built from the log.
//!
//! `cargo bench -p asl-server --bench store`; figures and ratios go in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use protocol::event::{GameCreated, StepEnded};
use protocol::phase::Clock;
use protocol::record::stream::Streams;
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Game, Scenario, ScriptedDice, Side};
use serde::Deserialize;
use server::games::task::{GameLimits, GameTask};
use server::operations::config::Config;
use server::store::envelope::{self, GameMeta, META_FORMAT};
use server::store::{EventStore, GameKey, SledStore};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

/// Games with one append in flight each, as in the group-commit goal.
const CONCURRENT_GAMES: usize = 200;
/// Games in the replay store; each is a full 30-turn game.
const REPLAY_GAMES: usize = 50;

fn step_record(seq: u64) -> Vec<u8> {
    let event = Event::StepEnded(StepEnded {
        by: Side::A,
        ended: Clock::START,
        next: Clock::START,
    });
    envelope::encode(seq, envelope::GENESIS, &event).0
}

fn key(n: usize) -> GameKey {
    let mut key = [0x42; 16];
    key[8..].copy_from_slice(&(n as u64).to_be_bytes());
    key
}

fn append(c: &mut Criterion) {
    let mut group = c.benchmark_group("append");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    let record = step_record(2);

    let dir = tempfile::tempdir().unwrap();
    let db = sled::open(dir.path()).unwrap();
    let tree = db.open_tree("events").unwrap();
    let mut seq = 0u64;
    group.throughput(Throughput::Elements(1));
    group.bench_function("raw_sled_insert_flush", |b| {
        b.iter(|| {
            seq += 1;
            let mut k = [7u8; 24];
            k[16..].copy_from_slice(&seq.to_be_bytes());
            tree.insert(&k[..], record.as_slice()).unwrap();
            db.flush().unwrap();
        })
    });

    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let mut seq = 0u64;
    group.bench_function("store_one_game", |b| {
        b.iter(|| {
            seq += 1;
            store
                .append(&key(0), seq, vec![record.clone()])
                .wait()
                .unwrap();
        })
    });

    let mut seqs = vec![0u64; CONCURRENT_GAMES];
    group.throughput(Throughput::Elements(CONCURRENT_GAMES as u64));
    group.bench_function("store_200_games_group_commit", |b| {
        b.iter(|| {
            let pending: Vec<_> = seqs
                .iter_mut()
                .enumerate()
                .map(|(n, seq)| {
                    *seq += 1;
                    store.append(&key(1 + n), *seq, vec![record.clone()])
                })
                .collect();
            for write in pending {
                write.wait().unwrap();
            }
        })
    });
    group.finish();
}

/// A full game of the longest scenario (`done` to the end), encoded and chained.
fn long_game() -> Vec<Vec<u8>> {
    let text =
        protocol::scenario::longest(include_str!("../../scenarios/b9-41-wall-advantage.toml"))
            .expect("the scenario has a turn count");
    let scenario = Scenario::from_toml(&text).unwrap();
    let mut events = vec![Event::GameCreated(GameCreated { scenario })];
    let mut game = Game::replay(&events).unwrap();
    while !game.over {
        let step = decide(
            &game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        );
        for e in step.unwrap() {
            protocol::apply(&mut game, &e);
            events.push(e);
        }
    }
    let mut prev = envelope::GENESIS;
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (bytes, hash) = envelope::encode(i as u64 + 1, prev, e);
            prev = hash;
            bytes
        })
        .collect()
}

/// The envelope's layout, read without the server's checks: what a raw decode costs.
#[derive(Deserialize)]
struct RawEnvelope {
    _format: u16,
    _seq: u64,
    _prev: [u8; 32],
    _salt: [u8; 16],
    _by: Option<Side>,
    _first: u64,
    _key: Option<u64>,
    _command: Option<protocol::record::chain::Issued>,
    event: Event,
}

fn replay(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let records = long_game();
    let store: Arc<dyn EventStore> = Arc::new(SledStore::open(dir.path()).unwrap());
    let meta = GameMeta {
        format: META_FORMAT,
        token_digests: [[0; 32]; 3],
        seeds: vec![[0; 32]],
    };
    let pending: Vec<_> = (0..REPLAY_GAMES)
        .flat_map(|n| {
            [
                store.put_meta(&key(n), meta.encode()),
                store.append(&key(n), 1, records.clone()),
            ]
        })
        .collect();
    for write in pending {
        write.wait().unwrap();
    }
    let events = (REPLAY_GAMES * records.len()) as u64;

    let mut group = c.benchmark_group("replay");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(events));
    group.bench_function("raw_scan_decode", |b| {
        let db = sled::open(dir.path().join("raw")).unwrap();
        let tree = db.open_tree("events").unwrap();
        for n in 0..REPLAY_GAMES {
            for (i, r) in records.iter().enumerate() {
                let mut k = key(n).to_vec();
                k.extend_from_slice(&(i as u64 + 1).to_be_bytes());
                tree.insert(k, r.as_slice()).unwrap();
            }
        }
        db.flush().unwrap();
        b.iter(|| {
            for entry in tree.iter() {
                let (_, v) = entry.unwrap();
                let (envelope, _): (RawEnvelope, usize) =
                    bincode::serde::decode_from_slice(&v, bincode::config::standard()).unwrap();
                black_box(envelope.event);
            }
        })
    });
    // The server's limits, as a server holds them: made once, not per game.
    let limits = GameLimits::of(&Config::default());
    group.bench_function("store_load_verify_apply", |b| {
        b.iter(|| {
            for n in 0..REPLAY_GAMES {
                let loaded = store.load(&key(n)).unwrap();
                let verified = envelope::verify(&loaded).unwrap();
                let task = GameTask::from_log(
                    key(n),
                    verified,
                    meta.clone(),
                    store.clone(),
                    limits.clone(),
                )
                .unwrap();
                black_box(task);
            }
        })
    });
    // What a loaded game's first join adds: every viewer's stream, built from the log when
    // first read (`GameTask::streams`), for the same games.
    let entries: Vec<_> = (0..REPLAY_GAMES)
        .map(|n| {
            envelope::verify(&store.load(&key(n)).unwrap())
                .unwrap()
                .entries
        })
        .collect();
    group.bench_function("streams_at_first_join", |b| {
        b.iter(|| {
            for game in &entries {
                black_box(Streams::of_log(game.iter().map(|e| &e.event)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, append, replay);
criterion_main!(benches);
