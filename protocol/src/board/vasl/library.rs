//! Where a scenario's boards come from. The server and the CLI hand the core a [`Boards`]: the
//! terrain table and a way to fetch an archive's bytes by VASL's board name (from the directory
//! `--boards` or `ASL_BOARDS` names). Each archive is read once and shared, by every scenario
//! on that board, through [`Boards`] and through the process-wide register a replayed game
//! finds its boards in by digest (its stored scenario names each board's archive digest, not
//! its bytes).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::archive::{self, BoardArchive};
use super::codes::TerrainTable;

/// Fetches the bytes of the archive holding VASL's board `name` (`"1"` → `bd01`); the IO is the
/// caller's. An error says what is missing, in words for the player.
pub type Fetch = dyn Fn(&str) -> Result<Vec<u8>, String> + Send + Sync;

/// Reads a file of a boards directory by name: `None` when there is none.
pub type ReadFile = dyn Fn(&str) -> Option<Vec<u8>> + Send + Sync;

/// The file of a VASL module (and of a boards directory) that defines the terrain codes.
pub const SHARED_METADATA: &str = "SharedBoardMetadata.xml";

/// Largest file read from a boards directory (a VASL module is ~100 MB; archives ~2 MB), by
/// the server and the CLI alike.
pub const BOARD_FILE_BYTES_MAX: u64 = 256 << 20;

/// Every byte `reader` (the file `name`, opened by the caller: this crate opens nothing)
/// holds, refused past [`BOARD_FILE_BYTES_MAX`] without reading further.
pub fn read_capped(reader: impl std::io::Read, name: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader
        .take(BOARD_FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{name}: {e}"))?;
    if bytes.len() as u64 > BOARD_FILE_BYTES_MAX {
        return Err(format!("{name}: larger than {BOARD_FILE_BYTES_MAX} bytes"));
    }
    Ok(bytes)
}

/// Boards available to scenarios, read on first use.
pub struct Boards {
    fetch: Box<Fetch>,
    table: Arc<TerrainTable>,
    read: Mutex<BTreeMap<String, Arc<BoardArchive>>>,
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
pub fn board_name(text: &str) -> Result<BoardName, String> {
    let trimmed = text.trim();
    let (name, rotated) = match trimmed.strip_suffix(['r', 'R']) {
        Some(name) => (name, true),
        None => (trimmed, false),
    };
    let number: u16 = name
        .parse()
        .ok()
        .filter(|n| (1..=999).contains(n))
        .ok_or_else(|| {
            format!("`{text}` is not a board: write its number as VASL names it (`1` for bd01), `r` after it for a board turned 180° (`2r`)")
        })?;
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
    ) -> Result<Boards, String> {
        let table = match module {
            Some((name, bytes)) => {
                TerrainTable::from_module(&bytes).map_err(|e| format!("{name}: {e}"))?
            }
            None => match read(SHARED_METADATA) {
                Some(bytes) => TerrainTable::parse(&bytes)
                    .map_err(|e| format!("{origin}/{SHARED_METADATA} {e}"))?,
                None => TerrainTable::builtin(),
            },
        };
        let place = origin.clone();
        Ok(Boards::new(
            origin,
            table,
            Box::new(move |name| {
                let tried = archive_names(name);
                tried.iter().find_map(|file| read(file)).ok_or_else(|| {
                    format!(
                        "board {name} is not in {place} (looked for {})",
                        tried.join(", ")
                    )
                })
            }),
        ))
    }

    pub fn table(&self) -> &Arc<TerrainTable> {
        &self.table
    }

    /// Board `name`, read once and kept; an error names the board and what is wrong.
    pub fn board(&self, name: &str) -> Result<Arc<BoardArchive>, String> {
        if let Some(board) = self.read.lock().expect("boards lock").get(name) {
            return Ok(board.clone());
        }
        let bytes = (self.fetch)(name)?;
        let board =
            Arc::new(archive::read(&bytes).map_err(|e| format!("board {name}'s archive {e}"))?);
        let board = register(board);
        *TABLE
            .get_or_init(Default::default)
            .lock()
            .expect("table lock") = Some(self.table.clone());
        self.read
            .lock()
            .expect("boards lock")
            .insert(name.to_string(), board.clone());
        Ok(board)
    }
}

/// The terrain table this process reads boards with: that of the last [`Boards`] to read a
/// board, else the engine's own (a server or a command reads all its boards with one table).
pub fn current_table() -> Arc<TerrainTable> {
    TABLE
        .get()
        .and_then(|t| t.lock().expect("table lock").clone())
        .unwrap_or_else(|| Arc::new(TerrainTable::builtin()))
}

static TABLE: OnceLock<Mutex<Option<Arc<TerrainTable>>>> = OnceLock::new();

/// Why a board's image cannot be had: kept apart because a server tells the public only that
/// it lacks a board, never where it looked on its disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// No archive for the board (the fetch's own words, naming where it looked).
    Missing(String),
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

/// Every archive read in this process, by digest: a stored game names its boards by digest, and
/// finds the grids here when it is replayed.
fn registry() -> &'static Mutex<BTreeMap<[u8; 32], Arc<BoardArchive>>> {
    static REGISTRY: OnceLock<Mutex<BTreeMap<[u8; 32], Arc<BoardArchive>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Keeps `board` for replays; an archive with the same bytes read before is shared instead.
pub fn register(board: Arc<BoardArchive>) -> Arc<BoardArchive> {
    registry()
        .lock()
        .expect("board registry lock")
        .entry(board.digest)
        .or_insert(board)
        .clone()
}

/// The archive with this digest, if this process has read it.
pub fn registered(digest: &[u8; 32]) -> Option<Arc<BoardArchive>> {
    registry()
        .lock()
        .expect("board registry lock")
        .get(digest)
        .cloned()
}

fn installed() -> &'static Mutex<Option<Arc<Boards>>> {
    static INSTALLED: OnceLock<Mutex<Option<Arc<Boards>>>> = OnceLock::new();
    INSTALLED.get_or_init(Default::default)
}

/// Makes `boards` where this process looks for a stored game's boards it has not read yet (a
/// server restarted with `--boards`, `asl verify --boards`).
pub fn install(boards: Arc<Boards>) {
    *installed().lock().expect("installed boards lock") = Some(boards);
}

/// Board `number`'s archive with this digest: read already, or read now from the installed
/// boards. An error says what is missing or different, for the player.
pub fn find(number: u16, version: &str, digest: &[u8; 32]) -> Result<Arc<BoardArchive>, String> {
    if let Some(board) = registered(digest) {
        return Ok(board);
    }
    let boards = installed().lock().expect("installed boards lock").clone();
    let Some(boards) = boards else {
        return Err(format!(
            "board {number} (version {version}) is not loaded here: LOS on real boards needs the board archives the game was created with (--boards DIR)"
        ));
    };
    let board = boards.board(&number.to_string())?;
    if board.digest != *digest {
        return Err(format!(
            "board {number} in {} is version {}, not the archive the game was created with (version {version}): LOS on it would not be the game's",
            boards.origin, board.metadata.version
        ));
    }
    Ok(board)
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
        for bad in ["", "r", "a1", "1rr", "0", "1000"] {
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
                Err(format!("no archive for board {name}"))
            }),
        );
        assert_eq!(boards.board("9").unwrap_err(), "no archive for board 9");
        assert!(boards.board("9").is_err());
        assert_eq!(*calls.lock().unwrap(), 2, "failures are not cached");
    }
}
