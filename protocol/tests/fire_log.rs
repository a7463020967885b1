//! The fire log (A10.1, A10.21, A7.8): a check after an IFT result the engine read reads as a
//! line of a fire log — the unit, the check, its morale, the DR and DRMs, what came of it — in
//! its roll's words and in its effect's, as each side's record shows them.

use protocol::game::{apply, Game};
use protocol::words::describe_event;
use protocol::ReadScenario;
use protocol::{decide, Command, Scenario, ScriptedDice, Side};

/// The words of the events of `firer`'s attack on `target` with `faces`, in the A10
/// position's PFPh.
fn fire_log(firer: &str, target: &str, faces: &[u8]) -> Vec<String> {
    let scenario =
        Scenario::from_toml(include_str!("positions/scenarios/a10-morale.toml")).unwrap();
    let mut game = Game::new(scenario);
    let run = |game: &mut Game, side: Side, c: Command, faces: &[u8]| {
        let mut dice = ScriptedDice::new(faces.iter().copied()).unwrap();
        let events = decide(game, side, &c, &mut dice).unwrap();
        let words: Vec<String> = events.iter().map(|e| describe_event(game, e)).collect();
        for e in &events {
            apply(game, e);
        }
        words
    };
    for side in [Side::A, Side::A, Side::B] {
        run(&mut game, side, Command::Done, &[]);
    }
    run(
        &mut game,
        Side::A,
        Command::DeclareAttack {
            firers: vec![firer.into()],
            target: target.parse().unwrap(),
            into_sewer: false,
        },
        &[],
    );
    run(&mut game, Side::A, Command::ResolveAttack, faces)
}

#[test]
fn a_check_reads_like_a_fire_log() {
    let log = fire_log("g2", "2H5", &[2, 4, 3, 4]);
    assert_eq!(
        log[1],
        "IFT: 8 FP vs 2H5 read on the 8 column, Final DR 6 → 1MC (A7.3)"
    );
    assert!(log[2].ends_with("= Final 8 → 4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken"));
    assert_eq!(log[3], "4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken (A10.1)");
    assert!(log[4].ends_with("(A19.13)"));
    let log = fire_log("g1", "2E5", &[2, 4, 3, 4, 3, 4]);
    assert!(log[2].ends_with("9-1 `lr` 1MC: morale 9, DR 7 +1 → passed"));
    assert!(log[3].contains("-1 `lr` leads (A10.21)"));
    assert!(log[3].ends_with("4-4-7 `r1` 1MC: morale 7, DR 7 +1 −1 → passed"));
}

#[test]
fn a_failed_ptc_pins() {
    let log = fire_log("g4", "2N5", &[4, 5, 4, 4]);
    assert_eq!(log[3], "4-4-7 `r3` PTC: morale 7, DR 8 → pinned (A7.8)");
}
