use super::*;
use crate::base::assertion::{AssertionResult, Checkable};
use serde_json::json;

/// `(contains-sql?, output, value as JSON ("" for none), verdict)`: promptfoo 0.123.1's
/// verdicts (its handler run on each; `None` where it errors on the value; `not-` always gave
/// the opposite). The first 46 are the inputs of promptfoo's test/assertions/sql.test.ts
/// ("Basic tests", "Database Specific Syntax Tests", "White Table/Column List Tests"); then
/// whitelist shapes, statements across MySQL and PostgreSQL, every database name, values, and
/// `contains-sql` fences.
const VERDICTS: &[(bool, &str, &str, Option<bool>)] = &[
    (false, "SELECT id, name FROM users", "", Some(true)),
    (false, "SELECT DISTINCT name FROM users", "", Some(true)),
    (false, "select distinct id from users", "", Some(true)),
    (false, "SELECT SQL_NO_CACHE name FROM users", "", Some(true)),
    (
        false,
        "SELECT DISTINCT SQL_NO_CACHE name FROM users",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT 'select distinct first_name last_name from employees' AS sample",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT 1 /* select distinct first_name last_name from employees */",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT 1 -- select distinct first_name last_name from employees\n",
        "",
        Some(true),
    ),
    (false, "SELECT a b FROM t", "", Some(false)),
    (
        false,
        "SELECT DISTINCT first_name last_name FROM employees",
        "",
        Some(false),
    ),
    (
        false,
        "SELECT SQL_NO_CACHE first_name last_name FROM employees",
        "",
        Some(false),
    ),
    (false, "SELECT DISTINCTIVE name FROM users", "", Some(false)),
    (false, "", "", Some(false)),
    (false, "   ", "", Some(false)),
    (
        false,
        "SELECT * FROM orders ORDERY BY order_date",
        "",
        Some(false),
    ),
    (false, "SELECT * FROM select WHERE id = 1", "", Some(false)),
    (false, "DELETE employees WHERE id = 1", "", Some(false)),
    (
        false,
        "SELECT first_name last_name FROM employees",
        "",
        Some(false),
    ),
    (false, "SELECT * FROM `employees", "", Some(false)),
    (
        false,
        "SELECT * FROM `employees` WHERE `id` = 1",
        "",
        Some(true),
    ),
    (false, "SELECT `id, `name FROM `users", "", Some(false)),
    (false, "SELECT col1 col2 col3 FROM table1", "", Some(false)),
    (
        false,
        "SELECT DISTINCT \"display name\" FROM users",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT \"select distinct first_name last_name from employees\" AS sample",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT $$select distinct first_name last_name from employees$$ AS sample",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM employees WHERE id = 1 LOCK IN SHARE MODE",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT first_name, last_name FROM employees WHERE first_name ILIKE 'john%'",
        "{\"databaseType\": \"MySQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT first_name, last_name FROM employees WHERE first_name ILIKE 'john%'",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT generate_series(1, 10);",
        "{\"databaseType\": \"MySQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT * FROM table_name WHERE id IN (SELECT generate_series(1, 5));",
        "{\"databaseType\": \"MySQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT * FROM employees",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"(select|update|insert|delete)::null::departments\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT * FROM departments",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"(select|update|insert|delete)::null::departments\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT id FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::name\", \"update::null::id\"]}",
        Some(false),
    ),
    (
        false,
        "INSERT INTO department (dept_name, location) VALUES ('Sales', 'New York')",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"insert::department::dept_name\", \"insert::department::location\"]}",
        Some(true),
    ),
    (
        false,
        "UPDATE a SET id = 1",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"update::a::id\"]}",
        Some(true),
    ),
    (
        false,
        "UPDATE employee SET salary = 50000 WHERE id = 1",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"update::employee::salary\", \"select::employee::id\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT name FROM employees",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::employees::name\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM data WHERE id = 1",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::data_table\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT * FROM data_table WHERE id = 1",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::data_table\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM \"data_table\" WHERE id = 1",
        "{\"databaseType\": \"PostgreSQL\", \"allowedTables\": [\"select::null::data_table\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM \"data\" WHERE id = 1",
        "{\"databaseType\": \"PostgreSQL\", \"allowedTables\": [\"select::null::data_table\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT u.name, p.title FROM users u, posts p WHERE u.id = p.user_id",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::users\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT u.name, p.title FROM users u, posts p WHERE u.id = p.user_id",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::(users|posts)\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT u.name, p.title FROM users u JOIN posts p ON u.id = p.user_id",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::users::(name|id)\", \"select::posts::(title|user_id)\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT u.name, p.title FROM users u JOIN posts p ON u.id = p.user_id",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::users::name\", \"select::posts::title\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT * FROM users",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::name\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT * FROM users",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::.*\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT t.* FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::t::\\\\(\\\\.\\\\*\\\\)\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b IN (SELECT c FROM u)",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT a FROM t WHERE b IN (SELECT c FROM u)",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::(a|b)\"]}",
        Some(false),
    ),
    (
        false,
        "WITH c AS (SELECT a FROM t) SELECT a FROM c",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t\"]}",
        Some(false),
    ),
    (
        false,
        "WITH c AS (SELECT a FROM t) SELECT a FROM c",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::(t|c)\"]}",
        Some(true),
    ),
    (
        false,
        "INSERT INTO t SELECT a FROM u",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"insert::null::t\", \"select::null::u\"]}",
        Some(true),
    ),
    (
        false,
        "INSERT INTO t SELECT a FROM u",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::a\"]}",
        Some(false),
    ),
    (
        false,
        "INSERT INTO t SELECT a FROM u",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::a\", \"insert::t::.*\"]}",
        Some(true),
    ),
    (
        false,
        "DELETE FROM t WHERE a = 1",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"delete::null::t\"]}",
        Some(true),
    ),
    (
        false,
        "DELETE FROM t WHERE a = 1",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::a\"]}",
        Some(false),
    ),
    (
        false,
        "DELETE FROM t WHERE a = 1",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::a\", \"delete::t::.*\"]}",
        Some(true),
    ),
    (
        false,
        "UPDATE t SET a = b + 1",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"update::null::a\"]}",
        Some(false),
    ),
    (
        false,
        "UPDATE t SET a = b + 1",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"update::null::a\", \"select::null::b\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT count(*) FROM t GROUP BY a HAVING count(b) > 1 ORDER BY c",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::(a|b|c)\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT count(*) FROM t GROUP BY a HAVING count(b) > 1 ORDER BY c",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::(a|b)\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT a FROM db.t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::db::t\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM db.t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT A FROM T",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t\"], \"allowedColumns\": [\"select::null::a\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT 1",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": []}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"(\"]}",
        Some(false),
    ),
    (
        false,
        "SELECT 1",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"(\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"x|select::null::t\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t|x\"]}",
        Some(true),
    ),
    (
        false,
        "SELEC a FROM t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"select::null::t\"]}",
        Some(false),
    ),
    (
        false,
        "CREATE TABLE t (a INT)",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"create::null::t\"]}",
        Some(true),
    ),
    (
        false,
        "DROP TABLE t",
        "{\"databaseType\": \"MySQL\", \"allowedTables\": [\"drop::null::t\"]}",
        Some(true),
    ),
    (
        false,
        "SELECT a AS x FROM t ORDER BY x",
        "{\"databaseType\": \"MySQL\", \"allowedColumns\": [\"select::null::a\"]}",
        Some(false),
    ),
    (false, "SELECT a FROM t;", "", Some(true)),
    (false, "hello world", "", Some(false)),
    (false, "SELECT a FROM t WHERE", "", Some(false)),
    (false, "SELECT 1; ", "", Some(true)),
    (false, "SELECT a FROM t; SELECT b FROM u", "", Some(true)),
    (false, "BEGIN", "", Some(true)),
    (false, "SHOW TABLES", "", Some(true)),
    (false, "EXPLAIN SELECT 1", "", Some(true)),
    (false, "select a from t limit 10 offset 5", "", Some(true)),
    (false, "select a from t limit 5, 10", "", Some(true)),
    (false, "select a::int from t", "", Some(true)),
    (
        false,
        "select a from t where b is not null and c like \"x%\"",
        "",
        Some(true),
    ),
    (false, "select * from t where a = ?", "", Some(true)),
    (
        false,
        "select sum(a) over (partition by b) from t",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM t1 LEFT JOIN t2 USING (id)",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT CASE WHEN a > 1 THEN \"x\" ELSE \"y\" END FROM t",
        "",
        Some(true),
    ),
    (false, "INSERT INTO t VALUES (1, 2)", "", Some(true)),
    (
        false,
        "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
        "",
        Some(true),
    ),
    (false, "REPLACE INTO t VALUES (1)", "", Some(true)),
    (
        false,
        "UPDATE t SET a = 1 ORDER BY b LIMIT 1",
        "",
        Some(true),
    ),
    (false, "DELETE FROM t ORDER BY a LIMIT 1", "", Some(true)),
    (false, "SELECT * FROM t FOR UPDATE", "", Some(true)),
    (false, "SELECT @x := 1", "", Some(true)),
    (
        false,
        "SELECT a FROM t GROUP BY a WITH ROLLUP",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE a REGEXP \"x\"",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT DATE_ADD(NOW(), INTERVAL 1 DAY)",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM t WHERE id = 1 LOCK IN SHARE MODE",
        "",
        Some(true),
    ),
    (false, "SELECT TOP 5 a FROM t", "", Some(false)),
    (false, "SELECT [a] FROM [t]", "", Some(false)),
    (
        false,
        "SELECT a FROM t FETCH FIRST 5 ROWS ONLY",
        "",
        Some(false),
    ),
    (false, "SELECT \"a\" FROM t", "", Some(true)),
    (false, "SELECT a FROM t WHERE b = 'it''s'", "", Some(true)),
    (false, "SELECT a FROM t WHERE b = 'it\\'s'", "", Some(true)),
    (false, "SELECT ARRAY[1,2]", "", Some(false)),
    (false, "SELECT a FROM t WHERE b ILIKE 'x'", "", Some(false)),
    (
        false,
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10))",
        "",
        Some(true),
    ),
    (false, "ALTER TABLE t ADD COLUMN c INT", "", Some(true)),
    (false, "DROP TABLE IF EXISTS t", "", Some(true)),
    (false, "TRUNCATE TABLE t", "", Some(true)),
    (false, "SELECT 1 UNION SELECT 2", "", Some(true)),
    (false, "SELECT 1 INTERSECT SELECT 2", "", Some(true)),
    (
        false,
        "WITH RECURSIVE c AS (SELECT 1) SELECT * FROM c",
        "",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t AS x JOIN u AS y ON x.id = y.id",
        "",
        Some(true),
    ),
    (false, "SELECT COUNT(DISTINCT a) FROM t", "", Some(true)),
    (
        false,
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u)",
        "",
        Some(true),
    ),
    (false, "select", "", Some(false)),
    (false, "SELECT * FROM", "", Some(false)),
    (false, "SELECT 1 +", "", Some(false)),
    (false, "Here is the query: SELECT 1", "", Some(false)),
    (false, "SELECT 1 -- trailing comment", "", Some(true)),
    (false, "/* c */ SELECT 1", "", Some(true)),
    (false, "SELECT `a` FROM `t`", "", Some(true)),
    (
        false,
        "SELECT a FROM t WHERE b BETWEEN 1 AND 2",
        "",
        Some(true),
    ),
    (false, "SELECT CAST(a AS SIGNED) FROM t", "", Some(true)),
    (false, "SELECT CONVERT(a, CHAR) FROM t", "", Some(true)),
    (false, "SELECT a FROM t PARTITION (p0)", "", Some(false)),
    (false, "SELECT STRAIGHT_JOIN a FROM t", "", Some(false)),
    (false, "SELECT HIGH_PRIORITY a FROM t", "", Some(false)),
    (false, "SELECT SQL_CALC_FOUND_ROWS a FROM t", "", Some(true)),
    (false, "SELECT DISTINCTROW a FROM t", "", Some(false)),
    (false, "SELECT a FROM t1 NATURAL JOIN t2", "", Some(false)),
    (
        false,
        "SELECT * FROM t WHERE MATCH(a) AGAINST(\"x\")",
        "",
        Some(true),
    ),
    (false, "SELECT 0x1F", "", Some(true)),
    (false, "SELECT b'101'", "", Some(true)),
    (
        false,
        "SELECT JSON_EXTRACT(a, \"$.x\") FROM t",
        "",
        Some(true),
    ),
    (false, "SELECT a->\"$.x\" FROM t", "", Some(true)),
    (false, "SELECT a->>\"$.x\" FROM t", "", Some(true)),
    (
        false,
        "SELECT a FROM t LIMIT 1 OFFSET 2",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a::int FROM t",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b ~ 'x'",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT * FROM generate_series(1, 3)",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "INSERT INTO t (a) VALUES (1) RETURNING a",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "INSERT INTO t (a) VALUES (1) ON CONFLICT DO NOTHING",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT DISTINCT ON (a) a, b FROM t",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t LIMIT 5, 10",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT `a` FROM t",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT \"a\" FROM \"t\"",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = ANY(ARRAY[1,2])",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT now()::date",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT $1",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b IS DISTINCT FROM c",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT jsonb_build_object('a', 1)",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "UPDATE t SET a = 1 FROM u WHERE t.id = u.id",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t FOR UPDATE SKIP LOCKED",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT E'x'",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT 'a' || 'b'",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"mysql\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Oracle\"}",
        Some(false),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Foo\"}",
        Some(false),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Sqlite\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"TransactSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"BigQuery\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Snowflake\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"DB2\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Athena\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Trino\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"FlinkSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Hive\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Redshift\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"Noql\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"MariaDB\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t WHERE b = 1",
        "{\"databaseType\": \"postgresql\"}",
        Some(true),
    ),
    (
        false,
        "SELECT [a] FROM [t]",
        "{\"databaseType\": \"Sqlite\"}",
        Some(false),
    ),
    (
        false,
        "SELECT TOP 5 [a] FROM [t]",
        "{\"databaseType\": \"TransactSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM `proj.ds.t`",
        "{\"databaseType\": \"BigQuery\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t LIMIT 5 OFFSET 1",
        "{\"databaseType\": \"Sqlite\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t LIMIT 5",
        "{\"databaseType\": \"TransactSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t LATERAL VIEW explode(b) x AS c",
        "{\"databaseType\": \"Hive\"}",
        Some(false),
    ),
    (
        false,
        "SELECT a FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY a) = 1",
        "{\"databaseType\": \"Snowflake\"}",
        Some(true),
    ),
    (
        false,
        "SELECT * EXCEPT (a) FROM t",
        "{\"databaseType\": \"BigQuery\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a FROM t",
        "{\"databaseType\": \"mariadb\"}",
        Some(true),
    ),
    (
        false,
        "SELECT generate_series(1,2)",
        "{\"databaseType\": \"MariaDB\"}",
        Some(true),
    ),
    (
        false,
        "SELECT generate_series(1,2)",
        "{\"databaseType\": \"mysql\"}",
        Some(true),
    ),
    (
        false,
        "SELECT SQL_NO_CACHE first_name last_name FROM employees",
        "{\"databaseType\": \"mysql\"}",
        Some(true),
    ),
    (
        false,
        "SELECT [a] [b] FROM t",
        "{\"databaseType\": \"TransactSQL\"}",
        Some(true),
    ),
    (
        false,
        "SELECT a b FROM t",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT all a FROM t",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(false),
    ),
    (
        false,
        "SELECT distinct a b FROM t",
        "{\"databaseType\": \"PostgreSQL\"}",
        Some(false),
    ),
    (false, "SELECT 1", "\"x\"", None),
    (false, "SELECT 1", "5", None),
    (false, "SELECT 1", "true", None),
    (false, "SELECT 1", "0", Some(true)),
    (false, "SELECT 1", "false", Some(true)),
    (false, "SELECT 1", "\"\"", Some(true)),
    (false, "SELECT 1", "[]", Some(true)),
    (false, "SELECT 1", "[\"x\"]", Some(true)),
    (false, "SELECT 1", "{\"databaseType\": \"\"}", Some(true)),
    (
        true,
        "Result:\n```sql\nSELECT DISTINCT name FROM users\n```",
        "",
        Some(true),
    ),
    (true, "Here you go:\n```\nSELECT 1\n```", "", Some(true)),
    (true, "```python\nprint(1)\n```\nSELECT 1", "", Some(false)),
    (true, "```python\nprint(1)\n```", "", Some(false)),
    (
        true,
        "```sql\nSELEC 1\n```\n```sql\nSELECT 2\n```",
        "",
        Some(true),
    ),
    (
        true,
        "```sql\nSELECT 2\n```\n```sql\nSELEC 1\n```",
        "",
        Some(true),
    ),
    (true, "```sql\nSELEC 1\n```", "", Some(false)),
    (true, "SELECT 1", "", Some(true)),
    (true, "The answer is 42", "", Some(false)),
    (true, "", "", Some(false)),
    (true, "```sql\n\n```", "", Some(false)),
    (true, "~~~sql\nSELECT 1\n~~~", "", Some(true)),
    (true, "````sql\nSELECT 1\n```\n````", "", Some(false)),
    (true, "   ```sql\nSELECT 1\n   ```", "", Some(true)),
    (true, "```sql\nSELECT 1", "", Some(false)),
    (true, "```SQL \nSELECT 1\n```  ", "", Some(true)),
    (true, "```sql\r\nSELECT 1\r\n```", "", Some(true)),
    (
        true,
        "```sql\nSELECT * FROM employees\n```",
        "{\"allowedTables\": [\"select::null::departments\"]}",
        Some(false),
    ),
    (
        true,
        "```sql\nSELECT * FROM departments\n```",
        "{\"allowedTables\": [\"select::null::departments\"]}",
        Some(true),
    ),
    (true, "Use this: SELECT 1", "", Some(false)),
    (true, "```mysql\nSELECT 1\n```", "", Some(false)),
];

