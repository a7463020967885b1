//! How often the DEFENDER may fire at one moving unit in one Location (A8.3, A9.2): checked
//! once, when Defensive First Fire is declared (`attack::declare`), against the MF each moving
//! unit spent in the Location it stands in and the attacks already declared at it there
//! (`Game::location_mf`, written by `apply` alone from the movement events and from
//! `AttackDeclared`).
//!
//! - A DEFENDER unit or support weapon fires at a moving unit in one Location no more times
//!   than the MF that unit spent there, fractions dropped — but at least once in each hex it
//!   enters (A8.3 for every unit and weapon, A9.2 again for a MG, whose Multiple ROF would
//!   otherwise let it fire again at once). The MF spent entering the Location count, and so
//!   does every MF spent there without leaving it: a Recovery (A4.44), going on round the hex
//!   in Bypass (A4.3), an entry a concealed enemy stopped (A12.15). Entering another Location
//!   starts the count afresh.
//! - Each attack counts once for each unit firing its own FP and each weapon fired in it,
//!   whether the engine reads it on the IFT (fire at a "?" too, A7.23) or leaves it to the
//!   players, and whether it is First Fire, Subsequent First Fire or FPF. A
//!   leader named only to direct fires nothing of his own and is not held to it; Residual FP
//!   (A8.2) has no firer and is not an attack by any unit or weapon.
//! - What the refusal tells the DEFENDER — the mover, as his view names it (its alias under
//!   "?"), the MF it spent in the Location and how often he fired at it there — he has seen
//!   already: each MF a moving unit spends, under "?" or not, reaches him with the step
//!   (`MfAccount`), and the attacks were his own.
//!
//! Sources: [A9] (the eASLRB's A9 page: A9.2 opens the limit for a DEFENDER MG in the MPh),
//! [C1664R] (A9.2's sentence quoted whole: MF expended in that Location, fractions rounded
//! down, a minimum of once per hex), [LD] (A8.3's sentence quoted from the rulebook: the same
//! unit or weapon, this moving unit, this Location, this MPh; A9.2 says the same of a MG),
//! [C1664F] (a unit fires again at the same enemy unit only once it has spent another MF), named
//! in the rows of `docs/rules-coverage.md`.

use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Side, UnitId};
use board::terrain::Mf;
use game::Game;

/// The attacks a unit or weapon may make at a unit that spent `mf` in its Location: one for
/// each whole MF, and one at least (A8.3, A9.2).
pub(crate) fn attacks_allowed(mf: Mf) -> u8 {
    u8::try_from(mf.halves() / 2).unwrap_or(u8::MAX).max(1)
}

/// Refuses Defensive First Fire at `target` by a unit firing its own FP among `firers`, or by
/// one of `weapons`, that has fired at a unit of the moving stack there as often as that unit's
/// MF in the Location allow. `firers` are the units named (a leader, without FP of his own, is
/// passed over: `fire::fires_own_fp`), `weapons` the support weapons.
pub(crate) fn check(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    weapons: &[String],
    target: Hex,
) -> Result<(), RuleViolation> {
    let firing_units = super::own_fp_firers(game, firers);
    let shooters: Vec<(&String, bool)> = firing_units
        .map(|id| (id, false))
        .chain(weapons.iter().map(|w| (w, true)))
        .collect();
    for mover in crate::attack::moving_in(game, by, target) {
        let here = game.location_mf.get(&mover.id).filter(|l| l.hex == target);
        let mf = here.map(|l| l.mf).unwrap_or_default();
        let allowed = attacks_allowed(mf);
        for (shooter, is_weapon) in &shooters {
            let fired = here
                .and_then(|l| l.fired_on_by.get(*shooter))
                .copied()
                .unwrap_or(0);
            if fired < allowed {
                continue;
            }
            let mg = *is_weapon
                && game
                    .weapons
                    .get(*shooter)
                    .is_some_and(|w| crate::fire::usage::is_mg(&w.name));
            let (rule, name, what) = if mg {
                (
                    "A9.2",
                    Piece::Given((*shooter).clone()),
                    "a DEFENDER machine gun",
                )
            } else if *is_weapon {
                (
                    "A8.3",
                    Piece::Given((*shooter).clone()),
                    "a DEFENDER weapon",
                )
            } else {
                ("A8.3", Piece::unit(shooter), "a DEFENDER unit")
            };
            return Err(RuleViolation::with(
                rule,
                ViolationKind::UnitState,
                pieces![
                    name,
                    " has fired at ",
                    Piece::unit(&mover.id),
                    format!(
                        " in {target} {fired} time{} and it has spent {mf} MF there: {what} fires at a moving unit in one Location no more times than the MF it spends there (fractions dropped, once in each hex at least); it may fire at it again there when it has spent more MF",
                        if fired == 1 { "" } else { "s" }
                    )
                ],
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_attack_for_each_whole_mf_and_one_at_least() {
        assert_eq!(attacks_allowed(Mf(0)), 1);
        assert_eq!(attacks_allowed(Mf(1)), 1, "½ MF: once in the hex");
        assert_eq!(attacks_allowed(Mf::whole(1)), 1);
        assert_eq!(attacks_allowed(Mf(3)), 1, "1½ MF: fractions dropped");
        assert_eq!(attacks_allowed(Mf::whole(2)), 2);
        assert_eq!(attacks_allowed(Mf(7)), 3);
    }
}
