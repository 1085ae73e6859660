//! promptfoo's `is-sql` and `contains-sql` as assertions as data know them: the text (or, for
//! `contains-sql`, one of its fenced ```` ```sql ```` blocks, else the whole text) parses as SQL
//! of the `value`'s `databaseType` (MySQL unless set), passes promptfoo's own checks first
//! ([`heuristics`]), and touches only the tables and columns its `allowedTables` and
//! `allowedColumns` allow ([`authority`]). Written from promptfoo 0.123.1's rules and tests, not
//! its code.
//!
//! promptfoo parses with node-sql-parser; niceeval with sqlparser, in the dialect closest to
//! each database: MySQL and MariaDB → MySQL, PostgreSQL, BigQuery, Hive, Redshift, Snowflake,
//! Sqlite → SQLite, TransactSQL → MS SQL; Athena, Trino, DB2, FlinkSQL and Noql have no
//! sqlparser dialect and are read with its generic one. The two parsers are different grammars
//! and disagree at the edges; the cases known are in the tests of this module (`sql/tests.rs`,
//! "where the parsers disagree").

mod authority;
mod heuristics;
mod mysql;

use serde_json::Value;
use sqlparser::dialect::{
    BigQueryDialect, Dialect, GenericDialect, HiveDialect, MsSqlDialect, MySqlDialect,
    PostgreSqlDialect, RedshiftSqlDialect, SQLiteDialect, SnowflakeDialect,
};
use sqlparser::parser::Parser;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::js_text::is_space;
use authority::Entry;

/// What an `is-sql` / `contains-sql` item's `value` sets.
pub(crate) struct SqlOptions {
    database: String,
    allowed_tables: Option<Whitelist>,
    allowed_columns: Option<Whitelist>,
}

/// A whitelist as the item gives it (for reasons) and the entries it is checked with.
struct Whitelist {
    given: Vec<String>,
    entries: Vec<Entry>,
}

impl std::fmt::Debug for SqlOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlOptions")
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

/// Why an `is-sql` / `contains-sql` item's `value` is refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SqlValueError {
    #[error("`value` must be an object ({{databaseType, allowedTables, allowedColumns}}), got {0}")]
    NotAnObject(Value),
    #[error("`databaseType` must be a string, got {0}")]
    DatabaseType(Value),
    #[error("`{key}` must be a list of strings, got {got}")]
    NotAList { key: &'static str, got: Value },
}

/// Why a text is not the SQL asked for: promptfoo's reasons, in its order (one check can give
/// the same reason as another, as in promptfoo).
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.join(" "))]
pub(crate) struct SqlMismatch(Vec<String>);

/// A list of whitelist entries from the value's `key`.
fn entries(
    map: &serde_json::Map<String, Value>,
    key: &'static str,
) -> Result<Option<Vec<String>>, SqlValueError> {
    let refused = |got: &Value| SqlValueError::NotAList {
        key,
        got: got.clone(),
    };
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(list @ Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| refused(list)))
            .collect::<Result<_, _>>()
            .map(Some),
        Some(other) => Err(refused(other)),
    }
}

/// Reads an item's `value` as promptfoo does: nothing (or a value JavaScript finds false) for
/// the defaults, else an object with `databaseType`, `allowedTables`, `allowedColumns`.
/// `allowedColumns` entries naming a table (`select::users::name`) also allow the column when
/// the SQL names no table (`select::null::name`).
pub(crate) fn sql_options(value: Option<&Value>) -> Result<SqlOptions, SqlValueError> {
    let mut options = SqlOptions {
        database: "MySQL".to_string(),
        allowed_tables: None,
        allowed_columns: None,
    };
    let map = match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => return Ok(options),
        Some(Value::String(s)) if s.is_empty() => return Ok(options),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => return Ok(options),
        Some(Value::Array(_)) => return Ok(options),
        Some(Value::Object(map)) => map,
        Some(other) => return Err(SqlValueError::NotAnObject(other.clone())),
    };
    match map.get("databaseType") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) => options.database = s.clone(),
        Some(other) => return Err(SqlValueError::DatabaseType(other.clone())),
    }
    options.allowed_tables = entries(map, "allowedTables")?.map(|list| Whitelist {
        entries: list.iter().map(|e| Entry::new(e)).collect(),
        given: list,
    });
    options.allowed_columns = entries(map, "allowedColumns")?.map(|list| {
        let mut all = list.clone();
        for item in &list {
            let parts: Vec<&str> = item.split("::").collect();
            if let [action, table, column] = parts.as_slice()
                && *table != "null"
            {
                let loose = format!("{action}::null::{column}");
                if !all.contains(&loose) {
                    all.push(loose);
                }
            }
        }
        Whitelist {
            entries: all.iter().map(|e| Entry::new(e)).collect(),
            given: list,
        }
    });
    Ok(options)
}

/// sqlparser's dialect for one of node-sql-parser's database names (in any case).
fn dialect(database: &str) -> Option<Box<dyn Dialect>> {
    Some(match database.to_ascii_lowercase().as_str() {
        "mysql" | "mariadb" => Box::new(MySqlDialect {}),
        "postgresql" => Box::new(PostgreSqlDialect {}),
        "bigquery" => Box::new(BigQueryDialect {}),
        "hive" => Box::new(HiveDialect {}),
        "redshift" => Box::new(RedshiftSqlDialect {}),
        "snowflake" => Box::new(SnowflakeDialect {}),
        "sqlite" => Box::new(SQLiteDialect {}),
        "transactsql" => Box::new(MsSqlDialect {}),
        "athena" | "trino" | "db2" | "flinksql" | "noql" => Box::new(GenericDialect {}),
        _ => return None,
    })
}

