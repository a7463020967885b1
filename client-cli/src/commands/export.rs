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
    let mut lines: Vec<String> = vec![];
    let mut header = None;
    loop {
        let from = lines.len() as u64 + 1;
        let page = connection.export_page(from).await?;
        if page.from != from || page.envelopes.is_empty() {
            return Err(ConnectionError::Unexpected(format!(
                "asked for the log from envelope {from}, got {} from {}",
                page.envelopes.len(),
                page.from
            ))
            .into());
        }
        lines.extend(page.envelopes.iter().cloned());
        let done = lines.len() as u64 >= page.version;
        header.get_or_insert(Header {
            game: page.game,
            events: page.version,
            head: page.head,
            state_hash: page.state_hash,
            signed: page.signed,
        });
        if done {
            break;
        }
    }
    Ok(export::render(&header.expect("one page was read"), &lines))
}

#[cfg(test)]
mod tests {
    use super::*;

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
