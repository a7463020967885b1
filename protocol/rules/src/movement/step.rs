//! `Move`: one hex of movement — into an adjacent hex, out of Bypass into a hex at the vertex
//! the unit stands at, or into the obstacle of the hex it is bypassing (A4, A4.3).

use super::entry::{check_hex_modelled, check_leaving, enter_location, Act};
use super::movers;
use crate::violation::{RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Side, UnitId};
use board::terrain::{EntryCost, Mf};
use game::dice::DiceSource;
use game::event::{Event, MoveCost, WaLoss};
use game::event::{UnitMoved, WallAdvantageForfeited};
use game::{Bypass, Game, Unit};

pub(crate) fn decide(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    to: Hex,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    super::refuse_advance_phase(game, by, "moving")?;
    let units = movers(game, by, ids, "units move")?;
    check_leaving(game, &units)?;
    let from = units[0].hex;
    let cost = match &units[0].bypass {
        Some(bypass) if bypass.hex == to => enter_bypassed_obstacle(game, to)?,
        Some(bypass) => {
            leave_bypass(game, bypass, to)?;
            entry_cost(game, from, to)?
        }
        None => entry_cost(game, from, to)?,
    };
    let entry = enter_location(game, by, &units, ids, to, cost, Act::Move)?;
    if !entry.stopped() {
        let mut events = lose_wall_advantage(&units, from, to, WaLoss::Moved);
        events.push(Event::UnitMoved(UnitMoved {
            units: ids.to_vec(),
            from,
            to,
            cost: entry.cost,
            mf: entry.mf,
        }));
        if entry.residual {
            events.extend(crate::attack::residual_fp_attack(
                game, by, ids, to, &events, dice,
            )?);
        }
        return Ok(events);
    }
    // Concealed or hidden enemy units bar the way (A12.15).
    Ok(entry.blocked(&units, ids, from, to))
}

/// B9.41: WA goes the moment a unit starts entering a new Location — by a step, an advance, a
/// rout, or going below ground (a Manhole, a tunnel): one event, whichever command it is.
pub(crate) fn lose_wall_advantage(units: &[&Unit], from: Hex, to: Hex, why: WaLoss) -> Vec<Event> {
    let holders: Vec<UnitId> = units
        .iter()
        .filter(|u| u.wall_advantage)
        .map(|u| u.id.clone())
        .collect();
    if holders.is_empty() || from == to {
        return vec![];
    }
    vec![Event::WallAdvantageForfeited(WallAdvantageForfeited {
        units: holders,
        why,
    })]
}

/// From Bypass a unit goes on only into the hexes meeting at its vertex (A4.31 EX).
fn leave_bypass(game: &Game, bypass: &Bypass, to: Hex) -> Result<(), RuleViolation> {
    let exits = bypass.exits(game.scenario.geometry());
    if exits.contains(&to) {
        return Ok(());
    }
    Err(RuleViolation::new(
        "A4.31",
        ViolationKind::Geometry,
        format!(
            "in Bypass of {} the unit stands where {} and {} meet; it can enter only those, go on in Bypass, or enter the obstacle",
            bypass.hex, exits[0], exits[1]
        ),
    ))
}

/// A unit in Bypass that decides to occupy the obstacle pays its full in-hex cost (A4.3).
fn enter_bypassed_obstacle(game: &Game, hex: Hex) -> Result<MoveCost, RuleViolation> {
    let spec = &game.scenario.hexes[&hex];
    let (entry, rule) = spec
        .terrain
        .entry_cost(Some(game.scenario.month).filter(|m| *m > 0));
    let EntryCost::Mf(cot) = entry else {
        unreachable!("woods and buildings have a fixed COT");
    };
    Ok(MoveCost {
        cot,
        cot_rule: format!("{rule}, entering the obstacle from Bypass (A4.3)"),
        road: false,
        bypass_doubling: Mf::default(),
        elevation: Mf::default(),
        hexside: None,
        hexside_mf: Mf::default(),
        all_mf: false,
        total: cot,
    })
}

/// What entering `to` from the adjacent `from` costs Infantry (A4.1, B9.4, B10, B3).
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
    if from == to {
        return Err(RuleViolation::new(
            "A4",
            ViolationKind::Geometry,
            format!("the unit is in {to} already; name an adjacent hex to move into"),
        ));
    }
    let hexside = scenario.geometry().hexside(from, to).ok_or_else(|| {
        RuleViolation::new(
            "A4",
            ViolationKind::Geometry,
            format!("{to} is not adjacent to {from}; move one hex at a time"),
        )
    })?;
    check_hex_modelled(game, to)?;
    let side_spec = scenario.hexside_spec(hexside);
    if let Some(name) = side_spec.and_then(|s| s.unmodelled.as_ref()) {
        return Err(RuleViolation::new(
            "B1",
            ViolationKind::NotModelled,
            format!("the {hexside} hexside shows VASL's `{name}`, which the engine does not model; crossing it is not modelled"),
        ));
    }
    let road_hexside = side_spec.is_some_and(|s| s.road);
    // Along a road into a road hex the road rate applies whatever else is in the hex (B3).
    let road = road_hexside && from_spec.road.is_some() && to_spec.road.is_some();
    let (cot, cot_rule, all_mf) = if road {
        (Mf::whole(1), "B3".to_string(), false)
    } else {
        let (entry, rule) = to_spec
            .terrain
            .entry_cost(Some(scenario.month).filter(|m| *m > 0));
        match entry {
            EntryCost::Mf(mf) => (mf, rule.to_string(), false),
            EntryCost::AllMf => (Mf::default(), rule.to_string(), true),
        }
    };
    // Climbing doubles the COT (B10); the hexside cost is never doubled (B9.4).
    let elevation = if to_spec.elevation > from_spec.elevation {
        cot
    } else {
        Mf::default()
    };
    // A road through a gap in the wall/hedge crosses without the hexside cost (B9.4), and so
    // does movement through a Breach in bocage (B9.541).
    let breach = side_spec.is_some_and(|s| s.breach);
    let (hexside_feature, hexside_mf) = match scenario.hexside_feature(hexside) {
        Some(f) if !road_hexside && !breach => (Some(f), f.row().crossing_mf),
        _ => (None, Mf::default()),
    };
    Ok(MoveCost {
        cot,
        cot_rule,
        road,
        bypass_doubling: Mf::default(),
        elevation,
        hexside: hexside_feature,
        hexside_mf,
        all_mf,
        total: cot + elevation + hexside_mf,
    })
}
