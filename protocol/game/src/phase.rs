//! The sequence of play: Game Turns of two Player Turns, each of eight phases (A3.1–A3.8),
//! split into the steps where one side's input is awaited.
//!
//! The sequence is a table, not code: each step says which phase it belongs to, who acts
//! (ATTACKER or DEFENDER) and which rule governs it. `Done` moves the clock one row down.

use board::scenario::Side;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Phase {
    Rally,
    PrepFire,
    Movement,
    DefensiveFire,
    AdvancingFire,
    Rout,
    Advance,
    CloseCombat,
}

impl Phase {
    /// The abbreviation players use (RPh, PFPh, MPh …).
    pub fn abbreviation(self) -> &'static str {
        match self {
            Phase::Rally => "RPh",
            Phase::PrepFire => "PFPh",
            Phase::Movement => "MPh",
            Phase::DefensiveFire => "DFPh",
            Phase::AdvancingFire => "AFPh",
            Phase::Rout => "RtPh",
            Phase::Advance => "APh",
            Phase::CloseCombat => "CCPh",
        }
    }

    /// The Chapter A rule that defines the phase.
    pub fn rule(self) -> &'static str {
        match self {
            Phase::Rally => "A3.1",
            Phase::PrepFire => "A3.2",
            Phase::Movement => "A3.3",
            Phase::DefensiveFire => "A3.4",
            Phase::AdvancingFire => "A3.5",
            Phase::Rout => "A3.6",
            Phase::Advance => "A3.7",
            Phase::CloseCombat => "A3.8",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.abbreviation())
    }
}

/// ATTACKER is the phasing player of the current Player Turn; DEFENDER the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    Attacker,
    Defender,
}

/// One row of the sequence: a phase, or a part of it where a different side acts.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub phase: Phase,
    pub acting: Role,
    pub rule: &'static str,
    pub name: &'static str,
}

const fn step(phase: Phase, acting: Role, rule: &'static str, name: &'static str) -> Step {
    Step {
        phase,
        acting,
        rule,
        name,
    }
}

/// The steps of one Player Turn. The end of the RPh (ASOP step 1.32B) is where both sides may
/// claim Wall Advantage, ATTACKER first (B9.322), so it is two steps of its own. In the RtPh the
/// ATTACKER's broken units rout before the DEFENDER's.
pub const STEPS: &[Step] = &[
    step(Phase::Rally, Role::Attacker, "A3.1", "RPh"),
    step(
        Phase::Rally,
        Role::Attacker,
        "B9.322",
        "end of RPh (1.32B), ATTACKER",
    ),
    step(
        Phase::Rally,
        Role::Defender,
        "B9.322",
        "end of RPh (1.32B), DEFENDER",
    ),
    step(Phase::PrepFire, Role::Attacker, "A3.2", "PFPh"),
    step(Phase::Movement, Role::Attacker, "A3.3", "MPh"),
    step(Phase::DefensiveFire, Role::Defender, "A3.4", "DFPh"),
    step(Phase::AdvancingFire, Role::Attacker, "A3.5", "AFPh"),
    step(Phase::Rout, Role::Attacker, "A3.6", "RtPh, ATTACKER"),
    step(Phase::Rout, Role::Defender, "A3.6", "RtPh, DEFENDER"),
    step(Phase::Advance, Role::Attacker, "A3.7", "APh"),
    step(Phase::CloseCombat, Role::Attacker, "A3.8", "CCPh"),
];

/// Where the game stands in the sequence of play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Clock {
    /// Game Turn, from 1.
    pub turn: u16,
    /// 1 or 2: the first or second Player Turn of the Game Turn.
    pub player_turn: u8,
    /// Index into [`STEPS`].
    pub step: u8,
}

impl Clock {
    pub const START: Clock = Clock {
        turn: 1,
        player_turn: 1,
        step: 0,
    };

    pub fn step(self) -> &'static Step {
        &STEPS[usize::from(self.step)]
    }

    pub fn phase(self) -> Phase {
        self.step().phase
    }

    /// The ATTACKER of this Player Turn, given which side moves first each Game Turn.
    pub fn attacker(self, first: Side) -> Side {
        if self.player_turn == 1 {
            first
        } else {
            first.opponent()
        }
    }

    /// The side whose input the current step awaits.
    pub fn acting(self, first: Side) -> Side {
        match self.step().acting {
            Role::Attacker => self.attacker(first),
            Role::Defender => self.attacker(first).opponent(),
        }
    }

    /// The clock after this step ends, or `None` when it was the last step of the last turn.
    pub fn next(self, turns: u16) -> Option<Clock> {
        if usize::from(self.step) + 1 < STEPS.len() {
            return Some(Clock {
                step: self.step + 1,
                ..self
            });
        }
        if self.player_turn == 1 {
            return Some(Clock {
                turn: self.turn,
                player_turn: 2,
                step: 0,
            });
        }
        (self.turn < turns).then_some(Clock {
            turn: self.turn + 1,
            player_turn: 1,
            step: 0,
        })
    }
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "turn {} player turn {} {}",
            self.turn,
            self.player_turn,
            self.step().name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_turn_runs_both_player_turns_in_order() {
        let mut clock = Clock::START;
        let mut seen = vec![];
        while let Some(next) = clock.next(1) {
            seen.push((clock.player_turn, clock.phase(), clock.acting(Side::A)));
            clock = next;
        }
        seen.push((clock.player_turn, clock.phase(), clock.acting(Side::A)));
        assert_eq!(seen.len(), 2 * STEPS.len());
        // First Player Turn: A is ATTACKER and moves; B fires in the DFPh.
        assert!(seen.contains(&(1, Phase::Movement, Side::A)));
        assert!(seen.contains(&(1, Phase::DefensiveFire, Side::B)));
        // Second Player Turn: roles swap.
        assert!(seen.contains(&(2, Phase::Movement, Side::B)));
        assert!(seen.contains(&(2, Phase::DefensiveFire, Side::A)));
        // The phases come in ASOP order within each Player Turn.
        let phases: Vec<Phase> = seen.iter().take(STEPS.len()).map(|s| s.1).collect();
        let mut sorted = phases.clone();
        sorted.sort();
        assert_eq!(phases, sorted);
    }

    /// B9.322: at the end of the RPh the ATTACKER claims first, then the DEFENDER.
    #[test]
    fn end_of_rph_attacker_first() {
        assert_eq!(STEPS[1].acting, Role::Attacker);
        assert_eq!(STEPS[2].acting, Role::Defender);
        assert!(STEPS[1..3]
            .iter()
            .all(|s| s.phase == Phase::Rally && s.rule == "B9.322"));
    }

    #[test]
    fn last_step_of_last_turn_ends_the_game() {
        let last = Clock {
            turn: 2,
            player_turn: 2,
            step: (STEPS.len() - 1) as u8,
        };
        assert_eq!(last.next(2), None);
        assert_eq!(
            last.next(3),
            Some(Clock {
                turn: 3,
                player_turn: 1,
                step: 0
            })
        );
    }
}
