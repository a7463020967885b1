//! Who may fire a support weapon, and what it costs them (A9.11, A9.12): checked once, when
//! an attack is declared (`attack::declare`), for every attack whatever its phase.
//!
//! - A squad fires one SW MG and keeps its own FP; it may fire two SW MG, both at their full
//!   FP, but then forfeits its own inherent FP for the rest of the Player Turn (A9.11). It
//!   never fires more than two.
//! - A half-squad or crew fires one SW MG at full FP and forfeits its own inherent FP for the
//!   rest of the Player Turn (A9.11, A7.352).
//! - A forfeited unit's own FP is refused for the rest of the Player Turn, but for what A7.353
//!   keeps of it: Subsequent First Fire, FPF, and Final Fire at adjacent units, all at half FP.
//! - A single leader fires one SW MG as Area Fire; two SMC stacked together fire it at full
//!   FP (A9.12). What that costs him in leadership and Cowering is the resolution's
//!   (`fire::resolution`).
//!
//! A SW that is not an MG (an ATR, a FT …) is left where the paragraph leaves it: its fire by a
//! half-squad, crew or leader, or as one of two by a squad, is the players' (the resolution
//! says so). What "MG" is comes from the weapon's counter name (`LMG`, `MMG`, `HMG`, `MG`).
//!
//! Sources: the eASLRB's A9 page (A9.11, A9.12); a C# ASL referee ([LD] in the rules-coverage
//! Sources: a squad fires at most two SW and no inherent FP with two, a half-squad one; a
//! leader's MG fired alone is halved and with a stacked SMC partner is not); two players' pages
//! quoting A7.352 and A7.353 (a crew or half-squad that fires a SW loses its inherent FP until
//! the Player Turn ends, but keeps it halved for Subsequent First Fire, FPF and Final Fire at
//! adjacent units), named in the rows of `docs/rules-coverage.md`.

use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{UnitId, UnitKind};
use game::event::{Event, InherentFpForfeited};
use game::phase::Phase;
use game::Game;

/// Whether a weapon is a machine gun by its counter's name (A9.1): `LMG`, `MMG`, `HMG`, or a
/// plain `MG`.
pub(crate) fn is_mg(name: &str) -> bool {
    name.to_ascii_uppercase().contains("MG")
}

/// The checks of A9.11 and A9.12 on the SW of an attack about to be declared (its units' own
/// FP is `check_own_fp`'s): `units` are the units named among the firers, `weapons` the
/// support weapons (each possessed by a unit of the firing side, `attack::check_weapon`).
/// Returns the forfeits the attack declares (`InherentFpForfeited`), to follow its
/// `AttackDeclared`.
pub(crate) fn check(
    game: &Game,
    units: &[UnitId],
    weapons: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    let mut holders: Vec<&UnitId> = vec![];
    for id in weapons {
        if let Some(h) = game.weapons.get(id).and_then(|w| w.held_by.as_ref()) {
            if !holders.contains(&h) {
                holders.push(h);
            }
        }
    }
    let mut forfeits = vec![];
    for holder in holders {
        let Some(unit) = game.units.get(holder) else {
            continue;
        };
        let held_by = |w: &&game::Weapon| w.held_by.as_ref() == Some(holder);
        // The SW it fires in this attack, and those it fired already in this phase.
        let now: Vec<&game::Weapon> = weapons
            .iter()
            .filter_map(|id| game.weapons.get(id))
            .filter(held_by)
            .collect();
        let before: Vec<&game::Weapon> = game
            .weapons
            .values()
            .filter(held_by)
            .filter(|w| w.fired && !weapons.contains(&w.id))
            .collect();
        let all_mg = now.iter().chain(&before).all(|w| is_mg(&w.name));
        let count = now.len() + before.len();
        let names = || -> Vec<String> { now.iter().map(|w| w.id.clone()).collect() };
        let refuse = |rule: &str, why: String| {
            Err(RuleViolation::with(
                rule,
                ViolationKind::UnitState,
                pieces![Piece::unit(holder), why],
            ))
        };
        match unit.kind {
            UnitKind::Squad => {
                if count > 2 {
                    return refuse(
                        "A9.11",
                        format!(" would fire {count} SW in this phase: a squad fires at most two"),
                    );
                }
                if count == 2 && all_mg {
                    if units.contains(holder) || fired_own_fp(game, holder) {
                        return refuse(
                            "A9.11",
                            " fires two SW MG in this phase, and a squad firing two forfeits its own FP for it and the rest of the Player Turn: its own FP does not fire with them".to_string(),
                        );
                    }
                    if !game.inherent_fp_forfeited.contains(holder) {
                        forfeits.push(forfeit(holder, names()));
                    }
                }
            }
            UnitKind::HalfSquad | UnitKind::Crew if all_mg => {
                if count > 1 {
                    return refuse(
                        "A9.11",
                        format!(" would fire {count} SW MG in this phase: a half-squad or crew fires only one"),
                    );
                }
                if units.contains(holder) || fired_own_fp(game, holder) {
                    return refuse(
                        "A9.11",
                        " fires a SW MG in this phase, and a half-squad or crew that does forfeits its own FP for it and the rest of the Player Turn: its own FP does not fire with it".to_string(),
                    );
                }
                if !game.inherent_fp_forfeited.contains(holder) {
                    forfeits.push(forfeit(holder, names()));
                }
            }
            UnitKind::Leader => check_leader(game, units, unit, now.len())?,
            _ => {}
        }
    }
    Ok(forfeits)
}

