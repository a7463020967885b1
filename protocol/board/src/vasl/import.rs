//! What a board shows, read off its terrain grid the way VASL reads it (`Hex.resetTerrain` in
//! VASL): a hex's terrain is the pixel under its centre dot (a building that misses the dot
//! but reaches a hexside still makes a building hex), its base level the elevation there, and
//! each hexside's terrain (wall, hedge, bocage, cliff) the pixel just inside the hexside's
//! midpoint, or the one just inside it from the hex across when this side shows none.
//!
//! The result is the scenario's own vocabulary ([`HexSpec`], [`HexsideSpec`]), so every rule
//! that reads a hand-typed map reads a real board the same way. A VASL terrain the engine's
//! chart has no row for is kept by name (`unmodelled`), and rules that would need it refuse.

use std::collections::{BTreeMap, BTreeSet};

use super::archive::{BoardArchive, LosGrid, A1_CENTRE_Y, HEX_HEIGHT, HEX_WIDTH};
use super::codes::{engine_terrain, Category, TerrainTable, TerrainType};
use crate::hex::{Hex, Hexside, DIRECTIONS};
use crate::model::{HexSpec, HexsideSpec, Road};
use crate::terrain::{HexsideFeature, Terrain};

/// The hexes of a board with `columns` × `rows`: (column index from 0, place in the column
/// from 0). Odd columns (B, D, …) hold a half hex at each long edge.
pub fn hex_slots(columns: u16, rows: u16) -> impl Iterator<Item = (u16, u16)> {
    (0..columns).flat_map(move |c| (0..rows + c % 2).map(move |r| (c, r)))
}

/// The printed name of the hex in slot (column, place), on board `board`.
pub fn hex_of_slot(board: Option<u16>, column: u16, place: u16) -> Hex {
    Hex::new(board, column + 1, place + u16::from(column % 2 == 0))
}

/// The slot of a hex's printed name: (column index, place in the column); `None` for a name
/// no board prints (row 0 of column A).
pub fn slot_of_hex(hex: Hex) -> Option<(u16, u16)> {
    let column = hex.column.checked_sub(1)?;
    Some((column, hex.row.checked_sub(u16::from(column % 2 == 0))?))
}

/// The centre dot of a slot in board pixels (VASL's geomorphic grid).
pub fn centre(column: u16, place: u16) -> (f64, f64) {
    let odd = f64::from(column % 2);
    (
        HEX_WIDTH * f64::from(column),
        A1_CENTRE_Y + HEX_HEIGHT * f64::from(place) - HEX_HEIGHT / 2.0 * odd,
    )
}

/// Truncates a point onto the grid as VASL does: a coordinate that lands on the far edge (or
/// one past it) is the last pixel, -1 is the first.
fn on_grid(grid: &LosGrid, x: f64, y: f64) -> (i64, i64) {
    let fix = |v: f64, size: u32| -> i64 {
        let v = v as i64;
        if v == -1 {
            0
        } else if v == i64::from(size) || v == i64::from(size) + 1 {
            i64::from(size) - 1
        } else {
            v
        }
    };
    (fix(x, grid.width), fix(y, grid.height))
}

/// The six points just inside a hex's hexside midpoints, in `DIRECTIONS` order: one pixel
/// towards the centre from each midpoint (VASL reads hexside terrain there).
pub fn hexside_points(column: u16, place: u16) -> [(f64, f64); 6] {
    let (x, y) = centre(column, place);
    let v = HEX_HEIGHT / 2.0;
    let h = (30f64).to_radians().cos() * v;
    [
        (x.trunc(), (y - v + 1.0).trunc()),
        ((x + h - 1.0).trunc(), (y - v / 2.0 + 1.0).trunc()),
        ((x + h - 1.0).trunc(), (y + v / 2.0 - 1.0).trunc()),
        (x.trunc(), (y + v - 1.0).trunc()),
        ((x - h + 1.0).trunc(), (y + v / 2.0 - 1.0).trunc()),
        ((x - h + 1.0).trunc(), (y - v / 2.0 + 1.0).trunc()),
    ]
}

/// What the board shows in one hex, in VASL's terms.
#[derive(Clone, Debug)]
pub struct BoardHex {
    pub hex: Hex,
    pub terrain: TerrainType,
    pub level: i8,
    /// Per direction, the hexside terrain (category HEXSIDE) read at that hexside, if any.
    pub hexsides: [Option<TerrainType>; 6],
    /// Per direction, the terrain just inside that hexside.
    pub edges: [Option<TerrainType>; 6],
}

fn terrain_at(grid: &LosGrid, table: &TerrainTable, x: f64, y: f64) -> Option<TerrainType> {
    let (x, y) = on_grid(grid, x, y);
    let (_, code) = grid.at(x, y)?;
    table.get(code).cloned()
}

