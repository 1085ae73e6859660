//! Cost of evaluating scoped assertions: 20 different checks over one run of 10k, 100k and 1M
//! events. The target is under 50 ms for all 20 over 100k events, growing linearly with the
//! number of events.
//!
//! The run repeats a 20-event exchange: a user message, thinking, three parallel tool calls
//! whose results arrive out of order (one bash call in 13 fails), a `load_skill` call, a
//! `skill.loaded` event every tenth exchange, a remote subagent, a file write, usage events and
//! assistant messages. The checks mix passing and failing ones, so failure reasons (call
//! listings) are built too, and include the costly forms: status filters (results paired by
//! call id), a regex over every serialized bash input, predicates, and ordering. The
//! `scoped_check_100k` group times each check alone.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use niceeval::__workspace::config::Config;
use niceeval::__workspace::scope::{
    CalledSubagent, EventCheck, EventOrder, EventsSatisfy, LoadedSkill, MessageIncludes, NoEvent,
    NoFailedActions, Parked, Succeeded, ToolCheck, ToolOrder, UsedNoTools,
};
use niceeval::scope::{InputMatch, RunView, ScopedCheck};
use niceeval::{ActionStatus, Event, Regex, Role, Value, json};

fn called(id: String, name: &str, input: Value) -> Event {
    Event::ActionCalled {
        call_id: id,
        name: name.to_string(),
        input,
    }
}

fn result(id: String, status: ActionStatus, output: Value) -> Event {
    Event::ActionResult {
        call_id: id,
        output,
        status,
    }
}

fn usage() -> Event {
    Event::Usage {
        input_tokens: 900,
        output_tokens: 120,
        cache_read_tokens: 0,
        cost_usd: None,
        model: Some("openai/gpt-4o".to_string()),
    }
}

/// `n` events of repeated 20-event exchanges.
fn transcript(n: usize) -> Vec<Event> {
    let mut events = Vec::with_capacity(n + 20);
    let mut i = 0usize;
    while events.len() < n {
        let bash_status = if i.is_multiple_of(13) {
            ActionStatus::Failed
        } else {
            ActionStatus::Completed
        };
        events.extend([
            Event::Message {
                role: Role::User,
                text: format!("Please handle step {i}").into(),
            },
            Event::Thinking {
                text: format!("step {i}: read, build, search").into(),
            },
            called(format!("r{i}"), "read_file", json!({ "path": format!("src/m{}.rs", i % 50) })),
            called(
                format!("b{i}"),
                "bash",
                json!({ "command": format!("cargo build -p crate{}", i % 7), "cwd": "/repo" }),
            ),
            called(format!("s{i}"), "search", json!({ "query": format!("term {i}"), "limit": 10 })),
            result(format!("s{i}"), ActionStatus::Completed, json!(["hit"])),
            result(format!("r{i}"), ActionStatus::Completed, json!("fn main() {}")),
            result(format!("b{i}"), bash_status, json!("Finished")),
            if i.is_multiple_of(10) {
                Event::SkillLoaded {
                    name: "memory-v2".to_string(),
                }
            } else {
                usage()
            },
            called(format!("l{i}"), "load_skill", json!({ "skill": "web" })),
            result(format!("l{i}"), ActionStatus::Completed, Value::Null),
            Event::SubagentCalled {
                call_id: format!("a{i}"),
                name: "researcher".to_string(),
                remote_url: Some("https://api.example.com/agents/researcher".to_string()),
            },
            Event::SubagentCompleted {
                call_id: format!("a{i}"),
                status: ActionStatus::Completed,
            },
            called(
                format!("w{i}"),
                "write_file",
                json!({ "path": format!("src/m{}.rs", i % 50), "content": format!("fn f{i}() {{}}") }),
            ),
            result(format!("w{i}"), ActionStatus::Completed, Value::Null),
            usage(),
            Event::Thinking {
                text: "done".into(),
            },
            Event::assistant(format!("Done with step {i}.")),
            usage(),
            Event::assistant("Anything else?"),
        ]);
        i += 1;
    }
    events.truncate(n);
    events
}

