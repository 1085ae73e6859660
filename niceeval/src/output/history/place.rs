//! Where the history is kept: `NICEEVAL_HISTORY` (a path, or `off`), else `[history]` of the
//! crate's `niceeval.toml` (`enabled = false`, or `path` relative to that file), else
//! `<target>/niceeval/history.sqlite`, beside the results files — gone with `cargo clean`; name
//! a path outside the target directory to keep it.

use std::path::{Path, PathBuf};

use crate::config::Config;

/// Where runs are recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Nowhere: `NICEEVAL_HISTORY=off` or `[history] enabled = false`.
    Off,
    /// This file.
    At(PathBuf),
}

/// The history of the crate whose `niceeval.toml` is found from `dir` upward (its target
/// directory found as the results files' is). A `niceeval.toml` that does not parse counts as
/// absent here: the run reports it.
pub fn store_path(dir: &Path) -> Place {
    if let Some(value) = std::env::var_os("NICEEVAL_HISTORY").filter(|v| !v.is_empty()) {
        let text = value.to_string_lossy();
        return match text.trim().to_ascii_lowercase().as_str() {
            "off" | "0" | "false" | "no" => Place::Off,
            _ => Place::At(PathBuf::from(value)),
        };
    }
    let config = Config::discover(dir).ok();
    if let Some(config) = &config {
        if !config.history.enabled() {
            return Place::Off;
        }
        if let Some(path) = &config.history.path {
            let base = config
                .source
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(dir);
            return Place::At(base.join(path));
        }
    }
    Place::At(
        crate::output::results::target_dir(dir)
            .join("niceeval")
            .join("history.sqlite"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_path_is_relative_to_niceeval_toml_and_enabled_false_is_off() {
        // NICEEVAL_HISTORY is not set under the crate's tests.
        if std::env::var_os("NICEEVAL_HISTORY").is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("niceeval.toml"),
            "[history]\npath = \"../kept/history.sqlite\"\n",
        )
        .unwrap();
        let nested = dir.path().join("sub");
        std::fs::create_dir(&nested).unwrap();
        assert_eq!(
            store_path(&nested),
            Place::At(dir.path().join("../kept/history.sqlite"))
        );
        std::fs::write(
            dir.path().join("niceeval.toml"),
            "[history]\nenabled = false\n",
        )
        .unwrap();
        assert_eq!(store_path(dir.path()), Place::Off);
        std::fs::write(dir.path().join("niceeval.toml"), "").unwrap();
        let Place::At(default) = store_path(dir.path()) else {
            panic!("on by default")
        };
        assert!(default.ends_with("niceeval/history.sqlite"), "{default:?}");
    }
}
