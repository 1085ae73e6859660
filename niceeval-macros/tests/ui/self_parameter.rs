use niceeval::prelude::*;

struct Suite;

impl Suite {
    #[eval]
    async fn greets(&self, t: &mut Eval) {
        let _ = t;
    }
}

fn main() {
    let _ = Suite;
}
