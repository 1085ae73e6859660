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
    // The id is the module path plus the name; trybuild names the crate `trybuildNNN`.
    let ids: Vec<String> = niceeval::__workspace::registered()
        .iter()
        .map(|d| {
            d.id()
                .split_once("::")
                .map(|(_, id)| id.to_string())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        ids,
        [
            "support::refunds::absolute_agent_path",
            "support::refunds::refund_flow",
            "top_level",
        ]
    );
    for def in niceeval::__workspace::registered() {
        let report = niceeval::__workspace::run_eval(def);
        assert_eq!(report.outcome, Outcome::Passed, "{}", report.render());
    }
}
