//! A VASL board archive (`bdNN`): a zip file holding `BoardMetadata.xml` (name, version,
//! size in hexes, hills, building types), the board's image and `LOSData`, the terrain grid
//! VASL traces LOS over. This module reads the bytes of one archive; finding archives on disk
//! is the caller's (server, CLI), so the core stays free of IO.
//!
//! `LOSData` is a gzip stream of Java serialisation block data (stream header `AC ED 00 05`,
//! then records tagged `0x77` with a one-byte length or `0x7A` with a four-byte one). Their
//! payloads, joined, hold four big-endian `i32` (width and height in hexes, grid width and
//! height in pixels), then for every pixel, column by column, a signed elevation byte and an
//! unsigned terrain-code byte, then one stairway byte per hex (odd columns hold one more hex).

use std::io::{Cursor, Read};

use super::codes::TerrainCode;

/// An archive larger than this is refused before it is unzipped (real boards: 0.2–2 MB).
pub const ARCHIVE_BYTES_MAX: usize = 64 << 20;
/// The unpacked `LOSData` of the largest board accepted (a geomorphic board's is 2.3 MB).
pub const LOS_DATA_BYTES_MAX: usize = 48 << 20;
/// Pixels in one board's grid: room for a map board several geomorphic boards in size.
pub const GRID_PIXELS_MAX: usize = 20_000_000;
/// A board image larger than this is not served (VASL's geomorphic boards: 0.2–1 MB GIFs; the
/// largest map boards a few MB). The limit bounds what one image request may make the server
/// unpack and hold.
pub const IMAGE_BYTES_MAX: usize = 16 << 20;
/// `BoardMetadata.xml` larger than this is refused (real ones: under 100 KB).
pub const METADATA_BYTES_MAX: usize = 4 << 20;
/// Hexes across and down a board; a geomorphic board is 33 × 10. The engine names columns
/// up to GG (`board::hex::COLUMN_MAX`).
pub const BOARD_COLUMNS_MAX: u16 = crate::hex::COLUMN_MAX;
pub const BOARD_ROWS_MAX: u16 = 60;

/// A geomorphic board's hex grid in image pixels: 33 columns over 1800 pixels, the first and
/// last centred on the edges, and 10 rows over 645; column A's first centre sits half a hex
/// below the north edge (VASL's `BoardArchive` constants).
pub const HEX_WIDTH: f64 = 1800.0 / 32.0;
pub const HEX_HEIGHT: f64 = 645.0 / 10.0;
pub const A1_CENTRE_Y: f64 = HEX_HEIGHT / 2.0;

/// Why an archive could not be read. The caller adds the file's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    #[error("is {0} bytes; a board archive is at most {ARCHIVE_BYTES_MAX}")]
    TooLarge(usize),
    #[error("is not a zip file ({0})")]
    NotZip(String),
    #[error("has no `{0}` (every VASL board archive holds one)")]
    Missing(&'static str),
    #[error("`{file}` could not be unpacked: {why}")]
    Unpack { file: &'static str, why: String },
    #[error("`LOSData` is not Java block data: {0}")]
    NotBlockData(String),
    #[error("`LOSData` ends early: {needed} bytes needed, {have} present")]
    Truncated { needed: usize, have: usize },
    #[error("`LOSData` has {extra} bytes past its last hex")]
    TrailingBytes { extra: usize },
    #[error("impossible dimensions in `LOSData`: {0}")]
    Dimensions(String),
    #[error("`BoardMetadata.xml` {0}")]
    Metadata(String),
    #[error("board image: {0}")]
    Image(String),
}

/// A board's metadata: what `asl boards` lists and what the import needs beyond the grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardMetadata {
    /// VASL's name for the board (`01` for archive `bd01`).
    pub name: String,
    pub version: String,
    pub has_hills: bool,
    pub columns: u16,
    pub rows: u16,
    pub image: String,
    /// Per hex (VASL's hex name, e.g. `E4`), the building type VASL's metadata names for it
    /// (`Stone Building, 2 Level`): the grid colours cannot tell a building's levels.
    pub building_types: Vec<(String, String)>,
}

