//! Sewers and tunnels (B8): entering, moving under "Sewer?" (or "Lost?"), the Sewer Emergence
//! Chart, coming up, tunnels, and their destruction. Every die is rolled through the dice
//! source `decide` is handed and recorded in a `DiceRolled` event with its modifiers.

use super::{own_unit, require_acting, require_phase};
use crate::movement::rout::known_enemies;
use crate::movement::{
    allotment, check_free, check_router, check_together, held_pp, lose_wall_advantage, named_stack,
    unit_ipc, StackAct,
};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind, Words};
use board::hex::Hex;
use board::scenario::{Road, Scenario, Side, UnitId, UnitKind};
use board::terrain::Terrain;
use game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use game::event::MfAccount;
use game::event::{
    AllMfSpent, DiceRolled, ManholeDeclaredUnseen, SewerEmergenceRolled, SewerEntryFailed,
    SewerStackLost, SewerStackMoved, TunnelDestroyed, TunnelEntranceDiscovered, TunnelUseSeen,
    TunnelUseSighted, UnitsEnteredSewer, UnitsEnteredTunnel, UnitsMomentarilyRevealed,
    UnitsRoutedThroughTunnel, UnitsSurfaced,
};
use game::event::{Event, WaLoss};
use game::phase::Phase;
use game::{Emergence, Game, Underground, Unit};

/// How far sewer movement reaches in one MPh: three hexes (B8.41).
pub(crate) const SEWER_REACH_HEXES: u32 = 3;

/// A Manhole Location: a marked hex, or a paved road hex where roads cross at least three of
/// its hexsides (B8.1) — unless rubble or a Blaze covers it, when it is treated as no Manhole
/// (B8.5).
pub fn is_manhole(scenario: &Scenario, hex: Hex) -> bool {
    manhole_beneath(scenario, hex)
        && scenario
            .hexes
            .get(&hex)
            .is_some_and(|s| !s.rubble && !s.blaze)
}

/// The sewer beneath a Manhole, covered or not: sewer movement may still end beneath a Manhole
/// under rubble or a Blaze (B8.5).
pub(crate) fn manhole_beneath(scenario: &Scenario, hex: Hex) -> bool {
    let Some(spec) = scenario.hexes.get(&hex) else {
        return false;
    };
    if spec.manhole {
        return true;
    }
    spec.road == Some(Road::Paved)
        && scenario
            .geometry()
            .hexsides(hex)
            .into_iter()
            .filter(|s| scenario.hexside_spec(*s).is_some_and(|h| h.road))
            .count()
            >= 3
}

/// A refusal whose words may name units: they go as typed pieces, each rendered for its reader.
fn refuse(rule: &str, kind: ViolationKind, why: impl Words) -> RuleViolation {
    RuleViolation::with(rule, kind, why)
}

/// Which roll is asked for: whose, what for, under which rule, and how many dice.
struct Ask {
    side: Side,
    purpose: RollPurpose,
    rule: &'static str,
    count: usize,
}

/// Rolls the dice asked for, or refuses when the source has none.
fn roll(
    game: &Game,
    dice: &mut dyn DiceSource,
    ask: Ask,
    modifiers: Vec<Modifier>,
    outcome: impl Fn(i16) -> String,
) -> Result<Roll, RuleViolation> {
    let Ask {
        side,
        purpose,
        rule,
        count,
    } = ask;
    let faces = (0..count)
        .map(|_| dice.roll_die())
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| {
            refuse(
                rule,
                ViolationKind::NoDice,
                "this needs a roll and no die was given (offline, add a `dice` line first)",
            )
        })?;
    let raw: i16 = faces.iter().map(|d| i16::from(*d)).sum();
    let final_result = raw + modifiers.iter().map(|m| i16::from(m.value)).sum::<i16>();
    Ok(Roll {
        side,
        purpose,
        rule: rule.into(),
        first_draw: game.dice_drawn,
        dice: faces,
        modifiers,
        final_result,
        outcome: outcome(final_result),
    })
}

fn modifier(value: i8, reason: impl Into<String>, rule: &str) -> Modifier {
    Modifier {
        value,
        reason: reason.into(),
        rule: rule.into(),
    }
}

/// Legal destinations for a sewer stack now beneath `from`: the sewer beneath Manholes within
/// three hexes (covered by rubble or a Blaze or not, B8.5) by a way beneath no Water Obstacle
/// (B8.4), never one with rubble in it (B8.5),
/// never a sewer hex an enemy unit holds (B8.41, B8.44).
pub fn sewer_destinations(game: &Game, side: Side, from: Hex) -> Vec<Hex> {
    let geometry = game.scenario.geometry();
    game.scenario
        .hexes
        .iter()
        .filter(|(_, spec)| !spec.sewer_rubble)
        .map(|(h, _)| *h)
        .filter(|h| *h != from && manhole_beneath(&game.scenario, *h))
        .filter(|h| {
            geometry
                .distance(from, *h)
                .is_some_and(|d| d <= SEWER_REACH_HEXES)
        })
        // Never beneath a Water Obstacle (B8.4).
        .filter(|h| {
            board::scenario::way_beneath(geometry, &game.scenario.hexes, from, *h, |s| {
                !s.water_obstacle
            })
        })
        .filter(|h| {
            !game.units_in(*h).any(|u| match u.underground {
                Some(Underground::Sewer { moved, .. }) => u.side != side || !moved,
                _ => false,
            })
        })
        .collect()
}

fn in_sewer(unit: &Unit) -> bool {
    matches!(unit.underground, Some(Underground::Sewer { .. }))
}

