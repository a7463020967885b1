//! `Move`: one hex of movement — into an adjacent hex, out of Bypass into a hex at the vertex
//! the unit stands at, or into the obstacle of the hex it is bypassing (A4, A4.3).

use super::{movers, pay, refuse_vehicles};
use crate::board::hex::Hex;
use crate::board::scenario::{Side, UnitId, UnitKind};
use crate::board::terrain::{EntryCost, HexsideFeature, Mf};
use crate::game::event::{Event, MoveCost, WaLoss};
use crate::game::{Bypass, Game, Unit};
use crate::rules::violation::{RuleViolation, ViolationKind};

pub(in crate::rules) fn decide(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    to: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    let units = movers(game, by, ids, "units move")?;
    crate::rules::fortification::check_move(game, &units, to)?;
    let from = units[0].hex;
    let cost = match &units[0].bypass {
        Some(bypass) if bypass.hex == to => enter_bypassed_obstacle(game, to)?,
        Some(bypass) => {
            leave_bypass(game, bypass, to)?;
            entry_cost(game, from, to)?
        }
        None => entry_cost(game, from, to)?,
    };
    refuse_vehicles(game, &units, cost.hexside == Some(HexsideFeature::Bocage))?;
    let cost = with_overstacking(game, by, &units, to, cost);
    let mf = pay(game, &units, ids, &cost, to)?;
    let mut events = lose_wall_advantage(&units, from, to, WaLoss::Moved);
    // Units in the sewer beneath are in a Location of their own (B8.2): they bar nothing.
    let lurking: Vec<&Unit> = game
        .units_above(to)
        .filter(|u| u.side != by && (u.concealed || u.hidden))
        .collect();
    if lurking.is_empty() {
        events.push(Event::UnitMoved {
            units: ids.to_vec(),
            from,
            to,
            cost,
            mf,
        });
        return Ok(events);
    }
    // Concealed or hidden enemy units bar the way: real ones are revealed, dummies removed,
    // and the movers stay where they were, their MF spent (A12.15). Their WA went when they
    // started to leave (B9.41).
    let mut events = lose_wall_advantage(&units, from, to, WaLoss::ExitFailed);
    let (dummies, real): (Vec<&Unit>, Vec<&Unit>) =
        lurking.into_iter().partition(|u| u.kind == UnitKind::Dummy);
    events.push(Event::UnitEntryBlocked {
        units: ids.to_vec(),
        from,
        to,
        revealed: real
            .into_iter()
            .map(|u| {
                let mut shown = u.clone();
                shown.concealed = false;
                shown.hidden = false;
                shown
            })
            .collect(),
        dummies_removed: dummies.into_iter().map(|u| u.id.clone()).collect(),
        cost,
        mf,
    });
    Ok(events)
}

/// A5.11: entering a Location its side overstacks with Personnel — even only by the movers'
/// own entry — costs one MF more per squad equivalent (FRU) beyond the limit. The movers
/// enter its ground level; units of the side on an upper level stack there, not here (A5.1).
/// The extra MF is part of the hex's entry cost, and its rule says so.
fn with_overstacking(
    game: &Game,
    by: Side,
    movers: &[&Unit],
    to: Hex,
    mut cost: MoveCost,
) -> MoveCost {
    use crate::board::scenario::Stack;
    let mut stack = Stack::default();
    let base = game
        .scenario
        .hexes
        .get(&to)
        .map_or(0, |h| i16::from(h.elevation) * 2);
    // A unit's level is the scenario's while it stays in its setup hex (`rules::los`).
    let upper = |u: &Unit| {
        game.scenario
            .units
            .get(&u.id)
            .is_some_and(|s| s.hex == u.hex && s.level.is_some_and(|l| l != base))
    };
    game.units_above(to)
        .filter(|u| u.side == by && !u.eliminated && u.bypass.is_none() && !upper(u))
        .filter(|u| !movers.iter().any(|m| m.id == u.id))
        .chain(movers.iter().copied())
        .for_each(|u| stack.add(u.kind));
    let over = stack.squads_over();
    if over > 0 && !cost.all_mf {
        let extra = Mf::whole(over);
        cost.cot += extra;
        cost.total += extra;
        cost.cot_rule = format!(
            "{}, +{over} MF into a Location overstacked by {over} squad equivalent(s) (A5.11)",
            cost.cot_rule
        );
    }
    cost
}

/// B9.41: WA goes the moment a unit starts entering a new Location.
pub(super) fn lose_wall_advantage(units: &[&Unit], from: Hex, to: Hex, why: WaLoss) -> Vec<Event> {
    let holders: Vec<UnitId> = units
        .iter()
        .filter(|u| u.wall_advantage)
        .map(|u| u.id.clone())
        .collect();
    if holders.is_empty() || from == to {
        return vec![];
    }
    vec![Event::WallAdvantageForfeited {
        units: holders,
        why,
    }]
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
    if to_spec.rubble || to_spec.blaze {
        let (rule, what) = if to_spec.rubble {
            ("B24", "rubble")
        } else {
            ("B25", "a Blaze")
        };
        return Err(RuleViolation::new(
            rule,
            ViolationKind::NotModelled,
            format!("{to} holds {what}; movement into it is not modelled by this engine"),
        ));
    }
    if let Some(name) = &to_spec.unmodelled {
        return Err(RuleViolation::new(
            "B1",
            ViolationKind::NotModelled,
            format!("{to}'s board shows VASL's `{name}`, a terrain the engine's terrain chart has no row for; entering it is not modelled"),
        ));
    }
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
