//! `niceeval.toml` as a user writes it: real files in a temporary directory, discovery by
//! walking up, every kind of mistake reported with file, line, column and key, and a malformed
//! file failing the eval that uses it.

use std::path::Path;
use std::time::Duration;

use niceeval::__private::{BoxFuture, EvalDefinition};
use niceeval::__workspace::config::{Config, ConfigError, FILE_NAME, find};
use niceeval::__workspace::run_eval;
use niceeval::{Eval, Outcome};

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join(FILE_NAME);
    std::fs::write(&path, text).unwrap();
    path
}

/// Parses `text` from a real file and returns the error's parts.
fn parse_error(text: &str) -> (String, usize, usize, Option<String>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), text);
    let err = Config::from_file(&path).expect_err("the file must be rejected");
    let display = err.to_string();
    match err {
        ConfigError::Parse {
            path: file,
            line,
            column,
            key,
            message,
            ..
        } => {
            assert_eq!(file, path.display().to_string());
            (file, line, column, key, message, display)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn a_complete_file_parses_with_every_section() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(
        dir.path(),
        r#"
[judge]
model = "openai/gpt-4o-mini"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "OPENAI_API_KEY"

[agent]
type = "replay"
path = "transcripts/refund.jsonl"

[prices."acme/brainy-1"]
input = 1
output = 4.5
cache_read = 0.1

[prices."openai/gpt-4o"]
input = 2.0
output = 8.0

[run]
concurrency = 8
strict = true
timeout = "1m30s"
runs = 3
"#,
    );
    let config = Config::from_file(&path).unwrap();
    assert_eq!(config.source.as_deref(), Some(path.as_path()));
    assert_eq!(config.judge.model.as_deref(), Some("openai/gpt-4o-mini"));
    assert_eq!(
        config.judge.base_url.as_deref(),
        Some("http://127.0.0.1:11434/v1")
    );
    assert_eq!(config.judge.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    let agent = config.agent.as_ref().unwrap();
    assert_eq!(agent.kind(), "replay");
    let niceeval::__workspace::config::AgentConfig::Replay(replay) = agent else {
        panic!("{agent:?}")
    };
    assert_eq!(replay.path.to_str(), Some("transcripts/refund.jsonl"));
    let brainy = config.prices["acme/brainy-1"];
    assert_eq!(
        (brainy.input, brainy.output, brainy.cache_read),
        (1.0, 4.5, Some(0.1))
    );
    assert_eq!(config.run.concurrency, Some(8));
    assert!(config.run.strict);
    assert_eq!(config.timeout(), Duration::from_secs(90));
    assert_eq!(config.run.runs, Some(3));
    // the overrides feed the price table
    let hit = niceeval::__workspace::price::PriceTable::from_config(&config)
        .lookup("gpt-4o-2024-08-06")
        .unwrap();
    assert_eq!((hit.price.input, hit.price.output), (2.0, 8.0));
}

#[test]
fn an_empty_file_is_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), "# nothing configured yet\n");
    let config = Config::from_file(&path).unwrap();
    assert_eq!(
        Config {
            source: None,
            ..config.clone()
        },
        Config::default()
    );
    assert_eq!(
        config.timeout(),
        niceeval::__workspace::config::DEFAULT_TIMEOUT
    );
}

#[test]
fn discovery_walks_up_from_the_manifest_dir_to_the_nearest_file() {
    let root = tempfile::tempdir().unwrap();
    let workspace_file = write_config(root.path(), "[run]\nruns = 2\n");
    let member = root.path().join("crates/member");
    let deep = member.join("src/bin");
    std::fs::create_dir_all(&deep).unwrap();
    // the nearest file wins
    assert_eq!(find(&deep), Some(workspace_file.clone()));
    let config = Config::discover(&deep).unwrap();
    assert_eq!(config.source.as_deref(), Some(workspace_file.as_path()));
    let member_file = write_config(&member, "[run]\nruns = 5\n");
    assert_eq!(find(&deep), Some(member_file.clone()));
    // a directory named niceeval.toml is not a config file
    let decoy = deep.join(FILE_NAME);
    std::fs::create_dir_all(&decoy).unwrap();
    assert_eq!(find(&deep), Some(member_file));
}

