//! Close Combat (A11), as far as the engine rules on it: which Locations are in CC at the CCPh
//! (units of both sides in one Location, A11.1), and that the CCPh does not end while one of
//! them is unsettled. The CC Table, odds, DRM, Ambush and Casualty Reduction are not computed:
//! the players roll through the dice commitment (`roll DR CC`) and enter the results with
//! `adjudicate`, which the opponent may dispute. A Location still holding both sides after its
//! CC is recorded as Melee (`melee HEX`, A11.7), to be fought again in the next CCPh.
//!
//! Hidden units take no part in deciding which Locations are in CC: a refusal that counted them
//! would tell the ATTACKER where they are. Instead, as the APh ends, a hidden unit sharing its
//! Location with an enemy unit is placed under "?" (`hidden_in_close_combat`), and from then on
//! counts as any concealed unit does.

pub mod table;

use super::{require_acting, require_phase};
use crate::board::hex::Hex;
use crate::board::scenario::Side;
use crate::game::event::Event;
use crate::game::phase::Phase;
use crate::game::{Game, Unit};
use crate::rules::violation::{RuleViolation, ViolationKind};
use std::collections::BTreeSet;

/// The hexes with a Location where units of both sides are, as both sides' views show them
/// (hidden units left out), in hex order.
pub fn locations(game: &Game) -> Vec<Hex> {
    let present: Vec<&Unit> = game
        .units
        .values()
        .filter(|u| !u.eliminated && !u.hidden && u.underground.is_none())
        .collect();
    let mut hexes = BTreeSet::new();
    for a in &present {
        if present
            .iter()
            .any(|b| b.side != a.side && game.same_location(a, b))
        {
            hexes.insert(a.hex);
        }
    }
    hexes.into_iter().collect()
}

/// At the start of the CCPh a hidden unit in a Location where an enemy unit stands is placed
/// on board under "?" (the CCPh's first step as asl-assist.net's phase helper lists it), so
/// its Location is in CC like any other (`HiddenUnitPlaced`, as when its owner places it,
/// A12.3). Decided as the APh ends, so the CCPh starts with it.
pub(super) fn hidden_in_close_combat(game: &Game) -> Vec<Event> {
    let above = |u: &&Unit| !u.eliminated && u.underground.is_none();
    game.units
        .values()
        .filter(above)
        .filter(|h| h.hidden)
        .filter(|h| {
            game.units
                .values()
                .filter(above)
                .any(|e| e.side != h.side && !e.hidden && game.same_location(h, e))
        })
        .map(|h| {
            let mut placed = h.clone();
            placed.hidden = false;
            placed.concealed = true;
            Event::HiddenUnitPlaced {
                weapons: game
                    .weapons
                    .values()
                    .filter(|w| w.held_by.as_ref() == Some(&h.id))
                    .cloned()
                    .collect(),
                unit: Box::new(placed),
            }
        })
        .collect()
}

/// The first Location in CC whose combat has not been settled this CCPh.
pub(super) fn unsettled(game: &Game) -> Option<Hex> {
    locations(game)
        .into_iter()
        .find(|h| !game.movement.melee.contains(h))
}

/// The refusal of ending the CCPh while `hex` is unsettled (A11.1, A11.7).
pub(super) fn refuse_end(hex: Hex) -> RuleViolation {
    RuleViolation::new(
        "A11",
        ViolationKind::UnitState,
        format!(
            "units of both sides share {hex}: resolve its Close Combat (`roll DR CC`, then `adjudicate` the results) and, if both sides remain, record the Melee (`melee {hex}`) before the CCPh ends"
        ),
    )
}

/// `Melee`: the ATTACKER, who orders the CC Locations (A11.12), records that the CC in `hex`
/// is over with units of both sides still there: they are in Melee (A11.7).
pub(super) fn decide_melee(game: &Game, by: Side, hex: Hex) -> Result<Vec<Event>, RuleViolation> {
    require_acting(
        game,
        by,
        "the ATTACKER orders the Close Combats of the CCPh (A11.12)",
    )?;
    require_phase(game, Phase::CloseCombat, "A11.7", "Melee is recorded")?;
    if !game.scenario.hexes.contains_key(&hex) {
        return Err(RuleViolation::new(
            "A11",
            ViolationKind::Geometry,
            format!("{hex} is not on this scenario's map"),
        ));
    }
    if !locations(game).contains(&hex) {
        return Err(RuleViolation::new(
            "A11.1",
            ViolationKind::UnitState,
            format!("{hex} holds no units of both sides in one Location; there is no Close Combat there"),
        ));
    }
    if game.movement.melee.contains(&hex) {
        return Err(RuleViolation::new(
            "A11.7",
            ViolationKind::UnitState,
            format!("the Melee in {hex} is recorded already this CCPh"),
        ));
    }
    Ok(vec![Event::MeleeRecorded { hex }])
}
