//! The projection law for events (`protocol::game::view`): each event a viewer receives says no
//! more than its own projection before and after shows.
//!
//! - Property, on random play with "?" stacks, dummies, a HIP unit, sewers, a tunnel and fire: every
//!   viewer that applies its stream reaches its projection exactly; and a twin game that differs
//!   only in what the viewer may not know (the ids of units hidden or under "?" from it, their
//!   ratings, their MF allotments) gives the same projections and the same projected events.
//! - Property, on the same random play: no refusal names a unit in prose; each unit it names is
//!   a typed piece, rendered for its reader (STYLE 11).
//! - One test for each leak once found: a leader's MF allotment, the weapon a "?" drops, unit
//!   ids under "?", and any trace of a HIP unit's activity.
//! - Close Combat with a "?" (A11.19, A12.14): twin games, a squad under the "?" in one and
//!   a Dummy in the other, defending or advancing in; the enemy's stream, projection and
//!   refusals are the same in both.

use proptest::prelude::*;
use protocol::event::{GameCreated, SquadReduced, StepPassed, UnitMoved, WeaponDropped};
use protocol::game::view::{apply_viewed, command_in_ids, project_event, Viewed};
use protocol::game::{apply, Game, Viewer};
use protocol::record::stream::Streams;
use protocol::record::words::Sides;
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Hex, Outcome, Scenario, ScriptedDice, Side};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const SCENARIO: &str = include_str!("hidden/scenario.toml");

const VIEWERS: [Viewer; 3] = [
    Viewer::Side(Side::A),
    Viewer::Side(Side::B),
    Viewer::Spectator,
];
const RUSSIAN: Viewer = Viewer::Side(Side::B);

fn start() -> Game {
    let scenario = Scenario::from_toml(SCENARIO).unwrap();
    Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
}

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

/// Plays `command`, returning its events and applying them.
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

/// To the German MPh: RPh (both), PFPh.
fn to_german_mph(game: &mut Game) {
    while game.clock.phase() != protocol::phase::Phase::Movement {
        let side = game.acting();
        play(game, side, Command::Done);
    }
}

#[test]
fn a_concealed_leader_moving_shows_no_allotment() {
    let mut game = start();
    to_german_mph(&mut game);
    let before = game.clone();
    let events = play(
        &mut game,
        Side::A,
        Command::Move {
            units: vec!["hl81".into()],
            to: hex("20D6"),
        },
    );
    let seen = seen_by(&before, RUSSIAN, &events);
    let json = serde_json::to_string(&seen).unwrap();
    assert!(!json.contains("hl81"), "{json}");
    let moved = seen
        .iter()
        .find_map(|v| match &v.event {
            Event::UnitMoved(UnitMoved { units, mf, .. }) => Some((units.clone(), mf.clone())),
            _ => None,
        })
        .expect("the Russian sees a \"?\" move");
    assert!(moved.0[0].starts_with('?'), "{:?}", moved.0);
    for account in &moved.1 {
        assert_eq!(account.allotment, Default::default(), "{json}");
        assert_eq!(account.left, Default::default(), "{json}");
    }
    // The German sees his leader's full account: 6 MF (A4.1).
    let own = seen_by(&before, Viewer::Side(Side::A), &events);
    assert!(serde_json::to_string(&own).unwrap().contains("hl81"));
}

/// A9.72 with A12: the weapon a "?" possesses is not in the enemy's view, so a repair of it
/// would tell the enemy what the "?" holds. It is refused as not modelled, as a Transfer under
/// "?" is (A4.431). Before, `hq467` repaired its LMG, and the Russian received the repair's dr:
/// a roll for a malfunctioned weapon his view does not show.
#[test]
fn a_question_mark_repairing_its_weapon_tells_the_enemy_nothing() {
    let mut game = start();
    assert_eq!(game.clock.phase(), protocol::phase::Phase::Rally);
    let lmg = game.weapons.get_mut("lmg").unwrap();
    lmg.malfunctioned = true;
    lmg.ratings = Some(protocol::scenario::SwRatings {
        fp: 2,
        range: 6,
        breakdown: 12,
        repair: Some(2),
        rof: None,
    });
    assert!(game.units["hq467"].concealed);
    let before = game.clone();
    let repair = Command::RepairWeapon {
        weapon: "lmg".into(),
    };
    match decide(
        &game,
        Side::A,
        &repair,
        &mut ScriptedDice::new([2]).unwrap(),
    ) {
        Ok(events) => {
            let seen = seen_by(&before, RUSSIAN, &events);
            let json = serde_json::to_string(&seen).unwrap();
            panic!("repaired under \"?\": the Russian receives {json}");
        }
        Err(refusal) => {
            assert_eq!(refusal.rule, "A9.72", "{refusal}");
            assert_eq!(
                refusal.kind,
                protocol::ViolationKind::NotModelled,
                "{refusal}"
            );
        }
    }
}

#[test]
fn a_concealed_squad_dropping_its_weapon_is_named_by_its_alias() {
    let mut game = start();
    to_german_mph(&mut game);
    let before = game.clone();
    let alias = before.aliases["hq467"].clone();
    let events = play(
        &mut game,
        Side::A,
        Command::Drop {
            unit: "hq467".into(),
            weapon: "lmg".into(),
        },
    );
    for viewer in [RUSSIAN, Viewer::Spectator] {
        let seen = seen_by(&before, viewer, &events);
        assert_eq!(
            seen[0].event,
            Event::WeaponDropped(WeaponDropped {
                unit: alias.clone(),
                weapon: "lmg".into()
            })
        );
        // The weapon now lies in the hex, seen by all, as the projection after shows.
        assert_eq!(seen[0].weapons.len(), 1);
        assert_eq!(seen[0].weapons[0].held_by, None);
        let mut view = before.project(viewer);
        apply_viewed(&mut view, &seen[0]);
        let mut projection = game.project(viewer);
        projection.version = view.version;
        assert_eq!(view, projection);
    }
}

#[test]
fn no_unit_id_under_a_question_mark_reaches_others() {
    let game = start();
    for viewer in [Viewer::Side(Side::A), Viewer::Spectator] {
        let json = serde_json::to_string(&game.project(viewer)).unwrap();
        let created = serde_json::to_string(&seen_by(
            &Game::new(game.scenario.clone()),
            viewer,
            &[Event::GameCreated(GameCreated {
                scenario: (*game.scenario).clone(),
            })],
        ))
        .unwrap();
        for secret in ["rc447", "\"rd\"", "\"rh\"", "atr", "4-4-7\",\"hex\":\"20F4"] {
            assert!(!json.contains(secret), "{viewer:?} state has {secret}");
            assert!(
                !created.contains(secret),
                "{viewer:?} GameCreated has {secret}"
            );
        }
    }
    // Aliases name no id and are numbered, not derived from ids.
    for (id, alias) in &game.aliases {
        assert!(alias.starts_with('?') && !alias.contains(id.as_str()));
        assert!(alias[1..].parse::<u32>().is_ok(), "{alias}");
    }
    assert_eq!(game.aliases.len(), 5, "{:?}", game.aliases);
}

#[test]
fn a_hip_units_activity_leaves_no_trace_in_others_streams() {
    // The same game twice; in the second the Russian adjudicates a break on its own HIP unit.
    let quiet = start();
    let mut busy = start();
    let mut quiet_streams = Streams::of_log([&Event::GameCreated(GameCreated {
        scenario: (*quiet.scenario).clone(),
    })]);
    let mut busy_streams = quiet_streams.clone();
    let mut quiet_game = quiet.clone();
    let step = |game: &mut Game, streams: &mut Streams, side: Side, command: Command| {
        let events = decide(game, side, &command, &mut ScriptedDice::default()).unwrap();
        for e in &events {
            let before = game.clone();
            apply(game, e);
            streams.push(&before, game, e);
        }
    };
    step(
        &mut busy,
        &mut busy_streams,
        Side::B,
        Command::Adjudicate {
            unit: "rh".into(),
            outcome: Outcome::Break,
            note: "`rh` broke under fire".into(),
        },
    );
    for _ in 0..3 {
        let side = quiet_game.acting();
        step(&mut quiet_game, &mut quiet_streams, side, Command::Done);
        step(&mut busy, &mut busy_streams, side, Command::Done);
    }
    assert_ne!(busy.version, quiet_game.version, "the logs differ");
    for viewer in [Viewer::Side(Side::A), Viewer::Spectator] {
        // Everything the viewer receives: the events, their words, when, and the hashes.
        let received = |s: &Streams| -> Vec<_> {
            s.of(viewer)
                .iter()
                .map(|e| {
                    let sides = Sides::of(&quiet_game.scenario);
                    (e.viewed.clone(), e.hash, e.text(&sides), e.when(&sides))
                })
                .collect()
        };
        assert!(
            received(&busy_streams) == received(&quiet_streams),
            "{viewer:?}"
        );
        assert_eq!(busy_streams.hash(viewer, 4), quiet_streams.hash(viewer, 4));
    }
    assert_eq!(busy_streams.len(RUSSIAN), quiet_streams.len(RUSSIAN) + 1);
}

#[test]
fn the_event_that_reveals_a_unit_says_which_question_mark_it_was() {
    let mut game = start();
    to_german_mph(&mut game);
    let alias = game.aliases["rc447"].clone();
    let before = game.clone();
    // ga walks into 20F4, held by the Russian "?": stopped, the squad revealed and the dummy
    // removed (A12.15).
    let events = play(
        &mut game,
        Side::A,
        Command::Move {
            units: vec!["ga".into()],
            to: hex("20F4"),
        },
    );
    let seen = seen_by(&before, Viewer::Side(Side::A), &events);
    let blocked = seen
        .iter()
        .find(|v| matches!(v.event, Event::UnitEntryBlocked(_)))
        .expect("the move is blocked by the \"?\"");
    assert!(blocked
        .renamed
        .iter()
        .any(|r| r.from == alias && r.to == "rc447"));
}

#[test]
fn a_player_names_the_opponents_question_mark_by_its_alias() {
    let game = start();
    let alias = game.aliases["rc447"].clone();
    let adjudicate = |unit: &str| Command::Adjudicate {
        unit: unit.into(),
        outcome: Outcome::Pin,
        note: String::new(),
    };
    assert_eq!(
        command_in_ids(&game, Side::A, adjudicate(&alias)),
        adjudicate("rc447")
    );
    // Its own units it names by id: an alias of its own is not turned into one.
    let own = game.aliases["hq467"].clone();
    assert_eq!(
        command_in_ids(&game, Side::A, adjudicate(&own)),
        adjudicate(&own)
    );
}

/// A German squad beside a Russian "?" in woods (3C3); `under` is what the "?" hides.
fn cc_with_question_mark(under: &str) -> String {
    format!(
        r#"
name = "A11.19: a ? in Close Combat"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3E6"
terrain = "open_ground"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "3C2"

[[units]]
id = "rq"
side = "russian"
{under}
hex = "3C3"
concealed = true
"#
    )
}

/// What the German is told, playing to a Close Combat with a Russian "?" (A11.19, A12.14):
/// the events of his stream from the first Rally Phase on, his projection in the CCPh, and
/// his refusals there — his designation naming the "?" by its alias, and his `done`.
fn german_side_of_cc_with(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let scenario = Scenario::from_toml(&cc_with_question_mark(under)).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let german = Viewer::Side(Side::A);
    let mut seen = vec![];
    let mut step = |game: &mut Game, side: Side, command: Command| {
        let before = game.clone();
        let events = play(game, side, command);
        seen.extend(seen_by(&before, german, &events));
    };
    while game.clock.phase() != protocol::phase::Phase::Advance {
        let side = game.acting();
        step(&mut game, side, Command::Done);
    }
    step(
        &mut game,
        Side::A,
        Command::Advance {
            units: vec!["g1".into()],
            to: hex("3C3"),
        },
    );
    // The APh ends: no Ambush check by the engine where a "?" is (A11.4 row), so no dice.
    step(&mut game, Side::A, Command::Done);
    assert_eq!(game.clock.phase(), protocol::phase::Phase::CloseCombat);

    let alias = game.aliases["rq"].clone();
    let designation = Command::CloseCombat {
        hex: hex("3C3"),
        attacks: vec![protocol::command::CcAttack {
            attackers: vec!["g1".into()],
            defenders: vec![alias],
        }],
        withdrawals: vec![],
        no_ambush: false,
    };
    let told = |game: &Game, command: Command| {
        let command = command_in_ids(game, Side::A, command);
        let refusal = decide(game, Side::A, &command, &mut ScriptedDice::default())
            .expect_err("the engine leaves a CC with a \"?\" to the players");
        format!(
            "{} {:?}: {}",
            refusal.rule,
            refusal.kind,
            refusal.render(
                |id| protocol::game::view::name_for(game, german, id),
                |_| None
            )
        )
    };
    let refusals = vec![told(&game, designation), told(&game, Command::Done)];
    assert!(refusals[0].starts_with("A11.19"), "{}", refusals[0]);
    // The ATTACKER records the Melee the players' CC leaves (A11.7): the same event either way.
    step(&mut game, Side::A, Command::Melee { hex: hex("3C3") });
    (seen, game.project(german), refusals)
}

#[test]
fn a_question_mark_in_close_combat_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "German",
        german_side_of_cc_with("kind = \"squad\"\nratings = \"4-4-7\""),
        german_side_of_cc_with(OTHER_SQUAD),
    );
}

