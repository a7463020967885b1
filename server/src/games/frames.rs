//! Every frame a command makes fits [`FRAME_BYTES_MAX`], or the command is refused before
//! anything is stored. A scenario is checked when created ([`check_frames`]); what play
//! adds to it is checked here, at the input that would make it:
//!
//! - a command's events, as each viewer is sent them, travel together in the actor's
//!   `Accepted`, one by one in `Event` frames and with their words in record pages: together
//!   at most [`COMMAND_EVENTS_BYTES_MAX`] for every viewer;
//! - each stored envelope goes, as hex (twice its size), in an export page, alone if need be:
//!   at most [`ENVELOPE_BYTES_EXPORTED_MAX`];
//! - each viewer's position after the command goes whole in `joined`, `state` and a
//!   `state_at` answer: at most [`POSITION_BYTES_MAX`].
//!
//! The exact check projects the command's events and the position after them for every
//! viewer, which costs a copy of the game; it is made only when a cheap bound ([`Bounds`])
//! cannot rule a large frame out: for games of large scenarios with many or long unit ids,
//! or commands with large events.

use protocol::event::GameCreated;
use protocol::game::view::project_event;
use protocol::game::{Game, Viewer};
use protocol::record::stream::{index, VIEWERS};
use protocol::wire::{to_json, Position, FRAME_BYTES_MAX};
use protocol::Event;

/// Bytes (JSON) of one command's events for any one viewer: half a frame, the other half
/// left for their words in a record page and for the message around them.
pub const COMMAND_EVENTS_BYTES_MAX: usize = FRAME_BYTES_MAX / 2;

/// Bytes of one stored envelope. An export page carries envelopes as hex, twice their size,
/// and always at least one: this leaves room for the page's header.
pub const ENVELOPE_BYTES_EXPORTED_MAX: usize = FRAME_BYTES_MAX / 2 - 4 * 1024;

/// Bytes (JSON) of a viewer's position: a `joined` or `state` frame carries it whole, with a
/// few hashes and numbers.
pub const POSITION_BYTES_MAX: usize = FRAME_BYTES_MAX - 16 * 1024;

/// How many times over a position can hold its scenario's units and weapons (as the scenario
/// writes them in JSON) besides the scenario itself: each unit's state, and the sets of units
/// the game keeps (finished, prep-fired, shown, sightings…), each naming a unit at most once.
pub const POSITION_REPEATS_UNITS: usize = 16;

/// What a game's scenario lets a command's frames hold, measured once when the game loads.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// The scenario in JSON: a position holds it whole.
    pub scenario: usize,
    /// Its units and weapons in JSON: the most an event's projection can add (each unit
    /// renamed, each weapon shown), and what a position repeats.
    pub units: usize,
}

impl Bounds {
    pub fn of(scenario: &protocol::Scenario) -> Bounds {
        Bounds {
            scenario: to_json(scenario).len(),
            units: to_json(&scenario.units).len() + to_json(&scenario.weapons).len(),
        }
    }

    /// Whether no position of the game can come near a frame.
    fn positions_fit(&self) -> bool {
        self.scenario + POSITION_REPEATS_UNITS * self.units <= POSITION_BYTES_MAX
    }
}

/// What a `Sequenced` adds to an event: its number and stream hash.
const SEQUENCED_BYTES: usize = 128;

/// Why a command or a scenario would make a frame, a position or a stored event too large:
/// how large, for whom, and what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("its events come to {size} bytes as {viewer:?} is sent them; one command's events must fit half a frame ({max} bytes; frames are at most {FRAME_BYTES_MAX}): name fewer units at once")]
    Events {
        size: usize,
        viewer: Viewer,
        max: usize,
    },
    #[error("the position after it would be {size} bytes as {viewer:?} sees it; a position must fit a frame ({max} bytes)")]
    Position {
        size: usize,
        viewer: Viewer,
        max: usize,
    },
    #[error("one of its events is {0} bytes stored; an event must fit an export page as hex ({ENVELOPE_BYTES_EXPORTED_MAX} bytes stored): name fewer units at once")]
    Envelope(usize),
    #[error("its opening position is {0} bytes encoded; a position must fit half a frame ({SNAPSHOT_BYTES_MAX} bytes; frames are at most {FRAME_BYTES_MAX}): use shorter names and ids or a smaller map")]
    Opening(usize),
    #[error("{0}")]
    Replay(#[from] protocol::game::ReplayError),
}

