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
    let problems = source::untyped_errors_in(&src, 10);
    assert!(
        problems.is_empty(),
        "client-cli/src returns untyped errors:\n{}",
        problems.join("\n")
    );
}