/// The German's side of an advance into the woods of a Russian "?" (`under`) until the CCPh
/// starts: his stream from the first Rally Phase on, and his projection then.
fn german_side_of_cc_start_with(under: &str) -> (Vec<Viewed>, Game) {
    let scenario = Scenario::from_toml(&cc_with_question_mark(under)).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let german = Viewer::Side(Side::A);
    let start = game.project(german);
    let mut seen = vec![];
    let mut step = |game: &mut Game, side: Side, command: Command| {
        let before = game.clone();
        let events = play(game, side, command);
        seen.extend(seen_by(&before, german, &events));
    };
    while game.clock.phase() != protocol::phase::Phase::Advance {
        let side = game.acting();
        step(&mut game, side, Command::Done);
    }
    step(
        &mut game,
        Side::A,
        Command::Advance {
            units: vec!["g1".into()],
            to: hex("3C3"),
        },
    );
    step(&mut game, Side::A, Command::Done);
    assert_eq!(game.clock.phase(), protocol::phase::Phase::CloseCombat);
    replays_to(start, &seen, &game, german);
    (seen, game.project(german))
}

/// A11.19: a Dummy in a CC Location is removed as the CCPh starts, before any designation.
/// The German advancing into a Russian "?" is told nothing of what it hides until then — his
/// stream is the same, event for event, whether a squad or a Dummy is under it — and is told
/// then by one event, `DummiesRemovedInCloseCombat`, naming the "?" by the alias he knows: the
/// Dummy is gone from his projection, the squad stays under its "?".
#[test]
fn a_dummy_in_close_combat_is_removed_as_the_ccph_starts() {
    let (squad, squad_view) = german_side_of_cc_start_with(SQUAD);
    let (dummy, dummy_view) = german_side_of_cc_start_with(DUMMY);
    let removed = dummy
        .iter()
        .position(|v| matches!(v.event, Event::DummiesRemovedInCloseCombat(_)))
        .expect("the Dummy is removed as the CCPh starts");
    assert!(
        !squad
            .iter()
            .any(|v| matches!(v.event, Event::DummiesRemovedInCloseCombat(_))),
        "a squad under \"?\" is no Dummy"
    );
    let d = differ(&squad[..removed].to_vec(), &dummy[..removed].to_vec());
    assert!(d.is_none(), "told before the removal: {d:?}");
    let Event::DummiesRemovedInCloseCombat(e) = &dummy[removed].event else {
        unreachable!()
    };
    let start = Game::replay([&Event::GameCreated(GameCreated {
        scenario: Scenario::from_toml(&cc_with_question_mark(DUMMY)).unwrap(),
    })])
    .unwrap();
    assert_eq!(e.dummies_removed, vec![start.aliases["rq"].clone()]);
    assert_eq!(e.hex, hex("3C3"));
    let alias = &start.aliases["rq"];
    assert!(
        squad_view.units.contains_key(alias),
        "the squad keeps its \"?\""
    );
    assert!(
        dummy_view.units.get(alias).is_none_or(|u| u.eliminated),
        "the Dummy is gone"
    );
    assert!(
        !dummy_view.units.contains_key("rq"),
        "the Dummy's own id never reaches the German"
    );
}

/// The concealed ATTACKER's side of it: a German "?" (one squad or another) advances into a
/// Known Russian squad's woods (3C3). What the Russian is told from the first Rally Phase on
/// — his stream, his projection in the CCPh, his refusals there (his designation, naming the
/// "?" by its alias, before the ATTACKER's and after; his attempt to record the Melee) — is
/// the same either way.
fn russian_side_of_cc_with(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let toml = format!(
        r#"
name = "A11.19: a ? advancing into Close Combat"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3E6"
terrain = "open_ground"

[[hexes]]
hex = "3C2"
terrain = "woods"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C2"
concealed = true

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3C3"
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let russian = Viewer::Side(Side::B);
    let mut seen = vec![];
    let mut step = |game: &mut Game, side: Side, command: Command| {
        let before = game.clone();
        let events = play(game, side, command);
        seen.extend(seen_by(&before, russian, &events));
    };
    while game.clock.phase() != protocol::phase::Phase::Advance {
        let side = game.acting();
        step(&mut game, side, Command::Done);
    }
    step(
        &mut game,
        Side::A,
        Command::Advance {
            units: vec!["gq".into()],
            to: hex("3C3"),
        },
    );
    step(&mut game, Side::A, Command::Done);
    assert_eq!(game.clock.phase(), protocol::phase::Phase::CloseCombat);

    let alias = game.aliases["gq"].clone();
    let designation = Command::CloseCombat {
        hex: hex("3C3"),
        attacks: vec![protocol::command::CcAttack {
            attackers: vec!["r1".into()],
            defenders: vec![alias],
        }],
        withdrawals: vec![],
        no_ambush: false,
    };
    let told = |game: &Game, side: Side, command: Command| {
        let command = command_in_ids(game, side, command);
        let refusal =
            decide(game, side, &command, &mut ScriptedDice::default()).expect_err("refused");
        format!(
            "{} {:?}: {}",
            refusal.rule,
            refusal.kind,
            refusal.render(
                |id| protocol::game::view::name_for(game, russian, id),
                |_| None
            )
        )
    };
    let refusals = vec![
        told(&game, Side::B, designation.clone()),
        told(&game, Side::B, Command::Melee { hex: hex("3C3") }),
    ];
    // The German's own designation is refused (the engine leaves the CC to the players,
    // A11.19); he records the Melee, which the Russian sees alike either way.
    let german_cc = Command::CloseCombat {
        hex: hex("3C3"),
        attacks: vec![protocol::command::CcAttack {
            attackers: vec!["gq".into()],
            defenders: vec!["r1".into()],
        }],
        withdrawals: vec![],
        no_ambush: false,
    };
    let refused = decide(&game, Side::A, &german_cc, &mut ScriptedDice::default())
        .expect_err("a CC with a \"?\" is the players'");
    assert_eq!(refused.rule, "A11.19");
    step(&mut game, Side::A, Command::Melee { hex: hex("3C3") });
    (seen, game.project(russian), refusals)
}

#[test]
fn a_question_mark_advancing_into_close_combat_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "Russian",
        russian_side_of_cc_with("kind = \"squad\"\nratings = \"4-6-7\""),
        russian_side_of_cc_with(OTHER_SQUAD),
    );
}

#[test]
fn a_cc_designation_names_the_opponents_question_mark_by_its_alias() {
    let game = start();
    let alias = game.aliases["rc447"].clone();
    let cc = |defender: &str| Command::CloseCombat {
        hex: hex("20F4"),
        attacks: vec![protocol::command::CcAttack {
            attackers: vec!["hq467".into()],
            defenders: vec![defender.into()],
        }],
        withdrawals: vec![],
        no_ambush: false,
    };
    assert_eq!(command_in_ids(&game, Side::A, cc(&alias)), cc("rc447"));
    // An alias the side does not see under "?" (its own unit's) is left for the rules to refuse.
    let own = game.aliases["hq467"].clone();
    assert_eq!(command_in_ids(&game, Side::A, cc(&own)), cc(&own));
}

#[derive(Clone, Debug)]
enum Draw {
    Done,
    Move(usize, usize),
    MoveStack(usize, usize),
    Place(usize),
    EnterTunnel(usize),
    Surface(usize),
    Sewer(usize, usize),
    Drop(usize),
    PickUp(usize),
    Adjudicate(usize),
    DoubleTime(usize),
    ClaimWa(usize),
    ForfeitWa(usize),
    ShowForWa(usize),
    Decline(usize),
    Shellhole(usize),
    RoutThroughTunnel(usize),
    Rout(usize, usize),
    ClaimTunnelSeen(usize, usize),
    DiscoverTunnel(usize),
    Rally(usize, usize),
    ProposeEnd(usize),
    AcceptEnd(usize),
    Concede(usize),
    Attack(usize, usize),
    ResolveAttack(usize),
}

fn draw() -> impl Strategy<Value = Draw> {
    prop_oneof![
        4 => Just(Draw::Done),
        5 => (0usize..40, 0usize..7).prop_map(|(u, d)| Draw::Move(u, d)),
        3 => (0usize..40, 0usize..7).prop_map(|(u, d)| Draw::MoveStack(u, d)),
        1 => (0usize..40).prop_map(Draw::Place),
        1 => (0usize..40).prop_map(Draw::EnterTunnel),
        1 => (0usize..40).prop_map(Draw::Surface),
        2 => (0usize..40, 0usize..7).prop_map(|(u, d)| Draw::Sewer(u, d)),
        1 => (0usize..40).prop_map(Draw::Drop),
        1 => (0usize..40).prop_map(Draw::PickUp),
        1 => (0usize..40).prop_map(Draw::Adjudicate),
        1 => (0usize..40).prop_map(Draw::DoubleTime),
        1 => (0usize..40).prop_map(Draw::ClaimWa),
        1 => (0usize..40).prop_map(Draw::ForfeitWa),
        1 => (0usize..40).prop_map(Draw::ShowForWa),
        2 => (0usize..2).prop_map(Draw::Decline),
        1 => (0usize..40).prop_map(Draw::Shellhole),
        1 => (0usize..40).prop_map(Draw::RoutThroughTunnel),
        2 => (0usize..40, 0usize..7).prop_map(|(u, d)| Draw::Rout(u, d)),
        1 => (0usize..40, 0usize..4).prop_map(|(u, e)| Draw::ClaimTunnelSeen(u, e)),
        1 => (0usize..40).prop_map(Draw::DiscoverTunnel),
        1 => (0usize..40, 0usize..40).prop_map(|(u, l)| Draw::Rally(u, l)),
        1 => (0usize..2).prop_map(Draw::ProposeEnd),
        1 => (0usize..2).prop_map(Draw::AcceptEnd),
        // Rare: it ends the game, and the rest of the draws are refused.
        1 => (0usize..40).prop_map(Draw::Concede),
        // Fire by a unit at another's hex, and its resolution (A7; a "?" that fires loses it,
        // A12.14).
        2 => (0usize..40, 0usize..40).prop_map(|(u, t)| Draw::Attack(u, t)),
        2 => (0usize..2).prop_map(Draw::ResolveAttack),
    ]
}

fn side_of(n: usize) -> Side {
    if n == 0 {
        Side::A
    } else {
        Side::B
    }
}

/// The command a draw makes in `game`, and who gives it.
fn command(game: &Game, d: &Draw) -> (Side, Command) {
    let ids: Vec<String> = game.units.keys().cloned().collect();
    let unit = |i: &usize| game.units[&ids[i % ids.len()]].clone();
    let stack = |u: &protocol::game::Unit| -> Vec<String> {
        game.units
            .values()
            .filter(|o| o.hex == u.hex && o.side == u.side && !o.eliminated)
            .map(|o| o.id.clone())
            .collect()
    };
    let toward = |u: &protocol::game::Unit, dir: &usize| {
        let n = u.hex.neighbours();
        if *dir >= n.len() {
            u.hex
        } else {
            n[*dir]
        }
    };
    match d {
        Draw::Done => (game.acting(), Command::Done),
        Draw::Move(u, dir) => {
            let u = unit(u);
            let to = toward(&u, dir);
            (
                u.side,
                Command::Move {
                    units: vec![u.id.clone()],
                    to,
                },
            )
        }
        Draw::MoveStack(u, dir) => {
            let u = unit(u);
            let to = toward(&u, dir);
            (
                u.side,
                Command::Move {
                    units: stack(&u),
                    to,
                },
            )
        }
        Draw::Place(u) => {
            let u = unit(u);
            (
                u.side,
                Command::PlaceHidden {
                    unit: u.id.clone(),
                    claim_wall_advantage: false,
                },
            )
        }
        Draw::EnterTunnel(u) => {
            let u = unit(u);
            (
                u.side,
                Command::EnterTunnel {
                    units: vec![u.id.clone()],
                },
            )
        }
        Draw::Surface(u) => {
            let u = unit(u);
            (u.side, Command::Surface { units: stack(&u) })
        }
        Draw::Sewer(u, dir) => {
            let u = unit(u);
            let to = toward(&u, dir);
            (
                u.side,
                Command::SewerMove {
                    units: stack(&u),
                    to,
                },
            )
        }
        Draw::Drop(u) | Draw::PickUp(u) => {
            let u = unit(u);
            let weapon = game
                .weapons
                .values()
                .find(|w| match d {
                    Draw::Drop(_) => w.held_by.as_ref() == Some(&u.id),
                    _ => w.held_by.is_none() && w.hex == u.hex,
                })
                .map_or("none".to_string(), |w| w.id.clone());
            let command = match d {
                Draw::Drop(_) => Command::Drop {
                    unit: u.id.clone(),
                    weapon,
                },
                _ => Command::PickUp {
                    unit: u.id.clone(),
                    weapon,
                },
            };
            (u.side, command)
        }
        Draw::Adjudicate(u) => {
            let u = unit(u);
            (
                u.side,
                Command::Adjudicate {
                    unit: u.id.clone(),
                    outcome: Outcome::Pin,
                    note: format!("`{}` pinned", u.id),
                },
            )
        }
        Draw::DoubleTime(u) => {
            let u = unit(u);
            (u.side, Command::DoubleTime { units: stack(&u) })
        }
        Draw::ClaimWa(u) => {
            let u = unit(u);
            (u.side, Command::ClaimWallAdvantage { units: stack(&u) })
        }
        Draw::ForfeitWa(u) => {
            let u = unit(u);
            (u.side, Command::ForfeitWallAdvantage { units: stack(&u) })
        }
        Draw::ShowForWa(u) => {
            let u = unit(u);
            (u.side, Command::ShowForWallAdvantage { unit: u.id.clone() })
        }
        Draw::Decline(s) => (side_of(*s), Command::DeclineWallAdvantage),
        Draw::Shellhole(u) => {
            let u = unit(u);
            (u.side, Command::TakeShellholeCover { units: stack(&u) })
        }
        Draw::RoutThroughTunnel(u) => {
            let u = unit(u);
            (u.side, Command::RoutThroughTunnel { units: stack(&u) })
        }
        Draw::Rout(u, dir) => {
            let u = unit(u);
            let to = toward(&u, dir);
            (
                u.side,
                Command::Rout {
                    unit: u.id.clone(),
                    to,
                    morale: Some(8),
                },
            )
        }
        Draw::ClaimTunnelSeen(u, e) => {
            let u = unit(u);
            let entrances: Vec<Hex> = game.tunnels.iter().flat_map(|t| t.entrances).collect();
            let entrance = entrances
                .get(*e % entrances.len().max(1))
                .copied()
                .unwrap_or(u.hex);
            (
                u.side,
                Command::ClaimTunnelSeen {
                    unit: u.id.clone(),
                    entrance,
                },
            )
        }
        Draw::DiscoverTunnel(u) => {
            let u = unit(u);
            (u.side, Command::DiscoverTunnel { unit: u.id.clone() })
        }
        // A rally by a unit's own side, led by another unit half the time (A10.6).
        Draw::Rally(u, l) => {
            let u = unit(u);
            let leader = (l % 2 == 0).then(|| unit(l).id.clone());
            (
                u.side,
                Command::Rally {
                    unit: u.id.clone(),
                    broken_morale: 7,
                    leader,
                    desperation: l % 3 == 0,
                },
            )
        }
        Draw::ProposeEnd(s) => (side_of(*s), Command::ProposeEnd),
        Draw::AcceptEnd(s) => (side_of(*s), Command::AcceptEnd),
        // Conceding only on one draw in 40, so most games play on.
        Draw::Concede(n) if *n == 0 => (game.acting(), Command::Concede),
        Draw::Concede(_) => (game.acting(), Command::Done),
        Draw::Attack(u, t) => {
            let (u, t) = (unit(u), unit(t));
            (
                u.side,
                Command::DeclareAttack {
                    firers: vec![u.id.clone()],
                    target: t.hex,
                    into_sewer: false,
                },
            )
        }
        Draw::ResolveAttack(s) => (side_of(*s), Command::ResolveAttack),
    }
}

