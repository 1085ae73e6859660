//! The lenient XML reading promptfoo checks required elements with (fast-xml-parser 5 with
//! promptfoo's options), reduced to what the check needs: which keys the parsed object has.
//!
//! fast-xml-parser turns XML into a JavaScript object: an element's children are keys (a
//! repeated name becomes a list), its attributes keys `@_name`, its text (when not blank) the
//! key `#text`; an element with neither children nor attributes becomes its text (or `""`), a
//! leaf that no path goes through. Processing instructions are keys too (`?xml`). It reads
//! loosely — closing tags need not match, `&` may stand alone — and fails only on what it
//! cannot read: a tag, comment, CDATA section or processing instruction left open, a quote
//! left open inside a tag, an element named `__proto__`, `constructor` or `prototype`, more
//! than 100 open elements, a second DOCTYPE.
//!
//! A path is its keys joined by dots (`root.item.0.name`); as in JavaScript, a key an object
//! does not have may still be found on every object's prototype (`root.toString`).

use crate::checks::expect::js_text::is_space as is_js_space;

/// A value of the parsed object, as far as paths go.
#[derive(Debug, PartialEq)]
pub(super) enum Value {
    /// Text, a number, `""`, or a function found on the prototype: nothing below it.
    Leaf,
    /// An object's own keys, in order.
    Object(Vec<(String, Value)>),
    List(Vec<Value>),
}

/// Why fast-xml-parser would not read a text (its own words, shortened).
pub(super) type ReadError = &'static str;

/// Names every JavaScript object answers to through its prototype.
const PROTOTYPE_KEYS: &[&str] = &[
    "constructor",
    "__defineGetter__",
    "__defineSetter__",
    "hasOwnProperty",
    "__lookupGetter__",
    "__lookupSetter__",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toString",
    "valueOf",
    "toLocaleString",
];

/// Whether the parsed object `root` has every key of `path` (dot-separated), each below the
/// last, as promptfoo walks it: lists take only whole indices written plainly (`0`, not `00`).
pub(super) fn has_path(root: &Value, path: &str) -> bool {
    // Where a walk stands: a parsed value, or the shared prototype object.
    enum At<'a> {
        Value(&'a Value),
        Prototype,
        Nothing,
    }
    let mut at = At::Value(root);
    for key in path.split('.') {
        at = match at {
            At::Value(Value::List(items)) => {
                let index = key.parse::<usize>().ok().filter(|i| i.to_string() == key);
                match index.and_then(|i| items.get(i)) {
                    Some(v) => At::Value(v),
                    None => return false,
                }
            }
            At::Value(Value::Object(keys)) => match keys.iter().find(|(k, _)| k == key) {
                Some((_, v)) => At::Value(v),
                None if key == "__proto__" => At::Prototype,
                None if PROTOTYPE_KEYS.contains(&key) => At::Value(&Value::Leaf),
                None => return false,
            },
            At::Prototype if key == "__proto__" => At::Nothing,
            At::Prototype if PROTOTYPE_KEYS.contains(&key) => At::Value(&Value::Leaf),
            At::Value(Value::Leaf) | At::Prototype | At::Nothing => return false,
        };
    }
    true
}

/// An element as read, before it becomes a [`Value`].
#[derive(Default)]
struct Element {
    name: String,
    attributes: Vec<String>,
    children: Vec<Child>,
}

enum Child {
    Element(Element),
    /// A piece of text: whether it is more than nothing.
    Text(bool),
}

impl Element {
    /// The element's value in the parsed object (fast-xml-parser's `compress` of its children,
    /// then its attributes).
    fn value(self) -> Value {
        let attributes = self.attributes;
        let mut value = compress(self.children);
        if !attributes.is_empty() {
            if let Value::Object(keys) = &mut value {
                for a in attributes {
                    keys.retain(|(k, _)| *k != a);
                    keys.push((a, Value::Leaf));
                }
            }
            return value;
        }
        match &value {
            Value::Object(keys) if keys.is_empty() => Value::Leaf,
            Value::Object(keys) if keys.len() == 1 && keys[0].0 == "#text" => Value::Leaf,
            _ => value,
        }
    }
}

