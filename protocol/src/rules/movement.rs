//! `Move`: one hex of Infantry movement in the MPh (A4), paid for from the terrain table.
//!
//! Each step is decided on its own and recorded with its cost broken down (COT, elevation,
//! hexside), so a replay shows why every MF went where it went.

use super::{own_unit, require_acting, require_phase};
use crate::event::{Event, MfAccount, MoveCost};
use crate::game::{Game, Unit};
use crate::hex::Hex;
use crate::phase::Phase;
use crate::scenario::{Morale, Side, UnitId, UnitKind};
use crate::terrain::{EntryCost, Mf};
use crate::violation::{RuleViolation, ViolationKind};
use std::collections::BTreeSet;

/// Most units one `Move` may carry: a full stack is far smaller (stacking limits, A5.1), this
/// only bounds the work one command can ask for.
pub const STACK_UNITS_MAX: usize = 12;

/// The MF a unit may spend this MPh if it moves now together with `movers` (A4.1, A4.12 as
/// summarised in the rules README): SMC 6; MMC 4, or 3 if Inexperienced, plus 2 while it has
/// moved with the same leader since its first step.
pub fn mf_allotment(game: &Game, unit: &Unit, movers: &[UnitId]) -> Mf {
    match unit.kind {
        UnitKind::Leader | UnitKind::Hero => Mf::whole(6),
        _ => {
            let base = if unit.inexperienced {
                Mf::whole(3)
            } else {
                Mf::whole(4)
            };
            let leader_now = movers
                .iter()
                .find(|id| game.units.get(*id).is_some_and(|u| u.kind.is_smc()));
            let led = match (unit.mf_spent == Mf::default(), leader_now) {
                (true, Some(_)) => unit.kind.is_mmc(),
                (false, Some(l)) => unit.led_by.as_ref() == Some(l),
                _ => false,
            };
            if led {
                base + Mf::whole(2)
            } else {
                base
            }
        }
    }
}

/// What entering `to` from `from` costs Infantry, before comparing with MF left.
pub fn entry_cost(game: &Game, from: Hex, to: Hex) -> Result<MoveCost, RuleViolation> {
    let scenario = &game.scenario;
    let to_spec = scenario.hexes.get(&to).ok_or_else(|| {
        RuleViolation::new(
            "A4",
            ViolationKind::Geometry,
            format!("{to} is not on this scenario's map"),
        )
    })?;
    let from_spec = &scenario.hexes[&from];
    let hexside = from.hexside(to).ok_or_else(|| {
        RuleViolation::new(
            "A4",
            ViolationKind::Geometry,
            format!("{to} is not adjacent to {from}; move one hex at a time"),
        )
    })?;
    let (entry, cot_rule) = to_spec
        .terrain
        .entry_cost(Some(scenario.month).filter(|m| *m > 0));
    let (cot, all_mf) = match entry {
        EntryCost::Mf(mf) => (mf, false),
        EntryCost::AllMf => (Mf::default(), true),
    };
    // Climbing doubles the COT (B10); the hexside cost is never doubled (B9.4).
    let elevation = if to_spec.elevation > from_spec.elevation {
        cot
    } else {
        Mf::default()
    };
    let side_spec = scenario.hexside_spec(hexside);
    let feature = scenario.hexside_feature(hexside);
    // A road through a gap in the wall/hedge crosses without the hexside cost (B9.4).
    let gap = side_spec.is_some_and(|s| s.road);
    let (hexside_feature, hexside_mf) = match feature {
        Some(f) if !gap => (Some(f), f.row().crossing_mf),
        _ => (None, Mf::default()),
    };
    Ok(MoveCost {
        cot,
        cot_rule: cot_rule.to_string(),
        elevation,
        hexside: hexside_feature,
        hexside_mf,
        all_mf,
        total: cot + elevation + hexside_mf,
    })
}

