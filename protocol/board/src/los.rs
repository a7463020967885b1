//! Line of sight over the map the scenario describes: the map model LOS is traced over, and
//! the tracer (A6, B9.2–B9.21, B9.52–B9.531, B10). `docs/los.md` states the model, the rules
//! it follows and where it simplifies the board artwork.
//!
//! The thread is a straight segment from centre dot to centre dot, or to a hex vertex where the
//! rules say so (Bypass A4.34, Snap Shots B9.42; A6.12). It is traced in the integer plane of
//! [`Hex::plane`], so whether it crosses a hexside, runs exactly along one (a hexspine) or
//! passes through a vertex is exact arithmetic, never a rounding question.
//!
//! What each hex and hexside does to a LOS comes from the one terrain table
//! (`board::terrain`): obstacle heights, Blind Hexes, hindrances, seasons. This module knows
//! nothing of units: whoever asks (`rules::los`) says where each end stands, at what level and
//! in what status (Wall Advantage, entrenched, a unit or only a hex).

use crate::geometry::Geometry;
use crate::hex::{Hex, Hexside, COLUMN_MAX, DIRECTIONS, ROW_MAX};
use crate::model::{HexSpec, HexsideSpec, MapSpec};
use crate::terrain::{in_months, HexsideFeature, Terrain};
use crate::vasl::library::BoardError;
use crate::vasl::map::BoardMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Levels are counted in halves throughout: walls are half-level obstacles, rooftops sit at
/// x½ (B9.2, B23).
pub type Halves = i16;

/// Vertex `i` of a hex, in plane units from its centre: the corner between the hexsides in
/// `DIRECTIONS[i]` and `DIRECTIONS[i + 1]`.
const VERTEX: [(i64, i64); 6] = [(2, -2), (4, 0), (2, 2), (-2, 2), (-4, 0), (-2, -2)];

/// Range over which one more Blind Hex is added (A6.4 as read in docs/los.md).
const BLIND_HEX_RANGE_STEP: u32 = 5;

/// One hexside feature as LOS sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SideLos {
    feature: HexsideFeature,
    /// A road breaks the depiction (B9.1: "obvious breaks"): no LOS effect there.
    gap: bool,
    /// The level the feature stands on: the lower of its two hexes (B9.35).
    base: Halves,
}

/// One hex as LOS sees it.
#[derive(Clone, Copy, Debug)]
struct Cell {
    present: bool,
    terrain: Terrain,
    /// Base level (B10.1).
    level: Halves,
    /// Obstacle height above the base in half levels (0 = none).
    height: Halves,
    /// The depiction is drawn inside the hex (the scenario listed `obstacle_touches`) and
    /// reaches only the hexsides in `touches` (bit i = `DIRECTIONS[i]`); otherwise it fills it.
    inset: bool,
    touches: u8,
    sides: [Option<SideLos>; 6],
}

const EMPTY: Cell = Cell {
    present: false,
    terrain: Terrain::OpenGround,
    level: 0,
    height: 0,
    inset: false,
    touches: 0,
    sides: [None; 6],
};

const GRID_COLUMNS: usize = COLUMN_MAX as usize + 2;
const GRID_ROWS: usize = ROW_MAX as usize + 2;
/// One bit per slot of a board's grid.
const HINDERED_WORDS: usize = (GRID_COLUMNS * GRID_ROWS).div_ceil(64);

/// The map as LOS sees it, built once per scenario: a dense grid per board so that a trace
/// touches no hash map.
#[derive(Clone, Debug)]
pub struct LosMap {
    boards: BTreeMap<Option<u16>, Vec<Cell>>,
    month: u8,
    /// On a map of real boards, their terrain grids as the host handed them in
    /// ([`Grids`]): LOS is traced over the boards' own pixels (`board::vasl::los`), or, when
    /// the host had no such archive, refused saying which.
    real: Option<Result<Arc<BoardMap>, BoardError>>,
    /// Per board, the hexes with a wall, hedge or bocage at their own base level, by slot in
    /// `boards`' grid and in slot order, with those hexsides ([`LosMap::walls_at_base`]).
    /// Only those hexes: a map holds few, and each game that parsed its own scenario builds
    /// a map of its own.
    walls_at_base: BTreeMap<Option<u16>, Vec<(usize, WallsAtBase)>>,
}

/// The hexsides of one hex a unit there could hold Wall Advantage over: six at most.
pub type WallsAtBase = arrayvec::ArrayVec<Hexside, 6>;

/// The terrain grids of a scenario's real boards, handed in by the host that read their
/// archives (`board::vasl::library::Boards::attach`), or why it could not. Empty until then,
/// and on a hand-typed map. Like [`LosCache`], not part of the scenario's data: never encoded,
/// and equal whatever it holds, so the state hash and the log never depend on it.
#[derive(Clone, Default)]
pub struct Grids(pub(crate) Option<Arc<Result<Arc<BoardMap>, BoardError>>>);

impl PartialEq for Grids {
    fn eq(&self, _: &Grids) -> bool {
        true
    }
}

impl Eq for Grids {}

impl fmt::Debug for Grids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.0.as_deref() {
            None => "none",
            Some(Ok(_)) => "handed in",
            Some(Err(_)) => "missing",
        };
        write!(f, "Grids({state})")
    }
}

/// A scenario's [`LosMap`], built on the first LOS question and kept with the scenario from
/// then on: a checked scenario never changes (a projection is a new one with the same map,
/// and a clone shares the map), so the map is never stale; handing in grids empties it.
/// Not part of the scenario's data: never encoded, and equal whatever it holds.
#[derive(Clone, Default)]
pub struct LosCache(pub(crate) OnceLock<Arc<LosMap>>);

impl PartialEq for LosCache {
    fn eq(&self, _: &LosCache) -> bool {
        true
    }
}

impl Eq for LosCache {}

impl fmt::Debug for LosCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = if self.0.get().is_some() {
            "built"
        } else {
            "not built"
        };
        write!(f, "LosCache({state})")
    }
}

impl LosCache {
    /// A cache holding `map` already (one shared by `board::scenario::Interner`).
    pub(crate) fn built(map: Arc<LosMap>) -> LosCache {
        LosCache(OnceLock::from(map))
    }

    /// The map, if built.
    #[cfg(test)]
    pub(crate) fn get(&self) -> Option<&Arc<LosMap>> {
        self.0.get()
    }
}

fn slot(column: u16, row: u16) -> usize {
    usize::from(column) * GRID_ROWS + usize::from(row)
}

