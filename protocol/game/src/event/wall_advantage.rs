//! Wall Advantage (B9.32): claims, losses, challenges of concealed holders (B9.324) and
//! the chances and windows play waits on.

use super::WaClaim;
use super::WaLoss;
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// Units put a "Wall Advan" counter on: they hold WA over every eligible wall/hedge
/// hexside of their hex (B9.32, B9.321). `how` says at which moment and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageClaimed {
    pub units: Vec<UnitId>,
    pub how: WaClaim,
}

/// Units lost or gave up WA, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageForfeited {
    pub units: Vec<UnitId>,
    pub why: WaLoss,
}

/// A claim met a concealed enemy holding WA over a shared hexside; both sides revealed
/// a real unit, and the claim failed (B9.324, B9.321).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageDenied {
    pub units: Vec<UnitId>,
    pub by: UnitId,
}

/// Units shown to the opponent for a moment to prove they are real (B9.324); they stay
/// concealed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsMomentarilyRevealed {
    pub units: Vec<UnitId>,
}

/// All enemy units sharing these units' wall/hedge hexsides lost WA: their side may claim
/// it now, out of the usual moments (B9.322), and play waits for its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageChanceOffered {
    pub side: Side,
    pub units: Vec<UnitId>,
}

/// The side offered the chance let it pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageChanceDeclined {
    pub side: Side,
}

/// A claim (or a unit that must hold WA) met enemy holders that are all concealed or
/// dummies: their side must show a real unit among `holders` or forfeit (B9.324), and play
/// waits for its answer. `how` is the moment of the claim, which stands if they forfeit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageChallenged {
    pub side: Side,
    pub holders: Vec<UnitId>,
    pub claimants: Vec<UnitId>,
    pub how: WaClaim,
}

/// Enemy units moved adjacent and attempt to claim WA while `side` still has hidden
/// units: before their claim is settled, `side` may place a hidden unit on board and claim
/// WA first (B9.324), or let the moment pass; play waits for its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WallAdvantageHipWindowOffered {
    pub side: Side,
    pub claimants: Vec<UnitId>,
    pub how: WaClaim,
}
