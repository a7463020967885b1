//! The set-up step before Turn 1 and the entry of units waiting off board.
//!
//! Set-up (A12.12): the sides set up in the scenario's order, each out of the other's sight.
//! The side setting up places the units of its order of battle (`SetUp`), may move or take
//! back (`LiftSetUp`) its own placements, and ends with `Done` once every unit is placed.
//! A placement is refused outside the side's set-up area, over the stacking limits (A5.1),
//! into terrain the engine does not model (B1), under a "?" the OB does not give the unit or
//! outside Concealment Terrain (A12.12), or HIP where no SSR allows it (A12.3). What a side
//! places stays hidden from the other until set-up ends: then each placed unit shows as the
//! map shows it — under its "?", or not at all if HIP.
//!
//! Entry (A2.51): a unit the scenario has enter later comes on in its side's MPh, from the
//! Game Turn the scenario names, into a hex of its edge, paying that hex's entry cost as if
//! from an off-board Open Ground hex at level 0 (B10.4 doubles it for a hex above).

use crate::violation::{pieces, Piece, RuleViolation, ViolationKind, Words};
use board::hex::Hex;
use board::scenario::{Side, Stack, UnitId, UnitKind};
use board::setup::{concealment_terrain, OffboardUnit};
use board::terrain::{EntryCost, Mf};
use game::event::{Event, MoveCost};
use game::event::{SetupDone, SetupEnded, UnitSetUp, UnitSetUpLifted, UnitsEntered};
use game::phase::Phase;
use game::{Game, Unit, Weapon};

/// A refusal whose words may name units: they go as typed pieces, each rendered for its reader.
fn refuse(rule: &str, kind: ViolationKind, why: impl Words) -> RuleViolation {
    RuleViolation::with(rule, kind, why)
}

/// The commands the set-up step accepts, and which it refuses with its reason.
pub(super) fn decide(
    game: &Game,
    by: Side,
    command: &game::command::Command,
) -> Result<Vec<Event>, RuleViolation> {
    use game::command::Command;
    let turn = game.setup.as_ref().expect("decided only during set-up");
    if turn.side != by {
        return Err(refuse(
            "A12.12",
            ViolationKind::WrongSide,
            format!(
                "the {} is setting up; the {} sets up when it has done",
                game.side_name(turn.side),
                game.side_name(by)
            ),
        ));
    }
    match command {
        Command::SetUp {
            unit,
            hex,
            concealed,
            hidden,
            weapons,
        } => set_up(game, by, unit, *hex, (*concealed, *hidden), weapons),
        Command::LiftSetUp { unit } => lift(game, by, unit),
        Command::Done => done(game, by),
        _ => Err(refuse(
            "A12.12",
            ViolationKind::WrongPhase,
            "the game is in its set-up step: place units (`setup UNIT HEX`), take one back (`lift UNIT`) or end the set-up (`done`); play begins with Turn 1 once both sides have set up",
        )),
    }
}

/// Refuses a set-up command outside the set-up step.
pub(super) fn not_setting_up() -> RuleViolation {
    refuse(
        "A12.12",
        ViolationKind::WrongPhase,
        "the set-up step is over (or the scenario has none): units are placed only before Turn 1",
    )
}

/// The unit of the scenario's set-up `id` names, if it is `by`'s to set up.
fn own_offboard<'g>(
    game: &'g Game,
    by: Side,
    id: &UnitId,
) -> Result<&'g OffboardUnit, RuleViolation> {
    let setup = game.scenario.setup.as_ref();
    let Some(spec) = setup.and_then(|s| s.units.get(id)) else {
        let on_map = game
            .units
            .get(id)
            .is_some_and(|u| u.side == by || !u.hidden);
        use crate::violation::{text, Piece};
        return Err(RuleViolation::with(
            "A12.12",
            ViolationKind::UnknownUnit,
            if on_map {
                vec![
                    Piece::Given(id.to_string()),
                    text(" starts on the map; only the units the scenario has set up are placed"),
                ]
            } else {
                vec![
                    text("there is no unit "),
                    Piece::Given(id.to_string()),
                    text(" to set up in this scenario"),
                ]
            },
        ));
    };
    if spec.side != by {
        return Err(refuse(
            "A12.12",
            ViolationKind::NotYourUnit,
            pieces![
                Piece::unit(id),
                format!(
                    " is a {} unit; each side sets up its own",
                    game.side_name(spec.side)
                )
            ],
        ));
    }
    if spec.enters.is_some() {
        return Err(refuse(
            "A2.51",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " enters later from off board; it does not set up"
            ],
        ));
    }
    Ok(spec)
}

