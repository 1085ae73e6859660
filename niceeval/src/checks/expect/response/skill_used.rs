//! `skill-used`: which skills the agent loaded, as promptfoo reads them from the provider's
//! `metadata.skillCalls` (entries with a `name`, not marked `is_error`), with the skills a
//! coding agent's run loaded (`skill.loaded` events) added. A name, or a list of names, must
//! all be seen (`not-`: none); a `{name | pattern, min, max}` object counts the matching calls
//! (`pattern` is a glob: `*` any text, `?` one character, case ignored). Rules and reasons are
//! promptfoo 0.123.1's.

use super::CallProblem;
use serde_json::Value;

use super::{described, verdict};
use crate::base::assertion::{Assertion, Grade, Subject};

/// What the item expects.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expected {
    /// Every one of these names (`not-`: none of them).
    All(Vec<String>),
    /// Calls matching a name or pattern, counted.
    Count {
        name: Option<String>,
        pattern: Option<String>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

impl Expected {
    /// The item's `value` read as promptfoo reads it; `Err` says what is wrong.
    pub(crate) fn read(value: Option<&Value>, inverse: bool) -> Result<Expected, CallProblem> {
        let text = |v: &Value| {
            v.as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        match value {
            Some(Value::String(_)) if value.and_then(text).is_some() => Ok(Expected::All(vec![
                value.and_then(text).unwrap_or_default(),
            ])),
            Some(Value::Array(items))
                if !items.is_empty() && items.iter().all(|i| text(i).is_some()) =>
            {
                Ok(Expected::All(items.iter().filter_map(text).collect()))
            }
            Some(Value::Object(map)) => {
                let name = map.get("name").and_then(text);
                let pattern = map.get("pattern").and_then(text);
                if name.is_none() && pattern.is_none() {
                    return Err(CallProblem::from(
                        "the `skill-used` object must include a name or pattern property",
                    ));
                }
                let count = |field: &str| -> Result<Option<u64>, CallProblem> {
                    match map.get(field) {
                        None => Ok(None),
                        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                            CallProblem::from(format!(
                                "`skill-used` object {field} must be a finite non-negative integer"
                            ))
                        }),
                    }
                };
                let (min, max) = (count("min")?, count("max")?);
                if let (Some(min), Some(max)) = (min, max)
                    && max < min
                {
                    return Err(CallProblem::from(
                        "`skill-used` object max must be greater than or equal to min",
                    ));
                }
                if inverse && (min.is_some() || max.is_some_and(|m| m != 0)) {
                    return Err(CallProblem::from(
                        "`not-skill-used` objects take a name or pattern with no count bounds, or max: 0",
                    ));
                }
                Ok(Expected::Count {
                    name,
                    pattern,
                    min,
                    max,
                })
            }
            _ => Err(CallProblem::from(
                "`skill-used` needs a string, a list of strings, or an object value",
            )),
        }
    }
}

/// One skill call: its name and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkillCall {
    pub(crate) name: String,
    pub(crate) detail: Option<String>,
}

