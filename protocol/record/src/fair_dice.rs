//! Dice both players can verify (the scheme and its threat model: `docs/dice.md`).
//!
//! The server picks a secret seed per game and publishes its hash, the commitment, before
//! anyone contributes; each side may add a random nonce of its own. Every die is then
//! `derive_die(key, n)` ([`game::dice::derive_die`]) for the game's n-th draw, where the key
//! comes from the seed and the contributions logged so far ([`roll_key`]). Nobody without the
//! seed can compute a die before it is logged; once the seed is revealed (when the game ends,
//! or when both sides agree) anyone can re-derive every roll from the log.
//!
//! A [`Ledger`] follows a log's dice events and checks them: the server keeps one to know the
//! key, a verifier to re-derive every roll once the seed is out. Nothing here is random: the
//! seed and the nonces arrive from outside, like everything else the rules use.

use board::scenario::{Scenario, Side};
use game::dice::{derive_die, RollPurpose};
/// The dice scheme's values that events and commands carry live with the logged dice, in the
/// game layer; they are named here too, where the scheme is.
pub use game::dice::{Commitment, Nonce, Seed};
use game::event::Event;
use game::event::{DiceCommitted, DiceRolled, EntropyContributed, SeedRevealAgreed, SeedRevealed};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The context string that separates dice keys from every other use of blake3's key derivation.
pub(crate) const KEY_CONTEXT: &str = "asl-server 2025-01 dice key v1";

/// Most dice epochs one game may have: every reveal by agreement opens a new one with a fresh
/// seed the server must keep. Far more than any game needs; it bounds what two players who
/// agree to reveal again and again can make the server store.
pub(crate) const EPOCHS_MAX: usize = 64;

/// The key dice are derived from: blake3's key derivation over the seed and, for each side in
/// order, a byte saying whether it contributed and its nonce (zeros if not).
pub fn roll_key(seed: &Seed, contributions: &[Option<Nonce>; 2]) -> [u8; 32] {
    let mut material = Vec::with_capacity(32 + 2 * 33);
    material.extend_from_slice(seed);
    for c in contributions {
        material.push(u8::from(c.is_some()));
        material.extend_from_slice(&c.unwrap_or([0; 32]));
    }
    blake3::derive_key(KEY_CONTEXT, &material)
}

/// Whether the scenario's own rules roll dice as the engine models them: only the sewer rules
/// do (B8.4 4TC, B8.41 lost dr, B8.42 Sewer Emergence). Any game may roll with `roll`, and its
/// first roll brings the commitment; a client uses this to contribute its nonce on joining
/// where the rules themselves roll, and keeps other logs free of it until someone rolls.
pub fn may_roll(scenario: &Scenario) -> bool {
    scenario.ssr.sewers_usable
}

fn side_index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

/// A roll as the ledger keeps it until the seed that checks it is revealed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedRoll {
    /// The `DiceRolled` event's sequence.
    pub seq: u64,
    /// The contributions in effect when it was rolled.
    pub contributions: [Option<Nonce>; 2],
    pub first_draw: u64,
    pub dice: Vec<u8>,
}

/// One seed's time: from its commitment to its reveal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Epoch {
    pub commitment: Commitment,
    /// The `DiceCommitted` event's sequence.
    pub committed_at: u64,
    pub contributions: [Option<Nonce>; 2],
    /// Which sides have agreed to reveal the seed now.
    pub agreed: [bool; 2],
    pub rolls: Vec<LoggedRoll>,
    /// Set by `SeedRevealed`, once every roll of the epoch has been checked against it.
    pub seed: Option<Seed>,
}

/// Why a log's dice cannot be trusted, naming the event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("event {seq}: {why}")]
pub struct LedgerError {
    pub seq: u64,
    pub why: String,
}

/// The dice events of a log, followed in order and checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    epochs: Vec<Epoch>,
}

impl Ledger {
    pub fn epochs(&self) -> &[Epoch] {
        &self.epochs
    }

    /// The epoch whose seed is still secret, if one has been committed to.
    pub fn open(&self) -> Option<&Epoch> {
        self.epochs.last().filter(|e| e.seed.is_none())
    }

    /// The contributions in effect now (none before the first commitment).
    pub fn contributions(&self) -> [Option<Nonce>; 2] {
        self.open().map_or([None, None], |e| e.contributions)
    }

