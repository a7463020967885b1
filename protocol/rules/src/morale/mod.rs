//! What an IFT result read by the engine does to the units fired on (A7.3, A7.301, A7.8, A10).
//! `attack::resolve` calls `fire_effects` once, right after its `IftAttackResolved`, so an
//! attack left to the players never reaches it: its effects stay theirs to adjudicate.
//!
//! Each Morale or Pin Task Check is its own DR through the game's dice, logged like the IFT's
//! (`DiceRolled`, with its DRMs and their rules), and its effect is a `FireEffectApplied`,
//! which `apply` turns into the same change of state as an adjudicated outcome: one path
//! breaks or pins a unit, whoever decided it. Whatever the engine does not model or the
//! project could not source is logged as `FireEffectLeftToPlayers` at the point it arises,
//! naming the rule, for the players to adjudicate — never skipped.
//!
//! Sources (rows of `docs/rules-coverage.md`):
//! - A10.1: an MC is passed with a Final DR at or below the unit's morale, failed above it,
//!   and a failed MC breaks the unit — eASLRB A10.1 (our `pages` copy) and the rules README's
//!   glossary of nMC/NMC.
//! - A10.21, A10.22: the leadership DRM of an unbroken, unpinned leader in the Location applies
//!   to the checks of the other units there, never to his own, and to another leader's only if
//!   that leader's morale is lower; a leader checks first and helps only if he passed — eASLRB
//!   A10.21–A10.22 with its 9-1/10-2 example, and the ASL Starter Kit rulebook's leadership
//!   paragraph (quoted on the GameSquad forum thread on leadership DRMs).
//! - A10.2: a leader who breaks makes the unbroken lower-morale units in his Location take a
//!   Leader Loss Task Check, his leadership modifier against them, failed → pinned — eASLRB
//!   A10.2 (that sentence whole) with its examples for the DRM. A leader eliminated makes the
//!   units the attack struck whose Morale Level is lower than his take a Leader Loss Morale
//!   Check after it, an MC with his modifier against it — eASLRB A10.2's two examples (an 8-0
//!   gives an NMC, an 8-1 or 9-1 a 1MC; not lower, none) and the paragraph's LLMC sentence as a
//!   French players' forum quotes it (cote1664, topic 8486). A broken unit that fails an MC
//!   suffers Casualty Reduction — eASLRB A10.2's example and the C# referee.
//! - A.9: Random Selection is one dr per unit, logged like any roll; the highest dr is the
//!   unit selected, and every unit tied at it is selected too — the A.9 text on the ASL
//!   Archive wiki (advancedsquadleader.net, page A0.9, two revisions) with its K/1 example,
//!   an asl-players.net forum answer on K/#
//!   ("at least one … possibly all three") and the C# referee's `RandomSelection`.
//! - A7.301: a #KIA eliminates the # units with the highest Random Selection drs (all tied at
//!   the cut with them); the others break, and one broken already suffers Casualty Reduction
//!   instead — the C# referee (`Apply`, A7.301), the first example of A10.2 on the eASLRB's
//!   A10 page (a 1KIA that eliminates a leader breaks both squads with him), and A.9's ties.
//! - A7.302: a K/# Casualty Reduces the unit(s) Random Selection picks, then every other unit
//!   and any half-squad just reduced takes a #MC; a wounded SMC takes none — the GameSquad
//!   thread "A7.302 and Leaders" (quoting the paragraph), the asl-players.net answer, A.9's
//!   K/1 example (the crew and both half-squads check, the wounded leader does not), the C#
//!   referee. Casualty Reduction itself: a squad becomes a half-squad, a half-squad or crew is
//!   eliminated, an SMC is wounded — A.9's example (squad to half-squad, leader wounded) and
//!   the C# referee's `CasualtyReduction`. Which half-squad: the scenario's `half_squad`, else
//!   `board::half_squads` by the side's nationality (VASL's module and the Starter Kit game,
//!   pair by pair); where neither gives it, its ratings are asked of the players.
//! - A17: a wounded SMC's Wound Severity dr at once, 5–6 mortal (KIA), 1–4 minor (wounded),
//!   +1 if wounded already, nothing more lost for a second wound; a wounded man's Morale
//!   Level one lower and leadership modifier one worse; pinned if wounded after more than
//!   3 MF — aslerb.com's A17 page, A17.1–A17.3, and asl-assist.net's MPh aid (3 MF, no
//!   Double Time).
//! - A7.8: a failed PTC pins the unit — the IFT key and the rules README ("nTC ... passed when
//!   the Final DR is at or below the unit's morale"). An MC passed with a Final DR equal to
//!   the morale pins a Good Order unit — the ASL Starter Kit game's `_processMC` and the C#
//!   referee.
//! - A10.31: an Original 12 on an MC (NMC or nMC) is a Casualty MC: failed whatever the DRMs;
//!   a Good Order unit suffers Casualty Reduction and what is left of it breaks — the ASL
//!   Starter Kit game and the C# referee (`MoraleOutcome`). A broken unit's Original 12 on an
//!   MC eliminates it — the eASLRB's A10.31 as the C# referee's rulebook markdown holds it,
//!   the Starter Kit game's `_processMC` and the C# referee's `MoraleOutcome`.
//! - A10.4: a broken unit takes every MC and TC against the Morale Level on its counter's
//!   broken side, which the ratings (the Good Order side) do not carry. The engine reads it
//!   only where the command gives it (a rout's Interdiction, a rally); a broken unit's check
//!   after an IFT result is asked of the players (`morale_check`), never taken against the
//!   Good Order side. No table of broken sides is used: the Starter Kit game's unit templates
//!   give each unit its Good Order morale as its broken one, where the eASLRB's A10.2 example
//!   has a broken SS squad at 9 over its 8, so the sources at hand disagree.
//! - A8.31: the Final Protective Fire's Original DR, modified only by leadership, is an NMC for
//!   each unit that fired it, the directing leader included (`final_protective_fire`) — the
//!   eASLRB's A8.31 as the C# referee's rulebook markdown holds it, with its example (an 8-1
//!   pinned at his morale, the squad then breaking without his DRM), the ASL Starter Kit
//!   game's fire code and the C# referee's Fire package; an Original 12 with several firers
//!   is asked, the two codes differing on it.
//! - A10.53: a router Interdicted takes an NMC (`interdiction`), against its broken side's
//!   morale (A10.4), which its owner gives; failed, Casualty Reduction, a half-squad left
//!   routing on — the eASLRB's A10.53 and comprehensive rout example as the C# referee's
//!   rulebook markdown holds them, a French players' forum thread (cote1664, topic 1345) and
//!   the eASLRB pages' copy of that example. A pass at its morale pins it and ends its rout —
//!   A10.53 and A7.8 (pinning touches a broken unit only by Interdiction) in that markdown,
//!   with the example's squad pinned on a 7, and the Starter Kit game's `interdictionAttack`.

pub mod desperation;
pub mod rally;

use crate::fire::ift::IftResult;
use crate::fire::resolution::leadership;
use board::hex::Hex;
use board::scenario::{Morale, Side, UnitId, UnitKind};
use game::command::Outcome;
use game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use game::event::Event;
use game::event::{
    DiceRolled, FireEffectApplied, FireEffectLeftToPlayers, FpfNmcTaken, SquadReduced,
};
use game::{Game, Unit};
use std::collections::{BTreeMap, BTreeSet};

