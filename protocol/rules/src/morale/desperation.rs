//! Desperation Morale (A10.62): the DM counter on a broken unit, tracked by the engine so the
//! rally's +4 and the right to rout come from the state, not from a player's word.
//!
//! A unit comes under DM (`DesperationMoraleMarked`, both sides see the counter):
//! - when it breaks (a failed MC, a KIA's survivors, an adjudicated break alike);
//! - when, already broken, it is attacked by fire that could inflict at least an NMC on it,
//!   Cowering taken into account (`attacked`, called by the one attack path);
//! - whenever a Known armed enemy unit is ADJACENT to it, even for a moment;
//! - when it begins a RtPh in Open Ground in the LOS and normal range of a Known Good Order
//!   enemy (A10.531, read as the rout rules read it).
//!
//! It leaves DM (`DesperationMoraleRemoved`) at the end of an RPh unless a Known armed enemy
//! unit is ADJACENT to it, and whenever it is no longer broken (rallied, eliminated).
//!
//! Sources (the A10.62 row of `docs/rules-coverage.md`): **[GSDM]** a GameSquad thread
//! ("Mandatory to lose DM in bamboo?") that quotes A10.62 itself — the breaking, the attack
//! that could inflict an NMC (Cowering considered), the ADJACENT Known armed enemy "even if it
//! does not end the phase ADJACENT", the RtPh begun in Open Ground — and asks whether a unit
//! with no Known enemy ADJACENT must lose DM at its RPh's end; **[C1664]** a French players'
//! forum thread (forum.cote1664.net, topic 3822): a unit that breaks gets a DM counter, which
//! goes in the next RPh; a still-broken unit gets it again when an enemy comes adjacent, when
//! it begins the RtPh in the open in an enemy's normal range, or when it is fired on; only DM
//! units may rout; **[ASLP]** asl-players.net's Starter Kit example of the RPh, whose last act
//! is removing DM counters, and its glossary entry (+4 to rally).

use crate::fire::ift::{self, IftResult};
use crate::fire::resolution::Assessment;
use crate::movement::rout;
use board::hex::Hex;
use board::scenario::{Morale, Side, UnitId};
use game::command::Outcome;
use game::event::Event;
use game::event::{
    DesperationMoraleMarked, DesperationMoraleRemoved, FireEffectApplied, OutcomeAdjudicated,
    StepEnded, StepPassed,
};
use game::phase::Phase;
use game::{Game, Unit};

/// The DRM Desperation Morale adds to a rally DR (A10.62).
pub(crate) const RALLY_DRM: i8 = 4;

/// A broken unit that may come under DM and whose counter the opponent sees: on the map, above
/// ground, neither hidden nor under "?", not under DM already.
fn eligible(unit: &Unit) -> bool {
    unit.morale == Morale::Broken
        && !unit.eliminated
        && !unit.hidden
        && !unit.concealed
        && unit.underground.is_none()
        && !unit.desperation
}

/// Whether a Known armed enemy unit is ADJACENT to `unit` (read, as the rout rules read it, as
/// within one hex: its own hex included).
fn enemy_adjacent(game: &Game, unit: &Unit) -> bool {
    let geometry = game.scenario.geometry();
    rout::known_enemies(game, unit.side)
        .any(|e| geometry.distance(unit.hex, e.hex).is_some_and(|d| d <= 1))
}

/// Whether an assessed attack could inflict at least an NMC on its target (A10.62): its best
/// rolls read so. The lowest Original DR, 2, is doubles, which cower unless a leader directs
/// (A7.9); the next, 3, is not. Results weaken as the DR rises, so those two decide.
pub(crate) fn could_inflict_nmc(a: &Assessment) -> bool {
    let drm: i16 = a.drms.iter().map(|m| i16::from(m.value)).sum();
    let at_least_nmc = |r: IftResult| !matches!(r, IftResult::NoEffect | IftResult::Ptc);
    let doubles = if !a.cowers() {
        Some(a.column)
    } else {
        a.column.left(a.cower_columns)
    };
    doubles.is_some_and(|c| at_least_nmc(ift::result(c, 2 + drm)))
        || at_least_nmc(ift::result(a.column, 3 + drm))
}

/// The broken units of `by`'s enemy in `target`'s Location that an attack there puts under DM
/// (A10.62): every one it strikes (`Assessment::fired_on`), when it could inflict at least an
/// NMC. The one attack path
/// calls it for every attack the engine reads on the IFT.
pub fn attacked(game: &Game, by: Side, target: Hex, a: &Assessment) -> Option<Event> {
    if !could_inflict_nmc(a) {
        return None;
    }
    let units: Vec<UnitId> = game
        .units_above(target)
        .filter(|u| u.side != by && a.fired_on.contains(&u.id) && eligible(u))
        .map(|u| u.id.clone())
        .collect();
    (!units.is_empty()).then(|| {
        Event::DesperationMoraleMarked(DesperationMoraleMarked {
            units,
            why: format!("attacked in {target} while broken by fire that could inflict an NMC"),
        })
    })
}

