//! `DeclareAttack` / `ResolveAttack`: the engine does not compute fire, but the rules care
//! when it happens — no WA in the target hex may change between an attack's declaration and
//! its resolution (B9.322). An attack the engine resolves by the rules has its effects
//! applied by `rules::morale`; any other outcome is entered with `Adjudicate`.

use super::own_unit;
use crate::board::hex::Hex;
use crate::board::scenario::{Side, UnitId};
use crate::game::dice::DiceSource;
use crate::game::event::Event;
use crate::game::phase::Phase;
use crate::game::{Emergence, Game, Underground};
use crate::rules::fire::resolution;
use crate::rules::morale;
use crate::rules::violation::{pieces, Piece, RuleViolation, ViolationKind};

/// Which side fires in which phase: the ATTACKER in its PFPh and AFPh, the DEFENDER in the
/// MPh (Defensive First Fire) and DFPh.
fn fires_now(game: &Game, by: Side) -> bool {
    let attacker = game.attacker() == by;
    match game.clock.phase() {
        Phase::PrepFire | Phase::AdvancingFire => attacker,
        Phase::Movement | Phase::DefensiveFire => !attacker,
        _ => false,
    }
}

pub(super) fn declare(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    target: Hex,
    into_sewer: bool,
) -> Result<Vec<Event>, RuleViolation> {
    if !fires_now(game, by) {
        return Err(RuleViolation::new(
            game.clock.phase().rule(),
            ViolationKind::WrongPhase,
            format!(
                "the {} does not fire in the {}",
                game.side_name(by),
                game.clock.phase()
            ),
        ));
    }
    if let Some(a) = &game.attack {
        return Err(RuleViolation::new(
            "B9.322",
            ViolationKind::WrongPhase,
            format!("the attack on {} must be resolved first", a.target),
        ));
    }
    if firers.is_empty() {
        return Err(RuleViolation::new(
            "A7",
            ViolationKind::UnknownUnit,
            "name the firing units",
        ));
    }
    for id in firers {
        let unit = own_unit(game, by, id)?;
        if !unit.is_good_order() {
            return Err(RuleViolation::with(
                "A7",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " is broken and cannot fire"],
            ));
        }
        check_line_of_fire(game, unit, target, into_sewer)?;
    }
    let targets = |u: &&crate::game::Unit| {
        u.side != by
            && !u.hidden
            && match u.underground {
                Some(Underground::Sewer { .. }) => into_sewer,
                Some(Underground::Tunnel) => false, // never attacked (B8.6)
                None => !into_sewer,
            }
    };
    let seen = into_sewer || sees(game, firers, target, &targets);
    if !game.units_in(target).any(|u| targets(&u)) {
        return Err(RuleViolation::new(
            if into_sewer { "B8.3" } else { "A7" },
            ViolationKind::Geometry,
            format!(
                "no enemy unit {} {target} to fire at",
                if into_sewer {
                    "in the sewer beneath"
                } else {
                    "in"
                }
            ),
        ));
    }
    let declared = Event::AttackDeclared {
        by,
        firers: firers.to_vec(),
        target,
        into_sewer,
    };
    if !seen {
        // A6.11: the LOS check after the declaration shows no LOS. The attack is not made,
        // but the declaring units still count as having fired for everything (a unit that
        // did so in its PFPh does not move, A4.1): declared, and over at once.
        return Ok(vec![declared, Event::AttackResolved { by, target }]);
    }
    Ok(vec![declared])
}

/// Who may fire at what below ground (B8.2, B8.3, B8.43, B8.6): nobody in a tunnel fires or is
/// fired on; fire into a sewer comes only from units with a LOS to it — in the Manhole above a
/// discovered stack, or in an adjacent sewer Location — and never from a vehicle; a sewer
/// unit fires at the Manhole above it only in the AFPh after being discovered.
fn check_line_of_fire(
    game: &Game,
    firer: &crate::game::Unit,
    target: Hex,
    into_sewer: bool,
) -> Result<(), RuleViolation> {
    let refuse =
        |rule: &str, why: Vec<Piece>| Err(RuleViolation::with(rule, ViolationKind::Geometry, why));
    let id = &firer.id;
    match (&firer.underground, into_sewer) {
        (Some(Underground::Tunnel), _) => refuse(
            "B8.6",
            pieces![Piece::unit(id), " is in a tunnel and sees no enemy unit"],
        ),
        (Some(Underground::Sewer { emergence, .. }), false) => {
            let allowed = firer.hex == target
                && game.clock.phase() == Phase::AdvancingFire
                && *emergence == Some(Emergence::Discovered);
            if allowed {
                Ok(())
            } else {
                refuse(
                    "B8.43",
                    pieces![Piece::unit(id), " in the sewer may attack only the Manhole Location above it, in the AFPh, after being discovered"],
                )
            }
        }
        (Some(Underground::Sewer { .. }), true) => {
            if game.scenario.geometry().is_adjacent(firer.hex, target) {
                Ok(())
            } else {
                refuse(
                    "B8.2",
                    pieces![Piece::unit(id), " sees only adjacent sewer Locations"],
                )
            }
        }
        (None, true) => {
            if firer.kind == crate::board::scenario::UnitKind::Vehicle {
                return refuse(
                    "B8.3",
                    pieces![
                        Piece::unit(id),
                        " is a vehicle; vehicles never fire into a sewer"
                    ],
                );
            }
            let discovered = game.units_in(target).any(|u| {
                matches!(
                    u.underground,
                    Some(Underground::Sewer {
                        emergence: Some(Emergence::Discovered),
                        ..
                    })
                )
            });
            if firer.hex == target && discovered {
                Ok(())
            } else {
                refuse(
                    "B8.3",
                    pieces![Piece::unit(id), format!(" has no LOS into the sewer beneath {target}: only units in the Manhole above a discovered stack, or in an adjacent sewer Location, have one")],
                )
            }
        }
        (None, false) => Ok(()),
    }
}