/// `SewerMove`.
pub(super) fn decide_move(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    to: Hex,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER moves in the MPh")?;
    require_phase(game, Phase::Movement, "B8.41", "sewer movement happens")?;
    if !game.scenario.ssr.sewers_usable {
        return Err(refuse(
            "B8.1",
            ViolationKind::Terrain,
            "sewers are not usable in this scenario (no SSR allows them)",
        ));
    }
    let units = named_stack(game, by, ids, StackAct::Below("B8.41"))?;
    check_together(game, &units, StackAct::Below("B8.41"))?;
    let from = units[0].hex;
    // The stack: units going down the Manhole now, and units already in the sewer beneath it
    // that have yet to move this MPh — all in the one sewer Location, so one combined stack.
    let (down, up): (Vec<&Unit>, Vec<&Unit>) = units.iter().partition(|u| in_sewer(u));
    // Every unit of a sewer Location that still has to move moves together (B8.41).
    let left_behind = game.units_in(from).find(|u| {
        u.side == by
            && matches!(u.underground, Some(Underground::Sewer { moved: false, .. }))
            && !ids.contains(&u.id)
    });
    if let Some(u) = left_behind {
        return Err(refuse(
            "B8.41",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&u.id),
                " is in the same sewer Location and must move with the stack"
            ],
        ));
    }
    if !up.is_empty() && game.movement.sewer_entries.contains(&from) {
        return Err(refuse(
            "B8.41",
            ViolationKind::UnitState,
            format!(
                "units went down the Manhole in {from} this MPh and moved on; units entering the same sewer Location at the start of the MPh move as one combined stack with them"
            ),
        ));
    }
    let mut events = vec![];
    for u in &down {
        check_sewer_unit(game, u, true, false)?;
    }
    for u in &up {
        check_sewer_unit(game, u, false, false)?;
    }
    // Going down a Manhole leaves the unit's Location: a place `move` may not leave as
    // not modelled (a foxhole, a pillbox, an upper level), going down may not either.
    super::movement::check_leaving(game, &up)?;
    if down
        .iter()
        .any(|u| matches!(u.underground, Some(Underground::Sewer { moved: true, .. })))
    {
        return Err(refuse(
            "B8.41",
            ViolationKind::UnitState,
            "the stack has moved in the sewer this MPh already",
        ));
    }
    // Every check that can refuse comes before the first die: a refusal must never tell the
    // player what a roll would have been.
    let options = sewer_destinations(game, by, from);
    if !options.contains(&to) {
        return Err(refuse(
            "B8.41",
            ViolationKind::Geometry,
            format!(
                "{to} is not a Manhole Location within {SEWER_REACH_HEXES} hexes of {from} free of enemy sewer units and of friendly ones yet to move; the choices are {}",
                names(&options)
            ),
        ));
    }
    if !up.is_empty() {
        let up_ids: Vec<UnitId> = up.iter().map(|u| u.id.clone()).collect();
        let (entered, passed) = enter_sewer(game, by, &up, &up_ids, from, dice)?;
        events.extend(entered);
        if !passed {
            return Ok(events); // the leader's 4TC failed: nobody goes down this MPh
        }
        // Going down leaves the Location above: WA goes as for any mover (B9.41).
        events.extend(lose_wall_advantage(&up, from, to, WaLoss::Moved));
    }
    // Who moves the stack: a dr, +1 while lost; 6–7 lost, the DEFENDER designates (B8.41).
    let lost_now = units
        .iter()
        .any(|u| matches!(u.underground, Some(Underground::Sewer { lost: true, .. })));
    let mods = if lost_now {
        vec![modifier(1, "the stack is lost", "B8.41")]
    } else {
        vec![]
    };
    let mut after = game.clone();
    for e in &events {
        game::apply(&mut after, e);
    }
    let lost_roll = roll(
        &after,
        dice,
        Ask {
            side: by,
            purpose: RollPurpose::SewerLost,
            rule: "B8.41",
            count: 1,
        },
        mods,
        |f| {
            if f >= 6 {
                "lost: the DEFENDER designates where the stack goes".into()
            } else {
                "the ATTACKER moves the stack".into()
            }
        },
    )?;
    let lost = lost_roll.final_result >= 6;
    events.push(Event::DiceRolled(DiceRolled { roll: lost_roll }));
    if lost {
        events.push(Event::SewerStackLost(SewerStackLost {
            units: ids.to_vec(),
            at: from,
            defender: by.opponent(),
            options,
        }));
    } else {
        events.push(Event::SewerStackMoved(SewerStackMoved {
            units: ids.to_vec(),
            from,
            to,
            designated_by: None,
        }));
    }
    Ok(events)
}

/// B8.4/B8.45/B8.61 unit checks for going or being below ground: into a tunnel when
/// `tunnel`, else into a sewer.
fn check_sewer_unit(
    game: &Game,
    unit: &Unit,
    below: bool,
    tunnel: bool,
) -> Result<(), RuleViolation> {
    let id = &unit.id;
    if game.upper_level(unit).is_some() {
        // Manholes and tunnel entrances are ground-level Locations (B8.1, B8.6).
        return Err(refuse(
            if tunnel { "B8.61" } else { "B8.4" },
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " is on an upper level of its hex; sewers and tunnels are entered from its ground-level Location"],
        ));
    }
    if !unit.kind.is_infantry() && unit.kind != UnitKind::Dummy {
        return Err(refuse(
            "B8.4",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " is not Infantry; only Infantry enter sewers"
            ],
        ));
    }
    // Hidden, broken or berserk, pinned: the one gate of a unit that moves (`check_free`).
    check_free(
        game,
        unit,
        StackAct::Below(if tunnel { "B8.61" } else { "B8.4" }),
    )?;
    if matches!(unit.underground, Some(Underground::Tunnel)) {
        return Err(refuse(
            "B8.61",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " is in a tunnel; it comes out in the APh"],
        ));
    }
    if !below {
        crate::movement::check_not_prep_fired(game, unit)?;
        if unit.mf_spent > board::terrain::Mf::default()
            || game.movement.moving_stack.contains(id)
            || game.movement.finished.contains(id)
        {
            return Err(refuse(
                "B8.4",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " has moved this MPh; a sewer is entered only at the start of the MPh"
                ],
            ));
        }
        if held_pp(game, id) > unit_ipc(unit) {
            return Err(refuse(
                "B8.4",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " portages more than its IPC, which units in a sewer may not"
                ],
            ));
        }
    }
    Ok(())
}

/// Going down a Manhole (B8.4): in a Manhole Location, and with SSR capability or a leader
/// passing a 4TC there (a Task Check passes when its Final DR is at most the leader's morale);
/// for all MF. Returns the events and whether the units went down.
fn enter_sewer(
    game: &Game,
    by: Side,
    units: &[&Unit],
    ids: &[UnitId],
    at: Hex,
    dice: &mut dyn DiceSource,
) -> Result<(Vec<Event>, bool), RuleViolation> {
    if !is_manhole(&game.scenario, at) {
        let covered = manhole_beneath(&game.scenario, at);
        return Err(refuse(
            if covered { "B8.5" } else { "B8.4" },
            ViolationKind::Terrain,
            if covered {
                format!("the Manhole in {at} is covered by rubble or a Blaze, so it is no Manhole")
            } else {
                format!("{at} is no Manhole Location; sewers are entered only from one")
            },
        ));
    }
    if game
        .units_in(at)
        .any(|u| u.side != by && matches!(u.underground, Some(Underground::Sewer { .. })))
    {
        return Err(refuse(
            "B8.44",
            ViolationKind::Geometry,
            format!("the sewer beneath {at} holds enemy units; no unit enters an enemy-occupied sewer hex"),
        ));
    }
    if let Some(u) = units
        .iter()
        .find(|u| game.movement.sewer_check_failed.contains(&u.id))
    {
        return Err(refuse(
            "B8.4",
            ViolationKind::UnitState,
            pieces![
                "the 4TC to take ",
                Piece::unit(&u.id),
                " into the sewer failed this MPh"
            ],
        ));
    }
    let mut events = vec![];
    if !game.scenario.ssr.sewer_movement {
        let leader = units
            .iter()
            .find(|u| u.kind == UnitKind::Leader)
            .ok_or_else(|| {
                refuse(
                    "B8.4",
                    ViolationKind::UnitState,
                    "without sewer movement capability by SSR, a leader must go with the units and pass a 4TC",
                )
            })?;
        let morale: i16 = leader
            .ratings
            .split(['-', '+'])
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        let check = roll(
            game,
            dice,
            Ask {
                side: by,
                purpose: RollPurpose::SewerLeaderTaskCheck,
                rule: "B8.4",
                count: 2,
            },
            vec![modifier(4, "Task Check +4 (4TC)", "B8.4")],
            |f| {
                if f <= morale {
                    format!("passed (≤{morale}): the units may enter the sewer")
                } else {
                    format!("failed (≤{morale} needed): the units stay above ground")
                }
            },
        )?;
        let passed = check.final_result <= morale;
        events.push(Event::DiceRolled(DiceRolled { roll: check }));
        if !passed {
            events.push(Event::SewerEntryFailed(SewerEntryFailed {
                units: ids.to_vec(),
            }));
            return Ok((events, false));
        }
    }
    events.push(all_mf(game, units, ids, "B8.4"));
    events.push(Event::UnitsEnteredSewer(UnitsEnteredSewer {
        units: ids.to_vec(),
        hex: at,
    }));
    Ok((events, true))
}

