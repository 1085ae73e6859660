//! The JSON values written on their own lines in prose, as promptfoo's `tool-call-f1` finds
//! tool calls in a model's text: a block is a balanced `{…}` or `[…]` that starts a line (after
//! indentation) and ends one, and parses as JSON; a balanced block that does not parse is
//! searched for blocks one level inside it. Brackets inside JSON strings do not count, nor does
//! anything inside a Markdown code fence (` ``` ` or `~~~`, with the list nesting that decides
//! where a fence closes), so examples shown in fences or inline in prose are not calls.
//!
//! The work is bounded as promptfoo bounds it: more than [`MAX_UNMATCHED`] unmatched brackets,
//! or candidate blocks longer in total than four times the text, is a [`BlocksError`].

use serde_json::Value;

/// Most unmatched brackets a text may hold.
pub(crate) const MAX_UNMATCHED: usize = 65536;

/// Why the text could not be read within the bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BlocksError {
    /// Too many unmatched brackets.
    #[error("Tool Call F1 exceeded its delimiter limit ({MAX_UNMATCHED})")]
    Delimiters,
    /// Too much text in candidate blocks.
    #[error("Tool Call F1 could not finish parsing malformed output within its work limit")]
    WorkLimit,
}

/// One bracket outside strings and fences, or a break (`None`: a fence, or a line ending inside
/// a string) that no block may span.
#[derive(Debug, Clone, Copy)]
struct Delimiter {
    byte: u8,
    index: usize,
    starts_line: bool,
    ends_line: bool,
}

/// The width of leading text, a tab reaching the next multiple of four.
fn column_width(text: &str) -> usize {
    text.chars().fold(0, |column, c| {
        if c == '\t' {
            column + 4 - column % 4
        } else {
            column + 1
        }
    })
}

/// `[ \t]*` followed by a run of three or more backticks or tildes: the whole marker's length
/// and the run.
fn fence_marker(text: &str) -> Option<(usize, &str)> {
    let start = text.len() - text.trim_start_matches([' ', '\t']).len();
    let rest = &text[start..];
    let first = rest.bytes().next().filter(|b| *b == b'`' || *b == b'~')?;
    let run = rest.bytes().take_while(|b| *b == first).count();
    (run >= 3).then(|| (start + run, &rest[..run]))
}

/// `[ \t]*` followed by a list marker (`-`, `+`, `*`, or digits and `.` or `)`) and `[ \t]+`:
/// its length.
fn list_marker(text: &str) -> Option<usize> {
    let start = text.len() - text.trim_start_matches([' ', '\t']).len();
    let rest = &text.as_bytes()[start..];
    let marker = match rest.first()? {
        b'-' | b'+' | b'*' => 1,
        b'0'..=b'9' => {
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            match rest.get(digits)? {
                b'.' | b')' => digits + 1,
                _ => return None,
            }
        }
        _ => return None,
    };
    let spaces = rest[marker..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    (spaces > 0).then_some(start + marker + spaces)
}

/// Every bracket of `text` outside strings and fences, and the breaks between them, in order.
fn delimiters(text: &str) -> Vec<Option<Delimiter>> {
    let mut out = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut fence = String::new();
    let mut fence_container = 0;
    let mut containers: Vec<usize> = Vec::new();
    let mut line_start = 0;
    while line_start < text.len() {
        let offset = line_start;
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let content = text[line_start..line_end].trim_end();
        line_start = line_end + 1;
        let first_content = content.find(|c: char| !c.is_whitespace());
        let indent = column_width(&content[..first_content.unwrap_or(0)]);
        if !fence.is_empty() && !content.is_empty() && indent < fence_container {
            fence.clear();
            out.push(None);
        }
        if !fence.is_empty() {
            if let Some((length, run)) = fence_marker(content)
                && indent <= fence_container + 3
                && run.as_bytes()[0] == fence.as_bytes()[0]
                && run.len() >= fence.len()
                && content[length..].trim().is_empty()
            {
                fence.clear();
            }
            continue;
        }
        while !content.is_empty() && containers.last().is_some_and(|c| indent < *c) {
            containers.pop();
        }
        let list = list_marker(content);
        if let Some(length) = list {
            containers.push(column_width(&content[..length]));
        }
        let container = containers.last().copied().unwrap_or(0);
        let fence_text = &content[list.unwrap_or(0)..];
        if let Some((length, run)) = fence_marker(fence_text)
            && (list.is_some() || indent <= container + 3)
            && (!run.starts_with('`') || !fence_text[length..].contains('`'))
        {
            fence = run.to_string();
            fence_container = container;
            out.push(None);
            continue;
        }
        for (column, byte) in content.bytes().enumerate() {
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
                continue;
            }
            match byte {
                b'"' => in_string = true,
                b'{' | b'[' | b'}' | b']' => out.push(Some(Delimiter {
                    byte,
                    index: offset + column,
                    starts_line: Some(column) == first_content,
                    ends_line: column + 1 == content.len(),
                })),
                _ => {}
            }
        }
        if in_string {
            in_string = false;
            escaped = false;
            out.push(None);
        }
    }
    out
}