/// What a map for LOS is built from: the parts of a scenario that say what its hexes and
/// hexsides are and how they lie. The scenario hands them in (`LosMap::of`, in
/// `board::scenario`), so LOS needs nothing above the scenario's model.
pub struct MapParts<'a> {
    pub hexes: &'a BTreeMap<Hex, HexSpec>,
    pub hexsides: &'a BTreeMap<Hexside, HexsideSpec>,
    /// Every hedge is bocage by SSR (B9.5).
    pub hedges_are_bocage: bool,
    /// Month of the year, for seasonal terrain (B15); 0 = not given.
    pub month: u8,
    /// The real boards of the map, if it is made of them.
    pub map: Option<&'a MapSpec>,
    /// Their terrain grids, as the host handed them in.
    pub grids: &'a Grids,
    /// Directions as the map reads them.
    pub geometry: Geometry<'a>,
}

impl LosMap {
    /// Builds the map afresh from a scenario's parts (what `LosMap::of` does once per
    /// scenario).
    pub fn build(parts: MapParts<'_>) -> LosMap {
        let mut boards: BTreeMap<Option<u16>, Vec<Cell>> = BTreeMap::new();
        // Directions are the map's on a map of real boards, as every rule reads them.
        let geometry = parts.geometry;
        for (hex, spec) in parts.hexes.iter() {
            let grid = boards
                .entry(hex.board)
                .or_insert_with(|| vec![EMPTY; GRID_COLUMNS * GRID_ROWS]);
            let row = spec.terrain.row();
            let mut touches = 0u8;
            for (i, d) in DIRECTIONS.iter().enumerate() {
                if geometry
                    .step(*hex, *d)
                    .is_some_and(|n| spec.obstacle_touches.contains(&n))
                {
                    touches |= 1 << i;
                }
            }
            grid[slot(hex.column, hex.row)] = Cell {
                present: true,
                terrain: spec.terrain,
                level: Halves::from(spec.elevation) * 2,
                height: spec
                    .obstacle_height
                    .map_or(Halves::from(row.los.height), Halves::from),
                inset: spec.obstacle_inset,
                touches,
                sides: [None; 6],
            };
        }
        for (side, spec) in parts.hexsides.iter() {
            let Some(feature) = spec.feature_with(parts.hedges_are_bocage) else {
                continue;
            };
            let level = |h: Hex| {
                parts
                    .hexes
                    .get(&h)
                    .map_or(0, |s| Halves::from(s.elevation) * 2)
            };
            let los = SideLos {
                feature,
                gap: spec.road,
                base: level(side.a).min(level(side.b)),
            };
            for (from, to) in [(side.a, side.b), (side.b, side.a)] {
                if let (Some(d), Some(grid)) =
                    (geometry.direction_to(from, to), boards.get_mut(&from.board))
                {
                    grid[slot(from.column, from.row)].sides[d.index()] = Some(los);
                }
            }
        }
        let walls_at_base = boards
            .iter()
            .map(|(board, grid)| (*board, walls_at_base(geometry, *board, grid)))
            .collect();
        LosMap {
            boards,
            month: parts.month,
            real: parts.map.map(|spec| match &parts.grids.0 {
                Some(grids) => (**grids).clone(),
                None => Err(not_loaded(spec)),
            }),
            walls_at_base,
        }
    }

    /// The terrain of `hex` read off the grid: `Some(None)` for a hex of the board that the map
    /// does not have, `None` when no hex of its board is on the map. The rules ask for it (a
    /// unit's in-hex TEM, B9.323) for every unit after every command.
    pub fn terrain_at(&self, hex: Hex) -> Option<Option<Terrain>> {
        let cell = self.cell_on_map(hex)?;
        Some(cell.present.then_some(cell.terrain))
    }

    /// The hexsides of `hex` bearing a wall, hedge or bocage standing at the hex's own base
    /// level (B9.35): those a unit there could hold Wall Advantage over (B9.32). Read off
    /// what the map worked out once, since the rules ask for them for every unit after every
    /// command. `None` when no hex of the board is on the map.
    pub fn walls_at_base(&self, hex: Hex) -> Option<&WallsAtBase> {
        static NONE: WallsAtBase = WallsAtBase::new_const();
        let board = self.walls_at_base.get(&hex.board)?;
        let slot = slot(hex.column, hex.row);
        Some(
            board
                .binary_search_by_key(&slot, |(s, _)| *s)
                .map_or(&NONE, |i| &board[i].1),
        )
    }

    /// `hex`'s cell, from its board's grid; `None` when no hex of that board is on the map.
    fn cell_on_map(&self, hex: Hex) -> Option<Cell> {
        Some(self.cell(self.boards.get(&hex.board)?, hex))
    }

    fn cell(&self, grid: &[Cell], hex: Hex) -> Cell {
        let _ = self;
        grid[slot(hex.column, hex.row)]
    }
}

/// [`LosMap::walls_at_base`] for one board's grid, in slot order (a column's slots follow one
/// another, and columns go in order): each hexside whose feature stands at the cell's own
/// level, named as the map's geometry names it.
fn walls_at_base(
    geometry: Geometry<'_>,
    board: Option<u16>,
    grid: &[Cell],
) -> Vec<(usize, WallsAtBase)> {
    let mut walls = vec![];
    for column in 0..GRID_COLUMNS as u16 {
        for row in 0..GRID_ROWS as u16 {
            let cell = &grid[slot(column, row)];
            let hex = Hex { board, column, row };
            let sides: WallsAtBase = DIRECTIONS
                .iter()
                .zip(cell.sides)
                .filter(|(_, side)| side.is_some_and(|s| s.base == cell.level))
                .filter_map(|(d, _)| geometry.hexside_towards(hex, *d))
                .collect();
            if !sides.is_empty() {
                walls.push((slot(column, row), sides));
            }
        }
    }
    debug_assert!(
        walls.is_sorted_by_key(|(slot, _)| *slot),
        "looked up by binary search"
    );
    walls.shrink_to_fit();
    walls
}

/// A map of real boards with no grids handed in: LOS on it is refused, naming the first board.
fn not_loaded(spec: &MapSpec) -> BoardError {
    match spec.rows.iter().flatten().next() {
        Some(board) => BoardError::NotLoaded {
            board: board.board,
            version: board.version.clone(),
        },
        None => BoardError::NoBoard,
    }
}

/// Where one end of a LOS stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Point {
    /// The hex centre dot (A6.1).
    Centre,
    /// Vertex `i` of the hex (between the hexsides in directions i and i + 1): Bypass (A4.34)
    /// and Snap Shots (B9.42).
    Vertex(u8),
}

