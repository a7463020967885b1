//! Sewers (B8.4) and tunnels (B8.6): going down, moving and getting lost beneath the
//! board, coming up, and tunnels used, seen and found.

use super::MfAccount;
use board::hex::Hex;
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// The leader's 4TC failed: these units cannot enter the sewer this MPh (B8.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerEntryFailed {
    pub units: Vec<UnitId>,
}

/// Units went down a Manhole into the sewer beneath it, for all their MF (B8.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsEnteredSewer {
    pub units: Vec<UnitId>,
    pub hex: Hex,
}

/// A sewer stack moved beneath another Manhole (B8.41); `designated_by` is the DEFENDER
/// when the stack was lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerStackMoved {
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub to: Hex,
    pub designated_by: Option<Side>,
}

/// The stack is lost: the DEFENDER must say where it goes (B8.41).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerStackLost {
    pub units: Vec<UnitId>,
    pub at: Hex,
    pub defender: Side,
    pub options: Vec<Hex>,
}

/// The Sewer Emergence Chart's result for a stack (B8.42).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerEmergenceRolled {
    pub units: Vec<UnitId>,
    pub hex: Hex,
    pub result: crate::Emergence,
}

/// Sewer or tunnel units came up into their hex, concealed (B8.42, B8.61).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsSurfaced {
    pub units: Vec<UnitId>,
    pub hex: Hex,
}

/// Units entered a tunnel for all their MF and wait beneath "Sewer?" at its other end
/// (B8.61); using it reveals the tunnel to the opponent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsEnteredTunnel {
    pub units: Vec<UnitId>,
    pub side: Side,
    pub from: Hex,
    pub exit: Hex,
}

/// A tunnel entrance was destroyed (B8.63): the tunnel is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelDestroyed {
    pub entrance: Hex,
}

/// The ATTACKER declared a road Manhole out of Known enemy LOS (or all of it Hindered
/// ≥ +2), for the Sewer Emergence drm (B8.42); the opponent may dispute it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManholeDeclaredUnseen {
    pub by: Side,
    pub hex: Hex,
}

/// Broken units routed through their side's tunnel in the RtPh: in at `from`, out at `to`,
/// not concealed (B8.62).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsRoutedThroughTunnel {
    pub units: Vec<UnitId>,
    pub side: Side,
    pub from: Hex,
    pub to: Hex,
}

/// A side claims the use of the tunnel entrance at `entrance` happened in `unit`'s LOS
/// (B8.63); the engine traces no LOS, so the opponent may dispute it like an adjudication.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelUseSeen {
    pub by: Side,
    pub unit: UnitId,
    pub entrance: Hex,
}

/// A unit searched its Location by the recovery procedure of A4.44 and discovered the tunnel
/// entrance there (B8.63).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelEntranceDiscovered {
    pub by: Side,
    pub unit: UnitId,
    pub entrance: Hex,
    pub mf: MfAccount,
}

/// The enemy tunnel entrance at `entrance` was used in the LOS of these units of `by`, as
/// the engine traced it from each to the entrance Location (B8.63). Only `by` receives it:
/// it says which of its own units see that hex, nothing more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelUseSighted {
    pub by: Side,
    pub entrance: Hex,
    pub units: Vec<UnitId>,
}
