//! The Infantry Fire Table (A7.3) as data: eleven FP columns, a row per Final DR from "≤ 0" to
//! 15, and in each cell the result an attack on that column gets with that DR.
//!
//! Our copy of the rulebook holds none of the charts, so every cell rests on two published
//! sources that do not copy each other, checked against one another cell by cell:
//!
//! - **Source A**, a full transcription of the chart (all 176 cells, rows ≤ 0 to 15) in a
//!   freely published JavaScript ASL dice roller on GitHub (its table named `iftResults`,
//!   columns 1 to 36 FP, rows 0 to 15). It is the table below, entered by hand.
//! - **Source B**, a published player aid for learning the IFT by heart
//!   (<https://www.nct9.ne.jp/aokigaryou2/replay/ASL/0IFT.html>). It gives the chart as a rule
//!   rather than a grid: the 8 column's morale results by DR, a DR shift per column, the DR of
//!   each column's K result and its number, and one more KIA per point of DR below it.
//!   The unit tests write that rule out (`source_b`); a test compares it with every cell of the table.
//!
//! The two agree on all 176 cells. A third, partial transcription (a Ruby dice helper on
//! GitHub, rows ≤ 0 to 9) agrees too except on the DR 3 row, which it lists with thirteen
//! entries for eleven columns — a typing slip in that row, not a reading of the chart; A and B
//! agree there.
//!
//! What the table does not hold: which column a total of FP uses is [`IftColumn::for_fp`]
//! (the highest column not above the total, A7.3); modifying FP (A7.2x) and the DR (TEM,
//! leaders, hindrances) and Cowering belong to the resolution of an attack, not to the table.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The FP at the head of each column, left to right (A7.3).
pub const COLUMNS: [u8; 11] = [1, 2, 4, 6, 8, 12, 16, 20, 24, 30, 36];

/// The highest Final DR with a row of its own; any higher DR reads the row below it as no
/// effect (no column has a result past DR 15). The lowest row stands for every DR ≤ 0.
pub(crate) const DR_ROW_MAX: i16 = 15;

/// One column of the IFT, by the FP at its head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct IftColumn(u8);

impl IftColumn {
    /// The column headed by exactly `fp`, if there is one.
    pub fn exactly(fp: u8) -> Option<IftColumn> {
        COLUMNS.contains(&fp).then_some(IftColumn(fp))
    }

    /// The column an attack of `fp` whole FP uses: the highest not above it (A7.3). FP
    /// fractions (A7.2) change nothing here, since every column is a whole number: a caller
    /// passes the total with its fraction dropped. `None` below 1 FP, which is off the table.
    pub fn for_fp(fp: u32) -> Option<IftColumn> {
        COLUMNS
            .iter()
            .rev()
            .find(|&&c| u32::from(c) <= fp)
            .map(|&c| IftColumn(c))
    }

    /// The FP at the head of this column.
    pub fn fp(self) -> u8 {
        self.0
    }

    fn index(self) -> usize {
        COLUMNS
            .iter()
            .position(|&c| c == self.0)
            .expect("an IftColumn is always one of COLUMNS")
    }

    /// The column `n` places to the left, or `None` when that falls off the table's left edge
    /// (a column shift toward weaker fire, as Cowering asks for, A7.9).
    pub fn left(self, n: usize) -> Option<IftColumn> {
        self.index().checked_sub(n).map(|i| IftColumn(COLUMNS[i]))
    }
}

/// A stored or sent column that is not one of the chart's (A7.3): hostile input, refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0} heads no IFT column; the columns are {COLUMNS:?}")]
pub struct NoSuchColumn(pub u8);

impl TryFrom<u8> for IftColumn {
    type Error = NoSuchColumn;
    fn try_from(fp: u8) -> Result<Self, NoSuchColumn> {
        IftColumn::exactly(fp).ok_or(NoSuchColumn(fp))
    }
}

impl From<IftColumn> for u8 {
    fn from(c: IftColumn) -> u8 {
        c.0
    }
}

impl fmt::Display for IftColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A cell of the IFT (A7.3), weakest first so that `Ord` is the order of severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IftResult {
    /// No effect on the target.
    NoEffect,
    /// Pin Task Check (A7.8).
    Ptc,
    /// Normal Morale Check, with no DRM of its own (A7.3).
    Nmc,
    /// Morale Check with a DRM of +n, n from 1 to 4 (A7.3).
    Mc(u8),
    /// Casualty Reduction of one unit by Random Selection, then an MC of +n for the rest,
    /// n from 1 to 4 (A7.302).
    K(u8),
    /// n units eliminated by Random Selection, the rest breaking; n from 1 to 7 (A7.301).
    Kia(u8),
}

