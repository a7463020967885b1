//! `Rout`: a broken unit's rout in the RtPh (A10.5, A10.51), one hex per command like `move`,
//! each hex entered through the one act of entering a Location (`enter_location`, with
//! `Act::Rout`), and the RtPh's obligation: a step of the RtPh does not end while one of the
//! side's broken units must rout and has not, or has routed to where it may not stay (A10.5).
//!
//! Sources (docs/rules-coverage.md, A10.5 rows): players' quotations of A10.5 and A10.51 in
//! GameSquad threads, D. Ripton's "Routing 101", B. Kohler's ASL Rout Flowchart and the
//! eASLRB's comprehensive rout example. A step into Open Ground in the LOS and normal range
//! of an enemy able to Interdict it is Interdicted (A10.53, A10.532): the router's NMC through
//! the dice, by the one path every check takes (`morale::interdiction`). What the sources
//! leave unsettled is left to the players: which building/woods hex is the nearest one to rout
//! toward, Low Crawl (A10.52), Surrender (A20.21), and of a Good Order leader routing with a
//! broken unit (Voluntary Rout, A10.711, `decide_with_leader`) the Interdiction of the pair.

use super::entry::{check_enterable, check_leaving, enter_location, Act};
use super::step::{entry_cost, lose_wall_advantage};
use super::{held_pp, unit_ipc};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use crate::{own_unit, require_acting, require_phase};
use board::hex::Hex;
use board::los::{LosMap, Verdict};
use board::scenario::{Morale, Side, UnitId, UnitKind};
use board::terrain::{Mf, Terrain};
use game::command::Outcome;
use game::dice::DiceSource;
use game::event::{
    AllMfSpent, Allotment, Event, FireEffectApplied, FireEffectLeftToPlayers, MfAccount, WaLoss,
};
use game::event::{LeaderRouted, RoutLeftToPlayers, UnitFailedToRout, UnitRouted};
use game::phase::Phase;
use game::{Game, Unit};

/// Every routing unit has six MF for its rout, leader or squad, whatever it portages within its
/// IPC (A10.5; [RIP], [FFZ]).
pub const ROUT_MF: u16 = 6;

/// No weapon Interdicts beyond 16 hexes, whatever its normal range (A10.532).
pub const INTERDICTION_RANGE_MAX: u32 = 16;

/// `morale`: the router's broken side's morale (A10.4), which an Interdiction NMC needs.
pub(crate) fn decide(
    game: &Game,
    by: Side,
    id: &UnitId,
    to: Hex,
    morale: Option<u8>,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let unit = router(game, by, id)?;
    // A10.711: a leader routing with the unit stays with it throughout the RtPh.
    if let Some(leader) = accompanying_leader(game, unit) {
        return Err(RuleViolation::with(
            "A10.711",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " routs with the leader ",
                Piece::unit(&leader.id),
                format!(
                    ", who stays with it throughout the RtPh: `rout {id} to {to} with {}`",
                    leader.id
                )
            ],
        ));
    }
    let mut events = step(game, by, unit, None, to)?;
    let interdicted = interdiction(game, by, unit, &events, morale, dice)?;
    events.extend(interdicted);
    Ok(events)
}

/// The unit a rout step names, with or without a leader routing along: `by`'s own, in its
/// side's RtPh step, a unit that may rout (`check_router`) carrying no more than it may.
fn router<'g>(game: &'g Game, by: Side, id: &UnitId) -> Result<&'g Unit, RuleViolation> {
    require_acting(game, by, "broken units rout in their own side's RtPh step")?;
    require_phase(game, Phase::Rout, "A10.5", "broken units rout")?;
    let unit = own_unit(game, by, id)?;
    check_router(game, unit)?;
    check_load(game, unit)?;
    Ok(unit)
}

