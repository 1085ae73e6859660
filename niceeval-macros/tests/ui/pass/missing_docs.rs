//! A crate that denies missing docs: generated items never need docs, whether the eval is
//! documented or not.

#![deny(missing_docs)]

use niceeval::prelude::*;

/// A documented public eval.
#[eval]
pub async fn documented(_t: &mut Eval) {}

#[eval]
pub async fn undocumented(_t: &mut Eval) {}

/// Evals inside a public module.
pub mod suite {
    use niceeval::prelude::*;

    #[eval(tags = ["smoke"])]
    pub async fn in_module(_t: &mut Eval) {}
}

fn main() {
    assert_eq!(niceeval::__workspace::registered().len(), 3);
}
