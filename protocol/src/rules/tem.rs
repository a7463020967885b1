//! The TEM query (B9.3–B9.36): given the firers, a target unit and the kind of fire, which
//! Terrain Effects Modifier applies, and why — the question players argue over most when walls
//! and Wall Advantage meet.
//!
//! Whether fire is traced through a wall/hedge hexside (or along a hexspine) of the target's
//! hex is read from the straight line between hex centres; whether there is a LOS at all is
//! `rules::los`'s question.

use crate::board::hex::Hexside;
use crate::board::scenario::{UnitId, UnitKind};
use crate::board::terrain::HexsideFeature;
use crate::game::Game;
use crate::rules::wall_advantage::wa_hexsides;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fire {
    /// Ordinary Direct Fire (small arms, MG).
    Direct,
    /// Direct Fire by ordnance: a vehicle behind a wall is Hull Down instead (B9.36).
    Ordnance,
    /// Indirect Fire (mortars, OBA): wall/hedge TEM −1, whatever is crossed (B9.34).
    Indirect,
    /// A Demolition Charge: wall/hedge TEM only when thrown across one (B9.3).
    DemolitionCharge,
}

impl Fire {
    pub fn parse(word: &str) -> Option<Fire> {
        Some(match word {
            "direct" => Fire::Direct,
            "ordnance" => Fire::Ordnance,
            "indirect" => Fire::Indirect,
            "dc" => Fire::DemolitionCharge,
            _ => return None,
        })
    }
}

/// The answer: the TEM, whether the target is Hull Down instead, and the reasons in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemReport {
    pub tem: i8,
    /// A vehicle behind a wall facing ordnance is HD rather than getting the wall TEM (B9.36).
    pub hull_down: bool,
    pub reasons: Vec<String>,
}

/// Why a TEM query could not be answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TemError(pub String);

/// A wall/hedge/bocage crossed by fire into the target's hex: the feature, its TEM after
/// elevation (B9.33), the hexside, and the reasons for any reduction.
type Crossing = (HexsideFeature, i8, Hexside, Vec<String>);

/// The best wall/hedge/bocage the fire crosses into the target's hex (B9.3), and notes on
/// any crossed that give no TEM because of their level (B9.35).
fn crossed_wall(
    game: &Game,
    firer_hex: crate::board::hex::Hex,
    target_hex: crate::board::hex::Hex,
) -> (Option<Crossing>, Vec<String>) {
    crossing_with_notes(game, firer_hex, target_hex).unwrap_or_default()
}

fn crossing_with_notes(
    game: &Game,
    firer_hex: crate::board::hex::Hex,
    target_hex: crate::board::hex::Hex,
) -> Option<(Option<Crossing>, Vec<String>)> {
    let entry = target_hex.entry_from(firer_hex)?;
    let target_level = game.scenario.hexes.get(&target_hex)?.elevation;
    let firer_level = game
        .scenario
        .hexes
        .get(&firer_hex)
        .map_or(0, |s| s.elevation);
    let distance = i16::try_from(firer_hex.distance(target_hex)?).ok()?;
    // The hexsides crossed: the one the line enters by, or along a hexspine both hexsides
    // that meet there and the hexside lying lengthwise on the line itself (B9.3).
    let mut crossed: Vec<Hexside> = entry
        .across()
        .iter()
        .filter_map(|h| target_hex.hexside(*h))
        .collect();
    if let crate::board::hex::Entry::Hexspine(x, y) = entry {
        crossed.extend(x.hexside(y));
    }
    let level = |h: crate::board::hex::Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
    let mut best: Option<Crossing> = None;
    let mut notes = vec![];
    for side in crossed {
        let Some(feature) = game.scenario.hexside_feature(side) else {
            continue;
        };
        let mut why = vec![];
        let wall_level = level(side.a).min(level(side.b));
        if wall_level != target_level {
            notes.push(format!(
                "the {} on {side} lies on level {wall_level}, the target on level {target_level}: no TEM from it (B9.35)",
                feature.name()
            ));
            continue;
        }
        let mut tem = feature.row().tem.direct;
        let height = i16::from(firer_level) - i16::from(target_level);
        if feature != HexsideFeature::Bocage && height > distance {
            let cut = i8::try_from(height - distance).unwrap_or(i8::MAX);
            tem = (tem - cut).max(0);
            why.push(format!(
                "firer {height} levels up at range {distance}: {} TEM reduced by {cut} (B9.33)",
                feature.name()
            ));
        }
        if best.as_ref().is_none_or(|b| tem > b.1) {
            best = Some((feature, tem, side, why));
        }
    }
    Some((best, notes))
}