/// The skill calls in a provider's metadata (`skillCalls`), as promptfoo keeps them.
pub(crate) fn calls_in(metadata: Option<&Value>) -> Vec<SkillCall> {
    let Some(Value::Array(calls)) = metadata.and_then(|m| m.get("skillCalls")) else {
        return Vec::new();
    };
    calls
        .iter()
        .filter(|c| c.get("is_error") != Some(&Value::Bool(true)))
        .filter_map(|c| {
            let name = c.get("name")?.as_str()?.to_string();
            let detail: Vec<&str> = ["source", "path"]
                .iter()
                .filter_map(|k| c.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
                .collect();
            Some(SkillCall {
                name,
                detail: (!detail.is_empty()).then(|| detail.join(", ")),
            })
        })
        .collect()
}

/// promptfoo's pattern: `*` any text, `?` one character, the rest literal; case ignored.
fn glob(name: &str, pattern: &str) -> bool {
    let mut expression = String::from("(?i)^");
    for c in pattern.chars() {
        match c {
            '*' => expression.push_str(".*"),
            '?' => expression.push('.'),
            other => expression.push_str(&regex::escape(&other.to_string())),
        }
    }
    expression.push('$');
    regex::Regex::new(&expression).is_ok_and(|r| r.is_match(name))
}

/// The matcher of a `skill-used` item, for one evaluation.
pub(crate) struct SkillUsed {
    pub(crate) expected: Expected,
    pub(crate) calls: Vec<SkillCall>,
    pub(crate) inverse: bool,
}

impl SkillUsed {
    fn shown(call: &SkillCall) -> String {
        match &call.detail {
            Some(d) => format!("{} ({d})", call.name),
            None => call.name.clone(),
        }
    }

    fn actual(&self) -> String {
        if self.calls.is_empty() {
            "(none)".into()
        } else {
            self.calls
                .iter()
                .map(Self::shown)
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

impl Assertion for SkillUsed {
    fn describe(&self) -> String {
        let detail = match &self.expected {
            Expected::All(names) => names.join(", "),
            Expected::Count { name, pattern, .. } => {
                pattern.clone().or_else(|| name.clone()).unwrap_or_default()
            }
        };
        described(self.inverse, "skill_used", &detail)
    }

    fn evaluate(&self, _value: &Subject<'_>) -> Grade {
        match &self.expected {
            Expected::All(names) => {
                let seen = |n: &String| self.calls.iter().any(|c| &c.name == n);
                let missing: Vec<&String> = names.iter().filter(|n| !seen(n)).collect();
                let matched: Vec<&String> = names.iter().filter(|n| seen(n)).collect();
                let pass = if self.inverse {
                    matched.is_empty()
                } else {
                    missing.is_empty()
                };
                let join =
                    |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
                let reason = match (self.inverse, pass) {
                    (true, true) => {
                        format!("Forbidden skill(s) were not used: {}", names.join(", "))
                    }
                    (true, false) => format!(
                        "Forbidden skill(s) were used: {}. Actual skills: {}",
                        join(&matched),
                        self.actual()
                    ),
                    (false, true) => format!(
                        "Observed required skill(s): {}. Actual skills: {}",
                        names.join(", "),
                        self.actual()
                    ),
                    (false, false) => format!(
                        "Missing required skill(s): {}. Actual skills: {}",
                        join(&missing),
                        self.actual()
                    ),
                };
                verdict(pass, if pass { 1.0 } else { 0.0 }, reason)
            }
            Expected::Count {
                name,
                pattern,
                min,
                max,
            } => {
                let matching: Vec<&SkillCall> = self
                    .calls
                    .iter()
                    .filter(|c| name.as_ref().is_none_or(|n| &c.name == n))
                    .filter(|c| pattern.as_ref().is_none_or(|p| glob(&c.name, p)))
                    .collect();
                let count = matching.len() as u64;
                let label = pattern
                    .clone()
                    .or_else(|| name.clone())
                    .unwrap_or_else(|| "*".into());
                let shown = matching
                    .iter()
                    .map(|c| Self::shown(c))
                    .collect::<Vec<_>>()
                    .join(", ");
                if self.inverse {
                    let pass = count == 0;
                    let reason = if pass {
                        format!(
                            "Forbidden skill \"{label}\" was not used. Actual skills: {}",
                            self.actual()
                        )
                    } else {
                        format!(
                            "Forbidden skill \"{label}\" was used {count} time(s). Matches: {shown}"
                        )
                    };
                    return verdict(pass, if pass { 1.0 } else { 0.0 }, reason);
                }
                let least = min.unwrap_or(if max.is_some() { 0 } else { 1 });
                let pass = count >= least && max.is_none_or(|m| count <= m);
                let mut reason = format!("Matched skill \"{label}\" {count} time(s)");
                match max {
                    None => reason.push_str(&format!(" (expected at least {least})")),
                    Some(m) => reason.push_str(&format!(" (expected {least}-{m})")),
                }
                if !matching.is_empty() {
                    reason.push_str(&format!(". Matches: {shown}"));
                }
                verdict(pass, if pass { 1.0 } else { 0.0 }, reason)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls() -> Vec<SkillCall> {
        calls_in(Some(&json!({"skillCalls": [
            {"name": "wiki", "source": "project"},
            {"name": "pdf-reader"},
            {"name": "broken", "is_error": true},
        ]})))
    }

    fn grade(value: Value, inverse: bool) -> Grade {
        let expected = Expected::read(Some(&value), inverse).unwrap();
        SkillUsed {
            expected,
            calls: calls(),
            inverse,
        }
        .evaluate(&Subject::Missing)
    }

    // promptfoo's rules (test/assertions/skillUsed.test.ts): names, lists, counts, patterns.
    #[test]
    fn names_lists_counts_and_patterns() {
        assert_eq!(grade(json!("wiki"), false).verdict, Some(true));
        assert_eq!(
            grade(json!(["wiki", "missing"]), false).verdict,
            Some(false)
        );
        assert_eq!(grade(json!("broken"), false).verdict, Some(false));
        assert_eq!(grade(json!("missing"), true).verdict, Some(true));
        assert_eq!(
            grade(json!({"pattern": "PDF-*"}), false).verdict,
            Some(true)
        );
        assert_eq!(
            grade(json!({"pattern": "*", "max": 1}), false).verdict,
            Some(false)
        );
        assert_eq!(
            grade(json!({"name": "wiki", "min": 2}), false).verdict,
            Some(false)
        );
        assert_eq!(
            grade(json!({"name": "gone", "max": 0}), true).verdict,
            Some(true)
        );
        assert!(Expected::read(Some(&json!({"min": 1})), false).is_err());
        assert!(Expected::read(Some(&json!({"name": "a", "min": 1})), true).is_err());
        assert!(Expected::read(Some(&json!({"name": "a", "min": 3, "max": 1})), false).is_err());
        assert!(Expected::read(Some(&json!(42)), false).is_err());
        let g = grade(json!("wiki"), false);
        assert_eq!(
            g.reason,
            "Observed required skill(s): wiki. Actual skills: wiki (project), pdf-reader"
        );
    }
}
