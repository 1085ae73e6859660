//! The guide (`docs/book`) checked against the code: "Your own agent in 10 minutes" followed
//! as written in a new crate outside the repository, the configuration reference against the
//! keys `niceeval.toml`'s parser takes, and every code block of the book either compiled, run,
//! or marked with the reason it is not.
//!
//! Markers are HTML comments on the line before a fenced block, invisible in the rendered book:
//! `<!-- file: PATH -->` and `<!-- append: PATH -->` (the block is that file's text, written or
//! appended to when the walk-through reaches it), `<!-- run: WHO -->` (a shell block run by the
//! test or CI step named) and `<!-- not run: WHY -->` / `<!-- not compiled: WHY -->`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use niceeval::__workspace::config::{
    ChatConfig, ClaudeCodeConfig, CodexConfig, CommandConfig, CompareConfig, Config, HistoryConfig,
    JudgeConfig, PriceConfig, ProviderConfig, ReplayConfig, ReportConfig, ResultsConfig, RunConfig,
    TraceConfig, WorkspaceConfig,
};
use niceeval_tests::fixture::{BUILD_DEADLINE, Fixtures, workspace_root};
use niceeval_tests::{child, fixture};
use serde::Deserialize;

/// `docs/book/src`.
fn book_src() -> PathBuf {
    workspace_root().join("docs/book/src")
}

fn page(name: &str) -> String {
    let path = book_src().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The pages `SUMMARY.md` links, in its order.
fn pages() -> Vec<String> {
    let summary = page("SUMMARY.md");
    let link = md_links(&summary);
    assert!(!link.is_empty(), "SUMMARY.md links no page");
    link
}

/// The targets of `[title](target.md)` links (no regex crate here: the text is simple).
fn md_links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            if target.ends_with(".md") {
                found.push(target.to_string());
            }
            rest = &after[end..];
        }
    }
    found
}

/// One fenced block of a page.
#[derive(Debug)]
struct Block {
    /// The line the fence opens on (1-based).
    line: usize,
    /// The info string: `sh`, `rust,no_run`, `toml`…
    info: String,
    /// The marker comment on the line before, without `<!--` and `-->`.
    marker: Option<String>,
    /// The text between the fences.
    text: String,
}

fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let marker = i
            .checked_sub(1)
            .map(|p| lines[p].trim())
            .and_then(|l| l.strip_prefix("<!--"))
            .and_then(|l| l.strip_suffix("-->"))
            .map(|m| m.trim().to_string());
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push(lines[i]);
            i += 1;
        }
        assert!(
            i < lines.len(),
            "a fence opened on line {} never closes",
            start + 1
        );
        found.push(Block {
            line: start + 1,
            info: info.trim().to_string(),
            marker,
            text: body.join("\n") + "\n",
        });
        i += 1;
    }
    found
}

/// The `cargo add` line of the page, and what the test runs instead: niceeval from this
/// checkout, since the test must not reach the network.
const GIT_ADD: &str = "cargo add --dev niceeval --git https://github.com/niceeval/niceeval-rs";

