//! What each viewer sees: a side's own view, the opponent's, and a spectator's. Two laws, on
//! random play in scenarios with hidden units (HIP) and a secretly recorded tunnel:
//! - a viewer that applies the events it was sent to the snapshot it was sent reaches exactly
//!   the server's projection for it (so its state hash checks out, and resume works);
//! - until the rules reveal them, nothing a non-owner receives names a hidden unit or an
//!   unused tunnel, nor what is under an opponent's "?".

use proptest::prelude::*;
use protocol::event::GameCreated;
use protocol::game::view::{apply_viewed, project_event, project_event_walked};
use protocol::game::{apply, Game, Viewer};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Scenario, ScriptedDice, Side};

#[derive(Clone, Debug)]
enum Draw {
    Done,
    Move(usize, usize),
    Place(usize),
    EnterTunnel(usize),
    Surface(usize),
}

fn draw() -> impl Strategy<Value = Draw> {
    prop_oneof![
        4 => Just(Draw::Done),
        6 => (0usize..30, 0usize..6).prop_map(|(u, d)| Draw::Move(u, d)),
        1 => (0usize..30).prop_map(Draw::Place),
        1 => (0usize..30).prop_map(Draw::EnterTunnel),
        1 => (0usize..30).prop_map(Draw::Surface),
    ]
}

fn scenario(which: bool) -> Scenario {
    let text = if which {
        include_str!("../../scenarios/village-outskirts.toml")
    } else {
        include_str!("positions/scenarios/sewers.toml")
    };
    Scenario::from_toml(text).unwrap()
}

const VIEWERS: [Viewer; 3] = [
    Viewer::Side(Side::A),
    Viewer::Side(Side::B),
    Viewer::Spectator,
];

/// The ids of units hidden from `viewer`, as they would appear in JSON.
fn secrets(game: &Game, viewer: Viewer) -> Vec<String> {
    game.units
        .values()
        .filter(|u| u.hidden && viewer != Viewer::Side(u.side))
        .map(|u| format!("\"{}\"", u.id))
        .collect()
}

/// A unit under "?" is only a "?" to anyone but its owner (A12).
fn concealed_are_masked(view: &Game, viewer: Viewer) -> bool {
    view.units
        .values()
        .filter(|u| u.concealed && viewer != Viewer::Side(u.side))
        .all(|u| u.kind == protocol::scenario::UnitKind::Concealed && u.ratings == "?")
}

