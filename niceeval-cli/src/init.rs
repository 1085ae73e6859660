//! `niceeval init`: a working eval suite from nothing. This module owns the scaffold — the
//! files a new suite is made of (a `harness = false` test target `evals` with a plain eval and a
//! dataset eval, the dataset, `niceeval.toml` with the agent kind asked for, and the stand-in
//! agent's script for `command`), the edits of `Cargo.toml` that declare them (dev-dependencies
//! and the `[[test]]` target, made with `toml_edit` so the user's comments and layout stay),
//! and the one command that runs them, which it prints.
//!
//! It never overwrites: every file it would write and the test target's name are checked
//! before anything is written, and each file is created with `create_new`. A folder without a
//! `Cargo.toml` (empty, missing, or holding files of another kind) first becomes a library
//! crate by running `cargo init --lib`, so the new crate is exactly what cargo makes (its
//! edition, `.gitignore`, Git repository, workspace membership); then the same scaffold goes in.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike, Value, value};

/// The test target's name, and so the next command's `--test`.
const TARGET: &str = "evals";
/// The suite's file, relative to the crate's directory.
const SUITE: &str = "evals/main.rs";
/// The dataset's file, relative to the crate's directory.
const DATASET: &str = "evals/data/cases.jsonl";
/// The stand-in program of the `command` kind, relative to the crate's directory.
const AGENT_SCRIPT: &str = "evals/agent.py";
/// niceeval's configuration file.
const CONFIG: &str = "niceeval.toml";

/// `niceeval init`'s command line.
#[derive(Debug, Clone, clap::Args)]
#[command(
    long_about = "Adds an eval suite to the crate in DIR (default: the current directory), or makes DIR \
a new library crate first (`cargo init --lib`) when it has no Cargo.toml. It adds niceeval (and \
serde, and for --agent http reqwest) as dev-dependencies, a `harness = false` test target `evals` \
(evals/main.rs: a plain eval and one eval per line of evals/data/cases.jsonl) and niceeval.toml, \
then prints the command that runs the suite.",
    after_help = "It overwrites nothing: when one of its files or a test target named `evals` exists, \
it changes nothing and exits 2."
)]
pub(crate) struct InitArgs {
    /// The crate's folder (default: the current directory); a new library crate when it has no
    /// Cargo.toml.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The agent under test.
    #[arg(long, value_enum, value_name = "KIND", default_value_t = AgentKind::Rust)]
    agent: AgentKind,
    /// The new crate's name (default: the folder's); only when DIR has no Cargo.toml.
    #[arg(long)]
    name: Option<String>,
    /// Depend on niceeval at this checkout (a clone of niceeval-rs, or its niceeval/ folder)
    /// instead of the published niceeval of this command's version.
    #[arg(long, value_name = "NICEEVAL_CHECKOUT", conflicts_with = "git")]
    path: Option<PathBuf>,
    /// Depend on niceeval from a Git repository instead.
    #[arg(long, value_name = "URL")]
    git: Option<String>,
}

/// The agent under test of the scaffold (`--agent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AgentKind {
    /// A Rust function in evals/main.rs (a stand-in to replace with your agent).
    Rust,
    /// A program in niceeval.toml's [agent] (a stand-in Python script, evals/agent.py).
    Command,
    /// Your HTTP service at $AGENT_URL, called from evals/main.rs with reqwest; its evals are
    /// skipped, saying so, until AGENT_URL is set.
    Http,
    /// A model in niceeval.toml's [agent] (type = "openai"); its evals are skipped, saying so,
    /// until OPENAI_API_KEY is set.
    Openai,
}

impl AgentKind {
    fn name(self) -> &'static str {
        match self {
            AgentKind::Rust => "rust",
            AgentKind::Command => "command",
            AgentKind::Http => "http",
            AgentKind::Openai => "openai",
        }
    }
}

/// Where the scaffold's crate gets niceeval from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// The published crate, at this version (this command's own by default).
    Version(String),
    /// A local checkout: the directory of niceeval's own `Cargo.toml`, or the repository's
    /// root holding it in `niceeval/`.
    Path(PathBuf),
    /// A Git repository (niceeval-rs).
    Git(String),
}

/// What `niceeval init` is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct InitOptions {
    /// The agent kind of the scaffold.
    pub agent: AgentKind,
    /// The crate's directory, as the user wrote it (relative to the current directory).
    pub dir: PathBuf,
    /// The new crate's name (`cargo init --name`); an error for an existing crate.
    pub name: Option<String>,
    /// Where niceeval comes from.
    pub niceeval: Source,
}

