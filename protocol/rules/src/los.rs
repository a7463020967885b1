//! LOS between units and hexes in a game: where each end stands, at what level and in what
//! status (Wall Advantage, entrenched, Bypass, below ground), handed to the board's tracer
//! (`board::los`). The `los` script question, attacks (A6.11), the road Manhole drm (B8.42),
//! bocage cover (B9.55) and tunnel discovery (B8.63) all ask here.

use crate::wall_advantage::wa_hexsides;
use board::hex::{Hex, DIRECTIONS};
use board::los::{trace_with, End, LosError, LosMap, LosReport, Point, Verdict};
use board::scenario::UnitId;
use game::{Game, Underground, Unit};

/// One end of a LOS question: a unit (its hex, level and status count) or a hex at ground level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spot {
    Unit(UnitId),
    Hex(Hex),
}

impl Spot {
    /// A unit id when the game has that unit, otherwise a hex name (the board taken from the
    /// map when the name leaves it out and the map lies on one board).
    pub fn read(game: &Game, word: &str) -> Result<Spot, LosError> {
        if game.units.contains_key(word) {
            return Ok(Spot::Unit(word.to_string()));
        }
        let mut hex: Hex = word
            .parse()
            .map_err(|_| LosError::NeitherUnitNorHex(word.to_string()))?;
        if hex.board.is_none() {
            let mut boards = game.scenario.hexes.keys().map(|h| h.board);
            if let Some(first) = boards.next() {
                if boards.all(|b| b == first) {
                    hex.board = first;
                }
            }
        }
        Ok(Spot::Hex(hex))
    }
}

/// The points a unit may be seen at: its hex centre, or in Bypass every vertex of the
/// hexsides it has moved along (A4.34).
pub(crate) fn ends_of(game: &Game, map: &LosMap, unit: &Unit) -> Vec<End> {
    let spec = game.scenario.units.get(&unit.id);
    let in_setup_hex = spec.is_some_and(|s| s.hex == unit.hex);
    let mut end = End::hex(map, unit.hex);
    if let Some(level) = spec.and_then(|s| s.level).filter(|_| in_setup_hex) {
        end.level = level;
    }
    end.unit = true;
    end.entrenched = crate::fortification::entrenched_in(game, unit).is_some();
    let geometry = game.scenario.geometry();
    if unit.wall_advantage {
        for side in wa_hexsides(game, unit) {
            if let Some(d) = side
                .other(unit.hex)
                .and_then(|n| geometry.direction_to(unit.hex, n))
            {
                end.wa |= 1 << d.index();
            }
        }
    }
    match &unit.bypass {
        None => vec![end],
        Some(b) => {
            let mut points: Vec<u8> = vec![];
            for far in &b.along {
                if let Some(d) = geometry.direction_to(unit.hex, *far) {
                    let i = d.index();
                    for v in [(i + 5) % 6, i] {
                        let v = v as u8;
                        if !points.contains(&v) {
                            points.push(v);
                        }
                    }
                }
            }
            points
                .into_iter()
                .map(|v| End {
                    point: Point::Vertex(v),
                    ..end
                })
                .collect()
        }
    }
}

fn vertex_words(game: &Game, end: &End) -> Option<String> {
    match end.point {
        Point::Centre => None,
        Point::Vertex(i) => {
            let i = usize::from(i);
            let mut names = vec![end.hex.to_string()];
            for d in [DIRECTIONS[i], DIRECTIONS[(i + 1) % 6]] {
                names.extend(
                    game.scenario
                        .geometry()
                        .step(end.hex, d)
                        .map(|h| h.to_string()),
                );
            }
            Some(names.join("-"))
        }
    }
}

/// Orders answers from best for the firer to worst: clear, least hindered, blocked.
fn rank(v: Verdict) -> u16 {
    match v {
        Verdict::Clear => 0,
        Verdict::Hindered(n) => u16::from(n),
        Verdict::Blocked => u16::MAX,
    }
}

