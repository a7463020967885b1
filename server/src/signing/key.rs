//! The server's signing key (`docs/review.md`): an ed25519 key created on first start in the
//! data directory, readable by the server's user only, and loaded on every start after. Its
//! public half is printed at start and served at `protocol::record::signed::KEY_PATH`; exports
//! carry heads signed with it.
//!
//! Backups carry the key (`store::backup`): players hold receipts signed with it, and a server
//! restored from a backup under a new key could check none of them, so a rollback to that
//! backup would go unseen. A backup directory is therefore as secret as the data directory;
//! the key's file in it is owner-only too.

use protocol::record::signed::{ServerKey, ServerSigningKey};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The key's file in the data directory: its 32 secret bytes, in lowercase hex.
pub const KEY_FILE: &str = "server-signing-key";

/// Why the signing key cannot be read, written or restored; each names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("{} is not a signing key (64 lowercase hex digits)", .0.display())]
    NotAKey(PathBuf),
    #[error("cannot read {}: {why}", file.display())]
    Read { file: PathBuf, why: String },
    #[error("cannot create {} owner-only: {why}", dir.display())]
    CreateDir { dir: PathBuf, why: String },
    #[error("cannot create {}: {why}", file.display())]
    Create { file: PathBuf, why: String },
    #[error("cannot write {}: {why}", file.display())]
    Write { file: PathBuf, why: String },
    #[error("{} holds signing key {held}, but the backup's is {backup}: the restored games' receipts and exports are signed with the backup's. Move {} away if the backup's key is to be this server's", data.display(), file.display())]
    OtherKey {
        data: PathBuf,
        held: ServerKey,
        backup: ServerKey,
        file: PathBuf,
    },
}

/// A key from the operating system's randomness, for a server that keeps none (tests, tools).
pub fn fresh() -> ServerSigningKey {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).expect("the operating system provides randomness");
    ServerSigningKey::from_bytes(&secret)
}

fn path(dir: &Path) -> PathBuf {
    dir.join(KEY_FILE)
}

/// Loads the key from `dir`, creating it (mode 0600, never overwriting) if there is none.
pub fn load_or_create(dir: &Path) -> Result<ServerSigningKey, KeyError> {
    match load(dir)? {
        Some(key) => Ok(key),
        None => {
            let key = fresh();
            write(dir, &key)?;
            Ok(key)
        }
    }
}

/// The key kept in `dir`, or `None` if it holds none.
pub fn load(dir: &Path) -> Result<Option<ServerSigningKey>, KeyError> {
    let file = path(dir);
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let bytes = data_encoding::HEXLOWER
                .decode(text.trim().as_bytes())
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| KeyError::NotAKey(file.clone()))?;
            Ok(Some(ServerSigningKey::from_bytes(&bytes)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(KeyError::Read {
            file,
            why: e.to_string(),
        }),
    }
}

/// Writes `key` into `dir` (created if missing) as its key file: owner-only, synced with the
/// directory naming it, and never over a file already there.
pub fn write(dir: &Path, key: &ServerSigningKey) -> Result<(), KeyError> {
    let file = path(dir);
    crate::signing::private::create_dir(dir).map_err(|e| KeyError::CreateDir {
        dir: dir.to_path_buf(),
        why: e.to_string(),
    })?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(&file).map_err(|e| KeyError::Create {
        file: file.clone(),
        why: e.to_string(),
    })?;
    writeln!(out, "{}", data_encoding::HEXLOWER.encode(&key.to_bytes()))
        .and_then(|()| out.sync_all())
        .and_then(|()| std::fs::File::open(dir)?.sync_all())
        .map_err(|e| KeyError::Write {
            file,
            why: e.to_string(),
        })
}

/// Puts the key a backup in `backup` holds into the data directory `data`, before a restore:
/// receipts and exports signed before the backup keep checking under the restored server.
/// A data directory that already holds the same key is left as it is; one holding another key
/// is refused (the key is never overwritten: that is for the operator to decide). Returns the
/// public key installed or kept, or `None` when the backup holds no key (an older backup: the
/// server will make a new one, and nothing signed before can be checked against it).
pub fn restore(backup: &Path, data: &Path) -> Result<Option<ServerKey>, KeyError> {
    let Some(key) = load(backup)? else {
        return Ok(None);
    };
    match load(data)? {
        Some(held) if ServerKey::of(&held) == ServerKey::of(&key) => {}
        Some(held) => {
            return Err(KeyError::OtherKey {
                data: data.to_path_buf(),
                held: ServerKey::of(&held),
                backup: ServerKey::of(&key),
                file: path(data),
            })
        }
        None => write(data, &key)?,
    }
    Ok(Some(ServerKey::of(&key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_created_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = load_or_create(dir.path()).unwrap();
        assert_eq!(ServerKey::of(&first), ServerKey::of(&again));
        // A backup's key goes into a data directory without one, is kept where it is already,
        // and never replaces another.
        let data = tempfile::tempdir().unwrap();
        assert_eq!(
            restore(dir.path(), data.path()).unwrap(),
            Some(ServerKey::of(&first))
        );
        assert_eq!(
            ServerKey::of(&load(data.path()).unwrap().unwrap()),
            ServerKey::of(&first)
        );
        assert_eq!(
            restore(dir.path(), data.path()).unwrap(),
            Some(ServerKey::of(&first))
        );
        let other = tempfile::tempdir().unwrap();
        load_or_create(other.path()).unwrap();
        let err = restore(dir.path(), other.path()).unwrap_err();
        assert!(matches!(err, KeyError::OtherKey { .. }), "{err}");
        assert!(err.to_string().contains("Move"), "{err}");
        assert_eq!(
            restore(data.path().join("none").as_path(), other.path()),
            Ok(None)
        );
        std::fs::write(path(dir.path()), "not a key").unwrap();
        let err = load_or_create(dir.path()).unwrap_err();
        assert!(matches!(err, KeyError::NotAKey(_)), "{err}");
    }
}