/// What `niceeval init` did.
#[derive(Debug)]
pub(crate) struct Scaffold {
    /// The new crate's name, when `cargo init` made one.
    pub new_crate: Option<String>,
    /// What changed in `Cargo.toml`, one phrase each.
    pub manifest: Vec<String>,
    /// The files written, relative to the crate's directory, each with what it is.
    pub files: Vec<(&'static str, String)>,
    /// What the user should know (a profile not added, an entry left as it was).
    pub notes: Vec<String>,
    /// The command that runs the suite, from the current directory.
    pub command: String,
}

/// Why `niceeval init` changed nothing, or stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InitError {
    #[error(
        "{} already exist{}; niceeval init never overwrites a file and changed nothing: move {} away, \
         or run niceeval init in another folder",
        .paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        if .paths.len() == 1 { "s" } else { "" },
        if .paths.len() == 1 { "it" } else { "them" }
    )]
    Exists { paths: Vec<PathBuf> },
    #[error(
        "{manifest} already has a test target named `{TARGET}` ({what}); niceeval init changed \
         nothing: rename that target, or add the suite by hand (the guide's \"Your own agent in \
         10 minutes\")"
    )]
    TargetExists { manifest: PathBuf, what: String },
    #[error(
        "{manifest} is a workspace's manifest with no [package]: run niceeval init in a member \
         crate's folder, or give a new folder (`niceeval init evals-crate`) to make a new crate"
    )]
    VirtualManifest { manifest: PathBuf },
    #[error(
        "--name names a new crate, but {manifest} exists: leave --name out to add the suite to \
         that crate, or give a folder without a Cargo.toml"
    )]
    NameForExisting { manifest: PathBuf },
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path} is not valid TOML, so niceeval init changed nothing: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error(
        "--path {}: no niceeval crate there (looked for Cargo.toml with `name = \"niceeval\"` in \
         it and in its niceeval/ folder); give a clone of niceeval-rs or its niceeval/ folder",
        .path.display()
    )]
    NotACheckout { path: PathBuf },
    #[error("`cargo init --lib {:?}` failed ({status}); niceeval init wrote nothing:\n{stderr}", .dir)]
    CargoInit {
        dir: PathBuf,
        status: String,
        stderr: String,
    },
    #[error("cannot write {path}: {message}; niceeval init stopped there")]
    Write { path: PathBuf, message: String },
}