/// What A10.62 makes of a command's events, read on the game after them (`after`): the units
/// that came under DM or left it. Appended by `decide` after every command, so no occasion is
/// missed whichever command brought it about.
pub fn consequences(after: &Game, events: &[Event]) -> Vec<Event> {
    let mut out = vec![];
    let mut marked: Vec<UnitId> = vec![];
    let mut mark = |out: &mut Vec<Event>, units: Vec<UnitId>, why: &str| {
        let units: Vec<UnitId> = units.into_iter().filter(|u| !marked.contains(u)).collect();
        if !units.is_empty() {
            marked.extend(units.iter().cloned());
            out.push(Event::DesperationMoraleMarked(DesperationMoraleMarked {
                units,
                why: why.to_string(),
            }));
        }
    };
    // No longer broken (rallied, eliminated): the counter goes with the broken side. A unit
    // the opponent sees only as "?" (a router gone down a tunnel, B8.62) keeps its counter
    // until it is seen again, so no event tells what the "?" is.
    let shown = |u: &&Unit| !u.hidden && !u.concealed;
    let gone: Vec<UnitId> = after
        .units
        .values()
        .filter(shown)
        .filter(|u| u.desperation && (u.morale != Morale::Broken || u.eliminated))
        .map(|u| u.id.clone())
        .collect();
    if !gone.is_empty() {
        out.push(Event::DesperationMoraleRemoved(DesperationMoraleRemoved {
            units: gone,
            why: "no longer a broken unit".into(),
        }));
    }
    // The RPh ends by a side's `done`, or by its last step passing by itself (B9.322).
    let rally_ended = events.iter().any(|e| {
        matches!(e, Event::StepEnded(StepEnded { ended, next, .. }) | Event::StepPassed(StepPassed { ended, next })
            if ended.phase() == Phase::Rally && next.phase() != Phase::Rally)
    });
    if rally_ended {
        let lifted: Vec<UnitId> = after
            .units
            .values()
            .filter(shown)
            .filter(|u| {
                u.desperation
                    && u.morale == Morale::Broken
                    && !u.eliminated
                    && !enemy_adjacent(after, u)
            })
            .map(|u| u.id.clone())
            .collect();
        if !lifted.is_empty() {
            out.push(Event::DesperationMoraleRemoved(DesperationMoraleRemoved {
                units: lifted,
                why: "the RPh ended with no Known armed enemy unit ADJACENT".into(),
            }));
        }
    }
    let broke: Vec<UnitId> = events
        .iter()
        .filter_map(|e| match e {
            Event::FireEffectApplied(FireEffectApplied {
                unit,
                outcome: Outcome::Break,
                ..
            })
            | Event::OutcomeAdjudicated(OutcomeAdjudicated {
                unit,
                outcome: Outcome::Break,
                ..
            }) => Some(unit.clone()),
            _ => None,
        })
        .filter(|id| after.units.get(id).is_some_and(eligible))
        .collect();
    mark(&mut out, broke, "broke");
    let adjacent: Vec<UnitId> = after
        .units
        .values()
        .filter(|u| eligible(u) && enemy_adjacent(after, u))
        .map(|u| u.id.clone())
        .collect();
    mark(
        &mut out,
        adjacent,
        "broken with a Known armed enemy unit ADJACENT",
    );
    let rout_began = events.iter().any(|e| {
        matches!(e, Event::StepEnded(StepEnded { ended, next, .. })
            if ended.phase() != Phase::Rout && next.phase() == Phase::Rout)
    });
    if rout_began {
        let exposed: Vec<UnitId> = after
            .units
            .values()
            .filter(|u| eligible(u) && !rout::exposed_to(after, &u.id).is_empty())
            .map(|u| u.id.clone())
            .collect();
        mark(
            &mut out,
            exposed,
            "began the RtPh broken in Open Ground in the LOS and normal range of a Known Good Order enemy unit",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fire::ift::IftColumn;
    use crate::fire::resolution::FireKind;
    use game::dice::Modifier;

    fn assessment(fp: u8, drm: i8, directed: bool) -> Assessment {
        Assessment {
            target: "A1".parse().unwrap(),
            fired_on: vec![],
            shares: vec![],
            column: IftColumn::exactly(fp).unwrap(),
            drms: if drm == 0 {
                vec![]
            } else {
                vec![Modifier {
                    value: drm,
                    reason: "test".into(),
                    rule: "B13".into(),
                }]
            },
            directed,
            by_leader: false,
            cower_columns: 1,
            kind: FireKind::Prep,
            breakdowns: vec![],
            rofs: vec![],
            concealed: None,
        }
    }

    #[test]
    fn an_attack_puts_a_broken_unit_under_dm_only_if_an_nmc_is_possible() {
        // 1 FP +1: doubles cower off the table, but a DR of 3 reads 3+1 = 4 on the 1 column,
        // an NMC.
        assert!(could_inflict_nmc(&assessment(1, 1, false)));
        // 1 FP +2: 3+2 = 5 is a PTC at best, and the doubles cower away; directed by a leader
        // they do not cower, and 2+2 = 4 is an NMC.
        assert!(!could_inflict_nmc(&assessment(1, 2, false)));
        assert!(could_inflict_nmc(&assessment(1, 2, true)));
        assert!(!could_inflict_nmc(&assessment(1, 3, true)));
        // 2 FP +3: cowered to the 1 column 2+3 = 5 is a PTC, uncowered 3+3 = 6 on the 2
        // column a PTC too.
        assert!(!could_inflict_nmc(&assessment(2, 3, false)));
        // 2 FP +2: 3+2 = 5 on the 2 column is an NMC.
        assert!(could_inflict_nmc(&assessment(2, 2, false)));
    }
}
