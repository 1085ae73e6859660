//! The dataset files of niceeval's `#[eval(cases = "..")]`: reads a `.jsonl`, `.json`, `.yaml` /
//! `.yml` or `.csv` file into [`Case`]s — each with its name, the line it starts on and its
//! record as JSON — and checks what makes a dataset unusable (a malformed line or row, a
//! duplicate id, no case at all). The `#[eval]` macro reads the file at compile time to name
//! one test per case; the runtime reads it again when a suite starts, so an edited file runs
//! without a rebuild. Both use this crate, so both name cases the same way. A run of a large
//! dataset reads it into an [`Index`] instead ([`index`]): each case's name and place, its
//! record read from the file when the case is asked for.
//!
//! Naming ([`case_name`]): a record's `id` field (a string or an integer) when it has one, else
//! its 1-based position zero-padded to the width of the case count; characters outside
//! `[A-Za-z0-9_]` become `_`, and a name starting with a digit (or one that cannot be a Rust
//! function name: `_`, `self`, `super`, `crate`, `Self`) gets the prefix `case_`.
//!
//! ```
//! use niceeval_dataset::{parse, Format};
//!
//! let cases = parse(
//!     "{\"id\": \"paris\", \"q\": \"Capital of France?\"}\n{\"q\": \"Capital of Peru?\"}\n",
//!     Format::Jsonl,
//!     "capitals.jsonl",
//! )?;
//! assert_eq!(cases[0].name, "paris");
//! assert_eq!(cases[1].name, "case_2");
//! assert_eq!(cases[1].line, 2);
//! # Ok::<(), niceeval_dataset::DatasetError>(())
//! ```

#![deny(missing_docs)]

mod index;
pub mod positions;

pub use index::{Index, index};

use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_json::value::RawValue;

/// One case of a dataset.
#[derive(Debug, Clone)]
pub struct Case {
    /// The record's own id as it is written (`"new-york"`, `42` → `"42"`), or, for a record
    /// without one, its 1-based position (`"7"`).
    pub id: String,
    /// The case's name: `paris`, `case_007` (see [`case_name`]).
    pub name: String,
    /// The 1-based line the record starts on (for CSV, the row's line).
    pub line: usize,
    /// The record, as JSON text (compact; from an [`Index`] of a JSONL file, its line as
    /// written): a record's text takes a fraction of the memory its parsed [`Value`] takes;
    /// parse it when the case runs (`serde_json::from_str(record.get())`).
    pub record: Box<RawValue>,
}

impl PartialEq for Case {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.name == other.name
            && self.line == other.line
            && self.record.get() == other.record.get()
    }
}

/// The formats a dataset file can have, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.jsonl`: one JSON object per line; blank lines are skipped.
    Jsonl,
    /// `.json`: an array of objects, or an object whose keys are case ids.
    Json,
    /// `.yaml` / `.yml`: a list of mappings.
    Yaml,
    /// `.csv`: a header row, then one case per row; every cell a string.
    Csv,
}

impl Format {
    /// The format of `path`, from its extension.
    ///
    /// ```
    /// use niceeval_dataset::Format;
    /// assert_eq!(Format::of("evals/capitals.yml".as_ref()).unwrap(), Format::Yaml);
    /// assert!(Format::of("evals/capitals.txt".as_ref()).is_err());
    /// ```
    pub fn of(path: &Path) -> Result<Format, DatasetError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") => Ok(Format::Jsonl),
            Some("json") => Ok(Format::Json),
            Some("yaml" | "yml") => Ok(Format::Yaml),
            Some("csv") => Ok(Format::Csv),
            _ => Err(DatasetError::UnknownFormat {
                path: path.to_path_buf(),
            }),
        }
    }
}

