//! Attributes on an eval: docs, lint levels, `#[ignore]` (also through `#[cfg_attr]`) and
//! `#[cfg]` work as on any test.

#![deny(unused_variables)]

use niceeval::prelude::*;

/// Documented, and the docs do not get in the way.
#[eval]
#[allow(unused_variables)]
async fn documented_and_allowed(t: &mut Eval) {
    let unused = 1;
}

#[eval(tags = ["slow"])]
#[ignore = "slow"]
async fn ignored(t: &mut Eval) -> niceeval::Result {
    t.skip("never run by default")?;
    Ok(())
}

#[eval]
#[cfg_attr(all(), ignore = "through cfg_attr")]
async fn ignored_through_cfg_attr(_t: &mut Eval) {}

#[eval]
#[cfg(any())]
async fn configured_out(t: &mut Eval) {
    this_does_not_exist(t);
}

#[eval]
#[cfg(all())]
async fn configured_in(_t: &mut Eval) {}

#[eval]
#[expect(unused_variables)]
async fn expected_lint(t: &mut Eval) {
    let unused = 1;
}

fn main() {
    let names: Vec<&str> = niceeval::__workspace::registered().iter().map(|d| d.name).collect();
    assert_eq!(
        names,
        [
            "configured_in",
            "documented_and_allowed",
            "expected_lint",
            "ignored",
            "ignored_through_cfg_attr",
        ]
    );
    let ignored: Vec<&str> = niceeval::__workspace::registered()
        .iter()
        .filter(|d| d.ignored)
        .map(|d| d.name)
        .collect();
    assert_eq!(ignored, ["ignored", "ignored_through_cfg_attr"]);
    for def in niceeval::__workspace::registered() {
        let report = niceeval::__workspace::run_eval(def);
        let expected = if def.name == "ignored" {
            Outcome::Skipped
        } else {
            Outcome::Passed
        };
        assert_eq!(report.outcome, expected, "{}", report.render());
    }
}
