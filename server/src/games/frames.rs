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
//! or commands with large events. Even then it encodes no more than play can have changed
//! (see [`check_exactly`]): a position's scenario was measured when the game loaded, and its
//! units and weapons are measured from the last command's by the entries that changed.

use protocol::event::GameCreated;
use protocol::game::view::project_event;
use protocol::game::{CopyOnWrite, Game, Viewer};
use protocol::record::stream::{index, VIEWERS};
use protocol::wire::{Position, FRAME_BYTES_MAX};
use protocol::{Event, Scenario};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

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
    /// The scenario in JSON as each viewer's position carries it (`Game::project`: another
    /// side's hidden units and tunnels left out, its "?" masked), by `stream::index`. Play
    /// never changes it: a game's scenario and the aliases its "?" started under are set by
    /// `GameCreated` alone, so a position holds the same scenario, byte for byte, from the
    /// first command to the last.
    pub scenario: [usize; VIEWERS.len()],
    /// Its units and weapons in JSON: the most an event's projection can add (each unit
    /// renamed, each weapon shown), and what a position repeats.
    pub units: usize,
}

impl Bounds {
    pub fn of(game: &Game) -> Bounds {
        Bounds {
            scenario: VIEWERS.map(|viewer| json_bytes(&*game.project(viewer).scenario)),
            units: json_bytes(&game.scenario.units) + json_bytes(&game.scenario.weapons),
        }
    }

    /// Whether no position of the game can come near a frame.
    fn positions_fit(&self) -> bool {
        let scenario = self.scenario.into_iter().max().unwrap_or(0);
        scenario + POSITION_REPEATS_UNITS * self.units <= POSITION_BYTES_MAX
    }
}

/// The bytes (JSON) of a game's units and of its weapons, as a position carries them (a map
/// from id to entry), measured by the exact check on the position after a command: the next
/// command's check starts from them rather than encode every unit again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    pub units: usize,
    pub weapons: usize,
}

impl Measured {
    /// The game's maps, encoded whole.
    pub fn of(game: &Game) -> Measured {
        Measured {
            units: json_bytes(&*game.units),
            weapons: json_bytes(&*game.weapons),
        }
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
    /// What the sender is told when a frame of another viewer, or a stored event, is the one
    /// too large: its size counts what the sender's projection may not show (the opponent's
    /// hidden units, what his "?" hide), so neither the viewer nor a size is named.
    #[error("a frame another viewer would be sent, or the record it would be stored as, would pass its limit (frames are at most {FRAME_BYTES_MAX} bytes): name fewer units at once")]
    Unseen,
}

impl FrameError {
    /// The refusal as `sender` may read it (projection law): a size measured on the sender's
    /// own frames is his to know; one measured on another viewer's frame, or on the stored
    /// event, becomes [`FrameError::Unseen`], the same whatever the others' frames hold.
    /// [`check_command`] measures the sender's frames before any other, so which error he
    /// reads depends on his own projection alone.
    pub fn told_to(self, sender: Viewer) -> FrameError {
        match self {
            FrameError::Events { viewer, .. } | FrameError::Position { viewer, .. }
                if viewer != sender =>
            {
                FrameError::Unseen
            }
            FrameError::Envelope(_) => FrameError::Unseen,
            why => why,
        }
    }
}

/// Refuses `events` (a decision on `game`, whose scenario has `bounds`) if a frame they make,
/// or the position after them, would be too large for some viewer; the reason says which, how
/// large, and what to do instead. `measured`: the game's maps as the last exact check found
/// them, if it was made on this very game. `ahead`: `game` with every one of `events` applied,
/// and the positions on the way, when the decision's look-ahead made them (`rules::Decided`),
/// which the exact check then reads instead of applying the events once more. Returns the maps of the game after the events
/// when the exact check measured them. `sender`'s frames are measured first, both his events
/// and his position, so that a refusal naming his own frame never depends on another's (see
/// [`FrameError::told_to`]).
pub fn check_command<'a>(
    game: &Game,
    events: impl Iterator<Item = &'a Event> + Clone,
    ahead: Option<Path<'_>>,
    bounds: Bounds,
    measured: Option<Measured>,
    sender: Viewer,
) -> Result<Option<Measured>, FrameError> {
    let projected: usize = events
        .clone()
        .map(|e| json_bytes(e) + SEQUENCED_BYTES + bounds.units)
        .sum();
    if bounds.positions_fit() && projected <= COMMAND_EVENTS_BYTES_MAX {
        return Ok(None);
    }
    let limits = Limits {
        events: COMMAND_EVENTS_BYTES_MAX,
        position: POSITION_BYTES_MAX,
    };
    check_exactly_ahead(game, events, ahead, limits, bounds, measured, sender).map(Some)
}

