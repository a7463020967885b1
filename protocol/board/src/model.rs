//! What a scenario is made of, below the scenario itself: the sides, the kinds of unit and
//! their morale, stacking limits, the map's boards, each hex's and hexside's terrain, units,
//! support weapons and tunnels as the checked scenario holds them.
//!
//! These are plain data with no knowledge of files, LOS or set-up: the modules that use them
//! (the map's geometry, LOS, the set-up step, the scenario file) sit above this one, so the
//! board's modules import in one direction only.

use crate::hex::Hex;
use crate::terrain::{Fortification, HexsideFeature, Terrain};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One of the two sides. A is the first side the scenario lists, B the second; what players
/// see is the side's name from the scenario ("German", "British").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn opponent(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
    pub const BOTH: [Side; 2] = [Side::A, Side::B];
}

/// A counter's id as the scenario names it (`467a`, `leader-9-1`). Players type these in scripts.
pub type UnitId = String;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    Squad,
    HalfSquad,
    Crew,
    Leader,
    Hero,
    Vehicle,
    Dummy,
    /// A counter of the scenario the engine does not rule on — a vehicle or Gun of a VASL
    /// save, an armor leader, a dismantled weapon — so that nothing on the card is dropped:
    /// `ratings` holds the name printed on it. It is placed, concealed, hidden and shown like
    /// a unit; the rules refuse every act of it as not modelled, and the players move, remove
    /// or relabel it by an adjudication the opponent may accept or dispute.
    Counter,
    /// A unit under a "?" as the opponent sees it: what it is stays unknown (A12). Only
    /// projections use it; a scenario may not.
    Concealed,
}

/// Personnel stacking limits per side per Location (A5.1): three squads or their equivalents
/// (counted here in half-squads) and four SMC. Each level of a hex is a Location of its own.
pub const STACK_HALF_SQUADS_MAX: u16 = 6;
/// Single-Man Counters one side may stack in one Location without overstacking (A5.1).
pub const STACK_SMC_MAX: u16 = 4;

/// A side's Personnel in one Location as stacking counts them (A5.1): squad equivalents in
/// half-squads, and SMC. Dummies and vehicles are not Personnel stacking counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stack {
    pub half_squads: u16,
    pub smc: u16,
}

impl Stack {
    pub fn add(&mut self, kind: UnitKind) {
        match kind {
            UnitKind::Squad => self.half_squads += 2,
            UnitKind::HalfSquad | UnitKind::Crew => self.half_squads += 1,
            UnitKind::Leader | UnitKind::Hero => self.smc += 1,
            _ => {}
        }
    }
    /// Whole squad equivalents beyond the limit, a half rounded up (A5.11: FRU).
    pub fn squads_over(&self) -> u16 {
        self.half_squads
            .saturating_sub(STACK_HALF_SQUADS_MAX)
            .div_ceil(2)
    }
    pub fn overstacked(&self) -> bool {
        self.half_squads > STACK_HALF_SQUADS_MAX || self.smc > STACK_SMC_MAX
    }
}

impl UnitKind {
    /// Multi-Man Counters: squads, half-squads, crews (A1.1).
    pub fn is_mmc(self) -> bool {
        matches!(self, UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew)
    }
    /// Single-Man Counters: leaders and heroes.
    pub fn is_smc(self) -> bool {
        matches!(self, UnitKind::Leader | UnitKind::Hero)
    }
    pub fn is_infantry(self) -> bool {
        self.is_mmc() || self.is_smc()
    }
    pub fn name(self) -> &'static str {
        match self {
            UnitKind::Squad => "squad",
            UnitKind::HalfSquad => "half-squad",
            UnitKind::Crew => "crew",
            UnitKind::Leader => "leader",
            UnitKind::Hero => "hero",
            UnitKind::Vehicle => "vehicle",
            UnitKind::Dummy => "dummy",
            UnitKind::Counter => "counter",
            UnitKind::Concealed => "?",
        }
    }
}

/// A unit's morale state. Pinned, CX and TI are separate flags because they combine with it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Morale {
    #[default]
    GoodOrder,
    Broken,
    Berserk,
}

/// A map of real boards, as the scenario file lays them out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapSpec {
    /// Rows north to south, boards west to east.
    pub rows: Vec<Vec<PlacedBoard>>,
}

