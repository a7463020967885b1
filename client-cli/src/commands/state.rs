//! `asl state`: print where the game stands, as the token's holder may see it.

use super::{join_fresh, side_to_act, GameArgs, ServerArg};
use crate::{Failure, Status};
use protocol::game::Unit;
use protocol::scenario::Morale;
use protocol::{Game, StateHash, Viewer};
use std::io::Write;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct StateArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// Print the game (this viewer's projection) as JSON instead.
    #[arg(long)]
    pub json: bool,
}

pub async fn state(args: &StateArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let (connection, joined, follower) = join_fresh(&args.server, &args.game).await?;
    connection.close().await;
    let game = follower.game();
    if args.json {
        let json = serde_json::to_string_pretty(game).expect("a game always encodes");
        writeln!(out, "{}", crate::printable_json(&json))?;
    } else {
        let text = describe_timed(
            game,
            joined.viewer,
            joined.state_hash,
            joined.owner.as_deref(),
            joined.clocks.as_ref(),
        );
        write!(out, "{text}")?;
    }
    Ok(Status::Success)
}

/// `describe_timed` for a game without a time control.
#[cfg(test)]
fn describe(game: &Game, viewer: Viewer, hash: StateHash, owner: Option<&str>) -> String {
    describe_timed(game, viewer, hash, owner, None)
}

/// The position in words, then the units as a table. `owner`: the server node that owns the
/// game's writer, when the server names it; `clocks`: both clocks as the server told them, in
/// a game with a time control.
fn describe_timed(
    game: &Game,
    viewer: Viewer,
    hash: StateHash,
    owner: Option<&str>,
    clocks: Option<&protocol::game::timing::ClockView>,
) -> String {
    let clock = game.clock;
    let step = clock.step();
    let phase = clock.phase();
    let viewer = match viewer {
        Viewer::Side(side) => game.side_name(side).to_string(),
        Viewer::Spectator => "Spectator".to_string(),
    };
    let to_act = if game.over {
        "nobody: the game is over".to_string()
    } else {
        game.side_name(side_to_act(game)).to_string()
    };
    let facts = [
        ("Scenario", game.scenario.name.clone()),
        ("Viewing as", viewer),
        (
            "Game Turn",
            format!("{} of {}", clock.turn, game.scenario.turns),
        ),
        ("Player Turn", format!("{} of 2", clock.player_turn)),
        (
            "Phase",
            match &game.setup {
                // Before Turn 1 the game is in its set-up step (A12.12), not in the RPh.
                Some(turn) => format!(
                    "set-up step before Turn 1 (A12.12): the {} sets up",
                    game.side_name(turn.side)
                ),
                None => format!(
                    "{phase} ({}), step {} ({})",
                    phase.rule(),
                    step.name,
                    step.rule
                ),
            },
        ),
        ("ATTACKER", game.side_name(game.attacker()).to_string()),
        ("To act", to_act),
        (
            "End offered",
            match game.end_proposal {
                Some(by) if !game.over => {
                    format!("by the {} (accept-end agrees)", game.side_name(by))
                }
                _ => "no".into(),
            },
        ),
        ("Version", game.version.to_string()),
        ("State hash", hash.to_string()),
    ];
    let clocks = clocks.map(|view| {
        let sides = protocol::Side::BOTH.map(|s| game.side_name(s).to_string());
        (
            "Clocks",
            format!(
                "{} ({})",
                super::games::clocks_text(&sides, view),
                crate::printable(&view.control)
            ),
        )
    });
    let owner = owner.map(|node| ("Owner node", node.to_string()));
    let mut s = String::new();
    for (label, value) in facts.into_iter().chain(clocks).chain(owner) {
        s += &format!("{:<12} {value}\n", format!("{label}:"));
    }
    s.push('\n');
    let mut rows = vec![[
        "UNIT",
        "SIDE",
        "KIND",
        "RATINGS",
        "HEX",
        "MORALE",
        "PINNED",
        "MF SPENT",
        "ELIMINATED",
        "WA",
        "CARRIES",
        "SEEN AS",
    ]
    .map(String::from)
    .to_vec()];
    rows.extend(game.units.values().map(|u| unit_row(game, u)));
    s += &table(&rows);
    let loose: Vec<Vec<String>> = game
        .weapons
        .values()
        .filter(|w| w.held_by.is_none())
        .map(|w| {
            vec![
                w.id.clone(),
                w.name.clone(),
                w.pp.to_string(),
                w.hex.to_string(),
            ]
        })
        .collect();
    if !loose.is_empty() {
        s += "\nSupport weapons lying unpossessed (A4.44):\n";
        let mut rows = vec![["WEAPON", "NAME", "PP", "HEX"].map(String::from).to_vec()];
        rows.extend(loose);
        s += &table(&rows);
    }
    s
}

/// The support weapons `unit` possesses (A4.43), as `id (name, PP)`.
fn carried(game: &Game, unit: &Unit) -> String {
    let held: Vec<String> = game
        .weapons
        .values()
        .filter(|w| w.held_by.as_ref() == Some(&unit.id))
        .map(|w| format!("{} ({}, {} PP)", w.id, w.name, w.pp))
        .collect();
    if held.is_empty() {
        "-".into()
    } else {
        held.join(", ")
    }
}

/// How the opponent sees the unit: "hidden" (HIP, A12.3: not on the board for them),
/// "concealed" (a "?" they cannot look under, A12), or "in view". Only its owner's view
/// carries the first two for its own units; an opponent's hidden units are not in the view.
fn seen_as(unit: &Unit) -> &'static str {
    if unit.hidden {
        "hidden"
    } else if unit.concealed {
        "concealed"
    } else {
        "in view"
    }
}

