//! The tables and columns a SQL text touches, written as node-sql-parser's authorities (the
//! names promptfoo's `allowedTables` and `allowedColumns` are matched against), and the
//! whitelist check itself.
//!
//! A table is `action::database::table` (`select::null::users`, `insert::db::orders`), a column
//! `action::table::column` (`select::users::name`, `select::null::id` when it names no table;
//! an alias is read as its table). `SELECT *` is the column `select::null::(.*)`. Columns read
//! anywhere (the select list, `WHERE`, `ON`, `GROUP BY`, a value assigned) are `select` columns;
//! the columns an `UPDATE` sets are `update::null::column`, an `INSERT`'s named columns
//! `insert::table::column` (`insert::table::(.*)` without a list), a `DELETE` deletes
//! `delete::table::(.*)`. A whitelist entry is a regular expression that must match a whole
//! authority, in any case. These lists come from sqlparser's syntax tree, not
//! node-sql-parser's: for the statements above they agree; for other statements (DDL, `SHOW`,
//! procedures) they may not, and the order of the names in a reason may differ.

use std::ops::ControlFlow;

use sqlparser::ast::{
    AssignmentTarget, Expr, FromTable, ObjectName, ObjectType, SelectItem,
    SelectItemQualifiedWildcardKind, Statement, TableFactor, TableObject, Visit, Visitor,
};

/// The table and column authorities of some statements.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Authorities {
    pub(super) tables: Vec<String>,
    pub(super) columns: Vec<String>,
}

fn push(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The last part of a name (`db.users` → `users`) and the one before it, if any.
fn split(name: &ObjectName) -> (Option<String>, String) {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p.as_ident() {
            Some(ident) => ident.value.clone(),
            None => p.to_string(),
        })
        .collect();
    match parts.as_slice() {
        [] => (None, String::new()),
        [.., db, table] => (Some(db.clone()), table.clone()),
        [table] => (None, table.clone()),
    }
}

/// A column read somewhere: its qualifier (a table or an alias) and its name.
struct Read {
    action: &'static str,
    qualifier: Option<String>,
    column: String,
}

#[derive(Default)]
struct Collect {
    tables: Vec<String>,
    /// Tables the statement writes, which are not read again as `select` tables.
    targets: Vec<String>,
    aliases: Vec<(String, String)>,
    reads: Vec<Read>,
}

impl Collect {
    fn table(&mut self, action: &str, name: &ObjectName) {
        let (db, table) = split(name);
        let db = db.unwrap_or_else(|| "null".to_string());
        push(&mut self.tables, format!("{action}::{db}::{table}"));
    }

    fn read(&mut self, action: &'static str, qualifier: Option<String>, column: String) {
        self.reads.push(Read {
            action,
            qualifier,
            column,
        });
    }
}

impl Visitor for Collect {
    type Break = ();

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        let key = relation.to_string();
        if !self.targets.contains(&key) {
            self.table("select", relation);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name,
            alias: Some(alias),
            ..
        } = factor
        {
            self.aliases.push((alias.name.value.clone(), split(name).1));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &sqlparser::ast::Select) -> ControlFlow<()> {
        for item in &select.projection {
            match item {
                SelectItem::Wildcard(_) => self.read("select", None, "(.*)".into()),
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(n),
                    _,
                ) => {
                    self.read("select", Some(split(n).1), "(.*)".into());
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Identifier(ident) => self.read("select", None, ident.value.clone()),
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let column = parts[parts.len() - 1].value.clone();
                let qualifier = parts[parts.len() - 2].value.clone();
                self.read("select", Some(qualifier), column);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The authorities of `statements`.
pub(super) fn authorities(statements: &[Statement]) -> Authorities {
    let mut all = Authorities::default();
    for statement in statements {
        let mut c = Collect::default();
        match statement {
            Statement::Insert(insert) => {
                if let TableObject::TableName(name) = &insert.table {
                    c.targets.push(name.to_string());
                    let table = split(name).1;
                    if insert.columns.is_empty() {
                        c.read("insert", Some(table.clone()), "(.*)".into());
                    }
                    for column in &insert.columns {
                        c.read("insert", Some(table.clone()), split(column).1);
                    }
                    c.table("insert", name);
                }
            }
            Statement::Update(update) => {
                if let TableFactor::Table { name, .. } = &update.table.relation {
                    c.targets.push(name.to_string());
                    c.table("update", name);
                }
                for assignment in &update.assignments {
                    let columns = match &assignment.target {
                        AssignmentTarget::ColumnName(n) => vec![n],
                        AssignmentTarget::Tuple(ns) => ns.iter().collect(),
                    };
                    for n in columns {
                        c.read("update", None, split(n).1);
                    }
                }
            }
            Statement::Delete(delete) => {
                let from = match &delete.from {
                    FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
                };
                for table in from {
                    if let TableFactor::Table { name, .. } = &table.relation {
                        c.targets.push(name.to_string());
                        c.table("delete", name);
                        c.read("delete", Some(split(name).1), "(.*)".into());
                    }
                }
            }
            Statement::CreateTable(create) => {
                c.targets.push(create.name.to_string());
                c.table("create", &create.name);
                for column in &create.columns {
                    c.read("select", None, column.name.value.clone());
                    c.read("create", None, column.name.value.clone());
                }
            }
            Statement::Drop {
                object_type: ObjectType::Table,
                names,
                ..
            } => {
                for name in names {
                    c.targets.push(name.to_string());
                    c.table("DROP", name);
                }
            }
            _ => {}
        }
        let _ = statement.visit(&mut c);
        for table in c.tables {
            push(&mut all.tables, table);
        }
        for read in c.reads {
            let table = match read.qualifier {
                None => "null".to_string(),
                Some(q) => c
                    .aliases
                    .iter()
                    .find(|(alias, _)| *alias == q)
                    .map_or(q, |(_, table)| table.clone()),
            };
            push(
                &mut all.columns,
                format!("{}::{table}::{}", read.action, read.column),
            );
        }
    }
    all
}

/// A whitelist entry as JavaScript compiles it: `^entry$`, case-insensitive (an alternation in
/// the entry is not grouped: `a|b` allows what starts with `a` or ends with `b`).
pub(super) struct Entry(Result<fancy_regex::Regex, Box<fancy_regex::Error>>);

impl Entry {
    pub(super) fn new(text: &str) -> Entry {
        Entry(fancy_regex::Regex::new(&format!("(?i)^{text}$")).map_err(Box::new))
    }
}

/// Whether `whitelist` allows every authority (an empty whitelist allows all). Entries are
/// tried in order for each authority; one that is not a regular expression refuses the
/// statement when it is reached (JavaScript throws as it compiles it).
pub(super) fn allows(authorities: &[String], whitelist: &[Entry]) -> bool {
    whitelist.is_empty()
        || authorities.iter().all(|authority| {
            for entry in whitelist {
                match &entry.0 {
                    Ok(re) if re.is_match(authority).unwrap_or(false) => return true,
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
            false
        })
}
