use niceeval::prelude::*;

#[eval(cases = "Cargo.toml")]
async fn capitals(t: &mut Eval) {
    t.check("x", includes("x"));
}

fn main() {}
