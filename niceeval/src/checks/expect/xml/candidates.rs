//! Where `contains-xml` looks for XML in a text (promptfoo's candidate scan): every
//! self-closing tag, and every opening tag with the matching closing tag that comes back to it,
//! is a candidate span; a closing tag that matches nothing forgets every tag left open.
//! Comments, CDATA sections, processing instructions and declarations are stepped over, so a
//! tag inside them is not one. Candidates are tried in promptfoo's order: first, for each
//! element that is not itself a candidate (or the text), the span from its first candidate
//! child to its last when it has several; then the outermost candidates, earlier first and
//! longer first.

use crate::checks::expect::js_text::is_space as is_js_space;

/// A span of the text that may be XML, and the start of the tag open around it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub(super) start: usize,
    pub(super) end: usize,
    parent: Option<usize>,
}

/// Whether `c` may start an XML name.
fn name_start(c: char) -> bool {
    matches!(c as u32,
        0x3A | 0x5F | 0x41..=0x5A | 0x61..=0x7A | 0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0x2FF
        | 0x370..=0x37D | 0x37F..=0x1FFF | 0x200C..=0x200D | 0x2070..=0x218F | 0x2C00..=0x2FEF
        | 0x3001..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFFD | 0x10000..=0xEFFFF)
}

/// Whether `c` may continue an XML name.
fn name_char(c: char) -> bool {
    name_start(c)
        || matches!(c as u32, 0x2D | 0x2E | 0x30..=0x39 | 0xB7 | 0x300..=0x36F | 0x203F..=0x2040)
}

/// The XML name that starts at `at`, if one does.
fn name_at(s: &str, at: usize) -> Option<&str> {
    let rest = s.get(at..)?;
    let first = rest.chars().next().filter(|c| name_start(*c))?;
    let len = first.len_utf8()
        + rest[first.len_utf8()..]
            .chars()
            .take_while(|c| name_char(*c))
            .map(char::len_utf8)
            .sum::<usize>();
    Some(&rest[..len])
}

/// The `>` ending the tag that starts at `at`, skipping quoted text; `None` when a `<` comes
/// first or nothing ends it.
fn tag_end(s: &str, at: usize) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s[at + 1..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '<') => return None,
            (None, '>') => return Some(at + 1 + i),
            _ => {}
        }
    }
    None
}

/// The last byte of `delimiter` after `from`, or the text's last byte when it never comes.
fn delimited_end(s: &str, from: usize, delimiter: &str) -> usize {
    s.get(from..)
        .and_then(|rest| rest.find(delimiter))
        .map_or(s.len() - 1, |at| from + at + delimiter.len() - 1)
}

/// The end of the `<!…>` declaration that starts at `at`: a comment, a CDATA section, or up to
/// a `>` outside quotes and brackets.
fn declaration_end(s: &str, at: usize) -> usize {
    if s[at..].starts_with("<!--") {
        return delimited_end(s, at + 4, "-->");
    }
    if s[at..].starts_with("<![CDATA[") {
        return delimited_end(s, at + 9, "]]>");
    }
    let mut quote = None;
    let mut depth = 0;
    for (i, c) in s[at + 2..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') if depth > 0 => depth -= 1,
            (None, '>') if depth == 0 => return at + 2 + i,
            _ => {}
        }
    }
    s.len() - 1
}

enum Tag<'a> {
    Declaration {
        end: usize,
    },
    Closing {
        end: usize,
        name: &'a str,
    },
    Opening {
        end: usize,
        name: &'a str,
        self_closing: bool,
    },
}

fn tag_at(s: &str, at: usize) -> Option<Tag<'_>> {
    match s.as_bytes().get(at + 1)? {
        b'!' => Some(Tag::Declaration {
            end: declaration_end(s, at),
        }),
        b'?' => Some(Tag::Declaration {
            end: delimited_end(s, at + 2, "?>"),
        }),
        b'/' => {
            let name = name_at(s, at + 2)?;
            let end = tag_end(s, at)?;
            Some(Tag::Closing { end, name })
        }
        _ => {
            let name = name_at(s, at + 1)?;
            let end = tag_end(s, at)?;
            let before = s[at..end].trim_end_matches(is_js_space);
            Some(Tag::Opening {
                end,
                name,
                self_closing: before.len() > 1 && before.ends_with('/'),
            })
        }
    }
}

/// The candidate spans of `s`, in the order promptfoo tries them.
pub(super) fn candidates(s: &str) -> Vec<Candidate> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut found = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s.as_bytes()[i] != b'<' {
            i += 1;
            continue;
        }
        let Some(tag) = tag_at(s, i) else {
            i += 1;
            continue;
        };
        let end = match tag {
            Tag::Declaration { end } => end,
            Tag::Opening {
                end,
                self_closing: true,
                ..
            } => {
                found.push(Candidate {
                    start: i,
                    end: end + 1,
                    parent: open.last().map(|o| o.1),
                });
                end
            }
            Tag::Opening { end, name, .. } => {
                open.push((name, i));
                end
            }
            Tag::Closing { end, name } => {
                if open.last().is_some_and(|o| o.0 == name) {
                    if let Some((_, start)) = open.pop() {
                        found.push(Candidate {
                            start,
                            end: end + 1,
                            parent: open.last().map(|o| o.1),
                        });
                    }
                } else {
                    open.clear();
                }
                end
            }
        };
        i = end + 1;
    }
    order(found)
}

/// promptfoo's order: sibling groups under a parent that is not a candidate, then the
/// outermost candidates (earlier first, longer first), each span once.
fn order(found: Vec<Candidate>) -> Vec<Candidate> {
    let starts: Vec<usize> = found.iter().map(|c| c.start).collect();
    let mut ordered: Vec<Candidate> = Vec::new();
    let mut add = |c: Candidate| {
        if !ordered.iter().any(|o| o.start == c.start && o.end == c.end) {
            ordered.push(c);
        }
    };
    let mut parents: Vec<Option<usize>> = Vec::new();
    for c in &found {
        if !parents.contains(&c.parent) {
            parents.push(c.parent);
        }
    }
    for parent in parents {
        if parent.is_some_and(|p| starts.contains(&p)) {
            continue;
        }
        let mut siblings: Vec<&Candidate> = found.iter().filter(|c| c.parent == parent).collect();
        if siblings.len() <= 1 {
            continue;
        }
        siblings.sort_by_key(|c| (c.start, c.end));
        if let (Some(first), Some(last)) = (siblings.first(), siblings.last()) {
            add(Candidate {
                start: first.start,
                end: last.end,
                parent,
            });
        }
    }
    let mut outermost: Vec<Candidate> = found
        .iter()
        .filter(|c| !c.parent.is_some_and(|p| starts.contains(&p)))
        .copied()
        .collect();
    outermost.sort_by_key(|c| (c.start, std::cmp::Reverse(c.end)));
    for c in outermost {
        add(c);
    }
    ordered
}
