//! Secrets kept out of everything niceeval prints or writes.
//!
//! A [`Redactor`] masks, in a text or in the strings of a JSON value, the values of the
//! process's environment variables whose names look secret (`*KEY*`, `*TOKEN*`, `*SECRET*`,
//! `*PASSWORD*`, `*CREDENTIAL*`, with a value of at least 8 characters) and whatever the rules
//! of `[report] redact` name: a variable (`"MY_VAR"`, its value is masked) or a regular
//! expression between slashes (`"/ghp_[A-Za-z0-9]{36}/"`, every match is masked). A masked
//! value keeps its first four characters, as CI systems show secrets: `sk-a…[redacted]`.
//!
//! The engine applies it to a run's report after every assertion has graded the run, so checks
//! see raw values and every artifact made from the report (console, results files, JSONL,
//! JUnit, Markdown, HTML, snapshots, baselines) sees masked ones.
//!
//! Masking a finished text cannot find a secret that was cut before: an excerpt that starts
//! or ends inside one keeps a fragment the patterns no longer match. So the excerpts of
//! assertion reasons (`crate::base::excerpt`) ask [`current`] where the secrets of the whole value
//! are ([`Redactor::find`]) before they cut it, never cut inside one, and mask those they
//! show: no fragment of a secret reaches a reason, whatever its length.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;
use serde_json::Value;

/// Parts of an environment variable's name that mark its value as a secret.
const SECRET_NAME_PARTS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];

/// Shorter values are not masked: they would mask ordinary words and numbers everywhere.
const MIN_SECRET_CHARS: usize = 8;

/// How many characters of a secret stay visible.
const SHOWN_CHARS: usize = 4;

/// What stands for the rest of a masked value.
pub(crate) const MARKER: &str = "…[redacted]";

/// Redactors built so far, by their rules and the number of noted variables.
type Built = HashMap<(Vec<String>, usize), Arc<Redactor>>;

/// Masks secrets in texts and JSON values.
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    /// One alternation of every secret value (escaped, longest first) and every rule pattern;
    /// `None` when there is nothing to mask.
    pattern: Option<Regex>,
}

/// Why a `[report] redact` rule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[report] redact: {rule:?} is not a valid regular expression: {message}")]
pub(crate) struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// The regex crate's explanation.
    pub message: String,
}