#[test]
fn every_mistake_names_file_line_column_and_key() {
    // (file text, line, column, key, fragment of the message)
    let cases: &[(&str, usize, usize, Option<&str>, &str)] = &[
        // TOML syntax
        ("[run\nstrict = true\n", 1, 5, None, ""),
        ("[run]\nstrict = tru\n", 2, 10, None, ""),
        (
            "[run]\nstrict = true\nstrict = false\n",
            3,
            1,
            None,
            "duplicate key",
        ),
        // wrong types
        (
            "[run]\nstrict = \"yes\"\n",
            2,
            10,
            Some("[run] strict"),
            "expected a boolean",
        ),
        (
            "[judge]\nmodel = 42\n",
            2,
            9,
            Some("[judge] model"),
            "invalid type",
        ),
        (
            "[run]\nconcurrency = \"8\"\n",
            2,
            15,
            Some("[run] concurrency"),
            "invalid type",
        ),
        (
            "[prices.\"openai/gpt-4o\"]\ninput = \"cheap\"\noutput = 1\n",
            2,
            9,
            Some("[prices.\"openai/gpt-4o\"] input"),
            "invalid type",
        ),
        (
            "run = 3\n",
            1,
            7,
            Some("[run]"),
            "expected a table with concurrency, strict, timeout, runs",
        ),
        (
            "[prices]\n\"openai/gpt-4o\" = 3\n",
            2,
            19,
            Some("[prices.\"openai/gpt-4o\"]"),
            "expected a table with `input` and `output` prices",
        ),
        // unknown keys and tables
        (
            "[run]\nconcurency = 4\n",
            2,
            1,
            Some("[run] concurency"),
            "unknown key `concurency`; did you mean `concurrency`?",
        ),
        (
            "[jduge]\nmodel = \"openai/gpt-4o\"\n",
            1,
            2,
            Some("[jduge]"),
            "unknown key `jduge`; did you mean `judge`?",
        ),
        (
            "[prices.\"openai/gpt-4o\"]\ninput = 1\noutput = 2\ncached = 0.5\n",
            4,
            1,
            Some("[prices.\"openai/gpt-4o\"] cached"),
            "unknown key `cached`; did you mean `cache_read`?",
        ),
        (
            "[prices.\"openai/gpt-4o\"]\ninput = 1\noutput = 2\ncurrency = \"EUR\"\n",
            4,
            1,
            Some("[prices.\"openai/gpt-4o\"] currency"),
            "unknown key `currency`; [prices.\"openai/gpt-4o\"] takes `input`, `output`, `cache_read`",
        ),
        // missing keys
        (
            "[prices.\"acme/brainy-1\"]\ninput = 1\n",
            1,
            1,
            Some("[prices.\"acme/brainy-1\"]"),
            "missing field `output`",
        ),
        (
            "[agent]\npath = \"t.jsonl\"\n",
            1,
            1,
            Some("[agent]"),
            "missing field `type`",
        ),
        // bad values
        (
            "[run]\ntimeout = \"soon\"\n",
            2,
            11,
            Some("[run] timeout"),
            "not a duration",
        ),
        (
            "[run]\ntimeout = \"30\"\n",
            2,
            11,
            Some("[run] timeout"),
            "no unit",
        ),
        (
            "[run]\ntimeout = \"3 weeks\"\n",
            2,
            11,
            Some("[run] timeout"),
            "unknown unit",
        ),
        (
            "[run]\ntimeout = \"0s\"\n",
            2,
            11,
            Some("[run] timeout"),
            "must be positive",
        ),
        (
            "[run]\ntimeout = \"99999999999999999999h\"\n",
            2,
            11,
            Some("[run] timeout"),
            "too long",
        ),
        (
            "[run]\ntimeout = 30\n",
            2,
            11,
            Some("[run] timeout"),
            "invalid type",
        ),
        (
            "[prices.\"openai/gpt-4o\"]\ninput = -2.5\noutput = 10\n",
            2,
            9,
            Some("[prices.\"openai/gpt-4o\"] input"),
            "0 or more; got -2.5",
        ),
        (
            "[prices.\"openai/gpt-4o\"]\ninput = 2.5\noutput = nan\n",
            3,
            10,
            Some("[prices.\"openai/gpt-4o\"] output"),
            "got NaN",
        ),
        (
            "[prices.\"openai/gpt-4o\"]\ninput = 2.5\noutput = 10\ncache_read = -1\n",
            4,
            14,
            Some("[prices.\"openai/gpt-4o\"] cache_read"),
            "0 or more",
        ),
        (
            "[run]\nconcurrency = 0\n",
            2,
            15,
            Some("[run] concurrency"),
            "1 or more; got 0",
        ),
        (
            "[run]\nruns = -3\n",
            2,
            8,
            Some("[run] runs"),
            "1 or more; got -3",
        ),
        (
            "[judge]\nmodel = \"gpt-4o-mini\"\n",
            2,
            9,
            Some("[judge] model"),
            "is not \"provider/model\"",
        ),
        (
            "[judge]\nmodel = \"openai/\"\n",
            2,
            9,
            Some("[judge] model"),
            "provider/model",
        ),
        (
            "[judge]\nbase_url = \"localhost:11434/v1\"\n",
            2,
            12,
            Some("[judge] base_url"),
            "not an http(s) URL",
        ),
    ];
    let mut mismatches = Vec::new();
    for (text, line, column, key, fragment) in cases {
        let (file, got_line, got_column, got_key, message, display) = parse_error(text);
        let location = format!("{file}:{line}:{column}: ");
        let prefix = key.map_or(location.clone(), |key| format!("{location}{key}: "));
        if (got_line, got_column) != (*line, *column)
            || got_key.as_deref() != *key
            || !message.contains(fragment)
            || !display.starts_with(&prefix)
        {
            mismatches.push(format!(
                "{text:?}\n  expected {line}:{column} {key:?} containing {fragment:?}\n  got      {display}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn every_mistake_of_a_file_is_listed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(
        dir.path(),
        "[run]\nconcurency = 4\ntimeout = \"soon\"\n\n[judge]\nmodel = \"gpt-4o\"\ncahce = \"off\"\n",
    );
    let err = Config::from_file(&path).unwrap_err();
    let file = path.display();
    assert_eq!(
        err.to_string(),
        format!(
            "{file}:2:1: [run] concurency: unknown key `concurency`; did you mean `concurrency`?\n\
             {file}:3:11: [run] timeout: \"soon\" is not a duration; write e.g. \"30s\", \"2m\" or \"500ms\"\n\
             {file}:6:9: [judge] model: \"gpt-4o\" is not \"provider/model\"; write e.g. \"openai/gpt-4o-mini\" or \"anthropic/claude-haiku-4-5\"\n\
             {file}:7:1: [judge] cahce: unknown key `cahce`; did you mean `cache`?"
        )
    );
    assert!(matches!(&err, ConfigError::Many(list) if list.len() == 4));
}

#[test]
fn an_api_key_pasted_into_api_key_env_is_rejected_without_echoing_it() {
    let secret = "sk-proj-abcdef0123456789";
    let (_, line, _, key, message, display) =
        parse_error(&format!("[judge]\napi_key_env = \"{secret}\"\n"));
    assert_eq!(line, 2);
    assert_eq!(key.as_deref(), Some("[judge] api_key_env"));
    assert!(message.contains("never the key itself"), "{display}");
    assert!(!display.contains(secret), "{display}");
}

#[test]
fn unreadable_file_is_a_read_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.toml");
    let err = Config::from_file(&path).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }));
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn environment_overrides_apply_over_the_file_and_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(
        dir.path(),
        "[judge]\nmodel = \"openai/gpt-4o-mini\"\n[run]\nstrict = false\nruns = 1\n",
    );
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let mut config = Config::from_file(&path).unwrap();
    config
        .apply_env(env(&[
            ("NICEEVAL_STRICT", "yes"),
            ("NICEEVAL_RUNS", "4"),
            ("NICEEVAL_JUDGE_MODEL", "anthropic/claude-haiku-4-5"),
            ("NICEEVAL_JUDGE_BASE_URL", "https://llm.internal.example/v1"),
        ]))
        .unwrap();
    assert!(config.run.strict);
    assert_eq!(config.run.runs, Some(4));
    // The judge model resolves per call, #[eval], niceeval.toml, then NICEEVAL_JUDGE_MODEL:
    // the variable only fills in a model the file leaves unset.
    assert_eq!(config.judge.model.as_deref(), Some("openai/gpt-4o-mini"));
    assert_eq!(
        config.judge.base_url.as_deref(),
        Some("https://llm.internal.example/v1")
    );
    // empty values leave the file's settings alone
    let mut untouched = Config::from_file(&path).unwrap();
    untouched
        .apply_env(env(&[("NICEEVAL_JUDGE_MODEL", " "), ("NICEEVAL_RUNS", "")]))
        .unwrap();
    assert_eq!(untouched.judge.model.as_deref(), Some("openai/gpt-4o-mini"));
    assert_eq!(untouched.run.runs, Some(1));

    let bad: &[(&'static [(&'static str, &'static str)], &str)] = &[
        (&[("NICEEVAL_STRICT", "maybe")], "NICEEVAL_STRICT"),
        (&[("NICEEVAL_RUNS", "0")], "NICEEVAL_RUNS"),
        (&[("NICEEVAL_RUNS", "many")], "NICEEVAL_RUNS"),
        (
            &[("NICEEVAL_JUDGE_MODEL", "gpt-4o")],
            "NICEEVAL_JUDGE_MODEL",
        ),
        (
            &[("NICEEVAL_JUDGE_BASE_URL", "ftp://x")],
            "NICEEVAL_JUDGE_BASE_URL",
        ),
    ];
    for (vars, name) in bad {
        let err = Config::default().apply_env(env(vars)).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Env { name: n, .. } if n == name),
            "{err}"
        );
        assert!(err.to_string().contains(name), "{err}");
    }
}