/// A unit in Melee does not rout (A10.5, A11.7), nor does a leader routing along (A10.711):
/// the one refusal for both, `more` saying what the unit may do instead.
fn check_not_in_melee(game: &Game, unit: &Unit, more: &str) -> Result<(), RuleViolation> {
    let Some(enemy) = super::in_melee_with(game, unit) else {
        return Ok(());
    };
    Err(RuleViolation::with(
        "A10.5",
        ViolationKind::UnitState,
        pieces![
            Piece::unit(&unit.id),
            " shares its Location with the Known enemy ",
            Piece::unit(&enemy.id),
            format!(" (Melee, A11.7); a unit in Melee does not rout{more}")
        ],
    ))
}

/// A router keeps what it can carry and drops the rest (A10.5); the player drops it first. A
/// leader routing with a broken unit carries his own SW as a router does, and no more
/// (A10.711: he does not raise the unit's IPC, and the unit's load is its own).
fn check_load(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    let held = held_pp(game, &unit.id);
    if held > unit_ipc(unit) {
        return Err(RuleViolation::with(
            "A10.5",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&unit.id),
                format!(
                    " possesses {held} PP, more than its IPC of {}; a routing unit carries no more than that, so drop what it cannot carry first (`drop UNIT WEAPON`)",
                    unit_ipc(unit)
                )
            ],
        ));
    }
    Ok(())
}

/// `RoutWithLeader` (Voluntary Rout, A10.711): one hex of the broken unit's rout, by the one
/// path every rout step takes (`check_router`, `step`), with a Good Order leader of its
/// Location routing along: he joins it before its first step, steps with it into each hex
/// out of his own six rout MF (`LeaderRouted`, after its `UnitRouted`), and stays with it to
/// the end of its rout (`decide` refuses the unit's step without him). He is not broken, and
/// routs only with it. Where a step is Interdicted, the unit's NMC — with the leader's DRM
/// added, and the leader eliminated if it fails, as [LDR] alone says — is the players'
/// (`FireEffectLeftToPlayers`, A10.711); so is the rout of a pinned or berserk leader, which
/// [LDR] alone bars.
pub(crate) fn decide_with_leader(
    game: &Game,
    by: Side,
    id: &UnitId,
    leader_id: &UnitId,
    to: Hex,
    morale: Option<u8>,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let unit = router(game, by, id)?;
    let leader = own_unit(game, by, leader_id)?;
    check_companion(game, unit, leader)?;
    check_load(game, leader)?;
    let mut events = step(game, by, unit, Some(leader), to)?;
    if events
        .iter()
        .any(|e| matches!(e, Event::UnitRouted(r) if !r.interdiction_by.is_empty()))
    {
        events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
            target: to,
            unit: Some(unit.id.clone()),
            rule: "A10.711".into(),
            why: format!(
                "`{id}` routed with `{leader_id}` into Open Ground in {to}, where it is Interdicted: its NMC, the leader's DRM on it and what befalls him if it fails are the players' to roll and adjudicate (`roll DR NMC`, `adjudicate`)"
            ),
        }));
        return Ok(events);
    }
    let interdicted = interdiction(game, by, unit, &events, morale, dice)?;
    events.extend(interdicted);
    Ok(events)
}

/// The Good Order leader routing with `unit` this RtPh (A10.711): a leader of its moving stack
/// in its Location, who joined its rout.
fn accompanying_leader<'g>(game: &'g Game, unit: &Unit) -> Option<&'g Unit> {
    let routing = &game.movement.moving_stack;
    if !routing.contains(&unit.id) {
        return None;
    }
    routing.iter().filter_map(|l| game.units.get(l)).find(|l| {
        l.id != unit.id
            && l.kind == UnitKind::Leader
            && l.morale != Morale::Broken
            && game.same_location(l, unit)
    })
}

