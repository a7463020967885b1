//! A map of VASL geomorphic boards laid edge to edge, some rotated: where each hex is in the
//! map's pixels, which hex a pixel lies in, and what the board shows for each hex (terrain at
//! its centre, base level, hexside terrain, building type).
//!
//! The boards' terrain grids are shared (`Arc`), never copied: every game on the same boards
//! reads the same pixels, and a map costs only its per-hex table (a few tens of KiB for four
//! boards). A pixel of the map is found by going through the board placed there, turning the
//! coordinates round for a board rotated 180°.
//!
//! Geometry follows VASL's (its `Map`/`Hex` classes, read to learn the layout; this code is the
//! project's own): hexes are flat-topped, columns 56.25 px apart, rows 64.5 px; a hex's LOS
//! point is its centre truncated to whole pixels; boards sit 1800 px apart across and 645 px
//! down, so the last column of one board (GG) and the first of the next (A) are the same hexes,
//! as are the half hexes of row 10 and row 0 one above the other. Such a seam hex takes the
//! name of the board placed later (east, then south), as VASL does when it builds a map.

use std::sync::Arc;

use super::archive::{BoardArchive, A1_CENTRE_Y, HEX_HEIGHT, HEX_WIDTH};
use super::codes::{Category, TerrainCode, TerrainTable};
use crate::hex::{Hex, COLUMN_MAX};

/// One board placed on a map.
#[derive(Clone, Debug)]
pub struct Placed {
    /// The board's number (archive `bd01` is board 1): the board part of its hex names.
    pub number: u16,
    /// Turned 180°: its north-west corner hex is GG10.
    pub rotated: bool,
    pub archive: Arc<BoardArchive>,
}

/// Why a map could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("a map needs at least one row of boards, all rows the same length")]
    Shape,
    #[error("board {0} is {1} x {2} px / {3} x {4} hexes; every board of a map must be a geomorphic 1800 x 645 px, 33 x 10 hexes")]
    BoardSize(u16, u32, u32, u16, u16),
}

/// A map position in VASL's grid of hexes: column (0 = the west edge) and index within the
/// column (odd columns start with the half hex on the north edge).
pub(crate) type Spot = (i32, i32);

/// Bits of [`Props::flags`]: what the LOS rules ask of a terrain code, looked up once.
pub(crate) mod flag {
    pub const OBSTACLE: u32 = 1;
    pub const HINDRANCE: u32 = 1 << 1;
    pub const HALF_LEVEL: u32 = 1 << 2;
    pub const INHERENT: u32 = 1 << 3;
    pub const SPLIT: u32 = 1 << 4;
    pub const LOWER_OBSTACLE: u32 = 1 << 5;
    pub const LOWER_HINDRANCE: u32 = 1 << 6;
    /// Drawn along hexsides (walls, hedges, bocage, cliffs).
    pub const HEXSIDE: u32 = 1 << 7;
    pub const CLIFF: u32 = 1 << 8;
    /// Buildings, factories and marketplaces.
    pub const BUILDING: u32 = 1 << 9;
    /// Buildings and marketplaces (not factories): the terrain a LOS must leave (A6.8).
    pub const BUILDING_TERRAIN: u32 = 1 << 10;
    /// Open ground, roads, water.
    pub const OPEN: u32 = 1 << 11;
    pub const LIGHT_WOODS: u32 = 1 << 12;
    pub const BOCAGE: u32 = 1 << 13;
    pub const ROAD_OR_BRIDGE: u32 = 1 << 14;
    pub const ORCHARD_OUT_OF_SEASON: u32 = 1 << 15;
    pub const WATER: u32 = 1 << 16;
    pub const FACTORY: u32 = 1 << 17;
    pub const MARKETPLACE: u32 = 1 << 18;
    /// A code the terrain table does not define.
    pub const UNKNOWN: u32 = 1 << 19;
    /// Gullies, streams, sunken roads: a hex below the ground around it (B19, A6.3).
    pub const DEPRESSION: u32 = 1 << 20;
    /// Bridges: a Hindrance where the thread crosses their depiction, never a hill or crest
    /// (B6; the terrain chart's bridge row).
    pub const BRIDGE: u32 = 1 << 21;
}

/// A terrain code's properties, packed for the LOS walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Props {
    pub flags: u32,
    /// Height in levels above its ground.
    pub height: i8,
}

impl Props {
    pub fn has(self, bits: u32) -> bool {
        self.flags & bits != 0
    }
}