fn set_up(
    game: &Game,
    by: Side,
    id: &UnitId,
    hex: Hex,
    (concealed, hidden): (bool, bool),
    given: &[String],
) -> Result<Vec<Event>, RuleViolation> {
    let spec = own_offboard(game, by, id)?;
    let setup = game.scenario.setup.as_ref().expect("checked");
    if !setup.area(by).contains(&hex) {
        return Err(refuse(
            "A12.12",
            ViolationKind::Geometry,
            format!(
                "{hex} is outside the {}'s set-up area the scenario gives",
                game.side_name(by)
            ),
        ));
    }
    let Some(hex_spec) = game.scenario.hexes.get(&hex) else {
        return Err(refuse(
            "A12.12",
            ViolationKind::Geometry,
            format!("{hex} is not on the map"),
        ));
    };
    if hidden && !spec.may_hide {
        return Err(refuse(
            "A12.3",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " may not set up hidden: HIP comes only from an SSR, and the scenario gives it none for this unit"],
        ));
    }
    if concealed && hidden {
        return Err(refuse(
            "A12.3",
            ViolationKind::UnitState,
            "a HIP unit is placed under a \"?\" only when it is revealed; set it up hidden or concealed, not both",
        ));
    }
    if spec.kind == UnitKind::Dummy && !concealed {
        return Err(refuse(
            "A12.11",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " is a Dummy: a \"?\" counter sets up as one (`concealed`)"
            ],
        ));
    }
    if concealed && !spec.may_conceal {
        return Err(refuse(
            "A12.12",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " has no \"?\" in its OB: only OB-given \"?\" are placed at set-up"
            ],
        ));
    }
    if concealed && !concealment_terrain(hex_spec.terrain) {
        return Err(refuse(
            "A12.12",
            ViolationKind::Terrain,
            format!(
                "{hex} is {}: an OB-given \"?\" sets up only in Concealment Terrain (woods, building, brush, grain, marsh, orchard, rubble)",
                hex_spec.terrain.name()
            ),
        ));
    }
    // Placing a unit is putting it into a Location (A12.12): what the engine refuses as not
    // modelled to every command that enters one — rubble, a Blaze, a Water Obstacle, VASL
    // terrain with no row, Wire, Panji, a pillbox, a bridge — it refuses here by the same check.
    super::movement::check_enterable(game, hex)?;
    if spec.kind == UnitKind::Vehicle {
        return Err(refuse(
            "A12.12",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(id),
                " is a vehicle; setting vehicles up is not modelled by this engine"
            ],
        ));
    }
    let mut stack = Stack::default();
    for u in game
        .units_above(hex)
        .filter(|u| u.side == by && u.id != *id && game.upper_level(u).is_none())
    {
        stack.add(u.kind);
    }
    stack.add(spec.kind);
    if stack.overstacked() {
        return Err(refuse(
            "A5.1",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), format!(" would overstack {hex}: a side sets up at most three squad equivalents and four SMC in a Location")],
        ));
    }
    let given = weapons_to_give(game, by, id, spec.kind, given)?;
    // Until set-up ends every unit placed is hidden: the other side sees none of it.
    let unit = Unit::from_offboard(spec, hex, concealed, true);
    let weapons: Vec<Weapon> = setup
        .weapons
        .values()
        .filter(|w| w.held_by.as_ref() == Some(id))
        .chain(given)
        .map(|w| Weapon {
            id: w.id.clone(),
            name: w.name.clone(),
            pp: w.pp,
            held_by: Some(id.clone()),
            hex,
            portaged: false,
            ratings: w.ratings,
            malfunctioned: false,
            fired: false,
            repair_tried: false,
        })
        .collect();
    Ok(vec![Event::UnitSetUp(UnitSetUp {
        unit: Box::new(unit),
        weapons,
        hip: hidden,
    })])
}

