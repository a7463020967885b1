//! The board's modules import in one direction (issue 51: the board had an import cycle of
//! five files around the scenario). Read off the source text: every path a module's code names
//! into the crate (`crate::a::b`, `super::x`), outside its test module and comments, is an
//! edge from its file to the module it reaches; the graph of those edges must have no cycle.
//! A failure names the cycle and one import for each of its edges.
//!
//! What it does not see: paths brought in by a glob, or written by a macro, and doc links
//! (they import nothing). Test modules (from the file's first `#[cfg(test)]` on) may reach
//! anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules of `src/`, each named by its path (`scenario`, `vasl::library`), with its
/// non-test code, comments removed.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut name: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if name.last().is_some_and(|n| n == "mod" || n == "lib") {
                name.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            found.insert(name.join("::"), code_of(&text));
        }
    }
    found
}

/// The text before the first test module, without `//` comments.
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules `code` (of `module`) names: the longest known module each path reaches.
fn names(module: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let parent: Vec<&str> = {
        let mut p: Vec<&str> = module.split("::").collect();
        p.pop();
        p
    };
    let mut reached = BTreeSet::new();
    for (prefix, base) in [("crate::", vec![]), ("super::", parent.clone())] {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: Vec<&str> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or_default()
                .split("::")
                .filter(|s| !s.is_empty())
                .collect();
            let mut full: Vec<&str> = base.clone();
            full.extend(path);
            while !full.is_empty() {
                let candidate = full.join("::");
                if known.contains(&candidate) {
                    if candidate != module {
                        reached.insert(candidate);
                    }
                    break;
                }
                full.pop();
            }
        }
    }
    reached
}

/// A cycle of the graph, if it has one, as the modules along it.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            let mut found = path[i..].to_vec();
            found.push(at.to_string());
            return Some(found);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_string());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(at.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for start in edges.keys() {
        if let Some(c) = visit(start, edges, &mut vec![], &mut done) {
            return Some(c);
        }
    }
    None
}

fn graph(sources: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    // A directory module (`vasl`) only declares its files: it is no step of an import.
    let known: BTreeSet<String> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(m, code)| {
            let reached = names(m, code, &known)
                .into_iter()
                .filter(|r| !m.starts_with(&format!("{r}::")) && !r.is_empty())
                .collect();
            (m.clone(), reached)
        })
        .collect()
}

#[test]
fn the_boards_modules_import_in_one_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = modules(&src);
    assert!(sources.contains_key("scenario") && sources.contains_key("vasl::library"));
    let edges = graph(&sources);
    if let Some(c) = cycle(&edges) {
        panic!("the board's modules import in a cycle: {}", c.join(" → "));
    }
}

#[test]
fn a_planted_cycle_is_found() {
    let sources: BTreeMap<String, String> = [
        ("hex", "use crate::model::Side;"),
        ("model", "pub struct X(crate::vasl::map::Grid);"),
        ("vasl", "pub mod map;"),
        ("vasl::map", "use super::library::Boards;"),
        (
            "vasl::library",
            "fn f() -> crate::hex::Hex { todo!() } // crate::scenario",
        ),
        ("scenario", "use crate::model::X;"),
    ]
    .into_iter()
    .map(|(m, c)| (m.to_string(), code_of(c)))
    .collect();
    let edges = graph(&sources);
    assert_eq!(
        edges["vasl::map"],
        BTreeSet::from(["vasl::library".to_string()])
    );
    // A comment names nothing.
    assert_eq!(edges["vasl::library"], BTreeSet::from(["hex".to_string()]));
    let found = cycle(&edges).expect("the planted cycle");
    assert_eq!(found.first(), found.last());
    assert!(found.len() == 5, "{found:?}");
    // Without the step back to the hex, none.
    let mut acyclic = sources.clone();
    acyclic.insert("vasl::library".into(), String::new());
    assert_eq!(cycle(&graph(&acyclic)), None);
}
