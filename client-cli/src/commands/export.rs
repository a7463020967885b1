//! `asl export`: write a finished game's whole log as a self-contained file that `asl verify`
//! and `asl replay` read offline (format: `docs/review.md`).

use super::{GameArgs, ServerArg};
use crate::connection::{Connection, ConnectionError};
use crate::{Failure, Status};
use protocol::export::{self, Header};
use protocol::record::stream::Streams;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct ExportArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// Write to this file instead of standard output. Nothing is written unless the whole
    /// export was read and checked; an existing file is replaced only then.
    #[arg(short = 'o', long)]
    pub out: Option<PathBuf>,
}

/// Joins (with any of the game's tokens), reads the stored log page by page, checks the file it
/// makes before writing it — the chain must end at the head the server showed on joining — and
/// writes it.
pub async fn export(args: &ExportArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let mut connection = Connection::connect(&args.server.url).await?;
    let joined = connection
        .join(&args.game.game, &args.game.token, None)
        .await?;
    let text = read_export(&mut connection).await?;
    connection.close().await;
    let verified = export::verify(text.as_bytes(), &mut |_, _| {})
        .map_err(|e| Failure::Server(format!("the server's export does not verify: {e}")))?;
    // The head shown on joining is this viewer's stream's: the export must rebuild it.
    let streams = Streams::of_log(verified.entries.iter().map(|e| &e.event));
    let rebuilt = streams.hash(joined.viewer, joined.version);
    if streams.len(joined.viewer) != joined.version || rebuilt != joined.head {
        return Err(Failure::Server(format!(
            "the export does not rebuild the stream the server showed on joining (head {} after {} events)",
            joined.head, joined.version
        )));
    }
    match &args.out {
        Some(path) => write_whole(path, text.as_bytes())
            .map_err(|e| Failure::Input(format!("cannot write {}: {e}", path.display())))?,
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Status::Success)
}

/// Writes `bytes` to a temporary file beside `path` and renames it into place, so `path` is
/// either untouched or the whole export, never a part of one.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(".partial");
    let tmp = path.with_file_name(tmp_name);
    let written = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Pages through `GetExport` and renders the file.
pub async fn read_export(connection: &mut Connection) -> Result<String, Failure> {
    let mut pages = Pages::default();
    loop {
        let from = pages.next();
        let page = connection.export_page(from).await?;
        if pages
            .take(page)
            .map_err(|e| ConnectionError::Unexpected(e.to_string()))?
        {
            break;
        }
    }
    Ok(pages.render())
}

/// The pages of an export read so far, held to what an export may be: the server is hostile
/// input, and one that claims an endless log, changes its claim, or sends envelopes past its
/// own count is refused before the file outgrows [`export::EXPORT_BYTES_MAX`].
#[derive(Default)]
struct Pages {
    header: Option<Header>,
    lines: Vec<String>,
    /// The bytes the lines take in the file (each with its newline).
    bytes: usize,
}

/// Why an export's page from the server is refused: the server is not trusted to send what
/// it says, nor to stop.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum PageRefused {
    #[error("asked for the log from envelope {asked}, got {got} from {from}")]
    NotAsked { asked: u64, got: usize, from: u64 },
    #[error(
        "the server claims {claimed} events, over the {} an export may hold (EXPORT_EVENTS_MAX)",
        export::EXPORT_EVENTS_MAX
    )]
    TooManyEvents { claimed: u64 },
    #[error("the server said the log holds {said} events, then {then}")]
    CountChanged { said: u64, then: u64 },
    #[error("the server sent envelopes past the {events} it says the log holds")]
    PastCount { events: u64 },
    #[error(
        "the export would pass {} bytes (EXPORT_BYTES_MAX); reading stopped there",
        export::EXPORT_BYTES_MAX
    )]
    TooLarge,
}

impl Pages {
    /// The sequence of the next envelope to ask for.
    fn next(&self) -> u64 {
        self.lines.len() as u64 + 1
    }

