use niceeval::prelude::*;

#[eval(judge_model = "gpt4")]
async fn greets(t: &mut Eval) {
    let _ = t;
}

fn main() {}