/// Whether `leader` may rout with the broken `unit` (A10.711): a leader of its side, not
/// broken (a broken one routs on his own), in the unit's Location and free to leave it,
/// joining it before its rout begins or routing with it already. A berserk or pinned one is
/// the players' ([LDR] alone bars him).
fn check_companion(game: &Game, unit: &Unit, leader: &Unit) -> Result<(), RuleViolation> {
    let id = &leader.id;
    let refuse = |kind, why: String| {
        Err(RuleViolation::with(
            "A10.711",
            kind,
            pieces![Piece::unit(id), why],
        ))
    };
    super::check_not_hidden(leader, "routing")?;
    if leader.kind != UnitKind::Leader {
        return refuse(
            ViolationKind::UnitState,
            " is not a leader: only a leader routs with a broken unit".into(),
        );
    }
    if leader.morale == Morale::Broken {
        return refuse(
            ViolationKind::UnitState,
            format!(" is broken: a broken leader routs on his own (`rout {id} to HEX`)"),
        );
    }
    if leader.morale == Morale::Berserk {
        return refuse(
            ViolationKind::NotModelled,
            " is berserk: whether a berserk leader routs with a broken unit rests on one source, so the players adjudicate it".into(),
        );
    }
    if leader.concealed {
        return refuse(
            ViolationKind::NotModelled,
            " is under \"?\": a rout with a broken unit under it is not modelled by this engine; the players adjudicate it".into(),
        );
    }
    if leader.pinned {
        return refuse(
            ViolationKind::NotModelled,
            " is pinned: whether a pinned leader routs with a broken unit rests on one source, so the players adjudicate it".into(),
        );
    }
    // The router is above ground (`check_router`), so one in its Location is too (A2.8).
    if !game.same_location(leader, unit) {
        return Err(RuleViolation::with(
            "A10.711",
            ViolationKind::Geometry,
            pieces![
                Piece::unit(id),
                " is not in the Location of ",
                Piece::unit(&unit.id),
                ": a leader routs only with a broken unit he is stacked with"
            ],
        ));
    }
    check_not_in_melee(game, leader, "")?;
    let joined = accompanying_leader(game, unit).is_some_and(|l| l.id == *id);
    if !joined {
        if has_routed(game, leader) {
            return refuse(
                ViolationKind::UnitState,
                " has routed this RtPh already: he routs with one broken unit, from before its first step to the end of its rout".into(),
            );
        }
        if has_routed(game, unit) {
            return Err(RuleViolation::with(
                "A10.711",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&unit.id),
                    " has begun its rout without ",
                    Piece::unit(id),
                    ": a leader joins a broken unit's rout before it begins"
                ],
            ));
        }
    }
    Ok(())
}