/// Why a dataset cannot be used. Every message names the file, and the line where there is
/// one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file could not be read.
    #[error("cannot read the dataset {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The extension is none of the known ones.
    #[error(
        "{}: unknown dataset format; name the file .jsonl, .json, .yaml, .yml or .csv",
        path.display()
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A line, row or item is not a record.
    #[error("{path}:{line}: {message}")]
    Malformed {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file as a whole has the wrong shape (not an array, not a list, no header).
    #[error("{path}: {message}")]
    Shape {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Two records have the same case name.
    #[error(
        "{path}:{second}: duplicate case `{name}`, also at line {first}; give each case its own `id`"
    )]
    Duplicate {
        /// The file.
        path: String,
        /// The name both have.
        name: String,
        /// The line of the first.
        first: usize,
        /// The line of the second.
        second: usize,
    },
    /// The file holds no case: an eval over it would pass having checked nothing.
    #[error("{path}: the dataset has no cases")]
    Empty {
        /// The file.
        path: String,
    },
}

/// Reads and parses the dataset at `path` (its format from the extension). A JSONL file is
/// read a line at a time: its text is never held whole beside its records (100,000 records
/// were 46 MB of text and as much again of records).
pub fn read(path: &Path) -> Result<Vec<Case>, DatasetError> {
    let format = Format::of(path)?;
    let unreadable = |source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    };
    let origin = path.display().to_string();
    if format == Format::Jsonl {
        use std::io::BufRead as _;
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut records = Vec::new();
        for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
            jsonl_line(&line.map_err(unreadable)?, index, &origin, &mut records)?;
        }
        return named(records, &origin);
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    parse(&text, format, &origin)
}

/// Parses a dataset's text; `origin` names the file in errors.
pub fn parse(text: &str, format: Format, origin: &str) -> Result<Vec<Case>, DatasetError> {
    let records = match format {
        Format::Jsonl => jsonl(text, origin)?,
        Format::Json => json(text, origin)?,
        Format::Yaml => yaml(text, origin)?,
        Format::Csv => csv_rows(text, origin)?,
    };
    named(records, origin)
}

/// The cases of `records`, named; none is an error.
fn named(records: Vec<Raw>, origin: &str) -> Result<Vec<Case>, DatasetError> {
    if records.is_empty() {
        return Err(DatasetError::Empty {
            path: origin.to_string(),
        });
    }
    name_cases(records, origin)
}

/// A record before naming: its line, the id it gives itself, and the record.
struct Raw {
    line: usize,
    id: Option<String>,
    record: Box<RawValue>,
}

fn malformed(origin: &str, line: usize, message: impl Into<String>) -> DatasetError {
    DatasetError::Malformed {
        path: origin.to_string(),
        line,
        message: message.into(),
    }
}

/// The `id` field of a record: a string or an integer; anything else is an error.
fn own_id(record: &Value, origin: &str, line: usize) -> Result<Option<String>, DatasetError> {
    id_of(record.get("id"), origin, line)
}

/// A record's own id from its `id` field (`None`: it has none).
fn id_of(id: Option<&Value>, origin: &str, line: usize) -> Result<Option<String>, DatasetError> {
    match id {
        // A blank id (an empty CSV cell) is no id: the case is named by its position.
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Some(n.to_string())),
        Some(other) => Err(malformed(
            origin,
            line,
            format!("`id` must be a string or an integer, not {other}"),
        )),
    }
}

fn record(value: Value, origin: &str, line: usize) -> Result<Raw, DatasetError> {
    if !value.is_object() {
        return Err(malformed(
            origin,
            line,
            format!(
                "a case must be an object (`{{\"question\": ..}}`), not {}",
                kind(&value)
            ),
        ));
    }
    let id = own_id(&value, origin, line)?;
    // Kept as text: the parsed value is dropped here, one record at a time.
    let record = serde_json::value::to_raw_value(&value)
        .map_err(|e| malformed(origin, line, format!("cannot keep the record: {e}")))?;
    Ok(Raw { line, id, record })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn jsonl(text: &str, origin: &str) -> Result<Vec<Raw>, DatasetError> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        jsonl_line(line, index, origin, &mut out)?;
    }
    Ok(out)
}

