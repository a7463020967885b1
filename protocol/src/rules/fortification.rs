//! Fortifications as the rules read them (B9.32, B9.33, B27): which one a unit is in, what
//! that keeps it from, and what the engine does not model about them — refused as such.

use crate::board::terrain::Fortification;
use crate::game::{Game, Unit};

/// The entrenchment `unit` is beneath, if any (B27).
pub fn entrenched_in(game: &Game, unit: &Unit) -> Option<Fortification> {
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
pub fn wa_exclusion(game: &Game, unit: &Unit) -> Option<String> {
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
pub fn unmodelled_tem(game: &Game, unit: &Unit, indirect: bool) -> Option<Fortification> {
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
