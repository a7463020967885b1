//! The game state and the one function that changes it, [`apply`].
//!
//! `apply` cannot fail: every event in a log was already decided, so applying it is a matter
//! of bookkeeping. Live play and replay both run through it, which is why replaying a log
//! yields the same state (and the same [`Game::state_hash`]) on the server and on any client.
//!
//! The game layer also holds what the state is made of and changed by: [`event`]s,
//! [`command`]s, the [`phase`] and clock table, and the logged [`dice`] rolls. It imports
//! only from the board.

pub mod command;
pub mod dice;
pub mod event;
pub mod phase;
pub mod timing;
pub mod view;

use crate::command::Outcome;
use crate::event::{each_event, Event, Fact};
use crate::event::{
    GameCreated, MultipleRofRetained, TunnelUseSighted, UnitSetUp, WeaponMalfunctioned,
    WeaponRepairAttempted,
};
use crate::phase::{Clock, Phase};
use board::hex::Hex;
use board::scenario::{Morale, Scenario, Side, UnitId, UnitKind, UnitSpec};
use board::terrain::Mf;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A part of the game shared between copies until one of them changes it. A decision looks
/// ahead on a copy of the whole game, and checkpoints and projections are copies too; most
/// commands (a `done`, a phase change) touch neither the units nor the weapons, so those copies
/// share them instead of allocating every unit's strings again. Changing it through
/// `DerefMut` copies it first if another game still shares it (`Arc::make_mut`), so a copy
/// never sees another's change. Encoded as the value itself: the state hash does not see the
/// sharing.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CopyOnWrite<T>(Arc<T>);

impl<T: std::fmt::Debug> std::fmt::Debug for CopyOnWrite<T> {
    /// The value itself, as it is encoded: the sharing is not part of it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T> Deref for CopyOnWrite<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for CopyOnWrite<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T: Clone> CopyOnWrite<T> {
    /// The value itself: taken as it is when nothing else shares it, copied otherwise.
    pub fn into_inner(self) -> T {
        Arc::unwrap_or_clone(self.0)
    }
}

impl<T> CopyOnWrite<T> {
    /// Whether two copies still share one value: neither changed it since they parted.
    pub fn shared_with(&self, other: &CopyOnWrite<T>) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> From<T> for CopyOnWrite<T> {
    fn from(value: T) -> CopyOnWrite<T> {
        CopyOnWrite(Arc::new(value))
    }
}

impl<'a, T> IntoIterator for &'a CopyOnWrite<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        self.0.as_ref().into_iter()
    }
}

impl<A, T: FromIterator<A>> FromIterator<A> for CopyOnWrite<T> {
    fn from_iter<I: IntoIterator<Item = A>>(iter: I) -> CopyOnWrite<T> {
        CopyOnWrite::from(T::from_iter(iter))
    }
}

/// A unit's id as [`Units`] keys it: shared, so a copy of the map copies no id, and held as
/// one allocation (the count and the bytes together), not a pointer to a `String` that
/// points to the bytes (24 bytes a unit more; `game_memory` measures the units). Ordered,
/// compared and encoded as the id itself, and looked up by it (`Borrow<str>`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnitKey(Arc<str>);

impl Deref for UnitKey {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for UnitKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<UnitId> for UnitKey {
    fn from(id: UnitId) -> UnitKey {
        UnitKey(Arc::from(id))
    }
}

impl From<&str> for UnitKey {
    fn from(id: &str) -> UnitKey {
        UnitKey(Arc::from(id))
    }
}

impl std::fmt::Debug for UnitKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for UnitKey {
    /// As a `String` is encoded, so the log and the state hash are unchanged.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for UnitKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<UnitKey, D::Error> {
        UnitId::deserialize(deserializer).map(UnitKey::from)
    }
}

/// Every unit of a game by id, with the ids in each hex found once and kept until a unit
/// changes: the rules ask of a Location (who else is there, B9.32, A5.1) for many units after
/// every command, and a search of every unit for each of them grows with the square of a
/// scenario's size. The count of units under "?" is kept the same way. The index is derived, never stored: it is not encoded (the state hash and
/// the log see only the units), it is not compared, and any change to a unit through
/// `DerefMut` drops it, to be rebuilt by the next question.
///
/// Each unit is held [`CopyOnWrite`] too: the game is copied whole at every event (the
/// streams keep the game before it, a decision looks ahead on a copy), and a move changes a
/// few units of a hundred or more, so the first change after a copy copies the map's
/// pointers (its keys are [`UnitKey`]s) and the units changed, not every unit's strings.
/// Encoded as the units themselves, a map from id to unit.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Units {
    map: BTreeMap<UnitKey, CopyOnWrite<Unit>>,
    /// Every unit by hex, then id: the units themselves as the map shares them, so a
    /// question answers without a lookup by id, and the index is one sorted list built
    /// without copying an id. Held behind an `Arc`, so a copy of the units shares it until
    /// either changes.
    #[serde(skip)]
    by_hex: std::sync::OnceLock<Arc<HexIndex>>,
    /// Set once Wall Advantage was settled on these very units and left nothing to follow
    /// (`rules::wall_advantage::settle`): a command that changes no unit then has nothing to
    /// settle. Dropped with the index by any change.
    #[serde(skip)]
    settled: std::sync::OnceLock<()>,
    /// How many units are under "?" and not hidden: the aliases every event is checked
    /// against (`view::refresh_aliases`).
    #[serde(skip)]
    under_cover: std::sync::OnceLock<usize>,
    /// How many units are concealed or hidden: while none are, in the positions before and
    /// after an event, no viewer can see a unit renamed or a weapon come into sight with it
    /// (`view::project_event`'s short cut).
    #[serde(skip)]
    concealed_or_hidden: std::sync::OnceLock<usize>,
}

/// Every unit with its hex, sorted by hex and then id ([`Units::in_hex`]).
type HexIndex = Vec<(Hex, CopyOnWrite<Unit>)>;

/// Up to this many units, the units in a hex are found by looking at each: cheaper than
/// building the index again after each change, which a small game's units see at every
/// phase's end.
const UNITS_SCANNED_MAX: usize = 24;

impl Units {
    /// How many units are under "?" (concealed, not hidden), counted once per change.
    pub(crate) fn under_cover(&self) -> usize {
        *self.under_cover.get_or_init(|| {
            self.map
                .values()
                .filter(|u| u.concealed && !u.hidden)
                .count()
        })
    }

    /// How many units are concealed or hidden (A12: "?" counters, dummies among them; HIP,
    /// A12.3), counted once per change.
    pub fn concealed_or_hidden(&self) -> usize {
        *self.concealed_or_hidden.get_or_init(|| {
            self.map
                .values()
                .filter(|u| u.concealed || u.hidden)
                .count()
        })
    }

    /// Whether these units were found settled (see `settled`).
    pub fn settled(&self) -> bool {
        self.settled.get().is_some()
    }

    /// Notes that settling these units left nothing to follow: derived, like the index.
    pub fn mark_settled(&self) {
        let _ = self.settled.set(());
    }

    /// Every unit, in id order. (The map's own `values`, `get` and `iter` give each unit as
    /// it is shared; these give the unit.)
    pub fn values(
        &self,
    ) -> impl DoubleEndedIterator<Item = &Unit> + ExactSizeIterator + Clone + '_ {
        self.map.values().map(|u| &**u)
    }

    /// The unit `id`, if there is one.
    pub fn get<Q>(&self, id: &Q) -> Option<&Unit>
    where
        Q: std::borrow::Borrow<str> + ?Sized,
    {
        self.map.get(id.borrow()).map(|u| &**u)
    }

    /// Every unit with its id, in id order.
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&UnitId, &Unit)> + ExactSizeIterator + Clone + '_ {
        // Each unit is keyed by its own id (every insert is), so its id answers for the key.
        self.map.values().map(|u| (&u.id, &**u))
    }

    /// Every unit's id, in order.
    pub fn keys(
        &self,
    ) -> impl DoubleEndedIterator<Item = &UnitId> + ExactSizeIterator + Clone + '_ {
        self.map.values().map(|u| &u.id)
    }

    /// The unit `id` to change: copied first if another game still shares it, the others
    /// left shared.
    pub fn get_mut<Q>(&mut self, id: &Q) -> Option<&mut Unit>
    where
        Q: std::borrow::Borrow<str> + ?Sized,
    {
        self.deref_mut().get_mut(id.borrow()).map(|u| &mut **u)
    }

    /// Whether there is a unit `id`.
    pub fn contains_key<Q>(&self, id: &Q) -> bool
    where
        Q: std::borrow::Borrow<str> + ?Sized,
    {
        self.map.contains_key(id.borrow())
    }

    /// Takes the unit `id` out, as it is shared.
    pub fn remove<Q>(&mut self, id: &Q) -> Option<CopyOnWrite<Unit>>
    where
        Q: std::borrow::Borrow<str> + ?Sized,
    {
        self.deref_mut().remove(id.borrow())
    }

    /// Puts `unit` in under `id`, returning the unit it replaced. `id` is the unit's own id
    /// ([`Units::iter`] gives that for the key).
    pub fn insert(&mut self, id: UnitId, unit: Unit) -> Option<Unit> {
        debug_assert_eq!(id, unit.id, "a unit is keyed by its own id");
        self.deref_mut()
            .insert(UnitKey::from(id), CopyOnWrite::from(unit))
            .map(CopyOnWrite::into_inner)
    }

    /// The units whose hex is `hex` (eliminated ones included), in id order.
    pub fn in_hex(&self, hex: Hex) -> InHex<'_> {
        if self.map.len() <= UNITS_SCANNED_MAX {
            return InHex::Scanned(self.map.values(), hex);
        }
        let by_hex = self.by_hex.get_or_init(|| {
            let mut by_hex: HexIndex = self.map.values().map(|u| (u.hex, u.clone())).collect();
            // Stable: each hex's units stay in id order.
            by_hex.sort_by_key(|(hex, _)| *hex);
            Arc::new(by_hex)
        });
        let start = by_hex.partition_point(|(h, _)| *h < hex);
        let end = start + by_hex[start..].partition_point(|(h, _)| *h == hex);
        InHex::Indexed(by_hex[start..end].iter())
    }
}

/// The units of one hex ([`Units::in_hex`]): looked for among a few units, or read off the
/// index.
pub enum InHex<'a> {
    Scanned(
        std::collections::btree_map::Values<'a, UnitKey, CopyOnWrite<Unit>>,
        Hex,
    ),
    Indexed(std::slice::Iter<'a, (Hex, CopyOnWrite<Unit>)>),
}

impl<'a> Iterator for InHex<'a> {
    type Item = &'a Unit;
    fn next(&mut self) -> Option<&'a Unit> {
        match self {
            InHex::Scanned(units, hex) => units.find(|u| u.hex == *hex).map(|u| &**u),
            InHex::Indexed(units) => units.next().map(|(_, u)| &**u),
        }
    }
}

impl Deref for Units {
    type Target = BTreeMap<UnitKey, CopyOnWrite<Unit>>;
    fn deref(&self) -> &BTreeMap<UnitKey, CopyOnWrite<Unit>> {
        &self.map
    }
}

impl DerefMut for Units {
    fn deref_mut(&mut self) -> &mut BTreeMap<UnitKey, CopyOnWrite<Unit>> {
        // Whatever the caller changes, the index and the settling no longer hold.
        self.by_hex.take();
        self.settled.take();
        self.under_cover.take();
        self.concealed_or_hidden.take();
        &mut self.map
    }
}

impl<Q> std::ops::Index<&Q> for Units
where
    Q: std::borrow::Borrow<str> + ?Sized,
{
    type Output = Unit;
    /// The unit `id`; panics if there is none, as a map's index does.
    fn index(&self, id: &Q) -> &Unit {
        &self.map[id.borrow()]
    }
}

impl PartialEq for Units {
    fn eq(&self, other: &Units) -> bool {
        self.map == other.map
    }
}

impl Eq for Units {}

impl std::fmt::Debug for Units {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.map.fmt(f)
    }
}

impl From<BTreeMap<UnitId, Unit>> for Units {
    fn from(map: BTreeMap<UnitId, Unit>) -> Units {
        map.into_iter().collect()
    }
}

impl From<BTreeMap<UnitKey, CopyOnWrite<Unit>>> for Units {
    fn from(map: BTreeMap<UnitKey, CopyOnWrite<Unit>>) -> Units {
        Units {
            map,
            by_hex: Default::default(),
            settled: Default::default(),
            under_cover: Default::default(),
            concealed_or_hidden: Default::default(),
        }
    }
}

impl From<Units> for BTreeMap<UnitId, Unit> {
    /// The units themselves; the index goes with the rest of the value.
    fn from(units: Units) -> BTreeMap<UnitId, Unit> {
        units
            .map
            .into_iter()
            .map(|(id, unit)| (UnitId::from(&*id), unit.into_inner()))
            .collect()
    }
}

impl FromIterator<(UnitId, Unit)> for Units {
    fn from_iter<I: IntoIterator<Item = (UnitId, Unit)>>(iter: I) -> Units {
        Units::from(
            iter.into_iter()
                .map(|(id, unit)| (UnitKey::from(id), CopyOnWrite::from(unit)))
                .collect::<BTreeMap<_, _>>(),
        )
    }
}

impl FromIterator<(UnitId, CopyOnWrite<Unit>)> for Units {
    fn from_iter<I: IntoIterator<Item = (UnitId, CopyOnWrite<Unit>)>>(iter: I) -> Units {
        Units::from(
            iter.into_iter()
                .map(|(id, unit)| (UnitKey::from(id), unit))
                .collect::<BTreeMap<_, _>>(),
        )
    }
}

impl<'a> IntoIterator for &'a Units {
    type Item = (&'a UnitId, &'a Unit);
    type IntoIter = std::iter::Map<
        std::collections::btree_map::Values<'a, UnitKey, CopyOnWrite<Unit>>,
        fn(&'a CopyOnWrite<Unit>) -> (&'a UnitId, &'a Unit),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.map.values().map(|u| (&u.id, &**u))
    }
}

/// A unit as it stands now. Everything that changes during play lives here; the scenario's
/// [`UnitSpec`] is only the starting position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    pub id: UnitId,
    pub side: Side,
    pub kind: UnitKind,
    pub ratings: String,
    pub hex: Hex,
    pub morale: Morale,
    pub pinned: bool,
    pub cx: bool,
    pub concealed: bool,
    pub hidden: bool,
    pub inexperienced: bool,
    pub eliminated: bool,
    /// MF spent so far in the current MPh (A4.1).
    pub mf_spent: Mf,
    /// The leader this MMC has moved with from its first step of the MPh, which earns it
    /// +2 MF (A4.12 background in the rules README); `None` once it takes a step without him.
    pub led_by: Option<UnitId>,
    /// Declared Double Time this MPh: +1 MF, and the unit is CX (A4.5).
    pub double_time: bool,
    /// The Player Turn in which the unit became CX; the marker comes off at the end of the
    /// Player Turn after it (A4.51).
    pub cx_since: Option<(u16, u8)>,
    /// Every MF this MPh was spent along roads, so the road bonus still applies (A4.132).
    pub road_only: bool,
    /// Where the unit is in Bypass, if it is (A4.3): the hex and the far hexes of the hexsides
    /// it has moved along, in order.
    pub bypass: Option<Bypass>,
    /// PP portaged this MPh: counted once per item from the first MF spent, and never
    /// recouped by dropping the item (A4.4).
    pub portage_pp: u8,
    /// Holds Wall Advantage over every eligible wall/hedge hexside of its hex (B9.321).
    pub wall_advantage: bool,
    /// Failed to leave its Location this MPh, so it may not re-claim WA voluntarily until the
    /// MPh ends (B9.41).
    pub wa_blocked: bool,
    /// Beneath its hex, in a sewer or a tunnel (B8); `None` above ground.
    pub underground: Option<Underground>,
    /// Its place among its hex's fortifications, and Column/Convoy status (B9.32).
    #[serde(default)]
    pub placement: board::scenario::Placement,
    /// Paid the shellholes' own cost to enter its hex this MPh, so it has their +1 even
    /// against Defensive First Fire (B2); a unit that paid Open Ground cost has not.
    #[serde(default)]
    pub shellhole_cover: bool,
    /// Hexes it entered this MPh: Assault Movement enters one Location (A4.61).
    #[serde(default)]
    pub hexes_entered: u8,
    /// Declared Assault Movement this MPh (A4.61): it enters one Location and keeps an MF, and
    /// First Fire at it takes no FFNAM (A4.6).
    #[serde(default)]
    pub assault_moving: bool,
    /// Under Desperation Morale (A10.62): a broken unit's DM counter, which both sides see.
    /// Set and cleared only by `DesperationMoraleMarked` / `DesperationMoraleRemoved`.
    #[serde(default)]
    pub desperation: bool,
    /// Wounded (A17): an SMC marked by a Wound counter, its Morale Level and leadership one
    /// worse and its MF three (A17.2, A17.3). Set only by a wound (`Outcome::Wound`, A17.11);
    /// a second wound changes nothing more, so it is a flag and not a count.
    #[serde(default)]
    pub wounded: bool,
}