/// Line `index` (0-based) of a JSONL file: its record, unless it is blank.
fn jsonl_line(
    line: &str,
    index: usize,
    origin: &str,
    out: &mut Vec<Raw>,
) -> Result<(), DatasetError> {
    if line.trim().is_empty() {
        return Ok(());
    }
    let value: Value =
        serde_json::from_str(line).map_err(|e| not_a_record(origin, index + 1, &e))?;
    out.push(record(value, origin, index + 1)?);
    Ok(())
}

/// Line `line` of a JSONL file is not JSON.
fn not_a_record(origin: &str, line: usize, e: &serde_json::Error) -> DatasetError {
    malformed(
        origin,
        line,
        format!("not a JSON record (column {}): {e}", e.column()),
    )
}

/// The 1-based line of `part`, a slice of `text`.
fn line_of(text: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn json(text: &str, origin: &str) -> Result<Vec<Raw>, DatasetError> {
    let shape = |message: String| DatasetError::Shape {
        path: origin.to_string(),
        message,
    };
    let syntax = |e: serde_json::Error| malformed(origin, e.line(), format!("not JSON: {e}"));
    match text.trim_start().chars().next() {
        Some('[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(syntax)?;
            items
                .into_iter()
                .map(|raw| {
                    let line = line_of(text, raw.get());
                    let value: Value = serde_json::from_str(raw.get()).map_err(syntax)?;
                    record(value, origin, line)
                })
                .collect()
        }
        Some('{') => {
            let entries: KeyedEntries<'_> = serde_json::from_str(text).map_err(syntax)?;
            entries
                .0
                .into_iter()
                .map(|(key, raw)| {
                    let line = line_of(text, raw.get());
                    let value: Value = serde_json::from_str(raw.get()).map_err(syntax)?;
                    let mut raw = record(value, origin, line)?;
                    // The key is the case's id.
                    raw.id = Some(key);
                    Ok(raw)
                })
                .collect()
        }
        _ => Err(shape(
            "a JSON dataset is an array of cases, or an object whose keys are case ids".into(),
        )),
    }
}

/// A JSON object's entries in file order (serde_json's `Map` sorts them).
struct KeyedEntries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for KeyedEntries<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Entries<'a> {
            type Value = KeyedEntries<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object whose keys are case ids")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((key, value));
                }
                Ok(KeyedEntries(out))
            }
        }
        d.deserialize_map(Entries(std::marker::PhantomData))
    }
}

fn yaml(text: &str, origin: &str) -> Result<Vec<Raw>, DatasetError> {
    let value: Value = yaml_serde::from_str(text).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line());
        malformed(origin, line, format!("not YAML: {e}"))
    })?;
    let Value::Array(items) = value else {
        return Err(DatasetError::Shape {
            path: origin.to_string(),
            message: format!(
                "a YAML dataset is a list of cases (`- question: ..`), not {}",
                kind(&value)
            ),
        });
    };
    let lines = yaml_item_lines(text);
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| record(item, origin, lines.get(i).copied().unwrap_or(1)))
        .collect()
}

/// The lines where the items of a top-level YAML list start, as the workspace's one YAML
/// position finder ([`positions`]) places them (only used to point at an item in error messages
/// and reports). niceeval-suites' reader calls it too, so a promptfoo tests file's items are
/// placed on the lines this crate gives them. Empty when the text is not a YAML list.
#[doc(hidden)]
pub fn yaml_item_lines(text: &str) -> Vec<usize> {
    positions::Positions::root_items(text)
        .unwrap_or_default()
        .into_iter()
        .map(|(line, _)| line)
        .collect()
}

