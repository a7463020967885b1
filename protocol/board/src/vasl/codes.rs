//! VASL's terrain codes: what each byte of a board's terrain grid means. The facts (code,
//! name, LOS obstacle or hindrance, half-level, inherent, split level, height, category) are
//! VASL's, as its shared board metadata (`boardData/SharedBoardMetadata.xml` in the module)
//! defines them; the engine carries its own copy ([`TerrainTable::builtin`]) and reads the
//! operator's file instead when one is given ([`TerrainTable::parse`]), so a newer VASL with
//! new codes needs no new engine.
//!
//! [`engine_terrain`] is where VASL's names meet the engine's terrain chart
//! (`board::terrain`): a VASL terrain with no row there is carried by its name and refused
//! by any rule that would need it, never read as Open Ground.

use crate::terrain::Terrain;

/// One byte of the terrain grid.
pub type TerrainCode = u8;

/// VASL's LOS category for a terrain type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    Open,
    Building,
    Depression,
    Entrenchment,
    Factory,
    Hexside,
    Marketplace,
    Other,
    Road,
    Water,
    Woods,
    Bridge,
}

impl Category {
    fn parse(text: &str) -> Option<Category> {
        Some(match text {
            "OPEN" => Category::Open,
            "BUILDING" => Category::Building,
            "DEPRESSION" => Category::Depression,
            "ENTRENCHMENT" => Category::Entrenchment,
            "FACTORY" => Category::Factory,
            "HEXSIDE" => Category::Hexside,
            "MARKETPLACE" => Category::Marketplace,
            "OTHER" => Category::Other,
            "ROAD" => Category::Road,
            "WATER" => Category::Water,
            "WOODS" => Category::Woods,
            "BRIDGE" => Category::Bridge,
            _ => return None,
        })
    }
}

/// One VASL terrain type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerrainType {
    pub code: TerrainCode,
    pub name: String,
    /// Blocks a LOS that crosses it at or below its height (A6.2).
    pub obstacle: bool,
    /// Hinders a LOS that crosses it (A6.1's chart).
    pub hindrance: bool,
    /// Its height is a half level more than `height` says (walls, B9.2; cactus).
    pub half_level: bool,
    /// Inherent terrain fills its whole hex, whatever the artwork (B.6).
    pub inherent: bool,
    /// Below this many half levels it acts as `lower_*` says (orchards, factories).
    pub split_halves: u8,
    pub lower_obstacle: bool,
    pub lower_hindrance: bool,
    /// Height in levels above the ground it stands on.
    pub height: i8,
    pub category: Category,
}

impl TerrainType {
    /// Obstacle height in half levels above its base.
    pub fn height_halves(&self) -> i16 {
        i16::from(self.height) * 2 + i16::from(self.half_level)
    }
}

/// Terrain types by code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerrainTable {
    by_code: Vec<Option<TerrainType>>,
}

/// Largest shared-metadata file read (VASL's own: under 200 KB).
pub const SHARED_METADATA_BYTES_MAX: usize = 4 << 20;

/// Where a VASL module keeps its terrain codes.
const MODULE_METADATA: &str = "boardData/SharedBoardMetadata.xml";

/// Why VASL's terrain codes could not be read; each says what is wrong with the file named
/// before it (`SharedBoardMetadata.xml is not XML: …`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodesError {
    #[error("is not a VASL module: {0}")]
    NotModule(String),
    #[error("is a zip without {MODULE_METADATA}: not a VASL module")]
    NoMetadata,
    #[error("{MODULE_METADATA} could not be unpacked: {0}")]
    Unpack(String),
    #[error("{MODULE_METADATA} {0}")]
    InModule(Box<CodesError>),
    #[error("is {0} bytes; at most {SHARED_METADATA_BYTES_MAX} are read")]
    TooLarge(usize),
    #[error("is not UTF-8: {0}")]
    NotUtf8(String),
    #[error("is not XML: {0}")]
    NotXml(String),
    #[error("defines no <terrainType>")]
    Empty,
    /// A terrain's name breaks the scenario's word rules: an unmodelled terrain is named to
    /// both players ([`crate::words::board_word_fault`]).
    #[error("has a <terrainType> whose `name` (line {line}) {why}")]
    Name { line: u32, why: String },
    #[error("has a <terrainType> without `{attribute}` (line {line})")]
    NoAttribute { attribute: String, line: u32 },
    #[error("gives terrain `{terrain}` the {field} `{}`", value.escape_debug())]
    BadValue {
        terrain: String,
        field: String,
        value: String,
    },
}

