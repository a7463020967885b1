//! The core's crates (board, game, rules, record and `protocol`) are pure: they must build
//! without an async runtime, a database, sockets or OS randomness anywhere in their dependency
//! trees, and keep no process-wide state. This test fails the build the day one creeps in.

use std::process::Command;

#[path = "support/source.rs"]
mod source;
use source::{code_only, core_files, word_starts, CORE_SOURCES};

/// Crates that would let the core do I/O or roll its own dice.
const FORBIDDEN: &[&str] = &[
    "tokio",
    "sled",
    "tokio-tungstenite",
    "tungstenite",
    "mio",
    "getrandom",
    "rand",
    "socket2",
];

/// The core's crates, each checked on its own tree (`tests/crates.rs` places them in order).
const CORE_PACKAGES: &[&str] = &[
    "asl-board",
    "asl-game",
    "asl-rules",
    "asl-record",
    "asl-protocol",
];

#[test]
fn protocol_dependency_tree_is_pure() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut args = vec!["tree", "--offline"];
    for package in CORE_PACKAGES {
        args.extend(["-p", package]);
    }
    args.extend(["-e", "normal,build", "--prefix", "none", "--format", "{p}"]);
    let output = Command::new(cargo)
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8(output.stdout).unwrap();
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for package in CORE_PACKAGES {
        assert!(names.contains(package), "{package} missing from: {tree}");
    }
    let found: Vec<&&str> = FORBIDDEN.iter().filter(|f| names.contains(f)).collect();
    assert!(found.is_empty(), "the core depends on {found:?}:\n{tree}");
}

/// Types that make a `static` a place to keep state between calls.
const INTERIOR_MUTABLE: &[&str] = &[
    "Mutex",
    "RwLock",
    "OnceLock",
    "OnceCell",
    "LazyLock",
    "LazyCell",
    "Cell",
    "RefCell",
    "UnsafeCell",
    "Condvar",
    "Atomic",
];

/// Macros that declare process-wide or thread-wide state.
const STATE_MACROS: &[&str] = &["thread_local!", "lazy_static!"];

/// The core holds no process-wide state (issue 51): no `static` with interior mutability, no
/// `static mut`, no thread-locals, in any file of the core's crates (`CORE_SOURCES`). What a call needs it is
/// handed (boards by `Boards`, shared maps by an `Interner` the host holds); a register or
/// cache the whole process shares would make a game's replay depend on what else the
/// process did before it.
#[test]
fn protocol_keeps_no_process_wide_state() {
    let files = core_files(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut problems = vec![];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for problem in state_in(&text) {
            problems.push(format!("{}: {problem}", path.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "the core keeps process-wide state:\n{}",
        problems.join("\n")
    );
}

/// Every `static` of `source` whose type can change behind a shared reference, every
/// `static mut` and every state-declaring macro, each with its line.
fn state_in(source: &str) -> Vec<String> {
    let code = code_only(source);
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = vec![];
    for name in STATE_MACROS {
        for (at, _) in code.match_indices(name) {
            if word_starts(&code, at) {
                found.push(format!("line {}: `{name}`", line_of(at)));
            }
        }
    }
    for (at, _) in code.match_indices("static") {
        let after = &code[at + "static".len()..];
        if !word_starts(&code, at) || !after.starts_with(char::is_whitespace) {
            continue;
        }
        let item = after.trim_start();
        if item.starts_with("mut ") {
            found.push(format!("line {}: `static mut`", line_of(at)));
            continue;
        }
        // `static NAME: Type = …;`: the type runs from the colon to the `=`.
        let Some(colon) = item.find(':') else {
            continue;
        };
        let name = item[..colon].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let ty = &item[colon + 1..item.find('=').unwrap_or(item.len())];
        let words: Vec<&str> = ty
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .collect();
        if let Some(kind) = words.iter().find(|w| {
            INTERIOR_MUTABLE
                .iter()
                .any(|k| **w == *k || (*k == "Atomic" && w.starts_with(k)))
        }) {
            found.push(format!(
                "line {}: `static {name}` holds a {kind}",
                line_of(at)
            ));
        }
    }
    found
}

#[test]
fn the_state_reader_finds_each_kind_and_nothing_else() {
    let planted = r#"
static TABLE: OnceLock<Mutex<Vec<u8>>> = OnceLock::new();
fn f() -> &'static str {
    static CALLS: std::sync::atomic::AtomicU64 = AtomicU64::new(0);
    static NONE: [u8; 0] = [];
    "static Q: Mutex<u8> = x"
}
static mut COUNT: u32 = 0;
thread_local! { static SEEN: RefCell<u8> = RefCell::new(0); }
// static COMMENTED: Mutex<u8> = Mutex::new(0);
/* static BLOCK: Cell<u8> = Cell::new(0); */
const C: char = '"';
static LAZY: LazyLock<String> = LazyLock::new(String::new);
"#;
    let found = state_in(planted);
    assert_eq!(
        found,
        [
            "line 9: `thread_local!`",
            "line 2: `static TABLE` holds a OnceLock",
            "line 4: `static CALLS` holds a AtomicU64",
            "line 8: `static mut`",
            "line 9: `static SEEN` holds a RefCell",
            "line 13: `static LAZY` holds a LazyLock",
        ],
        "{found:#?}"
    );
    assert!(state_in("static NONE: WallsAtBase = WallsAtBase::new_const();").is_empty());
    assert!(state_in("fn f(x: &'static str) -> Cell<u8> { todo!() }").is_empty());
}

/// No library code of the core returns a bare `String` as its error (issue 51): each module's
/// errors are a type of its own (`thiserror`), so a caller branches on what went wrong, never
/// on the words of a message.
#[test]
fn protocol_errors_are_typed() {
    let mut problems = vec![];
    for src in CORE_SOURCES {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
        problems.extend(source::untyped_errors_in(&src, 5));
    }
    assert!(
        problems.is_empty(),
        "the core returns untyped errors:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_error_reader_finds_string_errors_outside_tests_only() {
    let planted = r#"
fn a() -> Result<u8, String> { todo!() }
fn b() -> Result<Vec<(u8, String)>, Error> { todo!() }
type F = dyn Fn(&str) -> Result<Vec<u8>, String>;
fn c() -> Result<
    BTreeMap<u8, u8>,
    String,
> { todo!() }
fn d() -> io::Result<String> { todo!() }
// fn e() -> Result<u8, String>
const S: &str = "Result<u8, String>";
#[cfg(test)]
mod tests {
    fn f() -> Result<u8, String> { todo!() }
}
fn g() -> Result<Result<u8, String>, Error> { todo!() }
impl FromStr for X { type Err = String; }
"#;
    assert_eq!(
        source::string_errors(planted),
        [
            "line 17: `type Err = String`",
            "line 2: `Result<…, String>`",
            "line 4: `Result<…, String>`",
            "line 5: `Result<…, String>`",
            "line 16: `Result<…, String>`",
        ]
    );
}
