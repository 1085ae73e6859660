//! The public surface as rustdoc shows it: a bounded number of items, one public path per item
//! (the prelude aside), and no two public types with one name.
//!
//! rustdoc's JSON output (`--output-format json`, unstable, reached on a stable toolchain with
//! `RUSTC_BOOTSTRAP=1` given to rustdoc alone) lists every documented item of the crate; this test walks its module
//! tree from the root the way a reader of `cargo doc` does: modules, re-exports (`pub use`) and
//! the items they lead to. Hidden items (`#[doc(hidden)]`, such as `__private`) are not in the
//! output, exactly as they are not on the rendered pages.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The most public items (structs, enums, unions, traits, type aliases, functions, constants,
/// statics, macros, and re-exported foreign items) niceeval shows; methods are not counted.
/// 150 until the data-eval interface (`data_eval`: eight items, for runners of cases that are
/// not `#[eval]` functions, such as niceeval-suites) and the check context (`CheckContext`,
/// `WorkingCopy`) joined it; 163 once assertions as data read what the provider returned and
/// the run's trace (`spec::ProviderResponse`, `spec::TraceSpan`, both filled by a runner);
/// 165 once a runner's cases could be made when their turn to run comes
/// (`data_eval::Deferred`, `data_eval::Made`), so that 100,000 of them are not held at once;
/// 166 once a suite's start listed its evals without a string per case
/// (`reporter::EvalIds`: a million dataset cases are one entry).
const MAX_ITEMS: usize = 166;

/// Item kinds that count, as rustdoc's JSON names them.
const COUNTED: &[&str] = &[
    "struct",
    "enum",
    "union",
    "trait",
    "type_alias",
    "function",
    "constant",
    "static",
    "macro",
    "proc_macro",
];

/// Kinds that are types: two of them may not share a name.
const TYPES: &[&str] = &["struct", "enum", "union", "trait", "type_alias"];

struct Surface {
    /// Every counted item (by rustdoc id, or `extern:<source>` for a foreign re-export) with its
    /// kind and every public path that leads to it.
    items: BTreeMap<String, (String, Vec<String>)>,
}

fn kind(item: &Value) -> &str {
    item["inner"]
        .as_object()
        .and_then(|inner| inner.keys().next())
        .map(String::as_str)
        .unwrap_or("?")
}

impl Surface {
    fn read(json: &Value) -> Surface {
        let mut surface = Surface {
            items: BTreeMap::new(),
        };
        let root = json["root"].to_string();
        let mut visiting = BTreeSet::new();
        surface.walk(json, &root, "niceeval", &mut visiting);
        surface
    }

    fn walk(&mut self, json: &Value, module: &str, path: &str, visiting: &mut BTreeSet<String>) {
        if !visiting.insert(module.to_string()) {
            return;
        }
        let index = &json["index"];
        let children = index[module]["inner"]["module"]["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for child in children {
            let id = child.to_string();
            let item = &index[&id];
            if item.is_null() {
                continue;
            }
            match kind(item) {
                "use" => {
                    let import = &item["inner"]["use"];
                    if import["is_glob"].as_bool() == Some(true) {
                        continue;
                    }
                    let name = import["name"].as_str().unwrap_or("?");
                    let at = format!("{path}::{name}");
                    let target = import["id"].to_string();
                    let resolved = &index[&target];
                    if resolved.is_null() {
                        // A foreign item (`regex::Regex`, `serde_json::json!`): one entry per
                        // name, however many modules re-export it.
                        self.add(format!("extern:{name}"), "re-export", at);
                    } else if kind(resolved) == "module" {
                        // `pub use` of a name that is both a function and a crate-private
                        // module (`expect::bleu`) points at the module: only a public module
                        // is a place a reader can go.
                        if resolved["visibility"].as_str() == Some("public") {
                            self.walk(json, &target, &at, visiting);
                        }
                    } else if COUNTED.contains(&kind(resolved)) {
                        self.add(target, kind(resolved), at);
                    }
                }
                // A private module whose items are re-exported elsewhere is "stripped".
                "module" if item["inner"]["module"]["is_stripped"].as_bool() != Some(true) => {
                    let name = item["name"].as_str().unwrap_or("?");
                    self.walk(json, &id, &format!("{path}::{name}"), visiting);
                }
                other if COUNTED.contains(&other) => {
                    let name = item["name"].as_str().unwrap_or("?");
                    self.add(id, other, format!("{path}::{name}"));
                }
                _ => {}
            }
        }
        visiting.remove(module);
    }

