use niceeval::prelude::*;

#[eval]
struct Suite;

fn main() {
    let _ = Suite;
}