/// Per code, its [`Props`].
pub(crate) fn props_table(table: &TerrainTable) -> Box<[Props; 256]> {
    let mut out = Box::new(
        [Props {
            flags: flag::UNKNOWN,
            height: 0,
        }; 256],
    );
    for code in 0..=255u8 {
        let Some(t) = table.get(code) else { continue };
        let mut f = 0;
        let mut set = |c: bool, b: u32| {
            if c {
                f |= b
            }
        };
        set(t.obstacle, flag::OBSTACLE);
        set(t.hindrance, flag::HINDRANCE);
        set(t.half_level, flag::HALF_LEVEL);
        set(t.inherent, flag::INHERENT);
        set(t.split_halves != 0, flag::SPLIT);
        set(t.lower_obstacle, flag::LOWER_OBSTACLE);
        set(t.lower_hindrance, flag::LOWER_HINDRANCE);
        set(t.category == Category::Hexside, flag::HEXSIDE);
        set(t.name == "Cliff", flag::CLIFF);
        set(
            matches!(
                t.category,
                Category::Building | Category::Factory | Category::Marketplace
            ),
            flag::BUILDING,
        );
        set(
            matches!(t.category, Category::Building | Category::Marketplace),
            flag::BUILDING_TERRAIN,
        );
        set(
            matches!(
                t.category,
                Category::Open | Category::Road | Category::Water
            ),
            flag::OPEN,
        );
        set(t.name.contains("Light Woods"), flag::LIGHT_WOODS);
        set(t.name == "Bocage", flag::BOCAGE);
        set(
            t.category == Category::Bridge || t.name.contains("Road"),
            flag::ROAD_OR_BRIDGE,
        );
        set(
            t.name == "Orchard, Out of Season",
            flag::ORCHARD_OUT_OF_SEASON,
        );
        set(t.category == Category::Water, flag::WATER);
        set(t.category == Category::Factory, flag::FACTORY);
        set(t.category == Category::Marketplace, flag::MARKETPLACE);
        set(t.category == Category::Depression, flag::DEPRESSION);
        set(t.category == Category::Bridge, flag::BRIDGE);
        out[usize::from(code)] = Props {
            flags: f,
            height: t.height,
        };
    }
    out
}

/// Marks a hexside with no hexside terrain in [`Cell::sides`].
pub const NO_HEXSIDE: TerrainCode = 0xFF;

/// What the board shows for one hex of the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Its printed name: board, column, row.
    pub hex: Hex,
    /// The terrain at its centre dot; a building drawn past the dot but over a hexside
    /// midpoint counts as the hex's (a building hex whose artwork misses the dot is still a
    /// building hex, B4), and inherent terrain anywhere nearer the centre than a hexside fills
    /// the hex (B.6).
    pub centre: TerrainCode,
    /// Base level: the elevation under the centre dot (B10.1).
    pub base: i8,
    /// Per direction (N, NE, SE, S, SW, NW), the hexside terrain along that side, or
    /// [`NO_HEXSIDE`]; taken from the pixel just inside the side's midpoint on either side.
    pub sides: [TerrainCode; 6],
    /// Per direction, the terrain just inside the side's midpoint (whatever it is).
    pub side_terrain: [TerrainCode; 6],
    /// Index of the placement the hex's facts come from.
    pub placed: u8,
    /// Index into that board's metadata `building_types`, if it names this hex.
    pub building: u16,
}

/// No building type named for the hex.
const NO_BUILDING: u16 = u16::MAX;

/// Hex geometry of one grid (a board on its own, or a whole map): VASL's layout with its edge
/// rules. All coordinates are pixels of that grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub width: i64,
    pub height: i64,
    /// Hex columns.
    pub columns: i32,
    /// Hexes in an even (full-height) column; odd columns hold one more.
    pub rows: i32,
}

/// cos 30° × half a hex height: how far a hexside midpoint of a slanted side sits across.
fn slant_offset() -> f64 {
    (30.0f64).to_radians().cos() * (HEX_HEIGHT / 2.0)
}

impl Geometry {
    pub fn column_len(&self, c: i32) -> i32 {
        self.rows + (c & 1)
    }

    pub fn contains_spot(&self, (c, r): Spot) -> bool {
        c >= 0 && c < self.columns && r >= 0 && r < self.column_len(c)
    }

    /// Hexes in the grid.
    pub fn hex_count(&self) -> usize {
        (0..self.columns).map(|c| self.column_len(c) as usize).sum()
    }

    /// Index of a spot in a column-by-column table.
    pub fn index(&self, (c, r): Spot) -> usize {
        let full = (c / 2) as usize * (2 * self.rows as usize + 1);
        let half = if c & 1 == 1 { self.rows as usize } else { 0 };
        full + half + r as usize
    }

    /// The centre before the edge rule, as VASL computes it.
    fn centre_dot(&self, (c, r): Spot) -> (f64, f64) {
        (
            HEX_WIDTH * f64::from(c),
            A1_CENTRE_Y + HEX_HEIGHT * f64::from(r) - HEX_HEIGHT / 2.0 * f64::from(c & 1),
        )
    }

    /// VASL's edge rule: a point one pixel off the top/left, or on/just past the right or
    /// bottom edge, is pulled onto the last pixel, so edge half hexes have on-grid points.
    fn fix(&self, x: f64, y: f64) -> (f64, f64) {
        let mut nx = if x == -1.0 { 0.0 } else { x };
        let mut ny = if y == -1.0 { 0.0 } else { y };
        let (ix, iy) = (nx as i64, ny as i64);
        if ix == self.width || ix == self.width + 1 {
            nx = (self.width - 1) as f64;
        }
        if iy == self.height || iy == self.height + 1 {
            ny = (self.height - 1) as f64;
        }
        (nx, ny)
    }

    /// The hex centre (after the edge rule), unrounded.
    pub fn centre(&self, s: Spot) -> (f64, f64) {
        let (x, y) = self.fix4(self.centre4(s));
        (x as f64 / 4.0, y as f64 / 4.0)
    }

    /// The pixel a LOS to or from the hex's centre starts at: its centre, truncated.
    pub fn los_point(&self, s: Spot) -> (i64, i64) {
        let (x, y) = self.fix4(self.centre4(s));
        (x / 4, y / 4)
    }

    /// The centre in quarter pixels, where every centre and vertex of the layout is a whole
    /// number (56.25 = 225/4, 32.25 = 129/4): the hot paths round and truncate exactly as the
    /// floating-point layout does, without floating point.
    fn centre4(&self, (c, r): Spot) -> (i64, i64) {
        let (c, r) = (i64::from(c), i64::from(r));
        (225 * c, 129 + 258 * r - 129 * (c & 1))
    }

