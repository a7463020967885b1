//! The sled store's write-ahead journal: how a group of writes becomes durable with one
//! `pwrite` and one `fdatasync`.
//!
//! sled 0.34's `flush` hands its buffer to its own I/O thread pool (waking every idle thread
//! of it), which writes it and waits for `sync_file_range`; the committer then still needs an
//! `fdatasync` for the drive's cache. A group paid two device round trips and a dozen thread
//! wake-ups. Instead the committer writes the group's inserts here as one record and syncs
//! this file alone, then applies them to sled's memory; sled is flushed (and its files synced)
//! only at a checkpoint, when the journal is full, after which the journal starts a new epoch.
//! On open, every valid record of the current epoch is applied to sled again (inserts of the
//! same keys and values: applying one twice changes nothing) and a checkpoint follows.
//!
//! Layout, all integers little-endian:
//! - two header slots ([`SLOT_BYTES`] each) at the start; a checkpoint writes the new epoch to
//!   slot `epoch % 2`, so a torn header write leaves the other, older slot readable;
//! - records from [`RECORDS_START`], each starting on a [`BLOCK_BYTES`] boundary so a write
//!   never rewrites a block holding an acknowledged record (a torn write can only hurt the
//!   record being written): magic, epoch, number (0, 1, … within the epoch), payload length,
//!   the payload (the group's inserts), then blake3 of all of it.
//!
//! The file is written full of zeros when created, so a record's write never allocates blocks
//! and its `fdatasync` has no file metadata to commit.
//!
//! Records and headers are written through a second descriptor opened `O_DIRECT` where the file
//! system allows it (see [`Writer`]): the block goes from the committer's buffer to the drive, so
//! the `fdatasync` that follows has no page to write back, only the drive's cache to flush.
//! Reads (opening, recovery) go through the page cache as before.
//!
//! Damage: a record that fails its checksum ends the epoch's records if nothing valid follows
//! it (a write torn by a crash: it was never acknowledged); if a later record of the same epoch
//! is valid, acknowledged writes are damaged and the store refuses to open, naming the record.
//! A header slot that is damaged while records of a later epoch exist is refused the same way.
//! A flipped bit in the last record cannot be told from a torn write; players' receipts then
//! tell the server its log is behind (`protocol::record::receipt`).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The journal's file name in the data directory, beside sled's files.
pub const FILE_NAME: &str = "journal";

/// The journal's size. A checkpoint (sled's flush) comes when a record no longer fits, so this
/// bounds both how much a restart replays and how often a checkpoint interrupts the groups:
/// at 4 KiB a group, 4,000 groups between checkpoints.
pub const JOURNAL_BYTES: u64 = 16 * 1024 * 1024;

/// The unit records are aligned to: a disk sector's worth for every drive we run on, and the
/// page the kernel writes.
pub const BLOCK_BYTES: u64 = 4096;

/// Each header slot's size.
const SLOT_BYTES: u64 = BLOCK_BYTES;

/// Where records begin, after the two header slots.
pub const RECORDS_START: u64 = 2 * SLOT_BYTES;

/// The largest payload a record takes: half the record space, so a checkpoint always makes
/// room. A group larger than this bypasses the journal (written to sled and flushed).
pub const PAYLOAD_BYTES_MAX: usize = ((JOURNAL_BYTES - RECORDS_START) / 2) as usize;

const HEADER_MAGIC: &[u8; 8] = b"ASLJHDR1";
const RECORD_MAGIC: &[u8; 8] = b"ASLJREC1";
/// magic, epoch, number, payload length.
const RECORD_HEAD: usize = 8 + 8 + 8 + 4;
const CHECKSUM: usize = 32;

/// Which of sled's trees an insert goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tree {
    Events = 0,
    Games = 1,
    /// The notification space (`crate::notify`): an insert.
    Notify = 2,
    /// The notification space: the key removed (the value is empty).
    NotifyRemoved = 3,
}

