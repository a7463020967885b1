//! Events: facts, in the past tense. Every change to a game is one of these, appended to the
//! log and applied by `apply` — the same way live and in replay.

use crate::command::Outcome;
use crate::hex::Hex;
use crate::phase::Clock;
use crate::scenario::{Scenario, Side, UnitId};
use crate::terrain::{HexsideFeature, Mf};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// The game began from this scenario; always the first event of a log, so a log is
    /// self-contained.
    GameCreated { scenario: Scenario },
    /// The acting side finished a step; the clock moved on to `next`.
    StepEnded { by: Side, ended: Clock, next: Clock },
    /// The last step of the last Game Turn ended.
    GameEnded { turns_played: u16 },
    /// A unit (or a stack moving together) entered an adjacent hex, paying `cost` (A4).
    UnitMoved {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        /// MF spent this MPh and MF left, per unit, after this step.
        mf: Vec<MfAccount>,
    },
    /// A player entered an outcome the engine does not compute.
    OutcomeAdjudicated {
        by: Side,
        unit: UnitId,
        outcome: Outcome,
        note: String,
    },
}

/// What one step of movement cost and why, line by line, so a replay shows why it was legal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveCost {
    /// Cost Of Terrain of the hex entered, and the terrain rule it comes from.
    pub cot: Mf,
    pub cot_rule: String,
    /// Added when climbing: the COT is doubled for a higher level (B10.4 via B9.4).
    pub elevation: Mf,
    /// Wall, hedge or bocage crossed (B9.4, B9.54); never doubled for elevation.
    pub hexside: Option<HexsideFeature>,
    pub hexside_mf: Mf,
    /// The entry takes the unit's whole allotment (Marsh, B16).
    pub all_mf: bool,
    pub total: Mf,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MfAccount {
    pub unit: UnitId,
    pub spent: Mf,
    pub left: Mf,
}

impl Event {
    /// The short name used in logs and the readable game record.
    pub fn name(&self) -> &'static str {
        match self {
            Event::GameCreated { .. } => "GameCreated",
            Event::StepEnded { .. } => "StepEnded",
            Event::GameEnded { .. } => "GameEnded",
            Event::UnitMoved { .. } => "UnitMoved",
            Event::OutcomeAdjudicated { .. } => "OutcomeAdjudicated",
        }
    }

    /// Units this event tells about; a viewer who may not see one of them may not see the event.
    pub fn units(&self) -> Vec<&UnitId> {
        match self {
            Event::UnitMoved { units, .. } => units.iter().collect(),
            Event::OutcomeAdjudicated { unit, .. } => vec![unit],
            _ => vec![],
        }
    }
}
