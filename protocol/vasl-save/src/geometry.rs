//! Where things are on a VASL map, in pixels: the hex grid of one geomorphic board, VASL's
//! names for its hexes, a board turned through 180°, and how the board picker lays boards
//! out in the map window (with the margin VASL leaves around them).
//!
//! Two frames of reference, never mixed:
//! - **board pixels**: the board's own image, unrotated and uncropped, origin at its top-left
//!   corner: a geomorphic board is [`BOARD_WIDTH_PX`] × [`BOARD_HEIGHT_PX`];
//! - **map pixels**: the map window a saved game records piece positions in (`Main Map;X;Y`),
//!   the boards placed side by side after a margin of [`MAP_EDGE_PX`].
//!
//! The grid follows the printed boards and `board::hex`: column A (1) is the half hex on the
//! west edge, GG (33) the half hex on the east edge; an odd column (A, C, …) holds rows 1–10,
//! an even one (B, D, …) rows 0–10 whose rows 0 and 10 are half hexes on the north and south
//! edges. The figures are VASL's for geomorphic boards (its `BoardArchive`: 1800 × 645 px,
//! 33 columns, 10 rows, A1's centre at (0, 32.25)); they are measurements of the images, not
//! rules, so nothing here cites the ASL rules.
//!
//! Pure functions of their inputs: the LOS tracer over a board's pixel grid reuses them.

/// Width of a geomorphic board's image in board pixels: 32 hex widths from A's centre line on
/// the west edge to GG's on the east edge.
pub const BOARD_WIDTH_PX: f64 = 1800.0;
/// Height of a geomorphic board's image in board pixels: 10 hex heights.
pub const BOARD_HEIGHT_PX: f64 = 645.0;
/// Columns on a geomorphic board, A to GG.
pub const BOARD_COLUMNS: u16 = 33;
/// Rows on a geomorphic board: odd columns hold 1..=10, even columns 0..=10.
pub const BOARD_ROWS: u16 = 10;
/// Distance between the centres of two neighbouring columns, in board pixels.
pub const HEX_WIDTH_PX: f64 = BOARD_WIDTH_PX / (BOARD_COLUMNS as f64 - 1.0);
/// Distance between the centres of two hexes of one column, in board pixels.
pub const HEX_HEIGHT_PX: f64 = BOARD_HEIGHT_PX / BOARD_ROWS as f64;
/// The empty margin VASL's main map keeps around the boards, on every side, in map pixels
/// (`edgeWidth` and `edgeHeight` of the map in VASL's module definition). A set-up save
/// parks a side's order of battle there until it is set up.
pub const MAP_EDGE_PX: f64 = 400.0;

/// A point in board or map pixels (which one is always said where it is used).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Point {
        Point { x, y }
    }
    fn distance_squared(self, other: Point) -> f64 {
        (self.x - other.x).powi(2) + (self.y - other.y).powi(2)
    }
}

/// A hex of one board by its grid position: `column` 1 = A … 33 = GG, `row` 0..=10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GridHex {
    pub column: u16,
    pub row: u16,
}

impl GridHex {
    /// The hex if (column, row) is printed on a geomorphic board: row 0 exists only in even
    /// columns (the half hexes on the north edge).
    pub fn new(column: u16, row: u16) -> Option<GridHex> {
        let first_row = if column % 2 == 0 { 0 } else { 1 };
        ((1..=BOARD_COLUMNS).contains(&column) && (first_row..=BOARD_ROWS).contains(&row))
            .then_some(GridHex { column, row })
    }

    /// The hex's centre dot in board pixels (unrotated).
    pub fn centre(self) -> Point {
        let x = f64::from(self.column - 1) * HEX_WIDTH_PX;
        // Odd columns sit half a hex higher: A1's centre is half a hex below the north edge.
        let half = if self.column % 2 == 1 { 0.5 } else { 0.0 };
        let y = (f64::from(self.row) - half) * HEX_HEIGHT_PX;
        Point::new(x, y)
    }

    /// The hex a point of the board lies in (board pixels, unrotated): the one whose centre is
    /// nearest, which on this near-regular grid is the hex drawn around the point. `None` for a
    /// point off the board's image. (VASL's own grid names a point by its nearest column, then
    /// the row in it, which differs only near a hex's slanted sides; VASL snaps counters to
    /// hex centres, where the two agree.)
    pub fn at(point: Point) -> Option<GridHex> {
        if !(0.0..=BOARD_WIDTH_PX).contains(&point.x) || !(0.0..=BOARD_HEIGHT_PX).contains(&point.y)
        {
            return None;
        }
        let nearest_column = (point.x / HEX_WIDTH_PX).round() as i32 + 1;
        (nearest_column - 1..=nearest_column + 1)
            .filter(|c| (1..=i32::from(BOARD_COLUMNS)).contains(c))
            .filter_map(|c| {
                let column = c as u16;
                let half = if column % 2 == 1 { 0.5 } else { 0.0 };
                let row = (point.y / HEX_HEIGHT_PX + half).round().max(0.0) as u16;
                GridHex::new(column, row.min(BOARD_ROWS))
            })
            .min_by(|a, b| {
                a.centre()
                    .distance_squared(point)
                    .total_cmp(&b.centre().distance_squared(point))
            })
    }

