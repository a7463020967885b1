//! Salvage: every game of a damaged data directory whose chain still verifies, copied into a
//! new data directory the server starts on — without a backup.
//!
//! The damaged directory is never written: its files are copied into a scratch directory beside
//! the new one, and sled is opened there (it rewrites its files while opening). Each game is
//! then read from every place its records may be:
//! - sled's trees, if sled opens (trying again without its snapshots and its `conf` if not);
//! - the store's journal (`journal.rs`), every record that passes its checksum, of any epoch:
//!   the writes since sled's last checkpoint, and older ones not yet overwritten;
//! - sled's raw files (`db`, `blobs/`) and the journal's raw bytes, scanned for envelopes
//!   (`protocol::chain::envelope_at`): sled keeps a value's bytes whole, so an envelope is found
//!   wherever a copy of it survives, even when sled cannot read the node around it.
//!
//! - the checkpoint manifest (`manifest.rs`), if it is there and whole: how far each game
//!   reached at sled's last checkpoint, so a game sled's index ends short of is named short,
//!   a game nothing else names is still named, and the raw copy of the event it names (by its
//!   hash) is vouched for and the chain followed back from it.
//!
//! Only the hash chain decides what counts: a game keeps the longest prefix that verifies from
//! its `GameCreated`, each event linked to the one before by its hash. Envelopes carry no game
//! id, so a game is named by sled's index or the journal; the raw scan only extends a game
//! past an event it already has (an event's `prev` is the hash of one game's event, so the link
//! is unambiguous) or back from one (an event's `prev` names the envelope before it). A chain
//! found only in the raw files, with neither its id nor its metadata, cannot be served: it is
//! reported as lost, by its first event's hash. A game needs its metadata (its tokens' digests,
//! its dice seeds) to be served: the newest copy that decodes and fits its log is kept, from
//! the journal, sled's trees, or sled's raw log (where an insert into the `games` tree keeps
//! the game's key beside the value).
//!
//! What it reads and writes is the damaged directory's own, and bounded (issue 50):
//! - The target is compared with the damaged directory after every link in either is resolved
//!   (the target's nearest existing ancestor, since the target may not exist yet): a target
//!   reached through a link into the damaged directory is refused as overlapping it.
//! - No file is read through a symbolic link (`O_NOFOLLOW`, and `symlink_metadata` for
//!   directories): a `journal`, `db`, `blobs/` or signing key linked to another data directory
//!   would bring its games, token digests, dice seeds or key into the copy. Each link is named
//!   in the report and left. Files are opened non-blocking and must be regular files, so a
//!   named pipe planted there cannot hold the salvage.
//! - Only sled's own files (`conf`, `db`, `snap.*`, `blobs/`) are copied into the scratch
//!   copy: the journal and the key are read where they are. The copy writes a file's data and
//!   leaves its holes as holes, at most [`COPY_BYTES_MAX`] bytes of data per copy: a large
//!   sparse file costs no writes, and more data than sled's files can hold is refused before
//!   anything is copied.
//!
//! Memory: one game's records at a time, the journal (at most [`journal::JOURNAL_BYTES`]) and an
//! index of the envelopes the raw scan found (at most [`FOUND_MAX`], without their bytes, read
//! again from the scratch copy when used). Files larger than [`FILE_BYTES_MAX`] are not read.

use super::envelope::{self, GameMarks, GameMeta};
use super::journal::{self, Tree};
use super::manifest::{self, Reach, Reaches};
use super::sled_store::{open_trees, without_panics, Trees};
use super::{EventStore, GameKey, SledStore};
use protocol::chain::{self, ChainReader, LogHash, GENESIS};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Component, Path, PathBuf};

/// The largest file salvage copies or reads: past it a file is named in the report and left.
pub const FILE_BYTES_MAX: u64 = 8 * 1024 * 1024 * 1024;

/// The most bytes of data salvage writes into one scratch copy of sled's files: sled's `db` at
/// the largest salvage reads ([`FILE_BYTES_MAX`]), and as much again for its snapshots, `conf`
/// and `blobs/` (a snapshot indexes the log, a blob holds one large value of it: neither
/// outgrows the log it belongs to). Holes are not written and not counted, so this bounds the
/// data the damaged files really hold; past it nothing is copied, and salvage says so.
pub const COPY_BYTES_MAX: u64 = 2 * FILE_BYTES_MAX;

/// How much of a file the copy reads and writes at once.
const COPY_CHUNK_BYTES: usize = 1024 * 1024;

/// The most files salvage copies from the damaged directory (sled's `blobs/` holds one per
/// large value).
pub const FILES_MAX: usize = 1_000_000;

/// The most envelopes the raw scan indexes (about a hundred bytes each); past it the scan
/// stops, and says so.
pub const FOUND_MAX: usize = 4_000_000;

/// How much of a file the raw scan reads at once (plus an envelope's largest size, so one
/// that straddles two reads is found whole).
const CHUNK_BYTES: usize = 8 * 1024 * 1024;

/// How one game came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every event the store's index held, verified and copied.
    Intact { events: u64 },
    /// Copied, but where its log ended cannot be confirmed: sled's index of it could not be
    /// read, or the files held more of its chain than the index did.
    Unconfirmed { events: u64, why: String },
    /// Copied up to `events`, short of the `claimed` events the store said it had.
    Truncated {
        events: u64,
        claimed: u64,
        why: String,
    },
    /// Not copied.
    Lost { why: String },
    /// Metadata and no event: a creation that was never acknowledged, nothing to copy.
    Empty,
}

/// What a salvage did: one line per game, and what else it noticed.
#[derive(Debug, Default, Clone)]
pub struct SalvageReport {
    /// Each game by id (or, for a chain with no id, by its first event's hash), in order.
    pub games: Vec<(String, Outcome)>,
    /// How the damaged directory was read.
    pub notes: Vec<String>,
    /// What was lost besides games (the signing key, notification records): makes the
    /// salvage fail like a lost game does.
    pub problems: Vec<String>,
}

impl SalvageReport {
    /// Whether every game was copied whole and nothing else was lost.
    pub fn all_intact(&self) -> bool {
        self.problems.is_empty()
            && self
                .games
                .iter()
                .all(|(_, o)| matches!(o, Outcome::Intact { .. } | Outcome::Empty))
    }

    pub fn outcome(&self, id: &str) -> Option<&Outcome> {
        self.games.iter().find(|(g, _)| g == id).map(|(_, o)| o)
    }
}

impl fmt::Display for SalvageReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |pick: fn(&Outcome) -> bool| self.games.iter().filter(|(_, o)| pick(o)).count();
        write!(
            f,
            "{} games copied intact, {} copied with their end unconfirmed, {} truncated, {} lost",
            count(|o| matches!(o, Outcome::Intact { .. })),
            count(|o| matches!(o, Outcome::Unconfirmed { .. })),
            count(|o| matches!(o, Outcome::Truncated { .. })),
            count(|o| matches!(o, Outcome::Lost { .. })),
        )?;
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        for (game, outcome) in &self.games {
            match outcome {
                Outcome::Intact { events } => {
                    write!(f, "\n  copied: game {game}: {events} events, intact")?
                }
                Outcome::Unconfirmed { events, why } => write!(
                    f,
                    "\n  copied, end unconfirmed: game {game}: {events} events ({why})"
                )?,
                Outcome::Truncated {
                    events,
                    claimed,
                    why,
                } => write!(
                    f,
                    "\n  truncated: game {game}: kept events 1..={events} of {claimed}; event {} {why}",
                    events + 1
                )?,
                Outcome::Lost { why } => write!(f, "\n  lost: game {game}: {why}")?,
                Outcome::Empty => write!(
                    f,
                    "\n  not copied: game {game}: it has no events (a creation that was never acknowledged)"
                )?,
            }
        }
        for problem in &self.problems {
            write!(f, "\n  problem: {problem}")?;
        }
        Ok(())
    }
}