    /// [`Geometry::fix`] in quarter pixels.
    #[inline]
    fn fix4(&self, (mut x, mut y): (i64, i64)) -> (i64, i64) {
        if x == -4 {
            x = 0;
        }
        if y == -4 {
            y = 0;
        }
        let (ix, iy) = (x / 4, y / 4);
        if ix == self.width || ix == self.width + 1 {
            x = 4 * (self.width - 1);
        }
        if iy == self.height || iy == self.height + 1 {
            y = 4 * (self.height - 1);
        }
        (x, y)
    }

    /// The six vertices in quarter pixels, after the edge rule.
    #[inline]
    fn vertices4(&self, s: Spot) -> [(i64, i64); 6] {
        let (x, y) = self.centre4(s);
        [
            (-75, -129),
            (75, -129),
            (150, 0),
            (75, 129),
            (-75, 129),
            (-150, 0),
        ]
        .map(|(dx, dy)| self.fix4((x + dx, y + dy)))
    }

    #[cfg(test)]
    fn vertices(&self, s: Spot) -> [(f64, f64); 6] {
        let (x, y) = self.centre_dot(s);
        let side = HEX_WIDTH * 2.0 / 3.0;
        let v = HEX_HEIGHT / 2.0;
        [
            self.fix(x - side / 2.0, y - v),
            self.fix(x + side / 2.0, y - v),
            self.fix(x + side, y),
            self.fix(x + side / 2.0, y + v),
            self.fix(x - side / 2.0, y + v),
            self.fix(x - side, y),
        ]
    }

    /// The hex outline, vertices rounded to pixels (clockwise from the north-west vertex).
    pub fn border(&self, s: Spot) -> [(i64, i64); 6] {
        self.vertices4(s)
            .map(|(x, y)| ((x + 2).div_euclid(4), (y + 2).div_euclid(4)))
    }

    #[cfg(test)]
    fn border_float(&self, s: Spot) -> [(i64, i64); 6] {
        self.vertices(s)
            .map(|(x, y)| ((x + 0.5).floor() as i64, (y + 0.5).floor() as i64))
    }

    /// The outline a pixel larger (as VASL draws it, a little lopsided): the source and target
    /// hexes of a LOS claim the pixels on their own hexsides.
    pub fn extended_border(&self, s: Spot) -> [(i64, i64); 6] {
        let v = self.vertices4(s).map(|(x, y)| (x / 4, y / 4));
        Self::extend(v)
    }

    #[cfg(test)]
    fn extended_border_float(&self, s: Spot) -> [(i64, i64); 6] {
        Self::extend(self.vertices(s).map(|(x, y)| (x as i64, y as i64)))
    }

    fn extend(v: [(i64, i64); 6]) -> [(i64, i64); 6] {
        [
            (v[0].0 - 1, v[0].1 - 1),
            (v[1].0 - 1, v[1].1 + 1),
            (v[2].0 + 1, v[2].1),
            (v[3].0 + 1, v[3].1 + 1),
            (v[4].0 - 1, v[4].1 + 1),
            (v[5].0 - 1, v[5].1),
        ]
    }

    /// Per direction, the pixel one in from the hexside's midpoint: where the hexside's
    /// terrain is read.
    pub fn edge_points(&self, s: Spot) -> [(i64, i64); 6] {
        let (x, y) = self.centre_dot(s);
        let h = slant_offset();
        let v = HEX_HEIGHT / 2.0;
        let t = |a: f64| (a as i64) as f64;
        let p = |a: f64, b: f64| {
            let (fx, fy) = self.fix(t(a), t(b));
            (fx as i64, fy as i64)
        };
        [
            p(x, -v + y + 1.0),
            p(h + x - 1.0, -v / 2.0 + y + 1.0),
            p(h + x - 1.0, v / 2.0 + y - 1.0),
            p(x, v + y - 1.0),
            p(-h + x + 1.0, v / 2.0 + y - 1.0),
            p(-h + x + 1.0, -v / 2.0 + y + 1.0),
        ]
    }

    /// Whether the hexside in direction `d` is on the map (edge half hexes lack some).
    pub fn side_on_map(&self, (c, r): Spot, d: usize) -> bool {
        let last_col = c + 1 == self.columns;
        let odd = c & 1 == 1;
        match d {
            0 => !(odd && r == 0),
            1 => !(last_col || odd && r == 0),
            2 => !(last_col || odd && r == self.rows),
            3 => !(odd && r == self.rows),
            4 => c != 0 && !(odd && r == self.rows),
            _ => c != 0 && !(odd && r == 0),
        }
    }

    /// The hex across the hexside in direction `d`, if the grid has one.
    pub fn adjacent(&self, (c, r): Spot, d: usize) -> Option<Spot> {
        let even = c & 1 == 0;
        let s = match d {
            0 => (c, r - 1),
            1 => (c + 1, if even { r } else { r - 1 }),
            2 => (c + 1, if even { r + 1 } else { r }),
            3 => (c, r + 1),
            4 => (c - 1, if even { r + 1 } else { r }),
            _ => (c - 1, if even { r } else { r - 1 }),
        };
        self.contains_spot(s).then_some(s)
    }

