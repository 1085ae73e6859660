//! Every option together reaches the runtime's `EvalDefinition`, and the eval runs.

use std::time::Duration;

use niceeval::prelude::*;

fn greeter() -> impl Agent {
    agent_fn(|request: Request| async move {
        request.events.say("Hello there!");
        Ok(())
    })
}

#[eval(
    agent = greeter,
    runs = 3,
    min_pass_rate = 0.5,
    timeout = "1m30s",
    tags = ["smoke", "greeting"],
    description = "greets back",
    judge_model = "openai/gpt-4o-mini",
    strict,
    snapshot = false,
    crate = ::niceeval,
)]
async fn greets(t: &mut Eval) -> niceeval::Result {
    t.send("Hi").await?;
    t.check(t.reply(), includes("Hello"));
    Ok(())
}

fn main() {
    let all = niceeval::__workspace::registered();
    assert_eq!(all.len(), 1);
    let def = all[0];
    assert_eq!(def.name, "greets");
    // trybuild names the crate `trybuildNNN`.
    assert!(def.id().ends_with("::greets"), "{}", def.id());
    assert_eq!(def.module_path.split("::").count(), 1);
    assert!(def.file.ends_with("all_options.rs"), "{}", def.file);
    assert_eq!(def.line, 26);
    assert!(def.agent.is_some());
    assert_eq!(def.runs, Some(3));
    assert_eq!(def.min_pass_rate, Some(0.5));
    assert_eq!(def.timeout, Some(Duration::from_secs(90)));
    assert_eq!(def.tags, ["smoke", "greeting"]);
    assert_eq!(def.description, Some("greets back"));
    assert_eq!(def.judge_model, Some("openai/gpt-4o-mini"));
    assert!(def.strict);
    assert!(!def.snapshot);
    assert!(!def.ignored);

    let report = niceeval::__workspace::run_eval(def);
    assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    assert_eq!(report.runs.len(), 3);
}