/// The dice ran out before every check was rolled (offline, a script's `dice` line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoDice;

/// A unit's Morale Level as printed: the third number of an MMC's `4-6-7`, the first of a
/// leader's `9-1`. `None` when the ratings do not read so.
pub(crate) fn morale_level(kind: UnitKind, ratings: &str) -> Option<i16> {
    match kind {
        UnitKind::Leader => {
            leadership(ratings)?;
            let end = ratings.get(1..)?.find(['-', '+'])? + 1;
            ratings[..end].parse().ok()
        }
        UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew => {
            let parts: Vec<&str> = ratings.split('-').collect();
            match parts.as_slice() {
                [fp, range, morale]
                    if fp.parse::<u32>().is_ok() && range.parse::<u32>().is_ok() =>
                {
                    morale.parse().ok()
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `unit` is a half-squad made by Casualty Reduction whose ratings the players have
/// not entered yet (`adjudicate UNIT relabel 2-4-7` gives them, A7.302).
pub(crate) fn awaits_ratings(unit: &Unit) -> bool {
    unit.kind == UnitKind::HalfSquad && unit.ratings.is_empty()
}

/// A unit's Morale Level as it checks now: the printed one (`morale_level`), one lower if it
/// is wounded (A17.3; a berserk unit keeps its own). The one place a wound bites a check, so
/// every MC, TC and rally the engine rolls reads it here.
pub(crate) fn morale_of(unit: &Unit) -> Option<i16> {
    let printed = morale_level(unit.kind, &unit.ratings)?;
    Some(printed - i16::from(wounded_penalty(unit)))
}

/// A leader's leadership modifier as it applies now: the printed one (`leadership`), one
/// worse if he is wounded (A17.3: a −1 becomes 0, a 0 becomes +1). The one place a wound
/// bites a leader's DRM, so fire direction (A7.53), a check's leadership (A10.21), a rally
/// (A10.6) and CC (A11.141) all read it here. `None` for ratings that are not a leader's.
pub(crate) fn leadership_of(unit: &Unit) -> Option<i8> {
    let printed = leadership(&unit.ratings)?;
    Some(printed + i8::from(unit.wounded))
}

/// What a wound takes from `unit`'s Morale Level and adds to its leadership modifier (A17.3):
/// one, however often it was wounded; nothing from a berserk unit's morale (its own rules).
pub(crate) fn wounded_penalty(unit: &Unit) -> u8 {
    u8::from(unit.wounded && unit.morale != Morale::Berserk)
}

/// The game's dice as a Casualty Reduction draws them: the side whose command rolls, the draw
/// number of the next die, and the source.
pub struct Draws<'a> {
    pub by: Side,
    pub draw: &'a mut u64,
    pub dice: &'a mut dyn DiceSource,
}

/// What Casualty Reduction does to `unit` (A7.302), as events citing `rule` (the paragraph
/// that called for it: A7.301, A7.302, A10.2, A10.64 …), `why` opening each line. The one
/// place the engine reduces a unit, whichever rule asks for it:
/// - a squad becomes a half-squad: the one its counter names when the scenario gives it
///   (`Game::half_squad`; `SquadReduced`, carrying its ratings, so what follows is ruled on
///   them), else one whose ratings the players enter (`FireEffectApplied`, `Outcome::Reduce`,
///   and the question asked);
/// - a half-squad or a crew is eliminated;
/// - an SMC (leader, hero) is wounded (A17.1), its Wound Severity dr rolled through `draws`
///   (`wound`);
/// - anything else (a vehicle, a counter) is the players' whole.
pub fn casualty_reduction(
    game: &Game,
    unit: &Unit,
    rule: &str,
    why: &str,
    draws: &mut Draws,
) -> Result<Vec<Event>, NoDice> {
    let id = &unit.id;
    let left = |rule: &str, why: String| {
        Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
            target: unit.hex,
            unit: Some(id.clone()),
            rule: rule.to_string(),
            why,
        })
    };
    let applied = |outcome: Outcome, words: &str| {
        Event::FireEffectApplied(FireEffectApplied {
            unit: id.clone(),
            outcome,
            rule: rule.to_string(),
            why: format!("{why} → {words}"),
        })
    };
    Ok(match unit.kind {
        UnitKind::Squad => match game.half_squad(unit) {
            Some(half) => vec![Event::SquadReduced(SquadReduced {
                unit: id.clone(),
                half_squad: half.to_string(),
                rule: rule.to_string(),
                why: format!("{why} → reduced to a {half} half-squad"),
            })],
            None => vec![
            applied(Outcome::Reduce, "reduced to a half-squad"),
            left(
                "A7.302",
                format!("`{id}` ({}) was reduced to a half-squad: the scenario does not give the half-squad's ratings, so the players enter them (`adjudicate {id} relabel F-R-M`)", unit.ratings),
            ),
            ],
        },
        UnitKind::HalfSquad | UnitKind::Crew => {
            vec![applied(Outcome::Eliminate, "eliminated")]
        }
        UnitKind::Leader | UnitKind::Hero => wound(unit, why, draws)?,
        _ => vec![left(
            rule,
            format!("{why}: what Casualty Reduction does to `{id}` is not resolved by the engine"),
        )],
    })
}

/// The lowest Final Wound Severity dr that is mortal (A17.11): 1–4 is a minor wound.
pub(crate) const MORTAL_WOUND_MIN: i16 = 5;

/// An SMC wounded (A17.1): its Wound Severity dr through the game's dice at once (A17.11,
/// `DiceRolled`, purpose Wound Severity), +1 if it was wounded already. A mortal wound
/// (`MORTAL_WOUND_MIN` or more) eliminates it as a KIA; a minor one marks it wounded
/// (`Outcome::Wound`), or, wounded already, takes nothing more from it (A17.3). One wounded
/// after spending more than 3 MF is pinned as well (A17.2).
fn wound(unit: &Unit, why: &str, draws: &mut Draws) -> Result<Vec<Event>, NoDice> {
    let id = &unit.id;
    let first_draw = *draws.draw;
    let dr = draws.dice.roll_die().ok_or(NoDice)?;
    *draws.draw += 1;
    let modifiers = if unit.wounded {
        vec![Modifier {
            value: 1,
            reason: "wounded already".into(),
            rule: "A17.11".into(),
        }]
    } else {
        vec![]
    };
    let final_dr = i16::from(dr) + modifiers.iter().map(|m| i16::from(m.value)).sum::<i16>();
    let mortal = final_dr >= MORTAL_WOUND_MIN;
    let words = match (mortal, unit.wounded) {
        (true, _) => "mortal: eliminated (KIA)",
        (false, false) => "minor: wounded",
        (false, true) => "minor: wounded already, nothing more lost",
    };
    let line = format!(
        "{} `{id}` wounded: Wound Severity dr {dr}{} → {words}",
        unit.ratings,
        game::dice::signed_drms(&modifiers)
    );
    let mut events = vec![Event::DiceRolled(DiceRolled {
        roll: Roll {
            side: draws.by,
            purpose: RollPurpose::WoundSeverity,
            rule: "A17.11".into(),
            first_draw,
            dice: vec![dr],
            modifiers,
            final_result: final_dr,
            outcome: line.clone(),
        },
    })];
    let applied = |outcome: Outcome, rule: &str, words: &str| {
        Event::FireEffectApplied(FireEffectApplied {
            unit: id.clone(),
            outcome,
            rule: rule.into(),
            why: format!("{why} → {words}"),
        })
    };
    if mortal {
        events.push(applied(
            Outcome::Eliminate,
            "A17.11",
            &format!("wounded mortally (dr {final_dr}): eliminated"),
        ));
        return Ok(events);
    }
    if !unit.wounded {
        events.push(applied(
            Outcome::Wound,
            "A17.11",
            &format!("wounded (dr {final_dr}, minor)"),
        ));
    }
    if unit.mf_spent > board::terrain::Mf::whole(3) && !unit.pinned {
        events.push(applied(
            Outcome::Pin,
            "A17.2",
            &format!("wounded after spending {} MF: pinned", unit.mf_spent),
        ));
    }
    Ok(events)
}

/// The check an IFT result asks of each unit: its roll's purpose, rule, DRM and name.
#[derive(Clone, Copy)]
struct Check {
    purpose: RollPurpose,
    rule: &'static str,
    drm: i8,
    /// The Morale Level checked against where the ratings do not give it: the morale on a
    /// broken unit's broken side, which its owner gives (A10.4). `None`: the ratings' own
    /// (`morale_of`).
    broken_side: Option<i16>,
    /// The dice of an attack the check is read off rather than rolled: the Final Protective
    /// Fire's Original DR, its firers' NMC (A8.31). `None`: the check's own DR, through the
    /// dice.
    read: Option<[u8; 2]>,
}

impl Check {
    fn of(result: IftResult) -> Option<Check> {
        match result {
            IftResult::Ptc => Some(Check {
                purpose: RollPurpose::PinTaskCheck,
                rule: "A7.8",
                drm: 0,
                broken_side: None,
                read: None,
            }),
            IftResult::Nmc => Some(Check {
                purpose: RollPurpose::NormalMoraleCheck,
                rule: "A10.1",
                drm: 0,
                broken_side: None,
                read: None,
            }),
            IftResult::Mc(n) | IftResult::K(n) => Some(Check {
                purpose: RollPurpose::MoraleCheck,
                rule: "A10.1",
                drm: i8::try_from(n).unwrap_or(i8::MAX),
                broken_side: None,
                read: None,
            }),
            _ => None,
        }
    }

    fn is_ptc(self) -> bool {
        self.purpose == RollPurpose::PinTaskCheck
    }

    fn is_interdiction(self) -> bool {
        self.purpose == RollPurpose::Interdiction
    }
}

/// Random Selection among `units` (A.9): one dr each through the game's dice, logged
/// (`DiceRolled`, purpose Random Selection, rolled by `by`) in the order given, `draw` the draw
/// number of the next die. Returns each unit's dr; the highest is selected, and every unit tied
/// at it (`selected`). With one unit there is nothing to choose, and nothing is rolled.
pub(crate) fn random_selection(
    by: Side,
    units: &[&Unit],
    what: &str,
    draw: &mut u64,
    dice: &mut dyn DiceSource,
) -> Result<(BTreeMap<UnitId, u8>, Vec<Event>), NoDice> {
    let mut drs = BTreeMap::new();
    let mut events = vec![];
    if let [only] = units {
        drs.insert(only.id.clone(), 6);
        return Ok((drs, events));
    }
    for unit in units {
        let first_draw = *draw;
        let dr = dice.roll_die().ok_or(NoDice)?;
        *draw += 1;
        drs.insert(unit.id.clone(), dr);
        events.push(Event::DiceRolled(DiceRolled {
            roll: Roll {
                side: by,
                purpose: RollPurpose::RandomSelection,
                rule: "A.9".into(),
                first_draw,
                dice: vec![dr],
                modifiers: vec![],
                final_result: i16::from(dr),
                outcome: format!(
                    "{} `{}` Random Selection for {what}: dr {dr}",
                    unit.ratings, unit.id
                ),
            },
        }));
    }
    Ok((drs, events))
}

/// The units a Random Selection picked (A.9): the highest dr, and every unit tied at it.
pub fn selected(drs: &BTreeMap<UnitId, u8>) -> BTreeSet<UnitId> {
    let top = drs.values().max().copied().unwrap_or(0);
    drs.iter()
        .filter(|(_, dr)| **dr == top)
        .map(|(id, _)| id.clone())
        .collect()
}

/// The game's dice as an attack's effects draw them: the draw number of the next die, and
/// the events so far.
struct Effects<'a> {
    /// The position the attack's effects are ruled in (what the scenario says of a unit).
    game: &'a Game,
    /// The side whose command rolls: the firer's. Every roll names the side whose command
    /// made it (`record::export` checks it), the checks of the units fired on included.
    by: Side,
    dice: &'a mut dyn DiceSource,
    draw: u64,
    target: Hex,
    events: Vec<Event>,
    /// Leaders who broke in this attack, for the Leader Loss Task Checks that follow it.
    broken_leaders: Vec<UnitId>,
    /// Leaders eliminated in this attack, for the Leader Loss Morale Checks that follow it.
    eliminated_leaders: Vec<UnitId>,
}

impl Effects<'_> {
    fn die(&mut self) -> Result<u8, NoDice> {
        let d = self.dice.roll_die().ok_or(NoDice)?;
        self.draw += 1;
        Ok(d)
    }

    /// The two dice of a unit's check (an MC, a PTC, a TC), whichever rule calls for it: the
    /// draw number of the first, the dice, and the Original DR.
    fn check_dice(&mut self) -> Result<(Option<u64>, [u8; 2], i16), NoDice> {
        let first_draw = self.draw;
        let dice = [self.die()?, self.die()?];
        Ok((
            Some(first_draw),
            dice,
            i16::from(dice[0]) + i16::from(dice[1]),
        ))
    }

    /// Logs a unit's check as rolled (`check_dice`), with its line in the fire log —
    /// "4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken", or "broken morale 8" where the level is
    /// the broken side's its owner gave (A10.4) — and returns that line. A check with no draw
    /// of its own read an attack's Original DR (the FPF's NMC, A8.31): it is logged as
    /// `FpfNmcTaken`, not as a roll, since no die of the dice scheme was drawn for it.
    #[allow(clippy::too_many_arguments)]
    fn log_check(
        &mut self,
        unit: &Unit,
        name: &str,
        (level, broken_side): (i16, bool),
        rolled: (Option<u64>, [u8; 2], i16),
        modifiers: Vec<Modifier>,
        final_dr: i16,
        words: &str,
        (purpose, rule): (RollPurpose, &str),
    ) -> String {
        let (first_draw, dice, original) = rolled;
        let drms = game::dice::signed_drms(&modifiers);
        let line = format!(
            "{} `{}` {name}: {}morale {level}{}, DR {original}{drms} → {words}",
            unit.ratings,
            unit.id,
            if broken_side { "broken " } else { "" },
            if wounded_penalty(unit) > 0 {
                " (wounded)"
            } else {
                ""
            }
        );
        let Some(first_draw) = first_draw else {
            self.events.push(Event::FpfNmcTaken(FpfNmcTaken {
                by: self.by,
                unit: unit.id.clone(),
                dice: dice.to_vec(),
                modifiers,
                final_dr,
                rule: rule.into(),
                outcome: line.clone(),
            }));
            return line;
        };
        self.events.push(Event::DiceRolled(DiceRolled {
            roll: Roll {
                side: self.by,
                purpose,
                rule: rule.into(),
                first_draw,
                dice: dice.to_vec(),
                modifiers,
                final_result: final_dr,
                outcome: line.clone(),
            },
        }));
        line
    }

    /// Casualty Reduction of `unit` (A7.302) by the one function that does it, its Wound
    /// Severity dr (an SMC's) drawn from the attack's dice. Returns whether it eliminated the
    /// unit; a leader killed by his wound is lost as any leader eliminated is (A10.2).
    fn casualty_reduction(&mut self, unit: &Unit, rule: &str, why: &str) -> Result<bool, NoDice> {
        let mut draws = Draws {
            by: self.by,
            draw: &mut self.draw,
            dice: &mut *self.dice,
        };
        let events = casualty_reduction(self.game, unit, rule, why, &mut draws)?;
        let gone = events.iter().any(|e| {
            matches!(e, Event::FireEffectApplied(FireEffectApplied { unit: u, outcome: Outcome::Eliminate, .. }) if *u == unit.id)
        });
        self.events.extend(events);
        if gone && unit.kind.is_smc() {
            self.leader_lost(unit, "was killed by his wound");
        }
        Ok(gone)
    }

    fn left(&mut self, unit: Option<&UnitId>, rule: &str, why: String) {
        self.events
            .push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                target: self.target,
                unit: unit.cloned(),
                rule: rule.to_string(),
                why,
            }));
    }

    /// Random Selection among `units` (A.9) for an IFT result, by the one path every Random
    /// Selection takes (`random_selection`).
    fn random_selection(
        &mut self,
        units: &[&Unit],
        result: IftResult,
    ) -> Result<BTreeMap<UnitId, u8>, NoDice> {
        let (drs, events) = random_selection(
            self.by,
            units,
            &result.to_string(),
            &mut self.draw,
            self.dice,
        )?;
        self.events.extend(events);
        Ok(drs)
    }

    /// A leader's leaving the fight: one who broke is remembered for the Leader Loss Task
    /// Checks, one eliminated (by a KIA, a mortal wound, a broken leader's failed MC) for the
    /// Leader Loss Morale Checks, both rolled once the attack's other effects are known
    /// (`leader_loss_morale_checks`, `leader_loss_task_checks`; A10.2).
    fn leader_lost(&mut self, unit: &Unit, what: &str) {
        if unit.kind != UnitKind::Leader {
            return;
        }
        if what == "broke" {
            self.broken_leaders.push(unit.id.clone());
        } else {
            self.eliminated_leaders.push(unit.id.clone());
        }
    }
}

