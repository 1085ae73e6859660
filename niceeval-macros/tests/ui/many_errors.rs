use niceeval::prelude::*;

#[eval(runs = 0, timeout = "soon", colour = "blue", tags = "x", strict = 3)]
fn greets(t: Eval, extra: u32) {
    let _ = (t, extra);
}

fn main() {}
