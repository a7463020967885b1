//! Fire (A7, A8, A9): attacks declared, read on the IFT or left to the players, their
//! effects on units, support weapons' ROF and malfunctions, and Opportunity Fire.

use super::RepairResult;
use crate::command::Outcome;
use board::hex::Hex;
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// Fire declared against a hex; until it is resolved no WA there may change (B9.322).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackDeclared {
    pub by: Side,
    pub firers: Vec<UnitId>,
    /// The support weapons that fire in it, each by the unit possessing it (A9.11).
    #[serde(default)]
    pub weapons: Vec<String>,
    pub target: Hex,
    /// Into the sewer beneath `target`: Point Blank Fire with a −2 DRM (B8.3).
    pub into_sewer: bool,
}

/// A support weapon's Original IFT DR reached its Breakdown Number: it malfunctioned
/// (A9.7) and fires no more until repaired. The attack it took part in is resolved all the
/// same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeaponMalfunctioned {
    pub weapon: String,
    /// The unit possessing it, whose fire it was.
    pub holder: UnitId,
    pub original_dr: u8,
    pub breakdown: u8,
}

/// A support weapon kept its Multiple ROF (A9.2): the Original coloured dr of the IFT DR it
/// fired with was at or below its ROF, so it may fire again this phase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultipleRofRetained {
    pub weapon: String,
    /// The unit possessing it, whose fire it was.
    pub holder: UnitId,
    pub coloured_dr: u8,
    pub rof: u8,
}

/// The unit possessing a malfunctioned weapon tried to repair it in the RPh (A9.72): its
/// dr (logged by the `DiceRolled` before it) repaired it, eliminated it, or left it as it
/// was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeaponRepairAttempted {
    pub weapon: String,
    pub holder: UnitId,
    pub dr: u8,
    pub result: RepairResult,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackResolved {
    pub by: Side,
    pub target: Hex,
}

/// The engine does not resolve `by`'s attack on `target` by the rules (A7): `why` names
/// what in it the engine does not model, under `rule`. The players enter its outcome with
/// `adjudicate`, as for every attack before the engine read the IFT.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttackLeftToPlayers {
    pub by: Side,
    pub target: Hex,
    pub rule: String,
    pub why: String,
}

/// `by`'s Defensive First Fire (A8.1, A8.3, A8.31) on the moving stack in `hex` left
/// Residual FP there for the rest of the MPh (A8.2): half the IFT column the attack was
/// read on, after any Cowering. `None` when the engine does not rule how much (an attack
/// it left to the players, one read on the 1 column, or one through a Hindrance): the
/// players determine it. Only one stays in a Location, the stronger; both sides see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResidualFpLeft {
    pub by: Side,
    pub hex: Hex,
    pub fp: Option<u8>,
}

/// `by`'s attack on `target` read on the IFT (A7.3), after the `DiceRolled` that holds its
/// dice and DRMs: the FP total as printed (fractions kept, A7.2), the column read (moved
/// left when the fire cowered, A7.9), the Final DR and the chart's result as printed
/// (`1KIA`, `K/2`, `3MC`, `NMC`, `PTC`, `NE`). Its effects follow from `rules::morale` (`FireEffectApplied`, `FireEffectLeftToPlayers`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IftAttackResolved {
    pub by: Side,
    pub target: Hex,
    pub fp: String,
    pub column: u8,
    pub cowered: bool,
    pub final_dr: i16,
    pub result: String,
}

/// An effect on one unit the rules applied from a roll of their own (`rules::morale`):
/// broken by a failed MC (A10.1), pinned by a failed PTC (A7.8), rallied (A10.6). `why`
/// gives the check's figures; its roll is the `DiceRolled` before it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FireEffectApplied {
    pub unit: UnitId,
    pub outcome: Outcome,
    pub rule: String,
    pub why: String,
}

/// Part of an engine-read IFT result's or rally's effects the engine does not rule on,
/// asked of the players at the point it arises (Random Selection, Casualty Reduction,
/// Heat of Battle, ELR, Leader Loss, Fate …): for `unit`, or for the attack's units as a
/// whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FireEffectLeftToPlayers {
    pub target: Hex,
    pub unit: Option<UnitId>,
    pub rule: String,
    pub why: String,
}

/// The ATTACKER designated these units Opportunity Firers in his PFPh (A7.25, A3.2): the
/// Bounding Fire counter both sides see. They do not move in the MPh (A3.3) and fire in
/// the AFPh without Advancing Fire's halving (A7.24) or Assault Fire's bonus (A7.36).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpportunityFireMarked {
    pub units: Vec<UnitId>,
}
