//! The players' clocks (`docs/clock.md`): each side's bank, whose clock runs and since when,
//! vacation, and a clock that ran out. Not to be confused with [`crate::phase::Clock`],
//! the sequence of play.
//!
//! Time is data here: every clock event carries the moment (`at`, milliseconds since the
//! Unix epoch) the server gave with the command that made it, and what it charged, so replay
//! and `asl verify` reach the clocks live play reached, and a server restarted from the log
//! resumes them where they stood (the time it was down counts against the side whose clock
//! ran). The clock runs for the side the game waits on ([`awaited`]); it is charged only when
//! that side changes (a hand-over, which both sides see), when a clock command is taken, and
//! when it runs out — never in the middle of activity a side may not see.
//!
//! The state lives beside the position in [`Game::timing`], outside its encoding: a game
//! without a clock hashes and encodes exactly as before clocks existed, and projections (what
//! a viewer's copy holds) never carry it; viewers are told the clocks in so many words
//! ([`ClockView`]).

use crate::Game;
use board::scenario::Side;
use board::time_control::{Millis, TimeControl};
use serde::{Deserialize, Serialize};

/// The side the game waits on now: the side a prompt waits for (a lost sewer stack's
/// designation, a WA chance, the HIP moment, a WA challenge, the DEFENDER's CC designation
/// after the ATTACKER's), else the side to act; `None`
/// once the game is over. The order is the order in which `rules::decide` holds play.
/// Answers that do not hold play (accepting an adjudication, an undo) are no hand-over: the
/// side to act goes on meanwhile, so its clock goes on running.
pub fn awaited(game: &Game) -> Option<Side> {
    if game.over {
        return None;
    }
    if let Some(d) = &game.sewer_designation {
        return Some(d.defender);
    }
    if let Some(chance) = &game.wa_chance {
        return Some(chance.side);
    }
    if let Some(window) = &game.wa_hip_window {
        return Some(window.side);
    }
    if let Some(challenge) = &game.wa_challenge {
        return Some(challenge.side);
    }
    // A CC stopped for Infiltration waits on the side it asks (A11.22).
    if let Some(chance) = &game.cc_infiltration {
        return Some(chance.side);
    }
    // The ATTACKER's CC designation waits for the DEFENDER's (A11.12).
    if !game.movement.cc_designated.is_empty() {
        return Some(game.attacker().opponent());
    }
    Some(game.acting())
}

/// What running time took from one side's clock: vacation first while it is on vacation,
/// then its bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Charge {
    pub side: Side,
    pub vacation: Millis,
    pub bank: Millis,
}

/// The clocks of a game with a time control.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Timing {
    pub control: TimeControl,
    /// Each side's bank, as of `since` (by `Side as usize`).
    pub bank: [Millis; 2],
    /// Whose clock runs: the side the game waits on; `None` once the game is over.
    pub running: Option<Side>,
    /// When the running clock was last charged.
    pub since: Millis,
    /// Vacation each side has used.
    pub vacation_used: [Millis; 2],
    /// Whether each side is on vacation: while it is, its running clock takes from its
    /// vacation first.
    pub on_vacation: [bool; 2],
    /// The side whose clock ran out (`ClockExpired`), until it is given time.
    pub expired: Option<Side>,
}

fn at(side: Side) -> usize {
    side as usize
}

impl Timing {
    pub fn started(control: TimeControl, running: Option<Side>, since: Millis) -> Timing {
        Timing {
            control,
            bank: [control.starting_bank(); 2],
            running,
            since,
            vacation_used: [0; 2],
            on_vacation: [false; 2],
            expired: None,
        }
    }

    pub fn bank(&self, side: Side) -> Millis {
        self.bank[at(side)]
    }

    pub fn on_vacation(&self, side: Side) -> bool {
        self.on_vacation[at(side)]
    }

    /// Vacation `side` has left, as of `since`.
    pub fn vacation_left(&self, side: Side) -> Millis {
        self.control
            .vacation()
            .saturating_sub(self.vacation_used[at(side)])
    }

    /// What the running clock has used from `since` to `now`; `None` when no clock runs. A
    /// bank is never charged below zero, and a moment before `since` charges nothing.
    pub fn charge_at(&self, now: Millis) -> Option<Charge> {
        let side = self.running?;
        let elapsed = now.saturating_sub(self.since);
        let vacation = if self.on_vacation(side) {
            elapsed.min(self.vacation_left(side))
        } else {
            0
        };
        Some(Charge {
            side,
            vacation,
            bank: (elapsed - vacation).min(self.bank(side)),
        })
    }

    /// `side`'s bank at `now`.
    pub fn bank_at(&self, side: Side, now: Millis) -> Millis {
        match self.charge_at(now) {
            Some(c) if c.side == side => self.bank(side) - c.bank,
            _ => self.bank(side),
        }
    }

    /// `side`'s vacation left at `now`.
    pub fn vacation_left_at(&self, side: Side, now: Millis) -> Millis {
        match self.charge_at(now) {
            Some(c) if c.side == side => self.vacation_left(side) - c.vacation,
            _ => self.vacation_left(side),
        }
    }

    /// When the running clock runs out, if nothing is handed over before: its vacation (if on
    /// vacation) and its bank from `since`. `None` if no clock runs or one has run out already.
    pub fn deadline(&self) -> Option<Millis> {
        if self.expired.is_some() {
            return None;
        }
        let side = self.running?;
        let vacation = if self.on_vacation(side) {
            self.vacation_left(side)
        } else {
            0
        };
        Some(self.since + vacation + self.bank(side))
    }

    /// The side whose clock has run out by `now`, recorded or not.
    pub fn out_of_time(&self, now: Millis) -> Option<Side> {
        self.expired.or_else(|| self.ran_out_at(now))
    }

    /// The side whose clock has run out by `now` without it being recorded yet.
    pub fn ran_out_at(&self, now: Millis) -> Option<Side> {
        let deadline = self.deadline()?;
        (now >= deadline).then(|| self.running.expect("a deadline has a running clock"))
    }

    /// Takes a charge (the running clock's use up to `now`) and starts counting from `now`.
    pub(crate) fn charge(&mut self, now: Millis, charged: Option<&Charge>) {
        if let Some(c) = charged {
            self.vacation_used[at(c.side)] =
                self.vacation_used[at(c.side)].saturating_add(c.vacation);
            self.bank[at(c.side)] = self.bank[at(c.side)].saturating_sub(c.bank);
        }
        self.since = self.since.max(now);
    }

    /// The clocks as every viewer may know them at `now`: both banks, whose clock runs,
    /// vacation and expiry. Nothing in it is secret: it changes only at moments both sides
    /// see.
    pub fn view(&self, now: Millis) -> ClockView {
        let now = now.max(self.since);
        ClockView {
            control: self.control.to_string(),
            at: now,
            running: self.running,
            bank: Side::BOTH.map(|s| self.bank_at(s, now)),
            vacation_left: Side::BOTH.map(|s| self.vacation_left_at(s, now)),
            on_vacation: self.on_vacation,
            expired: self.expired,
        }
    }
}

/// The clocks as a viewer is told them (in `joined` and `state`): the server's time `at`
/// and each side's bank then; the running one goes down from there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockView {
    /// The time control, as written (`live:30m+30s`).
    pub control: String,
    /// The server's time this view was taken, in milliseconds since the Unix epoch.
    pub at: Millis,
    pub running: Option<Side>,
    /// Each side's bank at `at`, in milliseconds (side A first).
    pub bank: [Millis; 2],
    pub vacation_left: [Millis; 2],
    pub on_vacation: [bool; 2],
    pub expired: Option<Side>,
}
