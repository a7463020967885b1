//! Legality re-checked: every command a log records is decided again against the replayed
//! position, with dice re-derived from the seed the log reveals, and the events logged for it
//! must be exactly that decision — the server's own events around it included
//! (`docs/review.md`). A rewritten move, a forged die or a dropped reveal is an event that is
//! not what the rules make of its command, and is named.
//!
//! The server's own events are accounted for one by one: `GameCreated` opens the log and is
//! the only event without a command; the dice commitment before the first event that relies
//! on it, the seed's reveal after the game ends or both sides agree, and the commitment to a
//! fresh seed after such a reveal are part of the decision ([`referee::decision`]). Only the
//! fresh seed's commitment is the server's free choice: it is checked to be there, and binds
//! the rolls made under it once that seed is revealed in turn.

use crate::chain::Entry;
use crate::fair_dice::{roll_key, Commitment, Ledger};
use crate::referee;
use game::dice::{DiceSource, Seed, SeededDice};
use game::event::Event;
use game::event::{DiceCommitted, DiceRolled, EventsUndone, EventsUndoneTo, SeedRevealed};
use game::Game;
use std::collections::{HashMap, VecDeque};

/// What is wrong with one logged event, as a verifier says it (the event's number is added
/// where the log is read: `export::VerifyError`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Fault(String);

impl From<String> for Fault {
    fn from(why: String) -> Fault {
        Fault(why)
    }
}

impl From<&str> for Fault {
    fn from(why: &str) -> Fault {
        Fault(why.to_string())
    }
}

/// A stand-in for a seed the log never reveals: decisions made with it roll from the logged
/// dice instead, and a reveal of it never matches one logged.
const UNKNOWN_SEED: Seed = [0; 32];

/// Dice read back from the rolls a command logged, for a seed the log never reveals: the
/// command's legality is still decided, its dice stay unchecked.
struct LoggedDice(VecDeque<u8>);

impl DiceSource for LoggedDice {
    fn roll_die(&mut self) -> Option<u8> {
        self.0.pop_front()
    }
}

/// The decision expected for each command of a log, event by event.
#[derive(Default)]
pub(crate) struct Recheck {
    /// Every seed the log reveals, by its commitment.
    revealed: HashMap<Commitment, Seed>,
    /// The events still expected from the command being read: (event, side, whether it is the
    /// commitment to a fresh seed, whose value is the server's choice).
    expected: VecDeque<(Event, Option<board::scenario::Side>, bool)>,
    /// The first event of the command being read.
    command_at: u64,
}

impl Recheck {
    /// Prepares to re-check `entries`, knowing the seeds they reveal.
    pub fn new(entries: &[Entry]) -> Recheck {
        let revealed = entries
            .iter()
            .filter_map(|e| match &e.event {
                Event::SeedRevealed(SeedRevealed { seed }) => Some((Commitment::to(seed), *seed)),
                _ => None,
            })
            .collect();
        Recheck {
            revealed,
            ..Recheck::default()
        }
    }

    /// Checks entry `index` of `entries` (not the first, `GameCreated`) against the decision of
    /// its command. `game`, `log` and `ledger` are the position, the entries and the dice
    /// before it. On a command's first event the command is decided; every event is then
    /// compared with the next one expected.
    pub fn check(
        &mut self,
        game: &Game,
        log: &[Entry],
        ledger: &Ledger,
        entries: &[Entry],
        index: usize,
    ) -> Result<(), Fault> {
        let entry = &entries[index];
        // The time control, the server's own event right after `GameCreated`: no command.
        if let Event::ClockStarted(_) = entry.event {
            if entry.seq == 2
                && entry.by.is_none()
                && entry.command.is_none()
                && self.expected.is_empty()
            {
                return Ok(());
            }
            return Err(
                "starts a clock, which only the server does, right after GameCreated".into(),
            );
        }
        if entry.first == entry.seq {
            if let Some((event, _, _)) = self.expected.front() {
                return Err(format!(
                    "opens a new command, but the command at event {} is not over: the rules make {} of it next",
                    self.command_at,
                    event.name()
                ).into());
            }
            self.decide(game, log, ledger, entries, index)?;
        }
        let Some((event, by, fresh)) = self.expected.pop_front() else {
            return Err(format!(
                "is not among the events the rules make of the command at event {}",
                self.command_at
            )
            .into());
        };
        let same = if fresh {
            matches!(entry.event, Event::DiceCommitted(_))
        } else {
            entry.event == event || older_undo(&entry.event, &event)
        };
        if !same {
            return Err(self.differs(&entry.event, &event).into());
        }
        if entry.by != by {
            return Err(format!(
                "is attributed to {}, but the rules make it {} (command at event {})",
                who(game, entry.by),
                who(game, by),
                self.command_at
            )
            .into());
        }
        Ok(())
    }