fn options(value: &str) -> Result<SqlOptions, String> {
    if value.is_empty() {
        return sql_options(None).map_err(|e| e.to_string());
    }
    let value: Value = serde_json::from_str(value).map_err(|e| e.to_string())?;
    sql_options(Some(&value)).map_err(|e| e.to_string())
}

fn verdict(anywhere: bool, text: &str, value: &str) -> Option<bool> {
    let options = options(value).ok()?;
    Some(if anywhere {
        sql_in_text(text, &options).is_ok()
    } else {
        sql_statement(text, &options).is_ok()
    })
}

/// Where sqlparser and node-sql-parser disagree: `(database, SQL, promptfoo's verdict)`;
/// niceeval gives the opposite verdict on each. None is from promptfoo's own tests.
const DISAGREE: &[(&str, &str, bool)] = &[
    // sqlparser's MySQL dialect has no `LOCK IN SHARE MODE`.
    (
        "MySQL",
        "SELECT * FROM t WHERE id = 1 LOCK IN SHARE MODE",
        true,
    ),
    // sqlparser reads DISTINCTROW as DISTINCT, so the tree cannot tell it apart.
    ("MySQL", "SELECT DISTINCTROW a FROM t", false),
    // node-sql-parser's PostgreSQL takes backtick names; sqlparser's does not.
    ("PostgreSQL", "SELECT `a` FROM t", true),
    // node-sql-parser's PostgreSQL has no `SKIP LOCKED`, nor `SELECT ALL`.
    (
        "PostgreSQL",
        "SELECT a FROM t FOR UPDATE SKIP LOCKED",
        false,
    ),
    ("PostgreSQL", "SELECT all a FROM t", false),
    // node-sql-parser's SQLite has no bracketed names.
    ("Sqlite", "SELECT [a] FROM [t]", false),
    // node-sql-parser's Hive has no LATERAL VIEW.
    (
        "Hive",
        "SELECT a FROM t LATERAL VIEW explode(b) x AS c",
        false,
    ),
];

