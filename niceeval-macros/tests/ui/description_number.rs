use niceeval::prelude::*;

#[eval(description = 1)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