/// Interdiction of the step `events` made (A10.53): where it entered Open Ground in the LOS
/// and normal range of enemies able to Interdict it (`UnitRouted`'s `interdiction_by`), the
/// router's one NMC for the hex, however many they are, against its broken side's `morale`
/// (A10.4), refused without it before any die; through the dice, by the one path every check
/// takes (`morale::interdiction`). A router is never under "?": only a unit under DM routs
/// (A10.62), and its DM counter shows it, so the roll tells its opponent nothing hidden.
fn interdiction(
    game: &Game,
    by: Side,
    unit: &Unit,
    events: &[Event],
    morale: Option<u8>,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let Some(by_whom) = events.iter().find_map(|e| match e {
        Event::UnitRouted(r) => Some(&r.interdiction_by),
        _ => None,
    }) else {
        return Ok(vec![]);
    };
    let mut after = game.clone();
    for e in events {
        game::apply(&mut after, e);
    }
    let Some(router) = after.units.get(&unit.id) else {
        return Ok(vec![]);
    };
    if by_whom.is_empty() {
        // An enemy held in Melee: that it may not Interdict rests on one source, so where it
        // alone could, the players rule.
        let held = held_in_melee(&after, &unit.id);
        if held.is_empty() {
            return Ok(vec![]);
        }
        let named: Vec<String> = held.iter().map(|e| format!("`{e}`")).collect();
        return Ok(vec![Event::FireEffectLeftToPlayers(
            FireEffectLeftToPlayers {
                target: router.hex,
                unit: Some(router.id.clone()),
                rule: "A10.532".into(),
                why: format!(
                    "`{}` routed into Open Ground in the LOS and normal range of {}, held in Melee: whether a unit in Melee may Interdict rests on one source, so the NMC is the players' to roll and adjudicate (`roll DR NMC`, `adjudicate`)",
                    router.id,
                    named.join(", ")
                ),
            },
        )]);
    }
    let Some(morale) = morale else {
        return Err(RuleViolation::with(
            "A10.53",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&unit.id),
                format!(" enters Open Ground in {}, where ", router.hex),
                Piece::unit(&by_whom[0]),
                format!(
                    " Interdicts it: its NMC is against the morale on its counter's broken side (A10.4), which its ratings do not carry; give it (`rout {} to {} morale N`)",
                    unit.id, router.hex
                )
            ],
        ));
    };
    crate::morale::rally::check_broken_morale(morale, "A10.53")?;
    let mut checked = crate::morale::interdiction(
        &after,
        by,
        router,
        morale,
        by_whom,
        after.dice_drawn,
        dice,
    )
    .map_err(|_| {
        RuleViolation::new(
            "docs/dice.md",
            ViolationKind::NoDice,
            "no dice: offline, add a `dice` line with two faces for the Interdiction NMC (A10.53) before `rout` (and one more for a Wound Severity dr, A17.11)",
        )
    })?;
    // Pinned by its Interdiction, the router routs no further this RtPh (A10.53): the MF it
    // has left are spent, so the one MF accounting refuses its next step, and where it stands
    // ADJACENT to a Known unbroken armed enemy the step ends in its Failure to Rout (A10.5).
    let pinned = checked.iter().any(|e| {
        matches!(e, Event::FireEffectApplied(FireEffectApplied { unit: u, outcome: Outcome::Pin, .. }) if *u == router.id)
    });
    if pinned {
        let allotment = allotment(router);
        checked.push(Event::AllMfSpent(AllMfSpent {
            units: vec![router.id.clone()],
            rule: "A10.53".into(),
            mf: vec![MfAccount {
                unit: router.id.clone(),
                allotment,
                spent: allotment.total,
                left: Mf::default(),
            }],
        }));
    }
    Ok(checked)
}

/// What keeps a unit from routing at all this RtPh, whatever its way: hex by hex (`rout UNIT to
/// HEX`) or through a tunnel (`rout UNITS`, B8.62), which adds only its own limits.
pub(crate) fn check_router(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    let id = &unit.id;
    let refuse = |rule: &str, kind, why: &str| {
        Err(RuleViolation::with(
            rule,
            kind,
            pieces![Piece::unit(id), why.to_string()],
        ))
    };
    super::check_not_hidden(unit, "routing")?;
    if unit.morale != Morale::Broken {
        return refuse(
            "A10.5",
            ViolationKind::UnitState,
            " is not broken; only broken units rout (a Good Order leader routs only with a broken unit of his Location: `rout UNIT to HEX with LEADER`, A10.711)",
        );
    }
    if !unit.kind.is_infantry() {
        return refuse(
            "A10.5",
            ViolationKind::NotModelled,
            " is not Infantry; only Infantry routs are modelled",
        );
    }
    if unit.underground.is_some() {
        return refuse(
            "B8.62",
            ViolationKind::UnitState,
            " is below ground; it routs only through a tunnel (`rout UNITS`)",
        );
    }
    if !unit.desperation {
        return refuse(
            "A10.62",
            ViolationKind::UnitState,
            " is broken but not under Desperation Morale: only a DM unit routs (a unit comes under DM when it breaks, when fire that could inflict an NMC attacks it, when a Known armed enemy unit is ADJACENT, or when it begins the RtPh in Open Ground in a Known enemy's LOS and normal range)",
        );
    }
    check_not_in_melee(
        game,
        unit,
        ": it may withdraw from the Melee in the CCPh (A11.2)",
    )?;
    let routing = &game.movement.moving_stack;
    if unit.pinned && routing.contains(id) && unit.mf_spent >= allotment(unit).total {
        return refuse(
            "A10.53",
            ViolationKind::UnitState,
            " is pinned, its MF spent: a router its Interdiction NMC pinned routs no further this RtPh",
        );
    }
    if game.movement.finished.contains(id) && !routing.contains(id) {
        return refuse(
            "A10.5",
            ViolationKind::UnitState,
            " has finished its rout this RtPh: units rout one at a time, and another has routed since",
        );
    }
    Ok(())
}

