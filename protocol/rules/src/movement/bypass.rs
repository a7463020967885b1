//! `Bypass`: moving around the woods/building obstacle of a hex along its hexsides instead of
//! entering it (A4.3, A4.31).
//!
//! The cost is that of the other terrain in the Location — Open Ground here, doubled when the
//! hex is higher — plus any wall/hedge crossed to get in. Past two contiguous hexsides in one
//! hex the Bypass cost of that hex doubles. The unit ends at a vertex and may leave only into
//! the hexes that meet there (`Bypass::exits`).

use super::entry::{enter_location, Act};
use super::{movers, pay, refuse_vehicles, Allowance};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind, Words};
use board::hex::Hex;
use board::scenario::{Side, UnitId};
use board::terrain::{Fortification, HexsideFeature, Mf, Terrain};
use game::dice::DiceSource;
use game::event::{Event, MoveCost, WaLoss};
use game::event::{FireEffectLeftToPlayers, UnitBypassed};
use game::Game;

/// Six hexsides ring a hex; a Bypass can go at most five of them round before it is back
/// where it started.
const HEXSIDES_PER_BYPASS_MAX: usize = 5;

/// A refusal whose words may name units: they go as typed pieces, each rendered for its reader.
fn refuse(rule: &str, kind: ViolationKind, why: impl Words) -> RuleViolation {
    RuleViolation::with(rule, kind, why)
}

pub(crate) fn decide(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    hex: Hex,
    along: &[Hex],
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let (mut events, residual) = decide_step(game, by, ids, hex, along)?;
    // A4.32: Infantry may not end its MPh in Bypass by choice, so a Bypass that leaves a unit
    // no MF to go on from its vertex (into the obstacle, or a hex there) is refused.
    let mut after = game.clone();
    for e in &events {
        game::apply(&mut after, e);
    }
    for id in ids {
        if let Some(unit) = after.units.get(id) {
            if !super::way_on_from_bypass(&after, unit) {
                return Err(refuse(
                    "A4.32",
                    ViolationKind::NotEnoughMf,
                    pieces![format!("that Bypass of {hex} would leave "), Piece::unit(id), " without the MF to enter the obstacle or leave its vertex; Infantry may not end its MPh in Bypass"],
                ));
            }
        }
    }
    // A8.2: the enemy's Residual FP in the hex attacks the units Bypassing into it, as it
    // attacks every entry (`attack::residual_fp_attack`, the one attack of Residual FP). It
    // comes after the A4.32 look-ahead: a unit it breaks or pins there is stranded in Bypass
    // (A4.32, A4.33), not refused its Bypass.
    if residual {
        events.extend(crate::attack::residual_fp_attack(
            game, by, ids, hex, &events, dice,
        )?);
    }
    // A8.1, A8.2: going on round a hex the units already Bypass in enters no new Location, but
    // it spends MF in the one they are in, where the enemy's Residual FP lies. Whether that
    // Residual FP attacks them again for it is not in the sources at hand (they speak only of
    // units entering its Location), so the engine does not roll it and does not skip it
    // silently either: the players are asked, both sides seeing the question.
    let going_on = ids
        .first()
        .and_then(|id| game.units.get(id))
        .is_some_and(|u| u.bypass.as_ref().is_some_and(|b| b.hex == hex));
    // A hexside more that costs nothing (A4.31: the hex's Bypass cost is paid once, doubled
    // only past two contiguous hexsides) spends no MF there, so there is nothing to ask.
    let spends = events
        .iter()
        .any(|e| matches!(e, Event::UnitBypassed(b) if b.cost.total > Mf::default()));
    let going_on = going_on && spends;
    if let Some(left) = game
        .residual_fp
        .get(&hex)
        .filter(|r| r.by != by && going_on)
    {
        let fp = left.fp.map_or_else(
            || "as the players determined it".to_string(),
            |fp| format!("of {fp}"),
        );
        let names = crate::listed(ids);
        events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
            target: hex,
            unit: None,
            rule: "A8.2".into(),
            why: format!(
                "going on in Bypass of {hex}, {names} spent MF in the Location where the Residual FP {fp} lies without entering it anew; whether it attacks them again for that is not ruled by the engine"
            ),
        }));
    }
    Ok(events)
}

/// One more hexside of the Bypass `bypass` the units are in, onward from their vertex to the
/// hexside `across` names — without the A4.32 look-ahead, which uses it.
pub(super) fn continue_one(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    bypass: &game::Bypass,
    across: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    decide_step(game, by, ids, bypass.hex, &[across]).map(|(events, _)| events)
}

