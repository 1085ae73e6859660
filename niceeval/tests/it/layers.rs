//! The layering rule of ARCHITECTURE.md, enforced. `niceeval/src` is a folder per layer
//! (`base/`, `config/`, `resources/`, `checks/`, `agents/`, `run/`, `output/`, `front/`), each
//! holding modules of finer layers in order; every module belongs to one finer layer, and its
//! code names (`crate::folder::module…`) only modules of its own layer or of layers below it,
//! with no cycle inside a layer — so a folder names only itself and the folders below it, and
//! the folders' order is the layers' order. Comment lines, everything from a file's first
//! `#[cfg(test)]` on, and test modules in files of their own (`tests.rs`, `tests/`) are not read
//! (tests may reach anywhere). niceeval-suites, built on niceeval, is checked at its boundary:
//! it reaches niceeval only through its public modules, `data_eval` and the workspace's door.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The folders of `niceeval/src`, bottom first, each with its finer layers, bottom first, and
/// their modules. A module missing from this table, or sitting in another folder than its
/// layer's, fails the test: a new module has to find its layer and its folder.
const LAYERS: &[(&str, &str, &[&str])] = &[
    (
        "base",
        "foundation",
        &[
            "event",
            "excerpt",
            "redact",
            "panic",
            "stats",
            "assertion",
            "outcome",
            "grader",
            "suggest",
            "process",
        ],
    ),
    ("config", "configuration", &["config"]),
    ("resources", "working copies", &["workspace"]),
    ("resources", "prices and cache", &["cache", "price"]),
    ("checks", "matchers", &["expect", "spec"]),
    ("checks", "scoped checks", &["scope", "run_budget"]),
    (
        "agents",
        "agents and models",
        &["provider", "trace", "agent"],
    ),
    (
        "run",
        "handle",
        &[
            "record",
            "turn",
            "eval",
            "error",
            "definition",
            "dataset",
            "data_eval",
        ],
    ),
    ("run", "judge", &["judge"]),
    ("run", "comparison", &["compare"]),
    ("run", "report", &["report"]),
    ("run", "engine", &["engine"]),
    (
        "output",
        "outputs",
        &["results", "history", "reporter", "snapshot"],
    ),
    ("front", "front ends", &["harness", "libtest"]),
];

/// The folders, bottom first.
fn folders() -> Vec<&'static str> {
    let mut folders: Vec<&str> = Vec::new();
    for (folder, _, _) in LAYERS {
        if folders.last() != Some(folder) {
            folders.push(folder);
        }
    }
    folders
}

/// `code` with every folder taken out of its paths (`crate::base::event` → `crate::event`,
/// `crate::run::{eval::Eval, turn}` → `crate::{eval::Eval, turn}`): the modules' names are
/// unique across folders, and the rule is read on modules.
fn without_folders(code: &str) -> String {
    let mut code = code.to_string();
    for folder in folders() {
        if folder == "config" {
            continue;
        }
        code = code.replace(&format!("crate::{folder}::"), "crate::");
    }
    code
}

/// A file's path below `src`, as the module it belongs to sees it: its folder taken out
/// (`run/eval/mod.rs` → `eval/mod.rs`); `None` for lib.rs and the folders' own `mod.rs`.
fn module_path(rel: &[String]) -> Option<Vec<String>> {
    match rel {
        [only] if only == "lib.rs" => None,
        [folder, rest @ ..] if folder != "config" && folders().contains(&folder.as_str()) => {
            if rest.len() == 1 && rest[0] == "mod.rs" {
                None
            } else {
                Some(rest.to_vec())
            }
        }
        other => Some(other.to_vec()),
    }
}

/// The folder each module sits in (`event` → `base`).
fn folder_of_modules(src: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for folder in folders() {
        let dir = src.join(folder);
        if folder == "config" {
            found.insert("config".to_string(), "config".to_string());
            continue;
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let name = entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .to_string();
            let module = name.trim_end_matches(".rs").to_string();
            if module != "mod" {
                found.insert(module, folder.to_string());
            }
        }
    }
    found
}