/// One hex of rout from where the unit stands into the adjacent `to`, with the leader routing
/// along, if one does (A10.711): the two enter as one stack, each paying out of his own rout
/// MF, the route ruled by the unit's.
fn step(
    game: &Game,
    by: Side,
    unit: &Unit,
    leader: Option<&Unit>,
    to: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    let stack: Vec<&Unit> = std::iter::once(unit).chain(leader).collect();
    check_leaving(game, &stack)?;
    let from = unit.hex;
    let cost = entry_cost(game, from, to)?;
    // What the engine has no figures for is refused as not modelled before any ruling, as
    // for every mover (`enter_location` asks it again).
    check_enterable(game, to)?;
    check_route(game, by, unit, from, to)?;
    let ids: Vec<UnitId> = stack.iter().map(|u| u.id.clone()).collect();
    let entry = enter_location(game, by, &stack, &ids, to, cost, Act::Rout)?;
    if entry.stopped() {
        // Concealed or hidden enemy units in the Location: they are revealed and the router
        // stays where it was, its MF spent, as a mover would (A12.15).
        return Ok(entry.blocked(&stack, &ids, from, to));
    }
    let mut accounts = entry.mf.into_iter();
    let mf = accounts.next().expect("one router, one account");
    let mut after = game.clone();
    for id in &ids {
        if let Some(u) = after.units.get_mut(id) {
            u.hex = to;
            u.wall_advantage = false;
        }
    }
    let interdiction_by = interdictors(&after, &unit.id);
    let mut events = lose_wall_advantage(&stack, from, to, WaLoss::Moved);
    events.push(Event::UnitRouted(UnitRouted {
        unit: unit.id.clone(),
        from,
        to,
        cost: entry.cost,
        mf,
        interdiction_by,
    }));
    if let Some(leader) = leader {
        events.push(Event::LeaderRouted(LeaderRouted {
            leader: leader.id.clone(),
            unit: unit.id.clone(),
            from,
            to,
            mf: accounts
                .next()
                .expect("a leader routing along, his account"),
        }));
    }
    Ok(events)
}

/// A router's MF: six, whoever it is and whatever it portages within its IPC (A10.5), three
/// if it is wounded (A17.2). What it pays them for is the one MF accounting of entering
/// (`movement::pay`, `Allowance::Rout`).
pub(super) fn allotment(unit: &Unit) -> Allotment {
    let total = if unit.wounded {
        Mf::whole(super::WOUNDED_MF)
    } else {
        Mf::whole(ROUT_MF)
    };
    Allotment {
        base: total,
        total,
        ..Allotment::default()
    }
}

/// The enemy units a router knows of: not hidden, not concealed, above ground, and armed —
/// Personnel or vehicles, broken or not. Dummies and counters the engine does not rule on
/// are not units it knows to be armed. Only these bind a rout (A10.5, A10.51), so nothing a
/// rout is refused for tells of a unit the side may not see.
pub(crate) fn known_enemies(game: &Game, by: Side) -> impl Iterator<Item = &Unit> {
    game.units.values().filter(move |e| {
        super::entry::known_enemy(e, by)
            && !e.eliminated
            && e.underground.is_none()
            && (e.kind.is_infantry() || e.kind == UnitKind::Vehicle)
    })
}

