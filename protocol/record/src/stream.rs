//! Each viewer's own stream of a game: the events it may know, projected by
//! `game::view::project_event`, numbered by the viewer's own sequence, each with a running hash
//! of the stream so far.
//!
//! An event a viewer may not know is simply absent: its stream has no gap, no placeholder and
//! no number that skips, so nothing in it says that something happened or when. Positions the
//! stream names (a resume's `since`, `get_state_at`, `get_record`, an adjudication or undo a
//! player refers to) are in the viewer's sequence; the log's own numbers never reach it.
//!
//! The running hash (`StreamHash`) chains the projected events a viewer received, so a
//! receipt for "what I was shown up to here" can be checked against an export later (every
//! viewer's stream is rebuilt from the full log) without revealing anything hidden.

use crate::words::{describe, Sides};
use game::command::Command;
use game::event::Event;
use game::event::{
    AdjudicationAccepted, AdjudicationDisputed, EventsUndone, GameCreated, UndoRequested,
};
use game::phase::Clock;
use game::view::{project_event, Viewed};
use game::{apply, hash_encoded, Game, Viewer};
use rules::violation::{text, RuleViolation, ViolationKind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The running hash of a viewer's stream after some event of it: the chain of every projected
/// event it received.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct StreamHash(pub [u8; 32]);

game::digest_text!(StreamHash);

impl StreamHash {
    /// The hash of a stream that has received nothing yet, for this viewer.
    pub fn start(viewer: Viewer) -> StreamHash {
        let name = match viewer {
            Viewer::Side(side) => format!("side {side:?}"),
            Viewer::Spectator => "spectator".into(),
        };
        StreamHash(blake3::derive_key("asl viewer stream v1", name.as_bytes()))
    }

    /// The hash after receiving `viewed` as event `seq` of the stream.
    pub fn next(self, seq: u64, viewed: &Viewed) -> StreamHash {
        // The encoding of `(self.0, seq, viewed)`: a byte array is encoded as its bytes, with
        // no length, so they are hashed as they are and the rest encoded after them.
        StreamHash(hash_encoded(blake3::Hasher::new(), &self.0, &(seq, viewed)))
    }

    /// [`StreamHash::next`] from `viewed`'s encoding ([`encode_viewed`]): a tuple's encoding
    /// is its fields' one after another, so the same hash, with an event every viewer is shown
    /// alike encoded once for all their streams rather than once per viewer.
    pub fn next_encoded(self, seq: u64, viewed: &[u8]) -> StreamHash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.0);
        // A `u64` is at most 9 bytes in the standard (varint) encoding.
        let mut number = [0u8; 9];
        let len = bincode::serde::encode_into_slice(seq, &mut number, bincode::config::standard())
            .expect("a u64 fits 9 bytes");
        hasher.update(&number[..len]);
        hasher.update(viewed);
        StreamHash(*hasher.finalize().as_bytes())
    }

    /// Reads 64 hex digits.
    pub fn from_hex(text: &str) -> Option<StreamHash> {
        let bytes = data_encoding::HEXLOWER.decode(text.as_bytes()).ok()?;
        Some(StreamHash(bytes.try_into().ok()?))
    }
}

/// `viewed` in the encoding a stream's hash is made over ([`StreamHash::next_encoded`]).
pub fn encode_viewed(viewed: &Viewed) -> Vec<u8> {
    bincode::serde::encode_to_vec(viewed, bincode::config::standard())
        .expect("game values always encode")
}

/// One event of a viewer's stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    /// The event's place in the whole log (never sent to the viewer).
    pub at: u64,
    /// Shared with every other viewer shown the event alike (a public event is kept once,
    /// not once per viewer), and kept out of line so a stream's entries stay small as it grows.
    pub viewed: Arc<Viewed>,
    /// The stream's running hash after this event.
    pub hash: StreamHash,
    /// The clock before the event: when it happened, which is public.
    pub clock: Clock,
}

impl StreamEntry {
    /// The event in words (`words::describe`): from the projected event and the sides' names
    /// alone, so they are built when a record page asks for them, not for every event.
    pub fn text(&self, sides: &Sides<'_>) -> String {
        describe(sides, &self.viewed.event)
    }

    /// When it happened ("Turn 1, German Player Turn: MPh").
    pub fn when(&self, sides: &Sides<'_>) -> String {
        crate::export::when_at(sides, self.clock)
    }
}

/// The viewers a game has, in the order `Streams` keeps them.
pub const VIEWERS: [Viewer; 3] = [
    Viewer::Side(board::scenario::Side::A),
    Viewer::Side(board::scenario::Side::B),
    Viewer::Spectator,
];

