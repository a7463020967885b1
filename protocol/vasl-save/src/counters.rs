//! What a VASL counter is, for this engine: a unit (squad, half-squad, crew, leader, hero)
//! with its side and ratings, a support weapon, a "?" concealment counter, a marker the game
//! keeps itself, or something it does not model. Read from the piece as VASL saved it.
//!
//! A counter's ratings are those of its **active layer**, not of the palette entry it came
//! from: VASL's "4-6-8 Esq" carries the ELR replacements of the squad (4-6-7, 4-4-7, 4-3-6)
//! as layers, and a player who set it to its second layer has a 4-6-7 on the map; a leader's
//! morale and modifier are its layers likewise. The layer's name (which VASSAL shows as the
//! piece's name) is where the ratings are read.

use super::save::{Layer, Piece};
use board::scenario::{Morale, UnitKind};

/// Nationalities VASL prefixes its counters with, the army each belongs to, and the
/// alliance used to pair armies into two sides when a save holds more than two.
pub const NATIONALITIES: &[Nationality] = &[
    Nationality::new("ge", "german", "German", Alliance::Axis),
    Nationality::new("ss", "german", "German", Alliance::Axis),
    Nationality::new("it", "italian", "Italian", Alliance::Axis),
    Nationality::new("ja", "japanese", "Japanese", Alliance::Axis),
    Nationality::new("fi", "finnish", "Finnish", Alliance::Axis),
    Nationality::new("hu", "hungarian", "Hungarian", Alliance::Axis),
    Nationality::new("sk", "slovakian", "Slovakian", Alliance::Axis),
    Nationality::new("ax", "axis-minor", "Axis Minor", Alliance::Axis),
    Nationality::new("nk", "north-korean", "North Korean", Alliance::Axis),
    Nationality::new(
        "cc",
        "chinese-communist",
        "Chinese Communist",
        Alliance::Axis,
    ),
    Nationality::new("ru", "russian", "Russian", Alliance::Allied),
    Nationality::new("am", "american", "American", Alliance::Allied),
    Nationality::new("br", "british", "British", Alliance::Allied),
    Nationality::new("fr", "french", "French", Alliance::Allied),
    Nationality::new("ch", "chinese", "Chinese", Alliance::Allied),
    Nationality::new("al", "allied-minor", "Allied Minor", Alliance::Allied),
    Nationality::new("pa", "partisan", "Partisan", Alliance::Allied),
    Nationality::new("un", "un", "United Nations", Alliance::Allied),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Alliance {
    Axis,
    Allied,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nationality {
    /// VASL's prefix (`ge` in `ge/ge467S`, `geLDR`).
    pub prefix: &'static str,
    /// The side id a scenario gets for this army.
    pub army: &'static str,
    /// The side's name shown to players.
    pub army_name: &'static str,
    pub alliance: Alliance,
}

impl Nationality {
    const fn new(
        prefix: &'static str,
        army: &'static str,
        army_name: &'static str,
        alliance: Alliance,
    ) -> Nationality {
        Nationality {
            prefix,
            army,
            army_name,
            alliance,
        }
    }

    pub fn of_prefix(prefix: &str) -> Option<&'static Nationality> {
        NATIONALITIES.iter().find(|n| n.prefix == prefix)
    }
}

/// Support weapons the engine carries (A4.4 portage), by the name VASL gives the counter,
/// with the portage cost printed on the common counters. Where a nationality's counter
/// prints another cost, the scenario file is the place to correct it.
pub const SUPPORT_WEAPONS: &[(&str, u8)] = &[
    ("LMG", 1),
    ("MMG", 2),
    ("HMG", 3),
    ("DC", 1),
    ("FT", 1),
    ("ATR", 1),
    ("PSK", 1),
    ("BAZ", 1),
    ("PIAT", 1),
    ("Radio", 1),
];

/// Markers the game keeps itself (turn, CVP, sniper …): named as ignored, never reported as
/// not understood. Matched against the start of the counter's name.
pub const KEPT_BY_THE_GAME: &[&str] = &[
    "Game Turn",
    "Turn",
    "Allied CVP",
    "Axis CVP",
    "Phase Track",
    "10-Turn Track",
    "Reinf.",
];

/// What one counter is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Counter {
    Unit {
        nationality: &'static Nationality,
        kind: UnitKind,
        ratings: String,
        morale: Morale,
        /// The name VASL shows (`4-6-7 1sq`, `9-1`): kept for the report and the file's
        /// comments.
        name: String,
        /// A squad's half-squad as its piece names it (`half_squad_of`), for Casualty
        /// Reduction (A7.302).
        half_squad: Option<String>,
    },
    Weapon {
        nationality: Option<&'static Nationality>,
        name: String,
        pp: u8,
        malfunctioned: bool,
    },
    /// A "?" counter of a nationality: it conceals that nationality's units beneath it, or is
    /// a Dummy where none is beneath it (A12).
    Concealment { nationality: &'static Nationality },
    /// A counter of a known nationality the engine does not rule on — a vehicle, a Gun, an
    /// armor leader, a dismantled weapon: it comes into the game as a counter
    /// (`UnitKind::Counter`) named by what it prints, so nothing on the card is dropped.
    Other {
        nationality: &'static Nationality,
        /// `veh`, `gun` or `ctr`: the stem of its id.
        tag: &'static str,
        name: String,
    },
    /// A marker the game keeps itself (turn, CVP, sniper): ignored.
    KeptByTheGame { name: String },
    /// Anything else: vehicles, Guns, fortifications, markers the engine lacks, counters of
    /// nationalities it does not know. `what` says which.
    NotUnderstood { what: String },
}

/// The nationality a piece belongs to: its Concealable trait's (the surest: VASL names it
/// there), else the folder of its images, else the prefix of its name (`geLDR`).
pub fn nationality_of(piece: &Piece) -> Option<&'static Nationality> {
    let from_trait = piece
        .traits_of("conceal")
        .next()
        .and_then(|t| t.fields().get(2).cloned());
    let from_images = std::iter::once(piece.image.clone()).chain(
        piece
            .layers()
            .into_iter()
            .flat_map(|l| l.images.into_iter()),
    );
    from_trait
        .into_iter()
        .chain(from_images.filter_map(|i| i.split('/').next().map(|s| s.to_string())))
        .chain(std::iter::once(piece.name.chars().take(2).collect()))
        .find_map(|p| Nationality::of_prefix(p.trim()))
}

