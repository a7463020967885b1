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
    // The end-of-RPh steps pass by themselves where nobody could claim WA (B9.322).
    while game.clock.phase() != protocol::phase::Phase::PrepFire {
        let side = game.acting();
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
        "IFT: 8 FP vs 2H5 on the 8 column: Final DR 6 → 1MC (A7.3)"
    );
    // The roll's own line is the fire log's: FP and each DRM, target, column, DR → result.
    assert!(
        log[0].ends_with("= Final 6 → 8 FP vs 2H5 on the 8 column: DR 6, Final 6 → 1MC"),
        "{}",
        log[0]
    );
    assert!(log[2].ends_with("= Final 8 → 4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken"));
    assert_eq!(log[3], "4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken (A10.1)");
    assert!(log[4].ends_with("(A19.13)"));
    let log = fire_log("g1", "2E5", &[2, 4, 3, 4, 3, 4]);
    assert!(log[2].ends_with("9-1 `lr` 1MC: morale 9, DR 7 +1 → passed"));
    assert!(log[3].contains("-1 `lr` leads (A10.21)"));
    // A pass at exactly the morale pins (A7.8).
    assert!(log[3].ends_with("4-4-7 `r1` 1MC: morale 7, DR 7 +1 −1 → passed, pinned"));
    assert_eq!(
        log[4],
        "4-4-7 `r1` 1MC: morale 7, DR 7 +1 −1 → passed, pinned (A7.8)"
    );
}

#[test]
fn a_k_result_reads_its_random_selection() {
    // K/2 on the 9-1 and the 4-4-7: drs 2 and 5, the squad is reduced; the 9-1's 2MC passes.
    let log = fire_log("g9", "2E5", &[1, 2, 2, 5, 2, 3]);
    assert!(log[2].ends_with("9-1 `lr` Random Selection for K/2: dr 2"));
    assert!(log[3].ends_with("4-4-7 `r1` Random Selection for K/2: dr 5"));
    assert_eq!(
        log[4],
        "4-4-7 `r1` K/2 (dr 5): Casualty Reduction → reduced to a half-squad (A7.302)"
    );
}

#[test]
fn a_failed_ptc_pins() {
    let log = fire_log("g4", "2N5", &[4, 5, 4, 4]);
    assert_eq!(log[3], "4-4-7 `r3` PTC: morale 7, DR 8 → pinned (A7.8)");
}