fn csv_rows(text: &str, origin: &str) -> Result<Vec<Raw>, DatasetError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| malformed(origin, 1, format!("not a CSV header row: {e}")))?
        .clone();
    if headers.is_empty() || headers.iter().all(|h| h.trim().is_empty()) {
        return Err(DatasetError::Shape {
            path: origin.to_string(),
            message: "a CSV dataset starts with a header row naming its columns".into(),
        });
    }
    let mut out = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map_or(1, |p| p.line() as usize);
            malformed(origin, line, format!("not a CSV row: {e}"))
        })?;
        let line = row.position().map_or(1, |p| p.line() as usize);
        let mut object = serde_json::Map::new();
        let mut asserts = Vec::new();
        for (header, cell) in headers.iter().zip(row.iter()) {
            if header == "__expected"
                || header
                    .strip_prefix("__expected")
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            {
                if !cell.trim().is_empty() {
                    asserts.push(expected_cell(cell));
                }
            } else if header == "__description" {
                object.insert("description".to_string(), Value::String(cell.to_string()));
            } else {
                object.insert(header.to_string(), Value::String(cell.to_string()));
            }
        }
        if !asserts.is_empty() {
            object.insert("assert".to_string(), Value::Array(asserts));
        }
        out.push(record(Value::Object(object), origin, line)?);
    }
    Ok(out)
}

/// The assertion types a promptfoo `__expected` cell may name (promptfoo's base assertion
/// types): `type`, `type: value`, `type(threshold): value`, each with an optional `not-`.
const EXPECTED_TYPES: &[&str] = &[
    "answer-relevance",
    "bleu",
    "classifier",
    "contains",
    "contains-all",
    "contains-any",
    "contains-html",
    "contains-json",
    "contains-sql",
    "contains-xml",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "cost",
    "equals",
    "factuality",
    "finish-reason",
    "g-eval",
    "gleu",
    "guardrails",
    "icontains",
    "icontains-all",
    "icontains-any",
    "is-html",
    "is-json",
    "is-refusal",
    "is-sql",
    "is-valid-function-call",
    "is-valid-openai-function-call",
    "is-valid-openai-tools-call",
    "is-xml",
    "javascript",
    "latency",
    "levenshtein",
    "llm-rubric",
    "meteor",
    "model-graded-closedqa",
    "model-graded-factuality",
    "moderation",
    "perplexity",
    "perplexity-score",
    "pi",
    "python",
    "regex",
    "rouge-n",
    "ruby",
    "select-best",
    "similar",
    "starts-with",
    "webhook",
    "word-count",
];

