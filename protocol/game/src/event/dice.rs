//! The dice (`docs/dice.md`): every roll as made, and the scheme that lets the players
//! check them — the server's commitment, the sides' nonces and the seed's reveal.

use board::scenario::Side;
use serde::{Deserialize, Serialize};

/// The server rolled dice: purpose, rule, raw dice, modifiers and Final result. Replay reads
/// the dice from here and never rolls again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiceRolled {
    pub roll: crate::dice::Roll,
}

/// The server committed to its secret dice seed by publishing its hash. Logged with the
/// first event that needs it (a contribution or a roll); shown to players from the start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiceCommitted {
    pub commitment: crate::dice::Commitment,
}

/// A side added its random nonce to the dice key from now on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntropyContributed {
    pub side: Side,
    pub nonce: crate::dice::Nonce,
}

/// A side agreed that the server reveal its current seed now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRevealAgreed {
    pub side: Side,
}

/// The server revealed the seed of the current commitment (at the end of the game, or
/// once both sides agreed): from here on anyone can re-derive every roll made under it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRevealed {
    pub seed: crate::dice::Seed,
}
