//! Close Combat (A11), as far as the engine rules on it: which Locations are in CC at the CCPh
//! (units of both sides in one Location, A11.1), and that the CCPh does not end while one of
//! them is unsettled. Where every unit in the Location is one the engine resolves (`unresolved`),
//! the sides designate their attacks (`cc`) and the engine rolls them on the CCT (A11.11), after
//! checking for Ambush as the APh ends (`ambush_checks`, A11.4). Anywhere else the players roll
//! through the dice commitment (`roll DR CC`) and enter the results with `adjudicate`, which the
//! opponent may dispute. A Location still holding both sides after its CC is recorded as Melee
//! (`melee HEX`, A11.7), to be fought again in the next CCPh.
//!
//! Hidden units take no part in deciding which Locations are in CC: a refusal that counted them
//! would tell the ATTACKER where they are. Instead, as the APh ends, a hidden unit sharing its
//! Location with an enemy unit is placed under "?" (`hidden_in_close_combat`), and from then on
//! counts as any concealed unit does.
//!
//! Concealed units (A11.19, A12.14): the engine resolves a CC with a "?" in it where no Ambush
//! check is owed (a Melee carried on), or where the players' own check found none (the
//! ATTACKER's `no-ambush`), since concealment's Ambush drm is not sourced
//! (`concealment_unresolved`). There a "?" is looked at only where its own side names it as an
//! attacker; attacking, it loses its "?" as the CC is resolved (`ConcealmentLostInCloseCombat`),
//! and an attack on it is halved; an attack on a "?" that makes no attack of its own is the
//! players', so that nothing the enemy is told differs with what is under it. Dummies in a CC
//! Location are removed as the CCPh starts (`dummies_in_close_combat`, A11.19).

pub mod table;

use super::{require_acting, require_phase};
use crate::morale;
use crate::movement;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Morale, Side, UnitId, UnitKind};
use board::terrain::Terrain;
use game::command::{CcAttack, CcWithdrawal, Outcome};
use game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use game::event::Event;
use game::event::{
    AmbushChecked, CloseCombatDesignated, ConcealmentLostInCloseCombat, DiceRolled,
    DummiesRemovedInCloseCombat, FireEffectApplied, FireEffectLeftToPlayers, InfiltrationChosen,
    InfiltrationOffered, MeleeRecorded, UnitsWithdrew,
};
use game::phase::Phase;
use game::{CcInfiltration, Game, Unit};
use std::collections::BTreeSet;
use table::{CcColumn, CcResult};

/// The hexes with a Location where units of both sides are, as both sides' views show them
/// (hidden units left out), in hex order.
pub fn locations(game: &Game) -> Vec<Hex> {
    let present: Vec<&Unit> = game
        .units
        .values()
        .filter(|u| !u.eliminated && !u.hidden && u.underground.is_none())
        .collect();
    let mut hexes = BTreeSet::new();
    for a in &present {
        if present
            .iter()
            .any(|b| b.side != a.side && game.same_location(a, b))
        {
            hexes.insert(a.hex);
        }
    }
    hexes.into_iter().collect()
}

/// At the start of the CCPh a hidden unit in a Location where an enemy unit stands is placed
/// on board under "?" (the CCPh's first step as asl-assist.net's phase helper lists it), so
/// its Location is in CC like any other (`HiddenUnitPlaced`, as when its owner places it,
/// A12.3). Decided as the APh ends, so the CCPh starts with it.
pub(super) fn hidden_in_close_combat(game: &Game) -> Vec<Event> {
    let above = |u: &&Unit| !u.eliminated && u.underground.is_none();
    game.units
        .values()
        .filter(above)
        .filter(|h| h.hidden)
        .filter(|h| {
            game.units
                .values()
                .filter(above)
                .any(|e| e.side != h.side && !e.hidden && game.same_location(h, e))
        })
        .map(|h| crate::place::placed(game, h))
        .collect()
}

/// As the CCPh starts, the Dummies in each CC Location are removed (A11.19): a Dummy has no
/// Strength Factor to show there, so it goes before any CC is designated or Ambush checked,
/// one event per Location. Judged after hidden units are placed under "?"
/// (`hidden_in_close_combat`), whose Locations are in CC from then on; a Location whose only
/// enemy units are Dummies is in CC no longer once they are gone. What is under each "?" stays
/// hidden until this event; the real units under "?" keep theirs.
pub(super) fn dummies_in_close_combat(game: &Game) -> Vec<Event> {
    locations(game)
        .into_iter()
        .filter_map(|hex| {
            let units: Vec<&Unit> = game.units_above(hex).filter(|u| !u.hidden).collect();
            let dummies_removed: Vec<UnitId> = units
                .iter()
                .filter(|d| d.kind == UnitKind::Dummy)
                .filter(|d| {
                    units
                        .iter()
                        .any(|e| e.side != d.side && game.same_location(d, e))
                })
                .map(|d| d.id.clone())
                .collect();
            (!dummies_removed.is_empty()).then(|| {
                Event::DummiesRemovedInCloseCombat(DummiesRemovedInCloseCombat {
                    hex,
                    dummies_removed,
                })
            })
        })
        .collect()
}

/// As the APh ends, the Ambush check of each CC Location where the rule calls for one (A11.4,
/// `ambush_possible`): each side's dr through the game's dice, the ATTACKER's first, with its
/// drm (`ambush_drm`); a side whose Final dr is at least three less than the other's has
/// ambushed it (`AmbushChecked`). Locations the engine does not resolve (`unresolved`, and those
/// where a hidden unit is about to be placed under "?") are left to the players, drs and all.
pub(super) fn ambush_checks(
    game: &Game,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let mut events = vec![];
    let mut first_draw = game.dice_drawn;
    let attacker = game.attacker();
    for hex in locations(game) {
        let Some(units) = ambush_possible(game, hex) else {
            continue;
        };
        let mut finals = [0i16; 2];
        for (i, side) in [attacker, attacker.opponent()].into_iter().enumerate() {
            let own: Vec<&Unit> = units.iter().copied().filter(|u| u.side == side).collect();
            let drm = ambush_drm(&own);
            let die = dice.roll_die().ok_or_else(|| {
                RuleViolation::new(
                    "docs/dice.md",
                    ViolationKind::NoDice,
                    format!("no dice: offline, add a `dice` line with one face per side for the Ambush check in {hex} (A11.4) before the APh ends"),
                )
            })?;
            let final_result = i16::from(die) + drm.iter().map(|m| i16::from(m.value)).sum::<i16>();
            finals[i] = final_result;
            // The ATTACKER's `done` rolls both drs: each roll names the side whose command
            // made it (`record::export`), its words the side whose dr it is.
            events.push(Event::DiceRolled(DiceRolled {
                roll: Roll {
                    side: attacker,
                    purpose: RollPurpose::CloseCombat,
                    rule: "A11.4".into(),
                    first_draw,
                    dice: vec![die],
                    modifiers: drm,
                    final_result,
                    outcome: format!("Ambush dr in {hex} of the {}", game.side_name(side)),
                },
            }));
            first_draw += 1;
        }
        let ambusher = if finals[0] + 3 <= finals[1] {
            Some(attacker)
        } else if finals[1] + 3 <= finals[0] {
            Some(attacker.opponent())
        } else {
            None
        };
        events.push(Event::AmbushChecked(AmbushChecked { hex, ambusher }));
    }
    Ok(events)
}

/// The units of the CC Location of `hex` if the engine makes an Ambush check there (A11.4,
/// `ambush_ground`). Only where the engine resolves the CC itself (`unresolved`) and no unit is
/// broken: elsewhere the players check, as they roll the rest.
fn ambush_possible(game: &Game, hex: Hex) -> Option<Vec<&Unit>> {
    let units = location_units(game, hex).ok()?;
    let hidden_there = game
        .units_above(hex)
        .any(|u| u.hidden && game.same_location(u, units[0]));
    if hidden_there || unresolved(&units).is_some() || units.iter().any(|u| u.concealed) {
        return None;
    }
    if units.iter().any(|u| u.morale == Morale::Broken) {
        return None;
    }
    ambush_ground(game, hex, &units).then_some(units)
}

/// Whether the advances into the CC Location of `hex` call for an Ambush check (A11.4),
/// whatever the units' state: Infantry advanced into it this APh, into woods or a building,
/// and not into a Melee (units of both sides there that did not advance in).
fn ambush_ground(game: &Game, hex: Hex, units: &[&Unit]) -> bool {
    advanced_into(game, units)
        && game.scenario.hexes.get(&hex).is_some_and(|h| {
            matches!(
                h.terrain,
                Terrain::Woods | Terrain::StoneBuilding | Terrain::WoodenBuilding
            )
        })
}

/// Whether Infantry advanced into the CC Location of `units` this APh, and not into a Melee
/// (units of both sides there that did not advance in): what calls for an Ambush check in any
/// terrain the check is made in (A11.4).
fn advanced_into(game: &Game, units: &[&Unit]) -> bool {
    let advanced = |u: &Unit| game.movement.advanced.contains(&u.id);
    if !units.iter().any(|u| advanced(u)) {
        return false;
    }
    let stayed = |side: Side| units.iter().any(|u| u.side == side && !advanced(u));
    !(stayed(Side::A) && stayed(Side::B))
}

