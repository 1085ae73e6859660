//! The judge prompts and their choice→score maps.
//!
//! `factuality` and `closed_qa` are niceeval's own wording of two judges that autoevals
//! (braintrustdata/autoevals) and promptfoo made common: the same choices with the same
//! meanings, the same scores, and the same answer protocol — a `select_choice` tool call whose
//! reasons come before its choice — so results stay comparable with theirs. `summarizes` and
//! `rubric` are niceeval's own judges: `summarizes(source)` judges faithfulness and
//! completeness against the source itself, not against an expert summary.
//!
//! Each template puts the data it is given between tags that name it, so an answer holding
//! text that looks like an instruction or a heading stays inside its section.

/// Factuality: how the facts of the reply relate to an expert's answer. Choices (A)–(E) mean
/// what autoevals' Factuality choices mean: a consistent subset, a consistent superset, the
/// same details, a disagreement, differences that do not matter for the facts.
pub(crate) const FACTUALITY: &str = "\
Your job is to check the facts of a submitted answer against an expert's answer to the same question.

<question>
{{{input}}}
</question>

<expert>
{{{expected}}}
</expert>

<submission>
{{{output}}}
</submission>

Only the facts count: leave wording, style, grammar and punctuation aside. Work out which facts each answer states, then choose the one option below that describes how the submission's facts relate to the expert's:
(A) The submission states only part of what the expert's answer states, and nothing in it conflicts with the expert's answer.
(B) The submission states everything the expert's answer states and more, and nothing in it conflicts with the expert's answer.
(C) The submission states the same facts as the expert's answer, no more and no fewer.
(D) The submission and the expert's answer conflict on at least one fact.
(E) The two answers differ, but none of the differences changes a fact.";

/// promptfoo's Factuality choice scores (its `factuality` assertion's defaults): every choice
/// but a disagreement passes.
pub(crate) const PROMPTFOO_FACTUALITY_SCORES: &[(&str, f64)] =
    &[("A", 1.0), ("B", 1.0), ("C", 1.0), ("D", 0.0), ("E", 1.0)];

/// autoevals' Factuality choice scores.
pub(crate) const FACTUALITY_SCORES: &[(&str, f64)] =
    &[("A", 0.4), ("B", 0.6), ("C", 1.0), ("D", 0.0), ("E", 1.0)];

/// Closed QA: does the reply to a task meet one criterion? Y for yes, N for no, as in
/// autoevals' ClosedQA.
pub(crate) const CLOSED_QA: &str = "\
Your job is to decide whether a submission for the task below meets one criterion.

<task>
{{{input}}}
</task>

<submission>
{{{output}}}
</submission>

<criterion>
{{{criteria}}}
</criterion>

Judge the submission against this criterion alone. Does the submission meet it?";

/// Closed QA's choice scores (autoevals' own).
pub(crate) const CLOSED_QA_SCORES: &[(&str, f64)] = &[("Y", 1.0), ("N", 0.0)];

/// niceeval's summary check: faithful (nothing unsupported) and complete (the main points).
pub(crate) const SUMMARIZES: &str = "\
You are checking whether a submission is a faithful and complete summary of a source text.

<source>
{{{source}}}
</source>

<submission>
{{{output}}}
</submission>

A faithful summary states nothing that the source does not support: no invented facts, no changed numbers, names or conclusions. A complete summary conveys every main point of the source; minor details may be left out. Judge the submission only against the source, not against what you know. Answer the question by selecting one of the following options:
(A) The submission is faithful to the source and conveys all of its main points.
(B) The submission is faithful to the source but leaves out at least one main point.
(C) The submission states something the source does not support or contradicts it.
(D) The submission is not a summary of the source at all.";

/// Scores of the summary choices.
pub(crate) const SUMMARIZES_SCORES: &[(&str, f64)] =
    &[("A", 1.0), ("B", 0.5), ("C", 0.0), ("D", 0.0)];

/// niceeval's rubric grading: a score in [0, 1] with reasons.
pub(crate) const RUBRIC: &str = "\
You are grading a submitted answer against a rubric.

