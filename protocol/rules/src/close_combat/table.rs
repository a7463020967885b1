//! The Close Combat Table (A11.11) as data: fourteen odds columns, from "< 1-8" to "> 10-1",
//! and each column's Kill Number. A CC attack's Final DR below the Kill Number eliminates the
//! units attacked, equal to it is a Partial Kill (Casualty Reduction of one of them), above it
//! nothing (A11.11).
//!
//! Our copy of the rulebook holds no chart, so every value rests on two published sources
//! that do not copy each other, checked against one another value by value:
//!
//! - **Source A**, a Python ASL helper on GitHub (its Close Combat resolver, table `CCT`: the
//!   fourteen columns with their lowest ratio and black and red Kill Numbers, read from the
//!   chapter A charts). It is the table below, entered by hand.
//! - **Source B**, a JavaScript ASL Starter Kit game on GitHub (its rules module, object `CCT`
//!   with one Kill Number per column, and `ccOddsColumn`, which picks the column from the two
//!   FP totals). The unit tests write its boundaries and numbers out (`source_b`) and compare
//!   them with every column and with the column this module picks for every pair of totals
//!   from ½ to 40 FP.
//!
//! The two agree on all fourteen black Kill Numbers and on where each column starts. A third,
//! partial source agrees where it speaks: a French players' forum thread reading the 1-1
//! column as 5 (and 7 in red, for Hand-to-Hand only).
//!
//! The rounding rule is A11.11's own (the eASLRB page and aslerb.com's text of it, which agree):
//! the odds are rounded down to the nearest column printed, so in the defender's favour; its
//! examples (12 to 4 is 3-1, 7 to 4 is 3-2, 11 to 2 is 4-1, 4 to 15 is 1-4) are unit tests.
//!
//! What the table does not hold: the red Kill Numbers, used only in Hand-to-Hand CC (J2.31),
//! which the engine does not model (source B has none to check them against); and what FP a
//! unit brings to CC or which DRMs apply, which belong to the resolution of an attack.

use std::fmt;

/// One odds column of the CCT (A11.11), weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CcColumn(usize);

/// Where a column starts, as attack : defence FP; `None` for the first, below 1-8, and the
/// last, above 10-1, which no single ratio starts.
type Start = Option<(u32, u32)>;

/// Each column: the ratio at which it starts, its name as printed, and its black Kill Number.
/// Transcribed from source A; every value checked against source B (module doc).
#[rustfmt::skip]
const COLUMNS: [(Start, &str, u8); 14] = [
    (None,          "<1-8",  0),
    (Some((1, 8)),  "1-8",   1),
    (Some((1, 6)),  "1-6",   2),
    (Some((1, 4)),  "1-4",   3),
    (Some((1, 2)),  "1-2",   4),
    (Some((1, 1)),  "1-1",   5),
    (Some((3, 2)),  "3-2",   6),
    (Some((2, 1)),  "2-1",   7),
    (Some((3, 1)),  "3-1",   8),
    (Some((4, 1)),  "4-1",   9),
    (Some((6, 1)),  "6-1",  10),
    (Some((8, 1)),  "8-1",  11),
    (Some((10, 1)), "10-1", 12),
    (None,          ">10-1", 13),
];

/// The ratio past which the last column, "> 10-1", is read: odds of exactly 10 to 1 are the
/// 10-1 column, anything more the last (both sources).
const ABOVE: u32 = 10;

impl CcColumn {
    /// The column an attack of `attack` FP on units of `defence` FP uses: the highest column
    /// whose ratio the odds reach, rounding down in the defender's favour (A11.11). Both totals
    /// are in halves of a point, since a CC attack's FP may be halved (A11.19, A7.8). `None`
    /// when the defence is nothing: there is no CC attack on no units.
    pub(crate) fn for_odds(attack_halves: u32, defence_halves: u32) -> Option<CcColumn> {
        if defence_halves == 0 {
            return None;
        }
        let (a, d) = (u64::from(attack_halves), u64::from(defence_halves));
        if a > u64::from(ABOVE) * d {
            return Some(CcColumn(COLUMNS.len() - 1));
        }
        // A column starting at num:den is reached when a/d ≥ num/den, i.e. a·den ≥ num·d.
        let reached = COLUMNS.iter().rposition(|(start, _, _)| {
            start.is_some_and(|(num, den)| a * u64::from(den) >= u64::from(num) * d)
        });
        Some(CcColumn(reached.unwrap_or(0)))
    }

    /// The column's black Kill Number (A11.11).
    pub(crate) fn kill_number(self) -> u8 {
        COLUMNS[self.0].2
    }

    /// The column as the chart prints it: `3-2`, `<1-8`.
    pub fn name(self) -> &'static str {
        COLUMNS[self.0].1
    }

    /// The column's place from the left, 0 for "< 1-8".
    pub fn index(self) -> usize {
        self.0
    }

    /// Every column, left to right.
    pub fn all() -> impl Iterator<Item = CcColumn> {
        (0..COLUMNS.len()).map(CcColumn)
    }
}

impl fmt::Display for CcColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a CC attack's Final DR does to the units it attacks (A11.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CcResult {
    /// Below the Kill Number: every unit attacked is eliminated.
    Eliminated,
    /// Equal to the Kill Number: a Partial Kill, one defending unit (by Random Selection)
    /// suffering Casualty Reduction.
    PartialKill,
    /// Above the Kill Number: no effect.
    NoEffect,
}