/// A promptfoo CSV `__expected` cell as an assertion item, parsed as promptfoo's
/// `assertionFromString` parses it: `fn:`, `eval:`, `javascript:` and `file://….js` are
/// JavaScript; `grade:` and `llm-rubric:` an LLM rubric; `python:` and `file://….py` Python;
/// `[not-]type[(threshold)][: value]` for any of promptfoo's assertion types (a bare type such
/// as `is-json`, `contains-json` or `is-xml` has no value; the `-all` / `-any` types split
/// their value on commas); anything else is `equals` with the whole cell.
///
/// ```
/// use niceeval_dataset::expected_cell;
/// use serde_json::json;
/// assert_eq!(expected_cell("icontains: paris"), json!({"type": "icontains", "value": "paris"}));
/// assert_eq!(expected_cell("similar(0.8): Paris"), json!({"type": "similar", "value": "Paris", "threshold": 0.8}));
/// assert_eq!(expected_cell("Paris"), json!({"type": "equals", "value": "Paris"}));
/// assert_eq!(expected_cell("is-json"), json!({"type": "is-json"}));
/// assert_eq!(expected_cell("contains-json"), json!({"type": "contains-json"}));
/// assert_eq!(expected_cell("not-is-xml"), json!({"type": "not-is-xml"}));
/// assert_eq!(expected_cell("contains-any: a, b"), json!({"type": "contains-any", "value": ["a", "b"]}));
/// ```
pub fn expected_cell(cell: &str) -> Value {
    let cell = cell.trim();
    let item = |kind: &str, value: &str| {
        let mut item = serde_json::Map::new();
        item.insert("type".into(), Value::String(kind.to_string()));
        item.insert("value".into(), Value::String(value.trim().to_string()));
        Value::Object(item)
    };
    for prefix in ["javascript:", "fn:", "eval:"] {
        if let Some(code) = cell.strip_prefix(prefix) {
            return item("javascript", code);
        }
    }
    if cell.starts_with("file://")
        && [".js", ".cjs", ".mjs", ".ts"]
            .iter()
            .any(|e| cell.ends_with(e) || cell.contains(&format!("{e}:")))
    {
        return item("javascript", cell);
    }
    for prefix in ["grade:", "llm-rubric:"] {
        if let Some(rubric) = cell.strip_prefix(prefix) {
            return item("llm-rubric", rubric);
        }
    }
    if let Some(code) = cell.strip_prefix("python:") {
        return item("python", code);
    }
    if cell.starts_with("file://") && (cell.ends_with(".py") || cell.contains(".py:")) {
        return item("python", cell);
    }
    let (head, value) = match cell.split_once(':') {
        Some((head, value)) => (head, Some(value)),
        None => (cell, None),
    };
    let (kind, threshold) = match head.split_once('(') {
        Some((kind, rest)) => match rest.strip_suffix(')').and_then(|t| {
            let valid = !t.is_empty()
                && t.chars().all(|c| c.is_ascii_digit() || c == '.')
                && t.matches('.').count() <= 1
                && !t.starts_with('.')
                && !t.ends_with('.');
            valid.then(|| t.parse::<f64>().ok()).flatten()
        }) {
            Some(threshold) => (kind, Some(threshold)),
            None => return equals(cell),
        },
        None => (head, None),
    };
    let base = kind.strip_prefix("not-").unwrap_or(kind);
    if !EXPECTED_TYPES.contains(&base) {
        return equals(cell);
    }
    let mut out = serde_json::Map::new();
    out.insert("type".into(), Value::String(kind.to_string()));
    match (base, value) {
        (_, None) => {}
        ("contains-all" | "contains-any" | "icontains-all" | "icontains-any", Some(v)) => {
            let items = v.split(',').map(|s| Value::String(s.trim().to_string()));
            out.insert("value".into(), Value::Array(items.collect()));
        }
        ("contains-json" | "is-json", Some(v)) => {
            if !v.trim().is_empty() {
                out.insert("value".into(), Value::String(v.to_string()));
            }
        }
        (_, Some(v)) => {
            out.insert("value".into(), Value::String(v.trim().to_string()));
        }
    }
    if let Some(threshold) = threshold {
        out.insert("threshold".into(), threshold.into());
    }
    Value::Object(out)
}

fn equals(cell: &str) -> Value {
    serde_json::json!({"type": "equals", "value": cell})
}

/// Names the records and refuses duplicates.
fn name_cases(records: Vec<Raw>, origin: &str) -> Result<Vec<Case>, DatasetError> {
    let width = records.len().to_string().len();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(records.len());
    for (index, raw) in records.into_iter().enumerate() {
        let (id, name) = match raw.id {
            Some(id) => {
                let name = case_name(&id);
                (id, name)
            }
            None => (
                (index + 1).to_string(),
                case_name(&format!("{:0width$}", index + 1)),
            ),
        };
        if let Some(first) = seen.insert(name.clone(), raw.line) {
            return Err(DatasetError::Duplicate {
                path: origin.to_string(),
                name,
                first,
                second: raw.line,
            });
        }
        out.push(Case {
            id,
            name,
            line: raw.line,
            record: raw.record,
        });
    }
    Ok(out)
}

