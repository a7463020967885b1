//! Refusals. A refused command changes nothing; the refusal names the rule and says why in
//! plain words, so the player can fix the command and a reviewer can check the ruling.
//!
//! Checks run in a fixed precedence, cheapest and most general first, so that when several
//! things are wrong the answer is always the same one:
//!
//! 1. `GameOver` — nothing is accepted after the last turn.
//! 2. `WrongSide` — the step awaits the other side.
//! 3. `WrongPhase` — the command has no place in this phase/step.
//! 4. `UnknownUnit` / `NotYourUnit` — the unit doesn't exist, or belongs to the opponent.
//! 5. `UnitState` — broken, pinned, already moved, eliminated …
//! 6. `Terrain` / `Geometry` — where it wants to go can't be entered that way.
//! 7. `NotEnoughMf` — the move is legal but unaffordable.
//! 8. `NotModelled` — legal in ASL, but the engine does not rule on it; refused rather than guessed.
//!
//! Answers to adjudications and undo (`crate::record::dispute`) check game over, side and moment the
//! same way, then `UnknownEvent` (no such event, or one the player may not see) before
//! `NotUndoable` (events that may not be taken back, and why).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    GameOver,
    WrongSide,
    WrongPhase,
    UnknownUnit,
    NotYourUnit,
    UnitState,
    Geometry,
    Terrain,
    NotEnoughMf,
    NotModelled,
    /// A roll was needed and the dice source had none (offline: add a `dice` line).
    NoDice,
    /// The command names an event the game has not logged, or one the player may not see.
    UnknownEvent,
    /// The events asked to be taken back may not be: a die was rolled, hidden information
    /// was revealed, the side to act changed, or they are not all the asker's own.
    NotUndoable,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct RuleViolation {
    /// The rule that forbids the command, as printed (`B9.322`, `A4.2`).
    pub rule: String,
    pub kind: ViolationKind,
    /// Why, in plain words, with the figures ("needs 3 MF, 2 left").
    pub detail: String,
}

impl RuleViolation {
    pub fn new(rule: &str, kind: ViolationKind, detail: impl Into<String>) -> RuleViolation {
        RuleViolation {
            rule: rule.to_string(),
            kind,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for RuleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}
