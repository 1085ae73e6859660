//! Where each node of a YAML (or JSON) document is written, found in one pass: the one YAML
//! position finder of the workspace. A dataset file's items (this crate), an assertion list's
//! invalid items (niceeval's `spec`) and a suite file's tests and items (niceeval-suites) are
//! all placed with it.
//!
//! Finding each place by reading the document again down to it (a reader that fails on
//! purpose there, whose parser error carries the position: right for one error) made a file of
//! N tests cost N readings of it: 2,000 inline tests took minutes. [`Positions`] reads the
//! document once into a tree of places (no values), and every look-up after that walks the tree.
//!
//! The events come from libyaml (`libyaml-rs`), the parser `yaml_serde` reads documents with:
//! `yaml_serde` keeps its parser private, and its errors name the start of the event they were
//! reading, so a place found here is the one such a failing reader finds (a test checks that
//! they agree). libyaml is C translated to Rust and has only its C-style API (no crate offers
//! positions of YAML nodes), hence the `unsafe` of [`Events`], kept to the parser's life cycle.

use std::collections::HashMap;
use std::mem::MaybeUninit;

use libyaml_rs as sys;

/// One step down a document: a mapping's key or a list's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// The value of this key.
    Key(&'a str),
    /// The item at this index.
    Index(usize),
}

/// The places of a document's nodes (its first document's), by path.
#[derive(Debug, Default)]
pub struct Positions {
    nodes: Vec<Node>,
}

/// A node: where it starts (1-based line and column) and its children.
#[derive(Debug)]
struct Node {
    line: u32,
    column: u32,
    kids: Kids,
}

#[derive(Debug)]
enum Kids {
    Leaf,
    Seq(Box<[u32]>),
    /// Keys that are not text (`? [a, b]`) are `None`: no path step names them.
    Map(Box<[(Option<Box<str>>, u32)]>),
}

/// A collection being read.
enum Frame {
    Seq(u32, Vec<u32>),
    Map {
        node: u32,
        entries: Vec<(Option<Box<str>>, u32)>,
        /// The key read, waiting for its value.
        key: Option<Option<Box<str>>>,
    },
}

impl Positions {
    /// Reads `text`; `None` when it is not valid YAML (the caller's parser says why).
    pub fn read(text: &str) -> Option<Self> {
        let mut out = Positions::default();
        let mut stack: Vec<Frame> = Vec::new();
        let mut anchors: HashMap<Vec<u8>, u32> = HashMap::new();
        let mut events = Events::new(text)?;
        loop {
            let event = events.next_event()?;
            let at = (event.line, event.column);
            let sequence = matches!(event.kind, Kind::SequenceStart(..));
            // The node this event completes, if it does.
            let done = match event.kind {
                Kind::StreamEnd | Kind::DocumentEnd => break,
                Kind::Other | Kind::DocumentStart => continue,
                Kind::Scalar { value, anchor, .. } => {
                    // A key is kept as text in its mapping; it is never a step's end.
                    if let Some(Frame::Map {
                        key: key @ None, ..
                    }) = stack.last_mut()
                    {
                        let text = String::from_utf8_lossy(value).into_owned();
                        *key = Some(Some(text.into_boxed_str()));
                        continue;
                    }
                    let id = out.push(at, Kids::Leaf);
                    if let Some(name) = anchor {
                        anchors.insert(name, id);
                    }
                    id
                }
                Kind::Alias(name) => match anchors.get(&name) {
                    Some(id) => *id,
                    // libyaml refuses an unknown alias before this; yaml_serde does too.
                    None => return None,
                },
                Kind::SequenceStart(anchor, _) | Kind::MappingStart(anchor, _) => {
                    let id = out.push(at, Kids::Leaf);
                    if let Some(name) = anchor {
                        anchors.insert(name, id);
                    }
                    stack.push(if sequence {
                        Frame::Seq(id, Vec::new())
                    } else {
                        Frame::Map {
                            node: id,
                            entries: Vec::new(),
                            key: None,
                        }
                    });
                    continue;
                }
                Kind::SequenceEnd | Kind::MappingEnd => match stack.pop()? {
                    Frame::Seq(id, items) => {
                        out.nodes[id as usize].kids = Kids::Seq(items.into_boxed_slice());
                        id
                    }
                    Frame::Map { node, entries, .. } => {
                        out.nodes[node as usize].kids = Kids::Map(entries.into_boxed_slice());
                        node
                    }
                },
            };
            match stack.last_mut() {
                None => break,
                Some(Frame::Seq(_, items)) => items.push(done),
                Some(Frame::Map { entries, key, .. }) => match key.take() {
                    Some(name) => entries.push((name, done)),
                    // A collection (or alias) as a key: no step names it.
                    None => *key = Some(None),
                },
            }
        }
        Some(out)
    }

