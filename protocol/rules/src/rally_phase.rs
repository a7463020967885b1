//! What a unit may combine in one RPh: one type of act (A3.1) — its own rally attempt or, for
//! a leader, the leading of others' (A10.6, A10.7), a Recovery (A4.44, the unit's sole act
//! there), a repair (A9.72), giving or taking a SW by Transfer (A4.431). The game keeps each
//! unit's act of the phase (`MovementRecord::rally_phase_acts`, written by the act's own
//! event), and every RPh command asks this one check before its first die, so no command
//! keeps a copy of the rule of its own.

use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::UnitId;
use game::phase::Phase;
use game::{Game, RallyPhaseAct};

/// Whether `unit` may attempt `act` in this RPh: refused if it attempted an act of another
/// type here. A second act of the same type is the act's own rule to judge (one rally attempt
/// a Player Turn, A10.6; one Recovery, A4.44; one repair attempt a weapon, A9.72; a Transfer
/// again, which no rule bars). Outside the RPh nothing is recorded and nothing refused. The
/// refusal names A4.44 when a Recovery is one of the two acts (its sole act), A3.1 otherwise.
pub(crate) fn check_one_act(
    game: &Game,
    unit: &UnitId,
    act: RallyPhaseAct,
) -> Result<(), RuleViolation> {
    if game.clock.phase() != Phase::Rally {
        return Ok(());
    }
    let Some(&done) = game.movement.rally_phase_acts.get(unit) else {
        return Ok(());
    };
    if done == act {
        return Ok(());
    }
    let (rule, why) = if done == RallyPhaseAct::Recovery || act == RallyPhaseAct::Recovery {
        ("A4.44", "a Recovery there is a unit's sole act")
    } else {
        ("A3.1", "a unit attempts one type of act in a RPh")
    };
    Err(RuleViolation::with(
        rule,
        ViolationKind::UnitState,
        pieces![
            Piece::unit(unit),
            format!(
                " {} this RPh, and {why}: it does not {}",
                done.words(),
                to_do(act)
            )
        ],
    ))
}

/// The act a refused unit would have made, in words.
fn to_do(act: RallyPhaseAct) -> &'static str {
    match act {
        RallyPhaseAct::Rally => "attempt a rally or lead one",
        RallyPhaseAct::Recovery => "attempt a Recovery",
        RallyPhaseAct::Repair => "attempt a repair",
        RallyPhaseAct::Transfer => "give or take a SW by Transfer",
    }
}
