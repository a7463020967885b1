//! `asl log`: print the game record from the server's log, as the token's holder may see it.

use super::{join_fresh, GameArgs, ServerArg};
use crate::connection::ConnectionError;
use crate::follower::Follower;
use crate::record::Record;
use crate::{Failure, Status};
use protocol::wire::{self, Sequenced};
use protocol::{Event, Game};
use std::io::Write;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct LogArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// Print each event as one JSON line {seq, event} instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print from this event on (earlier events are still read, to describe later ones).
    #[arg(long, default_value_t = 1)]
    pub from: u64,
}

/// Pages through the whole log from #1, replaying it into a local game so each event is
/// described in the position it happened in.
pub async fn log(args: &LogArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let (mut connection, _, _) = join_fresh(&args.server, &args.game).await?;
    let mut follower: Option<Follower> = None;
    let mut record = Record::starting_at(args.from);
    let mut from = 1;
    loop {
        let page = connection.get_log(from).await?;
        let Some(last) = page.events.last().map(|s| s.seq) else {
            break;
        };
        if last < from {
            return Err(ConnectionError::Unexpected(format!(
                "asked for the log from #{from}, got events up to #{last}"
            ))
            .into());
        }
        for event in &page.events {
            let follower = match &mut follower {
                Some(f) => f,
                None => follower.insert(start(event)?),
            };
            let lines = record.follow(follower, event)?;
            if lines.is_empty() {
                continue;
            }
            if args.json {
                writeln!(out, "{}", wire::to_json(event))?;
            } else {
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
        }
        if last >= page.version {
            break;
        }
        from = last + 1;
    }
    connection.close().await;
    Ok(Status::Success)
}

/// The game a log replays into: the scenario of its first event, `GameCreated`, not yet applied.
fn start(first: &Sequenced) -> Result<Follower, Failure> {
    match first {
        Sequenced {
            seq: 1,
            event: Some(Event::GameCreated { scenario }),
        } => Ok(Follower::new(Game::new(scenario.clone()))),
        other => Err(ConnectionError::Unexpected(format!(
            "the log starts with #{} {}, not #1 GameCreated",
            other.seq,
            other.event.as_ref().map_or("(hidden)", Event::name)
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_must_start_with_game_created() {
        let err = start(&Sequenced {
            seq: 2,
            event: None,
        })
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("starts with #2 (hidden), not #1 GameCreated"),
            "{err}"
        );
    }
}