/// "Your own agent in 10 minutes", followed as written: its shell blocks run in order in one
/// `bash`, its file blocks written when the walk reaches them, in a new crate in a temporary
/// directory outside the repository. What the test changes, because it runs offline and must
/// not rebuild the world each time:
///
/// - `cargo add --dev niceeval --git URL` becomes `--path <this checkout>/niceeval`;
/// - right after the page's first `cd` into the new crate, the workspace's `Cargo.lock` is
///   copied in, so the offline resolution picks the versions this checkout is tested with;
/// - `CARGO_NET_OFFLINE=true` (cargo's `--offline` for every command), and
///   `CARGO_TARGET_DIR=target/fixtures` and `CARGO_BUILD_BUILD_DIR=target`, the directories of
///   the fixture crates: the page's build profile is theirs and the lock file the same, so the
///   dependencies both build with the same features are compiled once (the fixtures leave TLS
///   and OpenTelemetry out, which compile for this crate alone), and later runs rebuild
///   nothing but the new crate.
#[test]
fn own_agent() {
    let root = workspace_root();
    let text = page("own-agent.md");
    let mut script = String::from("set -euxo pipefail\n");
    let mut mapped_add = false;
    let mut copied_lock = false;
    let mut wrote = Vec::new();
    let mut commands = 0;
    for block in blocks(&text) {
        match block.marker.as_deref() {
            Some(m) if m.starts_with("file:") || m.starts_with("append:") => {
                let (verb, path) = m.split_once(':').expect("a marker with a colon");
                let path = path.trim();
                let redirect = if verb == "file" { ">" } else { ">>" };
                assert!(
                    !block.text.contains("NICEEVAL_BOOK_EOF"),
                    "own-agent.md:{}: the block holds the heredoc's end marker",
                    block.line
                );
                script.push_str(&format!(
                    "mkdir -p \"$(dirname '{path}')\"\ncat {redirect} '{path}' <<'NICEEVAL_BOOK_EOF'\n{}NICEEVAL_BOOK_EOF\n",
                    block.text
                ));
                wrote.push(path.to_string());
            }
            Some(m) if m.starts_with("not run:") => {}
            _ if block.info == "sh" => {
                for line in block.text.lines() {
                    if line.trim() == GIT_ADD {
                        script.push_str(&format!(
                            "cargo add --dev niceeval --path '{}'\n",
                            root.join("niceeval").display()
                        ));
                        mapped_add = true;
                    } else {
                        script.push_str(line);
                        script.push('\n');
                        commands += 1;
                    }
                    if line.trim_start().starts_with("cd ") && !copied_lock {
                        script.push_str(&format!(
                            "cp '{}' Cargo.lock\n",
                            root.join("Cargo.lock").display()
                        ));
                        copied_lock = true;
                    }
                }
            }
            _ => {}
        }
    }
    // Other pages' commands for a suite target named `evals`, run in the same crate.
    let mut borrowed = 0;
    for name in pages() {
        for block in blocks(&page(&name)) {
            if block.info == "sh"
                && block
                    .marker
                    .as_deref()
                    .is_some_and(|m| m.starts_with("run: book::own_agent"))
            {
                script.push_str(&block.text);
                borrowed += 1;
            }
        }
    }
    assert!(
        borrowed >= 1,
        "no page's block is marked `run: book::own_agent`"
    );
    assert!(
        mapped_add,
        "own-agent.md no longer says `{GIT_ADD}`: update this test's mapping"
    );
    assert!(copied_lock, "own-agent.md has no `cd` into the new crate");
    for needed in ["agent.py", "niceeval.toml", "Cargo.toml", "tests/evals.rs"] {
        assert!(
            wrote.iter().any(|w| w == needed),
            "own-agent.md writes no {needed}"
        );
    }
    assert!(
        commands >= 3,
        "own-agent.md runs too few commands: {script}"
    );

    let outside = tempfile::tempdir().expect("a temporary directory");
    assert!(
        !outside.path().starts_with(&root),
        "the new crate must be outside the repository"
    );
    // The fixtures' dev profile for the new crate, from a `.cargo/config.toml` above it (the
    // page's manifest stays as written): with the same features (tests/fixtures/*/Cargo.toml use
    // niceeval's defaults, as the page's crate does) and the same lock file, every dependency
    // and niceeval itself are the units the fixture build compiled. Built first, so this test
    // can check that the page's `cargo test` compiled nothing but the new crate.
    let fixtures = std::fs::read_to_string(root.join("tests/fixtures/Cargo.toml"))
        .expect("the fixtures' manifest");
    let profile = &fixtures[fixtures
        .find("[profile.dev]")
        .expect("a [profile.dev] in tests/fixtures/Cargo.toml")..];
    std::fs::create_dir_all(outside.path().join(".cargo")).expect("create .cargo");
    std::fs::write(outside.path().join(".cargo/config.toml"), profile)
        .expect("write .cargo/config.toml");
    Fixtures::get();
    let mut bash = Command::new("bash");
    bash.arg("-c")
        .arg(&script)
        .current_dir(outside.path())
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", fixture::fixtures_target_dir())
        .env("CARGO_BUILD_BUILD_DIR", fixture::workspace_target_dir())
        .env("CARGO_TERM_COLOR", "never");
    child::clean_env(&mut bash);
    // The shared target directory holds the other fixture crates' results too, some from test
    // targets also named `evals`: the page's crate keeps its results apart, as a crate with a
    // target directory of its own would.
    bash.env("NICEEVAL_RESULTS_DIR", outside.path().join("results"));
    let output = child::run(&mut bash, BUILD_DEADLINE);
    assert_eq!(output.code(), Some(0), "{}", output.dump());
    let compiled: Vec<&str> = output
        .stderr
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("Compiling "))
        .filter(|unit| !unit.starts_with("support-agent "))
        .collect();
    assert!(
        compiled.is_empty(),
        "the page's crate compiled {compiled:?} again: the fixture crates no longer resolve \
         niceeval's dependencies with the features a new crate gets (tests/fixtures/*/Cargo.toml \
         use niceeval's default features and nothing that adds features to its dependencies)\n{}",
        output.dump()
    );
    for eval in ["order_status", "asks_for_the_order_number"] {
        assert!(
            output.stdout.contains(&format!("test {eval} ... ok")),
            "{eval} did not pass:\n{}",
            output.dump()
        );
    }
    assert!(
        output.stdout.contains("2 passed; 0 failed"),
        "{}",
        output.dump()
    );
    // What the borrowed commands of runs.md write.
    let krate = outside.path().join("support-agent");
    for written in [
        "target/junit.xml",
        "target/evals.html",
        "summary.md",
        "report.html",
    ] {
        assert!(
            krate.join(written).is_file(),
            "{written} was not written:\n{}",
            output.dump()
        );
    }
}