/// One insert, as replayed.
pub type Insert = (Tree, Vec<u8>, Vec<u8>);

/// A group's inserts as a record's payload: their count, then tree, key and value each.
pub fn encode(inserts: &[Insert]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload_bytes(
        inserts.iter().map(|(_, k, v)| (k.len(), v.len())),
    ));
    bytes.extend_from_slice(&(inserts.len() as u32).to_le_bytes());
    for (tree, key, value) in inserts {
        bytes.push(*tree as u8);
        bytes.extend_from_slice(&(key.len() as u32).to_le_bytes());
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(&(value.len() as u32).to_le_bytes());
        bytes.extend_from_slice(value);
    }
    bytes
}

/// How long [`encode`] makes the payload of inserts with these key and value lengths.
pub fn payload_bytes(lengths: impl Iterator<Item = (usize, usize)>) -> usize {
    4 + lengths.map(|(key, value)| 9 + key + value).sum::<usize>()
}

/// A payload read back; `None` if it does not parse (a valid checksum over bytes this code
/// did not write: a journal from elsewhere).
fn decode(payload: &[u8]) -> Option<Vec<Insert>> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let slice = payload.get(at..at.checked_add(n)?)?;
        at += n;
        Some(slice)
    };
    let u32_of = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize;
    let count = u32_of(take(4)?);
    let mut inserts = Vec::with_capacity(count.min(payload.len() / 9));
    for _ in 0..count {
        let tree = match take(1)?[0] {
            0 => Tree::Events,
            1 => Tree::Games,
            2 => Tree::Notify,
            3 => Tree::NotifyRemoved,
            _ => return None,
        };
        let key_len = u32_of(take(4)?);
        let key = take(key_len)?.to_vec();
        let value_len = u32_of(take(4)?);
        let value = take(value_len)?.to_vec();
        inserts.push((tree, key, value));
    }
    (at == payload.len()).then_some(inserts)
}

fn round_up(n: u64) -> u64 {
    n.div_ceil(BLOCK_BYTES) * BLOCK_BYTES
}

/// The space a record with a payload of `payload_bytes` takes, padding included.
fn record_bytes(payload_bytes: usize) -> u64 {
    round_up((RECORD_HEAD + payload_bytes + CHECKSUM) as u64)
}

/// Fills a zeroed header slot for `epoch`.
fn write_header(slot: &mut [u8], epoch: u64) {
    slot[..8].copy_from_slice(HEADER_MAGIC);
    slot[8..16].copy_from_slice(&epoch.to_le_bytes());
    let sum = blake3::hash(&slot[..16]);
    slot[16..48].copy_from_slice(sum.as_bytes());
}

/// A slot's epoch, if the slot is a valid header.
fn read_slot(slot: &[u8]) -> Option<u64> {
    (slot.get(..8)? == HEADER_MAGIC && blake3::hash(&slot[..16]).as_bytes() == &slot[16..48])
        .then(|| u64::from_le_bytes(slot[8..16].try_into().expect("eight bytes")))
}

/// A valid record: its epoch, number, payload, and where the next block after it is.
struct Record {
    epoch: u64,
    number: u64,
    payload: std::ops::Range<usize>,
    next: u64,
}

/// The record starting at `offset`, if one starts there and passes its bounds and checksum.
fn record_at(file: &[u8], offset: u64) -> Option<Record> {
    let at = offset as usize;
    let head = file.get(at..at + RECORD_HEAD)?;
    if &head[..8] != RECORD_MAGIC {
        return None;
    }
    let epoch = u64::from_le_bytes(head[8..16].try_into().expect("eight bytes"));
    let number = u64::from_le_bytes(head[16..24].try_into().expect("eight bytes"));
    let len = u32::from_le_bytes(head[24..28].try_into().expect("four bytes")) as usize;
    let end = at + RECORD_HEAD + len;
    let sum = file.get(end..end + CHECKSUM)?;
    (blake3::hash(&file[at..end]).as_bytes() == sum).then(|| Record {
        epoch,
        number,
        payload: at + RECORD_HEAD..end,
        next: round_up((end + CHECKSUM) as u64),
    })
}

