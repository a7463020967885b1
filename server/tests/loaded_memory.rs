//! What a game under a running clock holds in memory when a start loads it for its clock alone
//! (issue 55: a server keeps every timed game loaded, so 50,000 of them must fit in 2 GiB),
//! against the same game created and idle, measured by the allocator itself.
//!
//! A game task holds, between requests, its state, its two inboxes and its own future. Each
//! inbox holds its first block of slots from the start, and a slot is as large as the largest
//! request; the future is as large as the largest one it awaits inline. Before the requests'
//! large parts were boxed and the commit's future taken out of the task's, those were two
//! thirds of a game's 34 KB; and a game loaded at a start gets them from memory its replay
//! had already touched, where a created one gets fresh pages it never writes to the end of,
//! so a loaded game's resident memory was 2.5x a created one's (BENCHMARKS.md).
//!
//! One test in this binary: the allocator counts every thread's allocations.

// The counting allocator the core's memory test uses, one copy for both.
#[path = "../../protocol/tests/support/counting.rs"]
mod counting;

use counting::{Counting, HELD};
use protocol::ReadScenario;
use server::games::registry::Registry;
use server::operations::config::Config;
use server::store::{EventStore, MemoryStore};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Games measured at once: enough that a few shared allocations do not count.
const GAMES: usize = 400;

/// The most a game loaded for its clock may hold (the walkthrough, 4 units): 24 KiB.
const LOADED_GAME_BYTES_MAX: usize = 24 << 10;

fn held() -> usize {
    HELD.load(Ordering::Relaxed)
}

/// Bytes held now, once the game tasks have settled (each started, and waiting on its inbox
/// and its clock).
async fn settled() -> usize {
    tokio::time::sleep(Duration::from_millis(300)).await;
    held()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_loaded_for_its_clock_holds_no_more_than_one_created() {
    let scenario =
        protocol::Scenario::from_toml(include_str!("../../scenarios/b9-41-wall-advantage.toml"))
            .unwrap();
    let control =
        protocol::board::time_control::TimeControl::parse("correspondence:12h/5d").unwrap();
    let config = Config {
        loaded_games_max: 10 * GAMES,
        ..Config::default()
    };
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new());

    let before = settled().await;
    let registry = Registry::open(store.clone(), config.clone()).unwrap();
    for _ in 0..GAMES {
        registry
            .create_timed(scenario.clone(), Some(control))
            .await
            .unwrap();
    }
    let with_created = settled().await;
    registry.shutdown().await;
    drop(registry);
    // What stays is the store's copy of the logs and metadata.
    let stored = settled().await - before;
    let created = (with_created - before - stored) / GAMES;

    let before = settled().await;
    let registry = Registry::open(store.clone(), config).unwrap();
    registry.wake_clocks().await;
    let loaded = (settled().await - before) / GAMES;
    println!(
        "per game: created {created} B, loaded for its clock {loaded} B (the store's copy {} B apart)",
        stored / GAMES
    );
    assert!(
        loaded <= created + created / 20,
        "a loaded game holds {loaded} B, a created one {created} B"
    );
    assert!(
        loaded <= LOADED_GAME_BYTES_MAX,
        "a loaded game holds {loaded} B; the budget is {LOADED_GAME_BYTES_MAX} B"
    );
    registry.shutdown().await;
}
