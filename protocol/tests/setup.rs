//! The set-up step (A12.12) under the laws every game keeps:
//! - property, on random set-ups and the play after them: replay gives the live state hash;
//!   a refused command changes nothing; every viewer that applies its stream reaches its
//!   projection exactly; an event a viewer does not receive leaves its projection unchanged;
//! - the side not setting up (and a spectator) sees nothing of the other's placements until
//!   set-up ends: two different set-ups give it the same snapshots, streams and refusals; and
//!   when set-up ends it sees concealed units only as "?" and HIP units not at all.

use proptest::prelude::*;
use protocol::event::{GameCreated, SetupEnded, UnitSetUp, UnitsEntered};
use protocol::game::view::{apply_viewed, project_event, Viewed};
use protocol::game::{apply, Game, Viewer};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Hex, Scenario, ScriptedDice, Side};

const SCENARIO: &str = include_str!("positions/scenarios/setup.toml");

const VIEWERS: [Viewer; 3] = [
    Viewer::Side(Side::A),
    Viewer::Side(Side::B),
    Viewer::Spectator,
];
const GERMAN: Side = Side::A;
const RUSSIAN: Side = Side::B;

fn start() -> Game {
    let scenario = Scenario::from_toml(SCENARIO).unwrap();
    Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
}

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

fn setup(unit: &str, at: &str, concealed: bool, hidden: bool) -> Command {
    Command::SetUp {
        unit: unit.into(),
        hex: hex(at),
        concealed,
        hidden,
        weapons: vec![],
    }
}

/// Plays a command that must be accepted; returns its events, applied to `game`.
fn play(game: &mut Game, side: Side, command: Command) -> Vec<Event> {
    let events = decide(game, side, &command, &mut ScriptedDice::default())
        .unwrap_or_else(|v| panic!("{command:?} refused: {v}"));
    for e in &events {
        apply(game, e);
    }
    events
}

/// Every event of `events` (applied to `game` in turn) as `viewer` receives it.
fn seen_by(game: &Game, viewer: Viewer, events: &[Event]) -> Vec<Viewed> {
    let mut game = game.clone();
    let mut seen = vec![];
    for e in events {
        let mut after = game.clone();
        apply(&mut after, e);
        seen.extend(project_event(&game, &after, viewer, e));
        game = after;
    }
    seen
}

/// The Russians set up one way or another; each returns the events.
fn russian_setup(game: &mut Game, variant: bool) -> Vec<Event> {
    let placements: &[(&str, &str, bool, bool)] = if variant {
        &[
            ("r1", "1C3", true, false),
            ("r2", "1C3", false, false),
            ("r3", "1B2", false, false),
            ("r4", "1C4", false, true),
            ("rl", "1B3", false, false),
            ("rd", "1C4", true, false),
        ]
    } else {
        &[
            ("r2", "1A2", false, false),
            ("r1", "1C4", true, false),
            ("rl", "1D5", false, false),
            ("r3", "1A3", false, false),
            ("rd", "1C3", true, false),
            ("r4", "1B4", false, true),
            ("r3", "1A4", false, false),
        ]
    };
    let mut events = vec![];
    for (u, h, c, hidden) in placements {
        events.extend(play(game, RUSSIAN, setup(u, h, *c, *hidden)));
    }
    if !variant {
        events.extend(play(
            game,
            RUSSIAN,
            Command::LiftSetUp { unit: "rl".into() },
        ));
        events.extend(play(game, RUSSIAN, setup("rl", "1D6", false, false)));
    }
    events
}