/// One Bypass command's movement, checked and paid; with whether the enemy's Residual FP in
/// the hex is to attack the units (an entry into the hex, not going on round it, A8.2).
fn decide_step(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    hex: Hex,
    along: &[Hex],
) -> Result<(Vec<Event>, bool), RuleViolation> {
    super::refuse_advance_phase(game, by, "moving in Bypass")?;
    let units = movers(game, by, ids, "units move in Bypass")?;
    let wire = |h: Hex| {
        game.scenario
            .hexes
            .get(&h)
            .is_some_and(|s| s.fortifications.contains(&Fortification::Wire))
    };
    if wire(hex) {
        return Err(refuse(
            "A4.3",
            ViolationKind::Terrain,
            format!("{hex} holds Wire; a hex with Wire cannot be Bypassed"),
        ));
    }
    super::check_leaving(game, &units)?;
    crate::fortification::check_enter(game, hex)?;
    let position = units[0];
    let continuing = position.bypass.as_ref().filter(|b| b.hex == hex);
    let from = if continuing.is_some() {
        hex
    } else {
        position.hex
    };

    // Geometry: where the units are, and a chain of hexsides of `hex` running on from there.
    let spec = game.scenario.hexes.get(&hex).ok_or_else(|| {
        refuse(
            "A4.3",
            ViolationKind::Geometry,
            format!("{hex} is not on this scenario's map"),
        )
    })?;
    if along.is_empty() || along.len() > HEXSIDES_PER_BYPASS_MAX {
        return Err(refuse(
            "A4.31",
            ViolationKind::Geometry,
            format!("a Bypass goes along 1 to {HEXSIDES_PER_BYPASS_MAX} hexsides of {hex}"),
        ));
    }
    let chain_start: Vec<Hex> = match (continuing, &position.bypass) {
        (Some(b), _) => {
            // Going on round the same hex: from the vertex it stands at, onward.
            let before = if b.along.len() == 1 {
                b.entered_from
            } else {
                b.along[b.along.len() - 2]
            };
            vec![before, *b.along.last().expect("non-empty")]
        }
        (None, Some(b)) => {
            // From Bypass of another hex into this one: only across a hexside at the vertex.
            if !b.exits(game.scenario.geometry()).contains(&hex) {
                return Err(refuse(
                    "A4.31",
                    ViolationKind::Geometry,
                    format!(
                        "in Bypass of {} the unit stands where {} and {} meet; it cannot enter {hex} from there",
                        b.hex,
                        b.exits(game.scenario.geometry())[0],
                        b.exits(game.scenario.geometry())[1]
                    ),
                ));
            }
            // It stands at the vertex of b.hex and both exits: its Bypass of `hex` starts
            // there, along the hexside `hex` shares with the other exit, not at the far vertex.
            let other = b
                .exits(game.scenario.geometry())
                .into_iter()
                .find(|e| *e != hex)
                .unwrap_or(hex);
            if along.first() != Some(&other) {
                return Err(refuse(
                    "A4.31",
                    ViolationKind::Geometry,
                    format!(
                        "in Bypass of {} the unit stands where {}, {} and {} meet; a Bypass of {hex} from there starts along {hex}-{other}",
                        b.hex,
                        b.hex,
                        b.exits(game.scenario.geometry())[0],
                        b.exits(game.scenario.geometry())[1]
                    ),
                ));
            }
            vec![b.hex]
        }
        (None, None) => {
            if from == hex {
                return Err(refuse(
                    "A4.3",
                    ViolationKind::Geometry,
                    format!("the unit is in {hex} already; Bypass enters an adjacent hex"),
                ));
            }
            if !game.scenario.geometry().is_adjacent(from, hex) {
                return Err(refuse(
                    "A4.3",
                    ViolationKind::Geometry,
                    format!("{hex} is not adjacent to {from}"),
                ));
            }
            vec![from]
        }
    };
    let chain: Vec<Hex> = chain_start.iter().chain(along).copied().collect();
    for (i, next) in chain.iter().enumerate().skip(1) {
        let previous = chain[i - 1];
        let turns_back = i >= 2 && chain[i - 2] == *next;
        let geometry = game.scenario.geometry();
        if !geometry.is_adjacent(hex, *next) || !geometry.is_adjacent(previous, *next) || turns_back
        {
            return Err(refuse(
                "A4.31",
                ViolationKind::Geometry,
                format!(
                    "{hex}-{next} does not carry on from {hex}-{previous}; name the hexsides of {hex} in the order the unit passes them"
                ),
            ));
        }
    }

    // Terrain: only woods/building obstacles, not one that holds a Known enemy unit, and only
    // along hexsides the obstacle (or a wall/hedge touching it) leaves clear (A4.3, A4.31).
    if !spec.terrain.row().bypassable_obstacle {
        return Err(refuse(
            "A4.3",
            ViolationKind::Terrain,
            format!(
                "Bypass goes only around woods or a building; {hex} is {}",
                spec.terrain.name()
            ),
        ));
    }
    if spec.rubble || spec.blaze {
        return Err(refuse(
            "A4.3",
            ViolationKind::Terrain,
            format!(
                "{hex} holds {}; it cannot be Bypassed",
                if spec.rubble { "rubble" } else { "a Blaze" }
            ),
        ));
    }
    // Terrain the engine has no figures for (a Water Obstacle, a VASL terrain without a row)
    // is refused as not modelled, as entering it is.
    super::check_hex_modelled(game, hex)?;
    // Anywhere in the obstacle, its upper levels included: a Known enemy as every act of
    // entering reads it (`known_enemy`).
    if let Some(enemy) = game
        .units_above(hex)
        .find(|u| super::entry::known_enemy(u, by))
    {
        return Err(refuse(
            "A4.3",
            ViolationKind::Terrain,
            pieces![
                format!("the obstacle in {hex} holds a Known enemy unit ("),
                Piece::unit(&enemy.id),
                "); it cannot be Bypassed"
            ],
        ));
    }
    let total_hexsides = continuing.map_or(0, |b| b.along.len()) + along.len();
    if total_hexsides > HEXSIDES_PER_BYPASS_MAX {
        return Err(refuse(
            "A4.31",
            ViolationKind::Geometry,
            format!("that would take the Bypass all the way round {hex}"),
        ));
    }
    // A hexside of a Location holding Wire is not Bypassed, from either side of it (A4.3).
    if let Some(side) = along.iter().find(|n| wire(**n)) {
        return Err(refuse(
            "A4.3",
            ViolationKind::Terrain,
            format!(
                "{side} holds Wire: the {hex}-{side} hexside is part of a Wire Location and cannot be Bypassed"
            ),
        ));
    }
    for side in along {
        let hexside = game
            .scenario
            .geometry()
            .hexside(hex, *side)
            .expect("checked adjacent");
        // With no `obstacle_touches` the obstacle fills its hex, for Bypass as for LOS: it
        // touches every hexside, and A4.31 blocks Bypass wherever that is in question.
        let touched = !spec.obstacle_inset || spec.obstacle_touches.contains(side);
        let wall_touches = game
            .scenario
            .hexside_spec(hexside)
            .is_some_and(|s| s.feature.is_some() && s.touches_obstacle);
        if touched || wall_touches {
            return Err(refuse(
                "A4.31",
                ViolationKind::Terrain,
                format!(
                    "the {} in {hex} touches the {hexside} hexside{}, so Bypass is blocked along it",
                    spec.terrain.name(),
                    if wall_touches {
                        " through its wall/hedge"
                    } else if !spec.obstacle_inset {
                        " (the scenario gives no `obstacle_touches`: it fills the hex)"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }

    // Cost: Open Ground as the other terrain (B1), doubled uphill (B10); the wall/hedge
    // crossed to get in (B9.4); and the doubling past two hexsides (A4.31).
    let from_level = game.scenario.hexes[&position.hex].elevation;
    let (open, open_rule) = Terrain::OpenGround.entry_cost(None);
    let board::terrain::EntryCost::Mf(open) = open else {
        unreachable!("Open Ground costs a fixed MF");
    };
    let climbing = continuing.is_none() && spec.elevation > from_level;
    let base = if climbing { open + open } else { open };
    // Past two hexsides the hex's Bypass cost is paid a second time, once.
    let bypass_doubling = match continuing {
        Some(b) if total_hexsides > 2 && !b.doubled => b.base,
        None if total_hexsides > 2 => base,
        _ => Mf::default(),
    };
    let (hexside, hexside_mf) = if continuing.is_some() {
        (None, Mf::default())
    } else {
        let geometry = game.scenario.geometry();
        let crossing = geometry
            .hexside(chain_start[0], hex)
            .and_then(|s| game.scenario.hexside_feature(s));
        let gap = geometry
            .hexside(chain_start[0], hex)
            .and_then(|s| game.scenario.hexside_spec(s))
            .is_some_and(|s| s.road);
        match crossing {
            Some(f) if !gap => (Some(f), f.row().crossing_mf),
            _ => (None, Mf::default()),
        }
    };
    let cot = if continuing.is_some() {
        Mf::default()
    } else {
        open
    };
    let elevation = if climbing { open } else { Mf::default() };
    let cost = MoveCost {
        cot,
        cot_rule: format!("{open_rule}, Bypass of {hex} (A4.31)"),
        road: false,
        bypass_doubling,
        elevation,
        hexside,
        hexside_mf,
        all_mf: false,
        total: cot + elevation + hexside_mf + bypass_doubling,
    };
    // Into the hex it is the one act of entering a Location (`enter_location`, `Act::Bypass`):
    // the checks of the Location, vehicles, MF, and the enemy's Residual FP there. Going on
    // round the hex it stays in enters nothing, and only pays its MF.
    let (cost, mf, residual) = if continuing.is_some() {
        refuse_vehicles(game, &units, hexside == Some(HexsideFeature::Bocage))?;
        let mf = pay(game, &units, Allowance::Move(ids), &cost, hex)?;
        (cost, mf, false)
    } else {
        let entry = enter_location(game, by, &units, ids, hex, cost, Act::Bypass)?;
        (entry.cost, entry.mf, entry.residual)
    };
    let mut events = super::step::lose_wall_advantage(&units, from, hex, WaLoss::Moved);
    events.push(Event::UnitBypassed(UnitBypassed {
        units: ids.to_vec(),
        hex,
        from,
        along: along.to_vec(),
        cost,
        mf,
    }));
    Ok((events, residual))
}