/// Whether `unit` fired its own FP in this phase: named among the firers of an attack
/// declared in it (`Game::fire_record`, the ATTACKER's and the DEFENDER's alike), or, for the
/// DEFENDER, marked by a Fire counter of his fire in it (a unit firing only its SW carries
/// none, A8.1). A squad that did may not add a second SW MG, nor a half-squad or crew a first,
/// the forfeit reaching the phase it fires them in (A9.11). The ATTACKER's Prep Fire counter
/// goes on for SW fire alone too, so only the record tells for him.
pub(crate) fn fired_own_fp(game: &Game, unit: &str) -> bool {
    let phase = game.clock.phase();
    let recorded = game
        .fire_record
        .iter()
        .any(|a| a.phase == phase && a.firers.iter().any(|f| f == unit));
    recorded
        || match phase {
            Phase::Movement => game.first_fired.contains(unit) || game.final_fired.contains(unit),
            Phase::DefensiveFire => game.final_fired.contains(unit),
            _ => false,
        }
}

fn forfeit(unit: &UnitId, weapons: Vec<String>) -> Event {
    Event::InherentFpForfeited(InherentFpForfeited {
        unit: unit.clone(),
        weapons,
    })
}

/// A9.12: a leader fires one SW MG, alone or with one other SMC stacked with him; any other
/// leader named in the attack must be that SMC, in his Location.
fn check_leader(
    game: &Game,
    units: &[UnitId],
    leader: &game::Unit,
    weapons: usize,
) -> Result<(), RuleViolation> {
    let refuse = |why: Vec<Piece>| Err(RuleViolation::with("A9.12", ViolationKind::UnitState, why));
    if weapons > 1 {
        return refuse(pieces![
            Piece::unit(&leader.id),
            " would fire two SW at once: a leader fires only one SW MG"
        ]);
    }
    let others: Vec<&game::Unit> = units
        .iter()
        .filter(|id| **id != leader.id)
        .filter_map(|id| game.units.get(id))
        .filter(|u| matches!(u.kind, UnitKind::Leader | UnitKind::Hero))
        .collect();
    if let Some(away) = others.iter().find(|u| !game.same_location(u, leader)) {
        return refuse(pieces![
            Piece::unit(&away.id),
            " is not in ",
            Piece::unit(&leader.id),
            "'s Location: two SMC fire a SW MG together only when stacked together"
        ]);
    }
    if others.len() > 1 {
        return refuse(pieces![
            Piece::unit(&leader.id),
            "'s SW MG is fired by one leader, or by two SMC together: not by more"
        ]);
    }
    Ok(())
}

/// A unit that forfeited its inherent FP (A9.11) fires it no more this Player Turn, but for
/// what A7.353 keeps: at half FP, as Subsequent First Fire or FPF in the MPh, and as Final
/// Fire in the DFPh at a target adjacent or in its own hex. The halving is the resolution's
/// (Area Fire, `fire::resolution`), which leaves to the players the MPh's fire by a forfeited
/// unit with no Fire counter (its SW's fire marks only the SW, A8.1). Checked for each unit named
/// among the firers before its Fire counter is (`attack::declare`), as the more telling reason.
pub(crate) fn check_own_fp(game: &Game, id: &UnitId, target: Hex) -> Result<(), RuleViolation> {
    if !game.inherent_fp_forfeited.contains(id) {
        return Ok(());
    }
    let Some(unit) = game.units.get(id) else {
        return Ok(());
    };
    let near = game
        .scenario
        .geometry()
        .distance(unit.hex, target)
        .is_some_and(|d| d <= 1);
    let kept = match game.clock.phase() {
        Phase::Movement => true,
        Phase::DefensiveFire => near,
        _ => false,
    };
    if kept {
        return Ok(());
    }
    Err(RuleViolation::with(
        "A9.11",
        ViolationKind::UnitState,
        pieces![
            Piece::unit(id),
            " forfeited its own FP for the rest of this Player Turn by the SW it fired; it keeps half of it only as Subsequent First Fire or FPF in the MPh, or as Final Fire at adjacent units (A7.353)"
        ],
    ))
}
