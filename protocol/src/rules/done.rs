//! `Done`: the acting side has finished the current step; the clock moves on (A3).

use super::require_acting;
use crate::event::Event;
use crate::game::Game;
use crate::scenario::Side;
use crate::violation::RuleViolation;

pub(super) fn decide(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the side whose step it is can end it")?;
    let ended = game.clock;
    Ok(match ended.next(game.scenario.turns) {
        Some(next) => vec![Event::StepEnded { by, ended, next }],
        None => vec![Event::GameEnded {
            turns_played: game.scenario.turns,
        }],
    })
}
