use niceeval::prelude::*;

#[eval(runs = 5, min_pass_rate = 2.0)]
async fn above_one(t: &mut Eval) {
    let _ = t;
}

#[eval(runs = 5, min_pass_rate = 80)]
async fn percent(t: &mut Eval) {
    let _ = t;
}

fn main() {}