#[test]
fn the_other_side_sees_nothing_of_a_set_up_until_it_ends() {
    let mut one = start();
    let mut two = start();
    let base = one.clone();
    let ev_one = russian_setup(&mut one, true);
    let ev_two = russian_setup(&mut two, false);
    for viewer in [Viewer::Side(GERMAN), Viewer::Spectator] {
        assert_eq!(
            one.project(viewer),
            two.project(viewer),
            "{viewer:?}'s snapshot"
        );
        assert_eq!(
            base.project(viewer),
            one.project(viewer),
            "{viewer:?}'s snapshot"
        );
        assert!(
            seen_by(&base, viewer, &ev_one).is_empty(),
            "{viewer:?}'s stream"
        );
        assert!(
            seen_by(&base, viewer, &ev_two).is_empty(),
            "{viewer:?}'s stream"
        );
    }
    // The German's commands meet the same refusal whatever the Russians placed.
    for command in [
        setup("g1", "1I3", false, false),
        Command::Done,
        Command::LiftSetUp { unit: "r1".into() },
        setup("r1", "1B2", false, false),
        Command::Move {
            units: vec!["r0".into()],
            to: hex("1A5"),
        },
    ] {
        let a = decide(&one, GERMAN, &command, &mut ScriptedDice::default());
        let b = decide(&two, GERMAN, &command, &mut ScriptedDice::default());
        assert_eq!(a, b, "{command:?}");
        assert!(a.is_err());
    }
    // The Russian's own view holds every placement.
    let own = one.project(Viewer::Side(RUSSIAN));
    assert_eq!(own.units["r1"].hex, hex("1C3"));
    assert!(own.setup.as_ref().unwrap().hip.contains("r4"));
    assert!(one
        .project(Viewer::Side(GERMAN))
        .setup
        .unwrap()
        .hip
        .is_empty());
}

/// Which unit a side gave the weapons of its set-up to (A4.43) is as hidden as where it set
/// its units up: the other side and a spectator see the same snapshots and streams whichever
/// units hold them, until set-up ends.
#[test]
fn weapons_given_at_set_up_are_hidden_with_their_holders() {
    let scenario =
        Scenario::from_toml(include_str!("positions/scenarios/setup-weapons.toml")).unwrap();
    let base = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let give = |mmg: &str, dc: &str| {
        let mut game = base.clone();
        let mut events = vec![];
        for (unit, at, concealed) in [
            ("r1", "1A2", false),
            ("r2", "1A3", false),
            ("rl", "1B2", false),
            ("rd", "1C3", true),
        ] {
            let weapons: Vec<String> = [("rmmg", mmg), ("rdc", dc)]
                .iter()
                .filter(|(_, holder)| *holder == unit)
                .map(|(w, _)| w.to_string())
                .collect();
            events.extend(play(
                &mut game,
                RUSSIAN,
                Command::SetUp {
                    unit: unit.into(),
                    hex: hex(at),
                    concealed,
                    hidden: false,
                    weapons,
                },
            ));
        }
        events.extend(play(&mut game, RUSSIAN, Command::Done));
        (game, events)
    };
    let (one, ev_one) = give("r1", "rl");
    let (two, ev_two) = give("rl", "r2");
    assert_eq!(one.weapons["rmmg"].held_by.as_deref(), Some("r1"));
    assert_eq!(two.weapons["rmmg"].held_by.as_deref(), Some("rl"));
    for viewer in [Viewer::Side(GERMAN), Viewer::Spectator] {
        let view = one.project(viewer);
        assert_eq!(view, two.project(viewer), "{viewer:?}'s snapshot");
        assert!(!view.weapons.contains_key("rmmg"), "{viewer:?}");
        assert_eq!(
            seen_by(&base, viewer, &ev_one),
            seen_by(&base, viewer, &ev_two),
            "{viewer:?}'s stream"
        );
    }
    // The German sets up and play begins: each weapon is with its holder, in its hex.
    let mut game = one;
    play(
        &mut game,
        GERMAN,
        Command::SetUp {
            unit: "g1".into(),
            hex: hex("1H3"),
            concealed: false,
            hidden: false,
            weapons: vec!["glmg".into()],
        },
    );
    play(&mut game, GERMAN, Command::Done);
    assert!(game.setup.is_none());
    let german = game.project(Viewer::Side(GERMAN));
    assert_eq!(german.weapons["rmmg"].held_by.as_deref(), Some("r1"));
    assert_eq!(german.weapons["rdc"].hex, hex("1B2"));
}