/// Most weapons one `setup` may give a unit: more than any order of battle gives one unit.
pub(crate) const GIVEN_WEAPONS_MAX: usize = 8;

/// The weapons of `by`'s set-up a placement of unit `id` names, checked: each is its side's
/// to give (possessed by no unit of the order of battle), named once, and given to Infantry
/// (A4.43: only Infantry possess SW; a Dummy is no unit). One given to another unit before
/// changes hands: set-up is the side's to arrange until it is done.
fn weapons_to_give<'g>(
    game: &'g Game,
    by: Side,
    id: &UnitId,
    kind: UnitKind,
    given: &[String],
) -> Result<Vec<&'g board::setup::OffboardWeapon>, RuleViolation> {
    if given.is_empty() {
        return Ok(vec![]);
    }
    if given.len() > GIVEN_WEAPONS_MAX {
        return Err(refuse(
            "A4.43",
            ViolationKind::UnitState,
            format!(
                "a set-up gives a unit at most {GIVEN_WEAPONS_MAX} weapons (GIVEN_WEAPONS_MAX)"
            ),
        ));
    }
    crate::movement::check_may_possess(id, kind)?;
    super::check_named_once(given, "A4.43", " among the weapons given")?;
    let setup = game.scenario.setup.as_ref().expect("setting up");
    let mut out: Vec<&board::setup::OffboardWeapon> = Vec::with_capacity(given.len());
    for w in given {
        let Some(weapon) = setup.to_give(by).find(|x| x.id == *w) else {
            let why = match setup.weapons.get(w) {
                Some(x) if x.side == by => pieces![
                    Piece::unit(w),
                    " is possessed by ",
                    Piece::unit(x.held_by.as_deref().unwrap_or_default()),
                    " in the order of battle; it sets up with it"
                ],
                _ => pieces![
                    format!("the {} has no weapon ", game.side_name(by)),
                    Piece::unit(w),
                    " to give at set-up"
                ],
            };
            return Err(refuse("A4.43", ViolationKind::UnitState, why));
        };
        out.push(weapon);
    }
    Ok(out)
}

/// The weapons of `by`'s set-up that no placed unit possesses yet.
pub(crate) fn weapons_left_to_give(game: &Game, by: Side) -> Vec<&str> {
    let Some(setup) = game.scenario.setup.as_ref() else {
        return vec![];
    };
    setup
        .to_give(by)
        .filter(|w| {
            game.weapons
                .get(&w.id)
                .is_none_or(|held| held.held_by.is_none())
        })
        .map(|w| w.id.as_str())
        .collect()
}

fn lift(game: &Game, by: Side, id: &UnitId) -> Result<Vec<Event>, RuleViolation> {
    own_offboard(game, by, id)?;
    if !game.units.contains_key(id) {
        return Err(refuse(
            "A12.12",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " is not placed; there is nothing to take back"
            ],
        ));
    }
    Ok(vec![Event::UnitSetUpLifted(UnitSetUpLifted {
        unit: id.clone(),
    })])
}

