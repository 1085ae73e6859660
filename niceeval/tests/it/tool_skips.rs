//! The skip rule of the optional tools, enforced: a test that runs `claude`, `codex`, `node`,
//! Python packages (NLTK, rouge-score, pytest), Chromium, cargo-nextest, cargo-insta, promptfoo,
//! AgentV or bubblewrap goes through its crate's skip helper (`scripts_support::available` here,
//! `support::available` in niceeval-cli, `niceeval_tests::available` in `tests/`, `missing` in
//! the examples), which skips with a notice when the tool is missing and fails under `CI`.
//!
//! The scan reads every test source of the workspace (each crate's `tests/`, and its `src`
//! from a file's first `#[cfg(test)]` on, or whole `tests.rs` files) with a small lexer that
//! knows strings and comments, cuts it into functions and follows calls by name (a call
//! resolves to a function of the same file first, else to every function of that name in the
//! crate's test sources). A test *uses* a tool when a function it reaches holds a string that
//! runs it: the literal is the program (`"node"`, `"/usr/bin/chromium"`), starts a command
//! line with it (`"node grader.js"`), or names a Python package it imports. The tool is
//! *guarded* when a function the test reaches calls a guard — the helper, or a function that
//! reaches it — naming the tool in its arguments or in what the guard itself reaches. A
//! string on a line whose comment says `stand-in` is a script of the test's own that only
//! borrows the name (and not the real tool). A hand-written parser keeps the scan in the
//! test binary's existing dependencies; it is tested on planted sources below.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Programs that are optional: whoever runs the tests may not have them.
const PROGRAMS: &[(&str, &str)] = &[
    ("claude", "claude"),
    ("codex", "codex"),
    ("node", "node"),
    ("chromium", "chromium"),
    ("cargo-nextest", "cargo-nextest"),
    ("nextest", "cargo-nextest"),
    ("cargo-insta", "cargo-insta"),
    ("insta", "cargo-insta"),
    ("promptfoo", "promptfoo"),
    ("agentv", "agentv"),
    ("bwrap", "bwrap"),
    ("pytest", "pytest"),
];

/// The calls whose arguments are a program and its arguments: a string (or a constant) counts
/// as running a tool only inside one of them (`Command::new("node")`, `.args(["nextest", ..])`,
/// `script(["node", ..])`, `CommandAgent::new("python3", ["-c", PROGRAM])`), so a model called
/// `claude` or a message naming Chromium does not.
const SPAWNERS: &[&str] = &[
    "new", "program", "script", "shell", "args", "arg", "spawn", "cargo", "command", "exec",
];

/// Python packages the tests import (python3 itself is a requirement, like git and cargo).
const PYTHON_PACKAGES: &[&str] = &["nltk", "rouge_score", "pytest"];

/// The crates of the workspace, with the name of their skip helper.
const CRATES: &[(&str, &str)] = &[
    ("niceeval", "available"),
    ("niceeval-cli", "available"),
    ("niceeval-suites", "available"),
    ("niceeval-macros", "available"),
    ("niceeval-dataset", "available"),
    ("niceeval-duration", "available"),
    ("tests", "available"),
    ("examples", "missing"),
];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

