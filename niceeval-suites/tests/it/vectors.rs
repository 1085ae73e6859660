//! The assertion library against its peers' own unit-test vectors: every vector of
//! `niceeval-suites/tests/vectors/promptfoo.json` and `runsight.json` (an output, an assertion item as a
//! suite file writes it, the verdict the peer's test asserts) runs through the path a suite
//! file's item takes — the value rendered with the test's vars, `AssertSpec::from_item`,
//! `spec::evaluate` with the test's vars, cost and latency — and the verdicts are compared.
//!
//! The agreement per source is printed (`promptfoo: N/M agree (x%)`); the test fails under 95%
//! per source, or on a disagreement that DIALECTS.md does not list under its vector id
//! (`` - `promptfoo bleu/different`: reason ``), or on a listed id that now agrees (the list
//! stays true).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use niceeval::spec::{self, AssertSpec, SpecContext, SpecOutcome};
use serde_json::{Map, Value};

use crate::support::have;

/// The least share of a source's vectors that must agree: promptfoo's (its specification, every
/// type of its schema) 99%, Runsight's 95%.
fn required(source: &str) -> f64 {
    if source == "promptfoo" { 0.99 } else { 0.95 }
}

/// What the peer's test asserts.
#[derive(Debug, Default)]
struct Expect {
    pass: Option<bool>,
    score: Option<f64>,
    tolerance: f64,
    score_above: Option<f64>,
    score_below: Option<f64>,
    score_at_least: Option<f64>,
    score_at_most: Option<f64>,
    named_scores: BTreeMap<String, f64>,
    /// The peer throws (a load-time or run-time error agrees).
    error: bool,
    /// The peer accepts either a failed result or an error.
    error_ok: bool,
}

impl Expect {
    fn read(value: &Value) -> Expect {
        let num = |k: &str| value.get(k).and_then(Value::as_f64);
        Expect {
            pass: value.get("pass").and_then(Value::as_bool),
            score: num("score"),
            tolerance: num("tolerance").unwrap_or(1e-6),
            score_above: num("score_above"),
            score_below: num("score_below"),
            score_at_least: num("score_at_least"),
            score_at_most: num("score_at_most"),
            named_scores: value
                .get("named_scores")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                        .collect()
                })
                .unwrap_or_default(),
            error: value.get("error").and_then(Value::as_bool) == Some(true),
            error_ok: value.get("error_ok").and_then(Value::as_bool) == Some(true),
        }
    }
}

