//! Fortifications as the rules read them (B9.32, B9.33, B27): which one a unit is in, what
//! that keeps it from, and what the engine does not model about them — refused as such.

use crate::violation::{pieces, Piece};
use board::terrain::Fortification;
use game::{Game, Unit};

/// The entrenchment `unit` is beneath, if any (B27).
pub(crate) fn entrenched_in(game: &Game, unit: &Unit) -> Option<Fortification> {
    if !unit.placement.entrenched {
        return None;
    }
    let forts = &game.scenario.hexes.get(&unit.hex)?.fortifications;
    [Fortification::Foxhole, Fortification::Trench]
        .into_iter()
        .find(|f| forts.contains(f))
}

/// Why B9.32 keeps `unit` from WA because of where it is among fortifications, or Column/
/// Convoy status; `None` when nothing there does.
pub(crate) fn wa_exclusion(game: &Game, unit: &Unit) -> Option<String> {
    let p = unit.placement;
    if let Some(e) = entrenched_in(game, unit) {
        return Some(format!(
            "it is beneath a {} ({})",
            e.row().name,
            e.row().rule
        ));
    }
    if p.in_pillbox {
        return Some("it is in a pillbox".into());
    }
    if p.above_wire {
        return Some("it is above Wire/Panji".into());
    }
    if p.column {
        return Some("it is in Column/Convoy".into());
    }
    None
}

/// The fortification whose TEM the engine would need for `unit` and does not have: a trench,
/// a pillbox, Wire/Panji, or a bridge against Direct Fire (the chart gives none of these).
pub(crate) fn unmodelled_tem(game: &Game, unit: &Unit, indirect: bool) -> Option<Fortification> {
    let p = unit.placement;
    let trench = entrenched_in(game, unit).filter(|f| f.row().tem.is_none());
    trench
        .or(p.in_pillbox.then_some(Fortification::Pillbox))
        .or(p.above_wire.then(|| {
            let forts = &game.scenario.hexes[&unit.hex].fortifications;
            if forts.contains(&Fortification::Wire) {
                Fortification::Wire
            } else {
                Fortification::Panji
            }
        }))
        .or((p.on_bridge && !indirect).then_some(Fortification::Bridge))
}

/// Movement the engine does not rule on among fortifications, refused as not modelled rather
/// than played as if they were not there: leaving a place in one (the chart's 1 MF to leave a
/// foxhole is a step of its own the engine has no command for; the others have no figure) and
/// Column/Convoy movement. Every command that takes a unit out of its Location asks this.
pub(crate) fn check_leave(
    game: &Game,
    units: &[&Unit],
) -> Result<(), crate::violation::RuleViolation> {
    for unit in units {
        let p = unit.placement;
        if let Some(e) = entrenched_in(game, unit) {
            return not_modelled(
                e.row().rule,
                pieces![
                    Piece::unit(&unit.id),
                    format!(
                        " is beneath a {}; leaving it ({}) is not a step the engine plays",
                        e.row().name,
                        e.row()
                            .enter_exit
                            .map_or("no figure on the chart".into(), |m| format!("{m} MF"))
                    )
                ],
            );
        }
        let place = if p.in_pillbox {
            Some(Fortification::Pillbox)
        } else if p.on_bridge {
            Some(Fortification::Bridge)
        } else if p.above_wire {
            Some(Fortification::Wire)
        } else {
            None
        };
        if let Some(f) = place {
            return not_modelled(
                f.row().rule,
                pieces![
                    Piece::unit(&unit.id),
                    format!(" moving from its {}", f.row().name)
                ],
            );
        }
        if p.column {
            return not_modelled(
                "E11",
                pieces![Piece::unit(&unit.id), " moving in Column/Convoy"],
            );
        }
    }
    Ok(())
}

/// The fortification of `hex` the engine has no figures for entering or being placed at
/// (`board::setup::unmodelled_fortification`, the one list the scenario loader's room
/// check reads too).
pub(crate) fn unmodelled_in(game: &Game, hex: board::hex::Hex) -> Option<Fortification> {
    board::setup::unmodelled_fortification(game.scenario.hexes.get(&hex)?)
}

/// Entering a hex with Wire, Panji, a pillbox or a bridge: the engine has no figures for it,
/// so every command that would put a unit there refuses it as not modelled.
pub fn check_enter(
    game: &Game,
    to: board::hex::Hex,
) -> Result<(), crate::violation::RuleViolation> {
    match unmodelled_in(game, to) {
        Some(f) => not_modelled(
            f.row().rule,
            pieces![format!("entering {to}, which holds a {}", f.row().name)],
        ),
        None => Ok(()),
    }
}

fn not_modelled(rule: &str, why: Vec<Piece>) -> Result<(), crate::violation::RuleViolation> {
    use crate::violation::{RuleViolation, ViolationKind};
    Err(RuleViolation::with(
        rule,
        ViolationKind::NotModelled,
        pieces!["not modelled: ", why],
    ))
}
