use niceeval::prelude::*;

struct Suite {
    greeting: &'static str,
}

impl Suite {
    #[eval]
    async fn greets(&self, t: &mut Eval) {
        t.check(t.reply(), includes(self.greeting));
    }
}

fn main() {
    let _ = Suite { greeting: "hi" };
}
