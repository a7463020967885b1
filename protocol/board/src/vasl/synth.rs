//! Board archives written by the project itself, in VASL's real format, so that tests and
//! benchmarks never need MMP's boards: a zip holding `BoardMetadata.xml`, a `LOSData` gzip
//! stream of Java block data and a small image. [`SynthBoard`] paints the terrain grid pixel by
//! pixel or hex by hex; `archive::read` must read back exactly what was painted. Its image is a
//! 1 × 1 PNG unless the test asks for one painted from the grid at the board's own size
//! ([`SynthBoard::painted_png`]), which a page test needs to place the artwork under the hexes.

use std::io::Write;

use super::archive::{A1_CENTRE_Y, HEX_HEIGHT, HEX_WIDTH};
use super::codes::TerrainCode;
use crate::hex::Hex;

/// VASL's codes the tests paint with (`codes::BUILTIN`).
pub mod code {
    use super::TerrainCode;
    pub const OPEN_GROUND: TerrainCode = 0;
    pub const GRAIN: TerrainCode = 24;
    pub const BRUSH: TerrainCode = 25;
    pub const STONE_BUILDING: TerrainCode = 40;
    pub const STONE_BUILDING_2: TerrainCode = 42;
    pub const WOODEN_BUILDING: TerrainCode = 50;
    pub const WOODS: TerrainCode = 60;
    pub const ORCHARD: TerrainCode = 63;
    pub const DIRT_ROAD: TerrainCode = 65;
    pub const WALL: TerrainCode = 72;
    pub const HEDGE: TerrainCode = 73;
    pub const SWAMP: TerrainCode = 133;
}

/// A board being painted: a geomorphic board of open ground at level 0 to begin with.
#[derive(Clone, Debug)]
pub struct SynthBoard {
    pub name: String,
    pub version: String,
    pub columns: u16,
    pub rows: u16,
    pub width: u32,
    pub height: u32,
    pub elevation: Vec<i8>,
    pub terrain: Vec<TerrainCode>,
    pub building_types: Vec<(String, String)>,
    /// The image file's bytes (a PNG); `None` writes a 1 × 1 one, which is quick.
    pub image: Option<Vec<u8>>,
}

impl SynthBoard {
    /// A geomorphic board (33 × 10 hexes, 1800 × 645 pixels) named `name` (`"01"`).
    pub fn geomorphic(name: &str) -> SynthBoard {
        SynthBoard::sized(name, 33, 10, 1800, 645)
    }

    pub fn sized(name: &str, columns: u16, rows: u16, width: u32, height: u32) -> SynthBoard {
        let pixels = width as usize * height as usize;
        SynthBoard {
            name: name.to_string(),
            version: "6.1".into(),
            columns,
            rows,
            width,
            height,
            elevation: vec![0; pixels],
            terrain: vec![code::OPEN_GROUND; pixels],
            building_types: vec![],
            image: None,
        }
    }

