//! Laws the rules core must keep for any sequence of commands, checked on random play:
//! - replaying the accepted events gives the live state, hash for hash;
//! - a refused command changes nothing;
//! - `done` is accepted exactly when its side is the one to act and the game is not over;
//! - every event, command and message survives both wire codecs unchanged.

use proptest::prelude::*;
use protocol::event::{
    DiceRolled, GameCreated, RecoveryAttempted, UnitBypassed, UnitMoved, WeaponPickedUp,
};
use protocol::game::{apply, Game, Viewer};
use protocol::wire::{self, ClientMessage, Sequenced, ServerMessage};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Outcome, Scenario, ScriptedDice, Side};
use serde::de::DeserializeOwned;
use serde::Serialize;

fn scenario() -> Scenario {
    Scenario::from_toml(include_str!("../../scenarios/b9-41-wall-advantage.toml")).unwrap()
}

/// A command as drawn by proptest: indexes into the scenario's units and a direction, so that
/// most draws are plausible and many are legal.
#[derive(Clone, Debug)]
enum Draw {
    Done(Side),
    Move(Side, Vec<usize>, usize),
    Adjudicate(Side, usize, Outcome),
    ClaimWa(Side, usize),
    ForfeitWa(Side, usize),
    DeclineWa(Side),
    ShowWa(Side, usize),
}

fn draw() -> impl Strategy<Value = Draw> {
    let side = prop_oneof![Just(Side::A), Just(Side::B)];
    let outcome = prop_oneof![
        Just(Outcome::Break),
        Just(Outcome::Rally),
        Just(Outcome::Pin),
        Just(Outcome::Eliminate)
    ];
    prop_oneof![
        6 => side.clone().prop_map(Draw::Done),
        6 => (side.clone(), prop::collection::vec(0usize..4, 1..3), 0usize..6)
            .prop_map(|(s, u, d)| Draw::Move(s, u, d)),
        1 => (side.clone(), 0usize..4, outcome).prop_map(|(s, u, o)| Draw::Adjudicate(s, u, o)),
        2 => (side.clone(), 0usize..4).prop_map(|(s, u)| Draw::ClaimWa(s, u)),
        1 => (side.clone(), 0usize..4).prop_map(|(s, u)| Draw::ForfeitWa(s, u)),
        2 => side.clone().prop_map(Draw::DeclineWa),
        1 => (side, 0usize..4).prop_map(|(s, u)| Draw::ShowWa(s, u)),
    ]
}

fn command(game: &Game, draw: &Draw) -> (Side, Command) {
    let ids: Vec<String> = game.units.keys().cloned().collect();
    match draw {
        Draw::Done(side) => (*side, Command::Done),
        Draw::Move(side, units, direction) => {
            let units: Vec<String> = units.iter().map(|i| ids[*i].clone()).collect();
            let from = game.units[&units[0]].hex;
            let neighbours = from.neighbours();
            let to = neighbours[*direction % neighbours.len()];
            (*side, Command::Move { units, to })
        }
        Draw::ClaimWa(side, unit) => (
            *side,
            Command::ClaimWallAdvantage {
                units: vec![ids[*unit].clone()],
            },
        ),
        Draw::ForfeitWa(side, unit) => (
            *side,
            Command::ForfeitWallAdvantage {
                units: vec![ids[*unit].clone()],
            },
        ),
        Draw::DeclineWa(side) => (*side, Command::DeclineWallAdvantage),
        Draw::ShowWa(side, unit) => (
            *side,
            Command::ShowForWallAdvantage {
                unit: ids[*unit].clone(),
            },
        ),
        Draw::Adjudicate(side, unit, outcome) => (
            *side,
            Command::Adjudicate {
                unit: ids[*unit].clone(),
                outcome: *outcome,
                note: String::new(),
            },
        ),
    }
}

/// Plays the draws; returns the live game and every event in log order (GameCreated first).
fn play(draws: &[Draw]) -> (Game, Vec<Event>) {
    let scenario = scenario();
    let mut log = vec![Event::GameCreated(GameCreated {
        scenario: scenario.clone(),
    })];
    let mut game = Game::replay(&log).unwrap();
    for d in draws {
        let (side, command) = command(&game, d);
        let before = game.state_hash();
        match decide(&game, side, &command, &mut ScriptedDice::default()) {
            Ok(events) => {
                for e in &events {
                    apply(&mut game, e);
                }
                log.extend(events);
                assert_wa_exclusive(&game);
            }
            Err(_) => assert_eq!(game.state_hash(), before),
        }
    }
    (game, log)
}

