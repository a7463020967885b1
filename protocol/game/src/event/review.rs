//! Adjudication and its review (`docs/review.md`): outcomes the players enter, answers to
//! them, and undo. None of them changes the position but the undo itself; the answers are
//! decided by `record::dispute::decide`, which reads the log as well as the position.

use crate::command::Outcome;
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// A player entered an outcome the engine does not compute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeAdjudicated {
    pub by: Side,
    pub unit: UnitId,
    pub outcome: Outcome,
    pub note: String,
}

/// The opponent of whoever entered adjudication `event` accepted it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdjudicationAccepted {
    pub by: Side,
    pub event: u64,
}

/// The opponent of whoever entered adjudication `event` disputed it, saying why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdjudicationDisputed {
    pub by: Side,
    pub event: u64,
    pub reason: String,
}

/// The side to act asked to take back its own events `from..=to` (its last ones).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoRequested {
    pub by: Side,
    pub from: u64,
    pub to: u64,
}

/// The opponent refused the undo asked for just before.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoDeclined {
    pub by: Side,
}

/// Events `from..=to` were taken back with the opponent's consent. `restored` is the
/// position before `from`, rebuilt by replaying the log up to it when the undo was decided:
/// `apply` puts it back, so a replay of the log reaches the same state as live play did,
/// and a verifier checks it by replaying the same prefix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsUndone {
    pub requested_by: Side,
    pub consented_by: Side,
    pub from: u64,
    pub to: u64,
    pub restored: Box<crate::Game>,
}

/// Events `from..=to` were taken back with the opponent's consent: the position is the one
/// before `from` again. The event names the version to return to and carries no position
/// (as [`Event::EventsUndone`], its older form, did: a whole position per undo): `apply`
/// rebuilds it from the position after the last event no undo reaches back across and the
/// events since ([`crate::UndoTrail`]), live and in replay alike. A viewer receives it
/// as an `EventsUndone` carrying its own projection of that position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsUndoneTo {
    pub requested_by: Side,
    pub consented_by: Side,
    pub from: u64,
    pub to: u64,
}
