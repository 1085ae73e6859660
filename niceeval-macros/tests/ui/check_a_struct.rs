use niceeval::prelude::*;

struct Refund {
    order_id: String,
}

#[eval]
async fn checks_a_struct(t: &mut Eval) {
    let refund = Refund { order_id: "123".into() };
    t.check(&refund, includes("123"));
    let _ = refund.order_id;
}

fn main() {}
