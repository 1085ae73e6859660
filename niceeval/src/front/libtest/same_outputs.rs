//! Both front ends feed the one pipeline: the same evals run under plain `cargo test` (a
//! child process of this test binary, the `#[eval]` test's path: `run_test_report`, the
//! files asked for through the environment, written when the process exits) and under the
//! suite runner (`run_with_args` with `--jsonl`, `--junit`, `--otlp-endpoint`) write the
//! same JSONL, JUnit and OTLP bytes. Normalized, because they differ from run to run
//! whatever runs them: durations and times (`duration_ms`, `mean_run_ms`, `max_run_ms`,
//! JUnit's `time` and `timestamp`, spans' start and end), the random trace and span ids, and the temporary
//! directory the evals' crate lives in (a path the reports name).

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::run::definition::{BoxFuture, EvalDefinition};
use crate::run::eval::Eval;

/// Set in the child process: the directory of the crate whose evals it runs.
const CHILD: &str = "NICEEVAL_TEST_OUTPUTS_CHILD";

fn passes(t: &mut Eval) -> BoxFuture<'_, crate::run::error::Result> {
    Box::pin(async move {
        t.check(
            "The capital is Paris.",
            crate::checks::expect::includes("Paris"),
        );
        Ok(())
    })
}

fn fails(t: &mut Eval) -> BoxFuture<'_, crate::run::error::Result> {
    Box::pin(async move {
        t.check(
            "The capital is Lyon.",
            crate::checks::expect::includes("Paris"),
        );
        Ok(())
    })
}

fn skips(t: &mut Eval) -> BoxFuture<'_, crate::run::error::Result> {
    Box::pin(async move { t.skip("no key in this environment") })
}

fn defs(dir: &'static str) -> Vec<&'static EvalDefinition> {
    let bodies: [(&'static str, crate::run::definition::Body); 3] =
        [("a_passes", passes), ("b_fails", fails), ("c_skips", skips)];
    bodies
        .into_iter()
        .map(|(name, body)| -> &'static EvalDefinition {
            Box::leak(Box::new(EvalDefinition::new(
                name,
                "outputs::same",
                "tests/same.rs",
                1,
                dir,
                body,
            )))
        })
        .collect()
}

/// The child: runs the evals with the front end `NICEEVAL_TEST_OUTPUTS_FRONT` names —
/// `libtest` as `cargo test` runs an `#[eval]` test (without failing the test: the outputs
/// are what is compared), the outputs ended by the process's exit; `suite` as `main!()`
/// does, with `--jsonl`, `--junit` and `--otlp-endpoint` — each writing into
/// `NICEEVAL_TEST_OUTPUTS_DIR`.
#[test]
fn front_end_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let dir: &'static str = Box::leak(dir.into_boxed_str());
    let out =
        std::path::PathBuf::from(std::env::var("NICEEVAL_TEST_OUTPUTS_DIR").unwrap_or_default());
    match std::env::var("NICEEVAL_TEST_OUTPUTS_FRONT").as_deref() {
        Ok("libtest") => {
            for def in defs(dir) {
                let _ = super::run_test_report(def);
            }
        }
        Ok("suite") => {
            let endpoint = std::env::var("NICEEVAL_TEST_OUTPUTS_ENDPOINT").unwrap_or_default();
            let mut args = vec![
                "--concurrency".to_string(),
                "1".to_string(),
                "--jsonl".to_string(),
                out.join("suite.jsonl").display().to_string(),
                "--junit".to_string(),
                out.join("suite.xml").display().to_string(),
                "--quiet".to_string(),
            ];
            if cfg!(feature = "otel") {
                args.extend(["--otlp-endpoint".to_string(), endpoint]);
            }
            let args = crate::front::harness::Args::parse(args)
                .expect("valid arguments")
                .expect("not --help");
            let code = crate::front::harness::run_with_args(&args, defs(dir), Vec::new());
            assert_eq!(code, crate::front::harness::EXIT_FAILED, "one eval fails");
        }
        other => panic!("no front end {other:?}"),
    }
}

/// A collector on 127.0.0.1 keeping every body POSTed to `/v1/traces`.
fn collector() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let kept = bodies.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("an address").port();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            listener.set_nonblocking(true).expect("non-blocking");
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            let app = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(move |body: axum::body::Bytes| {
                    let kept = kept.clone();
                    async move {
                        kept.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(body.to_vec());
                        ""
                    }
                }),
            );
            let _ = axum::serve(listener, app).await;
        })
    });
    (format!("http://127.0.0.1:{port}"), bodies)
}

