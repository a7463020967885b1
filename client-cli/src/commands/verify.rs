//! `asl verify`: check an export offline, through the same rules engine — the file, the hash
//! chain, every event replayed, every roll re-derived from its revealed seed — and say it is
//! valid with a summary, or name the first bad event and why.

use crate::{Failure, Status};
use protocol::export::{self, Verified};
use protocol::record::signed::ServerKey;
use protocol::record::stream::{StreamHash, Streams};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Logs with at least this many events get a progress bar (on a terminal): shorter ones are
/// checked before a bar would be seen.
pub const PROGRESS_EVENTS_MIN: u64 = 2_000;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct VerifyArgs {
    /// The export file (`asl export`).
    pub file: PathBuf,
    /// A head you were shown during play (`asl replay --game … --token …` prints the head at
    /// its moment): the log must pass through it, so nothing up to there was changed since.
    #[arg(long)]
    pub head: Option<String>,
    /// The server's public key (64 hex digits, or a file holding them; the server prints it
    /// at start and serves it at /.well-known/asl-server-key): the file's signed head must be
    /// signed with it. Without it, a file proves only its internal consistency.
    #[arg(long, value_name = "KEY|FILE")]
    pub server_key: Option<String>,
    /// Check the file against the receipts kept during play (the signed heads of your own
    /// stream, `asl run`/`play` keep them): a receipt file, or a directory of them (default:
    /// where this machine keeps them). Each receipt for this game must be signed with
    /// --server-key, and the file must hold that viewer's stream up to the receipt's event with
    /// the same head. Needs --server-key.
    #[arg(long, value_name = "FILE|DIR", num_args = 0..=1)]
    pub receipts: Option<Option<PathBuf>>,
    /// For a game on real boards: the VASL board archives it was created with (LOS is
    /// re-traced over them).
    #[command(flatten)]
    pub boards: super::boards::BoardsArg,
}

/// Reads `--server-key`: the key itself, or a file that holds it.
fn server_key(text: &str) -> Result<ServerKey, Failure> {
    if let Some(key) = ServerKey::from_hex(text) {
        return Ok(key);
    }
    let path = Path::new(text);
    let read = std::fs::File::open(path)
        .and_then(|f| {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::Read::take(f, 1024), &mut s).map(|_| s)
        })
        .map_err(|e| {
            Failure::Input(format!(
                "`{text}` is neither a server key (64 lowercase hex digits) nor a readable file ({e})"
            ))
        })?;
    ServerKey::from_hex(&read).ok_or_else(|| {
        Failure::Input(format!(
            "{} does not hold a server key (64 lowercase hex digits)",
            path.display()
        ))
    })
}

pub fn verify(args: &VerifyArgs, out: &mut dyn Write) -> Result<Status, Failure> {
    let boards = args.boards.open()?;
    let receipt = args
        .head
        .as_deref()
        .map(|h| {
            StreamHash::from_hex(h).ok_or_else(|| {
                Failure::Input(format!("`{h}` is not a head (64 lowercase hex digits)"))
            })
        })
        .transpose()?;
    let trusted = args.server_key.as_deref().map(server_key).transpose()?;
    let receipts = match &args.receipts {
        None => None,
        Some(_) if trusted.is_none() => {
            return Err(Failure::Input(
                "--receipts needs --server-key: a receipt proves what the server sent only under the server's key".into(),
            ))
        }
        Some(Some(path)) => Some((path.clone(), crate::receipts::read_all(path)?)),
        Some(None) => {
            let dir = crate::receipts::receipts_dir()?;
            Some((dir.clone(), crate::receipts::read_all(&dir)?))
        }
    };
    let bytes = match read_export(&args.file)? {
        Ok(bytes) => bytes,
        Err(e) => {
            writeln!(out, "invalid: {e}")?;
            return Ok(Status::Invalid);
        }
    };
    match check(&bytes, boards.as_deref()) {
        Ok(verified) => {
            if let Some(key) = &trusted {
                if let Err(e) = verified.check_signature(key) {
                    writeln!(out, "invalid: {e}")?;
                    return Ok(Status::Invalid);
                }
            }
            if let Some(receipt) = receipt {
                // A head of the log itself, or of one viewer's own stream (what `joined`,
                // `accepted` and `state` show a player), rebuilt from the whole log.
                let streams = Streams::of_log(verified.entries.iter().map(|e| &e.event));
                match (
                    verified.hashes.iter().position(|h| h.0 == receipt.0),
                    streams.find(receipt),
                ) {
                    (Some(i), _) => writeln!(
                        out,
                        "the log passes through head {receipt} at event {}",
                        i + 1
                    )?,
                    (None, Some((viewer, seq))) => writeln!(
                        out,
                        "the log passes through head {receipt}: {} stream, its event {seq}",
                        verified.stream_name(viewer)
                    )?,
                    (None, None) => {
                        writeln!(
                            out,
                            "invalid: the log never passes through head {receipt}: events up to it were changed, or it is another game's"
                        )?;
                        return Ok(Status::Invalid);
                    }
                }
            }
            if let (Some((from, receipts)), Some(key)) = (&receipts, &trusted) {
                if !check_receipts(&verified, key, from, receipts, out)? {
                    return Ok(Status::Invalid);
                }
            }
            out.write_all(verified.report().as_bytes())?;
            writeln!(out, "{}", verified.trust(trusted.as_ref()))?;
            Ok(Status::Success)
        }
        Err(e) => {
            writeln!(out, "invalid: {e}")?;
            Ok(Status::Invalid)
        }
    }
}

