//! `asl-load matches`, short: the real `asl-server`, the durable relay (the floor of a durable
//! referee) and the bare relay each play a few matches, and the floor's store is checked to
//! hold every move it acknowledged. The full runs are recorded in BENCHMARKS.md (issue 21).

mod common;

use std::process::Command;

#[test]
fn matches_play_on_all_three_targets_and_the_floor_keeps_what_it_acknowledged() {
    let output = Command::new(env!("CARGO_BIN_EXE_asl-load"))
        .arg("--server-bin")
        .arg(common::server_bin())
        .args([
            "matches",
            "--matches",
            "1,3",
            "--moves",
            "12",
            "--repeats",
            "1",
        ])
        .output()
        .expect("run asl-load");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "asl-load matches failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for line in [
        "ratio server/relay:",
        "ratio floor/relay :",
        "ratio server/floor:",
    ] {
        assert_eq!(stdout.matches(line).count(), 2, "{line}\n{stdout}");
    }
    assert_eq!(
        stdout
            .matches("one game's p50 against the relay's + one sync")
            .count(),
        1,
        "{stdout}"
    );
    // 1 + 3 matches on the floor, 12 moves each.
    assert!(
        stdout.contains("all 48 acknowledged moves found"),
        "{stdout}"
    );
}

/// `matches --scenario` on each real-board shape: the tool synthesises the boards, hands the
/// directory to the server, creates games of 140 counters on them, and the seats play moves
/// of units and `done`s through the phases; every command the generator sent was accepted
/// (the run fails on any refusal) and some were moves. The figures are not checked here.
#[test]
fn real_board_shapes_are_served_and_their_moves_accepted() {
    for shape in ["one-board", "three-boards"] {
        let output = Command::new(env!("CARGO_BIN_EXE_asl-load"))
            .arg("--server-bin")
            .arg(common::server_bin())
            .args([
                "matches",
                "--scenario",
                shape,
                "--matches",
                "2",
                "--moves",
                "40",
                "--repeats",
                "1",
            ])
            .output()
            .expect("run asl-load");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "asl-load matches --scenario {shape} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(stdout.contains("140 counters"), "{stdout}");
        // Two matches of 40 commands; the first Movement Phase comes after two `done`s and
        // has six moves, the second after nine more steps.
        let accepted = "the server's games: 80 commands accepted, ";
        let line = stdout
            .lines()
            .find(|l| l.contains(accepted))
            .unwrap_or_else(|| panic!("no tally of 80 accepted commands\n{stdout}"));
        let moves: u64 = line
            .split(accepted)
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count of moves in {line}"));
        assert!(moves >= 2 * 12, "{line}");
        assert!(line.contains("; 0 refused;"), "{line}");
    }
}
