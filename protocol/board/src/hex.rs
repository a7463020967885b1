//! Hex coordinates as printed on ASL boards (`6Z9`, `55H7`, `H7`), and the geometry the rules
//! lean on: neighbours, the hexside two adjacent hexes share, the vertex three hexes meet at,
//! and distance.
//!
//! Columns alternate in height (rules README, "Hex coordinates"): counting A as column 1,
//! an even column (B, D, … Z, BB …) puts row r's centre at height r and an odd one at r − ½.
//! Internally a hex is kept as (column, doubled height) so every neighbour is a fixed offset;
//! the printed name is derived on the way out and never stored twice.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Highest column index we accept: GG, the last column letter pair on a full-size board.
pub const COLUMN_MAX: u16 = 33;
/// Highest row number we accept; boards have 10 rows, overlays and maps built from several
/// boards may run longer, but nothing printed runs past this.
pub const ROW_MAX: u16 = 99;

/// One hex. `board` is the board number printed before the column (`55` in `55H7`), absent for
/// a scenario that names hexes without one. Two hexes on different boards are never adjacent:
/// the engine does not know how boards are laid next to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hex {
    pub board: Option<u16>,
    /// 1-based column: A = 1 … Z = 26, AA = 27 … GG = 33.
    pub column: u16,
    pub row: u16,
}

/// Why a hex name could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a hex name ({why}); expected an optional board number, a column letter (A–Z, AA–GG) and a row, e.g. 6Z9 or 55H7")]
pub struct HexParseError {
    pub name: String,
    pub why: &'static str,
}

