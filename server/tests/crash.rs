//! The crash drill's short version: the real `asl-server` under load, SIGKILLed at random
//! moments and restarted a few times; `asl-load crash` fails if any acknowledged event is lost,
//! a command is half written, a hash chain breaks or a restarted state hash differs. The full
//! drill (100 cycles) is `asl-load crash`, recorded in BENCHMARKS.md.

use std::process::Command;

#[test]
fn sigkill_under_load_loses_no_acknowledged_event() {
    let output = Command::new(env!("CARGO_BIN_EXE_asl-load"))
        .args(["--server-bin", env!("CARGO_BIN_EXE_asl-server")])
        .args([
            "crash",
            "--cycles",
            "4",
            "--games",
            "4",
            "--kill-after-ms-max",
            "400",
        ])
        .output()
        .expect("run asl-load");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "crash drill failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains(
            "lost 0, half-written 0, altered 0, chain failures 0, state-hash mismatches 0"
        ),
        "{stdout}"
    );
}