/// One end of a LOS: where, at what level, and the status the rules read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    pub hex: Hex,
    pub point: Point,
    /// The level of the Location, in half levels.
    pub level: Halves,
    /// A unit stands here (not just a hex looked at): bocage hides units without WA (B9.521).
    pub unit: bool,
    /// The hexsides of `hex` the unit holds Wall Advantage over (bit i = `DIRECTIONS[i]`).
    pub wa: u8,
    /// Beneath an entrenchment (B9.21).
    pub entrenched: bool,
}

impl End {
    /// A hex's centre at its base level, with no unit.
    pub fn hex(map: &LosMap, hex: Hex) -> End {
        let level = map
            .boards
            .get(&hex.board)
            .map_or(0, |g| g[slot(hex.column, hex.row)].level);
        End {
            hex,
            point: Point::Centre,
            level,
            unit: false,
            wa: 0,
            entrenched: false,
        }
    }

    fn xy(&self) -> (i64, i64) {
        let (x, y) = self.hex.plane();
        match self.point {
            Point::Centre => (x, y),
            Point::Vertex(i) => {
                let (dx, dy) = VERTEX[usize::from(i) % 6];
                (x + dx, y + dy)
            }
        }
    }

    fn has_wa_over(&self, hexside: Hexside) -> bool {
        hexside
            .other(self.hex)
            .and_then(|n| self.hex.direction_to(n))
            .is_some_and(|d| self.wa & (1 << d.index()) != 0)
    }
}

/// The Hindrance DRM total at which hindrances stop hindering and block the LOS (A6.7).
pub const HINDRANCE_BLOCKS: u8 = 6;

/// The engine's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Clear,
    /// Clear, with this total Hindrance DRM.
    Hindered(u8),
    Blocked,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Clear => write!(f, "clear"),
            Verdict::Hindered(n) => write!(f, "hindered {n}"),
            Verdict::Blocked => write!(f, "blocked"),
        }
    }
}

/// The answer with its reasons (each citing its rule) and the hexes the thread passes
/// through, in order, for drawing it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LosReport {
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub path: Vec<Hex>,
    /// The wall/hedge/bocage hexsides the thread crosses, runs along or touches at a vertex,
    /// in order (for TEM through hexspines and vertices, B9.3, B9.42).
    pub walls: Vec<Hexside>,
}