/// A6.11: whether each firer has a LOS to an enemy unit it attacks in the target hex, traced
/// by the engine (`rules::los`). The LOS is checked only once the attack is declared; without
/// one the attack is not made, but the declaring units have still fired (`declare`).
fn sees(
    game: &Game,
    firers: &[UnitId],
    target: Hex,
    targets: &dyn Fn(&&crate::game::Unit) -> bool,
) -> bool {
    use crate::board::los::{LosMap, Verdict};
    use crate::rules::los::{verdict_on, Spot};
    let enemies: Vec<&crate::game::Unit> = game.units_in(target).filter(|u| targets(u)).collect();
    if enemies.is_empty() {
        return true; // refused for want of a target
    }
    let map = LosMap::of(&game.scenario);
    // Below ground, B8.2/B8.43 alone say who sees what (`check_line_of_fire`).
    firers
        .iter()
        .filter(|id| game.units.get(*id).is_some_and(|u| u.underground.is_none()))
        .all(|id| {
            let firer = Spot::Unit(id.clone());
            enemies.iter().any(|e| {
                verdict_on(game, map, &firer, &Spot::Unit(e.id.clone()))
                    .is_ok_and(|v| v != Verdict::Blocked)
            })
        })
}

/// Ends the side's declared attack. Where everything the attack needs is modelled, the engine
/// resolves it by the rules first (`fire::resolution`): the DR through the game's dice, logged
/// with its FP, column, DRMs and IFT result (A7.3). Otherwise it says why the outcome is the
/// players' to adjudicate (A7). Every check comes before the first die.
pub(super) fn resolve(
    game: &Game,
    by: Side,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let Some(a) = game.attack.as_ref().filter(|a| a.by == by) else {
        return Err(RuleViolation::new(
            "A7",
            ViolationKind::WrongPhase,
            "this side has no declared attack to resolve",
        ));
    };
    let resolved = Event::AttackResolved {
        by,
        target: a.target,
    };
    match resolution::assess(game, by, &a.firers, a.target, a.into_sewer) {
        Err(unruled) => Ok(vec![
            Event::AttackLeftToPlayers {
                by,
                target: a.target,
                rule: unruled.rule.to_string(),
                why: unruled.why,
            },
            resolved,
        ]),
        Ok(assessment) => {
            let fired = resolution::roll(game, by, &assessment, dice)
                .ok_or_else(|| no_dice("the attack"))?;
            let read = Event::IftAttackResolved {
                by,
                target: a.target,
                fp: assessment.fp_words(),
                column: fired.column.fp(),
                cowered: fired.cowered,
                final_dr: fired.roll.final_result,
                result: fired.result.to_string(),
            };
            // The result's effects on the units fired on (`rules::morale`), their checks
            // rolled on after the IFT's dice.
            let first_draw = fired.roll.first_draw + fired.roll.dice.len() as u64;
            let effects = morale::fire_effects(game, by, a.target, fired.result, first_draw, dice)
                .map_err(|_| no_dice("the morale checks"))?;
            let mut events = vec![Event::DiceRolled { roll: fired.roll }, read];
            events.extend(effects);
            events.push(resolved);
            Ok(events)
        }
    }
}

/// Offline the dice are the script's: none left for what the resolution must roll.
fn no_dice(what: &str) -> RuleViolation {
    RuleViolation::new(
        "docs/dice.md",
        ViolationKind::NoDice,
        format!("no dice: offline, add a `dice` line with enough faces for {what} before resolving the attack"),
    )
}