/// What a piece is. `counter_type` tells units from weapons from game markers where VASL
/// sets it.
pub fn classify(piece: &Piece) -> Counter {
    let shown = piece.shown_name();
    let nationality = nationality_of(piece);
    if let Some(prefix) = piece.concealment_of() {
        return match Nationality::of_prefix(&prefix).or(nationality) {
            Some(nationality) => Counter::Concealment { nationality },
            None => Counter::NotUnderstood {
                what: format!("\"?\" counter of nationality `{prefix}`"),
            },
        };
    }
    if let Some(kept) = KEPT_BY_THE_GAME
        .iter()
        .find(|k| piece.name.starts_with(**k))
        .map(|_| piece.name.clone())
        .or_else(|| {
            (piece.name.ends_with("Sniper") || piece.name.contains("Turn Track"))
                .then(|| piece.name.clone())
        })
    {
        return Counter::KeptByTheGame { name: kept };
    }
    if let Some(pp) = weapon_pp(&piece.name) {
        return Counter::Weapon {
            nationality,
            name: piece.name.clone(),
            pp,
            malfunctioned: shown.starts_with("malf"),
        };
    }
    let (morale, rest) = morale_and_name(&shown);
    if let Some(unit) = infantry(piece, rest) {
        if let Some(nationality) = nationality {
            let (kind, ratings) = unit;
            let half_squad = (kind == UnitKind::Squad)
                .then(|| {
                    half_squad_of(piece)
                        .or_else(|| table_half_squad(nationality, &ratings).map(String::from))
                })
                .flatten();
            return Counter::Unit {
                nationality,
                kind,
                ratings,
                morale,
                name: rest.to_string(),
                half_squad,
            };
        }
        return Counter::NotUnderstood {
            what: format!("{shown} (nationality not known)"),
        };
    }
    let images: Vec<String> = std::iter::once(piece.image.clone())
        .chain(
            piece
                .layers()
                .iter()
                .filter_map(|l| l.active_image().map(String::from)),
        )
        .collect();
    // Vehicles and Guns by their palette name: their layers only add states (BU, CA).
    let (tag, what) = if images.iter().any(|i| i.contains("/veh/")) {
        ("veh", format!("vehicle {}", piece.name))
    } else if images.iter().any(|i| i.contains("/gun/")) {
        ("gun", format!("Gun {}", piece.name))
    } else if piece.counter_type() == Some("global") {
        return Counter::NotUnderstood {
            what: format!("marker {shown}"),
        };
    } else {
        ("ctr", shown.clone())
    };
    match nationality {
        // A vehicle or Gun is named by its palette name; anything else (an armor leader, a
        // dismantled weapon) by what it shows.
        Some(nationality) => Counter::Other {
            nationality,
            tag,
            name: if tag == "ctr" {
                shown
            } else {
                piece.name.clone()
            },
        },
        None => Counter::NotUnderstood { what },
    }
}