/// Tokens of Rust source, comments dropped; strings on a line whose comment says `stand-in`
/// are dropped too (a test's own script that borrows a tool's name).
fn lex(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut stand_in_lines = BTreeSet::new();
    {
        // Lines whose `//` comment says `stand-in` (found on the raw text; a `//` inside a
        // string on such a line only makes the scan more lenient).
        for (i, line) in src.lines().enumerate() {
            if let Some(at) = line.find("//")
                && line[at..].contains("stand-in")
            {
                stand_in_lines.insert(i + 1);
            }
        }
    }
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = chars.len();
    while i < n {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && i + 1 < n && chars[i + 1] == '/' {
            while i < n && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && i + 1 < n && chars[i + 1] == '*' {
            let mut depth = 0;
            while i < n {
                if chars[i] == '/' && i + 1 < n && chars[i + 1] == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && i + 1 < n && chars[i + 1] == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '"'
            || ((c == 'r' || c == 'b' || c == 'c')
                && i + 1 < n
                && (chars[i + 1] == '"' || chars[i + 1] == '#' || chars[i + 1] == 'r'))
                && raw_or_prefixed_string_start(&chars, i).is_some()
        {
            let start_line = line;
            let (text, end) = if c == '"' {
                plain_string(&chars, i + 1)
            } else {
                let (hashes, quote) = raw_or_prefixed_string_start(&chars, i).unwrap_or((0, i));
                if chars[quote - 1] == 'r' || hashes > 0 {
                    raw_string(&chars, quote + 1, hashes)
                } else {
                    plain_string(&chars, quote + 1)
                }
            };
            // Lines of the source (an escaped `\n` in the text is not one).
            line += chars[i..end].iter().filter(|&&c| c == '\n').count();
            i = end;
            if !stand_in_lines.contains(&start_line) {
                tokens.push(Token {
                    tok: Tok::Str(text),
                    line: start_line,
                });
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\'') or a lifetime ('a).
            if i + 2 < n && chars[i + 1] == '\\' {
                i += 3;
                while i < n && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if i + 2 < n && chars[i + 2] == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < n && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                line,
            });
        } else {
            tokens.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        }
    }
    tokens
}

/// For `r"`, `r#"`, `b"`, `br"`, `c"` at `i`: the count of `#` and the index of the opening
/// quote.
fn raw_or_prefixed_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    // Not the tail of an identifier (`bar"` cannot happen in Rust, but `for` then `"x"` can).
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    while j < chars.len() && matches!(chars[j], 'r' | 'b' | 'c') && j - i < 2 {
        j += 1;
    }
    let mut hashes = 0;
    while j < chars.len() && chars[j] == '#' {
        hashes += 1;
        j += 1;
    }
    (j < chars.len() && chars[j] == '"' && j > i).then_some((hashes, j))
}

/// The text of a `"…"` string whose content starts at `i`, and the index past its end.
fn plain_string(chars: &[char], mut i: usize) -> (String, usize) {
    let mut text = String::new();
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                text.push(match chars[i + 1] {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
                i += 2;
            }
            '"' => return (text, i + 1),
            c => {
                text.push(c);
                i += 1;
            }
        }
    }
    (text, i)
}

/// The text of a raw string with `hashes` `#`s whose content starts at `i`.
fn raw_string(chars: &[char], mut i: usize, hashes: usize) -> (String, usize) {
    let mut text = String::new();
    while i < chars.len() {
        if chars[i] == '"'
            && chars[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return (text, i + 1 + hashes);
        }
        text.push(chars[i]);
        i += 1;
    }
    (text, i)
}

/// A function of a test source.
#[derive(Debug, Default)]
struct Function {
    name: String,
    file: String,
    line: usize,
    is_test: bool,
    /// Tools its own body runs, with the line of the first string that does.
    uses: BTreeMap<&'static str, usize>,
    /// Calls: the callee's name, whether it is a method (`.name(`, resolved in its own file
    /// only), and the tools named by the strings of its arguments.
    calls: Vec<(String, bool, BTreeSet<&'static str>)>,
    /// Names used as values that may be constants (upper case).
    constants: BTreeSet<String>,
}

/// The tools a string runs (the strict reading: the program itself, or a command line that
/// starts with it, or an import of a Python package).
fn runs(text: &str) -> BTreeSet<&'static str> {
    let mut tools = BTreeSet::new();
    let first = text.split_whitespace().next().unwrap_or("");
    // A bare name or an absolute path (`Anthropic/claude` is a model, not a program).
    let program = if first.starts_with('/') {
        first.rsplit('/').next().unwrap_or(first)
    } else {
        first
    };
    for &(name, tool) in PROGRAMS {
        if program == name {
            tools.insert(tool);
        }
    }
    for &package in PYTHON_PACKAGES {
        if text.contains(&format!("import {package}"))
            || text.contains(&format!("from {package}"))
            || (package == "pytest" && text.contains("-m pytest"))
        {
            tools.insert(if package == "pytest" {
                "pytest"
            } else {
                "python3 packages"
            });
        }
    }
    tools
}

/// The tools a string names anywhere, as a word (the lenient reading, for a guard's
/// arguments: "`claude` is required").
fn names(text: &str) -> BTreeSet<&'static str> {
    let mut tools = BTreeSet::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
        for &(name, tool) in PROGRAMS {
            if word == name {
                tools.insert(tool);
            }
        }
        if PYTHON_PACKAGES.contains(&word) && word != "pytest" {
            tools.insert("python3 packages");
        }
    }
    tools
}