/// The 20 checks, sized to the run where a count is exact.
fn checks(events: &[Event]) -> Vec<Box<dyn ScopedCheck>> {
    let reads = events
        .iter()
        .filter(|e| matches!(e, Event::ActionCalled { name, .. } if name == "read_file"))
        .count();
    let usages = events.iter().filter(|e| e.kind() == "usage").count();
    let re = |p: &str| Regex::new(p).expect("valid bench regex");
    vec![
        Box::new(Succeeded),
        Box::new(Parked),
        Box::new(MessageIncludes::new("step 42.")),
        Box::new(MessageIncludes::new(re(r"never said \d+"))),
        Box::new(
            ToolCheck::called("bash").input(InputMatch::object([("command", re("^cargo build"))])),
        ),
        Box::new(ToolCheck::called("read_file").count(reads)),
        Box::new(ToolCheck::called("bash").status(ActionStatus::Failed)),
        Box::new(ToolCheck::not_called("shell")),
        Box::new(ToolCheck::not_called("bash").input(re("rm -rf"))),
        Box::new(ToolCheck::called("search").input(json!({ "limit": 10 }))),
        Box::new(
            ToolCheck::called("write_file")
                .input(InputMatch::predicate("writes a function", |v| {
                    v["content"].as_str().is_some_and(|c| c.starts_with("fn "))
                })),
        ),
        Box::new(ToolOrder::new(["read_file", "bash", "write_file"])),
        Box::new(UsedNoTools),
        Box::new(LoadedSkill::new("web")),
        Box::new(CalledSubagent::new("researcher").remote_url(re(r"^https://api\.example\.com/"))),
        Box::new(NoFailedActions),
        Box::new(EventCheck::new("usage").count(usages)),
        Box::new(NoEvent::new("error")),
        Box::new(EventOrder::new([
            "thinking",
            "action.called",
            "subagent.called",
            "message",
        ])),
        Box::new(EventsSatisfy::new("every call has a result", |events| {
            let calls = events
                .iter()
                .filter(|e| e.kind() == "action.called")
                .count();
            let results = events
                .iter()
                .filter(|e| e.kind() == "action.result")
                .count();
            calls == results
        })),
    ]
}

fn evaluate(checks: &[Box<dyn ScopedCheck>], view: &RunView<'_>) -> f64 {
    checks.iter().map(|c| c.evaluate(view).score).sum()
}

fn bench(c: &mut Criterion) {
    let config = Config::default();
    let mut group = c.benchmark_group("scoped_20_checks");
    group.sample_size(10);
    for n in [10_000usize, 100_000, 1_000_000] {
        let events = transcript(n);
        let checks = checks(&events);
        assert_eq!(checks.len(), 20);
        let view = RunView {
            events: &events,
            config: &config,
        };
        // Sanity: the passing checks pass and the failing ones fail, so the bench measures the
        // real paths (evidence listings and failure reasons).
        let scores: Vec<f64> = checks.iter().map(|c| c.evaluate(&view).score).collect();
        let failing: Vec<usize> = (0..20).filter(|&i| scores[i] == 0.0).collect();
        assert_eq!(failing, vec![1, 3, 12, 15], "scores: {scores:?}");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &view, |b, view| {
            b.iter(|| black_box(evaluate(&checks, black_box(view))))
        });
    }
    group.finish();
}

/// Each check alone over 100k events, to see where the time goes.
fn bench_each(c: &mut Criterion) {
    let config = Config::default();
    let events = transcript(100_000);
    let view = RunView {
        events: &events,
        config: &config,
    };
    let mut group = c.benchmark_group("scoped_check_100k");
    group
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(1));
    for (i, check) in checks(&events).iter().enumerate() {
        let id = BenchmarkId::new(format!("{i:02}"), check.describe());
        group.bench_with_input(id, &view, |b, view| {
            b.iter(|| black_box(check.evaluate(black_box(view))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_each);
criterion_main!(benches);
