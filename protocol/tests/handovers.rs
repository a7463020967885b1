//! Hand-overs per Game Turn (issue 55): in a correspondence game each time the side to act
//! changes, the game waits for the other player, which can cost a day. A step in which the
//! side to act could do nothing passes by itself (`rules::passing`): an end-of-RPh step
//! (1.32B) in which it could claim no Wall Advantage nor repair a weapon (B9.322, A9.72), a
//! RtPh step in which it has no unit that could rout (A10.5). So a Game Turn played by `done`
//! hands over fewer times than one that asks every step.
//!
//! Each Game Turn is played once; the counts with fewer steps passing (none, as before any
//! did; only the end-of-RPh steps, as before the RtPh steps did) are read off the same run,
//! from the side that would have been asked at every step begun.
//!
//! `cargo test -p asl-protocol --test handovers -- --nocapture` prints the counts.

#[path = "../../bench/protocol/shapes.rs"]
mod shapes;

use protocol::event::{StepEnded, StepPassed};
use protocol::phase::{Clock, Phase};
use protocol::ReadScenario;
use protocol::{apply, decide, Command, Event, Game, Scenario, ScriptedDice, Side};

/// One step begun in the Game Turn: the side it names, and whether it passed by itself.
struct Begun {
    side: Side,
    clock: Clock,
    passed: bool,
}

/// How one Game Turn went when played by `done` only.
struct Turn {
    /// Commands sent (each a `done`).
    dones: usize,
    /// Every step begun, in order, from the first of the Game Turn to the first of the next.
    steps: Vec<Begun>,
}

impl Turn {
    /// Times the side to act changed between the steps asked, had only the steps that
    /// `passes` allows passed by themselves.
    fn handovers_if(&self, passes: impl Fn(&Begun) -> bool) -> usize {
        let asked: Vec<Side> = self
            .steps
            .iter()
            .filter(|b| !(b.passed && passes(b)))
            .map(|b| b.side)
            .collect();
        asked.windows(2).filter(|w| w[0] != w[1]).count()
    }

    /// Hand-overs now: every step that passed did.
    fn handovers(&self) -> usize {
        self.handovers_if(|_| true)
    }

    /// Hand-overs had every step been asked for, ending by a `done`.
    fn handovers_every_step_asked(&self) -> usize {
        self.handovers_if(|_| false)
    }

    /// Hand-overs had only the end-of-RPh steps passed (B9.322), the RtPh steps asked.
    fn handovers_only_wa_steps_passing(&self) -> usize {
        self.handovers_if(|b| b.clock.phase() == Phase::Rally)
    }

    fn passed(&self) -> Vec<Clock> {
        self.steps
            .iter()
            .filter(|b| b.passed)
            .map(|b| b.clock)
            .collect()
    }

    fn print(&self, name: &str) {
        println!(
            "{name}, Game Turn 1 by done: {} hand-overs ({} with only the end-of-RPh steps \
             passing, {} with every step asked), {} dones, {} steps passed",
            self.handovers(),
            self.handovers_only_wa_steps_passing(),
            self.handovers_every_step_asked(),
            self.dones,
            self.passed().len()
        );
    }
}

/// Plays Game Turn 1 of `toml` by `done` alone, from its first step to the first step of
/// Game Turn 2.
fn first_game_turn(toml: &str) -> Turn {
    let mut game = Game::new(Scenario::from_toml(toml).expect("the scenario loads"));
    let first = game.scenario.first;
    let mut turn = Turn {
        dones: 0,
        steps: vec![Begun {
            side: game.acting(),
            clock: game.clock,
            passed: false,
        }],
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
                Event::StepEnded(StepEnded { next, .. }) => turn.steps.push(Begun {
                    side: next.acting(first),
                    clock: *next,
                    passed: false,
                }),
                Event::StepPassed(StepPassed { ended, next }) => {
                    let begun = turn.steps.last_mut().expect("a step was begun");
                    assert_eq!(begun.clock, *ended);
                    begun.passed = true;
                    turn.steps.push(Begun {
                        side: next.acting(first),
                        clock: *next,
                        passed: false,
                    });
                }
                _ => {}
            }
            apply(&mut game, e);
        }
    }
    turn
}

/// The walkthrough scenario: a Russian unit could claim WA at the end of each RPh (a squad in
/// the stone building stands at a wall), so the Russian's two end-of-RPh steps are asked; no
/// German unit could, so the German's two pass. No unit is broken; the Russian has a squad
/// under "?", which may be broken for all the German knows, so the Russian's RtPh steps are
/// asked and the German's pass. The Game Turn hands over 10 times: 12 with only the
/// end-of-RPh steps passing, 14 with every step asked.
#[test]
fn village_outskirts_asks_only_the_steps_a_side_could_act_in() {
    let turn = first_game_turn(include_str!("../../scenarios/village-outskirts.toml"));
    turn.print("village-outskirts");
    // Eleven steps a Player Turn, seven changes of side in each when every step is asked.
    assert_eq!(turn.handovers_every_step_asked(), 14);
    assert_eq!(turn.handovers_only_wa_steps_passing(), 12);
    let german = Side::A;
    let first = Side::A;
    let passed = turn.passed();
    assert!(
        passed.iter().all(|c| c.acting(first) == german),
        "{passed:?}"
    );
    let rules: Vec<&str> = passed.iter().map(|c| c.step().rule).collect();
    assert_eq!(rules, ["B9.322", "A3.6", "B9.322", "A3.6"], "{passed:?}");
    assert_eq!(turn.handovers(), 10);
    assert_eq!(turn.dones, 22 - 4);
}

/// The B9.41 example's position at the start: every unit that could stand at a wall holds WA
/// already or is kept from it by an enemy holder Known to be real (B9.321), so all four
/// end-of-RPh steps pass; the Russian's "?" keeps its RtPh steps asked, the German's pass. The
/// Game Turn hands over 8 times.
#[test]
fn where_no_side_could_claim_all_four_wa_steps_pass() {
    let turn = first_game_turn(include_str!("../../scenarios/b9-41-wall-advantage.toml"));
    turn.print("b9-41-wall-advantage");
    assert_eq!(turn.handovers_every_step_asked(), 14);
    assert_eq!(turn.handovers_only_wa_steps_passing(), 10);
    assert_eq!(turn.passed().len(), 6, "{:?}", turn.passed());
    assert_eq!(turn.handovers(), 8);
    assert_eq!(turn.dones, 22 - 6);
}

/// Positions of a real scenario's size (60 and 150 units, `bench/protocol/shapes.rs`): German
/// squads holding WA over walls, Russian squads in woods across them, nothing broken, nothing
/// hidden. Every end-of-RPh and RtPh step passes, and the Game Turn hands over 6 times, the
/// fewest the sequence of play allows a DEFENDER that is asked in its DFPh: into the DFPh, out
/// of it, and to the other Player Turn, twice.
#[test]
fn real_sized_positions_hand_over_only_for_the_defensive_fire_and_the_player_turn() {
    for (name, text) in [
        ("walled line (60 units)", shapes::walled_line(30)),
        ("walled lines (150 units)", shapes::walled_lines(75)),
    ] {
        let turn = first_game_turn(&text);
        turn.print(name);
        assert_eq!(turn.handovers_every_step_asked(), 14);
        assert_eq!(turn.handovers_only_wa_steps_passing(), 10);
        assert_eq!(turn.passed().len(), 8, "{:?}", turn.passed());
        assert_eq!(turn.handovers(), 6);
        assert_eq!(turn.dones, 22 - 8);
    }
}
