//! The core's layering, read off the crates' manifests (issue 51). Each layer of the rules core
//! is a crate, so Cargo already refuses an import of a crate a layer does not depend on; what
//! remains is that no manifest adds a dependency that points up the stack, and that none brings
//! in a runtime, a database or a socket. This replaces the hand-written import reader that
//! checked the layers while they were modules of one crate.
//!
//! The order, lowest first: `asl-board`, `asl-game`, `asl-rules`, `asl-record`, `asl-protocol`
//! (the edges and the façade). A crate's `[dependencies]` and `[build-dependencies]` (also
//! under `[target.…]`) may name only crates before it. Dev-dependencies are not read: a crate's
//! tests may drive it through the façade without its library depending on it. `asl-vasl-save`
//! (saved-game import, used by the CLI) sits beside the stack: it may use the board alone, and
//! no crate of the stack uses it. Every workspace member under `protocol/` must be one of these,
//! so a new core crate cannot go unchecked.

use std::collections::BTreeMap;
use std::path::Path;

/// The stack, lowest first: package name and directory under `protocol/`.
const STACK: &[(&str, &str)] = &[
    ("asl-board", "board"),
    ("asl-game", "game"),
    ("asl-rules", "rules"),
    ("asl-record", "record"),
    ("asl-protocol", "."),
];

/// Core crates beside the stack, each with the crates of the stack it may use.
const BESIDE: &[(&str, &str, &[&str])] = &[("asl-vasl-save", "vasl-save", &["asl-board"])];

/// Crates that would let the core do I/O or roll its own dice (`purity.rs` checks the whole
/// dependency tree for them; here a manifest naming one fails on its own line).
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

fn protocol_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The workspace's `[workspace.dependencies]`: each key and the package it stands for.
fn workspace_packages(root_manifest: &str) -> BTreeMap<String, String> {
    let root: toml::Table = root_manifest
        .parse()
        .expect("the workspace manifest parses");
    let mut out = BTreeMap::new();
    if let Some(deps) = root
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
    {
        for (key, spec) in deps {
            let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            out.insert(key.clone(), package.to_string());
        }
    }
    out
}

