//! Fire (A7, A8, A9): attacks declared, read on the IFT or left to the players, their
//! effects on units, support weapons' ROF and malfunctions, and Opportunity Fire.

use super::RepairResult;
use super::Sides;
use super::{Event, Fact};

use crate::command::Outcome;
use crate::view::Names;
use crate::{
    apply_outcome, mark_defensive_fire, DeclaredAttack, FiredAttack, Game, Phase, Residual, UnitId,
};
use board::hex::Hex;
use board::scenario::Side;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

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
/// it left to the players, one read on the 1 column, or one cowered off the table): the
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

/// Final Protective Fire's risk to its firers (A8.31): once the FPF attack is resolved, its
/// Original DR (`dice`, the IFT's own, in the `DiceRolled` before it), modified by leadership
/// alone, is a Normal Morale Check for `unit`, one of the units that fired it (a MG's
/// possessor in Sustained Fire, the leader directing it, A9.3). No die is drawn for it, so it
/// is not a roll of the dice scheme (docs/dice.md) and draws nothing from the commitment.
/// `outcome` is the check's line as a fire log prints it; what the check did to the unit
/// follows as `FireEffectApplied`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FpfNmcTaken {
    /// The side whose FPF it was, and whose unit checks.
    pub by: Side,
    pub unit: UnitId,
    pub dice: Vec<u8>,
    /// The leadership DRM, the one modifier the check takes (A8.31, A10.21).
    pub modifiers: Vec<crate::dice::Modifier>,
    pub final_dr: i16,
    pub rule: String,
    pub outcome: String,
}

/// The engine's Casualty Reduction of a squad whose counter names its half-squad (A7.302,
/// `Game::half_squad`): it is that half-squad now, `half_squad` its ratings, so what
/// follows (the K/#'s #MC) is ruled on them. A squad whose half-squad is not known is
/// reduced by `FireEffectApplied` instead, and the players enter the ratings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SquadReduced {
    pub unit: UnitId,
    pub half_squad: String,
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

/// A unit forfeited its own inherent FP for the rest of this Player Turn by the support
/// weapons it fired (A9.11): a squad firing two SW MG, or a half-squad or crew firing one.
/// Declared with the attack that cost it; both sides see it, as they saw the fire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InherentFpForfeited {
    pub unit: UnitId,
    /// The weapons whose fire cost it.
    pub weapons: Vec<String>,
}

impl Fact for AttackDeclared {
    fn units(&self) -> Vec<&UnitId> {
        self.firers.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let AttackDeclared {
            by,
            firers,
            weapons,
            target,
            into_sewer,
        } = self;
        // A weapon has fired this phase until the ROF it keeps says otherwise
        // (`MultipleRofRetained`, A9.2), and the unit possessing it has fired with it
        // (A9.11): in the PFPh it does not move (A4.1).
        let mut holders = vec![];
        for id in weapons {
            if let Some(w) = game.weapons.get_mut(id) {
                w.fired = true;
                holders.extend(w.held_by.clone());
            }
        }
        if matches!(game.clock.phase(), Phase::PrepFire | Phase::AdvancingFire) {
            game.prep_fired.extend(firers.iter().cloned());
            game.prep_fired.extend(holders);
        }
        // What fired in this attack and at what, remembered for the rest of the Player Turn
        // (A9.11, A7.53, A7.55): in the whole game only, as `Game::fire_record` says.
        if game.viewer.is_none() {
            let movers = game.movers_struck(*by, *target, *into_sewer);
            game.fire_record.push(FiredAttack {
                phase: game.clock.phase(),
                firers: firers.clone(),
                weapons: weapons.clone(),
                target: *target,
                into_sewer: *into_sewer,
                movers,
            });
        }
        if game.viewer.is_none() && !*into_sewer && game.clock.phase() == Phase::Movement {
            count_fire_at_movers(game, *by, firers, weapons, *target);
        }
        let wa_holders = game
            .units
            .values()
            .filter(|u| u.wall_advantage && !u.eliminated)
            .map(|u| u.id.clone())
            .collect();
        game.attack = Some(DeclaredAttack {
            by: *by,
            firers: firers.clone(),
            weapons: weapons.clone(),
            target: *target,
            wa_holders,
            into_sewer: *into_sewer,
        });
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let AttackDeclared {
            by,
            firers,
            weapons,
            target,
            into_sewer,
        } = self;
        Event::AttackDeclared(AttackDeclared {
            by,
            firers: names.names(&firers),
            // A weapon whose possessor the viewer knows only as "?" is not named to it.
            weapons: weapons
                .into_iter()
                .filter(|w| names.weapon_seen(w))
                .collect(),
            target,
            into_sewer,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let AttackDeclared {
            by,
            firers,
            weapons,
            target,
            into_sewer,
        } = self;
        format!(
            "{} declared fire by {} at {target}{}",
            name(*by),
            firers
                .iter()
                .chain(weapons)
                .cloned()
                .collect::<Vec<_>>()
                .join("+"),
            if *into_sewer {
                ", into the sewer: PBF with −2 (B8.3)"
            } else {
                ""
            }
        )
    }
}

/// Defensive First Fire declared at the stack moving now counts, for each of its units in the
/// target Location, one attack by each unit and support weapon named in it (`Game::location_mf`,
/// A8.3, A9.2): a leader named only to direct is counted too, and the declaration's check
/// reads only the units that fire. In the whole game only, as the field says.
fn count_fire_at_movers(
    game: &mut Game,
    by: Side,
    firers: &[UnitId],
    weapons: &[String],
    target: Hex,
) {
    for mover in game.movers_fired_at(by, target) {
        let Some(here) = game.location_mf.get_mut(&mover) else {
            continue;
        };
        if here.hex != target {
            continue;
        }
        for firer in firers.iter().chain(weapons) {
            let times = here.fired_on_by.entry(firer.clone()).or_default();
            *times = times.saturating_add(1);
        }
    }
}

impl Fact for WeaponMalfunctioned {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.holder]
    }