    /// Hex distance (A2.1's count of hexes, the firer's not counted).
    pub fn range(a: Spot, b: Spot) -> i32 {
        let dc = (a.0 - b.0).abs();
        let ya = 2 * a.1 + 1 - (a.0 & 1);
        let yb = 2 * b.1 + 1 - (b.0 & 1);
        let dy = (ya - yb).abs();
        dc + ((dy - dc).max(0)) / 2
    }

    /// Whether the hex outline holds the pixel (VASL's rounded outline and its even-odd,
    /// half-open edge rule).
    pub fn contains(&self, s: Spot, x: i64, y: i64) -> bool {
        polygon_contains(&self.border(s), x, y)
    }

    /// The hex a pixel lies in, found as VASL finds it: by column strip and row, testing the
    /// outlines only in the zig-zag strip between two columns.
    pub fn pixel_to_hex(&self, x: i64, y: i64) -> Option<Spot> {
        self.pixel_to_hex_with(x, y, |s, x, y| self.contains(s, x, y))
    }

    /// [`Geometry::pixel_to_hex`] with the outline test supplied (the LOS walk keeps the last
    /// few outlines rather than redrawing them for every pixel).
    #[inline]
    pub(crate) fn pixel_to_hex_with(
        &self,
        x: i64,
        y: i64,
        mut contains: impl FnMut(Spot, i64, i64) -> bool,
    ) -> Option<Spot> {
        if x < 0 || y < 0 || x >= self.width || y >= self.height {
            return None;
        }
        // Strips of a third of a column (18.75 px = 75/4) and rows of 64.5 px (129/2), in
        // whole numbers.
        let z = (4 * x / 75) as i32;
        let row_in = |c: i32| -> i32 {
            if c & 1 == 0 {
                (2 * y / 129) as i32
            } else {
                ((4 * y + 129) / 258) as i32
            }
        };
        if (z - 1) % 3 != 0 {
            let c = (z + 2) / 3;
            let s = (c, row_in(c));
            return self.contains_spot(s).then_some(s);
        }
        let c = (z - 1) / 3;
        let r = row_in(c);
        let candidates = [
            (c, r),
            (c, r - 1),
            (c, r + 1),
            (c + 1, r),
            (c + 1, r - 1),
            (c + 1, r + 1),
            (c - 1, r),
            (c - 1, r - 1),
            (c - 1, r + 1),
        ];
        if !self.contains_spot(candidates[0]) {
            return None;
        }
        candidates
            .into_iter()
            .find(|s| self.contains_spot(*s) && contains(*s, x, y))
            .or_else(|| {
                // No outline holds it (a rounding gap on a board edge): the hex whose centre
                // is nearest, rather than VASL's giving up on the LOS.
                candidates
                    .into_iter()
                    .filter(|s| self.contains_spot(*s))
                    .min_by(|a, b| {
                        let d = |s: Spot| {
                            let (cx, cy) = self.centre(s);
                            (cx - x as f64).powi(2) + (cy - y as f64).powi(2)
                        };
                        d(*a).total_cmp(&d(*b))
                    })
            })
    }

    /// The hex a pixel lies in when it is in the part of a column no other column reaches
    /// into (two thirds of each column's width); `None` in the zig-zag strip between columns.
    #[inline]
    pub fn hex_in_column_strip(&self, x: i64, y: i64) -> Option<Spot> {
        let z = (4 * x / 75) as i32;
        if (z - 1) % 3 == 0 {
            return None;
        }
        let c = (z + 2) / 3;
        let r = if c & 1 == 0 {
            (2 * y / 129) as i32
        } else {
            ((4 * y + 129) / 258) as i32
        };
        self.contains_spot((c, r)).then_some((c, r))
    }

    /// The location of the hex nearest the pixel: 0 for the centre, 1 + d for the hexside in
    /// direction d (a side must be strictly nearer than the centre and earlier sides).
    pub fn nearest_location(&self, s: Spot, x: i64, y: i64) -> usize {
        let (cx, cy) = self.los_point(s);
        let d2 = |(px, py): (i64, i64)| (px - x).pow(2) + (py - y).pow(2);
        let mut best = d2((cx, cy));
        let mut at = 0;
        for (d, p) in self.edge_points(s).into_iter().enumerate() {
            if self.side_on_map(s, d) {
                let e = d2(p);
                if e < best {
                    best = e;
                    at = d + 1;
                }
            }
        }
        at
    }
}

/// `java.awt.Polygon`'s containment test, which VASL's outlines rely on: even-odd crossings,
/// a point on a left or top edge inside, on a right or bottom edge outside.
pub(crate) fn polygon_contains(p: &[(i64, i64); 6], x: i64, y: i64) -> bool {
    let (mut minx, mut miny, mut maxx, mut maxy) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
    for &(px, py) in p {
        minx = minx.min(px);
        maxx = maxx.max(px);
        miny = miny.min(py);
        maxy = maxy.max(py);
    }
    if x < minx || y < miny || x >= maxx || y >= maxy {
        return false;
    }
    let mut hits = 0;
    let (mut lastx, mut lasty) = p[5];
    for &(curx, cury) in p {
        let (cx, cy, lx, ly) = (curx, cury, lastx, lasty);
        lastx = curx;
        lasty = cury;
        if cy == ly {
            continue;
        }
        let leftx = if cx < lx {
            if x >= lx {
                continue;
            }
            cx
        } else {
            if x >= cx {
                continue;
            }
            lx
        };
        let (t1, t2) = if cy < ly {
            if y < cy || y >= ly {
                continue;
            }
            if x < leftx {
                hits += 1;
                continue;
            }
            (x - cx, y - cy)
        } else {
            if y < ly || y >= cy {
                continue;
            }
            if x < leftx {
                hits += 1;
                continue;
            }
            (x - lx, y - ly)
        };
        if (t1 as f64) < (t2 as f64) / ((ly - cy) as f64) * ((lx - cx) as f64) {
            hits += 1;
        }
    }
    hits & 1 != 0
}