/// `niceeval init`: runs [`run`] with the command line's options and prints what it did and
/// the next command; exits 2 on a refusal.
pub(crate) fn init(args: &InitArgs) -> ExitCode {
    let options = InitOptions {
        agent: args.agent,
        dir: args.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        name: args.name.clone(),
        niceeval: match (&args.path, &args.git) {
            (Some(path), _) => Source::Path(path.clone()),
            (None, Some(url)) => Source::Git(url.clone()),
            (None, None) => Source::Version(env!("CARGO_PKG_VERSION").to_string()),
        },
    };
    match run(&options) {
        Ok(scaffold) => {
            print!("{}", summary(&options, &scaffold));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Scaffolds the suite: checks everything first, then makes the crate if there is none, edits
/// its `Cargo.toml` and writes the files.
pub(crate) fn run(options: &InitOptions) -> Result<Scaffold, InitError> {
    let dir = &options.dir;
    let manifest_path = dir.join("Cargo.toml");
    let existing = if manifest_path.is_file() {
        let doc = read_manifest(&manifest_path)?;
        if doc.get("package").is_none() {
            return Err(InitError::VirtualManifest {
                manifest: manifest_path,
            });
        }
        if options.name.is_some() {
            return Err(InitError::NameForExisting {
                manifest: manifest_path,
            });
        }
        if let Some(what) = test_target_named(&doc, dir) {
            return Err(InitError::TargetExists {
                manifest: manifest_path,
                what,
            });
        }
        Some(doc)
    } else {
        None
    };
    let files = files(options.agent);
    let taken: Vec<PathBuf> = files
        .iter()
        .map(|(path, _, _)| dir.join(path))
        .filter(|path| path.exists())
        .collect();
    if !taken.is_empty() {
        return Err(InitError::Exists { paths: taken });
    }
    let source = match &options.niceeval {
        Source::Path(path) => Source::Path(checkout(path)?),
        other => other.clone(),
    };

    let mut notes = Vec::new();
    let (mut doc, new_crate) = match existing {
        Some(doc) => (doc, None),
        None => {
            cargo_init(dir, options.name.as_deref())?;
            let doc = read_manifest(&manifest_path)?;
            let name = doc
                .get("package")
                .and_then(|p| p.get("name"))
                .and_then(Item::as_str)
                .unwrap_or("the crate")
                .to_string();
            (doc, Some(name))
        }
    };
    let workspace = workspace_of(dir, &doc);
    let inherited = workspace
        .as_ref()
        .map_or(Vec::new(), |(_, names)| names.clone());
    let mut manifest = edit_manifest(&mut doc, options.agent, &source, &inherited, &mut notes);
    // Profiles count in a workspace's root manifest only.
    let member = workspace
        .as_ref()
        .filter(|(root, _)| *root != manifest_path)
        .map(|(root, _)| root.clone());
    match (&new_crate, member) {
        (Some(_), Some(root)) => notes.push(format!(
            "the new crate is a member of the workspace of {}: its build profile is that \
             manifest's, so none was added (the guide's \"The build profile\" has one that \
             keeps the first build short)",
            root.display()
        )),
        (Some(_), None) => {
            add_profile(&mut doc);
            manifest.push("a [profile.dev] that keeps the first build short".to_string());
        }
        (None, None) if !doc.contains_key("profile") => notes.push(
            "no build profile was added to your crate: the guide's \"The build profile\" \
             (own-agent.md) has one that halves the first build"
                .to_string(),
        ),
        (None, _) => {}
    }

    // The files first, then the manifest that declares them: a write that fails leaves no
    // target naming a missing file.
    let mut written = Vec::new();
    for (path, text, what) in files {
        let full = dir.join(path);
        create_new(&full, &text)?;
        written.push((path, what.to_string()));
    }
    std::fs::write(&manifest_path, doc.to_string()).map_err(|e| InitError::Write {
        path: manifest_path.clone(),
        message: e.to_string(),
    })?;
    Ok(Scaffold {
        new_crate,
        manifest,
        files: written,
        notes,
        command: next_command(dir),
    })
}

/// What `niceeval init` prints after it succeeded; the next command is its last line.
fn summary(options: &InitOptions, scaffold: &Scaffold) -> String {
    let mut out = String::new();
    let shown = options.dir.display();
    if let Some(name) = &scaffold.new_crate {
        let _ = writeln!(
            out,
            "created the library crate `{name}` in {shown} (cargo init --lib)"
        );
    }
    let _ = writeln!(
        out,
        "added an eval suite to the crate in {shown} (agent: {}):",
        options.agent.name()
    );
    for change in &scaffold.manifest {
        let _ = writeln!(out, "  Cargo.toml  {change}");
    }
    let width = scaffold
        .files
        .iter()
        .map(|(p, _)| p.len())
        .max()
        .unwrap_or(0);
    for (path, what) in &scaffold.files {
        let _ = writeln!(out, "  {path:width$}  {what}");
    }
    for note in &scaffold.notes {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(
        out,
        "\nrun the suite (its first build compiles niceeval's dependencies, once):\n  {}",
        scaffold.command
    );
    out
}

/// `cd DIR && cargo test --test evals`, with DIR as the user gave it (quoted for the shell
/// when it needs to be), or no `cd` for the current directory.
fn next_command(dir: &Path) -> String {
    let test = format!("cargo test --test {TARGET}");
    let text = dir.to_string_lossy();
    if text.is_empty() || text == "." || text == "./" {
        return test;
    }
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./+:@%,".contains(c));
    if plain {
        format!("cd {text} && {test}")
    } else {
        format!("cd '{}' && {test}", text.replace('\'', r"'\''"))
    }
}

fn read_manifest(path: &Path) -> Result<DocumentMut, InitError> {
    let text = std::fs::read_to_string(path).map_err(|e| InitError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    text.parse::<DocumentMut>()
        .map_err(|e| InitError::Manifest {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// The test target `evals` the crate already has, described: declared in `[[test]]` (by name,
/// or a target of the suite's file), or found by cargo in `tests/evals.rs` or
/// `tests/evals/main.rs` (a declared `evals` would replace it).
fn test_target_named(doc: &DocumentMut, dir: &Path) -> Option<String> {
    if let Some(tests) = doc.get("test").and_then(Item::as_array_of_tables) {
        for table in tests.iter() {
            let name = table.get("name").and_then(Item::as_str);
            let path = table.get("path").and_then(Item::as_str);
            if name == Some(TARGET) {
                return Some("a [[test]] with name = \"evals\"".to_string());
            }
            if path.is_some_and(|p| Path::new(p) == Path::new(SUITE)) {
                return Some(format!("a [[test]] with path = \"{SUITE}\""));
            }
        }
    }
    ["tests/evals.rs", "tests/evals/main.rs"]
        .into_iter()
        .find(|found| dir.join(found).is_file())
        .map(|found| format!("{found}, found by cargo"))
}

/// The directory of niceeval's `Cargo.toml` at or under `given`, absolute.
fn checkout(given: &Path) -> Result<PathBuf, InitError> {
    for dir in [given.to_path_buf(), given.join("niceeval")] {
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let Ok(doc) = text.parse::<DocumentMut>() else {
            continue;
        };
        let name = doc
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(Item::as_str);
        if name == Some("niceeval") {
            return std::fs::canonicalize(&dir).map_err(|e| InitError::Read {
                path: dir,
                message: e.to_string(),
            });
        }
    }
    Err(InitError::NotACheckout {
        path: given.to_path_buf(),
    })
}

/// `cargo init --lib [--name NAME] DIR`, with the cargo that runs this process when there is
/// one (`CARGO`).
fn cargo_init(dir: &Path, name: Option<&str>) -> Result<(), InitError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["init", "--lib", "--quiet"]);
    if let Some(name) = name {
        command.args(["--name", name]);
    }
    let fail = |status: String, stderr: String| InitError::CargoInit {
        dir: dir.to_path_buf(),
        status,
        stderr,
    };
    let output = command
        .arg(dir)
        .output()
        .map_err(|e| fail(format!("cannot run cargo: {e}"), String::new()))?;
    if !output.status.success() {
        return Err(fail(
            output.status.to_string(),
            String::from_utf8_lossy(&output.stderr)
                .trim_end()
                .to_string(),
        ));
    }
    Ok(())
}

/// The manifest of the workspace the crate in `dir` (manifest `own`) belongs to — its own when
/// it has a `[workspace]`, else the nearest above with one — and the names of that workspace's
/// `[workspace.dependencies]` (entries the scaffold inherits with `workspace = true`). A new
/// crate's profiles would be ignored in a member.
fn workspace_of(dir: &Path, own: &DocumentMut) -> Option<(PathBuf, Vec<String>)> {
    let names = |doc: &DocumentMut| -> Vec<String> {
        doc.get("workspace")
            .and_then(|w| w.get("dependencies"))
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(name, _)| name.to_string()).collect())
            .unwrap_or_default()
    };
    if own.get("workspace").is_some() {
        return Some((dir.join("Cargo.toml"), names(own)));
    }
    let dir = std::fs::canonicalize(dir).ok()?;
    dir.ancestors().skip(1).find_map(|up| {
        let manifest = up.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).ok()?;
        let doc = text.parse::<DocumentMut>().ok()?;
        let names = names(&doc);
        doc.get("workspace").is_some().then_some((manifest, names))
    })
}

/// The dev-dependencies and the test target of the scaffold, added to `doc`; entries already
/// there are kept (a note says when one may need a feature), and a crate its workspace's
/// `[workspace.dependencies]` (`inherited`) has is inherited from there (`workspace = true`).
/// Returns what changed.
fn edit_manifest(
    doc: &mut DocumentMut,
    agent: AgentKind,
    source: &Source,
    inherited: &[String],
    notes: &mut Vec<String>,
) -> Vec<String> {
    let inherits = |name: &str| inherited.iter().any(|n| n == name);
    // `{ workspace = true, features = [..] }`.
    let from_workspace = |features: &[&str]| {
        let mut table = InlineTable::new();
        table.insert("workspace", true.into());
        if !features.is_empty() {
            table.insert(
                "features",
                Value::Array(Array::from_iter(features.iter().copied())),
            );
        }
        Item::Value(Value::InlineTable(table))
    };
    let mut changes = Vec::new();
    let dev_key = if doc.contains_key("dev_dependencies") && !doc.contains_key("dev-dependencies") {
        "dev_dependencies"
    } else {
        "dev-dependencies"
    };

    if dependency(doc, "niceeval").is_none() && inherits("niceeval") {
        dev_table(doc, dev_key).insert("niceeval", from_workspace(&[]));
        changes.push(format!(
            "[{dev_key}] niceeval (the workspace's: workspace = true)"
        ));
    } else if dependency(doc, "niceeval").is_none() {
        let entry = match source {
            Source::Version(version) => value(version.as_str()),
            Source::Path(path) => inline(&[("path", path.to_string_lossy().as_ref())]),
            Source::Git(url) => inline(&[("git", url.as_str())]),
        };
        dev_table(doc, dev_key).insert("niceeval", entry);
        changes.push(format!("[{dev_key}] niceeval ({})", describe(source)));
    } else {
        notes.push("niceeval was already a dependency: kept as it was".to_string());
    }

    // The dataset's case type derives `serde::Deserialize`.
    match serde_state(doc, dev_key) {
        Serde::Derive => {}
        Serde::DevWithoutDerive => {
            let entry = dev_table(doc, dev_key)
                .get_mut("serde")
                .expect("serde is there");
            add_feature(entry, "derive");
            changes.push(format!("[{dev_key}] serde: feature \"derive\" added"));
        }
        Serde::Absent if inherits("serde") => {
            dev_table(doc, dev_key).insert("serde", from_workspace(&["derive"]));
            changes.push(format!(
                "[{dev_key}] serde (the workspace's, with \"derive\": the dataset's case type \
                 derives Deserialize)"
            ));
        }
        Serde::Absent => {
            let mut table = InlineTable::new();
            table.insert("version", "1".into());
            table.insert("features", Value::Array(Array::from_iter(["derive"])));
            dev_table(doc, dev_key).insert("serde", Item::Value(Value::InlineTable(table)));
            changes.push(format!(
                "[{dev_key}] serde (the dataset's case type derives Deserialize)"
            ));
        }
    }

    if agent == AgentKind::Http {
        if dependency(doc, "reqwest").is_none() && inherits("reqwest") {
            dev_table(doc, dev_key).insert("reqwest", from_workspace(&["json"]));
            changes.push(format!(
                "[{dev_key}] reqwest (the workspace's, with \"json\": the HTTP client of \
                 `service()`)"
            ));
        } else if dependency(doc, "reqwest").is_none() {
            let mut table = InlineTable::new();
            table.insert("version", "0.12".into());
            table.insert("default-features", false.into());
            table.insert(
                "features",
                Value::Array(Array::from_iter(["json", "rustls-tls"])),
            );
            dev_table(doc, dev_key).insert("reqwest", Item::Value(Value::InlineTable(table)));
            changes.push(format!(
                "[{dev_key}] reqwest (the HTTP client of `service()`)"
            ));
        } else {
            notes.push(
                "reqwest was already a dependency: kept as it was (evals/main.rs needs its \
                 `json` feature)"
                    .to_string(),
            );
        }
    }

    let mut target = Table::new();
    target.insert("name", value(TARGET));
    target.insert("path", value(SUITE));
    target.insert("harness", value(false));
    target.decor_mut().set_prefix(format!(
        "\n# niceeval's eval suite (from `niceeval init`): `cargo test --test {TARGET}` runs it;\n\
         # harness = false lets niceeval::main!() run its evals concurrently, with its own options.\n"
    ));
    match doc.get_mut("test").and_then(Item::as_array_of_tables_mut) {
        Some(tests) => tests.push(target),
        None => {
            let mut tests = toml_edit::ArrayOfTables::new();
            tests.push(target);
            doc.insert("test", Item::ArrayOfTables(tests));
        }
    }
    changes.push(format!(
        "[[test]] name = \"{TARGET}\", path = \"{SUITE}\", harness = false"
    ));
    changes
}

/// A description of where niceeval comes from, for the summary.
fn describe(source: &Source) -> String {
    match source {
        Source::Version(version) => format!("version {version} from crates.io"),
        Source::Path(path) => format!("path {}", path.display()),
        Source::Git(url) => format!("git {url}"),
    }
}

/// The inline table `{ key = "value", .. }`.
fn inline(pairs: &[(&str, &str)]) -> Item {
    let mut table = InlineTable::new();
    for (key, text) in pairs {
        table.insert(*key, (*text).into());
    }
    Item::Value(Value::InlineTable(table))
}

/// The entry of `name` in `[dependencies]` or the dev-dependencies, if any.
fn dependency<'a>(doc: &'a DocumentMut, name: &str) -> Option<&'a Item> {
    ["dependencies", "dev-dependencies", "dev_dependencies"]
        .into_iter()
        .find_map(|table| doc.get(table)?.as_table_like()?.get(name))
}

/// The dev-dependencies table, made (at the end of the file) when there is none.
fn dev_table<'a>(doc: &'a mut DocumentMut, key: &str) -> &'a mut dyn TableLike {
    if !doc.contains_key(key) {
        let mut table = Table::new();
        table.decor_mut().set_prefix("\n");
        doc.insert(key, Item::Table(table));
    }
    doc.get_mut(key)
        .and_then(Item::as_table_like_mut)
        .expect("the dev-dependencies are a table")
}

