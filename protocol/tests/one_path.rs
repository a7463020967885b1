//! One path per act, on random positions.
//!
//! - Entering a Location from off board (`enter`, A2.51) is the same act as a `move` into it
//!   from an adjacent Open Ground hex at level 0: over random terrain, fortifications, enemy
//!   and friendly occupants, stacks, leaders and loads, the two are refused alike (same rule,
//!   same kind, same words) or accepted alike (same cost, same MF accounts, stopped alike by
//!   concealed units). The only differences the rules make are those `enter` adds itself (its
//!   edge, turn and phase, A2.51), which these positions all satisfy.
//! - A broken unit's rout into a Location (A10.5) is that same act: beside the Location, a
//!   broken squad routing into it and a Good Order one moving into it are refused alike or
//!   stopped alike, at the same cost — but for what the rout adds itself: its six MF, and
//!   never a hex closer to a Known enemy unit (A10.51), here the enemy's own Location.
//! - What the engine does not model is refused as not modelled by every command that would
//!   do it, never played at a guessed cost: entering terrain or fortifications it has no
//!   figures for, leaving a fortification, Column or an upper level, a vehicle's or a berserk
//!   unit's movement and portage.

use proptest::prelude::*;
use protocol::event::{
    DesperationMoraleMarked, UnitEntryBlocked, UnitMoved, UnitRouted, UnitsEntered,
};
use protocol::game::Game;
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Hex, Scenario, ScriptedDice, Side, ViolationKind};

const TERRAINS: [&str; 17] = [
    "open_ground",
    "shellholes",
    "sunken_road",
    "elevated_road",
    "runway",
    "brush",
    "woods",
    "orchard",
    "olive_grove",
    "cactus_patch",
    "grain",
    "marsh",
    "crag",
    "graveyard",
    "gully",
    "stone_building",
    "wooden_building",
];

const FORTIFICATIONS: [&str; 6] = ["foxhole", "trench", "pillbox", "wire", "panji", "bridge"];

/// Who else is in the Location entered.
#[derive(Clone, Copy, Debug)]
enum Enemy {
    None,
    Known,
    Broken,
    Concealed,
    Hidden,
    Dummy,
    /// A Known enemy on level 1 of a building: another Location (A5.1).
    Upstairs,
    /// A Known enemy vehicle.
    Vehicle,
}

#[derive(Clone, Debug)]
struct Case {
    terrain: usize,
    elevation: u8,
    month: u8,
    fortification: Option<usize>,
    rubble: bool,
    blaze: bool,
    water: bool,
    enemy: Enemy,
    friends: usize,
    friend_leader: bool,
    squads: usize,
    half_squads: usize,
    inexperienced: bool,
    leader: bool,
    hero: bool,
    pp: Vec<u8>,
}

fn case() -> impl Strategy<Value = Case> {
    let enemy = prop_oneof![
        4 => Just(Enemy::None),
        2 => Just(Enemy::Known),
        1 => Just(Enemy::Broken),
        1 => Just(Enemy::Concealed),
        1 => Just(Enemy::Hidden),
        1 => Just(Enemy::Dummy),
        1 => Just(Enemy::Upstairs),
        1 => Just(Enemy::Vehicle),
    ];
    (
        (
            0..TERRAINS.len(),
            0u8..3,
            1u8..13,
            prop::option::weighted(0.2, 0..FORTIFICATIONS.len()),
            prop::bool::weighted(0.05),
            prop::bool::weighted(0.05),
            prop::bool::weighted(0.05),
        ),
        (
            enemy,
            0usize..4,
            prop::bool::weighted(0.2),
            0usize..4,
            0usize..3,
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.4),
            prop::bool::weighted(0.1),
            prop::collection::vec(1u8..4, 0..3),
        ),
    )
        .prop_map(
            |(
                (terrain, elevation, month, fortification, rubble, blaze, water),
                (
                    enemy,
                    friends,
                    friend_leader,
                    squads,
                    half_squads,
                    inexperienced,
                    leader,
                    hero,
                    pp,
                ),
            )| Case {
                terrain,
                elevation,
                month,
                fortification,
                rubble,
                blaze,
                water,
                enemy,
                friends,
                friend_leader,
                squads,
                half_squads,
                inexperienced,
                leader,
                hero,
                pp,
            },
        )
}