/// Module → the code of all its files, comments cut off and folders taken out of its paths;
/// with `tests` false the test code too (from a file's first `#[cfg(test)]` on, and test
/// modules in files of their own).
fn read_modules(src: &Path, tests: bool) -> BTreeMap<String, String> {
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel: Vec<String> = path
                .strip_prefix(src)
                .expect("under src")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            let Some(rel) = module_path(&rel) else {
                continue;
            };
            if rel[0] == "bin" {
                continue;
            }
            // A test module of its own file (`#[cfg(test)] mod tests;`).
            if !tests && rel.iter().any(|c| c == "tests" || c == "tests.rs") {
                continue;
            }
            let module = rel[0].trim_end_matches(".rs").to_string();
            let text = std::fs::read_to_string(&path).expect("read file");
            let code = if tests {
                text.as_str()
            } else {
                text.split("#[cfg(test)]").next().unwrap_or("")
            };
            let code: String = code
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            modules
                .entry(module)
                .or_default()
                .push_str(&without_folders(&code));
        }
    }
    modules
}

/// The modules `code` names through `crate::`: `crate::a::b`, `crate::{a::X, b}`.
fn imports(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if modules.contains(&name) {
                    found.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                found.insert(name);
            }
        }
    }
    found
}

/// The names `code` reaches through the crate's root (`crate::Outcome`, a re-export of lib.rs)
/// instead of through a module: an arrow up to lib.rs, which sits above every layer.
/// (`$crate::` in a macro is the path generated code takes, and is not read.)
fn through_root(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let generated = rest[..at].ends_with('$');
        rest = &rest[at + "crate::".len()..];
        let names: Vec<String> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(|part| part.trim().to_string())
                .collect(),
            None => vec![rest.to_string()],
        };
        for name in names {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !generated && !name.is_empty() && !modules.contains(&name) && name != "self" {
                found.insert(name);
            }
        }
    }
    found
}

/// The files of `src` outside lib.rs and test code, as (path below `src`, code without
/// comment lines).
fn read_files(src: &Path) -> Vec<(Vec<String>, String)> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel: Vec<String> = path
                .strip_prefix(src)
                .expect("under src")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            let Some(rel) = module_path(&rel) else {
                continue;
            };
            if rel.iter().any(|c| c == "tests" || c == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read file");
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code: String = code
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            files.push((rel, without_folders(&code)));
        }
    }
    files
}

/// Import circles between the submodules of one module (`config/agent.rs` naming
/// `super::validate` and `config/validate.rs` naming `super::agent`), as readable lines. A
/// submodule is a file `module/x.rs` with its folder `module/x/`; it names a sibling `y` by
/// `crate::module::y` or by as many `super::` as it is deep (`module/mod.rs`, the parent, is
/// no sibling: children may name what it declares).
fn submodule_circles(files: &[(Vec<String>, String)]) -> Vec<String> {
    let mut siblings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, _) in files {
        if rel.len() >= 2 && rel[1] != "mod.rs" {
            let child = rel[1].trim_end_matches(".rs").to_string();
            siblings.entry(rel[0].clone()).or_default().insert(child);
        }
    }
    let mut problems = Vec::new();
    for (module, children) in &siblings {
        let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (rel, code) in files {
            if rel.len() < 2 || &rel[0] != module || rel[1] == "mod.rs" {
                continue;
            }
            let child = rel[1].trim_end_matches(".rs").to_string();
            // `module/x.rs` is one deep, `module/x/z.rs` two, `module/x/mod.rs` one.
            let depth = rel.len() - 1 - usize::from(rel.last().is_some_and(|f| f == "mod.rs"));
            let children_set: BTreeSet<String> = children.iter().cloned().collect();
            // Only paths into this module count: other top-level paths are hidden first (a
            // sibling `report` is not the top-level `crate::report`).
            let hidden = code
                .replace("crate::", "\u{1}::")
                .replace(&format!("\u{1}::{module}::"), "crate::");
            let mut named = imports(&hidden, &children_set);
            named.extend(imports(
                &hidden.replace(&"super::".repeat(depth), "crate::"),
                &children_set,
            ));
            named.remove(&child);
            arrows.entry(child).or_default().extend(named);
        }
        for start in arrows.keys() {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<Vec<String>> = vec![vec![start.clone()]];
            while let Some(path) = todo.pop() {
                let last = path.last().expect("non-empty path");
                for next in arrows.get(last).into_iter().flatten() {
                    if next == start {
                        problems.push(format!(
                            "import circle in `{module}`: {} -> {start}",
                            path.join(" -> ")
                        ));
                    } else if seen.insert(next.clone()) {
                        let mut longer = path.clone();
                        longer.push(next.clone());
                        todo.push(longer);
                    }
                }
            }
        }
    }
    problems
}

