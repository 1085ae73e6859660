use niceeval::prelude::*;

#[eval(strict = 3)]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
