//! Sewers and tunnels (B8): entering, moving under "Sewer?" (or "Lost?"), the Sewer Emergence
//! Chart, coming up, tunnels, and their destruction. Every die is rolled through the dice
//! source `decide` is handed and recorded in a `DiceRolled` event with its modifiers.

use super::{own_unit, require_acting, require_phase};
use crate::board::hex::Hex;
use crate::board::scenario::{Morale, Road, Scenario, Side, UnitId, UnitKind};
use crate::board::terrain::Terrain;
use crate::game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use crate::game::event::Event;
use crate::game::phase::Phase;
use crate::game::{Emergence, Game, Underground, Unit};
use crate::rules::movement::{held_pp, ipc};
use crate::rules::violation::{RuleViolation, ViolationKind};

/// How far sewer movement reaches in one MPh: three hexes (B8.41).
pub const SEWER_REACH_HEXES: u32 = 3;

/// A Manhole Location: a marked hex, or a paved road hex where roads cross at least three of
/// its hexsides (B8.1).
pub fn is_manhole(scenario: &Scenario, hex: Hex) -> bool {
    let Some(spec) = scenario.hexes.get(&hex) else {
        return false;
    };
    if spec.manhole {
        return true;
    }
    spec.road == Some(Road::Paved)
        && hex
            .hexsides()
            .into_iter()
            .filter(|s| scenario.hexside_spec(*s).is_some_and(|h| h.road))
            .count()
            >= 3
}