/// Cuts a file's tokens into functions (nested ones too) and its constants' strings.
fn functions(
    file: &str,
    tokens: &[Token],
) -> (Vec<Function>, BTreeMap<String, BTreeSet<&'static str>>) {
    let mut out = Vec::new();
    let mut constants = BTreeMap::new();
    for (at, token) in tokens.iter().enumerate() {
        match &token.tok {
            Tok::Ident(kw) if kw == "const" || kw == "static" => {
                let Some(Token {
                    tok: Tok::Ident(name),
                    ..
                }) = tokens.get(at + 1)
                else {
                    continue;
                };
                let mut tools = BTreeSet::new();
                for t in tokens[at + 1..]
                    .iter()
                    .take_while(|t| t.tok != Tok::Punct(';'))
                {
                    if let Tok::Str(s) = &t.tok {
                        tools.extend(runs(s));
                    }
                }
                if !tools.is_empty() {
                    constants.insert(name.clone(), tools);
                }
            }
            Tok::Ident(kw) if kw == "fn" => {
                let Some(Token {
                    tok: Tok::Ident(name),
                    ..
                }) = tokens.get(at + 1)
                else {
                    continue;
                };
                // The body: the first `{` before any `;` at the signature's level.
                let mut j = at + 2;
                let mut parens = 0i32;
                while j < tokens.len() {
                    match tokens[j].tok {
                        Tok::Punct('(') | Tok::Punct('[') => parens += 1,
                        Tok::Punct(')') | Tok::Punct(']') => parens -= 1,
                        Tok::Punct('{') if parens == 0 => break,
                        Tok::Punct(';') if parens == 0 => break,
                        _ => {}
                    }
                    j += 1;
                }
                if j >= tokens.len() || tokens[j].tok != Tok::Punct('{') {
                    continue;
                }
                let start = j;
                let mut depth = 0;
                let mut end = start;
                for (k, t) in tokens.iter().enumerate().skip(start) {
                    match t.tok {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                end = k;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let body = &tokens[start..=end.max(start)];
                let mut function = Function {
                    name: name.clone(),
                    file: file.to_string(),
                    line: token.line,
                    is_test: is_test(tokens, at),
                    ..Function::default()
                };
                // The callee of each open bracket, innermost last: a `(` right after a name is
                // that call's, a macro's `(` no call's, and `[`, `{` or a bare `(` inherit.
                let mut enclosing: Vec<Option<&str>> = Vec::new();
                for (k, t) in body.iter().enumerate() {
                    let prev = k.checked_sub(1).map(|p| &body[p].tok);
                    let in_spawner = |stack: &[Option<&str>]| matches!(stack.last(), Some(Some(c)) if SPAWNERS.contains(c));
                    match &t.tok {
                        Tok::Punct('(') => {
                            let callee = match prev {
                                Some(Tok::Ident(name)) => Some(name.as_str()),
                                Some(Tok::Punct('!')) => Some("macro!"),
                                _ => enclosing.last().copied().flatten(),
                            };
                            enclosing.push(callee);
                        }
                        Tok::Punct('[') | Tok::Punct('{') => {
                            enclosing.push(enclosing.last().copied().flatten());
                        }
                        Tok::Punct(')') | Tok::Punct(']') | Tok::Punct('}') => {
                            enclosing.pop();
                        }
                        _ => {}
                    }
                    match &t.tok {
                        Tok::Str(s) if in_spawner(&enclosing) => {
                            for tool in runs(s) {
                                function.uses.entry(tool).or_insert(t.line);
                            }
                        }
                        Tok::Ident(callee)
                            if body.get(k + 1).map(|t| &t.tok) == Some(&Tok::Punct('(')) =>
                        {
                            let mut args = BTreeSet::new();
                            let mut depth = 0;
                            for a in &body[k + 1..] {
                                match &a.tok {
                                    Tok::Punct('(') => depth += 1,
                                    Tok::Punct(')') => {
                                        depth -= 1;
                                        if depth == 0 {
                                            break;
                                        }
                                    }
                                    Tok::Str(s) => args.extend(names(s)),
                                    _ => {}
                                }
                            }
                            let method = prev == Some(&Tok::Punct('.'));
                            function.calls.push((callee.clone(), method, args));
                        }
                        Tok::Ident(word)
                            if in_spawner(&enclosing)
                                && word.chars().all(|c| {
                                    c.is_uppercase() || c == '_' || c.is_ascii_digit()
                                }) =>
                        {
                            function.constants.insert(word.clone());
                        }
                        _ => {}
                    }
                }
                out.push(function);
            }
            _ => {}
        }
    }
    (out, constants)
}

/// Whether the `fn` at `at` carries `#[test]`, `#[tokio::test]` or `#[eval]` (its attributes
/// and qualifiers come right before it).
fn is_test(tokens: &[Token], at: usize) -> bool {
    let mut j = at;
    loop {
        if j == 0 {
            return false;
        }
        j -= 1;
        match &tokens[j].tok {
            Tok::Ident(q)
                if [
                    "pub", "async", "unsafe", "const", "extern", "crate", "super", "in",
                ]
                .contains(&q.as_str()) => {}
            Tok::Punct('(') | Tok::Punct(')') => {}
            Tok::Punct(']') => {
                // Back to the attribute's `#[`.
                let mut depth = 0;
                let mut words = Vec::new();
                loop {
                    match &tokens[j].tok {
                        Tok::Punct(']') => depth += 1,
                        Tok::Punct('[') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Tok::Ident(w) => words.push(w.clone()),
                        _ => {}
                    }
                    if j == 0 {
                        return false;
                    }
                    j -= 1;
                }
                words.reverse();
                let attr = words.join("::");
                if attr == "test"
                    || attr == "tokio::test"
                    || attr == "eval"
                    || attr.starts_with("tokio::test::")
                {
                    return true;
                }
                // The loop goes on before the attribute's `#`.
            }
            Tok::Punct('#') => {}
            _ => return false,
        }
    }
}

/// A test that runs a tool without the skip helper: where, which test, which tool.
#[derive(Debug, PartialEq)]
struct Offence {
    file: String,
    line: usize,
    test: String,
    tool: &'static str,
}

/// The offences among `files` (path, source) of one crate whose skip helper is `helper`.
fn scan(files: &[(String, String)], helper: &str) -> Vec<Offence> {
    let mut all: Vec<Function> = Vec::new();
    let mut constants: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for (path, text) in files {
        let (fs, cs) = functions(path, &lex(text));
        all.extend(fs);
        constants.extend(cs);
    }
    // A function's own uses include the constants it names.
    for f in &mut all {
        for c in f.constants.clone() {
            if let Some(tools) = constants.get(&c) {
                for &tool in tools {
                    f.uses.entry(tool).or_insert(f.line);
                }
            }
        }
    }
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in all.iter().enumerate() {
        by_name.entry(f.name.as_str()).or_default().push(i);
    }
    let resolve = |from: usize, name: &str, method: bool| -> Vec<usize> {
        let Some(candidates) = by_name.get(name) else {
            return Vec::new();
        };
        let same_file: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&i| all[i].file == all[from].file)
            .collect();
        if same_file.is_empty() && !method {
            candidates.clone()
        } else {
            same_file
        }
    };
    // What each function reaches (itself included).
    let reach = |start: usize| -> BTreeSet<usize> {
        let mut seen = BTreeSet::from([start]);
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            for (callee, method, _) in &all[i].calls {
                for j in resolve(i, callee, *method) {
                    if seen.insert(j) {
                        stack.push(j);
                    }
                }
            }
        }
        seen
    };
    let reaches: Vec<BTreeSet<usize>> = (0..all.len()).map(reach).collect();
    let is_guard = |i: usize| -> bool {
        reaches[i]
            .iter()
            .any(|&j| all[j].name == helper || all[j].calls.iter().any(|(c, _, _)| c == helper))
    };
    let guards: Vec<bool> = (0..all.len()).map(is_guard).collect();
    let mut offences = Vec::new();
    for (t, test) in all.iter().enumerate() {
        if !test.is_test {
            continue;
        }
        let mut uses: BTreeMap<&'static str, (String, usize)> = BTreeMap::new();
        let mut guarded: BTreeSet<&'static str> = BTreeSet::new();
        for &i in &reaches[t] {
            for (&tool, &line) in &all[i].uses {
                uses.entry(tool).or_insert((all[i].file.clone(), line));
            }
            for (callee, method, args) in &all[i].calls {
                let targets = resolve(i, callee, *method);
                let direct = callee == helper;
                if !direct && (targets.is_empty() || !targets.iter().all(|&j| guards[j])) {
                    continue;
                }
                guarded.extend(args.iter().copied());
                for j in targets {
                    for &k in &reaches[j] {
                        guarded.extend(all[k].uses.keys().copied());
                    }
                }
            }
        }
        for (tool, (file, line)) in uses {
            if !guarded.contains(tool) {
                offences.push(Offence {
                    file,
                    line,
                    test: format!("{}:{} {}", test.file, test.line, test.name),
                    tool,
                });
            }
        }
    }
    offences.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    offences
}