/// A hex's facts as its own board shows them, in the board's unrotated frame.
#[derive(Clone, Copy, Debug)]
struct BoardHex {
    centre: TerrainCode,
    base: i8,
    sides: [TerrainCode; 6],
    side_terrain: [TerrainCode; 6],
    on_map: [bool; 6],
}

/// Reads every hex of one board from its own grid (VASL's rules for a hex's terrain).
fn board_hexes(archive: &BoardArchive, props: &[Props; 256]) -> Vec<BoardHex> {
    let grid = &archive.grid;
    let g = Geometry {
        width: i64::from(grid.width),
        height: i64::from(grid.height),
        columns: i32::from(grid.columns),
        rows: i32::from(grid.rows),
    };
    let at = |(x, y): (i64, i64)| grid.at(x, y);
    let code = |p: (i64, i64)| at(p).map(|(_, t)| t);
    let is = |c: Option<TerrainCode>, bits: u32| c.is_some_and(|c| props[usize::from(c)].has(bits));
    let mut out = Vec::with_capacity(g.hex_count());
    for c in 0..g.columns {
        for r in 0..g.column_len(c) {
            let s = (c, r);
            let lp = g.los_point(s);
            let edges = g.edge_points(s);
            let mut centre = code(lp).unwrap_or(0);
            if !props[usize::from(centre)].has(flag::BUILDING) {
                if let Some(b) = edges
                    .iter()
                    .map(|p| code(*p))
                    .find(|t| is(*t, flag::BUILDING))
                {
                    centre = b.unwrap_or(0);
                }
            }
            if props[usize::from(centre)].has(flag::MARKETPLACE) {
                centre = 0;
            }
            let mut sides = [NO_HEXSIDE; 6];
            let mut side_terrain = [0; 6];
            let mut on_map = [false; 6];
            for d in 0..6 {
                if !g.side_on_map(s, d) {
                    continue;
                }
                on_map[d] = true;
                let mut t = code(edges[d]);
                if let Some(o) = g.adjacent(s, d) {
                    let ot = code(g.edge_points(o)[(d + 3) % 6]);
                    if !is(t, flag::HEXSIDE) && is(ot, flag::HEXSIDE) {
                        t = ot;
                    }
                }
                if is(t, flag::HEXSIDE) {
                    sides[d] = t.unwrap_or(0);
                }
                side_terrain[d] = t.unwrap_or(0);
            }
            let base = at(lp).map(|(e, _)| e).unwrap_or(0);
            // Inherent terrain (B.6) drawn nearer the centre than any hexside fills the hex.
            let border = g.border(s);
            let (x0, x1) = (
                border.iter().map(|p| p.0).min().unwrap_or(0),
                border.iter().map(|p| p.0).max().unwrap_or(0),
            );
            let (y0, y1) = (
                border.iter().map(|p| p.1).min().unwrap_or(0),
                border.iter().map(|p| p.1).max().unwrap_or(0),
            );
            'scan: for x in x0..x1 {
                for y in y0..y1 {
                    if let Some((_, t)) = at((x, y)) {
                        if props[usize::from(t)].has(flag::INHERENT)
                            && g.nearest_location(s, x, y) == 0
                        {
                            centre = t;
                            break 'scan;
                        }
                    }
                }
            }
            out.push(BoardHex {
                centre,
                base,
                sides,
                side_terrain,
                on_map,
            });
        }
    }
    out
}

/// A map of placed boards.
#[derive(Clone, Debug)]
pub struct BoardMap {
    /// Row by row, north to south; west to east within a row.
    pub(crate) boards: Vec<Placed>,
    pub(crate) boards_across: usize,
    pub(crate) geometry: Geometry,
    pub(crate) cells: Vec<Cell>,
    pub(crate) props: Box<[Props; 256]>,
    pub(crate) table: Arc<TerrainTable>,
}

