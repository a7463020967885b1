//! `asl export`: write a finished game's whole log as a self-contained file that `asl verify`
//! and `asl replay` read offline (format: `docs/review.md`).

use super::{GameArgs, ServerArg};
use crate::connection::{Connection, ConnectionError};
use crate::{Failure, Status};
use protocol::export::{self, Header};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct ExportArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// Write to this file instead of standard output.
    #[arg(long)]
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
    if verified.header.head != joined.head {
        return Err(Failure::Server(format!(
            "the export ends at head {}, but on joining the server showed {}",
            verified.header.head, joined.head
        )));
    }
    match &args.out {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| Failure::Input(format!("cannot write {}: {e}", path.display())))?,
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Status::Success)
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