/// One side's Ambush drm (A11.4), each counted once for the side: +1 when any of its units
/// there is CX (A4.51), +1 when any is pinned, +1 when any is Inexperienced; and the leadership
/// DRM of its best unpinned leader there when he is not alone (with an MMC of his side).
fn ambush_drm(own: &[&Unit]) -> Vec<Modifier> {
    let mut drm = vec![];
    let mut once = |any: bool, reason: &str, rule: &str| {
        if any {
            drm.push(Modifier {
                value: 1,
                reason: reason.into(),
                rule: rule.into(),
            });
        }
    };
    once(own.iter().any(|u| u.cx), "CX", "A4.51");
    once(own.iter().any(|u| u.pinned), "pinned", "A11.4");
    once(
        own.iter().any(|u| u.inexperienced),
        "Inexperienced",
        "A11.4",
    );
    if own.iter().any(|u| u.kind != UnitKind::Leader) {
        let best = own
            .iter()
            .filter(|u| u.kind == UnitKind::Leader && !u.pinned)
            .filter_map(|l| morale::leadership_of(l).map(|d| (d, l)))
            .min_by_key(|(d, _)| *d);
        if let Some((value, l)) = best.filter(|(d, _)| *d != 0) {
            drm.push(Modifier {
                value,
                reason: format!("`{}` leads", l.id),
                rule: "A11.4".into(),
            });
        }
    }
    drm
}

/// The first Location in CC whose combat has not been settled this CCPh: one waiting for
/// the DEFENDER's designation before any other, since that is the step play waits on.
pub(super) fn unsettled(game: &Game) -> Option<Hex> {
    if let Some(hex) = game.movement.cc_designated.keys().next() {
        return Some(*hex);
    }
    locations(game)
        .into_iter()
        .find(|h| !game.movement.melee.contains(h))
}

/// The refusal of ending the CCPh while `hex` is unsettled (A11.1, A11.7): naming who is to
/// designate next when the ATTACKER has designated there already (A11.12).
pub(super) fn refuse_end(game: &Game, hex: Hex) -> RuleViolation {
    if game.movement.cc_designated.contains_key(&hex) {
        return RuleViolation::new(
            "A11.12",
            ViolationKind::UnitState,
            format!(
                "the ATTACKER has designated his CC attacks in {hex}: the {} designates its own (`cc {hex} …`, or `cc {hex} none`), which resolves the Close Combat",
                game.side_name(game.attacker().opponent())
            ),
        );
    }
    RuleViolation::new(
        "A11",
        ViolationKind::UnitState,
        format!(
            "units of both sides share {hex}: resolve its Close Combat (`cc {hex} …`, each side designating its attacks; or `roll DR CC`, then `adjudicate` the results) and, if both sides remain, record the Melee (`melee {hex}`) before the CCPh ends"
        ),
    )
}

/// That `hex` is a Location where units of both sides meet (A11.1): what `melee` and `cc` ask
/// first of the hex they name, in the same words.
fn check_cc_location(game: &Game, hex: Hex) -> Result<(), RuleViolation> {
    if !game.scenario.hexes.contains_key(&hex) {
        return Err(RuleViolation::new(
            "A11",
            ViolationKind::Geometry,
            format!("{hex} is not on this scenario's map"),
        ));
    }
    if !locations(game).contains(&hex) {
        return Err(RuleViolation::new(
            "A11.1",
            ViolationKind::UnitState,
            format!(
                "{hex} holds no units of both sides in one Location; there is no Close Combat there"
            ),
        ));
    }
    Ok(())
}

/// `Melee`: the ATTACKER, who orders the CC Locations (A11.12), records that the CC in `hex`
/// is over with units of both sides still there: they are in Melee (A11.7).
pub(super) fn decide_melee(game: &Game, by: Side, hex: Hex) -> Result<Vec<Event>, RuleViolation> {
    require_acting(
        game,
        by,
        "the ATTACKER orders the Close Combats of the CCPh (A11.12)",
    )?;
    require_phase(game, Phase::CloseCombat, "A11.7", "Melee is recorded")?;
    check_cc_location(game, hex)?;
    if game.movement.melee.contains(&hex) {
        return Err(RuleViolation::new(
            "A11.7",
            ViolationKind::UnitState,
            format!("the Melee in {hex} is recorded already this CCPh"),
        ));
    }
    if game.movement.cc_designated.contains_key(&hex) {
        return Err(refuse_end(game, hex));
    }
    Ok(vec![Event::MeleeRecorded(MeleeRecorded { hex })])
}

/// A Partial Kill's Casualty Reduction of `unit` (A11.11), by the one path it takes whatever
/// calls for it (A7.302), with what it leaves noted: eliminated, or changed (a squad's
/// half-squad, a wounded SMC). An SMC's Wound Severity dr is drawn through `draws` (A17.11).
/// `false` when nothing was ruled (a unit the engine does not reduce): its fate is the
/// players', and so is the Melee. Applied, only a half-squad's ratings may be theirs to enter.
fn reduce(
    game: &Game,
    unit: &Unit,
    why: &str,
    draws: &mut morale::Draws,
    eliminated: &mut BTreeSet<UnitId>,
    changed: &mut BTreeSet<UnitId>,
    events: &mut Vec<Event>,
) -> Result<bool, RuleViolation> {
    let reduced = morale::casualty_reduction(game, unit, "A11.11", why, draws).map_err(|_| {
        RuleViolation::new(
            "docs/dice.md",
            ViolationKind::NoDice,
            "no dice: offline, add a `dice` line with a face for the Wound Severity dr (A17.11) of an SMC reduced in CC",
        )
    })?;
    let mut applied = false;
    for event in &reduced {
        match event {
            Event::FireEffectApplied(FireEffectApplied { unit, outcome, .. }) => {
                applied = true;
                if *outcome == Outcome::Eliminate {
                    eliminated.insert(unit.clone());
                }
            }
            Event::SquadReduced(_) => applied = true,
            // A second minor wound takes nothing more (A17.3): ruled, with nothing applied.
            Event::DiceRolled(DiceRolled { roll })
                if roll.purpose == RollPurpose::WoundSeverity =>
            {
                applied = true;
            }
            _ => {}
        }
    }
    if !eliminated.contains(&unit.id) {
        changed.insert(unit.id.clone());
    }
    events.extend(reduced);
    Ok(applied)
}

