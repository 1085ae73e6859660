//! The rule for the keys of a promptfoo config that niceeval does not act on: a key promptfoo
//! accepts is never a reason to refuse a file. A key that only tunes promptfoo itself (its
//! cache, its progress bar, its sharing, its own results database) and a key promptfoo's
//! schema does not know (promptfoo drops those silently) are accepted with one notice on
//! stderr saying what niceeval does instead. A refusal is only for what would change a verdict
//! and cannot be done; [`Notes`] gathers every refusal of a file so that all are reported at
//! once.

use std::cell::RefCell;

use super::SuiteFileError;

/// The rule for a key a reader does not act on (see [`unread`]): `Ok(Some(notice))` accepts a
/// key of the format's schema, `Ok(None)` a key the format's schema does not know (dropped, as
/// the format drops it), `Err(why)` refuses it.
pub(crate) type KeyRule = fn(&str, &str) -> Result<Option<String>, Refusal>;

/// A key the format's schema does not know, and everywhere it is written.
#[derive(Debug)]
struct Unknown {
    what: String,
    key: String,
    /// The key it was probably meant to be.
    hint: Option<String>,
    lines: Vec<usize>,
    /// Places past the first [`PLACES_NAMED`], counted.
    more: usize,
}

/// How many places of one unknown key a note names (finding a key's line reads the text
/// around it: a file of 100,000 tests with the same typo is not read 100,000 times).
const PLACES_NAMED: usize = 20;

/// What reading a file noticed: notices to print, and refusals to report together.
#[derive(Debug)]
pub(crate) struct Notes {
    /// The file format's rule for keys its reader does not act on.
    rule: KeyRule,
    /// The format, as its notes name it ("promptfoo", "AgentV").
    format: &'static str,
    /// Keys the format's schema does not know, each with its places.
    unknown_keys: RefCell<Vec<Unknown>>,
    notices: RefCell<Vec<String>>,
    refusals: RefCell<Vec<SuiteFileError>>,
    /// The assertion types no reader knows, each once.
    unknown_types: RefCell<Vec<String>>,
}

impl Default for Notes {
    /// A promptfoo file's notes.
    fn default() -> Self {
        Notes::with_rule(unread, "promptfoo")
    }
}

impl Notes {
    /// Notes of a format whose unread keys `rule` decides.
    pub(crate) fn with_rule(rule: KeyRule, format: &'static str) -> Self {
        Notes {
            rule,
            format,
            unknown_keys: RefCell::default(),
            notices: RefCell::default(),
            refusals: RefCell::default(),
            unknown_types: RefCell::default(),
        }
    }

    /// What the file's format says of a key of `what` its reader does not act on.
    pub(crate) fn unread(&self, what: &str, key: &str) -> Result<Option<String>, Refusal> {
        (self.rule)(what, key)
    }

    /// A key of `what` the format's schema does not know, written at the line `line` finds;
    /// `hint` the key it was probably meant to be.
    pub(crate) fn unknown_key(
        &self,
        what: &str,
        key: &str,
        hint: Option<&str>,
        line: impl FnOnce() -> usize,
    ) {
        let mut unknown = self.unknown_keys.borrow_mut();
        match unknown.iter_mut().find(|u| u.what == what && u.key == key) {
            Some(u) if u.lines.len() >= PLACES_NAMED => u.more += 1,
            Some(u) => {
                let line = line();
                if !u.lines.contains(&line) {
                    u.lines.push(line);
                }
            }
            None => unknown.push(Unknown {
                what: what.to_string(),
                key: key.to_string(),
                hint: hint.map(str::to_string),
                lines: vec![line()],
                more: 0,
            }),
        }
    }

    /// A line for stderr (each said once).
    pub(crate) fn notice(&self, text: String) {
        let mut notices = self.notices.borrow_mut();
        if !notices.contains(&text) {
            notices.push(text);
        }
    }

    /// Something the file asks that niceeval cannot do: reported with the others when the
    /// file has been read (each said once, e.g. a `defaultTest` item met in every test).
    pub(crate) fn refuse(&self, error: SuiteFileError) {
        let mut refusals = self.refusals.borrow_mut();
        if !refusals.contains(&error) {
            refusals.push(error);
        }
    }

    /// An assertion type that is neither promptfoo's nor a custom assertion: the tests that
    /// use it error when they run (as promptfoo errors their rows), and one note names every
    /// unknown type of the file with the list of valid types.
    pub(crate) fn unknown_type(&self, kind: &str) {
        let mut unknown = self.unknown_types.borrow_mut();
        if !unknown.iter().any(|k| k == kind) {
            unknown.push(kind.to_string());
        }
    }

    /// Whether a refusal was recorded.
    pub(crate) fn refused(&self) -> bool {
        !self.refusals.borrow().is_empty()
    }

    /// The notices and the notices of ignored keys (one a key: where it is written, what it
    /// was probably meant to be), or every refusal as one error.
    pub(crate) fn finish(self) -> Result<(Vec<String>, Vec<String>), SuiteFileError> {
        let mut refusals = self.refusals.into_inner();
        let unknown = self.unknown_types.into_inner();
        let mut notices = self.notices.into_inner();
        let format = self.format;
        let ignored = self
            .unknown_keys
            .into_inner()
            .into_iter()
            .map(|u| {
                let mut lines: Vec<String> = u.lines.iter().map(ToString::to_string).collect();
                if u.more > 0 {
                    lines.push(format!("and {} more", u.more));
                }
                let hint = u
                    .hint
                    .map(|h| format!(" Did you mean `{h}`?"))
                    .unwrap_or_default();
                format!(
                    "`{}` in {} (line{} {}) is not a key of {format}'s: {format} drops it, and so does niceeval.{hint}",
                    u.key,
                    u.what,
                    if lines.len() == 1 { "" } else { "s" },
                    lines.join(", "),
                )
            })
            .collect::<Vec<_>>();
        if !unknown.is_empty() {
            let names: Vec<String> = unknown.iter().map(|k| format!("`{k}`")).collect();
            notices.push(format!(
                "{} unknown assertion type{} ({}): the tests that use {} error when they run, as promptfoo errors their rows. Valid types: {} (each also with a `not-` prefix), or the name of a custom assertion in {}/",
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                if names.len() == 1 { "it" } else { "them" },
                super::promptfoo::valid_types().join(", "),
                niceeval::__workspace::expect::CUSTOM_ASSERTIONS_DIR,
            ));
        }
        match refusals.len() {
            0 => Ok((notices, ignored)),
            1 => Err(refusals.remove(0)),
            _ => Err(SuiteFileError::Several(refusals)),
        }
    }
}

