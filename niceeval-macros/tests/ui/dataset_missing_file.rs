use niceeval::prelude::*;

#[eval(cases = "evals/no_such_file.jsonl")]
async fn capitals(t: &mut Eval, case: String) {
    t.check(case.as_str(), includes("?"));
}

fn main() {}