/// `CloseCombat`: one side designates all its CC attacks in the Location of `hex` (A11.12),
/// the ATTACKER first. The DEFENDER's designation resolves the Location's CC: every attack's
/// DR through the game's dice, the ATTACKER's first, each read on the CCT (A11.11) from the
/// position before any of them, so both sides attack even if the other's attack eliminates
/// them (A11.1). A Location the engine does not resolve (`unresolved`) is refused with the
/// rule it would need: its players roll (`roll DR CC`) and `adjudicate` as before.
pub(super) fn decide_close_combat(
    game: &Game,
    by: Side,
    hex: Hex,
    attacks: &[CcAttack],
    withdrawals: &[CcWithdrawal],
    no_ambush: bool,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    require_phase(game, Phase::CloseCombat, "A11.1", "Close Combat is fought")?;
    check_cc_location(game, hex)?;
    if game.movement.melee.contains(&hex) || game.movement.cc_resolved.contains(&hex) {
        return Err(RuleViolation::new(
            "A11.12",
            ViolationKind::UnitState,
            format!("the Close Combat in {hex} is over for this CCPh"),
        ));
    }
    let attacker = game.attacker();
    let pending = game.movement.cc_designated.get(&hex);
    match (by == attacker, pending) {
        (true, Some(_)) => {
            return Err(RuleViolation::new(
                "A11.12",
                ViolationKind::WrongSide,
                format!(
                    "the {} has designated its attacks in {hex}; the {} designates next",
                    game.side_name(by),
                    game.side_name(attacker.opponent())
                ),
            ))
        }
        (true, None) => {
            // A11.12: one Location's CC is resolved whole before another's.
            if let Some(other) = game.movement.cc_designated.keys().next() {
                return Err(RuleViolation::new(
                    "A11.12",
                    ViolationKind::WrongSide,
                    format!(
                        "the Close Combat in {other} is resolved first: the {} designates its attacks there",
                        game.side_name(attacker.opponent())
                    ),
                ));
            }
        }
        (false, None) => {
            return Err(RuleViolation::new(
                "A11.12",
                ViolationKind::WrongSide,
                format!(
                    "the ATTACKER designates his CC attacks in {hex} first; the {} designates after him",
                    game.side_name(by)
                ),
            ))
        }
        _ => {}
    }
    let units = location_units(game, hex)?;
    // A11.4: an Ambush check with a broken unit in it is not made by the engine (its drm for a
    // broken unit rests on one source): the players check and roll it all.
    if units
        .iter()
        .any(|u| u.morale == Morale::Broken && !u.concealed)
        && ambush_ground(game, hex, &units)
    {
        return Err(RuleViolation::new(
            "A11.4",
            ViolationKind::NotModelled,
            format!("units advanced into {hex} call for an Ambush check, which the engine does not make with a broken unit there: the players check for Ambush and roll this Close Combat (`roll dr CC`, `roll DR CC`), then `adjudicate` and record the Melee if both sides remain"),
        ));
    }
    // What the engine does not resolve is said before what a designation names: a concealed
    // unit's alias would otherwise be refused as no enemy unit.
    // A new CC with a "?" in it: its Ambush check is the players' (`concealment_unresolved`),
    // and the ATTACKER's `no-ambush` is their word that it found none, after which the CC is
    // the engine's as in a Melee. Without it, or after an Ambush, the players roll it all.
    let players_ambush = concealment_unresolved(game, &units);
    if let Some(why) = &players_ambush {
        if by == attacker && !no_ambush {
            return Err(why.clone());
        }
    }
    if let Some(why) = unresolved(&units) {
        return Err(why);
    }
    check_attacks(game, by, hex, &units, attacks)?;
    check_withdrawals(game, by, hex, &units, attacks, withdrawals)?;
    check_dropped_withdraw(game, by, &units, withdrawals)?;
    check_reinforcing(game, by, hex, &units, attacks)?;
    // Both sides' withdrawals, the ATTACKER's declared with his attacks (A11.2): an attack on
    // withdrawing units has its own DRM.
    let pending_withdrawals: &[CcWithdrawal] = match pending {
        Some(_) => game
            .movement
            .cc_withdrawals
            .get(&hex)
            .map_or(&[], Vec::as_slice),
        None => &[],
    };
    // A11.41: units of the side that ambushed withdrawing decline the CC and leave before any
    // of it is resolved: nobody attacks them, so an attack on them has no withdrawal DRM (A11.2
    // names Ambush Withdrawal as its exception) and the other side's designation after theirs
    // may not name them.
    let declined: BTreeSet<UnitId> = pending_withdrawals
        .iter()
        .chain(withdrawals)
        .flat_map(|w| w.units.iter())
        .filter(|id| {
            game.units
                .get(*id)
                .is_some_and(|u| ambush_withdrawal(game, u.side, hex))
        })
        .cloned()
        .collect();
    if let Some(gone) = attacks
        .iter()
        .flat_map(|a| &a.defenders)
        .find(|d| declined.contains(*d))
    {
        return Err(RuleViolation::with(
            "A11.41",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(gone),
                " withdraws by Ambush Withdrawal before any Close Combat here is resolved: it is not attacked"
            ],
        ));
    }
    let withdrawing: BTreeSet<UnitId> = pending_withdrawals
        .iter()
        .chain(withdrawals)
        .flat_map(|w| w.units.iter().cloned())
        .filter(|id| !declined.contains(id))
        .collect();
    // What the engine would not resolve in an attack is said at its designation, not after:
    // the ATTACKER's attacks again with the DEFENDER's withdrawals (one on withdrawing and
    // staying units together), before any die.
    for attack in attacks.iter().chain(pending.into_iter().flatten()) {
        assess(game, hex, attack, &withdrawing, false)?;
    }
    // A11.4: the engine checks for Ambush itself as the APh ends; the players' word of old
    // that their check found none has no place.
    if no_ambush && players_ambush.is_none() {
        return Err(RuleViolation::new(
            "A11.4",
            ViolationKind::UnitState,
            format!("the engine checked for Ambush in {hex} as the APh ended (its drs are in the record); designate without `no-ambush`"),
        ));
    }
    if no_ambush && by != attacker {
        return Err(RuleViolation::new(
            "A11.4",
            ViolationKind::UnitState,
            format!("the ATTACKER gave the players' Ambush check in {hex} with his designation; designate without `no-ambush`"),
        ));
    }
    let designated = Event::CloseCombatDesignated(CloseCombatDesignated {
        by,
        hex,
        attacks: attacks.to_vec(),
        withdrawals: withdrawals.to_vec(),
        no_ambush,
    });
    let Some(theirs) = pending else {
        return Ok(vec![designated]);
    };
    let mut events = vec![designated];
    // A11.19, A12.14: a concealed unit loses its "?" in the CCPh by making or directing a CC
    // attack (and by Casualty Reduction, which the engine reaches only in an attack on units
    // so revealed). Every unit named as an attacker makes or directs one: revealed as the CC
    // is resolved, before any roll, so no roll names a unit still under "?" to its enemy. An
    // Ambush's exception (the ambusher keeping its "?" while its attacks eliminate) cannot
    // arise: the engine resolves a Location with a "?" only where no Ambush is owed or the
    // players found none (`concealment_unresolved`).
    let revealing: BTreeSet<UnitId> = theirs
        .iter()
        .chain(attacks)
        .flat_map(|a| &a.attackers)
        .filter(|id| game.units.get(*id).is_some_and(|u| u.concealed))
        .cloned()
        .collect();
    if !revealing.is_empty() {
        events.push(Event::ConcealmentLostInCloseCombat(
            ConcealmentLostInCloseCombat {
                hex,
                revealed: crate::concealment::shown(game, &revealing),
            },
        ));
    }
    // A11.4: an Ambush makes the CC sequential, the ambusher's attacks first at -1 and the
    // other side's after, at +1, by its units still there; else it is simultaneous (A11.1).
    let ambusher = game.movement.ambush.get(&hex).copied();
    let mut sides = [(attacker, theirs.as_slice()), (by, attacks)];
    if ambusher == Some(by) {
        sides.swap(0, 1);
    }
    let resolution = Resolution {
        hex,
        by,
        ambusher,
        left: sides
            .iter()
            .flat_map(|(side, list)| list.iter().map(move |a| (*side, a.clone())))
            .collect(),
        withdrawals: pending_withdrawals
            .iter()
            .chain(withdrawals)
            .cloned()
            .collect(),
        withdrawing,
        declined,
        revealing,
        eliminated: BTreeSet::new(),
        changed: BTreeSet::new(),
        infiltrated: BTreeSet::new(),
        partial: false,
        first_draw: game.dice_drawn,
        chance: None,
    };
    resolution.run(game, &units, dice, &mut events)?;
    Ok(events)
}

/// The refusal of any command but the asked side's answer while a CC waits on Infiltration
/// (A11.22): whose move it is, and how to answer.
pub(super) fn refuse_while_infiltrating(game: &Game, chance: &CcInfiltration) -> RuleViolation {
    let hex = chance.hex;
    RuleViolation::with(
        "A11.22",
        ViolationKind::WrongSide,
        pieces![
            format!(
                "an Original CC DR of {} stopped the Close Combat in {hex}: the {} answers first whether ",
                chance.original,
                game.side_name(chance.side)
            ),
            Piece::units(&chance.units),
            format!(" infiltrate out of it (`cc {hex} infiltrate UNITS to HEX`, or `cc {hex} infiltrate none`); play goes on once it answers")
        ],
    )
}

/// `Infiltrate`: the asked side's answer to the chance of Infiltration in the CC Location of
/// `hex` (A11.22). The units named, each among those the chance offers, leave the CC at once
/// for the Location named, through the withdrawal's one entry (`movement::withdrawal`, A11.21:
/// ADJACENT, one an advance could enter, no Known enemy unit there, A4.72's CX), unattacked:
/// the attacks left that they were to make or to receive are not made (no withdrawal DRM,
/// A11.2's exception), and one they were to make or receive with units staying is the
/// players' (`Resolution::infiltrate`). None named declines. The resolution then goes on from
/// where it stopped, with the dice drawn now.
pub(super) fn decide_infiltrate(
    game: &Game,
    by: Side,
    hex: Hex,
    withdrawals: &[CcWithdrawal],
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let Some(chance) = game.cc_infiltration.as_ref() else {
        return Err(RuleViolation::new(
            "A11.22",
            ViolationKind::UnitState,
            format!("no Close Combat waits on Infiltration in {hex}: a unit may infiltrate only at once after an Original CC DR of 2 or 12"),
        ));
    };
    if chance.hex != hex {
        return Err(refuse_while_infiltrating(game, chance));
    }
    if chance.side != by {
        return Err(refuse_while_infiltrating(game, chance));
    }
    let named: Vec<UnitId> = withdrawals.iter().flat_map(|w| w.units.clone()).collect();
    crate::check_named_once(
        &named,
        "A11.22",
        " among the infiltrating units; a unit infiltrates once",
    )?;
    let mut events = vec![Event::InfiltrationChosen(InfiltrationChosen {
        by,
        hex,
        withdrawals: withdrawals.to_vec(),
    })];
    let mut infiltrated: BTreeSet<UnitId> = BTreeSet::new();
    for w in withdrawals {
        if w.units.is_empty() {
            return Err(RuleViolation::new(
                "A11.22",
                ViolationKind::UnknownUnit,
                "an Infiltration names the units that infiltrate and the hex they withdraw to",
            ));
        }
        let mut stack = vec![];
        for id in &w.units {
            let unit = super::own_unit(game, by, id)?;
            if !chance.units.contains(id) {
                let why = if unit.hex == hex {
                    format!(
                        " may not infiltrate: after an Original CC DR of {} only {} may, those not eliminated or pinned",
                        chance.original,
                        if chance.original == 2 {
                            "the units that rolled it"
                        } else {
                            "the units it attacked"
                        }
                    )
                } else {
                    format!(" is not in the Close Combat in {hex}")
                };
                return Err(RuleViolation::with(
                    "A11.22",
                    ViolationKind::UnitState,
                    pieces![Piece::unit(id), why],
                ));
            }
            stack.push(unit);
        }
        let (cx, wa) = movement::withdrawal(game, by, &stack, w.to)?;
        events.extend(wa);
        events.push(Event::UnitsWithdrew(UnitsWithdrew {
            units: w.units.clone(),
            from: hex,
            to: w.to,
            cx,
        }));
        infiltrated.extend(w.units.iter().cloned());
    }
    // The position the CC is read from: its units as they were before it (A11.1), but those
    // that left by Infiltration, which are where they went.
    let mut view = game.clone();
    view.cc_infiltration = None;
    for unit in &chance.before {
        if !infiltrated.contains(&unit.id) && !chance.infiltrated.contains(&unit.id) {
            view.units.insert(unit.id.clone(), unit.clone());
        }
    }
    let mut resolution = Resolution::resumed(chance, game.dice_drawn);
    resolution.infiltrate(&infiltrated, &mut events);
    let units = location_units(&view, hex)?;
    resolution.run(&view, &units, dice, &mut events)?;
    Ok(events)
}

