//! Close Combat (A11): designation, Ambush, Melee and withdrawal from it.

use super::{Event, Fact};
use crate::view::Names;
use crate::{carry_weapons, Game};
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

impl Fact for CloseCombatDesignated {
    fn apply(&self, game: &mut Game) {
        let CloseCombatDesignated {
            by,
            hex,
            attacks,
            withdrawals,
            ..
        } = self;
        if *by == game.attacker() {
            game.movement.cc_designated.insert(*hex, attacks.clone());
            if !withdrawals.is_empty() {
                game.movement
                    .cc_withdrawals
                    .insert(*hex, withdrawals.clone());
            }
        } else {
            game.movement.cc_designated.remove(hex);
            game.movement.cc_withdrawals.remove(hex);
            game.movement.cc_resolved.insert(*hex);
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let CloseCombatDesignated {
            by,
            hex,
            attacks,
            withdrawals,
            no_ambush,
        } = self;
        Event::CloseCombatDesignated(CloseCombatDesignated {
            by,
            hex,
            attacks: attacks
                .into_iter()
                .map(|a| crate::command::CcAttack {
                    attackers: names.names(&a.attackers),
                    defenders: names.names(&a.defenders),
                })
                .collect(),
            withdrawals: withdrawals
                .into_iter()
                .map(|w| crate::command::CcWithdrawal {
                    units: names.names(&w.units),
                    to: w.to,
                })
                .collect(),
            no_ambush,
        })
    }
}

impl Fact for AmbushChecked {
    fn apply(&self, game: &mut Game) {
        let AmbushChecked { hex, ambusher } = self;
        if let Some(side) = ambusher {
            game.movement.ambush.insert(*hex, *side);
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }
}

impl Fact for MeleeRecorded {
    fn apply(&self, game: &mut Game) {
        let MeleeRecorded { hex } = self;
        game.movement.melee.insert(*hex);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }
}

impl Fact for UnitsWithdrew {
    fn apply(&self, game: &mut Game) {
        let UnitsWithdrew { units, to, cx, .. } = self;
        let now = (game.clock.turn, game.clock.player_turn);
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.hex = *to;
                unit.bypass = None;
                unit.shellhole_cover = false;
                if cx.contains(id) {
                    unit.cx = true;
                    unit.cx_since = Some(now);
                }
            }
        }
        carry_weapons(game, units, *to);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitsWithdrew {
            units,
            from,
            to,
            cx,
        } = self;
        Event::UnitsWithdrew(UnitsWithdrew {
            units: names.names(&units),
            from,
            to,
            cx: names.names(&cx),
        })
    }
}
