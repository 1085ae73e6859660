//! promptfoo's checks of SQL before any parser reads it: an odd number of backticks, two bare
//! words between `SELECT` (and its modifiers) and `FROM` — a missing comma, which parsers read
//! as a column and its alias — and, for MySQL, PostgreSQL's `generate_series(`. The missing
//! comma is looked for with string literals, quoted names and comments blanked out.

use std::sync::LazyLock;

use fancy_regex::Regex;

use crate::checks::expect::js_text::{SPACE, either_case, is_space, is_word};

/// The databases whose `SELECT` modifiers are MySQL's.
const MYSQL_FAMILY: &[&str] = &["MySQL", "MariaDB"];

/// The databases that quote names in brackets (`[name]`).
const BRACKETED: &[&str] = &["TransactSQL", "Sqlite"];

/// The missing-comma pattern with `modifiers` as the words allowed after `SELECT`.
fn missing_comma(modifiers: &[&str]) -> Regex {
    let modifier = format!(
        "(?:{})",
        modifiers
            .iter()
            .map(|m| either_case(m))
            .collect::<Vec<_>>()
            .join("|")
    );
    let name = "[A-Za-z_][A-Za-z0-9_]*";
    let pattern = format!(
        "(?<![A-Za-z0-9_]){select}{SPACE}+(?:{modifier}{SPACE}+)*(?!{modifier}(?![A-Za-z0-9_])){name}{SPACE}+{name}{SPACE}+{from}(?![A-Za-z0-9_])",
        select = either_case("select"),
        from = either_case("from"),
    );
    Regex::new(&pattern).expect("fixed pattern")
}

static STANDARD: LazyLock<Regex> = LazyLock::new(|| missing_comma(&["all", "distinct"]));

static MYSQL: LazyLock<Regex> = LazyLock::new(|| {
    missing_comma(&[
        "all",
        "distinctrow",
        "distinct",
        "high_priority",
        "straight_join",
        "sql_big_result",
        "sql_buffer_result",
        "sql_cache",
        "sql_calc_found_rows",
        "sql_no_cache",
        "sql_small_result",
    ])
});

/// The end of the quoted text that opens at `at` (the byte after its closing quote): a doubled
/// quote is one quote, a backslash escapes the next character (not in brackets).
fn quoted_end(s: &str, at: usize, open: u8) -> usize {
    let close = if open == b'[' { b']' } else { open };
    let b = s.as_bytes();
    let mut i = at + 1;
    while i < b.len() {
        if close != b']' && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == close {
            if b.get(i + 1) == Some(&close) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// A PostgreSQL dollar quote's delimiter (`$$`, `$tag$`) at the start of `s`.
fn dollar_delimiter(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('$')?;
    let tag_len = match rest.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len()),
        _ => 0,
    };
    rest[tag_len..].starts_with('$').then(|| &s[..tag_len + 2])
}

/// `sql` with string literals and quoted names replaced by ` ? ` and comments by a space.
fn blank_out(sql: &str, database: &str) -> String {
    let brackets = BRACKETED.contains(&database);
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut plain = 0;
    let mut i = 0;
    while i < b.len() {
        let (end, with) = match b[i] {
            q @ (b'\'' | b'"' | b'`') => (quoted_end(sql, i, q), " ? "),
            b'[' if brackets => (quoted_end(sql, i, b'['), " ? "),
            b'-' if b.get(i + 1) == Some(&b'-') => (line_end(sql, i + 1), " "),
            b'#' => (line_end(sql, i + 1), " "),
            b'/' if b.get(i + 1) == Some(&b'*') => (
                sql[i + 2..].find("*/").map_or(b.len(), |at| i + 2 + at + 2),
                " ",
            ),
            b'$' => match dollar_delimiter(&sql[i..]) {
                Some(d) => (
                    sql[i + d.len()..]
                        .find(d)
                        .map_or(b.len(), |at| i + d.len() + at + d.len()),
                    " ? ",
                ),
                None => {
                    i += 1;
                    continue;
                }
            },
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&sql[plain..i]);
        out.push_str(with);
        i = end.min(b.len());
        plain = i;
    }
    out.push_str(&sql[plain..]);
    out
}

/// Where the line that `from` is on ends (the `\r` or `\n`, or the text's end).
fn line_end(s: &str, from: usize) -> usize {
    s[from..].find(['\r', '\n']).map_or(s.len(), |at| from + at)
}

/// Whether `sql` calls `generate_series(`, as a whole word, in any case.
fn calls_generate_series(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    lower.match_indices("generate_series").any(|(at, m)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + m.len()..].trim_start_matches(is_space);
        !before.is_some_and(is_word) && after.starts_with('(')
    })
}