    /// The column's letters as printed: A … Z, then AA … GG.
    pub fn column_letters(self) -> String {
        let letter = (b'A' + ((self.column - 1) % 26) as u8) as char;
        let repeat = if self.column > 26 { 2 } else { 1 };
        std::iter::repeat_n(letter, repeat).collect()
    }

    /// VASL's name for the hex on a map of several boards: the board's name, the column, the
    /// row (`1A1`, `2GG10`, `1X0`), as `board::hex::Hex` prints it.
    pub fn name_on(self, board: &str) -> String {
        format!("{board}{}{}", self.column_letters(), self.row)
    }
}

/// A point of a board turned through 180° ("r" in the board picker, `2r` in a scenario): the
/// board's image is drawn upside down, so the point at (x, y) of what is shown is the point
/// (width − x, height − y) of the board. Its own inverse.
pub fn rotate_half_turn(point: Point, width: f64, height: f64) -> Point {
    Point::new(width - point.x, height - point.y)
}

/// The part of a board's image the picker shows, in board pixels (VASL's crop bounds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crop {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// One board as the board picker placed it: its slot (column west to east, row north to south,
/// from 0), whether it is turned through 180°, and the part of it shown.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardSlot {
    /// The board's name as hexes are named on it (`2` for the archive `bd02`).
    pub name: String,
    pub column: u32,
    pub row: u32,
    pub rotated: bool,
    pub crop: Option<Crop>,
}

impl BoardSlot {
    /// The board's size on the map: its crop, or the whole image.
    pub fn size(&self) -> (f64, f64) {
        match self.crop {
            Some(c) => (c.width, c.height),
            None => (BOARD_WIDTH_PX, BOARD_HEIGHT_PX),
        }
    }

    /// A point of what the map shows of this board (pixels from the board's top-left corner
    /// on the map) as a point of the board's own image: undo the half turn, then the crop.
    /// VASL rotates the shown (cropped) image, so the turn comes first.
    pub fn to_board(&self, shown: Point) -> Point {
        let (width, height) = self.size();
        let p = if self.rotated {
            rotate_half_turn(shown, width, height)
        } else {
            shown
        };
        match self.crop {
            Some(c) => Point::new(p.x + c.x, p.y + c.y),
            None => p,
        }
    }

    /// The inverse of [`BoardSlot::to_board`].
    pub fn to_shown(&self, board: Point) -> Point {
        let p = match self.crop {
            Some(c) => Point::new(board.x - c.x, board.y - c.y),
            None => board,
        };
        let (width, height) = self.size();
        if self.rotated {
            rotate_half_turn(p, width, height)
        } else {
            p
        }
    }
}

/// The boards of a map as the picker lays them out: each board's top-left corner in map
/// pixels. As VASSAL does it, a board starts after the margin plus the widths of the boards
/// west of it in its row, and the heights of the boards north of it in its column.
#[derive(Clone, Debug, PartialEq)]
pub struct MapLayout {
    pub boards: Vec<BoardSlot>,
    origins: Vec<Point>,
}

/// Where a map pixel falls: on a board's hex, or off every board (the margin, or a gap a
/// missing slot leaves).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Located<'a> {
    OnBoard { board: &'a BoardSlot, hex: GridHex },
    OffBoard,
}

impl MapLayout {
    pub fn new(boards: Vec<BoardSlot>) -> MapLayout {
        let origins = boards
            .iter()
            .map(|b| {
                let west: f64 = boards
                    .iter()
                    .filter(|o| o.row == b.row && o.column < b.column)
                    .map(|o| o.size().0)
                    .sum();
                let north: f64 = boards
                    .iter()
                    .filter(|o| o.column == b.column && o.row < b.row)
                    .map(|o| o.size().1)
                    .sum();
                Point::new(MAP_EDGE_PX + west, MAP_EDGE_PX + north)
            })
            .collect();
        MapLayout { boards, origins }
    }

    /// The top-left corner of board `index` in map pixels.
    pub fn origin(&self, index: usize) -> Point {
        self.origins[index]
    }