impl IftResult {
    /// Reads a result as the chart prints it: `1KIA`, `K/2`, `3MC`, `NMC`, `PTC`, and `NE` or
    /// `-` for no effect.
    pub fn parse(word: &str) -> Option<IftResult> {
        let n = |s: &str, max: u8| s.parse::<u8>().ok().filter(|n| (1..=max).contains(n));
        Some(match word {
            "NE" | "-" => IftResult::NoEffect,
            "PTC" => IftResult::Ptc,
            "NMC" => IftResult::Nmc,
            w => {
                if let Some(k) = w.strip_prefix("K/") {
                    IftResult::K(n(k, 4)?)
                } else if let Some(kia) = w.strip_suffix("KIA") {
                    IftResult::Kia(n(kia, 7)?)
                } else if let Some(mc) = w.strip_suffix("MC") {
                    IftResult::Mc(n(mc, 4)?)
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for IftResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IftResult::NoEffect => write!(f, "NE"),
            IftResult::Ptc => write!(f, "PTC"),
            IftResult::Nmc => write!(f, "NMC"),
            IftResult::Mc(n) => write!(f, "{n}MC"),
            IftResult::K(n) => write!(f, "K/{n}"),
            IftResult::Kia(n) => write!(f, "{n}KIA"),
        }
    }
}

use IftResult::{Kia, Mc, Nmc, NoEffect as N, Ptc, K};

/// The chart itself, one row per Final DR from ≤ 0 (row 0) to 15, one entry per column of
/// [`COLUMNS`]. Transcribed from source A; every cell checked against source B (module doc).
#[rustfmt::skip]
const TABLE: [[IftResult; 11]; 16] = [
    //     1        2        4        6        8        12       16       20       24       30       36
    /* ≤0 */ [Kia(1), Kia(2), Kia(2), Kia(3), Kia(3), Kia(3), Kia(4), Kia(4), Kia(5), Kia(6), Kia(7)],
    /*  1 */ [K(1),   Kia(1), Kia(1), Kia(2), Kia(2), Kia(2), Kia(3), Kia(3), Kia(4), Kia(5), Kia(6)],
    /*  2 */ [Mc(1),  K(1),   K(2),   Kia(1), Kia(1), Kia(1), Kia(2), Kia(2), Kia(3), Kia(4), Kia(5)],
    /*  3 */ [Mc(1),  Mc(1),  Mc(2),  K(2),   K(2),   K(3),   Kia(1), Kia(1), Kia(2), Kia(3), Kia(4)],
    /*  4 */ [Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2),  Mc(3),  K(3),   K(4),   Kia(1), Kia(2), Kia(3)],
    /*  5 */ [Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2),  Mc(3),  Mc(4),  K(4),   Kia(1), Kia(2)],
    /*  6 */ [N,      Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2),  Mc(3),  Mc(4),  K(4),   Kia(1)],
    /*  7 */ [N,      N,      Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2),  Mc(3),  Mc(4),  K(4)],
    /*  8 */ [N,      N,      N,      Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2),  Mc(3),  Mc(4)],
    /*  9 */ [N,      N,      N,      N,      Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2),  Mc(3)],
    /* 10 */ [N,      N,      N,      N,      N,      Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2),  Mc(2)],
    /* 11 */ [N,      N,      N,      N,      N,      N,      Ptc,    Nmc,    Mc(1),  Mc(1),  Mc(2)],
    /* 12 */ [N,      N,      N,      N,      N,      N,      N,      Ptc,    Nmc,    Mc(1),  Mc(1)],
    /* 13 */ [N,      N,      N,      N,      N,      N,      N,      N,      Ptc,    Nmc,    Mc(1)],
    /* 14 */ [N,      N,      N,      N,      N,      N,      N,      N,      N,      Ptc,    Nmc],
    /* 15 */ [N,      N,      N,      N,      N,      N,      N,      N,      N,      N,      Ptc],
];