    /// The line and column (1-based) of each item of a document that is a list (an alias item
    /// where the alias is written), read without building the tree (a dataset of 100,000 records keeps one place per record, not one per
    /// node); `None` when `text` is not valid YAML, empty when its document is not a list.
    pub fn root_items(text: &str) -> Option<Vec<(usize, usize)>> {
        let mut events = Events::new(text)?;
        let mut items = Vec::new();
        // Collections open around the event read: 1 inside the root list.
        let mut depth = 0usize;
        let mut root_is_list = None;
        loop {
            let event = events.next_event()?;
            let at = (event.line as usize, event.column as usize);
            match event.kind {
                Kind::StreamEnd | Kind::DocumentEnd => break,
                Kind::Other | Kind::DocumentStart => continue,
                Kind::SequenceStart(..) | Kind::MappingStart(..) => {
                    if depth == 0 {
                        root_is_list = Some(matches!(event.kind, Kind::SequenceStart(..)));
                    } else if depth == 1 && root_is_list == Some(true) {
                        items.push(at);
                    }
                    depth += 1;
                }
                Kind::SequenceEnd | Kind::MappingEnd => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                Kind::Scalar { .. } | Kind::Alias(_) => {
                    if depth == 1 && root_is_list == Some(true) {
                        items.push(at);
                    }
                    if depth == 0 {
                        break;
                    }
                }
            }
        }
        Some(items)
    }

    fn push(&mut self, (line, column): (u32, u32), kids: Kids) -> u32 {
        self.nodes.push(Node { line, column, kids });
        u32::try_from(self.nodes.len() - 1).unwrap_or(u32::MAX)
    }

