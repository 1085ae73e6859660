use niceeval::prelude::*;

#[eval]
#[test]
async fn with_test(t: &mut Eval) {
    let _ = t;
}

#[eval]
#[tokio::test]
async fn with_tokio_test(t: &mut Eval) {
    let _ = t;
}

#[eval]
#[eval]
async fn twice(t: &mut Eval) {
    let _ = t;
}

fn main() {}