/// Runs one vector's items as a suite file's: templates in `value` rendered with the vars
/// (not in code, as promptfoo), then the spec path. `Err` is a load-time error.
fn run(items: &[Value], output: &str, vector: &Value) -> Result<SpecOutcome, String> {
    let context = &vector["context"];
    let vars: Map<String, Value> = context
        .get("vars")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut specs = Vec::with_capacity(items.len());
    for item in items {
        let mut item = item.clone();
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let code = matches!(
            kind.trim_start_matches("not-"),
            "javascript" | "python" | "js" | "py"
        );
        if !code && let Some(value) = item.get("value") {
            let rendered =
                niceeval_suites::render_value(value, &vars).map_err(|e| e.to_string())?;
            item["value"] = rendered;
        }
        specs.push(AssertSpec::from_item(item).map_err(|e| e.to_string())?);
    }
    let mut ctx = SpecContext::new();
    ctx.vars = vars.into_iter().collect();
    // What the peer's test gave as the provider's response, its config and its trace.
    let response = &vector["provider_response"];
    ctx.response.finish_reason = response["finishReason"].as_str().map(str::to_string);
    ctx.response.logprobs = response["logProbs"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_f64).collect());
    ctx.response.guardrails = response.get("guardrails").cloned();
    ctx.response.metadata = response.get("metadata").cloned();
    ctx.response.output = response.get("output").cloned();
    // The provider's config as promptfoo hands it to the validators: its vars rendered.
    ctx.response.provider_config = match vector.get("provider_config") {
        Some(config) => Some(
            niceeval_suites::render_value(config, &ctx.vars.clone().into_iter().collect())
                .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    ctx.response.provider_id = vector["provider_id"].as_str().map(str::to_string);
    if let Some(spans) = vector["trace"]["spans"].as_array() {
        ctx.trace_spans = Some(spans.iter().map(trace_span).collect());
    }
    ctx.cost_usd = context.get("cost_usd").and_then(Value::as_f64);
    ctx.latency_ms = context.get("latency_ms").and_then(Value::as_f64);
    ctx.prompt = Some(
        context
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or("Some prompt")
            .to_string(),
    );
    spec::evaluate(&specs, output, &ctx).map_err(|e| e.to_string())
}

/// A span as promptfoo's trace store gives it (`name`, `startTime`/`endTime` in ms,
/// `statusCode`, `statusMessage`, `attributes`).
fn trace_span(span: &Value) -> niceeval::spec::TraceSpan {
    let mut t = niceeval::spec::TraceSpan::new(span["name"].as_str().unwrap_or(""));
    t.start_ms = span["startTime"].as_f64();
    t.end_ms = span["endTime"].as_f64();
    t.status_code = span["statusCode"].as_i64();
    t.status_message = span["statusMessage"].as_str().map(str::to_string);
    t.attributes = span["attributes"].as_object().cloned().unwrap_or_default();
    t
}

/// Runs a vector of a service-backed type (`webhook`, `classifier`, `moderation`) against
/// the loopback fake, which answers with the reply the peer's test mocked.
fn run_service(items: &[Value], output: &str, vector: &Value) -> Result<SpecOutcome, String> {
    let Some(reply) = vector.get("service_reply") else {
        return run(items, output, vector);
    };
    let (url, _one) = crate::graded_vectors::service(reply);
    let items: Vec<Value> = items
        .iter()
        .map(|item| {
            let mut item = item.clone();
            let kind = item["type"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("not-")
                .to_string();
            match kind.as_str() {
                "webhook" => item["value"] = Value::String(format!("{url}/webhook")),
                "classifier" => {
                    item["provider"] = serde_json::json!({
                        "id": "huggingface:text-classification:test/model",
                        "config": {"apiEndpoint": format!("{url}/classify"), "apiKey": "k"},
                    })
                }
                "moderation" => {
                    item["provider"] = serde_json::json!({
                        "id": "openai:moderation:omni-moderation-latest",
                        "config": {"apiBaseUrl": url, "apiKey": "k"},
                    })
                }
                _ => {}
            }
            item
        })
        .collect();
    let got = run(&items, output, vector);
    crate::graded_vectors::end_service();
    got
}

/// `Ok` when niceeval's verdict agrees with the vector's, else what differs.
fn compare(expect: &Expect, got: Result<SpecOutcome, String>) -> Result<(), String> {
    let outcome = match got {
        Err(e) if expect.error || expect.error_ok => {
            let _ = e;
            return Ok(());
        }
        Err(e) => return Err(format!("load-time error: {e}")),
        Ok(outcome) => outcome,
    };
    let errored = outcome.results.iter().any(|r| r.error.is_some());
    if expect.error {
        return if errored {
            Ok(())
        } else {
            Err(format!(
                "the peer throws; niceeval {} with score {}",
                if outcome.pass { "passes" } else { "fails" },
                outcome.score
            ))
        };
    }
    let mut problems = Vec::new();
    let reasons = || {
        outcome
            .results
            .iter()
            .map(|r| r.reason.clone())
            .collect::<Vec<_>>()
            .join(" | ")
    };
    if let Some(pass) = expect.pass
        && outcome.pass != pass
    {
        problems.push(format!(
            "expected {}, niceeval {} ({})",
            if pass { "pass" } else { "fail" },
            if outcome.pass { "passes" } else { "fails" },
            reasons()
        ));
    }
    let s = outcome.score;
    if let Some(want) = expect.score
        && (s - want).abs() > expect.tolerance
    {
        problems.push(format!("expected score {want}, niceeval {s}"));
    }
    let bounds = [
        (
            expect.score_above,
            "above",
            s > expect.score_above.unwrap_or(0.0),
        ),
        (
            expect.score_below,
            "below",
            s < expect.score_below.unwrap_or(0.0),
        ),
        (
            expect.score_at_least,
            "at least",
            s >= expect.score_at_least.unwrap_or(0.0),
        ),
        (
            expect.score_at_most,
            "at most",
            s <= expect.score_at_most.unwrap_or(0.0),
        ),
    ];
    for (bound, word, holds) in bounds {
        if let Some(b) = bound
            && !holds
        {
            problems.push(format!("expected a score {word} {b}, niceeval {s}"));
        }
    }
    for (metric, want) in &expect.named_scores {
        match outcome.named_scores.get(metric) {
            Some(got) if (got - want).abs() <= expect.tolerance => {}
            got => problems.push(format!("expected {metric} = {want}, niceeval {got:?}")),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The disagreements DIALECTS.md lists: `` - `SOURCE ID`: reason ``, keyed `SOURCE ID`.
fn listed(dialects: &str) -> BTreeMap<String, String> {
    dialects
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("- `")?;
            let (key, after) = rest.split_once('`')?;
            let reason = after.trim_start().strip_prefix(':')?.trim();
            let source = key.split_once(' ')?.0;
            matches!(source, "promptfoo" | "runsight")
                .then(|| (key.to_string(), reason.to_string()))
        })
        .collect()
}

/// The assertion types whose vectors this runner cannot run yet: they need a grader's (or
/// a service's) replies played back, or a trace. Each must be listed in DIALECTS.md as
/// `` - `promptfoo type:<type>`: reason ``; their vectors are counted, not judged.
const NOT_RUN_HERE: &[&str] = &[
    "select-best",
    "max-score",
    "trajectory:goal-success",
    "trajectory:tool-args-match",
    "trajectory:tool-used",
    "trajectory:tool-sequence",
    "trajectory:step-count",
    "pi",
    "ruby",
];

/// The model-graded types: their vectors run end to end against a fake grader
/// (`graded_vectors`).
const GRADED: &[&str] = &[
    "llm-rubric",
    "g-eval",
    "factuality",
    "model-graded-factuality",
    "model-graded-closedqa",
    "context-recall",
    "context-relevance",
    "context-faithfulness",
    "answer-relevance",
    "conversation-relevance",
    "search-rubric",
    "agent-rubric",
    "similar",
    "similar:cosine",
    "similar:dot",
    "similar:euclidean",
];

/// The files of a source: promptfoo's vectors come in two (`promptfoo.json`, the first
/// selection; `promptfoo-more.json`, every other type of its schema).
fn files(source: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut files = vec![dir.join(format!("{source}.json"))];
    let more = dir.join(format!("{source}-more.json"));
    if more.is_file() {
        files.push(more);
    }
    files
}

/// The assertion type of a vector's (first) item, without `not-`.
fn vector_type(v: &Value) -> String {
    let item = match &v["assert"] {
        Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
        item => item.clone(),
    };
    let kind = item["type"].as_str().unwrap_or("");
    kind.strip_prefix("not-").unwrap_or(kind).to_string()
}

/// Every assertion type of promptfoo's schema (`tests/schema/promptfoo-0.123.1.json`) has at
/// least one of promptfoo's own vectors, run here or counted as not run.
#[test]
fn every_type_of_promptfoos_schema_has_vectors() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema/promptfoo-0.123.1.json"),
        )
        .expect("the schema data"),
    )
    .expect("JSON");
    let mut covered = BTreeSet::new();
    for path in files("promptfoo") {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("a vectors file"))
                .expect("JSON");
        for v in doc["vectors"].as_array().expect("vectors") {
            let items = match &v["assert"] {
                Value::Array(items) => items.clone(),
                item => vec![item.clone()],
            };
            for item in items {
                if let Some(kind) = item["type"].as_str() {
                    covered.insert(kind.trim_start_matches("not-").to_string());
                }
            }
        }
    }
    let missing: Vec<&str> = schema["assertion_types"]
        .as_array()
        .expect("types")
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| !covered.contains(*t))
        .collect();
    assert!(
        missing.is_empty(),
        "types of promptfoo's schema without a vector: {missing:?}"
    );
}