fn unit<'a>(game: &'a Game, id: &UnitId) -> Result<&'a Unit, LosError> {
    game.units
        .get(id)
        .filter(|u| !u.eliminated)
        .ok_or_else(|| LosError::NoUnit(id.clone()))
}

/// LOS from one spot to another over the game's map. For a unit in Bypass the best of the
/// vertices it may be seen at is taken (A4.34: the firer chooses).
pub fn between(game: &Game, from: &Spot, to: &Spot) -> Result<LosReport, LosError> {
    let map = LosMap::of(&game.scenario);
    between_on(game, map, from, to)
}

/// As [`between`], over a map already built (several questions on one position).
pub fn between_on(
    game: &Game,
    map: &LosMap,
    from: &Spot,
    to: &Spot,
) -> Result<LosReport, LosError> {
    between_with(game, map, from, to, true)
}

/// The verdict of [`between_on`] alone, traced without writing reasons (the rules that only
/// need to know whether a LOS exists).
pub fn verdict_on(game: &Game, map: &LosMap, from: &Spot, to: &Spot) -> Result<Verdict, LosError> {
    between_with(game, map, from, to, false).map(|r| r.verdict)
}

fn between_with(
    game: &Game,
    map: &LosMap,
    from: &Spot,
    to: &Spot,
    explain: bool,
) -> Result<LosReport, LosError> {
    let ends = |spot: &Spot| -> Result<(Vec<End>, Option<&Unit>), LosError> {
        match spot {
            Spot::Hex(h) => {
                // Either name of a seam hex is the hex (`board::geometry`).
                let h = &game.scenario.geometry().canonical(*h);
                if !game.scenario.hexes.contains_key(h) {
                    return Err(LosError::NotOnMap(*h));
                }
                Ok((vec![End::hex(map, *h)], None))
            }
            Spot::Unit(id) => {
                let u = unit(game, id)?;
                Ok((ends_of(game, map, u), Some(u)))
            }
        }
    };
    let (from_ends, from_unit) = ends(from)?;
    let (to_ends, to_unit) = ends(to)?;
    for u in [from_unit, to_unit].into_iter().flatten() {
        let why = match u.underground {
            Some(Underground::Tunnel) => Some("is in a tunnel: no LOS to or from it (B8.6)"),
            Some(Underground::Sewer { .. }) => Some(
                "is in a sewer, seen only from an adjacent sewer Location or the Manhole above once discovered (B8.2)",
            ),
            None => None,
        };
        if let Some(why) = why {
            let hexes = [from_ends[0].hex, to_ends[0].hex];
            return Ok(LosReport {
                verdict: Verdict::Blocked,
                reasons: vec![format!("`{}` {why}", u.id)],
                path: hexes.to_vec(),
                walls: vec![],
            });
        }
    }
    let mut best: Option<LosReport> = None;
    for f in &from_ends {
        for t in &to_ends {
            let mut report = trace_with(map, *f, *t, explain)?;
            for e in [f, t].into_iter().filter(|_| explain) {
                if let Some(v) = vertex_words(game, e) {
                    report
                        .reasons
                        .insert(0, format!("traced to the Bypass vertex {v} (A4.34)"));
                }
            }
            if best
                .as_ref()
                .is_none_or(|b| rank(report.verdict) < rank(b.verdict))
            {
                best = Some(report);
            }
        }
    }
    best.ok_or(LosError::NoPoint)
}

/// Whether `viewer` has a LOS to `target` (unit to unit), blocked LOS and errors counting
/// as none.
pub fn sees(game: &Game, map: &LosMap, viewer: &UnitId, target: &UnitId) -> bool {
    verdict_on(
        game,
        map,
        &Spot::Unit(viewer.clone()),
        &Spot::Unit(target.clone()),
    )
    .is_ok_and(|v| v != Verdict::Blocked)
}

/// Whether `viewer` has a LOS to the hex `target` (its ground-level Location).
pub fn sees_hex(game: &Game, map: &LosMap, viewer: &UnitId, target: Hex) -> Option<LosReport> {
    between_on(game, map, &Spot::Unit(viewer.clone()), &Spot::Hex(target)).ok()
}