/// Whether serde's derive macros are there for the evals.
enum Serde {
    /// In the dependencies or the dev-dependencies, with `derive` in the entry itself.
    Derive,
    /// In the dev-dependencies without `derive`: the feature is added there.
    DevWithoutDerive,
    /// Not in the dev-dependencies, nor with `derive` in the dependencies.
    Absent,
}

fn serde_state(doc: &DocumentMut, dev_key: &str) -> Serde {
    let derive = |entry: &Item| {
        entry
            .as_table_like()
            .and_then(|t| t.get("features"))
            .and_then(Item::as_array)
            .is_some_and(|features| features.iter().any(|f| f.as_str() == Some("derive")))
    };
    let regular = doc
        .get("dependencies")
        .and_then(Item::as_table_like)
        .and_then(|t| t.get("serde"));
    let dev = doc
        .get(dev_key)
        .and_then(Item::as_table_like)
        .and_then(|t| t.get("serde"));
    match (regular, dev) {
        (Some(entry), _) if derive(entry) => Serde::Derive,
        (_, Some(entry)) if derive(entry) => Serde::Derive,
        (_, Some(_)) => Serde::DevWithoutDerive,
        _ => Serde::Absent,
    }
}

/// Adds `feature` to a dependency entry: `"1"` becomes `{ version = "1", features = [..] }`.
fn add_feature(entry: &mut Item, feature: &str) {
    if let Some(Value::String(version)) = entry.as_value().cloned() {
        let mut table = InlineTable::new();
        table.insert("version", version.value().as_str().into());
        let mut replaced = Value::InlineTable(table);
        // The comment after the entry, and its spacing, stay.
        *replaced.decor_mut() = version.decor().clone();
        *entry = Item::Value(replaced);
    }
    let Some(table) = entry.as_table_like_mut() else {
        return;
    };
    if !table.contains_key("features") {
        table.insert("features", Item::Value(Value::Array(Array::new())));
    }
    if let Some(features) = table.get_mut("features").and_then(Item::as_array_mut) {
        features.push(feature);
    }
}