/// Every `(module, imported)` pair that breaks the rule, as readable lines. Test code may name
/// items through the root as a user does; the library's code may not.
fn violations(modules: &BTreeMap<String, String>) -> Vec<String> {
    violations_in(modules, true)
}

/// [`violations`], with or without the check of names reached through the root.
fn violations_in(modules: &BTreeMap<String, String>, root: bool) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, _, mods))| mods.iter().map(move |m| (*m, i)))
        .collect();
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut problems = Vec::new();
    let mut same_layer: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in modules {
        let Some(&mine) = layer_of.get(module.as_str()) else {
            problems.push(format!(
                "`{module}` is in no layer: add it to LAYERS in niceeval/tests/it/layers.rs and to ARCHITECTURE.md"
            ));
            continue;
        };
        for name in through_root(code, &names).into_iter().filter(|_| root) {
            problems.push(format!(
                "`{module}` names `crate::{name}` through lib.rs, which sits above every layer: name it by its own module's path"
            ));
        }
        for import in imports(code, &names) {
            if import == *module {
                continue;
            }
            let Some(&theirs) = layer_of.get(import.as_str()) else {
                continue;
            };
            if theirs > mine {
                problems.push(format!(
                    "`{module}` ({}) imports `{import}` ({}), a layer above it",
                    LAYERS[mine].1, LAYERS[theirs].1
                ));
            } else if theirs == mine {
                same_layer
                    .entry(module.as_str())
                    .or_default()
                    .insert(import);
            }
        }
    }
    // Inside a layer imports are allowed, cycles are not.
    for start in same_layer.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<Vec<String>> = vec![vec![start.to_string()]];
        while let Some(path) = todo.pop() {
            let last = path.last().expect("non-empty path");
            for next in same_layer.get(last.as_str()).into_iter().flatten() {
                if next == start {
                    problems.push(format!("import cycle: {} -> {start}", path.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    todo.push(longer);
                }
            }
        }
    }
    problems
}

