//! Line of sight on a map of real boards, traced over the boards' own terrain pixels: the
//! depiction the thread crosses is what counts (A6.1), with the height rules applied on top
//! (A6.2 obstacles higher than both ends, B10 hills and crests, A6.4/B10.23 blind hexes, B9.2
//! walls and hedges at the same level, A6.1/A6.7 hindrances, six of which block).
//!
//! The tracer is modelled on VASL's (so the two agree on which pixels a thread crosses and which
//! hex each pixel belongs to): it walks the map column by column from the source's centre pixel
//! to the target's, visiting every pixel the line passes through, and asks of each what the
//! rules say of that terrain at that ground level. The source and target hexes' own terrain is
//! ignored (a unit sees out of its own hex, A6.1), as is a hex the thread only grazes at the far
//! end's range. Along a hexside (a thread at 0° or 60° through vertices) both hexes sharing the
//! hexside are asked (A6.1: such a thread is hindered or blocked by either side's terrain).
//!
//! Levels are counted in half levels throughout, so a wall or grain's half level is exact.
//! Nothing here allocates per pixel, and no hash map is consulted in the walk.

use super::map::{flag, BoardMap, Geometry, Props, Spot, NO_HEXSIDE};
use crate::hex::Hex;

/// Hindrances that block the LOS when counted together (A6.1).
pub const HINDRANCES_BLOCKING: u8 = 6;

/// The verdict on one LOS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridLos {
    pub blocked: bool,
    /// Hindrances the thread crosses (when it is not blocked).
    pub hindrances: u8,
    /// Why, in the rules' terms, citing the rule.
    pub reason: String,
    /// The map pixel where the thread was stopped.
    pub blocked_at: Option<(i64, i64)>,
    /// The hexes the thread entered, source first, up to where it was stopped.
    pub path: Vec<Hex>,
}

/// Why a LOS could not be asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LosError {
    #[error("{0} is not a hex of this map")]
    NotOnMap(Hex),
}

/// Why a thread was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    LeavesBuilding,
    ExitsDepression,
    EntersDepression,
    HexsideTerrain,
    Bocage,
    BocageBlind,
    GroundLevel,
    SplitTerrain,
    HalfLevel,
    Higher,
    Crest,
    BlindObstacle,
    BlindCrest,
    Hindrances,
}

impl Block {
    /// Why the thread was stopped, naming where: `at` is the hex (`12C4`) or, for terrain
    /// along a hexside, the hexside (`12C4-12D4`) the stopping pixel lies in; `hindrances`
    /// the hexes whose Hindrances counted, each with its DRM.
    fn reason(self, terrain: &str, at: &str, hindrances: &str) -> String {
        match self {
            Block::ExitsDepression => format!("the thread leaves the firer's depression at {at} before the height difference makes up for the range (A6.3)"),
            Block::EntersDepression => format!("the thread enters the target's depression at {at} before the height difference makes up for the range (A6.3)"),
            Block::LeavesBuilding => format!(
                "the thread stays inside the firer's building ({terrain}) past its own hex, into {at}, and the two ends are at different levels (A6.8)"
            ),
            Block::HexsideTerrain => format!(
                "a {terrain} hexside ({at}) between two Locations at its own level (B9.2)"
            ),
            Block::Bocage => format!("bocage on {at} is not seen over from this level ({terrain}, B9.52)"),
            Block::BocageBlind => format!("the lower end is in the blind zone behind bocage on {at} (B9.52)"),
            Block::GroundLevel => {
                format!("the ground (a hill) in {at} rises above both ends (A6.2, B10.1)")
            }
            Block::SplitTerrain => format!(
                "{terrain} in {at} blocks a thread between two Locations at its own ground level (A6.2)"
            ),
            Block::HalfLevel => format!(
                "{terrain} in {at} stands as high as both ends (A6.2)"
            ),
            Block::Higher => format!("{terrain} in {at} is higher than both ends (A6.2)"),
            Block::Crest => format!(
                "{terrain} in {at} is as high as the higher end and the lower end has no height advantage over it (A6.2, B10.2)"
            ),
            Block::BlindObstacle => format!(
                "the lower end is in a Blind Hex behind {terrain} in {at} (A6.4)"
            ),
            Block::BlindCrest => format!("the lower end is in a Blind Hex behind a crest line in {at} (B10.23)"),
            Block::Hindrances => format!(
                "Hindrances ({hindrances}) add up to {HINDRANCES_BLOCKING} or more (A6.1)"
            ),
        }
    }

    /// Whether the rule stopping the thread is terrain along a hexside, named by the hexside.
    fn along_hexside(self) -> bool {
        matches!(
            self,
            Block::HexsideTerrain | Block::Bocage | Block::BocageBlind
        )
    }
}

/// tan 60°: the slope of a thread along a slanted hexside.
const TAN_60: f64 = 1.732_050_807_568_877_2;

/// Longest range a hindrance is kept for (the per-range table): well past a map of 3 × 3
/// boards' diagonal.
const RANGE_MAX: usize = 256;

/// One LOS walk in progress.
struct Walk<'a> {
    map: &'a BoardMap,
    g: Geometry,
    props: &'a [Props; 256],
    src: Spot,
    tgt: Spot,
    src_el: i16,
    tgt_el: i16,
    range: i32,
    cur: Spot,
    r_src: i32,
    r_tgt: i32,
    leaves_building: bool,
    along_side: bool,
    src_spine: i8,
    tgt_spine: i8,
    src_ext: Outline,
    tgt_ext: Outline,
    /// Per range from the source, the largest hindrance counted there.
    hind: [u8; RANGE_MAX],
    /// Where each of those was counted: the range, the hex and its DRM, in the order met (a
    /// larger one at the same range replaces the smaller). Written only when a hindrance
    /// counts, never per pixel.
    hind_at: Vec<(usize, Hex, u8)>,
    hind_total: u8,
    path: Vec<Hex>,
    x: i64,
    y: i64,
    /// The terrain code of the pixel that blocked.
    at_code: u8,
    /// The outlines last tested when finding a pixel's hex, most recent first.
    outlines: [(Spot, Outline); OUTLINES_KEPT],
    outline_next: usize,
    /// The hex last added to the path.
    noted: Spot,
    /// A6.3: the firer is in a depression and the thread must climb out of it in time.
    exits_depression: bool,
    /// A6.3: the target is in a depression and the thread must descend into it in time.
    enters_depression: bool,
}

