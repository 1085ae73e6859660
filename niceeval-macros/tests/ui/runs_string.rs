use niceeval::prelude::*;

#[eval(runs = "3")]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
