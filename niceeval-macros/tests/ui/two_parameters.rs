use niceeval::prelude::*;

#[eval]
async fn greets(t: &mut Eval, name: &str) {
    let _ = (t, name);
}

fn main() {}
