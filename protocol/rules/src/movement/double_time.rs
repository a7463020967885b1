//! `DoubleTime`: Infantry trade fatigue for speed — +1 MF for the rest of the MPh, at the
//! price of becoming CX (A4.5). A unit already CX cannot do it again (A4.51).

use super::{allotment, movers};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::{Side, UnitId, UnitKind};
use game::event::{AssaultMovementDeclared, DoubleTimeDeclared};
use game::event::{Event, MfAccount};
use game::Game;

pub(crate) fn decide(game: &Game, by: Side, ids: &[UnitId]) -> Result<Vec<Event>, RuleViolation> {
    let units = movers(game, by, ids, "units declare Double Time")?;
    for unit in &units {
        let refusal = match unit.kind {
            UnitKind::Vehicle => Some((
                "A4.5",
                ViolationKind::UnitState,
                "is a vehicle; only Infantry Double Time",
            )),
            _ if unit.double_time => Some((
                "A4.5",
                ViolationKind::UnitState,
                "has declared Double Time already this MPh",
            )),
            _ if unit.assault_moving => Some((
                "A4.61",
                ViolationKind::UnitState,
                "has declared Assault Movement, which is not Double Time",
            )),
            _ if unit.wounded => Some((
                "A17.2",
                ViolationKind::UnitState,
                "is wounded, and a wounded man cannot Double Time",
            )),
            _ if unit.cx => Some((
                "A4.51",
                ViolationKind::UnitState,
                "is CX (exhausted) and cannot Double Time",
            )),
            _ => None,
        };
        if let Some((rule, kind, why)) = refusal {
            return Err(RuleViolation::with(
                rule,
                kind,
                pieces![Piece::unit(&unit.id), format!(" {why}")],
            ));
        }
    }
    let mf = units
        .iter()
        .map(|unit| {
            let mut rested = (*unit).clone();
            rested.double_time = true;
            rested.cx = true; // CX from now on, and its IPC one lower (A4.51)
            let allotment = allotment(game, &rested, ids, false, 0);
            MfAccount {
                unit: unit.id.clone(),
                allotment,
                spent: unit.mf_spent,
                left: allotment.total.saturating_sub(unit.mf_spent),
            }
        })
        .collect();
    Ok(vec![Event::DoubleTimeDeclared(DoubleTimeDeclared {
        units: ids.to_vec(),
        mf,
    })])
}

/// `AssaultMove`: Infantry that declares Assault Movement before spending any MF this MPh
/// enters one Location and keeps at least one MF, and is not Double Timing; in return First
/// Fire at it takes no FFNAM (A4.61, A4.6). Source: the ASL assistant's MPh page
/// (`docs/rules-coverage.md`, [ASLA]).
pub(crate) fn decide_assault(
    game: &Game,
    by: Side,
    ids: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    let units = movers(game, by, ids, "units declare Assault Movement")?;
    for unit in &units {
        let refusal = match unit.kind {
            UnitKind::Vehicle => Some("is a vehicle; only Infantry use Assault Movement"),
            _ if unit.assault_moving => Some("has declared Assault Movement already this MPh"),
            _ if unit.double_time => Some("is Double Timing, which is not Assault Movement"),
            _ if unit.mf_spent != board::terrain::Mf::default() => {
                Some("has spent MF already: Assault Movement is declared before the unit moves")
            }
            _ => None,
        };
        if let Some(why) = refusal {
            return Err(RuleViolation::with(
                "A4.61",
                ViolationKind::UnitState,
                pieces![Piece::unit(&unit.id), format!(" {why}")],
            ));
        }
    }
    Ok(vec![Event::AssaultMovementDeclared(
        AssaultMovementDeclared {
            units: ids.to_vec(),
        },
    )])
}
