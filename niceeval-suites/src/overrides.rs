//! What the command line sets over every promptfoo config the process reads, as `promptfoo
//! eval` sets it: `--var KEY=VALUE` goes into `defaultTest.vars` (a test's own vars win) and
//! `--grader PROVIDER` becomes `defaultTest.options.provider` (an item's own provider wins).
//! `niceeval eval` sets them once, before reading any file.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The command line's settings over promptfoo configs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Overrides {
    /// `--var KEY=VALUE`, in order (a later one wins).
    pub vars: Vec<(String, String)>,
    /// `--grader PROVIDER`.
    pub grader: Option<String>,
}

impl Overrides {
    /// The settings of `--var` pairs and `--grader`.
    pub fn new(vars: Vec<(String, String)>, grader: Option<String>) -> Self {
        Overrides { vars, grader }
    }
}

static OVERRIDES: OnceLock<Overrides> = OnceLock::new();

/// Sets the command line's settings for every promptfoo config read from now on; `false` when
/// they were already set (they are set once).
pub fn set_overrides(overrides: Overrides) -> bool {
    OVERRIDES.set(overrides).is_ok()
}

/// Applies the settings to a promptfoo config's top mapping (before it is read).
pub(crate) fn apply(config: &mut Value) {
    let Some(overrides) = OVERRIDES.get() else {
        return;
    };
    if overrides.vars.is_empty() && overrides.grader.is_none() {
        return;
    }
    let Value::Object(top) = config else {
        return;
    };
    let default = top
        .entry("defaultTest")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(default) = default else {
        // A `file://` defaultTest: the reader refuses it and says so.
        return;
    };
    if !overrides.vars.is_empty() {
        let vars = default
            .entry("vars")
            .or_insert_with(|| Value::Object(Map::new()));
        if !vars.is_object() {
            *vars = Value::Object(Map::new());
        }
        if let Value::Object(vars) = vars {
            for (key, value) in &overrides.vars {
                vars.insert(key.clone(), Value::String(value.clone()));
            }
        }
    }
    if let Some(grader) = &overrides.grader {
        let options = default
            .entry("options")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(options) = options {
            options.insert("provider".into(), Value::String(grader.clone()));
        }
    }
}
