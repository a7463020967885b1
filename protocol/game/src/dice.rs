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

/// Die faces derived from a key: the n-th draw of a game is a fixed function of the key and n,
/// so whoever later learns the key can re-derive every roll in the log, and nobody without it
/// can foresee one. The server keys it from the game's committed seed (see `docs/dice.md`).
#[derive(Clone, Debug)]
pub struct SeededDice {
    key: [u8; 32],
    next: u64,
}

impl SeededDice {
    /// `next` is the number of dice the game has drawn so far (`Game::dice_drawn`).
    pub fn new(key: [u8; 32], next: u64) -> SeededDice {
        SeededDice { key, next }
    }
}

impl DiceSource for SeededDice {
    fn roll_die(&mut self) -> Option<u8> {
        let face = derive_die(&self.key, self.next);
        self.next += 1;
        Some(face)
    }
}

/// The face of draw `n` under `key`: blake3 in keyed mode over the draw number, mapped to 1–6
/// without bias by rejecting the bytes above the largest multiple of six.
pub fn derive_die(key: &[u8; 32], n: u64) -> u8 {
    let mut hasher = blake3::Hasher::new_keyed(key);
    hasher.update(&n.to_le_bytes());
    let mut stream = hasher.finalize_xof();
    loop {
        let mut byte = [0u8; 1];
        stream.fill(&mut byte);
        if byte[0] < 252 {
            return byte[0] % 6 + 1;
        }
    }
}

/// What a roll was for; dice statistics are kept per purpose.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RollPurpose {
    /// The leader's 4TC that lets units without sewer capability enter a sewer (B8.4).
    SewerLeaderTaskCheck,
    /// Whether a sewer stack gets lost before moving (B8.41).
    SewerLost,
    /// The Sewer Emergence Chart at the end of the MPh (B8.42).
    SewerEmergence,
    // Rolled on request (`roll`): the engine records them, players apply the tables.
    /// An Infantry Fire Table attack (A7).
    Ift,
    /// A Morale Check (A10).
    MoraleCheck,
    /// A Normal Morale Check (A10).
    NormalMoraleCheck,
    /// A Pin Task Check (A7.8).
    PinTaskCheck,
    /// A Task Check of another kind (A10).
    TaskCheck,
    /// A Rally attempt (A10.6).
    Rally,
    /// A Close Combat resolution (A11).
    CloseCombat,
    /// An ordnance To Hit roll (C3).
    ToHit,
    /// A sniper dr (A14).
    Sniper,
    /// A Random Selection (A.9).
    RandomSelection,
    /// Anything else, said in the roll's note.
    Other,
    /// The repair dr of a malfunctioned support weapon (A9.72).
    Repair,
    /// The Wound Severity dr of a wounded SMC (A17.11).
    WoundSeverity,
    /// The NMC of a routing unit Interdicted as it enters Open Ground (A10.53).
    Interdiction,
    /// The Recovery dr of an unpossessed support weapon, in the RPh or the MPh (A4.44).
    Recovery,
}

impl RollPurpose {
    /// The purposes a player may roll for with `roll`, by the word a script uses.
    pub const ON_REQUEST: [(&'static str, RollPurpose, &'static str); 11] = [
        ("IFT", RollPurpose::Ift, "A7"),
        ("MC", RollPurpose::MoraleCheck, "A10"),
        ("NMC", RollPurpose::NormalMoraleCheck, "A10"),
        ("PTC", RollPurpose::PinTaskCheck, "A7.8"),
        ("TC", RollPurpose::TaskCheck, "A10"),
        ("rally", RollPurpose::Rally, "A10.6"),
        ("CC", RollPurpose::CloseCombat, "A11"),
        ("TH", RollPurpose::ToHit, "C3"),
        ("sniper", RollPurpose::Sniper, "A14"),
        ("random-selection", RollPurpose::RandomSelection, "A.9"),
        ("other", RollPurpose::Other, "the note"),
    ];

    /// The script word and rule of a purpose one may roll for; `None` for the engine's own.
    pub fn on_request(self) -> Option<(&'static str, &'static str)> {
        RollPurpose::ON_REQUEST
            .iter()
            .find(|(_, p, _)| *p == self)
            .map(|(word, _, rule)| (*word, *rule))
    }
}

