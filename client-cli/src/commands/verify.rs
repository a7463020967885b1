//! `asl verify`: check an export offline, through the same rules engine — the file, the hash
//! chain, every event replayed, every roll re-derived from its revealed seed — and say it is
//! valid with a summary, or name the first bad event and why.

use crate::{Failure, Status};
use protocol::export::{self, Verified, EXPORT_BYTES_MAX};
use protocol::game::{Game, Viewer};
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
}

pub fn verify(args: &VerifyArgs, out: &mut dyn Write) -> Result<Status, Failure> {
    let receipt = args
        .head
        .as_deref()
        .map(|h| {
            StreamHash::from_hex(h).ok_or_else(|| {
                Failure::Input(format!("`{h}` is not a head (64 lowercase hex digits)"))
            })
        })
        .transpose()?;
    let bytes = read_export(&args.file)?;
    match check(&bytes) {
        Ok(verified) => {
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
                        viewer_name(&verified.game, viewer)
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
            out.write_all(verified.report().as_bytes())?;
            Ok(Status::Success)
        }
        Err(e) => {
            writeln!(out, "invalid: {e}")?;
            Ok(Status::Invalid)
        }
    }
}

/// "the German player's" or "the spectators'".
fn viewer_name(game: &Game, viewer: Viewer) -> String {
    match viewer {
        Viewer::Side(side) => format!("the {} player's", game.side_name(side)),
        Viewer::Spectator => "the spectators'".into(),
    }
}

/// Reads an export, refusing one over the limit before reading it.
pub fn read_export(path: &Path) -> Result<Vec<u8>, Failure> {
    let cannot = |e: std::io::Error| Failure::Input(format!("cannot read {}: {e}", path.display()));
    let size = std::fs::metadata(path).map_err(cannot)?.len();
    if size > EXPORT_BYTES_MAX as u64 {
        return Err(Failure::Input(format!(
            "{} is {size} bytes, over the {EXPORT_BYTES_MAX}-byte limit for an export",
            path.display()
        )));
    }
    std::fs::read(path).map_err(cannot)
}

/// Verifies with a progress bar on stderr for long logs (indicatif draws only on a terminal).
pub fn check(bytes: &[u8]) -> Result<Verified, export::VerifyError> {
    let mut bar: Option<indicatif::ProgressBar> = None;
    let result = export::verify(bytes, &mut |done, total| {
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
    result
}