/// The test sources of a crate: its `tests/` (and, for the top-level `tests` crate, its own
/// files) whole, and its `src` from a file's first `#[cfg(test)]` on or whole `tests.rs`
/// files.
fn test_sources(root: &Path, krate: &str) -> Vec<(String, String)> {
    let dir = root.join(krate);
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
                continue;
            }
            // This file's planted sources are offences on purpose.
            if path.extension().is_none_or(|e| e != "rs") || name == "tool_skips.rs" {
                continue;
            }
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let text = std::fs::read_to_string(&path).expect("read a source file");
            let under_src = relative.components().any(|c| c.as_os_str() == "src");
            let whole = !under_src
                || krate == "tests"
                || name == "tests.rs"
                || relative.components().any(|c| c.as_os_str() == "tests");
            let text = if whole {
                text
            } else if let Some(at) = text.find("#[cfg(test)]") {
                // Keep the line numbers: blank out what comes before.
                let blank: String = text[..at].chars().filter(|&c| c == '\n').collect();
                format!("{blank}{}", &text[at..])
            } else {
                continue;
            };
            files.push((relative.to_string_lossy().into_owned(), text));
        }
    }
    files.sort();
    files
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("niceeval sits in the workspace")
        .to_path_buf()
}

#[test]
fn every_tool_dependent_test_goes_through_the_skip_helper() {
    let root = workspace_root();
    let mut offences = Vec::new();
    let mut tests_seen = 0;
    for &(krate, helper) in CRATES {
        let files = test_sources(&root, krate);
        tests_seen += files.len();
        offences.extend(scan(&files, helper));
    }
    assert!(
        tests_seen > 30,
        "the scan found only {tests_seen} test files"
    );
    assert!(
        offences.is_empty(),
        "tests that run an optional tool without their crate's skip helper (which skips with a \
         notice when the tool is missing and fails under CI):\n{}",
        offences
            .iter()
            .map(|o| format!("  {}:{}: `{}` in test {}", o.file, o.line, o.tool, o.test))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The scan itself, on planted sources.
mod scanner {
    use super::*;

    fn offences(src: &str) -> Vec<(usize, &'static str, String)> {
        scan(&[("planted.rs".to_string(), src.to_string())], "available")
            .into_iter()
            .map(|o| (o.line, o.tool, o.test))
            .collect()
    }

    #[test]
    fn a_test_that_spawns_a_tool_without_the_helper_is_named_with_its_line() {
        let src = r#"
fn available(ok: bool, what: &str, install: &str) -> bool { ok }

#[test]
fn uses_claude() {
    let _ = "escaped\nnewlines\nare not lines";
    let out = std::process::Command::new("claude").output().unwrap();
    assert!(out.status.success(), "`claude` is required");
}
"#;
        assert_eq!(
            offences(src),
            [(7, "claude", "planted.rs:5 uses_claude".to_string())]
        );
    }

    #[test]
    fn the_helper_directly_or_through_a_guard_function_guards_the_tool_it_names() {
        let src = r##"
fn available(ok: bool, what: &str, install: &str) -> bool { ok }
fn have(tool: &str) -> bool { available(true, tool, "install it") }
fn have_claude() -> bool {
    let ok = std::process::Command::new("claude").status().is_ok();
    available(ok, "`claude`", "bash scripts/install-claude-code.sh")
}
fn run_node(script: &str) { std::process::Command::new("node").arg(script); }

#[test]
fn guarded_by_name() {
    if !have("node") { return; }
    run_node("x.js");
}

#[test]
fn guarded_by_its_own_probe() {
    if !have_claude() { return; }
    std::process::Command::new("claude");
}

#[tokio::test]
async fn guarded_for_another_tool() {
    if !have("python3") { return; }
    run_node("x.js");
}

#[test]
fn a_stand_in() {
    write(dir, "claude", "#!/bin/sh"); // a stand-in of the test's own
}
"##;
        assert_eq!(
            offences(src),
            [(
                8,
                "node",
                "planted.rs:23 guarded_for_another_tool".to_string()
            )]
        );
    }

    #[test]
    fn commands_python_packages_constants_and_strings_that_only_mention_a_name() {
        let src = r##"
const CHROMIUM: &str = "/usr/bin/chromium";
const PROGRAM: &str = r#"import nltk
print(1)"#;

#[test]
fn many() {
    let _ = std::process::Command::new(CHROMIUM);
    let _ = Command::new("sh").args(["-c", "node grader.js"]);
    let _ = CommandAgent::new("python3", ["-c", PROGRAM]);
    let _ = script(["python3", "-m", "pytest"]);
    // "claude" in a comment is not a use, nor a name inside a sentence, nor a string that is
    // no program's:
    let _ = "the claude agent";
    let _ = ModelName::parse("claude").expect("chromium reads its commands");
    let _ = std::process::Command::new("python3").args(["-c", "print(1)"]);
    let _ = '"'; let _ = '\''; let _ = Command::new("codex \" quoted");
}
"##;
        let found: BTreeSet<&str> = offences(src).iter().map(|o| o.1).collect();
        assert_eq!(
            found,
            BTreeSet::from(["chromium", "codex", "node", "pytest", "python3 packages"])
        );
    }
}