/// The field names of a struct that derives `Deserialize`, as serde reads them: what the
/// parser accepts in its table (the config layer's own reading, `config::fields`).
fn fields<'de, T: Deserialize<'de>>() -> BTreeSet<String> {
    let names = niceeval::__workspace::config::fields::<T>();
    assert!(
        !names.is_empty(),
        "{} is not a struct",
        std::any::type_name::<T>()
    );
    names.iter().map(|f| (*f).to_string()).collect()
}

/// The agent types, as the parser lists them when given one it does not know.
fn agent_types() -> Vec<String> {
    let err = Config::parse("[agent]\ntype = \"zzzzzzzzzzzz\"\n", "niceeval.toml")
        .expect_err("an unknown agent type is an error");
    let message = err.to_string();
    let list = message
        .split_once("the agent types are ")
        .unwrap_or_else(|| panic!("the error no longer lists the agent types: {message}"))
        .1;
    let types: Vec<String> = list
        .split(',')
        .map(|t| t.trim().trim_matches('"').to_string())
        .collect();
    assert!(types.len() >= 2, "{message}");
    types
}

/// What the parser takes: table heading (as the reference page writes it) → keys.
fn accepted_keys() -> BTreeMap<String, BTreeSet<String>> {
    let mut tables = BTreeMap::new();
    for table in fields::<Config>() {
        let keys = match table.as_str() {
            "judge" => fields::<JudgeConfig>(),
            "provider" => fields::<ProviderConfig>(),
            "run" => fields::<RunConfig>(),
            "report" => fields::<ReportConfig>(),
            "compare" => fields::<CompareConfig>(),
            "workspace" => fields::<WorkspaceConfig>(),
            "trace" => fields::<TraceConfig>(),
            "results" => fields::<ResultsConfig>(),
            "history" => fields::<HistoryConfig>(),
            "prices" => {
                tables.insert(
                    "[prices.\"provider/model\"]".to_string(),
                    fields::<PriceConfig>(),
                );
                continue;
            }
            "agent" => {
                tables.insert("[agent]".to_string(), BTreeSet::new());
                for kind in agent_types() {
                    let keys = match kind.as_str() {
                        "replay" => fields::<ReplayConfig>(),
                        "command" => fields::<CommandConfig>(),
                        "chat" | "openai" | "anthropic" => fields::<ChatConfig>(),
                        "claude-code" => fields::<ClaudeCodeConfig>(),
                        "codex" => fields::<CodexConfig>(),
                        other => panic!(
                            "agent type `{other}` is new: add its settings' type to this test and \
                             its keys to docs/book/src/config-reference.md"
                        ),
                    };
                    tables.insert(format!("[agent] type = \"{kind}\""), keys);
                }
                continue;
            }
            other => panic!(
                "table `[{other}]` is new: add its type to this test and its keys to \
                 docs/book/src/config-reference.md"
            ),
        };
        tables.insert(format!("[{table}]"), keys);
    }
    tables
}