/// The restrictions on a router's way, hex by hex, with respect to the Known enemy units.
fn check_route(
    game: &Game,
    by: Side,
    unit: &Unit,
    from: Hex,
    to: Hex,
) -> Result<(), RuleViolation> {
    let geometry = game.scenario.geometry();
    for e in known_enemies(game, by) {
        let (Some(before), Some(after)) =
            (geometry.distance(from, e.hex), geometry.distance(to, e.hex))
        else {
            continue;
        };
        // A10.51: never toward a Known enemy unit — no hex entered is closer to one than the
        // hex left (entering its Location is the closest of all).
        if after < before {
            return Err(RuleViolation::with(
                "A10.51",
                ViolationKind::Geometry,
                pieces![
                    format!("{to} is closer than {from} to the Known enemy "),
                    Piece::unit(&e.id),
                    format!(
                        " in {} ({after} hexes, not {before}); a routing unit never moves toward a Known enemy unit",
                        e.hex
                    )
                ],
            ));
        }
        // A10.5: from a hex adjacent to an enemy unit, not into another hex adjacent to it —
        // except out of that unit's own Location.
        if before == 1 && after == 1 {
            return Err(RuleViolation::with(
                "A10.5",
                ViolationKind::Geometry,
                pieces![
                    format!("{from} and {to} are both adjacent to the Known enemy "),
                    Piece::unit(&e.id),
                    format!(
                        " in {}; a routing unit adjacent to an enemy unit does not move to another hex adjacent to it",
                        e.hex
                    )
                ],
            ));
        }
    }
    // A10.51: a router that has reached a building or woods hex not adjacent to a Known enemy
    // unit stops there, unless the next hex it enters is building or woods again. Its first
    // step leaves the hex it began in, which it had not reached by routing.
    let reached = unit.mf_spent > Mf::default();
    let safe_here =
        known_enemies(game, by).all(|e| geometry.distance(from, e.hex).is_none_or(|d| d > 1));
    if reached && safe_here && is_rout_cover(game, from) && !is_rout_cover(game, to) {
        return Err(RuleViolation::new(
            "A10.51",
            ViolationKind::Terrain,
            format!(
                "the router has reached {from}, a building or woods hex no Known enemy unit is adjacent to; it stops there unless the next hex it enters is building or woods too, and {to} is not"
            ),
        ));
    }
    Ok(())
}

/// A building or woods hex: what a router heads for and stops in (A10.51).
fn is_rout_cover(game: &Game, hex: Hex) -> bool {
    game.scenario.hexes.get(&hex).is_some_and(|s| {
        matches!(
            s.terrain,
            Terrain::Woods | Terrain::StoneBuilding | Terrain::WoodenBuilding
        )
    })
}

/// Why a broken unit must rout, read from where it stands now (A10.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MustRout {
    /// ADJACENT to (or in the Location of) this Known, unbroken, armed enemy unit.
    Adjacent(UnitId),
    /// In Open Ground in this Known unbroken enemy's LOS and within its normal range.
    Exposed(UnitId, u32),
}

/// Whether `unit` must rout this RtPh, and because of which Known enemy (A10.5): ADJACENT to a
/// Known unbroken armed enemy, or in Open Ground (A10.531) in the LOS and normal range of a
/// Known unbroken enemy. A unit in Melee does not rout, nor one not under Desperation Morale,
/// which may not (A10.62): one that began the RtPh so placed is under DM already, and one a
/// revealed enemy finds in the open only later in the RtPh is not.
pub fn must_rout(game: &Game, unit: &Unit) -> Option<MustRout> {
    if unit.morale != Morale::Broken
        || !unit.desperation
        || unit.eliminated
        || unit.hidden
        || unit.underground.is_some()
        || !unit.kind.is_infantry()
        || super::in_melee_with(game, unit).is_some()
    {
        return None;
    }
    let geometry = game.scenario.geometry();
    if let Some(e) = known_enemies(game, unit.side).find(|e| {
        e.is_good_order()
            && e.kind.is_infantry()
            && geometry.distance(unit.hex, e.hex).is_some_and(|d| d <= 1)
    }) {
        return Some(MustRout::Adjacent(e.id.clone()));
    }
    exposed_to(game, &unit.id)
        .into_iter()
        .next()
        .map(|(e, range)| MustRout::Exposed(e, range))
}