/// `[profile.dev]`: line tables for the crate's code, no debug info for its dependencies (the
/// guide's build profile: about half the first build, a fifth of the binary).
fn add_profile(doc: &mut DocumentMut) {
    if doc.contains_key("profile") {
        return;
    }
    let profile: DocumentMut = "\n# From `niceeval init`: a shorter first build and a smaller test binary (line tables\n\
         # for file:line in backtraces of your code; no debug info for dependencies).\n\
         [profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n"
        .parse()
        .expect("the profile is valid TOML");
    let text = format!("{}{}", doc, profile);
    if let Ok(joined) = text.parse::<DocumentMut>() {
        *doc = joined;
    }
}

/// Creates `path` (and its folders) with `text`; an error if it exists.
fn create_new(path: &Path, text: &str) -> Result<(), InitError> {
    use std::io::Write as _;
    let fail = |e: std::io::Error| InitError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(fail)?;
    file.write_all(text.as_bytes()).map_err(fail)
}

/// The files of the scaffold for `agent`: path, text, and what it is (for the summary).
fn files(agent: AgentKind) -> Vec<(&'static str, String, &'static str)> {
    let mut files = vec![
        (CONFIG, config(agent), config_what(agent)),
        (
            SUITE,
            suite(agent),
            "the suite: greets_back, and answers:: one eval per case",
        ),
        (DATASET, DATASET_TEXT.to_string(), "the dataset: 3 cases"),
    ];
    if agent == AgentKind::Command {
        files.push((
            AGENT_SCRIPT,
            AGENT_PY.to_string(),
            "the stand-in agent (python3): replace it with yours",
        ));
    }
    files
}

