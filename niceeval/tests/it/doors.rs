//! The one door for processes and the one door for HTTP clients, enforced: outside the process
//! core (`niceeval/src/base/process/`) no code builds a
//! `Command::new(..)`, and outside the connection pool (`niceeval/src/agents/provider/pool.rs`) no code
//! builds a `reqwest::Client` (`Client::new()`, `Client::builder()`, `ClientBuilder::new()`),
//! but for the exceptions listed with their reasons. Comment lines and everything from a
//! file's first `#[cfg(test)]` on are not read (tests start what they like).

use std::path::Path;

/// `(file, what, why)`: the places allowed to build one, each with its reason. An exception
/// that no longer matches anything fails the test too, so the list stays true.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "agents/agent/mod.rs",
        "Command::new",
        "`Request::command` builds an agent's command (in the sandbox when there is one); \
         agents start it through `process`",
    ),
    (
        "agents/agent/chat.rs",
        "Command::new",
        "`ToolContext::command`, the tool handlers' equal of `Request::command`; the built-in \
         `shell` tool starts it through `process`",
    ),
    (
        "resources/workspace/sandbox.rs",
        "Command::new",
        "the sandbox builds the bubblewrap-wrapped command its callers start through \
         `process`, and probes `bwrap` once with a command that exits at once",
    ),
    (
        "resources/workspace/git.rs",
        "Command::new",
        "the snapshot's git commands, each waited for (no process outlives them)",
    ),
    (
        "output/results/manifest.rs",
        "Command::new",
        "`git rev-parse HEAD` for a results manifest, waited for",
    ),
    (
        "front/libtest/same_outputs.rs",
        "Command::new",
        "a unit test that runs its own test binary twice, once per front end, and waits for \
         each",
    ),
    (
        "checks/expect/service/http.rs",
        "Client::new",
        "the service assertions (`webhook`, `classifier`, `moderation`, `pi`) sit in the checks \
         layer, below the agents layer that owns the pool; one client per graded item, with the \
         item's own timeout",
    ),
    (
        "agents/trace/export.rs",
        "Client::new",
        "the OTLP export is built with the `otel` feature alone, without `providers`, which \
         owns the pool; one POST per exported trace",
    ),
];

/// Whether `line` builds `name` (`Command::new`, not `RunCommand::new`).
fn builds(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        !line[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

#[test]
fn processes_start_in_the_process_core_and_http_clients_come_from_the_pool() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    assert!(
        files.len() > 50,
        "read {} files of {}",
        files.len(),
        root.display()
    );
    let mut found = Vec::new();
    let mut used = vec![false; EXCEPTIONS.len()];
    for (file, text) in &files {
        let owner_of = |what: &str| match what {
            "Command::new" => file.starts_with("base/process/"),
            _ => file == "agents/provider/pool.rs",
        };
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("#[cfg(test)]") {
                break;
            }
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (what, names) in [
                ("Command::new", &["Command::new"][..]),
                (
                    "Client::new",
                    &["Client::new", "Client::builder", "ClientBuilder::new"][..],
                ),
            ] {
                if !names.iter().any(|name| builds(line, name)) || owner_of(what) {
                    continue;
                }
                match EXCEPTIONS
                    .iter()
                    .position(|(f, w, _)| f == file && *w == what)
                {
                    Some(i) => used[i] = true,
                    None => found.push(format!("{file}:{}: {}", n + 1, line.trim())),
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "built outside the process core (niceeval/src/base/process/) or the pool \
         (agents/provider/pool.rs): go through `process::spawn` / `Request::command`, or the pool's \
         client (`provider::http`), or add an exception with its reason:\n{}",
        found.join("\n")
    );
    let stale: Vec<_> = EXCEPTIONS
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|((f, w, _), _)| format!("{f} ({w})"))
        .collect();
    assert!(
        stale.is_empty(),
        "exceptions that match nothing any more: {stale:?}"
    );
}
