//! Whether a whole text is one well-formed XML document with namespaces, as promptfoo's
//! `is-xml` decides it (the saxes parser plus promptfoo's own DOCTYPE rules): roxmltree reads
//! the document; the XML declaration must carry a `version` of the form `1.x` (and a valid
//! `encoding` and `standalone` when given); a DOCTYPE must be a plain external one (an internal
//! subset `[…]` is refused outright, a malformed DOCTYPE is an error); a prefix may not be bound
//! to an empty namespace. With an external DOCTYPE in a document that is not `standalone="yes"`,
//! an entity the document does not declare is left as it is (it may live in the external DTD)
//! instead of being an error.

use super::XmlMismatch;

/// Why `text` is not a well-formed XML document.
pub(super) fn check(text: &str) -> Result<(), XmlMismatch> {
    let prolog = Prolog::read(text)?;
    if let Some(doctype) = &prolog.doctype {
        if has_internal_subset(doctype) {
            return Err(XmlMismatch::InternalSubset);
        }
        if !well_formed_doctype(doctype) {
            return Err(XmlMismatch::MalformedDoctype);
        }
    }
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let external = prolog.doctype.as_deref().is_some_and(has_external_subset);
    let parse = |text| roxmltree::Document::parse_with_options(text, options);
    let kept: String;
    let document = match parse(text) {
        Err(roxmltree::Error::UnknownEntityReference(..)) if external && !prolog.standalone => {
            kept = keep_unknown_entities(text);
            parse(&kept)
        }
        other => other,
    }
    .map_err(XmlMismatch::Parse)?;
    let unbinds = |n: roxmltree::Node| {
        n.namespaces()
            .any(|ns| ns.name().is_some() && ns.uri().is_empty())
    };
    if document.descendants().any(unbinds) {
        return Err(XmlMismatch::EmptyNamespace);
    }
    Ok(())
}

/// What the prolog says: the DOCTYPE's text (after `<!DOCTYPE`) and `standalone="yes"`.
struct Prolog {
    doctype: Option<String>,
    standalone: bool,
}

impl Prolog {
    fn read(text: &str) -> Result<Prolog, XmlMismatch> {
        let mut rest = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut standalone = false;
        if let Some(declaration) = rest.strip_prefix("<?xml")
            && declaration.starts_with(|c: char| c.is_ascii_whitespace() || c == '?')
        {
            let end = declaration.find("?>").ok_or(XmlMismatch::Declaration(
                "the XML declaration is not closed".into(),
            ))?;
            standalone = check_declaration(&declaration[..end])?;
            rest = &declaration[end + 2..];
        }
        // Comments, processing instructions and white space may come before the DOCTYPE.
        loop {
            rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
            if let Some(comment) = rest.strip_prefix("<!--") {
                match comment.find("-->") {
                    Some(end) => rest = &comment[end + 3..],
                    None => break,
                }
            } else if rest.starts_with("<?") {
                match rest.find("?>") {
                    Some(end) => rest = &rest[end + 2..],
                    None => break,
                }
            } else {
                break;
            }
        }
        let doctype = rest
            .strip_prefix("<!DOCTYPE")
            .map(|after| after[..doctype_length(after)].to_string());
        Ok(Prolog {
            doctype,
            standalone,
        })
    }
}

/// Checks the XML declaration's pseudo-attributes (the text between `<?xml` and `?>`); returns
/// whether it says `standalone="yes"`.
fn check_declaration(text: &str) -> Result<bool, XmlMismatch> {
    let malformed = || XmlMismatch::Declaration("malformed XML declaration".into());
    let mut pairs = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let eq = rest.find('=').ok_or_else(malformed)?;
        let name = rest[..eq].trim();
        let value = rest[eq + 1..].trim_start();
        let quote = value
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(malformed)?;
        let close = value[1..].find(quote).ok_or_else(malformed)?;
        pairs.push((name.to_string(), value[1..1 + close].to_string()));
        rest = value[close + 2..].trim_start();
    }
    let version = pairs
        .iter()
        .find(|(n, _)| n == "version")
        .ok_or(XmlMismatch::Declaration(
            "XML declaration must contain a version".into(),
        ))?;
    let digits = version.1.strip_prefix("1.").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(XmlMismatch::Declaration(format!(
            "version number must be 1.x, got {:?}",
            version.1
        )));
    }
    if let Some((_, encoding)) = pairs.iter().find(|(n, _)| n == "encoding") {
        let mut chars = encoding.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !ok {
            return Err(XmlMismatch::Declaration(format!(
                "encoding name {encoding:?} is not valid"
            )));
        }
    }
    match pairs.iter().find(|(n, _)| n == "standalone") {
        None => Ok(false),
        Some((_, v)) if v == "yes" => Ok(true),
        Some((_, v)) if v == "no" => Ok(false),
        Some((_, v)) => Err(XmlMismatch::Declaration(format!(
            "standalone must be yes or no, got {v:?}"
        ))),
    }
}

