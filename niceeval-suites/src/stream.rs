//! A YAML document read straight into JSON values, one libyaml event at a time.
//!
//! `yaml_serde` loads every event of a document into memory before it builds its own value,
//! which [`super::parse_yaml`] then converts to JSON: for a suite file of 20,000 inline tests
//! (10 MB of YAML) that was 200 MB of events, then two trees of the whole document. [`read`]
//! builds the JSON value as the events come, and can hand the items of a promptfoo file's
//! `tests` over as compact JSON text (with where their parts were written) instead of keeping
//! them in the tree, deflated as they come ([`Items`]), so a large file is held once, as text,
//! while it is read.
//!
//! It reads the common subset of YAML exactly as `yaml_serde` does (its scalar resolution
//! is copied below; anchors, aliases and `<<` merges included) and declines the rest —
//! tags, keys that are not text, duplicate keys, several documents, invalid YAML, deep
//! nesting: `None`, and the caller reads the document with `yaml_serde`, which accepts or
//! refuses it with its own messages. A test compares both on many documents.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use niceeval_dataset::positions::Step;
use niceeval_dataset::positions::{Events, Kind};

use crate::deflated::Deflated;

/// A document read, with the items of its `tests` taken out when asked.
#[derive(Debug)]
pub(crate) struct Streamed {
    /// The document; when `tests` were taken out, its `tests` is an empty list.
    pub value: Value,
    /// The items of the top-level `tests` list, in order.
    pub tests: Option<Items>,
    /// Where the top-level `tests` value starts (1-based line and column).
    pub tests_at: Option<(u32, u32)>,
}

/// An item of `tests`, as compact JSON text (anchors, aliases and merges applied).
#[derive(Debug)]
pub(crate) struct Item {
    pub text: Box<str>,
    /// Where it and its parts were written; `None` when the item is an alias (the places
    /// then come from [`niceeval_dataset::positions::Positions`]).
    pub places: Option<Places>,
}

/// The items of a `tests` list, deflated as they are read ([`Deflated`]): each is its text,
/// a line break, and its places as JSON (none for an alias).
#[derive(Debug, Default)]
pub(crate) struct Items(Deflated);

impl Items {
    fn push(&mut self, item: Item) {
        let mut record = item.text.into_string().into_bytes();
        record.push(b'\n');
        if let Some(places) = item.places {
            // Places are numbers and texts: they always serialize.
            let _ = serde_json::to_writer(&mut record, &places);
        }
        self.0.push(&record);
    }

    /// How many items.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Item> + '_ {
        self.0.iter().filter_map(|record| {
            let record = String::from_utf8(record).ok()?;
            let (text, places) = record.split_once('\n')?;
            let places = match places {
                "" => None,
                places => Some(serde_json::from_str(places).ok()?),
            };
            Some(Item {
                text: text.into(),
                places,
            })
        })
    }
}

/// Where an item of `tests` was written: the item, its values and theirs (two levels down).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Places {
    at: (u32, u32),
    keys: Box<[Placed]>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Placed {
    name: Box<str>,
    at: (u32, u32),
    /// The children of a list (no names) or of a mapping.
    kids: Box<[Kid]>,
}

/// A child's place: its key (none in a list) and where it starts.
type Kid = (Option<Box<str>>, (u32, u32));

impl Places {
    /// The place of the node at `path` below the item, as
    /// [`niceeval_dataset::positions::Positions::find`] finds it (`Some(None)`: there is no such node);
    /// `None` when this does not know (the caller asks the whole document). An item's keys
    /// and its values' children are all here, so a key or child not here is not in the file.
    pub(crate) fn find(&self, path: &[Step<'_>]) -> Option<Option<(usize, usize)>> {
        let place = match path {
            [] => Some(self.at),
            [Step::Key(k), rest @ ..] => match self.keys.iter().find(|p| &*p.name == *k) {
                None => None,
                Some(placed) => match rest {
                    [] => Some(placed.at),
                    [Step::Index(i)] => placed
                        .kids
                        .get(*i)
                        .filter(|(name, _)| name.is_none())
                        .map(|(_, at)| *at),
                    [Step::Key(k)] => placed
                        .kids
                        .iter()
                        .find(|(n, _)| n.as_deref() == Some(*k))
                        .map(|(_, at)| *at),
                    _ => return None,
                },
            },
            _ => return None,
        };
        Some(place.map(|(line, column)| (line as usize, column as usize)))
    }
}

/// An anchor's value, the alias expansions in it, its place and its children's places.
type Anchored = (Value, u64, (u32, u32), Vec<Kid>);

/// Deeper than this, `yaml_serde` (limit 128) decides.
const MAX_DEPTH: usize = 100;

/// A collection being read.
struct Frame {
    kind: FrameKind,
    anchor: Option<Vec<u8>>,
    /// Alias expansions counted when it started (see `jumps`).
    jumps_at: u64,
    at: (u32, u32),
    /// The places of its children, kept (`record`) for a test item's values and for an
    /// anchored node (an alias's places are its anchor's).
    kids: Vec<Kid>,
    record: bool,
    /// An item of `tests`: the places of its values.
    item: Option<Vec<Placed>>,
}

enum FrameKind {
    Seq(Vec<Value>),
    Map {
        map: Map<String, Value>,
        /// The key read, waiting for its value.
        key: Option<String>,
    },
    /// The top-level `tests` list, its items taken out.
    Tests(Items),
}

/// Which list's items come out of the tree as [`Item`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Split {
    /// None: the whole document is the value.
    No,
    /// The top-level `tests` list of a mapping (a promptfoo config).
    Tests,
    /// The document itself, when it is a list (a YAML tests file).
    Root,
}