/// Bytes `value` takes in JSON (as `to_json` writes it), counted as it is written rather
/// than kept: the cheap bound is worked out for every command.
fn json_bytes<T: serde::Serialize + ?Sized>(value: &T) -> usize {
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

/// The limits the exact check holds a command to (smaller in the tests).
#[derive(Clone, Copy)]
struct Limits {
    events: usize,
    position: usize,
}

/// The exact check: each viewer's events and position after them, in bytes, against `limits`.
///
/// A position is measured in parts, each as many bytes as the whole position's encoding
/// gives it (a JSON object is its fields' encodings one after another, and a map its
/// entries'): the scenario as [`Bounds`] measured it for the viewer, which play never changes;
/// the units and the weapons, which are the whole game's own maps whenever the viewer's
/// projection keeps them shared (nothing of them hidden or under "?" from it), measured by
/// [`map_bytes_after`] from `measured` (the maps before the command) through the entries the
/// events changed; and the rest, encoded with those three left empty.
#[cfg(test)]
fn check_exactly<'a>(
    game: &Game,
    events: impl Iterator<Item = &'a Event>,
    limits: Limits,
    bounds: Bounds,
    measured: Option<Measured>,
    sender: Viewer,
) -> Result<Measured, FrameError> {
    check_exactly_ahead(game, events, None, limits, bounds, measured, sender)
}

/// The positions a decision's look-ahead went through (`rules::Decided`): `after`, the one
/// after its last event, and `along`, the one after each event before it (empty when it kept
/// none, and then those are applied again).
#[derive(Clone, Copy)]
pub struct Path<'a> {
    pub along: &'a [Game],
    pub after: &'a Game,
}

/// [`check_exactly`], reading the positions after the events from `ahead` (the decision's
/// look-ahead) when given: an event whose position it lacks is applied to a copy.
fn check_exactly_ahead<'a>(
    game: &Game,
    events: impl Iterator<Item = &'a Event>,
    ahead: Option<Path<'_>>,
    limits: Limits,
    bounds: Bounds,
    measured: Option<Measured>,
    sender: Viewer,
) -> Result<Measured, FrameError> {
    let mut bytes = [0usize; VIEWERS.len()];
    let mut count = |before: &Game, after: &Game, event: &Event| {
        for viewer in VIEWERS {
            if let Some(viewed) = project_event(before, after, viewer, event) {
                bytes[index(viewer)] += json_bytes(&viewed) + SEQUENCED_BYTES;
            }
        }
    };
    let mut events = events.peekable();
    // The position after the events so far: `game` itself until one is applied.
    let mut at: Cow<'_, Game> = Cow::Borrowed(game);
    let mut i = 0;
    while let Some(event) = events.next() {
        let kept = ahead.and_then(|path| match events.peek() {
            None => Some(path.after),
            Some(_) => path.along.get(i),
        });
        let next = match kept {
            Some(kept) => Cow::Borrowed(kept),
            None => {
                let mut next = at.clone().into_owned();
                protocol::apply(&mut next, event);
                Cow::Owned(next)
            }
        };
        count(&at, &next, event);
        at = next;
        i += 1;
    }
    let after: &Game = &at;
    let before = measured.unwrap_or_else(|| Measured::of(game));
    let maps = Measured {
        units: map_bytes_after(
            game.units.shared_with(&after.units),
            &game.units,
            &after.units,
            before.units,
        ),
        weapons: map_bytes_after(
            game.weapons.shared_with(&after.weapons),
            &game.weapons,
            &after.weapons,
            before.weapons,
        ),
    };
    // The sender's frames first, then the others' in stream order.
    let viewers = std::iter::once(sender).chain(VIEWERS.into_iter().filter(|v| *v != sender));
    for viewer in viewers {
        let size = bytes[index(viewer)];
        if size > limits.events {
            return Err(FrameError::Events {
                size,
                viewer,
                max: limits.events,
            });
        }
        let size = position_bytes(after, viewer, bounds.scenario[index(viewer)], maps);
        if size > limits.position {
            return Err(FrameError::Position {
                size,
                viewer,
                max: limits.position,
            });
        }
    }
    Ok(maps)
}

