//! The operator's VASL board archives (`--boards DIR`, `ASL_BOARDS`): read from disk here, on
//! first use, and shared by every game on a board (`protocol::board::vasl::library`).
//!
//! Anyone may make the server read a board file (`GET /boards/<n>/image` needs no token), so
//! what a file of the directory is decides what a request costs, and the operator's directory
//! is not trusted to hold only archives (issue 50):
//! - Only regular files are read. A named pipe (or a device) in the directory would block the
//!   thread opening it until something wrote to it; its type is checked before it is opened,
//!   and it is opened non-blocking and checked again, so one swapped in between cannot block.
//! - A file's size is checked before it is read, and it is read no further than its limit
//!   ([`ARCHIVE_BYTES_MAX`] for an archive): one larger costs a `stat`, never its bytes.
//! - What was refused is remembered with the file's identity, size and times
//!   ([`BoardFiles`]): asking again costs a `stat` until the operator changes the file.
//! - Images are read off the async runtime, a few at a time ([`BOARD_READS_CONCURRENT_MAX`]),
//!   each within [`BOARD_READ_WAIT_MAX`]: a slow disk makes image requests wait, never the
//!   games, `/healthz` or new connections.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use protocol::board::vasl::archive::ARCHIVE_BYTES_MAX;
use protocol::board::vasl::codes::{TerrainTable, SHARED_METADATA_BYTES_MAX};
use protocol::board::vasl::library::{
    self, BoardError, Boards, BOARD_FILE_BYTES_MAX, SHARED_METADATA,
};

/// The boards in `dir`, with VASL's terrain codes from `module` (`ASL_VASL_MODULE`) when given,
/// else from the directory's `SharedBoardMetadata.xml`, else the engine's own.
pub fn open(dir: &Path, module: Option<&Path>) -> Result<Arc<Boards>, OpenError> {
    open_with(dir, module, Arc::new(BoardFiles::default()))
}

fn open_with(
    dir: &Path,
    module: Option<&Path>,
    files: Arc<BoardFiles>,
) -> Result<Arc<Boards>, OpenError> {
    if !dir.is_dir() {
        return Err(OpenError::NotDirectory(dir.to_path_buf()));
    }
    let table = match module {
        // A VASL module is ~100 MB: the one file read with the larger bound.
        Some(path) => {
            let bytes = files
                .read(path, BOARD_FILE_BYTES_MAX)
                .map_err(OpenError::File)?;
            TerrainTable::from_module(&bytes).map_err(|error| OpenError::Codes {
                file: format!("{}:", path.display()),
                error,
            })?
        }
        None => {
            let path = dir.join(SHARED_METADATA);
            match files.read(&path, SHARED_METADATA_BYTES_MAX as u64) {
                Ok(bytes) => TerrainTable::parse(&bytes).map_err(|error| OpenError::Codes {
                    file: path.display().to_string(),
                    error,
                })?,
                Err(FileError::Missing) => TerrainTable::builtin(),
                Err(refused) => return Err(OpenError::File(refused)),
            }
        }
    };
    let base = dir.to_path_buf();
    let place = dir.display().to_string();
    let boards = Boards::new(
        place.clone(),
        table,
        Box::new(move |name| {
            let tried = library::archive_names(name);
            for file in &tried {
                match files.read(&base.join(file), ARCHIVE_BYTES_MAX as u64) {
                    Ok(bytes) => return Ok(bytes),
                    Err(FileError::Missing) => continue,
                    Err(FileError::Refused(why)) => {
                        return Err(BoardError::Refused {
                            board: name.to_string(),
                            why,
                        })
                    }
                }
            }
            Err(BoardError::NotIn {
                board: name.to_string(),
                place: place.clone(),
                tried: tried.join(", "),
            })
        }),
    );
    // A stored game replayed after a restart is handed its boards from here when it is
    // loaded (`games::registry`).
    Ok(Arc::new(boards))
}

/// Why the boards directory cannot be served from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("{}: not a directory of VASL board archives", .0.display())]
    NotDirectory(PathBuf),
    #[error("{}", String::from(.0.clone()))]
    File(FileError),
    /// VASL's terrain codes, from the module or the directory's own file, cannot be read.
    #[error("{file} {error}")]
    Codes {
        file: String,
        error: protocol::board::vasl::codes::CodesError,
    },
}