/// Where a unit below ground is, and what the sewer rules have said of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Underground {
    /// In the sewer beneath its hex (level −1, B8.2), under a "Sewer?" or "Lost?" counter.
    Sewer {
        lost: bool,
        /// Moved this MPh, as units in a sewer must (B8.41).
        moved: bool,
        /// The Sewer Emergence Chart's result this Game Turn (B8.42).
        emergence: Option<Emergence>,
    },
    /// In a tunnel, beneath "Sewer?" at the exit it must advance out of in the APh (B8.61).
    Tunnel,
}

/// The Sewer Emergence Chart's results (B8.42).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Emergence {
    /// Final dr ≤ 4: may emerge concealed in the APh.
    MayEmerge,
    /// 5–6: cannot emerge this Game Turn.
    CannotEmerge,
    /// ≥ 7: discovered — cannot emerge this Game Turn, subject to Defensive Fire from enemy
    /// Infantry in the Manhole Location without concealment, and may attack it in the AFPh.
    Discovered,
}

impl Emergence {
    /// The outcome in players' words (B8.42).
    pub fn describe(self) -> &'static str {
        match self {
            Emergence::MayEmerge => "may emerge concealed in the APh; not subject to Defensive Fire meanwhile",
            Emergence::CannotEmerge => "cannot emerge this Game Turn; not subject to Defensive Fire meanwhile",
            Emergence::Discovered => "discovered: cannot emerge this Game Turn, subject to Defensive Fire from enemy Infantry in the Manhole Location without concealment",
        }
    }
}

/// A secretly recorded tunnel as it stands in play (B8.6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelState {
    pub side: Side,
    pub entrances: [Hex; 2],
    /// Used in the open, so the opponent knows it (and may destroy it, B8.63).
    pub revealed: bool,
    pub destroyed: bool,
}

/// A lost sewer stack waiting for the DEFENDER to say where it goes (B8.41).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerDesignation {
    pub defender: Side,
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub options: Vec<Hex>,
}

/// A unit moving around the obstacle of a woods/building hex rather than through it (A4.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bypass {
    pub hex: Hex,
    /// The hex the unit came from: the first hexside it moves along joins the one it crossed.
    pub entered_from: Hex,
    /// The hexsides traversed, each named by the hex across it, in order.
    pub along: Vec<Hex>,
    /// The Bypass cost of this hex: the other terrain's COT, doubled if the hex is higher.
    pub base: Mf,
    /// More than two hexsides have been used, so the base has been paid twice (A4.31).
    pub doubled: bool,
}

impl Bypass {
    /// The two hexes (besides the bypassed one) that meet at the vertex where the unit stands:
    /// the far end of the last hexside it moved along. Only these can be entered next
    /// (A4.31 EX: from D4-C4-C5 Bypass, only C5 or D5).
    ///
    /// The engine's own Bypass always traverses a hexside; one with none (a state a hostile
    /// server sent a client) stands where it came from, rather than ending the client.
    pub fn exits(&self, geometry: board::geometry::Geometry<'_>) -> [Hex; 2] {
        let Some(&last) = self.along.last() else {
            return [self.entered_from, self.entered_from];
        };
        let before = match self.along.len() {
            1 => self.entered_from,
            n => self.along[n - 2],
        };
        let onward = geometry
            .neighbours(self.hex)
            .into_iter()
            .find(|n| *n != before && geometry.is_adjacent(*n, last))
            .unwrap_or(last);
        [last, onward]
    }
}

/// The units of one side that may claim WA now because the enemy lost it (B9.322).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaChance {
    pub side: Side,
    pub units: Vec<UnitId>,
}

/// Enemy WA holders, all concealed or dummies, challenged by a claim (B9.324): `side` must
/// show a real one or forfeit, and the claim of `claimants` at moment `how` then stands or fails.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaChallenge {
    pub side: Side,
    pub holders: Vec<UnitId>,
    pub claimants: Vec<UnitId>,
    pub how: crate::event::WaClaim,
}

/// A Location's Close Combat stopped half-resolved by an Original CC DR of 2 or 12 (A11.22):
/// `side` may have `units` infiltrate out of it (withdraw at once, unattacked) or decline, and
/// the resolution then goes on from what is kept here. The rest is the resolution as it stood
/// (`rules::close_combat`): each attack is read from the position before the CC, so the
/// units its results changed are kept as they were then (`before`). Every unit named here is
/// one both sides see, but the defenders of an attack left on a "?", named by the alias each
/// viewer knows (`view::rename_unit`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CcInfiltration {
    pub hex: Hex,
    /// The side asked: the units that may infiltrate are its own.
    pub side: Side,
    pub units: Vec<UnitId>,
    /// The Original CC DR that gave the chance: 2 (the units that rolled it) or 12 (the
    /// units it attacked).
    pub original: u8,
    /// The side whose designation resolves the CC: every roll names it.
    pub by: Side,
    /// The side that ambushed the other there (A11.4), if one did.
    pub ambusher: Option<Side>,
    /// The attacks not rolled yet, each with its side, first to roll first.
    pub left: Vec<(Side, crate::command::CcAttack)>,
    /// Both sides' withdrawals from Melee (A11.2), still to be made.
    pub withdrawals: Vec<crate::command::CcWithdrawal>,
    pub withdrawing: BTreeSet<UnitId>,
    /// Units that declined the CC by Ambush Withdrawal (A11.41).
    pub declined: BTreeSet<UnitId>,
    /// Units revealed by their own CC attack (A11.19).
    pub revealing: BTreeSet<UnitId>,
    pub eliminated: BTreeSet<UnitId>,
    /// Units Casualty Reduced so far.
    pub changed: BTreeSet<UnitId>,
    /// Units that infiltrated out of the CC so far.
    pub infiltrated: BTreeSet<UnitId>,
    /// Something in the CC is the players' to adjudicate: they record the Melee.
    pub partial: bool,
    /// The units the CC changed so far, as they were before it.
    pub before: Vec<Unit>,
}

impl CcInfiltration {
    /// The unit ids it names that may be a "?" (the defenders of an attack left on one), with
    /// the rest of its lists, to rename one (`view::rename_unit`). Its sets name only units
    /// both sides see: revealed by their attack, attacked by a roll, or withdrawing in the
    /// open.
    pub fn ids_mut(&mut self) -> impl Iterator<Item = &mut UnitId> {
        self.units
            .iter_mut()
            .chain(
                self.left
                    .iter_mut()
                    .flat_map(|(_, a)| a.attackers.iter_mut().chain(a.defenders.iter_mut())),
            )
            .chain(self.withdrawals.iter_mut().flat_map(|w| w.units.iter_mut()))
    }
}

/// The moment B9.324 gives a HIP unit's owner: enemy `claimants` moved adjacent and attempt to
/// claim WA at moment `how`; `side` may place a hidden unit and claim first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaHipWindow {
    pub side: Side,
    pub claimants: Vec<UnitId>,
    pub how: crate::event::WaClaim,
}

/// Residual FP in a Location (A8.2): the side whose First Fire left it, and its FP (`None`
/// when the engine does not rule how much, and the players determine it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residual {
    pub by: Side,
    pub fp: Option<u8>,
}

/// One attack declared in this Player Turn, as the fire rules that span a phase or a Player
/// Turn read it (`Game::fire_record`): which units were named among its firers (their own FP,
/// or a leader's direction) and which support weapons fired in it, in which phase, and what it
/// fired at — the target the Mandatory Fire Group rule compares (A7.55).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiredAttack {
    pub phase: Phase,
    pub firers: Vec<UnitId>,
    pub weapons: Vec<String>,
    /// The hex fired at (`AttackDeclared::target`).
    pub target: Hex,
    /// Fired into the sewer beneath `target`: another Location than the hex's (B8.3).
    pub into_sewer: bool,
    /// In the MPh, the moving units Defensive First Fire struck in `target` (A8.1), each with
    /// the MF it had spent in the MPh when fired on: two attacks that struck a unit at the same
    /// count answered the same "simultaneous" MF expenditure (A7.55, A8.1), since every
    /// expenditure raises the count. Empty in every other phase, where a Location's units are
    /// its targets alike (A7.4).
    pub movers: Vec<(UnitId, Mf)>,
}

/// A unit's MF in the Location it stands in, in this MPh, as the limit on Defensive First Fire
/// at a moving unit counts them (A8.3, A9.2): no DEFENDER unit or weapon fires on it there more
/// times than the MF it spent there, fractions dropped, though once in a hex always.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocationMf {
    /// The hex of the Location (above ground: fire at a unit below is not First Fire).
    pub hex: Hex,
    /// The MF it spent there: entering it, and every MF spent since without leaving it
    /// (Recovery, going on round the hex in Bypass, an entry stopped by a concealed enemy).
    pub mf: Mf,
    /// How often each DEFENDER unit or support weapon, by its id, was declared firing at it
    /// there (`AttackDeclared`).
    pub fired_on_by: BTreeMap<String, u8>,
}

/// An attack between its declaration and its resolution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredAttack {
    pub by: Side,
    pub firers: Vec<UnitId>,
    /// The support weapons firing, each by its possessor (A9.11).
    #[serde(default)]
    pub weapons: Vec<String>,
    pub target: Hex,
    /// The units holding WA when the attack was declared: the enemy's chance to claim, for a
    /// holder the attack breaks or eliminates, is judged against them once it is resolved
    /// (B9.322).
    #[serde(default)]
    pub wa_holders: BTreeSet<UnitId>,
    /// Declared into the sewer beneath `target` (B8.3): its targets are the units below.
    #[serde(default)]
    pub into_sewer: bool,
}

/// A support weapon as it stands now (A4.4, A4.43).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Weapon {
    pub id: String,
    pub name: String,
    pub pp: u8,
    /// The unit possessing it, or `None` when it lies unpossessed in `hex`.
    pub held_by: Option<UnitId>,
    pub hex: Hex,
    /// Already portaged this phase: no item is portaged twice in one phase (A4.4).
    pub portaged: bool,
    /// Its FP, range and B# as the scenario gives them (A9.1, A9.7).
    #[serde(default)]
    pub ratings: Option<board::scenario::SwRatings>,
    /// Malfunctioned (A9.7): it does not fire until repaired.
    #[serde(default)]
    pub malfunctioned: bool,
    /// Already fired this phase, and not kept its Multiple ROF (A9.2): it fires no more in it.
    #[serde(default)]
    pub fired: bool,
    /// A repair was attempted this phase (A9.72): one attempt a RPh.
    #[serde(default)]
    pub repair_tried: bool,
}

/// A Location of a hex other than its ground level, as an unpossessed weapon lies in one
/// (`Game::weapon_lies`) and a unit stands in one (`Game::lies_at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lies {
    /// A building's upper level, by its level number (the scenario's `level`, A5.1).
    Level(i16),
    /// The sewer beneath the hex (B8.2).
    Sewer,
    /// A tunnel beneath it (B8.6).
    Tunnel,
}

impl Unit {
    fn from_spec(spec: &UnitSpec) -> Unit {
        Unit {
            id: spec.id.clone(),
            side: spec.side,
            kind: spec.kind,
            ratings: spec.ratings.clone(),
            hex: spec.hex,
            morale: spec.morale,
            pinned: spec.pinned,
            cx: spec.cx,
            concealed: spec.concealed,
            hidden: spec.hidden,
            inexperienced: spec.inexperienced,
            eliminated: false,
            mf_spent: Mf::default(),
            led_by: None,
            double_time: false,
            cx_since: None,
            road_only: true,
            bypass: None,
            portage_pp: 0,
            wall_advantage: spec.wall_advantage,
            wa_blocked: false,
            underground: None,
            placement: spec.placement,
            shellhole_cover: false,
            hexes_entered: 0,
            assault_moving: false,
            desperation: spec.desperation_morale,
            wounded: false,
        }
    }

    /// A unit of the scenario's set-up, placed in `hex` (A12.12) or entering there (A2.51).
    pub fn from_offboard(
        spec: &board::setup::OffboardUnit,
        hex: Hex,
        concealed: bool,
        hidden: bool,
    ) -> Unit {
        Unit {
            id: spec.id.clone(),
            side: spec.side,
            kind: spec.kind,
            ratings: spec.ratings.clone(),
            hex,
            morale: spec.morale,
            pinned: false,
            cx: false,
            concealed,
            hidden,
            inexperienced: spec.inexperienced,
            eliminated: false,
            mf_spent: Mf::default(),
            led_by: None,
            double_time: false,
            cx_since: None,
            road_only: true,
            bypass: None,
            portage_pp: 0,
            wall_advantage: false,
            wa_blocked: false,
            underground: None,
            placement: Default::default(),
            shellhole_cover: false,
            hexes_entered: 0,
            assault_moving: false,
            desperation: false,
            wounded: false,
        }
    }

    pub fn is_good_order(&self) -> bool {
        self.morale == Morale::GoodOrder && !self.eliminated
    }
}

/// Who has moved in the current MPh, for the one-unit-at-a-time rule (A4.2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovementRecord {
    /// The stack that is moving now: every member must finish before another unit moves.
    pub moving_stack: BTreeSet<UnitId>,
    /// The units that took the most recent step.
    pub last_movers: BTreeSet<UnitId>,
    /// Units that moved and stopped while another unit moved: they may move no farther (A4.2).
    pub finished: BTreeSet<UnitId>,
    /// Units whose leader failed the 4TC to take them into a sewer this MPh (B8.4).
    pub sewer_check_failed: BTreeSet<UnitId>,
    /// Manholes units went down this MPh: all who enter one do so at the start of the MPh, in
    /// one sewer Location, so they move as one combined stack (B8.4, B8.41).
    pub sewer_entries: BTreeSet<Hex>,
    /// Units that advanced this APh: one Location each (A4.7).
    pub advanced: BTreeSet<UnitId>,
    /// Hexes whose Close Combat ended in Melee this CCPh (A11.7).
    pub melee: BTreeSet<Hex>,
    /// The ATTACKER's CC attacks designated this CCPh, by Location, waiting for the
    /// DEFENDER's (A11.12).
    #[serde(default)]
    pub cc_designated: BTreeMap<Hex, Vec<crate::command::CcAttack>>,
    /// The ATTACKER's withdrawals from Melee declared with his CC attacks this CCPh, by
    /// Location, waiting with them for the DEFENDER's designation (A11.2, A11.12).
    #[serde(default)]
    pub cc_withdrawals: BTreeMap<Hex, Vec<crate::command::CcWithdrawal>>,
    /// Locations whose CC the rules resolved this CCPh (A11.11).
    #[serde(default)]
    pub cc_resolved: BTreeSet<Hex>,
    /// The side that ambushed the other in each CC Location this CCPh (A11.4), as the Ambush
    /// check at the end of the APh found it. Both sides saw the drs.
    #[serde(default)]
    pub ambush: BTreeMap<Hex, Side>,
    /// Units that attempted to rally this Player Turn (A10.6: one attempt each). The RPh
    /// comes before the MPh, whose end forgets them with the rest.
    pub rallied: BTreeSet<UnitId>,
    /// Enemy units that were under "?" in the ground-level Location of a hex a unit went round
    /// in Bypass this MPh: their "?" is due to go as the MPh ends (A4.33), when
    /// `rules::concealment::lost_by_bypass` takes it from those still under it. Recorded by
    /// `UnitBypassed` from the units there as it applies, so every projection records the
    /// units it shows there (by alias, for the mover's side), and hidden units none.
    #[serde(default)]
    pub bypassed_concealed: BTreeSet<UnitId>,
    /// Units that dropped a weapon at the start of this CCPh: they did so to withdraw from
    /// Melee (A4.43), so their side's designation names them withdrawing
    /// (`rules::close_combat`). Both sides saw the drop.
    #[serde(default)]
    pub dropped_to_withdraw: BTreeSet<UnitId>,
    /// The Recovery attempts of this RPh or MPh (A4.44), by the weapon tried for: the units
    /// that tried it. A unit tries for a weapon once a MPh, and a Recovery in the RPh is its
    /// sole act there (it neither repairs nor leads a rally, and one that did does not try).
    /// Both sides saw each attempt (under "?" by the unit's alias); forgotten as the phase ends.
    #[serde(default)]
    pub recovery_attempts: BTreeMap<String, BTreeSet<UnitId>>,
    /// The type of act each unit attempted in this RPh, the one record every RPh command asks
    /// (`rules::rally_phase`): a unit attempts one type of act in a RPh (A3.1), a Recovery
    /// there being its sole act (A4.44), and a leader who leads a rally attempts one (A10.6,
    /// A10.7). Written by the act's own event as it applies, for the unit rather than for a
    /// weapon, so a repair whose dr of 6 eliminated the weapon is still the unit's act. Both
    /// sides saw each act (a hidden unit or one under "?" makes none but a Recovery, named by
    /// its alias); forgotten as the RPh ends.
    #[serde(default)]
    pub rally_phase_acts: BTreeMap<UnitId, RallyPhaseAct>,
}