/// Bytes (JSON) of `viewer`'s position of `game`, whose scenario is `scenario` bytes as the
/// viewer's position holds it and whose maps are `maps` (see [`check_exactly`]).
fn position_bytes(game: &Game, viewer: Viewer, scenario: usize, maps: Measured) -> usize {
    let mut seen = game.project(viewer);
    let units = if seen.units.shared_with(&game.units) {
        maps.units
    } else {
        json_bytes(&*seen.units)
    };
    let weapons = if seen.weapons.shared_with(&game.weapons) {
        maps.weapons
    } else {
        json_bytes(&*seen.weapons)
    };
    let (stand_in, stand_in_bytes) = stand_in();
    seen.scenario = stand_in.clone();
    seen.units = CopyOnWrite::default();
    seen.weapons = CopyOnWrite::default();
    // The two maps left empty are `{}` each.
    json_bytes(&Position::from(seen)) - stand_in_bytes - 2 * EMPTY_MAP_BYTES
        + scenario
        + units
        + weapons
}

/// Bytes of an empty map in JSON: `{}`.
const EMPTY_MAP_BYTES: usize = 2;

/// A scenario to put in a position in place of its own while the rest is measured, and its
/// bytes in JSON, which are taken out again: the project's walkthrough, read once, with its
/// map, units, weapons and set-up left out, so that measuring the rest of a position for
/// every command encodes no hexes at all.
fn stand_in() -> &'static (Arc<Scenario>, usize) {
    static STAND_IN: OnceLock<(Arc<Scenario>, usize)> = OnceLock::new();
    STAND_IN.get_or_init(|| {
        use protocol::ReadScenario;
        let mut scenario =
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .expect("the walkthrough reads");
        scenario.hexes = Default::default();
        scenario.hexsides = Default::default();
        scenario.units.clear();
        scenario.weapons.clear();
        scenario.tunnels.clear();
        scenario.map = None;
        scenario.setup = None;
        let bytes = json_bytes(&scenario);
        (Arc::new(scenario), bytes)
    })
}

