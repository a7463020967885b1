//! The default store: sled, in a data directory. Two trees: `events` (key = game key ‖
//! big-endian sequence, value = the encoded envelope) and `games` (key = game key, value =
//! metadata).
//!
//! Group commit: one committer thread owns every write. Callers hand their writes to its queue
//! and wait on a [`Durable`]; the committer takes everything queued, checks each append's
//! sequence, writes the group as one record of the store's journal (`journal.rs`: one direct
//! `pwrite` and one `fdatasync`), gives its inserts to sled's memory, and only then settles each
//! write. One sync costs the same for one event as for hundreds, so while
//! one runs, the writes of every other game pile up and share the next. When the store is
//! quiet — nothing queued, the committer idle, its last group a single write — an append is
//! committed the same way on the caller's own thread instead ([`SledStore::append`]): one game
//! alone then pays its sync without two thread wake-ups around it. An acknowledged event
//! is on the disk's stable storage, not just in the kernel's or the drive's cache, and a crash
//! never leaves half of a group — so never half of a command's events. sled itself is flushed
//! and its files synced ([`Disk`]) at a checkpoint, when the journal is full, at shutdown, and
//! after opening replays the journal into it.
//!
//! After a failed write (a full disk, an I/O error) sled's handle refuses every later write,
//! and its memory may hold what the disk does not. The committer then probes the directory on
//! each later group; once the disk takes writes again it reopens sled, gives it the journal's
//! acknowledged records again, checks every game it wrote against the disk (an unacknowledged
//! tail is removed, acknowledged events that are gone make that game refuse writes, loudly),
//! checkpoints, and resumes. Reads go on meanwhile.

use super::journal::{self, Insert, Journal, Tree};
use super::manifest::{self, Reach, Reaches};
use super::{event_key, Durable, EventStore, GameKey, NotifyRecords, NotifyWrites, StoreError};
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write as _};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, RwLock};
use std::thread;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;
use tracing::{error, info, warn};

/// How long letting go of sled waits for its lock on the directory to be released: sled's own
/// I/O threads hold the database a moment after its last handle is dropped, until the write or
/// file truncation they were finishing ends, and a reader may still hold the old handle for
/// one read. Past this a reopen after a write failure fails (the next group tries again), and
/// a dropped store returns anyway (the next opener is then told the directory is in use).
const LOCK_RELEASE_WAIT: Duration = Duration::from_secs(5);

/// Why a data directory could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Another process (another `asl-server`, or a tool) holds sled's lock on the directory.
    #[error("another asl-server is using this data directory ({0})")]
    Locked(String),
    /// sled could not read its files, or panicked reading them: the store is damaged.
    #[error("the store's files cannot be read: {0}")]
    Damaged(String),
    /// The directory or a file in it could not be created, opened or synced.
    #[error("{0}")]
    Io(String),
}

/// What a panic caught by [`without_panics`] carried, as text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Panicked(pub String);

/// Why the committer could not make a write, a checkpoint or a recovery durable: sled's
/// memory and the disk may disagree until the store recovers. Each names what failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum DiskError {
    /// A file or directory of sled's could not be synced.
    #[error("fdatasync of {} failed: {why}", path.display())]
    Sync { path: PathBuf, why: String },
    /// The checkpoint manifest could not be written durably.
    #[error("writing the checkpoint manifest in {}: {why}", dir.display())]
    Manifest { dir: PathBuf, why: String },
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    /// sled refused a write, flush or read.
    #[error(transparent)]
    Sled(#[from] sled::Error),
    /// sled panicked mid-write.
    #[error("sled panicked: {0}")]
    Panicked(Panicked),
    /// The data directory does not take a durable write, or its files cannot be synced.
    #[error("{0}")]
    Disk(String),
    /// sled's files could not be opened again after a failure.
    #[error("reopening the store failed: {0}")]
    Reopen(String),
    /// A read of the store while re-checking what it holds failed.
    #[error("{0}")]
    Store(#[from] StoreError),
}

#[derive(Clone)]
pub(crate) struct Trees {
    pub(crate) db: sled::Db,
    pub(crate) events: sled::Tree,
    pub(crate) games: sled::Tree,
    /// Registrations and the outbox of notices owed (`crate::notify`).
    pub(crate) notify: sled::Tree,
}

pub struct SledStore {
    /// The open database. Readers clone the handles and let go of the lock at once; the
    /// committer swaps in a reopened database after a write failure (`None` only if that
    /// reopen failed: reads then say so until a later one succeeds).
    trees: Arc<RwLock<Option<Trees>>>,
    /// The committer's queue. Unbounded because its callers bound it: a game task hands over
    /// one command's append and waits for it, and a creation waits for its own two writes, so
    /// at most `games + connections` writes are ever queued. `None` only while dropping.
    queue: Option<mpsc::Sender<Write>>,
    /// The one writer: the committer thread locks it for each group it takes from the queue,
    /// and a quiet store's caller locks it to commit its own append (`append`).
    writer: Arc<Mutex<Committer>>,
    pace: Arc<Pace>,
    committer: Option<thread::JoinHandle<()>>,
    /// The data directory, whose lock a dropped store waits to see released.
    dir: PathBuf,
    /// While set, syncing and probing fail as on a disk that refuses writes (tests, drills).
    fault: Arc<AtomicBool>,
    /// When set, the next group's write panics inside the committer, as sled does on some
    /// damage (tests); cleared by that panic.
    panic_next: Arc<AtomicBool>,
    ceilings: Ceilings,
    missing: Missing,
}

/// After a failed group, the last acknowledged sequence of each game it wrote: sled's memory
/// may hold the refused records, and reads must not hand them out until recovery has put the
/// disk and memory back in step.
type Ceilings = Arc<std::sync::Mutex<HashMap<GameKey, u64>>>;

/// Games whose log in sled, when the store opened, fell short of (or differed from) what the
/// checkpoint manifest says was acknowledged, with the words that say so: neither read nor
/// written as if whole. Set once at open; one entry per such game.
type Missing = Arc<HashMap<GameKey, String>>;

type Settle = oneshot::Sender<Result<(), StoreError>>;

/// How busy the store is, as the choice between the queue and committing on the caller's
/// thread reads it.
#[derive(Default)]
struct Pace {
    /// Writes handed to the queue and not yet committed: while any is, a write goes behind it.
    queued: AtomicUsize,
    /// How many writes the last group held. A group of one means the store is quiet; more
    /// means games are waiting on each other's syncs, where the queue's grouping is what
    /// keeps their throughput, so writes keep going through it.
    last_group: AtomicUsize,
}

/// A write on its way to the committer, or a read that must see no write half done.
enum Write {
    Append {
        game: GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        /// The notices the records owe: in the same journal record, or refused with them.
        notify: NotifyWrites,
        settle: Settle,
    },
    Meta {
        game: GameKey,
        meta: Vec<u8>,
        settle: Settle,
    },
    /// A record of the notification space set (`Some`) or removed.
    Notify {
        key: Vec<u8>,
        value: Option<Vec<u8>>,
        settle: Settle,
    },
    /// A checkpoint now, as when the journal is full (tests and drills: filling the journal
    /// takes 16 MiB of writes).
    Checkpoint { settle: Settle },
    /// A game's metadata and whole log as of between two groups: a consistent copy.
    Snapshot {
        game: GameKey,
        reply: oneshot::Sender<Result<Snapshot, StoreError>>,
    },
}

/// One game as the committer saw it between groups.
pub type Snapshot = (Option<Vec<u8>>, Vec<(u64, Vec<u8>)>);

fn io(e: sled::Error) -> StoreError {
    StoreError::Io(e.to_string())
}

fn sync_failed(what: &Path, e: io::Error) -> DiskError {
    DiskError::Sync {
        path: what.to_path_buf(),
        why: e.to_string(),
    }
}

/// The last sequence stored for `game` in `events`, 0 for none.
fn last_seq(events: &sled::Tree, game: &GameKey) -> Result<u64, StoreError> {
    match events.scan_prefix(game).next_back() {
        None => Ok(0),
        Some(entry) => {
            let (key, _) = entry.map_err(io)?;
            seq_of(&key)
        }
    }
}

fn seq_of(key: &[u8]) -> Result<u64, StoreError> {
    let bytes: [u8; 8] = key
        .get(16..)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| StoreError::Io("an event key is not 24 bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}

fn load_from(events: &sled::Tree, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
    events
        .scan_prefix(game)
        .map(|entry| {
            let (key, value) = entry.map_err(io)?;
            Ok((seq_of(&key)?, value.to_vec()))
        })
        .collect()
}

/// What a panic carried, as text.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs `f`, turning a panic into an error and keeping the panic hook from printing it (with
/// a backtrace): sled panics on some damaged files, and the caller names the damage.
///
/// Game tasks load games through this on many threads at once, so the hook is installed once
/// for the process and asks per panic whether it is one to keep quiet. Swapping the hook in
/// and out around each call would race: two calls overlapping could leave a hook behind that
/// silences one thread for good, and each call would wrap the hook in one more closure.
pub fn without_panics<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    quiet::install();
    let _quiet = quiet::Scope::enter();
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| Panicked(panic_text(&*payload)))
}

/// Which panics the process's hook keeps from printing.
mod quiet {
    use std::cell::Cell;
    use std::panic;
    use std::sync::Once;
    use std::thread;
    use tracing::error;

    thread_local! {
        /// How many [`Scope`]s this thread is inside.
        static DEPTH: Cell<usize> = const { Cell::new(0) };
    }

    static INSTALLED: Once = Once::new();

    /// Puts the hook in front of whatever hook the process had, once. A panic inside a
    /// [`Scope`] is not printed: it reaches the caller as an error. One on sled's own threads
    /// (named `sled-…`, they read and write its files for every caller) is logged as one line,
    /// without a backtrace: it is sled meeting damage, and the caller waiting on that thread
    /// fails with its own error.
    pub(super) fn install() {
        INSTALLED.call_once(|| {
            let previous = panic::take_hook();
            panic::set_hook(Box::new(move |info| {
                if DEPTH.with(|d| d.get()) > 0 {
                    return;
                }
                let current = thread::current();
                match current.name() {
                    Some(name) if name.starts_with("sled-") => {
                        error!(thread = name, %info, "sled's own thread panicked")
                    }
                    _ => {
                        #[cfg(test)]
                        PASSED_ON.with(|n| n.set(n.get() + 1));
                        previous(info)
                    }
                }
            }));
        });
    }

    /// Panics on this thread are quiet until this is dropped, even by unwinding.
    pub(super) struct Scope(());

    impl Scope {
        pub(super) fn enter() -> Scope {
            DEPTH.with(|d| d.set(d.get() + 1));
            Scope(())
        }
    }

    impl Drop for Scope {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
        }
    }

    #[cfg(test)]
    thread_local! {
        /// How many of this thread's panics the hook passed on to the hook before it.
        static PASSED_ON: Cell<usize> = const { Cell::new(0) };
    }

    /// How many of this thread's panics were passed on to be printed: for tests.
    #[cfg(test)]
    pub(super) fn passed_on_here() -> usize {
        PASSED_ON.with(|n| n.get())
    }
}