/// One board of a [`MapSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedBoard {
    /// VASL's board name, a number (`1` for archive `bd01`): hexes on it are `1A1` …
    pub board: u16,
    /// Turned 180° (`"2r"` in the file).
    pub rotated: bool,
    /// The archive's board version (`6.1`).
    pub version: String,
    /// blake3 of the archive, hex: a replay elsewhere finds the same board by it.
    pub digest: String,
}

/// Most boards on one map: a campaign-size map of 3 × 3 geomorphic boards.
pub const MAP_BOARDS_MAX: usize = 9;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideSpec {
    /// Short id used in scripts (`german`).
    pub id: String,
    /// Name shown to players (`German`).
    pub name: String,
    /// The army its counters are (`german`): what the engine looks its squads' half-squads up
    /// by (A7.302, `half_squads`). `None`: not given, and only a unit's own `half_squad` is
    /// known.
    #[serde(default)]
    pub nationality: Option<String>,
}

/// Special Scenario Rules the engine knows about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ssr {
    /// Sewers exist and may be entered (B8.1: sewers are usable only by SSR).
    pub sewers_usable: bool,
    /// Units have sewer movement capability without a leader's Task Check (B8.4).
    pub sewer_movement: bool,
    /// Every hedge is bocage (B9.5).
    pub hedges_are_bocage: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HexSpec {
    pub terrain: Terrain,
    /// Base level of the hex (B10): 0 is ground level.
    pub elevation: i8,
    pub road: Option<Road>,
    /// A Manhole marker is printed in the hex (B8.1).
    pub manhole: bool,
    /// For woods/building hexes: the hexsides (named by the neighbouring hex) that the obstacle
    /// depiction touches, so that Bypass along them is blocked (A4.3). Unlisted means untouched.
    pub obstacle_touches: BTreeSet<Hex>,
    /// Fortifications in the hex (B9.32 names them; `terrain::FORTIFICATION_TABLE`).
    #[serde(default)]
    pub fortifications: BTreeSet<Fortification>,
    /// Rubble lies in the hex (B24): it cannot be Bypassed (A4.3), and a Manhole under it is
    /// no Manhole (B8.5).
    pub rubble: bool,
    /// A Blaze burns in the hex (B25): its obstacle cannot be Bypassed (A4.3), and a Manhole
    /// in it is no Manhole (B8.5).
    pub blaze: bool,
    /// Rubble in the sewer beneath the hex (B8.5): no Sewer Movement into it.
    pub sewer_rubble: bool,
    /// A Water Obstacle hex (B21): no sewer or tunnel passes beneath it (B8.4, B8.6).
    pub water_obstacle: bool,
    /// The scenario listed `obstacle_touches` (even as `[]`): for LOS the depiction is then
    /// drawn inside the hex, reaching only those hexsides. Otherwise it fills the hex (the
    /// simple default; `board::los`, docs/los.md).
    #[serde(default)]
    pub obstacle_inset: bool,
    /// Obstacle height in half levels when it differs from the terrain table (a building of
    /// more than one storey, B23); `None` = the table's.
    #[serde(default)]
    pub obstacle_height: Option<u8>,
    /// A real board's terrain the engine's chart has no row for (VASL's name, `Swamp`): the
    /// hex is carried as it is, and a rule that would need its terrain refuses, naming it.
    #[serde(default)]
    pub unmodelled: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Road {
    Paved,
    Unpaved,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HexsideSpec {
    pub feature: Option<HexsideFeature>,
    /// A road crosses this hexside; for a wall/hedge it marks the gap (B9.4) that is crossed
    /// without the hexside cost.
    pub road: bool,
    /// The wall/hedge depiction touches the obstacle of one of its hexes, blocking Bypass (A4.31).
    pub touches_obstacle: bool,
    /// A Breach marker lies on this bocage hexside: movement crosses it as if there were no
    /// bocage, though it is bocage for every other purpose (B9.541).
    pub breach: bool,
    /// A Roadblock on this hexside; modelled only where B9.32 names it: a unit on a bridge may
    /// claim WA over it.
    #[serde(default)]
    pub roadblock: bool,
    /// A real board's hexside terrain the engine does not model (VASL's name, `Cliff`).
    #[serde(default)]
    pub unmodelled: Option<String>,
}

impl HexsideSpec {
    /// The feature along the hexside as play sees it: a hedge is bocage where an SSR makes
    /// every hedge so (B9.5).
    pub fn feature_with(&self, hedges_are_bocage: bool) -> Option<HexsideFeature> {
        Some(match self.feature? {
            HexsideFeature::Hedge if hedges_are_bocage => HexsideFeature::Bocage,
            f => f,
        })
    }
}

/// Ratings as printed on the counter: firepower-range-morale for MMC (`4-6-7`), morale and
/// leadership modifier for leaders (`9-1`). Kept as printed and read where a rule needs a figure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitSpec {
    pub id: UnitId,
    pub side: Side,
    pub kind: UnitKind,
    pub ratings: String,
    pub hex: Hex,
    pub morale: Morale,
    pub pinned: bool,
    pub cx: bool,
    pub concealed: bool,
    /// Hidden Initial Placement: on the map only in its owner's view until revealed.
    pub hidden: bool,
    /// Inexperienced MMC have 3 MF, not 4 (A4.1 background in the rules README).
    pub inexperienced: bool,
    /// A squad whose printed FP is underlined: it may add the Assault Fire bonus in its AFPh
    /// (A7.36). The ratings as the file writes them (`4-6-7`) cannot show the underline, so
    /// the scenario says it.
    #[serde(default)]
    pub assault_fire: bool,
    /// Vehicles only: MP allotment.
    pub mp: u16,
    /// Vehicles only: fully tracked (the only vehicles that may cross bocage, B9.54).
    pub fully_tracked: bool,
    /// Claims Wall Advantage during its setup (B9.322, the first of the five moments).
    pub wall_advantage: bool,
    /// Where it is in its hex's fortifications, and Column/Convoy status (B9.32).
    #[serde(default)]
    pub placement: Placement,
    /// The level of its Location in half levels when above the hex's base level (an upper
    /// building level or a rooftop, B23), kept while it stays in its setup hex; `None` = the
    /// hex's base level.
    #[serde(default)]
    pub level: Option<i16>,
    /// A broken unit that starts under Desperation Morale (A10.62): its DM counter.
    #[serde(default)]
    pub desperation_morale: bool,
    /// A squad's half-squad as its counter names it (`2-4-7` for a 4-6-7): the unit Casualty
    /// Reduction leaves (A7.302), whose ratings the engine then knows. `None`: not given, and
    /// the players enter them when it is reduced.
    #[serde(default)]
    pub half_squad: Option<String>,
}

/// A unit's place among its hex's fortifications, and Column/Convoy status: what B9.32 asks
/// before letting it hold WA. All false is a unit in the open part of its hex.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Placement {
    /// Beneath the hex's foxhole or trench (B27).
    pub entrenched: bool,
    /// Inside the hex's pillbox (B30).
    pub in_pillbox: bool,
    /// On top of the hex's Wire or Panji (B26, G9).
    pub above_wire: bool,
    /// On the hex's bridge (B6).
    pub on_bridge: bool,
    /// In Column or Convoy (E11, E12).
    pub column: bool,
}

