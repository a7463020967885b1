//! A VASL saved game made into a scenario: the boards as the picker laid them out, every unit
//! of each side with its ratings, in its hex or off the boards (that side's order of battle
//! still to set up), concealed and hidden ones marked so, support weapons given to a unit of
//! their stack, and a report of everything left out, so nothing is dropped silently.
//!
//! The result is written as a scenario file a person can read and edit (`to_toml`); the
//! format is described in docs/vasl-import.md.

use super::counters::{classify, Alliance, Counter, Nationality};
use super::geometry::{BoardSlot, Located, MapLayout, Point};
use super::save::{Piece, SavedGame};
use board::scenario::{Morale, UnitKind};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// The ids VASL gives its main map window (older saves call it `Map0`). Pieces on any
/// other window are reported, not imported.
pub const MAIN_MAP_NAMES: &[&str] = &["Main Map", "Map0"];

/// The scenario length a new game from a save gets when none is given (`asl new SAVE.vsav`,
/// `asl import` without `--turns`, the page's new-game form): the save does not record it, and
/// the file says so next to the number.
pub const TURNS_DEFAULT: u16 = 6;

/// A save made the scenario a new game starts from, as `asl new SAVE.vsav` makes it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewGameFromSave {
    pub imported: Imported,
    /// The scenario file's text ([`Imported::to_toml`]).
    pub scenario: String,
    /// What the file assumes since the save does not say it ([`Imported::assumptions`]).
    pub assumed: Vec<String>,
}

/// Why a save's bytes do not make a scenario: unreadable as a save, or a save that cannot be
/// imported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SaveImportError {
    #[error("{0}")]
    Save(#[from] super::save::SaveError),
    #[error("{0}")]
    Import(#[from] ImportError),
}

/// The one path from a save's bytes (hostile: read within [`super::save::SAVE_BYTES_MAX`] and
/// the reader's other limits) to the scenario of a new game named `name` (its file's stem),
/// lasting [`TURNS_DEFAULT`] Game Turns: what the CLI's `asl new` and the server's
/// `import_save` (the page's new-game form) both create their game from.
///
/// A save of more units than a scenario holds ([`board::scenario::UNITS_MAX`]), or whose file
/// would pass [`board::scenario::SCENARIO_BYTES_MAX`], is refused here, saying so: its game
/// could not be created, and the file (a save may hold [`super::save::PIECES_MAX`] pieces,
/// megabytes of scenario) would be sent back to the page in a frame past the protocol's
/// limit, which the page then sends again to create the game, and is cut off for.
pub fn new_game_from_save(bytes: &[u8], name: &str) -> Result<NewGameFromSave, SaveImportError> {
    let game = super::save::read(bytes)?;
    let imported = import(&game)?;
    if imported.units.len() > board::scenario::UNITS_MAX {
        return Err(ImportError::TooManyUnits {
            units: imported.units.len(),
        }
        .into());
    }
    // The name is the caller's (a file's name from whoever chose it): `to_toml` writes it as it
    // writes the save's own words, without controls and within the scenario's name limit.
    let options = FileOptions {
        name: name.to_string(),
        turns: TURNS_DEFAULT,
    };
    let scenario = imported.to_toml(&options);
    if scenario.len() > board::scenario::SCENARIO_BYTES_MAX {
        return Err(ImportError::TooLarge {
            bytes: scenario.len(),
        }
        .into());
    }
    Ok(NewGameFromSave {
        scenario,
        assumed: imported.assumptions(&options),
        imported,
    })
}

/// Why a save cannot become a scenario.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// `held` counts the save's pieces as [`ImportError::NoUnits`] does: a tool's save of
    /// counters on an empty map says what it holds.
    #[error("the save lays out no boards (its board picker is empty): none of its pieces stands in a hex (the save holds {held})")]
    NoBoards { held: String },
    #[error("board `{0}` is not a numbered geomorphic board; only those can be imported so far")]
    UnsupportedBoard(String),
    #[error("board `{0}` is magnified (a deluxe-sized board); only geomorphic boards at their own size can be imported")]
    Magnified(String),
    #[error("two boards lie in the board picker's slot at column {column}, row {row}")]
    SlotTaken { column: u32, row: u32 },
    #[error("the board picker's layout leaves its slot at column {column}, row {row} empty; a scenario's map is a full rectangle of boards")]
    SlotEmpty { column: u32, row: u32 },
    /// `held` counts the save's pieces by what the import took them for, in the project's
    /// words (none of the save's): no report is written when the import is refused.
    #[error("no unit was understood: nothing of either side to play (the save holds {held})")]
    NoUnits { held: String },
    #[error("the save holds {units} units, more than a scenario's {max} (UNITS_MAX); `asl import` writes them to a file to cut down", max = board::scenario::UNITS_MAX)]
    TooManyUnits { units: usize },
    #[error("the save makes a scenario file of {bytes} bytes, more than a scenario's {max} (SCENARIO_BYTES_MAX); `asl import` writes it to a file to cut down", max = board::scenario::SCENARIO_BYTES_MAX)]
    TooLarge { bytes: usize },
}

/// A save read as a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// Rows north to south, boards west to east: `2` or `2r` (turned through 180°).
    pub boards: Vec<Vec<String>>,
    /// The board archives the map needs (`bd02`), for the caller to find.
    pub board_files: Vec<String>,
    /// The side that moves first (an index of `sides`).
    pub first: usize,
    /// Whether the save's Phase Track says who moves first; otherwise the first side listed
    /// is assumed to.
    pub first_on_phase_track: bool,
    pub sides: [ImportedSide; 2],
    pub units: Vec<ImportedUnit>,
    pub weapons: Vec<ImportedWeapon>,
    pub report: Vec<ReportEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedSide {
    pub id: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedUnit {
    pub id: String,
    pub side: usize,
    pub kind: UnitKind,
    pub ratings: String,
    /// The name VASL showed (`4-6-7 1sq`).
    pub vasl_name: String,
    /// VASL's hex name (`2B4`); `None` off the boards: an order of battle still to set up.
    pub hex: Option<String>,
    pub morale: Morale,
    pub concealed: bool,
    pub hidden: bool,
    /// A squad's half-squad as its piece names it (A7.302); written as `half_squad`.
    pub half_squad: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedWeapon {
    pub id: String,
    pub side: Option<usize>,
    pub name: String,
    pub pp: u8,
    pub held_by: Option<String>,
    pub hex: Option<String>,
    /// Hidden or under a "?" with its holder: a secret of its side.
    pub secret: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Markers the game keeps itself (turn, CVP, sniper).
    KeptByTheGame,
    /// Counters the engine does not model: left out.
    NotUnderstood,
    /// Something imported with a caveat.
    Note,
    /// A piece the save names more than once (defined twice, or a stack naming it again):
    /// imported once, each repeat left out.
    Repeated,
}

/// One thing the import left out or wants the reader to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportEntry {
    pub category: Category,
    pub what: String,
    /// A hex name, `off board`, or `map window X`.
    pub place: String,
    /// The side it belongs to, when known.
    pub side: Option<usize>,
    /// Hidden or concealed: only its own side may learn of it.
    pub secret: bool,
    /// How many times it was seen there: 1 but for a piece the save names again, counted in
    /// one entry so a stack listing a piece a million times makes one line, not a million.
    pub times: usize,
}

/// One piece as the import sees it.
struct Seen<'a> {
    piece: &'a Piece,
    counter: Counter,
    place: Place,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    Hex(String),
    OffBoard,
    OtherMap(String),
    /// On no map at all (VASL's CVP counters live in a window of their own).
    NoMap,
}

impl Place {
    fn text(&self) -> String {
        match self {
            Place::Hex(h) => h.clone(),
            Place::OffBoard => "off board".into(),
            Place::OtherMap(m) => format!("map window `{m}`"),
            Place::NoMap => "no map".into(),
        }
    }
    fn hex(&self) -> Option<String> {
        match self {
            Place::Hex(h) => Some(h.clone()),
            _ => None,
        }
    }
}

