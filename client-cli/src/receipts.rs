//! Receipts: the latest signed head of a player's own stream, per game and seat, kept in the
//! state directory (`receipts/` beside the saved games) after every `joined` and `accepted`
//! (`protocol::record::receipt`).
//!
//! A receipt is shown when the player joins again, so a server whose log went back (an older
//! backup restored, a disk that lost writes) says so instead of serving what it has; and
//! `asl verify --receipts` checks an export against the receipts kept, so a file that is not
//! the game the player was shown is refused. A receipt names only what its seat was shown.
//!
//! The file of a seat is `<game>-<tag>.receipt`, the tag the first 16 hex digits of the
//! token's blake3 digest: one directory can hold both seats of a game played from one
//! machine, and the token itself is never written. The content is the signed head as JSON.

use crate::Failure;
use protocol::record::signed::SignedHead;
use std::path::{Path, PathBuf};

/// Suffix of a receipt file.
pub const RECEIPT_SUFFIX: &str = ".receipt";

/// Largest receipt file read back: a signed head is a few hundred bytes as JSON, and its batch
/// proof at most `PROOF_DEPTH_MAX` (32) hashes of about 140 bytes each, under 5 KiB.
const FILE_BYTES_MAX: u64 = 16 * 1024;

/// Most receipt files `asl verify --receipts DIR` reads from one directory: a player's state
/// directory holds one per game and seat.
pub const DIR_RECEIPTS_MAX: usize = 10_000;

/// Where receipts are kept: `receipts/` beside the saved games' directory.
pub fn receipts_dir() -> Result<PathBuf, Failure> {
    let games = crate::saved::saved_dir()?;
    Ok(games
        .parent()
        .map_or_else(|| PathBuf::from("receipts"), |p| p.join("receipts")))
}

/// Longest game id used in a file name: a server's ids are 32 hex digits.
pub const GAME_ID_BYTES_MAX: usize = 64;

/// Whether `game` may name a file: letters, digits, `-` and `_`, at most
/// [`GAME_ID_BYTES_MAX`]. A game id comes from the user or the server, and neither may make a
/// receipt land outside its directory (`../../x`).
pub fn valid_game_id(game: &str) -> bool {
    !game.is_empty()
        && game.len() <= GAME_ID_BYTES_MAX
        && game
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn file(dir: &Path, game: &str, token: &str) -> Result<PathBuf, Failure> {
    if !valid_game_id(game) {
        return Err(Failure::Input(format!(
            "`{}` is not a game id (letters, digits, `-` and `_`, at most {GAME_ID_BYTES_MAX}); no receipt is kept or read for it",
            crate::printable(game)
        )));
    }
    let digest = blake3::hash(token.as_bytes());
    let tag = &digest.to_hex()[..16];
    Ok(dir.join(format!("{game}-{tag}{RECEIPT_SUFFIX}")))
}

/// Why a receipt the server sent is not kept: what about it does not hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptRefused {
    /// Its signature fails under the key it names.
    #[error("{0}")]
    Signature(String),
    #[error("it is not a head of a viewer's own stream")]
    NotOwnStream,
    /// It names another game (printable as sent).
    #[error("it is for another game (`{game}`)")]
    OtherGame { game: String },
    #[error("it is for another viewer's stream")]
    OtherViewer,
    #[error("it signs version {signed} with another head than the version {version} the server reported")]
    OtherHead { signed: u64, version: u64 },
}

/// Checks a receipt the server sent before it is kept: its signature holds under the key it
/// names (a made-up receipt, say a zero signature at version 2^64-1, would otherwise be kept
/// and, only moving forward, shut out every genuine one after it), it is a head of `viewer`'s
/// own stream in `game`, and it signs the very `version` and `head` the same message reports.
pub fn check_sent(
    receipt: &SignedHead,
    game: &str,
    viewer: Option<protocol::Viewer>,
    version: u64,
    head: &protocol::record::stream::StreamHash,
) -> Result<(), ReceiptRefused> {
    receipt
        .check(&receipt.signer)
        .map_err(|e| ReceiptRefused::Signature(e.to_string()))?;
    let (held_by, signed) = receipt.viewer_head().ok_or(ReceiptRefused::NotOwnStream)?;
    if !receipt.game.eq_ignore_ascii_case(game) {
        return Err(ReceiptRefused::OtherGame {
            game: crate::printable(&receipt.game),
        });
    }
    if viewer.is_some_and(|v| v != held_by) {
        return Err(ReceiptRefused::OtherViewer);
    }
    if receipt.version != version || signed != *head {
        return Err(ReceiptRefused::OtherHead {
            signed: receipt.version,
            version,
        });
    }
    Ok(())
}