    fn apply(&self, game: &mut Game) {
        let WeaponMalfunctioned { weapon, .. } = self;
        if let Some(w) = game.weapons.get_mut(weapon) {
            w.malfunctioned = true;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WeaponMalfunctioned {
            weapon,
            holder,
            original_dr,
            breakdown,
        } = self;
        format!(
            "`{holder}`'s {weapon} malfunctioned: Original DR {original_dr} reached its B# {breakdown} (A9.7)"
        )
    }
}

impl Fact for MultipleRofRetained {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.holder]
    }

    fn apply(&self, game: &mut Game) {
        let MultipleRofRetained { weapon, .. } = self;
        if let Some(w) = game.weapons.get_mut(weapon) {
            w.fired = false;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let MultipleRofRetained {
            weapon,
            holder,
            coloured_dr,
            rof,
        } = self;
        format!(
            "`{holder}`'s {weapon} kept its Multiple ROF: coloured dr {coloured_dr}, at or below its ROF {rof} (A9.2); it may fire again this phase"
        )
    }
}

impl Fact for WeaponRepairAttempted {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.holder]
    }

    fn apply(&self, game: &mut Game) {
        let WeaponRepairAttempted {
            weapon,
            holder,
            result,
            ..
        } = self;
        // A3.1, A9.72: the attempt is the holder's act of the RPh, whatever became of the
        // weapon.
        crate::record_rally_phase_act(game, holder, crate::RallyPhaseAct::Repair);
        match result {
            RepairResult::Eliminated => {
                game.weapons.remove(weapon);
            }
            _ => {
                if let Some(w) = game.weapons.get_mut(weapon) {
                    w.repair_tried = true;
                    w.malfunctioned = *result != RepairResult::Repaired;
                }
            }
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let WeaponRepairAttempted {
            weapon,
            holder,
            dr,
            result,
        } = self;
        format!(
            "`{holder}` tried to repair its {weapon}: dr {dr}, {} (A9.72)",
            match result {
                RepairResult::Repaired => "repaired",
                RepairResult::Eliminated => "eliminated",
                RepairResult::Failed => "still malfunctioned",
            }
        )
    }
}

impl Fact for AttackResolved {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        // The DEFENDER's Fire counters go on once the attack is over, so that resolving it
        // reads the counters the firers had when it was declared.
        if let Some(a) = game.attack.take() {
            // A weapon carries a Fire counter of its own (A8.1), put on once its ROF is
            // spent: one that kept its Multiple ROF (`MultipleRofRetained`) stands clear.
            let spent: Vec<UnitId> = a
                .weapons
                .iter()
                .filter(|id| game.weapons.get(*id).is_some_and(|w| w.fired))
                .cloned()
                .collect();
            mark_defensive_fire(game, &a.firers);
            mark_defensive_fire(game, &spent);
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let AttackResolved { by, target } = self;
        format!("{} resolved its attack on {target}", name(*by))
    }
}

