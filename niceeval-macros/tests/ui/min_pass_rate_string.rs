use niceeval::prelude::*;

#[eval(runs = 5, min_pass_rate = "x")]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