fn done(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    let left: Vec<&UnitId> = game.left_to_set_up(by).iter().map(|u| &u.id).collect();
    if !left.is_empty() {
        return Err(refuse(
            "A12.12",
            ViolationKind::UnitState,
            pieces![
                format!(
                    "the {} has {} unit(s) of its order of battle still to set up (",
                    game.side_name(by),
                    left.len()
                ),
                Piece::units(&left),
                "); every one is placed before its set-up ends"
            ],
        ));
    }
    let weapons = weapons_left_to_give(game, by);
    if !weapons.is_empty() {
        return Err(refuse(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                format!(
                    "the {} has {} support weapon(s) of its order of battle no unit possesses yet (",
                    game.side_name(by),
                    weapons.len()
                ),
                Piece::units(&weapons),
                "); give each to a unit as you set it up (`setup UNIT HEX with WEAPON`)"
            ],
        ));
    }
    let mut events = vec![Event::SetupDone(SetupDone { side: by })];
    let order = game
        .scenario
        .setup
        .as_ref()
        .map(|s| s.setting_up())
        .unwrap_or_default();
    if order.last() == Some(&by) {
        let hip = &game.setup.as_ref().expect("setting up").hip;
        let units = game
            .units
            .values()
            .filter(|u| {
                game.scenario
                    .setup
                    .as_ref()
                    .is_some_and(|s| s.units.contains_key(&u.id))
            })
            .map(|u| {
                let mut shown = u.clone();
                shown.hidden = hip.contains(&u.id);
                shown
            })
            .collect();
        events.push(Event::SetupEnded(SetupEnded { units }));
        // The set-up's own WA moment (B9.322, B9.323), in the order the sides set up.
        let mut after = game.clone();
        for e in &events {
            game::apply(&mut after, e);
        }
        events.extend(super::wall_advantage::settle_after_set_up(after, &order));
    }
    Ok(events)
}

