//! promptfoo's output file (`promptfoo eval -o results.json`, its `OutputFile` type in
//! promptfoo 0.123.1): `evalId`, `results` (an `EvaluateSummaryV3`: `version`, `timestamp`,
//! `prompts`, `results`, `stats`), `config`, `shareableUrl`, made from niceeval's reports of
//! a suite file's cases; and the flat table `-o FILE.csv` writes.

use std::collections::BTreeMap;

use niceeval::EvalReport;
use niceeval::{Event, Outcome, Role, Usage};
use serde_json::{Value, json};

/// promptfoo's `ResultFailureReason`: none, an assertion, an error.
fn failure_reason(report: &EvalReport) -> u8 {
    if report.error.is_some() {
        2
    } else if report.outcome == Outcome::Failed {
        1
    } else {
        0
    }
}

fn token_usage(usage: &Usage) -> Value {
    json!({
        "total": usage.input_tokens + usage.output_tokens,
        "prompt": usage.input_tokens,
        "completion": usage.output_tokens,
        "cached": usage.cache_read_tokens,
        "numRequests": 1,
    })
}

/// The case's (test, prompt, provider) cell: 1-based positions and labels, from the report's
/// matrix (a Rust eval's report has none: test 1, its id as description).
fn cell(report: &EvalReport) -> (usize, String, usize, String, usize, String) {
    match &report.matrix {
        Some(m) => (
            m.test,
            m.description.clone(),
            m.prompt,
            m.prompt_label.clone(),
            m.provider,
            m.provider_label.clone(),
        ),
        None => (1, report.id.clone(), 1, String::new(), 1, String::new()),
    }
}

/// The last assistant message: the case's output.
pub fn reply(report: &EvalReport) -> String {
    Event::last_reply(&report.events)
        .map(|t| t.as_str().to_string())
        .unwrap_or_default()
}

