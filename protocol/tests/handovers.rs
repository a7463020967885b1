//! Hand-overs per Game Turn (issue 55): in a correspondence game each time the side to act
//! changes, the game waits for the other player, which can cost a day. An end-of-RPh step
//! (1.32B) in which the side to act could claim no Wall Advantage passes by itself (B9.322,
//! `rules::end_of_rally`), so a Game Turn played by `done` hands over fewer times than one
//! that asks every step.
//!
//! `cargo test -p asl-protocol --test handovers -- --nocapture` prints the counts.

use protocol::event::{StepEnded, StepPassed};
use protocol::phase::Clock;
use protocol::ReadScenario;
use protocol::{apply, decide, Command, Event, Game, Scenario, ScriptedDice, Side};

/// How one Game Turn went when played by `done` only.
struct Turn {
    /// Commands sent (each a `done`).
    dones: usize,
    /// Times the side to act changed between the commands actually asked for.
    handovers: usize,
    /// Times it would have changed had every step been asked for (each step ending by a
    /// `done`, as before steps could pass by themselves).
    handovers_every_step_asked: usize,
    /// The steps that passed by themselves.
    passed: Vec<Clock>,
}

/// Plays Game Turn 1 of `toml` by `done` alone, from its first step to the first step of
/// Game Turn 2.
fn first_game_turn(toml: &str) -> Turn {
    let mut game = Game::new(Scenario::from_toml(toml).expect("the scenario loads"));
    let first = game.scenario.first;
    // The side to act at each step begun, asked or passed, and at each step asked.
    let mut every_step: Vec<Side> = vec![game.acting()];
    let mut asked: Vec<Side> = vec![game.acting()];
    let mut turn = Turn {
        dones: 0,
        handovers: 0,
        handovers_every_step_asked: 0,
        passed: vec![],
    };
    while game.clock.turn == 1 {
        let events = decide(
            &game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .expect("done is legal at every step of a quiet game");
        turn.dones += 1;
        for e in &events {
            match e {
                Event::StepEnded(StepEnded { next, .. }) => every_step.push(next.acting(first)),
                Event::StepPassed(StepPassed { ended, next }) => {
                    turn.passed.push(*ended);
                    every_step.push(next.acting(first));
                }
                _ => {}
            }
            apply(&mut game, e);
        }
        asked.push(game.acting());
    }
    let changes = |sides: &[Side]| sides.windows(2).filter(|w| w[0] != w[1]).count();
    turn.handovers = changes(&asked);
    turn.handovers_every_step_asked = changes(&every_step);
    turn
}

/// The walkthrough scenario: a Russian unit could claim WA at the end of each RPh (a squad in
/// the stone building stands at a wall), so the Russian's two end-of-RPh steps are asked; no
/// German unit could, so the German's two pass. The Game Turn hands over 12 times, not 14.
#[test]
fn village_outskirts_asks_only_the_steps_a_side_could_claim_in() {
    let turn = first_game_turn(include_str!("../../scenarios/village-outskirts.toml"));
    println!(
        "village-outskirts, Game Turn 1 by done: {} hand-overs ({} with every step asked), \
         {} dones, {} steps passed",
        turn.handovers,
        turn.handovers_every_step_asked,
        turn.dones,
        turn.passed.len()
    );
    // Eleven steps a Player Turn, seven changes of side in each when every step is asked.
    assert_eq!(turn.handovers_every_step_asked, 14);
    assert!(turn.passed.iter().all(|c| c.step().rule == "B9.322"));
    let german = Side::A;
    let first = Side::A;
    assert!(
        turn.passed.iter().all(|c| c.acting(first) == german),
        "{:?}",
        turn.passed
    );
    assert_eq!(turn.passed.len(), 2, "{:?}", turn.passed);
    assert_eq!(turn.handovers, 12);
    assert_eq!(turn.dones, 22 - 2);
}

/// The B9.41 example's position at the start: every unit that could stand at a wall holds WA
/// already or is kept from it by an enemy holder Known to be real (B9.321), so all four
/// end-of-RPh steps pass and the Game Turn hands over 10 times, the fewest the other steps
/// allow.
#[test]
fn where_no_side_could_claim_all_four_steps_pass() {
    let turn = first_game_turn(include_str!("../../scenarios/b9-41-wall-advantage.toml"));
    println!(
        "b9-41-wall-advantage, Game Turn 1 by done: {} hand-overs ({} with every step asked), \
         {} dones, {} steps passed",
        turn.handovers,
        turn.handovers_every_step_asked,
        turn.dones,
        turn.passed.len()
    );
    assert_eq!(turn.handovers_every_step_asked, 14);
    assert_eq!(turn.passed.len(), 4, "{:?}", turn.passed);
    assert_eq!(turn.handovers, 10);
    assert_eq!(turn.dones, 22 - 4);
}
