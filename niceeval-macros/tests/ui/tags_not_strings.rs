use niceeval::prelude::*;

#[eval(tags = [1, "smoke", smoke])]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
