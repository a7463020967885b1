//! What the rules cost per command: a whole game of the load generator's scenario
//! (`scenarios/b9-41-wall-advantage.toml`, at the longest turn count) played by `done`, each
//! step decided and applied, as the game task does. Wall Advantage is settled after every
//! command (B9.32–B9.41), so this is where its share shows. A third game has the size of a
//! real scenario's: sixty squads, half of them holding Wall Advantage over a wall that the
//! other half stands behind, so settling each command asks who denies whom (B9.321, B9.322).
//!
//! The `per_command` group plays the same game of `done` with 4, 10 and 150 units (issue 55:
//! a command should cost the same order at a real scenario's size as in a small game).
//!
//! `cargo bench -p asl-protocol --bench decide`; figures go in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use protocol::event::GameCreated;
use protocol::ReadScenario;
use protocol::{apply, decide, Command, Event, Game, Scenario, ScriptedDice};
use std::hint::black_box;

mod shapes;

use shapes::{walled_line, walled_lines};

fn start(scenario: &str) -> Game {
    let text = protocol::scenario::longest(scenario).expect("the scenario has a turn count");
    let scenario = Scenario::from_toml(&text).expect("the scenario reads");
    Game::replay(&[Event::GameCreated(GameCreated { scenario })]).expect("a game")
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

/// What one command costs as a position grows (issue 55): the same game of `done` decided
/// and applied with 10 and with 150 units (five and seventy-five walled pairs), and the
/// 4-unit load-generator scenario as the baseline of the same run. Criterion reports each
/// game's time; divided by its steps (the throughput) it is the cost of one command.
fn per_command(c: &mut Criterion) {
    let ten = walled_lines(5);
    let hundred_fifty = walled_lines(75);
    let scenarios = [
        (
            "four_units_b9_41",
            include_str!("../../scenarios/b9-41-wall-advantage.toml"),
        ),
        ("ten_units_walled_lines", ten.as_str()),
        (
            "one_hundred_fifty_units_walled_lines",
            hundred_fifty.as_str(),
        ),
    ];
    let mut group = c.benchmark_group("per_command");
    for (name, scenario) in scenarios {
        let game = start(scenario);
        let steps = play_out(game.clone());
        group.throughput(Throughput::Elements(steps));
        group.bench_function(name, |b| b.iter(|| play_out(game.clone())));
    }
    group.finish();
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
    let line = walled_line(30);
    let scenarios = scenarios.into_iter().chain([(
        "sixty_squads_on_a_walled_line_done_to_the_end",
        line.as_str(),
    )]);
    let mut group = c.benchmark_group("decide");
    for (name, scenario) in scenarios {
        let game = start(scenario);
        let steps = play_out(game.clone());
        group.throughput(Throughput::Elements(steps));
        group.bench_function(name, |b| b.iter(|| play_out(game.clone())));
    }
    group.finish();
}

criterion_group!(benches, whole_game, per_command);
criterion_main!(benches);