/// The records of `epoch` from the first, numbered 0, 1, … without a gap, at most `limit` of
/// them: their inserts in order, where the record after them goes, and its number. A record
/// that passes its checksum but does not parse is an error naming it.
fn read_epoch(bytes: &[u8], epoch: u64, limit: u64) -> Result<(Vec<Insert>, u64, u64), Unparsed> {
    let (mut inserts, mut offset, mut next) = (vec![], RECORDS_START, 0);
    while next < limit {
        match record_at(bytes, offset) {
            Some(r) if r.epoch == epoch && r.number == next => {
                inserts.extend(decode(&bytes[r.payload]).ok_or(Unparsed {
                    number: next,
                    epoch,
                })?);
                next += 1;
                offset = r.next;
            }
            _ => break,
        }
    }
    Ok((inserts, offset, next))
}

/// A record that passes its checksum but does not parse: by its number and epoch.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("record {number} of epoch {epoch} does not parse")]
pub struct Unparsed {
    pub number: u64,
    pub epoch: u64,
}

/// Why the open journal could not be written, read back or given a new epoch; each names the
/// journal's file.
#[derive(Clone, Debug, thiserror::Error)]
pub enum JournalError {
    /// A record could not be written and made durable.
    #[error("writing the journal {}: {why}", path.display())]
    Append { path: PathBuf, why: String },
    /// The file could not be read back.
    #[error("the journal {}: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
    /// A record read back does not parse.
    #[error("the journal {}: {unparsed}", path.display())]
    Unparsed { path: PathBuf, unparsed: Unparsed },
    /// A record acknowledged in this epoch is not on the disk.
    #[error("the journal {}: record {number} of epoch {epoch} is gone", path.display())]
    Gone {
        path: PathBuf,
        number: u64,
        epoch: u64,
    },
    /// The header slot of the new epoch could not be written.
    #[error("starting a new journal epoch in {}: {why}", path.display())]
    Checkpoint { path: PathBuf, why: String },
}

/// A record found by [`salvage_records`]: its epoch, its number and its inserts.
pub type Found = (u64, u64, Vec<Insert>);

/// Every record a journal's bytes hold that passes its checksum and parses, whatever its epoch,
/// with the newest epoch a header slot names (`None` if neither slot is readable): what a
/// salvage of a damaged data directory reads, in order of (epoch, number). Records of older
/// epochs were checkpointed into sled; the newest epoch's were maybe not.
pub fn salvage_records(bytes: &[u8]) -> (Option<u64>, Vec<Found>) {
    let slot = |i: u64| {
        let at = (i * SLOT_BYTES) as usize;
        bytes.get(at..at + SLOT_BYTES as usize).and_then(read_slot)
    };
    let epoch = slot(0).max(slot(1));
    let mut records = vec![];
    let mut at = RECORDS_START;
    while at + BLOCK_BYTES <= bytes.len() as u64 {
        match record_at(bytes, at) {
            Some(r) => {
                if let Some(inserts) = decode(&bytes[r.payload]) {
                    records.push((r.epoch, r.number, inserts));
                }
                at = r.next.max(at + BLOCK_BYTES);
            }
            None => at += BLOCK_BYTES,
        }
    }
    records.sort_by_key(|(epoch, number, _)| (*epoch, *number));
    (epoch, records)
}

/// The journal file, open for the committer (its only writer).
pub struct Journal {
    /// Every write after the zero fill, and the reads of recovery.
    writer: Writer,
    path: PathBuf,
    epoch: u64,
    /// The number the next record gets.
    next: u64,
    /// Where the next record goes.
    offset: u64,
    /// While set, writes fail as on a disk that refuses them (tests, drills).
    fault: Arc<AtomicBool>,
    /// The size of the last record written, while it may still be taken back (its group was
    /// refused after it was written: [`Journal::retract`]).
    last_len: Option<u64>,
}

