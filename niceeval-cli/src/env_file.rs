//! `--env-file FILE` / `--env-path FILE` (promptfoo's): `.env` files loaded into the process's
//! environment before anything runs. `KEY=VALUE` lines (`export KEY=VALUE` too), `#`
//! comments, values in single quotes (literal) or double quotes (`\n` escapes); a variable
//! already set is kept, as dotenv keeps it; among the files, the first to set one wins.
//! Several files: the flag repeated, or comma-separated.

use std::path::{Path, PathBuf};

/// A `.env` file that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum EnvFileError {
    /// Missing or unreadable.
    #[error("--env-file {path}: cannot read it: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line that is not `KEY=VALUE`.
    #[error("--env-file {path}:{line}: not KEY=VALUE: {text:?}")]
    Line {
        /// The file.
        path: PathBuf,
        /// Its 1-based line.
        line: usize,
        /// The line.
        text: String,
    },
}

/// The files `values` name (each one or several, comma-separated).
pub fn files(values: &[String]) -> Vec<PathBuf> {
    values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The `KEY=VALUE` pairs of the `.env` text of `path`.
pub fn parse(path: &Path, text: &str) -> Result<Vec<(String, String)>, EnvFileError> {
    let mut pairs = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(EnvFileError::Line {
                path: path.to_path_buf(),
                line: n + 1,
                text: raw.to_string(),
            });
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(EnvFileError::Line {
                path: path.to_path_buf(),
                line: n + 1,
                text: raw.to_string(),
            });
        }
        let value = value.trim();
        let value = if let Some(inner) = value
            .strip_prefix('"')
            .and_then(|v| v.rsplit_once('"').map(|(inner, _)| inner))
        {
            inner.replace("\\n", "\n").replace("\\\"", "\"")
        } else if let Some(inner) = value
            .strip_prefix('\'')
            .and_then(|v| v.rsplit_once('\'').map(|(inner, _)| inner))
        {
            inner.to_string()
        } else {
            // An unquoted value ends at a ` #` comment.
            value
                .split_once(" #")
                .map_or(value, |(v, _)| v)
                .trim()
                .to_string()
        };
        pairs.push((key.to_string(), value));
    }
    Ok(pairs)
}

/// Loads the files `values` name into the environment. Call it before any thread starts.
pub fn load(values: &[String]) -> Result<(), EnvFileError> {
    let mut set = Vec::new();
    for path in files(values) {
        let text = std::fs::read_to_string(&path).map_err(|source| EnvFileError::Read {
            path: path.clone(),
            source,
        })?;
        set.extend(parse(&path, &text)?);
    }
    for (key, value) in set {
        if std::env::var_os(&key).is_none() {
            // SAFETY: the command calls this first, before its runtime and threads start.
            unsafe { std::env::set_var(&key, value) };
        }
    }
    Ok(())
}