/// Opens sled in `dir` and its two trees, turning sled's errors and panics into [`OpenError`].
pub(crate) fn open_trees(dir: &Path) -> Result<Trees, OpenError> {
    let opened = without_panics(|| -> sled::Result<Trees> {
        // No background flusher: the committer flushes after every group, and a flusher
        // thread would keep the database (and its file lock) alive for up to its period after
        // the store is dropped, so the directory could not be reopened at once.
        let db = sled::Config::new().path(dir).flush_every_ms(None).open()?;
        let events = db.open_tree("events")?;
        let games = db.open_tree("games")?;
        let notify = db.open_tree("notify")?;
        Ok(Trees {
            db,
            events,
            games,
            notify,
        })
    });
    match opened {
        Err(panicked) => Err(OpenError::Damaged(format!("sled panicked: {panicked}"))),
        Ok(Err(sled::Error::Io(e))) if e.to_string().contains("could not acquire lock") => {
            Err(OpenError::Locked(e.to_string()))
        }
        Ok(Err(sled::Error::Io(e))) => Err(OpenError::Io(e.to_string())),
        Ok(Err(e)) => Err(OpenError::Damaged(e.to_string())),
        Ok(Ok(trees)) => Ok(trees),
    }
}

/// sled's files as the committer makes them durable. sled 0.34 writes its log to `db` with
/// `pwrite` and `sync_file_range`, which puts the bytes in the drive but not past its volatile
/// cache, and never syncs `conf` or a large value's file in `blobs/`; its snapshots (`snap.*`)
/// it syncs itself, and they are only a shortcut for recovery from the log. So after each
/// flush: `fdatasync` on `db`, and on every blob file not yet synced with the `blobs/`
/// directory that names it.
struct Disk {
    dir: PathBuf,
    db: File,
    blobs: PathBuf,
    blobs_synced: HashSet<OsString>,
    blobs_modified: Option<SystemTime>,
    fault: Arc<AtomicBool>,
    /// Run on each blob file between listing it and syncing it: where a test plays sled's
    /// I/O threads removing it.
    #[cfg(test)]
    before_blob_sync: Option<fn(&Path)>,
}

impl Disk {
    /// Opens sled's files for syncing and syncs what sled wrote while opening: `conf`, `db`
    /// and the directories that name them.
    fn open(dir: &Path, fault: Arc<AtomicBool>) -> io::Result<Disk> {
        let db = File::open(dir.join("db"))?;
        let mut disk = Disk {
            dir: dir.to_path_buf(),
            db,
            blobs: dir.join("blobs"),
            blobs_synced: HashSet::new(),
            blobs_modified: None,
            fault,
            #[cfg(test)]
            before_blob_sync: None,
        };
        File::open(dir.join("conf"))?.sync_all()?;
        disk.db.sync_all()?;
        File::open(dir)?.sync_all()?;
        disk.sync_blobs()?;
        Ok(disk)
    }

