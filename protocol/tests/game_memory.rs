//! What a loaded game holds in memory at a real scenario's size (issue 55: ≤ 256 KiB per
//! game beyond the shared boards), measured by the allocator itself. Published scenarios
//! carry 60–140 counters; the position here has 150 units. As the server holds games, each
//! scenario goes through one `Interner`, which shares the map (hexes, hexsides, the LOS map
//! built on the first LOS question) between games on the same boards: the first game pays
//! for the map, and each further one holds its units, its own state and its undo trail.
//!
//! One test in this binary: the allocator counts every thread's allocations.

#[path = "support/counting.rs"]
mod counting;
#[path = "../../bench/protocol/shapes.rs"]
mod shapes;

use counting::{Counting, HELD};
use protocol::board::scenario::Interner;
use protocol::event::GameCreated;
use protocol::ReadScenario;
use protocol::{apply, decide, Command, Event, Game, Scenario, ScriptedDice};
use std::sync::atomic::Ordering;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most one loaded game may hold beyond the shared boards (issue 55).
const GAME_BYTES_MAX: usize = 256 << 10;

/// The most a game's units may hold beyond the same units in a plain map from id to unit:
/// sharing them unit by unit (`game::Units`, so a changed copy copies one unit, not all)
/// costs each unit a count and a pointer, which the map's denser nodes mostly pay back.
const UNITS_SHARING_BYTES_MAX: usize = 2 << 10;

/// The bytes `value` held, freed by dropping it.
fn freed_by<T>(value: T) -> usize {
    let before = HELD.load(Ordering::Relaxed);
    drop(value);
    before.saturating_sub(HELD.load(Ordering::Relaxed))
}

/// The bytes `make` leaves held, with what it made.
fn held_by<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.load(Ordering::Relaxed);
    let made = make();
    (made, HELD.load(Ordering::Relaxed).saturating_sub(before))
}

/// A game of `text` as the server loads it: its scenario shared through `interner`, then
/// replayed from its creation.
fn loaded(text: &str, interner: &Interner) -> Game {
    let mut scenario = Scenario::from_toml(text).expect("the scenario reads");
    interner.share(&mut scenario);
    Game::replay(&[Event::GameCreated(GameCreated { scenario })]).expect("a game")
}

/// Every step to the end by `done`, the events dropped as the game task drops them once
/// written: what stays is the game's state.
fn play_out(game: &mut Game) {
    while !game.over {
        let events = decide(
            game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .expect("`done` is always legal here");
        for event in &events {
            apply(game, event);
        }
    }
}

#[test]
fn a_loaded_game_of_a_real_scenarios_size_holds_at_most_its_budget() {
    for (units, text) in [
        (60, shapes::walled_line(30)),
        (150, shapes::walled_lines(75)),
    ] {
        let interner = Interner::default();
        // The first game on the map builds what every game on it shares.
        let (mut first, map) = held_by(|| loaded(&text, &interner));
        let ((), first_played) = held_by(|| play_out(&mut first));
        let (mut game, at_start) = held_by(|| loaded(&text, &interner));
        // The units as a loaded game holds them, against a plain map of the same units.
        let units_held = freed_by(std::mem::take(&mut loaded(&text, &interner).units));
        let plain: std::collections::BTreeMap<String, protocol::game::Unit> = game
            .units
            .iter()
            .map(|(id, unit)| (id.clone(), unit.clone()))
            .collect();
        let units_plain = freed_by(plain);
        let ((), played) = held_by(|| play_out(&mut game));
        let at_end = at_start.saturating_add(played);
        println!(
            "{units} units: the first game {map} B loaded and {} B played out; each further game {at_start} B loaded, {at_end} B played out",
            map.saturating_add(first_played)
        );
        println!(
            "{units} units: the units as held {units_held} B, as a plain map of id to unit {units_plain} B"
        );
        assert!(
            units_held <= units_plain + UNITS_SHARING_BYTES_MAX,
            "{units} units: the units hold {units_held} B, a plain map of them {units_plain} B"
        );
        assert!(
            at_start <= GAME_BYTES_MAX && at_end <= GAME_BYTES_MAX,
            "{units} units: {at_start} B loaded, {at_end} B played out; the budget is {GAME_BYTES_MAX} B"
        );
        // A copy (a preview's, a replay's) shares the state until it writes.
        let (copy, copied) = held_by(|| game.clone());
        assert!(
            copied <= 8 << 10,
            "{units} units: a copy of the game holds {copied} B of its own"
        );
        drop((copy, game, first));
    }
}
