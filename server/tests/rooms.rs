//! The rooms of `server/src`, read off the source text: each folder imports only from the
//! folders below it, so no import cycle runs between them (protocol's layers are crates of
//! their own, so Cargo checks theirs; `protocol/tests/crates.rs` reads their order).
//!
//! What it reads: every `crate::<folder>` path written in a file under `src/<folder>/`, outside
//! comments. What it does not: the crate root (`lib.rs`, `main.rs`, files beside them), which
//! wires the rooms together; paths inside one folder; `use super::*` globs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The folders, lowest first. A file imports from its own folder and the ones before it.
const ROOMS: &[&str] = &[
    "operations",
    "signing",
    "store",
    "notify",
    "games",
    "network",
];

/// Imports upward that remain, each with why; the test fails when one is gone, so the list
/// only shrinks. None remain.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

fn files(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).unwrap(),
            ));
        }
    }
}

/// The folders a file's code names through `crate::`, comments left out.
fn named_rooms(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if ROOMS.contains(&name.as_str()) {
                named.insert(name);
            }
        }
    }
    named
}

/// Every import of a file in `room` that names a folder above it: `(file, folder)`.
fn upward(src: &Path) -> BTreeSet<(String, String)> {
    let rank = |room: &str| ROOMS.iter().position(|r| *r == room);
    let mut found = BTreeSet::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for room in ROOMS {
        let mut list = vec![];
        files(&src.join(room), &mut list);
        assert!(!list.is_empty(), "no files under src/{room}");
        for (path, text) in list {
            let file = path.split("/src/").last().unwrap().to_string();
            for named in named_rooms(&text) {
                if named == *room {
                    continue;
                }
                graph
                    .entry(room.to_string())
                    .or_default()
                    .insert(named.clone());
                if rank(&named) > rank(room) {
                    found.insert((file.clone(), named));
                }
            }
        }
    }
    found
}

#[test]
fn each_folder_imports_only_from_the_folders_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward(&src);
    let known: BTreeSet<(String, String)> = KNOWN_UPWARD
        .iter()
        .map(|(f, r)| (f.to_string(), r.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(
        new.is_empty(),
        "server/src imports upward (folders lowest first: {}): {new:?}",
        ROOMS.join(", ")
    );
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        gone.is_empty(),
        "no longer imported upward, take it off KNOWN_UPWARD: {gone:?}"
    );
}

#[test]
fn the_reader_sees_paths_in_code_and_not_in_comments() {
    let text = "use crate::store::GameKey;\n// crate::network is named in prose\nlet x = crate::games::task::X; // crate::signing\n";
    let named: Vec<String> = named_rooms(text).into_iter().collect();
    assert_eq!(named, ["games", "store"]);
}
