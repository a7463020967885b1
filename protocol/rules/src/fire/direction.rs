//! How often a leader directs fire (A7.53, A9.12): checked once, when an attack is declared
//! (`attack::declare`), against what the Player Turn's attacks recorded (`Game::fire_record`,
//! written by `AttackDeclared` alone).
//!
//! - A leader directs one unit or one Fire Group in a fire phase (A7.53). A leader named among
//!   the firers directs them (A7.531: he adds no FP of his own), so being named in a second
//!   attack of the phase is a second direction, refused.
//! - The same fire again is not a second direction: a MG he directed that kept its Multiple
//!   ROF (A9.2) he directs as often as it fires, even when other units fired with it before;
//!   and the DEFENDER's leader who directed Defensive First Fire directs again, as Subsequent
//!   First Fire, FPF or Final Fire in the DFPh, those he directed then and no others (A7.53).
//!   The MPh and the DFPh are one span for him; the ATTACKER's PFPh and AFPh are apart (a
//!   leader who fired in the PFPh fires no more, A7.1).
//! - A leader who fires a SW (A9.12) exerts no leadership in that phase: he directs no other
//!   fire in it, nor fires a SW after directing other fire.
//!
//! Sources: [A7P] (A7.53: one unit or weapon a phase unless part of the same Fire Group; a MG
//! directed as often as it fires; First Fire's direction carried to SFF, FPF and Final Fire for
//! the same firers only), [FG] (A7.531 quoted: a leader modifies the IFT DR of one attacking
//! unit or Fire Group, and a leader directing fire counts as firing), [A9] (A9.12: no
//! leadership DRM in the fire phase a leader fires a SW; A9.2: a MG keeping its ROF fires again
//! that phase, alone or in a Fire Group), named in the rows of `docs/rules-coverage.md`.

use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::{UnitId, UnitKind};
use game::phase::Phase;
use game::{FiredAttack, Game};

/// The checks of A7.53 and A9.12 on the leaders taking part in an attack about to be declared:
/// `firers` are the units named among the firers, `weapons` the support weapons. A leader
/// takes part when named among the firers, or when he possesses one of the weapons. Returns the
/// leaders named who direct again the MG they directed before in this phase (A9.2): their Fire
/// counter stands for that direction and does not stop it (`attack::declare`).
pub(crate) fn check(
    game: &Game,
    firers: &[UnitId],
    weapons: &[String],
) -> Result<Vec<UnitId>, RuleViolation> {
    let phase = game.clock.phase();
    // The DEFENDER's direction in Defensive First Fire carries into the DFPh (A7.53).
    let in_span = |a: &&FiredAttack| {
        a.phase == phase || (phase == Phase::DefensiveFire && a.phase == Phase::Movement)
    };
    let holder = |w: &String| game.weapons.get(w).and_then(|w| w.held_by.as_ref());
    let is_leader = |id: &UnitId| {
        game.units
            .get(id)
            .is_some_and(|u| u.kind == UnitKind::Leader)
    };
    let mut leaders: Vec<&UnitId> = vec![];
    for id in firers.iter().chain(weapons.iter().filter_map(holder)) {
        if is_leader(id) && !leaders.contains(&id) {
            leaders.push(id);
        }
    }
    let mut again = vec![];
    for leader in leaders {
        let takes_part = |a: &&FiredAttack| {
            a.firers.contains(leader) || a.weapons.iter().any(|w| holder(w) == Some(leader))
        };
        let Some(first) = game.fire_record.iter().filter(in_span).find(takes_part) else {
            continue;
        };
        let fired_sw = first.weapons.iter().any(|w| holder(w) == Some(leader));
        let new_unit = firers
            .iter()
            .find(|id| *id != leader && !first.firers.contains(id))
            .map(|id| Piece::unit(id));
        let new_weapon = weapons
            .iter()
            .find(|w| !first.weapons.contains(w))
            .map(|w| Piece::Given(w.clone()));
        if let Some(new) = new_unit.or(new_weapon) {
            let (rule, why) = if fired_sw {
                (
                    "A9.12",
                    " fired a SW in this phase already: a leader who fires a SW exerts no leadership in that phase, so he directs no other fire in it",
                )
            } else {
                (
                    "A7.53",
                    " directed fire in this phase already: a leader directs one unit or Fire Group a phase, and again only the same fire (his MG on its Multiple ROF; those he directed in Defensive First Fire, as SFF, FPF or Final Fire)",
                )
            };
            return Err(RuleViolation::with(
                rule,
                ViolationKind::UnitState,
                pieces![Piece::unit(leader), why, "; ", new, " was not in that fire"],
            ));
        }
        let others_fire = firers.iter().any(|id| !is_leader(id));
        if firers.contains(leader) && !weapons.is_empty() && !others_fire {
            again.push(leader.clone());
        }
    }
    Ok(again)
}