/// A viewer knows only its own tunnels and those used in the open (B8.6).
fn knows_only_its_tunnels(view: &Game, viewer: Viewer) -> bool {
    view.tunnels
        .iter()
        .all(|t| t.revealed || viewer == Viewer::Side(t.side))
        && view
            .scenario
            .tunnels
            .iter()
            .all(|t| viewer == Viewer::Side(t.side))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn every_view_replays_to_its_projection_and_leaks_nothing(
        which in any::<bool>(),
        draws in prop::collection::vec(draw(), 0..100),
    ) {
        let scenario = scenario(which);
        let created = Event::GameCreated(GameCreated { scenario: scenario.clone() });
        let mut game = Game::replay(std::slice::from_ref(&created)).unwrap();
        // Each viewer starts from its snapshot, as a client does on joining.
        let mut views: Vec<Game> = VIEWERS
            .iter()
            .map(|v| {
                let mut view = game.project(*v);
                view.version = 1;
                view
            })
            .collect();
        for (v, view) in VIEWERS.iter().zip(&views) {
            let json = serde_json::to_string(view).unwrap();
            for secret in secrets(&game, *v) {
                prop_assert!(!json.contains(&secret), "{v:?} sees {secret} at the start");
            }
        }
        for d in &draws {
            let ids: Vec<String> = game.units.keys().cloned().collect();
            let unit = |i: &usize| game.units[&ids[i % ids.len()]].clone();
            let (side, command) = match d {
                Draw::Done => (game.acting(), Command::Done),
                Draw::Move(u, dir) => {
                    let u = unit(u);
                    let n = u.hex.neighbours();
                    (u.side, Command::Move { units: vec![u.id.clone()], to: n[dir % n.len()] })
                }
                Draw::Place(u) => {
                    let u = unit(u);
                    (u.side, Command::PlaceHidden { unit: u.id.clone(), claim_wall_advantage: false })
                }
                Draw::EnterTunnel(u) => {
                    let u = unit(u);
                    (u.side, Command::EnterTunnel { units: vec![u.id.clone()] })
                }
                Draw::Surface(u) => {
                    let u = unit(u);
                    (u.side, Command::Surface { units: vec![u.id.clone()] })
                }
            };
            let Ok(events) = decide(&game, side, &command, &mut ScriptedDice::default()) else {
                continue;
            };
            for e in &events {
                for (v, view) in VIEWERS.iter().zip(views.iter_mut()) {
                    let mut after = game.clone();
                    apply(&mut after, e);
                    prop_assert_eq!(
                        project_event(&game, &after, *v, e),
                        project_event_walked(&game, &after, *v, e),
                        "{:?}: the short cut changed {:?}", v, e
                    );
                    if let Some(seen) = game.view_event(*v, e) {
                        let json = serde_json::to_string(&seen).unwrap();
                        // A fact the event itself reveals is no leak: check against the
                        // secrets that remain after it.
                        for secret in secrets(&after, *v) {
                            prop_assert!(!json.contains(&secret), "{v:?} learns {secret} from {json}");
                        }
                        apply_viewed(view, &seen);
                    }
                }
                apply(&mut game, e);
            }
            for (v, view) in VIEWERS.iter().zip(&views) {
                // A viewer's version counts the events it received; the projection is handed
                // out with that count.
                let mut projection = game.project(*v);
                projection.version = view.version;
                prop_assert_eq!(view, &projection, "{:?} diverged", v);
                prop_assert!(knows_only_its_tunnels(view, *v), "{v:?} knows a secret tunnel");
                prop_assert!(concealed_are_masked(view, *v), "{v:?} sees under a ?");
            }
        }
    }
}

/// The projection's short cut (`game::view::project_event` skips the walk through every unit
/// and weapon while no unit is concealed or hidden) gives every viewer the very events the walk
/// does: checked on every event of every position script, which between them conceal, hide,
/// place dummies, reveal and eliminate units, and play open games too.
#[test]
fn the_short_cut_gives_what_the_walk_gives() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/positions");
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "script"))
        .collect();
    scripts.sort();
    // Events projected with neither game holding a unit concealed or hidden, and with one of
    // them holding one: both kinds must be among the scripts' for the check to mean anything.
    let (mut open, mut secret) = (0, 0);
    for path in &scripts {
        let text = std::fs::read_to_string(path).unwrap();
        let scenario_path = path
            .parent()
            .unwrap()
            .join(protocol::script::scenario_directive(&text).unwrap());
        let scenario =
            Scenario::from_toml(&std::fs::read_to_string(&scenario_path).unwrap()).unwrap();
        let lines = protocol::script::parse_script(&text, &scenario).unwrap();
        let created = Event::GameCreated(GameCreated {
            scenario: scenario.clone(),
        });
        // Before `GameCreated`, as the streams take it (`record::stream::Following`).
        let mut game = Game::new(scenario.clone());
        let mut run = protocol::script::OfflineRun::new(Game::new(scenario));
        let mut events = vec![created];
        for line in &lines {
            if let Some(report) = run.step(line) {
                events.extend(report.result.unwrap_or_default());
            }
        }
        for event in &events {
            let before = game.clone();
            apply(&mut game, event);
            if before.units.concealed_or_hidden() + game.units.concealed_or_hidden() == 0 {
                open += 1;
            } else {
                secret += 1;
            }
            for v in VIEWERS {
                assert_eq!(
                    project_event(&before, &game, v, event),
                    project_event_walked(&before, &game, v, event),
                    "{}: {v:?} is sent another {event:?} by the short cut",
                    path.display()
                );
            }
        }
    }
    assert!(open > 100 && secret > 100, "open {open}, secret {secret}");
}
