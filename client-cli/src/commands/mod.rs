//! One module per subcommand. Each takes its parsed arguments and the `out` to write its report
//! to, and returns a [`Status`](crate::Status) or a [`Failure`].
//!
//! The argument structs derive `clap::Args` so the binary's parser is built from them, and
//! tests build them by hand.

pub mod boards;
pub mod check;
pub mod export;
pub mod games;
pub mod import;
pub mod log;
pub mod new;
pub mod notify;
pub mod play;
pub mod replay;
pub mod run;
pub mod state;
pub mod verify;
pub mod watch;

use crate::connection::{Connection, ConnectionError, Joined};
use crate::follower::Follower;
use crate::{Failure, DEFAULT_SERVER};
use protocol::{Game, Side};

/// Where the server is. Every online subcommand takes it.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct ServerArg {
    /// The server's websocket address (the `/v1` path is added); several, comma-separated,
    /// for server nodes sharing a cluster: the next is tried when one does not answer.
    #[arg(long = "server", env = "ASL_SERVER", default_value = DEFAULT_SERVER)]
    pub url: String,
}

/// Which game to join, and as whom.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct GameArgs {
    /// The game id `asl new` printed, or the name it was saved under (`asl new --save NAME`).
    #[arg(long, env = "ASL_GAME")]
    pub game: String,
    /// A side's token, or the spectator token; for a saved game, a side (`german`) or
    /// `spectator` names its token.
    #[arg(long, env = "ASL_TOKEN")]
    pub token: String,
}

/// The side whose command play waits for. Usually the side acting in the current step, but
/// while the DEFENDER must designate where a lost sewer stack goes (B8.41) or a side may claim
/// Wall Advantage (B9.322), the rules refuse every other command until that side answers — and
/// the sewer designation first, as `protocol::decide` checks it first. The same side whose
/// clock runs (`protocol::game::timing::awaited`); once the game is over, the side that
/// acted last.
pub(crate) fn side_to_act(game: &Game) -> Side {
    awaited_side(game).unwrap_or_else(|| game.acting())
}

/// The side the game waits on, `None` once it is over (`protocol::game::timing::awaited`).
pub(crate) fn awaited_side(game: &Game) -> Option<Side> {
    protocol::game::timing::awaited(game)
}

/// What `side` has still to place in the set-up step, in words: "ru-sq1 (squad 4-4-7, may
/// be concealed), ru-ldr1 (leader 8-1)", or `None` outside set-up or with nothing left.
pub fn left_to_set_up(game: &Game, side: Side) -> Option<String> {
    let left = game.left_to_set_up(side);
    if left.is_empty() {
        return None;
    }
    let words: Vec<String> = left
        .iter()
        .map(|u| {
            let mut allowed = vec![];
            if u.may_conceal {
                allowed.push("may be concealed");
            }
            if u.may_hide {
                allowed.push("may be HIP");
            }
            let ratings = if u.ratings.is_empty() {
                String::new()
            } else {
                format!(" {}", u.ratings)
            };
            let allowed = if allowed.is_empty() {
                String::new()
            } else {
                format!(", {}", allowed.join(", "))
            };
            format!("{} ({}{ratings}{allowed})", u.id, u.kind.name())
        })
        .collect();
    Some(words.join(", "))
}

/// What the game waits for, in words: whose answer and to what. "the Russian: a chance to
/// claim Wall Advantage for 747a in 12C5 (B9.322)", or "the German: Turn 1, German Player
/// Turn: MPh, step MPh". Shown while `asl run` waits and on `asl play`'s status line.
pub fn awaited(game: &Game) -> String {
    if game.over {
        return "nothing: the game is over".into();
    }
    let side = game.side_name(side_to_act(game));
    if game.setup.is_some() {
        return format!("the {side}: its set-up before Turn 1 (A12.12)");
    }
    if let Some(d) = &game.sewer_designation {
        return format!(
            "the {side}: where the sewer stack lost beneath {} goes (B8.41)",
            d.from
        );
    }
    if let Some(chance) = &game.wa_chance {
        let hexes: std::collections::BTreeSet<String> = chance
            .units
            .iter()
            .filter_map(|u| game.units.get(u))
            .map(|u| u.hex.to_string())
            .collect();
        let hexes: Vec<String> = hexes.into_iter().collect();
        return format!(
            "the {side}: a chance to claim Wall Advantage for {} in {} (B9.322)",
            chance.units.join(", "),
            hexes.join(", ")
        );
    }
    if let Some(chance) = &game.cc_infiltration {
        let hex = chance.hex;
        return format!(
            "the {side}: whether {} infiltrate out of the Close Combat in {hex} after the Original CC DR of {} (`cc {hex} infiltrate UNITS to HEX` or `cc {hex} infiltrate none`, A11.22)",
            chance.units.join(", "),
            chance.original
        );
    }
    if let Some(hex) = game.movement.cc_designated.keys().next() {
        return format!(
            "the {side}: its Close Combat attacks in {hex}, after the ATTACKER's (`cc {hex} …` or `cc {hex} none`, A11.12)"
        );
    }
    format!(
        "the {side}: {}, step {}",
        protocol::export::when(game),
        game.clock.step().name
    )
}