/// Refuses `events` (a decision on `game`, whose scenario has `bounds`) if a frame they make,
/// or the position after them, would be too large for some viewer; the reason says which, how
/// large, and what to do instead.
pub fn check_command<'a>(
    game: &Game,
    events: impl Iterator<Item = &'a Event> + Clone,
    bounds: Bounds,
) -> Result<(), FrameError> {
    let projected: usize = events
        .clone()
        .map(|e| json_bytes(e) + SEQUENCED_BYTES + bounds.units)
        .sum();
    if bounds.positions_fit() && projected <= COMMAND_EVENTS_BYTES_MAX {
        return Ok(());
    }
    check_exactly(game, events, COMMAND_EVENTS_BYTES_MAX, POSITION_BYTES_MAX)
}

/// Bytes `value` takes in JSON (as `to_json` writes it), counted as it is written rather
/// than kept: the cheap bound is worked out for every command.
fn json_bytes<T: serde::Serialize>(value: &T) -> usize {
    struct Counted(usize);
    impl std::io::Write for Counted {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counted = Counted(0);
    serde_json::to_writer(&mut counted, value).expect("messages always encode");
    counted.0
}

/// The exact check, against the limits given.
fn check_exactly<'a>(
    game: &Game,
    events: impl Iterator<Item = &'a Event>,
    events_max: usize,
    position_max: usize,
) -> Result<(), FrameError> {
    let mut after = game.clone();
    let mut bytes = [0usize; VIEWERS.len()];
    for event in events {
        let before = after.clone();
        protocol::apply(&mut after, event);
        for viewer in VIEWERS {
            if let Some(viewed) = project_event(&before, &after, viewer, event) {
                bytes[index(viewer)] += to_json(&viewed).len() + SEQUENCED_BYTES;
            }
        }
    }
    for viewer in VIEWERS {
        let size = bytes[index(viewer)];
        if size > events_max {
            return Err(FrameError::Events {
                size,
                viewer,
                max: events_max,
            });
        }
    }
    for viewer in VIEWERS {
        let size = to_json(&Position::from(after.project(viewer))).len();
        if size > position_max {
            return Err(FrameError::Position {
                size,
                viewer,
                max: position_max,
            });
        }
    }
    Ok(())
}

/// Refuses stored envelopes (`records`) one of which would not fit an export page.
pub fn check_envelopes(records: &[Vec<u8>]) -> Result<(), FrameError> {
    match records.iter().map(Vec::len).max() {
        Some(size) if size > ENVELOPE_BYTES_EXPORTED_MAX => Err(FrameError::Envelope(size)),
        _ => Ok(()),
    }
}

/// Largest opening position (and `GameCreated` event) a scenario may make, as any viewer sees
/// it in JSON, the larger encoding: half of `FRAME_BYTES_MAX`. The scenario limits bound a
/// file's size, not what it unfolds to (an `[[area]]` line is a thousand hexes, a name of
/// escapes grows six-fold), so a scenario is checked against this when created: a position that
/// fits half a frame leaves the other half for the rest of a `joined` frame or a log page.
pub const SNAPSHOT_BYTES_MAX: usize = FRAME_BYTES_MAX / 2;

/// Bytes of events (JSON) a log or record page carries besides its first event; a page stops
/// early rather than pass it, and the client asks for the next from where it stopped. With
/// the first event at most [`SNAPSHOT_BYTES_MAX`], every page fits a frame.
pub const PAGE_BYTES_MAX: usize = FRAME_BYTES_MAX / 2 - 4 * 1024;

/// Refuses a scenario whose opening position, or `GameCreated` event (whole, as stored and
/// exported: twice its bincode in hex), would not fit [`SNAPSHOT_BYTES_MAX`] for some viewer.
pub fn check_frames(scenario: &protocol::Scenario) -> Result<(), FrameError> {
    let created = Event::GameCreated(GameCreated {
        scenario: scenario.clone(),
    });
    let game = Game::replay([&created])?;
    let envelope = 2 * protocol::wire::to_bincode(&created).len();
    // A review shows the whole game, unprojected.
    let whole = protocol::wire::to_json(&Position::from(game.clone())).len();
    for viewer in VIEWERS {
        let state = protocol::wire::to_json(&Position::from(game.project(viewer))).len();
        let event = game
            .view_event(viewer, &created)
            .map_or(0, |e| protocol::wire::to_json(&e).len());
        let largest = state.max(event).max(envelope).max(whole);
        if largest > SNAPSHOT_BYTES_MAX {
            return Err(FrameError::Opening(largest));
        }
    }
    Ok(())
}

