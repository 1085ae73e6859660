//! How working copies are made: `[workspace]` in `niceeval.toml` as the workspace layer uses it.

use std::path::{Path, PathBuf};

use crate::config::WorkspaceConfig;

use super::{Isolation, Keep, Limits};

/// How working copies are made (`[workspace]` in `niceeval.toml`).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// How the agent's processes are isolated.
    pub isolation: Isolation,
    /// Whether isolated processes may use the network.
    pub network: bool,
    /// Patterns (gitignore syntax) the diff leaves out, besides the template's `.gitignore`.
    pub ignore: Vec<String>,
    /// What becomes of the copy after the run.
    pub keep: Keep,
    /// The most a template (and a diff) may hold.
    pub limits: Limits,
    /// Where relative paths given to [`Workspace::add_files`](super::Workspace::add_files) are resolved (the eval crate's
    /// manifest directory; the current directory when unset).
    pub base_dir: Option<PathBuf>,
}

impl Settings {
    /// The settings `[workspace]` describes; relative paths given to `add_files` resolve
    /// against `base_dir`.
    pub fn from_config(config: &WorkspaceConfig, base_dir: Option<&Path>) -> Settings {
        let mut settings = Settings {
            isolation: config.isolation.unwrap_or_default(),
            network: config.network,
            ignore: config.ignore.clone(),
            keep: config.keep.unwrap_or_default(),
            ..Default::default()
        };
        if let Some(files) = config.max_files {
            settings.limits.max_files = files;
        }
        if let Some(bytes) = config.max_bytes {
            settings.limits.max_bytes = bytes;
        }
        settings.base_dir = base_dir.map(Path::to_path_buf);
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_settings_are_what_workspace_says_with_default_limits_for_the_rest() {
        let ok = Config::parse(
            "[workspace]\nisolation = \"bubblewrap\"\nmax_bytes = \"1MiB\"\nignore = [\"*.log\"]\n",
            "n.toml",
        )
        .unwrap();
        let settings = Settings::from_config(&ok.workspace, None);
        assert_eq!(settings.isolation, Isolation::Bubblewrap);
        assert_eq!(settings.limits.max_bytes, 1024 * 1024);
        assert_eq!(settings.limits.max_files, 100_000);
        assert_eq!(settings.ignore, ["*.log"]);
    }
}