impl Redactor {
    /// A redactor for the environment `vars` (name, value) and the `rules` of `[report]
    /// redact`.
    pub(crate) fn new<'a>(
        vars: impl IntoIterator<Item = (&'a str, &'a str)>,
        rules: &[String],
    ) -> Result<Redactor, RuleError> {
        let vars: Vec<(&str, &str)> = vars.into_iter().collect();
        let mut literals: Vec<&str> = Vec::new();
        let mut patterns: Vec<String> = Vec::new();
        for (name, value) in &vars {
            if looks_secret(name) && value.chars().count() >= MIN_SECRET_CHARS {
                literals.push(value);
            }
        }
        for rule in rules {
            match rule.strip_prefix('/').and_then(|r| r.strip_suffix('/')) {
                Some(pattern) if !pattern.is_empty() => {
                    Regex::new(pattern).map_err(|e| RuleError {
                        rule: rule.clone(),
                        message: e.to_string(),
                    })?;
                    patterns.push(format!("(?:{pattern})"));
                }
                _ => {
                    // A variable named by the rule: its value, whatever its length (the user
                    // asked for it), when it is set and not empty.
                    if let Some((_, value)) = vars.iter().find(|(name, _)| name == rule)
                        && !value.is_empty()
                    {
                        literals.push(value);
                    }
                }
            }
        }
        literals.sort_by_key(|l| std::cmp::Reverse(l.len()));
        literals.dedup();
        let alternatives: Vec<String> = literals
            .iter()
            .map(|l| regex::escape(l))
            .chain(patterns)
            .collect();
        if alternatives.is_empty() {
            return Ok(Redactor { pattern: None });
        }
        let pattern = Regex::new(&alternatives.join("|")).map_err(|e| RuleError {
            rule: rules.join(", "),
            message: e.to_string(),
        })?;
        Ok(Redactor {
            pattern: Some(pattern),
        })
    }

    /// A redactor that masks nothing.
    pub(crate) fn none() -> Redactor {
        Redactor { pattern: None }
    }

    /// The redactor of this process's environment, the variables given to the programs it
    /// started ([`note_env`]) and `rules`; built once per set of rules and noted variables.
    pub(crate) fn for_rules(rules: &[String]) -> Result<Arc<Redactor>, RuleError> {
        static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();
        // Called for every run: the variables are read (and the pattern built) only when the
        // rules or the noted variables are new.
        let noted = noted().lock().unwrap_or_else(|p| p.into_inner());
        let key = (rules.to_vec(), noted.len());
        let built = BUILT.get_or_init(Default::default);
        let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(redactor) = built.get(&key) {
            return Ok(redactor.clone());
        }
        let vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .chain(noted.iter().cloned())
            .collect();
        drop(noted);
        let redactor = Arc::new(Redactor::new(
            vars.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            rules,
        )?);
        built.insert(key, redactor.clone());
        Ok(redactor)
    }

    /// Where the secrets of `text` are: byte ranges, in order, not overlapping (the same
    /// matches [`Redactor::text`] masks); empty when there is none.
    pub(crate) fn find(&self, text: &str) -> Vec<std::ops::Range<usize>> {
        match &self.pattern {
            None => Vec::new(),
            Some(pattern) => pattern.find_iter(text).map(|m| m.range()).collect(),
        }
    }

    /// Whether this redactor masks anything at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.pattern.is_none()
    }

    /// `text` with every secret masked; borrowed when there is none.
    pub(crate) fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.pattern {
            None => Cow::Borrowed(text),
            Some(pattern) => {
                pattern.replace_all(text, |found: &regex::Captures<'_>| mask(&found[0]))
            }
        }
    }

    /// Masks `text` in place; leaves it untouched when it holds no secret.
    pub(crate) fn in_place(&self, text: &mut String) {
        if let Cow::Owned(masked) = self.text(text) {
            *text = masked;
        }
    }

    /// Masks every string of `value` (object keys included) in place.
    pub(crate) fn json(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => self.in_place(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(map) => {
                let masked_keys = map.keys().any(|k| matches!(self.text(k), Cow::Owned(_)));
                if masked_keys {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(self.text(&k).into_owned(), v);
                    }
                }
                map.values_mut().for_each(|v| self.json(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// Variables niceeval itself gave to a program it started (`[agent] env`, an agent's `.env(..)`):
/// they are not in this process's environment but can be just as secret.
fn noted() -> &'static Mutex<Vec<(String, String)>> {
    static NOTED: OnceLock<Mutex<Vec<(String, String)>>> = OnceLock::new();
    NOTED.get_or_init(Default::default)
}

/// Notes a variable given to a started program, so that reports mask its value when its name
/// looks secret. A name noted again with the same value changes nothing.
pub(crate) fn note_env(name: &str, value: &str) {
    if !looks_secret(name) || value.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let mut noted = noted().lock().unwrap_or_else(|p| p.into_inner());
    if !noted.iter().any(|(n, v)| n == name && v == value) {
        noted.push((name.to_string(), value.to_string()));
    }
}

/// The `[report] redact` rules of every configuration this process ran an eval under.
fn noted_rules() -> &'static Mutex<Vec<String>> {
    static RULES: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    RULES.get_or_init(Default::default)
}

/// Notes the `[report] redact` rules of a configuration an eval runs under, so that what is
/// cut while it runs (the excerpts of assertion reasons, see [`current`]) masks what they
/// name too. A rule that is not a valid pattern is left out: loading the configuration
/// reports it.
pub(crate) fn note_rules(rules: &[String]) {
    let mut noted = noted_rules().lock().unwrap_or_else(|p| p.into_inner());
    for rule in rules {
        if !noted.contains(rule)
            && Redactor::new(std::iter::empty(), std::slice::from_ref(rule)).is_ok()
        {
            noted.push(rule.clone());
        }
    }
}

/// The redactor of everything known so far: this process's environment, the variables given
/// to the programs it started ([`note_env`]) and the rules of the configurations it ran evals
/// under ([`note_rules`]). What cuts a value before the run's report is masked asks it where
/// the secrets are.
pub(crate) fn current() -> Arc<Redactor> {
    let rules = noted_rules()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Redactor::for_rules(&rules)
        .or_else(|_| Redactor::for_rules(&[]))
        .unwrap_or_else(|_| Arc::new(Redactor::none()))
}

/// Whether an environment variable's name marks its value as a secret.
fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

/// A secret shown as its first characters and the marker: `sk-a…[redacted]`. A value of at
/// most twice the shown characters shows none of them.
pub(crate) fn mask(secret: &str) -> String {
    let count = secret.chars().count();
    let shown = if count > 2 * SHOWN_CHARS {
        SHOWN_CHARS
    } else {
        0
    };
    let head: String = secret.chars().take(shown).collect();
    format!("{head}{MARKER}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env() -> Vec<(&'static str, &'static str)> {
        vec![
            ("ANTHROPIC_API_KEY", "sk-ant-api03-abcdefghijklmnop"),
            ("OPENAI_API_KEY", "sk-proj-0123456789"),
            ("GITHUB_TOKEN", "ghp_shorter"),
            ("DB_PASSWORD", "hunter2"), // 7 characters: too short to mask
            ("MY_CREDENTIALS", "user:pa55word!"),
            ("HOME", "/root/very/long/home"),
            ("PLAIN", "not-a-secret-value"),
        ]
    }

    #[test]
    fn values_of_secret_looking_variables_are_masked_wherever_they_appear() {
        let r = Redactor::new(env(), &[]).unwrap();
        let text = "key=sk-ant-api03-abcdefghijklmnop, openai sk-proj-0123456789 \
                    token ghp_shorter, pw hunter2, cred user:pa55word! home /root/very/long/home";
        assert_eq!(
            r.text(text),
            "key=sk-a…[redacted], openai sk-p…[redacted] token ghp_…[redacted], pw hunter2, \
             cred user…[redacted] home /root/very/long/home"
        );
    }

    #[test]
    fn rules_name_a_variable_or_a_pattern() {
        let rules = vec!["PLAIN".to_string(), "/order-[0-9]{4}/".to_string()];
        let r = Redactor::new(env(), &rules).unwrap();
        assert_eq!(
            r.text("not-a-secret-value and order-1234, order-12"),
            "not-…[redacted] and orde…[redacted], order-12"
        );
        let bad = Redactor::new(env(), &["/(unclosed/".to_string()]).unwrap_err();
        assert_eq!(bad.rule, "/(unclosed/");
        assert!(bad.to_string().contains("not a valid regular expression"));
    }

    #[test]
    fn short_secrets_show_nothing_of_themselves() {
        assert_eq!(mask("12345678"), "…[redacted]");
        assert_eq!(mask("123456789"), "1234…[redacted]");
    }

    #[test]
    fn json_strings_and_keys_are_masked_and_a_text_without_secrets_is_not_copied() {
        let r = Redactor::new(env(), &[]).unwrap();
        let mut value = json!({
            "stdout": "OPENAI_API_KEY=sk-proj-0123456789\n",
            "sk-proj-0123456789": [1, "sk-proj-0123456789"],
            "n": 3
        });
        r.json(&mut value);
        assert_eq!(
            value,
            json!({
                "stdout": "OPENAI_API_KEY=sk-p…[redacted]\n",
                "sk-p…[redacted]": [1, "sk-p…[redacted]"],
                "n": 3
            })
        );
        assert!(matches!(r.text("nothing secret"), Cow::Borrowed(_)));
        assert!(
            Redactor::new(vec![("PATH", "/usr/bin:/bin")], &[])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_variable_given_to_a_program_is_masked_like_the_environments_own() {
        note_env("NICEEVAL_TEST_NOTED_TOKEN", "noted-0123456789");
        note_env("NICEEVAL_TEST_PLAIN", "plain-0123456789");
        let r = Redactor::for_rules(&[]).unwrap();
        assert_eq!(
            r.text("noted-0123456789 plain-0123456789"),
            "note…[redacted] plain-0123456789"
        );
    }

    #[test]
    fn the_longest_secret_wins_where_two_overlap() {
        let r = Redactor::new(vec![("A_KEY", "abcdefgh"), ("B_KEY", "abcdefghijkl")], &[]).unwrap();
        assert_eq!(r.text("abcdefghijkl"), "abcd…[redacted]");
    }
}
