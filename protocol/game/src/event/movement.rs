//! Movement (A4) and entry from off board (A2.51): steps, Bypass, Double Time, Assault
//! Movement, support weapons picked up and dropped, and MF spent.

use super::MfAccount;
use super::MoveCost;
use super::{paid, write_accounts, Sides};
use super::{Event, Fact};
use std::fmt::Write as _;

use crate::view::Names;
use crate::{carry_weapons, record_moved_weapons, spend, Bypass, Game, Mf, UnitId};
use board::hex::Hex;
use serde::{Deserialize, Serialize};

/// What recovering a weapon costs (A4.44).
pub const RECOVERY_MF: Mf = Mf::whole(1);

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

/// A unit's Recovery dr for an unpossessed support weapon in its Location (A4.44), logged
/// after the `DiceRolled` that rolled it, whatever its outcome save one: a Recovery that
/// succeeds in the MPh is `WeaponPickedUp`, the one way a unit takes a weapon for MF. This is
/// a failed one in the MPh, whose extra MF is spent all the same (`mf`, one account), and
/// either outcome where it costs none (`mf` empty): in the RPh, or an SMC's from its friendly
/// broken unit, which then no longer possesses the weapon. It records the attempt: a unit
/// tries for a weapon once a MPh, and a Recovery is its sole act of the RPh.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoveryAttempted {
    pub unit: UnitId,
    pub weapon: String,
    pub recovered: bool,
    pub mf: Vec<MfAccount>,
}

/// A support weapon changed hands between two units of one side in one Location (A4.431).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeaponTransferred {
    pub weapon: String,
    pub from: UnitId,
    pub to: UnitId,
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
/// tunnel (B8.61), logged before the entry itself, so the state shows every MF gone; or a
/// router pinned by its Interdiction NMC, which routs no further that RtPh (A10.53).
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

