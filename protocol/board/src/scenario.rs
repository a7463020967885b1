//! The scenario model: the map, the two sides, the units and support weapons, SSRs, secretly
//! recorded tunnels and the turn count — read from TOML, checked, and refused with the exact
//! field and reason when something is wrong.
//!
//! The checked [`Scenario`] is what a game starts from and is carried whole in the log's first
//! event, so an exported log never depends on a scenario file that may later change.

use super::toml_place::{field_at, place_at, place_of, Place};
use crate::hex::{Hex, Hexside};
pub use crate::model::{
    HexSpec, HexsideSpec, MapSpec, Morale, PlacedBoard, Placement, Road, Side, SideSpec, Ssr,
    Stack, SwRatings, Tunnel, UnitId, UnitKind, UnitSpec, WeaponSpec, MAP_BOARDS_MAX, ROF_MAX,
    STACK_HALF_SQUADS_MAX, STACK_SMC_MAX,
};
use crate::terrain::{Fortification, HexsideFeature, Terrain};
pub use crate::words::{board_word_fault, is_bidi, BOARD_WORD_BYTES_MAX};
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

/// Longest scenario we accept, in Game Turns; published scenarios run far shorter.
pub const TURNS_MAX: u16 = 30;
/// A scenario file's text with its top-level `turns` set to [`TURNS_MAX`]: the longest game
/// the scenario may make. The load generator and the benchmarks play it, so a run spends its
/// time in play rather than in starting games. `None` if the text is not TOML or has no
/// top-level `turns`.
pub fn longest(text: &str) -> Option<String> {
    let mut file: toml::Table = text.parse().ok()?;
    *file.get_mut("turns")? = toml::Value::Integer(TURNS_MAX.into());
    toml::to_string(&file).ok()
}

/// Most hexes a scenario map may hold: four full boards (4 × 33 × 11) with room to spare.
pub const MAP_HEXES_MAX: usize = 2_000;
/// Most units (counters) a scenario may hold.
pub const UNITS_MAX: usize = 500;
/// Largest scenario file we read, in bytes; a bigger one is refused before it is parsed.
pub const SCENARIO_BYTES_MAX: usize = 256 * 1024;

/// The scenario as checked. Maps are ordered so its encoding (and so the state hash) is canonical.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    pub name: String,
    pub sides: [SideSpec; 2],
    /// The side that is ATTACKER in the first Player Turn of each Game Turn.
    pub first: Side,
    pub turns: u16,
    /// Month of the year (1–12), for seasonal terrain such as Grain (B15); 0 = not given.
    pub month: u8,
    pub ssr: Ssr,
    /// Shared between every scenario with the same map that passed through one
    /// [`Interner`]: a server's games on real boards would otherwise each hold a copy of every
    /// hex of every board.
    pub hexes: Arc<BTreeMap<Hex, HexSpec>>,
    pub hexsides: Arc<BTreeMap<Hexside, HexsideSpec>>,
    pub units: BTreeMap<UnitId, UnitSpec>,
    pub weapons: BTreeMap<String, WeaponSpec>,
    /// Secretly recorded tunnels (B8.6): known only to their owner.
    pub tunnels: Vec<Tunnel>,
    /// The map as LOS sees it, built on first need (`LosMap::of`); not part of the data.
    #[serde(skip)]
    pub(crate) los: crate::los::LosCache,
    /// The terrain grids of the real boards of `map`, handed in by the host
    /// (`Boards::attach`); not part of the data.
    #[serde(skip)]
    pub(crate) grids: crate::los::Grids,
    /// The real boards the map is made of (`[map] boards`), each named with its archive's
    /// version and digest; `None` for a hand-typed map. Their hexes are in `hexes`, read off
    /// the boards when the scenario was checked; LOS is traced over their terrain grids.
    #[serde(default)]
    pub map: Option<MapSpec>,
    /// The set-up step before Turn 1 and the units entering later (`[setup]`, units with
    /// `offboard` or `enters`); `None` when every unit starts on the map.
    #[serde(default)]
    pub setup: Option<Box<crate::setup::Setup>>,
}

/// Shares what scenarios on the same map hold alike: their hexes, hexsides and [`LosMap`]s.
/// A host holding many games (the server) keeps one and passes each game's scenario through
/// [`Interner::share`] when it creates or loads the game, so every game on the same boards
/// holds one copy of them. Its own value, never process-wide: the core keeps no state between
/// calls but what its caller hands it. Keyed by a map's encoding; a copy no scenario holds
/// any more is dropped.
///
/// [`LosMap`]: crate::los::LosMap
#[derive(Default)]
pub struct Interner {
    values: Mutex<Values>,
    los: Mutex<Vec<(LosKey, Weak<crate::los::LosMap>)>>,
}

/// Shared values by their type and the hash of their encoding.
type Values = HashMap<(std::any::TypeId, [u8; 32]), Weak<dyn Any + Send + Sync>>;

/// What makes two scenarios' [`crate::los::LosMap`] the same: the same (shared)
/// hexes and hexsides, month, boards and grids.
type LosKey = (
    Weak<BTreeMap<Hex, HexSpec>>,
    Weak<BTreeMap<Hexside, HexsideSpec>>,
    u8,
    Option<MapSpec>,
    Option<Weak<crate::vasl::map::BoardMap>>,
);

impl fmt::Debug for Interner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = self.values.lock().expect("intern table lock").len();
        write!(f, "Interner({values} values)")
    }
}

impl Interner {
    /// The one shared copy of a value equal to `*value`: `value` itself when none is held yet.
    fn shared<T>(&self, value: &Arc<T>) -> Arc<T>
    where
        T: Serialize + Eq + Send + Sync + 'static,
    {
        let key = (
            std::any::TypeId::of::<T>(),
            *blake3::hash(
                &bincode::serde::encode_to_vec(&**value, bincode::config::standard())
                    .expect("a map always encodes"),
            )
            .as_bytes(),
        );
        let mut table = self.values.lock().expect("intern table lock");
        if let Some(shared) = table.get(&key).and_then(Weak::upgrade) {
            if let Ok(shared) = shared.downcast::<T>() {
                if shared == *value {
                    return shared;
                }
            }
        }
        if table.len() >= INTERNED_MAX {
            table.retain(|_, weak| weak.strong_count() > 0);
        }
        let erased: Arc<dyn Any + Send + Sync> = value.clone();
        table.insert(key, Arc::downgrade(&erased));
        value.clone()
    }

    /// `scenario` holding the shared copies of its hexes, hexsides and LOS map (built now if
    /// no scenario held it). Call it after handing in the scenario's grids, if any
    /// (`Boards::attach`): the LOS map is read off them.
    pub fn share(&self, scenario: &mut Scenario) {
        let hexes = self.shared(&scenario.hexes);
        let hexsides = self.shared(&scenario.hexsides);
        if !Arc::ptr_eq(&hexes, &scenario.hexes) || !Arc::ptr_eq(&hexsides, &scenario.hexsides) {
            scenario.hexes = hexes;
            scenario.hexsides = hexsides;
            scenario.los = Default::default();
        }
        let grids = match scenario.grids.0.as_deref() {
            None => None,
            Some(Ok(grids)) => Some(Arc::downgrade(grids)),
            // A map that could not be had is not shared: its reason is the game's own.
            Some(Err(_)) => return,
        };
        let same = |(hexes, sides, month, map, on): &LosKey| {
            hexes
                .upgrade()
                .is_some_and(|h| Arc::ptr_eq(&h, &scenario.hexes))
                && sides
                    .upgrade()
                    .is_some_and(|s| Arc::ptr_eq(&s, &scenario.hexsides))
                && *month == scenario.month
                && *map == scenario.map
                && match (on, &grids) {
                    (None, None) => true,
                    (Some(a), Some(b)) => Weak::ptr_eq(a, b),
                    _ => false,
                }
        };
        let mut maps = self.los.lock().expect("LOS maps lock");
        let found = maps
            .iter()
            .find(|(key, _)| same(key))
            .and_then(|(_, m)| m.upgrade());
        let map = match found {
            Some(map) => map,
            None => {
                let map = Arc::new(crate::los::LosMap::new(scenario));
                maps.retain(|(_, m)| m.strong_count() > 0);
                maps.push((
                    (
                        Arc::downgrade(&scenario.hexes),
                        Arc::downgrade(&scenario.hexsides),
                        scenario.month,
                        scenario.map.clone(),
                        grids,
                    ),
                    Arc::downgrade(&map),
                ));
                map
            }
        };
        scenario.los = crate::los::LosCache::built(map);
    }
}

/// Entries the interner keeps before it sweeps out the ones no scenario holds.
const INTERNED_MAX: usize = 4_096;

impl SwRatings {
    /// Reads a `[[weapons]]` entry's `fp`, `range` and `breakdown`, all three or none, and
    /// its optional `repair` and `rof` numbers with them.
    fn read(
        field: &str,
        fp: Option<u8>,
        range: Option<u8>,
        breakdown: Option<u8>,
        repair: Option<u8>,
        rof: Option<u8>,
    ) -> Result<Option<SwRatings>, ScenarioError> {
        let refuse = |f: &str, why: &str| ScenarioError {
            field: format!("{field}.{f}"),
            reason: why.into(),
            at: None,
        };
        if rof.is_some_and(|r| !(1..=ROF_MAX).contains(&r)) {
            return Err(refuse(
                "rof",
                "a Multiple ROF is compared with one die, 1 to 5 (A9.2); a weapon without one is given none",
            ));
        }
        if repair.is_some_and(|r| !(1..=5).contains(&r)) {
            return Err(refuse(
                "repair",
                "a repair number is a dr that repairs, 1 to 5: a 6 eliminates the weapon (A9.72)",
            ));
        }
        match (fp, range, breakdown) {
            (None, None, None) if repair.is_none() && rof.is_none() => Ok(None),
            (Some(fp), Some(range), Some(breakdown)) => {
                if fp == 0 {
                    return Err(refuse("fp", "a weapon that fires has 1 FP or more (A9.1)"));
                }
                if range == 0 {
                    return Err(refuse(
                        "range",
                        "a weapon's normal range is 1 hex or more (A9.1)",
                    ));
                }
                if !(2..=12).contains(&breakdown) {
                    return Err(refuse(
                        "breakdown",
                        "a Breakdown Number is an Original DR, 2 to 12 (A9.7)",
                    ));
                }
                Ok(Some(SwRatings {
                    fp,
                    range,
                    breakdown,
                    repair,
                    rof,
                }))
            }
            _ => Err(ScenarioError {
                field: field.into(),
                reason:
                    "give a weapon's fp, range and breakdown together (and repair and rof only with them), or none of them (A9.1, A9.2, A9.7)"
                        .into(),
                at: None,
            }),
        }
    }
}

/// Why a scenario was refused: the field (as a path into the file), the reason, and where
/// the field is written in the file, when it could be found there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("scenario field `{field}`: {reason}")]
pub struct ScenarioError {
    pub field: String,
    pub reason: String,
    pub at: Option<Place>,
}

impl ScenarioError {
    /// Finds where the field is written in `text` (the file the scenario was read from).
    pub fn located(mut self, text: &str) -> ScenarioError {
        if self.at.is_none() {
            self.at = place_of(text, &self.field);
        }
        self
    }

    /// `FILE:LINE:COLUMN: scenario field `F`: REASON`, as compilers point into files; without
    /// a place, `FILE: …`.
    pub fn in_file(&self, file: &str) -> String {
        match self.at {
            Some(Place { line, column }) => format!("{file}:{line}:{column}: {self}"),
            None => format!("{file}: {self}"),
        }
    }
}

/// A scenario refused at `field` for `reason`: public, as the rules' setup checks (above the
/// board) refuse a scenario file in the same words.
pub fn refuse(field: impl Into<String>, reason: impl fmt::Display) -> ScenarioError {
    ScenarioError {
        field: field.into(),
        reason: reason.to_string(),
        at: None,
    }
}