    /// The key the next roll is derived from, given the open epoch's seed.
    pub fn key(&self, seed: &Seed) -> [u8; 32] {
        roll_key(seed, &self.contributions())
    }

    /// Rolls checked against a revealed seed, and rolls whose seed is still secret.
    pub fn rolls(&self) -> (usize, usize) {
        let count = |revealed: bool| {
            self.epochs
                .iter()
                .filter(|e| e.seed.is_some() == revealed)
                .map(|e| e.rolls.len())
                .sum()
        };
        (count(true), count(false))
    }

    /// Follows one event; an event that breaks the scheme is refused with the reason, and the
    /// ledger is then left as it was.
    pub fn observe(&mut self, seq: u64, event: &Event) -> Result<(), LedgerError> {
        let err = |seq: u64, why: String| LedgerError { seq, why };
        let open = self.epochs.last_mut().filter(|e| e.seed.is_none());
        match event {
            Event::DiceCommitted(DiceCommitted { commitment }) => {
                if let Some(e) = open {
                    return Err(err(
                        seq,
                        format!(
                            "a second dice commitment while the seed committed to at event {} is still secret",
                            e.committed_at
                        ),
                    ));
                }
                if self.epochs.len() >= EPOCHS_MAX {
                    return Err(err(
                        seq,
                        format!("more than {EPOCHS_MAX} dice commitments in one game"),
                    ));
                }
                self.epochs.push(Epoch {
                    commitment: *commitment,
                    committed_at: seq,
                    contributions: [None, None],
                    agreed: [false, false],
                    rolls: vec![],
                    seed: None,
                });
            }
            Event::EntropyContributed(EntropyContributed { side, nonce }) => {
                let e = open.ok_or_else(|| {
                    err(seq, "a contribution to the dice before any commitment: the seed could have been chosen knowing it".into())
                })?;
                let slot = &mut e.contributions[side_index(*side)];
                if slot.is_some() {
                    return Err(err(
                        seq,
                        format!(
                            "a second contribution from side {side:?} under the commitment of event {}",
                            e.committed_at
                        ),
                    ));
                }
                *slot = Some(*nonce);
            }
            Event::SeedRevealAgreed(SeedRevealAgreed { side }) => {
                let e = open.ok_or_else(|| {
                    err(
                        seq,
                        "an agreement to reveal a seed nobody committed to".into(),
                    )
                })?;
                e.agreed[side_index(*side)] = true;
            }
            Event::DiceRolled(DiceRolled { roll }) => {
                let e = open.ok_or_else(|| {
                    err(
                        seq,
                        "a roll with no secret seed committed to: nobody could check it".into(),
                    )
                })?;
                e.rolls.push(LoggedRoll {
                    seq,
                    contributions: e.contributions,
                    first_draw: roll.first_draw,
                    dice: roll.dice.clone(),
                });
            }
            Event::SeedRevealed(SeedRevealed { seed }) => {
                let e = open.ok_or_else(|| {
                    err(
                        seq,
                        "a seed revealed with none committed to and secret".into(),
                    )
                })?;
                if Commitment::to(seed) != e.commitment {
                    return Err(err(
                        seq,
                        format!(
                            "the revealed seed does not hash to the commitment of event {} ({})",
                            e.committed_at, e.commitment
                        ),
                    ));
                }
                for roll in &e.rolls {
                    let key = roll_key(seed, &roll.contributions);
                    for (i, face) in roll.dice.iter().enumerate() {
                        let derived = derive_die(&key, roll.first_draw + i as u64);
                        if derived != *face {
                            return Err(err(
                                roll.seq,
                                format!(
                                    "die {} of the roll (draw {}) is {face}, but the revealed seed gives {derived}",
                                    i + 1,
                                    roll.first_draw + i as u64
                                ),
                            ));
                        }
                    }
                }
                e.seed = Some(*seed);
            }
            _ => {}
        }
        Ok(())
    }
}

/// Counts of one kind of roll: how many, their raw total and how often each raw total came.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub rolls: u32,
    pub total: u32,
    /// Raw result → how many times.
    pub results: BTreeMap<u8, u32>,
}

