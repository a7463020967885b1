//! The terrain data table: every Infantry entry cost and TEM the engine uses, one row per
//! terrain or hexside feature, each citing the rule it comes from (Chapter B Terrain Chart).
//!
//! Why a table: costs and TEM are facts a reviewer checks against the chart. Keeping them in one
//! place means a dispute over "why did entering that hex cost 2 MF" ends at one row, and rules
//! code asks the table instead of matching on terrain itself.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Movement points in halves, so that Grain's 1½ MF (B15) and a Trail Break are exact.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Mf(pub u16);

impl Mf {
    pub const fn whole(mf: u16) -> Mf {
        Mf(mf * 2)
    }
    pub fn halves(self) -> u16 {
        self.0
    }
    pub fn saturating_sub(self, other: Mf) -> Mf {
        Mf(self.0.saturating_sub(other.0))
    }
}

impl std::ops::Add for Mf {
    type Output = Mf;
    fn add(self, other: Mf) -> Mf {
        Mf(self.0 + other.0)
    }
}

impl std::ops::AddAssign for Mf {
    fn add_assign(&mut self, other: Mf) {
        self.0 += other.0;
    }
}

impl std::iter::Sum for Mf {
    fn sum<I: Iterator<Item = Mf>>(iter: I) -> Mf {
        Mf(iter.map(|m| m.0).sum())
    }
}

impl fmt::Display for Mf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0 / 2, self.0 % 2) {
            (0, 1) => write!(f, "½"),
            (w, 1) => write!(f, "{w}½"),
            (w, _) => write!(f, "{w}"),
        }
    }
}

/// The terrain inside a hex. Names and spellings follow the Terrain Chart; in scenario files
/// they are written in snake_case (`stone_building`, `open_ground`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Terrain {
    OpenGround,
    Shellholes,
    SunkenRoad,
    ElevatedRoad,
    Runway,
    Brush,
    Woods,
    Orchard,
    OliveGrove,
    CactusPatch,
    Grain,
    Marsh,
    Crag,
    Graveyard,
    Gully,
    StoneBuilding,
    WoodenBuilding,
}

/// What entering a hex costs Infantry before hexsides and elevation are added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryCost {
    /// A fixed Cost Of Terrain.
    Mf(Mf),
    /// The unit's entire MF allotment (Marsh, B16; Sewer, B8).
    AllMf,
}

/// Terrain Effects Modifier against direct and indirect fire (they differ for woods, walls …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tem {
    pub direct: i8,
    pub indirect: i8,
}

/// One row of the terrain chart.
#[derive(Clone, Copy, Debug)]
pub struct TerrainRow {
    pub terrain: Terrain,
    /// The chapter B rule that defines the terrain, cited in every cost the engine reports.
    pub rule: &'static str,
    pub name: &'static str,
    pub cost: EntryCost,
    pub tem: Tem,
    /// Woods and buildings are the obstacles Infantry may Bypass (A4.3).
    pub bypassable_obstacle: bool,
    /// Seasonal terrain that counts as Open Ground out of season (B15 Grain: April–September).
    pub in_season_months: Option<(u8, u8)>,
    /// Terrain whose TEM is bought by paying more than its entry cost: what entering "into
    /// cover" costs in all (chart B2: shellholes cost 1 MF, or 2 to use their +1).
    pub cover_cost: Option<Mf>,
    /// What the terrain does to a line of sight (A6, chart's LOS column); read by `board::los`.
    pub los: LosRow,
}

/// The LOS column of the Terrain Chart for one terrain, in half levels so that walls, cactus
/// and rooftops are exact. A terrain may both block some LOS and hinder other LOS (orchards).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LosRow {
    /// Height of the obstacle above the hex's base level, in half levels; 0 = no obstacle.
    /// Woods and a one-storey building are one level (2); cactus is a half-level obstacle (1).
    pub height: u8,
    /// An obstacle lower than the higher of two Locations leaves Blind Hexes behind it (A6.4);
    /// half-level obstacles block same-level LOS only and leave none.
    pub blind_hexes: bool,
    /// Hindrance DRM added for each hex of it the LOS passes through (A6.1 chart; B12–B18).
    pub hindrance: u8,
    /// The hindrance affects only LOS between Locations at its own level (B12.2 brush, B15
    /// grain, B16 marsh, B17.2 crag, B18 graveyard).
    pub same_level_only: bool,
    /// Months (first, last; 1–12) in which the LOS effect exists at all (B15 Grain: June–
    /// September); `None` = all year. Out of these months the hex is Open Ground for LOS.
    pub months: Option<(u8, u8)>,
    /// Months in which the hindrance is instead a one-level obstacle to LOS between different
    /// levels (B14 Orchard: April–October; Olive Grove all year).
    pub obstacle_to_higher_months: Option<(u8, u8)>,
}

