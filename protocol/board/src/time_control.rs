//! Time controls: how much time each side has, chosen when a game is created (a scenario's
//! `[clock]` table, `asl new --clock`). The rules of the clock itself live in
//! `game::timing` and `rules::clock`; this is only what a game is created with, and its one
//! written form (`docs/clock.md`):
//!
//! - `live:30m+30s` — a bank of 30 minutes, 30 seconds added at each hand-over;
//! - `correspondence:12h/5d` — 12 hours added at each hand-over, up to at most 5 days in the
//!   bank (which is also where each side starts), optionally `,vacation=10d`: days each side
//!   may pause its clock over the game.
//!
//! Durations are whole numbers with a unit, `s`, `m`, `h` or `d`, concatenated (`1h30m`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Milliseconds: every duration of the clock, and every moment (since the Unix epoch).
pub type Millis = u64;

const SECOND: Millis = 1000;
const MINUTE: Millis = 60 * SECOND;
const HOUR: Millis = 60 * MINUTE;
const DAY: Millis = 24 * HOUR;

/// Longest duration a time control may name (a bank, an increment, a cap, vacation days):
/// 90 days. Longer would be a game no one is playing; the bound keeps every sum of them far
/// from overflow.
pub const CLOCK_DURATION_MAX: Millis = 90 * DAY;

/// Shortest live bank: 1 minute. Less could run out between a command and its answer.
pub const LIVE_BANK_MIN: Millis = MINUTE;

/// Shortest time a correspondence hand-over adds: 1 hour.
pub const CORRESPONDENCE_STEP_MIN: Millis = HOUR;

/// Longest time control text read, in bytes.
pub const TIME_CONTROL_BYTES_MAX: usize = 80;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeControl {
    /// Each side starts with `bank`; each hand-over adds `increment` to the side that handed
    /// over.
    Live { bank: Millis, increment: Millis },
    /// Each side starts with `cap`; each hand-over adds `per_hand_over` to the side that handed
    /// over, up to `cap`. Each side may pause its clock for `vacation` over the game.
    Correspondence {
        per_hand_over: Millis,
        cap: Millis,
        vacation: Millis,
    },
}

/// Why a time control or a duration was not read: what is wrong with the text, in words for
/// whoever wrote it (a scenario's `[clock]`, `asl new --clock`). Durations are carried as
/// written back (`duration_text`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeControlError {
    #[error("a time control is at most {TIME_CONTROL_BYTES_MAX} bytes")]
    TooLong,
    #[error("`{0}`: after the comma only `vacation=DURATION` may follow")]
    AfterComma(String),
    #[error("`{0}`: a correspondence control is STEP/CAP, e.g. `12h/5d`")]
    NoCap(String),
    #[error("`{0}` is no time control: write `live:30m+30s` or `correspondence:12h/5d` (with `,vacation=10d` if wanted)")]
    NoControl(String),
    #[error("{what} {given} is over the limit of {limit} (CLOCK_DURATION_MAX)")]
    OverLimit {
        what: &'static str,
        given: String,
        limit: String,
    },
    #[error("a live bank of {bank} is under the least of {least} (LIVE_BANK_MIN)")]
    BankUnderLeast { bank: String, least: String },
    #[error("{step} per hand-over is under the least of {least} (CORRESPONDENCE_STEP_MIN)")]
    StepUnderLeast { step: String, least: String },
    #[error("the cap {cap} is less than the {step} a hand-over adds")]
    CapUnderStep { cap: String, step: String },
    #[error("a duration is missing: write e.g. `30m`, `12h` or `5d`")]
    DurationMissing,
    #[error("`{0}`: too many digits")]
    TooManyDigits(String),
    #[error("`{text}`: `{unit}` is no unit; durations are written with s, m, h or d (`1h30m`)")]
    NoSuchUnit { text: String, unit: char },
    #[error("`{text}`: a number must come before `{unit}`")]
    NumberMissing { text: String, unit: char },
    #[error("`{text}`: `{digits}` has no unit; write s, m, h or d after it")]
    UnitMissing { text: String, digits: String },
}

impl TimeControl {
    /// Reads `live:BANK+INC` or `correspondence:STEP/CAP[,vacation=DAYS]`.
    pub fn parse(text: &str) -> Result<TimeControl, TimeControlError> {
        if text.len() > TIME_CONTROL_BYTES_MAX {
            return Err(TimeControlError::TooLong);
        }
        let text = text.trim();
        let control = if let Some(rest) = text.strip_prefix("live:") {
            let (bank, increment) = match rest.split_once('+') {
                Some((bank, inc)) => (parse_duration(bank)?, parse_duration(inc)?),
                None => (parse_duration(rest)?, 0),
            };
            TimeControl::Live { bank, increment }
        } else if let Some(rest) = text.strip_prefix("correspondence:") {
            let (main, vacation) = match rest.split_once(',') {
                Some((main, extra)) => {
                    let days = extra
                        .trim()
                        .strip_prefix("vacation=")
                        .ok_or_else(|| TimeControlError::AfterComma(extra.to_string()))?;
                    (main, parse_duration(days)?)
                }
                None => (rest, 0),
            };
            let (step, cap) = main
                .split_once('/')
                .ok_or_else(|| TimeControlError::NoCap(main.to_string()))?;
            TimeControl::Correspondence {
                per_hand_over: parse_duration(step)?,
                cap: parse_duration(cap)?,
                vacation,
            }
        } else {
            return Err(TimeControlError::NoControl(text.to_string()));
        };
        control.check()?;
        Ok(control)
    }

