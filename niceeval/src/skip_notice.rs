//! Skipped evals under plain `cargo test`. libtest has no runtime skip, so its summary counts a
//! skipped eval as passed; this module keeps the skips of the test process and, when the process
//! exits (after libtest's `test result:` line), prints which of those passes were skips.
//!
//! The suite runner (`niceeval::main!()`) reports skips as `ignored` itself and never comes here.

use std::sync::Mutex;

/// `(eval id, reason)` of every eval skipped in this process, in the order they finished.
static SKIPPED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Records a skip; the first one arranges for the summary at exit.
pub(crate) fn note(id: &str, reason: &str) {
    let mut skipped = SKIPPED.lock().unwrap_or_else(|p| p.into_inner());
    if skipped.is_empty() {
        print_at_exit();
    }
    skipped.push((id.to_string(), reason.to_string()));
}

/// The text printed at exit, or `None` when nothing was skipped.
///
/// ```text
/// niceeval: 2 of the tests counted as passed above were skipped evals (libtest has no runtime skip):
///   evals::needs_key: no API key in this environment
///   evals::slow: only on nightly runs
/// ```
pub(crate) fn summary(skipped: &[(String, String)]) -> Option<String> {
    let (first, rest) = skipped.split_first()?;
    let mut text = if rest.is_empty() {
        "niceeval: 1 of the tests counted as passed above was a skipped eval (libtest has no runtime skip):\n".to_string()
    } else {
        format!(
            "niceeval: {} of the tests counted as passed above were skipped evals (libtest has no runtime skip):\n",
            skipped.len()
        )
    };
    for (id, reason) in std::iter::once(first).chain(rest) {
        text.push_str(&format!("  {id}: {reason}\n"));
    }
    Some(text)
}

#[cfg(unix)]
fn print_at_exit() {
    extern "C" fn at_exit() {
        // Never block while the process is going away: a thread that died holding the lock
        // would otherwise hang the exit.
        let Ok(skipped) = SKIPPED.try_lock() else {
            return;
        };
        if let Some(text) = summary(&skipped) {
            write_stderr(text.as_bytes());
        }
    }
    // SAFETY: `at_exit` is a plain `extern "C" fn()` that lives for the whole program; `atexit`
    // only stores the pointer. A non-zero return (no room for more handlers) loses the summary,
    // not the per-eval announcement already printed.
    unsafe {
        libc::atexit(at_exit);
    }
}

/// Writes straight to file descriptor 2: at exit the standard library's handles may already be
/// torn down.
#[cfg(unix)]
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe the live slice `bytes`.
        let written = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if written <= 0 {
            return;
        }
        bytes = &bytes[written.unsigned_abs().min(bytes.len())..];
    }
}

/// Elsewhere only the per-eval announcement is printed.
#[cfg(not(unix))]
fn print_at_exit() {}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn nothing_skipped_prints_nothing() {
        assert_eq!(summary(&[]), None);
    }

    #[test]
    fn one_skip_is_named_with_its_reason() {
        let text = summary(&[("evals::a".into(), "no key".into())]);
        assert_eq!(
            text.as_deref(),
            Some("niceeval: 1 of the tests counted as passed above was a skipped eval (libtest has no runtime skip):\n  evals::a: no key\n")
        );
    }

    #[test]
    fn several_skips_are_counted_and_listed_in_order() {
        let text = summary(&[
            ("evals::b".into(), "later".into()),
            ("evals::a".into(), "no key".into()),
        ])
        .unwrap_or_default();
        assert!(
            text.starts_with("niceeval: 2 of the tests counted as passed above were skipped evals")
        );
        assert!(
            text.ends_with("  evals::b: later\n  evals::a: no key\n"),
            "{text}"
        );
    }
}