/// Reads every hex of `board` (numbered `number` on the map).
pub fn board_hexes(board: &BoardArchive, number: u16, table: &TerrainTable) -> Vec<BoardHex> {
    let grid = &board.grid;
    let open = table
        .get(0)
        .cloned()
        .unwrap_or_else(|| TerrainTable::builtin().get(0).cloned().expect("code 0"));
    let mut hexes = Vec::with_capacity(super::archive::hexes_in(grid.columns, grid.rows));
    let on_board =
        |(column, place): (u16, u16)| column < grid.columns && place < grid.rows + column % 2;
    for (column, place) in hex_slots(grid.columns, grid.rows) {
        let hex = hex_of_slot(Some(number), column, place);
        let (cx, cy) = centre(column, place);
        let points = hexside_points(column, place);
        let edges: [Option<TerrainType>; 6] =
            std::array::from_fn(|i| terrain_at(grid, table, points[i].0, points[i].1));
        let mut terrain = terrain_at(grid, table, cx, cy).unwrap_or_else(|| open.clone());
        if !is_building(&terrain) {
            if let Some(building) = edges.iter().flatten().find(|t| is_building(t)) {
                terrain = building.clone();
            }
        }
        let (gx, gy) = on_grid(grid, cx, cy);
        let level = grid.at(gx, gy).map_or(0, |(e, _)| e);
        let mut hexsides: [Option<TerrainType>; 6] = Default::default();
        for (i, d) in DIRECTIONS.iter().enumerate() {
            let mine = edges[i].clone().filter(|t| t.category == Category::Hexside);
            let across = hex
                .step(*d)
                .and_then(slot_of_hex)
                .filter(|s| on_board(*s))
                .and_then(|(c, p)| {
                    let (x, y) = hexside_points(c, p)[(i + 3) % 6];
                    terrain_at(grid, table, x, y)
                })
                .filter(|t| t.category == Category::Hexside);
            hexsides[i] = mine.or(across);
        }
        hexes.push(BoardHex {
            hex,
            terrain,
            level,
            hexsides,
            edges,
        });
    }
    // Building types the metadata names (the grid's colours cannot tell levels apart).
    for (name, kind) in &board.metadata.building_types {
        let Ok(mut hex) = name.parse::<Hex>() else {
            continue;
        };
        hex.board = Some(number);
        let Some(t) = (0..=255u8)
            .filter_map(|c| table.get(c))
            .find(|t| t.name == *kind)
        else {
            continue;
        };
        if let Some(h) = hexes.iter_mut().find(|h| h.hex == hex) {
            h.terrain = t.clone();
        }
    }
    hexes
}

fn is_building(t: &TerrainType) -> bool {
    matches!(t.category, Category::Building | Category::Factory)
}