/// A Location's CC as it is being resolved (A11.11): the attacks still to roll, in the order
/// the engine rolls them (the ATTACKER's first, or the ambusher's, A11.4), and what the rolls
/// made so far did. Every attack is read from the position before any of its results, so a
/// unit eliminated still attacks where the CC is simultaneous (A11.1).
struct Resolution {
    hex: Hex,
    /// The side whose designation resolves the CC: every roll names it.
    by: Side,
    ambusher: Option<Side>,
    /// The attacks not rolled yet, each with its side, first to roll first.
    left: std::collections::VecDeque<(Side, CcAttack)>,
    /// Both sides' withdrawals from Melee (A11.2), the ATTACKER's first.
    withdrawals: Vec<CcWithdrawal>,
    /// Units attempting a withdrawal: an attack on them has its own DRM (A11.2).
    withdrawing: BTreeSet<UnitId>,
    /// Units of the ambushing side that declined the CC by Ambush Withdrawal (A11.41).
    declined: BTreeSet<UnitId>,
    /// Units under "?" that make or direct a CC attack, revealed as the CC is resolved.
    revealing: BTreeSet<UnitId>,
    eliminated: BTreeSet<UnitId>,
    /// Units whose Casualty Reduction left their CC FP for the players to enter (a squad's
    /// half-squad, a wounded leader): in a sequential CC they cannot attack as designated.
    changed: BTreeSet<UnitId>,
    /// Units that infiltrated out of the CC (A11.22).
    infiltrated: BTreeSet<UnitId>,
    /// Something in the CC is the players' to adjudicate: they record the Melee.
    partial: bool,
    first_draw: u64,
    /// The chance of Infiltration the last attack gave (`infiltration`), until it is asked.
    chance: Option<(Side, Vec<UnitId>, u8)>,
}

