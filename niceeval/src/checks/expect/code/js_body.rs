//! How a one-line JavaScript assertion becomes a function body, as promptfoo's
//! `buildFunctionBody` does: trailing semicolons are dropped; a line that starts with a
//! `const`/`let`/`var` declaration gets `return` before the expression after its last
//! top-level `;`; any other line is returned as an expression.

/// The function body promptfoo builds from a one-line assertion, or `None` when niceeval runs
/// the line as written instead: a line with several top-level statements that does not start
/// with a declaration (`a(); return b;`), where promptfoo would return the first statement.
pub(crate) fn one_line_body(code: &str) -> Option<String> {
    let trimmed = strip_trailing_semicolons(code.trim());
    if starts_with_declaration(trimmed) {
        if let Some(i) = last_statement_semicolon(trimmed) {
            let expression = trimmed[i + 1..].trim();
            if !expression.is_empty() {
                return Some(format!("{} return {expression}", &trimmed[..=i]));
            }
        }
        return Some(trimmed.to_string());
    }
    if last_statement_semicolon(trimmed).is_some() {
        return None;
    }
    Some(format!("return {trimmed}"))
}

/// Removes the semicolons (and whitespace) at the end, as `/;+\s*$/` does.
fn strip_trailing_semicolons(code: &str) -> &str {
    let without_space = code.trim_end();
    let stripped = without_space.trim_end_matches(';');
    if stripped.len() == without_space.len() {
        code
    } else {
        stripped
    }
}

fn starts_with_declaration(code: &str) -> bool {
    ["const", "let", "var"].iter().any(|kw| {
        code.strip_prefix(kw)
            .and_then(|rest| rest.chars().next())
            .is_some_and(char::is_whitespace)
    })
}

/// The byte index of the last `;` outside strings, template literals, comments, regular
/// expressions and brackets that is followed by another token.
pub(crate) fn last_statement_semicolon(code: &str) -> Option<usize> {
    let b = code.as_bytes();
    let mut depth = 0i32;
    let mut pending = None;
    let mut last = None;
    // The last significant byte, to tell a regular expression from a division.
    let mut previous: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = find(b, i + 2, b"*/").map_or(b.len(), |p| p + 2);
            continue;
        }
        if c == b';' && depth == 0 {
            pending = Some(i);
            previous = Some(c);
            i += 1;
            continue;
        }
        last = pending;
        i = match c {
            b'"' | b'\'' => skip_string(b, i),
            b'`' => skip_template(b, i),
            b'/' if previous.is_none_or(|p| b"(,=:[!&|?{};+-*%<>~^".contains(&p)) => {
                skip_regex(b, i)
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i + 1
            }
            b')' | b']' | b'}' => {
                depth -= 1;
                i + 1
            }
            _ => i + 1,
        };
        previous = Some(c);
    }
    last
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// The index after a quoted string starting at `start`.
fn skip_string(b: &[u8], start: usize) -> usize {
    let quote = b[start];
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index after a template literal starting at `start`, `${..}` parts included.
fn skip_template(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return i + 1,
            b'$' if b.get(i + 1) == Some(&b'{') => {
                let mut depth = 1;
                i += 2;
                while i < b.len() && depth > 0 {
                    i = match b[i] {
                        b'"' | b'\'' => skip_string(b, i),
                        b'`' => skip_template(b, i),
                        b'{' => {
                            depth += 1;
                            i + 1
                        }
                        b'}' => {
                            depth -= 1;
                            i + 1
                        }
                        _ => i + 1,
                    };
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// The index after a regular expression literal starting at `start`.
fn skip_regex(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    let mut class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => {
                class = true;
                i += 1
            }
            b']' => {
                class = false;
                i += 1
            }
            b'/' if !class => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_follow_promptfoo() {
        let table: &[(&str, Option<&str>)] = &[
            ("output === \"test\"", Some("return output === \"test\"")),
            ("  output.length > 5  ", Some("return output.length > 5")),
            ("output.length > 3;", Some("return output.length > 3")),
            ("output === \"test\";;", Some("return output === \"test\"")),
            (
                "const s = output; s === \"test\"",
                Some("const s = output; return s === \"test\""),
            ),
            (
                "const x = 5; const y = 10; x + y",
                Some("const x = 5; const y = 10; return x + y"),
            ),
            (
                "let x = JSON.parse(output); x.a === 1",
                Some("let x = JSON.parse(output); return x.a === 1"),
            ),
            (
                "var x = output.length; x > 5",
                Some("var x = output.length; return x > 5"),
            ),
            ("const x = 5; x > 0;;", Some("const x = 5; return x > 0")),
            ("const x = 5;", Some("const x = 5")),
            (
                "const s = \"a;b\"; s.length",
                Some("const s = \"a;b\"; return s.length"),
            ),
            (
                "const s = output; s === \"test;value\"",
                Some("const s = output; return s === \"test;value\""),
            ),
            (
                "const x = output; x.includes(\";\")",
                Some("const x = output; return x.includes(\";\")"),
            ),
            (
                "const s = output; s === 'a;b;c'",
                Some("const s = output; return s === 'a;b;c'"),
            ),
            (
                "const s = `a;${output};b`; s.length",
                Some("const s = `a;${output};b`; return s.length"),
            ),
            (
                "const s = output; s === \"test\\\"with;quotes\"",
                Some("const s = output; return s === \"test\\\"with;quotes\""),
            ),
            (
                "const s = \"a\\\\\"; s.length",
                Some("const s = \"a\\\\\"; return s.length"),
            ),
            (
                "const r = /a;b/; r.test(output)",
                Some("const r = /a;b/; return r.test(output)"),
            ),
            (
                "const f = () => { let a = 1; return a; }; f() === 1",
                Some("const f = () => { let a = 1; return a; }; return f() === 1"),
            ),
            ("constant === true", Some("return constant === true")),
            (
                "a.length > 1 ? 'x;y' : 1",
                Some("return a.length > 1 ? 'x;y' : 1"),
            ),
            // Several statements without a leading declaration run as written.
            ("console.log(1); return true;", None),
            ("if (output) return true; return 0.5;", None),
        ];
        for (code, expected) in table {
            assert_eq!(one_line_body(code).as_deref(), *expected, "{code}");
        }
    }
}