/// Why a salvage could not run at all; each names the directory or file concerned.
#[derive(Debug, thiserror::Error)]
pub enum SalvageError {
    #[error("cannot read the damaged directory {}: {why}", path.display())]
    DamagedUnreadable { path: PathBuf, why: String },
    #[error("{} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("{} is not empty: salvage writes only into a new or empty directory", path.display())]
    NotEmpty { path: PathBuf },
    #[error("cannot read {}: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
    /// A server holds sled's lock on the damaged directory.
    #[error("an asl-server is using {}: stop it first (a running server's games are copied with `asl-server backup`)", path.display())]
    InUse { path: PathBuf },
    #[error("cannot resolve {}: {why}", path.display())]
    Unresolved { path: PathBuf, why: String },
    /// The path could not be made absolute.
    #[error("{}: {why}", path.display())]
    NotAbsolute { path: PathBuf, why: String },
    #[error("{} is a symbolic link to {}, which cannot be resolved ({why}): name a directory that exists, or none", path.display(), to.display())]
    DanglingLink {
        path: PathBuf,
        to: PathBuf,
        why: String,
    },
    #[error("{} climbs (`..`) out of a directory that does not exist: name the target without `..`", path.display())]
    Climbs { path: PathBuf },
    #[error("{} and {} overlap: salvage into a directory outside the damaged one", to.display(), from.display())]
    Overlap { to: PathBuf, from: PathBuf },
    #[error("{} names no directory", path.display())]
    NoName { path: PathBuf },
    /// The scratch copy of an earlier salvage is still there.
    #[error("{} exists (left by a salvage that stopped?): remove it first", path.display())]
    ScratchLeft { path: PathBuf },
    #[error("sled's files in {} hold {data} bytes of data, more than the {data_max} salvage copies (COPY_BYTES_MAX): nothing was salvaged", from.display())]
    TooMuchData {
        from: PathBuf,
        data: u64,
        data_max: u64,
    },
    #[error("sled's files in {} grew past {data_max} bytes of data as they were copied, the most salvage copies (COPY_BYTES_MAX): nothing was salvaged", from.display())]
    Grew { from: PathBuf, data_max: u64 },
    #[error("cannot create the scratch copy {}: {why}", path.display())]
    Scratch { path: PathBuf, why: String },
    #[error("cannot copy {} into the scratch copy: {why}", path.display())]
    Copy { path: PathBuf, why: String },
    /// The new data directory could not be opened as a store.
    #[error("cannot open {}: {why}", path.display())]
    Open { path: PathBuf, why: String },
}

/// Why a file of the damaged directory is not read: noted in the report, and the salvage
/// goes on without it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotRead {
    /// A symbolic link, with where it leads if that can be read.
    #[error("{} is a symbolic link{}: not followed; salvage reads only the damaged directory's own files", path.display(), to.as_ref().map(|to| format!(" (to {})", to.display())).unwrap_or_default())]
    Link { path: PathBuf, to: Option<PathBuf> },
    #[error("{} cannot be read ({why})", path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error("{} is not a regular file: not read", path.display())]
    NotAFile { path: PathBuf },
}

/// Why the raw scan of one file stopped early.
#[derive(Debug, thiserror::Error)]
enum ScanStopped {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("over {FOUND_MAX} envelopes found; the rest not read")]
    TooMany,
}

/// Why no copy of a game's metadata can be used: the game is lost.
#[derive(Debug, thiserror::Error)]
enum MetaLost {
    #[error("its metadata (tokens' digests, dice seeds) survives nowhere: it cannot be served")]
    Nowhere,
    /// Each copy failed; the last one's fault is named.
    #[error("no copy of its metadata is usable: {why}")]
    Unusable { why: String },
}

