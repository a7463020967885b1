//! Close Combat (A11): designation, Ambush, Melee and withdrawal from it.

use super::Sides;
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

/// Concealed units in the CC Location of `hex` made (or directed) a CC attack, and so lost
/// their "?" as that attack was resolved (A11.19, A12.14): `revealed` are those units as both
/// sides now see them. Sent before the rolls of the CC it belongs to, so no viewer reads an
/// attack by a unit still hidden from it under its "?".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConcealmentLostInCloseCombat {
    pub hex: Hex,
    pub revealed: Vec<crate::Unit>,
}

impl Fact for ConcealmentLostInCloseCombat {
    /// None: the event is how the enemy comes to see the units it reveals, so it is not
    /// withheld for their sake.
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        super::reveal(game, &self.revealed);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // The units it reveals are seen by both sides from this event on: every viewer
        // receives them whole, as a blocked entry's revealed units are received.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let ConcealmentLostInCloseCombat { hex, revealed } = self;
        let shown: Vec<String> = revealed
            .iter()
            .map(|u| format!("{} {}", u.id, u.ratings))
            .collect();
        format!(
            "in the Close Combat in {hex} concealed units attack and lose their \"?\" (A11.19, A12.14): {}",
            shown.join(", ")
        )
    }
}

/// The Dummies in the CC Location of `hex` were removed as the CCPh started, before any CC
/// was designated or Ambush checked there (A11.19: a Dummy has no Strength Factor to show in
/// CC). `dummies_removed` are those Dummies, named as each viewer knows them. Until this event
/// the enemy is told nothing of what is under each "?" there; from it he knows which were
/// Dummies, and that the "?" left over hide real units.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DummiesRemovedInCloseCombat {
    pub hex: Hex,
    pub dummies_removed: Vec<UnitId>,
}

impl Fact for DummiesRemovedInCloseCombat {
    /// None: the Dummies it names go by the names each viewer knows them by, and the event is
    /// how the enemy learns that they were Dummies.
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        super::lose_concealment(game, &[], &self.dummies_removed);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let DummiesRemovedInCloseCombat {
            hex,
            dummies_removed,
        } = self;
        Event::DummiesRemovedInCloseCombat(DummiesRemovedInCloseCombat {
            hex,
            dummies_removed: names.names(&dummies_removed),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let DummiesRemovedInCloseCombat {
            hex,
            dummies_removed,
        } = self;
        format!(
            "the CCPh starts: the Dummies in the Close Combat in {hex} are removed (A11.19): {}",
            dummies_removed.join(", ")
        )
    }
}

impl Fact for CloseCombatDesignated {
    fn units(&self) -> Vec<&UnitId> {
        self.attacks
            .iter()
            .flat_map(|a| a.attackers.iter().chain(&a.defenders))
            .chain(self.withdrawals.iter().flat_map(|w| &w.units))
            .collect()
    }

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
            withdrawals: withdrawals_viewed(withdrawals, names),
            no_ambush,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let CloseCombatDesignated {
            by,
            hex,
            attacks,
            withdrawals,
            no_ambush,
        } = self;
        let list = |ids: &[board::scenario::UnitId]| ids.join("+");
        let attacks: Vec<String> = attacks
            .iter()
            .map(|a| format!("{} vs {}", list(&a.attackers), list(&a.defenders)))
            .collect();
        let withdrawals: String = withdrawals
            .iter()
            .map(|w| {
                format!(
                    "; {} attempt to withdraw to {} (A11.2)",
                    list(&w.units),
                    w.to
                )
            })
            .collect();
        format!(
            "{} designated its CC attacks in {hex} (A11.12): {}{withdrawals}{}",
            name(*by),
            if attacks.is_empty() {
                "none".to_string()
            } else {
                attacks.join("; ")
            },
            if *no_ambush {
                "; no Ambush, by the players' check (A11.4)"
            } else {
                ""
            }
        )
    }
}

impl Fact for AmbushChecked {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

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

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let AmbushChecked { hex, ambusher } = self;
        match ambusher {
            Some(side) => format!(
                "Ambush in {hex} (A11.4): the {} ambushed; its CC attacks there come first, at -1, and the other side's after, at +1",
                name(*side)
            ),
            None => format!("no Ambush in {hex} (A11.4): its Close Combat is simultaneous"),
        }
    }
}

