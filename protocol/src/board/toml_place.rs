//! Where a field of a scenario file is written, for errors that point at `file:line:column`:
//! a field path as the checks name it (`units[3].hex`, `units.g.wall_advantage`, `first`) to
//! the line and column of its key, and a place in the file (a parse error's span) back to the
//! field it lies in.
//!
//! Scenario files are plain TOML of the shape `protocol::board::scenario` reads: top-level
//! keys, then tables and arrays of tables (`[ssr]`, `[[units]]`), one `key = value` a line. A
//! value spread over several lines, or an inline table, is located by the line its key is on.

/// A line and a column, both counted from 1 (the column in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub column: usize,
}

/// One `[name]` or `[[name]]` table of the file (the top level is the table named "").
struct Table {
    name: String,
    /// Which `[[name]]` this is, counting from 0 (0 for a plain table).
    index: usize,
    /// Where its header is (the start of the file for the top level).
    at: Place,
    keys: Vec<Key>,
}

struct Key {
    name: String,
    at: Place,
    /// The value as written, for finding a table by its `id`.
    value: String,
}

fn tables(text: &str) -> Vec<Table> {
    let mut tables = vec![Table {
        name: String::new(),
        index: 0,
        at: Place { line: 1, column: 1 },
        keys: vec![],
    }];
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let indent = raw.chars().take_while(|c| c.is_whitespace()).count();
        let body = raw.trim();
        let at = Place {
            line,
            column: indent + 1,
        };
        if let Some(name) = body
            .strip_prefix("[[")
            .and_then(|b| b.split("]]").next())
            .filter(|_| body.starts_with("[["))
        {
            let name = name.trim().to_string();
            let index = tables.iter().filter(|t| t.name == name).count();
            tables.push(Table {
                name,
                index,
                at,
                keys: vec![],
            });
        } else if let Some(name) = body.strip_prefix('[').and_then(|b| b.split(']').next()) {
            tables.push(Table {
                name: name.trim().to_string(),
                index: 0,
                at,
                keys: vec![],
            });
        } else if let Some((key, value)) = body.split_once('=') {
            let key = key.trim().trim_matches('"');
            let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if !key.is_empty() && !body.starts_with('#') && key.chars().all(plain) {
                let table = tables.last_mut().expect("the top level is always there");
                table.keys.push(Key {
                    name: key.to_string(),
                    at,
                    value: value.trim().trim_matches('"').to_string(),
                });
            }
        }
    }
    tables
}

/// One step of a field path: a name, perhaps with an index (`units[3]`).
fn steps(field: &str) -> Vec<(&str, Option<usize>)> {
    field
        .split('.')
        .map(|step| match step.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse().ok()),
            None => (step, None),
        })
        .collect()
}

/// Where `field` is written in `text`: its key, or failing that the table it is in.
pub fn place_of(text: &str, field: &str) -> Option<Place> {
    let tables = tables(text);
    let steps = steps(field);
    let (first, index) = *steps.first()?;
    let key_in = |table: &Table, key: Option<&(&str, Option<usize>)>| {
        key.and_then(|(k, _)| table.keys.iter().find(|x| x.name == *k))
            .map_or(table.at, |k| k.at)
    };
    if let Some(index) = index {
        let table = tables
            .iter()
            .find(|t| t.name == first && t.index == index)?;
        return Some(key_in(table, steps.get(1)));
    }
    let named: Vec<&Table> = tables.iter().filter(|t| t.name == first).collect();
    if let Some(second) = steps.get(1) {
        // `units.g.wall_advantage`: the table of that array whose `id` is `g`.
        if let Some(table) = named
            .iter()
            .find(|t| t.keys.iter().any(|k| k.name == "id" && k.value == second.0))
        {
            return Some(key_in(table, steps.get(2)));
        }
        if let Some(table) = named.first() {
            return Some(key_in(table, Some(second)));
        }
    }
    // A top-level key (`first`, or an inline array such as `sides`).
    tables[0]
        .keys
        .iter()
        .find(|k| k.name == first)
        .map(|k| k.at)
        .or_else(|| named.first().map(|t| t.at))
}

/// The field that the place `offset` (a byte offset into `text`) lies in, as a path:
/// `units[3].hex` for a key's line in the fourth `[[units]]`, `units[3]` for its header.
pub fn field_at(text: &str, offset: usize) -> Option<String> {
    let line = text.get(..offset)?.matches('\n').count() + 1;
    let tables = tables(text);
    let table = tables.iter().rev().find(|t| t.at.line <= line)?;
    let base = match (
        table.name.as_str(),
        tables.iter().filter(|t| t.name == table.name).count(),
    ) {
        ("", _) => String::new(),
        (name, 1)
            if !text
                .lines()
                .nth(table.at.line - 1)?
                .trim()
                .starts_with("[[") =>
        {
            name.to_string()
        }
        (name, _) => format!("{name}[{}]", table.index),
    };
    let key = table.keys.iter().rev().find(|k| k.at.line <= line);
    match (base.is_empty(), key) {
        (true, Some(k)) => Some(k.name.clone()),
        (true, None) => None,
        (false, Some(k)) if table.at.line != line => Some(format!("{base}.{}", k.name)),
        (false, _) => Some(base),
    }
}

/// The place of a byte offset into `text`.
pub fn place_at(text: &str, offset: usize) -> Place {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Place {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "name = \"x\"\nturns = 1\nfirst = \"german\"\n\n[ssr]\nsewers_usable = true\n\n[[units]]\nid = \"g\"\nhex = \"1B2\"\n\n[[units]]\n  id = \"r\"\n  hex = \"1C3\"\n";

    #[test]
    fn fields_are_found_by_index_by_id_and_at_the_top() {
        assert_eq!(
            place_of(FILE, "units[1].hex"),
            Some(Place {
                line: 14,
                column: 3
            })
        );
        assert_eq!(
            place_of(FILE, "units[0].hex"),
            Some(Place {
                line: 10,
                column: 1
            })
        );
        assert_eq!(
            place_of(FILE, "units[1]"),
            Some(Place {
                line: 12,
                column: 1
            })
        );
        assert_eq!(
            place_of(FILE, "units.r.hex"),
            Some(Place {
                line: 14,
                column: 3
            })
        );
        assert_eq!(place_of(FILE, "first"), Some(Place { line: 3, column: 1 }));
        assert_eq!(
            place_of(FILE, "ssr.sewers_usable"),
            Some(Place { line: 6, column: 1 })
        );
        assert_eq!(
            place_of(FILE, "units[0].ratings"),
            Some(Place { line: 8, column: 1 }),
            "a missing key: its table"
        );
        assert_eq!(place_of(FILE, "units[5].hex"), None);
    }

    #[test]
    fn a_place_names_its_field() {
        let at = |line: usize| {
            FILE.lines()
                .take(line - 1)
                .map(|l| l.len() + 1)
                .sum::<usize>()
        };
        assert_eq!(field_at(FILE, at(14) + 4).as_deref(), Some("units[1].hex"));
        assert_eq!(field_at(FILE, at(12)).as_deref(), Some("units[1]"));
        assert_eq!(field_at(FILE, at(2)).as_deref(), Some("turns"));
        assert_eq!(field_at(FILE, at(6)).as_deref(), Some("ssr.sewers_usable"));
        assert_eq!(
            place_at(FILE, at(14) + 2),
            Place {
                line: 14,
                column: 3
            }
        );
    }
}
