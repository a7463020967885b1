//! `Adjudicate`: a player enters an outcome the engine does not compute (fire, morale). Either
//! side may enter one at any time, because either side's attacks produce them; the event names
//! who entered it so the opponent can see and dispute it.

use crate::violation::{text, Piece, RuleViolation, ViolationKind};
use board::scenario::{Morale, Side, UnitId, UnitKind};
use game::command::Outcome;
use game::event::Event;
use game::event::OutcomeAdjudicated;
use game::{Game, Unit, Viewer};

/// Longest note an adjudication may carry, in bytes: room for "IFT 8 +2, DR 5, 1MC failed".
pub const NOTE_BYTES_MAX: usize = 200;

pub(super) fn decide(
    game: &Game,
    by: Side,
    id: &UnitId,
    outcome: Outcome,
    note: &str,
) -> Result<Vec<Event>, RuleViolation> {
    let unknown = || crate::violation::no_such_unit(id, " in this game");
    let unit = game.units.get(id).ok_or_else(unknown)?;
    if unit.hidden && unit.side != by {
        return Err(unknown());
    }
    if note.len() > NOTE_BYTES_MAX {
        return Err(RuleViolation::new(
            "A1",
            ViolationKind::UnitState,
            format!("the note is {} bytes; at most {NOTE_BYTES_MAX}", note.len()),
        ));
    }
    // What a "?" of the opponent's is — its kind, ratings, morale, whether it is wounded — is
    // not the adjudicator's to learn from a refusal (A12): every check below reads the unit as
    // the adjudicating side sees it. An outcome that does not fit what it hides changes nothing
    // (`apply`): a reduction of no squad, a wound of no SMC.
    let masked = game::view::masked(Viewer::Side(by), unit);
    let seen = game::view::seen_as(Viewer::Side(by), unit);
    let unit: &Unit = &seen;
    if masked && outcome.for_counters_only() {
        return Err(RuleViolation::with(
            "A12.11",
            ViolationKind::UnitState,
            vec![
                text(format!("cannot {} ", outcome.name())),
                Piece::Unit(id.to_string()),
                text(": what is under the opponent's \"?\" is his to move or relabel, by his own adjudication"),
            ],
        ));
    }
    let counter = unit.kind == UnitKind::Counter;
    // A half-squad Casualty Reduction left without ratings gets them by a relabel.
    let unrated = crate::morale::awaits_ratings(unit);
    if outcome.for_counters_only() != counter
        && outcome != Outcome::Eliminate
        && !(outcome == Outcome::Relabel && unrated)
    {
        return Err(RuleViolation::with(
            "A1",
            ViolationKind::UnitState,
            if counter {
                vec![
                    text(format!("cannot {} ", outcome.name())),
                    Piece::Unit(id.to_string()),
                    text(": a counter the engine does not rule on has no morale; eliminate, relocate or relabel it"),
                ]
            } else {
                vec![
                    text(format!("cannot {} ", outcome.name())),
                    Piece::Unit(id.to_string()),
                    text(": only a counter the engine does not rule on is moved or relabelled by adjudication; a unit moves by the rules (A4)"),
                ]
            },
        ));
    }
    if let Outcome::Relocate(to) = outcome {
        if !game.scenario.hexes.contains_key(&to) {
            return Err(RuleViolation::new(
                "A1",
                ViolationKind::Geometry,
                format!("{to} is not on the map"),
            ));
        }
    }
    if outcome == Outcome::Reduce && unit.kind != UnitKind::Squad && !masked {
        return Err(RuleViolation::with(
            "A7.302",
            ViolationKind::UnitState,
            vec![
                text("cannot reduce "),
                Piece::Unit(id.to_string()),
                text(format!(
                    ": it is a {}, and only a squad is reduced to a half-squad (Casualty Reduction eliminates a half-squad or crew: eliminate it; it wounds an SMC, A17)",
                    unit.kind.name()
                )),
            ],
        ));
    }
    if outcome == Outcome::Wound && !unit.kind.is_smc() && !masked {
        return Err(RuleViolation::with(
            "A17.1",
            ViolationKind::UnitState,
            vec![
                text("cannot wound "),
                Piece::Unit(id.to_string()),
                text(": only an SMC (a leader, a hero) is wounded; Casualty Reduction reduces a squad and eliminates a half-squad or crew (A7.302)"),
            ],
        ));
    }
    let half_squad_ratings = |what: &str| {
        if crate::morale::morale_level(UnitKind::HalfSquad, note).is_none() {
            return Err(RuleViolation::new(
                "A7.302",
                ViolationKind::UnitState,
                format!(
                    "{what} is the half-squad's ratings, three numbers such as 2-4-7, not `{note}`"
                ),
            ));
        }
        Ok(())
    };
    if outcome == Outcome::Reduce && !note.is_empty() {
        half_squad_ratings("a reduction's note")?;
    }
    if outcome == Outcome::Relabel && unrated {
        half_squad_ratings("a relabel's note")?;
    } else if outcome == Outcome::Relabel {
        board::scenario::check_counter_name("note", note).map_err(|e| {
            RuleViolation::new(
                "A1",
                ViolationKind::UnitState,
                format!(
                    "a relabel's note is what the counter now reads: {}",
                    e.reason
                ),
            )
        })?;
    }
    // An outcome that would change nothing is a mistake worth catching: the player meant
    // another unit or another outcome.
    let pointless = match outcome {
        _ if unit.eliminated => Some(("A1", "has been eliminated already")),
        Outcome::Relocate(to) if to == unit.hex => Some(("A1", "stands there already")),
        Outcome::Relabel if note == unit.ratings => Some(("A1", "reads so already")),
        Outcome::Break if unit.morale == Morale::Broken => Some(("A10", "is broken already")),
        // Under "?" its morale is not the adjudicator's to know (it reads Good Order): a rally
        // of a "?" is taken as a break of one is, and changes nothing if it was not broken.
        Outcome::Rally if unit.morale == Morale::GoodOrder && !masked => {
            Some(("A10", "is not broken"))
        }
        Outcome::Pin if unit.pinned => Some(("A7.8", "is pinned already")),
        Outcome::Wound if unit.wounded && !masked => Some((
            "A17.3",
            "is wounded already, and a second wound takes nothing more from him (a mortal one eliminates him)",
        )),
        _ => None,
    };
    if let Some((rule, why)) = pointless {
        return Err(RuleViolation::with(
            rule,
            ViolationKind::UnitState,
            vec![
                text(format!("cannot {} ", outcome.name())),
                Piece::Unit(id.to_string()),
                text(format!(": it {why}")),
            ],
        ));
    }
    let mut events = vec![Event::OutcomeAdjudicated(OutcomeAdjudicated {
        by,
        unit: id.clone(),
        outcome,
        note: note.to_string(),
    })];
    // A unit that breaks in a sewer is eliminated (B8.45).
    if outcome == Outcome::Break
        && matches!(unit.underground, Some(game::Underground::Sewer { .. }))
    {
        events.push(Event::OutcomeAdjudicated(OutcomeAdjudicated {
            by,
            unit: id.clone(),
            outcome: Outcome::Eliminate,
            note: "broke in a sewer (B8.45)".into(),
        }));
    }
    Ok(events)
}
