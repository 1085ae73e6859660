//! An eval returns `()`, `niceeval::Result`, or `Result<(), E>` with `E: Into<niceeval::Error>`;
//! an `Err` is an execution error that fails the eval.

use niceeval::prelude::*;

#[eval]
async fn returns_unit(t: &mut Eval) {
    t.check("hello", includes("ell"));
}

#[eval]
async fn returns_result(t: &mut Eval) -> niceeval::Result {
    t.require("hello", includes("ell"))?;
    Ok(())
}

#[eval]
async fn returns_std_result(_t: &mut Eval) -> Result<(), std::io::Error> {
    Ok(())
}

#[eval]
async fn returns_error(_t: &mut Eval) -> niceeval::Result {
    Err(niceeval::Error::msg("fixture missing"))
}

fn outcome(name: &str) -> niceeval::EvalReport {
    let def = niceeval::__workspace::registered()
        .into_iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("{name} is not registered"));
    niceeval::__workspace::run_eval(def)
}

fn main() {
    for name in ["returns_unit", "returns_result", "returns_std_result"] {
        let report = outcome(name);
        assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    }
    let report = outcome("returns_error");
    assert_eq!(report.outcome, Outcome::Failed);
    assert!(
        report
            .error_message()
            .is_some_and(|e| e.contains("fixture missing")),
        "{:?}",
        report.error
    );
}
