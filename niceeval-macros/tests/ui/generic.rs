use niceeval::prelude::*;

#[eval]
async fn greets<A: Agent, const N: usize>(t: &mut Eval) {
    let _ = t;
}

fn main() {}