/// Reads a saved game as a scenario.
pub fn import(game: &SavedGame) -> Result<Imported, ImportError> {
    let (layout, boards, board_files) = layout_of(game).map_err(|e| match e {
        ImportError::NoBoards { .. } => ImportError::NoBoards {
            held: held(game.pieces.iter().map(|p| {
                let elsewhere = p.map.as_deref() != main_map(game).as_deref();
                (classify(p), elsewhere)
            })),
        },
        e => e,
    })?;
    let main_map = main_map(game);

    // A piece is one counter, imported once (issue 50). A save that defines an id again, or a
    // stack record that names a piece again (its own list, or another stack's), would
    // otherwise make a second unit of one counter: each repeat is left out and reported.
    // Each repeat is (the piece named again, the piece imported under that id), counted.
    let mut repeats: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut left_out = vec![false; game.pieces.len()];
    for (i, p) in game.pieces.iter().enumerate() {
        match index.get(p.id.as_str()) {
            Some(&first) => {
                left_out[i] = true;
                *repeats.entry((i, first)).or_insert(0) += 1;
            }
            None => {
                index.insert(p.id.as_str(), i);
            }
        }
    }
    // Stacks, bottom first; a piece in no stack is a stack of its own.
    let mut in_stack = left_out.clone();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for stack in &game.stacks {
        let mut members = Vec::new();
        for id in &stack.pieces {
            let Some(&i) = index.get(id.as_str()) else {
                continue;
            };
            if in_stack[i] {
                *repeats.entry((i, i)).or_insert(0) += 1;
            } else {
                in_stack[i] = true;
                members.push(i);
            }
        }
        if !members.is_empty() {
            groups.push(members);
        }
    }
    groups.extend(
        (0..game.pieces.len())
            .filter(|i| !in_stack[*i])
            .map(|i| vec![i]),
    );
    // In the order the save lists the pieces, so ids follow the save's order.
    groups.sort_by_key(|g| g.iter().min().copied());

    let seen: Vec<Seen> = game
        .pieces
        .iter()
        .map(|piece| {
            let place = match &piece.map {
                Some(m) if Some(m.as_str()) == main_map.as_deref() => {
                    match layout.locate(Point::new(piece.x as f64, piece.y as f64)) {
                        Located::OnBoard { board, hex } => Place::Hex(hex.name_on(&board.name)),
                        Located::OffBoard => Place::OffBoard,
                    }
                }
                Some(m) => Place::OtherMap(m.clone()),
                None => Place::NoMap,
            };
            Seen {
                piece,
                counter: classify(piece),
                place,
            }
        })
        .collect();

    let sides = sides_of(
        seen.iter()
            .zip(&left_out)
            .filter(|(_, out)| !**out)
            .map(|(s, _)| s),
    )
    .map_err(|_| no_units(&seen, &left_out))?;
    // The side the save's Phase Track shows moving first is the file's `first`: the save's own
    // word. With no Phase Track, or one naming an alliance both sides or neither fight for,
    // the first side listed is, and the file says it assumed it. Who sets up first the save
    // does not say (the card may have the side moving first set up first too): that stays
    // the file's assumption, unchanged.
    let first_moving = first_on_phase_track(
        seen.iter()
            .zip(&left_out)
            .filter(|(_, out)| !**out)
            .map(|(s, _)| s),
    )
    .and_then(|a| {
        let mut playing = sides.iter().enumerate().filter(|(_, s)| s.plays_for == a);
        match (playing.next(), playing.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    });
    let side_of = |n: &Nationality| -> usize {
        sides
            .iter()
            .position(|s| s.members.contains(&n.army) || s.alliance == Some(n.alliance))
            .unwrap_or(0)
    };

    let mut units: Vec<ImportedUnit> = Vec::new();
    let mut weapons: Vec<ImportedWeapon> = Vec::new();
    let mut report: Vec<ReportEntry> = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    // A piece's id is its stem and its number among the pieces of that stem. A stem may end in
    // a digit (the save names a weapon `BAZ4`, or `BAZ41`): the number is then set off by `-`,
    // and an id another stem already made is passed over, so no two pieces share an id and the
    // scenario reads back.
    let mut next_id = |stem: String| loop {
        let n = counts.entry(stem.clone()).or_insert(0);
        *n += 1;
        let id = if stem.ends_with(|c: char| c.is_ascii_digit()) {
            format!("{stem}-{n}")
        } else {
            format!("{stem}{n}")
        };
        if taken.insert(id.clone()) {
            return id;
        }
    };

    // Whether each piece imported is a secret of its side, for the report of its repeats.
    let mut secret_of = vec![false; game.pieces.len()];
    for group in &groups {
        // Units of this stack as imported so far: (position in stack, index in `units`).
        let mut stack_units: Vec<(usize, usize)> = Vec::new();
        let mut pending_weapons: Vec<(usize, usize)> = Vec::new();
        // Which pieces a "?" of their nationality lies above (A12): concealed, units or not,
        // so nothing under a "?" reaches the other side's report.
        let prefixes: Vec<Option<&str>> = group
            .iter()
            .map(|&i| super::counters::nationality_of(seen[i].piece).map(|n| n.prefix))
            .collect();
        // Read from the top of the stack down, with the nationalities of the "?" above, so a
        // stack of thousands of pieces costs thousands of steps, not millions.
        let mut under_concealment = vec![false; group.len()];
        let mut above: Vec<&str> = Vec::new();
        for at in (0..group.len()).rev() {
            under_concealment[at] = prefixes[at].is_some_and(|p| above.contains(&p));
            if let Counter::Concealment { nationality } = &seen[group[at]].counter {
                if !above.contains(&nationality.prefix) {
                    above.push(nationality.prefix);
                }
            }
        }
        // Where each nationality's first piece other than a "?" lies in the stack.
        let mut first_other: BTreeMap<&str, usize> = BTreeMap::new();
        for (at, prefix) in prefixes.iter().enumerate() {
            if let Some(p) = prefix {
                if !matches!(seen[group[at]].counter, Counter::Concealment { .. }) {
                    first_other.entry(p).or_insert(at);
                }
            }
        }
        // The units of each nationality imported so far in this stack that no "?" has
        // concealed yet: a "?" conceals them, and each is concealed once.
        let mut beneath: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (at, &i) in group.iter().enumerate() {
            let s = &seen[i];
            let secret = s.piece.hidden() || s.piece.masked() || under_concealment[at];
            secret_of[i] = secret;
            let entry = |category: Category, what: String, side: Option<usize>| ReportEntry {
                category,
                what,
                place: s.place.text(),
                side,
                secret,
                times: 1,
            };
            if let Place::OtherMap(_) | Place::NoMap = s.place {
                if !matches!(s.counter, Counter::KeptByTheGame { .. }) {
                    report.push(entry(Category::NotUnderstood, describe(&s.counter), None));
                    continue;
                }
            }
            match &s.counter {
                Counter::Unit {
                    nationality,
                    kind,
                    ratings,
                    morale,
                    name,
                    half_squad,
                } => {
                    let side = side_of(nationality);
                    let id = next_id(format!("{}-{}", nationality.prefix, kind_tag(*kind)));
                    beneath
                        .entry(nationality.prefix)
                        .or_default()
                        .push(units.len());
                    stack_units.push((at, units.len()));
                    units.push(ImportedUnit {
                        id,
                        side,
                        kind: *kind,
                        ratings: ratings.clone(),
                        vasl_name: name.clone(),
                        hex: s.place.hex(),
                        morale: *morale,
                        concealed: s.piece.masked(),
                        hidden: s.piece.hidden(),
                        half_squad: half_squad.clone(),
                    });
                }
                Counter::Concealment { nationality } => {
                    // A "?" conceals the units of its nationality beneath it (A12); with
                    // none beneath it, it is a Dummy.
                    let concealed_any = match beneath.get_mut(nationality.prefix) {
                        Some(pending) => {
                            for u in pending.drain(..) {
                                units[u].concealed = true;
                            }
                            true
                        }
                        None => false,
                    };
                    let conceals_other_pieces = first_other
                        .get(nationality.prefix)
                        .is_some_and(|&first| first < at);
                    if !concealed_any && conceals_other_pieces {
                        // Over pieces the engine leaves out (a vehicle, a Gun): the "?" stays
                        // with them, and is reported where everyone can see it.
                        report.push(ReportEntry {
                            category: Category::NotUnderstood,
                            what: "\"?\" over pieces left out".into(),
                            place: s.place.text(),
                            side: Some(side_of(nationality)),
                            secret: s.piece.hidden(),
                            times: 1,
                        });
                    } else if !concealed_any {
                        let id = next_id(format!("{}-dummy", nationality.prefix));
                        units.push(ImportedUnit {
                            id,
                            side: side_of(nationality),
                            kind: UnitKind::Dummy,
                            ratings: String::new(),
                            vasl_name: "?".into(),
                            hex: s.place.hex(),
                            morale: Morale::GoodOrder,
                            concealed: true,
                            hidden: s.piece.hidden(),
                            half_squad: None,
                        });
                    }
                }
                Counter::Weapon {
                    nationality,
                    name,
                    pp,
                    malfunctioned,
                } => {
                    let prefix = nationality.map_or("sw", |n| n.prefix);
                    let stem: String = name
                        .chars()
                        .filter(|c| c.is_ascii_alphanumeric())
                        .collect::<String>()
                        .to_ascii_lowercase();
                    let id = next_id(format!("{prefix}-{stem}"));
                    if *malfunctioned {
                        report.push(entry(
                            Category::Note,
                            format!("{name} {id} is malfunctioned in the save; the engine does not model malfunction, so it is imported working"),
                            nationality.map(side_of),
                        ));
                    }
                    pending_weapons.push((at, weapons.len()));
                    weapons.push(ImportedWeapon {
                        id,
                        side: nationality.map(side_of),
                        name: counter_name(name),
                        pp: *pp,
                        held_by: None,
                        hex: s.place.hex(),
                        secret,
                    });
                }
                Counter::Other {
                    nationality,
                    tag,
                    name,
                } => {
                    let side = side_of(nationality);
                    let id = next_id(format!("{}-{tag}", nationality.prefix));
                    beneath
                        .entry(nationality.prefix)
                        .or_default()
                        .push(units.len());
                    stack_units.push((at, units.len()));
                    units.push(ImportedUnit {
                        id,
                        side,
                        kind: UnitKind::Counter,
                        ratings: counter_name(name),
                        vasl_name: name.clone(),
                        hex: s.place.hex(),
                        morale: Morale::GoodOrder,
                        concealed: s.piece.masked(),
                        hidden: s.piece.hidden(),
                        half_squad: None,
                    });
                }
                Counter::KeptByTheGame { name } => {
                    report.push(entry(Category::KeptByTheGame, name.clone(), None));
                }
                Counter::NotUnderstood { what } => {
                    report.push(entry(
                        Category::NotUnderstood,
                        what.clone(),
                        nationality_side(s.piece, &side_of),
                    ));
                }
            }
        }
        // A SW belongs to the first Personnel unit beneath it (A4.43); one with none beneath
        // goes to the nearest unit above it, which the report says. Only Infantry possess SW:
        // a vehicle or Gun of the stack (a counter), or a Dummy, does not.
        let personnel: Vec<(usize, usize)> = stack_units
            .iter()
            .copied()
            .filter(|(_, u)| units[*u].kind.is_infantry())
            .collect();
        for (at, w) in pending_weapons {
            // `personnel` is in stack order: the units below `at` come first.
            let below = personnel.partition_point(|(u_at, _)| *u_at < at);
            let beneath = below.checked_sub(1).map(|k| &personnel[k]);
            let above = personnel.get(below);
            if let Some((_, u)) = beneath.or(above) {
                let holder = &units[*u];
                if beneath.is_none() {
                    report.push(ReportEntry {
                        category: Category::Note,
                        what: format!(
                            "{} {} had no unit beneath it; given to {} of its stack",
                            weapons[w].name, weapons[w].id, holder.id
                        ),
                        place: holder.hex.clone().unwrap_or_else(|| "off board".into()),
                        side: Some(holder.side),
                        secret: holder.hidden || holder.concealed,
                        times: 1,
                    });
                }
                weapons[w].held_by = Some(holder.id.clone());
                weapons[w].side = Some(holder.side);
                weapons[w].secret |= holder.hidden || holder.concealed;
                secret_of[group[at]] |= holder.hidden || holder.concealed;
            }
        }
    }
    // A SW in the margin beside the units, as every set-up save leaves them: its side gives it
    // to a unit of its own as it sets that unit up (A4.43). Only one of a side with Infantry
    // to set up can be given; any other is reported, not written into a file that would not
    // load.
    let setting_up: BTreeSet<usize> = units
        .iter()
        .filter(|u| u.hex.is_none() && u.kind.is_infantry())
        .map(|u| u.side)
        .collect();
    let mut kept = Vec::with_capacity(weapons.len());
    for w in weapons {
        let in_margin = w.held_by.is_none() && w.hex.is_none();
        let givable = w.side.is_some_and(|s| setting_up.contains(&s));
        if in_margin && !givable {
            report.push(ReportEntry {
                category: Category::NotUnderstood,
                what: format!(
                    "{} (off the boards, and no Infantry of its side sets up to take it)",
                    w.name
                ),
                place: "off board".into(),
                side: w.side,
                secret: w.secret,
                times: 1,
            });
        } else {
            kept.push(w);
        }
    }
    let weapons = kept;
    for ((named, imported), times) in repeats {
        let s = &seen[named];
        report.push(ReportEntry {
            category: Category::Repeated,
            what: describe(&s.counter),
            place: s.place.text(),
            side: nationality_side(s.piece, &side_of),
            secret: secret_of[imported] || s.piece.hidden() || s.piece.masked(),
            times,
        });
    }

    if units.iter().all(|u| u.kind == UnitKind::Dummy) {
        return Err(no_units(&seen, &left_out));
    }
    Ok(Imported {
        boards,
        board_files,
        sides: sides.map(|s| ImportedSide {
            id: s.id,
            name: s.name,
        }),
        first: first_moving.unwrap_or(0),
        first_on_phase_track: first_moving.is_some(),
        units,
        weapons,
        report,
    })
}

/// A counter's name as the scenario may hold it (`board::scenario::check_counter_name`): no
/// control or bidi character, at most `COUNTER_NAME_BYTES_MAX` bytes. The save's own words
/// stay in the report.
fn counter_name(name: &str) -> String {
    shown_words(name, board::scenario::COUNTER_NAME_BYTES_MAX, "counter")
}

/// Words from the save (or its file's name) as the scenario may hold words both players are
/// shown: each control or bidi character a space, cut at `max` bytes, `fallback` when nothing
/// is left.
fn shown_words(text: &str, max: usize, fallback: &str) -> String {
    use board::scenario::is_bidi;
    let mut out = String::new();
    for c in text.chars() {
        let c = if c.is_control() || is_bidi(c) { ' ' } else { c };
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    let out = out.trim().to_string();
    if out.is_empty() {
        fallback.into()
    } else {
        out
    }
}

fn nationality_side(piece: &Piece, side_of: &dyn Fn(&Nationality) -> usize) -> Option<usize> {
    super::counters::nationality_of(piece).map(side_of)
}

/// The refusal of a save with no unit of either side, counting what it held instead: a tool's
/// save of labels alone, or of markers, says so rather than pointing at a report nobody sees.
fn no_units(seen: &[Seen], left_out: &[bool]) -> ImportError {
    let pieces = seen
        .iter()
        .zip(left_out)
        .filter(|(_, out)| !**out)
        .map(|(s, _)| {
            let elsewhere = matches!(s.place, Place::OtherMap(_) | Place::NoMap);
            (s.counter.clone(), elsewhere)
        });
    ImportError::NoUnits { held: held(pieces) }
}

/// The save's pieces counted by what the import took them for (`true`: on a map window the
/// game is not played on), in the project's words, none of the save's.
fn held(pieces: impl IntoIterator<Item = (Counter, bool)>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (counter, elsewhere) in pieces {
        let what = match (counter, elsewhere) {
            (_, true) => "on no map the game is played on",
            (Counter::Unit { .. }, _) => "units",
            (Counter::Concealment { .. }, _) => "\"?\" counters",
            (Counter::Weapon { .. }, _) => "support weapons",
            (Counter::Other { .. }, _) => "vehicles, Guns or other counters",
            (Counter::KeptByTheGame { .. }, _) => "markers the game keeps itself",
            (Counter::NotUnderstood { .. }, _) => "labels or markers not understood",
        };
        *counts.entry(what).or_insert(0) += 1;
    }
    if counts.is_empty() {
        "no pieces".to_string()
    } else {
        let total: usize = counts.values().sum();
        let parts: Vec<String> = counts.iter().map(|(w, n)| format!("{w} x{n}")).collect();
        let pieces = if total == 1 { "piece" } else { "pieces" };
        format!("{total} {pieces}: {}", parts.join(", "))
    }
}

fn describe(counter: &Counter) -> String {
    match counter {
        Counter::Unit { name, .. } => name.clone(),
        Counter::Weapon { name, .. } => name.clone(),
        Counter::Other { name, .. } => name.clone(),
        Counter::Concealment { .. } => "?".into(),
        Counter::KeptByTheGame { name } => name.clone(),
        Counter::NotUnderstood { what } => what.clone(),
    }
}

fn kind_tag(kind: UnitKind) -> &'static str {
    match kind {
        UnitKind::Squad => "sq",
        UnitKind::HalfSquad => "hs",
        UnitKind::Crew => "cr",
        UnitKind::Leader => "ldr",
        UnitKind::Hero => "hero",
        UnitKind::Vehicle => "veh",
        UnitKind::Dummy => "dummy",
        UnitKind::Counter => "ctr",
        UnitKind::Concealed => "q",
    }
}

/// The map the boards are on: VASL's main window, under either of its names.
fn main_map(game: &SavedGame) -> Option<String> {
    MAIN_MAP_NAMES
        .iter()
        .find(|m| game.pieces.iter().any(|p| p.map.as_deref() == Some(**m)))
        .map(|m| m.to_string())
        .or_else(|| Some(MAIN_MAP_NAMES[0].to_string()))
}

type Layout = (MapLayout, Vec<Vec<String>>, Vec<String>);

fn layout_of(game: &SavedGame) -> Result<Layout, ImportError> {
    if game.boards.is_empty() {
        return Err(ImportError::NoBoards {
            held: String::new(),
        });
    }
    let mut slots = Vec::new();
    let mut grid: BTreeMap<(u32, u32), String> = BTreeMap::new();
    let mut files = Vec::new();
    for b in &game.boards {
        let name = b.name();
        if !name.bytes().all(|c| c.is_ascii_digit()) || name.parse::<u16>().is_err() {
            return Err(ImportError::UnsupportedBoard(b.file.clone()));
        }
        if b.zoom.is_some() {
            return Err(ImportError::Magnified(name));
        }
        let shown = if b.rotated {
            format!("{name}r")
        } else {
            name.clone()
        };
        if grid.insert((b.row, b.column), shown).is_some() {
            return Err(ImportError::SlotTaken {
                column: b.column,
                row: b.row,
            });
        }
        files.push(format!("bd{}", b.file));
        slots.push(BoardSlot {
            name,
            column: b.column,
            row: b.row,
            rotated: b.rotated,
            crop: b.crop,
        });
    }
    let rows = grid.keys().map(|(r, _)| *r).max().unwrap_or(0) + 1;
    let columns = grid.keys().map(|(_, c)| *c).max().unwrap_or(0) + 1;
    let mut boards = Vec::new();
    for row in 0..rows {
        let mut line = Vec::new();
        for column in 0..columns {
            match grid.get(&(row, column)) {
                Some(b) => line.push(b.clone()),
                None => return Err(ImportError::SlotEmpty { column, row }),
            }
        }
        boards.push(line);
    }
    Ok((MapLayout::new(slots), boards, files))
}

struct SideDraft {
    id: String,
    name: String,
    /// The alliance its armies fight for: whom a Phase Track's `Axis 1st` or `Allied 1st`
    /// names.
    plays_for: Alliance,
    /// Armies on this side.
    members: Vec<&'static str>,
    /// Set when the side is a whole alliance (a save of more than two armies).
    alliance: Option<Alliance>,
}

/// The alliance whose Player Turn comes first on the save's Phase Track, VASL's turn and
/// phase marker: its counter is `Phase Track Axis 1st` or `Phase Track Allied 1st`, the
/// player setting the save up choosing which. `None` with no Phase Track, or with two that
/// disagree.
fn first_on_phase_track<'a>(seen: impl IntoIterator<Item = &'a Seen<'a>>) -> Option<Alliance> {
    let mut shown = seen.into_iter().filter_map(|s| match &s.counter {
        Counter::KeptByTheGame { name } => {
            let rest = name.strip_prefix("Phase Track")?.trim();
            match rest.strip_suffix("1st")?.trim() {
                "Axis" => Some(Alliance::Axis),
                "Allied" => Some(Alliance::Allied),
                _ => None,
            }
        }
        _ => None,
    });
    let first = shown.next()?;
    shown.all(|a| a == first).then_some(first)
}

