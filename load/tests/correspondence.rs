//! `asl-load correspondence`, short: a few hundred timed games written to the store, the real
//! `asl-server` started over them, every expiring clock's running out found recorded in the
//! store afterwards, and every notice of the burst received by the tool's webhook receiver.
//! The full run (50,000 games) is recorded in BENCHMARKS.md (issue 55).

mod common;

use std::process::Command;

#[test]
fn every_expiry_is_recorded_and_every_notice_of_the_burst_arrives() {
    let output = Command::new(env!("CARGO_BIN_EXE_asl-load"))
        .arg("--server-bin")
        .arg(common::server_bin())
        .args([
            "correspondence",
            "--games",
            "300",
            "--expiring",
            "100",
            "--handovers",
            "50",
            "--lead-s",
            "8",
            "--spread-s",
            "3",
            "--quiet-s",
            "3",
        ])
        .output()
        .expect("run asl-load");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "asl-load correspondence failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("expiries recorded: 100 of 100 (0 missing)"),
        "{stdout}"
    );
    assert!(stdout.contains("notices delivered: 50 of 50"), "{stdout}");
    assert!(stdout.contains("server CPU per notice:"), "{stdout}");
    assert!(stdout.contains("bare POST loop"), "{stdout}");
}
