use niceeval::prelude::*;

#[eval(workspace = "fixtures/no_such_template")]
async fn fixes_the_bug(t: &mut Eval) {
    t.diff_is_empty();
}

fn main() {}