fn config_what(agent: AgentKind) -> &'static str {
    match agent {
        AgentKind::Command => "[agent] type = \"command\": python3 evals/agent.py",
        AgentKind::Openai => "[agent] type = \"openai\": gpt-4o-mini (needs OPENAI_API_KEY)",
        AgentKind::Rust | AgentKind::Http => "niceeval's settings (the agent is in evals/main.rs)",
    }
}

const CONFIG_HEAD: &str = "\
# niceeval's settings for this crate's evals (found from the crate's folder upwards). Every key:
# https://github.com/niceeval/niceeval-rs/blob/main/docs/book/src/config-reference.md
";

const CONFIG_RUN: &str = "
[run]
timeout = \"2m\"  # per run of an eval body (default 5m); #[eval(timeout = \"..\")] overrides it
";

/// `niceeval.toml` for `agent`.
fn config(agent: AgentKind) -> String {
    let agent_part = match agent {
        AgentKind::Rust => "
# No [agent]: every eval names its agent in code (`agent = agent` in evals/main.rs). An [agent]
# table here would be the agent of evals that name none: a program, a model or a transcript.
",
        AgentKind::Http => "
# No [agent]: the agent under test is `service()` in evals/main.rs, your HTTP service at
# $AGENT_URL (niceeval.toml's agent types are programs, models and transcripts: command,
# openai, anthropic, chat, replay, claude-code, codex).
",
        AgentKind::Command => "
# The agent of every eval that names none: a program niceeval starts once per turn. It reads the
# turn on stdin and prints what it does on stdout, one JSON event per line.
[agent]
type = \"command\"
command = [\"python3\", \"evals/agent.py\"]  # a program and its arguments, or one string for `sh -c`
input = \"json\"   # stdin gets {\"input\", \"data\", \"session\", \"history\", \"responding_to\"}
timeout = \"30s\"  # per turn; then the program's whole process tree is ended
",
        AgentKind::Openai => "
# The agent of every eval that names none: a model on an OpenAI-compatible API. The evals are
# skipped, saying so, until OPENAI_API_KEY is set (see `needs_key` in evals/main.rs).
[agent]
type = \"openai\"
model = \"gpt-4o-mini\"
system = \"You are a helpful assistant. Answer briefly.\"
temperature = 0.0
# base_url = \"http://127.0.0.1:11434/v1\"  # any OpenAI-compatible server; a loopback one needs no key
# api_key_env = \"OPENAI_API_KEY\"          # the variable holding the key (never the key itself)
",
    };
    format!("{CONFIG_HEAD}{agent_part}{CONFIG_RUN}")
}

const DATASET_TEXT: &str = r#"{"id": "capital", "input": "What is the capital of France? Answer in one sentence.", "expected": "Paris"}
{"id": "arithmetic", "input": "What is 2 + 2? Answer with the number.", "expected": "4"}
{"id": "translation", "input": "How do you say \"thank you\" in Spanish?", "expected": "gracias"}
"#;

const AGENT_PY: &str = r#""""A stand-in agent for niceeval's command agent (niceeval.toml's [agent]): one JSON request
on stdin, one JSON event per line on stdout. Replace it with your agent, or point `command` in
niceeval.toml at your own program. Events: message, action.called / action.result (tool
calls), usage; the guide's "Agents" page lists them all."""
import json
import sys

request = json.load(sys.stdin)  # {"input": "...", "session": "...", "history": [...], ...}
question = request["input"].lower()


def emit(event):
    print(json.dumps(event), flush=True)


if "capital of france" in question:
    reply = "The capital of France is Paris."
elif "2 + 2" in question:
    reply = "2 + 2 = 4."
elif "thank you" in question and "spanish" in question:
    reply = 'In Spanish, "thank you" is "gracias".'
else:
    reply = "Hello! How can I help you today?"
emit({"type": "message", "role": "assistant", "text": reply})
emit({"type": "usage", "input_tokens": 12, "output_tokens": 10})
"#;

/// `evals/main.rs` for `agent`.
fn suite(agent: AgentKind) -> String {
    let (about, code, attr, guard) = match agent {
        AgentKind::Rust => (
            "The agent under test is `agent()` below, a Rust function: replace its stand-in body\n\
             //! with a call to your agent.",
            RUST_AGENT,
            "agent = agent, ",
            "",
        ),
        AgentKind::Command => (
            "The agent under test is the program of `[agent]` in niceeval.toml: `python3\n\
             //! evals/agent.py`, a stand-in that answers from a table. Point `command` at yours.",
            "",
            "",
            "",
        ),
        AgentKind::Http => (
            "The agent under test is your HTTP service: `service()` below POSTs each turn to\n\
             //! $AGENT_URL. Until that variable is set, the evals are skipped, saying so.",
            HTTP_AGENT,
            "agent = service, ",
            "    needs_service(t)?;\n",
        ),
        AgentKind::Openai => (
            "The agent under test is the model of `[agent]` in niceeval.toml. Until OPENAI_API_KEY\n\
             //! is set, the evals are skipped, saying so (no call, no cost).",
            OPENAI_GUARD,
            "",
            "    needs_key(t)?;\n",
        ),
    };
    format!(
        "//! This crate's eval suite, from `niceeval init`: `cargo test --test evals` runs it. It is a
//! `harness = false` test target: `niceeval::main!()` at the end runs every `#[eval]` of the file
//! concurrently, prints a summary and writes the results under target/niceeval; see
//! `cargo test --test evals -- --help` for its options (`--runs N`, `--html FILE`, a baseline...).
//!
//! {about}

use niceeval::prelude::*;
{code}
#[eval({attr}tags = [\"smoke\"])]
async fn greets_back(t: &mut Eval) -> niceeval::Result {{
{guard}    t.send(\"Hello!\").await?;
    t.check(t.reply(), includes(Regex::new(r\"(?i)\\b(hello|hi)\\b\")?));
    t.check(t.reply(), excludes(\"sorry\"));
    Ok(())
}}

/// A record of `evals/data/cases.jsonl`: the fields the eval reads (`id` names the case).
#[derive(serde::Deserialize)]
struct Case {{
    input: String,
    expected: String,
}}

/// One eval per line of `evals/data/cases.jsonl`, named `answers::<id>`: add a line, get an eval.
#[eval({attr}cases = \"evals/data/cases.jsonl\")]
async fn answers(t: &mut Eval, case: Case) -> niceeval::Result {{
{guard}    t.send(&case.input).await?;
    t.check(t.reply(), icontains(&case.expected));
    Ok(())
}}

niceeval::main!();
"
    )
}

const RUST_AGENT: &str = r#"
/// The agent under test: a stand-in that answers from a table. Replace its body with a call to
/// your agent (`use your_crate::..`), reporting what it does through `request.events`: `say`
/// (its reply), `tool_call`, `usage`, `set_data` (structured output).
fn agent() -> impl Agent {
    agent_fn(|request: Request| async move {
        let question = request.input.text.to_lowercase();
        let reply = if question.contains("capital of france") {
            "The capital of France is Paris."
        } else if question.contains("2 + 2") {
            "2 + 2 = 4."
        } else if question.contains("thank you") && question.contains("spanish") {
            "In Spanish, \"thank you\" is \"gracias\"."
        } else {
            "Hello! How can I help you today?"
        };
        request.events.say(reply);
        request.events.usage(12, 10);
        Ok(())
    })
}
"#;

const HTTP_AGENT: &str = r#"
/// The agent under test: your HTTP service. Each turn POSTs `{"input": .., "session": ..}` as
/// JSON to $AGENT_URL and takes the answer's `"reply"` as the reply: adapt both to your API. An
/// error status or an answer without `"reply"` fails the turn, saying why.
fn service() -> impl Agent {
    agent_fn(|request: Request| async move {
        let url =
            std::env::var("AGENT_URL").map_err(|_| AgentError::new("AGENT_URL is not set"))?;
        let fail = |e: reqwest::Error| AgentError::new(format!("POST {url}: {e}"));
        let answer: Value = reqwest::Client::new()
            .post(&url)
            .json(&json!({ "input": request.input.text, "session": request.session }))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(fail)?
            .json()
            .await
            .map_err(fail)?;
        let reply = answer["reply"].as_str().ok_or_else(|| {
            AgentError::new(format!("POST {url}: no \"reply\" string in {answer}"))
        })?;
        request.events.say(reply);
        Ok(())
    })
}

/// Skips the eval, saying what to set, until $AGENT_URL names the service.
fn needs_service(t: &Eval) -> niceeval::Result {
    if std::env::var_os("AGENT_URL").is_none() {
        return t.skip(
            "set AGENT_URL to your service's URL to run it (see `service` in evals/main.rs)",
        );
    }
    Ok(())
}
"#;

const OPENAI_GUARD: &str = r#"
/// Skips the eval, saying what to set, until OPENAI_API_KEY is set: the model of niceeval.toml
/// is a paid API. (A local OpenAI-compatible server, a loopback `base_url`, needs no key: delete
/// this function and its calls.)
fn needs_key(t: &Eval) -> niceeval::Result {
    if std::env::var_os("OPENAI_API_KEY").is_none() {
        return t.skip("set OPENAI_API_KEY to run it (it calls the model in niceeval.toml)");
    }
    Ok(())
}
"#;