/// The first user message: the prompt as it was sent.
fn prompt_sent(report: &EvalReport) -> String {
    report
        .events
        .iter()
        .find_map(|e| match e {
            Event::Message {
                role: Role::User,
                text,
            } => Some(text.as_str().to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The failed assertions' reasons, one per line (promptfoo's `gradingResult.reason`).
pub fn reason(report: &EvalReport) -> String {
    if let Some(error) = report.error_message() {
        return error.to_string();
    }
    let failed: Vec<&str> = report
        .assertions
        .iter()
        .filter(|a| !a.passed)
        .map(|a| a.reason.as_str())
        .collect();
    if failed.is_empty() {
        "All assertions passed".to_string()
    } else {
        failed.join("\n")
    }
}

fn grading_result(report: &EvalReport) -> Value {
    let components: Vec<Value> = report
        .assertions
        .iter()
        .map(|a| {
            json!({
                "pass": a.passed,
                "score": a.score,
                "reason": a.reason,
                "assertion": {"type": a.name},
            })
        })
        .collect();
    json!({
        "pass": report.outcome == Outcome::Passed,
        "score": report.score.unwrap_or(if report.outcome == Outcome::Passed { 1.0 } else { 0.0 }),
        "reason": reason(report),
        "namedScores": report.metrics,
        "componentResults": components,
    })
}

/// One of `results.results`: promptfoo's `EvaluateResult`.
fn result(report: &EvalReport) -> Value {
    let (test, description, prompt, prompt_label, provider, provider_label) = cell(report);
    let output = reply(report);
    let score = report
        .score
        .unwrap_or(if report.outcome == Outcome::Passed {
            1.0
        } else {
            0.0
        });
    json!({
        "id": report.id,
        "description": description,
        "promptIdx": prompt - 1,
        "testIdx": test - 1,
        "testCase": {"description": description},
        "promptId": format!("prompt-{prompt}"),
        "provider": {"id": provider_label, "label": provider_label},
        "prompt": {"raw": prompt_sent(report), "label": prompt_label},
        "vars": {},
        "response": {
            "output": output,
            "tokenUsage": token_usage(&report.usage),
            "cost": report.cost_usd,
        },
        "error": report.error_message(),
        "failureReason": failure_reason(report),
        "success": report.outcome == Outcome::Passed,
        "score": score,
        "latencyMs": report.mean_run_ms.round() as u64,
        "gradingResult": grading_result(report),
        "namedScores": report.metrics,
        "cost": report.cost_usd,
        "tokenUsage": token_usage(&report.usage),
        "metadata": {"niceevalId": report.id, "outcome": report.outcome.as_str()},
        "_provider": provider,
    })
}

#[derive(Default)]
struct PromptMetrics {
    raw: String,
    score: f64,
    pass: u64,
    fail: u64,
    error: u64,
    assert_pass: u64,
    assert_fail: u64,
    latency: f64,
    usage: Usage,
    cost: f64,
}

/// promptfoo's `OutputFile` of `reports` (a suite's cases, in order); `config` is the suite
/// file read as JSON (or null), `timestamp` the run's start.
pub fn output_file(
    reports: &[EvalReport],
    config: Value,
    timestamp: &str,
    duration_ms: f64,
) -> Value {
    let mut results: Vec<Value> = reports.iter().map(result).collect();
    // One entry per prompt × provider column, in promptfoo's order: each provider's prompts,
    // provider after provider.
    let mut columns: BTreeMap<(usize, usize), (String, String, PromptMetrics)> = BTreeMap::new();
    let mut stats = (0u64, 0u64, 0u64, Usage::default());
    for report in reports {
        let (_, _, prompt, prompt_label, provider, provider_label) = cell(report);
        let entry = columns
            .entry((provider, prompt))
            .or_insert_with(|| (prompt_label, provider_label, PromptMetrics::default()));
        let m = &mut entry.2;
        if m.raw.is_empty() {
            m.raw = prompt_sent(report);
        }
        m.score += report.score.unwrap_or(0.0);
        match failure_reason(report) {
            0 => {
                m.pass += 1;
                stats.0 += 1;
            }
            1 => {
                m.fail += 1;
                stats.1 += 1;
            }
            _ => {
                m.error += 1;
                stats.2 += 1;
            }
        }
        m.assert_pass += report.assertions.iter().filter(|a| a.passed).count() as u64;
        m.assert_fail += report.assertions.iter().filter(|a| !a.passed).count() as u64;
        m.latency += report.mean_run_ms;
        add(&mut m.usage, &report.usage);
        add(&mut stats.3, &report.usage);
        m.cost += report.cost_usd.unwrap_or(0.0);
    }
    let positions: Vec<(usize, usize)> = columns.keys().copied().collect();
    for r in &mut results {
        // promptIdx is the column's position in `prompts`.
        if let Some(obj) = r.as_object_mut() {
            let prompt = obj.get("promptIdx").and_then(Value::as_u64).unwrap_or(0) as usize + 1;
            let provider = obj
                .remove("_provider")
                .and_then(|v| v.as_u64())
                .unwrap_or(1) as usize;
            if let Some(i) = positions.iter().position(|p| *p == (provider, prompt)) {
                obj.insert("promptIdx".into(), json!(i));
                obj.insert("promptId".into(), json!(format!("prompt-{}", i + 1)));
            }
        }
    }
    let prompts: Vec<Value> = columns
        .into_values()
        .map(|(label, provider, m)| {
            json!({
                "raw": m.raw,
                "label": label,
                "provider": provider,
                "metrics": {
                    "score": m.score,
                    "testPassCount": m.pass,
                    "testFailCount": m.fail,
                    "testErrorCount": m.error,
                    "assertPassCount": m.assert_pass,
                    "assertFailCount": m.assert_fail,
                    "totalLatencyMs": m.latency.round() as u64,
                    "tokenUsage": token_usage(&m.usage),
                    "cost": m.cost,
                },
            })
        })
        .collect();
    let eval_id = reports
        .iter()
        .find_map(|r| r.run.as_ref().map(|run| run.id.clone()));
    json!({
        "evalId": eval_id,
        "results": {
            "version": 3,
            "timestamp": timestamp,
            "prompts": prompts,
            "results": results,
            "stats": {
                "successes": stats.0,
                "failures": stats.1,
                "errors": stats.2,
                "tokenUsage": token_usage(&stats.3),
                "durationMs": duration_ms.round() as u64,
            },
        },
        "config": config,
        "shareableUrl": null,
        "metadata": {
            "promptfooVersion": "0.123.1",
            "exportedAt": timestamp,
            "writer": format!("niceeval {}", env!("CARGO_PKG_VERSION")),
        },
    })
}

fn add(total: &mut Usage, usage: &Usage) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cache_read_tokens += usage.cache_read_tokens;
}

/// The columns of `-o FILE.csv`: one row per case.
pub const CSV_COLUMNS: &[&str] = &[
    "test",
    "description",
    "prompt",
    "provider",
    "outcome",
    "success",
    "score",
    "output",
    "reason",
    "error",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "id",
];

/// `reports` as CSV (RFC 4180: a field with a comma, quote or line break is quoted).
pub fn csv(reports: &[EvalReport]) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for report in reports {
        let (test, description, _, prompt_label, _, provider_label) = cell(report);
        let outcome = match failure_reason(report) {
            2 => "error",
            _ => report.outcome.as_str(),
        };
        let row = [
            test.to_string(),
            description,
            prompt_label,
            provider_label,
            outcome.to_string(),
            (report.outcome == Outcome::Passed).to_string(),
            report.score.map(|s| s.to_string()).unwrap_or_default(),
            reply(report),
            reason(report),
            report.error_message().unwrap_or_default().to_string(),
            format!("{}", report.mean_run_ms.round()),
            report.usage.input_tokens.to_string(),
            report.usage.output_tokens.to_string(),
            report.cost_usd.map(|c| c.to_string()).unwrap_or_default(),
            report.id.clone(),
        ];
        let fields: Vec<String> = row.iter().map(|f| csv_field(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}
