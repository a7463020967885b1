//! The preview of an attack with a support weapon reads what A9.11 and A9.12 do to it, before
//! the dice: a leader's MG fired alone as Area Fire with no Cowering, two leaders' at full FP,
//! a squad's two MG without its own FP.

use protocol::fire::resolution::describe;
use protocol::game::{apply, Game};
use protocol::phase::Phase;
use protocol::ReadScenario;
use protocol::{decide, Command, Hex, Scenario, ScriptedDice, Side};

fn prep_fire() -> Game {
    let scenario =
        Scenario::from_toml(include_str!("positions/scenarios/a9-11-sw-usage.toml")).unwrap();
    let mut game = Game::new(scenario);
    while game.clock.phase() != Phase::PrepFire {
        let side = game.acting();
        for e in decide(&game, side, &Command::Done, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
    }
    game
}

fn words(game: &Game, firers: &[&str]) -> String {
    let firers: Vec<String> = firers.iter().map(|f| f.to_string()).collect();
    let target: Hex = "2E5".parse().unwrap();
    describe(game, Side::A, &firers, target, false)
}

#[test]
fn a_leaders_mg_reads_as_area_fire_without_cowering() {
    let game = prep_fire();
    // A9.12: l1's LMG, 3 FP at range 2, halved: 1½ on the 1 column, no DRM, no Cowering.
    assert_eq!(
        words(&game, &["glmg4"]),
        "1½ FP (glmg4 1½ at range 2, fired by a leader as Area Fire ×½ (A9.12)) on the 1 column (A7.3); DRM none; a leader's SW MG: no Cowering (A9.12)"
    );
    // Two SMC stacked together: full FP, and still no DRM and no Cowering.
    assert_eq!(
        words(&game, &["l3", "glmg5"]),
        "3 FP (glmg5 3 at range 3) on the 2 column (A7.3); DRM none; a leader's SW MG: no Cowering (A9.12)"
    );
}

#[test]
fn a_squads_two_mg_read_at_full_fp_without_its_own() {
    let game = prep_fire();
    // A9.11: both MG at full FP, 3 + 5 at range 4; doubles cower as ever (A7.9).
    assert_eq!(
        words(&game, &["glmg", "gmmg"]),
        "8 FP (glmg 3 at range 4, gmmg 5 at range 4) on the 8 column (A7.3); DRM none; doubles cower 1 column(s) left (A7.9)"
    );
    // A SW that is not an MG, fired by a half-squad, is the players'.
    assert!(
        words(&game, &["gatr"]).starts_with("the engine leaves this attack to the players:"),
        "{}",
        words(&game, &["gatr"])
    );
}