const TARGET: &str = "1J3";
const BESIDE: &str = "1I3";

fn building(case: &Case) -> bool {
    TERRAINS[case.terrain].ends_with("building")
}

/// The movers' ids, in the order the command names them.
fn movers(case: &Case) -> Vec<String> {
    let mut ids = vec![];
    if case.leader {
        ids.push("gl".to_string());
    }
    ids.extend((0..case.squads).map(|i| format!("gs{i}")));
    ids.extend((0..case.half_squads).map(|i| format!("gh{i}")));
    if case.hero {
        ids.push("gx".to_string());
    }
    if ids.is_empty() {
        ids.push("gs0".to_string());
    }
    ids
}

/// The scenario: board 1, Open Ground with the target hex on the east edge as `case` draws
/// it. The movers enter from the east edge on Turn 1 (`off_board`) or stand in the Open
/// Ground hex beside it.
fn scenario(case: &Case, off_board: bool) -> String {
    let mut s = format!(
        "name = \"one path\"\nturns = 2\nfirst = \"german\"\nmonth = {}\nsides = [\n  {{ id = \"german\", name = \"German\" }},\n  {{ id = \"russian\", name = \"Russian\" }},\n]\n\n[[area]]\nfrom = \"1A1\"\nto = \"1J6\"\nterrain = \"open_ground\"\n\n[[hexes]]\nhex = \"{TARGET}\"\nterrain = \"{}\"\nelevation = {}\n",
        case.month, TERRAINS[case.terrain], case.elevation
    );
    if building(case) {
        s += "height = 2\n";
    }
    if let Some(f) = case.fortification {
        s += &format!("fortifications = [\"{}\"]\n", FORTIFICATIONS[f]);
    }
    if case.rubble {
        s += "rubble = true\n";
    }
    if case.blaze {
        s += "blaze = true\n";
    }
    if case.water {
        s += "water_obstacle = true\n";
    }
    s += "\n[setup]\norder = [\"russian\", \"german\"]\n\n[[setup.areas]]\nside = \"russian\"\nboard = \"1\"\nhexrows = \"A-B\"\n\n[[setup.areas]]\nside = \"german\"\nboard = \"1\"\nhexrows = \"E-F\"\n";
    let unit = |id: &str, side: &str, kind: &str, ratings: Option<&str>, extra: &str| {
        let ratings = ratings.map_or(String::new(), |r| format!("ratings = \"{r}\"\n"));
        format!(
            "\n[[units]]\nid = \"{id}\"\nside = \"{side}\"\nkind = \"{kind}\"\n{ratings}{extra}"
        )
    };
    let at = |hex: &str| format!("hex = \"{hex}\"\n");
    match case.enemy {
        Enemy::None => {}
        Enemy::Known => s += &unit("re", "russian", "squad", Some("4-4-7"), &at(TARGET)),
        Enemy::Broken => {
            s += &unit(
                "re",
                "russian",
                "squad",
                Some("4-4-7"),
                &format!("{}morale = \"broken\"\n", at(TARGET)),
            )
        }
        Enemy::Concealed => {
            s += &unit(
                "re",
                "russian",
                "squad",
                Some("4-4-7"),
                &format!("{}concealed = true\n", at(TARGET)),
            )
        }
        Enemy::Hidden => {
            s += &unit(
                "re",
                "russian",
                "squad",
                Some("4-4-7"),
                &format!("{}hidden = true\n", at(TARGET)),
            )
        }
        Enemy::Dummy => {
            s += &unit(
                "re",
                "russian",
                "dummy",
                None,
                &format!("{}concealed = true\n", at(TARGET)),
            )
        }
        Enemy::Vehicle => {
            s += &unit(
                "re",
                "russian",
                "vehicle",
                None,
                &format!("{}mp = 10\n", at(TARGET)),
            )
        }
        Enemy::Upstairs => {
            s += &unit(
                "re",
                "russian",
                "squad",
                Some("4-4-7"),
                // Half levels: one level above the hex's base level.
                &format!("{}level = {}\n", at(TARGET), 2 * case.elevation + 2),
            )
        }
    }
    for i in 0..case.friends {
        s += &unit(
            &format!("gf{i}"),
            "german",
            "squad",
            Some("4-6-7"),
            &at(TARGET),
        );
    }
    if case.friend_leader {
        s += &unit("gfl", "german", "leader", Some("8-0"), &at(TARGET));
    }
    let place = if off_board {
        "enters = { turn = 1, edge = \"east\" }\n".to_string()
    } else {
        at(BESIDE)
    };
    for id in movers(case) {
        let (kind, ratings) = match &id[..2] {
            "gl" => ("leader", "8-1"),
            "gx" => ("hero", "1-4-9"),
            "gh" => ("half_squad", "2-4-7"),
            _ => ("squad", "4-6-7"),
        };
        let extra = if case.inexperienced && kind != "leader" && kind != "hero" {
            format!("{place}inexperienced = true\n")
        } else {
            place.clone()
        };
        s += &unit(&id, "german", kind, Some(ratings), &extra);
    }
    let carrier = movers(case)
        .into_iter()
        .find(|id| id.starts_with("gs") || id.starts_with("gh"));
    if let Some(carrier) = carrier {
        for (i, pp) in case.pp.iter().enumerate() {
            s += &format!(
                "\n[[weapons]]\nid = \"w{i}\"\nname = \"MG\"\npp = {pp}\nheld_by = \"{carrier}\"\n"
            );
        }
    }
    s
}

