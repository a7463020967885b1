//! `PickUp` and `Drop`: possession of support weapons during the MPh (A4.4–A4.44), and
//! dropping it in the APh too (A4.43).
//!
//! Dropping is free (A4.43). Recovering an unpossessed weapon in the unit's Location costs
//! 1 MF (A4.44), and the weapon's PP count against the unit's IPC for the rest of the MPh
//! even if it is dropped again (A4.4). No weapon is portaged twice in one phase (A4.4), and an
//! SMC never carries more than two PP (A4.42).

use super::{allotment, movers};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use crate::{own_unit, require_acting, require_phase};
use board::scenario::{Side, UnitId, UnitKind};
use game::event::{Event, MfAccount};
use game::event::{WeaponDropped, WeaponPickedUp};
use game::phase::Phase;
use game::{Game, Unit, Weapon};

pub use game::event::RECOVERY_MF;

/// A vehicle has MP and its own capacity, not an Infantry unit's IPC and MF (A4.4 counts
/// Infantry portage); the engine does not model vehicles carrying SW, so a vehicle recovering
/// or dropping one is refused as not modelled, never played as a squad's recovery.
fn refuse_vehicle(unit: &Unit) -> Result<(), RuleViolation> {
    if unit.kind != UnitKind::Vehicle {
        return Ok(());
    }
    Err(RuleViolation::with(
        "A4.4",
        ViolationKind::NotModelled,
        pieces![
            Piece::unit(&unit.id),
            " is a vehicle; vehicles recovering, carrying or dropping support weapons is not modelled by this engine"
        ],
    ))
}

/// The weapon a pick-up or drop names, as `by` may know of it (`crate::known_weapon`): one a
/// unit hidden from him possesses is refused as a made-up id is (A12.3).
fn weapon<'g>(game: &'g Game, by: Side, id: &str) -> Result<&'g Weapon, RuleViolation> {
    crate::known_weapon(game, by, id).ok_or_else(|| {
        RuleViolation::with(
            "A4.43",
            ViolationKind::UnknownUnit,
            pieces![
                "there is no support weapon ",
                Piece::unit(id),
                " in this game"
            ],
        )
    })
}

pub(crate) fn decide_pick_up(
    game: &Game,
    by: Side,
    unit_id: &UnitId,
    weapon_id: &str,
) -> Result<Vec<Event>, RuleViolation> {
    let ids = std::slice::from_ref(unit_id);
    super::refuse_advance_phase(game, by, super::RECOVERING)?;
    let unit = movers(game, by, ids, "support weapons are recovered")?[0];
    refuse_vehicle(unit)?;
    let weapon = weapon(game, by, weapon_id)?;
    if let Some(holder) = &weapon.held_by {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(weapon_id),
                " is possessed by ",
                Piece::unit(holder),
                "; only an unpossessed weapon is recovered"
            ],
        ));
    }
    if weapon.hex != unit.hex || unit.bypass.is_some() {
        return Err(RuleViolation::with(
            "A4.44",
            ViolationKind::Geometry,
            pieces![
                Piece::unit(weapon_id),
                format!(" lies in {}, not in ", weapon.hex),
                Piece::unit(unit_id),
                "'s Location"
            ],
        ));
    }
    if weapon.portaged {
        return Err(RuleViolation::with(
            "A4.4",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(weapon_id),
                " has been portaged this phase already; no item is portaged twice in a phase"
            ],
        ));
    }
    super::check_smc_load(game, unit, weapon.pp)?;
    let allotment = allotment(game, unit, ids, false, weapon.pp);
    let left = allotment.total.saturating_sub(unit.mf_spent);
    if left < RECOVERY_MF {
        return Err(RuleViolation::with(
            "A4.44",
            ViolationKind::NotEnoughMf,
            pieces![
                "recovering ",
                Piece::unit(weapon_id),
                format!(" needs {RECOVERY_MF} MF; carrying its {} PP, ", weapon.pp),
                Piece::unit(unit_id),
                format!(" would have {left} left")
            ],
        ));
    }
    let spent = unit.mf_spent + RECOVERY_MF;
    super::check_assault_keeps_one(
        unit,
        &allotment,
        spent,
        pieces!["recovering ", Piece::unit(weapon_id)],
    )?;
    Ok(vec![Event::WeaponPickedUp(WeaponPickedUp {
        unit: unit_id.clone(),
        weapon: weapon_id.to_string(),
        mf: MfAccount {
            unit: unit_id.clone(),
            allotment,
            spent,
            left: allotment.total.saturating_sub(spent),
        },
    })])
}

/// Dropping needs no MF and is not a move, so A4.2's one-stack-at-a-time does not stop a unit
/// that has finished moving from putting its weapon down.
pub(crate) fn decide_drop(
    game: &Game,
    by: Side,
    unit_id: &UnitId,
    weapon_id: &str,
) -> Result<Vec<Event>, RuleViolation> {
    // A4.43: a unit may also drop a weapon at the start of a CCPh to withdraw from Melee
    // (A11.21), whichever side it is on: `close_combat::check_drop_to_withdraw` says whether
    // this one may, once the checks of every drop have passed.
    let withdrawing = game.clock.phase() == Phase::CloseCombat;
    // A4.43: possession is dropped free in the unit's MPh or APh; a broken unit about to rout
    // drops in its RtPh what it cannot carry (A10.5).
    let routing = game.clock.phase() == Phase::Rout;
    if !withdrawing {
        require_acting(
            game,
            by,
            "only the ATTACKER drops weapons in its MPh or APh",
        )?;
        if game.clock.phase() != Phase::Advance && !routing {
            require_phase(
                game,
                Phase::Movement,
                "A4.43",
                "support weapons are dropped (or in the APh, or at the start of the CCPh to withdraw from Melee)",
            )?;
        }
    }
    let unit = own_unit(game, by, unit_id)?;
    refuse_vehicle(unit)?;
    super::check_not_hidden(unit, "dropping a support weapon")?;
    let weapon = weapon(game, by, weapon_id)?;
    if weapon.held_by.as_ref() != Some(unit_id) {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(unit_id),
                " does not possess ",
                Piece::unit(weapon_id)
            ],
        ));
    }
    if routing {
        let held = super::held_pp(game, unit_id);
        if unit.morale != board::scenario::Morale::Broken || held <= super::unit_ipc(unit) {
            return Err(RuleViolation::with(
                "A10.5",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(unit_id),
                    format!(
                        " is not a broken unit holding more than its IPC ({held} PP, IPC {}); in the RtPh only such a unit drops a weapon, the one it cannot carry as it routs",
                        super::unit_ipc(unit)
                    )
                ],
            ));
        }
    } else if !unit.is_good_order() {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(unit_id),
                " is broken; only an unbroken unit drops possession"
            ],
        ));
    }
    if withdrawing {
        crate::close_combat::check_drop_to_withdraw(game, unit)?;
    }
    Ok(vec![Event::WeaponDropped(WeaponDropped {
        unit: unit_id.clone(),
        weapon: weapon_id.to_string(),
    })])
}
