//! `docs/rules-coverage.md` accounts for every paragraph: one row per numbered paragraph and per
//! EX of the rules files (A4, B8, B9), per row of the terrain chart, each with a status and the
//! positions that test it. This test fails when a paragraph of those files has no row, when a
//! row names a position file that does not exist or that fails when played, when a row says
//! "enforced" and names no position, or when the counts printed at the top are not the rows' own.
//!
//! The rules files live beside the project, not in it (`../shared/rules/`, or `ASL_RULES_DIR`):
//! where they cannot be found the paragraph check is skipped with a note, the others still run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[path = "support/positions.rs"]
mod support;

#[path = "support/source.rs"]
mod source;

/// The four statuses a row may have, in the order the counts line gives them.
const STATUSES: [&str; 4] = ["enforced", "deviation", "adjudicated", "not modelled"];

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Row {
    status: String,
    positions: Vec<String>,
}

/// The table rows of the coverage page, by their first cell.
fn rows(text: &str) -> Result<BTreeMap<String, Row>, String> {
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() != 4 {
            return Err(format!("a row has {} cells, not 4: {line}", cells.len()));
        }
        if cells[0] == "paragraph" || cells[0].starts_with("---") {
            continue;
        }
        if !STATUSES.contains(&cells[1]) {
            return Err(format!(
                "`{}` has status `{}`, not one of {STATUSES:?}",
                cells[0], cells[1]
            ));
        }
        let positions = cells[2]
            .split(',')
            .map(|p| p.trim().trim_matches('`').to_string())
            .filter(|p| !p.is_empty() && p != "—")
            .collect();
        let row = Row {
            status: cells[1].to_string(),
            positions,
        };
        if rows.insert(cells[0].to_string(), row).is_some() {
            return Err(format!("`{}` has two rows", cells[0]));
        }
    }
    Ok(rows)
}

/// The counts printed at the top: `**Counts:** enforced N · … · total N`.
fn printed_counts(text: &str) -> Result<BTreeMap<String, usize>, String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("**Counts:**"))
        .ok_or("the page prints no `**Counts:**` line at its top")?;
    let mut counts = BTreeMap::new();
    for part in line.trim_start_matches("**Counts:**").split('·') {
        let part = part.trim();
        let (name, n) = part
            .rsplit_once(' ')
            .ok_or_else(|| format!("`{part}` is not `status N`"))?;
        let n: usize = n
            .parse()
            .map_err(|_| format!("`{part}`: `{n}` is not a count"))?;
        counts.insert(name.to_string(), n);
    }
    Ok(counts)
}

/// Where the rules files are: `ASL_RULES_DIR`, or `shared/rules` beside the checkout.
fn rules_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("ASL_RULES_DIR") {
        return Some(PathBuf::from(dir));
    }
    manifest()
        .ancestors()
        .skip(1)
        .take(3)
        .map(|a| a.join("shared/rules"))
        .find(|d| d.join("terrain-chart.md").is_file())
}

/// The paragraph ids a rules file holds: `A4.31` for a line opening with `4.31` (after an
/// optional `- `) in a file of chapter A, and `A4.31 EX` (or `EX 1`, `EX 2` … when there are
/// several) for each paragraph opening with `EX:` after it. A number alone on a line is a page
/// heading, not a paragraph.
fn paragraphs(chapter: char, text: &str, into: &mut Vec<String>) {
    let mut current: Option<String> = None;
    let mut examples: BTreeMap<String, usize> = BTreeMap::new();
    let mut order: Vec<String> = vec![];
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("- ").unwrap_or(line).trim_start();
        let number: String = line
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let rest = &line[number.len()..];
        let numbered = number.contains('.')
            && number.starts_with(|c: char| c.is_ascii_digit())
            && !number.ends_with('.')
            && (rest.starts_with(' ') || rest.starts_with(':'))
            && rest.trim_start_matches([' ', ':']).chars().next().is_some();
        if numbered {
            let id = format!("{chapter}{number}");
            if !order.contains(&id) {
                order.push(id.clone());
            }
            current = Some(id);
        } else if line.starts_with("EX:") {
            if let Some(id) = &current {
                *examples.entry(id.clone()).or_default() += 1;
            }
        }
    }
    for id in order {
        let n = examples.get(&id).copied().unwrap_or(0);
        let ex = match n {
            0 => vec![],
            1 => vec![format!("{id} EX")],
            n => (1..=n).map(|i| format!("{id} EX {i}")).collect(),
        };
        if !into.contains(&id) {
            into.push(id);
        }
        for e in ex {
            if !into.contains(&e) {
                into.push(e);
            }
        }
    }
}

