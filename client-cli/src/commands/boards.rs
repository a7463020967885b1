//! `asl boards [DIR]`: what a directory of VASL board archives holds, as the server and every
//! command that reads a scenario will see it; and the `--boards` argument those commands take.

use std::io::Write;
use std::path::{Path, PathBuf};

use protocol::board::vasl::{archive, library, library::Boards};

use crate::{Failure, Status};

/// Where board archives are, for commands that read scenarios.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct BoardsArg {
    /// Directory of VASL board archives (`bd01` …) for scenarios on real boards.
    #[arg(long = "boards", env = "ASL_BOARDS", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// A VASL module (`.vmod`) or `SharedBoardMetadata.xml` to read VASL's terrain codes from
    /// (default: the directory's `SharedBoardMetadata.xml`, else the engine's own table).
    #[arg(long = "vasl-module", env = "ASL_VASL_MODULE", value_name = "FILE")]
    pub module: Option<PathBuf>,
}

impl BoardsArg {
    /// The boards, when a directory is named: a scenario read with them holds its boards'
    /// grids, and a game read from a file is handed them (`Boards::attach`).
    pub fn open(&self) -> Result<Option<std::sync::Arc<Boards>>, Failure> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        Ok(Some(std::sync::Arc::new(open(
            dir,
            self.module.as_deref(),
        )?)))
    }
}

/// The boards in `dir`, terrain codes from `module` when given.
pub fn open(dir: &Path, module: Option<&Path>) -> Result<Boards, Failure> {
    if !dir.is_dir() {
        return Err(Failure::Input(format!(
            "{}: not a directory of VASL board archives",
            dir.display()
        )));
    }
    let module = match module {
        None => None,
        Some(path) => Some((
            path.display().to_string(),
            read(path).map_err(|e| Failure::Input(e.to_string()))?,
        )),
    };
    let base = dir.to_path_buf();
    Boards::in_directory(
        dir.display().to_string(),
        Box::new(move |name| read(&base.join(name)).ok()),
        module,
    )
    .map_err(|e| Failure::Input(e.to_string()))
}

fn read(path: &Path) -> Result<Vec<u8>, library::FileError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| library::FileError::Unreadable {
        name: name.clone(),
        why: e.to_string(),
    })?;
    library::read_capped(file, &name)
}

#[derive(clap::Args, Clone, Debug)]
pub struct ListArgs {
    /// The directory (default: `ASL_BOARDS`).
    #[arg(env = "ASL_BOARDS")]
    pub dir: Option<PathBuf>,
}

/// Files a boards directory may hold that are not boards.
const NOT_BOARDS: &[&str] = &[protocol::board::vasl::library::SHARED_METADATA];

pub fn list(args: &ListArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let Some(dir) = &args.dir else {
        return Err(Failure::Input(
            "name a directory of VASL board archives: asl boards DIR, or set ASL_BOARDS".into(),
        ));
    };
    let entries =
        std::fs::read_dir(dir).map_err(|e| Failure::Input(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !NOT_BOARDS.contains(&n) && !n.starts_with('.'))
        })
        .collect();
    files.sort();
    let (mut good, mut bad) = (0, 0);
    let write = |out: &mut (dyn Write + Send), line: String| {
        writeln!(out, "{line}").map_err(|e| Failure::Output(e.kind()))
    };
    for path in &files {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let shown = printable(&file);
        let board = read(path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| archive::read(&bytes).map_err(|e| e.to_string()));
        match board {
            Ok(board) => {
                good += 1;
                let m = &board.metadata;
                write(
                    out,
                    format!(
                        "board {:<4} version {:<5} {}×{} hexes  hills {}  ({shown})",
                        printable(m.name.trim_start_matches('0')),
                        printable(&m.version),
                        m.columns,
                        m.rows,
                        if m.has_hills { "yes" } else { "no" },
                    ),
                )?;
            }
            Err(why) => {
                bad += 1;
                write(out, format!("{shown}: cannot be read: {}", printable(&why)))?;
            }
        }
    }
    write(
        out,
        format!(
            "{good} boards read, {bad} files not read, in {}",
            dir.display()
        ),
    )?;
    if good == 0 {
        return Err(Failure::Input(format!(
            "{}: no VASL board archive could be read",
            dir.display()
        )));
    }
    Ok(Status::Success)
}

/// A file's name or an archive's words, with control characters shown as escapes so a hostile
/// file cannot drive the terminal.
fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}
