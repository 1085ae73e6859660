use niceeval::prelude::*;

fn bot() -> String {
    "not an agent".to_string()
}

#[eval(agent = bot)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