pub(super) fn decide(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    to: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER moves in the MPh")?;
    require_phase(game, Phase::Movement, "A4", "units move")?;
    if ids.is_empty() {
        return Err(RuleViolation::new(
            "A4",
            ViolationKind::UnknownUnit,
            "name at least one unit to move",
        ));
    }
    if ids.len() > STACK_UNITS_MAX {
        return Err(RuleViolation::new(
            "A4.2",
            ViolationKind::UnitState,
            format!("at most {STACK_UNITS_MAX} units move as one stack"),
        ));
    }
    let distinct: BTreeSet<&UnitId> = ids.iter().collect();
    if distinct.len() != ids.len() {
        return Err(RuleViolation::new(
            "A4.2",
            ViolationKind::UnitState,
            "a unit is named twice in the moving stack",
        ));
    }
    let units = ids
        .iter()
        .map(|id| own_unit(game, by, id))
        .collect::<Result<Vec<&Unit>, _>>()?;

    for unit in &units {
        check_may_move(game, unit)?;
    }
    let from = units[0].hex;
    if let Some(apart) = units.iter().find(|u| u.hex != from) {
        return Err(RuleViolation::new(
            "A4.2",
            ViolationKind::UnitState,
            format!(
                "`{}` is in {} and `{}` in {}; only units in one Location move as a stack",
                units[0].id, from, apart.id, apart.hex
            ),
        ));
    }
    check_one_stack_at_a_time(game, ids)?;

    let cost = entry_cost(game, from, to)?;
    let mut mf = Vec::with_capacity(units.len());
    for unit in &units {
        let allotment = mf_allotment(game, unit, ids);
        let left = allotment.saturating_sub(unit.mf_spent);
        let spent = if cost.all_mf {
            if unit.mf_spent != Mf::default() {
                return Err(RuleViolation::new(
                    &cost.cot_rule,
                    ViolationKind::NotEnoughMf,
                    format!(
                        "entering {to} takes `{}`'s whole MF allotment, and it has spent {} already",
                        unit.id, unit.mf_spent
                    ),
                ));
            }
            allotment
        } else {
            if cost.total > left {
                return Err(RuleViolation::new(
                    "A4.1",
                    ViolationKind::NotEnoughMf,
                    format!(
                        "entering {to} needs {} MF ({}); `{}` has {} left of {}",
                        cost.total,
                        describe(&cost),
                        unit.id,
                        left,
                        allotment
                    ),
                ));
            }
            unit.mf_spent + cost.total
        };
        mf.push(MfAccount {
            unit: unit.id.clone(),
            spent,
            left: allotment.saturating_sub(spent),
        });
    }
    Ok(vec![Event::UnitMoved {
        units: ids.to_vec(),
        from,
        to,
        cost,
        mf,
    }])
}

/// Unit-state checks (A4.1): only Good Order, unpinned Infantry of the ATTACKER move in the MPh.
fn check_may_move(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    let refuse = |rule: &str, kind, why: String| Err(RuleViolation::new(rule, kind, why));
    let id = &unit.id;
    match unit.kind {
        UnitKind::Vehicle => {
            return refuse(
                "D2",
                ViolationKind::NotModelled,
                format!("`{id}` is a vehicle; vehicle movement is not modelled by this engine"),
            )
        }
        _ if unit.hidden => {
            return refuse(
                "A12.3",
                ViolationKind::NotModelled,
                format!("`{id}` is hidden; revealing HIP units by movement is not modelled yet"),
            )
        }
        _ => {}
    }
    match unit.morale {
        Morale::Broken => {
            return refuse(
                "A4.1",
                ViolationKind::UnitState,
                format!(
                    "`{id}` is broken; broken units do not move in the MPh (they rout in the RtPh)"
                ),
            )
        }
        Morale::Berserk => {
            return refuse(
                "A15.4",
                ViolationKind::NotModelled,
                format!("`{id}` is berserk; berserk charges are not modelled"),
            )
        }
        Morale::GoodOrder => {}
    }
    if unit.pinned {
        return refuse(
            "A7.8",
            ViolationKind::UnitState,
            format!("`{id}` is pinned and cannot move this Player Turn"),
        );
    }
    if game.movement.finished.contains(id) {
        return refuse(
            "A4.2",
            ViolationKind::UnitState,
            format!("`{id}` moved, stopped, and another unit has moved since; it may move no farther this MPh"),
        );
    }
    if unit.mf_spent > Mf::default() && !game.movement.moving_stack.contains(id) {
        return refuse(
            "A4.2",
            ViolationKind::UnitState,
            format!("`{id}` has finished its move this MPh"),
        );
    }
    Ok(())
}

/// A4.2: a moving stack finishes before another unit moves; a stack may split, but a unit that
/// was not in it cannot join it on the way.
fn check_one_stack_at_a_time(game: &Game, ids: &[UnitId]) -> Result<(), RuleViolation> {
    let stack = &game.movement.moving_stack;
    let inside = ids.iter().filter(|id| stack.contains(*id)).count();
    if inside == 0 || inside == ids.len() {
        return Ok(());
    }
    let outsider = ids
        .iter()
        .find(|id| !stack.contains(*id))
        .expect("some are outside");
    Err(RuleViolation::new(
        "A4.2",
        ViolationKind::UnitState,
        format!(
            "`{outsider}` was not part of the stack that is moving ({}); it cannot join it mid-move",
            stack.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
    ))
}

/// "2 COT (B13) + 1 wall (B9.4)" — the breakdown shown in refusals and traces.
pub fn describe(cost: &MoveCost) -> String {
    if cost.all_mf {
        return format!("all MF ({})", cost.cot_rule);
    }
    let mut parts = vec![format!("{} COT ({})", cost.cot, cost.cot_rule)];
    if cost.elevation > Mf::default() {
        parts.push(format!("{} uphill (B10)", cost.elevation));
    }
    if let Some(feature) = cost.hexside {
        parts.push(format!(
            "{} {} ({})",
            cost.hexside_mf,
            feature.name(),
            feature.row().rule
        ));
    }
    parts.join(" + ")
}