impl BoardMap {
    /// Lays out the boards: `rows` north to south, each west to east.
    pub fn new(rows: Vec<Vec<Placed>>, table: Arc<TerrainTable>) -> Result<BoardMap, MapError> {
        let across = rows.first().map_or(0, Vec::len);
        if across == 0 || rows.iter().any(|r| r.len() != across) {
            return Err(MapError::Shape);
        }
        let down = rows.len();
        let boards: Vec<Placed> = rows.into_iter().flatten().collect();
        for p in &boards {
            let g = &p.archive.grid;
            if g.width != 1800 || g.height != 645 || g.columns != 33 || g.rows != 10 {
                return Err(MapError::BoardSize(
                    p.number, g.width, g.height, g.columns, g.rows,
                ));
            }
        }
        let (bw, bh) = (BOARD_WIDTH, BOARD_HEIGHT);
        let width = bw * across as i64;
        let height = bh * down as i64;
        let geometry = Geometry {
            width,
            height,
            columns: (width as f64 / HEX_WIDTH).round() as i32 + 1,
            rows: (height as f64 / HEX_HEIGHT).round() as i32,
        };
        let props = props_table(&table);
        let blank = Cell {
            hex: Hex::new(None, 1, 1),
            centre: 0,
            base: 0,
            sides: [NO_HEXSIDE; 6],
            side_terrain: [0; 6],
            placed: 0,
            building: NO_BUILDING,
        };
        let mut cells = vec![blank; geometry.hex_count()];
        let board_geometry = Geometry {
            width: bw,
            height: bh,
            columns: 33,
            rows: 10,
        };
        // Boards are laid row by row, west to east; a later board's facts replace an
        // earlier one's on the hexes they share, side by side where both boards have the side.
        for (i, p) in boards.iter().enumerate() {
            let (bc, br) = ((i % across) as i32, (i / across) as i32);
            let own = board_hexes(&p.archive, &props);
            for lc in 0..33 {
                for lr in 0..board_geometry.column_len(lc) {
                    let spot = (bc * 32 + lc, br * 10 + lr);
                    if !geometry.contains_spot(spot) {
                        continue;
                    }
                    let (oc, or) = if p.rotated {
                        (32 - lc, board_geometry.column_len(32 - lc) - 1 - lr)
                    } else {
                        (lc, lr)
                    };
                    let h = own[board_geometry.index((oc, or))];
                    let turn = |d: usize| if p.rotated { (d + 3) % 6 } else { d };
                    let name_row = or + i32::from(oc & 1 == 0);
                    let hex = Hex::new(Some(p.number), oc as u16 + 1, name_row as u16);
                    let building = p
                        .archive
                        .metadata
                        .building_types
                        .iter()
                        .position(|(n, _)| *n == vasl_hex_name(oc, name_row))
                        .map_or(NO_BUILDING, |k| k as u16);
                    let cell = &mut cells[geometry.index(spot)];
                    cell.hex = hex;
                    cell.centre = h.centre;
                    cell.base = h.base;
                    cell.placed = i as u8;
                    cell.building = building;
                    for d in 0..6 {
                        let od = turn(d);
                        if h.on_map[od] && geometry.side_on_map(spot, d) {
                            cell.sides[d] = h.sides[od];
                            cell.side_terrain[d] = h.side_terrain[od];
                        }
                    }
                }
            }
        }
        Ok(BoardMap {
            boards,
            boards_across: across,
            geometry,
            cells,
            props,
            table,
        })
    }

    /// Bytes this map holds of its own, beyond the shared board archives and terrain table:
    /// what one more game on the same boards costs (issue 37: at most 64 KiB on four boards).
    pub fn own_bytes(&self) -> usize {
        std::mem::size_of::<BoardMap>()
            + self.cells.capacity() * std::mem::size_of::<Cell>()
            + self.boards.capacity() * std::mem::size_of::<Placed>()
            + std::mem::size_of::<[Props; 256]>()
    }

    /// The terrain table the map reads its codes with.
    pub fn table(&self) -> &TerrainTable {
        &self.table
    }

    /// Map size in pixels.
    pub fn size(&self) -> (i64, i64) {
        (self.geometry.width, self.geometry.height)
    }

    /// Every hex of the map, column by column.
    pub fn hexes(&self) -> impl Iterator<Item = Hex> + '_ {
        self.cells.iter().map(|c| c.hex)
    }

    /// Where a named hex sits in the map's grid.
    pub(crate) fn spot(&self, hex: Hex) -> Option<Spot> {
        let board = hex.board?;
        let col = i32::from(hex.column) - 1;
        if !(0..i32::from(COLUMN_MAX)).contains(&col) {
            return None;
        }
        let idx = i32::from(hex.row) - i32::from(col & 1 == 0);
        if idx < 0 || idx >= 10 + (col & 1) {
            return None;
        }
        for (i, p) in self.boards.iter().enumerate() {
            if p.number != board {
                continue;
            }
            let (bc, br) = (
                (i % self.boards_across) as i32,
                (i / self.boards_across) as i32,
            );
            let (lc, lr) = if p.rotated {
                (32 - col, 10 + ((32 - col) & 1) - 1 - idx)
            } else {
                (col, idx)
            };
            let spot = (bc * 32 + lc, br * 10 + lr);
            // A seam hex answers to the board whose name it carries; the other board's name
            // for it is accepted too, as the same hex.
            if self.geometry.contains_spot(spot) {
                return Some(spot);
            }
        }
        None
    }

    pub(crate) fn cell(&self, s: Spot) -> &Cell {
        &self.cells[self.geometry.index(s)]
    }

    /// The canonical name of a hex (a seam hex named by its other board comes back under the
    /// name the map uses), or `None` off the map.
    pub fn canonical(&self, hex: Hex) -> Option<Hex> {
        self.spot(hex).map(|s| self.cell(s).hex)
    }

    /// What the board shows for the hex.
    pub fn cell_of(&self, hex: Hex) -> Option<&Cell> {
        self.spot(hex).map(|s| self.cell(s))
    }

    /// The hex's centre in map pixels (its LOS point: the centre truncated to whole pixels).
    pub fn centre(&self, hex: Hex) -> Option<(i64, i64)> {
        self.spot(hex).map(|s| self.geometry.los_point(s))
    }

    /// Range between two hexes over the map's pixel grid (VASL's count of hexes), by either
    /// name of a seam hex; `None` for a hex off the map.
    pub fn range(&self, a: Hex, b: Hex) -> Option<u32> {
        Some(Geometry::range(self.spot(a)?, self.spot(b)?).unsigned_abs())
    }

    /// The hex a map pixel lies in.
    pub fn hex_at(&self, x: i64, y: i64) -> Option<Hex> {
        self.geometry.pixel_to_hex(x, y).map(|s| self.cell(s).hex)
    }

    /// The building type the board's metadata names for the hex (`Stone Building, 2 Level`).
    pub fn building_type(&self, hex: Hex) -> Option<&str> {
        let cell = self.cell_of(hex)?;
        let p = &self.boards[usize::from(cell.placed)];
        p.archive
            .metadata
            .building_types
            .get(usize::from(cell.building))
            .map(|(_, t)| t.as_str())
    }

    /// VASL's terrain name for a code.
    pub fn terrain_name(&self, code: TerrainCode) -> &str {
        self.table
            .get(code)
            .map_or("unknown terrain", |t| t.name.as_str())
    }

    /// The pixel at map (x, y): elevation and terrain code, read through the board placed
    /// there (turned round for a rotated board).
    #[inline]
    pub fn pixel(&self, x: i64, y: i64) -> Option<(i8, TerrainCode)> {
        if x < 0 || y < 0 || x >= self.geometry.width || y >= self.geometry.height {
            return None;
        }
        // Every board is geomorphic (checked in `new`), so the divisions are by constants.
        let (bc, br) = (x / BOARD_WIDTH, y / BOARD_HEIGHT);
        let p = &self.boards[br as usize * self.boards_across + bc as usize];
        let (mut lx, mut ly) = (x - bc * BOARD_WIDTH, y - br * BOARD_HEIGHT);
        if p.rotated {
            lx = BOARD_WIDTH - 1 - lx;
            ly = BOARD_HEIGHT - 1 - ly;
        }
        let i = (lx * BOARD_HEIGHT + ly) as usize;
        let grid = &p.archive.grid;
        Some((grid.elevation[i], grid.terrain[i]))
    }
}