impl Fact for UnitMoved {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitMoved {
            units,
            to,
            mf,
            cost,
            ..
        } = self;
        spend(game, units, mf, Some(*to));
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.hex = *to;
                unit.bypass = None;
                unit.shellhole_cover = false;
                unit.road_only &= cost.road;
                unit.hexes_entered = unit.hexes_entered.saturating_add(1);
            }
        }
        carry_weapons(game, units, *to);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitMoved {
            units,
            from,
            to,
            cost,
            mf,
        } = self;
        Event::UnitMoved(UnitMoved {
            units: names.names(&units),
            from,
            to,
            cost,
            mf: names.accounts(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitMoved {
            units,
            from,
            to,
            cost,
            mf,
        } = self;
        let mut s = format!("{} {from} → {to}: {}", units.join("+"), paid(cost));
        write_accounts(&mut s, mf);
        s
    }
}

impl Fact for UnitAdvanced {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitAdvanced { units, to, cx, .. } = self;
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
            game.movement.advanced.insert(id.clone());
        }
        carry_weapons(game, units, *to);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitAdvanced {
            units,
            from,
            to,
            cost,
            cx,
        } = self;
        Event::UnitAdvanced(UnitAdvanced {
            units: names.names(&units),
            from,
            to,
            cost,
            cx: names.names(&cx),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitAdvanced {
            units,
            from,
            to,
            cost,
            cx,
        } = self;
        let mut s = format!(
            "{} advanced {from} → {to} (A4.7; entering costs {} in the MPh)",
            units.join("+"),
            paid(cost)
        );
        if !cx.is_empty() {
            s.push_str(&format!("; {} CX: Difficult Terrain (A4.72)", cx.join("+")));
        }
        s
    }
}

impl Fact for UnitBypassed {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitBypassed {
            units,
            hex,
            from,
            along,
            cost,
            mf,
        } = self;
        spend(game, units, mf, Some(*hex));
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                if unit.hex != *hex {
                    unit.hexes_entered = unit.hexes_entered.saturating_add(1);
                }
                unit.hex = *hex;
                unit.road_only = false;
                unit.shellhole_cover = false;
                match &mut unit.bypass {
                    Some(b) if b.hex == *hex => {
                        b.along.extend(along.iter().copied());
                        b.doubled |= cost.bypass_doubling > Mf::default();
                    }
                    _ => {
                        unit.bypass = Some(Bypass {
                            hex: *hex,
                            entered_from: *from,
                            along: along.clone(),
                            base: cost.cot + cost.elevation,
                            doubled: cost.bypass_doubling > Mf::default(),
                        })
                    }
                }
            }
        }
        carry_weapons(game, units, *hex);
        // A4.33: enemy units under "?" in the Location gone round lose it as the MPh ends;
        // those here now are due to (hidden units are not under "?", and a building's upper
        // level or a sewer beneath is a Location of its own, A5.1, B8.2).
        if let Some(side) = units
            .iter()
            .find_map(|id| game.units.get(id))
            .map(|u| u.side)
        {
            let due: Vec<UnitId> = game
                .units_above(*hex)
                .filter(|u| {
                    u.side != side
                        && u.concealed
                        && !u.hidden
                        && !u.eliminated
                        && game.upper_level(u).is_none()
                })
                .map(|u| u.id.clone())
                .collect();
            game.movement.bypassed_concealed.extend(due);
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitBypassed {
            units,
            hex,
            from,
            along,
            cost,
            mf,
        } = self;
        Event::UnitBypassed(UnitBypassed {
            units: names.names(&units),
            hex,
            from,
            along,
            cost,
            mf: names.accounts(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitBypassed {
            units,
            hex,
            along,
            cost,
            mf,
            ..
        } = self;
        let sides: Vec<String> = along.iter().map(|h| format!("{hex}-{h}")).collect();
        let mut s = format!(
            "{} Bypass {hex} along {}: {} MF = {}",
            units.join("+"),
            sides.join(", "),
            cost.total,
            cost.describe()
        );
        write_accounts(&mut s, mf);
        s
    }
}

impl Fact for DoubleTimeDeclared {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let DoubleTimeDeclared { units, .. } = self;
        let now = (game.clock.turn, game.clock.player_turn);
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.double_time = true;
                unit.cx = true;
                unit.cx_since = Some(now);
            }
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let DoubleTimeDeclared { units, mf } = self;
        Event::DoubleTimeDeclared(DoubleTimeDeclared {
            units: names.names(&units),
            mf: names.accounts(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let DoubleTimeDeclared { units, mf } = self;
        let mut s = format!("{} declared Double Time (A4.5), now CX", units.join("+"));
        write_accounts(&mut s, mf);
        s
    }
}

impl Fact for AssaultMovementDeclared {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let AssaultMovementDeclared { units } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.assault_moving = true;
            }
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let AssaultMovementDeclared { units } = self;
        Event::AssaultMovementDeclared(AssaultMovementDeclared {
            units: names.names(&units),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let AssaultMovementDeclared { units } = self;
        format!(
            "{} declared Assault Movement (A4.61): one Location, an MF kept, no FFNAM",
            units.join("+")
        )
    }
}

impl Fact for WeaponPickedUp {
    fn accounts(&self) -> &[MfAccount] {
        std::slice::from_ref(&self.mf)
    }

    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let WeaponPickedUp { unit, weapon, mf } = self;
        if let Some(w) = game.weapons.get_mut(weapon) {
            w.held_by = Some(unit.clone());
        }
        game.weapon_lies.remove(weapon);
        spend(
            game,
            std::slice::from_ref(unit),
            std::slice::from_ref(mf),
            None,
        );
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WeaponPickedUp { unit, weapon, mf } = self;
        Event::WeaponPickedUp(WeaponPickedUp {
            unit: names.name(&unit),
            weapon,
            mf: names.account(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WeaponPickedUp { unit, weapon, mf } = self;
        let mut s = format!("{unit} recovered {weapon}: {} MF (A4.44)", RECOVERY_MF);
        write_accounts(&mut s, std::slice::from_ref(mf));
        s
    }
}

impl Fact for RecoveryAttempted {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let RecoveryAttempted {
            unit,
            weapon,
            recovered,
            mf,
        } = self;
        if !mf.is_empty() {
            spend(game, std::slice::from_ref(unit), mf, None);
        }
        if *recovered {
            if let Some(w) = game.weapons.get_mut(weapon) {
                w.held_by = Some(unit.clone());
            }
            game.weapon_lies.remove(weapon);
        }
        game.movement
            .recovery_attempts
            .entry(weapon.clone())
            .or_default()
            .insert(unit.clone());
        // A4.44: in the RPh the attempt is the unit's sole act there.
        crate::record_rally_phase_act(game, unit, crate::RallyPhaseAct::Recovery);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let RecoveryAttempted {
            unit,
            weapon,
            recovered,
            mf,
        } = self;
        Event::RecoveryAttempted(RecoveryAttempted {
            unit: names.name(&unit),
            weapon,
            recovered,
            mf: mf.iter().map(|a| names.account(a)).collect(),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let RecoveryAttempted {
            unit,
            weapon,
            recovered,
            mf,
        } = self;
        let outcome = if *recovered {
            "recovered"
        } else {
            "failed to recover"
        };
        let mut s = if mf.is_empty() {
            format!("{unit} {outcome} {weapon}, at no MF (A4.44)")
        } else {
            format!("{unit} {outcome} {weapon}: {RECOVERY_MF} MF (A4.44)")
        };
        write_accounts(&mut s, mf);
        s
    }
}

impl Fact for WeaponTransferred {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.from, &self.to]
    }

    fn apply(&self, game: &mut Game) {
        let WeaponTransferred { weapon, from, to } = self;
        if let Some(w) = game.weapons.get_mut(weapon) {
            w.held_by = Some(to.clone());
        }
        // A3.1, A4.431: a Transfer in the RPh is the act of both units there.
        crate::record_rally_phase_act(game, from, crate::RallyPhaseAct::Transfer);
        crate::record_rally_phase_act(game, to, crate::RallyPhaseAct::Transfer);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WeaponTransferred { weapon, from, to } = self;
        Event::WeaponTransferred(WeaponTransferred {
            weapon,
            from: names.name(&from),
            to: names.name(&to),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WeaponTransferred { weapon, from, to } = self;
        format!("{from} transferred {weapon} to {to} (A4.431)")
    }
}

impl Fact for WeaponDropped {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let WeaponDropped { unit, weapon } = self;
        // A4.43: it lies in the dropper's Location, off the ground level as he may stand.
        game.leave_weapon(weapon, unit);
        // A4.43: in the CCPh a weapon is dropped only at its start, to withdraw from Melee.
        if game.clock.phase() == crate::phase::Phase::CloseCombat {
            game.movement.dropped_to_withdraw.insert(unit.clone());
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let WeaponDropped { unit, weapon } = self;
        Event::WeaponDropped(WeaponDropped {
            unit: names.name(&unit),
            weapon,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WeaponDropped { unit, weapon } = self;
        format!("{unit} dropped {weapon} (A4.43)")
    }
}

impl Fact for UnitEntryBlocked {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitEntryBlocked {
            units,
            revealed,
            dummies_removed,
            mf,
            ..
        } = self;
        spend(game, units, mf, None);
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.wa_blocked = true;
            }
        }
        super::lose_concealment(game, revealed, dummies_removed);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitEntryBlocked {
            units,
            from,
            to,
            revealed,
            dummies_removed,
            cost,
            mf,
        } = self;
        Event::UnitEntryBlocked(UnitEntryBlocked {
            units: names.names(&units),
            from,
            to,
            revealed,
            dummies_removed: names.names(&dummies_removed),
            cost,
            mf: names.accounts(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitEntryBlocked {
            units,
            from,
            to,
            revealed,
            dummies_removed,
            cost,
            mf,
        } = self;
        // An entry from off board that was stopped names the hex twice: the units stay
        // off board (A2.51, A12.15).
        let mut s = if from == to {
            format!(
                "{} tried to enter {to} from off board ({}) and stayed off board (A12.15)",
                units.join("+"),
                paid(cost)
            )
        } else {
            format!(
                "{} tried {from} → {to} ({}) and was stopped in {from} (A12.15)",
                units.join("+"),
                paid(cost)
            )
        };
        if !revealed.is_empty() {
            let shown: Vec<String> = revealed
                .iter()
                .map(|u| format!("{} {}", u.id, u.ratings))
                .collect();
            let _ = write!(s, ": revealed {}", shown.join(", "));
        }
        if !dummies_removed.is_empty() {
            let _ = write!(s, "; dummies removed: {}", dummies_removed.join(", "));
        }
        write_accounts(&mut s, mf);
        s
    }
}

impl Fact for ShellholeCoverTaken {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let ShellholeCoverTaken { units, mf } = self;
        spend(game, units, mf, None);
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.shellhole_cover = true;
            }
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let ShellholeCoverTaken { units, mf } = self;
        Event::ShellholeCoverTaken(ShellholeCoverTaken {
            units: names.names(&units),
            mf: names.accounts(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let ShellholeCoverTaken { units, mf } = self;
        format!(
            "{} paid the rest of the shellholes' cost for their +1 TEM (B2){}",
            units.join("+"),
            mf.first()
                .map(|a| format!(", {} MF spent", a.spent))
                .unwrap_or_default()
        )
    }
}

impl Fact for AllMfSpent {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let AllMfSpent { units, mf, .. } = self;
        spend(game, units, mf, None);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        // Going down a Manhole or into a tunnel: a unit under "?" shows the MF it spent only,
        // never the allotment that would tell a leader from a squad.
        let AllMfSpent { units, rule, mf } = self;
        Event::AllMfSpent(AllMfSpent {
            units: names.names(&units),
            rule: names.text(&rule),
            mf: names.accounts(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let AllMfSpent { units, rule, mf } = self;
        let mut s = format!("{} spent all MF ({rule})", units.join("+"));
        write_accounts(&mut s, mf);
        s
    }
}

impl Fact for UnitsEntered {
    fn accounts(&self) -> &[MfAccount] {
        &self.mf
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let UnitsEntered {
            units,
            weapons,
            hex,
            mf,
            ..
        } = self;
        for unit in units {
            game.units.insert(unit.id.clone(), unit.clone());
        }
        for w in weapons {
            game.weapons.insert(w.id.clone(), w.clone());
        }
        // Entering is the stack's first step of its move (A4.2).
        let ids: Vec<UnitId> = units.iter().map(|u| u.id.clone()).collect();
        spend(game, &ids, mf, Some(*hex));
        record_moved_weapons(game, &ids);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsEntered {
            units, hex, cost, ..
        } = self;
        format!(
            "{} entered from off board into {hex} ({}) (A2.51)",
            units
                .iter()
                .map(|u| u.id.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            paid(cost)
        )
    }
}

/// Enemy units that were under "?" in a Location a unit went round in Bypass lost it as the
/// MPh ended (A4.33; `rules::concealment::lost_by_bypass`): `revealed` are the real units as
/// both sides now see them, `dummies_removed` the Dummies, which go with their "?" as they do
/// when an entry finds them (A12.15). Those that lost their "?" otherwise meanwhile, or were
/// eliminated, are in neither. The enemy learns what is under each "?" at this event and no
/// earlier: a unit, shown whole, or nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConcealmentLostByBypass {
    pub revealed: Vec<crate::Unit>,
    pub dummies_removed: Vec<UnitId>,
}

impl Fact for ConcealmentLostByBypass {
    /// None: the event is how the enemy comes to see the units it reveals, so it is not
    /// withheld for their sake; the Dummies it names go by the names each viewer knows them by.
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let ConcealmentLostByBypass {
            revealed,
            dummies_removed,
        } = self;
        super::lose_concealment(game, revealed, dummies_removed);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let ConcealmentLostByBypass {
            revealed,
            dummies_removed,
        } = self;
        Event::ConcealmentLostByBypass(ConcealmentLostByBypass {
            revealed,
            dummies_removed: names.names(&dummies_removed),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let ConcealmentLostByBypass {
            revealed,
            dummies_removed,
        } = self;
        let mut s =
            "the MPh ends: concealed units in a Location gone round in Bypass lose their \"?\" (A4.33)"
                .to_string();
        if !revealed.is_empty() {
            let shown: Vec<String> = revealed
                .iter()
                .map(|u| format!("{} {} in {}", u.id, u.ratings, u.hex))
                .collect();
            let _ = write!(s, ": revealed {}", shown.join(", "));
        }
        if !dummies_removed.is_empty() {
            let _ = write!(s, "; dummies removed: {}", dummies_removed.join(", "));
        }
        s
    }
}
