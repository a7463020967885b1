//! `Done`: the acting side has finished the current step; the clock moves on (A3).

use super::require_acting;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use crate::Ahead;
use board::scenario::Side;
use game::event::Event;
use game::event::{GameEnded, StepEnded};
use game::phase::Phase;
use game::Game;

/// The step's end, with the decision's look-ahead (`crate::Ahead`, keeping the positions along
/// it when `keep`): the steps that then pass by themselves are judged on the very position it
/// reached, so each event is applied once.
pub(super) fn decide(
    game: &Game,
    by: Side,
    dice: &mut dyn game::dice::DiceSource,
    keep: bool,
) -> Result<Ahead, RuleViolation> {
    require_acting(game, by, "only the side whose step it is can end it")?;
    if game.clock.phase() == Phase::Movement {
        // A unit may not end its MPh in Bypass by choice (A4.32): while it can still go on it
        // must enter the obstacle or move on first. One broken or pinned there, or with no MF
        // to go on, stays in the open part until the MPh ends, and the MPh ends (A4.32, A4.33).
        if let Some(unit) = game.units.values().find(|u| {
            u.side == by && u.bypass.is_some() && super::movement::way_on_from_bypass(game, u)
        }) {
            let hex = unit.bypass.as_ref().map(|b| b.hex).expect("in Bypass");
            return Err(RuleViolation::with(
                "A4.32",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&unit.id),
                    format!(
                        " is in Bypass of {hex}; enter the obstacle or move on before the MPh ends"
                    )
                ],
            ));
        }
    }
    if game.clock.phase() == Phase::CloseCombat {
        if let Some(hex) = super::close_combat::unsettled(game) {
            return Err(super::close_combat::refuse_end(game, hex));
        }
    }
    if let Some(a) = &game.attack {
        return Err(RuleViolation::new(
            "A3",
            ViolationKind::WrongPhase,
            format!(
                "the attack declared on {} must be resolved before the step ends",
                a.target
            ),
        ));
    }
    // What the end of a phase brings: the loss of "?" Bypass owes (A4.33) and the Sewer
    // Emergence dr after the MPh (B8.42); units in
    // a tunnel must be out by the end of the APh (B8.61).
    let ended = game.clock;
    let mut ahead = Ahead::new(game, keep);
    let events = match game.clock.phase() {
        Phase::Movement => {
            // A4.33: the "?" of enemy units in a Location gone round in Bypass goes as the
            // MPh ends, before what comes after it (B8.42's dr).
            let mut events: Vec<Event> = super::concealment::lost_by_bypass(game)
                .into_iter()
                .collect();
            events.extend(super::sewer::end_of_movement(game, by, dice)?);
            events
        }
        Phase::Advance => {
            super::sewer::end_of_advance(game, by)?;
            // Hidden units in a Location the enemy advanced into go under "?" for the CC; then
            // the Dummies in CC are removed (A11.19); then the Ambush checks the advances call
            // for (A11.4), before any CC is designated. Each is judged on the position the
            // ones before it reached.
            for event in super::close_combat::hidden_in_close_combat(ahead.game()) {
                ahead.push(event);
            }
            for event in super::close_combat::dummies_in_close_combat(ahead.game()) {
                ahead.push(event);
            }
            super::close_combat::ambush_checks(ahead.game(), dice)?
        }
        // A broken unit that must rout does so before its side's step ends, or fails to (A10.5).
        Phase::Rout => super::movement::end_of_rout_step(game, by)?,
        _ => vec![],
    };
    for event in events {
        ahead.push(event);
    }
    let Some(next) = ended.next(game.scenario.turns) else {
        ahead.push(Event::GameEnded(GameEnded {
            turns_played: game.scenario.turns,
        }));
        return Ok(ahead);
    };
    ahead.push(Event::StepEnded(StepEnded { by, ended, next }));
    // A step the side to act could do nothing in passes by itself (`passing`): the end-of-RPh
    // WA steps (B9.322) and the RtPh steps (A10.5).
    super::passing::pass_on(&mut ahead);
    Ok(ahead)
}
