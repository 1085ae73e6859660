//! The judge prompts and their choice→score maps.
//!
//! `factuality` and `closed_qa` are the autoevals (braintrustdata/autoevals) templates
//! `factuality.yaml` and `closed_q_a.yaml`, with autoevals' chain-of-thought suffix and its
//! `select_choice` tool schema (reasons first, then the choice). `summarizes` and `rubric` are
//! niceeval's own: autoevals' Summary template compares against an expert summary, while
//! `summarizes(source)` judges faithfulness and completeness against the source itself.

/// autoevals `factuality.yaml`.
pub(crate) const FACTUALITY: &str = "\
You are comparing a submitted answer to an expert answer on a given question. Here is the data:
[BEGIN DATA]
************
[Question]: {{{input}}}
************
[Expert]: {{{expected}}}
************
[Submission]: {{{output}}}
************
[END DATA]

Compare the factual content of the submitted answer with the expert answer. Ignore any differences in style, grammar, or punctuation.
The submitted answer may either be a subset or superset of the expert answer, or it may conflict with it. Determine which case applies. Answer the question by selecting one of the following options:
(A) The submitted answer is a subset of the expert answer and is fully consistent with it.
(B) The submitted answer is a superset of the expert answer and is fully consistent with it.
(C) The submitted answer contains all the same details as the expert answer.
(D) There is a disagreement between the submitted answer and the expert answer.
(E) The answers differ, but these differences don't matter from the perspective of factuality.";

/// promptfoo's Factuality choice scores (its `factuality` assertion's defaults): every choice
/// but a disagreement passes.
pub(crate) const PROMPTFOO_FACTUALITY_SCORES: &[(&str, f64)] =
    &[("A", 1.0), ("B", 1.0), ("C", 1.0), ("D", 0.0), ("E", 1.0)];

/// autoevals' Factuality choice scores.
pub(crate) const FACTUALITY_SCORES: &[(&str, f64)] =
    &[("A", 0.4), ("B", 0.6), ("C", 1.0), ("D", 0.0), ("E", 1.0)];

/// autoevals `closed_q_a.yaml`.
pub(crate) const CLOSED_QA: &str = "\
You are assessing a submitted answer on a given task based on a criterion. Here is the data:
[BEGIN DATA]
***
[Task]: {{{input}}}
***
[Submission]: {{{output}}}
***
[Criterion]: {{{criteria}}}
***
[END DATA]
Does the submission meet the criterion?";

/// autoevals' ClosedQA choice scores.
pub(crate) const CLOSED_QA_SCORES: &[(&str, f64)] = &[("Y", 1.0), ("N", 0.0)];

/// niceeval's summary check: faithful (nothing unsupported) and complete (the main points).
pub(crate) const SUMMARIZES: &str = "\
You are checking whether a submission is a faithful and complete summary of a source text. Here is the data:
[BEGIN DATA]
************
[Source]: {{{source}}}
************
[Submission]: {{{output}}}
************
[END DATA]

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
You are grading a submitted answer against a rubric. Here is the data:
[BEGIN DATA]
************
[Task]: {{{input}}}
************
[Submission]: {{{output}}}
************
[Rubric]: {{{rubric}}}
************
[END DATA]

Decide how well the submission satisfies the rubric. Answer by calling `grade`: first write out your reasoning step by step in `reasons`, then set `score` to a number between 0 and 1, where 1 means the rubric is fully satisfied, 0 means it is not satisfied at all, and values in between mean partly. If you cannot call `grade`, answer with only a JSON object: {\"reason\": \"your reasoning\", \"pass\": true or false, \"score\": a number between 0 and 1}.";

/// autoevals' chain-of-thought suffix; `{{__choices}}` is the list of allowed choices.
pub(crate) const COT_SUFFIX: &str = "Answer the question by calling `select_choice` with your reasoning in a step-by-step matter to be sure that your conclusion is correct. Avoid simply stating the correct answer at the outset. Select a single choice by setting the `choice` parameter to a single choice from {{__choices}}.";

/// autoevals' `select_choice` tool, with the chain-of-thought schema (reasons before choice).
pub(crate) const SELECT_CHOICE_NAME: &str = "select_choice";
pub(crate) const SELECT_CHOICE_DESCRIPTION: &str = "Call this function to select a choice.";
pub(crate) const SELECT_CHOICE_SCHEMA: &str = r#"{"properties":{"reasons":{"description":"Write out in a step by step manner your reasoning to be sure that your conclusion is correct. Avoid simply stating the correct answer at the outset.","items":{"type":"string"},"title":"Reasons","type":"array"},"choice":{"description":"The choice","title":"Choice","type":"string"}},"required":["reasons","choice"],"title":"CoTResponse","type":"object"}"#;

/// The rubric's `grade` tool.
pub(crate) const GRADE_NAME: &str = "grade";
pub(crate) const GRADE_DESCRIPTION: &str =
    "Call this function to grade the submission against the rubric.";
pub(crate) const GRADE_SCHEMA: &str = r#"{"properties":{"reasons":{"description":"Write out in a step by step manner your reasoning to be sure that your conclusion is correct. Avoid simply stating the correct answer at the outset.","items":{"type":"string"},"title":"Reasons","type":"array"},"score":{"description":"How well the submission satisfies the rubric, from 0 (not at all) to 1 (fully)","title":"Score","type":"number","minimum":0,"maximum":1}},"required":["reasons","score"],"title":"Grade","type":"object"}"#;

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
