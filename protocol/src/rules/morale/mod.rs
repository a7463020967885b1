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
//! - A10.2: a leader who breaks makes lower-morale units in his Location take a Leader Loss
//!   check — eASLRB A10.2; not modelled here, so it is left to the players.
//! - A7.301, A7.302: KIA and K/# results pick their victims by Random Selection (A.9), which
//!   the engine does not roll yet, so they are left to the players whole.
//! - A7.8: a failed PTC pins the unit — the IFT key and the rules README ("nTC ... passed when
//!   the Final DR is at or below the unit's morale").

pub mod rally;

use crate::board::hex::Hex;
use crate::board::scenario::{Morale, Side, UnitId, UnitKind};
use crate::game::command::Outcome;
use crate::game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use crate::game::event::Event;
use crate::game::{Game, Unit};
use crate::rules::fire::ift::IftResult;
use crate::rules::fire::resolution::leadership;
use std::collections::BTreeSet;

/// The dice ran out before every check was rolled (offline, a script's `dice` line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoDice;

/// A unit's Morale Level as printed: the third number of an MMC's `4-6-7`, the first of a
/// leader's `9-1`. `None` when the ratings do not read so.
pub fn morale_level(kind: UnitKind, ratings: &str) -> Option<i16> {
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

/// The check an IFT result asks of each unit: its roll's purpose, rule, DRM and name.
#[derive(Clone, Copy)]
struct Check {
    purpose: RollPurpose,
    rule: &'static str,
    drm: i8,
}

impl Check {
    fn of(result: IftResult) -> Option<Check> {
        match result {
            IftResult::Ptc => Some(Check {
                purpose: RollPurpose::PinTaskCheck,
                rule: "A7.8",
                drm: 0,
            }),
            IftResult::Nmc => Some(Check {
                purpose: RollPurpose::NormalMoraleCheck,
                rule: "A10.1",
                drm: 0,
            }),
            IftResult::Mc(n) => Some(Check {
                purpose: RollPurpose::MoraleCheck,
                rule: "A10.1",
                drm: i8::try_from(n).unwrap_or(i8::MAX),
            }),
            _ => None,
        }
    }

    fn is_ptc(self) -> bool {
        self.purpose == RollPurpose::PinTaskCheck
    }
}

/// The effects of `result` on the enemy units of `by` in `target`'s Location, as events: the
/// checks' rolls through `dice` (the first of them draw number `first_draw`), what each did,
/// and what is left to the players. The units are those `fire::resolution::assess` fired on:
/// every enemy unit above ground in `target` that is not hidden (none concealed: such an
/// attack never reaches the engine's IFT).
pub fn fire_effects(
    game: &Game,
    by: Side,
    target: Hex,
    result: IftResult,
    first_draw: u64,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, NoDice> {
    let mut targets: Vec<&Unit> = game
        .units_above(target)
        .filter(|u| u.side != by && !u.hidden)
        .collect();
    // Leaders check first, the highest Morale Level first (A10.21, A10.22): a leader helps
    // the others only once he has passed, and another leader only if that one's morale is lower.
    targets.sort_by_key(|u| {
        (
            u.kind != UnitKind::Leader,
            std::cmp::Reverse(morale_level(u.kind, &u.ratings)),
            u.id.clone(),
        )
    });
    let left = |unit: Option<&UnitId>, rule: &str, why: String| Event::FireEffectLeftToPlayers {
        target,
        unit: unit.cloned(),
        rule: rule.to_string(),
        why,
    };
    let check = match result {
        IftResult::NoEffect => return Ok(vec![]),
        IftResult::Kia(_) => {
            return Ok(vec![left(
                None,
                "A7.301",
                format!("{result}: which units are eliminated is a Random Selection (A.9), and the survivors break; the engine does not roll it"),
            )])
        }
        IftResult::K(_) => {
            return Ok(vec![left(
                None,
                "A7.302",
                format!("{result}: one unit's Casualty Reduction by Random Selection (A.9), then an MC for the others; the engine does not roll it"),
            )])
        }
        other => Check::of(other).expect("PTC, NMC and nMC are checks"),
    };
    let mut events = vec![];
    let mut draw = first_draw;
    // Leaders who have failed their check in this attack: they no longer help (A10.21).
    let mut fallen: BTreeSet<UnitId> = BTreeSet::new();
    for unit in &targets {
        let id = &unit.id;
        if unit.morale == Morale::Berserk || unit.kind == UnitKind::Hero {
            events.push(left(
                Some(id),
                "A15",
                format!(
                    "`{id}`'s check: a hero's or a berserk unit's is not resolved by the engine"
                ),
            ));
            continue;
        }
        let Some(level) = morale_level(unit.kind, &unit.ratings) else {
            events.push(left(
                Some(id),
                "A10.1",
                format!("`{id}`'s ratings `{}` give no Morale Level", unit.ratings),
            ));
            continue;
        };
        if unit.morale == Morale::Broken && check.is_ptc() {
            events.push(left(
                Some(id),
                "A7.8",
                format!("`{id}` is broken: what a PTC does to a broken unit is not resolved by the engine"),
            ));
            continue;
        }
        let helpers: Vec<&&Unit> = targets
            .iter()
            .filter(|l| {
                l.kind == UnitKind::Leader
                    && l.id != *id
                    && l.is_good_order()
                    && !l.pinned
                    && !fallen.contains(&l.id)
                    && game.same_location(l, unit)
                    && (unit.kind != UnitKind::Leader
                        || morale_level(l.kind, &l.ratings).is_some_and(|m| m > level))
            })
            .collect();
        if helpers.len() > 1 {
            events.push(left(
                Some(id),
                "A10.21",
                format!("`{id}` has more than one leader whose DRM could apply: which one is not resolved by the engine"),
            ));
            continue;
        }
        let mut modifiers = vec![];
        if check.drm != 0 {
            modifiers.push(Modifier {
                value: check.drm,
                reason: format!("{result}"),
                rule: "A7.3".into(),
            });
        }
        if let Some(l) = helpers.first() {
            let drm = leadership(&l.ratings).unwrap_or(0);
            if drm != 0 {
                modifiers.push(Modifier {
                    value: drm,
                    reason: format!("`{}` leads", l.id),
                    rule: "A10.21".into(),
                });
            }
        }
        let first = dice.roll_die().ok_or(NoDice)?;
        let second = dice.roll_die().ok_or(NoDice)?;
        let original = i16::from(first) + i16::from(second);
        let final_dr = original + modifiers.iter().map(|m| i16::from(m.value)).sum::<i16>();
        let passed = final_dr <= level;
        // What the check does, and the rule for it.
        let effect: Option<(Outcome, &str)> = match (check.is_ptc(), passed, unit.morale) {
            (_, true, _) => None,
            (true, false, _) if unit.pinned => None,
            (true, false, _) => Some((Outcome::Pin, "A7.8")),
            (false, false, Morale::GoodOrder) => Some((Outcome::Break, "A10.1")),
            (false, false, _) => None, // broken already: left to the players below
        };
        let words = match (&effect, passed) {
            (Some((Outcome::Pin, _)), _) => "pinned",
            (Some(_), _) => "broken",
            (None, true) => "passed",
            (None, false) if check.is_ptc() => "failed (pinned already)",
            (None, false) => "failed",
        };
        // The fire log's line: "4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken".
        let drms = crate::game::dice::signed_drms(&modifiers);
        let name = if check.is_ptc() {
            "PTC".to_string()
        } else {
            result.to_string()
        };
        let line = format!(
            "{} `{id}` {name}: morale {level}, DR {original}{drms} → {words}",
            unit.ratings
        );
        events.push(Event::DiceRolled {
            roll: Roll {
                // The firer's command rolls the checks its attack calls for: the log's rolls
                // name the side whose command made them (`record::export` checks it).
                side: by,
                purpose: check.purpose,
                rule: check.rule.into(),
                first_draw: draw,
                dice: vec![first, second],
                modifiers,
                final_result: final_dr,
                outcome: line.clone(),
            },
        });
        draw += 2;
        if let Some((outcome, rule)) = effect {
            events.push(Event::FireEffectApplied {
                unit: id.clone(),
                outcome,
                rule: rule.into(),
                why: line,
            });
        }
        if check.is_ptc() {
            continue;
        }
        // What the engine does not rule on, asked where it arises.
        if original == 2 {
            events.push(left(
                Some(id),
                "A15",
                format!("`{id}` rolled an Original 2 on its MC: Heat of Battle is the players' to resolve"),
            ));
        }
        if !passed {
            if unit.kind == UnitKind::Leader {
                fallen.insert(id.clone());
            }
            if unit.morale == Morale::Broken {
                events.push(left(
                    Some(id),
                    "A10.2",
                    format!("`{id}` was broken already and failed its MC: its Casualty Reduction (A7.302) is the players' to enter"),
                ));
            } else {
                events.push(left(
                    Some(id),
                    "A19.13",
                    format!("`{id}` failed its MC by {}: whether it is replaced for failing by more than its side's ELR is the players' to rule (ELR is not modelled)", final_dr - level),
                ));
                if unit.kind == UnitKind::Leader {
                    events.push(left(
                        Some(id),
                        "A10.2",
                        format!("`{id}` broke: the Leader Loss checks of lower-morale units in his Location are the players' to roll"),
                    ));
                }
            }
        } else if final_dr == level && !unit.pinned {
            events.push(left(
                Some(id),
                "A7.8",
                format!("`{id}` passed its MC with a Final DR equal to its morale: whether that pins it rests on one source, not two, so it is the players' to rule"),
            ));
        }
    }
    Ok(events)
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
        assert!(Check::of(IftResult::Kia(1)).is_none());
    }
}