/// The JSONL as written, with every time in milliseconds (`duration_ms`, `mean_run_ms`,
/// `max_run_ms`) zeroed and the crate's directory named `DIR`.
fn jsonl(path: &Path, dir: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let times = regex::Regex::new(r#""([a-z_]*_ms)":[0-9.eE+-]+"#).expect("a regex");
    times.replace_all(&text, r#""$1":0"#).replace(dir, "DIR")
}

/// The JUnit document with its times and timestamp blanked.
fn junit(path: &Path, dir: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let blank = regex::Regex::new(r#"(time|timestamp)="[^"]*""#).expect("a regex");
    blank.replace_all(&text, r#"$1="""#).replace(dir, "DIR")
}

/// The OTLP bodies, decoded, with ids and times zeroed, encoded again.
#[cfg(feature = "otel")]
fn otlp(bodies: &[Vec<u8>], dir: &str) -> Vec<String> {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message as _;
    bodies
        .iter()
        .map(|body| {
            let mut request =
                ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP body");
            for spans in &mut request.resource_spans {
                for scope in &mut spans.scope_spans {
                    for span in &mut scope.spans {
                        span.trace_id.clear();
                        span.span_id.clear();
                        span.parent_span_id.clear();
                        span.start_time_unix_nano = 0;
                        span.end_time_unix_nano = 0;
                        for event in &mut span.events {
                            event.time_unix_nano = 0;
                        }
                    }
                }
            }
            format!("{request:?}").replace(dir, "DIR")
        })
        .collect()
}

#[test]
fn both_front_ends_write_the_same_jsonl_junit_and_otlp() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let (endpoint, bodies) = collector();
    let temp = tempfile::tempdir().expect("a temporary directory");
    let out = temp.path();
    let crate_dir = out.join("crate");
    std::fs::create_dir_all(&crate_dir).expect("a directory");
    let dir: &'static str = Box::leak(crate_dir.display().to_string().into_boxed_str());

    let run = |front: &str| {
        let exe = std::env::current_exe().expect("this test binary");
        // The child test's name, wherever this module sits in the crate.
        let child = format!(
            "{}::front_end_child",
            module_path!().trim_start_matches("niceeval::")
        );
        let mut command = std::process::Command::new(exe);
        command
            .args(["--exact", child.as_str(), "--test-threads", "1"])
            .env(CHILD, dir)
            .env("NICEEVAL_TEST_OUTPUTS_FRONT", front)
            .env("NICEEVAL_TEST_OUTPUTS_DIR", out)
            .env("NICEEVAL_TEST_OUTPUTS_ENDPOINT", &endpoint)
            .env("NICEEVAL_RESULTS", "0")
            .env_remove("NEXTEST_RUN_ID");
        if front == "libtest" {
            command
                .env("NICEEVAL_JSONL", out.join("libtest.jsonl"))
                .env("NICEEVAL_JUNIT", out.join("libtest.xml"))
                .env("NICEEVAL_OTLP_ENDPOINT", &endpoint);
        }
        let output = command.output().expect("the child runs");
        assert!(
            output.status.success(),
            "the {front} child failed: {}\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        std::mem::take(&mut *bodies.lock().unwrap_or_else(|p| p.into_inner()))
    };
    let libtest_bodies = run("libtest");
    let suite_bodies = run("suite");

    let libtest_jsonl = jsonl(&out.join("libtest.jsonl"), dir);
    assert_eq!(libtest_jsonl.lines().count(), 3, "{libtest_jsonl}");
    assert_eq!(libtest_jsonl, jsonl(&out.join("suite.jsonl"), dir));
    let libtest_junit = junit(&out.join("libtest.xml"), dir);
    assert!(
        libtest_junit.contains("b_fails") && libtest_junit.contains("<skipped"),
        "{libtest_junit}"
    );
    assert_eq!(libtest_junit, junit(&out.join("suite.xml"), dir));
    #[cfg(feature = "otel")]
    {
        assert_eq!(libtest_bodies.len(), 3, "one trace per eval");
        assert_eq!(otlp(&libtest_bodies, dir), otlp(&suite_bodies, dir));
    }
    #[cfg(not(feature = "otel"))]
    let _ = (libtest_bodies, suite_bodies, endpoint);
}
