//! Close Combat (A11): designation, Ambush, Melee and withdrawal from it.

use board::hex::Hex;
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// `by` designated all its CC attacks in the Location of `hex` (A11.12). The ATTACKER's
/// waits for the DEFENDER's; the DEFENDER's is followed by every attack's roll and result
/// (`DiceRolled`, `FireEffectApplied`, `FireEffectLeftToPlayers`) and, with both sides
/// still there, the Melee (A11.7). `no_ambush` is the ATTACKER's word that the players'
/// Ambush check found none (A11.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloseCombatDesignated {
    pub by: Side,
    pub hex: Hex,
    pub attacks: Vec<crate::command::CcAttack>,
    /// The side's withdrawals from the Melee, declared with its attacks (A11.2).
    #[serde(default)]
    pub withdrawals: Vec<crate::command::CcWithdrawal>,
    pub no_ambush: bool,
}

/// As the APh ended, the engine checked for Ambush in the CC Location of `hex` (A11.4):
/// each side's dr went before this (`DiceRolled`); `ambusher` is the side whose Final dr
/// was at least three less than the other's, if one was. Its CC attacks there come first,
/// and the other side's after, with what is left of it (`rules::close_combat`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AmbushChecked {
    pub hex: Hex,
    pub ambusher: Option<Side>,
}

/// The Close Combat in `hex` ended with units of both sides still there: Melee (A11.7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeleeRecorded {
    pub hex: Hex,
}

/// Units held in Melee in `from` that attempted to withdraw (A11.2) came out of the CC
/// whole and entered the ADJACENT Location of `to`: they are in Melee no longer. `cx`
/// are those the entry made CX, as an advance there would (A4.72).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsWithdrew {
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub to: Hex,
    pub cx: Vec<UnitId>,
}
