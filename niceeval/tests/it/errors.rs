//! The error rule of ARCHITECTURE.md, enforced: no function of `niceeval/src` returns
//! `Result<_, String>`; each layer fails with an error type that keeps its cause. Comment
//! lines, everything from a file's first `#[cfg(test)]` on, and test modules in files of their
//! own (`tests.rs`, `tests/`) are not read (tests may keep their errors as text).

use std::path::Path;

/// Folders of `src` not read yet: their errors are still being moved to types. A folder leaves
/// this list when it has no `Result<_, String>` left.
const NOT_YET: &[&str] = &[];

/// Items outside [`NOT_YET`] that keep a `String` error only because code in one of those
/// folders uses it as text (implements the trait, or maps the error with a `String` closure):
/// `(file below src, the item's line as written)`. Each leaves with its user.
const WAITING: &[(&str, &str)] = &[];

/// Every `Result<.., String>` in `code`, as (1-based line, that line trimmed): generic
/// arguments are matched across lines and nested types (`Result<Vec<String>, String>`), and
/// only a `String` as the last argument counts (`Result<String, Error>` is fine).
fn string_errors(code: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = code.lines().collect();
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("Result<") {
        let start = from + at;
        from = start + "Result<".len();
        let word_before = code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if word_before {
            continue;
        }
        let mut depth = 1;
        let mut i = from;
        // Where each top-level argument starts.
        let mut starts = vec![from];
        while i < bytes.len() && depth > 0 {
            match bytes[i] {
                b'<' => depth += 1,
                // `->` inside the arguments (a closure type) closes nothing.
                b'>' if i == 0 || bytes[i - 1] != b'-' => depth -= 1,
                b',' if depth == 1 => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        let mut arguments: Vec<&str> = starts
            .iter()
            .zip(starts.iter().skip(1).map(|s| s - 1).chain([i - 1]))
            .map(|(start, end)| code[*start..end].trim())
            .collect();
        // A trailing comma (`Result<\n    T,\n    E,\n>`) leaves an empty last argument.
        if arguments.last() == Some(&"") {
            arguments.pop();
        }
        if depth == 0 && arguments.len() == 2 && arguments[1] == "String" {
            let line = code[..start].matches('\n').count();
            found.push((line + 1, lines[line].trim().to_string()));
        }
    }
    found
}

/// The code of a file as the rule reads it: up to its first `#[cfg(test)]`, comment lines
/// blanked (so line numbers stay those of the file).
fn library_code(text: &str) -> String {
    text.split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_function_of_the_library_returns_a_string_error() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    let mut waiting_seen = Vec::new();
    let mut read = 0;
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            let rel = path.strip_prefix(&src).expect("under src");
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if parts.iter().any(|p| p == "tests" || p == "tests.rs")
                || NOT_YET.contains(&parts[0].as_str())
            {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            read += 1;
            let shown = parts.join("/");
            let text = std::fs::read_to_string(&path).expect("read file");
            for (line, item) in string_errors(&library_code(&text)) {
                if WAITING.contains(&(shown.as_str(), item.as_str())) {
                    waiting_seen.push((shown.clone(), item));
                } else {
                    problems.push(format!("{shown}:{line}: {item}"));
                }
            }
        }
    }
    assert!(read > 100, "read {read} files");
    assert!(
        problems.is_empty(),
        "functions returning `Result<_, String>` (give the layer an error enum with `thiserror` \
         that keeps its cause, `#[source]`):\n  {}",
        problems.join("\n  ")
    );
    let stale: Vec<_> = WAITING
        .iter()
        .filter(|(file, item)| !waiting_seen.iter().any(|(f, i)| f == file && i == item))
        .collect();
    assert!(
        stale.is_empty(),
        "WAITING names items that no longer return a String error; remove them: {stale:?}"
    );
}

#[test]
fn a_string_error_is_caught_across_lines_and_nested_types() {
    let code = "\
fn a() -> Result<(), String> {}
fn b(x: u8) -> Result<
    Vec<Option<String>>,
    String,
> {}
type C = Arc<(Spec, Result<Prepared, String>)>;
fn d() -> Result<String, Error> {}
fn e() -> io::Result<String> {}
fn f() -> Result<Vec<String>, Box<dyn Fn(u8) -> String>> {}
fn g(h: impl FnMut(&[u8]) -> Result<(), String>) {}
fn i() -> MyResult<u8, String> {}";
    let found: Vec<usize> = string_errors(code).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [1, 2, 6, 10]);
    let code = library_code(
        "fn a() {}\n// -> Result<(), String>\n#[cfg(test)]\nfn t() -> Result<(), String> {}",
    );
    assert!(string_errors(&code).is_empty());
}