/// Records `unit`'s act of the RPh as its act's event applies (`MovementRecord::
/// rally_phase_acts`); outside the RPh nothing. The first act stays: `decide` refuses another
/// type (`rules::rally_phase`).
pub(crate) fn record_rally_phase_act(game: &mut Game, unit: &UnitId, act: RallyPhaseAct) {
    if game.clock.phase() == phase::Phase::Rally {
        game.movement
            .rally_phase_acts
            .entry(unit.clone())
            .or_insert(act);
    }
}

/// The types of act a unit may attempt in the RPh, one type a unit in each (A3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RallyPhaseAct {
    /// Its own rally attempt, or a leader's leading of another's (A10.6, A10.7).
    Rally,
    /// A Recovery attempt at the start of the RPh (A4.44).
    Recovery,
    /// A repair attempt of a malfunctioned weapon it possesses (A9.72).
    Repair,
    /// Giving or taking a SW by Transfer (A4.431).
    Transfer,
}

impl RallyPhaseAct {
    /// The act in words, as a refusal names it.
    pub fn words(self) -> &'static str {
        match self {
            RallyPhaseAct::Rally => "attempted a rally or led one",
            RallyPhaseAct::Recovery => "attempted a Recovery",
            RallyPhaseAct::Repair => "attempted a repair",
            RallyPhaseAct::Transfer => "gave or took a SW by Transfer",
        }
    }
}

/// The whole state of one game: the rules' working state, bookkeeping included. Its layout is
/// free to change: clients are sent a `wire::Position` and the state hash covers `Meaning`,
/// each built by naming every field here, so a new field compiles only once its author decides
/// what each viewer sees of it (`project`), whether it is sent (`wire::Position`) and whether
/// it is part of the hash (`Meaning`). Its own encoding is still that of the stored log's undo
/// events (`Event::EventsUndone`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    /// Shared, never changed in play: cloning a game (a decision's look ahead, a projection,
    /// a checkpoint) copies a pointer, not the map and its string-keyed tables. Encoded as the
    /// scenario itself, so the state hash does not see the sharing.
    pub scenario: Arc<Scenario>,
    pub clock: Clock,
    pub units: CopyOnWrite<Units>,
    pub weapons: CopyOnWrite<BTreeMap<String, Weapon>>,
    /// Shared with copies until changed, as the units are: most commands (every `done`, every
    /// step that ends) change none of its sets, and the decision's look-ahead, the passing
    /// check and the checkpoints each copy the whole game.
    pub movement: CopyOnWrite<MovementRecord>,
    /// A chance to claim WA that one side must take or decline before play goes on
    /// (B9.322: all enemy units sharing its hexsides lost WA).
    pub wa_chance: Option<WaChance>,
    /// An attack declared and not yet resolved: no WA may change in its target hex until it is
    /// (B9.322).
    pub attack: Option<DeclaredAttack>,
    /// A lost sewer stack waiting for the DEFENDER's choice (B8.41).
    pub sewer_designation: Option<SewerDesignation>,
    /// Movers' WA claim waiting while the enemy may place a hidden unit and claim first
    /// (B9.324).
    #[serde(default)]
    pub wa_hip_window: Option<WaHipWindow>,
    /// A challenge to concealed WA holders waiting for their side's answer (B9.324).
    #[serde(default)]
    pub wa_challenge: Option<WaChallenge>,
    /// Concealed units shown to the opponent as real (B9.324): he knows them for real units
    /// from then on, so they are not challenged again.
    #[serde(default)]
    pub wa_shown: BTreeSet<UnitId>,
    /// Tunnels as they stand; the opponent's are projected away until revealed.
    pub tunnels: Vec<TunnelState>,
    /// Road Manholes the ATTACKER declared out of Known enemy LOS (or Hindered ≥ +2) this MPh,
    /// standing in for LOS until the engine traces it (B8.42 drm).
    pub unseen_manholes: BTreeSet<Hex>,
    /// Dice drawn so far: the next roll's first draw number (see `dice::SeededDice`).
    pub dice_drawn: u64,
    /// Set once the last step of the last Game Turn has ended, or a side conceded, or both
    /// agreed to end the game.
    pub over: bool,
    /// The side whose offer to end the game stands (`rules::end`); withdrawn when the
    /// step it was made in ends.
    pub end_proposal: Option<Side>,
    /// Whose view this is: `None` for the whole game (the server's), a viewer for a projection.
    /// A projection keeps masking what its viewer may not know as events are applied to it.
    pub viewer: Option<Viewer>,
    /// Number of events applied: the version every message about this game carries. In a
    /// projection, the number of events its viewer has received (`view`).
    pub version: u64,
    /// Units that were among the firers of an attack declared in this Player Turn's PFPh: they
    /// do not move in its MPh (A4.1), and fire no more in it (A7.1). Those that fire in its
    /// AFPh join them, so that they fire only once there. Cleared when the Player Turn ends.
    pub prep_fired: BTreeSet<UnitId>,
    /// DEFENDER units marked First Fire: they fired in this MPh (A8.1) and may fire again in
    /// it only as Subsequent First Fire (A8.3), and in the DFPh only at adjacent units (A8.4).
    /// A support weapon's own counter is here by the weapon's id, put on once its ROF is spent
    /// (A8.1). Both sides see the counters. Cleared when the DFPh ends.
    #[serde(default)]
    pub first_fired: BTreeSet<UnitId>,
    /// DEFENDER units marked Final Fire: they fired as Subsequent First Fire (A8.3) or in the
    /// DFPh (A8.4); only Final Protective Fire is left to them (A8.31). Cleared when the DFPh
    /// ends.
    #[serde(default)]
    pub final_fired: BTreeSet<UnitId>,
    /// Residual FP left by Defensive First Fire in this MPh (A8.2), by hex: whose fire left
    /// it and how much (`None`: the players determine it). Both sides see it. Cleared when
    /// the MPh ends.
    #[serde(default)]
    pub residual_fp: BTreeMap<Hex, Residual>,
    /// Tunnel entrances whose use a side claims happened in a unit's LOS (B8.63): entrance and
    /// unit.
    pub tunnel_sightings: BTreeSet<(Hex, UnitId)>,
    /// Tunnel entrances a side has discovered by the recovery procedure (B8.63, A4.44).
    pub tunnel_discoveries: BTreeSet<(Side, Hex)>,
    /// The opaque name of each unit under "?" that others see it by (`?3`): assigned in order
    /// of first need, kept while it stays concealed (`view`). Empty in a projection.
    pub aliases: BTreeMap<UnitId, UnitId>,
    /// Aliases handed out so far; every one was shown to every viewer. 0 in a projection.
    pub next_alias: u32,
    /// The aliases of the units under "?" at the start, which name them in the scenario as
    /// others are shown it. Empty in a projection.
    pub setup_aliases: CopyOnWrite<BTreeMap<UnitId, UnitId>>,
    /// The players' clocks, in a game created with a time control (`timing`). Outside the
    /// encoding: a game without them encodes and hashes as games did before clocks, and a
    /// position carried in an event (an undo's) carries none; [`Game::state_hash`] adds them.
    /// Only the whole game keeps them: a projection has none.
    #[serde(skip)]
    pub timing: Option<Box<timing::Timing>>,
    /// What an undo needs to put an earlier position back ([`UndoTrail`]). Not part of the
    /// state: no encoding, hash or comparison sees it.
    #[serde(skip)]
    pub undo_trail: UndoTrail,
    /// The set-up step while it lasts (`None` once Turn 1 has begun, or when the scenario has
    /// none): whose set-up it is. Every unit placed in it is `hidden` until it ends, so the
    /// other side sees nothing of it (A12.12); those placed HIP stay hidden after.
    #[serde(default)]
    pub setup: Option<SetupTurn>,
    /// The ATTACKER's units designated Opportunity Firers in this Player Turn's PFPh (A7.25,
    /// A3.2): the Bounding Fire counter, which both sides see. They do not move in its MPh
    /// (A3.3) and fire in its AFPh without Advancing Fire's halving (A7.24). Cleared with the
    /// Prep Fire counters when the Player Turn ends. Last, so positions encoded before it was
    /// added still read as far as they go.
    #[serde(default)]
    pub opportunity_fire: BTreeSet<UnitId>,
    /// The support weapons that changed Location in this Player Turn's MPh (A4.41): carried
    /// by a unit as it moved, bypassed, went down or along a sewer or tunnel, or entered from
    /// off board. One picked up where it lay is not here until its new possessor moves on
    /// (A4.44). Derived by `apply` from the movement events, kept in the whole game and in the
    /// ATTACKER's own view only (`view::keep_attackers_record`), cleared when the Player Turn
    /// ends. Last, so positions encoded before it was added still read as far as they go.
    #[serde(default)]
    pub moved_weapons: BTreeSet<String>,
    /// Units that forfeited their own inherent FP for the rest of this Player Turn by the
    /// support weapons they fired (A9.11): a squad that fired two SW MG, a half-squad or crew
    /// that fired one (`InherentFpForfeited`). Seen by both sides, as the fire that cost it
    /// was, and hidden with the unit under "?". Cleared with the Prep Fire counters when the
    /// Player Turn ends. Last, so positions encoded before it was added still read as far as
    /// they go.
    #[serde(default)]
    pub inherent_fp_forfeited: BTreeSet<UnitId>,
    /// The attacks declared in this Player Turn, in order (`FiredAttack`): written by
    /// `AttackDeclared` alone, read by the declaration's checks that span more than one
    /// attack — whether a unit's own FP fired beside its SW in this phase (A9.11), and what a
    /// leader directed in it (A7.53, A9.12). The Fire counters do not tell: the ATTACKER's Prep
    /// Fire counter goes on for SW fire alone too. Kept in the whole game only (a projection
    /// has none: the counters on the map are what a viewer sees of the fire). Cleared when the
    /// Player Turn ends. Last, so positions encoded before it was added still read as far as
    /// they go.
    #[serde(default)]
    pub fire_record: Vec<FiredAttack>,
    /// Each unit that spent MF in this MPh, with the MF it spent in the Location it stands in
    /// and who fired at it there (`LocationMf`, A8.3, A9.2): written by `apply` from the MF
    /// the movement events spend and from `AttackDeclared`, read by the declaration of
    /// Defensive First Fire (`rules::fire::mf_limit`). Kept in the whole game only, as
    /// `fire_record` is (a projection has none: its units under "?" go by aliases that change).
    /// Cleared when the MPh ends. Last, so positions encoded before it was added still read as
    /// far as they go.
    #[serde(default)]
    pub location_mf: BTreeMap<UnitId, LocationMf>,
    /// Each unpossessed support weapon that lies off its hex's ground level, and where
    /// (`Lies`): the upper level or the place below ground its possessor dropped it in (A4.43),
    /// so that only a unit in that Location recovers it (A4.44). Written by `WeaponDropped`
    /// from where the dropper stood, cleared when a unit takes the weapon. Seen by both sides,
    /// as the weapon is. Last, so positions encoded before it was added still read as far as
    /// they go.
    #[serde(default)]
    pub weapon_lies: BTreeMap<String, Lies>,
    /// A Close Combat stopped half-resolved for a side's Infiltration (A11.22): play waits on
    /// that side's answer. Both sides see it, as they saw the rolls that stopped it. Last, so
    /// positions encoded before it was added still read as far as they go.
    #[serde(default)]
    pub cc_infiltration: Option<CcInfiltration>,
    /// Each viewer's projection of the scenario, made once for the game and its copies
    /// ([`ScenarioViews`]). Not part of the state: no encoding, hash or comparison sees it.
    #[serde(skip)]
    pub scenario_views: ScenarioViews,
}

/// The scenario as each viewer may know it, worked out the first time a projection asks and
/// then shared by every copy of the game. A projection's scenario depends on the scenario and
/// the aliases the game started with alone (`project_scenario`), which play never changes, so
/// projecting it again for every projection of the position (each step's passing check, each
/// view) was work fixed per game done per command (issue 55). Each view is kept with the
/// scenario and aliases it was made from, held so that neither can change in place (a
/// `CopyOnWrite` or `Arc` shared is copied before it changes): a view is used only while both
/// are still the very ones it was made from, and made again otherwise.
#[derive(Clone, Default)]
pub struct ScenarioViews(Arc<[std::sync::Mutex<Option<ScenarioView>>; 3]>);

struct ScenarioView {
    of: Arc<Scenario>,
    aliases: CopyOnWrite<BTreeMap<UnitId, UnitId>>,
    view: Arc<Scenario>,
}

impl ScenarioViews {
    /// `viewer`'s projection of `scenario` under `aliases`: the one kept, if it was made from
    /// these very values, else made now and kept.
    fn of(
        &self,
        scenario: &Arc<Scenario>,
        aliases: &CopyOnWrite<BTreeMap<UnitId, UnitId>>,
        viewer: Viewer,
    ) -> Arc<Scenario> {
        let slot = match viewer {
            Viewer::Side(Side::A) => 0,
            Viewer::Side(Side::B) => 1,
            Viewer::Spectator => 2,
        };
        let mut kept = self.0[slot]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(view) = kept.as_ref() {
            if Arc::ptr_eq(&view.of, scenario) && view.aliases.shared_with(aliases) {
                return view.view.clone();
            }
        }
        let view = project_scenario(scenario, aliases, viewer);
        *kept = Some(ScenarioView {
            of: scenario.clone(),
            aliases: aliases.clone(),
            view: view.clone(),
        });
        view
    }
}

impl PartialEq for ScenarioViews {
    fn eq(&self, _: &ScenarioViews) -> bool {
        true
    }
}

impl Eq for ScenarioViews {}

impl std::fmt::Debug for ScenarioViews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScenarioViews")
    }
}

/// The most events an undo reaches back over (`Event::EventsUndoneTo`): the positions an undo
/// may return to are rebuilt from a base and at most this many events after it. Past it the
/// base moves up, and an undo reaching further back is refused, naming this limit.
pub const UNDO_TRAIL_EVENTS_MAX: usize = 1024;

/// The positions an undo may return to, kept without keeping them: the position after the last
/// event no undo reaches back across (a change of the side to act, an undo; `None`: the
/// position the game started in) and the events applied since, newest first, in a list whose
/// copies share their tails, so copying a game (a decision's look ahead) copies two pointers.
///
/// `apply` keeps it, live and in replay alike, so a position it rebuilds is the one replaying
/// the log up to it gives. Not part of the state: ignored by equality, the state hash and
/// every encoding (a decoded game starts without one, and an undo of it is refused).
#[derive(Clone, Default)]
pub struct UndoTrail {
    base: Option<Arc<Game>>,
    since: Option<Arc<TrailEvent>>,
    len: usize,
}