/// Checks the export against every receipt for its game; says for each what held, or names
/// the first that does not (and returns false).
fn check_receipts(
    verified: &Verified,
    key: &ServerKey,
    from: &Path,
    receipts: &[(PathBuf, protocol::record::signed::SignedHead)],
    out: &mut dyn Write,
) -> Result<bool, Failure> {
    let game = &verified.header.game;
    let mine: Vec<_> = receipts.iter().filter(|(_, r)| r.game == *game).collect();
    if mine.is_empty() {
        // One file named: its game is the mismatch. A directory: none of its receipts is
        // this game's, which is for the user to know, not a fault in the file.
        if let [(path, receipt)] = receipts {
            writeln!(
                out,
                "invalid: the receipt {} is for game `{}`, not this file's game `{game}`",
                path.display(),
                receipt.game
            )?;
            return Ok(false);
        }
        return Err(Failure::Input(format!(
            "no receipt in {} is for game `{game}`",
            from.display()
        )));
    }
    match verified.check_receipts(key, mine.iter().map(|(_, r)| r)) {
        Ok(held) => {
            for ((path, _), (viewer, seq)) in mine.iter().zip(held) {
                writeln!(
                    out,
                    "{}",
                    verified.receipt_held(path.display(), viewer, seq)
                )?;
            }
            Ok(true)
        }
        Err((i, mismatch)) => {
            writeln!(
                out,
                "invalid: the receipt {}: {mismatch}",
                mine[i].0.display()
            )?;
            Ok(false)
        }
    }
}

/// Reads an export, stopping at the limit (`export::read`) whatever the path is — a file, a
/// pipe, `/dev/zero`: the outer error is the path's, the inner the content's.
pub fn read_export(path: &Path) -> Result<Result<Vec<u8>, export::VerifyError>, Failure> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))?;
    Ok(export::read(&mut file))
}

/// Verifies with a progress bar on stderr for long logs (indicatif draws only on a terminal).
/// A game on real boards is re-checked over `boards` (`--boards`).
pub fn check(
    bytes: &[u8],
    boards: Option<&protocol::board::vasl::library::Boards>,
) -> Result<Verified, export::VerifyError> {
    let mut bar: Option<indicatif::ProgressBar> = None;
    let result = export::verify_on(bytes, boards, &mut |done, total| {
        if total < PROGRESS_EVENTS_MIN {
            return;
        }
        let bar = bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "verifying {bar:40} {pos}/{len} events ({eta} left)",
                )
                .expect("a valid template"),
            );
            bar
        });
        if done % 256 == 0 || done == total {
            bar.set_position(done);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let verified = result?;
    // An export is a file from others, and `verify` and `replay` print its scenario's and
    // sides' names: held to the words a scenario file may hold, as the server holds every
    // scenario it creates a game from (a terminal escape in a side's name is refused).
    verified
        .game
        .scenario
        .check_words()
        .map_err(|e| export::VerifyError {
            at: export::Where::Event(1),
            why: format!("its scenario is not one a scenario file may give: {e}"),
        })?;
    Ok(verified)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::chain::{seal_entry, Entry, GENESIS};
    use protocol::record::referee::Referee;
    use protocol::{Command, ReadScenario, Scenario, Side};

    const SCENARIO: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");

    /// A whole, consistent export of a game conceded at once, whose scenario is `scenario`:
    /// what anyone can make without the server's key.
    fn export_of(scenario: Scenario) -> Vec<u8> {
        let mut referee = Referee::new(Entry::created(scenario), vec![[7; 32]]).unwrap();
        referee
            .play(Side::A, &Command::Concede, &mut || [8; 32])
            .unwrap();
        let mut prev = GENESIS;
        let mut lines = vec![];
        for e in referee.entries() {
            let (bytes, hash) = seal_entry(prev, [e.seq as u8; 16], e);
            lines.push(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
            prev = hash;
        }
        let header = export::Header {
            game: "ab".repeat(16),
            events: referee.entries().len() as u64,
            head: prev,
            state_hash: referee.game().state_hash(),
            signed: None,
        };
        export::render(&header, &lines).into_bytes()
    }

    /// An export is a file from others: one whose scenario names a side with a terminal
    /// escape (a chain and a replay that hold, as anyone can make) is refused before `verify`
    /// or `replay` print a word of it, and the refusal prints no control character.
    #[test]
    fn an_export_whose_names_drive_a_terminal_is_refused() {
        let fair = Scenario::from_toml(SCENARIO).unwrap();
        check(&export_of(fair.clone()), None).unwrap();
        let mut hostile = fair.clone();
        hostile.name = "\u{1b}]0;owned\u{7}\u{1b}[2Jvalid: signed by the server".into();
        let e = check(&export_of(hostile), None).unwrap_err();
        assert_eq!(e.at, export::Where::Event(1), "{e}");
        assert!(e.to_string().contains("name"), "{e}");
        assert!(crate::plain(&e.to_string()), "{e:?}");
        let mut hostile = fair;
        hostile.sides[0].name = "German\u{202e}".into();
        let e = check(&export_of(hostile), None).unwrap_err();
        assert!(e.to_string().contains("sides[0].name"), "{e}");
    }
}
