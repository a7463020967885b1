//! `PlaceHidden`: a HIP unit's owner puts it on board, concealed, at a time of his choosing
//! (A12.3). Losing HIP is one of the moments WA may be claimed (B9.322), so the same command
//! may claim it.

use super::{own_unit, wall_advantage};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::{Side, UnitId};
use game::event::Event;
use game::event::HiddenUnitPlaced;
use game::Game;

pub(super) fn decide(
    game: &Game,
    by: Side,
    id: &UnitId,
    claim_wa: bool,
) -> Result<Vec<Event>, RuleViolation> {
    let unit = own_unit(game, by, id)?;
    if !unit.hidden {
        return Err(RuleViolation::with(
            "A12.3",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " is not hidden"],
        ));
    }
    let mut events = vec![placed(game, unit)];
    let mut after = game.clone();
    game::apply(&mut after, &events[0]);
    if claim_wa {
        let claimed = wall_advantage::claim_on_placement(&after, id)?;
        for event in &claimed {
            game::apply(&mut after, event);
        }
        events.extend(claimed);
    }
    // Placed in the moment an enemy attempts to claim WA (B9.324): that claim goes on now.
    if let Some(window) = game.wa_hip_window.as_ref().filter(|w| w.side == by) {
        events.extend(wall_advantage::after_hip_window(&after, window));
    }
    Ok(events)
}

/// A hidden unit placed on board under "?" (A12.3), with the weapons it possesses: the one
/// event of it, whether its owner places it (`PlaceHidden`) or the CCPh's start does, an enemy
/// unit standing in its Location (`close_combat::hidden_in_close_combat`).
pub(crate) fn placed(game: &Game, unit: &game::Unit) -> Event {
    let mut placed = unit.clone();
    placed.hidden = false;
    placed.concealed = true;
    let weapons = game
        .weapons
        .values()
        .filter(|w| w.held_by.as_ref() == Some(&unit.id))
        .cloned()
        .collect();
    Event::HiddenUnitPlaced(HiddenUnitPlaced {
        unit: Box::new(placed),
        weapons,
    })
}
