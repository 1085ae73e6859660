//! Copying a template (or files added later) into a working copy, within limits: files and
//! directories are copied with their permissions, symbolic links are recreated as links and
//! never followed (a link pointing outside the template stays a link to that path, and nothing
//! is read through it), and a tree over the limits is refused before anything is copied.

use std::path::{Path, PathBuf};

use super::WorkspaceError;

/// How much a template may hold (`[workspace] max_files`, `max_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Files (and links) at most.
    pub max_files: u64,
    /// Bytes of file contents at most.
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 100_000,
            max_bytes: 256 * 1024 * 1024,
        }
    }
}

/// One entry to copy, relative to the source root.
pub(crate) enum Entry {
    Dir(PathBuf),
    File(PathBuf),
    Link(PathBuf, PathBuf),
}

/// Lists `root` (without following links), checking the limits as it goes.
pub(crate) fn list(root: &Path, limits: Limits) -> Result<Vec<Entry>, WorkspaceError> {
    let meta = std::fs::metadata(root).map_err(|e| WorkspaceError::io(root, e))?;
    if !meta.is_dir() {
        return Err(WorkspaceError::NotADirectory(root.to_path_buf()));
    }
    let mut entries = Vec::new();
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let read = std::fs::read_dir(&dir).map_err(|e| WorkspaceError::io(&dir, e))?;
        let mut children: Vec<_> = read
            .collect::<Result<_, _>>()
            .map_err(|e| WorkspaceError::io(&dir, e))?;
        children.sort_by_key(|e| e.file_name());
        for child in children {
            let rel = rel.join(child.file_name());
            let kind = child
                .file_type()
                .map_err(|e| WorkspaceError::io(&child.path(), e))?;
            if kind.is_symlink() {
                let target = std::fs::read_link(child.path())
                    .map_err(|e| WorkspaceError::io(&child.path(), e))?;
                files += 1;
                entries.push(Entry::Link(rel, target));
            } else if kind.is_dir() {
                entries.push(Entry::Dir(rel.clone()));
                stack.push(rel);
            } else if kind.is_file() {
                let len = child
                    .metadata()
                    .map_err(|e| WorkspaceError::io(&child.path(), e))?
                    .len();
                files += 1;
                bytes += len;
                entries.push(Entry::File(rel));
            }
            // Sockets, FIFOs and devices are not part of a project; they are left out.
            if files > limits.max_files || bytes > limits.max_bytes {
                return Err(WorkspaceError::TooLarge {
                    path: root.to_path_buf(),
                    files,
                    bytes,
                    limits,
                });
            }
        }
    }
    Ok(entries)
}

/// Copies the tree at `from` into `to` (created if missing; existing files are overwritten).
/// Returns how many files and bytes were copied.
pub(crate) fn copy_tree(
    from: &Path,
    to: &Path,
    limits: Limits,
) -> Result<(u64, u64), WorkspaceError> {
    let entries = list(from, limits)?;
    copy_entries(from, to, entries, false)
}

/// Copies listed entries of `from` into `to`, files on two threads (creating many small files
/// is the cost); `keep_times` gives each file its source's modification time.
pub(crate) fn copy_entries(
    from: &Path,
    to: &Path,
    entries: Vec<Entry>,
    keep_times: bool,
) -> Result<(u64, u64), WorkspaceError> {
    std::fs::create_dir_all(to).map_err(|e| WorkspaceError::io(to, e))?;
    let mut files = Vec::new();
    let mut links = 0;
    // Directories first (in listing order, parents before children), then files in parallel.
    for entry in entries {
        match entry {
            Entry::Dir(rel) => {
                let dest = to.join(rel);
                std::fs::create_dir_all(&dest).map_err(|e| WorkspaceError::io(&dest, e))?;
            }
            Entry::Link(rel, target) => {
                let dest = to.join(&rel);
                remove_link(&dest)?;
                if dest.exists() {
                    remove_any(&dest)?;
                }
                symlink(&target, &dest)?;
                links += 1;
            }
            Entry::File(rel) => files.push(rel),
        }
    }
    let half = files.len().div_ceil(2);
    let (first, second) = files.split_at(half);
    let copy_all = |part: &[PathBuf]| -> Result<u64, WorkspaceError> {
        let mut bytes = 0;
        for rel in part {
            bytes += copy_file(&from.join(rel), &to.join(rel), keep_times)?;
        }
        Ok(bytes)
    };
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(|| copy_all(second));
        let mine = copy_all(first);
        (mine, other.join())
    });
    let b = b.unwrap_or_else(|_| {
        Err(WorkspaceError::Task(
            "copying the template",
            "the thread panicked".into(),
        ))
    });
    Ok((files.len() as u64 + links, a? + b?))
}

/// Copies one file with its permission bits, and with its modification time when `keep_time`.
/// By hand rather than `std::fs::copy`, to set the time on the open file (one open and one stat
/// fewer per file, which is what copying many small files costs).
fn copy_file(source: &Path, dest: &Path, keep_time: bool) -> Result<u64, WorkspaceError> {
    remove_link(dest)?;
    let mut input = std::fs::File::open(source).map_err(|e| WorkspaceError::io(source, e))?;
    let meta = input
        .metadata()
        .map_err(|e| WorkspaceError::io(source, e))?;
    let mut output = std::fs::File::create(dest).map_err(|e| WorkspaceError::io(dest, e))?;
    // io::copy between two files uses copy_file_range on Linux.
    let bytes = std::io::copy(&mut input, &mut output).map_err(|e| WorkspaceError::io(dest, e))?;
    output
        .set_permissions(meta.permissions())
        .map_err(|e| WorkspaceError::io(dest, e))?;
    if keep_time && let Ok(modified) = meta.modified() {
        output
            .set_modified(modified)
            .map_err(|e| WorkspaceError::io(dest, e))?;
    }
    Ok(bytes)
}

/// Removes `path` when it is a symbolic link, so writing there cannot go through it.
fn remove_link(path: &Path) -> Result<(), WorkspaceError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(path).map_err(|e| WorkspaceError::io(path, e))?;
    }
    Ok(())
}

fn remove_any(path: &Path) -> Result<(), WorkspaceError> {
    let result = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    result.map_err(|e| WorkspaceError::io(path, e))
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<(), WorkspaceError> {
    std::os::unix::fs::symlink(target, link).map_err(|e| WorkspaceError::io(link, e))
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> Result<(), WorkspaceError> {
    // Without Unix links, a link to a file is copied as the file when it resolves inside.
    std::fs::copy(link.parent().unwrap_or(link).join(target), link)
        .map(|_| ())
        .map_err(|e| WorkspaceError::io(link, e))
}