// ---- the file format -------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(default)]
    map: Option<MapFile>,
    turns: u16,
    #[serde(default)]
    month: u8,
    first: String,
    sides: Vec<SideSpec>,
    #[serde(default)]
    ssr: Ssr,
    #[serde(default)]
    area: Vec<AreaFile>,
    #[serde(default)]
    hexes: Vec<HexFile>,
    #[serde(default)]
    hexsides: Vec<HexsideFile>,
    #[serde(default)]
    units: Vec<UnitFile>,
    #[serde(default)]
    weapons: Vec<WeaponFile>,
    #[serde(default)]
    tunnels: Vec<TunnelFile>,
    /// `[clock]`: the game's time control, read by [`Scenario::time_control_in`]; not part of
    /// the scenario itself (its encoding, and so every game's state hash, stays as it was).
    #[serde(default)]
    clock: Option<ClockFile>,
    #[serde(default)]
    setup: Option<SetupFile>,
}

/// `[setup]`: who sets up first, and where each side may set up.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupFile {
    /// Side ids in the order they set up (the scenario card says who sets up first).
    order: Vec<String>,
    #[serde(default)]
    areas: Vec<SetupAreaFile>,
}

/// One `[[setup.areas]]`: hexes a side may set up in, as a card says it — a whole board,
/// hexrows of it (`hexrows = "A-E"`), hex numbers (`numbers = "1-4"`), and/or listed hexes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupAreaFile {
    side: String,
    #[serde(default)]
    board: Option<String>,
    #[serde(default)]
    hexrows: Option<String>,
    #[serde(default)]
    numbers: Option<String>,
    #[serde(default)]
    hexes: Vec<String>,
}

/// `enters = { turn = 2, edge = "west" }` on a unit.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntersFile {
    turn: u16,
    edge: crate::setup::Edge,
}

/// `[clock]`: `control = "live:30m+30s"` or `"correspondence:12h/5d"`, and for
/// correspondence play `vacation = "10d"` (`docs/clock.md`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockFile {
    control: String,
    #[serde(default)]
    vacation: Option<String>,
}

impl ClockFile {
    fn time_control(&self) -> Result<crate::time_control::TimeControl, ScenarioError> {
        use crate::time_control::{parse_duration, TimeControl};
        let mut control =
            TimeControl::parse(&self.control).map_err(|e| refuse("clock.control", e))?;
        if let Some(days) = &self.vacation {
            let days = parse_duration(days).map_err(|e| refuse("clock.vacation", e))?;
            match &mut control {
                TimeControl::Correspondence { vacation, .. } if *vacation == 0 => *vacation = days,
                TimeControl::Correspondence { .. } => {
                    return Err(refuse(
                        "clock.vacation",
                        "vacation is given twice: in `control` and in `vacation`",
                    ))
                }
                TimeControl::Live { .. } => {
                    return Err(refuse(
                        "clock.vacation",
                        "vacation days are for correspondence play; a live clock has none",
                    ))
                }
            }
            control = TimeControl::parse(&control.to_string())
                .map_err(|e| refuse("clock.vacation", e))?;
        }
        Ok(control)
    }
}

/// `[map]`: the real boards the scenario is played on.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapFile {
    /// Rows north to south of boards west to east, as VASL names them (`"2r"`: turned 180°).
    boards: Vec<Vec<String>>,
}

/// A rectangle of hexes with the same terrain: a quick way to lay down a board section.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AreaFile {
    from: String,
    to: String,
    terrain: Terrain,
    #[serde(default)]
    elevation: i8,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HexFile {
    hex: String,
    terrain: Terrain,
    #[serde(default)]
    elevation: i8,
    #[serde(default)]
    road: Option<Road>,
    #[serde(default)]
    manhole: bool,
    #[serde(default)]
    obstacle_touches: Option<Vec<String>>,
    #[serde(default)]
    fortifications: Vec<Fortification>,
    #[serde(default)]
    rubble: bool,
    #[serde(default)]
    blaze: bool,
    #[serde(default)]
    sewer_rubble: bool,
    #[serde(default)]
    water_obstacle: bool,
    /// Obstacle height in levels (halves allowed), for buildings of more than one storey.
    #[serde(default)]
    height: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HexsideFile {
    hexside: String,
    #[serde(default)]
    feature: Option<HexsideFeature>,
    #[serde(default)]
    road: bool,
    #[serde(default)]
    touches_obstacle: bool,
    #[serde(default)]
    breach: bool,
    #[serde(default)]
    roadblock: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UnitFile {
    id: String,
    side: String,
    kind: UnitKind,
    #[serde(default)]
    ratings: String,
    /// Where it starts; left out for a unit `offboard` (set up before Turn 1) or `enters`.
    #[serde(default)]
    hex: Option<String>,
    /// Off the boards at the start: its side sets it up in the set-up step.
    #[serde(default)]
    offboard: bool,
    /// Enters later from an edge (A2.51) instead of setting up.
    #[serde(default)]
    enters: Option<EntersFile>,
    #[serde(default)]
    morale: Morale,
    #[serde(default)]
    pinned: bool,
    /// Starts under Desperation Morale (A10.62): only a broken unit.
    #[serde(default)]
    dm: bool,
    #[serde(default)]
    cx: bool,
    #[serde(default)]
    concealed: bool,
    #[serde(default)]
    hidden: bool,
    #[serde(default)]
    inexperienced: bool,
    /// The squad's FP is underlined on its counter: Assault Fire (A7.36).
    #[serde(default)]
    assault_fire: bool,
    #[serde(default)]
    mp: u16,
    #[serde(default)]
    fully_tracked: bool,
    #[serde(default)]
    wall_advantage: bool,
    #[serde(default)]
    entrenched: bool,
    #[serde(default)]
    in_pillbox: bool,
    #[serde(default)]
    above_wire: bool,
    #[serde(default)]
    on_bridge: bool,
    #[serde(default)]
    column: bool,
    /// Level of the unit's Location (halves allowed, e.g. 1.5 on a rooftop).
    #[serde(default)]
    level: Option<f64>,
    /// A squad's half-squad as its counter names it (`half_squad = "2-4-7"`, A7.302).
    #[serde(default)]
    half_squad: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WeaponFile {
    id: String,
    name: String,
    pp: u8,
    #[serde(default)]
    held_by: Option<String>,
    #[serde(default)]
    hex: Option<String>,
    /// The side whose set-up it belongs to, given to one of its units as it sets it up.
    #[serde(default)]
    side: Option<String>,
    /// FP, normal range and Breakdown Number as the counter prints them (A9.1, A9.7).
    #[serde(default)]
    fp: Option<u8>,
    #[serde(default)]
    range: Option<u8>,
    #[serde(default)]
    breakdown: Option<u8>,
    /// The repair dr that repairs it (A9.72), if the scenario gives one.
    #[serde(default)]
    repair: Option<u8>,
    /// Its Multiple ROF (A9.2), if the scenario gives one.
    #[serde(default)]
    rof: Option<u8>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TunnelFile {
    side: String,
    entrances: [String; 2],
}

impl Scenario {
    /// Whether the words this scenario shows both players (its name, its sides' names, its
    /// weapons' names, its units' and weapons' ids) are ones a scenario file may give
    /// ([`check_shown_words`], [`check_counter_name`], [`check_id`]). A checked scenario's are; a client holds a scenario a server
    /// or an export sent it to the same, since it prints them in a terminal.
    pub fn check_words(&self) -> Result<(), ScenarioError> {
        check_shown_words(
            "name",
            "a scenario's name",
            &self.name,
            SCENARIO_NAME_BYTES_MAX,
        )?;
        for (i, s) in self.sides.iter().enumerate() {
            check_shown_words(
                &format!("sides[{i}].name"),
                "a side's name",
                &s.name,
                SIDE_NAME_BYTES_MAX,
            )?;
        }
        let offboard = self.setup.iter().flat_map(|s| s.weapons.values());
        for (id, name) in self
            .weapons
            .values()
            .map(|w| (&w.id, &w.name))
            .chain(offboard.map(|w| (&w.id, &w.name)))
        {
            check_id("weapons.id", id)?;
            check_counter_name(&format!("weapon {id}"), name)?;
        }
        // Words a board archive or terrain codes file gave the scenario (`read_map`): each
        // board's version and the names of terrain the engine does not model. Read through
        // `board_word_fault` when the file was read; held again here for a scenario that came
        // by another road (a stream, an export, a game stored before that check).
        let board_word = |field: String, text: &str| match board_word_fault(text) {
            Some(why) => Err(refuse(field, why)),
            None => Ok(()),
        };
        for board in self.map.iter().flat_map(|m| m.rows.iter().flatten()) {
            board_word(format!("map board {} version", board.board), &board.version)?;
        }
        for (hex, spec) in self.hexes.iter() {
            if let Some(name) = &spec.unmodelled {
                board_word(format!("hex {hex} terrain"), name)?;
            }
        }
        for (side, spec) in self.hexsides.iter() {
            if let Some(name) = &spec.unmodelled {
                board_word(format!("hexside {side} terrain"), name)?;
            }
        }
        // Every unit's id, as a file gives it or, for a unit under "?" in a viewer's copy, as
        // its alias (`?` and a number).
        let offboard = self.setup.iter().flat_map(|s| s.units.keys());
        for id in self.units.keys().chain(offboard) {
            let alias = id
                .strip_prefix('?')
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
            if !alias {
                check_id("units.id", id)?;
            }
        }
        Ok(())
    }

    /// Hands in the grids of the scenario's real boards, or why they cannot be had
    /// (`Boards::attach`); the LOS map is built afresh from them on the next question.
    pub(crate) fn set_grids(
        &mut self,
        grids: Result<Arc<crate::vasl::map::BoardMap>, crate::vasl::library::BoardError>,
    ) {
        self.grids = crate::los::Grids(Some(Arc::new(grids)));
        self.los = Default::default();
    }

    /// Reads a scenario file's text and checks everything the board can check on its own.
    /// `ReadScenario::from_toml`, in the rules layer (`protocol::rules::wall_advantage`), adds
    /// the setup checks that need the rules, such as Wall Advantage claimed at setup
    /// (B9.32–B9.35).
    #[cfg(test)]
    pub(crate) fn read_toml(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::read_toml_on(text, None)
    }

    /// As [`Scenario::read_toml`], with the boards a `[map]` may name. Public for the rules'
    /// reading of a scenario file (`ReadScenario`), which starts here.
    pub fn read_toml_on(
        text: &str,
        boards: Option<&crate::vasl::library::Boards>,
    ) -> Result<Scenario, ScenarioError> {
        if text.len() > SCENARIO_BYTES_MAX {
            return Err(refuse(
                "(file)",
                format!(
                    "{} bytes is over the {SCENARIO_BYTES_MAX}-byte limit",
                    text.len()
                ),
            ));
        }
        let file: File = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            let start = e.span().map(|s| s.start);
            ScenarioError {
                field: start
                    .and_then(|s| field_at(text, s))
                    .unwrap_or_else(|| "(file)".into()),
                reason: message,
                at: start.map(|s| place_at(text, s)),
            }
        })?;
        file.check(boards).map_err(|e| e.located(text))
    }

    pub fn side(&self, side: Side) -> &SideSpec {
        &self.sides[side as usize]
    }

    /// The time control a scenario file's `[clock]` table chooses, `None` without one (no
    /// clock: the default). The rest of the file is read by [`Scenario::from_toml`].
    pub fn time_control_in(
        text: &str,
    ) -> Result<Option<crate::time_control::TimeControl>, ScenarioError> {
        #[derive(Deserialize)]
        struct ClockOnly {
            #[serde(default)]
            clock: Option<ClockFile>,
        }
        if text.len() > SCENARIO_BYTES_MAX {
            return Err(refuse("(file)", "over the scenario size limit"));
        }
        let file: ClockOnly =
            toml::from_str(text).map_err(|e| refuse("clock", e.message().trim()))?;
        file.clock
            .map(|c| c.time_control())
            .transpose()
            .map_err(|e| e.located(text))
    }

    /// The scenario file `text` played under `control` instead of its own `[clock]` (if it
    /// has one): its `[clock]` table is taken out and `control` written at its end.
    pub fn with_time_control(
        text: &str,
        control: &crate::time_control::TimeControl,
    ) -> Result<String, ScenarioError> {
        if text.len() > SCENARIO_BYTES_MAX {
            return Err(refuse("(file)", "over the scenario size limit"));
        }
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| refuse("(file)", e.message().trim()))?;
        let mut text = text.to_string();
        if table.remove("clock").is_some() {
            text = toml::to_string(&table).map_err(|e| refuse("(file)", e.to_string()))?;
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("\n[clock]\ncontrol = \"{control}\"\n"));
        Ok(text)
    }

    /// Adjacency, direction and range over the scenario's whole map, across the seams of its
    /// boards ([`crate::geometry`]); a hand-typed map's hexes answer for themselves.
    pub fn geometry(&self) -> crate::geometry::Geometry<'_> {
        crate::geometry::Geometry::of_map(self.map.as_ref())
    }

    /// Finds a side by its id or name, case-insensitively (`german`, `German`), or `a`/`b`.
    pub fn side_named(&self, name: &str) -> Option<Side> {
        Side::BOTH.into_iter().find(|s| {
            let spec = self.side(*s);
            spec.id.eq_ignore_ascii_case(name)
                || spec.name.eq_ignore_ascii_case(name)
                || format!("{s:?}").eq_ignore_ascii_case(name)
        })
    }

    pub fn hexside_spec(&self, side: Hexside) -> Option<&HexsideSpec> {
        self.hexsides.get(&side)
    }

    /// The wall/hedge/bocage on a hexside, with the bocage SSR applied (B9.5).
    pub fn hexside_feature(&self, side: Hexside) -> Option<HexsideFeature> {
        self.hexsides
            .get(&side)?
            .feature_with(self.ssr.hedges_are_bocage)
    }

    /// What LOS builds this scenario's map from.
    fn map_parts(&self) -> crate::los::MapParts<'_> {
        crate::los::MapParts {
            hexes: &self.hexes,
            hexsides: &self.hexsides,
            hedges_are_bocage: self.ssr.hedges_are_bocage,
            month: self.month,
            map: self.map.as_ref(),
            grids: &self.grids,
            geometry: self.geometry(),
        }
    }
}

