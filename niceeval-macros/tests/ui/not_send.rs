use std::rc::Rc;

use niceeval::prelude::*;

#[eval]
async fn holds_rc(t: &mut Eval) -> niceeval::Result {
    let shared = Rc::new(String::from("hello"));
    t.send("hi").await?;
    t.check(t.reply(), includes(shared.as_str()));
    Ok(())
}

fn main() {}