/// The object made of a list of children: one key per name (a list for a repeated name), and
/// `#text` when some text is not empty.
fn compress(children: Vec<Child>) -> Value {
    let mut keys: Vec<(String, Value)> = Vec::new();
    let mut text = false;
    for child in children {
        match child {
            Child::Text(filled) => text |= filled,
            Child::Element(e) => {
                let name = e.name.clone();
                let value = e.value();
                match keys.iter_mut().find(|(k, _)| *k == name) {
                    Some((_, Value::List(items))) => items.push(value),
                    Some((_, existing)) => {
                        let first = std::mem::replace(existing, Value::Leaf);
                        *existing = Value::List(vec![first, value]);
                    }
                    None => keys.push((name, value)),
                }
            }
        }
    }
    if text {
        keys.push(("#text".to_string(), Value::Leaf));
    }
    Value::Object(keys)
}

/// Most elements fast-xml-parser keeps open at once (its `maxNestedTags`).
const MAX_OPEN: usize = 100;

/// A tag's text up to its closing delimiter, with quoted values skipped whole and tabs read as
/// spaces outside them; `None` when a quote or the tag is left open. Returns the text and the
/// index of the delimiter.
fn tag_text(s: &str, from: usize, close: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut segment = from;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i = s[i + 1..].find(q as char).map(|at| i + 1 + at)?;
            }
            c if c == close.as_bytes()[0] && s[i..].starts_with(close) => {
                out.push_str(&s[segment..i]);
                return Some((out, i));
            }
            b'\t' => {
                out.push_str(&s[segment..i]);
                out.push(' ');
                segment = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A tag's text split into its name and the rest (after the first white space).
fn split_name(text: &str) -> (&str, &str) {
    match text.char_indices().find(|(_, c)| is_js_space(*c)) {
        Some((at, c)) => (
            &text[..at],
            text[at + c.len_utf8()..].trim_start_matches(is_js_space),
        ),
        None => (text, text),
    }
}

/// The attribute keys (`@_name`) of a tag's attribute text: every run of characters other than
/// white space and `=`, with or without a quoted value, is an attribute.
fn attributes(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| is_js_space(c) || c == '=');
        if rest.is_empty() {
            break;
        }
        let end = rest
            .find(|c: char| is_js_space(c) || c == '=')
            .unwrap_or(rest.len());
        let name = &rest[..end];
        rest = &rest[end..];
        // An `=` and a quoted value after the name belong to it.
        let after = rest.trim_start_matches(is_js_space);
        if let Some(value) = after.strip_prefix('=') {
            let value = value.trim_start_matches(is_js_space);
            if let Some(q) = value.chars().next().filter(|c| *c == '"' || *c == '\'')
                && let Some(close) = value[1..].find(q)
            {
                rest = &value[1 + close + 1..];
            }
        }
        let key = format!("@_{name}");
        if !names.contains(&key) {
            names.push(key);
        }
    }
    names
}

/// fast-xml-parser's guard on names: three are refused, a few others renamed with `__`.
fn sanitize(name: &str) -> Result<String, ReadError> {
    match name {
        "__proto__" | "constructor" | "prototype" => {
            Err("a reserved JavaScript name is used as an element name")
        }
        "hasOwnProperty" | "toString" | "valueOf" | "__defineGetter__" | "__defineSetter__"
        | "__lookupGetter__" | "__lookupSetter__" => Ok(format!("__{name}")),
        _ => Ok(name.to_string()),
    }
}

/// Where a DOCTYPE that starts at `at` ends (its closing `>`).
fn doctype_end(s: &str, at: usize) -> Result<usize, ReadError> {
    if !s[at..].starts_with("<!DOCTYPE") {
        return Err("a declaration that is not a DOCTYPE");
    }
    let b = s.as_bytes();
    let mut depth = 1;
    let mut quote: Option<u8> = None;
    let mut body = false;
    let mut i = at + 9;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if !body && (c == b'"' || c == b'\'') {
            quote = Some(c);
        } else if c == b'<' {
            if !body && !s[i..].starts_with("<!--") {
                return Err("an invalid DOCTYPE");
            }
            depth += 1;
        } else if c == b'>' {
            depth -= 1;
            if depth == 0 {
                return Ok(i);
            }
        } else if c == b'[' {
            body = true;
        }
        i += 1;
    }
    Err("an unclosed DOCTYPE")
}

