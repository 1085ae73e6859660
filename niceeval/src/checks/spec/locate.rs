//! Where an item of an assertion list is written: the line and column of its start.
//!
//! Items are validated after parsing, from plain `serde_json::Value`s that carry no positions.
//! Rather than scanning the text (YAML has block and flow lists, anchors and several quoting
//! styles; a scan would misplace items that a parser places exactly), the text is read again,
//! only when an item is invalid, by the workspace's one position finder
//! (`niceeval_dataset::positions`, libyaml's events: the item's first key for a block mapping,
//! its `{` for a flow mapping or a JSON object; JSON is YAML).

use niceeval_dataset::positions::Positions;
use niceeval_dataset::positions::Step;

use super::Location;

/// The text an assertion list was read from.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    // Read only with the `yaml` feature; without it a YAML source is refused before parsing.
    #[cfg_attr(not(feature = "yaml"), allow(dead_code))]
    Yaml(&'a str),
    Json(&'a str),
}

/// The line and column of item `index` of the list, which is the document itself (`key` is
/// `None`) or the value of the document's `key` (`assert`, `assertions`).
pub(super) fn item(
    source: Source<'_>,
    key: Option<&str>,
    index: usize,
    origin: &str,
) -> Option<Location> {
    let path: Vec<Step<'_>> = key
        .map(Step::Key)
        .into_iter()
        .chain([Step::Index(index)])
        .collect();
    let (line, column) = match source {
        // The workspace's one YAML position finder (niceeval-dataset's `positions`).
        #[cfg(feature = "yaml")]
        Source::Yaml(text) => Positions::read(text)?.find(&path)?,
        // Without the `yaml` feature no YAML document is ever parsed, so none has items.
        #[cfg(not(feature = "yaml"))]
        Source::Yaml(_) => return None,
        // JSON is YAML: the same finder places its items.
        Source::Json(text) => Positions::read(text)?.find(&path)?,
    };
    Some(Location {
        origin: origin.to_string(),
        line,
        column,
    })
}

/// The line and column a YAML parser's error names, and its message without them.
#[cfg(feature = "yaml")]
pub(super) fn yaml_error(error: &yaml_serde::Error, origin: &str) -> (Option<Location>, String) {
    let message = error.to_string();
    match error.location() {
        Some(at) => {
            let (line, column) = (at.line(), at.column());
            // The location leads the message now: the parser's own mention goes.
            let message = message.replacen(&format!(" at line {line} column {column}"), "", 1);
            (
                Some(Location {
                    origin: origin.to_string(),
                    line,
                    column,
                }),
                message,
            )
        }
        None => (None, message),
    }
}

/// As [`yaml_error`], for JSON.
pub(super) fn json_error(error: &serde_json::Error, origin: &str) -> (Option<Location>, String) {
    let message = error.to_string();
    let (line, column) = (error.line(), error.column());
    if line == 0 {
        return (None, message);
    }
    let message = message.replacen(&format!(" at line {line} column {column}"), "", 1);
    (
        Some(Location {
            origin: origin.to_string(),
            line,
            column,
        }),
        message,
    )
}