impl LosRow {
    /// Nothing: Open Ground for LOS.
    pub const NONE: LosRow = LosRow {
        height: 0,
        blind_hexes: false,
        hindrance: 0,
        same_level_only: false,
        months: None,
        obstacle_to_higher_months: None,
    };
    const fn obstacle(levels: u8) -> LosRow {
        LosRow {
            height: levels * 2,
            blind_hexes: true,
            ..LosRow::NONE
        }
    }
    const fn hindrance(drm: u8) -> LosRow {
        LosRow {
            hindrance: drm,
            ..LosRow::NONE
        }
    }
    /// A hindrance to a LOS traced at its own level only: both ends at the hex's base level
    /// (brush B12.2, crag B17.2, marsh B16, graveyard B18, grain B15).
    const fn same_level_hindrance(drm: u8) -> LosRow {
        LosRow {
            same_level_only: true,
            ..LosRow::hindrance(drm)
        }
    }
}

/// Whether `month` (1–12; 0 = the scenario gives none, taken as in season) lies in `span`,
/// which may wrap over the new year.
pub fn in_months(span: Option<(u8, u8)>, month: u8) -> bool {
    match span {
        None => true,
        Some(_) if month == 0 => true,
        Some((from, to)) if from <= to => (from..=to).contains(&month),
        Some((from, to)) => month >= from || month <= to,
    }
}

const fn row(
    terrain: Terrain,
    rule: &'static str,
    name: &'static str,
    cost: EntryCost,
    direct: i8,
    indirect: i8,
) -> TerrainRow {
    TerrainRow {
        terrain,
        rule,
        name,
        cost,
        tem: Tem { direct, indirect },
        bypassable_obstacle: false,
        in_season_months: None,
        cover_cost: None,
        los: LosRow::NONE,
    }
}

const fn los(mut r: TerrainRow, los: LosRow) -> TerrainRow {
    r.los = los;
    r
}

const fn mf(halves: u16) -> EntryCost {
    EntryCost::Mf(Mf(halves))
}

const fn obstacle(mut r: TerrainRow) -> TerrainRow {
    r.bypassable_obstacle = true;
    r
}