impl CcResult {
    /// The result of a Final DR of `final_dr` on `column` (A11.11).
    pub fn of(column: CcColumn, final_dr: i16) -> CcResult {
        let kill = i16::from(column.kill_number());
        match final_dr.cmp(&kill) {
            std::cmp::Ordering::Less => CcResult::Eliminated,
            std::cmp::Ordering::Equal => CcResult::PartialKill,
            std::cmp::Ordering::Greater => CcResult::NoEffect,
        }
    }

    /// The result in the record's words.
    pub fn words(self) -> &'static str {
        match self {
            CcResult::Eliminated => "eliminated",
            CcResult::PartialKill => "Partial Kill",
            CcResult::NoEffect => "no effect",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Source B, written out independently of [`COLUMNS`]: its Kill Number for each column
    /// name, and its choice of column from the ratio of the two totals (first match wins,
    /// from the strongest column down; a ratio of exactly 10 is the 10-1 column).
    mod source_b {
        pub(crate) const KILL: [(&str, u8); 14] = [
            ("<1-8", 0),
            ("1-8", 1),
            ("1-6", 2),
            ("1-4", 3),
            ("1-2", 4),
            ("1-1", 5),
            ("3-2", 6),
            ("2-1", 7),
            ("3-1", 8),
            ("4-1", 9),
            ("6-1", 10),
            ("8-1", 11),
            ("10-1", 12),
            (">10-1", 13),
        ];

        pub fn column(attack: f64, defence: f64) -> &'static str {
            let r = attack / defence;
            if r > 10.0 {
                ">10-1"
            } else if r == 10.0 {
                "10-1"
            } else if r >= 8.0 {
                "8-1"
            } else if r >= 6.0 {
                "6-1"
            } else if r >= 4.0 {
                "4-1"
            } else if r >= 3.0 {
                "3-1"
            } else if r >= 2.0 {
                "2-1"
            } else if r >= 1.5 {
                "3-2"
            } else if r >= 1.0 {
                "1-1"
            } else if r >= 0.5 {
                "1-2"
            } else if r >= 0.25 {
                "1-4"
            } else if r >= 1.0 / 6.0 {
                "1-6"
            } else if r >= 0.125 {
                "1-8"
            } else {
                "<1-8"
            }
        }
    }

    fn column(attack: u32, defence: u32) -> &'static str {
        CcColumn::for_odds(attack * 2, defence * 2)
            .expect("a defence")
            .name()
    }

    #[test]
    fn every_kill_number_agrees_with_source_b() {
        let ours: Vec<(&str, u8)> = CcColumn::all()
            .map(|c| (c.name(), c.kill_number()))
            .collect();
        assert_eq!(ours, source_b::KILL.to_vec());
    }

    #[test]
    fn every_column_chosen_agrees_with_source_b() {
        // Every pair of totals from ½ to 40 FP, in halves.
        for a in 1..=80u32 {
            for d in 1..=80u32 {
                let ours = CcColumn::for_odds(a, d).expect("a defence").name();
                let theirs = source_b::column(f64::from(a) / 2.0, f64::from(d) / 2.0);
                assert_eq!(ours, theirs, "{a}/2 FP against {d}/2 FP");
            }
        }
    }

    #[test]
    fn a11_11_examples_round_down() {
        // A11.11: two 6-2-8 squads on a 4-6-7 are 12 to 4; 7 to 4 is 3-2, 11 to 2 is 4-1,
        // 4 to 15 is 1-4.
        assert_eq!(column(12, 4), "3-1");
        assert_eq!(column(7, 4), "3-2");
        assert_eq!(column(11, 2), "4-1");
        assert_eq!(column(4, 15), "1-4");
    }

    #[test]
    fn the_edges_of_the_table() {
        assert_eq!(column(1, 9), "<1-8");
        assert_eq!(column(1, 8), "1-8");
        assert_eq!(column(10, 1), "10-1");
        assert_eq!(column(21, 2), ">10-1");
        assert_eq!(CcColumn::for_odds(4, 0), None);
        // Halves count: 1½ against 1 is 3-2, 2½ against 2 only 1-1.
        assert_eq!(CcColumn::for_odds(3, 2).map(CcColumn::name), Some("3-2"));
        assert_eq!(CcColumn::for_odds(5, 4).map(CcColumn::name), Some("1-1"));
    }

    #[test]
    fn below_equal_above_the_kill_number() {
        let one_to_one = CcColumn::for_odds(8, 8).expect("a defence");
        assert_eq!(one_to_one.kill_number(), 5);
        assert_eq!(CcResult::of(one_to_one, 4), CcResult::Eliminated);
        assert_eq!(CcResult::of(one_to_one, 5), CcResult::PartialKill);
        assert_eq!(CcResult::of(one_to_one, 6), CcResult::NoEffect);
        // The weakest column kills only below 0, with DRMs.
        let weakest = CcColumn::for_odds(1, 20).expect("a defence");
        assert_eq!(CcResult::of(weakest, -1), CcResult::Eliminated);
        assert_eq!(CcResult::of(weakest, 2), CcResult::NoEffect);
    }
}
