//! A dataset's cases by name, their records left in the file: what a run of a large dataset
//! holds — a few bytes a case (its name, its line, where its record starts) — while each case's
//! record is read again when its turn to run comes ([`Index::case`]). A JSONL file is read a
//! line at a time and kept open; the other formats are parsed whole, as [`crate::read`] parses
//! them, and their cases kept (a JSON, YAML or CSV file is held whole to be parsed anyway).
//!
//! The index checks what [`crate::read`] checks, with the same errors: a malformed line, a
//! duplicate name, no case at all. A case reads the same through either.

use std::io::{BufRead as _, Read as _, Seek as _};
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use crate::{Case, DatasetError, Format};

/// The cases of one dataset file, named, in file order.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("capitals.jsonl");
/// std::fs::write(&path, "{\"id\": \"paris\", \"q\": \"France?\"}\n\n{\"q\": \"Peru?\"}\n")?;
/// let index = niceeval_dataset::index(&path)?;
/// assert_eq!(index.len(), 2);
/// assert_eq!((index.name(1), index.line(1)), ("case_2", 3));
/// assert_eq!(index.position("paris"), Some(0));
/// let case = index.case(1)?;
/// assert_eq!((case.id.as_str(), case.record.get()), ("2", r#"{"q": "Peru?"}"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Index {
    /// The file, as errors name it.
    origin: String,
    /// Every case's name, one after the other.
    names: String,
    /// Where each case's name ends in `names`.
    name_ends: Vec<u32>,
    /// Each case's 1-based line.
    lines: Vec<u32>,
    /// The cases' positions ordered by name: a name is found by binary search.
    by_name: Vec<u32>,
    records: Records,
}

/// Where an index finds its cases' records.
#[derive(Debug)]
enum Records {
    /// A JSONL file, kept open (a file replaced since keeps its old text for this index): where
    /// each case's line starts, then the file's length when it was read.
    Lines {
        file: Mutex<std::fs::File>,
        starts: Vec<u64>,
    },
    /// The cases of a file parsed whole.
    Kept(Vec<Case>),
}

/// Reads the dataset at `path` into an [`Index`] (its format from the extension): every
/// record is checked as [`crate::read`] checks it, and a JSONL file's records are left in the
/// file.
pub fn index(path: &Path) -> Result<Index, DatasetError> {
    let format = Format::of(path)?;
    let origin = path.display().to_string();
    let unreadable = |source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    };
    if format != Format::Jsonl {
        let cases = crate::read(path)?;
        let mut index = Index::empty(origin);
        for case in &cases {
            index.push(&case.name, case.line);
        }
        index.records = Records::Kept(cases);
        index.order()?;
        return Ok(index);
    }
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, &file);
    let mut index = Index::empty(origin);
    let mut starts = Vec::new();
    let mut positional = false;
    let mut offset = 0u64;
    let mut bytes = Vec::new();
    for number in 1.. {
        bytes.clear();
        let read = reader.read_until(b'\n', &mut bytes).map_err(unreadable)?;
        if read == 0 {
            break;
        }
        let start = offset;
        offset += read as u64;
        let line = text_of_line(&bytes).map_err(unreadable)?;
        if line.trim().is_empty() {
            continue;
        }
        let id = head(line, &index.origin, number)?;
        match id {
            Some(id) => index.push(&crate::case_name(&id), number),
            // Named by its position once the count (the padding's width) is known.
            None => {
                positional = true;
                index.push("", number);
            }
        }
        starts.push(start);
    }
    starts.push(offset);
    drop(reader);
    if index.is_empty() {
        return Err(DatasetError::Empty { path: index.origin });
    }
    if positional {
        index.name_positions();
    }
    index.records = Records::Lines {
        file: Mutex::new(file),
        starts,
    };
    index.order()?;
    Ok(index)
}

/// A line's text without its line ending; text that is not UTF-8 is the error reading it by
/// lines gives.
fn text_of_line(bytes: &[u8]) -> std::io::Result<&str> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Checks that `line` (line `number` of the file) is a record as [`crate::read`] would keep it,
/// and returns its own id: the other fields are skipped, not built.
fn head(line: &str, origin: &str, number: usize) -> Result<Option<String>, DatasetError> {
    match serde_json::from_str::<Head>(line) {
        Ok(Head::Object(id)) => crate::id_of(id.as_ref(), origin, number),
        // The message names what it is: built as the full read builds it.
        Ok(Head::NotObject) => {
            let value: Value =
                serde_json::from_str(line).map_err(|e| crate::not_a_record(origin, number, &e))?;
            crate::record(value, origin, number).map(|raw| raw.id)
        }
        Err(e) => Err(crate::not_a_record(origin, number, &e)),
    }
}