    fn injected(&self) -> io::Result<()> {
        if self.fault.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated disk failure"));
        }
        Ok(())
    }

    /// Makes everything sled has flushed durable.
    fn sync(&mut self) -> Result<(), DiskError> {
        self.injected()
            .and_then(|()| self.db.sync_data())
            .map_err(|e| sync_failed(&self.dir.join("db"), e))?;
        self.sync_blobs().map_err(|e| sync_failed(&self.blobs, e))
    }

    /// Syncs blob files written since the last look (the directory's mtime says whether there
    /// are any), then the directory.
    ///
    /// sled writes a blob file from the thread that inserts (here, the committer's), but
    /// removes one from its I/O threads whenever the page pointing to it has been superseded
    /// (`remove_blob` in sled's segment accountant, and for an aborted reservation), at any
    /// moment, this sync included. A file listed here and gone when it is opened was removed by
    /// sled because nothing points to it any more: there is nothing of it to make durable, and
    /// sled itself ignores a failed removal for the same reason. Any other error is one.
    fn sync_blobs(&mut self) -> io::Result<()> {
        let modified = std::fs::metadata(&self.blobs)?.modified()?;
        if self.blobs_modified == Some(modified) {
            return Ok(());
        }
        let mut present = HashSet::new();
        for entry in std::fs::read_dir(&self.blobs)? {
            let entry = entry?;
            let name = entry.file_name();
            if !self.blobs_synced.contains(&name) {
                #[cfg(test)]
                if let Some(hook) = self.before_blob_sync {
                    hook(&entry.path());
                }
                match File::open(entry.path()).and_then(|file| file.sync_data()) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                }
            }
            present.insert(name);
        }
        File::open(&self.blobs)?.sync_all()?;
        self.blobs_synced = present;
        self.blobs_modified = Some(modified);
        Ok(())
    }

    /// Writes the checkpoint manifest (`manifest.rs`) durably.
    fn write_manifest(&self, reaches: &Reaches) -> Result<(), DiskError> {
        self.injected()
            .and_then(|()| manifest::write(&self.dir, reaches))
            .map_err(|e| DiskError::Manifest {
                dir: self.dir.clone(),
                why: e.to_string(),
            })
    }

    /// Whether the directory takes a durable write now: a small file written, synced and
    /// removed.
    fn probe(dir: &Path, fault: &AtomicBool) -> io::Result<()> {
        if fault.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated disk failure"));
        }
        let path = dir.join("probe");
        let written = (|| {
            let mut file = File::create(&path)?;
            file.write_all(&[0u8; 4096])?;
            file.sync_data()
        })();
        let _ = std::fs::remove_file(&path);
        written?;
        File::open(dir)?.sync_all()
    }
}

impl SledStore {
    /// Opens (or creates) the store in `dir`, makes what sled wrote while opening durable, and
    /// starts the committer.
    pub fn open(dir: &Path) -> Result<SledStore, OpenError> {
        // Owner-only before sled writes a byte: its files hold every log and dice seed.
        crate::signing::private::create_dir(dir)
            .map_err(|e| OpenError::Io(format!("cannot make {} owner-only: {e}", dir.display())))?;
        let trees = open_trees(dir)?;
        crate::signing::private::tighten(dir).map_err(|e| {
            OpenError::Io(format!(
                "cannot make sled's files in {} owner-only: {e}",
                dir.display()
            ))
        })?;
        let fault = Arc::new(AtomicBool::new(false));
        let panic_next = Arc::new(AtomicBool::new(false));
        let mut disk = Disk::open(dir, fault.clone())
            .map_err(|e| OpenError::Io(format!("cannot sync sled's files: {e}")))?;
        let (mut journal, inserts) = Journal::open(dir, fault.clone()).map_err(|e| match e {
            journal::OpenFailure::Io(e) => OpenError::Io(e),
            journal::OpenFailure::Damaged(e) => OpenError::Damaged(e),
        })?;
        // How far each game reached at the last checkpoint, as a file apart from sled's says:
        // what sled must still hold once the journal is applied.
        let manifest = manifest::read(dir).map_err(|e| {
            OpenError::Damaged(format!(
                "{e}; without it the store cannot tell whether sled's files lost events it acknowledged (`asl-server salvage` copies every game whose chain verifies)"
            ))
        })?;
        let first_manifest = manifest.is_none();
        let opened = without_panics(
            || -> Result<(Reaches, HashMap<GameKey, String>), DiskError> {
                let mut reaches = match &manifest {
                    Some(reaches) => reaches.clone(),
                    // Written before manifests: sled's word is all there is, this once.
                    None => reaches_in(&trees)?,
                };
                for (tree, key, value) in &inserts {
                    if *tree != Tree::Events {
                        continue;
                    }
                    let (Ok(game), Ok(seq)) = (GameKey::try_from(&key[..16]), seq_of(key)) else {
                        continue;
                    };
                    if reaches.get(&game).is_none_or(|r| r.seq <= seq) {
                        reaches.insert(game, Reach::of(seq, value));
                    }
                }
                if !journal.is_empty() {
                    // What was acknowledged since sled's last checkpoint: given to sled again, then
                    // checkpointed (below), so the store starts with an empty journal.
                    replay(&trees, inserts)?;
                }
                let missing = match &manifest {
                    Some(checked) => short_of(&trees, checked),
                    None => HashMap::new(),
                };
                for game in reaches.keys() {
                    // Without its metadata (token digests, dice seeds) a game cannot be served
                    // or even listed: named here, since nothing else will name it.
                    if let Ok(false) = trees.games.contains_key(game) {
                        error!(game = %super::envelope::game_id(game), "DAMAGED: sled's files lost this game's metadata (its tokens' digests and dice seeds), so it is not listed or served; restore it from a backup, or salvage the directory");
                    }
                }
                if !journal.is_empty() || first_manifest {
                    // A game found short keeps the reach it was acknowledged at, so it stays
                    // named on every start until it is restored.
                    checkpoint(&trees, &mut disk, &mut journal, &reaches)?;
                }
                Ok((reaches, missing))
            },
        );
        let (reaches, missing) = match opened {
            Err(panicked) => {
                return Err(OpenError::Damaged(format!(
                    "sled panicked reading its files or taking the journal's writes: {panicked}"
                )))
            }
            Ok(Err(e)) => {
                return Err(OpenError::Io(format!(
                    "cannot apply the journal to sled and check it: {e}"
                )))
            }
            Ok(Ok(opened)) => opened,
        };
        if !missing.is_empty() {
            error!(
                games = missing.len(),
                "sled's files lack events the server acknowledged (the store's checkpoint manifest says how far each game reached): those games are not served; restore them from a backup, or salvage the directory"
            );
        }
        if first_manifest && !reaches.is_empty() {
            info!(
                games = reaches.len(),
                "no checkpoint manifest yet: written now from sled's files, and checked at every later start"
            );
        }
        let missing: Missing = Arc::new(missing);
        let trees = Arc::new(RwLock::new(Some(trees)));
        let ceilings = Ceilings::default();
        let (queue, writes) = mpsc::channel();
        let committer = Committer {
            dir: dir.to_path_buf(),
            trees: trees.clone(),
            disk: Some(disk),
            journal,
            last: HashMap::new(),
            lost: HashMap::new(),
            failed: None,
            fault: fault.clone(),
            panic_next: panic_next.clone(),
            ceilings: ceilings.clone(),
            reaches,
            missing: missing.clone(),
        };
        let writer = Arc::new(Mutex::new(committer));
        let pace = Arc::new(Pace::default());
        let committer = thread::Builder::new()
            .name("sled-committer".into())
            .spawn({
                let (writer, pace) = (writer.clone(), pace.clone());
                move || Committer::run(&writer, &pace, writes)
            })
            .map_err(|e| OpenError::Io(format!("cannot start the committer thread: {e}")))?;
        Ok(SledStore {
            trees,
            queue: Some(queue),
            writer,
            pace,
            committer: Some(committer),
            dir: dir.to_path_buf(),
            fault,
            panic_next,
            ceilings,
            missing,
        })
    }