struct TrailEvent {
    event: Event,
    before: Option<Arc<TrailEvent>>,
}

impl PartialEq for UndoTrail {
    fn eq(&self, _: &UndoTrail) -> bool {
        true
    }
}

impl Eq for UndoTrail {}

impl std::fmt::Debug for UndoTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UndoTrail({} events)", self.len)
    }
}

impl Drop for TrailEvent {
    /// Drops a long list link by link, not by recursion.
    fn drop(&mut self) {
        let mut next = self.before.take();
        while let Some(link) = next {
            next = Arc::try_unwrap(link).ok().and_then(|mut l| l.before.take());
        }
    }
}

impl UndoTrail {
    /// A trail based on `game` as it stands.
    fn at(game: &Game) -> UndoTrail {
        let mut base = game.clone();
        base.undo_trail = UndoTrail::default();
        UndoTrail {
            base: Some(Arc::new(base)),
            since: None,
            len: 0,
        }
    }

    /// Whether `other` reaches back to the same positions: the same base and the same events
    /// since it. (Equality ignores the trail, as it is not state; a check that two ways to a
    /// position agree asks this too.)
    pub fn same_as(&self, other: &UndoTrail) -> bool {
        let events = |trail: &UndoTrail| {
            let mut events = vec![];
            let mut link = trail.since.as_deref();
            while let Some(l) = link {
                events.push(l.event.clone());
                link = l.before.as_deref();
            }
            events
        };
        let base = |trail: &UndoTrail| trail.base.as_ref().map(|b| Game::clone(b));
        self.len == other.len && base(self) == base(other) && events(self) == events(other)
    }

    fn push(&mut self, event: &Event) {
        self.since = Some(Arc::new(TrailEvent {
            event: event.clone(),
            before: self.since.take(),
        }));
        self.len += 1;
    }

    /// The version of the trail's base: the game's start (version 1, after `GameCreated`)
    /// when it has none.
    fn base_version(&self) -> u64 {
        self.base.as_ref().map_or(1, |b| b.version)
    }

    /// The whole game as it stood at `version`, rebuilt from the trail, or `None` when the
    /// trail does not reach back to it (before its base, or past the game's own version).
    pub fn position_at(&self, game: &Game, version: u64) -> Option<Game> {
        let from = self.base_version();
        if version < from || version > game.version || from + self.len as u64 != game.version {
            return None;
        }
        let mut events = Vec::with_capacity(self.len);
        let mut link = self.since.as_deref();
        while let Some(l) = link {
            events.push(&l.event);
            link = l.before.as_deref();
        }
        events.reverse();
        let mut position = match &self.base {
            Some(base) => Game::clone(base),
            None => {
                let mut start = Game::new(game.scenario.clone());
                start.version = 1;
                start
            }
        };
        position.undo_trail = match &self.base {
            Some(_) => UndoTrail::at(&position),
            None => UndoTrail::default(),
        };
        for event in &events[..(version - from) as usize] {
            apply(&mut position, event);
        }
        Some(position)
    }
}

/// Where the set-up step stands (A12.12).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupTurn {
    /// The side placing its units now.
    pub side: Side,
    /// Units placed to stay hidden (HIP, A12.3) when set-up ends. In a projection, only the
    /// viewer's own.
    pub hip: BTreeSet<UnitId>,
}

/// Who is looking at a game: one of the sides, or a spectator who sees only what is public.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Viewer {
    Side(Side),
    Spectator,
}

impl Viewer {
    /// Whether this viewer may know about the unit's presence and movements. A hidden (HIP)
    /// unit is known only to its owner until it is revealed.
    pub fn sees_unit(self, unit: &Unit) -> bool {
        match self {
            Viewer::Side(side) => side == unit.side || !unit.hidden,
            Viewer::Spectator => !unit.hidden,
        }
    }
}

impl Game {
    /// The position at the start of play.
    pub fn new(scenario: impl Into<Arc<Scenario>>) -> Game {
        let scenario: Arc<Scenario> = scenario.into();
        let units = scenario
            .units
            .values()
            .map(|spec| (spec.id.clone(), Unit::from_spec(spec)))
            .collect();
        let weapons = scenario
            .weapons
            .values()
            .map(|w| {
                let weapon = Weapon {
                    id: w.id.clone(),
                    name: w.name.clone(),
                    pp: w.pp,
                    held_by: w.held_by.clone(),
                    hex: w.hex,
                    portaged: false,
                    ratings: w.ratings,
                    malfunctioned: false,
                    fired: false,
                    repair_tried: false,
                };
                (w.id.clone(), weapon)
            })
            .collect();
        let tunnels = scenario
            .tunnels
            .iter()
            .map(|t| TunnelState {
                side: t.side,
                entrances: t.entrances,
                revealed: false,
                destroyed: false,
            })
            .collect();
        let mut game = Game {
            scenario,
            clock: Clock::START,
            units,
            weapons,
            movement: CopyOnWrite::default(),
            wa_chance: None,
            attack: None,
            sewer_designation: None,
            wa_challenge: None,
            cc_infiltration: None,
            wa_hip_window: None,
            wa_shown: BTreeSet::new(),
            tunnels,
            unseen_manholes: BTreeSet::new(),
            dice_drawn: 0,
            over: false,
            end_proposal: None,
            viewer: None,
            version: 0,
            prep_fired: BTreeSet::new(),
            first_fired: BTreeSet::new(),
            residual_fp: BTreeMap::new(),
            final_fired: BTreeSet::new(),
            tunnel_sightings: BTreeSet::new(),
            tunnel_discoveries: BTreeSet::new(),
            aliases: BTreeMap::new(),
            next_alias: 0,
            setup_aliases: CopyOnWrite::default(),
            timing: None,
            undo_trail: UndoTrail::default(),
            setup: None,
            opportunity_fire: BTreeSet::new(),
            moved_weapons: BTreeSet::new(),
            inherent_fp_forfeited: BTreeSet::new(),
            fire_record: Vec::new(),
            location_mf: BTreeMap::new(),
            weapon_lies: BTreeMap::new(),
            scenario_views: ScenarioViews::default(),
        };
        view::refresh_aliases(&mut game);
        game.setup_aliases = game.aliases.clone().into();
        game.setup = game
            .scenario
            .setup
            .as_ref()
            .and_then(|s| s.setting_up().first().copied())
            .map(|side| SetupTurn {
                side,
                hip: BTreeSet::new(),
            });
        game
    }