/// The two sides: the two armies of the save's units, or its two alliances when it holds
/// more armies than two (a German and Italian force against a British one).
fn sides_of<'a>(
    seen: impl IntoIterator<Item = &'a Seen<'a>>,
) -> Result<[SideDraft; 2], ImportError> {
    let mut armies: Vec<&'static Nationality> = Vec::new();
    for s in seen {
        let n = match &s.counter {
            Counter::Unit { nationality, .. } => Some(*nationality),
            Counter::Concealment { nationality } => Some(*nationality),
            _ => None,
        };
        let on_map = !matches!(s.place, Place::OtherMap(_) | Place::NoMap);
        if let (Some(n), true) = (n, on_map) {
            if !armies.iter().any(|a| a.army == n.army) {
                armies.push(n);
            }
        }
    }
    armies.sort_by_key(|n| (n.alliance, n.army));
    let army = |n: &Nationality| SideDraft {
        id: n.army.into(),
        name: n.army_name.into(),
        plays_for: n.alliance,
        members: vec![n.army],
        alliance: None,
    };
    let alliance = |a: Alliance| SideDraft {
        id: match a {
            Alliance::Axis => "axis".into(),
            Alliance::Allied => "allied".into(),
        },
        name: match a {
            Alliance::Axis => "Axis".into(),
            Alliance::Allied => "Allied".into(),
        },
        plays_for: a,
        members: armies
            .iter()
            .filter(|n| n.alliance == a)
            .map(|n| n.army)
            .collect(),
        alliance: Some(a),
    };
    match armies.as_slice() {
        [] => Err(ImportError::NoUnits {
            held: String::new(),
        }),
        [only] => {
            let other = if only.alliance == Alliance::Axis {
                alliance(Alliance::Allied)
            } else {
                alliance(Alliance::Axis)
            };
            Ok([army(only), other])
        }
        [a, b] => Ok([army(a), army(b)]),
        _ => Ok([alliance(Alliance::Axis), alliance(Alliance::Allied)]),
    }
}