    /// Makes the committer panic in the middle of its next group's write, after sled has taken
    /// the batch and before the flush, as sled itself panics on some damage: for tests of
    /// what the players and the store make of it.
    #[doc(hidden)]
    pub fn simulate_committer_panic(&self) {
        self.panic_next.store(true, Ordering::SeqCst);
    }

    /// Makes the disk refuse writes (`true`) or take them again (`false`), as a full or failing
    /// disk would: for tests and drills of recovery without a restart.
    #[doc(hidden)]
    pub fn simulate_disk_failure(&self, failing: bool) {
        self.fault.store(failing, Ordering::SeqCst);
    }

    fn trees(&self) -> Result<Trees, StoreError> {
        current(&self.trees)
    }

    fn hand_over(&self, write: Write) {
        if let Some(queue) = &self.queue {
            self.pace.queued.fetch_add(1, Ordering::SeqCst);
            // A send fails only if the committer is gone; the write is then dropped unsettled
            // and its waiter hears so.
            if queue.send(write).is_err() {
                self.pace.queued.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// The writer, if the store is quiet: nothing queued, the committer not committing, its
    /// last group a single write, and nothing slow due before a write of `payload_bytes` (a
    /// recovery, a checkpoint), which stays on the committer's thread. Never waits for the lock.
    fn quiet_writer(&self, payload_bytes: usize) -> Option<MutexGuard<'_, Committer>> {
        if self.pace.last_group.load(Ordering::SeqCst) > 1 {
            return None;
        }
        let writer = match self.writer.try_lock() {
            Ok(w) => w,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        // Read under the lock: a queued write is counted before it is sent and uncounted only
        // once committed, under this lock, so none that came before this one is left behind.
        let quick = writer.failed.is_none()
            && payload_bytes <= journal::PAYLOAD_BYTES_MAX
            && writer.journal.has_room(payload_bytes);
        (quick && self.pace.queued.load(Ordering::SeqCst) == 0).then_some(writer)
    }

    fn hand_over_write(&self, write: impl FnOnce(Settle) -> Write) -> Durable {
        let (settle, durable) = Durable::pending();
        self.hand_over(write(settle));
        durable
    }

    /// Refuses to read a game found short of what was acknowledged when the store opened:
    /// what sled has left of it is not to be served as if it were the whole log.
    fn whole(&self, game: &GameKey) -> Result<(), StoreError> {
        match self.missing.get(game) {
            Some(why) => Err(StoreError::Missing(why.clone())),
            None => Ok(()),
        }
    }

    /// Drops records past `game`'s ceiling, while a failure has one.
    fn cap(&self, game: &GameKey, records: &mut Vec<(u64, Vec<u8>)>) {
        if let Some(ceiling) = self.ceilings.lock().expect("ceilings lock").get(game) {
            records.retain(|(seq, _)| seq <= ceiling);
        }
    }

    /// Checkpoints now, between two groups, as when the journal is full: sled flushed, its
    /// files synced, and the journal emptied. For tests and drills of what a start makes of
    /// sled's files after several checkpoints.
    #[doc(hidden)]
    pub fn checkpoint_now(&self) -> Durable {
        self.hand_over_write(|settle| Write::Checkpoint { settle })
    }

    /// `game`'s metadata and whole log, read by the committer between two groups, so no write
    /// is half in it: what a backup copies. Blocks the calling thread.
    pub fn snapshot(&self, game: &GameKey) -> Result<Snapshot, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.hand_over(Write::Snapshot { game: *game, reply });
        answer
            .blocking_recv()
            .unwrap_or_else(|_| Err(super::gone()))
    }
}

impl Drop for SledStore {
    /// Closes the queue, waits for the committer to settle what is queued, lets go of the
    /// database and waits for sled to release the directory, so the same directory can be
    /// opened again as soon as this returns (a restart in place, a test's second server).
    fn drop(&mut self) {
        self.queue = None;
        if let Some(committer) = self.committer.take() {
            let _ = committer.join();
        }
        drop(self.trees.write().unwrap_or_else(|p| p.into_inner()).take());
        await_lock_released(&self.dir);
    }
}

/// Waits, at most [`LOCK_RELEASE_WAIT`], until nothing holds sled's lock on `dir` (an exclusive
/// `flock` on its `db` file, as sled takes it), once this process has dropped its last handle.
fn await_lock_released(dir: &Path) {
    let Ok(db) = File::open(dir.join("db")) else {
        return;
    };
    let started = std::time::Instant::now();
    while let Err(std::fs::TryLockError::WouldBlock) = db.try_lock() {
        if started.elapsed() >= LOCK_RELEASE_WAIT {
            warn!(dir = %dir.display(), "sled still holds the data directory's lock");
            return;
        }
        thread::sleep(Duration::from_millis(2));
    }
    // Taken to test it, and released with `db`.
}

impl EventStore for SledStore {
    /// Queued for the committer; or, on a quiet store, committed right here, which blocks
    /// the calling thread for one journal write and sync — what the caller would wait for
    /// anyway, without the committer's wake-up and its own.
    fn append_with_notify(
        &self,
        game: &GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        notify: NotifyWrites,
    ) -> Durable {
        let key_bytes = event_key(game, first_seq).len();
        let payload_bytes = journal::payload_bytes(
            records.iter().map(|r| (key_bytes, r.len())).chain(
                notify
                    .iter()
                    .map(|(k, v)| (k.len(), v.as_ref().map_or(0, |v| v.len()))),
            ),
        );
        let write = |settle| Write::Append {
            game: *game,
            first_seq,
            records,
            notify,
            settle,
        };
        match self.quiet_writer(payload_bytes) {
            Some(mut writer) => {
                let (settle, durable) = Durable::pending();
                writer.commit_guarded(vec![write(settle)]);
                durable
            }
            None => self.hand_over_write(write),
        }
    }

    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        self.whole(game)?;
        let mut records = load_from(&self.trees()?.events, game)?;
        self.cap(game, &mut records);
        Ok(records)
    }

    fn load_range(
        &self,
        game: &GameKey,
        from: u64,
        bytes_max: usize,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        self.whole(game)?;
        let mut records = vec![];
        let mut bytes = 0;
        let start = event_key(game, from);
        let end = event_key(game, u64::MAX);
        for entry in self.trees()?.events.range(start..=end) {
            let (key, value) = entry.map_err(io)?;
            if !records.is_empty() && bytes + value.len() > bytes_max {
                break;
            }
            bytes += value.len();
            records.push((seq_of(&key)?, value.to_vec()));
        }
        self.cap(game, &mut records);
        Ok(records)
    }

    fn put_meta(&self, game: &GameKey, meta: Vec<u8>) -> Durable {
        self.hand_over_write(|settle| Write::Meta {
            game: *game,
            meta,
            settle,
        })
    }

    fn put_notify(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Durable {
        self.hand_over_write(|settle| Write::Notify { key, value, settle })
    }

    fn notify_records(&self) -> Result<NotifyRecords, StoreError> {
        self.trees()?
            .notify
            .iter()
            .map(|entry| {
                let (key, value) = entry.map_err(io)?;
                Ok((key.to_vec(), value.to_vec()))
            })
            .collect()
    }

    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError> {
        self.trees()?
            .games
            .iter()
            .map(|entry| {
                let (key, value) = entry.map_err(io)?;
                let key: GameKey = key
                    .as_ref()
                    .try_into()
                    .map_err(|_| StoreError::Io("a game key is not 16 bytes".into()))?;
                Ok((key, value.to_vec()))
            })
            .collect()
    }
}

/// The one writer of the database.
struct Committer {
    dir: PathBuf,
    trees: Arc<RwLock<Option<Trees>>>,
    /// `None` from a failure until the reopen that recovers from it.
    disk: Option<Disk>,
    /// Where each group is made durable before sled's memory takes it.
    journal: Journal,
    /// Each game's last durable sequence, as this committer wrote or first read it: the
    /// sequence check without a tree scan per append, and after a failure what the disk must
    /// still hold. Only the committer writes, so it cannot go stale.
    last: HashMap<GameKey, u64>,
    /// Games whose acknowledged events were gone from the disk when it was reopened after a
    /// failure, with what is missing: they take no more writes.
    lost: HashMap<GameKey, String>,
    /// Why a write, flush or sync failed, until the store has recovered: sled's memory and
    /// the disk may disagree, so nothing is written until both are re-checked.
    failed: Option<String>,
    fault: Arc<AtomicBool>,
    panic_next: Arc<AtomicBool>,
    ceilings: Ceilings,
    /// Each game's last sequence and the hash of that record, as acknowledged: what the next
    /// checkpoint writes to the manifest. One entry per game.
    reaches: Reaches,
    /// Games found short of their reach at open: they take no writes.
    missing: Missing,
}

impl Committer {
    /// Commits groups until every sender is gone: each group is everything queued by the time
    /// the previous flush ended.
    ///
    /// A panic while committing (sled panics on some damage) never ends the thread: a panic
    /// in the write itself is a failed write (`commit` catches it, refuses the group naming
    /// the panic, and recovers as after any failure); one anywhere else drops that group's
    /// writers unsettled — they hear that the write was not taken — and the store goes through
    /// recovery before it writes again. No waiter hangs, and later writes are still served.
    fn run(writer: &Mutex<Committer>, pace: &Pace, writes: mpsc::Receiver<Write>) {
        let lock = || writer.lock().unwrap_or_else(|p| p.into_inner());
        while let Ok(first) = writes.recv() {
            let mut group = vec![first];
            group.extend(writes.try_iter());
            let taken = group.len();
            let mut committer = lock();
            committer.commit_guarded(group);
            pace.last_group.store(taken, Ordering::SeqCst);
            pace.queued.fetch_sub(taken, Ordering::SeqCst);
        }
        lock().close();
    }

    /// Commits `group`, turning a panic outside the write itself into a failed store.
    fn commit_guarded(&mut self, group: Vec<Write>) {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| self.commit(group))) {
            let why = format!("the store's committer panicked: {}", panic_text(&*payload));
            error!(%why, "storage failed: this group's writes are refused, and the store recovers before writing again");
            self.failed = Some(why);
            self.disk = None;
        }
    }