/// `Enter`: units waiting off board come onto the map (A2.51).
pub(super) fn enter(
    game: &Game,
    by: Side,
    ids: &[UnitId],
    to: Hex,
    dice: &mut dyn game::dice::DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    if game.acting() != by {
        return Err(refuse(
            "A2.51",
            ViolationKind::WrongSide,
            format!("the step awaits the {}", game.side_name(game.acting())),
        ));
    }
    if game.clock.phase() == Phase::Advance {
        // Infantry may come on in the APh too, a Location at a time; the engine rules only
        // on entry in the MPh.
        return Err(refuse(
            "A2.51",
            ViolationKind::NotModelled,
            "entering from off board in the APh is not modelled by this engine; units enter in their side's MPh",
        ));
    }
    if game.clock.phase() != Phase::Movement {
        return Err(refuse(
            "A2.51",
            ViolationKind::WrongPhase,
            format!(
                "units enter from off board in their side's MPh, not in the {}",
                game.clock.phase()
            ),
        ));
    }
    if ids.is_empty() {
        return Err(refuse(
            "A2.51",
            ViolationKind::UnknownUnit,
            "name the units that enter",
        ));
    }
    super::check_named_once(ids, "A2.51", " among the entering units")?;
    let setup = game.scenario.setup.as_ref();
    let mut specs = Vec::new();
    for id in ids {
        let Some(spec) = setup.and_then(|s| s.units.get(id)) else {
            return Err(refuse(
                "A2.51",
                ViolationKind::UnknownUnit,
                pieces![Piece::unit(id), " is no unit waiting off board to enter"],
            ));
        };
        if spec.side != by {
            return Err(refuse(
                "A2.51",
                ViolationKind::NotYourUnit,
                pieces![
                    Piece::unit(id),
                    format!(" is a {} unit", game.side_name(spec.side))
                ],
            ));
        }
        let Some(entry) = spec.enters else {
            return Err(refuse(
                "A2.51",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " set up before Turn 1; it does not enter from off board"
                ],
            ));
        };
        if game.units.contains_key(id) {
            return Err(refuse(
                "A2.51",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " has entered already"],
            ));
        }
        if game.clock.turn < entry.turn {
            return Err(refuse(
                "A2.51",
                ViolationKind::WrongPhase,
                pieces![
                    Piece::unit(id),
                    format!(
                        " enters on Turn {} at the earliest; this is Turn {}",
                        entry.turn, game.clock.turn
                    )
                ],
            ));
        }
        if !entry.edge.holds(to, &game.scenario.hexes) {
            return Err(refuse(
                "A2.51",
                ViolationKind::Geometry,
                pieces![
                    format!("{to} is not on the {} edge, where ", entry.edge.name()),
                    Piece::unit(id),
                    " enters"
                ],
            ));
        }
        if game.movement.moving_stack.contains(id) || game.movement.finished.contains(id) {
            // Only an entry that concealed or hidden units stopped leaves a unit off board
            // with MF spent (A12.15); what it may do with the rest is not modelled.
            return Err(refuse(
                "A12.15",
                ViolationKind::NotModelled,
                pieces![
                    Piece::unit(id),
                    " was stopped entering this MPh; entering again before its next MPh is not modelled by this engine"
                ],
            ));
        }
        specs.push(spec);
    }
    let cost = offboard_entry_cost(game, to)?;
    let units: Vec<Unit> = specs
        .iter()
        .map(|s| Unit {
            // Off-board hexes give no road bonus here (A4.132 is not modelled off the map).
            road_only: false,
            ..Unit::from_offboard(s, to, false, false)
        })
        .collect();
    let weapons: Vec<Weapon> = setup
        .map(|s| {
            s.weapons
                .values()
                .filter(|w| w.held_by.as_ref().is_some_and(|h| ids.contains(h)))
                .map(|w| Weapon {
                    id: w.id.clone(),
                    name: w.name.clone(),
                    pp: w.pp,
                    held_by: w.held_by.clone(),
                    hex: to,
                    portaged: false,
                    ratings: w.ratings,
                    malfunctioned: false,
                    fired: false,
                    repair_tried: false,
                })
                .collect()
        })
        .unwrap_or_default();
    // Entering is a move into `to` like any other (A2.51, A4): the units, with what they
    // carry, are put where the act of entering a Location can see them — their leader's
    // +2 MF and IPC, their PP, the stack they join — and the one act rules on them.
    let mut staged = game.clone();
    for u in &units {
        staged.units.insert(u.id.clone(), u.clone());
    }
    for w in &weapons {
        staged.weapons.insert(w.id.clone(), w.clone());
    }
    let movers: Vec<&Unit> = ids.iter().map(|id| &staged.units[id]).collect();
    let entry = super::movement::enter_location(
        &staged,
        by,
        &movers,
        ids,
        to,
        cost,
        super::movement::Act::Move,
    )?;
    if entry.stopped() {
        // Concealed or hidden enemy units stop the entry: they are revealed (dummies
        // removed) and the units stay off board, their MF spent (A12.15).
        return Ok(entry.blocked(&movers, ids, to, to));
    }
    let mut events = vec![Event::UnitsEntered(UnitsEntered {
        units,
        weapons,
        hex: to,
        cost: entry.cost,
        mf: entry.mf,
    })];
    if entry.residual {
        events.extend(crate::attack::residual_fp_attack(
            game, by, ids, to, &events, dice,
        )?);
    }
    Ok(events)
}

/// What entering `to` costs from the off-board hex beside it, taken to be Open Ground at
/// level 0 (A2.51): the COT of `to`, doubled if `to` is higher (B10); no road, no hexside.
fn offboard_entry_cost(game: &Game, to: Hex) -> Result<MoveCost, RuleViolation> {
    super::movement::check_hex_modelled(game, to)?;
    let hex_spec = &game.scenario.hexes[&to];
    let (entry, rule) = hex_spec
        .terrain
        .entry_cost(Some(game.scenario.month).filter(|m| *m > 0));
    let (cot, all_mf) = match entry {
        EntryCost::Mf(mf) => (mf, false),
        EntryCost::AllMf => (Mf::default(), true),
    };
    let elevation = if hex_spec.elevation > 0 {
        cot
    } else {
        Mf::default()
    };
    Ok(MoveCost {
        cot,
        cot_rule: rule.to_string(),
        road: false,
        bypass_doubling: Mf::default(),
        elevation,
        hexside: None,
        hexside_mf: Mf::default(),
        all_mf,
        total: cot + elevation,
    })
}
