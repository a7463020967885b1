//! The preview law on random play: for every command, by either side, in every position random
//! play reaches, `preview` is allowed exactly when the command is, refuses it with the very
//! same violation when it is not, and changes nothing (the position's hash and the log are the
//! same before and after). A step's previewed cost is the cost the command then pays.

use proptest::prelude::*;
use protocol::chain::Entry;
use protocol::event::{UnitBypassed, UnitEntryBlocked, UnitMoved};
use protocol::preview::preview;
use protocol::referee::Referee;
use protocol::ReadScenario;
use protocol::{Command, Event, Hex, Scenario, Side};

fn scenario(which: u8) -> Scenario {
    let text = match which % 3 {
        0 => include_str!("../../scenarios/wall-and-sewer.toml"),
        1 => include_str!("../../scenarios/sewer-infiltration.toml"),
        _ => include_str!("../../scenarios/b9-41-wall-advantage.toml"),
    };
    Scenario::from_toml(text).unwrap()
}

fn start(which: u8) -> Referee {
    Referee::new(Entry::created(scenario(which)), vec![[which; 32]]).unwrap()
}

/// One random command of `side`'s: its kind, a unit of the side's and a direction or hex.
fn command(referee: &Referee, side: Side, kind: u8, u: usize, d: usize) -> Command {
    let game = referee.game();
    let ids: Vec<String> = game
        .units
        .values()
        .filter(|unit| unit.side == side && !unit.eliminated)
        .map(|unit| unit.id.clone())
        .collect();
    let hexes: Vec<Hex> = game.scenario.hexes.keys().copied().collect();
    let id = ids[u % ids.len()].clone();
    let here = game.units[&id].hex;
    let neighbours = here.neighbours();
    let near = neighbours[d % neighbours.len()];
    match kind % 10 {
        0 | 8 | 9 => Command::Done,
        1 | 2 => Command::Move {
            units: vec![id],
            to: near,
        },
        3 => Command::SewerMove {
            units: vec![id],
            to: hexes[d % hexes.len()],
        },
        4 => Command::ClaimWallAdvantage { units: vec![id] },
        5 => Command::DeclineWallAdvantage,
        6 => Command::DoubleTime { units: vec![id] },
        _ => Command::DesignateSewer {
            to: hexes[d % hexes.len()],
        },
    }
}

fn seeds() -> impl FnMut() -> [u8; 32] {
    let mut next = 100u8;
    move || {
        next = next.wrapping_add(1);
        [next; 32]
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_preview_is_the_decision_and_changes_nothing(
        which in 0u8..3,
        draws in prop::collection::vec((0u8..10, 0usize..32, 0usize..12, any::<bool>()), 1..100),
    ) {
        let mut referee = start(which);
        for (kind, u, d, other) in draws {
            if referee.game().over {
                break;
            }
            let acting = referee.game().acting();
            let side = if other { acting.opponent() } else { acting };
            let command = command(&referee, side, kind, u, d);
            let (hash, length) = (referee.game().state_hash(), referee.entries().len());
            let previewed = preview(referee.game(), referee.entries(), side, &command);
            prop_assert_eq!(referee.game().state_hash(), hash);
            prop_assert_eq!(referee.entries().len(), length);
            match (previewed, referee.play(side, &command, &mut seeds())) {
                (Err(p), Err(v)) => prop_assert_eq!(p, v),
                (Ok(p), Ok(events)) => {
                    if let Some(cost) = &p.cost {
                        let paid = events.iter().any(|e| matches!(
                            e,
                            Event::UnitMoved(UnitMoved { cost: c, .. })
                                | Event::UnitBypassed(UnitBypassed { cost: c, .. })
                                | Event::UnitEntryBlocked(UnitEntryBlocked { cost: c, .. }) if c == cost
                        ));
                        prop_assert!(paid, "{:?} previewed {:?}, paid {:?}", command, cost, events);
                    }
                }
                (p, v) => prop_assert!(false, "{:?} by {:?}: previewed {:?}, decided {:?}", command, side, p, v),
            }
        }
    }
}
