//! `crate = path` when niceeval is known by another name.

extern crate niceeval as renamed;

mod by_use {
    use ne::prelude::*;
    use niceeval as ne;

    #[ne::eval(crate = ne, runs = 2)]
    async fn through_use(t: &mut Eval) {
        t.check("x", includes("x"));
    }
}

mod by_extern_crate {
    use renamed::prelude::*;

    #[renamed::eval(crate = renamed)]
    async fn through_extern_crate(t: &mut Eval) -> renamed::Result {
        t.require("x", includes("x"))?;
        Ok(())
    }

    #[renamed::eval(crate = ::renamed)]
    async fn through_absolute_path(_t: &mut Eval) {}
}

fn main() {
    let all = renamed::__workspace::registered();
    assert_eq!(all.len(), 3);
    for def in all {
        let report = renamed::__workspace::run_eval(def);
        assert_eq!(
            report.outcome,
            renamed::Outcome::Passed,
            "{}",
            report.render()
        );
    }
}