/// The units `viewer` sees only as "?" or not at all, before and after the event: their
/// qualities are secret from it.
fn masked_from(before: &Game, after: &Game, viewer: Viewer) -> Vec<String> {
    let secret = |g: &Game, id: &String| {
        g.units
            .get(id)
            .is_none_or(|u| viewer != Viewer::Side(u.side) && (u.hidden || u.concealed))
    };
    after
        .units
        .keys()
        .filter(|id| secret(after, id) && secret(before, id))
        .cloned()
        .collect()
}

/// Renames every string equal to a secret id (and `` `id` `` in text), and changes what the
/// viewer may not know of masked units: ratings, experience, MF allotments.
fn scramble(value: &mut Value, names: &BTreeMap<String, String>, masked: &[String]) {
    match value {
        Value::String(s) => {
            if let Some(n) = names.get(s.as_str()) {
                *s = n.clone();
            } else {
                for (id, n) in names {
                    *s = s.replace(&format!("`{id}`"), &format!("`{n}`"));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scramble(v, names, masked)),
        Value::Object(map) => {
            let masked_unit = map
                .get("id")
                .or_else(|| map.get("unit"))
                .and_then(Value::as_str)
                .is_some_and(|id| masked.iter().any(|m| m == id));
            let entries = std::mem::take(map);
            for (k, mut v) in entries {
                scramble(&mut v, names, masked);
                if masked_unit {
                    match k.as_str() {
                        "ratings" => v = Value::String("1-2-3".into()),
                        "inexperienced" => v = Value::Bool(!v.as_bool().unwrap_or(false)),
                        "allotment" => {
                            if let Value::Object(a) = &mut v {
                                for f in ["base", "total", "leader"] {
                                    if let Some(n) = a.get(f).and_then(Value::as_u64) {
                                        a.insert(f.into(), (n + 2).into());
                                    }
                                }
                            }
                        }
                        "left" => v = (v.as_u64().unwrap_or(0) + 2).into(),
                        _ => {}
                    }
                }
                let k = names.get(&k).cloned().unwrap_or(k);
                map.insert(k, v);
            }
        }
        _ => {}
    }
}

/// `game` and `event` as they would be in a game whose secrets from a viewer were other ones:
/// the ids it never learned renamed, the qualities of what it sees only as "?" changed.
fn twin(game: &Game, event: &Event, never_known: &[String], masked: &[String]) -> (Game, Event) {
    let names: BTreeMap<String, String> = never_known
        .iter()
        .enumerate()
        .map(|(i, id)| (id.clone(), format!("zz{i}x")))
        .collect();
    let mut value = serde_json::to_value((game, event)).unwrap();
    scramble(&mut value, &names, masked);
    serde_json::from_value(value).unwrap()
}

/// The first place two values differ, as JSON paths and values; `None` if equal.
/// Asserts that two games differing only in what a "?" hides (a squad, or a Dummy) told
/// `who` the same: the same refusals or words, the same stream, the same projection.
fn alike<T: PartialEq + std::fmt::Debug>(
    who: &str,
    squad: (Vec<Viewed>, Game, T),
    dummy: (Vec<Viewed>, Game, T),
) {
    assert_eq!(squad.2, dummy.2, "the {who} was told differently");
    let d = differ(&squad.0, &dummy.0);
    assert!(d.is_none(), "the {who}'s stream differs: {d:?}");
    let d = differ(&squad.1, &dummy.1);
    assert!(d.is_none(), "the {who}'s projection differs: {d:?}");
}

fn differ<T: serde::Serialize>(a: &T, b: &T) -> Option<String> {
    fn walk(a: &Value, b: &Value, path: &str) -> Option<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for k in x.keys().chain(y.keys()) {
                    let (p, q) = (
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                    );
                    if let Some(d) = walk(p, q, &format!("{path}.{k}")) {
                        return Some(d);
                    }
                }
                None
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
                .iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (p, q))| walk(p, q, &format!("{path}[{i}]"))),
            _ if a == b => None,
            _ => Some(format!("{path}: {a} vs {b}")),
        }
    }
    walk(
        &serde_json::to_value(a).unwrap(),
        &serde_json::to_value(b).unwrap(),
        "",
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn each_projected_event_is_a_function_of_the_viewers_projections(
        draws in prop::collection::vec(draw(), 0..70),
    ) {
        let mut game = start();
        let mut views: Vec<Game> = VIEWERS
            .iter()
            .map(|v| {
                let mut view = game.project(*v);
                view.version = 1;
                view
            })
            .collect();
        // The ids each viewer has learned: a unit it once saw unmasked keeps its name.
        let mut known: Vec<BTreeSet<String>> =
            views.iter().map(|v| v.units.keys().cloned().collect()).collect();
        for d in &draws {
            let (side, command) = command(&game, d);
            // An attack's resolution rolls (A7.3): sixes, so it is resolved rather than refused.
            // A Recovery's dr (A4.44) is made or failed by the game's count of dice so far.
            let mut dice = match command {
                Command::ResolveAttack => ScriptedDice::new(vec![6; 24]).unwrap(),
                Command::PickUp { .. } => {
                    ScriptedDice::new([1 + (game.dice_drawn % 6) as u8]).unwrap()
                }
                _ => ScriptedDice::default(),
            };
            let Ok(events) = decide(&game, side, &command, &mut dice) else {
                continue;
            };
            for e in &events {
                let mut after = game.clone();
                apply(&mut after, e);
                for (vi, (v, view)) in VIEWERS.iter().zip(views.iter_mut()).enumerate() {
                    let seen = project_event(&game, &after, *v, e);
                    // The twin: the same game but for what this viewer may not know.
                    let masked = masked_from(&game, &after, *v);
                    let never_known: Vec<String> = masked
                        .iter()
                        .filter(|id| !known[vi].contains(*id))
                        .cloned()
                        .collect();
                    // A unit the viewer once saw unmasked keeps what it saw of it (its id,
                    // its ratings); the twin changes only what it never learned.
                    let (twin_before, twin_event) = twin(&game, e, &never_known, &never_known);
                    let mut twin_after = twin_before.clone();
                    apply(&mut twin_after, &twin_event);
                    let b = differ(&game.project(*v), &twin_before.project(*v));
                    prop_assert!(b.is_none(), "the twin differs visibly before {:?}: {:?}", e, b);
                    let a = differ(&after.project(*v), &twin_after.project(*v));
                    prop_assert!(a.is_none(), "the twin differs visibly after {:?}: {:?}", e, a);
                    let twin_seen = project_event(&twin_before, &twin_after, *v, &twin_event);
                    let d = differ(&seen, &twin_seen);
                    prop_assert!(d.is_none(), "{:?} learns a secret from {:?}: {:?}", v, e, d);
                    if let Some(seen) = &seen {
                        apply_viewed(view, seen);
                    } else {
                        // An event the viewer may not know changes nothing it sees.
                        prop_assert_eq!(game.project(*v), after.project(*v), "{:?} misses {:?}", v, e);
                    }
                    let mut projection = after.project(*v);
                    projection.version = view.version;
                    let d = differ(&*view, &projection);
                    prop_assert!(d.is_none(), "{:?} diverged at {:?}: {:?}", v, e, d);
                    known[vi].extend(projection.units.keys().cloned());
                }
                game = after;
            }
        }
    }
}

/// The words of a refusal as a reader who may know no unit reads them: its pieces rendered
/// with every unit unnamed, or its detail when it has none (as a server sends it).
fn read_knowing_no_unit(violation: &protocol::RuleViolation) -> String {
    if violation.pieces.is_empty() {
        violation.detail.clone()
    } else {
        violation.render(|_| None, |_| None)
    }
}

/// The unit ids of `game` that `text` names as a whole word, quoted or bare.
fn ids_named(game: &Game, text: &str) -> Vec<String> {
    let words: BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map(|w| w.trim_end_matches('.'))
        .collect();
    game.units
        .keys()
        .filter(|id| words.contains(id.as_str()))
        .cloned()
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// No refusal names a unit in prose (STYLE 11): every unit it names is a typed piece, so
    /// rendered for a reader who may know none of them, no unit id of the game is left in it.
    #[test]
    fn no_refusal_names_a_unit_in_prose(draws in prop::collection::vec(draw(), 0..70)) {
        let mut game = start();
        for d in &draws {
            let (side, command) = command(&game, d);
            match decide(&game, side, &command, &mut ScriptedDice::default()) {
                Ok(events) => {
                    for e in &events {
                        apply(&mut game, e);
                    }
                }
                Err(violation) => {
                    let words = read_knowing_no_unit(&violation);
                    let named = ids_named(&game, &words);
                    prop_assert!(
                        named.is_empty(),
                        "{:?} is refused naming {:?} in prose: {}",
                        command,
                        named,
                        words
                    );
                }
            }
        }
    }
}

/// The property above can fail: prose naming a unit, quoted or bare, is caught; the same
/// words built from pieces are not.
#[test]
fn a_unit_named_in_prose_is_caught_and_one_named_by_a_piece_is_not() {
    use protocol::rules::violation::{text, Piece};
    use protocol::{RuleViolation, ViolationKind};
    let game = start();
    let prose = RuleViolation::new("A7", ViolationKind::UnitState, "`gs1` is pinned; so is gl.");
    assert_eq!(
        ids_named(&game, &read_knowing_no_unit(&prose)),
        ["gl", "gs1"]
    );
    let pieces = RuleViolation::with(
        "A7",
        ViolationKind::UnitState,
        vec![
            Piece::unit("gs1"),
            text(" is pinned; so is "),
            Piece::unit("gl"),
        ],
    );
    assert_eq!(pieces.detail, "`gs1` is pinned; so is `gl`");
    assert!(ids_named(&game, &read_knowing_no_unit(&pieces)).is_empty());
}

