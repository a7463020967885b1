//! The operator's VASL board archives (`--boards DIR`, `ASL_BOARDS`): read from disk here, on
//! first use, and shared by every game on a board (`protocol::board::vasl::library`).

use std::path::Path;
use std::sync::Arc;

use protocol::board::vasl::library::Boards;

/// Largest file read from the boards directory (a VASL module is ~100 MB; archives ~2 MB).
pub const BOARD_FILE_BYTES_MAX: u64 = 256 << 20;

/// The boards in `dir`, with VASL's terrain codes from `module` (`ASL_VASL_MODULE`) when given.
pub fn open(dir: &Path, module: Option<&Path>) -> Result<Arc<Boards>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a directory of VASL board archives",
            dir.display()
        ));
    }
    let module = match module {
        None => None,
        Some(path) => Some((path.display().to_string(), read(path)?)),
    };
    let base = dir.to_path_buf();
    let boards = Boards::in_directory(
        dir.display().to_string(),
        Box::new(move |name| read(&base.join(name)).ok()),
        module,
    )?;
    Ok(Arc::new(boards))
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(BOARD_FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > BOARD_FILE_BYTES_MAX {
        return Err(format!(
            "{}: larger than {BOARD_FILE_BYTES_MAX} bytes",
            path.display()
        ));
    }
    Ok(bytes)
}
