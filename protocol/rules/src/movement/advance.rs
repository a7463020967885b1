//! `Advance`: the APh's one-Location move (A4.7). It is entering a Location, so it goes
//! through the one act (`entry::enter_location`, `Act::Advance`): terrain and fortifications
//! the engine does not model, vehicles. What the APh adds is here: who may advance, once per
//! unit per APh, into an adjacent hex only, and the Difficult Terrain test (A4.72) in place of
//! paying MF. A Location holding enemy units may be entered (A4.14 bars only the MPh); the
//! units then meet in the CCPh (A11.1).

use super::entry::{check_leaving, enter_location, Act};
use super::step::{entry_cost, lose_wall_advantage};
use super::{allotment, check_free, check_together, named_stack, StackAct};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use crate::{require_acting, require_phase};
use board::hex::Hex;
use board::scenario::{Side, UnitId, UnitKind};
use board::terrain::Mf;
use game::event::UnitAdvanced;
use game::event::{Event, MoveCost, WaLoss};
use game::phase::Phase;
use game::{Game, Unit};

/// The MF cost at or above which a hex is Difficult Terrain for every unit, whatever its
/// allotment (A4.72: four MF, or the unit's whole allotment if that is less).
pub(crate) const DIFFICULT_TERRAIN_MF: Mf = Mf::whole(4);

pub(crate) fn decide(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    to: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER advances in the APh")?;
    require_phase(game, Phase::Advance, "A4.7", "units advance")?;
    let units = advancers(game, by, ids)?;
    check_leaving(game, &units)?;
    let from = units[0].hex;
    let cost = entry_cost(game, from, to)?;
    let entry = enter_location(game, by, &units, ids, to, cost, Act::Advance)?;
    let cx = difficult_terrain(game, &units, ids, to, &entry.cost)?;
    let mut events = lose_wall_advantage(&units, from, to, WaLoss::Moved);
    events.push(Event::UnitAdvanced(UnitAdvanced {
        units: ids.to_vec(),
        from,
        to,
        cost: entry.cost,
        cx,
    }));
    Ok(events)
}

/// A withdrawal from Melee (A11.2) is into an ADJACENT Location the units could advance
/// into, so it is the one act of entering a Location (`Act::Withdraw`, which bars a Known
/// enemy's Location) with what the APh adds to it: an SMC's portage limit (A4.42) and the
/// Difficult Terrain test (A4.72), which makes the units CX or refuses the entry to a CX
/// one. Who may withdraw, and when, is Close Combat's to say (`rules::close_combat`).
/// Returns the units the entry makes CX and the WA they lose by leaving (B9.322).
pub(crate) fn withdrawal(
    game: &Game,
    by: Side,
    units: &[&Unit],
    to: Hex,
) -> Result<(Vec<UnitId>, Vec<Event>), RuleViolation> {
    check_leaving(game, units)?;
    let ids: Vec<UnitId> = units.iter().map(|u| u.id.clone()).collect();
    for unit in units {
        super::check_smc_load(game, unit, 0)?;
    }
    let from = units[0].hex;
    let cost = entry_cost(game, from, to)?;
    let entry = enter_location(game, by, units, &ids, to, cost, Act::Withdraw)?;
    let cx = difficult_terrain(game, units, &ids, to, &entry.cost)?;
    Ok((cx, lose_wall_advantage(units, from, to, WaLoss::Moved)))
}

/// The advancing units, checked in order: named once each, the side's own, each free to
/// advance (A4.7), all in one Location (they advance as a stack or alone).
fn advancers<'g>(game: &'g Game, by: Side, ids: &[UnitId]) -> Result<Vec<&'g Unit>, RuleViolation> {
    let units = named_stack(game, by, ids, StackAct::Advance)?;
    for unit in &units {
        check_may_advance(game, unit)?;
    }
    check_together(game, &units, StackAct::Advance)?;
    Ok(units)
}

/// A4.7: Infantry that is neither broken, pinned nor marked for Close Combat may advance, once
/// per APh. Hidden, berserk and below-ground units are the rules' own matters, refused as the
/// MPh refuses them.
fn check_may_advance(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    let refuse = |rule: &str, kind, why: Vec<Piece>| Err(RuleViolation::with(rule, kind, why));
    let id = &unit.id;
    if unit.kind == UnitKind::Counter {
        return refuse(
            "A4.7",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(id),
                " is not a unit the engine moves by the rules; advancing it is not modelled"
            ],
        );
    }
    check_free(game, unit, StackAct::Advance)?;
    if game.movement.advanced.contains(id) {
        return refuse(
            "A4.7",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " has advanced this APh already; a unit advances one Location per APh"
            ],
        );
    }
    super::check_smc_load(game, unit, 0)
}

/// A4.72: an advance into a hex whose MF cost is four or more, or all the MF the unit has
/// (its allotment without Double Time, less portage, a leader's bonus and IPC counted as in
/// the MPh, A4.12, A4.42), is into Difficult Terrain: a unit already CX may not make it, any
/// other becomes CX. A unit left with no MF once its portage is paid does not advance at all.
/// Returns the units that become CX.
fn difficult_terrain(
    game: &Game,
    units: &[&Unit],
    ids: &[UnitId],
    to: Hex,
    cost: &MoveCost,
) -> Result<Vec<UnitId>, RuleViolation> {
    let mut cx = vec![];
    for unit in units {
        // No road bonus: it is earned only by a whole MPh on the road (B3.4).
        let mf = allotment(game, unit, ids, false, 0);
        if mf.total == Mf::default() {
            return Err(RuleViolation::with(
                "A4.72",
                ViolationKind::NotEnoughMf,
                pieces![
                    Piece::unit(&unit.id),
                    format!(
                        " has no MF left once its portage is paid ({} less {} for portage); a unit without MF does not advance",
                        mf.base + mf.leader,
                        mf.portage
                    )
                ],
            ));
        }
        let threshold = DIFFICULT_TERRAIN_MF.min(mf.total);
        let difficult = cost.all_mf || cost.total >= threshold;
        if !difficult {
            continue;
        }
        if unit.cx {
            return Err(RuleViolation::with(
                "A4.72",
                ViolationKind::UnitState,
                pieces![
                    format!("entering {to} costs {} — Difficult Terrain for ", cost.describe()),
                    Piece::unit(&unit.id),
                    format!(
                        " (at least {threshold} MF, the lesser of four and its {} MF); it is CX already and may not advance there",
                        mf.total
                    )
                ],
            ));
        }
        cx.push(unit.id.clone());
    }
    Ok(cx)
}
