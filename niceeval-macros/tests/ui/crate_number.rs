use niceeval::prelude::*;

#[eval(crate = 1)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