    fn add(&mut self, id: String, kind: &str, path: String) {
        self.items
            .entry(id)
            .or_insert_with(|| (kind.to_string(), Vec::new()))
            .1
            .push(path);
    }

    /// The paths of an item outside the prelude (which re-exports on purpose).
    fn homes(paths: &[String]) -> Vec<&String> {
        paths
            .iter()
            .filter(|p| !p.starts_with("niceeval::prelude::"))
            .collect()
    }

    fn listing(&self) -> String {
        let mut lines: Vec<String> = self
            .items
            .values()
            .map(|(kind, paths)| format!("  {kind:<10} {}", paths.join(", ")))
            .collect();
        lines.sort();
        lines.join("\n")
    }
}

/// rustdoc's JSON output for the library (default features, as docs.rs and users see it),
/// made from the arguments cargo gives rustdoc for niceeval's doc-tests when it can, else by
/// `cargo rustdoc`.
fn rustdoc_json() -> Value {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("niceeval sits in the workspace");
    let out = tempfile::tempdir().expect("a temporary directory");
    let file = match doctest_arguments(workspace) {
        Some(arguments) => json_from_doctest_arguments(workspace, &arguments, out.path()),
        None => cargo_rustdoc_json(workspace),
    };
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    serde_json::from_str(&text).expect("rustdoc writes JSON")
}

