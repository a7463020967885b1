//! `asl check` against the shipped scenario: the scripts in `tests/scripts/` pass, and a
//! failing expectation or a bad line gives the documented exit code and message.

use client::commands::check::{check, CheckArgs};
use client::Status;
use std::path::{Path, PathBuf};

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name)
}

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/b9-41-wall-advantage.toml")
}

fn args(script: PathBuf, json: bool) -> CheckArgs {
    CheckArgs {
        boards: Default::default(),
        script,
        scenario: None,
        json,
    }
}

#[test]
fn the_b9_4_example_passes_with_a_readable_trace() {
    let mut out = vec![];
    let status = check(&args(shipped("b9-4-example.txt"), false), &mut out);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(status, Ok(Status::Success), "{text}");
    assert!(
        text.contains(
            "11: german move 447a I8 -> accepted: 447a Wall Advantage lost on starting to enter a \
             new Location (B9.41); 447a 55H7 → 55I8: 3 MF = 1 COT (B1) + 1 uphill (B10) + 1 wall \
             (B9.4); 447a spent 3 of 4, left 1; 337a claimed Wall Advantage mandatory"
        ),
        "{text}"
    );
    assert!(
        text.contains("10: russian move 747a G5 -> refused A3.3: "),
        "{text}"
    );
    assert!(
        text.ends_with("9 lines, 8 accepted, 1 refused, 0 expectation failures\n"),
        "{text}"
    );
}

#[test]
fn json_is_one_object_per_line_then_the_counts() {
    let mut out = vec![];
    check(&args(shipped("b9-4-example.txt"), true), &mut out).unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    assert_eq!(lines[3]["line"], 11);
    assert_eq!(lines[3]["events"][1]["unit_moved"]["to"], "55I8");
    assert_eq!(lines[9]["expectation_failures"], 0);
    assert_eq!(lines[9]["lines"], 9);
}

#[test]
fn a_failed_expectation_is_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("wrong.txt");
    std::fs::write(&script, "german done => ok phase=MPh\nrussian done\n").unwrap();
    let mut out = vec![];
    let status = check(
        &CheckArgs {
            boards: Default::default(),
            script,
            scenario: Some(scenario()),
            json: false,
        },
        &mut out,
    );
    assert_eq!(status.map(Status::exit_code), Ok(1));
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("\n  expectation failed: the phase is PFPh, not MPh\n"),
        "{text}"
    );
    assert!(text.contains("2: russian done -> refused "), "{text}");
}

#[test]
fn a_bad_line_is_exit_code_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.txt");
    std::fs::write(&script, "german done\ngerman fly 467a H6\n").unwrap();
    let failure = check(
        &CheckArgs {
            boards: Default::default(),
            script: script.clone(),
            scenario: Some(scenario()),
            json: false,
        },
        &mut vec![],
    )
    .unwrap_err();
    assert_eq!(failure.exit_code(), 2);
    assert_eq!(
        failure.to_string(),
        format!(
            "{}:2: unknown command `fly` (done, move, advance, melee, cc, bypass, double-time, assault-move, \
             take-cover, pick-up, drop, transfer, claim-wa, forfeit-wa, decline-wa, show-wa, attack, resolve-attack, opportunity, place, sewer-move, \
             designate-sewer, surface, enter-tunnel, destroy-tunnel, manhole-unseen, adjudicate, \
             accept, dispute, undo, consent-undo, decline-undo, contribute, agree-reveal, concede, \
             propose-end, accept-end, rout, tunnel-seen, discover-tunnel, rally, repair, roll, setup, lift, enter, \
             claim-on-time, give-time, vacation, end-vacation)",
            script.display()
        )
    );
}

#[test]
fn a_missing_scenario_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.txt");
    std::fs::write(&script, "scenario nowhere.toml\ngerman done\n").unwrap();
    let failure = check(&args(script, false), &mut vec![]).unwrap_err();
    assert_eq!(failure.exit_code(), 2);
    assert!(failure.to_string().contains("nowhere.toml"), "{failure}");
}

/// A scenario file from others is quoted by its refusal (`first` naming no side is quoted
/// back): `asl` writes every failure with control characters and bidi overrides
/// escaped, keeping only its own line breaks, so the file cannot drive the terminal.
#[test]
fn a_hostile_scenario_files_refusal_reaches_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        "name = \"s\"\nturns = 1\nfirst = \"\\u001b]0;owned\\u0007\\u001b[2J\\u202e\"\n\
         sides = [{ id = \"a\", name = \"A\" }, { id = \"b\", name = \"B\" }]\n",
    )
    .unwrap();
    let script = dir.path().join("x.txt");
    std::fs::write(&script, "# nothing\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_asl"))
        .arg("check")
        .arg(&script)
        .arg("--scenario")
        .arg(&scenario)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        !err.chars()
            .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
        "{err:?}"
    );
    assert!(err.contains("\\u{1b}"), "{err}");
}
