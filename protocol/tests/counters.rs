//! Counters the engine does not rule on (`UnitKind::Counter`): shown and hidden by the same
//! projections as units — under "?" the opponent learns neither their name nor a relabel's —
//! and read from a scenario only with a name fit to show.

use protocol::board::scenario::UnitKind;
use protocol::event::GameCreated;
use protocol::game::command::Outcome;
use protocol::game::view::project_event;
use protocol::game::{apply, Game, Viewer};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Scenario, ScriptedDice, Side};

const SCENARIO: &str = include_str!("positions/scenarios/counters.toml");

fn start() -> Game {
    let scenario = Scenario::from_toml(SCENARIO).unwrap();
    Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
}

#[test]
fn a_concealed_counter_shows_as_a_question_mark_and_its_relabel_says_nothing() {
    let mut game = start();
    for command in [
        Command::SetUp {
            unit: "gg".into(),
            hex: "1H3".parse().unwrap(),
            concealed: false,
            hidden: false,
            weapons: vec![],
        },
        Command::Done,
    ] {
        for e in decide(&game, Side::A, &command, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
    }
    let german = game.project(Viewer::Side(Side::A));
    let seen = german
        .units
        .values()
        .find(|u| u.hex == "1C3".parse().unwrap())
        .expect("the \"?\" in the woods");
    assert_eq!(seen.kind, UnitKind::Concealed);
    assert_eq!(seen.ratings, "?");
    assert!(!format!("{german:?}").contains("T-34"));
    let russian = game.project(Viewer::Side(Side::B));
    assert_eq!(russian.units["rv"].ratings, "T-34 M43");

    let relabel = Command::Adjudicate {
        unit: "rv".into(),
        outcome: Outcome::Relabel,
        note: "T-34 M43 immobilized".into(),
    };
    let events = decide(&game, Side::B, &relabel, &mut ScriptedDice::default()).unwrap();
    let before = game.clone();
    for e in &events {
        apply(&mut game, e);
    }
    assert_eq!(game.units["rv"].ratings, "T-34 M43 immobilized");
    for viewer in [Viewer::Side(Side::A), Viewer::Spectator] {
        let viewed = project_event(&before, &game, viewer, &events[0]).unwrap();
        let text = format!("{:?}", viewed.event);
        assert!(
            !text.contains("T-34") && !text.contains("immobilized"),
            "{text}"
        );
        let mut view = before.project(viewer);
        protocol::game::view::apply_viewed(&mut view, &viewed);
        assert!(
            view.units == game.project(viewer).units,
            "{viewer:?} reaches its projection's units"
        );
    }
    let own = project_event(&before, &game, Viewer::Side(Side::B), &events[0]).unwrap();
    assert!(format!("{:?}", own.event).contains("immobilized"));
}

#[test]
fn a_counter_is_named_fit_to_show_and_set_up_not_brought_on() {
    let refused = |from: &str, to: &str| {
        let text = SCENARIO.replace(from, to);
        Scenario::from_toml(&text).expect_err(to)
    };
    let e = refused("ratings = \"PzKw IVH\"", "ratings = \"\"");
    assert!(e.reason.contains("name printed"), "{e}");
    let e = refused("ratings = \"PzKw IVH\"", "ratings = \"PzKw\\u0007IVH\"");
    assert!(e.reason.contains("control"), "{e}");
    let e = refused("ratings = \"PzKw IVH\"", "ratings = \"PzKw \\u202EIVH\"");
    assert!(e.reason.contains("bidi"), "{e}");
    let e = refused(
        "ratings = \"PzKw IVH\"",
        &format!("ratings = \"{}\"", "P".repeat(65)),
    );
    assert!(e.reason.contains("64 bytes"), "{e}");
    let e = refused(
        "ratings = \"Gun 75L AT PaK 40\"\noffboard = true",
        "ratings = \"Gun 75L AT PaK 40\"\nenters = { turn = 1, edge = \"east\" }",
    );
    assert!(e.reason.contains("not modelled"), "{e}");
}
