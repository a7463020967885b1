//! `asl check`: run a script offline against a scenario, with no server, through the same
//! `decide`/`apply` the server uses. This is how positions and rules examples are tested.

use crate::report::{LineOutcome, Tally};
use crate::{read_input, Failure, Status};
use protocol::record::words::describe_event;
use protocol::script::{parse_script, run_offline, scenario_directive};
use protocol::ReadScenario;
use protocol::{apply, Game, Scenario};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct CheckArgs {
    /// The script to check (see docs/script.md).
    pub script: PathBuf,
    /// The scenario to play it on; by default the one the script's `scenario` line names,
    /// relative to the script's directory.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Print one JSON object per line, then one with the counts, instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub boards: super::boards::BoardsArg,
}

pub fn check(args: &CheckArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let text = read_input(&args.script)?;
    let scenario_path = scenario_path(&args.script, &text, args.scenario.as_deref())?;
    let boards = args.boards.open()?;
    let scenario = Scenario::from_toml_on(&read_input(&scenario_path)?, boards.as_deref())
        .map_err(|e| Failure::Input(e.in_file(&scenario_path.display().to_string())))?;
    let lines = parse_script(&text, &scenario).map_err(|e| {
        Failure::Input(format!(
            "{}:{}: {}",
            args.script.display(),
            e.line,
            e.message
        ))
    })?;

    let game = Game::new(scenario);
    // `run_offline` applies each accepted line's events and nothing else; replaying the same
    // events on `trace` gives the position before each one, to describe it in.
    let mut trace = game.clone();
    let (_, reports) = run_offline(game, &lines);
    let mut tally = Tally::default();
    for report in reports {
        let descriptions = match &report.result {
            Ok(_) if report.answer.is_some() => report.answer.iter().cloned().collect(),
            Ok(events) => events
                .iter()
                .map(|e| {
                    let d = describe_event(&trace, e);
                    apply(&mut trace, e);
                    d
                })
                .collect(),
            Err(_) => vec![],
        };
        let outcome = LineOutcome {
            line: report.line,
            text: report.text,
            result: report.result,
            descriptions,
            failures: report.failures,
        };
        tally.add(&outcome);
        outcome.write(out, args.json)?;
    }
    if args.json {
        writeln!(out, "{}", tally.json())?;
    } else {
        writeln!(out, "{}", tally.text())?;
    }
    Ok(if tally.expectation_failures > 0 {
        Status::ExpectationsFailed
    } else {
        Status::Success
    })
}

/// `--scenario` if given, else the script's `scenario` line resolved against the script's
/// directory (so a script and its scenario can move together).
fn scenario_path(script: &Path, text: &str, flag: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(path) = flag {
        return Ok(path.to_path_buf());
    }
    let named = scenario_directive(text).ok_or_else(|| {
        Failure::Input(format!(
            "{} names no scenario; add a `scenario PATH` line or pass --scenario",
            script.display()
        ))
    })?;
    Ok(script.parent().unwrap_or_else(|| Path::new("")).join(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_directive() {
        let path = scenario_path(
            Path::new("cases/wa.txt"),
            "scenario b9.toml\n",
            Some(Path::new("other.toml")),
        );
        assert_eq!(path, Ok(PathBuf::from("other.toml")));
    }

    #[test]
    fn the_directive_is_relative_to_the_script() {
        let path = scenario_path(Path::new("cases/wa.txt"), "# x\nscenario b9.toml\n", None);
        assert_eq!(path, Ok(PathBuf::from("cases/b9.toml")));
        let path = scenario_path(Path::new("wa.txt"), "scenario b9.toml\n", None);
        assert_eq!(path, Ok(PathBuf::from("b9.toml")));
    }

    #[test]
    fn no_scenario_at_all_is_bad_input() {
        let err = scenario_path(Path::new("wa.txt"), "german done\n", None).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("names no scenario"), "{err}");
    }
}