/// A10.2: for each leader eliminated in an attack, once its other effects are applied, every
/// other friendly unit it struck (`struck`: the units of the Location, or the moving stack a
/// Residual FP attack struck) whose Morale Level is now lower than his takes a Leader Loss
/// Morale Check: an MC with his leadership modifier against it (an 8-0 gives an NMC, an 8-1
/// or a 9-1 a 1MC, a 10-2 a 2MC), whatever its own check of the attack did. It is an MC like
/// any other (`morale_check`): leaders first, the highest morale first, another Good Order
/// leader's DRM applying, a failure breaking a Good Order unit — and a leader broken or
/// killed by it calls for the checks his own loss owes. Where the engine cannot rule, the
/// check is asked of the players: a broken unit (its Morale Level is its counter's broken
/// side, which its ratings do not give), a leader whose modifier is positive, and the checks
/// `morale_check` itself leaves to them (a hero, a berserk unit).
fn leader_loss_morale_checks(
    game: &Game,
    fx: &mut Effects,
    struck: &BTreeSet<UnitId>,
) -> Result<(), NoDice> {
    loop {
        let leaders = std::mem::take(&mut fx.eliminated_leaders);
        if leaders.is_empty() {
            return Ok(());
        }
        for lid in leaders {
            // The leader as he was before the attack: the Morale Level the others compare with.
            let Some(leader) = game.units.get(&lid) else {
                continue;
            };
            let (Some(lm), Some(ld)) = (morale_of(leader), leadership_of(leader)) else {
                continue;
            };
            // The Location as the attack (and the checks before this one) left it.
            let mut after = game.clone();
            for e in &fx.events {
                game::apply(&mut after, e);
            }
            let Some(gone) = after.units.get(&lid) else {
                continue;
            };
            let mut units: Vec<&Unit> = struck_with(&after, gone, struck).collect();
            units.sort_by_key(|u| {
                (
                    u.kind != UnitKind::Leader,
                    std::cmp::Reverse(morale_of(u)),
                    u.id.clone(),
                )
            });
            let candidates = units.clone();
            let mut fallen: BTreeSet<UnitId> = BTreeSet::new();
            for unit in units {
                let id = &unit.id;
                if unit.morale == Morale::Broken {
                    fx.left(
                        Some(id),
                        "A10.2",
                        format!("`{id}` is broken: whether it takes a Leader Loss Morale Check for `{lid}`, and its outcome, rest on its broken side's Morale Level, which its ratings do not give"),
                    );
                    continue;
                }
                if morale_of(unit).is_some_and(|level| level >= lm) {
                    continue;
                }
                if ld > 0 {
                    fx.left(
                        Some(id),
                        "A10.2",
                        format!("`{id}`'s Leader Loss Morale Check for `{lid}`: a leader's positive modifier is not resolved by the engine"),
                    );
                    continue;
                }
                let drm = -ld;
                let (check, name) = if drm == 0 {
                    (
                        Check {
                            purpose: RollPurpose::NormalMoraleCheck,
                            rule: "A10.2",
                            drm: 0,
                            broken_side: None,
                            read: None,
                        },
                        format!("NMC (LLMC for `{lid}`)"),
                    )
                } else {
                    (
                        Check {
                            purpose: RollPurpose::MoraleCheck,
                            rule: "A10.2",
                            drm,
                            broken_side: None,
                            read: None,
                        },
                        format!("{drm}MC (LLMC for `{lid}`)"),
                    )
                };
                let modifiers = if drm == 0 {
                    vec![]
                } else {
                    vec![Modifier {
                        value: drm,
                        reason: format!("`{lid}` eliminated"),
                        rule: "A10.2".into(),
                    }]
                };
                morale_check(fx, unit, check, &name, modifiers, &candidates, &mut fallen)?;
            }
        }
    }
}

