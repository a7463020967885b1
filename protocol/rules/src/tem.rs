//! The TEM query (B9.3–B9.36): given the firers, a target unit and the kind of fire, which
//! Terrain Effects Modifier applies, and why — the question players argue over most when walls
//! and Wall Advantage meet.
//!
//! Whether fire is traced through a wall/hedge hexside (or along a hexspine) of the target's
//! hex is read from the straight line between hex centres; whether there is a LOS at all is
//! `rules::los`'s question.

use crate::wall_advantage::wa_hexsides;
use board::hex::{Hex, Hexside};
use board::scenario::{UnitId, UnitKind};
use board::terrain::{HexsideFeature, Terrain};
use game::phase::Phase;
use game::{Game, Unit};
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
pub enum TemError {
    #[error("there is no unit `{0}` in play")]
    NoUnit(UnitId),
    #[error("name at least one firer")]
    NoFirer,
    /// The target's hex shows a VASL terrain the terrain table has no row for.
    #[error("not modelled: `{unit}` is in {hex}, whose board shows VASL's `{terrain}`, a terrain the terrain table has no row for")]
    UnmodelledTerrain {
        unit: UnitId,
        hex: Hex,
        terrain: String,
    },
    /// The target is in or on a fortification whose TEM the table does not give.
    #[error("not modelled: `{unit}` is {place} a {name}, whose TEM{against} the terrain table does not give ({rule})")]
    UnmodelledFortification {
        unit: UnitId,
        place: &'static str,
        name: &'static str,
        against: &'static str,
        rule: &'static str,
    },
}

/// A wall/hedge/bocage crossed by fire into the target's hex: the feature, its TEM after
/// elevation (B9.33), the hexside, and the reasons for any reduction.
type Crossing = (HexsideFeature, i8, Hexside, Vec<String>);

/// The best wall/hedge/bocage the fire crosses into the target's hex (B9.3), and notes on
/// any crossed that give no TEM because of their level (B9.35).
/// `firer_halves` is the firer's own level in half levels when it stands on an upper level
/// of its hex (a building storey, B23); `None` for its hex's base level.
fn crossed_wall(
    game: &Game,
    firer_hex: board::hex::Hex,
    firer_halves: Option<i16>,
    target_hex: board::hex::Hex,
) -> (Option<Crossing>, Vec<String>) {
    crossing_with_notes(game, firer_hex, firer_halves, target_hex).unwrap_or_default()
}