/// The six directions out of a hex, clockwise from straight up the column.
pub const DIRECTIONS: [Direction; 6] = [
    Direction::N,
    Direction::NE,
    Direction::SE,
    Direction::S,
    Direction::SW,
    Direction::NW,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Direction {
    N,
    NE,
    SE,
    S,
    SW,
    NW,
}

impl Direction {
    /// (column step, doubled-height step) for this direction.
    fn offset(self) -> (i32, i32) {
        match self {
            Direction::N => (0, -2),
            Direction::NE => (1, -1),
            Direction::SE => (1, 1),
            Direction::S => (0, 2),
            Direction::SW => (-1, 1),
            Direction::NW => (-1, -1),
        }
    }
    /// This direction's place in [`DIRECTIONS`] (N = 0, clockwise).
    pub fn index(self) -> usize {
        DIRECTIONS
            .iter()
            .position(|d| *d == self)
            .expect("in table")
    }
    /// The next direction clockwise.
    pub fn clockwise(self) -> Direction {
        DIRECTIONS[(self.index() + 1) % 6]
    }
    /// The direction back: N for S, NE for SW.
    pub fn opposite(self) -> Direction {
        DIRECTIONS[(self.index() + 3) % 6]
    }
}

impl Hex {
    pub fn new(board: Option<u16>, column: u16, row: u16) -> Hex {
        Hex { board, column, row }
    }

    /// The centre dot in the plane LOS is traced on (`board::los`): x = 6 × column,
    /// y = 4 × row, less 2 in odd columns. Hexes are drawn with a flat top, so in these
    /// units every vertex and every hexside midpoint has integer coordinates and a straight
    /// line's meeting with hexsides is exact integer arithmetic.
    pub fn plane(self) -> (i64, i64) {
        (
            6 * i64::from(self.column),
            2 * i64::from(self.doubled_height()),
        )
    }

    /// Height of the centre, doubled so it stays an integer (odd columns sit half a row up).
    fn doubled_height(self) -> i32 {
        2 * i32::from(self.row) - i32::from(self.column % 2 == 1)
    }

    fn from_doubled(board: Option<u16>, column: i32, doubled_height: i32) -> Option<Hex> {
        if column < 1 || column > i32::from(COLUMN_MAX) {
            return None;
        }
        let row2 = doubled_height + (column % 2);
        if row2 % 2 != 0 {
            return None;
        }
        let row = row2 / 2;
        if row < 0 || row > i32::from(ROW_MAX) {
            return None;
        }
        Some(Hex::new(board, column as u16, row as u16))
    }

    /// The hex one step away in `direction`, if it has a printable name. Row 0 exists on real
    /// boards (half hexes on the edge), so it is accepted.
    pub fn step(self, direction: Direction) -> Option<Hex> {
        let (dc, dh) = direction.offset();
        Hex::from_doubled(
            self.board,
            i32::from(self.column) + dc,
            self.doubled_height() + dh,
        )
    }

    /// All neighbours that have a printable name, clockwise from N.
    pub fn neighbours(self) -> Vec<Hex> {
        DIRECTIONS.iter().filter_map(|d| self.step(*d)).collect()
    }

    /// The direction from `self` to an adjacent `other`, or `None` if they are not adjacent.
    pub fn direction_to(self, other: Hex) -> Option<Direction> {
        DIRECTIONS
            .iter()
            .copied()
            .find(|d| self.step(*d) == Some(other))
    }

    pub fn is_adjacent(self, other: Hex) -> bool {
        self.direction_to(other).is_some()
    }

    /// Hex distance (the number of hexes a range count passes, A7.2 style), or `None` across boards.
    pub fn distance(self, other: Hex) -> Option<u32> {
        if self.board != other.board {
            return None;
        }
        let dc = (i32::from(self.column) - i32::from(other.column)).unsigned_abs();
        let dh = (self.doubled_height() - other.doubled_height()).unsigned_abs();
        Some(dc + dh.saturating_sub(dc) / 2)
    }

    /// Where a straight line from `from`'s centre enters this hex: through one hexside, or
    /// exactly along the hexspine between two (the line passes through a vertex). `None` for
    /// the hex itself or a hex on another board. B9.3 asks this to know whether fire is
    /// "traced through" a wall or hedge of the target's hex.
    pub fn entry_from(self, from: Hex) -> Option<Entry> {
        if from == self || from.board != self.board {
            return None;
        }
        let to = (i32::from(self.column), self.doubled_height());
        let at = (i32::from(from.column), from.doubled_height());
        let across = |d: Direction| self.step(d);
        match entry_directions(to, at).as_slice() {
            [one] => across(*one).map(Entry::Hexside),
            [x, y] => Some(Entry::Hexspine(across(*x)?, across(*y)?)),
            _ => None,
        }
    }

    /// The hexside between `self` and an adjacent hex.
    pub fn hexside(self, other: Hex) -> Option<Hexside> {
        self.is_adjacent(other).then(|| Hexside::new(self, other))
    }

    /// The hexside towards `direction`, if the hex there has a name.
    pub fn hexside_towards(self, direction: Direction) -> Option<Hexside> {
        self.step(direction).map(|n| Hexside::new(self, n))
    }

    /// The six hexsides of this hex (only those whose far hex has a name).
    pub fn hexsides(self) -> Vec<Hexside> {
        self.neighbours()
            .into_iter()
            .map(|n| Hexside::new(self, n))
            .collect()
    }

    /// The six vertices of this hex, each named by the three hexes that meet there.
    pub fn vertices(self) -> Vec<Vertex> {
        DIRECTIONS
            .iter()
            .filter_map(|d| {
                let a = self.step(*d)?;
                let b = self.step(d.clockwise())?;
                Some(Vertex::new(self, a, b))
            })
            .collect()
    }
}

/// The directions of the hexsides through which a straight line from the centre at `from`
/// enters the hex centred at `to`, both given as (column, doubled height): one hexside, or two
/// when the line runs exactly along the hexspine between them; none when `from` is `to`. A
/// frame of its own so that a map of several boards ([`crate::geometry`]) asks it too.
pub(crate) fn entry_directions(to: (i32, i32), from: (i32, i32)) -> Vec<Direction> {
    if to == from {
        return Vec::new();
    }
    // Cube coordinates (q, r, s with q + r + s = 0): a linear image of the board in which the
    // ordinary dot product measures angles truly, so the question is integer arithmetic.
    let cube = |(q, h): (i32, i32)| {
        let r = (h - q).div_euclid(2);
        (q, r, -q - r)
    };
    let (a, b) = (cube(to), cube(from));
    let v = (b.0 - a.0, b.1 - a.1, b.2 - a.2);
    let dots: Vec<(i32, Direction)> = DIRECTIONS
        .iter()
        .map(|d| {
            let dir = match *d {
                Direction::N => (0, -1, 1),
                Direction::NE => (1, -1, 0),
                Direction::SE => (1, 0, -1),
                Direction::S => (0, 1, -1),
                Direction::SW => (-1, 1, 0),
                Direction::NW => (-1, 0, 1),
            };
            (v.0 * dir.0 + v.1 * dir.1 + v.2 * dir.2, *d)
        })
        .collect();
    let best = dots.iter().map(|(dot, _)| *dot).max().unwrap_or(0);
    dots.iter()
        .filter(|(dot, _)| *dot == best)
        .map(|(_, d)| *d)
        .collect()
}

fn column_name(column: u16) -> String {
    let letter = (b'A' + ((column - 1) % 26) as u8) as char;
    let repeat = if column > 26 { 2 } else { 1 };
    std::iter::repeat_n(letter, repeat).collect()
}

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(board) = self.board {
            write!(f, "{board}")?;
        }
        write!(f, "{}{}", column_name(self.column), self.row)
    }
}