/// Why LOS could not be traced at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LosError {
    #[error("{0} is not on the map")]
    NotOnMap(Hex),
    #[error("{0} and {1} lie on different boards; the map does not say how boards join")]
    BoardsNotJoined(Hex, Hex),
    /// The map's real boards could not be had (the host handed in none, or a board is missing).
    #[error(transparent)]
    Boards(#[from] BoardError),
    /// The pixel grid of the real boards could not trace it.
    #[error(transparent)]
    Grid(#[from] crate::vasl::los::LosError),
    #[error("`{0}` is neither a unit nor a hex name")]
    NeitherUnitNorHex(String),
    #[error("there is no unit `{0}` in play")]
    NoUnit(String),
    #[error("no point to trace LOS from")]
    NoPoint,
}

/// LOS on real boards, over their pixels (A6.1: the depiction the thread crosses). Each end
/// is its hex's centre dot at its level; a unit's vertex (Bypass) is traced from its hex's
/// centre, and the statuses a hand-typed map reads at hexsides (WA, entrenchment) are not
/// applied: the artwork's walls and hedges block as drawn (docs/los.md).
fn trace_real(
    map: &LosMap,
    boards: &BoardMap,
    from: End,
    to: End,
    explain: bool,
) -> Result<LosReport, LosError> {
    let above_base = |e: &End| {
        let base = map.cell_on_map(e.hex).map_or(0, |c| c.level);
        e.level - base
    };
    let answer = boards
        .los(from.hex, above_base(&from), to.hex, above_base(&to))
        .map_err(LosError::Grid)?;
    let verdict = if answer.blocked {
        Verdict::Blocked
    } else if answer.hindrances > 0 {
        Verdict::Hindered(answer.hindrances)
    } else {
        Verdict::Clear
    };
    Ok(LosReport {
        verdict,
        reasons: if explain && !answer.reason.is_empty() {
            vec![answer.reason]
        } else {
            vec![]
        },
        path: if explain { answer.path } else { vec![] },
        walls: vec![],
    })
}

/// What the thread meets, in the order it meets it.
#[derive(Clone, Copy, Debug)]
enum Meet {
    /// Passes through the hex's interior.
    Interior(Hex),
    /// Crosses the hexside in direction `i` of `hex` at a point inside it.
    Cross(Hex, usize),
    /// Runs exactly along the hexside in direction `i` of `hex` (a hexspine).
    Along(Hex, usize),
    /// Passes through vertex `i` of `hex`, strictly between the two ends.
    Vertex(Hex, usize),
}

fn cross(a: (i64, i64), b: (i64, i64)) -> i64 {
    a.0 * b.1 - a.1 * b.0
}

fn sub(a: (i64, i64), b: (i64, i64)) -> (i64, i64) {
    (a.0 - b.0, a.1 - b.1)
}

fn dot(a: (i64, i64), b: (i64, i64)) -> i64 {
    a.0 * b.0 + a.1 * b.1
}

/// Where along the segment a → a + d (0 … 1, as f64, for ordering only) the segment meets the
/// open interior of the convex polygon, or `None` when it does not. Exact: the sides of the
/// line are decided by integer cross products.
fn through_convex(a: (i64, i64), d: (i64, i64), poly: &[(i64, i64)]) -> Option<f64> {
    let mut sides = [0i64; 6];
    for (s, v) in sides.iter_mut().zip(poly) {
        *s = cross(d, sub(*v, a));
    }
    chord(a, d, poly, &sides[..poly.len()])
}

/// [`through_convex`] given the side of the line each corner lies on (`sides[k]` is
/// `cross(d, poly[k] - a)`), which the caller may have computed already.
fn chord(a: (i64, i64), d: (i64, i64), poly: &[(i64, i64)], sides: &[i64]) -> Option<f64> {
    let above = sides.iter().any(|s| *s > 0);
    let below = sides.iter().any(|s| *s < 0);
    if !(above && below) {
        return None;
    }
    // The chord of the infinite line through the polygon, as parameters num/den (den > 0).
    let mut lo: Option<(i64, i64)> = None;
    let mut hi: Option<(i64, i64)> = None;
    for i in 0..poly.len() {
        let (p, q) = (poly[i], poly[(i + 1) % poly.len()]);
        let (sp, sq) = (sides[i], sides[(i + 1) % poly.len()]);
        if (sp > 0 && sq > 0) || (sp < 0 && sq < 0) || (sp == 0 && sq == 0) {
            continue;
        }
        let e = sub(q, p);
        let (mut num, mut den) = (cross(sub(p, a), e), cross(d, e));
        if den == 0 {
            continue;
        }
        if den < 0 {
            num = -num;
            den = -den;
        }
        if lo.is_none_or(|(n, m)| num * m < n * den) {
            lo = Some((num, den));
        }
        if hi.is_none_or(|(n, m)| num * m > n * den) {
            hi = Some((num, den));
        }
    }
    let ((ln, ld), (hn, hd)) = (lo?, hi?);
    // Positive overlap with (0, 1): lo < 1 and hi > 0.
    if ln < ld && hn > 0 {
        let l = (ln as f64 / ld as f64).max(0.0);
        let h = (hn as f64 / hd as f64).min(1.0);
        Some((l + h) / 2.0)
    } else {
        None
    }
}

fn hexagon(c: (i64, i64), scale: i64) -> [(i64, i64); 6] {
    VERTEX.map(|(x, y)| (c.0 + x * scale / 2, c.1 + y * scale / 2))
}

/// Every hex, hexside and vertex the segment meets, ordered from `from`.
fn meets(
    map: &LosMap,
    grid: &[Cell],
    board: Option<u16>,
    a: (i64, i64),
    b: (i64, i64),
) -> Vec<(f64, Meet)> {
    let d = sub(b, a);
    let dd = dot(d, d);
    let mut out: Vec<(f64, Meet)> = Vec::with_capacity(64);
    let (xmin, xmax) = (a.0.min(b.0), a.0.max(b.0));
    let (ymin, ymax) = (a.1.min(b.1), a.1.max(b.1));
    let c0 = ((xmin - 4) as f64 / 6.0).ceil().max(1.0) as i64;
    let c1 = ((xmax + 4) as f64 / 6.0).floor().min(f64::from(COLUMN_MAX)) as i64;
    let param = |p: (i64, i64)| dot(sub(p, a), d) as f64 / dd as f64;
    for c in c0..=c1 {
        let (lx, hx) = ((6 * c - 4).max(xmin), (6 * c + 4).min(xmax));
        let (ylo, yhi) = if d.0 == 0 {
            (ymin as f64, ymax as f64)
        } else {
            let y_at = |x: i64| a.1 as f64 + (x - a.0) as f64 * d.1 as f64 / d.0 as f64;
            let (p, q) = (y_at(lx), y_at(hx));
            (p.min(q), p.max(q))
        };
        let odd = (c % 2) as f64;
        // Centre y = 4 row − 2 odd; a hex spans centre ± 2 in y.
        let r0 = (((ylo - 2.0) + 2.0 * odd) / 4.0).floor().max(0.0) as i64;
        let r1 = (((yhi + 2.0) + 2.0 * odd) / 4.0)
            .ceil()
            .min(f64::from(ROW_MAX)) as i64;
        for r in r0..=r1 {
            let hex = Hex::new(board, c as u16, r as u16);
            if !grid[slot(hex.column, hex.row)].present {
                continue;
            }
            let centre = hex.plane();
            // No corner of the hex lies farther than 4 from its centre: a line passing
            // farther off meets nothing of it (exact: squared integer distances).
            let off = cross(d, sub(centre, a));
            if off * off > 16 * dd {
                continue;
            }
            let poly = hexagon(centre, 2);
            // Which side of the line each corner lies on, computed once for the interior,
            // the six hexsides and the six vertices.
            let mut sv = [0i64; 6];
            for (s, v) in sv.iter_mut().zip(&poly) {
                *s = cross(d, sub(*v, a));
            }
            if let Some(t) = chord(a, d, &poly, &sv) {
                out.push((t, Meet::Interior(hex)));
            }
            for i in 0..6 {
                let (p, q) = (poly[(i + 5) % 6], poly[i]);
                let (sp, sq) = (sv[(i + 5) % 6], sv[i]);
                let met = (sp == 0 && sq == 0) || (sp > 0 && sq < 0) || (sp < 0 && sq > 0);
                // A hexside is reported once, by the hex owning it.
                let owner = met
                    && (i < 3
                        || hex
                            .step(DIRECTIONS[i])
                            .is_none_or(|n| !map.cell(grid, n).present));
                if owner {
                    if sp == 0 && sq == 0 {
                        let (tp, tq) = (dot(sub(p, a), d), dot(sub(q, a), d));
                        let (l, h) = (tp.min(tq).max(0), tp.max(tq).min(dd));
                        if l < h {
                            out.push(((l + h) as f64 / 2.0 / dd as f64, Meet::Along(hex, i)));
                        }
                    } else if (sp > 0 && sq < 0) || (sp < 0 && sq > 0) {
                        let e = sub(q, p);
                        let (mut num, mut den) = (cross(sub(p, a), e), cross(d, e));
                        if den < 0 {
                            num = -num;
                            den = -den;
                        }
                        if num > 0 && num < den {
                            out.push((num as f64 / den as f64, Meet::Cross(hex, i)));
                        }
                    }
                }
                // Vertex i, once: owned by the hex that meets it first in this scan order
                // among present hexes (the lowest (column, row) of the three).
                let v = poly[i];
                if sq == 0 {
                    let t = dot(sub(v, a), d);
                    if t > 0 && t < dd {
                        out.push((param(v), Meet::Vertex(hex, i)));
                    }
                }
            }
        }
    }
    // The verdict does not depend on the order of meets at one point; only which of them
    // is named first as the reason might.
    out.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
    // A vertex is met from each hex around it; keep one.
    let mut seen: Vec<(i64, i64)> = Vec::new();
    out.retain(|(_, m)| match m {
        Meet::Vertex(h, i) => {
            let c = h.plane();
            let p = (c.0 + VERTEX[*i].0, c.1 + VERTEX[*i].1);
            if seen.contains(&p) {
                false
            } else {
                seen.push(p);
                true
            }
        }
        _ => true,
    });
    out
}

/// The three hexes at vertex `i` of `hex` (the hex itself first), where they exist by name.
fn vertex_hexes(hex: Hex, i: usize) -> Vec<Hex> {
    let mut v = vec![hex];
    v.extend(hex.step(DIRECTIONS[i]));
    v.extend(hex.step(DIRECTIONS[(i + 1) % 6]));
    v
}

/// The two vertices (as sets of three hexes) at the ends of the hexside in direction `i`.
fn side_ends(hex: Hex, i: usize) -> [Vec<Hex>; 2] {
    [vertex_hexes(hex, (i + 5) % 6), vertex_hexes(hex, i)]
}

fn vertex_name(hexes: &[Hex]) -> String {
    hexes
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join("-")
}

fn levels(h: Halves) -> String {
    match (h / 2, h % 2) {
        (0, 1) => "½".into(),
        (w, 1) => format!("{w}½"),
        (w, _) => format!("{w}"),
    }
}

/// Marks the LOS blocked, with its reason written only when the answer is to be explained
/// (`Trace::explain`): a verdict alone costs no text.
macro_rules! block {
    ($t:expr, $($why:tt)*) => {{
        $t.blocked = true;
        if $t.explain {
            let why = format!($($why)*);
            $t.reasons.push(why);
        }
    }};
}

/// The tracer's working state for one LOS.
struct Trace<'a> {
    map: &'a LosMap,
    grid: &'a [Cell],
    from: End,
    to: End,
    lo: Halves,
    hi: Halves,
    /// Write the reasons and the path (the `los` question, refusals); a verdict alone skips
    /// them (`verdict`).
    explain: bool,
    reasons: Vec<String>,
    blocked: bool,
    hindrance: u8,
    /// Hexes whose hindrance has counted, one bit per grid slot: each counts once.
    hindered: [u64; HINDERED_WORDS],
    walls: Vec<Hexside>,
}

