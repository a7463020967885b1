//! The corruption drill's short version: the real `asl-server` under load, SIGKILLed, and a
//! copy of its data directory damaged (bytes flipped, the log truncated) before a server is
//! started on it. `asl-load corrupt` fails if the server panics or exits without saying why,
//! or if any game is served below what its players were acknowledged without being flagged.
//! The full drill is `asl-load corrupt`, recorded in BENCHMARKS.md.

use std::process::Command;

#[test]
fn damaged_copies_are_named_never_silently_rolled_back() {
    let output = Command::new(env!("CARGO_BIN_EXE_asl-load"))
        .args(["--server-bin", env!("CARGO_BIN_EXE_asl-server")])
        .args([
            "corrupt",
            "--cycles",
            "5",
            "--games",
            "4",
            "--load-ms-max",
            "300",
        ])
        .output()
        .expect("run asl-load");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "corruption drill failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("failures: panics 0, unclear exits 0, silent rollbacks 0, other 0"),
        "{stdout}"
    );
}