/// The receipt kept for `game` and the seat `token` is, if any.
pub fn load(dir: &Path, game: &str, token: &str) -> Result<Option<SignedHead>, Failure> {
    let path = file(dir, game, token)?;
    if !path.exists() {
        return Ok(None);
    }
    read(&path).map(Some)
}

/// Reads one receipt file.
pub fn read(path: &Path) -> Result<SignedHead, Failure> {
    let bad =
        |why: String| Failure::Input(format!("cannot read the receipt {}: {why}", path.display()));
    let size = std::fs::metadata(path)
        .map_err(|e| bad(e.to_string()))?
        .len();
    if size > FILE_BYTES_MAX {
        return Err(bad(format!("{size} bytes is not a receipt")));
    }
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| bad(format!("not a receipt ({e})")))
}

/// Keeps `receipt` for `game` and the seat `token` is, unless the one kept already is as far
/// along: a receipt only moves forward, so one a rolled-back server sends never replaces the
/// proof of what was sent before.
///
/// "Forward" is within one key: a receipt under another key than the kept one's replaces it
/// whatever its version (the server's key was made anew, or someone signed with a key of
/// its own), so a receipt at version 2^64-1 under a made-up key cannot shut out the genuine
/// ones after it.
pub fn keep(dir: &Path, game: &str, token: &str, receipt: &SignedHead) -> Result<(), Failure> {
    let path = file(dir, game, token)?;
    let cannot = |e: std::io::Error| {
        Failure::Input(format!("cannot keep the receipt {}: {e}", path.display()))
    };
    if let Ok(Some(kept)) = load(dir, game, token) {
        if kept.signer == receipt.signer && kept.version >= receipt.version {
            return Ok(());
        }
    }
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let text = serde_json::to_string(receipt).expect("a receipt always encodes");
    let tmp = path.with_extension("receipt.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(cannot)
}

/// The receipts `asl verify --receipts` names: one file, or every `*.receipt` in a directory.
pub fn read_all(path: &Path) -> Result<Vec<(PathBuf, SignedHead)>, Failure> {
    if !path.is_dir() {
        return Ok(vec![(path.to_path_buf(), read(path)?)]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(RECEIPT_SUFFIX))
        .take(DIR_RECEIPTS_MAX + 1)
        .collect();
    if files.len() > DIR_RECEIPTS_MAX {
        return Err(Failure::Input(format!(
            "{} holds more than {DIR_RECEIPTS_MAX} receipts; name the file of the game",
            path.display()
        )));
    }
    files.sort();
    files
        .into_iter()
        .map(|p| read(&p).map(|r| (p, r)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::signed::ServerSigningKey;
    use protocol::record::stream::StreamHash;
    use protocol::{Side, Viewer};

    fn receipt(seq: u64) -> SignedHead {
        SignedHead::of_stream(
            &ServerSigningKey::from_bytes(&[1; 32]),
            "g",
            Viewer::Side(Side::A),
            seq,
            StreamHash([seq as u8; 32]),
        )
    }

    /// The longest proof a receipt may carry, every byte written at its widest, fits the file
    /// limit: no receipt the server could send is too large to keep.
    #[test]
    fn the_longest_receipt_fits_a_receipt_file() {
        use protocol::record::signed::{NodeHash, Sibling, PROOF_DEPTH_MAX};
        let mut longest = receipt(u64::MAX);
        let proof = longest.batch.as_mut().unwrap();
        proof.salt = NodeHash([255; 32]);
        proof.path = vec![Sibling::Right(NodeHash([255; 32])); PROOF_DEPTH_MAX];
        longest.game = "f".repeat(64);
        let size = serde_json::to_string(&longest).unwrap().len();
        assert!(size as u64 <= FILE_BYTES_MAX, "{size} bytes");
        let dir = tempfile::tempdir().unwrap();
        keep(dir.path(), "g", "a", &longest).unwrap();
        assert_eq!(load(dir.path(), "g", "a").unwrap(), Some(longest));
    }

    #[test]
    fn a_receipt_only_moves_forward_and_each_seat_has_its_own() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path(), "g", "a").unwrap(), None);
        keep(dir.path(), "g", "a", &receipt(3)).unwrap();
        keep(dir.path(), "g", "a", &receipt(2)).unwrap();
        assert_eq!(load(dir.path(), "g", "a").unwrap(), Some(receipt(3)));
        keep(dir.path(), "g", "a", &receipt(5)).unwrap();
        assert_eq!(load(dir.path(), "g", "a").unwrap(), Some(receipt(5)));
        assert_eq!(load(dir.path(), "g", "b").unwrap(), None);
        keep(dir.path(), "g", "b", &receipt(1)).unwrap();
        let all = read_all(dir.path()).unwrap();
        assert_eq!(all.len(), 2);
        // No file holds the token.
        for (path, _) in &all {
            assert!(
                !path.to_string_lossy().contains("-a."),
                "{}",
                path.display()
            );
        }
        std::fs::write(dir.path().join(format!("x{RECEIPT_SUFFIX}")), "{").unwrap();
        let err = read_all(dir.path()).unwrap_err();
        assert!(
            matches!(&err, Failure::Input(m) if m.contains("not a receipt")),
            "{err:?}"
        );
    }

    /// Issue 36: a receipt is checked before it is kept. A made-up one (zero signature,
    /// version 2^64-1) is refused, as is one for another viewer, game, version or head; one
    /// under another key replaces the kept one but cannot block the next genuine one; and a
    /// game id that would
    /// put the file outside the directory is refused before any path is made of it.
    #[test]
    fn receipts_are_checked_before_they_are_kept_and_ids_before_paths() {
        let genuine = receipt(3);
        let (_, head) = genuine.viewer_head().unwrap();
        let side_a = Some(Viewer::Side(Side::A));
        check_sent(&genuine, "g", side_a, 3, &head).unwrap();
        check_sent(&genuine, "G", None, 3, &head).unwrap();

        let mut forged = receipt(u64::MAX);
        forged.signature = vec![0; 64];
        forged.batch = None;
        let (_, forged_head) = forged.viewer_head().unwrap();
        let why = check_sent(&forged, "g", side_a, u64::MAX, &forged_head).unwrap_err();
        assert!(matches!(why, ReceiptRefused::Signature(_)), "{why}");
        assert!(why.to_string().contains("signature"), "{why}");
        for (game, viewer, version, head, refused) in [
            (
                "h",
                side_a,
                3,
                head,
                ReceiptRefused::OtherGame { game: "g".into() },
            ),
            (
                "g",
                Some(Viewer::Side(Side::B)),
                3,
                head,
                ReceiptRefused::OtherViewer,
            ),
            (
                "g",
                side_a,
                4,
                head,
                ReceiptRefused::OtherHead {
                    signed: 3,
                    version: 4,
                },
            ),
            (
                "g",
                side_a,
                3,
                StreamHash([9; 32]),
                ReceiptRefused::OtherHead {
                    signed: 3,
                    version: 3,
                },
            ),
        ] {
            assert_eq!(
                check_sent(&genuine, game, viewer, version, &head),
                Err(refused)
            );
        }

        let dir = tempfile::tempdir().unwrap();
        keep(dir.path(), "g", "a", &genuine).unwrap();
        let other_key = SignedHead::of_stream(
            &ServerSigningKey::from_bytes(&[2; 32]),
            "g",
            Viewer::Side(Side::A),
            9,
            StreamHash([9; 32]),
        );
        keep(dir.path(), "g", "a", &other_key).unwrap();
        assert_eq!(load(dir.path(), "g", "a").unwrap(), Some(other_key));
        keep(dir.path(), "g", "a", &genuine).unwrap();
        assert_eq!(
            load(dir.path(), "g", "a").unwrap(),
            Some(genuine.clone()),
            "a receipt under another key, however far along, does not shut out the genuine one"
        );

        let inner = dir.path().join("receipts");
        for bad in ["../../x", "a/b", "", ".", &"f".repeat(65), "g\u{1b}[2J"] {
            let err = keep(&inner, bad, "a", &genuine).unwrap_err();
            assert!(err.to_string().contains("is not a game id"), "{err}");
            assert!(load(&inner, bad, "a").is_err());
        }
        assert!(!inner.exists(), "nothing was written for a bad id");
        assert!(valid_game_id(&"ab".repeat(16)));
    }
}
