//! Where an item of an assertion list is written: the line and column of its start.
//!
//! Items are validated after parsing, from plain `serde_json::Value`s that carry no positions.
//! Rather than scanning the text (YAML has block and flow lists, anchors and several quoting
//! styles; a scan would misplace items that a parser places exactly), the text is read again,
//! only when an item is invalid. YAML goes to the workspace's one position finder
//! (`niceeval_dataset::positions`, libyaml's events: the item's first key for a block mapping,
//! its `{` for a flow mapping); JSON is read by serde_json down to the item, where the reader
//! fails on purpose and the error carries the position of the `{` it was reading.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

#[cfg(feature = "yaml")]
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

/// Marks the failure that means "here".
const FOUND: &str = "\u{0}niceeval: the item is here";

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
        Source::Json(text) => {
            let error = Find { path: &path }
                .deserialize(&mut serde_json::Deserializer::from_str(text))
                .err()?;
            if !error.to_string().contains(FOUND) {
                return None;
            }
            (error.line(), error.column())
        }
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