#[test]
fn when_set_up_ends_concealed_units_show_as_question_marks_and_hip_ones_not_at_all() {
    let mut game = start();
    russian_setup(&mut game, true);
    let mid = game.clone();
    let mut events = play(&mut game, RUSSIAN, Command::Done);
    events.extend(play(&mut game, GERMAN, setup("g1", "1I3", false, false)));
    let before_done = game.clone();
    let done = play(&mut game, GERMAN, Command::Done);
    assert!(game.setup.is_none());
    assert!(matches!(done.last(), Some(Event::SetupEnded(_))));
    // The Russian stream: the German's placement is not in it, the end is.
    let russian = seen_by(&mid, Viewer::Side(RUSSIAN), &events);
    assert!(russian
        .iter()
        .all(|v| !matches!(v.event, Event::UnitSetUp(_))));
    let german_view = game.project(Viewer::Side(GERMAN));
    assert!(!german_view.units.contains_key("r4"), "HIP stays hidden");
    assert!(
        !german_view.units.contains_key("r1"),
        "a \"?\" goes by its alias"
    );
    let question_marks = german_view
        .units
        .values()
        .filter(|u| u.id.starts_with('?'))
        .count();
    assert_eq!(question_marks, 2, "r1 and the Dummy, each a \"?\"");
    assert!(
        !german_view.weapons.contains_key("lmg1"),
        "a \"?\"'s SW is unseen"
    );
    assert_eq!(german_view.units["r2"].hex, hex("1C3"));
    // Its stream shows the same: the end, in map order, with no id under "?".
    let seen = seen_by(&before_done, Viewer::Side(GERMAN), &done);
    let Some(Event::SetupEnded(SetupEnded { units })) = seen.last().map(|v| &v.event) else {
        panic!("the German receives the end of set-up");
    };
    assert!(units
        .iter()
        .all(|u| u.id != "r1" && u.id != "rd" && u.id != "r4"));
    let hexes: Vec<Hex> = units.iter().map(|u| u.hex).collect();
    let mut sorted = hexes.clone();
    sorted.sort();
    assert_eq!(hexes, sorted);
    let mut view = before_done.project(Viewer::Side(GERMAN));
    for v in &seen {
        apply_viewed(&mut view, v);
    }
    view.version = 0;
    assert_eq!(view, game.project(Viewer::Side(GERMAN)));
}

/// Previews in set-up are the decision and say no more than a refusal: the German's
/// previews while the Russian sets up are the same whatever the Russian placed; an entry is
/// priced as it is paid.
#[test]
fn previews_through_set_up_and_entry() {
    use protocol::chain::Entry;
    use protocol::preview::preview;
    use protocol::referee::Referee;
    let scenario = Scenario::from_toml(SCENARIO).unwrap();
    let mut seeds = {
        let mut next = 10u8;
        move || {
            next = next.wrapping_add(1);
            [next; 32]
        }
    };
    let mut referees: Vec<Referee> = (0..2)
        .map(|_| Referee::new(Entry::created(scenario.clone()), vec![[1; 32]]).unwrap())
        .collect();
    for (referee, variant) in referees.iter_mut().zip([true, false]) {
        let mut game = referee.game().clone();
        for e in russian_setup(&mut game, variant) {
            let Event::UnitSetUp(UnitSetUp { unit, hip, .. }) = &e else {
                continue;
            };
            let command = setup(&unit.id, &unit.hex.to_string(), unit.concealed, *hip);
            let previewed = preview(referee.game(), referee.entries(), RUSSIAN, &command);
            assert!(previewed.is_ok(), "{command:?}: {previewed:?}");
            referee.play(RUSSIAN, &command, &mut seeds).unwrap();
        }
    }
    for command in [
        setup("g1", "1I3", false, false),
        Command::Done,
        setup("r1", "1B2", false, false),
        Command::LiftSetUp { unit: "r2".into() },
    ] {
        let [a, b] = [&referees[0], &referees[1]]
            .map(|r| preview(r.game(), r.entries(), GERMAN, &command).map(|p| p.summary));
        assert_eq!(a, b, "{command:?}");
        assert!(a.is_err());
    }
    let referee = &mut referees[0];
    for (side, command) in [
        (RUSSIAN, setup("rl", "1B3", false, false)),
        (RUSSIAN, Command::Done),
        (GERMAN, setup("g1", "1I3", false, false)),
        (GERMAN, Command::Done),
    ] {
        let _ = referee.play(side, &command, &mut seeds);
    }
    while referee.game().clock.phase() != protocol::phase::Phase::Movement {
        let side = referee.game().acting();
        referee.play(side, &Command::Done, &mut seeds).unwrap();
    }
    let enter = Command::Enter {
        units: vec!["g8".into()],
        to: hex("1J3"),
    };
    let previewed = preview(referee.game(), referee.entries(), GERMAN, &enter).unwrap();
    let events = referee.play(GERMAN, &enter, &mut seeds).unwrap();
    let paid = events.iter().find_map(|e| match e {
        Event::UnitsEntered(UnitsEntered { cost, .. }) => Some(cost.clone()),
        _ => None,
    });
    assert_eq!(previewed.cost, paid);
    assert!(
        previewed.summary.starts_with("1 MF"),
        "{}",
        previewed.summary
    );
}

