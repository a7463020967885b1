//! `protocol` is the pure core: it must build without an async runtime, a database, sockets or
//! OS randomness anywhere in its dependency tree. This test fails the build the day one creeps in.

use std::process::Command;

/// Crates that would let the core do I/O or roll its own dice.
const FORBIDDEN: &[&str] = &[
    "tokio",
    "sled",
    "tokio-tungstenite",
    "tungstenite",
    "mio",
    "getrandom",
    "rand",
    "socket2",
];

#[test]
fn protocol_dependency_tree_is_pure() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "asl-protocol",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"asl-protocol"), "unexpected tree: {tree}");
    let found: Vec<&&str> = FORBIDDEN.iter().filter(|f| names.contains(f)).collect();
    assert!(found.is_empty(), "protocol depends on {found:?}:\n{tree}");
}