impl Tally {
    fn add(&mut self, raw: u8) {
        self.rolls += 1;
        self.total += u32::from(raw);
        *self.results.entry(raw).or_default() += 1;
    }

    pub fn average(&self) -> Option<f64> {
        (self.rolls > 0).then(|| f64::from(self.total) / f64::from(self.rolls))
    }
}

/// One side's dice, the way VASL's dice bot reports them: every die face, dr and DR apart,
/// and each purpose.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideDice {
    /// How often each face (1–6) came up, over every die rolled.
    pub faces: [u32; 6],
    /// Single-die rolls (dr).
    pub dr: Tally,
    /// Two-dice rolls (DR), by raw total 2–12.
    pub two_dice: Tally,
    /// Raw results per purpose.
    pub purposes: BTreeMap<RollPurpose, Tally>,
}

/// Dice statistics per side and per purpose, from the `DiceRolled` events of a log.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiceStats {
    pub sides: [SideDice; 2],
}

impl DiceStats {
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> DiceStats {
        let mut stats = DiceStats::default();
        for event in events {
            if let Event::DiceRolled(DiceRolled { roll }) = event {
                let side = &mut stats.sides[side_index(roll.side)];
                for face in &roll.dice {
                    if (1..=6).contains(face) {
                        side.faces[usize::from(face - 1)] += 1;
                    }
                }
                let raw = roll.dice.iter().map(|d| u32::from(*d)).sum::<u32>();
                let raw = u8::try_from(raw).unwrap_or(u8::MAX);
                match roll.dice.len() {
                    1 => side.dr.add(raw),
                    2 => side.two_dice.add(raw),
                    _ => {}
                }
                side.purposes.entry(roll.purpose).or_default().add(raw);
            }
        }
        stats
    }