/// The Known Good Order enemy Infantry that have `id` in Open Ground (A10.531) in their LOS
/// and within their normal range, with that range: the enemies that force a broken unit to
/// rout, and that may Interdict a router (A10.53). Open Ground is read as A10.531 defines it
/// for a hypothetical Defensive First Fire: a clear LOS (a Hindrance would cancel FFMO) to a
/// unit with no positive TEM against that enemy's direct fire. An enemy without a printed
/// normal range (a leader, a hero) is not counted.
pub(crate) fn exposed_to(game: &Game, id: &UnitId) -> Vec<(UnitId, u32)> {
    let Some(unit) = game.units.get(id) else {
        return vec![];
    };
    let geometry = game.scenario.geometry();
    let mut map: Option<&LosMap> = None;
    let mut out = vec![];
    for e in known_enemies(game, unit.side).filter(|e| e.is_good_order() && e.kind.is_mmc()) {
        let Some((_, normal)) = crate::fire::resolution::fp_and_range(e) else {
            continue;
        };
        let Some(range) = geometry.distance(e.hex, unit.hex) else {
            continue;
        };
        if range > normal {
            continue;
        }
        let map = *map.get_or_insert_with(|| LosMap::of(&game.scenario));
        let clear = crate::los::verdict_on(
            game,
            map,
            &crate::los::Spot::Unit(e.id.clone()),
            &crate::los::Spot::Unit(id.clone()),
        ) == Ok(Verdict::Clear);
        if !clear {
            continue;
        }
        let tem = crate::tem::query(
            game,
            std::slice::from_ref(&e.id),
            id,
            crate::tem::Fire::Direct,
        );
        if tem.is_ok_and(|t| t.tem <= 0) {
            out.push((e.id.clone(), range));
        }
    }
    out
}

/// The enemies able to Interdict `id` where it stands (A10.53, A10.532): of those that have
/// it in Open Ground in their LOS and normal range (`exposed_to`: Known, Good Order, an MMC's
/// printed range, no Hindrance, no TEM), one with at least one FP, within 16 hexes, not CX,
/// not pinned (its FP halved), not held in Melee. Deviation: Encircled, Spotted Fire, Guns,
/// AFVs and SW are not modelled, so an MMC's own FP and range are read alone.
pub(crate) fn interdictors(game: &Game, id: &UnitId) -> Vec<UnitId> {
    could_interdict(game, id)
        .filter(|e| super::in_melee_with(game, e).is_none())
        .map(|e| e.id.clone())
        .collect()
}

/// The enemies that could Interdict `id` but for being held in Melee (A10.532, A11.15).
fn held_in_melee(game: &Game, id: &UnitId) -> Vec<UnitId> {
    could_interdict(game, id)
        .filter(|e| super::in_melee_with(game, e).is_some())
        .map(|e| e.id.clone())
        .collect()
}

/// `interdictors` before Melee is looked at.
fn could_interdict<'g>(game: &'g Game, id: &UnitId) -> impl Iterator<Item = &'g Unit> {
    exposed_to(game, id)
        .into_iter()
        .filter(|(_, range)| *range <= INTERDICTION_RANGE_MAX)
        .filter_map(|(e, _)| game.units.get(&e))
        .filter(|e| {
            !e.cx
                && !e.pinned
                && crate::fire::resolution::fp_and_range(e).is_some_and(|(fp, _)| fp >= 1)
        })
}