#[test]
fn every_module_imports_only_its_own_layer_or_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = read_modules(&src, false);
    assert!(modules.len() > 20, "read {} modules", modules.len());
    let problems = violations(&modules);
    assert!(
        problems.is_empty(),
        "the layering rule of ARCHITECTURE.md is broken:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn each_module_sits_in_its_layers_folder_and_the_folders_keep_the_layers_order() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    // A folder's layers are contiguous: the folders, bottom first, are the layers' order.
    let mut seen: Vec<&str> = Vec::new();
    for (folder, layer, _) in LAYERS {
        if seen.last() != Some(folder) {
            if seen.contains(folder) {
                problems.push(format!(
                    "layer `{layer}` is in `{folder}/`, but a layer of another folder sits \
                     between it and `{folder}/`'s others"
                ));
            }
            seen.push(folder);
        }
    }
    let placed = folder_of_modules(&src);
    for (folder, layer, modules) in LAYERS {
        for module in *modules {
            match placed.get(*module) {
                Some(actual) if actual == folder => {}
                Some(actual) => problems.push(format!(
                    "`{module}` ({layer}) sits in `{actual}/`, its layer's folder is `{folder}/`"
                )),
                None => problems.push(format!(
                    "`{module}` ({layer}) is not in `{folder}/` (or anywhere in src/)"
                )),
            }
        }
    }
    for (module, folder) in &placed {
        if !LAYERS
            .iter()
            .any(|(_, _, modules)| modules.contains(&module.as_str()))
        {
            problems.push(format!(
                "`{folder}/{module}` is in no layer: add it to LAYERS in \
                 niceeval/tests/it/layers.rs and to ARCHITECTURE.md"
            ));
        }
    }
    // Nothing but the folders (and lib.rs) at the top of src/.
    for entry in std::fs::read_dir(&src).expect("read src") {
        let name = entry
            .expect("dir entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        if name != "lib.rs" && !folders().contains(&name.as_str()) {
            problems.push(format!(
                "`src/{name}` is not a layer's folder: put it in the folder of its layer"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "niceeval/src does not show the layers:\n  {}",
        problems.join("\n  ")
    );
}

/// niceeval's public modules: what a crate built on niceeval may name below `niceeval::`
/// besides the root's items and the workspace's door.
const PUBLIC_MODULES: &[&str] = &[
    "agent",
    "compare",
    "data_eval",
    "expect",
    "grader",
    "prelude",
    "reporter",
    "scope",
    "spec",
    "trace",
    "workspace",
];

/// The places in `code` that reach niceeval other than through a public module, a root item
/// or the workspace's door (`__private` is generated code's door).
fn through_a_back_door(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("niceeval::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "niceeval::".len()..];
        // `niceeval::{Eval, spec::AssertSpec}`: each name of the group.
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .collect(),
            None => vec![rest],
        };
        for name in names {
            let name: String = name
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let root_item = name.chars().next().is_some_and(char::is_uppercase)
                || ["json", "async_trait", "eval", "self"].contains(&name.as_str());
            if !(root_item || name == "__workspace" || PUBLIC_MODULES.contains(&name.as_str())) {
                found.push(format!("niceeval::{name}"));
            }
        }
    }
    found
}

#[test]
fn niceeval_suites_reaches_niceeval_only_through_its_interface_and_the_workspace_door() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../niceeval-suites/src");
    let mut problems = Vec::new();
    let mut stack = vec![src.clone()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read niceeval-suites/src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read file");
            files += 1;
            let code: String = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for door in through_a_back_door(&code) {
                problems.push(format!("{}: {door}", path.display()));
            }
        }
    }
    assert!(files > 10, "read {files} files of niceeval-suites");
    assert!(
        problems.is_empty(),
        "niceeval-suites names niceeval outside its public modules and `__workspace`:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_back_door_into_niceeval_is_caught() {
    let code = "use niceeval::__private::EvalDefinition;\nuse niceeval::__workspace::scope::Check;\nuse niceeval::spec::AssertSpec;\nuse niceeval::{Eval, json, engine::run};\nfn f(e: niceeval::Error) {}\n";
    assert_eq!(
        through_a_back_door(code),
        ["niceeval::__private", "niceeval::engine"]
    );
}

#[test]
fn no_import_circle_between_the_files_of_a_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_files(&src);
    assert!(files.len() > 100, "read {} files", files.len());
    let problems = submodule_circles(&files);
    assert!(
        problems.is_empty(),
        "files of one module name each other (move what both need into a module below them):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_circle_between_files_is_caught() {
    let files = vec![
        (
            vec!["config".to_string(), "agent.rs".to_string()],
            "use super::validate;".to_string(),
        ),
        (
            vec!["config".to_string(), "validate.rs".to_string()],
            "one_of(d, super::agent::INPUT_MODES)".to_string(),
        ),
        (
            vec!["config".to_string(), "mod.rs".to_string()],
            "pub use agent::X; pub use validate::Y;".to_string(),
        ),
        (
            vec![
                "spec".to_string(),
                "prepare".to_string(),
                "mod.rs".to_string(),
            ],
            "use crate::spec::builtin::b;".to_string(),
        ),
        (
            vec!["spec".to_string(), "builtin.rs".to_string()],
            "use super::values::v;".to_string(),
        ),
        (
            vec!["spec".to_string(), "values.rs".to_string()],
            String::new(),
        ),
    ];
    assert_eq!(
        submodule_circles(&files),
        [
            "import circle in `config`: agent -> validate -> agent",
            "import circle in `config`: validate -> agent -> validate"
        ]
    );
}

#[test]
fn a_name_through_the_root_is_caught() {
    let mut modules = BTreeMap::new();
    modules.insert(
        "reporter".to_string(),
        "let s = |o: crate::Outcome| 1; use crate::{outcome::Outcome, Eval}; $crate::__private::x"
            .to_string(),
    );
    modules.insert("outcome".to_string(), String::new());
    modules.insert("eval".to_string(), String::new());
    let problems = violations(&modules);
    assert_eq!(
        problems,
        [
            "`reporter` names `crate::Eval` through lib.rs, which sits above every layer: name it by its own module's path",
            "`reporter` names `crate::Outcome` through lib.rs, which sits above every layer: name it by its own module's path"
        ]
    );
}

#[test]
fn test_code_keeps_the_layers_too() {
    // A unit test of a lower layer that reaches up (a comparison test reading the report's words)
    // ties the two modules into a cycle: such a test belongs with the higher module.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = violations_in(&read_modules(&src, true), false);
    assert!(
        problems.is_empty(),
        "test code breaks the layering rule of ARCHITECTURE.md:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn an_upward_import_is_caught() {
    let mut modules = BTreeMap::new();
    modules.insert(
        "event".to_string(),
        "use crate::engine::run_eval;".to_string(),
    );
    modules.insert(
        "engine".to_string(),
        "use crate::{event::Event, report};".to_string(),
    );
    modules.insert("report".to_string(), String::new());
    let problems = violations(&modules);
    assert_eq!(
        problems,
        ["`event` (foundation) imports `engine` (engine), a layer above it"]
    );
}

#[test]
fn a_cycle_inside_a_layer_is_caught() {
    let mut modules = BTreeMap::new();
    modules.insert("reporter".to_string(), "use crate::results::X;".to_string());
    modules.insert("results".to_string(), "crate::reporter::Y".to_string());
    let problems = violations(&modules);
    assert!(
        problems.iter().any(|p| p.starts_with("import cycle")),
        "{problems:?}"
    );
}

#[test]
fn a_module_without_a_layer_is_caught() {
    let mut modules = BTreeMap::new();
    modules.insert("brand_new".to_string(), String::new());
    let problems = violations(&modules);
    assert!(
        problems[0].contains("`brand_new` is in no layer"),
        "{problems:?}"
    );
}

/// The codemap of ARCHITECTURE.md: folder (`src/`, `agent/`, …) → the modules its line names.
fn codemap(architecture: &str) -> BTreeMap<String, BTreeSet<String>> {
    let section = architecture
        .split("\n## Codemap\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("ARCHITECTURE.md has a `## Codemap` section");
    let mut map = BTreeMap::new();
    for line in section.lines() {
        let Some(rest) = line.strip_prefix("- `") else {
            continue;
        };
        let Some((folder, names)) = rest.split_once("`:") else {
            continue;
        };
        let names = names
            .split(',')
            .map(|n| n.trim().trim_matches('`').to_string())
            .filter(|n| !n.is_empty())
            .collect();
        map.insert(folder.to_string(), names);
    }
    map
}

/// The tree's modules the same way: every `.rs` file but `lib.rs` and test modules, `x/mod.rs`
/// named `x` in its parent folder.
fn tree(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .to_string();
            if path.is_dir() {
                if name != "tests" {
                    stack.push(path);
                }
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if stem == "tests" || (stem == "lib" && dir == src) {
                continue;
            }
            let folder = |d: &Path| match d.strip_prefix(src).expect("under src") {
                p if p.as_os_str().is_empty() => "src/".to_string(),
                p => format!("{}/", p.to_string_lossy()),
            };
            if stem == "mod" {
                let parent = dir.parent().expect("a parent");
                let module = dir.file_name().expect("a folder name").to_string_lossy();
                map.entry(folder(parent))
                    .or_default()
                    .insert(module.to_string());
            } else {
                map.entry(folder(&dir))
                    .or_default()
                    .insert(stem.to_string());
            }
        }
    }
    map
}

#[test]
fn the_codemap_names_every_module_of_the_tree_and_no_other() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(manifest.join("../ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let listed = codemap(&architecture);
    let actual = tree(&manifest.join("src"));
    let mut problems = Vec::new();
    for (folder, names) in &actual {
        let have = listed.get(folder).cloned().unwrap_or_default();
        for name in names.difference(&have) {
            problems.push(format!("`{folder}{name}` is not in the codemap"));
        }
    }
    for (folder, names) in &listed {
        let have = actual.get(folder).cloned().unwrap_or_default();
        for name in names.difference(&have) {
            problems.push(format!(
                "the codemap names `{folder}{name}`, which is not in the tree"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's codemap does not match niceeval/src (its line per folder, under \
         `## Codemap`):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_codemap_line_is_read_as_its_folder_and_names() {
    let text = "# A\n\n## Codemap\n\nIntro `x`.\n\n- `src/`: `a`, `b`\n- `a/`: `c`\n\n## Next\n\n- `z/`: `q`\n";
    let map = codemap(text);
    assert_eq!(map.len(), 2);
    assert_eq!(
        map["src/"],
        BTreeSet::from(["a".to_string(), "b".to_string()])
    );
    assert_eq!(map["a/"], BTreeSet::from(["c".to_string()]));
}
