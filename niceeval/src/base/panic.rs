//! The text of a caught panic, for the error it becomes: a panicking check, body, agent
//! factory or judge is reported with its message, never re-raised.

/// The message of a panic payload (`&str` or `String`), or a placeholder for other payloads.
pub(crate) fn message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}