/// The table itself. Figures from `terrain-chart.md`; TEM direct/indirect where the chart
/// gives two. Conditional TEM (Shellholes only when entered at 2 MF, Fortified buildings) are
/// handled by the rule that grants them, not here.
pub const TERRAIN_TABLE: &[TerrainRow] = &[
    row(Terrain::OpenGround, "B1", "Open Ground", mf(2), 0, 0),
    TerrainRow {
        cover_cost: Some(Mf::whole(2)),
        ..row(Terrain::Shellholes, "B2", "Shellholes", mf(2), 1, 1)
    },
    // Entered across a non-road hexside; along the road it is the road rate (B3). A
    // Depression for LOS (B4), which the LOS model does not draw (docs/los.md).
    row(Terrain::SunkenRoad, "B4", "Sunken Road", mf(4), 0, 0),
    // The chart: a Level 1 obstacle.
    los(
        row(Terrain::ElevatedRoad, "B5", "Elevated Road", mf(4), 0, 0),
        LosRow::obstacle(1),
    ),
    row(Terrain::Runway, "B7", "Runway", mf(2), -1, -1),
    los(
        row(Terrain::Brush, "B12", "Brush", mf(4), 0, 0),
        LosRow::same_level_hindrance(1),
    ),
    los(
        obstacle(row(Terrain::Woods, "B13", "Woods", mf(4), 1, -1)),
        LosRow::obstacle(1),
    ),
    // A +1 Hindrance, and in season (April–October) an obstacle to LOS from a higher level.
    los(
        row(Terrain::Orchard, "B14", "Orchard", mf(2), 0, 0),
        LosRow {
            obstacle_to_higher_months: Some((4, 10)),
            ..LosRow::hindrance(1)
        },
    ),
    // As an orchard, always in season.
    los(
        row(Terrain::OliveGrove, "B14.8", "Olive Grove", mf(4), 1, 1),
        LosRow {
            obstacle_to_higher_months: Some((1, 12)),
            ..LosRow::hindrance(1)
        },
    ),
    // A Half-Level obstacle.
    los(
        row(Terrain::CactusPatch, "B14.7", "Cactus Patch", mf(6), 1, 1),
        LosRow {
            height: 1,
            ..LosRow::NONE
        },
    ),
    // A Hindrance June–September, to same-level LOS only.
    TerrainRow {
        in_season_months: Some((4, 9)),
        los: LosRow {
            same_level_only: true,
            months: Some((6, 9)),
            ..LosRow::hindrance(1)
        },
        ..row(Terrain::Grain, "B15", "Grain", mf(3), 0, 0)
    },
    los(
        row(Terrain::Marsh, "B16", "Marsh", EntryCost::AllMf, 0, 0),
        LosRow::same_level_hindrance(1),
    ),
    los(
        row(Terrain::Crag, "B17", "Crag", mf(4), 1, 1),
        LosRow::same_level_hindrance(1),
    ),
    los(
        row(Terrain::Graveyard, "B18", "Graveyard", mf(2), 1, 1),
        LosRow::same_level_hindrance(1),
    ),
    // A Depression for LOS (B19), not drawn by the LOS model (docs/los.md).
    row(Terrain::Gully, "B19", "Gully", mf(4), 0, 0),
    // Buildings are obstacles by their height; one storey unless the scenario gives more.
    los(
        obstacle(row(
            Terrain::StoneBuilding,
            "B23",
            "stone building",
            mf(4),
            3,
            3,
        )),
        LosRow::obstacle(1),
    ),
    los(
        obstacle(row(
            Terrain::WoodenBuilding,
            "B23",
            "wooden building",
            mf(4),
            2,
            2,
        )),
        LosRow::obstacle(1),
    ),
];

impl Terrain {
    /// This terrain's row. Every variant has exactly one (checked by a test).
    pub fn row(self) -> &'static TerrainRow {
        // The table lists the terrains in the enum's order (checked by a test), so the row is
        // found by index: LOS asks this for every hex a thread passes.
        let row = &TERRAIN_TABLE[self as usize];
        debug_assert_eq!(row.terrain, self);
        row
    }

    /// Cost Of Terrain in the given month (1–12; `None` = unspecified, taken as in season).
    /// Out-of-season Grain is Open Ground (B15).
    pub fn entry_cost(self, month: Option<u8>) -> (EntryCost, &'static str) {
        let r = self.row();
        if let (Some((from, to)), Some(m)) = (r.in_season_months, month) {
            if !(from..=to).contains(&m) {
                let open = Terrain::OpenGround.row();
                return (open.cost, r.rule);
            }
        }
        (r.cost, r.rule)
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }
}

/// A terrain feature that lies along a hexside rather than inside a hex (B9, B9.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HexsideFeature {
    Wall,
    Hedge,
    Bocage,
}

/// One row of the hexside table.
#[derive(Clone, Copy, Debug)]
pub struct HexsideRow {
    pub feature: HexsideFeature,
    pub rule: &'static str,
    pub name: &'static str,
    /// Added to the COT of the hex entered; never a COT itself and never doubled for elevation (B9.4).
    pub crossing_mf: Mf,
    pub tem: Tem,
    /// Height as a LOS obstacle above the lower of its two hexes, in half levels: walls and
    /// hedges are Half-Level obstacles to same-level LOS (B9.2), bocage a one-level obstacle
    /// that leaves Blind Hexes (B9.52).
    pub los_height: u8,
}

