//! The dice (`docs/dice.md`): every roll as made, and the scheme that lets the players
//! check them — the server's commitment, the sides' nonces and the seed's reveal.

use super::Sides;
use super::{Event, Fact};
use board::scenario::UnitId;
use data_encoding::HEXLOWER;
use std::fmt::Write as _;

use crate::view::Names;
use crate::{Game, Viewer};
use board::scenario::Side;
use serde::{Deserialize, Serialize};

/// What the dice scheme's events and refusals cite: the document that defines it.
pub const DICE_RULE: &str = "docs/dice.md";

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

impl Fact for DiceRolled {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let DiceRolled { roll } = self;
        game.dice_drawn = roll.first_draw + roll.dice.len() as u64;
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let v = names.viewer;
        let DiceRolled { mut roll } = self;
        // The outcome's words may quote a rating (a leader's morale in a 4TC): only
        // the roller reads them; the others learn the outcome from the events after.
        // A roll on request (`roll`) has no such words: its outcome is the note its
        // roller wrote for both sides to read ("8 FP vs 20A2"), as an adjudication's.
        if v != Viewer::Side(roll.side) && roll.purpose.on_request().is_none() {
            roll.outcome = String::new();
        }
        for m in &mut roll.modifiers {
            m.reason = names.text(&m.reason);
        }
        Event::DiceRolled(DiceRolled { roll })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let DiceRolled { roll } = self;
        let dice: Vec<String> = roll.dice.iter().map(|d| d.to_string()).collect();
        let mut s = format!(
            "{} rolled {} for {:?} ({}): {}",
            name(roll.side),
            if roll.dice.len() == 1 { "dr" } else { "DR" },
            roll.purpose,
            roll.rule,
            dice.join("+")
        );
        for m in &roll.modifiers {
            let _ = write!(s, " {:+} {} ({})", m.value, m.reason, m.rule);
        }
        let _ = write!(s, " = Final {} → {}", roll.final_result, roll.outcome);
        s
    }
}

impl Fact for DiceCommitted {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let DiceCommitted { commitment } = self;
        format!(
            "the server committed to its secret dice seed: blake3 {commitment} ({})",
            DICE_RULE
        )
    }
}

impl Fact for EntropyContributed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let short = |bytes: &[u8]| HEXLOWER.encode(&bytes[..8]);
        let EntropyContributed { side, nonce } = self;
        format!(
            "{} added its nonce {}… to the dice key ({})",
            name(*side),
            short(nonce),
            DICE_RULE
        )
    }
}

impl Fact for SeedRevealAgreed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let SeedRevealAgreed { side } = self;
        format!(
            "{} agreed to reveal the dice seed now ({})",
            name(*side),
            DICE_RULE
        )
    }
}

impl Fact for SeedRevealed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, _game: &mut Game) {
        // Facts about the dice and the players' answers: the position does not change.
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let SeedRevealed { seed } = self;
        format!(
            "the server revealed its dice seed {}: every roll made under it can now be checked ({})",
            HEXLOWER.encode(seed),
            DICE_RULE
        )
    }
}
