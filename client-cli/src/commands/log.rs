//! `asl log`: print the game record from the server's log, as the token's holder may see it.

use super::{join_fresh, GameArgs, ServerArg};
use crate::connection::{ConnectionError, LogPage};
use crate::follower::Follower;
use crate::record::Record;
use crate::{Failure, Status};
use protocol::event::GameCreated;
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
    let mut replay = Replay {
        follower: None,
        record: Record::starting_at(args.from),
        json: args.json,
    };
    let mut from = Some(1);
    while let Some(first) = from {
        let page = connection.get_log(first).await?;
        from = replay.print_page(first, &page, out)?;
    }
    connection.close().await;
    Ok(Status::Success)
}

/// The log read so far, replayed. Kept apart from the connection so paging can be tested with
/// hand-built pages: asl-server's pages hold `LOG_PAGE_EVENTS_MAX` events, more than a test
/// game reaches.
struct Replay {
    /// Started from the first page's `GameCreated`.
    follower: Option<Follower>,
    record: Record,
    json: bool,
}

impl Replay {
    /// Prints the page the server sent for a request from `from`, and returns where the next
    /// page starts, or `None` once the log is complete.
    fn print_page(
        &mut self,
        from: u64,
        page: &LogPage,
        out: &mut (dyn Write + Send),
    ) -> Result<Option<u64>, Failure> {
        // A server is not trusted to stop: the check `asl replay` makes of every page.
        super::replay::check_claimed_log(page)?;
        let Some(last) = page.events.last().map(|s| s.seq) else {
            return Ok(None);
        };
        if last < from {
            return Err(ConnectionError::Unexpected(format!(
                "asked for the log from #{from}, got events up to #{last}"
            ))
            .into());
        }
        for event in &page.events {
            let follower = match &mut self.follower {
                Some(f) => f,
                None => self.follower.insert(start(event)?),
            };
            let lines = self.record.follow(follower, event)?;
            if lines.is_empty() {
                continue;
            }
            if self.json {
                writeln!(out, "{}", crate::printable_json(&wire::to_json(event)))?;
            } else {
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
        }
        Ok((last < page.version).then_some(last + 1))
    }
}

/// The game a log replays into: the scenario of its first event, `GameCreated`, not yet applied.
pub(super) fn start(first: &Sequenced) -> Result<Follower, Failure> {
    match (first.seq, &first.viewed.event) {
        (1, Event::GameCreated(GameCreated { scenario })) => {
            Ok(Follower::new(Game::new(scenario.clone())))
        }
        (seq, event) => Err(ConnectionError::Unexpected(format!(
            "the log starts with #{seq} {}, not #1 GameCreated",
            event.name()
        ))
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::{GameCreated, GameEnded};
    use protocol::game::view::Viewed;
    use protocol::ReadScenario;
    use protocol::{apply, decide, Command, Scenario, ScriptedDice};

    /// A game's full log as the spectator gets it: `GameCreated` and then `dones` steps.
    fn full_log(dones: usize) -> Vec<Sequenced> {
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap();
        let mut game = Game::new(scenario.clone());
        let mut events = vec![Event::GameCreated(GameCreated { scenario })];
        apply(&mut game, &events[0]);
        // `dones` steps ended, each by a `done` or passing by itself (`rules::passing`): one event
        // each, and the last `done` followed by any steps that pass after it.
        while events.len() <= dones {
            let side = game.acting();
            let done = decide(&game, side, &Command::Done, &mut ScriptedDice::default()).unwrap();
            for event in done {
                apply(&mut game, &event);
                events.push(event);
            }
        }
        events
            .into_iter()
            .zip(1..)
            .map(|(event, seq)| Sequenced {
                seq,
                viewed: Viewed {
                    event,
                    renamed: vec![],
                    weapons: vec![],
                }
                .into(),
                hash: Default::default(),
            })
            .collect()
    }

    /// Replays `log` as a server with pages of `page_max` events would serve it, returning
    /// where each page was asked from and what was printed.
    fn replay(log: &[Sequenced], page_max: usize, from: u64) -> (Vec<u64>, String) {
        let mut replay = Replay {
            follower: None,
            record: Record::starting_at(from),
            json: false,
        };
        let mut out = vec![];
        let mut asked = vec![];
        let mut next = Some(1);
        while let Some(first) = next {
            asked.push(first);
            let page = LogPage {
                version: log.len() as u64,
                events: log
                    .iter()
                    .skip(first as usize - 1)
                    .take(page_max)
                    .cloned()
                    .collect(),
            };
            next = replay.print_page(first, &page, &mut out).unwrap();
        }
        (asked, String::from_utf8(out).unwrap())
    }

    #[test]
    fn pages_are_read_in_turn_and_print_as_one() {
        let log = full_log(7);
        let (asked, paged) = replay(&log, 3, 1);
        assert_eq!(asked, [1, 4, 7]);
        let (asked, whole) = replay(&log, 100, 1);
        assert_eq!(asked, [1]);
        assert_eq!(paged, whole);
        let seqs: Vec<&str> = paged
            .lines()
            .filter_map(|l| l.split_once("  ").map(|(seq, _)| seq))
            .filter(|seq| seq.starts_with('#'))
            .collect();
        // The seventh step's `done` (the AFPh's) brings the German's RtPh step, which passes
        // by itself (A10.5): one event more than the steps asked for.
        assert_eq!(
            seqs,
            ["#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9"],
            "{paged}"
        );
    }

    /// Events before `--from` are still replayed, on every page, so later ones are described in
    /// their position; they are not printed.
    #[test]
    fn from_n_reads_every_page_and_prints_from_n() {
        let log = full_log(7);
        let (asked, text) = replay(&log, 3, 5);
        assert_eq!(asked, [1, 4, 7]);
        assert!(
            text.starts_with("== Turn 1, German Player Turn: PFPh ==\n#5  German ended PFPh;"),
            "{text}"
        );
        assert_eq!(
            text.lines().filter(|l| l.starts_with('#')).count(),
            5,
            "{text}"
        );
    }

    /// `--json` prints the events as they came, their words too: an opponent's note holding a
    /// bidi override or a C1 control (which serde leaves as they are) is written as JSON
    /// escapes, so the terminal gets none and the line reads back as the same event. Before,
    /// the text lines escaped them and the JSON lines did not.
    #[test]
    fn json_lines_carry_the_opponents_words_escaped() {
        use protocol::command::Outcome;
        use protocol::event::OutcomeAdjudicated;
        let note = "DR 5 \u{202e}deliaf CM\u{9b}2J";
        let mut log = full_log(1);
        log.push(Sequenced {
            seq: log.len() as u64 + 1,
            viewed: Viewed {
                event: Event::OutcomeAdjudicated(OutcomeAdjudicated {
                    by: protocol::Side::B,
                    unit: "447a".into(),
                    outcome: Outcome::Pin,
                    note: note.into(),
                }),
                renamed: vec![],
                weapons: vec![],
            }
            .into(),
            hash: Default::default(),
        });
        let mut replay = Replay {
            follower: None,
            record: Record::default(),
            json: true,
        };
        let page = LogPage {
            version: log.len() as u64,
            events: log.clone(),
        };
        let mut out = vec![];
        replay.print_page(1, &page, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(crate::plain), "{text:?}");
        let last: Sequenced = wire::from_json(text.lines().last().unwrap()).unwrap();
        assert_eq!(last, log[log.len() - 1], "the same event reads back");
    }

    #[test]
    fn a_page_that_goes_back_is_refused() {
        let log = full_log(3);
        let mut replay = Replay {
            follower: None,
            record: Record::default(),
            json: false,
        };
        let page = LogPage {
            version: 4,
            events: log[..2].to_vec(),
        };
        let err = replay.print_page(3, &page, &mut vec![]).unwrap_err();
        assert!(
            err.to_string()
                .contains("asked for the log from #3, got events up to #2"),
            "{err}"
        );
    }

    /// A hostile server need not stop: each page may claim a longer log than the last. A
    /// log claiming more events than a game's export may hold is refused on the page that
    /// claims it, so `asl log` ends, as `asl replay` and `asl export` do. Before, it paged on
    /// as long as the server kept claiming more.
    #[test]
    fn a_log_claiming_more_than_a_game_holds_is_refused() {
        use protocol::export::EXPORT_EVENTS_MAX;
        let log = full_log(3);
        let mut replay = Replay {
            follower: None,
            record: Record::default(),
            json: false,
        };
        let page = LogPage {
            version: 3,
            events: log[..2].to_vec(),
        };
        assert_eq!(replay.print_page(1, &page, &mut vec![]).unwrap(), Some(3));
        let page = LogPage {
            version: EXPORT_EVENTS_MAX + 1,
            events: log[2..3].to_vec(),
        };
        let err = replay.print_page(3, &page, &mut vec![]).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "claims a log of {} events, over the {EXPORT_EVENTS_MAX}",
                EXPORT_EVENTS_MAX + 1
            )),
            "{err}"
        );
    }

    #[test]
    fn a_log_must_start_with_game_created() {
        let err = start(&Sequenced {
            seq: 2,
            viewed: Viewed {
                event: Event::GameEnded(GameEnded { turns_played: 1 }),
                renamed: vec![],
                weapons: vec![],
            }
            .into(),
            hash: Default::default(),
        })
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("starts with #2 GameEnded, not #1 GameCreated"),
            "{err}"
        );
    }
}
