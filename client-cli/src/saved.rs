//! Games saved by `asl new --save NAME`, so players name a game and a side instead of pasting
//! a 32-digit id and a 64-digit token into every command: `--game NAME --token german`.
//!
//! A saved game is one JSON file, `NAME.json`, in the directory [`saved_dir`] names, readable
//! by its owner only (it holds every token of the game).

use crate::commands::{GameArgs, ServerArg};
use crate::{Failure, DEFAULT_SERVER};
use protocol::scenario::SideSpec;
use protocol::wire::Tokens;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Longest name a game may be saved under: a word to type, not a document.
pub const NAME_CHARS_MAX: usize = 64;

/// Largest saved-game file read back: what `asl new` writes is well under a kilobyte, so
/// anything far larger is not one of ours.
const FILE_BYTES_MAX: u64 = 64 * 1024;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedGame {
    /// The server the game was created on, as given to `asl new`.
    pub server: String,
    pub game: String,
    pub sides: [SideSpec; 2],
    pub tokens: Tokens,
}

impl SavedGame {
    /// The token `who` names: a side by id or name (`german`, `German`), `spectator`, or
    /// — when it is none of those — `who` itself, taken as a token.
    pub fn token_for(&self, who: &str) -> String {
        let [a, b] = &self.sides;
        let named =
            |s: &SideSpec| s.id.eq_ignore_ascii_case(who) || s.name.eq_ignore_ascii_case(who);
        if named(a) {
            self.tokens.side_a.clone()
        } else if named(b) {
            self.tokens.side_b.clone()
        } else if who.eq_ignore_ascii_case("spectator") {
            self.tokens.spectator.clone()
        } else {
            who.to_string()
        }
    }
}

/// Where saved games live: `$ASL_HOME/games`, else `$XDG_CONFIG_HOME/asl/games`, else
/// `$HOME/.config/asl/games`.
pub fn saved_dir() -> Result<PathBuf, Failure> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = var("ASL_HOME")
        .or_else(|| var("XDG_CONFIG_HOME").map(|c| c.join("asl")))
        .or_else(|| var("HOME").map(|h| h.join(".config").join("asl")))
        .ok_or_else(|| {
            Failure::Input("cannot tell where to keep saved games: set ASL_HOME or HOME".into())
        })?;
    Ok(base.join("games"))
}

/// Refuses a name that is not a plain word, so it can never point outside [`saved_dir`].
pub fn check_name(name: &str) -> Result<(), Failure> {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if name.is_empty() || name.len() > NAME_CHARS_MAX || !name.chars().all(plain) {
        return Err(Failure::Input(format!(
            "`{name}` cannot name a saved game: use 1 to {NAME_CHARS_MAX} letters, digits, `-` or `_`"
        )));
    }
    Ok(())
}

/// Saves `game` as `name` in `dir`, replacing any game saved under that name; returns the file.
pub fn save(dir: &Path, name: &str, game: &SavedGame) -> Result<PathBuf, Failure> {
    check_name(name)?;
    let cannot = |e: std::io::Error| {
        Failure::Input(format!("cannot save the game in {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let path = dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(game).expect("a saved game always encodes");
    write_private(&path, text.as_bytes()).map_err(cannot)?;
    Ok(path)
}

/// Writes through a temporary file renamed into place, readable by the owner only.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// The game saved as `name` in `dir`, or `None` if there is none.
pub fn load(dir: &Path, name: &str) -> Result<Option<SavedGame>, Failure> {
    check_name(name)?;
    let path = dir.join(format!("{name}.json"));
    let bad = |why: String| {
        Failure::Input(format!(
            "cannot read the saved game {}: {why}",
            path.display()
        ))
    };
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(bad(e.to_string())),
        Ok(m) if m.len() > FILE_BYTES_MAX => {
            return Err(bad(format!("{} bytes is not a saved game", m.len())))
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

/// Whether `game` is a game id as the server makes them (32 lowercase hex digits) rather than
/// the name of a saved game.
fn is_game_id(game: &str) -> bool {
    game.len() == 32 && game.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Turns `--game NAME --token SIDE` into the saved id, token and server. A game id is used as
/// it is; the saved server is used unless `--server` (or `ASL_SERVER`) names another.
pub fn resolve(server: &mut ServerArg, game: &mut GameArgs) -> Result<(), Failure> {
    if is_game_id(&game.game) {
        return Ok(());
    }
    let dir = saved_dir()?;
    let saved = load(&dir, &game.game)?.ok_or_else(|| {
        Failure::Input(format!(
            "`{}` is neither a game id (32 hex digits) nor a game saved in {} \
             (`asl new SCENARIO --save {}` saves one)",
            game.game,
            dir.display(),
            game.game
        ))
    })?;
    game.token = saved.token_for(&game.token);
    game.game = saved.game.clone();
    if server.url == DEFAULT_SERVER {
        server.url = saved.server;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved() -> SavedGame {
        SavedGame {
            server: "ws://example:9000".into(),
            game: "0123456789abcdef0123456789abcdef".into(),
            sides: [
                SideSpec {
                    id: "german".into(),
                    name: "German".into(),
                    nationality: None,
                },
                SideSpec {
                    id: "russian".into(),
                    name: "Russian".into(),
                    nationality: None,
                },
            ],
            tokens: Tokens {
                side_a: "ta".into(),
                side_b: "tb".into(),
                spectator: "ts".into(),
            },
        }
    }

    #[test]
    fn sides_and_the_spectator_name_their_tokens() {
        let s = saved();
        assert_eq!(s.token_for("german"), "ta");
        assert_eq!(s.token_for("Russian"), "tb");
        assert_eq!(s.token_for("spectator"), "ts");
        assert_eq!(s.token_for("ffff"), "ffff", "anything else is a token");
    }

    #[test]
    fn a_saved_game_round_trips_privately() {
        let dir = tempfile::tempdir().unwrap();
        let path = save(dir.path(), "walk", &saved()).unwrap();
        assert_eq!(load(dir.path(), "walk").unwrap(), Some(saved()));
        assert_eq!(load(dir.path(), "other").unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "only the owner reads the tokens");
        }
    }

    #[test]
    fn names_cannot_leave_the_directory() {
        for name in [
            "../x",
            "a/b",
            "",
            ".hidden",
            &"x".repeat(NAME_CHARS_MAX + 1),
        ] {
            let e = check_name(name).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{name}: {e}");
        }
        check_name("walk-2_b").unwrap();
    }

    #[test]
    fn a_garbled_file_is_bad_input_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("walk.json"), "{").unwrap();
        let e = load(dir.path(), "walk").unwrap_err();
        assert!(e.to_string().contains("walk.json"), "{e}");
    }

    #[test]
    fn ids_are_not_names() {
        assert!(is_game_id("0123456789abcdef0123456789abcdef"));
        assert!(!is_game_id("walk"));
        assert!(!is_game_id("0123456789ABCDEF0123456789ABCDEF"));
    }
}