fn names(hexes: &[Hex]) -> String {
    if hexes.is_empty() {
        return "none".into();
    }
    hexes
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `DesignateSewer`: the DEFENDER places a lost stack (B8.41).
pub(super) fn decide_designate(
    game: &Game,
    by: Side,
    to: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    let Some(d) = &game.sewer_designation else {
        return Err(refuse(
            "B8.41",
            ViolationKind::WrongPhase,
            "no lost sewer stack is waiting for a designation",
        ));
    };
    if d.defender != by {
        return Err(refuse(
            "B8.41",
            ViolationKind::WrongSide,
            "the DEFENDER designates where a lost stack goes",
        ));
    }
    if !d.options.contains(&to) {
        return Err(refuse(
            "B8.41",
            ViolationKind::Geometry,
            format!("{to} is not one of the choices: {}", names(&d.options)),
        ));
    }
    Ok(vec![Event::SewerStackMoved(SewerStackMoved {
        units: d.units.clone(),
        from: d.from,
        to,
        designated_by: Some(by),
    })])
}

/// At the end of the MPh: every sewer stack of the ATTACKER must have moved (B8.41); then
/// each rolls on the Sewer Emergence Chart (B8.42).
pub(super) fn end_of_movement(
    game: &Game,
    by: Side,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let stacks = sewer_stacks(game, by);
    // A stack that cannot move — a unit of it pinned, or no Manhole it may reach — is not
    // held to it: the MPh must still end.
    if let Some((hex, _)) = stacks.iter().find(|(hex, units)| {
        units
            .iter()
            .any(|u| matches!(u.underground, Some(Underground::Sewer { moved: false, .. })))
            && units
                .iter()
                .all(|u| check_sewer_unit(game, u, true, false).is_ok())
            && !sewer_destinations(game, by, *hex).is_empty()
    }) {
        return Err(refuse(
            "B8.41",
            ViolationKind::UnitState,
            format!(
                "the sewer stack beneath {hex} has not moved; units in a sewer must move every MPh"
            ),
        ));
    }
    let mut after = game.clone();
    let mut events = vec![];
    for (hex, units) in stacks {
        let (mods, reveal) = emergence_modifiers(game, by, hex, &units);
        let r = roll(
            &after,
            dice,
            Ask {
                side: by,
                purpose: RollPurpose::SewerEmergence,
                rule: "B8.42",
                count: 1,
            },
            mods,
            |f| emergence_of(f).describe().into(),
        )?;
        let result = emergence_of(r.final_result);
        let roll_event = Event::DiceRolled(DiceRolled { roll: r });
        game::apply(&mut after, &roll_event);
        if let Some(enemy) = reveal {
            events.push(Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed {
                units: vec![enemy],
            }));
        }
        events.push(roll_event);
        events.push(Event::SewerEmergenceRolled(SewerEmergenceRolled {
            units: units.iter().map(|u| u.id.clone()).collect(),
            hex,
            result,
        }));
    }
    Ok(events)
}

fn emergence_of(final_dr: i16) -> Emergence {
    match final_dr {
        i16::MIN..=4 => Emergence::MayEmerge,
        5 | 6 => Emergence::CannotEmerge,
        _ => Emergence::Discovered,
    }
}

/// The side's sewer stacks, by hex.
fn sewer_stacks(game: &Game, side: Side) -> Vec<(Hex, Vec<&Unit>)> {
    let mut stacks: Vec<(Hex, Vec<&Unit>)> = vec![];
    for u in game
        .units
        .values()
        .filter(|u| u.side == side && !u.eliminated && in_sewer(u))
    {
        match stacks.iter_mut().find(|(h, _)| *h == u.hex) {
            Some((_, units)) => units.push(u),
            None => stacks.push((u.hex, vec![u])),
        }
    }
    stacks
}

/// The Sewer Emergence drm (B8.42), and the real enemy unit in an adjacent sewer Location that
/// must be momentarily revealed to earn its +1.
fn emergence_modifiers(
    game: &Game,
    side: Side,
    hex: Hex,
    units: &[&Unit],
) -> (Vec<Modifier>, Option<UnitId>) {
    let mut mods = vec![];
    let above = || game.units_in(hex).filter(|u| u.underground.is_none());
    if above().any(|u| u.side == side) {
        mods.push(modifier(
            -1,
            "friendly unit(s) in the Manhole Location",
            "B8.42",
        ));
    }
    let spec = &game.scenario.hexes[&hex];
    let building = matches!(
        spec.terrain,
        Terrain::StoneBuilding | Terrain::WoodenBuilding
    );
    let enemy_above = above().any(|u| u.side != side);
    if building && !enemy_above {
        mods.push(modifier(
            -1,
            "Manhole in a building Location free of enemy units",
            "B8.42",
        ));
    } else if spec.road.is_some() {
        match road_manhole_unseen(game, side, hex) {
            Some(true) => mods.push(modifier(
                -1,
                "road Manhole out of Known enemy LOS, or every such LOS Hindered by +2 or more (traced)",
                "B8.42",
            )),
            Some(false) => {}
            None if game.unseen_manholes.contains(&hex) => mods.push(modifier(
                -1,
                "road Manhole out of Known enemy LOS (declared: the map cannot trace it)",
                "B8.42",
            )),
            None => {}
        }
    }
    if units
        .iter()
        .any(|u| matches!(u.underground, Some(Underground::Sewer { lost: true, .. })))
    {
        mods.push(modifier(1, "the stack is lost", "B8.42"));
    }
    let known_mmc = above()
        .filter(|u| {
            u.side != side && u.kind.is_mmc() && u.is_good_order() && !u.concealed && !u.hidden
        })
        .count();
    for _ in 0..known_mmc {
        mods.push(modifier(
            1,
            "Known enemy Good Order MMC in the Manhole Location",
            "B8.42",
        ));
    }
    let adjacent_enemy = game.units.values().find(|u| {
        u.side != side
            && !u.eliminated
            && u.kind != UnitKind::Dummy
            && in_sewer(u)
            && game.scenario.geometry().is_adjacent(u.hex, hex)
    });
    if adjacent_enemy.is_some() {
        mods.push(modifier(
            1,
            "enemy unit in an adjacent sewer Location (momentarily revealed)",
            "B8.42",
        ));
    }
    (mods, adjacent_enemy.map(|u| u.id.clone()))
}

