//! `roll`: a dr or DR rolled through the referee for a purpose the engine does not roll for
//! itself (fire, morale, Close Combat, a Random Selection…), so that every die of a game comes
//! from the committed seed and can be checked once it is revealed (`docs/dice.md`). The roll is
//! logged with its purpose and rule; applying the table is still the players' (`adjudicate`,
//! which may cite the roll).

use crate::adjudicate::NOTE_BYTES_MAX;
use crate::violation::{RuleViolation, ViolationKind};
use board::scenario::Side;
use game::command::DiceCount;
use game::dice::{DiceSource, Roll, RollPurpose};
use game::event::DiceRolled;
use game::event::Event;
use game::Game;

/// What a refusal of a roll cites: the dice document.
const RULE: &str = "docs/dice.md";

pub(super) fn decide(
    game: &Game,
    by: Side,
    count: DiceCount,
    purpose: RollPurpose,
    note: &str,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let refuse = |kind, why: String| RuleViolation::new(RULE, kind, why);
    crate::end::still_playing(game)?;
    let Some((word, rule)) = purpose.on_request() else {
        return Err(refuse(
            ViolationKind::NotModelled,
            format!(
                "the engine rolls for {} itself, when its rule applies",
                purpose.describe()
            ),
        ));
    };
    if note.len() > NOTE_BYTES_MAX {
        return Err(refuse(
            ViolationKind::UnitState,
            format!("the note is {} bytes; at most {NOTE_BYTES_MAX}", note.len()),
        ));
    }
    if purpose == RollPurpose::Other && note.trim().is_empty() {
        return Err(refuse(
            ViolationKind::UnitState,
            format!("a roll for `{word}` says what it is for in a note"),
        ));
    }
    // Every check is above: a refused roll draws nothing (docs/dice.md).
    let mut faces = Vec::with_capacity(count.dice());
    for _ in 0..count.dice() {
        faces.push(dice.roll_die().ok_or_else(|| {
            refuse(
                ViolationKind::NoDice,
                "no dice: offline, add a `dice` line before the roll".into(),
            )
        })?);
    }
    let raw = faces.iter().map(|f| i16::from(*f)).sum();
    Ok(vec![Event::DiceRolled(DiceRolled {
        roll: Roll {
            side: by,
            purpose,
            rule: rule.to_string(),
            first_draw: game.dice_drawn,
            dice: faces,
            modifiers: vec![],
            final_result: raw,
            outcome: note.to_string(),
        },
    })])
}
