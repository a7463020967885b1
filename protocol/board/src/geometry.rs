//! Hex geometry over the whole map a scenario is played on: which hexes are adjacent, in which
//! direction, across which hexside, and at what range — across the seams between boards too.
//!
//! A [`Hex`] alone is a name (board, column, row): its own methods know one board and say two
//! hexes on different boards are never adjacent. A scenario on real boards (`[map] boards`)
//! lays geomorphic boards edge to edge, some turned through 180°, and the rules must see one
//! map: a unit on board 1's east edge moves onto board 2, fire across the seam has a range.
//! [`Geometry`] answers every such question for a scenario. Without a map it is exactly the
//! hex's own methods (a hand-typed scenario is unchanged); with one it goes through the map's
//! grid of hexes, the one VASL lays boards out on (`board::vasl::map`), built from the layout
//! alone so that the answer never depends on which board archives a process has read.
//!
//! On a map:
//! - a seam hex (board 1's GG column is board 2's A column, board 1's row 10 half hexes are
//!   board 3's row 0) is one hex with one name, the name of the board placed later (east, then
//!   south), as VASL names it; its other name is accepted everywhere as the same hex
//!   ([`Geometry::canonical`]), and every hex this module returns carries the canonical name;
//! - directions are the map's: `N` is towards the map's north edge on every board, so on a
//!   board turned 180° it is the board's own printed south. Every rule that keeps a direction
//!   (a hexside's bit in a Wall Advantage mask, the hexside a line of fire enters by) asks this
//!   module, so all of them agree;
//! - a hexside between hexes of two boards is an ordinary [`Hexside`], stored by the canonical
//!   names of its hexes, so it is equal whichever name of a seam hex it was given with.

use crate::hex::{
    entry_directions, Direction, Entry, Hex, Hexside, HexsideError, Vertex, DIRECTIONS,
};
use crate::model::MapSpec;
use crate::vasl::map::Geometry as Grid;

/// A position in the map's grid: column from the west edge, index within the column
/// (`board::vasl::map`'s spots).
type Spot = (i32, i32);

/// Columns one board adds to a map: 33 printed, the last shared with the next board.
const BOARD_COLUMN_STEP: i32 = 32;
/// Rows one board adds to a map: the half hexes of row 10 are the next board's row 0.
const BOARD_ROW_STEP: i32 = 10;

/// The geometry of one scenario's map; cheap to copy (it borrows the scenario's layout).
#[derive(Clone, Copy, Debug)]
pub struct Geometry<'a> {
    map: Option<&'a MapSpec>,
}

impl Geometry<'static> {
    /// No map of real boards: every question is answered by [`Hex`]'s own methods.
    pub const PLAIN: Geometry<'static> = Geometry { map: None };
}

