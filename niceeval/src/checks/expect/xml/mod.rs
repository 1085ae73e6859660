//! promptfoo's `is-xml` and `contains-xml` as assertions as data know them: the whole text is
//! one well-formed XML document ([`document`]), or some span of it reads as XML
//! ([`candidates`], each read leniently); either way the `value`'s required elements, dotted
//! paths from the root such as `analysis.color` or `root.item.1.name`, must be in the object
//! promptfoo's XML reader makes of it ([`lenient`]). Written from promptfoo 0.123.1's rules and
//! tests, not its code.

mod candidates;
mod document;
mod lenient;

use serde_json::Value;

use crate::base::assertion::{Assertion, Grade, Subject};

/// Why a text is not the XML asked for (the reasons promptfoo gives).
#[derive(Debug, thiserror::Error)]
pub(crate) enum XmlMismatch {
    /// A DOCTYPE with an internal subset, which promptfoo refuses outright.
    #[error("DTD internal subsets are not supported by is-xml validation")]
    InternalSubset,
    #[error("XML parsing failed: Malformed DOCTYPE declaration")]
    MalformedDoctype,
    #[error("XML parsing failed: {0}")]
    Declaration(String),
    #[error("XML parsing failed: {0}")]
    Parse(#[source] roxmltree::Error),
    #[error("XML parsing failed: a prefix cannot be bound to an empty namespace")]
    EmptyNamespace,
    /// What promptfoo's lenient reader could not read.
    #[error("XML parsing failed: {0}")]
    Unreadable(lenient::ReadError),
    #[error("XML is missing required elements: {}", .0.join(", "))]
    Missing(Vec<String>),
    #[error("No XML content found in the output")]
    NoCandidate,
    #[error("No valid XML content found matching the requirements")]
    NoMatch,
}

/// Why an xml item's `value` cannot name required elements.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum RequiredElementsError {
    #[error("every required element must be a string, got {0}")]
    NotText(Value),
    #[error("an xml assertion's `value` is a string, a list, or {{requiredElements: [...]}}")]
    Shape,
}

/// The required elements a `value` names: a comma-separated string, a list, or an object with a
/// `requiredElements` list. `None` requires nothing (no value, an empty list or object, a
/// number or boolean, as promptfoo reads them).
pub(crate) fn required_elements(
    value: Option<&Value>,
) -> Result<Option<Vec<String>>, RequiredElementsError> {
    let item = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(RequiredElementsError::NotText(other.clone())),
    };
    match value {
        Some(Value::String(s)) => Ok(Some(s.split(',').map(|e| e.trim().to_string()).collect())),
        Some(Value::Array(items)) if !items.is_empty() => {
            items.iter().map(item).collect::<Result<_, _>>().map(Some)
        }
        Some(Value::Object(map)) if !map.is_empty() => match map.get("requiredElements") {
            Some(Value::Array(items)) => items.iter().map(item).collect::<Result<_, _>>().map(Some),
            _ => Err(RequiredElementsError::Shape),
        },
        _ => Ok(None),
    }
}

/// The required elements of `required` that `parsed` lacks.
fn missing<'a>(parsed: &lenient::Value, required: &'a [String]) -> Vec<&'a str> {
    required
        .iter()
        .filter(|path| !lenient::has_path(parsed, path))
        .map(String::as_str)
        .collect()
}

/// Why `text` is not XML with the required elements, or `Ok`: the `is-xml` rule.
pub(crate) fn xml_document(text: &str, required: &[String]) -> Result<(), XmlMismatch> {
    document::check(text)?;
    let parsed = lenient::read(text).map_err(XmlMismatch::Unreadable)?;
    match missing(&parsed, required).as_slice() {
        [] => Ok(()),
        absent => Err(XmlMismatch::Missing(
            absent.iter().map(|s| s.to_string()).collect(),
        )),
    }
}

/// Why no span of `text` is XML with the required elements, or `Ok`: the `contains-xml` rule.
/// A span inside one already read well (but lacking an element) is not read again.
pub(crate) fn xml_in_text(text: &str, required: &[String]) -> Result<(), XmlMismatch> {
    let found = candidates::candidates(text);
    if found.is_empty() {
        return Err(XmlMismatch::NoCandidate);
    }
    let mut read_well: Vec<(usize, usize)> = Vec::new();
    for c in found {
        if read_well
            .iter()
            .any(|&(start, end)| c.start >= start && c.end <= end)
        {
            continue;
        }
        if let Ok(parsed) = lenient::read(&text[c.start..c.end]) {
            if missing(&parsed, required).is_empty() {
                return Ok(());
            }
            read_well.push((c.start, c.end));
        }
    }
    Err(XmlMismatch::NoMatch)
}

/// The `is-xml` (`anywhere: false`) or `contains-xml` (`anywhere: true`) item.
#[derive(Debug, Clone)]
pub(crate) struct Xml {
    pub(crate) anywhere: bool,
    pub(crate) required: Vec<String>,
}

impl Assertion for Xml {
    fn describe(&self) -> String {
        let kind = if self.anywhere {
            "contains-xml"
        } else {
            "is-xml"
        };
        match self.required.as_slice() {
            [] => kind.to_string(),
            some => format!("{kind}({})", some.join(", ")),
        }
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let text = value.text().unwrap_or_default();
        let verdict = if self.anywhere {
            xml_in_text(&text, &self.required)
        } else {
            xml_document(&text, &self.required)
        };
        match verdict {
            Ok(()) => Grade::pass(format!("{} holds the XML asked for", value.preview())),
            Err(why) => Grade::fail(format!("{why}: {}", value.preview())),
        }
    }
}

#[cfg(test)]
mod tests;