    /// The grid drawn as an image the size of the board (a PNG, one pixel per grid pixel):
    /// each terrain in a colour of its own, darker with each level, and a black dot of
    /// [`CENTRE_DOT_RADIUS`] pixels on every hex's centre, so that whether the page lays
    /// the artwork right under its hexes can be seen (and measured).
    pub fn painted_png(&self) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut rgb = vec![0u8; w * h * 3];
        for x in 0..w {
            for y in 0..h {
                let i = x * h + y;
                let [r, g, b] = terrain_colour(self.terrain[i]);
                let shade = 1.0 - 0.12 * f64::from(self.elevation[i].clamp(0, 5));
                let at = (y * w + x) * 3;
                for (k, c) in [r, g, b].into_iter().enumerate() {
                    rgb[at + k] = (f64::from(c) * shade) as u8;
                }
            }
        }
        for column in 0..self.columns {
            let odd = column % 2 == 1;
            for place in 0..self.rows + u16::from(odd) {
                let x = HEX_WIDTH * f64::from(column);
                let y = A1_CENTRE_Y + HEX_HEIGHT * f64::from(place)
                    - if odd { HEX_HEIGHT / 2.0 } else { 0.0 };
                let r = CENTRE_DOT_RADIUS;
                for dx in -r..=r {
                    for dy in -r..=r {
                        let (px, py) = (x.round() as i64 + dx, y.round() as i64 + dy);
                        if dx * dx + dy * dy <= r * r
                            && (0..w as i64).contains(&px)
                            && (0..h as i64).contains(&py)
                        {
                            let at = (py as usize * w + px as usize) * 3;
                            rgb[at..at + 3].fill(0);
                        }
                    }
                }
            }
        }
        png(self.width, self.height, &rgb)
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        (x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height))
            .then(|| x as usize * self.height as usize + y as usize)
    }

    /// Paints one pixel (ignored off the board).
    pub fn pixel(&mut self, x: i64, y: i64, terrain: TerrainCode, elevation: i8) {
        if let Some(i) = self.index(x, y) {
            self.terrain[i] = terrain;
            self.elevation[i] = elevation;
        }
    }

    /// The centre dot of `hex` (its column and row as printed; the board part is ignored) in
    /// this board's pixels.
    pub fn centre(hex: Hex) -> (f64, f64) {
        let column = f64::from(hex.column - 1);
        let odd = (hex.column - 1) % 2 == 1;
        let row = f64::from(hex.row) - if odd { 0.0 } else { 1.0 };
        (
            HEX_WIDTH * column,
            A1_CENTRE_Y + HEX_HEIGHT * row - if odd { HEX_HEIGHT / 2.0 } else { 0.0 },
        )
    }

    /// Paints a disc of `radius` pixels around `hex`'s centre dot: terrain that fills most of
    /// the hex without touching its hexsides (radius < 28) or the whole hex (radius ≥ 33).
    pub fn hex(&mut self, hex: Hex, terrain: TerrainCode, radius: f64) {
        let level = self.level_at(hex);
        self.disc(hex, radius, |_| Some((terrain, level)));
    }

    /// Raises `hex` (a disc of `radius` pixels around its centre) to `level`, keeping terrain.
    pub fn raise(&mut self, hex: Hex, level: i8, radius: f64) {
        let (cx, cy) = SynthBoard::centre(hex);
        let r = radius.ceil() as i64;
        for x in cx as i64 - r..=cx as i64 + r {
            for y in cy as i64 - r..=cy as i64 + r {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                if dx * dx + dy * dy <= radius * radius {
                    if let Some(i) = self.index(x, y) {
                        self.elevation[i] = level;
                    }
                }
            }
        }
    }

    fn level_at(&self, hex: Hex) -> i8 {
        let (cx, cy) = SynthBoard::centre(hex);
        self.index(cx as i64, cy as i64)
            .map_or(0, |i| self.elevation[i])
    }

    fn disc(&mut self, hex: Hex, radius: f64, paint: impl Fn(usize) -> Option<(u8, i8)>) {
        let (cx, cy) = SynthBoard::centre(hex);
        let r = radius.ceil() as i64;
        for x in cx as i64 - r..=cx as i64 + r {
            for y in cy as i64 - r..=cy as i64 + r {
                let (dx, dy) = (x as f64 - cx, y as f64 - cy);
                if dx * dx + dy * dy <= radius * radius {
                    if let Some(i) = self.index(x, y) {
                        if let Some((t, e)) = paint(i) {
                            self.terrain[i] = t;
                            self.elevation[i] = e;
                        }
                    }
                }
            }
        }
    }

    /// Paints a line of `terrain` `thickness` pixels wide along the hexside between two
    /// adjacent hexes (a wall or hedge as VASL's grid draws one).
    pub fn hexside(&mut self, a: Hex, b: Hex, terrain: TerrainCode, thickness: f64) {
        let (ax, ay) = SynthBoard::centre(a);
        let (bx, by) = SynthBoard::centre(b);
        let (mx, my) = ((ax + bx) / 2.0, (ay + by) / 2.0);
        // The hexside runs perpendicular to the line between the centres, half a side long
        // each way (a side is HEX_HEIGHT / √3 long).
        let (dx, dy) = (bx - ax, by - ay);
        let len = (dx * dx + dy * dy).sqrt();
        let (ux, uy) = (-dy / len, dx / len);
        let half = HEX_HEIGHT / 3f64.sqrt() / 2.0;
        let steps = (half * 4.0) as i64;
        for s in -steps..=steps {
            let t = s as f64 / steps as f64 * half;
            for w in -(thickness as i64)..=thickness as i64 {
                let w = w as f64 / 2.0;
                let x = mx + ux * t + dx / len * w;
                let y = my + uy * t + dy / len * w;
                let level = self
                    .index(x as i64, y as i64)
                    .map_or(0, |i| self.elevation[i]);
                self.pixel(x as i64, y as i64, terrain, level);
            }
        }
    }

    /// The archive's bytes, in VASL's format.
    pub fn archive(&self) -> Vec<u8> {
        self.archive_with(&self.metadata_xml(), &self.los_data())
    }

    /// `BoardMetadata.xml` as VASL writes it.
    pub fn metadata_xml(&self) -> String {
        let mut xml = format!(
            "<?xml version=\"1.0\"?>\n<boardMetadata name=\"{}\" version=\"{}\" versionDate=\"\" author=\"asl tests\" boardImageFileName=\"bd{}.png\" hasHills=\"{}\" width=\"{}\" height=\"{}\">\n<buildingTypes>\n",
            self.name,
            self.version,
            self.name,
            if self.elevation.iter().any(|e| *e != 0) { "TRUE" } else { "FALSE" },
            self.columns,
            self.rows
        );
        for (hex, kind) in &self.building_types {
            xml.push_str(&format!(
                "<buildingType hexName=\"{hex}\" buildingTypeName=\"{kind}\" />\n"
            ));
        }
        xml.push_str("</buildingTypes>\n</boardMetadata>\n");
        xml
    }

    /// `LOSData`: the gzip stream of Java block data.
    pub fn los_data(&self) -> Vec<u8> {
        let mut payload = Vec::with_capacity(16 + self.terrain.len() * 2 + 400);
        for n in [
            i32::from(self.columns),
            i32::from(self.rows),
            self.width as i32,
            self.height as i32,
        ] {
            payload.extend(n.to_be_bytes());
        }
        for (e, t) in self.elevation.iter().zip(&self.terrain) {
            payload.push(*e as u8);
            payload.push(*t);
        }
        payload.extend(std::iter::repeat_n(
            0u8,
            super::archive::hexes_in(self.columns, self.rows),
        ));
        // Java's ObjectOutputStream cuts block data into records of at most 1024 bytes.
        let mut stream = vec![0xAC, 0xED, 0x00, 0x05];
        for chunk in payload.chunks(1024) {
            if chunk.len() <= 255 {
                stream.push(0x77);
                stream.push(chunk.len() as u8);
            } else {
                stream.push(0x7A);
                stream.extend((chunk.len() as i32).to_be_bytes());
            }
            stream.extend_from_slice(chunk);
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&stream).expect("writing to memory");
        gz.finish().expect("writing to memory")
    }

    /// An archive of the given metadata and `LOSData` (tests break one or the other).
    pub fn archive_with(&self, metadata: &str, los_data: &[u8]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in [
            ("BoardMetadata.xml", metadata.as_bytes()),
            ("LOSData", los_data),
            (
                &format!("bd{}.png", self.name)[..],
                self.image.as_deref().unwrap_or(&TINY_PNG[..]),
            ),
        ] {
            zip.start_file(name, options).expect("zip in memory");
            zip.write_all(bytes).expect("zip in memory");
        }
        zip.finish().expect("zip in memory").into_inner()
    }
}

