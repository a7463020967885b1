//! Wall Advantage (B9.32): claims, losses, challenges of concealed holders (B9.324) and
//! the chances and windows play waits on.

use super::Sides;
use super::WaClaim;
use super::WaLoss;
use super::{Event, Fact};

use crate::view::Names;
use crate::{Game, WaChallenge, WaChance, WaHipWindow};
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

impl Fact for WallAdvantageClaimed {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let WallAdvantageClaimed { units, how } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.wall_advantage = true;
            }
        }
        if *how == crate::event::WaClaim::EnemyLostIt {
            game.wa_chance = None;
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WallAdvantageClaimed { units, how } = self;
        Event::WallAdvantageClaimed(WallAdvantageClaimed {
            units: names.names(&units),
            how,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WallAdvantageClaimed { units, how } = self;
        format!(
            "{} claimed Wall Advantage {} ({})",
            units.join("+"),
            how.describe(),
            how.rule()
        )
    }
}

impl Fact for WallAdvantageForfeited {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let WallAdvantageForfeited { units, why } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.wall_advantage = false;
            }
        }
        if *why == crate::event::WaLoss::ChallengeForfeited {
            game.wa_challenge = None;
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WallAdvantageForfeited { units, why } = self;
        let why = match why {
            // A reason about the unit's own qualities (broken, a vehicle) would say
            // what is under the "?".
            WaLoss::Ineligible { rule, .. } if units.iter().any(|u| names.masked(u)) => {
                WaLoss::Ineligible {
                    rule,
                    why: "it no longer qualifies".into(),
                }
            }
            WaLoss::Ineligible { rule, why } => WaLoss::Ineligible {
                rule,
                why: names.text(&why),
            },
            other => other,
        };
        Event::WallAdvantageForfeited(WallAdvantageForfeited {
            units: names.names(&units),
            why,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WallAdvantageForfeited { units, why } = self;
        format!("{} Wall Advantage {}", units.join("+"), why.describe())
    }
}

impl Fact for WallAdvantageDenied {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        game.wa_chance = None;
        game.wa_challenge = None;
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WallAdvantageDenied { units, by } = self;
        Event::WallAdvantageDenied(WallAdvantageDenied {
            units: names.names(&units),
            by: names.name(&by),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WallAdvantageDenied { units, by } = self;
        format!(
            "{} denied Wall Advantage: {by} holds it over a shared hexside (B9.321)",
            units.join("+")
        )
    }
}

impl Fact for UnitsMomentarilyRevealed {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitsMomentarilyRevealed { units } = self;
        game.wa_shown.extend(units.iter().cloned());
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitsMomentarilyRevealed { units } = self;
        Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed {
            units: names.names(&units),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsMomentarilyRevealed { units } = self;
        format!(
            "{} momentarily revealed as real to claim or keep WA (B9.324)",
            units.join("+")
        )
    }
}

impl Fact for WallAdvantageChanceOffered {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let WallAdvantageChanceOffered { side, units } = self;
        game.wa_chance = Some(WaChance {
            side: *side,
            units: units.clone(),
        });
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WallAdvantageChanceOffered { side, units } = self;
        Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered {
            side,
            units: names.names(&units),
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let WallAdvantageChanceOffered { side, units } = self;
        format!(
            "{} may claim Wall Advantage for {} now that the enemy has lost it (B9.322); waiting for its answer",
            name(*side),
            units.join("+")
        )
    }
}

impl Fact for WallAdvantageChanceDeclined {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let WallAdvantageChanceDeclined { side } = self;
        game.wa_chance = None;
        if game.wa_hip_window.as_ref().is_some_and(|w| w.side == *side) {
            game.wa_hip_window = None;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let WallAdvantageChanceDeclined { side } = self;
        format!(
            "{} let the chance to claim Wall Advantage pass",
            name(*side)
        )
    }
}

impl Fact for WallAdvantageChallenged {
    fn units(&self) -> Vec<&UnitId> {
        self.holders.iter().chain(&self.claimants).collect()
    }

    fn apply(&self, game: &mut Game) {
        let WallAdvantageChallenged {
            side,
            holders,
            claimants,
            how,
        } = self;
        game.wa_challenge = Some(WaChallenge {
            side: *side,
            holders: holders.clone(),
            claimants: claimants.clone(),
            how: *how,
        });
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WallAdvantageChallenged {
            side,
            holders,
            claimants,
            how,
        } = self;
        Event::WallAdvantageChallenged(WallAdvantageChallenged {
            side,
            holders: names.names(&holders),
            claimants: names.names(&claimants),
            how,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let WallAdvantageChallenged {
            side,
            holders,
            claimants,
            how,
        } = self;
        format!(
            "{} challenged for {} claiming Wall Advantage {}: show a real unit among {} or forfeit (B9.324); waiting for its answer",
            name(*side),
            claimants.join("+"),
            how.describe(),
            holders.join("+")
        )
    }
}

impl Fact for WallAdvantageHipWindowOffered {
    fn units(&self) -> Vec<&UnitId> {
        self.claimants.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let WallAdvantageHipWindowOffered {
            side,
            claimants,
            how,
        } = self;
        game.wa_hip_window = Some(WaHipWindow {
            side: *side,
            claimants: claimants.clone(),
            how: *how,
        });
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        // Names only the claimants, never which hidden unit the side could place (B9.324).
        let WallAdvantageHipWindowOffered {
            side,
            claimants,
            how,
        } = self;
        Event::WallAdvantageHipWindowOffered(WallAdvantageHipWindowOffered {
            side,
            claimants: names.names(&claimants),
            how,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let WallAdvantageHipWindowOffered {
            side,
            claimants,
            how,
        } = self;
        format!(
            "{} attempt to claim Wall Advantage {}; the {} may first place a hidden unit and claim it (B9.324); waiting for its answer",
            claimants.join("+"),
            how.describe(),
            name(*side)
        )
    }
}