    /// The line and column (1-based) of the value at `path`.
    pub fn find(&self, path: &[Step<'_>]) -> Option<(usize, usize)> {
        self.node(path)
            .map(|node| (node.line as usize, node.column as usize))
    }

    /// The line and column (1-based) of each item of the list at `path`; empty when there is no
    /// list there.
    pub fn items(&self, path: &[Step<'_>]) -> Vec<(usize, usize)> {
        match self.node(path).map(|node| &node.kids) {
            Some(Kids::Seq(items)) => items
                .iter()
                .filter_map(|id| self.nodes.get(*id as usize))
                .map(|node| (node.line as usize, node.column as usize))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn node(&self, path: &[Step<'_>]) -> Option<&Node> {
        let mut node = self.nodes.first()?;
        for step in path {
            let next = match (step, &node.kids) {
                (Step::Index(i), Kids::Seq(items)) => *items.get(*i)?,
                (Step::Key(k), Kids::Map(entries)) => {
                    entries
                        .iter()
                        .find(|(name, _)| name.as_deref() == Some(*k))?
                        .1
                }
                _ => return None,
            };
            node = self.nodes.get(next as usize)?;
        }
        Some(node)
    }
}

/// What the tree (and a reader that turns events into values, as niceeval-suites' stream does) needs of an event. A collection's start carries its
/// anchor and whether it has a tag.
pub enum Kind<'e> {
    /// The end of the text.
    StreamEnd,
    /// A document starts (`---`, or its first node).
    DocumentStart,
    /// A document ends.
    DocumentEnd,
    /// A scalar.
    Scalar {
        /// Its text, unescaped.
        value: &'e [u8],
        /// Its anchor (`&name`).
        anchor: Option<Vec<u8>>,
        /// Written plain (not quoted, not a block scalar).
        plain: bool,
        /// With a tag (`!!str`, `!custom`, `!`).
        tagged: bool,
    },
    /// An alias (`*name`).
    Alias(Vec<u8>),
    /// A list starts: its anchor, and whether it has a tag.
    SequenceStart(Option<Vec<u8>>, bool),
    /// A list ends.
    SequenceEnd,
    /// A mapping starts: its anchor, and whether it has a tag.
    MappingStart(Option<Vec<u8>>, bool),
    /// A mapping ends.
    MappingEnd,
    /// Anything else (the stream's start).
    Other,
}

/// One event, where it starts.
pub struct Event<'e> {
    /// What it is.
    pub kind: Kind<'e>,
    /// 1-based, as yaml_serde's `Location`.
    pub line: u32,
    /// 1-based.
    pub column: u32,
}

/// libyaml's parser over a text, one event at a time.
pub struct Events<'t> {
    /// Boxed: libyaml keeps a pointer to the parser inside it.
    parser: Box<MaybeUninit<sys::yaml_parser_t>>,
    /// The event handed out last, deleted before the next is read.
    event: Box<MaybeUninit<sys::yaml_event_t>>,
    live: bool,
    text: std::marker::PhantomData<&'t str>,
}

impl<'t> Events<'t> {
    /// A parser over `text`; `None` when libyaml cannot start one.
    pub fn new(text: &'t str) -> Option<Self> {
        let mut parser = Box::new(MaybeUninit::<sys::yaml_parser_t>::uninit());
        let p = parser.as_mut_ptr();
        // SAFETY: `p` points at memory owned by the box, which `initialize` fills; the input
        // outlives the parser (`'t`), and the box never moves its contents.
        unsafe {
            if sys::yaml_parser_initialize(p).fail {
                return None;
            }
            sys::yaml_parser_set_encoding(p, sys::YAML_UTF8_ENCODING);
            sys::yaml_parser_set_input_string(p, text.as_ptr(), text.len() as u64);
        }
        Some(Events {
            parser,
            event: Box::new(MaybeUninit::uninit()),
            live: false,
            text: std::marker::PhantomData,
        })
    }

    /// The next event; `None` on a parse error.
    /// The next event; `None` at an error of the text.
    pub fn next_event(&mut self) -> Option<Event<'_>> {
        self.delete_event();
        let p = self.parser.as_mut_ptr();
        let e = self.event.as_mut_ptr();
        // SAFETY: the parser was initialized in `new`; a parser in error is never asked again
        // (the caller stops at the first `None`); `e` is written by `yaml_parser_parse` when it succeeds, and
        // deleted (its strings freed) before the next call or on drop.
        unsafe {
            if sys::yaml_parser_parse(p, e).fail {
                return None;
            }
            self.live = true;
            let event = &*e;
            let cstr = |ptr: *mut u8| {
                (!ptr.is_null()).then(|| {
                    std::ffi::CStr::from_ptr(ptr as *const std::ffi::c_char)
                        .to_bytes()
                        .to_vec()
                })
            };
            let kind = match event.type_ {
                sys::YAML_STREAM_END_EVENT => Kind::StreamEnd,
                sys::YAML_DOCUMENT_START_EVENT => Kind::DocumentStart,
                sys::YAML_DOCUMENT_END_EVENT => Kind::DocumentEnd,
                sys::YAML_SCALAR_EVENT => Kind::Scalar {
                    value: std::slice::from_raw_parts(
                        event.data.scalar.value,
                        event.data.scalar.length as usize,
                    ),
                    anchor: cstr(event.data.scalar.anchor),
                    plain: event.data.scalar.style == sys::YAML_PLAIN_SCALAR_STYLE,
                    tagged: !event.data.scalar.tag.is_null(),
                },
                sys::YAML_ALIAS_EVENT => Kind::Alias(cstr(event.data.alias.anchor)?),
                sys::YAML_SEQUENCE_START_EVENT => Kind::SequenceStart(
                    cstr(event.data.sequence_start.anchor),
                    !event.data.sequence_start.tag.is_null(),
                ),
                sys::YAML_SEQUENCE_END_EVENT => Kind::SequenceEnd,
                sys::YAML_MAPPING_START_EVENT => Kind::MappingStart(
                    cstr(event.data.mapping_start.anchor),
                    !event.data.mapping_start.tag.is_null(),
                ),
                sys::YAML_MAPPING_END_EVENT => Kind::MappingEnd,
                _ => Kind::Other,
            };
            let number = |n: u64| u32::try_from(n.saturating_add(1)).unwrap_or(u32::MAX);
            Some(Event {
                kind,
                line: number(event.start_mark.line),
                column: number(event.start_mark.column),
            })
        }
    }

    fn delete_event(&mut self) {
        if self.live {
            // SAFETY: the event was filled by a successful `yaml_parser_parse`.
            unsafe { sys::yaml_event_delete(self.event.as_mut_ptr()) };
            self.live = false;
        }
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        self.delete_event();
        // SAFETY: initialized in `new` (a failed initialization never builds `Events`).
        unsafe { sys::yaml_parser_delete(self.parser.as_mut_ptr()) };
    }
}

/// The reference the tree is tested against: a reader that goes down `path` and fails there
/// on purpose, so yaml_serde's error names the place of the value it was reading.
#[cfg(test)]
mod reference {
    use std::fmt;