    /// At shutdown: sled flushed and synced and the journal emptied, so the next open has
    /// nothing to replay and sled's files alone hold every acknowledged write.
    fn close(&mut self) {
        if self.failed.is_some() || self.journal.is_empty() {
            return;
        }
        let (Ok(trees), Some(disk)) = (self.trees(), self.disk.as_mut()) else {
            return;
        };
        let journal = &mut self.journal;
        let reaches = &self.reaches;
        let checkpointed = without_panics(|| checkpoint(&trees, disk, journal, reaches))
            .unwrap_or_else(|panicked| Err(DiskError::Panicked(panicked)));
        if let Err(why) = checkpointed {
            warn!(%why, "the checkpoint at shutdown failed; the next start replays the journal")
        }
    }

    fn trees(&self) -> Result<Trees, StoreError> {
        current(&self.trees)
    }

    fn commit(&mut self, group: Vec<Write>) {
        if let Some(why) = self.failed.clone() {
            if let Err(still) = self.recover() {
                let refusal = StoreError::Io(format!(
                    "storage failed ({why}) and the disk still refuses writes ({still}); \
                     reads go on, and writes resume once the disk takes them"
                ));
                return refuse_all(group, refusal, |game| self.snapshot(game));
            }
        }
        let trees = match self.trees() {
            Ok(trees) => trees,
            Err(e) => return refuse_all(group, e, |game| self.snapshot(game)),
        };
        let mut inserts: Vec<Insert> = Vec::with_capacity(group.len());
        let mut staged: HashMap<GameKey, u64> = HashMap::new();
        let mut staged_reaches = Reaches::new();
        let mut waiting = Vec::with_capacity(group.len());
        let mut checkpoints = vec![];
        for write in group {
            match write {
                Write::Append {
                    game,
                    first_seq,
                    records,
                    notify,
                    settle,
                } => match self.check(&trees, &staged, &game, first_seq) {
                    Ok(()) => {
                        let last = first_seq - 1 + records.len() as u64;
                        staged.insert(game, last);
                        if let Some(record) = records.last() {
                            staged_reaches.insert(game, Reach::of(last, record));
                        }
                        // The notices the events owe go in the same journal record as the
                        // events (one `fdatasync`), so a crash keeps both or neither.
                        inserts.extend(notify.into_iter().map(notify_insert));
                        for (seq, record) in (first_seq..).zip(records) {
                            inserts.push((Tree::Events, event_key(&game, seq).to_vec(), record));
                        }
                        waiting.push(settle);
                    }
                    Err(refused) => {
                        let _ = settle.send(Err(refused));
                    }
                },
                Write::Meta { game, meta, settle } => {
                    inserts.push((Tree::Games, game.to_vec(), meta));
                    waiting.push(settle);
                }
                Write::Notify { key, value, settle } => {
                    inserts.push(notify_insert((key, value)));
                    waiting.push(settle);
                }
                Write::Checkpoint { settle } => checkpoints.push(settle),
                // Read before this group's writes, after every earlier group's.
                Write::Snapshot { game, reply } => {
                    let _ = reply.send(self.snapshot(&game));
                }
            }
        }
        if waiting.is_empty() {
            return self.checkpoint_for(&trees, checkpoints);
        }
        let disk = self.disk.as_mut().expect("a disk while not failed");
        let journal = &mut self.journal;
        let reaches = &self.reaches;
        let flushing = std::time::Instant::now();
        let panic_next = &self.panic_next;
        let payload = journal::encode(&inserts);
        // A group too large for a journal record is written to sled and flushed directly.
        let journaled = payload.len() <= journal::PAYLOAD_BYTES_MAX;
        let mut appended = false;
        let written = panic::catch_unwind(AssertUnwindSafe(|| {
            if journaled {
                if !journal.has_room(payload.len()) {
                    checkpoint(&trees, disk, journal, reaches)?;
                }
                journal.append(&payload)?;
                appended = true;
                // Key by key: the journal record, not a sled batch, makes the group atomic
                // across a crash, and a sled batch writes sled's log buffer out (its I/O pool,
                // `sync_file_range`) at every call — the work the journal is there to spare.
                // No reader sees a game's half-applied group: a game's log is read by its own
                // task, which is waiting for this write, or through the committer.
                for (tree, key, value) in inserts {
                    let tree = match tree {
                        Tree::Events => &trees.events,
                        Tree::Games => &trees.games,
                        Tree::Notify => &trees.notify,
                        Tree::NotifyRemoved => {
                            trees.notify.remove(key)?;
                            continue;
                        }
                    };
                    tree.insert(key, value)?;
                }
            } else {
                replay(&trees, inserts)?;
            }
            if panic_next.swap(false, Ordering::SeqCst) {
                panic!("simulated panic inside sled");
            }
            if !journaled {
                // In sled's files only: the manifest must say so, as at a checkpoint.
                let mut after = reaches.clone();
                after.extend(staged_reaches.iter().map(|(game, reach)| (*game, *reach)));
                trees.db.flush()?;
                disk.sync()?;
                disk.write_manifest(&after)?;
            }
            Ok(())
        }))
        // sled panicking mid-write is a failed write: sled's memory and the disk may disagree,
        // so it is handled as one (refused, then recovery before anything else is written).
        .unwrap_or_else(|payload| Err(DiskError::Panicked(Panicked(panic_text(&*payload)))));
        crate::operations::metrics::METRICS.store_flushed(waiting.len(), flushing.elapsed());
        let result = match written {
            Ok(()) => {
                self.last.extend(staged);
                self.reaches.extend(staged_reaches);
                Ok(())
            }
            Err(why) => {
                let why = why.to_string();
                error!(%why, "storage failed: the writes of this group are refused, and writes wait for the disk");
                if appended {
                    self.journal.retract();
                } else if journaled {
                    self.journal.unwrite();
                }
                self.failed = Some(why.clone());
                self.disk = None;
                let mut ceilings = self.ceilings.lock().expect("ceilings lock");
                for game in staged.keys() {
                    let acked = self.last.get(game).copied().unwrap_or(0);
                    ceilings.entry(*game).or_insert(acked);
                }
                Err(StoreError::Io(why))
            }
        };
        for settle in waiting {
            let _ = settle.send(result.clone());
        }
        self.checkpoint_for(&trees, checkpoints);
    }

