use niceeval::prelude::*;

#[eval(tags = "x")]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