/// The units a Leader Loss check (A10.2) may fall on when `leader` is lost: those of his side
/// the attack struck (`struck`) still on the map, not hidden, and in his Location as `after`
/// (the game with the attack's effects so far) has them — one reading for the LLMC and the
/// LLTC alike. No attack the engine resolves strikes a Melee (fire into one is the players',
/// A11.7; units in CC take and cause none, A10.2, A11.141).
fn struck_with<'g>(
    after: &'g Game,
    leader: &'g Unit,
    struck: &'g BTreeSet<UnitId>,
) -> impl Iterator<Item = &'g Unit> {
    after.units.values().filter(move |u| {
        u.side == leader.side
            && u.id != leader.id
            && struck.contains(&u.id)
            && !u.eliminated
            && !u.hidden
            && after.same_location(u, leader)
    })
}

/// A10.2: when an unbroken leader breaks, every unbroken friendly unit of a lower Morale Level
/// the attack struck (`struck`: his Location, or the moving stack Residual FP struck) takes a
/// Leader Loss Task Check, a TC with the leader's leadership modifier
/// as a DRM against it (a 9-1's −1 is +1; an 8-0's nothing), and is pinned if it fails. The
/// checks follow the attack's other effects, so a unit those broke or eliminated takes none.
/// A leader whose modifier is positive (a 7+1), and a hero or berserk unit (which may be
/// exempt from pinning), are asked of the players.
fn leader_loss_task_checks(
    game: &Game,
    fx: &mut Effects,
    struck: &BTreeSet<UnitId>,
) -> Result<(), NoDice> {
    let leaders = std::mem::take(&mut fx.broken_leaders);
    if leaders.is_empty() {
        return Ok(());
    }
    // The Location as the attack left it: the events so far applied to a copy.
    let mut after = game.clone();
    for e in &fx.events {
        game::apply(&mut after, e);
    }
    for lid in leaders {
        let Some(leader) = after.units.get(&lid) else {
            continue;
        };
        let (Some(lm), Some(ld)) = (morale_of(leader), leadership_of(leader)) else {
            continue;
        };
        let mut units: Vec<&Unit> = struck_with(&after, leader, struck)
            .filter(|u| u.morale != Morale::Broken)
            .collect();
        units.sort_by(|a, b| a.id.cmp(&b.id));
        for unit in units {
            let id = &unit.id;
            let Some(level) = morale_of(unit) else {
                fx.left(
                    Some(id),
                    "A10.2",
                    format!("`{id}`'s Leader Loss Task Check for `{lid}`: its ratings `{}` give no Morale Level", unit.ratings),
                );
                continue;
            };
            if level >= lm {
                continue;
            }
            if ld > 0 || unit.kind == UnitKind::Hero || unit.morale == Morale::Berserk {
                fx.left(
                    Some(id),
                    "A10.2",
                    format!("`{id}`'s Leader Loss Task Check for `{lid}` is not resolved by the engine (a leader's positive modifier, a hero or a berserk unit)"),
                );
                continue;
            }
            let drm = -ld;
            let modifiers = if drm == 0 {
                vec![]
            } else {
                vec![Modifier {
                    value: drm,
                    reason: format!("`{lid}` broke"),
                    rule: "A10.2".into(),
                }]
            };
            let rolled = fx.check_dice()?;
            let final_dr = rolled.2 + i16::from(drm);
            let passed = final_dr <= level;
            let pins = !passed && !unit.pinned;
            let words = match (passed, pins) {
                (true, _) => "passed",
                (false, true) => "pinned",
                (false, false) => "failed (pinned already)",
            };
            let line = fx.log_check(
                unit,
                &format!("LLTC for `{lid}`"),
                (level, false),
                rolled,
                modifiers,
                final_dr,
                words,
                (RollPurpose::TaskCheck, "A10.2"),
            );
            if pins {
                fx.events.push(Event::FireEffectApplied(FireEffectApplied {
                    unit: id.clone(),
                    outcome: Outcome::Pin,
                    rule: "A10.2".into(),
                    why: line,
                }));
            }
        }
    }
    Ok(())
}

