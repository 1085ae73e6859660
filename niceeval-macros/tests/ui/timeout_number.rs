use niceeval::prelude::*;

#[eval(timeout = 30)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
