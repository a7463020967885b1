//! Fire by the rules (A7): the Infantry Fire Table as data (`ift`). The table is the one fact
//! of fire every later step reads — the column a total of FP falls in and the result a Final
//! DR gives there — so it stands alone, citing its rule and the sources each cell was checked
//! against, before anything resolves an attack with it.

pub(crate) mod direction;
pub mod ift;
pub(crate) mod mandatory;
pub(crate) mod mf_limit;
pub mod resolution;
pub(crate) mod usage;

use board::scenario::{UnitId, UnitKind};
use game::{Game, Unit};

/// Whether `unit`, named among an attack's firers, fires FP of its own: every unit but a
/// leader, who has no inherent FP and only directs the others' fire (A1.21, A7.531). The one
/// answer for each rule that counts a firer's own FP, so that they cannot disagree on a unit:
/// the members of a Mandatory Fire Group (`mandatory`, A7.55), the attacks a DEFENDER unit
/// makes at a moving unit (`mf_limit`, A8.3), the links of a Fire Group's chain
/// (`attack::check_fire_group`, A7.5) and the FP an attack adds up (`resolution`).
pub(crate) fn fires_own_fp(unit: &Unit) -> bool {
    unit.kind != UnitKind::Leader
}

/// The units among an attack's `firers` that fire FP of their own (`fires_own_fp`).
pub(crate) fn own_fp_firers<'a>(
    game: &'a Game,
    firers: &'a [UnitId],
) -> impl Iterator<Item = &'a UnitId> + 'a {
    firers
        .iter()
        .filter(move |id| game.units.get(*id).is_some_and(fires_own_fp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wall_advantage::ReadScenario;
    use board::scenario::Scenario;

    /// A7.55 and A8.3 count a firer's own FP by one answer: a hero, an MMC and a counter whose
    /// ratings read as no FP at all are members of a Fire Group exactly when the MF limit
    /// counts their attacks; a leader is neither.
    #[test]
    fn every_firer_but_a_leader_fires_its_own_fp_for_every_rule() {
        let text = include_str!("../../../tests/positions/scenarios/a7-fire.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        let odd = game.units.get_mut("o1").unwrap();
        odd.ratings = "PSK".into();
        odd.kind = UnitKind::Counter;
        let firers: Vec<UnitId> = ["q1", "hero", "l8", "o1"].map(String::from).into();
        let own: Vec<&UnitId> = own_fp_firers(&game, &firers).collect();
        assert_eq!(own, [&firers[0], &firers[1], &firers[3]]);
        assert_eq!(mandatory::members_of(&game, &firers), own);
    }
}