/// The items of a page, stopping before one that would take the page past [`PAGE_BYTES_MAX`]
/// (the first is always taken).
pub fn within_page<T: serde::Serialize>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut bytes = 0;
    let mut page = vec![];
    for item in items {
        let size = protocol::wire::to_json(&item).len();
        if !page.is_empty() && bytes + size > PAGE_BYTES_MAX {
            break;
        }
        if !page.is_empty() || size <= PAGE_BYTES_MAX {
            bytes += size;
        }
        page.push(item);
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::GameCreated;
    use protocol::ReadScenario;
    use protocol::{Command, Outcome, ScriptedDice, Side};

    fn game() -> Game {
        let scenario = protocol::Scenario::from_toml(include_str!(
            "../../../scenarios/b9-41-wall-advantage.toml"
        ))
        .unwrap();
        Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
    }

    fn adjudicated(game: &Game) -> Vec<Event> {
        let command = Command::Adjudicate {
            unit: "337a".into(),
            outcome: Outcome::Break,
            // The longest note (rules::adjudicate's NOTE_BYTES_MAX).
            note: "n".repeat(200),
        };
        protocol::decide(game, Side::A, &command, &mut ScriptedDice::default()).unwrap()
    }

    #[test]
    fn bytes_counted_are_the_bytes_written() {
        let game = game();
        for event in adjudicated(&game) {
            assert_eq!(json_bytes(&event), to_json(&event).len());
        }
        assert_eq!(json_bytes(&game.scenario), to_json(&game.scenario).len());
    }

    #[test]
    fn a_small_command_on_a_small_scenario_passes_without_the_exact_check() {
        let game = game();
        let events = adjudicated(&game);
        let bounds = Bounds::of(&game.scenario);
        assert!(bounds.positions_fit());
        assert_eq!(check_command(&game, events.iter(), bounds), Ok(()));
        assert_eq!(
            check_exactly(
                &game,
                events.iter(),
                COMMAND_EVENTS_BYTES_MAX,
                POSITION_BYTES_MAX
            ),
            Ok(())
        );
    }

    #[test]
    fn events_or_a_position_past_their_limits_are_refused_by_name() {
        let game = game();
        let events = adjudicated(&game);
        let why = check_exactly(&game, events.iter(), 100, POSITION_BYTES_MAX).unwrap_err();
        assert!(matches!(why, FrameError::Events { max: 100, .. }), "{why}");
        assert!(why.to_string().contains("half a frame"), "{why}");
        let why = check_exactly(&game, events.iter(), COMMAND_EVENTS_BYTES_MAX, 100).unwrap_err();
        assert!(
            matches!(why, FrameError::Position { max: 100, .. }),
            "{why}"
        );
        // A scenario whose positions could come near a frame is checked exactly whatever its
        // command.
        let large = Bounds {
            scenario: POSITION_BYTES_MAX,
            units: 1,
        };
        assert!(!large.positions_fit());
        assert_eq!(check_command(&game, events.iter(), large), Ok(()));
    }

    #[test]
    fn an_envelope_past_an_export_page_is_refused() {
        assert!(check_envelopes(&[vec![0; 10], vec![0; ENVELOPE_BYTES_EXPORTED_MAX]]).is_ok());
        let why = check_envelopes(&[vec![0; ENVELOPE_BYTES_EXPORTED_MAX + 1]]).unwrap_err();
        assert_eq!(why, FrameError::Envelope(ENVELOPE_BYTES_EXPORTED_MAX + 1));
        assert!(why.to_string().contains("export page"), "{why}");
    }

    #[test]
    fn a_page_stops_before_its_byte_budget_but_always_holds_one_item() {
        let big = "x".repeat(SNAPSHOT_BYTES_MAX - 16);
        let small = "y".repeat(1000);
        // A first item up to a snapshot, then up to the page budget more.
        let items = std::iter::once(big.clone()).chain(std::iter::repeat_n(small.clone(), 10_000));
        let page = within_page(items);
        let bytes: usize = page.iter().map(|s| protocol::wire::to_json(s).len()).sum();
        assert!(page.len() > 1 && page.len() < 10_001);
        assert!(bytes <= SNAPSHOT_BYTES_MAX + PAGE_BYTES_MAX, "{bytes}");
        assert!(
            bytes + 1002 > SNAPSHOT_BYTES_MAX + PAGE_BYTES_MAX - 1002,
            "{bytes}"
        );
        // However large, one item is always sent.
        let huge = "z".repeat(FRAME_BYTES_MAX);
        assert_eq!(within_page([huge.clone(), huge].into_iter()).len(), 1);
    }
}
