//! The fixture crates under `tests/fixtures/` (a workspace of their own): built once per process
//! with `cargo test --no-run` into `target/fixtures`, then run as a user would — their test
//! binaries directly with libtest arguments, or `cargo test` in their directory.
//!
//! Their target directory is `target/fixtures` (what they write at run time, their results,
//! stays apart from the workspace's), but their build directory (cargo's `build.build-dir`:
//! dependencies, build scripts, test executables) is the workspace's own `target`, so every
//! unit built with the same features and profile as in the outer `cargo test` is reused rather
//! than compiled a second time (most of niceeval's dependencies; the fixtures' `[profile.dev]`
//! is the workspace's). Cargo holds its lock on `target/` only while it builds, not while the
//! tests run. Before building, the workspace's `Cargo.lock` is copied next to the
//! fixtures' manifest so they resolve to the crates already downloaded, with no registry access
//! (`--offline`; retried online only if cargo says the offline resolution failed). Tests of one
//! binary share the build through a `OnceLock`; builds started by separate processes are
//! serialized by cargo's own lock on the target directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::child::{self, Output};

/// How long a child test binary may run before it is killed (the fixtures finish in about a
/// second; this only turns a hang into a failure).
pub const RUN_DEADLINE: Duration = Duration::from_secs(60);

/// How long a child `cargo` may run: a cold build of niceeval's dependencies takes minutes on
/// an idle machine and passed 30 on a 2-core one shared with seven other builds (this only
/// turns a hang into a failure).
pub const BUILD_DEADLINE: Duration = Duration::from_secs(90 * 60);

/// The built fixture crates.
#[derive(Debug)]
pub struct Fixtures {
    root: PathBuf,
    target_dir: PathBuf,
    build_dir: PathBuf,
    offline: bool,
    /// `(fixture directory name, test target name)` → test binary.
    binaries: BTreeMap<(String, String), PathBuf>,
}

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    tests.parent().unwrap_or(tests).to_path_buf()
}

impl Fixtures {
    /// The fixtures, built on first use. Panics with cargo's output when the build fails.
    pub fn get() -> &'static Fixtures {
        static BUILT: OnceLock<Result<Fixtures, String>> = OnceLock::new();
        let built = BUILT.get_or_init(|| {
            std::panic::catch_unwind(build).unwrap_or_else(|panic| {
                Err(panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "building the fixtures panicked".to_string()))
            })
        });
        match built {
            Ok(fixtures) => fixtures,
            Err(message) => panic!("{message}"),
        }
    }

    /// `tests/fixtures`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of one fixture crate, e.g. `outcomes`.
    pub fn crate_dir(&self, fixture: &str) -> PathBuf {
        self.root.join(fixture)
    }

    /// The test binary of `fixture`'s test target `target` (e.g. `("outcomes", "evals")`), or
    /// the executable of its example or binary `target` (`("macro-pass", "all_options")`,
    /// `("suite", "niceeval")`).
    pub fn test_binary(&self, fixture: &str, target: &str) -> &Path {
        self.binaries
            .get(&(fixture.to_string(), target.to_string()))
            .unwrap_or_else(|| {
                panic!(
                    "the fixture build produced no test binary {fixture}/{target}; it produced {:?}",
                    self.binaries.keys().collect::<Vec<_>>()
                )
            })
    }

    /// Runs a fixture's test binary with libtest `args` and extra `env`, from the fixture's
    /// directory (as `cargo test` does), in a clean environment.
    pub fn run(&self, fixture: &str, target: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = self.command(fixture, target, args);
        command.envs(env.iter().copied());
        child::run(&mut command, RUN_DEADLINE)
    }

    /// A command running a fixture's test binary with libtest `args`, from the fixture's
    /// directory, in a clean environment; for tests that watch it while it runs.
    ///
    /// `CARGO_TARGET_DIR` is set to the fixtures' target directory, as `cargo test` in their
    /// directory would set it: the executables sit in the shared build directory, from which
    /// niceeval would otherwise place their results beside the workspace's own.
    pub fn command(&self, fixture: &str, target: &str, args: &[&str]) -> Command {
        let mut command = Command::new(self.test_binary(fixture, target));
        child::clean_env(&mut command)
            .current_dir(self.crate_dir(fixture))
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .args(args);
        command
    }

    /// The target directory of the fixtures (`target/fixtures`): their results, and the
    /// binaries cargo copies out of the build directory.
    pub fn target_dir(&self) -> &Path {
        &self.target_dir
    }

    /// The fixtures' build directory, the workspace's `target` (their dependencies and test
    /// executables, under `debug/deps`).
    pub fn build_dir(&self) -> &Path {
        &self.build_dir
    }

    /// Points a `cargo` command at the fixtures' target and build directories (so it rebuilds
    /// nothing the fixture build or the outer `cargo test` built).
    pub fn cargo_dirs<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        command
            .env("CARGO_TARGET_DIR", &self.target_dir)
            .env("CARGO_BUILD_BUILD_DIR", &self.build_dir)
    }

    /// Whether the fixtures resolved their dependencies offline.
    pub fn offline(&self) -> bool {
        self.offline
    }

    /// The `niceeval` command-line tool: niceeval-cli's `main.rs` as a binary of the `suite`
    /// fixture, built with the fixtures (their resolution, their compiled niceeval, offline).
    pub fn niceeval_cli(&self) -> &Path {
        self.test_binary("suite", "niceeval")
    }

    /// Runs `cargo test ARGS` in a fixture's directory, as a user would, sharing the fixtures'
    /// target directory (so nothing is rebuilt).
    pub fn cargo_test(&self, fixture: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = cargo_command(&self.target_dir, &self.build_dir);
        command.arg("test");
        if self.offline {
            command.arg("--offline");
        }
        command
            .args(args)
            .current_dir(self.crate_dir(fixture))
            .envs(env.iter().copied());
        child::run(&mut command, BUILD_DEADLINE)
    }
}