impl<'a> Geometry<'a> {
    /// The geometry of a map of real boards, or of hand-typed hexes (`None`).
    pub fn of_map(map: Option<&'a MapSpec>) -> Geometry<'a> {
        Geometry {
            map: map.filter(|m| m.rows.first().is_some_and(|r| !r.is_empty())),
        }
    }

    /// Whether boards are laid out as a map (seams exist).
    pub fn has_map(self) -> bool {
        self.map.is_some()
    }

    fn grid(self) -> Option<(&'a MapSpec, Grid)> {
        let map = self.map?;
        let across = map.rows[0].len() as i64;
        let down = map.rows.len() as i64;
        Some((
            map,
            Grid {
                width: across * 1800,
                height: down * 645,
                columns: across as i32 * BOARD_COLUMN_STEP + 1,
                rows: down as i32 * BOARD_ROW_STEP,
            },
        ))
    }

    /// Where a hex (by either of its names) lies in the map's grid; `None` off the map or
    /// without one.
    fn spot(self, hex: Hex) -> Option<Spot> {
        let (map, _) = self.grid()?;
        let board = hex.board?;
        let col = i32::from(hex.column) - 1;
        if !(0..=BOARD_COLUMN_STEP).contains(&col) {
            return None;
        }
        // Odd printed columns (A, C, …) hold rows 1–10, even ones rows 0–10.
        let idx = i32::from(hex.row) - i32::from(col & 1 == 0);
        if idx < 0 || idx >= BOARD_ROW_STEP + (col & 1) {
            return None;
        }
        for (br, row) in map.rows.iter().enumerate() {
            for (bc, p) in row.iter().enumerate() {
                if p.board != board {
                    continue;
                }
                let (lc, lr) = if p.rotated {
                    let lc = BOARD_COLUMN_STEP - col;
                    (lc, BOARD_ROW_STEP + (lc & 1) - 1 - idx)
                } else {
                    (col, idx)
                };
                return Some((
                    bc as i32 * BOARD_COLUMN_STEP + lc,
                    br as i32 * BOARD_ROW_STEP + lr,
                ));
            }
        }
        None
    }

    /// The canonical name of the hex at a spot: the board placed last (east, then south)
    /// among those that hold it, as `BoardMap` names it.
    fn name(self, (c, r): Spot) -> Option<Hex> {
        let (map, _) = self.grid()?;
        let across = map.rows[0].len();
        (0..across * map.rows.len()).rev().find_map(|i| {
            let p = map.rows.get(i / across)?.get(i % across)?;
            let (bc, br) = ((i % across) as i32, (i / across) as i32);
            let (lc, lr) = (c - bc * BOARD_COLUMN_STEP, r - br * BOARD_ROW_STEP);
            if !(0..=BOARD_COLUMN_STEP).contains(&lc) || lr < 0 || lr >= BOARD_ROW_STEP + (lc & 1) {
                return None;
            }
            let (oc, or) = if p.rotated {
                (BOARD_COLUMN_STEP - lc, BOARD_ROW_STEP + (lc & 1) - 1 - lr)
            } else {
                (lc, lr)
            };
            let row = or + i32::from(oc & 1 == 0);
            Some(Hex::new(Some(p.board), oc as u16 + 1, row as u16))
        })
    }

    /// Both hexes' spots, when both are on the map.
    fn spots(self, a: Hex, b: Hex) -> Option<(Spot, Spot)> {
        Some((self.spot(a)?, self.spot(b)?))
    }

    /// The name the map uses for `hex` (a seam hex named by its other board comes back under
    /// the map's name); any other hex unchanged.
    pub fn canonical(self, hex: Hex) -> Hex {
        self.spot(hex).and_then(|s| self.name(s)).unwrap_or(hex)
    }

    /// Whether two names are the same hex (`1GG5` and `2A5` where board 2 lies east of 1).
    pub fn same_hex(self, a: Hex, b: Hex) -> bool {
        a == b || self.canonical(a) == self.canonical(b)
    }

    /// The hex one step away in `direction` (the map's direction on a map), by its canonical
    /// name.
    pub fn step(self, hex: Hex, direction: Direction) -> Option<Hex> {
        match (self.grid(), self.spot(hex)) {
            (Some((_, grid)), Some(s)) => grid
                .adjacent(s, direction.index())
                .and_then(|n| self.name(n)),
            _ => hex.step(direction),
        }
    }

    /// All neighbours, clockwise from N.
    pub fn neighbours(self, hex: Hex) -> Vec<Hex> {
        DIRECTIONS
            .iter()
            .filter_map(|d| self.step(hex, *d))
            .collect()
    }

    /// The direction from `a` to an adjacent `b`, or `None` if they are not adjacent.
    pub fn direction_to(self, a: Hex, b: Hex) -> Option<Direction> {
        match (self.grid(), self.spots(a, b)) {
            (Some((_, grid)), Some((sa, sb))) => DIRECTIONS
                .iter()
                .copied()
                .find(|d| grid.adjacent(sa, d.index()) == Some(sb)),
            _ => a.direction_to(b),
        }
    }

    pub fn is_adjacent(self, a: Hex, b: Hex) -> bool {
        self.direction_to(a, b).is_some()
    }

    /// Range in hexes (A2.1's count, the firer's hex not counted); `None` only between hexes
    /// of two boards that no map lays side by side.
    pub fn distance(self, a: Hex, b: Hex) -> Option<u32> {
        match self.spots(a, b) {
            Some((sa, sb)) => Some(Grid::range(sa, sb).unsigned_abs()),
            None => a.distance(b),
        }
    }

    /// The hexside between two adjacent hexes, by their canonical names.
    pub fn hexside(self, a: Hex, b: Hex) -> Option<Hexside> {
        if !self.has_map() {
            return a.hexside(b);
        }
        self.is_adjacent(a, b)
            .then(|| Hexside::new(self.canonical(a), self.canonical(b)))
    }

    /// The hexside of `hex` towards `direction`, if there is a hex across it.
    pub fn hexside_towards(self, hex: Hex, direction: Direction) -> Option<Hexside> {
        self.step(hex, direction)
            .map(|n| Hexside::new(self.canonical(hex), n))
    }

    /// The hexsides of `hex` that have a hex across them, clockwise from N.
    pub fn hexsides(self, hex: Hex) -> Vec<Hexside> {
        DIRECTIONS
            .iter()
            .filter_map(|d| self.hexside_towards(hex, *d))
            .collect()
    }

    /// A hexside as the rules store it: both hexes by their canonical names (the hexside
    /// `1FF5-1GG5` is `1FF5-2A5` when board 2 lies east of board 1).
    pub fn canonical_hexside(self, side: Hexside) -> Hexside {
        if !self.has_map() {
            return side;
        }
        Hexside::new(self.canonical(side.a), self.canonical(side.b))
    }

    /// Reads a hexside written as two adjacent hexes (`1FF5-2A5`, `H7-I8`); a board given on
    /// the first hex carries to a second that has none.
    pub fn parse_hexside(self, text: &str) -> Result<Hexside, HexsideError> {
        if !self.has_map() {
            return text.parse();
        }
        let (x, y) = crate::hex::hex_pair(text)?;
        self.hexside(x, y)
            .ok_or_else(|| HexsideError::NotAdjacent(x, y, text.to_string()))
    }

    /// The vertices of `hex`, each named by the three hexes that meet there.
    pub fn vertices(self, hex: Hex) -> Vec<Vertex> {
        let me = self.canonical(hex);
        DIRECTIONS
            .iter()
            .filter_map(|d| {
                let a = self.step(hex, *d)?;
                let b = self.step(hex, d.clockwise())?;
                Some(Vertex::new(me, a, b))
            })
            .collect()
    }

    /// The vertex where three mutually adjacent hexes meet.
    pub fn vertex(self, x: Hex, y: Hex, z: Hex) -> Option<Vertex> {
        (self.is_adjacent(x, y) && self.is_adjacent(y, z) && self.is_adjacent(x, z))
            .then(|| Vertex::new(self.canonical(x), self.canonical(y), self.canonical(z)))
    }

    /// Two hexsides of `hex` are contiguous (share a vertex) when their far hexes are adjacent
    /// to each other (A4.31).
    pub fn contiguous_in(self, x: Hexside, y: Hexside, hex: Hex) -> bool {
        let (x, y, hex) = (
            self.canonical_hexside(x),
            self.canonical_hexside(y),
            self.canonical(hex),
        );
        match (x.other(hex), y.other(hex)) {
            (Some(a), Some(b)) => self.is_adjacent(a, b),
            _ => false,
        }
    }

    /// The hex's centre in the integer plane LOS threads are traced in (`Hex::plane`), the
    /// map's whole grid taken as one board; `None` on a map for a hex of no board of it.
    pub fn plane(self, hex: Hex) -> Option<(i64, i64)> {
        if !self.has_map() {
            return Some(hex.plane());
        }
        let (c, r) = self.spot(hex)?;
        let (column, doubled) = (i64::from(c) + 1, i64::from(2 * r + 1 - (c & 1)));
        Some((6 * column, 2 * doubled))
    }

    /// Where a straight line from `from`'s centre enters `target`: through one hexside or
    /// along a hexspine (B9.3), each hexside named by the hex across it.
    pub fn entry_from(self, target: Hex, from: Hex) -> Option<Entry> {
        let Some((st, sf)) = self.spots(target, from).filter(|_| self.has_map()) else {
            return target.entry_from(from);
        };
        // The map's grid as one big board: column c + 1, doubled height 2r + 1 − (c mod 2).
        let frame = |(c, r): Spot| (c + 1, 2 * r + 1 - (c & 1));
        let across = |d: Direction| self.step(target, d);
        match entry_directions(frame(st), frame(sf)).as_slice() {
            [one] => across(*one).map(Entry::Hexside),
            [x, y] => Some(Entry::Hexspine(across(*x)?, across(*y)?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PlacedBoard;

    fn h(name: &str) -> Hex {
        name.parse().unwrap()
    }

    fn spec(rows: &[&[&str]]) -> MapSpec {
        MapSpec {
            rows: rows
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|b| PlacedBoard {
                            board: b.trim_end_matches('r').parse().unwrap(),
                            rotated: b.ends_with('r'),
                            version: "6.1".into(),
                            digest: String::new(),
                        })
                        .collect()
                })
                .collect(),
        }
    }

    #[test]
    fn without_a_map_the_hex_answers() {
        let g = Geometry::PLAIN;
        assert_eq!(g.step(h("6Z9"), Direction::N), Some(h("6Z8")));
        assert_eq!(g.distance(h("1A1"), h("2A1")), None);
        assert_eq!(g.canonical(h("1GG5")), h("1GG5"));
        assert_eq!(
            g.hexside(h("55H7"), h("55I8")),
            h("55H7").hexside(h("55I8"))
        );
    }

    #[test]
    fn a_seam_hex_has_the_later_boards_name_and_neighbours_on_both_boards() {
        let map = spec(&[&["1", "2"]]);
        let g = Geometry::of_map(Some(&map));
        assert_eq!(g.canonical(h("1GG5")), h("2A5"));
        assert_eq!(g.canonical(h("2A5")), h("2A5"));
        assert!(g.same_hex(h("1GG5"), h("2A5")));
        // 2A5 (odd column, rows 1–10): west of it board 1's FF4 and FF5, east 2B4 and 2B5.
        let mut n: Vec<Hex> = g.neighbours(h("1GG5"));
        n.sort();
        let mut want = vec![h("1FF4"), h("1FF5"), h("2A4"), h("2A6"), h("2B4"), h("2B5")];
        want.sort();
        assert_eq!(n, want);
        assert_eq!(g.distance(h("1FF5"), h("2B5")), Some(2));
        assert_eq!(g.distance(h("1A1"), h("2A1")), Some(32));
        let side = g.hexside(h("1FF5"), h("1GG5")).unwrap();
        assert_eq!(Some(side), g.hexside(h("2A5"), h("1FF5")));
        assert_eq!(g.parse_hexside("1FF5-2A5"), Ok(side));
    }

    #[test]
    fn on_a_rotated_board_north_is_the_maps() {
        let map = spec(&[&["1", "2r"]]);
        let g = Geometry::of_map(Some(&map));
        // Board 2 turned round: its GG column lies against board 1's GG column.
        assert_eq!(g.canonical(h("1GG5")), h("2GG6"));
        // Its printed row numbers run south to north: map north of 2M5 is 2M6.
        assert_eq!(g.step(h("2M5"), Direction::N), Some(h("2M6")));
        assert_eq!(g.step(h("1M5"), Direction::N), Some(h("1M4")));
        assert_eq!(g.step(h("2GG6"), Direction::NW), Some(h("1FF4")));
    }

    #[test]
    fn a_north_south_seam_joins_row_10_to_row_0() {
        let map = spec(&[&["1", "2"], &["3", "4"]]);
        let g = Geometry::of_map(Some(&map));
        assert_eq!(g.canonical(h("1B10")), h("3B0"));
        assert_eq!(g.step(h("1C10"), Direction::S), Some(h("3C1")));
        assert_eq!(g.step(h("3C1"), Direction::N), Some(h("1C10")));
        // Where four boards meet: south of 1GG10 (= 2A10) is board 4's A1.
        assert_eq!(g.step(h("1GG10"), Direction::S), Some(h("4A1")));
        assert_eq!(g.distance(h("1A1"), h("3A10")), Some(19));
    }
}
