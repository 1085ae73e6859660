//! Every scoped assertion as a method on [`Eval`] (over the whole run) and on [`Turn`] (over
//! that turn's events): the handle's side of the checks in [`crate::checks::scope`] and
//! [`crate::checks::run_budget`]. The checks themselves know nothing of the handle; this file only
//! builds them and registers them with the run's record.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::base::event::Event;
use crate::checks::expect::{Pattern, equals, matches};
use crate::checks::run_budget::RunBudget;
use crate::checks::scope::{
    CalledSubagent, EventCheck, EventOrder, EventsSatisfy, LoadedSkill, MessageIncludes, NoEvent,
    NoFailedActions, OutputEquals, OutputMatches, Parked, Scoped, Succeeded, ToolCheck, ToolOrder,
    UsedNoTools,
};
use crate::run::turn::Turn;

use super::Eval;

/// Defines each listed assertion on both [`Eval`] (the whole run) and [`Turn`] (that turn).
macro_rules! scoped_assertions {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $check:ty $body:block
    )*) => {
        impl Eval {
            $(
                $(#[$attr])*
                pub fn $name(&self, $($arg: $ty),*) -> Scoped<$check> {
                    self.scoped($body)
                }
            )*
        }

        impl Turn {
            $(
                #[doc = concat!(
                    "[`Eval::", stringify!($name), "`](Eval::", stringify!($name),
                    ") limited to this turn's events (from its user message to its last event)."
                )]
                pub fn $name(&self, $($arg: $ty),*) -> Scoped<$check> {
                    self.scoped($body)
                }
            )*
        }
    };
}

scoped_assertions! {
    /// The run completed: something was sent, no `error` event was recorded (an agent error, a
    /// crash mid-turn), and the last exchange is not left waiting on an unanswered
    /// `input.requested`. The failure names the error events or the open request.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn completes(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("Book a table for two").await?;
    ///     t.succeeded();
    ///     turn.succeeded(); // this turn alone
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn succeeded() -> Succeeded {
        Succeeded
    }

    /// The run stopped cleanly, waiting for a human: the last exchange contains an
    /// `input.requested` event and no `error` event, and nothing answered it (answer with
    /// [`Eval::respond`](crate::Eval::respond)).
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn asks_before_deleting(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("Delete my account").await?;
    ///     t.parked(); // the run ends waiting for a confirmation
    ///     turn.parked();
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn parked() -> Parked {
        Parked
    }

    /// Some assistant message contains `pattern`: a substring, or a [`Regex`](crate::Regex)
    /// matched anywhere. User and system messages are not searched (the user's own words would
    /// always match). The failure lists the assistant messages that were seen.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn signs_off(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Write to the landlord").await?;
    ///     t.message_includes("regards");
    ///     t.message_includes(Regex::new(r"(?i)kind(est)? regards")?);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn message_includes(pattern: impl Into<Pattern>) -> MessageIncludes {
        MessageIncludes::new(pattern)
    }
}

scoped_assertions! {
    /// The agent called the tool `name`: at least one `action.called` event with that name
    /// matches the options, or exactly `n` do with `.count(n)`.
    ///
    /// Options, applied in this order: `.status(s)` keeps only calls whose paired
    /// `action.result` (same `call_id`) ended with `s` — a call without a result has no status and
    /// never passes a status filter; `.input(m)` keeps calls whose input matches `m` in the
    /// [`InputMatch`](crate::checks::scope::InputMatch) language (a JSON deep-partial match, a `Regex`,
    /// a closure, or a mix); `.count(n)` asks for exactly `n` of the remaining calls. A failure
    /// lists the calls to `name` that were seen, with their input, status and why each did not
    /// match (or which tools were called instead).
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// fn shell_bot() -> impl Agent {
    ///     agent_fn(|request: Request| async move {
    ///         request.events.tool_call("bash", json!({ "command": "pwd" }), json!("/home/me"));
    ///         request.events.say("You are in /home/me.");
    ///         Ok(())
    ///     })
    /// }
    ///
    /// #[eval(agent = shell_bot)]
    /// async fn where_am_i(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Where am I?").await?;
    ///     t.called_tool("bash")
    ///         .input(InputMatch::object([("command", Regex::new("^pwd")?)]))
    ///         .status(ActionStatus::Completed)
    ///         .count(1);
    ///     t.called_tool("bash").input(|input: &Value| input["command"].as_str().is_some_and(|c| c.len() < 10));
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn called_tool(name: impl Into<String>) -> ToolCheck {
        ToolCheck::called(name)
    }

    /// The agent did not call the tool `name` in a way matching the options: the exact negation
    /// of [`Eval::called_tool`](crate::Eval::called_tool) with the same options. Without
    /// `.count(n)` it passes when no call matches; with `.count(n)` it passes unless exactly
    /// `n` calls match. A failure lists the offending calls.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn no_installs(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Set up the project").await?;
    ///     t.not_called_tool("shell").input(Regex::new(r"npm (i|install)\b")?);
    ///     t.not_called_tool("deploy");
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn not_called_tool(name: impl Into<String>) -> ToolCheck {
        ToolCheck::not_called(name)
    }
}