    /// Rebuilds a game from its events. The first must be `GameCreated`.
    pub fn replay<'a>(events: impl IntoIterator<Item = &'a Event>) -> Result<Game, ReplayError> {
        let mut events = events.into_iter();
        let mut game = match events.next() {
            Some(Event::GameCreated(GameCreated { scenario })) => Game::new(scenario.clone()),
            Some(other) => return Err(ReplayError::NotCreatedFirst(other.name())),
            None => return Err(ReplayError::Empty),
        };
        game.version = 1;
        for event in events {
            apply(&mut game, event);
        }
        Ok(game)
    }

    pub fn attacker(&self) -> Side {
        self.clock.attacker(self.scenario.first)
    }

    /// The side whose input the current step awaits: in the set-up step, the side setting up.
    pub fn acting(&self) -> Side {
        match &self.setup {
            Some(turn) => turn.side,
            None => self.clock.acting(self.scenario.first),
        }
    }

    /// Units of the scenario's set-up `side` has still to place, in id order.
    pub fn left_to_set_up(&self, side: Side) -> Vec<&board::setup::OffboardUnit> {
        match (&self.setup, &self.scenario.setup) {
            (Some(_), Some(setup)) => setup
                .to_set_up(side)
                .filter(|u| !self.units.contains_key(&u.id))
                .collect(),
            _ => vec![],
        }
    }

    /// Units of `side` waiting off board to enter later (A2.51), in id order.
    pub fn waiting_to_enter(&self, side: Side) -> Vec<&board::setup::OffboardUnit> {
        match &self.scenario.setup {
            Some(setup) => setup
                .units
                .values()
                .filter(|u| u.side == side && u.enters.is_some())
                .filter(|u| !self.units.contains_key(&u.id))
                .collect(),
            None => vec![],
        }
    }

    pub fn side_name(&self, side: Side) -> &str {
        &self.scenario.side(side).name
    }

    /// Units in a hex that are still in play.
    pub fn units_in(&self, hex: Hex) -> impl Iterator<Item = &Unit> {
        self.units.in_hex(hex).filter(|u| !u.eliminated)
    }

    /// Units in play in the Location of the hex itself, not beneath it: a sewer or tunnel is
    /// a Location of its own, and units above ignore units below but where B8 says otherwise
    /// (B8.2, B8.45).
    pub fn units_above(&self, hex: Hex) -> impl Iterator<Item = &Unit> {
        self.units_in(hex).filter(|u| u.underground.is_none())
    }

    /// The level, in half levels, of a unit on an upper level of its hex (a building storey
    /// or rooftop, B23): the scenario's `level` while the unit stays in its setup hex, when it
    /// is above the hex's base level. `None` at ground level and below ground. Each level of
    /// a hex is a Location of its own (A5.1), for every rule, not only for LOS.
    /// Where in its hex `unit` stands when not at the ground level (`Lies`): the Location a
    /// weapon it drops lies in (A4.43), and the one whose unpossessed weapons it may recover
    /// (A4.44) — those `weapon_lies` has at the same place, or none there when this is `None`.
    pub fn lies_at(&self, unit: &Unit) -> Option<Lies> {
        match unit.underground {
            Some(Underground::Sewer { .. }) => Some(Lies::Sewer),
            Some(Underground::Tunnel) => Some(Lies::Tunnel),
            None => self.upper_level(unit).map(Lies::Level),
        }
    }

    /// The one way a support weapon becomes unpossessed (A4.43): `possessor` drops it, or is
    /// eliminated and leaves it behind. Either way it lies in the Location the possessor stood
    /// in — the ground level, or the upper level or place below ground `lies_at` names — so
    /// that only a unit in that Location recovers it (A4.44).
    pub(crate) fn leave_weapon(&mut self, weapon: &str, possessor: &UnitId) {
        let lies = self.units.get(possessor).and_then(|u| self.lies_at(u));
        if let Some(w) = self.weapons.get_mut(weapon) {
            w.held_by = None;
        }
        match lies {
            Some(lies) => self.weapon_lies.insert(weapon.to_string(), lies),
            None => self.weapon_lies.remove(weapon),
        };
    }

    pub fn upper_level(&self, unit: &Unit) -> Option<i16> {
        if unit.underground.is_some() {
            return None;
        }
        let spec = self.scenario.units.get(&unit.id)?;
        // Most units have no level or have left their setup hex: no need to look the hex up.
        let level = spec.level.filter(|_| spec.hex == unit.hex)?;
        let base = i16::from(self.scenario.hexes.get(&unit.hex)?.elevation) * 2;
        (level > base).then_some(level)
    }

    /// The half-squad `unit` is reduced to (A7.302): the one its scenario gives it (in the
    /// units set up in hexes, or in those set up or entering from off board), else the one
    /// `board::half_squads` lists for its side's nationality and its ratings now (a squad
    /// replaced for ELR is reduced to its replacement's half-squad). `None` for a unit that is
    /// not a squad, or whose half-squad neither says.
    pub fn half_squad(&self, unit: &Unit) -> Option<&str> {
        if unit.kind != UnitKind::Squad {
            return None;
        }
        let given = self
            .scenario
            .units
            .get(&unit.id)
            .map(|s| s.half_squad.as_deref())
            .or_else(|| {
                let setup = self.scenario.setup.as_ref()?;
                setup.units.get(&unit.id).map(|s| s.half_squad.as_deref())
            })
            .flatten();
        given.or_else(|| {
            let nationality = self.scenario.side(unit.side).nationality.as_deref()?;
            board::half_squads::half_squad(nationality, &unit.ratings)
        })
    }

    /// Whether `unit` is a squad whose FP is underlined (A7.36), as its scenario says: in the
    /// units set up in hexes, or in those set up or entering from off board.
    pub fn assault_fire(&self, unit: &Unit) -> bool {
        self.scenario
            .units
            .get(&unit.id)
            .map(|s| s.assault_fire)
            .or_else(|| {
                let setup = self.scenario.setup.as_ref()?;
                setup.units.get(&unit.id).map(|s| s.assault_fire)
            })
            .unwrap_or(false)
    }

    /// Whether two units are in one Location: the same hex, at the same level, both above
    /// ground or both in the same place below it.
    /// The units of the stack moving now that Defensive First Fire by `by` at `target` strikes
    /// (A8.1): the enemy's units above ground there that are moving and have not finished,
    /// hidden ones left out. Both records of the MPh's fire read them by this one function
    /// (`Game::location_mf`, `Game::fire_record`).
    pub fn movers_fired_at(&self, by: Side, target: Hex) -> Vec<UnitId> {
        self.units_above(target)
            .filter(|u| u.side != by && !u.hidden && self.moving_now(u))
            .map(|u| u.id.clone())
            .collect()
    }

    /// Whether `unit` belongs to the stack moving now, as Defensive First Fire may strike it
    /// (A8.1): of the moving stack and not finished — but not a unit of it that can move no
    /// farther (pinned or broken, A7.8, A10.4) once the rest of the stack has moved on out of
    /// its Location: its MPh ended as they left it (A9.2 EX: the pinned leader left behind
    /// as the squad goes on is no longer a moving target; A7.83 EX: a broken unit's MPh ends
    /// as soon as another unit moves).
    pub fn moving_now(&self, unit: &Unit) -> bool {
        let record = &self.movement;
        if !record.moving_stack.contains(&unit.id) || record.finished.contains(&unit.id) {
            return false;
        }
        let stuck = unit.pinned || unit.morale == Morale::Broken;
        let left_behind = !record.last_movers.contains(&unit.id)
            && !record
                .last_movers
                .iter()
                .filter_map(|id| self.units.get(id))
                .any(|m| self.same_location(m, unit));
        !(stuck && left_behind)
    }

    /// What Defensive First Fire by `by` at `target` strikes, as the record of attacks keeps it
    /// (`FiredAttack::movers`, A7.55): in the MPh, above ground, each of the moving units there
    /// with the MF it has spent in the MPh; nothing in any other phase, or into a sewer.
    pub fn movers_struck(&self, by: Side, target: Hex, into_sewer: bool) -> Vec<(UnitId, Mf)> {
        if self.clock.phase() != Phase::Movement || into_sewer {
            return vec![];
        }
        self.movers_fired_at(by, target)
            .into_iter()
            .filter_map(|id| {
                let spent = self.units.get(&id)?.mf_spent;
                Some((id, spent))
            })
            .collect()
    }

    pub fn same_location(&self, a: &Unit, b: &Unit) -> bool {
        a.hex == b.hex
            && a.underground.is_some() == b.underground.is_some()
            && self.upper_level(a) == self.upper_level(b)
    }

    /// A fingerprint of the game's meaning: equal meanings hash equal, on any machine. It hashes
    /// `Meaning`, a canonical encoding of what the state is (every map in it ordered), never
    /// `Game`'s own layout: caches, the undo trail and whatever bookkeeping `Game` keeps later
    /// stay out, and reordering or renaming `Game`'s fields leaves the hash alone. Exports
    /// record it, so `Meaning`'s encoding is a decision: see its doc comment. The clocks,
    /// when the game has them, are hashed after it.
    pub fn state_hash(&self) -> StateHash {
        let meaning = Meaning::of(self);
        match &self.timing {
            None => StateHash(hash_encoded(blake3::Hasher::new(), &[], &meaning)),
            Some(timing) => StateHash(hash_encoded(
                blake3::Hasher::new(),
                &[],
                &(&meaning, timing.as_ref()),
            )),
        }
    }

    /// What `viewer` may know of this game: the opponent's hidden units and secretly recorded
    /// tunnels are removed, from the live state and from the scenario it carries alike.
    ///
    /// Built by allow-list: every field of the game is named below and the projection is made
    /// field by field from what the viewer may know. A field added to [`Game`] fails to compile
    /// here until someone decides what each viewer sees of it, so nothing new reaches a viewer
    /// by default. A prompt or record naming a unit the viewer may not know (a HIP unit, A12.3)
    /// is left out whole, as the event that raised it is absent from the viewer's stream.
    pub fn project(&self, viewer: Viewer) -> Game {
        let Game {
            scenario,
            clock,
            units,
            weapons,
            movement,
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn,
            over,
            end_proposal,
            // The projection's own: whose view it is.
            viewer: _,
            // How many events the whole game has seen is not the viewer's to know: whoever
            // hands the projection out sets the viewer's own count.
            version: _,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            // Pair units under "?" with their ids: no viewer's projection holds them (units
            // under "?" go by their aliases, renamed below).
            aliases,
            next_alias: _,
            setup_aliases,
            // The whole game's own bookkeeping for undo: no viewer keeps it.
            undo_trail: _,
            setup,
            // Viewers are told the clocks in a message of their own (`timing::ClockView`).
            timing: _,
            opportunity_fire,
            moved_weapons,
            inherent_fp_forfeited,
            // The whole game's record of the fire in this Player Turn: a viewer sees the Fire
            // counters it left, not the record (an attack's firers under "?" would show).
            fire_record: _,
            // The whole game's count of MF and fire in each mover's Location, kept from viewers
            // for the same reason.
            location_mf: _,
            weapon_lies,
            cc_infiltration,
            // Where the scenario's projections are kept; the one for this viewer is used below.
            scenario_views,
        } = self;
        let MovementRecord {
            moving_stack,
            last_movers,
            finished,
            sewer_check_failed,
            sewer_entries,
            advanced,
            melee,
            cc_designated,
            cc_withdrawals,
            cc_resolved,
            ambush,
            rallied,
            bypassed_concealed,
            dropped_to_withdraw,
            recovery_attempts,
            rally_phase_acts,
        } = &**movement;
        let hidden = self.hidden_from(viewer);
        let known = |id: &UnitId| !hidden.contains(id);
        let all_known = |ids: &[UnitId]| ids.iter().all(known);
        let known_of = |set: &BTreeSet<UnitId>| -> BTreeSet<UnitId> {
            set.iter().filter(|id| known(id)).cloned().collect()
        };
        // The DEFENDER's Fire counters, on units and on the weapons they possess (A8.1).
        let known_fire_of = |set: &BTreeSet<UnitId>| -> BTreeSet<UnitId> {
            set.iter()
                .filter(|id| known(id))
                .filter(|id| {
                    weapons
                        .get(*id)
                        .and_then(|w| w.held_by.as_ref())
                        .is_none_or(known)
                })
                .cloned()
                .collect()
        };
        let units: CopyOnWrite<Units> = if hidden.is_empty() {
            units.clone()
        } else {
            units
                .iter()
                .filter(|(id, _)| known(id))
                .map(|(id, u)| (id.clone(), u.clone()))
                .collect()
        };
        let weapons: CopyOnWrite<BTreeMap<String, Weapon>> = if hidden.is_empty() {
            weapons.clone()
        } else {
            weapons
                .iter()
                .filter(|(_, w)| w.held_by.as_ref().is_none_or(known))
                .map(|(id, w)| (id.clone(), w.clone()))
                .collect()
        };
        // Where an unpossessed weapon lies is on the map for both sides to see, as the weapon
        // is; one a viewer is not shown is not told.
        let weapon_lies: BTreeMap<String, Lies> = weapon_lies
            .iter()
            .filter(|(w, _)| weapons.contains_key(*w))
            .map(|(w, l)| (w.clone(), *l))
            .collect();
        let mut game = Game {
            scenario: scenario_views.of(scenario, setup_aliases, viewer),
            clock: *clock,
            units,
            weapons,
            movement: MovementRecord {
                moving_stack: known_of(moving_stack),
                last_movers: known_of(last_movers),
                finished: known_of(finished),
                sewer_check_failed: known_of(sewer_check_failed),
                // Manholes are on the map; going down one is seen (B8.4).
                sewer_entries: sewer_entries.clone(),
                advanced: known_of(advanced),
                // Which Locations are in CC every viewer sees alike (`rules::close_combat`).
                melee: melee.clone(),
                // A designation names no hidden or concealed unit (`rules::close_combat`):
                // both sides see the units in a CC Location alike.
                cc_designated: cc_designated
                    .iter()
                    .filter(|(_, attacks)| {
                        attacks
                            .iter()
                            .all(|a| all_known(&a.attackers) && all_known(&a.defenders))
                    })
                    .map(|(h, a)| (*h, a.clone()))
                    .collect(),
                // Declared in the open with the attacks, of units both sides see alike.
                cc_withdrawals: cc_withdrawals
                    .iter()
                    .filter(|(_, list)| list.iter().all(|w| all_known(&w.units)))
                    .map(|(h, w)| (*h, w.clone()))
                    .collect(),
                cc_resolved: cc_resolved.clone(),
                // The Ambush drs were rolled in the open (A11.4).
                ambush: ambush.clone(),
                rallied: known_of(rallied),
                // The "?" a Bypass went round: each side sees the counters in the hex alike,
                // the mover's side by their aliases (`view::rename_unit`).
                bypassed_concealed: known_of(bypassed_concealed),
                dropped_to_withdraw: known_of(dropped_to_withdraw),
                // Each attempt's dr was rolled in the open; a hidden unit makes none (A12.3).
                recovery_attempts: recovery_attempts
                    .iter()
                    .map(|(w, units)| (w.clone(), known_of(units)))
                    .filter(|(_, units)| !units.is_empty())
                    .collect(),
                // Each act was made in the open, by units both sides see, but a Recovery
                // under "?", which the viewer's projection names by its alias (A4.44).
                rally_phase_acts: rally_phase_acts
                    .iter()
                    .filter(|(id, _)| known(id))
                    .map(|(id, act)| (id.clone(), *act))
                    .collect(),
            }
            .into(),
            wa_chance: wa_chance.clone().filter(|c| all_known(&c.units)),
            attack: attack
                .as_ref()
                .filter(|a| all_known(&a.firers))
                .map(|a| DeclaredAttack {
                    by: a.by,
                    firers: a.firers.clone(),
                    // Those of a possessor the viewer does not see go in `mask_concealed`.
                    weapons: a.weapons.clone(),
                    target: a.target,
                    wa_holders: known_of(&a.wa_holders),
                    into_sewer: a.into_sewer,
                }),
            sewer_designation: sewer_designation.clone().filter(|d| all_known(&d.units)),
            wa_hip_window: wa_hip_window.clone().filter(|w| all_known(&w.claimants)),
            wa_challenge: wa_challenge
                .clone()
                .filter(|c| all_known(&c.holders) && all_known(&c.claimants)),
            wa_shown: known_of(wa_shown),
            tunnels: tunnels
                .iter()
                .filter(|t| t.revealed || viewer == Viewer::Side(t.side))
                .cloned()
                .collect(),
            // Declared openly by the ATTACKER (B8.42 drm).
            unseen_manholes: unseen_manholes.clone(),
            // Every roll's first draw number is in the event that records it.
            dice_drawn: *dice_drawn,
            over: *over,
            end_proposal: *end_proposal,
            viewer: Some(viewer),
            version: 0,
            prep_fired: known_of(prep_fired),
            // The Fire counters are on the map for both sides to see (A8.1), a weapon's with
            // its possessor.
            first_fired: known_fire_of(first_fired),
            final_fired: known_fire_of(final_fired),
            // Residual FP lies on the map for both sides to see (A8.2).
            residual_fp: residual_fp.clone(),
            // The Bounding Fire counter is on the map for both sides to see (A3.2).
            opportunity_fire: known_of(opportunity_fire),
            // Whether a weapon moved is the ATTACKER's own record: narrowed to his view by
            // `keep_attackers_record` below.
            moved_weapons: moved_weapons.clone(),
            // Whose own FP is forfeited follows from fire both sides saw (A9.11).
            inherent_fp_forfeited: known_of(inherent_fp_forfeited),
            fire_record: Vec::new(),
            location_mf: BTreeMap::new(),
            weapon_lies,
            // Both sides saw the rolls that stopped the CC, and its units are ones both see
            // (a "?" named by the alias each viewer knows, renamed below).
            cc_infiltration: cc_infiltration.clone(),
            // A projection's scenario is projected already; its own projections are its own.
            scenario_views: ScenarioViews::default(),
            // Only the viewer's own side's (below).
            tunnel_sightings: tunnel_sightings.clone(),
            // A discovery is made in the open, by a unit on the map (B8.63).
            tunnel_discoveries: tunnel_discoveries.clone(),
            aliases: BTreeMap::new(),
            next_alias: 0,
            setup_aliases: CopyOnWrite::default(),
            undo_trail: UndoTrail::default(),
            timing: None,
            setup: setup.as_ref().map(|turn| SetupTurn {
                side: turn.side,
                // Only the viewer's own units placed HIP.
                hip: turn
                    .hip
                    .iter()
                    .filter(|id| {
                        self.units
                            .get(*id)
                            .is_some_and(|u| viewer == Viewer::Side(u.side))
                    })
                    .cloned()
                    .collect(),
            }),
        };
        keep_own_sightings(&mut game, viewer);
        mask_concealed(&mut game, viewer);
        view::keep_attackers_record(&mut game, viewer);
        // Units under "?" go by their aliases; the map itself would pair them with their ids.
        let aliased: Vec<(UnitId, UnitId)> = game
            .units
            .values()
            .filter(|u| view::masked(viewer, u))
            .filter_map(|u| Some((u.id.clone(), aliases.get(&u.id)?.clone())))
            .collect();
        for (id, alias) in aliased {
            view::rename_unit(&mut game, &id, &alias);
        }
        game
    }

    /// The ids of the units `viewer` may not know about now.
    fn hidden_from(&self, viewer: Viewer) -> BTreeSet<UnitId> {
        self.units
            .values()
            .filter(|u| !viewer.sees_unit(u))
            .map(|u| u.id.clone())
            .collect()
    }

    /// The event as `viewer` may see it, or `None` if they may not see it at all: the
    /// projection of `view::project_event`, with the position after it computed here.
    pub fn view_event(&self, viewer: Viewer, event: &Event) -> Option<view::Viewed> {
        let mut after = self.clone();
        apply(&mut after, event);
        view::project_event(self, &after, viewer, event)
    }

    /// Whether `viewer` may see this event at all: not if it names a unit hidden from them. One
    /// they may not see is absent from their stream and leaves their projection unchanged.
    pub fn shows(&self, viewer: Viewer, event: &Event) -> bool {
        if let Event::TunnelUseSighted(TunnelUseSighted { by, .. }) = event {
            return viewer == Viewer::Side(*by);
        }
        // A unit placed in set-up is out of the other side's sight until set-up ends (A12.12).
        if let Event::UnitSetUp(UnitSetUp { unit, .. }) = event {
            return viewer == Viewer::Side(unit.side);
        }
        // A weapon of a unit under another side's "?" is not shown (`mask_concealed`): nor is
        // its malfunction.
        if let Event::WeaponMalfunctioned(WeaponMalfunctioned { holder, .. })
        | Event::MultipleRofRetained(MultipleRofRetained { holder, .. })
        | Event::WeaponRepairAttempted(WeaponRepairAttempted { holder, .. }) = event
        {
            return self.units.get(holder).is_none_or(|u| {
                viewer.sees_unit(u) && !(u.concealed && viewer != Viewer::Side(u.side))
            });
        }
        event
            .units()
            .into_iter()
            .all(|id| self.units.get(id).is_none_or(|u| viewer.sees_unit(u)))
    }
}

/// What anyone may know of a unit under "?" that is not theirs: where it is, that it is there,
/// and its counters on the map (WA, pins); not what it is, its morale or what it carries (A12).
fn mask_unit(unit: &mut Unit) {
    unit.kind = UnitKind::Concealed;
    unit.ratings = "?".into();
    unit.morale = Morale::GoodOrder;
    unit.inexperienced = false;
    unit.led_by = None;
    unit.portage_pp = 0;
    unit.double_time = false;
    unit.desperation = false;
    // A Wound counter under "?" is hidden with the unit: it would tell an SMC (A12).
    unit.wounded = false;
}

/// Masks the concealed units `viewer` does not own, and drops the weapons they possess. It is
/// idempotent, and a projection runs it after every event, so a unit that goes under "?" in
/// play is masked from then on.
fn mask_concealed(game: &mut Game, viewer: Viewer) {
    // With nothing to mask, the units and weapons stay shared with the game they came from
    // (a change through `DerefMut` would copy every one of them).
    if game
        .units
        .values()
        .any(|u| u.concealed && viewer != Viewer::Side(u.side))
    {
        let mut masked = BTreeSet::new();
        for unit in game.units.values_mut() {
            if unit.concealed && viewer != Viewer::Side(unit.side) {
                mask_unit(unit);
                masked.insert(unit.id.clone());
            }
        }
        game.weapons
            .retain(|_, w| w.held_by.as_ref().is_none_or(|h| !masked.contains(h)));
    }
    let kept = &game.weapons;
    if let Some(a) = game.attack.as_mut() {
        a.weapons.retain(|w| kept.contains_key(w));
    }
}

/// Which units saw a tunnel entrance used (B8.63) is known to their own side alone: the
/// engine traces it for that side, and a claim (`TunnelUseSeen`) the opponent may dispute
/// changes only the claimant's picture.
fn keep_own_sightings(game: &mut Game, viewer: Viewer) {
    let units = &game.units;
    game.tunnel_sightings.retain(|(_, id)| {
        units
            .get(id)
            .is_some_and(|u| viewer == Viewer::Side(u.side))
    });
}

/// The scenario as `viewer` may know it: the opponent's units that set up hidden (and their
/// weapons) and the opponent's tunnels are left out. The scenario is the starting position, so
/// this depends on it alone — a unit revealed in play reaches viewers through the event that
/// revealed it, not through a changed scenario.
fn project_scenario(
    shared: &Arc<Scenario>,
    aliases: &BTreeMap<UnitId, UnitId>,
    viewer: Viewer,
) -> Arc<Scenario> {
    let others = |side: Side| viewer != Viewer::Side(side);
    // Nothing to leave out or mask for this viewer: the scenario as it is, shared.
    if !shared
        .units
        .values()
        .any(|u| (u.hidden || u.concealed) && others(u.side))
        && !shared.tunnels.iter().any(|t| others(t.side))
    {
        return shared.clone();
    }
    let mut scenario = Scenario::clone(shared);
    let hidden: BTreeSet<UnitId> = scenario
        .units
        .values()
        .filter(|u| u.hidden && viewer != Viewer::Side(u.side))
        .map(|u| u.id.clone())
        .collect();
    scenario.units.retain(|id, _| !hidden.contains(id));
    let mut masked = BTreeSet::new();
    for spec in scenario.units.values_mut() {
        if spec.concealed && viewer != Viewer::Side(spec.side) {
            spec.kind = UnitKind::Concealed;
            spec.ratings = "?".into();
            spec.inexperienced = false;
            spec.assault_fire = false;
            spec.half_squad = None;
            spec.morale = Morale::GoodOrder;
            spec.mp = 0;
            spec.fully_tracked = false;
            masked.insert(spec.id.clone());
        }
    }
    scenario.weapons.retain(|_, w| {
        w.held_by
            .as_ref()
            .is_none_or(|h| !hidden.contains(h) && !masked.contains(h))
    });
    // Under "?" from the start: named by the aliases the game started with.
    scenario.units = std::mem::take(&mut scenario.units)
        .into_iter()
        .map(|(id, mut spec)| match aliases.get(&id) {
            Some(alias) if masked.contains(&id) => {
                spec.id = alias.clone();
                (alias.clone(), spec)
            }
            _ => (id, spec),
        })
        .collect();
    scenario.tunnels.retain(|t| viewer == Viewer::Side(t.side));
    Arc::new(scenario)
}