/// Copies every game of the damaged data directory `from` whose chain verifies into a new
/// data directory `to` (missing or empty), with the signing key; never writes into `from`.
/// An error is a salvage that could not run at all (bad directories, no room for the copy);
/// what happened to each game is in the report.
pub fn salvage(from: &Path, to: &Path) -> Result<SalvageReport, SalvageError> {
    let meta = std::fs::symlink_metadata(from).map_err(|e| SalvageError::DamagedUnreadable {
        path: from.to_path_buf(),
        why: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(SalvageError::NotADirectory {
            path: from.to_path_buf(),
        });
    }
    match std::fs::read_dir(to) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(SalvageError::NotEmpty {
                    path: to.to_path_buf(),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(SalvageError::Unreadable {
                path: to.to_path_buf(),
                why: e.to_string(),
            })
        }
    }
    // sled holds an exclusive lock on `db` while a server has the directory open; a shared
    // one taken here writes nothing, and tells a running server's files from a stopped one's.
    if let Ok(Some(db)) = open_own(&from.join("db")) {
        if let Err(std::fs::TryLockError::WouldBlock) = db.try_lock_shared() {
            return Err(SalvageError::InUse {
                path: from.to_path_buf(),
            });
        }
    }
    let from_abs = std::fs::canonicalize(from).map_err(|e| SalvageError::Unresolved {
        path: from.to_path_buf(),
        why: e.to_string(),
    })?;
    let to_abs = resolved(to)?;
    if to_abs.starts_with(&from_abs) || from_abs.starts_with(&to_abs) {
        return Err(SalvageError::Overlap {
            to: to.to_path_buf(),
            from: from.to_path_buf(),
        });
    }
    let name = to_abs.file_name().ok_or_else(|| SalvageError::NoName {
        path: to.to_path_buf(),
    })?;
    let scratch =
        Scratch(to_abs.with_file_name(format!(".{}.salvage-scratch", name.to_string_lossy())));
    if scratch.0.exists() {
        return Err(SalvageError::ScratchLeft {
            path: scratch.0.clone(),
        });
    }

    let mut report = SalvageReport::default();
    let skipped = copy_tree(from, &scratch.0, COPY_BYTES_MAX)?;
    for why in skipped {
        report.notes.push(why);
    }
    let sled = open_sled(from, &scratch, &mut report)?;
    // Read from the damaged directory itself, never written: sled rewrites its copy's files
    // while opening (it cuts its log at the first bad record, say), which would hide what a
    // scan can still find.
    let mut journal = read_journal(from, &mut report);
    if let Some((why, later)) = &journal.lost {
        if sled_holds_any(sled.as_ref(), later) {
            report.notes.push(
                "sled holds writes made after the journal's lost records, so it holds theirs too"
                    .into(),
            );
        } else {
            journal.unconfirmed = Some(why.clone());
        }
    }
    let raw = scan_raw(from, &mut report);
    // How far each game reached at the last checkpoint (issue 50): a game sled's log ends
    // short of is short, whatever sled's index says, and one no other place names is lost.
    let reaches = match manifest::read(from) {
        Ok(Some(reaches)) => reaches,
        Ok(None) => {
            report.notes.push(
                "no checkpoint manifest: where each game ended is sled's and the journal's word"
                    .into(),
            );
            Reaches::new()
        }
        Err(e) => {
            report.notes.push(format!("{e}: not used"));
            Reaches::new()
        }
    };

    // The key first: the copied games' receipts were signed with it. Never one a link names:
    // another server's key in this one's place would sign its receipts.
    let key_path = from.join(crate::signing::key::KEY_FILE);
    let key_kind = std::fs::symlink_metadata(&key_path).map(|m| m.file_type());
    let restored = match key_kind {
        Ok(kind) if kind.is_symlink() => Err(link_refusal(&key_path).to_string()),
        Ok(kind) if !kind.is_file() => Err(NotRead::NotAFile {
            path: key_path.clone(),
        }
        .to_string()),
        _ => crate::signing::key::restore(from, &to_abs).map_err(|e| e.to_string()),
    };
    match restored {
        Ok(Some(key)) => report.notes.push(format!("server key {key} copied")),
        Ok(None) => report.notes.push(
            "the damaged directory holds no signing key: the server will make a new one".into(),
        ),
        Err(e) => report.problems.push(format!(
            "the signing key was not copied ({e}): the server will make a new one, and receipts or exports signed before cannot be checked against it"
        )),
    }
    let store = SledStore::open(&to_abs).map_err(|e| SalvageError::Open {
        path: to.to_path_buf(),
        why: e.to_string(),
    })?;

    let mut keys: BTreeSet<GameKey> = journal.events.keys().copied().collect();
    keys.extend(journal.metas.keys().copied());
    keys.extend(reaches.keys().copied());
    if let Some(sled) = &sled {
        keys.extend(sled.keys.iter().copied());
    }
    let mut named_firsts: HashSet<LogHash> = HashSet::new();
    for key in keys {
        let id = envelope::game_id(&key);
        let outcome = salvage_game(
            &key,
            sled.as_ref(),
            &journal,
            &raw,
            reaches.get(&key),
            &store,
            &mut named_firsts,
        );
        report.games.push((id, outcome));
    }
    // Chains the raw files hold whose first event no named game has. Two events or more
    // linked by hash are a game's; a lone first event may be bytes that happen to decode as
    // one (or a game created and never played), so it is only counted.
    let (alone, chains): (Vec<_>, Vec<_>) = raw
        .unnamed_chains(&named_firsts)
        .into_iter()
        .partition(|(_, events)| *events < 2);
    if !alone.is_empty() {
        report.notes.push(format!(
            "{} lone envelopes that decode as a game's first event were found with nothing linked to them and no id: not copied",
            alone.len()
        ));
    }
    for (first, events) in chains {
        report.games.push((
            format!("(no id; first event's hash {})", &first.to_string()[..16]),
            Outcome::Lost {
                why: format!(
                    "a chain of {events} events found in the damaged files, but neither its game id nor its metadata survives: it cannot be served"
                ),
            },
        ));
    }
    copy_notify(sled.as_ref(), &journal, &store, &mut report);
    drop(store);
    drop(sled);
    Ok(report)
}

/// The scratch copy of the damaged directory, removed however salvage ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `path` made absolute with every link in it resolved: its nearest existing ancestor
/// canonicalized, and the part that does not exist yet (so holds no link) put after it.
fn resolved(path: &Path) -> Result<PathBuf, SalvageError> {
    let absolute = std::path::absolute(path).map_err(|e| SalvageError::NotAbsolute {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    let mut existing = absolute.as_path();
    let mut missing = vec![];
    loop {
        match std::fs::symlink_metadata(existing) {
            Ok(meta) => {
                let real = std::fs::canonicalize(existing).map_err(|e| {
                    if meta.file_type().is_symlink() {
                        SalvageError::DanglingLink {
                            path: existing.to_path_buf(),
                            to: std::fs::read_link(existing).unwrap_or_default(),
                            why: e.to_string(),
                        }
                    } else {
                        SalvageError::Unresolved {
                            path: existing.to_path_buf(),
                            why: e.to_string(),
                        }
                    }
                })?;
                return Ok(missing
                    .into_iter()
                    .rev()
                    .fold(real, |at, part| at.join(part)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(SalvageError::Unreadable {
                    path: existing.to_path_buf(),
                    why: e.to_string(),
                })
            }
        }
        // A `..` below a directory that does not exist cannot be resolved: it climbs out of
        // nothing, and where it lands depends on links not made yet.
        match existing.components().next_back() {
            Some(Component::Normal(part)) => missing.push(part.to_os_string()),
            _ => {
                return Err(SalvageError::Climbs {
                    path: path.to_path_buf(),
                })
            }
        }
        existing = existing.parent().unwrap_or(Path::new("/"));
    }
}

/// Why a file of the damaged directory that is a symbolic link is not read.
fn link_refusal(path: &Path) -> NotRead {
    NotRead::Link {
        path: path.to_path_buf(),
        to: std::fs::read_link(path).ok(),
    }
}

/// Opens `path`, a file of the damaged directory, to read it: never through a symbolic link
/// (`O_NOFOLLOW`), and non-blocking, so a named pipe planted there opens at once and is refused
/// as what it is. `Ok(None)` when there is no such file; an error says why it is not read.
fn open_own(path: &Path) -> Result<Option<File>, NotRead> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(link_refusal(path)),
        Err(e) => {
            return Err(NotRead::Unreadable {
                path: path.to_path_buf(),
                why: e.to_string(),
            })
        }
    };
    let meta = file.metadata().map_err(|e| NotRead::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(NotRead::NotAFile {
            path: path.to_path_buf(),
        });
    }
    Ok(Some(file))
}

/// Whether `name`, in the top of a data directory, is one of sled's files: what the scratch
/// copy needs for sled to open (the journal and the key are read where they are).
fn sleds(name: &str) -> bool {
    matches!(name, "conf" | "db" | "blobs") || name.starts_with("snap.")
}

/// Copies sled's regular files below `from` into `to` (owner-only), never following a link
/// and writing no more than `data_max` bytes of data; returns what was left out and why.
fn copy_tree(from: &Path, to: &Path, data_max: u64) -> Result<Vec<String>, SalvageError> {
    let mut skipped = vec![];
    let mut files = vec![];
    list_into(from, Path::new(""), &mut files, &mut skipped)?;
    // Refused before a byte is written: the data the files hold (allocated blocks, not their
    // length, so holes cost nothing), summed.
    let data: u64 = files
        .iter()
        .filter(|(_, meta)| meta.is_file())
        .map(|(_, meta)| meta.len().min(meta.blocks().saturating_mul(512)))
        .sum();
    if data > data_max {
        return Err(SalvageError::TooMuchData {
            from: from.to_path_buf(),
            data,
            data_max,
        });
    }
    let scratch_failed = |path: &Path, e: std::io::Error| SalvageError::Scratch {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    crate::signing::private::create_dir(to).map_err(|e| scratch_failed(to, e))?;
    let mut left = data_max;
    for (relative, meta) in files {
        let (source, target) = (from.join(&relative), to.join(&relative));
        if meta.is_dir() {
            crate::signing::private::create_dir(&target).map_err(|e| scratch_failed(&target, e))?;
            continue;
        }
        let file = match open_own(&source) {
            Ok(Some(file)) => file,
            Ok(None) => continue, // gone since it was listed: sled's own doing
            Err(why) => {
                skipped.push(why.to_string());
                continue;
            }
        };
        copy_data(&file, &source, &target, &mut left).map_err(|e| {
            e.unwrap_or_else(|| SalvageError::Grew {
                from: from.to_path_buf(),
                data_max,
            })
        })?;
    }
    Ok(skipped)
}

/// Lists sled's files and directories below `from` (`relative` to the damaged directory),
/// directories before what they hold, naming what is left out.
fn list_into(
    from: &Path,
    relative: &Path,
    files: &mut Vec<(PathBuf, std::fs::Metadata)>,
    skipped: &mut Vec<String>,
) -> Result<(), SalvageError> {
    let dir = from.join(relative);
    let unreadable = |path: &Path, e: std::io::Error| SalvageError::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| unreadable(&dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| unreadable(&dir, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if relative.as_os_str().is_empty() && !sleds(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).map_err(|e| unreadable(&path, e))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            skipped.push(link_refusal(&path).to_string());
        } else if kind.is_dir() {
            let inner = relative.join(&name);
            files.push((inner.clone(), meta));
            list_into(from, &inner, files, skipped)?;
        } else if kind.is_file() {
            if meta.len() > FILE_BYTES_MAX {
                skipped.push(format!(
                    "{} is {} bytes, over the {FILE_BYTES_MAX}-byte limit: not read",
                    path.display(),
                    meta.len()
                ));
                continue;
            }
            if files.len() >= FILES_MAX {
                skipped.push(format!(
                    "{} and the files after it: over {FILES_MAX} files, not read",
                    path.display()
                ));
                return Ok(());
            }
            files.push((relative.join(&name), meta));
        }
        // Sockets, pipes and the like hold no records.
    }
    Ok(())
}

/// Copies `file` (at `source`) to `target`, owner-only: its data, each hole left a hole, each
/// byte of data counted against `left`. `Err(None)` when the data outgrew `left` (the file
/// grew since it was listed).
fn copy_data(
    file: &File,
    source: &Path,
    target: &Path,
    left: &mut u64,
) -> Result<(), Option<SalvageError>> {
    let read_failed = |e: std::io::Error| {
        Some(SalvageError::Unreadable {
            path: source.to_path_buf(),
            why: e.to_string(),
        })
    };
    let write_failed = |e: std::io::Error| {
        Some(SalvageError::Copy {
            path: source.to_path_buf(),
            why: e.to_string(),
        })
    };
    let out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(crate::signing::private::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)
        .map_err(write_failed)?;
    let len = file.metadata().map_err(read_failed)?.len();
    let mut buffer = vec![0u8; COPY_CHUNK_BYTES];
    let mut at = 0u64;
    while at < len {
        let Some((start, end)) = next_data(file, at, len) else {
            break;
        };
        let mut pos = start;
        while pos < end {
            let n = (end - pos).min(COPY_CHUNK_BYTES as u64);
            if n > *left {
                return Err(None);
            }
            *left -= n;
            let chunk = &mut buffer[..n as usize];
            file.read_exact_at(chunk, pos).map_err(read_failed)?;
            out.write_all_at(chunk, pos).map_err(write_failed)?;
            pos += n;
        }
        at = end;
    }
    // The holes at the end, and the length: the copy reads as the file does.
    out.set_len(len).map_err(write_failed)?;
    Ok(())
}

/// The next stretch of data in `file` at or after `at` (and before `len`), as `[start, end)`:
/// `None` when the rest is a hole. A filesystem that cannot tell holes says all is data.
fn next_data(file: &File, at: u64, len: u64) -> Option<(u64, u64)> {
    let fd = file.as_raw_fd();
    let seek = |offset: u64, whence| {
        // SAFETY: `fd` is an open descriptor `file` owns for the call; lseek reads no memory.
        let to = unsafe { libc::lseek(fd, offset as libc::off_t, whence) };
        u64::try_from(to).map_err(|_| std::io::Error::last_os_error())
    };
    let start = match seek(at, libc::SEEK_DATA) {
        Ok(start) => start,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return None,
        Err(_) => return Some((at, len)),
    };
    if start >= len {
        return None;
    }
    let end = seek(start, libc::SEEK_HOLE).unwrap_or(len).min(len);
    Some((start, end.max(start + 1).min(len)))
}

/// What sled's trees held, if sled opened on the scratch copy.
struct SledView {
    trees: Trees,
    /// Every game key found in the `games` or `events` tree.
    keys: BTreeSet<GameKey>,
    /// Why a tree could not be read to its end, if one could not.
    broken: Option<String>,
}

/// Opens sled on the scratch copy, as copied, then without its snapshots, then without its
/// `conf` too (each try on a fresh copy: a failed open may have rewritten files).
fn open_sled(
    from: &Path,
    scratch: &Scratch,
    report: &mut SalvageReport,
) -> Result<Option<SledView>, SalvageError> {
    let mut failures = vec![];
    for (attempt, without) in [&[][..], &["snap."][..], &["snap.", "conf"][..]]
        .iter()
        .enumerate()
    {
        if attempt > 0 {
            let _ = std::fs::remove_dir_all(&scratch.0);
            copy_tree(from, &scratch.0, COPY_BYTES_MAX)?;
            for entry in std::fs::read_dir(&scratch.0)
                .map_err(|e| SalvageError::Unreadable {
                    path: scratch.0.clone(),
                    why: e.to_string(),
                })?
                .flatten()
            {
                let name = entry.file_name().to_string_lossy().into_owned();
                if without.iter().any(|w| name.starts_with(w)) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        if !scratch.0.join("db").is_file() {
            report
                .notes
                .push("sled's file `db` is missing: its trees cannot be read".into());
            return Ok(None);
        }
        match open_trees(&scratch.0) {
            Ok(trees) => {
                if attempt > 0 {
                    report.notes.push(format!(
                        "sled opened once its {} were set aside",
                        without.join(" and ").replace("snap.", "snapshots")
                    ));
                }
                let view = read_keys(trees);
                if let Some(why) = &view.broken {
                    report.notes.push(format!("sled's trees: {why}"));
                }
                return Ok(Some(view));
            }
            Err(e) => failures.push(e.to_string()),
        }
    }
    report.notes.push(format!(
        "sled does not open ({}): games are read from the journal and sled's raw files",
        failures.join("; ")
    ));
    let _ = std::fs::remove_dir_all(&scratch.0);
    copy_tree(from, &scratch.0, COPY_BYTES_MAX)?;
    Ok(None)
}

/// Why one of sled's trees could not be read to its end.
#[derive(Debug, thiserror::Error)]
enum TreeUnread {
    #[error(transparent)]
    Sled(#[from] sled::Error),
    /// A key of a tree's own length, not that of a game's key.
    #[error("a key of {0} bytes")]
    Key(usize),
    #[error("an event key of {0} bytes")]
    EventKey(usize),
    #[error("{0}")]
    Panicked(#[from] super::sled_store::Panicked),
}

/// Lists the game keys of both trees, noting where a tree stops being readable.
fn read_keys(trees: Trees) -> SledView {
    let mut keys = BTreeSet::new();
    let mut broken = None;
    for (name, tree, len) in [("games", &trees.games, 16), ("events", &trees.events, 24)] {
        let listed = without_panics(|| {
            for entry in tree.iter().keys() {
                let key = entry?;
                match key.get(..16).and_then(|k| GameKey::try_from(k).ok()) {
                    Some(game) if key.len() == len => {
                        keys.insert(game);
                    }
                    _ => return Err(TreeUnread::Key(key.len())),
                }
            }
            Ok(())
        });
        if let Err(why) = listed.unwrap_or_else(|panicked| Err(panicked.into())) {
            broken = Some(format!("the {name} tree cannot be read to its end ({why})"));
        }
    }
    SledView {
        trees,
        keys,
        broken,
    }
}

impl SledView {
    /// The game's records as sled gives them, and why they stop early, if they do.
    fn records(&self, key: &GameKey) -> (BTreeMap<u64, Vec<u8>>, Option<String>) {
        let mut records = BTreeMap::new();
        let read = without_panics(|| {
            for entry in self.trees.events.scan_prefix(key) {
                let (k, v) = entry?;
                let seq = k
                    .get(16..)
                    .and_then(|s| <[u8; 8]>::try_from(s).ok())
                    .map(u64::from_be_bytes)
                    .ok_or(TreeUnread::EventKey(k.len()))?;
                records.insert(seq, v.to_vec());
            }
            Ok::<(), TreeUnread>(())
        });
        let broken = match read.unwrap_or_else(|panicked| Err(panicked.into())) {
            Ok(()) => None,
            Err(why) => Some(format!("sled cannot read its log ({why})")),
        };
        (records, broken)
    }

    fn meta(&self, key: &GameKey) -> Option<Vec<u8>> {
        without_panics(|| self.trees.games.get(key).ok().flatten().map(|m| m.to_vec()))
            .ok()
            .flatten()
    }
}

/// Where a journal record is in the journal's history: its epoch and its number.
type At = (u64, u64);

/// What the journal's records hold, by game.
#[derive(Default)]
struct JournalView {
    /// The epoch its header names: records of it and later are newer than sled's files.
    epoch: Option<u64>,
    /// Every version of each event found, oldest record first.
    events: HashMap<GameKey, BTreeMap<u64, Vec<Vec<u8>>>>,
    /// Each game's last event in records of the header's epoch or later (not yet in sled),
    /// and in older records (which sled's files must hold).
    last_new: HashMap<GameKey, u64>,
    last_old: HashMap<GameKey, u64>,
    /// Every version of each game's metadata, with its record's (epoch, number), oldest first.
    metas: HashMap<GameKey, Vec<(At, Vec<u8>)>>,
    /// The notification space's writes, in order.
    notify: Vec<(At, Vec<u8>, Option<Vec<u8>>)>,
    /// Records of the newest epoch lost ([`records_lost`]), and the events of the records
    /// after them that survive.
    lost: Option<(String, Vec<(GameKey, u64)>)>,
    /// Why no game's end is confirmed: records were lost, and sled holds nothing written after
    /// them, so acknowledged writes of any game may have been in them alone.
    unconfirmed: Option<String>,
}

fn read_journal(dir: &Path, report: &mut SalvageReport) -> JournalView {
    let path = dir.join(journal::FILE_NAME);
    let bytes = match open_own(&path) {
        Ok(Some(file)) => {
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            let len = len.min(journal::JOURNAL_BYTES) as usize;
            let mut bytes = vec![0u8; len];
            match file.read_exact_at(&mut bytes, 0) {
                Ok(()) => bytes,
                Err(e) => {
                    report
                        .notes
                        .push(format!("the journal cannot be read ({e})"));
                    return JournalView::default();
                }
            }
        }
        Ok(None) => {
            report.notes.push("no journal".into());
            return JournalView::default();
        }
        Err(why) => {
            report.notes.push(why.to_string());
            return JournalView::default();
        }
    };
    let (epoch, records) = journal::salvage_records(&bytes);
    let lost = records_lost(epoch, &records).map(|(why, after)| {
        report.notes.push(format!("the journal is damaged: {why}"));
        let later = records
            .iter()
            .filter(|(e, number, _)| Some(*e) == epoch && after.is_some_and(|a| *number > a))
            .flat_map(|(_, _, inserts)| inserts)
            .filter(|(tree, key, _)| matches!(tree, Tree::Events) && key.len() == 24)
            .filter_map(|(_, key, _)| {
                let game = GameKey::try_from(&key[..16]).ok()?;
                Some((game, u64::from_be_bytes(key[16..].try_into().ok()?)))
            })
            .collect();
        (why, later)
    });
    let mut view = JournalView {
        epoch,
        lost,
        ..JournalView::default()
    };
    for (e, number, inserts) in records {
        for (tree, key, value) in inserts {
            keep_insert(&mut view, (e, number), tree, key, value);
        }
    }
    view
}

/// Whether the journal lost records not yet in sled, as the server's own opening of it judges
/// (`Journal::open`): a record of the newest epoch unreadable while one after it is valid, or a
/// valid record of an epoch later than the header names. Its game is unknown (the damaged
/// record named it), so every game's end is unconfirmed; a damaged last record looks like a
/// write torn by a crash and is not flagged, by the server either.
/// Returns why, with the number of the first record lost (`None` when the header is what is
/// damaged).
fn records_lost(epoch: Option<u64>, records: &[journal::Found]) -> Option<(String, Option<u64>)> {
    let epoch = epoch?;
    if let Some((e, number, _)) = records.iter().find(|(e, _, _)| *e > epoch) {
        return Some((
            format!("its header says epoch {epoch}, but record {number} of epoch {e} is valid"),
            None,
        ));
    }
    let mut next = 0u64;
    for (_, number, _) in records.iter().filter(|(e, _, _)| *e == epoch) {
        if *number > next {
            return Some((
                format!(
                    "record {next} of epoch {epoch} is unreadable while record {number} after it is valid"
                ),
                Some(next),
            ));
        }
        next = next.max(number + 1);
    }
    None
}

/// Whether sled holds an event written after the journal's lost records: sled persists its
/// writes in the order they were made, so it then holds what the lost records held too.
fn sled_holds_any(sled: Option<&SledView>, later: &[(GameKey, u64)]) -> bool {
    let Some(sled) = sled else { return false };
    let mut last: HashMap<GameKey, u64> = HashMap::new();
    later.iter().any(|(game, seq)| {
        let held = *last.entry(*game).or_insert_with(|| {
            sled.records(game)
                .0
                .keys()
                .next_back()
                .copied()
                .unwrap_or(0)
        });
        *seq <= held
    })
}

fn keep_insert(view: &mut JournalView, at: At, tree: Tree, key: Vec<u8>, value: Vec<u8>) {
    let game = key.get(..16).and_then(|k| GameKey::try_from(k).ok());
    match (tree, game) {
        (Tree::Events, Some(game)) if key.len() == 24 => {
            let seq = u64::from_be_bytes(key[16..].try_into().expect("eight bytes"));
            let last = match view.epoch {
                Some(e) if at.0 < e => view.last_old.entry(game).or_default(),
                _ => view.last_new.entry(game).or_default(),
            };
            *last = (*last).max(seq);
            let versions = view.events.entry(game).or_default().entry(seq).or_default();
            if !versions.contains(&value) {
                versions.push(value);
            }
        }
        (Tree::Games, Some(game)) if key.len() == 16 => {
            view.metas.entry(game).or_default().push((at, value))
        }
        (Tree::Notify, _) => view.notify.push((at, key, Some(value))),
        (Tree::NotifyRemoved, _) => view.notify.push((at, key, None)),
        _ => {}
    }
}

/// Where one envelope found by the raw scan is.
struct Spot {
    file: usize,
    offset: u64,
    len: usize,
    seq: u64,
    prev: LogHash,
}

/// Envelopes the raw scan found, by their hash and by the hash they follow.
#[derive(Default)]
struct RawIndex {
    files: Vec<(PathBuf, Option<File>)>,
    spots: HashMap<LogHash, Spot>,
    after: HashMap<LogHash, Vec<LogHash>>,
    /// Game metadata found in sled's log as it writes one insert into the `games` tree (its
    /// key whole beside its value), every distinct version.
    metas: HashMap<GameKey, Vec<Vec<u8>>>,
}

impl RawIndex {
    fn bytes(&self, hash: &LogHash) -> Option<Vec<u8>> {
        let spot = self.spots.get(hash)?;
        let file = self.files.get(spot.file)?.1.as_ref()?;
        let mut bytes = vec![0u8; spot.len];
        file.read_exact_at(&mut bytes, spot.offset).ok()?;
        (LogHash::of(&bytes) == *hash).then_some(bytes)
    }

    /// The envelopes found that follow `head` as event `seq`.
    fn following(&self, head: &LogHash, seq: u64) -> Vec<Vec<u8>> {
        self.after
            .get(head)
            .into_iter()
            .flatten()
            .filter(|h| self.spots.get(*h).is_some_and(|s| s.seq == seq))
            .filter_map(|h| self.bytes(h))
            .collect()
    }

    /// Chains starting at a `GameCreated` whose first event is not in `named`, with how many
    /// events verify in each.
    fn unnamed_chains(&self, named: &HashSet<LogHash>) -> Vec<(LogHash, u64)> {
        let mut firsts: Vec<&LogHash> = self
            .after
            .get(&GENESIS)
            .into_iter()
            .flatten()
            .filter(|h| !named.contains(*h))
            .collect();
        firsts.sort_by_key(|h| h.0);
        firsts
            .into_iter()
            .filter_map(|first| {
                let bytes = self.bytes(first)?;
                let mut reader = ChainReader::default();
                let entry = reader.read(1, &bytes).ok()?;
                if !matches!(entry.event, protocol::Event::GameCreated(_)) {
                    return None;
                }
                loop {
                    let next = reader.len() + 1;
                    let found = self
                        .following(&reader.head(), next)
                        .into_iter()
                        .find(|b| reader.clone().read(next, b).is_ok());
                    match found {
                        Some(bytes) => {
                            let _ = reader.read(next, &bytes);
                        }
                        None => break,
                    }
                }
                Some((*first, reader.len()))
            })
            .collect()
    }
}

/// Scans the journal, sled's `db` and every file in `blobs/` for envelopes.
fn scan_raw(dir: &Path, report: &mut SalvageReport) -> RawIndex {
    let mut paths = vec![dir.join(journal::FILE_NAME), dir.join("db")];
    // `blobs/` itself a link would list another directory's files: not followed (the copy
    // names it).
    let blobs = dir.join("blobs");
    let own_blobs = std::fs::symlink_metadata(&blobs).is_ok_and(|m| m.is_dir());
    if let Some(Ok(entries)) = own_blobs.then(|| std::fs::read_dir(&blobs)) {
        let mut blobs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        blobs.sort();
        paths.extend(blobs);
    }
    let mut index = RawIndex::default();
    for path in paths {
        // A link or what is not a regular file is named by the copy or the journal's reader.
        let Ok(Some(file)) = open_own(&path) else {
            continue;
        };
        if file.metadata().map_or(true, |m| m.len() > FILE_BYTES_MAX) {
            continue;
        }
        let n = index.files.len();
        let scanned = without_panics(|| scan_file(&file, n, &mut index));
        index.files.push((path.clone(), Some(file)));
        let stopped = match scanned {
            Ok(scanned) => scanned.err().map(|e| e.to_string()),
            Err(panicked) => Some(panicked.to_string()),
        };
        match stopped {
            None => {}
            Some(why) => {
                report
                    .notes
                    .push(format!("the scan of {} stopped: {why}", path.display()));
                if index.spots.len() >= FOUND_MAX {
                    break;
                }
            }
        }
    }
    index
}

fn scan_file(file: &File, n: usize, index: &mut RawIndex) -> Result<(), ScanStopped> {
    let len = file.metadata()?.len();
    let mut start = 0u64;
    let mut buffer = vec![];
    while start < len {
        let want = (CHUNK_BYTES + chain::ENVELOPE_BYTES_MAX) as u64;
        let take = want.min(len - start) as usize;
        buffer.resize(take, 0);
        file.read_exact_at(&mut buffer, start)?;
        let last = CHUNK_BYTES.min(take);
        for at in 0..last {
            if buffer[at] == 0 {
                let found = sled_meta_insert(&buffer[at..])
                    .map(|one| vec![one])
                    .or_else(|| sled_meta_leaf(&buffer[at..]))
                    .unwrap_or_default();
                for (key, meta) in found {
                    let versions = index.metas.entry(key).or_default();
                    if !versions.iter().any(|v| v[..] == meta[..])
                        && versions.len() < RAW_META_VERSIONS_MAX
                    {
                        versions.push(meta.to_vec());
                    }
                }
            }
            // Every envelope starts with its format, one byte for every format there is.
            if !(1..=chain::ENVELOPE_FORMAT).contains(&u16::from(buffer[at])) {
                continue;
            }
            let Some(found) = chain::envelope_at(&buffer[at..]) else {
                continue;
            };
            let hash = LogHash::of(&buffer[at..at + found.len]);
            if index.spots.contains_key(&hash) {
                continue;
            }
            if index.spots.len() >= FOUND_MAX {
                return Err(ScanStopped::TooMany);
            }
            index.after.entry(found.prev).or_default().push(hash);
            index.spots.insert(
                hash,
                Spot {
                    file: n,
                    offset: start + at as u64,
                    len: found.len,
                    seq: found.seq,
                    prev: found.prev,
                },
            );
        }
        start += last as u64;
    }
    Ok(())
}

/// The most versions of one game's metadata the raw scan keeps.
const RAW_META_VERSIONS_MAX: usize = 1024;

/// The largest metadata record the raw scan reads: token digests and a few dozen seeds.
const RAW_META_BYTES_MAX: usize = 64 * 1024;

/// sled's record of one insert into the `games` tree at the start of `bytes`, as its log holds
/// it (`Link::Set` in sled 0.34: a zero byte, the key's length and bytes, the value's length and
/// bytes, lengths in sled's own varint): the game's key and the metadata, if the value decodes
/// as metadata with nothing left over. A node whose keys share a prefix stores them without it;
/// a `games` tree small enough to be one node (or split between random keys) has none.
fn sled_meta_insert(bytes: &[u8]) -> Option<(GameKey, &[u8])> {
    if bytes.get(..2)? != [0, 16] {
        return None;
    }
    let key = GameKey::try_from(bytes.get(2..18)?).ok()?;
    let (len, used) = sled_varint(bytes.get(18..)?)?;
    let start = 18 + used;
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= RAW_META_BYTES_MAX)?;
    let value = bytes.get(start..start.checked_add(len)?)?;
    if !matches!(value.first(), Some(1 | 2)) {
        return None;
    }
    GameMeta::decode(value).ok()?;
    GameMarks::decode(value).ok()?;
    Some((key, value))
}

/// The most entries a node of sled's `games` tree is read with.
const RAW_LEAF_ENTRIES_MAX: u64 = 100_000;

/// A whole node of the `games` tree at the start of `bytes`, as sled 0.34 writes a leaf (`Data::
/// Leaf`: a zero byte, the count, every key, then every value, each with its length), keys
/// whole (a node whose keys share no prefix): each game's key and metadata, if every key is a
/// game key and every value decodes as metadata.
fn sled_meta_leaf(bytes: &[u8]) -> Option<Vec<(GameKey, &[u8])>> {
    let (count, used) = sled_varint(bytes.get(1..)?)?;
    if count == 0 || count > RAW_LEAF_ENTRIES_MAX {
        return None;
    }
    let mut at = 1 + used;
    let mut keys = Vec::with_capacity(count as usize);
    for _ in 0..count {
        if *bytes.get(at)? != 16 {
            return None;
        }
        keys.push(GameKey::try_from(bytes.get(at + 1..at + 17)?).ok()?);
        at += 17;
    }
    let mut found = Vec::with_capacity(keys.len());
    for key in keys {
        let (len, used) = sled_varint(bytes.get(at..)?)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= RAW_META_BYTES_MAX)?;
        let value = bytes.get(at + used..(at + used).checked_add(len)?)?;
        if !matches!(value.first(), Some(1 | 2)) {
            return None;
        }
        GameMeta::decode(value).ok()?;
        GameMarks::decode(value).ok()?;
        found.push((key, value));
        at += used + len;
    }
    Some(found)
}

/// sled 0.34's varint (`Serialize for u64`), as far as metadata needs it: the value and the
/// bytes it took.
fn sled_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let first = *bytes.first()?;
    match first {
        0..=240 => Some((u64::from(first), 1)),
        241..=248 => {
            let second = *bytes.get(1)?;
            Some((240 + 256 * u64::from(first - 241) + u64::from(second), 2))
        }
        249 => {
            let (a, b) = (*bytes.get(1)?, *bytes.get(2)?);
            Some((2288 + 256 * u64::from(a) + u64::from(b), 3))
        }
        _ => None,
    }
}

/// Salvages one game into `store`: its longest verifying prefix and its newest metadata that
/// fits it.
fn salvage_game(
    key: &GameKey,
    sled: Option<&SledView>,
    journal: &JournalView,
    raw: &RawIndex,
    reach: Option<&Reach>,
    store: &SledStore,
    named_firsts: &mut HashSet<LogHash>,
) -> Outcome {
    // Every version of every event of this game the store's index or its journal holds.
    let mut pool: BTreeMap<u64, Vec<Vec<u8>>> = BTreeMap::new();
    let (index_broken, claimed_by_sled) = match sled {
        Some(view) => {
            let (records, broken) = view.records(key);
            let last = records.keys().next_back().copied().unwrap_or(0);
            for (seq, record) in records {
                pool.entry(seq).or_default().push(record);
            }
            (broken.or_else(|| view.broken.clone()), last)
        }
        None => (Some("sled's index cannot be read".to_string()), 0),
    };
    if let Some(events) = journal.events.get(key) {
        for (seq, versions) in events {
            let held = pool.entry(*seq).or_default();
            for v in versions {
                if !held.contains(v) {
                    held.push(v.clone());
                }
            }
        }
    }
    // What the store itself says the log holds: sled's index and the journal's records since
    // its last checkpoint. Older journal records beyond it mean sled lost what it once had.
    let last = |m: &HashMap<GameKey, u64>| m.get(key).copied().unwrap_or(0);
    let claimed_by_store = claimed_by_sled
        .max(last(&journal.last_new))
        .max(reach.map_or(0, |r| r.seq));
    let claimed = claimed_by_store.max(last(&journal.last_old));
    let index_broken = index_broken.or_else(|| {
        (claimed > claimed_by_store).then(|| {
            format!(
                "sled's index ends at event {claimed_by_store}, but the journal held events up to {claimed}"
            )
        })
    });
    // The event the manifest names, found in the raw files by its hash when no index holds
    // it: the chain is then followed back from it (and vouched for by it).
    if let Some(r) = reach {
        let hash = LogHash(r.hash);
        let held = pool
            .get(&r.seq)
            .is_some_and(|versions| versions.iter().any(|v| LogHash::of(v) == hash));
        if !held && raw.spots.get(&hash).is_some_and(|spot| spot.seq == r.seq) {
            if let Some(bytes) = raw.bytes(&hash) {
                pool.entry(r.seq).or_default().push(bytes);
            }
        }
    }
    backfill(&mut pool, raw);

    // Forward from `GameCreated`: the store's versions first, then the raw files'.
    let mut reader = ChainReader::default();
    let mut records: Vec<(u64, Vec<u8>)> = vec![];
    let mut extended = 0u64;
    // Whether each event taken is a raw copy no later event links to: sled checks its records
    // and the journal its own, but a raw copy is only vouched for by the next event's link.
    let mut unvouched: Vec<bool> = vec![];
    let mut stopped: String = loop {
        let seq = reader.len() + 1;
        let mut why = None;
        // Every copy of this event that reads after the last one taken: the store's own, one
        // the next event names by its hash, and (past the first event, whose link to the
        // start names no game) one in the raw files that links to the last one taken.
        let mut readable: Vec<(Vec<u8>, bool)> = vec![];
        for bytes in pool.get(&seq).into_iter().flatten() {
            match reader.clone().read(seq, bytes) {
                Ok(_) => readable.push((bytes.clone(), false)),
                Err(e) => {
                    why.get_or_insert(e.to_string());
                }
            }
        }
        let next_prevs: Vec<LogHash> = pool
            .get(&(seq + 1))
            .into_iter()
            .flatten()
            .filter_map(|next| chain::envelope_at(next).filter(|f| f.len == next.len()))
            .map(|f| f.prev)
            .collect();
        for prev in &next_prevs {
            if raw.spots.get(prev).is_some_and(|s| s.seq == seq) {
                readable.extend(
                    raw.bytes(prev)
                        .filter(|b| reader.clone().read(seq, b).is_ok())
                        .map(|b| (b, true)),
                );
            }
        }
        if seq > 1 {
            readable.extend(
                raw.following(&reader.head(), seq)
                    .into_iter()
                    .filter(|b| reader.clone().read(seq, b).is_ok())
                    .map(|b| (b, true)),
            );
        }
        // A copy the next event links to is vouched for by that link; any other may be a
        // damaged copy that still decodes (an event's own bytes are checked only by the link
        // of the event after it).
        let linked = |bytes: &Vec<u8>| {
            let hash = LogHash::of(bytes);
            // The manifest's hash of a game's last event vouches for it as a link would.
            reach.is_some_and(|r| *r == Reach::of(seq, bytes))
                || next_prevs.contains(&hash)
                || raw.after.get(&hash).is_some_and(|next| {
                    next.iter()
                        .any(|h| raw.spots.get(h).is_some_and(|s| s.seq == seq + 1))
                })
        };
        let taken = readable
            .iter()
            .position(|(b, _)| linked(b))
            .or(if readable.is_empty() { None } else { Some(0) })
            .map(|at| readable.swap_remove(at));
        match taken {
            Some((bytes, from_raw)) => {
                if from_raw && seq > claimed {
                    extended += 1;
                }
                unvouched.push(from_raw && !linked(&bytes));
                let _ = reader.read(seq, &bytes);
                records.push((seq, bytes));
            }
            None => break why.unwrap_or_else(|| format!("event {seq}: has no copy that verifies")),
        }
    };
    // A last event found only in the raw files may be a damaged copy that still decodes:
    // nothing after it vouches for its bytes, so it is not served.
    while unvouched.last() == Some(&true) {
        unvouched.pop();
        if let Some((seq, _)) = records.pop() {
            if seq > claimed {
                extended -= 1;
            }
            stopped = format!(
                "event {seq}: its only copies are in sled's raw files, and no later event vouches for their bytes"
            );
        }
    }
    let events = records.len() as u64;
    if events == 0 && claimed == 0 && index_broken.is_none() {
        return Outcome::Empty;
    }
    if events == 0 {
        return Outcome::Lost {
            why: format!("its first event cannot be read ({stopped})"),
        };
    }
    named_firsts.insert(LogHash::of(&records[0].1));

    let verified = match envelope::verify(&records) {
        Ok(verified) => verified,
        Err(e) => return Outcome::Lost { why: e.to_string() },
    };
    let meta = match pick_meta(key, sled, journal, raw, &verified.entries) {
        Ok(meta) => meta,
        Err(lost) => {
            return Outcome::Lost {
                why: lost.to_string(),
            }
        }
    };
    let head = verified.head();
    // A chain that passes the event the manifest names with other bytes there is not the one
    // the server acknowledged.
    let differs = reach.filter(|r| {
        records
            .get((r.seq as usize).wrapping_sub(1))
            .is_some_and(|(seq, bytes)| Reach::of(*seq, bytes) != **r)
    });
    let written = store
        .put_meta(key, meta)
        .wait()
        .and_then(|()| {
            store
                .append(key, 1, records.into_iter().map(|(_, r)| r).collect())
                .wait()
        })
        .map_err(|e| e.to_string())
        .and_then(|()| {
            let back = store.load(key).map_err(|e| e.to_string())?;
            let again = envelope::verify(&back).map_err(|e| e.to_string())?;
            (again.head() == head)
                .then_some(())
                .ok_or_else(|| "the copy read back differs".to_string())
        });
    if let Err(e) = written {
        return Outcome::Lost {
            why: format!("it could not be written into the new directory: {e}"),
        };
    }
    if events < claimed {
        Outcome::Truncated {
            events,
            claimed,
            why: stopped
                .strip_prefix(&format!("event {}: ", events + 1))
                .unwrap_or(&stopped)
                .to_string(),
        }
    } else if let Some(r) = differs {
        Outcome::Unconfirmed {
            events,
            why: format!(
                "event {} differs from the one the store's checkpoint manifest names",
                r.seq
            ),
        }
    } else if extended > 0 {
        Outcome::Unconfirmed {
            events,
            why: format!(
                "{extended} events past the {claimed} the store's index holds were found in its files"
            ),
        }
    } else if let Some(why) = index_broken.or_else(|| journal.unconfirmed.clone()) {
        Outcome::Unconfirmed { events, why }
    } else {
        Outcome::Intact { events }
    }
}

/// A game whose first events are in no place that names it (sled's index unreadable, the
/// journal holding only its latest events): its chain followed back through the raw files,
/// each envelope's `prev` naming the one before.
fn backfill(pool: &mut BTreeMap<u64, Vec<Vec<u8>>>, raw: &RawIndex) {
    if pool.contains_key(&1) {
        return;
    }
    let Some((&lowest, versions)) = pool.iter().next() else {
        return;
    };
    let mut wanted: Vec<LogHash> = versions
        .iter()
        .filter_map(|v| chain::envelope_at(v).filter(|f| f.len == v.len()))
        .map(|f| f.prev)
        .collect();
    let mut seq = lowest;
    while seq > 1 {
        seq -= 1;
        let found: Vec<Vec<u8>> = wanted
            .iter()
            .filter(|h| raw.spots.get(*h).is_some_and(|s| s.seq == seq))
            .filter_map(|h| raw.bytes(h))
            .collect();
        if found.is_empty() {
            return;
        }
        wanted = found
            .iter()
            .filter_map(|v| raw.spots.get(&LogHash::of(v)).map(|s| s.prev))
            .collect();
        pool.insert(seq, found);
    }
}

/// The newest metadata of `key` that decodes and fits its salvaged log: the journal's since
/// sled's last checkpoint, then sled's, then the journal's older ones. The bytes are kept as
/// stored, with any mark (a game found rolled back stays so).
fn pick_meta(
    key: &GameKey,
    sled: Option<&SledView>,
    journal: &JournalView,
    raw: &RawIndex,
    entries: &[protocol::chain::Entry],
) -> Result<Vec<u8>, MetaLost> {
    let journaled = journal.metas.get(key).map(Vec::as_slice).unwrap_or(&[]);
    let newer = |(at, _): &&(At, Vec<u8>)| journal.epoch.is_none_or(|e| at.0 >= e);
    let mut candidates: Vec<Vec<u8>> = journaled
        .iter()
        .rev()
        .filter(newer)
        .map(|(_, m)| m.clone())
        .collect();
    candidates.extend(sled.and_then(|s| s.meta(key)));
    candidates.extend(
        journaled
            .iter()
            .rev()
            .filter(|m| !newer(m))
            .map(|(_, m)| m.clone()),
    );
    // Last, the versions sled's raw log holds, in no known order: seeds are only ever added,
    // so the one with the most seeds that fits the log is the newest.
    let mut found: Vec<(usize, Vec<u8>)> = raw
        .metas
        .get(key)
        .into_iter()
        .flatten()
        .filter_map(|m| Some((GameMeta::decode(m).ok()?.seeds.len(), m.clone())))
        .collect();
    found.sort_by_key(|(seeds, _)| std::cmp::Reverse(*seeds));
    candidates.extend(found.into_iter().map(|(_, m)| m));
    if candidates.is_empty() {
        return Err(MetaLost::Nowhere);
    }
    let mut why = String::new();
    for bytes in candidates {
        let meta = match GameMeta::decode(&bytes) {
            Ok(meta) => meta,
            Err(e) => {
                why = e.to_string();
                continue;
            }
        };
        if !meta.seeds.is_empty() {
            if let Err(e) = protocol::referee::Referee::load(entries.to_vec(), meta.seeds.clone()) {
                why = format!("its metadata does not fit its log ({e})");
                continue;
            }
        }
        return Ok(match GameMarks::decode(&bytes) {
            Ok(_) => bytes,
            Err(_) => meta.encode(),
        });
    }
    Err(MetaLost::Unusable { why })
}

/// The notification space (seats' registrations, notices owed): sled's, with the journal's
/// later writes over it.
fn copy_notify(
    sled: Option<&SledView>,
    journal: &JournalView,
    store: &SledStore,
    report: &mut SalvageReport,
) {
    let mut records: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    if let Some(view) = sled {
        let read = without_panics(|| {
            for entry in view.trees.notify.iter() {
                let (k, v) = entry?;
                records.insert(k.to_vec(), v.to_vec());
            }
            Ok::<(), TreeUnread>(())
        });
        if let Err(why) = read.unwrap_or_else(|panicked| Err(panicked.into())) {
            report.problems.push(format!(
                "the notification records (seats' registrations) cannot all be read ({why})"
            ));
        }
    }
    for (at, key, value) in &journal.notify {
        if sled.is_some() && journal.epoch.is_some_and(|e| at.0 < e) {
            continue;
        }
        match value {
            Some(value) => records.insert(key.clone(), value.clone()),
            None => records.remove(key),
        };
    }
    let count = records.len();
    for (key, value) in records {
        if let Err(e) = store.put_notify(key, Some(value)).wait() {
            report
                .problems
                .push(format!("a notification record was not copied: {e}"));
            return;
        }
    }
    if count > 0 {
        report
            .notes
            .push(format!("{count} notification records copied"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scratch copy holds sled's files only, each as it reads (holes as holes), and no
    /// more data than its limit: at the limit it is made, one byte past it nothing is.
    #[test]
    fn the_copy_takes_sleds_files_data_only_up_to_its_limit() {
        let root = tempfile::tempdir().unwrap();
        let from = root.path().join("damaged");
        std::fs::create_dir_all(from.join("blobs")).unwrap();
        let data: Vec<u8> = (0..8192u32).map(|n| (n % 251) as u8 + 1).collect();
        std::fs::write(from.join("db"), &data).unwrap();
        std::fs::write(from.join("blobs/1"), &data[..4096]).unwrap();
        // A snapshot with data after a hole of 64 MiB and a hole at its end.
        let snap = File::create(from.join("snap.0000000000000001")).unwrap();
        snap.write_all_at(&data[..4096], 64 << 20).unwrap();
        snap.set_len(128 << 20).unwrap();
        // Not sled's: a sparse gigabyte and a journal, never copied.
        File::create(from.join("planted"))
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        std::fs::write(from.join(journal::FILE_NAME), &data).unwrap();
        let held = |path: &Path| std::fs::metadata(path).unwrap().blocks() * 512;
        let data_max = held(&from.join("db"))
            + held(&from.join("blobs/1"))
            + held(&from.join("snap.0000000000000001"));

        let past = root.path().join("past");
        let refused = copy_tree(&from, &past, data_max - 1).unwrap_err();
        assert!(
            matches!(refused, SalvageError::TooMuchData { .. }),
            "{refused}"
        );
        let refused = refused.to_string();
        assert!(
            refused.contains(&format!("more than the {} salvage copies", data_max - 1)),
            "{refused}"
        );
        assert!(!past.exists(), "nothing is copied past the limit");

        let at = root.path().join("at");
        assert_eq!(
            copy_tree(&from, &at, data_max).unwrap(),
            Vec::<String>::new()
        );
        let mut names: Vec<String> = std::fs::read_dir(&at)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["blobs", "db", "snap.0000000000000001"]);
        assert_eq!(std::fs::read(at.join("db")).unwrap(), data);
        assert_eq!(std::fs::read(at.join("blobs/1")).unwrap(), data[..4096]);
        let copy = at.join("snap.0000000000000001");
        assert_eq!(std::fs::metadata(&copy).unwrap().len(), 128 << 20);
        let mut four = vec![0u8; 4096];
        File::open(&copy)
            .unwrap()
            .read_exact_at(&mut four, 64 << 20)
            .unwrap();
        assert_eq!(four, data[..4096]);
        assert!(held(&copy) < 1 << 20, "the holes stay holes");
    }

    /// A link among sled's files is named and left; a journal that is one is not read.
    #[test]
    fn links_are_named_and_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("db"), b"theirs").unwrap();
        let from = root.path().join("damaged");
        std::fs::create_dir(&from).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("db"), from.join("db")).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("db"), from.join(journal::FILE_NAME)).unwrap();
        let skipped = copy_tree(&from, &root.path().join("copy"), 1 << 20).unwrap();
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(
            skipped[0].contains("db is a symbolic link (to "),
            "{skipped:?}"
        );
        assert!(!root.path().join("copy/db").exists());
        let mut report = SalvageReport::default();
        read_journal(&from, &mut report);
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.contains("journal is a symbolic link")),
            "{:?}",
            report.notes
        );
        let climbs = resolved(&root.path().join("nowhere/../x")).unwrap_err();
        assert!(matches!(climbs, SalvageError::Climbs { .. }), "{climbs}");
        assert_eq!(
            climbs.to_string(),
            format!(
                "{} climbs (`..`) out of a directory that does not exist: name the target without `..`",
                root.path().join("nowhere/../x").display()
            )
        );
    }

    /// Records of the newest epoch lost in the middle, or a later epoch than the header names,
    /// are named as the server's own opening names them; older epochs' gaps (checkpointed into
    /// sled) and a damaged last record (a torn write to the journal) are not.
    #[test]
    fn records_lost_from_the_newest_epoch_are_named() {
        let found = |records: &[(u64, u64)]| -> Vec<journal::Found> {
            records.iter().map(|&(e, n)| (e, n, vec![])).collect()
        };
        let why = |e, r: &[(u64, u64)]| records_lost(e, &found(r)).map(|(why, _)| why);
        assert_eq!(
            records_lost(Some(4), &found(&[(4, 0), (4, 1), (4, 2)])),
            None
        );
        assert_eq!(
            records_lost(Some(4), &found(&[(3, 0), (3, 5), (4, 0)])),
            None
        );
        assert_eq!(records_lost(Some(4), &found(&[(4, 0), (4, 1)])), None);
        assert_eq!(records_lost(None, &found(&[(4, 1)])), None);
        assert_eq!(
            why(Some(4), &[(4, 0), (4, 2)]).as_deref(),
            Some("record 1 of epoch 4 is unreadable while record 2 after it is valid")
        );
        assert_eq!(
            why(Some(4), &[(4, 1)]).as_deref(),
            Some("record 0 of epoch 4 is unreadable while record 1 after it is valid")
        );
        assert_eq!(
            why(Some(4), &[(4, 0), (5, 0)]).as_deref(),
            Some("its header says epoch 4, but record 0 of epoch 5 is valid")
        );
        assert_eq!(
            records_lost(Some(4), &found(&[(4, 0), (4, 3)])).map(|(_, n)| n),
            Some(Some(1))
        );
    }

    /// sled's log keeps an insert into the `games` tree with its whole key beside the value:
    /// metadata is found in the raw file, under its game, and nothing else is taken for it.
    #[test]
    fn metadata_is_found_in_sleds_raw_log_under_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let meta = GameMeta {
            format: envelope::META_FORMAT,
            token_digests: [[1; 32], [2; 32], [3; 32]],
            seeds: vec![[4; 32]],
        };
        let newer = GameMeta {
            seeds: vec![[4; 32], [5; 32]],
            ..meta.clone()
        };
        {
            let db = sled::Config::new().path(dir.path()).open().unwrap();
            let games = db.open_tree("games").unwrap();
            games.insert([7u8; 16], meta.encode()).unwrap();
            db.flush().unwrap();
            games.insert([7u8; 16], newer.encode()).unwrap();
            games.insert([8u8; 16], meta.encode()).unwrap();
            db.flush().unwrap();
            // Enough inserts that sled writes the tree's node whole instead of one insert.
            for n in 20..60u8 {
                games.insert([n; 16], meta.encode()).unwrap();
                db.flush().unwrap();
            }
        }
        let mut report = SalvageReport::default();
        let raw = scan_raw(dir.path(), &mut report);
        let found = |key: [u8; 16]| -> Vec<GameMeta> {
            raw.metas
                .get(&key)
                .into_iter()
                .flatten()
                .map(|m| GameMeta::decode(m).unwrap())
                .collect()
        };
        assert!(found([7; 16]).contains(&newer), "{:?}", raw.metas.keys());
        assert!(found([8; 16]).contains(&meta));
        assert!(found([7; 16])
            .iter()
            .all(|m| m.token_digests == meta.token_digests));
        assert_eq!(raw.metas.len(), 42);
        assert!((20..60u8).all(|n| found([n; 16]).contains(&meta)));
        // Some of them in a whole node of the tree, keys first and values after.
        let db = std::fs::read(dir.path().join("db")).unwrap();
        assert!(
            (0..db.len()).any(|at| sled_meta_leaf(&db[at..]).is_some_and(|leaf| leaf.len() > 2))
        );
        assert_eq!(sled_varint(&[240]), Some((240, 1)));
        assert_eq!(sled_varint(&[241, 1]), Some((241, 2)));
        assert_eq!(sled_varint(&[249, 0, 0]), Some((2288, 3)));
    }
}
