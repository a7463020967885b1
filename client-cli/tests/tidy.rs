//! Tidiness the client's library code keeps, read off its source (issue 51).

#[path = "../../protocol/tests/support/source.rs"]
mod source;

/// No library code of the client returns a bare `String` as its error (nor has
/// `type Err = String`): the server is not trusted, and what it got wrong is a type of its
/// own (`thiserror`), so the CLI branches on what went wrong and says it in clear words, never
/// by reading a message's text.
#[test]
fn client_errors_are_typed() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    source::rust_files(&src, &mut files);
    assert!(files.len() > 10, "found only {} files", files.len());
    let mut problems = vec![];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let found = source::string_errors(&text);
        if !found.is_empty() {
            let name = path.strip_prefix(&src).unwrap().display().to_string();
            problems.push(format!("{name}: {found:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "client-cli/src returns untyped errors:\n{}",
        problems.join("\n")
    );
}