/// What [`Game::state_hash`] covers, in the order it is encoded: the state the rules and the
/// viewers see — the scenario, the clock, units and weapons, the records and prompts play keeps,
/// the Fire counters and Residual FP, the dice drawn, whose view it is and how many events it
/// has seen — and the names units under "?" go by (the whole game's aliases, empty in a
/// projection), since those are what every viewer was shown.
///
/// Left out on purpose: the undo trail and the indexes `Units` keeps (neither is state), and
/// the clocks, which the hash adds after this when a game has them (a position carried in an
/// event has none).
///
/// The order and the fields are fixed: exports carry the hash and must verify in later
/// versions, so this encodes exactly as the state hash always has (pinned by
/// `tests::state_hashes_are_pinned`). It is built by destructuring `Game` without `..`: a
/// field added to `Game` does not compile here until someone decides whether it is meaning.
/// Adding one here changes every hash and needs the pinned hashes and a note in
/// `docs/protocol.md`.
#[derive(Serialize)]
struct Meaning<'a> {
    scenario: &'a Scenario,
    clock: &'a Clock,
    units: &'a Units,
    weapons: &'a BTreeMap<String, Weapon>,
    movement: MovementMeaning<'a>,
    wa_chance: &'a Option<WaChance>,
    attack: &'a Option<DeclaredAttack>,
    sewer_designation: &'a Option<SewerDesignation>,
    wa_hip_window: &'a Option<WaHipWindow>,
    wa_challenge: &'a Option<WaChallenge>,
    wa_shown: &'a BTreeSet<UnitId>,
    tunnels: &'a Vec<TunnelState>,
    unseen_manholes: &'a BTreeSet<Hex>,
    dice_drawn: u64,
    over: bool,
    end_proposal: &'a Option<Side>,
    viewer: &'a Option<Viewer>,
    version: u64,
    prep_fired: &'a BTreeSet<UnitId>,
    first_fired: &'a BTreeSet<UnitId>,
    final_fired: &'a BTreeSet<UnitId>,
    residual_fp: &'a BTreeMap<Hex, Residual>,
    tunnel_sightings: &'a BTreeSet<(Hex, UnitId)>,
    tunnel_discoveries: &'a BTreeSet<(Side, Hex)>,
    aliases: &'a BTreeMap<UnitId, UnitId>,
    next_alias: u32,
    setup_aliases: &'a BTreeMap<UnitId, UnitId>,
    setup: &'a Option<SetupTurn>,
    /// Added after the hashes were pinned, so encoded only when some unit carries the
    /// counter: a game that never designates an Opportunity Firer hashes as it always did.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    opportunity_fire: Trailing<'a>,
    /// Added after `opportunity_fire`, encoded only when some weapon changed Location in this
    /// MPh (A4.41); `opportunity_fire` is then encoded too, empty or not, so the two never
    /// read as one another.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    moved_weapons: Trailing<'a>,
    /// Added after `moved_weapons`, encoded only when some unit forfeited its inherent FP
    /// (A9.11); the two sets before it are then encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    inherent_fp_forfeited: Trailing<'a>,
    /// Added after `inherent_fp_forfeited`, encoded only when an attack was declared in this
    /// Player Turn (A9.11, A7.53); the three sets before it are then encoded too. Each attack is
    /// encoded as it was when exports first carried it (`attacks_as_pinned`).
    #[serde(
        skip_serializing_if = "Trailing::is_absent",
        serialize_with = "attacks_as_pinned"
    )]
    fire_record: Trailing<'a, Vec<FiredAttack>>,
    /// Added after `fire_record`, encoded only when a unit spent MF in this MPh (A8.3, A9.2);
    /// the four before it are then encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    location_mf: Trailing<'a, BTreeMap<UnitId, LocationMf>>,
    /// `MovementRecord::bypassed_concealed`, added after `location_mf` (A4.33), encoded only
    /// when some "?" is due to be lost; the sets before it are then encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    bypassed_concealed: Trailing<'a>,
    /// `MovementRecord::dropped_to_withdraw`, added after `bypassed_concealed` (A4.43),
    /// encoded only when some unit dropped a weapon to withdraw; the sets before it are then
    /// encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    dropped_to_withdraw: Trailing<'a>,
    /// `MovementRecord::recovery_attempts`, added after `dropped_to_withdraw` (A4.44),
    /// encoded only when some unit attempted a Recovery in this phase; the sets before it are
    /// then encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    recovery_attempts: Trailing<'a, BTreeMap<String, BTreeSet<UnitId>>>,
    /// Where the units that gave or took a SW by Transfer in the RPh were hashed (A4.431),
    /// before `rally_phase_acts` took them in with the RPh's other acts: always empty now,
    /// and encoded, as an empty set, only when a set after it is, so a hash pinned before
    /// is kept.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    transferred: Trailing<'a>,
    /// `Game::weapon_lies`, added after `transferred` (A4.43, A4.44), encoded only when some
    /// unpossessed weapon lies off its hex's ground level; the sets before it are then encoded
    /// too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    weapon_lies: Trailing<'a, BTreeMap<String, Lies>>,
    /// `Game::cc_infiltration`, added after `weapon_lies` (A11.22), encoded only while a Close
    /// Combat waits on a side's Infiltration; the sets before it are then encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    cc_infiltration: Trailing<'a, Option<CcInfiltration>>,
    /// `MovementRecord::rally_phase_acts`, added after `cc_infiltration` (A3.1), encoded only
    /// when some unit attempted an act in this RPh; the sets before it are then encoded too.
    #[serde(skip_serializing_if = "Trailing::is_absent")]
    rally_phase_acts: Trailing<'a, BTreeMap<UnitId, RallyPhaseAct>>,
}

/// The retired `transferred` slot of [`Meaning`]: the empty set it now always holds.
const NO_TRANSFERS: &BTreeSet<UnitId> = &BTreeSet::new();

/// [`MovementRecord`] as it was when the hashes were pinned: its fields in their order, each
/// encoded as it always was. The sets added to it since are hashed at the end of [`Meaning`]
/// (`Trailing`), so a game that never fills them hashes as it always did. Built by
/// destructuring `MovementRecord` without `..`, so a field added there does not compile here
/// until someone decides where it is hashed.
#[derive(Serialize)]
struct MovementMeaning<'a> {
    moving_stack: &'a BTreeSet<UnitId>,
    last_movers: &'a BTreeSet<UnitId>,
    finished: &'a BTreeSet<UnitId>,
    sewer_check_failed: &'a BTreeSet<UnitId>,
    sewer_entries: &'a BTreeSet<Hex>,
    advanced: &'a BTreeSet<UnitId>,
    melee: &'a BTreeSet<Hex>,
    cc_designated: &'a BTreeMap<Hex, Vec<crate::command::CcAttack>>,
    cc_withdrawals: &'a BTreeMap<Hex, Vec<crate::command::CcWithdrawal>>,
    cc_resolved: &'a BTreeSet<Hex>,
    ambush: &'a BTreeMap<Hex, Side>,
    rallied: &'a BTreeSet<UnitId>,
}

/// A set added to [`Meaning`] after the hashes were pinned: encoded exactly as the set, and
/// left out while it is empty unless a set after it is encoded (`then_more`), so a game that
/// never fills it hashes as it always did and no two meanings share an encoding.
struct Trailing<'a, T = BTreeSet<String>> {
    set: &'a T,
    /// Whether `set` holds nothing.
    empty: bool,
    then_more: bool,
}

impl<'a, T> Trailing<'a, T> {
    fn new(set: &'a T, empty: bool, then_more: bool) -> Self {
        Trailing {
            set,
            empty,
            then_more,
        }
    }

    fn is_absent(&self) -> bool {
        self.empty && !self.then_more
    }
}

/// The Player Turn's attacks in [`Meaning`]: each its phase, firers and weapons, the fields a
/// [`FiredAttack`] had when exports began to carry the hash. What A7.55 added since (the
/// target, the sewer, the movers struck) is left out: encoding it would change the hash of
/// every game ended with an attack in its last Player Turn, and an export written before
/// would no longer verify. It is fixed by the `AttackDeclared` events the log holds, whose
/// bytes the chain vouches for, so the hash still tells two logs apart.
fn attacks_as_pinned<S: serde::Serializer>(
    record: &Trailing<'_, Vec<FiredAttack>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(record.set.len()))?;
    for attack in record.set {
        seq.serialize_element(&(&attack.phase, &attack.firers, &attack.weapons))?;
    }
    seq.end()
}

impl<T: Serialize> Serialize for Trailing<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.set.serialize(serializer)
    }
}

impl<'a> Meaning<'a> {
    fn of(game: &'a Game) -> Meaning<'a> {
        let Game {
            scenario,
            clock,
            units,
            weapons,
            movement,
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn,
            over,
            end_proposal,
            viewer,
            version,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            aliases,
            next_alias,
            setup_aliases,
            // Hashed after the meaning, when there are clocks (`Game::state_hash`).
            timing: _,
            // Not state: what an undo needs to rebuild an earlier position.
            undo_trail: _,
            setup,
            opportunity_fire,
            moved_weapons,
            inherent_fp_forfeited,
            fire_record,
            location_mf,
            weapon_lies,
            cc_infiltration,
            // Not state: the scenario's projections, kept for reuse.
            scenario_views: _,
        } = game;
        let MovementRecord {
            moving_stack,
            last_movers,
            finished,
            sewer_check_failed,
            sewer_entries,
            advanced,
            melee,
            cc_designated,
            cc_withdrawals,
            cc_resolved,
            ambush,
            rallied,
            bypassed_concealed,
            dropped_to_withdraw,
            recovery_attempts,
            rally_phase_acts,
        } = &**movement;
        let later_fire_record = !location_mf.is_empty()
            || !bypassed_concealed.is_empty()
            || !dropped_to_withdraw.is_empty()
            || !recovery_attempts.is_empty()
            || !rally_phase_acts.is_empty()
            || !weapon_lies.is_empty()
            || cc_infiltration.is_some();
        Meaning {
            scenario,
            clock,
            units,
            weapons,
            movement: MovementMeaning {
                moving_stack,
                last_movers,
                finished,
                sewer_check_failed,
                sewer_entries,
                advanced,
                melee,
                cc_designated,
                cc_withdrawals,
                cc_resolved,
                ambush,
                rallied,
            },
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn: *dice_drawn,
            over: *over,
            end_proposal,
            viewer,
            version: *version,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            aliases,
            next_alias: *next_alias,
            setup_aliases,
            setup,
            opportunity_fire: Trailing::new(
                opportunity_fire,
                opportunity_fire.is_empty(),
                !moved_weapons.is_empty()
                    || !inherent_fp_forfeited.is_empty()
                    || !fire_record.is_empty()
                    || later_fire_record,
            ),
            moved_weapons: Trailing::new(
                moved_weapons,
                moved_weapons.is_empty(),
                !inherent_fp_forfeited.is_empty() || !fire_record.is_empty() || later_fire_record,
            ),
            inherent_fp_forfeited: Trailing::new(
                inherent_fp_forfeited,
                inherent_fp_forfeited.is_empty(),
                !fire_record.is_empty() || later_fire_record,
            ),
            fire_record: Trailing::new(fire_record, fire_record.is_empty(), later_fire_record),
            location_mf: Trailing::new(
                location_mf,
                location_mf.is_empty(),
                !bypassed_concealed.is_empty()
                    || !dropped_to_withdraw.is_empty()
                    || !recovery_attempts.is_empty()
                    || !rally_phase_acts.is_empty()
                    || !weapon_lies.is_empty()
                    || cc_infiltration.is_some(),
            ),
            bypassed_concealed: Trailing::new(
                bypassed_concealed,
                bypassed_concealed.is_empty(),
                !dropped_to_withdraw.is_empty()
                    || !recovery_attempts.is_empty()
                    || !rally_phase_acts.is_empty()
                    || !weapon_lies.is_empty()
                    || cc_infiltration.is_some(),
            ),
            dropped_to_withdraw: Trailing::new(
                dropped_to_withdraw,
                dropped_to_withdraw.is_empty(),
                !recovery_attempts.is_empty()
                    || !rally_phase_acts.is_empty()
                    || !weapon_lies.is_empty()
                    || cc_infiltration.is_some(),
            ),
            recovery_attempts: Trailing::new(
                recovery_attempts,
                recovery_attempts.is_empty(),
                !weapon_lies.is_empty()
                    || cc_infiltration.is_some()
                    || !rally_phase_acts.is_empty(),
            ),
            transferred: Trailing::new(
                NO_TRANSFERS,
                true,
                !weapon_lies.is_empty()
                    || cc_infiltration.is_some()
                    || !rally_phase_acts.is_empty(),
            ),
            weapon_lies: Trailing::new(
                weapon_lies,
                weapon_lies.is_empty(),
                cc_infiltration.is_some() || !rally_phase_acts.is_empty(),
            ),
            cc_infiltration: Trailing::new(
                cc_infiltration,
                cc_infiltration.is_none(),
                !rally_phase_acts.is_empty(),
            ),
            rally_phase_acts: Trailing::new(rally_phase_acts, rally_phase_acts.is_empty(), false),
        }
    }
}

/// A blake3 digest of the encoded state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StateHash(pub [u8; 32]);

digest_text!(StateHash);

/// `Display` as lowercase hex and `Debug` as `Name(hex)` for a newtype over digest bytes
/// (`StateHash`, `dice::Commitment`, `record::chain::LogHash`): every digest reads the same way.
#[macro_export]
macro_rules! digest_text {
    ($name:ident) => {
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&data_encoding::HEXLOWER.encode(&self.0))
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self)
            }
        }
    };
}

/// What `hasher` makes of `prefix` followed by the standard bincode encoding of `value`: the
/// same digest as hashing `encode_to_vec`'s bytes, streamed through a small buffer instead of
/// a vector grown for the whole encoding (stream hashes are made once per event and viewer).
pub fn hash_encoded<T: serde::Serialize + ?Sized>(
    hasher: blake3::Hasher,
    prefix: &[u8],
    value: &T,
) -> [u8; 32] {
    /// Collects the encoder's many small writes (a byte per element of an array) into
    /// chunks the hasher takes at once.
    struct Hashing {
        hasher: blake3::Hasher,
        buf: [u8; 256],
        len: usize,
    }
    impl bincode::enc::write::Writer for Hashing {
        fn write(&mut self, bytes: &[u8]) -> Result<(), bincode::error::EncodeError> {
            if self.len + bytes.len() > self.buf.len() {
                self.hasher.update(&self.buf[..self.len]);
                self.len = 0;
                if bytes.len() > self.buf.len() {
                    self.hasher.update(bytes);
                    return Ok(());
                }
            }
            self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
            Ok(())
        }
    }
    let mut hashing = Hashing {
        hasher,
        buf: [0; 256],
        len: 0,
    };
    hashing.hasher.update(prefix);
    bincode::serde::encode_into_writer(value, &mut hashing, bincode::config::standard())
        .expect("game values always encode");
    hashing.hasher.update(&hashing.buf[..hashing.len]);
    *hashing.hasher.finalize().as_bytes()
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("the log is empty; a game log starts with GameCreated")]
    Empty,
    #[error("the log starts with {0}, not GameCreated")]
    NotCreatedFirst(&'static str),
}

/// An outcome's change to a unit: one path for an outcome the players adjudicated and for one
/// the engine ruled (`FireEffectApplied`), so a unit breaks the same way whoever decided it.
fn apply_outcome(game: &mut Game, id: &UnitId, outcome: Outcome, note: &str) {
    if outcome == Outcome::Eliminate {
        // A unit eliminated leaves its support weapons where it stood (A4.43, A9.74).
        let held: Vec<String> = game
            .weapons
            .values()
            .filter(|w| w.held_by.as_ref() == Some(id))
            .map(|w| w.id.clone())
            .collect();
        for weapon in held {
            game.leave_weapon(&weapon, id);
        }
    }
    if let Some(unit) = game.units.get_mut(id) {
        match outcome {
            Outcome::Break => unit.morale = Morale::Broken,
            Outcome::Rally => unit.morale = Morale::GoodOrder,
            Outcome::Pin => unit.pinned = true,
            Outcome::Eliminate => unit.eliminated = true,
            // The half-squad's ratings are the note's: those `SquadReduced` carries, or empty
            // until the players enter them (`rules::morale::casualty_reduction`).
            Outcome::Reduce if unit.kind == UnitKind::Squad => {
                unit.kind = UnitKind::HalfSquad;
                unit.ratings = note.to_string();
            }
            Outcome::Reduce => {}
            Outcome::Relocate(to) => unit.hex = to,
            // A projection keeps a masked counter's "?" (its name is what it hides).
            Outcome::Relabel if unit.kind != UnitKind::Concealed => unit.ratings = note.to_string(),
            Outcome::Relabel => {}
            // Only an SMC is wounded (A17.1); a second wound adds nothing (A17.3).
            Outcome::Wound if unit.kind.is_smc() => unit.wounded = true,
            Outcome::Wound => {}
        }
    }
}

