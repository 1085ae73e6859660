use niceeval::prelude::*;

#[eval]
async fn greets(t: &mut String) {
    t.push_str("hi");
}

fn main() {}