impl crate::los::LosMap {
    /// The scenario's map, built once on first need ([`crate::los::LosCache`]) and shared with
    /// every clone and projection of the scenario.
    pub fn of(scenario: &Scenario) -> &crate::los::LosMap {
        scenario
            .los
            .0
            .get_or_init(|| Arc::new(crate::los::LosMap::new(scenario)))
    }

    /// Builds the map afresh (what [`crate::los::LosMap::of`] does once per scenario).
    pub fn new(scenario: &Scenario) -> crate::los::LosMap {
        crate::los::LosMap::build(scenario.map_parts())
    }
}

impl crate::vasl::library::Boards {
    /// Hands `scenario` the grids of its real boards ([`crate::vasl::library::Boards::map`]),
    /// or the reason they cannot be had, which LOS on its map then answers with. The host
    /// calls this for a game's scenario when it creates or loads the game: the core looks for
    /// no board itself. A scenario on a hand-typed map is left as it is.
    pub fn attach(&self, scenario: &mut Scenario) {
        if let Some(spec) = &scenario.map {
            let grids = self.map(spec);
            scenario.set_grids(grids);
        }
    }
}

fn parse_hex(field: &str, text: &str) -> Result<Hex, ScenarioError> {
    text.parse().map_err(|e| refuse(field, e))
}