/// What casts Blind Hexes, for their count (A6.41, A6.42, B9.531, B10.23).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Blind {
    /// A hex obstacle (woods, building, orchard in season …) or a bocage hexspine: at least one.
    Obstacle,
    /// A bocage hexside, read as a Single-Story House behind it (B9.52): may come to zero.
    BocageHexside,
    /// The ground of a hill: no Blind Hex of its own, may come to zero (B10.23).
    Crest,
}

/// How an obstacle of a given top meets this LOS.
enum Effect {
    None,
    Blocks,
    /// Lower than the higher end, higher than the lower: Blind Hexes may apply (A6.4).
    Over,
}

impl Trace<'_> {
    fn cell(&self, hex: Hex) -> Cell {
        self.map.cell(self.grid, hex)
    }

    fn is_end(&self, hex: Hex) -> bool {
        hex == self.from.hex || hex == self.to.hex
    }

    /// A terrain obstacle (woods, building, wall …) blocks when at least as high as both ends
    /// (A6.2); one between the two levels is looked over.
    fn terrain_effect(&self, top: Halves) -> Effect {
        if top >= self.hi {
            Effect::Blocks
        } else if top > self.lo {
            Effect::Over
        } else {
            Effect::None
        }
    }

    /// The ground of a hill: same-level LOS runs over ground of its own level (B10.21), a
    /// lower Location cannot see past a crest of the higher one's level (B10.2).
    fn ground_effect(&self, top: Halves) -> Effect {
        if top > self.hi || (top == self.hi && self.lo < self.hi) {
            Effect::Blocks
        } else if top > self.lo {
            Effect::Over
        } else {
            Effect::None
        }
    }

    /// Whether the lower end lies in the Blind Hexes that `kind` of obstacle, its top at `top`,
    /// at `at` (a hex, or the farther of a hexspine's two) casts away from the higher end.
    /// A6.4/A6.41: an obstacle leaves its own Blind Hex plus one per full five hexes of range
    /// from the higher end to it; A6.42: one fewer for each full level the higher end stands
    /// above the obstacle's top beyond the first, never below one — except behind a bocage
    /// hexside (B9.531), which may come to zero. A bare crest line (B10.23) leaves no Blind Hex
    /// of its own, only the one per five hexes of range, and may come to zero too.
    fn blind(&self, at: Hex, top: Halves, kind: Blind) -> bool {
        let (high, low) = if self.from.level >= self.to.level {
            (self.from, self.to)
        } else {
            (self.to, self.from)
        };
        let (Some(total), Some(to_obstacle)) = (high.hex.distance(low.hex), high.hex.distance(at))
        else {
            return false;
        };
        let beyond = i64::from(total) - i64::from(to_obstacle);
        let by_range = i64::from(to_obstacle / BLIND_HEX_RANGE_STEP);
        let own = i64::from(kind != Blind::Crest);
        let advantage = (i64::from((high.level - top) / 2) - 1).max(0);
        let floor = i64::from(kind == Blind::Obstacle);
        let count = (own + by_range - advantage).max(floor);
        beyond >= 1 && beyond <= count
    }

    /// The hex of the higher end (the viewer's when level).
    fn higher_hex(&self) -> Hex {
        if self.from.level >= self.to.level {
            self.from.hex
        } else {
            self.to.hex
        }
    }

    /// Of a hexside's two hexes, the one farther from the higher end: where a bocage
    /// hexside's virtual obstacle stands (B9.52).
    fn farther_of(&self, side: Hexside) -> Hex {
        let high = self.higher_hex();
        if high.distance(side.a) >= high.distance(side.b) {
            side.a
        } else {
            side.b
        }
    }

    /// The hindrance of `hex`, a hex between the two ends, once per hex (A6.1; neither end's
    /// own hex hinders, B12.2, B14.21, B17.2).
    fn hinder(&mut self, hex: Hex) {
        let at = slot(hex.column, hex.row);
        if self.hindered[at / 64] & (1 << (at % 64)) != 0 {
            return;
        }
        let cell = self.cell(hex);
        let los = cell.terrain.row().los;
        if los.hindrance == 0 || !in_months(los.months, self.map.month) {
            return;
        }
        let obstacle_now = los.obstacle_to_higher_months.is_some()
            && in_months(los.obstacle_to_higher_months, self.map.month)
            && self.lo < self.hi;
        if obstacle_now {
            return; // an obstacle to this LOS instead (B14)
        }
        if los.same_level_only && !(self.lo == self.hi && self.hi == cell.level) {
            return;
        }
        let row = cell.terrain.row();
        let top = cell.level + 2;
        let counts = match self.terrain_effect(top) {
            Effect::Blocks => true,
            Effect::Over => self.blind(hex, top, Blind::Obstacle),
            Effect::None => false,
        };
        if counts {
            self.hindered[at / 64] |= 1 << (at % 64);
            self.hindrance = self.hindrance.saturating_add(los.hindrance);
            if self.explain {
                self.reasons.push(format!(
                    "{} in {hex}: +{} Hindrance ({}, A6.1)",
                    row.name, los.hindrance, row.rule
                ));
            }
        }
    }

    /// A hex obstacle (woods, building, orchard in season to a higher LOS …) at `hex` met by
    /// the thread; `how` says where (interior or along which hexside).
    fn hex_obstacle(&mut self, hex: Hex, how: &str) {
        let cell = self.cell(hex);
        let row = cell.terrain.row();
        let ground = cell.level;
        match self.ground_effect(ground) {
            Effect::Blocks => {
                return block!(self,
                    "the hill at level {} in {hex} stands in the way{how} (B10.2)",
                    levels(ground)
                )
            }
            Effect::Over if self.blind(hex, ground, Blind::Crest) => {
                return block!(self,
                    "the crest of the level {} hill in {hex} leaves a Blind Hex where the lower end stands (A6.4, B10.23)",
                    levels(ground)
                )
            }
            _ => {}
        }
        let mut height = cell.height;
        let in_season_obstacle = in_months(row.los.obstacle_to_higher_months, self.map.month)
            && row.los.obstacle_to_higher_months.is_some();
        if height == 0 && in_season_obstacle && self.lo < self.hi {
            height = 2;
        }
        if height == 0 {
            return;
        }
        let top = ground + height;
        match self.terrain_effect(top) {
            Effect::Blocks => block!(
                self,
                "{} in {hex}{how} is a level {} obstacle to this LOS ({}, A6.2)",
                row.name,
                levels(top),
                row.rule
            ),
            Effect::Over
                if (row.los.blind_hexes || in_season_obstacle)
                    && self.blind(hex, top, Blind::Obstacle) =>
            {
                block!(self,
                    "{} in {hex} (level {}) leaves a Blind Hex where the lower end stands ({}, A6.4)",
                    row.name,
                    levels(top),
                    row.rule
                )
            }
            _ => {}
        }
    }

    /// Whether the depiction in `hex` is met by the segment, given that its interior is.
    fn depiction_crossed(&self, hex: Hex, a: (i64, i64), d: (i64, i64)) -> bool {
        let cell = self.cell(hex);
        if !cell.inset {
            return true;
        }
        let c = hex.plane();
        let outer = hexagon(c, 2);
        let inner = hexagon(c, 1);
        if through_convex(a, d, &inner).is_some() {
            return true;
        }
        (0..6).any(|i| {
            cell.touches & (1 << i) != 0 && {
                let j = (i + 5) % 6;
                through_convex(a, d, &[outer[j], outer[i], inner[i], inner[j]]).is_some()
            }
        })
    }

    fn side(&self, hex: Hex, i: usize) -> Option<(Hexside, SideLos)> {
        let s = self.cell(hex).sides[i]?;
        let n = hex.step(DIRECTIONS[i])?;
        Some((hex.hexside(n)?, s))
    }

    fn own(&self, side: Hexside) -> bool {
        side.touches(self.from.hex) || side.touches(self.to.hex)
    }

    fn note_wall(&mut self, side: Hexside) {
        if !self.walls.contains(&side) {
            self.walls.push(side);
        }
    }

    /// A wall/hedge/bocage hexside crossed by the thread (or touched at one of its vertices,
    /// B9.1: the depiction includes them).
    fn crossed_feature(&mut self, side: Hexside, s: SideLos, at_vertex: bool) {
        self.note_wall(side);
        if s.gap {
            return;
        }
        let name = s.feature.name();
        let top = s.base + Halves::from(s.feature.row().los_height);
        let how = if at_vertex {
            "touched at its vertex"
        } else {
            "crossed"
        };
        if s.feature != HexsideFeature::Bocage {
            if self.own(side) {
                return; // never an obstacle to its own hex (B9.2)
            }
            if let Effect::Blocks = self.terrain_effect(top) {
                block!(self,
                    "the {name} on {side} ({how}) is a Half-Level obstacle to same-level LOS (B9.2)"
                );
            }
            return;
        }
        match self.terrain_effect(top) {
            Effect::Blocks => self.bocage_same_level(side, how),
            Effect::Over => {
                // The hex behind the hexside from the higher end holds a virtual one-level
                // obstacle, a "Single-Story House" (B9.52).
                let behind = self.farther_of(side);
                if self.blind(behind, top, Blind::BocageHexside) {
                    block!(
                        self,
                        "the bocage on {side} leaves a Blind Hex behind {behind} (B9.52, A6.4)"
                    );
                }
                self.bocage_hides_target(side);
            }
            Effect::None => self.bocage_hides_target(side),
        }
    }

    /// B9.521: what a viewer sees through a bocage hexside at its own level depends on where
    /// it stands and on its Wall Advantage.
    fn bocage_same_level(&mut self, side: Hexside, how: &str) {
        let (v, t) = (self.from, self.to);
        if side.touches(v.hex) {
            if v.has_wa_over(side) {
                return; // sees freely through it and beyond
            }
            if side.other(v.hex) == Some(t.hex) {
                return; // the adjacent hex, all of it
            }
            return block!(self,
                "bocage on {side}: without WA over it the viewer sees only the adjacent hex (B9.521)"
            );
        }
        if side.touches(t.hex) {
            return self.bocage_hides_target(side);
        }
        block!(
            self,
            "bocage on {side} ({how}): LOS enters the hex behind it but not beyond (B9.521)"
        )
    }

    /// B9.521: from outside the hexes the hexside forms, a unit without WA behind bocage of
    /// its own hex is not seen (the hex itself is).
    fn bocage_hides_target(&mut self, side: Hexside) {
        let (v, t) = (self.from, self.to);
        if side.touches(t.hex) && !side.touches(v.hex) && t.unit && !t.has_wa_over(side) {
            block!(self,
                "the target has no WA over the bocage on {side}: its hex is seen, the unit is not (B9.521)"
            );
        }
    }

    /// A wall/hedge/bocage lying lengthwise on the thread (B9.2, B9.52).
    fn along_feature(&mut self, hex: Hex, i: usize, side: Hexside, s: SideLos) {
        self.note_wall(side);
        if s.gap {
            return;
        }
        let top = s.base + Halves::from(s.feature.row().los_height);
        if s.feature == HexsideFeature::Bocage {
            // Never traced along: a normal one-level obstacle, at least one Blind Hex (B9.52).
            match self.terrain_effect(top) {
                Effect::Blocks => block!(
                    self,
                    "LOS along the bocage hexspine {side} is blocked (B9.52)"
                ),
                Effect::Over => {
                    let far = self.farther_of(side);
                    if self.blind(far, top, Blind::Obstacle) {
                        block!(self,
                            "the bocage hexspine {side} is a one-level obstacle leaving at least one Blind Hex (B9.52, B9.531)"
                        );
                    }
                }
                Effect::None => {}
            }
            return;
        }
        if !matches!(self.terrain_effect(top), Effect::Blocks) {
            return;
        }
        let touching: Vec<bool> = side_ends(hex, i)
            .iter()
            .map(|v| v.contains(&self.from.hex) || v.contains(&self.to.hex))
            .collect();
        let name = s.feature.name();
        match (touching[0], touching[1]) {
            (false, false) => block!(self,
                "the {name} hexspine {side} lies along the LOS away from both ends: a Half-Level obstacle (B9.2)"
            ),
            (true, true) => {}
            (near, _) => {
                let opposite = &side_ends(hex, i)[usize::from(near)];
                let all_three = opposite.len() == 3
                    && [(0, 1), (1, 2), (0, 2)].iter().all(|(x, y)| {
                        opposite[*x]
                            .hexside(opposite[*y])
                            .and_then(|h| self.wall_on(h))
                            .is_some_and(|w| !w.gap)
                    });
                if all_three {
                    block!(self,
                        "the {name} hexspine {side} ends at vertex {} with walls/hedges on all three hexspines (B9.2)",
                        vertex_name(opposite)
                    );
                }
            }
        }
    }

    fn wall_on(&self, side: Hexside) -> Option<SideLos> {
        let d = side.a.direction_to(side.b)?;
        self.cell(side.a).sides[d.index()]
    }

    /// B9.21: beneath an entrenchment, no LOS across a same-level wall/hedge (its own
    /// included) to or from a non-adjacent Location that is not at least half a level higher.
    fn entrenchment(&mut self) {
        for (e, o) in [(self.from, self.to), (self.to, self.from)] {
            if !e.entrenched || e.hex.is_adjacent(o.hex) || o.level > e.level {
                continue;
            }
            let wall = self
                .walls
                .iter()
                .find(|s| {
                    self.wall_on(**s)
                        .is_some_and(|w| !w.gap && w.base == e.level)
                })
                .copied();
            if let Some(side) = wall {
                block!(self,
                    "the unit in {} is beneath an entrenchment and the LOS crosses the same-level {} on {side} (B9.21)",
                    e.hex,
                    self.wall_on(side).map_or("wall", |w| w.feature.name())
                );
            }
        }
    }
}