/// Flags of terrain that is bare ground for LOS: open ground, roads, water (A6.1: no obstacle,
/// no hindrance).
const PLAIN: u32 = flag::OPEN | flag::WATER | flag::ROAD_OR_BRIDGE;

/// Outlines kept by a walk: the two or three hexes either side of the strip being crossed.
const OUTLINES_KEPT: usize = 4;

/// A hex outline with its bounding box, for the hot containment test.
#[derive(Clone, Copy)]
struct Outline {
    p: [(i64, i64); 6],
    x0: i64,
    x1: i64,
    y0: i64,
    y1: i64,
}

impl Outline {
    fn new(p: [(i64, i64); 6]) -> Outline {
        Outline {
            p,
            x0: p.iter().map(|v| v.0).min().unwrap_or(0),
            x1: p.iter().map(|v| v.0).max().unwrap_or(0),
            y0: p.iter().map(|v| v.1).min().unwrap_or(0),
            y1: p.iter().map(|v| v.1).max().unwrap_or(0),
        }
    }
    #[inline]
    fn contains(&self, x: i64, y: i64) -> bool {
        x >= self.x0
            && x < self.x1
            && y >= self.y0
            && y < self.y1
            && super::map::polygon_contains(&self.p, x, y)
    }
}

impl BoardMap {
    /// Whether a unit at `from_level` half levels above `from`'s ground sees `to` at
    /// `to_level`, and what hinders it.
    pub fn los(
        &self,
        from: Hex,
        from_level: i16,
        to: Hex,
        to_level: i16,
    ) -> Result<GridLos, LosError> {
        let src = self.spot(from).ok_or(LosError::NotOnMap(from))?;
        let tgt = self.spot(to).ok_or(LosError::NotOnMap(to))?;
        let g = self.geometry;
        let src_el = 2 * i16::from(self.cell(src).base) + from_level;
        let tgt_el = 2 * i16::from(self.cell(tgt).base) + to_level;
        let mut walk = Walk {
            map: self,
            g,
            props: &self.props,
            src,
            tgt,
            src_el,
            tgt_el,
            range: Geometry::range(src, tgt),
            cur: src,
            r_src: 0,
            r_tgt: Geometry::range(src, tgt),
            leaves_building: !self.props[usize::from(self.cell(src).centre)].has(flag::BUILDING),
            along_side: false,
            src_spine: -1,
            tgt_spine: -1,
            src_ext: Outline::new(g.extended_border(src)),
            tgt_ext: Outline::new(g.extended_border(tgt)),
            hind: [0; RANGE_MAX],
            hind_at: Vec::new(),
            hind_total: 0,
            path: vec![self.cell(src).hex],
            x: 0,
            y: 0,
            at_code: 0,
            outlines: [((-9, -9), Outline::new([(0, 0); 6])); OUTLINES_KEPT],
            outline_next: 0,
            noted: src,
            exits_depression: false,
            enters_depression: false,
        };
        let dep = |s: Spot| self.props[usize::from(self.cell(s).centre)].has(flag::DEPRESSION);
        let r2 = 2 * walk.range as i16;
        // A6.3 applies unless the other end is higher by more than the range.
        walk.exits_depression = dep(src) && tgt_el - src_el <= r2;
        walk.enters_depression = dep(tgt) && src_el - tgt_el <= r2;
        // Two Locations of one hex see each other at ground level (A6.1: its own terrain
        // is ignored).
        if src == tgt {
            return Ok(walk.finish(None));
        }
        let blocked = walk.run();
        Ok(walk.finish(blocked))
    }
}