/// The radius of the dot [`SynthBoard::painted_png`] puts on each hex's centre, in pixels.
pub const CENTRE_DOT_RADIUS: i64 = 4;

/// A colour per terrain the tests paint with; anything else grey.
fn terrain_colour(code: TerrainCode) -> [u8; 3] {
    match code {
        code::OPEN_GROUND => [233, 228, 201],
        code::GRAIN => [234, 217, 124],
        code::BRUSH => [184, 201, 138],
        code::STONE_BUILDING | code::STONE_BUILDING_2 => [158, 152, 144],
        code::WOODEN_BUILDING => [180, 131, 79],
        code::WOODS => [111, 154, 79],
        code::ORCHARD => [169, 201, 129],
        code::DIRT_ROAD => [205, 187, 143],
        code::WALL => [110, 90, 68],
        code::HEDGE => [47, 107, 47],
        code::SWAMP => [156, 195, 180],
        _ => [200, 200, 200],
    }
}

/// An 8-bit RGB PNG of `rgb` (rows top to bottom), written by hand: a signature, `IHDR`, one
/// zlib-compressed `IDAT` and `IEND`, each chunk with its CRC (PNG spec, sections 5 and 11).
fn png(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        out.extend(kind);
        out.extend(data);
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend(crc.sum().to_be_bytes());
    }
    let row = width as usize * 3;
    let mut raw = Vec::with_capacity((row + 1) * height as usize);
    for line in rgb.chunks(row) {
        raw.push(0); // filter: none
        raw.extend_from_slice(line);
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&raw).expect("writing to memory");
    let idat = z.finish().expect("writing to memory");
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, no filter method, no interlace
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A 1 × 1 transparent PNG: the archive's image, which the engine only serves.
const TINY_PNG: [u8; 67] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vasl::archive::{self, ArchiveError};

    #[test]
    fn a_synthesised_archive_reads_back_as_painted() {
        let mut board = SynthBoard::geomorphic("01");
        let woods: Hex = "E5".parse().unwrap();
        board.hex(woods, code::WOODS, 20.0);
        board.raise("K4".parse().unwrap(), 2, 30.0);
        board
            .building_types
            .push(("E4".into(), "Stone Building, 2 Level".into()));
        let read = archive::read(&board.archive()).unwrap();
        assert_eq!(read.metadata.name, "01");
        assert!(read.metadata.has_hills);
        assert_eq!(read.metadata.building_types.len(), 1);
        assert_eq!((read.grid.width, read.grid.height), (1800, 645));
        let (x, y) = SynthBoard::centre(woods);
        assert_eq!(read.grid.at(x as i64, y as i64), Some((0, code::WOODS)));
        let (x, y) = SynthBoard::centre("K4".parse().unwrap());
        assert_eq!(
            read.grid.at(x as i64, y as i64),
            Some((2, code::OPEN_GROUND))
        );
        assert_eq!(read.grid.terrain, board.terrain);
        assert_eq!(read.grid.elevation, board.elevation);
    }

    #[test]
    fn the_image_is_the_one_file_served_and_a_painted_one_is_the_boards_size() {
        let mut board = SynthBoard::sized("03", 5, 2, 230, 130);
        let tiny = archive::image(&board.archive()).unwrap();
        assert_eq!(
            (tiny.content_type, tiny.bytes.as_slice()),
            ("image/png", &TINY_PNG[..])
        );
        board.image = Some(board.painted_png());
        let painted = archive::image(&board.archive()).unwrap();
        assert_eq!(&painted.bytes[12..16], b"IHDR");
        assert_eq!(&painted.bytes[16..24], &[0, 0, 0, 230, 0, 0, 0, 130]);
        // The metadata naming another file of the archive gets no bytes out of it.
        let sneaky = board.metadata_xml().replace("bd03.png", "LOSData");
        let e = archive::image(&board.archive_with(&sneaky, &board.los_data())).unwrap_err();
        assert!(e.to_string().contains("not a GIF, PNG or JPEG"), "{e}");
        let none = board.metadata_xml().replace("bd03.png", "bd99.gif");
        let e = archive::image(&board.archive_with(&none, &board.los_data())).unwrap_err();
        assert!(e.to_string().contains("no `bd99.gif`"), "{e}");
    }

    #[test]
    fn centres_follow_vasls_grid() {
        // A1 is on the west edge half a hex down; B0 is the half hex on the north edge.
        assert_eq!(SynthBoard::centre("A1".parse().unwrap()), (0.0, 32.25));
        assert_eq!(SynthBoard::centre("B0".parse().unwrap()), (56.25, 0.0));
        assert_eq!(
            SynthBoard::centre("GG10".parse().unwrap()),
            (1800.0, 612.75)
        );
    }

    #[test]
    fn damaged_archives_are_named_not_misread() {
        let board = SynthBoard::sized("02", 3, 2, 120, 130);
        let good = board.archive();
        assert!(archive::read(&good).is_ok());
        // Truncated zip.
        assert!(matches!(
            archive::read(&good[..good.len() / 2]),
            Err(ArchiveError::NotZip(_))
        ));
        // LOSData cut short inside the gzip stream.
        let data = board.los_data();
        let cut = board.archive_with(&board.metadata_xml(), &data[..data.len() - 40]);
        let e = archive::read(&cut).unwrap_err();
        assert!(
            matches!(
                e,
                ArchiveError::Unpack { .. } | ArchiveError::Truncated { .. }
            ),
            "{e}"
        );
        // Metadata that disagrees with the grid.
        let lying = board.metadata_xml().replace("width=\"3\"", "width=\"4\"");
        let e = archive::read(&board.archive_with(&lying, &data)).unwrap_err();
        assert!(e.to_string().contains("3×2"), "{e}");
        // Not gzip at all.
        let e = archive::read(&board.archive_with(&board.metadata_xml(), b"plain")).unwrap_err();
        assert!(e.to_string().contains("gzip"), "{e}");
        // Not a zip.
        assert!(matches!(
            archive::read(b"GIF89a"),
            Err(ArchiveError::NotZip(_))
        ));
    }
}
