//! Every event in words, for the player's terminal, the game record and the export file: the
//! entry point. The words themselves live with each event, in its family's module of
//! `game::event` (`Fact::words`), beside its change to the game and its projection, so an event
//! is added in one place.
//!
//! One sentence per event, naming the side, the units and the rule behind the change, so a log
//! read top to bottom is a readable account of the game. The server sends these words with each
//! event (`wire`'s `EventInfo`), the CLI prints them, and `asl export` writes them beside the
//! envelopes.

use game::event::Event;
pub use game::event::Sides;
use game::Game;

/// A readable account of one event for the player's terminal and the game record.
pub fn describe_event(game: &Game, event: &Event) -> String {
    describe(&Sides::of(&game.scenario), event)
}

/// [`describe_event`] from the side names alone: each event's family says it in words
/// (`game::event::Fact::words`).
pub fn describe(game: &Sides<'_>, event: &Event) -> String {
    event.words(game)
}

#[cfg(test)]
mod tests {
    use super::*;
    use board::scenario::{Scenario, Side};
    use game::command::Command;
    use game::dice::ScriptedDice;
    use rules::wall_advantage::ReadScenario;

    /// Entering marsh takes the whole allotment (B16): the words say so, never "0 MF".
    #[test]
    fn marsh_entry_says_all_mf() {
        let text = include_str!("../../tests/positions/scenarios/terrain-sampler.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        let play = |game: &mut Game, by: Side, command: Command| {
            let events =
                rules::decide(game, by, &command, &mut ScriptedDice::default()).expect("accepted");
            for e in &events {
                game::apply(game, e);
            }
            events
        };
        while game.clock.phase() != game::phase::Phase::Movement {
            let by = game.acting();
            play(&mut game, by, Command::Done);
        }
        let before = game.clone();
        let events = play(
            &mut game,
            Side::A,
            Command::Move {
                units: vec!["s12".into()],
                to: "1C24".parse().unwrap(),
            },
        );
        let moved = events
            .iter()
            .find(|e| matches!(e, Event::UnitMoved(_)))
            .expect("moved");
        let words = describe_event(&before, moved);
        assert!(words.contains("all MF (B16)"), "{words}");
        assert!(!words.contains("0 MF"), "{words}");
    }

    /// An Interdiction (A10.53) reads as a fire log does: who Interdicts, the router's NMC
    /// against its broken side's morale, the DR and what came of it.
    #[test]
    fn interdiction_reads_as_a_fire_log() {
        let text = include_str!("../../tests/positions/scenarios/a10-53-interdiction.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        while game.clock.phase() != game::phase::Phase::Rout {
            let by = game.acting();
            let events = rules::decide(&game, by, &Command::Done, &mut ScriptedDice::default())
                .expect("done");
            for e in &events {
                game::apply(&mut game, e);
            }
        }
        let rout = Command::Rout {
            unit: "ga".into(),
            to: "3A4".parse().unwrap(),
            morale: Some(8),
        };
        let events = rules::decide(
            &game,
            Side::A,
            &rout,
            &mut ScriptedDice::new([5, 6]).unwrap(),
        )
        .expect("routed");
        let words: Vec<String> = events.iter().map(|e| describe_event(&game, e)).collect();
        let all = words.join("\n");
        assert!(
            all.contains("Interdicted in Open Ground by ra (A10.53)"),
            "{all}"
        );
        assert!(
            all.contains("rolled DR for Interdiction (A10.53): 5+6 = Final 11 → 4-6-7 `ga` Interdiction NMC by `ra`: broken morale 8, DR 11 → failed: Casualty Reduction"),
            "{all}"
        );
        assert!(
            all.contains(
                "DR 11 → failed: Casualty Reduction → reduced to a 2-4-7 half-squad (A10.53)"
            ),
            "{all}"
        );
    }
    /// Final Protective Fire's NMC on its firers (A8.31) reads as a fire log does: each firer's
    /// check with its morale, the FPF's Original DR and its leadership DRM, and what came of it.
    #[test]
    fn fpf_nmc_reads_as_a_fire_log() {
        let text = include_str!("../../tests/positions/scenarios/a8-31-fpf.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        let play = |game: &mut Game, by: Side, command: Command, dice: &[u8]| {
            let mut dice = ScriptedDice::new(dice.iter().copied()).unwrap();
            let events = rules::decide(game, by, &command, &mut dice).expect("accepted");
            for e in &events {
                game::apply(game, e);
            }
            events
        };
        while game.clock.phase() != game::phase::Phase::Movement {
            let by = game.acting();
            play(&mut game, by, Command::Done, &[]);
        }
        let (russian, german) = (game.acting(), game.acting().opponent());
        let mut words = vec![];
        for (hex, dice) in [
            ("2E3", [6, 5, 0, 0]),
            ("2E4", [6, 5, 0, 0]),
            ("2E5", [4, 4, 2, 3]),
        ] {
            let to: board::hex::Hex = hex.parse().unwrap();
            let mv = Command::Move {
                units: vec!["ra".into()],
                to,
            };
            play(&mut game, russian, mv, &[]);
            let fire = Command::DeclareAttack {
                firers: vec!["g1".into(), "l1".into()],
                target: to,
                into_sewer: false,
            };
            play(&mut game, german, fire, &[]);
            let faces: Vec<u8> = dice.into_iter().filter(|d| *d > 0).collect();
            let before = game.clone();
            for e in play(&mut game, german, Command::ResolveAttack, &faces) {
                words.push(describe_event(&before, &e));
            }
        }
        let all = words.join("\n");
        assert!(
            all.contains("8-1 `l1` FPF NMC: morale 8, DR 8 → passed, pinned (A8.31: the FPF's Original DR 4+4)"),
            "{all}"
        );
        assert!(
            all.contains(
                "4-6-7 `g1` FPF NMC: morale 7, DR 8 → broken (A8.31: the FPF's Original DR 4+4)"
            ),
            "{all}"
        );
        assert!(!all.contains("rolled DR for NormalMoraleCheck"), "{all}");
    }
}