// ---- the scenario file -------------------------------------------------------------------

/// What the save does not say, which a scenario needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOptions {
    pub name: String,
    pub turns: u16,
}

/// The file's text as it is built: comments and documents the `toml` serializer wrote, one
/// after another. A save is a file from others (issue 50): every value it contributes (a
/// counter's name, a hex, an id) reaches the file only through the serializer, which quotes
/// and escapes it, so a name holding a newline, a quote or `[[units]]` stays one string.
/// A comment can only be `&'static str`, the project's own words; nothing read from the save
/// can be one. The toml crate writes no comments, hence the documents: each is a whole TOML
/// document (top-level keys first, then tables, and every later one a table or an array of
/// tables), so one after another they read as the one document holding them all.
struct FileText(String);

impl FileText {
    fn comment(&mut self, lines: &'static str) {
        for line in lines.lines() {
            self.0.push_str("# ");
            self.0.push_str(line);
            self.0.push('\n');
        }
    }

    fn document(&mut self, value: &impl serde::Serialize) {
        // Strings, integers, booleans and tables and arrays of them, each table a struct
        // with fixed keys: there is nothing here the serializer cannot write.
        let text = toml::to_string(value).expect("the scenario file's values serialize");
        self.0.push_str(&text);
        if !self.0.ends_with('\n') {
            self.0.push('\n');
        }
    }

    fn gap(&mut self) {
        self.0.push('\n');
    }
}

#[derive(serde::Serialize)]
struct NameKey<'a> {
    name: &'a str,
}

#[derive(serde::Serialize)]
struct TurnsKey {
    turns: u16,
}

#[derive(serde::Serialize)]
struct SidesKeys<'a> {
    first: &'a str,
    sides: Vec<SideEntry<'a>>,
}

#[derive(serde::Serialize)]
struct SideEntry<'a> {
    id: &'a str,
    name: &'a str,
}

#[derive(serde::Serialize)]
struct MapTable<'a> {
    map: MapEntry<'a>,
}

#[derive(serde::Serialize)]
struct MapEntry<'a> {
    boards: &'a [Vec<String>],
}

#[derive(serde::Serialize)]
struct SetupTable<'a> {
    setup: SetupEntry<'a>,
}

#[derive(serde::Serialize)]
struct SetupEntry<'a> {
    order: Vec<&'a str>,
    areas: Vec<AreaEntry<'a>>,
}

#[derive(serde::Serialize)]
struct AreaEntry<'a> {
    side: &'a str,
    board: String,
}

/// One `[[units]]` entry: written one to a document, so a comment may stand between two.
#[derive(serde::Serialize)]
struct UnitsArray<'a> {
    units: [UnitEntry<'a>; 1],
}

/// A unit in the scenario format's fields (`UnitFile` in `board::scenario`). The VASL name
/// it was read from is not among them (the format has no field for it): the report shows it.
#[derive(serde::Serialize)]
struct UnitEntry<'a> {
    id: &'a str,
    side: &'a str,
    kind: UnitKind,
    #[serde(skip_serializing_if = "str::is_empty")]
    ratings: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hex: Option<&'a str>,
    #[serde(skip_serializing_if = "is_false")]
    offboard: bool,
    #[serde(skip_serializing_if = "is_good_order")]
    morale: Morale,
    #[serde(skip_serializing_if = "is_false")]
    concealed: bool,
    #[serde(skip_serializing_if = "is_false")]
    hidden: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    half_squad: Option<&'a str>,
}

#[derive(serde::Serialize)]
struct WeaponsArray<'a> {
    weapons: [WeaponEntry<'a>; 1],
}

#[derive(serde::Serialize)]
struct WeaponEntry<'a> {
    id: &'a str,
    name: &'a str,
    pp: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    held_by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hex: Option<&'a str>,
    /// For one in the margin: its side, which gives it to a unit at set-up (A4.43).
    #[serde(skip_serializing_if = "Option::is_none")]
    side: Option<&'a str>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_good_order(m: &Morale) -> bool {
    *m == Morale::GoodOrder
}

const FILE_HEADING: &str =
    "Imported from a VASL saved game by `asl import`: see docs/vasl-import.md.
Units with `offboard = true` are their side's order of battle still to set up.
The VASL counter each unit was read from is in the import's report.";
const TURNS_NOTE: &str =
    "The save does not record the scenario's length: check it against the card.";
const FIRST_NOTE: &str = "Nor who moves first: the first side listed is assumed.";
const FIRST_READ_NOTE: &str =
    "Who moves first is read off the save's Phase Track (Axis 1st or Allied 1st): check it against the card.";
const MAP_NOTE: &str =
    "Rows north to south, boards west to east; \"r\" = turned through 180 degrees.";
const SETUP_NOTE: &str =
    "SET-UP: CHECK AGAINST THE SCENARIO CARD. The save holds units off the boards: their
side's order of battle, set up in the game's set-up step before Turn 1. A VASL save
records neither who sets up first nor where each side may set up, so below each side
may set up anywhere on the map, and the side listed second sets up first. Replace the
areas with the card's (`board = \"3\"`, `hexrows = \"A-E\"`, `numbers = \"1-4\"`,
`hexes = [\"3B4\"]`) and the order with the card's before playing (docs/vasl-import.md).
CHECK: `order`: the card says which side sets up first.
CHECK: each `[[setup.areas]]` is a whole board, not the card's area.";
const GIVEN_AT_SETUP_NOTE: &str =
    "In the margin beside the units, possessed by none: its side gives it to a unit of its
own as it sets that unit up (`setup UNIT HEX with WEAPON`, A4.43).";