/// The workspace's target directory (`CARGO_TARGET_DIR` when absolute, else `target`): the
/// fixtures' build directory.
pub fn workspace_target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// The fixtures' target directory, `target/fixtures`.
pub fn fixtures_target_dir() -> PathBuf {
    workspace_target_dir().join("fixtures")
}

fn cargo_command(target_dir: &Path, build_dir: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    child::clean_env(&mut command)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_BUILD_BUILD_DIR", build_dir)
        .env("CARGO_TERM_COLOR", "never");
    command
}

fn build() -> Result<Fixtures, String> {
    let workspace = workspace_root();
    let root = workspace.join("tests").join("fixtures");
    let target_dir = fixtures_target_dir();
    let build_dir = workspace_target_dir();
    copy_lock(&workspace.join("Cargo.lock"), &root)?;
    let started = Instant::now();
    let attempt = |offline: bool| {
        let mut command = cargo_command(&target_dir, &build_dir);
        command
            .args(["test", "--no-run", "--workspace"])
            .args(["--message-format", "json-render-diagnostics"])
            .arg("--manifest-path")
            .arg(root.join("Cargo.toml"))
            .current_dir(&root);
        if offline {
            command.arg("--offline");
        }
        child::run(&mut command, BUILD_DEADLINE)
    };
    let mut offline = true;
    let mut output = attempt(true);
    if !output.status.success() && output.stderr.contains("offline") {
        offline = false;
        output = attempt(false);
    }
    if !output.status.success() {
        // stdout holds cargo's JSON messages; the rendered errors are on stderr.
        return Err(format!(
            "building the fixture crates failed after {:.0?} (target directory {}):\ncommand: {}\nstatus: {}\n--- cargo's stderr ---\n{}",
            started.elapsed(),
            target_dir.display(),
            output.command,
            output.status,
            output.stderr
        ));
    }
    let binaries = test_binaries(&output.stdout);
    if binaries.is_empty() {
        return Err(format!(
            "cargo built the fixtures but reported no test binary:\n{}",
            output.dump()
        ));
    }
    Ok(Fixtures {
        root,
        target_dir,
        build_dir,
        offline,
        binaries,
    })
}