/// The scenario's view of one board's hexes and hexsides.
pub fn scenario_hexes(
    hexes: &[BoardHex],
) -> (BTreeMap<Hex, HexSpec>, BTreeMap<Hexside, HexsideSpec>) {
    let mut specs = BTreeMap::new();
    let mut sides = BTreeMap::new();
    let on_board: BTreeSet<Hex> = hexes.iter().map(|h| h.hex).collect();
    for h in hexes {
        let modelled = engine_terrain(&h.terrain.name);
        let terrain = modelled.unwrap_or(Terrain::OpenGround);
        let road = match h.terrain.name.as_str() {
            "Paved Road" => Some(Road::Paved),
            "Dirt Road" => Some(Road::Unpaved),
            _ => None,
        };
        let obstacle = terrain.row().bypassable_obstacle;
        let mut touches = BTreeSet::new();
        if obstacle {
            for (i, d) in DIRECTIONS.iter().enumerate() {
                let reaches = h.edges[i]
                    .as_ref()
                    .is_some_and(|t| engine_terrain(&t.name) == Some(terrain));
                if let Some(n) = h.hex.step(*d).filter(|n| on_board.contains(n)) {
                    if reaches {
                        touches.insert(n);
                    }
                }
            }
        }
        let table_height = i16::from(terrain.row().los.height);
        let height = h.terrain.height_halves();
        let obstacle_height =
            (obstacle && modelled.is_some() && height > 0 && height != table_height)
                .then_some(height.clamp(1, 10) as u8);
        specs.insert(
            h.hex,
            HexSpec {
                terrain,
                elevation: h.level.clamp(-10, 10),
                road,
                manhole: false,
                obstacle_touches: touches,
                fortifications: BTreeSet::new(),
                rubble: false,
                blaze: false,
                sewer_rubble: false,
                water_obstacle: false,
                obstacle_inset: obstacle,
                obstacle_height,
                unmodelled: modelled.is_none().then(|| h.terrain.name.clone()),
            },
        );
        for (i, d) in DIRECTIONS.iter().enumerate() {
            let Some(t) = &h.hexsides[i] else { continue };
            let Some(n) = h.hex.step(*d).filter(|n| on_board.contains(n)) else {
                continue;
            };
            let Some(side) = h.hex.hexside(n) else {
                continue;
            };
            let feature = match t.name.as_str() {
                "Wall" => Some(HexsideFeature::Wall),
                "Hedge" => Some(HexsideFeature::Hedge),
                "Bocage" => Some(HexsideFeature::Bocage),
                _ => None,
            };
            sides.entry(side).or_insert(HexsideSpec {
                feature,
                road: false,
                touches_obstacle: false,
                breach: false,
                roadblock: false,
                unmodelled: feature.is_none().then(|| t.name.clone()),
            });
        }
    }
    // A road crosses a hexside where both hexes are road hexes and the road's pixels reach
    // it from at least one side (B3); through a wall or hedge that is the wall's gap (B9.4).
    let road = |h: &Hex| specs.get(h).is_some_and(|s: &HexSpec| s.road.is_some());
    for h in hexes {
        for (i, d) in DIRECTIONS.iter().enumerate() {
            let reaches = h.edges[i]
                .as_ref()
                .is_some_and(|t| t.category == Category::Road);
            let Some(n) = h.hex.step(*d).filter(|n| on_board.contains(n)) else {
                continue;
            };
            if !(reaches && road(&h.hex) && road(&n)) {
                continue;
            }
            let Some(side) = h.hex.hexside(n) else {
                continue;
            };
            sides
                .entry(side)
                .or_insert(HexsideSpec {
                    feature: None,
                    road: true,
                    touches_obstacle: false,
                    breach: false,
                    roadblock: false,
                    unmodelled: None,
                })
                .road = true;
        }
    }
    (specs, sides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vasl::archive;
    use crate::vasl::synth::{code, SynthBoard};

    fn hex(name: &str) -> Hex {
        name.parse().unwrap()
    }

    #[test]
    fn hexside_points_lie_one_pixel_inside_each_midpoint() {
        // D5 is column 3, place 5: its centre is (168.75, 322.5).
        let points = hexside_points(3, 5);
        let expected = [
            (168.0, 291.0),
            (195.0, 307.0),
            (195.0, 337.0),
            (168.0, 353.0),
            (141.0, 337.0),
            (141.0, 307.0),
        ];
        assert_eq!(points, expected);
    }

    #[test]
    fn slots_and_names_follow_vasls_columns() {
        assert_eq!(hex_of_slot(None, 0, 0), hex("A1"));
        assert_eq!(hex_of_slot(None, 1, 0), hex("B0"));
        assert_eq!(hex_of_slot(None, 1, 10), hex("B10"));
        assert_eq!(hex_of_slot(Some(2), 32, 9), hex("2GG10"));
        for (c, p) in hex_slots(33, 10) {
            assert_eq!(slot_of_hex(hex_of_slot(None, c, p)), Some((c, p)));
            assert_eq!(centre(c, p), SynthBoard::centre(hex_of_slot(None, c, p)));
        }
        assert_eq!(hex_slots(33, 10).count(), archive::hexes_in(33, 10));
    }

    #[test]
    fn a_board_reads_as_the_scenario_terrain_it_shows() {
        let mut board = SynthBoard::geomorphic("01");
        board.hex(hex("E5"), code::WOODS, 24.0);
        board.hex(hex("G5"), code::STONE_BUILDING, 40.0);
        board
            .building_types
            .push(("G5".into(), "Stone Building, 2 Level".into()));
        board.raise(hex("K4"), 1, 36.0);
        board.hexside(hex("M3"), hex("M4"), code::WALL, 3.0);
        board.hex(hex("P5"), code::SWAMP, 36.0);
        board.hex(hex("R3"), code::DIRT_ROAD, 6.0);
        let read = archive::read(&board.archive()).unwrap();
        let table = TerrainTable::builtin();
        let hexes = board_hexes(&read, 1, &table);
        let (specs, sides) = scenario_hexes(&hexes);
        assert_eq!(specs.len(), archive::hexes_in(33, 10));
        let spec = |n: &str| &specs[&hex(n)];
        assert_eq!(spec("1E5").terrain, Terrain::Woods);
        assert!(
            spec("1E5").obstacle_touches.is_empty(),
            "a woods blob inside its hex"
        );
        assert_eq!(spec("1G5").terrain, Terrain::StoneBuilding);
        assert_eq!(spec("1G5").obstacle_height, Some(5), "2 levels and a roof");
        assert_eq!(spec("1G5").obstacle_touches.len(), 6, "fills its hex");
        assert_eq!(spec("1K4").elevation, 1);
        assert_eq!(spec("1A1").terrain, Terrain::OpenGround);
        assert_eq!(spec("1A1").unmodelled, None);
        assert_eq!(spec("1P5").unmodelled.as_deref(), Some("Swamp"));
        assert_eq!(spec("1R3").road, Some(Road::Unpaved));
        let wall = hex("1M3").hexside(hex("1M4")).unwrap();
        assert_eq!(sides[&wall].feature, Some(HexsideFeature::Wall));
        assert_eq!(sides.len(), 1, "only the painted hexside");
    }
}