fn unit_row(game: &Game, unit: &Unit) -> Vec<String> {
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    let morale = match unit.morale {
        Morale::GoodOrder => "good order",
        // The DM counter on a broken unit (A10.62), which both sides see.
        Morale::Broken if unit.desperation => "broken, DM",
        Morale::Broken => "broken",
        Morale::Berserk => "berserk",
    };
    vec![
        unit.id.clone(),
        game.side_name(unit.side).to_string(),
        unit.kind.name().to_string(),
        unit.ratings.clone(),
        unit.hex.to_string(),
        morale.to_string(),
        yes_no(unit.pinned),
        unit.mf_spent.to_string(),
        yes_no(unit.eliminated),
        yes_no(unit.wall_advantage),
        carried(game, unit),
        seen_as(unit).to_string(),
    ]
}

/// Left-aligned columns two spaces apart, with no trailing spaces. Widths count characters,
/// not bytes, so `1½` lines up.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for row in rows {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            line += &format!("{cell:<width$}  ");
        }
        s += line.trim_end();
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::script::{parse_script, run_offline};
    use protocol::ReadScenario;
    use protocol::Scenario;

    #[test]
    fn table_aligns_columns_by_characters() {
        let rows = vec![
            vec!["UNIT".to_string(), "MF".to_string(), "X".to_string()],
            vec!["467a".to_string(), "1½".to_string(), "yes".to_string()],
        ];
        assert_eq!(table(&rows), "UNIT  MF  X\n467a  1½  yes\n");
    }

    #[test]
    fn describes_the_clock_and_every_unit() {
        let game = Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap(),
        );
        let text = describe(&game, Viewer::Spectator, game.state_hash(), None);
        assert!(
            text.contains("Scenario:    B9.41: Wall Advantage at 55H6\n"),
            "{text}"
        );
        assert!(text.contains("Game Turn:   1 of 2\n"), "{text}");
        assert!(
            text.contains("Phase:       RPh (A3.1), step RPh (A3.1)\n"),
            "{text}"
        );
        assert!(text.contains("ATTACKER:    German\n"), "{text}");
        assert!(text.contains("To act:      German\n"), "{text}");
        assert!(
            text.contains(&format!("State hash:  {}\n", game.state_hash())),
            "{text}"
        );
        assert!(
            text.contains("337a  Russian  half-squad  3-3-7    55I7  good order  no      0"),
            "{text}"
        );
        // The hash is hex and may itself contain "55": count the other lines only.
        let on_board_55 = text
            .lines()
            .filter(|l| l.contains("55") && !l.starts_with("State hash:"))
            .count();
        assert_eq!(on_board_55, 5, "{text}");
    }

    fn row_of(text: &str, id: &str) -> String {
        text.lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row for {id}:\n{text}"))
            .to_string()
    }

    /// The owner sees its hidden and concealed units marked as such, who holds WA and who
    /// carries what; the opponent's view does not show the hidden unit at all.
    #[test]
    fn the_owner_sees_its_hidden_units_wa_and_weapons() {
        let game = Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/village-outskirts.toml")).unwrap(),
        );
        let russian = game.project(Viewer::Side(protocol::Side::B));
        let text = describe(
            &russian,
            Viewer::Side(protocol::Side::B),
            russian.state_hash(),
            None,
        );
        let row = |id: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("{id} ")))
                .unwrap_or_else(|| panic!("no row for {id}:\n{text}"))
                .to_string()
        };
        assert!(text.contains("ELIMINATED  WA  CARRIES"), "{text}");
        assert!(row("r3").ends_with("hidden"), "{text}");
        assert!(row("r2").ends_with("concealed"), "{text}");
        assert!(row("r1").ends_with("in view"), "{text}");
        let german = game.project(Viewer::Side(protocol::Side::A));
        let text = describe(
            &german,
            Viewer::Side(protocol::Side::A),
            german.state_hash(),
            Some("node-a"),
        );
        assert!(text.contains("Owner node:  node-a\n"), "{text}");
        let view = protocol::game::timing::ClockView {
            control: "live:30m+30s".into(),
            at: 0,
            running: Some(protocol::Side::A),
            bank: [29 * 60_000, 30 * 60_000],
            vacation_left: [0, 0],
            on_vacation: [false, false],
            expired: None,
        };
        let text = describe_timed(
            &german,
            Viewer::Side(protocol::Side::A),
            german.state_hash(),
            None,
            Some(&view),
        );
        assert!(
            text.contains("Clocks:      German 29m (running), Russian 30m (live:30m+30s)\n"),
            "{text}"
        );
        assert!(!text.lines().any(|l| l.starts_with("r3 ")), "{text}");
        assert!(row_of(&text, "g1").contains("g-lmg (LMG, 1 PP)"), "{text}");
    }

    /// In the German MPh, the 4-6-7 leaving H5 gives the Russian a chance to claim WA (B9.322):
    /// nothing but the Russian's answer is accepted, so the Russian is the one to act.
    #[test]
    fn the_side_offered_wall_advantage_is_to_act() {
        let game = Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap(),
        );
        let script = "german done\ngerman done\ngerman move 467a H6\n";
        let lines = parse_script(script, &game.scenario).unwrap();
        let (game, reports) = run_offline(game, &lines);
        assert!(reports.iter().all(|r| r.result.is_ok()), "{reports:?}");
        let text = describe(&game, Viewer::Spectator, game.state_hash(), None);
        assert!(text.contains("ATTACKER:    German\n"), "{text}");
        assert!(text.contains("To act:      Russian\n"), "{text}");
    }
}