/// The arguments `cargo test --doc --workspace` gives rustdoc for niceeval's doc-tests, read by
/// a wrapper named by `RUSTDOC` that runs no doc-test: cargo resolves the workspace as
/// `cargo test --workspace` did, so every dependency is the rlib that command built — where
/// `cargo rustdoc` would first make a check build of each one (about 45 s of a fresh
/// `cargo test --workspace` on 2 cores). `None` when cargo did not call the wrapper for
/// niceeval.
fn doctest_arguments(workspace: &Path) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let recorded = dir.path().join("arguments");
    let mut command = cargo_with_rustdoc(
        workspace,
        dir.path(),
        &format!(
            "case \" $* \" in *\" --crate-name niceeval \"*) printf '%s\\0' \"$@\" > '{}' ;; esac\nexit 0",
            recorded.display()
        ),
    );
    command.args(["test", "--doc", "--workspace", "--quiet"]);
    // A failure (a build error, or Ctrl-C, which reaches the whole process group) stops the
    // test: `cargo rustdoc` would only fail the same way, or start a build after an interrupt.
    succeeded(&mut command, "`cargo test --doc --workspace`");
    let Ok(bytes) = std::fs::read(&recorded) else {
        eprintln!("surface: cargo ran no doc-test of niceeval, falling back to `cargo rustdoc`");
        return None;
    };
    Some(
        String::from_utf8_lossy(&bytes)
            .split('\0')
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Runs rustdoc with niceeval's doc-test `arguments` turned into a documentation run with JSON
/// output into `out`: without the doc-test options and without the `--extern` of niceeval
/// itself (doc-tests link the library they test).
fn json_from_doctest_arguments(workspace: &Path, arguments: &[String], out: &Path) -> PathBuf {
    const WITH_VALUE: &[&str] = &[
        "--test-args",
        "--test-run-directory",
        "--persist-doctests",
        "--runtool",
        "--runtool-arg",
        "--test-builder",
    ];
    let mut kept = Vec::new();
    let mut rest = arguments.iter();
    while let Some(argument) = rest.next() {
        let argument = argument.as_str();
        if WITH_VALUE.contains(&argument) {
            rest.next();
        } else if argument == "--extern" {
            match rest.next() {
                Some(value) if value.starts_with("niceeval=") => {}
                Some(value) => kept.extend(["--extern".to_string(), value.clone()]),
                None => {}
            }
        } else if !matches!(argument, "--test" | "--no-run" | "--nocapture")
            && !WITH_VALUE
                .iter()
                .any(|o| argument.starts_with(&format!("{o}=")))
        {
            kept.push(argument.to_string());
        }
    }
    let rustdoc = std::env::var("RUSTDOC").unwrap_or_else(|_| "rustdoc".to_string());
    succeeded(
        Command::new(rustdoc)
            .current_dir(workspace)
            .env("RUSTC_BOOTSTRAP", "1")
            .args(&kept)
            .args(["-Z", "unstable-options", "--output-format", "json", "-o"])
            .arg(out),
        &format!("rustdoc with niceeval's doc-test arguments {kept:?}"),
    );
    out.join("niceeval.json")
}

/// Runs `command` to its end; one that cannot start or fails fails the test, naming `what`,
/// its exit status and its stderr.
fn succeeded(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what} cannot start: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A `cargo` command in `workspace` whose rustdoc is a shell script with `body`, written into
/// `dir` (cargo's own `RUSTC_BOOTSTRAP` and `RUSTDOCFLAGS` removed).
fn cargo_with_rustdoc(workspace: &Path, dir: &Path, body: &str) -> Command {
    let wrapper = dir.join("rustdoc");
    std::fs::write(&wrapper, format!("#!/bin/sh\n{body}\n")).expect("write the rustdoc wrapper");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
            .expect("make the wrapper executable");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .env("RUSTDOC", wrapper)
        .env_remove("RUSTC_BOOTSTRAP")
        .env_remove("RUSTDOCFLAGS");
    command
}

/// Runs `cargo rustdoc` with JSON output for the library.
///
/// Only rustdoc sees `RUSTC_BOOTSTRAP` (through a wrapper named by `RUSTDOC`): set for the whole
/// `cargo rustdoc`, it would reach the dependencies' build scripts, several of which switch on
/// nightly features when they see it, so their check builds could not be shared with
/// `cargo doc` and `cargo clippy` and needed a target directory of their own (a second check
/// build of every dependency). This way the build uses the workspace's target directory: the
/// dependencies' check builds are those of `cargo doc` / `cargo clippy` when they ran before,
/// and the build scripts and proc macros are those of the tests' own build.
fn cargo_rustdoc_json(workspace: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| workspace.join("target"));
    let wrapper_dir = tempfile::tempdir().expect("a temporary directory");
    let rustdoc = std::env::var("RUSTDOC").unwrap_or_else(|_| "rustdoc".to_string());
    succeeded(
        cargo_with_rustdoc(
            workspace,
            wrapper_dir.path(),
            &format!("RUSTC_BOOTSTRAP=1 exec '{rustdoc}' \"$@\""),
        )
        .args(["rustdoc", "-p", "niceeval", "--lib", "--target-dir"])
        .arg(&target)
        .args(["--", "-Z", "unstable-options", "--output-format", "json"]),
        "`cargo rustdoc`",
    );
    target.join("doc").join("niceeval.json")
}

