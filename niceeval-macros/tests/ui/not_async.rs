use niceeval::prelude::*;

#[eval]
fn greets(t: &mut Eval) -> niceeval::Result {
    // Only the missing `async` is reported, not this `.await` outside an async fn.
    t.send("hi").await?;
    Ok(())
}

fn main() {}