/// The effects of `result` on the units an attack struck in `target`'s Location, as events:
/// the rolls through `dice` (the first of them draw number `first_draw`), what each did, and
/// what is left to the players. The units are given, as they may be only some of the
/// Location's: those `fire::resolution::assess` fired on (`Assessment::fired_on`: every enemy
/// unit there that is not hidden, or the moving stack alone for First Fire, A8.1; none
/// concealed, as such an attack never reaches the engine's IFT), or the units entering a
/// Location Residual FP attacks, not those already there (A8.2). `game` has them in the
/// Location, and the checks are rolled in the name of `roller`, the side whose command made
/// the attack or the entry (every roll names the side whose command made it).
pub(crate) fn fire_effects(
    game: &Game,
    roller: Side,
    target: Hex,
    units: &[UnitId],
    result: IftResult,
    first_draw: u64,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, NoDice> {
    let targets: Vec<&Unit> = units.iter().filter_map(|id| game.units.get(id)).collect();
    effects_on(game, roller, target, targets, result, first_draw, dice)
}

fn effects_on(
    game: &Game,
    roller: Side,
    target: Hex,
    mut targets: Vec<&Unit>,
    result: IftResult,
    first_draw: u64,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, NoDice> {
    let by = roller;
    // Leaders check first, the highest Morale Level first (A10.21, A10.22): a leader helps
    // the others only once he has passed, and another leader only if that one's morale is lower.
    targets.sort_by_key(|u| {
        (
            u.kind != UnitKind::Leader,
            std::cmp::Reverse(morale_of(u)),
            u.id.clone(),
        )
    });
    let mut fx = Effects {
        game,
        by,
        dice,
        draw: first_draw,
        target,
        events: vec![],
        broken_leaders: vec![],
        eliminated_leaders: vec![],
    };
    match result {
        IftResult::NoEffect => {}
        IftResult::Kia(n) => kia(&mut fx, &targets, result, n)?,
        IftResult::K(_) => {
            let selected = k(&mut fx, &targets, result)?;
            checks(game, &mut fx, &targets, result, &selected)?;
        }
        _ => checks(game, &mut fx, &targets, result, &BTreeMap::new())?,
    }
    let struck: BTreeSet<UnitId> = targets.iter().map(|u| u.id.clone()).collect();
    leader_loss_morale_checks(game, &mut fx, &struck)?;
    leader_loss_task_checks(game, &mut fx, &struck)?;
    Ok(fx.events)
}

/// A #KIA (A7.301): the # units with the highest Random Selection drs are eliminated, every
/// unit tied at the cut with them too (A.9); the others break, and one broken already suffers
/// Casualty Reduction instead. With # at least the number of units, all are eliminated and
/// nothing is rolled.
fn kia(fx: &mut Effects, targets: &[&Unit], result: IftResult, n: u8) -> Result<(), NoDice> {
    let n = usize::from(n);
    let drs = if n >= targets.len() {
        BTreeMap::new()
    } else {
        fx.random_selection(targets, result)?
    };
    let mut sorted: Vec<u8> = drs.values().copied().collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let cut = sorted.get(n.saturating_sub(1)).copied();
    for unit in targets {
        let id = &unit.id;
        let dr = drs.get(id).copied();
        let eliminated = match (cut, dr) {
            (Some(cut), Some(dr)) => dr >= cut,
            _ => true,
        };
        let picked = dr.map(|d| format!(" (dr {d})")).unwrap_or_default();
        if eliminated {
            fx.events.push(Event::FireEffectApplied(FireEffectApplied {
                unit: id.clone(),
                outcome: Outcome::Eliminate,
                rule: "A7.301".into(),
                why: format!("{} `{id}` {result}{picked} → eliminated", unit.ratings),
            }));
            fx.leader_lost(unit, "was eliminated");
            random_sw_destruction(fx, unit, result);
            continue;
        }
        if unit.morale == Morale::Berserk || unit.kind == UnitKind::Hero {
            fx.left(
                Some(id),
                "A15",
                format!("`{id}` survived the {result}{picked}: what it does to a hero or a berserk unit is not resolved by the engine"),
            );
        } else if unit.morale == Morale::Broken {
            let why = format!(
                "{} `{id}` {result}{picked}: broken already, Casualty Reduction",
                unit.ratings
            );
            fx.casualty_reduction(unit, "A7.301", &why)?;
        } else {
            fx.events.push(Event::FireEffectApplied(FireEffectApplied {
                unit: id.clone(),
                outcome: Outcome::Break,
                rule: "A7.301".into(),
                why: format!("{} `{id}` {result}{picked} → broken", unit.ratings),
            }));
            fx.leader_lost(unit, "broke");
        }
    }
    Ok(())
}

/// A9.74: the support weapons a KIA's victim possessed each get a dr on the attack's IFT
/// column, which may destroy or malfunction them. The engine does not make it: it asks the
/// players at the point it arises, and leaves the weapons where their possessor fell (the one
/// way a weapon becomes unpossessed, `Game::leave_weapon`), for them to remove one the dr
/// destroys.
fn random_sw_destruction(fx: &mut Effects, unit: &Unit, result: IftResult) {
    let weapons: Vec<&str> = fx
        .game
        .weapons
        .values()
        .filter(|w| w.held_by.as_ref() == Some(&unit.id))
        .map(|w| w.id.as_str())
        .collect();
    if weapons.is_empty() {
        return;
    }
    let why = format!(
        "`{}` was eliminated by the {result} possessing {}: the Random SW Destruction dr on the attack's IFT column for each (a KIA destroys it, a K malfunctions it) is the players' to roll (`roll dr`) and abide by; the engine leaves each weapon unpossessed where `{}` fell",
        unit.id,
        weapons.join(", "),
        unit.id
    );
    fx.left(Some(&unit.id), "A9.74", why);
}

/// A K/# (A7.302): Random Selection picks the unit(s) Casualty Reduced (A.9: the highest dr,
/// every unit tied at it too). Returns each picked unit and what became of it, for the #MC
/// that follows (`checks`).
fn k(
    fx: &mut Effects,
    targets: &[&Unit],
    result: IftResult,
) -> Result<BTreeMap<UnitId, UnitKind>, NoDice> {
    let drs = fx.random_selection(targets, result)?;
    let highest = drs.values().copied().max();
    let mut selected = BTreeMap::new();
    for unit in targets {
        let dr = drs.get(&unit.id).copied();
        if dr != highest {
            continue;
        }
        let picked = if targets.len() > 1 {
            format!(" (dr {})", dr.unwrap_or_default())
        } else {
            String::new()
        };
        let why = format!(
            "{} `{}` {result}{picked}: Casualty Reduction",
            unit.ratings, unit.id
        );
        fx.casualty_reduction(unit, "A7.302", &why)?;
        selected.insert(unit.id.clone(), unit.kind);
    }
    Ok(selected)
}

/// The check `result` asks of each unit of `targets` (PTC, NMC, nMC, or a K/#'s #MC), each its
/// own DR with the leadership DRM that applies, and what follows. `reduced` holds the units a
/// K/# Casualty Reduced (with their kind before it): a squad made a half-squad checks too, on
/// the ratings its counter names (`Game::half_squad`), or, where the scenario does not give
/// them, its check is asked of the players; a half-squad or crew is gone, and a wounded SMC
/// takes no check; a leader the K/# wounded (minor) still leads the others' checks, his DRM
/// one worse (A17.3), as its Wound Severity dr is made at once (A17.11).
fn checks(
    game: &Game,
    fx: &mut Effects,
    targets: &[&Unit],
    result: IftResult,
    reduced: &BTreeMap<UnitId, UnitKind>,
) -> Result<(), NoDice> {
    let check = Check::of(result).expect("PTC, NMC, nMC and K/# ask for checks");
    // Leaders who have failed their check in this attack: they no longer help (A10.21).
    let mut fallen: BTreeSet<UnitId> = BTreeSet::new();
    // The units as the K/#'s Casualty Reduction left them (a leader wounded, A17.11): its
    // events applied to a copy of the game.
    let after = (!reduced.is_empty()).then(|| {
        let mut after = game.clone();
        for e in &fx.events {
            game::apply(&mut after, e);
        }
        after
    });
    let now: Vec<&Unit> = targets
        .iter()
        .map(|u| after.as_ref().and_then(|g| g.units.get(&u.id)).unwrap_or(u))
        .collect();
    for &unit in targets {
        let id = &unit.id;
        // A squad just reduced checks as the half-squad it is now: on the ratings its counter
        // names (`casualty_reduction` made it that one), else the players roll.
        let half: Unit;
        let unit = match reduced.get(id) {
            Some(UnitKind::Squad) => match game.half_squad(unit) {
                Some(ratings) => {
                    half = Unit {
                        kind: UnitKind::HalfSquad,
                        ratings: ratings.to_string(),
                        ..unit.clone()
                    };
                    &half
                }
                None => {
                    fx.left(
                        Some(id),
                        "A7.302",
                        format!("`{id}`, just reduced to a half-squad, takes the {result}'s MC too: its ratings are not known yet, so the check is the players' to roll"),
                    );
                    continue;
                }
            },
            Some(_) => continue,
            None => unit,
        };
        // A leader of the Location the attack did not strike leads the checks too (A10.21),
        // having none to pass himself: one not moving when First Fire strikes the moving
        // stack (A8.1), one already there when Residual FP strikes the units entering (A8.2).
        // One hidden or under "?" is his owner's secret and is not counted.
        let bystanders =
            location_helpers(game, unit).filter(|l| !targets.iter().any(|t| t.id == l.id));
        let candidates: Vec<&Unit> = now
            .iter()
            .copied()
            .filter(|l| game.same_location(l, unit))
            .chain(bystanders)
            .collect();
        let mut modifiers = vec![];
        if check.drm != 0 {
            modifiers.push(Modifier {
                value: check.drm,
                reason: format!("{result}"),
                rule: "A7.3".into(),
            });
        }
        let name = match result {
            IftResult::Ptc => "PTC".to_string(),
            IftResult::K(n) => format!("{n}MC"),
            other => other.to_string(),
        };
        morale_check(fx, unit, check, &name, modifiers, &candidates, &mut fallen)?;
    }
    Ok(())
}

/// The units of `unit`'s side in its Location above ground, as a check it takes there counts
/// them for the leadership DRM (A10.21): in play, neither hidden nor under "?" (a leader so
/// placed is his owner's secret, and is not counted), whatever called for the check — an attack's effects,
/// an Interdiction (A10.53), a Final Protective Fire's NMC (A8.31) — and the one a rally's
/// leader must be among (`rally`). `morale_check` then picks the leader among them.
pub(super) fn location_helpers<'g>(
    game: &'g Game,
    unit: &'g Unit,
) -> impl Iterator<Item = &'g Unit> {
    game.units_above(unit.hex).filter(move |l| {
        l.side == unit.side && !l.hidden && !l.concealed && game.same_location(l, unit)
    })
}

