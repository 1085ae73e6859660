use niceeval::prelude::*;

#[eval(run = 3)]
async fn typo(t: &mut Eval) {
    let _ = t;
}

#[eval(retries = 3)]
async fn unknown(t: &mut Eval) {
    let _ = t;
}

#[eval(judge = "openai/gpt-4o-mini")]
async fn prefix(t: &mut Eval) {
    let _ = t;
}

fn main() {}