pub const HEXSIDE_TABLE: &[HexsideRow] = &[
    HexsideRow {
        feature: HexsideFeature::Wall,
        rule: "B9.4",
        name: "wall",
        crossing_mf: Mf::whole(1),
        tem: Tem {
            direct: 2,
            indirect: 1,
        },
        los_height: 1,
    },
    HexsideRow {
        feature: HexsideFeature::Hedge,
        rule: "B9.4",
        name: "hedge",
        crossing_mf: Mf::whole(1),
        tem: Tem {
            direct: 1,
            indirect: 0,
        },
        los_height: 1,
    },
    HexsideRow {
        feature: HexsideFeature::Bocage,
        rule: "B9.54",
        name: "bocage",
        crossing_mf: Mf::whole(2),
        tem: Tem {
            direct: 2,
            indirect: 1,
        },
        los_height: 2,
    },
];

impl HexsideFeature {
    pub fn row(self) -> &'static HexsideRow {
        HEXSIDE_TABLE
            .iter()
            .find(|r| r.feature == self)
            .expect("every hexside feature has a row in HEXSIDE_TABLE")
    }

    /// Walls, hedges and bocage all count for Wall Advantage (B9.32, B9.5).
    pub fn name(self) -> &'static str {
        self.row().name
    }
}

/// A fortification in a hex: the ones B9.32 names as keeping a unit from Wall Advantage.
/// Scenario files write them in snake_case in a hex's `fortifications` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fortification {
    /// An entrenchment; units beneath it are `entrenched` (B27).
    Foxhole,
    /// An entrenchment; units beneath it are `entrenched` (B27).
    Trench,
    /// Units inside are `in_pillbox` (B30).
    Pillbox,
    /// Units on top of it are `above_wire` (B26).
    Wire,
    /// Units on top of it are `above_wire` (G9).
    Panji,
    /// Units on it are `on_bridge`; others are beneath or beside it (B6).
    Bridge,
}

/// One row of the fortification table: what the engine knows of it, and nothing it doesn't.
/// `None` is a figure the Terrain Chart the project works from does not give; a rule that
/// needs one refuses as not modelled rather than guessing (terrain-chart.md, last note).
#[derive(Clone, Copy, Debug)]
pub struct FortificationRow {
    pub fortification: Fortification,
    pub rule: &'static str,
    pub name: &'static str,
    /// TEM for a unit beneath/inside/on it, where the chart gives it.
    pub tem: Option<Tem>,
    /// Indirect Fire TEM alone, where the chart gives only that (B6 bridge: +1).
    pub indirect_tem: Option<i8>,
    /// MF to enter or leave it within its hex (chart: foxhole 1 MF).
    pub enter_exit: Option<Mf>,
    /// An entrenchment: B9.32 keeps units beneath it from WA, B9.33 lets elevation cut its TEM.
    pub entrenchment: bool,
}

pub const FORTIFICATION_TABLE: &[FortificationRow] = &[
    FortificationRow {
        fortification: Fortification::Foxhole,
        rule: "B27",
        name: "foxhole",
        tem: Some(Tem {
            direct: 2,
            indirect: 2,
        }),
        indirect_tem: None,
        enter_exit: Some(Mf::whole(1)),
        entrenchment: true,
    },
    FortificationRow {
        fortification: Fortification::Trench,
        rule: "B27",
        name: "trench",
        tem: None,
        indirect_tem: None,
        enter_exit: None,
        entrenchment: true,
    },
    FortificationRow {
        fortification: Fortification::Pillbox,
        rule: "B30",
        name: "pillbox",
        tem: None,
        indirect_tem: None,
        enter_exit: None,
        entrenchment: false,
    },
    FortificationRow {
        fortification: Fortification::Wire,
        rule: "B26",
        name: "Wire",
        tem: None,
        indirect_tem: None,
        enter_exit: None,
        entrenchment: false,
    },
    FortificationRow {
        fortification: Fortification::Panji,
        rule: "G9",
        name: "Panji",
        tem: None,
        indirect_tem: None,
        enter_exit: None,
        entrenchment: false,
    },
    FortificationRow {
        fortification: Fortification::Bridge,
        rule: "B6",
        name: "bridge",
        tem: None,
        indirect_tem: Some(1),
        enter_exit: None,
        entrenchment: false,
    },
];