/// A support weapon's fire ratings as its counter prints them: FP and normal range (A9.1)
/// and its Breakdown Number, B# (A9.7). They are counter data that differ by nationality and
/// weapon; no two sources at hand agree on a table of them, so the scenario gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwRatings {
    pub fp: u8,
    pub range: u8,
    pub breakdown: u8,
    /// The highest repair dr that repairs it once malfunctioned (A9.72), when the scenario
    /// gives one: the sources differ on it (one prints a number on each counter).
    #[serde(default)]
    pub repair: Option<u8>,
    /// Its Multiple ROF, the number in a square on the counter (A9.2), when the scenario gives
    /// one: an Original coloured dr of its IFT DR at or below it lets it fire again in that
    /// phase. None: it fires once a phase.
    #[serde(default)]
    pub rof: Option<u8>,
}

/// The highest Multiple ROF a scenario may give a weapon: the coloured dr is a die, and a
/// ROF of 6 or more would keep it firing for ever in one phase.
pub const ROF_MAX: u8 = 5;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeaponSpec {
    pub id: String,
    pub name: String,
    /// Portage cost in PP (A4.4).
    pub pp: u8,
    /// Its FP, range and B# (A9.1, A9.7), if the scenario gives them: a weapon without them
    /// is not fired by the engine.
    #[serde(default)]
    pub ratings: Option<SwRatings>,
    /// The unit that possesses it at start (A4.43), or none when it lies in `hex` unpossessed.
    pub held_by: Option<UnitId>,
    pub hex: Hex,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tunnel {
    pub side: Side,
    pub entrances: [Hex; 2],
}
