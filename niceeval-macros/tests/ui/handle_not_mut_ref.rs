use niceeval::prelude::*;

#[eval]
async fn owned(t: Eval) {
    let _ = t;
}

#[eval]
async fn shared(t: &Eval) {
    let _ = t;
}

fn main() {}