/// Reads `text` (its one document) into JSON, as `yaml_serde` would; with `split_tests`, the
/// items of a top-level `tests` list come out as [`Item`]s. `None`: `yaml_serde` must read it.
pub(crate) fn read(text: &str, split_tests: bool) -> Option<Streamed> {
    let split = if split_tests { Split::Tests } else { Split::No };
    read_with(text, split, true)
}

/// [`read`], splitting `split`'s items, with `<<` merges applied or (`merge` false, as a
/// dataset file is read) kept as keys.
pub(crate) fn read_with(text: &str, split: Split, merge: bool) -> Option<Streamed> {
    let mut events = Events::new(text)?;
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<Vec<u8>, Anchored> = HashMap::new();
    let mut documents = 0;
    let mut count: u64 = 0;
    // Alias expansions, nested ones counted each time, as yaml_serde counts its jumps.
    let mut jumps: u64 = 0;
    let mut root: Option<Value> = None;
    let mut tests_at = None;
    let mut tests_items = None;
    loop {
        let event = events.next_event()?;
        count += 1;
        let sequence = matches!(event.kind, Kind::SequenceStart(..));
        // The node this event completes: its value, where it starts, its anchor, the alias
        // expansions in it, its children's places (a test item's values), whether an alias
        // made it.
        let (value, at, anchor, inner, kids, alias) = match event.kind {
            Kind::StreamEnd => break,
            Kind::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
                continue;
            }
            Kind::DocumentEnd | Kind::Other => continue,
            Kind::Scalar {
                value,
                anchor,
                plain,
                tagged,
            } => {
                if tagged {
                    return None;
                }
                let text = std::str::from_utf8(value).ok()?;
                let value = if plain {
                    resolve(text)?
                } else {
                    Value::String(text.to_string())
                };
                let at = (event.line, event.column);
                (value, at, anchor, 0, Vec::new(), false)
            }
            Kind::Alias(name) => {
                let (value, inner, at, kids) = anchors.get(&name)?;
                jumps += 1 + inner;
                (value.clone(), *at, None, 0, kids.clone(), true)
            }
            Kind::SequenceStart(anchor, tagged) | Kind::MappingStart(anchor, tagged) => {
                if tagged || stack.len() >= MAX_DEPTH {
                    return None;
                }
                let at = (event.line, event.column);
                let depth = stack.len();
                let tests = sequence
                    && match split {
                        Split::No => false,
                        Split::Tests => {
                            depth == 1
                                && matches!(&stack[0].kind, FrameKind::Map { key: Some(k), .. } if k == "tests")
                        }
                        Split::Root => depth == 0,
                    };
                if tests && split == Split::Tests {
                    tests_at = Some(at);
                }
                let item = (depth > 0 && matches!(stack[depth - 1].kind, FrameKind::Tests(_)))
                    .then(Vec::new);
                let record = anchor.is_some() || (depth > 0 && stack[depth - 1].item.is_some());
                stack.push(Frame {
                    kind: if tests {
                        FrameKind::Tests(Items::default())
                    } else if sequence {
                        FrameKind::Seq(Vec::new())
                    } else {
                        FrameKind::Map {
                            map: Map::new(),
                            key: None,
                        }
                    },
                    anchor,
                    jumps_at: jumps,
                    at,
                    kids: Vec::new(),
                    record,
                    item,
                });
                continue;
            }
            Kind::SequenceEnd | Kind::MappingEnd => {
                let frame = stack.pop()?;
                let inner = jumps - frame.jumps_at;
                let value = match frame.kind {
                    FrameKind::Seq(items) => Value::Array(items),
                    FrameKind::Map { map, key: None } => Value::Object(map),
                    FrameKind::Map { key: Some(_), .. } => return None,
                    // An alias of the list would need its items: yaml_serde reads that.
                    FrameKind::Tests(_) if frame.anchor.is_some() => return None,
                    FrameKind::Tests(mut items) => {
                        items.0.seal();
                        tests_items = Some(items);
                        Value::Array(Vec::new())
                    }
                };
                if let Some(keys) = frame.item {
                    // An item of `tests`: out of the tree, as text.
                    let mut value = value;
                    if let Some(name) = frame.anchor {
                        anchors.insert(name, (value.clone(), inner, frame.at, frame.kids));
                    }
                    if merge {
                        apply_merge(&mut value)?;
                    }
                    let text = serde_json::to_string(&value).ok()?.into_boxed_str();
                    let places = Some(Places {
                        at: frame.at,
                        keys: keys.into_boxed_slice(),
                    });
                    match stack.last_mut().map(|f| &mut f.kind) {
                        Some(FrameKind::Tests(items)) => items.push(Item { text, places }),
                        _ => return None,
                    }
                    continue;
                }
                (value, frame.at, frame.anchor, inner, frame.kids, false)
            }
        };
        if let Some(name) = anchor {
            anchors.insert(name, (value.clone(), inner, at, kids.clone()));
        }
        // Where it goes.
        let Some(parent) = stack.last_mut() else {
            root = Some(value);
            continue;
        };
        let name = match &mut parent.kind {
            FrameKind::Seq(items) => {
                items.push(value);
                None
            }
            FrameKind::Tests(items) => {
                // A scalar or an alias as an item of `tests`: text too; an alias's place is
                // its anchor's, left to the whole document's places.
                let text = serde_json::to_string(&value).ok()?.into_boxed_str();
                let places = (!alias).then(|| Places {
                    at,
                    keys: Box::new([]),
                });
                items.push(Item { text, places });
                continue;
            }
            FrameKind::Map { map, key } => match key.take() {
                None => {
                    // A key: text only, and each once.
                    let Value::String(k) = value else {
                        return None;
                    };
                    if map.contains_key(&k) {
                        return None;
                    }
                    *key = Some(k);
                    continue;
                }
                Some(k) => {
                    let name = k.clone();
                    map.insert(k, value);
                    Some(name)
                }
            },
        };
        // The places of a test item's values, and of theirs.
        if parent.record {
            parent.kids.push((name.as_deref().map(Box::from), at));
        }
        if let Some(keys) = parent.item.as_mut()
            && let Some(name) = name
        {
            keys.push(Placed {
                name: name.into_boxed_str(),
                at,
                kids: kids.into_boxed_slice(),
            });
        }
    }
    if !stack.is_empty() || jumps > count.saturating_mul(50) {
        return None;
    }
    let mut value = root?;
    if merge {
        apply_merge(&mut value)?;
    }
    Some(Streamed {
        value,
        tests: tests_items,
        tests_at,
    })
}