/// Traces the LOS from `from` to `to` over `map`, with its reasons and path.
pub fn trace(map: &LosMap, from: End, to: End) -> Result<LosReport, LosError> {
    trace_with(map, from, to, true)
}

/// The verdict alone: the same trace with no reasons or path written, for the rules that only
/// need to know (who sees a tunnel entrance, a road Manhole, a unit to cover).
pub fn verdict(map: &LosMap, from: End, to: End) -> Result<Verdict, LosError> {
    trace_with(map, from, to, false).map(|r| r.verdict)
}

/// Traces the LOS; `explain` writes the reasons and the path, which the verdict never reads.
pub fn trace_with(map: &LosMap, from: End, to: End, explain: bool) -> Result<LosReport, LosError> {
    if let Some(real) = &map.real {
        let boards = real.as_ref().map_err(|why| LosError::Boards(why.clone()))?;
        return trace_real(map, boards, from, to, explain);
    }
    if from.hex.board != to.hex.board {
        return Err(LosError::BoardsNotJoined(from.hex, to.hex));
    }
    let grid = map
        .boards
        .get(&from.hex.board)
        .ok_or(LosError::NotOnMap(from.hex))?;
    for e in [from, to] {
        if !grid[slot(e.hex.column, e.hex.row)].present {
            return Err(LosError::NotOnMap(e.hex));
        }
    }
    let mut t = Trace {
        map,
        grid,
        from,
        to,
        lo: from.level.min(to.level),
        hi: from.level.max(to.level),
        explain,
        reasons: vec![],
        blocked: false,
        hindrance: 0,
        hindered: [0; HINDERED_WORDS],
        walls: vec![],
    };
    let (a, b) = (from.xy(), to.xy());
    let mut path = if explain { vec![from.hex] } else { vec![] };
    if a != b {
        let d = sub(b, a);
        for (_, m) in meets(map, grid, from.hex.board, a, b) {
            if t.blocked {
                break; // the first thing that blocks is the answer's reason
            }
            match m {
                Meet::Interior(h) => {
                    if explain && !path.contains(&h) {
                        path.push(h);
                    }
                    let centre_end = |e: &End| e.hex == h && matches!(e.point, Point::Centre);
                    if centre_end(&from) || centre_end(&to) {
                        continue; // a Location's own terrain never blocks its LOS (A6.2)
                    }
                    if t.is_end(h) {
                        // A vertex end in this hex (Bypass): the obstacle it goes round
                        // still blocks a thread through its depiction (A4.34).
                        if t.depiction_crossed(h, a, d) && t.cell(h).height > 0 {
                            let row = t.cell(h).terrain.row();
                            block!(
                                t,
                                "the thread crosses the {} in {h} that the unit goes round (A4.34)",
                                row.name
                            );
                        }
                        continue;
                    }
                    if t.depiction_crossed(h, a, d) {
                        t.hex_obstacle(h, "");
                    } else {
                        // Only the open part of the hex: its ground still counts.
                        t.hex_obstacle_ground_only(h);
                    }
                    t.bocage_house(h);
                    t.hinder(h);
                }
                Meet::Cross(h, i) => {
                    if let Some((side, s)) = t.side(h, i) {
                        t.crossed_feature(side, s, false);
                    }
                }
                Meet::Along(h, i) => {
                    let Some(n) = h.step(DIRECTIONS[i]) else {
                        continue;
                    };
                    let side = h.hexside(n).expect("adjacent");
                    if let Some((_, s)) = t.side(h, i) {
                        t.along_feature(h, i, side, s);
                    }
                    // Obstacles on both sides of the thread block it (A6.1); the ground of a
                    // hill on both sides too. Inherent terrain hinders along its hexside.
                    let (ch, cn) = (t.cell(h), t.cell(n));
                    if !t.is_end(h) && !t.is_end(n) && cn.present {
                        let touch = |c: &Cell, dir: usize| {
                            c.height > 0 && (!c.inset || c.touches & (1 << dir) != 0)
                        };
                        let back = (i + 3) % 6;
                        let ground = ch.level.min(cn.level);
                        if let Effect::Blocks = t.ground_effect(ground) {
                            block!(t,
                                "hill ground at level {} on both sides of the hexspine {side} (B10.2)",
                                levels(ground)
                            );
                        } else if touch(&ch, i) && touch(&cn, back) {
                            let top = (ch.level + ch.height).min(cn.level + cn.height);
                            if let Effect::Blocks = t.terrain_effect(top) {
                                block!(t, "obstacles on both sides of the hexspine {side} (A6.1)");
                            }
                        }
                    }
                    for x in [h, n] {
                        if !t.is_end(x) && t.cell(x).present {
                            t.hinder(x);
                        }
                    }
                }
                Meet::Vertex(h, i) => {
                    let around = vertex_hexes(h, i);
                    for (x, y) in [(0, 1), (1, 2), (0, 2)] {
                        let (Some(p), Some(q)) = (around.get(x), around.get(y)) else {
                            continue;
                        };
                        let Some(side) = p.hexside(*q) else { continue };
                        let Some(s) = t.wall_on(side) else { continue };
                        // A wall the thread runs along was judged by the hexspine rule,
                        // which also decides its vertices (B9.2).
                        if t.walls.contains(&side) || along_at(&t, side, a, d) {
                            continue;
                        }
                        let runs_along_wall = around.iter().enumerate().any(|(k, hx)| {
                            around.iter().skip(k + 1).any(|hy| {
                                hx.hexside(*hy).is_some_and(|sd| {
                                    t.wall_on(sd).is_some() && along_at(&t, sd, a, d)
                                })
                            })
                        });
                        if runs_along_wall {
                            continue;
                        }
                        t.crossed_feature(side, s, true);
                    }
                }
            }
        }
    }
    if explain && !path.contains(&to.hex) {
        path.push(to.hex);
    }
    // Neither end's own hex hinders: only hexes between firer and target do (B12.2, B14.21,
    // B17.2), so the answer is the same whichever end fires.
    t.entrenchment();
    let verdict = if t.blocked {
        Verdict::Blocked
    } else if t.hindrance >= HINDRANCE_BLOCKS {
        if explain {
            t.reasons.push(format!(
                "the hindrances total +{}: +{HINDRANCE_BLOCKS} or more block the LOS (A6.7)",
                t.hindrance
            ));
        }
        Verdict::Blocked
    } else if t.hindrance > 0 {
        Verdict::Hindered(t.hindrance)
    } else {
        Verdict::Clear
    };
    if explain && t.reasons.is_empty() {
        t.reasons
            .push("nothing on the thread blocks or hinders it (A6.1)".to_string());
    }
    Ok(LosReport {
        verdict,
        reasons: t.reasons,
        path,
        walls: t.walls,
    })
}

