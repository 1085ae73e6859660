//! JavaScript's text rules, for the matchers that follow promptfoo's handlers: its white space
//! (`\s` in a regular expression, `trim`), its word characters (`\b` knows only ASCII letters,
//! digits and `_`), and `/i` without the `u` flag (ASCII letters fold only onto each other).

/// JavaScript's `\s` as a regex class: Unicode white space and U+FEFF (the regex crate's `\s`
/// has U+0085 and lacks U+FEFF).
pub(crate) const SPACE: &str = r"[\t\n\x0B\x0C\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]";

/// Whether `c` is white space to JavaScript (`\s`, `trim`).
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() && c != '\u{85}' || c == '\u{feff}'
}

/// Whether `c` is a word character to JavaScript's `\b`.
pub(crate) fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A regex matching `word` with its ASCII letters in either case and nothing else (JavaScript's
/// `/i` without `u` folds no other letter onto them, as the Kelvin sign onto `k`).
pub(crate) fn either_case(word: &str) -> String {
    word.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            } else {
                regex::escape(&c.to_string())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascripts_space_and_words() {
        assert!(is_space('\u{feff}') && is_space('\u{a0}') && !is_space('\u{85}'));
        assert!(is_word('_') && !is_word('é'));
        let re = regex::Regex::new(&either_case("link")).unwrap();
        assert!(re.is_match("LiNk") && !re.is_match("lin\u{212a}"));
    }
}
