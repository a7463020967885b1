//! Morale after fire: rally (A10.6), Desperation Morale (A10.62) and rout (A10.5).

use super::MfAccount;
use super::MoveCost;
use super::{paid, write_accounts, Sides};
use super::{Event, Fact};
use std::fmt::Write as _;

use crate::view::Names;
use crate::{apply_outcome, carry_weapons, spend, Game, Outcome};
use board::hex::Hex;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// A broken unit attempted to rally (A10.6), led by `leader` or self-rallying (A10.63):
/// its one attempt of the Player Turn. The `DiceRolled` after it holds the DR and DRMs;
/// a success follows as a `FireEffectApplied` (Rally).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RallyAttempted {
    pub unit: UnitId,
    pub leader: Option<UnitId>,
}

/// Broken units came under Desperation Morale (A10.62): the DM counter both sides see,
/// which adds +4 to their rally DR and lets them rout. `why` says which of A10.62's
/// occasions it was (broke, attacked while broken, a Known armed enemy ADJACENT, the RtPh
/// begun in Open Ground).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesperationMoraleMarked {
    pub units: Vec<UnitId>,
    pub why: String,
}

/// Units left Desperation Morale (A10.62): at the end of the RPh where no Known armed
/// enemy is ADJACENT, or because they are no longer broken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesperationMoraleRemoved {
    pub units: Vec<UnitId>,
    pub why: String,
}

/// A broken unit routed into the adjacent `to` in the RtPh, paying `cost` out of its six
/// rout MF (A10.5). `interdiction_by`: the Known enemies able to Interdict it there, having
/// it in Open Ground in their LOS and normal range (A10.53, A10.532); its NMC, one however
/// many they are, follows as a `DiceRolled` (purpose Interdiction) and its effects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitRouted {
    pub unit: UnitId,
    pub from: Hex,
    pub to: Hex,
    pub cost: MoveCost,
    pub mf: MfAccount,
    pub interdiction_by: Vec<UnitId>,
}

/// A Good Order leader routed into the adjacent `to` with the broken `unit` he routs along
/// with (Voluntary Rout, A10.711), right after its `UnitRouted`: the same hex, out of his own
/// six rout MF. He joins its moving stack, so both rout on as one, and is not broken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderRouted {
    pub leader: UnitId,
    pub unit: UnitId,
    pub from: Hex,
    pub to: Hex,
    pub mf: MfAccount,
}

/// A broken unit that had to rout and could not rout a hex, eliminated for Failure to Rout
/// as its side's RtPh step ended (A10.5). `next_to`: the Known unbroken enemy it was
/// ADJACENT to, for whom A20.21 may have it surrender instead (left to the players).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitFailedToRout {
    pub unit: UnitId,
    pub next_to: Option<UnitId>,
}

/// A broken unit that had to rout could not rout a hex as its side's RtPh step ended, and
/// one of its ways was refused as not modelled (`rule`, `why`): whether it fails to rout
/// is the players' to adjudicate (A10.5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutLeftToPlayers {
    pub unit: UnitId,
    pub rule: String,
    pub why: String,
}

impl Fact for LeaderRouted {
    fn accounts(&self) -> &[MfAccount] {
        std::slice::from_ref(&self.mf)
    }

