//! Where a field of a scenario file is written, for errors that point at `file:line:column`:
//! a field path as the checks name it (`units[3].hex`, `units.g.wall_advantage`, `first`) to
//! the line and column of its key, and a place in the file (a parse error's span) back to the
//! field it lies in. Both read the spans `toml` itself records for every key, value and table
//! header (`toml::de::DeTable`), parsing with its recovery so a file that does not parse is
//! still mapped up to its error: whatever the file's layout (inline tables, values over
//! several lines, dotted or quoted keys), the place is where the parser found the thing.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A line and a column, both counted from 1 (the column in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub column: usize,
}

/// The file's tables with their spans, as far as it parses.
fn document(text: &str) -> Spanned<DeTable<'_>> {
    DeTable::parse_recoverable(text).0
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

type Entry<'t, 'i> = (
    &'t Spanned<toml::de::DeString<'i>>,
    &'t Spanned<DeValue<'i>>,
);

fn entry<'t, 'i>(table: &'t DeTable<'i>, name: &str) -> Option<Entry<'t, 'i>> {
    table.iter().find(|(key, _)| key.get_ref() == name)
}

/// Where `field` is written in `text`: its key, or failing that the table it is in (an
/// array's table by its `[[header]]`). `None` if not even its first step is there.
pub fn place_of(text: &str, field: &str) -> Option<Place> {
    let document = document(text);
    let steps = steps(field);
    let mut table = document.get_ref();
    let mut at = None;
    let mut i = 0;
    while let Some(&(name, index)) = steps.get(i) {
        let Some((key, value)) = entry(table, name) else {
            break;
        };
        at = Some(key.span().start);
        let item = match (value.get_ref(), index) {
            (DeValue::Table(inner), None) => {
                table = inner;
                i += 1;
                continue;
            }
            (DeValue::Array(items), Some(n)) => items.get(n)?,
            // `units.g.wall_advantage`: the table of that array whose `id` is `g`.
            (DeValue::Array(items), None) => {
                let Some(&(id, _)) = steps.get(i + 1) else {
                    break;
                };
                let Some(item) = items.iter().find(|item| {
                    item.get_ref()
                        .as_table()
                        .and_then(|t| entry(t, "id"))
                        .is_some_and(|(_, v)| v.get_ref().as_str() == Some(id))
                }) else {
                    break;
                };
                i += 1;
                item
            }
            _ => break,
        };
        at = Some(item.span().start);
        let Some(inner) = item.get_ref().as_table() else {
            break;
        };
        table = inner;
        i += 1;
    }
    at.map(|offset| place_at(text, offset))
}

/// The field that the place `offset` (a byte offset into `text`) lies in, as a path:
/// `units[3].hex` for a key's line in the fourth `[[units]]`, `units[3]` for its header.
pub fn field_at(text: &str, offset: usize) -> Option<String> {
    let line_of = |at: usize| text.get(..at).map_or(0, |t| t.matches('\n').count());
    let line = line_of(text.get(..offset).map(|_| offset)?);
    // Written at or before the place: on an earlier line, or on its line before it.
    let before = |at: usize| at <= offset || line_of(at) == line;
    let document = document(text);
    let mut table = document.get_ref();
    let mut path = String::new();
    while let Some((key, value)) = table
        .iter()
        .filter(|(key, _)| line_of(key.span().start) <= line)
        .max_by_key(|(key, _)| key.span().start)
    {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key.get_ref());
        let item = match value.get_ref() {
            DeValue::Table(inner) => {
                table = inner;
                continue;
            }
            DeValue::Array(items) if items.iter().all(|i| i.get_ref().is_table()) => {
                let Some((n, item)) = items
                    .iter()
                    .enumerate()
                    .filter(|(_, item)| before(item.span().start))
                    .max_by_key(|(_, item)| item.span().start)
                else {
                    break;
                };
                path.push_str(&format!("[{n}]"));
                item
            }
            _ => break,
        };
        match item.get_ref().as_table() {
            Some(inner) => table = inner,
            None => break,
        }
    }
    (!path.is_empty()).then_some(path)
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
        let inline = "sides = [\n  { id = \"a\" },\n  { id = \"b\", name = 3 },\n]\n";
        assert_eq!(
            place_of(inline, "sides[1].name"),
            Some(Place {
                line: 3,
                column: 15
            }),
            "a key in an inline table, on a line of its own"
        );
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
        let broken = "first = \"german\"\n[[units]]\nid = \"g\"\nhex = \"1B2\n";
        let error = toml::from_str::<toml::Table>(broken).unwrap_err();
        let at_error = error.span().unwrap().start;
        assert_eq!(field_at(broken, at_error).as_deref(), Some("units[0].hex"));
        assert_eq!(
            place_at(FILE, at(14) + 2),
            Place {
                line: 14,
                column: 3
            }
        );
    }
}
