//! The server's signing key (`docs/review.md`): an ed25519 key created on first start in the
//! data directory, readable by the server's user only, and loaded on every start after. Its
//! public half is printed at start and served at `protocol::record::signed::KEY_PATH`; exports
//! carry heads signed with it.

use protocol::record::signed::ServerSigningKey;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The key's file in the data directory: its 32 secret bytes, in lowercase hex.
pub const KEY_FILE: &str = "server-signing-key";

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
pub fn load_or_create(dir: &Path) -> Result<ServerSigningKey, String> {
    let file = path(dir);
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let bytes = data_encoding::HEXLOWER
                .decode(text.trim().as_bytes())
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .ok_or_else(|| {
                    format!(
                        "{} is not a signing key (64 lowercase hex digits)",
                        file.display()
                    )
                })?;
            Ok(ServerSigningKey::from_bytes(&bytes))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let key = fresh();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut out = options
                .open(&file)
                .map_err(|e| format!("cannot create {}: {e}", file.display()))?;
            writeln!(out, "{}", data_encoding::HEXLOWER.encode(&key.to_bytes()))
                .and_then(|()| out.sync_all())
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            Ok(key)
        }
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::signed::ServerKey;

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
        std::fs::write(path(dir.path()), "not a key").unwrap();
        let err = load_or_create(dir.path()).unwrap_err();
        assert!(err.contains("not a signing key"), "{err}");
    }
}