#[test]
fn the_public_surface_is_small_with_one_path_per_item_and_one_item_per_type_name() {
    let surface = Surface::read(&rustdoc_json());
    let listing = surface.listing();

    let mut problems = Vec::new();
    if surface.items.len() > MAX_ITEMS {
        problems.push(format!(
            "{} public items, at most {MAX_ITEMS} allowed: make internals private or \
             `pub(crate)`, reach matchers and checks through their constructors",
            surface.items.len()
        ));
    }
    for (kind, paths) in surface.items.values() {
        let homes = Surface::homes(paths);
        if homes.len() > 1 {
            problems.push(format!(
                "{kind} reachable by {} paths: {}; keep one",
                homes.len(),
                homes
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let mut by_name: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for (kind, paths) in surface.items.values() {
        if !TYPES.contains(&kind.as_str()) {
            continue;
        }
        if let Some(home) = Surface::homes(paths).first().copied().or(paths.first()) {
            let name = home.rsplit("::").next().unwrap_or(home);
            by_name.entry(name).or_default().push(home);
        }
    }
    for (name, homes) in by_name {
        if homes.len() > 1 {
            problems.push(format!(
                "two public types named `{name}`: {}; rename one",
                homes
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n\nthe public items ({}):\n{listing}",
        problems.join("\n"),
        surface.items.len()
    );
    // Printed under --nocapture: the figure the issue asks for.
    println!("{} public items:\n{listing}", surface.items.len());
}

#[test]
fn the_walk_sees_modules_reexports_and_foreign_items() {
    // A hand-made index in rustdoc's shape: root { struct A, use A as B (second path), mod m
    // { fn f }, use regex::Regex (foreign), use of a crate-private module m2 { fn g } }.
    let json: Value = serde_json::json!({
        "root": 0,
        "index": {
            "0": { "name": "niceeval", "inner": { "module": { "items": [1, 2, 3, 5, 6] } } },
            "1": { "name": "A", "inner": { "struct": {} } },
            "2": { "name": null, "inner": { "use": { "name": "B", "id": 1, "is_glob": false, "source": "crate::A" } } },
            "3": { "name": "m", "visibility": "public", "inner": { "module": { "items": [4] } } },
            "4": { "name": "f", "inner": { "function": {} } },
            "5": { "name": null, "inner": { "use": { "name": "Regex", "id": 99, "is_glob": false, "source": "regex::Regex" } } },
            "6": { "name": null, "inner": { "use": { "name": "m2", "id": 7, "is_glob": false, "source": "crate::m2" } } },
            "7": { "name": "m2", "visibility": "crate", "inner": { "module": { "items": [8] } } },
            "8": { "name": "g", "inner": { "function": {} } }
        }
    });
    let surface = Surface::read(&json);
    assert_eq!(surface.items.len(), 3, "{}", surface.listing());
    assert_eq!(
        surface.items["1"].1,
        vec!["niceeval::A".to_string(), "niceeval::B".to_string()]
    );
    assert_eq!(surface.items["4"].1, vec!["niceeval::m::f".to_string()]);
    assert!(surface.items.contains_key("extern:Regex"));
    assert!(
        !surface.items.contains_key("8"),
        "a crate-private module is not walked"
    );
}

/// The doors of `lib.rs`, each with its audience and the most items it may name. rustdoc drops
/// hidden items, so they are counted from `lib.rs` itself.
const DOORS: &[(&str, &str, usize)] = &[
    // What the code `#[eval]`, `main!` and `assert_report_snapshot!` expand to names.
    ("__private", "generated code", 32),
    // niceeval-suites, the `niceeval` command, the benchmarks and the integration tests.
    // 155: suite files' AgentV round added the long-lived worker (transformVars), a run's
    // working copy for script graders, "did you mean" for suite keys, an agent's reported
    // duration.
    // 169: the run history (`niceeval history` and the viewer's trends read it): the store,
    // its rows and points, the marking rule and where the file is (13 names), and its
    // `[history]` section's type (the book's config reference test reads it).
    ("__workspace", "the workspace's own crates", 169),
];

/// The items `pub mod <door> { .. }` of `lib` names: each leaf of a `pub use` (a glob is
/// an error: the door names what it lets through) and each item it defines (`pub fn`,
/// `pub struct`, `pub trait`, `pub const`), as paths below the door.
fn door_items(lib: &str, door: &str) -> Result<Vec<String>, String> {
    let start = lib
        .find(&format!("pub mod {door} {{"))
        .ok_or(format!("lib.rs has no `pub mod {door}`"))?;
    // The module's body, to its closing brace.
    let body = &lib[start..];
    let mut depth = 0;
    let mut end = body.len();
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let code: String = body[..end]
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut items = Vec::new();
    // The module path of each position: `pub mod name {` opens one.
    let mut modules: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut rest = code.as_str();
    while !rest.is_empty() {
        let prefix = modules
            .iter()
            .skip(1)
            .map(|(m, _)| format!("{m}::"))
            .collect::<String>();
        if let Some(after) = rest.strip_prefix("pub mod ") {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            modules.push((name.clone(), depth + 1));
            rest = &after[name.len()..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("pub use ") {
            let statement = &after[..after.find(';').ok_or("a `pub use` without `;`")?];
            for leaf in use_leaves(statement) {
                if leaf.ends_with('*') {
                    return Err(format!(
                        "`{door}::{prefix}` re-exports a glob (`{statement}`): name the items"
                    ));
                }
                items.push(format!("{prefix}{leaf}"));
            }
            rest = &after[statement.len()..];
            continue;
        }
        for kind in [
            "pub fn ",
            "pub const fn ",
            "pub struct ",
            "pub trait ",
            "pub const ",
        ] {
            if let Some(after) = rest.strip_prefix(kind)
                && depth == modules.last().map_or(0, |m| m.1)
            {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                items.push(format!("{prefix}{name}"));
                break;
            }
        }
        let c = rest.chars().next().expect("not empty");
        match c {
            '{' => depth += 1,
            '}' => {
                if modules.last().is_some_and(|m| m.1 == depth) {
                    modules.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    Ok(items)
}

/// The names a `use` tree brings in: `a::{b, c::{d as e}}` → `b`, `e`.
fn use_leaves(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut leaves = Vec::new();
    let mut stack = vec![String::new()];
    let mut word = String::new();
    let flush = |word: &mut String, leaves: &mut Vec<String>| {
        let w = word.trim();
        if !w.is_empty() {
            let name = match w.rsplit_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => w.rsplit("::").next().unwrap_or(w),
            };
            leaves.push(name.to_string());
        }
        word.clear();
    };
    for c in tree.chars() {
        match c {
            '{' => {
                stack.push(std::mem::take(&mut word));
            }
            ',' => flush(&mut word, &mut leaves),
            '}' => {
                flush(&mut word, &mut leaves);
                stack.pop();
            }
            _ => word.push(c),
        }
    }
    flush(&mut word, &mut leaves);
    leaves
}

#[test]
fn each_door_names_its_items_and_is_counted_against_its_own_budget() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    for &(door, audience, max) in DOORS {
        let items = door_items(&lib, door).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            items.len() <= max,
            "`{door}` (for {audience}) names {} items, at most {max} allowed: keep internals \
             behind the door of their module:\n{}",
            items.len(),
            items.join("\n")
        );
        // Printed under --nocapture: the door's size.
        println!("{door} names {} items:\n{}", items.len(), items.join("\n"));
    }
}

/// Every item of the generated code's door is named by code a macro expands to: the
/// proc macros of niceeval-macros or a `macro_rules!` of niceeval's own.
#[test]
fn the_generated_codes_door_holds_only_what_generated_code_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("lib.rs");
    let mut generating = String::new();
    // In niceeval's own files only the bodies of `macro_rules!` generate code.
    for (dir, macros_only) in [
        (root.join("../niceeval-macros/src"), false),
        (root.join("src"), true),
    ] {
        let mut stack = vec![dir];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("a source folder") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    if macros_only {
                        for body in text.split("macro_rules!").skip(1) {
                            generating.push_str(body.split("\n}\n").next().unwrap_or(body));
                        }
                    } else {
                        generating.push_str(&text);
                    }
                }
            }
        }
    }
    // Named inside the door itself by the items generated code calls (`body` takes a
    // `BodyOutput`; `make_agent` an `IntoAgent`; both are spanned onto the user's code).
    let by_signature = ["IntoBodyResult", "IntoAgent"];
    let unnamed: Vec<String> = door_items(&lib, "__private")
        .expect("items")
        .into_iter()
        .filter(|item| !by_signature.contains(&item.as_str()))
        .filter(|item| !generating.contains(&format!("__private::{item}")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "`__private` is the door of generated code, but no macro names {unnamed:?}: move them \
         to `__workspace` (the door of the workspace's crates)"
    );
}

#[test]
fn the_door_count_reads_uses_items_and_refuses_globs() {
    let lib = "pub mod __private {\n    pub use crate::a::{B, c::{D as E}};\n    pub use std::sync::Arc; // a comment { }\n    pub mod inner {\n        pub use crate::x::y;\n    }\n    pub trait T {\n        fn m(&self);\n    }\n    pub fn f() {}\n}\npub fn outside() {}\n";
    assert_eq!(
        door_items(lib, "__private").expect("items"),
        ["B", "E", "Arc", "inner::y", "T", "f"]
    );
    let glob = "pub mod __workspace {\n    pub mod config {\n        pub use crate::config::*;\n    }\n}\n";
    assert!(
        door_items(glob, "__workspace")
            .unwrap_err()
            .contains("`__workspace::config::` re-exports a glob"),
    );
}
