//! Tidiness the server's library code keeps, read off its source (issue 51).

#[path = "../../protocol/tests/support/source.rs"]
mod source;

/// Library code of the server returning a bare `String` as its error, file by file, that
/// remains to be given a type of its own. The test fails when a file gains one, so the count
/// only goes down; lower it (or remove the file) as each is typed: the test fails on a count
/// left higher than what is there, too.
const STRING_ERRORS_LEFT: &[(&str, usize)] = &[("store/salvage.rs", 8)];

/// No library code of the server returns a bare `String` as its error, beyond those listed in
/// [`STRING_ERRORS_LEFT`]: each module's errors are a type of its own (`thiserror`), so a
/// caller branches on what went wrong, never on the words of a message.
#[test]
fn server_errors_are_typed() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    source::rust_files(&src, &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut problems = vec![];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let found = source::string_errors(&text);
        let name = path.strip_prefix(&src).unwrap().display().to_string();
        let left = STRING_ERRORS_LEFT
            .iter()
            .find(|(file, _)| *file == name)
            .map_or(0, |(_, n)| *n);
        if found.len() > left {
            problems.push(format!(
                "{name}: {} (at most {left}): {found:?}",
                found.len()
            ));
        } else if found.len() < left {
            problems.push(format!(
                "{name}: {} left, fewer than the {left} listed: lower its count",
                found.len()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "server/src returns untyped errors:\n{}",
        problems.join("\n")
    );
}