impl Resolution {
    /// Takes the next attack left and resolves it; `false` when none is left.
    fn next_attack(
        &mut self,
        game: &Game,
        dice: &mut dyn DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<bool, RuleViolation> {
        let Some((side, attack)) = self.left.pop_front() else {
            return Ok(false);
        };
        self.resolve_attack(game, side, &attack, dice, events)?;
        Ok(true)
    }

    /// Resolves one CC attack of `side` (A11.11): its DR through the dice, read on the CCT,
    /// its result as events; or nothing, where it is not made (its attackers gone, its
    /// defenders withdrawn) or is the players'.
    fn resolve_attack(
        &mut self,
        game: &Game,
        side: Side,
        attack: &CcAttack,
        dice: &mut dyn DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleViolation> {
        let hex = self.hex;
        let by = self.by;
        let attack = match self.ambusher {
            Some(a) if a != side => match survivors(attack, &self.eliminated, &self.changed) {
                Survivors::All => attack.clone(),
                Survivors::Some(left) => left,
                Survivors::None => return Ok(()),
                Survivors::Changed(id) => {
                    self.partial = true;
                    events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                            target: hex,
                            unit: Some(id.clone()),
                            rule: "A11.4".into(),
                            why: format!(
                                "`{id}` was Casualty Reduced by the Ambush before its own CC attack: its FP is the players' to enter; roll the attack (`roll DR CC`) and `adjudicate`"
                            ),
                        }));
                    return Ok(());
                }
            },
            _ => attack.clone(),
        };
        let attack = &attack;
        // A11.41: the ambushing side's units that withdrew left before any CC: an attack
        // the ATTACKER designated on them before the DEFENDER's Ambush Withdrawal is not
        // made; one on them and others together is the players' against those left, its
        // odds being other than designated.
        let gone = attack
            .defenders
            .iter()
            .filter(|d| self.declined.contains(*d))
            .count();
        if gone > 0 {
            if gone < attack.defenders.len() {
                self.partial = true;
                events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                    target: hex,
                    unit: None,
                    rule: "A11.41".into(),
                    why: format!(
                        "the {} CC attack by {} in {hex} was designated on units some of which withdrew by Ambush Withdrawal before any CC: against those left it is the players' to roll (`roll DR CC`) and `adjudicate`, then record the Melee if both sides remain",
                        game.side_name(side),
                        crate::listed(&attack.attackers)
                    ),
                }));
            }
            return Ok(());
        }
        // A11.19: an attack on a "?" that made no CC attack of its own is the players'.
        // No Dummy is left under it (`dummies_in_close_combat`), but reading the attack on
        // the CCT would show the enemy the defender's FP, and that a "?" in CC shows its
        // Strength Factor rests on one source.
        let on_concealed = attack.defenders.iter().any(|d| game.units[d].concealed);
        if on_concealed && !attack.defenders.iter().all(|d| self.revealing.contains(d)) {
            self.partial = true;
            events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                target: hex,
                unit: None,
                rule: "A11.19".into(),
                why: format!(
                    "the {} CC attack by {} on a concealed unit in {hex} that made no CC attack of its own is not resolved by the engine: the players roll it (`roll DR CC`) and `adjudicate`, then record the Melee if both sides remain",
                    game.side_name(side),
                    crate::listed(&attack.attackers)
                ),
            }));
            return Ok(());
        }
        let assessed = assess(game, hex, attack, &self.withdrawing, true);
        // Worked out whole only now that its concealed defenders are revealed, what the
        // engine does not resolve in it is the players' (the words tell nothing hidden).
        let mut assessed = match assessed {
            Err(why) if on_concealed => {
                self.partial = true;
                events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                    target: hex,
                    unit: None,
                    rule: why.rule.clone(),
                    why: why.to_string(),
                }));
                return Ok(());
            }
            other => other?,
        };
        if let Some(a) = self.ambusher {
            let (value, reason) = if a == side {
                (-1, "Ambush")
            } else {
                (1, "ambushed")
            };
            assessed.drms.push(Modifier {
                value,
                reason: reason.into(),
                rule: "A11.4".into(),
            });
        }
        // Rolled by the designation that resolves the CC: the roll names its side, as every
        // roll names the side whose command made it (`record::export`); its words name
        // whose attack it is.
        let roll = roll_attack(by, game.side_name(side), hex, attack, &assessed, self.first_draw, dice)
            .ok_or_else(|| {
                RuleViolation::new(
                    "docs/dice.md",
                    ViolationKind::NoDice,
                    "no dice: offline, add a `dice` line with two faces per CC attack before the DEFENDER designates",
                )
            })?;
        self.first_draw += roll.dice.len() as u64;
        let original: u8 = roll.dice.iter().sum();
        let result = CcResult::of(assessed.column, roll.final_result);
        let figures = format!(
            "Final DR {} against Kill Number {} at {}",
            roll.final_result,
            assessed.column.kill_number(),
            assessed.column
        );
        events.push(Event::DiceRolled(DiceRolled { roll }));
        match result {
            CcResult::Eliminated => {
                for d in &attack.defenders {
                    if self.eliminated.insert(d.clone()) {
                        events.push(Event::FireEffectApplied(FireEffectApplied {
                            unit: d.clone(),
                            outcome: Outcome::Eliminate,
                            rule: "A11.11".into(),
                            why: format!("`{d}` eliminated in CC: {figures}"),
                        }));
                    }
                }
            }
            CcResult::PartialKill => match attack.defenders.as_slice() {
                // One unit attacked: it is the one reduced, by the one path Casualty
                // Reduction takes whatever calls for it (A7.302). Eliminated by another
                // attack of this simultaneous CC, it has nothing left to lose.
                [one] if !self.eliminated.contains(one) => {
                    let mut draws = morale::Draws {
                        by,
                        draw: &mut self.first_draw,
                        dice: &mut *dice,
                    };
                    self.partial |= !reduce(
                        game,
                        &game.units[one],
                        &format!("Partial Kill on `{one}` in CC ({figures})"),
                        &mut draws,
                        &mut self.eliminated,
                        &mut self.changed,
                        events,
                    )?;
                }
                [_] => {}
                many => {
                    // Which of them is reduced is a Random Selection (A.9) among those
                    // still there, by the one path it takes; every unit tied at the
                    // highest dr is reduced (A11.11: one or more).
                    let left: Vec<&Unit> = many
                        .iter()
                        .filter(|d| !self.eliminated.contains(*d))
                        .map(|d| &game.units[d])
                        .collect();
                    let (drs, rolls) = morale::random_selection(
                        by,
                        &left,
                        "a Partial Kill in CC",
                        &mut self.first_draw,
                        dice,
                    )
                    .map_err(|_| {
                        RuleViolation::new(
                            "docs/dice.md",
                            ViolationKind::NoDice,
                            "no dice: offline, add a `dice` line with a face per unit for the Random Selection of a Partial Kill in CC",
                        )
                    })?;
                    events.extend(rolls);
                    for one in morale::selected(&drs) {
                        let mut draws = morale::Draws {
                            by,
                            draw: &mut self.first_draw,
                            dice: &mut *dice,
                        };
                        self.partial |= !reduce(
                        game,
                            &game.units[&one],
                            &format!("Partial Kill on `{one}` in CC ({figures}), by Random Selection (A.9)"),
                            &mut draws,
                            &mut self.eliminated,
                            &mut self.changed,
                            events,
                        )?;
                    }
                }
            },
            CcResult::NoEffect => {}
        }
        self.chance = self.infiltration(game, side, attack, original);
        Ok(())
    }

    /// A11.22: after an Original CC DR of 2, the units that rolled it, and after one of 12,
    /// the units it attacked, may infiltrate out of the CC at once: those still there, not
    /// eliminated (by this attack or one rolled before it) nor pinned (a pinned unit does not
    /// withdraw, A11.2). The side owning them, and they, if any is free to.
    fn infiltration(
        &self,
        game: &Game,
        side: Side,
        attack: &CcAttack,
        original: u8,
    ) -> Option<(Side, Vec<UnitId>, u8)> {
        let (owner, candidates) = match original {
            2 => (side, &attack.attackers),
            12 => (side.opponent(), &attack.defenders),
            _ => return None,
        };
        let free: Vec<UnitId> = candidates
            .iter()
            .filter(|id| {
                !self.eliminated.contains(*id)
                    && !self.changed.contains(*id)
                    && !self.infiltrated.contains(*id)
                    && !game.units[*id].pinned
            })
            .cloned()
            .collect();
        (!free.is_empty()).then_some((owner, free, original))
    }

    /// Rolls the attacks left one by one, until none is left (then the CC's end, `finish`) or
    /// one gives a chance of Infiltration (A11.22): then the resolution stops, kept in the game
    /// with the question (`InfiltrationOffered`), and goes on once its side answers
    /// (`decide_infiltrate`). `game` shows the Location's units as they were before the CC.
    fn run(
        mut self,
        game: &Game,
        units: &[&Unit],
        dice: &mut dyn DiceSource,
        events: &mut Vec<Event>,
    ) -> Result<(), RuleViolation> {
        while self.next_attack(game, dice, events)? {
            if let Some((side, free, original)) = self.chance.take() {
                let kept = self.kept(game, side, free, original);
                events.push(Event::InfiltrationOffered(InfiltrationOffered {
                    chance: kept,
                }));
                return Ok(());
            }
        }
        self.finish(game, units, events)
    }

    /// The resolution as the game keeps it while its side is asked (`CcInfiltration`), with the
    /// units its results changed so far as they were before the CC.
    fn kept(self, game: &Game, side: Side, units: Vec<UnitId>, original: u8) -> CcInfiltration {
        let before = self
            .eliminated
            .iter()
            .chain(&self.changed)
            .chain(&self.revealing)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter_map(|id| game.units.get(id).cloned())
            .collect();
        CcInfiltration {
            hex: self.hex,
            side,
            units,
            original,
            by: self.by,
            ambusher: self.ambusher,
            left: self.left.into_iter().collect(),
            withdrawals: self.withdrawals,
            withdrawing: self.withdrawing,
            declined: self.declined,
            revealing: self.revealing,
            eliminated: self.eliminated,
            changed: self.changed,
            infiltrated: self.infiltrated,
            partial: self.partial,
            before,
        }
    }

    /// Takes the units that infiltrated out of what is left of the CC (A11.22): they make no
    /// attack and withdraw no more (they are gone), and no attack left is made on them. An
    /// attack they were to make or receive with units staying is the players': its odds are
    /// not those designated, and that those staying make it, figured anew, rests on one source
    /// ([LDR]'s A11 comprehensive EX).
    fn infiltrate(&mut self, gone: &BTreeSet<UnitId>, events: &mut Vec<Event>) {
        if gone.is_empty() {
            return;
        }
        self.infiltrated.extend(gone.iter().cloned());
        for w in &mut self.withdrawals {
            w.units.retain(|u| !gone.contains(u));
        }
        self.withdrawals.retain(|w| !w.units.is_empty());
        self.withdrawing.retain(|u| !gone.contains(u));
        let hex = self.hex;
        let mut left = std::collections::VecDeque::new();
        for (side, attack) in std::mem::take(&mut self.left) {
            let by = attack
                .attackers
                .iter()
                .filter(|a| gone.contains(*a))
                .count();
            let on = attack
                .defenders
                .iter()
                .filter(|d| gone.contains(*d))
                .count();
            if by == attack.attackers.len() || on == attack.defenders.len() {
                continue;
            }
            if by > 0 || on > 0 {
                self.partial = true;
                events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                    target: hex,
                    unit: None,
                    rule: "A11.22".into(),
                    why: format!(
                        "the CC attack by {} in {hex} was designated with units that infiltrated out of the Close Combat before it was made: by or on those left its odds are not those designated, and it is the players' to roll (`roll DR CC`) and `adjudicate`, then record the Melee if both sides remain",
                        crate::listed(&attack.attackers)
                    ),
                }));
                continue;
            }
            left.push_back((side, attack));
        }
        self.left = left;
    }

    /// The resolution kept in `chance`, to go on from where it stopped (`decide_infiltrate`).
    fn resumed(chance: &CcInfiltration, first_draw: u64) -> Resolution {
        let chance = chance.clone();
        Resolution {
            hex: chance.hex,
            by: chance.by,
            ambusher: chance.ambusher,
            left: chance.left.into_iter().collect(),
            withdrawals: chance.withdrawals,
            withdrawing: chance.withdrawing,
            declined: chance.declined,
            revealing: chance.revealing,
            eliminated: chance.eliminated,
            changed: chance.changed,
            infiltrated: chance.infiltrated,
            partial: chance.partial,
            first_draw,
            chance: None,
        }
    }

    /// The CC's end once every attack is resolved: the withdrawals of the units that came out
    /// whole (A11.2) and, with both sides still there and nothing the players', the Melee
    /// (A11.7). `units` are the Location's units as the CC began.
    fn finish(
        mut self,
        game: &Game,
        units: &[&Unit],
        events: &mut Vec<Event>,
    ) -> Result<(), RuleViolation> {
        let hex = self.hex;
        let attacker = game.attacker();
        // A11.2: the units that attempted to withdraw and came out of the CC whole leave for the
        // Location they named; one Casualty Reduced in it is the players' to place.
        let mut withdrew: BTreeSet<UnitId> = BTreeSet::new();
        for w in &self.withdrawals {
            let reduced: Vec<&UnitId> = w
                .units
                .iter()
                .filter(|u| self.changed.contains(*u))
                .collect();
            for id in &reduced {
                self.partial = true;
                events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                    target: hex,
                    unit: Some((*id).clone()),
                    rule: "A11.2".into(),
                    why: format!(
                        "`{id}` was Casualty Reduced attempting to withdraw from the Melee in {hex}: whether it withdraws is not ruled by the engine; the players adjudicate it, then record the Melee if both sides remain"
                    ),
                }));
            }
            let whole: Vec<&Unit> = w
                .units
                .iter()
                .filter(|u| !self.eliminated.contains(*u) && !self.changed.contains(*u))
                .map(|u| &game.units[u])
                .collect();
            if whole.is_empty() {
                continue;
            }
            let side = whole[0].side;
            // Checked at its designation; with fewer units (a leader lost) its Difficult Terrain
            // test is taken again, as an advance by those units alone would take it (A4.72).
            let (cx, wa) = movement::withdrawal(game, side, &whole, w.to)?;
            events.extend(wa);
            events.push(Event::UnitsWithdrew(UnitsWithdrew {
                units: whole.iter().map(|u| u.id.clone()).collect(),
                from: hex,
                to: w.to,
                cx,
            }));
            withdrew.extend(whole.iter().map(|u| u.id.clone()));
        }
        // A leader eliminated in CC owes no Leader Loss check, nor does one broken in it: units
        // in CC neither take nor cause them (A10.2, A11.141).
        // A11.7: both sides still in the Location and nothing left to the players: Melee.
        let remains = |side: Side| {
            units.iter().any(|u| {
                u.side == side
                    && !self.eliminated.contains(&u.id)
                    && !withdrew.contains(&u.id)
                    && !self.infiltrated.contains(&u.id)
            })
        };
        let both = remains(attacker) && remains(attacker.opponent());
        if both {
            // A broken unit held in Melee that did not withdraw: whether it had to attempt it
            // (A11.16) and what else befalls it is not ruled by the engine, so the Melee is the
            // players' to record.
            for u in units.iter().filter(|u| {
                u.morale == Morale::Broken
                    && !self.eliminated.contains(&u.id)
                    && !withdrew.contains(&u.id)
                    && !self.infiltrated.contains(&u.id)
            }) {
                self.partial = true;
                events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                    target: hex,
                    unit: Some(u.id.clone()),
                    rule: "A11.16".into(),
                    why: format!(
                        "`{}` is broken and held in Melee, not withdrawn: whether it had to attempt a withdrawal (A11.2) or what else befalls it is the players' to adjudicate; then record the Melee",
                        u.id
                    ),
                }));
            }
        }
        if !self.partial && both {
            events.push(Event::MeleeRecorded(MeleeRecorded { hex }));
        }
        Ok(())
    }
}

/// What is left of an ambushed side's attack once the ambusher's attacks are resolved (A11.4):
/// its attackers still there (a unit eliminated does not attack back), unless one of them was
/// Casualty Reduced into a unit whose FP the players enter.
enum Survivors {
    All,
    Some(CcAttack),
    None,
    Changed(UnitId),
}

