//! Where a scenario's boards come from. The server and the CLI hand the core a [`Boards`]: the
//! terrain table and a way to fetch an archive's bytes by VASL's board name (from the directory
//! `--boards` or `ASL_BOARDS` names). Each archive is read once and shared, by every scenario
//! on that board, through that one [`Boards`] value: the core keeps no register of its own.
//! A stored scenario names each board's archive by digest, not its bytes, so a host loading a
//! game hands its scenario the boards' grids ([`Boards::attach`]) before replaying it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use super::archive::{self, BoardArchive};
use super::codes::TerrainTable;
use super::map::{BoardMap, Placed};
use crate::model::MapSpec;

/// Fetches the bytes of the archive holding VASL's board `name` (`"1"` → `bd01`); the IO is the
/// caller's. An error says what is missing ([`BoardError::NotIn`]) or why a file there was not
/// read ([`BoardError::Refused`]), in words for the player.
pub type Fetch = dyn Fn(&str) -> Result<Vec<u8>, BoardError> + Send + Sync;

/// Why a board, a boards directory or a map of boards cannot be had: each names the board and
/// says what is wrong, for the player.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    /// No archive for the board where the host looked.
    #[error("board {board} is not in {place} (looked for {tried})")]
    NotIn {
        board: String,
        place: String,
        tried: String,
    },
    /// A file for the board is there, and the host would not read it (what it is, and why).
    #[error("board {board}: {why}")]
    Refused { board: String, why: String },
    #[error("board {board}'s archive {error}")]
    Archive {
        board: String,
        error: archive::ArchiveError,
    },
    #[error("board {board} in {place} is version {found}, not the archive the game was created with (version {version}): LOS on it would not be the game's")]
    OtherVersion {
        board: u16,
        place: String,
        found: String,
        version: String,
    },
    #[error("board {0} has no archive digest")]
    NoDigest(u16),
    #[error("{0}")]
    Map(#[from] super::map::MapError),
    /// A game on real boards whose host handed in no boards.
    #[error("board {board} (version {version}) is not loaded here: LOS on real boards needs the board archives the game was created with (--boards DIR)")]
    NotLoaded { board: u16, version: String },
    #[error("the map names no board")]
    NoBoard,
    /// The terrain codes of a boards directory or of a VASL module could not be read.
    #[error("{file} {error}")]
    Codes {
        file: String,
        error: super::codes::CodesError,
    },
}

/// Why a file of a boards directory was not read (by [`read_capped`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    #[error("{name}: {why}")]
    Unreadable { name: String, why: String },
    #[error("{name}: larger than {BOARD_FILE_BYTES_MAX} bytes")]
    TooLarge { name: String },
}

/// Why a board name is not one: the text as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a board: write its number as VASL names it (`1` for bd01), `r` after it for a board turned 180° (`2r`)")]
pub struct BoardNameError(pub String);

/// Reads a file of a boards directory by name: `None` when there is none.
pub type ReadFile = dyn Fn(&str) -> Option<Vec<u8>> + Send + Sync;

/// The file of a VASL module (and of a boards directory) that defines the terrain codes.
pub const SHARED_METADATA: &str = "SharedBoardMetadata.xml";

/// Largest file read from a boards directory (a VASL module is ~100 MB; archives ~2 MB), by
/// the server and the CLI alike.
pub const BOARD_FILE_BYTES_MAX: u64 = 256 << 20;

/// Every byte `reader` (the file `name`, opened by the caller: this crate opens nothing)
/// holds, refused past [`BOARD_FILE_BYTES_MAX`] without reading further.
pub fn read_capped(reader: impl std::io::Read, name: &str) -> Result<Vec<u8>, FileError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader
        .take(BOARD_FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::Unreadable {
            name: name.to_string(),
            why: e.to_string(),
        })?;
    if bytes.len() as u64 > BOARD_FILE_BYTES_MAX {
        return Err(FileError::TooLarge {
            name: name.to_string(),
        });
    }
    Ok(bytes)
}

/// Boards available to scenarios, read on first use.
pub struct Boards {
    fetch: Box<Fetch>,
    table: Arc<TerrainTable>,
    read: Mutex<BTreeMap<String, Arc<BoardArchive>>>,
    /// The maps laid out of these boards ([`Boards::map`]), kept while a game holds one.
    maps: Mutex<Vec<(MapSpec, Weak<BoardMap>)>>,
    /// Where the boards come from, for error messages (`/srv/vasl/boards`).
    pub origin: String,
}

