//! A scenario's set-up step: the units that start off the boards, where each side may set
//! them up, in which order the sides do it, and the units that enter later from an edge.
//!
//! A scenario card says it in words ("the Russians set up first, on board 3 in hexrows A–E";
//! "the Germans enter on Turn 2 along the west edge"); the file says the same in `[setup]` and
//! in each unit's `offboard` / `enters`. The checked form here is what the rules layer
//! (`rules::setup`) rules by and what the game carries in its log's first event.

use crate::hex::{Direction, Hex};
use crate::model::{HexSpec, Morale, Side, UnitId, UnitKind};
use crate::terrain::{Fortification, Terrain};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The set-up a scenario asks for before Turn 1 (A2, A12.12).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// The sides in the order they set up: the scenario card names who sets up first, and
    /// that side sets up out of the other's sight (A12.12).
    pub order: Vec<Side>,
    /// The hexes each side may set up in, indexed by [`Side`] (A then B).
    pub areas: [BTreeSet<Hex>; 2],
    /// Units that start off the boards: to set up, or to enter later.
    pub units: BTreeMap<UnitId, OffboardUnit>,
    /// Support weapons of the order of battle (A4.43): those an off-board unit possesses go
    /// where their holder goes; the others are their side's to give, each to a unit of its
    /// own as it sets it up (as a set-up save leaves them, in the margin beside the units).
    pub weapons: BTreeMap<String, OffboardWeapon>,
}

impl Setup {
    /// The hexes `side` may set up in.
    pub fn area(&self, side: Side) -> &BTreeSet<Hex> {
        &self.areas[side as usize]
    }

    /// Units `side` sets up before Turn 1 (not those entering later).
    pub fn to_set_up(&self, side: Side) -> impl Iterator<Item = &OffboardUnit> {
        self.units
            .values()
            .filter(move |u| u.side == side && u.enters.is_none())
    }

    /// Whether any unit sets up before Turn 1: only then is there a set-up step.
    pub fn has_set_up_step(&self) -> bool {
        self.units.values().any(|u| u.enters.is_none())
    }

    /// The weapons `side` gives to its units as it sets them up (none possesses them yet).
    pub fn to_give(&self, side: Side) -> impl Iterator<Item = &OffboardWeapon> {
        self.weapons
            .values()
            .filter(move |w| w.side == side && w.held_by.is_none())
    }

    /// The sides that set up, in order, leaving out a side with nothing to place.
    pub fn setting_up(&self) -> Vec<Side> {
        self.order
            .iter()
            .copied()
            .filter(|s| self.to_set_up(*s).next().is_some())
            .collect()
    }
}

/// A unit off the boards at the start, with what the scenario allows it at set-up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffboardUnit {
    pub id: UnitId,
    pub side: Side,
    pub kind: UnitKind,
    pub ratings: String,
    pub morale: Morale,
    pub inexperienced: bool,
    /// Underlined FP: Assault Fire in the AFPh (A7.36).
    #[serde(default)]
    pub assault_fire: bool,
    pub mp: u16,
    pub fully_tracked: bool,
    /// Its OB gives it a "?": it may set up concealed, in Concealment Terrain (A12.12).
    pub may_conceal: bool,
    /// An SSR lets it set up hidden (HIP, A12.3).
    pub may_hide: bool,
    /// It enters later instead of setting up (A2.51): on this turn, along this edge.
    pub enters: Option<Entry>,
    /// A squad's half-squad, as its counter names it (A7.302; `UnitSpec::half_squad`).
    #[serde(default)]
    pub half_squad: Option<String>,
}

/// When and where a unit enters from off board (A2.51).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The Game Turn from which it may enter, in its side's MPh.
    pub turn: u16,
    pub edge: Edge,
}

/// An edge of the map, as scenario cards name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    North,
    East,
    South,
    West,
}

impl Edge {
    pub fn name(self) -> &'static str {
        match self {
            Edge::North => "north",
            Edge::East => "east",
            Edge::South => "south",
            Edge::West => "west",
        }
    }

    /// The directions that lead off the map across this edge.
    fn outward(self) -> &'static [Direction] {
        match self {
            Edge::North => &[Direction::N],
            Edge::South => &[Direction::S],
            Edge::East => &[Direction::NE, Direction::SE],
            Edge::West => &[Direction::NW, Direction::SW],
        }
    }

    /// Whether `hex` lies on this edge of the map `hexes`: a step outward across the edge
    /// leaves the map. (Hexes on different boards are never adjacent to the engine, so on a
    /// map of several boards every board's own edges count; the scenario names its hexes.)
    pub fn holds(self, hex: Hex, hexes: &BTreeMap<Hex, HexSpec>) -> bool {
        hexes.contains_key(&hex)
            && self
                .outward()
                .iter()
                .any(|d| hex.step(*d).is_none_or(|h| !hexes.contains_key(&h)))
    }
}