/// What the index reads of a JSONL record: whether it is an object, and its `id` field (the
/// last one, as a parsed object keeps it).
enum Head {
    Object(Option<Value>),
    NotObject,
}

impl<'de> serde::Deserialize<'de> for Head {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Head;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON record")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Head, M::Error> {
                let mut id = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "id" {
                        id = Some(map.next_value::<Value>()?);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(Head::Object(id))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut seq: S) -> Result<Head, S::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Head::NotObject)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Head, E> {
                Ok(Head::NotObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Head, E> {
                Ok(Head::NotObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Head, E> {
                Ok(Head::NotObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Head, E> {
                Ok(Head::NotObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<Head, E> {
                Ok(Head::NotObject)
            }
            fn visit_unit<E>(self) -> Result<Head, E> {
                Ok(Head::NotObject)
            }
        }
        d.deserialize_any(Visit)
    }
}

impl Index {
    fn empty(origin: String) -> Index {
        Index {
            origin,
            names: String::new(),
            name_ends: Vec::new(),
            lines: Vec::new(),
            by_name: Vec::new(),
            records: Records::Kept(Vec::new()),
        }
    }

    fn push(&mut self, name: &str, line: usize) {
        self.names.push_str(name);
        self.name_ends.push(self.names.len() as u32);
        self.lines.push(u32::try_from(line).unwrap_or(u32::MAX));
    }

    /// Names the cases without an id of their own (an empty name) by their position, padded
    /// to the width of the count, as [`crate::read`] names them.
    fn name_positions(&mut self) {
        let width = self.len().to_string().len();
        let names = std::mem::take(&mut self.names);
        let mut start = 0;
        for (i, end) in self.name_ends.iter_mut().enumerate() {
            let name = &names[start..*end as usize];
            start = *end as usize;
            if name.is_empty() {
                self.names
                    .push_str(&crate::case_name(&format!("{:0width$}", i + 1)));
            } else {
                self.names.push_str(name);
            }
            *end = self.names.len() as u32;
        }
    }

    /// Orders the cases by name, refusing a name two cases share: the error [`crate::read`]
    /// gives, at the first case in file order whose name an earlier case has.
    fn order(&mut self) -> Result<(), DatasetError> {
        let mut by_name: Vec<u32> = (0..self.len() as u32).collect();
        by_name.sort_unstable_by(|a, b| {
            self.name(*a as usize)
                .cmp(self.name(*b as usize))
                .then(a.cmp(b))
        });
        let duplicate = by_name
            .windows(2)
            .filter(|w| self.name(w[0] as usize) == self.name(w[1] as usize))
            .min_by_key(|w| w[1]);
        if let Some(w) = duplicate {
            return Err(DatasetError::Duplicate {
                path: self.origin.clone(),
                name: self.name(w[1] as usize).to_string(),
                first: self.line(w[0] as usize),
                second: self.line(w[1] as usize),
            });
        }
        self.by_name = by_name;
        Ok(())
    }

    /// How many cases.
    pub fn len(&self) -> usize {
        self.name_ends.len()
    }

    /// Whether there are none (never, for an index [`index`] read).
    pub fn is_empty(&self) -> bool {
        self.name_ends.is_empty()
    }

    /// Case `i`'s name (`i` below [`Index::len`]).
    pub fn name(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |p| self.name_ends[p] as usize);
        &self.names[start..self.name_ends[i] as usize]
    }

    /// Case `i`'s 1-based line.
    pub fn line(&self, i: usize) -> usize {
        self.lines[i] as usize
    }

    /// The position of the case named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name
            .binary_search_by(|i| self.name(*i as usize).cmp(name))
            .ok()
            .map(|at| self.by_name[at] as usize)
    }

    /// Case `i`, its record read from the file again for a JSONL file: the line's text as
    /// written (the same record as [`crate::read`]'s compact text, its spaces and key order
    /// kept). A file changed in place since it was indexed is an error naming the line (the
    /// case is no longer the one listed).
    pub fn case(&self, i: usize) -> Result<Case, DatasetError> {
        let (file, starts) = match &self.records {
            Records::Kept(cases) => return Ok(cases[i].clone()),
            Records::Lines { file, starts } => (file, starts),
        };
        let line = self.line(i);
        let unreadable = |source| DatasetError::Read {
            path: self.origin.clone().into(),
            source,
        };
        let mut bytes = vec![0; (starts[i + 1] - starts[i]) as usize];
        {
            let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
            file.seek(std::io::SeekFrom::Start(starts[i]))
                .map_err(unreadable)?;
            file.read_exact(&mut bytes).map_err(unreadable)?;
        }
        let text = match bytes.iter().position(|b| *b == b'\n') {
            Some(end) => &bytes[..=end],
            None => &bytes[..],
        };
        let text = text_of_line(text).map_err(unreadable)?;
        // Checked and its id read without building the record; the record is the line's text
        // (a parsed value built and written back compact cost a third of a debug build's time
        // per case).
        let own_id = head(text, &self.origin, line)?;
        let record = serde_json::value::RawValue::from_string(text.to_string())
            .map_err(|e| crate::not_a_record(&self.origin, line, &e))?;
        let name = self.name(i);
        let id = match own_id {
            Some(id) if crate::case_name(&id) == name => id,
            None if !name.is_empty() => (i + 1).to_string(),
            _ => {
                return Err(crate::malformed(
                    &self.origin,
                    line,
                    format!(
                        "case `{name}` is no longer on this line: the file changed while the run read it"
                    ),
                ));
            }
        };
        Ok(Case {
            id,
            name: name.to_string(),
            line,
            record,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case as both reads give it: its record parsed (an index keeps a JSONL line as written).
    type Read = (String, String, usize, Value);

    fn parsed(case: Case) -> Read {
        let record = serde_json::from_str(case.record.get()).expect("a record is JSON");
        (case.id, case.name, case.line, record)
    }

    fn both(text: &str, ext: &str) -> (Result<Vec<Read>, String>, Result<Vec<Read>, String>) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join(format!("c.{ext}"));
        std::fs::write(&path, text).expect("writable");
        let read = crate::read(&path)
            .map(|cases| cases.into_iter().map(parsed).collect())
            .map_err(|e| e.to_string());
        let indexed = index(&path).map_err(|e| e.to_string()).and_then(|index| {
            (0..index.len())
                .map(|i| {
                    let case = index.case(i).map_err(|e| e.to_string())?;
                    assert_eq!(case.name, index.name(i));
                    assert_eq!(case.line, index.line(i));
                    assert_eq!(index.position(&case.name), Some(i));
                    Ok(parsed(case))
                })
                .collect()
        });
        (read, indexed)
    }

    #[test]
    fn an_index_reads_every_case_as_the_whole_read_does() {
        let texts = [
            (
                "{\"id\": \"paris\", \"a\": \"Paris\"}\n\n{\"a\": \"Lima\"}\n",
                "jsonl",
            ),
            (
                "{\"id\": \"new-york\"}\r\n{\"id\": 42, \"id\": \"x\"}\n{\"q\": [1, {\"id\": 2}]}",
                "jsonl",
            ),
            (&"{\"q\": 1}\n".repeat(12), "jsonl"),
            ("{\"q\": 1}\n{\"q\": \n", "jsonl"),
            (
                "{\"id\": \"a\"}\n{\"q\": 1}\n{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"b\"}\n",
                "jsonl",
            ),
            (
                "{\"id\": \"b\"}\n{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"a\"}\n",
                "jsonl",
            ),
            ("{\"id\": \"case_2\"}\n{\"q\": 1}\n", "jsonl"),
            ("[1, 2]\n", "jsonl"),
            ("\"x\"\n", "jsonl"),
            ("{\"id\": [1]}\n", "jsonl"),
            ("{\"id\": \"\"}\n{\"id\": null}\n", "jsonl"),
            ("{\"a\": 1} x\n", "jsonl"),
            ("\n\n", "jsonl"),
            ("", "jsonl"),
            ("[\n  {\"id\": \"paris\"},\n  {\"a\": \"Lima\"}\n]", "json"),
            ("# capitals\n- id: paris\n  a: Paris\n- a: Lima\n", "yaml"),
            ("id,a\nparis,Paris\n,Lima\n", "csv"),
            ("id,a\nx,1\nx,2\n", "csv"),
        ];
        for (text, ext) in texts {
            let (read, indexed) = both(text, ext);
            assert_eq!(read, indexed, "{text:?}");
        }
    }

    #[test]
    fn a_line_changed_under_the_index_is_an_error_not_another_case() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, "{\"id\": \"aa\"}\n{\"id\": \"bb\"}\n").expect("writable");
        let index = index(&path).expect("an index");
        // Rewritten in place: the open file sees the new text.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, b"{\"id\": \"bb\"}\n{\"id\": \"aa\"}\n")
            })
            .expect("writable");
        let err = index.case(0).unwrap_err().to_string();
        assert!(
            err.contains("c.jsonl:1: case `aa` is no longer on this line"),
            "{err}"
        );
    }
}