impl Imported {
    /// The scenario file's text, written by the `toml` serializer (see [`FileText`]).
    pub fn to_toml(&self, options: &FileOptions) -> String {
        let side_id = |s: usize| self.sides[s].id.as_str();
        let mut file = FileText(String::new());
        file.comment(FILE_HEADING);
        // The name is often the save's file name, which others chose: shown to both players.
        let name = shown_words(
            &options.name,
            board::scenario::SCENARIO_NAME_BYTES_MAX,
            "Imported scenario",
        );
        file.document(&NameKey { name: &name });
        file.comment(TURNS_NOTE);
        file.document(&TurnsKey {
            turns: options.turns,
        });
        file.comment(if self.first_on_phase_track {
            FIRST_READ_NOTE
        } else {
            FIRST_NOTE
        });
        file.document(&SidesKeys {
            first: side_id(self.first),
            sides: self
                .sides
                .iter()
                .map(|s| SideEntry {
                    id: &s.id,
                    name: &s.name,
                })
                .collect(),
        });
        file.gap();
        file.comment(MAP_NOTE);
        file.document(&MapTable {
            map: MapEntry {
                boards: &self.boards,
            },
        });
        if let Some(setup) = self.setup_entry() {
            file.gap();
            file.comment(SETUP_NOTE);
            file.document(&SetupTable { setup });
        }
        for u in &self.units {
            file.gap();
            file.document(&UnitsArray {
                units: [UnitEntry {
                    id: &u.id,
                    side: side_id(u.side),
                    kind: u.kind,
                    ratings: &u.ratings,
                    hex: u.hex.as_deref(),
                    offboard: u.hex.is_none(),
                    morale: u.morale,
                    concealed: u.concealed,
                    hidden: u.hidden,
                    half_squad: u.half_squad.as_deref(),
                }],
            });
        }
        for w in &self.weapons {
            file.gap();
            let (held_by, hex) = match (&w.held_by, &w.hex) {
                (Some(u), _) => (Some(u.as_str()), None),
                (None, h) => (None, h.as_deref()),
            };
            let side = (held_by.is_none() && hex.is_none())
                .then(|| w.side.map(side_id))
                .flatten();
            if side.is_some() {
                file.comment(GIVEN_AT_SETUP_NOTE);
            }
            file.document(&WeaponsArray {
                weapons: [WeaponEntry {
                    id: &w.id,
                    name: &w.name,
                    pp: w.pp,
                    held_by,
                    hex,
                    side,
                }],
            });
        }
        file.0
    }

    /// What the file assumes because the save does not say it, in words for the person who
    /// imports it (`asl new` prints them; docs/vasl-import.md says how to change each).
    pub fn assumptions(&self, options: &FileOptions) -> Vec<String> {
        let mut out = vec![
            format!(
                "the game lasts {} Game Turns: the save does not record the scenario's length (`turns`)",
                options.turns
            ),
            if self.first_on_phase_track {
                format!(
                    "the {} moves first, as the save's Phase Track shows (`first`)",
                    self.sides[self.first].name
                )
            } else {
                format!(
                    "the {} moves first: the first side listed (`first`)",
                    self.sides[0].name
                )
            },
        ];
        if let Some(setup) = self.setup_entry() {
            let names: Vec<&str> = setup
                .order
                .iter()
                .filter_map(|id| self.sides.iter().find(|s| s.id == *id))
                .map(|s| s.name.as_str())
                .collect();
            out.push(format!(
                "set-up order: {} (`[setup] order`)",
                names.join(", then ")
            ));
            out.push(
                "each side may set up anywhere on the map, not in the card's area (`[[setup.areas]]`)"
                    .into(),
            );
            out.push(
                "no unit enters later: every unit off the boards sets up before Turn 1 (`enters` on a unit)"
                    .into(),
            );
        }
        let given = self
            .weapons
            .iter()
            .filter(|w| w.held_by.is_none() && w.hex.is_none())
            .count();
        if given > 0 {
            out.push(format!(
                "{given} support weapon(s) in the margin are given to units as their side sets them up (`setup UNIT HEX with WEAPON`)"
            ));
        }
        let counters = self
            .units
            .iter()
            .filter(|u| u.kind == UnitKind::Counter)
            .count();
        if counters > 0 {
            out.push(format!(
                "{counters} vehicle(s), Gun(s) and other counter(s) the engine does not rule on come in as counters, moved by adjudication (`kind = \"counter\"`)"
            ));
        }
        out
    }

    /// The save's piece a field of the file written by [`Imported::to_toml`] was made from
    /// (`units[12].hex`, `weapons[3]`), in words: what a refusal of the file names instead of
    /// a line of a file the user never wrote.
    pub fn piece_of_field(&self, field: &str) -> Option<String> {
        let index = |prefix: &str| -> Option<usize> {
            field.strip_prefix(prefix)?.split(']').next()?.parse().ok()
        };
        if let Some(u) = index("units[").and_then(|i| self.units.get(i)) {
            return Some(format!(
                "the counter `{}` ({}, {})",
                u.vasl_name,
                u.id,
                u.hex.as_deref().unwrap_or("off board")
            ));
        }
        if let Some(w) = index("weapons[").and_then(|i| self.weapons.get(i)) {
            return Some(format!(
                "the support weapon `{}` ({}, {})",
                w.name,
                w.id,
                w.hex.as_deref().unwrap_or("off board")
            ));
        }
        None
    }