impl Fact for AttackLeftToPlayers {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Says why the attack's outcome is adjudicated; `AttackResolved` ends it.
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let AttackLeftToPlayers {
            by,
            target,
            rule,
            why,
        } = self;
        Event::AttackLeftToPlayers(AttackLeftToPlayers {
            by,
            target,
            rule,
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let AttackLeftToPlayers {
            target, rule, why, ..
        } = self;
        format!("the attack on {target} is the players' to adjudicate: {why} ({rule})")
    }
}

impl Fact for ResidualFpLeft {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let ResidualFpLeft { by, hex, fp } = self;
        // One Residual FP per Location, the stronger (A8.2); which is stronger is unknown
        // once either is the players' to determine.
        let fp = match game.residual_fp.get(hex) {
            None => *fp,
            Some(old) => old.fp.zip(*fp).map(|(a, b)| a.max(b)),
        };
        game.residual_fp.insert(*hex, Residual { by: *by, fp });
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let ResidualFpLeft { hex, fp, .. } = self;
        match fp {
            Some(fp) => format!("Residual FP {fp} stays in {hex} for the rest of the MPh (A8.2)"),
            None => format!(
                "Residual FP stays in {hex} for the rest of the MPh, how much for the players to determine (A8.2)"
            ),
        }
    }
}

impl Fact for IftAttackResolved {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // The IFT's reading of the attack; its effects are adjudicated events of their own.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let IftAttackResolved {
            target,
            fp,
            column,
            cowered,
            final_dr,
            result,
            ..
        } = self;
        format!(
            "IFT: {fp} FP vs {target} on the {column} column{}: Final DR {final_dr} → {result} (A7.3)",
            if *cowered { " (cowered, A7.9)" } else { "" }
        )
    }
}

impl Fact for FireEffectApplied {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        // The engine's own ruling changes a unit as a player's adjudication of it would.
        let FireEffectApplied { unit, outcome, .. } = self;
        apply_outcome(game, unit, *outcome, "")
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let FireEffectApplied {
            unit,
            outcome,
            rule,
            why,
        } = self;
        Event::FireEffectApplied(FireEffectApplied {
            unit: names.name(&unit),
            outcome,
            rule,
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        // The check's line as the roll gave it: "4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken".
        let FireEffectApplied { rule, why, .. } = self;
        format!("{why} ({rule})")
    }
}

impl Fact for FpfNmcTaken {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, _game: &mut Game) {
        // The check's reading; what it did to the unit is a `FireEffectApplied` of its own.
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let FpfNmcTaken {
            by,
            unit,
            dice,
            mut modifiers,
            final_dr,
            rule,
            outcome,
        } = self;
        for m in &mut modifiers {
            m.reason = names.text(&m.reason);
        }
        Event::FpfNmcTaken(FpfNmcTaken {
            by,
            unit: names.name(&unit),
            dice,
            modifiers,
            final_dr,
            rule,
            outcome: names.text(&outcome),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        // "4-4-7 `rc` FPF NMC: morale 7, DR 7 −1 → passed (A8.31: the FPF's Original DR 4+3)".
        let FpfNmcTaken {
            dice,
            outcome,
            rule,
            ..
        } = self;
        let dice: Vec<String> = dice.iter().map(|d| d.to_string()).collect();
        format!(
            "{outcome} ({rule}: the FPF's Original DR {})",
            dice.join("+")
        )
    }
}

impl Fact for SquadReduced {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        // Reduced as any squad is, with the half-squad's ratings its counter names.
        let SquadReduced {
            unit, half_squad, ..
        } = self;
        apply_outcome(game, unit, Outcome::Reduce, half_squad)
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let SquadReduced {
            unit,
            half_squad,
            rule,
            why,
        } = self;
        Event::SquadReduced(SquadReduced {
            // What the counter now reads: under "?" that is hidden.
            half_squad: if names.masked(&unit) {
                String::new()
            } else {
                half_squad
            },
            unit: names.name(&unit),
            rule,
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let SquadReduced { rule, why, .. } = self;
        format!("{why} ({rule})")
    }
}

impl Fact for FireEffectLeftToPlayers {
    fn units(&self) -> Vec<&UnitId> {
        self.unit.iter().collect()
    }

    fn apply(&self, _game: &mut Game) {}