/// Why a file of the boards directory was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// There is no such file (the next name VASL might use is tried).
    Missing,
    /// There is one, and it is not read: what it is and why, naming the file (for the
    /// operator's log and the creator of a game; the image page says less).
    Refused(String),
}

impl From<FileError> for String {
    fn from(e: FileError) -> String {
        match e {
            FileError::Missing => "no such file".into(),
            FileError::Refused(why) => why,
        }
    }
}

/// A file's identity, size and times: what a remembered refusal holds until it changes. The
/// change time is in it because replacing a file's bytes in place may keep its size and have
/// its modification time set back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// Reads the files of a boards directory, remembering those it refused.
///
/// The memory is bounded by the names asked for: a board is 1 to 999 and each has two names
/// (`bd01`, `bd1`), plus the terrain table's file: a few thousand paths at most.
#[derive(Debug, Default)]
pub struct BoardFiles {
    refused: Mutex<HashMap<PathBuf, (Stamp, String)>>,
    /// Bytes read from files so far: a refusal is tested to cost none.
    bytes_read: AtomicU64,
}

impl BoardFiles {
    /// The bytes of `path`, a regular file of at most `limit` bytes; anything else is refused
    /// without reading it, and a refused file is refused again from memory until it changes.
    pub fn read(&self, path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FileError::Missing),
            Err(e) => return Err(FileError::Refused(format!("{}: {e}", path.display()))),
        };
        if let Some((stamp, why)) = self.refused.lock().expect("refused lock").get(path) {
            if *stamp == Stamp::of(&meta) {
                return Err(FileError::Refused(why.clone()));
            }
        }
        self.check(path, &meta, limit)?;
        // Non-blocking: a named pipe put in the file's place since the check opens at once
        // (a blocking open waits for a writer), and is refused by the check on what was opened.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(|e| FileError::Refused(format!("{}: {e}", path.display())))?;
        let opened = file
            .metadata()
            .map_err(|e| FileError::Refused(format!("{}: {e}", path.display())))?;
        self.check(path, &opened, limit)?;
        // Bounded again as read: a file growing meanwhile is read one byte past its limit.
        let mut bytes = Vec::with_capacity(opened.len() as usize);
        let read = (&file).take(limit + 1).read_to_end(&mut bytes);
        self.bytes_read
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        read.map_err(|e| FileError::Refused(format!("{}: {e}", path.display())))?;
        if bytes.len() as u64 > limit {
            let now = file.metadata().unwrap_or(opened);
            return Err(self.refuse(
                path,
                &now,
                format!(
                    "{} grew past {limit} bytes as it was read, the most a file of this kind may be: not read",
                    path.display()
                ),
            ));
        }
        self.refused.lock().expect("refused lock").remove(path);
        Ok(bytes)
    }

    /// Refuses (and remembers) a file that is not a regular file of at most `limit` bytes.
    fn check(&self, path: &Path, meta: &std::fs::Metadata, limit: u64) -> Result<(), FileError> {
        let kind = meta.file_type();
        if !kind.is_file() {
            use std::os::unix::fs::FileTypeExt;
            let what = if kind.is_fifo() {
                "a named pipe"
            } else if kind.is_dir() {
                "a directory"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else {
                "not a regular file"
            };
            return Err(self.refuse(
                path,
                meta,
                format!(
                    "{} is {what}: board files are read from regular files only",
                    path.display()
                ),
            ));
        }
        if meta.len() > limit {
            return Err(self.refuse(
                path,
                meta,
                format!(
                    "{} is {} bytes, more than the {limit} a file of this kind may be: not read",
                    path.display(),
                    meta.len()
                ),
            ));
        }
        Ok(())
    }

    fn refuse(&self, path: &Path, meta: &std::fs::Metadata, why: String) -> FileError {
        // Said once per change of the file: asking again is answered from memory, unlogged.
        tracing::warn!(refusal = %why, "a file of the boards directory is not read");
        self.refused
            .lock()
            .expect("refused lock")
            .insert(path.to_path_buf(), (Stamp::of(meta), why.clone()));
        FileError::Refused(why)
    }

    /// Bytes read from files so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// How many files are refused from memory until they change.
    pub fn refusals_remembered(&self) -> usize {
        self.refused.lock().expect("refused lock").len()
    }
}

