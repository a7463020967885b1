//! Tidiness the server's library code keeps, read off its source (issue 51).

#[path = "../../protocol/tests/support/source.rs"]
mod source;

/// No library code of the server returns a bare `String` as its error (nor has
/// `type Err = String`): each module's errors are a type of its own (`thiserror`), so a caller
/// branches on what went wrong, never on the words of a message.
#[test]
fn server_errors_are_typed() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = source::untyped_errors_in(&src, 20);
    assert!(
        problems.is_empty(),
        "server/src returns untyped errors:\n{}",
        problems.join("\n")
    );
}