/// The side's own units named in a command as one stack (`named_stack`, as `move` names its
/// stack: at least one, at most `STACK_UNITS_MAX`, each once), all in one Location
/// (`check_together`: the street and the sewer beneath a Manhole counting as one, B8.41).
fn own_units_together<'g>(
    game: &'g Game,
    by: Side,
    ids: &[UnitId],
    rule: &'static str,
) -> Result<Vec<&'g Unit>, RuleViolation> {
    let units = named_stack(game, by, ids, StackAct::Below(rule))?;
    check_together(game, &units, StackAct::Below(rule))?;
    Ok(units)
}

/// `Surface`: in the APh, a sewer stack that may emerge, or units in a tunnel (which must),
/// come up into their hex, concealed (B8.42, B8.61).
pub(super) fn decide_surface(
    game: &Game,
    by: Side,
    ids: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER advances in the APh")?;
    require_phase(
        game,
        Phase::Advance,
        "B8.41",
        "units come up from below ground",
    )?;
    let units = named_stack(game, by, ids, StackAct::Surface)?;
    check_together(game, &units, StackAct::Surface)?;
    let first = units[0];
    for u in &units {
        match u.underground {
            None => {
                return Err(refuse(
                    "B8.42",
                    ViolationKind::UnitState,
                    pieces![Piece::unit(&u.id), " is not below ground"],
                ))
            }
            Some(Underground::Sewer { .. }) if !is_manhole(&game.scenario, u.hex) => {
                return Err(refuse(
                    "B8.5",
                    ViolationKind::Terrain,
                    pieces![
                        format!("the Manhole in {} is covered by rubble or a Blaze; ", u.hex),
                        Piece::unit(&u.id),
                        " cannot come up there"
                    ],
                ))
            }
            Some(Underground::Sewer { emergence, .. })
                if emergence != Some(Emergence::MayEmerge) =>
            {
                return Err(refuse(
                    "B8.42",
                    ViolationKind::UnitState,
                    pieces![
                        Piece::unit(&u.id),
                        " may not emerge this Game Turn: its Sewer Emergence dr did not allow it"
                    ],
                ))
            }
            _ => {}
        }
        // Coming up is the unit's advance (B8.41, B8.61): what keeps a unit from advancing
        // keeps it below (A4.7: broken or pinned units do not advance), by the one gate.
        super::movement::check_free(game, u, StackAct::Surface)?;
    }
    // Coming up is putting the units into the hex's ground-level Location, so it checks what
    // every entry checks of the Location itself (`check_enterable`): terrain and fortifications
    // the engine does not model are refused as not modelled, as a `move` there is. The rest
    // of the act is B8's own: the units come up concealed (B8.42, B8.61), into enemy-occupied
    // Locations too — an advance, where A4.14 does not bar enemy units (A4.7, A11.1), and a
    // tunnel's exit even so (B8.61) — without MF, and concealed or hidden enemy units there
    // stay as they are until the CCPh (A12.14), as for `advance`.
    super::movement::check_enterable(game, first.hex)?;
    let mut events = vec![Event::UnitsSurfaced(UnitsSurfaced {
        units: ids.to_vec(),
        hex: first.hex,
    })];
    if first.underground == Some(Underground::Tunnel) {
        // Advancing out of the exit is a use of it (B8.61, B8.63).
        events.extend(sighting(game, by, first.hex));
    }
    Ok(events)
}

/// At the end of the APh, units in a tunnel must have come out (B8.61). Coming out is the
/// unit's advance, so only a unit the one gate of an advancing unit lets go (`check_free`) is
/// held to it: one broken or pinned in the tunnel cannot advance (A4.7) and stays below — what
/// becomes of it the sources at hand do not say — rather than holding the APh up for ever.
pub(super) fn end_of_advance(game: &Game, by: Side) -> Result<(), RuleViolation> {
    match game.units.values().find(|u| {
        u.side == by
            && !u.eliminated
            && u.underground == Some(Underground::Tunnel)
            && super::movement::check_free(game, u, StackAct::Surface).is_ok()
    }) {
        Some(u) => Err(refuse(
            "B8.61",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&u.id),
                format!(" must advance out of the tunnel at {} in this APh", u.hex)
            ],
        )),
        None => Ok(()),
    }
}

/// `EnterTunnel`: Good Order (or dummy) Infantry of the owning side, at the start of the MPh,
/// in one of its tunnel's entrance Locations, for all MF; they wait beneath "Sewer?" at the
/// other entrance (B8.61).
pub(super) fn decide_enter_tunnel(
    game: &Game,
    by: Side,
    ids: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER moves in the MPh")?;
    require_phase(game, Phase::Movement, "B8.61", "units enter tunnels")?;
    let units = own_units_together(game, by, ids, "B8.61")?;
    let from = units[0].hex;
    let exit = tunnel_exit(game, by, from, "B8.6")?;
    for u in &units {
        check_sewer_unit(game, u, false, true)?;
    }
    super::movement::check_leaving(game, &units)?;
    // The units must come out at the exit in the APh (B8.61): an exit the engine cannot put
    // them into (`check_enterable`, as `move` and `surface` check it) is refused now, rather
    // than leaving them in a tunnel they could never leave.
    super::movement::check_enterable(game, exit)?;
    // A tunnel is never overstacked (B8.61): those already in it, going either way, and those
    // entering.
    let mut stack = board::scenario::Stack::default();
    game.units
        .values()
        .filter(|u| u.side == by && !u.eliminated && (u.hex == exit || u.hex == from))
        .filter(|u| u.underground == Some(Underground::Tunnel))
        .chain(units.iter().copied())
        .for_each(|u| stack.add(u.kind));
    if stack.overstacked() {
        return Err(refuse(
            "B8.61",
            ViolationKind::UnitState,
            format!(
                "the tunnel between {from} and {exit} would hold {} squad equivalents and {} SMC; a tunnel is never overstacked (A5.1 limits: 3 and {})",
                f64::from(stack.half_squads) / 2.0,
                stack.smc,
                board::scenario::STACK_SMC_MAX
            ),
        ));
    }
    // Going into the tunnel leaves the entrance's Location: WA goes as for any mover (B9.41).
    let mut events = lose_wall_advantage(&units, from, exit, WaLoss::Moved);
    events.extend([
        all_mf(game, &units, ids, "B8.61"),
        Event::UnitsEnteredTunnel(UnitsEnteredTunnel {
            units: ids.to_vec(),
            side: by,
            from,
            exit,
        }),
    ]);
    events.extend(sighting(game, by, from));
    Ok(events)
}

