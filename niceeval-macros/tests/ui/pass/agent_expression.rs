//! `agent = expression`: an agent built with arguments, evaluated afresh for every run.

use niceeval::prelude::*;

fn persona(name: &'static str) -> impl Agent {
    agent_fn(move |request: Request| async move {
        request.events.say(format!("{name} here"));
        Ok(())
    })
}

#[eval(agent = persona("cheater"))]
async fn with_an_argument(t: &mut Eval) {
    t.send("hi").await.ok();
    t.check(t.reply(), equals("cheater here"));
}

#[eval(agent = persona("honest"), runs = 2)]
async fn another_argument(t: &mut Eval) {
    t.send("hi").await.ok();
    t.check(t.reply(), equals("honest here"));
}

fn main() {
    let all = niceeval::__workspace::registered();
    assert_eq!(all.len(), 2);
    for def in all {
        let report = niceeval::__workspace::run_eval(def);
        assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    }
}