<task>
{{{input}}}
</task>

<submission>
{{{output}}}
</submission>

<rubric>
{{{rubric}}}
</rubric>

Decide how well the submission satisfies the rubric. Answer by calling `grade`: first write out your reasoning step by step in `reasons`, then set `score` to a number between 0 and 1, where 1 means the rubric is fully satisfied, 0 means it is not satisfied at all, and values in between mean partly. If you cannot call `grade`, answer with only a JSON object: {\"reason\": \"your reasoning\", \"pass\": true or false, \"score\": a number between 0 and 1}.";

/// What every choice judge asks last: reasons first, then one choice; `{{__choices}}` is the
/// list of allowed choices.
pub(crate) const COT_SUFFIX: &str = "Answer by calling `select_choice`. In `reasons`, think the question through step by step before you decide, so that the choice follows from your reasoning instead of coming first; then set `choice` to exactly one of {{__choices}}.";

/// The `select_choice` tool, its reasons before its choice (the order a model writes them in).
pub(crate) const SELECT_CHOICE_NAME: &str = "select_choice";
pub(crate) const SELECT_CHOICE_DESCRIPTION: &str =
    "Give your reasoning, then the option you choose.";
pub(crate) const SELECT_CHOICE_SCHEMA: &str = r#"{"properties":{"reasons":{"description":"Your reasoning, step by step, written before you choose: the choice follows from it.","items":{"type":"string"},"title":"Reasons","type":"array"},"choice":{"description":"The option you choose: exactly one of those offered","title":"Choice","type":"string"}},"required":["reasons","choice"],"title":"Choice","type":"object"}"#;

/// The rubric's `grade` tool.
pub(crate) const GRADE_NAME: &str = "grade";
pub(crate) const GRADE_DESCRIPTION: &str =
    "Call this function to grade the submission against the rubric.";
pub(crate) const GRADE_SCHEMA: &str = r#"{"properties":{"reasons":{"description":"Your reasoning, step by step, written before you score: the score follows from it.","items":{"type":"string"},"title":"Reasons","type":"array"},"score":{"description":"How well the submission satisfies the rubric, from 0 (not at all) to 1 (fully)","title":"Score","type":"number","minimum":0,"maximum":1}},"required":["reasons","score"],"title":"Grade","type":"object"}"#;

/// Fills `{{{name}}}` (and `{{name}}`) placeholders of `template` in one pass, so text that
/// itself contains braces is never substituted again. Unknown names render empty.
pub(crate) fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let (open, close) = if after.starts_with("{{{") {
            ("{{{", "}}}")
        } else {
            ("{{", "}}")
        };
        match after[open.len()..].find(close) {
            Some(end) => {
                let name = after[open.len()..open.len() + end].trim();
                let value = values
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map_or("", |(_, v)| v);
                out.push_str(value);
                rest = &after[open.len() + end + close.len()..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_once_and_leaves_substituted_text_alone() {
        let text = render(
            "[Q]: {{{input}}} [A]: {{{output}}} from {{__choices}}",
            &[
                ("input", "say {{{output}}}"),
                ("output", "ok"),
                ("__choices", "A, B"),
            ],
        );
        assert_eq!(text, "[Q]: say {{{output}}} [A]: ok from A, B");
        assert_eq!(render("no {{ end", &[]), "no {{ end");
    }

    #[test]
    fn tool_schemas_are_json_with_reasons_first() {
        for schema in [SELECT_CHOICE_SCHEMA, GRADE_SCHEMA] {
            let value: serde_json::Value = serde_json::from_str(schema).unwrap();
            assert_eq!(value["type"], "object");
            assert!(schema.find("\"reasons\"").unwrap() < schema.find("\"required\"").unwrap());
        }
        let reasons = SELECT_CHOICE_SCHEMA.find("\"reasons\"").unwrap();
        let choice = SELECT_CHOICE_SCHEMA.find("\"choice\"").unwrap();
        assert!(reasons < choice);
    }
}