    /// The bounds every control keeps, each named.
    fn check(&self) -> Result<(), TimeControlError> {
        let over = |what: &'static str, d: Millis| {
            (d > CLOCK_DURATION_MAX).then(|| TimeControlError::OverLimit {
                what,
                given: duration_text(d),
                limit: duration_text(CLOCK_DURATION_MAX),
            })
        };
        let fault = match *self {
            TimeControl::Live { bank, increment } => over("the bank", bank)
                .or_else(|| over("the increment", increment))
                .or_else(|| {
                    (bank < LIVE_BANK_MIN).then(|| TimeControlError::BankUnderLeast {
                        bank: duration_text(bank),
                        least: duration_text(LIVE_BANK_MIN),
                    })
                }),
            TimeControl::Correspondence {
                per_hand_over,
                cap,
                vacation,
            } => over("the time per hand-over", per_hand_over)
                .or_else(|| over("the cap", cap))
                .or_else(|| over("the vacation", vacation))
                .or_else(|| {
                    (per_hand_over < CORRESPONDENCE_STEP_MIN).then(|| {
                        TimeControlError::StepUnderLeast {
                            step: duration_text(per_hand_over),
                            least: duration_text(CORRESPONDENCE_STEP_MIN),
                        }
                    })
                })
                .or_else(|| {
                    (cap < per_hand_over).then(|| TimeControlError::CapUnderStep {
                        cap: duration_text(cap),
                        step: duration_text(per_hand_over),
                    })
                }),
        };
        fault.map_or(Ok(()), Err)
    }

    /// What each side's bank holds when the game starts.
    pub fn starting_bank(&self) -> Millis {
        match *self {
            TimeControl::Live { bank, .. } => bank,
            TimeControl::Correspondence { cap, .. } => cap,
        }
    }

    /// Vacation each side may take over the game.
    pub fn vacation(&self) -> Millis {
        match *self {
            TimeControl::Live { .. } => 0,
            TimeControl::Correspondence { vacation, .. } => vacation,
        }
    }

    /// What a hand-over adds to a bank that holds `bank` once charged.
    pub fn added_at_hand_over(&self, bank: Millis) -> Millis {
        match *self {
            TimeControl::Live { increment, .. } => increment,
            TimeControl::Correspondence {
                per_hand_over, cap, ..
            } => per_hand_over.min(cap.saturating_sub(bank)),
        }
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimeControl::Live { bank, increment } => write!(
                f,
                "live:{}+{}",
                duration_text(bank),
                duration_text(increment)
            ),
            TimeControl::Correspondence {
                per_hand_over,
                cap,
                vacation,
            } => {
                write!(
                    f,
                    "correspondence:{}/{}",
                    duration_text(per_hand_over),
                    duration_text(cap)
                )?;
                if vacation > 0 {
                    write!(f, ",vacation={}", duration_text(vacation))?;
                }
                Ok(())
            }
        }
    }
}

/// Reads `30s`, `5m`, `12h`, `10d` or a run of them (`1h30m`).
pub fn parse_duration(text: &str) -> Result<Millis, TimeControlError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(TimeControlError::DurationMissing);
    }
    let mut total: Millis = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            if digits.len() > 9 {
                return Err(TimeControlError::TooManyDigits(text.to_string()));
            }
            continue;
        }
        let unit = match c {
            's' => SECOND,
            'm' => MINUTE,
            'h' => HOUR,
            'd' => DAY,
            _ => {
                return Err(TimeControlError::NoSuchUnit {
                    text: text.to_string(),
                    unit: c,
                })
            }
        };
        let n: Millis = digits
            .parse()
            .map_err(|_| TimeControlError::NumberMissing {
                text: text.to_string(),
                unit: c,
            })?;
        digits.clear();
        total = total.saturating_add(n.saturating_mul(unit));
    }
    if !digits.is_empty() {
        return Err(TimeControlError::UnitMissing {
            text: text.to_string(),
            digits,
        });
    }
    Ok(total)
}