/// The terrain grid of one board, as `LOSData` holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LosGrid {
    pub columns: u16,
    pub rows: u16,
    pub width: u32,
    pub height: u32,
    /// Per pixel, column by column (`x * height + y`): base elevation in levels.
    pub elevation: Vec<i8>,
    /// Per pixel, the same order: VASL's terrain code.
    pub terrain: Vec<TerrainCode>,
    /// One flag per hex, column by column, odd columns one hex longer.
    pub stairways: Vec<bool>,
}

impl LosGrid {
    /// The pixel at (x, y), or `None` off the grid.
    pub fn at(&self, x: i64, y: i64) -> Option<(i8, TerrainCode)> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        let i = x as usize * self.height as usize + y as usize;
        Some((self.elevation[i], self.terrain[i]))
    }
}

/// One board archive, read.
#[derive(Clone, Debug)]
pub struct BoardArchive {
    pub metadata: BoardMetadata,
    pub grid: LosGrid,
    /// blake3 of the archive's bytes: a game records which archive its board came from, so a
    /// replay on another machine can tell it has the same board.
    pub digest: [u8; 32],
}

/// A board's image, as the archive holds it: what the page draws under the hex grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardImage {
    pub bytes: Vec<u8>,
    /// Told from the bytes themselves, never from the file name: `image/gif`, `image/png` or
    /// `image/jpeg`, the formats VASL's boards come in.
    pub content_type: &'static str,
}

/// The image of an archive's board: the file `BoardMetadata.xml` names (`boardImageFileName`)
/// and no other, so that a request for a board's image can never read out its `LOSData` or
/// anything else the archive holds. Kept apart from [`read`] because the grid is all the engine
/// needs: a server reads the image only when a page asks for it.
pub fn image(bytes: &[u8]) -> Result<BoardImage, ArchiveError> {
    image_within(bytes, IMAGE_BYTES_MAX)
}

/// [`image`], refusing an image of more than `limit` bytes (tests try the limit on small ones).
fn image_within(bytes: &[u8], limit: usize) -> Result<BoardImage, ArchiveError> {
    if bytes.len() > ARCHIVE_BYTES_MAX {
        return Err(ArchiveError::TooLarge(bytes.len()));
    }
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
    let metadata = parse_metadata(&unpack(&mut zip, "BoardMetadata.xml", METADATA_BYTES_MAX)?)?;
    if metadata.image.is_empty() {
        return Err(ArchiveError::Metadata(
            "names no image (`boardImageFileName`)".into(),
        ));
    }
    let bytes = unpack_named(&mut zip, &metadata.image, limit)?;
    let content_type = if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        "image/gif"
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        "image/jpeg"
    } else {
        return Err(ArchiveError::Image(format!(
            "`{}` is not a GIF, PNG or JPEG image",
            metadata.image
        )));
    };
    Ok(BoardImage {
        bytes,
        content_type,
    })
}

/// Reads one archive from its bytes.
pub fn read(bytes: &[u8]) -> Result<BoardArchive, ArchiveError> {
    if bytes.len() > ARCHIVE_BYTES_MAX {
        return Err(ArchiveError::TooLarge(bytes.len()));
    }
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| ArchiveError::NotZip(e.to_string()))?;
    let metadata_xml = unpack(&mut zip, "BoardMetadata.xml", METADATA_BYTES_MAX)?;
    let metadata = parse_metadata(&metadata_xml)?;
    let gzipped = unpack(&mut zip, "LOSData", LOS_DATA_BYTES_MAX)?;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gzipped[..])
        .take(LOS_DATA_BYTES_MAX as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|e| ArchiveError::Unpack {
            file: "LOSData",
            why: format!("not gzip: {e}"),
        })?;
    if raw.len() > LOS_DATA_BYTES_MAX {
        return Err(ArchiveError::Unpack {
            file: "LOSData",
            why: format!("unpacks to more than {LOS_DATA_BYTES_MAX} bytes"),
        });
    }
    let payload = block_data(&raw)?;
    let grid = parse_grid(&payload)?;
    if (grid.columns, grid.rows) != (metadata.columns, metadata.rows) {
        return Err(ArchiveError::Dimensions(format!(
            "`LOSData` is {}×{} hexes but `BoardMetadata.xml` says {}×{}",
            grid.columns, grid.rows, metadata.columns, metadata.rows
        )));
    }
    Ok(BoardArchive {
        metadata,
        grid,
        digest: *blake3::hash(bytes).as_bytes(),
    })
}