/// One unit's check, whichever rule calls for it — an IFT result's PTC, NMC or nMC (a K/#'s
/// #MC), or a Leader Loss Morale Check (A10.2) — with `modifiers` the check's own DRMs: the
/// one path by which the engine rolls a check, applies the leadership DRM of a leader among
/// `candidates` (the units of the Location as the check is taken; A10.21, A10.22), and breaks,
/// pins or reduces the unit (A7.8, A10.1, A10.2, A10.31). A leader who fails, or whom his
/// check pins, is added to `fallen`, and helps no later check of the same occasion (A10.21,
/// A7.831: a pinned leader aids no unit's MC or TC).
fn morale_check(
    fx: &mut Effects,
    unit: &Unit,
    check: Check,
    name: &str,
    mut modifiers: Vec<Modifier>,
    candidates: &[&Unit],
    fallen: &mut BTreeSet<UnitId>,
) -> Result<(), NoDice> {
    let id = &unit.id;
    if unit.morale == Morale::Berserk || unit.kind == UnitKind::Hero {
        fx.left(
            Some(id),
            "A15",
            format!("`{id}`'s check: a hero's or a berserk unit's is not resolved by the engine"),
        );
        return Ok(());
    }
    // A broken unit checks against its counter's broken side (A10.4), which the ratings (the
    // Good Order side) do not carry: with no level given for it, the check is the players',
    // never one against the Good Order morale. A PTC's effect on a broken unit is asked below.
    if unit.morale == Morale::Broken && check.broken_side.is_none() && !check.is_ptc() {
        let word = check.purpose.on_request().map_or("MC", |(word, _)| word);
        let wounded = if wounded_penalty(unit) > 0 {
            " (one lower, wounded)"
        } else {
            ""
        };
        fx.left(
            Some(id),
            "A10.4",
            format!("`{id}` is broken: its {name} is taken against its broken side's Morale Level{wounded}, which its ratings `{}` do not give, so the players roll it (`roll DR {word}`) and rule its outcome (a failure is Casualty Reduction, A10.2; an Original 12 eliminates it, A10.31)", unit.ratings),
        );
        return Ok(());
    }
    // A broken side's morale its owner gave is one lower for a wound too (A17.3).
    let given = check
        .broken_side
        .map(|m| m - i16::from(wounded_penalty(unit)));
    let Some(level) = given.or_else(|| morale_of(unit)) else {
        fx.left(
            Some(id),
            "A10.1",
            format!("`{id}`'s ratings `{}` give no Morale Level", unit.ratings),
        );
        return Ok(());
    };
    if unit.morale == Morale::Broken && check.is_ptc() {
        fx.left(
            Some(id),
            "A7.8",
            format!(
                "`{id}` is broken: what a PTC does to a broken unit is not resolved by the engine"
            ),
        );
        return Ok(());
    }
    // The leaders as they stand now: one just wounded (minor) leads with his DRM one
    // worse (A17.3), one killed by his wound or pinned by it (A17.2) does not.
    let helpers: Vec<&Unit> = candidates
        .iter()
        .copied()
        .filter(|l| {
            l.kind == UnitKind::Leader
                && l.id != *id
                && l.is_good_order()
                && !l.pinned
                && !fallen.contains(&l.id)
                && (unit.kind != UnitKind::Leader || morale_of(l).is_some_and(|m| m > level))
        })
        .collect();
    if helpers.len() > 1 {
        fx.left(
            Some(id),
            "A10.21",
            format!("`{id}` has more than one leader whose DRM could apply: which one is not resolved by the engine"),
        );
        return Ok(());
    }
    if let Some(l) = helpers.first() {
        let drm = leadership_of(l).unwrap_or(0);
        if drm != 0 {
            modifiers.push(Modifier {
                value: drm,
                reason: format!(
                    "`{}` leads{}",
                    l.id,
                    if l.wounded { " (wounded)" } else { "" }
                ),
                rule: "A10.21".into(),
            });
        }
    }
    let rolled = match check.read {
        Some(dice) => (None, dice, i16::from(dice[0]) + i16::from(dice[1])),
        None => fx.check_dice()?,
    };
    let original = rolled.2;
    let final_dr = original + modifiers.iter().map(|m| i16::from(m.value)).sum::<i16>();
    // An Original 12 on an MC is a Casualty MC (A10.31): failed whatever the DRMs.
    let casualty = !check.is_ptc() && original == 12;
    let passed = final_dr <= level && !casualty;
    let good_order = unit.morale == Morale::GoodOrder;
    // What the check does, and the rule for it. Passing an MC with a Final DR equal to the
    // morale pins a Good Order unit (A7.8).
    let effect: Option<(Outcome, &str)> = match (check.is_ptc(), passed, unit.morale) {
        (false, true, Morale::GoodOrder) if final_dr == level && !unit.pinned => {
            Some((Outcome::Pin, "A7.8"))
        }
        // A router passing its Interdiction NMC at its morale is pinned too: the one pin a
        // broken unit takes (A10.53, A7.8), which ends its rout (`movement::rout`). A Pin it
        // had before it broke was lifted by its breaking (A7.8), though the engine keeps the
        // flag, so this pin is always a new one.
        (false, true, Morale::Broken) if check.is_interdiction() && final_dr == level => {
            Some((Outcome::Pin, "A10.53"))
        }
        (_, true, _) => None,
        (true, false, _) if unit.pinned => None,
        (true, false, _) => Some((Outcome::Pin, "A7.8")),
        // A Casualty MC's reduction comes first, then the break (below).
        (false, false, Morale::GoodOrder) if casualty => None,
        (false, false, Morale::GoodOrder) => Some((Outcome::Break, "A10.1")),
        (false, false, _) => None, // broken already: Casualty Reduction below
    };
    let words = match (&effect, passed) {
        (Some((Outcome::Pin, _)), true) => "passed, pinned",
        (Some((Outcome::Pin, _)), false) => "pinned",
        (Some(_), _) => "broken",
        (None, true) => "passed",
        (None, false) if check.is_ptc() => "failed (pinned already)",
        (None, false) if casualty && good_order => "Casualty MC",
        (None, false) if casualty => "Original 12: eliminated",
        (None, false) if check.is_interdiction() => "failed: Casualty Reduction",
        (None, false) => "failed",
    };
    let line = fx.log_check(
        unit,
        name,
        (level, given.is_some()),
        rolled,
        modifiers,
        final_dr,
        words,
        (check.purpose, check.rule),
    );
    // A leader his own check pins (a PTC failed, an MC passed at his morale) aids no later
    // check of the same occasion, as one who failed does not (A7.831, A10.21).
    if unit.kind == UnitKind::Leader && matches!(effect, Some((Outcome::Pin, _))) {
        fallen.insert(id.clone());
    }
    if let Some((outcome, rule)) = effect {
        fx.events.push(Event::FireEffectApplied(FireEffectApplied {
            unit: id.clone(),
            outcome,
            rule: rule.into(),
            why: line.clone(),
        }));
    }
    if check.is_ptc() {
        return Ok(());
    }
    // What the engine does not rule on, asked where it arises.
    if original == 2 {
        fx.left(
            Some(id),
            "A15",
            format!(
                "`{id}` rolled an Original 2 on its MC: Heat of Battle is the players' to resolve"
            ),
        );
    }
    if !passed {
        if unit.kind == UnitKind::Leader {
            fallen.insert(id.clone());
        }
        if unit.morale == Morale::Broken && casualty {
            // A broken unit's Original 12 on an MC eliminates it outright (A10.31), rather
            // than reducing it as a failure does.
            fx.events.push(Event::FireEffectApplied(FireEffectApplied {
                unit: id.clone(),
                outcome: Outcome::Eliminate,
                rule: "A10.31".into(),
                why: format!("{line}: broken, Original 12: eliminated"),
            }));
            fx.leader_lost(unit, "was eliminated");
        } else if unit.morale == Morale::Broken {
            // A broken unit failing an MC is Casualty Reduced (A10.2), a router its
            // Interdiction NMC as A10.53 says.
            let (rule, why) = if check.is_interdiction() {
                ("A10.53", line.clone())
            } else {
                (
                    "A10.2",
                    format!("{line}: broken already, Casualty Reduction"),
                )
            };
            fx.casualty_reduction(unit, rule, &why)?;
        } else {
            // A Casualty MC (A10.31): Casualty Reduction, and what survives it breaks.
            let gone = casualty && {
                let why = format!("{line}: Casualty Reduction");
                fx.casualty_reduction(unit, "A10.31", &why)?
            };
            if casualty && !gone {
                fx.events.push(Event::FireEffectApplied(FireEffectApplied {
                    unit: id.clone(),
                    outcome: Outcome::Break,
                    rule: "A10.31".into(),
                    why: format!("{line}: broken"),
                }));
            }
            if !gone {
                fx.left(
                    Some(id),
                    "A19.13",
                    format!("`{id}` failed its MC by {}: whether it is replaced for failing by more than its side's ELR is the players' to rule (ELR is not modelled)", final_dr - level),
                );
                fx.leader_lost(unit, "broke");
            }
        }
    }
    Ok(())
}