/// How a thread from the centre of `from` arrives at a vertex end (B9.42): along one of the
/// three hexsides that meet there, or through one of the three hexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Along(Hexside),
    Through(Hex),
}

/// Where the thread from `from`'s centre enters the vertex `at` (which must be a vertex end);
/// `None` for a centre end or a vertex whose hexes lie off the map. On a map of several
/// boards the vertex and the hexes round it are the map's (`board::geometry`).
pub fn arrival(geometry: Geometry<'_>, from: Hex, at: &End) -> Option<Arrival> {
    let Point::Vertex(i) = at.point else {
        return None;
    };
    let i = usize::from(i) % 6;
    let h = at.hex;
    let (n1, n2) = (
        geometry.step(h, DIRECTIONS[i])?,
        geometry.step(h, DIRECTIONS[(i + 1) % 6])?,
    );
    let c = geometry.plane(h)?;
    let v = {
        let (dx, dy) = VERTEX[i];
        (c.0 + dx, c.1 + dy)
    };
    let w1 = (c.0 + VERTEX[(i + 5) % 6].0, c.1 + VERTEX[(i + 5) % 6].1);
    let w2 = (c.0 + VERTEX[(i + 1) % 6].0, c.1 + VERTEX[(i + 1) % 6].1);
    let (e1, e2) = (sub(w1, v), sub(w2, v));
    let e3 = (-(e1.0 + e2.0), -(e1.1 + e2.1));
    let u = sub(geometry.plane(from)?, v);
    // Each hexside at the vertex, by the two hexes it divides.
    let spines = [(e1, h, n1), (e2, h, n2), (e3, n1, n2)];
    for (e, x, y) in spines {
        if cross(u, e) == 0 && dot(u, e) > 0 {
            return geometry.hexside(x, y).map(Arrival::Along);
        }
    }
    let between = |a: (i64, i64), b: (i64, i64)| {
        let turn = cross(a, b).signum();
        cross(a, u).signum() == turn && cross(u, b).signum() == turn
    };
    Some(Arrival::Through(if between(e1, e2) {
        h
    } else if between(e1, e3) {
        n1
    } else {
        n2
    }))
}