/// The name of a case whose id (or zero-padded position) is `id`.
///
/// ```
/// use niceeval_dataset::case_name;
/// assert_eq!(case_name("paris"), "paris");
/// assert_eq!(case_name("São Paulo"), "S_o_Paulo");
/// assert_eq!(case_name("007"), "case_007");
/// assert_eq!(case_name("self"), "case_self");
/// ```
pub fn case_name(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let reserved = matches!(
        name.as_str(),
        "_" | "self" | "super" | "crate" | "Self" | ""
    );
    if reserved || name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("case_{name}")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(record: &RawValue) -> Value {
        serde_json::from_str(record.get()).expect("a record is JSON")
    }

    fn names(cases: &[Case]) -> Vec<(&str, usize)> {
        cases.iter().map(|c| (c.name.as_str(), c.line)).collect()
    }

    #[test]
    fn every_format_gives_the_same_cases() {
        let jsonl = parse(
            "{\"id\": \"paris\", \"a\": \"Paris\"}\n\n{\"a\": \"Lima\"}\n",
            Format::Jsonl,
            "c.jsonl",
        )
        .unwrap();
        assert_eq!(names(&jsonl), [("paris", 1), ("case_2", 3)]);
        let json = parse(
            "[\n  {\"id\": \"paris\", \"a\": \"Paris\"},\n  {\"a\": \"Lima\"}\n]",
            Format::Json,
            "c.json",
        )
        .unwrap();
        assert_eq!(names(&json), [("paris", 2), ("case_2", 3)]);
        let keyed = parse(
            "{\n \"zurich\": {\"a\": \"Bern\"},\n \"lima\": {\"a\": \"Lima\"}\n}",
            Format::Json,
            "c.json",
        )
        .unwrap();
        assert_eq!(names(&keyed), [("zurich", 2), ("lima", 3)]);
        let yaml = parse(
            "# capitals\n- id: paris\n  a: Paris\n- a: Lima\n",
            Format::Yaml,
            "c.yaml",
        )
        .unwrap();
        assert_eq!(names(&yaml), [("paris", 2), ("case_2", 4)]);
        let csv = parse("id,a\nparis,Paris\n,Lima\n", Format::Csv, "c.csv").unwrap();
        assert_eq!(names(&csv), [("paris", 2), ("case_2", 3)]);
        assert_eq!(value(&csv[1].record)["a"], "Lima");
    }

    #[test]
    fn a_case_keeps_its_own_id_beside_its_test_name() {
        let cases = parse(
            "{\"id\": \"new-york\"}\n{\"id\": 42}\n{\"q\": 1}\n",
            Format::Jsonl,
            "c.jsonl",
        )
        .unwrap();
        let ids: Vec<(&str, &str)> = cases
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect();
        assert_eq!(
            ids,
            [("new-york", "new_york"), ("42", "case_42"), ("3", "case_3")]
        );
    }

    #[test]
    fn positions_are_padded_to_the_width_of_the_count() {
        let text = "{\"q\": 1}\n".repeat(12);
        let cases = parse(&text, Format::Jsonl, "c.jsonl").unwrap();
        assert_eq!(cases[0].name, "case_01");
        assert_eq!(cases[11].name, "case_12");
        let cases = parse("{\"id\": 7}\n", Format::Jsonl, "c.jsonl").unwrap();
        assert_eq!(cases[0].name, "case_7");
    }

    #[test]
    fn bad_input_names_the_file_and_line() {
        let err = |text: &str, format| parse(text, format, "c.data").unwrap_err().to_string();
        assert!(
            err("{\"q\": 1}\n{\"q\": \n", Format::Jsonl).starts_with("c.data:2: not a JSON record"),
            "{}",
            err("{\"q\": 1}\n{\"q\": \n", Format::Jsonl)
        );
        assert_eq!(
            err(
                "{\"id\": \"a\"}\n{\"q\": 1}\n{\"id\": \"a\"}\n",
                Format::Jsonl
            ),
            "c.data:3: duplicate case `a`, also at line 1; give each case its own `id`"
        );
        assert!(err("[1, 2]", Format::Json).contains("c.data:1: a case must be an object"));
        assert!(err("{\"id\": [1]}\n", Format::Jsonl).contains("`id` must be"));
        assert_eq!(err("", Format::Jsonl), "c.data: the dataset has no cases");
        assert!(err("a: 1\n", Format::Yaml).contains("a YAML dataset is a list"));
        assert!(
            err("id,a\nx,1\ny,2,3\n", Format::Csv).starts_with("c.data:3: not a CSV row"),
            "{}",
            err("id,a\nx,1\ny,2,3\n", Format::Csv)
        );
        assert!(err("[{\"a\": 1}", Format::Json).starts_with("c.data:1: not JSON"));
        assert!(err("\"x\"", Format::Json).contains("an array of cases, or an object"));
    }

    #[test]
    fn a_missing_file_and_an_unknown_extension_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read(&dir.path().join("cases.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(missing.starts_with("cannot read the dataset "), "{missing}");
        let unknown = read(&dir.path().join("cases.txt")).unwrap_err().to_string();
        assert!(
            unknown.ends_with(
                "unknown dataset format; name the file .jsonl, .json, .yaml, .yml or .csv"
            )
        );
    }

    #[test]
    fn promptfoo_csv_columns_become_assertions_and_a_description() {
        let cases = parse(
            "question,__expected1,__expected2,__description\nCapital of France?,icontains: paris,not-contains: sorry,France\n",
            Format::Csv,
            "c.csv",
        )
        .unwrap();
        assert_eq!(
            value(&cases[0].record),
            serde_json::json!({
                "question": "Capital of France?",
                "description": "France",
                "assert": [
                    {"type": "icontains", "value": "paris"},
                    {"type": "not-contains", "value": "sorry"},
                ],
            })
        );
        assert_eq!(
            expected_cell("http://example.com"),
            serde_json::json!({"type": "equals", "value": "http://example.com"})
        );
        assert_eq!(
            expected_cell("fn: output.length < 10"),
            serde_json::json!({"type": "javascript", "value": "output.length < 10"})
        );
    }

    /// promptfoo's `assertionFromString`: a bare type is that type (it was `equals` for every
    /// type but `is-json`), the list types split on commas, code and rubric prefixes.
    #[test]
    fn expected_cells_parse_as_promptfoo_parses_them() {
        use serde_json::json;
        let cases = [
            ("contains-json", json!({"type": "contains-json"})),
            ("is-xml", json!({"type": "is-xml"})),
            ("not-is-json", json!({"type": "not-is-json"})),
            ("is-sql", json!({"type": "is-sql"})),
            (
                "latency(500)",
                json!({"type": "latency", "threshold": 500.0}),
            ),
            (
                "icontains-all: a ,b",
                json!({"type": "icontains-all", "value": ["a", "b"]}),
            ),
            (
                "not-contains-any: x",
                json!({"type": "not-contains-any", "value": ["x"]}),
            ),
            (
                "javascript: output === 'x'",
                json!({"type": "javascript", "value": "output === 'x'"}),
            ),
            (
                "eval: 1 + 1",
                json!({"type": "javascript", "value": "1 + 1"}),
            ),
            (
                "file://check.js",
                json!({"type": "javascript", "value": "file://check.js"}),
            ),
            (
                "python: output == 'x'",
                json!({"type": "python", "value": "output == 'x'"}),
            ),
            (
                "file://grade.py:check",
                json!({"type": "python", "value": "file://grade.py:check"}),
            ),
            (
                "llm-rubric: is polite",
                json!({"type": "llm-rubric", "value": "is polite"}),
            ),
            (
                "grade: is polite",
                json!({"type": "llm-rubric", "value": "is polite"}),
            ),
            ("regex: ^a:b$", json!({"type": "regex", "value": "^a:b$"})),
            (
                "Paris: the capital",
                json!({"type": "equals", "value": "Paris: the capital"}),
            ),
            (
                "similar(x): Paris",
                json!({"type": "equals", "value": "similar(x): Paris"}),
            ),
            ("equals", json!({"type": "equals"})),
        ];
        for (cell, want) in cases {
            assert_eq!(expected_cell(cell), want, "{cell}");
        }
    }
}