scoped_assertions! {
    /// The tools were called in this relative order: a call to the first, later a call to the
    /// second, and so on; other calls may come before, between and after. The failure says
    /// which step was not found after the previous one and shows the sequence of calls. An
    /// empty list is an execution error.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn reads_before_writing(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Fix the typo in README.md").await?;
    ///     t.tool_order(["read_file", "write_file"]);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn tool_order(names: impl IntoIterator<Item = impl Into<String>>) -> ToolOrder {
        ToolOrder::new(names)
    }

    /// No tool was called at all (no `action.called` event). The failure lists the calls.
    fn used_no_tools() -> UsedNoTools {
        UsedNoTools
    }

    /// The agent loaded the skill `name`: a `skill.loaded` event with that name, or a call to
    /// the `load_skill` tool naming it (input `{"skill": name}`, `{"name": name}` or the bare
    /// string) that did not end `failed` or `rejected`. The failure lists the skills that were
    /// loaded, or the `load_skill` calls that did not succeed.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn remembers(t: &mut Eval) -> niceeval::Result {
    ///     t.send("What did I tell you yesterday?").await?;
    ///     t.loaded_skill("memory-v2");
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn loaded_skill(name: impl Into<String>) -> LoadedSkill {
        LoadedSkill::new(name)
    }

    /// The agent delegated to the subagent `name` (a `subagent.called` event); with
    /// `.remote_url(pat)`, to one whose `remote_url` contains the text or matches the
    /// [`Regex`](crate::Regex). The failure lists the subagent calls that were seen.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn delegates_research(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Summarize the latest papers on tides").await?;
    ///     t.called_subagent("researcher").remote_url(Regex::new(r"^https://api\.example\.com/")?);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn called_subagent(name: impl Into<String>) -> CalledSubagent {
        CalledSubagent::new(name)
    }

    /// No tool, skill or subagent call ended with status `failed` (an `action.result` or a
    /// `subagent.completed` event). `rejected` calls (refused by a permission check or a human)
    /// do not count as failures; assert them with `.status(ActionStatus::Rejected)`. The
    /// failure lists each failed call with its input and output.
    fn no_failed_actions() -> NoFailedActions {
        NoFailedActions
    }
}

scoped_assertions! {
    /// At least one event of `kind` (a wire name such as `"input.requested"`, see
    /// [`Event::KINDS`]) appeared; with `.count(n)`, exactly `n` did. An unknown kind is an
    /// execution error listing the valid kinds.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn asks_once(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Delete my account").await?;
    ///     t.event("input.requested").count(1);
    ///     t.not_event("error");
    ///     t.event_order(["thinking", "action.called", "message"]);
    ///     t.events_satisfy("at most one thinking event", |events: &[Event]| {
    ///         events.iter().filter(|e| e.kind() == "thinking").count() <= 1
    ///     });
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    fn event(kind: impl Into<String>) -> EventCheck {
        EventCheck::new(kind)
    }

    /// No event of `kind` appeared. The failure lists the offending events.
    fn not_event(kind: impl Into<String>) -> NoEvent {
        NoEvent::new(kind)
    }

    /// Events of these kinds appeared in this relative order (other events may come before,
    /// between and after). An empty list or an unknown kind is an execution error.
    fn event_order(kinds: impl IntoIterator<Item = impl Into<String>>) -> EventOrder {
        EventOrder::new(kinds)
    }

    /// `predicate(events)` returns true over the events in scope. `label` names the property in
    /// reports. A panicking predicate is an execution error on this assertion.
    fn events_satisfy(
        label: impl Into<String>,
        predicate: impl Fn(&[Event]) -> bool + Send + Sync + 'static,
    ) -> EventsSatisfy {
        EventsSatisfy::new(label, predicate)
    }
}