/// Bytes (JSON) of the map `after`, given that `before` takes `before_bytes`: a map is `{`,
/// its entries (`"id":value`) with a comma between each two, and `}`, so only the entries
/// added, removed or changed are encoded. Two maps still shared are the same map.
fn map_bytes_after<K: serde::Serialize + Ord, V: serde::Serialize + PartialEq>(
    shared: bool,
    before: &BTreeMap<K, V>,
    after: &BTreeMap<K, V>,
    before_bytes: usize,
) -> usize {
    if shared {
        return before_bytes;
    }
    let commas = |n: usize| n.saturating_sub(1);
    let entry = |id: &K, value: &V| json_bytes(id) + 1 + json_bytes(value);
    // The entries' bytes, signed while entries leave.
    let mut entries = (before_bytes - EMPTY_MAP_BYTES - commas(before.len())) as isize;
    let mut old = before.iter().peekable();
    for (id, value) in after {
        while let Some((gone, was)) = old.next_if(|(k, _)| *k < id) {
            entries -= entry(gone, was) as isize;
        }
        match old.next_if(|(k, _)| *k == id) {
            Some((_, was)) if was == value => {}
            Some((_, was)) => entries += entry(id, value) as isize - entry(id, was) as isize,
            None => entries += entry(id, value) as isize,
        }
    }
    for (gone, was) in old {
        entries -= entry(gone, was) as isize;
    }
    EMPTY_MAP_BYTES + entries as usize + commas(after.len())
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
    use protocol::wire::to_json;
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

    fn limits(events: usize, position: usize) -> Limits {
        Limits { events, position }
    }

    #[test]
    fn a_small_command_on_a_small_scenario_passes_without_the_exact_check() {
        let game = game();
        let events = adjudicated(&game);
        let bounds = Bounds::of(&game);
        assert!(bounds.positions_fit());
        assert_eq!(
            check_command(
                &game,
                events.iter(),
                None,
                bounds,
                None,
                Viewer::Side(Side::A)
            ),
            Ok(None)
        );
        assert!(check_exactly(
            &game,
            events.iter(),
            limits(COMMAND_EVENTS_BYTES_MAX, POSITION_BYTES_MAX),
            bounds,
            None,
            Viewer::Side(Side::A)
        )
        .is_ok());
    }

    #[test]
    fn events_or_a_position_past_their_limits_are_refused_by_name() {
        let game = game();
        let events = adjudicated(&game);
        let bounds = Bounds::of(&game);
        let why = check_exactly(
            &game,
            events.iter(),
            limits(100, POSITION_BYTES_MAX),
            bounds,
            None,
            Viewer::Side(Side::A),
        )
        .unwrap_err();
        assert!(matches!(why, FrameError::Events { max: 100, .. }), "{why}");
        assert!(why.to_string().contains("half a frame"), "{why}");
        let why = check_exactly(
            &game,
            events.iter(),
            limits(COMMAND_EVENTS_BYTES_MAX, 100),
            bounds,
            None,
            Viewer::Side(Side::A),
        )
        .unwrap_err();
        assert!(
            matches!(why, FrameError::Position { max: 100, .. }),
            "{why}"
        );
        // A scenario whose positions could come near a frame is checked exactly whatever its
        // command, and the check hands back what it measured.
        let large = Bounds {
            units: POSITION_BYTES_MAX / POSITION_REPEATS_UNITS,
            ..bounds
        };
        assert!(!large.positions_fit());
        let mut after = game.clone();
        events.iter().for_each(|e| protocol::apply(&mut after, e));
        assert_eq!(
            check_command(
                &game,
                events.iter(),
                None,
                large,
                None,
                Viewer::Side(Side::A)
            ),
            Ok(Some(Measured::of(&after)))
        );
    }

    /// Games to measure: the walkthrough, and a scenario with hidden units (HIP) and units
    /// under "?", whose projections leave units and weapons out and mask others.
    fn games() -> Vec<Game> {
        let hidden = protocol::Scenario::from_toml(include_str!(
            "../../../scenarios/village-outskirts.toml"
        ))
        .unwrap();
        assert!(hidden.units.values().any(|u| u.hidden));
        assert!(hidden.units.values().any(|u| u.concealed && !u.hidden));
        vec![
            game(),
            Game::replay([&Event::GameCreated(GameCreated { scenario: hidden })]).unwrap(),
        ]
    }

    /// Commands that change units, weapons, or nothing, played in turn on `game` (each as
    /// long as the rules take it): the positions the exact check measures.
    fn played(mut game: Game) -> Vec<(Game, Vec<Event>)> {
        let mut played = vec![];
        for _ in 0..40 {
            let side = game.acting();
            let movable = game
                .units
                .values()
                .filter(|u| u.side == side && !u.eliminated)
                .map(|u| (u.id.clone(), u.hex))
                .collect::<Vec<_>>();
            let moves = movable.iter().flat_map(|(id, hex)| {
                hex.neighbours().into_iter().map(move |to| Command::Move {
                    units: vec![id.clone()],
                    to,
                })
            });
            let decided = moves
                .chain([Command::Done])
                .find_map(|c| protocol::decide(&game, side, &c, &mut ScriptedDice::default()).ok())
                .unwrap_or_default();
            let before = game.clone();
            decided.iter().for_each(|e| protocol::apply(&mut game, e));
            played.push((before, decided));
        }
        played
    }

    #[test]
    fn a_position_measured_in_parts_is_as_large_as_its_encoding() {
        let mut checked = 0;
        for game in games() {
            let bounds = Bounds::of(&game);
            let mut measured = None;
            for (before, events) in played(game) {
                let mut after = before.clone();
                let mut along = vec![];
                for (i, e) in events.iter().enumerate() {
                    if i > 0 {
                        along.push(after.clone());
                    }
                    protocol::apply(&mut after, e);
                }
                // Taken on from the command before, as a session keeps it.
                let maps = check_exactly(
                    &before,
                    events.iter(),
                    limits(COMMAND_EVENTS_BYTES_MAX, POSITION_BYTES_MAX),
                    bounds,
                    measured,
                    Viewer::Side(before.acting()),
                )
                .unwrap();
                assert_eq!(maps, Measured::of(&after));
                // Read off the decision's look-ahead, the check finds the same.
                let ahead = check_exactly_ahead(
                    &before,
                    events.iter(),
                    Some(Path {
                        along: &[],
                        after: &after,
                    }),
                    limits(COMMAND_EVENTS_BYTES_MAX, POSITION_BYTES_MAX),
                    bounds,
                    measured,
                    Viewer::Side(before.acting()),
                );
                assert_eq!(ahead, Ok(maps));
                // And off every position along it, no event applied again.
                let along = check_exactly_ahead(
                    &before,
                    events.iter(),
                    Some(Path {
                        along: &along,
                        after: &after,
                    }),
                    limits(COMMAND_EVENTS_BYTES_MAX, POSITION_BYTES_MAX),
                    bounds,
                    measured,
                    Viewer::Side(before.acting()),
                );
                assert_eq!(along, Ok(maps));
                measured = Some(maps);
                for viewer in VIEWERS {
                    let encoded = to_json(&Position::from(after.project(viewer))).len();
                    let parts =
                        position_bytes(&after, viewer, bounds.scenario[index(viewer)], maps);
                    assert_eq!(parts, encoded, "{viewer:?} at {}", after.version);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 200, "{checked}");
    }

    #[test]
    fn a_position_as_large_as_the_limit_fits_and_one_byte_larger_is_refused() {
        for game in games() {
            let bounds = Bounds::of(&game);
            let (before, events) = played(game)
                .into_iter()
                .find(|(_, events)| events.iter().any(|e| matches!(e, Event::UnitMoved(_))))
                .expect("a unit moved");
            let mut after = before.clone();
            events.iter().for_each(|e| protocol::apply(&mut after, e));
            let (viewer, largest) = VIEWERS
                .map(|v| (v, to_json(&Position::from(after.project(v))).len()))
                .into_iter()
                .max_by_key(|(_, size)| *size)
                .unwrap();
            let check = |position| {
                check_exactly(
                    &before,
                    events.iter(),
                    limits(COMMAND_EVENTS_BYTES_MAX, position),
                    bounds,
                    Some(Measured::of(&before)),
                    Viewer::Side(before.acting()),
                )
            };
            assert!(check(largest).is_ok());
            assert_eq!(
                check(largest - 1),
                Err(FrameError::Position {
                    size: largest,
                    viewer,
                    max: largest - 1
                })
            );
        }
    }

    /// The village game with `extra` more Russian units set up hidden (HIP, A12.3), which the
    /// German, who moves first, cannot see.
    fn with_hidden(extra: usize) -> Game {
        let mut scenario = protocol::Scenario::from_toml(include_str!(
            "../../../scenarios/village-outskirts.toml"
        ))
        .unwrap();
        let hip = scenario.units.values().find(|u| u.hidden).unwrap().clone();
        for n in 0..extra {
            let mut unit = hip.clone();
            unit.id = format!("r-hip-{n}");
            scenario.units.insert(unit.id.clone(), unit);
        }
        Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
    }

    /// Projection law: a command refused because the opponent's position would be too large
    /// reads the same to its sender whatever the opponent hides — neither the opponent nor a
    /// size that counts his HIP units is named. The sender's own frame is still sized for him.
    #[test]
    fn a_refusal_for_another_viewers_frame_is_the_same_whatever_he_hides() {
        let refusals = |limit: &dyn Fn(&[usize; 3], usize) -> usize| {
            [0, 1, 6].map(|extra| {
                let game = with_hidden(extra);
                let sender = Viewer::Side(game.acting());
                let hider = index(Viewer::Side(game.acting().opponent()));
                let (before, events) = played(game).swap_remove(0);
                assert!(!events.is_empty());
                let mut after = before.clone();
                events.iter().for_each(|e| protocol::apply(&mut after, e));
                let sizes = VIEWERS.map(|v| to_json(&Position::from(after.project(v))).len());
                let why = check_exactly(
                    &before,
                    events.iter(),
                    limits(COMMAND_EVENTS_BYTES_MAX, limit(&sizes, hider)),
                    Bounds::of(&before),
                    None,
                    sender,
                )
                .unwrap_err();
                (sizes, why.told_to(sender).to_string())
            })
        };
        // Every frame but the hider's fits: the largest of the others.
        let others = |sizes: &[usize; 3], hider: usize| {
            (0..3)
                .filter(|i| *i != hider)
                .map(|i| sizes[i])
                .max()
                .unwrap()
        };
        let told = refusals(&others);
        // What the German sees is the same in the three games; the Russian's position grows.
        assert!(told.windows(2).all(|w| w[0].0[0] == w[1].0[0]));
        assert!(told.windows(2).all(|w| w[0].0[1] < w[1].0[1]), "{told:?}");
        for (sizes, why) in &told {
            assert_eq!(why, &told[0].1);
            assert!(why.contains("another viewer"), "{why}");
            assert!(!sizes.iter().any(|s| why.contains(&s.to_string())), "{why}");
        }
        // When the sender's own position is one byte too large, he is told its size.
        let own = |sizes: &[usize; 3], _: usize| sizes[0] - 1;
        for (sizes, why) in refusals(&own) {
            assert!(
                why.contains(&format!("{} bytes as Side(A)", sizes[0])),
                "{why}"
            );
        }
    }

    #[test]
    fn a_map_is_measured_through_its_changed_entries() {
        let map = |entries: &[(&str, &str)]| -> BTreeMap<String, String> {
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let maps = [
            map(&[]),
            map(&[("a", "1")]),
            map(&[("a", "1"), ("b", "22")]),
            map(&[("a", "333"), ("c", "4")]),
            map(&[("b", "\u{1}\"")]),
            map(&[("a", "1"), ("b", "22"), ("c", "4"), ("d", "")]),
        ];
        for before in &maps {
            for after in &maps {
                assert_eq!(
                    map_bytes_after(false, before, after, to_json(before).len()),
                    to_json(after).len(),
                    "{before:?} → {after:?}"
                );
            }
        }
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