/// Copies the workspace's lock file next to the fixtures' manifest. Written to a temporary file
/// and renamed, so a cargo started by another test process never reads half a file.
fn copy_lock(lock: &Path, root: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| {
        format!(
            "cannot copy {} next to the fixtures' manifest in {}: {e}",
            lock.display(),
            root.display()
        )
    };
    let temporary = root.join(format!("Cargo.lock.{}.tmp", std::process::id()));
    std::fs::copy(lock, &temporary).map_err(fail)?;
    std::fs::rename(&temporary, root.join("Cargo.lock")).map_err(fail)
}

/// The test executables, examples and binaries in cargo's JSON messages, keyed by fixture
/// directory and target name.
fn test_binaries(messages: &str) -> BTreeMap<(String, String), PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| {
            m["target"]["kind"].as_array().is_some_and(|kinds| {
                kinds
                    .iter()
                    .any(|k| k == "test" || k == "example" || k == "bin")
            })
        })
        .filter_map(|m| {
            let executable = m["executable"].as_str()?;
            let manifest = Path::new(m["manifest_path"].as_str()?);
            let fixture = manifest.parent()?.file_name()?.to_str()?.to_string();
            let target = m["target"]["name"].as_str()?.to_string();
            Some(((fixture, target), PathBuf::from(executable)))
        })
        .collect()
}

/// Copies the template crate `tests/fixtures/<template>` into `dir` — its manifest and the
/// `files` named (relative paths) — as a workspace of its own depending on this checkout's
/// niceeval, with the fixtures' dev profile (so the copy reuses the dependencies built in the
/// fixtures' build directory) and the workspace's lock file (so nothing new is resolved).
pub fn copy_template(template: &str, files: &[&str], dir: &Path) {
    let source = workspace_root().join("tests/fixtures").join(template);
    for file in files {
        let to = dir.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).expect("create the copy's directories");
        }
        std::fs::copy(source.join(file), &to).unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
    let manifest = std::fs::read_to_string(source.join("Cargo.toml")).expect("template manifest");
    let niceeval = workspace_root().join("niceeval");
    let fixtures = std::fs::read_to_string(workspace_root().join("tests/fixtures/Cargo.toml"))
        .expect("the fixtures' manifest");
    let profile = &fixtures[fixtures
        .find("[profile.dev]")
        .expect("a [profile.dev] in tests/fixtures/Cargo.toml")..];
    let manifest = manifest.replace(
        "path = \"../../../niceeval\"",
        &format!("path = {:?}", niceeval.display().to_string()),
    ) + "\n[workspace]\n\n"
        + profile;
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write the manifest");
    std::fs::copy(workspace_root().join("Cargo.lock"), dir.join("Cargo.lock"))
        .expect("copy Cargo.lock");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit is shared between the outer build and the fixtures' only when its profile is the
    /// same: a drift would quietly compile the dependencies twice again.
    #[test]
    fn the_fixtures_build_with_the_workspace_dev_profile() {
        let profile = |manifest: &Path| {
            let text = std::fs::read_to_string(manifest).expect("read the manifest");
            let table: toml::Table = toml::from_str(&text).expect("the manifest parses");
            table["profile"]["dev"].clone()
        };
        let root = workspace_root();
        assert_eq!(
            profile(&root.join("tests/fixtures/Cargo.toml")),
            profile(&root.join("Cargo.toml")),
            "tests/fixtures/Cargo.toml's [profile.dev] must be the workspace's"
        );
    }

    #[test]
    fn finds_test_executables_in_cargo_messages() {
        let messages = [
            r#"{"reason":"compiler-artifact","manifest_path":"/w/tests/fixtures/outcomes/Cargo.toml","target":{"kind":["lib"],"name":"fixture"},"executable":null}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/w/tests/fixtures/outcomes/Cargo.toml","target":{"kind":["test"],"name":"evals"},"executable":"/t/debug/deps/evals-1"}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ]
        .join("\n");
        let found = test_binaries(&messages);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[&("outcomes".to_string(), "evals".to_string())],
            PathBuf::from("/t/debug/deps/evals-1")
        );
    }
}
