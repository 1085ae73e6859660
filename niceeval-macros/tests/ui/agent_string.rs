use niceeval::prelude::*;

fn bot() -> impl Agent {
    agent_fn(|request: Request| async move {
        request.events.say("hi");
        Ok(())
    })
}

#[eval(agent = "bot")]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {
    let _ = bot;
}