/// B9.321: two opposing units never hold WA over a shared wall/hedge hexside at once.
fn assert_wa_exclusive(game: &Game) {
    use protocol::rules::wall_advantage::wa_hexsides;
    for a in game.units.values().filter(|u| u.wall_advantage) {
        for b in game
            .units
            .values()
            .filter(|u| u.wall_advantage && u.side != a.side)
        {
            let shared = wa_hexsides(game, a)
                .into_iter()
                .any(|s| wa_hexsides(game, b).contains(&s));
            assert!(
                !shared,
                "{} and {} both hold WA over a shared hexside",
                a.id, b.id
            );
        }
    }
}

fn round_trips<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) {
    let json = wire::to_json(value);
    assert_eq!(&wire::from_json::<T>(&json).unwrap(), value, "json: {json}");
    let bin = wire::to_bincode(value);
    assert_eq!(&wire::from_bincode::<T>(&bin).unwrap(), value);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn replay_equals_live(draws in prop::collection::vec(draw(), 0..120)) {
        let (live, log) = play(&draws);
        let replayed = Game::replay(&log).unwrap();
        prop_assert_eq!(replayed.state_hash(), live.state_hash());
        prop_assert_eq!(&replayed, &live);
        prop_assert_eq!(live.version, log.len() as u64);
        // Every viewer's projection of the replay equals the projection of the live game.
        for viewer in [Viewer::Side(Side::A), Viewer::Side(Side::B), Viewer::Spectator] {
            prop_assert_eq!(replayed.project(viewer).state_hash(), live.project(viewer).state_hash());
        }
    }

    #[test]
    fn done_accepted_iff_its_sides_turn(draws in prop::collection::vec(draw(), 0..80), side in prop_oneof![Just(Side::A), Just(Side::B)]) {
        let (game, _) = play(&draws);
        let decided = decide(&game, side, &Command::Done, &mut ScriptedDice::default());
        // Done is refused while a WA chance, a WA challenge (B9.324) or a declared attack
        // waits, and (A4.32) while a unit of the side is in Bypass; of those only the WA
        // chance and challenge arise in these draws.
        let waiting = game.wa_chance.is_some() || game.attack.is_some() || game.wa_challenge.is_some();
        let expected = !game.over && !waiting && game.acting() == side;
        match &decided {
            Ok(_) => prop_assert!(expected),
            // Else only the RtPh's obligation refuses it (A10.5): a broken unit of the side
            // must rout and has not.
            Err(v) if expected => {
                prop_assert_eq!(game.clock.phase(), protocol::phase::Phase::Rout, "{}", v.detail);
                prop_assert_eq!(&v.rule, "A10.5");
                prop_assert!(game.units.values().any(|u| u.side == side
                    && protocol::rules::movement::must_rout(&game, u).is_some()));
            }
            Err(_) => {}
        }
    }

    #[test]
    fn everything_round_trips_in_both_codecs(draws in prop::collection::vec(draw(), 0..60)) {
        let (game, log) = play(&draws);
        for (i, event) in log.iter().enumerate() {
            round_trips(event);
            let seq = i as u64 + 1;
            let viewed = std::sync::Arc::new(protocol::game::view::Viewed { event: event.clone(), renamed: vec![], weapons: vec![] });
            let hash = protocol::record::stream::StreamHash([seq as u8; 32]);
            round_trips(&ServerMessage::Event(Sequenced { seq, viewed: viewed.clone(), hash }));
            round_trips(&ServerMessage::Accepted { id: seq, version: seq, events: vec![Sequenced { seq, viewed, hash }], head: hash, signed: None });
        }
        for d in &draws {
            let (_, command) = command(&game, d);
            round_trips(&ClientMessage::Command { id: 1, command, key: None });
        }
        round_trips(&ServerMessage::State {
            version: game.version,
            state_hash: game.state_hash(),
            state: Box::new(wire::Position::from(game.clone())),
            head: protocol::record::stream::StreamHash([1; 32]),
            owner: Some("node-a".into()),
            clocks: None,
        });
        // What a client is sent rebuilds the very projection, hash and all.
        for viewer in [Viewer::Side(Side::A), Viewer::Side(Side::B), Viewer::Spectator] {
            let view = game.project(viewer);
            let sent = wire::from_json::<wire::Position>(&wire::to_json(&wire::Position::from(view.clone()))).unwrap();
            let rebuilt = sent.into_game().unwrap();
            prop_assert_eq!(rebuilt.state_hash(), view.state_hash());
            prop_assert_eq!(rebuilt, view);
        }
        if let Err(violation) = decide(&game, game.acting().opponent(), &Command::Done, &mut ScriptedDice::default()) {
            round_trips(&ServerMessage::Refused { id: 9, version: game.version, violation });
        }
    }
}

