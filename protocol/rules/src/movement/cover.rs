//! `TakeShellholeCover`: shellholes cost Open Ground's MF to enter, or their own higher cost
//! to use their +1 TEM; a unit that paid only Open Ground cost is in Open Ground against
//! Defensive First Fire (chart B2). Entering at Open Ground cost and then paying the rest in
//! the hex comes to the chart's cost, logged as its own expenditure.

use super::movers;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::{Side, UnitId};
use game::event::Event;
use game::event::ShellholeCoverTaken;
use game::Game;

pub(crate) fn decide(game: &Game, by: Side, ids: &[UnitId]) -> Result<Vec<Event>, RuleViolation> {
    let units = movers(game, by, ids, "units take shellhole cover")?;
    let mut accounts = Vec::with_capacity(units.len());
    for unit in &units {
        let refuse = |kind, why: Vec<Piece>| Err(RuleViolation::with("B2", kind, why));
        let row = game.scenario.hexes[&unit.hex].terrain.row();
        let (Some(cover), board::terrain::EntryCost::Mf(entry)) = (row.cover_cost, row.cost) else {
            return refuse(
                ViolationKind::Terrain,
                pieces![
                    Piece::unit(&unit.id),
                    format!(" is in {}, which has no cover to pay for", row.name)
                ],
            );
        };
        if unit.bypass.is_some() {
            return refuse(
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&unit.id),
                    " is in Bypass, in the open part of its hex"
                ],
            );
        }
        let entered = game.movement.moving_stack.contains(&unit.id)
            && !game.movement.finished.contains(&unit.id)
            && unit.mf_spent > board::terrain::Mf::default();
        if !entered {
            return refuse(
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&unit.id),
                    format!(
                        " did not enter {} in its current move; a unit that stays has their TEM",
                        unit.hex
                    )
                ],
            );
        }
        if unit.shellhole_cover {
            return refuse(
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&unit.id),
                    " has paid for the shellholes' cover already"
                ],
            );
        }
        let extra = cover.saturating_sub(entry);
        accounts.push(super::pay_in_place(
            game,
            unit,
            ids,
            0,
            extra,
            "A4.1",
            pieces!["shellhole cover"],
        )?);
    }
    Ok(vec![Event::ShellholeCoverTaken(ShellholeCoverTaken {
        units: ids.to_vec(),
        mf: accounts,
    })])
}