/// The place of `viewer` in [`VIEWERS`].
pub fn index(viewer: Viewer) -> usize {
    VIEWERS
        .iter()
        .position(|v| *v == viewer)
        .expect("every viewer is one of three")
}

/// Every viewer's streams kept in step with a game as its events are appended. The position
/// each event is projected from is the game before it, which whoever appends the event holds
/// (`Referee::record_with` hands over the game it replaces): no copy of the game is kept here.
#[derive(Clone, Debug)]
pub struct Following {
    streams: Streams,
}

impl Following {
    /// The streams of a whole log, replayed from its `GameCreated`; `None` for a log that does
    /// not open with one.
    pub fn of_log<'a>(events: impl IntoIterator<Item = &'a Event>) -> Option<Following> {
        Following::of_log_for(events, [true; 3])
    }

    /// [`Following::of_log`] for the viewers `followed` marks in [`VIEWERS`]' order alone: the
    /// others' streams are neither projected nor hashed, now or as events are pushed, until
    /// [`Following::follow`] builds one.
    pub fn of_log_for<'a>(
        events: impl IntoIterator<Item = &'a Event>,
        followed: [bool; 3],
    ) -> Option<Following> {
        let mut events = events.into_iter();
        let Some(first @ Event::GameCreated(GameCreated { scenario })) = events.next() else {
            return None;
        };
        let mut after = Game::new(scenario.clone());
        let mut following = Following {
            streams: Streams::followed(followed),
        };
        for event in std::iter::once(first).chain(events) {
            // A copy shares the game's maps (`CopyOnWrite`) until the event changes one.
            let before = after.clone();
            apply(&mut after, event);
            following.push(&before, &after, event);
        }
        Some(following)
    }

    /// Appends `event`, which took the whole game from `before` to `after`, to every stream
    /// that may know it.
    pub fn push(&mut self, before: &Game, after: &Game, event: &Event) {
        self.streams.push(before, after, event);
    }

    /// Starts keeping `viewer`'s stream, built from the whole log `events` (the one these
    /// streams were built from, with every event pushed since), the stream it would hold had it
    /// been followed from the start. Nothing for a viewer already followed.
    pub fn follow<'a>(&mut self, viewer: Viewer, events: impl IntoIterator<Item = &'a Event>) {
        let i = index(viewer);
        if self.streams.followed[i] {
            return;
        }
        let mut only = [false; 3];
        only[i] = true;
        if let Some(mut built) = Following::of_log_for(events, only) {
            self.streams.streams[i] = std::mem::take(&mut built.streams.streams[i]);
        }
        self.streams.followed[i] = true;
    }

    pub fn streams(&self) -> &Streams {
        &self.streams
    }
}

/// Every viewer's stream of one game, built event by event from the whole game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Streams {
    streams: [Vec<StreamEntry>; 3],
    /// Which viewers' streams are kept, in [`VIEWERS`]' order: a server follows a viewer once
    /// someone may read its stream (issue 55: no spectator's stream while nobody watches), and
    /// reading one it does not follow is a bug it must not answer from an empty stream.
    followed: [bool; 3],
}

impl Default for Streams {
    fn default() -> Streams {
        Streams::new()
    }
}

impl Streams {
    /// Every viewer's stream, empty.
    pub fn new() -> Streams {
        Streams::followed([true; 3])
    }

    /// The streams of the viewers `followed` marks, empty.
    fn followed(followed: [bool; 3]) -> Streams {
        Streams {
            streams: Default::default(),
            followed,
        }
    }

    /// Whether `viewer`'s stream is kept here.
    pub fn follows(&self, viewer: Viewer) -> bool {
        self.followed[index(viewer)]
    }