    /// Whether the command being read still expects events once the log (or the command)
    /// ends: the reason, if so.
    pub fn unfinished(&self) -> Option<String> {
        let (event, _, _) = self.expected.front()?;
        Some(match event {
            Event::SeedRevealed(_) => format!(
                "the command at event {} ends here without the dice seed's reveal the rules require right after it: the rolls made under that seed cannot be checked",
                self.command_at
            ),
            other => format!(
                "the log ends inside the command at event {}: the rules make {} of it next",
                self.command_at,
                other.name()
            ),
        })
    }

    fn differs(&self, logged: &Event, expected: &Event) -> String {
        let at = self.command_at;
        match (logged, expected) {
            (Event::DiceRolled(DiceRolled { roll: l }), Event::DiceRolled(DiceRolled { roll: e })) if l.dice != e.dice => {
                format!(
                    "its dice are not the ones the revealed seed gives for draw {} (command at event {at})",
                    e.first_draw
                )
            }
            (_, Event::SeedRevealed(_)) => format!(
                "is {} where the rules require the dice seed's reveal right after the command at event {at}: the rolls made under that seed cannot be checked",
                logged.name()
            ),
            _ if logged.name() == expected.name() => format!(
                "is not the {} the rules make of the command at event {at}",
                expected.name()
            ),
            _ => format!(
                "is {} where the rules make {} of the command at event {at}",
                logged.name(),
                expected.name()
            ),
        }
    }

    fn decide(
        &mut self,
        game: &Game,
        log: &[Entry],
        ledger: &Ledger,
        entries: &[Entry],
        index: usize,
    ) -> Result<(), Fault> {
        let entry = &entries[index];
        self.command_at = entry.seq;
        let Some(issued) = entry.command.clone() else {
            return Err(
                "records no command: every event after GameCreated comes from a command a side issued, and only logs in envelope format 3 or later record commands so that they can be decided again".into(),
            );
        };
        let group: Vec<&Entry> = entries[index..]
            .iter()
            .take_while(|e| e.first == entry.seq)
            .collect();
        // The seed the command rolls from: the one committed to and secret, or the one its own
        // events commit to first.
        let commitment = ledger.open().map(|e| e.commitment).or_else(|| {
            group.iter().find_map(|e| match e.event {
                Event::DiceCommitted(DiceCommitted { commitment }) => Some(commitment),
                _ => None,
            })
        });
        let seed = commitment.and_then(|c| self.revealed.get(&c).copied());
        let mut seeded;
        let mut logged;
        let dice: &mut dyn DiceSource = match &seed {
            Some(seed) => {
                seeded = SeededDice::new(roll_key(seed, &ledger.contributions()), game.dice_drawn);
                &mut seeded
            }
            None => {
                logged = LoggedDice(
                    group
                        .iter()
                        .filter_map(|e| match &e.event {
                            Event::DiceRolled(DiceRolled { roll }) => {
                                Some(roll.dice.iter().copied())
                            }
                            _ => None,
                        })
                        .flatten()
                        .collect(),
                );
                &mut logged
            }
        };
        let seed = seed.unwrap_or(UNKNOWN_SEED);
        // The server's time the command was taken at, as its clock events record it; without
        // one the clock's last charge stands in, and a hand-over the rules make is still
        // expected (its time then differs, and is named).
        let now = group.iter().find_map(|e| e.event.clock_at());
        // The rules trust the position they are given, as they may: the server reached it. A
        // forged scenario may hold one no server would have; a panic there is named.
        let decided = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            referee::decision(
                game,
                log,
                ledger,
                issued.clone(),
                dice,
                commitment,
                &seed,
                &mut || UNKNOWN_SEED,
                now,
            )
        }))
        .map_err(|_| "its command cannot be decided: no server could have logged it".to_string())?;
        let decision = decided.map_err(|v| {
            format!(
                "the {}'s command {:?} was not legal here: {v}",
                game.side_name(issued.by),
                issued.command
            )
        })?;
        let fresh_at = decision.new_seed.map(|_| decision.events.len() - 1);
        self.expected = decision
            .events
            .into_iter()
            .enumerate()
            .map(|(i, (event, by))| (event, by, Some(i) == fresh_at))
            .collect();
        Ok(())
    }
}

fn who(game: &Game, side: Option<board::scenario::Side>) -> String {
    match side {
        Some(side) => format!("the {}", game.side_name(side)),
        None => "the server".into(),
    }
}

/// An undo logged in its older form, with the whole position (`EventsUndone`), where the rules
/// now make the form that names the version (`EventsUndoneTo`): the same undo when they name
/// the same sides and events. The position it carries is checked against a replay of the log
/// (`dispute::check_logged`).
fn older_undo(logged: &Event, expected: &Event) -> bool {
    match (logged, expected) {
        (
            Event::EventsUndone(EventsUndone {
                requested_by,
                consented_by,
                from,
                to,
                ..
            }),
            Event::EventsUndoneTo(EventsUndoneTo {
                requested_by: r,
                consented_by: c,
                from: f,
                to: t,
            }),
        ) => (requested_by, consented_by, from, to) == (r, c, f, t),
        _ => false,
    }
}