/// B9.42: against a unit in Bypass the firer traces to a vertex of a hexside it moved along
/// (A4.34) and takes the one best for it among those it has a LOS to. A wall/hedge hexside at
/// that vertex gives its TEM when the thread runs exactly along it, or when the target is in
/// one of its two hexes and the thread enters the vertex through the other one (or along that
/// hex's other hexside there).
fn vertex_wall(
    game: &Game,
    firer: &crate::game::Unit,
    target: &crate::game::Unit,
) -> (Option<Crossing>, Vec<String>) {
    use crate::board::los::{arrival, trace, Arrival, LosMap, Verdict};
    let map = LosMap::new(&game.scenario);
    let from = crate::rules::los::ends_of(game, &map, firer)[0];
    let mut best: Option<(i8, Option<Crossing>)> = None;
    for end in crate::rules::los::ends_of(game, &map, target) {
        let seen = trace(&map, from, end).is_ok_and(|r| r.verdict != Verdict::Blocked);
        let Some(arrived) = arrival(firer.hex, &end).filter(|_| seen) else {
            continue;
        };
        let crate::board::los::Point::Vertex(i) = end.point else {
            continue;
        };
        let i = usize::from(i);
        let around: Vec<crate::board::hex::Hex> = [
            Some(target.hex),
            target.hex.step(crate::board::hex::DIRECTIONS[i]),
            target.hex.step(crate::board::hex::DIRECTIONS[(i + 1) % 6]),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut here: Option<Crossing> = None;
        for (x, y) in [(0, 1), (0, 2), (1, 2)] {
            let (Some(a), Some(b)) = (around.get(x), around.get(y)) else {
                continue;
            };
            let Some(side) = a.hexside(*b) else { continue };
            let Some(feature) = game.scenario.hexside_feature(side) else {
                continue;
            };
            let opposite = side.other(target.hex);
            let applies = match arrived {
                Arrival::Along(s) => {
                    s == side || opposite.is_some_and(|o| s.touches(o) && !s.touches(target.hex))
                }
                Arrival::Through(h) => opposite == Some(h),
            };
            let tem = feature.row().tem.direct;
            if applies && here.as_ref().is_none_or(|c| tem > c.1) {
                let why = vec![format!(
                    "LOS traced to the Bypass vertex at {}: the {} on {side} applies (B9.42)",
                    around
                        .iter()
                        .map(|h| h.to_string())
                        .collect::<Vec<_>>()
                        .join("-"),
                    feature.name()
                )];
                here = Some((feature, tem, side, why));
            }
        }
        let tem = here.as_ref().map_or(0, |c| c.1);
        if best.as_ref().is_none_or(|(t, _)| tem < *t) {
            best = Some((tem, here));
        }
    }
    (best.and_then(|(_, c)| c), vec![])
}

/// Works out the TEM for `target` under fire from `firers` (a Fire Group when more than one).
pub fn query(
    game: &Game,
    firers: &[UnitId],
    target: &UnitId,
    fire: Fire,
) -> Result<TemReport, TemError> {
    let unit = |id: &UnitId| {
        game.units
            .get(id)
            .filter(|u| !u.eliminated)
            .ok_or_else(|| TemError(format!("there is no unit `{id}` in play")))
    };
    let target = unit(target)?;
    let firers = firers.iter().map(unit).collect::<Result<Vec<_>, _>>()?;
    if firers.is_empty() {
        return Err(TemError("name at least one firer".into()));
    }
    let hex_spec = &game.scenario.hexes[&target.hex];
    let terrain = hex_spec.terrain.row();
    let mut reasons = vec![];

    if fire == Fire::Indirect {
        // B9.34: the best wall/hedge of the hex, −1, crossed or not, WA or not.
        let wall = target
            .hex
            .hexsides()
            .into_iter()
            .filter_map(|s| game.scenario.hexside_feature(s))
            .map(|f| (f, f.row().tem.indirect))
            .max_by_key(|(_, t)| *t);
        let in_hex = if target.wall_advantage && terrain.tem.indirect > 0 {
            0
        } else {
            terrain.tem.indirect
        };
        let tem = match wall {
            Some((f, t)) if in_hex <= 0 => {
                reasons.push(format!("{} TEM {t} vs Indirect Fire (B9.34)", f.name()));
                if in_hex < 0 {
                    reasons.push(format!("Air Burst {in_hex} in {} (B9.34)", terrain.name));
                }
                t + in_hex
            }
            Some((f, t)) if t > in_hex => {
                reasons.push(format!(
                    "{} TEM {t} vs Indirect Fire, better than the {} (B9.31, B9.34)",
                    f.name(),
                    terrain.name
                ));
                t
            }
            _ => {
                reasons.push(format!(
                    "{} TEM {in_hex} vs Indirect Fire ({})",
                    terrain.name, terrain.rule
                ));
                in_hex
            }
        };
        return Ok(TemReport {
            tem,
            hull_down: false,
            reasons,
        });
    }

    // Direct fire: is a wall/hedge of the target's hex crossed, and may the target use it?
    let crossings: Vec<_> = firers
        .iter()
        .map(|f| match target.bypass {
            Some(_) => vertex_wall(game, f, target),
            None => crossed_wall(game, f.hex, target.hex),
        })
        .collect();
    let wall = crossings
        .iter()
        .filter_map(|(c, _)| c.clone())
        .max_by_key(|c| c.1);
    if wall.is_none() {
        for (_, notes) in &crossings {
            reasons.extend(notes.iter().cloned());
        }
    }
    // A unit in Bypass is in the open part of its hex (A4.33): its obstacle gives no TEM.
    let in_hex = if target.bypass.is_some() {
        0
    } else {
        terrain.tem.direct
    };
    let wall_applies = match (&wall, fire) {
        (None, _) => false,
        (Some(_), Fire::DemolitionCharge) => {
            // B9.3: NA to DC unless thrown across a wall/hedge hexside.
            firers.iter().all(|f| f.hex.is_adjacent(target.hex))
        }
        (Some((_, _, side, _)), _) if !target.wall_advantage => {
            // Without WA a target may use the wall only vs firers without WA over it (B9.31);
            // in a Fire Group one such firer is enough (A.5).
            let any_without = firers
                .iter()
                .any(|f| !(f.wall_advantage && wa_hexsides(game, f).contains(side)));
            if !any_without {
                reasons.push(format!(
                    "the firers hold WA over {side}, so the target cannot use it (B9.31)"
                ));
            }
            any_without
        }
        (Some(_), _) => true,
    };
    if target.kind == UnitKind::Vehicle && fire == Fire::Ordnance {
        if let Some((HexsideFeature::Wall | HexsideFeature::Bocage, _, side, _)) = &wall {
            if wall_applies {
                reasons.push(format!("vehicle behind the {side} wall is Hull Down to ordnance instead of wall TEM (B9.36)"));
                return Ok(TemReport {
                    tem: if target.wall_advantage {
                        0
                    } else {
                        in_hex.max(0)
                    },
                    hull_down: true,
                    reasons,
                });
            }
        }
    }
    let tem = match (wall, wall_applies) {
        (Some((feature, tem, side, why)), true) => {
            reasons.extend(why);
            if target.wall_advantage {
                reasons.push(format!(
                    "{} TEM {tem} over {side}; with WA no in-hex TEM (B9.31)",
                    feature.name()
                ));
                tem
            } else if in_hex > tem {
                reasons.push(format!(
                    "{} TEM {in_hex} is better than the {} ({tem}); not cumulative (B9.31)",
                    terrain.name,
                    feature.name()
                ));
                in_hex
            } else {
                reasons.push(format!(
                    "{} TEM {tem} over {side} instead of in-hex TEM {in_hex}; not cumulative (B9.31)",
                    feature.name()
                ));
                tem
            }
        }
        _ if target.wall_advantage => {
            reasons.push(
                "the target claims WA, so it gets no in-hex TEM and no wall is crossed (B9.31)"
                    .into(),
            );
            0
        }
        _ => {
            reasons.push(format!("{} TEM {in_hex} ({})", terrain.name, terrain.rule));
            in_hex
        }
    };
    Ok(TemReport {
        tem,
        hull_down: false,
        reasons,
    })
}

/// B9.55 with the LOS traced by the engine: the Good Order enemy ground units that see the
/// unit (`rules::los`), and whether bocage covers it from every one of them. Returns the
/// answer and the ids of those that see it.
pub fn bocage_cover_traced(game: &Game, unit: &UnitId) -> Result<(bool, Vec<UnitId>), TemError> {
    let target = game
        .units
        .get(unit)
        .filter(|u| !u.eliminated)
        .ok_or_else(|| TemError(format!("there is no unit `{unit}` in play")))?;
    let map = crate::board::los::LosMap::new(&game.scenario);
    let seen_by: Vec<UnitId> = game
        .units
        .values()
        .filter(|e| e.side != target.side && !e.eliminated && e.is_good_order())
        .filter(|e| e.underground.is_none() && e.kind != UnitKind::Dummy)
        .filter(|e| crate::rules::los::sees(game, &map, &e.id, unit))
        .map(|e| e.id.clone())
        .collect();
    Ok((bocage_cover(game, unit, &seen_by)?, seen_by))
}

/// B9.55: a unit that could claim bocage TEM against every Good Order enemy ground unit with
/// a LOS to it counts as out of their LOS and in Concealment Terrain for setup and "?" gain.
/// Here the caller names the enemy units that see it; [`bocage_cover_traced`] traces them.
pub fn bocage_cover(game: &Game, unit: &UnitId, seen_by: &[UnitId]) -> Result<bool, TemError> {
    let target = game
        .units
        .get(unit)
        .filter(|u| !u.eliminated)
        .ok_or_else(|| TemError(format!("there is no unit `{unit}` in play")))?;
    if !(target.kind.is_infantry() || target.kind == UnitKind::Dummy) {
        return Ok(false);
    }
    for id in seen_by {
        let enemy = game
            .units
            .get(id)
            .filter(|u| !u.eliminated)
            .ok_or_else(|| TemError(format!("there is no unit `{id}` in play")))?;
        if !enemy.is_good_order() {
            continue; // only Good Order enemies count (B9.55, A12.1)
        }
        let covered = crossed_wall(game, enemy.hex, target.hex)
            .0
            .is_some_and(|(f, _, side, _)| {
                f == HexsideFeature::Bocage
                    && (target.wall_advantage
                        || !(enemy.wall_advantage && wa_hexsides(game, enemy).contains(&side)))
            });
        if !covered {
            return Ok(false);
        }
    }
    Ok(true)
}