    /// The board a map point lies on, and the point in that board's own pixels.
    ///
    /// Where two boards meet, their half hexes (GG and A, row 10 and row 0) make one hex
    /// that has a name on each board; as in VASSAL, a board owns its west and north edges
    /// (a board's rectangle is half-open), so the seam is named on the board east or south
    /// of it. A point on a map's outer east or south edge belongs to the board it closes.
    pub fn board_point(&self, map: Point) -> Option<(&BoardSlot, Point)> {
        let find = |closed: bool| {
            self.boards.iter().zip(&self.origins).find_map(|(b, o)| {
                let (width, height) = b.size();
                let shown = Point::new(map.x - o.x, map.y - o.y);
                let inside = |v: f64, end: f64| v >= 0.0 && (v < end || (closed && v <= end));
                (inside(shown.x, width) && inside(shown.y, height)).then(|| (b, b.to_board(shown)))
            })
        };
        find(false).or_else(|| find(true))
    }

    /// The hex under a map point, or [`Located::OffBoard`].
    pub fn locate(&self, map: Point) -> Located<'_> {
        match self.board_point(map) {
            Some((board, p)) => match GridHex::at(p) {
                Some(hex) => Located::OnBoard { board, hex },
                None => Located::OffBoard,
            },
            None => Located::OffBoard,
        }
    }

    /// The centre of a hex of board `index` in map pixels: where a counter set in it sits.
    pub fn map_point(&self, index: usize, hex: GridHex) -> Point {
        let shown = self.boards[index].to_shown(hex.centre());
        let o = self.origins[index];
        Point::new(o.x + shown.x, o.y + shown.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(column: u16, row: u16) -> GridHex {
        GridHex::new(column, row).unwrap()
    }

    fn slot(name: &str, column: u32, row: u32, rotated: bool) -> BoardSlot {
        BoardSlot {
            name: name.into(),
            column,
            row,
            rotated,
            crop: None,
        }
    }

    #[test]
    fn the_grid_measures_a_geomorphic_board() {
        assert_eq!(HEX_WIDTH_PX, 56.25);
        assert_eq!(HEX_HEIGHT_PX, 64.5);
        assert_eq!(hex(1, 1).centre(), Point::new(0.0, 32.25));
        assert_eq!(hex(2, 0).centre(), Point::new(56.25, 0.0));
        assert_eq!(hex(33, 10).centre(), Point::new(1800.0, 612.75));
        assert_eq!(hex(32, 10).centre(), Point::new(1743.75, 645.0));
    }

    #[test]
    fn only_printed_hexes_exist() {
        assert!(GridHex::new(1, 0).is_none(), "odd columns have no row 0");
        assert!(GridHex::new(2, 0).is_some());
        assert!(GridHex::new(0, 1).is_none());
        assert!(GridHex::new(34, 1).is_none());
        assert!(GridHex::new(2, 11).is_none());
    }

    #[test]
    fn every_centre_and_points_near_it_name_their_hex() {
        for column in 1..=BOARD_COLUMNS {
            for row in 0..=BOARD_ROWS {
                let Some(h) = GridHex::new(column, row) else {
                    continue;
                };
                let c = h.centre();
                assert_eq!(GridHex::at(c), Some(h));
                // 20 px from the centre is inside the hex (the inscribed radius is ~28 px),
                // as long as the point stays on the board.
                for (dx, dy) in [(20.0, 0.0), (-20.0, 0.0), (0.0, 20.0), (0.0, -20.0)] {
                    let p = Point::new(c.x + dx, c.y + dy);
                    if GridHex::at(p).is_some() {
                        assert_eq!(GridHex::at(p), Some(h), "{h:?} at {p:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_boundary_between_two_columns_is_half_way() {
        // B1 centre (56.25, 64.5); C1 (112.5, 32.25): a point just west of half way at B1's
        // height is B1, just east of it at C1's height is C1.
        assert_eq!(GridHex::at(Point::new(80.0, 64.5)), Some(hex(2, 1)));
        assert_eq!(GridHex::at(Point::new(90.0, 32.25)), Some(hex(3, 1)));
    }

    #[test]
    fn points_off_the_image_are_no_hex() {
        assert_eq!(GridHex::at(Point::new(-1.0, 10.0)), None);
        assert_eq!(GridHex::at(Point::new(10.0, 646.0)), None);
    }

    #[test]
    fn names_are_vasls() {
        assert_eq!(hex(1, 1).name_on("1"), "1A1");
        assert_eq!(hex(33, 10).name_on("2"), "2GG10");
        assert_eq!(hex(24, 0).name_on("1"), "1X0");
        assert_eq!(hex(27, 5).column_letters(), "AA");
        // The same text `board::hex` prints, so a name goes into a scenario unchanged.
        let h: board::hex::Hex = "2GG10".parse().unwrap();
        assert_eq!(h.to_string(), hex(33, 10).name_on("2"));
    }

    #[test]
    fn a_half_turn_swaps_opposite_corners_and_is_its_own_inverse() {
        let p = Point::new(10.0, 20.0);
        let r = rotate_half_turn(p, BOARD_WIDTH_PX, BOARD_HEIGHT_PX);
        assert_eq!(r, Point::new(1790.0, 625.0));
        assert_eq!(rotate_half_turn(r, BOARD_WIDTH_PX, BOARD_HEIGHT_PX), p);
    }

    #[test]
    fn on_a_rotated_board_a1_is_in_the_south_east_corner() {
        let layout = MapLayout::new(vec![slot("2", 0, 0, true)]);
        let a1 = layout.map_point(0, hex(1, 1));
        assert_eq!(a1, Point::new(400.0 + 1800.0, 400.0 + 645.0 - 32.25));
        match layout.locate(a1) {
            Located::OnBoard { board, hex: h } => {
                assert_eq!(board.name, "2");
                assert_eq!(h, hex(1, 1));
            }
            Located::OffBoard => panic!("A1 of a rotated board is on it"),
        }
        // GG10 of the rotated board is near the map's north-west corner of the board.
        let gg10 = layout.map_point(0, hex(33, 10));
        assert_eq!(gg10, Point::new(400.0, 400.0 + 32.25));
    }

    #[test]
    fn boards_are_laid_out_after_the_margin_west_to_east_and_north_to_south() {
        let layout = MapLayout::new(vec![
            slot("1", 0, 0, false),
            slot("2", 1, 0, true),
            slot("3", 0, 1, false),
            slot("4", 1, 1, false),
        ]);
        assert_eq!(layout.origin(0), Point::new(400.0, 400.0));
        assert_eq!(layout.origin(1), Point::new(2200.0, 400.0));
        assert_eq!(layout.origin(2), Point::new(400.0, 1045.0));
        assert_eq!(layout.origin(3), Point::new(2200.0, 1045.0));
        for index in 0..4 {
            // Hexes off the seams, where a hex has one name (seams: see `board_point`).
            for h in [hex(2, 1), hex(16, 5), hex(32, 9), hex(24, 1), hex(3, 10)] {
                match layout.locate(layout.map_point(index, h)) {
                    Located::OnBoard { board, hex: found } => {
                        assert_eq!(board.name, layout.boards[index].name);
                        assert_eq!(found, h);
                    }
                    Located::OffBoard => panic!("{h:?} of board {index} off board"),
                }
            }
        }
    }

    #[test]
    fn a_seam_is_named_on_the_board_east_or_south_of_it() {
        let layout = MapLayout::new(vec![slot("1", 0, 0, false), slot("2", 1, 0, false)]);
        let seam = layout.map_point(0, hex(33, 5));
        assert_eq!(seam, layout.map_point(1, hex(1, 5)));
        match layout.locate(seam) {
            Located::OnBoard { board, hex: h } => assert_eq!(h.name_on(&board.name), "2A5"),
            Located::OffBoard => panic!("the seam is on the map"),
        }
        // The map's own east edge still belongs to the board that closes it.
        match layout.locate(layout.map_point(1, hex(33, 5))) {
            Located::OnBoard { board, hex: h } => assert_eq!(h.name_on(&board.name), "2GG5"),
            Located::OffBoard => panic!("2GG5 is on the map"),
        }
    }

    #[test]
    fn the_margin_is_off_board() {
        let layout = MapLayout::new(vec![slot("1", 0, 0, false)]);
        assert_eq!(layout.locate(Point::new(399.0, 500.0)), Located::OffBoard);
        assert_eq!(layout.locate(Point::new(500.0, 1046.0)), Located::OffBoard);
        assert_eq!(layout.locate(Point::new(2201.0, 500.0)), Located::OffBoard);
        assert!(matches!(
            layout.locate(Point::new(401.0, 401.0)),
            Located::OnBoard { .. }
        ));
    }

    #[test]
    fn a_cropped_board_shows_only_its_crop() {
        // The east half of a board from column Q (x = 900): Q1 is at the shown west edge.
        let crop = Crop {
            x: 900.0,
            y: 0.0,
            width: 900.0,
            height: BOARD_HEIGHT_PX,
        };
        let b = BoardSlot {
            crop: Some(crop),
            ..slot("5", 0, 0, false)
        };
        let q1 = hex(17, 1);
        assert_eq!(b.to_shown(q1.centre()), Point::new(0.0, 32.25));
        assert_eq!(b.to_board(b.to_shown(q1.centre())), q1.centre());
        let rotated = BoardSlot {
            rotated: true,
            ..b.clone()
        };
        assert_eq!(rotated.to_shown(q1.centre()), Point::new(900.0, 612.75));
        assert_eq!(rotated.to_board(Point::new(900.0, 612.75)), q1.centre());
    }
}
