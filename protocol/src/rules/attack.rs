//! `DeclareAttack` / `ResolveAttack`: the engine does not compute fire, but the rules care
//! when it happens — no WA in the target hex may change between an attack's declaration and
//! its resolution (B9.322). The outcome itself is entered with `Adjudicate`.

use super::own_unit;
use crate::event::Event;
use crate::game::Game;
use crate::hex::Hex;
use crate::phase::Phase;
use crate::scenario::{Side, UnitId};
use crate::violation::{RuleViolation, ViolationKind};

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
            return Err(RuleViolation::new(
                "A7",
                ViolationKind::UnitState,
                format!("`{id}` is broken and cannot fire"),
            ));
        }
    }
    if !game.units_in(target).any(|u| u.side != by && !u.hidden) {
        return Err(RuleViolation::new(
            "A7",
            ViolationKind::Geometry,
            format!("no enemy unit in {target} to fire at"),
        ));
    }
    Ok(vec![Event::AttackDeclared {
        by,
        firers: firers.to_vec(),
        target,
    }])
}

pub(super) fn resolve(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    match &game.attack {
        Some(a) if a.by == by => Ok(vec![Event::AttackResolved {
            by,
            target: a.target,
        }]),
        _ => Err(RuleViolation::new(
            "A7",
            ViolationKind::WrongPhase,
            "this side has no declared attack to resolve",
        )),
    }
}