#[derive(Clone, Debug)]
enum Draw {
    Done,
    SetUp(usize, usize, u8),
    Lift(usize),
    Move(usize, usize),
    Enter(usize, usize),
}

fn draw() -> impl Strategy<Value = Draw> {
    prop_oneof![
        2 => Just(Draw::Done),
        6 => (0usize..20, 0usize..60, 0u8..8).prop_map(|(u, h, f)| Draw::SetUp(u, h, f)),
        1 => (0usize..20).prop_map(Draw::Lift),
        3 => (0usize..20, 0usize..7).prop_map(|(u, d)| Draw::Move(u, d)),
        1 => (0usize..20, 0usize..60).prop_map(|(u, h)| Draw::Enter(u, h)),
    ]
}

/// The command a draw makes in `game`, and who gives it.
fn command(game: &Game, d: &Draw) -> (Side, Command) {
    let setup = game.scenario.setup.as_ref().unwrap();
    let ob: Vec<&protocol::setup::OffboardUnit> = setup.units.values().collect();
    let hexes: Vec<Hex> = game.scenario.hexes.keys().copied().collect();
    match d {
        Draw::Done => (game.acting(), Command::Done),
        Draw::SetUp(u, h, f) => {
            let u = ob[u % ob.len()];
            // Mostly within the side's area, so that set-ups finish; sometimes anywhere.
            // Mostly what the scenario allows the unit; one draw in eight asks for anything.
            let (concealed, hidden) = if *f == 7 {
                (h % 2 == 0, h % 3 == 0)
            } else {
                let concealed =
                    (u.may_conceal && f & 1 == 1) || u.kind == protocol::scenario::UnitKind::Dummy;
                (concealed, u.may_hide && !concealed && f & 2 == 2)
            };
            let area: Vec<Hex> = setup
                .area(u.side)
                .iter()
                .copied()
                .filter(|x| {
                    !concealed
                        || game.scenario.hexes[x].terrain == protocol::terrain::Terrain::Woods
                })
                .collect();
            let hex = if *h < 50 && !area.is_empty() {
                area[h % area.len()]
            } else {
                hexes[h % hexes.len()]
            };
            (
                u.side,
                Command::SetUp {
                    unit: u.id.clone(),
                    hex,
                    concealed,
                    hidden,
                    weapons: vec![],
                },
            )
        }
        Draw::Lift(u) => {
            let u = ob[u % ob.len()];
            (u.side, Command::LiftSetUp { unit: u.id.clone() })
        }
        Draw::Move(u, dir) => {
            let ids: Vec<&String> = game.units.keys().collect();
            let unit = &game.units[ids[u % ids.len()]];
            let n = unit.hex.neighbours();
            let to = n.get(*dir).copied().unwrap_or(unit.hex);
            (
                unit.side,
                Command::Move {
                    units: vec![unit.id.clone()],
                    to,
                },
            )
        }
        Draw::Enter(u, h) => {
            let u = ob[u % ob.len()];
            (
                u.side,
                Command::Enter {
                    units: vec![u.id.clone()],
                    to: hexes[h % hexes.len()],
                },
            )
        }
    }
}

