//! `niceeval init`: a new folder and an existing crate scaffolded, then the command it prints
//! run as printed (`cd DIR && cargo test --test evals`) and passing; a second init refused with
//! nothing changed; every agent kind's `niceeval.toml` read by niceeval's own loader; the edits
//! of an existing `Cargo.toml` (comments kept, entries not duplicated).
//!
//! The scaffolds depend on this checkout's niceeval (`--path`), and the printed command runs
//! offline (`CARGO_NET_OFFLINE`) with this workspace's `Cargo.lock` copied in, so it resolves to
//! the crates already downloaded. Every scaffolded crate builds into one target directory of
//! its own, `<this workspace's target>/niceeval-init-tests`, with one dev profile (a
//! `.cargo/config.toml` above the crates): niceeval and its dependencies compile there once
//! (minutes, the first time), then each test compiles its small crate only. Not the fixtures'
//! build directory: ring's build script reruns when the CARGO_* variables of the cargo that
//! builds it change (cargo compares the outer environment), so a build from this test process
//! made niceeval-tests' fixtures and the book's page compile ring, rustls and niceeval again.
//! `OPENAI_API_KEY` and `AGENT_URL` are removed from the printed command's
//! environment: the scaffolds must pass as written, and no test calls a real model.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use niceeval::__workspace::config::{AgentConfig, Config};

use crate::support::{Fake, root};

/// `niceeval init ARGS` from `cwd`.
fn init(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .arg("init")
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("the niceeval binary runs")
}

/// `niceeval init ARGS --path <this checkout>` from `cwd`, which must succeed; its stdout.
fn init_ok(cwd: &Path, args: &[&str]) -> String {
    let checkout = root();
    let mut all = args.to_vec();
    all.extend(["--path", checkout.to_str().expect("a UTF-8 path")]);
    let output = init(cwd, &all);
    assert!(
        output.status.success(),
        "niceeval init {all:?}: {}",
        dump(&output)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn dump(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The command `niceeval init` printed: its last line.
fn printed_command(stdout: &str) -> String {
    let mut lines = stdout.lines().rev();
    let command = lines.next().expect("a last line").trim().to_string();
    assert_eq!(
        lines.next(),
        Some("run the suite (its first build compiles niceeval's dependencies, once):"),
        "{stdout}"
    );
    command
}

/// The target directory the scaffolds build in (see the module's comment).
fn scaffold_target() -> PathBuf {
    // <target>/debug/niceeval
    let bin = Path::new(env!("CARGO_BIN_EXE_niceeval"));
    bin.parent()
        .and_then(Path::parent)
        .expect("the binary sits in <target>/debug")
        .join("niceeval-init-tests")
}

/// A temporary folder outside the repository, with the shared dev profile above the crates.
fn outside() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    assert!(!dir.path().starts_with(root()), "outside the repository");
    std::fs::create_dir_all(dir.path().join(".cargo")).expect("create .cargo");
    std::fs::write(
        dir.path().join(".cargo/config.toml"),
        "[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n\n\
         [profile.dev.package.miniz_oxide]\nopt-level = 3\n\n[profile.dev.package.crc32fast]\nopt-level = 3\n",
    )
    .expect("write .cargo/config.toml");
    dir
}

/// Runs `command` with `sh -c` from `cwd`, offline, in the shared target directory, after
/// copying this workspace's `Cargo.lock` into `crate_dir`.
fn run_printed(cwd: &Path, crate_dir: &Path, command: &str, env: &[(&str, &str)]) -> Output {
    std::fs::copy(root().join("Cargo.lock"), crate_dir.join("Cargo.lock")).expect("copy the lock");
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("CARGO_TARGET_DIR", scaffold_target())
        .env_remove("CARGO_BUILD_BUILD_DIR")
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TERM_COLOR", "never")
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("AGENT_URL")
        .env_remove("RUSTFLAGS")
        // The http scaffold's reqwest calls a loopback service here.
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .envs(env.iter().copied());
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("NICEEVAL_") || name.starts_with("RUST_TEST_") {
            sh.env_remove(name);
        }
    }
    sh.output().expect("sh runs")
}

/// Every file under `dir` (but `target/` and `.git/`) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read_dir") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "target" && name != ".git" {
                    stack.push(path);
                }
            } else {
                let bytes = std::fs::read(&path).expect("read");
                files.insert(
                    path.strip_prefix(dir).expect("under dir").to_path_buf(),
                    bytes,
                );
            }
        }
    }
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The evals of every scaffold, as the suite runner names them.
const EVALS: [&str; 4] = [
    "greets_back",
    "answers::capital",
    "answers::arithmetic",
    "answers::translation",
];