impl File {
    fn side(&self, field: &str, name: &str) -> Result<Side, ScenarioError> {
        self.sides
            .iter()
            .position(|s| s.id.eq_ignore_ascii_case(name))
            .map(|i| if i == 0 { Side::A } else { Side::B })
            .ok_or_else(|| {
                refuse(
                    field,
                    format!(
                        "`{name}` is not a side; the sides are {}",
                        self.sides
                            .iter()
                            .map(|s| s.id.as_str())
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                )
            })
    }

    fn check(
        self,
        boards: Option<&crate::vasl::library::Boards>,
    ) -> Result<Scenario, ScenarioError> {
        if self.name.trim().is_empty() {
            return Err(refuse("name", "must not be empty"));
        }
        check_shown_words(
            "name",
            "a scenario's name",
            &self.name,
            SCENARIO_NAME_BYTES_MAX,
        )?;
        if self.turns == 0 || self.turns > TURNS_MAX {
            return Err(refuse("turns", format!("must be 1 to {TURNS_MAX}")));
        }
        if self.month > 12 {
            return Err(refuse("month", "must be 1 to 12 (or left out)"));
        }
        if let Some(clock) = &self.clock {
            clock.time_control()?;
        }
        let sides: [SideSpec; 2] = match self.sides.as_slice() {
            [a, b] => [a.clone(), b.clone()],
            _ => return Err(refuse("sides", "a scenario has exactly two sides")),
        };
        for (i, s) in sides.iter().enumerate() {
            let ok = !s.id.is_empty()
                && s.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !ok {
                return Err(refuse(
                    format!("sides[{i}].id"),
                    "must be a non-empty word of letters, digits, - or _",
                ));
            }
            if s.name.trim().is_empty() {
                return Err(refuse(
                    format!("sides[{i}].name"),
                    "a side is shown to the players by its name",
                ));
            }
            check_shown_words(
                &format!("sides[{i}].name"),
                "a side's name",
                &s.name,
                SIDE_NAME_BYTES_MAX,
            )?;
            if let Some(n) = &s.nationality {
                if !crate::half_squads::NATIONALITIES.contains(&n.as_str()) {
                    return Err(refuse(
                        format!("sides[{i}].nationality"),
                        format!(
                            "`{n}` is not a nationality whose half-squads the engine knows ({}); leave it out and give each squad its `half_squad`",
                            crate::half_squads::NATIONALITIES.join(", ")
                        ),
                    ));
                }
            }
        }
        if sides[0].id.eq_ignore_ascii_case(&sides[1].id) {
            return Err(refuse("sides[1].id", "the two sides need different ids"));
        }
        let first = self.side("first", &self.first)?;

        let mut hexes: BTreeMap<Hex, HexSpec> = BTreeMap::new();
        let mut board_sides: BTreeMap<Hexside, HexsideSpec> = BTreeMap::new();
        let map = match &self.map {
            None => None,
            Some(file) => Some(read_map(file, boards, &mut hexes, &mut board_sides)?),
        };
        // On a map, a seam hex's two names are one hex: everything is kept under the map's.
        let geometry = crate::geometry::Geometry::of_map(map.as_ref());
        let parse_hex =
            |field: &str, text: &str| parse_hex(field, text).map(|h| geometry.canonical(h));
        for (i, area) in self.area.iter().enumerate() {
            let field = format!("area[{i}]");
            // The corners as written: an area is a rectangle of one board's names.
            let from = self::parse_hex(&format!("{field}.from"), &area.from)?;
            let to = self::parse_hex(&format!("{field}.to"), &area.to)?;
            if from.board != to.board {
                return Err(refuse(field, "an area lies on one board"));
            }
            let (c0, c1) = (from.column.min(to.column), from.column.max(to.column));
            let (r0, r1) = (from.row.min(to.row), from.row.max(to.row));
            for column in c0..=c1 {
                for row in r0..=r1 {
                    hexes.insert(
                        geometry.canonical(Hex::new(from.board, column, row)),
                        HexSpec {
                            terrain: area.terrain,
                            elevation: area.elevation,
                            road: None,
                            manhole: false,
                            obstacle_touches: BTreeSet::new(),
                            fortifications: BTreeSet::new(),
                            rubble: false,
                            blaze: false,
                            sewer_rubble: false,
                            water_obstacle: false,
                            obstacle_inset: false,
                            obstacle_height: None,
                            unmodelled: None,
                        },
                    );
                }
            }
            if hexes.len() > MAP_HEXES_MAX {
                return Err(refuse(field, format!("map over {MAP_HEXES_MAX} hexes")));
            }
        }
        let mut listed = BTreeSet::new();
        for (i, h) in self.hexes.iter().enumerate() {
            let field = format!("hexes[{i}]");
            let hex = parse_hex(&format!("{field}.hex"), &h.hex)?;
            if !listed.insert(hex) {
                return Err(refuse(
                    format!("{field}.hex"),
                    format!("{hex} is listed twice"),
                ));
            }
            let mut touches = BTreeSet::new();
            for (j, t) in h.obstacle_touches.iter().flatten().enumerate() {
                let other = parse_hex(&format!("{field}.obstacle_touches[{j}]"), t)?;
                if !geometry.is_adjacent(hex, other) {
                    return Err(refuse(
                        format!("{field}.obstacle_touches[{j}]"),
                        format!("{other} is not adjacent to {hex}"),
                    ));
                }
                touches.insert(other);
            }
            if h.obstacle_touches.is_some() && !h.terrain.row().bypassable_obstacle {
                return Err(refuse(
                    format!("{field}.obstacle_touches"),
                    format!(
                        "only woods and buildings have an obstacle to touch hexsides (A4.3); {} has none",
                        h.terrain.name()
                    ),
                ));
            }
            let obstacle_height = match h.height {
                None => None,
                Some(levels) => {
                    let halves = levels * 2.0;
                    if h.terrain.row().los.height == 0 {
                        return Err(refuse(
                            format!("{field}.height"),
                            format!("{} is no LOS obstacle to give a height", h.terrain.name()),
                        ));
                    }
                    if halves.fract() != 0.0 || !(1.0..=10.0).contains(&halves) {
                        return Err(refuse(
                            format!("{field}.height"),
                            "an obstacle height runs from 0.5 to 5 levels in half levels",
                        ));
                    }
                    Some(halves as u8)
                }
            };
            if h.elevation.abs() > 10 {
                return Err(refuse(
                    format!("{field}.elevation"),
                    "levels run from -10 to 10",
                ));
            }
            hexes.insert(
                hex,
                HexSpec {
                    terrain: h.terrain,
                    elevation: h.elevation,
                    road: h.road,
                    manhole: h.manhole,
                    obstacle_touches: touches,
                    fortifications: check_fortifications(&field, hex, h)?,
                    rubble: h.rubble,
                    blaze: h.blaze,
                    sewer_rubble: h.sewer_rubble,
                    water_obstacle: h.water_obstacle,
                    obstacle_inset: h.obstacle_touches.is_some(),
                    obstacle_height,
                    unmodelled: None,
                },
            );
        }
        if hexes.is_empty() {
            return Err(refuse(
                "hexes",
                "the map is empty; give [map] boards, [[area]] or [[hexes]]",
            ));
        }
        if hexes.len() > MAP_HEXES_MAX {
            return Err(refuse("hexes", format!("map over {MAP_HEXES_MAX} hexes")));
        }

        let mut hexsides = BTreeMap::new();
        let mut from_boards = board_sides;
        for (i, s) in self.hexsides.iter().enumerate() {
            let field = format!("hexsides[{i}].hexside");
            let side: Hexside = geometry
                .parse_hexside(&s.hexside)
                .map_err(|e| refuse(&field, e))?;
            for hex in [side.a, side.b] {
                if !hexes.contains_key(&hex) {
                    return Err(refuse(&field, format!("{hex} is not on the map")));
                }
            }
            if s.feature.is_none() && !s.road && !s.roadblock {
                return Err(refuse(
                    &field,
                    "a hexside entry needs a feature (wall, hedge, bocage) or road = true",
                ));
            }
            let spec = HexsideSpec {
                feature: s.feature,
                road: s.road,
                touches_obstacle: s.touches_obstacle,
                breach: s.breach,
                roadblock: s.roadblock,
                unmodelled: None,
            };
            if s.roadblock {
                let bridged = [side.a, side.b].iter().any(|h| {
                    hexes
                        .get(h)
                        .is_some_and(|spec| spec.fortifications.contains(&Fortification::Bridge))
                });
                if !bridged {
                    return Err(refuse(
                        format!("hexsides[{i}].roadblock"),
                        "Roadblocks are modelled only where B9.32 names them, at a bridge (a unit on the bridge may claim WA over one); this one is not modelled",
                    ));
                }
            }
            if hexsides.insert(side, spec).is_some() {
                return Err(refuse(&field, format!("{side} is listed twice")));
            }
            // The scenario's own entry replaces what the board shows there.
            from_boards.remove(&side);
        }
        hexsides.extend(from_boards);

        // Units and weapons, on the map or off it, share one namespace: commands name either.
        let mut ids = BTreeSet::new();
        let mut units = BTreeMap::new();
        let mut offboard: BTreeMap<UnitId, crate::setup::OffboardUnit> = BTreeMap::new();
        for (i, u) in self.units.iter().enumerate() {
            let field = format!("units[{i}]");
            check_id(&format!("{field}.id"), &u.id)?;
            let side = self.side(&format!("{field}.side"), &u.side)?;
            check_ratings(&format!("{field}.ratings"), u.kind, &u.ratings)?;
            let off_board = u.offboard || u.enters.is_some();
            if off_board {
                let unit = self.offboard_unit(&field, side, u)?;
                claim_id(&mut ids, &field, &u.id)?;
                offboard.insert(u.id.clone(), unit);
                continue;
            }
            let Some(hex_text) = &u.hex else {
                return Err(refuse(
                    format!("{field}.hex"),
                    "a unit starts in a hex, or off the boards (`offboard = true` to set up, `enters = { turn, edge }` to enter later)",
                ));
            };
            let hex = parse_hex(&format!("{field}.hex"), hex_text)?;
            if !hexes.contains_key(&hex) {
                return Err(refuse(
                    format!("{field}.hex"),
                    format!("{hex} is not on the map"),
                ));
            }
            if u.kind == UnitKind::Vehicle && u.mp == 0 {
                return Err(refuse(format!("{field}.mp"), "a vehicle needs its MP"));
            }
            if u.kind != UnitKind::Vehicle && (u.mp != 0 || u.fully_tracked) {
                return Err(refuse(
                    format!("{field}.mp"),
                    "MP and fully_tracked are for vehicles only",
                ));
            }
            if u.inexperienced && !u.kind.is_mmc() {
                return Err(refuse(
                    format!("{field}.inexperienced"),
                    "only MMC are Inexperienced",
                ));
            }
            check_assault_fire(&field, u)?;
            check_half_squad(&field, u)?;
            if u.dm && u.morale != Morale::Broken {
                return Err(refuse(
                    format!("{field}.dm"),
                    "only a broken unit is under Desperation Morale (A10.62); give it `morale = \"broken\"` or drop `dm`",
                ));
            }
            if u.dm && (u.hidden || u.concealed) {
                return Err(refuse(
                    format!("{field}.dm"),
                    "a unit under Desperation Morale (A10.62) shows its DM counter; it is not hidden or under a ? counter",
                ));
            }
            if u.hidden && u.concealed {
                return Err(refuse(
                    format!("{field}.hidden"),
                    "a hidden unit is not also under a ? counter; choose one",
                ));
            }
            let level = match u.level {
                None => None,
                Some(levels) => {
                    let halves = levels * 2.0;
                    let base = f64::from(hexes[&hex].elevation) * 2.0;
                    if halves.fract() != 0.0 || halves < base || halves > base + 10.0 {
                        return Err(refuse(
                            format!("{field}.level"),
                            "a unit's level is in half levels, at or up to 5 levels above its hex's base level",
                        ));
                    }
                    Some(halves as i16)
                }
            };
            let spec = UnitSpec {
                id: u.id.clone(),
                side,
                kind: u.kind,
                ratings: u.ratings.clone(),
                hex,
                morale: u.morale,
                pinned: u.pinned,
                cx: u.cx,
                concealed: u.concealed,
                hidden: u.hidden,
                inexperienced: u.inexperienced,
                assault_fire: u.assault_fire,
                mp: u.mp,
                fully_tracked: u.fully_tracked,
                wall_advantage: u.wall_advantage,
                placement: Placement {
                    entrenched: u.entrenched,
                    in_pillbox: u.in_pillbox,
                    above_wire: u.above_wire,
                    on_bridge: u.on_bridge,
                    column: u.column,
                },
                level,
                desperation_morale: u.dm,
                half_squad: u.half_squad.clone(),
            };
            check_placement(&field, &spec, &hexes[&hex])?;
            claim_id(&mut ids, &field, &u.id)?;
            units.insert(u.id.clone(), spec);
        }
        if units.len() + offboard.len() > UNITS_MAX {
            return Err(refuse("units", format!("more than {UNITS_MAX} units")));
        }

        let mut weapons = BTreeMap::new();
        let mut offboard_weapons = BTreeMap::new();
        for (i, w) in self.weapons.iter().enumerate() {
            let field = format!("weapons[{i}]");
            check_id(&format!("{field}.id"), &w.id)?;
            check_counter_name(&format!("{field}.name"), &w.name)?;
            if w.pp == 0 || w.pp > 10 {
                return Err(refuse(
                    format!("{field}.pp"),
                    "portage cost runs 1 to 10 PP",
                ));
            }
            let ratings = SwRatings::read(&field, w.fp, w.range, w.breakdown, w.repair, w.rof)?;
            let given = match (&w.held_by, &w.hex, &w.side) {
                (Some(holder), None, None) => offboard.get(holder).map(|unit| {
                    if !unit.kind.is_infantry() {
                        return Err(refuse(
                            format!("{field}.held_by"),
                            "only Infantry possess SW (A4.43)",
                        ));
                    }
                    Ok((unit.side, Some(holder.clone())))
                }),
                (None, None, Some(side)) => {
                    let side = self.side(&format!("{field}.side"), side)?;
                    if !offboard
                        .values()
                        .any(|u| u.side == side && u.enters.is_none() && u.kind.is_infantry())
                    {
                        return Err(refuse(
                            format!("{field}.side"),
                            "a weapon given at set-up needs Infantry of its side that set up (`offboard = true`) to possess it (A4.43)",
                        ));
                    }
                    Some(Ok((side, None)))
                }
                _ => None,
            };
            if let Some(given) = given {
                let (side, held_by) = given?;
                {
                    let spec = crate::setup::OffboardWeapon {
                        id: w.id.clone(),
                        name: w.name.clone(),
                        pp: w.pp,
                        ratings,
                        side,
                        held_by,
                    };
                    claim_id(&mut ids, &field, &w.id)?;
                    offboard_weapons.insert(w.id.clone(), spec);
                    continue;
                }
            }
            let hex = match (&w.held_by, &w.hex, &w.side) {
                (Some(holder), None, None) => {
                    let unit: &UnitSpec = units.get(holder).ok_or_else(|| {
                        refuse(format!("{field}.held_by"), format!("no unit `{holder}`"))
                    })?;
                    if !unit.kind.is_infantry() {
                        return Err(refuse(
                            format!("{field}.held_by"),
                            "only Infantry possess SW (A4.43)",
                        ));
                    }
                    unit.hex
                }
                (None, Some(h), None) => {
                    let hex = parse_hex(&format!("{field}.hex"), h)?;
                    if !hexes.contains_key(&hex) {
                        return Err(refuse(
                            format!("{field}.hex"),
                            format!("{hex} is not on the map"),
                        ));
                    }
                    hex
                }
                _ => {
                    return Err(refuse(
                        field,
                        "give exactly one of held_by (a unit), hex (lying unpossessed) or side (given to a unit of that side as it sets up)",
                    ))
                }
            };
            let spec = WeaponSpec {
                id: w.id.clone(),
                name: w.name.clone(),
                pp: w.pp,
                ratings,
                held_by: w.held_by.clone(),
                hex,
            };
            claim_id(&mut ids, &field, &w.id)?;
            weapons.insert(w.id.clone(), spec);
        }

        let mut tunnels = Vec::new();
        for (i, t) in self.tunnels.iter().enumerate() {
            let field = format!("tunnels[{i}]");
            let side = self.side(&format!("{field}.side"), &t.side)?;
            let a = parse_hex(&format!("{field}.entrances[0]"), &t.entrances[0])?;
            let b = parse_hex(&format!("{field}.entrances[1]"), &t.entrances[1])?;
            let (Some(ha), Some(hb)) = (hexes.get(&a), hexes.get(&b)) else {
                return Err(refuse(
                    format!("{field}.entrances"),
                    "both entrances must be on the map",
                ));
            };
            match geometry.distance(a, b) {
                Some(1..=3) => {}
                _ => {
                    return Err(refuse(
                        format!("{field}.entrances"),
                        "entrances must be separate hexes within three hexes of each other (B8.6)",
                    ))
                }
            }
            if ha.elevation != hb.elevation {
                return Err(refuse(
                    format!("{field}.entrances"),
                    format!(
                        "entrances must be at the same elevation (B8.6); these are at levels {} and {}",
                        ha.elevation, hb.elevation
                    ),
                ));
            }
            if !tunnel_route(geometry, &hexes, a, b, ha.elevation) {
                return Err(refuse(
                    format!("{field}.entrances"),
                    format!(
                        "every way from {a} to {b} passes beneath a hex of another base elevation than level {} or a Water Obstacle, which a tunnel may not (B8.6)",
                        ha.elevation
                    ),
                ));
            }
            for (k, spec) in [ha, hb].into_iter().enumerate() {
                let allowed = matches!(
                    spec.terrain,
                    Terrain::StoneBuilding
                        | Terrain::WoodenBuilding
                        | Terrain::Brush
                        | Terrain::Woods
                );
                if !allowed {
                    return Err(refuse(
                        format!("{field}.entrances[{k}]"),
                        format!(
                            "a tunnel entrance is in a building, brush or woods Location (B8.6), not {}",
                            spec.terrain.name()
                        ),
                    ));
                }
            }
            tunnels.push(Tunnel {
                side,
                entrances: [a, b],
            });
        }

        let setup = self
            .read_setup(&hexes, offboard, offboard_weapons)?
            .map(Box::new);
        let mut scenario = Scenario {
            name: self.name,
            sides,
            first,
            turns: self.turns,
            month: self.month,
            ssr: self.ssr,
            hexes: Arc::new(hexes),
            hexsides: Arc::new(hexsides),
            units,
            weapons,
            tunnels,
            los: Default::default(),
            grids: Default::default(),
            map,
            setup,
        };
        if let Some(boards) = boards {
            boards.attach(&mut scenario);
        }
        Ok(scenario)
    }
}

impl File {
    /// A unit that starts off the boards (`offboard = true` or `enters`): what it is and what
    /// the scenario allows it at set-up. Its `concealed` says its OB gives it a "?" (A12.12),
    /// its `hidden` that an SSR lets it set up HIP (A12.3): choices made when it is placed.
    fn offboard_unit(
        &self,
        field: &str,
        side: Side,
        u: &UnitFile,
    ) -> Result<crate::setup::OffboardUnit, ScenarioError> {
        if u.hex.is_some() {
            return Err(refuse(
                format!("{field}.hex"),
                "a unit off the boards at the start has no hex: give `hex`, or `offboard`/`enters`, not both",
            ));
        }
        if u.offboard && u.enters.is_some() {
            return Err(refuse(
                format!("{field}.enters"),
                "a unit either sets up (`offboard = true`) or enters later (`enters`), not both",
            ));
        }
        let placed_only = [
            (u.wall_advantage, "wall_advantage"),
            (u.entrenched, "entrenched"),
            (u.in_pillbox, "in_pillbox"),
            (u.above_wire, "above_wire"),
            (u.on_bridge, "on_bridge"),
            (u.column, "column"),
            (u.level.is_some(), "level"),
            (u.pinned, "pinned"),
            (u.dm, "dm"),
            (u.cx, "cx"),
        ];
        if let Some((_, name)) = placed_only.iter().find(|(set, _)| *set) {
            return Err(refuse(
                format!("{field}.{name}"),
                "is for a unit that starts in a hex; one off the boards is placed without it",
            ));
        }
        if u.kind == UnitKind::Vehicle {
            return Err(refuse(
                format!("{field}.kind"),
                "a vehicle setting up or entering from off board is not modelled by this engine; give it a hex",
            ));
        }
        if u.mp != 0 || u.fully_tracked {
            return Err(refuse(
                format!("{field}.mp"),
                "MP and fully_tracked are for vehicles only",
            ));
        }
        if u.inexperienced && !u.kind.is_mmc() {
            return Err(refuse(
                format!("{field}.inexperienced"),
                "only MMC are Inexperienced",
            ));
        }
        check_assault_fire(field, u)?;
        check_half_squad(field, u)?;
        let enters = match &u.enters {
            None => None,
            Some(e) => {
                if e.turn == 0 || e.turn > self.turns {
                    return Err(refuse(
                        format!("{field}.enters.turn"),
                        format!(
                            "a unit enters on a Game Turn of the scenario, 1 to {}",
                            self.turns
                        ),
                    ));
                }
                if u.hidden {
                    return Err(refuse(
                        format!("{field}.hidden"),
                        "HIP is a set-up choice (A12.3); a unit entering later does not set up",
                    ));
                }
                if u.kind == UnitKind::Counter {
                    return Err(refuse(
                        format!("{field}.enters"),
                        "a counter the engine does not rule on entering from off board is not modelled; set it up, or give it a hex",
                    ));
                }
                Some(crate::setup::Entry {
                    turn: e.turn,
                    edge: e.edge,
                })
            }
        };
        if u.kind == UnitKind::Dummy && !u.concealed && enters.is_none() {
            return Err(refuse(
                format!("{field}.concealed"),
                "a Dummy is a \"?\" counter (A12.11): give it `concealed = true`",
            ));
        }
        Ok(crate::setup::OffboardUnit {
            id: u.id.clone(),
            side,
            kind: u.kind,
            ratings: u.ratings.clone(),
            morale: u.morale,
            inexperienced: u.inexperienced,
            assault_fire: u.assault_fire,
            mp: u.mp,
            fully_tracked: u.fully_tracked,
            may_conceal: u.concealed,
            may_hide: u.hidden,
            enters,
            half_squad: u.half_squad.clone(),
        })
    }