/// Whether the segment runs along `side` (collinear with positive overlap).
fn along_at(_t: &Trace<'_>, side: Hexside, a: (i64, i64), d: (i64, i64)) -> bool {
    let Some(dir) = side.a.direction_to(side.b) else {
        return false;
    };
    let i = dir.index();
    let c = side.a.plane();
    let p = (c.0 + VERTEX[(i + 5) % 6].0, c.1 + VERTEX[(i + 5) % 6].1);
    let q = (c.0 + VERTEX[i].0, c.1 + VERTEX[i].1);
    if cross(d, sub(p, a)) != 0 || cross(d, sub(q, a)) != 0 {
        return false;
    }
    let dd = dot(d, d);
    let (tp, tq) = (dot(sub(p, a), d), dot(sub(q, a), d));
    tp.min(tq).max(0) < tp.max(tq).min(dd)
}

impl Trace<'_> {
    /// B9.52: seen from above, a hex behind bocage (a bocage hexside facing the higher end)
    /// is as if it held a "Single-Story House", a one-level obstacle leaving Blind Hexes.
    fn bocage_house(&mut self, hex: Hex) {
        let high = self.higher_hex();
        let cell = self.cell(hex);
        let top = cell.level + 2;
        if !matches!(self.terrain_effect(top), Effect::Over) {
            return;
        }
        let facing = (0..6).find_map(|i| {
            let s = cell.sides[i]?;
            let n = hex.step(DIRECTIONS[i])?;
            (s.feature == HexsideFeature::Bocage && !s.gap && high.distance(n) < high.distance(hex))
                .then(|| hex.hexside(n))
                .flatten()
        });
        if let Some(side) = facing {
            if self.blind(hex, top, Blind::BocageHexside) {
                block!(self,
                    "behind the bocage on {side}, {hex} is as if it held a Single-Story House: the lower end is in its Blind Hex (B9.52, A6.4)"
                );
            }
        }
    }

    /// The thread passes only the open part of an inset obstacle hex: the hill it stands on
    /// may still block.
    fn hex_obstacle_ground_only(&mut self, hex: Hex) {
        let ground = self.cell(hex).level;
        match self.ground_effect(ground) {
            Effect::Blocks => block!(self,
                "the hill at level {} in {hex} stands in the way (B10.2)",
                levels(ground)
            ),
            Effect::Over if self.blind(hex, ground, Blind::Crest) => block!(self,
                "the crest of the level {} hill in {hex} leaves a Blind Hex where the lower end stands (A6.4, B10.23)",
                levels(ground)
            ),
            _ => {}
        }
    }
}