    fn viewed(self, names: &Names<'_>) -> Event {
        let FireEffectLeftToPlayers {
            target,
            unit,
            rule,
            why,
        } = self;
        Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
            target,
            unit: unit.map(|u| names.name(&u)),
            rule,
            why: names.text(&why),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let FireEffectLeftToPlayers { why, rule, .. } = self;
        format!("for the players to adjudicate: {why} ({rule})")
    }
}

impl Fact for OpportunityFireMarked {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let OpportunityFireMarked { units } = self;
        game.opportunity_fire.extend(units.iter().cloned());
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let OpportunityFireMarked { units } = self;
        Event::OpportunityFireMarked(OpportunityFireMarked {
            units: names.names(&units),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let OpportunityFireMarked { units } = self;
        format!(
            "{} designated Opportunity Fire{}: holding fire for the AFPh, not moving this MPh (A7.25)",
            units.join(", "),
            if units.len() == 1 { "r" } else { "rs" }
        )
    }
}

impl Fact for InherentFpForfeited {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let InherentFpForfeited { unit, .. } = self;
        game.inherent_fp_forfeited.insert(unit.clone());
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let InherentFpForfeited { unit, weapons } = self;
        Event::InherentFpForfeited(InherentFpForfeited {
            unit: names.name(&unit),
            // A weapon whose possessor the viewer knows only as "?" is not named to it.
            weapons: weapons
                .into_iter()
                .filter(|w| names.weapon_seen(w))
                .collect(),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let InherentFpForfeited { unit, weapons } = self;
        let fired = if weapons.is_empty() {
            "its SW".to_string()
        } else {
            weapons.join(" and ")
        };
        format!(
            "{unit} fired {fired} and forfeited its own FP for the rest of the Player Turn (A9.11)"
        )
    }
}

/// Concealed units fired (by their own FP, a SW they possess, or directing the attack) in
/// the LOS of a Good Order enemy unit, and so lost their "?" as the attack was declared
/// (A12.14; `rules::concealment`): `revealed` are those units as both sides now see them.
/// Sent right after the `AttackDeclared` naming them, before any roll, so the enemy reads the
/// attack of a "?" and learns what was under it at this event and no earlier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConcealmentLostByFire {
    pub revealed: Vec<crate::Unit>,
}

impl Fact for ConcealmentLostByFire {
    /// None: the event is how the enemy comes to see the units it reveals, so it is not
    /// withheld for their sake.
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        super::reveal(game, &self.revealed);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Seen by both sides from this event on: every viewer receives the units whole, as
        // the units a Close Combat attack reveals are received.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let shown: Vec<String> = self
            .revealed
            .iter()
            .map(|u| format!("{} {} in {}", u.id, u.ratings, u.hex))
            .collect();
        format!(
            "concealed units fire in view of a Good Order enemy and lose their \"?\" (A12.14): {}",
            shown.join(", ")
        )
    }
}

/// An attack on concealed units read a result other than no effect on the IFT, so they lost
/// their "?" (A12.14: a concealed unit attacked in the LOS of a Good Order enemy ground unit —
/// its firers — with at least a PTC result loses it, whatever the range); sent right after the
/// `IftAttackResolved` that read the result and before any check of its effects
/// (`rules::concealment::lost_to_attack`). `revealed` are the real units as both sides now see
/// them, which take the result's checks next; `dummies_removed` the Dummies, which go with their
/// "?" as they do when an entry finds them (A12.15). The firing side learns what was under each
/// "?" at this event and no earlier: until it, an attack at a "?" reads the same whatever it
/// hides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConcealmentLostToAttack {
    pub target: Hex,
    pub revealed: Vec<crate::Unit>,
    pub dummies_removed: Vec<UnitId>,
}

impl Fact for ConcealmentLostToAttack {
    /// None: the event is how the enemy comes to see the units it reveals, so it is not
    /// withheld for their sake; the Dummies it names go by the names each viewer knows them by.
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let ConcealmentLostToAttack {
            revealed,
            dummies_removed,
            ..
        } = self;
        super::lose_concealment(game, revealed, dummies_removed);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let ConcealmentLostToAttack {
            target,
            revealed,
            dummies_removed,
        } = self;
        Event::ConcealmentLostToAttack(ConcealmentLostToAttack {
            target,
            revealed,
            dummies_removed: names.names(&dummies_removed),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let ConcealmentLostToAttack {
            target,
            revealed,
            dummies_removed,
        } = self;
        let mut s = format!(
            "the attack on {target} had an effect: the concealed units there lose their \"?\" (A12.14)"
        );
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
        s
    }
}