/// Applies one event. Cannot fail and never decides anything: the event was decided already.
pub fn apply(game: &mut Game, event: &Event) {
    let acting = game.acting();
    each_event!(event, e => e.apply(game));
    game.version += 1;
    match game.viewer {
        Some(viewer) => mask_concealed(game, viewer),
        None => view::refresh_aliases(game),
    }
    keep_undo_trail(game, event, acting);
}

/// Moves the game's [`UndoTrail`] on past `event`: based anew after an event no undo reaches
/// back across for either side (the side to act changed, an undo, the game's start) or once it
/// holds [`UNDO_TRAIL_EVENTS_MAX`] events; else the event is added to it. Only the whole game
/// keeps one: a projection's is never read.
fn keep_undo_trail(game: &mut Game, event: &Event, acting_before: Side) {
    if game.viewer.is_some() {
        return;
    }
    let rebase = matches!(
        event,
        Event::GameCreated(_) | Event::EventsUndone(_) | Event::EventsUndoneTo(_)
    ) || game.acting() != acting_before
        || game.undo_trail.len >= UNDO_TRAIL_EVENTS_MAX;
    if rebase {
        game.undo_trail = UndoTrail::at(game);
    } else {
        game.undo_trail.push(event);
    }
}

/// The bookkeeping every MF expenditure shares: who is moving (A4.2), who moves with a
/// leader (A4.12), MF spent, the MF each unit spent in its Location (A8.3, A9.2:
/// `count_location_mf`), and which support weapons now count as portaged (A4.4). `entered`
/// is the Location the MF were spent entering, if they were (`None`: spent where the units
/// stand).
fn spend(game: &mut Game, units: &[UnitId], mf: &[crate::event::MfAccount], entered: Option<Hex>) {
    count_location_mf(game, mf, entered);
    let movers: BTreeSet<UnitId> = units.iter().cloned().collect();
    let record = &mut game.movement;
    if !movers.is_subset(&record.moving_stack) {
        // A new stack starts moving: everyone who moved before is done (A4.2).
        let previous = std::mem::take(&mut record.moving_stack);
        record.finished.extend(previous);
        record.moving_stack = movers.clone();
    } else {
        // Within the moving stack. If the whole stack moved last, this is it breaking up:
        // the others wait their turn to go on separately. If a part of it moved last and now
        // another part moves, the part that stopped may move no farther (A4.2).
        let active: BTreeSet<UnitId> = record
            .moving_stack
            .difference(&record.finished)
            .cloned()
            .collect();
        if !record.last_movers.is_subset(&movers) && record.last_movers != active {
            let stopped: Vec<UnitId> = record.last_movers.difference(&movers).cloned().collect();
            record.finished.extend(stopped);
        }
    }
    record.last_movers = movers;
    let leader = units
        .iter()
        .find(|id| {
            game.units
                .get(*id)
                .is_some_and(|u| u.kind == UnitKind::Leader)
        })
        .cloned();
    for account in mf {
        if let Some(unit) = game.units.get_mut(&account.unit) {
            let first_step = unit.mf_spent == Mf::default();
            unit.led_by = match (first_step, &leader) {
                (true, Some(l)) if unit.kind.is_mmc() => Some(l.clone()),
                (false, Some(l)) if unit.led_by.as_ref() == Some(l) => Some(l.clone()),
                _ => None,
            };
            unit.mf_spent = account.spent;
        }
    }
    for id in units {
        // Found before anything is changed: most steps portage nothing new, and the weapons
        // are then left shared with the game's other copies rather than copied (`CopyOnWrite`).
        let first_carried: Vec<String> = game
            .weapons
            .values()
            .filter(|w| w.held_by.as_ref() == Some(id) && !w.portaged)
            .map(|w| w.id.clone())
            .collect();
        if first_carried.is_empty() {
            continue;
        }
        let mut counted = 0u8;
        for weapon in &first_carried {
            if let Some(w) = game.weapons.get_mut(weapon) {
                w.portaged = true;
                counted += w.pp;
            }
        }
        if let Some(unit) = game.units.get_mut(id) {
            unit.portage_pp += counted;
        }
    }
}

/// The MF each unit spends in the MPh, counted by the Location they were spent in
/// (`Game::location_mf`, A8.3, A9.2), before `spend` records the new totals: MF spent entering
/// a hex start its count afresh — unless it is the hex the unit stands in, as when going on
/// round it in Bypass (A4.3) — and MF spent without entering anything (Recovery, A4.44; an
/// entry a concealed enemy stopped, A12.15) add to the count of the Location the unit stands
/// in. Entering a new Location forgets the fire at the unit in the one before. In the whole
/// game only, as the field says.
fn count_location_mf(game: &mut Game, mf: &[crate::event::MfAccount], entered: Option<Hex>) {
    if game.viewer.is_some() || game.clock.phase() != Phase::Movement {
        return;
    }
    for account in mf {
        let Some(unit) = game.units.get(&account.unit) else {
            continue;
        };
        let spent = account.spent.saturating_sub(unit.mf_spent);
        let here = unit.hex;
        let stays = |hex: Hex| {
            game.location_mf
                .get(&account.unit)
                .is_some_and(|l| l.hex == hex && l.hex == here)
        };
        let hex = entered.unwrap_or(here);
        if stays(hex) {
            if let Some(l) = game.location_mf.get_mut(&account.unit) {
                l.mf += spent;
            }
        } else {
            game.location_mf.insert(
                account.unit.clone(),
                LocationMf {
                    hex,
                    mf: spent,
                    fired_on_by: BTreeMap::new(),
                },
            );
        }
    }
}

/// A tunnel used in the open is known to the opponent from now on (B8.61, B8.62); a viewer's
/// projection that did not hold it learns it here.
fn reveal_tunnel(game: &mut Game, side: Side, from: Hex, to: Hex) {
    let same = |t: &TunnelState| t.entrances.contains(&from) && t.entrances.contains(&to);
    match game.tunnels.iter_mut().find(|t| same(t)) {
        Some(t) => t.revealed = true,
        None => game.tunnels.push(TunnelState {
            side,
            entrances: [from, to],
            revealed: true,
            destroyed: false,
        }),
    }
}

/// The weapons `units` possess changed Location with them, if this is the MPh (A4.41): a
/// move in any other phase (an advance, a rout, a withdrawal) comes after the AFPh it limits.
fn record_moved_weapons(game: &mut Game, units: &[UnitId]) {
    if game.clock.phase() != Phase::Movement {
        return;
    }
    let Game {
        weapons,
        moved_weapons,
        ..
    } = game;
    for w in weapons.values() {
        if w.held_by.as_ref().is_some_and(|h| units.contains(h)) && !moved_weapons.contains(&w.id) {
            moved_weapons.insert(w.id.clone());
        }
    }
}

/// Possessed weapons go where their holder goes; in the MPh that is the change of Location
/// A4.41 remembers (`record_moved_weapons`).
fn carry_weapons(game: &mut Game, units: &[UnitId], to: Hex) {
    let carried = |w: &Weapon| w.held_by.as_ref().is_some_and(|h| units.contains(h)) && w.hex != to;
    // Asked first, so units that carry nothing leave the weapons shared (`CopyOnWrite`).
    if game.weapons.values().any(carried) {
        for w in game.weapons.values_mut() {
            if carried(w) {
                w.hex = to;
            }
        }
    }
    record_moved_weapons(game, units);
}

/// First Fire marks a unit that fires in the MPh, and firing again there makes it Final Fire
/// (A8.1, A8.3); fire in the DFPh is Final Fire (A8.4).
fn mark_defensive_fire(game: &mut Game, firers: &[UnitId]) {
    match game.clock.phase() {
        Phase::Movement => {
            for id in firers {
                if game.first_fired.contains(id) || game.final_fired.contains(id) {
                    game.final_fired.insert(id.clone());
                } else {
                    game.first_fired.insert(id.clone());
                }
            }
        }
        Phase::DefensiveFire => game.final_fired.extend(firers.iter().cloned()),
        _ => {}
    }
}

/// MF bookkeeping starts afresh every MPh, and after the RtPh's routs.
fn end_movement_phase(game: &mut Game) {
    game.movement = CopyOnWrite::default();
    game.location_mf.clear();
    // Units are changed only if one needs it: unchanged, they stay shared with the position
    // before, and what was derived from them holds (`Units`).
    let moved = |u: &Unit| {
        u.mf_spent != Mf::default()
            || u.led_by.is_some()
            || u.double_time
            || !u.road_only
            || u.bypass.is_some()
            || u.portage_pp != 0
            || u.wa_blocked
            || u.shellhole_cover
            || u.hexes_entered != 0
            || u.assault_moving
            || matches!(u.underground, Some(Underground::Sewer { moved: true, .. }))
    };
    if game.units.values().any(moved) {
        // Each unit is shared on its own too: only those that moved are copied.
        for unit in game.units.values_mut().filter(|u| moved(u)) {
            unit.mf_spent = Mf::default();
            unit.led_by = None;
            unit.double_time = false;
            unit.road_only = true;
            unit.bypass = None;
            unit.portage_pp = 0;
            unit.wa_blocked = false;
            unit.shellhole_cover = false;
            unit.hexes_entered = 0;
            unit.assault_moving = false;
            if let Some(Underground::Sewer { moved, .. }) = &mut unit.underground {
                *moved = false;
            }
        }
    }
    game.unseen_manholes.clear();
    if game.weapons.values().any(|w| w.portaged) {
        for w in game.weapons.values_mut() {
            w.portaged = false;
        }
    }
}