fn survivors(
    attack: &CcAttack,
    eliminated: &BTreeSet<UnitId>,
    changed: &BTreeSet<UnitId>,
) -> Survivors {
    if let Some(id) = attack.attackers.iter().find(|a| changed.contains(*a)) {
        return Survivors::Changed(id.clone());
    }
    let left: Vec<UnitId> = attack
        .attackers
        .iter()
        .filter(|a| !eliminated.contains(*a))
        .cloned()
        .collect();
    if left.is_empty() {
        Survivors::None
    } else if left.len() == attack.attackers.len() {
        Survivors::All
    } else {
        Survivors::Some(CcAttack {
            attackers: left,
            defenders: attack.defenders.clone(),
        })
    }
}

/// The units in play in the CC Location of `hex` (above ground, hidden ones left out), which
/// must all share one Location: a hex with units of both sides on several levels is refused.
fn location_units(game: &Game, hex: Hex) -> Result<Vec<&Unit>, RuleViolation> {
    let units: Vec<&Unit> = game.units_above(hex).filter(|u| !u.hidden).collect();
    if units.iter().any(|u| !game.same_location(u, units[0])) {
        return Err(RuleViolation::new(
            "A11.1",
            ViolationKind::NotModelled,
            format!("units stand on more than one level of {hex}: which Location fights is not resolved by the engine; roll (`roll DR CC`) and `adjudicate`"),
        ));
    }
    Ok(units)
}

/// A designation's own checks: each attack names units of the designating side attacking
/// enemy units, all in the Location; no unit attacks twice (A11.12), and no unit is attacked
/// by two attacks of one side, which the engine does not resolve.
fn check_attacks(
    game: &Game,
    by: Side,
    hex: Hex,
    units: &[&Unit],
    attacks: &[CcAttack],
) -> Result<(), RuleViolation> {
    // A11.12: a unit attacks once a CCPh; naming it twice is refused by the one naming check,
    // before any unit is looked up, as every command that names units refuses it.
    let attacking: Vec<UnitId> = attacks.iter().flat_map(|a| a.attackers.clone()).collect();
    crate::check_named_once(
        &attacking,
        "A11.12",
        " among the CC attackers; a unit attacks once a CCPh",
    )?;
    let mut attacked = BTreeSet::new();
    for attack in attacks {
        if attack.attackers.is_empty() || attack.defenders.is_empty() {
            return Err(RuleViolation::new(
                "A11.12",
                ViolationKind::UnknownUnit,
                "each CC attack names its attacking units and the enemy units they attack",
            ));
        }
        // A11.19: an attack on concealed units is halved; on concealed and Known units at once
        // it would be halved for some of them only, which one DR cannot be ([LD] alone says
        // how the stack is then attacked): the players roll it.
        let concealed = attack
            .defenders
            .iter()
            .filter(|d| game.units.get(*d).is_some_and(|u| u.concealed))
            .count();
        if concealed != 0 && concealed != attack.defenders.len() {
            return Err(RuleViolation::new(
                "A11.19",
                ViolationKind::NotModelled,
                format!("one CC attack in {hex} names concealed and Known units together: the engine does not resolve that attack; attack them apart, or roll (`roll DR CC`) and `adjudicate`"),
            ));
        }
        for id in &attack.attackers {
            let unit = super::own_unit(game, by, id)?;
            if !units.iter().any(|u| u.id == unit.id) {
                return Err(RuleViolation::with(
                    "A11.1",
                    ViolationKind::Geometry,
                    pieces![
                        Piece::unit(id),
                        format!(" is not in the CC Location of {hex}")
                    ],
                ));
            }
            // A unit under "?" is looked at only here, by its own side: what it is stays
            // unsaid to the enemy (`unresolved`). A Dummy has no FP to attack with (A11.11);
            // none is left in a CC Location once the CCPh starts (`dummies_in_close_combat`).
            if unit.concealed {
                if unit.kind == UnitKind::Dummy {
                    return Err(RuleViolation::with(
                        "A11.11",
                        ViolationKind::UnitState,
                        pieces![
                            Piece::unit(id),
                            " is a Dummy: it has no FP and makes no CC attack"
                        ],
                    ));
                }
                if let Some(why) = unit_unresolved(unit) {
                    return Err(why);
                }
            }
            // A11.16: a broken unit defends in CC but makes no attack.
            if unit.morale == Morale::Broken {
                return Err(RuleViolation::with(
                    "A11.16",
                    ViolationKind::UnitState,
                    pieces![
                        Piece::unit(id),
                        " is broken: a broken unit makes no CC attack"
                    ],
                ));
            }
        }
        for id in &attack.defenders {
            let Some(unit) = units.iter().find(|u| u.id == *id && u.side != by) else {
                return Err(RuleViolation::with(
                    "A11.1",
                    ViolationKind::UnknownUnit,
                    pieces![
                        Piece::unit(id),
                        format!(" is no enemy unit in the CC Location of {hex}")
                    ],
                ));
            };
            if !attacked.insert(unit.id.clone()) {
                return Err(RuleViolation::with(
                    "A11.12",
                    ViolationKind::NotModelled,
                    pieces![
                        Piece::unit(id),
                        " is named in two attacks of one side: the engine does not resolve that; combine the attacks, or roll and `adjudicate`"
                    ],
                ));
            }
        }
    }
    Ok(())
}

/// A11.15: a unit that advanced into a Location already in Melee engages in its CC, so its
/// side's designation names it among the attackers. A unit under "?" may decline its attack to
/// keep its concealment (A11.15, A11.19), and a broken one makes none (A11.16); what the enemy's
/// units are plays no part, so the refusal tells its owner nothing he cannot see. Checked after
/// the withdrawals, whose own refusal says why a unit named there may not withdraw.
fn check_reinforcing(
    game: &Game,
    by: Side,
    hex: Hex,
    units: &[&Unit],
    attacks: &[CcAttack],
) -> Result<(), RuleViolation> {
    let attacking: BTreeSet<&UnitId> = attacks.iter().flat_map(|a| &a.attackers).collect();
    if let Some(idle) = units.iter().find(|u| {
        u.side == by
            && !u.concealed
            && u.morale != Morale::Broken
            && reinforcing_melee(game, units, u)
            && !attacking.contains(&u.id)
    }) {
        return Err(RuleViolation::with(
            "A11.15",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&idle.id),
                format!(" advanced into the Melee in {hex} this APh: a unit reinforcing a Melee engages in its Close Combat, so name it among the attackers")
            ],
        ));
    }
    Ok(())
}

/// Whether `unit` advanced this APh into the CC Location of `units` while it was in Melee
/// (A11.15): units of both sides there did not advance in, so they were held in Melee there
/// from an earlier CCPh (A11.7), and the advance reinforced that Melee (no Ambush, A11.4).
fn reinforcing_melee(game: &Game, units: &[&Unit], unit: &Unit) -> bool {
    game.movement.advanced.contains(&unit.id) && !advanced_into(game, units)
}

/// Whether `unit` is held in Melee in the CC Location of `units` (A11.2): it did not advance
/// into it this APh, and neither did an enemy unit there, so both were there when a CCPh
/// ended before (A11.7). A unit that advanced in, or whose enemy all advanced in, is in a
/// new CC.
fn held_in_melee(game: &Game, units: &[&Unit], unit: &Unit) -> bool {
    let advanced = |u: &Unit| game.movement.advanced.contains(&u.id);
    !advanced(unit) && units.iter().any(|e| e.side != unit.side && !advanced(e))
}

/// A4.43: a unit drops a weapon in the CCPh only at its start, to withdraw from Melee (A11.21):
/// before any CC of the phase is designated or over, and only a unit a withdrawal could take
/// out — held in Melee in a CC Location (`held_in_melee`), not pinned (a pinned unit does not
/// withdraw), not under "?" (its withdrawal is not modelled, A11.2 row). Having dropped, it
/// must withdraw: its side's designation there names it among the withdrawing units
/// (`check_dropped_withdraw`).
pub(crate) fn check_drop_to_withdraw(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    let refuse = |kind, why: &str| {
        Err(RuleViolation::with(
            "A4.43",
            kind,
            pieces![Piece::unit(&unit.id), why.to_string()],
        ))
    };
    let m = &game.movement;
    if !m.cc_designated.is_empty() || !m.cc_resolved.is_empty() || !m.melee.is_empty() {
        return refuse(
            ViolationKind::WrongPhase,
            " would drop a weapon after the CCPh's start: a weapon is dropped in the CCPh only at its start, before any Close Combat is designated, to withdraw from Melee",
        );
    }
    if !locations(game).contains(&unit.hex) {
        return refuse(
            ViolationKind::UnitState,
            " is in no Close Combat Location: in the CCPh a weapon is dropped only to withdraw from Melee",
        );
    }
    let units = location_units(game, unit.hex)?;
    if !held_in_melee(game, &units, unit) {
        return refuse(
            ViolationKind::UnitState,
            " is not held in Melee (it or every enemy unit in its Location advanced in this APh): in the CCPh a weapon is dropped only to withdraw from Melee",
        );
    }
    if unit.pinned {
        return refuse(
            ViolationKind::UnitState,
            " is pinned and does not withdraw (A11.2), so it drops no weapon to withdraw",
        );
    }
    if unit.concealed {
        return refuse(
            ViolationKind::NotModelled,
            " is concealed: the engine does not rule on a withdrawal under \"?\" (A11.2), nor on a drop to make one; roll (`roll DR CC`) and `adjudicate`",
        );
    }
    Ok(())
}