/// Reads `s` as fast-xml-parser does and returns the parsed object, or why it cannot.
pub(super) fn read(s: &str) -> Result<Value, ReadError> {
    let b = s.as_bytes();
    // `open[0]` is the document; the last is the element text goes to.
    let mut open: Vec<Element> = vec![Element::default()];
    let mut text = false;
    let mut doctype = false;
    let save_text = |open: &mut Vec<Element>, text: &mut bool| {
        if std::mem::take(text)
            && let Some(current) = open.last_mut()
        {
            current.children.push(Child::Text(true));
        }
    };
    let close_one = |open: &mut Vec<Element>| {
        if open.len() > 1
            && let Some(done) = open.pop()
            && let Some(parent) = open.last_mut()
        {
            parent.children.push(Child::Element(done));
        }
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            let c = s[i..].chars().next().unwrap_or(' ');
            text |= !is_js_space(c);
            i += c.len_utf8();
            continue;
        }
        let next = b.get(i + 1).copied();
        if next == Some(b'/') {
            let close = s[i..].find('>').ok_or("a closing tag is not closed")? + i;
            sanitize(s[i + 2..close].trim_matches(is_js_space))?;
            save_text(&mut open, &mut text);
            close_one(&mut open);
            i = close + 1;
        } else if next == Some(b'?') {
            let (tag, close) =
                tag_text(s, i + 1, "?>").ok_or("a processing instruction is not closed")?;
            save_text(&mut open, &mut text);
            let (name, rest) = split_name(&tag);
            let attributes = if name != rest {
                attributes(rest)
            } else {
                Vec::new()
            };
            if let Some(current) = open.last_mut() {
                current.children.push(Child::Element(Element {
                    name: name.to_string(),
                    attributes,
                    children: Vec::new(),
                }));
            }
            i = close + 2;
        } else if next == Some(b'!') && s[i..].starts_with("<!--") {
            let end = s[i + 4..].find("-->").ok_or("a comment is not closed")? + i + 4;
            i = end + 3;
        } else if next == Some(b'!') && b.get(i + 2) == Some(&b'D') {
            if doctype {
                return Err("more than one DOCTYPE");
            }
            doctype = true;
            i = doctype_end(s, i)? + 1;
        } else if next == Some(b'!') && b.get(i + 2) == Some(&b'[') {
            let end = s[i..].find("]]>").ok_or("a CDATA section is not closed")? + i;
            save_text(&mut open, &mut text);
            let filled = end > i + 9;
            if let Some(current) = open.last_mut() {
                current.children.push(Child::Text(filled));
            }
            i = end + 3;
        } else {
            let (tag, close) = tag_text(s, i + 1, ">").ok_or("a tag is not closed")?;
            let (name, rest) = split_name(&tag);
            let mut name = sanitize(name)?;
            let mut rest = rest.to_string();
            if open.len() > 1 {
                save_text(&mut open, &mut text);
            }
            let self_closing = rest.ends_with('/');
            if self_closing {
                if name.ends_with('/') {
                    name.pop();
                    rest = name.clone();
                } else {
                    rest.pop();
                }
                name = sanitize(&name)?;
            }
            let attributes = if name != rest {
                attributes(&rest)
            } else {
                Vec::new()
            };
            let element = Element {
                name,
                attributes,
                children: Vec::new(),
            };
            if self_closing {
                if let Some(current) = open.last_mut() {
                    current.children.push(Child::Element(element));
                }
            } else {
                if open.len() - 1 > MAX_OPEN {
                    return Err("more than 100 elements are open");
                }
                open.push(element);
            }
            text = false;
            i = close + 1;
        }
    }
    // Elements left open are the children of the ones around them all the same.
    while open.len() > 1 {
        close_one(&mut open);
    }
    let document = open.pop().map(|d| d.children).unwrap_or_default();
    Ok(compress(document))
}