    /// The report `asl verify` and `asl replay --stats` print, side by side names.
    pub fn render(&self, names: [&str; 2]) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        for (side, name) in self.sides.iter().zip(names) {
            let total: u32 = side.faces.iter().sum();
            let _ = writeln!(s, "{name}: {total} dice");
            if total == 0 {
                continue;
            }
            let faces: Vec<String> = side
                .faces
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{}:{n}", i + 1))
                .collect();
            let _ = writeln!(s, "  faces  {}", faces.join("  "));
            for (label, tally) in [("dr", &side.dr), ("DR", &side.two_dice)] {
                if let Some(avg) = tally.average() {
                    let results: Vec<String> = tally
                        .results
                        .iter()
                        .map(|(r, n)| format!("{r}:{n}"))
                        .collect();
                    let _ = writeln!(
                        s,
                        "  {label:<5}  {} rolls, average {avg:.2}  ({})",
                        tally.rolls,
                        results.join("  ")
                    );
                }
            }
            for (purpose, tally) in &side.purposes {
                let _ = writeln!(
                    s,
                    "  {}: {} rolls, average {:.2}",
                    purpose.describe(),
                    tally.rolls,
                    tally.average().unwrap_or_default()
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use game::dice::DiceSource;
    use game::dice::{Roll, SeededDice};
    use game::event::{DiceCommitted, DiceRolled, EntropyContributed, SeedRevealed};

    fn roll(side: Side, first_draw: u64, dice: Vec<u8>) -> Event {
        Event::DiceRolled(DiceRolled {
            roll: Roll {
                side,
                purpose: RollPurpose::SewerLost,
                rule: "B8.41".into(),
                first_draw,
                modifiers: vec![],
                final_result: dice.iter().map(|d| i16::from(*d)).sum(),
                dice,
                outcome: String::new(),
            },
        })
    }

    /// Rolls as a server makes them: from the key of the seed and the contributions so far.
    fn rolled(ledger: &Ledger, seed: &Seed, first_draw: u64, count: usize) -> Vec<u8> {
        let mut dice = SeededDice::new(ledger.key(seed), first_draw);
        (0..count).map(|_| dice.roll_die().unwrap()).collect()
    }

    #[test]
    fn the_revealed_seed_checks_every_roll_under_the_contributions_of_its_moment() {
        let seed = [3u8; 32];
        let mut ledger = Ledger::default();
        let mut log = vec![Event::DiceCommitted(DiceCommitted {
            commitment: Commitment::to(&seed),
        })];
        ledger.observe(1, &log[0]).unwrap();
        // A roll before any contribution, then one after each side contributed.
        let first = rolled(&ledger, &seed, 0, 2);
        log.push(roll(Side::A, 0, first));
        ledger.observe(2, &log[1]).unwrap();
        for (seq, side, nonce) in [(3, Side::A, [1u8; 32]), (4, Side::B, [2u8; 32])] {
            let e = Event::EntropyContributed(EntropyContributed { side, nonce });
            ledger.observe(seq, &e).unwrap();
            log.push(e);
        }
        let second = rolled(&ledger, &seed, 2, 1);
        let e = roll(Side::B, 2, second);
        ledger.observe(5, &e).unwrap();
        log.push(e);
        assert_eq!(ledger.rolls(), (0, 2));

        let mut checked = ledger.clone();
        checked
            .observe(6, &Event::SeedRevealed(SeedRevealed { seed }))
            .unwrap();
        assert_eq!(checked.rolls(), (2, 0));
        assert!(checked.open().is_none());

        // The same log with one die changed fails on that roll, naming it.
        let mut forged = Ledger::default();
        for (i, e) in log.iter().enumerate() {
            let e = match (i, e) {
                (4, Event::DiceRolled(DiceRolled { roll: r })) => {
                    let mut dice = r.dice.clone();
                    dice[0] = dice[0] % 6 + 1;
                    roll(Side::B, 2, dice)
                }
                _ => e.clone(),
            };
            forged.observe(i as u64 + 1, &e).unwrap();
        }
        let err = forged
            .observe(6, &Event::SeedRevealed(SeedRevealed { seed }))
            .unwrap_err();
        assert_eq!(err.seq, 5, "{err}");

        // A seed that does not hash to the commitment is refused.
        let err = ledger
            .observe(6, &Event::SeedRevealed(SeedRevealed { seed: [4; 32] }))
            .unwrap_err();
        assert!(err.why.contains("does not hash"), "{err}");
    }

    #[test]
    fn the_scheme_is_refused_when_broken() {
        let c = Event::DiceCommitted(DiceCommitted {
            commitment: Commitment::to(&[0; 32]),
        });
        let nonce = Event::EntropyContributed(EntropyContributed {
            side: Side::A,
            nonce: [1; 32],
        });
        let mut ledger = Ledger::default();
        assert!(ledger.observe(1, &nonce).is_err(), "before a commitment");
        assert!(ledger.observe(1, &roll(Side::A, 0, vec![3])).is_err());
        ledger.observe(1, &c).unwrap();
        assert!(ledger.observe(2, &c).is_err(), "two open commitments");
        ledger.observe(2, &nonce).unwrap();
        assert!(ledger.observe(3, &nonce).is_err(), "a second contribution");
    }

    #[test]
    fn keys_depend_on_every_input() {
        let seed = [5u8; 32];
        let none = roll_key(&seed, &[None, None]);
        assert_ne!(none, roll_key(&[6u8; 32], &[None, None]));
        assert_ne!(none, roll_key(&seed, &[Some([0; 32]), None]));
        assert_ne!(
            roll_key(&seed, &[Some([1; 32]), None]),
            roll_key(&seed, &[None, Some([1; 32])])
        );
        assert_eq!(Commitment::to(&seed).0, *blake3::hash(&seed).as_bytes());
    }

    #[test]
    fn statistics_per_side_and_purpose() {
        let events = [
            roll(Side::A, 0, vec![1, 6]),
            roll(Side::A, 2, vec![4]),
            roll(Side::B, 3, vec![6, 6]),
        ];
        let stats = DiceStats::of(&events);
        assert_eq!(stats.sides[0].faces, [1, 0, 0, 1, 0, 1]);
        assert_eq!(stats.sides[0].two_dice.rolls, 1);
        assert_eq!(stats.sides[0].dr.average(), Some(4.0));
        assert_eq!(stats.sides[1].two_dice.results[&12], 1);
        assert_eq!(stats.sides[0].purposes[&RollPurpose::SewerLost].rolls, 2);
        let text = stats.render(["German", "Russian"]);
        assert!(text.contains("German: 3 dice"), "{text}");
        assert!(
            text.contains("DR     1 rolls, average 12.00  (12:1)"),
            "{text}"
        );
    }
}