impl std::fmt::Debug for Boards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Boards({})", self.origin)
    }
}

/// A board name as scenarios write it: VASL's name and whether it is turned 180°.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardName {
    pub name: String,
    pub number: u16,
    pub rotated: bool,
}

/// Reads `"2"` or `"2r"`. Board names are numbers, so that hex names (`2GG10`) stay readable.
pub fn board_name(text: &str) -> Result<BoardName, BoardNameError> {
    let trimmed = text.trim();
    let (name, rotated) = match trimmed.strip_suffix(['r', 'R']) {
        Some(name) => (name, true),
        None => (trimmed, false),
    };
    let number: u16 = name
        .parse()
        .ok()
        // Board 0 is VASL's `bd00`, a geomorphic board of Open Ground that published saves
        // lay out too.
        .filter(|n| (0..=999).contains(n))
        .ok_or_else(|| BoardNameError(text.to_string()))?;
    Ok(BoardName {
        name: number.to_string(),
        number,
        rotated,
    })
}

/// The archive names that may hold board `name`, in the order they are tried.
pub fn archive_names(name: &str) -> Vec<String> {
    let mut names = vec![format!("bd{name}")];
    if name.len() == 1 {
        names.insert(0, format!("bd0{name}"));
    }
    names
}

impl Boards {
    pub fn new(origin: impl Into<String>, table: TerrainTable, fetch: Box<Fetch>) -> Boards {
        Boards {
            fetch,
            table: Arc::new(table),
            read: Mutex::new(BTreeMap::new()),
            maps: Mutex::new(Vec::new()),
            origin: origin.into(),
        }
    }

    /// Boards in a directory: `read(file)` returns a file of it by name (`None` when there is
    /// none). VASL's terrain codes come from `module` when given (a VASL module or a
    /// `SharedBoardMetadata.xml`, `ASL_VASL_MODULE`), else from the directory's
    /// `SharedBoardMetadata.xml`, else from the engine's own copy.
    #[allow(clippy::type_complexity)] // one boxed reader, named where it is built
    pub fn in_directory(
        origin: String,
        read: Box<ReadFile>,
        module: Option<(String, Vec<u8>)>,
    ) -> Result<Boards, BoardError> {
        let table = match module {
            Some((name, bytes)) => {
                TerrainTable::from_module(&bytes).map_err(|error| BoardError::Codes {
                    file: format!("{name}:"),
                    error,
                })?
            }
            None => match read(SHARED_METADATA) {
                Some(bytes) => TerrainTable::parse(&bytes).map_err(|error| BoardError::Codes {
                    file: format!("{origin}/{SHARED_METADATA}"),
                    error,
                })?,
                None => TerrainTable::builtin(),
            },
        };
        let place = origin.clone();
        Ok(Boards::new(
            origin,
            table,
            Box::new(move |name| {
                let tried = archive_names(name);
                tried
                    .iter()
                    .find_map(|file| read(file))
                    .ok_or_else(|| BoardError::NotIn {
                        board: name.to_string(),
                        place: place.clone(),
                        tried: tried.join(", "),
                    })
            }),
        ))
    }

    pub fn table(&self) -> &Arc<TerrainTable> {
        &self.table
    }

    /// Board `name`, read once and kept; an error names the board and what is wrong.
    pub fn board(&self, name: &str) -> Result<Arc<BoardArchive>, BoardError> {
        if let Some(board) = self.read.lock().expect("boards lock").get(name) {
            return Ok(board.clone());
        }
        let bytes = (self.fetch)(name)?;
        let board = Arc::new(archive::read(&bytes).map_err(|error| BoardError::Archive {
            board: name.to_string(),
            error,
        })?);
        self.read
            .lock()
            .expect("boards lock")
            .insert(name.to_string(), board.clone());
        Ok(board)
    }
}

/// Why a board's image cannot be had: kept apart because a server tells the public only that
/// it lacks a board, never where it looked on its disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// No archive for the board (the fetch's own words, naming where it looked).
    Missing(BoardError),
    /// The archive was found but holds no image the page can show.
    Archive(archive::ArchiveError),
}