impl Fortification {
    pub fn row(self) -> &'static FortificationRow {
        FORTIFICATION_TABLE
            .iter()
            .find(|r| r.fortification == self)
            .expect("every fortification has a row in FORTIFICATION_TABLE")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_terrain_has_exactly_one_row() {
        let all = [
            Terrain::OpenGround,
            Terrain::Shellholes,
            Terrain::SunkenRoad,
            Terrain::ElevatedRoad,
            Terrain::Runway,
            Terrain::Brush,
            Terrain::Woods,
            Terrain::Orchard,
            Terrain::OliveGrove,
            Terrain::CactusPatch,
            Terrain::Grain,
            Terrain::Marsh,
            Terrain::Crag,
            Terrain::Graveyard,
            Terrain::Gully,
            Terrain::StoneBuilding,
            Terrain::WoodenBuilding,
        ];
        for t in all {
            assert_eq!(TERRAIN_TABLE.iter().filter(|r| r.terrain == t).count(), 1);
        }
        assert_eq!(TERRAIN_TABLE.len(), all.len());
        for (i, t) in all.iter().enumerate() {
            assert_eq!(TERRAIN_TABLE[i].terrain, *t, "rows follow the enum's order");
        }
    }

    #[test]
    fn chart_figures() {
        let cost = |t: Terrain| t.entry_cost(Some(6)).0;
        assert_eq!(cost(Terrain::OpenGround), EntryCost::Mf(Mf::whole(1)));
        assert_eq!(cost(Terrain::Woods), EntryCost::Mf(Mf::whole(2)));
        assert_eq!(cost(Terrain::StoneBuilding), EntryCost::Mf(Mf::whole(2)));
        assert_eq!(cost(Terrain::Grain), EntryCost::Mf(Mf(3)));
        assert_eq!(cost(Terrain::Marsh), EntryCost::AllMf);
        assert_eq!(cost(Terrain::CactusPatch), EntryCost::Mf(Mf::whole(3)));
        assert_eq!(Terrain::StoneBuilding.row().tem.direct, 3);
        assert_eq!(Terrain::Woods.row().tem.indirect, -1);
    }

    /// B15: Grain is Open Ground outside April–September.
    #[test]
    fn grain_out_of_season_is_open_ground() {
        assert_eq!(
            Terrain::Grain.entry_cost(Some(11)).0,
            EntryCost::Mf(Mf::whole(1))
        );
        assert_eq!(Terrain::Grain.entry_cost(Some(4)).0, EntryCost::Mf(Mf(3)));
    }

    #[test]
    fn hexside_figures() {
        assert_eq!(HexsideFeature::Wall.row().crossing_mf, Mf::whole(1));
        assert_eq!(HexsideFeature::Hedge.row().tem.direct, 1);
        assert_eq!(HexsideFeature::Bocage.row().crossing_mf, Mf::whole(2));
    }

    /// Chart B27: a foxhole is +2 and costs 1 MF to enter or leave beneath; figures the chart
    /// does not give stay `None`.
    #[test]
    fn fortification_figures() {
        let foxhole = Fortification::Foxhole.row();
        assert_eq!(foxhole.tem.map(|t| t.direct), Some(2));
        assert_eq!(foxhole.enter_exit, Some(Mf::whole(1)));
        assert!(foxhole.entrenchment && Fortification::Trench.row().entrenchment);
        assert_eq!(Fortification::Trench.row().tem, None);
        assert_eq!(Fortification::Bridge.row().indirect_tem, Some(1));
        for f in [
            Fortification::Foxhole,
            Fortification::Trench,
            Fortification::Pillbox,
            Fortification::Wire,
            Fortification::Panji,
            Fortification::Bridge,
        ] {
            assert_eq!(
                FORTIFICATION_TABLE
                    .iter()
                    .filter(|r| r.fortification == f)
                    .count(),
                1
            );
        }
        assert_eq!(FORTIFICATION_TABLE.len(), 6);
    }

    #[test]
    fn mf_prints_halves() {
        assert_eq!(Mf(3).to_string(), "1½");
        assert_eq!(Mf(1).to_string(), "½");
        assert_eq!(Mf(8).to_string(), "4");
    }
}