/// Connects and joins for a full snapshot, which the returned follower starts from (checked
/// against the server's state hash).
pub(crate) async fn join_fresh(
    server: &ServerArg,
    game: &GameArgs,
) -> Result<(Connection, Joined, Follower), Failure> {
    let mut connection = Connection::connect(&server.url).await?;
    // Receipts are kept where saved games are; a machine with no such place keeps none.
    if let Ok(dir) = crate::receipts::receipts_dir() {
        connection.keep_receipts(dir);
    }
    let mut joined = connection.join(&game.game, &game.token, None).await?;
    let state = joined.state.take().ok_or_else(|| {
        ConnectionError::Unexpected("the `joined` reply to a fresh join carried no state".into())
    })?;
    let follower = Follower::from_snapshot(state, joined.state_hash)?;
    Ok((connection, joined, follower))
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::script::{parse_script, run_offline};
    use protocol::ReadScenario;
    use protocol::Scenario;

    /// The game after `script`, every line of which must be accepted.
    fn after(scenario: &str, script: &str) -> Game {
        let game = Game::new(Scenario::from_toml(scenario).unwrap());
        let lines = parse_script(script, &game.scenario).unwrap();
        let (game, reports) = run_offline(game, &lines);
        for report in &reports {
            assert!(report.result.is_ok(), "line {}: {:?}", report.line, report);
        }
        game
    }

    const WA: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");
    const TO_THE_MPH: &str = "german done\ngerman done\n";

    #[test]
    fn the_acting_side_acts_when_nothing_is_pending() {
        let game = after(WA, TO_THE_MPH);
        assert_eq!(side_to_act(&game), Side::A);
        let game = after(WA, &format!("{TO_THE_MPH}german done\n"));
        assert_eq!(side_to_act(&game), Side::B, "the Russian's DFPh");
    }

    /// B9.41 EX: the 4-6-7 leaves H5 in the German MPh, and the Russian 7-4-7 across the wall
    /// may claim WA: the Russian is to act until it answers, though the step is the German's.
    #[test]
    fn a_chance_to_claim_wall_advantage_waits_for_its_side() {
        let moved = format!("{TO_THE_MPH}german move 467a H6\n");
        let game = after(WA, &moved);
        assert_eq!(game.acting(), Side::A);
        assert_eq!(side_to_act(&game), Side::B);
        let game = after(WA, &format!("{moved}russian decline-wa\n"));
        assert_eq!(side_to_act(&game), Side::A);
        let game = after(WA, &format!("{moved}russian claim-wa 747a\n"));
        assert_eq!(side_to_act(&game), Side::A);
    }

    /// B8.41: a German stack lost in the sewer (dr 6) waits in the German MPh for the Russian
    /// DEFENDER to designate where it goes.
    #[test]
    fn a_lost_sewer_stack_waits_for_the_defender() {
        let sewers = include_str!("../../../protocol/tests/positions/scenarios/sewers.toml");
        let lost = format!("{TO_THE_MPH}dice 2 2 6\ngerman sewer-move s7 l3 to I6\n");
        let game = after(sewers, &lost);
        assert_eq!(game.acting(), Side::A);
        assert_eq!(side_to_act(&game), Side::B);
        let game = after(sewers, &format!("{lost}russian designate-sewer H5\n"));
        assert_eq!(side_to_act(&game), Side::A);
    }
}
