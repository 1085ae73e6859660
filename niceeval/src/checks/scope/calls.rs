//! Reading tool calls out of an event slice for the scoped checks: the calls with their
//! position, pairing each call with its `action.result` status in one pass, and the compact
//! renderings failure reasons use to show what the agent actually did.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::base::event::{ActionStatus, Event};
use crate::base::excerpt;

/// How many calls or events a failure reason lists before summarizing the rest.
pub(crate) const LISTED: usize = 10;

/// Width of an input shown in a reason.
const INPUT_WIDTH: usize = 100;

/// One `action.called` event of the scope.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    /// Position in the scope's events.
    pub at: usize,
    pub call_id: &'a str,
    pub name: &'a str,
    pub input: &'a Value,
}

/// Every `action.called` event for which `keep(name)` holds, in order.
pub(crate) fn calls_where<'a>(events: &'a [Event], keep: impl Fn(&str) -> bool) -> Vec<Call<'a>> {
    events
        .iter()
        .enumerate()
        .filter_map(|(at, e)| match e {
            Event::ActionCalled {
                call_id,
                name,
                input,
            } if keep(name) => Some(Call {
                at,
                call_id,
                name,
                input,
            }),
            _ => None,
        })
        .collect()
}

/// The status of each call (same order as `calls`, which must be in event order): the status of
/// the first `action.result` after the call with its `call_id`. `None` when the call has no
/// result in the scope. One pass over the events, stopping once every call is paired; only the
/// calls still waiting for their result are held, so a reused call id pairs with the latest
/// call before it.
pub(crate) fn statuses(events: &[Event], calls: &[Call<'_>]) -> Vec<Option<ActionStatus>> {
    let mut out = vec![None; calls.len()];
    let Some(last) = calls.last().map(|c| c.at) else {
        return out;
    };
    let mut open = OpenCalls::default();
    let mut next = 0;
    for (at, event) in events.iter().enumerate() {
        if next < calls.len() && calls[next].at == at {
            open.insert(calls[next].call_id, next);
            next += 1;
        }
        if let Event::ActionResult {
            call_id, status, ..
        } = event
            && let Some(i) = open.remove(call_id)
        {
            out[i] = Some(*status);
        }
        if at >= last && open.is_empty() {
            break;
        }
    }
    out
}

/// Calls waiting for their result, by call id. Agents keep few calls in flight, so a short list
/// searched linearly beats hashing every result's id; past [`OpenCalls::LINEAR`] entries (calls
/// that never get a result) it moves to a hash map so the pass stays linear.
#[derive(Default)]
pub(crate) struct OpenCalls<'a> {
    few: Vec<(&'a str, usize)>,
    many: Option<HashMap<&'a str, usize>>,
}

impl<'a> OpenCalls<'a> {
    const LINEAR: usize = 32;

    pub(crate) fn insert(&mut self, call_id: &'a str, value: usize) {
        if let Some(map) = &mut self.many {
            map.insert(call_id, value);
            return;
        }
        if let Some(slot) = self.few.iter_mut().find(|(id, _)| *id == call_id) {
            slot.1 = value;
        } else if self.few.len() < Self::LINEAR {
            self.few.push((call_id, value));
        } else {
            let mut map: HashMap<&'a str, usize> = self.few.drain(..).collect();
            map.insert(call_id, value);
            self.many = Some(map);
        }
    }

    pub(crate) fn remove(&mut self, call_id: &str) -> Option<usize> {
        if let Some(map) = &mut self.many {
            return map.remove(call_id);
        }
        let i = self.few.iter().position(|(id, _)| *id == call_id)?;
        Some(self.few.swap_remove(i).1)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.few.is_empty() && self.many.as_ref().is_none_or(HashMap::is_empty)
    }
}

/// `name {"compact":"input"}`, the input elided in the middle when long.
pub(crate) fn render_call(name: &str, input: &Value) -> String {
    match input {
        Value::Null => name.to_string(),
        input => format!("{name} {}", excerpt::elide(&input.to_string(), INPUT_WIDTH)),
    }
}

/// The wire name of a status, or `no result`.
pub(crate) fn status_text(status: Option<ActionStatus>) -> &'static str {
    status.map_or("no result", ActionStatus::as_str)
}

