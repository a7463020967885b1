//! Loss of "?" (A12.14) by the acts the engine rules: a Close Combat attack (A11.19,
//! `close_combat`), fire (`attack::declare`), an attack on the IFT with an effect on the units
//! under "?" (`attack::resolve`, `lost_to_attack`) and a Bypass gone round the Location as the
//! MPh ends (A4.33, `lost_by_bypass`). Each shows the enemy the units it reveals through `shown`,
//! so a revealed unit reaches the enemy whole, at the event that reveals it.

use crate::los;
use board::hex::Hex;
use board::los::LosMap;
use board::scenario::{Side, UnitId, UnitKind};
use game::event::{ConcealmentLostByBypass, ConcealmentLostByFire, ConcealmentLostToAttack, Event};
use game::{Game, Unit};

/// The units of `ids` under "?" as both sides see them once revealed: the one form every
/// event that reveals a concealed unit carries.
pub(crate) fn shown<'a>(game: &Game, ids: impl IntoIterator<Item = &'a UnitId>) -> Vec<Unit> {
    ids.into_iter()
        .filter_map(|id| game.units.get(id))
        .filter(|u| u.concealed)
        .map(|u| {
            let mut shown = u.clone();
            shown.concealed = false;
            shown
        })
        .collect()
}

/// A12.14 (as sourced, docs/rules-coverage.md): a concealed unit of `by` that fires — its own
/// FP, a SW it possesses, or directing the attack (`shooters`) — loses its "?" if a Good Order
/// enemy ground unit has a LOS to it. The enemy units counted are those `by` sees as what they
/// are: above ground, neither hidden nor under "?" (a Dummy is no unit that sees). Counting a
/// hidden or concealed one would tell `by`, by the reveal or its absence, what its own
/// projection does not show (a HIP unit there; a real unit rather than a Dummy under a "?").
/// A firer below ground keeps its "?" (B8 LOS is not traced from a sewer for this).
pub(crate) fn lost_by_fire(game: &Game, by: Side, shooters: &[UnitId]) -> Option<Event> {
    let concealed: Vec<&Unit> = shooters
        .iter()
        .filter_map(|id| game.units.get(id))
        .filter(|u| u.side == by && u.concealed && u.underground.is_none())
        .collect();
    if concealed.is_empty() {
        return None;
    }
    let watchers: Vec<&Unit> = game
        .units
        .values()
        .filter(|u| {
            u.side != by
                && u.is_good_order()
                && !u.hidden
                && !u.concealed
                && u.kind != UnitKind::Dummy
                && u.underground.is_none()
        })
        .collect();
    if watchers.is_empty() {
        return None;
    }
    let map = LosMap::of(&game.scenario);
    let seen: Vec<&UnitId> = concealed
        .iter()
        .filter(|c| watchers.iter().any(|w| los::sees(game, map, &w.id, &c.id)))
        .map(|c| &c.id)
        .collect();
    let revealed = shown(game, seen);
    (!revealed.is_empty()).then(|| Event::ConcealmentLostByFire(ConcealmentLostByFire { revealed }))
}

/// A4.33: enemy units under "?" in the Location of a hex a unit went round in Bypass lose it at
/// the end of the moving unit's MPh — called by the `done` that ends the MPh, before the step
/// ends. Those `UnitBypassed` recorded (`MovementRecord::bypassed_concealed`) and still under
/// "?" now: one that lost it meanwhile (by firing, A12.14; by an entry into its Location,
/// A12.15) or was eliminated is passed over. The loss is the Bypass's and its timing the
/// MPh's end: a mover eliminated or broken since (by the Residual FP it went round in, say)
/// still costs the enemy its "?", A4.33 naming no such condition. Real units are shown whole,
/// Dummies removed, as an entry finds them (A12.15).
pub(crate) fn lost_by_bypass(game: &Game) -> Option<Event> {
    let due: Vec<&Unit> = game
        .movement
        .bypassed_concealed
        .iter()
        .filter_map(|id| game.units.get(id))
        .filter(|u| u.concealed && !u.hidden && !u.eliminated)
        .collect();
    if due.is_empty() {
        return None;
    }
    let (dummies, real): (Vec<&Unit>, Vec<&Unit>) =
        due.into_iter().partition(|u| u.kind == UnitKind::Dummy);
    Some(Event::ConcealmentLostByBypass(ConcealmentLostByBypass {
        revealed: shown(game, real.iter().map(|u| &u.id)),
        dummies_removed: dummies.iter().map(|u| u.id.clone()).collect(),
    }))
}

/// A12.14: concealed units attacked on the IFT with a result other than no effect (a PTC or
/// worse) lose their "?" when a Good Order enemy ground unit sees them, whatever the range:
/// here the attack's own firers, who see their target (an attack is made only along a LOS) and
/// are Good Order (a broken unit does not fire; a berserk one's fire is not resolved by the
/// engine). Called by the attack's resolution once the IFT has read the result and before its
/// checks, so the units take them revealed. Real units are shown whole, Dummies removed, as an
/// entry finds them (A12.15). `fired_on` are the units the attack struck; those not under "?"
/// are passed over.
pub(crate) fn lost_to_attack(game: &Game, target: Hex, fired_on: &[UnitId]) -> Option<Event> {
    let concealed: Vec<&Unit> = fired_on
        .iter()
        .filter_map(|id| game.units.get(id))
        .filter(|u| u.concealed && !u.hidden && !u.eliminated)
        .collect();
    if concealed.is_empty() {
        return None;
    }
    let (dummies, real): (Vec<&Unit>, Vec<&Unit>) = concealed
        .into_iter()
        .partition(|u| u.kind == UnitKind::Dummy);
    Some(Event::ConcealmentLostToAttack(ConcealmentLostToAttack {
        target,
        revealed: shown(game, real.iter().map(|u| &u.id)),
        dummies_removed: dummies.iter().map(|u| u.id.clone()).collect(),
    }))
}