fn refuse(rule: &str, kind: ViolationKind, why: impl Into<String>) -> RuleViolation {
    RuleViolation::new(rule, kind, why)
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

/// Legal destinations for a sewer stack now beneath `from`: Manhole Locations within three
/// hexes, never a sewer hex an enemy unit holds (B8.41, B8.44).
pub fn sewer_destinations(game: &Game, side: Side, from: Hex) -> Vec<Hex> {
    game.scenario
        .hexes
        .keys()
        .copied()
        .filter(|h| *h != from && is_manhole(&game.scenario, *h))
        .filter(|h| from.distance(*h).is_some_and(|d| d <= SEWER_REACH_HEXES))
        .filter(|h| {
            !game
                .units_in(*h)
                .any(|u| u.side != side && matches!(u.underground, Some(Underground::Sewer { .. })))
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
    if ids.is_empty() {
        return Err(refuse(
            "B8.41",
            ViolationKind::UnknownUnit,
            "name the units",
        ));
    }
    let units = ids
        .iter()
        .map(|id| own_unit(game, by, id))
        .collect::<Result<Vec<&Unit>, _>>()?;
    let from = units[0].hex;
    let below = in_sewer(units[0]);
    for u in &units {
        if u.hex != from || in_sewer(u) != below {
            return Err(refuse(
                "B8.41",
                ViolationKind::UnitState,
                "sewer movement is by one combined stack from one Location",
            ));
        }
    }
    if below {
        // Every unit of a sewer Location moves together (B8.41).
        let left_behind = game
            .units_in(from)
            .find(|u| u.side == by && in_sewer(u) && !ids.contains(&u.id));
        if let Some(u) = left_behind {
            return Err(refuse(
                "B8.41",
                ViolationKind::UnitState,
                format!(
                    "`{}` is in the same sewer Location and must move with the stack",
                    u.id
                ),
            ));
        }
    }
    let mut events = vec![];
    for u in &units {
        check_sewer_unit(game, u, below)?;
    }
    // Every check that can refuse comes before the first die: a refusal must never tell the
    // player what a roll would have been.
    let options = sewer_destinations(game, by, from);
    if !options.contains(&to) {
        return Err(refuse(
            "B8.41",
            ViolationKind::Geometry,
            format!(
                "{to} is not a Manhole Location within {SEWER_REACH_HEXES} hexes of {from} free of enemy sewer units; the choices are {}",
                names(&options)
            ),
        ));
    }
    if !below {
        let (entered, passed) = enter_sewer(game, by, &units, ids, from, dice)?;
        events.extend(entered);
        if !passed {
            return Ok(events); // the leader's 4TC failed: nobody goes down this MPh
        }
    } else if units
        .iter()
        .any(|u| matches!(u.underground, Some(Underground::Sewer { moved: true, .. })))
    {
        return Err(refuse(
            "B8.41",
            ViolationKind::UnitState,
            "the stack has moved in the sewer this MPh already",
        ));
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
        crate::game::apply(&mut after, e);
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
    events.push(Event::DiceRolled { roll: lost_roll });
    if lost {
        events.push(Event::SewerStackLost {
            units: ids.to_vec(),
            at: from,
            defender: by.opponent(),
            options,
        });
    } else {
        events.push(Event::SewerStackMoved {
            units: ids.to_vec(),
            from,
            to,
            designated_by: None,
        });
    }
    Ok(events)
}

/// B8.4/B8.45/B8.61 unit checks for going or being below ground.
fn check_sewer_unit(game: &Game, unit: &Unit, below: bool) -> Result<(), RuleViolation> {
    let id = &unit.id;
    if !unit.kind.is_infantry() && unit.kind != UnitKind::Dummy {
        return Err(refuse(
            "B8.4",
            ViolationKind::UnitState,
            format!("`{id}` is not Infantry; only Infantry enter sewers"),
        ));
    }
    if unit.morale != Morale::GoodOrder {
        return Err(refuse(
            "B8.45",
            ViolationKind::UnitState,
            format!("`{id}` is broken or berserk and may never enter a sewer"),
        ));
    }
    if unit.pinned {
        return Err(refuse(
            "A7.8",
            ViolationKind::UnitState,
            format!("`{id}` is pinned and cannot move"),
        ));
    }
    if matches!(unit.underground, Some(Underground::Tunnel)) {
        return Err(refuse(
            "B8.61",
            ViolationKind::UnitState,
            format!("`{id}` is in a tunnel; it comes out in the APh"),
        ));
    }
    if !below {
        if unit.mf_spent > crate::board::terrain::Mf::default()
            || game.movement.moving_stack.contains(id)
            || game.movement.finished.contains(id)
        {
            return Err(refuse(
                "B8.4",
                ViolationKind::UnitState,
                format!(
                    "`{id}` has moved this MPh; a sewer is entered only at the start of the MPh"
                ),
            ));
        }
        if held_pp(game, id) > ipc(unit.kind) {
            return Err(refuse(
                "B8.4",
                ViolationKind::UnitState,
                format!("`{id}` portages more than its IPC, which units in a sewer may not"),
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
        return Err(refuse(
            "B8.4",
            ViolationKind::Terrain,
            format!("{at} is no Manhole Location; sewers are entered only from one"),
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
            format!("the 4TC to take `{}` into the sewer failed this MPh", u.id),
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
        events.push(Event::DiceRolled { roll: check });
        if !passed {
            events.push(Event::SewerEntryFailed {
                units: ids.to_vec(),
            });
            return Ok((events, false));
        }
    }
    events.push(Event::UnitsEnteredSewer {
        units: ids.to_vec(),
        hex: at,
    });
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
    Ok(vec![Event::SewerStackMoved {
        units: d.units.clone(),
        from: d.from,
        to,
        designated_by: Some(by),
    }])
}

/// At the end of the MPh: every sewer stack of the ATTACKER must have moved (B8.41); then
/// each rolls on the Sewer Emergence Chart (B8.42).
pub(super) fn end_of_movement(
    game: &Game,
    by: Side,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let stacks = sewer_stacks(game, by);
    if let Some((hex, _)) = stacks.iter().find(|(_, units)| {
        units
            .iter()
            .any(|u| matches!(u.underground, Some(Underground::Sewer { moved: false, .. })))
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
        let roll_event = Event::DiceRolled { roll: r };
        crate::game::apply(&mut after, &roll_event);
        if let Some(enemy) = reveal {
            events.push(Event::UnitsMomentarilyRevealed { units: vec![enemy] });
        }
        events.push(roll_event);
        events.push(Event::SewerEmergenceRolled {
            units: units.iter().map(|u| u.id.clone()).collect(),
            hex,
            result,
        });
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

impl Emergence {
    pub fn describe(self) -> &'static str {
        match self {
            Emergence::MayEmerge => "may emerge concealed in the APh; not subject to Defensive Fire meanwhile",
            Emergence::CannotEmerge => "cannot emerge this Game Turn; not subject to Defensive Fire meanwhile",
            Emergence::Discovered => "discovered: cannot emerge this Game Turn, subject to Defensive Fire from enemy Infantry in the Manhole Location without concealment",
        }
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
        .filter(|u| u.side != side && u.kind.is_mmc() && u.is_good_order() && !u.concealed)
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
            && u.hex.is_adjacent(hex)
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

/// The side's own units named in a command, at least one, all in one Location.
fn own_units_together<'g>(
    game: &'g Game,
    by: Side,
    ids: &[UnitId],
    rule: &str,
) -> Result<Vec<&'g Unit>, RuleViolation> {
    let units = ids
        .iter()
        .map(|id| own_unit(game, by, id))
        .collect::<Result<Vec<&Unit>, _>>()?;
    let Some(first) = units.first() else {
        return Err(refuse(rule, ViolationKind::UnknownUnit, "name the units"));
    };
    if units.iter().any(|u| u.hex != first.hex) {
        return Err(refuse(
            rule,
            ViolationKind::UnitState,
            "one Location at a time",
        ));
    }
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
    let units = own_units_together(game, by, ids, "B8.42")?;
    let first = units[0];
    for u in &units {
        match u.underground {
            None => {
                return Err(refuse(
                    "B8.42",
                    ViolationKind::UnitState,
                    format!("`{}` is not below ground", u.id),
                ))
            }
            Some(Underground::Sewer { emergence, .. }) if emergence != Some(Emergence::MayEmerge) => {
                return Err(refuse(
                    "B8.42",
                    ViolationKind::UnitState,
                    format!(
                        "`{}` may not emerge this Game Turn: its Sewer Emergence dr did not allow it",
                        u.id
                    ),
                ))
            }
            _ => {}
        }
    }
    Ok(vec![Event::UnitsSurfaced {
        units: ids.to_vec(),
        hex: first.hex,
    }])
}

/// At the end of the APh, units in a tunnel must have come out (B8.61).
pub(super) fn end_of_advance(game: &Game, by: Side) -> Result<(), RuleViolation> {
    match game
        .units
        .values()
        .find(|u| u.side == by && !u.eliminated && u.underground == Some(Underground::Tunnel))
    {
        Some(u) => Err(refuse(
            "B8.61",
            ViolationKind::UnitState,
            format!(
                "`{}` must advance out of the tunnel at {} in this APh",
                u.id, u.hex
            ),
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
    let tunnel = game
        .tunnels
        .iter()
        .find(|t| t.side == by && !t.destroyed && t.entrances.contains(&from))
        .ok_or_else(|| {
            refuse(
                "B8.6",
                ViolationKind::Terrain,
                format!(
                    "the {} has no tunnel entrance in {from}",
                    game.side_name(by)
                ),
            )
        })?;
    for u in &units {
        check_sewer_unit(game, u, false)?;
    }
    let exit = if tunnel.entrances[0] == from {
        tunnel.entrances[1]
    } else {
        tunnel.entrances[0]
    };
    Ok(vec![Event::UnitsEnteredTunnel {
        units: ids.to_vec(),
        side: by,
        from,
        exit,
    }])
}

/// `DestroyTunnel` (B8.63): at the end of the CCPh, by a Good Order Infantry unit in the
/// entrance Location with no Known enemy there, once the entrance is known to its side.
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
    let present = game.units_in(entrance).any(|u| {
        u.side == by && u.kind.is_infantry() && u.is_good_order() && u.underground.is_none()
    });
    let enemy = game
        .units_in(entrance)
        .any(|u| u.side != by && !u.concealed && !u.hidden && u.underground.is_none());
    if !present || enemy {
        return Err(refuse(
            "B8.63",
            ViolationKind::UnitState,
            format!("a Good Order Infantry unit of the {} must hold {entrance} with no Known enemy there", game.side_name(by)),
        ));
    }
    Ok(vec![Event::TunnelDestroyed { entrance }])
}

/// B8.42: whether no Known enemy unit has a LOS to the road Manhole Location `hex`, or every
/// such LOS is Hindered by +2 or more, as the engine traces it (`rules::los`). `None` when
/// some LOS cannot be traced on this map (hexes on boards it cannot join), so that a
/// declaration (`manhole-unseen`) decides instead.
fn road_manhole_unseen(game: &Game, side: Side, hex: Hex) -> Option<bool> {
    use crate::board::los::{LosMap, Verdict};
    use crate::rules::los::{between_on, Spot};
    let map = LosMap::new(&game.scenario);
    let known = game.units.values().filter(|u| {
        u.side != side
            && !u.eliminated
            && !u.hidden
            && !u.concealed
            && u.kind != UnitKind::Dummy
            && u.underground.is_none()
    });
    for enemy in known {
        let report = between_on(game, &map, &Spot::Unit(enemy.id.clone()), &Spot::Hex(hex)).ok()?;
        match report.verdict {
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
    Ok(vec![Event::ManholeDeclaredUnseen { by, hex }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::scenario::Scenario;

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
}
