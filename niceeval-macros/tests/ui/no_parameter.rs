use niceeval::prelude::*;

#[eval]
async fn greets() {}

fn main() {}
