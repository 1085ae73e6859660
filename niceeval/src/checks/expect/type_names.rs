//! The assertion type names assertions as data understand: promptfoo's, with Runsight's and
//! AgentV's spellings and niceeval's own matcher names as aliases.

/// A built-in assertion type, after aliases are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Contains,
    IContains,
    ContainsAll,
    ContainsAny,
    IContainsAll,
    IContainsAny,
    StartsWith,
    EndsWith,
    Regex,
    Equals,
    IsJson,
    ContainsJson,
    Levenshtein,
    Similarity,
    Bleu,
    Gleu,
    RougeN,
    WordCount,
    Cost,
    Latency,
    JavaScript,
    Python,
    Script,
    AssertSet,
    FinishReason,
    SkillUsed,
    IsValidFunctionCall,
    IsValidOpenAiFunctionCall,
    IsValidOpenAiToolsCall,
    ToolCallF1,
    Perplexity,
    PerplexityScore,
    Guardrails,
    Webhook,
    Classifier,
    Moderation,
    Pi,
    TraceSpanCount,
    TraceSpanDuration,
    TraceErrorSpans,
    IsRefusal,
    ContainsXml,
    IsXml,
    ContainsHtml,
    IsHtml,
    ContainsSql,
    IsSql,
    Meteor,
}

/// `(name, builtin)` for every accepted spelling; the first of each builtin is its canonical
/// name.
const NAMES: &[(&str, Builtin)] = &[
    ("contains", Builtin::Contains),
    ("includes", Builtin::Contains),
    ("icontains", Builtin::IContains),
    ("contains-all", Builtin::ContainsAll),
    ("contains-any", Builtin::ContainsAny),
    ("icontains-all", Builtin::IContainsAll),
    ("icontains-any", Builtin::IContainsAny),
    ("starts-with", Builtin::StartsWith),
    ("ends-with", Builtin::EndsWith),
    ("regex", Builtin::Regex),
    ("equals", Builtin::Equals),
    ("is-json", Builtin::IsJson),
    ("contains-json", Builtin::ContainsJson),
    ("levenshtein", Builtin::Levenshtein),
    ("similarity", Builtin::Similarity),
    ("bleu", Builtin::Bleu),
    ("gleu", Builtin::Gleu),
    ("rouge-n", Builtin::RougeN),
    ("rouge", Builtin::RougeN),
    ("rouge-1", Builtin::RougeN),
    ("word-count", Builtin::WordCount),
    ("cost", Builtin::Cost),
    ("latency", Builtin::Latency),
    ("javascript", Builtin::JavaScript),
    ("js", Builtin::JavaScript),
    ("python", Builtin::Python),
    ("py", Builtin::Python),
    ("script", Builtin::Script),
    ("code-grader", Builtin::Script),
    ("code-judge", Builtin::Script),
    ("assert-set", Builtin::AssertSet),
    ("all-of", Builtin::AssertSet),
    ("finish-reason", Builtin::FinishReason),
    ("skill-used", Builtin::SkillUsed),
    ("is-valid-function-call", Builtin::IsValidFunctionCall),
    (
        "is-valid-openai-function-call",
        Builtin::IsValidOpenAiFunctionCall,
    ),
    (
        "is-valid-openai-tools-call",
        Builtin::IsValidOpenAiToolsCall,
    ),
    ("tool-call-f1", Builtin::ToolCallF1),
    ("perplexity", Builtin::Perplexity),
    ("perplexity-score", Builtin::PerplexityScore),
    ("guardrails", Builtin::Guardrails),
    ("webhook", Builtin::Webhook),
    ("classifier", Builtin::Classifier),
    ("moderation", Builtin::Moderation),
    ("pi", Builtin::Pi),
    ("trace-span-count", Builtin::TraceSpanCount),
    ("trace-span-duration", Builtin::TraceSpanDuration),
    ("trace-error-spans", Builtin::TraceErrorSpans),
    ("is-refusal", Builtin::IsRefusal),
    ("contains-xml", Builtin::ContainsXml),
    ("is-xml", Builtin::IsXml),
    ("contains-html", Builtin::ContainsHtml),
    ("is-html", Builtin::IsHtml),
    ("contains-sql", Builtin::ContainsSql),
    ("is-sql", Builtin::IsSql),
    ("meteor", Builtin::Meteor),
];

/// Lower-cases and turns `_` into `-` (`is_json` and `IS-JSON` are `is-json`).
pub(crate) fn normalize(kind: &str) -> String {
    kind.trim().to_ascii_lowercase().replace('_', "-")
}

/// The built-in behind a (normalized) type name.
pub(crate) fn builtin(normalized: &str) -> Option<Builtin> {
    NAMES
        .iter()
        .find(|(name, _)| *name == normalized)
        .map(|(_, b)| *b)
}

/// Every accepted spelling (canonical names first, then aliases, in table order).
pub(crate) fn accepted_names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().map(|(name, _)| *name)
}

/// Every canonical type name, for error messages.
pub fn canonical_names() -> Vec<&'static str> {
    let mut seen = Vec::new();
    let mut names = Vec::new();
    for (name, b) in NAMES {
        if !seen.contains(b) {
            seen.push(*b);
            names.push(*name);
        }
    }
    names
}

/// Whether `name` (with or without a `not-` prefix, in any case or `_` spelling) names a
/// built-in assertion type — the names custom assertions cannot take.
pub fn is_builtin_type(name: &str) -> bool {
    let n = normalize(name);
    builtin(&n).is_some()
        || n.strip_prefix("not-")
            .is_some_and(|rest| builtin(rest).is_some())
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        assert!(crate::checks::expect::type_names::is_builtin_type(
            "contains"
        ));
        assert!(crate::checks::expect::type_names::is_builtin_type(
            "IS_JSON"
        ));
        assert!(crate::checks::expect::type_names::is_builtin_type(
            "not-regex"
        ));
        assert!(!crate::checks::expect::type_names::is_builtin_type(
            "min-words"
        ));
    }
}