impl TerrainTable {
    /// The type a grid byte names, if the table defines it.
    pub fn get(&self, code: TerrainCode) -> Option<&TerrainType> {
        self.by_code[usize::from(code)].as_ref()
    }

    /// How many codes are defined.
    pub fn len(&self) -> usize {
        self.by_code.iter().flatten().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table VASL 6.x ships, copied as facts (name and properties per code).
    pub fn builtin() -> TerrainTable {
        let mut by_code = vec![None; 256];
        for row in BUILTIN {
            by_code[usize::from(row.0)] = Some(TerrainType {
                code: row.0,
                name: row.1.to_string(),
                obstacle: row.2,
                hindrance: row.3,
                half_level: row.4,
                inherent: row.5,
                split_halves: row.6,
                lower_obstacle: row.7,
                lower_hindrance: row.8,
                height: row.9,
                category: row.10,
            });
        }
        TerrainTable { by_code }
    }

    /// Reads the terrain codes of a VASL module (`.vmod`, a zip holding
    /// `boardData/SharedBoardMetadata.xml`) or of that XML file itself.
    pub fn from_module(bytes: &[u8]) -> Result<TerrainTable, CodesError> {
        if !bytes.starts_with(b"PK") {
            return TerrainTable::parse(bytes);
        }
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| CodesError::NotModule(e.to_string()))?;
        let mut file = zip
            .by_name(MODULE_METADATA)
            .map_err(|_| CodesError::NoMetadata)?;
        let mut xml = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(&mut file, SHARED_METADATA_BYTES_MAX as u64 + 1),
            &mut xml,
        )
        .map_err(|e| CodesError::Unpack(e.to_string()))?;
        TerrainTable::parse(&xml).map_err(|e| CodesError::InModule(Box::new(e)))
    }

    /// Reads VASL's `SharedBoardMetadata.xml` (its `<terrainType>` elements).
    pub fn parse(xml: &[u8]) -> Result<TerrainTable, CodesError> {
        if xml.len() > SHARED_METADATA_BYTES_MAX {
            return Err(CodesError::TooLarge(xml.len()));
        }
        let text = std::str::from_utf8(xml).map_err(|e| CodesError::NotUtf8(e.to_string()))?;
        let doc =
            roxmltree::Document::parse(text).map_err(|e| CodesError::NotXml(e.to_string()))?;
        let mut by_code = vec![None; 256];
        for node in doc.descendants().filter(|n| n.has_tag_name("terrainType")) {
            let attribute = |name: &str| {
                node.attribute(name).ok_or_else(|| CodesError::NoAttribute {
                    attribute: name.to_string(),
                    line: doc.text_pos_at(node.range().start).row,
                })
            };
            let flag = |name: &str| -> Result<bool, CodesError> {
                Ok(attribute(name)?.eq_ignore_ascii_case("true"))
            };
            let name = attribute("name")?;
            let name_fault = match name {
                "" => Some("is empty: a terrain is named".to_string()),
                name => crate::words::board_word_fault(name),
            };
            if let Some(why) = name_fault {
                return Err(CodesError::Name {
                    line: doc.text_pos_at(node.range().start).row,
                    why,
                });
            }
            let bad = |field: &str, value: &str| CodesError::BadValue {
                terrain: name.to_string(),
                field: field.to_string(),
                value: value.to_string(),
            };
            let code_text = attribute("typeCode")?;
            let code: TerrainCode = code_text
                .trim()
                .parse()
                .map_err(|_| bad("typeCode", code_text))?;
            let split_text = attribute("split")?;
            let split: f64 = split_text
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| (0.0..=20.0).contains(s))
                .ok_or_else(|| bad("split", split_text))?;
            let height_text = attribute("height")?;
            let height: i8 = height_text
                .trim()
                .parse()
                .map_err(|_| bad("height", height_text))?;
            let category_text = attribute("LOSCategory")?;
            let category =
                Category::parse(category_text).ok_or_else(|| bad("LOSCategory", category_text))?;
            by_code[usize::from(code)] = Some(TerrainType {
                code,
                name: name.to_string(),
                obstacle: flag("isLOSObstacle")?,
                hindrance: flag("isLOSHindrance")?,
                half_level: flag("isHalfLevelHeight")?,
                inherent: flag("isInherentTerrain")?,
                split_halves: (split * 2.0).round() as u8,
                lower_obstacle: flag("isLowerLOSObstacle")?,
                lower_hindrance: flag("isLowerLOSHindrance")?,
                height,
                category,
            });
        }
        let table = TerrainTable { by_code };
        if table.is_empty() {
            return Err(CodesError::Empty);
        }
        Ok(table)
    }
}