/// yaml_serde's `Value::apply_merge`, over JSON: every mapping's `<<` (a mapping, or a list
/// of mappings) fills the keys it lacks, outermost mapping first. `None` where yaml_serde
/// refuses the merge.
fn apply_merge(value: &mut Value) -> Option<()> {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                match map.remove("<<") {
                    Some(Value::Object(merge)) => {
                        for (k, v) in merge {
                            map.entry(k).or_insert(v);
                        }
                    }
                    Some(Value::Array(items)) => {
                        for item in items {
                            let Value::Object(merge) = item else {
                                return None;
                            };
                            for (k, v) in merge {
                                map.entry(k).or_insert(v);
                            }
                        }
                    }
                    None => {}
                    Some(_) => return None,
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    Some(())
}

/// A plain scalar's value, as yaml_serde resolves it (`visit_untagged_scalar`); `None` for
/// what this reader leaves to yaml_serde (integers beyond 64 bits, infinities, NaN).
fn resolve(v: &str) -> Option<Value> {
    if v.is_empty() || matches!(v, "null" | "Null" | "NULL" | "~") {
        return Some(Value::Null);
    }
    match v {
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    if let Some(int) = parse_unsigned_int(v, u64::from_str_radix) {
        return Some(Value::Number(int.into()));
    }
    if let Some(int) = parse_negative_int(v, i64::from_str_radix) {
        return Some(Value::Number(int.into()));
    }
    if parse_unsigned_int(v, u128::from_str_radix).is_some()
        || parse_negative_int(v, i128::from_str_radix).is_some()
    {
        return None;
    }
    if !digits_but_not_number(v)
        && let Some(float) = parse_f64(v)
    {
        return Number::from_f64(float).map(Value::Number);
    }
    Some(Value::String(v.to_string()))
}

// yaml_serde 0.10's scalar parsing (de.rs), as it is.

fn parse_unsigned_int<T>(
    scalar: &str,
    from_str_radix: fn(&str, radix: u32) -> Result<T, std::num::ParseIntError>,
) -> Option<T> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(int);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) {
        return None;
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative_int<T>(
    scalar: &str,
    from_str_radix: fn(&str, radix: u32) -> Result<T, std::num::ParseIntError>,
) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = scalar.strip_prefix(prefix) {
            let negative = format!("-{rest}");
            if let Ok(int) = from_str_radix(&negative, radix) {
                return Some(int);
            }
        }
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(scalar, 10).ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = if let Some(unpositive) = scalar.strip_prefix('+') {
        if unpositive.starts_with(['+', '-']) {
            return None;
        }
        unpositive
    } else {
        scalar
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = scalar {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = scalar {
        return Some(f64::NAN.copysign(1.0));
    }
    if let Ok(float) = unpositive.parse::<f64>()
        && float.is_finite()
    {
        return Some(float);
    }
    None
}

fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// What yaml_serde makes of `text` (the reading before this one).
    fn serde(text: &str) -> Option<Value> {
        super::super::parse_yaml_serde(Path::new("x.yaml"), text).ok()
    }

    /// The documents compared: hand-written corners, then every YAML file of the repository.
    fn documents() -> Vec<String> {
        let mut out: Vec<String> = [
            "a: 1\nb: -2\nc: 3.5\nd: 1e3\ne: 0x1F\nf: -0o17\ng: 0b101\nh: 007\ni: +12\nj: .5\nk: 5.\n",
            "t: true\nf: False\nn: ~\ne:\nN: NULL\ns: 'true'\nq: \"1\"\nyes: yes\nno: no\non: off\n",
            "big: 18446744073709551615\nbigger: 18446744073709551616\nneg: -9223372036854775808\nlow: -9223372036854775809\n",
            "inf: .inf\nninf: -.inf\nnan: .nan\ninfinity: infinity\nnan2: NaN\n",
            "x-base: &base\n  type: icontains\n  value: a\nitems:\n  - *base\n  - <<: *base\n    value: b\n",
            "m: &m {a: 1, <<: {b: 2}}\nn:\n  <<: [*m, {c: 3, a: 9}]\n  d: 4\n",
            "'quoted key': |\n  block\n  text\n\"dq\": >\n  folded\nplain: !tag tagged\nempty:\nlist: []\n",
            "? [complex, key]\n: value\nafter: 1\n",
            "---\nfirst: 1\n...\n",
            "- 1\n- two\n- [3]\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\na: 2\n",
            "1: one\n",
            "a: [1, 2\n",
            "a: *nowhere\n",
            "",
            "# only a comment\n",
            "plain\n",
            "a: !!str 1\n",
            "<<: 1\n",
            "a:\n  <<: [1]\n",
            "tests:\n  - vars: {q: 1}\n    assert:\n      - type: equals\n        value: 1\n  - file://t.csv\n",
            "tests: &all\n  - vars: {q: 1}\nagain: *all\n",
            "s: \"multi\\nline \\u00e9\"\nt: 'it''s'\nu: >-\n  a\n  b\n\nv: |+\n  keep\n\n",
            "k: 12:30\nl: 1_000\nm: 0x\nn: -0x10\no: +.inf\np: 1.0\nq: -0.0\nr: 2.5e-3\n",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut dirs = vec![root.clone()];
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().to_string();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" && name != "node_modules" {
                        dirs.push(path);
                    }
                } else if (name.ends_with(".yaml") || name.ends_with(".yml"))
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    out.push(text);
                }
            }
        }
        out
    }

    #[test]
    fn what_it_reads_yaml_serde_reads_the_same() {
        let mut count = 0;
        for text in documents() {
            let Some(streamed) = read(&text, false) else {
                continue;
            };
            count += 1;
            assert_eq!(Some(streamed.value), serde(&text), "{text}");
        }
        assert!(count > 20, "{count} documents read");
    }

    /// Without merges, as a dataset file is read: as `yaml_serde` reads JSON values directly.
    #[test]
    fn without_merges_it_reads_as_a_dataset_is_read() {
        let mut count = 0;
        for text in documents() {
            let Some(streamed) = read_with(&text, Split::No, false) else {
                continue;
            };
            count += 1;
            assert_eq!(
                Some(streamed.value),
                yaml_serde::from_str::<Value>(&text).ok(),
                "{text}"
            );
            let Some(root) = read_with(&text, Split::Root, false) else {
                panic!("read whole, not split: {text}");
            };
            if let Some(items) = root.tests {
                let items: Vec<Value> = items
                    .iter()
                    .map(|i| serde_json::from_str(&i.text).unwrap())
                    .collect();
                assert_eq!(Some(Value::Array(items)), yaml_serde::from_str(&text).ok());
            }
        }
        assert!(count > 20, "{count} documents read");
    }

    #[test]
    fn split_tests_are_the_same_items() {
        for text in documents() {
            let Some(whole) = read(&text, false) else {
                continue;
            };
            // An anchored `tests` is read whole (by yaml_serde); anything else splits.
            let Some(split) = read(&text, true) else {
                assert!(text.contains("tests: &"), "{text}");
                continue;
            };
            let Some(items) = split.tests else {
                assert_eq!(split.value, whole.value);
                continue;
            };
            let mut value = split.value;
            value["tests"] = Value::Array(
                items
                    .iter()
                    .map(|i| serde_json::from_str(&i.text).unwrap())
                    .collect(),
            );
            assert_eq!(value, whole.value, "{text}");
        }
    }

    /// Every place an item knows is the whole document's.
    #[test]
    fn item_places_are_the_documents() {
        let text = "x: &a {type: contains, value: z}\nl: &l [{type: a}, {type: b}]\ntests:\n  - description: one\n    vars:\n      q: [1, 2]\n      r: hi\n    assert:\n      - type: equals\n        value: 1\n      - {type: contains, value: x}\n  - file://more.csv\n  - vars: {q: 3}\n    assert:\n      - *a\n  - *a\n  - <<: {vars: {q: 4}}\n    assert: *l\n";
        let positions = niceeval_dataset::positions::Positions::read(text).unwrap();
        let split = read(text, true).unwrap();
        assert_eq!(
            split.tests_at.map(|(l, c)| (l as usize, c as usize)),
            positions.find(&[Step::Key("tests")])
        );
        let items: Vec<Item> = split.tests.unwrap().iter().collect();
        assert_eq!(items.len(), 5);
        assert!(items[3].places.is_none());
        let paths: &[&[Step<'_>]] = &[
            &[],
            &[Step::Key("description")],
            &[Step::Key("vars")],
            &[Step::Key("vars"), Step::Key("q")],
            &[Step::Key("vars"), Step::Key("r")],
            &[Step::Key("assert")],
            &[Step::Key("assert"), Step::Index(0)],
            &[Step::Key("assert"), Step::Index(1)],
            &[Step::Key("assert"), Step::Index(2)],
            &[Step::Key("assert"), Step::Key("type")],
            &[Step::Key("vars"), Step::Index(0)],
            &[Step::Key("<<")],
            &[Step::Key("nothing")],
        ];
        for (i, item) in items.iter().enumerate() {
            let Some(places) = item.places.as_ref() else {
                continue;
            };
            for path in paths {
                let mut whole = vec![Step::Key("tests"), Step::Index(i)];
                whole.extend_from_slice(path);
                let found = places.find(path).expect("known");
                assert_eq!(found, positions.find(&whole), "{i} {path:?}");
            }
        }
    }
}

#[cfg(test)]
mod root_tests {
    use super::*;

    /// A tests file's items know the places the whole document's positions name.
    #[test]
    fn a_tests_files_items_know_their_places() {
        let text = "- vars: {q: 1}\n  assert:\n    - type: equals\n      value: 1\n    - type: contains\n      value: x\n-\n  description: two\n  assert: [{type: regex, value: a}]\n";
        let positions = niceeval_dataset::positions::Positions::read(text).unwrap();
        let items: Vec<Item> = read_with(text, Split::Root, false)
            .unwrap()
            .tests
            .unwrap()
            .iter()
            .collect();
        assert_eq!(items.len(), 2);
        for (i, item) in items.iter().enumerate() {
            let places = item.places.as_ref().unwrap();
            for path in [
                vec![],
                vec![Step::Key("assert")],
                vec![Step::Key("assert"), Step::Index(0)],
                vec![Step::Key("assert"), Step::Index(1)],
                vec![Step::Key("vars"), Step::Key("q")],
            ] {
                let mut whole = vec![Step::Index(i)];
                whole.extend_from_slice(&path);
                assert_eq!(
                    places.find(&path),
                    Some(positions.find(&whole)),
                    "{i} {path:?}"
                );
            }
        }
    }
}