/// Why a key niceeval does not read is refused: ignoring it would change a verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refusal(String);

impl Refusal {
    pub(crate) fn new(why: impl Into<String>) -> Refusal {
        Refusal(why.into())
    }
}

/// What niceeval does about a key of `what` (a promptfoo config, a test, options, …) that it
/// does not read: `Ok(notice)` to accept it, `Err(why)` when ignoring it would change a
/// verdict.
pub(crate) fn unread(what: &str, key: &str) -> Result<Option<String>, Refusal> {
    let instead = match (what, key) {
        (_, "writeLatestResults") => "niceeval writes its own results (results/ and --jsonl)",
        (_, "commandLineOptions") => "give niceeval's own flags on its command line",
        (_, "sharing") => "niceeval shares nothing; its reports are local files",
        (_, "version") => "not used",
        (_, "tags") => "not used",
        (_, "metadata") => "kept out of the verdicts, as in promptfoo",
        (_, "tracing") => "niceeval records its own traces",
        (_, "derivedMetrics") => "not computed; niceeval reports each metric's mean",
        (_, "redteam") => {
            "red-team generation is `promptfoo redteam`'s; the file's tests run as written"
        }
        (_, "extensions") => {
            "extension hooks are not run (they see results, they do not decide them)"
        }
        (_, "env") => "set these variables in the environment",
        (_, "nunjucksFilters") => {
            "custom filters are not loaded; a prompt using one fails naming it"
        }
        (_, "cache") => {
            "niceeval asks the providers every time (judge answers are cached; NICEEVAL_JUDGE_CACHE)"
        }
        (_, "runSerially") => "cases run as `-j` / maxConcurrency say",
        (_, "filterRange") => "every test runs; pick some with niceeval's name filters or --limit",
        (_, "progressCallback") => "niceeval prints its own progress",
        ("a prompt", "display") => "the prompt's label names it",
        ("a prompt", "template") => "the prompt is `raw` (or `id`)",
        ("a prompt", "function") => "a prompt function is a file://….js or .py reference",
        ("a prompt", "config") => "the provider's own `config` applies to every prompt",
        ("a provider", "inputs") => "inputs of red-team targets; the file's tests run as written",
        (_, "showProgressBar") | (_, "silent") => "niceeval prints its own progress",
        (_, "delay") => "no delay between calls; niceeval.toml's [provider] limits pace them",
        (_, "timeoutMs") | (_, "maxEvalTimeMs") | (_, "timeout") => {
            "niceeval.toml's [provider] timeout applies"
        }
        (_, "generateSuggestions") | (_, "suggestionsCount") => "no suggestions are generated",
        (_, "interactiveProviders") => "not used (removed from promptfoo in 2024)",
        (_, "isRedteam") => "not used",
        (_, "disableConversationVar") => "niceeval sets no `_conversation` var",
        // Keys that change a verdict: refused rather than ignored.
        (_, "assertScoringFunction") => {
            return Err(Refusal::new("a custom scoring function is not supported"));
        }
        (_, "storeOutputAs") => {
            return Err(Refusal::new(
                "`storeOutputAs` (outputs fed to later tests) is not supported",
            ));
        }
        (_, "prompts") if what == "a test" => {
            return Err(Refusal::new("a test's `prompts` filter is not supported"));
        }
        (_, "prompts") if what == "a provider" => {
            return Err(Refusal::new(
                "a provider's `prompts` filter is not supported",
            ));
        }
        (_, "factuality") => {
            return Err(Refusal::new("custom factuality scores are not supported"));
        }
        // promptfoo's schema does not know it and drops it; so does niceeval.
        _ => return Ok(None),
    };
    Ok(Some(format!("`{key}` in {what}: {instead}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_tune_promptfoo_are_noticed_and_keys_that_decide_are_refused() {
        for key in [
            "writeLatestResults",
            "version",
            "cache",
            "runSerially",
            "timeout",
            "name",
        ] {
            assert!(unread("a test", key).is_ok(), "{key}");
        }
        assert!(unread("a test", "assertScoringFunction").is_err());
        assert!(unread("options", "storeOutputAs").is_err());
    }

    #[test]
    fn every_refusal_is_reported_once_and_together() {
        let notes = Notes::default();
        let at = |line| SuiteFileError::At {
            file: "f.yaml".into(),
            line,
            column: 1,
            message: "no".into(),
        };
        notes.refuse(at(1));
        notes.refuse(at(2));
        notes.refuse(at(1));
        notes.notice("n".into());
        let err = notes.finish().unwrap_err();
        let text = err.to_string();
        assert_eq!(text.matches("f.yaml:").count(), 2, "{text}");
        let quiet = Notes::default();
        quiet.notice("n".into());
        quiet.notice("n".into());
        assert_eq!(quiet.finish().unwrap().0, vec!["n".to_string()]);
    }
}
