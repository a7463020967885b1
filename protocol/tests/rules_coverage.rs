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
