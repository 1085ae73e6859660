//! [`Diff`]: what changed in a working copy between its baseline and a later snapshot, as a
//! value an eval can query and check.

use std::sync::Arc;

use crate::base::event::{Change, FileChange};

use super::git::{Git, Tree};

/// The changes of a working copy against its baseline, taken when [`super::Workspace::diff`]
/// was called: the changed paths, the unified diff, and the new contents of each file.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use niceeval::__workspace::workspace::Settings;
/// use niceeval::workspace::Workspace;
///
/// let template = tempfile::tempdir()?;
/// std::fs::write(template.path().join("notes.txt"), "one\n")?;
/// let ws = Workspace::create(template.path(), &Settings::default())?;
/// assert!(ws.diff().is_empty());
///
/// ws.write_text("notes.txt", "one\ntwo\n")?;
/// ws.write_text("new.txt", "hello\n")?;
/// let diff = ws.diff();
/// assert_eq!(diff.files(), ["new.txt", "notes.txt"]);
/// assert_eq!(diff.get("notes.txt").as_deref(), Some("one\ntwo\n"));
/// assert!(diff.text().contains("+two"));
/// assert!(diff.matches(&niceeval::Regex::new(r"\+hello")?));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Diff {
    changes: Vec<FileChange>,
    text: String,
    partial: bool,
    git: Option<Arc<Git>>,
    after: Option<Tree>,
}

impl std::fmt::Debug for Diff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diff")
            .field("changes", &self.changes)
            .field("partial", &self.partial)
            .finish_non_exhaustive()
    }
}

impl Diff {
    pub(crate) fn new(
        changes: Vec<FileChange>,
        text: String,
        partial: bool,
        git: Arc<Git>,
        after: Tree,
    ) -> Diff {
        Diff {
            changes,
            text,
            partial,
            git: Some(git),
            after: Some(after),
        }
    }

    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The changed paths (created, modified or deleted), relative to the working copy with `/`
    /// separators, in path order.
    pub fn files(&self) -> Vec<&str> {
        self.changes.iter().map(|c| c.path.as_str()).collect()
    }

    /// Every change with its kind ([`Change`]) and whether it is binary.
    pub fn changes(&self) -> &[FileChange] {
        &self.changes
    }

    /// How `path` changed, `None` when it did not.
    pub fn change(&self, path: &str) -> Option<Change> {
        self.changes
            .iter()
            .find(|c| c.path == path)
            .map(|c| c.change)
    }

    /// The contents of `path` after the change, when it was created or modified (`None` when it
    /// is unchanged or deleted). Binary contents are decoded lossily.
    pub fn get(&self, path: &str) -> Option<String> {
        match self.change(path)? {
            Change::Deleted => None,
            Change::Created | Change::Modified => {
                let (git, after) = (self.git.as_ref()?, self.after.as_ref()?);
                let bytes = git.read(after, path).ok()??;
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
        }
    }

    /// Whether `pattern` matches anywhere in the unified diff ([`Diff::text`]).
    pub fn matches(&self, pattern: &regex::Regex) -> bool {
        pattern.is_match(&self.text)
    }

    /// The unified diff (`git diff` format; binary files as "Binary files … differ").
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The change was larger than `[workspace] max_files` / `max_bytes`, and this diff holds only
    /// its first part.
    pub fn is_partial(&self) -> bool {
        self.partial
    }
}

/// Keeps the first `max_files` changes and `max_bytes` of diff text; says whether it cut.
pub(crate) fn bound(
    mut changes: Vec<FileChange>,
    mut text: String,
    max_files: u64,
    max_bytes: u64,
) -> (Vec<FileChange>, String, bool) {
    let mut partial = false;
    if changes.len() as u64 > max_files {
        changes.truncate(max_files as usize);
        partial = true;
    }
    if text.len() as u64 > max_bytes {
        let mut end = max_bytes as usize;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n…[diff cut at [workspace] max_bytes]\n");
        partial = true;
    }
    (changes, text, partial)
}