/// Asserts the suite ran its four evals with `verdict` on each line (`ok`, or `ignored` for a
/// skip) and exited 0.
fn assert_suite(output: &Output, verdict: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", dump(output));
    for eval in EVALS {
        assert!(
            stdout
                .lines()
                .any(|line| line.starts_with(&format!("test {eval} ... {verdict}"))),
            "no `test {eval} ... {verdict}` line\n{}",
            dump(output)
        );
    }
}

#[test]
fn new_folder_then_the_printed_command_passes() {
    let tmp = outside();
    let stdout = init_ok(tmp.path(), &["support-evals"]);
    let command = printed_command(&stdout);
    assert_eq!(command, "cd support-evals && cargo test --test evals");
    assert!(
        stdout.contains("created the library crate `support-evals` in support-evals"),
        "{stdout}"
    );
    let dir = tmp.path().join("support-evals");
    let manifest = read(&dir.join("Cargo.toml"));
    for line in [
        "[[test]]\nname = \"evals\"\npath = \"evals/main.rs\"\nharness = false\n",
        "[profile.dev]\ndebug = \"line-tables-only\"\n",
        "serde = { version = \"1\", features = [\"derive\"] }",
    ] {
        assert!(manifest.contains(line), "no {line:?} in\n{manifest}");
    }
    assert!(
        manifest.contains(&format!(
            "niceeval = {{ path = \"{}\" }}",
            root().join("niceeval").display()
        )),
        "{manifest}"
    );
    for file in [
        "src/lib.rs",
        "niceeval.toml",
        "evals/main.rs",
        "evals/data/cases.jsonl",
    ] {
        assert!(dir.join(file).is_file(), "no {file}");
    }
    let output = run_printed(tmp.path(), &dir, &command, &[]);
    assert_suite(&output, "ok");
}

#[test]
fn existing_crate_keeps_its_manifest_then_the_printed_command_passes() {
    let tmp = outside();
    let dir = tmp.path().join("support-bot");
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    let original = "\
# The support bot: keep this comment.
[package]
name = \"support-bot\"
version = \"0.1.0\"
edition = \"2021\"

[dependencies]
regex = \"1\"  # for the order numbers
";
    std::fs::write(dir.join("Cargo.toml"), original).expect("write Cargo.toml");
    std::fs::write(
        dir.join("src/lib.rs"),
        "/// The bot's greeting.\npub fn greeting() -> &'static str {\n    \"Hello!\"\n}\n",
    )
    .expect("write lib.rs");
    // From the crate's own folder, no DIR: the command has no `cd`.
    let stdout = init_ok(&dir, &["--agent", "command"]);
    let command = printed_command(&stdout);
    assert_eq!(command, "cargo test --test evals");
    assert!(!stdout.contains("created the library crate"), "{stdout}");
    let manifest = read(&dir.join("Cargo.toml"));
    assert!(
        manifest.starts_with(original),
        "the manifest's text was changed, not added to:\n{manifest}"
    );
    assert!(!manifest.contains("[profile"), "{manifest}");
    assert!(dir.join("evals/agent.py").is_file());
    let config = read(&dir.join("niceeval.toml"));
    assert!(
        config.contains("command = [\"python3\", \"evals/agent.py\"]"),
        "{config}"
    );
    let output = run_printed(&dir, &dir, &command, &[]);
    assert_suite(&output, "ok");
}

/// The http and openai scaffolds compile and pass as written, their evals skipped with what to
/// set; configured, they pass against loopback stand-ins: the http one against a service at
/// `AGENT_URL`, the openai one against the fake OpenAI API (`scripts/fake-openai.py`) as its
/// `base_url`, with a fake key.
#[test]
fn http_and_openai_scaffolds_pass_skipped_until_configured() {
    let tmp = outside();
    let stdout = init_ok(tmp.path(), &["http-evals", "--agent", "http"]);
    let dir = tmp.path().join("http-evals");
    let manifest = read(&dir.join("Cargo.toml"));
    assert!(
        manifest.contains(
            "reqwest = { version = \"0.12\", default-features = false, features = [\"json\", \"rustls-tls\"] }"
        ),
        "{manifest}"
    );
    let command = printed_command(&stdout);
    let output = run_printed(tmp.path(), &dir, &command, &[]);
    assert_suite(&output, "ignored");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("set AGENT_URL"), "{}", dump(&output));

    let (url, served) = loopback_service();
    let output = run_printed(tmp.path(), &dir, &command, &[("AGENT_URL", &url)]);
    assert_suite(&output, "ok");
    let request = served.recv().expect("the service was called");
    assert!(request.contains("\"input\""), "{request}");

    let stdout = init_ok(tmp.path(), &["openai-evals", "--agent", "openai"]);
    let command = printed_command(&stdout);
    let dir = tmp.path().join("openai-evals");
    let output = run_printed(tmp.path(), &dir, &command, &[]);
    assert_suite(&output, "ignored");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("set OPENAI_API_KEY"), "{}", dump(&output));

    // Configured as a user would (a key, and here the loopback fake as the server), the same
    // evals call the model and pass.
    let answers = tmp.path().join("answers.json");
    std::fs::write(
        &answers,
        r#"[{"match": "capital of france", "answer": "Paris."},
            {"match": "2 + 2", "answer": "4"},
            {"match": "spanish", "answer": "Gracias."}]"#,
    )
    .expect("write the fake's answers");
    let fake = Fake::with_answers(&answers);
    let config_path = dir.join("niceeval.toml");
    let config = read(&config_path);
    let commented = "# base_url = \"http://127.0.0.1:11434/v1\"";
    assert!(config.contains(commented), "{config}");
    std::fs::write(
        &config_path,
        config.replace(commented, &format!("base_url = \"{}\"", fake.url)),
    )
    .expect("write niceeval.toml");
    let output = run_printed(tmp.path(), &dir, &command, &[("OPENAI_API_KEY", "sk-fake")]);
    assert_suite(&output, "ok");
}

