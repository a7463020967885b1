//! Rules tests as positions: every `positions/*.script` names its scenario, plays commands and
//! states the expected outcome of each (`=> ok …` / `=> refused RULE`). This runner plays them
//! through `decide`/`apply` and fails with the position when an expectation does not hold.

use protocol::ReadScenario;
use std::path::{Path, PathBuf};

#[path = "support/positions.rs"]
mod support;
use support::run;

fn scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/positions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("positions directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "script"))
        .collect();
    found.sort();
    found
}

#[test]
fn every_position_holds() {
    let scripts = scripts();
    assert!(!scripts.is_empty(), "no position scripts found");
    let mut failures = vec![];
    for path in &scripts {
        match run(path) {
            Ok(n) => assert!(n > 0, "{} checks nothing", path.display()),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Every scenario shipped in `scenarios/` is valid: a newcomer's first `asl new` must work.
#[test]
fn every_shipped_scenario_reads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios directory") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            if let Err(e) = protocol::Scenario::from_toml(&text) {
                panic!("{}: {e}", path.display());
            }
            read += 1;
        }
    }
    assert!(
        read >= 2,
        "expected the shipped scenarios in {}",
        dir.display()
    );
}
