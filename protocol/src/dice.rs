//! Dice as the rules see them: a source of die faces handed in from outside.
//!
//! `protocol` never rolls on its own — it has no randomness. The server hands `decide` a source
//! derived from the game's committed seed; tests and `asl check` hand it scripted faces so that
//! every chart row can be reached on purpose. Whatever was rolled is recorded in an event, and
//! replay reads it from there instead of rolling again.

use std::collections::VecDeque;

/// Faces of one six-sided die, 1 to 6.
pub trait DiceSource {
    /// The next die face, or `None` if this source has none to give (a scripted source that ran
    /// out, or a context where no roll is possible).
    fn roll_die(&mut self) -> Option<u8>;
}

/// Faces given in advance, used in order: for tests and offline checking of positions.
#[derive(Clone, Debug, Default)]
pub struct ScriptedDice {
    faces: VecDeque<u8>,
}

impl ScriptedDice {
    /// Faces outside 1–6 are refused, so a test can never roll an impossible die.
    pub fn new(faces: impl IntoIterator<Item = u8>) -> Result<ScriptedDice, u8> {
        let faces: VecDeque<u8> = faces.into_iter().collect();
        if let Some(bad) = faces.iter().find(|f| !(1..=6).contains(*f)) {
            return Err(*bad);
        }
        Ok(ScriptedDice { faces })
    }

    pub fn push(&mut self, face: u8) -> Result<(), u8> {
        if !(1..=6).contains(&face) {
            return Err(face);
        }
        self.faces.push_back(face);
        Ok(())
    }

    pub fn remaining(&self) -> usize {
        self.faces.len()
    }
}

impl DiceSource for ScriptedDice {
    fn roll_die(&mut self) -> Option<u8> {
        self.faces.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_faces_come_in_order_and_run_out() {
        let mut dice = ScriptedDice::new([3, 6]).unwrap();
        assert_eq!(dice.roll_die(), Some(3));
        assert_eq!(dice.roll_die(), Some(6));
        assert_eq!(dice.roll_die(), None);
        assert_eq!(ScriptedDice::new([0]).unwrap_err(), 0);
        assert_eq!(dice.push(7), Err(7));
    }
}