impl FromStr for Hex {
    type Err = HexParseError;
    fn from_str(name: &str) -> Result<Hex, HexParseError> {
        let err = |why| HexParseError {
            name: name.to_string(),
            why,
        };
        let bytes = name.as_bytes();
        let digits_end = bytes
            .iter()
            .position(|b| !b.is_ascii_digit())
            .ok_or_else(|| err("no column letter"))?;
        let board = if digits_end == 0 {
            None
        } else {
            Some(
                name[..digits_end]
                    .parse::<u16>()
                    .map_err(|_| err("board number too large"))?,
            )
        };
        let rest = &bytes[digits_end..];
        let letters_end = rest
            .iter()
            .position(|b| !b.is_ascii_alphabetic())
            .ok_or_else(|| err("no row number"))?;
        let letters = &rest[..letters_end];
        let upper: Vec<u8> = letters.iter().map(|b| b.to_ascii_uppercase()).collect();
        let column = match upper.as_slice() {
            [c] => u16::from(c - b'A') + 1,
            [a, b] if a == b => u16::from(a - b'A') + 27,
            _ => return Err(err("column must be one letter or a doubled letter")),
        };
        if column > COLUMN_MAX {
            return Err(err("columns end at GG"));
        }
        let row_text = &name[digits_end + letters_end..];
        if row_text.is_empty() || !row_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err("row must be a number"));
        }
        let row: u16 = row_text.parse().map_err(|_| err("row too large"))?;
        if row > ROW_MAX {
            return Err(err("row too large"));
        }
        Ok(Hex::new(board, column, row))
    }
}

impl Serialize for Hex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Hex, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// How a line of sight enters a hex (see [`Hex::entry_from`]), each hexside named by the
/// hex across it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Hexside(Hex),
    /// Along the hexspine where these two hexsides meet: both count as crossed (B9.3).
    Hexspine(Hex, Hex),
}

impl Entry {
    /// The hexes across the hexsides the line crosses.
    pub fn across(self) -> Vec<Hex> {
        match self {
            Entry::Hexside(h) => vec![h],
            Entry::Hexspine(a, b) => vec![a, b],
        }
    }
}

/// The hexside shared by two adjacent hexes; stored with the smaller hex first so that
/// `H7-I8` and `I8-H7` are the same hexside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hexside {
    pub a: Hex,
    pub b: Hex,
}

impl Hexside {
    /// Callers guarantee adjacency (see [`Hex::hexside`]); the order of the two is irrelevant.
    pub(crate) fn new(x: Hex, y: Hex) -> Hexside {
        let (a, b) = if x <= y { (x, y) } else { (y, x) };
        Hexside { a, b }
    }

    /// The hex on the other side from `hex`, if `hex` is one of the two.
    pub fn other(self, hex: Hex) -> Option<Hex> {
        if hex == self.a {
            Some(self.b)
        } else if hex == self.b {
            Some(self.a)
        } else {
            None
        }
    }

    pub fn touches(self, hex: Hex) -> bool {
        self.a == hex || self.b == hex
    }

    /// Two hexsides of the same hex are contiguous (share a vertex) when their far hexes are
    /// adjacent to each other: the basis of the Bypass "contiguous hexsides" count (A4.31).
    pub fn is_contiguous_in(self, other: Hexside, hex: Hex) -> bool {
        match (self.other(hex), other.other(hex)) {
            (Some(x), Some(y)) => x.is_adjacent(y),
            _ => false,
        }
    }
}

impl fmt::Display for Hexside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.a, self.b)
    }
}