/// A4.43, A12.3: recovering or dropping a support weapon names it by its id. A weapon that a
/// unit hidden from the player possesses (the HIP squad's ATR; the LMG under the German "?")
/// is in none of his projections, so naming it is refused in the very words a made-up id is:
/// the refusal tells neither that the id exists nor that the "?" is a real unit holding it.
#[test]
fn a_weapon_a_unit_hidden_from_the_player_holds_is_refused_as_a_made_up_one_is() {
    use protocol::game::view::name_for;
    let refusal = |game: &Game, side: Side, command: Command, id: &str| {
        let v = decide(game, side, &command, &mut ScriptedDice::default()).expect_err("refused");
        let words = v.render(|u| name_for(game, Viewer::Side(side), u), |_| None);
        (v.rule, v.kind, words.replace(id, "WEAPON"))
    };
    let pick_up = |unit: &str, weapon: &str| Command::PickUp {
        unit: unit.into(),
        weapon: weapon.into(),
    };
    let drop = |unit: &str, weapon: &str| Command::Drop {
        unit: unit.into(),
        weapon: weapon.into(),
    };
    let mut game = start();
    to_german_mph(&mut game);
    for make in [pick_up, drop] {
        let made_up = refusal(&game, Side::A, make("ga", "nope"), "nope");
        // The Russian HIP squad's ATR.
        assert_eq!(refusal(&game, Side::A, make("ga", "atr"), "atr"), made_up);
    }
    // The Russian MPh: the German LMG is under the "?" of 20D5.
    while !(game.clock.phase() == protocol::phase::Phase::Movement && game.attacker() == Side::B) {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    assert!(game.units["hq467"].concealed);
    for make in [pick_up, drop] {
        let made_up = refusal(&game, Side::B, make("rk", "nope"), "nope");
        assert_eq!(refusal(&game, Side::B, make("rk", "lmg"), "lmg"), made_up);
    }
    // Named among an attack's firers (A9.1), before a weapon of his own that may not fire
    // (the MMG has no ratings here): the unknown id is refused first either way.
    let mut game = start();
    while game.clock.phase() != protocol::phase::Phase::PrepFire {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let attack = |first: &str| Command::DeclareAttack {
        firers: vec![first.into(), "mmg".into()],
        target: hex("20H5"),
        into_sewer: false,
    };
    let made_up = refusal(&game, Side::A, attack("nope"), "nope");
    assert_eq!(refusal(&game, Side::A, attack("atr"), "atr"), made_up);
    let mut game = start();
    to_german_mph(&mut game);
    while !(game.clock.phase() == protocol::phase::Phase::Movement && game.attacker() == Side::B) {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    // A weapon the player may know of is still refused for what it is.
    let (_, _, words) = refusal(&game, Side::B, pick_up("rk", "mmg"), "mmg");
    assert!(words.contains("is possessed by"), "{words}");
}

/// `game` as it would be had each side's secrets been other ones: every unit under "?" of
/// the other kind (a dummy for a real unit, a squad for a dummy) and broken where it was in
/// Good Order, and every hidden (HIP) unit gone with what it holds. What either side's
/// opponent may know of the position is the same.
fn other_secrets(game: &Game) -> Game {
    let mut twin = game.clone();
    let ids: Vec<String> = twin.units.keys().cloned().collect();
    for id in ids {
        let unit = &twin.units[&id];
        if unit.hidden {
            twin.units.remove(&id);
            twin.weapons.retain(|_, w| w.held_by.as_ref() != Some(&id));
        } else if unit.concealed {
            let unit = twin.units.get_mut(&id).unwrap();
            unit.kind = match unit.kind {
                protocol::board::scenario::UnitKind::Dummy => {
                    protocol::board::scenario::UnitKind::Squad
                }
                _ => protocol::board::scenario::UnitKind::Dummy,
            };
            unit.morale = match unit.morale {
                protocol::board::scenario::Morale::GoodOrder => {
                    protocol::board::scenario::Morale::Broken
                }
                _ => protocol::board::scenario::Morale::GoodOrder,
            };
        }
    }
    twin
}

/// How many units of each side could claim WA at the end of the RPh, how many of its
/// malfunctioned weapons it could repair (A9.72), and how many of its units could rout
/// (A10.5): none of the first two, and its end-of-RPh step passes by itself; none of the
/// third, and its RtPh step does (`rules::passing`).
fn could_act(game: &Game) -> [[usize; 3]; 2] {
    use protocol::rules::end_of_rally::{claimants, repairable};
    use protocol::rules::passing::routers;
    [Side::A, Side::B].map(|side| {
        [
            claimants(game, side),
            repairable(game, side),
            routers(game, side),
        ]
    })
}

/// The other secrets are other: the start of the scenario has a HIP unit and "?" stacks, so
/// the twin differs as a whole game while no viewer's projection of it does.
#[test]
fn a_game_with_other_secrets_differs_only_where_nobody_looks() {
    let game = start();
    let twin = other_secrets(&game);
    assert_ne!(game.state_hash(), twin.state_hash());
    assert_ne!(game.units.len(), twin.units.len(), "the HIP unit is gone");
    let public = differ(
        &game.project(Viewer::Spectator),
        &twin.project(Viewer::Spectator),
    );
    assert!(public.is_none(), "{public:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// An end-of-RPh step passes by itself when its side could claim no WA (B9.322), a RtPh
    /// step when its side could rout no unit (A10.5), and that is decided from what both sides
    /// may know: at every position of random play, each viewer's own projection gives the
    /// answer the whole game gives, and so does a game whose secrets are other ones (its "?"
    /// broken where they were in Good Order, its HIP units gone). A step passing, or asked
    /// for, tells nobody anything.
    #[test]
    fn whether_a_step_passes_is_known_to_every_viewer(
        walls in any::<bool>(),
        draws in prop::collection::vec(draw(), 0..70),
    ) {
        // This test's scenario, or one of walls with holders under "?", dummies and a HIP
        // squad behind a wall.
        let mut game = if walls {
            let text = include_str!("positions/scenarios/wa-positions.toml");
            Game::replay([&Event::GameCreated(GameCreated { scenario: Scenario::from_toml(text).unwrap() })])
                .unwrap()
        } else {
            start()
        };
        for d in &draws {
            let (side, command) = command(&game, d);
            // An attack's resolution rolls (A7.3): sixes, so it is resolved rather than refused.
            // A Recovery's dr (A4.44) is made or failed by the game's count of dice so far.
            let mut dice = match command {
                Command::ResolveAttack => ScriptedDice::new(vec![6; 24]).unwrap(),
                Command::PickUp { .. } => {
                    ScriptedDice::new([1 + (game.dice_drawn % 6) as u8]).unwrap()
                }
                _ => ScriptedDice::default(),
            };
            let Ok(events) = decide(&game, side, &command, &mut dice) else {
                continue;
            };
            for e in &events {
                apply(&mut game, e);
                let answer = could_act(&game);
                let passes = protocol::rules::passing::passes_on_arrival(&game);
                for viewer in VIEWERS {
                    let seen = game.project(viewer);
                    prop_assert_eq!(could_act(&seen), answer, "{:?} after {:?}", viewer, e);
                    prop_assert_eq!(protocol::rules::passing::passes_on_arrival(&seen), passes, "{:?} after {:?}", viewer, e);
                }
                let twin = other_secrets(&game);
                prop_assert_eq!(could_act(&twin), answer, "other secrets after {:?}", e);
                prop_assert_eq!(protocol::rules::passing::passes_on_arrival(&twin), passes, "other secrets after {:?}", e);
            }
        }
    }
}

/// A German squad held in Melee with a Russian squad in 3C3 (both there from the start)
/// withdraws (A11.2): first toward 3C4, where a Russian "?" stands (a squad or a Dummy), which
/// is refused, then to 3C2. What the German is told — his stream from the first Rally Phase
/// on, his refusal, his projection once the withdrawal is resolved — is the same either way.
fn german_withdrawal_beside(under: &str) -> (Vec<Viewed>, Game, String) {
    let toml = format!(
        r#"
name = "A11.2: a withdrawal beside a ?"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3E6"
terrain = "open_ground"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "3C3"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3C3"

[[units]]
id = "rq"
side = "russian"
{under}
hex = "3C4"
concealed = true
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let german = Viewer::Side(Side::A);
    let mut seen = vec![];
    let mut step = |game: &mut Game, side: Side, command: Command| {
        let before = game.clone();
        let events = play(game, side, command);
        seen.extend(seen_by(&before, german, &events));
    };
    while game.clock.phase() != protocol::phase::Phase::CloseCombat {
        let side = game.acting();
        step(&mut game, side, Command::Done);
    }
    let withdraw = |to: &str| Command::CloseCombat {
        hex: hex("3C3"),
        attacks: vec![],
        withdrawals: vec![protocol::command::CcWithdrawal {
            units: vec!["g1".into()],
            to: hex(to),
        }],
        no_ambush: false,
    };
    let refusal = decide(
        &game,
        Side::A,
        &withdraw("3C4"),
        &mut ScriptedDice::default(),
    )
    .expect_err("a withdrawal beside a \"?\" is the players'");
    let told = format!(
        "{} {:?}: {}",
        refusal.rule,
        refusal.kind,
        refusal.render(
            |id| protocol::game::view::name_for(&game, german, id),
            |_| None
        )
    );
    assert!(told.starts_with("A11.21 NotModelled"), "{told}");
    step(&mut game, Side::A, withdraw("3C2"));
    step(
        &mut game,
        Side::B,
        Command::CloseCombat {
            hex: hex("3C3"),
            attacks: vec![],
            withdrawals: vec![],
            no_ambush: false,
        },
    );
    assert_eq!(game.units["g1"].hex, hex("3C2"));
    (seen, game.project(german), told)
}

#[test]
fn a_withdrawal_beside_a_question_mark_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "German",
        german_withdrawal_beside("kind = \"squad\"\nratings = \"4-4-7\""),
        german_withdrawal_beside("kind = \"dummy\""),
    );
}

/// A squad under "?" reduced to the half-squad its scenario names (A7.302): the enemy learns
/// neither the half-squad from the scenario it is shown nor the ratings `SquadReduced`
/// carries, and its stream still reaches its projection; its owner sees both.
#[test]
fn a_concealed_squads_half_squad_is_its_owners() {
    let text = SCENARIO.replacen(
        "id = \"hq467\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"20D5\"\nconcealed = true\n",
        "id = \"hq467\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"20D5\"\nconcealed = true\nhalf_squad = \"2-4-7\"\n",
        1,
    );
    assert_ne!(text, SCENARIO, "the scenario still has hq467 under \"?\"");
    let scenario = Scenario::from_toml(&text).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let german = game.project(Viewer::Side(Side::A));
    assert_eq!(
        german.scenario.units["hq467"].half_squad.as_deref(),
        Some("2-4-7")
    );
    for viewer in [RUSSIAN, Viewer::Spectator] {
        let view = game.project(viewer);
        assert!(
            view.scenario
                .units
                .values()
                .all(|s| s.half_squad.is_none() && s.id != "hq467"),
            "{viewer:?} learns nothing of the squad under \"?\" from its scenario"
        );
    }
    let reduced = Event::SquadReduced(SquadReduced {
        unit: "hq467".into(),
        half_squad: "2-4-7".into(),
        rule: "A7.302".into(),
        why: "`hq467` K/1: Casualty Reduction".into(),
    });
    let before = game.clone();
    apply(&mut game, &reduced);
    assert_eq!(game.units["hq467"].ratings, "2-4-7");
    for viewer in [RUSSIAN, Viewer::Spectator] {
        let viewed = project_event(&before, &game, viewer, &reduced).unwrap();
        let said = format!("{:?}", viewed.event);
        assert!(
            !said.contains("2-4-7") && !said.contains("hq467"),
            "{viewer:?}: {said}"
        );
        let mut view = before.project(viewer);
        apply_viewed(&mut view, &viewed);
        assert!(
            view.units == game.project(viewer).units,
            "{viewer:?} reaches its projection's units"
        );
    }
    let own = project_event(&before, &game, Viewer::Side(Side::A), &reduced).unwrap();
    assert!(format!("{:?}", own.event).contains("2-4-7"));
}

/// A Game Turn played by `done` where the Russian has a HIP squad (3E4) and, if `concealed`,
/// a squad under "?" (3E5), each broken or in Good Order as `morale` says: what the German and
/// a spectator are told — every event of their streams, the steps that passed by themselves
/// among them — and the steps the German is asked in. The RtPh steps pass or are asked on
/// what both sides see (`rules::passing`): the "?" keeps the Russian's asked whatever it
/// hides, the HIP squad never does.
fn game_turn_with_russian(
    concealed: bool,
    morale: &str,
) -> (Vec<Viewed>, Vec<Viewed>, Vec<String>) {
    let toml = format!(
        r#"
name = "A10.5: RtPh steps beside secrets"
turns = 2
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3E6"
terrain = "open_ground"

[[area]]
from = "3E1"
to = "3E6"
terrain = "woods"

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "3A1"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3E6"

{question_mark}
[[units]]
id = "rh"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3E4"
hidden = true
morale = "{morale}"
"#,
        question_mark = if concealed {
            format!(
                r#"[[units]]
id = "rq"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3E5"
concealed = true
morale = "{morale}"
"#
            )
        } else {
            String::new()
        }
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let (mut german, mut spectator, mut asked) = (vec![], vec![], vec![]);
    while game.clock.turn == 1 {
        let side = game.acting();
        if side == Side::A {
            asked.push(game.clock.step().name.to_string());
        }
        let before = game.clone();
        let events = play(&mut game, side, Command::Done);
        german.extend(seen_by(&before, Viewer::Side(Side::A), &events));
        spectator.extend(seen_by(&before, Viewer::Spectator, &events));
    }
    (german, spectator, asked)
}

/// The RtPh steps that passed by themselves in a stream, as "Player Turn, step".
fn passed_steps(stream: &[Viewed]) -> Vec<String> {
    stream
        .iter()
        .filter_map(|v| match &v.event {
            Event::StepPassed(StepPassed { ended, .. }) => {
                Some(format!("{} {}", ended.player_turn, ended.step().name))
            }
            _ => None,
        })
        .filter(|p| p.contains("RtPh"))
        .collect()
}

#[test]
fn a_rout_step_passing_tells_the_enemy_nothing_of_what_the_side_hides() {
    let (german, spectator, asked) = game_turn_with_russian(true, "good_order");
    let (german_broken, spectator_broken, asked_broken) = game_turn_with_russian(true, "broken");
    assert_eq!(differ(&german, &german_broken), None);
    assert_eq!(differ(&spectator, &spectator_broken), None);
    assert_eq!(asked, asked_broken);
    // The German had no unit that could rout: both of his RtPh steps passed. The Russian's
    // were asked, for its "?", in both Player Turns.
    let passed = passed_steps(&german);
    assert!(
        passed.contains(&"1 RtPh, ATTACKER".to_string()),
        "{passed:?}"
    );
    assert!(
        passed.contains(&"2 RtPh, DEFENDER".to_string()),
        "{passed:?}"
    );
    assert!(
        !passed
            .iter()
            .any(|p| p == "1 RtPh, DEFENDER" || p == "2 RtPh, ATTACKER"),
        "{passed:?}"
    );
    assert!(!asked.iter().any(|s| s.starts_with("RtPh")), "{asked:?}");
}

/// With only a HIP squad, broken or not, the Russian's RtPh steps pass as the German's do:
/// a hidden unit is no reason to ask, so asking would tell of it.
#[test]
fn a_hidden_broken_unit_keeps_no_rout_step_asked() {
    let (german, spectator, asked) = game_turn_with_russian(false, "good_order");
    let (german_broken, spectator_broken, asked_broken) = game_turn_with_russian(false, "broken");
    assert_eq!(differ(&german, &german_broken), None);
    assert_eq!(differ(&spectator, &spectator_broken), None);
    assert_eq!(asked, asked_broken);
    assert_eq!(
        passed_steps(&german),
        [
            "1 RtPh, ATTACKER",
            "1 RtPh, DEFENDER",
            "2 RtPh, ATTACKER",
            "2 RtPh, DEFENDER"
        ]
    );
}

/// A Melee carried on into the German CCPh in the woods of 3C3 (both sides there from the
/// start, nobody advancing, so no Ambush check is owed and the engine takes the CC, A11.19):
/// the German `german` and the Russian `russian` units, each a `kind`/`ratings` block, the
/// one named `…q` under "?".
fn melee_with(german: (&str, &str), russian: (&str, &str)) -> Game {
    let unit = |(id, body): (&str, &str), side: &str| {
        format!(
            "[[units]]\nid = \"{id}\"\nside = \"{side}\"\n{body}\nhex = \"3C3\"\n{}\n",
            if id.ends_with('q') {
                "concealed = true"
            } else {
                ""
            }
        )
    };
    let toml = format!(
        r#"
name = "A11.19: a ? in a Melee"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3E6"
terrain = "open_ground"

[[hexes]]
hex = "3C3"
terrain = "woods"

{}
{}"#,
        unit(german, "german"),
        unit(russian, "russian")
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::CloseCombat {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    game
}

const SQUAD: &str = "kind = \"squad\"\nratings = \"4-4-7\"";
const DUMMY: &str = "kind = \"dummy\"";
/// Another real unit under a "?" in CC, for the twins there: a Dummy in a CC Location is
/// removed as the CCPh starts (A11.19; `a_dummy_in_close_combat_is_removed_as_the_ccph_starts`),
/// so what must not differ in CC is what real unit the "?" hides.
const OTHER_SQUAD: &str = "kind = \"squad\"\nratings = \"6-2-8\"";

fn cc(attackers: &[&str], defenders: &[&str]) -> Command {
    Command::CloseCombat {
        hex: hex("3C3"),
        attacks: if attackers.is_empty() {
            vec![]
        } else {
            vec![protocol::command::CcAttack {
                attackers: attackers.iter().map(|&a| a.into()).collect(),
                defenders: defenders.iter().map(|&d| d.into()).collect(),
            }]
        },
        withdrawals: vec![],
        no_ambush: false,
    }
}

/// Plays `command` of `side` (naming the opponent's "?" by the alias `viewer` sees), adding
/// what `viewer` is told of it to `seen`.
fn step_seen(
    game: &mut Game,
    side: Side,
    command: Command,
    dice: &[u8],
    viewer: Viewer,
    seen: &mut Vec<Viewed>,
) {
    let command = command_in_ids(game, side, command);
    let before = game.clone();
    let events = decide(
        game,
        side,
        &command,
        &mut ScriptedDice::new(dice.to_vec()).unwrap(),
    )
    .unwrap_or_else(|v| panic!("{command:?} refused: {v}"));
    for e in &events {
        apply(game, e);
    }
    seen.extend(seen_by(&before, viewer, &events));
}

/// The German's side of a Melee in which the Russian "?" (`under`: one squad or another) makes
/// no CC attack: the German attacks it, naming its alias; the Russian designates none. The
/// attack on a "?" that does not attack is the players' (A11.19), and the German records the
/// Melee: his stream from his designation on, his projection, and his `done` refused while
/// the Russian has not designated.
fn german_side_of_melee_with(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let german = Viewer::Side(Side::A);
    let mut game = melee_with(
        ("g1", "kind = \"squad\"\nratings = \"4-6-7\""),
        ("rq", under),
    );
    let alias = game.aliases["rq"].clone();
    let mut seen = vec![];
    step_seen(
        &mut game,
        Side::A,
        cc(&["g1"], &[&alias]),
        &[],
        german,
        &mut seen,
    );
    let done = decide(&game, Side::A, &Command::Done, &mut ScriptedDice::default())
        .expect_err("the Russian designates first");
    let told = format!(
        "{} {:?}: {}",
        done.rule,
        done.kind,
        done.render(
            |id| protocol::game::view::name_for(&game, german, id),
            |_| None
        )
    );
    step_seen(&mut game, Side::B, cc(&[], &[]), &[], german, &mut seen);
    assert!(
        seen.iter().any(|v| matches!(
            &v.event,
            Event::FireEffectLeftToPlayers(f) if f.rule == "A11.19"
        )),
        "the attack on the \"?\" is the players'"
    );
    assert!(
        game.units["rq"].concealed,
        "a \"?\" that does not attack keeps it"
    );
    step_seen(
        &mut game,
        Side::A,
        Command::Melee { hex: hex("3C3") },
        &[],
        german,
        &mut seen,
    );
    (seen, game.project(german), vec![told])
}

#[test]
fn a_question_mark_in_a_melee_that_makes_no_attack_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "German",
        german_side_of_melee_with(SQUAD),
        german_side_of_melee_with(OTHER_SQUAD),
    );
}

/// The Russian's side of a Melee in which the German ATTACKER's "?" (`under`) makes no CC
/// attack: the German designates none, the Russian attacks the "?" by its alias, which is the
/// players' (A11.19). His stream and projection, and his `melee` refused before he designates.
fn russian_side_of_melee_with(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let russian = Viewer::Side(Side::B);
    let mut game = melee_with(("gq", under), ("r1", SQUAD));
    let alias = game.aliases["gq"].clone();
    let mut seen = vec![];
    step_seen(&mut game, Side::A, cc(&[], &[]), &[], russian, &mut seen);
    let melee = decide(
        &game,
        Side::A,
        &Command::Melee { hex: hex("3C3") },
        &mut ScriptedDice::default(),
    )
    .expect_err("the Russian designates first");
    let told = format!("{} {:?}", melee.rule, melee.kind);
    step_seen(
        &mut game,
        Side::B,
        cc(&["r1"], &[&alias]),
        &[],
        russian,
        &mut seen,
    );
    step_seen(
        &mut game,
        Side::A,
        Command::Melee { hex: hex("3C3") },
        &[],
        russian,
        &mut seen,
    );
    (seen, game.project(russian), vec![told])
}

#[test]
fn a_question_mark_attacking_nobody_in_a_melee_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "Russian",
        russian_side_of_melee_with("kind = \"squad\"\nratings = \"4-6-7\""),
        russian_side_of_melee_with(OTHER_SQUAD),
    );
}

/// The German's side of a Melee in 3C3 where g1's Original 2 on the Known r1 stops the CC for
/// Infiltration (A11.22) while the Russian "?" rq (`under`) beside r1 makes no attack and g2's
/// attack on it is left to roll: the CC kept for the German's answer names that attack, and so
/// the "?", only by the alias he knows it by; he declines, and the attack on the "?" is the
/// players' (A11.19). His stream and projection, the question's included.
fn german_infiltration_beside(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let german = Viewer::Side(Side::A);
    let unit = |id: &str, side: &str, body: &str| {
        format!(
            "[[units]]\nid = \"{id}\"\nside = \"{side}\"\n{body}\nhex = \"3C3\"\n{}\n",
            if id.ends_with('q') {
                "concealed = true"
            } else {
                ""
            }
        )
    };
    let toml = format!(
        r#"
name = "A11.22: Infiltration beside a ?"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3E6"
terrain = "open_ground"

{}
{}
{}
{}"#,
        unit("g1", "german", SQUAD_467),
        unit("g2", "german", SQUAD_467),
        unit("r1", "russian", SQUAD),
        unit("rq", "russian", under)
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::CloseCombat {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let alias = game.aliases["rq"].clone();
    let mut seen = vec![];
    let designation = Command::CloseCombat {
        hex: hex("3C3"),
        attacks: vec![
            protocol::command::CcAttack {
                attackers: vec!["g1".into()],
                defenders: vec!["r1".into()],
            },
            protocol::command::CcAttack {
                attackers: vec!["g2".into()],
                defenders: vec![alias],
            },
        ],
        withdrawals: vec![],
        no_ambush: false,
    };
    step_seen(&mut game, Side::A, designation, &[], german, &mut seen);
    step_seen(&mut game, Side::B, cc(&[], &[]), &[1, 1], german, &mut seen);
    let asked = game
        .cc_infiltration
        .clone()
        .expect("g1's Original 2 asks the German");
    assert_eq!(asked.units, vec!["g1".to_string()]);
    let question = game.project(german);
    let told = format!("{:?}", question.cc_infiltration);
    assert!(!told.contains("\"rq\""), "{told}");
    step_seen(&mut game, Side::A, Command::Done, &[], german, &mut seen);
    assert!(
        game.cc_infiltration.is_none(),
        "the German's `done` declined"
    );
    assert!(
        seen.iter().any(|v| matches!(
            &v.event,
            Event::FireEffectLeftToPlayers(f) if f.rule == "A11.19"
        )),
        "the attack on the \"?\" is the players'"
    );
    (seen, game.project(german), vec![told])
}

#[test]
fn a_question_mark_beside_an_infiltration_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "German",
        german_infiltration_beside(SQUAD),
        german_infiltration_beside(OTHER_SQUAD),
    );
}

/// Where `viewer` is told of `id` (by name, or by its ratings) in `seen`: the index of the
/// first event that names it.
fn first_told(seen: &[Viewed], id: &str, ratings: &str) -> Option<usize> {
    seen.iter().position(|v| {
        let text = serde_json::to_string(&v.event).unwrap();
        text.contains(&format!("\"{id}\""))
            || text.contains(&format!("`{id}`"))
            || text.contains(ratings)
    })
}

/// A concealed unit attacking in CC loses its "?" at the event that says so, as the CC is
/// resolved, and its enemy learns nothing of it before: neither from the designations (his
/// own naming its alias, or the owner's naming it as an attacker) nor from a roll.
fn reveal_seen(seen: &[Viewed], id: &str, ratings: &str) {
    let lost = seen
        .iter()
        .position(|v| matches!(v.event, Event::ConcealmentLostInCloseCombat(_)))
        .expect("the \"?\" is lost as the CC is resolved");
    assert_eq!(
        first_told(seen, id, ratings),
        Some(lost),
        "the enemy is told of `{id}` first by the event that reveals it: {seen:#?}"
    );
    assert!(seen[lost].renamed.iter().any(|r| r.to == id));
    let first_roll = seen
        .iter()
        .position(|v| matches!(v.event, Event::DiceRolled(_)))
        .expect("the CC is rolled");
    assert!(lost < first_roll, "revealed before the rolls");
}

#[test]
fn a_concealed_defender_attacking_in_a_melee_is_revealed_as_its_attack_is_resolved() {
    let german = Viewer::Side(Side::A);
    let mut game = melee_with(
        ("g1", "kind = \"squad\"\nratings = \"4-6-7\""),
        ("rq", SQUAD),
    );
    let alias = game.aliases["rq"].clone();
    let start = game.project(german);
    let mut seen = vec![];
    step_seen(
        &mut game,
        Side::A,
        cc(&["g1"], &[&alias]),
        &[],
        german,
        &mut seen,
    );
    assert!(game.units["rq"].concealed);
    assert!(!game.project(german).units.contains_key("rq"));
    step_seen(
        &mut game,
        Side::B,
        cc(&["rq"], &["g1"]),
        &[6, 6, 6, 6],
        german,
        &mut seen,
    );
    reveal_seen(&seen, "rq", "4-4-7");
    assert!(!game.units["rq"].concealed);
    assert!(game.project(german).units.contains_key("rq"));
    replays_to(start, &seen, &game, german);
}

#[test]
fn a_concealed_attacker_attacking_in_a_melee_is_revealed_as_its_attack_is_resolved() {
    let russian = Viewer::Side(Side::B);
    let mut game = melee_with(
        ("gq", "kind = \"squad\"\nratings = \"4-6-7\""),
        ("r1", SQUAD),
    );
    let start = game.project(russian);
    let mut seen = vec![];
    step_seen(
        &mut game,
        Side::A,
        cc(&["gq"], &["r1"]),
        &[],
        russian,
        &mut seen,
    );
    // Designated, not yet made: the Russian still sees only the "?".
    assert!(game.units["gq"].concealed);
    assert!(!game.project(russian).units.contains_key("gq"));
    let alias = game.aliases["gq"].clone();
    step_seen(
        &mut game,
        Side::B,
        cc(&["r1"], &[&alias]),
        &[6, 6, 6, 6],
        russian,
        &mut seen,
    );
    reveal_seen(&seen, "gq", "4-6-7");
    assert!(game.project(russian).units.contains_key("gq"));
    replays_to(start, &seen, &game, russian);
}

/// `viewer`'s stream `seen`, applied to its projection `start`, reaches its projection of
/// `game`: a unit revealed reaches it whole, not as the "?" it was renamed from.
fn replays_to(mut view: Game, seen: &[Viewed], game: &Game, viewer: Viewer) {
    for v in seen {
        apply_viewed(&mut view, v);
    }
    let mut projection = game.project(viewer);
    projection.version = view.version;
    let d = differ(&view, &projection);
    assert!(
        d.is_none(),
        "the stream diverged from the projection: {d:?}"
    );
}

/// The German's side of a new CC with a Russian "?" (`under`) he advanced into, once the
/// players' Ambush check found none (`no-ambush`, A11.4): the "?" makes no attack, so the
/// German's attack on it is the players' (A11.19) and he records the Melee.
fn german_side_of_new_cc_with(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let german = Viewer::Side(Side::A);
    let scenario = Scenario::from_toml(&cc_with_question_mark(under)).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::Advance {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let mut seen = vec![];
    let advance = Command::Advance {
        units: vec!["g1".into()],
        to: hex("3C3"),
    };
    step_seen(&mut game, Side::A, advance, &[], german, &mut seen);
    step_seen(&mut game, Side::A, Command::Done, &[], german, &mut seen);
    let alias = game.aliases["rq"].clone();
    let Command::CloseCombat {
        hex: at,
        attacks,
        withdrawals,
        ..
    } = cc(&["g1"], &[&alias])
    else {
        unreachable!("cc makes a CloseCombat")
    };
    let designation = Command::CloseCombat {
        hex: at,
        attacks,
        withdrawals,
        no_ambush: true,
    };
    step_seen(&mut game, Side::A, designation, &[], german, &mut seen);
    step_seen(&mut game, Side::B, cc(&[], &[]), &[], german, &mut seen);
    assert!(
        game.units["rq"].concealed,
        "a \"?\" that does not attack keeps it"
    );
    step_seen(
        &mut game,
        Side::A,
        Command::Melee { hex: hex("3C3") },
        &[],
        german,
        &mut seen,
    );
    (seen, game.project(german), vec![])
}

#[test]
fn a_question_mark_in_a_new_close_combat_without_ambush_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "German",
        german_side_of_new_cc_with("kind = \"squad\"\nratings = \"4-4-7\""),
        german_side_of_new_cc_with(OTHER_SQUAD),
    );
}

/// Fire with a "?" (A12.14, A7.23): a German "?" (`under`: a squad, or a Dummy) in the woods of
/// 3C3, a Known Russian 4-4-7 in the Open Ground of 3E3, two hexes off.
fn fire_with_question_mark(under: &str) -> Game {
    let toml = format!(
        r#"
name = "A12.14: a ? that fires"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3G6"
terrain = "open_ground"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C3"
concealed = true

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3E3"
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
}

/// Plays `side`'s `command` with `dice`, adding what each viewer is told of it to `seen` and
/// applying it to that viewer's `views` (its stream replayed).
fn fire_step(
    game: &mut Game,
    side: Side,
    command: Command,
    dice: &[u8],
    seen: &mut [Vec<Viewed>; 3],
    views: &mut [Game; 3],
) {
    let before = game.clone();
    let events = decide(
        game,
        side,
        &command,
        &mut ScriptedDice::new(dice.to_vec()).unwrap(),
    )
    .unwrap_or_else(|v| panic!("{command:?} refused: {v}"));
    for e in &events {
        apply(game, e);
    }
    for (i, v) in VIEWERS.iter().enumerate() {
        let told = seen_by(&before, *v, &events);
        for t in &told {
            apply_viewed(&mut views[i], t);
        }
        seen[i].extend(told);
    }
}

/// Each viewer's stream, replayed, reaches its projection.
fn streams_replay(game: &Game, views: &[Game; 3]) {
    for (v, view) in VIEWERS.iter().zip(views) {
        let mut projection = game.project(*v);
        projection.version = view.version;
        let d = differ(view, &projection);
        assert!(
            d.is_none(),
            "{v:?}'s stream diverged from its projection: {d:?}"
        );
    }
}

/// A German "?" squad that fires in the PFPh, in the LOS of the Good Order r1, loses its "?"
/// as the attack is declared (A12.14): the Russian (and a spectator) is told of it first by
/// `ConcealmentLostByFire`, right after the declaration naming its alias and before the roll,
/// and every viewer's stream replays to its projection.
#[test]
fn a_question_mark_that_fires_is_revealed_at_the_event_that_says_so() {
    let mut game = fire_with_question_mark(SQUAD_467);
    while game.clock.phase() != protocol::phase::Phase::PrepFire {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    assert!(!game.project(RUSSIAN).units.contains_key("gq"));
    fire_step(
        &mut game,
        Side::A,
        Command::DeclareAttack {
            firers: vec!["gq".into()],
            target: hex("3E3"),
            into_sewer: false,
        },
        &[],
        &mut seen,
        &mut views,
    );
    streams_replay(&game, &views);
    fire_step(
        &mut game,
        Side::A,
        Command::ResolveAttack,
        &[6, 6],
        &mut seen,
        &mut views,
    );
    streams_replay(&game, &views);
    assert!(!game.units["gq"].concealed);
    for (i, v) in VIEWERS.iter().enumerate().skip(1) {
        let seen = &seen[i];
        let declared = seen
            .iter()
            .position(|s| matches!(s.event, Event::AttackDeclared(_)))
            .unwrap_or_else(|| panic!("{v:?} is told of the attack"));
        let lost = seen
            .iter()
            .position(|s| matches!(s.event, Event::ConcealmentLostByFire(_)))
            .unwrap_or_else(|| panic!("{v:?} is told of the \"?\" lost"));
        assert_eq!(lost, declared + 1, "revealed right after the declaration");
        assert_eq!(
            first_told(seen, "gq", "4-6-7"),
            Some(lost),
            "{v:?} is told of `gq` first by the event that reveals it: {seen:#?}"
        );
        assert!(seen[lost].renamed.iter().any(|r| r.to == "gq"));
        let roll = seen
            .iter()
            .position(|s| matches!(s.event, Event::DiceRolled(_)))
            .expect("the attack is rolled");
        assert!(lost < roll, "revealed before the roll");
        assert!(game.project(*v).units.contains_key("gq"));
    }
}

/// The Russian's side of fire at a German "?" (`under`) in his DFPh, read on the IFT with
/// `dice`: his attack on its hex is Area Fire, its FP halved (A7.23); and a Dummy's own attack,
/// tried by the German in his PFPh, is refused to the German alone (A12.11). Returns the
/// Russian's stream from the PFPh on, his projection, and the words of his own commands'
/// outcomes.
fn russian_side_of_fire_at(under: &str, dice: &[u8]) -> (Vec<Viewed>, Game, Vec<String>) {
    let mut game = fire_with_question_mark(under);
    while game.clock.phase() != protocol::phase::Phase::PrepFire {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let attack = Command::DeclareAttack {
        firers: vec!["gq".into()],
        target: hex("3E3"),
        into_sewer: false,
    };
    if under.contains("dummy") {
        let refusal = decide(&game, Side::A, &attack, &mut ScriptedDice::default())
            .expect_err("a Dummy makes no attack");
        assert_eq!(refusal.rule, "A12.11");
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    let mut told = vec![];
    while game.clock.phase() != protocol::phase::Phase::DefensiveFire {
        let side = game.acting();
        fire_step(&mut game, side, Command::Done, &[], &mut seen, &mut views);
    }
    for (command, dice) in [
        (
            Command::DeclareAttack {
                firers: vec!["r1".into()],
                target: hex("3C3"),
                into_sewer: false,
            },
            vec![],
        ),
        (Command::ResolveAttack, dice.to_vec()),
    ] {
        let before = seen[1].len();
        fire_step(&mut game, Side::B, command, &dice, &mut seen, &mut views);
        told.extend(
            seen[1][before..]
                .iter()
                .map(|v| serde_json::to_string(&v.event).unwrap()),
        );
    }
    // r1's 4 FP at range 2, halved at a "?" (A7.23): the 2 column, woods +1.
    assert!(
        seen[1].iter().any(|v| matches!(
            &v.event,
            Event::IftAttackResolved(a) if a.column == 2 && a.fp == "2"
        )),
        "fire at a \"?\" is resolved on the IFT as Area Fire (A7.23): {:#?}",
        seen[1]
    );
    streams_replay(&game, &views);
    (seen[1].clone(), game.project(RUSSIAN), told)
}

/// A7.23, A12.14: an attack at a "?" that reads no effect tells the firer nothing of what it
/// hides — his stream, his projection and the words of his commands' outcomes are the same
/// whether a squad or a Dummy is under it.
#[test]
fn fire_at_a_question_mark_tells_the_enemy_nothing_of_what_it_hides() {
    // DR 7, +1 woods: 8 on the 2 column, no effect.
    alike(
        "Russian",
        russian_side_of_fire_at(SQUAD_467, &[4, 3]),
        russian_side_of_fire_at(DUMMY, &[4, 3]),
    );
}

/// A12.14: an attack at a "?" that reads a PTC or worse reveals it at the event that says so,
/// right after the IFT's reading: until then the firer is told the same whether a squad or a
/// Dummy is under it; then the squad is shown whole and takes its check, the Dummy is removed.
#[test]
fn fire_at_a_question_mark_with_an_effect_reveals_it_at_the_event_that_says_so() {
    // DR 5, +1 woods: 6 on the 2 column, a PTC; the squad's PTC DR 5 passes.
    let squad = russian_side_of_fire_at(SQUAD_467, &[3, 2, 2, 3]);
    let dummy = russian_side_of_fire_at(DUMMY, &[3, 2]);
    let read = |seen: &[Viewed]| {
        seen.iter()
            .position(|v| matches!(&v.event, Event::IftAttackResolved(a) if a.result == "PTC"))
            .expect("the attack reads a PTC")
    };
    let (at_squad, at_dummy) = (read(&squad.0), read(&dummy.0));
    assert_eq!(at_squad, at_dummy);
    let d = differ(
        &squad.0[..=at_squad].to_vec(),
        &dummy.0[..=at_dummy].to_vec(),
    );
    assert!(d.is_none(), "told differently before the reveal: {d:?}");
    match &squad.0[at_squad + 1].event {
        Event::ConcealmentLostToAttack(e) => {
            assert!(e
                .revealed
                .iter()
                .any(|u| u.id == "gq" && u.ratings == "4-6-7"));
            assert!(e.dummies_removed.is_empty());
        }
        other => panic!("the squad is revealed right after the reading, not {other:?}"),
    }
    assert_eq!(
        first_told(&squad.0, "gq", "4-6-7"),
        Some(at_squad + 1),
        "the Russian is told of `gq` first by the event that reveals it: {:#?}",
        squad.0
    );
    assert!(squad.1.units.contains_key("gq") && !squad.1.units["gq"].concealed);
    match &dummy.0[at_dummy + 1].event {
        Event::ConcealmentLostToAttack(e) => {
            assert!(e.revealed.is_empty());
            assert_eq!(e.dummies_removed.len(), 1);
        }
        other => panic!("the Dummy is removed right after the reading, not {other:?}"),
    }
    assert_eq!(
        dummy.0.len(),
        at_dummy + 3,
        "nothing is checked on a Dummy: the reveal, then the attack's end: {:#?}",
        dummy.0
    );
}

const SQUAD_467: &str = "kind = \"squad\"\nratings = \"4-6-7\"";

/// The Russian's side of his DFPh attack on 3C3, where a German "?" (`under`) stands in the
/// woods with a Known 4-6-7 `gk`, read with `dice` (A12.13): the Known squad on the 4 column,
/// the "?" on the 2 with the same DR. Returns the Russian's stream of the attack, his projection,
/// and the words of its events.
fn russian_side_of_mixed_fire_at(under: &str, dice: &[u8]) -> (Vec<Viewed>, Game, Vec<String>) {
    let toml = format!(
        r#"
name = "A12.13: a ? beside a Known unit"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3G6"
terrain = "open_ground"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C3"
concealed = true

[[units]]
id = "gk"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "3C3"

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3E3"
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::DefensiveFire {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    for (command, dice) in [
        (
            Command::DeclareAttack {
                firers: vec!["r1".into()],
                target: hex("3C3"),
                into_sewer: false,
            },
            vec![],
        ),
        (Command::ResolveAttack, dice.to_vec()),
    ] {
        fire_step(&mut game, Side::B, command, &dice, &mut seen, &mut views);
    }
    let columns: Vec<u8> = seen[1]
        .iter()
        .filter_map(|v| match &v.event {
            Event::IftAttackResolved(a) => Some(a.column),
            _ => None,
        })
        .collect();
    assert_eq!(
        columns,
        [4, 2],
        "one DR read on the Known squad's column and the \"?\"'s (A12.13): {:#?}",
        seen[1]
    );
    streams_replay(&game, &views);
    let words = seen[1]
        .iter()
        .map(|v| protocol::words::describe_event(&game, &v.event))
        .collect();
    (seen[1].clone(), game.project(RUSSIAN), words)
}

/// A12.13: an attack on a Location holding a "?" and a Known squad, reading a PTC on the Known
/// squad's column and no effect on the "?"'s, tells the firer nothing of what the "?" hides:
/// his stream, his projection and the words are the same whether a squad or a Dummy is under
/// it, the Known squad's PTC included.
#[test]
fn fire_at_a_question_mark_beside_a_known_unit_tells_the_enemy_nothing_of_what_it_hides() {
    // DR 6, +1 woods: 7, a PTC on the 4 column (gk passes with DR 5), no effect on the 2.
    alike(
        "Russian",
        russian_side_of_mixed_fire_at(SQUAD_467, &[4, 2, 2, 3]),
        russian_side_of_mixed_fire_at(DUMMY, &[4, 2, 2, 3]),
    );
}

/// A12.13, A12.14: when the "?"'s own reading is a PTC or worse, the firer is told the same
/// whether a squad or a Dummy is under it up to that reading, the Known squad's check
/// included; then the "?" is taken off: the squad shown and checking, the Dummy removed.
#[test]
fn fire_at_a_question_mark_beside_a_known_unit_reveals_it_at_its_own_reading() {
    // DR 5, +1 woods: 6, an NMC on the 4 column (gk passes with DR 5) and a PTC on the 2 (the
    // squad passes with DR 4).
    let squad = russian_side_of_mixed_fire_at(SQUAD_467, &[3, 2, 2, 3, 2, 2]);
    let dummy = russian_side_of_mixed_fire_at(DUMMY, &[3, 2, 2, 3]);
    let read = |seen: &[Viewed]| {
        seen.iter()
            .position(|v| matches!(&v.event, Event::IftAttackResolved(a) if a.column == 2))
            .expect("the \"?\" is read on its own column")
    };
    let (at_squad, at_dummy) = (read(&squad.0), read(&dummy.0));
    assert_eq!(at_squad, at_dummy);
    let d = differ(
        &squad.0[..=at_squad].to_vec(),
        &dummy.0[..=at_dummy].to_vec(),
    );
    assert!(d.is_none(), "told differently before the reveal: {d:?}");
    match &squad.0[at_squad + 1].event {
        Event::ConcealmentLostToAttack(e) => {
            assert!(e.revealed.iter().any(|u| u.id == "gq"));
            assert!(e.dummies_removed.is_empty());
        }
        other => panic!("the squad is revealed right after its reading, not {other:?}"),
    }
    match &dummy.0[at_dummy + 1].event {
        Event::ConcealmentLostToAttack(e) => {
            assert!(e.revealed.is_empty());
            assert_eq!(e.dummies_removed.len(), 1);
        }
        other => panic!("the Dummy is removed right after its reading, not {other:?}"),
    }
}

/// A8.3, A9.2: the DEFENDER's MMG fires at a German "?" (`under`) moving through woods as often
/// as the MF it spent in the Location allow, each attack Area Fire at a "?" (A7.23) reading no
/// effect, and the next is refused. What the Russian is told — the events of his attacks and the refusal, which
/// names the "?" and the MF it spent there — is the same whether a squad or a Dummy is under it.
fn russian_side_of_fire_at_a_moving_question_mark(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    let toml = format!(
        r#"
name = "A9.2: fire at a moving ?"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3G6"
terrain = "open_ground"

[[hexes]]
hex = "3C2"
terrain = "woods"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C2"
concealed = true

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3D3"

[[weapons]]
id = "rmg"
name = "MMG"
pp = 4
held_by = "r1"
fp = 4
range = 10
breakdown = 12
rof = 3
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::Movement {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    fire_step(
        &mut game,
        Side::A,
        Command::Move {
            units: vec!["gq".into()],
            to: hex("3C3"),
        },
        &[],
        &mut seen,
        &mut views,
    );
    let attack = || Command::DeclareAttack {
        firers: vec!["rmg".into()],
        target: hex("3C3"),
        into_sewer: false,
    };
    // Two attacks for its 2 MF, both at a "?" and read no effect: First Fire (8 FP at range 1,
    // halved at a "?" (A7.23): the 4 column, woods +1, FFNAM −1, DR 9; its coloured 4 keeps no
    // ROF), then Subsequent First Fire as Sustained Fire (A9.3: the 2 column, DR 9 below its
    // lowered B# of 10).
    for dice in [[4, 5], [5, 4]] {
        for (command, dice) in [(attack(), &[][..]), (Command::ResolveAttack, &dice[..])] {
            fire_step(&mut game, Side::B, command, dice, &mut seen, &mut views);
        }
    }
    let refusal = told_to(&game, Side::B, attack());
    assert!(
        refusal.starts_with("A9.2 ")
            && refusal.contains("spent 2 MF there")
            && !refusal.contains("gq"),
        "the refusal names the \"?\" by its alias: {refusal}"
    );
    streams_replay(&game, &views);
    let told = seen[1]
        .iter()
        .map(|v| serde_json::to_string(&v.event).unwrap())
        .chain([refusal])
        .collect();
    (seen[1].clone(), game.project(RUSSIAN), told)
}

#[test]
fn the_mf_limit_on_fire_at_a_moving_question_mark_tells_nothing_of_what_it_hides() {
    alike(
        "Russian",
        russian_side_of_fire_at_a_moving_question_mark(SQUAD_467),
        russian_side_of_fire_at_a_moving_question_mark(DUMMY),
    );
}

/// A7.55: two Russian squads of one Location fire at a German "?" (`under`) moving into woods:
/// the first's attack, Area Fire at a "?" (A7.23), reads no effect, and the second's apart from
/// it at the same MF expenditure is refused as fire apart from one Fire Group. The refusal
/// reads the moving units the Russian watched, not what the "?" hides: what he is told is the
/// same whether a squad or a Dummy is under it.
fn russian_side_of_fire_apart_at_a_moving_question_mark(
    under: &str,
) -> (Vec<Viewed>, Game, Vec<String>) {
    let toml = format!(
        r#"
name = "A7.55: fire apart at a moving ?"
turns = 1
first = "german"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3G6"
terrain = "open_ground"

[[hexes]]
hex = "3C2"
terrain = "woods"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C2"
concealed = true

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3D3"

[[units]]
id = "r2"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3D3"
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::Movement {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    fire_step(
        &mut game,
        Side::A,
        Command::Move {
            units: vec!["gq".into()],
            to: hex("3C3"),
        },
        &[],
        &mut seen,
        &mut views,
    );
    let attack = |firer: &str| Command::DeclareAttack {
        firers: vec![firer.into()],
        target: hex("3C3"),
        into_sewer: false,
    };
    // r1: 4 FP ×2 PBF, halved at a "?" (A7.23), the 4 column, woods +1, FFNAM −1: DR 9, no
    // effect.
    for (command, dice) in [
        (attack("r1"), &[][..]),
        (Command::ResolveAttack, &[4, 5][..]),
    ] {
        fire_step(&mut game, Side::B, command, dice, &mut seen, &mut views);
    }
    let refusal = told_to(&game, Side::B, attack("r2"));
    assert!(
        refusal.starts_with("A7.55 ")
            && refusal.contains("at the same MF expenditure")
            && !refusal.contains("gq"),
        "the refusal names the attack apart from which r2 fires, and nothing the \"?\" hides: {refusal}"
    );
    streams_replay(&game, &views);
    let told = seen[1]
        .iter()
        .map(|v| serde_json::to_string(&v.event).unwrap())
        .chain([refusal])
        .collect();
    (seen[1].clone(), game.project(RUSSIAN), told)
}

#[test]
fn fire_apart_at_a_moving_question_mark_tells_nothing_of_what_it_hides() {
    alike(
        "Russian",
        russian_side_of_fire_apart_at_a_moving_question_mark(SQUAD_467),
        russian_side_of_fire_apart_at_a_moving_question_mark(DUMMY),
    );
}

/// What `side` is told of `command` on `game`, as a server tells it: the command put in ids
/// as the side names units (`command_in_ids`), then decided; a refusal rendered for `side`.
fn told_to(game: &Game, side: Side, command: Command) -> String {
    let viewer = Viewer::Side(side);
    let command = command_in_ids(game, side, command);
    match decide(game, side, &command, &mut ScriptedDice::default()) {
        Ok(events) => format!(
            "accepted: {:?}",
            seen_by(game, viewer, &events)
                .iter()
                .map(|v| serde_json::to_string(&v.event).unwrap())
                .collect::<Vec<_>>()
        ),
        Err(refusal) => format!(
            "{} {:?}: {}",
            refusal.rule,
            refusal.kind,
            refusal.render(
                |id| protocol::game::view::name_for(game, viewer, id),
                |_| None
            )
        ),
    }
}

/// The commands a side might send naming the unit `name`, in the set-up of
/// `cc_with_question_mark` (the German's RPh).
fn naming(name: &str) -> Vec<Command> {
    let unit = || name.to_string();
    vec![
        Command::Adjudicate {
            unit: unit(),
            outcome: Outcome::Pin,
            note: String::new(),
        },
        Command::Move {
            units: vec![unit()],
            to: hex("3C4"),
        },
        Command::Drop {
            unit: unit(),
            weapon: "lmg".into(),
        },
        Command::Rally {
            unit: unit(),
            broken_morale: 7,
            leader: None,
            desperation: false,
        },
        Command::ShowForWallAdvantage { unit: unit() },
        Command::MarkOpportunityFire {
            units: vec![unit()],
        },
        Command::Advance {
            units: vec![unit()],
            to: hex("3C4"),
        },
        Command::Bypass {
            units: vec![unit()],
            hex: hex("3C4"),
            along: vec![hex("3D4")],
        },
        Command::DoubleTime {
            units: vec![unit()],
        },
        Command::AssaultMove {
            units: vec![unit()],
        },
        Command::PickUp {
            unit: unit(),
            weapon: "lmg".into(),
        },
        Command::ClaimWallAdvantage {
            units: vec![unit()],
        },
        Command::ForfeitWallAdvantage {
            units: vec![unit()],
        },
        Command::DeclareAttack {
            firers: vec![unit()],
            target: hex("3C2"),
            into_sewer: false,
        },
        Command::PlaceHidden {
            unit: unit(),
            claim_wall_advantage: false,
        },
        Command::SewerMove {
            units: vec![unit()],
            to: hex("3C4"),
        },
        Command::Surface {
            units: vec![unit()],
        },
        Command::EnterTunnel {
            units: vec![unit()],
        },
        Command::TakeShellholeCover {
            units: vec![unit()],
        },
        Command::RoutThroughTunnel {
            units: vec![unit()],
        },
        Command::Rout {
            unit: unit(),
            to: hex("3C4"),
            morale: Some(8),
        },
        Command::ClaimTunnelSeen {
            unit: unit(),
            entrance: hex("3C4"),
        },
        Command::DiscoverTunnel { unit: unit() },
        Command::TransferWeapon {
            weapon: "lmg".into(),
            to: unit(),
        },
        Command::Rally {
            unit: "g1".into(),
            broken_morale: 7,
            leader: Some(unit()),
            desperation: false,
        },
        Command::Enter {
            units: vec![unit()],
            to: hex("3C4"),
        },
        Command::CloseCombat {
            hex: hex("3C3"),
            attacks: vec![],
            withdrawals: vec![protocol::command::CcWithdrawal {
                units: vec![unit()],
                to: hex("3C4"),
            }],
            no_ambush: true,
        },
        Command::CloseCombat {
            hex: hex("3C3"),
            attacks: vec![protocol::command::CcAttack {
                attackers: vec!["g1".into()],
                defenders: vec![unit()],
            }],
            withdrawals: vec![],
            no_ambush: true,
        },
    ]
}

/// A12: the enemy's unit under "?" is known to a side by its alias alone. Its real id, guessed
/// (a scenario's ids say what a counter is: `r-dummy-1`, `r-ldr-9-2`), is a made-up id to that
/// side in every command: refused in the words a made-up id is, never accepted, never answered
/// with the alias the id hides behind nor with the side that owns it.
#[test]
fn the_id_under_a_question_mark_is_a_made_up_id_to_the_enemy() {
    let scenario = Scenario::from_toml(&cc_with_question_mark(
        "kind = \"squad\"\nratings = \"4-4-7\"",
    ))
    .unwrap();
    let game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    assert!(game.units["rq"].concealed);
    let alike = |game: &Game| {
        for (real, made_up) in naming("rq").into_iter().zip(naming("zz")) {
            let as_real = told_to(game, Side::A, real.clone());
            let as_made_up = told_to(game, Side::A, made_up).replace("zz", "rq");
            assert_eq!(as_real, as_made_up, "{real:?}");
        }
    };
    alike(&game);
    // In the CCPh, g1 having advanced into the "?"'s woods: a designation naming its id (with
    // the players' word that no Ambush happened) is no attack on the "?".
    let mut game = game;
    while game.clock.phase() != protocol::phase::Phase::Advance {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    play(
        &mut game,
        Side::A,
        Command::Advance {
            units: vec!["g1".into()],
            to: hex("3C3"),
        },
    );
    play(&mut game, Side::A, Command::Done);
    assert_eq!(game.clock.phase(), protocol::phase::Phase::CloseCombat);
    alike(&game);
}

/// A12: an adjudication of the enemy's "?" by its alias is decided on what the adjudicating
/// side sees of it, a "?": whether it is a squad, a half-squad, a leader, a counter the engine
/// does not rule on or a Dummy, and its ratings, change neither the refusal nor the events.
#[test]
fn an_adjudication_of_a_question_mark_tells_nothing_of_what_it_hides() {
    let outcomes = [
        Outcome::Break,
        Outcome::Rally,
        Outcome::Pin,
        Outcome::Eliminate,
        Outcome::Reduce,
        Outcome::Relocate(hex("3C4")),
        Outcome::Relabel,
        Outcome::Wound,
    ];
    let told = |under: &str| {
        let scenario = Scenario::from_toml(&cc_with_question_mark(under)).unwrap();
        let game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
        let alias = game.aliases["rq"].clone();
        outcomes
            .iter()
            .flat_map(|&outcome| {
                ["", "4-4-7", "2-4-7"].map(|note| {
                    let adjudicate = Command::Adjudicate {
                        unit: alias.clone(),
                        outcome,
                        note: note.into(),
                    };
                    told_to(&game, Side::A, adjudicate)
                })
            })
            .collect::<Vec<_>>()
    };
    let squad = told("kind = \"squad\"\nratings = \"4-4-7\"");
    for under in [
        "kind = \"dummy\"",
        "kind = \"half_squad\"\nratings = \"2-4-7\"",
        "kind = \"leader\"\nratings = \"8-0\"",
        "kind = \"counter\"\nratings = \"PzKpfw IVH\"",
    ] {
        for (i, (a, b)) in squad.iter().zip(told(under)).enumerate() {
            assert_eq!(*a, b, "{under}: adjudication {i}");
        }
    }
}

/// A note or a dispute's reason is its writer's words: renamed for a reader only where they
/// name the writer's own units that reader may not know by their ids (its "?" by alias, its HIP
/// units as "a unit"). Ids of the enemy's "?" or HIP units a side guesses in its own note come
/// back to it, and to everyone, as written: were they renamed, its note would be an oracle for
/// which ids are under which "?" (A12) and which are HIP (A12.3).
#[test]
fn a_players_note_is_no_oracle_for_the_enemys_hidden_ids() {
    let mut game = start();
    to_german_mph(&mut game);
    let rc447 = game.aliases["rc447"].clone();
    let hq467 = game.aliases["hq467"].clone();
    let note = "rc447 rd rh zz hq467";
    let before = game.clone();
    let events = play(
        &mut game,
        Side::A,
        Command::Adjudicate {
            unit: "gs1".into(),
            outcome: Outcome::Pin,
            note: note.into(),
        },
    );
    let noted = |viewer: Viewer| {
        let seen = seen_by(&before, viewer, &events);
        let Event::OutcomeAdjudicated(a) = &seen[0].event else {
            panic!("{seen:?}")
        };
        a.note.clone()
    };
    // The German reads his own words; the Russian and the spectators read them with the
    // German's own "?" by its alias.
    assert_eq!(noted(Viewer::Side(Side::A)), note);
    assert_eq!(noted(RUSSIAN), format!("rc447 rd rh zz {hq467}"));
    assert_eq!(noted(Viewer::Spectator), format!("rc447 rd rh zz {hq467}"));
    assert_ne!(rc447, "rc447");
    // A dispute's reason alike: the Russian's words, naming the German's "?" by their ids and
    // its own HIP unit.
    let reason = "hq467 rh gd";
    let at = game.version;
    // Decided against the log (`record::dispute`); its event is what the decision makes.
    let events = vec![Event::AdjudicationDisputed(
        protocol::event::AdjudicationDisputed {
            by: Side::B,
            event: at,
            reason: reason.into(),
        },
    )];
    let before = game.clone();
    let given = |viewer: Viewer| {
        let seen = seen_by(&before, viewer, &events);
        let Event::AdjudicationDisputed(d) = &seen[0].event else {
            panic!("{seen:?}")
        };
        d.reason.clone()
    };
    // The Russian's own HIP unit stays unknown to the others; the German's ids it names stay
    // as the Russian wrote them.
    assert_eq!(given(RUSSIAN), reason);
    assert_eq!(given(Viewer::Side(Side::A)), "hq467 a unit gd");
    assert_eq!(given(Viewer::Spectator), "hq467 a unit gd");
}

/// Units that come up from below ground come up under "?" (B8.42, B8.61) and have had their
/// advance of the APh (A4.7): the enemy's projection records that advance under the alias it
/// knows them by, never their id — as every record of the state that names units does.
#[test]
fn units_come_up_under_a_question_mark_are_recorded_advanced_by_their_alias() {
    let text = include_str!("positions/scenarios/sewers-tunnel.toml");
    let scenario = Scenario::from_toml(text).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    let german = Side::A;
    let russian = Side::B;
    let done = |game: &mut Game, side: Side| {
        play(game, side, Command::Done);
    };
    done(&mut game, german);
    done(&mut game, german);
    play(
        &mut game,
        german,
        Command::EnterTunnel {
            units: vec!["t1".into()],
        },
    );
    done(&mut game, german);
    done(&mut game, russian);
    done(&mut game, german);
    // sb's step into F7 is Interdicted by rk (A10.53): its NMC's two dice, a pass.
    let rout = Command::Rout {
        unit: "sb".into(),
        to: hex("20F7"),
        morale: Some(8),
    };
    let dice = &mut ScriptedDice::new([1, 2]).unwrap();
    for e in &decide(&game, german, &rout, dice).expect("routed") {
        apply(&mut game, e);
    }
    done(&mut game, german);
    let up = play(
        &mut game,
        german,
        Command::Surface {
            units: vec!["t1".into()],
        },
    );
    assert!(game.movement.advanced.contains("t1"));
    let alias = game.aliases["t1"].clone();
    // The enemy saw t1 at set-up (the scenario names it); from the "?" on, no record of the
    // state and no event names it.
    for viewer in [Viewer::Side(russian), Viewer::Spectator] {
        let seen = game.project(viewer);
        assert!(
            seen.movement.advanced.contains(&alias),
            "{viewer:?}: {:?}",
            seen.movement.advanced
        );
        assert!(!seen.movement.advanced.contains("t1"), "{viewer:?}");
        let json = serde_json::to_value(&seen).unwrap();
        let units = json["units"].to_string();
        assert!(!units.contains("\"t1\""), "{viewer:?} units name t1");
        let stream = serde_json::to_string(&seen_by(&game, viewer, &up)).unwrap();
        assert!(!stream.contains("\"t1\""), "{viewer:?} stream names t1");
    }
}

/// A Russian squad goes round the woods of a German "?" (`under`) in Bypass in his MPh, then
/// ends it (A4.33): every viewer's stream and projection through it, with the Russian's
/// stream up to the MPh's end.
fn bypass_round_question_mark(under: &str) -> (Game, [Vec<Viewed>; 3], usize) {
    let toml = format!(
        r#"
name = "A4.33: Bypass round a ?"
turns = 1
first = "russian"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3G6"
terrain = "open_ground"

[[hexes]]
hex = "3C3"
terrain = "woods"
obstacle_touches = []

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C3"
concealed = true

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3C2"
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::Movement {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    fire_step(
        &mut game,
        Side::B,
        Command::Bypass {
            units: vec!["r1".into()],
            hex: hex("3C3"),
            along: vec![hex("3B2"), hex("3B3")],
        },
        &[],
        &mut seen,
        &mut views,
    );
    fire_step(
        &mut game,
        Side::B,
        Command::Move {
            units: vec!["r1".into()],
            to: hex("3B3"),
        },
        &[],
        &mut seen,
        &mut views,
    );
    streams_replay(&game, &views);
    assert!(
        game.units["gq"].concealed,
        "no \"?\" is lost while the MPh lasts"
    );
    let before_end = seen[1].len();
    fire_step(
        &mut game,
        Side::B,
        Command::Done,
        &[],
        &mut seen,
        &mut views,
    );
    streams_replay(&game, &views);
    (game, seen, before_end)
}

/// A4.33: the German "?" gone round in Bypass is lost as the Russian MPh ends, and the Russian
/// learns what was under it at that event and no earlier: until then his stream is the same
/// whether a squad or a Dummy is under it; then the squad is shown whole, the Dummy removed
/// under its alias. Every viewer's stream replays to its projection.
#[test]
fn a_question_mark_gone_round_in_bypass_is_revealed_as_the_mph_ends() {
    let (squad, squad_seen, squad_before) = bypass_round_question_mark(SQUAD_467);
    let (dummy, dummy_seen, dummy_before) = bypass_round_question_mark(DUMMY);
    assert_eq!(squad_before, dummy_before);
    assert_eq!(
        serde_json::to_string(&squad_seen[1][..squad_before]).unwrap(),
        serde_json::to_string(&dummy_seen[1][..dummy_before]).unwrap(),
        "the Russian is told the same of a squad and a Dummy until the MPh ends"
    );
    assert!(!squad.units["gq"].concealed);
    assert!(dummy.units["gq"].eliminated);
    let lost = |seen: &[Viewed]| {
        seen.iter()
            .position(|s| matches!(s.event, Event::ConcealmentLostByBypass(_)))
            .expect("the \"?\" is lost as the MPh ends")
    };
    let at = lost(&squad_seen[1]);
    assert!(at >= squad_before);
    assert_eq!(
        first_told(&squad_seen[1], "gq", "4-6-7"),
        Some(at),
        "the Russian is told of `gq` first by the event that reveals it"
    );
    assert!(squad.project(RUSSIAN).units.contains_key("gq"));
    let alias = dummy.aliases["gq"].clone();
    match &dummy_seen[1][lost(&dummy_seen[1])].event {
        Event::ConcealmentLostByBypass(e) => {
            assert!(e.revealed.is_empty());
            assert_eq!(e.dummies_removed, vec![alias]);
        }
        other => panic!("not the loss of \"?\": {other:?}"),
    }
    assert_eq!(first_told(&dummy_seen[1], "gq", "dummy"), None);
}

/// A9.3: a German "?" (`under`: a squad, or a leader) in the woods of 3C3 holds an LMG marked
/// First Fire and fires it alone, in the Russian player turn's DFPh, at a broken Russian squad
/// next to it in 3D3: no Good Order Russian sees the firer, so it keeps its "?" (A12.14). What the Russian
/// is told of the attack is returned with his stream and projection.
fn russian_side_of_sustained_fire_by(under: &str) -> (Vec<Viewed>, Game, Vec<String>) {
    russian_side_of_lmg_fire_by(under, LMG, true)
}

/// The German's LMG `glmg`: its name and ratings.
const LMG: &str = "name = \"LMG\"\nfp = 2\nrange = 6\nbreakdown = 12";

/// The fire of [`russian_side_of_sustained_fire_by`], the weapon `glmg` given by `ratings`
/// (its name and ratings lines), marked First Fire or not.
fn russian_side_of_lmg_fire_by(
    under: &str,
    ratings: &str,
    marked: bool,
) -> (Vec<Viewed>, Game, Vec<String>) {
    let toml = format!(
        r#"
name = "A9.3: Sustained Fire by a ?"
turns = 1
first = "russian"
sides = [
    {{ id = "german", name = "German" }},
    {{ id = "russian", name = "Russian" }},
]

[[area]]
from = "3A1"
to = "3G6"
terrain = "open_ground"

[[hexes]]
hex = "3C3"
terrain = "woods"

[[units]]
id = "gq"
side = "german"
{under}
hex = "3C3"
concealed = true

[[units]]
id = "r1"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "3D3"
morale = "broken"

[[weapons]]
id = "glmg"
pp = 1
held_by = "gq"
{ratings}
"#
    );
    let scenario = Scenario::from_toml(&toml).unwrap();
    let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
    while game.clock.phase() != protocol::phase::Phase::DefensiveFire {
        let side = game.acting();
        play(&mut game, side, Command::Done);
    }
    // Marked First Fire in the MPh: set here, as the fire that marked it would have revealed
    // the "?" to the Good Order mover it was fired at.
    if marked {
        game.first_fired.insert("glmg".into());
    }
    let mut views = VIEWERS.map(|v| game.project(v));
    let mut seen: [Vec<Viewed>; 3] = Default::default();
    for (command, dice) in [
        (
            Command::DeclareAttack {
                firers: vec!["glmg".into()],
                target: hex("3D3"),
                into_sewer: false,
            },
            vec![],
        ),
        (Command::ResolveAttack, vec![3, 4, 3, 4, 3, 4]),
    ] {
        fire_step(&mut game, Side::A, command, &dice, &mut seen, &mut views);
    }
    assert!(game.units["gq"].concealed, "no Good Order Russian sees it");
    let told = seen[1].iter().map(|v| format!("{:?}", v.event)).collect();
    let [_, russian, _] = seen;
    (russian, game.project(RUSSIAN), told)
}

/// What a "?" firing a marked MG keeps hidden stays hidden: before, a leader's attack was left
/// to the players naming his LMG (`glmg`, not in the Russian's view) and saying an SMC fired
/// it (A9.3), where a squad's was read on the IFT.
#[test]
fn sustained_fire_by_a_question_mark_tells_the_enemy_nothing_of_what_it_hides() {
    alike(
        "Russian",
        russian_side_of_sustained_fire_by(SQUAD_467),
        russian_side_of_sustained_fire_by("kind = \"leader\"\nratings = \"9-1\""),
    );
}

/// A weapon a "?" holds is not in the enemy's view, and no reason names it to him, nor what
/// the "?" is: a "?" leader's fire with a SW that is not a MG was left to the players naming
/// `glmg` and the leader (A9.12), where a squad's was read on the IFT at its FP.
#[test]
fn a_question_mark_that_keeps_it_while_firing_tells_the_enemy_nothing_of_what_it_hides() {
    let atr = "name = \"ATR\"\nfp = 2\nrange = 6\nbreakdown = 12";
    let leader = russian_side_of_lmg_fire_by("kind = \"leader\"\nratings = \"9-1\"", atr, false);
    assert!(
        leader
            .2
            .iter()
            .all(|t| !t.contains("glmg") && !t.contains("leader")),
        "the Russian is told of `glmg` or a leader: {:#?}",
        leader.2
    );
    alike(
        "Russian",
        russian_side_of_lmg_fire_by(SQUAD_467, atr, false),
        leader,
    );
    alike(
        "Russian",
        russian_side_of_lmg_fire_by(SQUAD_467, LMG, false),
        russian_side_of_lmg_fire_by("kind = \"leader\"\nratings = \"9-1\"", LMG, false),
    );
}