/// Why `text` is not SQL as `options` ask, or `Ok`: the `is-sql` rule.
pub(crate) fn sql_statement(text: &str, options: &SqlOptions) -> Result<(), SqlMismatch> {
    let database = &options.database;
    let nonconforming =
        format!("SQL statement does not conform to the provided {database} database syntax.");
    let mut failures: Vec<String> = Vec::new();
    let trimmed = text.trim_matches(is_space);
    for _ in 0..heuristics::objections(trimmed, database) {
        failures.push(nonconforming.clone());
    }
    let mysql_family = matches!(database.to_ascii_lowercase().as_str(), "mysql" | "mariadb");
    let parsed = match dialect(database) {
        Some(d) => Parser::parse_sql(d.as_ref(), text)
            .map_err(|e| e.to_string())
            .and_then(|statements| {
                if mysql_family && mysql::refuses(&statements) {
                    Err("MySQL (as node-sql-parser reads it) has no such syntax".to_string())
                } else {
                    Ok(statements)
                }
            }),
        None => Err(format!("{database} is not supported currently")),
    };
    if parsed.is_err() {
        failures.push(nonconforming);
    }
    let lists = parsed
        .as_ref()
        .map(|statements| authority::authorities(statements));
    let checks = [
        (
            "table",
            &options.allowed_tables,
            lists.as_ref().map(|l| &l.tables),
        ),
        (
            "column",
            &options.allowed_columns,
            lists.as_ref().map(|l| &l.columns),
        ),
    ];
    for (kind, whitelist, found) in checks {
        let Some(whitelist) = whitelist else {
            continue;
        };
        if whitelist.given.is_empty() {
            continue;
        }
        let found = match found {
            Ok(found) => found,
            Err(parse_error) => {
                failures.push(format!("SQL validation failed: {parse_error}."));
                continue;
            }
        };
        if !authority::allows(found, &whitelist.entries) {
            failures.push(format!(
                "SQL references unauthorized {kind}(s). Found: [{}]. Allowed: [{}].",
                found.join(", "),
                whitelist.given.join(", ")
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(SqlMismatch(failures))
    }
}

/// A code fence line: its character, its length, its info text, and whether only white space
/// follows the fence.
fn fence(line: &str) -> Option<(char, usize, &str, bool)> {
    let indent = line
        .bytes()
        .take(3)
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.bytes().take_while(|b| *b == c as u8).count();
    if len < 3 {
        return None;
    }
    let info = &rest[len..];
    let blank = info.bytes().all(|b| b == b' ' || b == b'\t');
    Some((c, len, info, blank))
}

/// The bodies of the fenced code blocks of `text` that are SQL (info `sql`, or none), trimmed;
/// a block left open is not one.
pub(crate) fn sql_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<(char, usize, bool, Vec<&str>)> = None;
    let lines = text.split("\r\n").flat_map(|l| l.split(['\r', '\n']));
    for line in lines {
        let found = fence(line);
        match &mut open {
            None => {
                if let Some((c, len, info, _)) = found {
                    let language = info.trim_matches(is_space).to_lowercase();
                    open = Some((c, len, language.is_empty() || language == "sql", Vec::new()));
                }
            }
            Some((c, len, sql, body)) => match found {
                Some((fc, flen, _, true)) if fc == *c && flen >= *len => {
                    if *sql {
                        blocks.push(body.join("\n").trim_matches(is_space).to_string());
                    }
                    open = None;
                }
                _ => body.push(line),
            },
        }
    }
    blocks
}

/// Why no SQL in `text` is SQL as `options` ask, or `Ok`: the `contains-sql` rule (each fenced
/// SQL block in turn, or the whole text when there is none; the last block's reason is kept).
pub(crate) fn sql_in_text(text: &str, options: &SqlOptions) -> Result<(), SqlMismatch> {
    let blocks = sql_blocks(text);
    let candidates = if blocks.is_empty() {
        vec![text.to_string()]
    } else {
        blocks
    };
    let mut failure = SqlMismatch(vec!["Output does not contain valid SQL".to_string()]);
    for candidate in candidates {
        if candidate.trim_matches(is_space).is_empty() {
            continue;
        }
        match sql_statement(&candidate, options) {
            Ok(()) => return Ok(()),
            Err(why) => failure = why,
        }
    }
    Err(failure)
}

/// The `is-sql` (`anywhere: false`) or `contains-sql` (`anywhere: true`) item.
#[derive(Debug)]
pub(crate) struct Sql {
    pub(crate) anywhere: bool,
    pub(crate) options: SqlOptions,
}

impl Assertion for Sql {
    fn describe(&self) -> String {
        let kind = if self.anywhere {
            "contains-sql"
        } else {
            "is-sql"
        };
        format!("{kind}({})", self.options.database)
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let text = value.text().unwrap_or_default();
        let verdict = if self.anywhere {
            sql_in_text(&text, &self.options)
        } else {
            sql_statement(&text, &self.options)
        };
        match verdict {
            Ok(()) => Grade::pass(format!(
                "{} is {} SQL",
                value.preview(),
                self.options.database
            )),
            Err(why) => Grade::fail(format!("{why} ({})", value.preview())),
        }
    }
}

#[cfg(test)]
mod tests;