    /// Takes one page; `Ok(true)` once the whole log is read.
    fn take(&mut self, page: protocol::wire::ExportPage) -> Result<bool, PageRefused> {
        let from = self.next();
        if page.from != from || page.envelopes.is_empty() {
            return Err(PageRefused::NotAsked {
                asked: from,
                got: page.envelopes.len(),
                from: page.from,
            });
        }
        if page.version > export::EXPORT_EVENTS_MAX {
            return Err(PageRefused::TooManyEvents {
                claimed: page.version,
            });
        }
        let header = self.header.get_or_insert(Header {
            game: page.game,
            events: page.version,
            head: page.head,
            state_hash: page.state_hash,
            signed: page.signed,
        });
        if page.version != header.events {
            return Err(PageRefused::CountChanged {
                said: header.events,
                then: page.version,
            });
        }
        if self.lines.len() as u64 + page.envelopes.len() as u64 > header.events {
            return Err(PageRefused::PastCount {
                events: header.events,
            });
        }
        for envelope in page.envelopes {
            self.bytes = self.bytes.saturating_add(envelope.len() + 1);
            if self.bytes > export::EXPORT_BYTES_MAX {
                return Err(PageRefused::TooLarge);
            }
            self.lines.push(envelope);
        }
        Ok(self.lines.len() as u64 == header.events)
    }

    fn render(&self) -> String {
        export::render(
            self.header.as_ref().expect("one page was read"),
            &self.lines,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::chain::LogHash;
    use protocol::wire::ExportPage;
    use protocol::StateHash;

    fn page(version: u64, from: u64, envelopes: Vec<String>) -> ExportPage {
        ExportPage {
            game: "ab".repeat(16),
            version,
            head: LogHash([1; 32]),
            state_hash: StateHash([2; 32]),
            from,
            envelopes,
            signed: None,
        }
    }

    #[test]
    fn a_server_claiming_an_endless_log_is_refused_before_memory_grows() {
        let mut pages = Pages::default();
        let e = pages.take(page(1 << 62, 1, vec!["00".into()])).unwrap_err();
        assert_eq!(e, PageRefused::TooManyEvents { claimed: 1 << 62 });
        assert!(e.to_string().contains("EXPORT_EVENTS_MAX"), "{e}");
        // Within the count, but each envelope as large as a page may carry: stopped at the
        // byte bound, not after it.
        let mut pages = Pages::default();
        let big = "0".repeat(protocol::wire::EXPORT_PAGE_BYTES_MAX * 2);
        let mut from = 1;
        let e = loop {
            match pages.take(page(export::EXPORT_EVENTS_MAX, from, vec![big.clone()])) {
                Ok(done) => assert!(!done),
                Err(e) => break e,
            }
            from += 1;
        };
        assert_eq!(e, PageRefused::TooLarge);
        assert!(e.to_string().contains("EXPORT_BYTES_MAX"), "{e}");
        assert!(pages.bytes <= export::EXPORT_BYTES_MAX + big.len() + 1);
        assert!(pages.lines.iter().map(|l| l.len() + 1).sum::<usize>() <= export::EXPORT_BYTES_MAX);
    }

    #[test]
    fn a_server_that_changes_its_count_or_sends_past_it_is_refused() {
        let mut pages = Pages::default();
        assert!(!pages.take(page(3, 1, vec!["00".into()])).unwrap());
        let e = pages.take(page(4, 2, vec!["01".into()])).unwrap_err();
        assert_eq!(e, PageRefused::CountChanged { said: 3, then: 4 });
        assert!(e.to_string().contains("then 4"), "{e}");
        let e = pages
            .take(page(3, 2, vec!["01".into(), "02".into(), "03".into()]))
            .unwrap_err();
        assert_eq!(e, PageRefused::PastCount { events: 3 });
        assert!(e.to_string().contains("past the 3"), "{e}");
        assert!(pages
            .take(page(3, 2, vec!["01".into(), "02".into()]))
            .unwrap());
        assert!(pages.render().lines().count() >= 3);
    }

    #[test]
    fn a_whole_file_replaces_the_old_one_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("game.log");
        std::fs::write(&path, "old").unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-dir").join("game.log");
        assert!(write_whole(&path, b"x").is_err());
        assert!(!path.exists());
    }
}