/// A4.43: a unit of the designating side that dropped a weapon at the start of this CCPh did so
/// to withdraw, so its side's designation in its Location names it among the withdrawing units.
fn check_dropped_withdraw(
    game: &Game,
    by: Side,
    units: &[&Unit],
    withdrawals: &[CcWithdrawal],
) -> Result<(), RuleViolation> {
    let withdrawing: BTreeSet<&UnitId> = withdrawals.iter().flat_map(|w| &w.units).collect();
    if let Some(stays) = units.iter().find(|u| {
        u.side == by
            && game.movement.dropped_to_withdraw.contains(&u.id)
            && !withdrawing.contains(&u.id)
    }) {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&stays.id),
                " dropped its weapon at the start of the CCPh to withdraw from the Melee: it withdraws (`withdraw … to HEX`)"
            ],
        ));
    }
    Ok(())
}

/// A designation's withdrawals from Melee (A11.2): each names units of the designating side
/// held in Melee in the Location (`held_in_melee`), not pinned, attacking with none of its
/// attacks, each named once, into an ADJACENT Location they could advance into that holds no
/// Known enemy unit (`movement::withdrawal`). Units of the side may stay in the Melee while
/// others withdraw: each staying makes the attacks on those withdrawing one worse (`assess`).
///
/// Where the designating side ambushed the other (A11.4), its units withdraw by Ambush
/// Withdrawal instead (A11.41): not held in Melee (none is, in a CC after an Ambush), they
/// decline the CC and leave before any of it is resolved, by the same entry and with the same
/// bars (pinned, under "?"), unattacked.
fn check_withdrawals(
    game: &Game,
    by: Side,
    hex: Hex,
    units: &[&Unit],
    attacks: &[CcAttack],
    withdrawals: &[CcWithdrawal],
) -> Result<(), RuleViolation> {
    if withdrawals.is_empty() {
        return Ok(());
    }
    // A11.2: a unit attempts one withdrawal; naming it twice is refused by the one naming
    // check, before any unit is looked up.
    let withdrawing: Vec<UnitId> = withdrawals.iter().flat_map(|w| w.units.clone()).collect();
    crate::check_named_once(
        &withdrawing,
        "A11.2",
        " among the withdrawing units; a unit attempts one withdrawal",
    )?;
    let attacking: BTreeSet<&UnitId> = attacks.iter().flat_map(|a| &a.attackers).collect();
    let ambush_withdrawal = ambush_withdrawal(game, by, hex);
    let mut named: BTreeSet<UnitId> = BTreeSet::new();
    for w in withdrawals {
        if w.units.is_empty() {
            return Err(RuleViolation::new(
                "A11.2",
                ViolationKind::UnknownUnit,
                "a withdrawal names the units that withdraw and the hex they withdraw to",
            ));
        }
        let mut stack = vec![];
        for id in &w.units {
            let unit = super::own_unit(game, by, id)?;
            if !units.iter().any(|u| u.id == unit.id) {
                return Err(RuleViolation::with(
                    "A11.1",
                    ViolationKind::Geometry,
                    pieces![
                        Piece::unit(id),
                        format!(" is not in the CC Location of {hex}")
                    ],
                ));
            }
            named.insert(id.clone());
            if attacking.contains(id) {
                return Err(RuleViolation::with(
                    "A11.2",
                    ViolationKind::UnitState,
                    pieces![
                        Piece::unit(id),
                        " attempts to withdraw: a withdrawing unit makes no CC attack"
                    ],
                ));
            }
            if !ambush_withdrawal && !held_in_melee(game, units, unit) {
                let why = if game.movement.advanced.contains(id) {
                    " advanced into this Close Combat this APh: only a unit held in Melee withdraws from it"
                } else {
                    " is in a new Close Combat, every enemy unit there having advanced in this APh: only a unit held in Melee withdraws from it"
                };
                return Err(RuleViolation::with(
                    "A11.2",
                    ViolationKind::UnitState,
                    pieces![Piece::unit(id), why],
                ));
            }
            if unit.pinned {
                return Err(RuleViolation::with(
                    "A11.2",
                    ViolationKind::UnitState,
                    pieces![
                        Piece::unit(id),
                        " is pinned: a pinned unit does not withdraw"
                    ],
                ));
            }
            // Whether a unit keeps its "?" withdrawing, and what an attack on it then does (an
            // attack on a "?" that makes none of its own is the players', A11.19), no source at
            // hand says: its owner is told so, and nobody else.
            if unit.concealed {
                return Err(RuleViolation::with(
                    "A11.2",
                    ViolationKind::NotModelled,
                    pieces![
                        Piece::unit(id),
                        " is concealed: the engine does not rule on a withdrawal under \"?\"; roll (`roll DR CC`) and `adjudicate`"
                    ],
                ));
            }
            stack.push(unit);
        }
        movement::withdrawal(game, by, &stack, w.to)?;
    }
    Ok(())
}

/// Whether `by`'s withdrawals in the CC Location of `hex` are Ambush Withdrawals (A11.41):
/// `by` ambushed the other side there as the APh ended (A11.4).
fn ambush_withdrawal(game: &Game, by: Side, hex: Hex) -> bool {
    game.movement.ambush.get(&hex) == Some(&by)
}

/// Why the engine does not resolve the CC of a Location with these units, if it does not: the
/// rule it would need and which the project has not sourced twice, so that the players roll and
/// adjudicate instead. The words name only what both sides see in the Location: a unit under
/// "?" is not looked at here (what it is would show in the refusal), but where its own side
/// names it as an attacker (`check_attacks`), and its Location is ruled on by what both sides
/// see of it (`concealment_unresolved`).
fn unresolved(units: &[&Unit]) -> Option<RuleViolation> {
    units
        .iter()
        .filter(|u| !u.concealed)
        .find_map(|u| unit_unresolved(u))
}

/// Why the engine does not resolve a CC in which `u` takes part, if it does not.
fn unit_unresolved(u: &Unit) -> Option<RuleViolation> {
    let refuse = |rule: &str, why: Vec<Piece>| {
        let mut why = why;
        why.push(crate::violation::text(
            ": the engine does not resolve this Close Combat; roll (`roll DR CC`) and `adjudicate`, then record the Melee if both sides remain",
        ));
        Some(RuleViolation::with(rule, ViolationKind::NotModelled, why))
    };
    let rule = match u.kind {
        UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew | UnitKind::Leader => None,
        UnitKind::Hero => Some("A15"),
        UnitKind::Vehicle => Some("A11.5"),
        _ => Some("A11"),
    };
    if let Some(rule) = rule {
        return refuse(
            rule,
            pieces![
                Piece::unit(&u.id),
                " is not a squad, half-squad, crew or leader"
            ],
        );
    }
    // A broken unit is resolved (A11.16: it defends, never attacks); a berserk one is not.
    if u.morale == Morale::Berserk {
        return refuse("A15", pieces![Piece::unit(&u.id), " is berserk"]);
    }
    if u.kind != UnitKind::Leader && fire_power(u).is_none() {
        return refuse(
            "A11.11",
            pieces![
                Piece::unit(&u.id),
                format!("'s ratings `{}` do not read as FP-range-morale", u.ratings)
            ],
        );
    }
    None
}

/// Why the engine does not resolve the CC of a Location holding concealed units, if it does
/// not, judged only by what both sides see there, so that the refusal is the same whatever is
/// under the "?" (a Dummy or a squad). Units advanced into the Location this APh, not into a
/// Melee (`advanced_into`), call for an Ambush check, and a "?" there is the one case the
/// engine cannot check: the drm concealment gives rests on two sources that disagree (-1,
/// -2), and only one has an Ambush possible outside woods and buildings (A11.4 row): the
/// players check it, and the ATTACKER's `no-ambush` says they found none. A Melee carried on
/// from an earlier CCPh has no Ambush check, and its CC is the engine's.
fn concealment_unresolved(game: &Game, units: &[&Unit]) -> Option<RuleViolation> {
    if !units.iter().any(|u| u.concealed) || !advanced_into(game, units) {
        return None;
    }
    Some(RuleViolation::with(
        "A11.19",
        ViolationKind::NotModelled,
        pieces![
            "a concealed unit is in the Location, and units advanced into it this APh: whether either side ambushes the other there (A11.4) is the players' to check with a \"?\" in it (`roll dr CC` for each side). If neither did, the ATTACKER designates with `no-ambush` and the engine resolves the CC; after an Ambush, roll (`roll DR CC`) and `adjudicate`, then record the Melee if both sides remain"
        ],
    ))
}

/// An MMC's printed FP (`4-6-7` → 4): its inherent FP, what it brings to CC (A11.11).
fn fire_power(unit: &Unit) -> Option<u32> {
    let mut parts = unit.ratings.split('-');
    let fp = parts.next()?.parse().ok()?;
    let _range: u32 = parts.next()?.parse().ok()?;
    let _morale: u32 = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some(fp)
}

/// A unit's FP in CC, in halves of a point: an MMC's printed FP, a leader's 1 (A11.14),
/// halved for a pinned unit's attack but not its defence (A7.8).
fn cc_halves(unit: &Unit, attacking: bool) -> u32 {
    let whole = if unit.kind == UnitKind::Leader {
        1
    } else {
        fire_power(unit).unwrap_or(0)
    };
    if attacking && unit.pinned {
        whole
    } else {
        whole * 2
    }
}

/// One CC attack worked out before its dice: the two FP totals, the column and the DRMs.
struct Assessed {
    attack_halves: u32,
    defence_halves: u32,
    /// The attack is on concealed units: its FP is halved (A11.19).
    halved: bool,
    column: CcColumn,
    drms: Vec<Modifier>,
}

