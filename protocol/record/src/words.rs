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
}