/// Liveness in set-up: the side setting up can always finish — each unit left has a hex of
/// its area that takes it, and `done` is then accepted.
fn set_up_can_finish(game: &Game) -> Result<(), String> {
    let Some(turn) = &game.setup else {
        return Ok(());
    };
    let side = turn.side;
    let mut game = game.clone();
    let setup = game.scenario.setup.clone().unwrap();
    let left: Vec<String> = game
        .left_to_set_up(side)
        .iter()
        .map(|u| u.id.clone())
        .collect();
    for id in left {
        let dummy = setup.units[&id].kind == protocol::scenario::UnitKind::Dummy;
        let placed = setup.area(side).iter().find_map(|h| {
            let command = Command::SetUp {
                unit: id.clone(),
                hex: *h,
                concealed: dummy,
                hidden: false,
                weapons: vec![],
            };
            decide(&game, side, &command, &mut ScriptedDice::default()).ok()
        });
        let events = placed.ok_or_else(|| format!("no hex of the area takes `{id}`"))?;
        for e in &events {
            apply(&mut game, e);
        }
    }
    decide(&game, side, &Command::Done, &mut ScriptedDice::default())
        .map(|_| ())
        .map_err(|v| format!("`done` refused once all are placed: {v}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn replay_equals_live_and_every_viewer_keeps_its_projection_through_set_up(
        draws in prop::collection::vec(draw(), 0..160),
    ) {
        let mut game = start();
        let mut log = vec![Event::GameCreated(GameCreated { scenario: game.scenario.as_ref().clone() })];
        let mut views: Vec<Game> = VIEWERS
            .iter()
            .map(|v| {
                let mut view = game.project(*v);
                view.version = 1;
                view
            })
            .collect();
        for d in &draws {
            let (side, command) = command(&game, d);
            let before_hash = game.state_hash();
            let events = match decide(&game, side, &command, &mut ScriptedDice::default()) {
                Ok(events) => events,
                Err(_) => {
                    prop_assert_eq!(game.state_hash(), before_hash, "a refusal changed the game");
                    continue;
                }
            };
            for e in &events {
                let mut after = game.clone();
                apply(&mut after, e);
                for (v, view) in VIEWERS.iter().zip(views.iter_mut()) {
                    match project_event(&game, &after, *v, e) {
                        Some(seen) => apply_viewed(view, &seen),
                        None => prop_assert_eq!(
                            game.project(*v),
                            after.project(*v),
                            "{:?} misses {:?} but its projection changes",
                            v,
                            e
                        ),
                    }
                    let mut projection = after.project(*v);
                    projection.version = view.version;
                    prop_assert_eq!(&*view, &projection, "{:?} diverged at {:?}", v, e);
                    // While set-up lasts, nobody but its owner sees a unit placed in it.
                    if after.setup.is_some() {
                        for u in projection.units.values() {
                            let placed = after.scenario.setup.as_ref().unwrap().units.contains_key(&u.id);
                            prop_assert!(
                                !placed || *v == Viewer::Side(u.side),
                                "{:?} sees {} during set-up", v, u.id
                            );
                        }
                    }
                }
                log.push(e.clone());
                game = after;
                prop_assert!(set_up_can_finish(&game).is_ok(), "{:?}", set_up_can_finish(&game));
            }
        }
        let replayed = Game::replay(&log).unwrap();
        prop_assert_eq!(replayed.state_hash(), game.state_hash());
    }
}

/// The loader's room check counts only hexes a unit may be set up in: a set-up area whose
/// hexes are mostly Wire, Panji, pillbox or bridge hexes (refused at placement, as entering
/// them is) cannot take a side's units, and the scenario is refused as it is read rather than
/// leaving that side unable to finish set-up.
#[test]
fn an_area_of_fortification_hexes_the_engine_does_not_model_has_no_room() {
    let scenario = |fortified: &str| {
        format!(
            r#"
name = "room"
turns = 1
first = "german"
sides = [{{ id = "german", name = "German" }}, {{ id = "russian", name = "Russian" }}]

[[area]]
from = "1A1"
to = "1C3"
terrain = "open_ground"

[[hexes]]
hex = "1A1"
terrain = "open_ground"
{fortified}

[setup]
order = ["german"]

[[setup.areas]]
side = "german"
hexes = ["1A1", "1A2"]

{units}
"#,
            units = (0..6)
                .map(|i| format!(
                    "[[units]]\nid = \"g{i}\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\noffboard = true\n"
                ))
                .collect::<String>()
        )
    };
    // Six squads fill two hexes exactly (A5.1): with both usable the scenario loads.
    Scenario::from_toml(&scenario("")).expect("two open hexes hold six squads");
    for f in ["wire", "panji", "pillbox", "bridge"] {
        let err = Scenario::from_toml(&scenario(&format!("fortifications = [\"{f}\"]")))
            .expect_err("one hex of the two is refused at placement");
        let why = format!("{err:?}");
        assert!(
            why.contains("1 hex(es) a unit may be placed in"),
            "{f}: {why}"
        );
    }
}