/// The engine's terrain for a VASL terrain type found at a hex's centre, `None` where the
/// engine's chart has no row for it. Roads, walls and hedges are not hex terrain: the import
/// reads them separately (a road hex is Open Ground with a road, B3).
pub fn engine_terrain(name: &str) -> Option<Terrain> {
    Some(match name {
        "Open Ground" | "Plowed Field" | "Dirt Road" | "Paved Road" | "Path" | "Rooftop" => {
            Terrain::OpenGround
        }
        "Shellholes" => Terrain::Shellholes,
        "Sunken Road" => Terrain::SunkenRoad,
        "Elevated Road" => Terrain::ElevatedRoad,
        "Runway" => Terrain::Runway,
        "Brush" => Terrain::Brush,
        "Woods" => Terrain::Woods,
        "Orchard" | "Orchard, Out of Season" => Terrain::Orchard,
        "Olive Grove" => Terrain::OliveGrove,
        "Cactus Patch" => Terrain::CactusPatch,
        "Grain" => Terrain::Grain,
        "Marsh" => Terrain::Marsh,
        "Crags" => Terrain::Crag,
        "Graveyard" => Terrain::Graveyard,
        "Gully" => Terrain::Gully,
        n if n.starts_with("Stone Building") => Terrain::StoneBuilding,
        n if n.starts_with("Wooden Building") => Terrain::WoodenBuilding,
        _ => return None,
    })
}

use Category::*;

/// (code, name, obstacle, hindrance, half level, inherent, split in half levels, lower
/// obstacle, lower hindrance, height, category), as VASL 6.x defines them.
type BuiltinRow = (
    TerrainCode,
    &'static str,
    bool,
    bool,
    bool,
    bool,
    u8,
    bool,
    bool,
    i8,
    Category,
);