    /// The streams of a whole log, replayed from its first event.
    pub fn of_log<'a>(events: impl IntoIterator<Item = &'a Event>) -> Streams {
        Following::of_log(events).map_or_else(Streams::new, |f| f.streams)
    }

    /// Appends `event`, which took the whole game from `before` to `after` (its `version`), to
    /// the stream of every followed viewer who may know it.
    pub fn push(&mut self, before: &Game, after: &Game, event: &Event) {
        // The last viewer's projection with its encoding: the next viewer shown the event
        // alike shares both (a public event is kept and encoded once).
        let mut shown: Option<(Arc<Viewed>, Vec<u8>)> = None;
        for viewer in VIEWERS {
            if !self.follows(viewer) {
                continue;
            }
            let Some(mut viewed) = project_event(before, after, viewer, event) else {
                continue;
            };
            self.renumber(viewer, &mut viewed.event);
            let (viewed, encoded) = match shown.take() {
                Some((same, encoded)) if *same == viewed => (same, encoded),
                _ => {
                    let encoded = encode_viewed(&viewed);
                    (Arc::new(viewed), encoded)
                }
            };
            let stream = &mut self.streams[index(viewer)];
            let seq = stream.len() as u64 + 1;
            let prev = stream
                .last()
                .map_or_else(|| StreamHash::start(viewer), |e| e.hash);
            stream.push(StreamEntry {
                at: after.version,
                hash: prev.next_encoded(seq, &encoded),
                viewed: viewed.clone(),
                clock: before.clock,
            });
            shown = Some((viewed, encoded));
        }
    }

    /// The viewer's stream: entry `n - 1` is its event `n`. Panics for a viewer not followed:
    /// its empty stream would be a wrong answer, signed into receipts.
    pub fn of(&self, viewer: Viewer) -> &[StreamEntry] {
        assert!(
            self.follows(viewer),
            "{viewer:?}'s stream is read, but nobody follows it"
        );
        &self.streams[index(viewer)]
    }

    /// How many events the viewer has received.
    pub fn len(&self, viewer: Viewer) -> u64 {
        self.of(viewer).len() as u64
    }

    /// Whether no viewer has received anything.
    pub fn is_empty(&self) -> bool {
        self.streams.iter().all(|s| s.is_empty())
    }

    /// The running hash of the viewer's stream after its event `seq` (0: nothing received).
    pub fn hash(&self, viewer: Viewer, seq: u64) -> StreamHash {
        match seq {
            0 => StreamHash::start(viewer),
            n => self.of(viewer)[(n - 1) as usize].hash,
        }
    }

    /// The place in the whole log of the viewer's event `seq`, if it has one.
    pub fn at(&self, viewer: Viewer, seq: u64) -> Option<u64> {
        let n = usize::try_from(seq.checked_sub(1)?).ok()?;
        self.of(viewer).get(n).map(|e| e.at)
    }

    /// The viewer's number for the last event it received at or before log position `at`
    /// (0 if none).
    pub fn seq_at_or_before(&self, viewer: Viewer, at: u64) -> u64 {
        self.of(viewer).partition_point(|e| e.at <= at) as u64
    }

    /// Which viewer's stream passes through `hash`, and after which of its events: a receipt
    /// checked against the streams rebuilt from an export.
    pub fn find(&self, hash: StreamHash) -> Option<(Viewer, u64)> {
        VIEWERS
            .into_iter()
            .filter(|v| self.follows(*v))
            .find_map(|viewer| {
                let i = self.of(viewer).iter().position(|e| e.hash == hash)?;
                Some((viewer, i as u64 + 1))
            })
    }

    /// A viewer's command with the event numbers it gives (the adjudication it answers, the
    /// first event of an undo) turned from its stream's numbering into the log's. A number its
    /// stream does not have is refused here, so no refusal about the log's numbering reaches it.
    pub fn command_in_log(
        &self,
        viewer: Viewer,
        command: Command,
    ) -> Result<Command, RuleViolation> {
        command_in_log(command, |n| self.at(viewer, n))
    }

    /// The viewer's own number for the event at log position `at`, if it was shown that very
    /// event (a refusal's [`Piece::Event`](rules::violation::Piece)).
    pub fn seq_of(&self, viewer: Viewer, at: u64) -> Option<u64> {
        let stream = self.of(viewer);
        let i = stream.partition_point(|e| e.at < at);
        (stream.get(i)?.at == at).then_some(i as u64 + 1)
    }

    /// Log positions in events that refer to earlier events, turned into the viewer's own
    /// numbers: the adjudication answered, the range an undo takes back.
    fn renumber(&self, viewer: Viewer, event: &mut Event) {
        let seq = |at: u64| self.seq_at_or_before(viewer, at);
        match event {
            Event::AdjudicationAccepted(AdjudicationAccepted { event, .. })
            | Event::AdjudicationDisputed(AdjudicationDisputed { event, .. }) => {
                *event = seq(*event)
            }
            Event::UndoRequested(UndoRequested { from, to, .. })
            | Event::EventsUndone(EventsUndone { from, to, .. }) => {
                // The first of its own events at or after `from`, the last at or before `to`.
                *from = seq(from.saturating_sub(1)) + 1;
                *to = seq(*to);
            }
            _ => {}
        }
    }
}

