//! Adjudication and its review (`docs/review.md`): outcomes the players enter, answers to
//! them, and undo. None of them changes the position but the undo itself; the answers are
//! decided by `record::dispute::decide`, which reads the log as well as the position.

use super::Sides;
use super::{Event, Fact};
use std::fmt::Write as _;

use crate::command::Outcome;
use crate::view::Names;
use crate::{apply_outcome, Game};
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// What the commands decided against the game's log cite (the dice scheme's contributions,
/// adjudication review and undo): the document that defines them.
pub const REVIEW_RULE: &str = "docs/review.md";

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

impl Fact for OutcomeAdjudicated {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let OutcomeAdjudicated {
            unit,
            outcome,
            note,
            ..
        } = self;
        apply_outcome(game, unit, *outcome, note);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let OutcomeAdjudicated {
            by,
            unit,
            outcome,
            note,
        } = self;
        Event::OutcomeAdjudicated(OutcomeAdjudicated {
            by,
            // A relabel's or a reduction's note is what the counter now reads: under "?"
            // that is hidden.
            note: if matches!(
                outcome,
                crate::command::Outcome::Relabel | crate::command::Outcome::Reduce
            ) && names.masked(&unit)
            {
                String::new()
            } else {
                names.text_by(by, &note)
            },
            unit: names.name(&unit),
            outcome,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let OutcomeAdjudicated {
            by,
            unit,
            outcome,
            note,
        } = self;
        let mut s = format!("{} adjudicated: {unit} {}", name(*by), outcome.describe());
        if !note.is_empty() {
            let _ = write!(s, " ({note})");
        }
        s
    }
}

impl Fact for AdjudicationAccepted {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let AdjudicationAccepted { by, event } = self;
        format!(
            "{} accepted adjudication #{event} ({REVIEW_RULE})",
            name(*by)
        )
    }
}

impl Fact for AdjudicationDisputed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let AdjudicationDisputed { by, event, reason } = self;
        Event::AdjudicationDisputed(AdjudicationDisputed {
            by,
            event,
            reason: names.text_by(by, &reason),
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let AdjudicationDisputed { by, event, reason } = self;
        format!(
            "{} disputed adjudication #{event}: {reason} ({REVIEW_RULE})",
            name(*by)
        )
    }
}

impl Fact for UndoRequested {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let UndoRequested { by, from, to } = self;
        format!(
            "{} asked to take back #{from}–#{to}, its own last events ({REVIEW_RULE})",
            name(*by)
        )
    }
}

impl Fact for UndoDeclined {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let UndoDeclined { by } = self;
        format!(
            "{} declined to let them be taken back ({REVIEW_RULE})",
            name(*by)
        )
    }
}

impl Fact for EventsUndone {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        // The position goes back to before the undone events; the version keeps counting, and
        // a projection stays the same viewer's (see `record::dispute`).
        let EventsUndone { restored, .. } = self;
        let (version, viewer) = (game.version, game.viewer);
        // Time once spent stands: an undo takes back the position, not the clocks.
        let timing = game.timing.take();
        *game = (**restored).clone();
        game.version = version;
        game.viewer = viewer;
        game.timing = timing;
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let v = names.viewer;
        let EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored,
        } = self;
        Event::EventsUndone(EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored: Box::new(restored.project(v)),
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        undone_words(
            sides,
            self.requested_by,
            self.consented_by,
            self.from,
            self.to,
        )
    }
}

impl Fact for EventsUndoneTo {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        // Decided only when the trail reaches back to the version before `from`
        // (`record::dispute`), so the position is there.
        let EventsUndoneTo { from, .. } = self;
        if let Some(restored) = game.undo_trail.position_at(game, from - 1) {
            let (version, viewer) = (game.version, game.viewer);
            // Time once spent stands: an undo takes back the position, not the clocks.
            let timing = game.timing.take();
            *game = restored;
            game.version = version;
            game.viewer = viewer;
            game.timing = timing;
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        // The log names the version to return to; a viewer is handed the position itself,
        // as it may know it: the game after the undo is the position before `from`.
        let v = names.viewer;
        let EventsUndoneTo {
            requested_by,
            consented_by,
            from,
            to,
        } = self;
        Event::EventsUndone(EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored: Box::new(names.after.project(v)),
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        undone_words(
            sides,
            self.requested_by,
            self.consented_by,
            self.from,
            self.to,
        )
    }
}

/// Both forms of an undo in the same words.
fn undone_words(
    sides: &Sides<'_>,
    requested_by: Side,
    consented_by: Side,
    from: u64,
    to: u64,
) -> String {
    format!(
        "#{from}–#{to} taken back at the {}'s request with the {}'s consent: the position is as it was before #{from} ({REVIEW_RULE})",
        sides.name(requested_by),
        sides.name(consented_by)
    )
}
