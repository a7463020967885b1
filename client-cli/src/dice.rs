//! The player's part in the dice (`docs/dice.md`): a random nonce of its own, added to the
//! key the server derives every roll from, so that the server's seed alone never decides one.

use crate::connection::{Connection, Reply};
use crate::follower::Follower;
use crate::Failure;
use protocol::fair_dice::{may_roll, Nonce};
use protocol::Command;

/// The command id a contribution is sent under: script lines use their line numbers, from 1.
pub const CONTRIBUTION_ID: u64 = 0;

/// A fresh nonce from the operating system.
pub fn nonce() -> Result<Nonce, Failure> {
    let mut nonce = [0u8; 32];
    getrandom::fill(&mut nonce)
        .map_err(|e| Failure::Server(format!("no randomness for the dice nonce: {e}")))?;
    Ok(nonce)
}

/// Contributes the joined side's nonce once per seed, before the side sends anything else, when the
/// scenario can roll dice at all (a dice-free game's log stays free of it). Returns whether the
/// server took it; a refusal (this side contributed under the current seed already, or the game
/// is over) changes nothing and is not an error. The follower is kept in step with the events.
pub async fn contribute(
    connection: &mut Connection,
    follower: &mut Follower,
) -> Result<bool, Failure> {
    let game = follower.game();
    if game.over || !may_roll(&game.scenario) {
        return Ok(false);
    }
    let reply = connection
        .command(
            CONTRIBUTION_ID,
            Command::ContributeEntropy { nonce: nonce()? },
            // Once per seed is the rule itself: a second contribution is refused, not applied.
            None,
        )
        .await?;
    while let Some(event) = connection.pop_buffered() {
        follower.advance(&event)?;
    }
    match reply {
        Reply::Accepted { events, .. } => {
            for event in &events {
                follower.advance(event)?;
            }
            Ok(true)
        }
        Reply::Refused { .. } => Ok(false),
    }
}