#[test]
fn promptfoos_verdicts() {
    let mut wrong = Vec::new();
    for (anywhere, text, value, expected) in VERDICTS {
        let got = verdict(*anywhere, text, value);
        let known = DISAGREE.iter().any(|(_, sql, _)| sql == text && !anywhere);
        if got != *expected && !known {
            wrong.push(format!(
                "{anywhere} {text:?} {value}: promptfoo {expected:?}, niceeval {got:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_disagreements_are_the_parsers() {
    for (database, sql, promptfoo) in DISAGREE {
        let value = json!({ "databaseType": database }).to_string();
        assert_eq!(verdict(false, sql, &value), Some(!promptfoo), "{sql}");
    }
}

/// The reasons promptfoo's tests expect whole ("should fail if the output SQL statement violate
/// allowedTables", "... allowedColumns", the syntax failures).
#[test]
fn promptfoos_reasons() {
    let check = |sql: &str, value: serde_json::Value| {
        sql_statement(sql, &sql_options(Some(&value)).unwrap())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        check(
            "SELECT * FROM employees",
            json!({"databaseType": "MySQL", "allowedTables": ["(select|update|insert|delete)::null::departments"]})
        ),
        "SQL references unauthorized table(s). Found: [select::null::employees]. Allowed: [(select|update|insert|delete)::null::departments]."
    );
    assert_eq!(
        check(
            "SELECT id FROM t",
            json!({"databaseType": "MySQL", "allowedColumns": ["select::null::name", "update::null::id"]})
        ),
        "SQL references unauthorized column(s). Found: [select::null::id]. Allowed: [select::null::name, update::null::id]."
    );
    assert_eq!(
        check("SELECT * FROM orders ORDERY BY order_date", json!({})),
        "SQL statement does not conform to the provided MySQL database syntax."
    );
    assert_eq!(
        check(
            "SELECT first_name, last_name FROM employees WHERE first_name ILIKE 'john%'",
            json!({"databaseType": "MySQL"})
        ),
        "SQL statement does not conform to the provided MySQL database syntax."
    );
    assert!(sql_options(Some(&json!("x"))).is_err());
    assert!(sql_options(Some(&json!({"allowedTables": "t"}))).is_err());
}

/// node-sql-parser's lists for these statements (its `parse(..).tableList` and `columnList`,
/// compared as sets: the order differs).
#[test]
fn authorities_as_node_sql_parser_lists_them() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "SELECT id, name FROM users",
            &["select::null::users"],
            &["select::null::id", "select::null::name"],
        ),
        (
            "SELECT * FROM users",
            &["select::null::users"],
            &["select::null::(.*)"],
        ),
        (
            "SELECT u.name, p.title FROM users u, posts p WHERE u.id = p.user_id",
            &["select::null::users", "select::null::posts"],
            &[
                "select::users::name",
                "select::posts::title",
                "select::users::id",
                "select::posts::user_id",
            ],
        ),
        (
            "SELECT u.name FROM users AS u JOIN db.posts p ON p.uid = u.id",
            &["select::null::users", "select::db::posts"],
            &[
                "select::users::name",
                "select::posts::uid",
                "select::users::id",
            ],
        ),
        (
            "UPDATE employee SET salary = 50000 WHERE id = 1",
            &["update::null::employee"],
            &["select::null::id", "update::null::salary"],
        ),
        (
            "INSERT INTO department (dept_name, location) VALUES ('Sales', 'New York')",
            &["insert::null::department"],
            &[
                "insert::department::dept_name",
                "insert::department::location",
            ],
        ),
        (
            "DELETE FROM t WHERE a = 1",
            &["delete::null::t"],
            &["select::null::a", "delete::t::(.*)"],
        ),
        (
            "SELECT count(*) FROM t GROUP BY a HAVING count(b) > 1 ORDER BY c",
            &["select::null::t"],
            &["select::null::a", "select::null::b", "select::null::c"],
        ),
        (
            "SELECT a FROM (SELECT b AS a FROM t) x",
            &["select::null::t"],
            &["select::null::a", "select::null::b"],
        ),
        (
            "WITH c AS (SELECT a FROM t) SELECT a FROM c",
            &["select::null::t", "select::null::c"],
            &["select::null::a"],
        ),
        (
            "SELECT a FROM t; SELECT b FROM u",
            &["select::null::t", "select::null::u"],
            &["select::null::a", "select::null::b"],
        ),
        ("SELECT 1", &[], &[]),
        (
            "SELECT t.* FROM t",
            &["select::null::t"],
            &["select::t::(.*)"],
        ),
        (
            "SELECT a FROM t WHERE b IN (SELECT c FROM u)",
            &["select::null::u", "select::null::t"],
            &["select::null::a", "select::null::b", "select::null::c"],
        ),
        (
            "CREATE TABLE t (a INT)",
            &["create::null::t"],
            &["select::null::a", "create::null::a"],
        ),
        (
            "INSERT INTO t SELECT a FROM u",
            &["select::null::u", "insert::null::t"],
            &["select::null::a", "insert::t::(.*)"],
        ),
        (
            "UPDATE t SET a = b + 1",
            &["update::null::t"],
            &["select::null::b", "update::null::a"],
        ),
        (
            "select concat(a, b) from t where lower(c) = 'x'",
            &["select::null::t"],
            &["select::null::a", "select::null::b", "select::null::c"],
        ),
    ];
    let dialect = MySqlDialect {};
    for (sql, tables, columns) in cases {
        let statements = Parser::parse_sql(&dialect, sql).unwrap();
        let found = authority::authorities(&statements);
        let sorted = |v: &[&str]| {
            let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        };
        let mut got_tables = found.tables.clone();
        got_tables.sort();
        let mut got_columns = found.columns.clone();
        got_columns.sort();
        assert_eq!(got_tables, sorted(tables), "{sql}");
        assert_eq!(got_columns, sorted(columns), "{sql}");
    }
}

#[test]
fn fences_and_the_item() {
    assert_eq!(
        sql_blocks("Result:\n```sql\nSELECT DISTINCT name FROM users\n```"),
        ["SELECT DISTINCT name FROM users"]
    );
    assert_eq!(
        sql_blocks("```python\nx\n```\n```\nSELECT 1\n```"),
        ["SELECT 1"]
    );
    assert!(sql_blocks("```sql\nSELECT 1").is_empty());
    let item = Sql {
        anywhere: true,
        options: sql_options(None).unwrap(),
    };
    let r = AssertionResult::evaluate(&item, &"Here:\n```sql\nSELECT 1\n```".subject());
    assert!(r.passed && r.score == 1.0);
    assert_eq!(item.describe(), "contains-sql(MySQL)");
}
