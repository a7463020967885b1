//! Movement (A4) and entry from off board (A2.51): steps, Bypass, Double Time, Assault
//! Movement, support weapons picked up and dropped, and MF spent.

use super::MfAccount;
use super::MoveCost;
use board::hex::Hex;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// A unit (or a stack moving together) entered an adjacent hex, paying `cost` (A4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitMoved {
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub to: Hex,
    pub cost: MoveCost,
    /// MF spent this MPh and MF left, per unit, after this step.
    pub mf: Vec<MfAccount>,
}

/// A unit (or a stack together) advanced into the adjacent hex `to` in the APh (A4.7);
/// `cost` is what entering it costs in the MPh, the measure of Difficult Terrain, and
/// `cx` the units that became CX doing so (A4.72).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitAdvanced {
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub to: Hex,
    pub cost: MoveCost,
    pub cx: Vec<UnitId>,
}

/// A unit (or stack) moved in Bypass around the obstacle of `hex` along these hexsides
/// (A4.3), entering the hex or continuing around it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitBypassed {
    pub units: Vec<UnitId>,
    pub hex: Hex,
    /// The hex the units came from, or `hex` itself when continuing around it.
    pub from: Hex,
    pub along: Vec<Hex>,
    pub cost: MoveCost,
    pub mf: Vec<MfAccount>,
}

/// Units declared Double Time: +1 MF this MPh, and they are CX (A4.5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoubleTimeDeclared {
    pub units: Vec<UnitId>,
    pub mf: Vec<MfAccount>,
}

/// Units declared Assault Movement before moving (A4.61).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssaultMovementDeclared {
    pub units: Vec<UnitId>,
}

/// A unit recovered an unpossessed support weapon in its Location (A4.43, A4.44).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeaponPickedUp {
    pub unit: UnitId,
    pub weapon: String,
    pub mf: MfAccount,
}

/// A unit dropped possession of a support weapon, at no MF cost (A4.43).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeaponDropped {
    pub unit: UnitId,
    pub weapon: String,
}

/// Units tried to enter a hex held by concealed or hidden enemy units: those are revealed
/// (dummies removed), and the movers stay where they were, their MF spent (A12.15) and
/// their WA lost (B9.41). `from == to` when they tried to enter from off board (A2.51):
/// they stay off board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitEntryBlocked {
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub to: Hex,
    pub revealed: Vec<crate::Unit>,
    pub dummies_removed: Vec<UnitId>,
    pub cost: MoveCost,
    pub mf: Vec<MfAccount>,
}

/// Units paid the rest of the shellholes' cost in their hex: they have the +1 TEM even
/// against Defensive First Fire (B2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellholeCoverTaken {
    pub units: Vec<UnitId>,
    pub mf: Vec<MfAccount>,
}

/// Units spent their whole MF allotment at once: going down a Manhole (B8.4) or into a
/// tunnel (B8.61). Logged before the entry itself, so the state shows every MF gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllMfSpent {
    pub units: Vec<UnitId>,
    pub rule: String,
    pub mf: Vec<MfAccount>,
}

/// Units entered the map from off board along their scenario edge into `hex`, paying its
/// entry cost from an off-board Open Ground hex (A2.51), with what they possess.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsEntered {
    pub units: Vec<crate::Unit>,
    pub weapons: Vec<crate::Weapon>,
    pub hex: Hex,
    pub cost: MoveCost,
    pub mf: Vec<MfAccount>,
}