fn weapon_pp(name: &str) -> Option<u8> {
    // `LMG(f)`, `MMG (r)`: captured weapons keep their type; `BAZ44`: the year of the model.
    let base = name.split(['(', ' ']).next().unwrap_or(name);
    SUPPORT_WEAPONS
        .iter()
        .find(|(w, _)| base == *w || (*w == "BAZ" && base.starts_with("BAZ")))
        .map(|(_, pp)| *pp)
}

/// Broken and Berserk are layers that put a word before the name ("broken 4-6-7 1sq").
fn morale_and_name(shown: &str) -> (Morale, &str) {
    let mut name = shown.trim();
    let mut morale = Morale::GoodOrder;
    loop {
        if let Some(rest) = name.strip_prefix("broken ") {
            morale = Morale::Broken;
            name = rest.trim_start();
        } else if let Some(rest) = name.strip_prefix("Berserk ") {
            morale = Morale::Berserk;
            name = rest.trim_start();
        } else if let Some(rest) = name.strip_prefix("Fanatic ") {
            name = rest.trim_start();
        } else {
            return (morale, name);
        }
    }
}

/// Kind and ratings of an infantry counter from its shown name: `4-6-7 1sq` (squad),
/// `2-4-8 Ehs` (half-squad), `2-2-8 Icr` (crew), a leader's `9-1` or `6+1` on a piece named
/// `…LDR…` (or a Commissar's, `ruCOM`, a leader with rules of his own, A25.22), a hero on a
/// piece named `…Hero`.
fn infantry(piece: &Piece, shown: &str) -> Option<(UnitKind, String)> {
    if piece.name.contains("LDR") || piece.name.ends_with("COM") {
        let ratings = shown.split_whitespace().next()?;
        return leader_ratings(ratings).then(|| (UnitKind::Leader, ratings.to_string()));
    }
    if piece.name.ends_with("Hero") || piece.name == "Hero" {
        // The standard Hero counter prints 1-4-9.
        return Some((UnitKind::Hero, "1-4-9".to_string()));
    }
    let mut words = shown.split_whitespace();
    let ratings = words.next()?;
    let class = words.last()?;
    let figures: Vec<&str> = ratings.split('-').collect();
    let ok = figures.len() == 3
        && figures
            .iter()
            .all(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    if !ok {
        return None;
    }
    let kind = if class.ends_with("sq") {
        UnitKind::Squad
    } else if class.ends_with("hs") {
        UnitKind::HalfSquad
    } else if class.ends_with("cr") {
        UnitKind::Crew
    } else {
        return None;
    };
    Some((kind, ratings.to_string()))
}

/// The half-squad a squad's piece names (A7.302). VASL's squad counter carries its
/// half-squads as a layer stepped together with the layer of its own ratings (its ELR
/// replacements: the same key, as many levels), level for level: the 4-6-8 Esq's levels
/// 4-6-8, 4-6-7, 4-4-7, 4-3-6 beside 2-4-8, 2-4-7, 2-3-7, 2-3-6. The half-squad is the level
/// of that layer matching the squad's shown level. `None` where the piece has no such pair.
pub fn half_squad_of(piece: &Piece) -> Option<String> {
    let layers = piece.layers();
    let all_of = |l: &Layer, class: &str| {
        !l.names.is_empty() && l.names.iter().all(|n| mmc_ratings(n, class).is_some())
    };
    let squad = layers
        .iter()
        .find(|l| l.level.is_some() && all_of(l, "sq"))?;
    let half = layers.iter().find(|l| {
        !l.step_key.is_empty()
            && l.step_key == squad.step_key
            && l.names.len() == squad.names.len()
            && all_of(l, "hs")
    })?;
    mmc_ratings(half.names.get(squad.level? - 1)?, "hs").map(String::from)
}

/// The half-squad `board::half_squads` lists for a squad of this nationality and ratings, for
/// a piece that names none itself. Only VASL's own German (`ge`), Russian and American
/// counters are the table's: an SS squad (`ss`), say, is an army's too but not its counters.
fn table_half_squad(nationality: &Nationality, ratings: &str) -> Option<&'static str> {
    let table = match nationality.prefix {
        "ge" => "german",
        "ru" => "russian",
        "am" => "american",
        _ => return None,
    };
    board::half_squads::half_squad(table, ratings)
}