/// At the end of a Player Turn pins come off (A7.8), and so does CX from any Player Turn
/// before the one ending (A4.51).
fn end_player_turn(game: &mut Game, ended: Clock) {
    game.prep_fired.clear();
    game.opportunity_fire.clear();
    game.moved_weapons.clear();
    game.inherent_fp_forfeited.clear();
    game.fire_record.clear();
    let this_turn = Some((ended.turn, ended.player_turn));
    let recovering = |u: &Unit| u.pinned || (u.cx && u.cx_since != this_turn);
    if !game.units.values().any(recovering) {
        // Nothing comes off: the units stay shared with the position before (`Units`).
        return;
    }
    for unit in game.units.values_mut().filter(|u| recovering(u)) {
        unit.pinned = false;
        if unit.cx && unit.cx_since != this_turn {
            unit.cx = false;
            unit.cx_since = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{GameCreated, StepEnded, WeaponMalfunctioned};

    /// A scenario file as the board reads it (the rules' setup checks are a layer above).
    fn read(text: &str) -> Scenario {
        Scenario::read_toml_on(text, None).unwrap()
    }

    fn encoded<T: Serialize>(value: &T) -> Vec<u8> {
        bincode::serde::encode_to_vec(value, bincode::config::standard()).unwrap()
    }

    /// A Bypass a hostile server sent with no hexside traversed gives exits, not a panic
    /// (the client decides its previews over what the server sent).
    #[test]
    fn a_bypass_with_no_hexside_traversed_stands_where_it_came_from() {
        let scenario = read(include_str!("../../../scenarios/b9-41-wall-advantage.toml"));
        let hex = scenario.units.values().next().unwrap().hex;
        let from = scenario.geometry().neighbours(hex)[0];
        let bypass = Bypass {
            hex,
            entered_from: from,
            along: Vec::new(),
            base: Mf::default(),
            doubled: false,
        };
        assert_eq!(bypass.exits(scenario.geometry()), [from, from]);
    }

    /// A viewer's scenario is projected once for a game and its copies (issue 55: it was
    /// projected again for every projection of every position), is the projection made afresh,
    /// and is made again for a copy whose scenario is another value.
    #[test]
    fn a_viewers_scenario_is_projected_once_and_again_only_when_it_changed() {
        let scenario = read(include_str!("../../../scenarios/b9-41-wall-advantage.toml"));
        let game = Game::new(scenario);
        let fresh = |g: &Game, viewer| project_scenario(&g.scenario, &g.setup_aliases, viewer);
        for viewer in [
            Viewer::Side(Side::A),
            Viewer::Side(Side::B),
            Viewer::Spectator,
        ] {
            let first = game.project(viewer);
            assert_eq!(*first.scenario, *fresh(&game, viewer));
            let copy = game.clone();
            assert!(Arc::ptr_eq(&first.scenario, &copy.project(viewer).scenario));
        }
        // Under "?" from the start, so the spectator's scenario is not the game's own.
        assert!(!Arc::ptr_eq(
            &game.scenario,
            &game.project(Viewer::Spectator).scenario
        ));
        let mut other = game.clone();
        let id = other.scenario.units.keys().next().unwrap().clone();
        Arc::make_mut(&mut other.scenario).units.remove(&id);
        let changed = other.project(Viewer::Spectator);
        assert_eq!(*changed.scenario, *fresh(&other, Viewer::Spectator));
        assert_ne!(*changed.scenario, *game.project(Viewer::Spectator).scenario);
    }

    /// A copy of a game shares its units until one side changes them, and then neither sees
    /// the other's change; the encoding (and so the state hash) is the plain map's.
    #[test]
    fn copies_share_units_until_one_changes_them() {
        let scenario = read(include_str!("../../../scenarios/b9-41-wall-advantage.toml"));
        let game = Game::new(scenario);
        let mut copy = game.clone();
        assert!(Arc::ptr_eq(&game.units.0, &copy.units.0));
        assert_eq!(encoded(&game.units), encoded(&*game.units));
        let id = game.units.keys().next().unwrap().clone();
        copy.units.get_mut(&id).unwrap().pinned = !game.units[&id].pinned;
        assert!(!Arc::ptr_eq(&game.units.0, &copy.units.0));
        assert_ne!(game.units[&id].pinned, copy.units[&id].pinned);
        assert_ne!(game.state_hash(), copy.state_hash());
        copy.units.get_mut(&id).unwrap().pinned = game.units[&id].pinned;
        assert_eq!(game.state_hash(), copy.state_hash());
    }

    /// The projection is made field by field: the records and prompts a game carries besides
    /// its units (a declared attack's WA holders, a WA chance, a challenge, units shown for
    /// WA, prep fire, a HIP moment) name no unit hidden from the viewer and no concealed unit
    /// by its id — each is kept only as far as the viewer may know it, as its stream shows it.
    /// A9.1, A9.7: a support weapon fired by a unit under "?" is named to its own side only,
    /// in the declared attack and in its malfunction.
    #[test]
    fn a_weapon_under_another_sides_concealment_is_not_named() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        let holder: UnitId = "r2".into();
        assert!(game.units[&holder].concealed);
        let weapon = Weapon {
            id: "rlmgx".into(),
            name: "LMG".into(),
            pp: 1,
            held_by: Some(holder.clone()),
            hex: game.units[&holder].hex,
            portaged: false,
            ratings: None,
            malfunctioned: false,
            fired: true,
            repair_tried: false,
        };
        game.weapons.insert(weapon.id.clone(), weapon);
        game.attack = Some(DeclaredAttack {
            by: Side::B,
            firers: vec![],
            weapons: vec!["rlmgx".into()],
            target: game.units["g1"].hex,
            wa_holders: BTreeSet::new(),
            into_sewer: false,
        });
        let german = game.project(Viewer::Side(Side::A));
        assert!(german.attack.as_ref().unwrap().weapons.is_empty());
        assert!(!german.weapons.contains_key("rlmgx"));
        let russian = game.project(Viewer::Side(Side::B));
        assert_eq!(russian.attack.as_ref().unwrap().weapons, ["rlmgx"]);
        let malfunction = Event::WeaponMalfunctioned(WeaponMalfunctioned {
            weapon: "rlmgx".into(),
            holder,
            original_dr: 12,
            breakdown: 12,
        });
        assert!(!game.shows(Viewer::Side(Side::A), &malfunction));
        assert!(game.shows(Viewer::Side(Side::B), &malfunction));
    }

    /// A4.41: which weapons changed Location in the MPh is the ATTACKER's record: his own
    /// projection carries it, the DEFENDER's and a spectator's do not, and the state hash
    /// covers it without reading it as the Opportunity Firers it follows in the encoding.
    #[test]
    fn the_weapons_moved_are_the_attackers_record_and_part_of_the_meaning() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        let before = game.state_hash();
        let moved: BTreeSet<String> = ["g-lmg".to_string()].into();
        game.moved_weapons = moved.clone();
        let attacker = game.attacker();
        assert_eq!(game.project(Viewer::Side(attacker)).moved_weapons, moved);
        for viewer in [Viewer::Side(attacker.opponent()), Viewer::Spectator] {
            assert!(game.project(viewer).moved_weapons.is_empty(), "{viewer:?}");
        }
        let with_moved = game.state_hash();
        assert_ne!(with_moved, before, "a weapon moved changes the meaning");
        game.moved_weapons.clear();
        assert_eq!(game.state_hash(), before, "an empty record is not encoded");
        game.opportunity_fire = moved;
        assert_ne!(
            game.state_hash(),
            with_moved,
            "an Opportunity Firer of the same name is another meaning"
        );
    }

    /// A8.3, A9.2: the MF each mover spent in its Location, and the fire at it there, are the
    /// whole game's: no viewer's projection carries them, the state hash covers them without
    /// reading them as the record of attacks they follow in the encoding, and an empty count is
    /// not encoded at all.
    #[test]
    fn the_mf_in_each_location_is_the_whole_games_and_part_of_the_meaning() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        let before = game.state_hash();
        let here = LocationMf {
            hex: "2E3".parse().unwrap(),
            mf: Mf::whole(2),
            fired_on_by: [("r1".to_string(), 1)].into(),
        };
        game.location_mf.insert("g1".into(), here.clone());
        for viewer in [
            Viewer::Side(Side::A),
            Viewer::Side(Side::B),
            Viewer::Spectator,
        ] {
            assert!(game.project(viewer).location_mf.is_empty(), "{viewer:?}");
        }
        let counted = game.state_hash();
        assert_ne!(
            counted, before,
            "MF counted in a Location change the meaning"
        );
        game.location_mf.get_mut("g1").unwrap().fired_on_by.clear();
        assert_ne!(game.state_hash(), counted, "so does the fire counted there");
        game.location_mf.clear();
        assert_eq!(game.state_hash(), before, "an empty count is not encoded");
        game.fire_record.push(FiredAttack {
            phase: Phase::Movement,
            firers: vec!["g1".into()],
            weapons: vec![],
            target: "2E3".parse().unwrap(),
            into_sewer: false,
            movers: vec![],
        });
        let recorded = game.state_hash();
        game.fire_record.clear();
        game.location_mf.insert("g1".into(), here);
        assert_ne!(
            game.state_hash(),
            recorded,
            "a count is not read as an attack"
        );
    }

    /// A9.11, A7.53: the record of the Player Turn's attacks is the whole game's: no viewer's
    /// projection carries it, the state hash covers it without reading it as the forfeits it
    /// follows in the encoding, and an empty record is not encoded at all.
    /// An export written before A7.55 was ruled carries the hash of a game whose record of
    /// attacks had no targets: the same game hashes the same now. The hash was computed by the
    /// build before the targets were recorded.
    #[test]
    fn a_record_of_attacks_hashes_as_before_its_targets() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        game.fire_record.push(FiredAttack {
            phase: Phase::PrepFire,
            firers: vec!["g1".into()],
            weapons: vec!["lmg1".into()],
            target: "2E3".parse().unwrap(),
            into_sewer: false,
            movers: vec![],
        });
        game.fire_record.push(FiredAttack {
            phase: Phase::Movement,
            firers: vec!["r1".into(), "r2".into()],
            weapons: vec![],
            target: "2F4".parse().unwrap(),
            into_sewer: false,
            movers: vec![("g2".into(), Mf::whole(2))],
        });
        assert_eq!(
            game.state_hash().to_string(),
            "0f0280a14c46a559db9c5e88e5bb401696c4f0ee419e707a1146899be1c24d34"
        );
    }

    #[test]
    fn the_fire_record_is_the_whole_games_and_part_of_the_meaning() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        let before = game.state_hash();
        game.fire_record.push(FiredAttack {
            phase: Phase::PrepFire,
            firers: vec!["g1".into()],
            weapons: vec![],
            target: "2E3".parse().unwrap(),
            into_sewer: false,
            movers: vec![],
        });
        for viewer in [
            Viewer::Side(Side::A),
            Viewer::Side(Side::B),
            Viewer::Spectator,
        ] {
            assert!(game.project(viewer).fire_record.is_empty(), "{viewer:?}");
        }
        let with_record = game.state_hash();
        assert_ne!(
            with_record, before,
            "an attack recorded changes the meaning"
        );
        // A7.55's target and movers are not: the hash of a game ended with an attack recorded
        // stays what the exports written before them carry.
        game.fire_record[0].target = "2E4".parse().unwrap();
        game.fire_record[0].into_sewer = true;
        game.fire_record[0].movers = vec![("r1".into(), Mf::whole(1))];
        assert_eq!(game.state_hash(), with_record, "its target is left out");
        game.fire_record.clear();
        assert_eq!(game.state_hash(), before, "an empty record is not encoded");
        game.inherent_fp_forfeited = ["g1".to_string()].into();
        assert_ne!(
            game.state_hash(),
            with_record,
            "a forfeit by the same unit is another meaning"
        );
    }

    /// The "?" due to be lost to a Bypass (A4.33) and the units that dropped a weapon to
    /// withdraw (A4.43) are meaning, hashed after the sets added before them: each moves the
    /// hash, the same unit in one or the other is two meanings, and neither empty is encoded.
    #[test]
    fn the_movement_records_added_sets_are_part_of_the_meaning() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        let before = game.state_hash();
        game.movement.bypassed_concealed = ["g1".to_string()].into();
        let due = game.state_hash();
        assert_ne!(due, before, "a \"?\" due to be lost changes the meaning");
        game.movement.bypassed_concealed.clear();
        assert_eq!(game.state_hash(), before, "an empty set is not encoded");
        game.movement.dropped_to_withdraw = ["g1".to_string()].into();
        let dropped = game.state_hash();
        assert_ne!(dropped, before, "a drop to withdraw changes the meaning");
        assert_ne!(
            dropped, due,
            "the same unit in the other set is another meaning"
        );
        game.movement.dropped_to_withdraw.clear();
        game.movement.recovery_attempts = [("lmg".to_string(), ["g1".to_string()].into())].into();
        let tried = game.state_hash();
        assert_ne!(tried, before, "a Recovery attempt changes the meaning");
        assert_ne!(tried, dropped, "and is not a drop to withdraw");
        game.movement.recovery_attempts.clear();
        assert_eq!(game.state_hash(), before, "no attempt is not encoded");
        game.movement.rally_phase_acts = [("g1".to_string(), RallyPhaseAct::Transfer)].into();
        let transferred = game.state_hash();
        assert_ne!(
            transferred, before,
            "a Transfer in the RPh changes the meaning"
        );
        assert_ne!(transferred, dropped, "and is not a drop to withdraw");
        game.movement.rally_phase_acts = [("g1".to_string(), RallyPhaseAct::Repair)].into();
        assert_ne!(
            game.state_hash(),
            transferred,
            "a repair is another act than a Transfer"
        );
        game.movement.rally_phase_acts.clear();
        assert_eq!(game.state_hash(), before, "no RPh act is not encoded");
    }

    #[test]
    fn records_beside_the_units_name_only_what_the_viewer_may_know() {
        let scenario = read(include_str!("../../../scenarios/village-outskirts.toml"));
        let mut game = Game::new(scenario);
        // r3 is hidden (HIP), r2 under "?": the German knows neither by its id.
        let hip: UnitId = "r3".into();
        let concealed: UnitId = "r2".into();
        let both: BTreeSet<UnitId> = [hip.clone(), concealed.clone()].into();
        game.attack = Some(DeclaredAttack {
            by: Side::A,
            firers: vec!["g1".into()],
            weapons: vec![],
            target: game.units["r1"].hex,
            wa_holders: both.clone(),
            into_sewer: false,
        });
        game.wa_chance = Some(WaChance {
            side: Side::B,
            units: vec![hip.clone()],
        });
        game.wa_challenge = Some(WaChallenge {
            side: Side::B,
            holders: vec![hip.clone()],
            claimants: vec!["g1".into()],
            how: crate::event::WaClaim::Mandatory,
        });
        game.wa_shown = both.clone();
        game.prep_fired = both.clone();
        game.opportunity_fire = both.clone();
        game.movement.sewer_check_failed = both.clone();
        let german = Viewer::Side(Side::A);
        let view = game.project(german);
        let json = serde_json::to_string(&view).unwrap();
        for secret in ["\"r3\"", "\"r2\""] {
            assert!(
                !json.contains(secret),
                "the German's projection names {secret}"
            );
        }
        let alias = game.aliases[&concealed].clone();
        let attack = view.attack.as_ref().expect("the German's own attack");
        assert_eq!(attack.wa_holders, [alias.clone()].into());
        assert_eq!(
            view.wa_chance, None,
            "a chance for a hidden unit is not the German's"
        );
        assert_eq!(view.wa_challenge, None);
        assert_eq!(view.wa_shown, [alias].into());
        // The Russian knows his own units by their ids, every one.
        let russian = game.project(Viewer::Side(Side::B));
        assert_eq!(russian.attack.unwrap().wa_holders, both);
        assert_eq!(russian.wa_chance, game.wa_chance);
        assert_eq!(russian.wa_challenge, game.wa_challenge);
    }

    /// Positions whose hashes are pinned: a game created from each scenario, and the same game
    /// after its first step ended. Two of the scenarios have units under "?", so the aliases
    /// the whole game keeps are in them.
    fn pinned_positions() -> Vec<(&'static str, Game)> {
        let texts = [
            (
                "b9-41",
                include_str!("../../../scenarios/b9-41-wall-advantage.toml"),
            ),
            (
                "village",
                include_str!("../../../scenarios/village-outskirts.toml"),
            ),
            (
                "sewer",
                include_str!("../../../scenarios/sewer-infiltration.toml"),
            ),
        ];
        let mut positions = vec![];
        for (name, text) in texts {
            let mut game = Game::replay([&Event::GameCreated(GameCreated {
                scenario: read(text),
            })])
            .unwrap();
            positions.push((name, game.clone()));
            let next = game
                .clock
                .next(game.scenario.turns)
                .expect("a step follows");
            let ended = Event::StepEnded(StepEnded {
                by: game.acting(),
                ended: game.clock,
                next,
            });
            apply(&mut game, &ended);
            positions.push((name, game));
        }
        positions
    }

    /// The state hash of each pinned position is fixed: a change of `Game`'s layout or
    /// bookkeeping must leave it alone. It moves only when what a position means grows (a
    /// unit's Desperation Morale, A10.62; a weapon's Multiple ROF, A9.2; a squad's half-squad
    /// and a side's nationality, A7.302 — all in the scenario; a unit's wound, A17), which breaks the verification of exports written before; say so in `docs/protocol.md`.
    #[test]
    fn state_hashes_are_pinned() {
        let pinned = [
            "48f1a3a44dbbc56fd87bc8090f0ad0f5ea48c9ec793ff5f0343afca6d786f7ee",
            "dbb5cefadae300a59f4497c448ae770725233be3ba359402508abcb669bcff3b",
            "1fe23fbb40d0952c516ec64a975c8f8870b0bb8a4df4214478235276c9454ddd",
            "36135343b7e660a21887dde3059614fcd03c1c06c094b9bacf874471ae37b3a1",
            "aa11ac35c8ef4a7261f7d4c71c2c29507f8d5234fbecf19ba52556317351279d",
            "261a14c82924a506d30c808933411df29acd9764c1ff6188c9e0f4a592fc4524",
        ];
        let positions = pinned_positions();
        assert!(
            positions.iter().any(|(_, g)| !g.aliases.is_empty()),
            "a pinned position has units under \"?\""
        );
        let got: Vec<String> = positions
            .iter()
            .map(|(_, g)| g.state_hash().to_string())
            .collect();
        let names: Vec<String> = positions
            .iter()
            .map(|(name, g)| format!("{name} at {}", g.version))
            .collect();
        assert_eq!(got, pinned, "{names:?}");
    }

    /// Bookkeeping is not meaning: a game with a long undo trail, its units' index built and
    /// its units shared with a copy hashes as the same position decoded from its encoding
    /// (no trail, no index, nothing shared) does. A change the rules see moves the hash, and
    /// copies only the unit it changes.
    #[test]
    fn bookkeeping_leaves_the_hash_alone_and_meaning_moves_it() {
        let positions = pinned_positions();
        assert!(
            positions
                .iter()
                .any(|(_, g)| g.undo_trail.len > 0 || g.undo_trail.base.is_some()),
            "a pinned position has an undo trail"
        );
        for (name, game) in positions {
            let copy = game.clone();
            assert!(copy.units.shared_with(&game.units));
            if let Some(unit) = game.units.values().next() {
                let _ = game.units.in_hex(unit.hex).count();
            }
            let bytes = encoded(&game);
            let (decoded, _): (Game, usize) =
                bincode::serde::decode_from_slice(&bytes, bincode::config::standard()).unwrap();
            assert_eq!(decoded.undo_trail.len, 0);
            assert_eq!(decoded.state_hash(), game.state_hash(), "{name}");

            let mut moved = game.clone();
            let id = moved.units.keys().next().unwrap().clone();
            let pinned = moved.units[&id].pinned;
            moved.units.get_mut(&id).unwrap().pinned = !pinned;
            assert_ne!(moved.state_hash(), game.state_hash(), "{name}");
            // The change copied that unit alone: every other is still the one the game holds.
            let was: &BTreeMap<UnitKey, CopyOnWrite<Unit>> = &game.units;
            let now: &BTreeMap<UnitKey, CopyOnWrite<Unit>> = &moved.units;
            for (other, unit) in now {
                assert_eq!(
                    unit.shared_with(&was[other]),
                    **other != id,
                    "{name}: {other:?}"
                );
            }
            let mut later = game.clone();
            later.dice_drawn += 1;
            assert_ne!(later.state_hash(), game.state_hash(), "{name}");
        }
    }

    /// A copy of a game (the decision's look-ahead, a checkpoint) shares the Movement Phase's
    /// record with the game it copies until one of them changes it; a change copies it for
    /// the one that changes, and the other's record, encoding and hash stay as they were.
    #[test]
    fn a_copy_shares_the_movement_record_until_one_changes_it() {
        for (name, game) in pinned_positions() {
            let mut copy = game.clone();
            assert!(copy.movement.shared_with(&game.movement), "{name}");
            copy.dice_drawn += 1;
            assert!(copy.movement.shared_with(&game.movement), "{name}");
            let before = (encoded(&game), game.state_hash());
            copy.movement.finished.insert("a unit of the copy's".into());
            assert!(!copy.movement.shared_with(&game.movement), "{name}");
            assert!(
                !game.movement.finished.contains("a unit of the copy's"),
                "{name}"
            );
            assert_eq!((encoded(&game), game.state_hash()), before, "{name}");
        }
    }

    /// Hashing an encoding as it is written gives the digest of the whole encoding, for small
    /// values and for ones far larger than the buffer, with a plain hasher and a derived key.
    #[test]
    fn hashing_an_encoding_as_written_is_hashing_the_encoding() {
        let text = include_str!("../../../scenarios/sewer-infiltration.toml");
        let scenario = read(text);
        assert!(encoded(&scenario).len() > 1_000);
        assert_eq!(
            hash_encoded(blake3::Hasher::new(), &[], &scenario),
            *blake3::hash(&encoded(&scenario)).as_bytes()
        );
        let small = (3u64, Clock::START);
        let mut whole = vec![7; 32];
        whole.extend(encoded(&small));
        assert_eq!(
            hash_encoded(blake3::Hasher::new(), &[7; 32], &small),
            *blake3::hash(&whole).as_bytes()
        );
        assert_eq!(
            hash_encoded(blake3::Hasher::new_derive_key("ctx"), &[], &scenario),
            blake3::derive_key("ctx", &encoded(&scenario))
        );
        let game = Game::new(scenario);
        assert_eq!(
            game.state_hash().0,
            *blake3::hash(&encoded(&Meaning::of(&game))).as_bytes()
        );
    }
}
