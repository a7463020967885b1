//! Owner-only files. A server's data directory holds what no other local user may read: the
//! journal and sled's files carry every game's log with its hidden units and the live dice
//! seeds, a backup's metadata carries the seeds too, and the signing key signs receipts. Each
//! directory holding them is made owner-only (so whatever a library creates inside later is
//! out of reach too), each file the server creates is created owner-only, and a backup never
//! writes through a symbolic link someone planted where a file goes.

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of a directory holding secrets: its owner only.
pub const DIR_MODE: u32 = 0o700;
/// The mode of a file holding secrets: its owner only, read and write.
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and any parent missing) owner-only, and makes it owner-only if it was not.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
}

/// Makes every file below `dir` owner-only and every directory owner-only too: for files a
/// library created with its own modes (sled's `conf`, `db`, snapshots, `blobs/`). Links are
/// left as they are, never followed.
pub fn tighten(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            std::fs::set_permissions(entry.path(), Permissions::from_mode(DIR_MODE))?;
            tighten(&entry.path())?;
        } else if kind.is_file() {
            std::fs::set_permissions(entry.path(), Permissions::from_mode(FILE_MODE))?;
        }
    }
    Ok(())
}

/// Opens `path` to be written from its start, owner-only: created if missing, emptied if
/// present, and refused (`ELOOP`, said in words) when it is a symbolic link.
pub fn rewrite(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                io::Error::other(format!(
                    "{} is a symbolic link; the server never writes through one",
                    path.display()
                ))
            } else {
                e
            }
        })?;
    // A file that was there before keeps its mode through `open`: set it.
    file.set_permissions(Permissions::from_mode(FILE_MODE))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn directories_and_files_are_made_owner_only_and_links_are_not_written_through() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data/inner");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), DIR_MODE);
        std::fs::write(dir.join("open"), b"x").unwrap();
        std::fs::set_permissions(dir.join("open"), Permissions::from_mode(0o644)).unwrap();
        tighten(&root.path().join("data")).unwrap();
        assert_eq!(mode(&dir.join("open")), FILE_MODE);

        let outside = root.path().join("outside");
        std::fs::write(&outside, b"keep").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
        let refused = rewrite(&dir.join("link")).unwrap_err();
        assert!(refused.to_string().contains("symbolic link"), "{refused}");
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
        rewrite(&dir.join("open")).unwrap();
        assert_eq!(std::fs::read(dir.join("open")).unwrap(), b"");
        assert_eq!(mode(&dir.join("open")), FILE_MODE);
    }
}
