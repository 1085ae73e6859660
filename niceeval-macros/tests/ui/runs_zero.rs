use niceeval::prelude::*;

#[eval(runs = 0)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