/// What one source's vectors say: each judged vector `(id, Ok | Err(difference))`, and the
/// count of vectors not run here by type.
struct Judged {
    verdicts: Vec<(String, Result<(), String>)>,
    not_run: BTreeMap<String, usize>,
}

/// Every vector of one source.
fn judge(source: &str) -> Judged {
    let mut seen = BTreeSet::new();
    let mut judged = Judged {
        verdicts: Vec::new(),
        not_run: BTreeMap::new(),
    };
    for path in files(source) {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let vectors = doc["vectors"].as_array().expect("a `vectors` list");
        for v in vectors {
            let id = v["id"]
                .as_str()
                .expect("every vector has an id")
                .to_string();
            assert!(
                seen.insert(id.clone()),
                "{source}: vector id `{id}` repeats"
            );
            let kind = vector_type(v);
            if NOT_RUN_HERE.contains(&kind.as_str()) {
                *judged.not_run.entry(kind).or_default() += 1;
                continue;
            }
            let items = match &v["assert"] {
                Value::Array(items) => items.clone(),
                item => vec![item.clone()],
            };
            let output = match &v["output"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let expect = Expect::read(&v["expect"]);
            let got = if GRADED.contains(&kind.as_str()) {
                crate::graded_vectors::run(v)
            } else if matches!(kind.as_str(), "webhook" | "classifier" | "moderation") {
                run_service(&items, &output, v)
            } else {
                run(&items, &output, v)
            };
            let verdict = compare(&expect, got);
            judged.verdicts.push((id, verdict));
        }
    }
    judged
}

#[test]
fn peers_unit_test_vectors_agree() {
    if !have("node") {
        return;
    }
    let dialects_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("DIALECTS.md");
    let dialects = std::fs::read_to_string(&dialects_path).unwrap_or_default();
    let listed = listed(&dialects);
    let mut failures = Vec::new();
    for source in ["promptfoo", "runsight"] {
        let Judged { verdicts, not_run } = judge(source);
        let total = verdicts.len();
        let agree = verdicts.iter().filter(|(_, v)| v.is_ok()).count();
        let share = agree as f64 / total as f64;
        let skipped: usize = not_run.values().sum();
        let figure = format!(
            "{source} unit-test vectors: {agree}/{total} agree ({:.1}%){}",
            share * 100.0,
            if skipped > 0 {
                format!(
                    "; {skipped} of types not run here ({})",
                    not_run.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            } else {
                String::new()
            }
        );
        for kind in not_run.keys() {
            let key = format!("{source} type:{kind}");
            if listed.get(&key).is_none_or(|r| r.is_empty()) {
                failures.push(format!(
                    "{key}: its vectors are not run here; list it in DIALECTS.md as `- `{key}`: reason`"
                ));
            }
        }
        println!("{figure}");
        // The figure also goes straight to stderr, past the harness's capture: CI's log shows it.
        let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{figure}\n"));
        for (id, verdict) in &verdicts {
            let key = format!("{source} {id}");
            match (verdict, listed.get(&key)) {
                (Err(why), Some(reason)) if !reason.is_empty() => {
                    println!("  listed  {key}: {why}");
                }
                (Err(why), _) => failures.push(format!(
                    "{key}: {why} — fix niceeval, or list it in DIALECTS.md as `- `{key}`: reason`"
                )),
                (Ok(()), Some(_)) => failures.push(format!(
                    "{key} agrees now; remove it from DIALECTS.md's list"
                )),
                (Ok(()), None) => {}
            }
        }
        if share < required(source) {
            failures.push(format!(
                "{source}: {:.1}% agree, under the required {:.0}%",
                share * 100.0,
                required(source) * 100.0
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_dialect_list_is_read_by_key() {
    let text =
        "intro\n- `promptfoo bleu/x`: NLTK's BLEU\n- `other y`: no\n- `runsight a/b` no colon\n";
    let listed = listed(text);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed["promptfoo bleu/x"], "NLTK's BLEU");
}

#[test]
fn a_load_error_agrees_only_with_a_throw() {
    let throws = Expect {
        error: true,
        ..Expect::default()
    };
    assert!(compare(&throws, Err("bad".into())).is_ok());
    let fails = Expect {
        pass: Some(false),
        ..Expect::default()
    };
    assert!(compare(&fails, Err("bad".into())).is_err());
    let either = Expect {
        pass: Some(false),
        error_ok: true,
        ..Expect::default()
    };
    assert!(compare(&either, Err("bad".into())).is_ok());
}