fn crossing_with_notes(
    game: &Game,
    firer_hex: board::hex::Hex,
    firer_halves: Option<i16>,
    target_hex: board::hex::Hex,
) -> Option<(Option<Crossing>, Vec<String>)> {
    let geometry = game.scenario.geometry();
    let entry = geometry.entry_from(target_hex, firer_hex)?;
    let target_level = game.scenario.hexes.get(&target_hex)?.elevation;
    let firer_base = game
        .scenario
        .hexes
        .get(&firer_hex)
        .map_or(0, |s| s.elevation);
    // Full levels of the firer's height (B9.33 counts full levels).
    let firer_level = firer_halves.map_or(i16::from(firer_base), |h| h / 2);
    let distance = i16::try_from(geometry.distance(firer_hex, target_hex)?).ok()?;
    // The hexsides crossed: the one the line enters by, or along a hexspine both hexsides
    // that meet there and the hexside lying lengthwise on the line itself (B9.3).
    let mut crossed: Vec<Hexside> = entry
        .across()
        .iter()
        .filter_map(|h| geometry.hexside(target_hex, *h))
        .collect();
    if let board::hex::Entry::Hexspine(x, y) = entry {
        crossed.extend(geometry.hexside(x, y));
    }
    let level = |h: board::hex::Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
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
        let height = firer_level - i16::from(target_level);
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

/// Whether `unit` is moving now: a member of the stack moving in its side's MPh that has not
/// completed its MPh (A4.2). The wall TEM of a road gap is for non-moving targets only (B9.3).
pub(crate) fn is_moving(game: &Game, unit: &Unit) -> bool {
    game.clock.phase() == Phase::Movement
        && unit.side == game.attacker()
        && game.movement.moving_stack.contains(&unit.id)
        && !game.movement.finished.contains(&unit.id)
}

/// How much a firer's height cuts a TEM that elevation reduces (B9.33): one per full level by
/// which the firer's height above the target's base level exceeds the range.
/// The firer's height counts its building level too: a unit on an upper level is a Location
/// of its own, that high (B23, A5.1).
fn elevation_cut(game: &Game, firer: &Unit, target: &Unit) -> i8 {
    let level = |h: Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
    let firer_halves = game
        .upper_level(firer)
        .unwrap_or(i16::from(level(firer.hex)) * 2);
    let height_halves = firer_halves - i16::from(level(target.hex)) * 2;
    let distance = game
        .scenario
        .geometry()
        .distance(firer.hex, target.hex)
        .and_then(|d| i16::try_from(d).ok())
        .unwrap_or(i16::MAX / 4);
    // Full levels by which the height exceeds the range.
    i8::try_from(((height_halves - 2 * distance) / 2).max(0)).unwrap_or(i8::MAX)
}

/// The in-hex TEM of `target` against direct fire from `firers`, with the reasons: Open Ground
/// in Bypass (A4.33), shellholes as Open Ground against Defensive First Fire for a unit that
/// entered them at Open Ground cost (B2), an entrenchment's TEM in place of the hex's (B27),
/// and the cut a firer's height makes to shellhole and entrenchment TEM (B9.33; the cut the
/// target suffers least from counts, as for a Fire Group the best TEM applies). Residual FP's
/// attack, which has no firer, reads the in-hex TEM here too (`firers` empty: no height).
pub(crate) fn in_hex_direct(
    game: &Game,
    firers: &[&Unit],
    target: &Unit,
    reasons: &mut Vec<String>,
) -> i8 {
    let row = game.scenario.hexes[&target.hex].terrain.row();
    if target.bypass.is_some() {
        reasons.push(format!(
            "in Bypass the unit is in the open part of the {} hex: no {} TEM (A4.33)",
            row.name, row.name
        ));
        return Terrain::OpenGround.row().tem.direct;
    }
    let first_fire =
        game.clock.phase() == Phase::Movement && firers.iter().all(|f| f.side != game.attacker());
    let cut = firers
        .iter()
        .map(|f| elevation_cut(game, f, target))
        .min()
        .unwrap_or(0);
    if let Some(entrenchment) = crate::fortification::entrenched_in(game, target) {
        let tem = entrenchment.row().tem.map_or(0, |t| t.direct);
        let reduced = (tem - cut).max(0);
        reasons.push(format!(
            "beneath a {} in {}: TEM {tem} ({})",
            entrenchment.row().name,
            target.hex,
            entrenchment.row().rule
        ));
        if reduced != tem {
            reasons.push(format!(
                "firer's height cuts the {} TEM to {reduced} (B9.33)",
                entrenchment.row().name
            ));
        }
        if row.tem.direct > reduced {
            reasons.push(format!(
                "{} TEM {} is better; not cumulative",
                row.name, row.tem.direct
            ));
        }
        return reduced.max(row.tem.direct);
    }
    if row.terrain == Terrain::Shellholes {
        if first_fire && is_moving(game, target) && !target.shellhole_cover {
            reasons.push(
                "entered the shellholes at Open Ground cost: Open Ground vs Defensive First Fire (B2)"
                    .into(),
            );
            return 0;
        }
        if cut > 0 {
            let reduced = (row.tem.direct - cut).max(0);
            reasons.push(format!(
                "firer's height cuts the shellhole TEM to {reduced} (B9.33)"
            ));
            return reduced;
        }
    }
    row.tem.direct
}

/// B9.42: against a unit in Bypass the firer traces to a vertex of a hexside it moved along
/// (A4.34) and takes the one best for it among those it has a LOS to. A wall/hedge hexside at
/// that vertex gives its TEM when the thread runs exactly along it, or when the target is in
/// one of its two hexes and the thread enters the vertex through the other one (or along that
/// hex's other hexside there).
fn vertex_wall(
    game: &Game,
    firer: &game::Unit,
    target: &game::Unit,
) -> (Option<Crossing>, Vec<String>) {
    use board::los::{arrival, verdict, Arrival, LosMap, Verdict};
    let map = LosMap::of(&game.scenario);
    let geometry = game.scenario.geometry();
    let from = crate::los::ends_of(game, map, firer)[0];
    let mut best: Option<(i8, Option<Crossing>)> = None;
    for end in crate::los::ends_of(game, map, target) {
        let seen = verdict(map, from, end).is_ok_and(|v| v != Verdict::Blocked);
        let Some(arrived) = arrival(geometry, firer.hex, &end).filter(|_| seen) else {
            continue;
        };
        let board::los::Point::Vertex(i) = end.point else {
            continue;
        };
        let i = usize::from(i);
        let around: Vec<board::hex::Hex> = [
            Some(target.hex),
            geometry.step(target.hex, board::hex::DIRECTIONS[i]),
            geometry.step(target.hex, board::hex::DIRECTIONS[(i + 1) % 6]),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut here: Option<Crossing> = None;
        for (x, y) in [(0, 1), (0, 2), (1, 2)] {
            let (Some(a), Some(b)) = (around.get(x), around.get(y)) else {
                continue;
            };
            let Some(side) = geometry.hexside(*a, *b) else {
                continue;
            };
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
            .ok_or_else(|| TemError::NoUnit(id.clone()))
    };
    let target = unit(target)?;
    let firers = firers.iter().map(unit).collect::<Result<Vec<_>, _>>()?;
    if firers.is_empty() {
        return Err(TemError::NoFirer);
    }
    let mut reasons = vec![];
    let indirect_fire = fire == Fire::Indirect;
    if let Some(name) = game
        .scenario
        .hexes
        .get(&target.hex)
        .and_then(|s| s.unmodelled.as_ref())
    {
        return Err(TemError::UnmodelledTerrain {
            unit: target.id.clone(),
            hex: target.hex,
            terrain: name.clone(),
        });
    }
    if let Some(f) = crate::fortification::unmodelled_tem(game, target, indirect_fire) {
        let bridge = f == board::terrain::Fortification::Bridge;
        return Err(TemError::UnmodelledFortification {
            unit: target.id.clone(),
            place: if bridge { "on" } else { "in" },
            name: f.row().name,
            against: if bridge { " against Direct Fire" } else { "" },
            rule: f.row().rule,
        });
    }
    if indirect_fire {
        return Ok(indirect(game, target, reasons));
    }

    // Direct fire: the wall/hedge each firer's fire crosses into the target's hex, and whether
    // the target may use it against that firer. In a Fire Group the target gets it if it may
    // against any one member whose fire crosses it (B9.3 EX, A.5).
    let moving = is_moving(game, target);
    let mut wall: Option<Crossing> = None;
    for firer in &firers {
        // Against a unit in Bypass the thread runs to a vertex (B9.42).
        let (crossing, notes) = match target.bypass {
            _ if game.upper_level(target).is_some() => (
                None,
                vec![format!(
                    "`{}` is on an upper level of {}: its walls/hedges lie at ground level and give it no TEM (B9.35)",
                    target.id, target.hex
                )],
            ),
            Some(_) => vertex_wall(game, firer, target),
            None => crossed_wall(game, firer.hex, game.upper_level(firer), target.hex),
        };
        reasons.extend(notes);
        let Some((feature, tem, side, why)) = crossing else {
            continue;
        };
        let gap = game.scenario.hexside_spec(side).is_some_and(|s| s.road);
        if gap && moving {
            reasons.push(format!(
                "`{}` fires through the road gap in the {} on {side}: its TEM is for a non-moving target only (B9.3)",
                firer.id,
                feature.name()
            ));
            continue;
        }
        // A DC thrown across the wall gives its TEM whatever the WA (B9.3 EXC, below).
        if fire != Fire::DemolitionCharge
            && !target.wall_advantage
            && firer.wall_advantage
            && wa_hexsides(game, firer).contains(&side)
        {
            reasons.push(format!(
                "`{}` holds WA over {side}, so the target cannot use it against that firer (B9.31)",
                firer.id
            ));
            continue;
        }
        if wall.as_ref().is_none_or(|b| tem > b.1) {
            wall = Some((feature, tem, side, why));
        }
    }
    if fire == Fire::DemolitionCharge
        && wall.is_some()
        && !firers
            .iter()
            .all(|f| game.scenario.geometry().is_adjacent(f.hex, target.hex))
    {
        // B9.3: NA to DC unless thrown across a wall/hedge hexside.
        wall = None;
    }
    let in_hex = in_hex_direct(game, &firers, target, &mut reasons);
    // Only a negative in-hex TEM (Runway) adds to WA and to wall TEM (B9.31 EXC, B7).
    let negative = in_hex.min(0);
    if negative < 0 {
        reasons.push(format!(
            "{} TEM {negative} applies whatever the WA (B9.31 EXC, B7)",
            game.scenario.hexes[&target.hex].terrain.name()
        ));
    }
    if target.kind == UnitKind::Vehicle && fire == Fire::Ordnance {
        if let Some((HexsideFeature::Wall | HexsideFeature::Bocage, tem, side, why)) = &wall {
            if *tem == 0 {
                reasons.extend(why.iter().cloned());
                reasons.push(format!(
                    "the wall TEM on {side} is cut to 0 by elevation: no Hull Down either (B9.33)"
                ));
            } else {
                reasons.push(format!("vehicle behind the {side} wall is Hull Down to ordnance instead of wall TEM (B9.36)"));
                return Ok(TemReport {
                    tem: if target.wall_advantage {
                        negative
                    } else {
                        in_hex.max(0) + negative
                    },
                    hull_down: true,
                    reasons,
                });
            }
        }
    }
    let tem = match wall {
        Some((feature, tem, side, why)) => {
            reasons.extend(why);
            if target.wall_advantage {
                reasons.push(format!(
                    "{} TEM {tem} over {side}; with WA no in-hex TEM (B9.31)",
                    feature.name()
                ));
                tem + negative
            } else if in_hex > tem {
                reasons.push(format!(
                    "in-hex TEM {in_hex} is better than the {} ({tem}); not cumulative (B9.31)",
                    feature.name()
                ));
                in_hex
            } else {
                reasons.push(format!(
                    "{} TEM {tem} over {side} instead of in-hex TEM {}; not cumulative (B9.31)",
                    feature.name(),
                    in_hex.max(0)
                ));
                tem + negative
            }
        }
        None if target.wall_advantage => {
            reasons.push(
                "the target claims WA, so it gets no in-hex TEM and no wall is crossed (B9.31)"
                    .into(),
            );
            negative
        }
        None => {
            let row = game.scenario.hexes[&target.hex].terrain.row();
            reasons.push(format!("in-hex TEM {in_hex} ({} {})", row.name, row.rule));
            in_hex
        }
    };
    // Height Advantage: +1 against fire from below when no other TEM applies (chart, B10.31).
    // It is in-hex, so a unit claiming WA does not receive it (B9.31).
    let level = |h: Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
    let from_below = firers.iter().any(|f| level(f.hex) < level(target.hex));
    if tem <= 0
        && in_hex <= 0
        && !target.wall_advantage
        && from_below
        && target.underground.is_none()
    {
        reasons
            .push("Height Advantage +1: fire from a lower level and no other TEM (B10.31)".into());
        return Ok(TemReport {
            tem: tem + 1,
            hull_down: false,
            reasons,
        });
    }
    Ok(TemReport {
        tem,
        hull_down: false,
        reasons,
    })
}

/// Indirect Fire (B9.34): the best wall/hedge of the hex at the target's own level (B9.35),
/// −1, crossed or not, WA or not; a unit in Bypass is in the open part of its hex (A4.33).
fn indirect(game: &Game, target: &Unit, mut reasons: Vec<String>) -> TemReport {
    let level = |h: Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
    let target_level = level(target.hex);
    let mut best: Option<(HexsideFeature, i8)> = None;
    for side in game.scenario.geometry().hexsides(target.hex) {
        let Some(f) = game.scenario.hexside_feature(side) else {
            continue;
        };
        let wall_level = level(side.a).min(level(side.b));
        if wall_level != target_level {
            reasons.push(format!(
                "the {} on {side} lies on level {wall_level}, the target on level {target_level}: no TEM from it (B9.35)",
                f.name()
            ));
            continue;
        }
        let t = f.row().tem.indirect;
        if best.is_none_or(|(_, b)| t > b) {
            best = Some((f, t));
        }
    }
    let terrain = game.scenario.hexes[&target.hex].terrain.row();
    let in_hex_raw = if target.bypass.is_some() {
        reasons.push(format!(
            "in Bypass the unit is in the open part of the {} hex (A4.33)",
            terrain.name
        ));
        Terrain::OpenGround.row().tem.indirect
    } else if let Some(e) = crate::fortification::entrenched_in(game, target) {
        reasons.push(format!("beneath a {} ({})", e.row().name, e.row().rule));
        e.row()
            .tem
            .map_or(0, |t| t.indirect)
            .max(terrain.tem.indirect)
    } else if target.placement.on_bridge {
        let bridge = board::terrain::Fortification::Bridge.row();
        let tem = bridge.indirect_tem.unwrap_or(0);
        reasons.push(format!(
            "on a bridge: TEM {tem} vs Indirect Fire ({})",
            bridge.rule
        ));
        tem
    } else {
        terrain.tem.indirect
    };
    let in_hex = if target.wall_advantage && in_hex_raw > 0 {
        0
    } else {
        in_hex_raw
    };
    let tem = match best {
        Some((f, t)) if in_hex <= 0 => {
            reasons.push(format!("{} TEM {t} vs Indirect Fire (B9.34)", f.name()));
            if in_hex < 0 {
                reasons.push(format!(
                    "{} {in_hex} in {} (B9.34)",
                    if terrain.terrain == Terrain::Woods {
                        "Air Burst"
                    } else {
                        "in-hex TEM"
                    },
                    terrain.name
                ));
            }
            t + in_hex
        }
        Some((f, t)) if t > in_hex => {
            reasons.push(format!(
                "{} TEM {t} vs Indirect Fire, better than in-hex TEM {in_hex} (B9.31, B9.34)",
                f.name()
            ));
            t
        }
        _ => {
            reasons.push(format!(
                "in-hex TEM {in_hex} vs Indirect Fire ({} {})",
                terrain.name, terrain.rule
            ));
            in_hex
        }
    };
    TemReport {
        tem,
        hull_down: false,
        reasons,
    }
}

/// B9.55 with the LOS traced by the engine: the Good Order enemy ground units that see the
/// unit (`rules::los`), and whether bocage covers it from every one of them. Returns the
/// answer and the ids of those that see it.
pub fn bocage_cover_traced(game: &Game, unit: &UnitId) -> Result<(bool, Vec<UnitId>), TemError> {
    let target = game
        .units
        .get(unit)
        .filter(|u| !u.eliminated)
        .ok_or_else(|| TemError::NoUnit(unit.clone()))?;
    let map = board::los::LosMap::of(&game.scenario);
    let seen_by: Vec<UnitId> = game
        .units
        .values()
        .filter(|e| e.side != target.side && !e.eliminated && e.is_good_order())
        .filter(|e| e.underground.is_none() && e.kind != UnitKind::Dummy)
        .filter(|e| crate::los::sees(game, map, &e.id, unit))
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
        .ok_or_else(|| TemError::NoUnit(unit.clone()))?;
    if !(target.kind.is_infantry() || target.kind == UnitKind::Dummy) {
        return Ok(false);
    }
    for id in seen_by {
        let enemy = game
            .units
            .get(id)
            .filter(|u| !u.eliminated)
            .ok_or_else(|| TemError::NoUnit(id.clone()))?;
        if !enemy.is_good_order() {
            continue; // only Good Order enemies count (B9.55, A12.1)
        }
        let covered = crossed_wall(game, enemy.hex, game.upper_level(enemy), target.hex)
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