/// The packages a manifest's library depends on (normal and build dependencies, target-specific
/// ones included), each resolved through `package =` or the workspace's table.
fn library_dependencies(manifest: &str, workspace: &BTreeMap<String, String>) -> Vec<String> {
    let table: toml::Table = manifest.parse().expect("the manifest parses");
    let mut sections: Vec<&toml::Table> = vec![];
    let mut tables = vec![&table];
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        tables.extend(targets.values().filter_map(|t| t.as_table()));
    }
    for t in tables {
        for key in ["dependencies", "build-dependencies"] {
            if let Some(deps) = t.get(key).and_then(|d| d.as_table()) {
                sections.push(deps);
            }
        }
    }
    let mut out = vec![];
    for deps in sections {
        for (key, spec) in deps {
            let package = match spec.get("package").and_then(|p| p.as_str()) {
                Some(p) => p.to_string(),
                None if spec.get("workspace").and_then(|w| w.as_bool()) == Some(true) => {
                    workspace.get(key).cloned().unwrap_or_else(|| key.clone())
                }
                None => key.clone(),
            };
            out.push(package);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What is wrong with the crate `package`'s dependencies `deps`: a crate of the stack at or
/// above its own place, one of the stack a crate beside it may not use, or an I/O crate.
fn problems(package: &str, deps: &[String]) -> Vec<String> {
    let place = |p: &str| STACK.iter().position(|(name, _)| *name == p);
    let beside = |p: &str| BESIDE.iter().find(|(name, _, _)| *name == p);
    let mut found = vec![];
    for dep in deps {
        if FORBIDDEN.contains(&dep.as_str()) {
            found.push(format!("{package} depends on {dep}, an I/O crate"));
        }
        match (place(package), beside(package)) {
            (Some(own), _) => {
                if place(dep).is_some_and(|at| at >= own) {
                    found.push(format!(
                        "{package} depends on {dep}, which is not below it in the stack"
                    ));
                }
                if beside(dep).is_some() {
                    found.push(format!(
                        "{package} depends on {dep}, which sits beside the stack"
                    ));
                }
            }
            (None, Some((_, _, may))) => {
                if (place(dep).is_some() || beside(dep).is_some()) && !may.contains(&dep.as_str()) {
                    found.push(format!(
                        "{package} depends on {dep}; it may use only {may:?}"
                    ));
                }
            }
            (None, None) => found.push(format!("{package} is not a core crate")),
        }
    }
    found
}

#[test]
fn no_core_crate_depends_on_one_above_it_or_on_io() {
    let workspace_manifest = read(&protocol_dir().join("../Cargo.toml"));
    let workspace = workspace_packages(&workspace_manifest);
    let crates = STACK
        .iter()
        .map(|(name, dir)| (*name, *dir))
        .chain(BESIDE.iter().map(|(name, dir, _)| (*name, *dir)));
    let mut found = vec![];
    let mut read_any = 0;
    for (package, dir) in crates {
        let manifest = read(&protocol_dir().join(dir).join("Cargo.toml"));
        let named: toml::Table = manifest.parse().unwrap();
        assert_eq!(
            named["package"]["name"].as_str(),
            Some(package),
            "protocol/{dir}/Cargo.toml"
        );
        let deps = library_dependencies(&manifest, &workspace);
        assert!(!deps.is_empty(), "{package}: no dependencies read");
        found.extend(problems(package, &deps));
        read_any += 1;
    }
    assert_eq!(read_any, STACK.len() + BESIDE.len());
    assert!(
        found.is_empty(),
        "the core's layering:\n{}",
        found.join("\n")
    );
}

/// Every workspace member under `protocol/` is a crate this test reads.
#[test]
fn every_core_crate_is_in_the_order() {
    let root: toml::Table = read(&protocol_dir().join("../Cargo.toml")).parse().unwrap();
    let members = root["workspace"]["members"].as_array().unwrap();
    let known: Vec<String> = STACK
        .iter()
        .map(|(_, dir)| *dir)
        .chain(BESIDE.iter().map(|(_, dir, _)| *dir))
        .map(|dir| {
            if dir == "." {
                "protocol".to_string()
            } else {
                format!("protocol/{dir}")
            }
        })
        .collect();
    let core: Vec<&str> = members
        .iter()
        .filter_map(|m| m.as_str())
        .filter(|m| *m == "protocol" || m.starts_with("protocol/"))
        .collect();
    assert!(core.len() >= 6, "members read: {core:?}");
    for member in core {
        assert!(
            known.iter().any(|k| k == member),
            "{member} is a core crate this test does not place in the order"
        );
    }
}

/// What is left in `asl-protocol` itself is the façade and the edges: a layer's module that
/// reappeared under `protocol/src` would sit in the top crate, above the crates it belongs with.
#[test]
fn the_facade_holds_only_the_edges() {
    let mut entries: Vec<String> = std::fs::read_dir(protocol_dir().join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["edges", "lib.rs"]);
}

#[test]
fn planted_upward_beside_and_io_dependencies_are_found() {
    let workspace = workspace_packages(
        r#"
[workspace.dependencies]
game = { path = "protocol/game", package = "asl-game" }
record = { path = "protocol/record", package = "asl-record" }
vasl-save = { path = "protocol/vasl-save", package = "asl-vasl-save" }
tokio = "1"
serde = "1"
"#,
    );
    let rules = r#"
[package]
name = "asl-rules"
[dependencies]
game.workspace = true
serde.workspace = true
record.workspace = true
[target.'cfg(unix)'.dependencies]
tokio.workspace = true
[dev-dependencies]
protocol = { path = "..", package = "asl-protocol" }
"#;
    let deps = library_dependencies(rules, &workspace);
    assert_eq!(deps, ["asl-game", "asl-record", "serde", "tokio"]);
    assert_eq!(
        problems("asl-rules", &deps),
        [
            "asl-rules depends on asl-record, which is not below it in the stack",
            "asl-rules depends on tokio, an I/O crate",
        ]
    );
    assert_eq!(
        problems("asl-game", &["asl-game".into()]),
        ["asl-game depends on asl-game, which is not below it in the stack"]
    );
    assert_eq!(
        problems("asl-record", &["asl-vasl-save".into()]),
        ["asl-record depends on asl-vasl-save, which sits beside the stack"]
    );
    assert_eq!(
        problems("asl-vasl-save", &["asl-board".into(), "asl-game".into()]),
        ["asl-vasl-save depends on asl-game; it may use only [\"asl-board\"]"]
    );
    let build = "[package]\nname = \"x\"\n[build-dependencies]\nsled = \"0.34\"\n";
    assert_eq!(library_dependencies(build, &workspace), ["sled"]);
    assert!(problems("asl-record", &["asl-rules".into(), "asl-board".into()]).is_empty());
}
