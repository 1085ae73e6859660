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
enum Entry {
    Dir(PathBuf),
    File(PathBuf),
    Link(PathBuf, PathBuf),
}

/// Lists `root` (without following links), checking the limits as it goes.
fn list(root: &Path, limits: Limits) -> Result<Vec<Entry>, WorkspaceError> {
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
    let meta = std::fs::metadata(from).map_err(|e| WorkspaceError::io(from, e))?;
    if !meta.is_dir() {
        return Err(WorkspaceError::NotADirectory(from.to_path_buf()));
    }
    let entries = list(from, limits)?;
    std::fs::create_dir_all(to).map_err(|e| WorkspaceError::io(to, e))?;
    let (mut files, mut bytes) = (0, 0);
    for entry in entries {
        match entry {
            Entry::Dir(rel) => {
                let dest = to.join(rel);
                std::fs::create_dir_all(&dest).map_err(|e| WorkspaceError::io(&dest, e))?;
            }
            Entry::File(rel) => {
                let dest = to.join(&rel);
                remove_link(&dest)?;
                // std::fs::copy keeps the permission bits and uses copy_file_range on Linux.
                bytes += std::fs::copy(from.join(&rel), &dest)
                    .map_err(|e| WorkspaceError::io(&dest, e))?;
                files += 1;
            }
            Entry::Link(rel, target) => {
                let dest = to.join(&rel);
                remove_link(&dest)?;
                if dest.exists() {
                    remove_any(&dest)?;
                }
                symlink(&target, &dest)?;
                files += 1;
            }
        }
    }
    Ok((files, bytes))
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