impl Eval {
    /// Budget on the tokens of the whole run (input + output, cache reads counted once as
    /// input), summed over its `usage` events. A gate needing score 1; over budget scores
    /// `limit / actual`.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// # fn my_agent() -> impl Agent { agent_fn(|_r: Request| async { Ok(()) }) }
    ///
    /// #[eval(agent = my_agent)]
    /// async fn stays_cheap(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Summarize my last order").await?;
    ///     t.max_tokens(50_000);                 // gate: any overrun fails
    ///     t.max_tokens(20_000).at_least(0.5);   // soft: marked beyond 40,000 tokens
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn max_tokens(&self, limit: u64) -> Scoped<RunBudget> {
        self.scoped(RunBudget::tokens(limit))
    }

    /// Budget on the cost of the whole run in USD: agent-reported `cost_usd` where given, else
    /// estimated from the price table (built-in list prices, overridden by `[prices]` in
    /// `niceeval.toml`) using each `usage` event's `model`. A model without a price is an
    /// execution error naming it and the `[prices."provider/model"]` lines to add.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// # fn my_agent() -> impl Agent { agent_fn(|_r: Request| async { Ok(()) }) }
    ///
    /// #[eval(agent = my_agent)]
    /// async fn refund_budget(t: &mut Eval) -> niceeval::Result {
    ///     t.send("I want a refund for order #123").await?;
    ///     t.max_cost(0.50).at_least(0.7);       // soft: only fails under strict
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn max_cost(&self, usd: f64) -> Scoped<RunBudget> {
        self.scoped(RunBudget::cost(usd))
    }

    /// Budget on the number of tool calls (`action.called` events) of the whole run; subagent
    /// calls and skill loads are not tool calls. A gate needing score 1; over budget scores
    /// `limit / actual`.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// # fn my_agent() -> impl Agent { agent_fn(|_r: Request| async { Ok(()) }) }
    ///
    /// #[eval(agent = my_agent)]
    /// async fn few_lookups(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Where is order #123?").await?;
    ///     t.max_tool_calls(3);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn max_tool_calls(&self, limit: usize) -> Scoped<RunBudget> {
        self.scoped(RunBudget::tool_calls(limit))
    }
}

/// The budgets limited to one turn's events.
impl crate::run::turn::Turn {
    /// [`Eval::max_tokens`] over this turn's `usage` events only.
    pub fn max_tokens(&self, limit: u64) -> Scoped<RunBudget> {
        self.scoped(RunBudget::tokens(limit))
    }

    /// [`Eval::max_cost`] over this turn's `usage` events only.
    pub fn max_cost(&self, usd: f64) -> Scoped<RunBudget> {
        self.scoped(RunBudget::cost(usd))
    }

    /// [`Eval::max_tool_calls`] over this turn's tool calls only.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// # fn my_agent() -> impl Agent { agent_fn(|_r: Request| async { Ok(()) }) }
    ///
    /// #[eval(agent = my_agent)]
    /// async fn second_question_needs_no_lookup(t: &mut Eval) -> niceeval::Result {
    ///     t.send("Where is order #123?").await?;
    ///     let follow_up = t.send("Thanks! And when does it arrive?").await?;
    ///     follow_up.max_tool_calls(0);
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn max_tool_calls(&self, limit: usize) -> Scoped<RunBudget> {
        self.scoped(RunBudget::tool_calls(limit))
    }
}

impl Turn {
    /// The turn's structured output ([`Turn::data`]) deep-equals `expected` (compared as JSON:
    /// keys in any order, numbers by value). The failure names the first differing path, or says
    /// that the turn has no structured output.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[eval]
    /// async fn classifies(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("I want my money back").await?;
    ///     turn.output_equals(json!({ "intent": "refund" }));
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn output_equals(&self, expected: impl Serialize) -> Scoped<OutputEquals> {
        self.scoped(OutputEquals {
            expected: equals(expected),
            data: self.data.clone(),
            message: self.message.clone(),
        })
    }

    /// The turn's structured output deserializes (serde) into `T`. The failure shows serde's
    /// error, or says that the turn has no structured output.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Profile { id: String }
    ///
    /// #[eval]
    /// async fn returns_a_profile(t: &mut Eval) -> niceeval::Result {
    ///     let turn = t.send("Return the user profile as JSON").await?;
    ///     turn.output_matches::<Profile>();
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn output_matches<T: DeserializeOwned + 'static>(&self) -> Scoped<OutputMatches<T>> {
        self.scoped(OutputMatches {
            matcher: matches::<T>(),
            data: self.data.clone(),
            message: self.message.clone(),
        })
    }
}