    /// Checkpoints for those who asked (`SledStore::checkpoint_now`), if any did.
    fn checkpoint_for(&mut self, trees: &Trees, asked: Vec<Settle>) {
        if asked.is_empty() {
            return;
        }
        let result = match (&self.failed, self.disk.as_mut()) {
            (None, Some(disk)) => {
                let journal = &mut self.journal;
                let reaches = &self.reaches;
                match without_panics(|| checkpoint(trees, disk, journal, reaches)) {
                    Ok(result) => result.map_err(|e| e.to_string()),
                    Err(panicked) => Err(DiskError::Panicked(panicked).to_string()),
                }
            }
            (Some(why), _) => Err(why.clone()),
            (None, None) => Err("no disk to checkpoint".into()),
        };
        for settle in asked {
            let _ = settle.send(result.clone().map_err(StoreError::Io));
        }
    }

    fn snapshot(&self, game: &GameKey) -> Result<Snapshot, StoreError> {
        if let Some(why) = self.missing.get(game) {
            return Err(StoreError::Missing(why.clone()));
        }
        let trees = self.trees()?;
        let meta = trees.games.get(game).map_err(io)?.map(|m| m.to_vec());
        let mut records = load_from(&trees.events, game)?;
        if let Some(ceiling) = self.ceilings.lock().expect("ceilings lock").get(game) {
            records.retain(|(seq, _)| seq <= ceiling);
        }
        Ok((meta, records))
    }

    /// Refuses an append unless `game`'s log ends just before `first_seq`, counting the
    /// appends `staged` earlier in this group.
    fn check(
        &mut self,
        trees: &Trees,
        staged: &HashMap<GameKey, u64>,
        game: &GameKey,
        first_seq: u64,
    ) -> Result<(), StoreError> {
        if let Some(why) = self.missing.get(game) {
            return Err(StoreError::Missing(format!(
                "{why}; this game takes no writes until it is restored from a backup"
            )));
        }
        if let Some(lost) = self.lost.get(game) {
            return Err(StoreError::Io(format!(
                "this game's log lost acknowledged events in a storage failure ({lost}); restore it from a backup"
            )));
        }
        let last = match staged.get(game).or(self.last.get(game)) {
            Some(last) => *last,
            None => {
                // Read while nothing has failed since the last reopen: what the disk holds.
                let last = last_seq(&trees.events, game)?;
                self.last.insert(*game, last);
                last
            }
        };
        if first_seq != last + 1 {
            return Err(StoreError::SequenceMismatch {
                expected: first_seq.saturating_sub(1),
                found: last,
            });
        }
        Ok(())
    }

    /// After a failure: probes the disk, reopens sled from it, and re-checks every game this
    /// committer wrote against what it acknowledged. A tail that was refused but reached the
    /// disk anyway is removed (its writer was told nothing was written); acknowledged events
    /// that are gone stop that game's writes and are logged.
    fn recover(&mut self) -> Result<(), DiskError> {
        let disk_error = |e: io::Error| DiskError::Disk(e.to_string());
        Disk::probe(&self.dir, &self.fault).map_err(disk_error)?;
        let trees = self.reopen()?;
        let mut disk = Disk::open(&self.dir, self.fault.clone()).map_err(disk_error)?;
        // sled's files hold what it had at its last checkpoint; the journal, every group
        // acknowledged since.
        replay(&trees, self.journal.records()?)?;
        let mut tail = sled::Batch::default();
        let mut removed = 0;
        for (game, acked) in &self.last {
            let on_disk = last_seq(&trees.events, game)?;
            if on_disk > *acked {
                for seq in acked + 1..=on_disk {
                    tail.remove(&event_key(game, seq)[..]);
                }
                removed += on_disk - acked;
            } else if on_disk < *acked {
                let missing = format!("events {}..={} are missing", on_disk + 1, acked);
                error!(game = %crate::store::envelope::game_id(game), %missing, "acknowledged events are gone from the disk after a storage failure; this game takes no more writes");
                self.lost.insert(*game, missing);
            }
        }
        trees.events.apply_batch(tail)?;
        checkpoint(&trees, &mut disk, &mut self.journal, &self.reaches)?;
        self.disk = Some(disk);
        self.failed = None;
        self.ceilings.lock().expect("ceilings lock").clear();
        info!(
            unacknowledged_removed = removed,
            games_lost = self.lost.len(),
            "storage recovered: sled reopened, every game written re-checked, writes resume"
        );
        Ok(())
    }

    /// Lets go of the failed database and opens it again from the disk. Readers wait meanwhile
    /// (for the reopen, not for the disk).
    fn reopen(&mut self) -> Result<Trees, DiskError> {
        let mut slot = self.trees.write().expect("store lock");
        // The old handle must go before sled's lock on the directory can be taken again.
        drop(slot.take());
        await_lock_released(&self.dir);
        let trees = open_trees(&self.dir).map_err(|e| DiskError::Reopen(e.to_string()))?;
        *slot = Some(trees.clone());
        warn!("store reopened after a write failure");
        Ok(trees)
    }
}

/// A write to the notification space as the journal records it.
fn notify_insert((key, value): (Vec<u8>, Option<Vec<u8>>)) -> Insert {
    match value {
        Some(value) => (Tree::Notify, key, value),
        None => (Tree::NotifyRemoved, key, vec![]),
    }
}

/// Gives sled inserts as one batch per tree: the journal's after opening or reopening it, or a
/// group too large for the journal. The notification space goes first and the events last, so
/// sled's log, which a crash cuts short but never reorders, holds no event whose owed notice it
/// lacks.
fn replay(trees: &Trees, inserts: Vec<Insert>) -> Result<(), DiskError> {
    let (mut events, mut games) = (sled::Batch::default(), sled::Batch::default());
    let mut notify = sled::Batch::default();
    for (tree, key, value) in inserts {
        match tree {
            Tree::Events => events.insert(key, value),
            Tree::Games => games.insert(key, value),
            Tree::Notify => notify.insert(key, value),
            Tree::NotifyRemoved => notify.remove(key),
        }
    }
    trees.notify.apply_batch(notify)?;
    trees.games.apply_batch(games)?;
    Ok(trees.events.apply_batch(events)?)
}

