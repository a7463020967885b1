//! The players' clocks (`crate::timing`, `docs/clock.md`). Each event carries the server's
//! time `at` (milliseconds since the Unix epoch) and what it charged the running clock.

use super::Sides;
use super::{Event, Fact};
use board::scenario::UnitId;

use crate::timing::Timing;
use crate::view::Names;
use crate::Game;
use board::scenario::Side;
use serde::{Deserialize, Serialize};

/// The game is played under a time control: the server's own event, right after
/// `GameCreated`. The side to act's clock starts running at `at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockStarted {
    pub control: board::time_control::TimeControl,
    pub at: u64,
}

/// The side the game waits on changed: `charged` is what the handing side's clock used,
/// `added` what the time control gives it for handing over, and `to` the side whose
/// clock runs now (`None`: the game is over and the clocks stop). The server's own event,
/// in the batch of the command that handed over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockHandedOver {
    pub at: u64,
    pub charged: crate::timing::Charge,
    pub added: u64,
    pub to: Option<Side>,
}

/// `side`'s clock ran out: its bank is empty. Nothing happens by itself: the opponent may
/// claim the game or give time. The server's own event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockExpired {
    pub side: Side,
    pub at: u64,
    pub charged: crate::timing::Charge,
}

/// `by` claimed the game on time: the opponent's clock had run out. The game is over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimedOnTime {
    pub by: Side,
    pub at: u64,
}

/// `by` gave its opponent `to` this much time; a clock that had run out runs again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeGiven {
    pub by: Side,
    pub to: Side,
    pub time: u64,
    pub at: u64,
    pub charged: Option<crate::timing::Charge>,
}

/// `side` paused its clock with its vacation: while on vacation its clock takes from the
/// vacation left before its bank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VacationStarted {
    pub side: Side,
    pub at: u64,
    pub charged: Option<crate::timing::Charge>,
}

/// `side` came back from vacation: its clock takes from its bank again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VacationEnded {
    pub side: Side,
    pub at: u64,
    pub charged: Option<crate::timing::Charge>,
}

impl Fact for ClockStarted {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        if game.viewer.is_none() {
            let running = crate::timing::awaited(game);
            game.timing = Some(Box::new(Timing::started(self.control, running, self.at)));
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let ClockStarted { control, .. } = self;
        format!("the clocks started: {control}")
    }
}

impl Fact for ClockHandedOver {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        if let Some(timing) = clocks(game) {
            timing.charge(self.at, Some(&self.charged));
            let side = self.charged.side as usize;
            timing.bank[side] = timing.bank[side].saturating_add(self.added);
            timing.running = self.to;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let ClockHandedOver {
            charged, added, to, ..
        } = self;
        let used = board::time_control::duration_text(charged.bank + charged.vacation);
        let plus = if *added > 0 {
            format!(", +{} added", board::time_control::duration_text(*added))
        } else {
            String::new()
        };
        match to {
            Some(to) => format!(
                "{} handed over after {used}{plus}; the {}'s clock runs",
                name(charged.side),
                name(*to)
            ),
            None => format!("the clocks stopped; {} used {used}", name(charged.side)),
        }
    }
}

impl Fact for ClockExpired {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        if let Some(timing) = clocks(game) {
            timing.charge(self.at, Some(&self.charged));
            timing.bank[self.side as usize] = 0;
            timing.expired = Some(self.side);
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let ClockExpired { side, .. } = self;
        format!(
            "the {}'s clock ran out; the {} may claim the game or give time",
            name(*side),
            name(side.opponent())
        )
    }
}

impl Fact for ClaimedOnTime {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        game.over = true;
        if let Some(timing) = clocks(game) {
            timing.charge(self.at, None);
            timing.running = None;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let ClaimedOnTime { by, .. } = self;
        format!(
            "{} claimed the game on time; the game is over, won by the {}",
            name(*by),
            name(*by)
        )
    }
}

impl Fact for TimeGiven {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        if let Some(timing) = clocks(game) {
            timing.charge(self.at, self.charged.as_ref());
            timing.bank[self.to as usize] = timing.bank[self.to as usize].saturating_add(self.time);
            if timing.expired == Some(self.to) {
                timing.expired = None;
            }
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let TimeGiven { by, to, time, .. } = self;
        format!(
            "{} gave the {} {}",
            name(*by),
            name(*to),
            board::time_control::duration_text(*time)
        )
    }
}

impl Fact for VacationStarted {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        if let Some(timing) = clocks(game) {
            timing.charge(self.at, self.charged.as_ref());
            timing.on_vacation[self.side as usize] = true;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let VacationStarted { side, .. } = self;
        format!("{} went on vacation", name(*side))
    }
}

impl Fact for VacationEnded {
    fn clock_at(&self) -> Option<u64> {
        Some(self.at)
    }

    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        if let Some(timing) = clocks(game) {
            timing.charge(self.at, self.charged.as_ref());
            timing.on_vacation[self.side as usize] = false;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let VacationEnded { side, .. } = self;
        format!("{} came back from vacation", name(*side))
    }
}

/// The game's clocks, where they are kept: the whole game keeps them, a projection does not.
fn clocks(game: &mut Game) -> Option<&mut Timing> {
    if game.viewer.is_some() {
        return None;
    }
    game.timing.as_deref_mut()
}
