//! The layer rule of `protocol/src`, read off the source text: a module imports only from
//! layers below it (`ARCHITECTURE.md` draws the picture). The lowest layer, `board`, is a
//! crate of its own (`asl-board`, in `protocol/board/`, re-exported as `crate::board`), so
//! Cargo keeps it from naming anything above it; this test reads the layers still inside
//! this crate, and takes `crate::board::…` as a path into the lowest layer.
//!
//! What this test checks, file by file under `src/`:
//! - every file except `lib.rs` sits inside one of the [`LAYERS`] (`src/<layer>/…`), and
//!   `lib.rs` declares no module but the layers;
//! - every path into the crate the code names is read: `use crate::…` including grouped trees
//!   (`use crate::{a, b::{c, self}}`), `crate::a::b` written inline in code, types and
//!   attributes, and `super::…` resolved against the module it is written in (files and inline
//!   `mod name { … }` blocks, so a `tests` module's `super` is its file);
//! - such a path must start at a layer: a path through the crate root's re-exports
//!   (`crate::wire`, `crate::Game`, or `super` out of a layer's `mod.rs`) is refused, because it
//!   would hide which layer it reaches;
//! - no file names a layer above its own;
//! - the graph of imports between layers (the crate's top-level modules) has no cycle; a failure
//!   names the cycle and one import for each of its edges.
//!
//! What it does not check:
//! - imports between modules of one layer: `game` and `game::event` name each other (the state
//!   applies events, an undo event carries a state), and a parent module and its children share
//!   helpers both ways;
//! - what a path does not show: a method or trait item reached through a value (`x.foo()`,
//!   `Scenario::from_toml` defined by a trait in a higher layer), names brought in by a glob
//!   (`use super::*`) beyond the module the glob names, and code that macros generate;
//! - comments, doc comments and string literals (removed before reading), `self::` paths (they
//!   stay in the module), `pub(in crate::…)` visibility (always an ancestor, so the same layer),
//!   `#[path]` attributes (none are used) and other crates' paths.
//!
//! The reader is small and tested on in-memory sources below, including a planted cycle.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The layers, lowest first. A module may import from its own layer and the ones before it.
const LAYERS: &[&str] = &["board", "game", "rules", "record", "edges"];

#[test]
fn protocol_modules_import_only_from_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    read_tree(&src, &src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} files under {}",
        files.len(),
        src.display()
    );
    let problems = check(&files, LAYERS);
    assert!(
        problems.is_empty(),
        "protocol/src breaks the layer rule:\n{}",
        problems.join("\n")
    );
}

fn read_tree(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_tree(root, &path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            let rel = path.strip_prefix(root).unwrap();
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            out.push((rel, text));
        }
    }
}

/// One import: where it is written and the crate path it names, resolved from the root.
#[derive(Debug, Clone, PartialEq)]
struct Import {
    file: String,
    line: usize,
    /// As written, for messages (`crate::record::chain::Entry`, `super::own_unit`).
    written: String,
    /// Resolved from the crate root: `["record", "chain", "Entry"]`. Empty: the root itself.
    path: Vec<String>,
}