/// B8.63: the use of the entrance at `entrance` by the `owner`'s units, as the opponent's
/// units saw it — every enemy Infantry unit above ground with a LOS to the entrance Location,
/// traced by the engine from where each stands now (`rules::los`; hidden and concealed units
/// see too). `None` when none did. A LOS the map cannot trace (boards it does not join) is
/// left to a claim (`tunnel-seen`).
fn sighting(game: &Game, owner: Side, entrance: Hex) -> Option<Event> {
    use crate::los::{verdict_on, Spot};
    use board::los::{LosMap, Verdict};
    let map = LosMap::of(&game.scenario);
    let by = owner.opponent();
    let units: Vec<UnitId> = game
        .units
        .values()
        .filter(|u| {
            u.side == by && !u.eliminated && u.kind.is_infantry() && u.underground.is_none()
        })
        .filter(|u| {
            verdict_on(game, map, &Spot::Unit(u.id.clone()), &Spot::Hex(entrance))
                .is_ok_and(|v| v != Verdict::Blocked)
        })
        .map(|u| u.id.clone())
        .collect();
    (!units.is_empty()).then_some(Event::TunnelUseSighted(TunnelUseSighted {
        by,
        entrance,
        units,
    }))
}

/// The other entrance of the side's intact tunnel with an entrance in `from`, or the refusal
/// citing `rule`.
fn tunnel_exit(game: &Game, by: Side, from: Hex, rule: &str) -> Result<Hex, RuleViolation> {
    let tunnel = game
        .tunnels
        .iter()
        .find(|t| t.side == by && !t.destroyed && t.entrances.contains(&from))
        .ok_or_else(|| {
            refuse(
                rule,
                ViolationKind::Terrain,
                format!(
                    "the {} has no tunnel entrance in {from}",
                    game.side_name(by)
                ),
            )
        })?;
    Ok(if tunnel.entrances[0] == from {
        tunnel.entrances[1]
    } else {
        tunnel.entrances[0]
    })
}

/// Going down costs the whole allotment (B8.4, B8.61): spent in the state, not only in words,
/// and like any move it ends the move of the stack that moved before (A4.2).
fn all_mf(game: &Game, units: &[&Unit], ids: &[UnitId], rule: &str) -> Event {
    let mf = units
        .iter()
        .map(|u| {
            let allotment = allotment(game, u, ids, false, 0);
            MfAccount {
                unit: u.id.clone(),
                allotment,
                spent: allotment.total,
                left: board::terrain::Mf::default(),
            }
        })
        .collect();
    Event::AllMfSpent(AllMfSpent {
        units: ids.to_vec(),
        rule: rule.into(),
        mf,
    })
}

/// Whether `unit` is in the Location of the tunnel entrance in its hex: its ground level, the
/// Location an entrance is (B8.6), not an upper level of a building there (A5.1) nor below
/// ground. The one reading of it for every act the entrance's Location asks: searching for it
/// (`decide_discover`) and destroying it (`decide_destroy`).
fn in_entrance(game: &Game, unit: &Unit) -> bool {
    unit.underground.is_none() && game.upper_level(unit).is_none()
}

/// `DestroyTunnel` (B8.63): at the end of the CCPh, by a Good Order Infantry unit in the
/// entrance Location with no Known enemy there, once the entrance is known to its side; an
/// enemy's entrance, by one that saw it used and after its side discovered it.
pub(super) fn decide_destroy(
    game: &Game,
    by: Side,
    entrance: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    require_phase(
        game,
        Phase::CloseCombat,
        "B8.63",
        "tunnel entrances are destroyed",
    )?;
    let known = game
        .tunnels
        .iter()
        .any(|t| !t.destroyed && t.entrances.contains(&entrance) && (t.revealed || t.side == by));
    if !known {
        return Err(refuse(
            "B8.63",
            ViolationKind::Terrain,
            format!(
                "no tunnel entrance known to the {} is in {entrance}",
                game.side_name(by)
            ),
        ));
    }
    // A Good Order Infantry unit of the side in the entrance's Location, and no Known enemy
    // there (`entry::known_enemy`, the one reading of it).
    let holder = |u: &&Unit| {
        u.side == by && u.kind.is_infantry() && u.is_good_order() && in_entrance(game, u)
    };
    let present = game.units_in(entrance).any(|u| holder(&u));
    let enemy = game
        .units_in(entrance)
        .any(|u| crate::movement::known_enemy(u, by) && in_entrance(game, u));
    if !present || enemy {
        return Err(refuse(
            "B8.63",
            ViolationKind::UnitState,
            format!("a Good Order Infantry unit of the {} must hold {entrance} with no Known enemy there", game.side_name(by)),
        ));
    }
    // An enemy entrance: its use must have been in the LOS of a unit that now holds it (as
    // the engine traced it, or claimed where it cannot), and the side must have discovered it
    // since (A4.44).
    let enemy_tunnel = !game
        .tunnels
        .iter()
        .any(|t| t.side == by && t.entrances.contains(&entrance));
    if enemy_tunnel {
        let seer = game
            .units_in(entrance)
            .find(|u| holder(u) && game.tunnel_sightings.contains(&(entrance, u.id.clone())));
        if seer.is_none() {
            return Err(refuse(
                "B8.63",
                ViolationKind::UnitState,
                format!("no Good Order Infantry unit in {entrance} saw the entrance used: its use was in no such unit's LOS"),
            ));
        }
        if !game.tunnel_discoveries.contains(&(by, entrance)) {
            return Err(refuse(
                "B8.63",
                ViolationKind::UnitState,
                format!("the entrance at {entrance} has not been discovered by the recovery procedure (A4.44; `discover-tunnel`)"),
            ));
        }
    }
    Ok(vec![Event::TunnelDestroyed(TunnelDestroyed { entrance })])
}

/// B8.42: whether no Known enemy unit has a LOS to the road Manhole Location `hex`, or every
/// such LOS is Hindered by +2 or more, as the engine traces it (`rules::los`). `None` when
/// some LOS cannot be traced on this map (hexes on boards it cannot join), so that a
/// declaration (`manhole-unseen`) decides instead.
fn road_manhole_unseen(game: &Game, side: Side, hex: Hex) -> Option<bool> {
    use crate::los::{verdict_on, Spot};
    use board::los::{LosMap, Verdict};
    let map = LosMap::of(&game.scenario);
    let known = game.units.values().filter(|u| {
        u.side != side
            && !u.eliminated
            && !u.hidden
            && !u.concealed
            && u.kind != UnitKind::Dummy
            && u.underground.is_none()
    });
    for enemy in known {
        match verdict_on(game, map, &Spot::Unit(enemy.id.clone()), &Spot::Hex(hex)).ok()? {
            Verdict::Blocked => {}
            Verdict::Hindered(n) if n >= 2 => {}
            _ => return Some(false),
        }
    }
    Some(true)
}

/// `DeclareManholeUnseen`: the ATTACKER states a road Manhole of its sewer stacks is out of
/// Known enemy LOS (B8.42 drm); logged for the opponent to see and dispute.
pub(super) fn decide_unseen(game: &Game, by: Side, hex: Hex) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER declares this in its MPh")?;
    require_phase(game, Phase::Movement, "B8.42", "Manhole LOS is declared")?;
    let road = game
        .scenario
        .hexes
        .get(&hex)
        .is_some_and(|s| s.road.is_some());
    if !road || !is_manhole(&game.scenario, hex) {
        return Err(refuse(
            "B8.42",
            ViolationKind::Terrain,
            format!("{hex} is not a road Manhole Location"),
        ));
    }
    Ok(vec![Event::ManholeDeclaredUnseen(ManholeDeclaredUnseen {
        by,
        hex,
    })])
}