    fn units(&self) -> Vec<&UnitId> {
        vec![&self.leader, &self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let LeaderRouted {
            leader,
            unit,
            to,
            mf,
            ..
        } = self;
        // The leader and the unit are one moving stack from now on (A10.711): the unit's
        // step, then his, spend MF as its parts moving on together, not as a stack breaking up.
        let both = [unit.clone(), leader.clone()];
        game.movement.moving_stack.insert(leader.clone());
        game.movement.last_movers = both.iter().cloned().collect();
        spend(game, &both, std::slice::from_ref(mf), Some(*to));
        if let Some(u) = game.units.get_mut(leader) {
            u.hex = *to;
            u.bypass = None;
            u.shellhole_cover = false;
        }
        carry_weapons(game, std::slice::from_ref(leader), *to);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let LeaderRouted {
            leader,
            unit,
            from,
            to,
            mf,
        } = self;
        Event::LeaderRouted(LeaderRouted {
            leader: names.name(&leader),
            unit: names.name(&unit),
            from,
            to,
            mf: names.account(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let LeaderRouted {
            leader,
            unit,
            from,
            to,
            mf,
        } = self;
        let mut s = format!("{leader} routed {from} → {to} with {unit} (A10.711)");
        write_accounts(&mut s, std::slice::from_ref(mf));
        s
    }
}

impl Fact for UnitRouted {
    fn accounts(&self) -> &[MfAccount] {
        std::slice::from_ref(&self.mf)
    }

    fn units(&self) -> Vec<&UnitId> {
        std::iter::once(&self.unit)
            .chain(&self.interdiction_by)
            .collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitRouted { unit, to, mf, .. } = self;
        let units = std::slice::from_ref(unit);
        spend(game, units, std::slice::from_ref(mf), Some(*to));
        if let Some(u) = game.units.get_mut(unit) {
            u.hex = *to;
            u.bypass = None;
            u.shellhole_cover = false;
        }
        carry_weapons(game, units, *to);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitRouted {
            unit,
            from,
            to,
            cost,
            mf,
            interdiction_by,
        } = self;
        Event::UnitRouted(UnitRouted {
            unit: names.name(&unit),
            from,
            to,
            cost,
            mf: names.account(&mf),
            interdiction_by: names.names(&interdiction_by),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitRouted {
            unit,
            from,
            to,
            cost,
            mf,
            interdiction_by,
        } = self;
        let mut s = format!("{unit} routed {from} → {to} (A10.5): {}", paid(cost));
        write_accounts(&mut s, std::slice::from_ref(mf));
        if !interdiction_by.is_empty() {
            let _ = write!(
                s,
                "; Interdicted in Open Ground by {} (A10.53): an NMC",
                interdiction_by.join(", ")
            );
        }
        s
    }
}

impl Fact for UnitFailedToRout {
    fn units(&self) -> Vec<&UnitId> {
        std::iter::once(&self.unit).chain(&self.next_to).collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitFailedToRout { unit, .. } = self;
        apply_outcome(game, unit, Outcome::Eliminate, "");
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitFailedToRout { unit, next_to } = self;
        Event::UnitFailedToRout(UnitFailedToRout {
            unit: names.name(&unit),
            next_to: next_to.map(|e| names.name(&e)),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitFailedToRout { unit, next_to } = self;
        match next_to {
            Some(e) => format!(
                "{unit} had to rout and could not: eliminated for Failure to Rout (A10.5); being ADJACENT to {e}, it may be a Surrender instead (A20.21), which is left to the players"
            ),
            None => format!(
                "{unit} had to rout and could not: eliminated for Failure to Rout (A10.5)"
            ),
        }
    }
}

impl Fact for RoutLeftToPlayers {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, _game: &mut Game) {}

    fn viewed(self, names: &Names<'_>) -> Event {
        let RoutLeftToPlayers { unit, rule, why } = self;
        Event::RoutLeftToPlayers(RoutLeftToPlayers {
            unit: names.name(&unit),
            rule,
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let RoutLeftToPlayers { unit, rule, why } = self;
        format!(
            "for the players to adjudicate: {unit} had to rout (A10.5) and could not by the rules the engine plays; one way was not modelled: {why} ({rule})"
        )
    }
}

impl Fact for DesperationMoraleMarked {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let DesperationMoraleMarked { units, .. } = self;
        for id in units {
            if let Some(u) = game.units.get_mut(id) {
                u.desperation = true;
            }
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let DesperationMoraleMarked { units, why } = self;
        Event::DesperationMoraleMarked(DesperationMoraleMarked {
            units: names.names(&units),
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let DesperationMoraleMarked { units, why } = self;
        format!(
            "{} under Desperation Morale: {why} (A10.62)",
            units.join(", ")
        )
    }
}

impl Fact for DesperationMoraleRemoved {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let DesperationMoraleRemoved { units, .. } = self;
        for id in units {
            if let Some(u) = game.units.get_mut(id) {
                u.desperation = false;
            }
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let DesperationMoraleRemoved { units, why } = self;
        Event::DesperationMoraleRemoved(DesperationMoraleRemoved {
            units: names.names(&units),
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let DesperationMoraleRemoved { units, why } = self;
        format!(
            "{} no longer under Desperation Morale: {why} (A10.62)",
            units.join(", ")
        )
    }
}

impl Fact for RallyAttempted {
    fn units(&self) -> Vec<&UnitId> {
        std::iter::once(&self.unit).chain(&self.leader).collect()
    }

    fn apply(&self, game: &mut Game) {
        let RallyAttempted { unit, leader } = self;
        game.movement.rallied.insert(unit.clone());
        // A3.1, A10.6, A10.7: the rally attempt is the unit's act of the RPh, and leading it
        // is the leader's.
        for u in std::iter::once(unit).chain(leader) {
            crate::record_rally_phase_act(game, u, crate::RallyPhaseAct::Rally);
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let RallyAttempted { unit, leader } = self;
        Event::RallyAttempted(RallyAttempted {
            unit: names.name(&unit),
            leader: leader.map(|l| names.name(&l)),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        match &self.leader {
            Some(leader) => format!("{leader} attempted to rally {} (A10.6)", self.unit),
            None => format!("{} attempted to self-rally (A10.63)", self.unit),
        }
    }
}
