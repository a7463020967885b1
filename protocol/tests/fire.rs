//! The law of fire by the rules (A7.3): whatever attack is declared and whatever the dice, the
//! result the engine logs is the IFT's entry for the column it logged and the Final DR it
//! logged; that column is the one the FP total falls in, moved one to the left (two with an
//! Inexperienced firer) when the dice are doubles and no leader directs (A7.9); and the Final DR is the dice plus the DRMs logged
//! with them. Random attacks from the German stacks of the A7 position, random dice.

use proptest::prelude::*;
use protocol::dice::RollPurpose;
use protocol::game::{apply, Game};
use protocol::rules::fire::ift::{self, IftColumn, IftResult};
use protocol::{decide, Command, Event, Hex, Scenario, ScriptedDice, Side};

fn scenario() -> Scenario {
    Scenario::from_toml(include_str!("positions/scenarios/a7-fire.toml")).unwrap()
}

/// The German Prep Fire Phase of the A7 position.
fn prep_fire() -> Game {
    let mut game = Game::new(scenario());
    for side in [Side::A, Side::A, Side::B] {
        let events = decide(&game, side, &Command::Done, &mut ScriptedDice::default()).unwrap();
        for e in &events {
            apply(&mut game, e);
        }
    }
    assert_eq!(game.clock.phase(), protocol::phase::Phase::PrepFire);
    game
}

/// Fire Groups of the position that the engine resolves, with their target hex.
const GROUPS: &[(&[&str], &str)] = &[
    (&["h1"], "2E5"),
    (&["f1"], "2E5"),
    (&["h1", "f1", "h2"], "2E5"),
    (&["g1", "g2"], "2E5"),
    (&["d1"], "2E5"),
    (&["c1"], "2E5"),
    (&["b1"], "2E5"),
    (&["b1", "b2", "b3"], "2E5"),
    (&["a1", "a2", "a3"], "2E5"),
    (&["e1", "e2"], "2E5"),
    (&["l10", "s1", "s2", "s3"], "2E5"),
    (&["l10", "s1"], "2E5"),
    (&["j1", "l9"], "2E5"),
    (&["ix"], "2E5"),
    (&["w1"], "2W5"),
    (&["s4"], "2S5"),
    (&["p1"], "2P5"),
    (&["y1"], "2Y8"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_attack_reads_the_tables_entry(group in 0..GROUPS.len(), a in 1u8..=6, b in 1u8..=6) {
        let mut game = prep_fire();
        let (firers, target) = GROUPS[group];
        let firers: Vec<String> = firers.iter().map(|s| s.to_string()).collect();
        let target: Hex = target.parse().unwrap();
        let declare = Command::DeclareAttack { firers: firers.clone(), target, into_sewer: false };
        for e in decide(&game, Side::A, &declare, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
        let mut dice = ScriptedDice::new([a, b]).unwrap();
        let events = decide(&game, Side::A, &Command::ResolveAttack, &mut dice).unwrap();
        let roll = events.iter().find_map(|e| match e {
            Event::DiceRolled { roll } => Some(roll.clone()),
            _ => None,
        });
        let Some(roll) = roll else {
            panic!("the attack is one the engine resolves: {events:?}");
        };
        prop_assert_eq!(roll.purpose, RollPurpose::Ift);
        prop_assert_eq!(&roll.dice, &vec![a, b]);
        let (fp, column, cowered, final_dr, result) = events.iter().find_map(|e| match e {
            Event::IftAttackResolved { fp, column, cowered, final_dr, result, .. } =>
                Some((fp.clone(), *column, *cowered, *final_dr, result.clone())),
            _ => None,
        }).expect("an IFT reading follows the roll");
        let drm: i16 = roll.modifiers.iter().map(|m| i16::from(m.value)).sum();
        prop_assert_eq!(final_dr, i16::from(a) + i16::from(b) + drm);
        prop_assert_eq!(final_dr, roll.final_result);
        // The column the FP total falls in (whole FP; a ½ never reaches a column).
        let whole: u32 = fp.trim_end_matches('½').parse().unwrap();
        let base = IftColumn::for_fp(whole).unwrap();
        let directed = firers.iter().any(|f| f.starts_with('l'));
        prop_assert_eq!(cowered, a == b && !directed);
        // An Inexperienced firer (only `ix` here) cowers two columns.
        let shift = if firers.iter().any(|f| f == "ix") { 2 } else { 1 };
        let read = if cowered { base.left(shift) } else { Some(base) };
        match read {
            Some(c) => {
                prop_assert_eq!(column, c.fp());
                prop_assert_eq!(IftResult::parse(&result), Some(ift::result(c, final_dr)));
            }
            None => prop_assert_eq!(result.as_str(), "NE"),
        }
        let ended = matches!(events.last(), Some(Event::AttackResolved { .. }));
        prop_assert!(ended, "the attack ends with AttackResolved");
    }
}