fn unpack(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &'static str,
    limit: usize,
) -> Result<Vec<u8>, ArchiveError> {
    let mut file = match zip.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Err(ArchiveError::Missing(name)),
        Err(e) => {
            return Err(ArchiveError::Unpack {
                file: name,
                why: e.to_string(),
            })
        }
    };
    read_limited(&mut file, limit).map_err(|why| ArchiveError::Unpack {
        file: name,
        why: why.to_string(),
    })
}

/// The image file the metadata names (a name only known at run time, so its errors are
/// [`ArchiveError::Image`]).
fn unpack_named(
    zip: &mut zip::ZipArchive<Cursor<&[u8]>>,
    name: &str,
    limit: usize,
) -> Result<Vec<u8>, ArchiveError> {
    let mut file = zip.by_name(name).map_err(|e| match e {
        zip::result::ZipError::FileNotFound => ArchiveError::Image(format!(
            "the archive has no `{name}`, the image its metadata names"
        )),
        e => ArchiveError::Image(format!("`{name}` could not be unpacked: {e}")),
    })?;
    read_limited(&mut file, limit).map_err(|why| ArchiveError::Image(format!("`{name}` {why}")))
}

/// A file of the zip, refused past `limit` bytes unpacked (whatever its header claims).
fn read_limited(file: &mut impl Read, limit: usize) -> Result<Vec<u8>, Limited> {
    let mut out = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| Limited::Unpack(e.to_string()))?;
    if out.len() > limit {
        return Err(Limited::TooLarge(limit));
    }
    Ok(out)
}

/// Why [`read_limited`] read no file: said after the file's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Limited {
    #[error("{0}")]
    Unpack(String),
    #[error("is larger than {0} bytes")]
    TooLarge(usize),
}

/// Java's `ObjectOutputStream` magic and version.
const STREAM_HEADER: [u8; 4] = [0xAC, 0xED, 0x00, 0x05];
const TC_BLOCKDATA: u8 = 0x77;
const TC_BLOCKDATALONG: u8 = 0x7A;

/// The payloads of a Java serialisation stream that holds only block data, joined.
pub fn block_data(stream: &[u8]) -> Result<Vec<u8>, ArchiveError> {
    if stream.len() < 4 || stream[..4] != STREAM_HEADER {
        return Err(ArchiveError::NotBlockData(
            "no Java serialisation header (AC ED 00 05)".into(),
        ));
    }
    let mut out = Vec::with_capacity(stream.len());
    let mut at = 4;
    while at < stream.len() {
        let (len, header) = match stream[at] {
            TC_BLOCKDATA => match stream.get(at + 1) {
                Some(&n) => (usize::from(n), 2),
                None => return Err(truncated(at + 2, stream.len())),
            },
            TC_BLOCKDATALONG => match stream.get(at + 1..at + 5) {
                Some(b) => {
                    let n = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    if n < 0 {
                        return Err(ArchiveError::NotBlockData(format!(
                            "negative block length {n} at byte {at}"
                        )));
                    }
                    (n as usize, 5)
                }
                None => return Err(truncated(at + 5, stream.len())),
            },
            tag => {
                return Err(ArchiveError::NotBlockData(format!(
                    "record tag 0x{tag:02X} at byte {at}; the grid is written as block data only"
                )))
            }
        };
        let start = at + header;
        let end = start
            .checked_add(len)
            .filter(|end| *end <= stream.len())
            .ok_or_else(|| truncated(start + len, stream.len()))?;
        out.extend_from_slice(&stream[start..end]);
        at = end;
    }
    Ok(out)
}