/// Why the journal could not be opened.
pub enum OpenFailure {
    /// The file could not be created, read or written.
    Io(String),
    /// It holds acknowledged writes that cannot be read.
    Damaged(String),
}

impl Journal {
    /// Opens (creating and zero-filling if needed) the journal in `dir`, and reads the current
    /// epoch's records: the inserts to apply to sled before anything else, in order. Damage
    /// that would lose acknowledged writes is an error naming the journal.
    pub fn open(dir: &Path, fault: Arc<AtomicBool>) -> Result<(Journal, Vec<Insert>), OpenFailure> {
        let path = dir.join(FILE_NAME);
        let named = |e: io::Error| OpenFailure::Io(format!("the journal {}: {e}", path.display()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(crate::signing::private::FILE_MODE)
            .open(&path)
            .map_err(named)?;
        let len = file.metadata().map_err(named)?.len();
        if len < JOURNAL_BYTES {
            // New (or cut short: what it held is read below, from the bytes it still has).
            zero_fill(&file, len).map_err(named)?;
            File::open(dir).and_then(|d| d.sync_all()).map_err(named)?;
        }
        let bytes = read_all(&file).map_err(named)?;
        let damaged = |why: String| {
            OpenFailure::Damaged(format!("the journal {} is damaged: {why}", path.display()))
        };
        let slots = [0u64, 1].map(|i| {
            let at = (i * SLOT_BYTES) as usize;
            read_slot(&bytes[at..at + SLOT_BYTES as usize])
        });
        let epoch = slots.iter().flatten().max().copied().unwrap_or(0);
        let (inserts, offset, next) =
            read_epoch(&bytes, epoch, u64::MAX).map_err(|e| damaged(e.to_string()))?;
        // Past the end of the epoch's records: a torn write, or damage? Any valid record of this
        // epoch further on, or of a later epoch anywhere, means acknowledged writes were lost.
        let mut scan = RECORDS_START;
        while scan + BLOCK_BYTES <= bytes.len() as u64 {
            if let Some(Record {
                epoch: e, number, ..
            }) = record_at(&bytes, scan)
            {
                if e > epoch {
                    return Err(damaged(format!(
                        "its header says epoch {epoch}, but record {number} of epoch {e} is valid"
                    )));
                }
                if e == epoch && scan >= offset && number >= next {
                    return Err(damaged(format!(
                        "record {next} of epoch {epoch} is unreadable while record {number} after it is valid"
                    )));
                }
            }
            scan += BLOCK_BYTES;
        }
        let writer = Writer::open(&path, file).map_err(named)?;
        let journal = Journal {
            writer,
            path,
            epoch,
            next,
            offset,
            fault,
            last_len: None,
        };
        Ok((journal, inserts))
    }

    fn injected(&self) -> io::Result<()> {
        if self.fault.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated disk failure"));
        }
        Ok(())
    }

    /// Whether a record of `payload_bytes` fits before the end of the file.
    pub fn has_room(&self, payload_bytes: usize) -> bool {
        self.offset + record_bytes(payload_bytes) <= JOURNAL_BYTES
    }

    /// Writes `payload` as the next record and makes it durable. On an error the record may or
    /// may not be on the disk; the next write goes to the same place with the same number, and
    /// [`Journal::records`] never returns it.
    pub fn append(&mut self, payload: &[u8]) -> Result<(), JournalError> {
        let len = record_bytes(payload.len()) as usize;
        let (epoch, number) = (self.epoch, self.next);
        let offset = self.offset;
        self.injected()
            .and_then(|()| {
                self.writer.write_at(offset, len, |record| {
                    let end = RECORD_HEAD + payload.len();
                    record[..8].copy_from_slice(RECORD_MAGIC);
                    record[8..16].copy_from_slice(&epoch.to_le_bytes());
                    record[16..24].copy_from_slice(&number.to_le_bytes());
                    record[24..RECORD_HEAD].copy_from_slice(&(payload.len() as u32).to_le_bytes());
                    record[RECORD_HEAD..end].copy_from_slice(payload);
                    let sum = blake3::hash(&record[..end]);
                    record[end..end + CHECKSUM].copy_from_slice(sum.as_bytes());
                })
            })
            .map_err(|e| JournalError::Append {
                path: self.path.clone(),
                why: e.to_string(),
            })?;
        self.offset += len as u64;
        self.next += 1;
        self.last_len = Some(len as u64);
        Ok(())
    }

    /// Whether no record was written since the last checkpoint.
    pub fn is_empty(&self) -> bool {
        self.next == 0
    }

    /// Takes back the record just written (its group was refused after all), and overwrites
    /// the start of the place it had — or that a failed write may have reached — so a restart
    /// before the store recovers does not apply what its writers were told was not stored.
    /// The overwrite is best effort: the disk may refuse it too.
    pub fn retract(&mut self) {
        if let Some(len) = self.last_len.take() {
            self.offset -= len;
            self.next -= 1;
        }
        self.unwrite();
    }

    /// Overwrites the first block of the next record's place with zeros (best effort), where a
    /// write that failed may have landed.
    pub fn unwrite(&mut self) {
        let _ = self
            .writer
            .write_at(self.offset, BLOCK_BYTES as usize, |_| ());
    }

    /// The inserts of every acknowledged record of the current epoch, read back from the disk:
    /// what a reopened sled must be given again.
    pub fn records(&self) -> Result<Vec<Insert>, JournalError> {
        let path = || self.path.clone();
        let bytes = read_all(&self.writer.buffered).map_err(|e| JournalError::Unreadable {
            path: path(),
            why: e.to_string(),
        })?;
        let (inserts, _, found) =
            read_epoch(&bytes, self.epoch, self.next).map_err(|unparsed| {
                JournalError::Unparsed {
                    path: path(),
                    unparsed,
                }
            })?;
        if found < self.next {
            return Err(JournalError::Gone {
                path: path(),
                number: found,
                epoch: self.epoch,
            });
        }
        Ok(inserts)
    }

    /// Starts a new epoch: called once sled has flushed and its files are synced, so every
    /// record so far is in sled on the disk and none needs replaying.
    pub fn checkpoint(&mut self) -> Result<(), JournalError> {
        let epoch = self.epoch + 1;
        let at = (epoch % 2) * SLOT_BYTES;
        self.injected()
            .and_then(|()| {
                self.writer
                    .write_at(at, SLOT_BYTES as usize, |slot| write_header(slot, epoch))
            })
            .map_err(|e| JournalError::Checkpoint {
                path: self.path.clone(),
                why: e.to_string(),
            })?;
        self.epoch = epoch;
        self.next = 0;
        self.offset = RECORDS_START;
        self.last_len = None;
        Ok(())
    }
}

/// How the journal's blocks reach the disk: `pwrite` of whole blocks, then `fdatasync`.
///
/// Opened `O_DIRECT` where the file system takes it: the `fdatasync` then finds no dirty page
/// to write back. On the virtio disk we run on, a 4 KiB direct write and its `fdatasync` took
/// about a tenth less time and a fifth less CPU than the same write through the page cache
/// (`bench/disk/journal_write.py`; BENCHMARKS.md, seventh pass on issue 21). Direct I/O wants
/// the buffer, offset and length aligned to the device's block: records and header slots start
/// on a [`BLOCK_BYTES`] boundary and are whole blocks, and the buffer is aligned here. Where the
/// file system refuses `O_DIRECT` (tmpfs, some network file systems), the page-cache descriptor
/// writes instead; either way, nothing counts as written before `fdatasync` returns. Opening it
/// `O_DSYNC` as well, to fold the sync into the write, was measured no faster on this disk and
/// cost more CPU (`bench/disk/journal_write.py`, eighth pass on issue 21).
struct Writer {
    /// The same file opened `O_DIRECT`, while the file system takes direct writes.
    direct: Option<File>,
    /// The file through the page cache: reads, and writes where `O_DIRECT` is refused.
    buffered: File,
    /// Reused for every write; holds one [`BLOCK_BYTES`]-aligned slice of the size wanted.
    buffer: Vec<u8>,
}

/// A write larger than this gets a buffer of its own instead of growing the kept one: the
/// usual group is a block or two, and a rare large one should not stay in memory.
const KEPT_BUFFER_BYTES: usize = 256 * 1024;

/// The error a file system gives for direct I/O it does not do, at `open` or at the write.
fn refuses_direct_io(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

impl Writer {
    fn open(path: &Path, buffered: File) -> io::Result<Writer> {
        let direct = match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(file) => Some(file),
            Err(e) if refuses_direct_io(&e) => None,
            Err(e) => return Err(e),
        };
        Ok(Writer {
            direct,
            buffered,
            buffer: Vec::new(),
        })
    }

    /// Writes `len` bytes (whole blocks) at `offset` (a block boundary), as `fill` sets them
    /// in a zeroed buffer, and syncs them.
    fn write_at(
        &mut self,
        offset: u64,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> io::Result<()> {
        debug_assert!(
            offset.is_multiple_of(BLOCK_BYTES) && (len as u64).is_multiple_of(BLOCK_BYTES)
        );
        let block = BLOCK_BYTES as usize;
        let mut own = Vec::new();
        let buffer = if len <= KEPT_BUFFER_BYTES {
            &mut self.buffer
        } else {
            &mut own
        };
        if buffer.len() < len + block {
            *buffer = vec![0u8; len + block];
        }
        let start = buffer.as_ptr().align_offset(block);
        let bytes = &mut buffer[start..start + len];
        debug_assert!((bytes.as_ptr() as usize).is_multiple_of(block));
        bytes.fill(0);
        fill(bytes);
        if let Some(direct) = &self.direct {
            match direct.write_all_at(bytes, offset) {
                Ok(()) => return direct.sync_data(),
                // Opened `O_DIRECT`, yet the write is refused: through the page cache from now on.
                Err(e) if refuses_direct_io(&e) => self.direct = None,
                Err(e) => return Err(e),
            }
        }
        self.buffered.write_all_at(bytes, offset)?;
        self.buffered.sync_data()
    }
}

fn read_all(file: &File) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, 0)?;
    Ok(bytes)
}

