//! Synthetic eval reports for the viewer's scale tests and benchmark: the cases of a
//! support-ticket dataset, each with a conversation, a gate assertion, a judged soft
//! assertion and a token budget, one in ten failed, one in fifty skipped. As JSON, so this
//! library stays free of niceeval (the test and the benchmark deserialize them).

use serde_json::{Value, json};

/// The dataset eval the cases belong to.
pub const DATASET: &str = "evals::support_tickets";

/// Case `i` of the dataset, as an `EvalReport` in JSON.
pub fn case(i: usize) -> Value {
    let topic = ["refund", "billing", "shipping"][i % 3];
    let (outcome, gate) = match i % 50 {
        7 => ("skipped", true),
        _ if i % 10 == 3 => ("failed", false),
        _ => ("passed", true),
    };
    let judged = ((i * 37) % 101) as f64 / 100.0;
    let input = 180 + (i * 13) % 400;
    let output = 60 + (i * 7) % 200;
    let cost = (input as f64 * 3.0 + output as f64 * 15.0) / 1e6;
    let duration = 200.0 + ((i * 7919) % 5000) as f64 / 3.0;
    let reply = if gate {
        format!(
            "Thanks for reaching out about order #{i}. I have checked your {topic} request: the {topic} was approved and you will see it within 3 to 5 business days. Anything else I can help with?"
        )
    } else {
        format!(
            "I am sorry, I cannot find order #{i}. Could you send me the email address you used when you placed it, so I can look into the {topic} question?"
        )
    };
    let assertions = json!([
        {"name": format!("includes(\"{topic}\")"), "kind": "value", "severity": "gate",
         "score": if gate { 1.0 } else { 0.0 }, "passed": gate,
         "reason": if gate { format!("found \"{topic}\" at 60") } else { format!("\"{topic}\" not found in the reply (140 chars)") }},
        {"name": "judge(\"resolves the ticket politely\")", "kind": "judge", "severity": "soft",
         "score": judged, "threshold": 0.5, "passed": judged >= 0.5,
         "reason": format!("The reply addresses the {topic} question and is polite; score {judged:.2}.")},
        {"name": "max_tokens(2000)", "kind": "efficiency", "severity": "gate",
         "score": 1.0, "passed": true, "reason": format!("{} tokens of 2000", input + output)}
    ]);
    let usage = json!({"input_tokens": input, "output_tokens": output, "cache_read_tokens": 0, "cost_usd": cost});
    json!({
        "id": format!("{DATASET}::case_{i:06}"),
        "file": "tests/evals.rs", "line": 12, "outcome": outcome,
        "tags": ["support", topic],
        "skip_reason": if outcome == "skipped" { Some("no API key for the judge") } else { None },
        "assertions": if outcome == "skipped" { json!([]) } else { assertions },
        "score": if outcome == "skipped" { None } else { Some(if gate { (1.0 + judged) / 2.0 } else { judged / 2.0 }) },
        "duration_ms": duration,
        "usage": usage, "total_usage": usage, "cost_usd": cost,
        "events": if outcome == "skipped" { json!([]) } else { json!([
            {"type": "message", "role": "user", "text": format!("Hello, this is customer {i}. I ordered item #{i} last week and I have a question about the {topic} of it. Can you help?")},
            {"type": "message", "role": "assistant", "text": reply},
            {"type": "usage", "input_tokens": input, "output_tokens": output, "model": "gpt-4o-mini"}
        ]) },
        "runs": [{"outcome": outcome, "duration_ms": duration, "usage": usage, "cost_usd": cost}],
        "reliability": {"n": 1, "c": if outcome == "passed" { 1 } else { 0 }, "pass_rate": if outcome == "passed" { 1.0 } else { 0.0 }, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
        "min_pass_rate": 1.0,
        "dataset": DATASET,
    })
}
