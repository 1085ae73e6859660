use niceeval::prelude::*;

#[eval]
async fn returns_number(t: &mut Eval) -> i32 {
    let _ = t;
    42
}

#[eval]
async fn returns_value(t: &mut Eval) -> niceeval::Result<u32> {
    let _ = t;
    Ok(1)
}

fn main() {}