/// `chart B12 Brush` for each row of the terrain chart's table.
fn chart_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("| B"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            format!("chart {} {}", cells[0], cells[1])
        })
        .collect()
}

#[test]
fn every_paragraph_has_a_row_with_real_positions_and_true_counts() {
    let page = manifest().join("../docs/rules-coverage.md");
    let text = std::fs::read_to_string(&page).expect("docs/rules-coverage.md");
    let rows = rows(&text).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let mut failures = vec![];

    // The counts at the top are the rows'.
    let printed = printed_counts(&text).unwrap_or_else(|e| panic!("{e}"));
    for status in STATUSES {
        let n = rows.values().filter(|r| r.status == status).count();
        if printed.get(status) != Some(&n) {
            failures.push(format!(
                "the page prints {status} {:?}, the rows count {n}",
                printed.get(status)
            ));
        }
    }
    if printed.get("total") != Some(&rows.len()) {
        failures.push(format!(
            "the page prints total {:?}, there are {} rows",
            printed.get("total"),
            rows.len()
        ));
    }

    // Every position a row names exists, and holds: the matrix runs what it claims. A row
    // that says the engine enforces its paragraph names at least one position that shows it.
    let positions = manifest().join("tests/positions");
    let mut ran: BTreeMap<String, Result<usize, String>> = BTreeMap::new();
    for (id, row) in &rows {
        if row.status == "enforced" && row.positions.is_empty() {
            failures.push(format!(
                "`{id}` says enforced, and names no position that shows it"
            ));
        }
        for p in &row.positions {
            if !p.ends_with(".script") || !positions.join(p).is_file() {
                failures.push(format!("`{id}` names `{p}`, which is not a position file"));
                continue;
            }
            let result = ran
                .entry(p.clone())
                .or_insert_with(|| support::run(&positions.join(p)));
            if let Err(e) = result {
                failures.push(format!("`{id}` ({}): `{p}` fails: {e}", row.status));
            }
        }
    }

    // Every paragraph, EX and chart row of the rules files has a row.
    match rules_dir() {
        None => eprintln!(
            "note: the rules files were not found (set ASL_RULES_DIR); paragraphs not checked"
        ),
        Some(dir) => {
            let mut wanted = vec![];
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .expect("rules directory")
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            for f in &files {
                let name = f.file_name().unwrap().to_string_lossy().to_string();
                let mut chars = name.chars();
                let (Some(chapter), Some(digit)) = (chars.next(), chars.next()) else {
                    continue;
                };
                if name.ends_with(".txt") && digit.is_ascii_digit() {
                    let text = std::fs::read_to_string(f).unwrap();
                    paragraphs(chapter, &text, &mut wanted);
                }
            }
            let chart = std::fs::read_to_string(dir.join("terrain-chart.md")).unwrap();
            wanted.extend(chart_rows(&chart));
            assert!(
                wanted.len() > 50,
                "only {} paragraphs found in {}",
                wanted.len(),
                dir.display()
            );
            let have: BTreeSet<&String> = rows.keys().collect();
            for id in &wanted {
                if !have.contains(id) {
                    failures.push(format!("`{id}` has no row"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}:\n  {}",
        page.display(),
        failures.join("\n  ")
    );
}

#[test]
fn the_paragraph_reader_reads_numbers_and_examples() {
    let mut ids = vec![];
    let text = "9.21\n9.2 LOS: text\nEX: one\n- 9.21 ENTRENCHMENTS: text\nEX: a\nmore\nEX: b\n";
    paragraphs('B', text, &mut ids);
    assert_eq!(
        ids,
        ["B9.2", "B9.2 EX", "B9.21", "B9.21 EX 1", "B9.21 EX 2"]
    );
}

/// `A4.14`, `B9.322`, `D2`: a chapter letter, a number, and dotted sub-numbers.
fn is_rule_id(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(chapter) = chars.next() else {
        return false;
    };
    let rest = chars.as_str();
    ('A'..='H').contains(&chapter)
        && rest.starts_with(|c: char| c.is_ascii_digit())
        && !rest.ends_with('.')
        && !rest.contains("..")
        && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The paragraphs a source file cites: every string literal that is a rule id on its own
/// (`RuleViolation::new("A4.14", …)`, `rule: "B27"`, a roll's or an event's rule), and every
/// `(A5.11)` written inside a literal's words (a cost's or an event's reason). Comments are
/// skipped, and so is everything from the file's `#[cfg(test)]` on: its literals are hex
/// names and fixtures, not citations.
fn citations(source: &str, into: &mut BTreeSet<String>) {
    let source = source.split("#[cfg(test)]").next().unwrap_or_default();
    let mut literals = vec![];
    let mut chars = source.chars().peekable();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (Some(lit), '\\') => {
                lit.push(c);
                if let Some(n) = chars.next() {
                    lit.push(n);
                }
            }
            (Some(_), '"') => literals.push(current.take().unwrap_or_default()),
            (Some(lit), _) => lit.push(c),
            (None, '"') => current = Some(String::new()),
            (None, '/') if chars.peek() == Some(&'/') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            (None, '\'') => {
                // A char literal that is a quote or an escape: skip it whole.
                let mut ahead = chars.clone();
                match (ahead.next(), ahead.next(), ahead.next()) {
                    (Some('"'), Some('\''), _) => {
                        chars.next();
                        chars.next();
                    }
                    (Some('\\'), Some(_), Some('\'')) => {
                        chars.next();
                        chars.next();
                        chars.next();
                    }
                    _ => {}
                }
            }
            (None, _) => {}
        }
    }
    for literal in &literals {
        if is_rule_id(literal) {
            into.insert(literal.clone());
        }
        for part in literal.split('(').skip(1) {
            if let Some((inside, _)) = part.split_once(')') {
                if is_rule_id(inside) {
                    into.insert(inside.to_string());
                }
            }
        }
    }
}

/// Every paragraph the engine cites — in a refusal, an event, a cost, a roll, a terrain row —
/// has a row saying what the engine does with it: a player told "refused, B23.42" can look up
/// what the engine makes of B23.42.
#[test]
fn every_paragraph_the_engine_cites_has_a_row() {
    let page = manifest().join("../docs/rules-coverage.md");
    let text = std::fs::read_to_string(&page).expect("docs/rules-coverage.md");
    let rows = rows(&text).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    // Every core crate's sources (the board's terrain table cites its rules too).
    let files = source::core_files(manifest());
    let mut cited = BTreeSet::new();
    for f in &files {
        citations(
            &std::fs::read_to_string(f).expect("source file"),
            &mut cited,
        );
    }
    assert!(
        cited.len() > 30,
        "only {} citations found in the sources",
        cited.len()
    );
    // A terrain chart row (`chart B12 Brush`) is the row of the paragraph its terrain cites.
    let has_row = |id: &String| {
        rows.contains_key(id)
            || rows.keys().any(|k| {
                k.strip_prefix("chart ")
                    .and_then(|k| k.strip_prefix(id.as_str()))
                    .is_some_and(|k| k.starts_with(' '))
            })
    };
    let missing: Vec<&String> = cited.iter().filter(|id| !has_row(id)).collect();
    assert!(
        missing.is_empty(),
        "{} paragraph(s) the engine cites have no row in {}: {}",
        missing.len(),
        page.display(),
        missing
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[test]
fn the_citation_reader_finds_rule_ids_alone_and_in_words() {
    let mut found = BTreeSet::new();
    citations(
        "// a comment \"B1\" (B2)\nRuleViolation::new(\"A4.14\", k, \"x (A5.11) and (B9) but not (see A4) nor \\\"C\\\"\") '\"' \"A.\" \"x\" #[cfg(test)] \"A1\"",
        &mut found,
    );
    let found: Vec<&str> = found.iter().map(|s| s.as_str()).collect();
    assert_eq!(found, ["A4.14", "A5.11", "B9"]);
}

/// The matrix runs what it names: a position whose expectation does not hold fails the run the
/// coverage test makes of every row's positions, so a row cannot claim a failing position.
#[test]
fn a_failing_position_fails_the_run() {
    let scenario = manifest().join("tests/positions/scenarios/setup.toml");
    let dir = std::env::temp_dir().join(format!("asl-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let holds = dir.join("holds.script");
    let fails = dir.join("fails.script");
    let head = format!("scenario {}\n", scenario.display());
    // The Russian has units left to set up: `done` is refused (A12.12).
    std::fs::write(&holds, format!("{head}russian done => refused A12.12\n")).expect("write");
    std::fs::write(&fails, format!("{head}russian done => ok\n")).expect("write");
    let held = support::run(&holds);
    let failed = support::run(&fails);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(held, Ok(1));
    assert!(failed.is_err(), "{failed:?}");
}