/// A loopback HTTP service answering every POST with one reply that passes every scaffolded
/// eval; its URL, and the requests' bodies.
fn loopback_service() -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/chat", listener.local_addr().expect("an address"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers, then Content-Length bytes of body.
            let body = loop {
                let Ok(n) = stream.read(&mut buf) else {
                    break None;
                };
                if n == 0 {
                    break None;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (name, value) = l.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if body.len() >= length {
                        break Some(body.to_string());
                    }
                }
            };
            let Some(body) = body else { continue };
            let _ = tx.send(body);
            let reply = r#"{"reply":"Hello! The capital of France is Paris; 2 + 2 = 4; thank you is gracias."}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, rx)
}

#[test]
fn init_twice_refuses_and_changes_nothing() {
    let tmp = outside();
    init_ok(tmp.path(), &["twice", "--agent", "command"]);
    let dir = tmp.path().join("twice");
    let before = snapshot(&dir);
    let output = init(tmp.path(), &["twice", "--agent", "command"]);
    assert_eq!(output.status.code(), Some(2), "{}", dump(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("already has a test target named `evals`"),
        "{stderr}"
    );
    assert_eq!(snapshot(&dir), before, "the second init changed files");

    // A user's own suite file, with no target declared yet: refused by name, nothing written.
    let dir = tmp.path().join("mine");
    std::fs::create_dir_all(dir.join("evals")).expect("mkdir");
    std::fs::write(dir.join("evals/main.rs"), "// mine\n").expect("write");
    std::fs::write(dir.join("niceeval.toml"), "# mine\n").expect("write");
    let output = init(tmp.path(), &["mine"]);
    assert_eq!(output.status.code(), Some(2), "{}", dump(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("mine/niceeval.toml, mine/evals/main.rs already exist")
            && stderr.contains("never overwrites"),
        "{stderr}"
    );
    assert!(!dir.join("Cargo.toml").exists(), "cargo init ran anyway");
    assert_eq!(read(&dir.join("evals/main.rs")), "// mine\n");
}

#[test]
fn every_agent_kind_writes_a_config_niceeval_reads() {
    let tmp = outside();
    for kind in ["rust", "command", "http", "openai"] {
        init_ok(tmp.path(), &[kind, "--agent", kind]);
        let path = tmp.path().join(kind).join("niceeval.toml");
        let config =
            Config::from_file(&path).unwrap_or_else(|e| panic!("{kind}: {e}\n{}", read(&path)));
        match (kind, &config.agent) {
            ("rust" | "http", None) => {}
            ("command", Some(AgentConfig::Command(_))) => {}
            ("openai", Some(AgentConfig::Openai(chat))) => assert_eq!(chat.model, "gpt-4o-mini"),
            (kind, agent) => panic!("{kind}: [agent] is {agent:?}"),
        }
        // The suite is written as rustfmt writes it (`cargo fmt` in the new crate changes nothing).
        let suite = tmp.path().join(kind).join("evals/main.rs");
        match Command::new("rustfmt")
            .args(["--edition", "2024", "--check"])
            .arg(&suite)
            .output()
        {
            Ok(output) => assert!(output.status.success(), "{kind}: {}", dump(&output)),
            Err(e) => eprintln!("NOTICE: skipping the rustfmt check: rustfmt does not run: {e}"),
        }
    }
}

/// A crate in a folder, with this manifest.
fn crate_with(tmp: &Path, name: &str, manifest: &str) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write");
    std::fs::write(dir.join("src/lib.rs"), "").expect("write");
    dir
}

#[test]
fn existing_manifests_are_added_to_not_rewritten_and_workspaces_inherited() {
    let tmp = outside();

    // Dev-dependencies in the middle, with serde lacking `derive` and niceeval already there:
    // niceeval kept as it was, `derive` added to serde, the rest untouched.
    let manifest = "\
[package]
name = \"a\"
version = \"0.1.0\"
edition = \"2024\"

[dev-dependencies]
# for the tests
niceeval = { git = \"https://example.com/niceeval\" }
serde = \"1\"   # plain

[features]
extra = []
";
    let dir = crate_with(tmp.path(), "a", manifest);
    let stdout = init_ok(tmp.path(), &["a"]);
    assert!(
        stdout.contains("niceeval was already a dependency"),
        "{stdout}"
    );
    let after = read(&dir.join("Cargo.toml"));
    assert!(
        after.starts_with(
            "\
[package]
name = \"a\"
version = \"0.1.0\"
edition = \"2024\"

[dev-dependencies]
# for the tests
niceeval = { git = \"https://example.com/niceeval\" }
serde = { version = \"1\", features = [\"derive\"] }   # plain

[features]
extra = []
"
        ),
        "{after}"
    );
    assert_eq!(after.matches("niceeval =").count(), 1, "{after}");

    // No dev-dependencies: a table added after the rest; serde with derive in [dependencies]
    // is enough.
    let manifest = "\
[package]
name = \"b\"
version = \"0.1.0\"
edition = \"2024\"

[dependencies]
serde = { version = \"1\", features = [\"derive\"] }
";
    let dir = crate_with(tmp.path(), "b", manifest);
    init_ok(tmp.path(), &["b"]);
    let after = read(&dir.join("Cargo.toml"));
    let checkout = root().join("niceeval");
    assert_eq!(
        after,
        format!(
            "{manifest}
[dev-dependencies]
niceeval = {{ path = \"{}\" }}

# niceeval's eval suite (from `niceeval init`): `cargo test --test evals` runs it;
# harness = false lets niceeval::main!() run its evals concurrently, with its own options.
[[test]]
name = \"evals\"
path = \"evals/main.rs\"
harness = false
",
            checkout.display()
        )
    );

    // The published niceeval by default.
    let dir = crate_with(
        tmp.path(),
        "c",
        "[package]\nname = \"c\"\nversion = \"0.1.0\"\n",
    );
    let output = init(tmp.path(), &["c"]);
    assert!(output.status.success(), "{}", dump(&output));
    let after = read(&dir.join("Cargo.toml"));
    assert!(
        after.contains(&format!("niceeval = \"{}\"\n", env!("CARGO_PKG_VERSION"))),
        "{after}"
    );

    // A workspace member: niceeval and serde inherited from [workspace.dependencies]. A new
    // crate in the workspace (the members' glob takes it in) gets no profile, which cargo would
    // ignore there, and a note saying so; its printed command passes.
    let ws = tmp.path().join("ws-deps");
    std::fs::create_dir_all(ws.join("crates")).expect("mkdir");
    std::fs::write(
        ws.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"2\"\nmembers = [\"crates/*\"]\n\n[workspace.dependencies]\n\
             niceeval = {{ path = \"{}\" }}\nserde = \"1\"\n",
            checkout.display()
        ),
    )
    .expect("write the workspace's manifest");
    let output = init(tmp.path(), &["ws-deps/crates/evals"]);
    assert!(output.status.success(), "{}", dump(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("is a member of the workspace of") && stdout.contains("none was added"),
        "{stdout}"
    );
    let member = read(&ws.join("crates/evals/Cargo.toml"));
    assert!(
        member.contains(
            "[dev-dependencies]\nniceeval = { workspace = true }\nserde = { workspace = true, features = [\"derive\"] }\n"
        ) && !member.contains("[profile"),
        "{member}"
    );
    let output = run_printed(tmp.path(), &ws, &printed_command(&stdout), &[]);
    assert_suite(&output, "ok");

    // A workspace's virtual manifest, --name for an existing crate, a bad --path: refused.
    let dir = tmp.path().join("ws");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("Cargo.toml"), "[workspace]\nmembers = []\n").expect("write");
    let output = init(tmp.path(), &["ws"]);
    assert_eq!(output.status.code(), Some(2), "{}", dump(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("workspace's manifest with no [package]"),
        "{}",
        dump(&output)
    );
    let output = init(tmp.path(), &["c", "--name", "other"]);
    assert_eq!(output.status.code(), Some(2), "{}", dump(&output));
    let output = init(
        tmp.path(),
        &["d", "--path", tmp.path().to_str().expect("UTF-8")],
    );
    assert_eq!(output.status.code(), Some(2), "{}", dump(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no niceeval crate there"),
        "{}",
        dump(&output)
    );
    assert!(
        !tmp.path().join("d").exists(),
        "a refused init made a folder"
    );
    let output = init(tmp.path(), &["e", "--agent", "python"]);
    assert_eq!(output.status.code(), Some(2), "{}", dump(&output));
}