/// sled flushed, its files synced, the manifest of how far each game reached written, and a
/// new journal epoch: every write so far is in sled on the disk, and the manifest says how
/// much of it there must be when sled reads its files again (`manifest.rs`).
fn checkpoint(
    trees: &Trees,
    disk: &mut Disk,
    journal: &mut Journal,
    reaches: &Reaches,
) -> Result<(), DiskError> {
    trees.db.flush()?;
    disk.sync()?;
    disk.write_manifest(reaches)?;
    Ok(journal.checkpoint()?)
}

/// Each game's reach as sled holds it now: the manifest's first entries, for a directory
/// written before there were manifests. One scan of the `games` tree and one read per game.
fn reaches_in(trees: &Trees) -> Result<Reaches, DiskError> {
    let mut reaches = Reaches::new();
    for entry in trees.games.iter() {
        let (key, _) = entry?;
        let Ok(game) = GameKey::try_from(key.as_ref()) else {
            continue;
        };
        if let Some(last) = trees.events.scan_prefix(game).next_back() {
            let (key, value) = last?;
            let seq = seq_of(&key)?;
            reaches.insert(game, Reach::of(seq, &value));
        }
    }
    Ok(reaches)
}

/// The games whose log in sled does not reach what `reaches` says was acknowledged — its
/// last event gone, or another in its place — each with words saying so. One point read of
/// sled per game (and a scan's last key for those that fall short).
fn short_of(trees: &Trees, reaches: &Reaches) -> HashMap<GameKey, String> {
    let mut missing = HashMap::new();
    for (game, reach) in reaches {
        let found = without_panics(|| -> Result<_, sled::Error> {
            let record = trees.events.get(event_key(game, reach.seq))?;
            let last = match &record {
                Some(_) => 0,
                None => match trees.events.scan_prefix(game).next_back() {
                    Some(entry) => seq_of(&entry?.0).unwrap_or(0),
                    None => 0,
                },
            };
            Ok((record, last))
        });
        let why = match found {
            Ok(Ok((Some(record), _))) if Reach::of(reach.seq, &record) == *reach => continue,
            Ok(Ok((Some(_), _))) => format!(
                "event {} is not the one the server acknowledged (the store's checkpoint manifest holds another); sled's files were damaged",
                reach.seq
            ),
            Ok(Ok((None, last))) => {
                let ends = if last == 0 {
                    "holds none of its events".to_string()
                } else {
                    format!("ends at event {last}")
                };
                format!(
                    "events the server acknowledged are missing: the store's checkpoint manifest says its log reached event {}, but sled's log {ends}; sled's files were damaged",
                    reach.seq
                )
            }
            // Damage sled finds reading the log: named the same way when the game is read.
            Ok(Err(_)) | Err(_) => continue,
        };
        missing.insert(*game, why);
    }
    missing
}

fn current(trees: &RwLock<Option<Trees>>) -> Result<Trees, StoreError> {
    trees.read().expect("store lock").clone().ok_or_else(|| {
        StoreError::Io(
            "the store could not be reopened after a write failure; it retries on the next write"
                .into(),
        )
    })
}