/// Movement draws over the A4 positions scenario: moves, Bypasses, Double Time and portage by
/// random units, to random neighbours.
#[derive(Clone, Debug)]
enum MoveDraw {
    Done,
    Move(Vec<usize>, usize),
    Bypass(Vec<usize>, usize, Vec<usize>),
    DoubleTime(usize),
    PickUp(usize, usize),
    Drop(usize, usize),
}

fn move_draw() -> impl Strategy<Value = MoveDraw> {
    let units = prop::collection::vec(0usize..32, 1..4);
    prop_oneof![
        2 => Just(MoveDraw::Done),
        8 => (units.clone(), 0usize..6).prop_map(|(u, d)| MoveDraw::Move(u, d)),
        3 => (units, 0usize..6, prop::collection::vec(0usize..6, 1..4))
            .prop_map(|(u, d, a)| MoveDraw::Bypass(u, d, a)),
        1 => (0usize..32).prop_map(MoveDraw::DoubleTime),
        1 => (0usize..32, 0usize..8).prop_map(|(u, w)| MoveDraw::PickUp(u, w)),
        1 => (0usize..32, 0usize..8).prop_map(|(u, w)| MoveDraw::Drop(u, w)),
    ]
}

/// The A4 positions (walls, hills, leaders, portage, roads) or the A4.31 board (woods and
/// buildings to Bypass).
fn movement_scenario(which: bool) -> Scenario {
    let text = if which {
        include_str!("positions/scenarios/a4-movement.toml")
    } else {
        include_str!("positions/scenarios/a4-31-bypass-2d4.toml")
    };
    Scenario::from_toml(text).unwrap()
}

