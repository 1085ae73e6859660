use niceeval::prelude::*;

#[eval(runs = 3, strict, runs = 5)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