/// `command` with the event numbers it gives (the adjudication it answers, the first event of
/// an undo, the roll it cites) turned into the log's by `at`, a viewer's stream's lookup
/// ([`Streams::at`]). A command that names no event never calls `at`: a server asks for a
/// viewer's stream only when a command needs it, so a game nobody watches builds none.
pub fn command_in_log(
    command: Command,
    at: impl Fn(u64) -> Option<u64>,
) -> Result<Command, RuleViolation> {
    let at = |n: u64| {
        at(n).ok_or_else(|| {
            // In the player's own numbers already: a piece of text, never renumbered.
            RuleViolation::with(
                "docs/review.md",
                ViolationKind::UnknownEvent,
                vec![text(format!("there is no event #{n} in your record"))],
            )
        })
    };
    Ok(match command {
        Command::AcceptAdjudication { event } => Command::AcceptAdjudication { event: at(event)? },
        Command::DisputeAdjudication { event, reason } => Command::DisputeAdjudication {
            event: at(event)?,
            reason,
        },
        Command::RequestUndo { from } => Command::RequestUndo { from: at(from)? },
        // The roll cited is numbered as the citing player's record numbers it, like any
        // other event a player names (issue 36: only the log's number used to work).
        Command::AdjudicateAfterRoll {
            unit,
            outcome,
            roll,
            note,
        } => Command::AdjudicateAfterRoll {
            unit,
            outcome,
            roll: at(roll)?,
            note,
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use game::event::{GameCreated, GameEnded};

    /// A stream that skips log event 3 (hidden from side A).
    fn skipping_three() -> (Streams, Viewer) {
        let viewer = Viewer::Side(board::scenario::Side::A);
        let mut streams = Streams::new();
        for at in [1, 2, 4, 5] {
            streams.streams[index(viewer)].push(StreamEntry {
                at,
                viewed: Arc::new(Viewed {
                    event: Event::GameEnded(GameEnded { turns_played: 1 }),
                    renamed: vec![],
                    weapons: vec![],
                }),
                hash: StreamHash::default(),
                clock: game::phase::Clock::START,
            });
        }
        (streams, viewer)
    }

    /// A stream's hash made from an event's encoding, shared by the viewers shown it alike, is
    /// the hash of the number and the event encoded together, at every width the number takes.
    #[test]
    fn a_hash_from_the_shared_encoding_is_the_hash_of_the_event() {
        let viewed = Viewed {
            event: Event::GameEnded(GameEnded { turns_played: 3 }),
            renamed: vec![],
            weapons: vec![],
        };
        let encoded = encode_viewed(&viewed);
        let prev = StreamHash::start(Viewer::Spectator);
        for seq in [1, 250, 251, 65_535, 65_536, u32::MAX as u64 + 1, u64::MAX] {
            assert_eq!(
                prev.next_encoded(seq, &encoded),
                prev.next(seq, &viewed),
                "{seq}"
            );
        }
    }

    #[test]
    fn numbers_go_between_the_stream_and_the_log() {
        let (streams, viewer) = skipping_three();
        assert_eq!(
            streams.command_in_log(viewer, Command::RequestUndo { from: 3 }),
            Ok(Command::RequestUndo { from: 4 })
        );
        let after_roll = |roll| Command::AdjudicateAfterRoll {
            unit: "337a".into(),
            outcome: game::command::Outcome::Break,
            roll,
            note: String::new(),
        };
        assert_eq!(
            streams.command_in_log(viewer, after_roll(4)),
            Ok(after_roll(5)),
            "a roll is cited by the citing player's own number"
        );
        let refused = streams
            .command_in_log(viewer, Command::AcceptAdjudication { event: 5 })
            .unwrap_err();
        assert_eq!(refused.kind, ViolationKind::UnknownEvent);
        assert_eq!(refused.detail, "there is no event #5 in your record");
        // An event is named by the viewer's number for that very event, and a hidden one by
        // none: never by the number of the viewer's event before it.
        assert_eq!(streams.seq_of(viewer, 4), Some(3));
        assert_eq!(streams.seq_of(viewer, 3), None);
        assert_eq!(streams.seq_of(viewer, 6), None);
    }

    /// A server builds a loaded game's streams from its log when first read, then pushes each
    /// event appended after: at whatever point that happens, the streams are the ones pushed
    /// event by event from the start, against a copy of the game before each.
    #[test]
    fn streams_of_a_log_at_any_point_then_pushed_on_are_the_streams_pushed_throughout() {
        let referee = crate::referee::testing::full_game();
        let events: Vec<&Event> = referee.entries().iter().map(|e| &e.event).collect();
        let Event::GameCreated(GameCreated { scenario }) = events[0] else {
            unreachable!()
        };
        let mut throughout = Streams::new();
        let mut games = vec![Game::new(scenario.clone())];
        for event in &events {
            let mut after = games.last().unwrap().clone();
            apply(&mut after, event);
            throughout.push(games.last().unwrap(), &after, event);
            games.push(after);
        }
        assert_eq!(Streams::of_log(events.iter().copied()), throughout);
        for cut in (1..events.len()).step_by(5) {
            let mut streams = Streams::of_log(events[..cut].iter().copied());
            for (i, event) in events.iter().enumerate().skip(cut) {
                streams.push(&games[i], &games[i + 1], event);
            }
            assert_eq!(streams, throughout, "built at event {cut}");
        }
    }

    /// A viewer not followed has nothing projected for it as events are pushed, and reading
    /// its stream is refused; following it at any point builds the stream it would hold had it
    /// been followed from the start, kept in step from then on.
    #[test]
    fn a_viewer_followed_late_gets_the_stream_followed_throughout() {
        let referee = crate::referee::testing::full_game();
        let events: Vec<&Event> = referee.entries().iter().map(|e| &e.event).collect();
        let Event::GameCreated(GameCreated { scenario }) = events[0] else {
            unreachable!()
        };
        let mut games = vec![Game::new(scenario.clone())];
        for event in &events {
            let mut after = games.last().unwrap().clone();
            apply(&mut after, event);
            games.push(after);
        }
        let throughout = Streams::of_log(events.iter().copied());
        for viewer in VIEWERS {
            for cut in (1..events.len()).step_by(7) {
                let mut others = [true; 3];
                others[index(viewer)] = false;
                let mut following =
                    Following::of_log_for(events[..cut].iter().copied(), others).unwrap();
                for (i, event) in events.iter().enumerate().skip(cut).take(3) {
                    following.push(&games[i], &games[i + 1], event);
                }
                assert!(!following.streams().follows(viewer));
                assert!(following.streams().streams[index(viewer)].is_empty());
                let read = std::panic::catch_unwind(|| following.streams().len(viewer));
                assert!(read.is_err(), "{viewer:?}: read while not followed");
                let upto = (cut + 3).min(events.len());
                following.follow(viewer, events[..upto].iter().copied());
                for (i, event) in events.iter().enumerate().skip(upto) {
                    following.push(&games[i], &games[i + 1], event);
                }
                assert_eq!(following.streams(), &throughout, "{viewer:?} from {cut}");
            }
        }
    }

    /// An event every viewer is shown alike is kept once for all of them; one shown
    /// differently (a unit under another name, or not at all) is each viewer's own.
    #[test]
    fn an_event_shown_alike_is_kept_once() {
        let referee = crate::referee::testing::full_game();
        let streams = Streams::of_log(referee.entries().iter().map(|e| &e.event));
        let (mut shared, mut own) = (0, 0);
        for at in 1..=referee.entries().len() as u64 {
            let shown: Vec<&Arc<Viewed>> = VIEWERS
                .iter()
                .filter_map(|v| streams.of(*v).iter().find(|e| e.at == at))
                .map(|e| &e.viewed)
                .collect();
            for pair in shown.windows(2) {
                assert_eq!(
                    Arc::ptr_eq(pair[0], pair[1]),
                    pair[0] == pair[1],
                    "event {at}"
                );
                if pair[0] == pair[1] {
                    shared += 1;
                } else {
                    own += 1;
                }
            }
        }
        assert!(shared > 0 && own > 0, "{shared} shared, {own} each its own");
    }

    #[test]
    fn a_stream_hash_depends_on_the_viewer_the_sequence_and_the_event() {
        let viewed = Viewed {
            event: Event::GameEnded(GameEnded { turns_played: 1 }),
            renamed: vec![],
            weapons: vec![],
        };
        let a = StreamHash::start(Viewer::Side(board::scenario::Side::A));
        let s = StreamHash::start(Viewer::Spectator);
        assert_ne!(a, s);
        assert_ne!(a.next(1, &viewed), s.next(1, &viewed));
        assert_ne!(a.next(1, &viewed), a.next(2, &viewed));
        let other = Viewed {
            event: Event::GameEnded(GameEnded { turns_played: 2 }),
            ..viewed.clone()
        };
        assert_ne!(a.next(1, &viewed), a.next(1, &other));
        assert_eq!(StreamHash::from_hex(&a.to_string()), Some(a));
        // The hash is blake3 of the standard bincode encoding of (previous, seq, event), as
        // receipts and exports kept from earlier servers were made: hashing the encoding as it
        // is written must give the same bytes' hash.
        let bytes =
            bincode::serde::encode_to_vec((a.0, 7u64, &viewed), bincode::config::standard())
                .unwrap();
        assert_eq!(a.next(7, &viewed).0, *blake3::hash(&bytes).as_bytes());
    }
}