fn truncated(needed: usize, have: usize) -> ArchiveError {
    ArchiveError::Truncated { needed, have }
}

/// The grid from the joined block data.
pub fn parse_grid(payload: &[u8]) -> Result<LosGrid, ArchiveError> {
    let int = |i: usize| -> Result<i32, ArchiveError> {
        let b = payload
            .get(i * 4..i * 4 + 4)
            .ok_or_else(|| truncated(16, payload.len()))?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (columns, rows, width, height) = (int(0)?, int(1)?, int(2)?, int(3)?);
    if columns < 1 || columns > i32::from(BOARD_COLUMNS_MAX) {
        return Err(ArchiveError::Dimensions(format!(
            "{columns} hex columns (the engine reads 1 to {BOARD_COLUMNS_MAX})"
        )));
    }
    if rows < 1 || rows > i32::from(BOARD_ROWS_MAX) {
        return Err(ArchiveError::Dimensions(format!(
            "{rows} hex rows (the engine reads 1 to {BOARD_ROWS_MAX})"
        )));
    }
    if width < 1 || height < 1 || (width as i64) * (height as i64) > GRID_PIXELS_MAX as i64 {
        return Err(ArchiveError::Dimensions(format!(
            "a grid of {width}×{height} pixels (at most {GRID_PIXELS_MAX} pixels)"
        )));
    }
    let pixels = width as usize * height as usize;
    let hexes = hexes_in(columns as u16, rows as u16);
    let needed = 16 + 2 * pixels + hexes;
    if payload.len() < needed {
        return Err(truncated(needed, payload.len()));
    }
    if payload.len() > needed {
        return Err(ArchiveError::TrailingBytes {
            extra: payload.len() - needed,
        });
    }
    let cells = &payload[16..16 + 2 * pixels];
    let elevation = cells.iter().step_by(2).map(|b| *b as i8).collect();
    let terrain = cells.iter().skip(1).step_by(2).copied().collect();
    let stairways = payload[16 + 2 * pixels..].iter().map(|b| *b == 1).collect();
    Ok(LosGrid {
        columns: columns as u16,
        rows: rows as u16,
        width: width as u32,
        height: height as u32,
        elevation,
        terrain,
        stairways,
    })
}

/// Hexes on a board of `columns` × `rows`: odd columns (B, D, …) hold one more, the half hexes
/// at both long edges.
pub fn hexes_in(columns: u16, rows: u16) -> usize {
    (0..columns).map(|c| usize::from(rows + c % 2)).sum()
}

/// Reads `BoardMetadata.xml`.
pub fn parse_metadata(xml: &[u8]) -> Result<BoardMetadata, ArchiveError> {
    let text = std::str::from_utf8(xml)
        .map_err(|e| ArchiveError::Metadata(format!("is not UTF-8: {e}")))?;
    let doc = roxmltree::Document::parse(text)
        .map_err(|e| ArchiveError::Metadata(format!("is not XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "boardMetadata" {
        return Err(ArchiveError::Metadata(format!(
            "has root element <{}>, not <boardMetadata>",
            root.tag_name().name()
        )));
    }
    let attribute = |name: &str| -> Result<&str, ArchiveError> {
        root.attribute(name)
            .ok_or_else(|| ArchiveError::Metadata(format!("has no `{name}` attribute")))
    };
    let number = |name: &str, max: u16| -> Result<u16, ArchiveError> {
        let text = attribute(name)?;
        text.trim()
            .parse::<u16>()
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| {
                ArchiveError::Metadata(format!(
                    "has `{name}=\"{}\"`: not a number 1 to {max}",
                    text.escape_debug()
                ))
            })
    };
    // Boards cut to another grid (HASL maps, 1a–9b) place A1 elsewhere; only the geomorphic
    // grid (A1's centre on the west edge, hexes 56.25 × 64.5 pixels) is read.
    for name in ["A1CenterX", "A1CenterY", "hexWidth", "hexHeight"] {
        if let Some(value) = root.attribute(name) {
            let standard = match name {
                "A1CenterX" => 0.0,
                "A1CenterY" => A1_CENTRE_Y,
                "hexWidth" => HEX_WIDTH,
                _ => HEX_HEIGHT,
            };
            let parsed: f64 = value.trim().parse().unwrap_or(f64::NAN);
            // VASL writes -901 where a value is missing.
            if parsed != -901.0 && (parsed - standard).abs() > 0.01 {
                return Err(ArchiveError::Metadata(format!(
                    "sets `{name}=\"{}\"`: only the geomorphic hex grid is supported",
                    value.escape_debug()
                )));
            }
        }
    }
    let mut building_types = Vec::new();
    for node in root
        .descendants()
        .filter(|n| n.has_tag_name("buildingType"))
    {
        if let (Some(hex), Some(kind)) = (
            node.attribute("hexName"),
            node.attribute("buildingTypeName"),
        ) {
            let line = doc.text_pos_at(node.range().start).row;
            shown("hexName", hex, Some(line))?;
            shown("buildingTypeName", kind, Some(line))?;
            building_types.push((hex.to_string(), kind.to_string()));
        }
    }
    let name = attribute("name")?;
    let version = root.attribute("version").unwrap_or("");
    let image = root.attribute("boardImageFileName").unwrap_or("");
    shown("name", name, None)?;
    shown("version", version, None)?;
    shown("boardImageFileName", image, None)?;
    Ok(BoardMetadata {
        name: name.to_string(),
        version: version.to_string(),
        has_hills: root
            .attribute("hasHills")
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        columns: number("width", BOARD_COLUMNS_MAX)?,
        rows: number("height", BOARD_ROWS_MAX)?,
        image: image.to_string(),
        building_types,
    })
}

/// The metadata's words are shown: the version in every game's map (so to both players and
/// the page), the names in `asl boards` and in errors. A word breaking the scenario's word
/// rules ([`crate::words::board_word_fault`]) refuses the archive, naming the attribute
/// (and its element's line).
fn shown(attribute: &str, text: &str, line: Option<u32>) -> Result<(), ArchiveError> {
    match crate::words::board_word_fault(text) {
        None => Ok(()),
        Some(why) => Err(ArchiveError::Metadata(match line {
            Some(line) => format!("has a `{attribute}` (line {line}) that {why}"),
            None => format!("has a `{attribute}` that {why}"),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_data_joins_short_and_long_records() {
        let mut stream = STREAM_HEADER.to_vec();
        stream.extend([TC_BLOCKDATA, 2, 1, 2]);
        stream.extend([TC_BLOCKDATALONG, 0, 0, 0, 3, 3, 4, 5]);
        assert_eq!(block_data(&stream).unwrap(), vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn block_data_refuses_objects_and_short_records() {
        let mut stream = STREAM_HEADER.to_vec();
        stream.extend([0x73, 0x72]);
        assert!(matches!(
            block_data(&stream),
            Err(ArchiveError::NotBlockData(_))
        ));
        let mut short = STREAM_HEADER.to_vec();
        short.extend([TC_BLOCKDATA, 9, 1]);
        assert!(matches!(
            block_data(&short),
            Err(ArchiveError::Truncated { .. })
        ));
        assert!(block_data(b"PK\x03\x04").is_err());
    }

    #[test]
    fn an_image_is_read_up_to_its_limit_and_refused_past_it() {
        let mut board = crate::vasl::synth::SynthBoard::sized("04", 3, 2, 120, 130);
        let png = board.painted_png();
        board.image = Some(png.clone());
        let archive = board.archive();
        assert_eq!(image_within(&archive, png.len()).unwrap().bytes, png);
        let e = image_within(&archive, png.len() - 1).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    #[test]
    fn hexes_count_the_half_hexes_of_odd_columns() {
        // 17 columns of 10 and 16 of 11.
        assert_eq!(hexes_in(33, 10), 17 * 10 + 16 * 11);
    }

    #[test]
    fn grid_dimensions_are_checked_before_anything_is_allocated() {
        let mut payload = Vec::new();
        for n in [33i32, 10, 100_000, 100_000] {
            payload.extend(n.to_be_bytes());
        }
        assert!(matches!(
            parse_grid(&payload),
            Err(ArchiveError::Dimensions(_))
        ));
        let mut payload = Vec::new();
        for n in [0i32, 10, 10, 10] {
            payload.extend(n.to_be_bytes());
        }
        assert!(matches!(
            parse_grid(&payload),
            Err(ArchiveError::Dimensions(_))
        ));
    }

    #[test]
    fn metadata_reads_size_hills_and_buildings() {
        let xml = br#"<?xml version="1.0"?><boardMetadata name="07" version="6.2" hasHills="TRUE"
            width="33" height="10" boardImageFileName="bd07.gif"><buildingTypes>
            <buildingType hexName="E4" buildingTypeName="Stone Building, 2 Level"/>
            </buildingTypes></boardMetadata>"#;
        let m = parse_metadata(xml).unwrap();
        assert_eq!(
            (
                m.name.as_str(),
                m.version.as_str(),
                m.has_hills,
                m.columns,
                m.rows
            ),
            ("07", "6.2", true, 33, 10)
        );
        assert_eq!(m.building_types[0].1, "Stone Building, 2 Level");
        let odd = br#"<boardMetadata name="x" width="33" height="10" hexWidth="70"/>"#;
        assert!(parse_metadata(odd)
            .unwrap_err()
            .to_string()
            .contains("hexWidth"));
        let bad = br#"<boardMetadata name="x" width="0" height="10"/>"#;
        assert!(parse_metadata(bad)
            .unwrap_err()
            .to_string()
            .contains("width"));
    }

    #[test]
    fn metadata_words_shown_to_players_hold_no_control_or_bidi_character() {
        // A board archive is a file from anywhere: its version reaches every client in the
        // scenario's map, its names reach the operator's terminal. XML lets a C1 control, a
        // carriage return or a bidi override through as a character reference.
        let good = r#"<boardMetadata name="07" version="6.2" width="33" height="10"
            boardImageFileName="bd07.gif"><buildingType hexName="E4"
            buildingTypeName="Stone Building"/></boardMetadata>"#;
        parse_metadata(good.as_bytes()).unwrap();
        for (field, from, to) in [
            ("version", "\"6.2\"", "\"6.2&#x9B;31m\""),
            ("version", "\"6.2\"", "\"6.2&#xD;\""),
            ("name", "\"07\"", "\"0&#x202E;7\""),
            ("boardImageFileName", "\"bd07.gif\"", "\"bd07&#xA;.gif\""),
            ("hexName", "\"E4\"", "\"E4&#x2066;\""),
            ("buildingTypeName", "\"Stone Building\"", "\"Stone&#x85;\""),
        ] {
            let xml = good.replacen(from, to, 1);
            let e = parse_metadata(xml.as_bytes()).unwrap_err().to_string();
            assert!(
                e.contains(&format!("`{field}`")) && e.contains("control or bidi"),
                "{field}: {e}"
            );
            assert!(
                !e.chars()
                    .any(|c| c.is_control() || crate::scenario::is_bidi(c)),
                "the refusal itself is printable: {e:?}"
            );
        }
        let long = good.replacen("\"6.2\"", &format!("\"{}\"", "9".repeat(65)), 1);
        let e = parse_metadata(long.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("`version`") && e.contains("64 bytes"), "{e}");
    }

    #[test]
    fn metadata_refusals_do_not_echo_a_hostile_value_raw() {
        let xml = r#"<boardMetadata name="x" width="3&#x9B;2J" height="10"/>"#;
        let e = parse_metadata(xml.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("width"), "{e}");
        assert!(!e.chars().any(char::is_control), "{e:?}");
    }
}