/// `RoutThroughTunnel` (B8.62): broken Infantry of the side routing in this RtPh step, in an
/// entrance Location of its own tunnel, go in and come out at the other entrance, not
/// concealed — no closer to any Known armed enemy unit than where they went in, and not
/// ADJACENT to a Known unbroken armed one.
pub(super) fn decide_rout(
    game: &Game,
    by: Side,
    ids: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    require_acting(game, by, "broken units rout in their own side's RtPh step")?;
    require_phase(game, Phase::Rout, "B8.62", "units rout through tunnels")?;
    let units = own_units_together(game, by, ids, "B8.62")?;
    let from = units[0].hex;
    for u in &units {
        // Who may rout at all is the rout's one check (A10.5, A10.62, A12.3), whatever the way.
        check_router(game, u)?;
        if held_pp(game, &u.id) > unit_ipc(u) {
            return Err(refuse(
                "B8.62",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&u.id),
                    " portages more than its IPC, which units in a tunnel may not (B8.61)"
                ],
            ));
        }
    }
    super::movement::check_leaving(game, &units)?;
    let to = tunnel_exit(game, by, from, "B8.62")?;
    // Coming out at the other entrance puts the routers into its Location: refused as not
    // modelled where a `move` there would be (`check_enterable`). B8.62 adds its own limits
    // on Known enemy units below, in place of the MPh's A4.14.
    super::movement::check_enterable(game, to)?;
    // The Known enemies that bind a rout are the rout's own (`rout::known_enemies`): armed,
    // broken or not, for coming out closer; Good Order Infantry for coming out ADJACENT, as
    // they force a rout (`must_rout`).
    let geometry = game.scenario.geometry();
    for e in known_enemies(game, by) {
        let (before, after) = (geometry.distance(from, e.hex), geometry.distance(to, e.hex));
        if let (Some(before), Some(after)) = (before, after) {
            if after < before {
                return Err(refuse(
                    "B8.62",
                    ViolationKind::Geometry,
                    pieces![format!("coming out at {to} would bring the routers closer to the Known armed enemy "), Piece::unit(&e.id), format!(" in {}", e.hex)],
                ));
            }
            if after <= 1 && e.is_good_order() && e.kind.is_infantry() {
                return Err(refuse(
                    "B8.62",
                    ViolationKind::Geometry,
                    pieces![format!("coming out at {to} would put the routers ADJACENT to the Known unbroken armed enemy "), Piece::unit(&e.id), format!(" in {}", e.hex)],
                ));
            }
        }
    }
    // The routers leave the entrance's Location: WA goes as for any mover (B9.41).
    let mut events = lose_wall_advantage(&units, from, to, WaLoss::Moved);
    events.push(Event::UnitsRoutedThroughTunnel(UnitsRoutedThroughTunnel {
        units: ids.to_vec(),
        side: by,
        from,
        to,
    }));
    // Both entrances are used, in at one and out at the other (B8.62, B8.63).
    events.extend(sighting(game, by, from));
    events.extend(sighting(game, by, to));
    Ok(events)
}

/// `ClaimTunnelSeen` (B8.63): the side claims that the use of the enemy tunnel entrance at
/// `entrance` happened in its unit's LOS. The engine traces that LOS itself when the entrance
/// is used (`sighting`); a claim is taken only where the map cannot tell (the unit and the
/// entrance on boards it does not join), logged for the opponent to accept or dispute, like
/// `manhole-unseen`.
pub(super) fn decide_tunnel_seen(
    game: &Game,
    by: Side,
    id: &UnitId,
    entrance: Hex,
) -> Result<Vec<Event>, RuleViolation> {
    let unit = own_unit(game, by, id)?;
    if unit.underground.is_some() {
        return Err(refuse(
            "B8.6",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " is below ground and sees nothing above"],
        ));
    }
    let used = game
        .tunnels
        .iter()
        .any(|t| t.side != by && t.revealed && !t.destroyed && t.entrances.contains(&entrance));
    if !used {
        return Err(refuse(
            "B8.63",
            ViolationKind::Terrain,
            format!(
                "no enemy tunnel known to the {} has been used at {entrance}",
                game.side_name(by)
            ),
        ));
    }
    if game.tunnel_sightings.contains(&(entrance, id.clone())) {
        return Err(refuse(
            "B8.63",
            ViolationKind::UnitState,
            pieces![
                format!("the use of {entrance} is on record as seen by "),
                Piece::unit(id),
                " already"
            ],
        ));
    }
    {
        use crate::los::{verdict_on, Spot};
        use board::los::LosMap;
        let map = LosMap::of(&game.scenario);
        if verdict_on(game, map, &Spot::Unit(id.clone()), &Spot::Hex(entrance)).is_ok() {
            return Err(refuse(
                "B8.63",
                ViolationKind::UnitState,
                pieces!["the engine traces the LOS from ", Piece::unit(id), format!(" to {entrance} itself (A6): a use in its LOS is recorded when it happens, so there is nothing to claim")],
            ));
        }
    }
    Ok(vec![Event::TunnelUseSeen(TunnelUseSeen {
        by,
        unit: id.clone(),
        entrance,
    })])
}

