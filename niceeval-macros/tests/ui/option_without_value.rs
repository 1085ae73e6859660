use niceeval::prelude::*;

#[eval(runs)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