/// Lists the first [`LISTED`] calls one per line, `  #3 bash {"command":"ls"} → completed`,
/// followed by `: note` when `note(i, status)` says something about `calls[i]`, then a count of
/// the rest. Statuses come from `known` (one per call) when the caller has them, else they are
/// paired for the listed calls only.
pub(crate) fn list_calls(
    events: &[Event],
    calls: &[Call<'_>],
    known: Option<&[Option<ActionStatus>]>,
    note: impl Fn(usize, Option<ActionStatus>) -> Option<String>,
) -> String {
    let shown = &calls[..calls.len().min(LISTED)];
    let statuses = match known {
        Some(known) => known[..shown.len()].to_vec(),
        None => statuses(events, shown),
    };
    let mut out = String::new();
    for (i, (call, status)) in shown.iter().zip(statuses).enumerate() {
        let _ = write!(
            out,
            "\n  #{} {} → {}",
            call.at,
            render_call(call.name, call.input),
            status_text(status)
        );
        if let Some(note) = note(i, status) {
            let _ = write!(out, ": {note}");
        }
    }
    if calls.len() > LISTED {
        let _ = write!(out, "\n  … and {} more", calls.len() - LISTED);
    }
    out
}

/// The names of the tools called in the scope with their counts, in order of first call:
/// `read_file ×2, bash`; `None` when no tool was called.
pub(crate) fn tool_histogram(events: &[Event]) -> Option<String> {
    histogram(events.iter().filter_map(|e| match e {
        Event::ActionCalled { name, .. } => Some(name.as_str()),
        _ => None,
    }))
}

/// Counts items in order of first appearance: `a ×2, b`; `None` when there are none.
pub(crate) fn histogram<'a>(items: impl Iterator<Item = &'a str>) -> Option<String> {
    // Few distinct names are the rule: search them linearly, hash only past a handful.
    const LINEAR: usize = 16;
    let mut order: Vec<(&str, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for item in items {
        let found = if order.len() <= LINEAR {
            order.iter().position(|(name, _)| *name == item)
        } else {
            index.get(item).copied()
        };
        match found {
            Some(i) => order[i].1 += 1,
            None => {
                order.push((item, 1));
                if order.len() > LINEAR {
                    if index.is_empty() {
                        index.extend(order.iter().enumerate().map(|(i, (n, _))| (*n, i)));
                    } else {
                        index.insert(item, order.len() - 1);
                    }
                }
            }
        }
    }
    if order.is_empty() {
        return None;
    }
    let shown: Vec<String> = order
        .iter()
        .take(3 * LISTED)
        .map(|(name, n)| {
            if *n == 1 {
                (*name).to_string()
            } else {
                format!("{name} ×{n}")
            }
        })
        .collect();
    let mut text = shown.join(", ");
    if order.len() > shown.len() {
        let _ = write!(text, ", … {} more", order.len() - shown.len());
    }
    Some(text)
}

/// A sequence of names, consecutive repeats folded: `read_file ×3 → bash → read_file`, long
/// sequences elided in the middle.
pub(crate) fn sequence<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let mut runs: Vec<(&str, usize)> = Vec::new();
    for item in items {
        match runs.last_mut() {
            Some((last, n)) if *last == item => *n += 1,
            _ => runs.push((item, 1)),
        }
    }
    let render = |(name, n): &(&str, usize)| {
        if *n == 1 {
            (*name).to_string()
        } else {
            format!("{name} ×{n}")
        }
    };
    const ENDS: usize = 8;
    if runs.len() <= 2 * ENDS {
        return runs.iter().map(render).collect::<Vec<_>>().join(" → ");
    }
    let head: Vec<String> = runs[..ENDS].iter().map(render).collect();
    let tail: Vec<String> = runs[runs.len() - ENDS..].iter().map(render).collect();
    format!(
        "{} → … {} more … → {}",
        head.join(" → "),
        runs.len() - 2 * ENDS,
        tail.join(" → ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn called(id: &str, name: &str) -> Event {
        Event::ActionCalled {
            call_id: id.into(),
            name: name.into(),
            input: json!({ "id": id }),
        }
    }

    fn result(id: &str, status: ActionStatus) -> Event {
        Event::ActionResult {
            call_id: id.into(),
            output: Value::Null,
            status,
        }
    }

    #[test]
    fn statuses_pair_interleaved_parallel_calls_and_reused_ids() {
        let events = vec![
            called("a", "read"),
            called("b", "bash"),
            called("c", "read"),
            result("c", ActionStatus::Failed),
            result("a", ActionStatus::Completed),
            // b never gets a result; "a" is reused later
            called("a", "read"),
            result("a", ActionStatus::Rejected),
        ];
        let calls = calls_where(&events, |_| true);
        assert_eq!(
            statuses(&events, &calls),
            vec![
                Some(ActionStatus::Completed),
                None,
                Some(ActionStatus::Failed),
                Some(ActionStatus::Rejected)
            ]
        );
        let reads = calls_where(&events, |n| n == "read");
        assert_eq!(reads.len(), 3);
        assert_eq!(statuses(&events, &reads)[1], Some(ActionStatus::Failed));
        let early = vec![result("x", ActionStatus::Failed), called("x", "t")];
        assert_eq!(
            statuses(&early, &calls_where(&early, |_| true)),
            vec![None],
            "a result before its call never pairs with it"
        );
        // more calls in flight than the linear list holds
        let mut wide: Vec<Event> = (0..100).map(|i| called(&i.to_string(), "t")).collect();
        wide.extend(
            (0..100)
                .rev()
                .map(|i| result(&i.to_string(), ActionStatus::Failed)),
        );
        let calls = calls_where(&wide, |_| true);
        assert!(
            statuses(&wide, &calls)
                .iter()
                .all(|s| *s == Some(ActionStatus::Failed))
        );
    }

    #[test]
    fn listings_are_bounded_and_readable() {
        let events: Vec<Event> = (0..25).map(|i| called(&i.to_string(), "t")).collect();
        let calls = calls_where(&events, |_| true);
        let listed = list_calls(&events, &calls, None, |_, _| None);
        assert_eq!(listed.lines().count(), 1 + LISTED + 1, "{listed}");
        assert!(
            listed.contains(r#"#0 t {"id":"0"} → no result"#),
            "{listed}"
        );
        assert!(listed.ends_with("… and 15 more"), "{listed}");
        assert_eq!(
            histogram(["a", "b", "a"].into_iter()).as_deref(),
            Some("a ×2, b")
        );
        assert_eq!(histogram(std::iter::empty()), None);
        let many: Vec<String> = (0..40)
            .flat_map(|i| [format!("t{i}"), format!("t{i}")])
            .collect();
        let shown = histogram(many.iter().map(String::as_str)).unwrap();
        assert!(shown.starts_with("t0 ×2, t1 ×2,"), "{shown}");
        assert!(
            shown.contains("t20 ×2") && shown.ends_with(", … 10 more"),
            "{shown}"
        );
        assert_eq!(sequence(["a", "a", "b", "a"].into_iter()), "a ×2 → b → a");
        let long: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        let shown = sequence(long.iter().map(String::as_str));
        assert!(shown.contains("… 84 more …"), "{shown}");
        assert_eq!(render_call("x", &Value::Null), "x");
    }
}