/// Half of `h` halves of a point, in words: 4 halves → "1", 3 → "¾".
fn quarters_words(h: u32) -> String {
    let fraction = ["", "¼", "½", "¾"][(h % 4) as usize];
    match h / 4 {
        0 if h % 4 != 0 => fraction.to_string(),
        whole => format!("{whole}{fraction}"),
    }
}

fn halves_words(h: u32) -> String {
    if h % 2 == 0 {
        format!("{}", h / 2)
    } else {
        format!("{}½", h / 2)
    }
}

/// One CC attack worked out from the position before any of the CC's attacks. `seen` is
/// false at the designation of an attack on concealed units, which are not looked at then (what
/// they are would show in a refusal): only the attacking side's part is checked, and the attack
/// is worked out whole when it is resolved, its defenders' "?" lost by their own attack
/// (`decide_close_combat`).
fn assess(
    game: &Game,
    hex: Hex,
    attack: &CcAttack,
    withdrawing: &BTreeSet<UnitId>,
    seen: bool,
) -> Result<Assessed, RuleViolation> {
    let get = |id: &UnitId| game.units.get(id).expect("checked by check_attacks");
    let attackers: Vec<&Unit> = attack.attackers.iter().map(get).collect();
    let defenders: Vec<&Unit> = attack.defenders.iter().map(get).collect();
    // A11.19: an attack on concealed units has its FP halved. Halving the attack is doubling
    // the defence for the odds, which keeps the totals in halves of a point.
    let halved = defenders.iter().all(|u| u.concealed);
    let blind = halved && !seen;
    let attack_halves = attackers.iter().map(|u| cc_halves(u, true)).sum();
    let defence_halves: u32 = if blind {
        0
    } else {
        defenders.iter().map(|u| cc_halves(u, false)).sum()
    };
    let column = if blind {
        CcColumn::for_odds(1, 1).expect("one to one is a column")
    } else {
        CcColumn::for_odds(attack_halves, defence_halves * if halved { 2 } else { 1 })
            .expect("a CC attack names at least one defender, each with FP")
    };
    let not_modelled = |rule: &str, why: Vec<Piece>| {
        let mut why = why;
        why.push(crate::violation::text(format!(
            ": the engine does not resolve this CC attack in {hex}; roll (`roll DR CC`) and `adjudicate`"
        )));
        RuleViolation::with(rule, ViolationKind::NotModelled, why)
    };
    let mut drms = vec![];
    // A11.141: one leader attacking with other units directs their attack, his leadership DRM
    // applying to its DR; a leader attacking alone does not. Of several, the best directs.
    let leaders: Vec<&&Unit> = attackers
        .iter()
        .filter(|u| u.kind == UnitKind::Leader)
        .collect();
    if leaders.len() < attackers.len() {
        let mut best: Option<(i8, &Unit)> = None;
        for l in &leaders {
            if l.pinned || l.cx {
                return Err(not_modelled(
                    "A11.141",
                    pieces![
                        Piece::unit(&l.id),
                        if l.pinned { " is pinned" } else { " is CX" },
                        ", and whether he directs is not ruled by the engine"
                    ],
                ));
            }
            let Some(drm) = morale::leadership_of(l) else {
                return Err(not_modelled(
                    "A11.141",
                    pieces![
                        Piece::unit(&l.id),
                        format!("'s ratings `{}` give no leadership DRM", l.ratings)
                    ],
                ));
            };
            if drm > 0 {
                return Err(not_modelled(
                    "A11.141",
                    pieces![
                        Piece::unit(&l.id),
                        " has a positive leadership DRM, which a leader may decline to apply"
                    ],
                ));
            }
            if best.is_none_or(|(b, _)| drm < b) {
                best = Some((drm, l));
            }
        }
        if let Some((drm, l)) = best.filter(|(d, _)| *d != 0) {
            drms.push(Modifier {
                value: drm,
                reason: format!("`{}` directs", l.id),
                rule: "A11.141".into(),
            });
        }
    }
    // A4.51: a CX unit adds one to its CC attack, and one is deducted from a CC attack on it.
    let cx = |list: &[&Unit]| list.iter().filter(|u| u.cx).count();
    match cx(&attackers) {
        0 => {}
        n if n == attackers.len() => drms.push(Modifier {
            value: 1,
            reason: "CX attackers".into(),
            rule: "A4.51".into(),
        }),
        _ => {
            return Err(not_modelled(
                "A4.51",
                pieces!["some of the attacking units are CX and some not"],
            ))
        }
    }
    if blind {
        return Ok(Assessed {
            attack_halves,
            defence_halves,
            halved,
            column,
            drms,
        });
    }
    match cx(&defenders) {
        0 => {}
        n if n == defenders.len() => drms.push(Modifier {
            value: -1,
            reason: "CX defenders".into(),
            rule: "A4.51".into(),
        }),
        _ => {
            return Err(not_modelled(
                "A4.51",
                pieces!["some of the attacked units are CX and some not"],
            ))
        }
    }
    // A11.16: an attack on broken units has -2; one DR for broken and unbroken units together
    // would need a Final DR for each, which the engine does not make.
    match defenders
        .iter()
        .filter(|u| u.morale == Morale::Broken)
        .count()
    {
        0 => {}
        n if n == defenders.len() => drms.push(Modifier {
            value: -2,
            reason: "broken defenders".into(),
            rule: "A11.16".into(),
        }),
        _ => {
            return Err(not_modelled(
                "A11.16",
                pieces!["some of the attacked units are broken and some not"],
            ))
        }
    }
    // A11.2: an attack on units attempting to withdraw has -2, and +1 for each unit of their
    // side in the Melee not attempting it (a unit under "?" there counted as the counter it
    // is, whatever it hides: no Dummy is left in a CC Location).
    match defenders
        .iter()
        .filter(|u| withdrawing.contains(&u.id))
        .count()
    {
        0 => {}
        n if n == defenders.len() => {
            drms.push(Modifier {
                value: -2,
                reason: "withdrawing defenders".into(),
                rule: "A11.2".into(),
            });
            let side = defenders[0].side;
            let staying = game
                .units_above(hex)
                .filter(|u| {
                    u.side == side
                        && !u.hidden
                        && !withdrawing.contains(&u.id)
                        && game.same_location(u, defenders[0])
                })
                .count();
            if staying > 0 {
                drms.push(Modifier {
                    value: i8::try_from(staying).unwrap_or(i8::MAX),
                    reason: "units of theirs staying in the Melee".into(),
                    rule: "A11.2".into(),
                });
            }
        }
        _ => {
            return Err(not_modelled(
                "A11.2",
                pieces!["some of the attacked units attempt to withdraw and some not"],
            ))
        }
    }
    Ok(Assessed {
        attack_halves,
        defence_halves,
        halved,
        column,
        drms,
    })
}

/// Rolls one assessed CC attack's DR (A11.11); `None` when the dice source has none.
fn roll_attack(
    by: Side,
    attacking: &str,
    hex: Hex,
    attack: &CcAttack,
    a: &Assessed,
    first_draw: u64,
    dice: &mut dyn DiceSource,
) -> Option<Roll> {
    let first = dice.roll_die()?;
    let second = dice.roll_die()?;
    let raw = i16::from(first) + i16::from(second);
    let final_result = raw + a.drms.iter().map(|m| i16::from(m.value)).sum::<i16>();
    let result = CcResult::of(a.column, final_result);
    let list = |ids: &[UnitId]| {
        ids.iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(Roll {
        side: by,
        purpose: RollPurpose::CloseCombat,
        rule: "A11.11".into(),
        first_draw,
        dice: vec![first, second],
        modifiers: a.drms.clone(),
        final_result,
        outcome: format!(
            "{attacking} CC in {hex}: {} ({} FP{}) vs {} ({} FP), {}, Kill Number {}: {}",
            list(&attack.attackers),
            halves_words(a.attack_halves),
            if a.halved {
                format!(
                    ", halved to {} against concealed units, A11.19",
                    quarters_words(a.attack_halves)
                )
            } else {
                String::new()
            },
            list(&attack.defenders),
            halves_words(a.defence_halves),
            a.column,
            a.column.kill_number(),
            result.words()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A11.19: halving an attack on concealed units is doubling their defence on the CCT, so a
    /// halved total needs no quarter points: 4 FP on a concealed 4 FP is 2 to 4, 1-2; a pinned
    /// squad's 2 FP on a concealed 4 is 1 to 4, 1-4; a pinned leader's ½ FP on a concealed 1 is
    /// ¼ to 1, 1-4.
    #[test]
    fn an_attack_on_concealed_units_is_read_at_half_its_fp() {
        let halved = |attack_halves: u32, defence_halves: u32| {
            CcColumn::for_odds(attack_halves, defence_halves * 2)
                .unwrap()
                .name()
        };
        assert_eq!(halved(8, 8), "1-2");
        assert_eq!(halved(4, 8), "1-4");
        assert_eq!(halved(1, 2), "1-4");
        assert_eq!(CcColumn::for_odds(4, 8).unwrap().name(), "1-2");
        assert_eq!(quarters_words(8), "2");
        assert_eq!(quarters_words(4), "1");
        assert_eq!(quarters_words(3), "¾");
        assert_eq!(quarters_words(1), "¼");
        assert_eq!(quarters_words(10), "2½");
        assert_eq!(quarters_words(0), "0");
    }
}