/// A support weapon of a side's order of battle off the boards at the start (A4.43).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffboardWeapon {
    pub id: String,
    pub name: String,
    pub pp: u8,
    /// Its FP, range and B# (A9.1, A9.7), if the scenario gives them.
    #[serde(default)]
    pub ratings: Option<crate::model::SwRatings>,
    pub side: Side,
    /// The off-board unit that possesses it; `None` for one its side gives to a unit of its
    /// own at set-up ([`Setup::to_give`]).
    pub held_by: Option<UnitId>,
}

/// Concealment Terrain, where an OB-given "?" may set up (A12.12): woods, building, brush,
/// grain, marsh, orchard (rubble too, which the engine does not model).
pub fn concealment_terrain(terrain: Terrain) -> bool {
    matches!(
        terrain,
        Terrain::Woods
            | Terrain::StoneBuilding
            | Terrain::WoodenBuilding
            | Terrain::Brush
            | Terrain::Grain
            | Terrain::Marsh
            | Terrain::Orchard
    )
}

/// Whether the set-up step may place a unit in the hex at all: not terrain the engine does
/// not model (B1), rubble, a Blaze, a Water Obstacle, nor a fortification it has no figures
/// for ([`unmodelled_fortification`]).
pub fn placeable(spec: &HexSpec) -> bool {
    spec.unmodelled.is_none()
        && !spec.rubble
        && !spec.blaze
        && !spec.water_obstacle
        && unmodelled_fortification(spec).is_none()
}

/// The fortification of a hex the engine has no figures for entering or being placed at:
/// Wire, Panji, a pillbox or a bridge (where in the hex a unit would be — on, in, under or
/// beside it — and what that costs, the engine does not rule on). One list: entering
/// (`rules::fortification::check_enter`), set-up placement and the loader's room check
/// ([`room_for`]) all read it.
pub fn unmodelled_fortification(spec: &HexSpec) -> Option<Fortification> {
    spec.fortifications.iter().copied().find(|f| {
        matches!(
            f,
            Fortification::Wire
                | Fortification::Panji
                | Fortification::Pillbox
                | Fortification::Bridge
        )
    })
}

/// Why `side` could not place its whole set-up in its area whatever it did, or `None`: each
/// hex holds three squad equivalents and four SMC of a side (A5.1), and a Dummy needs a hex of
/// Concealment Terrain (A12.11, A12.12). A scenario that fails this would leave the side
/// nothing it could do, so it is refused as it is read.
pub(crate) fn room_for(
    setup: &Setup,
    side: Side,
    hexes: &BTreeMap<Hex, HexSpec>,
) -> Option<String> {
    use crate::model::{Stack, STACK_HALF_SQUADS_MAX, STACK_SMC_MAX};
    let usable: Vec<&HexSpec> = setup
        .area(side)
        .iter()
        .filter_map(|h| hexes.get(h))
        .filter(|s| placeable(s))
        .collect();
    let mut need = Stack::default();
    let mut dummies = false;
    for u in setup.to_set_up(side) {
        need.add(u.kind);
        dummies |= u.kind == UnitKind::Dummy;
    }
    let n = usable.len() as u16;
    if need.half_squads > n * STACK_HALF_SQUADS_MAX || need.smc > n * STACK_SMC_MAX {
        return Some(format!(
            "its set-up area has {n} hex(es) a unit may be placed in: too few for its units without overstacking (A5.1)"
        ));
    }
    if dummies && !usable.iter().any(|s| concealment_terrain(s.terrain)) {
        return Some(
            "it sets up a Dummy, and its set-up area has no Concealment Terrain for a \"?\" (A12.12)"
                .into(),
        );
    }
    None
}

/// A span of hexrow letters or hex numbers as a scenario card writes it: `A-E`, `A–E`, `C`,
/// `1-5`. Returns the inclusive bounds, read by `one` (a letter pair or a number).
pub(crate) fn span<T: Ord + Copy>(text: &str, one: impl Fn(&str) -> Option<T>) -> Option<(T, T)> {
    let text = text.trim();
    let (a, b) = match text.split_once(['-', '–']) {
        Some((a, b)) => (one(a.trim())?, one(b.trim())?),
        None => {
            let x = one(text)?;
            (x, x)
        }
    };
    Some((a.min(b), a.max(b)))
}

/// A hexrow's letters as a column number (A = 1 … GG = 33), read as hex names read it.
pub(crate) fn hexrow(letters: &str) -> Option<u16> {
    if letters.is_empty() || !letters.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    format!("{letters}1").parse::<Hex>().ok().map(|h| h.column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_cards_write_them() {
        assert_eq!(span("A-E", hexrow), Some((1, 5)));
        assert_eq!(span("E – A", hexrow), Some((1, 5)));
        assert_eq!(span("AA-GG", hexrow), Some((27, 33)));
        assert_eq!(span("C", hexrow), Some((3, 3)));
        assert_eq!(span("1-5", |t| t.parse::<u16>().ok()), Some((1, 5)));
        assert_eq!(span("A-", hexrow), None);
        assert_eq!(span("AB", hexrow), None);
    }
}