/// A duration the way [`parse_duration`] reads it, largest units first (`1d2h`, `0s`);
/// milliseconds below a second are left out.
pub fn duration_text(ms: Millis) -> String {
    let mut left = ms / SECOND;
    if left == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    for (unit, name) in [(DAY, 'd'), (HOUR, 'h'), (MINUTE, 'm'), (SECOND, 's')] {
        let unit = unit / SECOND;
        if left >= unit {
            out.push_str(&format!("{}{name}", left / unit));
            left %= unit;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_controls_read_and_write_back() {
        for text in [
            "live:30m+30s",
            "live:1h30m+0s",
            "correspondence:12h/5d",
            "correspondence:12h/5d,vacation=10d",
        ] {
            let control = TimeControl::parse(text).unwrap();
            assert_eq!(control.to_string(), text);
            assert_eq!(TimeControl::parse(&control.to_string()).unwrap(), control);
        }
        assert_eq!(
            TimeControl::parse("live:30m").unwrap(),
            TimeControl::Live {
                bank: 30 * MINUTE,
                increment: 0
            }
        );
        assert_eq!(
            TimeControl::parse("correspondence:12h/5d,vacation=10d").unwrap(),
            TimeControl::Correspondence {
                per_hand_over: 12 * HOUR,
                cap: 5 * DAY,
                vacation: 10 * DAY
            }
        );
    }

    #[test]
    fn bad_controls_are_refused_naming_the_fault() {
        for (text, says) in [
            ("blitz:3m", "no time control"),
            ("live:30x", "no unit"),
            ("live:30", "has no unit"),
            ("live:10s", "LIVE_BANK_MIN"),
            ("live:91d", "CLOCK_DURATION_MAX"),
            ("correspondence:12h", "STEP/CAP"),
            ("correspondence:5d/12h", "less than"),
            ("correspondence:10m/5d", "CORRESPONDENCE_STEP_MIN"),
            ("correspondence:12h/5d,holiday=3d", "vacation="),
            ("correspondence:12h/5d,vacation=100d", "CLOCK_DURATION_MAX"),
            ("live:9999999999d", "too many digits"),
        ] {
            let err = TimeControl::parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn a_correspondence_hand_over_adds_up_to_the_cap() {
        let c = TimeControl::parse("correspondence:12h/5d").unwrap();
        assert_eq!(c.added_at_hand_over(DAY), 12 * HOUR);
        assert_eq!(c.added_at_hand_over(5 * DAY - HOUR), HOUR);
        assert_eq!(c.added_at_hand_over(5 * DAY), 0);
        let l = TimeControl::parse("live:30m+30s").unwrap();
        assert_eq!(l.added_at_hand_over(100 * DAY), 30 * SECOND);
    }
}

#[cfg(test)]
mod scenario_tests {
    use super::*;
    use crate::scenario::Scenario;

    const SCENARIO: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");

    #[test]
    fn a_scenario_chooses_its_clock_in_a_clock_table() {
        assert_eq!(Scenario::time_control_in(SCENARIO).unwrap(), None);
        let timed = format!(
            "{SCENARIO}\n[clock]\ncontrol = \"correspondence:12h/5d\"\nvacation = \"10d\"\n"
        );
        assert_eq!(
            Scenario::time_control_in(&timed).unwrap(),
            Some(TimeControl::parse("correspondence:12h/5d,vacation=10d").unwrap())
        );
        // The scenario itself is the same with or without its clock.
        assert_eq!(
            Scenario::read_toml(&timed).unwrap(),
            Scenario::read_toml(SCENARIO).unwrap()
        );
        let bad = format!("{SCENARIO}\n[clock]\ncontrol = \"live:5s\"\n");
        let err = Scenario::read_toml(&bad).unwrap_err();
        assert_eq!(err.field, "clock.control");
        assert!(err.reason.contains("LIVE_BANK_MIN"), "{err}");
        assert!(err.at.is_some(), "the error points into the file");
        let live_vacation =
            format!("{SCENARIO}\n[clock]\ncontrol = \"live:30m+30s\"\nvacation = \"2d\"\n");
        let err = Scenario::time_control_in(&live_vacation).unwrap_err();
        assert!(err.reason.contains("correspondence play"), "{err}");
    }

    #[test]
    fn a_clock_given_for_a_game_replaces_the_scenario_files() {
        let live = TimeControl::parse("live:30m+30s").unwrap();
        let plain = Scenario::with_time_control(SCENARIO, &live).unwrap();
        assert_eq!(Scenario::time_control_in(&plain).unwrap(), Some(live));
        assert_eq!(
            Scenario::read_toml(&plain).unwrap(),
            Scenario::read_toml(SCENARIO).unwrap()
        );
        let timed = format!(
            "{SCENARIO}\n[clock]\ncontrol = \"correspondence:12h/5d\"\nvacation = \"10d\"\n"
        );
        let replaced = Scenario::with_time_control(&timed, &live).unwrap();
        assert_eq!(Scenario::time_control_in(&replaced).unwrap(), Some(live));
        assert_eq!(
            Scenario::read_toml(&replaced).unwrap(),
            Scenario::read_toml(SCENARIO).unwrap()
        );
    }
}
