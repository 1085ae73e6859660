//! The published crates as packages: what `cargo package` puts in each tarball and the oldest
//! Rust they declare. The full check — each package built from its own tarball — is
//! `cargo publish --workspace --dry-run` in `.ci/run`; these tests name the file or the
//! dependency at fault in a second, without building anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `cargo metadata` of the workspace as locked, without the network. On a fresh clone the
/// packages only other platforms use are not downloaded yet (`cargo fetch` brings them, as
/// `.ci/run` does), and cargo cannot read their manifests offline; then the graph is the host
/// platform's (`--filter-platform`), with a notice that the other platforms' dependencies were
/// not checked. Under `CI` the whole graph is required.
fn metadata() -> Value {
    let run = |filter: Option<&str>| {
        let mut command = Command::new(env!("CARGO"));
        command
            .args(["metadata", "--format-version", "1", "--locked", "--offline"])
            .current_dir(workspace());
        if let Some(host) = filter {
            command.args(["--filter-platform", host]);
        }
        command.output().expect("cargo metadata runs")
    };
    let mut out = run(None);
    let not_downloaded = String::from_utf8_lossy(&out.stderr).contains("--offline was specified");
    if !out.status.success() && not_downloaded && std::env::var_os("CI").is_none() {
        let host = host_triple();
        eprintln!(
            "NOTICE: the dependencies of platforms other than {host} are not downloaded, so \
             only {host}'s were checked; `cargo fetch --locked` brings the rest"
        );
        out = run(Some(&host));
    }
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// The host's target triple, as `rustc -vV` names it.
fn host_triple() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

/// The workspace members that are published (no `publish = false`): name → manifest path.
fn published(meta: &Value) -> BTreeMap<String, PathBuf> {
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| members.contains(&p["id"].as_str().unwrap_or_default()))
        .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
        .map(|p| {
            (
                p["name"].as_str().expect("name").to_string(),
                PathBuf::from(p["manifest_path"].as_str().expect("manifest_path")),
            )
        })
        .collect()
}

/// `major.minor[.patch]` as a comparable triple.
fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// Every file a published crate's library code reads with `include_str!` / `include_bytes!`
/// (test modules aside) is in the list `cargo package --list` gives: a file outside the
/// package would build here and fail for every user of the crates.io release.
#[test]
fn every_file_read_at_build_time_is_in_its_package() {
    let meta = metadata();
    let crates = published(&meta);
    assert!(
        crates.contains_key("niceeval") && crates.contains_key("niceeval-cli"),
        "the published crates include niceeval and niceeval-cli: {crates:?}"
    );
    let mut checked = 0;
    for (name, manifest) in &crates {
        let dir = manifest.parent().expect("manifest has a directory");
        let out = Command::new(env!("CARGO"))
            .args([
                "package",
                "--list",
                "--allow-dirty",
                "--offline",
                "-p",
                name,
            ])
            .current_dir(workspace())
            .output()
            .expect("cargo package --list runs");
        assert!(
            out.status.success(),
            "cargo package --list -p {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(PathBuf::from)
            .collect();
        for source in rust_files(&dir.join("src")) {
            let text = std::fs::read_to_string(&source).expect("source is UTF-8");
            // Unit-test files and modules read test data that is not shipped.
            if source.file_name().is_some_and(|f| f == "tests.rs") {
                continue;
            }
            let text = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (line, path) in includes(text) {
                let file = source.parent().expect("file has a directory").join(&path);
                let file = normalize(&file);
                let relative = file.strip_prefix(dir).unwrap_or_else(|_| {
                    panic!(
                        "{}:{line}: include of {path} reads {} outside the package {name}; \
                         move the file into {}",
                        source.display(),
                        file.display(),
                        dir.display()
                    )
                });
                assert!(
                    listed.iter().any(|l| l == relative),
                    "{}:{line}: {path} is read at build time but `cargo package -p {name}` \
                     leaves it out; check `include`/`exclude` in {}",
                    source.display(),
                    manifest.display()
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 2,
        "the viewer's CSS and JS are read at build time; found {checked} includes"
    );
}

/// The workspace's `rust-version` is at least that of every dependency the published crates
/// build with, as locked: a lower figure would promise a Rust the lock file cannot build with.
#[test]
fn declared_rust_version_covers_the_locked_dependencies() {
    let meta = metadata();
    let crates = published(&meta);
    let packages: BTreeMap<&str, &Value> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().expect("id"), p))
        .collect();
    let declared = packages
        .values()
        .find(|p| p["name"] == "niceeval")
        .and_then(|p| p["rust_version"].as_str())
        .expect("niceeval declares a rust-version");
    // Walk the resolve graph from the published crates over normal and build edges.
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .expect("resolve.nodes")
        .iter()
        .map(|n| (n["id"].as_str().expect("id"), n))
        .collect();
    let mut stack: Vec<&str> = packages
        .iter()
        .filter(|(_, p)| crates.contains_key(p["name"].as_str().unwrap_or_default()))
        .map(|(id, _)| *id)
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let mut needs: Vec<(String, String)> = Vec::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let package = packages[id];
        if let Some(rust) = package["rust_version"].as_str()
            && version(rust) > version(declared)
        {
            needs.push((
                format!("{} {}", package["name"], package["version"]),
                rust.to_string(),
            ));
        }
        for dep in nodes[id]["deps"].as_array().into_iter().flatten() {
            let kinds = dep["dep_kinds"].as_array().into_iter().flatten();
            let built = kinds
                .clone()
                .any(|k| k["kind"].is_null() || k["kind"] == "build");
            if built {
                stack.push(dep["pkg"].as_str().expect("pkg"));
            }
        }
    }
    assert!(seen.len() > 50, "walked only {} packages", seen.len());
    assert!(
        needs.is_empty(),
        "rust-version = \"{declared}\" in Cargo.toml, but the locked dependencies need more: \
         {needs:?}; raise rust-version (and the MSRV job of .github/workflows/ci.yml follows it)"
    );
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The `(line, path)` of each `include_str!("…")` / `include_bytes!("…")` with a literal path
/// in a text (the one pattern this crate, which has no regex dependency, looks for).
fn includes(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for macro_name in ["include_str!(\"", "include_bytes!(\""] {
            let mut rest = line;
            while let Some(start) = rest.find(macro_name) {
                let after = &rest[start + macro_name.len()..];
                let Some(end) = after.find('"') else { break };
                found.push((number + 1, after[..end].to_string()));
                rest = &after[end..];
            }
        }
    }
    found
}