/// How many of promptfoo's checks object to `sql` (already trimmed) for `database` before it is
/// parsed (each adds the same reason to promptfoo's message).
pub(super) fn objections(sql: &str, database: &str) -> usize {
    let mut count = 0;
    if sql.is_empty() {
        count += 1;
    }
    if sql.matches('`').count() % 2 == 1 {
        count += 1;
    }
    let pattern = if MYSQL_FAMILY.contains(&database) {
        &MYSQL
    } else {
        &STANDARD
    };
    // The backtracking engine gives up only on pathological text (its step limit); such text
    // is not counted against.
    if pattern.is_match(&blank_out(sql, database)).unwrap_or(false) {
        count += 1;
    }
    if database == "MySQL" && calls_generate_series(sql) {
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refuses(sql: &str, database: &str) -> bool {
        objections(sql, database) > 0
    }

    /// promptfoo's sql.test.ts: "should fail a likely missing comma between columns", "should
    /// pass valid SELECT modifiers", "should ignore SQL-like text in literals and comments".
    #[test]
    fn promptfoos_missing_comma_cases() {
        for sql in [
            "SELECT a b FROM t",
            "SELECT DISTINCT first_name last_name FROM employees",
            "SELECT SQL_NO_CACHE first_name last_name FROM employees",
            "SELECT DISTINCTIVE name FROM users",
        ] {
            assert!(refuses(sql, "MySQL"), "{sql}");
        }
        for sql in [
            "SELECT DISTINCT name FROM users",
            "select distinct id from users",
            "SELECT SQL_NO_CACHE name FROM users",
            "SELECT DISTINCT SQL_NO_CACHE name FROM users",
            "SELECT 'select distinct first_name last_name from employees' AS sample",
            "SELECT 1 /* select distinct first_name last_name from employees */",
            "SELECT 1 -- select distinct first_name last_name from employees\n",
        ] {
            assert!(!refuses(sql, "MySQL"), "{sql}");
        }
        for sql in [
            "SELECT \"select distinct first_name last_name from employees\" AS sample",
            "SELECT $$select distinct first_name last_name from employees$$ AS sample",
            "SELECT DISTINCT \"display name\" FROM users",
        ] {
            assert!(!refuses(sql, "PostgreSQL"), "{sql}");
        }
        // Not MySQL: SQL_NO_CACHE is a column there.
        assert!(refuses("SELECT SQL_NO_CACHE name FROM users", "PostgreSQL"));
    }

    #[test]
    fn backticks_and_generate_series() {
        assert!(refuses("SELECT * FROM `employees", "MySQL"));
        assert!(!refuses(
            "SELECT * FROM `employees` WHERE `id` = 1",
            "MySQL"
        ));
        assert!(refuses("SELECT generate_series(1, 10);", "MySQL"));
        assert!(refuses("SELECT GENERATE_SERIES (1, 10);", "MySQL"));
        assert!(!refuses("SELECT my_generate_series(1, 10);", "MySQL"));
        assert!(!refuses("SELECT generate_series(1, 10);", "PostgreSQL"));
        assert!(refuses("", "MySQL"));
    }
}