/// Interdiction (A10.53): the NMC of `unit`, a broken unit that routed into Open Ground in
/// the LOS and normal range of the enemy `interdictors`, as `after` has it (the router in the
/// hex it entered), against `morale`, its broken side's (A10.4), rolled in the name of `by`
/// (the router's side) from draw `first_draw`. The one path every check takes
/// (`morale_check`): the leadership DRM of a Good Order leader in the Location entered
/// (A10.21), an Original 12 eliminating it, as it does any broken unit (A10.31), a failure
/// Casualty Reduction (A10.3, A10.53: a half-squad left routs on), a pass at the morale a pin
/// (A10.53, A7.8), after which it routs no further (`movement::rout` spends its MF). Only the router checks: Interdiction touches no other unit of its
/// Location; a leader it kills leaves the Leader Loss checks of the others there to them.
pub(crate) fn interdiction(
    after: &Game,
    by: Side,
    unit: &Unit,
    morale: u8,
    interdictors: &[UnitId],
    first_draw: u64,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, NoDice> {
    let mut fx = Effects {
        game: after,
        by,
        dice,
        draw: first_draw,
        target: unit.hex,
        events: vec![],
        broken_leaders: vec![],
        eliminated_leaders: vec![],
    };
    // A leader hidden or under "?" is his owner's secret and is not counted, as for fire.
    let candidates: Vec<&Unit> = location_helpers(after, unit).collect();
    let check = Check {
        purpose: RollPurpose::Interdiction,
        rule: "A10.53",
        drm: 0,
        broken_side: Some(i16::from(morale)),
        read: None,
    };
    let by_whom: Vec<String> = interdictors.iter().map(|e| format!("`{e}`")).collect();
    let name = format!("Interdiction NMC by {}", by_whom.join(", "));
    morale_check(
        &mut fx,
        unit,
        check,
        &name,
        vec![],
        &candidates,
        &mut BTreeSet::new(),
    )?;
    if !fx.eliminated_leaders.is_empty() && candidates.iter().any(|u| u.id != unit.id) {
        fx.left(
            Some(&unit.id),
            "A10.2",
            format!("`{}` was eliminated by his Interdiction: the Leader Loss checks of the units in his Location are the players' to roll", unit.id),
        );
    }
    Ok(fx.events)
}

/// Final Protective Fire's risk to its firers (A8.31): once the FPF attack's effects on the
/// moving units are known, its Original DR (`dice`, the IFT's own, not rolled again) is a
/// Normal Morale Check for each unit that fired it (`firers`: the units firing, the leader
/// directing them, the possessor of a MG in Sustained Fire), modified only by leadership. It
/// is taken by the one path every check takes (`morale_check`): leaders first, a Good Order
/// leader's DRM for the others of his Location (A10.21), pinned at the morale (A7.8), broken
/// above it (A10.1), an Original 12 a Casualty MC (A10.31); the target was attacked first, so
/// nothing here changes what the attack did to it. Logged as `FpfNmcTaken` per unit, drawing
/// no die; a Wound Severity dr the check calls for is drawn from `first_draw` on, rolled in
/// the name of `by`. An Original 12 with two or more firers is asked of the players: one
/// reading has Random Selection pick the unit the Casualty MC falls on, another has each take
/// it, and the engine does not choose between them.
pub(crate) fn final_protective_fire(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    dice: [u8; 2],
    first_draw: u64,
    source: &mut dyn DiceSource,
) -> Result<Vec<Event>, NoDice> {
    let mut units: Vec<&Unit> = firers
        .iter()
        .filter_map(|id| game.units.get(id))
        .filter(|u| !u.eliminated)
        .collect();
    let original = i16::from(dice[0]) + i16::from(dice[1]);
    if original == 12 && units.len() > 1 {
        let names = crate::listed(firers);
        return Ok(units
            .iter()
            .map(|u| {
                Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                    target: u.hex,
                    unit: Some(u.id.clone()),
                    rule: "A8.31".into(),
                    why: format!("the Final Protective Fire's Original DR 12 is a Casualty MC for its firers {names}: whether Random Selection picks the one it falls on or each takes it is not settled by the sources, so the players rule on `{}`'s NMC", u.id),
                })
            })
            .collect());
    }
    // Leaders check first, the highest Morale Level first (A10.21, A10.22).
    units.sort_by_key(|u| {
        (
            u.kind != UnitKind::Leader,
            std::cmp::Reverse(morale_of(u)),
            u.id.clone(),
        )
    });
    let Some(first) = units.first() else {
        return Ok(vec![]);
    };
    let mut fx = Effects {
        game,
        by,
        dice: source,
        draw: first_draw,
        target: first.hex,
        events: vec![],
        broken_leaders: vec![],
        eliminated_leaders: vec![],
    };
    let check = Check {
        purpose: RollPurpose::NormalMoraleCheck,
        rule: "A8.31",
        drm: 0,
        broken_side: None,
        read: Some(dice),
    };
    let mut fallen: BTreeSet<UnitId> = BTreeSet::new();
    for &unit in &units {
        // The leaders of its Location: the firers', and one there who did not fire, as for
        // any check (A10.21); one hidden or under "?" is his owner's secret and not counted.
        let candidates: Vec<&Unit> = location_helpers(game, unit).collect();
        morale_check(
            &mut fx,
            unit,
            check,
            "FPF NMC",
            vec![],
            &candidates,
            &mut fallen,
        )?;
    }
    let struck: BTreeSet<UnitId> = units.iter().map(|u| u.id.clone()).collect();
    leader_loss_morale_checks(game, &mut fx, &struck)?;
    leader_loss_task_checks(game, &mut fx, &struck)?;
    Ok(fx.events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morale_levels_read_from_the_ratings() {
        assert_eq!(morale_level(UnitKind::Squad, "4-6-7"), Some(7));
        assert_eq!(morale_level(UnitKind::HalfSquad, "2-4-7"), Some(7));
        assert_eq!(morale_level(UnitKind::Leader, "9-1"), Some(9));
        assert_eq!(morale_level(UnitKind::Leader, "10-2"), Some(10));
        assert_eq!(morale_level(UnitKind::Leader, "8+1"), Some(8));
        assert_eq!(morale_level(UnitKind::Squad, "4-6"), None);
        assert_eq!(morale_level(UnitKind::Leader, "4-6-7"), None);
    }

    #[test]
    fn checks_by_result() {
        assert!(Check::of(IftResult::Ptc).unwrap().is_ptc());
        assert_eq!(Check::of(IftResult::Mc(3)).unwrap().drm, 3);
        assert_eq!(Check::of(IftResult::Nmc).unwrap().drm, 0);
        assert_eq!(Check::of(IftResult::K(2)).unwrap().drm, 2);
        assert!(Check::of(IftResult::Kia(1)).is_none());
    }
}
