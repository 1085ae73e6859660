//! The lenient reading of an object that is not strict JSON, as promptfoo's
//! `extractJsonObjects` does: from a `{` to its matching `}` (or to the end of the text, closed
//! there), read as YAML flow after `//` comments become `#` comments. So `{key: value}`,
//! `{"score": 1.0 // perfect}` and an unclosed `{"incomplete": "object"` are objects.
//!
//! Without the `yaml` feature the candidate is read as JSON once its `//` comments are dropped:
//! `//` comments and a missing `}` are still forgiven, YAML flow (`{key: value}`, `'single'`
//! quotes, `#` comments) is not.

use serde_json::Value;

/// Longest candidate read from one `{`, as promptfoo.
const MAX_CANDIDATE: usize = 100_000;

/// Deepest nesting read leniently (the strict parser's limit is 128 too).
const MAX_DEPTH: usize = 128;

/// How many bytes the lenient reading may look at in one text, over all its candidates: a text
/// full of `{` that never close would otherwise cost 100,000 bytes per brace.
pub(super) const BUDGET: usize = 4_000_000;

/// The object starting at byte `start` (a `{`) and the index after it, read leniently. Braces
/// inside double-quoted strings do not count. When the braces balance and the candidate does not
/// read as an object, there is none from this `{`; nor is there when it nests deeper than 128.
/// The bytes looked at are taken from `budget`; with the budget spent there is no object.
pub(super) fn object_at(text: &str, start: usize, budget: &mut usize) -> Option<(Value, usize)> {
    let b = text.as_bytes();
    let limit = (start + MAX_CANDIDATE.min(*budget)).min(b.len());
    let (found, looked_at) = scan_object(text, start, limit);
    *budget = budget.saturating_sub(looked_at);
    found
}

fn scan_object(text: &str, start: usize, limit: usize) -> (Option<(Value, usize)>, usize) {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = start;
    while i < limit {
        let c = b[i];
        i += 1;
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return (None, i - start);
                }
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return (read_object(&text[start..i]).map(|v| (v, i)), i - start);
                }
            }
            _ => {}
        }
    }
    if limit < b.len() || in_string {
        return (None, limit - start);
    }
    let closed = format!("{}{}", &text[start..], "}".repeat(depth));
    (read_object(&closed).map(|v| (v, b.len())), b.len() - start)
}

/// A candidate read as YAML (JSON is YAML), kept only when it is a mapping with text keys.
#[cfg(feature = "yaml")]
fn read_object(candidate: &str) -> Option<Value> {
    let yaml: yaml_serde::Value =
        yaml_serde::from_str(&flow_colons(&slash_comments_to_hash(candidate))).ok()?;
    if !text_keys(&yaml) {
        return None;
    }
    match serde_json::to_value(&yaml) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    }
}

/// Without the `yaml` feature: a candidate read as JSON once its `//` comments are dropped, so
/// only `//` comments and a missing `}` are forgiven (not YAML flow such as `{key: value}`).
#[cfg(not(feature = "yaml"))]
fn read_object(candidate: &str) -> Option<Value> {
    match serde_json::from_str(&drop_slash_comments(candidate)).ok()? {
        v @ Value::Object(_) => Some(v),
        _ => None,
    }
}