impl Fact for MeleeRecorded {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let MeleeRecorded { hex } = self;
        game.movement.melee.insert(*hex);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let MeleeRecorded { hex } = self;
        format!("Close Combat in {hex} over with both sides still there: Melee (A11.7)")
    }
}

impl Fact for UnitsWithdrew {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

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

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsWithdrew {
            units,
            from,
            to,
            cx,
        } = self;
        let mut s = format!(
            "{} withdrew from the Melee in {from} to {to} (A11.2)",
            units.join("+")
        );
        if !cx.is_empty() {
            s.push_str(&format!("; {} CX: Difficult Terrain (A4.72)", cx.join("+")));
        }
        s
    }
}

/// An Original CC DR of 2 or 12 stopped the Close Combat in `chance.hex` half-resolved
/// (A11.22): its side may have the units named infiltrate out of it, unattacked, or decline,
/// and play waits on that answer (`InfiltrationChosen`). The rolls so far and their results
/// went before it; what is left of the resolution is kept in the game (`Game::cc_infiltration`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfiltrationOffered {
    pub chance: crate::CcInfiltration,
}

impl Fact for InfiltrationOffered {
    /// None: its units are ones both sides see, and a "?" it names (the defender of an attack
    /// left to the players) goes by the alias each viewer knows.
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        game.cc_infiltration = Some(self.chance.clone());
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let mut chance = self.chance;
        for id in chance.ids_mut() {
            *id = names.name(id);
        }
        Event::InfiltrationOffered(InfiltrationOffered { chance })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let crate::CcInfiltration {
            hex,
            side,
            units,
            original,
            ..
        } = &self.chance;
        let who = if *original == 2 {
            "that rolled it"
        } else {
            "it attacked"
        };
        format!(
            "an Original CC DR of {original} in {hex} (A11.22): the {} may have {} {who} infiltrate out of the Close Combat at once, unattacked, or decline (`cc {hex} infiltrate UNITS to HEX`, `cc {hex} infiltrate none`)",
            sides.name(*side),
            units.join("+")
        )
    }
}

/// `by` answered the chance of Infiltration in the CC Location of `hex` (A11.22): the units of
/// `withdrawals` infiltrate out of it (each group's move follows, `UnitsWithdrew`), or none
/// do; the Close Combat's resolution goes on after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfiltrationChosen {
    pub by: Side,
    pub hex: Hex,
    pub withdrawals: Vec<crate::command::CcWithdrawal>,
}

impl Fact for InfiltrationChosen {
    fn units(&self) -> Vec<&UnitId> {
        self.withdrawals.iter().flat_map(|w| &w.units).collect()
    }

    fn apply(&self, game: &mut Game) {
        game.cc_infiltration = None;
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let InfiltrationChosen {
            by,
            hex,
            withdrawals,
        } = self;
        Event::InfiltrationChosen(InfiltrationChosen {
            by,
            hex,
            withdrawals: withdrawals_viewed(withdrawals, names),
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let InfiltrationChosen {
            by,
            hex,
            withdrawals,
        } = self;
        if withdrawals.is_empty() {
            return format!(
                "the {} declined Infiltration in {hex} (A11.22): the Close Combat goes on",
                sides.name(*by)
            );
        }
        let moves: Vec<String> = withdrawals
            .iter()
            .map(|w| format!("{} to {}", w.units.join("+"), w.to))
            .collect();
        format!(
            "the {} infiltrate out of the Close Combat in {hex} (A11.22): {}; the Close Combat goes on",
            sides.name(*by),
            moves.join(", ")
        )
    }
}

/// Withdrawals from Melee as a viewer receives them, each unit by the name he knows it by:
/// one reading for a CC designation's withdrawals (A11.2) and an Infiltration's (A11.22).
fn withdrawals_viewed(
    withdrawals: Vec<crate::command::CcWithdrawal>,
    names: &Names<'_>,
) -> Vec<crate::command::CcWithdrawal> {
    withdrawals
        .into_iter()
        .map(|w| crate::command::CcWithdrawal {
            units: names.names(&w.units),
            to: w.to,
        })
        .collect()
}