/// Settles every write of `group` with `refusal`; snapshots are still answered.
fn refuse_all(
    group: Vec<Write>,
    refusal: StoreError,
    snapshot: impl Fn(&GameKey) -> Result<Snapshot, StoreError>,
) {
    for write in group {
        match write {
            Write::Append { settle, .. }
            | Write::Meta { settle, .. }
            | Write::Notify { settle, .. }
            | Write::Checkpoint { settle } => {
                let _ = settle.send(Err(refusal.clone()));
            }
            Write::Snapshot { game, reply } => {
                let _ = reply.send(snapshot(&game));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract;
    use std::collections::BTreeSet;

    #[test]
    fn contract() {
        let dirs = std::cell::RefCell::new(vec![]);
        contract::all(|| {
            let dir = tempfile::tempdir().unwrap();
            let store = SledStore::open(dir.path()).unwrap();
            dirs.borrow_mut().push(dir);
            Box::new(store)
        });
    }

    /// A quiet store commits a lone append on the caller's thread: it is durable when
    /// `append` returns. While the writer is busy, appends queue behind it, in order, and are
    /// committed together once it is free.
    #[test]
    fn a_quiet_store_commits_in_place_and_a_busy_one_queues() {
        use futures_util::FutureExt;
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let g = [3u8; 16];
        let settled = store.append(&g, 1, vec![b"e1".to_vec()]).now_or_never();
        assert!(matches!(settled, Some(Ok(()))), "{settled:?}");

        let busy = store.writer.lock().unwrap();
        let waiting: Vec<Durable> = (0..10u8)
            .map(|n| store.append(&[n + 10; 16], 1, vec![vec![n]]))
            .chain([store.append(&g, 2, vec![b"e2".to_vec()])])
            .collect();
        assert_eq!(store.pace.queued.load(Ordering::SeqCst), 11);
        // Behind the queue even now that the committer may still be waiting for the lock.
        let behind = store.append(&g, 3, vec![b"e3".to_vec()]);
        drop(busy);
        for durable in waiting.into_iter().chain([behind]) {
            durable.wait().unwrap();
        }
        assert_eq!(store.load(&g).unwrap().len(), 3);
        assert_eq!(store.load(&[15; 16]).unwrap(), vec![(1, vec![5])]);
    }

    #[test]
    fn survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let g = [5u8; 16];
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.put_meta(&g, b"m".to_vec()).wait().unwrap();
            store.append(&g, 1, vec![b"e1".to_vec()]).wait().unwrap();
        }
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.load(&g).unwrap(), vec![(1, b"e1".to_vec())]);
        assert_eq!(store.games().unwrap().len(), 1);
        // The sequence check reads the reopened log, not an empty cache.
        assert!(matches!(
            store.append(&g, 1, vec![b"again".to_vec()]).wait(),
            Err(StoreError::SequenceMismatch { found: 1, .. })
        ));
    }

    /// sled panicking inside the committer's write: that group's writers are told, naming the
    /// panic, the thread lives on, and the store recovers and takes the next write at the
    /// sequence it had acknowledged — with the panicked write nowhere, in memory or on disk.
    #[test]
    fn a_panic_inside_sled_refuses_its_group_and_the_store_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let (g, h) = ([8u8; 16], [9u8; 16]);
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.append(&g, 1, vec![b"e1".to_vec()]).wait().unwrap();
            store.simulate_committer_panic();
            let failed = store.append(&g, 2, vec![b"lost".to_vec()]).wait();
            match failed {
                Err(StoreError::Io(why)) => assert!(why.contains("sled panicked"), "{why}"),
                other => panic!("expected a named failure, got {other:?}"),
            }
            assert_eq!(store.load(&g).unwrap(), vec![(1, b"e1".to_vec())]);
            store.append(&g, 2, vec![b"e2".to_vec()]).wait().unwrap();
            store.append(&h, 1, vec![b"h1".to_vec()]).wait().unwrap();
        }
        // The recovery reopened sled, and the dropped store let go of the directory.
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(
            store.load(&g).unwrap(),
            vec![(1, b"e1".to_vec()), (2, b"e2".to_vec())]
        );
        assert_eq!(store.load(&h).unwrap().len(), 1);
    }

    /// A disk that refuses writes: the write is refused and nothing of it counts, later writes
    /// are refused while it lasts and reads go on; once the disk takes writes again the store
    /// resumes without a restart, at the sequence it had acknowledged, and all of it is on disk.
    #[test]
    fn recovers_from_a_failing_disk_without_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let g = [6u8; 16];
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.append(&g, 1, vec![b"e1".to_vec()]).wait().unwrap();
            store.simulate_disk_failure(true);
            let failed = store.append(&g, 2, vec![b"lost".to_vec()]).wait();
            assert!(matches!(failed, Err(StoreError::Io(_))), "{failed:?}");
            let still = store
                .append(&g, 2, vec![b"lost".to_vec()])
                .wait()
                .unwrap_err();
            assert!(
                still.to_string().contains("still refuses writes"),
                "{still}"
            );
            assert_eq!(
                store.load(&g).unwrap(),
                vec![(1, b"e1".to_vec())],
                "reads go on, without the refused write"
            );
            store.simulate_disk_failure(false);
            // The refused write reached sled's memory and maybe its file; after recovery the
            // log ends where it was acknowledged.
            store.append(&g, 2, vec![b"e2".to_vec()]).wait().unwrap();
            store.append(&g, 3, vec![b"e3".to_vec()]).wait().unwrap();
            assert_eq!(store.load(&g).unwrap().len(), 3);
        }
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(
            store.load(&g).unwrap(),
            vec![
                (1, b"e1".to_vec()),
                (2, b"e2".to_vec()),
                (3, b"e3".to_vec())
            ]
        );
    }

    /// The race itself, made certain: a blob file listed by the sync and removed by sled
    /// before it is opened. The sync goes on (before: "fdatasync of …/blobs failed: No such
    /// file or directory", and every write of the group refused), and syncs the rest.
    #[test]
    fn a_blob_file_sled_removes_during_the_sync_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        db.flush().unwrap();
        let mut disk = Disk::open(dir.path(), Arc::new(AtomicBool::new(false))).unwrap();
        std::fs::create_dir_all(&disk.blobs).unwrap();
        for name in ["1001", "1002", "1003"] {
            std::fs::write(disk.blobs.join(name), [7u8; 4096]).unwrap();
        }
        // sled's I/O thread removes the second file between the listing and the sync.
        disk.before_blob_sync = Some(|path: &Path| {
            if path.ends_with("1002") {
                std::fs::remove_file(path).unwrap();
            }
        });
        disk.sync().unwrap();
        let synced: BTreeSet<String> = disk
            .blobs_synced
            .iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        assert_eq!(synced, BTreeSet::from(["1001".into(), "1003".into()]));
        // Any other failure is still one.
        disk.before_blob_sync = None;
        disk.blobs_modified = None;
        disk.blobs_synced.clear();
        disk.fault.store(true, Ordering::SeqCst);
        let failed = disk.sync().unwrap_err();
        assert!(
            matches!(&failed, DiskError::Sync { path, .. } if path.ends_with("db")),
            "{failed}"
        );
    }

    /// sled removes a large value's file in `blobs/` from its own threads once a newer page
    /// supersedes it, at any moment, a checkpoint's sync included. Games appending large
    /// records (a maximum-size scenario's positions) through many checkpoints: every append is
    /// acknowledged, none refused `storage` for a blob file sled took away, and all of it is
    /// there after a reopen.
    #[test]
    fn checkpoints_go_on_while_sled_removes_its_blob_files() {
        let dir = tempfile::tempdir().unwrap();
        let games: Vec<GameKey> = (0..8u8).map(|n| [n + 40; 16]).collect();
        let record = |game: usize, seq: u64| {
            let mut value = vec![game as u8 ^ seq as u8; 48 * 1024];
            value[..8].copy_from_slice(&seq.to_le_bytes());
            value
        };
        // A record or two past what one journal holds, several times over: many checkpoints.
        let per_game = (3 * journal::JOURNAL_BYTES / (48 * 1024) / games.len() as u64) + 1;
        {
            let store = SledStore::open(dir.path()).unwrap();
            for seq in 1..=per_game {
                let waiting: Vec<Durable> = games
                    .iter()
                    .enumerate()
                    .map(|(i, g)| store.append(g, seq, vec![record(i, seq)]))
                    .collect();
                for (i, durable) in waiting.into_iter().enumerate() {
                    if let Err(e) = durable.wait() {
                        panic!("append {seq} of game {i} refused: {e}");
                    }
                }
            }
        }
        let store = SledStore::open(dir.path()).unwrap();
        for (i, g) in games.iter().enumerate() {
            let log = store.load(g).unwrap();
            assert_eq!(log.len() as u64, per_game);
            assert!(log.iter().all(|(seq, v)| *v == record(i, *seq)));
        }
    }

    /// sled's I/O threads hold the database a moment after its last handle goes; a dropped
    /// store waits for them, so a restart in place never finds its own directory in use.
    #[test]
    fn a_dropped_store_can_be_opened_again_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let g = [3u8; 16];
        for seq in 1..=40 {
            let store = SledStore::open(dir.path()).unwrap();
            store
                .append(&g, seq, vec![vec![seq as u8; 64]])
                .wait()
                .unwrap();
            assert_eq!(store.load(&g).unwrap().len() as u64, seq);
        }
    }

    #[test]
    fn a_second_opener_is_told_the_directory_is_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let _first = SledStore::open(dir.path()).unwrap();
        match SledStore::open(dir.path()) {
            Err(OpenError::Locked(_)) => {}
            Err(other) => panic!("expected Locked, got {other}"),
            Ok(_) => panic!("two stores opened one directory"),
        }
    }

    /// Game tasks load games on many threads at once. However their calls overlap, a panic
    /// inside one is an error and quiet, and afterwards a panic elsewhere is printed again on
    /// every one of those threads: no call leaves the process's hook silencing a thread.
    #[test]
    fn overlapping_calls_leave_every_thread_printing_its_panics() {
        let threads: Vec<_> = (0..8)
            .map(|t| {
                thread::spawn(move || {
                    for n in 0..200 {
                        let outcome = without_panics(|| {
                            if (n + t) % 3 == 0 {
                                panic!("damage {t}/{n}")
                            }
                            n
                        });
                        match outcome {
                            Err(e) => assert_eq!(e, Panicked(format!("damage {t}/{n}"))),
                            Ok(v) => assert_eq!(v, n),
                        }
                    }
                    let before = quiet::passed_on_here();
                    let _ = panic::catch_unwind(|| panic!("a panic outside without_panics"));
                    quiet::passed_on_here() - before
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), 1, "a thread's panic was silenced");
        }
    }

    /// sled panics on some damaged files; the store turns that into an error naming it.
    #[test]
    fn a_panic_while_opening_is_an_error() {
        let err =
            without_panics(|| -> u8 { panic!("tried to serialize Uninitialized") }).unwrap_err();
        assert!(err.0.contains("Uninitialized"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.append(&[1; 16], 1, vec![vec![7; 64]]).wait().unwrap();
        }
        // A conf file of garbage: sled refuses it (by error or panic), never a backtrace.
        std::fs::write(dir.path().join("conf"), [0xff; 64]).unwrap();
        match SledStore::open(dir.path()) {
            Err(OpenError::Damaged(_) | OpenError::Io(_)) => {}
            Err(other) => panic!("expected damage, got {other}"),
            Ok(_) => {}
        }
    }
}