    /// `[setup]` checked against the units off the boards: every side with units to set up
    /// is in the order and has an area; the areas lie on the map.
    fn read_setup(
        &self,
        hexes: &BTreeMap<Hex, HexSpec>,
        units: BTreeMap<UnitId, crate::setup::OffboardUnit>,
        weapons: BTreeMap<String, crate::setup::OffboardWeapon>,
    ) -> Result<Option<crate::setup::Setup>, ScenarioError> {
        use crate::setup::{hexrow, span, Setup};
        let Some(file) = &self.setup else {
            if let Some(i) = self
                .units
                .iter()
                .position(|u| u.offboard && u.enters.is_none())
            {
                return Err(refuse(
                    format!("units[{i}].offboard"),
                    "the unit sets up before Turn 1, but the scenario has no [setup] saying who sets up first and where (A12.12)",
                ));
            }
            if units.is_empty() {
                return Ok(None);
            }
            return Ok(Some(Setup {
                units,
                weapons,
                ..Setup::default()
            }));
        };
        let mut order = Vec::new();
        for (i, name) in file.order.iter().enumerate() {
            let side = self.side(&format!("setup.order[{i}]"), name)?;
            if order.contains(&side) {
                return Err(refuse(
                    format!("setup.order[{i}]"),
                    format!("`{name}` is named twice"),
                ));
            }
            order.push(side);
        }
        let mut areas: [BTreeSet<Hex>; 2] = Default::default();
        for (i, a) in file.areas.iter().enumerate() {
            let field = format!("setup.areas[{i}]");
            let side = self.side(&format!("{field}.side"), &a.side)?;
            let board = match &a.board {
                None => None,
                Some(b) => Some(b.trim().parse::<u16>().map_err(|_| {
                    refuse(
                        format!("{field}.board"),
                        format!("`{b}` is not a board number"),
                    )
                })?),
            };
            let rows = match &a.hexrows {
                None => None,
                Some(t) => Some(span(t, hexrow).ok_or_else(|| {
                    refuse(
                        format!("{field}.hexrows"),
                        format!("`{t}` is not a hexrow or a span of them, such as A-E"),
                    )
                })?),
            };
            let numbers = match &a.numbers {
                None => None,
                Some(t) => Some(span(t, |n| n.parse::<u16>().ok()).ok_or_else(|| {
                    refuse(
                        format!("{field}.numbers"),
                        format!("`{t}` is not a hex number or a span of them, such as 1-4"),
                    )
                })?),
            };
            let by_region = board.is_some() || rows.is_some() || numbers.is_some();
            if !by_region && a.hexes.is_empty() {
                return Err(refuse(
                    field,
                    "an area names a board, hexrows, numbers or hexes",
                ));
            }
            let before = areas[side as usize].len();
            if by_region {
                let within = |v: u16, span: Option<(u16, u16)>| {
                    span.is_none_or(|(lo, hi)| (lo..=hi).contains(&v))
                };
                areas[side as usize].extend(hexes.keys().copied().filter(|h| {
                    board.is_none_or(|b| h.board == Some(b))
                        && within(h.column, rows)
                        && within(h.row, numbers)
                }));
                if areas[side as usize].len() == before {
                    return Err(refuse(field, "holds no hex of the map"));
                }
            }
            for (j, text) in a.hexes.iter().enumerate() {
                let hex = parse_hex(&format!("{field}.hexes[{j}]"), text)?;
                if !hexes.contains_key(&hex) {
                    return Err(refuse(
                        format!("{field}.hexes[{j}]"),
                        format!("{hex} is not on the map"),
                    ));
                }
                areas[side as usize].insert(hex);
            }
        }
        let setup = Setup {
            order,
            areas,
            units,
            weapons,
        };
        for side in Side::BOTH {
            if setup.to_set_up(side).next().is_none() {
                continue;
            }
            let name = &self.sides[side as usize].id;
            if !setup.order.contains(&side) {
                return Err(refuse(
                    "setup.order",
                    format!("the {name} side has units to set up but is not in the order"),
                ));
            }
            if setup.area(side).is_empty() {
                return Err(refuse(
                    "setup.areas",
                    format!("the {name} side has units to set up but no area to set them up in"),
                ));
            }
            if let Some(why) = crate::setup::room_for(&setup, side, hexes) {
                return Err(refuse("setup.areas", format!("the {name} side: {why}")));
            }
        }
        Ok(Some(setup))
    }
}

/// Lays out the boards `[map]` names, reading their hexes and hexsides off their grids.
fn read_map(
    file: &MapFile,
    boards: Option<&crate::vasl::library::Boards>,
    hexes: &mut BTreeMap<Hex, HexSpec>,
    hexsides: &mut BTreeMap<Hexside, HexsideSpec>,
) -> Result<MapSpec, ScenarioError> {
    use crate::vasl::{import, library};
    let Some(boards) = boards else {
        return Err(refuse(
            "map.boards",
            "the scenario is played on real boards: name the directory of VASL board archives with --boards DIR or ASL_BOARDS",
        ));
    };
    let count: usize = file.boards.iter().map(Vec::len).sum();
    if file.boards.is_empty() || count == 0 {
        return Err(refuse("map.boards", "names no board"));
    }
    if count > MAP_BOARDS_MAX {
        return Err(refuse(
            "map.boards",
            format!("{count} boards; a map holds at most {MAP_BOARDS_MAX}"),
        ));
    }
    let width = file.boards[0].len();
    let mut rows = Vec::new();
    let mut archives = Vec::new();
    let mut seen = BTreeSet::new();
    for (r, row) in file.boards.iter().enumerate() {
        if row.len() != width {
            return Err(refuse(
                format!("map.boards[{r}]"),
                format!(
                    "has {} boards but the first row has {width}: rows of a map are equally long",
                    row.len()
                ),
            ));
        }
        let mut placed = Vec::new();
        for (c, text) in row.iter().enumerate() {
            let field = format!("map.boards[{r}][{c}]");
            let name = library::board_name(text).map_err(|e| refuse(&field, e))?;
            if !seen.insert(name.number) {
                return Err(refuse(
                    &field,
                    format!(
                        "board {} is named twice; its hex names would not say which copy",
                        name.number
                    ),
                ));
            }
            let archive = boards.board(&name.name).map_err(|e| refuse(&field, e))?;
            placed.push(PlacedBoard {
                board: name.number,
                rotated: name.rotated,
                version: archive.metadata.version.clone(),
                digest: data_encoding::HEXLOWER.encode(&archive.digest),
            });
            archives.push((name.number, archive));
        }
        rows.push(placed);
    }
    let spec = MapSpec { rows };
    // A seam hex is read off every board that shows it; as VASL lays out a map, the board
    // placed later (east, then south) names it and gives its facts, and a hexside along a seam
    // is kept under its hexes' map names (`board::geometry`).
    let geometry = crate::geometry::Geometry::of_map(Some(&spec));
    for (number, archive) in archives {
        let read = import::board_hexes(&archive, number, boards.table());
        let (board_hexes, board_sides) = import::scenario_hexes(&read);
        hexes.extend(
            board_hexes
                .into_iter()
                .filter(|(h, _)| geometry.canonical(*h) == *h)
                .map(|(h, mut spec)| {
                    spec.obstacle_touches = spec
                        .obstacle_touches
                        .iter()
                        .map(|n| geometry.canonical(*n))
                        .collect();
                    (h, spec)
                }),
        );
        hexsides.extend(
            board_sides
                .into_iter()
                .map(|(side, spec)| (geometry.canonical_hexside(side), spec)),
        );
    }
    Ok(spec)
}

/// Fortifications listed with a hex: each at most once, and only where the terrain allows one
/// (B-terrain summary: none in runway hexes but Wire/roadblocks, B7; none in crag but Wire,
/// B17; none in marsh, B16, nor in a building, B23; no entrenchment in sunken or elevated
/// road, on a paved road, or on a bridge, B3–B6).
fn check_fortifications(
    field: &str,
    hex: Hex,
    h: &HexFile,
) -> Result<BTreeSet<Fortification>, ScenarioError> {
    let mut set = BTreeSet::new();
    for (j, f) in h.fortifications.iter().enumerate() {
        let at = format!("{field}.fortifications[{j}]");
        if !set.insert(*f) {
            return Err(refuse(
                at,
                format!("{} is listed twice in {hex}", f.row().name),
            ));
        }
        let entrenchment = f.row().entrenchment;
        let why = match h.terrain {
            Terrain::Runway if *f != Fortification::Wire => {
                Some("a runway hex holds no fortification but Wire (B7)")
            }
            Terrain::Crag if *f != Fortification::Wire => {
                Some("a crag hex holds no fortification but Wire (B17)")
            }
            Terrain::Marsh => Some("a marsh hex holds no fortification (B16)"),
            Terrain::StoneBuilding | Terrain::WoodenBuilding => Some(
                "a building hex holds no fortification but a minefield or its own fortifying (B23), and neither is modelled",
            ),
            Terrain::SunkenRoad | Terrain::ElevatedRoad if entrenchment => {
                Some("no entrenchment in a sunken or elevated road hex (B4, B5)")
            }
            _ if entrenchment && h.road == Some(Road::Paved) => {
                Some("no entrenchment in a paved road hex (B3)")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(refuse(at, why));
        }
    }
    if set.contains(&Fortification::Bridge) && set.iter().any(|f| f.row().entrenchment) {
        return Err(refuse(
            format!("{field}.fortifications"),
            "no entrenchment on a bridge (B6)",
        ));
    }
    if set.contains(&Fortification::Foxhole) && set.contains(&Fortification::Trench) {
        return Err(refuse(
            format!("{field}.fortifications"),
            "one entrenchment per hex: a foxhole or a trench",
        ));
    }
    Ok(set)
}

/// A unit's place among its hex's fortifications must exist there, and it is in one at most.
/// Only squads have Assault Fire (A7.36): the underline is printed on a squad's FP.
fn check_assault_fire(field: &str, unit: &UnitFile) -> Result<(), ScenarioError> {
    if unit.assault_fire && unit.kind != UnitKind::Squad {
        return Err(refuse(
            format!("{field}.assault_fire"),
            "only squads have Assault Fire (A7.36)",
        ));
    }
    Ok(())
}

/// Only a squad has a half-squad (A7.302), and it reads as MMC ratings do: three whole
/// numbers, FP-range-morale (`2-4-7`).
fn check_half_squad(field: &str, unit: &UnitFile) -> Result<(), ScenarioError> {
    let Some(half) = &unit.half_squad else {
        return Ok(());
    };
    if unit.kind != UnitKind::Squad {
        return Err(refuse(
            format!("{field}.half_squad"),
            "only a squad is reduced to a half-squad (A7.302); a half-squad or crew is eliminated instead",
        ));
    }
    let figures: Vec<&str> = half.split('-').collect();
    let whole = |f: &&str| !f.is_empty() && f.len() <= 2 && f.bytes().all(|b| b.is_ascii_digit());
    if figures.len() != 3 || !figures.iter().all(whole) {
        return Err(refuse(
            format!("{field}.half_squad"),
            format!("`{half}` is not a half-squad's ratings: write its FP, range and morale as its counter prints them, e.g. \"2-4-7\""),
        ));
    }
    Ok(())
}

fn check_placement(field: &str, unit: &UnitSpec, hex: &HexSpec) -> Result<(), ScenarioError> {
    let p = unit.placement;
    let has = |f: Fortification| hex.fortifications.contains(&f);
    let needs = [
        (
            p.entrenched,
            "entrenched",
            has(Fortification::Foxhole) || has(Fortification::Trench),
            "a foxhole or trench",
        ),
        (
            p.in_pillbox,
            "in_pillbox",
            has(Fortification::Pillbox),
            "a pillbox",
        ),
        (
            p.above_wire,
            "above_wire",
            has(Fortification::Wire) || has(Fortification::Panji),
            "Wire or Panji",
        ),
        (
            p.on_bridge,
            "on_bridge",
            has(Fortification::Bridge),
            "a bridge",
        ),
    ];
    for (set, name, present, what) in needs {
        if set && !present {
            return Err(refuse(
                format!("{field}.{name}"),
                format!("{} lists no {what} in its `fortifications`", unit.hex),
            ));
        }
    }
    if [p.entrenched, p.in_pillbox, p.above_wire, p.on_bridge]
        .iter()
        .filter(|b| **b)
        .count()
        > 1
    {
        return Err(refuse(
            format!("{field}.entrenched"),
            "a unit is in one place at a time: entrenched, in_pillbox, above_wire or on_bridge",
        ));
    }
    if p.entrenched && !(unit.kind.is_infantry() || unit.kind == UnitKind::Dummy) {
        return Err(refuse(
            format!("{field}.entrenched"),
            "only Infantry set up beneath an entrenchment (B27)",
        ));
    }
    Ok(())
}

/// Whether a tunnel can run from `a` to `b` beneath hexes all at `level` and none a Water
/// Obstacle (B8.6). The route is not recorded, so any shortest way will do.
fn tunnel_route(
    geometry: crate::geometry::Geometry<'_>,
    hexes: &BTreeMap<Hex, HexSpec>,
    a: Hex,
    b: Hex,
    level: i8,
) -> bool {
    way_beneath(geometry, hexes, a, b, |s| {
        s.elevation == level && !s.water_obstacle
    })
}

/// Whether some shortest way from `a` to `b` runs only through hexes (ends included) whose spec
/// is `passable`: how sewers and tunnels are checked against what lies above them (B8.4, B8.6).
pub fn way_beneath(
    geometry: crate::geometry::Geometry<'_>,
    hexes: &BTreeMap<Hex, HexSpec>,
    a: Hex,
    b: Hex,
    passable: impl Fn(&HexSpec) -> bool,
) -> bool {
    let passable = |h: &Hex| hexes.get(h).is_some_and(&passable);
    if !passable(&a) || !passable(&b) {
        return false;
    }
    let mut frontier = vec![a];
    let mut seen = BTreeSet::new();
    while let Some(here) = frontier.pop() {
        if here == b {
            return true;
        }
        if !seen.insert(here) {
            continue;
        }
        let Some(d) = geometry.distance(here, b) else {
            continue;
        };
        frontier.extend(
            geometry
                .neighbours(here)
                .into_iter()
                .filter(|n| geometry.distance(*n, b).is_some_and(|nd| nd + 1 == d) && passable(n)),
        );
    }
    false
}

/// Longest name a `counter` may carry, in bytes: more than any counter prints.
pub const COUNTER_NAME_BYTES_MAX: usize = 64;

/// A `counter`'s ratings are the name printed on it (`PzKw IVH`, `Gun 75L AT PaK 40`): some
/// text, within [`COUNTER_NAME_BYTES_MAX`], with no control or bidi character (it comes from
/// others' saves, and is shown to both players).
pub fn check_counter_name(field: &str, name: &str) -> Result<(), ScenarioError> {
    if name.trim().is_empty() {
        return Err(refuse(
            field,
            "a counter is named by the name printed on it",
        ));
    }
    if name.len() > COUNTER_NAME_BYTES_MAX {
        return Err(refuse(
            field,
            format!("a counter's name is at most {COUNTER_NAME_BYTES_MAX} bytes"),
        ));
    }
    if name
        .chars()
        .any(|c| c.is_control() || crate::scenario::is_bidi(c))
    {
        return Err(refuse(
            field,
            "a counter's name holds no control or bidi characters",
        ));
    }
    Ok(())
}

/// Longest name a scenario may carry, in bytes: more than any scenario card prints.
pub const SCENARIO_NAME_BYTES_MAX: usize = 128;
/// Longest name a side may carry, in bytes (`German`, `Finnish Ski Troops`).
pub const SIDE_NAME_BYTES_MAX: usize = 64;

/// The scenario's own words that both players are shown (its name, its sides' names) come from
/// whoever wrote the file, and reach the other player's terminal and page: within `max` bytes,
/// and with no control character (an escape sequence, a carriage return) nor bidi control (which
/// would reorder what is printed around it).
fn check_shown_words(field: &str, what: &str, text: &str, max: usize) -> Result<(), ScenarioError> {
    if text.len() > max {
        return Err(refuse(field, format!("{what} is at most {max} bytes")));
    }
    if text.chars().any(|c| c.is_control() || is_bidi(c)) {
        return Err(refuse(
            field,
            format!("{what} holds no control or bidi characters: the other player is shown it"),
        ));
    }
    Ok(())
}

/// Takes `id` for one unit or weapon of the scenario, refusing an id already taken.
/// A unit's or a weapon's id: a word of letters, digits, `-`, `_` or `.`. Ids are how players
/// and scripts name counters, and both players' screens show them, so none holds a control or
/// bidi character, a space, or the `?` that begins the name of a unit under "?" (A12).
pub fn check_id(field: &str, id: &str) -> Result<(), ScenarioError> {
    let ok = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !ok {
        return Err(refuse(
            field,
            "must be a non-empty word of letters, digits, - _ or .",
        ));
    }
    Ok(())
}

fn claim_id(ids: &mut BTreeSet<String>, field: &str, id: &str) -> Result<(), ScenarioError> {
    if ids.insert(id.to_owned()) {
        Ok(())
    } else {
        Err(refuse(
            format!("{field}.id"),
            format!("`{id}` is used twice"),
        ))
    }
}

/// Ratings must be three numbers for MMC (`4-6-7`) and two for leaders (`9-1`, modifier may be
/// negative as in `7-0` or `6+1`); heroes print three (`1-4-9`). Vehicles and dummies carry none.
fn check_ratings(field: &str, kind: UnitKind, ratings: &str) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = if ratings.is_empty() {
        vec![]
    } else {
        ratings.split(['-', '+']).collect()
    };
    let numeric = parts
        .iter()
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let want = match kind {
        UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew | UnitKind::Hero => 3,
        UnitKind::Leader => 2,
        UnitKind::Vehicle | UnitKind::Dummy => 0,
        UnitKind::Counter => return check_counter_name(field, ratings),
        UnitKind::Concealed => {
            return Err(refuse(
                field.replace(".ratings", ".kind"),
                "`concealed` is how an opponent sees a unit under \"?\"; give the unit's real kind and `concealed = true`",
            ))
        }
    };
    if !numeric || parts.len() != want {
        let example = match want {
            3 => "three numbers such as 4-6-7",
            2 => "morale and leadership such as 9-1",
            _ => "nothing (leave ratings out)",
        };
        return Err(refuse(
            field,
            format!(
                "`{ratings}` does not fit a {}: expected {example}",
                kind.name()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "test"
turns = 1
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]
[[area]]
from = "1A1"
to = "1C3"
terrain = "open_ground"
[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1B2"
"#;

    #[test]
    fn the_longest_game_of_a_scenario_has_the_most_turns() {
        let played = include_str!("../../../scenarios/b9-41-wall-advantage.toml");
        for text in [MINIMAL, played] {
            let long = longest(text).expect("a top-level `turns`");
            let mut stretched = Scenario::read_toml(&long).unwrap();
            assert_eq!(stretched.turns, TURNS_MAX);
            // Nothing else changes.
            let original = Scenario::read_toml(text).unwrap();
            stretched.turns = original.turns;
            assert_eq!(stretched, original);
        }
        // Only the top level's `turns`, never a key of that name inside a table.
        let tabled = "name = \"x\"\n[extra]\nturns = 1\n";
        assert_eq!(longest(tabled), None);
    }

    #[test]
    fn minimal_scenario_reads() {
        let s = Scenario::read_toml(MINIMAL).unwrap();
        assert_eq!(s.hexes.len(), 9);
        assert_eq!(s.first, Side::A);
        assert_eq!(s.side_named("Russian"), Some(Side::B));
        assert_eq!(s.units["g1"].hex.to_string(), "1B2");
    }

    fn refused(text: &str) -> ScenarioError {
        Scenario::read_toml(text).unwrap_err()
    }

    /// The underline of a squad's FP (A7.36) is the scenario's to say; a unit that is not a
    /// squad has no such underline, in a hex or off the boards.
    #[test]
    fn assault_fire_is_a_squads() {
        let squad = Scenario::read_toml(&format!("{MINIMAL}assault_fire = true\n")).unwrap();
        assert!(squad.units["g1"].assault_fire);
        assert!(!Scenario::read_toml(MINIMAL).unwrap().units["g1"].assault_fire);
        let leader = MINIMAL.replace(
            "kind = \"squad\"\nratings = \"4-6-7\"",
            "kind = \"leader\"\nratings = \"9-1\"",
        );
        let e = refused(&format!("{leader}assault_fire = true\n"));
        assert_eq!(e.field, "units[0].assault_fire");
        assert!(e.reason.contains("only squads"), "{}", e.reason);
        let off = with_setup("assault_fire = true\n[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nhexes = [\"1A1\"]\n");
        let s = Scenario::read_toml(&off).unwrap();
        assert!(s.setup.as_ref().unwrap().units["r1"].assault_fire);
    }

    /// A squad's half-squad (A7.302) is the scenario's to say, in a hex or off the boards;
    /// only a squad has one, and it reads as FP-range-morale.
    #[test]
    fn a_half_squad_is_a_squads_and_reads_as_ratings() {
        let squad = Scenario::read_toml(&format!("{MINIMAL}half_squad = \"2-4-7\"\n")).unwrap();
        assert_eq!(squad.units["g1"].half_squad.as_deref(), Some("2-4-7"));
        assert_eq!(
            Scenario::read_toml(MINIMAL).unwrap().units["g1"].half_squad,
            None
        );
        let crew = MINIMAL.replace(
            "kind = \"squad\"\nratings = \"4-6-7\"",
            "kind = \"crew\"\nratings = \"2-2-8\"",
        );
        let e = refused(&format!("{crew}half_squad = \"1-2-8\"\n"));
        assert_eq!(e.field, "units[0].half_squad");
        assert!(e.reason.contains("only a squad"), "{}", e.reason);
        for bad in [
            "2-4",
            "2-4-7-1",
            "two-4-7",
            "2--7",
            "",
            "2-4-7 1hs",
            "-2-4-7",
        ] {
            let e = refused(&format!("{MINIMAL}half_squad = \"{bad}\"\n"));
            assert_eq!(e.field, "units[0].half_squad", "{bad}");
            assert!(
                e.reason.contains("not a half-squad's ratings"),
                "{bad}: {}",
                e.reason
            );
        }
        let off = with_setup("half_squad = \"2-3-7\"\n[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nhexes = [\"1A1\"]\n");
        let s = Scenario::read_toml(&off).unwrap();
        assert_eq!(
            s.setup.as_ref().unwrap().units["r1"].half_squad.as_deref(),
            Some("2-3-7")
        );
        let off = with_setup("half_squad = \"2-3\"\n[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nhexes = [\"1A1\"]\n");
        assert!(refused(&off).field.ends_with(".half_squad"));
    }

    /// A side's nationality is one the half-squad table knows (A7.302), or none.
    #[test]
    fn a_sides_nationality_is_one_the_table_knows() {
        let russian = MINIMAL.replace(
            "{ id = \"russian\", name = \"Russian\" }",
            "{ id = \"russian\", name = \"Russian\", nationality = \"russian\" }",
        );
        let s = Scenario::read_toml(&russian).unwrap();
        assert_eq!(s.sides[1].nationality.as_deref(), Some("russian"));
        assert_eq!(
            Scenario::read_toml(MINIMAL).unwrap().sides[0].nationality,
            None
        );
        let finnish = MINIMAL.replace(
            "{ id = \"german\", name = \"German\" }",
            "{ id = \"german\", name = \"German\", nationality = \"finnish\" }",
        );
        let e = refused(&finnish);
        assert_eq!(e.field, "sides[0].nationality");
        assert!(
            e.reason.contains("german, russian, american"),
            "{}",
            e.reason
        );
        assert!(e.reason.contains("`half_squad`"), "{}", e.reason);
    }

    /// MINIMAL with a Russian squad off the boards and `extra` after it.
    fn with_setup(extra: &str) -> String {
        format!(
            "{MINIMAL}[[units]]\nid = \"r1\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\noffboard = true\n{extra}"
        )
    }

    #[test]
    fn a_set_up_reads_as_a_scenario_card_says_it() {
        let s = Scenario::read_toml(&with_setup(
            "[setup]\norder = [\"russian\", \"german\"]\n\
             [[setup.areas]]\nside = \"russian\"\nboard = \"1\"\nhexrows = \"B-C\"\nnumbers = \"2-3\"\n\
             [[setup.areas]]\nside = \"russian\"\nhexes = [\"1A1\"]\n",
        ))
        .unwrap();
        let setup = s.setup.as_ref().unwrap();
        assert_eq!(setup.order, [Side::B, Side::A]);
        let area: Vec<String> = setup.area(Side::B).iter().map(|h| h.to_string()).collect();
        assert_eq!(area, ["1A1", "1B2", "1B3", "1C2", "1C3"]);
        assert!(setup.area(Side::A).is_empty());
        assert!(!s.units.contains_key("r1"));
        assert_eq!(setup.setting_up(), [Side::B]);
    }

    #[test]
    fn a_set_up_is_refused_with_the_field_and_why() {
        let area = "[[setup.areas]]\nside = \"russian\"\nboard = \"1\"\n";
        for (extra, field, words) in [
            ("", "units[1].offboard", "no [setup]"),
            ("[setup]\norder = [\"german\"]\n", "setup.order", "not in the order"),
            ("[setup]\norder = [\"russian\"]\n", "setup.areas", "no area"),
            (
                "[setup]\norder = [\"russian\", \"russian\"]\n",
                "setup.order[1]",
                "named twice",
            ),
            (
                "[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nhexrows = \"A-\"\n",
                "setup.areas[0].hexrows",
                "span",
            ),
            (
                "[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nboard = \"2\"\n",
                "setup.areas[0]",
                "no hex of the map",
            ),
            (
                "[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nhexes = [\"1Z9\"]\n",
                "setup.areas[0].hexes[0]",
                "not on the map",
            ),
        ] {
            let e = refused(&with_setup(extra));
            assert_eq!(e.field, field, "{extra}: {e}");
            assert!(e.reason.contains(words), "{extra}: {e}");
        }
        // Too many units for the area without overstacking: a dead end, refused (A5.1).
        let mut crowd = String::new();
        for i in 2..=10 {
            crowd += &format!(
                "[[units]]\nid = \"r{i}\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\noffboard = true\n"
            );
        }
        let e = refused(&with_setup(&format!(
            "{crowd}[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nhexes = [\"1A1\", \"1A2\"]\n"
        )));
        assert!(e.reason.contains("A5.1"), "{e}");
        // A unit in a hex and off the boards at once; a vehicle off the boards.
        let e = refused(&with_setup(&format!(
            "hex = \"1A1\"\n[setup]\norder = [\"russian\"]\n{area}"
        )));
        assert_eq!(e.field, "units[1].hex", "{e}");
        let e = refused(
            &with_setup(&format!("[setup]\norder = [\"russian\"]\n{area}")).replace(
                "kind = \"squad\"\nratings = \"4-4-7\"\noffboard",
                "kind = \"vehicle\"\nmp = 12\noffboard",
            ),
        );
        assert!(e.reason.contains("not modelled"), "{e}");
        // Entering later needs no [setup]; its turn lies within the scenario.
        let enters = MINIMAL.to_string()
            + "[[units]]\nid = \"r9\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nenters = { turn = 1, edge = \"west\" }\n";
        let s = Scenario::read_toml(&enters).unwrap();
        assert!(s.setup.as_ref().unwrap().units["r9"].enters.is_some());
        assert!(!s.setup.as_ref().unwrap().has_set_up_step());
        let e = refused(&enters.replace("turn = 1", "turn = 2"));
        assert_eq!(e.field, "units[1].enters.turn", "{e}");
    }

    /// The scenario's words both players are shown come from whoever wrote the file: a name
    /// carrying a terminal escape, a carriage return or a bidi override, or one of any length,
    /// is refused naming the field, so it never reaches the other player's screen.
    #[test]
    fn names_the_other_player_is_shown_hold_no_control_characters() {
        let hostile = [
            "\\u001b]0;owned\\u0007",
            "Ger\\u001b[2Jman",
            "German\\rRussian wins",
            "abc\\u202edef",
            "x\\u2066y",
        ];
        let weapon = "[[weapons]]\nid = \"glmg\"\nname = \"LMG\"\npp = 1\nheld_by = \"g1\"\n";
        let base = format!("{MINIMAL}{weapon}");
        Scenario::read_toml(&base).unwrap();
        for bad in hostile {
            let e = refused(&base.replace("name = \"test\"", &format!("name = \"{bad}\"")));
            assert_eq!(e.field, "name", "{bad}: {e}");
            assert!(e.reason.contains("control or bidi"), "{e}");
            let e = refused(&base.replace("name = \"Russian\"", &format!("name = \"{bad}\"")));
            assert_eq!(e.field, "sides[1].name", "{bad}: {e}");
            assert!(e.reason.contains("control or bidi"), "{e}");
            let e = refused(&base.replace("name = \"LMG\"", &format!("name = \"{bad}\"")));
            assert_eq!(e.field, "weapons[0].name", "{bad}: {e}");
        }
        let long = "n".repeat(SCENARIO_NAME_BYTES_MAX + 1);
        let e = refused(&base.replace("name = \"test\"", &format!("name = \"{long}\"")));
        assert_eq!(e.field, "name", "{e}");
        let long = "n".repeat(SIDE_NAME_BYTES_MAX + 1);
        let e = refused(&base.replace("name = \"German\"", &format!("name = \"{long}\"")));
        assert_eq!(e.field, "sides[0].name", "{e}");
        let e = refused(&base.replace("name = \"German\"", "name = \" \""));
        assert_eq!(e.field, "sides[0].name", "{e}");
        // A scenario that came by another road than its file (a position, an export) is
        // held to the same words.
        let mut s = Scenario::read_toml(&base).unwrap();
        s.check_words().unwrap();
        s.sides[0].name = "Ger\u{1b}[2Jman".into();
        assert_eq!(s.check_words().unwrap_err().field, "sides[0].name");
        let mut s = Scenario::read_toml(&base).unwrap();
        s.weapons.get_mut("glmg").unwrap().name = "LMG\u{202e}".into();
        assert_eq!(s.check_words().unwrap_err().field, "weapon glmg");
        // So are the words a board archive gave it: an unmodelled terrain's name, a board's
        // version. Before, `check_words` passed them by.
        let mut s = Scenario::read_toml(&base).unwrap();
        let (hex, mut spec) = s.hexes.iter().next().map(|(h, v)| (*h, v.clone())).unwrap();
        spec.unmodelled = Some("Swamp\u{9b}2J".into());
        Arc::make_mut(&mut s.hexes).insert(hex, spec);
        let e = s.check_words().unwrap_err();
        assert_eq!(e.field, format!("hex {hex} terrain"), "{e}");
        let mut s = Scenario::read_toml(&base).unwrap();
        s.map = Some(MapSpec {
            rows: vec![vec![PlacedBoard {
                board: 1,
                rotated: false,
                version: "6.2\u{202e}".into(),
                digest: "00".into(),
            }]],
        });
        assert_eq!(s.check_words().unwrap_err().field, "map board 1 version");
        // Letters of any script are words, not controls.
        Scenario::read_toml(&base.replace("name = \"test\"", "name = \"Сталинград: Улица\""))
            .unwrap();
    }

    /// A weapon's id is shown to both players and typed by them, as a unit's is: held to the
    /// same word. Before, a weapon's id was any string: a terminal escape, or `?1`, the name
    /// the opponent's first "?" goes by. A scenario from elsewhere (a position, a stream, an
    /// export) is held to the same ids, a unit under "?" going by its alias.
    #[test]
    fn a_weapons_id_is_a_word_as_a_units_is() {
        let weapon = |id: &str| {
            format!(
                "{MINIMAL}[[weapons]]\nid = \"{id}\"\nname = \"LMG\"\npp = 1\nheld_by = \"g1\"\n"
            )
        };
        Scenario::read_toml(&weapon("g-lmg.1_a")).unwrap();
        for bad in ["\\u001b[2J", "lmg\\u202e", "?1", "", "a b"] {
            let e = refused(&weapon(bad));
            assert_eq!(e.field, "weapons[0].id", "{bad}: {e}");
        }
        let e = refused(&MINIMAL.replace("id = \"g1\"", "id = \"g\\u001b[2J\""));
        assert_eq!(e.field, "units[0].id", "{e}");

        let mut s = Scenario::read_toml(&weapon("glmg")).unwrap();
        s.check_words().unwrap();
        let mut w = s.weapons.remove("glmg").unwrap();
        w.id = "glmg\u{1b}[2J".into();
        s.weapons.insert(w.id.clone(), w);
        assert_eq!(s.check_words().unwrap_err().field, "weapons.id");
        let mut s = Scenario::read_toml(&weapon("glmg")).unwrap();
        let mut u = s.units.remove("g1").unwrap();
        u.id = "?3".into();
        s.units.insert(u.id.clone(), u.clone());
        s.check_words()
            .expect("a unit under \"?\" goes by its alias");
        u.id = "g1\u{9b}2J".into();
        s.units.insert(u.id.clone(), u);
        assert_eq!(s.check_words().unwrap_err().field, "units.id");
    }

    /// A9.1, A9.7: a weapon's FP, normal range and B# are read together, or not at all.
    #[test]
    fn a_weapons_fire_ratings_are_given_together() {
        let weapon = |extra: &str| {
            format!(
                "{MINIMAL}[[weapons]]\nid = \"glmg\"\nname = \"LMG\"\npp = 1\nheld_by = \"g1\"\n{extra}\n"
            )
        };
        let s = Scenario::read_toml(&weapon("fp = 3\nrange = 8\nbreakdown = 11")).unwrap();
        assert_eq!(
            s.weapons["glmg"].ratings,
            Some(SwRatings {
                fp: 3,
                range: 8,
                breakdown: 11,
                repair: None,
                rof: None,
            })
        );
        let s =
            Scenario::read_toml(&weapon("fp = 3\nrange = 8\nbreakdown = 11\nrepair = 2")).unwrap();
        assert_eq!(s.weapons["glmg"].ratings.unwrap().repair, Some(2));
        let e = refused(&weapon("fp = 3\nrange = 8\nbreakdown = 11\nrepair = 6"));
        assert_eq!(e.field, "weapons[0].repair", "{e}");
        let e = refused(&weapon("repair = 1"));
        assert_eq!(e.field, "weapons[0]", "{e}");
        let s = Scenario::read_toml(&weapon("")).unwrap();
        assert_eq!(s.weapons["glmg"].ratings, None);
        let e = refused(&weapon("fp = 3\nrange = 8"));
        assert_eq!(e.field, "weapons[0]", "{e}");
        assert!(e.reason.contains("together"), "{e}");
        let e = refused(&weapon("fp = 3\nrange = 8\nbreakdown = 13"));
        assert_eq!(e.field, "weapons[0].breakdown", "{e}");
        assert!(e.reason.contains("A9.7"), "{e}");
        let e = refused(&weapon("fp = 0\nrange = 8\nbreakdown = 12"));
        assert_eq!(e.field, "weapons[0].fp", "{e}");
        let e = refused(&weapon("fp = 2\nrange = 0\nbreakdown = 12"));
        assert_eq!(e.field, "weapons[0].range", "{e}");
    }

    /// Commands name units and weapons alike, so one id means one piece, wherever each of
    /// the two sits: on the map, off it to set up, or given at set-up.
    #[test]
    fn an_id_names_one_unit_or_weapon() {
        let area =
            "[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nboard = \"1\"\n";
        let weapon = |id: &str, how: &str| {
            format!("[[weapons]]\nid = \"{id}\"\nname = \"LMG\"\npp = 1\n{how}\n")
        };
        let cases = [
            // an on-map unit's id taken by an off-board unit
            (with_setup("[[units]]\nid = \"g1\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\noffboard = true\n"), "units[2].id"),
            // a unit's id taken by a weapon on the map, and by one given at set-up
            (with_setup(&weapon("g1", "held_by = \"g1\"")), "weapons[0].id"),
            (with_setup(&format!("{}{area}", weapon("r1", "side = \"russian\""))), "weapons[0].id"),
            // two weapons, one on the map and one given at set-up
            (
                with_setup(&format!(
                    "{}{}{area}",
                    weapon("w", "held_by = \"g1\""),
                    weapon("w", "side = \"russian\"")
                )),
                "weapons[1].id",
            ),
        ];
        for (text, field) in cases {
            let e = refused(&text);
            assert_eq!(e.field, field, "{text}: {e}");
            assert!(e.reason.contains("is used twice"), "{e}");
        }
    }

    /// A9.2: a weapon's Multiple ROF is read with its other ratings, from 1 to ROF_MAX, and
    /// never alone.
    #[test]
    fn a_weapons_rof_is_read_with_its_ratings() {
        let weapon = |extra: &str| {
            format!(
                "{MINIMAL}[[weapons]]\nid = \"ghmg\"\nname = \"HMG\"\npp = 4\nheld_by = \"g1\"\n{extra}\n"
            )
        };
        let s =
            Scenario::read_toml(&weapon("fp = 7\nrange = 16\nbreakdown = 12\nrof = 3")).unwrap();
        assert_eq!(s.weapons["ghmg"].ratings.unwrap().rof, Some(3));
        let s = Scenario::read_toml(&weapon(&format!(
            "fp = 7\nrange = 16\nbreakdown = 12\nrof = {ROF_MAX}"
        )))
        .unwrap();
        assert_eq!(s.weapons["ghmg"].ratings.unwrap().rof, Some(ROF_MAX));
        for bad in [0, ROF_MAX + 1] {
            let e = refused(&weapon(&format!(
                "fp = 7\nrange = 16\nbreakdown = 12\nrof = {bad}"
            )));
            assert_eq!(e.field, "weapons[0].rof", "{e}");
            assert!(e.reason.contains("A9.2"), "{e}");
        }
        let e = refused(&weapon("rof = 2"));
        assert_eq!(e.field, "weapons[0]", "{e}");
    }

    #[test]
    fn a_weapon_of_a_sides_set_up_is_given_by_infantry_that_sets_up() {
        let area =
            "[setup]\norder = [\"russian\"]\n[[setup.areas]]\nside = \"russian\"\nboard = \"1\"\n";
        let weapon =
            |how: &str| format!("[[weapons]]\nid = \"rlmg\"\nname = \"LMG\"\npp = 1\n{how}\n");
        let s = Scenario::read_toml(&with_setup(&format!(
            "{}{area}",
            weapon("side = \"russian\"")
        )))
        .unwrap();
        let setup = s.setup.as_ref().unwrap();
        assert_eq!(setup.weapons["rlmg"].held_by, None);
        assert_eq!(setup.weapons["rlmg"].side, Side::B);
        assert_eq!(setup.to_give(Side::B).count(), 1);
        assert!(s.weapons.is_empty());
        // The German sets nothing up: it has nobody to give a weapon to (A4.43).
        let e = refused(&with_setup(&format!(
            "{}{area}",
            weapon("side = \"german\"")
        )));
        assert_eq!(e.field, "weapons[0].side", "{e}");
        assert!(e.reason.contains("A4.43"), "{e}");
        // Two ways of saying where it is, or none.
        for how in [
            "side = \"russian\"\nheld_by = \"r1\"",
            "side = \"russian\"\nhex = \"1A1\"",
            "",
        ] {
            let e = refused(&with_setup(&format!("{}{area}", weapon(how))));
            assert_eq!(e.field, "weapons[0]", "{how}: {e}");
            assert!(e.reason.contains("exactly one of"), "{e}");
        }
        let e = refused(&with_setup(&format!(
            "{}{area}",
            weapon("side = \"french\"")
        )));
        assert_eq!(e.field, "weapons[0].side", "{e}");
    }

    #[test]
    fn refusals_name_field_and_reason() {
        let text = MINIMAL.replace("hex = \"1B2\"", "hex = \"1Z9\"");
        let e = refused(&text);
        assert_eq!(e.field, "units[0].hex");
        let line = text.lines().position(|l| l.contains("1Z9")).unwrap() + 1;
        assert_eq!(e.at, Some(Place { line, column: 1 }));
        assert!(
            e.in_file("s.toml")
                .starts_with(&format!("s.toml:{line}:1: scenario field `units[0].hex`: ")),
            "{}",
            e.in_file("s.toml")
        );
        assert!(e.reason.contains("not on the map"), "{e}");

        let e = refused(&MINIMAL.replace("ratings = \"4-6-7\"", "ratings = \"9-1\""));
        assert_eq!(e.field, "units[0].ratings");

        let e = refused(&MINIMAL.replace("side = \"german\"", "side = \"french\""));
        assert_eq!(e.field, "units[0].side");

        let e = refused(&MINIMAL.replace("first = \"german\"", "first = \"nobody\""));
        assert_eq!(e.field, "first");

        let e = refused(&MINIMAL.replace("turns = 1", "turns = 0"));
        assert_eq!(e.field, "turns");

        let e = refused(&MINIMAL.replace("open_ground", "rubble"));
        assert!(e.reason.contains("unknown variant"), "{e}");
        assert!(e.field.starts_with("area[0]"), "{e}");
        assert!(e.at.is_some(), "{e:?}");

        let e = refused(&format!("{MINIMAL}\n[[units]]\nid=\"g1\"\nside=\"german\"\nkind=\"squad\"\nratings=\"4-6-7\"\nhex=\"1A1\"\n"));
        assert_eq!(e.field, "units[1].id");
    }

    #[test]
    fn hexside_must_join_map_hexes() {
        let e = refused(&format!(
            "{MINIMAL}\n[[hexsides]]\nhexside = \"1A1-1C3\"\nfeature = \"wall\"\n"
        ));
        assert_eq!(e.field, "hexsides[0].hexside");
        assert!(e.reason.contains("not adjacent"));
    }

    /// B8.6: tunnel entrances within three hexes, in building/brush/woods.
    #[test]
    fn tunnel_entrances_checked() {
        let e = refused(&format!(
            "{MINIMAL}\n[[tunnels]]\nside = \"german\"\nentrances = [\"1A1\", \"1C3\"]\n"
        ));
        assert!(e.reason.contains("B8.6"), "{e}");
    }

    /// B9.32's fortifications: a unit's place must exist in its hex, terrain limits where
    /// they go (B3–B7, B16, B17, B23), and a Roadblock is modelled only at a bridge.
    #[test]
    fn fortifications_checked() {
        let e = refused(&MINIMAL.replace("hex = \"1B2\"", "hex = \"1B2\"\nentrenched = true"));
        assert_eq!(e.field, "units[0].entrenched");
        let foxhole = format!(
            "{MINIMAL}\n[[hexes]]\nhex = \"1A1\"\nterrain = \"runway\"\nfortifications = [\"foxhole\"]\n"
        );
        let e = refused(&foxhole);
        assert!(e.reason.contains("B7"), "{e}");
        // The chart forbids them in marsh (B16) and buildings (B23) too.
        for (terrain, rule) in [
            ("marsh", "B16"),
            ("stone_building", "B23"),
            ("wooden_building", "B23"),
        ] {
            for f in ["foxhole", "wire", "pillbox"] {
                let placed = format!(
                    "{MINIMAL}\n[[hexes]]\nhex = \"1A1\"\nterrain = \"{terrain}\"\nfortifications = [\"{f}\"]\n"
                );
                let e = refused(&placed);
                assert!(e.reason.contains(rule), "{terrain} {f}: {e}");
            }
        }
        let roadblock =
            format!("{MINIMAL}\n[[hexsides]]\nhexside = \"1A1-1A2\"\nroadblock = true\n");
        let e = refused(&roadblock);
        assert!(e.reason.contains("not modelled"), "{e}");
        let fine = format!(
            "{MINIMAL}\n[[hexes]]\nhex = \"1B2\"\nterrain = \"open_ground\"\nfortifications = [\"foxhole\"]\n"
        )
        .replace("hex = \"1B2\"\n\"", "");
        let s = Scenario::read_toml(&fine.replacen(
            "hex = \"1B2\"\n",
            "hex = \"1B2\"\nentrenched = true\n",
            1,
        ))
        .unwrap();
        assert!(s.units["g1"].placement.entrenched);
    }

    /// B8.6: entrances at one elevation (any, not only ground level), and a tunnel whose every
    /// way passes beneath a hex of another base elevation or a Water Obstacle is refused.
    #[test]
    fn tunnel_route_checked() {
        let scenario = |extra: &str| {
            format!(
                "name = \"t\"\nturns = 1\nfirst = \"german\"\n\
                 sides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\
                 [[area]]\nfrom = \"1A1\"\nto = \"1E5\"\nterrain = \"open_ground\"\nelevation = 1\n\
                 [[hexes]]\nhex = \"1A2\"\nterrain = \"woods\"\nelevation = 1\n\
                 {extra}\
                 [[tunnels]]\nside = \"german\"\nentrances = [\"1A2\", \"1A4\"]\n"
            )
        };
        let entrance = "[[hexes]]\nhex = \"1A4\"\nterrain = \"woods\"\nelevation = 1\n";
        let ok = scenario(entrance);
        assert!(
            Scenario::read_toml(&ok).is_ok(),
            "{:?}",
            Scenario::read_toml(&ok).err()
        );
        // A3 is the only hex between them: a level lower, or a Water Obstacle, it cuts the way.
        let low = scenario(&format!(
            "{entrance}[[hexes]]\nhex = \"1A3\"\nterrain = \"open_ground\"\n"
        ));
        assert!(refused(&low).reason.contains("another base elevation"));
        let water = scenario(&format!("{entrance}[[hexes]]\nhex = \"1A3\"\nterrain = \"open_ground\"\nelevation = 1\nwater_obstacle = true\n"));
        assert!(refused(&water).reason.contains("Water Obstacle"));
        let uneven = scenario("[[hexes]]\nhex = \"1A4\"\nterrain = \"woods\"\nelevation = 2\n");
        assert!(refused(&uneven).reason.contains("same elevation"));
    }

    #[test]
    fn bocage_ssr_turns_hedges_into_bocage() {
        let text = format!(
            "{MINIMAL}\n[ssr]\nhedges_are_bocage = true\n[[hexsides]]\nhexside = \"1A1-1A2\"\nfeature = \"hedge\"\n"
        );
        let s = Scenario::read_toml(&text).unwrap();
        let side: Hexside = "1A1-1A2".parse().unwrap();
        assert_eq!(s.hexside_feature(side), Some(HexsideFeature::Bocage));
    }
}

#[cfg(test)]
mod interner_tests {
    use super::*;

    fn read_back(scenario: &Scenario) -> Scenario {
        let config = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(scenario, config).unwrap();
        bincode::serde::decode_from_slice(&bytes, config).unwrap().0
    }

    /// Two games read from their logs hold a map each; passed through one interner, they hold
    /// one, LOS map included, and a scenario on another map keeps its own.
    #[test]
    fn scenarios_on_one_map_share_it_through_an_interner() {
        let text = include_str!("../../../scenarios/b9-41-wall-advantage.toml");
        let scenario = Scenario::read_toml(text).unwrap();
        let (mut a, mut b) = (read_back(&scenario), read_back(&scenario));
        assert!(!Arc::ptr_eq(&a.hexes, &b.hexes));
        let interner = Interner::default();
        interner.share(&mut a);
        interner.share(&mut b);
        assert!(Arc::ptr_eq(&a.hexes, &b.hexes));
        assert!(Arc::ptr_eq(&a.hexsides, &b.hexsides));
        let (la, lb) = (a.los.get().unwrap(), b.los.get().unwrap());
        assert!(Arc::ptr_eq(la, lb));
        assert_eq!(a, scenario);

        let other = include_str!("../../../scenarios/sewer-infiltration.toml");
        let mut c = read_back(&Scenario::read_toml(other).unwrap());
        interner.share(&mut c);
        assert!(!Arc::ptr_eq(&a.hexes, &c.hexes));
        assert!(!Arc::ptr_eq(la, c.los.get().unwrap()));
    }
}