/// `DiscoverTunnel` (B8.63, A4.44): in its MPh a unit in the Location of an enemy entrance
/// whose use its side has claimed seen searches it by the recovery procedure, for
/// `RECOVERY_MF`.
pub(super) fn decide_discover(
    game: &Game,
    by: Side,
    id: &UnitId,
) -> Result<Vec<Event>, RuleViolation> {
    use crate::movement::RECOVERY_MF;
    let unit = crate::movement::movers(
        game,
        by,
        std::slice::from_ref(id),
        "tunnel entrances are searched for",
    )?[0];
    let entrance = unit.hex;
    if !in_entrance(game, unit) {
        return Err(refuse(
            "B8.63",
            ViolationKind::Geometry,
            pieces![
                Piece::unit(id),
                format!(" is on an upper level of {entrance}: a tunnel entrance is a ground-level Location (B8.6), searched from there")
            ],
        ));
    }
    crate::movement::check_not_bypassing(unit, "searches for no tunnel entrance")?;
    let claimed = game
        .tunnel_sightings
        .iter()
        .any(|(h, u)| *h == entrance && game.units.get(u).is_some_and(|u| u.side == by));
    if !claimed {
        return Err(refuse(
            "B8.63",
            ViolationKind::UnitState,
            format!("no unit of the {} saw an enemy tunnel entrance used at {entrance}; discovery follows that", game.side_name(by)),
        ));
    }
    if game.tunnel_discoveries.contains(&(by, entrance)) {
        return Err(refuse(
            "B8.63",
            ViolationKind::UnitState,
            format!("the entrance at {entrance} is discovered already"),
        ));
    }
    let mf = crate::movement::pay_in_place(
        game,
        unit,
        std::slice::from_ref(id),
        0,
        RECOVERY_MF,
        "A4.44",
        pieces!["searching"],
    )?;
    Ok(vec![Event::TunnelEntranceDiscovered(
        TunnelEntranceDiscovered {
            by,
            unit: id.clone(),
            entrance,
            mf,
        },
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wall_advantage::ReadScenario;
    use board::scenario::Scenario;
    use game::event::{
        SewerStackMoved, TunnelUseSighted, UnitsEnteredSewer, WallAdvantageForfeited,
    };

    fn game() -> Game {
        let text = include_str!("../../tests/positions/scenarios/sewers.toml");
        Game::new(Scenario::from_toml(text).unwrap())
    }

    /// Puts `ids` in the sewer beneath `hex`.
    fn below(game: &mut Game, ids: &[&str], hex: &str, lost: bool) {
        for id in ids {
            let unit = game.units.get_mut(*id).unwrap();
            unit.hex = hex.parse().unwrap();
            unit.underground = Some(Underground::Sewer {
                lost,
                moved: true,
                emergence: None,
            });
        }
    }

    fn drm(game: &Game, hex: &str, ids: &[&str]) -> (Vec<i8>, Option<UnitId>) {
        let units: Vec<&Unit> = ids.iter().map(|id| &game.units[*id]).collect();
        let (mods, reveal) = emergence_modifiers(game, Side::A, hex.parse().unwrap(), &units);
        (mods.iter().map(|m| m.value).collect(), reveal)
    }

    /// B9.41: a WA holder going down a Manhole, into a tunnel or routing through one leaves
    /// its Location, and loses WA for that reason, as a mover does — not later, as a unit that
    /// no longer qualifies.
    #[test]
    fn going_below_ground_loses_wa_as_moving() {
        use game::command::Command;
        use game::dice::ScriptedDice;
        use game::event::WaLoss;
        let text = include_str!("../../tests/positions/scenarios/one-path-unit.toml");
        let mut g = Game::new(Scenario::from_toml(text).unwrap());
        for _ in 0..2 {
            let events =
                crate::decide(&g, Side::A, &Command::Done, &mut ScriptedDice::default()).unwrap();
            for e in &events {
                game::apply(&mut g, e);
            }
        }
        assert_eq!(g.clock.phase(), Phase::Movement);
        for id in ["gp", "tp"] {
            let unit = g.units.get_mut(id).unwrap();
            unit.pinned = false;
            unit.wall_advantage = true;
        }
        let moved_off = |events: &[Event], id: &str| {
            events.iter().any(|e| {
                matches!(e, Event::WallAdvantageForfeited(WallAdvantageForfeited { units, why: WaLoss::Moved })
                    if units == &[UnitId::from(id)])
            })
        };
        let down = Command::SewerMove {
            units: vec!["gp".into()],
            to: "20E3".parse().unwrap(),
        };
        let events =
            crate::decide(&g, Side::A, &down, &mut ScriptedDice::new([1]).unwrap()).unwrap();
        assert!(moved_off(&events, "gp"), "{events:?}");
        let tunnel = Command::EnterTunnel {
            units: vec!["tp".into()],
        };
        let events = crate::decide(&g, Side::A, &tunnel, &mut ScriptedDice::default()).unwrap();
        assert!(moved_off(&events, "tp"), "{events:?}");
    }

    /// B8.1: a marked hex, or paved road crossing three hexsides (G2), is a Manhole.
    #[test]
    fn manhole_locations() {
        let g = game();
        assert!(is_manhole(&g.scenario, "20C3".parse().unwrap()));
        assert!(is_manhole(&g.scenario, "20G2".parse().unwrap()));
        assert!(!is_manhole(&g.scenario, "20G3".parse().unwrap()));
    }

    /// Each Sewer Emergence drm of B8.42, alone.
    #[test]
    fn each_emergence_drm() {
        let mut g = game();
        // No drm beneath open, roadless, empty J7.
        below(&mut g, &["s1"], "20J7", false);
        assert_eq!(drm(&g, "20J7", &["s1"]), (vec![], None));
        // −1: a friendly unit in the Manhole Location (s3 stands on E4).
        below(&mut g, &["s2"], "20E4", false);
        assert_eq!(drm(&g, "20E4", &["s2"]).0, vec![-1]);
        // The road Manhole E4 (paved) is in the LOS of the Known Russians: no −1, even when
        // declared unseen, for the map can tell (B8.42 traced).
        g.unseen_manholes.insert("20E4".parse().unwrap());
        assert_eq!(drm(&g, "20E4", &["s2"]).0, vec![-1]);
        // −1 once no Known enemy sees it: under "?" they are not Known.
        let russians: Vec<UnitId> = g
            .units
            .values()
            .filter(|u| u.side == Side::B)
            .map(|u| u.id.clone())
            .collect();
        for id in &russians {
            g.units.get_mut(id).unwrap().concealed = true;
        }
        assert_eq!(drm(&g, "20E4", &["s2"]).0, vec![-1, -1]);
        for id in &russians {
            g.units.get_mut(id).unwrap().concealed = false;
        }
        // −1: a building Manhole free of enemy units (D8).
        below(&mut g, &["s5"], "20D8", false);
        assert_eq!(drm(&g, "20D8", &["s5"]).0, vec![-1]);
        // +1: lost.
        below(&mut g, &["s7"], "20J7", true);
        assert_eq!(drm(&g, "20J7", &["s7"]).0, vec![1]);
        // +1 per Known Good Order enemy MMC in the Manhole Location (rk on H5), not if concealed.
        below(&mut g, &["l3"], "20H5", false);
        assert_eq!(drm(&g, "20H5", &["l3"]).0, vec![1]);
        g.units.get_mut("r2").unwrap().hex = "20H5".parse().unwrap();
        assert_eq!(drm(&g, "20H5", &["l3"]).0, vec![1, 1]);
        g.units.get_mut("r2").unwrap().concealed = true;
        assert_eq!(drm(&g, "20H5", &["l3"]).0, vec![1]);
        // +1: a real enemy unit in an adjacent sewer Location, which must be revealed.
        below(&mut g, &["rl"], "20I6", false);
        let (mods, reveal) = drm(&g, "20H5", &["l3"]);
        assert_eq!(mods, vec![1, 1]);
        assert_eq!(reveal.as_deref(), Some("rl"));
        // A dummy there earns nothing.
        g.units.get_mut("rl").unwrap().kind = UnitKind::Dummy;
        assert_eq!(drm(&g, "20H5", &["l3"]).0, vec![1]);
    }

    /// B8.41: units going down a Manhole above friendly sewer units that have yet to move join
    /// them in one combined stack; naming only some of them is refused.
    #[test]
    fn entering_joins_the_stack_beneath() {
        let mut g = game();
        while g.clock.phase() != Phase::Movement {
            let by = g.acting();
            let events = crate::decide(
                &g,
                by,
                &game::command::Command::Done,
                &mut game::dice::ScriptedDice::default(),
            )
            .unwrap();
            for e in &events {
                game::apply(&mut g, e);
            }
        }
        assert_eq!(g.clock.phase(), Phase::Movement);
        // s2 waits, unmoved, beneath E4 (as at the start of a later MPh); s3 and the 9-1 above.
        let unit = g.units.get_mut("s2").unwrap();
        unit.hex = "20E4".parse().unwrap();
        unit.underground = Some(Underground::Sewer {
            lost: false,
            moved: false,
            emergence: None,
        });
        g.units.get_mut("ld").unwrap().hex = "20E4".parse().unwrap();
        let c3: Hex = "20C3".parse().unwrap();
        let ids = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let mut dice = game::dice::ScriptedDice::new(vec![3, 2, 1]).unwrap();
        let refused = decide_move(&g, Side::A, &ids(&["s3", "ld"]), c3, &mut dice).unwrap_err();
        assert_eq!(refused.rule, "B8.41");
        assert!(refused.detail.contains("`s2`"), "{refused}");
        let events = decide_move(&g, Side::A, &ids(&["s3", "ld", "s2"]), c3, &mut dice).unwrap();
        let moved = events
            .iter()
            .find_map(|e| match e {
                Event::SewerStackMoved(SewerStackMoved { units, to, .. }) => {
                    Some((units.clone(), *to))
                }
                _ => None,
            })
            .expect("the combined stack moved");
        assert_eq!(moved, (ids(&["s3", "ld", "s2"]), c3));
        let entered = events
            .iter()
            .find_map(|e| match e {
                Event::UnitsEnteredSewer(UnitsEnteredSewer { units, .. }) => Some(units.clone()),
                _ => None,
            })
            .expect("the two above went down");
        assert_eq!(entered, ids(&["s3", "ld"]));
    }

    /// Coming up in the APh is the units' advance (B8.41, B8.61): what keeps a unit from
    /// advancing keeps it below — pinned or broken, refused by the one gate `check_free` with
    /// A4.7's words — and once up it has had its one Location of the APh, so `advance` refuses
    /// it a second (A4.7), as it refuses a unit that advanced.
    #[test]
    fn coming_up_is_the_advance_of_the_aph() {
        use game::command::Command;
        use game::dice::ScriptedDice;
        let mut g = game();
        // Nobody broken: no rout holds the RtPh up on the way to the APh.
        for unit in g.units.values_mut() {
            unit.morale = board::scenario::Morale::GoodOrder;
        }
        while g.clock.phase() != Phase::Advance {
            let by = g.acting();
            let events = crate::decide(&g, by, &Command::Done, &mut ScriptedDice::default())
                .unwrap_or_else(|e| panic!("{} in the {}: {e}", g.side_name(by), g.clock));
            for e in &events {
                game::apply(&mut g, e);
            }
        }
        let by = g.units["s1"].side;
        assert_eq!(g.acting(), by);
        below(&mut g, &["s1"], "20E4", false);
        if let Some(Underground::Sewer { emergence, .. }) =
            &mut g.units.get_mut("s1").unwrap().underground
        {
            *emergence = Some(Emergence::MayEmerge);
        }
        let up = Command::Surface {
            units: vec!["s1".into()],
        };
        let mut no_dice = ScriptedDice::default();
        g.units.get_mut("s1").unwrap().pinned = true;
        let refused = crate::decide(&g, by, &up, &mut no_dice).unwrap_err();
        assert_eq!(refused.rule, "A4.7", "{refused}");
        assert!(refused.detail.contains("pinned"), "{refused}");
        g.units.get_mut("s1").unwrap().pinned = false;
        g.units.get_mut("s1").unwrap().morale = board::scenario::Morale::Broken;
        let refused = crate::decide(&g, by, &up, &mut no_dice).unwrap_err();
        assert_eq!(refused.rule, "A4.7", "{refused}");
        assert!(refused.detail.contains("broken"), "{refused}");
        g.units.get_mut("s1").unwrap().morale = board::scenario::Morale::GoodOrder;
        let events = crate::decide(&g, by, &up, &mut no_dice).unwrap();
        for e in &events {
            game::apply(&mut g, e);
        }
        assert_eq!(g.units["s1"].underground, None);
        let on = Command::Advance {
            units: vec!["s1".into()],
            to: "20E5".parse().unwrap(),
        };
        let refused = crate::decide(&g, by, &on, &mut no_dice).unwrap_err();
        assert_eq!(refused.rule, "A4.7", "{refused}");
        assert!(
            refused.detail.contains("advanced this APh already"),
            "{refused}"
        );
    }

    /// The chart's rows (B8.42).
    #[test]
    fn emergence_chart_rows() {
        for (dr, want) in [
            (-1, Emergence::MayEmerge),
            (4, Emergence::MayEmerge),
            (5, Emergence::CannotEmerge),
            (6, Emergence::CannotEmerge),
            (7, Emergence::Discovered),
            (9, Emergence::Discovered),
        ] {
            assert_eq!(emergence_of(dr), want, "dr {dr}");
        }
    }

    /// B8.63 traced: the Russians with a LOS to C6 saw the German use of the entrance; the
    /// sighting reaches the Russian alone, and a Russian under "?" or hidden sees as well as a
    /// Known one (it is the Russian's own knowledge). A unit below ground sees nothing.
    #[test]
    fn a_tunnel_use_is_sighted_by_los_and_told_to_the_sighting_side_alone() {
        use game::Viewer;
        let mut g = game();
        let c6: Hex = "20C6".parse().unwrap();
        // Down column C to C6 across open C7 and C8; from K4 and H5 the building of E6 is in
        // the way.
        for (id, hex) in [("rk", "20C8"), ("r2", "20C9")] {
            g.units.get_mut(id).unwrap().hex = hex.parse().unwrap();
        }
        g.units.get_mut("rk").unwrap().hidden = true;
        g.units.get_mut("r2").unwrap().concealed = true;
        below(&mut g, &["rl"], "20K4", false);
        let Some(Event::TunnelUseSighted(TunnelUseSighted {
            by,
            entrance,
            units,
        })) = sighting(&g, Side::A, c6)
        else {
            panic!("the open map shows C6 to the Russians");
        };
        assert_eq!((by, entrance), (Side::B, c6));
        assert_eq!(units, vec!["r2".to_string(), "rk".into(), "rt".into()]);
        let event = sighting(&g, Side::A, c6).unwrap();
        assert!(g.view_event(Viewer::Side(Side::A), &event).is_none());
        assert!(g.view_event(Viewer::Spectator, &event).is_none());
        assert!(g.view_event(Viewer::Side(Side::B), &event).is_some());
        let mut after = g.clone();
        game::apply(&mut after, &event);
        assert!(after.tunnel_sightings.contains(&(c6, "rt".to_string())));
        assert!(after
            .project(Viewer::Side(Side::A))
            .tunnel_sightings
            .is_empty());
        assert!(after.project(Viewer::Spectator).tunnel_sightings.is_empty());
        assert!(after
            .project(Viewer::Side(Side::B))
            .tunnel_sightings
            .contains(&(c6, "rk".to_string())));
    }
}
