use niceeval::prelude::*;

#[eval(timeout = "soon")]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