impl Boards {
    /// Board `name`'s image and the digest of the archive it came from (blake3, as
    /// [`BoardArchive::digest`]). The archive is fetched again and only its image kept: the
    /// grid the engine holds has no use for the artwork, so a server that never shows a page
    /// never holds an image. The caller caches what it serves.
    pub fn image(&self, name: &str) -> Result<(archive::BoardImage, [u8; 32]), ImageError> {
        let bytes = (self.fetch)(name).map_err(ImageError::Missing)?;
        let image = archive::image(&bytes).map_err(ImageError::Archive)?;
        Ok((image, *blake3::hash(&bytes).as_bytes()))
    }
}

impl Boards {
    /// Board `number`'s archive with this digest, read through these boards: an error says
    /// what is missing or different, for the player.
    pub fn find(
        &self,
        number: u16,
        version: &str,
        digest: &[u8; 32],
    ) -> Result<Arc<BoardArchive>, BoardError> {
        let board = self.board(&number.to_string())?;
        if board.digest != *digest {
            return Err(BoardError::OtherVersion {
                board: number,
                place: self.origin.clone(),
                found: board.metadata.version.clone(),
                version: version.to_string(),
            });
        }
        Ok(board)
    }

    /// The terrain grids of the real boards `spec` lays out, each board found by the digest
    /// the scenario names and laid out with these boards' terrain table; one copy per map,
    /// shared by every game on it while one holds it.
    pub fn map(&self, spec: &MapSpec) -> Result<Arc<BoardMap>, BoardError> {
        if let Some(map) = self
            .maps
            .lock()
            .expect("board maps lock")
            .iter()
            .find(|(s, _)| s == spec)
            .and_then(|(_, m)| m.upgrade())
        {
            return Ok(map);
        }
        let mut rows = Vec::new();
        for row in &spec.rows {
            let mut placed = Vec::new();
            for board in row {
                let digest: [u8; 32] = data_encoding::HEXLOWER
                    .decode(board.digest.as_bytes())
                    .ok()
                    .and_then(|d| d.try_into().ok())
                    .ok_or(BoardError::NoDigest(board.board))?;
                placed.push(Placed {
                    number: board.board,
                    rotated: board.rotated,
                    archive: self.find(board.board, &board.version, &digest)?,
                });
            }
            rows.push(placed);
        }
        let map = Arc::new(BoardMap::new(rows, self.table.clone())?);
        let mut maps = self.maps.lock().expect("board maps lock");
        maps.retain(|(_, m)| m.strong_count() > 0);
        maps.push((spec.clone(), Arc::downgrade(&map)));
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_names_are_numbers_with_an_optional_turn() {
        assert_eq!(
            board_name("2r").unwrap(),
            BoardName {
                name: "2".into(),
                number: 2,
                rotated: true
            }
        );
        assert!(!board_name("12").unwrap().rotated);
        assert_eq!(board_name("07").unwrap().name, "7");
        assert_eq!(board_name("00").unwrap().number, 0);
        assert_eq!(
            archive_names(&board_name("0r").unwrap().name),
            ["bd00", "bd0"]
        );
        for bad in ["", "r", "a1", "1rr", "-1", "1000"] {
            assert!(board_name(bad).is_err(), "{bad}");
        }
        assert_eq!(archive_names("1"), ["bd01", "bd1"]);
        assert_eq!(archive_names("12"), ["bd12"]);
    }

    #[test]
    fn a_board_is_read_once_and_a_missing_one_is_named() {
        let calls = Arc::new(Mutex::new(0));
        let counted = calls.clone();
        let boards = Boards::new(
            "test",
            TerrainTable::builtin(),
            Box::new(move |name| {
                *counted.lock().unwrap() += 1;
                Err(BoardError::NotIn {
                    board: name.to_string(),
                    place: "the test".into(),
                    tried: "nothing".into(),
                })
            }),
        );
        assert_eq!(
            boards.board("9").unwrap_err().to_string(),
            "board 9 is not in the test (looked for nothing)"
        );
        assert!(boards.board("9").is_err());
        assert_eq!(*calls.lock().unwrap(), 2, "failures are not cached");
    }
}