    use serde::de::{
        self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };
    use serde_json::Value;

    use super::Step;

    /// Marks the failure that means "here".
    const FOUND: &str = "\u{0}the value is here";

    /// The line and column (1-based) of the value at `path`, found by reading down to it.
    pub fn yaml_position(text: &str, path: &[Step<'_>]) -> Option<(usize, usize)> {
        let error = Find { path }
            .deserialize(yaml_serde::Deserializer::from_str(text))
            .err()?;
        if !error.to_string().contains(FOUND) {
            return None;
        }
        let location = error.location()?;
        Some((location.line(), location.column()))
    }

    /// Reads down `path` and fails where it ends.
    struct Find<'p, 'a> {
        path: &'p [Step<'a>],
    }

    impl<'de> DeserializeSeed<'de> for Find<'_, '_> {
        type Value = ();

        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl Find<'_, '_> {
        fn leaf<E: de::Error>(&self) -> Result<(), E> {
            if self.path.is_empty() {
                Err(E::custom(FOUND))
            } else {
                Ok(())
            }
        }
    }

    impl<'de> Visitor<'de> for Find<'_, '_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an assertion list")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            match self.path {
                [Step::Index(index), rest @ ..] => {
                    for _ in 0..*index {
                        if seq.next_element::<IgnoredAny>()?.is_none() {
                            return Ok(());
                        }
                    }
                    seq.next_element_seed(Find { path: rest })?;
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(())
                }
                [] => Err(de::Error::custom(FOUND)),
                _ => {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(())
                }
            }
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            match self.path {
                [Step::Key(wanted), rest @ ..] => {
                    while let Some(key) = map.next_key::<Value>()? {
                        if key.as_str() == Some(*wanted) {
                            map.next_value_seed(Find { path: rest })?;
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(())
                }
                [] => Err(de::Error::custom(FOUND)),
                _ => {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(())
                }
            }
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
            self.leaf()
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
            self.leaf()
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
            self.leaf()
        }
        fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
            self.leaf()
        }
        fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
            self.leaf()
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
            self.leaf()
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
            self.leaf()
        }
        fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
            self.leaf()
        }
        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            self.leaf()
        }
        fn visit_none<E: de::Error>(self) -> Result<(), E> {
            self.leaf()
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
            deserializer.deserialize_any(self)
        }
        fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
            // A tagged YAML value (`!tag`): what is under the tag is the value.
            let (_, variant) = data.variant::<IgnoredAny>()?;
            de::VariantAccess::newtype_variant_seed(variant, self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reference::yaml_position;

    /// Every path of `value` (keys and indexes), depth first.
    fn paths(value: &serde_json::Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(at.clone());
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    at.push(format!("k{k}"));
                    paths(v, at, out);
                    at.pop();
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    at.push(format!("i{i}"));
                    paths(v, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_place_is_the_one_the_parser_names() {
        let documents = [
            "a: 1\nb:\n  - x\n  - {c: 2, d: [3, 4]}\n  - - nested\n    - list\n",
            "tests:\n  - vars:\n      q: hi\n    assert:\n      - type: contains\n        value: hi\n      - type: regex\n        value: '^h'\n",
            "{\"json\": {\"list\": [1, {\"k\": \"v\"}], \"s\": \"t\"}, \"n\": null}",
            "x-base: &base\n  type: icontains\n  value: a\nitems:\n  - *base\n  - <<: *base\n    value: b\n",
            "'quoted key': |\n  block\n  text\n\"dq\": >\n  folded\nplain: !tag tagged\nempty:\nlist: []\n",
            "a:\n  - b: 1\n    c:\n      d: [x, {e: f}]\n  -\n    g: h\n",
            "? [complex, key]\n: value\nafter: 1\n",
            "---\nfirst: 1\n...\n",
            "- 1\n- two\n- [3]\n",
        ];
        for text in documents {
            let positions = Positions::read(text).unwrap_or_else(|| panic!("{text}"));
            let value: serde_json::Value = match yaml_serde::from_str::<yaml_serde::Value>(text)
                .ok()
                .and_then(|v| serde_json::to_value(v).ok())
            {
                Some(v) => v,
                None => continue,
            };
            let mut all = Vec::new();
            paths(&value, &mut Vec::new(), &mut all);
            assert!(all.len() > 1, "{text}");
            for path in all {
                let steps: Vec<Step<'_>> = path
                    .iter()
                    .map(|s| match s.split_at(1) {
                        ("k", k) => Step::Key(k),
                        (_, i) => Step::Index(i.parse().unwrap()),
                    })
                    .collect();
                assert_eq!(
                    positions.find(&steps),
                    yaml_position(text, &steps),
                    "{path:?} in {text:?}"
                );
            }
        }
    }

    #[test]
    fn a_lists_items_are_placed_as_the_tree_places_them() {
        for text in [
            "- a: 1\n  b: 2\n- [x, y]\n- plain\n-\n  late: start\n- &anchor {k: v}\n",
            "[1, {a: b}, 'three']\n",
            "a: not a list\n",
        ] {
            let tree = Positions::read(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                Positions::root_items(text),
                Some(tree.items(&[])),
                "{text:?}"
            );
        }
        assert_eq!(Positions::root_items("a: [1, 2\n"), None);
        // An alias item is where the alias is written (the tree follows it to its anchor).
        assert_eq!(
            Positions::root_items("- &a {k: v}\n- *a\n"),
            Some(vec![(1, 3), (2, 3)])
        );
    }

    #[test]
    fn invalid_yaml_has_no_places() {
        assert!(Positions::read("a: [1, 2\nb: 3").is_none());
        assert!(Positions::read("a: *nowhere\n").is_none());
    }

    #[test]
    fn a_long_list_is_read_once() {
        let mut text = String::from("tests:\n");
        for i in 0..20_000 {
            text.push_str(&format!(
                "  - vars: {{q: {i}}}\n    assert:\n      - type: x\n"
            ));
        }
        let positions = Positions::read(&text).unwrap();
        for i in [0, 9_999, 19_999] {
            assert_eq!(
                positions.find(&[Step::Key("tests"), Step::Index(i), Step::Key("assert")]),
                Some((2 + 3 * i + 2, 7)),
            );
        }
    }
}