/// The balanced blocks of `text` that end a line, outermost first (one level in with
/// `skip_root`), each with whether it starts its line.
fn balanced_blocks(text: &str, skip_root: bool) -> Result<Vec<(&str, bool)>, BlocksError> {
    let tokens = delimiters(text);
    // Brackets without a partner: no block starts or ends at them, and a break or a closing
    // bracket without an opener separates what is before from what is after.
    let mut unmatched: Vec<usize> = Vec::new();
    let mut stack_start = 0;
    for token in &tokens {
        match token {
            None => stack_start = unmatched.len(),
            Some(t) if t.byte == b'{' || t.byte == b'[' => unmatched.push(t.index),
            Some(t) => {
                let opener = if t.byte == b'}' { b'{' } else { b'[' };
                if unmatched.len() > stack_start
                    && unmatched
                        .last()
                        .is_some_and(|i| text.as_bytes()[*i] == opener)
                {
                    unmatched.pop();
                } else {
                    unmatched.push(t.index);
                    stack_start = unmatched.len();
                }
            }
        }
        if unmatched.len() > MAX_UNMATCHED {
            return Err(BlocksError::Delimiters);
        }
    }
    let mut blocks = Vec::new();
    let mut next_unmatched = 0;
    let mut depth: i64 = 0;
    let mut start: Option<(usize, i64, bool)> = None;
    let root = if skip_root { 1 } else { 0 };
    for token in tokens.iter().flatten() {
        if unmatched.get(next_unmatched) == Some(&token.index) {
            next_unmatched += 1;
            continue;
        }
        if token.byte == b'{' || token.byte == b'[' {
            if start.is_none() && depth == root {
                start = Some((token.index, depth, token.starts_line));
            }
            depth += 1;
            continue;
        }
        depth -= 1;
        if let Some((at, start_depth, starts_line)) = start
            && depth == start_depth
        {
            if token.ends_line {
                blocks.push((&text[at..=token.index], starts_line));
            }
            start = None;
        }
    }
    Ok(blocks)
}

/// The JSON values of `text` written on lines of their own, in order.
pub(crate) fn json_blocks(text: &str) -> Result<Vec<Value>, BlocksError> {
    let mut found = Vec::new();
    let mut remaining = 4 * text.len();
    // Depth-first, as the blocks are written: a block that does not parse is searched before
    // the blocks after it.
    let mut pending: Vec<std::vec::IntoIter<(&str, bool)>> =
        vec![balanced_blocks(text, false)?.into_iter()];
    while let Some(top) = pending.last_mut() {
        let Some((block, starts_line)) = top.next() else {
            pending.pop();
            continue;
        };
        if block.len() > remaining {
            return Err(BlocksError::WorkLimit);
        }
        remaining -= block.len();
        match serde_json::from_str::<Value>(block) {
            Ok(value) => {
                if starts_line {
                    found.push(value);
                }
            }
            Err(_) => pending.push(balanced_blocks(block, true)?.into_iter()),
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_on_their_own_lines_are_found() {
        let text = "Thinking.\n{\"a\": 1}\n  [1, 2]\nnot {\"b\": 2}\n{\"c\": 3} trailing";
        assert_eq!(
            json_blocks(text).unwrap(),
            vec![json!({"a": 1}), json!([1, 2])]
        );
    }

    #[test]
    fn fenced_examples_are_skipped() {
        let text = "```json\n{\"a\": 1}\n```\n{\"b\": 2}";
        assert_eq!(json_blocks(text).unwrap(), vec![json!({"b": 2})]);
    }

    #[test]
    fn markers() {
        assert_eq!(fence_marker("  ```json"), Some((5, "```")));
        assert_eq!(fence_marker("``"), None);
        assert_eq!(list_marker("12. x"), Some(4));
        assert_eq!(list_marker("-x"), None);
        assert_eq!(column_width("\t "), 5);
    }
}
