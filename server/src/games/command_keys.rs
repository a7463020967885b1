//! Exactly-once commands. A client may give each command a key of its own (`key` in
//! `ClientMessage::Command`); the game remembers, per seat, the keys of the commands it
//! accepted and which events they made. A command sent again with a key already accepted —
//! after a reconnect, or by a script run again — is answered with those events instead of
//! being decided a second time.
//!
//! A key is bound to its command: the memory keeps a digest of the command as the log records
//! it (and, while the game stays loaded, as the client sent it), and the same key with another
//! command — `concede` under the key of a `done` — is refused rather than answered with the
//! old events as if it had run.
//!
//! The memory is derived from the log: each accepted command's first envelope carries its key
//! (`protocol::chain`, format 3 on), so a restarted server rebuilds it while replaying and a
//! re-sent command is still recognised. Refusals are not remembered: they changed nothing, so
//! deciding them again is harmless, and the answer may rightly differ once the game moved on.

use crate::operations::config::COMMAND_KEYS_PER_SEAT_MAX;
use protocol::chain::Entry;
use protocol::{Command, Side};
use std::collections::{HashMap, VecDeque};

/// The events one remembered command made: sequences `first..=last`, and what the command
/// was, to tell a command sent again from another command under the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Made {
    pub first: u64,
    pub last: u64,
    /// The digest of the command as the log records it (in the log's ids), when it does.
    pub logged: Option<CommandDigest>,
    /// The digest of the command as the client sent it (its stream's numbers, its aliases):
    /// known while the game stays loaded, and the cheap check for an honest retry.
    pub sent: Option<CommandDigest>,
}

/// A command's digest: 32 bytes kept per remembered key instead of the command itself.
pub type CommandDigest = [u8; 32];

/// The digest of `command`, from its JSON form (deterministic for one value).
pub fn digest(command: &Command) -> CommandDigest {
    let json = serde_json::to_vec(command).expect("commands always encode");
    *blake3::hash(&json).as_bytes()
}

/// The keys of one game's accepted commands, per seat, the newest
/// [`COMMAND_KEYS_PER_SEAT_MAX`] of each.
#[derive(Debug)]
pub struct Remembered {
    limit: usize,
    seats: [Seat; 2],
}

#[derive(Debug, Default)]
struct Seat {
    made: HashMap<u64, Made>,
    /// Keys oldest first, to forget the oldest past the limit.
    order: VecDeque<u64>,
}

impl Default for Remembered {
    fn default() -> Remembered {
        Remembered::with_limit(COMMAND_KEYS_PER_SEAT_MAX)
    }
}

fn index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

impl Remembered {
    pub fn with_limit(limit: usize) -> Remembered {
        Remembered {
            limit,
            seats: Default::default(),
        }
    }

    /// The memory of a log read back: every command whose first envelope carries a key. The
    /// seat is the side that issued the command's events (its first envelope may be the
    /// server's own, a dice commitment logged before the command's first roll).
    pub fn from_log(entries: &[Entry]) -> Remembered {
        let mut remembered = Remembered::default();
        for (i, entry) in entries.iter().enumerate() {
            let Some(key) = entry.key else {
                continue;
            };
            if entry.first != entry.seq {
                continue;
            }
            let command: Vec<&Entry> = entries[i..]
                .iter()
                .take_while(|e| e.first == entry.seq)
                .collect();
            let Some(by) = command.iter().find_map(|e| e.by) else {
                continue;
            };
            let last = command.last().map_or(entry.seq, |e| e.seq);
            let logged = command
                .iter()
                .find_map(|e| e.command.as_ref())
                .map(|issued| digest(&issued.command));
            remembered.remember(
                by,
                key,
                Made {
                    first: entry.seq,
                    last,
                    logged,
                    sent: None,
                },
            );
        }
        remembered
    }

    /// What the command `key` of `side` made, if it was accepted and is still remembered.
    pub fn recall(&self, side: Side, key: u64) -> Option<Made> {
        self.seats[index(side)].made.get(&key).copied()
    }

    /// Remembers an accepted command, forgetting the seat's oldest past the limit.
    pub fn remember(&mut self, side: Side, key: u64, made: Made) {
        let seat = &mut self.seats[index(side)];
        if seat.made.insert(key, made).is_none() {
            seat.order.push_back(key);
        }
        while seat.order.len() > self.limit {
            if let Some(old) = seat.order.pop_front() {
                seat.made.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::StepEnded;
    use protocol::phase::Clock;
    use protocol::Event;

    fn entry(seq: u64, first: u64, by: Option<Side>, key: Option<u64>) -> Entry {
        Entry {
            seq,
            by,
            first,
            key,
            command: None,
            event: Event::StepEnded(StepEnded {
                by: Side::A,
                ended: Clock::START,
                next: Clock::START,
            }),
        }
    }

    fn made(first: u64, last: u64) -> Made {
        Made {
            first,
            last,
            logged: None,
            sent: None,
        }
    }

    #[test]
    fn a_log_gives_back_each_keyed_command_and_its_events() {
        let log = [
            entry(1, 1, None, None),
            entry(2, 2, None, Some(7)),
            entry(3, 2, Some(Side::A), None),
            entry(4, 2, None, None),
            entry(5, 5, Some(Side::B), Some(7)),
            entry(6, 6, Some(Side::B), None),
        ];
        let r = Remembered::from_log(&log);
        assert_eq!(r.recall(Side::A, 7), Some(made(2, 4)));
        assert_eq!(r.recall(Side::B, 7), Some(made(5, 5)), "keys are per seat");
        assert_eq!(r.recall(Side::B, 8), None);
    }

    #[test]
    fn the_oldest_keys_are_forgotten_past_the_limit() {
        let mut r = Remembered::with_limit(2);
        for key in 1..=3 {
            r.remember(Side::A, key, made(key, key));
        }
        assert_eq!(r.recall(Side::A, 1), None);
        assert!(r.recall(Side::A, 2).is_some() && r.recall(Side::A, 3).is_some());
        r.remember(Side::A, 3, made(3, 3));
        assert!(
            r.recall(Side::A, 2).is_some(),
            "remembering a key again is no new key"
        );
    }

    #[test]
    fn a_log_gives_back_each_keyed_commands_digest() {
        let mut keyed = entry(2, 2, Some(Side::A), Some(7));
        keyed.command = Some(protocol::chain::Issued {
            by: Side::A,
            command: Command::Done,
        });
        let r = Remembered::from_log(&[entry(1, 1, None, None), keyed]);
        let made = r.recall(Side::A, 7).unwrap();
        assert_eq!(made.logged, Some(digest(&Command::Done)));
        assert_ne!(made.logged, Some(digest(&Command::Concede)));
    }
}
