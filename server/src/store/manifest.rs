//! The checkpoint manifest: how far each game's log reached at the sled store's last
//! checkpoint, kept in a file of its own beside sled's, so a start can tell a log sled lost
//! part of from a whole one (issue 50).
//!
//! sled 0.34 recovers its log by reading it from its last snapshot up to the first message
//! that fails its checksum, and drops — zeroes — everything after it, without an error. One
//! flipped byte in `db` thus takes every later write with it, and once a checkpoint has
//! emptied the journal (`journal.rs`) nothing else holds those writes: each game whose tail
//! was there would be served short, as if whole. So each checkpoint, after sled's files are
//! synced and before the journal starts its new epoch, writes here every game's last sequence
//! and a hash of that record's bytes; a start compares each game's log in sled (with the
//! journal applied) against it, and a game that does not reach it is not served as if whole.
//!
//! Layout, integers little-endian: magic, the entry count, then each entry (game key, last
//! sequence, blake3 of the last record), sorted by key, then blake3 of everything before it.
//! Written to a new file, synced, and renamed over the old one (the directory synced too), so
//! a crash leaves the old manifest or the new one, never half of one. One entry per game: the
//! store keeps them in memory (56 bytes and the map's overhead each), and a start does one
//! point read of sled per game to check them.

use super::GameKey;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The manifest's file name in the data directory.
pub const FILE_NAME: &str = "manifest";

/// Where a new manifest is written before it is renamed over the old one.
const NEW_FILE_NAME: &str = "manifest.new";

const MAGIC: &[u8; 8] = b"ASLMAN01";
const ENTRY_BYTES: usize = 16 + 8 + 32;
const CHECKSUM: usize = 32;

/// How far one game's log reached: its last sequence, and blake3 of that record's bytes (the
/// store holds opaque bytes; the hash chain inside them is the envelope's business).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    pub seq: u64,
    pub hash: [u8; 32],
}

impl Reach {
    pub fn of(seq: u64, record: &[u8]) -> Reach {
        Reach {
            seq,
            hash: *blake3::hash(record).as_bytes(),
        }
    }
}

/// Every game's reach, by game.
pub type Reaches = HashMap<GameKey, Reach>;

/// The manifest's bytes for `reaches`.
pub fn encode(reaches: &Reaches) -> Vec<u8> {
    let mut entries: Vec<(&GameKey, &Reach)> = reaches.iter().collect();
    entries.sort_unstable_by_key(|(key, _)| **key);
    let mut bytes = Vec::with_capacity(16 + entries.len() * ENTRY_BYTES + CHECKSUM);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (key, reach) in entries {
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(&reach.seq.to_le_bytes());
        bytes.extend_from_slice(&reach.hash);
    }
    let sum = blake3::hash(&bytes);
    bytes.extend_from_slice(sum.as_bytes());
    bytes
}

/// A manifest read back; an error saying what is wrong if it fails its checksum or does not
/// parse.
pub fn decode(bytes: &[u8]) -> Result<Reaches, Damage> {
    let body_len = bytes
        .len()
        .checked_sub(CHECKSUM)
        .filter(|n| *n >= 16)
        .ok_or(Damage::Short)?;
    let (body, sum) = bytes.split_at(body_len);
    if blake3::hash(body).as_bytes() != sum {
        return Err(Damage::Checksum);
    }
    if &body[..8] != MAGIC {
        return Err(Damage::Version);
    }
    let count = u64::from_le_bytes(body[8..16].try_into().expect("eight bytes"));
    let entries = &body[16..];
    if (entries.len() / ENTRY_BYTES) as u64 != count || entries.len() % ENTRY_BYTES != 0 {
        return Err(Damage::Count {
            count,
            bytes: entries.len(),
        });
    }
    Ok(entries
        .chunks_exact(ENTRY_BYTES)
        .map(|entry| {
            let key: GameKey = entry[..16].try_into().expect("sixteen bytes");
            let seq = u64::from_le_bytes(entry[16..24].try_into().expect("eight bytes"));
            let hash = entry[24..].try_into().expect("thirty-two bytes");
            (key, Reach { seq, hash })
        })
        .collect())
}

/// Opens `path` to read, never through a symbolic link and only if it is a regular file.
fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// The manifest in `dir`: `None` if there is none (a directory from before manifests, or a
/// new one), an error naming it if it cannot be read or is damaged.
pub fn read(dir: &Path) -> Result<Option<Reaches>, ManifestError> {
    let path = dir.join(FILE_NAME);
    let unreadable = |e: io::Error| ManifestError::Unreadable {
        path: path.clone(),
        why: e.to_string(),
    };
    let mut file = match open_regular(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e)),
    };
    let mut bytes = vec![];
    file.read_to_end(&mut bytes).map_err(unreadable)?;
    decode(&bytes)
        .map(Some)
        .map_err(|damage| ManifestError::Damaged {
            path: path.clone(),
            damage,
        })
}

/// What is wrong with a manifest's bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Damage {
    #[error("it is too short")]
    Short,
    #[error("it fails its checksum")]
    Checksum,
    #[error("it is not a manifest of this version")]
    Version,
    #[error("it names {count} games in {bytes} bytes")]
    Count { count: u64, bytes: usize },
}

/// Why the manifest of a data directory cannot be had; each names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("the checkpoint manifest {}: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error("the checkpoint manifest {}: damaged: {damage}", path.display())]
    Damaged { path: PathBuf, damage: Damage },
}

/// Writes `reaches` as the manifest of `dir`, durably: a new file synced, renamed over the
/// old one, and the directory synced.
pub fn write(dir: &Path, reaches: &Reaches) -> io::Result<()> {
    let new = dir.join(NEW_FILE_NAME);
    let mut file = crate::signing::private::rewrite(&new)?;
    file.write_all(&encode(reaches))?;
    file.sync_data()?;
    drop(file);
    std::fs::rename(&new, dir.join(FILE_NAME))?;
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Reaches {
        (0..5u8)
            .map(|n| ([n; 16], Reach::of(u64::from(n) * 7 + 1, &[n; 40])))
            .collect()
    }

    #[test]
    fn a_manifest_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        write(dir.path(), &sample()).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(sample()));
        write(dir.path(), &Reaches::new()).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(Reaches::new()));
        assert!(!dir.path().join(NEW_FILE_NAME).exists());
    }

    /// Any one flipped bit, or a cut, is named damage, never a shorter manifest.
    #[test]
    fn any_damage_is_named() {
        let bytes = encode(&sample());
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << (at % 8);
            assert!(decode(&damaged).is_err(), "a flip at {at} went unseen");
        }
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "cut at {len}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), &bytes[..bytes.len() - 1]).unwrap();
        let err = read(dir.path()).unwrap_err();
        assert!(
            matches!(
                err,
                ManifestError::Damaged {
                    damage: Damage::Checksum,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("manifest"), "{err}");
    }
}
