//! Evals in nested modules: ids carry the module path, and paths in options resolve from the
//! eval's module.

use niceeval::prelude::*;

mod support {
    use niceeval::prelude::*;

    pub fn bot() -> impl Agent {
        agent_fn(|request: Request| async move {
            request.events.say("Your refund is on its way.");
            Ok(())
        })
    }

    pub mod refunds {
        use niceeval::prelude::*;

        #[eval(agent = super::bot)]
        async fn refund_flow(t: &mut Eval) -> niceeval::Result {
            t.send("refund please").await?;
            t.check(t.reply(), includes("refund"));
            Ok(())
        }

        #[eval(agent = crate::support::bot)]
        pub(crate) async fn absolute_agent_path(t: &mut Eval) -> niceeval::Result {
            t.send("refund please").await?;
            Ok(())
        }
    }
}

#[eval]
async fn top_level(_t: &mut Eval) {}

fn main() {
    let ids: Vec<String> = niceeval::registered().iter().map(|d| d.id()).collect();
    assert_eq!(
        ids,
        [
            "nested_module::support::refunds::absolute_agent_path",
            "nested_module::support::refunds::refund_flow",
            "nested_module::top_level",
        ]
    );
    for def in niceeval::registered() {
        let report = niceeval::run_eval(def);
        assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    }
}
