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