fn move_command(game: &Game, draw: &MoveDraw) -> Command {
    let ids: Vec<String> = game.units.keys().cloned().collect();
    let weapons: Vec<String> = game.weapons.keys().cloned().collect();
    let unit = |i: &usize| ids[i % ids.len()].clone();
    // A scenario without weapons still gets a (refused) name to try.
    let weapon = |i: &usize| {
        weapons
            .get(i % weapons.len().max(1))
            .cloned()
            .unwrap_or_else(|| "no-such-weapon".into())
    };
    let neighbour = |of: &str, d: usize| {
        let hex = game.units[of].hex;
        let n = hex.neighbours();
        n[d % n.len()]
    };
    match draw {
        MoveDraw::Done => Command::Done,
        MoveDraw::Move(units, d) => {
            let units: Vec<String> = units.iter().map(unit).collect();
            let to = neighbour(&units[0], *d);
            Command::Move { units, to }
        }
        MoveDraw::Bypass(units, d, along) => {
            let units: Vec<String> = units.iter().map(unit).collect();
            let hex = neighbour(&units[0], *d);
            let ring = hex.neighbours();
            let along = along.iter().map(|i| ring[i % ring.len()]).collect();
            Command::Bypass { units, hex, along }
        }
        MoveDraw::DoubleTime(u) => Command::DoubleTime {
            units: vec![unit(u)],
        },
        MoveDraw::PickUp(u, w) => Command::PickUp {
            unit: unit(u),
            weapon: weapon(w),
        },
        MoveDraw::Drop(u, w) => Command::Drop {
            unit: unit(u),
            weapon: weapon(w),
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A4.1: no unit ever spends more MF than its allotment, and the MF a unit has spent is
    /// exactly the sum of the costs of the steps it took this MPh.
    #[test]
    fn mf_spent_is_the_sum_of_costs_and_within_the_allotment(which in any::<bool>(), draws in prop::collection::vec(move_draw(), 0..80)) {
        let mut game = Game::new(movement_scenario(which));
        // Into the German MPh: RPh, the end-of-RPh steps that do not pass by themselves, PFPh.
        while game.clock.phase() != protocol::phase::Phase::Movement {
            let events = decide(&game, game.acting(), &Command::Done, &mut ScriptedDice::default()).unwrap();
            for e in &events { apply(&mut game, e); }
        }
        let mut costs: std::collections::BTreeMap<String, u16> = Default::default();
        for d in &draws {
            let command = move_command(&game, d);
            let before = game.state_hash();
            // A Recovery's dr (A4.44), made or failed by the game's count of dice so far: its
            // extra MF is spent either way.
            let face = 1 + (game.dice_drawn % 6) as u8;
            let mut dice = ScriptedDice::new([face]).unwrap();
            let Ok(events) = decide(&game, Side::A, &command, &mut dice) else {
                prop_assert_eq!(game.state_hash(), before);
                continue;
            };
            for e in &events {
                match e {
                    Event::UnitMoved(UnitMoved { cost, mf, .. }) | Event::UnitBypassed(UnitBypassed { cost, mf, .. }) => {
                        for a in mf {
                            let paid = if cost.all_mf { a.allotment.total.halves() } else { cost.total.halves() };
                            *costs.entry(a.unit.clone()).or_default() += paid;
                        }
                    }
                    Event::WeaponPickedUp(WeaponPickedUp { mf, .. }) => {
                        *costs.entry(mf.unit.clone()).or_default() += protocol::rules::movement::RECOVERY_MF.halves();
                    }
                    Event::RecoveryAttempted(RecoveryAttempted { mf, .. }) => {
                        for a in mf {
                            *costs.entry(a.unit.clone()).or_default() += protocol::rules::movement::RECOVERY_MF.halves();
                        }
                    }
                    Event::StepEnded(_) => costs.clear(),
                    _ => {}
                }
                for a in e.accounts() {
                    prop_assert!(a.spent <= a.allotment.total, "{} spent {} of {}", a.unit, a.spent, a.allotment.total);
                    prop_assert_eq!(a.left, a.allotment.total.saturating_sub(a.spent));
                }
                apply(&mut game, e);
            }
            for unit in game.units.values() {
                let paid = costs.get(&unit.id).copied().unwrap_or(0);
                prop_assert_eq!(unit.mf_spent.halves(), paid, "{}", unit.id);
            }
        }
    }
}

/// Sewer draws: sewer movement by random German stacks to random Manholes, designations by the
/// Russian, surfacing and ends of steps, with dice from a seeded source as the server rolls.
#[derive(Clone, Debug)]
enum SewerDraw {
    Done,
    SewerMove(usize, usize),
    Designate(usize),
    Surface(usize),
}

fn sewer_draw() -> impl Strategy<Value = SewerDraw> {
    prop_oneof![
        3 => Just(SewerDraw::Done),
        4 => (0usize..20, 0usize..12).prop_map(|(u, m)| SewerDraw::SewerMove(u, m)),
        2 => (0usize..12).prop_map(SewerDraw::Designate),
        1 => (0usize..20).prop_map(SewerDraw::Surface),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Replay reads the dice from the log: replaying the events gives the live game, and every
    /// logged die is the one the seeded source derives for its draw number.
    #[test]
    fn sewer_play_replays_and_dice_rederive(draws in prop::collection::vec(sewer_draw(), 0..80)) {
        use protocol::dice::{derive_die, SeededDice};
        let key = [42u8; 32];
        let scenario = Scenario::from_toml(include_str!("positions/scenarios/sewers.toml")).unwrap();
        let mut log = vec![Event::GameCreated(GameCreated { scenario: scenario.clone() })];
        let mut game = Game::replay(&log).unwrap();
        let manholes: Vec<protocol::Hex> = game
            .scenario
            .hexes
            .keys()
            .copied()
            .filter(|h| protocol::rules::sewer::is_manhole(&game.scenario, *h))
            .collect();
        for d in &draws {
            let ids: Vec<String> = game.units.keys().cloned().collect();
            let (side, command) = match d {
                SewerDraw::Done => (game.acting(), Command::Done),
                SewerDraw::SewerMove(u, m) => {
                    let unit = &game.units[&ids[u % ids.len()]];
                    let stack: Vec<String> = game
                        .units_in(unit.hex)
                        .filter(|o| o.side == unit.side && o.underground == unit.underground)
                        .map(|o| o.id.clone())
                        .collect();
                    (unit.side, Command::SewerMove { units: stack, to: manholes[m % manholes.len()] })
                }
                SewerDraw::Designate(m) => (Side::B, Command::DesignateSewer { to: manholes[m % manholes.len()] }),
                SewerDraw::Surface(u) => {
                    let unit = &game.units[&ids[u % ids.len()]];
                    (unit.side, Command::Surface { units: vec![unit.id.clone()] })
                }
            };
            let mut dice = SeededDice::new(key, game.dice_drawn);
            let before = game.state_hash();
            match decide(&game, side, &command, &mut dice) {
                Ok(events) => {
                    for e in &events {
                        if let Event::DiceRolled(DiceRolled { roll }) = e {
                            prop_assert_eq!(roll.first_draw, game.dice_drawn);
                            for (i, face) in roll.dice.iter().enumerate() {
                                prop_assert_eq!(*face, derive_die(&key, roll.first_draw + i as u64));
                            }
                        }
                        apply(&mut game, e);
                    }
                    log.extend(events);
                }
                Err(_) => prop_assert_eq!(game.state_hash(), before),
            }
        }
        let replayed = Game::replay(&log).unwrap();
        prop_assert_eq!(replayed.state_hash(), game.state_hash());
    }
}
