//! Where node-sql-parser's MySQL grammar (promptfoo's, and so `is-sql`'s default) is narrower
//! than sqlparser's MySQL dialect, which also reads syntax of other databases: SQL that
//! sqlparser reads but node-sql-parser refuses is refused here too. Seen in promptfoo 0.123.1:
//! `ILIKE`, `TOP n`, `FETCH FIRST`, `ARRAY[...]`, a `PARTITION (...)` after a table, `NATURAL`
//! joins, `SELECT ALL`, the `HIGH_PRIORITY` and `STRAIGHT_JOIN` modifiers, and an unquoted
//! table name that is one of MySQL's reserved words (`FROM select`, `FROM order`).

use std::ops::ControlFlow;

use sqlparser::ast::{
    Distinct, Expr, ObjectName, Query, Select, Statement, TableFactor, Visit, Visitor,
};

/// MySQL's reserved words, as node-sql-parser's MySQL grammar lists them.
const RESERVED: &[&str] = &[
    "ALTER",
    "ALL",
    "ADD",
    "AND",
    "AS",
    "ASC",
    "ANALYZE",
    "ACCESSIBLE",
    "BEFORE",
    "BETWEEN",
    "BIGINT",
    "BLOB",
    "BOTH",
    "BY",
    "BOOLEAN",
    "CALL",
    "CASCADE",
    "CASE",
    "CHAR",
    "CHECK",
    "COLLATE",
    "CONDITION",
    "CONSTRAINT",
    "CONTINUE",
    "CONVERT",
    "CREATE",
    "CROSS",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURSOR",
    "DATABASE",
    "DATABASES",
    "DAY_HOUR",
    "DAY_MICROSECOND",
    "DAY_MINUTE",
    "DAY_SECOND",
    "DEC",
    "DECIMAL",
    "DECLARE",
    "DEFAULT",
    "DELAYED",
    "DELETE",
    "DESC",
    "DESCRIBE",
    "DETERMINISTIC",
    "DISTINCT",
    "DISTINCTROW",
    "DIV",
    "DROP",
    "DOUBLE",
    "DUAL",
    "ELSE",
    "EACH",
    "ELSEIF",
    "ENCLOSED",
    "ESCAPED",
    "EXCEPT",
    "EXISTS",
    "EXIT",
    "EXPLAIN",
    "FALSE",
    "FULL",
    "FROM",
    "FETCH",
    "FLOAT",
    "FLOAT4",
    "FLOAT8",
    "FOR",
    "FORCE",
    "FOREIGN",
    "FULLTEXT",
    "FUNCTION",
    "GENERATED",
    "GET",
    "GO",
    "GRANT",
    "GROUP",
    "GROUPING",
    "GROUPS",
    "HAVING",
    "HIGH_PRIORITY",
    "HOUR_MICROSECOND",
    "HOUR_MINUTE",
    "HOUR_SECOND",
    "IGNORE",
    "IN",
    "INNER",
    "INFILE",
    "INOUT",
    "INSENSITIVE",
    "INSERT",
    "INTERSECT",
    "INT",
    "INT1",
    "INT2",
    "INT3",
    "INT4",
    "INT8",
    "INTEGER",
    "INTERVAL",
    "INTO",
    "IO_AFTER_GTIDS",
    "IO_BEFORE_GTIDS",
    "IS",
    "ITERATE",
    "JOIN",
    "JSON_TABLE",
    "KEY",
    "KEYS",
    "KILL",
    "LAG",
    "LAST_VALUE",
    "LATERAL",
    "LEAD",
    "LEADING",
    "LEAVE",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LINEAR",
    "LINES",
    "LOAD",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "LOCK",
    "LONG",
    "LONGBLOB",
    "LONGTEXT",
    "LOOP",
    "LOW_PRIORITY",
    "MASTER_BIND",
    "MATCH",
    "MAXVALUE",
    "MEDIUMBLOB",
    "MEDIUMINT",
    "MEDIUMTEXT",
    "MIDDLEINT",
    "MINUTE_MICROSECOND",
    "MINUTE_SECOND",
    "MINUS",
    "MOD",
    "MODIFIES",
    "NATURAL",
    "NOT",
    "NO_WRITE_TO_BINLOG",
    "NTH_VALUE",
    "NTILE",
    "NULL",
    "NUMERIC",
    "OF",
    "ON",
    "OPTIMIZE",
    "OPTIMIZER_COSTS",
    "OPTION",
    "OPTIONALLY",
    "OR",
    "ORDER",
    "OUT",
    "OUTER",
    "OUTFILE",
    "OVER",
    "PARTITION",
    "PERCENT_RANK",
    "PRECISION",
    "PRIMARY",
    "PROCEDURE",
    "PURGE",
    "RANGE",
    "RANK",
    "READ",
    "READS",
    "READ_WRITE",
    "REAL",
    "RECURSIVE",
    "REFERENCES",
    "REGEXP",
    "RELEASE",
    "RENAME",
    "REPEAT",
    "REPLACE",
    "REQUIRE",
    "RESIGNAL",
    "RESTRICT",
    "RETURN",
    "REVOKE",
    "RIGHT",
    "RLIKE",
    "ROW",
    "ROWS",
    "ROW_NUMBER",
    "SCHEMA",
    "SCHEMAS",
    "SELECT",
    "SENSITIVE",
    "SEPARATOR",
    "SET",
    "SHOW",
    "SIGNAL",
    "SMALLINT",
    "SPATIAL",
    "SPECIFIC",
    "SQL",
    "SQLEXCEPTION",
    "SQLSTATE",
    "SQLWARNING",
    "SQL_BIG_RESULT",
    "SSL",
    "STARTING",
    "STORED",
    "STRAIGHT_JOIN",
    "TABLE",
    "TERMINATED",
    "THEN",
    "TINYBLOB",
    "TINYINT",
    "TINYTEXT",
    "TO",
    "TRAILING",
    "TRIGGER",
    "TRUE",
    "UNION",
    "UNIQUE",
    "UNLOCK",
    "UNSIGNED",
    "UPDATE",
    "USAGE",
    "USE",
    "USING",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "VALUES",
    "VARBINARY",
    "VARCHAR",
    "VARCHARACTER",
    "VARYING",
    "VIRTUAL",
    "VECTOR",
    "WHEN",
    "WHERE",
    "WHILE",
    "WINDOW",
    "WITH",
    "WRITE",
    "XOR",
    "YEAR_MONTH",
    "ZEROFILL",
];

struct Narrower;

impl Visitor for Narrower {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if query.fetch.is_some() {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        let modifiers = select
            .select_modifiers
            .as_ref()
            .is_some_and(|m| m.high_priority || m.straight_join);
        let natural = select.from.iter().any(|t| {
            t.joins
                .iter()
                .any(|j| j.to_string().trim_start().starts_with("NATURAL"))
        });
        if select.top.is_some() || modifiers || natural || select.distinct == Some(Distinct::All) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        let reserved = relation
            .0
            .last()
            .and_then(|p| p.as_ident())
            .is_some_and(|ident| {
                ident.quote_style.is_none()
                    && RESERVED.contains(&ident.value.to_ascii_uppercase().as_str())
            });
        if reserved {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { partitions, .. } = factor
            && !partitions.is_empty()
        {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if matches!(expr, Expr::ILike { .. } | Expr::Array(_)) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// Whether node-sql-parser's MySQL grammar refuses statements sqlparser read.
pub(super) fn refuses(statements: &[Statement]) -> bool {
    statements.iter().any(|s| s.visit(&mut Narrower).is_break())
}
