//! Which half-squad a squad is reduced to (A7.302), by nationality, as data.
//!
//! A half-squad's FP, range and morale are printed on its own counter: no rule derives them
//! from the squad's (a German 4-6-7 leaves a 2-4-7, a 5-4-8 a 2-3-8, a Russian 6-2-8 a 3-2-8).
//! So the engine knows a squad's half-squad only from a listing of the counters. Our copy of
//! the rulebook holds none (chapter H is not in it), and every pair below rests on two
//! published sources that agree on it:
//!
//! - **Source A**, VASL's module (`dist/buildFile` of github.com/michalxo/vasl): each squad's
//!   piece carries its ELR replacements (A19.13) and their half-squads as two layers stepped
//!   together by the ELR key, level for level — the 4-6-8 Esq's 4-6-8, 4-6-7, 4-4-7, 4-3-6
//!   beside 2-4-8, 2-4-7, 2-3-7, 2-3-6. The VASL import reads a piece's own pair the same way
//!   (`asl-vasl-save`, `half_squad_of`).
//! - **Source B**, a JavaScript ASL Starter Kit game on GitHub (the [SK] of
//!   `docs/rules-coverage.md`): its unit templates name each squad's `halfSquad`, and give that
//!   half-squad its own FP, range and morale.
//!
//! The unit tests write both sources out as they list them and check that this table is
//! exactly the pairs they both give, and that they never disagree. Source B lists the German,
//! Russian and American counters of the Starter Kits only, so those are the table's; a squad
//! of another nationality, or one neither lists, is given its half-squad by the scenario
//! (`half_squad` on the unit), which wins over the table.

/// The nationalities the table knows, as a scenario's side names them (`nationality`).
pub const NATIONALITIES: &[&str] = &["german", "russian", "american"];

/// Nationality, squad and the half-squad it is reduced to, by their ratings (FP-range-morale).
pub const HALF_SQUADS: &[(&str, &str, &str)] = &[
    ("german", "4-6-8", "2-4-8"),
    ("german", "5-4-8", "2-3-8"),
    ("german", "4-6-7", "2-4-7"),
    ("german", "4-4-7", "2-3-7"),
    ("german", "4-3-6", "2-3-6"),
    ("russian", "4-5-8", "2-4-8"),
    ("russian", "6-2-8", "3-2-8"),
    ("russian", "4-4-7", "2-3-7"),
    ("russian", "5-2-7", "2-2-7"),
    ("russian", "4-2-6", "2-2-6"),
    ("american", "6-6-7", "3-4-7"),
    ("american", "5-3-6", "2-2-6"),
];

/// The half-squad a squad of `nationality` rated `squad` is reduced to, if the table knows it.
pub fn half_squad(nationality: &str, squad: &str) -> Option<&'static str> {
    HALF_SQUADS
        .iter()
        .find(|(n, s, _)| *n == nationality && *s == squad)
        .map(|(_, _, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Source A as VASL's module defines it: a squad piece's layer of its ratings and the
    /// layer of its half-squads, both stepped by its ELR key, level for level (the piece
    /// images' names, `ge/ge468S` … beside `ge/ge248H` …, read as ratings). Every such pair
    /// of layers of the German, Russian and American squads.
    const SOURCE_A: &[(&str, &[&str], &[&str])] = &[
        (
            "german",
            &["4-6-8", "4-6-7", "4-4-7", "4-3-6"],
            &["2-4-8", "2-4-7", "2-3-7", "2-3-6"],
        ),
        (
            "german",
            &["5-4-8", "4-4-7", "4-3-6"],
            &["2-3-8", "2-3-7", "2-3-6"],
        ),
        (
            "russian",
            &["6-2-8", "5-2-7", "4-2-6"],
            &["3-2-8", "2-2-7", "2-2-6"],
        ),
        (
            "russian",
            &["4-5-8", "4-4-7", "4-2-6"],
            &["2-4-8", "2-3-7", "2-2-6"],
        ),
        (
            "american",
            &["6-6-7", "6-6-6", "5-4-6", "5-3-6"],
            &["3-4-7", "3-4-6", "2-3-6", "2-2-6"],
        ),
        ("american", &["4-4-7", "3-3-6"], &["2-3-7", "1-2-6"]),
    ];

    /// Source B as the Starter Kit game's templates give it: squad, then its `halfSquad`.
    const SOURCE_B: &[(&str, &str, &str)] = &[
        ("german", "4-6-8", "2-4-8"),
        ("german", "5-4-8", "2-3-8"),
        ("german", "4-6-7", "2-4-7"),
        ("german", "4-4-7", "2-3-7"),
        ("german", "4-3-6", "2-3-6"),
        ("russian", "4-5-8", "2-4-8"),
        ("russian", "6-2-8", "3-2-8"),
        ("russian", "4-4-7", "2-3-7"),
        ("russian", "5-2-7", "2-2-7"),
        ("russian", "4-2-6", "2-2-6"),
        ("american", "6-6-7", "3-4-7"),
        ("american", "5-3-6", "2-2-6"),
    ];

    fn source_a() -> BTreeMap<(&'static str, &'static str), &'static str> {
        let mut pairs = BTreeMap::new();
        for (nationality, squads, halves) in SOURCE_A {
            assert_eq!(squads.len(), halves.len(), "layers step level for level");
            for (squad, half) in squads.iter().zip(halves.iter()) {
                let before = pairs.insert((*nationality, *squad), *half);
                assert!(
                    before.is_none_or(|b| b == *half),
                    "source A disagrees with itself on the {nationality} {squad}"
                );
            }
        }
        pairs
    }

    /// The table is exactly the pairs both sources give, and where both name a squad they
    /// name the same half-squad.
    #[test]
    fn every_pair_rests_on_both_sources() {
        let a = source_a();
        let mut both = BTreeMap::new();
        for (nationality, squad, half) in SOURCE_B {
            if let Some(other) = a.get(&(*nationality, *squad)) {
                assert_eq!(
                    other, half,
                    "the sources disagree on the {nationality} {squad}"
                );
                both.insert((*nationality, *squad), *half);
            }
        }
        let table: BTreeMap<_, _> = HALF_SQUADS.iter().map(|(n, s, h)| ((*n, *s), *h)).collect();
        assert_eq!(table.len(), HALF_SQUADS.len(), "a squad is listed once");
        assert_eq!(table, both);
    }

    /// What the table says reads as ratings, for nationalities it declares: a half-squad has
    /// the morale of its squad in both sources, and never more FP.
    #[test]
    fn the_table_reads_as_ratings() {
        let figures = |r: &str| -> Vec<u8> { r.split('-').map(|f| f.parse().unwrap()).collect() };
        for (nationality, squad, half) in HALF_SQUADS {
            assert!(NATIONALITIES.contains(nationality), "{nationality}");
            let (s, h) = (figures(squad), figures(half));
            assert_eq!((s.len(), h.len()), (3, 3));
            assert_eq!(s[2], h[2], "{nationality} {squad}: same morale");
            assert!(h[0] < s[0], "{nationality} {squad}: fewer FP");
        }
    }

    #[test]
    fn a_squad_is_looked_up_by_nationality_and_ratings() {
        assert_eq!(half_squad("german", "4-6-7"), Some("2-4-7"));
        assert_eq!(half_squad("russian", "4-4-7"), Some("2-3-7"));
        assert_eq!(half_squad("american", "6-6-7"), Some("3-4-7"));
        assert_eq!(
            half_squad("russian", "4-6-7"),
            None,
            "not a Russian counter"
        );
        assert_eq!(half_squad("finnish", "6-4-8"), None, "not in the table");
    }
}
