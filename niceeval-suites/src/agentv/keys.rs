//! The rule for the keys of an AgentV file that niceeval does not act on. AgentV reads its
//! files leniently: a key its schema does not know is dropped without a word (targets are
//! `passthrough`), so niceeval accepts such a key too, with one notice naming it (and the key
//! it was probably meant to be). A key of AgentV's schema that only tunes AgentV itself is
//! accepted with a notice saying what niceeval does instead; one whose meaning would change a
//! verdict and that niceeval cannot do is refused, and every refusal of a file is reported at
//! once ([`Notes`](crate::promptfoo_keys::Notes)).
//!
//! The key lists are AgentV 4.42.4's (`packages/core/src/evaluation/validation/
//! eval-file.schema.ts`, `yaml-parser.ts`, `providers/targets.ts`).

use crate::promptfoo_keys::Refusal;

/// The places of an AgentV file, as the reader names them (the `what` of `Doc::keys`), and
/// the keys AgentV reads there.
const PLACES: &[(&str, &[&str])] = &[
    (
        FILE,
        &[
            "$schema",
            "name",
            "description",
            "category",
            "version",
            "author",
            "tags",
            "license",
            "requires",
            "metadata",
            "governance",
            "input",
            "input_files",
            "tests",
            "eval_cases",
            "evalcases",
            "target",
            "execution",
            "assertions",
            "assert",
            "evaluator",
            "preprocessors",
            "workspace",
            "threshold",
        ],
    ),
    (
        EXECUTION,
        &[
            "target",
            "targets",
            "workers",
            "assertions",
            "evaluators",
            "skip_defaults",
            "cache",
            "trials",
            "budget_usd",
            "budgetUsd",
            "fail_on_error",
            "failOnError",
            "threshold",
        ],
    ),
    (
        TEST,
        &[
            "id",
            "vars",
            "criteria",
            "expected_outcome",
            "input",
            "input_files",
            "expected_output",
            "assertions",
            "assert",
            "evaluators",
            "evaluator",
            "rubrics",
            "execution",
            "workspace",
            "metadata",
            "conversation_id",
            "suite",
            "depends_on",
            "on_dependency_failure",
            "mode",
            "turns",
            "aggregation",
            "on_turn_failure",
            "window_size",
        ],
    ),
    (
        WORKSPACE,
        &[
            "template",
            "isolation",
            "repos",
            "hooks",
            "mode",
            "path",
            "docker",
        ],
    ),
];

/// The file's top level.
pub(super) const FILE: &str = "an AgentV eval file";
/// `execution` at the top level and in a test.
pub(super) const EXECUTION: &str = "execution";
/// A test.
pub(super) const TEST: &str = "a test";
/// `workspace`.
pub(super) const WORKSPACE: &str = "workspace";

/// What niceeval does about a key of `what` that it does not read: `Ok(notice)` to accept
/// it, `Err(why)` when ignoring it would change a verdict.
pub(crate) fn unread(what: &str, key: &str) -> Result<Option<String>, Refusal> {
    let known = PLACES
        .iter()
        .find(|(place, _)| *place == what)
        .map(|(_, keys)| *keys);
    let in_schema = known.is_none_or(|keys| keys.contains(&key));
    let instead = match (what, key) {
        (FILE, "category" | "version" | "author" | "tags" | "license" | "requires") => {
            "a label; not used"
        }
        (FILE, "governance") | (_, "metadata") => "kept out of the verdicts, as in AgentV",
        (FILE, "evaluator") | (TEST, "evaluator") => {
            "AgentV's default grader kind; niceeval grades `criteria` with the judge as AgentV's default does"
        }
        (FILE, "threshold") => {
            "the suite's quality gate over its mean score is not applied; each test passes at its own threshold"
        }
        (EXECUTION, "cache") => {
            "niceeval asks the target every time (judge answers are cached; NICEEVAL_JUDGE_CACHE)"
        }
        (EXECUTION, "budget_usd" | "budgetUsd") => {
            "the run is not stopped at a cost; niceeval.toml's [budget] limits a run"
        }
        (EXECUTION, "fail_on_error" | "failOnError") => {
            "a test whose target fails errors, and the others run"
        }
        (EXECUTION, "workers") => "tests run as `-j` / niceeval.toml's concurrency say",
        (EXECUTION, "skip_defaults") => "only a test's own `execution` skips the suite's graders",
        (TEST, "conversation_id") | (TEST, "suite") => "a label of AgentV's reports; not used",
        (TEST, "depends_on" | "on_dependency_failure") => {
            "tests run independently; niceeval does not order them or skip one after another's failure"
        }
        (EXECUTION, "trials") => {
            "trials are read at the file's top level only, as AgentV reads them"
        }
        ("trials", "cost_limit_usd" | "costLimitUsd") => {
            "every trial runs; niceeval.toml's [budget] limits a run's cost"
        }
        (TEST, "on_turn_failure") => {
            return Err(Refusal::new(
                "a conversation's turns all run; stopping at a failing turn is not supported",
            ));
        }
        (TEST, "window_size") => {
            return Err(Refusal::new(
                "the target gets the whole conversation; a window of recent turns is not supported",
            ));
        }
        (FILE, "preprocessors") => {
            return Err(Refusal::new(
                "content preprocessors are not run; graders see the files as they are",
            ));
        }
        (WORKSPACE, _) => {
            return Err(Refusal::new(
                "only `workspace.template` (a directory copied for each test) is supported",
            ));
        }
        // AgentV ignores a key its schema does not know; so does niceeval (noticed, with the
        // key it was probably meant to be).
        _ if !in_schema => return Ok(None),
        (_, "provider_batching" | "providerBatching") => {
            "niceeval sends each test to the target on its own"
        }
        (_, "fallback_targets" | "fallbackTargets") => {
            "no fallback: a target that fails errors its test"
        }
        (_, "subagent_mode_allowed" | "subagentModeAllowed") => "not used by niceeval's targets",
        (_, "delayMs" | "delayMinMs" | "delayMaxMs") => "a mock target answers at once",
        (_, "preprocessors") => {
            return Err(Refusal::new(
                "content preprocessors are not run; graders see the files as they are",
            ));
        }
        // A grader's or target's key niceeval does not act on (AgentV's grader parser and
        // its `passthrough` targets drop keys they do not know, too).
        _ => "not read by niceeval",
    };
    Ok(Some(format!("`{key}` in {what}: {instead}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_outside_agentvs_schema_are_dropped_and_tuning_keys_noticed() {
        assert_eq!(unread(TEST, "asertions").expect("accepted"), None);
        assert_eq!(unread(TEST, "task").expect("accepted"), None);
        assert_eq!(
            unread(EXECUTION, "timeout_seconds").expect("accepted"),
            None
        );
        let notice = unread(EXECUTION, "cache")
            .expect("accepted")
            .expect("a notice");
        assert!(notice.contains("asks the target every time"), "{notice}");
    }

    #[test]
    fn keys_that_change_verdicts_are_refused_with_the_reason() {
        let why = unread(TEST, "window_size")
            .expect_err("refused")
            .to_string();
        assert!(why.contains("window"), "{why}");
        assert!(unread(WORKSPACE, "repos").is_err());
        assert!(unread(EXECUTION, "cache").is_ok());
    }
}
