use niceeval::prelude::*;

#[eval]
fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
