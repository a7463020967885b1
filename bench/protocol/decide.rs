//! What the rules cost per command: a whole game of the load generator's scenario
//! (`scenarios/b9-41-wall-advantage.toml`, at the longest turn count) played by `done`, each
//! step decided and applied, as the game task does. Wall Advantage is settled after every
//! command (B9.32–B9.41), so this is where its share shows.
//!
//! `cargo bench -p asl-protocol --bench decide`; figures go in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use protocol::{apply, decide, Command, Event, Game, Scenario, ScriptedDice};
use std::hint::black_box;

fn start(scenario: &str) -> Game {
    let text = protocol::scenario::longest(scenario).expect("the scenario has a turn count");
    let scenario = Scenario::from_toml(&text).expect("the scenario reads");
    Game::replay(&[Event::GameCreated { scenario }]).expect("a game")
}

/// Plays `game` to its end by `done`; returns the steps taken.
fn play_out(mut game: Game) -> u64 {
    let mut steps = 0;
    while !game.over {
        let events = decide(
            &game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .expect("`done` is always legal here");
        for event in &events {
            apply(&mut game, event);
        }
        black_box(&events);
        steps += 1;
    }
    steps
}

fn whole_game(c: &mut Criterion) {
    // The load generator's scenario, then one with more units, most of them by no wall, which
    // is what a settled position costs in a larger game.
    let scenarios = [
        (
            "done_to_the_end_decide_and_apply",
            include_str!("../../scenarios/b9-41-wall-advantage.toml"),
        ),
        (
            "village_outskirts_done_to_the_end",
            include_str!("../../scenarios/village-outskirts.toml"),
        ),
    ];
    let mut group = c.benchmark_group("decide");
    for (name, scenario) in scenarios {
        let game = start(scenario);
        let steps = play_out(game.clone());
        group.throughput(Throughput::Elements(steps));
        group.bench_function(name, |b| b.iter(|| play_out(game.clone())));
    }
    group.finish();
}

criterion_group!(benches, whole_game);
criterion_main!(benches);