/// The length of a DOCTYPE's text: up to its `>`, outside quotes and the `[…]` subset.
fn doctype_length(after: &str) -> usize {
    let mut quote = None;
    let mut subset = false;
    for (i, c) in after.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => subset = true,
            (None, ']') => subset = false,
            (None, '>') if !subset => return i,
            _ => {}
        }
    }
    after.len()
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Whether the DOCTYPE has a `[` outside its quoted literals.
fn has_internal_subset(doctype: &str) -> bool {
    let mut quote = None;
    for c in doctype.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => return true,
            _ => {}
        }
    }
    false
}

/// The name that starts `text`, if an XML name does, and what follows it.
fn split_name(text: &str) -> Option<(&str, &str)> {
    let name_start = |c: char| c == ':' || c == '_' || c.is_alphabetic();
    let first = text.chars().next().filter(|c| name_start(*c))?;
    let len = first.len_utf8()
        + text[first.len_utf8()..]
            .chars()
            .take_while(|c| {
                name_start(*c) || c.is_alphanumeric() || matches!(c, '-' | '.' | '\u{b7}')
            })
            .map(char::len_utf8)
            .sum::<usize>();
    Some((&text[..len], &text[len..]))
}

/// A quoted literal at the start of `text`, and what follows it.
fn quoted(text: &str) -> Option<(&str, &str)> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let close = text[1..].find(quote)?;
    Some((&text[1..1 + close], &text[close + 2..]))
}

/// promptfoo's DOCTYPE rule: white space, a name, then nothing, `SYSTEM "id"` or
/// `PUBLIC "public id" "id"` (a system id without `#`, a public id of the allowed characters).
fn well_formed_doctype(doctype: &str) -> bool {
    let after_space = doctype.trim_start_matches(is_space);
    if after_space.len() == doctype.len() {
        return false;
    }
    let Some((_, rest)) = split_name(after_space) else {
        return false;
    };
    let id = rest.trim_start_matches(is_space);
    if id.is_empty() {
        return true;
    }
    if id.len() == rest.len() {
        return false;
    }
    let system = |text: &str| {
        let literal = text.trim_start_matches(is_space);
        literal.len() != text.len()
            && quoted(literal).is_some_and(|(value, after)| {
                !value.contains('#') && after.trim_start_matches(is_space).is_empty()
            })
    };
    if let Some(text) = id.strip_prefix("SYSTEM") {
        return system(text);
    }
    if let Some(text) = id.strip_prefix("PUBLIC") {
        let literal = text.trim_start_matches(is_space);
        if literal.len() == text.len() {
            return false;
        }
        let Some((public, after)) = quoted(literal) else {
            return false;
        };
        let allowed = |c: char| c.is_ascii_alphanumeric() || " \r\n'()+,./:=?;!*#@$_%-".contains(c);
        return public.chars().all(allowed) && system(after);
    }
    false
}

fn has_external_subset(doctype: &str) -> bool {
    split_name(doctype.trim_start_matches(is_space)).is_some_and(|(_, rest)| {
        let id = rest.trim_start_matches(is_space);
        id.starts_with("SYSTEM") || id.starts_with("PUBLIC")
    })
}

/// `text` with each reference to an entity XML does not predefine written as text
/// (`&name;` as `&amp;name;`), as saxes leaves references an external DTD may declare.
fn keep_unknown_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let name = split_name(after).filter(|(_, tail)| tail.starts_with(';'));
        match name {
            Some((n, _)) if !matches!(n, "lt" | "gt" | "amp" | "apos" | "quot") => {
                out.push_str("&amp;");
            }
            _ => out.push('&'),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}