#[rustfmt::skip]
const BUILTIN: &[BuiltinRow] = &[
    (0, "Open Ground", false, false, false, false, 0, false, false, 0, Open),
    (1, "Plowed Field", false, false, false, false, 0, false, false, 0, Open),
    (2, "Rooftop", false, false, false, false, 0, false, false, 0, Open),
    (3, "Snow", false, false, false, false, 0, false, false, 0, Open),
    (4, "Deep Snow", false, false, false, false, 0, false, false, 0, Open),
    (5, "Ice", false, false, false, false, 0, false, false, 0, Open),
    (6, "Mud", false, false, false, false, 0, false, false, 0, Open),
    (7, "Mudflats", false, false, false, false, 0, false, false, 0, Open),
    (8, "Water", false, false, false, false, 0, false, false, 0, Water),
    (9, "Shallow Water", false, false, false, false, 0, false, false, 0, Water),
    (10, "River", false, false, false, false, 0, false, false, 0, Water),
    (11, "Shallow River", false, false, false, false, 0, false, false, 0, Water),
    (12, "Ford", false, false, false, false, 0, false, false, 0, Open),
    (13, "Canal", false, false, false, false, 0, false, false, 0, Water),
    (14, "Marsh", false, true, true, false, 0, false, true, 0, Other),
    (15, "Shellholes", false, false, false, false, 0, false, false, 0, Open),
    (20, "Foxholes", false, false, false, false, 0, false, false, 0, Entrenchment),
    (21, "Trench", false, false, false, false, 0, false, false, 0, Entrenchment),
    (22, "Antitank Trench", false, false, false, false, 0, false, false, 0, Entrenchment),
    (23, "Pillbox", false, false, false, false, 0, false, false, 0, Open),
    (24, "Grain", false, true, true, false, 0, false, true, 0, Other),
    (25, "Brush", false, true, true, false, 0, false, true, 0, Other),
    (26, "Crags", false, true, true, true, 0, false, true, 0, Other),
    (27, "Debris", false, true, true, true, 0, false, true, 0, Other),
    (28, "Graveyard", false, true, true, true, 0, false, true, 0, Other),
    (29, "Lumberyard", true, false, false, false, 0, true, false, 1, Other),
    (30, "Gully", false, false, false, false, 0, false, false, 0, Depression),
    (31, "Dry Stream", false, false, false, false, 0, false, false, 0, Depression),
    (32, "Shallow Stream", false, false, false, false, 0, false, false, 0, Depression),
    (33, "Deep Stream", false, false, false, false, 0, false, false, 0, Depression),
    (34, "Flooded Stream", false, false, false, false, 0, false, false, 0, Open),
    (35, "Irrigation Ditch", false, false, false, false, 0, false, false, 0, Open),
    (40, "Stone Building", true, false, false, false, 0, true, false, 1, Building),
    (41, "Stone Building, 1 Level", true, false, true, false, 0, true, false, 1, Building),
    (42, "Stone Building, 2 Level", true, false, true, false, 0, true, false, 2, Building),
    (43, "Stone Building, 3 Level", true, false, true, false, 0, true, false, 3, Building),
    (44, "Stone Building, 4 Level", true, false, true, false, 0, true, false, 4, Building),
    (45, "Stone Factory Wall, 1.5 Level", true, false, true, false, 0, true, false, 1, Factory),
    (46, "Stone Factory Wall, 2.5 Level", true, false, true, false, 0, true, false, 2, Factory),
    (47, "Stone Factory, 1.5 Level", false, true, true, false, 2, false, true, 1, Factory),
    (48, "Stone Factory, 2.5 Level", false, true, true, false, 4, false, true, 2, Factory),
    (49, "Stone Market Place", true, false, true, false, 1, false, false, 1, Marketplace),
    (50, "Wooden Building", true, false, false, false, 0, true, false, 1, Building),
    (51, "Wooden Building, 1 Level", true, false, true, false, 0, true, false, 1, Building),
    (52, "Wooden Building, 2 Level", true, false, true, false, 0, true, false, 2, Building),
    (53, "Wooden Building, 3 Level", true, false, true, false, 0, true, false, 3, Building),
    (54, "Wooden Building, 4 Level", true, false, true, false, 0, true, false, 4, Building),
    (55, "Wooden Factory Wall, 1.5 Level", true, false, true, false, 0, true, false, 1, Factory),
    (56, "Wooden Factory Wall, 2.5 Level", true, false, true, false, 0, true, false, 2, Factory),
    (57, "Wooden Factory, 1.5 Level", false, true, true, false, 2, false, true, 1, Factory),
    (58, "Wooden Factory, 2.5 Level", false, true, true, false, 4, false, true, 2, Factory),
    (59, "Wooden Market Place", true, false, true, false, 1, false, false, 1, Marketplace),
    (60, "Woods", true, false, false, false, 0, true, false, 1, Woods),
    (61, "Forest", true, false, false, false, 0, true, false, 2, Other),
    (62, "Pine Woods", true, false, false, false, 0, true, false, 2, Woods),
    (63, "Orchard", true, false, false, true, 1, false, true, 1, Other),
    (64, "Orchard, Out of Season", false, true, false, true, 1, false, true, 1, Other),
    (65, "Dirt Road", false, false, false, false, 0, false, false, 0, Road),
    (66, "Paved Road", false, false, false, false, 0, false, false, 0, Road),
    (67, "Elevated Road", false, false, false, false, 0, false, false, 0, Road),
    (68, "Sunken Road", false, false, false, false, 0, false, false, 0, Depression),
    (69, "Runway", false, false, false, false, 0, false, false, 0, Open),
    (70, "Path", false, false, false, false, 0, false, false, 0, Open),
    (72, "Wall", true, false, true, false, 0, true, false, 0, Hexside),
    (73, "Hedge", true, false, true, false, 0, true, false, 0, Hexside),
    (74, "Bocage", true, false, false, false, 0, true, false, 1, Hexside),
    (75, "Cliff", false, false, false, false, 0, false, false, 0, Hexside),
    (76, "Rowhouse Wall", true, false, false, false, 0, true, false, 1, Building),
    (77, "Rowhouse Wall, 1 Level", true, false, true, false, 0, true, false, 1, Building),
    (78, "Rowhouse Wall, 2 Level", true, false, true, false, 0, true, false, 2, Building),
    (79, "Rowhouse Wall, 3 Level", true, false, true, false, 0, true, false, 3, Building),
    (80, "Rowhouse Wall, 4 Level", true, false, true, false, 0, true, false, 3, Building),
    (81, "Road Block", true, false, true, false, 0, true, false, 0, Hexside),
    (82, "Single Hex Stone Bridge", false, true, true, false, 2, false, true, 0, Bridge),
    (83, "Single Hex Wooden Bridge", false, true, true, false, 2, false, true, 0, Bridge),
    (84, "Stone Bridge", false, true, true, false, 2, false, true, 0, Bridge),
    (85, "Wooden Bridge", false, true, true, false, 2, false, true, 0, Bridge),
    (86, "Pontoon Bridge", false, false, false, false, 0, false, false, 0, Open),
    (87, "Foot Bridge", false, false, false, false, 0, false, false, 0, Open),
    (90, "Stone Rubble", true, false, true, true, 0, true, false, 0, Other),
    (91, "Wooden Rubble", true, false, true, true, 0, true, false, 0, Other),
    (95, "Sewer", false, false, false, false, 0, false, false, 0, Open),
    (96, "Tunnel", false, false, false, false, 0, false, false, 0, Open),
    (97, "Cave", false, false, false, false, 0, false, false, 0, Open),
    (100, "Scrub", false, false, false, false, 0, false, false, 0, Open),
    (101, "Hammada", false, false, false, false, 0, false, false, 0, Open),
    (102, "Dier", false, false, false, false, 0, false, false, 0, Open),
    (103, "Dier Lip", false, false, false, false, 0, false, false, 0, Open),
    (104, "Wadi", false, false, false, false, 0, false, false, 0, Depression),
    (105, "Hillock", true, false, true, true, 0, false, false, 0, Other),
    (106, "Hillock Summit", false, false, false, true, 0, false, false, 0, Open),
    (107, "Sand", false, false, false, false, 0, false, false, 0, Open),
    (108, "Sand Dune", true, false, true, false, 0, true, false, 0, Other),
    (109, "Dune, Crest Low", true, false, true, false, 0, true, false, 0, Hexside),
    (110, "Dune, Crest High", true, false, true, false, 0, true, false, 0, Hexside),
    (111, "Sangar", false, false, false, false, 0, false, false, 0, Open),
    (112, "Track", false, false, false, false, 0, false, false, 0, Open),
    (113, "Mausoleum", true, false, false, false, 0, true, false, 1, Building),
    (114, "Bedouin Camp", false, true, true, true, 0, false, true, 0, Building),
    (115, "Building Cluster", true, false, false, true, 0, true, false, 1, Building),
    (116, "Cactus Hedge", true, false, true, false, 0, true, false, 0, Hexside),
    (117, "Cactus Patch", true, false, true, true, 0, true, false, 0, Other),
    (118, "Olive Grove", true, false, false, true, 1, false, true, 1, Other),
    (119, "Vineyard", false, true, true, true, 0, false, true, 0, Other),
    (120, "Broken Ground", false, false, false, false, 0, false, false, 0, Open),
    (121, "Scrub", false, false, false, false, 0, false, false, 0, Open),
    (125, "Temple", true, false, false, false, 0, true, false, 1, Building),
    (126, "Light Jungle", true, false, false, false, 0, true, false, 2, Woods),
    (127, "Dense Jungle", true, false, false, true, 0, true, false, 2, Woods),
    (128, "Bamboo", true, false, false, true, 0, true, false, 1, Other),
    (129, "Palm Trees", true, false, false, true, 1, false, true, 1, Other),
    (130, "Huts", false, true, false, false, 0, false, true, 1, Building),
    (131, "Collapsed Huts", false, true, false, false, 0, false, true, 1, Other),
    (132, "Kunai", false, true, true, false, 0, false, true, 0, Other),
    (133, "Swamp", true, false, false, false, 0, true, false, 2, Other),
    (135, "Rice Paddy, Drained", false, false, false, false, 0, false, false, 0, Open),
    (136, "Rice Paddy, Irrigated", false, false, false, false, 0, false, false, 0, Open),
    (137, "Rice Paddy, In Season", false, false, false, true, 0, false, false, 0, Open),
    (138, "Rice Paddy Bank", false, false, false, false, 0, false, false, 0, Open),
    (139, "Panji", false, false, false, false, 0, false, false, 0, Open),
    (140, "Ocean", false, false, false, false, 0, false, false, 0, Open),
    (141, "Shallow Ocean", false, false, false, false, 0, false, false, 0, Open),
    (142, "Effluent", false, false, false, false, 0, false, false, 0, Open),
    (143, "Soft Sand", false, false, false, false, 0, false, false, 0, Open),
    (144, "Beach, Slight Slope", false, false, false, false, 0, false, false, 0, Open),
    (145, "Beach, Moderate Slope", false, false, false, false, 0, false, false, 0, Open),
    (146, "Beach, Steep Slope", false, false, false, false, 0, false, false, 0, Open),
    (147, "Exposed Reef", false, false, false, false, 0, false, false, 0, Open),
    (148, "Submerged Reef", false, false, false, false, 0, false, false, 0, Open),
    (152, "Railway Embankment", true, false, true, false, 0, false, false, 0, Hexside),
    (153, "Railroad, Ground Level", false, false, false, false, 0, false, false, 0, Open),
    (154, "Railroad, Embankment", false, false, false, false, 0, false, false, 0, Open),
    (155, "Railroad, Elevated", false, false, false, false, 0, false, false, 0, Open),
    (156, "Railroad, Sunken", false, false, false, false, 0, false, false, 0, Open),
    (157, "Rrembankment", true, false, true, false, 0, true, false, 0, Hexside),
    (160, "Tower Hindrance", true, false, true, false, 0, false, true, 1, Building),
    (161, "Tower, 2 Level Hindrance", false, true, true, false, 0, false, true, 2, Building),
    (162, "Tower, 3 Level Hindrance", false, true, true, false, 0, false, true, 3, Building),
    (163, "Tower Obstacle", true, false, true, false, 0, true, false, 1, Building),
    (164, "Tower, 2 Level Obstacle", true, false, true, false, 0, true, false, 2, Building),
    (165, "Tower, 3 Level Obstacle", true, false, true, false, 0, true, false, 3, Building),
    (166, "Storage Tank", true, false, true, false, 0, true, false, 1, Building),
    (167, "Storage Tank, 2 Level", true, false, true, false, 0, true, false, 2, Building),
    (168, "BFP Tower, 1 Level", true, false, true, false, 1, false, true, 1, Building),
    (169, "BFP Tower, 2 Level", true, false, true, false, 3, false, true, 2, Building),
    (170, "Roofless Stone Factory, 1.5 Level", false, true, true, false, 2, false, true, 0, Factory),
    (171, "Roofless Stone Factory, 2.5 Level", false, true, true, false, 4, false, true, 0, Factory),
    (172, "Interior Factory Wall, 1 Level", true, false, true, false, 0, true, false, 1, Factory),
    (173, "Interior Factory Wall, 2 Level", true, false, true, false, 0, true, false, 2, Factory),
    (174, "Cellar", true, false, false, false, 0, true, false, 1, Building),
    (175, "Light Woods", true, false, false, false, 1, false, true, 1, Other),
    (180, "Gutted Stone Factory, 1.5 Level", false, true, true, false, 2, false, true, 0, Factory),
    (181, "Gutted Stone Factory, 2.5 Level", false, true, true, false, 4, false, true, 0, Factory),
    (182, "Gutted Stone Building", true, false, false, false, 0, true, false, 1, Building),
    (183, "Gutted Stone Building, 1 Level", true, false, true, false, 0, true, false, 1, Building),
    (184, "Gutted Stone Building, 2 Level", true, false, true, false, 0, true, false, 2, Building),
    (185, "Gutted Stone Building, 3 Level", true, false, true, false, 0, true, false, 3, Building),
    (186, "Gutted Stone Building, 4 Level", true, false, true, false, 0, true, false, 4, Building),
    (190, "Stone Rubble Ground Level", true, false, true, true, 0, true, false, 0, Other),
    (191, "Stone Rubble Level 1", true, false, true, false, 0, true, false, 1, Other),
    (192, "Stone Rubble Level 2", true, false, true, false, 0, true, false, 2, Other),
    (193, "Stone Rubble Level 3", true, false, true, false, 0, true, false, 3, Other),
    (194, "Wooden Rubble Ground Level", true, false, true, true, 0, true, false, 0, Other),
    (195, "Wooden Rubble Level 1", true, false, true, false, 0, true, false, 1, Other),
    (196, "Wooden Rubble Level 2", true, false, true, false, 0, true, false, 2, Other),
    (197, "Wooden Rubble Level 3", true, false, true, false, 0, true, false, 3, Other),];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_holds_every_code_once() {
        let table = TerrainTable::builtin();
        assert_eq!(table.len(), BUILTIN.len());
        assert_eq!(table.get(60).unwrap().name, "Woods");
        assert_eq!(table.get(72).unwrap().category, Category::Hexside);
        assert!(table.get(255).is_none());
    }

    #[test]
    fn parse_reads_terrain_types_and_names_what_is_wrong() {
        let xml = br#"<sharedBoardMetadata><terrainTypes>
            <terrainType name="Woods" typeCode="60" isLOSObstacle="TRUE" isLOSHindrance="FALSE"
             isHalfLevelHeight="FALSE" isInherentTerrain="FALSE" split="0.0"
             isLowerLOSObstacle="TRUE" isLowerLOSHindrance="FALSE" height="1" LOSCategory="WOODS"/>
            </terrainTypes></sharedBoardMetadata>"#;
        let table = TerrainTable::parse(xml).unwrap();
        assert_eq!(table.get(60), TerrainTable::builtin().get(60));
        let broken = String::from_utf8_lossy(xml).replace("\"60\"", "\"sixty\"");
        let e = TerrainTable::parse(broken.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("typeCode") && e.contains("Woods"), "{e}");
        assert_eq!(TerrainTable::parse(b"<x/>").unwrap_err(), CodesError::Empty);
        assert!(TerrainTable::parse(b"not xml").is_err());
    }

    #[test]
    fn a_terrain_name_holds_no_control_or_bidi_character() {
        // An unmodelled terrain's name reaches both players (a position's hex, a refusal
        // naming it), so the operator's codes file is held to the scenario's words.
        let xml = r#"<sharedBoardMetadata><terrainType name="Swamp" typeCode="60"
            isLOSObstacle="TRUE" isLOSHindrance="FALSE" isHalfLevelHeight="FALSE"
            isInherentTerrain="FALSE" split="0.0" isLowerLOSObstacle="TRUE"
            isLowerLOSHindrance="FALSE" height="1" LOSCategory="WOODS"/></sharedBoardMetadata>"#;
        TerrainTable::parse(xml.as_bytes()).unwrap();
        for hostile in ["Swamp&#x9B;2J", "Sw&#x202E;amp", "Swamp&#xD;", ""] {
            let bad = xml.replacen("\"Swamp\"", &format!("\"{hostile}\""), 1);
            let e = TerrainTable::parse(bad.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("`name`") && e.contains("line 1"), "{e}");
            assert!(
                !e.chars()
                    .any(|c| c.is_control() || crate::scenario::is_bidi(c)),
                "{e:?}"
            );
        }
        let long = xml.replacen("\"Swamp\"", &format!("\"{}\"", "S".repeat(65)), 1);
        let e = TerrainTable::parse(long.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("64 bytes"), "{e}");
        // A value refused is said escaped, not echoed raw.
        let bad = xml.replacen("height=\"1\"", "height=\"1&#x9B;\"", 1);
        let e = TerrainTable::parse(bad.as_bytes()).unwrap_err().to_string();
        assert!(
            e.contains("height") && !e.chars().any(char::is_control),
            "{e:?}"
        );
    }

    #[test]
    fn a_module_is_read_from_its_zip_or_as_the_xml_itself() {
        let xml = br#"<sharedBoardMetadata><terrainType name="Woods" typeCode="60"
            isLOSObstacle="TRUE" isLOSHindrance="FALSE" isHalfLevelHeight="FALSE"
            isInherentTerrain="FALSE" split="0.0" isLowerLOSObstacle="TRUE"
            isLowerLOSHindrance="FALSE" height="1" LOSCategory="WOODS"/></sharedBoardMetadata>"#;
        assert_eq!(TerrainTable::from_module(xml).unwrap().len(), 1);
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zip.start_file(
            "boardData/SharedBoardMetadata.xml",
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        std::io::Write::write_all(&mut zip, xml).unwrap();
        let module = zip.finish().unwrap().into_inner();
        assert_eq!(TerrainTable::from_module(&module).unwrap().len(), 1);
        let mut other = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        other
            .start_file("buildFile.xml", zip::write::SimpleFileOptions::default())
            .unwrap();
        let other = other.finish().unwrap().into_inner();
        let e = TerrainTable::from_module(&other).unwrap_err();
        assert_eq!(e, CodesError::NoMetadata);
        assert!(e.to_string().contains("not a VASL module"), "{e}");
    }

    #[test]
    fn every_engine_terrain_has_a_vasl_name() {
        let table = TerrainTable::builtin();
        let mapped: Vec<Terrain> = (0..=255u8)
            .filter_map(|c| table.get(c))
            .filter_map(|t| engine_terrain(&t.name))
            .collect();
        for row in crate::terrain::TERRAIN_TABLE {
            let terrain = &row.terrain;
            assert!(mapped.contains(terrain), "{terrain:?} has no VASL code");
        }
    }
}