fn body_that_passes(_t: &mut Eval) -> BoxFuture<'_, niceeval::Result> {
    Box::pin(async { Ok(()) })
}

/// A definition whose `niceeval.toml` lookup starts in `dir` (leaked: definitions are static).
fn definition_in(dir: &Path) -> &'static EvalDefinition {
    let manifest_dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
    Box::leak(Box::new(EvalDefinition::new(
        "uses_a_bad_config",
        module_path!(),
        file!(),
        line!(),
        manifest_dir,
        body_that_passes,
    )))
}

#[test]
fn a_malformed_config_fails_the_eval_with_the_error() {
    let root = tempfile::tempdir().unwrap();
    let path = write_config(root.path(), "[run]\ntimeout = \"forever\"\n");
    let crate_dir = root.path().join("my-evals");
    std::fs::create_dir_all(&crate_dir).unwrap();

    let report = run_eval(definition_in(&crate_dir));
    assert_eq!(report.outcome, Outcome::Failed);
    let error = report
        .error_message()
        .expect("a config error is an execution error");
    assert!(
        error.starts_with(&format!("{}:2:11: [run] timeout: ", path.display())),
        "{error}"
    );
    assert!(report.render().contains("FAILED (error)"));
    assert_eq!(report.runs.len(), 1);

    // the same body passes under a valid file: the failure was the config's
    let good = tempfile::tempdir().unwrap();
    write_config(good.path(), "[run]\ntimeout = \"5s\"\n");
    assert_eq!(
        run_eval(definition_in(good.path())).outcome,
        Outcome::Passed
    );
}