/// The two hexes of a hexside written `H7-I8` (or `55H7-55I8`; a board given on the first hex
/// carries to a second that has none), not yet checked for adjacency: every reader of a
/// hexside's text — by a board's own geometry, a map's, or as stored — starts here.
pub(crate) fn hex_pair(text: &str) -> Result<(Hex, Hex), HexsideError> {
    let (x, y) = text
        .split_once('-')
        .ok_or_else(|| HexsideError::NotPair(text.to_string()))?;
    let x: Hex = x.parse()?;
    let mut y: Hex = y.parse()?;
    if y.board.is_none() {
        y.board = x.board;
    }
    Ok((x, y))
}

/// Reads `H7-I8` (or `55H7-55I8`; a board given on the first hex carries to a second that has none).
impl FromStr for Hexside {
    type Err = HexsideError;
    fn from_str(text: &str) -> Result<Hexside, HexsideError> {
        let (x, y) = hex_pair(text)?;
        x.hexside(y)
            .ok_or_else(|| HexsideError::NotAdjacent(x, y, text.to_string()))
    }
}

/// Why a text is not a hexside.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HexsideError {
    #[error("`{0}` is not a hexside; write two adjacent hexes as H7-I8")]
    NotPair(String),
    #[error("{0}")]
    Hex(#[from] HexParseError),
    #[error("{0} and {1} are not adjacent, so `{2}` is no hexside")]
    NotAdjacent(Hex, Hex, String),
}

