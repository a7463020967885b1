//! The position runner both the positions' test and the coverage matrix's use: a script names
//! its scenario and states the outcome of each command (`=> ok …` / `=> refused RULE`); it is
//! played through `decide`/`apply`, failing with the position when an expectation does not hold.

use protocol::game::Game;
use protocol::script::{self, Action, OfflineRun};
use protocol::ReadScenario;
use protocol::Scenario;
use std::path::Path;

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

/// Plays one script; the number of lines it checked, or why it failed.
pub fn run(path: &Path) -> Result<usize, String> {
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
