//! Published VASL saves and boards for the tests that read real ones: where they are, and a
//! game made of a save with no edits, as `asl new SAVE.vsav` makes it.

#![allow(dead_code)] // each test file uses its own share of these

use client::commands::new::{new, NewArgs};
use client::commands::{boards::BoardsArg, ServerArg};
use std::path::{Path, PathBuf};

/// The directories of saves and of VASL's board archives, when `ASL_VASL_SAVES` and
/// `ASL_BOARDS` name them (no third party's save or board is in the repository).
pub fn dirs() -> Option<(PathBuf, PathBuf)> {
    let saves = std::env::var_os("ASL_VASL_SAVES")?;
    let boards = std::env::var_os("ASL_BOARDS")?;
    Some((saves.into(), boards.into()))
}

/// A new game of `save` on the server at `url`, through the CLI's `new`: what it printed as
/// JSON (the game, its tokens, what the import assumed).
pub async fn new_from_save(url: &str, save: &Path, boards: &Path) -> serde_json::Value {
    let mut out = vec![];
    new(
        &NewArgs {
            boards: BoardsArg {
                dir: Some(boards.to_path_buf()),
                module: None,
            },
            server: ServerArg { url: url.into() },
            scenario: save.to_path_buf(),
            json: true,
            admin_token: None,
            save: None,
            clock: None,
        },
        &mut out,
    )
    .await
    .unwrap_or_else(|e| panic!("{}: {e:?}", save.display()));
    serde_json::from_slice(&out).unwrap()
}

/// What `save` is, read by the one path `asl new` takes (`new_game_from_save`).
pub enum Kind {
    /// It cannot be a game, and the import says why in plain words (a tool's test fixture with
    /// an empty board picker, or one of labels alone): the refusal's words.
    Refused(String),
    /// A game whose every unit stands on the boards already: nothing to set up.
    Placed,
    /// A set-up save: units off the boards, their side's order of battle to set up.
    SetUp,
}

/// The kind of `save`. A save refused for any reason but these two is a failure of the test.
pub fn kind(save: &Path) -> Kind {
    use vasl_save::from_save::{new_game_from_save, ImportError, SaveImportError};
    let bytes = std::fs::read(save).unwrap_or_else(|e| panic!("{}: {e}", save.display()));
    match new_game_from_save(&bytes, "x") {
        Ok(made) if made.imported.units.iter().all(|u| u.hex.is_some()) => Kind::Placed,
        Ok(_) => Kind::SetUp,
        Err(
            e @ SaveImportError::Import(ImportError::NoBoards { .. } | ImportError::NoUnits { .. }),
        ) => Kind::Refused(e.to_string()),
        Err(e) => panic!("{}: {e}", save.display()),
    }
}