/// The ratings of a layer's name that reads as an MMC of `class` (`2-4-7 1hs` for `hs`).
fn mmc_ratings<'a>(name: &'a str, class: &str) -> Option<&'a str> {
    let mut words = name.split_whitespace();
    let ratings = words.next()?;
    let figures: Vec<&str> = ratings.split('-').collect();
    let ok = figures.len() == 3
        && figures
            .iter()
            .all(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    (ok && words.last()?.ends_with(class)).then_some(ratings)
}

/// `9-1`, `10-2`, `8-0`, `6+1`: morale, then a sign, then the leadership modifier.
fn leader_ratings(s: &str) -> bool {
    let Some(at) = s.get(1..).and_then(|t| t.find(['-', '+'])).map(|i| i + 1) else {
        return false;
    };
    let (morale, modifier) = (&s[..at], &s[at + 1..]);
    !morale.is_empty()
        && morale.bytes().all(|b| b.is_ascii_digit())
        && !modifier.is_empty()
        && modifier.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::save::{parse, writer};

    /// A piece in the real encoding: `traits` outermost first, the basic piece last.
    pub(crate) fn piece_of(traits: &[(&str, &str)]) -> Piece {
        let text = writer::saved_game_text(&[writer::piece_command("1", traits)]);
        parse(&text).unwrap().pieces.remove(0)
    }

    pub(crate) const GE_CONCEAL: (&str, &str) = ("conceal;C;ge/geqmark;ge;;", "null;");

    pub(crate) fn squad_layers(level: i32, broken: bool) -> Vec<(String, String)> {
        vec![
            ("mark;DBCounterType".into(), "unit".into()),
            (GE_CONCEAL.0.into(), GE_CONCEAL.1.into()),
            (
                "emb2;;2;F;;2;E;;2;Q;;;0;false;0;0;ge/ges8b,ge/ges7b;broken +,broken +;false;BRK;;;false;;1;1;false;70,130;69,130".into(),
                if broken { level.to_string() } else { (-level).to_string() },
            ),
            (
                "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ge/ge468S,ge/ge467S,ge/ge447S;4-6-8 Esq,4-6-7 1sq,4-4-7 2sq;false;;;;false;;1;1;true;;69,130".into(),
                level.to_string(),
            ),
            ("piece;K;D; ;4-6-8 Esq".into(), "Main Map;0;0;1".into()),
        ]
    }

    fn of(traits: &[(String, String)]) -> Counter {
        let refs: Vec<(&str, &str)> = traits
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        classify(&piece_of(&refs))
    }

    #[test]
    fn a_squad_has_the_ratings_of_its_active_layer() {
        match of(&squad_layers(2, false)) {
            Counter::Unit {
                nationality,
                kind,
                ratings,
                morale,
                ..
            } => {
                assert_eq!(nationality.army, "german");
                assert_eq!(kind, UnitKind::Squad);
                assert_eq!(ratings, "4-6-7", "layer 2 of a 4-6-8 Esq is a 4-6-7");
                assert_eq!(morale, Morale::GoodOrder);
            }
            other => panic!("{other:?}"),
        }
        match of(&squad_layers(1, true)) {
            Counter::Unit {
                ratings, morale, ..
            } => {
                assert_eq!(ratings, "4-6-8");
                assert_eq!(morale, Morale::Broken);
            }
            other => panic!("{other:?}"),
        }
    }

    /// The half-squads layer of the 4-6-8 Esq as VASL defines it: stepped by `E`, as the
    /// squad's own layer is, one level for each of its levels.
    const HALF_SQUADS: &str = "emb2;;2;V;;2;E;;2;Q;;;0;false;0;0;ge/ge248H,ge/ge247H,ge/ge237H;2-4-8 Ehs,2-4-7 1hs,2-3-7 2hs;false;;;;false;;1;1;false;86,130;69,130";

    fn with_half_squads(level: i32, half_squads: &str) -> Vec<(String, String)> {
        let mut traits = squad_layers(level, false);
        traits.insert(2, (half_squads.into(), (-level).to_string()));
        traits
    }

    /// A squad's half-squad is the level of the half-squads layer matching its own (A7.302).
    #[test]
    fn a_squad_names_its_half_squad_level_for_level() {
        for (level, squad, half) in [
            (1, "4-6-8", "2-4-8"),
            (2, "4-6-7", "2-4-7"),
            (3, "4-4-7", "2-3-7"),
        ] {
            match of(&with_half_squads(level, HALF_SQUADS)) {
                Counter::Unit {
                    kind,
                    ratings,
                    half_squad,
                    ..
                } => {
                    assert_eq!(kind, UnitKind::Squad);
                    assert_eq!(ratings, squad);
                    assert_eq!(half_squad.as_deref(), Some(half), "level {level}");
                }
                other => panic!("{other:?}"),
            }
        }
        // No half-squads layer, one stepped by another key, or one of other levels: the piece
        // names none, and the table's (`board::half_squads`) is taken — for the German 4-6-7,
        // a 2-4-7; the table knows no German 4-5-7, so that one has none.
        let other_key = HALF_SQUADS.replacen(";2;E;;", ";2;X;;", 1);
        let fewer = HALF_SQUADS
            .replace(",ge/ge237H", "")
            .replace(",2-3-7 2hs", "");
        let unlisted: Vec<(String, String)> = squad_layers(2, false)
            .into_iter()
            .map(|(t, s)| (t.replace("4-6-7 1sq", "4-5-7 1sq"), s))
            .collect();
        for (traits, want) in [
            (squad_layers(2, false), Some("2-4-7")),
            (with_half_squads(2, &other_key), Some("2-4-7")),
            (with_half_squads(2, &fewer), Some("2-4-7")),
            (unlisted, None),
        ] {
            match of(&traits) {
                Counter::Unit { half_squad, .. } => assert_eq!(half_squad.as_deref(), want),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn leaders_take_morale_and_modifier_from_their_layer() {
        let layers = "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ge/geL103,ge/geL92,ge/geL81,ge/geL61;10-3,9-2,8-1,6\\+1;false;;;;false;;1;1;true;;69,130";
        for (level, want) in [("1", "10-3"), ("3", "8-1"), ("4", "6+1")] {
            let c = classify(&piece_of(&[
                GE_CONCEAL,
                (layers, level),
                ("piece;K;D; ;geLDR", "Main Map;0;0;1"),
            ]));
            match c {
                Counter::Unit { kind, ratings, .. } => {
                    assert_eq!(kind, UnitKind::Leader);
                    assert_eq!(ratings, want);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// A Commissar (`ruCOM`) is a leader with his ratings on his layer (A25.22).
    #[test]
    fn a_commissar_is_a_leader() {
        let layers = "emb2;;2;;ELR;2;E;BH;2;Q;;;0;false;0;0;ru/ruCOM10,ru/ruCOM9;10-1,9-0;false;;;;false;;1;1;true;;69,130";
        let c = classify(&piece_of(&[
            ("conceal;C;ru/ruqmark;ru;;", "null;"),
            (layers, "2"),
            ("piece;K;D; ;ruCOM", "Main Map;0;0;1"),
        ]));
        assert!(
            matches!(&c, Counter::Unit { kind: UnitKind::Leader, ratings, nationality, .. } if ratings == "9-0" && nationality.prefix == "ru"),
            "{c:?}"
        );
    }

    #[test]
    fn crews_half_squads_and_heroes() {
        let crew = classify(&piece_of(&[
            GE_CONCEAL,
            ("piece;K;D;ge/ge228C;2-2-8 Icr", "Main Map;0;0;1"),
        ]));
        assert!(
            matches!(crew, Counter::Unit { kind: UnitKind::Crew, ref ratings, .. } if ratings == "2-2-8")
        );
        let hs = classify(&piece_of(&[
            ("conceal;C;ru/ruqmark;ru;;", "null;"),
            ("piece;K;D;ru/ru237H;2-3-7 1hs", "Main Map;0;0;1"),
        ]));
        assert!(
            matches!(hs, Counter::Unit { kind: UnitKind::HalfSquad, nationality, .. } if nationality.army == "russian")
        );
        let hero = classify(&piece_of(&[("piece;K;D;am/amHero;Hero", "Main Map;0;0;1")]));
        assert!(
            matches!(hero, Counter::Unit { kind: UnitKind::Hero, nationality, .. } if nationality.army == "american")
        );
    }

    #[test]
    fn weapons_markers_and_the_rest() {
        let mmg = classify(&piece_of(&[
            ("mark;DBCounterType", "common"),
            GE_CONCEAL,
            ("piece;K;D;ge/geMMG;MMG", "Main Map;0;0;1"),
        ]));
        assert!(matches!(mmg, Counter::Weapon { pp: 2, ref name, .. } if name == "MMG"));
        assert_eq!(weapon_pp("LMG(f)"), Some(1));
        assert_eq!(weapon_pp("BAZ44"), Some(1));
        assert_eq!(weapon_pp("MMG Cupola"), Some(2));
        let turn = classify(&piece_of(&[("piece;;D; ;Game Turn", "Main Map;0;0;1")]));
        assert!(matches!(turn, Counter::KeptByTheGame { .. }));
        for kept in ["GE Sniper", "8-Turn Track", "Axis CVP Count"] {
            let c = classify(&piece_of(&[(
                &format!("piece;K;D; ;{kept}"),
                "Main Map;0;0;1",
            )]));
            assert!(matches!(c, Counter::KeptByTheGame { .. }), "{kept}");
        }
        let tank = classify(&piece_of(&[
            ("mark;DBCounterType", "unit"),
            GE_CONCEAL,
            (
                "emb2;;2;;;2;B;;2;;;;0;false;0;0; , ;+ BU,+ CE;true;;;;false;;1;1;true;;66,130;",
                "1",
            ),
            ("piece;K;D;ge/veh/pzivh;PzKw IVH", "Main Map;0;0;1"),
        ]));
        assert!(
            matches!(&tank, Counter::Other { nationality, tag: "veh", name } if nationality.prefix == "ge" && name == "PzKw IVH"),
            "{tank:?}"
        );
        let gun = classify(&piece_of(&[
            GE_CONCEAL,
            ("piece;K;D;ge/gun/geAT75L;75L AT PaK 40", "Main Map;0;0;1"),
        ]));
        assert!(
            matches!(&gun, Counter::Other { tag: "gun", name, .. } if name == "75L AT PaK 40"),
            "{gun:?}"
        );
        // An armor leader: a counter of its nationality the engine does not rule on.
        let al = classify(&piece_of(&[
            GE_CONCEAL,
            ("piece;K;D;ge/geal91;9-1 AL", "Main Map;0;0;1"),
        ]));
        assert!(
            matches!(&al, Counter::Other { tag: "ctr", name, .. } if name == "9-1 AL"),
            "{al:?}"
        );
        // Of no nationality known: reported, not imported.
        let stray = classify(&piece_of(&[(
            "piece;K;D;xx/veh/thing;Thing",
            "Main Map;0;0;1",
        )]));
        assert!(matches!(stray, Counter::NotUnderstood { .. }), "{stray:?}");
        let q = classify(&piece_of(&[
            ("concealment;alice;ru", ""),
            ("piece;K;D;ru/ruqmark58;?", "Main Map;0;0;"),
        ]));
        assert!(matches!(q, Counter::Concealment { nationality } if nationality.prefix == "ru"));
        let ec = classify(&piece_of(&[
            ("mark;DBCounterType", "global"),
            ("piece;K;D; ;EC", "Main Map;0;0;1"),
        ]));
        assert_eq!(
            ec,
            Counter::NotUnderstood {
                what: "marker EC".into()
            }
        );
    }

    #[test]
    fn leader_ratings_are_recognised() {
        for ok in ["9-1", "10-2", "8-0", "6+1"] {
            assert!(leader_ratings(ok), "{ok}");
        }
        for bad in ["", "9", "-1", "9-", "a-1", "4-6-7", "é-1"] {
            assert!(!leader_ratings(bad), "{bad}");
        }
    }
}
