//! Events of the game's course: the steps, and how a game ends (by its last turn, a
//! concession, an agreement).

use crate::phase::Clock;
use board::scenario::Scenario;
use board::scenario::Side;
use serde::{Deserialize, Serialize};

/// The game began from this scenario; always the first event of a log, so a log is
/// self-contained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameCreated {
    pub scenario: Scenario,
}

/// The acting side finished a step; the clock moved on to `next`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEnded {
    pub by: Side,
    pub ended: Clock,
    pub next: Clock,
}

/// A step no side could act in passed by itself, with no command: today an end-of-RPh
/// step (1.32B) in which no unit of the side to act could claim Wall Advantage (B9.322),
/// judged from what both sides may know (`rules::end_of_rally`). The clock moved on to
/// `next` as if the step had ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPassed {
    pub ended: Clock,
    pub next: Clock,
}

/// The last step of the last Game Turn ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEnded {
    pub turns_played: u16,
}

/// A side gave the game up: it is over (`rules::end`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conceded {
    pub side: Side,
}

/// A side offered to end the game where it stands; the end of the step withdraws the
/// offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndProposed {
    pub side: Side,
}

/// A side accepted the opponent's offer: the game is over by agreement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndAgreed {
    pub side: Side,
}