/// How many board images are read from their archives at once. Each read holds its archive
/// (up to [`ARCHIVE_BYTES_MAX`]) and its image in memory, and any anonymous request may start
/// one, so this bounds what reading images may hold, however many ask at once.
pub const BOARD_READS_CONCURRENT_MAX: usize = 2;

/// How long an image request waits for its turn and its read before it is told the server is
/// busy. A board archive on a local disk is read in milliseconds; past this the disk is in
/// trouble, and the page draws the terrain without the artwork.
pub const BOARD_READ_WAIT_MAX: Duration = Duration::from_secs(10);

/// Board images kept in memory once served, at most this many bytes in all: a VASL geomorphic
/// board's GIF is 0.2–1 MB, so this holds every board of several campaigns. Past it an image is
/// read from its archive for each request: still served, only slower, and memory stays bounded
/// whatever boards the directory holds.
pub const BOARD_IMAGES_CACHED_BYTES_MAX: usize = 64 << 20;

/// How long a browser may keep an image asked for by its archive's digest (`?v=`): a year, the
/// longest HTTP caches honour. The same digest is the same bytes forever, so it never goes stale.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// One board's image as served: the bytes, their type and the archive's digest (hex), which is
/// the image's ETag and the `v` a page asks for it by.
#[derive(Clone, Debug)]
pub struct ServedImage {
    pub bytes: axum::body::Bytes,
    pub content_type: &'static str,
    pub digest: String,
}

/// The images served so far, by board number, read once from the operator's archives.
#[derive(Debug)]
pub struct BoardImages {
    cached: std::sync::Mutex<std::collections::BTreeMap<u16, ServedImage>>,
    /// [`BOARD_IMAGES_CACHED_BYTES_MAX`] (smaller in tests).
    bytes_max: usize,
    /// Turns to read an archive: [`BOARD_READS_CONCURRENT_MAX`].
    reads: Arc<tokio::sync::Semaphore>,
    /// [`BOARD_READ_WAIT_MAX`] (shorter in tests).
    wait_max: Duration,
}

impl Default for BoardImages {
    fn default() -> BoardImages {
        BoardImages {
            cached: Default::default(),
            bytes_max: BOARD_IMAGES_CACHED_BYTES_MAX,
            reads: Arc::new(tokio::sync::Semaphore::new(BOARD_READS_CONCURRENT_MAX)),
            wait_max: BOARD_READ_WAIT_MAX,
        }
    }
}

/// Why an image is not served, in the words the public is told (never the operator's paths).
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotServed {
    /// A 404: no archive for the board, or one without an image to show.
    Refused(String),
    /// A 503: the archive could not be read in time; asking later may do.
    Busy(String),
}

impl BoardImages {
    /// Board `number`'s image: from memory, or read from its archive off the async runtime,
    /// one of [`BOARD_READS_CONCURRENT_MAX`] at a time, within the wait (and kept, room
    /// allowing).
    async fn get(&self, boards: &Arc<Boards>, number: u16) -> Result<ServedImage, NotServed> {
        if let Some(image) = self.cached.lock().expect("board images lock").get(&number) {
            return Ok(image.clone());
        }
        let busy = || {
            tracing::warn!(
                board = number,
                wait = ?self.wait_max,
                "board image not read in time"
            );
            NotServed::Busy(format!(
                "Board {number}'s image could not be read in time; ask again later.\n"
            ))
        };
        let reads = self.reads.clone();
        let boards = boards.clone();
        let read = async move {
            let turn = reads.acquire_owned().await.expect("never closed");
            // The turn goes with the read: one that outlives the wait still holds it, so
            // reads stuck on a disk never number more than the limit.
            tokio::task::spawn_blocking(move || {
                let image = boards.image(&number.to_string());
                drop(turn);
                image
            })
            .await
        };
        let image = match tokio::time::timeout(self.wait_max, read).await {
            Ok(Ok(image)) => image,
            Ok(Err(_)) | Err(_) => return Err(busy()),
        };
        // Already cached by a request that read it meanwhile: that copy is the one kept.
        if let Some(image) = self.cached.lock().expect("board images lock").get(&number) {
            return Ok(image.clone());
        }
        use protocol::board::vasl::library::ImageError;
        let (image, digest) = image.map_err(|e| match e {
            ImageError::Missing(detail) => {
                tracing::debug!(board = number, %detail, "board image asked for, none read");
                NotServed::Refused(format!(
                    "This server has no board {number} it can show: no readable VASL board \
                     archive for it.\n"
                ))
            }
            ImageError::Archive(e) => {
                tracing::warn!(board = number, error = %e, "board image unreadable");
                NotServed::Refused(format!(
                    "Board {number}'s archive holds no image to show: {e}.\n"
                ))
            }
        })?;
        let served = ServedImage {
            bytes: image.bytes.into(),
            content_type: image.content_type,
            digest: data_encoding::HEXLOWER.encode(&digest),
        };
        let mut cached = self.cached.lock().expect("board images lock");
        let held: usize = cached.values().map(|i| i.bytes.len()).sum();
        if held + served.bytes.len() <= self.bytes_max {
            cached.insert(number, served.clone());
        }
        Ok(served)
    }
}

