//! The drills' short versions, each the real `asl-server` under load driven by `asl-load`:
//! - crash: SIGKILLed at random moments and restarted a few times; fails if any acknowledged
//!   event is lost, a command is half written, a hash chain breaks or a restarted state hash
//!   differs. The full drill (100 cycles) is `asl-load crash`.
//! - corrupt: a copy of its data directory damaged (bytes flipped, the log truncated) and
//!   served; fails if the server panics or exits without saying why, or serves any game below
//!   what its players were acknowledged without flagging it. The full drill is
//!   `asl-load corrupt`.
//!
//! Both full drills are recorded in BENCHMARKS.md.

mod common;

use std::process::Command;

/// Runs `asl-load` with `args` against the `asl-server` built beside it; returns its
/// output, failing the test if it failed.
fn drill(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_asl-load"))
        .arg("--server-bin")
        .arg(common::server_bin())
        .args(args)
        .output()
        .expect("run asl-load");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{args:?} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
}

#[test]
fn sigkill_under_load_loses_no_acknowledged_event() {
    let stdout = drill(&[
        "crash",
        "--cycles",
        "4",
        "--games",
        "4",
        "--kill-after-ms-max",
        "400",
    ]);
    assert!(
        stdout.contains(
            "lost 0, half-written 0, altered 0, chain failures 0, state-hash mismatches 0"
        ),
        "{stdout}"
    );
}

#[test]
fn damaged_copies_are_named_never_silently_rolled_back() {
    let stdout = drill(&[
        "corrupt",
        "--cycles",
        "5",
        "--games",
        "4",
        "--load-ms-max",
        "300",
    ]);
    assert!(
        stdout.contains("failures: panics 0, unclear exits 0, silent rollbacks 0, other 0"),
        "{stdout}"
    );
}