/// Whether `unit` has routed (or begun to) this RtPh.
fn has_routed(game: &Game, unit: &Unit) -> bool {
    game.movement.moving_stack.contains(&unit.id) || game.movement.finished.contains(&unit.id)
}

/// Whether `unit` could rout one more hex now (its IPC aside: what it cannot carry it drops).
enum Probe {
    /// Some hex can be entered.
    CanStep,
    /// None can, and the engine refused one as not modelled: it cannot tell whether the unit
    /// could rout there, so it does not rule the Failure to Rout.
    NotModelled(RuleViolation),
    /// None can, each refused by a rule.
    Cannot,
}

fn probe(game: &Game, unit: &Unit) -> Probe {
    let mut not_modelled = None;
    let mut note = |v: RuleViolation| {
        if v.kind == ViolationKind::NotModelled && not_modelled.is_none() {
            not_modelled = Some(v);
        }
    };
    match check_router(game, unit) {
        Err(v) => note(v),
        Ok(()) => {
            for to in game.scenario.geometry().neighbours(unit.hex) {
                match step(game, unit.side, unit, accompanying_leader(game, unit), to) {
                    Ok(_) => return Probe::CanStep,
                    Err(v) => note(v),
                }
            }
        }
    }
    not_modelled.map_or(Probe::Cannot, Probe::NotModelled)
}

/// What the RtPh step of `by` still owes before it ends (A10.5), for each broken unit of the
/// side in order: one that must rout and has not, or that has routed and stands ADJACENT to a
/// Known unbroken armed enemy. `Err` names the first that can still rout a hex; the others,
/// which cannot, fail to rout (`UnitFailedToRout`) — or, where the engine refused a way as
/// not modelled, are left to the players (`RoutLeftToPlayers`) — to go with the step's end.
pub(crate) fn end_of_rout_step(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    let mut failed = vec![];
    for unit in game.units.values().filter(|u| u.side == by) {
        let why = match must_rout(game, unit) {
            Some(why @ MustRout::Adjacent(_)) => why,
            Some(why @ MustRout::Exposed(..)) if !has_routed(game, unit) => why,
            _ => continue,
        };
        let probed = probe(game, unit);
        if let Probe::NotModelled(v) = probed {
            failed.push(Event::RoutLeftToPlayers(RoutLeftToPlayers {
                unit: unit.id.clone(),
                rule: v.rule.clone(),
                why: v.detail.clone(),
            }));
            continue;
        }
        if matches!(probed, Probe::CanStep) {
            let reason = match &why {
                MustRout::Adjacent(e) if has_routed(game, unit) => pieces![
                    Piece::unit(&unit.id),
                    " has begun its rout and stands ADJACENT to the Known unbroken enemy ",
                    Piece::unit(e),
                    format!(", where no routing unit ends the RtPh; rout it on (`rout {} to HEX`)", unit.id)
                ],
                MustRout::Adjacent(e) => pieces![
                    Piece::unit(&unit.id),
                    " is broken and ADJACENT to the Known unbroken enemy ",
                    Piece::unit(e),
                    format!(", so it must rout before the step ends (`rout {} to HEX`)", unit.id)
                ],
                MustRout::Exposed(e, range) => pieces![
                    Piece::unit(&unit.id),
                    " is broken and in Open Ground in the LOS of the Known unbroken enemy ",
                    Piece::unit(e),
                    format!(
                        " within its normal range ({range} hexes), so it must rout before the step ends (`rout {} to HEX`)",
                        unit.id
                    )
                ],
            };
            return Err(RuleViolation::with(
                "A10.5",
                ViolationKind::UnitState,
                reason,
            ));
        }
        let next_to = match why {
            MustRout::Adjacent(e) => Some(e),
            MustRout::Exposed(..) => None,
        };
        failed.push(Event::UnitFailedToRout(UnitFailedToRout {
            unit: unit.id.clone(),
            next_to,
        }));
    }
    Ok(failed)
}