/// `GET /boards/<number>/image[?v=<digest>]`: board `number`'s own image from the operator's
/// archive, for the page to draw under the hexes. Anyone may ask (the artwork is the player's
/// own board, not a fact of any game); only the image the archive's metadata names is ever read
/// out. Asked for with the digest the game's scenario names (`v`), it may be cached for good;
/// an archive that is not that one any more is a 404, so a page never lays other artwork under
/// a game's hexes. Every failure is a 4xx with a sentence, and the page draws the terrain itself.
pub async fn image_response(
    boards: Option<&Arc<Boards>>,
    images: &BoardImages,
    number: &str,
    query: Option<&str>,
    if_none_match: Option<&axum::http::HeaderValue>,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let text = |status: StatusCode, body: String| {
        (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            body,
        )
            .into_response()
    };
    let Some(number) = board_number(number) else {
        return text(
            StatusCode::BAD_REQUEST,
            format!(
                "`{number}` is not a board: boards are named by VASL's number, 1 to 999 \
                 (`/boards/12/image`).\n"
            ),
        );
    };
    let Some(boards) = boards else {
        return text(
            StatusCode::NOT_FOUND,
            "This server has no board archives (its operator starts it with `--boards DIR`).\n"
                .into(),
        );
    };
    let image = match images.get(boards, number).await {
        Ok(image) => image,
        Err(NotServed::Refused(why)) => return text(StatusCode::NOT_FOUND, why),
        Err(NotServed::Busy(why)) => {
            let mut response = text(StatusCode::SERVICE_UNAVAILABLE, why);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
            return response;
        }
    };
    let wanted = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("v="));
    if let Some(wanted) = wanted {
        if !wanted.eq_ignore_ascii_case(&image.digest) {
            return text(
                StatusCode::NOT_FOUND,
                format!(
                    "This server's board {number} is another archive than the one asked for \
                     (digest {}…, not {}).\n",
                    &image.digest[..12],
                    wanted.chars().take(12).collect::<String>()
                ),
            );
        }
    }
    let etag = format!("\"{}\"", image.digest);
    let cache = if wanted.is_some() {
        IMMUTABLE
    } else {
        "no-cache"
    };
    let fresh = if_none_match
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let headers = [
        (header::ETAG, etag),
        (header::CACHE_CONTROL, cache.to_string()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    (
        headers,
        [(header::CONTENT_TYPE, image.content_type)],
        image.bytes,
    )
        .into_response()
}

/// A board number as a URL writes it: 1 to 999 in plain decimal, nothing else (no sign, no
/// leading zero, no `r`): one board, one address, so caches hold one copy of it.
fn board_number(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 3 || text.starts_with('0') {
        return None;
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{header, HeaderValue, StatusCode};
    use protocol::board::vasl::synth::SynthBoard;

    async fn body(response: axum::response::Response) -> Vec<u8> {
        axum::body::to_bytes(response.into_body(), 1 << 24)
            .await
            .unwrap()
            .to_vec()
    }

    fn directory() -> (tempfile::TempDir, Arc<Boards>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let mut board = SynthBoard::sized("01", 5, 2, 230, 130);
        board.image = Some(board.painted_png());
        let archive = board.archive();
        std::fs::write(dir.path().join("bd01"), &archive).unwrap();
        let boards = open(dir.path(), None).unwrap();
        (dir, boards, archive)
    }

    #[tokio::test]
    async fn a_boards_image_is_served_with_its_digest_as_etag_and_cached_for_good() {
        let (dir, boards, archive) = directory();
        let digest = data_encoding::HEXLOWER.encode(blake3::hash(&archive).as_bytes());
        let images = BoardImages::default();
        let query = format!("v={digest}");
        let response = image_response(Some(&boards), &images, "1", Some(&query), None).await;
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        assert_eq!(headers[header::CONTENT_TYPE], "image/png");
        assert_eq!(headers[header::ETAG], format!("\"{digest}\"").as_str());
        assert_eq!(headers[header::CACHE_CONTROL], IMMUTABLE);
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let png = body(response).await;
        assert_eq!(&png[16..24], &[0, 0, 0, 230, 0, 0, 0, 130]);

        // Read once: served from memory with the archive gone.
        std::fs::remove_file(dir.path().join("bd01")).unwrap();
        let again = image_response(Some(&boards), &images, "1", None, None).await;
        assert_eq!(again.status(), StatusCode::OK);
        assert_eq!(again.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(body(again).await, png);

        // A browser holding it is told so; another archive's digest is not this image.
        let etag = HeaderValue::from_str(&format!("\"{digest}\"")).unwrap();
        let not_modified = image_response(Some(&boards), &images, "1", None, Some(&etag)).await;
        assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);
        assert!(body(not_modified).await.is_empty());
        let other = image_response(Some(&boards), &images, "1", Some("v=00ff"), None).await;
        assert_eq!(other.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(other).await)
            .unwrap()
            .contains("another archive"));
    }

    #[tokio::test]
    async fn images_are_kept_up_to_the_limit_and_served_from_the_archive_past_it() {
        let (dir, boards, _) = directory();
        let mut two = SynthBoard::sized("02", 5, 2, 230, 130);
        two.image = Some(two.painted_png());
        std::fs::write(dir.path().join("bd02"), two.archive()).unwrap();
        let size = |n: u16| boards.image(&n.to_string()).unwrap().0.bytes.len();
        // Room for board 1's image exactly: it is kept; board 2's is one past, so it is not.
        let images = BoardImages {
            bytes_max: size(1),
            ..BoardImages::default()
        };
        images.get(&boards, 1).await.unwrap();
        images.get(&boards, 2).await.unwrap();
        std::fs::remove_file(dir.path().join("bd01")).unwrap();
        std::fs::remove_file(dir.path().join("bd02")).unwrap();
        assert!(images.get(&boards, 1).await.is_ok(), "kept");
        assert!(
            images.get(&boards, 2).await.is_err(),
            "not kept: read again, and gone"
        );
    }

    fn mkfifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `name` is a NUL-terminated path that lives across the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    }

    fn refusal(result: Result<Vec<u8>, FileError>) -> String {
        match result {
            Err(FileError::Refused(why)) => why,
            other => panic!("expected a refusal, got {:?}", other.map(|b| b.len())),
        }
    }

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let files = BoardFiles::default();
        let pipe = dir.path().join("bd09");
        mkfifo(&pipe);
        // A blocking open would wait here for a writer that never comes.
        let why = refusal(files.read(&pipe, ARCHIVE_BYTES_MAX as u64));
        assert!(why.contains("bd09 is a named pipe"), "{why}");
        assert!(why.contains("regular files only"), "{why}");
        std::fs::create_dir(dir.path().join("bd10")).unwrap();
        let why = refusal(files.read(&dir.path().join("bd10"), 1024));
        assert!(why.contains("bd10 is a directory"), "{why}");
        let why = refusal(files.read(Path::new("/dev/zero"), 1024));
        assert!(why.contains("/dev/zero is a device"), "{why}");
        assert_eq!(files.bytes_read(), 0);
        assert_eq!(
            files.read(&dir.path().join("bd11"), 1024),
            Err(FileError::Missing)
        );

        // A link to an archive is the operator's to make, and is followed to it.
        std::fs::write(dir.path().join("elsewhere"), b"PK").unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("bd12")).unwrap();
        assert_eq!(files.read(&dir.path().join("bd12"), 1024).unwrap(), b"PK");
        // A link to the pipe is the pipe.
        std::os::unix::fs::symlink(&pipe, dir.path().join("bd13")).unwrap();
        let why = refusal(files.read(&dir.path().join("bd13"), 1024));
        assert!(why.contains("named pipe"), "{why}");

        // Through the boards, as a game's creation or LOS reads them.
        let boards = open_with(dir.path(), None, Arc::new(BoardFiles::default())).unwrap();
        let why = boards.board("9").unwrap_err().to_string();
        assert!(
            why.contains("board 9:") && why.contains("named pipe"),
            "{why}"
        );
    }

    #[test]
    fn a_file_past_its_limit_is_refused_unread_and_remembered_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bd07");
        let files = BoardFiles::default();
        // At the limit and one past it.
        std::fs::write(&path, [7u8; 1024]).unwrap();
        assert_eq!(files.read(&path, 1024).unwrap().len(), 1024);
        std::fs::write(&path, [7u8; 1025]).unwrap();
        let why = refusal(files.read(&path, 1024));
        assert!(why.contains("is 1025 bytes, more than the 1024"), "{why}");
        assert_eq!(
            files.bytes_read(),
            1024,
            "the file past its limit is not read"
        );

        // The archive limit, on a sparse file: refused by its size, and again from memory.
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(ARCHIVE_BYTES_MAX as u64 + 1).unwrap();
        let first = refusal(files.read(&path, ARCHIVE_BYTES_MAX as u64));
        assert!(
            first.contains(&format!("more than the {ARCHIVE_BYTES_MAX}")),
            "{first}"
        );
        assert_eq!(files.refusals_remembered(), 1);
        let again = refusal(files.read(&path, ARCHIVE_BYTES_MAX as u64));
        assert_eq!(again, first);
        assert_eq!(files.bytes_read(), 1024);

        // Changed, it is looked at afresh: read, and forgotten as refused.
        big.set_len(10).unwrap();
        assert_eq!(
            files.read(&path, ARCHIVE_BYTES_MAX as u64).unwrap().len(),
            10
        );
        assert_eq!(files.refusals_remembered(), 0);

        // Through the boards: the refusal names the file and the limit.
        big.set_len(80 << 20).unwrap();
        let files = Arc::new(BoardFiles::default());
        let boards = open_with(dir.path(), None, files.clone()).unwrap();
        let why = boards.board("7").unwrap_err().to_string();
        assert!(why.contains("bd07 is 83886080 bytes"), "{why}");
        assert!(boards.image("7").is_err());
        assert_eq!(files.bytes_read(), 0);
    }

    #[tokio::test]
    async fn images_are_read_a_few_at_a_time_and_a_request_waits_no_longer_than_its_bound() {
        let (_dir, boards, _) = directory();
        let images = BoardImages {
            wait_max: Duration::from_millis(50),
            ..BoardImages::default()
        };
        // Every turn to read taken (reads stuck on a disk): the request is told to come back.
        let taken = images
            .reads
            .clone()
            .acquire_many_owned(BOARD_READS_CONCURRENT_MAX as u32)
            .await
            .unwrap();
        assert_eq!(images.reads.available_permits(), 0);
        let busy = image_response(Some(&boards), &images, "1", None, None).await;
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "5");
        assert!(String::from_utf8(body(busy).await)
            .unwrap()
            .contains("could not be read in time"));
        drop(taken);
        let served = image_response(Some(&boards), &images, "1", None, None).await;
        assert_eq!(served.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_board_the_server_lacks_or_a_bad_number_is_said_in_words() {
        let (dir, boards, _) = directory();
        let images = BoardImages::default();
        let missing = image_response(Some(&boards), &images, "2", None, None).await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let text = String::from_utf8(body(missing).await).unwrap();
        assert!(text.contains("no board 2"), "{text}");
        let place = dir.path().display().to_string();
        assert!(
            !text.contains(&place),
            "the operator's directory stays private: {text}"
        );

        let none = image_response(None, &images, "1", None, None).await;
        assert_eq!(none.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(none).await)
            .unwrap()
            .contains("--boards"));

        for bad in ["0", "01", "1000", "1r", "-1", "", "x", "1%2F..", "１"] {
            let response = image_response(Some(&boards), &images, bad, None, None).await;
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        assert_eq!(board_number("999"), Some(999));

        // An archive whose image is not an image is refused by name, never sent as one.
        let board = SynthBoard::sized("03", 5, 2, 230, 130);
        let sneaky = board.metadata_xml().replace("bd03.png", "LOSData");
        std::fs::write(
            dir.path().join("bd03"),
            board.archive_with(&sneaky, &board.los_data()),
        )
        .unwrap();
        let response = image_response(Some(&boards), &images, "3", None, None).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(response).await)
            .unwrap()
            .contains("not a GIF, PNG or JPEG"));
    }
}