/// A geomorphic board's size in pixels: every board of a map has it.
pub const BOARD_WIDTH: i64 = 1800;
pub const BOARD_HEIGHT: i64 = 645;

/// VASL's name for a board hex: column letters (doubled past Z) and the printed row.
fn vasl_hex_name(col: i32, name_row: i32) -> String {
    let letter = (b'A' + (col % 26) as u8) as char;
    let letters: String = std::iter::repeat_n(letter, 1 + (col / 26) as usize).collect();
    format!("{letters}{name_row}")
}

/// A board drawn by a function from pixel (x, y) to (elevation, terrain code), 1800 × 645 px and
/// 33 × 10 hexes like a geomorphic board: how tests and benchmarks make boards without MMP's
/// artwork.
pub fn painted_board(name: &str, paint: impl Fn(i64, i64) -> (i8, TerrainCode)) -> BoardArchive {
    use super::archive::{BoardMetadata, LosGrid};
    let (width, height) = (1800u32, 645u32);
    let mut elevation = Vec::with_capacity((width * height) as usize);
    let mut terrain = Vec::with_capacity((width * height) as usize);
    for x in 0..i64::from(width) {
        for y in 0..i64::from(height) {
            let (e, t) = paint(x, y);
            elevation.push(e);
            terrain.push(t);
        }
    }
    BoardArchive {
        metadata: BoardMetadata {
            name: name.to_string(),
            version: "painted".into(),
            has_hills: elevation.iter().any(|e| *e != 0),
            columns: 33,
            rows: 10,
            image: String::new(),
            building_types: Vec::new(),
        },
        grid: LosGrid {
            columns: 33,
            rows: 10,
            width,
            height,
            elevation,
            terrain,
            stairways: vec![false; super::archive::hexes_in(33, 10)],
        },
        digest: [0; 32],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_board(name: &str) -> Arc<BoardArchive> {
        Arc::new(painted_board(name, |_, _| (0, 0)))
    }

    fn two_by_two() -> BoardMap {
        let p = |number, rotated| Placed {
            number,
            rotated,
            archive: open_board(&number.to_string()),
        };
        BoardMap::new(
            vec![
                vec![p(1, false), p(2, true)],
                vec![p(3, false), p(4, false)],
            ],
            Arc::new(TerrainTable::builtin()),
        )
        .unwrap()
    }

    fn h(name: &str) -> Hex {
        name.parse().unwrap()
    }

    #[test]
    fn whole_number_geometry_is_the_floating_point_layout() {
        let map = two_by_two();
        let g = map.geometry;
        for c in 0..g.columns {
            for r in 0..g.column_len(c) {
                let s = (c, r);
                assert_eq!(g.border(s), g.border_float(s), "{s:?}");
                assert_eq!(g.extended_border(s), g.extended_border_float(s), "{s:?}");
                let (x, y) = g.centre_dot(s);
                let (fx, fy) = g.fix(x, y);
                assert_eq!(g.los_point(s), (fx as i64, fy as i64), "{s:?}");
            }
        }
    }

    /// VASL's range: a walk column by column, the row moving toward the target on the way.
    fn range_by_walking(a: Spot, b: Spot) -> i32 {
        let dx = if b.0 > a.0 { 1 } else { -1 };
        let dy = if b.1 > a.1 { 1 } else { -1 };
        let (mut c, mut r, mut n) = (a.0, a.1, 0);
        while c != b.0 {
            if r != b.1 && ((c % 2 == 0 && dy == 1) || (c % 2 == 1 && dy == -1)) {
                r += dy;
            }
            c += dx;
            n += 1;
        }
        n + (b.1 - r).abs()
    }

    #[test]
    fn a_four_board_map_costs_a_game_under_64_kib() {
        let map = two_by_two();
        eprintln!("a 2x2 map holds {} bytes of its own", map.own_bytes());
        assert!(map.own_bytes() <= 64 << 10, "{} bytes", map.own_bytes());
        // The grids are shared, not copied: the map's boards are the archives handed in.
        let again = map.clone();
        assert!(Arc::ptr_eq(
            &map.boards[0].archive,
            &again.boards[0].archive
        ));
    }

    #[test]
    fn range_is_the_hex_count() {
        for a in [(0, 0), (1, 0), (5, 3), (6, 9), (32, 10), (13, 4)] {
            for c in 0..40 {
                for r in 0..20 {
                    assert_eq!(Geometry::range(a, (c, r)), range_by_walking(a, (c, r)));
                }
            }
        }
        // A2.1: adjacent hexes are at range 1.
        assert_eq!(Geometry::range((3, 4), (4, 4)), 1);
    }

    #[test]
    fn every_pixel_lies_in_the_hex_whose_outline_holds_it_or_a_neighbour() {
        let map = two_by_two();
        let g = map.geometry;
        for (x, y) in [
            (0, 0),
            (56, 0),
            (56, 64),
            (112, 32),
            (168, 322),
            (1799, 612),
            (1800, 32),
            (3599, 1289),
        ] {
            let s = g.pixel_to_hex(x, y).unwrap();
            assert!(Geometry::range(s, g.pixel_to_hex(x, y).unwrap()) == 0);
            let (cx, cy) = g.los_point(s);
            assert!(
                (cx - x).abs() <= 38 && (cy - y).abs() <= 33,
                "{x},{y} -> {s:?}"
            );
        }
        // Each hex's own LOS point lies in it.
        for c in 0..g.columns {
            for r in 0..g.column_len(c) {
                let (x, y) = g.los_point((c, r));
                let s = g.pixel_to_hex(x, y).unwrap();
                assert_eq!(s, (c, r), "{x},{y}");
            }
        }
    }

    #[test]
    fn rotation_turns_hex_names_round() {
        let map = two_by_two();
        // Board 2 is rotated: its GG10 sits at the north-west corner of its quarter, its A1 at
        // the south-east, next to board 4's north edge.
        let gg10 = map.centre(h("2GG10")).unwrap();
        let a1 = map.centre(h("2A1")).unwrap();
        assert!(gg10.0 < a1.0 && gg10.1 < a1.1);
        assert_eq!(map.hex_at(a1.0, a1.1), Some(h("2A1")));
        assert_eq!(map.hex_at(3599, 612), Some(h("2A1")));
        // Unrotated board 1: A1 at the map's corner.
        assert_eq!(map.centre(h("1A1")), Some((0, 32)));
        assert_eq!(map.hex_at(5, 30), Some(h("1A1")));
        // Rotation moves hexsides round too: board 2's hexside terrain is read in its frame.
        let cell = map.cell_of(h("2B5")).unwrap();
        assert_eq!(cell.hex, h("2B5"));
    }

    #[test]
    fn a_seam_hex_has_one_identity() {
        let map = two_by_two();
        // Board 1's GG column is board 2's (rotated: its A column, seen from board 2, is
        // on the far side; the shared column is board 2's GG) — named by the later board.
        let seam = map.canonical(h("1GG5")).unwrap();
        assert_eq!(seam.board, Some(2));
        assert_eq!(map.centre(h("1GG5")), map.centre(seam));
        // Board 1's half hex B10 is board 3's B0.
        assert_eq!(map.canonical(h("1B10")), Some(h("3B0")));
        assert_eq!(map.centre(h("1B10")), map.centre(h("3B0")));
        assert_eq!(map.hexes().count(), map.geometry.hex_count());
        let names: std::collections::BTreeSet<Hex> = map.hexes().collect();
        assert_eq!(
            names.len(),
            map.geometry.hex_count(),
            "no two hexes share a name"
        );
    }

    #[test]
    fn a_board_shows_its_hex_terrain_level_and_hexsides() {
        // Woods under E5's centre, level 1 under F3, a wall along C4's north side.
        let g = Geometry {
            width: 1800,
            height: 645,
            columns: 33,
            rows: 10,
        };
        let (ex, ey) = g.los_point((4, 4));
        let (fx, fy) = g.los_point((5, 3));
        let north = g.edge_points((2, 3))[0];
        let board = painted_board("9", move |x, y| {
            let woods = (x - ex).abs() < 10 && (y - ey).abs() < 10;
            let hill = (x - fx).abs() < 20 && (y - fy).abs() < 20;
            let wall = (x - north.0).abs() < 15 && (y - north.1).abs() <= 1;
            (
                i8::from(hill),
                if woods {
                    60
                } else if wall {
                    72
                } else {
                    0
                },
            )
        });
        let map = BoardMap::new(
            vec![vec![Placed {
                number: 9,
                rotated: false,
                archive: Arc::new(board),
            }]],
            Arc::new(TerrainTable::builtin()),
        )
        .unwrap();
        assert_eq!(map.cell_of(h("9E5")).unwrap().centre, 60);
        assert_eq!(map.cell_of(h("9F3")).unwrap().base, 1);
        assert_eq!(map.cell_of(h("9C4")).unwrap().sides[0], 72);
        // The same hexside seen from C3, the hex across it (S side).
        assert_eq!(map.cell_of(h("9C3")).unwrap().sides[3], 72);
        assert_eq!(map.cell_of(h("9C4")).unwrap().sides[1], NO_HEXSIDE);
    }
}