impl Walk<'_> {
    /// The hexes whose Hindrances counted, with their DRM: `+1 in 12C4, +2 in 12D5`.
    fn hindrance_hexes(&self) -> String {
        self.hind_at
            .iter()
            .map(|(_, hex, value)| format!("+{value} in {hex}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Where the thread was stopped: the current hex, or for terrain along a hexside the
    /// hexside nearest the stopping pixel.
    fn stopped_at(&self, b: Block) -> String {
        let here = self.map.cell(self.cur).hex;
        if b.along_hexside() {
            let loc = self.g.nearest_location(self.cur, self.x, self.y);
            if loc > 0 {
                if let Some(across) = self.g.adjacent(self.cur, loc - 1) {
                    let across = self.map.cell(across).hex;
                    return format!("{here}-{across}");
                }
            }
        }
        here.to_string()
    }

    fn finish(mut self, blocked: Option<Block>) -> GridLos {
        match blocked {
            Some(b) => GridLos {
                blocked: true,
                hindrances: self.hind_total,
                reason: b.reason(
                    self.map.terrain_name(self.at_code),
                    &self.stopped_at(b),
                    &self.hindrance_hexes(),
                ),
                blocked_at: Some((self.x, self.y)),
                path: self.path,
            },
            None => {
                let last = self.map.cell(self.tgt).hex;
                if self.path.last() != Some(&last) {
                    self.path.push(last);
                }
                GridLos {
                    blocked: false,
                    hindrances: self.hind_total,
                    reason: if self.hind_total > 0 {
                        format!(
                            "clear, hindered by {} ({}) (A6.1)",
                            self.hind_total,
                            self.hindrance_hexes()
                        )
                    } else {
                        "clear (A6.1)".into()
                    },
                    blocked_at: None,
                    path: self.path,
                }
            }
        }
    }

    /// Walks the thread pixel by pixel; the first pixel that blocks ends it.
    fn run(&mut self) -> Option<Block> {
        let (sx, sy) = self.g.los_point(self.src);
        let (tx, ty) = self.g.los_point(self.tgt);
        let col_dir: i64 = if tx < sx { -1 } else { 1 };
        let row_dir: i64 = if ty < sy { -1 } else { 1 };
        let num_cols = (tx - sx).abs() + 1;
        let delta_y = (ty - sy) as f64 / num_cols as f64;
        let mut enter = sy as f64;
        let mut exit = enter + delta_y;

        // A thread along a hexside runs horizontally or at 60° through hex vertices.
        let horizontal = sy == ty;
        let slope = ((sy - ty) as f64 / (sx - tx) as f64).abs();
        let tolerance = match self.range {
            r if r < 5 => 0.05,
            r if r <= 15 => 0.03,
            _ => 0.015,
        };
        let sixty = (slope - TAN_60).abs() < tolerance;
        self.along_side = horizontal || sixty;
        if sixty {
            (self.src_spine, self.tgt_spine) = match (col_dir, row_dir) {
                (1, 1) => (3, 0),
                (1, _) => (1, 4),
                (_, 1) => (4, 1),
                _ => (0, 3),
            };
        } else if slope == 0.0 {
            (self.src_spine, self.tgt_spine) = if col_dir == 1 { (2, 5) } else { (5, 2) };
        }

        let mut x = sx;
        for col in 0..num_cols {
            let mut y = enter as i64;
            let rows = (exit as i64 - enter as i64).abs() + 1;
            for _ in 0..rows {
                if let Some(b) = self.pixel(x, y) {
                    return Some(b);
                }
                y += row_dir;
            }
            enter = exit;
            x += col_dir;
            if col + 1 == num_cols {
                exit = ty as f64;
            } else {
                exit += delta_y;
            }
        }
        None
    }

    /// The rules at one pixel of the thread.
    #[inline]
    fn pixel(&mut self, x: i64, y: i64) -> Option<Block> {
        self.x = x;
        self.y = y;
        let (ground, mut code) = self.map.pixel(x, y)?;
        let p = self.props[usize::from(code)];
        if !self.leaves_building && !p.has(flag::BUILDING) {
            self.leaves_building = true;
        }
        // Bare ground no higher than the lower end: no rule can stop or hinder the thread here,
        // so the pixel's hex matters only to the path (noted where that is cheap to know).
        if !self.along_side
            && p.flags & !PLAIN == 0
            && p.height == 0
            && 2 * i16::from(ground) <= self.src_el.min(self.tgt_el)
        {
            if let Some(s) = self.g.hex_in_column_strip(x, y) {
                self.note(s);
            }
            return None;
        }
        let in_src = self.src_ext.contains(x, y);
        let in_tgt = !in_src && self.tgt_ext.contains(x, y);
        let here = if in_src {
            self.src
        } else if in_tgt {
            self.tgt
        } else {
            self.locate(x, y)?
        };
        if self.along_side {
            if let Some((a, b)) = self.hexside_pair(here, in_src || in_tgt, x, y) {
                for h in [a, b] {
                    if Outline::new(self.g.extended_border(h)).contains(x, y) {
                        if let Some(blk) = self.on_hexside(h, &mut code, ground) {
                            return Some(blk);
                        }
                    }
                }
                return None;
            }
        }
        self.apply(here, code, ground)
    }

    /// The hex the pixel lies in ([`Geometry::pixel_to_hex`]), with the outlines kept.
    #[inline]
    fn locate(&mut self, x: i64, y: i64) -> Option<Spot> {
        let g = self.g;
        let outlines = &mut self.outlines;
        let next = &mut self.outline_next;
        g.pixel_to_hex_with(x, y, |s, x, y| {
            if let Some((_, o)) = outlines.iter().find(|(k, _)| *k == s) {
                return o.contains(x, y);
            }
            let o = Outline::new(g.border(s));
            outlines[*next] = (s, o);
            *next = (*next + 1) % OUTLINES_KEPT;
            o.contains(x, y)
        })
    }

    /// For a thread along a hexside, the two hexes sharing it at this pixel (none near the
    /// ends, or where the thread crosses a hex's middle rather than its side).
    fn hexside_pair(&self, here: Spot, in_end: bool, x: i64, y: i64) -> Option<(Spot, Spot)> {
        if in_end || Geometry::range(self.src, here) % 2 == 0 {
            return None;
        }
        for d in 0..6 {
            if let Some(a) = self.g.adjacent(here, d) {
                if a != self.src
                    && a != self.tgt
                    && Outline::new(self.g.extended_border(a)).contains(x, y)
                {
                    return Some((here, a));
                }
            }
        }
        let loc = self.g.nearest_location(here, x, y);
        if loc > 0 {
            if let Some(a) = self.g.adjacent(here, loc - 1) {
                if a != self.src && a != self.tgt {
                    return Some((here, a));
                }
            }
        }
        None
    }

    /// One of the two hexes along a hexside: inherent terrain fills it whatever is drawn.
    fn on_hexside(&mut self, h: Spot, code: &mut u8, ground: i8) -> Option<Block> {
        if h == self.src || h == self.tgt {
            return None;
        }
        let centre = self.map.cell(h).centre;
        let cp = self.props[usize::from(centre)];
        if self.props[usize::from(*code)].has(flag::HEXSIDE) && cp.has(flag::INHERENT) {
            if let Some(b) = self.apply(h, *code, ground) {
                return Some(b);
            }
        }
        if cp.has(flag::INHERENT) {
            let name = self.map.terrain_name(centre);
            let water = self.props[usize::from(*code)].has(flag::WATER);
            if !((name == "Dense Jungle" || name == "Bamboo") && water) {
                *code = centre;
            }
        }
        self.apply(h, *code, ground)
    }

    fn enter(&mut self, h: Spot) {
        if h != self.cur {
            self.cur = h;
            self.r_src = Geometry::range(h, self.src);
            self.r_tgt = Geometry::range(h, self.tgt);
            self.note(h);
        }
    }

    /// Adds a hex to the path, once.
    fn note(&mut self, h: Spot) {
        if h != self.noted {
            self.noted = h;
            let hex = self.map.cell(h).hex;
            if !self.path.contains(&hex) {
                self.path.push(hex);
            }
        }
    }

    /// The rules for one pixel in hex `h`.
    fn apply(&mut self, h: Spot, code: u8, ground: i8) -> Option<Block> {
        self.enter(h);
        self.at_code = code;
        let p = self.props[usize::from(code)];
        let g2 = 2 * i16::from(ground);
        let height2 = 2 * i16::from(p.height);
        let (src_el, tgt_el) = (self.src_el, self.tgt_el);
        let hi = src_el.max(tgt_el);
        let lo = src_el.min(tgt_el);

        if (self.exits_depression || self.enters_depression) && self.depression(g2) {
            return Some(if self.exits_depression {
                Block::ExitsDepression
            } else {
                Block::EntersDepression
            });
        }
        // A6.8: a thread still inside the firer's building past its hex sees only its level.
        if !self.leaves_building
            && self.cur != self.src
            && p.has(flag::BUILDING_TERRAIN)
            && src_el <= height2 + g2
            && src_el != tgt_el
        {
            return Some(Block::LeavesBuilding);
        }
        if p.has(flag::HEXSIDE) && !p.has(flag::CLIFF) {
            if let Some(b) = self.hexside_terrain(p, g2, height2) {
                return Some(b);
            }
        }
        // The ends' own hexes, and hexes only grazed at the far end's range, are not looked at.
        if self.cur == self.src
            || self.cur == self.tgt
            || self.r_tgt == self.range
            || self.r_src == self.range
        {
            return None;
        }
        // Inherent terrain drawn past its hexside is not the next hex's terrain (B.6).
        if p.has(flag::INHERENT) && self.map.cell(self.cur).centre != code {
            return None;
        }
        // A6.2 / B10.1: a hill higher than both ends. Along a cliff hexside the thread runs at
        // the foot of the cliff as much as at its top (B11: the lower hex's level counts).
        // A bridge's pixels carry its deck's level, not the ground's: a thread below the deck
        // passes under it (B6: a bridge only hinders, and not from beneath).
        let cliff_floor = self.cliff_along();
        let bridge = p.has(flag::BRIDGE);
        if g2 > src_el && g2 > tgt_el && cliff_floor.is_none_or(|f| f > hi) && !bridge {
            return Some(Block::GroundLevel);
        }
        let split_same_level = p.has(flag::SPLIT) && g2 == src_el && g2 == tgt_el;
        // Split terrain (orchards) between two Locations at its ground level.
        if split_same_level {
            if p.has(flag::LOWER_OBSTACLE) {
                return Some(Block::SplitTerrain);
            } else if p.has(flag::LOWER_HINDRANCE) {
                if let Some(b) = self.hindrance(p) {
                    return Some(b);
                }
            }
        }
        // Half-level terrain level with both ends (grain, brush: hindrances; a one-level
        // building's half level: an obstacle).
        if p.has(flag::HALF_LEVEL)
            && !p.has(flag::HEXSIDE)
            && g2 + height2 == src_el
            && g2 + height2 == tgt_el
        {
            if p.has(flag::OBSTACLE) {
                return Some(Block::HalfLevel);
            } else if let Some(b) = self.hindrance(p) {
                return Some(b);
            }
        }
        // A6.2: terrain higher than both ends.
        let top = g2 + height2 + i16::from(p.has(flag::HALF_LEVEL) && !p.has(flag::HEXSIDE));
        if !split_same_level && !p.has(flag::BOCAGE) && top > src_el && top > tgt_el {
            if p.has(flag::OBSTACLE) && !p.has(flag::LIGHT_WOODS) {
                return Some(Block::Higher);
            } else if p.has(flag::FACTORY) {
                if self.leaves_building {
                    return Some(Block::Higher);
                }
            } else if !(p.has(flag::ROAD_OR_BRIDGE) && g2 > src_el && g2 > tgt_el) {
                if let Some(b) = self.hindrance(p) {
                    return Some(b);
                }
            }
        }
        // A6.2 / B10.2: as high as the higher end and above the lower one: a crest (or an
        // obstacle at the higher end's level) the higher end must look down past.
        let top = g2 + height2 + i16::from(p.has(flag::HALF_LEVEL) && p.has(flag::BUILDING));
        let cur_dep = self.props[usize::from(self.map.cell(self.cur).centre)].has(flag::DEPRESSION);
        let in_own_depression =
            cur_dep && (self.exits_depression || self.enters_depression) && height2 < 2;
        // A bridge's deck at the higher end's level is no crest: it hinders (B6), as counted
        // above, and the lower end is seen past it.
        if top == hi
            && top > lo
            && cliff_floor.is_none_or(|f| f >= hi)
            && !in_own_depression
            && !bridge
        {
            if let Some(b) = self.crest(p, top - g2) {
                return Some(b);
            }
        }
        if p.has(flag::BOCAGE) {
            return None;
        }
        // A6.4 / B10.23: blind hexes behind an obstacle or crest between the two levels.
        let cliff = if p.has(flag::CLIFF) { 2 } else { 0 };
        let band = g2 + height2 + cliff;
        if lo < band && band < hi {
            let cliff_side = self.nearest_side_is_cliff();
            let g2 = cliff_floor.unwrap_or(g2);
            if self.blind(g2, height2, cliff_side) {
                if p.has(flag::OBSTACLE) && !p.has(flag::HEXSIDE) {
                    let own = self.map.cell(self.cur).centre == code;
                    if (!p.has(flag::INHERENT) || own)
                        && !(self.along_side && p.has(flag::BUILDING) && self.r_tgt % 2 != 0)
                    {
                        return Some(Block::BlindObstacle);
                    }
                } else if p.has(flag::FACTORY) {
                    // Factories' roofless cases are not modelled on these boards.
                } else if lo < g2 + cliff && g2 + cliff < hi && self.blind(g2, 0, cliff_side) {
                    return Some(Block::BlindCrest);
                } else if self.cur != self.src && self.cur != self.tgt {
                    if p.has(flag::ORCHARD_OUT_OF_SEASON) {
                        if self.r_tgt == 1 {
                            if let Some(b) = self.hindrance(p) {
                                return Some(b);
                            }
                        }
                    } else if let Some(b) = self.hindrance(p) {
                        return Some(b);
                    }
                }
            }
        }
        None
    }

    /// B10.2: terrain (or bare ground) exactly at the higher end's level blocks the view down
    /// past it, save the crest of the higher end's own adjacent hex.
    fn crest(&mut self, p: Props, height2: i16) -> Option<Block> {
        let cell = self.map.cell(self.cur);
        let base2 = 2 * i16::from(cell.base);
        let near = |end: Spot| {
            let (ex, ey) = self.g.centre(end);
            let (cx, cy) = self.g.centre(self.cur);
            let d_px = (ex - self.x as f64).hypot(ey - self.y as f64);
            let d_c = (ex - cx).hypot(ey - cy);
            d_px < d_c
        };
        if self.r_src == 1 && height2 == 0 && self.src_el > base2 && near(self.src) {
            return None;
        }
        if self.r_tgt == 1 && height2 == 0 && self.tgt_el > base2 && near(self.tgt) {
            return None;
        }
        if p.has(flag::BOCAGE) {
            return None;
        }
        let water = |s: Spot| self.props[usize::from(self.map.cell(s).centre)].has(flag::WATER);
        if water(self.cur)
            && p.height < 1
            && ((self.r_src == 1 && self.src_el > self.tgt_el && water(self.tgt))
                || (self.r_tgt == 1 && self.tgt_el > self.src_el && water(self.src)))
        {
            return None;
        }
        if p.has(flag::ORCHARD_OUT_OF_SEASON) {
            return self.hindrance(p);
        }
        Some(Block::Crest)
    }

    /// Whether the lower end lies in the blind zone behind something `height2` half levels
    /// tall on ground `g2` here (A6.4, B10.23): within one hex per level of obstacle above the
    /// lower end's, less the higher end's height advantage, plus one per five hexes of range.
    fn blind(&self, g2: i16, height2: i16, cliff_side: bool) -> bool {
        if self.src_el == self.tgt_el {
            return false;
        }
        let (eh, el, rs, rt, start, finish) = if self.src_el >= self.tgt_el {
            (
                self.src_el,
                self.tgt_el,
                self.r_src,
                self.r_tgt,
                self.src,
                self.tgt,
            )
        } else {
            (
                self.tgt_el,
                self.src_el,
                self.r_tgt,
                self.r_src,
                self.tgt,
                self.src,
            )
        };
        if cliff_side && !self.along_side {
            let loc = self.g.nearest_location(self.cur, self.x, self.y);
            let cell = self.map.cell(self.cur);
            let loc_code = if loc == 0 {
                cell.centre
            } else {
                cell.side_terrain[loc - 1]
            };
            if self.props[usize::from(loc_code)].has(flag::CLIFF) && eh > height2 {
                let (cx, cy) = self.g.centre(self.cur);
                let dist = |s: Spot, px: f64, py: f64| {
                    let (ex, ey) = self.g.centre(s);
                    (ex - px).hypot(ey - py)
                };
                let (x, y) = (self.x as f64, self.y as f64);
                if rs == 1 && dist(start, x, y) < dist(start, cx, cy) {
                    return false;
                }
                if rt == 1 && dist(finish, x, y) > dist(finish, cx, cy) {
                    return false;
                }
            }
        }
        let reach = 2 * (g2 + height2) + 2 * (rs as i16 / 5) - eh - el;
        if height2 == 0 && !cliff_side {
            2 * rt as i16 <= reach.max(0)
        } else {
            2 * rt as i16 <= (reach + 2).max(2)
        }
    }

    /// A6.3: whether the pixel stops a thread that must leave the firer's depression (or enter
    /// the target's) before the height difference makes up for the range.
    fn depression(&self, g2: i16) -> bool {
        let cell = self.map.cell(self.cur);
        let cur_dep = self.props[usize::from(cell.centre)].has(flag::DEPRESSION);
        let base2 = 2 * i16::from(cell.base);
        let (s, t) = (self.src_el, self.tgt_el);
        let dist = |end: Spot| {
            let (ex, ey) = self.g.centre(end);
            let (cx, cy) = self.g.centre(self.cur);
            (
                (ex - self.x as f64).hypot(ey - self.y as f64),
                (ex - cx).hypot(ey - cy),
            )
        };
        let dep = |h: Spot| self.props[usize::from(self.map.cell(h).centre)].has(flag::DEPRESSION);
        // (far end, the depression end's level, the far end's level, range to the far end)
        let mut cases = [None, None];
        if self.exits_depression {
            cases[0] = Some((self.tgt, s, t, self.r_tgt));
        }
        if self.enters_depression {
            cases[1] = Some((self.src, t, s, self.r_src));
        }
        for (far, nl, fl, r_far) in cases.into_iter().flatten() {
            let mut test1 = 2 * r_far as i16 > fl - nl
                && self.cur != far
                && !(cur_dep && (g2 == base2 || nl >= g2))
                && (cur_dep || g2 > nl);
            if test1 {
                if self.range == 1 && dep(far) {
                    test1 = false;
                }
                if fl == nl
                    && self.cur != far
                    && ((cur_dep && g2 == base2) || (!cur_dep && g2 <= fl))
                {
                    test1 = false;
                }
                let (dp, dc) = dist(far);
                if r_far == 1 && fl > base2 && cur_dep && dp < dc {
                    test1 = false;
                }
            }
            let test2 =
                !test1 && r_far == 1 && cur_dep && !(g2 == base2 || nl >= g2 || fl > g2) && {
                    let (dp, dc) = dist(far);
                    dp > dc
                };
            if test1 || test2 {
                return true;
            }
        }
        false
    }

    /// For a thread along a cliff hexside (0° or 60°, at an odd range where it runs between
    /// two hexes), the lower of the two hexes' levels in half levels, the far one counted only
    /// when it is not an end.
    fn cliff_along(&self) -> Option<i16> {
        if !self.along_side || self.r_src % 2 == 0 || self.tgt_spine < 0 {
            return None;
        }
        let k = self.tgt_spine as usize;
        // The two hexsides of the current hex parallel to the thread; the nearer one.
        let (a, b) = ((k + 4) % 6, (k + 1) % 6);
        let e = self.g.edge_points(self.cur);
        let d2 = |(px, py): (i64, i64)| (px - self.x).pow(2) + (py - self.y).pow(2);
        let side = if d2(e[a]) < d2(e[b]) { a } else { b };
        let cell = self.map.cell(self.cur);
        if !self.props[usize::from(cell.side_terrain[side])].has(flag::CLIFF) {
            return None;
        }
        let base = i16::from(cell.base);
        let lower = match self.g.adjacent(self.cur, side) {
            Some(o) if o != self.src && o != self.tgt => base.min(i16::from(self.map.cell(o).base)),
            _ => base,
        };
        Some(2 * lower)
    }

    /// Whether the hexside nearest the pixel (in the hex the pixel lies in) is a cliff.
    fn nearest_side_is_cliff(&self) -> bool {
        if self.along_side {
            return false;
        }
        let Some(h) = self.g.pixel_to_hex(self.x, self.y) else {
            return false;
        };
        let loc = self.g.nearest_location(h, self.x, self.y);
        loc > 0 && {
            let s = self.map.cell(h).sides[loc - 1];
            s != NO_HEXSIDE && self.props[usize::from(s)].has(flag::CLIFF)
        }
    }

    /// Counts a hindrance in the current hex (A6.1): only between the ends, once per range
    /// from the firer, the larger where two hexes at one range both hinder.
    fn hindrance(&mut self, p: Props) -> Option<Block> {
        if self.cur == self.src || self.cur == self.tgt {
            return None;
        }
        if Geometry::range(self.src, self.cur) >= self.range
            || Geometry::range(self.tgt, self.cur) >= self.range
        {
            return None;
        }
        let value = if self.along_side && self.r_src % 2 != 0 {
            1
        } else if p.has(flag::LIGHT_WOODS) {
            2
        } else {
            1
        };
        let key = (self.r_src as usize).min(RANGE_MAX - 1);
        if value > self.hind[key] {
            self.hind_total += value - self.hind[key];
            self.hind[key] = value;
            let hex = self.map.cell(self.cur).hex;
            match self.hind_at.iter_mut().find(|(k, _, _)| *k == key) {
                Some(at) => *at = (key, hex, value),
                None => self.hind_at.push((key, hex, value)),
            }
        }
        (self.hind_total >= HINDRANCES_BLOCKING).then_some(Block::Hindrances)
    }

    /// Walls, hedges and bocage drawn along hexsides (B9): ignored on the ends' own hexsides
    /// and hexspines; otherwise a wall or hedge blocks a thread between two Locations at its
    /// own ground level (B9.2), and bocage one that does not look down over it (B9.52).
    fn hexside_terrain(&mut self, p: Props, g2: i16, height2: i16) -> Option<Block> {
        let loc = self.g.nearest_location(self.cur, self.x, self.y);
        if self.ignorable(self.src, loc, self.src_spine)
            || self.ignorable(self.tgt, loc, self.tgt_spine)
        {
            return None;
        }
        let (s, t) = (self.src_el, self.tgt_el);
        if p.has(flag::BOCAGE) {
            let top = g2 + height2;
            if (top > s && top > t)
                || (top == s && top == t && p.has(flag::HALF_LEVEL))
                || (top == s.max(t) && top > s.min(t))
            {
                return Some(Block::Bocage);
            } else if self.blind(g2, height2, false) {
                return Some(Block::BocageBlind);
            }
        } else if g2 == s && g2 == t {
            return Some(Block::HexsideTerrain);
        }
        None
    }

    /// Whether hexside terrain at location `loc` of the current hex (0 = its centre, 1 + d its
    /// side d) may be ignored for a thread starting or ending in hex `end`: the end's own
    /// hexsides and the hexspines leading away from its vertices (B9.2's adjacency).
    fn ignorable(&self, end: Spot, loc: usize, spine: i8) -> bool {
        if loc == 0 {
            return true;
        }
        let here = self.cur;
        let side = loc - 1;
        let cells = |s: Spot| self.map.cell(s);
        let rng = Geometry::range(end, here);
        if rng > 2 {
            return false;
        }
        if here == end {
            return true;
        }
        for d in 0..6 {
            if self.g.adjacent(end, d) == Some(here) {
                if side == (d + 3) % 6 {
                    return true;
                }
                let spine_side = side == (d + 2) % 6 || side == (d + 4) % 6;
                let s = cells(here).sides[side];
                let bocage = s != NO_HEXSIDE && self.props[usize::from(s)].has(flag::BOCAGE);
                if spine_side && !bocage {
                    return true;
                }
            }
        }
        if rng == 1 && !self.props[usize::from(cells(here).side_terrain[side])].has(flag::HEXSIDE) {
            return true;
        }
        if spine >= 0 {
            let spine = spine as usize;
            let (mut lh, mut ls) = (here, side);
            if rng == 2 {
                let Some(o) = self.g.adjacent(here, side) else {
                    return true;
                };
                if Geometry::range(end, o) > 1 {
                    return false;
                }
                lh = o;
                ls = (side + 3) % 6;
            }
            let hexside = if spine == 0 { 5 } else { spine - 1 };
            let hexspine = if spine < 2 { spine + 4 } else { spine - 2 };
            let (Some(h1), Some(h2)) = (self.g.adjacent(end, hexside), self.g.adjacent(end, spine))
            else {
                return false;
            };
            let t1 = cells(h2).sides[hexspine];
            let t2 = cells(h1).sides[spine];
            let t3 = cells(h2).sides[hexside];
            return t1 != NO_HEXSIDE
                && ((lh, ls) == (h1, spine) || (lh, ls) == (h2, hexside))
                && (t2 == NO_HEXSIDE || t3 == NO_HEXSIDE);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::codes::TerrainTable;
    use super::super::map::{painted_board, BoardMap, Geometry, Placed};
    use super::*;

    const OPEN: u8 = 0;
    const GRAIN: u8 = 24;
    const WOODS: u8 = 60;
    const WALL: u8 = 72;

    /// A board painted hex by hex (`hexes`: VASL name → level and terrain, the rest open
    /// ground at level 0), with optional pixels on top (`extra`, e.g. a wall along a hexside).
    fn board(
        hexes: &[(&str, i8, u8)],
        extra: impl Fn(i64, i64) -> Option<(i8, u8)>,
    ) -> super::super::archive::BoardArchive {
        let g = Geometry {
            width: 1800,
            height: 645,
            columns: 33,
            rows: 10,
        };
        let spots: Vec<((i32, i32), i8, u8)> = hexes
            .iter()
            .map(|(name, level, code)| {
                let hex: Hex = name.parse().unwrap();
                let c = i32::from(hex.column) - 1;
                let r = i32::from(hex.row) - i32::from(c & 1 == 0);
                ((c, r), *level, *code)
            })
            .collect();
        painted_board("1", move |x, y| {
            if let Some(p) = extra(x, y) {
                return p;
            }
            let s = g.pixel_to_hex(x, y);
            spots
                .iter()
                .find(|(spot, _, _)| Some(*spot) == s)
                .map_or((0, OPEN), |(_, l, c)| (*l, *c))
        })
    }

    fn map_of(rows: Vec<Vec<(u16, bool, &super::super::archive::BoardArchive)>>) -> BoardMap {
        let rows = rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|(number, rotated, a)| Placed {
                        number,
                        rotated,
                        archive: Arc::new(a.clone()),
                    })
                    .collect()
            })
            .collect();
        BoardMap::new(rows, Arc::new(TerrainTable::builtin())).unwrap()
    }

    fn one(b: &super::super::archive::BoardArchive) -> BoardMap {
        map_of(vec![vec![(1, false, b)]])
    }

    fn h(name: &str) -> Hex {
        name.parse().unwrap()
    }

    fn los(map: &BoardMap, a: &str, al: i16, b: &str, bl: i16) -> GridLos {
        map.los(h(a), al, h(b), bl).unwrap()
    }

    #[test]
    fn woods_between_two_hexes_block() {
        let map = one(&board(&[("E5", 0, WOODS)], |_, _| None));
        let v = los(&map, "1E2", 0, "1E8", 0);
        assert!(v.blocked, "{v:?}");
        assert!(
            v.reason.contains("A6.2") && v.reason.contains("Woods"),
            "{}",
            v.reason
        );
        // The reason names the hex that blocks.
        assert_eq!(v.reason, "Woods in 1E5 is higher than both ends (A6.2)");
        assert!(v.path.contains(&h("1E5")));
        // Beside the thread it is not in the way; in the firer's own hex it is ignored (A6.1).
        assert!(!los(&map, "1G2", 0, "1G8", 0).blocked);
        assert!(!los(&map, "1E5", 0, "1E9", 0).blocked);
        // Woods one level high do not stop a thread between two level-2 Locations (A6.2).
        assert!(!los(&map, "1E2", 4, "1E8", 4).blocked);
    }

    #[test]
    fn a_hill_crest_blocks_ground_level_but_not_from_level_two() {
        let map = one(&board(&[("E5", 1, OPEN)], |_, _| None));
        let v = los(&map, "1E2", 0, "1E8", 0);
        assert!(v.blocked && v.reason.contains("B10"), "{v:?}");
        // From level 2 the level-1 hill three hexes out hides nothing three hexes behind it.
        let v = los(&map, "1E2", 4, "1E8", 0);
        assert!(!v.blocked, "{v:?}");
        // B10.2: a hill as high as the viewer hides what lies below beyond it.
        let v = los(&map, "1E2", 2, "1E8", 0);
        assert!(v.blocked && v.reason.contains("B10.2"), "{v:?}");
        // B10.23: seen from a level above a level-2 crest, the hex right behind it is blind,
        // the next is not.
        let map = one(&board(&[("E4", 2, OPEN), ("E5", 2, OPEN)], |_, _| None));
        let v = los(&map, "1E2", 6, "1E6", 0);
        assert!(v.blocked && v.reason.contains("B10.23"), "{v:?}");
        assert!(!los(&map, "1E2", 6, "1E7", 0).blocked);
    }

    #[test]
    fn a_wall_between_two_locations_at_its_level_blocks() {
        // A wall along the hexside between E5 and E6.
        let g = Geometry {
            width: 1800,
            height: 645,
            columns: 33,
            rows: 10,
        };
        let (wx, wy) = g.edge_points((4, 4))[3];
        let map = one(&board(&[], move |x, y| {
            ((x - wx).abs() < 18 && (y - wy - 1).abs() <= 1).then_some((0, WALL))
        }));
        let v = los(&map, "1E3", 0, "1E8", 0);
        assert!(v.blocked && v.reason.contains("B9.2"), "{v:?}");
        // The reason names the hexside that blocks.
        assert!(
            v.reason.contains("(1E5-1E6)") || v.reason.contains("(1E6-1E5)"),
            "{}",
            v.reason
        );
        // Its own hexside does not stop a unit behind it (B9.2 looks past an adjacent wall).
        assert!(!los(&map, "1E5", 0, "1E8", 0).blocked);
        // From a level above it, the wall is not in the way.
        assert!(!los(&map, "1E3", 2, "1E8", 0).blocked);
        assert_eq!(map.cell_of(h("1E5")).unwrap().sides[3], WALL);
    }

    #[test]
    fn a_bridge_hinders_and_is_passed_under_but_is_no_hill_or_crest() {
        const WATER: u8 = 8;
        const BRIDGE: u8 = 82; // Single Hex Stone Bridge
                               // A stream at level -1 down column E, a stone bridge at level 0 across it in E5.
        let stream = |bridge_level: i8| {
            board(
                &[
                    ("E3", -1, WATER),
                    ("E4", -1, WATER),
                    ("E5", bridge_level, BRIDGE),
                    ("E6", -1, WATER),
                    ("E7", -1, WATER),
                ],
                |_, _| None,
            )
        };
        let map = one(&stream(0));
        // From the bank at level 0 into the stream past the bridge: the deck is at the higher
        // end's level but is a Hindrance, not a crest (B6, terrain chart).
        let v = los(&map, "1E2", 0, "1E7", 0);
        assert!(!v.blocked, "{v:?}");
        assert_eq!(v.hindrances, 1, "{v:?}");
        assert!(v.reason.contains("in 1E5"), "{}", v.reason);
        // Along the stream beneath the deck: the deck is no hill between the two.
        let v = los(&map, "1E3", 0, "1E7", 0);
        assert!(!v.blocked, "{v:?}");
        assert_eq!(v.hindrances, 0, "{v:?}");
        // Ground at the same level where the bridge was still stops both threads.
        let map = one(&board(
            &[
                ("E3", -1, WATER),
                ("E4", -1, WATER),
                ("E5", 0, OPEN),
                ("E6", -1, WATER),
                ("E7", -1, WATER),
            ],
            |_, _| None,
        ));
        assert!(los(&map, "1E2", 0, "1E7", 0).blocked);
        assert!(los(&map, "1E3", 0, "1E7", 0).blocked);
    }

    #[test]
    fn hindrances_count_once_per_hex_and_six_block() {
        let three: Vec<(&str, i8, u8)> =
            ["E4", "E5", "E6"].iter().map(|n| (*n, 0, GRAIN)).collect();
        let map = one(&board(&three, |_, _| None));
        let v = los(&map, "1E2", 0, "1E8", 0);
        assert!(!v.blocked, "{v:?}");
        assert_eq!(v.hindrances, 3);
        // The reason names each hex that hinders.
        assert_eq!(
            v.reason,
            "clear, hindered by 3 (+1 in 1E4, +1 in 1E5, +1 in 1E6) (A6.1)"
        );
        // Grain in the firer's or the target's own hex does not hinder (A6.1).
        assert_eq!(los(&map, "1E4", 0, "1E8", 0).hindrances, 2);
        // From above the grain's half level it does not hinder at all.
        assert_eq!(los(&map, "1E2", 2, "1E8", 2).hindrances, 0);
        let six: Vec<(&str, i8, u8)> = ["E3", "E4", "E5", "E6", "E7", "E8"]
            .iter()
            .map(|n| (*n, 0, GRAIN))
            .collect();
        let map = one(&board(&six, |_, _| None));
        let v = los(&map, "1E2", 0, "1E10", 0);
        assert!(v.blocked && v.reason.contains("6 or more"), "{v:?}");
        assert!(
            v.reason.contains("+1 in 1E3") && v.reason.contains("+1 in 1E8"),
            "{}",
            v.reason
        );
        assert_eq!(los(&map, "1E2", 0, "1E8", 0).hindrances, 5);
    }

    #[test]
    fn a_rotated_board_keeps_its_terrain_under_its_hex_names() {
        let woods = board(&[("E5", 0, WOODS)], |_, _| None);
        let open = board(&[], |_, _| None);
        let map = map_of(vec![vec![(2, false, &open), (1, true, &woods)]]);
        let v = los(&map, "1E2", 0, "1E8", 0);
        assert!(v.blocked && v.reason.contains("Woods"), "{v:?}");
        assert!(!los(&map, "1G2", 0, "1G8", 0).blocked);
        assert_eq!(map.cell_of(h("1E5")).unwrap().centre, WOODS);
        // Board 1 is turned: its E5 lies east of its AA column.
        assert!(map.centre(h("1E5")).unwrap().0 > map.centre(h("1AA5")).unwrap().0);
    }

    #[test]
    fn a_seam_hex_sees_the_same_under_either_name() {
        let woods = board(&[("C5", 0, WOODS)], |_, _| None);
        let open = board(&[], |_, _| None);
        let map = map_of(vec![vec![(1, false, &open), (2, false, &woods)]]);
        let a = los(&map, "1GG5", 0, "2E5", 0);
        let b = los(&map, "2A5", 0, "2E5", 0);
        assert_eq!(a, b);
        assert!(a.blocked, "{a:?}");
        // And across the seam from board 1's interior.
        assert!(los(&map, "1EE4", 0, "2E6", 0).blocked);
        assert!(!los(&map, "1EE2", 0, "2E2", 0).blocked);
    }
}