/// A `:` right before `,`, `}` or `]` (outside quotes) gets a space after it: YAML 1.2 reads
/// `{empty:}` as `{"empty": null}`, as promptfoo's js-yaml does, but the YAML 1.1 parser behind
/// `yaml_serde` wants a space after the colon.
#[cfg(feature = "yaml")]
fn flow_colons(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let needs = bytes
        .windows(2)
        .any(|w| w[0] == b':' && matches!(w[1], b',' | b'}' | b']'));
    if !needs {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match quote {
            Some('"') if c == '\\' => {
                if let Some(escaped) = chars.next() {
                    out.push(escaped);
                }
            }
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ':' && matches!(chars.peek(), Some(',' | '}' | ']')) => out.push(' '),
            None => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Every mapping key (at any depth) is a scalar, as in JSON once written as text.
#[cfg(feature = "yaml")]
fn text_keys(value: &yaml_serde::Value) -> bool {
    match value {
        yaml_serde::Value::Mapping(m) => m.iter().all(|(k, v)| {
            !matches!(
                k,
                yaml_serde::Value::Mapping(_) | yaml_serde::Value::Sequence(_)
            ) && text_keys(v)
        }),
        yaml_serde::Value::Sequence(items) => items.iter().all(text_keys),
        _ => true,
    }
}

/// Turns the first `//` comment of each line (outside quotes, not in a `://` URL) into `#`
/// (one `#` per two slashes).
#[cfg(feature = "yaml")]
pub(super) fn slash_comments_to_hash(text: &str) -> String {
    text.split('\n')
        .map(|line| line_comment_to_hash(line, true))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drops the first `//` comment of each line (outside quotes, not in a `://` URL).
#[cfg(not(feature = "yaml"))]
fn drop_slash_comments(text: &str) -> String {
    text.split('\n')
        .map(|line| line_comment_to_hash(line, false))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The line with its first `//` comment turned into `#` comments (`hash`), or dropped.
fn line_comment_to_hash(line: &str, hash: bool) -> String {
    #[derive(PartialEq)]
    enum State {
        Normal,
        Single,
        Double,
    }
    let chars: Vec<char> = line.chars().collect();
    let mut state = State::Normal;
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        let next = chars.get(i + 1).copied();
        let letter = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphabetic());
        match state {
            State::Single => {
                if c == '\'' && prev != Some('\\') && !letter(next) {
                    state = State::Normal;
                }
            }
            State::Double => {
                if c == '"' && prev != Some('\\') {
                    state = State::Normal;
                }
            }
            State::Normal if c == '\'' && !letter(prev) => state = State::Single,
            State::Normal if c == '"' => state = State::Double,
            State::Normal if c == '/' && next == Some('/') => {
                let token_start = chars[..i]
                    .iter()
                    .rposition(|c| c.is_whitespace())
                    .map_or(0, |p| p + 1);
                let token: String = chars[token_start..i + 2].iter().collect();
                if !token.contains("://") {
                    let slashes = chars[i..].iter().take_while(|c| **c == '/').count();
                    if hash {
                        out.push_str(&"#".repeat(slashes / 2));
                        out.extend(&chars[i + slashes..]);
                    }
                    return out;
                }
            }
            State::Normal => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[cfg(feature = "yaml")]
    #[test]
    fn a_colon_before_a_flow_indicator_is_a_value_indicator() {
        // promptfoo's test/util/json.test.ts: `empty:` is a key without a value (js-yaml).
        let mut budget = BUDGET;
        let text = "{key: value with spaces, special: value!@#$%, empty:}";
        let (value, _) = object_at(text, 0, &mut budget).expect("an object");
        assert_eq!(
            value,
            json!({"key": "value with spaces", "special": "value!@#$%", "empty": null})
        );
        assert_eq!(flow_colons("{a:, b: [c:]}"), "{a: , b: [c: ]}");
        // Inside quotes a colon is text.
        assert_eq!(flow_colons(r#"{"a:}": 'b:,'}"#), r#"{"a:}": 'b:,'}"#);
        assert_eq!(flow_colons("{url: http://x}"), "{url: http://x}");
    }

    #[cfg(feature = "yaml")]
    #[test]
    fn comments_become_hashes() {
        let table = [
            (
                "some text // this is a comment",
                "some text # this is a comment",
            ),
            (
                "\"this // is not\" // but this is",
                "\"this // is not\" # but this is",
            ),
            (
                "'don't convert // here' // convert here",
                "'don't convert // here' # convert here",
            ),
            ("text // first // second", "text # first // second"),
            ("// a\ntext // b", "# a\ntext # b"),
            ("text //// double", "text ## double"),
            ("see http://example.com // c", "see http://example.com # c"),
            ("no comments", "no comments"),
        ];
        for (input, expected) in table {
            assert_eq!(slash_comments_to_hash(input), expected, "{input}");
        }
    }

    #[cfg(not(feature = "yaml"))]
    #[test]
    fn comments_are_dropped_without_yaml() {
        assert_eq!(
            drop_slash_comments("{\"a\": 1, // one\n\"b\": \"x // y\"} //// end"),
            "{\"a\": 1, \n\"b\": \"x // y\"} "
        );
    }

    #[test]
    fn lenient_objects() {
        // YAML flow (unquoted keys and values, `#` comments) is read with the `yaml` feature only.
        let yaml = cfg!(feature = "yaml");
        let table: &[(&str, Option<Value>)] = &[
            (
                "{key: value, another_key: another value}",
                Some(json!({"key": "value", "another_key": "another value"})).filter(|_| yaml),
            ),
            (
                "{\n  \"reason\": \"all good\",\n  \"score\": 1.0 // perfect score\n}",
                Some(json!({"reason": "all good", "score": 1.0})),
            ),
            (
                "{\n  \"reason\": \"ok\",\n  \"score\": 1.0 # perfect\n}",
                Some(json!({"reason": "ok", "score": 1.0})).filter(|_| yaml),
            ),
            (
                "{\n  \"incomplete\": \"object\"",
                Some(json!({"incomplete": "object"})),
            ),
            (
                "{key: value with spaces, special: value!@#$%, empty: }",
                Some(json!({"key": "value with spaces", "special": "value!@#$%", "empty": null}))
                    .filter(|_| yaml),
            ),
            ("{\"a\": \"}\"} tail", Some(json!({"a": "}"}))),
            ("{\"key\": \"value\" some text {\"key2\": \"value2\"}", None),
        ];
        for (text, expected) in table {
            let mut budget = BUDGET;
            assert_eq!(
                object_at(text, 0, &mut budget).map(|(v, _)| v),
                *expected,
                "{text}"
            );
        }
    }

    #[test]
    fn the_budget_bounds_what_is_looked_at() {
        let mut budget = BUDGET;
        assert!(object_at("{\"a\": 1} tail", 0, &mut budget).is_some());
        assert_eq!(budget, BUDGET - 8);
        // Too little left to reach the closing brace: no object, and the budget is spent.
        let mut budget = 4;
        assert_eq!(object_at("{\"a\": 1} tail", 0, &mut budget), None);
        assert_eq!(budget, 0);
        assert_eq!(object_at("{\"a\": 1} tail", 0, &mut budget), None);
    }

    #[test]
    fn braces_that_never_close_spend_the_budget_not_the_whole_text_each_time() {
        let text = format!("{}{{\"x\": 1}}", "{ \"unclosed ".repeat(100_000));
        let found = crate::checks::expect::json::find_json(&text);
        // Past the budget only strict JSON is found: the object at the end still is.
        assert_eq!(found.last(), Some(&json!({"x": 1})));
    }
}