/// Writes zeros from `from` to [`JOURNAL_BYTES`] and syncs, so later record writes never
/// allocate.
fn zero_fill(file: &File, from: u64) -> io::Result<()> {
    let chunk = vec![0u8; 1024 * 1024];
    let mut at = from;
    while at < JOURNAL_BYTES {
        let n = chunk.len().min((JOURNAL_BYTES - at) as usize);
        file.write_all_at(&chunk[..n], at)?;
        at += n as u64;
    }
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &Path) -> (Journal, Vec<Insert>) {
        match Journal::open(dir, Arc::new(AtomicBool::new(false))) {
            Ok(opened) => opened,
            Err(OpenFailure::Io(e) | OpenFailure::Damaged(e)) => panic!("{e}"),
        }
    }

    fn damage_of(dir: &Path) -> String {
        match Journal::open(dir, Arc::new(AtomicBool::new(false))) {
            Err(OpenFailure::Damaged(e)) => e,
            Err(OpenFailure::Io(e)) => panic!("expected damage, got {e}"),
            Ok(_) => panic!("a damaged journal opened"),
        }
    }

    fn group(n: u8) -> Vec<u8> {
        encode(&[
            (Tree::Events, vec![n; 24], vec![n; 100]),
            (Tree::Games, vec![n; 16], b"meta".to_vec()),
        ])
    }

    #[test]
    fn records_come_back_in_order_until_a_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut j, replay) = open(dir.path());
            assert!(replay.is_empty());
            j.append(&group(1)).unwrap();
            j.append(&group(2)).unwrap();
            assert_eq!(j.records().unwrap().len(), 4);
        }
        let (mut j, replay) = open(dir.path());
        assert_eq!(replay.len(), 4);
        assert_eq!(replay[0], (Tree::Events, vec![1; 24], vec![1; 100]));
        assert_eq!(replay[3], (Tree::Games, vec![2; 16], b"meta".to_vec()));
        // Written after a reopen: numbered on from the last record read.
        j.append(&group(3)).unwrap();
        drop(j);
        let (mut j, replay) = open(dir.path());
        assert_eq!(replay.len(), 6);
        j.checkpoint().unwrap();
        j.append(&group(4)).unwrap();
        drop(j);
        let (_, replay) = open(dir.path());
        assert_eq!(
            replay,
            vec![
                (Tree::Events, vec![4; 24], vec![4; 100]),
                (Tree::Games, vec![4; 16], b"meta".to_vec())
            ]
        );
    }

    /// A record cut short by a crash was never acknowledged: it ends the epoch, and the next
    /// write takes its place.
    #[test]
    fn a_torn_last_record_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let second;
        {
            let (mut j, _) = open(dir.path());
            j.append(&group(1)).unwrap();
            second = j.offset;
            j.append(&group(2)).unwrap();
        }
        let file = OpenOptions::new()
            .write(true)
            .open(dir.path().join(FILE_NAME))
            .unwrap();
        file.write_all_at(&[0u8; 64], second + 40).unwrap();
        let (mut j, replay) = open(dir.path());
        assert_eq!(replay.len(), 2, "only the first record");
        assert_eq!(j.offset, second);
        j.append(&group(3)).unwrap();
        drop(j);
        let (_, replay) = open(dir.path());
        assert_eq!(replay[2].1, vec![3; 24]);
    }

    /// One flipped bit in a record with valid records after it: acknowledged writes are damaged,
    /// and opening says so instead of dropping them.
    #[test]
    fn damage_before_valid_records_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let first;
        {
            let (mut j, _) = open(dir.path());
            first = j.offset;
            for n in 1..=3 {
                j.append(&group(n)).unwrap();
            }
        }
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[first as usize + 60] ^= 0x04;
        std::fs::write(&path, &bytes).unwrap();
        let err = damage_of(dir.path());
        assert!(err.contains("damaged") && err.contains("record 0"), "{err}");
    }

    /// The newest header slot damaged: the older one is readable, but records of the newer
    /// epoch exist, so the damage is named rather than those records skipped.
    #[test]
    fn a_damaged_header_with_newer_records_is_named() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut j, _) = open(dir.path());
            j.checkpoint().unwrap();
            j.checkpoint().unwrap();
            j.append(&group(1)).unwrap();
        }
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        // Epoch 2 is in slot 0.
        bytes[9] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let err = damage_of(dir.path());
        assert!(err.contains("header"), "{err}");
    }

    #[test]
    fn a_failed_write_is_not_counted_and_its_place_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let fault = Arc::new(AtomicBool::new(false));
        let Ok((mut j, _)) = Journal::open(dir.path(), fault.clone()) else {
            panic!("the journal opens")
        };
        j.append(&group(1)).unwrap();
        fault.store(true, Ordering::SeqCst);
        let failed = j.append(&group(2)).unwrap_err();
        assert!(
            matches!(&failed, JournalError::Append { path, .. } if path == &dir.path().join(FILE_NAME)),
            "{failed}"
        );
        assert!(
            failed.to_string().starts_with("writing the journal "),
            "{failed}"
        );
        fault.store(false, Ordering::SeqCst);
        assert_eq!(j.records().unwrap().len(), 2);
        j.append(&group(3)).unwrap();
        let inserts = j.records().unwrap();
        assert_eq!(inserts[2].1, vec![3; 24]);
        // Written, then its group refused: taken back, and its place reused.
        j.append(&group(4)).unwrap();
        j.retract();
        j.append(&group(5)).unwrap();
        drop(j);
        let (_, replay) = open(dir.path());
        let keys: Vec<u8> = replay.iter().step_by(2).map(|(_, k, _)| k[0]).collect();
        assert_eq!(keys, vec![1, 3, 5]);
    }

    /// On a file system that takes direct I/O, records are written `O_DIRECT` and stay so.
    #[test]
    fn records_are_written_direct_where_the_file_system_allows() {
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("probe");
        std::fs::write(&probe, [0u8; BLOCK_BYTES as usize]).unwrap();
        let allows = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe)
            .is_ok();
        let (mut j, _) = open(dir.path());
        for n in 1..=3 {
            j.append(&group(n)).unwrap();
        }
        j.checkpoint().unwrap();
        assert_eq!(j.writer.direct.is_some(), allows);
    }

    /// Where the file system will not write the journal `O_DIRECT`, records go through the page
    /// cache and read back the same.
    #[test]
    fn records_written_without_direct_io_read_back() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut j, _) = open(dir.path());
            j.append(&group(1)).unwrap();
            j.writer.direct = None;
            j.append(&group(2)).unwrap();
            j.checkpoint().unwrap();
            j.append(&group(3)).unwrap();
            j.append(&group(4)).unwrap();
            j.retract();
        }
        let (_, replay) = open(dir.path());
        assert_eq!(replay.len(), 2, "only the epoch's one kept record");
        assert_eq!(replay[0].1, vec![3; 24]);
    }

    /// What salvage reads: every record that passes its checksum, of this epoch and older ones
    /// not yet overwritten, in order; a damaged one is passed over, not the ones after it.
    #[test]
    fn salvage_finds_every_valid_record_of_every_epoch() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut j, _) = open(dir.path());
            for n in 1..=3 {
                j.append(&group(n)).unwrap();
            }
            j.checkpoint().unwrap();
            j.append(&group(4)).unwrap();
        }
        let mut bytes = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
        // Record 1 of epoch 0 (the second block of records) damaged.
        bytes[(RECORDS_START + BLOCK_BYTES) as usize + 60] ^= 0x04;
        let (epoch, records) = salvage_records(&bytes);
        assert_eq!(epoch, Some(1));
        let found: Vec<(u64, u64, u8)> = records
            .iter()
            .map(|(e, n, inserts)| (*e, *n, inserts[0].1[0]))
            .collect();
        // Epoch 1's record 0 took the place of epoch 0's record 0.
        assert_eq!(found, vec![(0, 2, 3), (1, 0, 4)]);
        assert_eq!(salvage_records(&[0xff; 100]), (None, vec![]));
    }

    #[test]
    fn payloads_round_trip_and_garbage_does_not_parse() {
        let bytes = group(7);
        assert_eq!(decode(&bytes).unwrap().len(), 2);
        assert!(decode(&bytes[..bytes.len() - 1]).is_none());
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(decode(&extra).is_none());
        assert!(decode(&[0xff; 4]).is_none());
    }

    #[test]
    fn room_runs_out_and_a_checkpoint_makes_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, _) = open(dir.path());
        let big = PAYLOAD_BYTES_MAX - BLOCK_BYTES as usize;
        let mut written = 0;
        while j.has_room(big) {
            j.append(&encode(&[(Tree::Events, vec![1; 24], vec![9; big - 64])]))
                .unwrap();
            written += 1;
        }
        assert_eq!(written, 2, "two records of the largest payload fit");
        j.checkpoint().unwrap();
        assert!(j.has_room(PAYLOAD_BYTES_MAX));
    }
}
