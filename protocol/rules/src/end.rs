//! Ending a game before its last turn: a side concedes, or one offers and the other accepts.
//! ASL leaves this to the players, so the refusals cite this project's rule, the section of
//! docs/script.md that describes the three commands. Each is taken at any moment of play,
//! even while play waits for an answer (a WA chance, a lost sewer stack): no position keeps
//! a player from leaving the game.

use crate::violation::{RuleViolation, ViolationKind};
use board::scenario::Side;
use game::event::Event;
use game::event::{Conceded, EndAgreed, EndProposed};
use game::Game;

/// The rule these refusals cite.
pub const RULE: &str = "docs/script.md";

/// The one check that play is over (A3: the game ends after the last Game Turn; a concession
/// or an agreement ends it sooner). Every path a command takes asks it first — the rules'
/// `decide`, the clock's commands (`timing::timed`), the commands decided against the log
/// (`record::dispute`) — so a finished game's result cannot be rewritten by any of them.
pub fn still_playing(game: &Game) -> Result<(), RuleViolation> {
    if game.over {
        return Err(RuleViolation::new(
            "A3",
            ViolationKind::GameOver,
            "the game is over; its result and its log are final",
        ));
    }
    Ok(())
}

pub fn concede(_game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    Ok(vec![Event::Conceded(Conceded { side: by })])
}

pub fn propose(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    match game.end_proposal {
        Some(side) if side == by => Err(RuleViolation::new(
            RULE,
            ViolationKind::WrongPhase,
            format!(
                "the {} has offered to end the game already; it ends once the {} accepts",
                game.side_name(by),
                game.side_name(by.opponent())
            ),
        )),
        Some(_) => Err(RuleViolation::new(
            RULE,
            ViolationKind::WrongPhase,
            format!(
                "the {} has offered to end the game; accept-end agrees to it",
                game.side_name(by.opponent())
            ),
        )),
        None => Ok(vec![Event::EndProposed(EndProposed { side: by })]),
    }
}

pub fn accept(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    match game.end_proposal {
        Some(side) if side != by => Ok(vec![Event::EndAgreed(EndAgreed { side: by })]),
        Some(_) => Err(RuleViolation::new(
            RULE,
            ViolationKind::WrongSide,
            format!(
                "the {} offered to end the game; only the {} can accept",
                game.side_name(by),
                game.side_name(by.opponent())
            ),
        )),
        None => Err(RuleViolation::new(
            RULE,
            ViolationKind::WrongPhase,
            "no offer to end the game stands (an offer lapses when the step it was made in ends); \
             propose-end makes one, concede gives the game up",
        )),
    }
}