impl RollPurpose {
    /// The purpose in players' words, with its rule.
    pub fn describe(self) -> &'static str {
        match self {
            RollPurpose::SewerLeaderTaskCheck => "leader's 4TC to enter a sewer (B8.4)",
            RollPurpose::SewerLost => "sewer stack lost? (B8.41)",
            RollPurpose::SewerEmergence => "Sewer Emergence (B8.42)",
            RollPurpose::Ift => "IFT (A7)",
            RollPurpose::MoraleCheck => "MC (A10)",
            RollPurpose::NormalMoraleCheck => "NMC (A10)",
            RollPurpose::PinTaskCheck => "PTC (A7.8)",
            RollPurpose::TaskCheck => "TC (A10)",
            RollPurpose::Rally => "Rally (A10.6)",
            RollPurpose::CloseCombat => "CC (A11)",
            RollPurpose::ToHit => "To Hit (C3)",
            RollPurpose::Sniper => "sniper (A14)",
            RollPurpose::RandomSelection => "Random Selection (A.9)",
            RollPurpose::Other => "other",
            RollPurpose::Repair => "repair (A9.72)",
            RollPurpose::WoundSeverity => "Wound Severity (A17.11)",
            RollPurpose::Interdiction => "Interdiction NMC (A10.53)",
            RollPurpose::Recovery => "Recovery (A4.44)",
        }
    }
}

/// One modifier to a roll, with its reason.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Modifier {
    pub value: i8,
    pub reason: String,
    pub rule: String,
}

/// The DRMs of a roll as a fire log prints them after the DR: " +1 −1" (a minus sign, not a
/// hyphen), nothing for none.
pub fn signed_drms(modifiers: &[Modifier]) -> String {
    modifiers
        .iter()
        .map(|m| {
            if m.value < 0 {
                format!(" −{}", -m.value)
            } else {
                format!(" +{}", m.value)
            }
        })
        .collect()
}

/// A roll as the log keeps it: purpose, rule, the raw dice (and which draws of the game they
/// were), each modifier with its reason, the Final result and what it meant.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Roll {
    pub side: board::scenario::Side,
    pub purpose: RollPurpose,
    pub rule: String,
    /// The game's draw number of the first die (its `dice_drawn` before the roll).
    pub first_draw: u64,
    pub dice: Vec<u8>,
    pub modifiers: Vec<Modifier>,
    pub final_result: i16,
    pub outcome: String,
}

impl Roll {
    pub fn raw(&self) -> i16 {
        self.dice.iter().map(|d| i16::from(*d)).sum()
    }
}

/// The server's secret for one epoch of a game's dice.
pub type Seed = [u8; 32];

/// A side's contribution to the dice.
pub type Nonce = [u8; 32];

/// The published hash of a seed: `blake3(seed)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Commitment(pub [u8; 32]);

impl Commitment {
    /// The commitment to `seed`.
    pub fn to(seed: &Seed) -> Commitment {
        Commitment(*blake3::hash(seed).as_bytes())
    }
}

crate::digest_text!(Commitment);

#[cfg(test)]
mod derivation_tests {
    use super::*;

    #[test]
    fn derived_faces_are_fair_and_fixed_by_key_and_draw() {
        let key = [7u8; 32];
        let mut counts = [0u32; 6];
        for n in 0..6_000 {
            let f = derive_die(&key, n);
            assert!((1..=6).contains(&f));
            counts[usize::from(f - 1)] += 1;
        }
        // Each face within 15% of its expected 1,000 draws.
        assert!(
            counts.iter().all(|c| (850..=1150).contains(c)),
            "{counts:?}"
        );
        assert_eq!(derive_die(&key, 42), derive_die(&key, 42));
        let other: Vec<u8> = (0..32).map(|n| derive_die(&[8u8; 32], n)).collect();
        let mine: Vec<u8> = (0..32).map(|n| derive_die(&key, n)).collect();
        assert_ne!(other, mine);
        let mut seeded = SeededDice::new(key, 10);
        assert_eq!(seeded.roll_die(), Some(derive_die(&key, 10)));
        assert_eq!(seeded.roll_die(), Some(derive_die(&key, 11)));
    }
}