/// What the reference page lists: every heading's first-column keys. A heading such as
/// `[agent] type = "chat"`, `"openai"` or `"anthropic"` stands for each type it names.
fn documented_keys(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut tables: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line
            .strip_prefix("## ")
            .or_else(|| line.strip_prefix("### "))
        {
            let names: Vec<&str> = heading.split('`').skip(1).step_by(2).collect();
            current = match names.as_slice() {
                [] => Vec::new(),
                [first, rest @ ..] => {
                    let mut all = vec![first.to_string()];
                    if let Some((prefix, _)) = first.split_once("type = ") {
                        for kind in rest {
                            all.push(format!("{prefix}type = {kind}"));
                        }
                    }
                    all
                }
            };
            for name in &current {
                tables.entry(name.clone()).or_default();
            }
        } else if let Some(row) = line.strip_prefix("| `") {
            let key = row.split('`').next().unwrap_or_default();
            for name in &current {
                tables
                    .entry(name.clone())
                    .or_default()
                    .insert(key.to_string());
            }
        }
    }
    tables
}

/// The reference lists every key `niceeval.toml` accepts, under its table, and nothing the
/// parser refuses.
#[test]
fn config_reference() {
    let accepted = accepted_keys();
    let documented = documented_keys(&page("config-reference.md"));
    let mut problems = Vec::new();
    for (table, keys) in &accepted {
        let Some(listed) = documented.get(table) else {
            problems.push(format!("no section `{table}`"));
            continue;
        };
        for key in keys.difference(listed) {
            problems.push(format!("`{table}` does not list `{key}`"));
        }
        for key in listed.difference(keys) {
            if !(table.starts_with("[agent] type") && key == "type") {
                problems.push(format!("`{table}` lists `{key}`, which the parser refuses"));
            }
        }
    }
    for table in documented.keys() {
        if !accepted.contains_key(table) {
            problems.push(format!("section `{table}` is no table of niceeval.toml"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/book/src/config-reference.md is out of date:\n  {}",
        problems.join("\n  ")
    );
    assert!(accepted.len() >= 10, "{accepted:?}");
}

/// The command agent's `niceeval.toml` of "Your own agent" parses and lists every key the
/// command agent takes.
#[test]
fn own_agent_config_lists_every_command_key() {
    let text = page("own-agent.md");
    let block = blocks(&text)
        .into_iter()
        .find(|b| b.marker.as_deref() == Some("file: niceeval.toml"))
        .expect("own-agent.md writes niceeval.toml");
    let config =
        Config::parse(&block.text, "own-agent.md niceeval.toml").unwrap_or_else(|e| panic!("{e}"));
    assert!(config.agent.is_some());
    let table: toml::Table = block.text.parse().expect("TOML");
    let written: BTreeSet<String> = table["agent"]
        .as_table()
        .expect("[agent]")
        .keys()
        .filter(|k| *k != "type")
        .cloned()
        .collect();
    assert_eq!(written, fields::<CommandConfig>());
}

/// Every code block of the book is compiled, run, or says why not: Rust blocks are doc-tests of
/// `niceeval-examples` (`examples/src/book.rs` includes every page), shell blocks are run by the
/// test or CI step their marker names.
#[test]
fn every_block_is_checked_or_says_why_not() {
    let included = std::fs::read_to_string(workspace_root().join("examples/src/book.rs"))
        .expect("examples/src/book.rs");
    let mut problems = Vec::new();
    for name in pages() {
        let include = format!("include_str!(\"../../docs/book/src/{name}\")");
        if !included.contains(&include) {
            problems.push(format!(
                "{name}: not included by examples/src/book.rs ({include})"
            ));
        }
        for block in blocks(&page(&name)) {
            let marker = block.marker.as_deref().unwrap_or("");
            let attributes: Vec<&str> = block.info.split(',').map(str::trim).collect();
            if attributes.first() == Some(&"rust") {
                if attributes.contains(&"ignore") && !marker.starts_with("not compiled:") {
                    problems.push(format!(
                        "{name}:{}: an `ignore`d Rust block needs `<!-- not compiled: why -->`",
                        block.line
                    ));
                }
            } else if block.info == "sh"
                && !["run:", "not run:"].iter().any(|m| marker.starts_with(m))
                && name != "own-agent.md"
            {
                problems.push(format!(
                    "{name}:{}: a shell block needs `<!-- run: test -->` or `<!-- not run: why -->`",
                    block.line
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// An anchor as mdBook makes it from a heading: lower case, spaces to `-`, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.insert(anchor(line.trim_start_matches('#').trim()));
        }
    }
    found
}

/// Every link from one page of the book to another (and from the README into the book) names a
/// page that exists and, with `#anchor`, a heading of it.
#[test]
fn links_between_pages_resolve() {
    let src = book_src();
    let mut sources: Vec<(String, PathBuf, String)> = pages()
        .into_iter()
        .map(|name| (name.clone(), src.clone(), page(&name)))
        .collect();
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    sources.push(("README.md".to_string(), workspace_root(), readme));
    let mut problems = Vec::new();
    for (name, base, text) in &sources {
        let mut rest = text.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            rest = &after[end..];
            if target.contains("://") || target.starts_with('#') {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let path = base.join(file);
            let Ok(linked) = std::fs::read_to_string(&path) else {
                if !path.exists() {
                    problems.push(format!("{name}: `{target}`: no such file"));
                }
                continue;
            };
            if !fragment.is_empty() && !anchors(&linked).contains(fragment) {
                problems.push(format!(
                    "{name}: `{target}`: no heading makes `#{fragment}`"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The Cargo features page has a row for every feature of niceeval's `Cargo.toml`.
#[test]
fn cargo_features_page_lists_every_feature() {
    let manifest = std::fs::read_to_string(workspace_root().join("niceeval/Cargo.toml"))
        .expect("niceeval/Cargo.toml");
    let manifest: toml::Table = manifest.parse().expect("niceeval/Cargo.toml is TOML");
    let features = manifest["features"].as_table().expect("[features]");
    let text = page("cargo-features.md");
    let missing: Vec<&String> = features
        .keys()
        .filter(|f| *f != "default" && !text.contains(&format!("| `{f}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/book/src/cargo-features.md has no row for {missing:?}"
    );
}

/// A page whose example derives `serde::Deserialize` says how to add serde (a new crate's
/// first build fails with "cannot find module or crate serde" otherwise), and the scoped
/// checks page says how to read a turn's reply.
#[test]
fn pages_say_what_their_examples_need() {
    for name in pages() {
        let text = page(&name);
        if text.contains("derive(serde::Deserialize)") {
            assert!(
                text.contains("cargo add --dev serde --features derive"),
                "{name} derives serde::Deserialize without saying to add serde"
            );
        }
    }
    assert!(
        page("scoped-checks.md").contains("turn.message"),
        "scoped-checks.md shows turn checks but not how to read a turn's reply"
    );
}