/// The result of an attack on `column` with a Final DR of `final_dr` (A7.3): any DR ≤ 0 reads
/// the top row, any DR above 15 is no effect.
pub fn result(column: IftColumn, final_dr: i16) -> IftResult {
    if final_dr > DR_ROW_MAX {
        return IftResult::NoEffect;
    }
    let row = usize::try_from(final_dr.max(0)).expect("clamped to 0..=15");
    TABLE[row][column.index()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Source B's rule for the chart, written out independently of [`TABLE`]: on the 8 column
    /// DR 2 to 9 read 4MC, 3MC, 2MC, 2MC, 1MC, 1MC, NMC, PTC; every other column reads the 8
    /// column at its DR plus a shift (+4 at 1 FP down to −6 at 36 FP); each column has one DR
    /// giving a K result, a K/1 to K/4 by FP, and each point of DR below it one more KIA.
    pub(super) fn source_b(fp: u8, final_dr: i16) -> IftResult {
        let (shift, k_dr, k_n): (i16, i16, u8) = match fp {
            1 => (4, 1, 1),
            2 => (3, 2, 1),
            4 => (2, 2, 2),
            6 => (1, 3, 2),
            8 => (0, 3, 2),
            12 => (-1, 3, 3),
            16 => (-2, 4, 3),
            20 => (-3, 4, 4),
            24 => (-4, 5, 4),
            30 => (-5, 6, 4),
            36 => (-6, 7, 4),
            _ => panic!("{fp} heads no column"),
        };
        let dr = final_dr.max(0);
        if dr == k_dr {
            return IftResult::K(k_n);
        }
        if dr < k_dr {
            return IftResult::Kia(u8::try_from(k_dr - dr).unwrap());
        }
        match dr + shift {
            2 => IftResult::Mc(4),
            3 => IftResult::Mc(3),
            4 | 5 => IftResult::Mc(2),
            6 | 7 => IftResult::Mc(1),
            8 => IftResult::Nmc,
            9 => IftResult::Ptc,
            s if s > 9 => IftResult::NoEffect,
            s => panic!("source B leaves DR {dr} at {fp} FP (shifted {s}) unread"),
        }
    }

    #[test]
    fn every_cell_agrees_with_source_b() {
        let mut checked = 0;
        for (row, cells) in TABLE.iter().enumerate() {
            for (i, cell) in cells.iter().enumerate() {
                let dr = i16::try_from(row).unwrap();
                assert_eq!(
                    *cell,
                    source_b(COLUMNS[i], dr),
                    "DR {dr}, {} FP",
                    COLUMNS[i]
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 176);
    }

    #[test]
    fn the_table_has_eleven_columns_rising_and_sixteen_rows() {
        assert_eq!(TABLE.len(), 16);
        assert!(COLUMNS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(IftColumn::exactly(3), None);
        assert_eq!(IftColumn::exactly(36).map(IftColumn::fp), Some(36));
    }

    /// A higher DR is never worse for the target, more FP never better (A7.3's chart is
    /// ordered so); a break in either order would be a slip in the transcription.
    #[test]
    fn results_weaken_down_each_column_and_strengthen_along_each_row() {
        for row in 0..16 {
            for i in 0..11 {
                if row > 0 {
                    assert!(TABLE[row][i] <= TABLE[row - 1][i], "DR {row}, column {i}");
                }
                if i > 0 {
                    assert!(TABLE[row][i] >= TABLE[row][i - 1], "DR {row}, column {i}");
                }
            }
        }
    }

    #[test]
    fn every_result_the_chart_prints_appears() {
        let mut seen: Vec<IftResult> = TABLE.iter().flatten().copied().collect();
        seen.sort();
        seen.dedup();
        let mut want = vec![IftResult::NoEffect, IftResult::Ptc, IftResult::Nmc];
        want.extend((1..=4).map(IftResult::Mc));
        want.extend((1..=4).map(IftResult::K));
        want.extend((1..=7).map(IftResult::Kia));
        want.sort();
        assert_eq!(seen, want);
    }

    #[test]
    fn drs_off_the_rows_read_the_edge() {
        let c36 = IftColumn::exactly(36).unwrap();
        assert_eq!(result(c36, -4), IftResult::Kia(7));
        assert_eq!(result(c36, 0), IftResult::Kia(7));
        assert_eq!(result(c36, 15), IftResult::Ptc);
        assert_eq!(result(c36, 16), IftResult::NoEffect);
    }

    #[test]
    fn columns_for_fp_and_shifts() {
        assert_eq!(IftColumn::for_fp(0), None);
        assert_eq!(IftColumn::for_fp(1).map(IftColumn::fp), Some(1));
        assert_eq!(IftColumn::for_fp(3).map(IftColumn::fp), Some(2));
        assert_eq!(IftColumn::for_fp(7).map(IftColumn::fp), Some(6));
        assert_eq!(IftColumn::for_fp(35).map(IftColumn::fp), Some(30));
        assert_eq!(IftColumn::for_fp(500).map(IftColumn::fp), Some(36));
        let c2 = IftColumn::exactly(2).unwrap();
        assert_eq!(c2.left(1).map(IftColumn::fp), Some(1));
        assert_eq!(c2.left(2), None);
    }

    #[test]
    fn results_read_back_as_printed() {
        for r in TABLE.iter().flatten() {
            assert_eq!(IftResult::parse(&r.to_string()), Some(*r));
        }
        for bad in ["0KIA", "8KIA", "K/5", "K/0", "5MC", "MC", "KIA", "k/1", ""] {
            assert_eq!(IftResult::parse(bad), None, "{bad}");
        }
        assert_eq!(IftResult::parse("-"), Some(IftResult::NoEffect));
    }

    proptest! {
        /// Any attack, whatever its FP and Final DR, gets source B's entry for the column its
        /// FP falls in (the highest at or below it) and that DR.
        #[test]
        fn any_fp_and_dr_reads_source_bs_cell(fp in 1u32..200, dr in -12i16..30) {
            let column = IftColumn::for_fp(fp).unwrap();
            prop_assert!(u32::from(column.fp()) <= fp);
            prop_assert!(COLUMNS.iter().all(|&c| u32::from(c) <= u32::from(column.fp()) || u32::from(c) > fp));
            prop_assert_eq!(result(column, dr), source_b(column.fp(), dr));
        }
    }
}