impl Serialize for Hexside {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Hexside {
    /// Reads a hexside as [`Hexside`]'s `Display` wrote it, in a stored event, a snapshot or a
    /// message. Two hexes of one board must be adjacent, as [`FromStr`] asks. Two hexes of two
    /// boards are adjacent only on a map that lays those boards side by side (`3X0-4Y10` where
    /// board 3 lies south of board 4), and a stored value carries no map: the pair is taken as
    /// written, and the map that holds it ([`crate::geometry::Geometry`]) is what gives
    /// it a meaning. Without this a game on boards stacked north–south wrote hexsides it could
    /// not read back.
    pub fn from_stored(text: &str) -> Result<Hexside, HexsideError> {
        let (x, y) = hex_pair(text)?;
        match (x.board, y.board) {
            (Some(a), Some(b)) if a != b => Ok(Hexside::new(x, y)),
            _ => x
                .hexside(y)
                .ok_or_else(|| HexsideError::NotAdjacent(x, y, text.to_string())),
        }
    }
}

impl<'de> Deserialize<'de> for Hexside {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Hexside, D::Error> {
        Hexside::from_stored(&String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The point where three mutually adjacent hexes meet, named by those hexes in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vertex {
    pub hexes: [Hex; 3],
}

impl Vertex {
    pub(crate) fn new(x: Hex, y: Hex, z: Hex) -> Vertex {
        let mut hexes = [x, y, z];
        hexes.sort();
        Vertex { hexes }
    }

    /// The vertex where three hexes meet, if each is adjacent to the other two.
    pub fn of(x: Hex, y: Hex, z: Hex) -> Option<Vertex> {
        (x.is_adjacent(y) && y.is_adjacent(z) && x.is_adjacent(z)).then(|| Vertex::new(x, y, z))
    }

    /// The three hexsides (hexspines) that run out of this vertex.
    pub fn hexspines(self) -> [Hexside; 3] {
        let [x, y, z] = self.hexes;
        [Hexside::new(x, y), Hexside::new(y, z), Hexside::new(x, z)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(name: &str) -> Hex {
        name.parse().unwrap()
    }

    #[test]
    fn names_round_trip() {
        for name in ["6Z9", "55H7", "H7", "1Y9", "44BB8", "GG10", "3A0"] {
            assert_eq!(h(name).to_string(), name);
        }
    }

    #[test]
    fn bad_names_are_refused_with_reason() {
        for bad in [
            "", "55", "Z", "ZZ9x", "AB5", "HH5", "6Z", "6Z100", "99999Z1",
        ] {
            assert!(bad.parse::<Hex>().is_err(), "{bad} should be refused");
        }
    }

    /// Rules README: Z9's neighbours are Z8, Z10, Y9, Y10, AA9, AA10.
    #[test]
    fn neighbours_of_z9_per_rules_readme() {
        let mut got: Vec<String> = h("6Z9")
            .neighbours()
            .iter()
            .map(|x| x.to_string())
            .collect();
        got.sort();
        let mut want = vec!["6Z8", "6Z10", "6Y9", "6Y10", "6AA9", "6AA10"];
        want.sort();
        assert_eq!(got, want);
    }

    /// B9.2 EX: Y8, Y9 and Z8 meet at one vertex.
    #[test]
    fn y8_y9_z8_meet_at_a_vertex() {
        assert!(Vertex::of(h("6Y8"), h("6Y9"), h("6Z8")).is_some());
        assert!(Vertex::of(h("6Y8"), h("6Y9"), h("6Z9")).is_none());
        assert!(h("6Z8")
            .vertices()
            .contains(&Vertex::of(h("6Y8"), h("6Y9"), h("6Z8")).unwrap()));
    }

    /// B9.4 EX: 55H7 and 55I8 are adjacent (the move that costs 3 MF).
    #[test]
    fn h7_i8_adjacent() {
        assert!(h("55H7").is_adjacent(h("55I8")));
        assert_eq!(h("55H7").distance(h("55I8")), Some(1));
        assert!(!h("55H7").is_adjacent(h("55I6")));
    }

    #[test]
    fn distances_along_and_across_columns() {
        assert_eq!(h("Z9").distance(h("Z4")), Some(5));
        assert_eq!(h("Z9").distance(h("X6")), Some(4));
        assert_eq!(h("A1").distance(h("E3")), Some(4));
        assert_eq!(h("1A1").distance(h("2A1")), None);
    }

    #[test]
    fn hexside_is_unordered_and_parses() {
        let s: Hexside = "55H7-I8".parse().unwrap();
        assert_eq!(s, h("55I8").hexside(h("55H7")).unwrap());
        assert_eq!(s.to_string(), "55H7-55I8");
        assert!("H7-H9".parse::<Hexside>().is_err());
    }

    /// A4.31 EX: D4-C4 and D4-C5 are contiguous hexsides of D4; D4-C4 and D4-E5 are not.
    #[test]
    fn contiguous_hexsides() {
        let d4 = h("2D4");
        let c4 = d4.hexside(h("2C4")).unwrap();
        let c5 = d4.hexside(h("2C5")).unwrap();
        let e5 = d4.hexside(h("2E5")).unwrap();
        assert!(c4.is_contiguous_in(c5, d4));
        assert!(!c4.is_contiguous_in(e5, d4));
    }

    /// Fire from an adjacent hex enters through the shared hexside; fire from a hex two away
    /// along a hexspine enters through the vertex (B9.2 EX: Z9 → X6 crosses the Z8-Y9 spine).
    #[test]
    fn line_of_fire_entry() {
        let z9 = h("6Z9");
        assert_eq!(z9.entry_from(h("6Z8")), Some(Entry::Hexside(h("6Z8"))));
        assert_eq!(z9.entry_from(h("6Z5")), Some(Entry::Hexside(h("6Z8"))));
        // Y8 lies along the Y9/Z8 hexspine of Z9.
        match z9.entry_from(h("6Y8")) {
            Some(Entry::Hexspine(a, b)) => {
                let mut got = [a, b];
                got.sort();
                assert_eq!(got, [h("6Y9"), h("6Z8")]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(z9.entry_from(z9), None);
    }

    fn any_hex() -> impl Strategy<Value = Hex> {
        (1u16..=COLUMN_MAX, 1u16..=40).prop_map(|(c, r)| Hex::new(Some(1), c, r))
    }

    proptest! {
        #[test]
        fn neighbour_relation_is_symmetric(x in any_hex()) {
            for n in x.neighbours() {
                prop_assert!(n.neighbours().contains(&x));
            }
        }

        #[test]
        fn distance_one_iff_adjacent(x in any_hex(), y in any_hex()) {
            prop_assert_eq!(x.distance(y) == Some(1), x.is_adjacent(y));
            prop_assert_eq!(x.distance(y), y.distance(x));
        }

        #[test]
        fn triangle_inequality(x in any_hex(), y in any_hex(), z in any_hex()) {
            let (xy, yz, xz) = (x.distance(y).unwrap(), y.distance(z).unwrap(), x.distance(z).unwrap());
            prop_assert!(xz <= xy + yz);
        }

        /// An adjacent firer's line always enters through the hexside the two share.
        #[test]
        fn adjacent_fire_enters_through_the_shared_hexside(x in any_hex(), d in 0usize..6) {
            if let Some(n) = x.step(DIRECTIONS[d]) {
                prop_assert_eq!(x.entry_from(n), Some(Entry::Hexside(n)));
            }
        }

        #[test]
        fn name_round_trip(x in any_hex()) {
            prop_assert_eq!(x.to_string().parse::<Hex>().unwrap(), x);
        }
    }
}
