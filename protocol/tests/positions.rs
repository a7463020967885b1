//! Rules tests as positions: every `positions/*.script` names its scenario, plays commands and
//! states the expected outcome of each (`=> ok …` / `=> refused RULE`). This runner plays them
//! through `decide`/`apply` and fails with the position when an expectation does not hold.

use protocol::game::Game;
use protocol::script::{self, Action, OfflineRun};
use protocol::Scenario;
use std::path::{Path, PathBuf};

fn scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/positions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("positions directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "script"))
        .collect();
    found.sort();
    found
}

fn position(game: &Game) -> String {
    let mut s = format!("  clock: {} (version {})\n", game.clock, game.version);
    for u in game.units.values() {
        s += &format!(
            "  {} {:?} {} in {} morale {:?} pinned {} mf_spent {} eliminated {}\n",
            u.id, u.side, u.ratings, u.hex, u.morale, u.pinned, u.mf_spent, u.eliminated
        );
    }
    s
}

fn run(path: &Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let scenario_path =
        script::scenario_directive(&text).ok_or("the script has no `scenario` line")?;
    let scenario_path = path.parent().unwrap().join(scenario_path);
    let scenario_text = std::fs::read_to_string(&scenario_path)
        .map_err(|e| format!("{}: {e}", scenario_path.display()))?;
    let scenario = Scenario::from_toml(&scenario_text).map_err(|e| e.to_string())?;
    let lines = script::parse_script(&text, &scenario).map_err(|e| e.to_string())?;
    if let Some(l) = lines
        .iter()
        .find(|l| matches!(l.action, Action::Command(_)) && l.expect.is_none())
    {
        return Err(format!(
            "line {}: every command in a position test states its expected outcome",
            l.line
        ));
    }
    let mut run = OfflineRun::new(Game::new(scenario));
    let mut checked = 0;
    for line in &lines {
        let before = run.game.clone();
        let Some(report) = run.step(line) else {
            continue;
        };
        if !report.failures.is_empty() {
            return Err(format!(
                "line {}: `{}`\n  {}\nposition before the line:\n{}",
                report.line,
                report.text,
                report.failures.join("\n  "),
                position(&before)
            ));
        }
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn every_position_holds() {
    let scripts = scripts();
    assert!(!scripts.is_empty(), "no position scripts found");
    let mut failures = vec![];
    for path in &scripts {
        match run(path) {
            Ok(n) => assert!(n > 0, "{} checks nothing", path.display()),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Every scenario shipped in `scenarios/` is valid: a newcomer's first `asl new` must work.
#[test]
fn every_shipped_scenario_reads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios directory") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            if let Err(e) = protocol::Scenario::from_toml(&text) {
                panic!("{}: {e}", path.display());
            }
            read += 1;
        }
    }
    assert!(
        read >= 2,
        "expected the shipped scenarios in {}",
        dir.display()
    );
}