    /// `[setup]` for a save holding units off the boards. A save records neither who sets up
    /// first nor where each side sets up, so this invents no SSR: it lets each side set up
    /// anywhere on the map, says so, and asks for the card's areas in their place.
    fn setup_entry(&self) -> Option<SetupEntry<'_>> {
        let setting_up: Vec<usize> = (0..self.sides.len())
            .filter(|s| self.units.iter().any(|u| u.side == *s && u.hex.is_none()))
            .collect();
        if setting_up.is_empty() {
            return None;
        }
        let boards: Vec<String> = self
            .boards
            .iter()
            .flatten()
            .map(|b| b.trim_end_matches(['r', 'R']).to_string())
            .collect();
        Some(SetupEntry {
            order: self.sides.iter().rev().map(|s| s.id.as_str()).collect(),
            areas: setting_up
                .iter()
                .flat_map(|s| {
                    boards.iter().map(move |b| AreaEntry {
                        side: &self.sides[*s].id,
                        board: b.clone(),
                    })
                })
                .collect(),
        })
    }

    /// The report as a viewer may read it: `None` for the person importing (everything);
    /// a side sees everything of its own and only what is neither hidden nor concealed of
    /// the other.
    pub fn report_for(&self, viewer: Option<usize>) -> Vec<&ReportEntry> {
        self.report
            .iter()
            .filter(|e| match (viewer, e.side) {
                (None, _) => true,
                (Some(v), Some(s)) if v == s => true,
                _ => !e.secret,
            })
            .collect()
    }

    /// The report in words, grouped: what, how many, where. Every word taken from the save
    /// (a counter's name, a map window's) is written as `shown` makes it: the caller knows
    /// where the text goes, and a terminal needs control characters and bidirectional
    /// overrides escaped (the CLI's `printable`), since a save is a file from others.
    pub fn report_text(&self, viewer: Option<usize>, shown: impl Fn(&str) -> String) -> String {
        let entries = self.report_for(viewer);
        let mut out = String::new();
        let sections = [
            (
                Category::KeptByTheGame,
                "Ignored: markers the game keeps itself",
            ),
            (
                Category::NotUnderstood,
                "Not understood: left out of the scenario",
            ),
            (Category::Note, "Notes"),
            (
                Category::Repeated,
                "Warnings: pieces the save names more than once, imported once",
            ),
        ];
        for (category, title) in sections {
            // What, then where, then how many times there.
            let mut grouped: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
            for e in entries.iter().filter(|e| e.category == category) {
                *grouped
                    .entry(&e.what)
                    .or_default()
                    .entry(&e.place)
                    .or_insert(0) += e.times;
            }
            if grouped.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{title}:");
            for (what, at) in grouped {
                let times: usize = at.values().sum();
                let where_: Vec<String> = at
                    .into_iter()
                    .map(|(p, n)| {
                        if n > 1 {
                            format!("{} x{n}", shown(p))
                        } else {
                            shown(p)
                        }
                    })
                    .collect();
                let _ = writeln!(out, "  {} x{times}: {}", shown(what), where_.join(", "));
            }
        }
        // Counts a side may know: its own, and the other's units neither hidden nor
        // concealed (a "?" shows a stack, not how many units, or whether any, are under it).
        let visible = |side: Option<usize>, secret: bool| match (viewer, side) {
            (None, _) => true,
            (Some(v), Some(s)) if v == s => true,
            _ => !secret,
        };
        let units: Vec<&ImportedUnit> = self
            .units
            .iter()
            .filter(|u| visible(Some(u.side), u.hidden || u.concealed))
            .collect();
        let off = units.iter().filter(|u| u.hex.is_none()).count();
        let weapons = self
            .weapons
            .iter()
            .filter(|w| visible(w.side, w.secret))
            .count();
        let known = if viewer.is_some() {
            " this side may know of"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "Imported: {} units{known} ({} on the boards, {off} off them to set up), {weapons} support weapons.",
            units.len(),
            units.len() - off,
        );
        // The file has no field for a unit's VASL name, so the player checks each id against
        // the counter it came from here.
        if !units.is_empty() {
            let _ = writeln!(out, "Each unit, with the VASL counter it was read from:");
            for u in &units {
                let _ = writeln!(
                    out,
                    "  {}: {}, {}",
                    shown(&u.id),
                    shown(&u.vasl_name),
                    shown(u.hex.as_deref().unwrap_or("off board"))
                );
            }
        }
        if off > 0 {
            let _ = writeln!(
                out,
                "Set-up: the units off the boards set up before Turn 1. A save records neither who sets up first nor the set-up areas: the file lets each side set up anywhere and marks it CHECK; put the card's set-up areas and order in it before playing."
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::GridHex;
    use crate::save::{parse, writer};

    const LAYOUT: &str = "bd\t0\t0\t02\tVER\t6.4\tbd\t1\t0\tr4\tVER\t6.1\t";

    /// The one path from a save's bytes to a new game's scenario: named by the caller, within
    /// the scenario's name limit, a name of nothing but spaces replaced; bytes that are no save, and a save
    /// with no boards, refused with the reader's and the importer's words.
    #[test]
    fn a_new_game_is_made_from_a_saves_bytes_by_one_function() {
        let text = writer::saved_game_text(&[
            "bd\t0\t0\t02\tVER\t6.4\t".to_string(),
            writer::piece_command(
                "1",
                &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1")],
            ),
        ]);
        let bytes = writer::vsav(
            &writer::encode(&text, crate::save::Encoding::Xz),
            Some("VASL"),
        );
        let made = new_game_from_save(&bytes, "Hill 621").unwrap();
        assert!(
            made.scenario.contains("name = \"Hill 621\""),
            "{}",
            made.scenario
        );
        assert!(
            made.scenario.contains(&format!("turns = {TURNS_DEFAULT}")),
            "{}",
            made.scenario
        );
        assert_eq!(made.imported.board_files, ["bd02"]);
        assert!(
            made.assumed[0].contains("6 Game Turns"),
            "{:?}",
            made.assumed
        );
        let unnamed = new_game_from_save(&bytes, "  ").unwrap();
        assert!(unnamed.scenario.contains("name = \"Imported scenario\""));
        let long = "é".repeat(board::scenario::SCENARIO_NAME_BYTES_MAX);
        let cut = new_game_from_save(&bytes, &long).unwrap();
        let name_line = cut
            .scenario
            .lines()
            .find(|l| l.starts_with("name = "))
            .unwrap();
        assert!(
            name_line.len() <= board::scenario::SCENARIO_NAME_BYTES_MAX + 10,
            "{name_line}"
        );

        let not_a_save = new_game_from_save(b"PK\x03\x04 nothing", "x").unwrap_err();
        assert!(
            matches!(not_a_save, SaveImportError::Save(_)),
            "{not_a_save}"
        );
        let boardless = writer::vsav(
            &writer::encode(&writer::saved_game_text(&[]), crate::save::Encoding::Plain),
            Some("VASL"),
        );
        assert_eq!(
            new_game_from_save(&boardless, "x").unwrap_err(),
            SaveImportError::Import(ImportError::NoBoards {
                held: "no pieces".into()
            })
        );
    }

    /// A save of more units than a scenario holds, or of so many weapons that its file passes
    /// a scenario's bytes, made a file of megabytes no game could be created from, sent back
    /// to the page past the frame limit: it is refused at once, naming the limit. A save of
    /// as many units as a scenario holds is a scenario.
    #[test]
    fn a_save_past_a_scenarios_limits_is_refused_naming_them() {
        let save = |units: usize| {
            let mut commands = vec!["bd\t0\t0\t02\tVER\t6.4\t".to_string()];
            for i in 0..units {
                commands.push(writer::piece_command(
                    &format!("p{i}"),
                    &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1")],
                ));
            }
            let text = writer::saved_game_text(&commands);
            writer::vsav(
                &writer::encode(&text, crate::save::Encoding::Plain),
                Some("VASL"),
            )
        };
        let max = board::scenario::UNITS_MAX;
        let made = new_game_from_save(&save(max), "x").unwrap();
        assert!(made.scenario.len() <= board::scenario::SCENARIO_BYTES_MAX);
        let refused = new_game_from_save(&save(max + 1), "x").unwrap_err();
        assert_eq!(
            refused,
            SaveImportError::Import(ImportError::TooManyUnits { units: max + 1 })
        );
        assert!(refused.to_string().contains("UNITS_MAX"), "{refused}");
        // Weapons have no number of their own; the file's size bounds them.
        let mut commands = vec!["bd\t0\t0\t02\tVER\t6.4\t".to_string()];
        for i in 0..5_000 {
            commands.push(writer::piece_command(
                &format!("w{i}"),
                &[("piece;K;D;ge/geLMG;LMG", "Main Map;500;500;1")],
            ));
        }
        commands.push(writer::piece_command(
            "sq",
            &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1")],
        ));
        let weapons = writer::vsav(
            &writer::encode(
                &writer::saved_game_text(&commands),
                crate::save::Encoding::Plain,
            ),
            Some("VASL"),
        );
        let refused = new_game_from_save(&weapons, "x").unwrap_err();
        assert!(
            matches!(
                refused,
                SaveImportError::Import(ImportError::TooLarge { bytes })
                    if bytes > board::scenario::SCENARIO_BYTES_MAX
            ),
            "{refused}"
        );
    }

    /// Ids are numbered after their counter's name, and a name may end in a digit: the eleventh
    /// `BAZ4` was numbered `ge-baz411`, as the first `BAZ41` was, and the scenario made of a
    /// legitimate save was then refused for an id used twice. Every id imported is one piece's.
    #[test]
    fn weapons_whose_names_end_in_digits_get_ids_of_their_own() {
        let mut commands = vec!["bd\t0\t0\t02\tVER\t6.4\t".to_string()];
        commands.push(writer::piece_command(
            "sq",
            &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1")],
        ));
        for (i, name) in std::iter::repeat_n("BAZ4", 11)
            .chain(["BAZ41", "BAZ4", "BAZ411"])
            .enumerate()
        {
            commands.push(writer::piece_command(
                &format!("w{i}"),
                &[(&format!("piece;K;D;ge/geBAZ;{name}"), "Main Map;500;500;1")],
            ));
        }
        let bytes = writer::vsav(
            &writer::encode(
                &writer::saved_game_text(&commands),
                crate::save::Encoding::Plain,
            ),
            Some("VASL"),
        );
        let made = new_game_from_save(&bytes, "x").unwrap();
        assert_eq!(made.imported.weapons.len(), 14);
        let ids: std::collections::BTreeSet<&str> = made
            .imported
            .weapons
            .iter()
            .map(|w| w.id.as_str())
            .chain(made.imported.units.iter().map(|u| u.id.as_str()))
            .collect();
        assert_eq!(ids.len(), 15, "{ids:?}");
        for id in &ids {
            board::scenario::check_id("id", id).unwrap();
        }
    }

    /// A save is read in steps proportional to its pieces: a stack of 10,000 squads beneath
    /// 10,000 "?" (a save of some 100 KB) took each "?" through every unit beneath it, and
    /// each unit through every piece above it, some 30 s of a debug build's CPU, on the
    /// server's `import_save` as in `asl new`. Each shape of a stack (units then "?", "?"
    /// alone, weapons above units) is now read in well under a second there.
    #[test]
    fn a_stack_of_thousands_of_pieces_is_read_in_steps_proportional_to_them() {
        let squad = ("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1");
        let question = [
            ("concealment;alice;ge", ""),
            ("piece;K;D;ge/geqmark;?", "Main Map;500;500;1"),
        ];
        let lmg = ("piece;K;D;ge/geLMG;LMG", "Main Map;500;500;1");
        let half = 10_000;
        for (first, then) in [
            (vec![squad], question.to_vec()),
            (question.to_vec(), question.to_vec()),
            (vec![lmg], vec![squad]),
        ] {
            let mut commands = vec!["bd\t0\t0\t02\tVER\t6.4\t".to_string()];
            let ids: Vec<String> = (0..2 * half).map(|i| format!("p{i}")).collect();
            for (i, id) in ids.iter().enumerate() {
                let traits = if i < half { &first } else { &then };
                commands.push(writer::piece_command(id, traits));
            }
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            commands.push(writer::stack_command("s", "Main Map", 500, 500, &ids));
            let bytes = writer::vsav(
                &writer::encode(
                    &writer::saved_game_text(&commands),
                    crate::save::Encoding::Xz,
                ),
                Some("VASL"),
            );
            let started = std::time::Instant::now();
            let read = new_game_from_save(&bytes, "x");
            let took = started.elapsed();
            assert!(read.is_err(), "past UNITS_MAX, or no unit at all");
            assert!(
                took < std::time::Duration::from_secs(10),
                "{} bytes took {took:?}",
                bytes.len()
            );
        }
    }

    fn layout() -> MapLayout {
        let slot = |name: &str, column, rotated| BoardSlot {
            name: name.into(),
            column,
            row: 0,
            rotated,
            crop: None,
        };
        MapLayout::new(vec![slot("2", 0, false), slot("4", 1, true)])
    }

    /// Map pixels of a hex: board 0 is board 2, board 1 is board 4 turned round.
    fn at(board: usize, column: u16, row: u16) -> (i64, i64) {
        let p = layout().map_point(board, GridHex::new(column, row).unwrap());
        (p.x.round() as i64, p.y.round() as i64)
    }

    struct Save(Vec<String>);

    impl Save {
        fn piece(&mut self, id: &str, traits: &[(&str, &str)], (x, y): (i64, i64)) {
            let basic_state = format!("Main Map;{x};{y};1");
            let mut t: Vec<(&str, &str)> = traits.to_vec();
            let last = t.len() - 1;
            t[last].1 = &basic_state;
            self.0.push(writer::piece_command(id, &t));
        }
        fn stack(&mut self, id: &str, (x, y): (i64, i64), ids: &[&str]) {
            self.0
                .push(writer::stack_command(id, "Main Map", x, y, ids));
        }
        fn game(&self) -> SavedGame {
            parse(&writer::saved_game_text(&self.0)).unwrap()
        }
    }

    const GE: (&str, &str) = ("conceal;C;ge/geqmark;ge;;", "null;");
    const RU: (&str, &str) = ("conceal;C;ru/ruqmark;ru;;", "null;");
    const RU_HIDDEN: (&str, &str) = ("hide;72,130;HIP;;player:;0.3", "bob");
    const SQUAD_ELR: &str = "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ge/ge468S,ge/ge467S;4-6-8 Esq,4-6-7 1sq;false;;;;false;;1;1;true;;69,130";
    /// The squad's half-squads, stepped with its ELR layer (key `E`), switched off.
    const SQUAD_HS: &str = "emb2;;2;V;;2;E;;2;Q;;;0;false;0;0;ge/ge248H,ge/ge247H;2-4-8 Ehs,2-4-7 1hs;false;;;;false;;1;1;false;86,130;69,130";
    const LEADER: &str = "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ge/geL92,ge/geL91;9-2,9-1;false;;;;false;;1;1;true;;69,130";

    fn scenario_save() -> Save {
        let mut s = Save(vec![LAYOUT.to_string()]);
        let b4 = at(0, 2, 4);
        s.piece(
            "sq",
            &[
                GE,
                (SQUAD_HS, "-2"),
                (SQUAD_ELR, "2"),
                ("piece;K;D; ;4-6-8 Esq", ""),
            ],
            b4,
        );
        s.piece(
            "lmg",
            &[
                ("mark;DBCounterType", "common"),
                GE,
                ("piece;K;D;ge/geLMG;LMG", ""),
            ],
            b4,
        );
        s.stack("s1", b4, &["sq", "lmg"]);
        let c5 = at(0, 3, 5);
        s.piece("ldr", &[GE, (LEADER, "2"), ("piece;K;D; ;geLDR", "")], c5);
        s.piece(
            "q",
            &[("concealment;alice;ge", ""), ("piece;K;D;ge/geqmark;?", "")],
            c5,
        );
        s.stack("s2", c5, &["ldr", "q"]);
        // On board 4, turned round.
        let e5 = at(1, 5, 5);
        s.piece(
            "ru1",
            &[RU_HIDDEN, RU, ("piece;K;D;ru/ru447S;4-4-7 1sq", "")],
            e5,
        );
        s.piece(
            "ruq",
            &[("concealment;bob;ru", ""), ("piece;K;D;ru/ruqmark;?", "")],
            at(1, 9, 3),
        );
        // A Russian Gun under a "?": a concealed counter; the Germans learn nothing of it.
        let g7 = at(1, 7, 7);
        s.piece("gun", &[RU, ("piece;K;D;ru/gun/ru45LL;45LL AT", "")], g7);
        s.piece(
            "gunq",
            &[("concealment;bob;ru", ""), ("piece;K;D;ru/ruqmark;?", "")],
            g7,
        );
        s.stack("s4", g7, &["gun", "gunq"]);
        // Off the boards: an order of battle, its MMG under the squad.
        s.piece(
            "mmg",
            &[
                ("mark;DBCounterType", "common"),
                RU,
                ("piece;K;D;ru/ruMMG;MMG", ""),
            ],
            (100, 100),
        );
        s.piece(
            "ru2",
            &[RU, ("piece;K;D;ru/ru628S;6-2-8 Esq", "")],
            (100, 100),
        );
        s.stack("s3", (100, 100), &["mmg", "ru2"]);
        s.piece(
            "tank",
            &[
                ("mark;DBCounterType", "unit"),
                GE,
                ("piece;K;D;ge/veh/pzivh;PzKw IVH", ""),
            ],
            at(0, 10, 6),
        );
        s.piece(
            "secret-tank",
            &[RU_HIDDEN, RU, ("piece;K;D;ru/veh/T34M43;T-34 M43", "")],
            at(1, 12, 6),
        );
        s.piece("turn", &[("piece;;D; ;Game Turn", "")], (50, 50));
        s.piece(
            "ec",
            &[("mark;DBCounterType", "global"), ("piece;K;D; ;EC", "")],
            (60, 60),
        );
        s
    }

    fn unit<'a>(i: &'a Imported, id: &str) -> &'a ImportedUnit {
        i.units.iter().find(|u| u.id == id).unwrap_or_else(|| {
            panic!(
                "{id} not in {:?}",
                i.units.iter().map(|u| &u.id).collect::<Vec<_>>()
            )
        })
    }

    #[test]
    fn a_save_becomes_boards_units_weapons_and_a_report() {
        let i = import(&scenario_save().game()).unwrap();
        assert_eq!(i.boards, vec![vec!["2".to_string(), "4r".to_string()]]);
        assert_eq!(i.board_files, vec!["bd02", "bd4"]);
        assert_eq!(i.sides[0].id, "german");
        assert_eq!(i.sides[1].id, "russian");

        let sq = unit(&i, "ge-sq1");
        assert_eq!(
            (sq.ratings.as_str(), sq.hex.as_deref()),
            ("4-6-7", Some("2B4"))
        );
        // Its piece names its half-squad (A7.302); the Russian 6-2-8's piece does not, and the
        // table's is taken (`board::half_squads`).
        assert_eq!(sq.half_squad.as_deref(), Some("2-4-7"));
        assert_eq!(unit(&i, "ru-sq2").half_squad.as_deref(), Some("3-2-8"));
        assert!(!sq.concealed && !sq.hidden);
        let ldr = unit(&i, "ge-ldr1");
        assert_eq!(
            (ldr.ratings.as_str(), ldr.hex.as_deref()),
            ("9-1", Some("2C5"))
        );
        assert!(ldr.concealed, "the ? above it conceals it");
        let ru1 = unit(&i, "ru-sq1");
        assert_eq!(ru1.hex.as_deref(), Some("4E5"), "rotation undone");
        assert!(ru1.hidden);
        let dummy = unit(&i, "ru-dummy1");
        assert_eq!(dummy.kind, UnitKind::Dummy);
        assert_eq!(dummy.hex.as_deref(), Some("4I3"));
        let ru2 = unit(&i, "ru-sq2");
        assert_eq!((ru2.ratings.as_str(), ru2.hex.as_deref()), ("6-2-8", None));

        let lmg = i.weapons.iter().find(|w| w.name == "LMG").unwrap();
        assert_eq!(lmg.held_by.as_deref(), Some("ge-sq1"));
        let mmg = i.weapons.iter().find(|w| w.name == "MMG").unwrap();
        assert_eq!(mmg.held_by.as_deref(), Some("ru-sq2"));

        let everything = i.report_text(None, str::to_string);
        assert!(
            everything.contains("Game Turn x1: off board"),
            "{everything}"
        );
        // Vehicles and Guns come in as counters the engine does not rule on: nothing on the
        // card is dropped.
        let tank = unit(&i, "ge-veh1");
        assert_eq!(tank.kind, UnitKind::Counter);
        assert_eq!(
            (tank.ratings.as_str(), tank.hex.as_deref()),
            ("PzKw IVH", Some("2J6"))
        );
        let t34 = unit(&i, "ru-veh1");
        assert!(t34.hidden);
        assert_eq!(t34.hex.as_deref(), Some("4L6"));
        let gun = unit(&i, "ru-gun1");
        assert!(gun.concealed, "the \"?\" above it conceals it");
        assert_eq!(gun.ratings, "45LL AT");
        assert!(!everything.contains("vehicle PzKw IVH"), "{everything}");
        assert!(
            everything.contains("ge-veh1: PzKw IVH, 2J6"),
            "{everything}"
        );
        assert!(everything.contains("marker EC x1"), "{everything}");
        assert!(
            everything.contains("MMG ru-mmg1 had no unit beneath it"),
            "{everything}"
        );
        // The file has no room for the VASL name each unit was read from: the report has.
        assert!(
            everything.contains("\n  ge-sq1: 4-6-7 1sq, 2B4\n"),
            "{everything}"
        );
        assert!(
            everything.contains("\n  ru-sq2: 6-2-8 Esq, off board\n"),
            "{everything}"
        );
    }

    #[test]
    fn a_side_reads_only_what_it_may_know_of_the_other() {
        let i = import(&scenario_save().game()).unwrap();
        let german = i.report_text(Some(0), str::to_string);
        assert!(!german.contains("T-34"), "a hidden Russian tank: {german}");
        assert!(
            !german.contains("45LL"),
            "a concealed Russian Gun: {german}"
        );
        assert!(!german.contains("ru-gun1"), "{german}");
        assert!(german.contains("PzKw IVH"));
        assert!(
            german.contains("Imported: 4 units this side may know of"),
            "neither the hidden Russian squad and tank, the concealed Gun nor the Dummy is counted: {german}"
        );
        assert!(
            !german.contains("ru-sq1"),
            "the hidden Russian squad is not listed: {german}"
        );
        assert!(german.contains("  ge-ldr1: 9-1, 2C5"), "{german}");
        let russian = i.report_text(Some(1), str::to_string);
        assert!(russian.contains("T-34"));
        assert!(russian.contains("ru-gun1: 45LL AT, 4G7"), "{russian}");
        assert!(
            russian.contains("Imported: 7 units this side may know of"),
            "the concealed German leader is not counted: {russian}"
        );
        assert!(i
            .report_text(None, str::to_string)
            .contains("Imported: 8 units ("));
    }

    #[test]
    fn the_file_says_it_all_in_the_scenario_format() {
        let i = import(&scenario_save().game()).unwrap();
        let text = i.to_toml(&FileOptions {
            name: "Test \"quoted\"".into(),
            turns: 5,
        });
        let file: toml::Table = text.parse().unwrap();
        assert_eq!(file["name"].as_str(), Some("Test \"quoted\""));
        assert_eq!(file["turns"].as_integer(), Some(5));
        assert_eq!(file["first"].as_str(), Some("german"));
        let boards = file["map"]["boards"].as_array().unwrap();
        assert_eq!(boards[0].as_array().unwrap()[1].as_str(), Some("4r"));
        let units = file["units"].as_array().unwrap();
        assert_eq!(units.len(), 8);
        let tank = units
            .iter()
            .find(|u| u["id"].as_str() == Some("ge-veh1"))
            .unwrap();
        assert_eq!(tank["kind"].as_str(), Some("counter"));
        assert_eq!(tank["ratings"].as_str(), Some("PzKw IVH"));
        let ldr = units
            .iter()
            .find(|u| u["id"].as_str() == Some("ge-ldr1"))
            .unwrap();
        assert_eq!(ldr["kind"].as_str(), Some("leader"));
        assert_eq!(ldr["ratings"].as_str(), Some("9-1"));
        assert_eq!(ldr["hex"].as_str(), Some("2C5"));
        assert_eq!(ldr["concealed"].as_bool(), Some(true));
        let off = units
            .iter()
            .find(|u| u["id"].as_str() == Some("ru-sq2"))
            .unwrap();
        assert_eq!(off["offboard"].as_bool(), Some(true));
        assert!(off.get("hex").is_none());
        let hidden = units
            .iter()
            .find(|u| u["id"].as_str() == Some("ru-sq1"))
            .unwrap();
        assert_eq!(hidden["hidden"].as_bool(), Some(true));
        assert_eq!(hidden["half_squad"].as_str(), Some("2-3-7"));
        let squad = units
            .iter()
            .find(|u| u["id"].as_str() == Some("ge-sq1"))
            .unwrap();
        assert_eq!(squad["half_squad"].as_str(), Some("2-4-7"));
        let weapons = file["weapons"].as_array().unwrap();
        let lmg = weapons
            .iter()
            .find(|w| w["name"].as_str() == Some("LMG"))
            .unwrap();
        assert_eq!(lmg["held_by"].as_str(), Some("ge-sq1"));
        assert_eq!(lmg["pp"].as_integer(), Some(1));
    }

    /// A Phase Track as VASL's: its counter named by who moves first, in the map's margin.
    fn phase_track(s: &mut Save, id: &str, first: &str) {
        let name = format!("piece;;D;tables/turn_phase;Phase Track {first} 1st");
        s.piece(
            id,
            &[("submenu;Replace;Reset,Axis 1st", ""), (name.as_str(), "")],
            (330, 362),
        );
    }

    #[test]
    fn the_side_the_phase_track_shows_first_moves_first() {
        let file = |i: &Imported| -> toml::Table {
            i.to_toml(&FileOptions {
                name: "t".into(),
                turns: 5,
            })
            .parse()
            .unwrap()
        };
        let options = FileOptions {
            name: "t".into(),
            turns: 5,
        };
        // Allied 1st: the Russian, listed after the German, moves first; who sets up first
        // stays as the file assumes it without a Phase Track (the side listed second).
        let mut s = scenario_save();
        phase_track(&mut s, "phase", "Allied");
        let i = import(&s.game()).unwrap();
        assert!(i.first_on_phase_track);
        assert_eq!(i.sides[i.first].id, "russian");
        let f = file(&i);
        assert_eq!(f["first"].as_str(), Some("russian"));
        let order = f["setup"]["order"].as_array().unwrap();
        assert_eq!(order[0].as_str(), Some("russian"));
        assert!(i
            .to_toml(&options)
            .contains("read off the save's Phase Track"));
        assert!(i
            .assumptions(&options)
            .iter()
            .any(|a| a.starts_with("the Russian moves first, as the save's Phase Track shows")));
        // The marker is still a marker the game keeps, not a counter left out.
        assert!(i
            .report
            .iter()
            .any(|e| e.category == Category::KeptByTheGame
                && e.what.contains("Phase Track Allied 1st")));

        // Axis 1st: the German.
        let mut s = scenario_save();
        phase_track(&mut s, "phase", "Axis");
        let i = import(&s.game()).unwrap();
        assert!(i.first_on_phase_track);
        assert_eq!(file(&i)["first"].as_str(), Some("german"));

        // No Phase Track, or two that disagree: the armies' order, said to be assumed.
        for tracks in [&[][..], &["Axis", "Allied"][..]] {
            let mut s = scenario_save();
            for (n, first) in tracks.iter().enumerate() {
                phase_track(&mut s, &format!("phase{n}"), first);
            }
            let i = import(&s.game()).unwrap();
            assert!(!i.first_on_phase_track, "{tracks:?}");
            assert_eq!(file(&i)["first"].as_str(), Some("german"));
            assert!(i
                .to_toml(&options)
                .contains("the first side listed is assumed"));
        }
    }

    #[test]
    fn broken_squads_and_more_than_two_armies() {
        let mut s = Save(vec![LAYOUT.to_string()]);
        s.piece(
            "ge",
            &[
                GE,
                ("emb2;;2;F;;2;E;;2;Q;;;0;false;0;0;ge/ges8b;broken +;false;BRK;;;false;;1;1;false;70,130", "1"),
                (SQUAD_ELR, "1"),
                ("piece;K;D; ;4-6-8 Esq", ""),
            ],
            at(0, 4, 4),
        );
        s.piece(
            "it",
            &[
                ("conceal;C;it/itqmark;it;;", "null;"),
                ("piece;K;D;it/it346S;3-4-6 2sq", ""),
            ],
            at(0, 5, 4),
        );
        s.piece(
            "br",
            &[
                ("conceal;C;br/brqmark;br;;", "null;"),
                ("piece;K;D;br/br458S;4-5-8 Esq", ""),
            ],
            at(0, 6, 4),
        );
        let i = import(&s.game()).unwrap();
        assert_eq!(i.sides[0].id, "axis");
        assert_eq!(i.sides[1].id, "allied");
        let ge = unit(&i, "ge-sq1");
        assert_eq!(ge.morale, Morale::Broken);
        assert_eq!(ge.ratings, "4-6-8");
        assert_eq!(unit(&i, "it-sq1").side, 0);
        assert_eq!(unit(&i, "br-sq1").side, 1);
        assert!(i
            .to_toml(&FileOptions {
                name: "x".into(),
                turns: 1
            })
            .contains("morale = \"broken\""));
    }

    /// Issue 50: a stack record naming one piece five times made five squads. A piece is
    /// imported once, whether a stack names it again, another stack does, or the save
    /// defines it twice; each repeat is a warning, secret where the piece is.
    #[test]
    fn a_piece_the_save_names_again_is_imported_once_and_reported() {
        let mut s = Save(vec![LAYOUT.to_string()]);
        let b4 = at(0, 2, 4);
        s.piece("sq", &[GE, ("piece;K;D;ge/ge467S;4-6-7 1sq", "")], b4);
        s.stack("s1", b4, &["sq", "sq", "sq", "sq", "sq"]);
        s.stack("s2", b4, &["sq"]);
        let e5 = at(1, 5, 5);
        for _ in 0..2 {
            s.piece(
                "ru",
                &[RU_HIDDEN, RU, ("piece;K;D;ru/ru447S;4-4-7 1sq", "")],
                e5,
            );
        }
        let i = import(&s.game()).unwrap();
        let ids: Vec<&str> = i.units.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["ge-sq1", "ru-sq1"]);
        let everything = i.report_text(None, str::to_string);
        assert!(
            everything.contains(
                "Warnings: pieces the save names more than once, imported once:\n  4-4-7 1sq x1: 4E5\n  4-6-7 1sq x5: 2B4 x5\n"
            ),
            "{everything}"
        );
        assert_eq!(
            i.report
                .iter()
                .filter(|e| e.category == Category::Repeated)
                .count(),
            2,
            "one entry for each piece named again, counting its repeats"
        );
        let german = i.report_text(Some(0), str::to_string);
        assert!(german.contains("4-6-7 1sq x5"), "{german}");
        assert!(
            !german.contains("4-4-7"),
            "the hidden Russian squad's repeat: {german}"
        );
    }

    #[test]
    fn saves_that_cannot_be_a_scenario_say_why() {
        let squad = |layout: &str| {
            let mut s = Save(vec![layout.to_string()]);
            s.piece(
                "sq",
                &[GE, ("piece;K;D;ge/ge467S;4-6-7 1sq", "")],
                (500, 500),
            );
            s.game()
        };
        // The squad on a map with no boards: refused, saying what the save holds.
        assert_eq!(
            import(&squad("NOTES\t")),
            Err(ImportError::NoBoards {
                held: "1 piece: units x1".into()
            })
        );
        assert_eq!(
            import(&squad("bd\t0\t0\tRB\tVER\t1\t")),
            Err(ImportError::UnsupportedBoard("RB".into()))
        );
        assert_eq!(
            import(&squad("bd\t0\t0\t01\tVER\t1\tZOOM\t3.0")),
            Err(ImportError::Magnified("1".into()))
        );
        assert_eq!(
            import(&squad("bd\t0\t0\t01\tbd\t1\t1\t02\t")),
            Err(ImportError::SlotEmpty { column: 1, row: 0 })
        );
        assert_eq!(
            import(&squad("bd\t0\t0\t01\tbd\t0\t0\t02\t")),
            Err(ImportError::SlotTaken { column: 0, row: 0 })
        );
        let mut only_markers = Save(vec![LAYOUT.to_string()]);
        only_markers.piece("turn", &[("piece;;D; ;Game Turn", "")], (1, 1));
        only_markers.piece(
            "label",
            &[
                ("mark;DBCounterType", "global"),
                ("piece;K;D;DO/LabelMe;User-Labeled", ""),
            ],
            (2, 2),
        );
        let refused = import(&only_markers.game()).unwrap_err();
        assert_eq!(
            refused,
            ImportError::NoUnits {
                held:
                    "2 pieces: labels or markers not understood x1, markers the game keeps itself x1"
                        .into()
            }
        );
        assert!(!refused.to_string().contains("see the report"), "{refused}");
    }
}