/// Every problem with the layer rule in `files` (paths relative to `src/`, and their text).
fn check(files: &[(String, String)], layers: &[&str]) -> Vec<String> {
    let rank = |name: &str| layers.iter().position(|l| *l == name);
    let mut problems = vec![];
    // layer → layer it imports → the first import that does it, for messages.
    let mut graph: BTreeMap<usize, BTreeMap<usize, Import>> = BTreeMap::new();
    for (file, text) in files {
        let module = module_path(file);
        let tokens = tokenize(text);
        if module.is_empty() {
            for name in declared_modules(&tokens) {
                if rank(&name).is_none() {
                    problems.push(format!(
                        "{file}: declares `mod {name}`, which is not a layer ({})",
                        layers.join(", ")
                    ));
                }
            }
            continue;
        }
        let Some(from) = rank(&module[0]) else {
            problems.push(format!(
                "{file}: is not inside a layer ({}); move it into one",
                layers.join(", ")
            ));
            continue;
        };
        let imports = match imports(file, &module, &tokens) {
            Ok(imports) => imports,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        for import in imports {
            let at = format!("{}:{}: `{}`", import.file, import.line, import.written);
            let Some(first) = import.path.first() else {
                problems.push(format!("{at} names the crate root; name the layer instead"));
                continue;
            };
            let Some(to) = rank(first) else {
                problems.push(format!(
                    "{at} goes through the crate root's `{first}`, not a layer; \
                     name the layered path"
                ));
                continue;
            };
            if to > from {
                problems.push(format!(
                    "{at}: layer `{}` imports from `{}`, a layer above it",
                    layers[from], layers[to]
                ));
            }
            if to != from {
                graph.entry(from).or_default().entry(to).or_insert(import);
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph) {
        let names: Vec<&str> = cycle.iter().map(|&l| layers[l]).collect();
        let mut message = format!("import cycle between layers: {}", names.join(" → "));
        for pair in cycle.windows(2) {
            let i = &graph[&pair[0]][&pair[1]];
            let _ = write!(message, "\n  {}:{}: `{}`", i.file, i.line, i.written);
        }
        problems.push(message);
    }
    problems
}

/// The module a file under `src/` defines: `record/chain.rs` → `[record, chain]`,
/// `rules/mod.rs` → `[rules]`, `lib.rs` → `[]`.
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// The code's tokens with their line numbers: comments, string and char literals removed,
/// `::` as one token, every other punctuation character alone.
fn tokenize(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut line = 1;
    let mut i = 0;
    let skip_to = |from: usize, end: usize, line: &mut usize| {
        *line += chars[from..end.min(chars.len())]
            .iter()
            .filter(|&&c| c == '\n')
            .count();
        end
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let mut j = i;
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            i = skip_to(i, j, &mut line);
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            i = skip_to(i, j + 1, &mut line);
        } else if c == 'r'
            && matches!(next, Some('"') | Some('#'))
            && raw_string_end(&chars, i).is_some()
        {
            let end = raw_string_end(&chars, i).unwrap();
            i = skip_to(i, end, &mut line);
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            if next == Some('\\') {
                let mut j = i + 3;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // `b"…"`, `br"…"`: the prefix of a byte string; the string is skipped next round.
            let prefix = matches!(word.as_str(), "b" | "br" | "c" | "cr")
                && matches!(chars.get(i), Some('"') | Some('#'));
            if word == "br" || word == "cr" {
                if let Some(end) = raw_string_end(&chars, i - 1) {
                    i = skip_to(i, end, &mut line);
                    continue;
                }
            }
            if !prefix {
                out.push((Tok::Ident(word), line));
            }
        } else if c == ':' && next == Some(':') {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Where a raw string starting at `chars[at] == 'r'` ends (one past its last `#`), if it is one.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let mut j = at + 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// The modules a file declares by name (`mod x;`, `pub mod x;`), not inline ones.
fn declared_modules(tokens: &[(Tok, usize)]) -> Vec<String> {
    tokens
        .windows(3)
        .filter_map(|w| match w {
            [(Tok::Ident(m), _), (Tok::Ident(name), _), (Tok::Punct(';'), _)] if m == "mod" => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// Every `crate::…` and `super::…` path in a file, resolved from the crate root. `module` is
/// the module the file defines.
fn imports(file: &str, module: &[String], tokens: &[(Tok, usize)]) -> Result<Vec<Import>, String> {
    let ident = |i: usize| match tokens.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let is = |i: usize, t: &Tok| tokens.get(i).map(|(x, _)| x) == Some(t);
    let mut out = vec![];
    // Inline modules: (name, the brace depth inside them).
    let mut inline: Vec<(String, usize)> = vec![];
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
                continue;
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            Tok::Ident(m) if m == "mod" => {
                if let (Some(name), true) = (ident(i + 1), is(i + 2, &Tok::Punct('{'))) {
                    inline.push((name.to_string(), depth + 1));
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let start = ident(i);
        let starts_path = matches!(start, Some("crate") | Some("super"))
            && is(i + 1, &Tok::Path)
            && !(i > 0 && is(i - 1, &Tok::Path))
            && !(i > 0 && is(i - 1, &Tok::Punct('$')))
            && !(i > 0 && ident(i - 1) == Some("in"));
        if !starts_path {
            i += 1;
            continue;
        }
        let line = tokens[i].1;
        let mut here: Vec<String> = module.to_vec();
        here.extend(inline.iter().map(|(n, _)| n.clone()));
        let mut written = vec![];
        let mut base: Vec<String> = vec![];
        let mut j = i;
        if start == Some("crate") {
            written.push("crate".to_string());
            j += 2;
        } else {
            // super::super::x
            while ident(j) == Some("super") && is(j + 1, &Tok::Path) {
                if here.pop().is_none() {
                    return Err(format!("{file}:{line}: `super` goes above the crate root"));
                }
                written.push("super".to_string());
                j += 2;
            }
            base = here;
        }
        let (trees, end) = use_tree(tokens, j);
        for tree in trees {
            let mut path = base.clone();
            let mut shown = written.clone();
            for seg in &tree {
                shown.push(seg.clone());
                if seg != "self" && seg != "*" {
                    path.push(seg.clone());
                }
            }
            out.push(Import {
                file: file.to_string(),
                line,
                written: shown.join("::"),
                path,
            });
        }
        i = end.max(i + 1);
    }
    Ok(out)
}

/// Reads a path's remainder from `tokens[at]` (just after `crate::` or `super::`): one segment
/// list per leaf of a grouped tree, and where it ended. Stops at anything that is not part of
/// a path (`<` of a turbofish, `(`, `;`, `as` …).
fn use_tree(tokens: &[(Tok, usize)], at: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = vec![];
    let mut j = at;
    loop {
        match tokens.get(j).map(|(t, _)| t) {
            Some(Tok::Ident(s)) => {
                prefix.push(s.clone());
                j += 1;
                if tokens.get(j).map(|(t, _)| t) == Some(&Tok::Path) {
                    j += 1;
                    continue;
                }
                return (vec![prefix], j);
            }
            Some(Tok::Punct('*')) => {
                prefix.push("*".to_string());
                return (vec![prefix], j + 1);
            }
            Some(Tok::Punct('{')) => {
                j += 1;
                let mut all = vec![];
                loop {
                    match tokens.get(j).map(|(t, _)| t) {
                        None => return (all, j),
                        Some(Tok::Punct('}')) => return (all, j + 1),
                        Some(Tok::Punct(',')) => j += 1,
                        Some(Tok::Ident(s)) if s == "as" => j += 2,
                        _ => {
                            let (trees, end) = use_tree(tokens, j);
                            for t in trees {
                                let mut p = prefix.clone();
                                p.extend(t);
                                all.push(p);
                            }
                            j = end.max(j + 1);
                        }
                    }
                }
            }
            _ => return (vec![prefix], j),
        }
    }
}

/// A cycle in the layer graph, as the layers along it with the first repeated at the end.
fn find_cycle<T>(graph: &BTreeMap<usize, BTreeMap<usize, T>>) -> Option<Vec<usize>> {
    fn visit<T>(
        node: usize,
        graph: &BTreeMap<usize, BTreeMap<usize, T>>,
        state: &mut BTreeMap<usize, bool>,
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        // false: on the current path; true: done.
        state.insert(node, false);
        stack.push(node);
        for &next in graph.get(&node).into_iter().flat_map(|m| m.keys()) {
            match state.get(&next) {
                Some(false) => {
                    let from = stack.iter().position(|&n| n == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next);
                    return Some(cycle);
                }
                Some(true) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node, true);
        None
    }
    let mut state = BTreeMap::new();
    for &node in graph.keys() {
        if !state.contains_key(&node) {
            if let Some(c) = visit(node, graph, &mut state, &mut vec![]) {
                return Some(c);
            }
        }
    }
    None
}

// The reader itself, on sources small enough to see whole.

fn paths(file: &str, text: &str) -> Vec<String> {
    imports(file, &module_path(file), &tokenize(text))
        .unwrap()
        .into_iter()
        .map(|i| i.path.join("::"))
        .collect()
}

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(f, t)| (f.to_string(), t.to_string()))
        .collect()
}

#[test]
fn reads_grouped_nested_and_inline_paths() {
    let text = r#"
        use crate::{board::hex::Hex, game::{self, event::{Event, Allotment as A}}};
        use crate::rules::*;
        pub(crate) fn f(x: crate::board::terrain::Mf) -> crate::game::Game {
            let _ = crate::record::chain::seal::<u8>(x);
            pub(in crate::edges) struct S;
            $crate::edges::wire::nothing;
            todo!()
        }
    "#;
    assert_eq!(
        paths("edges/script.rs", text),
        [
            "board::hex::Hex",
            "game",
            "game::event::Event",
            "game::event::Allotment",
            "rules",
            "board::terrain::Mf",
            "game::Game",
            "record::chain::seal",
        ]
    );
}

#[test]
fn skips_comments_strings_and_chars() {
    let text = r##"
        // use crate::edges::wire;
        /* crate::edges::wire /* nested */ crate::edges::script */
        /// [`crate::edges::wire`]
        const A: &str = "crate::edges::wire \" crate::edges::x";
        const B: &str = r#"crate::edges::wire "quoted" "#;
        const C: &[u8] = b"crate::edges::wire";
        const D: char = '"';
        const E: char = '\'';
        fn g<'a>(x: &'a crate::board::hex::Hex) {}
    "##;
    assert_eq!(paths("game/mod.rs", text), ["board::hex::Hex"]);
}

#[test]
fn resolves_super_against_files_and_inline_modules() {
    let text = "
        use super::{own_unit, movers};
        mod tests {
            use super::*;
            use super::super::pay;
            mod deeper { fn f() { super::super::helper(); } }
        }
        fn after() { super::late(); }
    ";
    assert_eq!(
        paths("rules/movement/step.rs", text),
        [
            "rules::movement::own_unit",
            "rules::movement::movers",
            "rules::movement::step",
            "rules::movement::pay",
            "rules::movement::step::helper",
            "rules::movement::late",
        ]
    );
    // `super` from a layer's mod.rs is the crate root.
    assert_eq!(paths("rules/mod.rs", "use super::Game;"), ["Game"]);
    assert!(imports("lib.rs", &[], &tokenize("use super::x;")).is_err());
}

#[test]
fn refuses_upward_imports_root_re_exports_and_stray_files() {
    let layers = ["low", "high"];
    let problems = check(
        &files(&[
            (
                "lib.rs",
                "pub mod low;\npub mod high;\nmod stray;\npub use low::x;",
            ),
            ("low/mod.rs", "fn f() { crate::high::g(); }"),
            ("low/a.rs", "use crate::x;\nuse super::super::y;"),
            ("high/mod.rs", "use crate::low::{self, a::b};"),
            ("stray.rs", ""),
        ]),
        &layers,
    );
    let expect = [
        "lib.rs: declares `mod stray`",
        "low/mod.rs:1: `crate::high::g`: layer `low` imports from `high`, a layer above it",
        "low/a.rs:1: `crate::x` goes through the crate root's `x`",
        "low/a.rs:2: `super::super::y` goes through the crate root's `y`",
        "stray.rs: is not inside a layer",
    ];
    for want in expect {
        assert!(
            problems.iter().any(|p| p.starts_with(want)),
            "missing {want:?} in {problems:#?}"
        );
    }
    // Plus the cycle low → high → low.
    assert_eq!(problems.len(), expect.len() + 1, "{problems:#?}");
}

#[test]
fn a_planted_cycle_is_named() {
    let layers = ["a", "b", "c"];
    let problems = check(
        &files(&[
            ("a/mod.rs", "use crate::b::X;"),
            ("b/mod.rs", "pub struct X;\nuse crate::c::Y;"),
            ("c/inner.rs", "fn f() -> crate::a::Z { todo!() }"),
        ]),
        &layers,
    );
    let cycle = problems
        .iter()
        .find(|p| p.starts_with("import cycle"))
        .unwrap_or_else(|| panic!("no cycle reported: {problems:#?}"));
    assert!(
        cycle.starts_with("import cycle between layers: a → b → c → a"),
        "{cycle}"
    );
    assert!(cycle.contains("b/mod.rs:2: `crate::c::Y`"), "{cycle}");
    assert!(cycle.contains("c/inner.rs:1: `crate::a::Z`"), "{cycle}");

    // Remove one edge and the cycle is gone; what is left goes only downward.
    let fine = check(
        &files(&[
            ("a/mod.rs", "pub struct Z;"),
            ("b/mod.rs", "use crate::a::Z;"),
            ("c/inner.rs", "use crate::{a::Z, b::X};"),
        ]),
        &layers,
    );
    assert!(fine.is_empty(), "{fine:#?}");
}
