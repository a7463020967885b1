//! Reading Rust source as the tidy tests need it (`protocol/tests/purity.rs`,
//! `server/tests/tidy.rs`): comments and string contents blanked, test-only items dropped,
//! and the places a `Result` carries a bare `String` as its error.

#![allow(dead_code)] // each test binary uses its own part

/// The source directories of the core's crates, from `protocol/`: the board, game, rules and
/// record crates and `asl-protocol`'s own (the edges), the order of `tests/crates.rs`. The tidy
/// tests read all of them; a directory that is gone fails here rather than passing on nothing.
pub const CORE_SOURCES: &[&str] = &["board/src", "game/src", "rules/src", "record/src", "src"];

/// Every Rust file of the core's crates ([`CORE_SOURCES`], below `protocol`), each directory
/// holding at least one.
pub fn core_files(protocol: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![];
    for src in CORE_SOURCES {
        let dir = protocol.join(src);
        let before = files.len();
        rust_files(&dir, &mut files);
        assert!(
            files.len() > before,
            "no Rust files below {}",
            dir.display()
        );
    }
    files.sort();
    files
}

pub fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether `code[at..]` starts a word: not in the middle of an identifier, nor a lifetime
/// (`&'static`).
pub fn word_starts(code: &str, at: usize) -> bool {
    code[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '\''))
}

/// `source` with comments and the contents of string literals blanked (newlines kept), so
/// that a word in prose or in a message is never read as code.
pub fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            out.push('"');
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A char literal ('x', '\n', '\''); a lifetime has no closing quote.
            out.push_str("' '");
            i += 1;
            if chars.get(i) == Some(&'\\') {
                i += 1;
            }
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `code` (as [`code_only`] gives it) without the items under `#[cfg(test)]`: a test module
/// or function, up to the end of its braces (or its `;`).
pub fn without_tests(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        // Newlines kept, so that line numbers still count.
        out.extend(item[..end].chars().filter(|c| *c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Each `Result<…, String>` (and `type Err = String`) in `source` outside test items, with its line: an error a
/// caller can only read, never match.
pub fn string_errors(source: &str) -> Vec<String> {
    let code = without_tests(&code_only(source));
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut found = vec![];
    for (at, _) in code.match_indices("type Err") {
        let rest = code[at + "type Err".len()..].trim_start();
        if let Some(ty) = rest.strip_prefix('=') {
            if ty.trim_start().starts_with("String")
                && ty.trim_start()[6..].trim_start().starts_with(';')
            {
                found.push(format!("line {}: `type Err = String`", line_of(at)));
            }
        }
    }
    for (at, _) in code.match_indices("Result<") {
        if !word_starts(&code, at) {
            continue;
        }
        let args = &code[at + "Result<".len()..];
        let mut depth = 0usize;
        let mut commas = vec![];
        let mut end = None;
        let bytes = args.as_bytes();
        for (i, c) in args.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if i > 0 && bytes[i - 1] == b'-' => {}
                '>' | ')' | ']' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => commas.push(i),
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        // The error is the second argument (a trailing comma may follow it).
        let Some(first) = commas.first() else {
            continue;
        };
        let error = args[first + 1..commas.get(1).copied().unwrap_or(end)].trim();
        if error == "String" || error == "std::string::String" {
            found.push(format!("line {}: `Result<…, String>`", line_of(at)));
        }
    }
    found
}

/// Every untyped error in the library code below `src` (a crate's `src/`), one line each with
/// its file: what the tidy tests of protocol, server and client refuse. `at_least` files must be
/// found, so a moved directory fails loudly rather than passing on nothing.
pub fn untyped_errors_in(src: &std::path::Path, at_least: usize) -> Vec<String> {
    let mut files = vec![];
    rust_files(src, &mut files);
    assert!(
        files.len() >= at_least,
        "found only {} files below {}",
        files.len(),
        src.display()
    );
    let mut problems = vec![];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path
            .strip_prefix(src)
            .unwrap_or(&path)
            .display()
            .to_string();
        for problem in string_errors(&text) {
            problems.push(format!("{name}: {problem}"));
        }
    }
    problems
}
