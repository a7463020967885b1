//! What the rules derive to answer quickly is no part of the state (issue 55): the units in
//! each hex, and the note that Wall Advantage was settled on a set of units
//! (`game::Units`). Neither is encoded, so neither changes the state hash or the log, and a
//! position with them decides every command as the same position without them.

use protocol::event::GameCreated;
use protocol::game::{CopyOnWrite, Units};
use protocol::rules::moving_on;
use protocol::ReadScenario;
use protocol::{apply, decide, Event, Game, Scenario, ScriptedDice};
use std::collections::BTreeMap;

/// `pairs` German squads holding WA over a wall, each with a Russian squad in woods across
/// it, in lines across board 55: more units than a Location is found among by looking at each.
fn walled_lines(pairs: usize) -> String {
    let mut text = String::from(
        "name = \"Walled lines\"\nturns = 2\nfirst = \"german\"\nsides = [{ id = \"german\", name = \"German\" }, { id = \"russian\", name = \"Russian\" }]\n\n[[area]]\nfrom = \"55A1\"\nto = \"55GG10\"\nterrain = \"open_ground\"\n",
    );
    let columns = [
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N",
    ];
    for i in 0..pairs {
        let column = columns[i % columns.len()];
        let (wall, woods) = [(2, 3), (5, 6), (8, 9)][i / columns.len()];
        text += &format!(
            "\n[[hexes]]\nhex = \"55{column}{woods}\"\nterrain = \"woods\"\n\n[[hexsides]]\nhexside = \"55{column}{wall}-55{column}{woods}\"\nfeature = \"wall\"\n\n[[units]]\nid = \"ge{i}\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"55{column}{wall}\"\nwall_advantage = true\n\n[[units]]\nid = \"ru{i}\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"55{column}{woods}\"\n"
        );
    }
    text
}

fn start(text: &str) -> Game {
    let scenario = Scenario::from_toml(text).unwrap();
    Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap()
}

/// The same position with nothing derived: its units copied afresh.
fn without_derived(game: &Game) -> Game {
    let mut fresh = game.clone();
    fresh.units = CopyOnWrite::from(Units::from(BTreeMap::clone(&game.units)));
    fresh
}

#[test]
fn the_index_and_the_settling_are_not_state() {
    let mut game = start(&walled_lines(20));
    let hash = game.state_hash();
    let encoded = serde_json::to_string(&game).unwrap();
    let hex = game.units["ge0"].hex;
    assert_eq!(game.units_in(hex).count(), 1);
    game.units.mark_settled();
    assert!(game.units.settled());
    assert_eq!(game.state_hash(), hash);
    assert_eq!(serde_json::to_string(&game).unwrap(), encoded);
    assert_eq!(game, without_derived(&game));
    // Any change to a unit drops both.
    game.units.get_mut("ge0").unwrap().pinned = true;
    assert!(!game.units.settled());
}

/// A whole game of each scenario by `moving_on`: at every step, the index of units by hex
/// answers as a search does, the position as play left it (its index built, its units found
/// settled) decides as the same position afresh, and the game reaches the state hash its log
/// replays to.
#[test]
fn a_position_decides_alike_with_and_without_what_was_derived() {
    for text in [
        walled_lines(20),
        include_str!("../../scenarios/b9-41-wall-advantage.toml").to_string(),
    ] {
        let mut game = start(&text);
        let mut log = vec![];
        let mut skipped = 0;
        while !game.over {
            let (side, command) = moving_on(&game);
            // The index (built once more than 24 units are in play) names each hex's units
            // as a search of every unit does, in id order, after every change.
            for unit in game.units.values() {
                let indexed: Vec<&str> = game.units.in_hex(unit.hex).map(|u| &*u.id).collect();
                let searched: Vec<&str> = game
                    .units
                    .values()
                    .filter(|u| u.hex == unit.hex)
                    .map(|u| &*u.id)
                    .collect();
                assert_eq!(indexed, searched, "{} at {}", unit.hex, game.clock);
            }
            let settled = game.units.settled();
            let live = decide(&game, side, &command, &mut ScriptedDice::default()).unwrap();
            let fresh = decide(
                &without_derived(&game),
                side,
                &command,
                &mut ScriptedDice::default(),
            )
            .unwrap();
            assert_eq!(live, fresh, "{command:?} at {}", game.clock);
            skipped += usize::from(settled);
            for event in &live {
                apply(&mut game, event);
            }
            log.extend(live);
        }
        assert!(skipped > 0, "no command found its units settled");
        let replayed = Game::replay(
            std::iter::once(&Event::GameCreated(GameCreated {
                scenario: game.scenario.as_ref().clone(),
            }))
            .chain(&log),
        )
        .unwrap();
        assert_eq!(replayed.state_hash(), game.state_hash());
    }
}