/// The game at the German MPh of Turn 1, or `None` when the scenario does not load (a
/// fortification the terrain refuses, B16, B23 …) or play does not reach it.
fn at_movement_phase(toml: &str) -> Option<Game> {
    let scenario = Scenario::from_toml(toml).ok()?;
    let mut game = Game::new(scenario);
    // The end-of-RPh steps pass by themselves where nobody could claim WA (B9.322).
    while game.clock.phase() != protocol::phase::Phase::Movement && !game.over {
        let events = decide(
            &game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .ok()?;
        for e in &events {
            protocol::apply(&mut game, e);
        }
    }
    (game.clock.phase() == protocol::phase::Phase::Movement).then_some(game)
}

/// What an accepted entry came to, in terms both commands share.
#[derive(Debug, PartialEq)]
struct Came {
    stopped: bool,
    cost: protocol::event::MoveCost,
    mf: Vec<protocol::event::MfAccount>,
    revealed: Vec<String>,
    dummies_removed: Vec<String>,
    others: Vec<String>,
}

fn came(events: &[Event]) -> Came {
    let mut out = None;
    let mut others = vec![];
    for e in events {
        match e {
            Event::UnitRouted(UnitRouted { cost, mf, .. }) => {
                out = Some(Came {
                    stopped: false,
                    cost: cost.clone(),
                    mf: vec![mf.clone()],
                    revealed: vec![],
                    dummies_removed: vec![],
                    others: vec![],
                })
            }
            Event::UnitsEntered(UnitsEntered { cost, mf, .. })
            | Event::UnitMoved(UnitMoved { cost, mf, .. }) => {
                out = Some(Came {
                    stopped: false,
                    cost: cost.clone(),
                    mf: mf.clone(),
                    revealed: vec![],
                    dummies_removed: vec![],
                    others: vec![],
                })
            }
            Event::UnitEntryBlocked(UnitEntryBlocked {
                cost,
                mf,
                revealed,
                dummies_removed,
                ..
            }) => {
                out = Some(Came {
                    stopped: true,
                    cost: cost.clone(),
                    mf: mf.clone(),
                    revealed: revealed.iter().map(|u| u.id.clone()).collect(),
                    dummies_removed: dummies_removed.clone(),
                    others: vec![],
                })
            }
            other => others.push(format!("{other:?}")),
        }
    }
    let mut out = out.expect("an accepted entry says where the units went");
    out.others = others;
    out
}

fn render(r: &Result<Vec<Event>, protocol::RuleViolation>) -> String {
    match r {
        Ok(events) => format!("accepted: {:?}", came(events)),
        Err(v) => format!("refused {} ({:?}): {}", v.rule, v.kind, v.detail),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `enter` and `move` into the same Location are the same act (A2.51, A4): refused or
    /// accepted alike, for the same reason and at the same cost.
    #[test]
    fn enter_and_move_into_one_location_are_one_act(case in case()) {
        let entering = at_movement_phase(&scenario(&case, true));
        let moving = at_movement_phase(&scenario(&case, false));
        let (Some(entering), Some(moving)) = (entering, moving) else {
            // A scenario that does not load loads in neither world.
            prop_assert!(Scenario::from_toml(&scenario(&case, true)).is_err());
            prop_assert!(Scenario::from_toml(&scenario(&case, false)).is_err());
            return Ok(());
        };
        let to: Hex = TARGET.parse().unwrap();
        let units = movers(&case);
        let entered = decide(&entering, Side::A, &Command::Enter { units: units.clone(), to }, &mut ScriptedDice::default());
        let moved = decide(&moving, Side::A, &Command::Move { units, to }, &mut ScriptedDice::default());
        // What the engine has no figures for is refused as not modelled, by both.
        let unmodelled = case.rubble
            || case.blaze
            || case.water
            || case.fortification.is_some_and(|f| !["foxhole", "trench"].contains(&FORTIFICATIONS[f]));
        if unmodelled {
            for r in [&entered, &moved] {
                prop_assert!(
                    matches!(r, Err(v) if says_not_modelled(v)),
                    "{}", render(r)
                );
            }
        }
        match (&entered, &moved) {
            (Ok(e), Ok(m)) => prop_assert_eq!(came(e), came(m)),
            (Err(e), Err(m)) => {
                prop_assert_eq!(&e.rule, &m.rule, "{} / {}", e.detail, m.detail);
                prop_assert_eq!(e.kind, m.kind);
                prop_assert_eq!(&e.detail, &m.detail);
            }
            _ => prop_assert!(false, "enter: {}\nmove: {}", render(&entered), render(&moved)),
        }
    }
}

/// Where the unit that tries to leave is, or what it is: each a place or kind the engine has
/// no figures for moving from or as.
#[derive(Clone, Copy, Debug)]
enum Origin {
    Foxhole,
    Trench,
    Pillbox,
    Wire,
    Panji,
    Bridge,
    Column,
    Upstairs,
    Vehicle,
    Berserk,
    /// A counter the engine does not rule on (`kind = "counter"`).
    Counter,
}

const ORIGINS: [Origin; 11] = [
    Origin::Foxhole,
    Origin::Trench,
    Origin::Pillbox,
    Origin::Wire,
    Origin::Panji,
    Origin::Bridge,
    Origin::Column,
    Origin::Upstairs,
    Origin::Vehicle,
    Origin::Berserk,
    Origin::Counter,
];

/// Board 1 with sewers usable: the unit `gm` (with a 9-1 `gml` beside it if `leader`) in
/// 1I3, a Manhole, as `origin` says; an LMG `wl` lies there and `gm` holds an MMG `wh`
/// (Infantry only); another Manhole in 1E3; `TARGET` is of `terrain`.
fn leaving_scenario(origin: Origin, leader: bool, terrain: usize) -> String {
    let (fort, placement) = match origin {
        Origin::Foxhole => (Some("foxhole"), "entrenched = true\n"),
        Origin::Trench => (Some("trench"), "entrenched = true\n"),
        Origin::Pillbox => (Some("pillbox"), "in_pillbox = true\n"),
        Origin::Wire => (Some("wire"), "above_wire = true\n"),
        Origin::Panji => (Some("panji"), "above_wire = true\n"),
        Origin::Bridge => (Some("bridge"), "on_bridge = true\n"),
        Origin::Column => (None, "column = true\n"),
        Origin::Upstairs => (None, "level = 2\n"),
        Origin::Vehicle | Origin::Berserk | Origin::Counter => (None, ""),
    };
    let origin_terrain = if matches!(origin, Origin::Upstairs) {
        "stone_building\"\nheight = \"2"
    } else {
        "open_ground"
    };
    let mut s = format!(
        "name = \"leaving\"\nturns = 1\nfirst = \"german\"\nsides = [\n  {{ id = \"german\", name = \"German\" }},\n  {{ id = \"russian\", name = \"Russian\" }},\n]\n\n[ssr]\nsewers_usable = true\n\n[[area]]\nfrom = \"1A1\"\nto = \"1J6\"\nterrain = \"open_ground\"\n\n[[hexes]]\nhex = \"{BESIDE}\"\nterrain = \"{origin_terrain}\"\nmanhole = true\n{}\n[[hexes]]\nhex = \"1E3\"\nterrain = \"open_ground\"\nmanhole = true\n\n[[hexes]]\nhex = \"{TARGET}\"\nterrain = \"{}\"\n",
        fort.map_or(String::new(), |f| format!("fortifications = [\"{f}\"]\n")),
        TERRAINS[terrain]
    )
    .replace("height = \"2\"", "height = 2");
    let (kind, ratings, extra) = match origin {
        Origin::Vehicle => ("vehicle", None, "mp = 12\n".to_string()),
        Origin::Counter => ("counter", Some("PzKpfw IVH"), String::new()),
        Origin::Berserk => ("squad", Some("4-6-7"), "morale = \"berserk\"\n".to_string()),
        _ => ("squad", Some("4-6-7"), placement.to_string()),
    };
    let ratings = ratings.map_or(String::new(), |r| format!("ratings = \"{r}\"\n"));
    s += &format!("\n[[units]]\nid = \"gm\"\nside = \"german\"\nkind = \"{kind}\"\n{ratings}hex = \"{BESIDE}\"\n{extra}");
    if leader {
        s += &format!("\n[[units]]\nid = \"gml\"\nside = \"german\"\nkind = \"leader\"\nratings = \"9-1\"\nhex = \"{BESIDE}\"\n{placement}");
    }
    s += &format!("\n[[units]]\nid = \"rr\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"1A6\"\n\n[[weapons]]\nid = \"wl\"\nname = \"LMG\"\npp = 1\nhex = \"{BESIDE}\"\n");
    if kind != "vehicle" && kind != "counter" {
        s += "\n[[weapons]]\nid = \"wh\"\nname = \"MMG\"\npp = 2\nheld_by = \"gm\"\n";
    }
    s
}

/// A refusal of the kind `NotModelled` whose words say so: "not modelled", or, for a counter
/// the engine does not rule on, that the players move it by adjudication.
fn says_not_modelled(v: &protocol::RuleViolation) -> bool {
    v.kind == ViolationKind::NotModelled
        && (v.detail.contains("not modelled") || v.detail.contains("does not rule on"))
}

/// A refusal that rules rather than says "not modelled" is allowed only where a rule forbids
/// the act outright: Manholes are ground-level Locations (B8.1, refused under B8.4), only
/// Infantry go down them (B8.4), and a berserk unit never does (B8.45).
fn ruling_allowed(origin: Origin, command: &Command, rule: &str) -> bool {
    matches!(
        (origin, command, rule),
        (Origin::Upstairs, Command::SewerMove { .. }, "B8.4")
            | (Origin::Vehicle, Command::SewerMove { .. }, "B8.4")
            | (Origin::Berserk, Command::SewerMove { .. }, "B8.45")
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every command that would take a unit out of a place the engine has no figures for
    /// leaving (a fortification, Column, an upper level), or move or portage a unit the engine
    /// does not move (a vehicle, a berserk unit), refuses it as not modelled — or by the rule
    /// that forbids it outright, named in `ruling_allowed` — and never accepts it.
    #[test]
    fn not_modelled_is_refused_by_every_command(
        origin in prop::sample::select(ORIGINS.to_vec()),
        leader in any::<bool>(),
        terrain in 0..TERRAINS.len(),
    ) {
        let toml = leaving_scenario(origin, leader, terrain);
        let game = at_movement_phase(&toml);
        let Some(game) = game else {
            return Err(TestCaseError::fail(format!("the scenario does not load or play: {:?}\n{toml}", Scenario::from_toml(&toml).err())));
        };
        let mut units = vec!["gm".to_string()];
        if leader {
            units.push("gml".to_string());
        }
        let mut commands = vec![
            Command::Move { units: units.clone(), to: TARGET.parse().unwrap() },
            Command::SewerMove { units: units.clone(), to: "1E3".parse().unwrap() },
        ];
        if matches!(origin, Origin::Vehicle | Origin::Berserk | Origin::Counter) {
            commands.push(Command::PickUp { unit: "gm".into(), weapon: "wl".into() });
        }
        if matches!(origin, Origin::Vehicle | Origin::Counter) {
            commands.push(Command::Drop { unit: "gm".into(), weapon: "wl".into() });
        }
        for command in &commands {
            let result = decide(&game, Side::A, command, &mut ScriptedDice::new(vec![1; 8]).unwrap());
            match &result {
                Ok(events) => prop_assert!(false, "{origin:?}: {command:?} accepted: {events:?}"),
                Err(v) => prop_assert!(
                    says_not_modelled(v) || ruling_allowed(origin, command, &v.rule),
                    "{origin:?}: {command:?} refused {} ({:?}): {}", v.rule, v.kind, v.detail
                ),
            }
        }
    }
}

/// The tunnel entrance the units go down at, two hexes from `TARGET` (B8.6: within three).
const TUNNEL_FROM: &str = "1H3";

/// Terrains a tunnel entrance may be in (B8.6), for `TARGET` as a tunnel's exit.
const ENTRANCE_TERRAINS: [&str; 4] = ["woods", "brush", "stone_building", "wooden_building"];

/// What comes up at a tunnel's exit: the Location's terrain, what lies in it, and who holds it.
#[derive(Clone, Debug)]
struct Exit {
    terrain: usize,
    fortification: Option<usize>,
    rubble: bool,
    blaze: bool,
    enemy: Enemy,
}

fn exit() -> impl Strategy<Value = Exit> {
    (
        0..ENTRANCE_TERRAINS.len(),
        prop::option::weighted(0.5, 0..FORTIFICATIONS.len()),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
        prop_oneof![
            3 => Just(Enemy::None),
            1 => Just(Enemy::Known),
            1 => Just(Enemy::Concealed),
            1 => Just(Enemy::Hidden),
        ],
    )
        .prop_map(|(terrain, fortification, rubble, blaze, enemy)| Exit {
            terrain,
            fortification,
            rubble,
            blaze,
            enemy,
        })
}

/// Board 1, Open Ground at level 0: a German tunnel from the woods of `TUNNEL_FROM` to
/// `TARGET`, drawn as `exit` says; a German squad `gt` and a broken one `gb` at the entrance,
/// and a German squad `gs` in `BESIDE`, next to `TARGET`. A Russian squad keeps to 1A6.
fn tunnel_scenario(exit: &Exit) -> String {
    let terrain = ENTRANCE_TERRAINS[exit.terrain];
    let mut s = format!(
        "name = \"tunnel exit\"\nturns = 2\nfirst = \"german\"\nsides = [\n  {{ id = \"german\", name = \"German\" }},\n  {{ id = \"russian\", name = \"Russian\" }},\n]\n\n[[area]]\nfrom = \"1A1\"\nto = \"1J6\"\nterrain = \"open_ground\"\n\n[[hexes]]\nhex = \"{TUNNEL_FROM}\"\nterrain = \"woods\"\n\n[[hexes]]\nhex = \"{TARGET}\"\nterrain = \"{terrain}\"\n"
    );
    if terrain.ends_with("building") {
        s += "height = 2\n";
    }
    if let Some(f) = exit.fortification {
        s += &format!("fortifications = [\"{}\"]\n", FORTIFICATIONS[f]);
    }
    if exit.rubble {
        s += "rubble = true\n";
    }
    if exit.blaze {
        s += "blaze = true\n";
    }
    s += &format!(
        "\n[[tunnels]]\nside = \"german\"\nentrances = [\"{TUNNEL_FROM}\", \"{TARGET}\"]\n"
    );
    let unit = |id: &str, side: &str, hex: &str, extra: &str| {
        let ratings = if side == "german" { "4-6-7" } else { "4-4-7" };
        format!("\n[[units]]\nid = \"{id}\"\nside = \"{side}\"\nkind = \"squad\"\nratings = \"{ratings}\"\nhex = \"{hex}\"\n{extra}")
    };
    s += &unit("gt", "german", TUNNEL_FROM, "");
    s += &unit("gb", "german", TUNNEL_FROM, "morale = \"broken\"\n");
    s += &unit("gs", "german", BESIDE, "");
    s += &unit("rr", "russian", "1A6", "");
    match exit.enemy {
        Enemy::None => {}
        Enemy::Known => s += &unit("re", "russian", TARGET, ""),
        Enemy::Concealed => s += &unit("re", "russian", TARGET, "concealed = true\n"),
        Enemy::Hidden => s += &unit("re", "russian", TARGET, "hidden = true\n"),
        other => unreachable!("not drawn: {other:?}"),
    }
    s
}

/// A command's outcome in words, whatever its events.
fn outcome(r: &Result<Vec<Event>, protocol::RuleViolation>) -> String {
    match r {
        Ok(events) => format!("accepted: {events:?}"),
        Err(v) => format!("refused {} ({:?}): {}", v.rule, v.kind, v.detail),
    }
}

/// The game after each of `sides` in turn has said `done`, or `None` if one is refused.
fn after_done(mut game: Game, sides: &[Side]) -> Option<Game> {
    for side in sides {
        let events = decide(&game, *side, &Command::Done, &mut ScriptedDice::default()).ok()?;
        for e in &events {
            protocol::apply(&mut game, e);
        }
    }
    Some(game)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Coming out of a tunnel into a Location is the act of entering it (B8.61, B8.62): where a
    /// `move` into `TARGET` is refused as not modelled (its terrain or a fortification the
    /// engine has no figures for), going into the tunnel that comes out there (`enter-tunnel`,
    /// since its units must come out in the APh, B8.61) and routing through it (B8.62) are
    /// refused by the same rule, of the same kind; where the `move` is not, neither is refused
    /// as not modelled. The exceptions are rules' own: a Known enemy in the Location bars the
    /// `move` (A4.14) but not the tunnel's exit (B8.61), and bars the router by B8.62 (no unit
    /// comes out ADJACENT to, here in the Location of, a Known unbroken armed enemy).
    #[test]
    fn coming_out_of_a_tunnel_is_entering(exit in exit()) {
        let toml = tunnel_scenario(&exit);
        let Some(moving) = at_movement_phase(&toml) else {
            // Terrain a fortification may not be in (B16, B23 …) does not load.
            prop_assert!(Scenario::from_toml(&toml).is_err(), "{toml}");
            return Ok(());
        };
        let to: Hex = TARGET.parse().unwrap();
        let moved = decide(&moving, Side::A, &Command::Move { units: vec!["gs".into()], to }, &mut ScriptedDice::default());
        let tunnelled = decide(&moving, Side::A, &Command::EnterTunnel { units: vec!["gt".into()] }, &mut ScriptedDice::default());
        let mut routing = after_done(moving, &[Side::A, Side::B, Side::A]).expect("play reaches the RtPh");
        prop_assert_eq!(routing.clock.phase(), protocol::phase::Phase::Rout);
        // Only a unit under Desperation Morale routs, by tunnel too (A10.62, the rout's one
        // check): this one is, as if it broke this Player Turn.
        protocol::apply(
            &mut routing,
            &Event::DesperationMoraleMarked(DesperationMoraleMarked { units: vec!["gb".into()], why: "broke".into() }),
        );
        let routed = decide(&routing, Side::A, &Command::RoutThroughTunnel { units: vec!["gb".into()] }, &mut ScriptedDice::default());
        let unmodelled = exit.rubble
            || exit.blaze
            || exit.fortification.is_some_and(|f| !["foxhole", "trench"].contains(&FORTIFICATIONS[f]));
        match &moved {
            Err(m) if m.kind == ViolationKind::NotModelled => {
                prop_assert!(unmodelled, "move: {}", render(&moved));
                for r in [&tunnelled, &routed] {
                    prop_assert!(
                        matches!(r, Err(v) if v.rule == m.rule && v.kind == m.kind && says_not_modelled(v)),
                        "move: {}\nfrom below: {}", render(&moved), outcome(r)
                    );
                }
            }
            _ => {
                prop_assert!(!unmodelled, "move: {}", render(&moved));
                let known = matches!(exit.enemy, Enemy::Known);
                // B8.61: the exit is entered even where a Known enemy holds it.
                prop_assert!(tunnelled.is_ok(), "enter-tunnel: {}", outcome(&tunnelled));
                match (&moved, known) {
                    (Err(m), true) => prop_assert_eq!(&m.rule, "A4.14"),
                    (r, false) => prop_assert!(r.is_ok(), "move: {}", render(r)),
                    (Ok(_), true) => prop_assert!(false, "a move into a Known enemy's Location accepted"),
                }
                match (&routed, known) {
                    (Err(r), true) => prop_assert_eq!(&r.rule, "B8.62"),
                    (r, false) => prop_assert!(r.is_ok(), "rout: {}", outcome(r)),
                    (Ok(_), true) => prop_assert!(false, "a rout into a Known enemy's Location accepted"),
                }
            }
        }
    }
}

/// `case` with one German squad for mover, carrying nothing, as a broken unit routs alone.
fn lone_squad(mut case: Case) -> Case {
    case.squads = 1;
    case.half_squads = 0;
    case.leader = false;
    case.hero = false;
    case.inexperienced = false;
    case.pp.clear();
    case
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A rout step into a Location is the act of entering it (A10.5): where a Good Order
    /// squad's `move` from beside it is refused, stopped or accepted, a broken squad's `rout`
    /// from the same hex in the RtPh is too — same rule, kind and words, same cost, the same
    /// concealed units revealed — except where the rout's own rules differ: its six MF against
    /// the MPh's four, and A10.51, which bars a Known enemy's Location (broken, upstairs or a
    /// vehicle too) before any other rule is asked.
    #[test]
    fn routing_into_a_location_is_entering_it(case in case().prop_map(lone_squad)) {
        let toml = scenario(&case, false);
        let mover = "id = \"gs0\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1I3\"\n";
        prop_assert!(toml.contains(mover), "{toml}");
        let routing_toml = toml.replace(mover, &format!("{mover}morale = \"broken\"\n"));
        let (Some(moving), Some(routing)) = (at_movement_phase(&toml), at_movement_phase(&routing_toml)) else {
            prop_assert!(Scenario::from_toml(&toml).is_err());
            return Ok(());
        };
        let mut routing = after_done(routing, &[Side::A, Side::B, Side::A]).expect("play reaches the RtPh");
        prop_assert_eq!(routing.clock.phase(), protocol::phase::Phase::Rout);
        // Only a unit under Desperation Morale routs (A10.62): this one is, as if it broke this
        // Player Turn.
        protocol::apply(
            &mut routing,
            &Event::DesperationMoraleMarked(DesperationMoraleMarked { units: vec!["gs0".into()], why: "broke".into() }),
        );
        let to: Hex = TARGET.parse().unwrap();
        let moved = decide(&moving, Side::A, &Command::Move { units: vec!["gs0".into()], to }, &mut ScriptedDice::default());
        let routed = decide(&routing, Side::A, &Command::Rout { unit: "gs0".into(), to, morale: Some(8) }, &mut ScriptedDice::default());
        let not_modelled = matches!(&moved, Err(m) if m.kind == ViolationKind::NotModelled && m.rule != "A4.14" && m.rule != "D7");
        let known = matches!(case.enemy, Enemy::Known | Enemy::Broken | Enemy::Upstairs | Enemy::Vehicle);
        if known && !not_modelled {
            prop_assert!(matches!(&routed, Err(v) if v.rule == "A10.51"), "rout: {}", render(&routed));
            return Ok(());
        }
        let short = |r: &Result<Vec<Event>, protocol::RuleViolation>| {
            matches!(r, Err(v) if v.kind == ViolationKind::NotEnoughMf)
        };
        match (&moved, &routed) {
            (Ok(m), Ok(r)) => {
                let (m, r) = (came(m), came(r));
                prop_assert_eq!(
                    (m.stopped, &m.cost, &m.revealed, &m.dummies_removed),
                    (r.stopped, &r.cost, &r.revealed, &r.dummies_removed)
                );
            }
            // Six MF reach farther than four, never less far.
            (Err(_), Ok(_)) if short(&moved) => {}
            // One MF accounting (`movement::pay`): the same words but for the MF each has and
            // the rule that grants them (A4.1, A10.5); an all-MF entry cites its terrain alike.
            (Err(m), Err(r)) if short(&moved) && short(&routed) => {
                if m.rule == "A4.1" {
                    prop_assert_eq!(&r.rule, "A10.5", "{} / {}", m.detail, r.detail);
                    let before = |d: &str| d.split(" has ").next().map(str::to_string);
                    prop_assert_eq!(before(&m.detail), before(&r.detail));
                } else {
                    prop_assert_eq!(&m.rule, &r.rule);
                    prop_assert_eq!(&m.detail, &r.detail);
                }
            }
            (Err(m), Err(r)) => {
                prop_assert_eq!(&m.rule, &r.rule, "{} / {}", m.detail, r.detail);
                prop_assert_eq!(m.kind, r.kind);
                prop_assert_eq!(&m.detail, &r.detail);
            }
            _ => prop_assert!(false, "move: {}\nrout: {}", render(&moved), render(&routed)),
        }
    }
}
